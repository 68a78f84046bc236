/* The random-number algorithms of src/exec/rng.c: the Random123 known-answer vectors of
 * threefry2x32_20 and philox4x32_10 (the same vectors JAX's and TensorFlow's XLA tests
 * hold), JAX's published threefry outputs (random.split and random.bits of keys 0 and
 * 42), the C++ standard's check value of mt19937_64, XLA's split of a shape into halves,
 * and the uniform-float conversions at their edges. rng-bit-generator and rng over them
 * are tested in tests/interp/test_interp_rng.c. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "exec/rng.h"
#include "harness.h"

/* ---- block functions ------------------------------------------------------------------ */

static void test_threefry_known_answers(void) {
    /* Random123 kat_vectors, threefry2x32_20: counter, key, result. */
    static const uint32_t kat[3][6] = {
        {0, 0, 0, 0, 0x6b200159, 0x99ba4efe},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xc4923a9c, 0x483df7a0},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t out[2];
        exec_threefry2x32(&kat[i][2], &kat[i][0], out);
        CHECK_EQ_U64(out[0], kat[i][4]);
        CHECK_EQ_U64(out[1], kat[i][5]);
    }
}

static void test_philox_known_answers(void) {
    /* Random123 kat_vectors, philox4x32_10: counter, key, result. */
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        exec_philox4x32(&kat[i][4], &kat[i][0], out);
        for (int w = 0; w < 4; w++) CHECK_EQ_U64(out[w], kat[i][6 + w]);
    }
}

/* JAX's threefry_2x32(key, iota(4)) hashes counters (0, 2) and (1, 3): random.split(key)
 * and random.bits(key, (4,)) (jax_threefry_partitionable off) read the outputs back as
 * [[x0[0], x0[1]], [x1[0], x1[1]]]. */
static void test_jax_threefry_values(void) {
    static const struct {
        uint32_t key[2];
        uint32_t want[4];
    } cases[] = {
        {{0, 0}, {4146024105u, 967050713u, 2718843009u, 1272950319u}},
        {{0, 42}, {2465931498u, 3679230171u, 255383827u, 267815257u}},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        uint32_t a[2], b[2];
        exec_threefry2x32(cases[c].key, (const uint32_t[2]){0, 2}, a);
        exec_threefry2x32(cases[c].key, (const uint32_t[2]){1, 3}, b);
        CHECK_EQ_U64(a[0], cases[c].want[0]);
        CHECK_EQ_U64(b[0], cases[c].want[1]);
        CHECK_EQ_U64(a[1], cases[c].want[2]);
        CHECK_EQ_U64(b[1], cases[c].want[3]);
    }
}

static void test_mt19937_64(void) {
    /* C++ [rand.predef]: the 10000th output of a default-constructed mt19937_64. */
    uint64_t *v = malloc(10000 * sizeof(uint64_t));
    exec_mt19937_64(5489, v, 10000);
    CHECK_EQ_U64(v[9999], 9981545732273789042ull);
    uint64_t w[3];
    exec_mt19937_64(5489, w, 3);
    CHECK_EQ_U64(w[0], v[0]);
    CHECK_EQ_U64(w[2], v[2]);
    free(v);
}

/* ---- shapes and conversions ---------------------------------------------------------- */

static void test_split_halves(void) {
    int64_t d345[] = {3, 4, 5}, d377[] = {3, 7, 7};
    cxla_shape s = {.type = CXLA_U32, .rank = 3, .dims = d345};
    exec_halves h = exec_rng_split_halves(&s); /* the first even dimension */
    CHECK(h.pre == 3 && h.d == 4 && h.h == 2 && h.post == 5);
    CHECK_EQ_I64(exec_rng_halves_pairs(h), 30);
    s = (cxla_shape){.type = CXLA_U32, .rank = 3, .dims = d377};
    h = exec_rng_split_halves(&s); /* no even one: the largest, the first of equal ones */
    CHECK(h.pre == 3 && h.d == 7 && h.h == 4 && h.post == 7);
    s = (cxla_shape){.type = CXLA_U32, .rank = 0};
    h = exec_rng_split_halves(&s);
    CHECK(h.pre == 1 && h.d == 1 && h.h == 1 && h.post == 1);
    exec_u128 c = exec_u128_add((exec_u128){UINT64_MAX, 7}, 2);
    CHECK(c.lo == 1 && c.hi == 8);
}

static void test_uniform_edges(void) {
    const uint64_t b64[2] = {0, UINT64_MAX};
    double d[2];
    exec_rng_uniform_f64(b64, 2, -1.0, 1.0, d);
    CHECK(d[0] == -1.0 && d[1] < 1.0 && d[1] == 1.0 - 0x1p-51);
    /* b - a overflows: computed as a (1 - v) + b v. */
    exec_rng_uniform_f64(b64, 2, -DBL_MAX, DBL_MAX, d);
    CHECK(d[0] == -DBL_MAX && isfinite(d[1]) && d[1] < DBL_MAX);
    /* 1e8 + 8 * (1 - 2^-23) rounds to b = 1e8 + 8 in f32: clamped below b, or not. */
    const uint32_t b32[1] = {UINT32_MAX};
    float f;
    exec_rng_uniform_f32(b32, 1, 1e8f, 1e8f + 8, true, &f);
    CHECK(f == 1e8f);
    exec_rng_uniform_f32(b32, 1, 1e8f, 1e8f + 8, false, &f);
    CHECK(f == 1e8f + 8);
    CHECK(exec_rng_small_float_below(CXLA_BF16, 1.0) == 1.0 - 0x1p-8);
    CHECK(isnan(exec_rng_small_float_below(CXLA_F16, -INFINITY)));
}

TEST_MAIN(TEST(test_threefry_known_answers), TEST(test_philox_known_answers),
          TEST(test_jax_threefry_values), TEST(test_mt19937_64), TEST(test_split_halves),
          TEST(test_uniform_edges))
