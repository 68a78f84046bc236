/* Elementwise kernels for pred and the integers (see interp_elementwise.h).
 *
 * One loop per C storage type, stamped out by macros. Arithmetic is done in an unsigned
 * type at least as wide as int (no C undefined behaviour on overflow: integers wrap).
 * Sub-byte types (s1, s2, s4, u1, u2, u4) are stored one per byte, so they run in the
 * 8-bit loops with their logical width |bits| (shifts, popcnt, clz, mulhi need it) and
 * are wrapped back to the width afterwards. XLA's choices for the undefined cases (from
 * xla/service/elemental_ir_emitter.cc, the CPU backend, and the HLO evaluator):
 *   x / 0 = -1 (all ones), INT_MIN / -1 = INT_MIN, x % 0 = x, INT_MIN % -1 = 0,
 *   shifts by >= the width (or negative): 0, or the sign fill for arithmetic right shift,
 *   abs(INT_MIN) = INT_MIN, x ^ (negative) = (x == 1 ? 1 : 0),
 *   pred: add and maximum are or, multiply and minimum are and.
 */
#include <string.h>

#include "interp/interp_elementwise.h"

/* for (i = 0; i < n; i++) body, in blocks of a constant 64 iterations (which GCC 12
 * vectorizes at -O2 where the body allows; it does not with an int64_t counter running
 * from i0_ to i0_ + 64) and then the rest. */
#define LOOP(...)                                                                                  \
    do {                                                                                           \
        int64_t i0_ = 0;                                                                           \
        for (; i0_ + 64 <= n; i0_ += 64) {                                                         \
            for (int k_ = 0; k_ < 64; k_++) {                                                      \
                int64_t i = i0_ + k_;                                                              \
                __VA_ARGS__;                                                                       \
            }                                                                                      \
        }                                                                                          \
        for (int64_t i = i0_; i < n; i++) {                                                        \
            __VA_ARGS__;                                                                           \
        }                                                                                          \
    } while (0)

static uint64_t width_mask(int bits) {
    return bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
}

/* Sign-extends the low |bits| of |v|. */
static int64_t sext(uint64_t v, int bits) {
    if (bits >= 64) return (int64_t)v;
    uint64_t sign = (uint64_t)1 << (bits - 1);
    v &= width_mask(bits);
    return (int64_t)((v ^ sign) - sign);
}

/* The high 64 bits of the 128-bit product of |a| and |b|, unsigned or signed. */
static uint64_t mulhi_u64(uint64_t a, uint64_t b) {
    uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32, b_lo = b & 0xffffffffu, b_hi = b >> 32;
    uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
    uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;
    return hi_hi + (hi_lo >> 32) + (cross >> 32);
}

static uint64_t mulhi_s64(int64_t a, int64_t b) {
    uint64_t hi = mulhi_u64((uint64_t)a, (uint64_t)b);
    /* Two's complement correction: subtract b when a < 0, a when b < 0. */
    if (a < 0) hi -= (uint64_t)b;
    if (b < 0) hi -= (uint64_t)a;
    return hi;
}

/* Integer power by squaring in the wrapping type WT. */
#define POW_LOOP(T, UT, WT, SIGNED)                                                                \
    LOOP({                                                                                         \
        const int top = (int)sizeof(T) * 8 - 1;                                                    \
        if ((SIGNED) && (((UT)b[i] >> top) & 1)) {                                                 \
            out[i] = (T)(a[i] == (T)1 ? 1 : 0);                                                    \
        } else {                                                                                   \
            WT r = 1, base = (WT)a[i];                                                             \
            for (uint64_t e = (uint64_t)(UT)b[i]; e; e >>= 1) {                                    \
                if (e & 1) r = (WT)(r * base);                                                     \
                base = (WT)(base * base);                                                          \
            }                                                                                      \
            out[i] = (T)r;                                                                         \
        }                                                                                          \
    })

/* T: the storage type; UT: its unsigned twin; WT: the wrapping arithmetic type (at
 * least unsigned int); SIGNED: 1 for the signed types. */
#define DEFINE_INT_KERNELS(NAME, T, UT, WT, SIGNED)                                                \
    static bool unary_##NAME(cxla_opcode op, const T *restrict x, T *restrict out, int64_t n,      \
                             int bits, bool pred) {                                                \
        const int top = (int)sizeof(T) * 8 - 1;                                                    \
        const uint64_t mask = width_mask(bits);                                                    \
        switch (op) {                                                                              \
        case CXLA_OP_NEGATE: LOOP(out[i] = (T)(0u - (WT)x[i])); return true;                       \
        case CXLA_OP_ABS:                                                                          \
            LOOP(out[i] = ((SIGNED) && (((UT)x[i] >> top) & 1)) ? (T)(0u - (WT)x[i]) : x[i]);      \
            return true;                                                                           \
        case CXLA_OP_SIGN:                                                                         \
            LOOP(out[i] = ((SIGNED) && (((UT)x[i] >> top) & 1)) ? (T) ~(UT)0 : (T)(x[i] != 0));    \
            return true;                                                                           \
        case CXLA_OP_NOT:                                                                          \
            if (pred)                                                                              \
                LOOP(out[i] = (T)(x[i] == 0));                                                     \
            else                                                                                   \
                LOOP(out[i] = (T) ~(WT)x[i]);                                                      \
            return true;                                                                           \
        case CXLA_OP_POPCNT:                                                                       \
            LOOP(out[i] = (T)__builtin_popcountll((uint64_t)(UT)x[i] & mask));                     \
            return !pred;                                                                          \
        case CXLA_OP_CLZ:                                                                          \
            LOOP({                                                                                 \
                uint64_t v = (uint64_t)(UT)x[i] & mask;                                            \
                out[i] = (T)(v ? __builtin_clzll(v) - (64 - bits) : bits);                         \
            });                                                                                    \
            return !pred;                                                                          \
        default: return false;                                                                     \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static bool binary_##NAME(cxla_opcode op, const T *restrict a, const T *restrict b,            \
                              T *restrict out, int64_t n, int bits, bool pred) {                   \
        const uint64_t mask = width_mask(bits);                                                    \
        const T all_ones = (T) ~(UT)0;                                                             \
        switch (op) {                                                                              \
        case CXLA_OP_ADD:                                                                          \
            if (pred)                                                                              \
                LOOP(out[i] = a[i] | b[i]);                                                        \
            else                                                                                   \
                LOOP(out[i] = (T)((WT)a[i] + (WT)b[i]));                                           \
            return true;                                                                           \
        case CXLA_OP_SUBTRACT: LOOP(out[i] = (T)((WT)a[i] - (WT)b[i])); return true;               \
        case CXLA_OP_MULTIPLY:                                                                     \
            if (pred)                                                                              \
                LOOP(out[i] = a[i] & b[i]);                                                        \
            else                                                                                   \
                LOOP(out[i] = (T)((WT)a[i] * (WT)b[i]));                                           \
            return true;                                                                           \
        case CXLA_OP_DIVIDE:                                                                       \
            LOOP({                                                                                 \
                if (b[i] == 0)                                                                     \
                    out[i] = all_ones;                                                             \
                else if ((SIGNED) && b[i] == all_ones)                                             \
                    out[i] = (T)(0u - (WT)a[i]);                                                   \
                else                                                                               \
                    out[i] = (T)(a[i] / b[i]);                                                     \
            });                                                                                    \
            return true;                                                                           \
        case CXLA_OP_REMAINDER:                                                                    \
            LOOP({                                                                                 \
                if (b[i] == 0)                                                                     \
                    out[i] = a[i];                                                                 \
                else if ((SIGNED) && b[i] == all_ones)                                             \
                    out[i] = 0;                                                                    \
                else                                                                               \
                    out[i] = (T)(a[i] % b[i]);                                                     \
            });                                                                                    \
            return true;                                                                           \
        case CXLA_OP_POWER: POW_LOOP(T, UT, WT, SIGNED); return true;                              \
        case CXLA_OP_MAXIMUM: LOOP(out[i] = a[i] >= b[i] ? a[i] : b[i]); return true;              \
        case CXLA_OP_MINIMUM: LOOP(out[i] = a[i] <= b[i] ? a[i] : b[i]); return true;              \
        case CXLA_OP_AND: LOOP(out[i] = a[i] & b[i]); return true;                                 \
        case CXLA_OP_OR: LOOP(out[i] = a[i] | b[i]); return true;                                  \
        case CXLA_OP_XOR: LOOP(out[i] = a[i] ^ b[i]); return true;                                 \
        case CXLA_OP_SHIFT_LEFT:                                                                   \
            LOOP({                                                                                 \
                uint64_t s = (uint64_t)(UT)b[i];                                                   \
                out[i] = s >= (uint64_t)bits ? (T)0 : (T)((WT)(UT)a[i] << s);                      \
            });                                                                                    \
            return !pred;                                                                          \
        case CXLA_OP_SHIFT_RIGHT_ARITHMETIC:                                                       \
            LOOP({                                                                                 \
                uint64_t s = (uint64_t)(UT)b[i];                                                   \
                int64_t v = sext((uint64_t)(UT)a[i], bits);                                        \
                out[i] = (T)(s >= (uint64_t)bits ? (v < 0 ? -1 : 0) : v >> s);                     \
            });                                                                                    \
            return !pred;                                                                          \
        case CXLA_OP_SHIFT_RIGHT_LOGICAL:                                                          \
            LOOP({                                                                                 \
                uint64_t s = (uint64_t)(UT)b[i];                                                   \
                out[i] = s >= (uint64_t)bits ? (T)0 : (T)(((uint64_t)(UT)a[i] & mask) >> s);       \
            });                                                                                    \
            return !pred;                                                                          \
        case CXLA_OP_MULHI:                                                                        \
            if (pred) return false;                                                                \
            if (bits == 64) {                                                                      \
                if (SIGNED)                                                                        \
                    LOOP(out[i] = (T)mulhi_s64((int64_t)a[i], (int64_t)b[i]));                     \
                else                                                                               \
                    LOOP(out[i] = (T)mulhi_u64((uint64_t)a[i], (uint64_t)b[i]));                   \
            } else if (SIGNED) {                                                                   \
                LOOP(out[i] =                                                                      \
                         (T)(sext((uint64_t)(UT)a[i], bits) * sext((uint64_t)(UT)b[i], bits) >>    \
                             bits));                                                               \
            } else {                                                                               \
                LOOP(out[i] = (T)((((uint64_t)(UT)a[i] & mask) * ((uint64_t)(UT)b[i] & mask)) >>   \
                                  bits));                                                          \
            }                                                                                      \
            return true;                                                                           \
        default: return false;                                                                     \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void clamp_##NAME(const T *lo, int64_t ls, const T *x, int64_t xs, const T *hi,         \
                             int64_t hs, T *out, int64_t n) {                                      \
        LOOP({                                                                                     \
            T l = lo[i * ls], v = x[i * xs], h = hi[i * hs];                                       \
            T m = l >= v ? l : v;                                                                  \
            out[i] = h <= m ? h : m;                                                               \
        });                                                                                        \
    }                                                                                              \
                                                                                                   \
    /* Order keys: unsigned 64-bit numbers whose order is the chosen order of the values. */       \
    static void keys_##NAME(const T *x, uint64_t *k, int64_t n, int bits, bool signed_order) {     \
        const uint64_t mask = width_mask(bits);                                                    \
        if (signed_order)                                                                          \
            LOOP(k[i] = (uint64_t)sext((uint64_t)(UT)x[i], bits) ^ ((uint64_t)1 << 63));           \
        else                                                                                       \
            LOOP(k[i] = (uint64_t)(UT)x[i] & mask);                                                \
    }

DEFINE_INT_KERNELS(s8, int8_t, uint8_t, unsigned, 1)
DEFINE_INT_KERNELS(s16, int16_t, uint16_t, unsigned, 1)
DEFINE_INT_KERNELS(s32, int32_t, uint32_t, uint32_t, 1)
DEFINE_INT_KERNELS(s64, int64_t, uint64_t, uint64_t, 1)
DEFINE_INT_KERNELS(u8, uint8_t, uint8_t, unsigned, 0)
DEFINE_INT_KERNELS(u16, uint16_t, uint16_t, unsigned, 0)
DEFINE_INT_KERNELS(u32, uint32_t, uint32_t, uint32_t, 0)
DEFINE_INT_KERNELS(u64, uint64_t, uint64_t, uint64_t, 0)

/* Which C loop a type runs in: 0 s8, 1 s16, 2 s32, 3 s64, 4 u8 (and pred), 5 u16, 6 u32,
 * 7 u64; -1 for the non-integers. */
static int int_kind(cxla_type type) {
    if (type == CXLA_PRED) return 4;
    if (!cxla_type_is_integer(type)) return -1;
    int base = cxla_type_is_signed(type) ? 0 : 4;
    switch (cxla_type_storage(type)) {
    case 1: return base;
    case 2: return base + 1;
    case 4: return base + 2;
    default: return base + 3;
    }
}

bool interp_ew_int_unary(cxla_opcode op, cxla_type type, const void *x, void *out, int64_t n) {
    int bits = cxla_type_bits(type);
    bool pred = type == CXLA_PRED;
    if (pred && op != CXLA_OP_NOT) return false;
    bool ok;
    switch (int_kind(type)) {
    case 0: ok = unary_s8(op, x, out, n, bits, pred); break;
    case 1: ok = unary_s16(op, x, out, n, bits, pred); break;
    case 2: ok = unary_s32(op, x, out, n, bits, pred); break;
    case 3: ok = unary_s64(op, x, out, n, bits, pred); break;
    case 4: ok = unary_u8(op, x, out, n, bits, pred); break;
    case 5: ok = unary_u16(op, x, out, n, bits, pred); break;
    case 6: ok = unary_u32(op, x, out, n, bits, pred); break;
    case 7: ok = unary_u64(op, x, out, n, bits, pred); break;
    default: return false;
    }
    if (ok) interp_ew_int_wrap(type, out, n);
    return ok;
}

bool interp_ew_int_binary(cxla_opcode op, cxla_type type, const void *a, const void *b, void *out,
                          int64_t n) {
    int bits = cxla_type_bits(type);
    bool pred = type == CXLA_PRED;
    bool ok;
    switch (int_kind(type)) {
    case 0: ok = binary_s8(op, a, b, out, n, bits, pred); break;
    case 1: ok = binary_s16(op, a, b, out, n, bits, pred); break;
    case 2: ok = binary_s32(op, a, b, out, n, bits, pred); break;
    case 3: ok = binary_s64(op, a, b, out, n, bits, pred); break;
    case 4: ok = binary_u8(op, a, b, out, n, bits, pred); break;
    case 5: ok = binary_u16(op, a, b, out, n, bits, pred); break;
    case 6: ok = binary_u32(op, a, b, out, n, bits, pred); break;
    case 7: ok = binary_u64(op, a, b, out, n, bits, pred); break;
    default: return false;
    }
    if (ok) interp_ew_int_wrap(type, out, n);
    return ok;
}

void interp_ew_int_clamp(cxla_type type, const void *lo, int64_t lo_step, const void *x,
                         int64_t x_step, const void *hi, int64_t hi_step, void *out, int64_t n) {
    switch (int_kind(type)) {
    case 0: clamp_s8(lo, lo_step, x, x_step, hi, hi_step, out, n); break;
    case 1: clamp_s16(lo, lo_step, x, x_step, hi, hi_step, out, n); break;
    case 2: clamp_s32(lo, lo_step, x, x_step, hi, hi_step, out, n); break;
    case 3: clamp_s64(lo, lo_step, x, x_step, hi, hi_step, out, n); break;
    case 4: clamp_u8(lo, lo_step, x, x_step, hi, hi_step, out, n); break;
    case 5: clamp_u16(lo, lo_step, x, x_step, hi, hi_step, out, n); break;
    case 6: clamp_u32(lo, lo_step, x, x_step, hi, hi_step, out, n); break;
    case 7: clamp_u64(lo, lo_step, x, x_step, hi, hi_step, out, n); break;
    default: break;
    }
}

static void int_keys(cxla_type type, const void *x, uint64_t *k, int64_t n, bool signed_order) {
    int bits = cxla_type_bits(type);
    switch (int_kind(type)) {
    case 0: keys_s8(x, k, n, bits, signed_order); break;
    case 1: keys_s16(x, k, n, bits, signed_order); break;
    case 2: keys_s32(x, k, n, bits, signed_order); break;
    case 3: keys_s64(x, k, n, bits, signed_order); break;
    case 4: keys_u8(x, k, n, bits, signed_order); break;
    case 5: keys_u16(x, k, n, bits, signed_order); break;
    case 6: keys_u32(x, k, n, bits, signed_order); break;
    case 7: keys_u64(x, k, n, bits, signed_order); break;
    default: memset(k, 0, (size_t)n * sizeof(*k)); break;
    }
}

static void compare_keys(interp_cmp_dir dir, const uint64_t *a, const uint64_t *b, uint8_t *out,
                         int64_t n) {
    switch (dir) {
    case INTERP_CMP_EQ: LOOP(out[i] = a[i] == b[i]); break;
    case INTERP_CMP_NE: LOOP(out[i] = a[i] != b[i]); break;
    case INTERP_CMP_LT: LOOP(out[i] = a[i] < b[i]); break;
    case INTERP_CMP_LE: LOOP(out[i] = a[i] <= b[i]); break;
    case INTERP_CMP_GT: LOOP(out[i] = a[i] > b[i]); break;
    case INTERP_CMP_GE: LOOP(out[i] = a[i] >= b[i]); break;
    }
}

void interp_ew_int_compare(interp_cmp_dir dir, bool signed_order, cxla_type type, const void *a,
                           const void *b, uint8_t *out, int64_t n) {
    uint64_t ka[INTERP_EW_CHUNK], kb[INTERP_EW_CHUNK];
    size_t es = cxla_type_storage(type);
    for (int64_t off = 0; off < n; off += INTERP_EW_CHUNK) {
        int64_t m = n - off < INTERP_EW_CHUNK ? n - off : INTERP_EW_CHUNK;
        int_keys(type, (const char *)a + (size_t)off * es, ka, m, signed_order);
        int_keys(type, (const char *)b + (size_t)off * es, kb, m, signed_order);
        compare_keys(dir, ka, kb, out + off, m);
    }
}

void interp_ew_int_wrap(cxla_type type, void *data, int64_t n) {
    int bits = cxla_type_bits(type);
    if (type == CXLA_PRED) {
        uint8_t *p = data;
        LOOP(p[i] = p[i] != 0);
        return;
    }
    if (!cxla_type_is_integer(type) || bits >= 8) return;
    uint8_t *p = data;
    const unsigned mask = (1u << bits) - 1, sign = 1u << (bits - 1);
    if (cxla_type_is_signed(type))
        LOOP(p[i] = (uint8_t)(((p[i] & mask) ^ sign) - sign));
    else
        LOOP(p[i] = (uint8_t)(p[i] & mask));
}
