/* Shape inference for reductions, windows, sorting, top-k, gathers, scatters, scan and
 * map (XLA's InferReduceShape, InferReduceWindowShape, InferSelectAndScatterShape,
 * InferGatherShape, InferScatterShape, the sort verifier, InferMapShape). Gather and
 * scatter include the batching dimensions (operand_batching_dims & co.). */
#include <inttypes.h>
#include <string.h>

#include "hlo/infer_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in shape inference")

/* Input i of a variadic op must be an array. */
static cxla_status expect_arrays(const cxla_instr *in, cxla_arena *arena, int64_t from, int64_t to,
                                 const char *what) {
    for (int64_t i = from; i < to; i++)
        if (!cxla_infer_is_array(OPS(i)))
            return cxla_infer_fail(in, "%s %" PRId64 " must be an array, got %s", what, i - from,
                                   STR(OPS(i)));
    return NULL;
}

static cxla_status same_dims_as_first(const cxla_instr *in, cxla_arena *arena, int64_t from,
                                      int64_t to, const char *what) {
    for (int64_t i = from + 1; i < to; i++)
        if (!cxla_infer_same_dims(OPS(from), OPS(i)))
            return cxla_infer_fail(in, "%s must have the same dimensions, got %s and %s", what,
                                   STR(OPS(from)), STR(OPS(i)));
    return NULL;
}

/* The tuple of |n| shapes, or the single one when n == 1. */
static cxla_status pack(cxla_arena *arena, int64_t n, cxla_shape *shapes, cxla_shape *out) {
    if (n == 1) {
        *out = shapes[0];
        return NULL;
    }
    const cxla_shape **ptrs = cxla_arena_alloc_array(arena, (size_t)n, sizeof(*ptrs));
    if (!ptrs) return OOM();
    for (int64_t i = 0; i < n; i++) ptrs[i] = &shapes[i];
    return cxla_infer_make_tuple(arena, n, ptrs, out);
}

static cxla_status gather_init_shapes(const cxla_instr *in, cxla_arena *arena, int64_t n,
                                      const cxla_shape ***inits, cxla_type **types) {
    *inits = cxla_arena_alloc_array(arena, (size_t)n, sizeof(**inits));
    *types = cxla_arena_alloc_array(arena, (size_t)n, sizeof(**types));
    if (!*inits || !*types) return OOM();
    for (int64_t i = 0; i < n; i++) {
        (*inits)[i] = OPS(n + i);
        (*types)[i] = OPS(i)->type;
    }
    return NULL;
}

/* ---- reduce ---------------------------------------------------------------------- */

CXLA_INFER_DECLARE(cxla_infer_reduce) {
    int64_t count = in->operand_count;
    if (count < 2 || count % 2)
        return cxla_infer_fail(
            in, "expects N inputs then N init values, got %" PRId64 " operand(s)", count);
    int64_t n = count / 2;
    CXLA_RETURN_IF_ERROR(expect_arrays(in, arena, 0, n, "input"));
    CXLA_RETURN_IF_ERROR(same_dims_as_first(in, arena, 0, n, "inputs"));
    const cxla_shape *x = OPS(0);
    const int64_t *d;
    int64_t nd;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_ints(in, CXLA_ATTR_DIMENSIONS, &d, &nd));
    for (int64_t i = 0; i < nd; i++)
        if (d[i] < 0 || d[i] >= x->rank)
            return cxla_infer_fail(in, "dimensions=%s: %" PRId64 " is out of range for %s",
                                   INTS_STR(d, nd), d[i], STR(x));
    if (!cxla_infer_all_unique(d, nd))
        return cxla_infer_fail(in, "dimensions=%s repeats a dimension", INTS_STR(d, nd));
    cxla_computation *f;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_called(in, CXLA_ATTR_TO_APPLY, &f));
    const cxla_shape **inits;
    cxla_type *types;
    CXLA_RETURN_IF_ERROR(gather_init_shapes(in, arena, n, &inits, &types));
    CXLA_RETURN_IF_ERROR(cxla_infer_check_reducer(in, arena, f, n, inits, types));

    int64_t dims[CXLA_MAX_RANK], rank = 0;
    uint8_t dyn[CXLA_MAX_RANK];
    for (int64_t i = 0; i < x->rank; i++) {
        if (cxla_infer_contains(d, nd, i)) continue;
        dyn[rank] = cxla_infer_dyn(x, i);
        dims[rank++] = x->dims[i];
    }
    cxla_shape *res = cxla_arena_alloc_array(arena, (size_t)n, sizeof(cxla_shape));
    if (!res) return OOM();
    const cxla_shape *acc = &f->root->shape;
    for (int64_t i = 0; i < n; i++) {
        cxla_type t = acc->type == CXLA_TUPLE ? acc->elements[i].type : acc->type;
        CXLA_RETURN_IF_ERROR(cxla_infer_make_array(arena, t, rank, dims, dyn, &res[i]));
    }
    return pack(arena, n, res, out);
}

/* ---- reduce-window and select-and-scatter ----------------------------------------- */

static cxla_status window_shape(const cxla_instr *in, cxla_arena *arena, const cxla_shape *x,
                                cxla_type type, cxla_shape *out) {
    int64_t dims[CXLA_MAX_RANK];
    uint8_t dyn[CXLA_MAX_RANK];
    CXLA_RETURN_IF_ERROR(cxla_infer_window_output(in, arena, cxla_instr_attr(in, CXLA_ATTR_WINDOW),
                                                  x->rank, x->dims, dims));
    for (int64_t i = 0; i < x->rank; i++) dyn[i] = cxla_infer_dyn(x, i);
    return cxla_infer_make_array(arena, type, x->rank, dims, dyn, out);
}

CXLA_INFER_DECLARE(cxla_infer_reduce_window) {
    int64_t count = in->operand_count;
    if (count < 2 || count % 2)
        return cxla_infer_fail(
            in, "expects N inputs then N init values, got %" PRId64 " operand(s)", count);
    int64_t n = count / 2;
    CXLA_RETURN_IF_ERROR(expect_arrays(in, arena, 0, n, "input"));
    CXLA_RETURN_IF_ERROR(same_dims_as_first(in, arena, 0, n, "inputs"));
    cxla_computation *f;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_called(in, CXLA_ATTR_TO_APPLY, &f));
    const cxla_shape **inits;
    cxla_type *types;
    CXLA_RETURN_IF_ERROR(gather_init_shapes(in, arena, n, &inits, &types));
    CXLA_RETURN_IF_ERROR(cxla_infer_check_reducer(in, arena, f, n, inits, types));
    cxla_shape *res = cxla_arena_alloc_array(arena, (size_t)n, sizeof(cxla_shape));
    if (!res) return OOM();
    for (int64_t i = 0; i < n; i++)
        CXLA_RETURN_IF_ERROR(window_shape(in, arena, OPS(i), OPS(n + i)->type, &res[i]));
    return pack(arena, n, res, out);
}

CXLA_INFER_DECLARE(cxla_infer_select_and_scatter) {
    const cxla_shape *x = OPS(0), *src = OPS(1), *init = OPS(2);
    CXLA_RETURN_IF_ERROR(expect_arrays(in, arena, 0, 2, "operand"));
    cxla_computation *sel, *sc;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_called(in, CXLA_ATTR_SELECT, &sel));
    CXLA_RETURN_IF_ERROR(cxla_infer_req_called(in, CXLA_ATTR_SCATTER, &sc));
    cxla_shape elem = {.type = x->type}, pred = {.type = CXLA_PRED};
    if (sel->param_count != 2 || !cxla_infer_compatible(&sel->root->shape, &pred) ||
        !cxla_infer_compatible(&sel->params[0]->shape, &elem) ||
        !cxla_infer_compatible(&sel->params[1]->shape, &elem))
        return cxla_infer_fail(in, "select computation '%s' must be (%s, %s) -> pred[], got %s",
                               sel->name, STR(&elem), STR(&elem),
                               cxla_infer_signature_str(arena, sel));
    const cxla_shape *inits[1] = {init};
    cxla_type types[1] = {src->type};
    CXLA_RETURN_IF_ERROR(cxla_infer_check_reducer(in, arena, sc, 1, inits, types));
    cxla_shape w;
    CXLA_RETURN_IF_ERROR(window_shape(in, arena, x, x->type, &w));
    if (!cxla_infer_compatible(src, &w))
        return cxla_infer_fail(in, "the source %s must have the windowed operand's shape %s",
                               STR(src), STR(&w));
    return cxla_infer_copy(arena, x, out);
}

/* ---- sort and top-k -------------------------------------------------------------- */

CXLA_INFER_DECLARE(cxla_infer_sort) {
    int64_t n = in->operand_count;
    if (n < 1) return cxla_infer_fail(in, "expects at least one operand");
    CXLA_RETURN_IF_ERROR(expect_arrays(in, arena, 0, n, "operand"));
    CXLA_RETURN_IF_ERROR(same_dims_as_first(in, arena, 0, n, "operands"));
    const int64_t *d;
    int64_t nd;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_ints(in, CXLA_ATTR_DIMENSIONS, &d, &nd));
    if (nd != 1 || d[0] < 0 || d[0] >= OPS(0)->rank)
        return cxla_infer_fail(in, "dimensions=%s must name one dimension of %s", INTS_STR(d, nd),
                               STR(OPS(0)));
    cxla_computation *f;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_called(in, CXLA_ATTR_TO_APPLY, &f));
    cxla_shape pred = {.type = CXLA_PRED};
    if (!cxla_infer_compatible(&f->root->shape, &pred))
        return cxla_infer_fail(in, "comparator '%s' must return pred[], its signature is %s",
                               f->name, cxla_infer_signature_str(arena, f));
    if (f->param_count != 2 * n)
        return cxla_infer_fail(in,
                               "comparator '%s' must take %" PRId64
                               " parameters (2 per operand), its signature is %s",
                               f->name, 2 * n, cxla_infer_signature_str(arena, f));
    for (int64_t i = 0; i < 2 * n; i++) {
        cxla_shape elem = {.type = OPS(i / 2)->type};
        if (!cxla_infer_compatible(&f->params[i]->shape, &elem))
            return cxla_infer_fail(
                in, "comparator '%s' parameter %" PRId64 " must be %s, its signature is %s",
                f->name, i, STR(&elem), cxla_infer_signature_str(arena, f));
    }
    return cxla_infer_operands_tuple(in, arena, true, out);
}

CXLA_INFER_DECLARE(cxla_infer_topk) {
    const cxla_shape *x = OPS(0);
    if (!cxla_infer_is_array(x) || x->rank < 1)
        return cxla_infer_fail(in, "the operand must be an array of rank >= 1, got %s", STR(x));
    int64_t k;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_int(in, CXLA_ATTR_K, &k));
    int64_t last = x->rank - 1;
    if (k < 0 || (x->dims[last] != CXLA_DIM_UNBOUNDED && k > x->dims[last]))
        return cxla_infer_fail(in,
                               "k=%" PRId64 " must be in 0..%" PRId64 " (the last dimension of "
                               "%s)",
                               k, x->dims[last], STR(x));
    int64_t dims[CXLA_MAX_RANK];
    uint8_t dyn[CXLA_MAX_RANK];
    for (int64_t i = 0; i < x->rank; i++) {
        dims[i] = i == last ? k : x->dims[i];
        dyn[i] = i != last && cxla_infer_dyn(x, i);
    }
    cxla_shape parts[2];
    CXLA_RETURN_IF_ERROR(cxla_infer_make_array(arena, x->type, x->rank, dims, dyn, &parts[0]));
    CXLA_RETURN_IF_ERROR(cxla_infer_make_array(arena, CXLA_S32, x->rank, dims, dyn, &parts[1]));
    return pack(arena, 2, parts, out);
}

/* ---- gather ---------------------------------------------------------------------- */

typedef struct int_list {
    const int64_t *v;
    int64_t n;
} int_list;

static void opt_ints(const cxla_instr *in, cxla_attr_id id, int_list *l) {
    l->v = cxla_instr_ints(in, id, &l->n);
}

static cxla_status req_list(const cxla_instr *in, cxla_attr_id id, int_list *l) {
    return cxla_infer_req_ints(in, id, &l->v, &l->n);
}

static const char *attr_name(cxla_attr_id id) {
    return cxla_attr_get_info(id)->name;
}

/* Checks a list of dimension numbers: each in [0, bound), optionally sorted, unique. */
static cxla_status check_dims_list(const cxla_instr *in, cxla_arena *arena, cxla_attr_id id,
                                   int_list l, int64_t bound, bool sorted, const char *of) {
    for (int64_t i = 0; i < l.n; i++)
        if (l.v[i] < 0 || l.v[i] >= bound)
            return cxla_infer_fail(in, "%s=%s: %" PRId64 " is out of range [0, %" PRId64 ") of %s",
                                   attr_name(id), INTS_STR(l.v, l.n), l.v[i], bound, of);
    if (sorted && !cxla_infer_is_sorted(l.v, l.n))
        return cxla_infer_fail(in, "%s=%s must be sorted", attr_name(id), INTS_STR(l.v, l.n));
    if (!cxla_infer_all_unique(l.v, l.n))
        return cxla_infer_fail(in, "%s=%s repeats a dimension", attr_name(id), INTS_STR(l.v, l.n));
    return NULL;
}

/* No dimension may appear in both lists. */
static cxla_status check_disjoint(const cxla_instr *in, cxla_arena *arena, cxla_attr_id a_id,
                                  int_list a, cxla_attr_id b_id, int_list b) {
    for (int64_t i = 0; i < a.n; i++)
        if (cxla_infer_contains(b.v, b.n, a.v[i]))
            return cxla_infer_fail(in, "dimension %" PRId64 " is in both %s=%s and %s=%s", a.v[i],
                                   attr_name(a_id), INTS_STR(a.v, a.n), attr_name(b_id),
                                   INTS_STR(b.v, b.n));
    return NULL;
}

/* The index array's dims with the implicit trailing 1 when index_vector_dim == rank. */
static cxla_status expand_indices(const cxla_instr *in, cxla_arena *arena, const cxla_shape *idx,
                                  int64_t ivd, int64_t *dims, uint8_t *dyn, int64_t *rank) {
    if (!cxla_infer_is_array(idx) || !cxla_type_is_integer(idx->type))
        return cxla_infer_fail(in, "the indices must be an integer array, got %s", STR(idx));
    if (ivd < 0 || ivd > idx->rank)
        return cxla_infer_fail(
            in, "index_vector_dim=%" PRId64 " must be in 0..%" PRId64 " for indices %s", ivd,
            idx->rank, STR(idx));
    if (idx->rank >= CXLA_MAX_RANK) return cxla_infer_fail(in, "the indices rank is too large");
    for (int64_t i = 0; i < idx->rank; i++) {
        dims[i] = idx->dims[i];
        dyn[i] = cxla_infer_dyn(idx, i);
    }
    *rank = idx->rank;
    if (ivd == idx->rank) {
        dims[*rank] = 1;
        dyn[(*rank)++] = 0;
    }
    return NULL;
}

/* Batching dims: operand side sorted, unique, in range, disjoint from |other|; indices
 * side unique, in range, not index_vector_dim; same count and sizes. */
static cxla_status check_batching(const cxla_instr *in, cxla_arena *arena, const cxla_shape *x,
                                  const cxla_shape *idx, int64_t ivd, cxla_attr_id op_id,
                                  int_list ob, cxla_attr_id idx_id, int_list ib) {
    CXLA_RETURN_IF_ERROR(check_dims_list(in, arena, op_id, ob, x->rank, true, STR(x)));
    CXLA_RETURN_IF_ERROR(check_dims_list(in, arena, idx_id, ib, idx->rank, false, STR(idx)));
    if (cxla_infer_contains(ib.v, ib.n, ivd))
        return cxla_infer_fail(in, "%s=%s must not contain index_vector_dim=%" PRId64,
                               attr_name(idx_id), INTS_STR(ib.v, ib.n), ivd);
    if (ob.n != ib.n)
        return cxla_infer_fail(in, "%s=%s and %s=%s must have the same length", attr_name(op_id),
                               INTS_STR(ob.v, ob.n), attr_name(idx_id), INTS_STR(ib.v, ib.n));
    for (int64_t i = 0; i < ob.n; i++)
        if (x->dims[ob.v[i]] != idx->dims[ib.v[i]])
            return cxla_infer_fail(in,
                                   "batching dimension %" PRId64 " of %s (size %" PRId64
                                   ") and %" PRId64 " of %s (size %" PRId64 ") must match",
                                   ob.v[i], STR(x), x->dims[ob.v[i]], ib.v[i], STR(idx),
                                   idx->dims[ib.v[i]]);
    return NULL;
}

CXLA_INFER_DECLARE(cxla_infer_gather) {
    const cxla_shape *x = OPS(0), *idx = OPS(1);
    if (!cxla_infer_is_array(x))
        return cxla_infer_fail(in, "the operand must be an array, got %s", STR(x));
    int_list offset, collapsed, sim, ss, ob, ib;
    int64_t ivd;
    CXLA_RETURN_IF_ERROR(req_list(in, CXLA_ATTR_OFFSET_DIMS, &offset));
    CXLA_RETURN_IF_ERROR(req_list(in, CXLA_ATTR_COLLAPSED_SLICE_DIMS, &collapsed));
    CXLA_RETURN_IF_ERROR(req_list(in, CXLA_ATTR_START_INDEX_MAP, &sim));
    CXLA_RETURN_IF_ERROR(req_list(in, CXLA_ATTR_SLICE_SIZES, &ss));
    CXLA_RETURN_IF_ERROR(cxla_infer_req_int(in, CXLA_ATTR_INDEX_VECTOR_DIM, &ivd));
    opt_ints(in, CXLA_ATTR_OPERAND_BATCHING_DIMS, &ob);
    opt_ints(in, CXLA_ATTR_START_INDICES_BATCHING_DIMS, &ib);

    int64_t edims[CXLA_MAX_RANK + 1], erank;
    uint8_t edyn[CXLA_MAX_RANK + 1];
    CXLA_RETURN_IF_ERROR(expand_indices(in, arena, idx, ivd, edims, edyn, &erank));
    int64_t result_rank = offset.n + erank - 1;
    if (result_rank > CXLA_MAX_RANK) return cxla_infer_fail(in, "the result rank is too large");
    const char *xs = STR(x);
    CXLA_RETURN_IF_ERROR(
        check_dims_list(in, arena, CXLA_ATTR_OFFSET_DIMS, offset, result_rank, true, "the result"));
    if (sim.n != edims[ivd])
        return cxla_infer_fail(in,
                               "start_index_map=%s has %" PRId64
                               " entries but the index vectors of %s have %" PRId64,
                               INTS_STR(sim.v, sim.n), sim.n, STR(idx), edims[ivd]);
    CXLA_RETURN_IF_ERROR(
        check_dims_list(in, arena, CXLA_ATTR_START_INDEX_MAP, sim, x->rank, false, xs));
    CXLA_RETURN_IF_ERROR(
        check_dims_list(in, arena, CXLA_ATTR_COLLAPSED_SLICE_DIMS, collapsed, x->rank, true, xs));
    CXLA_RETURN_IF_ERROR(check_batching(in, arena, x, idx, ivd, CXLA_ATTR_OPERAND_BATCHING_DIMS, ob,
                                        CXLA_ATTR_START_INDICES_BATCHING_DIMS, ib));
    CXLA_RETURN_IF_ERROR(check_disjoint(in, arena, CXLA_ATTR_COLLAPSED_SLICE_DIMS, collapsed,
                                        CXLA_ATTR_OPERAND_BATCHING_DIMS, ob));
    /* start_index_map may name a batching dimension: XLA's shape inference
     * (ValidateGatherDimensionNumbers) checks each list alone, not that they are disjoint
     * as StableHLO's spec asks. The interpreter takes such a dimension's start from the
     * batch position (docs/semantics.md). */
    if (ss.n != x->rank)
        return cxla_infer_fail(in, "slice_sizes=%s needs one size per dimension of %s",
                               INTS_STR(ss.v, ss.n), xs);
    if (offset.n + collapsed.n + ob.n != x->rank)
        return cxla_infer_fail(in,
                               "offset_dims=%s, collapsed_slice_dims=%s and "
                               "operand_batching_dims=%s must together count the %" PRId64
                               " dimensions of %s",
                               INTS_STR(offset.v, offset.n), INTS_STR(collapsed.v, collapsed.n),
                               INTS_STR(ob.v, ob.n), x->rank, xs);
    for (int64_t i = 0; i < ss.n; i++)
        if (ss.v[i] < 0 || (x->dims[i] != CXLA_DIM_UNBOUNDED && ss.v[i] > x->dims[i]))
            return cxla_infer_fail(in,
                                   "slice_sizes=%s: size %" PRId64 " of dimension %" PRId64
                                   " is outside 0..%" PRId64 " of %s",
                                   INTS_STR(ss.v, ss.n), ss.v[i], i, x->dims[i], xs);
    for (int64_t i = 0; i < x->rank; i++)
        if ((cxla_infer_contains(collapsed.v, collapsed.n, i) ||
             cxla_infer_contains(ob.v, ob.n, i)) &&
            ss.v[i] > 1)
            return cxla_infer_fail(in,
                                   "slice_sizes=%s: collapsed or batching dimension %" PRId64
                                   " must have size 0 or 1",
                                   INTS_STR(ss.v, ss.n), i);

    int64_t dims[CXLA_MAX_RANK];
    uint8_t dyn[CXLA_MAX_RANK];
    int64_t next_operand = 0, next_index = 0;
    for (int64_t i = 0; i < result_rank; i++) {
        if (cxla_infer_contains(offset.v, offset.n, i)) {
            while (cxla_infer_contains(collapsed.v, collapsed.n, next_operand) ||
                   cxla_infer_contains(ob.v, ob.n, next_operand))
                next_operand++;
            dims[i] = ss.v[next_operand];
            dyn[i] = ss.v[next_operand] == x->dims[next_operand] && cxla_infer_dyn(x, next_operand);
            next_operand++;
        } else {
            if (next_index == ivd) next_index++;
            dims[i] = edims[next_index];
            dyn[i] = edyn[next_index];
            next_index++;
        }
    }
    return cxla_infer_make_array(arena, x->type, result_rank, dims, dyn, out);
}

/* ---- scatter --------------------------------------------------------------------- */

CXLA_INFER_DECLARE(cxla_infer_scatter) {
    int64_t count = in->operand_count;
    if (count < 3 || count % 2 == 0)
        return cxla_infer_fail(
            in, "expects N operands, the indices and N updates, got %" PRId64 " operand(s)", count);
    int64_t n = (count - 1) / 2;
    CXLA_RETURN_IF_ERROR(expect_arrays(in, arena, 0, n, "operand"));
    CXLA_RETURN_IF_ERROR(expect_arrays(in, arena, n + 1, count, "update"));
    CXLA_RETURN_IF_ERROR(same_dims_as_first(in, arena, 0, n, "operands"));
    CXLA_RETURN_IF_ERROR(same_dims_as_first(in, arena, n + 1, count, "updates"));
    const cxla_shape *x = OPS(0), *idx = OPS(n), *u = OPS(n + 1);
    int_list uwd, iwd, sdod, ib, sib;
    int64_t ivd;
    CXLA_RETURN_IF_ERROR(req_list(in, CXLA_ATTR_UPDATE_WINDOW_DIMS, &uwd));
    CXLA_RETURN_IF_ERROR(req_list(in, CXLA_ATTR_INSERTED_WINDOW_DIMS, &iwd));
    CXLA_RETURN_IF_ERROR(req_list(in, CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, &sdod));
    CXLA_RETURN_IF_ERROR(cxla_infer_req_int(in, CXLA_ATTR_INDEX_VECTOR_DIM, &ivd));
    opt_ints(in, CXLA_ATTR_INPUT_BATCHING_DIMS, &ib);
    opt_ints(in, CXLA_ATTR_SCATTER_INDICES_BATCHING_DIMS, &sib);

    int64_t edims[CXLA_MAX_RANK + 1], erank;
    uint8_t edyn[CXLA_MAX_RANK + 1];
    CXLA_RETURN_IF_ERROR(expand_indices(in, arena, idx, ivd, edims, edyn, &erank));
    const char *xs = STR(x), *us = STR(u);
    int64_t want_rank = erank - 1 + uwd.n;
    if (u->rank != want_rank)
        return cxla_infer_fail(in,
                               "the updates %s must have rank %" PRId64
                               " (scatter dims of %s plus update_window_dims=%s)",
                               us, want_rank, STR(idx), INTS_STR(uwd.v, uwd.n));
    CXLA_RETURN_IF_ERROR(
        check_dims_list(in, arena, CXLA_ATTR_UPDATE_WINDOW_DIMS, uwd, u->rank, true, us));
    CXLA_RETURN_IF_ERROR(
        check_dims_list(in, arena, CXLA_ATTR_INSERTED_WINDOW_DIMS, iwd, x->rank, true, xs));
    CXLA_RETURN_IF_ERROR(check_batching(in, arena, x, idx, ivd, CXLA_ATTR_INPUT_BATCHING_DIMS, ib,
                                        CXLA_ATTR_SCATTER_INDICES_BATCHING_DIMS, sib));
    CXLA_RETURN_IF_ERROR(check_disjoint(in, arena, CXLA_ATTR_INSERTED_WINDOW_DIMS, iwd,
                                        CXLA_ATTR_INPUT_BATCHING_DIMS, ib));
    if (uwd.n + iwd.n + ib.n != x->rank)
        return cxla_infer_fail(
            in,
            "update_window_dims=%s, inserted_window_dims=%s and "
            "input_batching_dims=%s must together count the %" PRId64 " dimensions of %s",
            INTS_STR(uwd.v, uwd.n), INTS_STR(iwd.v, iwd.n), INTS_STR(ib.v, ib.n), x->rank, xs);
    if (sdod.n != edims[ivd])
        return cxla_infer_fail(in,
                               "scatter_dims_to_operand_dims=%s has %" PRId64
                               " entries but the index vectors of %s have %" PRId64,
                               INTS_STR(sdod.v, sdod.n), sdod.n, STR(idx), edims[ivd]);
    CXLA_RETURN_IF_ERROR(check_dims_list(in, arena, CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, sdod,
                                         x->rank, false, xs));
    CXLA_RETURN_IF_ERROR(check_disjoint(in, arena, CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, sdod,
                                        CXLA_ATTR_INPUT_BATCHING_DIMS, ib));
    /* Window dims of the updates fit in the operand's window dimensions. */
    int64_t w = 0;
    for (int64_t i = 0; i < x->rank; i++) {
        if (cxla_infer_contains(iwd.v, iwd.n, i) || cxla_infer_contains(ib.v, ib.n, i)) continue;
        int64_t ud = u->dims[uwd.v[w]];
        if (x->dims[i] != CXLA_DIM_UNBOUNDED && ud > x->dims[i])
            return cxla_infer_fail(in,
                                   "update window dimension %" PRId64 " of %s (size %" PRId64
                                   ") exceeds operand dimension %" PRId64 " of %s",
                                   uwd.v[w], us, ud, i, xs);
        w++;
    }
    /* Scatter dims of the updates match the indices' batch dims. */
    int64_t next_index = 0;
    for (int64_t i = 0; i < u->rank; i++) {
        if (cxla_infer_contains(uwd.v, uwd.n, i)) continue;
        if (next_index == ivd) next_index++;
        if (u->dims[i] != edims[next_index])
            return cxla_infer_fail(in,
                                   "scatter dimension %" PRId64
                                   " of the updates %s has size %" PRId64
                                   " but the indices %s have %" PRId64,
                                   i, us, u->dims[i], STR(idx), edims[next_index]);
        next_index++;
    }
    cxla_computation *f;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_called(in, CXLA_ATTR_TO_APPLY, &f));
    cxla_shape *scalars = cxla_arena_alloc_array(arena, (size_t)n, sizeof(cxla_shape));
    const cxla_shape **inits = cxla_arena_alloc_array(arena, (size_t)n, sizeof(*inits));
    cxla_type *types = cxla_arena_alloc_array(arena, (size_t)n, sizeof(*types));
    if (!scalars || !inits || !types) return OOM();
    for (int64_t i = 0; i < n; i++) {
        scalars[i] = (cxla_shape){.type = OPS(i)->type};
        inits[i] = &scalars[i];
        types[i] = OPS(n + 1 + i)->type;
    }
    CXLA_RETURN_IF_ERROR(cxla_infer_check_reducer(in, arena, f, n, inits, types));
    cxla_shape *res = cxla_arena_alloc_array(arena, (size_t)n, sizeof(cxla_shape));
    if (!res) return OOM();
    for (int64_t i = 0; i < n; i++) CXLA_RETURN_IF_ERROR(cxla_infer_copy(arena, OPS(i), &res[i]));
    return pack(arena, n, res, out);
}

/* ---- scan and map ---------------------------------------------------------------- */

/* scan: a 2025 opcode with no published shape rule yet: the declared shape, with the
 * operands, the scanned dimension and the body checked for what is certain. */
CXLA_INFER_DECLARE(cxla_infer_scan) {
    if (in->operand_count < 1) return cxla_infer_fail(in, "expects at least one operand");
    cxla_computation *f;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_called(in, CXLA_ATTR_TO_APPLY, &f));
    const int64_t *d;
    int64_t nd;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_ints(in, CXLA_ATTR_DIMENSIONS, &d, &nd));
    const cxla_shape *x = OPS(0);
    if (!cxla_infer_is_array(x) || nd != 1 || d[0] < 0 || d[0] >= x->rank)
        return cxla_infer_fail(in, "dimensions=%s must name one dimension of %s", INTS_STR(d, nd),
                               STR(x));
    if (in->shape.type != CXLA_TUPLE && !cxla_infer_is_array(&in->shape))
        return cxla_infer_fail(in, "scan has no shape rule here: its result shape must be written");
    return cxla_infer_copy(arena, &in->shape, out);
}

CXLA_INFER_DECLARE(cxla_infer_map) {
    int64_t n = in->operand_count;
    if (n < 1) return cxla_infer_fail(in, "expects at least one operand");
    CXLA_RETURN_IF_ERROR(expect_arrays(in, arena, 0, n, "operand"));
    CXLA_RETURN_IF_ERROR(same_dims_as_first(in, arena, 0, n, "operands"));
    const cxla_shape *x = OPS(0);
    /* map applies to every element whatever its dimensions={...} say: XLA's HandleMap
     * checks the shape over all the operands' dimensions (its map_dims is an iota) and
     * ignores the attribute, which is kept and printed as written. */
    cxla_computation *f;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_called(in, CXLA_ATTR_TO_APPLY, &f));
    const char *sig = cxla_infer_signature_str(arena, f);
    if (f->param_count != n)
        return cxla_infer_fail(in,
                               "to_apply '%s' must take %" PRId64
                               " scalar parameters (one per operand), its signature is %s",
                               f->name, n, sig);
    if (!cxla_infer_is_scalar(&f->root->shape))
        return cxla_infer_fail(in, "to_apply '%s' must return a scalar, its signature is %s",
                               f->name, sig);
    for (int64_t i = 0; i < n; i++) {
        cxla_shape elem = {.type = OPS(i)->type};
        if (!cxla_infer_compatible(&f->params[i]->shape, &elem))
            return cxla_infer_fail(
                in, "to_apply '%s' parameter %" PRId64 " must be %s, its signature is %s", f->name,
                i, STR(&elem), sig);
    }
    return cxla_infer_with_type(arena, x, f->root->shape.type, out);
}
