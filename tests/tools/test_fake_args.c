/* Generated inputs (tools/fake_args.c, included here for its internal functions): the
 * float fills are uniform in [-0.1, 0.2] for every float type, rounded as the type's own
 * conversion rounds, the same whichever way the blocks are split over threads, and
 * different for different keys; pred and integers as cxla run documents them. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>

#include "../tools/fake_args.c"

/* The 16-bit types' rounding in the fill is the conversion's: every draw. */
static void test_small_float_rounding(void) {
    for (uint32_t w = 0; w < 65536; w++) {
        float f = uniform_f32_16(w);
        CHECK_MSG(bf16_of(f) == cxla_f32_to_bf16(f), "bf16 of %a: 0x%x vs 0x%x", (double)f,
                  bf16_of(f), cxla_f32_to_bf16(f));
        CHECK_MSG(f16_of(f) == cxla_f32_to_f16(f), "f16 of %a: 0x%x vs 0x%x", (double)f, f16_of(f),
                  cxla_f32_to_f16(f));
        CHECK(f >= -0.1f && f <= 0.2f);
    }
    /* And around f16's subnormal boundary, both signs, where the fill's f16 path changes. */
    int bad = 0;
    for (int k = -200; k <= 200; k++) {
        float f = 0x1p-14f;
        for (int j = 0; j <= abs(k); j++) f = nextafterf(f, k < 0 ? 0.0f : 1.0f);
        float g = (float)k * 0x1p-25f;
        bad += f16_of(f) != cxla_f32_to_f16(f) || f16_of(-f) != cxla_f32_to_f16(-f) ||
               f16_of(g) != cxla_f32_to_f16(g);
    }
    CHECK_EQ_I64(bad, 0);
}

static cxla_literal *make(cxla_type type, int64_t n, uint64_t seed) {
    cxla_shape shape = {.type = type, .rank = 1, .dims = &n};
    cxla_literal *lit = NULL;
    if (cxla_literal_create(&shape, &lit)) return NULL;
    uint64_t state = seed;
    fake_args_fill(lit, NULL, &state);
    return lit;
}

/* Every float type: within [-0.1, 0.2] (rounded to the type), mean near 0.05, both ends
 * reached, ten equal bins evenly filled. */
static void test_distribution(void) {
    const cxla_type types[] = {CXLA_F32, CXLA_F64,      CXLA_BF16,  CXLA_F16,
                               CXLA_C64, CXLA_F8E4M3FN, CXLA_F8E5M2};
    const int64_t n = 300001;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
        cxla_literal *lit = make(types[t], n, 7);
        if (!lit) {
            CHECK_MSG(false, "no literal");
            continue;
        }
        int64_t count = cxla_type_is_complex(types[t]) ? 2 * n : n;
        cxla_type comp = cxla_type_component(types[t]);
        size_t es = cxla_type_storage(comp);
        const char *data = cxla_literal_data(lit);
        double sum = 0, lo = 1, hi = -1;
        int64_t bins[10] = {0};
        bool fine = types[t] != CXLA_F8E4M3FN && types[t] != CXLA_F8E5M2;
        for (int64_t i = 0; i < count; i++) {
            double v = cxla_load_f64(comp, data + (size_t)i * es);
            sum += v;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            int b = (int)((v + 0.1) / 0.3 * 10);
            bins[b < 0 ? 0 : b > 9 ? 9 : b]++;
        }
        const char *name = cxla_type_name(types[t]);
        CHECK_MSG(lo >= -0.1 - 0.01 && hi <= 0.2 + 0.02, "%s: [%g, %g]", name, lo, hi);
        CHECK_MSG(lo < -0.09 && hi > 0.18, "%s: [%g, %g] does not span the range", name, lo, hi);
        CHECK_MSG(fabs(sum / (double)count - 0.05) < 0.002, "%s: mean %g", name,
                  sum / (double)count);
        for (int b = 0; fine && b < 10; b++)
            CHECK_MSG(fabs((double)bins[b] - (double)count / 10) < 0.03 * (double)count / 10,
                      "%s: bin %d has %lld of %lld", name, b, (long long)bins[b], (long long)count);
        cxla_literal_free(lit);
    }
}

/* The same values whichever blocks each thread fills; another key, other values. */
static void test_split_independent(void) {
    const cxla_type types[] = {CXLA_BF16, CXLA_F16, CXLA_F32, CXLA_F64, CXLA_F8E4M3FN};
    const int64_t n = 5 * FILL_BLOCK + 123;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
        cxla_type type = types[t];
        size_t bytes = (size_t)n * cxla_type_storage(type);
        char *whole = malloc(bytes), *parts = malloc(bytes), *other = malloc(bytes);
        uint8_t *table = cxla_type_storage(type) == 1 ? small_float_table(type) : NULL;
        if (!whole || !parts || !other) {
            CHECK_MSG(false, "out of memory");
        } else {
            fill_floats(type, whole, n, 99);
            /* Blocks in another order and grouping. */
            fill_blocks(type, parts, n, 99, 3, 6, table);
            fill_blocks(type, parts, n, 99, 0, 1, table);
            fill_blocks(type, parts, n, 99, 1, 3, table);
            CHECK_MSG(memcmp(whole, parts, bytes) == 0, "%s: split differs", cxla_type_name(type));
            fill_floats(type, other, n, 100);
            int64_t same = 0;
            size_t es = cxla_type_storage(type);
            for (int64_t i = 0; i < n; i++)
                same += memcmp(whole + (size_t)i * es, other + (size_t)i * es, es) == 0;
            CHECK_MSG(same < n / 20, "%s: keys 99 and 100 agree on %lld of %lld",
                      cxla_type_name(type), (long long)same, (long long)n);
        }
        free(whole);
        free(parts);
        free(other);
        free(table);
    }
    /* Large enough for several threads (where there are several CPUs): the same bytes as
     * one thread writes. */
    int64_t big = 9 << 20;
    uint16_t *a = malloc((size_t)big * 2), *b = malloc((size_t)big * 2);
    if (a && b) {
        fill_floats(CXLA_BF16, a, big, 5);
        fill_blocks(CXLA_BF16, b, big, 5, 0, (big + FILL_BLOCK - 1) / FILL_BLOCK, NULL);
        CHECK(memcmp(a, b, (size_t)big * 2) == 0);
    }
    free(a);
    free(b);
}

/* pred: both values, about half each; integers without a constraint in [0, 8). */
static void test_pred_and_ints(void) {
    cxla_literal *p = make(CXLA_PRED, 10000, 3), *s = make(CXLA_S32, 10000, 3);
    if (p && s) {
        const uint8_t *pd = cxla_literal_data(p);
        const int32_t *sd = cxla_literal_data(s);
        int64_t ones = 0, bad = 0;
        for (int i = 0; i < 10000; i++) {
            ones += pd[i];
            bad += pd[i] > 1 || sd[i] < 0 || sd[i] > 7;
        }
        CHECK_MSG(ones > 4700 && ones < 5300, "pred: %lld true of 10000", (long long)ones);
        CHECK_EQ_I64(bad, 0);
    }
    cxla_literal_free(p);
    cxla_literal_free(s);
}

/* A float parameter that reaches sqrt through arithmetic that keeps a sign (AdamW's
 * second moment: sqrt(b2 * v + g * g) / d) is drawn as |x|; one that reaches it only
 * through a subtract, or not at all, keeps XLA's [-0.1, 0.2]. */
static void test_non_negative(void) {
    const char *text = "HloModule m\n"
                       "ENTRY e {\n"
                       "  v = bf16[4096] parameter(0)\n"
                       "  g = bf16[4096] parameter(1)\n"
                       "  w = f32[4096] parameter(2)\n"
                       "  b2 = bf16[] constant(0.9)\n"
                       "  bb = bf16[4096] broadcast(b2), dimensions={}\n"
                       "  m = bf16[4096] multiply(bb, v)\n"
                       "  gg = bf16[4096] multiply(g, g)\n"
                       "  s = bf16[4096] add(m, gg)\n"
                       "  r = bf16[4096] sqrt(s)\n"
                       "  one = f32[] constant(1)\n"
                       "  ob = f32[4096] broadcast(one), dimensions={}\n"
                       "  d = f32[4096] subtract(w, ob)\n"
                       "  l = f32[4096] log(d)\n"
                       "  rc = f32[4096] convert(r)\n"
                       "  ROOT t = f32[4096] add(rc, l)\n"
                       "}\n";
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, (size_t)-1, "non_negative.hlo", &m));
    fake_constraint *c = m ? fake_args_constraints(m) : NULL;
    CHECK(c != NULL);
    if (c) {
        CHECK(c[0].non_negative);  /* v: multiply, add, sqrt */
        CHECK(c[1].non_negative);  /* g: g * g is non-negative as well as reaching sqrt */
        CHECK(!c[2].non_negative); /* w: only through subtract */
        uint64_t state = 7;
        cxla_literal *lv = NULL, *lw = NULL;
        CHECK_OK(fake_args_make(&m->entry->params[0]->shape, &c[0], &state, &lv));
        CHECK_OK(fake_args_make(&m->entry->params[2]->shape, &c[2], &state, &lw));
        if (lv && lw) {
            const uint16_t *v = cxla_literal_data(lv);
            const float *w = cxla_literal_data(lw);
            int64_t negative_v = 0, negative_w = 0;
            for (int i = 0; i < 4096; i++) {
                negative_v += (v[i] & 0x8000) != 0;
                negative_w += w[i] < 0;
            }
            CHECK_EQ_I64(negative_v, 0);
            CHECK_MSG(negative_w > 1000, "w: %lld negative of 4096", (long long)negative_w);
        }
        cxla_literal_free(lv);
        cxla_literal_free(lw);
    }
    free(c);
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_small_float_rounding), TEST(test_distribution), TEST(test_split_independent),
          TEST(test_pred_and_ints), TEST(test_non_negative))
