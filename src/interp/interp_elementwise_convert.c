/* Elementwise kernels that change or reinterpret element types: convert,
 * bitcast-convert, reduce-precision, stochastic-convert, and iota (see
 * interp_elementwise.h). The conversion rules are the literal module's
 * (cxla_convert_element, docs/semantics.md); the loops here are typed fast paths for the
 * common pairs, and fall back to it element by element for the rare ones.
 */
#include <math.h>
#include <string.h>

#include "base/floats.h"
#include "interp/interp_elementwise.h"

#define LOOP(...)                                                                                  \
    do {                                                                                           \
        for (int64_t i = 0; i < n; i++) {                                                          \
            __VA_ARGS__;                                                                           \
        }                                                                                          \
    } while (0)

static int64_t min64(int64_t a, int64_t b) {
    return a < b ? a : b;
}

/* ---- integer and float element loads and stores ----------------------------------- */

/* Integers and pred as 64-bit values (signed ones sign-extended). */
static void load_u64(cxla_type type, const void *src, uint64_t *v, int64_t n) {
    bool s = cxla_type_is_signed(type);
    switch (cxla_type_storage(type)) {
    case 1:
        if (s) {
            const int8_t *p = src;
            LOOP(v[i] = (uint64_t)(int64_t)p[i]);
        } else {
            const uint8_t *p = src;
            LOOP(v[i] = p[i]);
        }
        break;
    case 2:
        if (s) {
            const int16_t *p = src;
            LOOP(v[i] = (uint64_t)(int64_t)p[i]);
        } else {
            const uint16_t *p = src;
            LOOP(v[i] = p[i]);
        }
        break;
    case 4:
        if (s) {
            const int32_t *p = src;
            LOOP(v[i] = (uint64_t)(int64_t)p[i]);
        } else {
            const uint32_t *p = src;
            LOOP(v[i] = p[i]);
        }
        break;
    default: memcpy(v, src, (size_t)n * 8); break;
    }
}

/* Stores 64-bit values into an integer type, wrapping to its width; pred gets v != 0. */
static void store_u64(cxla_type type, const uint64_t *v, void *dst, int64_t n) {
    if (type == CXLA_PRED) {
        uint8_t *p = dst;
        LOOP(p[i] = v[i] != 0);
        return;
    }
    switch (cxla_type_storage(type)) {
    case 1: {
        uint8_t *p = dst;
        LOOP(p[i] = (uint8_t)v[i]);
        interp_ew_int_wrap(type, dst, n);
        break;
    }
    case 2: {
        uint16_t *p = dst;
        LOOP(p[i] = (uint16_t)v[i]);
        break;
    }
    case 4: {
        uint32_t *p = dst;
        LOOP(p[i] = (uint32_t)v[i]);
        break;
    }
    default: memcpy(dst, v, (size_t)n * 8); break;
    }
}

/* Real floats as doubles (exact). */
static void load_f64(cxla_type type, const void *src, double *d, int64_t n) {
    if (type == CXLA_F64) {
        memcpy(d, src, (size_t)n * sizeof(double));
    } else if (type == CXLA_F32) {
        const float *p = src;
        LOOP(d[i] = p[i]);
    } else {
        float f[INTERP_EW_CHUNK];
        for (int64_t off = 0; off < n; off += INTERP_EW_CHUNK) {
            int64_t m = min64(n - off, INTERP_EW_CHUNK);
            interp_small_to_f32(type, (const char *)src + (size_t)off * cxla_type_storage(type), f,
                                m);
            for (int64_t i = 0; i < m; i++) d[off + i] = f[i];
        }
    }
}

/* A float as an integer of |bits|: truncated toward zero, saturated, NaN -> 0. */
static uint64_t f64_to_int(double d, bool is_signed, int bits) {
    if (isnan(d)) return 0;
    if (is_signed) {
        double hi = ldexp(1.0, bits - 1);
        if (d >= hi) return (uint64_t)(bits >= 64 ? INT64_MAX : (int64_t)hi - 1);
        if (d <= -hi) return (uint64_t)(bits >= 64 ? INT64_MIN : -(int64_t)hi);
        return (uint64_t)(int64_t)d; /* truncates */
    }
    double hi = ldexp(1.0, bits);
    if (d >= hi) return bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    if (!(d > 0)) return 0;
    return (uint64_t)d;
}

/* The same over an array, with the limits worked out once. */
static void f64_to_ints(const double *d, uint64_t *v, int64_t n, bool is_signed, int bits) {
    if (is_signed) {
        double hi = ldexp(1.0, bits - 1);
        uint64_t max = (uint64_t)(bits >= 64 ? INT64_MAX : (int64_t)hi - 1);
        uint64_t min = (uint64_t)(bits >= 64 ? INT64_MIN : -(int64_t)hi);
        LOOP(v[i] = isnan(d[i])   ? 0
                    : d[i] >= hi  ? max
                    : d[i] <= -hi ? min
                                  : (uint64_t)(int64_t)d[i]);
    } else {
        double hi = ldexp(1.0, bits);
        uint64_t max = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        LOOP(v[i] = d[i] >= hi ? max : d[i] > 0 ? (uint64_t)d[i] : 0);
    }
}

/* Stores doubles into a real float type, rounded once to nearest even. */
static void store_f64(cxla_type type, const double *d, void *dst, int64_t n) {
    if (type == CXLA_F64) {
        memcpy(dst, d, (size_t)n * sizeof(double));
    } else if (type == CXLA_F32) {
        float *p = dst;
        LOOP(p[i] = (float)d[i]);
    } else if (cxla_type_storage(type) == 2) {
        uint16_t *p = dst;
        LOOP(p[i] = (uint16_t)cxla_float_from_double(type, d[i]));
    } else {
        uint8_t *p = dst;
        LOOP(p[i] = (uint8_t)cxla_float_from_double(type, d[i]));
    }
}

static bool is_int_like(cxla_type t) {
    return t == CXLA_PRED || cxla_type_is_integer(t);
}

/* ---- convert ---------------------------------------------------------------------- */

/* One chunk (<= INTERP_EW_CHUNK elements). */
static void convert_chunk(cxla_type from, const void *src, cxla_type to, void *dst, int64_t n) {
    size_t fs = cxla_type_storage(from), ts = cxla_type_storage(to);
    if (is_int_like(from)) {
        uint64_t v[INTERP_EW_CHUNK];
        bool s = cxla_type_is_signed(from);
        load_u64(from, src, v, n);
        if (is_int_like(to)) {
            store_u64(to, v, dst, n);
        } else if (to == CXLA_F32) {
            float *p = dst;
            if (s)
                LOOP(p[i] = (float)(int64_t)v[i]);
            else
                LOOP(p[i] = (float)v[i]);
        } else if (to == CXLA_F64) {
            double *p = dst;
            if (s)
                LOOP(p[i] = (double)(int64_t)v[i]);
            else
                LOOP(p[i] = (double)v[i]);
        } else {
            /* Small floats and complex: rounded once from the exact integer. */
            for (int64_t i = 0; i < n; i++) {
                if (s)
                    cxla_store_s64(to, (char *)dst + (size_t)i * ts, (int64_t)v[i]);
                else
                    cxla_store_u64(to, (char *)dst + (size_t)i * ts, v[i]);
            }
        }
        return;
    }
    if (cxla_type_is_float(from) && !cxla_type_is_complex(to)) {
        if (from == CXLA_F32 && cxla_type_is_small_float(to)) {
            interp_f32_to_small(to, src, dst, n);
            return;
        }
        if (to == CXLA_F32 && cxla_type_is_small_float(from)) {
            interp_small_to_f32(from, src, dst, n);
            return;
        }
        double d[INTERP_EW_CHUNK];
        load_f64(from, src, d, n);
        if (cxla_type_is_float(to)) {
            store_f64(to, d, dst, n);
        } else if (to == CXLA_PRED) {
            uint8_t *p = dst;
            LOOP(p[i] = d[i] != 0);
        } else {
            uint64_t v[INTERP_EW_CHUNK];
            bool s = cxla_type_is_signed(to);
            int bits = cxla_type_bits(to);
            f64_to_ints(d, v, n, s, bits);
            store_u64(to, v, dst, n);
        }
        return;
    }
    /* Complex on either side: element by element. */
    for (int64_t i = 0; i < n; i++)
        cxla_convert_element(from, (const char *)src + (size_t)i * fs, to,
                             (char *)dst + (size_t)i * ts);
}

void interp_ew_convert(cxla_type from, const void *src, cxla_type to, void *dst, int64_t n) {
    size_t fs = cxla_type_storage(from), ts = cxla_type_storage(to);
    if (from == to) {
        if (n > 0) memcpy(dst, src, (size_t)n * fs);
        return;
    }
    if (cxla_floats_convert(from, src, to, dst, n)) return; /* between real float types */
    for (int64_t off = 0; off < n; off += INTERP_EW_CHUNK)
        convert_chunk(from, (const char *)src + (size_t)off * fs, to,
                      (char *)dst + (size_t)off * ts, min64(n - off, INTERP_EW_CHUNK));
}

/* ---- bitcast-convert -------------------------------------------------------------- */

int interp_ew_bitcast_bits(cxla_type type) {
    return type == CXLA_PRED ? 8 : cxla_type_bits(type);
}

/* The raw bits of one element of at most 64 bits (the low |bits| of its storage). */
static uint64_t raw_load(cxla_type type, const unsigned char *p) {
    int bits = interp_ew_bitcast_bits(type);
    switch (cxla_type_storage(type)) {
    case 1: return bits >= 8 ? p[0] : p[0] & ((1u << bits) - 1);
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

static void raw_store(cxla_type type, unsigned char *p, uint64_t v) {
    switch (cxla_type_storage(type)) {
    case 1: p[0] = (uint8_t)v; break;
    case 2: {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    default: memcpy(p, &v, 8); break;
    }
}

void interp_ew_bitcast_convert(cxla_type from, const void *src, int64_t in_count, cxla_type to,
                               void *dst, int64_t out_count) {
    int wi = interp_ew_bitcast_bits(from), wo = interp_ew_bitcast_bits(to);
    size_t si = cxla_type_storage(from), so = cxla_type_storage(to);
    const unsigned char *in = src;
    unsigned char *out = dst;
    if (wi % 8 == 0 && wo % 8 == 0) {
        /* Whole bytes: the buffer itself, in the machine's (little-endian) order. */
        if (out_count > 0) memcpy(dst, src, (size_t)out_count * so);
    } else if (wi > wo) {
        /* Split each element into wi / wo parts, lowest bits first. */
        int64_t r = wi / wo;
        uint64_t mask = ((uint64_t)1 << wo) - 1;
        for (int64_t i = 0; i < in_count; i++) {
            uint64_t v = raw_load(from, in + (size_t)i * si);
            for (int64_t k = 0; k < r; k++)
                raw_store(to, out + (size_t)(i * r + k) * so, (v >> (k * wo)) & mask);
        }
    } else {
        /* Join wo / wi elements into one (wi == wo for s4 <-> u4 <-> f4e2m1fn). */
        int64_t r = wo / wi;
        for (int64_t j = 0; j < out_count; j++) {
            uint64_t v = 0;
            for (int64_t k = 0; k < r; k++)
                v |= raw_load(from, in + (size_t)(j * r + k) * si) << (k * wi);
            raw_store(to, out + (size_t)j * so, v);
        }
    }
    /* Sign-extend sub-byte signed results; pred holds 0 or 1. */
    interp_ew_int_wrap(to, dst, out_count);
}

/* ---- reduce-precision ------------------------------------------------------------- */

/* XLA's EmitReducePrecisionIR (xla/service/elemental_ir_emitter.cc, quiet_nans=false) on
 * the bits of an |nbits|-wide float with |se| exponent and |sm| mantissa bits. */
typedef struct rp_params {
    int nbits, se, sm;
    int64_t de, dm;
    uint64_t all, sign, exp_mask;
    uint64_t last_bit, base_bias, trunc_mask; /* mantissa rounding (dm < sm) */
    uint64_t max_exp, min_exp;                /* exponent range (de < se), shifted */
} rp_params;

static rp_params rp_init(int nbits, int se, int sm, int64_t de, int64_t dm) {
    rp_params p = {.nbits = nbits, .se = se, .sm = sm, .de = de, .dm = dm};
    p.all = nbits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << nbits) - 1;
    p.sign = (uint64_t)1 << (nbits - 1);
    p.exp_mask = (((uint64_t)1 << se) - 1) << sm;
    if (dm < sm) {
        p.last_bit = (uint64_t)1 << (sm - dm);
        p.base_bias = (p.last_bit >> 1) - 1;
        p.trunc_mask = ~(p.last_bit - 1) & p.all;
    }
    if (de < se) {
        uint64_t bias = ((uint64_t)1 << (se - 1)) - 1;
        uint64_t reduced_bias = ((uint64_t)1 << (de - 1)) - 1;
        p.max_exp = (bias + reduced_bias) << sm;
        p.min_exp = (bias - reduced_bias) << sm;
    }
    return p;
}

static uint64_t rp_apply(const rp_params *p, uint64_t x) {
    uint64_t orig = x;
    bool is_nan = (x & ~p->sign & p->all) > p->exp_mask;
    if (p->dm < p->sm) {
        uint64_t bias = ((x & p->last_bit) >> (p->sm - p->dm)) + p->base_bias;
        x = ((x + bias) & p->all) & p->trunc_mask;
    }
    if (p->de < p->se) {
        uint64_t e = x & p->exp_mask, signed_zero = x & p->sign;
        if (e > p->max_exp) x = signed_zero | p->exp_mask; /* overflow: signed infinity */
        if (e <= p->min_exp) x = signed_zero;              /* underflow, denormals: zero */
    }
    if (is_nan) x = p->dm > 0 ? orig : p->exp_mask; /* NaN kept; with no mantissa, +inf */
    return x;
}

void interp_ew_reduce_precision(cxla_type type, const void *src, void *dst, int64_t n,
                                int64_t exponent_bits, int64_t mantissa_bits) {
    if (type == CXLA_F64) {
        rp_params p = rp_init(64, 11, 52, exponent_bits, mantissa_bits);
        const uint64_t *s = src;
        uint64_t *d = dst;
        LOOP(d[i] = rp_apply(&p, s[i]));
    } else if (type == CXLA_F16) {
        /* f16 on its own bits, as XLA's CPU backend does. */
        rp_params p = rp_init(16, 5, 10, exponent_bits, mantissa_bits);
        const uint16_t *s = src;
        uint16_t *d = dst;
        LOOP(d[i] = (uint16_t)rp_apply(&p, s[i]));
    } else {
        rp_params p = rp_init(32, 8, 23, exponent_bits, mantissa_bits);
        if (type == CXLA_F32) {
            const uint32_t *s = src;
            uint32_t *d = dst;
            LOOP(d[i] = (uint32_t)rp_apply(&p, s[i]));
            return;
        }
        /* bf16, the f8 types and f4e2m1fn: on their f32 value, rounded back. */
        float f[INTERP_EW_CHUNK];
        size_t es = cxla_type_storage(type);
        for (int64_t off = 0; off < n; off += INTERP_EW_CHUNK) {
            int64_t m = min64(n - off, INTERP_EW_CHUNK);
            interp_small_to_f32(type, (const char *)src + (size_t)off * es, f, m);
            for (int64_t i = 0; i < m; i++) {
                uint32_t u;
                memcpy(&u, &f[i], 4);
                u = (uint32_t)rp_apply(&p, u);
                memcpy(&f[i], &u, 4);
            }
            interp_f32_to_small(type, f, (char *)dst + (size_t)off * es, m);
        }
    }
}

/* ---- stochastic-convert ----------------------------------------------------------- */

/* XLA's StochasticConvertDecomposer (xla/hlo/transforms/expanders/
 * stochastic_convert_decomposer.cc): |x| is split into its integer part and fraction f;
 * the result rounds up when random < f * 2^bits(random); the sign is put back; values at
 * or beyond the target's limits saturate; NaN gives 0. The fraction is scaled and the
 * limits compared exactly (XLA does both in the operand type, where they are exact but
 * for formats too narrow to hold 2^bits or the limits). */
void interp_ew_stochastic_convert(cxla_type from, const void *src, cxla_type random_type,
                                  const void *random, cxla_type to, void *dst, int64_t n) {
    int rb = cxla_type_bits(random_type), tb = cxla_type_bits(to);
    int64_t lo = tb >= 64 ? INT64_MIN : -((int64_t)1 << (tb - 1));
    int64_t hi = tb >= 64 ? INT64_MAX : ((int64_t)1 << (tb - 1)) - 1;
    uint64_t rmask = rb >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << rb) - 1;
    size_t fs = cxla_type_storage(from), rs = cxla_type_storage(random_type);
    size_t ts = cxla_type_storage(to);
    double x[INTERP_EW_CHUNK];
    uint64_t r[INTERP_EW_CHUNK], v[INTERP_EW_CHUNK];
    for (int64_t off = 0; off < n; off += INTERP_EW_CHUNK) {
        int64_t m = min64(n - off, INTERP_EW_CHUNK);
        load_f64(from, (const char *)src + (size_t)off * fs, x, m);
        load_u64(random_type, (const char *)random + (size_t)off * rs, r, m);
        for (int64_t i = 0; i < m; i++) {
            double a = fabs(x[i]), t = floor(a), f = a - t;
            uint64_t ti = f64_to_int(t, true, tb);
            /* f * 2^rb is exact and below 2^rb; NaN and infinity leave ti alone. */
            if (isfinite(f) && (r[i] & rmask) < (uint64_t)ldexp(f, rb)) ti++;
            if (x[i] < 0) ti = 0 - ti;
            if (x[i] <= (double)lo) ti = (uint64_t)lo;
            if (x[i] >= (double)hi) ti = (uint64_t)hi;
            v[i] = ti;
        }
        store_u64(to, v, (char *)dst + (size_t)off * ts, m);
    }
}

/* ---- iota ------------------------------------------------------------------------- */

void interp_ew_iota(cxla_type type, int64_t rank, const int64_t *dims, int64_t dimension,
                    void *out) {
    int64_t outer = 1, inner = 1, len = dims[dimension];
    for (int64_t i = 0; i < dimension; i++) outer *= dims[i];
    for (int64_t i = dimension + 1; i < rank; i++) inner *= dims[i];
    if (outer == 0 || inner == 0 || len == 0) return;
    size_t es = cxla_type_storage(type);
    unsigned char *p = out;
    /* One block of len * inner elements, then copies of it. */
    for (int64_t k = 0; k < len; k++) {
        unsigned char *row = p + (size_t)(k * inner) * es;
        cxla_store_s64(type, row, k);
        for (int64_t j = 1; j < inner; j *= 2) {
            int64_t c = min64(j, inner - j);
            memcpy(row + (size_t)j * es, row, (size_t)c * es);
        }
    }
    size_t block = (size_t)(len * inner) * es;
    for (int64_t o = 1; o < outer; o++) memcpy(p + (size_t)o * block, p, block);
}
