/* Interpreter handlers: gather and scatter, with the batching dimensions
 * (operand_batching_dims / start_indices_batching_dims, input_batching_dims /
 * scatter_indices_batching_dims) of the newer operation semantics.
 *
 * gather copies one slice (a strided box) per index vector; out-of-range starts are
 * clamped so the slice stays inside the operand. scatter visits the update windows in
 * row-major order of the update scatter dims and combines each element into the result
 * with update_computation(current, update); a window that does not fit entirely inside
 * the operand is skipped (as XLA's evaluator and backends do). Common update computations
 * have fast paths: the update itself (assignment) and add/mul/max/min/and/or/xor on one
 * array; any other computation is called per element.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "interp/interp_gather.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

typedef struct dims_list {
    const int64_t *v;
    int64_t n;
} dims_list;

static dims_list get_list(const cxla_instr *instr, cxla_attr_id id) {
    dims_list l;
    l.v = cxla_instr_ints(instr, id, &l.n);
    return l;
}

static bool contains(dims_list l, int64_t x) {
    for (int64_t i = 0; i < l.n; i++)
        if (l.v[i] == x) return true;
    return false;
}

/* Every entry in [0, bound) and none twice. */
static bool valid_dims(dims_list l, int64_t bound) {
    bool seen[CXLA_MAX_RANK + 1] = {false};
    if (bound > CXLA_MAX_RANK + 1) return false;
    for (int64_t i = 0; i < l.n; i++) {
        if (l.v[i] < 0 || l.v[i] >= bound || seen[l.v[i]]) return false;
        seen[l.v[i]] = true;
    }
    return true;
}

static int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

/* The index array (gather's start_indices, scatter's scatter_indices) as int64, with
 * its batch dims: every dim but index_vector_dim. */
typedef struct index_array {
    int64_t *values; /* malloc'd, row-major */
    int64_t ivd;
    int64_t vec_len;    /* dims[ivd], or 1 when ivd == rank (an implicit trailing 1) */
    int64_t vec_stride; /* element stride of ivd */
    int64_t batch_rank;
    int64_t batch_dims[CXLA_MAX_RANK];
    int64_t batch_strides[CXLA_MAX_RANK];
} index_array;

static cxla_status index_array_init(const cxla_instr *instr, const cxla_literal *idx,
                                    index_array *ia) {
    memset(ia, 0, sizeof(*ia));
    const cxla_shape *is = idx->shape;
    if (!cxla_type_is_integer(is->type))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the indices must be an integer array, got %s",
                            cxla_type_name(is->type));
    if (!cxla_instr_int(instr, CXLA_ATTR_INDEX_VECTOR_DIM, &ia->ivd) || ia->ivd < 0 ||
        ia->ivd > is->rank)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "index_vector_dim must be in 0..%" PRId64, is->rank);
    int64_t strides[CXLA_MAX_RANK];
    interp_row_major_strides(is->rank, is->dims, strides);
    ia->vec_len = ia->ivd < is->rank ? is->dims[ia->ivd] : 1;
    ia->vec_stride = ia->ivd < is->rank ? strides[ia->ivd] : 0;
    for (int64_t d = 0; d < is->rank; d++) {
        if (d == ia->ivd) continue;
        ia->batch_dims[ia->batch_rank] = is->dims[d];
        ia->batch_strides[ia->batch_rank++] = strides[d];
    }
    ia->values = malloc((size_t)(idx->count ? idx->count : 1) * sizeof(int64_t));
    if (!ia->values) return OOM();
    if (idx->count) interp_load_indices(is->type, idx->data, idx->count, ia->values);
    return NULL;
}

/* Position in the batch index of indices dim |d| (which is not index_vector_dim). */
static int64_t batch_pos(const index_array *ia, int64_t d) {
    return d > ia->ivd ? d - 1 : d;
}

/* ---- gather ---------------------------------------------------------------------- */

cxla_status interp_op_gather(interp_ctx *ctx, const cxla_instr *instr,
                             const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0], *idx = operands[1];
    const cxla_shape *xs = x->shape, *ys = &instr->shape;
    if (!cxla_type_is_array(xs->type) || ys->type != xs->type ||
        !cxla_type_is_array(idx->shape->type))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "expects arrays and a result of the operand's element type");
    dims_list offset = get_list(instr, CXLA_ATTR_OFFSET_DIMS);
    dims_list collapsed = get_list(instr, CXLA_ATTR_COLLAPSED_SLICE_DIMS);
    dims_list sim = get_list(instr, CXLA_ATTR_START_INDEX_MAP);
    dims_list sizes = get_list(instr, CXLA_ATTR_SLICE_SIZES);
    dims_list ob = get_list(instr, CXLA_ATTR_OPERAND_BATCHING_DIMS);
    dims_list ib = get_list(instr, CXLA_ATTR_START_INDICES_BATCHING_DIMS);
    index_array ia;
    CXLA_RETURN_IF_ERROR(index_array_init(instr, idx, &ia));
    cxla_status s = NULL;
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, __VA_ARGS__);                        \
        goto done;                                                                                 \
    } while (0)
    int64_t xr = xs->rank, yr = ys->rank;
    /* The operand dims a slice keeps (in order), matched with offset_dims. */
    int64_t wdims[CXLA_MAX_RANK], nw = 0, out_batch[CXLA_MAX_RANK], nb = 0;
    if (sizes.n != xr || !valid_dims(collapsed, xr) || !valid_dims(ob, xr) ||
        !valid_dims(offset, yr) || !valid_dims(sim, xr) || ob.n != ib.n ||
        !valid_dims(ib, idx->shape->rank) || contains(ib, ia.ivd))
        FAIL("the gather dimension numbers do not fit the operand and the indices");
    if (sim.n != ia.vec_len)
        FAIL("start_index_map has %" PRId64 " entries for index vectors of %" PRId64, sim.n,
             ia.vec_len);
    for (int64_t d = 0; d < xr; d++) {
        if (sizes.v[d] < 0 || sizes.v[d] > xs->dims[d])
            FAIL("slice size %" PRId64 " of dimension %" PRId64 " exceeds the operand", sizes.v[d],
                 d);
        if (contains(collapsed, d) || contains(ob, d)) {
            if (sizes.v[d] > 1) FAIL("collapsed or batching dimension %" PRId64 " has size > 1", d);
        } else {
            wdims[nw++] = d;
        }
    }
    for (int64_t d = 0; d < yr; d++)
        if (!contains(offset, d)) out_batch[nb++] = d;
    if (nw != offset.n || nb != ia.batch_rank)
        FAIL("the result rank does not match the offset and batch dimensions");
    for (int64_t k = 0; k < nw; k++)
        if (ys->dims[offset.v[k]] != sizes.v[wdims[k]])
            FAIL("result dimension %" PRId64 " does not match slice size %" PRId64, offset.v[k],
                 sizes.v[wdims[k]]);
    for (int64_t j = 0; j < nb; j++)
        if (ys->dims[out_batch[j]] != ia.batch_dims[j])
            FAIL("result batch dimension %" PRId64 " does not match the indices", out_batch[j]);
    for (int64_t i = 0; i < ob.n; i++)
        if (xs->dims[ob.v[i]] != idx->shape->dims[ib.v[i]])
            FAIL("batching dimensions %" PRId64 " and %" PRId64 " differ in size", ob.v[i],
                 ib.v[i]);

    cxla_literal *y;
    s = interp_new_array(ys, &y);
    if (s) goto done;
    bool empty_slice = false;
    for (int64_t d = 0; d < xr; d++) empty_slice = empty_slice || sizes.v[d] == 0;
    if (y->count > 0 && !empty_slice) {
        int64_t xstr[CXLA_MAX_RANK], ystr[CXLA_MAX_RANK], ext[CXLA_MAX_RANK];
        int64_t dstr[CXLA_MAX_RANK], sstr[CXLA_MAX_RANK], start[CXLA_MAX_RANK];
        int64_t g[CXLA_MAX_RANK] = {0};
        interp_row_major_strides(xr, xs->dims, xstr);
        interp_row_major_strides(yr, ys->dims, ystr);
        for (int64_t k = 0; k < nw; k++) {
            ext[k] = sizes.v[wdims[k]];
            dstr[k] = ystr[offset.v[k]];
            sstr[k] = xstr[wdims[k]];
        }
        size_t es = cxla_type_storage(xs->type);
        interp_box box;
        interp_box_init(&box, nw, ext, dstr, sstr, es);
        const char *src = x->data;
        char *dst = y->data;
        do {
            int64_t ioff = 0, doff = 0, soff = 0;
            for (int64_t j = 0; j < nb; j++) {
                ioff += g[j] * ia.batch_strides[j];
                doff += g[j] * ystr[out_batch[j]];
            }
            for (int64_t d = 0; d < xr; d++) start[d] = 0;
            for (int64_t k = 0; k < sim.n; k++) {
                int64_t d = sim.v[k];
                start[d] =
                    clamp_i64(ia.values[ioff + k * ia.vec_stride], 0, xs->dims[d] - sizes.v[d]);
            }
            for (int64_t i = 0; i < ob.n; i++) start[ob.v[i]] = g[batch_pos(&ia, ib.v[i])];
            for (int64_t d = 0; d < xr; d++) soff += start[d] * xstr[d];
            interp_box_copy(&box, dst + doff * (int64_t)es, src + soff * (int64_t)es);
        } while (cxla_index_next(nb, ia.batch_dims, g));
    }
    *out = y;
done:
#undef FAIL
    free(ia.values);
    return s;
}

/* ---- scatter: element combiners ----------------------------------------------------- */

typedef enum scatter_mode {
    SCATTER_CALL,   /* call update_computation per element */
    SCATTER_ASSIGN, /* the computation returns the updates */
    SCATTER_REDUCE, /* one array, a recognized reducer */
} scatter_mode;

static bool reducer_supported(interp_reducer r, cxla_type t) {
    switch (cxla_type_class_of(t)) {
    case CXLA_CLASS_PRED:
        return r == INTERP_REDUCER_AND || r == INTERP_REDUCER_OR || r == INTERP_REDUCER_XOR ||
               r == INTERP_REDUCER_MAX || r == INTERP_REDUCER_MIN;
    case CXLA_CLASS_SIGNED:
    case CXLA_CLASS_UNSIGNED: return r != INTERP_REDUCER_NONE;
    case CXLA_CLASS_FLOAT:
        return r == INTERP_REDUCER_ADD || r == INTERP_REDUCER_MUL || r == INTERP_REDUCER_MAX ||
               r == INTERP_REDUCER_MIN;
    case CXLA_CLASS_COMPLEX: return r == INTERP_REDUCER_ADD || r == INTERP_REDUCER_MUL;
    default: return false;
    }
}

/* dst = op(dst, src) over |n| elements |ds| / |ss| bytes apart. */
#define LOOP(T, EXPR)                                                                              \
    for (int64_t i = 0; i < n; i++, d += ds, s += ss) {                                            \
        T a, b, r_;                                                                                \
        memcpy(&a, d, sizeof(T));                                                                  \
        memcpy(&b, s, sizeof(T));                                                                  \
        r_ = (T)(EXPR);                                                                            \
        memcpy(d, &r_, sizeof(T));                                                                 \
    }                                                                                              \
    return;

/* Integers wrap: the arithmetic is done in uint64_t and truncated. */
#define INT_OPS(T)                                                                                 \
    switch (r) {                                                                                   \
    case INTERP_REDUCER_ADD: LOOP(T, (uint64_t)a + (uint64_t)b)                                    \
    case INTERP_REDUCER_MUL: LOOP(T, (uint64_t)a *(uint64_t)b)                                     \
    case INTERP_REDUCER_MAX: LOOP(T, a < b ? b : a)                                                \
    case INTERP_REDUCER_MIN: LOOP(T, b < a ? b : a)                                                \
    case INTERP_REDUCER_AND: LOOP(T, a &b)                                                         \
    case INTERP_REDUCER_OR: LOOP(T, a | b)                                                         \
    case INTERP_REDUCER_XOR: LOOP(T, a ^ b)                                                        \
    default: return;                                                                               \
    }

/* Floats: maximum and minimum propagate NaN. */
#define FLOAT_OPS(T)                                                                               \
    switch (r) {                                                                                   \
    case INTERP_REDUCER_ADD: LOOP(T, a + b)                                                        \
    case INTERP_REDUCER_MUL: LOOP(T, a *b)                                                         \
    case INTERP_REDUCER_MAX: LOOP(T, isnan(a) ? a : isnan(b) ? b : (a < b ? b : a))                \
    case INTERP_REDUCER_MIN: LOOP(T, isnan(a) ? a : isnan(b) ? b : (b < a ? b : a))                \
    default: return;                                                                               \
    }

static float f32_op(interp_reducer r, float a, float b) {
    switch (r) {
    case INTERP_REDUCER_ADD: return a + b;
    case INTERP_REDUCER_MUL: return a * b;
    case INTERP_REDUCER_MAX: return isnan(a) ? a : isnan(b) ? b : (a < b ? b : a);
    case INTERP_REDUCER_MIN: return isnan(a) ? a : isnan(b) ? b : (b < a ? b : a);
    default: return a;
    }
}

#define COMPLEX_OPS(T)                                                                             \
    for (int64_t i = 0; i < n; i++, d += ds, s += ss) {                                            \
        T a[2], b[2], r_[2];                                                                       \
        memcpy(a, d, sizeof(a));                                                                   \
        memcpy(b, s, sizeof(b));                                                                   \
        if (r == INTERP_REDUCER_ADD) {                                                             \
            r_[0] = a[0] + b[0];                                                                   \
            r_[1] = a[1] + b[1];                                                                   \
        } else {                                                                                   \
            r_[0] = a[0] * b[0] - a[1] * b[1];                                                     \
            r_[1] = a[0] * b[1] + a[1] * b[0];                                                     \
        }                                                                                          \
        memcpy(d, r_, sizeof(r_));                                                                 \
    }                                                                                              \
    return;

static void reduce_run(interp_reducer r, cxla_type type, char *d, int64_t ds, const char *s,
                       int64_t ss, int64_t n) {
    switch (type) {
    case CXLA_PRED:
        switch (r) {
        case INTERP_REDUCER_AND:
        case INTERP_REDUCER_MIN: LOOP(uint8_t, a && b)
        case INTERP_REDUCER_OR:
        case INTERP_REDUCER_MAX: LOOP(uint8_t, a || b)
        case INTERP_REDUCER_XOR: LOOP(uint8_t, (a != 0) != (b != 0))
        default: return;
        }
    case CXLA_S8: INT_OPS(int8_t)
    case CXLA_S16: INT_OPS(int16_t)
    case CXLA_S32: INT_OPS(int32_t)
    case CXLA_S64: INT_OPS(int64_t)
    case CXLA_U8: INT_OPS(uint8_t)
    case CXLA_U16: INT_OPS(uint16_t)
    case CXLA_U32: INT_OPS(uint32_t)
    case CXLA_U64: INT_OPS(uint64_t)
    case CXLA_F32: FLOAT_OPS(float)
    case CXLA_F64: FLOAT_OPS(double)
    case CXLA_C64: COMPLEX_OPS(float)
    case CXLA_C128: COMPLEX_OPS(double)
    default: break;
    }
    if (cxla_type_is_small_float(type)) {
        /* Computed in f32, rounded to nearest even on the store. */
        for (int64_t i = 0; i < n; i++, d += ds, s += ss) {
            float a, b, v;
            interp_small_to_f32(type, d, &a, 1);
            interp_small_to_f32(type, s, &b, 1);
            v = f32_op(r, a, b);
            interp_f32_to_small(type, &v, d, 1);
        }
        return;
    }
    /* Sub-byte integers: 64-bit arithmetic, stored back wrapped to the width. */
    bool sgn = cxla_type_is_signed(type);
    for (int64_t i = 0; i < n; i++, d += ds, s += ss) {
        uint64_t a = cxla_load_u64(type, d), b = cxla_load_u64(type, s), v;
        int64_t sa = cxla_load_s64(type, d), sb = cxla_load_s64(type, s);
        bool less = sgn ? sa < sb : a < b;
        switch (r) {
        case INTERP_REDUCER_ADD: v = a + b; break;
        case INTERP_REDUCER_MUL: v = a * b; break;
        case INTERP_REDUCER_MAX: v = less ? b : a; break;
        case INTERP_REDUCER_MIN: v = less ? a : b; break;
        case INTERP_REDUCER_AND: v = a & b; break;
        case INTERP_REDUCER_OR: v = a | b; break;
        case INTERP_REDUCER_XOR: v = a ^ b; break;
        default: v = a; break;
        }
        if (sgn)
            cxla_store_s64(type, d, (int64_t)v);
        else
            cxla_store_u64(type, d, v);
    }
}

#undef LOOP
#undef INT_OPS
#undef FLOAT_OPS
#undef COMPLEX_OPS

/* ---- scatter ------------------------------------------------------------------------ */

static bool is_param(const cxla_instr *in, int64_t number) {
    return in && in->opcode == CXLA_OP_PARAMETER && in->parameter_number == number;
}

static scatter_mode choose_mode(const cxla_computation *comp, int64_t n,
                                const cxla_literal *const *operands, interp_reducer *out_r) {
    const cxla_instr *root = comp->root;
    bool same_types = true;
    for (int64_t i = 0; i < n; i++)
        same_types = same_types && operands[i]->shape->type == operands[n + 1 + i]->shape->type;
    if (!root || !same_types || comp->param_count != 2 * n) return SCATTER_CALL;
    if (n == 1 && is_param(root, 1)) return SCATTER_ASSIGN;
    if (n > 1 && root->opcode == CXLA_OP_TUPLE && root->operand_count == n) {
        bool assign = true;
        for (int64_t i = 0; i < n; i++) assign = assign && is_param(root->operands[i], n + i);
        if (assign) return SCATTER_ASSIGN;
    }
    if (n == 1) {
        interp_reducer r = interp_match_reducer(comp);
        if (r != INTERP_REDUCER_NONE && reducer_supported(r, operands[0]->shape->type)) {
            *out_r = r;
            return SCATTER_REDUCE;
        }
    }
    return SCATTER_CALL;
}

/* Per-element calls of update_computation: the scalar arguments, reused. */
typedef struct scatter_call {
    interp_ctx *ctx;
    const cxla_computation *comp;
    int64_t n;
    cxla_literal **args; /* 2n rank-0 literals */
} scatter_call;

static cxla_status call_init(scatter_call *c, interp_ctx *ctx, const cxla_computation *comp,
                             int64_t n, const cxla_literal *const *operands) {
    c->ctx = ctx;
    c->comp = comp;
    c->n = n;
    c->args = calloc((size_t)(2 * n), sizeof(*c->args));
    if (!c->args) return OOM();
    for (int64_t i = 0; i < 2 * n; i++) {
        const cxla_literal *src = operands[i < n ? i : i + 1];
        cxla_shape scalar = {.type = src->shape->type};
        CXLA_RETURN_IF_ERROR(cxla_literal_create(&scalar, &c->args[i]));
    }
    return NULL;
}

static void call_deinit(scatter_call *c) {
    if (c->args)
        for (int64_t i = 0; i < 2 * c->n; i++) cxla_literal_free(c->args[i]);
    free(c->args);
}

/* results[i][doff] = comp(results[..][doff], updates[..][soff]) (offsets in elements). */
static cxla_status call_one(scatter_call *c, const cxla_instr *instr, cxla_literal **results,
                            const cxla_literal *const *updates, int64_t doff, int64_t soff) {
    int64_t n = c->n;
    for (int64_t i = 0; i < n; i++) {
        size_t es = c->args[i]->size, us = c->args[n + i]->size;
        memcpy(c->args[i]->data, (char *)results[i]->data + doff * (int64_t)es, es);
        memcpy(c->args[n + i]->data, (const char *)updates[i]->data + soff * (int64_t)us, us);
    }
    cxla_literal *r = NULL;
    CXLA_RETURN_IF_ERROR(
        interp_call_scalar(c->ctx, c->comp, (const cxla_literal *const *)c->args, 2 * n, &r));
    cxla_status s = NULL;
    bool tuple = cxla_literal_type(r) == CXLA_TUPLE;
    if ((tuple && cxla_literal_tuple_count(r) != n) || (!tuple && n != 1)) {
        s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                         "update_computation must return %" PRId64 " value(s)", n);
    }
    for (int64_t i = 0; i < n && !s; i++) {
        const cxla_literal *v = tuple ? cxla_literal_tuple_element_const(r, i) : r;
        cxla_type t = results[i]->shape->type;
        if (!v || v->shape->type != t || v->count != 1) {
            s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                             "update_computation must return %s scalars", cxla_type_name(t));
            break;
        }
        size_t es = cxla_type_storage(t);
        memcpy((char *)results[i]->data + doff * (int64_t)es, v->data, es);
    }
    cxla_literal_free(r);
    return s;
}

/* Same rank and sizes; a dynamic mark is no difference (a dynamic update at its bound
 * beside a static one of that size, which shape inference accepts). */
static bool same_sizes(const cxla_shape *a, const cxla_shape *b) {
    if (a->rank != b->rank) return false;
    for (int64_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

cxla_status interp_op_scatter(interp_ctx *ctx, const cxla_instr *instr,
                              const cxla_literal *const *operands, cxla_literal **out) {
    int64_t count = instr->operand_count;
    if (count < 3 || count % 2 == 0)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "expects N operands, the indices and N updates");
    int64_t n = (count - 1) / 2;
    const cxla_literal *x0 = operands[0], *idx = operands[n], *u0 = operands[n + 1];
    const cxla_shape *xs = x0->shape, *us = u0->shape;
    for (int64_t i = 0; i < n; i++) {
        const cxla_shape *a = operands[i]->shape, *b = operands[n + 1 + i]->shape;
        if (!cxla_type_is_array(a->type) || !cxla_type_is_array(b->type) || !same_sizes(a, xs) ||
            !same_sizes(b, us))
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "operands and updates must be arrays of the same dimensions");
    }
    if (!cxla_type_is_array(idx->shape->type))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "the indices must be an array");
    const cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!comp) return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "needs to_apply=");
    dims_list uwd = get_list(instr, CXLA_ATTR_UPDATE_WINDOW_DIMS);
    dims_list iwd = get_list(instr, CXLA_ATTR_INSERTED_WINDOW_DIMS);
    dims_list sdod = get_list(instr, CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS);
    dims_list ib = get_list(instr, CXLA_ATTR_INPUT_BATCHING_DIMS);
    dims_list sib = get_list(instr, CXLA_ATTR_SCATTER_INDICES_BATCHING_DIMS);
    index_array ia;
    CXLA_RETURN_IF_ERROR(index_array_init(instr, idx, &ia));
    cxla_literal **results = calloc((size_t)n, sizeof(*results));
    scatter_call call = {0};
    cxla_status s = NULL;
    if (!results) {
        s = OOM();
        goto done;
    }
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, __VA_ARGS__);                        \
        goto done;                                                                                 \
    } while (0)
    int64_t xr = xs->rank, ur = us->rank;
    int64_t wdims[CXLA_MAX_RANK], nw = 0, usd[CXLA_MAX_RANK], nb = 0, wext[CXLA_MAX_RANK];
    if (!valid_dims(uwd, ur) || !valid_dims(iwd, xr) || !valid_dims(ib, xr) ||
        !valid_dims(sdod, xr) || ib.n != sib.n || !valid_dims(sib, idx->shape->rank) ||
        contains(sib, ia.ivd))
        FAIL("the scatter dimension numbers do not fit the operands and the indices");
    if (sdod.n != ia.vec_len)
        FAIL("scatter_dims_to_operand_dims has %" PRId64 " entries for index vectors of %" PRId64,
             sdod.n, ia.vec_len);
    for (int64_t d = 0; d < xr; d++) {
        wext[d] = 1;
        if (!contains(iwd, d) && !contains(ib, d)) wdims[nw++] = d;
    }
    for (int64_t d = 0; d < ur; d++)
        if (!contains(uwd, d)) usd[nb++] = d;
    if (nw != uwd.n || nb != ia.batch_rank)
        FAIL("the updates' rank does not match the window and scatter dimensions");
    for (int64_t k = 0; k < nw; k++) wext[wdims[k]] = us->dims[uwd.v[k]];
    for (int64_t j = 0; j < nb; j++)
        if (us->dims[usd[j]] != ia.batch_dims[j])
            FAIL("update scatter dimension %" PRId64 " does not match the indices", usd[j]);
    for (int64_t i = 0; i < ib.n; i++)
        if (xs->dims[ib.v[i]] != idx->shape->dims[sib.v[i]])
            FAIL("batching dimensions %" PRId64 " and %" PRId64 " differ in size", ib.v[i],
                 sib.v[i]);
#undef FAIL

    /* Scatter into the operands themselves when this is their last use. */
    for (int64_t i = 0; i < n && !s; i++) {
        results[i] = interp_take_operand(ctx, i);
        if (!results[i]) s = cxla_literal_clone(operands[i], &results[i]);
    }
    if (s) goto done;
    interp_reducer reducer = INTERP_REDUCER_NONE;
    scatter_mode mode = choose_mode(comp, n, operands, &reducer);
    if (mode == SCATTER_CALL) {
        s = call_init(&call, ctx, comp, n, operands);
        if (s) goto done;
    }
    if (u0->count > 0) {
        int64_t xstr[CXLA_MAX_RANK], ustr[CXLA_MAX_RANK], ext[CXLA_MAX_RANK];
        int64_t dstr[CXLA_MAX_RANK], sstr[CXLA_MAX_RANK], start[CXLA_MAX_RANK];
        int64_t g[CXLA_MAX_RANK] = {0}, w[CXLA_MAX_RANK];
        interp_row_major_strides(xr, xs->dims, xstr);
        interp_row_major_strides(ur, us->dims, ustr);
        for (int64_t k = 0; k < nw; k++) {
            ext[k] = us->dims[uwd.v[k]];
            dstr[k] = xstr[wdims[k]];
            sstr[k] = ustr[uwd.v[k]];
        }
        /* The window copy, simplified once (per array: element sizes may differ). */
        interp_box box;
        interp_box_init(&box, nw, ext, dstr, sstr, cxla_type_storage(xs->type));
        do {
            int64_t ioff = 0, doff = 0, soff = 0;
            for (int64_t j = 0; j < nb; j++) {
                ioff += g[j] * ia.batch_strides[j];
                soff += g[j] * ustr[usd[j]];
            }
            for (int64_t d = 0; d < xr; d++) start[d] = 0;
            for (int64_t k = 0; k < sdod.n; k++)
                start[sdod.v[k]] = ia.values[ioff + k * ia.vec_stride];
            for (int64_t i = 0; i < ib.n; i++) start[ib.v[i]] = g[batch_pos(&ia, sib.v[i])];
            /* A window that does not fit entirely is skipped. */
            bool inside = true;
            for (int64_t d = 0; d < xr && inside; d++)
                inside = start[d] >= 0 && start[d] <= xs->dims[d] - wext[d];
            if (!inside) continue;
            for (int64_t d = 0; d < xr; d++) doff += start[d] * xstr[d];
            if (mode == SCATTER_ASSIGN) {
                for (int64_t i = 0; i < n; i++) {
                    size_t es = cxla_type_storage(operands[i]->shape->type);
                    interp_box bi;
                    if (es != box.esize) interp_box_init(&bi, nw, ext, dstr, sstr, es);
                    interp_box_copy(es != box.esize ? &bi : &box,
                                    (char *)results[i]->data + doff * (int64_t)es,
                                    (const char *)operands[n + 1 + i]->data + soff * (int64_t)es);
                }
            } else if (mode == SCATTER_REDUCE) {
                /* Runs along the inner dim of the simplified box. */
                int64_t es = (int64_t)box.esize, m = box.rank;
                char *d0 = (char *)results[0]->data + doff * es;
                const char *s0 = (const char *)u0->data + soff * es;
                if (box.empty) continue;
                if (m == 0) {
                    reduce_run(reducer, xs->type, d0, 0, s0, 0, 1);
                    continue;
                }
                for (int64_t k = 0; k < m - 1; k++) w[k] = 0;
                int64_t bd = 0, bs = 0;
                for (;;) {
                    reduce_run(reducer, xs->type, d0 + bd, box.ds[m - 1], s0 + bs, box.ss[m - 1],
                               box.n[m - 1]);
                    int64_t k = m - 2;
                    for (; k >= 0; k--) {
                        if (++w[k] < box.n[k]) {
                            bd += box.ds[k];
                            bs += box.ss[k];
                            break;
                        }
                        bd -= box.ds[k] * (box.n[k] - 1);
                        bs -= box.ss[k] * (box.n[k] - 1);
                        w[k] = 0;
                    }
                    if (k < 0) break;
                }
            } else {
                /* One call per window element, in row-major order of the window. */
                bool any = true;
                for (int64_t k = 0; k < nw; k++) {
                    w[k] = 0;
                    any = any && ext[k] > 0;
                }
                if (!any) continue;
                do {
                    int64_t de = doff, se = soff;
                    for (int64_t k = 0; k < nw; k++) {
                        de += w[k] * dstr[k];
                        se += w[k] * sstr[k];
                    }
                    s = call_one(&call, instr, results, operands + n + 1, de, se);
                    if (s) {
                        s = cxla_status_annotate(s, "in update_computation of %s", instr->name);
                        goto done;
                    }
                } while (cxla_index_next(nw, ext, w));
            }
        } while (cxla_index_next(nb, ia.batch_dims, g));
    }
    if (n == 1) {
        *out = results[0];
        results[0] = NULL;
    } else {
        s = cxla_literal_create_tuple(results, n, out);
        if (!s)
            for (int64_t i = 0; i < n; i++) results[i] = NULL;
    }
done:
    call_deinit(&call);
    if (results)
        for (int64_t i = 0; i < n; i++) cxla_literal_free(results[i]);
    free(results);
    free(ia.values);
    return s;
}
