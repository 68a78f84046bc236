/* Loading, storing and converting single elements of every element type. The
 * conversion rules are written in docs/semantics.md. */
#include <math.h>
#include <string.h>

#include "literal/literal_internal.h"

/* Wraps |v| to |bits| and sign-extends it back to 64 bits. */
static int64_t wrap_signed(uint64_t v, int bits) {
    if (bits >= 64) return (int64_t)v;
    uint64_t mask = ((uint64_t)1 << bits) - 1, sign = (uint64_t)1 << (bits - 1);
    v &= mask;
    return (int64_t)((v ^ sign) - sign);
}

static uint64_t wrap_unsigned(uint64_t v, int bits) {
    return bits >= 64 ? v : v & (((uint64_t)1 << bits) - 1);
}

/* The raw integer bits of an integer or pred element, sign-extended for signed types. */
static uint64_t load_int_bits(cxla_type type, const void *p) {
    switch (cxla_type_storage(type)) {
    case 1:
        if (cxla_type_is_signed(type)) return (uint64_t)(int64_t) * (const int8_t *)p;
        return *(const uint8_t *)p;
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return cxla_type_is_signed(type) ? (uint64_t)(int64_t)(int16_t)v : v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return cxla_type_is_signed(type) ? (uint64_t)(int64_t)(int32_t)v : v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

static void store_int_bits(cxla_type type, void *p, uint64_t v) {
    int bits = cxla_type_bits(type);
    if (type == CXLA_PRED) {
        *(uint8_t *)p = v != 0;
        return;
    }
    uint64_t w =
        cxla_type_is_signed(type) ? (uint64_t)wrap_signed(v, bits) : wrap_unsigned(v, bits);
    switch (cxla_type_storage(type)) {
    case 1: *(uint8_t *)p = (uint8_t)w; break;
    case 2: {
        uint16_t x = (uint16_t)w;
        memcpy(p, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)w;
        memcpy(p, &x, 4);
        break;
    }
    default: memcpy(p, &w, 8); break;
    }
}

/* Bits of a small float (f16, bf16, f8, f4) element. */
static uint32_t load_small_float_bits(cxla_type type, const void *p) {
    if (cxla_type_storage(type) == 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    uint8_t b = *(const uint8_t *)p;
    return b & ((1u << cxla_type_bits(type)) - 1); /* f4/f6: the low bits */
}

static void store_small_float_bits(cxla_type type, void *p, uint32_t bits) {
    if (cxla_type_storage(type) == 2) {
        uint16_t v = (uint16_t)bits;
        memcpy(p, &v, 2);
    } else {
        *(uint8_t *)p = (uint8_t)bits;
    }
}

/* Float -> integer: truncate toward zero, saturate at the type's limits, NaN -> 0. */
static uint64_t float_to_int_bits(cxla_type type, double d) {
    if (type == CXLA_PRED) return d != 0; /* NaN is true */
    if (isnan(d)) return 0;
    int bits = cxla_type_bits(type);
    d = trunc(d);
    if (cxla_type_is_signed(type)) {
        double hi = ldexp(1.0, bits - 1); /* 2^(bits-1): first value too large */
        if (d >= hi) return (uint64_t)(bits >= 64 ? INT64_MAX : (int64_t)hi - 1);
        if (d < -hi) return (uint64_t)(bits >= 64 ? INT64_MIN : -(int64_t)hi);
        return (uint64_t)(int64_t)d;
    }
    double hi = ldexp(1.0, bits);
    if (d >= hi) return bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    if (d <= 0) return 0;
    return (uint64_t)d;
}

double cxla_load_f64(cxla_type type, const void *p) {
    switch (cxla_type_class_of(type)) {
    case CXLA_CLASS_PRED: return *(const uint8_t *)p != 0;
    case CXLA_CLASS_SIGNED: return (double)(int64_t)load_int_bits(type, p);
    case CXLA_CLASS_UNSIGNED: return (double)load_int_bits(type, p);
    case CXLA_CLASS_FLOAT:
    case CXLA_CLASS_COMPLEX: /* the real part */
        if (cxla_type_component(type) == CXLA_F32) {
            float f;
            memcpy(&f, p, 4);
            return f;
        }
        if (cxla_type_component(type) == CXLA_F64) {
            double d;
            memcpy(&d, p, 8);
            return d;
        }
        return cxla_float_to_double(type, load_small_float_bits(type, p));
    default: return 0;
    }
}

int64_t cxla_load_s64(cxla_type type, const void *p) {
    if (cxla_type_is_integer(type) || type == CXLA_PRED) return (int64_t)load_int_bits(type, p);
    return (int64_t)float_to_int_bits(CXLA_S64, cxla_load_f64(type, p));
}

uint64_t cxla_load_u64(cxla_type type, const void *p) {
    if (cxla_type_is_integer(type) || type == CXLA_PRED) return load_int_bits(type, p);
    return float_to_int_bits(CXLA_U64, cxla_load_f64(type, p));
}

void cxla_load_c128(cxla_type type, const void *p, double *re, double *im) {
    *re = cxla_load_f64(type, p);
    *im = 0;
    if (type == CXLA_C64) {
        float f;
        memcpy(&f, (const char *)p + 4, 4);
        *im = f;
    } else if (type == CXLA_C128) {
        memcpy(im, (const char *)p + 8, 8);
    }
}

void cxla_store_f64(cxla_type type, void *p, double value) {
    switch (cxla_type_class_of(type)) {
    case CXLA_CLASS_PRED:
    case CXLA_CLASS_SIGNED:
    case CXLA_CLASS_UNSIGNED: store_int_bits(type, p, float_to_int_bits(type, value)); break;
    case CXLA_CLASS_FLOAT:
        if (type == CXLA_F32) {
            float f = (float)value;
            memcpy(p, &f, 4);
        } else if (type == CXLA_F64) {
            memcpy(p, &value, 8);
        } else {
            store_small_float_bits(type, p, cxla_float_from_double(type, value));
        }
        break;
    case CXLA_CLASS_COMPLEX: cxla_store_c128(type, p, value, 0); break;
    default: break;
    }
}

/* Rounds a 64-bit integer magnitude to a double with round-to-odd, so that a second
 * rounding to a narrower float (<= 51 mantissa bits) is correctly rounded. */
static double u64_to_double_odd(uint64_t u) {
    if (u < ((uint64_t)1 << 53)) return (double)u;
    int shift = 64 - __builtin_clzll(u) - 53;
    uint64_t kept = u >> shift;
    if (u & (((uint64_t)1 << shift) - 1)) kept |= 1;
    return ldexp((double)kept, shift);
}

/* Integer -> float of |type|, rounded once to nearest even. */
static void store_int_as_float(cxla_type type, void *p, uint64_t bits, bool is_signed) {
    bool neg = is_signed && (int64_t)bits < 0;
    uint64_t mag = neg ? (uint64_t)0 - bits : bits;
    cxla_type comp = cxla_type_component(type);
    double re;
    if (comp == CXLA_F32) {
        float f = is_signed ? (float)(int64_t)bits : (float)bits;
        if (type == CXLA_F32) {
            memcpy(p, &f, 4);
            return;
        }
        re = f;
    } else if (comp == CXLA_F64) {
        re = is_signed ? (double)(int64_t)bits : (double)bits;
    } else {
        double d = u64_to_double_odd(mag);
        store_small_float_bits(type, p, cxla_float_from_double(type, neg ? -d : d));
        return;
    }
    if (type == CXLA_F64)
        memcpy(p, &re, 8);
    else
        cxla_store_c128(type, p, re, 0);
}

void cxla_store_s64(cxla_type type, void *p, int64_t value) {
    if (cxla_type_is_integer(type) || type == CXLA_PRED)
        store_int_bits(type, p, (uint64_t)value);
    else
        store_int_as_float(type, p, (uint64_t)value, true);
}

void cxla_store_u64(cxla_type type, void *p, uint64_t value) {
    if (cxla_type_is_integer(type) || type == CXLA_PRED)
        store_int_bits(type, p, value);
    else
        store_int_as_float(type, p, value, false);
}

void cxla_store_c128(cxla_type type, void *p, double re, double im) {
    if (type == CXLA_C64) {
        float f[2] = {(float)re, (float)im};
        memcpy(p, f, 8);
    } else if (type == CXLA_C128) {
        double d[2] = {re, im};
        memcpy(p, d, 16);
    } else if (type == CXLA_PRED) {
        *(uint8_t *)p = re != 0 || im != 0;
    } else {
        cxla_store_f64(type, p, re);
    }
}

void cxla_convert_element(cxla_type from, const void *src, cxla_type to, void *dst) {
    cxla_type_class fc = cxla_type_class_of(from);
    if (fc == CXLA_CLASS_PRED || fc == CXLA_CLASS_SIGNED || fc == CXLA_CLASS_UNSIGNED) {
        uint64_t bits = load_int_bits(from, src);
        if (fc == CXLA_CLASS_SIGNED)
            cxla_store_s64(to, dst, (int64_t)bits);
        else
            cxla_store_u64(to, dst, bits);
        return;
    }
    if (fc == CXLA_CLASS_COMPLEX) {
        double re, im;
        cxla_load_c128(from, src, &re, &im);
        cxla_store_c128(to, dst, re, im);
        return;
    }
    if (fc == CXLA_CLASS_FLOAT) {
        if (from == to) {
            memcpy(dst, src, cxla_type_storage(from));
            return;
        }
        if (to == CXLA_F32 && from != CXLA_F64) {
            /* Straight to f32, not through the double, which would quiet a signaling
             * NaN: f16 and bf16 keep their NaN's bits, as Eigen widens them. */
            float f = cxla_float_to_float(from, load_small_float_bits(from, src));
            memcpy(dst, &f, 4);
            return;
        }
        cxla_store_f64(to, dst, cxla_load_f64(from, src));
    }
}
