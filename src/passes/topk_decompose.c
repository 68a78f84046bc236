/* TopK decomposition: the built-in "TopK" custom call whose comparator is not a plain
 * greater-than or less-than (those run as the topk operation) becomes what the
 * interpreter defines it to be (interp_topk_by, XLA's TopkDecomposer): an s32 iota along
 * the last dimension, a stable sort of (values, iota) along it by the comparator, and the
 * first k of each, as (values, indices). Backends then run the sort with the computation
 * (the cpu backend's sort kernel) instead of the interpreter's handler. A
 * custom-call-start of one is a custom call in its wrapped computation by then (the
 * async-desugar pass runs first), decomposed there.
 *
 * A comparator of two parameters (the values) gets a copy with two more (the s32
 * indices, unread), as sort takes two per operand; one of four is used as it is. Left
 * alone: comparators of other arities or parameter types, results that are not (values,
 * s32 indices) of the operand's dimensions with the last cut to k, a target the user
 * registered under the name "TopK", calls with control dependencies (the interpreter's
 * handler then reports what is wrong, as before). */
#include <string.h>

#include "exec/custom_call.h"
#include "interp/interp_reduce.h"
#include "passes/passes_internal.h"

static bool scalar_of(const cxla_instr *p, cxla_type t) {
    return p && cxla_type_is_array(p->shape.type) && p->shape.type == t && p->shape.rank == 0;
}

/* The comparator of TopK |cc| on values of type |t| as sort's comparator of (values,
 * s32 indices), into *out; NULL (and no error) when it has none of the two forms. */
static cxla_status sort_comparator(cxla_module *m, cxla_computation *comp, cxla_type t,
                                   cxla_computation **out) {
    *out = NULL;
    if (!comp->root || (comp->param_count != 2 && comp->param_count != 4)) return NULL;
    for (int64_t p = 0; p < comp->param_count; p++)
        if (!scalar_of(comp->params[p], p < 2 ? t : CXLA_S32)) return NULL;
    if (comp->root->shape.type != CXLA_PRED || comp->root->shape.rank != 0) return NULL;
    if (comp->param_count == 4) {
        *out = comp;
        return NULL;
    }
    /* A copy with two more parameters: its instructions in post-order, operands mapped. */
    cxla_instr **order = NULL;
    CXLA_RETURN_IF_ERROR(cxla_computation_post_order(comp, &order));
    const char *name = cxla_module_unique_name(m, comp->name);
    cxla_computation *c = NULL;
    if (!name) return PASSES_OOM();
    CXLA_RETURN_IF_ERROR(cxla_module_add_computation(m, name, &c));
    int64_t span = 0;
    for (int64_t i = 0; i < comp->instr_count; i++)
        if (comp->instrs[i]->id >= span) span = comp->instrs[i]->id + 1;
    cxla_instr **copy = cxla_arena_alloc_array(m->arena, (size_t)(span ? span : 1), sizeof(*copy));
    cxla_instr **ops = cxla_arena_alloc_array(m->arena, 64, sizeof(*ops));
    if (!copy || !ops) return PASSES_OOM();
    for (int64_t i = 0; i < comp->instr_count; i++) {
        const cxla_instr *in = order[i];
        if (in->operand_count > 64)
            return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "%s: too many operands", in->name);
        for (int64_t k = 0; k < in->operand_count; k++) ops[k] = copy[in->operands[k]->id];
        CXLA_RETURN_IF_ERROR(passes_clone_instr(c, in, ops, &copy[in->id]));
    }
    cxla_shape s32;
    CXLA_RETURN_IF_ERROR(passes_array_shape(m, CXLA_S32, 0, NULL, &s32));
    for (int64_t p = 2; p < 4; p++) {
        cxla_instr *x;
        CXLA_RETURN_IF_ERROR(passes_add(c, CXLA_OP_PARAMETER, "index", &s32, 0, NULL, &x));
        x->parameter_number = p;
    }
    CXLA_RETURN_IF_ERROR(passes_set_fusion_params(c, 4));
    c->root = copy[comp->root->id];
    *out = c;
    return NULL;
}

/* Whether custom call |cc| is a TopK this pass takes; its comparator for sort into
 * *out_cmp. */
static cxla_status takes(const cxla_instr *cc, cxla_computation **out_cmp) {
    *out_cmp = NULL;
    const char *target = NULL;
    cxla_custom_call_fn fn = NULL;
    cxla_custom_call_api_version api;
    exec_builtin_target builtin = EXEC_BUILTIN_NONE;
    cxla_status st = exec_custom_call_resolve(cc, &target, &fn, &api, &builtin);
    if (st) {
        cxla_status_free(st);
        return NULL;
    }
    const cxla_shape *r = &cc->shape;
    if (builtin != EXEC_BUILTIN_TOPK || cc->operand_count != 1 || r->type != CXLA_TUPLE ||
        r->tuple_count != 2 || passes_has_control_deps(cc))
        return NULL;
    const cxla_shape *xs = &cc->operands[0]->shape, *v = &r->elements[0], *ix = &r->elements[1];
    if (!passes_is_static_array(xs) || xs->rank < 1 || !passes_is_static_array(v) ||
        !passes_is_static_array(ix) || v->type != xs->type || ix->type != CXLA_S32 ||
        v->rank != xs->rank || ix->rank != xs->rank)
        return NULL;
    int64_t last = xs->rank - 1;
    for (int64_t d = 0; d < xs->rank; d++)
        if ((d < last && v->dims[d] != xs->dims[d]) || ix->dims[d] != v->dims[d]) return NULL;
    if (v->dims[last] > xs->dims[last] || xs->dims[last] > INT32_MAX) return NULL;
    cxla_computation *comp = cxla_instr_called(cc, CXLA_ATTR_TO_APPLY);
    if (!comp) {
        cxla_computation *called[1];
        if (cxla_instr_called_computations(cc, called, 1) == 1) comp = called[0];
    }
    if (!comp) return NULL; /* no comparator: largest first, the topk operation */
    interp_comparator c = interp_match_comparator(comp);
    if (c.direction == INTERP_DIR_GT || c.direction == INTERP_DIR_LT) return NULL;
    return sort_comparator(cc->parent->module, comp, xs->type, out_cmp);
}

static cxla_status set_attr(cxla_instr *in, cxla_attr_id id, cxla_attr_kind kind, cxla_attr *a) {
    a->id = id;
    a->name = cxla_attr_get_info(id)->name;
    a->kind = kind;
    return cxla_instr_set_attr(in, a);
}

/* Adds to |at| the decomposition of a TopK of |x| into |result| (values, indices) by
 * comparator |cmp|; *out gets its (values, indices) tuple. */
static cxla_status build(cxla_computation *at, cxla_instr *x, const cxla_shape *result,
                         cxla_computation *cmp, cxla_instr **out) {
    cxla_module *m = at->module;
    const cxla_shape *xs = &x->shape, *v = &result->elements[0];
    int64_t last = xs->rank - 1;
    cxla_shape is;
    CXLA_RETURN_IF_ERROR(passes_array_shape(m, CXLA_S32, xs->rank, xs->dims, &is));
    cxla_instr *iota, *sort, *g[2], *part[2];
    cxla_attr a = {0};
    CXLA_RETURN_IF_ERROR(passes_add(at, CXLA_OP_IOTA, "iota", &is, 0, NULL, &iota));
    a.v.i = last;
    CXLA_RETURN_IF_ERROR(set_attr(iota, CXLA_ATTR_IOTA_DIMENSION, CXLA_ATTR_KIND_INT, &a));
    cxla_shape pair[2] = {*xs, is};
    cxla_shape ss = {.type = CXLA_TUPLE, .tuple_count = 2, .elements = pair};
    cxla_instr *sort_ops[2] = {x, iota};
    CXLA_RETURN_IF_ERROR(passes_add(at, CXLA_OP_SORT, "sort", &ss, 2, sort_ops, &sort));
    CXLA_RETURN_IF_ERROR(passes_set_ints(sort, CXLA_ATTR_DIMENSIONS, &last, 1));
    a = (cxla_attr){.v.b = true};
    CXLA_RETURN_IF_ERROR(set_attr(sort, CXLA_ATTR_IS_STABLE, CXLA_ATTR_KIND_BOOL, &a));
    a = (cxla_attr){0};
    a.v.comps.count = 1;
    a.v.comps.items = cxla_arena_alloc_array(m->arena, 1, sizeof(cxla_computation *));
    if (!a.v.comps.items) return PASSES_OOM();
    a.v.comps.items[0] = cmp;
    CXLA_RETURN_IF_ERROR(set_attr(sort, CXLA_ATTR_TO_APPLY, CXLA_ATTR_KIND_COMPUTATION, &a));
    cxla_slice_dim *dims = cxla_arena_alloc_array(m->arena, (size_t)xs->rank, sizeof(*dims));
    if (!dims) return PASSES_OOM();
    for (int64_t d = 0; d < xs->rank; d++) dims[d] = (cxla_slice_dim){0, v->dims[d], 1};
    for (int64_t e = 0; e < 2; e++) {
        CXLA_RETURN_IF_ERROR(passes_add(at, CXLA_OP_GET_TUPLE_ELEMENT, "get-tuple-element",
                                        &pair[e], 1, &sort, &g[e]));
        a = (cxla_attr){.v.i = e};
        CXLA_RETURN_IF_ERROR(set_attr(g[e], CXLA_ATTR_INDEX, CXLA_ATTR_KIND_INT, &a));
        CXLA_RETURN_IF_ERROR(
            passes_add(at, CXLA_OP_SLICE, "slice", &result->elements[e], 1, &g[e], &part[e]));
        a = (cxla_attr){0};
        a.v.slice.rank = xs->rank;
        a.v.slice.dims = dims;
        CXLA_RETURN_IF_ERROR(set_attr(part[e], CXLA_ATTR_SLICE, CXLA_ATTR_KIND_SLICE, &a));
    }
    return passes_add(at, CXLA_OP_TUPLE, "tuple", result, 2, part, out);
}

/* Rewrites |in| in place when it is a TopK custom call this pass takes (one that a
 * custom-call-start wraps is a custom call of its wrapped computation by now: the
 * async-desugar pass runs first). */
static cxla_status decompose(cxla_instr *in, bool *changed) {
    cxla_computation *cmp = NULL;
    CXLA_RETURN_IF_ERROR(takes(in, &cmp));
    if (!cmp) return NULL;
    cxla_instr *tuple;
    CXLA_RETURN_IF_ERROR(build(in->parent, in->operands[0], &in->shape, cmp, &tuple));
    CXLA_RETURN_IF_ERROR(cxla_instr_replace_all_uses(in, tuple));
    CXLA_RETURN_IF_ERROR(cxla_computation_remove_instr(in->parent, in));
    *changed = true;
    return NULL;
}

static cxla_status run_topk_decompose(cxla_module *m, bool *changed) {
    *changed = false;
    for (int64_t c = 0; c < m->comp_count; c++) {
        cxla_computation *comp = m->comps[c];
        int64_t n = comp->instr_count;
        cxla_instr **snap = cxla_arena_alloc_array(m->arena, (size_t)(n ? n : 1), sizeof(*snap));
        if (!snap) return PASSES_OOM();
        memcpy(snap, comp->instrs, (size_t)n * sizeof(*snap));
        for (int64_t i = 0; i < n; i++)
            if (snap[i]->opcode == CXLA_OP_CUSTOM_CALL)
                CXLA_RETURN_IF_ERROR(decompose(snap[i], changed));
    }
    return NULL;
}

const cxla_pass cxla_pass_topk_decompose = {"topk-decompose", run_topk_decompose};
