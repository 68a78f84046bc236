/* `--blas onednn` for ahead-of-time output (aot_internal.h): a dot or convolution of f32,
 * bf16 or f16 arrays becomes a call of oneDNN's C API (dnnl.h, the 2.x interface that
 * Debian's libdnnl-dev ships), with the exact loop kernel kept beside it as the fallback.
 *
 * cxla computes the primitive's shape here, at compile time, as the JIT's onednn.c does:
 * a dot is a matmul over [batch..., M, K] x [batch..., K, N] whose memory descriptors carry
 * the operands' row-major strides (a transposed operand is a stride, not a copy); a
 * convolution is a forward convolution whose activations keep their strides (any
 * dim_labels) and whose weights oneDNN may reorder into the layout it likes. Only what
 * needs no copy of the activations is a call: dimension numbers that merge into strides,
 * no lhs dilation, no negative padding, no window reversal, batch_group_count 1, 1 to 3
 * spatial dims. The rest stays the exact loops (no call is emitted at all).
 *
 * The generated NAME.c holds one constant descriptor per call and one helper,
 * NAME_dnn, that creates the engine, the primitive (f32 math strict: never bf16 or tf32,
 * as XLA's CPU backend), the reorder of the weights, runs them and destroys them again,
 * on every NAME_run: no state outlives a run, so the library stays free of globals and
 * thread-safe, at the cost of creating the primitive each time (docs/aot.md measures it).
 * When oneDNN answers "unimplemented" (a type this CPU's oneDNN lacks), the run takes the
 * exact loops instead; any other oneDNN failure is NAME_ERROR_ONEDNN naming the
 * instruction. The results differ from the interpreter's within the bound that
 * docs/semantics.md gives for the cpu backend's oneDNN calls. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cpu/aot_internal.h"

/* The largest rank oneDNN takes (DNNL_MAX_NDIMS of dnnl_types.h). */
enum { DNN_MAX = 12 };

typedef struct dnn_desc {
    bool conv;
    int nd, kd; /* dims of the activations, of the weights */
    int64_t sd[DNN_MAX], ss[DNN_MAX], wd[DNN_MAX], ws[DNN_MAX], dd[DNN_MAX], ds[DNN_MAX];
    int64_t strides[DNN_MAX], dilates[DNN_MAX], pad_l[DNN_MAX], pad_r[DNN_MAX];
    int nsp; /* spatial dims of a convolution */
} dnn_desc;

static const char *dt_name(cxla_type t) {
    switch (t) {
    case CXLA_F32: return "dnnl_f32";
    case CXLA_BF16: return "dnnl_bf16";
    case CXLA_F16: return "dnnl_f16";
    default: return NULL;
    }
}

static void row_major_strides(const cxla_shape *s, int64_t *strides) {
    int64_t st = 1;
    for (int64_t d = s->rank - 1; d >= 0; d--) {
        strides[d] = st;
        st *= s->dims[d];
    }
}

/* A group of dims that the matmul sees as one (M, N or K): their sizes multiplied, with
 * one stride, when each stride is the next one's times its size (dims of size 1 do not
 * matter). False when they cannot be merged without a copy. */
typedef struct group {
    int64_t size, stride;
} group;

static bool merge(int64_t n, const int64_t *which, const cxla_shape *s, const int64_t *strides,
                  group *g) {
    g->size = 1;
    g->stride = 0; /* none yet */
    for (int64_t i = n - 1; i >= 0; i--) {
        int64_t d = which[i];
        if (s->dims[d] == 1) continue;
        if (g->stride == 0)
            g->stride = strides[d];
        else if (strides[d] != g->stride * g->size)
            return false;
        g->size *= s->dims[d];
    }
    return true;
}

/* A [rows, cols] matrix with a dim of size 1 gets the stride that keeps it plainly row- or
 * column-major. */
static void fix_unit(group *rows, group *cols) {
    if (rows->stride == 0) rows->stride = cols->stride == 1 ? (cols->size ? cols->size : 1) : 1;
    if (cols->stride == 0) cols->stride = rows->stride == 1 ? (rows->size ? rows->size : 1) : 1;
    if (rows->size == 1 && cols->stride == 1) rows->stride = cols->size;
    if (cols->size == 1 && rows->stride == 1) cols->stride = rows->size;
}

static bool dot_desc(const cxla_instr *in, dnn_desc *o) {
    const cxla_shape *ls = &in->operands[0]->shape, *rs = &in->operands[1]->shape;
    const cxla_shape *os = &in->shape;
    int64_t nlb = 0, nrb = 0, nlc = 0, nrc = 0;
    const int64_t *lb = cxla_instr_ints(in, CXLA_ATTR_LHS_BATCH_DIMS, &nlb);
    const int64_t *rb = cxla_instr_ints(in, CXLA_ATTR_RHS_BATCH_DIMS, &nrb);
    const int64_t *lc = cxla_instr_ints(in, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nlc);
    const int64_t *rc = cxla_instr_ints(in, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nrc);
    if (!lb) nlb = 0;
    if (!rb) nrb = 0;
    if (!lc) nlc = 0;
    if (!rc) nrc = 0;
    if (nlb != nrb || nlc != nrc || nlb + 2 > DNN_MAX) return false;
    int64_t lstr[CXLA_MAX_RANK], rstr[CXLA_MAX_RANK], ostr[CXLA_MAX_RANK];
    row_major_strides(ls, lstr);
    row_major_strides(rs, rstr);
    row_major_strides(os, ostr);
    bool lused[CXLA_MAX_RANK] = {false}, rused[CXLA_MAX_RANK] = {false};
    for (int64_t i = 0; i < nlb; i++) lused[lb[i]] = rused[rb[i]] = true;
    for (int64_t i = 0; i < nlc; i++) lused[lc[i]] = rused[rc[i]] = true;
    int64_t lf[CXLA_MAX_RANK], rf[CXLA_MAX_RANK], nlf = 0, nrf = 0;
    for (int64_t d = 0; d < ls->rank; d++)
        if (!lused[d]) lf[nlf++] = d;
    for (int64_t d = 0; d < rs->rank; d++)
        if (!rused[d]) rf[nrf++] = d;
    int64_t om[CXLA_MAX_RANK], on[CXLA_MAX_RANK];
    for (int64_t i = 0; i < nlf; i++) om[i] = nlb + i;
    for (int64_t i = 0; i < nrf; i++) on[i] = nlb + nlf + i;
    group lm, lk, rk, rn, dm, dn;
    if (!merge(nlf, lf, ls, lstr, &lm) || !merge(nlc, lc, ls, lstr, &lk) ||
        !merge(nlc, rc, rs, rstr, &rk) || !merge(nrf, rf, rs, rstr, &rn) ||
        !merge(nlf, om, os, ostr, &dm) || !merge(nrf, on, os, ostr, &dn))
        return false;
    fix_unit(&lm, &lk);
    fix_unit(&rk, &rn);
    fix_unit(&dm, &dn);
    int nd = (int)nlb + 2;
    o->conv = false;
    o->nd = o->kd = nd;
    for (int64_t i = 0; i < nlb; i++) {
        o->sd[i] = o->wd[i] = o->dd[i] = ls->dims[lb[i]];
        o->ss[i] = lstr[lb[i]];
        o->ws[i] = rstr[rb[i]];
        o->ds[i] = ostr[i];
    }
    o->sd[nd - 2] = lm.size, o->sd[nd - 1] = lk.size;
    o->ss[nd - 2] = lm.stride, o->ss[nd - 1] = lk.stride;
    o->wd[nd - 2] = rk.size, o->wd[nd - 1] = rn.size;
    o->ws[nd - 2] = rk.stride, o->ws[nd - 1] = rn.stride;
    o->dd[nd - 2] = dm.size, o->dd[nd - 1] = dn.size;
    o->ds[nd - 2] = dm.stride, o->ds[nd - 1] = dn.stride;
    return true;
}

static bool conv_desc(const cxla_instr *in, dnn_desc *o) {
    const cxla_shape *ls = &in->operands[0]->shape, *rs = &in->operands[1]->shape;
    const cxla_shape *os = &in->shape;
    const cxla_attr *dl = cxla_instr_attr(in, CXLA_ATTR_DIM_LABELS);
    const cxla_attr *w = cxla_instr_attr(in, CXLA_ATTR_WINDOW);
    if (!dl || dl->kind != CXLA_ATTR_KIND_DIM_LABELS) return false;
    const cxla_conv_dims *d = &dl->v.conv;
    int64_t n = d->spatial_count;
    if (n < 1 || n > 3 || !w || w->kind != CXLA_ATTR_KIND_WINDOW || w->v.window.rank != n)
        return false;
    int64_t g = 1, bg = 1;
    cxla_instr_int(in, CXLA_ATTR_FEATURE_GROUP_COUNT, &g);
    cxla_instr_int(in, CXLA_ATTR_BATCH_GROUP_COUNT, &bg);
    if (bg != 1 || g < 1) return false;
    for (int64_t i = 0; i < n; i++) {
        const cxla_window_dim *wd = &w->v.window.dims[i];
        if (wd->pad_low < 0 || wd->pad_high < 0 || wd->lhs_dilation > 1 || wd->reversal ||
            wd->stride < 1 || wd->rhs_dilation < 1)
            return false;
    }
    int64_t lstr[CXLA_MAX_RANK], rstr[CXLA_MAX_RANK], ostr[CXLA_MAX_RANK];
    row_major_strides(ls, lstr);
    row_major_strides(rs, rstr);
    row_major_strides(os, ostr);
    int64_t IZ = ls->dims[d->input_feature], KZ = rs->dims[d->kernel_input_feature];
    int64_t OZ = rs->dims[d->kernel_output_feature];
    if (OZ % g != 0) return false;
    o->conv = true;
    o->nsp = (int)n;
    o->nd = (int)n + 2;
    o->sd[0] = ls->dims[d->input_batch], o->ss[0] = lstr[d->input_batch];
    o->sd[1] = IZ, o->ss[1] = lstr[d->input_feature];
    o->dd[0] = os->dims[d->output_batch], o->ds[0] = ostr[d->output_batch];
    o->dd[1] = OZ, o->ds[1] = ostr[d->output_feature];
    /* Weights: [G,] output channels per group, input channels, spatial. */
    int kw = 0;
    if (g > 1) o->wd[kw] = g, o->ws[kw++] = (OZ / g) * rstr[d->kernel_output_feature];
    o->wd[kw] = OZ / g, o->ws[kw++] = rstr[d->kernel_output_feature];
    o->wd[kw] = KZ, o->ws[kw++] = rstr[d->kernel_input_feature];
    for (int64_t i = 0; i < n; i++) {
        const cxla_window_dim *wd = &w->v.window.dims[i];
        o->sd[2 + i] = ls->dims[d->input_spatial[i]], o->ss[2 + i] = lstr[d->input_spatial[i]];
        o->dd[2 + i] = os->dims[d->output_spatial[i]], o->ds[2 + i] = ostr[d->output_spatial[i]];
        o->wd[kw + i] = rs->dims[d->kernel_spatial[i]];
        o->ws[kw + i] = rstr[d->kernel_spatial[i]];
        o->strides[i] = wd->stride;
        o->dilates[i] = wd->rhs_dilation - 1; /* oneDNN counts the holes */
        o->pad_l[i] = wd->pad_low;
        o->pad_r[i] = wd->pad_high;
    }
    o->kd = kw + (int)n;
    return true;
}

bool aot_blas_takes(const cxla_instr *in) {
    if ((in->opcode != CXLA_OP_DOT && in->opcode != CXLA_OP_CONVOLUTION) || in->operand_count != 2)
        return false;
    const cxla_shape *ls = &in->operands[0]->shape, *rs = &in->operands[1]->shape;
    if (!dt_name(ls->type) || !dt_name(rs->type) || !dt_name(in->shape.type)) return false;
    int64_t nl = 0, nr = 0, no = 0;
    if (cxla_shape_element_count(ls, &nl) || cxla_shape_element_count(rs, &nr) ||
        cxla_shape_element_count(&in->shape, &no) || nl == 0 || nr == 0 || no == 0)
        return false;
    const cxla_attr *p = cxla_instr_attr(in, CXLA_ATTR_OPERAND_PRECISION);
    if (p && p->kind == CXLA_ATTR_KIND_PRECISIONS)
        for (int64_t i = 0; i < p->v.precisions.count; i++)
            if (p->v.precisions.items[i] == CXLA_PRECISION_PACKED_NIBBLE) return false;
    dnn_desc d;
    memset(&d, 0, sizeof d);
    return in->opcode == CXLA_OP_DOT ? dot_desc(in, &d) : conv_desc(in, &d);
}

static void put_dims(cxla_strbuf *b, const char *what, const int64_t *v, int n) {
    cxla_strbuf_printf(b, "    .%s = {", what);
    for (int i = 0; i < n; i++) cxla_strbuf_printf(b, "%s%" PRId64, i ? ", " : "", v[i]);
    cxla_strbuf_puts(b, n ? "},\n" : "0},\n");
}

cxla_status aot_blas_emit_desc(aot *a, const cxla_instr *in) {
    dnn_desc d;
    memset(&d, 0, sizeof d);
    bool ok = in->opcode == CXLA_OP_DOT ? dot_desc(in, &d) : conv_desc(in, &d);
    if (!ok) return cxla_error(CXLA_STATUS_INTERNAL, "cxla compile: %s: no oneDNN form", in->name);
    cxla_strbuf *b = &a->kernels;
    cxla_strbuf_printf(b,
                       "/* %s (%s) as a oneDNN %s (dims and element strides as oneDNN sees "
                       "them; %s_k%" PRId64 " is the exact fallback) */\n"
                       "static const %s_dnn_desc %s_d%" PRId64 " = {\n",
                       in->name, cxla_opcode_name(in->opcode),
                       d.conv ? "forward convolution" : "matmul", a->P, in->id, a->P, a->P, in->id);
    cxla_strbuf_printf(b, "    .conv = %d,\n    .nd = %d,\n    .kd = %d,\n", d.conv ? 1 : 0, d.nd,
                       d.kd);
    cxla_strbuf_printf(b, "    .st = %s,\n    .wt = %s,\n    .dt = %s,\n",
                       dt_name(in->operands[0]->shape.type), dt_name(in->operands[1]->shape.type),
                       dt_name(in->shape.type));
    put_dims(b, "sd", d.sd, d.nd);
    put_dims(b, "ss", d.ss, d.nd);
    put_dims(b, "wd", d.wd, d.kd);
    put_dims(b, "ws", d.ws, d.kd);
    put_dims(b, "dd", d.dd, d.nd);
    put_dims(b, "ds", d.ds, d.nd);
    if (d.conv) {
        put_dims(b, "strides", d.strides, d.nsp);
        put_dims(b, "dilates", d.dilates, d.nsp);
        put_dims(b, "pad_l", d.pad_l, d.nsp);
        put_dims(b, "pad_r", d.pad_r, d.nsp);
    }
    cxla_strbuf_puts(b, "};\n\n");
    a->blas_used = true;
    return b->failed ? cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory") : NULL;
}

void aot_blas_emit_step(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const char *P = a->P;
    cxla_strbuf_puts(b, "        const void *a[2] = ");
    aot_put_leaf_list(a, c, st->in, st->in_count, b);
    cxla_strbuf_puts(b, ";\n        void *r[1] = ");
    aot_put_leaf_list(a, c, st->out, 1, b);
    cxla_strbuf_printf(b,
                       ";\n        const char *what = \"\";\n"
                       "        int d = %s_dnn(&%s_d%" PRId64 ", a[0], a[1], r[0], &what);\n"
                       "        if (d > 0) /* not implemented by this oneDNN: the exact loops */\n"
                       "            %s_k%" PRId64 "(r, a, 0, INT64_MAX);\n"
                       "        else if (d < 0)\n"
                       "            return %s_fail(opt, %s_ERROR_ONEDNN, ",
                       P, P, in->id, P, in->id, P, P);
    cxla_strbuf t;
    cxla_strbuf_init(&t);
    cxla_strbuf_printf(&t, "%s (%s): oneDNN failed: ", in->name, cxla_opcode_name(in->opcode));
    aot_put_string(b, t.data ? t.data : "", t.len);
    cxla_strbuf_free(&t);
    cxla_strbuf_puts(b, ", what);\n");
}

void aot_blas_source(const aot *a, cxla_strbuf *c) {
    if (!a->blas_used) return;
    const char *P = a->P;
    cxla_strbuf_printf(
        c,
        "/* ---- oneDNN (--blas onednn): link with -ldnnl ---- */\n"
        "#include <stdlib.h>\n"
        "#include <dnnl.h>\n"
        "#if DNNL_VERSION_MAJOR != 2\n"
        "#error \"this code was generated for oneDNN 2.x (dnnl_*_desc_init)\"\n"
        "#endif\n\n"
        "/* A dot as a matmul or a convolution as a forward convolution: the shapes and the\n"
        " * element strides of the caller's row-major arrays as oneDNN sees them. */\n"
        "typedef struct %s_dnn_desc {\n"
        "    int conv, nd, kd;\n"
        "    dnnl_data_type_t st, wt, dt;\n"
        "    dnnl_dims_t sd, ss, wd, ws, dd, ds;\n"
        "    dnnl_dims_t strides, dilates, pad_l, pad_r;\n"
        "} %s_dnn_desc;\n\n",
        P, P);
    cxla_strbuf_printf(
        c,
        "/* Creates the primitive, runs it on |src| and |wei| into |dst|, destroys it: nothing\n"
        " * outlives the call. 0: done; 1: this oneDNN does not implement it (the caller runs\n"
        " * the exact loops); -1: a failure, *what says of what. */\n"
        "static int %s_dnn(const %s_dnn_desc *d, const void *src, const void *wei, void *dst,\n"
        "                  const char **what) {\n"
        "    dnnl_engine_t eng = 0;\n"
        "    dnnl_stream_t stream = 0;\n"
        "    dnnl_primitive_attr_t attr = 0;\n"
        "    dnnl_primitive_desc_t pd = 0, rpd = 0;\n"
        "    dnnl_primitive_t prim = 0, reorder = 0;\n"
        "    dnnl_memory_t ms = 0, mw = 0, mwp = 0, md = 0;\n"
        "    dnnl_memory_desc_t s_md, w_md, w_any, d_md;\n"
        "    void *wbuf = 0;\n"
        "    int rc = -1;\n"
        "    dnnl_status_t e;\n",
        P, P);
    cxla_strbuf_puts(
        c,
        "    *what = \"engine creation\";\n"
        "    e = dnnl_engine_create(&eng, dnnl_cpu, 0);\n"
        "    if (e == dnnl_success) {\n"
        "        *what = \"memory descriptors\";\n"
        "        e = dnnl_memory_desc_init_by_strides(&s_md, d->nd, d->sd, d->st, d->ss);\n"
        "    }\n"
        "    if (e == dnnl_success)\n"
        "        e = dnnl_memory_desc_init_by_strides(&w_md, d->kd, d->wd, d->wt, d->ws);\n"
        "    if (e == dnnl_success)\n"
        "        e = dnnl_memory_desc_init_by_strides(&d_md, d->nd, d->dd, d->dt, d->ds);\n"
        "    /* The weights of a convolution in the layout oneDNN likes (reordered below). */\n"
        "    if (e == dnnl_success)\n"
        "        e = d->conv ? dnnl_memory_desc_init_by_tag(&w_any, d->kd, d->wd, d->wt,\n"
        "                                                   dnnl_format_tag_any)\n"
        "                    : dnnl_memory_desc_init_by_strides(&w_any, d->kd, d->wd, d->wt, "
        "d->ws);\n"
        "    /* f32 stays f32 (never bf16 or tf32), as in XLA's CPU backend. */\n"
        "    if (e == dnnl_success) {\n"
        "        *what = \"attributes\";\n"
        "        e = dnnl_primitive_attr_create(&attr);\n"
        "    }\n"
        "    if (e == dnnl_success) e = dnnl_primitive_attr_set_fpmath_mode(attr, "
        "dnnl_fpmath_mode_strict);\n"
        "    if (e == dnnl_success) {\n"
        "        *what = d->conv ? \"convolution creation\" : \"matmul creation\";\n"
        "        if (d->conv) {\n"
        "            dnnl_convolution_desc_t cd;\n"
        "            e = dnnl_dilated_convolution_forward_desc_init(\n"
        "                &cd, dnnl_forward_inference, dnnl_convolution_direct, &s_md, &w_any, 0,\n"
        "                &d_md, d->strides, d->dilates, d->pad_l, d->pad_r);\n"
        "            if (e == dnnl_success) e = dnnl_primitive_desc_create(&pd, &cd, attr, eng, "
        "0);\n"
        "        } else {\n"
        "            dnnl_matmul_desc_t mmd;\n"
        "            e = dnnl_matmul_desc_init(&mmd, &s_md, &w_any, 0, &d_md);\n"
        "            if (e == dnnl_success) e = dnnl_primitive_desc_create(&pd, &mmd, attr, eng, "
        "0);\n"
        "        }\n"
        "    }\n"
        "    if (e == dnnl_unimplemented) {\n"
        "        rc = 1;\n"
        "        goto done;\n"
        "    }\n"
        "    /* The activations must be the caller's own layout; the weights may differ. */\n"
        "    if (e == dnnl_success &&\n"
        "        (!dnnl_memory_desc_equal(&s_md, dnnl_primitive_desc_query_md(pd, "
        "dnnl_query_src_md, 0)) ||\n"
        "         !dnnl_memory_desc_equal(&d_md, dnnl_primitive_desc_query_md(pd, "
        "dnnl_query_dst_md, 0)))) {\n"
        "        rc = 1;\n"
        "        goto done;\n"
        "    }\n"
        "    if (e == dnnl_success) e = dnnl_primitive_create(&prim, pd);\n");
    cxla_strbuf_puts(
        c, "    if (e == dnnl_success) {\n"
           "        *what = \"stream creation\";\n"
           "        e = dnnl_stream_create(&stream, eng, dnnl_stream_default_flags);\n"
           "    }\n"
           "    if (e == dnnl_success) {\n"
           "        *what = \"memory creation\";\n"
           "        e = dnnl_memory_create(&ms, &s_md, eng, (void *)src);\n"
           "    }\n"
           "    if (e == dnnl_success) e = dnnl_memory_create(&mw, &w_md, eng, (void *)wei);\n"
           "    if (e == dnnl_success) e = dnnl_memory_create(&md, &d_md, eng, dst);\n"
           "    if (e == dnnl_success) {\n"
           "        const dnnl_memory_desc_t *pw = dnnl_primitive_desc_query_md(pd, "
           "dnnl_query_weights_md, 0);\n"
           "        if (!dnnl_memory_desc_equal(&w_md, pw)) {\n"
           "            size_t n = dnnl_memory_desc_get_size(pw);\n"
           "            *what = \"weights reorder\";\n"
           "            wbuf = malloc(n ? n : 1);\n"
           "            if (!wbuf) e = dnnl_out_of_memory;\n"
           "            if (e == dnnl_success) e = dnnl_memory_create(&mwp, pw, eng, wbuf);\n"
           "            if (e == dnnl_success)\n"
           "                e = dnnl_reorder_primitive_desc_create(&rpd, &w_md, eng, pw, eng, 0);\n"
           "            if (e == dnnl_success) e = dnnl_primitive_create(&reorder, rpd);\n"
           "            if (e == dnnl_success) {\n"
           "                dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, mw}, {DNNL_ARG_TO, mwp}};\n"
           "                e = dnnl_primitive_execute(reorder, stream, 2, ra);\n"
           "            }\n"
           "        }\n"
           "    }\n"
           "    if (e == dnnl_success) {\n"
           "        dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mwp ? mwp : "
           "mw},\n"
           "                                   {DNNL_ARG_DST, md}};\n"
           "        *what = \"execution\";\n"
           "        e = dnnl_primitive_execute(prim, stream, 3, args);\n"
           "    }\n"
           "    if (e == dnnl_success) e = dnnl_stream_wait(stream);\n"
           "    if (e == dnnl_success) rc = 0;\n"
           "done:\n"
           "    if (ms) dnnl_memory_destroy(ms);\n"
           "    if (mw) dnnl_memory_destroy(mw);\n"
           "    if (mwp) dnnl_memory_destroy(mwp);\n"
           "    if (md) dnnl_memory_destroy(md);\n"
           "    if (reorder) dnnl_primitive_destroy(reorder);\n"
           "    if (rpd) dnnl_primitive_desc_destroy(rpd);\n"
           "    if (prim) dnnl_primitive_destroy(prim);\n"
           "    if (pd) dnnl_primitive_desc_destroy(pd);\n"
           "    if (attr) dnnl_primitive_attr_destroy(attr);\n"
           "    if (stream) dnnl_stream_destroy(stream);\n"
           "    if (eng) dnnl_engine_destroy(eng);\n"
           "    free(wbuf);\n"
           "    return rc;\n"
           "}\n\n");
}
