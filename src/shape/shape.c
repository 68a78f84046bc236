/* Shapes: constructors, copies, validation, predicates, sizes, equality, layouts and
 * index arithmetic (seed 001). The text form lives in shape_text.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "shape/shape_internal.h"

/* Deepest tuple nesting the copy and validation routines follow (the parser stops
 * earlier); a deeper shape is reported as an error rather than risking the stack. */
enum { SHAPE_MAX_DEPTH = 1000 };
/* The largest tile rank accepted in a layout. */
enum { SHAPE_MAX_TILE_RANK = 1 << 16 };

/* ---- Structure checks ------------------------------------------------------------- */

/* Where in nested tuples an error was found (the first levels of the path). */
enum { PATH_SHOWN = 16 };
typedef struct shape_path {
    int64_t index[PATH_SHOWN];
    int len;
} shape_path;

static void path_note(shape_path *path, int depth, int64_t i) {
    if (depth < PATH_SHOWN) path->index[depth] = i;
    if (path->len < depth + 1) path->len = depth + 1;
}

/* Prefixes |st| with the tuple path once ("tuple element {1,0}: ..."). */
static cxla_status annotate_path(cxla_status st, const shape_path *path) {
    if (!st || path->len == 0) return st;
    char buf[PATH_SHOWN * 24 + 8];
    size_t used = 0;
    for (int d = 0; d < path->len && d < PATH_SHOWN; d++)
        used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%lld", d ? "," : "",
                                 (long long)path->index[d]);
    if (path->len > PATH_SHOWN) snprintf(buf + used, sizeof(buf) - used, ",...");
    return cxla_status_annotate(st, "tuple element {%s}", buf);
}

/* Checks the counts and pointers a copy or a printer relies on (not the values). */
static cxla_status check_structure_rec(const cxla_shape *s, int depth, shape_path *path) {
    if (depth > SHAPE_MAX_DEPTH)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "shape nests tuples deeper than %d",
                          SHAPE_MAX_DEPTH);
    if (s->type == CXLA_TUPLE) {
        if (s->tuple_count < 0)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "tuple has a negative count %lld",
                              (long long)s->tuple_count);
        if (s->tuple_count > 0 && !s->elements)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "tuple of %lld elements has no element array",
                              (long long)s->tuple_count);
        for (int64_t i = 0; i < s->tuple_count; i++) {
            cxla_status st = check_structure_rec(&s->elements[i], depth + 1, path);
            if (st) {
                path_note(path, depth, i);
                return st;
            }
        }
        return NULL;
    }
    if (s->rank < 0 || s->rank > CXLA_MAX_RANK)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "rank %lld is outside 0..%d",
                          (long long)s->rank, CXLA_MAX_RANK);
    if (s->rank > 0 && !s->dims)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "shape of rank %lld has no dimensions",
                          (long long)s->rank);
    const cxla_layout *l = s->layout;
    if (!l) return NULL;
    if (l->tile_count < 0 || (l->tile_count > 0 && !l->tiles))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "layout has a bad tile list (%lld tiles)",
                          (long long)l->tile_count);
    for (int64_t t = 0; t < l->tile_count; t++) {
        const cxla_tile *tile = &l->tiles[t];
        if (tile->rank < 0 || tile->rank > SHAPE_MAX_TILE_RANK || (tile->rank > 0 && !tile->dims))
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "layout tile %lld is malformed",
                              (long long)t);
    }
    return NULL;
}

static cxla_status check_structure(const cxla_shape *s) {
    shape_path path = {.len = 0};
    return annotate_path(check_structure_rec(s, 0, &path), &path);
}

/* ---- Copies ------------------------------------------------------------------------- */

/* Where a copy's arrays come from: an arena, or one preallocated block carved in order. */
typedef struct shape_alloc {
    cxla_arena *arena;
    char *block;
    size_t used;
    size_t cap;
} shape_alloc;

static size_t round16(size_t n) {
    return (n + 15) & ~(size_t)15;
}

static void *alloc_bytes(shape_alloc *a, size_t size) {
    if (a->arena) return cxla_arena_alloc(a->arena, size);
    size_t r = round16(size);
    CXLA_ASSERT(a->cap - a->used >= r);
    if (a->cap - a->used < r) return NULL;
    void *p = a->block + a->used;
    a->used += r;
    memset(p, 0, r);
    return p;
}

/* Adds the bytes a copy of |count| elements of |size| takes (nothing for none). */
static bool measure_add(size_t *total, size_t count, size_t size) {
    if (count == 0) return true;
    size_t bytes;
    if (!cxla_mul_size(count, size, &bytes) || bytes > SIZE_MAX - 16) return false;
    return cxla_add_size(*total, round16(bytes), total);
}

/* The bytes the arrays of |s| (not |s| itself) take in a single-block copy. */
static bool measure_shape(const cxla_shape *s, size_t *total) {
    if (s->type == CXLA_TUPLE) {
        if (!measure_add(total, (size_t)s->tuple_count, sizeof(cxla_shape))) return false;
        for (int64_t i = 0; i < s->tuple_count; i++)
            if (!measure_shape(&s->elements[i], total)) return false;
        return true;
    }
    size_t rank = (size_t)s->rank;
    if (s->dims && !measure_add(total, rank, sizeof(int64_t))) return false;
    if (s->dynamic && !measure_add(total, rank, 1)) return false;
    const cxla_layout *l = s->layout;
    if (!l) return true;
    if (!measure_add(total, 1, sizeof(cxla_layout))) return false;
    if (l->minor_to_major && !measure_add(total, rank, sizeof(int64_t))) return false;
    if (l->padded_dims && !measure_add(total, rank, sizeof(int64_t))) return false;
    if (l->tiles) {
        if (!measure_add(total, (size_t)l->tile_count, sizeof(cxla_tile))) return false;
        for (int64_t t = 0; t < l->tile_count; t++)
            if (l->tiles[t].dims && !measure_add(total, (size_t)l->tiles[t].rank, sizeof(int64_t)))
                return false;
    }
    if (l->extra && !measure_add(total, strlen(l->extra) + 1, 1)) return false;
    return true;
}

/* Copies |count| elements of |size| bytes; NULL (and *ok untouched) for none. */
static void *copy_array(shape_alloc *a, const void *src, size_t count, size_t size, bool *ok) {
    if (!src || count == 0) return NULL;
    void *p = alloc_bytes(a, count * size);
    if (!p) {
        *ok = false;
        return NULL;
    }
    memcpy(p, src, count * size);
    return p;
}

static bool copy_shape(shape_alloc *a, const cxla_shape *src, cxla_shape *dst) {
    bool ok = true;
    memset(dst, 0, sizeof(*dst));
    dst->type = src->type;
    if (src->type == CXLA_TUPLE) {
        dst->tuple_count = src->tuple_count;
        if (src->tuple_count == 0) return true;
        dst->elements = alloc_bytes(a, (size_t)src->tuple_count * sizeof(cxla_shape));
        if (!dst->elements) return false;
        for (int64_t i = 0; i < src->tuple_count; i++)
            if (!copy_shape(a, &src->elements[i], &dst->elements[i])) return false;
        return true;
    }
    size_t rank = (size_t)src->rank;
    dst->rank = src->rank;
    dst->dims = copy_array(a, src->dims, rank, sizeof(int64_t), &ok);
    dst->dynamic = copy_array(a, src->dynamic, rank, 1, &ok);
    if (!ok) return false;
    const cxla_layout *sl = src->layout;
    if (!sl) return true;
    cxla_layout *l = alloc_bytes(a, sizeof(cxla_layout));
    if (!l) return false;
    *l = *sl;
    dst->layout = l;
    l->minor_to_major = copy_array(a, sl->minor_to_major, rank, sizeof(int64_t), &ok);
    l->padded_dims = copy_array(a, sl->padded_dims, rank, sizeof(int64_t), &ok);
    l->tiles = copy_array(a, sl->tiles, (size_t)sl->tile_count, sizeof(cxla_tile), &ok);
    if (!ok) return false;
    if (!l->tiles) l->tile_count = 0;
    for (int64_t t = 0; t < l->tile_count; t++) {
        l->tiles[t].dims =
            copy_array(a, sl->tiles[t].dims, (size_t)sl->tiles[t].rank, sizeof(int64_t), &ok);
        if (!ok) return false;
    }
    if (sl->extra) {
        size_t n = strlen(sl->extra) + 1;
        l->extra = copy_array(a, sl->extra, n, 1, &ok);
        if (!ok) return false;
    }
    return true;
}

cxla_status cxla_shape_copy_to_arena(cxla_arena *arena, const cxla_shape *src, cxla_shape *dst) {
    CXLA_RETURN_IF_ERROR(check_structure(src));
    shape_alloc a = {.arena = arena};
    if (!copy_shape(&a, src, dst))
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory copying a shape");
    return NULL;
}

bool cxla_shape_block_size(const cxla_shape *shape, size_t *out_size) {
    size_t total = round16(sizeof(cxla_shape));
    if (!measure_shape(shape, &total)) return false;
    *out_size = total;
    return true;
}

cxla_shape *cxla_shape_copy_into(void *block, size_t size, const cxla_shape *shape) {
    shape_alloc a = {.block = block, .used = round16(sizeof(cxla_shape)), .cap = size};
    cxla_shape *root = block;
    bool ok = copy_shape(&a, shape, root);
    CXLA_ASSERT(ok && a.used == size);
    (void)ok;
    return root;
}

/* Copies an already checked shape into one malloc'd block. */
static cxla_status clone_checked(const cxla_shape *shape, cxla_shape **out_shape) {
    size_t total;
    if (!cxla_shape_block_size(shape, &total))
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "shape is too large to copy");
    void *block = malloc(total);
    if (!block)
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                          "out of memory copying a shape (%zu bytes)", total);
    *out_shape = cxla_shape_copy_into(block, total, shape);
    return NULL;
}

cxla_status cxla_shape_clone(const cxla_shape *shape, cxla_shape **out_shape) {
    *out_shape = NULL;
    if (!shape) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cannot clone a NULL shape");
    CXLA_RETURN_IF_ERROR(check_structure(shape));
    return clone_checked(shape, out_shape);
}

void cxla_shape_destroy(cxla_shape *shape) {
    cxla_shape_free(shape);
}

void cxla_shape_free(cxla_shape *shape) {
    free(shape);
}

/* ---- Constructors ------------------------------------------------------------------- */

cxla_status cxla_shape_create_array(cxla_type type, int64_t rank, const int64_t *dims,
                                    cxla_shape **out_shape) {
    *out_shape = NULL;
    if (type == CXLA_TOKEN || type == CXLA_OPAQUE) {
        if (rank != 0)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s[] takes no dimensions (rank %lld)",
                              cxla_type_name(type), (long long)rank);
    } else if (!cxla_type_is_array(type)) {
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "%s is not an element type an array can have", cxla_type_name(type));
    }
    if (rank < 0 || rank > CXLA_MAX_RANK)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "rank %lld is outside 0..%d",
                          (long long)rank, CXLA_MAX_RANK);
    if (rank > 0 && !dims)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "array of rank %lld needs dimensions",
                          (long long)rank);
    cxla_shape s = {.type = type, .rank = rank, .dims = (int64_t *)dims};
    CXLA_RETURN_IF_ERROR(cxla_shape_validate(&s));
    return clone_checked(&s, out_shape);
}

cxla_status cxla_shape_create_tuple(int64_t count, const cxla_shape *const *elements,
                                    cxla_shape **out_shape) {
    *out_shape = NULL;
    if (count < 0)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "tuple with a negative count %lld",
                          (long long)count);
    if (count > 0 && !elements)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "tuple of %lld elements needs elements",
                          (long long)count);
    size_t bytes;
    if (!cxla_mul_size((size_t)count, sizeof(cxla_shape), &bytes))
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "tuple of %lld elements is too large",
                          (long long)count);
    /* A temporary tuple whose elements are shallow copies; the clone makes it deep. */
    cxla_shape *tmp = count ? malloc(bytes) : NULL;
    if (count && !tmp)
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory building a tuple");
    for (int64_t i = 0; i < count; i++) {
        if (!elements[i]) {
            free(tmp);
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "tuple element %lld is NULL",
                              (long long)i);
        }
        tmp[i] = *elements[i];
    }
    cxla_shape s = {.type = CXLA_TUPLE, .tuple_count = count, .elements = tmp};
    cxla_status st = check_structure(&s);
    if (!st) st = clone_checked(&s, out_shape);
    free(tmp);
    return st;
}

/* ---- Validation --------------------------------------------------------------------- */

static cxla_status validate_array(const cxla_shape *s);
static int64_t mem_width(const cxla_shape *s, int64_t d);

/* Annotates |st| with the shape's text. */
static cxla_status with_shape_text(cxla_status st, const cxla_shape *s) {
    if (!st) return NULL;
    char *text = cxla_shape_to_string(s, CXLA_SHAPE_PRINT_DEFAULT);
    st = cxla_status_annotate(st, "invalid shape %s", text ? text : "(?)");
    free(text);
    return st;
}

static cxla_status validate_rec(const cxla_shape *s, int depth, shape_path *path) {
    if ((int)s->type <= (int)CXLA_TYPE_INVALID || s->type >= CXLA_TYPE_COUNT)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "invalid element type %d", (int)s->type);
    if (s->type == CXLA_TUPLE) {
        if (s->layout)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "a tuple shape cannot have a layout");
        for (int64_t i = 0; i < s->tuple_count; i++) {
            cxla_status st = validate_rec(&s->elements[i], depth + 1, path);
            if (st) {
                path_note(path, depth, i);
                return st;
            }
        }
        return NULL;
    }
    if (s->type == CXLA_TOKEN || s->type == CXLA_OPAQUE) {
        if (s->rank != 0)
            return with_shape_text(cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                              "%s[] takes no dimensions", cxla_type_name(s->type)),
                                   s);
        if (s->layout)
            return with_shape_text(cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                              "%s[] cannot have a layout", cxla_type_name(s->type)),
                                   s);
        return NULL;
    }
    return with_shape_text(validate_array(s), s);
}

static cxla_status validate_array(const cxla_shape *s) {
    for (int64_t i = 0; i < s->rank; i++) {
        bool dyn = s->dynamic && s->dynamic[i];
        if (s->dynamic && s->dynamic[i] > 1)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "dynamic flag of dimension %lld is %d",
                              (long long)i, (int)s->dynamic[i]);
        if (s->dims[i] == CXLA_DIM_UNBOUNDED && !dyn)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "dimension %lld is unbounded but not marked dynamic", (long long)i);
        if (s->dims[i] < 0 && s->dims[i] != CXLA_DIM_UNBOUNDED)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "dimension %lld is negative (%lld)",
                              (long long)i, (long long)s->dims[i]);
    }
    const cxla_layout *l = s->layout;
    if (l) {
        if (s->rank > 0 && !l->minor_to_major)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "layout has no minor_to_major");
        bool seen[CXLA_MAX_RANK] = {false};
        for (int64_t i = 0; i < s->rank; i++) {
            int64_t d = l->minor_to_major[i];
            if (d < 0 || d >= s->rank)
                return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                  "layout minor_to_major entry %lld is %lld, outside 0..%lld",
                                  (long long)i, (long long)d, (long long)(s->rank - 1));
            if (seen[d])
                return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                  "layout minor_to_major is not a permutation: dimension %lld "
                                  "appears twice",
                                  (long long)d);
            seen[d] = true;
        }
        if (l->padded_dims) {
            for (int64_t i = 0; i < s->rank; i++) {
                if (s->dims[i] < 0)
                    return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                      "an unbounded dimension (%lld) cannot be padded",
                                      (long long)i);
                if (l->padded_dims[i] < s->dims[i])
                    return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                      "padded dimension %lld (%lld) is smaller than the "
                                      "dimension (%lld)",
                                      (long long)i, (long long)l->padded_dims[i],
                                      (long long)s->dims[i]);
            }
        }
        if ((int)l->padding_value < (int)CXLA_PAD_INVALID ||
            (int)l->padding_value > (int)CXLA_PAD_UNKNOWN)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "invalid padding value %d",
                              (int)l->padding_value);
        for (int64_t t = 0; t < l->tile_count; t++)
            for (int64_t k = 0; k < l->tiles[t].rank; k++) {
                int64_t v = l->tiles[t].dims[k];
                if (v <= 0 && v != CXLA_TILE_COMBINE)
                    return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                      "tile %lld dimension %lld is %lld (must be positive or '*')",
                                      (long long)t, (long long)k, (long long)v);
            }
        if (l->tail_padding_alignment < 0 || l->element_size_bits < 0 || l->memory_space < 0 ||
            l->dynamic_metadata_prefix < 0)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "layout has a negative L(), E(), S() or M() value");
        if (l->index_type != CXLA_TYPE_INVALID && !cxla_type_is_integer(l->index_type))
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "layout index type #(%s) is not an integer type",
                              cxla_type_name(l->index_type));
        if (l->pointer_type != CXLA_TYPE_INVALID && !cxla_type_is_integer(l->pointer_type))
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "layout pointer type *(%s) is not an integer type",
                              cxla_type_name(l->pointer_type));
    }
    /* The buffer must be addressable: bounded dynamic dims count at their bound, and
     * unbounded ones (no size yet) as zero. */
    int64_t count = 1;
    for (int64_t i = 0; i < s->rank; i++) {
        int64_t w = s->dims[i] < 0 ? 0 : mem_width(s, i);
        if (!cxla_mul_i64(count, w, &count))
            return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                              "the element count of a rank-%lld %s array overflows int64",
                              (long long)s->rank, cxla_type_name(s->type));
    }
    size_t bytes;
    if (!cxla_mul_size((size_t)count, cxla_type_storage(s->type), &bytes) ||
        bytes > (size_t)INT64_MAX)
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                          "the byte size of a %lld-element %s array overflows", (long long)count,
                          cxla_type_name(s->type));
    return NULL;
}

cxla_status cxla_shape_validate(const cxla_shape *shape) {
    if (!shape) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "NULL shape");
    CXLA_RETURN_IF_ERROR(check_structure(shape));
    shape_path path = {.len = 0};
    return annotate_path(validate_rec(shape, 0, &path), &path);
}

/* ---- Predicates and sizes ----------------------------------------------------------- */

bool cxla_shape_is_array(const cxla_shape *shape) {
    return cxla_type_is_array(shape->type);
}

bool cxla_shape_is_tuple(const cxla_shape *shape) {
    return shape->type == CXLA_TUPLE;
}

bool cxla_shape_is_static(const cxla_shape *shape) {
    if (shape->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < shape->tuple_count; i++)
            if (!cxla_shape_is_static(&shape->elements[i])) return false;
        return true;
    }
    if (!shape->dynamic) return true;
    for (int64_t i = 0; i < shape->rank; i++)
        if (shape->dynamic[i]) return false;
    return true;
}

/* Product of |widths| (rank entries); an error for unbounded dims or on overflow. */
static cxla_status product(const cxla_shape *s, const int64_t *widths, int64_t *out) {
    int64_t count = 1;
    for (int64_t i = 0; i < s->rank; i++) {
        if (widths[i] < 0)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "dimension %lld is unbounded (%lld): the shape has no size yet",
                              (long long)i, (long long)widths[i]);
    }
    for (int64_t i = 0; i < s->rank; i++) {
        if (!cxla_mul_i64(count, widths[i], &count))
            return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                              "the element count of a rank-%lld %s array overflows int64",
                              (long long)s->rank, cxla_type_name(s->type));
    }
    *out = count;
    return NULL;
}

cxla_status cxla_shape_element_count(const cxla_shape *shape, int64_t *out_count) {
    if (!cxla_shape_is_array(shape))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s shapes have no element count",
                          cxla_type_name(shape->type));
    return product(shape, shape->dims, out_count);
}

cxla_status cxla_shape_byte_size(const cxla_shape *shape, size_t *out_size) {
    if (shape->type == CXLA_TOKEN || shape->type == CXLA_OPAQUE) {
        *out_size = 0;
        return NULL;
    }
    if (!cxla_shape_is_array(shape))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s shapes have no byte size",
                          cxla_type_name(shape->type));
    const int64_t *widths =
        shape->layout && shape->layout->padded_dims ? shape->layout->padded_dims : shape->dims;
    int64_t count;
    CXLA_RETURN_IF_ERROR(product(shape, widths, &count));
    size_t bytes;
    if ((uint64_t)count > SIZE_MAX ||
        !cxla_mul_size((size_t)count, cxla_type_storage(shape->type), &bytes) ||
        bytes > (size_t)INT64_MAX)
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                          "the byte size of a %lld-element %s array overflows", (long long)count,
                          cxla_type_name(shape->type));
    *out_size = bytes;
    return NULL;
}

/* ---- Equality ----------------------------------------------------------------------- */

static bool dyn_at(const cxla_shape *s, int64_t i) {
    return s->dynamic && s->dynamic[i];
}

static bool same_dims_array(const cxla_shape *a, const cxla_shape *b) {
    if (a->rank != b->rank) return false;
    for (int64_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i] || dyn_at(a, i) != dyn_at(b, i)) return false;
    return true;
}

static bool str_equal(const char *a, const char *b) {
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Layouts of two arrays with the same rank; a missing layout is the default one. */
static bool layouts_equal(const cxla_shape *a, const cxla_shape *b) {
    static const cxla_layout none = {0};
    const cxla_layout *la = a->layout ? a->layout : &none;
    const cxla_layout *lb = b->layout ? b->layout : &none;
    int64_t ma[CXLA_MAX_RANK], mb[CXLA_MAX_RANK];
    cxla_shape_minor_to_major(a, ma);
    cxla_shape_minor_to_major(b, mb);
    for (int64_t i = 0; i < a->rank; i++) {
        if (ma[i] != mb[i]) return false;
        int64_t pa = la->padded_dims ? la->padded_dims[i] : a->dims[i];
        int64_t pb = lb->padded_dims ? lb->padded_dims[i] : b->dims[i];
        if (pa != pb) return false;
    }
    if ((la->padded_dims || lb->padded_dims) && la->padding_value != lb->padding_value)
        return false;
    if (la->tile_count != lb->tile_count) return false;
    for (int64_t t = 0; t < la->tile_count; t++) {
        const cxla_tile *ta = &la->tiles[t], *tb = &lb->tiles[t];
        if (ta->rank != tb->rank) return false;
        for (int64_t k = 0; k < ta->rank; k++)
            if (ta->dims[k] != tb->dims[k]) return false;
    }
    /* L(0) (absent) and L(1) both mean "no alignment". */
    int64_t ka = la->tail_padding_alignment > 1 ? la->tail_padding_alignment : 1;
    int64_t kb = lb->tail_padding_alignment > 1 ? lb->tail_padding_alignment : 1;
    return ka == kb && la->index_type == lb->index_type && la->pointer_type == lb->pointer_type &&
           la->element_size_bits == lb->element_size_bits && la->memory_space == lb->memory_space &&
           la->dynamic_metadata_prefix == lb->dynamic_metadata_prefix &&
           str_equal(la->extra, lb->extra);
}

enum { CMP_TYPE = 1, CMP_LAYOUT = 2 };

static bool shapes_match(const cxla_shape *a, const cxla_shape *b, int what) {
    if ((a->type == CXLA_TUPLE) != (b->type == CXLA_TUPLE)) return false;
    if (a->type == CXLA_TUPLE) {
        if (a->tuple_count != b->tuple_count) return false;
        for (int64_t i = 0; i < a->tuple_count; i++)
            if (!shapes_match(&a->elements[i], &b->elements[i], what)) return false;
        return true;
    }
    bool a_arr = cxla_type_is_array(a->type), b_arr = cxla_type_is_array(b->type);
    if (a_arr != b_arr) return false;
    if (!a_arr) return a->type == b->type; /* token, opaque */
    if (a->rank < 0 || a->rank > CXLA_MAX_RANK) return false;
    if ((what & CMP_TYPE) && a->type != b->type) return false;
    if (!same_dims_array(a, b)) return false;
    if ((what & CMP_LAYOUT) && !layouts_equal(a, b)) return false;
    return true;
}

bool cxla_shape_equal(const cxla_shape *a, const cxla_shape *b) {
    return shapes_match(a, b, CMP_TYPE | CMP_LAYOUT);
}

bool cxla_shape_compatible(const cxla_shape *a, const cxla_shape *b) {
    return shapes_match(a, b, CMP_TYPE);
}

bool cxla_shape_same_dims(const cxla_shape *a, const cxla_shape *b) {
    return shapes_match(a, b, 0);
}

/* ---- Layouts and index arithmetic --------------------------------------------------- */

cxla_status cxla_layout_make_default(cxla_arena *arena, int64_t rank, cxla_layout **out_layout) {
    *out_layout = NULL;
    if (rank < 0 || rank > CXLA_MAX_RANK)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "rank %lld is outside 0..%d",
                          (long long)rank, CXLA_MAX_RANK);
    cxla_layout *l = cxla_arena_alloc(arena, sizeof(cxla_layout));
    int64_t *m2m = rank ? cxla_arena_alloc_array(arena, (size_t)rank, sizeof(int64_t)) : NULL;
    if (!l || (rank && !m2m))
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory making a layout");
    for (int64_t i = 0; i < rank; i++) m2m[i] = rank - 1 - i;
    l->minor_to_major = m2m;
    *out_layout = l;
    return NULL;
}

bool cxla_layout_is_default(const cxla_shape *shape) {
    const cxla_layout *l = shape->layout;
    if (!l) return true;
    for (int64_t i = 0; i < shape->rank; i++) {
        if (l->minor_to_major && l->minor_to_major[i] != shape->rank - 1 - i) return false;
        if (l->padded_dims && l->padded_dims[i] != shape->dims[i]) return false;
    }
    return true;
}

void cxla_shape_minor_to_major(const cxla_shape *shape, int64_t *minor_to_major) {
    const cxla_layout *l = shape->layout;
    for (int64_t i = 0; i < shape->rank; i++)
        minor_to_major[i] = l && l->minor_to_major ? l->minor_to_major[i] : shape->rank - 1 - i;
}

/* Width of dimension |d| in memory: the padded width if any, never negative. */
static int64_t mem_width(const cxla_shape *s, int64_t d) {
    const cxla_layout *l = s->layout;
    int64_t w = l && l->padded_dims ? l->padded_dims[d] : s->dims[d];
    return w < 0 ? 0 : w;
}

void cxla_shape_strides(const cxla_shape *shape, int64_t *strides) {
    CXLA_ASSERT(shape->rank >= 0 && shape->rank <= CXLA_MAX_RANK);
    int64_t m2m[CXLA_MAX_RANK];
    cxla_shape_minor_to_major(shape, m2m);
    for (int64_t i = 0; i < shape->rank; i++) strides[i] = 0;
    int64_t stride = 1;
    for (int64_t i = 0; i < shape->rank; i++) {
        int64_t d = m2m[i];
        if (d < 0 || d >= shape->rank) continue;
        strides[d] = stride;
        if (!cxla_mul_i64(stride, mem_width(shape, d), &stride)) stride = INT64_MAX;
    }
}

int64_t cxla_shape_linear_index(const cxla_shape *shape, const int64_t *index) {
    CXLA_ASSERT(shape->rank >= 0 && shape->rank <= CXLA_MAX_RANK);
    int64_t strides[CXLA_MAX_RANK];
    cxla_shape_strides(shape, strides);
    uint64_t linear = 0; /* unsigned: no undefined behaviour on a bad index */
    for (int64_t i = 0; i < shape->rank; i++) linear += (uint64_t)index[i] * (uint64_t)strides[i];
    return (int64_t)linear;
}

bool cxla_shape_multi_index(const cxla_shape *shape, int64_t linear, int64_t *index) {
    CXLA_ASSERT(shape->rank >= 0 && shape->rank <= CXLA_MAX_RANK);
    if (linear < 0) return false;
    int64_t m2m[CXLA_MAX_RANK];
    cxla_shape_minor_to_major(shape, m2m);
    for (int64_t i = 0; i < shape->rank; i++) index[i] = 0;
    bool padding = false;
    for (int64_t i = 0; i < shape->rank; i++) {
        int64_t d = m2m[i];
        if (d < 0 || d >= shape->rank) return false;
        int64_t w = mem_width(shape, d);
        if (w == 0) return false; /* no slots at all */
        index[d] = linear % w;
        linear /= w;
        if (index[d] >= shape->dims[d]) padding = true;
    }
    return linear == 0 && !padding;
}

bool cxla_index_next(int64_t rank, const int64_t *dims, int64_t *index) {
    for (int64_t i = 0; i < rank; i++)
        if (dims[i] <= 0) return false; /* an empty array has no next index */
    for (int64_t i = rank - 1; i >= 0; i--) {
        if (++index[i] < dims[i]) return true;
        index[i] = 0;
    }
    return false;
}
