/* The elementwise family of the interpreter, from the inside: the typed kernels that the
 * handlers in interp_elementwise.c dispatch to.
 *
 * Every kernel works on |n| contiguous elements (the interpreter's values are row-major,
 * so an elementwise operation is a flat loop). The switch on the element type and on the
 * operation is outside the loops; inside is one tight loop per C type. A kernel returns
 * false when the operation does not apply to the element type (the handler turns that
 * into an error), true otherwise.
 *
 *   interp_elementwise_int.c      pred and the integers (sub-byte ones wrapped to width)
 *   interp_elementwise_float.c    f32, f64, c64, c128 (the small floats go through f32)
 *   interp_elementwise_convert.c  convert, bitcast-convert, reduce-precision,
 *                                 stochastic-convert, iota
 *
 * The choices where XLA leaves a result to the implementation are in docs/semantics.md,
 * "Elementwise operations".
 */
#ifndef CXLA_INTERP_INTERP_ELEMENTWISE_H_
#define CXLA_INTERP_INTERP_ELEMENTWISE_H_

#include "exec/math.h"
#include "interp/interp.h"

/* Small floats are widened to f32 this many elements at a time (stack buffers). */
enum { INTERP_EW_CHUNK = 256 };

/* Comparisons. */
typedef enum interp_cmp_dir {
    INTERP_CMP_EQ,
    INTERP_CMP_NE,
    INTERP_CMP_LT,
    INTERP_CMP_LE,
    INTERP_CMP_GT,
    INTERP_CMP_GE,
} interp_cmp_dir;

typedef enum interp_cmp_type {
    INTERP_CMP_DEFAULT, /* by the element type */
    INTERP_CMP_SIGNED,
    INTERP_CMP_UNSIGNED,
    INTERP_CMP_FLOAT,      /* IEEE: NaN is unordered */
    INTERP_CMP_TOTALORDER, /* -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN */
} interp_cmp_type;

/* ---- integers and pred (interp_elementwise_int.c) ---------------------------------- */

/* In the unary and binary kernels below (integer and float), |out| must not overlap the
 * operands: their loops are compiled with restrict pointers (operands may overlap each
 * other). */

/* Unary: negate abs sign not popcnt count-leading-zeros. Results are wrapped to the
 * width of sub-byte types. */
bool interp_ew_int_unary(cxla_opcode op, cxla_type type, const void *x, void *out, int64_t n);
/* Binary: add subtract multiply divide remainder power maximum minimum and or xor
 * shift-left shift-right-arithmetic shift-right-logical mulhi. */
bool interp_ew_int_binary(cxla_opcode op, cxla_type type, const void *a, const void *b, void *out,
                          int64_t n);
/* Comparison of integers or pred; |signed_order| picks the order (the bits are
 * reinterpreted when it differs from the type's own). */
void interp_ew_int_compare(interp_cmp_dir dir, bool signed_order, cxla_type type, const void *a,
                           const void *b, uint8_t *out, int64_t n);
/* Maximum and minimum with strides 0 or 1 (clamp's scalar bounds): out = min(hi,
 * max(lo, x)). */
void interp_ew_int_clamp(cxla_type type, const void *lo, int64_t lo_step, const void *x,
                         int64_t x_step, const void *hi, int64_t hi_step, void *out, int64_t n);
/* Wraps stored values to the width of a sub-byte type (sign- or zero-extended within the
 * byte); pred to 0/1. Does nothing for the other types. */
void interp_ew_int_wrap(cxla_type type, void *data, int64_t n);

/* ---- floats and complex (interp_elementwise_float.c) ------------------------------- */

/* Unary math on f32 or f64 (EXEC_MATH_UNARY, exec/math.h); the output has the input's
 * type. */
bool interp_ew_float_unary(cxla_opcode op, cxla_type type, const void *x, void *out, int64_t n);
/* is-finite of f32 or f64 into pred. */
void interp_ew_float_is_finite(cxla_type type, const void *x, uint8_t *out, int64_t n);
/* Binary: add subtract multiply divide remainder power atan2 maximum minimum on f32/f64. */
bool interp_ew_float_binary(cxla_opcode op, cxla_type type, const void *a, const void *b, void *out,
                            int64_t n);
/* IEEE comparison of f32 or f64 (NE is true when either side is NaN). */
void interp_ew_float_compare(interp_cmp_dir dir, cxla_type type, const void *a, const void *b,
                             uint8_t *out, int64_t n);
/* Total-order comparison of f32 or f64. */
void interp_ew_float_compare_total(interp_cmp_dir dir, cxla_type type, const void *a, const void *b,
                                   uint8_t *out, int64_t n);
/* clamp of f32 or f64 (NaN propagates; -0 < +0), bounds with strides 0 or 1. */
void interp_ew_float_clamp(cxla_type type, const void *lo, int64_t lo_step, const void *x,
                           int64_t x_step, const void *hi, int64_t hi_step, void *out, int64_t n);
/* Unary on c64/c128. abs, real and imag write the component type; the rest complex. */
bool interp_ew_complex_unary(cxla_opcode op, cxla_type type, const void *x, void *out, int64_t n);
/* Binary on c64/c128: add subtract multiply divide power atan2. */
bool interp_ew_complex_binary(cxla_opcode op, cxla_type type, const void *a, const void *b,
                              void *out, int64_t n);
/* EQ and NE of c64/c128 (both parts; total order compares the parts' bits); false for
 * the ordered directions. */
bool interp_ew_complex_compare(interp_cmp_dir dir, bool total, cxla_type type, const void *a,
                               const void *b, uint8_t *out, int64_t n);
/* complex(re, im): f32 -> c64, f64 -> c128. */
void interp_ew_make_complex(cxla_type component, const void *re, const void *im, void *out,
                            int64_t n);

/* One complex division as XLA's CPU backend does it (Smith's algorithm with the C99
 * Annex G recovery of infinities and zeros when the result is NaN + NaN i). */
void interp_ew_complex_divide(double ar, double ai, double br, double bi, double *cr, double *ci);
void interp_ew_complex_divide_f(float ar, float ai, float br, float bi, float *cr, float *ci);

/* ---- conversions (interp_elementwise_convert.c) ------------------------------------ */

/* Converts |n| elements of type |from| into |to| with the literal conversion rules
 * (docs/semantics.md): typed loops for the common pairs. */
void interp_ew_convert(cxla_type from, const void *src, cxla_type to, void *dst, int64_t n);
/* Reinterprets the bits of |in_count| elements of |from| as |out_count| elements of
 * |to| (the two bit totals are equal), little-endian: a wider element is split into its
 * parts lowest first, narrower ones are joined lowest first. */
void interp_ew_bitcast_convert(cxla_type from, const void *src, int64_t in_count, cxla_type to,
                               void *dst, int64_t out_count);
/* The bit width bitcast-convert gives a type (pred: 8, as XLA). */
int interp_ew_bitcast_bits(cxla_type type);
/* reduce-precision of |n| floats of |type| in place semantics (src -> dst). */
void interp_ew_reduce_precision(cxla_type type, const void *src, void *dst, int64_t n,
                                int64_t exponent_bits, int64_t mantissa_bits);
/* stochastic-convert of |n| floats of |from| with random bits |random| (unsigned, of the
 * same width) into the signed integer type |to|. */
void interp_ew_stochastic_convert(cxla_type from, const void *src, cxla_type random_type,
                                  const void *random, cxla_type to, void *dst, int64_t n);
/* Fills |out| (dims |dims|, row-major, element type |type|) with the index along
 * |dimension|. */
void interp_ew_iota(cxla_type type, int64_t rank, const int64_t *dims, int64_t dimension,
                    void *out);

#endif /* CXLA_INTERP_INTERP_ELEMENTWISE_H_ */
