/* Output fusion (epilogue.h): a dot or convolution and the elementwise chain after it
 * become one `fusion` with kind=kOutput, so that the cpu backend computes the chain while
 * the product is still in registers (oneDNN's bias and post-ops) instead of writing the
 * product and reading it back. The matcher is shared with the backend (src/cpu/onednn.c),
 * which runs every fusion this pass forms. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/epilogue.h"
#include "passes/passes_internal.h"

/* ---- the matcher ----------------------------------------------------------------------- */

static bool is_product(const cxla_instr *x) {
    return x->opcode == CXLA_OP_DOT || x->opcode == CXLA_OP_CONVOLUTION;
}

bool cxla_epilogue_type(cxla_type t) {
    return t == CXLA_F32 || t == CXLA_BF16 || t == CXLA_F16;
}

int64_t cxla_epilogue_feature_dims(const cxla_instr *core, int64_t *dims) {
    if (core->opcode == CXLA_OP_CONVOLUTION) {
        const cxla_attr *dl = cxla_instr_attr(core, CXLA_ATTR_DIM_LABELS);
        if (!dl || dl->kind != CXLA_ATTR_KIND_DIM_LABELS) return 0;
        dims[0] = dl->v.conv.output_feature;
        return 1;
    }
    if (core->opcode != CXLA_OP_DOT || core->operand_count != 2) return 0;
    int64_t nb = 0, nc = 0;
    const int64_t *b = cxla_instr_ints(core, CXLA_ATTR_RHS_BATCH_DIMS, &nb);
    const int64_t *c = cxla_instr_ints(core, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nc);
    if (!b) nb = 0;
    if (!c) nc = 0;
    int64_t rhs_rank = core->operands[1]->shape.rank;
    int64_t free_dims = rhs_rank - nb - nc;
    if (free_dims <= 0 || free_dims > core->shape.rank) return 0;
    for (int64_t i = 0; i < free_dims; i++) dims[i] = core->shape.rank - free_dims + i;
    return free_dims;
}

/* |b| is broadcast(constant) of a scalar of the chain's type: its value in |v| (exact: f16
 * and bf16 values are f32 values). */
static bool scalar_constant(const cxla_instr *b, float *v) {
    if (b->opcode != CXLA_OP_BROADCAST || b->operand_count != 1) return false;
    const cxla_instr *c = b->operands[0];
    if (c->opcode != CXLA_OP_CONSTANT || c->shape.type != b->shape.type ||
        !cxla_epilogue_type(c->shape.type) || c->shape.rank != 0 || !c->literal ||
        c->literal_elided)
        return false;
    double d = 0;
    cxla_status st = cxla_literal_get_f64(c->literal, NULL, &d);
    if (st) {
        cxla_status_free(st);
        return false;
    }
    *v = (float)d;
    return true;
}

/* |b| broadcasts a vector (of the chain's type) along the |nf| feature dims |fd| of the product's
 * result: each operand dim of size > 1 goes to a feature dim, in order, with its size, and every
 * feature dim is covered. |exact|: the operand has only the feature dims (rank nf) and
 * the broadcast names exactly |fd|. */
static bool feature_vector(const cxla_instr *b, const int64_t *fd, int64_t nf, bool exact) {
    if (b->opcode != CXLA_OP_BROADCAST || b->operand_count != 1) return false;
    const cxla_shape *vs = &b->operands[0]->shape;
    if (vs->type != b->shape.type || !cxla_shape_is_static(vs)) return false;
    int64_t nbd;
    const int64_t *bd = cxla_instr_ints(b, CXLA_ATTR_DIMENSIONS, &nbd);
    if (!bd && vs->rank > 0) return false;
    if (nbd != vs->rank) return false;
    if (exact && vs->rank != nf) return false;
    int64_t next = 0; /* the next feature dim to cover */
    for (int64_t i = 0; i < vs->rank; i++) {
        if (vs->dims[i] == 1 && !exact) continue;
        if (next == nf || bd[i] != fd[next] || vs->dims[i] != b->shape.dims[fd[next]]) return false;
        next++;
    }
    /* Feature dims of size 1 need no operand dim. */
    while (next < nf && b->shape.dims[fd[next]] == 1 && !exact) next++;
    return next == nf;
}

/* |r| is a reshape of a vector (of the chain's type) that only adds dims of size 1 around the
 * feature dims (JAX writes a bias of a [1, N] product so): a broadcast in effect. */
static bool reshape_vector(const cxla_instr *r, const int64_t *fd, int64_t nf) {
    if (r->opcode != CXLA_OP_RESHAPE || r->operand_count != 1) return false;
    const cxla_shape *vs = &r->operands[0]->shape;
    if (vs->type != r->shape.type || !cxla_shape_is_static(vs)) return false;
    bool feature[CXLA_MAX_RANK] = {false};
    for (int64_t i = 0; i < nf; i++) feature[fd[i]] = true;
    for (int64_t d = 0; d < r->shape.rank; d++)
        if (!feature[d] && r->shape.dims[d] != 1) return false;
    /* The sizes above 1, in order, are the same on both sides. */
    int64_t i = 0, j = 0;
    for (;;) {
        while (i < vs->rank && vs->dims[i] == 1) i++;
        while (j < nf && r->shape.dims[fd[j]] == 1) j++;
        if (i == vs->rank || j == nf) return i == vs->rank && j == nf;
        if (vs->dims[i++] != r->shape.dims[fd[j++]]) return false;
    }
}

/* Whether |x| converts the f32 chain value |prev| of a product to bf16 or f16, the same
 * dims. The pass (|formed|) forms it only after a dot and to bf16: not to f16 (oneDNN 2.6
 * stores it only on CPUs with AVX512-FP16) nor after a convolution (its primitive does
 * not take an f32 source with a bf16 or f16 result): where oneDNN does not take the
 * fusion, its whole epilogue runs as loops on one thread, slower than the fused product
 * and a separate convert kernel. A fusion the backend is given whole (HLO text) may have
 * either: oneDNN refuses it and the product runs alone, then the loops. */
static bool narrowing_convert(const cxla_epilogue *e, const cxla_instr *prev, const cxla_instr *x,
                              bool formed) {
    return x->opcode == CXLA_OP_CONVERT && x->operand_count == 1 && x->operands[0] == prev &&
           prev->shape.type == CXLA_F32 && e->core->shape.type == CXLA_F32 &&
           (x->shape.type == CXLA_BF16 || (x->shape.type == CXLA_F16 && !formed)) &&
           (e->core->opcode == CXLA_OP_DOT || !formed) &&
           cxla_shape_same_dims(&x->shape, &prev->shape);
}

bool cxla_epilogue_step(const cxla_epilogue *e, const cxla_instr *prev, const cxla_instr *x,
                        bool vector_any_form, cxla_epi_op *op) {
    memset(op, 0, sizeof(*op));
    if (e->count == CXLA_EPI_MAX || (e->count > 0 && e->ops[e->count - 1].kind == CXLA_EPI_CONVERT))
        return false; /* a convert ends the chain */
    if (narrowing_convert(e, prev, x, vector_any_form)) {
        op->kind = CXLA_EPI_CONVERT;
        op->instr = x;
        return true;
    }
    bool relu_seen = false;
    for (int64_t i = 0; i < e->count; i++)
        if (e->ops[i].kind == CXLA_EPI_RELU) relu_seen = true;
    if (x->opcode == CXLA_OP_TANH && x->operand_count == 1 && x->operands[0] == prev &&
        x->shape.type == CXLA_F32 && prev->shape.type == CXLA_F32 && !relu_seen &&
        cxla_shape_same_dims(&x->shape, &prev->shape)) {
        op->kind = CXLA_EPI_TANH;
        op->instr = x;
        return true;
    }
    if (x->shape.type != e->core->shape.type || !cxla_epilogue_type(x->shape.type) ||
        x->operand_count != 2 || e->count == CXLA_EPI_MAX)
        return false;
    if (!cxla_shape_same_dims(&x->shape, &e->core->shape)) return false;
    const cxla_instr *other;
    if (x->operands[0] == prev && x->operands[1] != prev)
        other = x->operands[1];
    else if (x->operands[1] == prev && x->operands[0] != prev)
        other = x->operands[0];
    else
        return false;
    int64_t fd[CXLA_MAX_RANK];
    int64_t nf = cxla_epilogue_feature_dims(e->core, fd);
    float c;
    op->instr = x;
    op->bcast = other;
    switch (x->opcode) {
    case CXLA_OP_SUBTRACT:
        if (x->operands[0] != prev) return false; /* v - x is not a post-op */
        /* fall through */
    case CXLA_OP_ADD:
    case CXLA_OP_MULTIPLY:
        if (x->opcode == CXLA_OP_MULTIPLY && scalar_constant(other, &c)) {
            /* After a relu only positive scales: they commute with it. */
            if (relu_seen && !(c > 0.0f)) return false;
            op->kind = CXLA_EPI_SCALE;
            op->c = c;
            return true;
        }
        if (relu_seen || nf == 0) return false;
        if (!feature_vector(other, fd, nf, !vector_any_form) &&
            !(vector_any_form && reshape_vector(other, fd, nf)))
            return false;
        op->kind = x->opcode == CXLA_OP_ADD        ? CXLA_EPI_ADD_VEC
                   : x->opcode == CXLA_OP_SUBTRACT ? CXLA_EPI_SUB_VEC
                                                   : CXLA_EPI_MUL_VEC;
        op->vec = other->operands[0];
        return true;
    case CXLA_OP_MAXIMUM:
        if (relu_seen || !scalar_constant(other, &c) || c != 0.0f || signbit(c)) return false;
        op->kind = CXLA_EPI_RELU;
        return true;
    default: return false;
    }
}

bool cxla_epilogue_match(const cxla_instr *f, cxla_epilogue *out) {
    memset(out, 0, sizeof(*out));
    if (f->opcode != CXLA_OP_FUSION || !cxla_epilogue_type(f->shape.type)) return false;
    const cxla_computation *comp = cxla_instr_called(f, CXLA_ATTR_CALLS);
    if (!comp || !comp->root) return false;
    /* From the root down to the product, then checked in order from the product up. */
    const cxla_instr *chain[CXLA_EPI_MAX];
    int64_t n = 0;
    const cxla_instr *x = comp->root;
    if (x->opcode == CXLA_OP_CONVERT && x->operand_count == 1) {
        chain[n++] = x;
        x = x->operands[0];
        if (x->user_count != 1) return false;
    }
    while (!is_product(x)) {
        if (n == CXLA_EPI_MAX) return false;
        chain[n++] = x;
        if (x->opcode == CXLA_OP_TANH && x->operand_count == 1) {
            x = x->operands[0];
            if (x->user_count != 1) return false;
            continue;
        }
        if (x->operand_count != 2) return false;
        const cxla_instr *a = x->operands[0], *b = x->operands[1];
        /* The chain continues through the operand that is not a broadcast. */
        if (a->opcode == CXLA_OP_BROADCAST && b->opcode != CXLA_OP_BROADCAST)
            x = b;
        else if (b->opcode == CXLA_OP_BROADCAST && a->opcode != CXLA_OP_BROADCAST)
            x = a;
        else
            return false;
        if (x->user_count != 1) return false;
    }
    bool converts = n > 0 && chain[0]->opcode == CXLA_OP_CONVERT;
    if ((!converts && x->shape.type != f->shape.type) || x->operand_count != 2) return false;
    for (int k = 0; k < 2; k++)
        if (x->operands[k]->opcode != CXLA_OP_PARAMETER) return false;
    out->core = x;
    out->out = f->shape.type;
    const cxla_instr *prev = x;
    for (int64_t i = n - 1; i >= 0; i--) {
        cxla_epi_op op;
        if (!cxla_epilogue_step(out, prev, chain[i], false, &op)) return false;
        if (op.vec && op.vec->opcode != CXLA_OP_PARAMETER) return false;
        out->ops[out->count++] = op;
        prev = chain[i];
    }
    return true;
}

static bool f32_matrix(const cxla_shape *s) {
    return s->type == CXLA_F32 && s->rank == 2 && cxla_shape_is_static(s) &&
           cxla_layout_is_default(s);
}

cxla_dot_narrow_form cxla_dot_narrow(const cxla_instr *x) {
    if (x->opcode != CXLA_OP_DOT || x->operand_count != 2) return CXLA_DOT_WIDE;
    const cxla_shape *ls = &x->operands[0]->shape, *rs = &x->operands[1]->shape;
    if (!f32_matrix(&x->shape) || !f32_matrix(ls) || !f32_matrix(rs)) return CXLA_DOT_WIDE;
    int64_t nlb = 0, nrb = 0, nlc = 0, nrc = 0;
    const int64_t *lb = cxla_instr_ints(x, CXLA_ATTR_LHS_BATCH_DIMS, &nlb);
    const int64_t *rb = cxla_instr_ints(x, CXLA_ATTR_RHS_BATCH_DIMS, &nrb);
    const int64_t *lc = cxla_instr_ints(x, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nlc);
    const int64_t *rc = cxla_instr_ints(x, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nrc);
    if ((lb && nlb) || (rb && nrb) || !lc || !rc || nlc != 1 || nrc != 1) return CXLA_DOT_WIDE;
    if (lc[0] < 0 || lc[0] > 1 || rc[0] < 0 || rc[0] > 1) return CXLA_DOT_WIDE;
    /* PACKED_NIBBLE and sparsity belong to the library call. */
    const cxla_attr *pa = cxla_instr_attr(x, CXLA_ATTR_OPERAND_PRECISION);
    if (pa && pa->kind == CXLA_ATTR_KIND_PRECISIONS)
        for (int64_t i = 0; i < pa->v.precisions.count; i++)
            if (pa->v.precisions.items[i] == CXLA_PRECISION_PACKED_NIBBLE) return CXLA_DOT_WIDE;
    if (cxla_instr_attr(x, CXLA_ATTR_SPARSITY)) return CXLA_DOT_WIDE;
    int64_t m = ls->dims[1 - lc[0]], k = ls->dims[lc[0]], n = rs->dims[1 - rc[0]];
    if (m < 16 || k < 1 || n < 1) return CXLA_DOT_WIDE;
    if (lc[0] == 0 && n <= 16) return CXLA_DOT_NARROW_LHS_T;
    if (k <= 16 && n > 16) return CXLA_DOT_NARROW_K;
    if (lc[0] == 1 && rc[0] == 0 && n >= 8 && n <= 16) return CXLA_DOT_NARROW_N;
    return CXLA_DOT_WIDE;
}

/* ---- the pass -------------------------------------------------------------------------- */

/* The chain after |core| in the unfused computation: values with one user each. */
static void grow_chain(const cxla_instr *core, cxla_epilogue *e, const cxla_instr **last) {
    memset(e, 0, sizeof(*e));
    e->core = core;
    e->out = core->shape.type;
    const cxla_instr *cur = core;
    while (cur->user_count == 1 && cur->parent->root != cur) {
        const cxla_instr *x = cur->users[0];
        cxla_epi_op op;
        if (passes_has_control_deps(x) || !cxla_epilogue_step(e, cur, x, true, &op)) break;
        e->ops[e->count++] = op;
        e->out = x->shape.type;
        cur = x;
    }
    *last = cur;
}

static bool candidate(const cxla_instr *in) {
    if (!is_product(in) || !cxla_epilogue_type(in->shape.type) || in->operand_count != 2)
        return false;
    if (cxla_dot_narrow(in) != CXLA_DOT_WIDE) return false; /* the emitter's kernel */
    if (!passes_is_static_array(&in->shape) || passes_has_control_deps(in)) return false;
    for (int k = 0; k < 2; k++)
        if (!passes_is_static_array(&in->operands[k]->shape)) return false;
    return true;
}

/* The fusion operand for the vector of |op|: the vector itself, or a reshape of it to the
 * feature dims only (dropping dims of size 1; the order is kept, so it moves nothing). */
static cxla_status vector_operand(cxla_computation *comp, const cxla_epilogue *e,
                                  const cxla_epi_op *op, cxla_instr **out) {
    int64_t fd[CXLA_MAX_RANK], dims[CXLA_MAX_RANK];
    int64_t nf = cxla_epilogue_feature_dims(e->core, fd);
    cxla_instr *v = (cxla_instr *)op->vec;
    bool same = v->shape.rank == nf;
    for (int64_t i = 0; i < nf; i++) {
        dims[i] = e->core->shape.dims[fd[i]];
        if (same && v->shape.dims[i] != dims[i]) same = false;
    }
    if (same && cxla_layout_is_default(&v->shape)) {
        *out = v;
        return NULL;
    }
    cxla_shape s;
    CXLA_RETURN_IF_ERROR(passes_array_shape(comp->module, v->shape.type, nf, dims, &s));
    return passes_add(comp, CXLA_OP_RESHAPE, "reshape", &s, 1, &v, out);
}

static cxla_status form(cxla_instr *core, const cxla_epilogue *e, cxla_instr *last) {
    cxla_computation *comp = core->parent, *fc;
    cxla_module *m = comp->module;
    CXLA_RETURN_IF_ERROR(passes_new_fused_computation(m, &fc));
    cxla_instr *operands[2 + CXLA_EPI_MAX];
    int64_t n = 0;
    cxla_instr *params[2 + CXLA_EPI_MAX];
    for (int k = 0; k < 2; k++) {
        char base[32];
        snprintf(base, sizeof(base), "param_%d", (int)n);
        CXLA_RETURN_IF_ERROR(passes_add(fc, CXLA_OP_PARAMETER, base, &core->operands[k]->shape, 0,
                                        NULL, &params[n]));
        params[n]->parameter_number = n;
        operands[n] = core->operands[k];
        n++;
    }
    cxla_instr *prev;
    CXLA_RETURN_IF_ERROR(passes_clone_instr(fc, core, params, &prev));
    int64_t fd[CXLA_MAX_RANK];
    int64_t nf = cxla_epilogue_feature_dims(core, fd);
    for (int64_t i = 0; i < e->count; i++) {
        const cxla_epi_op *op = &e->ops[i];
        cxla_instr *bc;
        if (op->kind == CXLA_EPI_CONVERT || op->kind == CXLA_EPI_TANH) {
            cxla_instr *from = prev;
            CXLA_RETURN_IF_ERROR(passes_clone_instr(fc, op->instr, &from, &prev));
            continue;
        }
        if (op->vec) {
            cxla_instr *v;
            CXLA_RETURN_IF_ERROR(vector_operand(comp, e, op, &v));
            char base[32];
            snprintf(base, sizeof(base), "param_%d", (int)n);
            CXLA_RETURN_IF_ERROR(
                passes_add(fc, CXLA_OP_PARAMETER, base, &v->shape, 0, NULL, &params[n]));
            params[n]->parameter_number = n;
            operands[n] = v;
            CXLA_RETURN_IF_ERROR(
                passes_add(fc, CXLA_OP_BROADCAST, "broadcast", &core->shape, 1, &params[n], &bc));
            CXLA_RETURN_IF_ERROR(passes_set_ints(bc, CXLA_ATTR_DIMENSIONS, fd, nf));
            n++;
        } else { /* broadcast of a scalar constant: copied in */
            cxla_instr *c;
            CXLA_RETURN_IF_ERROR(passes_clone_instr(fc, op->bcast->operands[0], NULL, &c));
            CXLA_RETURN_IF_ERROR(passes_clone_instr(fc, op->bcast, &c, &bc));
        }
        cxla_instr *ops[2];
        bool chain_first = op->instr->operands[0] != op->bcast;
        ops[0] = chain_first ? prev : bc;
        ops[1] = chain_first ? bc : prev;
        CXLA_RETURN_IF_ERROR(passes_clone_instr(fc, op->instr, ops, &prev));
    }
    fc->root = prev;
    CXLA_RETURN_IF_ERROR(passes_set_fusion_params(fc, n));
    cxla_instr *f;
    CXLA_RETURN_IF_ERROR(passes_make_fusion(comp, fc, "kOutput", &last->shape, operands, n, &f));
    CXLA_RETURN_IF_ERROR(cxla_instr_replace_all_uses(last, f));
    /* The chain, users first, then the broadcasts nothing else reads, then the product. */
    for (int64_t i = e->count - 1; i >= 0; i--) {
        cxla_instr *x = (cxla_instr *)e->ops[i].instr;
        cxla_instr *b = (cxla_instr *)e->ops[i].bcast;
        CXLA_RETURN_IF_ERROR(cxla_computation_remove_instr(comp, x));
        if (b && b->opcode != CXLA_OP_PARAMETER && b->user_count == 0 && comp->root != b &&
            !passes_has_control_deps(b))
            CXLA_RETURN_IF_ERROR(cxla_computation_remove_instr(comp, b));
    }
    return cxla_computation_remove_instr(comp, core);
}

static cxla_status run_output_fusion(cxla_module *m, bool *changed) {
    *changed = false;
    if (!m->entry) return NULL;
    int64_t count = m->comp_count;
    bool *marks = calloc((size_t)(count ? count : 1), sizeof(bool));
    if (!marks) return PASSES_OOM();
    passes_mark_control(m, m->entry, marks, 0);
    cxla_status s = NULL;
    for (int64_t c = 0; c < count && !s; c++) {
        if (!marks[c]) continue;
        cxla_computation *comp = m->comps[c];
        int64_t n = comp->instr_count;
        cxla_instr **snap = cxla_arena_alloc_array(m->arena, (size_t)(n ? n : 1), sizeof(*snap));
        if (!snap) {
            s = PASSES_OOM();
            break;
        }
        memcpy(snap, comp->instrs, (size_t)n * sizeof(*snap));
        for (int64_t i = 0; i < n && !s; i++) {
            if (!candidate(snap[i])) continue;
            cxla_epilogue e;
            const cxla_instr *last;
            grow_chain(snap[i], &e, &last);
            if (e.count == 0) continue;
            s = form(snap[i], &e, (cxla_instr *)last);
            if (!s) *changed = true;
        }
    }
    free(marks);
    if (s || !*changed) return s;
    cxla_computation **corder;
    int64_t n;
    CXLA_RETURN_IF_ERROR(cxla_module_computation_post_order(m, &corder, &n));
    if (n == m->comp_count) memcpy(m->comps, corder, (size_t)n * sizeof(*corder));
    return NULL;
}

const cxla_pass cxla_pass_output_fusion = {"output-fusion", run_output_fusion};
