/* Convolution canonicalization: a convolution whose input or output is in a layout oneDNN
 * does not run natively becomes
 *   transpose(convolution(transpose(lhs), transpose(rhs)), dim_labels=b01f_01io->b01f)
 * (b, spatial dims in their order, f for the activations; spatial dims, i, o for the
 * kernel), the result transposed back to the dims the convolution had. oneDNN runs
 * NHWC (b01f) and NCHW (bf01) activations with its fast kernels; other orders (a weight
 * gradient's f01b or 01bf, say) fall to its reference implementation or to reorders of
 * every tensor on each run, where one transpose each way is cheaper.
 *
 * Bit for bit: the transposes only move elements, and the sums run over the same
 * elements in the same order (the spatial dims keep their order, and the interpreter and
 * the backend sum by the dims' meaning, not their place in memory). Left alone: dynamic
 * shapes, non-default layouts, control dependencies, and convolutions whose activations
 * are already b01f or bf01 (the kernel's layout does not matter: oneDNN reorders it to
 * its own blocked layout anyway), and batch-grouped convolutions (below). */
#include <string.h>

#include "passes/passes_internal.h"

/* Whether activations with batch |b|, feature |f| and spatial dims |sp| are b01f or bf01. */
static bool native(int64_t b, int64_t f, const int64_t *sp, int64_t n) {
    bool nhwc = b == 0 && f == n + 1, nchw = b == 0 && f == 1;
    for (int64_t i = 0; i < n; i++) {
        nhwc = nhwc && sp[i] == 1 + i;
        nchw = nchw && sp[i] == 2 + i;
    }
    return nhwc || nchw;
}

/* transpose(x) with result dim i = x's dim perm[i]; x itself when perm is the identity. */
static cxla_status transposed(cxla_computation *comp, cxla_instr *x, const int64_t *perm,
                              cxla_instr **out) {
    bool id = true;
    int64_t dims[CXLA_MAX_RANK];
    for (int64_t i = 0; i < x->shape.rank; i++) {
        id = id && perm[i] == i;
        dims[i] = x->shape.dims[perm[i]];
    }
    if (id) {
        *out = x;
        return NULL;
    }
    cxla_shape s;
    CXLA_RETURN_IF_ERROR(passes_array_shape(comp->module, x->shape.type, x->shape.rank, dims, &s));
    CXLA_RETURN_IF_ERROR(passes_add(comp, CXLA_OP_TRANSPOSE, "transpose", &s, 1, &x, out));
    return passes_set_ints(*out, CXLA_ATTR_DIMENSIONS, perm, x->shape.rank);
}

bool cxla_conv_is_weight_gradient(const cxla_instr *conv) {
    if (conv->opcode != CXLA_OP_CONVOLUTION) return false;
    int64_t g = 1, bg = 1;
    cxla_instr_int(conv, CXLA_ATTR_FEATURE_GROUP_COUNT, &g);
    cxla_instr_int(conv, CXLA_ATTR_BATCH_GROUP_COUNT, &bg);
    const cxla_attr *dl = cxla_instr_attr(conv, CXLA_ATTR_DIM_LABELS);
    const cxla_attr *w = cxla_instr_attr(conv, CXLA_ATTR_WINDOW);
    if (g != 1 || bg != 1 || !dl || dl->kind != CXLA_ATTR_KIND_DIM_LABELS || !w ||
        w->kind != CXLA_ATTR_KIND_WINDOW)
        return false;
    const cxla_conv_dims *d = &dl->v.conv;
    int64_t n = d->spatial_count;
    if (n < 1 || w->v.window.rank != n) return false;
    double window = 1, out = 1;
    for (int64_t i = 0; i < n; i++) {
        const cxla_window_dim *wd = &w->v.window.dims[i];
        if (wd->lhs_dilation != 1 || wd->reversal) return false;
        window *= (double)wd->size;
        out *= (double)conv->shape.dims[d->output_spatial[i]];
    }
    return window > out;
}

static cxla_status canonicalize(cxla_instr *conv, bool all, bool *changed) {
    cxla_computation *comp = conv->parent;
    cxla_module *m = comp->module;
    if (conv->operand_count != 2 || passes_has_control_deps(conv)) return NULL;
    cxla_instr *l = conv->operands[0], *r = conv->operands[1];
    const cxla_shape *shapes[3] = {&conv->shape, &l->shape, &r->shape};
    for (int k = 0; k < 3; k++)
        if (!passes_is_static_array(shapes[k]) || !cxla_layout_is_default(shapes[k])) return NULL;
    const cxla_attr *dl = cxla_instr_attr(conv, CXLA_ATTR_DIM_LABELS);
    if (!dl || dl->kind != CXLA_ATTR_KIND_DIM_LABELS) return NULL;
    const cxla_conv_dims *d = &dl->v.conv;
    int64_t n = d->spatial_count;
    if (n < 0 || n + 2 > CXLA_MAX_RANK) return NULL;
    /* A batch-grouped convolution (a weight gradient) runs as oneDNN's backward weights, which
     * reads the lhs's features as its minibatch and its batch as its channels: JAX's f01b is
     * then NHWC, which the transposes to b01f would undo. oneDNN reorders other layouts. */
    int64_t bg = 1;
    cxla_instr_int(conv, CXLA_ATTR_BATCH_GROUP_COUNT, &bg);
    if (!all && (bg > 1 || cxla_conv_is_weight_gradient(conv))) return NULL;
    if (!all && native(d->input_batch, d->input_feature, d->input_spatial, n) &&
        native(d->output_batch, d->output_feature, d->output_spatial, n))
        return NULL;
    bool canonical = d->input_batch == 0 && d->input_feature == n + 1 && d->output_batch == 0 &&
                     d->output_feature == n + 1 && d->kernel_input_feature == n &&
                     d->kernel_output_feature == n + 1;
    for (int64_t i = 0; i < n; i++)
        canonical = canonical && d->input_spatial[i] == 1 + i && d->output_spatial[i] == 1 + i &&
                    d->kernel_spatial[i] == i;
    if (canonical) return NULL;
    int64_t pin[CXLA_MAX_RANK], pk[CXLA_MAX_RANK], pout[CXLA_MAX_RANK], odims[CXLA_MAX_RANK];
    pin[0] = d->input_batch, pin[n + 1] = d->input_feature;
    pk[n] = d->kernel_input_feature, pk[n + 1] = d->kernel_output_feature;
    odims[0] = conv->shape.dims[d->output_batch];
    odims[n + 1] = conv->shape.dims[d->output_feature];
    pout[d->output_batch] = 0, pout[d->output_feature] = n + 1;
    for (int64_t i = 0; i < n; i++) {
        pin[1 + i] = d->input_spatial[i];
        pk[i] = d->kernel_spatial[i];
        odims[1 + i] = conv->shape.dims[d->output_spatial[i]];
        pout[d->output_spatial[i]] = 1 + i;
    }
    cxla_instr *ops[2], *c, *t;
    CXLA_RETURN_IF_ERROR(transposed(comp, l, pin, &ops[0]));
    CXLA_RETURN_IF_ERROR(transposed(comp, r, pk, &ops[1]));
    cxla_shape cs;
    CXLA_RETURN_IF_ERROR(passes_array_shape(m, conv->shape.type, n + 2, odims, &cs));
    CXLA_RETURN_IF_ERROR(passes_clone_instr(comp, conv, ops, &c));
    c->shape = cs;
    int64_t *sp = cxla_arena_alloc_array(m->arena, (size_t)(3 * (n ? n : 1)), sizeof(int64_t));
    if (!sp) return PASSES_OOM();
    cxla_attr a = *dl;
    cxla_conv_dims *cd = &a.v.conv;
    cd->input_spatial = sp, cd->kernel_spatial = sp + n, cd->output_spatial = sp + 2 * n;
    cd->input_batch = cd->output_batch = 0;
    cd->input_feature = cd->output_feature = n + 1;
    cd->kernel_input_feature = n, cd->kernel_output_feature = n + 1;
    for (int64_t i = 0; i < n; i++) {
        cd->input_spatial[i] = cd->output_spatial[i] = 1 + i;
        cd->kernel_spatial[i] = i;
    }
    CXLA_RETURN_IF_ERROR(cxla_instr_set_attr(c, &a));
    CXLA_RETURN_IF_ERROR(transposed(comp, c, pout, &t));
    CXLA_RETURN_IF_ERROR(passes_replace(conv, t));
    *changed = true;
    return NULL;
}

static cxla_status run(cxla_module *m, bool all, bool *changed) {
    *changed = false;
    for (int64_t c = 0; c < m->comp_count; c++) {
        cxla_computation *comp = m->comps[c];
        int64_t n = comp->instr_count;
        cxla_instr **snap = cxla_arena_alloc_array(m->arena, (size_t)(n ? n : 1), sizeof(*snap));
        if (!snap) return PASSES_OOM();
        memcpy(snap, comp->instrs, (size_t)n * sizeof(*snap));
        for (int64_t i = 0; i < n; i++)
            if (snap[i]->opcode == CXLA_OP_CONVOLUTION)
                CXLA_RETURN_IF_ERROR(canonicalize(snap[i], all, changed));
    }
    return NULL;
}

static cxla_status run_conv_canon(cxla_module *m, bool *changed) {
    return run(m, false, changed);
}

static cxla_status run_conv_canon_all(cxla_module *m, bool *changed) {
    return run(m, true, changed);
}

const cxla_pass cxla_pass_conv_canon = {"conv-canon", run_conv_canon};
const cxla_pass cxla_pass_conv_canon_all = {"conv-canon-all", run_conv_canon_all};
