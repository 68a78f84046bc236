/* The emitter's dot kernel: a cache-blocked matrix product as generated C, for the dots
 * that oneDNN does not run (integer types; f32 and f64 in a build without oneDNN), and the
 * kernels of narrow f32 products (a side of at most 16, passes/epilogue.h) that run instead
 * of oneDNN (below, "narrow products").
 *
 * The dot's dimension numbers are taken as strides (as onednn.c does): each batch dim
 * keeps its own loop, and the lhs free dims (M), the rhs free dims (N) and the
 * contracting dims (K) must each merge into one stride, or the dot is left to the
 * library call. The loops: for each batch, N in panels of NB columns, K in panels of KB
 * rows (a KB x NB panel of the rhs stays in cache), every row of the lhs, then the
 * panel's k and the columns j innermost (contiguous in the result, vectorized by the C
 * compiler), or, when the rhs is transposed (k contiguous, columns not), the columns and
 * then k innermost (one result element's products over the panel). Every result element adds its
 * products in ascending k from zero, as the interpreter's product does, so the result is bit for
 * bit the interpreter's: for f32 and f64 (operands of the result type; generated code has no fused
 * multiply-adds), and for integers, computed in the unsigned type of the result's width (wrapping,
 * which is the interpreter's 64-bit wrapping sum narrowed to the result). */
#include <inttypes.h>
#include <string.h>

#include "cpu/emit_internal.h"
#include "passes/epilogue.h"

enum { NB = 512, KB = 128 };

typedef struct group {
    int64_t size, stride;
} group;

/* Merges the dims |which| of |s| (row-major strides |st|) into one (size, stride): false
 * when their strides do not nest. */
static bool merge(int64_t n, const int64_t *which, const cxla_shape *s, const int64_t *st,
                  group *g) {
    g->size = 1;
    g->stride = 1;
    bool any = false;
    for (int64_t i = n - 1; i >= 0; i--) {
        int64_t d = which[i];
        if (s->dims[d] == 1) continue;
        if (!any)
            g->stride = st[d];
        else if (st[d] != g->stride * g->size)
            return false;
        any = true;
        g->size *= s->dims[d];
    }
    return true;
}

static void strides_of(const cxla_shape *s, int64_t *st) {
    int64_t v = 1;
    for (int64_t d = s->rank - 1; d >= 0; d--) {
        st[d] = v;
        v *= s->dims[d];
    }
}

static bool int_type(cxla_type t) {
    switch (t) {
    case CXLA_S8:
    case CXLA_S16:
    case CXLA_S32:
    case CXLA_S64:
    case CXLA_U8:
    case CXLA_U16:
    case CXLA_U32:
    case CXLA_U64: return true;
    default: return false;
    }
}

static const char *unsigned_of(cxla_type t) {
    switch (cxla_type_storage(t)) {
    case 1: return "uint8_t";
    case 2: return "uint16_t";
    case 4: return "uint32_t";
    default: return "uint64_t";
    }
}

typedef struct dot_form {
    int64_t nb;
    int64_t bsize[CXLA_MAX_RANK], lbs[CXLA_MAX_RANK], rbs[CXLA_MAX_RANK], obs[CXLA_MAX_RANK];
    group m, k, n, lm, lk, rk, rn;
} dot_form;

static bool dot_form_of(const cxla_instr *instr, dot_form *f) {
    if (instr->opcode != CXLA_OP_DOT || instr->operand_count != 2) return false;
    const cxla_shape *ls = &instr->operands[0]->shape, *rs = &instr->operands[1]->shape;
    const cxla_shape *os = &instr->shape;
    if (!cxla_type_is_array(os->type) || !cxla_shape_is_static(os) || !cxla_shape_is_static(ls) ||
        !cxla_shape_is_static(rs))
        return false;
    cxla_type t = os->type;
    if (int_type(t)) {
        if (!int_type(ls->type) || !int_type(rs->type)) return false;
    } else if (t == CXLA_F32 || t == CXLA_F64) {
        if (ls->type != t || rs->type != t) return false;
    } else {
        return false;
    }
    /* PACKED_NIBBLE splits the operands: the library call does it. */
    const cxla_attr *pa = cxla_instr_attr(instr, CXLA_ATTR_OPERAND_PRECISION);
    if (pa && pa->kind == CXLA_ATTR_KIND_PRECISIONS)
        for (int64_t i = 0; i < pa->v.precisions.count; i++)
            if (pa->v.precisions.items[i] == CXLA_PRECISION_PACKED_NIBBLE) return false;
    if (cxla_instr_attr(instr, CXLA_ATTR_SPARSITY)) return false;
    int64_t nlb, nrb, nlc, nrc;
    const int64_t *lb = cxla_instr_ints(instr, CXLA_ATTR_LHS_BATCH_DIMS, &nlb);
    const int64_t *rb = cxla_instr_ints(instr, CXLA_ATTR_RHS_BATCH_DIMS, &nrb);
    const int64_t *lc = cxla_instr_ints(instr, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nlc);
    const int64_t *rc = cxla_instr_ints(instr, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nrc);
    if (!lb) nlb = 0;
    if (!rb) nrb = 0;
    if (!lc) nlc = 0;
    if (!rc) nrc = 0;
    if (nlb != nrb || nlc != nrc) return false;
    int64_t lst[CXLA_MAX_RANK], rst[CXLA_MAX_RANK], ost[CXLA_MAX_RANK];
    strides_of(ls, lst);
    strides_of(rs, rst);
    strides_of(os, ost);
    bool lused[CXLA_MAX_RANK] = {false}, rused[CXLA_MAX_RANK] = {false};
    for (int64_t i = 0; i < nlb; i++) lused[lb[i]] = rused[rb[i]] = true;
    for (int64_t i = 0; i < nlc; i++) lused[lc[i]] = rused[rc[i]] = true;
    int64_t lf[CXLA_MAX_RANK], rf[CXLA_MAX_RANK], nlf = 0, nrf = 0;
    for (int64_t d = 0; d < ls->rank; d++)
        if (!lused[d]) lf[nlf++] = d;
    for (int64_t d = 0; d < rs->rank; d++)
        if (!rused[d]) rf[nrf++] = d;
    if (os->rank != nlb + nlf + nrf) return false;
    f->nb = nlb;
    for (int64_t i = 0; i < nlb; i++) {
        f->bsize[i] = ls->dims[lb[i]];
        f->lbs[i] = lst[lb[i]];
        f->rbs[i] = rst[rb[i]];
        f->obs[i] = ost[i];
    }
    if (!merge(nlf, lf, ls, lst, &f->lm) || !merge(nlc, lc, ls, lst, &f->lk) ||
        !merge(nlc, rc, rs, rst, &f->rk) || !merge(nrf, rf, rs, rst, &f->rn))
        return false;
    /* The result's M and N groups are consecutive row-major dims: always mergeable. */
    f->m = f->lm;
    f->k = f->lk;
    f->n = f->rn;
    return true;
}

bool cpu_emit_dot_ok(const cxla_instr *instr) {
    dot_form f;
    return dot_form_of(instr, &f);
}

/* ---- narrow products (epilogue.h: cxla_dot_narrow) ---------------------------------------
 *
 * f32 matrix products with a side of at most 16, which oneDNN pads to its blocks of 16 or 64
 * and runs on one thread. Each is register-blocked for its shape; every result element
 * still adds its products in ascending k from zero (separate multiply and add: generated
 * code has no fused multiply-adds), so the results are bit for bit the interpreter's and
 * do not depend on the split. Accumulators are arrays of 16 floats touched only by loops
 * of 16 (gcc keeps such arrays in vector registers; a partial loop over one puts it in
 * memory), so partial rows and columns go through a staging block. */

enum { LANES = 16, NARROW_NB = 256 };

/* Prints |fmt| once per r in [0, rows), with %d standing for r (at most 3 times). */
static void per_row(cxla_strbuf *out, int rows, const char *indent, const char *fmt) {
    for (int r = 0; r < rows; r++) {
        cxla_strbuf_printf(out, "%s", indent);
        cxla_strbuf_printf(out, fmt, r, r, r);
        cxla_strbuf_printf(out, "\n");
    }
}

/* lhs [K, M] (m stride 1): groups of 16 rows of the result as vectors along M, one
 * accumulator per column; the range is the groups. */
static void narrow_lhs_t(cxla_strbuf *out, const dot_form *f) {
    int64_t M = f->m.size, K = f->k.size, N = f->n.size;
    cxla_strbuf_printf(out,
                       "    for (int64_t g = begin; g < end; g++) {\n"
                       "        int64_t i0 = g * %d;\n"
                       "        if (i0 + %d > %" PRId64 ") {\n"
                       "            for (int64_t i = i0; i < %" PRId64 "; i++)\n"
                       "                for (int64_t j = 0; j < %" PRId64 "; j++) {\n"
                       "                    float acc = 0;\n"
                       "                    for (int64_t k = 0; k < %" PRId64 "; k++)\n"
                       "                        acc += lhs[k * %" PRId64 " + i] * rhs[k * %" PRId64
                       " + j * %" PRId64 "];\n"
                       "                    res[i * %" PRId64 " + j] = acc;\n"
                       "                }\n"
                       "            continue;\n"
                       "        }\n",
                       LANES, LANES, M, M, N, K, f->lk.stride, f->rk.stride, f->rn.stride, N);
    cxla_strbuf_printf(out, "        float");
    for (int64_t j = 0; j < N; j++)
        cxla_strbuf_printf(out, "%s s%" PRId64 "[%d] = {0}", j ? "," : "", j, LANES);
    cxla_strbuf_printf(out, ";\n");
    cxla_strbuf_printf(out,
                       "        for (int64_t k = 0; k < %" PRId64 "; k++) {\n"
                       "            const float *restrict ak = lhs + k * %" PRId64 " + i0;\n"
                       "            const float *restrict bk = rhs + k * %" PRId64 ";\n",
                       K, f->lk.stride, f->rk.stride);
    for (int64_t j = 0; j < N; j++)
        cxla_strbuf_printf(out, "            float b%" PRId64 " = bk[%" PRId64 "];\n", j,
                           j * f->rn.stride);
    cxla_strbuf_printf(out,
                       "            for (int t = 0; t < %d; t++) {\n"
                       "                float a = ak[t];\n",
                       LANES);
    for (int64_t j = 0; j < N; j++)
        cxla_strbuf_printf(out, "                s%" PRId64 "[t] += a * b%" PRId64 ";\n", j, j);
    cxla_strbuf_printf(out, "            }\n        }\n");
    cxla_strbuf_printf(out,
                       "        for (int t = 0; t < %d; t++) {\n"
                       "            float *restrict r = res + (i0 + t) * %" PRId64 ";\n",
                       LANES, N);
    for (int64_t j = 0; j < N; j++)
        cxla_strbuf_printf(out, "            r[%" PRId64 "] = s%" PRId64 "[t];\n", j, j);
    cxla_strbuf_printf(out, "        }\n    }\n");
}

/* One block of |rows| result rows at i (lhs rows a0.. over k in [0, |kn|)) by the
 * 16-column groups g of columns [j0, j0 + w): for each, |rows| accumulators from zero,
 * the k loop reading the group's 16 rhs values at |row| (an expression of k and g), the
 * sums stored through a staging block (a group may be partial). */
static void narrow_block(cxla_strbuf *out, const dot_form *f, int rows, const char *kn,
                         const char *row) {
    int64_t N = f->n.size;
    const char *in = "            ";
    char ind[64];
    cxla_strbuf_printf(out, "%sfor (int64_t g = 0; g * %d < w; g++) {\n", in, LANES);
    cxla_strbuf_printf(out,
                       "%s    int64_t j = j0 + g * %d, nv = w - g * %d < %d ? w - g * %d : %d;\n",
                       in, LANES, LANES, LANES, LANES, LANES);
    snprintf(ind, sizeof(ind), "%s    ", in);
    per_row(out, rows, ind, "float s%d[16] = {0};");
    cxla_strbuf_printf(out, "%s    for (int64_t k = 0; k < %s; k++) {\n", in, kn);
    snprintf(ind, sizeof(ind), "%s        ", in);
    char xfmt[64];
    snprintf(xfmt, sizeof(xfmt), "float x%%d = a%%d[k * %" PRId64 "];", f->lk.stride);
    per_row(out, rows, ind, xfmt);
    cxla_strbuf_printf(out,
                       "%s        const float *restrict pk = %s;\n"
                       "%s        for (int t = 0; t < %d; t++) {\n"
                       "%s            float bv = pk[t];\n",
                       in, row, in, LANES, in);
    snprintf(ind, sizeof(ind), "%s            ", in);
    per_row(out, rows, ind, "s%d[t] += x%d * bv;");
    cxla_strbuf_printf(out, "%s        }\n%s    }\n", in, in);
    /* Whole groups stored straight from the accumulators (a loop of 16, vectorized); a
     * partial one through the staging block (gcc -O2 leaves a loop of unknown count
     * scalar, and a partial loop over an accumulator would keep it in memory). */
    cxla_strbuf_printf(out, "%s    if (nv == %d) {\n", in, LANES);
    for (int r = 0; r < rows; r++)
        cxla_strbuf_printf(out,
                           "%s        float *restrict c%d = res + (i + %d) * %" PRId64 " + j;\n",
                           in, r, r, N);
    cxla_strbuf_printf(out, "%s        for (int t = 0; t < %d; t++) {\n", in, LANES);
    snprintf(ind, sizeof(ind), "%s            ", in);
    per_row(out, rows, ind, "c%d[t] = s%d[t];");
    cxla_strbuf_printf(out, "%s        }\n%s    } else {\n", in, in);
    cxla_strbuf_printf(out, "%s        float st[%d][%d];\n", in, rows, LANES);
    cxla_strbuf_printf(out, "%s        for (int t = 0; t < %d; t++) {\n", in, LANES);
    per_row(out, rows, ind, "st[%d][t] = s%d[t];");
    cxla_strbuf_printf(out, "%s        }\n", in);
    cxla_strbuf_printf(out,
                       "%s        for (int r = 0; r < %d; r++)\n"
                       "%s            for (int64_t t = 0; t < nv; t++) res[(i + r) * %" PRId64
                       " + j + t] = st[r][t];\n",
                       in, rows, in, N);
    cxla_strbuf_printf(out, "%s    }\n", in);
    cxla_strbuf_printf(out, "%s}\n", in);
}

/* The rows [lo, hi) in blocks of |rows| (then one at a time) over narrow_block. */
static void narrow_rows(cxla_strbuf *out, const dot_form *f, int rows, const char *lo,
                        const char *hi, const char *kn, const char *row) {
    cxla_strbuf_printf(out, "        int64_t i = %s;\n", lo);
    cxla_strbuf_printf(out, "        for (; i + %d <= %s; i += %d) {\n", rows, hi, rows);
    for (int r = 0; r < rows; r++)
        cxla_strbuf_printf(
            out, "            const float *restrict a%d = lhs + (i + %d) * %" PRId64 ";\n", r, r,
            f->lm.stride);
    narrow_block(out, f, rows, kn, row);
    cxla_strbuf_printf(out, "        }\n");
    cxla_strbuf_printf(out, "        for (; i < %s; i++) {\n", hi);
    cxla_strbuf_printf(out, "            const float *restrict a0 = lhs + i * %" PRId64 ";\n",
                       f->lm.stride);
    narrow_block(out, f, 1, kn, row);
    cxla_strbuf_printf(out, "        }\n");
}

/* K <= 16 < N: the range is the 16-column groups of the result, so that each part packs
 * only its own columns of the rhs: panels of NARROW_NB columns copied as rows of k
 * (zeros past the last column), every row of the lhs over each. */
static void narrow_k(cxla_strbuf *out, const dot_form *f) {
    int64_t M = f->m.size, K = f->k.size, N = f->n.size;
    cxla_strbuf_printf(out, "    float p[%" PRId64 " * %d];\n", K, NARROW_NB);
    cxla_strbuf_printf(out,
                       "    int64_t je = end * %d < %" PRId64 " ? end * %d : %" PRId64 ";\n"
                       "    for (int64_t j0 = begin * %d; j0 < je; j0 += %d) {\n"
                       "        int64_t w = je - j0 < %d ? je - j0 : %d;\n",
                       LANES, N, LANES, N, LANES, NARROW_NB, NARROW_NB, NARROW_NB);
    cxla_strbuf_printf(out,
                       "        for (int64_t k = 0; k < %" PRId64 "; k++)\n"
                       "            for (int64_t t = 0; t < %d; t++)\n"
                       "                p[k * %d + t] = t < w ? rhs[k * %" PRId64
                       " + (j0 + t) * %" PRId64 "] : 0.0f;\n",
                       K, NARROW_NB, NARROW_NB, f->rk.stride, f->rn.stride);
    char mk[32], kk[32], row[64];
    snprintf(mk, sizeof(mk), "%" PRId64, M);
    snprintf(kk, sizeof(kk), "%" PRId64, K);
    snprintf(row, sizeof(row), "p + k * %d + g * %d", NARROW_NB, LANES);
    narrow_rows(out, f, 4, "0", mk, kk, row);
    cxla_strbuf_printf(out, "    }\n");
}

/* lhs [M, K], rhs [K, N] row-major with 8 <= N <= 16: 16 values of each rhs row read in
 * place (the lanes past N read the next row and are never stored), the last rows, where
 * 16 values would pass the end of the rhs, from a copy padded with zeros; the range is
 * the rows. */
static void narrow_n(cxla_strbuf *out, const dot_form *f) {
    int64_t K = f->k.size, N = f->n.size;
    /* Rows k whose 16 values lie inside the rhs: k * N + 16 <= K * N. */
    int64_t kd = K - (LANES - N + N - 1) / N;
    if (kd < 0) kd = 0;
    cxla_strbuf_printf(out,
                       "    float tl[%" PRId64 "][%d];\n"
                       "    for (int64_t k = %" PRId64 "; k < %" PRId64 "; k++)\n"
                       "        for (int t = 0; t < %d; t++)\n"
                       "            tl[k - %" PRId64 "][t] = t < %" PRId64 " ? rhs[k * %" PRId64
                       " + t] : 0.0f;\n",
                       K - kd > 0 ? K - kd : 1, LANES, kd, K, LANES, kd, N, N);
    cxla_strbuf_printf(out, "    {\n        int64_t j0 = 0, w = %" PRId64 ";\n", N);
    char kk[32], row[96];
    snprintf(kk, sizeof(kk), "%" PRId64, K);
    snprintf(row, sizeof(row), "k < %" PRId64 " ? rhs + k * %" PRId64 " : tl[k - %" PRId64 "]", kd,
             N, kd);
    narrow_rows(out, f, 8, "begin", "end", kk, row);
    cxla_strbuf_printf(out, "    }\n");
}

static cxla_status emit_narrow(const cxla_instr *instr, const dot_form *f,
                               cxla_dot_narrow_form form, const char *name, cxla_strbuf *out,
                               cpu_kernel_info *out_info) {
    int64_t M = f->m.size, K = f->k.size, N = f->n.size;
    static const char *const what[] = {"", "lhs transposed, lanes along M",
                                       "K <= 16, the rhs packed by columns, lanes along N",
                                       "N <= 16, the rhs read 16 wide, lanes along N"};
    cxla_strbuf_printf(out,
                       "/* %s: narrow dot M %" PRId64 " x K %" PRId64 " x N %" PRId64
                       " (%s); each element adds its products in ascending k from zero. */\n",
                       instr->name, M, K, N, what[form]);
    if (out_info) {
        out_info->range = form == CXLA_DOT_NARROW_LHS_T ? (M + LANES - 1) / LANES
                          : form == CXLA_DOT_NARROW_K   ? (N + LANES - 1) / LANES
                                                        : M;
        out_info->cost = (double)(M * K + K * N + M * N) * 4.0 + (double)M * (double)N * (double)K;
    }
    cxla_strbuf_printf(out,
                       "void %s(void *const *out, const void *const *in, int64_t begin, "
                       "int64_t end) {\n"
                       "    const float *restrict lhs = in[0];\n"
                       "    const float *restrict rhs = in[1];\n"
                       "    float *restrict res = out[0];\n",
                       name);
    int64_t range = form == CXLA_DOT_NARROW_LHS_T ? (M + LANES - 1) / LANES
                    : form == CXLA_DOT_NARROW_K   ? (N + LANES - 1) / LANES
                                                  : M;
    cxla_strbuf_printf(out,
                       "    if (begin < 0) begin = 0;\n"
                       "    if (end > %" PRId64 ") end = %" PRId64 ";\n",
                       range, range);
    if (form == CXLA_DOT_NARROW_LHS_T)
        narrow_lhs_t(out, f);
    else if (form == CXLA_DOT_NARROW_K)
        narrow_k(out, f);
    else
        narrow_n(out, f);
    cxla_strbuf_printf(out, "}\n");
    return out->failed ? cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory") : NULL;
}

cxla_status cpu_emit_dot(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                         cpu_kernel_info *out_info) {
    dot_form f;
    if (!dot_form_of(instr, &f))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "cpu backend: cannot emit dot %s: its types or dimension numbers "
                          "need the library call",
                          instr->name);
    cxla_dot_narrow_form form = cxla_dot_narrow(instr);
    if (form != CXLA_DOT_WIDE && f.nb == 0)
        return emit_narrow(instr, &f, form, name, out, out_info);
    cxla_type t = instr->shape.type;
    const char *lt = cpu_emit_ctype(instr->operands[0]->shape.type);
    const char *rt = cpu_emit_ctype(instr->operands[1]->shape.type);
    const char *ct = int_type(t) ? unsigned_of(t) : cpu_emit_ctype(t);
    /* Products in at least unsigned int: uint8_t or uint16_t would promote to int, whose
     * overflow is undefined. */
    const char *pt = !int_type(t) ? ct : cxla_type_storage(t) == 8 ? "uint64_t" : "uint32_t";
    int64_t M = f.m.size, K = f.k.size, N = f.n.size;
    cxla_strbuf text;
    cxla_strbuf_init(&text);
    cxla_hlo_print_instr(&text, instr, CXLA_HLO_STYLE_SHORT);
    for (char *p = text.data ? strstr(text.data, "*/") : NULL; p; p = strstr(p, "*/")) p[1] = ' ';
    for (char *p = text.data; p && *p; p++)
        if (*p == '\n') *p = ' ';
    if (text.data && text.len > 200) memcpy(text.data + 196, " ...", 5);
    cxla_strbuf_printf(out,
                       "/* %s\n * [batch] x M %" PRId64 " x K %" PRId64 " x N %" PRId64
                       ", blocked (N panels of %d, K panels of %d). */\n",
                       text.data ? text.data : instr->name, M, K, N, NB, KB);
    cxla_strbuf_free(&text);
    /* The outer loop the thread pool splits: the rows of M (each part does them in every
     * batch; the elements of a row do not depend on the split). */
    if (out_info) {
        int64_t batch = 1;
        for (int64_t i = 0; i < f.nb; i++) batch *= f.bsize[i];
        size_t es = cxla_type_storage(t);
        out_info->range = M > 0 ? M : 1;
        out_info->cost = (double)batch * ((double)(M * K + K * N + M * N) * (double)es +
                                          (double)M * (double)N * (double)K);
    }
    cxla_strbuf_printf(out,
                       "void %s(void *const *out, const void *const *in, int64_t begin, "
                       "int64_t end) {\n",
                       name);
    cxla_strbuf_printf(out,
                       "    int64_t ib = begin < 0 ? 0 : begin, ie = end > %" PRId64 " ? %" PRId64
                       " : end;\n"
                       "    if (ib >= ie) return;\n",
                       M, M);
    cxla_strbuf_printf(out, "    const %s *restrict lhs = in[0];\n", lt);
    cxla_strbuf_printf(out, "    const %s *restrict rhs = in[1];\n", rt);
    cxla_strbuf_printf(out, "    %s *restrict res = out[0];\n", ct);
    cxla_strbuf_printf(out, "    int64_t lo = 0, ro = 0, oo = 0;\n");
    for (int64_t i = 0; i < f.nb; i++) {
        cxla_strbuf_printf(out,
                           "%*sfor (int64_t b%" PRId64 " = 0; b%" PRId64 " < %" PRId64 "; b%" PRId64
                           "++) {\n",
                           (int)(4 + 4 * i), "", i, i, f.bsize[i], i);
    }
    int depth = 4 + 4 * (int)f.nb;
    if (f.nb > 0) {
        cxla_strbuf_printf(out, "%*slo = 0", depth, "");
        for (int64_t i = 0; i < f.nb; i++)
            cxla_strbuf_printf(out, " + b%" PRId64 " * %" PRId64, i, f.lbs[i]);
        cxla_strbuf_printf(out, ";\n%*sro = 0", depth, "");
        for (int64_t i = 0; i < f.nb; i++)
            cxla_strbuf_printf(out, " + b%" PRId64 " * %" PRId64, i, f.rbs[i]);
        cxla_strbuf_printf(out, ";\n%*soo = 0", depth, "");
        for (int64_t i = 0; i < f.nb; i++)
            cxla_strbuf_printf(out, " + b%" PRId64 " * %" PRId64, i, f.obs[i]);
        cxla_strbuf_printf(out, ";\n");
    }
    cxla_strbuf_printf(out,
                       "%*sconst %s *restrict a = lhs + lo;\n"
                       "%*sconst %s *restrict b = rhs + ro;\n"
                       "%*s%s *restrict c = res + oo;\n",
                       depth, "", lt, depth, "", rt, depth, "", ct);
    cxla_strbuf_printf(
        out, "%*sfor (int64_t e = ib * %" PRId64 "; e < ie * %" PRId64 "; e++) c[e] = 0;\n", depth,
        "", N, N);
    /* The panels; inside them, the axpy form (a row of the rhs times one lhs element
     * added to a row of the result) when the rhs's columns are contiguous, else, when
     * its k is, the dot form (one result element's products over the panel's k). */
    bool by_element = f.rn.stride != 1 && f.rk.stride == 1;
    int d = depth;
    cxla_strbuf_printf(out, "%*sfor (int64_t j0 = 0; j0 < %" PRId64 "; j0 += %d) {\n", d, "", N,
                       NB);
    cxla_strbuf_printf(out, "%*s    int64_t j1 = j0 + %d < %" PRId64 " ? j0 + %d : %" PRId64 ";\n",
                       d, "", NB, N, NB, N);
    cxla_strbuf_printf(out, "%*s    for (int64_t k0 = 0; k0 < %" PRId64 "; k0 += %d) {\n", d, "", K,
                       KB);
    cxla_strbuf_printf(out,
                       "%*s        int64_t k1 = k0 + %d < %" PRId64 " ? k0 + %d : %" PRId64 ";\n",
                       d, "", KB, K, KB, K);
    cxla_strbuf_printf(out, "%*s        int64_t i = ib;\n", d, "");
    if (!by_element) {
        /* Four rows at a time, JR columns held in accumulators over the panel's k (the
         * register block); each element still adds its products in ascending k. */
        int jr = strcmp(pt, "double") == 0 || strcmp(pt, "uint64_t") == 0 ? 8 : 16;
        const char *in8 = "                ";
        cxla_strbuf_printf(out, "%*s        for (; i + 4 <= ie; i += 4) {\n", d, "");
        for (int r = 0; r < 4; r++)
            cxla_strbuf_printf(out,
                               "%*s            const %s *restrict a%d = a + (i + %d) * %" PRId64
                               ";\n"
                               "%*s            %s *restrict c%d = c + (i + %d) * %" PRId64 ";\n",
                               d, "", lt, r, r, f.lm.stride, d, "", ct, r, r, N);
        cxla_strbuf_printf(out, "%*s            int64_t j = j0;\n", d, "");
        cxla_strbuf_printf(out, "%*s            for (; j + %d <= j1; j += %d) {\n", d, "", jr, jr);
        cxla_strbuf_printf(out, "%*s%s%s s0[%d], s1[%d], s2[%d], s3[%d];\n", d, "", in8, pt, jr, jr,
                           jr, jr);
        cxla_strbuf_printf(out,
                           "%*s%sfor (int t = 0; t < %d; t++) {\n"
                           "%*s%s    s0[t] = c0[j + t];\n"
                           "%*s%s    s1[t] = c1[j + t];\n"
                           "%*s%s    s2[t] = c2[j + t];\n"
                           "%*s%s    s3[t] = c3[j + t];\n"
                           "%*s%s}\n",
                           d, "", in8, jr, d, "", in8, d, "", in8, d, "", in8, d, "", in8, d, "",
                           in8);
        cxla_strbuf_printf(out, "%*s%sfor (int64_t k = k0; k < k1; k++) {\n", d, "", in8);
        cxla_strbuf_printf(
            out, "%*s%s    const %s *restrict bk = b + k * %" PRId64 " + j * %" PRId64 ";\n", d, "",
            in8, rt, f.rk.stride, f.rn.stride);
        for (int r = 0; r < 4; r++)
            cxla_strbuf_printf(out, "%*s%s    %s x%d = (%s)a%d[k * %" PRId64 "];\n", d, "", in8, pt,
                               r, pt, r, f.lk.stride);
        cxla_strbuf_printf(out,
                           "%*s%s    for (int t = 0; t < %d; t++) {\n"
                           "%*s%s        %s bv = (%s)bk[t * %" PRId64 "];\n"
                           "%*s%s        s0[t] += x0 * bv;\n"
                           "%*s%s        s1[t] += x1 * bv;\n"
                           "%*s%s        s2[t] += x2 * bv;\n"
                           "%*s%s        s3[t] += x3 * bv;\n"
                           "%*s%s    }\n"
                           "%*s%s}\n",
                           d, "", in8, jr, d, "", in8, pt, pt, f.rn.stride, d, "", in8, d, "", in8,
                           d, "", in8, d, "", in8, d, "", in8, d, "", in8);
        cxla_strbuf_printf(out,
                           "%*s%sfor (int t = 0; t < %d; t++) {\n"
                           "%*s%s    c0[j + t] = (%s)s0[t];\n"
                           "%*s%s    c1[j + t] = (%s)s1[t];\n"
                           "%*s%s    c2[j + t] = (%s)s2[t];\n"
                           "%*s%s    c3[j + t] = (%s)s3[t];\n"
                           "%*s%s}\n",
                           d, "", in8, jr, d, "", in8, ct, d, "", in8, ct, d, "", in8, ct, d, "",
                           in8, ct, d, "", in8);
        cxla_strbuf_printf(out, "%*s            }\n", d, "");
        /* The columns left over: one element at a time. Written only where a panel's
         * width is not a multiple of jr: where none is left, gcc -O2 would warn (an error
         * under -Werror) that the never-run loop's iteration count invokes undefined
         * behaviour. */
        bool leftover = (N % NB) % jr != 0 || (N >= NB && NB % jr != 0);
        if (leftover) {
            cxla_strbuf_printf(out, "%*s            for (; j < j1; j++) {\n", d, "");
            for (int r = 0; r < 4; r++)
                cxla_strbuf_printf(out,
                                   "%*s%s%s acc%d = c%d[j];\n"
                                   "%*s%sfor (int64_t k = k0; k < k1; k++) acc%d += (%s)a%d[k * "
                                   "%" PRId64 "] * (%s)b[k * %" PRId64 " + j * %" PRId64 "];\n"
                                   "%*s%sc%d[j] = (%s)acc%d;\n",
                                   d, "", in8, pt, r, r, d, "", in8, r, pt, r, f.lk.stride, pt,
                                   f.rk.stride, f.rn.stride, d, "", in8, r, ct, r);
            cxla_strbuf_printf(out, "%*s            }\n", d, "");
        }
        cxla_strbuf_printf(out, "%*s        }\n", d, "");
    }
    cxla_strbuf_printf(out, "%*s        for (; i < ie; i++) {\n", d, "");
    cxla_strbuf_printf(out, "%*s            %s *restrict crow = c + i * %" PRId64 ";\n", d, "", ct,
                       N);
    cxla_strbuf_printf(out, "%*s            const %s *restrict arow = a + i * %" PRId64 ";\n", d,
                       "", lt, f.lm.stride);
    if (!by_element) {
        cxla_strbuf_printf(out, "%*s            for (int64_t k = k0; k < k1; k++) {\n", d, "");
        cxla_strbuf_printf(out, "%*s                %s av = (%s)arow[k * %" PRId64 "];\n", d, "",
                           pt, pt, f.lk.stride);
        cxla_strbuf_printf(out,
                           "%*s                const %s *restrict brow = b + k * %" PRId64 ";\n", d,
                           "", rt, f.rk.stride);
        cxla_strbuf_printf(out,
                           "%*s                for (int64_t j = j0; j < j1; j++) crow[j] += av * "
                           "(%s)brow[j * %" PRId64 "];\n",
                           d, "", pt, f.rn.stride);
        cxla_strbuf_printf(out, "%*s            }\n", d, "");
    } else {
        cxla_strbuf_printf(out, "%*s            for (int64_t j = j0; j < j1; j++) {\n", d, "");
        cxla_strbuf_printf(out,
                           "%*s                const %s *restrict bcol = b + j * %" PRId64 ";\n", d,
                           "", rt, f.rn.stride);
        cxla_strbuf_printf(out, "%*s                %s acc = crow[j];\n", d, "", pt);
        cxla_strbuf_printf(out,
                           "%*s                for (int64_t k = k0; k < k1; k++) acc += (%s)arow[k "
                           "* %" PRId64 "] * (%s)bcol[k];\n",
                           d, "", pt, f.lk.stride, pt);
        cxla_strbuf_printf(out, "%*s                crow[j] = (%s)acc;\n", d, "", ct);
        cxla_strbuf_printf(out, "%*s            }\n", d, "");
    }
    cxla_strbuf_printf(out, "%*s        }\n%*s    }\n%*s}\n", d, "", d, "", d, "");
    for (int64_t i = f.nb - 1; i >= 0; i--) cxla_strbuf_printf(out, "%*s}\n", (int)(4 + 4 * i), "");
    cxla_strbuf_printf(out, "}\n");
    return out->failed ? cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory") : NULL;
}
