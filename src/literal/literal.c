/* Literals: creation, element access, conversion, relayout and comparison. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/floats.h"
#include "base/memcount.h"
#include "literal/literal_internal.h"
#include "shape/shape_internal.h"

/* ---- creation ------------------------------------------------------------------ */

/* A literal is one malloc block: the struct, then its data (arrays) or its element
 * pointers (tuples), then its shape, so that making a small value costs one allocation
 * (the interpreter makes one per instruction it runs). |packed| says which parts are in
 * the block; a part replaced later (cxla_literal_replace_shape) has a block of its own. */
enum { PACKED_DATA = 1, PACKED_ELEMENTS = 2, PACKED_SHAPE = 4, BORROWED_DATA = 8 };

static size_t round16(size_t n) {
    return (n + 15) & ~(size_t)15;
}

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* ---- blocks ---- *
 * The interpreter makes and frees a literal per instruction it runs, most of them small
 * and of a few sizes, and often more of one size alive at once than glibc's per-thread
 * cache keeps (7 per size), so that most would take malloc's slow paths. So each thread
 * keeps up to CACHE_DEPTH freed blocks of each size up to CACHE_MAX bytes (in 16-byte
 * steps) for its next literals of that size; a thread's blocks are freed when it exits
 * (the main thread's at process exit, by the system). */
enum { CACHE_MAX = 1024, CACHE_CLASSES = CACHE_MAX / 16, CACHE_DEPTH = 32 };
/* Array data of this many bytes and more starts on a 64-byte line (create_plain_array). */
enum { BIG_DATA = 4096 };

typedef struct block_cache {
    void *free[CACHE_CLASSES]; /* blocks of (class + 1) * 16 bytes, linked by first word */
    int count[CACHE_CLASSES];
    bool armed;  /* the thread-exit destructor is set for this thread */
    bool closed; /* this thread is exiting: free blocks at once */
} block_cache;

static _Thread_local block_cache cache;
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static bool cache_key_ok;

static void cache_flush(void *arg) {
    block_cache *c = arg;
    for (int k = 0; k < CACHE_CLASSES; k++)
        while (c->free[k]) {
            void *next = *(void **)c->free[k];
            free(c->free[k]);
            c->free[k] = next;
        }
    c->closed = true;
}

static void cache_key_create(void) {
    cache_key_ok = pthread_key_create(&cache_key, cache_flush) == 0;
}

/* A zeroed block of |size| bytes (a multiple of 16). |*cls| is its cache class + 1, or 0
 * when it is not cached. Big blocks go through calloc, which gets fresh zero pages from
 * the system without writing them; small ones through malloc and memset, since glibc's
 * calloc (2.36) does not use the per-thread cache. */
static void *block_alloc_zeroing(size_t size, size_t zero, uint8_t *cls) {
    *cls = 0;
#if defined(CXLA_FAULT_INJECTION)
    /* Every literal allocates, so that each one can be made to fail (base/fault.h). */
    return calloc(1, size ? size : 1);
#endif
    if (size == 0 || size > CACHE_MAX) { /* no class 0 */
        void *big = calloc(1, size ? size : 1);
        cxla_advise_huge_pages(big, size);
        return big;
    }
    int k = (int)(size / 16) - 1;
    void *p = cache.free[k];
    if (p) {
        cache.free[k] = *(void **)p;
        cache.count[k]--;
    } else if (!(p = malloc(size))) {
        return NULL;
    }
    memset(p, 0, zero);
    *cls = (uint8_t)(k + 1);
    return p;
}

static void *block_alloc(size_t size, uint8_t *cls) {
    return block_alloc_zeroing(size, size, cls);
}

static void block_free(void *block, uint8_t cls) {
    int k = cls - 1;
    if (cls == 0 || cache.closed || cache.count[k] >= CACHE_DEPTH) {
        free(block);
        return;
    }
    if (!cache.armed) { /* the first block this thread keeps: free them at its exit */
        pthread_once(&cache_once, cache_key_create);
        if (!cache_key_ok || pthread_setspecific(cache_key, &cache) != 0) {
            cache.closed = true;
            free(block);
            return;
        }
        cache.armed = true;
    }
    *(void **)block = cache.free[k];
    cache.free[k] = block;
    cache.count[k]++;
}

/* Allocates a zeroed literal with |lead| bytes after the struct (data or element
 * pointers) and room for a copy of |shape|, which it makes; NULL when out of memory. */
static cxla_literal *literal_alloc(size_t lead, const cxla_shape *shape) {
    size_t head = round16(sizeof(cxla_literal)), shape_size, total;
    if (lead > SIZE_MAX - 15 || !cxla_shape_block_size(shape, &shape_size) ||
        !cxla_add_size(head, round16(lead), &total) || !cxla_add_size(total, shape_size, &total))
        return NULL;
    uint8_t cls;
    char *block = block_alloc(total, &cls);
    if (!block) return NULL;
    cxla_literal *lit = (cxla_literal *)block;
    lit->cache_class = cls;
    lit->shape = cxla_shape_copy_into(block + total - shape_size, shape_size, shape);
    lit->packed = PACKED_SHAPE;
    return lit;
}

/* Where |lit|'s data or element pointers are when they are in its block. */
static void *lead_of(cxla_literal *lit) {
    return (char *)lit + round16(sizeof(cxla_literal));
}

/* The default (row-major, plain) layout of each rank, shared by the literals that have
 * it instead of a copy in each block: descending[CXLA_MAX_RANK - r ..] is r-1, ..., 0.
 * Read-only in practice (nothing writes through a literal's layout); not const only
 * because cxla_layout's arrays are not. */
_Static_assert(CXLA_MAX_RANK == 64, "the tables below are written out for rank 64");
#define DESC1(i)  (CXLA_MAX_RANK - 1 - (i)),
#define DESC4(i)  DESC1(i) DESC1(i + 1) DESC1(i + 2) DESC1(i + 3)
#define DESC16(i) DESC4(i) DESC4(i + 4) DESC4(i + 8) DESC4(i + 12)
static int64_t descending[CXLA_MAX_RANK] = {DESC16(0) DESC16(16) DESC16(32) DESC16(48)};
#define DEFAULT1(r)  {.minor_to_major = (r) ? descending + CXLA_MAX_RANK - (r) : NULL},
#define DEFAULT4(r)  DEFAULT1(r) DEFAULT1(r + 1) DEFAULT1(r + 2) DEFAULT1(r + 3)
#define DEFAULT16(r) DEFAULT4(r) DEFAULT4(r + 4) DEFAULT4(r + 8) DEFAULT4(r + 12)
static cxla_layout default_layouts[CXLA_MAX_RANK + 1] = {DEFAULT16(0) DEFAULT16(16) DEFAULT16(32)
                                                             DEFAULT16(48) DEFAULT1(64)};

static bool is_shared_default(const cxla_layout *l) {
    return l >= default_layouts && l <= default_layouts + CXLA_MAX_RANK;
}

/* create_array for the common case, a static array with no layout or a plain one (no
 * padding, tiles or extensions): the block's size and its shape are written directly
 * instead of measuring and copying the shape generically, which was most of the cost of
 * a scalar result. NULL when |shape| is not such a case or its size overflows (the
 * general path then decides); |*oom| says that it was such a case but memory was short. */
static cxla_literal *create_plain_array(const cxla_shape *shape, bool *oom) {
    const cxla_layout *sl = shape->layout;
    *oom = false;
    if (shape->dynamic || shape->rank < 0 || shape->rank > CXLA_MAX_RANK ||
        (sl && (sl->padded_dims || sl->tiles || sl->tile_count || sl->extra ||
                (shape->rank > 0 && !sl->minor_to_major))) ||
        (shape->rank > 0 && !shape->dims))
        return NULL;
    size_t rank = (size_t)shape->rank, count = 1, size;
    for (size_t i = 0; i < rank; i++)
        if (shape->dims[i] < 0 || !cxla_mul_size(count, (size_t)shape->dims[i], &count))
            return NULL;
    if (count > INT64_MAX || !cxla_mul_size(count, cxla_type_storage(shape->type), &size) ||
        size > (size_t)INT64_MAX - 15)
        return NULL;
    /* The block: struct, data, shape, dims, then a layout and its minor_to_major unless
     * the layout is the default one, which is shared. */
    bool shared = !sl || is_shared_default(sl);
    size_t head = round16(sizeof(cxla_literal)), arr = round16(rank * sizeof(int64_t));
    size_t shape_at = head + round16(size), dims_at = shape_at + round16(sizeof(cxla_shape));
    size_t layout_at = dims_at + arr, m2m_at = layout_at + round16(sizeof(cxla_layout));
    size_t total = shared ? layout_at : m2m_at + arr;
    /* The data of a big array starts on a 64-byte line (as NumPy's and PyTorch's do): the
     * cpu backend's streaming stores write whole lines of a result (src/cpu/emit.c), and
     * vector loads stay within lines. Big blocks come from calloc (zeroed whole, not
     * cached), so the padding costs nothing else. */
    size_t slack = size >= BIG_DATA ? 48 : 0;
    uint8_t cls;
    /* Zeroed: the struct and the data; the shape's part is written below. The data
     * counts as memory held (cxla_mem_take) from here to cxla_literal_free. */
    if (!cxla_mem_take(size)) {
        *oom = true;
        return NULL;
    }
    char *block = block_alloc_zeroing(total + slack, shape_at + slack, &cls);
    if (!block) {
        cxla_mem_give(size);
        *oom = true;
        return NULL;
    }
    if (slack) {
        size_t pad = (64 - (((uintptr_t)block + head) & 63)) & 63;
        head += pad, shape_at += pad, dims_at += pad, layout_at += pad, m2m_at += pad;
    }
    cxla_literal *lit = (cxla_literal *)block;
    lit->cache_class = cls;
    lit->packed = PACKED_SHAPE;
    lit->size = size;
    lit->count = (int64_t)count;
    if (size) {
        lit->data = block + head;
        lit->packed |= PACKED_DATA;
    }
    cxla_shape *sh = (cxla_shape *)(block + shape_at);
    int64_t *dims = rank ? (int64_t *)(block + dims_at) : NULL;
    if (rank) memcpy(dims, shape->dims, rank * sizeof(int64_t));
    cxla_layout *l = &default_layouts[rank];
    if (!shared) {
        l = (cxla_layout *)(block + layout_at);
        int64_t *m2m = rank ? (int64_t *)(block + m2m_at) : NULL;
        *l = *sl;
        l->minor_to_major = m2m;
        if (rank) memcpy(m2m, sl->minor_to_major, rank * sizeof(int64_t));
    }
    *sh = (cxla_shape){.type = shape->type, .rank = shape->rank, .dims = dims, .layout = l};
    lit->shape = sh;
    return lit;
}

/* Out of memory for an array of |shape|: the message says what did not fit. */
static cxla_status array_oom(const cxla_shape *shape) {
    size_t size = 0;
    cxla_status bad = cxla_shape_byte_size(shape, &size);
    cxla_status_free(bad);
    char *text = cxla_shape_to_string(shape, CXLA_SHAPE_PRINT_NO_LAYOUT);
    cxla_status s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                               "out of memory allocating an array of %s (%zu bytes)",
                               text ? text : "its shape", size);
    free(text);
    return s;
}

static cxla_status create_array(const cxla_shape *shape, cxla_literal **out) {
    bool oom;
    cxla_literal *plain = create_plain_array(shape, &oom);
    if (plain) {
        *out = plain;
        return NULL;
    }
    if (oom) return array_oom(shape);
    if (shape->layout && shape->layout->tile_count > 0)
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "literals of tiled layouts are not supported (shape has %" PRId64
                          " tiles); use an untiled layout",
                          shape->layout->tile_count);
    if (shape->dynamic)
        for (int64_t i = 0; i < shape->rank; i++)
            if (shape->dims[i] == CXLA_DIM_UNBOUNDED)
                return cxla_error(
                    CXLA_STATUS_INVALID_ARGUMENT,
                    "a literal cannot have an unbounded dimension (dimension %" PRId64 ")", i);
    size_t size;
    int64_t count;
    CXLA_RETURN_IF_ERROR(cxla_shape_byte_size(shape, &size));
    CXLA_RETURN_IF_ERROR(cxla_shape_element_count(shape, &count));
    /* Arrays always carry a layout: the default one when |shape| has none. */
    int64_t m2m[CXLA_MAX_RANK];
    cxla_layout layout = {.minor_to_major = m2m};
    cxla_shape with = *shape;
    if (!shape->layout) {
        for (int64_t i = 0; i < shape->rank; i++) m2m[i] = shape->rank - 1 - i;
        with.layout = &layout;
    }
    if (!cxla_mem_take(size)) return array_oom(shape);
    cxla_literal *lit = literal_alloc(size, &with);
    if (!lit) {
        cxla_mem_give(size);
        return array_oom(shape);
    }
    lit->size = size;
    lit->count = count;
    if (size) {
        lit->data = lead_of(lit);
        lit->packed |= PACKED_DATA;
    }
    *out = lit;
    return NULL;
}

cxla_status cxla_literal_create_over(const cxla_shape *shape, void *data, size_t size,
                                     cxla_literal **out) {
    size_t need;
    int64_t count;
    if (!cxla_type_is_array(shape->type) || shape->dynamic ||
        (shape->layout && shape->layout->tile_count > 0))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "a literal over caller memory must be a static untiled array");
    CXLA_RETURN_IF_ERROR(cxla_shape_byte_size(shape, &need));
    CXLA_RETURN_IF_ERROR(cxla_shape_element_count(shape, &count));
    if (need > size || (need && !data))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "%zu bytes of caller memory for an array of %zu bytes", size, need);
    int64_t m2m[CXLA_MAX_RANK];
    cxla_layout layout = {.minor_to_major = m2m};
    cxla_shape with = *shape;
    if (!shape->layout) {
        for (int64_t i = 0; i < shape->rank; i++) m2m[i] = shape->rank - 1 - i;
        with.layout = &layout;
    }
    cxla_literal *lit = literal_alloc(0, &with);
    if (!lit) return OOM();
    lit->size = need;
    lit->count = count;
    lit->data = need ? data : NULL;
    lit->packed |= BORROWED_DATA;
    *out = lit;
    return NULL;
}

/* Gives |dst| (same dims as |src|) the dynamic sizes of |src|. */
static cxla_status copy_sizes(cxla_literal *dst, const cxla_literal *src) {
    if (!src->dyn_sizes) return NULL;
    size_t n = (size_t)src->shape->rank * sizeof(int64_t);
    dst->dyn_sizes = malloc(n);
    if (!dst->dyn_sizes) return OOM();
    memcpy(dst->dyn_sizes, src->dyn_sizes, n);
    return NULL;
}

/* Wraps |elements| in a tuple (taking ownership on success). The tuple's shape holds
 * shallow copies of its elements' shapes: their arrays stay in the elements' blocks,
 * which the tuple owns, so that a tuple costs one allocation whatever its elements. */
static cxla_status wrap_tuple(cxla_literal **elements, int64_t count, cxla_literal **out) {
    size_t lead, shapes;
    if (!cxla_mul_size((size_t)count, sizeof(cxla_literal *), &lead) ||
        !cxla_mul_size((size_t)count, sizeof(cxla_shape), &shapes) || shapes > SIZE_MAX - 16)
        return OOM();
    size_t head = round16(sizeof(cxla_literal)), total;
    if (!cxla_add_size(head, round16(lead), &total) ||
        !cxla_add_size(total, round16(sizeof(cxla_shape)) + round16(shapes), &total))
        return OOM();
    uint8_t cls;
    char *block = block_alloc(total, &cls);
    if (!block) return OOM();
    cxla_literal *lit = (cxla_literal *)block;
    lit->cache_class = cls;
    cxla_shape *shape = (cxla_shape *)(block + head + round16(lead));
    shape->type = CXLA_TUPLE;
    shape->tuple_count = count;
    if (count > 0) {
        shape->elements = (cxla_shape *)((char *)shape + round16(sizeof(cxla_shape)));
        lit->elements = (cxla_literal **)(block + head);
        memcpy(lit->elements, elements, lead);
        for (int64_t i = 0; i < count; i++) shape->elements[i] = *elements[i]->shape;
    }
    lit->shape = shape;
    lit->packed = PACKED_SHAPE | PACKED_ELEMENTS;
    lit->tuple_count = count;
    *out = lit;
    return NULL;
}

static cxla_status create_any(const cxla_shape *shape, cxla_literal **out) {
    if (shape->type == CXLA_TUPLE) {
        cxla_literal **elements = NULL;
        if (shape->tuple_count > 0) {
            elements = calloc((size_t)shape->tuple_count, sizeof(*elements));
            if (!elements) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        }
        cxla_status s = NULL;
        for (int64_t i = 0; i < shape->tuple_count && !s; i++)
            s = create_any(&shape->elements[i], &elements[i]);
        if (!s) s = wrap_tuple(elements, shape->tuple_count, out);
        if (s)
            for (int64_t i = 0; i < shape->tuple_count; i++) cxla_literal_free(elements[i]);
        free(elements);
        return s;
    }
    if (shape->type == CXLA_TOKEN || shape->type == CXLA_OPAQUE) {
        cxla_shape bare = {.type = shape->type};
        *out = literal_alloc(0, &bare);
        return *out ? NULL : OOM();
    }
    return create_array(shape, out);
}

cxla_status cxla_literal_create(const cxla_shape *shape, cxla_literal **out_literal) {
    CXLA_RETURN_IF_ERROR(cxla_shape_validate(shape));
    return create_any(shape, out_literal);
}

cxla_status cxla_literal_create_validated(const cxla_shape *shape, cxla_literal **out_literal) {
    return create_any(shape, out_literal);
}

cxla_status cxla_literal_create_tuple(cxla_literal **elements, int64_t count,
                                      cxla_literal **out_literal) {
    if (count < 0) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "negative tuple size");
    for (int64_t i = 0; i < count; i++)
        if (!elements[i])
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "tuple element %" PRId64 " is NULL", i);
    return wrap_tuple(elements, count, out_literal);
}

cxla_status cxla_literal_create_scalar(cxla_type type, double value, cxla_literal **out_literal) {
    cxla_shape shape = {.type = type};
    if (!cxla_type_is_array(type))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "a scalar cannot have type %s",
                          cxla_type_name(type));
    CXLA_RETURN_IF_ERROR(cxla_literal_create(&shape, out_literal));
    cxla_store_f64(type, (*out_literal)->data, value);
    return NULL;
}

cxla_status cxla_literal_clone(const cxla_literal *literal, cxla_literal **out_literal) {
    if (literal->shape->type == CXLA_TUPLE) {
        int64_t n = literal->tuple_count;
        cxla_literal **elements = n > 0 ? calloc((size_t)n, sizeof(*elements)) : NULL;
        if (n > 0 && !elements) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        cxla_status s = NULL;
        for (int64_t i = 0; i < n && !s; i++)
            s = cxla_literal_clone(literal->elements[i], &elements[i]);
        if (!s) s = wrap_tuple(elements, n, out_literal);
        if (s)
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        free(elements);
        return s;
    }
    CXLA_RETURN_IF_ERROR(create_any(literal->shape, out_literal));
    if (literal->size) memcpy((*out_literal)->data, literal->data, literal->size);
    cxla_status s = copy_sizes(*out_literal, literal);
    if (s) {
        cxla_literal_free(*out_literal);
        *out_literal = NULL;
    }
    return s;
}

/* The empty tuple a taken tuple element leaves behind: one shared, read-only literal
 * (nothing can change an empty tuple), so that taking costs no allocation; never freed. */
static cxla_shape empty_tuple_shape = {.type = CXLA_TUPLE};
static cxla_literal empty_tuple = {.shape = &empty_tuple_shape};

void cxla_literal_destroy(cxla_literal *literal) {
    cxla_literal_free(literal);
}

void cxla_literal_free(cxla_literal *literal) {
    if (!literal || literal == &empty_tuple) return;
    for (int64_t i = 0; i < literal->tuple_count; i++) cxla_literal_free(literal->elements[i]);
    /* (Tests before each free: most literals have nothing outside their block.) */
    if (literal->elements && !(literal->packed & PACKED_ELEMENTS)) free(literal->elements);
    if (literal->data && !(literal->packed & (PACKED_DATA | BORROWED_DATA))) free(literal->data);
    if (literal->packed & PACKED_DATA) cxla_mem_give(literal->size);
    if (!(literal->packed & PACKED_SHAPE)) cxla_shape_free(literal->shape);
    if (literal->dyn_sizes) free(literal->dyn_sizes);
    block_free(literal, literal->cache_class);
}

cxla_status cxla_literal_replace_shape(cxla_literal *literal, const cxla_shape *shape) {
    cxla_shape *copy;
    CXLA_RETURN_IF_ERROR(cxla_shape_clone(shape, &copy));
    if (!(literal->packed & PACKED_SHAPE)) cxla_shape_free(literal->shape);
    literal->shape = copy;
    literal->packed &= ~PACKED_SHAPE;
    return NULL;
}

void cxla_literal_tuple_refresh_shape(cxla_literal *tuple) {
    if (!(tuple->packed & PACKED_SHAPE)) return; /* a deep copy, not made here */
    for (int64_t i = 0; i < tuple->tuple_count; i++)
        tuple->shape->elements[i] = *tuple->elements[i]->shape;
}

/* ---- accessors ----------------------------------------------------------------- */

const cxla_shape *cxla_literal_shape(const cxla_literal *literal) {
    return literal->shape;
}
cxla_type cxla_literal_type(const cxla_literal *literal) {
    return literal->shape->type;
}
int64_t cxla_literal_element_count(const cxla_literal *literal) {
    return literal->count;
}
void *cxla_literal_data(cxla_literal *literal) {
    return literal->data;
}
const void *cxla_literal_data_const(const cxla_literal *literal) {
    return literal->data;
}
size_t cxla_literal_byte_size(const cxla_literal *literal) {
    return literal->size;
}
int64_t cxla_literal_tuple_count(const cxla_literal *literal) {
    return literal->tuple_count;
}

cxla_literal *cxla_literal_tuple_element(cxla_literal *literal, int64_t i) {
    return (i >= 0 && i < literal->tuple_count) ? literal->elements[i] : NULL;
}

const cxla_literal *cxla_literal_tuple_element_const(const cxla_literal *literal, int64_t i) {
    return (i >= 0 && i < literal->tuple_count) ? literal->elements[i] : NULL;
}

cxla_literal *cxla_literal_tuple_take(cxla_literal *literal, int64_t i) {
    if (i < 0 || i >= literal->tuple_count) return NULL;
    cxla_literal *taken = literal->elements[i];
    literal->elements[i] = &empty_tuple;
    if (literal->packed & PACKED_SHAPE) /* the shape points into the taken element */
        literal->shape->elements[i] = empty_tuple_shape;
    return taken;
}

/* Locates the element at |index|, or explains why it cannot. */
static cxla_status element_at(const cxla_literal *literal, const int64_t *index, const char *what,
                              const void **out) {
    const cxla_shape *shape = literal->shape;
    if (!cxla_type_is_array(shape->type))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s: the literal is a %s, not an array",
                          what, cxla_type_name(shape->type));
    for (int64_t i = 0; i < shape->rank; i++)
        if (index[i] < 0 || index[i] >= shape->dims[i])
            return cxla_error(CXLA_STATUS_OUT_OF_RANGE,
                              "%s: index %" PRId64 " is out of range for dimension %" PRId64
                              " of size %" PRId64,
                              what, index[i], i, shape->dims[i]);
    int64_t linear = cxla_shape_linear_index(shape, index);
    *out = (const char *)literal->data + (size_t)linear * cxla_type_storage(shape->type);
    return NULL;
}

cxla_status cxla_literal_get_f64(const cxla_literal *literal, const int64_t *index,
                                 double *out_value) {
    const void *p;
    CXLA_RETURN_IF_ERROR(element_at(literal, index, "get_f64", &p));
    if (cxla_type_is_complex(literal->shape->type))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "get_f64: the literal is complex (%s); use get_c128",
                          cxla_type_name(literal->shape->type));
    *out_value = cxla_load_f64(literal->shape->type, p);
    return NULL;
}

static cxla_status need_integer(const cxla_literal *literal, const char *what) {
    cxla_type t = literal->shape->type;
    if (!cxla_type_is_integer(t) && t != CXLA_PRED)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "%s: the literal's type %s is not an integer type", what,
                          cxla_type_name(t));
    return NULL;
}

cxla_status cxla_literal_get_s64(const cxla_literal *literal, const int64_t *index,
                                 int64_t *out_value) {
    const void *p;
    CXLA_RETURN_IF_ERROR(element_at(literal, index, "get_s64", &p));
    CXLA_RETURN_IF_ERROR(need_integer(literal, "get_s64"));
    *out_value = cxla_load_s64(literal->shape->type, p);
    return NULL;
}

cxla_status cxla_literal_get_u64(const cxla_literal *literal, const int64_t *index,
                                 uint64_t *out_value) {
    const void *p;
    CXLA_RETURN_IF_ERROR(element_at(literal, index, "get_u64", &p));
    CXLA_RETURN_IF_ERROR(need_integer(literal, "get_u64"));
    *out_value = cxla_load_u64(literal->shape->type, p);
    return NULL;
}

cxla_status cxla_literal_get_c128(const cxla_literal *literal, const int64_t *index,
                                  double *out_real, double *out_imag) {
    const void *p;
    CXLA_RETURN_IF_ERROR(element_at(literal, index, "get_c128", &p));
    cxla_load_c128(literal->shape->type, p, out_real, out_imag);
    return NULL;
}

cxla_status cxla_literal_set_f64(cxla_literal *literal, const int64_t *index, double value) {
    const void *p;
    CXLA_RETURN_IF_ERROR(element_at(literal, index, "set_f64", &p));
    cxla_store_f64(literal->shape->type, (void *)p, value);
    return NULL;
}

cxla_status cxla_literal_set_s64(cxla_literal *literal, const int64_t *index, int64_t value) {
    const void *p;
    CXLA_RETURN_IF_ERROR(element_at(literal, index, "set_s64", &p));
    cxla_store_s64(literal->shape->type, (void *)p, value);
    return NULL;
}

cxla_status cxla_literal_set_u64(cxla_literal *literal, const int64_t *index, uint64_t value) {
    const void *p;
    CXLA_RETURN_IF_ERROR(element_at(literal, index, "set_u64", &p));
    cxla_store_u64(literal->shape->type, (void *)p, value);
    return NULL;
}

cxla_status cxla_literal_set_c128(cxla_literal *literal, const int64_t *index, double real,
                                  double imag) {
    const void *p;
    CXLA_RETURN_IF_ERROR(element_at(literal, index, "set_c128", &p));
    /* A complex value into a real, integer or pred literal: the conversion
     * cxla_literal_convert refuses, refused here too (get_f64's mirror). */
    if (!cxla_type_is_complex(literal->shape->type))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "set_c128: the literal is not complex (%s); use set_f64",
                          cxla_type_name(literal->shape->type));
    cxla_store_c128(literal->shape->type, (void *)p, real, imag);
    return NULL;
}

/* ---- convert and relayout ------------------------------------------------------ */

cxla_status cxla_literal_convert(const cxla_literal *literal, cxla_type type,
                                 cxla_literal **out_literal) {
    const cxla_shape *shape = literal->shape;
    if (shape->type == CXLA_TUPLE) {
        int64_t n = literal->tuple_count;
        cxla_literal **elements = n > 0 ? calloc((size_t)n, sizeof(*elements)) : NULL;
        if (n > 0 && !elements) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        cxla_status s = NULL;
        for (int64_t i = 0; i < n && !s; i++)
            s = cxla_literal_convert(literal->elements[i], type, &elements[i]);
        if (!s) s = wrap_tuple(elements, n, out_literal);
        if (s)
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        free(elements);
        return s;
    }
    if (!cxla_type_is_array(shape->type)) return cxla_literal_clone(literal, out_literal);
    if (!cxla_type_is_array(type))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cannot convert %s to %s",
                          cxla_type_name(shape->type), cxla_type_name(type));
    /* As XLA's Literal::Convert and its convert operation: a complex value has no
     * conversion to a real, integer or boolean type (docs/semantics.md). */
    if (cxla_type_is_complex(shape->type) && !cxla_type_is_complex(type))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "cannot convert %s to %s: a complex value does not convert to a "
                          "real, integer or boolean type (XLA refuses it too); take the real "
                          "part first (cxla_literal_get_c128, or HLO's real)",
                          cxla_type_name(shape->type), cxla_type_name(type));
    cxla_shape target = *shape;
    target.type = type;
    CXLA_RETURN_IF_ERROR(create_array(&target, out_literal));
    /* Same layout on both sides: convert slot by slot, padding included. */
    size_t from_size = cxla_type_storage(shape->type), to_size = cxla_type_storage(type);
    size_t slots = literal->size / from_size;
    const char *src = literal->data;
    char *dst = (*out_literal)->data;
    /* Between real float types in bulk (the same bits, without a call per element). */
    if (!cxla_floats_convert(shape->type, src, type, dst, (int64_t)slots))
        for (size_t i = 0; i < slots; i++)
            cxla_convert_element(shape->type, src + i * from_size, type, dst + i * to_size);
    cxla_status s = copy_sizes(*out_literal, literal);
    if (s) {
        cxla_literal_free(*out_literal);
        *out_literal = NULL;
    }
    return s;
}

cxla_status cxla_literal_relayout(const cxla_literal *literal, const cxla_layout *layout,
                                  cxla_literal **out_literal) {
    const cxla_shape *shape = literal->shape;
    if (!cxla_type_is_array(shape->type))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "relayout needs an array literal, not a %s",
                          cxla_type_name(shape->type));
    cxla_shape target = *shape;
    target.layout = (cxla_layout *)layout;
    CXLA_RETURN_IF_ERROR(cxla_shape_validate(&target));
    CXLA_RETURN_IF_ERROR(create_array(&target, out_literal));
    const cxla_shape *to = (*out_literal)->shape;
    size_t esize = cxla_type_storage(shape->type);
    int64_t rank = shape->rank;
    int64_t from_strides[CXLA_MAX_RANK], to_strides[CXLA_MAX_RANK], index[CXLA_MAX_RANK] = {0};
    cxla_shape_strides(shape, from_strides);
    cxla_shape_strides(to, to_strides);
    cxla_status s = copy_sizes(*out_literal, literal);
    if (s) {
        cxla_literal_free(*out_literal);
        *out_literal = NULL;
        return s;
    }
    if (literal->count == 0) return NULL;
    bool same = literal->size == (*out_literal)->size;
    for (int64_t d = 0; d < rank && same; d++) same = from_strides[d] == to_strides[d];
    if (same) { /* the same order in memory (a constant already in the default layout) */
        memcpy((*out_literal)->data, literal->data, literal->size);
        return NULL;
    }
    do {
        int64_t a = 0, b = 0;
        for (int64_t d = 0; d < rank; d++) {
            a += index[d] * from_strides[d];
            b += index[d] * to_strides[d];
        }
        memcpy((char *)(*out_literal)->data + (size_t)b * esize,
               (const char *)literal->data + (size_t)a * esize, esize);
    } while (cxla_index_next(rank, shape->dims, index));
    return NULL;
}

/* ---- comparison ---------------------------------------------------------------- */

/* Maps float bits to integers ordered like the values (for ULP distances). */
static int64_t ordered_bits(cxla_type type, const void *p) {
    uint64_t bits = 0, sign;
    int width = cxla_type_bits(type);
    if (type == CXLA_F64 || type == CXLA_C128) {
        memcpy(&bits, p, 8);
        width = 64;
    } else if (type == CXLA_F32 || type == CXLA_C64) {
        uint32_t b;
        memcpy(&b, p, 4);
        bits = b;
        width = 32;
    } else if (cxla_type_storage(type) == 2) {
        uint16_t b;
        memcpy(&b, p, 2);
        bits = b;
    } else {
        bits = *(const uint8_t *)p & ((1u << width) - 1);
    }
    if (type == CXLA_F8E8M0FNU) return (int64_t)bits; /* unsigned: no sign bit */
    sign = (uint64_t)1 << (width - 1);
    if (bits & sign) return -(int64_t)(bits & (sign - 1));
    return (int64_t)bits;
}

typedef struct compare_ctx {
    const cxla_tolerance *tol;
    int64_t mismatches;
    bool have_first;
    int64_t first_index[CXLA_MAX_RANK];
    double first_actual[2], first_expected[2];
} compare_ctx;

static bool real_matches(double a, double e, cxla_type type, const void *pa, const void *pe,
                         const cxla_tolerance *tol) {
    if (isnan(a) || isnan(e)) return isnan(a) && isnan(e);
    if (!tol) return a == e && signbit(a) == signbit(e);
    if (isinf(a) || isinf(e)) return a == e;
    if (fabs(a - e) <= tol->atol + tol->rtol * fabs(e)) return true;
    if (tol->ulps > 0 && (cxla_type_is_float(type) || cxla_type_is_complex(type))) {
        int64_t d = ordered_bits(type, pa) - ordered_bits(type, pe);
        if (d < 0) d = -d;
        return d <= tol->ulps;
    }
    return false;
}

static bool element_matches(cxla_type type, const void *pa, const void *pe,
                            const cxla_tolerance *tol, double *va, double *ve) {
    if (cxla_type_is_integer(type) || type == CXLA_PRED) {
        uint64_t a = cxla_load_u64(type, pa), e = cxla_load_u64(type, pe);
        va[0] = cxla_load_f64(type, pa);
        ve[0] = cxla_load_f64(type, pe);
        va[1] = ve[1] = 0;
        if (!tol || a == e) return a == e;
        return fabs(va[0] - ve[0]) <= tol->atol + tol->rtol * fabs(ve[0]);
    }
    cxla_load_c128(type, pa, &va[0], &va[1]);
    cxla_load_c128(type, pe, &ve[0], &ve[1]);
    if (!real_matches(va[0], ve[0], type, pa, pe, tol)) return false;
    if (!cxla_type_is_complex(type)) return true;
    size_t half = cxla_type_storage(type) / 2;
    return real_matches(va[1], ve[1], type, (const char *)pa + half, (const char *)pe + half, tol);
}

static void print_index(cxla_strbuf *b, int64_t rank, const int64_t *index) {
    cxla_strbuf_putc(b, '{');
    for (int64_t i = 0; i < rank; i++) cxla_strbuf_printf(b, "%s%" PRId64, i ? "," : "", index[i]);
    cxla_strbuf_putc(b, '}');
}

static void print_value(cxla_strbuf *b, cxla_type type, const double *v) {
    int digits = (type == CXLA_F64 || type == CXLA_C128) ? 17 : 9;
    if (cxla_type_is_integer(type) || type == CXLA_PRED)
        cxla_strbuf_printf(b, "%.17g", v[0]);
    else if (cxla_type_is_complex(type))
        cxla_strbuf_printf(b, "(%.*g, %.*g)", digits, v[0], digits, v[1]);
    else
        cxla_strbuf_printf(b, "%.*g", digits, v[0]);
}

/* Compares two literals; |path| describes the position inside tuples for messages. */
static cxla_status compare_rec(const cxla_literal *a, const cxla_literal *e,
                               const cxla_tolerance *tol, cxla_strbuf *path) {
    const cxla_shape *sa = a->shape, *se = e->shape;
    if (sa->type != se->type || (sa->type == CXLA_TUPLE && a->tuple_count != e->tuple_count) ||
        (cxla_type_is_array(sa->type) && !cxla_shape_same_dims(sa, se))) {
        char *ta = cxla_shape_to_string(sa, CXLA_SHAPE_PRINT_NO_LAYOUT);
        char *te = cxla_shape_to_string(se, CXLA_SHAPE_PRINT_NO_LAYOUT);
        cxla_status s =
            cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%sshape %s differs from expected %s",
                       path->data ? path->data : "", ta ? ta : "?", te ? te : "?");
        free(ta);
        free(te);
        return s;
    }
    if (sa->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < a->tuple_count; i++) {
            size_t mark = path->len;
            cxla_strbuf_printf(path, "tuple element %" PRId64 ": ", i);
            cxla_status s = compare_rec(a->elements[i], e->elements[i], tol, path);
            path->len = mark;
            if (path->data) path->data[mark] = 0;
            if (s) return s;
        }
        return NULL;
    }
    if (!cxla_type_is_array(sa->type)) return NULL;
    int64_t region[CXLA_MAX_RANK], expected_sizes[CXLA_MAX_RANK], count = 1;
    cxla_literal_sizes(a, region);
    cxla_literal_sizes(e, expected_sizes);
    for (int64_t d = 0; d < sa->rank; d++) {
        if (region[d] != expected_sizes[d])
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "%sdynamic size %" PRId64 " of dimension %" PRId64
                              " differs from expected %" PRId64,
                              path->data ? path->data : "", region[d], d, expected_sizes[d]);
        count *= region[d];
    }
    if (count == 0) return NULL;
    compare_ctx ctx = {.tol = tol};
    int64_t index[CXLA_MAX_RANK] = {0};
    size_t esize = cxla_type_storage(sa->type);
    do {
        const char *pa = (const char *)a->data + (size_t)cxla_shape_linear_index(sa, index) * esize;
        const char *pe = (const char *)e->data + (size_t)cxla_shape_linear_index(se, index) * esize;
        double va[2], ve[2];
        if (!element_matches(sa->type, pa, pe, tol, va, ve)) {
            if (!ctx.have_first) {
                ctx.have_first = true;
                memcpy(ctx.first_index, index, sizeof(int64_t) * (size_t)sa->rank);
                memcpy(ctx.first_actual, va, sizeof(va));
                memcpy(ctx.first_expected, ve, sizeof(ve));
            }
            ctx.mismatches++;
        }
    } while (cxla_index_next(sa->rank, region, index));
    if (!ctx.mismatches) return NULL;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    if (path->data) cxla_strbuf_puts(&b, path->data);
    cxla_strbuf_printf(&b, "%" PRId64 " of %" PRId64 " elements differ; first at ", ctx.mismatches,
                       count);
    print_index(&b, sa->rank, ctx.first_index);
    cxla_strbuf_puts(&b, ": actual ");
    print_value(&b, sa->type, ctx.first_actual);
    cxla_strbuf_puts(&b, ", expected ");
    print_value(&b, sa->type, ctx.first_expected);
    if (tol)
        cxla_strbuf_printf(&b, " (atol %g, rtol %g, ulps %" PRId64 ")", tol->atol, tol->rtol,
                           tol->ulps);
    cxla_status s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s", b.data ? b.data : "mismatch");
    cxla_strbuf_free(&b);
    return s;
}

cxla_status cxla_literal_compare(const cxla_literal *actual, const cxla_literal *expected,
                                 const cxla_tolerance *tolerance) {
    cxla_strbuf path;
    cxla_strbuf_init(&path);
    cxla_status s = compare_rec(actual, expected, tolerance, &path);
    cxla_strbuf_free(&path);
    return s;
}

bool cxla_literal_equal(const cxla_literal *a, const cxla_literal *b) {
    cxla_status s = cxla_literal_compare(a, b, NULL);
    bool equal = s == NULL;
    cxla_status_free(s);
    return equal;
}

/* ---- dynamic sizes --------------------------------------------------------------- */

void cxla_literal_sizes(const cxla_literal *literal, int64_t *sizes) {
    const cxla_shape *shape = literal->shape;
    for (int64_t i = 0; i < shape->rank; i++)
        sizes[i] = literal->dyn_sizes ? literal->dyn_sizes[i] : shape->dims[i];
}

int64_t cxla_literal_dynamic_size(const cxla_literal *literal, int64_t dim) {
    if (!literal || !cxla_type_is_array(literal->shape->type) || dim < 0 ||
        dim >= literal->shape->rank)
        return -1;
    return literal->dyn_sizes ? literal->dyn_sizes[dim] : literal->shape->dims[dim];
}

cxla_status cxla_literal_set_dynamic_size(cxla_literal *literal, int64_t dim, int64_t size) {
    const cxla_shape *shape = literal->shape;
    if (!cxla_type_is_array(shape->type))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "set_dynamic_size: the literal is a %s, not an array",
                          cxla_type_name(shape->type));
    if (dim < 0 || dim >= shape->rank)
        return cxla_error(CXLA_STATUS_OUT_OF_RANGE,
                          "set_dynamic_size: dimension %" PRId64
                          " is out of range for rank %" PRId64,
                          dim, shape->rank);
    int64_t bound = shape->dims[dim];
    bool dynamic = shape->dynamic && shape->dynamic[dim];
    if (!dynamic && size != bound)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "set_dynamic_size: dimension %" PRId64 " of size %" PRId64
                          " is static; it cannot have size %" PRId64,
                          dim, bound, size);
    if (size < 0 || size > bound)
        return cxla_error(CXLA_STATUS_OUT_OF_RANGE,
                          "set_dynamic_size: size %" PRId64 " of dimension %" PRId64
                          " is outside its bound 0..%" PRId64,
                          size, dim, bound);
    if (!literal->dyn_sizes) {
        if (size == bound) return NULL;
        literal->dyn_sizes = malloc((size_t)shape->rank * sizeof(int64_t));
        if (!literal->dyn_sizes) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        memcpy(literal->dyn_sizes, shape->dims, (size_t)shape->rank * sizeof(int64_t));
    }
    literal->dyn_sizes[dim] = size;
    bool padded = false;
    for (int64_t i = 0; i < shape->rank; i++)
        padded = padded || literal->dyn_sizes[i] < shape->dims[i];
    if (!padded) {
        free(literal->dyn_sizes);
        literal->dyn_sizes = NULL;
    }
    return NULL;
}

bool cxla_literal_is_padded(const cxla_literal *literal) {
    if (literal->shape->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < literal->tuple_count; i++)
            if (cxla_literal_is_padded(literal->elements[i])) return true;
        return false;
    }
    return literal->dyn_sizes != NULL;
}

void cxla_literal_copy_region(const cxla_literal *src, cxla_literal *dst, const int64_t *region) {
    const cxla_shape *ss = src->shape, *ds = dst->shape;
    int64_t rank = ss->rank, count = 1;
    for (int64_t d = 0; d < rank; d++) count *= region[d];
    if (count == 0) return;
    size_t esize = cxla_type_storage(ss->type);
    int64_t sstr[CXLA_MAX_RANK], dstr[CXLA_MAX_RANK], index[CXLA_MAX_RANK] = {0};
    cxla_shape_strides(ss, sstr);
    cxla_shape_strides(ds, dstr);
    /* Rows along the last dimension are copied whole when both sides store it densely. */
    int64_t row = rank > 0 && sstr[rank - 1] == 1 && dstr[rank - 1] == 1 ? region[rank - 1] : 1;
    int64_t outer = rank > 0 && row > 1 ? rank - 1 : rank;
    const char *sp = src->data;
    char *dp = dst->data;
    do {
        int64_t a = 0, b = 0;
        for (int64_t d = 0; d < outer; d++) {
            a += index[d] * sstr[d];
            b += index[d] * dstr[d];
        }
        memcpy(dp + (size_t)b * esize, sp + (size_t)a * esize, (size_t)row * esize);
    } while (cxla_index_next(outer, region, index));
}

cxla_status cxla_literal_to_static(const cxla_literal *literal, cxla_literal **out_literal) {
    const cxla_shape *shape = literal->shape;
    if (shape->type == CXLA_TUPLE) {
        int64_t n = literal->tuple_count;
        cxla_literal **elements = n > 0 ? calloc((size_t)n, sizeof(*elements)) : NULL;
        if (n > 0 && !elements) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        cxla_status s = NULL;
        for (int64_t i = 0; i < n && !s; i++)
            s = cxla_literal_to_static(literal->elements[i], &elements[i]);
        if (!s) s = wrap_tuple(elements, n, out_literal);
        if (s)
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        free(elements);
        return s;
    }
    if (!cxla_type_is_array(shape->type)) return cxla_literal_clone(literal, out_literal);
    int64_t sizes[CXLA_MAX_RANK];
    cxla_literal_sizes(literal, sizes);
    cxla_shape target = {.type = shape->type, .rank = shape->rank, .dims = sizes};
    CXLA_RETURN_IF_ERROR(create_array(&target, out_literal));
    cxla_literal_copy_region(literal, *out_literal, sizes);
    return NULL;
}

cxla_status cxla_literal_to_bounded(const cxla_literal *literal, const cxla_shape *shape,
                                    cxla_literal **out_literal) {
    const cxla_shape *from = literal->shape;
    if (from->type == CXLA_TUPLE || shape->type == CXLA_TUPLE) {
        if (from->type != shape->type || literal->tuple_count != shape->tuple_count)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "to_bounded: a %s literal does not fit a %s shape",
                              from->type == CXLA_TUPLE ? "tuple" : "non-tuple",
                              shape->type == CXLA_TUPLE ? "tuple" : "non-tuple");
        int64_t n = literal->tuple_count;
        cxla_literal **elements = n > 0 ? calloc((size_t)n, sizeof(*elements)) : NULL;
        if (n > 0 && !elements) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        cxla_status s = NULL;
        for (int64_t i = 0; i < n && !s; i++) {
            s = cxla_literal_to_bounded(literal->elements[i], &shape->elements[i], &elements[i]);
            if (s) s = cxla_status_annotate(s, "tuple element %" PRId64, i);
        }
        if (!s) s = wrap_tuple(elements, n, out_literal);
        if (s)
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        free(elements);
        return s;
    }
    if (!cxla_type_is_array(from->type) || from->type != shape->type || from->rank != shape->rank)
        return cxla_error(
            CXLA_STATUS_INVALID_ARGUMENT,
            "to_bounded: a %s literal of rank %" PRId64 " does not fit shape %s of rank %" PRId64,
            cxla_type_name(from->type), from->rank, cxla_type_name(shape->type), shape->rank);
    int64_t sizes[CXLA_MAX_RANK], dims[CXLA_MAX_RANK];
    uint8_t dyn[CXLA_MAX_RANK];
    cxla_literal_sizes(literal, sizes);
    for (int64_t d = 0; d < shape->rank; d++) {
        bool dynamic = shape->dynamic && shape->dynamic[d];
        dims[d] = shape->dims[d];
        dyn[d] = dynamic;
        if (dynamic && dims[d] == CXLA_DIM_UNBOUNDED) {
            dims[d] = sizes[d];
            dyn[d] = 0;
        } else if (dynamic ? sizes[d] > dims[d] : sizes[d] != dims[d]) {
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "to_bounded: size %" PRId64 " of dimension %" PRId64
                              " does not fit %s%" PRId64,
                              sizes[d], d, dynamic ? "the bound " : "the static size ", dims[d]);
        }
    }
    cxla_shape target = *shape;
    target.dims = dims;
    target.dynamic = dyn;
    CXLA_RETURN_IF_ERROR(cxla_shape_validate(&target));
    CXLA_RETURN_IF_ERROR(create_array(&target, out_literal));
    cxla_literal_copy_region(literal, *out_literal, sizes);
    for (int64_t d = 0; d < shape->rank; d++) {
        if (sizes[d] == dims[d]) continue;
        cxla_status s = cxla_literal_set_dynamic_size(*out_literal, d, sizes[d]);
        if (s) {
            cxla_literal_free(*out_literal);
            *out_literal = NULL;
            return s;
        }
    }
    return NULL;
}
