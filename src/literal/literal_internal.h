/* Literals from the inside: the struct, element loads and stores, and the entry points
 * the HLO parser and printer use. */
#ifndef CXLA_LITERAL_LITERAL_INTERNAL_H_
#define CXLA_LITERAL_LITERAL_INTERNAL_H_

#include "base/base.h"
#include "cxla/literal.h"

/* Literals made here are one malloc block (literal.c says how; |packed| says which parts
 * are in it). A tuple's shape holds shallow copies of its elements' shapes, so whoever
 * changes an element's shape refreshes the tuple's (cxla_literal_tuple_refresh_shape). */
struct cxla_literal {
    cxla_shape *shape; /* owned; arrays always carry a layout */
    /* Arrays: */
    void *data;    /* |size| bytes in the shape's layout (NULL when size is 0) */
    size_t size;   /* bytes, padding included */
    int64_t count; /* logical element count (of the bounds) */
    /* Current sizes of a shape with bounded dynamic dimensions: NULL while every dimension
     * is at its bound (always for static shapes), else rank entries with at least one
     * below its bound. */
    int64_t *dyn_sizes;
    /* Tuples: */
    int64_t tuple_count;
    cxla_literal **elements;
    uint8_t packed;      /* literal.c's PACKED_* bits; 0 (nothing packed) for hand-made structs */
    uint8_t cache_class; /* literal.c's block cache class, 0: a plain malloc block */
};

/* cxla_literal_create for a shape already known to be valid (one from a verified
 * module): skips the validation, which dominates the cost of small literals. */
cxla_status cxla_literal_create_validated(const cxla_shape *shape, cxla_literal **out_literal);

/* An array literal of static |shape| (no layout: row-major) whose data is the caller's
 * |size| bytes at |data| (at least the shape's bytes), which it never frees nor counts as
 * memory held; the caller keeps them alive and unused by anything else while the literal
 * lives. Errors: INVALID_ARGUMENT (a tuple, dynamic or tiled shape, too few bytes),
 * RESOURCE_EXHAUSTED. */
cxla_status cxla_literal_create_over(const cxla_shape *shape, void *data, size_t size,
                                     cxla_literal **out);

/* Gives array |literal| a copy of |shape|, which describes the same storage (type, dims,
 * layout) with other dynamic flags. */
cxla_status cxla_literal_replace_shape(cxla_literal *literal, const cxla_shape *shape);
/* Brings the shape of |tuple| (made by this module) in line with its elements' shapes
 * after one of them was replaced. */
void cxla_literal_tuple_refresh_shape(cxla_literal *tuple);

/* Copies the elements at indices below |region| (rank entries) from |src| to the same
 * indices of |dst|: arrays of one element type and rank whose dims hold the region. */
void cxla_literal_copy_region(const cxla_literal *src, cxla_literal *dst, const int64_t *region);
/* The current sizes of an array literal into |sizes| (rank entries). */
void cxla_literal_sizes(const cxla_literal *literal, int64_t *sizes);

/* Loads and stores of one element at |p| (storage as types.h says). The value forms:
 *   f64: pred -> 0/1, integers -> nearest double, floats exact, complex -> error by caller
 *   s64/u64: integers and pred exactly; floats truncate toward zero, saturate, NaN -> 0
 *   c128: (re, im) for any numeric type
 * Stores convert as cxla_literal_convert: round to nearest even into floats; into
 * integers from double: truncate, saturate, NaN -> 0; from s64/u64: wrap to the width
 * (sub-byte types sign- or zero-extend within their byte); into pred: != 0. */
double cxla_load_f64(cxla_type type, const void *p);
int64_t cxla_load_s64(cxla_type type, const void *p);
uint64_t cxla_load_u64(cxla_type type, const void *p);
void cxla_load_c128(cxla_type type, const void *p, double *re, double *im);
void cxla_store_f64(cxla_type type, void *p, double value);
void cxla_store_s64(cxla_type type, void *p, int64_t value);
void cxla_store_u64(cxla_type type, void *p, uint64_t value);
void cxla_store_c128(cxla_type type, void *p, double re, double im);
/* Copies one element converting |from| -> |to| with the literal conversion rules
 * (integers exactly, 64-bit values without a detour through double). */
void cxla_convert_element(cxla_type from, const void *src, cxla_type to, void *dst);

/* Text. Prints |literal| (cxla_literal_print_flags) into |b|. */
void cxla_literal_print(cxla_strbuf *b, const cxla_literal *literal, int flags);
/* Prints one element (the element at |p| of |type|) as the literal syntax does. */
void cxla_literal_print_element(cxla_strbuf *b, cxla_type type, const void *p);
/* Parses a literal value of |shape| starting at text[*pos] (spaces and comments skipped);
 * on success *pos is just past it. With |shape| NULL the value is preceded by its shape.
 * Errors name the line and column in |text|. */
cxla_status cxla_literal_parse_at(const char *text, size_t len, size_t *pos,
                                  const cxla_shape *shape, cxla_literal **out_literal);

#endif /* CXLA_LITERAL_LITERAL_INTERNAL_H_ */
