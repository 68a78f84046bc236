/* Small float conversions: f16, bf16, the f8 family and f4e2m1fn, bit for bit as
 * ml_dtypes converts them (ml_dtypes/include/float8.h ConvertImpl, mxfloat.h, and Eigen's
 * half and bfloat16 for f16/bf16). docs/floats.md lists the rules.
 *
 * The generic path reads the format from the element type table (exponent bits,
 * mantissa bits, bias, cxla_float_kind) and rounds once, directly from the double, to
 * nearest with ties to even. f32 is the identity on its bit pattern; f64 does not fit
 * the uint32_t bits and is handled natively by callers: these functions give 0 (from)
 * or NaN (to) for it and for every non-float type. */
#include <math.h>
#include <string.h>

#include "base/base.h"
#include "base/floats.h"
#include "cxla/types.h"

static uint32_t f32_bits(float value) {
    uint32_t u;
    memcpy(&u, &value, sizeof u);
    return u;
}

static float f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- The generic encoder -------------------------------------------------------- */

/* Magnitude (sign cleared) of the NaN ml_dtypes produces for a NaN input: the quiet NaN
 * for IEEE formats (all-ones exponent, top mantissa bit), S.1111.111 for fn, the sign
 * bit alone for fnuz (its only NaN) and for f4e2m1fn (whose numeric_limits::quiet_NaN is
 * 0b1000, i.e. -0: it has no NaN), 0xff for e8m0fnu. */
static uint32_t nan_magnitude(const cxla_type_info *info) {
    int e = info->exponent_bits, m = info->mantissa_bits;
    switch (info->float_kind) {
    case CXLA_FLOAT_IEEE: return (((1u << e) - 1) << m) | (1u << (m - 1));
    case CXLA_FLOAT_FN: return (1u << (e + m)) - 1;
    case CXLA_FLOAT_FNUZ:
    case CXLA_FLOAT_FN_NO_NAN: return 1u << (e + m);
    case CXLA_FLOAT_FNU: return 0xff;
    }
    return 0;
}

/* Largest finite magnitude. */
static uint32_t max_finite(const cxla_type_info *info) {
    int e = info->exponent_bits, m = info->mantissa_bits;
    switch (info->float_kind) {
    case CXLA_FLOAT_IEEE: return (((1u << e) - 1) << m) - 1;
    case CXLA_FLOAT_FN: return (1u << (e + m)) - 2;
    case CXLA_FLOAT_FNUZ:
    case CXLA_FLOAT_FN_NO_NAN: return (1u << (e + m)) - 1;
    case CXLA_FLOAT_FNU: return 0xfe;
    }
    return 0;
}

/* What infinity, and a finite value too large, become (ml_dtypes' numeric_limits
 * infinity()): inf for IEEE, the NaN for fn/fnuz/fnu, the largest finite for f4e2m1fn. */
static uint32_t overflow_magnitude(const cxla_type_info *info) {
    switch (info->float_kind) {
    case CXLA_FLOAT_IEEE: return ((1u << info->exponent_bits) - 1) << info->mantissa_bits;
    case CXLA_FLOAT_FN_NO_NAN: return max_finite(info);
    case CXLA_FLOAT_FN:
    case CXLA_FLOAT_FNUZ:
    case CXLA_FLOAT_FNU: return nan_magnitude(info);
    }
    return 0;
}

/* ml_dtypes' unary minus on a result: flips the sign bit, except that fnuz has no -0
 * (and its NaN, the sign bit alone, stays itself). */
static uint32_t apply_sign(const cxla_type_info *info, uint32_t bits, bool negative) {
    if (!negative) return bits;
    uint32_t sign = 1u << (info->exponent_bits + info->mantissa_bits);
    if (info->float_kind == CXLA_FLOAT_FNUZ && (bits & (sign - 1)) == 0) return bits;
    return bits ^ sign;
}

/* The fields of a double: the biased exponent (0 for zero and subnormals, 0x7ff for inf
 * and NaN) and the 52 stored mantissa bits. Everything below works on these integers, so
 * no conversion calls libm (frexp, ldexp, floor): that is what makes them run at memory
 * speed, and the results are those of the exact arithmetic they replace. */
static uint64_t f64_bits(double value) {
    uint64_t u;
    memcpy(&u, &value, sizeof u);
    return u;
}

static double f64_from_bits(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* 2^k for k in the normal range of a double. */
static double pow2(int k) {
    return f64_from_bits((uint64_t)(k + 1023) << 52);
}

/* e8m0fnu, a positive finite value with biased double exponent |dexp| and mantissa |mant|:
 * ml_dtypes rounds the significand linearly between 2^k and 2^(k+1), a tie going up;
 * below 2^-126 it rounds as if 0x00 were a subnormal zero, so (2^-127, 2^-126) becomes
 * 0x01 and everything up to 2^-127 becomes 0x00. A subnormal double is far below. */
static uint32_t encode_e8m0(int dexp, uint64_t mant) {
    if (dexp == 0) return 0x00;
    int unbiased = dexp - 1023; /* value = (1 + mant / 2^52) * 2^unbiased */
    if (unbiased < -127) return 0x00;
    if (unbiased == -127) return mant != 0 ? 0x01 : 0x00;
    int64_t bits = (int64_t)unbiased + 127 + ((mant >> 51) & 1); /* frac >= 0.5 rounds up */
    return bits > 0xfe ? 0xff : (uint32_t)bits;
}

static uint32_t encode(const cxla_type_info *info, double value) {
    uint64_t u = f64_bits(value);
    bool negative = (u >> 63) != 0;
    int dexp = (int)((u >> 52) & 0x7ff);
    uint64_t mant = u & 0xfffffffffffffull;
    bool is_nan = dexp == 0x7ff && mant != 0, is_inf = dexp == 0x7ff && mant == 0;
    bool is_zero = dexp == 0 && mant == 0;
    if (info->float_kind == CXLA_FLOAT_FNU) {
        /* Unsigned with no zero: NaN, zero, negatives and infinities are all NaN. */
        if (is_nan || negative || is_zero || is_inf) return 0xff;
        return encode_e8m0(dexp, mant);
    }
    if (is_nan) return apply_sign(info, nan_magnitude(info), negative);
    if (is_inf) return apply_sign(info, overflow_magnitude(info), negative);
    /* A subnormal double (below 2^-1022) is below half the smallest subnormal of every
     * format here: it rounds to zero like zero itself. */
    if (dexp == 0) return apply_sign(info, 0, negative);

    int e = info->exponent_bits, m = info->mantissa_bits, bias = info->exponent_bias;
    int unbiased = dexp - 1023; /* |value| in [2^unbiased, 2^(unbiased+1)) */
    uint32_t magnitude;
    if (unbiased + bias > (1 << e)) {
        magnitude = overflow_magnitude(info); /* far beyond the largest exponent */
    } else {
        int min_normal = 1 - bias;
        bool subnormal = unbiased < min_normal;
        /* The significand (53 bits with the hidden one) in units of the result's last
         * place: shifted right by |shift| bits, then rounded to nearest, ties to even. */
        uint64_t sig = mant | ((uint64_t)1 << 52);
        int shift = 52 - m + (subnormal ? min_normal - unbiased : 0);
        uint32_t n;
        if (shift >= 64) {
            n = 0; /* below a quarter of the smallest subnormal */
        } else {
            uint64_t rest = sig & (((uint64_t)1 << shift) - 1), half = (uint64_t)1 << (shift - 1);
            n = (uint32_t)(sig >> shift);
            if (rest > half || (rest == half && (n & 1))) n++;
        }
        if (subnormal) {
            magnitude = n; /* n == 2^m is the smallest normal, as it should be */
        } else {
            /* n in [2^m, 2^(m+1)]: its leading one adds 1 to the exponent field, and a
             * carry out of rounding moves to the next binade. */
            magnitude = ((uint32_t)(unbiased + bias - 1) << m) + n;
        }
        if (magnitude > max_finite(info)) magnitude = overflow_magnitude(info);
    }
    return apply_sign(info, magnitude, negative);
}

/* ---- The generic decoder -------------------------------------------------------- */

/* The f8 types and f4e2m1fn (f16 and bf16 take the fast paths, which keep a NaN's
 * payload as Eigen does). */
static float decode(const cxla_type_info *info, uint32_t bits) {
    int e = info->exponent_bits, m = info->mantissa_bits, bias = info->exponent_bias;
    if (info->float_kind == CXLA_FLOAT_FNU) {
        bits &= 0xff;
        if (bits == 0xff) return NAN;
        return (float)pow2((int)bits - bias); /* 2^-127 is a float subnormal, exactly */
    }
    uint32_t sign = 1u << (e + m);
    bits &= (sign << 1) - 1;
    bool negative = (bits & sign) != 0;
    uint32_t magnitude = bits & (sign - 1);
    uint32_t exp_field = magnitude >> m, frac = magnitude & ((1u << m) - 1);
    uint32_t all_ones = (1u << e) - 1;
    bool is_nan = false;
    switch (info->float_kind) {
    case CXLA_FLOAT_IEEE:
        if (exp_field == all_ones) {
            if (frac == 0) return negative ? -INFINITY : INFINITY;
            is_nan = true; /* the quiet NaN with the sign; the payload is dropped */
        }
        break;
    case CXLA_FLOAT_FN: is_nan = magnitude == (1u << (e + m)) - 1; break;
    case CXLA_FLOAT_FNUZ: is_nan = bits == sign; break; /* the sign bit alone: -NaN */
    case CXLA_FLOAT_FN_NO_NAN:
    case CXLA_FLOAT_FNU: break;
    }
    if (is_nan) return copysignf(NAN, negative ? -1.0f : 1.0f);
    /* An integer of at most 24 bits times a power of two: exact in a double. */
    double value = exp_field == 0 ? (double)frac * pow2(1 - bias - m)
                                  : (double)(frac | (1u << m)) * pow2((int)exp_field - bias - m);
    return (float)(negative ? -value : value); /* exact: every small value fits a float */
}

static bool is_small(const cxla_type_info *info, cxla_type type) {
    return info->klass == CXLA_CLASS_FLOAT && type != CXLA_F32 && type != CXLA_F64;
}

/* ---- Public entry points ---------------------------------------------------------- */

uint32_t cxla_float_from_double(cxla_type type, double value) {
    if (type == CXLA_F32) return f32_bits((float)value);
    const cxla_type_info *info = cxla_type_get_info(type);
    if (!is_small(info, type)) return 0;
    return encode(info, value);
}

uint32_t cxla_float_from_float(cxla_type type, float value) {
    switch (type) {
    case CXLA_F32: return f32_bits(value);
    case CXLA_F16: return cxla_f32_to_f16(value);
    case CXLA_BF16: return cxla_f32_to_bf16(value);
    default: return cxla_float_from_double(type, (double)value); /* exact widening */
    }
}

float cxla_float_to_float(cxla_type type, uint32_t bits) {
    switch (type) {
    case CXLA_F32: return f32_from_bits(bits);
    case CXLA_F16: return cxla_f16_to_f32((uint16_t)bits);
    case CXLA_BF16: return cxla_bf16_to_f32((uint16_t)bits);
    default: break;
    }
    const cxla_type_info *info = cxla_type_get_info(type);
    if (!is_small(info, type)) return NAN;
    return decode(info, bits);
}

double cxla_float_to_double(cxla_type type, uint32_t bits) {
    return (double)cxla_float_to_float(type, bits); /* every value is a float exactly */
}

/* ---- Fast paths ----------------------------------------------------------------- */

uint16_t cxla_f32_to_f16(float value) {
    uint32_t u = f32_bits(value);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00;  /* NaN: quiet, sign kept, payload dropped */
    if (a >= 0x477ff000u) return sign | 0x7c00; /* >= 65520 (65504 + half ulp, a tie to inf) */
    if (a >= 0x38800000u) {                     /* >= 2^-14: a normal half */
        uint32_t rounded = a + 0xfffu + ((a >> 13) & 1);
        return sign | (uint16_t)((rounded - 0x38000000u) >> 13); /* rebias 127 -> 15 */
    }
    if (a <= 0x33000000u) return sign; /* <= 2^-25: half the smallest subnormal rounds to 0 */
    /* Subnormal half: the value in units of 2^-24 is mant * 2^(exp - 126). */
    uint32_t exponent = a >> 23, mant = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exponent; /* 14..24 */
    uint32_t n = mant >> shift, rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (n & 1))) n++;
    return sign | (uint16_t)n;
}

float cxla_f16_to_f32(uint16_t bits) {
    uint32_t sign = (uint32_t)(bits & 0x8000) << 16;
    uint32_t exponent = (bits >> 10) & 0x1f, mant = bits & 0x3ffu;
    if (exponent == 0x1f) return f32_from_bits(sign | 0x7f800000u | (mant << 13));
    if (exponent != 0) return f32_from_bits(sign | ((exponent + 112) << 23) | (mant << 13));
    float magnitude = (float)mant * 0x1p-24f; /* subnormal or zero, exact */
    return f32_from_bits(sign | f32_bits(magnitude));
}

uint16_t cxla_f32_to_bf16(float value) {
    uint32_t u = f32_bits(value);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(((u >> 16) & 0x8000) | 0x7fc0);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

float cxla_bf16_to_f32(uint16_t bits) {
    return f32_from_bits((uint32_t)bits << 16);
}

/* ---- Bulk conversions (floats.h) ------------------------------------------------ */

/* Arrays go through blocks of a fixed number of elements in integer and float lanes:
 * loops with a constant trip count, no calls and no branches (selects only) are what gcc
 * -O2 vectorizes; a short tail goes through the same code on a zero-padded copy. Every
 * formula below is the generic encoder's or decoder's on whole lanes, so the results are
 * theirs bit for bit (tests/base/test_floats.c checks every f16/bf16/f8 pattern and
 * millions of f32 and f64 values). */
enum { BLOCK = 64 };

/* |c| ? |a| : |b| as bit operations: the compiler keeps it a select (a blend), where a
 * conditional expression next to float arithmetic can become a branch that stops
 * vectorization. */
static uint32_t select32(bool c, uint32_t a, uint32_t b) {
    uint32_t m = 0u - (uint32_t)c;
    return (a & m) | (b & ~m);
}

static uint64_t select64(bool c, uint64_t a, uint64_t b) {
    uint64_t m = 0 - (uint64_t)c;
    return (a & m) | (b & ~m);
}

/* A small format from a wider one (f32 or f64): round to nearest even by integer
 * addition on the magnitude's bits where the result is normal; where it is subnormal,
 * add |magic|, whose last place is the format's subnormal step, so that the hardware's
 * rounding (to nearest even) leaves the result's integer in the low bits. */
typedef struct encoder {
    int shift;               /* source mantissa bits - target mantissa bits */
    uint64_t round;          /* 2^(shift - 1) - 1: half the target's last place, less one */
    uint64_t rebias;         /* (source bias - target bias) << source mantissa bits */
    uint64_t min_normal;     /* the source bits of the target's smallest normal value */
    double magic;            /* 2^(1 - bias - m + source mantissa bits) */
    uint32_t max_finite;     /* larger magnitudes overflow */
    uint32_t overflow, nan;  /* magnitudes of overflow and of NaN */
    uint32_t sign;           /* the target's sign bit */
    uint32_t zero_keeps_neg; /* all ones; 0 for fnuz, where a zero magnitude takes no sign */
} encoder;

static encoder encoder_for(const cxla_type_info *info, int src_mant, int src_bias) {
    int m = info->mantissa_bits, bias = info->exponent_bias;
    encoder e;
    e.shift = src_mant - m;
    e.round = ((uint64_t)1 << (e.shift - 1)) - 1;
    e.rebias = (uint64_t)(src_bias - bias) << src_mant;
    e.min_normal = (uint64_t)(1 - bias + src_bias) << src_mant;
    e.magic = pow2(1 - bias - m + src_mant);
    e.max_finite = max_finite(info);
    e.overflow = overflow_magnitude(info);
    e.nan = nan_magnitude(info);
    e.sign = 1u << (info->exponent_bits + m);
    e.zero_keeps_neg = info->float_kind == CXLA_FLOAT_FNUZ ? 0 : ~0u;
    return e;
}

/* f32 bits -> the format's bits. */
static void encode_f32_block(const encoder *e, const uint32_t *restrict in,
                             uint32_t *restrict out) {
    const int shift = e->shift;
    const uint32_t round = (uint32_t)e->round, rebias = (uint32_t)e->rebias;
    const uint32_t min_normal = (uint32_t)e->min_normal;
    const float magic = (float)e->magic;
    const uint32_t magic_bits = f32_bits(magic), max = e->max_finite, overflow = e->overflow;
    const uint32_t nan = e->nan, sign = e->sign, zero_keeps_neg = e->zero_keeps_neg;
    for (int i = 0; i < BLOCK; i++) {
        uint32_t u = in[i], a = u & 0x7fffffffu;
        /* Wraps for lanes below min_normal, which take the other value. */
        uint32_t normal = (a + round + ((a >> shift) & 1) - rebias) >> shift;
        uint32_t subnormal = f32_bits(f32_from_bits(a) + magic) - magic_bits;
        uint32_t mag = select32(a < min_normal, subnormal, normal);
        mag = select32(mag > max, overflow, mag); /* infinity too */
        mag = select32(a > 0x7f800000u, nan, mag);
        uint32_t neg = select32((mag & (sign - 1)) != 0, sign, sign & zero_keeps_neg);
        out[i] = mag ^ (neg & (0u - (u >> 31)));
    }
}

/* f64 bits -> the format's bits: the same on 64-bit lanes (one rounding, from the
 * double). */
static void encode_f64_block(const encoder *e, const uint64_t *restrict in,
                             uint32_t *restrict out) {
    const int shift = e->shift;
    const uint64_t round = e->round, rebias = e->rebias, min_normal = e->min_normal;
    const double magic = e->magic;
    const uint64_t magic_bits = f64_bits(magic), max = e->max_finite, overflow = e->overflow;
    const uint64_t nan = e->nan, sign = e->sign, zero_keeps_neg = e->zero_keeps_neg;
    for (int i = 0; i < BLOCK; i++) {
        uint64_t u = in[i], a = u & 0x7fffffffffffffffull;
        uint64_t normal = (a + round + ((a >> shift) & 1) - rebias) >> shift;
        uint64_t subnormal = f64_bits(f64_from_bits(a) + magic) - magic_bits;
        uint64_t mag = select64(a < min_normal, subnormal, normal);
        mag = select64(mag > max, overflow, mag);
        mag = select64(a > 0x7ff0000000000000ull, nan, mag);
        uint64_t neg = select64((mag & (sign - 1)) != 0, sign, sign & zero_keeps_neg);
        out[i] = (uint32_t)(mag ^ (neg & (0 - (u >> 63))));
    }
}

/* f32 bits -> bf16 (cxla_f32_to_bf16). */
static void bf16_block(const uint32_t *restrict in, uint32_t *restrict out) {
    for (int i = 0; i < BLOCK; i++) {
        uint32_t u = in[i];
        uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1)) >> 16;
        uint32_t nan = ((u >> 16) & 0x8000) | 0x7fc0;
        out[i] = select32((u & 0x7fffffffu) > 0x7f800000u, nan, rounded);
    }
}

/* The format's bits -> f32 bits (the generic decoder; for f16, cxla_f16_to_f32, which
 * keeps a NaN's payload). */
typedef struct decoder {
    uint32_t mask;         /* the format's bits (f4, f6: the low bits of a byte) */
    uint32_t sign;         /* its sign bit */
    int shift;             /* 23 - m */
    uint32_t rebias;       /* (127 - bias) << 23 */
    uint32_t min_normal;   /* 2^m: smaller magnitudes have a zero exponent field */
    float step;            /* 2^(1 - bias - m), the subnormal step */
    uint32_t special_from; /* magnitudes from here are infinity or NaN; none: UINT32_MAX */
    uint32_t inf;          /* the infinity's magnitude; none: UINT32_MAX */
    uint32_t nan_alone;    /* fnuz: the bits of its NaN (the sign bit alone); else none */
    bool keep_payload;     /* f16 */
} decoder;

static decoder decoder_for(const cxla_type_info *info, cxla_type type) {
    int e = info->exponent_bits, m = info->mantissa_bits, bias = info->exponent_bias;
    decoder d;
    d.sign = 1u << (e + m);
    d.mask = (d.sign << 1) - 1;
    d.shift = 23 - m;
    d.rebias = (uint32_t)(127 - bias) << 23;
    d.min_normal = 1u << m;
    d.step = (float)pow2(1 - bias - m);
    d.special_from = d.inf = d.nan_alone = UINT32_MAX;
    d.keep_payload = type == CXLA_F16;
    switch (info->float_kind) {
    case CXLA_FLOAT_IEEE: d.special_from = d.inf = ((1u << e) - 1) << m; break;
    case CXLA_FLOAT_FN: d.special_from = d.sign - 1; break;
    case CXLA_FLOAT_FNUZ: d.nan_alone = d.sign; break;
    case CXLA_FLOAT_FN_NO_NAN:
    case CXLA_FLOAT_FNU: break;
    }
    return d;
}

static void decode_block(const decoder *d, const uint32_t *restrict in, uint32_t *restrict out) {
    const uint32_t mask = d->mask, sign = d->sign, rebias = d->rebias;
    const uint32_t min_normal = d->min_normal, special_from = d->special_from, inf = d->inf;
    const uint32_t nan_alone = d->nan_alone, payload = d->keep_payload ? ~0u : 0;
    const int shift = d->shift;
    const float step = d->step;
    for (int i = 0; i < BLOCK; i++) {
        uint32_t x = in[i] & mask, mag = x & (sign - 1);
        uint32_t normal = (mag << shift) + rebias;
        uint32_t subnormal = f32_bits((float)(int32_t)mag * step); /* exact */
        uint32_t r = select32(mag < min_normal, subnormal, normal);
        /* f16 keeps the NaN's bits (infinity's are zero); the f8 types give the quiet NaN. */
        uint32_t special = select32(mag == inf, 0x7f800000u, 0x7fc00000u);
        special = (special & ~payload) | ((0x7f800000u | (mag << shift)) & payload);
        r = select32(mag >= special_from, special, r);
        r = select32(x == nan_alone, 0x7fc00000u, r);
        out[i] = r | select32((x & sign) != 0, 0x80000000u, 0);
    }
}

static bool bulk_type(cxla_type type) {
    const cxla_type_info *info = cxla_type_get_info(type);
    return info && info->klass == CXLA_CLASS_FLOAT && info->float_kind != CXLA_FLOAT_FNU;
}

bool cxla_floats_can_convert(cxla_type from, cxla_type to) {
    return bulk_type(from) && bulk_type(to);
}

/* Blocks in and out of storage: |count| <= BLOCK elements of |size| bytes; the lanes
 * past |count| are zero. */
static void load_block(size_t size, const unsigned char *src, uint32_t *restrict w, int count) {
    if (count < BLOCK) memset(w, 0, sizeof(uint32_t) * BLOCK);
    if (size == 4) {
        memcpy(w, src, (size_t)count * 4);
    } else if (size == 2) {
        uint16_t h[BLOCK];
        if (count < BLOCK) memset(h, 0, sizeof h);
        memcpy(h, src, (size_t)count * 2);
        for (int i = 0; i < BLOCK; i++) w[i] = h[i];
    } else {
        uint8_t b[BLOCK];
        if (count < BLOCK) memset(b, 0, sizeof b);
        memcpy(b, src, (size_t)count);
        for (int i = 0; i < BLOCK; i++) w[i] = b[i];
    }
}

static void store_block(size_t size, const uint32_t *restrict w, unsigned char *dst, int count) {
    if (size == 4) {
        memcpy(dst, w, (size_t)count * 4);
    } else if (size == 2) {
        uint16_t h[BLOCK];
        for (int i = 0; i < BLOCK; i++) h[i] = (uint16_t)w[i];
        memcpy(dst, h, (size_t)count * 2);
    } else {
        uint8_t b[BLOCK];
        for (int i = 0; i < BLOCK; i++) b[i] = (uint8_t)w[i];
        memcpy(dst, b, (size_t)count);
    }
}

/* The f32 -> |to| half of a conversion; |to| is not f64. */
static void from_f32_block(cxla_type to, const encoder *e, const uint32_t *restrict w,
                           uint32_t *restrict out) {
    if (to == CXLA_F32)
        memcpy(out, w, sizeof(uint32_t) * BLOCK);
    else if (to == CXLA_BF16)
        bf16_block(w, out);
    else
        encode_f32_block(e, w, out);
}

bool cxla_floats_convert(cxla_type from, const void *src, cxla_type to, void *dst, int64_t n) {
    if (!cxla_floats_can_convert(from, to)) return false;
    size_t fs = cxla_type_storage(from), ts = cxla_type_storage(to);
    if (from == to) {
        if (n > 0) memcpy(dst, src, (size_t)n * fs);
        return true;
    }
    const cxla_type_info *from_info = cxla_type_get_info(from), *to_info = cxla_type_get_info(to);
    encoder e = {0};
    if (to != CXLA_F32 && to != CXLA_F64)
        e = from == CXLA_F64 ? encoder_for(to_info, 52, 1023) : encoder_for(to_info, 23, 127);
    decoder d = {0};
    if (from != CXLA_F32 && from != CXLA_F64 && from != CXLA_BF16) d = decoder_for(from_info, from);
    const unsigned char *s = src;
    unsigned char *o = dst;
    for (int64_t off = 0; off < n; off += BLOCK) {
        int count = n - off < BLOCK ? (int)(n - off) : BLOCK;
        const unsigned char *sp = s + (size_t)off * fs;
        unsigned char *op = o + (size_t)off * ts;
        uint32_t w[BLOCK], out[BLOCK];
        if (from == CXLA_F64) {
            double x[BLOCK];
            if (count < BLOCK) memset(x, 0, sizeof x);
            memcpy(x, sp, (size_t)count * 8);
            if (to == CXLA_F32) {
                float f[BLOCK];
                for (int i = 0; i < BLOCK; i++) f[i] = (float)x[i];
                memcpy(op, f, (size_t)count * 4);
            } else {
                uint64_t u[BLOCK];
                memcpy(u, x, sizeof u);
                encode_f64_block(&e, u, out);
                store_block(ts, out, op, count);
            }
            continue;
        }
        /* Everything else goes through f32 exactly: every value of these formats is a
         * float, and rounding from it is rounding from the same double. */
        load_block(fs, sp, w, count);
        if (from == CXLA_BF16) {
            for (int i = 0; i < BLOCK; i++) w[i] <<= 16;
        } else if (from != CXLA_F32) {
            decode_block(&d, w, out);
            memcpy(w, out, sizeof w);
        }
        if (to == CXLA_F64) {
            float f[BLOCK];
            double x[BLOCK];
            memcpy(f, w, sizeof f);
            for (int i = 0; i < BLOCK; i++) x[i] = f[i];
            memcpy(op, x, (size_t)count * 8);
        } else {
            from_f32_block(to, &e, w, out);
            store_block(ts, out, op, count);
        }
    }
    return true;
}
