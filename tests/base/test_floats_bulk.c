/* The bulk conversions of base/floats.h against the per-element conversion every other
 * path uses (cxla_convert_element): the same bits for every f16, bf16, f8, f6 and f4
 * pattern as a source, and for millions of f32 and f64 values (random bit patterns, NaN
 * payloads, infinities, denormals, every tie between neighbours of each format) as a
 * source of each narrower type; arrays of every length around the block size. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/floats.h"
#include "literal/literal_internal.h" /* cxla_convert_element */

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rng_next(void) {
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static bool is_real_float(cxla_type t) {
    return cxla_type_is_float(t);
}

/* Converts |n| elements of |from| both ways and reports the first difference. */
static void compare(cxla_type from, const void *src, cxla_type to, int64_t n, const char *what) {
    size_t fs = cxla_type_storage(from), ts = cxla_type_storage(to);
    unsigned char *bulk = malloc((size_t)n * ts + 1), *each = malloc((size_t)n * ts + 1);
    if (!bulk || !each) {
        free(bulk);
        free(each);
        CHECK_MSG(false, "out of memory");
        return;
    }
    memset(bulk, 0xa5, (size_t)n * ts + 1);
    memset(each, 0xa5, (size_t)n * ts + 1);
    CHECK(cxla_floats_convert(from, src, to, bulk, n));
    for (int64_t i = 0; i < n; i++)
        cxla_convert_element(from, (const unsigned char *)src + (size_t)i * fs, to,
                             each + (size_t)i * ts);
    CHECK_MSG(bulk[(size_t)n * ts] == 0xa5, "%s -> %s wrote past the end", cxla_type_name(from),
              cxla_type_name(to));
    for (int64_t i = 0; i < n; i++) {
        if (memcmp(bulk + (size_t)i * ts, each + (size_t)i * ts, ts) == 0) continue;
        uint64_t in = 0, got = 0, want = 0;
        memcpy(&in, (const unsigned char *)src + (size_t)i * fs, fs);
        memcpy(&got, bulk + (size_t)i * ts, ts);
        memcpy(&want, each + (size_t)i * ts, ts);
        test_fail(__FILE__, __LINE__,
                  "%s: %s 0x%llx -> %s: bulk 0x%llx, per element 0x%llx (at %lld)", what,
                  cxla_type_name(from), (unsigned long long)in, cxla_type_name(to),
                  (unsigned long long)got, (unsigned long long)want, (long long)i);
        break;
    }
    free(bulk);
    free(each);
}

/* Every bit pattern of each small type to every real float type (small -> small goes
 * through f32 in bulk, through the double per element). */
static void test_every_small_pattern(void) {
    for (int from = 1; from < CXLA_TYPE_COUNT; from++) {
        if (!is_real_float((cxla_type)from) || cxla_type_storage((cxla_type)from) > 2) continue;
        uint32_t count = cxla_type_storage((cxla_type)from) == 2 ? 65536 : 256;
        unsigned char *src = malloc(count * 2);
        if (!src) return;
        for (uint32_t p = 0; p < count; p++) {
            uint16_t h = (uint16_t)p;
            if (count == 256)
                src[p] = (unsigned char)p;
            else
                memcpy(src + 2 * p, &h, 2);
        }
        for (int to = 1; to < CXLA_TYPE_COUNT; to++) {
            if (!is_real_float((cxla_type)to)) continue;
            bool bulk = cxla_floats_can_convert((cxla_type)from, (cxla_type)to);
            bool fnu = from == CXLA_F8E8M0FNU || to == CXLA_F8E8M0FNU;
            CHECK_MSG(bulk == !fnu, "%s -> %s: bulk %d", cxla_type_name((cxla_type)from),
                      cxla_type_name((cxla_type)to), bulk);
            if (bulk) compare((cxla_type)from, src, (cxla_type)to, count, "every pattern");
        }
        free(src);
    }
}

static float f32_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Floats that stress rounding to |to|: each value of |to| (as a float), the midpoint
 * between it and its neighbour (a tie), and the floats one ulp either side of both. */
static int64_t ties_of(cxla_type to, float *out) {
    int64_t k = 0;
    uint32_t count = cxla_type_storage(to) == 2 ? 65536 : 256;
    for (uint32_t p = 0; p + 1 < count; p++) {
        float a = cxla_float_to_float(to, p), b = cxla_float_to_float(to, p + 1);
        if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) continue;
        float mid = (float)(((double)a + (double)b) / 2); /* exact: at most 12 bits more */
        const float v[] = {a,   nextafterf(a, INFINITY),   nextafterf(a, -INFINITY),
                           mid, nextafterf(mid, INFINITY), nextafterf(mid, -INFINITY)};
        for (int j = 0; j < 6; j++) out[k++] = v[j];
    }
    return k;
}

/* f32 sources: special values, the ties of each format and random bit patterns. */
static void test_from_f32(void) {
    static const uint32_t special[] = {
        0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x00400000,
        0x7f800000, 0xff800000, 0x7f800001, 0xff800001, 0x7fbfffff, 0x7fc00000, 0xffc00000,
        0x7fc00001, 0x7fffffff, 0xffffffff, 0x7fd23456, 0x7f7fffff, 0xff7fffff, 0x3f800000,
        0x477ff000, 0x477fefff, 0x47800000, 0x43e00000, 0x43e80000, 0x43e80001, 0x47600000,
        0x47700000, 0x476fffff, 0x33000000, 0x33000001, 0x387fffff, 0x38800000, 0x3b000000};
    enum { RANDOM = 2000000 };
    float *src = malloc(sizeof(float) * (RANDOM + 6 * 65536 + 64));
    if (!src) return;
    for (int to = 1; to < CXLA_TYPE_COUNT; to++) {
        if (!is_real_float((cxla_type)to) || to == CXLA_F32 || to == CXLA_F8E8M0FNU) continue;
        int64_t n = 0;
        for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
            src[n++] = f32_of(special[i]);
        if (to != CXLA_F64) n += ties_of((cxla_type)to, src + n);
        /* Random patterns, half of them near the format's range (exponents 2^-30..2^20). */
        for (int i = 0; i < RANDOM; i++) {
            uint32_t u = (uint32_t)(rng_next() >> 17);
            if (i % 2) u = (u & 0x807fffffu) | ((97u + (uint32_t)(rng_next() % 51)) << 23);
            src[n++] = f32_of(u);
        }
        compare(CXLA_F32, src, (cxla_type)to, n, "f32 values");
    }
    free(src);
}

/* f64 sources: rounded once from the double (never through f32), so doubles just off a
 * tie must round away from it. */
static void test_from_f64(void) {
    enum { RANDOM = 1000000 };
    double *src = malloc(sizeof(double) * (RANDOM + 12 * 65536 + 64));
    float *ties = malloc(sizeof(float) * 6 * 65536);
    if (!src || !ties) {
        free(src);
        free(ties);
        return;
    }
    static const double special[] = {0.0,      -0.0,     INFINITY, -INFINITY,  NAN,
                                     -NAN,     1e300,    -1e300,   1e-300,     0x1p-1074,
                                     0x1p-149, 0x1p-150, 65520.0,  448.0,      464.0,
                                     480.0,    57344.0,  61440.0,  0x1.fep127, 0x1.ffp127};
    for (int to = 1; to < CXLA_TYPE_COUNT; to++) {
        if (!is_real_float((cxla_type)to) || to == CXLA_F64 || to == CXLA_F8E8M0FNU) continue;
        int64_t n = 0;
        for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) src[n++] = special[i];
        if (to != CXLA_F32) {
            int64_t k = ties_of((cxla_type)to, ties);
            for (int64_t i = 0; i < k; i++) {
                src[n++] = ties[i];
                src[n++] = nextafter(ties[i], i % 2 ? INFINITY : -INFINITY);
            }
        }
        for (int i = 0; i < RANDOM; i++) {
            uint64_t u = rng_next();
            if (i % 2) u = (u & 0x800fffffffffffffull) | ((uint64_t)(993 + rng_next() % 51) << 52);
            if (i % 7 == 0) u = (u & 0xfff0000000000000ull) | (rng_next() & 0x7ff) << 29;
            memcpy(&src[n++], &u, 8);
        }
        compare(CXLA_F64, src, (cxla_type)to, n, "f64 values");
    }
    free(src);
    free(ties);
}

/* Lengths around the block size and unaligned starts: the tails convert like the rest,
 * and nothing past the end is written (compare checks the byte after). */
static void test_lengths(void) {
    float src[300];
    for (int i = 0; i < 300; i++) src[i] = (float)i * 0.37f - 50.0f;
    const cxla_type to[] = {CXLA_BF16, CXLA_F16, CXLA_F8E4M3FN, CXLA_F8E5M2, CXLA_F64, CXLA_F32};
    const int64_t lengths[] = {0, 1, 2, 63, 64, 65, 127, 128, 129, 299};
    for (size_t t = 0; t < sizeof(to) / sizeof(to[0]); t++)
        for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++)
            compare(CXLA_F32, src + (l % 2), to[t], lengths[l], "lengths");
    /* Pairs without a loop write nothing and say so. */
    unsigned char out[4] = {7, 7, 7, 7};
    CHECK(!cxla_floats_convert(CXLA_F32, src, CXLA_F8E8M0FNU, out, 4));
    CHECK(!cxla_floats_convert(CXLA_S32, src, CXLA_F32, out, 1));
    CHECK(!cxla_floats_convert(CXLA_F32, src, CXLA_C64, out, 1));
    CHECK(out[0] == 7 && out[3] == 7);
    CHECK(!cxla_floats_can_convert(CXLA_F32, CXLA_PRED));
    CHECK(cxla_floats_can_convert(CXLA_F64, CXLA_F4E2M1FN));
}

TEST_MAIN(TEST(test_every_small_pattern), TEST(test_from_f32), TEST(test_from_f64),
          TEST(test_lengths))
