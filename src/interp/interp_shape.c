/* Interpreter handlers: the shape family (see interp.h). broadcast, reshape,
 * dynamic-reshape, transpose, slice, dynamic-slice, dynamic-update-slice, concatenate,
 * pad, reverse, bitcast, get-dimension-size; gather and scatter live in interp_gather.c,
 * set-dimension-size in interp_dynamic.c (with the rest of dynamic shapes).
 *
 * These operations move elements without looking at them, so they copy bytes by the
 * element type's storage size and work for every element type. Each is written as one
 * or a few strided box copies (interp_box below), which turn into memcpy runs where the
 * inner dimensions are contiguous on both sides and into tiled loops for transposes.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "interp/interp_gather.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* ---- strided box copies --------------------------------------------------------- */

/* Transposes are copied in tiles of TILE_B x TILE_A elements (TILE_A along the inner
 * run): few enough strided lines at once (TILE_A) that power-of-two strides do not
 * thrash the cache sets, long enough runs on the other side (TILE_B) to use whole lines. */
enum { TILE_A = 8, TILE_B = 64, TILE_MIN = 8 };

void interp_box_init(interp_box *box, int64_t rank, const int64_t *extent,
                     const int64_t *dst_strides, const int64_t *src_strides, size_t esize) {
    int64_t es = (int64_t)esize;
    box->esize = esize;
    box->rank = 0;
    box->empty = false;
    for (int64_t i = 0; i < rank; i++) {
        if (extent[i] == 0) {
            box->empty = true;
            box->rank = 0;
            return;
        }
        if (extent[i] == 1) continue;
        int64_t n = extent[i], ds = dst_strides[i] * es, ss = src_strides[i] * es;
        int64_t m = box->rank;
        if (m > 0 && box->ds[m - 1] == ds * n && box->ss[m - 1] == ss * n) {
            /* The outer dim steps over exactly the inner one on both sides: merge. */
            box->n[m - 1] *= n;
            box->ds[m - 1] = ds;
            box->ss[m - 1] = ss;
        } else {
            box->n[m] = n;
            box->ds[m] = ds;
            box->ss[m] = ss;
            box->rank++;
        }
    }
}

/* Writes the element at |s| |n| times, |ds| bytes apart. */
static void fill_run(char *d, int64_t ds, const char *s, int64_t n, size_t es) {
    if (ds == (int64_t)es) {
        memcpy(d, s, es);
        int64_t done = 1;
        while (done < n) { /* doubling copies */
            int64_t k = done < n - done ? done : n - done;
            memcpy(d + done * (int64_t)es, d, (size_t)k * es);
            done += k;
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s, es);
}

#define STRIDED_RUN(SIZE)                                                                          \
    for (int64_t i = 0; i < n; i++) {                                                              \
        memcpy(d, s, SIZE);                                                                        \
        d += ds;                                                                                   \
        s += ss;                                                                                   \
    }

/* Copies |n| elements |ss| bytes apart at |s| to |ds| bytes apart at |d|. */
static void copy_run(char *d, int64_t ds, const char *s, int64_t ss, int64_t n, size_t es) {
    if (ds == (int64_t)es && ss == (int64_t)es) {
        memcpy(d, s, (size_t)n * es);
        return;
    }
    if (ss == 0) {
        fill_run(d, ds, s, n, es);
        return;
    }
    switch (es) {
    case 1: STRIDED_RUN(1) break;
    case 2: STRIDED_RUN(2) break;
    case 4: STRIDED_RUN(4) break;
    case 8: STRIDED_RUN(8) break;
    case 16: STRIDED_RUN(16) break;
    default: STRIDED_RUN(es) break;
    }
}

/* A 2-D copy in tiles: dim a is the inner one of the run copies, dim b the other. */
static void copy_tiled(char *d, const char *s, int64_t nb, int64_t dsb, int64_t ssb, int64_t na,
                       int64_t dsa, int64_t ssa, size_t es) {
    for (int64_t b0 = 0; b0 < nb; b0 += TILE_B) {
        int64_t b1 = b0 + TILE_B < nb ? b0 + TILE_B : nb;
        for (int64_t a0 = 0; a0 < na; a0 += TILE_A) {
            int64_t len = a0 + TILE_A < na ? TILE_A : na - a0;
            for (int64_t b = b0; b < b1; b++)
                copy_run(d + b * dsb + a0 * dsa, dsa, s + b * ssb + a0 * ssa, ssa, len, es);
        }
    }
}

void interp_box_copy(const interp_box *box, void *dst, const void *src) {
    if (box->empty) return;
    char *d = dst;
    const char *s = src;
    size_t es = box->esize;
    int64_t m = box->rank;
    if (m == 0) {
        memcpy(d, s, es);
        return;
    }
    int64_t n[CXLA_MAX_RANK], ds[CXLA_MAX_RANK], ss[CXLA_MAX_RANK], idx[CXLA_MAX_RANK];
    memcpy(n, box->n, (size_t)m * sizeof(int64_t));
    memcpy(ds, box->ds, (size_t)m * sizeof(int64_t));
    memcpy(ss, box->ss, (size_t)m * sizeof(int64_t));
    /* A transpose: the inner dim is contiguous on one side only and another dim is
     * contiguous on the other side. Copy those two dims in tiles (the copy order of a
     * box is free, so the dim can move next to the inner one). */
    bool tiled = false;
    int64_t e = (int64_t)es, last = m - 1;
    if (m >= 2 && n[last] >= TILE_MIN && ((ds[last] == e) != (ss[last] == e)) && ss[last] != 0) {
        bool want_src = ds[last] == e; /* the other dim must be contiguous in the source */
        for (int64_t b = m - 2; b >= 0; b--) {
            if (n[b] >= TILE_MIN && (want_src ? ss[b] == e : ds[b] == e)) {
                int64_t t;
                t = n[b], n[b] = n[m - 2], n[m - 2] = t;
                t = ds[b], ds[b] = ds[m - 2], ds[m - 2] = t;
                t = ss[b], ss[b] = ss[m - 2], ss[m - 2] = t;
                tiled = true;
                break;
            }
        }
    }
    int64_t outer = tiled ? m - 2 : m - 1;
    for (int64_t k = 0; k < outer; k++) idx[k] = 0;
    int64_t doff = 0, soff = 0;
    for (;;) {
        if (tiled)
            copy_tiled(d + doff, s + soff, n[m - 2], ds[m - 2], ss[m - 2], n[last], ds[last],
                       ss[last], es);
        else
            copy_run(d + doff, ds[last], s + soff, ss[last], n[last], es);
        int64_t k = outer - 1;
        for (; k >= 0; k--) {
            if (++idx[k] < n[k]) {
                doff += ds[k];
                soff += ss[k];
                break;
            }
            doff -= ds[k] * (n[k] - 1);
            soff -= ss[k] * (n[k] - 1);
            idx[k] = 0;
        }
        if (k < 0) break;
    }
}

void interp_load_indices(cxla_type type, const void *src, int64_t count, int64_t *dst) {
    const char *p = src;
    switch (type) {
    case CXLA_S8:
        for (int64_t i = 0; i < count; i++) dst[i] = ((const int8_t *)src)[i];
        return;
    case CXLA_U8:
        for (int64_t i = 0; i < count; i++) dst[i] = ((const uint8_t *)src)[i];
        return;
#define LOAD_CASE(ENUM, T, EXPR)                                                                   \
    case ENUM:                                                                                     \
        for (int64_t i = 0; i < count; i++) {                                                      \
            T v;                                                                                   \
            memcpy(&v, p + i * (int64_t)sizeof(T), sizeof(T));                                     \
            dst[i] = EXPR;                                                                         \
        }                                                                                          \
        return;
        LOAD_CASE(CXLA_S16, int16_t, v)
        LOAD_CASE(CXLA_S32, int32_t, v)
        LOAD_CASE(CXLA_S64, int64_t, v)
        LOAD_CASE(CXLA_U16, uint16_t, v)
        LOAD_CASE(CXLA_U32, uint32_t, v)
        LOAD_CASE(CXLA_U64, uint64_t, v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v)
#undef LOAD_CASE
    default: {
        size_t es = cxla_type_storage(type);
        bool is_signed = cxla_type_is_signed(type);
        for (int64_t i = 0; i < count; i++) {
            const void *q = p + (size_t)i * es;
            if (is_signed) {
                dst[i] = cxla_load_s64(type, q);
            } else {
                uint64_t v = cxla_load_u64(type, q);
                dst[i] = v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
            }
        }
        return;
    }
    }
}

/* ---- helpers ------------------------------------------------------------------- */

static size_t esize_of(const cxla_literal *lit) {
    return cxla_type_storage(lit->shape->type);
}

static char *bytes(cxla_literal *lit) {
    return lit->data;
}

static const char *cbytes(const cxla_literal *lit) {
    return lit->data;
}

static cxla_status check_array(const cxla_instr *instr, const cxla_literal *x, const char *what) {
    if (!x || !cxla_type_is_array(x->shape->type))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "%s must be an array", what);
    return NULL;
}

/* The result must be an array of the operand's element type (these ops move bytes). */
static cxla_status check_result(const cxla_instr *instr, const cxla_literal *x) {
    CXLA_RETURN_IF_ERROR(check_array(instr, x, "the operand"));
    if (!cxla_type_is_array(instr->shape.type) || instr->shape.type != x->shape->type)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result type %s differs from the operand type %s",
                            cxla_type_name(instr->shape.type), cxla_type_name(x->shape->type));
    return NULL;
}

static int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

/* The one dimension named by dimensions={d}, checked against |rank|. */
static cxla_status one_dim(const cxla_instr *instr, int64_t rank, int64_t *out) {
    int64_t n;
    const int64_t *d = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &n);
    if (n != 1 || d[0] < 0 || d[0] >= rank)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "dimensions= must name one dimension of a rank %" PRId64 " operand",
                            rank);
    *out = d[0];
    return NULL;
}

/* ---- broadcast, reshape, transpose, reverse ------------------------------------ */

static cxla_status op_broadcast(interp_ctx *ctx, const cxla_instr *instr,
                                const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0];
    CXLA_RETURN_IF_ERROR(check_result(instr, x));
    const cxla_shape *xs = x->shape, *ys = &instr->shape;
    int64_t nd;
    const int64_t *dims = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd);
    if (nd != xs->rank)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "dimensions= has %" PRId64 " entries for an operand of rank %" PRId64,
                            nd, xs->rank);
    int64_t xstr[CXLA_MAX_RANK], ystr[CXLA_MAX_RANK], sstr[CXLA_MAX_RANK] = {0};
    interp_row_major_strides(xs->rank, xs->dims, xstr);
    interp_row_major_strides(ys->rank, ys->dims, ystr);
    for (int64_t i = 0; i < nd; i++) {
        if (dims[i] < 0 || dims[i] >= ys->rank || ys->dims[dims[i]] != xs->dims[i])
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "operand dimension %" PRId64 " does not map onto the result", i);
        sstr[dims[i]] = xstr[i];
    }
    cxla_literal *y;
    CXLA_RETURN_IF_ERROR(interp_new_array(ys, &y));
    if (y->count > 0) {
        interp_box box;
        interp_box_init(&box, ys->rank, ys->dims, ystr, sstr, esize_of(x));
        interp_box_copy(&box, bytes(y), cbytes(x));
    }
    *out = y;
    return NULL;
}

/* Row-major element order is kept: the bytes are the same. */
static cxla_status reshape_to(const cxla_instr *instr, const cxla_literal *x, cxla_literal **out) {
    CXLA_RETURN_IF_ERROR(check_result(instr, x));
    cxla_literal *y;
    CXLA_RETURN_IF_ERROR(interp_new_array(&instr->shape, &y));
    if (y->count != x->count) {
        int64_t a = x->count, b = y->count;
        cxla_literal_free(y);
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "reshapes %" PRId64 " elements into %" PRId64, a, b);
    }
    if (y->size) memcpy(bytes(y), cbytes(x), y->size);
    *out = y;
    return NULL;
}

static cxla_status op_reshape(interp_ctx *ctx, const cxla_instr *instr,
                              const cxla_literal *const *operands, cxla_literal **out) {
    return reshape_to(instr, operands[0], out);
}

/* dynamic-reshape(x, size0, size1, ...): the elements of x (its value, below its dynamic
 * sizes) in row-major order, laid out in row-major order of the runtime sizes. A bounded
 * result dimension ('<=N') keeps its bound as storage and the size as its dynamic size
 * (the rest is zero padding); an unbounded one ('?') is the size; a static one must
 * equal its size. */
static cxla_status op_dynamic_reshape(interp_ctx *ctx, const cxla_instr *instr,
                                      const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0];
    const cxla_shape *ys = &instr->shape;
    CXLA_RETURN_IF_ERROR(check_result(instr, x));
    if (instr->operand_count != ys->rank + 1)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "expects one size operand per result dimension");
    int64_t sizes[CXLA_MAX_RANK], dims[CXLA_MAX_RANK], count = 1, real = 1;
    uint8_t dyn[CXLA_MAX_RANK];
    for (int64_t i = 0; i < ys->rank; i++) {
        const cxla_literal *v = operands[i + 1];
        if (!cxla_type_is_integer(v->shape->type) || v->count != 1)
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "size operand %" PRId64 " must be an integer scalar", i);
        interp_load_indices(v->shape->type, v->data, 1, &sizes[i]);
        bool dynamic = ys->dynamic && ys->dynamic[i];
        bool unbounded = dynamic && ys->dims[i] == CXLA_DIM_UNBOUNDED;
        if (sizes[i] < 0 || (!unbounded && sizes[i] > ys->dims[i]))
            return interp_error(instr, CXLA_STATUS_OUT_OF_RANGE,
                                "size %" PRId64 " of dimension %" PRId64
                                " is outside its bound 0..%" PRId64,
                                sizes[i], i, ys->dims[i]);
        if (!dynamic && sizes[i] != ys->dims[i])
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "size %" PRId64 " of the static dimension %" PRId64
                                " differs from its size %" PRId64,
                                sizes[i], i, ys->dims[i]);
        dims[i] = unbounded ? sizes[i] : ys->dims[i];
        dyn[i] = dynamic && !unbounded;
        if (!cxla_mul_i64(count, sizes[i], &count))
            return interp_error(instr, CXLA_STATUS_OUT_OF_RANGE, "the runtime sizes overflow");
    }
    int64_t xsizes[CXLA_MAX_RANK];
    cxla_literal_sizes(x, xsizes);
    for (int64_t i = 0; i < x->shape->rank; i++) real *= xsizes[i];
    if (count != real)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the runtime sizes hold %" PRId64
                            " elements but the operand has %" PRId64,
                            count, real);
    cxla_shape rs = {.type = ys->type, .rank = ys->rank, .dims = dims, .dynamic = dyn};
    cxla_literal *y;
    CXLA_RETURN_IF_ERROR(interp_new_array(&rs, &y));
    cxla_literal *compact = NULL;
    const cxla_literal *src = x;
    if (x->dyn_sizes) {
        cxla_status s = cxla_literal_to_static(x, &compact);
        if (s) {
            cxla_literal_free(y);
            return s;
        }
        src = compact;
    }
    if (count > 0) {
        int64_t ystr[CXLA_MAX_RANK], sstr[CXLA_MAX_RANK];
        interp_row_major_strides(ys->rank, dims, ystr);
        interp_row_major_strides(ys->rank, sizes, sstr);
        interp_box box;
        interp_box_init(&box, ys->rank, sizes, ystr, sstr, esize_of(x));
        interp_box_copy(&box, bytes(y), cbytes(src));
    }
    cxla_literal_free(compact);
    cxla_status s = NULL;
    for (int64_t i = 0; i < ys->rank && !s; i++)
        if (sizes[i] < dims[i]) s = cxla_literal_set_dynamic_size(y, i, sizes[i]);
    if (s) {
        cxla_literal_free(y);
        return s;
    }
    *out = y;
    return NULL;
}

static cxla_status op_transpose(interp_ctx *ctx, const cxla_instr *instr,
                                const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0];
    CXLA_RETURN_IF_ERROR(check_result(instr, x));
    const cxla_shape *xs = x->shape, *ys = &instr->shape;
    int64_t np;
    const int64_t *perm = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &np);
    bool seen[CXLA_MAX_RANK] = {false};
    bool ok = np == xs->rank && ys->rank == xs->rank;
    for (int64_t i = 0; ok && i < np; i++) {
        ok = perm[i] >= 0 && perm[i] < np && !seen[perm[i]] && ys->dims[i] == xs->dims[perm[i]];
        if (ok) seen[perm[i]] = true;
    }
    if (!ok)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "dimensions= is not a permutation that gives the result shape");
    int64_t xstr[CXLA_MAX_RANK], ystr[CXLA_MAX_RANK], sstr[CXLA_MAX_RANK];
    interp_row_major_strides(xs->rank, xs->dims, xstr);
    interp_row_major_strides(ys->rank, ys->dims, ystr);
    for (int64_t i = 0; i < np; i++) sstr[i] = xstr[perm[i]];
    cxla_literal *y;
    CXLA_RETURN_IF_ERROR(interp_new_array(ys, &y));
    if (y->count > 0) {
        interp_box box;
        interp_box_init(&box, ys->rank, ys->dims, ystr, sstr, esize_of(x));
        interp_box_copy(&box, bytes(y), cbytes(x));
    }
    *out = y;
    return NULL;
}

static cxla_status op_reverse(interp_ctx *ctx, const cxla_instr *instr,
                              const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0];
    CXLA_RETURN_IF_ERROR(check_result(instr, x));
    const cxla_shape *xs = x->shape;
    int64_t nd;
    const int64_t *dims = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd);
    int64_t xstr[CXLA_MAX_RANK], sstr[CXLA_MAX_RANK];
    interp_row_major_strides(xs->rank, xs->dims, xstr);
    memcpy(sstr, xstr, (size_t)xs->rank * sizeof(int64_t));
    bool rev[CXLA_MAX_RANK] = {false};
    for (int64_t i = 0; i < nd; i++) {
        if (dims[i] < 0 || dims[i] >= xs->rank)
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "dimension %" PRId64 " is out of range", dims[i]);
        rev[dims[i]] = true; /* naming a dimension twice reverses it once */
    }
    int64_t start = 0;
    for (int64_t d = 0; d < xs->rank; d++) {
        if (!rev[d]) continue;
        sstr[d] = -xstr[d];
        if (xs->dims[d] > 0) start += (xs->dims[d] - 1) * xstr[d];
    }
    cxla_literal *y;
    CXLA_RETURN_IF_ERROR(interp_new_array(&instr->shape, &y));
    if (y->count != x->count) {
        cxla_literal_free(y);
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result shape differs from the operand's");
    }
    if (y->count > 0) {
        interp_box box;
        size_t es = esize_of(x);
        interp_box_init(&box, xs->rank, xs->dims, xstr, sstr, es);
        interp_box_copy(&box, bytes(y), cbytes(x) + start * (int64_t)es);
    }
    *out = y;
    return NULL;
}

/* ---- slices --------------------------------------------------------------------- */

static cxla_status op_slice(interp_ctx *ctx, const cxla_instr *instr,
                            const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0];
    CXLA_RETURN_IF_ERROR(check_result(instr, x));
    const cxla_shape *xs = x->shape, *ys = &instr->shape;
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_SLICE);
    if (!a || a->kind != CXLA_ATTR_KIND_SLICE || a->v.slice.rank != xs->rank ||
        ys->rank != xs->rank)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "slice= needs one [start:limit:stride] per operand dimension");
    int64_t xstr[CXLA_MAX_RANK], ystr[CXLA_MAX_RANK], sstr[CXLA_MAX_RANK], start = 0;
    interp_row_major_strides(xs->rank, xs->dims, xstr);
    interp_row_major_strides(ys->rank, ys->dims, ystr);
    for (int64_t i = 0; i < xs->rank; i++) {
        const cxla_slice_dim *d = &a->v.slice.dims[i];
        bool ok =
            d->start >= 0 && d->stride >= 1 && d->limit >= d->start && d->limit <= xs->dims[i];
        int64_t span = ok ? d->limit - d->start : 0;
        if (!ok || span / d->stride + (span % d->stride != 0) != ys->dims[i])
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "slice dimension %" PRId64 " [%" PRId64 ":%" PRId64 ":%" PRId64
                                "] does not fit the operand or the result",
                                i, d->start, d->limit, d->stride);
        if (ys->dims[i] > 0) start += d->start * xstr[i];
        sstr[i] = xstr[i] * d->stride;
    }
    cxla_literal *y;
    CXLA_RETURN_IF_ERROR(interp_new_array(ys, &y));
    if (y->count > 0) {
        size_t es = esize_of(x);
        interp_box box;
        interp_box_init(&box, ys->rank, ys->dims, ystr, sstr, es);
        interp_box_copy(&box, bytes(y), cbytes(x) + start * (int64_t)es);
    }
    *out = y;
    return NULL;
}

/* Reads the start indices of dynamic-slice / dynamic-update-slice from operands[first..]:
 * one integer scalar per dimension, or (old form) one integer vector. Clamps each so
 * that a box of |sizes| starting there stays inside |dims| (operation semantics:
 * start = clamp(start, 0, dim - size)). */
static cxla_status read_starts(const cxla_instr *instr, const cxla_literal *const *operands,
                               int64_t first, int64_t rank, const int64_t *dims,
                               const int64_t *sizes, int64_t *starts) {
    int64_t n = instr->operand_count - first;
    if (n == 1 && operands[first]->shape->rank == 1 && rank != 0) {
        const cxla_literal *v = operands[first];
        if (!cxla_type_is_integer(v->shape->type) || v->count != rank)
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "the start index vector must hold %" PRId64 " integers", rank);
        interp_load_indices(v->shape->type, v->data, rank, starts);
    } else {
        if (n != rank)
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "expects %" PRId64 " start indices, got %" PRId64, rank, n);
        for (int64_t i = 0; i < rank; i++) {
            const cxla_literal *v = operands[first + i];
            if (!cxla_type_is_integer(v->shape->type) || v->count != 1)
                return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                    "start index %" PRId64 " must be an integer scalar", i);
            interp_load_indices(v->shape->type, v->data, 1, &starts[i]);
        }
    }
    for (int64_t i = 0; i < rank; i++) {
        if (sizes[i] < 0 || sizes[i] > dims[i])
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "size %" PRId64 " of dimension %" PRId64
                                " exceeds the operand's %" PRId64,
                                sizes[i], i, dims[i]);
        starts[i] = clamp_i64(starts[i], 0, dims[i] - sizes[i]);
    }
    return NULL;
}

static int64_t dot_i64(int64_t rank, const int64_t *a, const int64_t *b) {
    int64_t s = 0;
    for (int64_t i = 0; i < rank; i++) s += a[i] * b[i];
    return s;
}

static cxla_status op_dynamic_slice(interp_ctx *ctx, const cxla_instr *instr,
                                    const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0];
    CXLA_RETURN_IF_ERROR(check_result(instr, x));
    const cxla_shape *xs = x->shape, *ys = &instr->shape;
    if (ys->rank != xs->rank)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result rank differs from the operand's");
    int64_t starts[CXLA_MAX_RANK];
    CXLA_RETURN_IF_ERROR(read_starts(instr, operands, 1, xs->rank, xs->dims, ys->dims, starts));
    int64_t xstr[CXLA_MAX_RANK], ystr[CXLA_MAX_RANK];
    interp_row_major_strides(xs->rank, xs->dims, xstr);
    interp_row_major_strides(ys->rank, ys->dims, ystr);
    cxla_literal *y;
    CXLA_RETURN_IF_ERROR(interp_new_array(ys, &y));
    if (y->count > 0) {
        size_t es = esize_of(x);
        interp_box box;
        interp_box_init(&box, ys->rank, ys->dims, ystr, xstr, es);
        interp_box_copy(&box, bytes(y), cbytes(x) + dot_i64(xs->rank, starts, xstr) * (int64_t)es);
    }
    *out = y;
    return NULL;
}

static cxla_status op_dynamic_update_slice(interp_ctx *ctx, const cxla_instr *instr,
                                           const cxla_literal *const *operands,
                                           cxla_literal **out) {
    const cxla_literal *x = operands[0], *u = operands[1];
    CXLA_RETURN_IF_ERROR(check_result(instr, x));
    CXLA_RETURN_IF_ERROR(check_array(instr, u, "the update"));
    const cxla_shape *xs = x->shape, *us = u->shape;
    if (us->rank != xs->rank || us->type != xs->type)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the update must have the operand's rank and element type");
    int64_t starts[CXLA_MAX_RANK];
    CXLA_RETURN_IF_ERROR(read_starts(instr, operands, 2, xs->rank, xs->dims, us->dims, starts));
    if (!cxla_shape_same_dims(&instr->shape, xs) || instr->shape.type != xs->type)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result shape differs from the operand's");
    /* Update in place when this is the operand's last use; copy it otherwise. */
    cxla_literal *y = interp_take_operand(ctx, 0);
    if (!y) {
        CXLA_RETURN_IF_ERROR(interp_new_array(&instr->shape, &y));
        if (y->size) memcpy(bytes(y), cbytes(x), y->size);
    }
    if (u->count > 0) {
        int64_t xstr[CXLA_MAX_RANK], ustr[CXLA_MAX_RANK];
        interp_row_major_strides(xs->rank, xs->dims, xstr);
        interp_row_major_strides(us->rank, us->dims, ustr);
        size_t es = esize_of(x);
        interp_box box;
        interp_box_init(&box, us->rank, us->dims, xstr, ustr, es);
        interp_box_copy(&box, bytes(y) + dot_i64(xs->rank, starts, xstr) * (int64_t)es, cbytes(u));
    }
    *out = y;
    return NULL;
}

/* ---- concatenate, pad ------------------------------------------------------------ */

static cxla_status op_concatenate(interp_ctx *ctx, const cxla_instr *instr,
                                  const cxla_literal *const *operands, cxla_literal **out) {
    if (instr->operand_count < 1)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "expects operands");
    const cxla_literal *x0 = operands[0];
    CXLA_RETURN_IF_ERROR(check_result(instr, x0));
    const cxla_shape *ys = &instr->shape;
    int64_t dim = 0;
    CXLA_RETURN_IF_ERROR(one_dim(instr, ys->rank, &dim));
    int64_t total = 0;
    for (int64_t i = 0; i < instr->operand_count; i++) {
        const cxla_shape *xs = operands[i]->shape;
        bool ok = xs->type == ys->type && xs->rank == ys->rank;
        for (int64_t j = 0; ok && j < ys->rank; j++) ok = j == dim || xs->dims[j] == ys->dims[j];
        if (!ok)
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "operand %" PRId64 " does not fit the result", i);
        total += xs->dims[dim];
    }
    if (total != ys->dims[dim])
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the operands add up to %" PRId64 " in dimension %" PRId64
                            ", the result has %" PRId64,
                            total, dim, ys->dims[dim]);
    cxla_literal *y;
    CXLA_RETURN_IF_ERROR(interp_new_array(ys, &y));
    int64_t ystr[CXLA_MAX_RANK], xstr[CXLA_MAX_RANK], offset = 0;
    interp_row_major_strides(ys->rank, ys->dims, ystr);
    size_t es = esize_of(x0);
    for (int64_t i = 0; i < instr->operand_count; i++) {
        const cxla_literal *x = operands[i];
        const cxla_shape *xs = x->shape;
        if (x->count > 0) {
            interp_row_major_strides(xs->rank, xs->dims, xstr);
            interp_box box;
            interp_box_init(&box, xs->rank, xs->dims, ystr, xstr, es);
            interp_box_copy(&box, bytes(y) + offset * ystr[dim] * (int64_t)es, cbytes(x));
        }
        offset += xs->dims[dim];
    }
    *out = y;
    return NULL;
}

/* Floor division for b > 0. */
static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* pad: interior padding first, then edge padding (negative edges crop). Operand element
 * i of a dimension lands at low + i * (interior + 1) when that is inside the result. */
static cxla_status op_pad(interp_ctx *ctx, const cxla_instr *instr,
                          const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0], *v = operands[1];
    CXLA_RETURN_IF_ERROR(check_result(instr, x));
    if (v->shape->type != x->shape->type || v->count != 1)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the padding value must be a scalar of the operand's type");
    const cxla_shape *xs = x->shape, *ys = &instr->shape;
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_PADDING);
    if (!a || a->kind != CXLA_ATTR_KIND_PADDING || a->v.padding.rank != xs->rank ||
        ys->rank != xs->rank)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "padding= needs one low_high_interior per operand dimension");
    int64_t xstr[CXLA_MAX_RANK], ystr[CXLA_MAX_RANK];
    int64_t ext[CXLA_MAX_RANK], dstr[CXLA_MAX_RANK], sstr[CXLA_MAX_RANK];
    interp_row_major_strides(xs->rank, xs->dims, xstr);
    interp_row_major_strides(ys->rank, ys->dims, ystr);
    int64_t doff = 0, soff = 0;
    bool any = true;
    for (int64_t i = 0; i < xs->rank; i++) {
        const cxla_pad_dim *p = &a->v.padding.dims[i];
        int64_t d = xs->dims[i], want;
        if (p->interior < 0 || !cxla_mul_i64(d > 0 ? d - 1 : 0, p->interior, &want) ||
            !cxla_add_i64(want, d, &want) || !cxla_add_i64(want, p->low, &want) ||
            !cxla_add_i64(want, p->high, &want) || want != ys->dims[i])
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "padding of dimension %" PRId64 " does not give the result size",
                                i);
        int64_t step = p->interior + 1;
        /* The operand elements that land inside: i0 .. i1. */
        int64_t i0 = p->low >= 0 ? 0 : floor_div(-p->low + step - 1, step);
        int64_t i1 = ys->dims[i] > 0 ? floor_div(ys->dims[i] - 1 - p->low, step) : -1;
        if (i1 > d - 1) i1 = d - 1;
        ext[i] = i1 - i0 + 1;
        if (ext[i] <= 0) {
            any = false;
            ext[i] = 0;
            continue;
        }
        doff += (p->low + i0 * step) * ystr[i];
        soff += i0 * xstr[i];
        dstr[i] = ystr[i] * step;
        sstr[i] = xstr[i];
    }
    cxla_literal *y;
    CXLA_RETURN_IF_ERROR(interp_new_array(ys, &y));
    size_t es = esize_of(x);
    if (y->count > 0) fill_run(bytes(y), (int64_t)es, cbytes(v), y->count, es);
    if (any && x->count > 0) {
        interp_box box;
        interp_box_init(&box, xs->rank, ext, dstr, sstr, es);
        interp_box_copy(&box, bytes(y) + doff * (int64_t)es, cbytes(x) + soff * (int64_t)es);
    }
    *out = y;
    return NULL;
}

/* ---- bitcast, get-dimension-size ------------------------------------------------- */

/* Copies between the row-major (logical) order of |shape|'s dims and their physical
 * order in |shape|'s layout, i.e. the row-major order of the dims listed major to minor.
 * |to_physical| says which way. */
static void relayout_physical(const cxla_shape *shape, size_t es, char *dst, const char *src,
                              bool to_physical) {
    int64_t rank = shape->rank;
    int64_t m2m[CXLA_MAX_RANK], lstr[CXLA_MAX_RANK], pdims[CXLA_MAX_RANK], pstr[CXLA_MAX_RANK];
    int64_t lperm[CXLA_MAX_RANK];
    cxla_shape_minor_to_major(shape, m2m);
    interp_row_major_strides(rank, shape->dims, lstr);
    for (int64_t i = 0; i < rank; i++) {
        pdims[i] = shape->dims[m2m[rank - 1 - i]];
        lperm[i] = lstr[m2m[rank - 1 - i]];
    }
    interp_row_major_strides(rank, pdims, pstr);
    interp_box box;
    if (to_physical)
        interp_box_init(&box, rank, pdims, pstr, lperm, es);
    else
        interp_box_init(&box, rank, pdims, lperm, pstr, es);
    interp_box_copy(&box, dst, src);
}

static bool valid_layout(const cxla_shape *shape, int64_t rank) {
    if (shape->rank != rank) return false;
    if (!shape->layout) return true;
    bool seen[CXLA_MAX_RANK] = {false};
    for (int64_t i = 0; i < rank; i++) {
        int64_t d = shape->layout->minor_to_major[i];
        if (d < 0 || d >= rank || seen[d]) return false;
        seen[d] = true;
    }
    return true;
}

/* bitcast reinterprets the operand's buffer: its bytes in the operand's declared layout
 * are read as the result's bytes in the result's declared layout. Only minor_to_major
 * matters here (tiles, memory spaces and padded dims do not change host order). */
static cxla_status op_bitcast(interp_ctx *ctx, const cxla_instr *instr,
                              const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0];
    CXLA_RETURN_IF_ERROR(check_array(instr, x, "the operand"));
    const cxla_shape *ys = &instr->shape;
    const cxla_shape *xdecl = instr->operands[0] ? &instr->operands[0]->shape : x->shape;
    if (!cxla_type_is_array(ys->type))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "the result must be an array");
    if (!valid_layout(xdecl, x->shape->rank) || !valid_layout(ys, ys->rank))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the declared layouts do not fit the shapes");
    cxla_literal *y;
    CXLA_RETURN_IF_ERROR(interp_new_array(ys, &y));
    size_t xes = esize_of(x), yes = cxla_type_storage(ys->type);
    if (x->count * (int64_t)xes != y->count * (int64_t)yes) {
        cxla_literal_free(y);
        return interp_error(instr, CXLA_STATUS_UNIMPLEMENTED,
                            "bitcast from %s to %s: the buffers differ in host size (sub-byte "
                            "or pred element types are stored one per byte)",
                            cxla_type_name(x->shape->type), cxla_type_name(ys->type));
    }
    if (y->size == 0) {
        *out = y;
        return NULL;
    }
    /* The physical bytes of the operand. */
    const char *phys = cbytes(x);
    char *tmp = NULL;
    if (!cxla_layout_is_default(xdecl)) {
        tmp = malloc(y->size);
        if (!tmp) {
            cxla_literal_free(y);
            return OOM();
        }
        cxla_shape xs = *xdecl;
        xs.dims = x->shape->dims;
        relayout_physical(&xs, xes, tmp, cbytes(x), true);
        phys = tmp;
    }
    if (cxla_layout_is_default(ys))
        memcpy(bytes(y), phys, y->size);
    else
        relayout_physical(ys, yes, bytes(y), phys, false);
    free(tmp);
    *out = y;
    return NULL;
}

static cxla_status op_get_dimension_size(interp_ctx *ctx, const cxla_instr *instr,
                                         const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0];
    CXLA_RETURN_IF_ERROR(check_array(instr, x, "the operand"));
    int64_t dim = 0;
    CXLA_RETURN_IF_ERROR(one_dim(instr, x->shape->rank, &dim));
    int64_t size = cxla_literal_dynamic_size(x, dim); /* the current size when dynamic */
    if (size > INT32_MAX)
        return interp_error(instr, CXLA_STATUS_OUT_OF_RANGE,
                            "dimension size %" PRId64 " does not fit in s32", size);
    cxla_shape s32 = {.type = CXLA_S32};
    cxla_literal *y;
    CXLA_RETURN_IF_ERROR(interp_new_array(&s32, &y));
    int32_t v = (int32_t)size;
    memcpy(bytes(y), &v, sizeof(v));
    *out = y;
    return NULL;
}

const interp_op_fn interp_shape_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_BROADCAST] = op_broadcast,
    [CXLA_OP_RESHAPE] = op_reshape,
    [CXLA_OP_DYNAMIC_RESHAPE] = op_dynamic_reshape,
    [CXLA_OP_TRANSPOSE] = op_transpose,
    [CXLA_OP_SLICE] = op_slice,
    [CXLA_OP_DYNAMIC_SLICE] = op_dynamic_slice,
    [CXLA_OP_DYNAMIC_UPDATE_SLICE] = op_dynamic_update_slice,
    [CXLA_OP_CONCATENATE] = op_concatenate,
    [CXLA_OP_PAD] = op_pad,
    [CXLA_OP_REVERSE] = op_reverse,
    [CXLA_OP_BITCAST] = op_bitcast,
    [CXLA_OP_GET_DIMENSION_SIZE] = op_get_dimension_size,
    [CXLA_OP_SET_DIMENSION_SIZE] = interp_op_set_dimension_size,
    [CXLA_OP_GATHER] = interp_op_gather,
    [CXLA_OP_SCATTER] = interp_op_scatter,
};
