/* Convolutions on oneDNN (onednn.h says which forms): the primitive's descriptors for a
 * convolution's operands, read through their strides (any dim_labels), with the call's state
 * and run shared with dots (onednn.c, onednn_internal.h). */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "cpu/onednn.h"
#include "cpu/onednn_internal.h"
#include "cpu/threadpool.h"
#include "passes/passes.h"

#ifdef CXLA_HAVE_ONEDNN

/* A convolution with batch_group_count = G > 1: the weight gradient of a convolution with G
 * feature groups (JAX's transpose rule for feature_group_count turns it into batch groups), run
 * as oneDNN's backward-weights primitive with G groups. HLO's result element (b, z, o...) is
 * the sum over input features c and window positions y... of
 *   lhs[b + (z / (OZ/G)) * (IB/G), c, o*S + y*D - P] * rhs[c, z, y]
 * (S the window stride, D its rhs dilation, P the low padding), and oneDNN's diff_weights
 * element (grp, oc, ic, k...) the sum over its minibatch n and diff_dst positions y... of
 *   src[n, grp * IC/G + ic, y*stride + k*(dilation+1) - pad_l] * diff_dst[n, grp * OC/G + oc, y]
 * so: src is the lhs read as [features, batch, spatial], diff_dst the rhs read as [input
 * features, output features, spatial], diff_weights the result read as [G, OZ/G, out batch,
 * spatial], all through strides (any dim_labels); oneDNN's stride is D, its dilation S - 1, its
 * padding P on the left and on the right what makes the shapes agree. Elements of the lhs that
 * no window reaches (a negative padding, or the rest after the last window) are left out of
 * src's box. G = 1 serves a one-group convolution with a weight gradient's shape
 * (cxla_conv_is_weight_gradient), its weights without the group dim. Not taken (the loops):
 * lhs dilation, window reversal, an epilogue (a fusion runs the product alone, then the
 * epilogue's loops). With padding, the call keeps the loops as a fallback for runs whose rhs
 * holds inf or NaN (cpu_dnn_bwd_weights_run). */
static cxla_status bwd_weights_prepare(const cxla_instr *instr, const cpu_post_ops *po,
                                       dnn_state *st, int64_t bg, bool *handled) {
    const cxla_shape *ls = &instr->operands[0]->shape, *rs = &instr->operands[1]->shape;
    const cxla_shape *os = &instr->shape;
    const cxla_conv_dims *d = &cxla_instr_attr(instr, CXLA_ATTR_DIM_LABELS)->v.conv;
    const cxla_attr *w = cxla_instr_attr(instr, CXLA_ATTR_WINDOW);
    int64_t n = d->spatial_count, g = 1;
    cxla_instr_int(instr, CXLA_ATTR_FEATURE_GROUP_COUNT, &g);
    if (po || st->sub || g != 1) return NULL;
    int64_t IB = ls->dims[d->input_batch], OZ = rs->dims[d->kernel_output_feature];
    if (IB % bg != 0 || OZ % bg != 0) return NULL;
    int64_t lstr[CXLA_MAX_RANK], rstr[CXLA_MAX_RANK], ostr[CXLA_MAX_RANK];
    cpu_dnn_row_major_strides(ls, lstr);
    cpu_dnn_row_major_strides(rs, rstr);
    cpu_dnn_row_major_strides(os, ostr);
    int64_t ns = n > 0 ? n : 1; /* no spatial dims: one of size 1 */
    int gw = bg > 1 ? 1 : 0;    /* the weights' group dim (none for one group) */
    int nd = (int)ns + 2, kd = nd + gw;
    dnnl_dims_t s_d, s_s, dd_d, dd_s, w_d, w_s, strides, dilates, pad_l, pad_r;
    s_d[0] = ls->dims[d->input_feature], s_s[0] = lstr[d->input_feature];
    s_d[1] = IB, s_s[1] = lstr[d->input_batch];
    dd_d[0] = rs->dims[d->kernel_input_feature], dd_s[0] = rstr[d->kernel_input_feature];
    dd_d[1] = OZ, dd_s[1] = rstr[d->kernel_output_feature];
    w_d[0] = bg, w_s[0] = (OZ / bg) * ostr[d->output_feature];
    w_d[gw] = OZ / bg, w_s[gw] = ostr[d->output_feature];
    w_d[gw + 1] = os->dims[d->output_batch], w_s[gw + 1] = ostr[d->output_batch];
    size_t skip = 0; /* lhs elements before src's box */
    for (int64_t i = 0; i < ns; i++) {
        if (n == 0) {
            s_d[2] = dd_d[2] = w_d[gw + 2] = 1;
            s_s[2] = dd_s[2] = w_s[gw + 2] = 1;
            strides[0] = 1, dilates[0] = 0, pad_l[0] = pad_r[0] = 0;
            break;
        }
        const cxla_window_dim *wd = &w->v.window.dims[i];
        if (wd->lhs_dilation != 1 || wd->reversal) return NULL;
        int64_t L = ls->dims[d->input_spatial[i]], W = rs->dims[d->kernel_spatial[i]];
        int64_t O = os->dims[d->output_spatial[i]], S = wd->stride, D = wd->rhs_dilation;
        if (W != wd->size || S < 1 || D < 1) return NULL;
        int64_t pl = wd->pad_low, pr = (W - 1) * D + (O - 1) * S + 1 - L - pl;
        int64_t lo = 0;
        if (pl < 0) lo = -pl, pl = 0;
        if (pr < 0) L += pr, pr = 0;
        L -= lo;
        if (L < 1) return NULL;
        skip += (size_t)(lo * lstr[d->input_spatial[i]]);
        s_d[2 + i] = L, s_s[2 + i] = lstr[d->input_spatial[i]];
        dd_d[2 + i] = W, dd_s[2 + i] = rstr[d->kernel_spatial[i]];
        w_d[gw + 2 + i] = O, w_s[gw + 2 + i] = ostr[d->output_spatial[i]];
        strides[i] = D, dilates[i] = S - 1, pad_l[i] = pl, pad_r[i] = pr;
    }
    dnnl_data_type_t it = cpu_dnn_dt_of(ls->type), kt = cpu_dnn_dt_of(rs->type);
    dnnl_data_type_t ot = cpu_dnn_dt_of(os->type);
    tensor *src = &st->t[0], *ddst = &st->t[1], *dw = &st->t[2];
    *src = (tensor){
        .used = true, .arg = DNNL_ARG_SRC, .io = 0, .off = skip * cxla_type_storage(ls->type)};
    *ddst = (tensor){.used = true, .arg = DNNL_ARG_DIFF_DST, .io = 1};
    *dw = (tensor){.used = true, .arg = DNNL_ARG_DIFF_WEIGHTS, .io = -1};
    st->split_rows = 0;
    st->macs = (double)cpu_linalg_elements(os) * (double)cpu_linalg_elements(rs) / (double)OZ;
    st->bwd_weights = true;
    dnnl_status_t ds = dnnl_memory_desc_init_by_strides(&src->user, nd, s_d, it, s_s);
    if (ds == dnnl_success) ds = dnnl_memory_desc_init_by_strides(&ddst->user, nd, dd_d, kt, dd_s);
    if (ds == dnnl_success) ds = dnnl_memory_desc_init_by_strides(&dw->user, kd, w_d, ot, w_s);
    if (ds != dnnl_success) return NULL;
    dnnl_primitive_attr_t attr = NULL;
    if (cpu_dnn_make_attr(NULL, st, nd, 1, OZ, &attr) != dnnl_success) {
        if (attr) dnnl_primitive_attr_destroy(attr);
        return NULL;
    }
    /* First the caller's layouts for src and diff_dst, any for the (small) weights; when only
     * the reference implementation takes that, any layout for all three. */
    dnnl_primitive_desc_t pd = NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        dnnl_memory_desc_t s_md = src->user, d_md = ddst->user, w_md, fw_md;
        dnnl_memory_desc_init_by_tag(&w_md, kd, w_d, ot, dnnl_format_tag_any);
        dnnl_memory_desc_init_by_tag(&fw_md, kd, w_d, it, dnnl_format_tag_any);
        if (attempt == 1) {
            dnnl_memory_desc_init_by_tag(&s_md, nd, s_d, it, dnnl_format_tag_any);
            dnnl_memory_desc_init_by_tag(&d_md, nd, dd_d, kt, dnnl_format_tag_any);
        }
        /* Backward weights needs the forward primitive's descriptor as a hint. */
        dnnl_convolution_desc_t fwd, desc;
        dnnl_primitive_desc_t hint = NULL, next = NULL;
        ds = dnnl_dilated_convolution_forward_desc_init(
            &fwd, dnnl_forward_training, dnnl_convolution_direct, &s_md, &fw_md, NULL, &d_md,
            strides, dilates, pad_l, pad_r);
        if (ds == dnnl_success)
            ds = dnnl_primitive_desc_create(&hint, &fwd, attr, cpu_dnn_engine(), NULL);
        if (ds == dnnl_success)
            ds = dnnl_dilated_convolution_backward_weights_desc_init(
                &desc, dnnl_convolution_direct, &s_md, &w_md, NULL, &d_md, strides, dilates, pad_l,
                pad_r);
        if (ds == dnnl_success)
            ds = dnnl_primitive_desc_create(&next, &desc, attr, cpu_dnn_engine(), hint);
        if (hint) dnnl_primitive_desc_destroy(hint);
        if (ds != dnnl_success) continue; /* not in this form; perhaps in the next */
        if (!pd || !cpu_dnn_is_ref(next)) {
            if (pd) dnnl_primitive_desc_destroy(pd);
            pd = next;
        } else {
            dnnl_primitive_desc_destroy(next);
        }
        if (!cpu_dnn_is_ref(pd)) break;
    }
    dnnl_primitive_attr_destroy(attr);
    if (!pd) return NULL; /* unimplemented: the loops */
    static const dnnl_query_t queries[TENSORS] = {dnnl_query_src_md, dnnl_query_diff_dst_md,
                                                  dnnl_query_diff_weights_md};
    const char *what = "convolution creation";
    ds = cpu_dnn_finish(st, pd, queries, &what);
    if (ds != dnnl_success) return cpu_dnn_error(instr, what, ds);
    *handled = true;
    bool padded = false;
    for (int64_t i = 0; i < n; i++) padded = padded || pad_l[i] > 0 || pad_r[i] > 0;
    if (padded) CXLA_RETURN_IF_ERROR(cpu_linalg_loops_prepare(instr, &st->fallback));
    return NULL;
}

/* Whether elements [begin, end) of a scan_job's array hold inf or NaN (a cpu_kernel_fn over
 * in[0] = the scan_job; sets its flag). */
typedef struct scan_job {
    const void *p;
    int bytes;     /* per element: 4 (f32) or 2 (bf16, f16) */
    uint32_t mask; /* the exponent's bits */
    atomic_int found;
} scan_job;

static void scan_rows(void *const *out, const void *const *in, int64_t begin, int64_t end) {
    (void)out;
    scan_job *j = (scan_job *)in[0];
    bool any = false;
    if (j->bytes == 4) {
        const uint32_t *p = j->p;
        for (int64_t i = begin; i < end; i++) any |= (p[i] & j->mask) == j->mask;
    } else {
        const uint16_t *p = j->p;
        uint16_t m = (uint16_t)j->mask;
        for (int64_t i = begin; i < end; i++) any |= (p[i] & m) == m;
    }
    if (any) atomic_store(&j->found, 1);
}

/* A backward-weights call: oneDNN's primitive, unless the call has padding and its rhs holds
 * inf or NaN (the interpreter skips the padding's products, oneDNN may compute 0 * inf):
 * then the loops, exact. */
cxla_status cpu_dnn_bwd_weights_run(void *state, void *const *out, const void *const *in) {
    const dnn_state *st = state;
    if (st->fallback.fn) {
        const cxla_shape *rs = &st->instr->operands[1]->shape;
        scan_job job = {.p = in[1], .bytes = (int)cxla_type_storage(rs->type)};
        job.mask = rs->type == CXLA_F32 ? 0x7f800000u : rs->type == CXLA_BF16 ? 0x7f80u : 0x7c00u;
        atomic_init(&job.found, 0);
        const void *jin[1] = {&job};
        int64_t count = cpu_linalg_elements(rs);
        cpu_kernel_info info = {.range = count, .cost = (double)count * job.bytes};
        cpu_pool_run_kernel(st->pool, scan_rows, &info, NULL, jin, NULL);
        if (atomic_load(&job.found)) return st->fallback.fn(st->fallback.state, out, in);
    }
    return cpu_dnn_run(state, out, in);
}

/* convolution: forward, or backward-data for lhs dilation (see conv_prepare). */
cxla_status cpu_dnn_conv_prepare(const cxla_instr *instr, const cpu_post_ops *po, dnn_state *st,
                                 bool *handled) {
    const cxla_shape *ls = &instr->operands[0]->shape, *rs = &instr->operands[1]->shape;
    const cxla_shape *os = &instr->shape;
    const cxla_attr *dl = cxla_instr_attr(instr, CXLA_ATTR_DIM_LABELS);
    const cxla_attr *w = cxla_instr_attr(instr, CXLA_ATTR_WINDOW);
    if (!dl || dl->kind != CXLA_ATTR_KIND_DIM_LABELS) return NULL;
    const cxla_conv_dims *d = &dl->v.conv;
    int64_t n = d->spatial_count;
    if (n > 3 || (n > 0 && (!w || w->kind != CXLA_ATTR_KIND_WINDOW || w->v.window.rank != n)))
        return NULL;
    int64_t g = 1, bg = 1;
    cxla_instr_int(instr, CXLA_ATTR_FEATURE_GROUP_COUNT, &g);
    cxla_instr_int(instr, CXLA_ATTR_BATCH_GROUP_COUNT, &bg);
    /* A weight gradient in a fusion: not whole (backward weights takes no post-ops), so the
     * product runs alone as backward weights and the epilogue's loops after it over the
     * (small) result (cpu_linalg_epilogue_prepare). */
    if (po && (bg > 1 || (g == 1 && cxla_conv_is_weight_gradient(instr)))) return NULL;
    if (bg > 1) return bwd_weights_prepare(instr, po, st, bg, handled);
    if (g == 1 && cxla_conv_is_weight_gradient(instr)) {
        CXLA_RETURN_IF_ERROR(bwd_weights_prepare(instr, po, st, 1, handled));
        if (*handled) return NULL;
        memset(st->t, 0, sizeof(st->t));
        st->bwd_weights = false;
    }
    if (bg != 1 || g < 1) return NULL;
    bool lhs_dilated = false, negative_pad = false;
    for (int64_t i = 0; i < n; i++) {
        const cxla_window_dim *wd = &w->v.window.dims[i];
        if (wd->pad_low < 0 || wd->pad_high < 0) negative_pad = true;
        if (wd->lhs_dilation > 1) lhs_dilated = true;
    }
    if (negative_pad && !lhs_dilated) return NULL;
    int64_t crop = 0; /* elements from the result's start to the box the primitive writes */
    bool cropped = false;
    int64_t lstr[CXLA_MAX_RANK], rstr[CXLA_MAX_RANK], ostr[CXLA_MAX_RANK];
    cpu_dnn_row_major_strides(ls, lstr);
    cpu_dnn_row_major_strides(rs, rstr);
    cpu_dnn_row_major_strides(os, ostr);
    int64_t IZ = ls->dims[d->input_feature], KZ = rs->dims[d->kernel_input_feature];
    int64_t OZ = rs->dims[d->kernel_output_feature];
    int64_t ns = n > 0 ? n : 1; /* no spatial dims: one of size 1 */
    int nd = (int)ns + 2;
    dnnl_dims_t in_d, in_s, out_d, out_s, k_d, k_s, strides, dilates, pad_l, pad_r;
    in_d[0] = ls->dims[d->input_batch], in_s[0] = lstr[d->input_batch];
    in_d[1] = IZ, in_s[1] = lstr[d->input_feature];
    out_d[0] = os->dims[d->output_batch], out_s[0] = ostr[d->output_batch];
    out_d[1] = OZ, out_s[1] = ostr[d->output_feature];
    /* Weights: [G,] out channels (per group), in channels, spatial. For the backward-data
     * form the roles turn around: its "output" channels are the HLO input's (KZ per group)
     * and its "input" channels the HLO output's (OZ / G per group). */
    int kw = 0;
    if (g > 1) {
        k_d[kw] = g, k_s[kw++] = (OZ / g) * rstr[d->kernel_output_feature];
    }
    if (!lhs_dilated) {
        k_d[kw] = OZ / g, k_s[kw++] = rstr[d->kernel_output_feature];
        k_d[kw] = KZ, k_s[kw++] = rstr[d->kernel_input_feature];
    } else {
        k_d[kw] = KZ, k_s[kw++] = rstr[d->kernel_input_feature];
        k_d[kw] = OZ / g, k_s[kw++] = rstr[d->kernel_output_feature];
    }
    tensor *kt = &st->t[1];
    *kt = (tensor){.used = true,
                   .arg = DNNL_ARG_WEIGHTS,
                   .io = po ? (int)po->core_in[1] : 1,
                   .rank = rs->rank};
    for (int64_t i = 0; i < rs->rank; i++) kt->dims[i] = rs->dims[i];
    for (int64_t i = 0; i < ns; i++) {
        if (n == 0) {
            in_d[2] = out_d[2] = k_d[kw] = 1;
            in_s[2] = out_s[2] = k_s[kw] = 1;
            strides[0] = 1, dilates[0] = 0, pad_l[0] = pad_r[0] = 0;
            break;
        }
        const cxla_window_dim *wd = &w->v.window.dims[i];
        in_d[2 + i] = ls->dims[d->input_spatial[i]], in_s[2 + i] = lstr[d->input_spatial[i]];
        out_d[2 + i] = os->dims[d->output_spatial[i]], out_s[2 + i] = ostr[d->output_spatial[i]];
        k_d[kw + i] = rs->dims[d->kernel_spatial[i]], k_s[kw + i] = rstr[d->kernel_spatial[i]];
        dilates[i] = wd->rhs_dilation - 1;
        if (!lhs_dilated) {
            strides[i] = wd->stride;
            pad_l[i] = wd->pad_low;
            pad_r[i] = wd->pad_high;
            kt->flip_dim[d->kernel_spatial[i]] = wd->reversal;
        } else {
            /* A transposed convolution: the HLO input is the gradient of a strided
             * convolution's output (its stride the lhs dilation), read with the kernel
             * reversed and the padding (K-1)*D - pad on each side. */
            if (wd->stride != 1) return NULL;
            int64_t ext = (wd->size - 1) * wd->rhs_dilation;
            strides[i] = wd->lhs_dilation;
            pad_l[i] = ext - wd->pad_low;
            pad_r[i] = ext - wd->pad_high;
            /* Padding past the window's reach (pad_low or pad_high > ext, as JAX's
             * conv_transpose gives for a kernel smaller than its stride, or the gradient of a
             * strided convolution whose window left input elements out) would be negative
             * here: the first -pad_l (last -pad_r) outputs read only padding and are 0.
             * At the end, fewer than a stride of them is what oneDNN's own shape rule (its
             * division rounds down) leaves out of every window and sets to 0: padding 0
             * there. Otherwise the primitive writes the box between them, the rest is
             * zeroed. */
            if (pad_r[i] < 0 && -pad_r[i] < wd->lhs_dilation) pad_r[i] = 0;
            int64_t lo = pad_l[i] < 0 ? -pad_l[i] : 0, hi = pad_r[i] < 0 ? -pad_r[i] : 0;
            if (lo + hi >= out_d[2 + i]) return NULL; /* all zeros: the loops */
            out_d[2 + i] -= lo + hi;
            crop += lo * out_s[2 + i];
            cropped = cropped || lo + hi > 0;
            pad_l[i] += lo;
            pad_r[i] += hi;
            kt->flip_dim[d->kernel_spatial[i]] = !wd->reversal;
        }
        if (kt->flip_dim[d->kernel_spatial[i]]) kt->flip = true;
    }
    st->split_rows = cropped ? 0 : in_d[0]; /* parts would each zero the whole result */
    st->split_conv = true;
    st->macs = (double)cpu_linalg_elements(os) * (double)cpu_linalg_elements(rs) /
               (double)(OZ > 0 ? OZ : 1);
    if (st->sub) { /* a part: its images; the weights come flipped and reordered */
        if (st->sub->row1 > in_d[0]) return NULL;
        in_d[0] = out_d[0] = st->sub->row1 - st->sub->row0;
        kt->flip = false;
        memset(kt->flip_dim, 0, sizeof(kt->flip_dim));
    }
    if (kt->flip) {
        kt->es = cxla_type_storage(rs->type);
        kt->bytes = (size_t)cpu_linalg_elements(rs) * kt->es;
    }
    int kd = kw + (int)ns;
    dnnl_data_type_t it = cpu_dnn_dt_of(ls->type), wt = cpu_dnn_dt_of(rs->type),
                     ot = cpu_dnn_dst_type(po, os);
    tensor *src = &st->t[0], *dst = &st->t[2];
    *src = (tensor){.used = true,
                    .arg = lhs_dilated ? DNNL_ARG_DIFF_DST : DNNL_ARG_SRC,
                    .io = po ? (int)po->core_in[0] : 0};
    *dst = (tensor){.used = true, .arg = lhs_dilated ? DNNL_ARG_DIFF_SRC : DNNL_ARG_DST, .io = -1};
    if (st->sub) {
        src->off = (size_t)(st->sub->row0 * in_s[0]) * cxla_type_storage(ls->type);
        dst->off = (size_t)(st->sub->row0 * out_s[0]) * dnnl_data_type_size(ot);
    }
    if (cropped) {
        dst->off += (size_t)crop * dnnl_data_type_size(ot);
        st->zero_bytes = (size_t)cpu_linalg_elements(os) * dnnl_data_type_size(ot);
    }
    /* Post-ops only on the forward primitive (backward data has neither bias nor them). */
    if (po && lhs_dilated) return NULL;
    if (!cpu_dnn_bias_tensor(po, OZ, 1, &st->t[BIAS])) return NULL;
    dnnl_status_t ds = dnnl_memory_desc_init_by_strides(&src->user, nd, in_d, it, in_s);
    if (ds == dnnl_success) ds = dnnl_memory_desc_init_by_strides(&kt->user, kd, k_d, wt, k_s);
    if (ds == dnnl_success) ds = dnnl_memory_desc_init_by_strides(&dst->user, nd, out_d, ot, out_s);
    if (ds != dnnl_success) return NULL;
    /* First the caller's layouts for the activations and any for the weights (a reorder of
     * the small kernel per run); when only the reference implementation takes that, any
     * layout for all three (reorders of the activations too). */
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_attr_t attr = NULL;
    if (cpu_dnn_make_attr(po, st, nd, 1, OZ, &attr) != dnnl_success && attr) {
        dnnl_primitive_attr_destroy(attr);
        attr = NULL;
    }
    for (int attempt = 0; attempt < (st->sub ? 1 : 2) && attr; attempt++) {
        dnnl_memory_desc_t s_md = src->user, k_md, d_md = dst->user;
        if (st->sub)
            k_md = kt->user = st->sub->wmd;
        else
            dnnl_memory_desc_init_by_tag(&k_md, kd, k_d, wt, dnnl_format_tag_any);
        if (attempt == 1) {
            dnnl_memory_desc_init_by_tag(&s_md, nd, in_d, it, dnnl_format_tag_any);
            dnnl_memory_desc_init_by_tag(&d_md, nd, out_d, ot, dnnl_format_tag_any);
        }
        dnnl_convolution_desc_t desc;
        ds = lhs_dilated
                 ? dnnl_dilated_convolution_backward_data_desc_init(&desc, dnnl_convolution_direct,
                                                                    &d_md, &k_md, &s_md, strides,
                                                                    dilates, pad_l, pad_r)
                 : dnnl_dilated_convolution_forward_desc_init(
                       &desc, dnnl_forward_inference, dnnl_convolution_direct, &s_md, &k_md,
                       st->t[BIAS].used ? &st->t[BIAS].user : NULL, &d_md, strides, dilates, pad_l,
                       pad_r);
        dnnl_primitive_desc_t next = NULL;
        if (ds == dnnl_success) {
            /* Backward data needs the forward primitive's descriptor as a hint. */
            dnnl_primitive_desc_t hint = NULL;
            if (lhs_dilated) {
                dnnl_convolution_desc_t fwd;
                ds = dnnl_dilated_convolution_forward_desc_init(
                    &fwd, dnnl_forward_training, dnnl_convolution_direct, &d_md, &k_md, NULL, &s_md,
                    strides, dilates, pad_l, pad_r);
                if (ds == dnnl_success)
                    ds = dnnl_primitive_desc_create(&hint, &fwd, attr, cpu_dnn_engine(), NULL);
            }
            if (ds == dnnl_success)
                ds = dnnl_primitive_desc_create(&next, &desc, attr, cpu_dnn_engine(), hint);
            if (hint) dnnl_primitive_desc_destroy(hint);
        }
        if (ds != dnnl_success) continue; /* not in this form; perhaps in the next */
        if (!pd || !cpu_dnn_is_ref(next)) {
            if (pd) dnnl_primitive_desc_destroy(pd);
            pd = next;
        } else {
            dnnl_primitive_desc_destroy(next);
        }
        if (!cpu_dnn_is_ref(pd)) break;
    }
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (pd && st->sub && cpu_dnn_is_ref(pd)) { /* a part must be as fast as the whole */
        dnnl_primitive_desc_destroy(pd);
        pd = NULL;
    }
    if (!pd) return NULL; /* unimplemented or not expressible: the loops */
    static const dnnl_query_t fwd_q[TENSORS] = {dnnl_query_src_md, dnnl_query_weights_md,
                                                dnnl_query_dst_md};
    static const dnnl_query_t bwd_q[TENSORS] = {dnnl_query_diff_dst_md, dnnl_query_weights_md,
                                                dnnl_query_diff_src_md};
    const char *what = "convolution creation";
    ds = cpu_dnn_finish(st, pd, lhs_dilated ? bwd_q : fwd_q, &what);
    if (ds != dnnl_success) return cpu_dnn_error(instr, what, ds);
    *handled = true;
    return NULL;
}

#else
typedef int cpu_onednn_conv_unused; /* ISO C: no empty file */
#endif /* CXLA_HAVE_ONEDNN */
