/* cxla/literal.h: literals, i.e. arrays and tuples in host memory.
 *
 * A literal owns a copy of its shape and its bytes. An array literal's bytes are in its
 * shape's layout (the default row-major layout when the shape has none; the literal's
 * shape then carries the default layout explicitly). Element storage is as types.h says.
 * A tuple literal owns its element literals. Token literals hold no data.
 *
 * Ownership: every cxla_literal** out parameter hands a new literal to the caller, who
 * frees it with cxla_literal_free. On error nothing is returned and nothing leaks.
 */
#ifndef CXLA_LITERAL_H_
#define CXLA_LITERAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxla/shape.h"
#include "cxla/status.h"
#include "cxla/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cxla_literal cxla_literal;

/* A zero-filled literal of |shape| (tuples get zero-filled elements). Tiled layouts are
 * rejected: host literals are plain strided arrays. */
cxla_status cxla_literal_create(const cxla_shape *shape, cxla_literal **out_literal);
/* A tuple that takes ownership of |elements| (the array itself stays the caller's). */
cxla_status cxla_literal_create_tuple(cxla_literal **elements, int64_t count,
                                      cxla_literal **out_literal);
/* A rank-0 literal holding |value| converted to |type| (as cxla_literal_set_f64 does). */
cxla_status cxla_literal_create_scalar(cxla_type type, double value, cxla_literal **out_literal);
/* A deep copy (tuples with their elements, dynamic sizes kept). */
cxla_status cxla_literal_clone(const cxla_literal *literal, cxla_literal **out_literal);
void cxla_literal_destroy(cxla_literal *literal); /* NULL is fine */
/* Deprecated alias of cxla_literal_destroy, kept for one release (see docs/c-api.md). */
void cxla_literal_free(cxla_literal *literal);

/* The literal's shape, borrowed: valid while the literal lives (arrays always carry a
 * layout here). */
const cxla_shape *cxla_literal_shape(const cxla_literal *literal);
cxla_type cxla_literal_type(const cxla_literal *literal);
int64_t cxla_literal_element_count(const cxla_literal *literal); /* arrays; 0 for others */
/* The raw bytes of an array literal, in its layout; NULL for tuples and tokens. */
void *cxla_literal_data(cxla_literal *literal);
const void *cxla_literal_data_const(const cxla_literal *literal);
size_t cxla_literal_byte_size(const cxla_literal *literal);
int64_t cxla_literal_tuple_count(const cxla_literal *literal); /* 0 for arrays */
/* Element |i| of a tuple, borrowed (it belongs to the tuple); NULL when |i| is out of
 * range. */
cxla_literal *cxla_literal_tuple_element(cxla_literal *literal, int64_t i);
const cxla_literal *cxla_literal_tuple_element_const(const cxla_literal *literal, int64_t i);
/* Takes element |i| out of a tuple (its slot becomes an empty tuple) and returns it; the
 * caller owns it. NULL when |i| is out of range or memory is short. */
cxla_literal *cxla_literal_tuple_take(cxla_literal *literal, int64_t i);

/* Element access by logical multi-index (rank entries, ignored for rank 0). Errors: not
 * an array, an index out of range, a type that cannot hold the value as asked (getting
 * a complex as real is an error; get the parts with _c128).
 *   f64: any numeric type, converted (pred 0/1, integers exactly where they fit).
 *   s64/u64: integer and pred types, exactly.
 *   c128: any numeric type (imaginary part 0 for reals).
 * Setters convert as cxla_literal_convert does (round to nearest even, saturate...); so
 * set_c128 needs a complex literal, as convert refuses complex -> real. */
cxla_status cxla_literal_get_f64(const cxla_literal *literal, const int64_t *index,
                                 double *out_value);
cxla_status cxla_literal_get_s64(const cxla_literal *literal, const int64_t *index,
                                 int64_t *out_value);
cxla_status cxla_literal_get_u64(const cxla_literal *literal, const int64_t *index,
                                 uint64_t *out_value);
cxla_status cxla_literal_get_c128(const cxla_literal *literal, const int64_t *index,
                                  double *out_real, double *out_imag);
cxla_status cxla_literal_set_f64(cxla_literal *literal, const int64_t *index, double value);
cxla_status cxla_literal_set_s64(cxla_literal *literal, const int64_t *index, int64_t value);
cxla_status cxla_literal_set_u64(cxla_literal *literal, const int64_t *index, uint64_t value);
cxla_status cxla_literal_set_c128(cxla_literal *literal, const int64_t *index, double real,
                                  double imag);

/* Dynamic sizes (XLA's Literal::GetDynamicSize / SetDynamicSize). An array literal whose
 * shape has bounded dynamic dimensions ("f32[<=10]") holds storage for the bounds and a
 * current size per dimension, at most its bound: the elements at indices below the sizes
 * are the value; the rest is padding whose content is unspecified. Element access
 * (get/set, cxla_literal_data, cxla_literal_element_count) covers the whole bounded
 * storage; printing, comparison, cxla_literal_to_static and .npy files see only the
 * value. A new literal is at its bounds; clone, convert and relayout keep the sizes.
 * Static dimensions always have their full size. */
/* The current size of dimension |dim|: -1 when |literal| is not an array or |dim| is out
 * of range. */
int64_t cxla_literal_dynamic_size(const cxla_literal *literal, int64_t dim);
/* Sets the current size of dimension |dim|. Errors: not an array, |dim| out of range, a
 * static dimension (unless |size| is its size), |size| outside 0..bound. */
cxla_status cxla_literal_set_dynamic_size(cxla_literal *literal, int64_t dim, int64_t size);
/* True when some dimension of |literal| (or of an array in it, for tuples) is below its
 * bound. */
bool cxla_literal_is_padded(const cxla_literal *literal);
/* A new literal with the value only: each array's shape becomes static with its current
 * sizes as dimensions, in the default layout (XLA's ToStatic). Tuples leaf by leaf. */
cxla_status cxla_literal_to_static(const cxla_literal *literal, cxla_literal **out_literal);
/* The value of |literal| in storage of |shape| (same element types and ranks; tuples
 * leaf by leaf; XLA's ToBoundedDynamic): each current size must equal a static dimension
 * of |shape| or be at most a bounded one, which it becomes the size of; an unbounded
 * ('?') dimension takes the size and is static in the result. Layout: |shape|'s. */
cxla_status cxla_literal_to_bounded(const cxla_literal *literal, const cxla_shape *shape,
                                    cxla_literal **out_literal);

/* Converts every element to |type| (arrays, and tuples leaf by leaf). The rules, written
 * in docs/semantics.md: integer -> float rounds to nearest even; float -> integer
 * truncates toward zero, saturates at the type's limits and maps NaN to 0; float ->
 * narrower float rounds to nearest even; integer -> narrower integer wraps; anything ->
 * pred is "!= 0"; real -> complex has imaginary 0. Complex -> real, integer or pred is
 * INVALID_ARGUMENT, as XLA's Literal::Convert and convert refuse it (take the real part
 * with cxla_literal_get_c128). */
cxla_status cxla_literal_convert(const cxla_literal *literal, cxla_type type,
                                 cxla_literal **out_literal);
/* The same values in another layout (NULL: the default). */
cxla_status cxla_literal_relayout(const cxla_literal *literal, const cxla_layout *layout,
                                  cxla_literal **out_literal);

/* Comparison. Shapes must agree in type and dims (layouts may differ), and dynamic
 * sizes must be equal (only the elements below them are compared). Exact: every
 * element equal by value, NaN equals any NaN, -0 differs from +0. Approximate: an
 * element passes when |a - e| <= atol + rtol * |e|, or when a and e are at most |ulps|
 * units in the last place apart (in the literal's type); NaN equals NaN and infinities
 * must match exactly. Complex values are compared part by part. */
typedef struct cxla_tolerance {
    double atol;
    double rtol;
    int64_t ulps;
} cxla_tolerance;
bool cxla_literal_equal(const cxla_literal *a, const cxla_literal *b);
/* NULL when |actual| matches |expected| (exactly when |tolerance| is NULL); otherwise a
 * status naming the first mismatch: its index and both values, or the shapes. */
cxla_status cxla_literal_compare(const cxla_literal *actual, const cxla_literal *expected,
                                 const cxla_tolerance *tolerance);

/* Text (HLO literal syntax). Values print in logical row-major order on one line:
 * "{ { 1, 2 }, { 3, 4 } }", "(1, 2)" for complex, "( {1, 2}, 3 )" for tuples;
 * floats print with the fewest digits that read back to the same value, and
 * inf/-inf/nan/-nan/nan(0x..) for the specials; scalar pred prints true/false, pred
 * arrays 0/1. With CXLA_LITERAL_PRINT_SHAPE each array's shape comes first:
 * "f32[2] {1, 2}" (with CXLA_LITERAL_PRINT_LAYOUT too: "f32[2]{0} {1, 2}"); a tuple
 * prints its elements' shapes: "( f32[2] {1, 2}, s32[] 3 )". A shape with dynamic
 * dimensions is followed by the current size of every dimension, and only the elements
 * below the sizes print: "f32[<=4](2) {1, 2}" (as XLA prints). Returns a malloc'd string
 * (free()). */
typedef enum cxla_literal_print_flags {
    CXLA_LITERAL_PRINT_DEFAULT = 0,
    CXLA_LITERAL_PRINT_SHAPE = 1,  /* prefix the shape */
    CXLA_LITERAL_PRINT_LAYOUT = 2, /* with _SHAPE: print its layout too */
} cxla_literal_print_flags;
char *cxla_literal_to_string(const cxla_literal *literal, int flags);
/* Parses a literal (|len| bytes; (size_t)-1 for NUL-terminated text). With |shape| NULL
 * the text must start with its shape ("f32[2] {1, 2}", or for tuples either
 * "(f32[2], s32[]) ({1, 2}, 3)" or "( f32[2] {1, 2}, s32[] 3 )"); otherwise the text is
 * just the value, read as |shape|. A dynamic shape may be followed by the sizes of its
 * dimensions, "f32[<=4](2) {1, 2}": the value then holds that many elements (padding is
 * zero); without them (XLA's parser reads only this form) the value fills the bounds. */
cxla_status cxla_literal_parse(const char *text, size_t len, const cxla_shape *shape,
                               cxla_literal **out_literal);

#ifdef __cplusplus
}
#endif
#endif /* CXLA_LITERAL_H_ */
