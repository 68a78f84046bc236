/* Random numbers in the interpreter (src/interp/interp_rng.c; the block functions
 * themselves are tested in tests/exec/test_exec_rng.c).
 *
 * Independent checks: the Random123 known-answer vectors of threefry2x32_20 and
 * philox4x32_10 through rng-bit-generator (TensorFlow's stateful_random_ops_test feeds
 * them through XLA's bit generators with the state laid out as rng-bit-generator reads
 * it), and an
 * rng-bit-generator output printed by a program that ran XLA (the R package anvil's
 * documentation, five significant digits). The rest checks the layout rules against a
 * direct transcription of XLA's construction, and rng's distributions statistically. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "exec/rng.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

/* ---- helpers ------------------------------------------------------------------------ */

static cxla_status run_text(const char *text, uint64_t seed, const cxla_literal *const *args,
                            int64_t n, cxla_literal **out) {
    cxla_module *m = NULL;
    CXLA_RETURN_IF_ERROR(cxla_hlo_parse(text, strlen(text), "t.hlo", &m));
    cxla_status s = cxla_verify_module(m);
    exec_run_options o = {.seed = seed};
    if (!s) s = interp_run_module(m, &o, args, n, out);
    cxla_module_destroy(m);
    return s;
}

static cxla_literal *run_ok(const char *text, uint64_t seed) {
    cxla_literal *r = NULL;
    CHECK_OK(run_text(text, seed, NULL, 0, &r));
    return r;
}

/* A module whose entry returns rng-bit-generator(constant state). */
static char *rbg_module(const char *alg, const char *state_type, const char *state,
                        const char *bits_shape) {
    static char buf[1024];
    snprintf(buf, sizeof(buf),
             "HloModule rbg\n"
             "ENTRY main {\n"
             "  s = %s constant(%s)\n"
             "  ROOT r = (%s, %s) rng-bit-generator(s), algorithm=%s\n"
             "}\n",
             state_type, state, state_type, bits_shape, alg);
    return buf;
}

static const uint64_t *state_of(const cxla_literal *r) {
    return cxla_literal_data_const(cxla_literal_tuple_element_const(r, 0));
}

static const void *bits_of(const cxla_literal *r) {
    return cxla_literal_data_const(cxla_literal_tuple_element_const(r, 1));
}

static uint64_t join(uint32_t lo, uint32_t hi) {
    return (uint64_t)lo | (uint64_t)hi << 32;
}

/* ---- rng-bit-generator --------------------------------------------------------------- */

/* TensorFlow's testThreefry2x32 / testPhilox4x32 layout: state {key, counter...}. */
static void test_rbg_known_answers(void) {
    cxla_literal *r = run_ok(rbg_module("rng_three_fry", "u64[2]",
                                        "{247824715720788526, 9629550131187509896}", "u32[2]"),
                             0);
    if (r) {
        /* key 0x03707344'13198a2e, counter 0x85a308d3'243f6a88 */
        const uint32_t *b = bits_of(r);
        CHECK_EQ_U64(b[0], 0xc4923a9c);
        CHECK_EQ_U64(b[1], 0x483df7a0);
        CHECK_EQ_U64(state_of(r)[0], 247824715720788526ull);
        CHECK_EQ_U64(state_of(r)[1], 9629550131187509897ull);
    }
    cxla_literal_free(r);
    r = run_ok(rbg_module("rng_three_fry", "u64[2]", "{18446744073709551615, 18446744073709551615}",
                          "u64[1]"),
               0);
    if (r) {
        CHECK_EQ_U64(((const uint64_t *)bits_of(r))[0], join(0x1cb996fc, 0xbb002be7));
        CHECK_EQ_U64(state_of(r)[1], 0); /* the counter wraps */
    }
    cxla_literal_free(r);

    /* philox, u64[3] {key, counter low, counter high} */
    const char *st = "{2999170649027065890, 9629550131187509896, 247824715720788526}";
    r = run_ok(rbg_module("rng_philox", "u64[3]", st, "u32[4]"), 0);
    if (r) {
        const uint32_t *b = bits_of(r);
        CHECK_EQ_U64(b[0], 0xd16cfe09);
        CHECK_EQ_U64(b[1], 0x94fdcceb);
        CHECK_EQ_U64(b[2], 0x5001e420);
        CHECK_EQ_U64(b[3], 0x24126ea1);
        CHECK_EQ_U64(state_of(r)[0], 2999170649027065890ull);
        CHECK_EQ_U64(state_of(r)[1], 9629550131187509897ull);
        CHECK_EQ_U64(state_of(r)[2], 247824715720788526ull);
    }
    cxla_literal_free(r);
    r = run_ok(rbg_module("rng_default", "u64[3]", st, "u64[2]"), 0);
    if (r) {
        const uint64_t *b = bits_of(r);
        CHECK_EQ_U64(b[0], join(0xd16cfe09, 0x94fdcceb));
        CHECK_EQ_U64(b[1], join(0x5001e420, 0x24126ea1));
        CHECK_EQ_U64(state_of(r)[1], 9629550131187509897ull);
    }
    cxla_literal_free(r);
    r = run_ok(rbg_module("rng_philox", "u64[3]",
                          "{18446744073709551615, 18446744073709551615, 18446744073709551615}",
                          "u32[4]"),
               0);
    if (r) {
        const uint32_t *b = bits_of(r);
        CHECK_EQ_U64(b[0], 0x408f276d);
        CHECK_EQ_U64(b[3], 0x6d5451fd);
        CHECK_EQ_U64(state_of(r)[1], 0); /* 128-bit counter: carry into the high word */
        CHECK_EQ_U64(state_of(r)[2], 0);
    }
    cxla_literal_free(r);
}

/* An rng-bit-generator output printed by R's anvil package (which runs XLA through PJRT):
 * state {0, 0}, three_fry, u32[3,2] -> new state {0, 3} and these values to 5 digits. */
static void test_rbg_xla_printed_example(void) {
    static const double printed[6] = {1.7973e9, 2.5791e9, 1.3515e9, 3.2358e9, 1.6886e9, 4.2293e9};
    cxla_literal *r = run_ok(rbg_module("rng_three_fry", "u64[2]", "{0, 0}", "u32[3,2]"), 0);
    if (!r) return;
    const uint32_t *b = bits_of(r);
    for (int i = 0; i < 6; i++)
        CHECK_MSG(fabs((double)b[i] - printed[i]) <= 0.5e-4 * printed[i], "element %d: %u vs %g", i,
                  b[i], printed[i]);
    CHECK_EQ_U64(state_of(r)[0], 0);
    CHECK_EQ_U64(state_of(r)[1], 3);
    cxla_literal_free(r);
}

/* XLA's ThreeFryRngBit32 written out as its ops do it: counters over the half shape
 * (split dim d -> [ceil(d/2), 1]), the two outputs concatenated on the new dim, reshaped
 * to 2*ceil(d/2) and sliced to d. */
static void expect_threefry32(uint64_t key, uint64_t ctr, int64_t rank, const int64_t *dims,
                              int64_t split, const uint32_t *got, int bits) {
    int64_t pre = 1, post = 1, d = rank ? dims[split] : 1;
    for (int64_t i = 0; i < split; i++) pre *= dims[i];
    for (int64_t i = split + 1; i < rank; i++) post *= dims[i];
    int64_t h = (d + 1) / 2;
    uint32_t k[2] = {(uint32_t)key, (uint32_t)(key >> 32)};
    for (int64_t i = 0; i < pre; i++)
        for (int64_t j = 0; j < d; j++)
            for (int64_t q = 0; q < post; q++) {
                uint64_t c = ctr + (uint64_t)((i * h + j / 2) * post + q);
                uint32_t x[2];
                exec_threefry2x32(k, (const uint32_t[2]){(uint32_t)c, (uint32_t)(c >> 32)}, x);
                uint32_t want = x[j % 2];
                if (bits < 32) want &= (1u << bits) - 1;
                uint32_t g = got[(i * d + j) * post + q];
                CHECK_MSG(g == want, "element (%" PRId64 ",%" PRId64 ",%" PRId64 "): %u vs %u", i,
                          j, q, g, want);
            }
}

static void test_rbg_threefry_shapes(void) {
    static const struct {
        const char *shape;
        int64_t rank, dims[3], split, pairs;
    } cases[] = {
        {"u32[]", 0, {0}, 0, 1},
        {"u32[3]", 1, {3}, 0, 2},
        {"u32[4]", 1, {4}, 0, 2},
        {"u32[3,2]", 2, {3, 2}, 1, 3},
        {"u32[5,3]", 2, {5, 3}, 0, 9},
        {"u32[3,5]", 2, {3, 5}, 1, 9},
        {"u32[3,5,5]", 3, {3, 5, 5}, 1, 45},
        {"u32[3,4,6]", 3, {3, 4, 6}, 1, 36},
        {"u32[0,3]", 2, {0, 3}, 0, 0},
        {"u32[3,0]", 2, {3, 0}, 1, 0},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        uint64_t key = 0x0123456789abcdefull, ctr = 0xfffffffffffffffeull;
        cxla_literal *r =
            run_ok(rbg_module("rng_three_fry", "u64[2]",
                              "{81985529216486895, 18446744073709551614}", cases[c].shape),
                   0);
        if (!r) continue;
        CHECK_EQ_U64(state_of(r)[1], ctr + (uint64_t)cases[c].pairs);
        expect_threefry32(key, ctr, cases[c].rank, cases[c].dims, cases[c].split, bits_of(r), 32);
        cxla_literal_free(r);
    }
    /* Narrow outputs keep the low bits of the 32-bit words, with the same layout. */
    const char *narrow[] = {"u16[3,5]", "u8[3,5]", "u4[3,5]", "u2[3,5]", "u1[3,5]"};
    const int widths[] = {16, 8, 4, 2, 1};
    for (int t = 0; t < 5; t++) {
        cxla_literal *r = run_ok(rbg_module("rng_three_fry", "u64[2]", "{7, 9}", narrow[t]), 0);
        if (!r) continue;
        const cxla_literal *bits = cxla_literal_tuple_element_const(r, 1);
        uint32_t got[15];
        for (int i = 0; i < 15; i++)
            got[i] =
                (uint32_t)cxla_load_u64(cxla_literal_type(bits),
                                        (const char *)cxla_literal_data_const(bits) +
                                            (size_t)i * cxla_type_storage(cxla_literal_type(bits)));
        expect_threefry32(7, 9, 2, (const int64_t[]){3, 5}, 1, got, widths[t]);
        CHECK_EQ_U64(state_of(r)[1], 9 + 9);
        cxla_literal_free(r);
    }
    /* 64-bit outputs: one counter per element, row-major, no split. */
    cxla_literal *r = run_ok(rbg_module("rng_three_fry", "u64[2]", "{7, 9}", "u64[3,2]"), 0);
    if (r) {
        const uint64_t *b = bits_of(r);
        for (uint32_t i = 0; i < 6; i++) {
            uint32_t x[2];
            exec_threefry2x32((const uint32_t[2]){7, 0}, (const uint32_t[2]){9 + i, 0}, x);
            CHECK_EQ_U64(b[i], join(x[0], x[1]));
        }
        CHECK_EQ_U64(state_of(r)[1], 15);
    }
    cxla_literal_free(r);
}

static void test_rbg_philox_layouts(void) {
    /* u32[7]: two blocks, words in order, the eighth dropped; u64[3]: two blocks. */
    uint32_t k[2] = {5, 0};
    uint32_t x0[4], x1[4];
    exec_philox4x32(k, (const uint32_t[4]){11, 0, 13, 0}, x0);
    exec_philox4x32(k, (const uint32_t[4]){12, 0, 13, 0}, x1);
    cxla_literal *r = run_ok(rbg_module("rng_philox", "u64[3]", "{5, 11, 13}", "u32[7]"), 0);
    if (r) {
        const uint32_t *b = bits_of(r);
        for (int i = 0; i < 7; i++) CHECK_EQ_U64(b[i], i < 4 ? x0[i] : x1[i - 4]);
        CHECK_EQ_U64(state_of(r)[1], 13);
        CHECK_EQ_U64(state_of(r)[2], 13);
    }
    cxla_literal_free(r);
    r = run_ok(rbg_module("rng_philox", "u64[3]", "{5, 11, 13}", "u64[3]"), 0);
    if (r) {
        const uint64_t *b = bits_of(r);
        CHECK_EQ_U64(b[0], join(x0[0], x0[1]));
        CHECK_EQ_U64(b[1], join(x0[2], x0[3]));
        CHECK_EQ_U64(b[2], join(x1[0], x1[1]));
        CHECK_EQ_U64(state_of(r)[1], 13);
    }
    cxla_literal_free(r);
    /* u16: low halves of the words. */
    r = run_ok(rbg_module("rng_philox", "u64[3]", "{5, 11, 13}", "u16[2,3]"), 0);
    if (r) {
        const uint16_t *b = bits_of(r);
        for (int i = 0; i < 6; i++) CHECK_EQ_U64(b[i], (i < 4 ? x0[i] : x1[i - 4]) & 0xffff);
    }
    cxla_literal_free(r);
    /* A two-word state {key, counter low}: the key is also the counter's high word, and
     * the new state keeps the key and the new low word. */
    r = run_ok(rbg_module("rng_default", "u64[2]", "{5, 11}", "u32[5]"), 0);
    if (r) {
        uint32_t y0[4], y1[4];
        exec_philox4x32(k, (const uint32_t[4]){11, 0, 5, 0}, y0);
        exec_philox4x32(k, (const uint32_t[4]){12, 0, 5, 0}, y1);
        const uint32_t *b = bits_of(r);
        for (int i = 0; i < 5; i++) CHECK_EQ_U64(b[i], i < 4 ? y0[i] : y1[0]);
        CHECK_EQ_U64(state_of(r)[0], 5);
        CHECK_EQ_U64(state_of(r)[1], 13);
    }
    cxla_literal_free(r);
    /* Zero elements: no block, the state stays. */
    r = run_ok(rbg_module("rng_philox", "u64[3]", "{5, 11, 13}", "u32[0,4]"), 0);
    if (r) CHECK_EQ_U64(state_of(r)[1], 11);
    cxla_literal_free(r);
}

static void test_rbg_deterministic(void) {
    const char *text = rbg_module("rng_philox", "u64[3]", "{1, 2, 3}", "u64[64]");
    char copy[1024];
    snprintf(copy, sizeof(copy), "%s", text);
    cxla_literal *a = run_ok(copy, 0), *b = run_ok(copy, 99);
    if (a && b) CHECK_OK(cxla_literal_compare(a, b, NULL)); /* the seed plays no part */
    cxla_literal_free(a);
    cxla_literal_free(b);
}

static void test_rbg_errors(void) {
    cxla_literal *r = NULL;
    const char *msg = CHECK_ERROR(
        run_text(rbg_module("rng_three_fry", "u64[3]", "{1, 2, 3}", "u32[4]"), 0, NULL, 0, &r));
    CHECK(strstr(msg, "rng_three_fry needs a u64[2]") != NULL);
    CHECK(strstr(msg, "r (rng-bit-generator") != NULL);
    msg =
        CHECK_ERROR(run_text(rbg_module("rng_philox", "u64[1]", "{1}", "u32[4]"), 0, NULL, 0, &r));
    CHECK(strstr(msg, "got u64[1]") != NULL);
    msg = CHECK_ERROR(
        run_text(rbg_module("rng_default", "u64[4]", "{1, 2, 3, 4}", "u32[4]"), 0, NULL, 0, &r));
    CHECK(strstr(msg, "rng_default needs") != NULL);
    /* Signed or float bits are rejected when the module is checked (XLA's builder turns
     * them into the unsigned type of the same width). */
    CHECK_ERROR(
        run_text(rbg_module("rng_philox", "u64[3]", "{1, 2, 3}", "s32[4]"), 0, NULL, 0, &r));
    CHECK_ERROR(
        run_text(rbg_module("rng_philox", "s64[3]", "{1, 2, 3}", "u32[4]"), 0, NULL, 0, &r));
}

/* ---- rng-get-and-update-state ------------------------------------------------------ */

static void test_get_and_update_state(void) {
    const char *text = "HloModule s\n"
                       "ENTRY main {\n"
                       "  a = u64[2] rng-get-and-update-state(), delta=5\n"
                       "  b = u64[2] rng-get-and-update-state(), delta=7\n"
                       "  c = u64[2] rng-get-and-update-state(), delta=0\n"
                       "  ROOT t = (u64[2], u64[2], u64[2]) tuple(a, b, c)\n"
                       "}\n";
    cxla_literal *r = run_ok(text, 1234);
    if (r) {
        for (int i = 0; i < 3; i++) {
            const uint64_t *v = cxla_literal_data_const(cxla_literal_tuple_element_const(r, i));
            CHECK_EQ_U64(v[0], EXEC_RNG_INITIAL_STATE + (i >= 1 ? 5 : 0) + (i >= 2 ? 7 : 0));
            CHECK_EQ_U64(v[1], 0);
        }
    }
    cxla_literal_free(r);

    /* The 128-bit add carries into the high word. */
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "t.hlo", &m));
    if (!m) return;
    interp_ctx ctx;
    CHECK_OK(interp_ctx_init(&ctx, m, NULL));
    ctx.rng_state[0] = ~0ull - 2;
    ctx.rng_state[1] = 41;
    const cxla_instr *a = m->entry->instrs[0];
    interp_op_fn fn = interp_handler(a->opcode);
    cxla_literal *v = NULL;
    CHECK_OK(fn(&ctx, a, NULL, &v));
    if (v) CHECK_EQ_U64(((const uint64_t *)cxla_literal_data_const(v))[0], ~0ull - 2);
    CHECK_EQ_U64(ctx.rng_state[0], 2);
    CHECK_EQ_U64(ctx.rng_state[1], 42);
    cxla_literal_free(v);
    interp_ctx_deinit(&ctx);
    cxla_module_destroy(m);
}

/* ---- rng ---------------------------------------------------------------------------- */

static char *rng_module(const char *type, const char *dims, const char *dist, const char *a,
                        const char *b) {
    static char buf[1024];
    snprintf(buf, sizeof(buf),
             "HloModule r\n"
             "ENTRY main {\n"
             "  a = %s[] constant(%s)\n"
             "  b = %s[] constant(%s)\n"
             "  ROOT r = %s[%s] rng(a, b), distribution=%s\n"
             "}\n",
             type, a, type, b, type, dims, dist);
    return buf;
}

static double element(const cxla_literal *r, int64_t i) {
    cxla_type t = cxla_literal_type(r);
    return cxla_load_f64(t, (const char *)cxla_literal_data_const(r) +
                                (size_t)i * cxla_type_storage(t));
}

/* XLA's key and state for rng: with seed S != 0 the k-th rng of the module has key
 * mt19937_64(42)[k] ^ S, and the philox counter is the state before the rng (starting at
 * 0x7012395). uniform(0, 0) on u32 gives the raw words (bits % 0 = bits). */
static void test_rng_key_and_state(void) {
    const char *text = "HloModule r\n"
                       "ENTRY main {\n"
                       "  z = u32[] constant(0)\n"
                       "  x = u32[5] rng(z, z), distribution=rng_uniform\n"
                       "  y = u32[3] rng(z, z), distribution=rng_uniform\n"
                       "  s = u64[2] rng-get-and-update-state(), delta=1\n"
                       "  ROOT t = (u32[5], u32[3], u64[2]) tuple(x, y, s)\n"
                       "}\n";
    const uint64_t seeds[] = {1234, 0};
    for (int si = 0; si < 2; si++) {
        uint64_t seed = seeds[si], mt[2];
        exec_mt19937_64(42, mt, 2);
        uint64_t keys[2] = {seed ? mt[0] ^ seed : 0, seed ? mt[1] ^ seed : 0};
        cxla_literal *r = run_ok(text, seed);
        if (!r) continue;
        const uint32_t *x = cxla_literal_data_const(cxla_literal_tuple_element_const(r, 0));
        const uint32_t *y = cxla_literal_data_const(cxla_literal_tuple_element_const(r, 1));
        const uint64_t *s = cxla_literal_data_const(cxla_literal_tuple_element_const(r, 2));
        uint32_t w[8];
        uint32_t k0[2] = {(uint32_t)keys[0], (uint32_t)(keys[0] >> 32)};
        exec_philox4x32(k0, (const uint32_t[4]){0x7012395, 0, 0, 0}, w);
        exec_philox4x32(k0, (const uint32_t[4]){0x7012396, 0, 0, 0}, w + 4);
        for (int i = 0; i < 5; i++) CHECK_EQ_U64(x[i], w[i]);
        uint32_t k1[2] = {(uint32_t)keys[1], (uint32_t)(keys[1] >> 32)};
        exec_philox4x32(k1, (const uint32_t[4]){0x7012395 + 5, 0, 0, 0}, w);
        for (int i = 0; i < 3; i++) CHECK_EQ_U64(y[i], w[i]);
        CHECK_EQ_U64(s[0], 0x7012395 + 8);
        cxla_literal_free(r);
    }
}

static void test_rng_deterministic_and_seeded(void) {
    char text[1024];
    snprintf(text, sizeof(text), "%s", rng_module("f32", "100", "rng_uniform", "0", "1"));
    cxla_literal *a = run_ok(text, 7), *b = run_ok(text, 7), *c = run_ok(text, 8);
    if (a && b) CHECK_OK(cxla_literal_compare(a, b, NULL));
    if (a && c) {
        int same = 0;
        for (int i = 0; i < 100; i++) same += element(a, i) == element(c, i);
        CHECK(same < 5);
    }
    cxla_literal_free(a);
    cxla_literal_free(b);
    cxla_literal_free(c);
}

typedef struct stats {
    double min, max, mean, var;
} stats;

static stats stats_of(const cxla_literal *r) {
    int64_t n = cxla_literal_element_count(r);
    stats s = {INFINITY, -INFINITY, 0, 0};
    for (int64_t i = 0; i < n; i++) {
        double v = element(r, i);
        s.min = fmin(s.min, v);
        s.max = fmax(s.max, v);
        s.mean += v;
    }
    s.mean /= (double)n;
    for (int64_t i = 0; i < n; i++) s.var += (element(r, i) - s.mean) * (element(r, i) - s.mean);
    s.var /= (double)n;
    return s;
}

static void test_rng_uniform_float(void) {
    /* f8 values are coarse near 6 (spacing 0.5 and 1), which moves the variance. */
    static const struct {
        const char *type;
        double top, var_tol;
    } cases[] = {{"f32", 5.9, 0.1},  {"f64", 5.9, 0.1},      {"f16", 5.9, 0.1},
                 {"bf16", 5.9, 0.1}, {"f8e4m3fn", 5.5, 0.5}, {"f8e5m2", 5, 0.8}};
    for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
        const char *type = cases[t].type;
        cxla_literal *r = run_ok(rng_module(type, "200,100", "rng_uniform", "-2", "6"), 5);
        if (!r) continue;
        stats s = stats_of(r);
        CHECK_MSG(s.min >= -2 && s.max < 6, "%s: range [%g, %g]", type, s.min, s.max);
        CHECK_MSG(s.min < -1.9 && s.max >= cases[t].top, "%s: range [%g, %g]", type, s.min, s.max);
        CHECK_MSG(fabs(s.mean - 2) < 0.05, "%s: mean %g", type, s.mean);
        CHECK_MSG(fabs(s.var - 64.0 / 12) < cases[t].var_tol, "%s: variance %g", type, s.var);
        cxla_literal_free(r);
    }
}

/* Values that XLA's formula rounds to b come back as the largest value below b. */
static void test_rng_uniform_never_b(void) {
    static const struct {
        const char *type, *a, *b;
        double below;
    } cases[] = {
        {"f16", "0", "1", 1 - 0x1p-11},         /* 2^-12 of the f32 values round to 1 */
        {"bf16", "0", "1", 1 - 0x1p-8},         /* 2^-9 */
        {"f16", "1000", "1001", 1000.5},        /* f16 spacing 0.5 there */
        {"f8e4m3fn", "0", "1", 0.9375},         /* f8e4m3fn spacing 1/16 below 1 */
        {"f32", "100000000", "100000008", 1e8}, /* f32 spacing 8: only a is below b */
        {"f64", "9007199254740992", "9007199254740994", 9007199254740992.0},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        cxla_literal *r =
            run_ok(rng_module(cases[c].type, "100000", "rng_uniform", cases[c].a, cases[c].b), 3);
        if (!r) continue;
        stats s = stats_of(r);
        CHECK_MSG(s.max == cases[c].below, "%s [%s, %s): max %.17g", cases[c].type, cases[c].a,
                  cases[c].b, s.max);
        CHECK_MSG(s.min >= atof(cases[c].a), "%s: min %g", cases[c].type, s.min);
        cxla_literal_free(r);
    }
    /* b - a overflows f32 and f64: still finite values inside [a, b). */
    const char *wide[][3] = {{"f32", "-3.4e38", "3.4e38"}, {"f64", "-1.7e308", "1.7e308"}};
    for (int i = 0; i < 2; i++) {
        cxla_literal *r =
            run_ok(rng_module(wide[i][0], "10000", "rng_uniform", wide[i][1], wide[i][2]), 3);
        if (!r) continue;
        double bound = atof(wide[i][2]), lo = INFINITY, hi = -INFINITY, mean = 0;
        for (int64_t k = 0; k < 10000; k++) {
            double v = element(r, k);
            lo = fmin(lo, v), hi = fmax(hi, v);
            mean += v / bound / 10000;
        }
        CHECK_MSG(fabs(mean) < 0.05, "%s: mean %g", wide[i][0], mean);
        CHECK(lo >= -bound && hi < bound);
        CHECK(lo < -0.9 * bound && hi > 0.9 * bound);
        cxla_literal_free(r);
    }
    /* a == b: always a. */
    cxla_literal *r = run_ok(rng_module("f32", "100", "rng_uniform", "2.5", "2.5"), 3);
    if (r) {
        stats s = stats_of(r);
        CHECK(s.min == 2.5 && s.max == 2.5);
    }
    cxla_literal_free(r);
}

static void test_rng_uniform_int(void) {
    static const struct {
        const char *type, *a, *b;
    } cases[] = {
        {"s32", "-5", "5"}, {"u32", "10", "20"}, {"s64", "-5", "5"}, {"u64", "10", "20"},
        {"s8", "-5", "5"},  {"u8", "10", "20"},  {"s16", "-5", "5"}, {"u16", "10", "20"},
        {"s4", "-5", "5"},  {"u4", "3", "13"},   {"s2", "-2", "1"},  {"u2", "0", "3"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        cxla_literal *r =
            run_ok(rng_module(cases[c].type, "30000", "rng_uniform", cases[c].a, cases[c].b), 11);
        if (!r) continue;
        int64_t a = atoll(cases[c].a), b = atoll(cases[c].b), n = b - a;
        int64_t count[16] = {0};
        for (int64_t i = 0; i < 30000; i++) {
            double v = element(r, i);
            CHECK_MSG(v >= (double)a && v < (double)b, "%s: %g outside [%" PRId64 ", %" PRId64 ")",
                      cases[c].type, v, a, b);
            if (v >= (double)a && v < (double)b) count[(int64_t)v - a]++;
        }
        for (int64_t k = 0; k < n; k++) /* expected 30000 / n, at least 3000 */
            CHECK_MSG(fabs((double)count[k] - 30000.0 / (double)n) < 0.1 * 30000.0 / (double)n,
                      "%s: value %" PRId64 " drawn %" PRId64 " times", cases[c].type, a + k,
                      count[k]);
        cxla_literal_free(r);
    }
    /* Full-width ranges: the top bit is set about half the time. */
    cxla_literal *r = run_ok(
        rng_module("s64", "10000", "rng_uniform", "-9223372036854775808", "9223372036854775807"),
        11);
    if (r) {
        const int64_t *v = cxla_literal_data_const(r);
        int neg = 0;
        for (int i = 0; i < 10000; i++) neg += v[i] < 0;
        CHECK(neg > 4700 && neg < 5300);
    }
    cxla_literal_free(r);
    /* pred: [false, true) holds only false. */
    r = run_ok(rng_module("pred", "100", "rng_uniform", "false", "true"), 11);
    if (r) CHECK(stats_of(r).max == 0);
    cxla_literal_free(r);
}

static void test_rng_normal(void) {
    const char *types[] = {"f32", "f64", "f16", "bf16"};
    const char *shapes[] = {"200,100", "101,99", "3,5,7,191"};
    for (int t = 0; t < 4; t++)
        for (int sh = 0; sh < 3; sh++) {
            cxla_literal *r = run_ok(rng_module(types[t], shapes[sh], "rng_normal", "3", "2"), 9);
            if (!r) continue;
            stats s = stats_of(r);
            CHECK_MSG(isfinite(s.min) && isfinite(s.max), "%s: not finite", types[t]);
            CHECK_MSG(fabs(s.mean - 3) < 0.05, "%s[%s]: mean %g", types[t], shapes[sh], s.mean);
            CHECK_MSG(fabs(sqrt(s.var) - 2) < 0.05, "%s[%s]: sd %g", types[t], shapes[sh],
                      sqrt(s.var));
            /* tails: about 4.55% beyond two standard deviations */
            int64_t n = cxla_literal_element_count(r), out = 0;
            for (int64_t i = 0; i < n; i++) out += fabs(element(r, i) - 3) > 4;
            CHECK_MSG(fabs((double)out / (double)n - 0.0455) < 0.01, "%s: %g beyond 2 sd", types[t],
                      (double)out / (double)n);
            cxla_literal_free(r);
        }
    /* sigma 0: exactly mu; a scalar works too. */
    cxla_literal *r = run_ok(rng_module("f32", "7,3", "rng_normal", "1.25", "0"), 9);
    if (r) {
        stats s = stats_of(r);
        CHECK(s.min == 1.25 && s.max == 1.25);
    }
    cxla_literal_free(r);
    r = run_ok(rng_module("f64", "", "rng_normal", "0", "1"), 9);
    if (r) CHECK(isfinite(element(r, 0)));
    cxla_literal_free(r);
}

/* A zero-size rng gives an empty array and leaves the state alone. */
static void test_rng_zero_size(void) {
    const char *text = "HloModule r\n"
                       "ENTRY main {\n"
                       "  a = f32[] constant(0)\n"
                       "  b = f32[] constant(1)\n"
                       "  x = f32[0,3] rng(a, b), distribution=rng_normal\n"
                       "  s = u64[2] rng-get-and-update-state(), delta=0\n"
                       "  ROOT t = (f32[0,3], u64[2]) tuple(x, s)\n"
                       "}\n";
    cxla_literal *r = run_ok(text, 1);
    if (r) {
        CHECK_EQ_I64(cxla_literal_element_count(cxla_literal_tuple_element_const(r, 0)), 0);
        const uint64_t *s = cxla_literal_data_const(cxla_literal_tuple_element_const(r, 1));
        CHECK_EQ_U64(s[0], EXEC_RNG_INITIAL_STATE);
    }
    cxla_literal_free(r);
}

static void test_rng_errors(void) {
    cxla_literal *r = NULL;
    /* rng_normal on integers and unknown distributions are rejected by the verifier. */
    CHECK_ERROR(run_text(rng_module("s32", "4", "rng_normal", "0", "1"), 1, NULL, 0, &r));
    CHECK_ERROR(run_text(rng_module("c64", "4", "rng_uniform", "(0,0)", "(1,1)"), 1, NULL, 0, &r));
    /* The handler itself checks its operands when called directly. */
    const char *text = rng_module("f32", "4", "rng_uniform", "0", "1");
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "t.hlo", &m));
    if (!m) return;
    interp_ctx ctx;
    CHECK_OK(interp_ctx_init(&ctx, m, NULL));
    cxla_literal *wrong = NULL;
    CHECK_OK(cxla_literal_parse("s32[] 1", (size_t)-1, NULL, &wrong));
    const cxla_literal *ops[2] = {wrong, wrong};
    const cxla_instr *rng = m->entry->root;
    const char *msg = CHECK_ERROR(interp_handler(rng->opcode)(&ctx, rng, ops, &r));
    CHECK(strstr(msg, "operand 0 must be a f32 scalar") != NULL);
    cxla_literal_free(wrong);
    interp_ctx_deinit(&ctx);
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_rbg_known_answers), TEST(test_rbg_xla_printed_example),
          TEST(test_rbg_threefry_shapes), TEST(test_rbg_philox_layouts),
          TEST(test_rbg_deterministic), TEST(test_rbg_errors), TEST(test_get_and_update_state),
          TEST(test_rng_key_and_state), TEST(test_rng_deterministic_and_seeded),
          TEST(test_rng_uniform_float), TEST(test_rng_uniform_never_b), TEST(test_rng_uniform_int),
          TEST(test_rng_normal), TEST(test_rng_zero_size), TEST(test_rng_errors))
