/* Interpreter handlers: the linalg family (see interp.h): dot and convolution.
 *
 * Both reduce to one blocked matrix product C[M][N] += A[M][K] * B[K][N] over contiguous
 * rows in a compute type chosen once per instruction:
 *
 *   result f16/bf16/f8/f32          f32 (f64 when an operand is f64)
 *   result f64                      f64
 *   result c64 / c128               c64 (c128 when an operand is c128 or f64) / c128
 *   result integer or pred          64-bit two's complement, wrapped to the result width
 *                                   (pred: the sum of products is != 0, i.e. OR of ANDs)
 *
 * Operands are first converted to the result type where that is what XLA does (its
 * evaluator converts both operands to the result element type, HandleDotSlowPath /
 * HandleConvolution): integer operands of a float result are rounded to the result type,
 * anything of an integer or pred result is converted to it. Float operands are widened
 * straight to the compute type, so f32 x f32 -> bf16 rounds once at the end as XLA's CPU
 * backend does (dot in f32, then convert); small floats are widened to f32 once while
 * packing. Each output element is the sum of its products in the order of the flattened
 * contraction index (the evaluator's order), accumulated in the compute type and rounded
 * once to the result type. operand_precision and algorithm are accepted and ignored: the
 * interpreter always computes at the full precision of the types, except PACKED_NIBBLE on
 * both operands of an integer dot or convolution, which (as the evaluator does) multiplies
 * the low and the high signed nibbles of each element separately and adds both products.
 *
 * Convolution index arithmetic follows the seeds and XLA's evaluator (HandleConvolution):
 * input position = out * stride - pad_low + k * rhs_dilation, skipped unless divisible by
 * lhs_dilation (then divided) and inside the input; kernel index size-1-k when reversed;
 * output feature z belongs to feature group z / (OZ / feature_group_count), which reads
 * input features [g * KZ, (g+1) * KZ), and to batch group z / (OZ / batch_group_count),
 * which reads input batch b + group * (IB / batch_group_count). The fast path packs the
 * input as [batch][spatial][feature] and multiplies im2col rows by the kernel packed as
 * [window position][input feature][output feature]. With lhs dilation the outputs are
 * split into phase classes that read the same window positions (see "phase classes"
 * below), so lhs-dilation holes are never multiplied; padding becomes zeros in im2col,
 * which only matters when the kernel holds an inf or NaN (inf * 0 = NaN), so such kernels
 * take a direct loop that skips those positions, as the seed's pseudo-code and the
 * evaluator do. Integer convolutions wrap like integer dots (XLA's CPU emitters
 * add in the result type; the newest evaluator clamps convolution sums instead).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/memcount.h"
#include "interp/interp.h"

#define OOM()           cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")
#define BAD(instr, ...) interp_error((instr), CXLA_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* ---- compute types ------------------------------------------------------------------ */

typedef enum compute_kind {
    CK_F32,  /* float */
    CK_F64,  /* double */
    CK_C64,  /* float pairs (re, im) */
    CK_C128, /* double pairs */
    CK_INT,  /* uint64_t, two's complement, wrapping */
} compute_kind;

static size_t ck_size(compute_kind k) {
    switch (k) {
    case CK_F32: return 4;
    case CK_F64: return 8;
    case CK_C64: return 8;
    case CK_C128: return 16;
    case CK_INT: return 8;
    }
    return 8;
}

static bool is_real_float(cxla_type t) {
    return cxla_type_is_float(t);
}

static compute_kind pick_kind(cxla_type result, cxla_type lhs, cxla_type rhs) {
    if (cxla_type_is_complex(result)) {
        bool wide = result == CXLA_C128 || lhs == CXLA_C128 || rhs == CXLA_C128 ||
                    lhs == CXLA_F64 || rhs == CXLA_F64;
        return wide ? CK_C128 : CK_C64;
    }
    if (is_real_float(result)) {
        bool wide = result == CXLA_F64 || lhs == CXLA_F64 || rhs == CXLA_F64 || lhs == CXLA_C128 ||
                    rhs == CXLA_C128;
        return wide ? CK_F64 : CK_F32;
    }
    return CK_INT;
}

/* A zero-size request still gets a block, so that NULL always means out of memory. */
static void *xmalloc(size_t n) {
    return malloc(n ? n : 1);
}
static void *xcalloc(size_t n, size_t size) {
    return calloc(n ? n : 1, size ? size : 1);
}

/* Work memory of dot and convolution (the operands gathered in the compute type, the
 * accumulator): counted as memory held (base/memcount.h) while it lives, as literals are,
 * so that a run's peak shows it. NULL when memory is short. */
static void *scratch_alloc(size_t n, bool zero) {
    if (!cxla_mem_take(n)) return NULL;
    void *p = zero ? xcalloc(n, 1) : xmalloc(n);
    if (!p) cxla_mem_give(n);
    return p;
}
static void scratch_free(void *p, size_t n) {
    if (!p) return;
    free(p);
    cxla_mem_give(n);
}

/* Arithmetic shift right without relying on the implementation-defined >> of negatives. */
static int64_t ashr(int64_t v, int s) {
    return v >= 0 ? v >> s : ~(~v >> s);
}

/* Loads one element of |from| at |p| as a compute value (see the header comment for which
 * conversions happen). |nibble| is 0, or 1 / 2 for the low / high nibble (PACKED_NIBBLE,
 * integer results only). */
static void load_compute(compute_kind ck, cxla_type from, const void *p, cxla_type result,
                         int nibble, void *dst) {
    unsigned char tmp[16];
    switch (ck) {
    case CK_F32:
    case CK_F64: {
        double v;
        if (is_real_float(from)) {
            v = cxla_load_f64(from, p);
        } else {
            cxla_convert_element(from, p, result, tmp);
            v = cxla_load_f64(result, tmp);
        }
        if (ck == CK_F32)
            *(float *)dst = (float)v;
        else
            *(double *)dst = v;
        return;
    }
    case CK_C64:
    case CK_C128: {
        double re, im;
        if (is_real_float(from) || cxla_type_is_complex(from)) {
            cxla_load_c128(from, p, &re, &im);
        } else {
            cxla_convert_element(from, p, result, tmp);
            cxla_load_c128(result, tmp, &re, &im);
        }
        if (ck == CK_C64) {
            ((float *)dst)[0] = (float)re;
            ((float *)dst)[1] = (float)im;
        } else {
            ((double *)dst)[0] = re;
            ((double *)dst)[1] = im;
        }
        return;
    }
    case CK_INT: {
        uint64_t v;
        bool direct =
            !nibble && result != CXLA_PRED && (cxla_type_is_integer(from) || from == CXLA_PRED);
        if (direct) {
            v = cxla_type_is_unsigned(from) ? cxla_load_u64(from, p)
                                            : (uint64_t)cxla_load_s64(from, p);
        } else {
            /* The evaluator converts the operand to the result type first. */
            cxla_convert_element(from, p, result, tmp);
            v = cxla_type_is_unsigned(result) ? cxla_load_u64(result, tmp)
                                              : (uint64_t)cxla_load_s64(result, tmp);
        }
        if (nibble) {
            bool sign = !cxla_type_is_unsigned(result);
            if (nibble == 1) {
                uint64_t lo = v & 15u;
                v = sign && lo >= 8 ? lo - 16u : lo; /* wraps to the negative value */
            } else {
                v = sign ? (uint64_t)ashr((int64_t)v, 4) : v >> 4;
            }
        }
        *(uint64_t *)dst = v;
        return;
    }
    }
}

/* A whole operand (row-major) in the compute type: |*out| is either the literal's own data
 * (|*owned| NULL) or a new buffer (|*owned| set, to free). */
static cxla_status widen(const cxla_literal *lit, cxla_type result, compute_kind ck, int nibble,
                         const void **out, void **owned) {
    cxla_type from = cxla_literal_type(lit);
    int64_t n = cxla_literal_element_count(lit);
    const unsigned char *src = cxla_literal_data_const(lit);
    *owned = NULL;
    if (!nibble && ((ck == CK_F32 && from == CXLA_F32) || (ck == CK_F64 && from == CXLA_F64) ||
                    (ck == CK_C64 && from == CXLA_C64) || (ck == CK_C128 && from == CXLA_C128))) {
        *out = src;
        return NULL;
    }
    size_t cs = ck_size(ck);
    unsigned char *dst = xmalloc((size_t)n * cs);
    if (!dst) return OOM();
    if (ck == CK_F32 && cxla_type_is_small_float(from)) {
        interp_small_to_f32(from, src, (float *)dst, n);
    } else {
        size_t es = cxla_type_storage(from);
        for (int64_t i = 0; i < n; i++)
            load_compute(ck, from, src + (size_t)i * es, result, nibble, dst + (size_t)i * cs);
    }
    *out = dst;
    *owned = dst;
    return NULL;
}

static void gather3(const void *src, size_t es, const int64_t *o0, int64_t n0, const int64_t *o1,
                    int64_t n1, const int64_t *o2, int64_t n2, void *dst);

/* gather3 of |lit|'s elements into |dst| (room for n0 * n1 * n2 compute values of |cs|
 * bytes) in the compute type, as widen then gather3 would give, without widen's copy of
 * the whole operand (a model's weights, twice their size in f32): gathered in the
 * operand's own element size, then widened in place from the last element down, a block
 * at a time through a buffer on the stack (a compute value is at least as wide as an
 * operand element, so no element is overwritten before it is read). */
static cxla_status gather_widen(const cxla_literal *lit, cxla_type result, compute_kind ck,
                                int nibble, const int64_t *o0, int64_t n0, const int64_t *o1,
                                int64_t n1, const int64_t *o2, int64_t n2, void *dst) {
    enum { BLOCK = 256 };
    cxla_type from = cxla_literal_type(lit);
    size_t cs = ck_size(ck), es = cxla_type_storage(from);
    const void *src = cxla_literal_data_const(lit);
    if (!nibble && ((ck == CK_F32 && from == CXLA_F32) || (ck == CK_F64 && from == CXLA_F64) ||
                    (ck == CK_C64 && from == CXLA_C64) || (ck == CK_C128 && from == CXLA_C128))) {
        gather3(src, cs, o0, n0, o1, n1, o2, n2, dst);
        return NULL;
    }
    if (es > cs) { /* a compute type narrower than the operand: the whole operand widened */
        const void *w = NULL;
        void *own = NULL;
        CXLA_RETURN_IF_ERROR(widen(lit, result, ck, nibble, &w, &own));
        gather3(w, cs, o0, n0, o1, n1, o2, n2, dst);
        free(own);
        return NULL;
    }
    gather3(src, es, o0, n0, o1, n1, o2, n2, dst);
    unsigned char *d = dst;
    _Alignas(16) unsigned char tmp[BLOCK * 16];
    for (int64_t hi = n0 * n1 * n2, lo; hi > 0; hi = lo) {
        lo = hi > BLOCK ? hi - BLOCK : 0;
        if (ck == CK_F32 && cxla_type_is_small_float(from)) {
            interp_small_to_f32(from, d + (size_t)lo * es, (float *)tmp, hi - lo);
        } else {
            for (int64_t i = lo; i < hi; i++)
                load_compute(ck, from, d + (size_t)i * es, result, nibble,
                             tmp + (size_t)(i - lo) * cs);
        }
        memcpy(d + (size_t)lo * cs, tmp, (size_t)(hi - lo) * cs);
    }
    return NULL;
}

/* Whether gather_widen of |lit| over these offsets would copy it unchanged: its elements
 * are compute values already, and the offsets walk them in order from 0. */
static bool lies_as(const cxla_literal *lit, compute_kind ck, const int64_t *o0, int64_t n0,
                    const int64_t *o1, int64_t n1, const int64_t *o2, int64_t n2) {
    cxla_type t = cxla_literal_type(lit);
    if (!((ck == CK_F32 && t == CXLA_F32) || (ck == CK_F64 && t == CXLA_F64) ||
          (ck == CK_C64 && t == CXLA_C64) || (ck == CK_C128 && t == CXLA_C128)))
        return false;
    for (int64_t i = 0; i < n0; i++)
        if (o0[i] != i * n1 * n2) return false;
    for (int64_t i = 0; i < n1; i++)
        if (o1[i] != i * n2) return false;
    for (int64_t i = 0; i < n2; i++)
        if (o2[i] != i) return false;
    return true;
}

/* Stores |n| compute values into |n| elements of |type| (rounding once, wrapping ints). */
static void narrow(compute_kind ck, const void *src, cxla_type type, void *dst, int64_t n) {
    size_t es = cxla_type_storage(type);
    unsigned char *d = dst;
    switch (ck) {
    case CK_F32:
        if (type == CXLA_F32) {
            if (dst != src) memmove(dst, src, (size_t)n * 4);
        } else if (cxla_type_is_small_float(type)) {
            interp_f32_to_small(type, src, dst, n);
        } else {
            for (int64_t i = 0; i < n; i++)
                cxla_store_f64(type, d + (size_t)i * es, ((const float *)src)[i]);
        }
        return;
    case CK_F64:
        if (type == CXLA_F64) {
            if (dst != src) memmove(dst, src, (size_t)n * 8);
        } else {
            for (int64_t i = 0; i < n; i++)
                cxla_store_f64(type, d + (size_t)i * es, ((const double *)src)[i]);
        }
        return;
    case CK_C64:
        for (int64_t i = 0; i < n; i++) {
            const float *v = (const float *)src + 2 * i;
            cxla_store_c128(type, d + (size_t)i * es, v[0], v[1]);
        }
        return;
    case CK_C128:
        for (int64_t i = 0; i < n; i++) {
            const double *v = (const double *)src + 2 * i;
            cxla_store_c128(type, d + (size_t)i * es, v[0], v[1]);
        }
        return;
    case CK_INT:
        for (int64_t i = 0; i < n; i++)
            cxla_store_u64(type, d + (size_t)i * es, ((const uint64_t *)src)[i]);
        return;
    }
}

/* ---- packing ------------------------------------------------------------------------ */

/* Offsets (in elements) of every multi-index over the dims |which| (row-major over that
 * list) in an array with |strides|; |reverse| (may be NULL) flips a dim: index i reads
 * size-1-i. |out| has the product of those dims' sizes entries. */
static void dim_offsets(int64_t n, const int64_t *which, const int64_t *dims,
                        const int64_t *strides, const bool *reverse, int64_t *out) {
    int64_t count = 1;
    for (int64_t i = 0; i < n; i++) count *= dims[which[i]];
    if (count == 0) return;
    int64_t idx[CXLA_MAX_RANK] = {0};
    for (int64_t e = 0; e < count; e++) {
        int64_t off = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t d = which[i];
            int64_t v = reverse && reverse[i] ? dims[d] - 1 - idx[i] : idx[i];
            off += v * strides[d];
        }
        out[e] = off;
        for (int64_t i = n - 1; i >= 0; i--) {
            if (++idx[i] < dims[which[i]]) break;
            idx[i] = 0;
        }
    }
}

/* dst[i0][i1][i2] = src[o0[i0] + o1[i1] + o2[i2]] for elements of |es| bytes. */
static void gather3(const void *src, size_t es, const int64_t *o0, int64_t n0, const int64_t *o1,
                    int64_t n1, const int64_t *o2, int64_t n2, void *dst) {
    bool contiguous = true;
    for (int64_t i = 1; i < n2 && contiguous; i++) contiguous = o2[i] == o2[0] + i;
    const unsigned char *s = src;
    unsigned char *d = dst;
    for (int64_t i0 = 0; i0 < n0; i0++) {
        for (int64_t i1 = 0; i1 < n1; i1++) {
            int64_t base = o0[i0] + o1[i1];
            if (contiguous) {
                if (n2) memcpy(d, s + (size_t)(base + o2[0]) * es, (size_t)n2 * es);
            } else if (es == 4) {
                const uint32_t *s4 = (const uint32_t *)s + base;
                uint32_t *d4 = (uint32_t *)d;
                for (int64_t i2 = 0; i2 < n2; i2++) d4[i2] = s4[o2[i2]];
            } else if (es == 8) {
                const uint64_t *s8 = (const uint64_t *)s + base;
                uint64_t *d8 = (uint64_t *)d;
                for (int64_t i2 = 0; i2 < n2; i2++) d8[i2] = s8[o2[i2]];
            } else {
                for (int64_t i2 = 0; i2 < n2; i2++)
                    memcpy(d + (size_t)i2 * es, s + (size_t)(base + o2[i2]) * es, es);
            }
            d += (size_t)n2 * es;
        }
    }
}

/* ---- the matrix product ------------------------------------------------------------- */

/* Cache blocks: a KC x NC panel of B stays in L2 while rows of A stream past it. */
enum { GEMM_KC = 256, GEMM_NC = 512 };

/* C[i][j] += sum_k A[i*lda+k] * B[k*ldb+j] for real types. The register block is MR x NR
 * accumulators loaded from C and stored back, so every element sums its products in
 * ascending k, exactly as a naive loop would (the blocks only reorder independent sums). */
#define DEFINE_GEMM_REAL(name, T, NR)                                                              \
    static void name##_block(int64_t kn, const T *restrict a, int64_t lda, const T *restrict b,    \
                             int64_t ldb, T *restrict c, int64_t ldc) {                            \
        T acc0[NR], acc1[NR], acc2[NR], acc3[NR];                                                  \
        for (int t = 0; t < NR; t++) {                                                             \
            acc0[t] = c[t];                                                                        \
            acc1[t] = c[ldc + t];                                                                  \
            acc2[t] = c[2 * ldc + t];                                                              \
            acc3[t] = c[3 * ldc + t];                                                              \
        }                                                                                          \
        for (int64_t k = 0; k < kn; k++) {                                                         \
            const T *restrict bk = b + k * ldb;                                                    \
            T a0 = a[k], a1 = a[lda + k], a2 = a[2 * lda + k], a3 = a[3 * lda + k];                \
            for (int t = 0; t < NR; t++) {                                                         \
                acc0[t] += a0 * bk[t];                                                             \
                acc1[t] += a1 * bk[t];                                                             \
                acc2[t] += a2 * bk[t];                                                             \
                acc3[t] += a3 * bk[t];                                                             \
            }                                                                                      \
        }                                                                                          \
        for (int t = 0; t < NR; t++) {                                                             \
            c[t] = acc0[t];                                                                        \
            c[ldc + t] = acc1[t];                                                                  \
            c[2 * ldc + t] = acc2[t];                                                              \
            c[3 * ldc + t] = acc3[t];                                                              \
        }                                                                                          \
    }                                                                                              \
    static void name##_row(int64_t kn, int64_t nn, const T *restrict a, const T *restrict b,       \
                           int64_t ldb, T *restrict c) {                                           \
        int64_t j = 0;                                                                             \
        for (; j + NR <= nn; j += NR) {                                                            \
            T acc[NR];                                                                             \
            for (int t = 0; t < NR; t++) acc[t] = c[j + t];                                        \
            for (int64_t k = 0; k < kn; k++) {                                                     \
                T ak = a[k];                                                                       \
                const T *restrict bk = b + k * ldb + j;                                            \
                for (int t = 0; t < NR; t++) acc[t] += ak * bk[t];                                 \
            }                                                                                      \
            for (int t = 0; t < NR; t++) c[j + t] = acc[t];                                        \
        }                                                                                          \
        for (; j < nn; j++) {                                                                      \
            T acc = c[j];                                                                          \
            for (int64_t k = 0; k < kn; k++) acc += a[k] * b[k * ldb + j];                         \
            c[j] = acc;                                                                            \
        }                                                                                          \
    }                                                                                              \
    static void name(int64_t m, int64_t n, int64_t kdim, const T *a, int64_t lda, const T *b,      \
                     int64_t ldb, T *c, int64_t ldc) {                                             \
        for (int64_t k0 = 0; k0 < kdim; k0 += GEMM_KC) {                                           \
            int64_t kn = kdim - k0 < GEMM_KC ? kdim - k0 : GEMM_KC;                                \
            for (int64_t j0 = 0; j0 < n; j0 += GEMM_NC) {                                          \
                int64_t nn = n - j0 < GEMM_NC ? n - j0 : GEMM_NC;                                  \
                int64_t nb = nn / NR * NR;                                                         \
                const T *bp = b + k0 * ldb + j0;                                                   \
                int64_t i = 0;                                                                     \
                for (; i + 4 <= m && nb > 0; i += 4) {                                             \
                    const T *ap = a + i * lda + k0;                                                \
                    T *cp = c + i * ldc + j0;                                                      \
                    for (int64_t j = 0; j < nb; j += NR)                                           \
                        name##_block(kn, ap, lda, bp + j, ldb, cp + j, ldc);                       \
                    for (int r = 0; r < 4 && nb < nn; r++)                                         \
                        name##_row(kn, nn - nb, ap + r * lda, bp + nb, ldb, cp + r * ldc + nb);    \
                }                                                                                  \
                for (; i < m; i++)                                                                 \
                    name##_row(kn, nn, a + i * lda + k0, bp, ldb, c + i * ldc + j0);               \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_GEMM_REAL(gemm_f32, float, 8)
DEFINE_GEMM_REAL(gemm_f64, double, 4)
DEFINE_GEMM_REAL(gemm_int, uint64_t, 4)

/* Complex: interleaved (re, im); the product is formed first, then added, as the
 * evaluator's `result += lhs * rhs` does (the textbook formula, no NaN recovery). */
#define DEFINE_GEMM_COMPLEX(name, T)                                                               \
    static void name(int64_t m, int64_t n, int64_t kdim, const T *a, int64_t lda, const T *b,      \
                     int64_t ldb, T *c, int64_t ldc) {                                             \
        for (int64_t i = 0; i < m; i++) {                                                          \
            T *restrict crow = c + 2 * i * ldc;                                                    \
            for (int64_t k = 0; k < kdim; k++) {                                                   \
                T ar = a[2 * (i * lda + k)], ai = a[2 * (i * lda + k) + 1];                        \
                const T *restrict brow = b + 2 * k * ldb;                                          \
                for (int64_t j = 0; j < n; j++) {                                                  \
                    T br = brow[2 * j], bi = brow[2 * j + 1];                                      \
                    T pr = ar * br - ai * bi, pi = ar * bi + ai * br;                              \
                    crow[2 * j] += pr;                                                             \
                    crow[2 * j + 1] += pi;                                                         \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_GEMM_COMPLEX(gemm_c64, float)
DEFINE_GEMM_COMPLEX(gemm_c128, double)

/* Leading dimensions are in elements of the compute type. */
static void gemm(compute_kind ck, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                 const void *b, int64_t ldb, void *c, int64_t ldc) {
    if (m <= 0 || n <= 0 || k <= 0) return;
    switch (ck) {
    case CK_F32: gemm_f32(m, n, k, a, lda, b, ldb, c, ldc); return;
    case CK_F64: gemm_f64(m, n, k, a, lda, b, ldb, c, ldc); return;
    case CK_C64: gemm_c64(m, n, k, a, lda, b, ldb, c, ldc); return;
    case CK_C128: gemm_c128(m, n, k, a, lda, b, ldb, c, ldc); return;
    case CK_INT: gemm_int(m, n, k, a, lda, b, ldb, c, ldc); return;
    }
}

/* ---- common checks ------------------------------------------------------------------ */

static cxla_status check_array(const cxla_instr *instr, const cxla_literal *lit, const char *what) {
    const cxla_shape *s = cxla_literal_shape(lit);
    if (!s || !cxla_type_is_array(s->type) || s->type == CXLA_TOKEN || s->type == CXLA_OPAQUE)
        return BAD(instr, "the %s must be an array", what);
    if (s->layout && !cxla_layout_is_default(s))
        return BAD(instr, "the %s is not in the row-major layout the interpreter uses", what);
    return NULL;
}

static cxla_status check_types(const cxla_instr *instr, cxla_type lhs, cxla_type rhs) {
    cxla_type r = instr->shape.type;
    if (!cxla_type_is_array(r) || r == CXLA_TOKEN || r == CXLA_OPAQUE)
        return BAD(instr, "the result must be an array");
    if (cxla_type_is_complex(lhs) || cxla_type_is_complex(rhs))
        if (!cxla_type_is_complex(r))
            return BAD(instr, "complex operands (%s, %s) need a complex result, not %s",
                       cxla_type_name(lhs), cxla_type_name(rhs), cxla_type_name(r));
    return NULL;
}

/* PACKED_NIBBLE on both operands: 2 passes (low and high nibbles); on one only: an error. */
static cxla_status nibble_passes(const cxla_instr *instr, int *out_passes) {
    *out_passes = 1;
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_OPERAND_PRECISION);
    if (!a || a->kind != CXLA_ATTR_KIND_PRECISIONS) return NULL;
    int packed = 0;
    for (int64_t i = 0; i < a->v.precisions.count; i++)
        packed += a->v.precisions.items[i] == CXLA_PRECISION_PACKED_NIBBLE;
    if (packed == 0) return NULL;
    if (packed != 2 || a->v.precisions.count != 2)
        return BAD(instr, "PACKED_NIBBLE must be given for both operands or neither");
    cxla_type r = instr->shape.type;
    if (!cxla_type_is_integer(r))
        return BAD(instr, "PACKED_NIBBLE needs integer operands and result, not %s",
                   cxla_type_name(r));
    *out_passes = 2;
    return NULL;
}

static bool dims_unique(int64_t n, const int64_t *d, int64_t rank, bool *used) {
    for (int64_t i = 0; i < n; i++) {
        if (d[i] < 0 || d[i] >= rank || used[d[i]]) return false;
        used[d[i]] = true;
    }
    return true;
}

/* ---- dot ---------------------------------------------------------------------------- */

typedef struct dot_plan {
    int64_t nb, nc, nlf, nrf;
    int64_t lb[CXLA_MAX_RANK], rb[CXLA_MAX_RANK], lc[CXLA_MAX_RANK], rc[CXLA_MAX_RANK];
    int64_t lf[CXLA_MAX_RANK], rf[CXLA_MAX_RANK];
    int64_t B, M, N, K;
} dot_plan;

static cxla_status dot_prepare(const cxla_instr *instr, const cxla_shape *ls, const cxla_shape *rs,
                               dot_plan *p) {
    int64_t nlb, nrb, nlc, nrc;
    const int64_t *lb = cxla_instr_ints(instr, CXLA_ATTR_LHS_BATCH_DIMS, &nlb);
    const int64_t *rb = cxla_instr_ints(instr, CXLA_ATTR_RHS_BATCH_DIMS, &nrb);
    const int64_t *lc = cxla_instr_ints(instr, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nlc);
    const int64_t *rc = cxla_instr_ints(instr, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nrc);
    if (!lb) nlb = 0;
    if (!rb) nrb = 0;
    if (!lc) nlc = 0;
    if (!rc) nrc = 0;
    if (nlb != nrb)
        return BAD(instr, "lhs_batch_dims has %" PRId64 " entries but rhs_batch_dims %" PRId64, nlb,
                   nrb);
    if (nlc != nrc)
        return BAD(instr,
                   "lhs_contracting_dims has %" PRId64 " entries but rhs_contracting_dims %" PRId64,
                   nlc, nrc);
    bool lused[CXLA_MAX_RANK] = {false}, rused[CXLA_MAX_RANK] = {false};
    if (!dims_unique(nlb, lb, ls->rank, lused) || !dims_unique(nlc, lc, ls->rank, lused))
        return BAD(instr,
                   "the lhs batch and contracting dims must be distinct dims of its %" PRId64
                   " dims",
                   ls->rank);
    if (!dims_unique(nrb, rb, rs->rank, rused) || !dims_unique(nrc, rc, rs->rank, rused))
        return BAD(instr,
                   "the rhs batch and contracting dims must be distinct dims of its %" PRId64
                   " dims",
                   rs->rank);
    p->nb = nlb;
    p->nc = nlc;
    p->B = p->M = p->N = p->K = 1;
    for (int64_t i = 0; i < nlb; i++) {
        if (ls->dims[lb[i]] != rs->dims[rb[i]])
            return BAD(instr,
                       "batch dims differ: lhs dim %" PRId64 " is %" PRId64 ", rhs dim %" PRId64
                       " is %" PRId64,
                       lb[i], ls->dims[lb[i]], rb[i], rs->dims[rb[i]]);
        p->lb[i] = lb[i];
        p->rb[i] = rb[i];
        p->B *= ls->dims[lb[i]];
    }
    for (int64_t i = 0; i < nlc; i++) {
        if (ls->dims[lc[i]] != rs->dims[rc[i]])
            return BAD(instr,
                       "contracting dims differ: lhs dim %" PRId64 " is %" PRId64
                       ", rhs dim %" PRId64 " is %" PRId64,
                       lc[i], ls->dims[lc[i]], rc[i], rs->dims[rc[i]]);
        p->lc[i] = lc[i];
        p->rc[i] = rc[i];
        p->K *= ls->dims[lc[i]];
    }
    p->nlf = p->nrf = 0;
    for (int64_t d = 0; d < ls->rank; d++)
        if (!lused[d]) {
            p->lf[p->nlf++] = d;
            p->M *= ls->dims[d];
        }
    for (int64_t d = 0; d < rs->rank; d++)
        if (!rused[d]) {
            p->rf[p->nrf++] = d;
            p->N *= rs->dims[d];
        }
    /* The result is [batch..., lhs free..., rhs free...]. */
    const cxla_shape *out = &instr->shape;
    bool ok = out->rank == p->nb + p->nlf + p->nrf;
    for (int64_t i = 0; ok && i < p->nb; i++) ok = out->dims[i] == ls->dims[lb[i]];
    for (int64_t i = 0; ok && i < p->nlf; i++) ok = out->dims[p->nb + i] == ls->dims[p->lf[i]];
    for (int64_t i = 0; ok && i < p->nrf; i++)
        ok = out->dims[p->nb + p->nlf + i] == rs->dims[p->rf[i]];
    if (!ok) return BAD(instr, "the result shape does not have the dims batch, lhs free, rhs free");
    return NULL;
}

static cxla_status op_dot(interp_ctx *ctx, const cxla_instr *instr,
                          const cxla_literal *const *operands, cxla_literal **out) {
    CXLA_RETURN_IF_ERROR(check_array(instr, operands[0], "lhs"));
    CXLA_RETURN_IF_ERROR(check_array(instr, operands[1], "rhs"));
    const cxla_shape *ls = cxla_literal_shape(operands[0]);
    const cxla_shape *rs = cxla_literal_shape(operands[1]);
    CXLA_RETURN_IF_ERROR(check_types(instr, ls->type, rs->type));
    dot_plan p;
    CXLA_RETURN_IF_ERROR(dot_prepare(instr, ls, rs, &p));
    int passes;
    CXLA_RETURN_IF_ERROR(nibble_passes(instr, &passes));

    cxla_type rt = instr->shape.type;
    compute_kind ck = pick_kind(rt, ls->type, rs->type);
    size_t cs = ck_size(ck);
    cxla_literal *result;
    CXLA_RETURN_IF_ERROR(interp_new_array(&instr->shape, &result));
    int64_t count = p.B * p.M * p.N;
    if (count == 0) {
        *out = result;
        return NULL;
    }
    /* Accumulate straight into the result when it is the compute type. */
    bool in_place = (ck == CK_F32 && rt == CXLA_F32) || (ck == CK_F64 && rt == CXLA_F64) ||
                    (ck == CK_C64 && rt == CXLA_C64) || (ck == CK_C128 && rt == CXLA_C128);
    size_t c_size = (size_t)count * cs, a_size = (size_t)(p.B * p.M * p.K) * cs,
           b_size = (size_t)(p.B * p.K * p.N) * cs;
    void *c = in_place ? cxla_literal_data(result) : scratch_alloc(c_size, true);
    int64_t lstr[CXLA_MAX_RANK], rstr[CXLA_MAX_RANK];
    interp_row_major_strides(ls->rank, ls->dims, lstr);
    interp_row_major_strides(rs->rank, rs->dims, rstr);
    int64_t *tab = xmalloc(sizeof(int64_t) * (size_t)(2 * p.B + p.M + p.N + 2 * p.K));
    int64_t *lbo = tab, *rbo = lbo + p.B, *mo = rbo + p.B, *no = mo + p.M, *lko = no + p.N,
            *rko = lko + p.K;
    if (tab) {
        dim_offsets(p.nb, p.lb, ls->dims, lstr, NULL, lbo);
        dim_offsets(p.nb, p.rb, rs->dims, rstr, NULL, rbo);
        dim_offsets(p.nlf, p.lf, ls->dims, lstr, NULL, mo);
        dim_offsets(p.nrf, p.rf, rs->dims, rstr, NULL, no);
        dim_offsets(p.nc, p.lc, ls->dims, lstr, NULL, lko);
        dim_offsets(p.nc, p.rc, rs->dims, rstr, NULL, rko);
    }
    /* An operand already [B][M][K] (or [B][K][N]) in the compute type is read where it
     * lies; the others are gathered into work memory. */
    bool a_lies = tab && passes == 1 && lies_as(operands[0], ck, lbo, p.B, mo, p.M, lko, p.K);
    bool b_lies = tab && passes == 1 && lies_as(operands[1], ck, rbo, p.B, rko, p.K, no, p.N);
    void *a = a_lies ? (void *)cxla_literal_data_const(operands[0]) : scratch_alloc(a_size, false);
    void *b = b_lies ? (void *)cxla_literal_data_const(operands[1]) : scratch_alloc(b_size, false);
    cxla_status s = NULL;
    if (!c || !tab || (!a && !a_lies) || (!b && !b_lies)) s = OOM(); /* (empty: NULL data) */
    for (int pass = 0; pass < passes && !s; pass++) {
        int nibble = passes == 2 ? pass + 1 : 0;
        if (!a_lies) s = gather_widen(operands[0], rt, ck, nibble, lbo, p.B, mo, p.M, lko, p.K, a);
        if (!s && !b_lies)
            s = gather_widen(operands[1], rt, ck, nibble, rbo, p.B, rko, p.K, no, p.N, b);
        for (int64_t i = 0; i < p.B && !s; i++) /* a [B][M][K] times b [B][K][N] */
            gemm(ck, p.M, p.N, p.K, (const char *)a + (size_t)(i * p.M * p.K) * cs, p.K,
                 (const char *)b + (size_t)(i * p.K * p.N) * cs, p.N,
                 (char *)c + (size_t)(i * p.M * p.N) * cs, p.N);
    }
    if (!s && !in_place) narrow(ck, c, rt, cxla_literal_data(result), count);
    if (!in_place) scratch_free(c, c_size);
    free(tab);
    if (!a_lies) scratch_free(a, a_size);
    if (!b_lies) scratch_free(b, b_size);
    if (s) {
        cxla_literal_free(result);
        return s;
    }
    *out = result;
    return NULL;
}

/* ---- convolution -------------------------------------------------------------------- */

typedef struct conv_plan {
    int64_t n; /* spatial dims */
    int64_t ib_dim, iz_dim, isp[CXLA_MAX_RANK];
    int64_t ki_dim, ko_dim, ksp[CXLA_MAX_RANK];
    int64_t ob_dim, oz_dim, osp[CXLA_MAX_RANK];
    int64_t IB, IZ, KZ, OZ, OB, G, BG;
    int64_t in_size[CXLA_MAX_RANK], k_size[CXLA_MAX_RANK], out_size[CXLA_MAX_RANK];
    int64_t stride[CXLA_MAX_RANK], pad_low[CXLA_MAX_RANK], lhs_dil[CXLA_MAX_RANK],
        rhs_dil[CXLA_MAX_RANK];
    bool reverse[CXLA_MAX_RANK];
    int64_t SPin, S, P; /* input spatial elements, output spatial positions, window size */
} conv_plan;

static bool labels_ok(int64_t a, int64_t b, int64_t n, const int64_t *sp, int64_t rank) {
    bool used[CXLA_MAX_RANK] = {false};
    int64_t two[2] = {a, b};
    return rank == n + 2 && dims_unique(2, two, rank, used) && dims_unique(n, sp, rank, used);
}

static cxla_status conv_prepare(const cxla_instr *instr, const cxla_shape *ls, const cxla_shape *rs,
                                conv_plan *p) {
    const cxla_attr *dl = cxla_instr_attr(instr, CXLA_ATTR_DIM_LABELS);
    if (!dl || dl->kind != CXLA_ATTR_KIND_DIM_LABELS)
        return BAD(instr, "needs dim_labels (e.g. b01f_01io->b01f)");
    const cxla_conv_dims *d = &dl->v.conv;
    const cxla_shape *os = &instr->shape;
    int64_t n = d->spatial_count;
    if (n < 0 || n + 2 > CXLA_MAX_RANK) return BAD(instr, "bad number of spatial dims");
    if (!labels_ok(d->input_batch, d->input_feature, n, d->input_spatial, ls->rank) ||
        !labels_ok(d->kernel_input_feature, d->kernel_output_feature, n, d->kernel_spatial,
                   rs->rank) ||
        !labels_ok(d->output_batch, d->output_feature, n, d->output_spatial, os->rank))
        return BAD(instr,
                   "dim_labels with %" PRId64 " spatial dims do not fit operands of rank %" PRId64
                   " and %" PRId64 " and a result of rank %" PRId64,
                   n, ls->rank, rs->rank, os->rank);
    const cxla_attr *w = cxla_instr_attr(instr, CXLA_ATTR_WINDOW);
    int64_t wrank = w && w->kind == CXLA_ATTR_KIND_WINDOW ? w->v.window.rank : 0;
    if (wrank != n)
        return BAD(instr,
                   "the window has %" PRId64 " dims but the convolution %" PRId64 " spatial dims",
                   wrank, n);
    p->n = n;
    p->ib_dim = d->input_batch;
    p->iz_dim = d->input_feature;
    p->ki_dim = d->kernel_input_feature;
    p->ko_dim = d->kernel_output_feature;
    p->ob_dim = d->output_batch;
    p->oz_dim = d->output_feature;
    p->SPin = p->S = p->P = 1;
    for (int64_t i = 0; i < n; i++) {
        const cxla_window_dim *wd = &w->v.window.dims[i];
        p->isp[i] = d->input_spatial[i];
        p->ksp[i] = d->kernel_spatial[i];
        p->osp[i] = d->output_spatial[i];
        p->in_size[i] = ls->dims[p->isp[i]];
        p->k_size[i] = rs->dims[p->ksp[i]];
        p->out_size[i] = os->dims[p->osp[i]];
        if (wd->size != p->k_size[i])
            return BAD(instr,
                       "window size %" PRId64 " in spatial dim %" PRId64
                       " differs from the kernel's %" PRId64,
                       wd->size, i, p->k_size[i]);
        if (wd->stride < 1 || wd->lhs_dilation < 1 || wd->rhs_dilation < 1)
            return BAD(instr, "window strides and dilations must be >= 1");
        p->stride[i] = wd->stride;
        p->pad_low[i] = wd->pad_low;
        p->lhs_dil[i] = wd->lhs_dilation;
        p->rhs_dil[i] = wd->rhs_dilation;
        p->reverse[i] = wd->reversal;
        p->SPin *= p->in_size[i];
        p->S *= p->out_size[i];
        p->P *= p->k_size[i];
    }
    int64_t g = 1, bg = 1;
    cxla_instr_int(instr, CXLA_ATTR_FEATURE_GROUP_COUNT, &g);
    cxla_instr_int(instr, CXLA_ATTR_BATCH_GROUP_COUNT, &bg);
    p->G = g;
    p->BG = bg;
    p->IB = ls->dims[p->ib_dim];
    p->IZ = ls->dims[p->iz_dim];
    p->KZ = rs->dims[p->ki_dim];
    p->OZ = rs->dims[p->ko_dim];
    p->OB = os->dims[p->ob_dim];
    if (g < 1 || bg < 1)
        return BAD(instr, "feature_group_count and batch_group_count must be >= 1");
    if (p->IZ != p->KZ * g)
        return BAD(instr,
                   "input features (%" PRId64 ") must be kernel input features (%" PRId64
                   ") times feature_group_count (%" PRId64 ")",
                   p->IZ, p->KZ, g);
    if (p->OZ % g != 0 || p->OZ % bg != 0)
        return BAD(instr,
                   "kernel output features (%" PRId64 ") must be divisible by "
                   "feature_group_count (%" PRId64 ") and batch_group_count (%" PRId64 ")",
                   p->OZ, g, bg);
    if (p->IB % bg != 0 || p->OB != p->IB / bg)
        return BAD(instr,
                   "the output batch (%" PRId64 ") must be the input batch (%" PRId64
                   ") divided by batch_group_count (%" PRId64 ")",
                   p->OB, p->IB, bg);
    if (os->dims[p->oz_dim] != p->OZ)
        return BAD(instr, "the output feature dim (%" PRId64 ") must be the kernel's (%" PRId64 ")",
                   os->dims[p->oz_dim], p->OZ);
    return NULL;
}

/* For spatial dim |i|: tab[o * K + k] = the input index read by output position o and
 * window position k, or -1 when that falls in padding or a dilation hole. */
static void conv_index_table(const conv_plan *p, int64_t i, int64_t *tab) {
    for (int64_t o = 0; o < p->out_size[i]; o++)
        for (int64_t k = 0; k < p->k_size[i]; k++) {
            int64_t u = o * p->stride[i] - p->pad_low[i] + k * p->rhs_dil[i];
            int64_t v = -1;
            if (u >= 0 && u % p->lhs_dil[i] == 0) {
                v = u / p->lhs_dil[i];
                if (v >= p->in_size[i]) v = -1;
            }
            tab[o * p->k_size[i] + k] = v;
        }
}

/* ---- phase classes: lhs dilation without its holes ----------------------------------
 *
 * With lhs dilation d in a spatial dim, output position o reads window position k only
 * when u = o * stride - pad_low + k * rhs_dilation is a multiple of d; every other tap
 * falls into a hole. Whether it does depends on o only through o mod T, with
 * T = d / gcd(stride, d) (o and o' agree when (o - o') * stride is a multiple of d). So the
 * outputs o = j, j + T, j + 2T, ... (class j, j < T) all read the same window positions,
 * and the convolution splits into the product over the spatial dims of these classes, each
 * an ordinary convolution over its own outputs with the kernel cut down to the positions
 * that are no hole for it: a transposed convolution with lhs dilation 8 in two dims
 * multiplies by 1/64 of the window instead of multiplying 63/64 of it by zeros. Without lhs
 * dilation T = 1 and the one class is the whole convolution.
 *
 * The sums stay bit for bit what they were: each output element still adds the products
 * of its remaining taps in ascending window position, then input feature, from +0, and
 * the taps left out are holes, which the direct form always skipped and the im2col form
 * filled with zeros: a product 0 * w (w finite: other kernels take the direct form) is +-0,
 * and adding +-0 to a sum that starts at +0 never changes it (a sum from +0 is never -0
 * under round to nearest: x + y is -0 only when both are -0), so skipping it is the
 * same. */

typedef struct conv_class {
    int64_t o0[CXLA_MAX_RANK], ostep[CXLA_MAX_RANK], on[CXLA_MAX_RANK]; /* o0 + m * ostep */
    const int64_t *k[CXLA_MAX_RANK]; /* the window positions of each dim it reads, ascending */
    int64_t kn[CXLA_MAX_RANK];
    int64_t rows, P; /* its output positions, its window positions */
} conv_class;

typedef struct conv_classes {
    int64_t T[CXLA_MAX_RANK], C[CXLA_MAX_RANK];    /* period, classes (min(T, out_size)) */
    int64_t *kn[CXLA_MAX_RANK], *k[CXLA_MAX_RANK]; /* [C]; [C][K]: class j's positions */
    int64_t count, max_rows;
} conv_classes;

static int64_t conv_gcd(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Entries of int64_t that conv_classes_init needs in |buf|. */
static int64_t conv_classes_size(const conv_plan *p) {
    int64_t size = 0;
    for (int64_t i = 0; i < p->n; i++) {
        int64_t d = p->lhs_dil[i], T = d / conv_gcd(p->stride[i], d);
        int64_t C = T < p->out_size[i] ? T : p->out_size[i];
        size += C * (p->k_size[i] + 1);
    }
    return size;
}

static void conv_classes_init(const conv_plan *p, int64_t *buf, conv_classes *cc) {
    cc->count = cc->max_rows = 1;
    for (int64_t i = 0; i < p->n; i++) {
        int64_t d = p->lhs_dil[i], K = p->k_size[i];
        int64_t T = d / conv_gcd(p->stride[i], d);
        int64_t C = T < p->out_size[i] ? T : p->out_size[i];
        cc->T[i] = T;
        cc->C[i] = C;
        cc->kn[i] = buf;
        cc->k[i] = buf + C;
        buf += C * (K + 1);
        for (int64_t j = 0; j < C; j++) {
            int64_t r = (j * p->stride[i] - p->pad_low[i]) % d, n = 0;
            for (int64_t k = 0; k < K; k++)
                if ((r + k * p->rhs_dil[i]) % d == 0) cc->k[i][j * K + n++] = k;
            cc->kn[i][j] = n;
        }
        cc->count *= C;
        cc->max_rows *= C > 0 ? (p->out_size[i] + T - 1) / T : 0;
    }
}

/* Class |c| (row-major over the dims' classes). */
static void conv_class_of(const conv_plan *p, const conv_classes *cc, int64_t c, conv_class *cl) {
    cl->rows = cl->P = 1;
    for (int64_t i = p->n - 1; i >= 0; i--) {
        int64_t j = c % cc->C[i];
        c /= cc->C[i];
        cl->o0[i] = j;
        cl->ostep[i] = cc->T[i];
        cl->on[i] = (p->out_size[i] - j + cc->T[i] - 1) / cc->T[i];
        cl->k[i] = cc->k[i] + j * p->k_size[i];
        cl->kn[i] = cc->kn[i][j];
        cl->rows *= cl->on[i];
        cl->P *= cl->kn[i];
    }
}

/* The multi-index (over the class's outputs) of its row |r|. */
static void conv_class_row(const conv_plan *p, const conv_class *cl, int64_t r, int64_t *m) {
    for (int64_t i = p->n - 1; i >= 0; i--) {
        m[i] = r % cl->on[i];
        r /= cl->on[i];
    }
}

static void conv_class_next(const conv_plan *p, const int64_t *lim, int64_t *m) {
    for (int64_t i = p->n - 1; i >= 0; i--) {
        if (++m[i] < lim[i]) break;
        m[i] = 0;
    }
}

/* srow[j] = the output spatial position (row-major over the output's spatial dims) of the
 * class's row r0 + j, for j < rows; returns whether they are consecutive. */
static bool conv_class_positions(const conv_plan *p, const conv_class *cl, int64_t r0, int64_t rows,
                                 int64_t *srow) {
    int64_t m[CXLA_MAX_RANK];
    conv_class_row(p, cl, r0, m);
    bool consecutive = true;
    for (int64_t j = 0; j < rows; j++) {
        int64_t s = 0;
        for (int64_t i = 0; i < p->n; i++) s = s * p->out_size[i] + cl->o0[i] + m[i] * cl->ostep[i];
        srow[j] = s;
        consecutive = consecutive && s == srow[0] + j;
        conv_class_next(p, cl->on, m);
    }
    return consecutive;
}

/* The packed input offset (in positions of the packed spatial block) read by output
 * multi-index |m| of the class and its window multi-index |w|, or -1 in padding. */
static int64_t conv_class_tap(const conv_plan *p, const conv_class *cl, int64_t *const *tabs,
                              const int64_t *in_str, const int64_t *m, const int64_t *w) {
    int64_t lin = 0;
    for (int64_t i = 0; i < p->n; i++) {
        int64_t o = cl->o0[i] + m[i] * cl->ostep[i];
        int64_t v = tabs[i][o * p->k_size[i] + cl->k[i][w[i]]];
        if (v < 0) return -1;
        lin += v * in_str[i];
    }
    return lin;
}

/* Rows [r0, r0 + rows) of the class's im2col matrix for input batch |ib| and input
 * features [z0, z0 + KZ): col[r][w * KZ + kz] = x[ib][input position of (r, w)][z0 + kz],
 * or 0 in padding, w over the class's window positions. */
static void conv_im2col(const conv_plan *p, const conv_class *cl, int64_t *const *tabs,
                        const int64_t *in_str, const unsigned char *x, size_t cs, int64_t ib,
                        int64_t z0, int64_t r0, int64_t rows, unsigned char *col) {
    size_t seg = (size_t)p->KZ * cs;
    int64_t m[CXLA_MAX_RANK], w[CXLA_MAX_RANK];
    conv_class_row(p, cl, r0, m);
    const unsigned char *xb = x + (size_t)(ib * p->SPin * p->IZ + z0) * cs;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < p->n; i++) w[i] = 0;
        for (int64_t t = 0; t < cl->P; t++) {
            int64_t lin = conv_class_tap(p, cl, tabs, in_str, m, w);
            if (lin >= 0)
                memcpy(col, xb + (size_t)(lin * p->IZ) * cs, seg);
            else
                memset(col, 0, seg);
            col += seg;
            conv_class_next(p, cl->kn, w);
        }
        conv_class_next(p, cl->on, m);
    }
}

/* acc += sum_k x[k] * w[k * ws] in the compute type, in ascending k. */
static void mac_run(compute_kind ck, int64_t n, const void *xv, const void *wv, int64_t ws,
                    void *acc) {
    switch (ck) {
    case CK_F32: {
        const float *x = xv, *w = wv;
        float a = *(float *)acc;
        for (int64_t k = 0; k < n; k++) a += x[k] * w[k * ws];
        *(float *)acc = a;
        return;
    }
    case CK_F64: {
        const double *x = xv, *w = wv;
        double a = *(double *)acc;
        for (int64_t k = 0; k < n; k++) a += x[k] * w[k * ws];
        *(double *)acc = a;
        return;
    }
    case CK_C64: {
        const float *x = xv, *w = wv;
        float *a = acc;
        for (int64_t k = 0; k < n; k++) {
            float xr = x[2 * k], xi = x[2 * k + 1], wr = w[2 * k * ws], wi = w[2 * k * ws + 1];
            float pr = xr * wr - xi * wi, pi = xr * wi + xi * wr;
            a[0] += pr;
            a[1] += pi;
        }
        return;
    }
    case CK_C128: {
        const double *x = xv, *w = wv;
        double *a = acc;
        for (int64_t k = 0; k < n; k++) {
            double xr = x[2 * k], xi = x[2 * k + 1], wr = w[2 * k * ws], wi = w[2 * k * ws + 1];
            double pr = xr * wr - xi * wi, pi = xr * wi + xi * wr;
            a[0] += pr;
            a[1] += pi;
        }
        return;
    }
    case CK_INT: {
        const uint64_t *x = xv, *w = wv;
        uint64_t a = *(uint64_t *)acc;
        for (int64_t k = 0; k < n; k++) a += x[k] * w[k * ws];
        *(uint64_t *)acc = a;
        return;
    }
    }
}

/* True when the packed kernel holds an inf or NaN (float and complex kinds). */
static bool has_non_finite(compute_kind ck, const void *w, int64_t count) {
    if (ck == CK_F32 || ck == CK_C64) {
        const float *f = w;
        int64_t n = ck == CK_C64 ? 2 * count : count;
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(f[i])) return true;
    } else if (ck == CK_F64 || ck == CK_C128) {
        const double *d = w;
        int64_t n = ck == CK_C128 ? 2 * count : count;
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(d[i])) return true;
    }
    return false;
}

/* The direct form, used when the kernel has infs or NaNs: window positions that fall in
 * padding are skipped, as the seed's pseudo-code and XLA's evaluator do, instead of
 * multiplying the kernel by a zero (inf * 0 would make a NaN); holes are not in the class.
 * Adds into o[s][z] (rows of OZ) for the class's rows [r0, r0 + rows) at positions |srow|,
 * z in [z0, z1), input batch |ib|, input features from |zin|; |wk| is the class's kernel,
 * [window position][KZ][OZ]. */
static void conv_direct(const conv_plan *p, const conv_class *cl, compute_kind ck,
                        int64_t *const *tabs, const int64_t *in_str, const unsigned char *x,
                        const unsigned char *wk, size_t cs, int64_t ib, int64_t zin, int64_t z0,
                        int64_t z1, int64_t r0, int64_t rows, const int64_t *srow,
                        unsigned char *o) {
    int64_t m[CXLA_MAX_RANK], w[CXLA_MAX_RANK];
    conv_class_row(p, cl, r0, m);
    const unsigned char *xb = x + (size_t)(ib * p->SPin * p->IZ + zin) * cs;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t z = z0; z < z1; z++) {
            unsigned char *acc = o + (size_t)(srow[r] * p->OZ + z) * cs;
            for (int64_t i = 0; i < p->n; i++) w[i] = 0;
            for (int64_t t = 0; t < cl->P; t++) {
                int64_t lin = conv_class_tap(p, cl, tabs, in_str, m, w);
                if (lin >= 0)
                    mac_run(ck, p->KZ, xb + (size_t)(lin * p->IZ) * cs,
                            wk + (size_t)(t * p->KZ * p->OZ + z) * cs, p->OZ, acc);
                conv_class_next(p, cl->kn, w);
            }
        }
        conv_class_next(p, cl->on, m);
    }
}

/* wsub[t] = wk[window position of the class's t-th]: KZ * OZ elements each. */
static void conv_class_kernel(const conv_plan *p, const conv_class *cl, const unsigned char *wk,
                              size_t cs, unsigned char *wsub) {
    size_t block = (size_t)(p->KZ * p->OZ) * cs;
    int64_t w[CXLA_MAX_RANK] = {0};
    for (int64_t t = 0; t < cl->P; t++) {
        int64_t pos = 0;
        for (int64_t i = 0; i < p->n; i++) pos = pos * p->k_size[i] + cl->k[i][w[i]];
        memcpy(wsub + (size_t)t * block, wk + (size_t)pos * block, block);
        conv_class_next(p, cl->kn, w);
    }
}

/* Elements of im2col built and multiplied at a time (bounds the buffer to ~8 MiB). */
enum { CONV_COL_ELEMENTS = 1 << 20 };

/* Rows of a class (of |KC| columns) built at a time. */
static int64_t conv_chunk_rows(int64_t KC, int64_t rows) {
    int64_t r = KC > 0 ? CONV_COL_ELEMENTS / KC : rows;
    if (r < 1) r = 1;
    return r < rows ? r : rows;
}

/* A convolution whose sums are not the result itself (another type than the compute type,
 * or another dim order) runs as tiles: blocks of output batches and of whole feature
 * groups, each with its input gathered in the compute type, its part of the kernel and
 * its sums, narrowed into the result before the next. Compute values of input and sums
 * a tile holds, at most (or one batch and group); the whole operands in f32 were the
 * work memory (a depthwise bf16 convolution held 3.5x its live set). Every output
 * element is in one tile and gets the same products in the same order as untiled. */
enum { CONV_TILE_ELEMENTS = 1 << 16 };
int64_t interp_conv_tile_elements = CONV_TILE_ELEMENTS;

/* What the tiles of a convolution share: its plan (whole), classes, tables and buffers. */
typedef struct conv_work {
    const conv_plan *p;
    const conv_classes *cc;
    compute_kind ck;
    size_t cs;
    int64_t *const *tabs;
    const int64_t *in_str;
    bool split, direct;
    unsigned char *col, *wsub, *part;
    int64_t *srow;
} conv_work;

/* The sums of tile |t| (its plan: the batches, features and groups it covers) into |o|,
 * [OB][S][OZ] of |t|, from its input |x|, [IB][SPin][IZ] of |t|, and kernel |wk|, [P][KZ][OZ]
 * of |t|: the classes' products, as im2col and gemm or the direct form. */
static void conv_tile(const conv_work *w, const conv_plan *t, const unsigned char *x,
                      const unsigned char *wk, unsigned char *o) {
    compute_kind ck = w->ck;
    size_t cs = w->cs;
    int64_t OZg = t->OZ / t->G, OZb = t->OZ / t->BG;
    for (int64_t c = 0; c < w->cc->count; c++) {
        conv_class cl;
        conv_class_of(t, w->cc, c, &cl);
        int64_t KCc = cl.P * t->KZ;
        if (cl.rows == 0 || KCc == 0) continue; /* no products: its sums stay +0 */
        const unsigned char *wc = wk;
        if (w->split) {
            conv_class_kernel(t, &cl, wk, cs, w->wsub);
            wc = w->wsub;
        }
        int64_t rows_per = w->direct ? conv_chunk_rows(1, cl.rows) : conv_chunk_rows(KCc, cl.rows);
        /* Output features [z0, z1) share one feature group and one batch group. */
        for (int64_t z0 = 0; z0 < t->OZ;) {
            int64_t fg = z0 / OZg, bgi = z0 / OZb;
            int64_t z1 = (fg + 1) * OZg < (bgi + 1) * OZb ? (fg + 1) * OZg : (bgi + 1) * OZb;
            int64_t zn = z1 - z0;
            for (int64_t ob = 0; ob < t->OB; ob++) {
                int64_t ib = ob + bgi * t->OB;
                unsigned char *ob_o = o + (size_t)(ob * t->S * t->OZ) * cs;
                for (int64_t r0 = 0; r0 < cl.rows; r0 += rows_per) {
                    int64_t rows = cl.rows - r0 < rows_per ? cl.rows - r0 : rows_per;
                    bool line = conv_class_positions(t, &cl, r0, rows, w->srow);
                    if (w->direct) {
                        conv_direct(t, &cl, ck, w->tabs, w->in_str, x, wc, cs, ib, fg * t->KZ, z0,
                                    z1, r0, rows, w->srow, ob_o);
                        continue;
                    }
                    conv_im2col(t, &cl, w->tabs, w->in_str, x, cs, ib, fg * t->KZ, r0, rows,
                                w->col);
                    if (line) { /* straight into the output's rows */
                        gemm(ck, rows, zn, KCc, w->col, KCc, wc + (size_t)z0 * cs, t->OZ,
                             ob_o + (size_t)(w->srow[0] * t->OZ + z0) * cs, t->OZ);
                        continue;
                    }
                    /* Scattered rows: their sums so far in, the products added, back out. */
                    size_t zb = (size_t)zn * cs;
                    for (int64_t j = 0; j < rows; j++)
                        memcpy(w->part + j * zb, ob_o + (size_t)(w->srow[j] * t->OZ + z0) * cs, zb);
                    gemm(ck, rows, zn, KCc, w->col, KCc, wc + (size_t)z0 * cs, t->OZ, w->part, zn);
                    for (int64_t j = 0; j < rows; j++)
                        memcpy(ob_o + (size_t)(w->srow[j] * t->OZ + z0) * cs, w->part + j * zb, zb);
                }
            }
            z0 = z1;
        }
    }
}

static cxla_status op_convolution(interp_ctx *ctx, const cxla_instr *instr,
                                  const cxla_literal *const *operands, cxla_literal **out) {
    CXLA_RETURN_IF_ERROR(check_array(instr, operands[0], "input (lhs)"));
    CXLA_RETURN_IF_ERROR(check_array(instr, operands[1], "kernel (rhs)"));
    const cxla_shape *ls = cxla_literal_shape(operands[0]);
    const cxla_shape *rs = cxla_literal_shape(operands[1]);
    CXLA_RETURN_IF_ERROR(check_types(instr, ls->type, rs->type));
    conv_plan p;
    CXLA_RETURN_IF_ERROR(conv_prepare(instr, ls, rs, &p));
    int passes;
    CXLA_RETURN_IF_ERROR(nibble_passes(instr, &passes));

    cxla_type rt = instr->shape.type;
    compute_kind ck = pick_kind(rt, ls->type, rs->type);
    size_t cs = ck_size(ck);
    cxla_literal *result;
    CXLA_RETURN_IF_ERROR(interp_new_array(&instr->shape, &result));
    int64_t count = cxla_literal_element_count(result);
    if (count == 0) {
        *out = result;
        return NULL;
    }
    int64_t n = p.n, KC = p.P * p.KZ;
    int64_t lstr[CXLA_MAX_RANK], rstr[CXLA_MAX_RANK], ostr[CXLA_MAX_RANK];
    interp_row_major_strides(ls->rank, ls->dims, lstr);
    interp_row_major_strides(rs->rank, rs->dims, rstr);
    interp_row_major_strides(instr->shape.rank, instr->shape.dims, ostr);

    /* Offset tables: input [IB][SPin][IZ], kernel [P][KZ][OZ], output [OB][S][OZ]; the
     * index tables of the spatial dims; the classes. */
    int64_t ntab = p.IB + p.SPin + p.IZ + p.P + p.KZ + p.OZ + p.OB + p.S + p.OZ;
    int64_t tsz = 0;
    for (int64_t i = 0; i < n; i++) tsz += p.out_size[i] * p.k_size[i];
    int64_t csz = conv_classes_size(&p);
    conv_classes cc = {.count = 0};
    int64_t *tab = xmalloc(sizeof(int64_t) * (size_t)(ntab + tsz + csz));
    if (tab) conv_classes_init(&p, tab + ntab + tsz, &cc);
    if (!tab) {
        cxla_literal_free(result);
        return OOM();
    }
    int64_t *ibo = tab, *ispo = ibo + p.IB, *izo = ispo + p.SPin, *kpo = izo + p.IZ,
            *kio = kpo + p.P, *koo = kio + p.KZ, *obo = koo + p.OZ, *oso = obo + p.OB,
            *ozo = oso + p.S, *itab = ozo + p.OZ;
    int64_t *tabs[CXLA_MAX_RANK];
    int64_t in_str[CXLA_MAX_RANK]; /* strides of the packed input's spatial block */
    for (int64_t i = 0, off = 0; i < n; i++) {
        tabs[i] = itab + off;
        off += p.out_size[i] * p.k_size[i];
        conv_index_table(&p, i, tabs[i]);
    }
    interp_row_major_strides(n, p.in_size, in_str);
    dim_offsets(1, &p.ib_dim, ls->dims, lstr, NULL, ibo);
    dim_offsets(n, p.isp, ls->dims, lstr, NULL, ispo);
    dim_offsets(1, &p.iz_dim, ls->dims, lstr, NULL, izo);
    dim_offsets(n, p.ksp, rs->dims, rstr, p.reverse, kpo);
    dim_offsets(1, &p.ki_dim, rs->dims, rstr, NULL, kio);
    dim_offsets(1, &p.ko_dim, rs->dims, rstr, NULL, koo);
    dim_offsets(1, &p.ob_dim, instr->shape.dims, ostr, NULL, obo);
    dim_offsets(n, p.osp, instr->shape.dims, ostr, NULL, oso);
    dim_offsets(1, &p.oz_dim, instr->shape.dims, ostr, NULL, ozo);
    /* Accumulate straight into the result when it is of the compute type and its dims
     * are in the order [OB][S][OZ] (b01f, the usual NHWC): one tile. */
    bool in_place = (ck == CK_F32 && rt == CXLA_F32) || (ck == CK_F64 && rt == CXLA_F64) ||
                    (ck == CK_C64 && rt == CXLA_C64) || (ck == CK_C128 && rt == CXLA_C128);
    for (int64_t i = 0; in_place && i < p.OB; i++) in_place = obo[i] == i * p.S * p.OZ;
    for (int64_t i = 0; in_place && i < p.S; i++) in_place = oso[i] == i * p.OZ;
    for (int64_t i = 0; in_place && i < p.OZ; i++) in_place = ozo[i] == i;
    /* The tiles: |nb| output batches (batch groups: all) by |ng| feature groups. */
    int64_t OZg = p.OZ / p.G, nb = p.OB, ng = p.G;
    if (!in_place && p.BG == 1 && passes == 1) {  /* two passes add into the same sums */
        int64_t unit = p.SPin * p.KZ + p.S * OZg; /* one batch, one group */
        int64_t fit = unit > 0 ? interp_conv_tile_elements / unit : p.OB * p.G;
        if (fit < 1) fit = 1;
        if (fit >= p.G) {
            ng = p.G;
            nb = fit / p.G < p.OB ? fit / p.G : p.OB;
        } else {
            ng = fit;
            nb = 1;
        }
    }
    bool tiled = nb < p.OB || ng < p.G;
    /* An operand already in the compute type and the tile's order is read where it lies:
     * the input when untiled, the kernel always. */
    bool x_lies =
        passes == 1 && !tiled && lies_as(operands[0], ck, ibo, p.IB, ispo, p.SPin, izo, p.IZ);
    bool wk_lies = passes == 1 && lies_as(operands[1], ck, kpo, p.P, kio, p.KZ, koo, p.OZ);
    /* The largest chunk of rows and the im2col buffer any class needs (a class reads at most
     * the whole window; the chunks of the widest are the fewest rows). */
    int64_t max_rows = cc.max_rows;
    int64_t chunk = conv_chunk_rows(1, max_rows);
    int64_t col_elems = KC > CONV_COL_ELEMENTS ? KC : CONV_COL_ELEMENTS;
    if (col_elems > KC * max_rows) col_elems = KC * max_rows;
    /* With lhs dilation, each class multiplies by its own part of the kernel. */
    bool split = false;
    for (int64_t i = 0; i < n; i++) split = split || p.lhs_dil[i] > 1;
    int64_t tile_iz = ng * p.KZ, tile_oz = ng * OZg;
    size_t x_size = x_lies ? 0 : (size_t)(nb * (p.IB / p.OB) * p.SPin * tile_iz) * cs,
           wk_size = wk_lies ? 0 : (size_t)(p.P * p.KZ * p.OZ) * cs,
           wt_size = ng < p.G ? (size_t)(p.P * p.KZ * tile_oz) * cs : 0,
           o_size = in_place ? 0 : (size_t)(nb * p.S * tile_oz) * cs,
           col_size = (size_t)col_elems * cs, part_size = (size_t)(chunk * p.OZ) * cs,
           wsub_size = (size_t)(p.P * p.KZ * tile_oz) * cs;
    unsigned char *x = x_lies ? (unsigned char *)cxla_literal_data_const(operands[0])
                              : scratch_alloc(x_size, false);
    unsigned char *wk = wk_lies ? (unsigned char *)cxla_literal_data_const(operands[1])
                                : scratch_alloc(wk_size, false);
    unsigned char *wt = wt_size ? scratch_alloc(wt_size, false) : wk; /* the tile's kernel */
    unsigned char *o = in_place ? cxla_literal_data(result) : scratch_alloc(o_size, true);
    unsigned char *col = scratch_alloc(col_size, false);
    int64_t *srow = xmalloc(sizeof(int64_t) * (size_t)chunk);
    unsigned char *wsub = split ? scratch_alloc(wsub_size, false) : NULL;
    unsigned char *part = split ? scratch_alloc(part_size, false) : NULL;
    cxla_status s = NULL;
    if (!x || !wk || !wt || !o || !col || !srow || (split && (!wsub || !part))) s = OOM();
    conv_work w = {.p = &p,
                   .cc = &cc,
                   .ck = ck,
                   .cs = cs,
                   .tabs = tabs,
                   .in_str = in_str,
                   .split = split,
                   .col = col,
                   .wsub = wsub,
                   .part = part,
                   .srow = srow};
    for (int pass = 0; pass < passes && !s; pass++) {
        int nibble = passes == 2 ? pass + 1 : 0;
        if (!wk_lies)
            s = gather_widen(operands[1], rt, ck, nibble, kpo, p.P, kio, p.KZ, koo, p.OZ, wk);
        if (s) break;
        w.direct = has_non_finite(ck, wk, p.P * p.KZ * p.OZ);
        for (int64_t b0 = 0; b0 < p.OB && !s; b0 += nb) {
            for (int64_t g0 = 0; g0 < p.G && !s; g0 += ng) {
                conv_plan t = p;
                t.OB = p.OB - b0 < nb ? p.OB - b0 : nb;
                t.IB = t.OB * p.BG;
                t.G = p.G - g0 < ng ? p.G - g0 : ng;
                t.IZ = t.G * p.KZ;
                t.OZ = t.G * OZg;
                /* Its input: batches [b0, b0 + OB) (untiled: all, with the batch groups),
                 * input features of its groups. */
                if (!x_lies)
                    s = gather_widen(operands[0], rt, ck, nibble, ibo + b0, t.IB, ispo, p.SPin,
                                     izo + g0 * p.KZ, t.IZ, x);
                if (s) break;
                /* Its kernel: the output features of its groups, [P][KZ][OZ of t]. */
                if (wt != wk)
                    for (int64_t r = 0; r < p.P * p.KZ; r++)
                        memcpy(wt + (size_t)(r * t.OZ) * cs,
                               wk + (size_t)(r * p.OZ + g0 * OZg) * cs, (size_t)t.OZ * cs);
                if (tiled && pass == 0) memset(o, 0, (size_t)(t.OB * p.S * t.OZ) * cs);
                conv_tile(&w, &t, x, wt, o);
                if (in_place || (passes == 2 && pass == 0)) continue;
                /* Its sums into the result's dim order, rounding once. */
                unsigned char *dst = cxla_literal_data(result);
                size_t es = cxla_type_storage(rt);
                const unsigned char *src = o;
                int64_t z0 = g0 * OZg;
                bool z_last = t.OZ == 1 || ozo[z0 + 1] - ozo[z0] == 1;
                for (int64_t ob = b0; ob < b0 + t.OB; ob++)
                    for (int64_t sp = 0; sp < p.S; sp++) {
                        int64_t base = obo[ob] + oso[sp];
                        if (z_last) {
                            narrow(ck, src, rt, dst + (size_t)(base + ozo[z0]) * es, t.OZ);
                        } else {
                            for (int64_t z = 0; z < t.OZ; z++)
                                narrow(ck, src + (size_t)z * cs, rt,
                                       dst + (size_t)(base + ozo[z0 + z]) * es, 1);
                        }
                        src += (size_t)t.OZ * cs;
                    }
            }
        }
    }
    free(tab);
    if (!x_lies) scratch_free(x, x_size);
    if (!wk_lies) scratch_free(wk, wk_size);
    if (wt_size) scratch_free(wt, wt_size);
    if (!in_place) scratch_free(o, o_size);
    scratch_free(col, col_size);
    free(srow);
    scratch_free(wsub, wsub_size);
    scratch_free(part, part_size);
    if (s) {
        cxla_literal_free(result);
        return s;
    }
    *out = result;
    return NULL;
}

const interp_op_fn interp_linalg_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_DOT] = op_dot,
    [CXLA_OP_CONVOLUTION] = op_convolution,
};
