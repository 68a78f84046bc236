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
