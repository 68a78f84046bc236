/* Small float conversions (src/base/floats.c) against references written here from the
 * format definitions, and spot values from ml_dtypes' own tests. */
#include "harness.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The formats, written down from their definitions (not read from the type table, which
 * test_type_table checks against this). */
typedef enum { K_IEEE, K_FN, K_FNUZ, K_FNU, K_F4 } kind;
typedef struct fmt {
    cxla_type type;
    const char *name;
    int e, m, bias;
    kind k;
} fmt;

static const fmt kFormats[] = {
    {CXLA_F16, "f16", 5, 10, 15, K_IEEE},
    {CXLA_BF16, "bf16", 8, 7, 127, K_IEEE},
    {CXLA_F8E5M2, "f8e5m2", 5, 2, 15, K_IEEE},
    {CXLA_F8E4M3, "f8e4m3", 4, 3, 7, K_IEEE},
    {CXLA_F8E4M3FN, "f8e4m3fn", 4, 3, 7, K_FN},
    {CXLA_F8E4M3B11FNUZ, "f8e4m3b11fnuz", 4, 3, 11, K_FNUZ},
    {CXLA_F8E3M4, "f8e3m4", 3, 4, 3, K_IEEE},
    {CXLA_F8E5M2FNUZ, "f8e5m2fnuz", 5, 2, 16, K_FNUZ},
    {CXLA_F8E4M3FNUZ, "f8e4m3fnuz", 4, 3, 8, K_FNUZ},
    {CXLA_F8E8M0FNU, "f8e8m0fnu", 8, 0, 127, K_FNU},
    {CXLA_F4E2M1FN, "f4e2m1fn", 2, 1, 1, K_F4},
    {CXLA_F6E2M3FN, "f6e2m3fn", 2, 3, 1, K_F4}, /* like f4e2m1fn: finite, no NaN (mxfloat.h) */
    {CXLA_F6E3M2FN, "f6e3m2fn", 3, 2, 3, K_F4},
};
#define NFORMATS ((int)(sizeof(kFormats) / sizeof(kFormats[0])))

static int fmt_bits(const fmt *f) {
    return f->k == K_FNU ? 8 : 1 + f->e + f->m;
}
static uint32_t fmt_count(const fmt *f) {
    return 1u << fmt_bits(f);
}
static uint32_t sign_bit(const fmt *f) {
    return f->k == K_FNU ? 0 : 1u << (f->e + f->m);
}

/* The value of |bits| from sign, exponent and mantissa; *is_nan for NaN patterns. */
static double ref_decode(const fmt *f, uint32_t bits, bool *is_nan) {
    *is_nan = false;
    if (f->k == K_FNU) {
        if (bits == 0xff) *is_nan = true;
        return *is_nan ? NAN : pow(2.0, (double)bits - 127);
    }
    uint32_t s = (bits >> (f->e + f->m)) & 1;
    uint32_t ef = (bits >> f->m) & ((1u << f->e) - 1), mf = bits & ((1u << f->m) - 1);
    uint32_t eall = (1u << f->e) - 1, mall = (1u << f->m) - 1;
    if (f->k == K_IEEE && ef == eall) {
        if (mf == 0) return s ? -INFINITY : INFINITY;
        *is_nan = true;
    }
    if (f->k == K_FN && ef == eall && mf == mall) *is_nan = true;
    if (f->k == K_FNUZ && bits == sign_bit(f)) *is_nan = true;
    if (*is_nan) return NAN;
    double mant = (double)mf / pow(2.0, f->m);
    double v = ef == 0 ? mant * pow(2.0, 1 - f->bias) : (1.0 + mant) * pow(2.0, (int)ef - f->bias);
    return s ? -v : v;
}

/* ml_dtypes' negation of a result: flip the sign bit, but fnuz has no -0. */
static uint32_t neg_of(const fmt *f, uint32_t bits) {
    if (f->k == K_FNUZ && (bits & (sign_bit(f) - 1)) == 0) return bits;
    return bits ^ sign_bit(f);
}

/* Largest finite positive pattern; and what overflow gives (per sign). */
static uint32_t max_pattern(const fmt *f) {
    switch (f->k) {
    case K_IEEE: return (((1u << f->e) - 1) << f->m) - 1;
    case K_FN: return (1u << (f->e + f->m)) - 2;
    case K_FNU: return 0xfe;
    default: return (1u << (f->e + f->m)) - 1;
    }
}
static uint32_t overflow_pattern(const fmt *f, bool negative) {
    uint32_t p;
    switch (f->k) {
    case K_IEEE: p = ((1u << f->e) - 1) << f->m; break; /* inf */
    case K_FN: p = (1u << (f->e + f->m)) - 1; break;    /* NaN S.1111.111 */
    case K_FNUZ: p = sign_bit(f); break;                /* NaN 0x80 */
    case K_FNU: return 0xff;
    default: p = max_pattern(f); break; /* f4e2m1fn: the largest finite */
    }
    return negative ? neg_of(f, p) : p;
}

static void test_type_table(void) {
    for (int i = 0; i < NFORMATS; i++) {
        const fmt *f = &kFormats[i];
        const cxla_type_info *info = cxla_type_get_info(f->type);
        CHECK_EQ_STR(info->name, f->name);
        CHECK_EQ_I64(info->exponent_bits, f->e);
        CHECK_EQ_I64(info->mantissa_bits, f->m);
        CHECK_EQ_I64(info->exponent_bias, f->bias);
        CHECK_EQ_I64(info->bits, fmt_bits(f));
    }
}

/* Every bit pattern decodes to the reference value (NaN to a NaN with ml_dtypes' sign),
 * and every non-NaN pattern encodes back to itself from double and from float. */
static void test_decode_and_round_trip_all(void) {
    for (int i = 0; i < NFORMATS; i++) {
        const fmt *f = &kFormats[i];
        for (uint32_t p = 0; p < fmt_count(f); p++) {
            bool nan;
            double want = ref_decode(f, p, &nan);
            double got = cxla_float_to_double(f->type, p);
            float gotf = cxla_float_to_float(f->type, p);
            if (nan) {
                bool neg = (p & sign_bit(f)) != 0;
                CHECK_MSG(isnan(got) && isnan(gotf) && !!signbit(gotf) == neg, "%s 0x%x: want NaN",
                          f->name, p);
                continue;
            }
            CHECK_MSG(got == want && !!signbit(got) == !!signbit(want), "%s 0x%x: %a vs %a",
                      f->name, p, got, want);
            CHECK_MSG((double)gotf == want, "%s 0x%x: float %a vs %a", f->name, p, (double)gotf,
                      want);
            uint32_t back = cxla_float_from_double(f->type, want);
            CHECK_MSG(back == p, "%s 0x%x: from_double(%a) = 0x%x", f->name, p, want, back);
            back = cxla_float_from_float(f->type, (float)want);
            CHECK_MSG(back == p, "%s 0x%x: from_float(%a) = 0x%x", f->name, p, want, back);
        }
    }
}

/* Midpoints between consecutive values go to the even pattern; just below and above
 * them go down and up. (e8m0fnu has its own test.) */
static void test_ties_to_even(void) {
    for (int i = 0; i < NFORMATS; i++) {
        const fmt *f = &kFormats[i];
        if (f->k == K_FNU) continue;
        for (uint32_t p = 0; p < max_pattern(f); p++) {
            bool nan;
            double lo = ref_decode(f, p, &nan), hi = ref_decode(f, p + 1, &nan);
            double mid = (lo + hi) / 2;
            uint32_t tie = (p & 1) ? p + 1 : p;
            CHECK_MSG(cxla_float_from_double(f->type, mid) == tie, "%s tie %a", f->name, mid);
            CHECK_MSG(cxla_float_from_double(f->type, -mid) == neg_of(f, tie), "%s tie -%a",
                      f->name, mid);
            CHECK_MSG(cxla_float_from_double(f->type, nextafter(mid, 0)) == p, "%s below %a",
                      f->name, mid);
            CHECK_MSG(cxla_float_from_double(f->type, nextafter(mid, INFINITY)) == p + 1,
                      "%s above %a", f->name, mid);
            CHECK_MSG(cxla_float_from_double(f->type, -nextafter(mid, INFINITY)) ==
                          neg_of(f, p + 1),
                      "%s above -%a", f->name, mid);
            /* The midpoint is a float too; from_float must agree. */
            float midf = (float)mid;
            CHECK((double)midf == mid);
            CHECK_MSG(cxla_float_from_float(f->type, midf) == tie, "%s float tie %a", f->name, mid);
            CHECK_MSG(cxla_float_from_float(f->type, nextafterf(midf, 0)) == p, "%s fbelow %a",
                      f->name, mid);
            CHECK_MSG(cxla_float_from_float(f->type, nextafterf(midf, INFINITY)) == p + 1,
                      "%s fabove %a", f->name, mid);
        }
    }
}

/* Around the largest finite value: a tie with the (missing) next value goes to the even
 * one of max and max+1, beyond it is the overflow rule. */
static void test_overflow(void) {
    for (int i = 0; i < NFORMATS; i++) {
        const fmt *f = &kFormats[i];
        if (f->k == K_FNU) continue;
        bool nan;
        uint32_t mp = max_pattern(f);
        double max = ref_decode(f, mp, &nan);
        double ulp = max - ref_decode(f, mp - 1, &nan);
        double mid = max + ulp / 2;
        uint32_t at_tie = (mp & 1) ? overflow_pattern(f, false) : mp;
        CHECK_MSG(cxla_float_from_double(f->type, max) == mp, "%s max", f->name);
        CHECK_MSG(cxla_float_from_double(f->type, nextafter(mid, 0)) == mp, "%s below", f->name);
        CHECK_MSG(cxla_float_from_double(f->type, mid) == at_tie, "%s tie", f->name);
        CHECK_MSG(cxla_float_from_double(f->type, nextafter(mid, INFINITY)) ==
                      overflow_pattern(f, false),
                  "%s above", f->name);
        CHECK_MSG(cxla_float_from_double(f->type, -nextafter(mid, INFINITY)) ==
                      overflow_pattern(f, true),
                  "%s -above", f->name);
        CHECK_MSG(cxla_float_from_double(f->type, -max) == neg_of(f, mp), "%s -max", f->name);
        double huge[] = {max + ulp, 2 * max, 0x1p128, 1e300, DBL_MAX};
        for (size_t j = 0; j < sizeof(huge) / sizeof(huge[0]); j++) {
            CHECK_MSG(cxla_float_from_double(f->type, huge[j]) == overflow_pattern(f, false),
                      "%s %a", f->name, huge[j]);
            CHECK_MSG(cxla_float_from_double(f->type, -huge[j]) == overflow_pattern(f, true),
                      "%s -%a", f->name, huge[j]);
        }
    }
    /* The same thresholds written out: f16 max 65504, the tie 65520 goes to inf. */
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F16, 65519.99), 0x7bff);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F16, 65520.0), 0x7c00);
    /* f8e4m3fn: 448 max (mantissa 110, even): 464 is a tie that stays, above is NaN. */
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F8E4M3FN, 464.0), 0x7e);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F8E4M3FN, 464.01), 0x7f);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F8E4M3FN, -464.01), 0xff);
    /* f8e4m3fnuz: 240 max (mantissa 111, odd): the tie 248 overflows to NaN 0x80. */
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F8E4M3FNUZ, 247.99), 0x7f);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F8E4M3FNUZ, 248.0), 0x80);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F8E4M3FNUZ, -248.0), 0x80);
    /* f4e2m1fn: saturates at +-6. */
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F4E2M1FN, 6.99), 0x7);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F4E2M1FN, 7.0), 0x7);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F4E2M1FN, -100.0), 0xf);
}

/* Smallest subnormal, half of it (a tie to 0), and a bit more than half. */
static void test_subnormals(void) {
    for (int i = 0; i < NFORMATS; i++) {
        const fmt *f = &kFormats[i];
        if (f->k == K_FNU) continue;
        bool nan;
        double s = ref_decode(f, 1, &nan);
        CHECK_MSG(s == pow(2.0, 1 - f->bias - f->m), "%s smallest subnormal", f->name);
        CHECK_MSG(cxla_float_from_double(f->type, s) == 1, "%s s", f->name);
        CHECK_MSG(cxla_float_from_double(f->type, s / 2) == 0, "%s s/2", f->name);
        CHECK_MSG(cxla_float_from_double(f->type, -s / 2) == neg_of(f, 0), "%s -s/2", f->name);
        CHECK_MSG(cxla_float_from_double(f->type, nextafter(s / 2, 1)) == 1, "%s >s/2", f->name);
        CHECK_MSG(cxla_float_from_double(f->type, -nextafter(s / 2, 1)) == neg_of(f, 1), "%s <-s/2",
                  f->name);
        CHECK_MSG(cxla_float_from_double(f->type, s / 4) == 0, "%s s/4", f->name);
        CHECK_MSG(cxla_float_from_double(f->type, 1e-300) == 0, "%s 1e-300", f->name);
        CHECK_MSG(cxla_float_from_double(f->type, -4.9e-324) == neg_of(f, 0), "%s -denorm",
                  f->name);
        if (f->m >= 2) {
            CHECK_MSG(cxla_float_from_double(f->type, 1.5 * s) == 2, "%s 1.5s", f->name);
            CHECK_MSG(cxla_float_from_double(f->type, 2.5 * s) == 2, "%s 2.5s", f->name);
        }
    }
}

/* Infinities, NaNs, zeros and tiny values for every type, from double and from float. */
static void test_special_inputs(void) {
    static const struct {
        cxla_type type;
        uint32_t inf, ninf, nan, nnan, zero, nzero, tiny, ntiny;
    } want[] = {
        {CXLA_F16, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0, 0x8000, 0, 0x8000},
        {CXLA_BF16, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0, 0x8000, 0, 0x8000},
        {CXLA_F8E5M2, 0x7c, 0xfc, 0x7e, 0xfe, 0, 0x80, 0, 0x80},
        {CXLA_F8E4M3, 0x78, 0xf8, 0x7c, 0xfc, 0, 0x80, 0, 0x80},
        {CXLA_F8E4M3FN, 0x7f, 0xff, 0x7f, 0xff, 0, 0x80, 0, 0x80},
        {CXLA_F8E4M3B11FNUZ, 0x80, 0x80, 0x80, 0x80, 0, 0, 0, 0},
        {CXLA_F8E3M4, 0x70, 0xf0, 0x78, 0xf8, 0, 0x80, 0, 0x80},
        {CXLA_F8E5M2FNUZ, 0x80, 0x80, 0x80, 0x80, 0, 0, 0, 0},
        {CXLA_F8E4M3FNUZ, 0x80, 0x80, 0x80, 0x80, 0, 0, 0, 0},
        /* Unsigned, no zero: everything but a tiny positive value is NaN; tiny -> 2^-127. */
        {CXLA_F8E8M0FNU, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff},
        /* No inf, no NaN: inf saturates; NaN becomes ml_dtypes' quiet_NaN() 0b1000 (-0),
         * negated for -NaN to 0b0000 (+0). */
        {CXLA_F4E2M1FN, 0x7, 0xf, 0x8, 0x0, 0, 0x8, 0, 0x8},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        cxla_type t = want[i].type;
        const char *n = cxla_type_name(t);
        double d[] = {INFINITY, -INFINITY, NAN, copysign(NAN, -1.0), 0.0, -0.0, 1e-300, -1e-300};
        float fl[] = {INFINITY, -INFINITY, NAN,    copysignf(NAN, -1.0f),
                      0.0f,     -0.0f,     1e-45f, -1e-45f};
        uint32_t w[] = {want[i].inf,  want[i].ninf,  want[i].nan,  want[i].nnan,
                        want[i].zero, want[i].nzero, want[i].tiny, want[i].ntiny};
        for (int j = 0; j < 8; j++) {
            uint32_t got = cxla_float_from_double(t, d[j]);
            CHECK_MSG(got == w[j], "%s from_double #%d: 0x%x vs 0x%x", n, j, got, w[j]);
            got = cxla_float_from_float(t, fl[j]);
            CHECK_MSG(got == w[j], "%s from_float #%d: 0x%x vs 0x%x", n, j, got, w[j]);
        }
    }
}

/* e8m0fnu: 2^(bits-127), rounding linearly between powers of two with ties up, and below
 * 2^-126 as if 0x00 were zero (float8.h ConvertImpl: the "denormal" alignment). */
static void test_e8m0(void) {
    cxla_type t = CXLA_F8E8M0FNU;
    CHECK_EQ_U64(cxla_float_from_double(t, 1.0), 0x7f);
    CHECK_EQ_U64(cxla_float_from_double(t, 1.5), 0x80);
    CHECK_EQ_U64(cxla_float_from_double(t, nextafter(1.5, 0)), 0x7f);
    CHECK_EQ_U64(cxla_float_from_double(t, 3.0), 0x81);
    CHECK_EQ_U64(cxla_float_from_double(t, 0.75), 0x7f);
    CHECK_EQ_U64(cxla_float_from_double(t, nextafter(0.75, 0)), 0x7e);
    CHECK_EQ_U64(cxla_float_from_double(t, 0x1p-126), 0x01);
    CHECK_EQ_U64(cxla_float_from_double(t, 0x1.8p-126), 0x02);
    CHECK_EQ_U64(cxla_float_from_double(t, 0x1p-127), 0x00);
    CHECK_EQ_U64(cxla_float_from_double(t, nextafter(0x1p-127, 1)), 0x01);
    CHECK_EQ_U64(cxla_float_from_double(t, 0x1.2p-127), 0x01);
    CHECK_EQ_U64(cxla_float_from_double(t, 0x1p-128), 0x00);
    CHECK_EQ_U64(cxla_float_from_double(t, 0x1.fp-128), 0x00);
    CHECK_EQ_U64(cxla_float_from_float(t, 0x1p-127f), 0x00);
    CHECK_EQ_U64(cxla_float_from_float(t, 0x1.2p-127f), 0x01);
    CHECK_EQ_U64(cxla_float_from_double(t, 0x1p127), 0xfe);
    CHECK_EQ_U64(cxla_float_from_double(t, nextafter(0x1.8p127, 0)), 0xfe);
    CHECK_EQ_U64(cxla_float_from_double(t, 0x1.8p127), 0xff);
    CHECK_EQ_U64(cxla_float_from_double(t, 0x1p128), 0xff);
    CHECK_EQ_U64(cxla_float_from_float(t, FLT_MAX), 0xff);
    CHECK(isnan(cxla_float_to_double(t, 0xff)));
    CHECK(!signbit(cxla_float_to_float(t, 0xff)));
    CHECK(cxla_float_to_float(t, 0x00) == 0x1p-127f);
    /* ml_dtypes/tests/float8_test.cc, Float8E8m0fnuTest.NegativeInput: all NaN. */
    float neg[] = {-1.0f, -0.5f, -FLT_MIN, -FLT_TRUE_MIN, -0.0f, -FLT_MAX, -INFINITY};
    for (size_t i = 0; i < sizeof(neg) / sizeof(neg[0]); i++)
        CHECK_EQ_U64(cxla_float_from_float(t, neg[i]), 0xff);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng_next(void) {
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

/* Brute force: the nearest of all representable values (ties to the even pattern, or up
 * for e8m0fnu), with the overflow rule past max + half an ulp. |values| holds the
 * reference decoding of the positive patterns 0..max, and one more: the next value
 * beyond max (2^128 for e8m0fnu, else max plus one ulp). */
static uint32_t ref_encode(const fmt *f, const double *values, double x) {
    bool negative = signbit(x) != 0;
    double a = fabs(x);
    if (f->k == K_FNU && negative) return 0xff;
    /* The values grow with the pattern: find lo with values[lo] <= a < values[lo + 1]. */
    uint32_t mp = max_pattern(f), lo = 0, hi = mp + 1, best;
    if (a >= values[hi]) {
        best = hi;
    } else {
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (values[mid] <= a)
                lo = mid;
            else
                hi = mid;
        }
        double d_lo = a - values[lo], d_hi = values[hi] - a;
        if (d_lo != d_hi) best = d_lo < d_hi ? lo : hi;
        /* e8m0fnu ties go up, except the one with 0x00 (whose mantissa is even). */
        else if (f->k == K_FNU)
            best = lo == 0 ? lo : hi;
        else
            best = (lo & 1) == 0 ? lo : hi;
    }
    if (best == mp + 1) return overflow_pattern(f, negative);
    return negative ? neg_of(f, best) : best;
}

static void test_random_against_brute_force(void) {
    for (int i = 0; i < NFORMATS; i++) {
        const fmt *f = &kFormats[i];
        int emin = 1 - f->bias - f->m - 3, emax = (1 << f->e) - f->bias + 2;
        int failures = 0;
        uint32_t mp = max_pattern(f);
        double *values = malloc((mp + 2) * sizeof(double));
        bool nan;
        for (uint32_t p = 0; p <= mp; p++) values[p] = ref_decode(f, p, &nan);
        /* ml_dtypes rounds e8m0fnu below 2^-126 as if 0x00 were zero. */
        if (f->k == K_FNU) values[0] = 0.0;
        values[mp + 1] = f->k == K_FNU ? 2 * values[mp] : 2 * values[mp] - values[mp - 1];
        int samples = 300000;
        for (int n = 0; n < samples && failures < 5; n++) {
            uint64_t r = rng_next();
            int binade = emin + (int)(r % (uint64_t)(emax - emin + 1));
            /* A random significand, sometimes with few bits set so ties come up. */
            uint64_t mant = (r >> 16) & ((1ull << 52) - 1);
            if ((r >> 8) & 1) mant &= ~((1ull << (52 - f->m - 2)) - 1);
            double x = ldexp(1.0 + ldexp((double)mant, -52), binade);
            if ((r >> 9) & 1) x = -x;
            uint32_t got = cxla_float_from_double(f->type, x), want = ref_encode(f, values, x);
            if (got != want) {
                failures++;
                test_fail(__FILE__, __LINE__, "%s %a: 0x%x vs 0x%x", f->name, x, got, want);
            }
        }
        free(values);
    }
}

/* f16 and bf16 bit patterns known from the formats. */
static void test_f16_bf16_known(void) {
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F16, 1.0), 0x3c00);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F16, -2.0), 0xc000);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F16, 65504.0), 0x7bff);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F16, 0x1p-24), 0x0001);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F16, 0x1p-14), 0x0400);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F16, 0.1), 0x2e66);
    CHECK_EQ_U64(cxla_f32_to_f16(1.0f), 0x3c00);
    CHECK_EQ_U64(cxla_f32_to_f16(65504.0f), 0x7bff);
    CHECK_EQ_U64(cxla_f32_to_f16(0x1p-24f), 0x0001);
    CHECK(cxla_f16_to_f32(0x3c00) == 1.0f);
    CHECK(cxla_f16_to_f32(0x7bff) == 65504.0f);
    CHECK(cxla_f16_to_f32(0x0001) == 0x1p-24f);
    CHECK(cxla_f16_to_f32(0x03ff) == 0x3ffp-24f);
    CHECK(cxla_f16_to_f32(0xfc00) == -INFINITY);
    CHECK(signbit(cxla_f16_to_f32(0x8000)) && cxla_f16_to_f32(0x8000) == 0.0f);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_BF16, 1.0), 0x3f80);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_BF16, -2.0), 0xc000);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_BF16, 3.14159265358979), 0x4049);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_BF16, 0x1.fep127), 0x7f7f);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_BF16, 0x1p-133), 0x0001);
    CHECK_EQ_U64(cxla_f32_to_bf16(1.0f), 0x3f80);
    CHECK_EQ_U64(cxla_f32_to_bf16(FLT_MAX), 0x7f80); /* rounds up to inf */
    CHECK(cxla_bf16_to_f32(0x3f80) == 1.0f);
    CHECK(cxla_bf16_to_f32(0x7f7f) == 0x1.fep127f);
    CHECK(cxla_bf16_to_f32(0x0001) == 0x1p-133f);
    /* Eigen keeps the payload of a quiet NaN when widening half and bfloat16. */
    float q = cxla_f16_to_f32(0xfe01);
    uint32_t qb;
    memcpy(&qb, &q, 4);
    CHECK_EQ_U64(qb, 0xffc02000u);
    q = cxla_bf16_to_f32(0x7fc5);
    memcpy(&qb, &q, 4);
    CHECK_EQ_U64(qb, 0x7fc50000u);
    /* Rounding directly from the double: 1 + 2^-11 + 2^-40 rounds to float 1 + 2^-11
     * (a tie for f16 that would go down to 1.0); direct rounding goes up. */
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F16, 1.0 + 0x1p-11 + 0x1p-40), 0x3c01);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_BF16, 1.0 + 0x1p-8 + 0x1p-40), 0x3f81);
}

static float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* The fast f32 paths agree with the generic (double) path on millions of random floats
 * and on the special ones; f32 itself is the identity on bits. */
static void test_fast_paths_agree(void) {
    static const uint32_t special[] = {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff,
                                       0x00800000, 0x33000000, 0x33000001, 0x337fffff, 0x38800000,
                                       0x387fffff, 0x387fe000, 0x387ff000, 0x477fefff, 0x477ff000,
                                       0x477fe000, 0x7f7fffff, 0x7f7f7fff, 0x7f7f8000, 0x7f800000,
                                       0xff800000, 0x7f800001, 0x7fc00000, 0xffc00001, 0x3f808000,
                                       0x3f818000, 0x3f807fff, 0x3f800fff, 0x3f801000, 0x3f803000};
    int failures = 0;
    for (uint32_t i = 0; i < 4000000 + sizeof(special) / sizeof(special[0]) && failures < 10; i++) {
        uint32_t u =
            i < sizeof(special) / sizeof(special[0]) ? special[i] : (uint32_t)(rng_next() >> 11);
        float f = float_of(u);
        uint32_t h_fast = cxla_f32_to_f16(f), h_gen = cxla_float_from_double(CXLA_F16, f);
        uint32_t b_fast = cxla_f32_to_bf16(f), b_gen = cxla_float_from_double(CXLA_BF16, f);
        if (h_fast != h_gen || b_fast != b_gen) {
            failures++;
            test_fail(__FILE__, __LINE__, "0x%08x: f16 0x%x vs 0x%x, bf16 0x%x vs 0x%x", u, h_fast,
                      h_gen, b_fast, b_gen);
        }
        CHECK(cxla_float_from_float(CXLA_F16, f) == h_fast);
        CHECK(cxla_float_from_float(CXLA_BF16, f) == b_fast);
        CHECK(cxla_float_from_float(CXLA_F32, f) == u);
        CHECK(bits_of(cxla_float_to_float(CXLA_F32, u)) == u);
        if (!isnan(f)) CHECK(cxla_float_from_double(CXLA_F32, (double)f) == u);
        /* A value that round-trips exactly through f16/bf16 widens back to itself. */
        if (!isnan(f)) {
            float hf = cxla_f16_to_f32((uint16_t)h_fast), bf = cxla_bf16_to_f32((uint16_t)b_fast);
            CHECK(fabsf(hf - f) <= fabsf(f) * 0x1p-11f || fabsf(f) < 0x1p-14f || isinf(hf));
            CHECK(fabsf(bf - f) <= fabsf(f) * 0x1p-8f || fabsf(f) < 0x1p-126f || isinf(bf));
        }
    }
    /* from_double(F32) rounds like a C cast. */
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F32, 1.0 + 0x1p-30), 0x3f800000);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F32, 1e300), 0x7f800000);
    /* f64 and non-float types are not handled here. */
    CHECK_EQ_U64(cxla_float_from_double(CXLA_F64, 1.0), 0);
    CHECK_EQ_U64(cxla_float_from_double(CXLA_S32, 1.0), 0);
    CHECK(isnan(cxla_float_to_double(CXLA_F64, 0)));
}

/* The generic encoder as it was written before it lost its libm calls (frexp, ldexp,
 * floor on the double): the new bit-manipulating one must give the same bits for every
 * input, which is what this compares. */
static uint32_t nan_pattern(const fmt *f, bool negative) {
    uint32_t p;
    switch (f->k) {
    case K_IEEE: p = (((1u << f->e) - 1) << f->m) | (1u << (f->m - 1)); break;
    case K_FN: p = (1u << (f->e + f->m)) - 1; break;
    case K_FNU: return 0xff;
    default: p = sign_bit(f); break; /* fnuz's NaN; f4/f6 quiet_NaN(), which is -0 */
    }
    return negative ? neg_of(f, p) : p;
}

static uint32_t old_encode(const fmt *f, double value) {
    bool negative = signbit(value) != 0;
    if (f->k == K_FNU) {
        if (isnan(value) || negative || value == 0.0 || isinf(value)) return 0xff;
        int exponent;
        double frac = frexp(value, &exponent) * 2.0 - 1.0;
        int unbiased = exponent - 1;
        if (unbiased < -127) return 0x00;
        if (unbiased == -127) return frac > 0.0 ? 0x01 : 0x00;
        int64_t bits = (int64_t)unbiased + 127 + (frac >= 0.5 ? 1 : 0);
        return bits > 0xfe ? 0xff : (uint32_t)bits;
    }
    if (isnan(value)) return nan_pattern(f, negative);
    if (isinf(value)) return overflow_pattern(f, negative);
    if (value == 0.0) return negative ? neg_of(f, 0) : 0;
    double a = fabs(value);
    int exponent;
    (void)frexp(a, &exponent);
    int unbiased = exponent - 1;
    uint32_t magnitude;
    if (unbiased + f->bias > (1 << f->e)) return overflow_pattern(f, negative);
    int min_normal = 1 - f->bias;
    bool subnormal = unbiased < min_normal;
    double q = ldexp(a, f->m - (subnormal ? min_normal : unbiased));
    double whole = floor(q);
    uint32_t n = (uint32_t)whole;
    double rest = q - whole;
    if (rest > 0.5 || (rest == 0.5 && (n & 1))) n++;
    magnitude = subnormal ? n : ((uint32_t)(unbiased + f->bias - 1) << f->m) + n;
    if (magnitude > max_pattern(f)) return overflow_pattern(f, negative);
    return negative ? neg_of(f, magnitude) : magnitude;
}

static double f64_of(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Every f16 and bf16 value (all 2^16 patterns of each, as doubles), the doubles and
 * floats just beside each, and millions of random f32 and f64 bit patterns: the encoder
 * gives the same bits as before, for every format. */
static void test_encoder_bit_exact_with_libm_version(void) {
    int failures = 0;
    for (int i = 0; i < NFORMATS; i++) {
        const fmt *f = &kFormats[i];
        for (uint32_t n = 0; n < 3 * 65536 * 2 + 2000000 && failures < 10; n++) {
            double x;
            uint32_t k = n % (3 * 65536 * 2);
            if (n < 3 * 65536 * 2) {
                uint32_t p = k / 6;
                float base =
                    (k / 3) % 2 ? cxla_bf16_to_f32((uint16_t)p) : cxla_f16_to_f32((uint16_t)p);
                x = base;
                if (k % 3 == 1) x = nextafter(x, INFINITY);
                if (k % 3 == 2) x = (double)nextafterf(base, -INFINITY);
            } else if (n % 2) {
                x = (double)float_of((uint32_t)(rng_next() >> 32));
            } else {
                x = f64_of(rng_next());
            }
            uint32_t got = cxla_float_from_double(f->type, x), want = old_encode(f, x);
            if (got != want) {
                failures++;
                test_fail(__FILE__, __LINE__, "%s %a: 0x%x vs 0x%x", f->name, x, got, want);
            }
        }
    }
}

/* Spot values from ml_dtypes' tests. */
static void test_ml_dtypes_spot_values(void) {
    /* ml_dtypes/tests/float8_test.cc, *Test.NumericLimits (max, min, denorm_min). */
    CHECK(cxla_float_to_double(CXLA_F8E3M4, 0x6f) == 15.5);
    CHECK(cxla_float_to_double(CXLA_F8E3M4, 0x10) == 0.25);
    CHECK(cxla_float_to_double(CXLA_F8E3M4, 0x01) == 0x1p-6);
    CHECK(cxla_float_to_double(CXLA_F8E4M3, 0x77) == 240);
    CHECK(cxla_float_to_double(CXLA_F8E4M3, 0x01) == 0x1p-9);
    CHECK(cxla_float_to_double(CXLA_F8E4M3FN, 0x7e) == 448);
    CHECK(cxla_float_to_double(CXLA_F8E4M3FN, 0xfe) == -448);
    CHECK(cxla_float_to_double(CXLA_F8E4M3FN, 0x08) == 0x1p-6);
    CHECK(cxla_float_to_double(CXLA_F8E4M3B11FNUZ, 0x7f) == 30);
    CHECK(cxla_float_to_double(CXLA_F8E4M3B11FNUZ, 0x08) == 0x1p-10);
    CHECK(cxla_float_to_double(CXLA_F8E4M3B11FNUZ, 0x01) == 0x1p-13);
    CHECK(cxla_float_to_double(CXLA_F8E4M3FNUZ, 0x7f) == 240);
    CHECK(cxla_float_to_double(CXLA_F8E4M3FNUZ, 0xff) == -240);
    CHECK(cxla_float_to_double(CXLA_F8E4M3FNUZ, 0x08) == 0x1p-7);
    CHECK(cxla_float_to_double(CXLA_F8E4M3FNUZ, 0x01) == 0x1p-10);
    CHECK(cxla_float_to_double(CXLA_F8E5M2, 0x7b) == 57344);
    CHECK(cxla_float_to_double(CXLA_F8E5M2, 0x01) == 0x1p-16);
    CHECK(cxla_float_to_double(CXLA_F8E5M2FNUZ, 0x7f) == 57344);
    CHECK(cxla_float_to_double(CXLA_F8E5M2FNUZ, 0x04) == 0x1p-15);
    CHECK(cxla_float_to_double(CXLA_F8E5M2FNUZ, 0x01) == 0x1p-17);
    CHECK(cxla_float_to_double(CXLA_F8E8M0FNU, 0x00) == 0x1p-127);
    CHECK(cxla_float_to_double(CXLA_F8E8M0FNU, 0xfe) == 0x1p127);
    /* ml_dtypes/tests/mxfloat_test.cc, Float4e2m1Test.NumericLimits and NoInfinity. */
    CHECK(cxla_float_to_double(CXLA_F4E2M1FN, 0x7) == 6.0);
    CHECK(cxla_float_to_double(CXLA_F4E2M1FN, 0xf) == -6.0);
    CHECK(cxla_float_to_double(CXLA_F4E2M1FN, 0x2) == 1.0);
    CHECK(cxla_float_to_double(CXLA_F4E2M1FN, 0x1) == 0.5);
    CHECK_EQ_U64(cxla_float_from_float(CXLA_F4E2M1FN, INFINITY), 0x7);
    CHECK_EQ_U64(cxla_float_from_float(CXLA_F4E2M1FN, -INFINITY), 0xf);
    /* float8_test.cc, ConvertFromWithTruncation: 2^128 gives infinity().rep(), and the
     * float just below 2 (0x3FFFFFFF) rounds to 2. */
    static const struct {
        cxla_type t;
        uint32_t inf_rep;
    } inf_reps[] = {{CXLA_F8E3M4, 0x70},        {CXLA_F8E4M3, 0x78},   {CXLA_F8E4M3FN, 0x7f},
                    {CXLA_F8E4M3B11FNUZ, 0x80}, {CXLA_F8E5M2, 0x7c},   {CXLA_F8E5M2FNUZ, 0x80},
                    {CXLA_F8E4M3FNUZ, 0x80},    {CXLA_F8E8M0FNU, 0xff}};
    for (size_t i = 0; i < sizeof(inf_reps) / sizeof(inf_reps[0]); i++) {
        cxla_type t = inf_reps[i].t;
        CHECK_EQ_U64(cxla_float_from_double(t, 0x1p128), inf_reps[i].inf_rep);
        uint32_t two = cxla_float_from_float(t, float_of(0x3fffffff));
        CHECK_MSG(cxla_float_to_double(t, two) == 2.0, "%s less_than_two", cxla_type_name(t));
    }
    /* float8_test.cc, Float8E*Test.SmallCastToDenormal. */
    CHECK(cxla_float_to_double(CXLA_F8E3M4, cxla_float_from_float(CXLA_F8E3M4, 0x0.8Ap-2f)) ==
          0x0.9p-2);
    CHECK(cxla_float_to_double(CXLA_F8E4M3, cxla_float_from_float(CXLA_F8E4M3, 0x0.94p-6f)) ==
          0x0.Ap-6);
    CHECK(cxla_float_to_double(CXLA_F8E5M2, cxla_float_from_float(CXLA_F8E5M2, 0x0.A8p-14f)) ==
          0x0.Cp-14);
    /* float8_test.cc, Half_To_Float8E3m4 / E4m3 / E5m2: NaN and -NaN, inf and -inf. */
    CHECK_EQ_U64(cxla_float_from_float(CXLA_F8E3M4, NAN), 0x78);
    CHECK_EQ_U64(cxla_float_from_float(CXLA_F8E3M4, copysignf(NAN, -1.0f)), 0xf8);
    CHECK_EQ_U64(cxla_float_from_float(CXLA_F8E4M3, NAN), 0x7c);
    CHECK_EQ_U64(cxla_float_from_float(CXLA_F8E5M2, copysignf(NAN, -1.0f)), 0xfe);
    CHECK_EQ_U64(cxla_float_from_float(CXLA_F8E3M4, -INFINITY), 0xf0);
    /* float8_test.cc, Float8Test.DoubleRound: 1 + 2^-digits + 2^-24 from double must round
     * up to 1 + epsilon (rounding through float first would give 1). */
    for (int i = 0; i < NFORMATS; i++) {
        const fmt *f = &kFormats[i];
        double x = 1.0 + ldexp(1.0, -(f->m + 1)) + 0x1p-24;
        double eps = f->k == K_FNU ? 1.0 : ldexp(1.0, -f->m);
        if (f->type == CXLA_F16 || f->type == CXLA_BF16)
            x = 1.0 + ldexp(1.0, -(f->m + 1)) + 0x1p-40;
        CHECK_MSG(cxla_float_to_double(f->type, cxla_float_from_double(f->type, x)) == 1.0 + eps,
                  "%s double round", f->name);
    }
}

TEST_MAIN(TEST(test_type_table), TEST(test_decode_and_round_trip_all), TEST(test_ties_to_even),
          TEST(test_overflow), TEST(test_subnormals), TEST(test_special_inputs), TEST(test_e8m0),
          TEST(test_random_against_brute_force), TEST(test_f16_bf16_known),
          TEST(test_fast_paths_agree), TEST(test_ml_dtypes_spot_values),
          TEST(test_encoder_bit_exact_with_libm_version))
