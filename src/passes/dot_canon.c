/* Dot canonicalization (as XLA's DotDecomposer): every dot becomes
 *   lhs [B, M, K] x rhs [B, K, N] -> [B, M, N]   (batch dims 0, contracting 2 and 1)
 * or, without batch dimensions, [M, K] x [K, N] -> [M, N], with transposes that put the
 * batch, free and contracting dimensions in that order, reshapes that merge each group,
 * and a reshape of the result back to the dot's shape (batch, lhs free, rhs free: the
 * order the dot already had). The contracting dimensions keep their order, so the sum runs
 * over the same elements in the same order. Left alone: dots with sparsity, dynamic
 * shapes, and non-default layouts (the layout pass runs first). Convolutions are not
 * canonicalized: the backend takes their dimension numbers as they are. */
#include <string.h>

#include "passes/passes_internal.h"

static bool contains(const int64_t *v, int64_t n, int64_t x) {
    for (int64_t i = 0; i < n; i++)
        if (v[i] == x) return true;
    return false;
}

static bool is_list(const int64_t *v, int64_t n, int64_t a) {
    return n == 1 && v[0] == a;
}

static cxla_status add_reshape_transpose(cxla_instr *x, const int64_t *perm, const int64_t *dims,
                                         int64_t rank, cxla_instr **out) {
    cxla_module *m = x->parent->module;
    cxla_instr *t = x;
    bool id = true;
    for (int64_t i = 0; i < x->shape.rank; i++) id = id && perm[i] == i;
    if (!id) {
        int64_t td[CXLA_MAX_RANK];
        for (int64_t i = 0; i < x->shape.rank; i++) td[i] = x->shape.dims[perm[i]];
        cxla_shape s;
        CXLA_RETURN_IF_ERROR(passes_array_shape(m, x->shape.type, x->shape.rank, td, &s));
        CXLA_RETURN_IF_ERROR(passes_add(x->parent, CXLA_OP_TRANSPOSE, "transpose", &s, 1, &x, &t));
        CXLA_RETURN_IF_ERROR(passes_set_ints(t, CXLA_ATTR_DIMENSIONS, perm, x->shape.rank));
    }
    cxla_shape rs;
    CXLA_RETURN_IF_ERROR(passes_array_shape(m, x->shape.type, rank, dims, &rs));
    return passes_add(x->parent, CXLA_OP_RESHAPE, "reshape", &rs, 1, &t, out);
}

static cxla_status canonicalize(cxla_instr *dot, bool *changed) {
    cxla_instr *l = dot->operands[0], *r = dot->operands[1];
    if (!passes_is_static_array(&dot->shape) || !passes_is_static_array(&l->shape) ||
        !passes_is_static_array(&r->shape) || cxla_instr_attr(dot, CXLA_ATTR_SPARSITY) ||
        !cxla_layout_is_default(&dot->shape) || !cxla_layout_is_default(&l->shape) ||
        !cxla_layout_is_default(&r->shape))
        return NULL;
    int64_t nlb, nlc, nrb, nrc;
    const int64_t *lb = cxla_instr_ints(dot, CXLA_ATTR_LHS_BATCH_DIMS, &nlb);
    const int64_t *lc = cxla_instr_ints(dot, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nlc);
    const int64_t *rb = cxla_instr_ints(dot, CXLA_ATTR_RHS_BATCH_DIMS, &nrb);
    const int64_t *rc = cxla_instr_ints(dot, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nrc);
    if (nlb != nrb || nlc != nrc) return NULL;
    int64_t rl = l->shape.rank, rr = r->shape.rank;
    bool canonical = nlb == 0 ? (rl == 2 && rr == 2 && is_list(lc, nlc, 1) && is_list(rc, nrc, 0))
                              : (rl == 3 && rr == 3 && is_list(lb, nlb, 0) && is_list(rb, nrb, 0) &&
                                 is_list(lc, nlc, 2) && is_list(rc, nrc, 1));
    if (canonical) return NULL;
    int64_t lperm[CXLA_MAX_RANK], rperm[CXLA_MAX_RANK], k = 0, j = 0;
    int64_t B = 1, M = 1, K = 1, N = 1;
    for (int64_t i = 0; i < nlb; i++) {
        lperm[k++] = lb[i];
        rperm[j++] = rb[i];
        B *= l->shape.dims[lb[i]];
    }
    for (int64_t i = 0; i < rl; i++)
        if (!contains(lb, nlb, i) && !contains(lc, nlc, i)) {
            lperm[k++] = i;
            M *= l->shape.dims[i];
        }
    for (int64_t i = 0; i < nlc; i++) {
        lperm[k++] = lc[i];
        rperm[j++] = rc[i];
        K *= l->shape.dims[lc[i]];
    }
    for (int64_t i = 0; i < rr; i++)
        if (!contains(rb, nrb, i) && !contains(rc, nrc, i)) {
            rperm[j++] = i;
            N *= r->shape.dims[i];
        }
    if (k != rl || j != rr) return NULL;
    bool batch = nlb > 0;
    int64_t ld[3], rd[3], od[3], n = 0;
    if (batch) ld[n] = rd[n] = od[n] = B, n++;
    ld[n] = M, rd[n] = K, od[n] = M, n++;
    ld[n] = K, rd[n] = N, od[n] = N, n++;
    cxla_instr *l2, *r2, *d2, *out;
    CXLA_RETURN_IF_ERROR(add_reshape_transpose(l, lperm, ld, n, &l2));
    CXLA_RETURN_IF_ERROR(add_reshape_transpose(r, rperm, rd, n, &r2));
    cxla_module *m = dot->parent->module;
    cxla_shape ds;
    CXLA_RETURN_IF_ERROR(passes_array_shape(m, dot->shape.type, n, od, &ds));
    cxla_instr *ops[2] = {l2, r2};
    CXLA_RETURN_IF_ERROR(passes_add(dot->parent, CXLA_OP_DOT, dot->name, &ds, 2, ops, &d2));
    for (int64_t i = 0; i < dot->attr_count; i++)
        if (dot->attrs[i].kind != CXLA_ATTR_KIND_INSTRUCTIONS)
            CXLA_RETURN_IF_ERROR(cxla_instr_set_attr(d2, &dot->attrs[i]));
    int64_t zero = 0, one = 1, two = 2;
    if (batch) {
        CXLA_RETURN_IF_ERROR(passes_set_ints(d2, CXLA_ATTR_LHS_BATCH_DIMS, &zero, 1));
        CXLA_RETURN_IF_ERROR(passes_set_ints(d2, CXLA_ATTR_RHS_BATCH_DIMS, &zero, 1));
    }
    CXLA_RETURN_IF_ERROR(
        passes_set_ints(d2, CXLA_ATTR_LHS_CONTRACTING_DIMS, batch ? &two : &one, 1));
    CXLA_RETURN_IF_ERROR(
        passes_set_ints(d2, CXLA_ATTR_RHS_CONTRACTING_DIMS, batch ? &one : &zero, 1));
    CXLA_RETURN_IF_ERROR(
        passes_add(dot->parent, CXLA_OP_RESHAPE, "reshape", &dot->shape, 1, &d2, &out));
    CXLA_RETURN_IF_ERROR(passes_replace(dot, out));
    *changed = true;
    return NULL;
}

static cxla_status run_dot_canon(cxla_module *m, bool *changed) {
    *changed = false;
    for (int64_t c = 0; c < m->comp_count; c++) {
        cxla_computation *comp = m->comps[c];
        int64_t n = comp->instr_count;
        /* A snapshot: rewriting removes the dot and appends its replacement. */
        cxla_instr **snap = cxla_arena_alloc_array(m->arena, (size_t)(n ? n : 1), sizeof(*snap));
        if (!snap) return PASSES_OOM();
        memcpy(snap, comp->instrs, (size_t)n * sizeof(*snap));
        for (int64_t i = 0; i < n; i++) {
            cxla_instr *in = snap[i];
            if (in->opcode == CXLA_OP_DOT && !passes_has_control_deps(in))
                CXLA_RETURN_IF_ERROR(canonicalize(in, changed));
        }
    }
    return NULL;
}

const cxla_pass cxla_pass_dot_canon = {"dot-canon", run_dot_canon};
