/* cxla/shape.h: shapes and layouts.
 *
 * A shape is an array shape (element type + dimensions + optional layout), a tuple of
 * shapes (possibly empty, possibly nested), a token or an opaque handle. Shapes are plain
 * structs whose arrays are reached through pointers; who owns that memory depends on who
 * made the shape:
 *   - cxla_shape_create_*, cxla_shape_clone and cxla_shape_parse return one malloc'd
 *     block holding the shape and everything it points to: free it with cxla_shape_free.
 *   - shapes inside an HLO module live in the module's arena and die with it.
 *   - a caller may also build one on the stack:
 *       cxla_shape s = {.type = CXLA_F32, .rank = 2, .dims = (int64_t[]){2, 3}};
 *
 * Layouts follow XLA's Layout (shapes-and-layout seed): minor_to_major lists dimensions
 * from the fastest varying to the slowest; the default is {rank-1, ..., 1, 0}
 * (row-major). padded_dimensions / padding_value are the older Layout fields: each
 * dimension is padded to a larger width in memory. The extensions XLA prints after ':'
 * (tiles T(...), element size E(n), memory space S(n), ...) are parsed and kept but do
 * not change how cxla indexes host memory.
 */
#ifndef CXLA_SHAPE_H_
#define CXLA_SHAPE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxla/status.h"
#include "cxla/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dims[i] of an unbounded dynamic dimension ('?'); bounded ones ('<=N') hold N. */
#define CXLA_DIM_UNBOUNDED (-1)
/* A tile dimension written '*' (combine dimensions). */
#define CXLA_TILE_COMBINE (-1)
/* The largest rank cxla accepts (XLA has no fixed limit; real programs stay far below). */
#define CXLA_MAX_RANK 64

typedef enum cxla_padding_value {
    CXLA_PAD_INVALID = 0, /* not set */
    CXLA_PAD_ZERO,
    CXLA_PAD_ONE,
    CXLA_PAD_LOWEST,
    CXLA_PAD_HIGHEST,
    CXLA_PAD_UNKNOWN,
} cxla_padding_value;

typedef struct cxla_tile {
    int64_t rank;
    int64_t *dims; /* CXLA_TILE_COMBINE for '*' */
} cxla_tile;

typedef struct cxla_layout {
    int64_t *minor_to_major; /* as many entries as the shape's rank */
    int64_t *padded_dims;    /* NULL, or rank entries: padded width of each dimension */
    cxla_padding_value padding_value;
    /* Extensions, kept for printing; 0 / CXLA_TYPE_INVALID / NULL when absent. */
    int64_t tile_count;
    cxla_tile *tiles;                /* T(8,128)(2,1) */
    int64_t tail_padding_alignment;  /* L(n) */
    cxla_type index_type;            /* #(s32) */
    cxla_type pointer_type;          /* *(s32) */
    int64_t element_size_bits;       /* E(n) */
    int64_t memory_space;            /* S(n) */
    int64_t dynamic_metadata_prefix; /* M(n) */
    const char *extra;               /* other extensions (D(..), SC(..), P(..)) verbatim */
} cxla_layout;

typedef struct cxla_shape {
    cxla_type type; /* element type; CXLA_TUPLE, CXLA_TOKEN or CXLA_OPAQUE otherwise */
    /* Arrays: */
    int64_t rank;
    int64_t *dims;       /* rank entries */
    uint8_t *dynamic;    /* NULL when static; else rank flags, 1 = '<=N' or '?' dimension */
    cxla_layout *layout; /* NULL when none is given (the default layout applies) */
    /* Tuples: */
    int64_t tuple_count;
    struct cxla_shape *elements; /* tuple_count entries */
} cxla_shape;

/* Constructors; each returns a single block freed by cxla_shape_free (the tuple's
 * |elements| are copied into it, and so is everything a cloned shape points to). |dims|
 * may be NULL when |rank| is 0. An array shape gets no layout (the default applies).
 * Errors (INVALID_ARGUMENT): a type arrays cannot have, a rank outside 0..CXLA_MAX_RANK,
 * dimensions cxla_shape_validate refuses, a negative tuple count; RESOURCE_EXHAUSTED
 * when memory is short. */
cxla_status cxla_shape_create_array(cxla_type type, int64_t rank, const int64_t *dims,
                                    cxla_shape **out_shape);
cxla_status cxla_shape_create_tuple(int64_t count, const cxla_shape *const *elements,
                                    cxla_shape **out_shape);
cxla_status cxla_shape_clone(const cxla_shape *shape, cxla_shape **out_shape);
void cxla_shape_destroy(cxla_shape *shape); /* NULL is fine */
/* Deprecated alias of cxla_shape_destroy, kept for one release (see docs/c-api.md). */
void cxla_shape_free(cxla_shape *shape);

/* Checks a shape for consistency: a valid element type, dimensions >= 0 (bounded dynamic
 * dims >= 0, unbounded only where dynamic), rank <= CXLA_MAX_RANK, a layout that is a
 * permutation of the dimensions, padded dims >= dims, and an element count and byte size
 * that fit in int64/size_t. The message says what is wrong. */
cxla_status cxla_shape_validate(const cxla_shape *shape);

bool cxla_shape_is_array(const cxla_shape *shape);
bool cxla_shape_is_tuple(const cxla_shape *shape);
bool cxla_shape_is_static(const cxla_shape *shape); /* no dynamic dims anywhere */
/* Element count of an array (product of dims; 1 for rank 0), or an error on overflow. */
cxla_status cxla_shape_element_count(const cxla_shape *shape, int64_t *out_count);
/* Bytes an array occupies in host memory in its layout (padded dims included). */
cxla_status cxla_shape_byte_size(const cxla_shape *shape, size_t *out_size);

/* Equality. _equal compares everything including layouts (a missing layout equals the
 * default one); _compatible ignores layouts; _same_dims compares dims and dynamism only. */
bool cxla_shape_equal(const cxla_shape *a, const cxla_shape *b);
bool cxla_shape_compatible(const cxla_shape *a, const cxla_shape *b);
bool cxla_shape_same_dims(const cxla_shape *a, const cxla_shape *b);

/* Text, as XLA writes it: "f32[2,3]{1,0}", "(f32[2]{0}, s32[])", "f32[<=10]", "token[]".
 * _to_string returns a malloc'd string (free()); NULL only when memory is short. */
typedef enum cxla_shape_print_flags {
    CXLA_SHAPE_PRINT_DEFAULT = 0,   /* layouts where present (not for scalars) */
    CXLA_SHAPE_PRINT_NO_LAYOUT = 1, /* never print layouts */
} cxla_shape_print_flags;
char *cxla_shape_to_string(const cxla_shape *shape, int flags);
/* Parses the whole of |text| (|len| bytes; (size_t)-1 for NUL-terminated). */
cxla_status cxla_shape_parse(const char *text, size_t len, cxla_shape **out_shape);

/* Layouts and index arithmetic (seed 001). */
bool cxla_layout_is_default(const cxla_shape *shape); /* missing, or {rank-1..0} unpadded */
/* Fills |minor_to_major| (rank entries) with the shape's layout order (default if none). */
void cxla_shape_minor_to_major(const cxla_shape *shape, int64_t *minor_to_major);
/* Element strides of each dimension in memory, padding included. */
void cxla_shape_strides(const cxla_shape *shape, int64_t *strides);
/* Linear element offset in memory of the logical multi-index |index|. */
int64_t cxla_shape_linear_index(const cxla_shape *shape, const int64_t *index);
/* The multi-index stored at linear offset |linear|; false when that slot is padding. */
bool cxla_shape_multi_index(const cxla_shape *shape, int64_t linear, int64_t *index);
/* Advances a logical multi-index in row-major order; false after the last one. */
bool cxla_index_next(int64_t rank, const int64_t *dims, int64_t *index);

#ifdef __cplusplus
}
#endif
#endif /* CXLA_SHAPE_H_ */
