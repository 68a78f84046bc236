/* Bounded dynamic shapes in ahead-of-time output, where no kernel at the bounds gives the
 * interpreter's value (aot_internal.h, AB_MOVE and AB_SUM; docs/aot.md, "Dynamic shapes"):
 *
 * - the moves of elements by the run-time sizes (reshape, concatenate, pad, reverse,
 *   dynamic-slice, dynamic-update-slice, dynamic-reshape): the JIT's `dynamic move` steps
 *   (src/cpu/cpu_dynamic.c, cpu_dyn_move_plan and cpu_dyn_move) written as C. The step
 *   computes the result's sizes (exec_dynamic_rule's, printed by aot_dyn_put_rule, or
 *   the operation's own: pad's cut widths, dynamic-slice's clamped starts,
 *   dynamic-reshape's size operands), fills a descriptor of plain data and calls
 *   NAME_dmove, a runtime-free copy of cpu_dyn_move written once into NAME.c, which zeroes
 *   the result's padding and moves the cut operation's elements;
 * - a float sum (f32, f64) over dynamic dimensions of more than 16 elements at the bounds:
 *   the interpreter adds init + a pairwise sum (src/interp/interp_reduce.c: leaves of 16
 *   summed in order, halves split at n / 2) over the reduced elements in row-major order
 *   of their sizes, a tree that depends on the size; NAME_dsum gathers each result
 *   element's inputs at the sizes into a scratch block and sums them by the same tree.
 *
 * Where the interpreter reports an error (sizes that disagree, a slice or an update larger
 * than the operand's size, pad to a negative size, dynamic-reshape sizes out of range or
 * not holding the operand's elements), the step fails with NAME_ERROR_DYNAMIC_MISMATCH
 * (NAME_ERROR_DYNAMIC_SIZE for a dynamic-reshape size outside its bound) and a message
 * naming the instruction: the rules' own words where exec_dynamic_sizes has them, else
 * this file's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/aot_internal.h"
#include "exec/dynamic.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* The descriptor's operations, as cpu_dyn_op's. */
enum { OP_RESHAPE, OP_CONCAT, OP_PAD, OP_REVERSE, OP_SLICE, OP_UPDATE };

/* ---- the helpers written into NAME.c ------------------------------------------------------ */

/* '@' stands for the symbol prefix. Row-major strides, which both helpers use. */
static const char *const dstrides_text[] = {
    "static void @_dstrides(int64_t rank, const int64_t *dims, int64_t *out) {\n"
    "    int64_t st = 1;\n"
    "    for (int64_t d = rank - 1; d >= 0; d--) {\n"
    "        out[d] = st;\n"
    "        st *= dims[d];\n"
    "    }\n"
    "}\n\n",
    NULL};

static const char *const dmove_text[] = {
    "/* Moves by run-time sizes (the JIT's cpu_dyn_move, src/cpu/cpu_dynamic.c): a result and\n"
    " * its sources as row-major arrays at their bounds with their sizes. op: 0 reshape (the\n"
    " * source's cut elements in row-major order), 1 concatenate along dim, 2 pad (source 0 at\n"
    " * lo + i * (interior + 1), source 1 a scalar elsewhere), 3 reverse the flip dims, 4 slice\n"
    " * from start, 5 source 0 with source 1 written at start.\n"
    " * Its arrays are the calling step's, sized from its instruction: dims, sizes, lo,\n"
    " * interior, start and flip of rank entries, src and src_rank of count, src_dims and\n"
    " * src_sizes a row of width (the largest rank, at least 1) per source, work (the\n"
    " * strides and indices) (count + 4) * width. */\n"
    "typedef struct @_dmove_desc {\n"
    "    int op;\n"
    "    int64_t rank, count, dim, width;\n"
    "    const int64_t *dims, *sizes;\n"
    "    size_t elem;\n"
    "    const char *const *src;\n"
    "    const int64_t *src_rank, *src_dims, *src_sizes;\n"
    "    const int64_t *lo, *interior, *start;\n"
    "    const unsigned char *flip;\n"
    "    int64_t *work;\n"
    "} @_dmove_desc;\n\n",
    "static void @_dfill_n(char *dst, const char *v, int64_t n, size_t elem) {\n"
    "    for (int64_t j = 0; j < n; j++) memcpy(dst + (size_t)j * elem, v, elem);\n"
    "}\n\n",
    "static void @_dreshape(const @_dmove_desc *m, char *y, const int64_t *ystr,\n"
    "                       const int64_t *sstr, int64_t *ri, int64_t *si) {\n"
    "    int64_t rank = m->rank, xrank = m->src_rank[0], total = 1, rj = 0, sj = 0;\n"
    "    const int64_t *xs = m->src_sizes;\n"
    "    size_t elem = m->elem;\n"
    "    for (int64_t d = 0; d < rank; d++) ri[d] = 0;\n"
    "    for (int64_t d = 0; d < xrank; d++) si[d] = 0;\n"
    "    for (int64_t d = 0; d < rank; d++) total *= m->sizes[d];\n"
    "    int64_t rn = rank ? m->sizes[rank - 1] : 1, sn = xrank ? xs[xrank - 1] : 1;\n"
    "    while (total > 0) {\n"
    "        int64_t yoff = rj, soff = sj;\n"
    "        for (int64_t d = 0; d + 1 < rank; d++) yoff += ri[d] * ystr[d];\n"
    "        for (int64_t d = 0; d + 1 < xrank; d++) soff += si[d] * sstr[d];\n"
    "        int64_t chunk = rn - rj < sn - sj ? rn - rj : sn - sj;\n"
    "        if (chunk > total) chunk = total;\n"
    "        memcpy(y + (size_t)yoff * elem, m->src[0] + (size_t)soff * elem,\n"
    "               (size_t)chunk * elem);\n"
    "        rj += chunk;\n"
    "        sj += chunk;\n"
    "        total -= chunk;\n"
    "        if (rj == rn) {\n"
    "            rj = 0;\n"
    "            for (int64_t d = rank - 2; d >= 0 && ++ri[d] == m->sizes[d]; d--) ri[d] = 0;\n"
    "        }\n"
    "        if (sj == sn) {\n"
    "            sj = 0;\n"
    "            for (int64_t d = xrank - 2; d >= 0 && ++si[d] == xs[d]; d--) si[d] = 0;\n"
    "        }\n"
    "    }\n"
    "}\n\n",
    "/* One row of the result (its last dimension, n elements at row) at outer index idx;\n"
    " * source k's strides at sstr + k * width. */\n"
    "static void @_drow(const @_dmove_desc *m, char *row, const int64_t *idx, int64_t n,\n"
    "                   const int64_t *sstr) {\n"
    "    int64_t last = m->rank - 1, w = m->width;\n"
    "    size_t elem = m->elem;\n"
    "    const int64_t *xs = m->src_sizes, *zs = m->src_sizes;\n"
    "    if (m->op == 1) {\n"
    "        int64_t c = m->dim;\n"
    "        if (c != last) {\n"
    "            int64_t at = idx[c], k = 0, off = 0;\n"
    "            while (k < m->count - 1 && at >= zs[k * w + c]) at -= zs[w * k++ + c];\n"
    "            for (int64_t d = 0; d < last; d++) off += (d == c ? at : idx[d]) * sstr[k * w + "
    "d];\n"
    "            memcpy(row, m->src[k] + (size_t)off * elem, (size_t)n * elem);\n"
    "            return;\n"
    "        }\n"
    "        int64_t pos = 0;\n"
    "        for (int64_t k = 0; k < m->count; k++) {\n"
    "            int64_t off = 0, len = zs[k * w + last];\n"
    "            for (int64_t d = 0; d < last; d++) off += idx[d] * sstr[k * w + d];\n"
    "            if (len > 0)\n"
    "                memcpy(row + (size_t)pos * elem, m->src[k] + (size_t)off * elem,\n"
    "                       (size_t)len * elem);\n"
    "            pos += len;\n"
    "        }\n"
    "        return;\n"
    "    }\n",
    "    if (m->op == 2) {\n"
    "        int64_t off = 0;\n"
    "        for (int64_t d = 0; d < last; d++) {\n"
    "            int64_t p = idx[d] - m->lo[d], every = m->interior[d] + 1;\n"
    "            if (p < 0 || p % every != 0 || p / every >= xs[d]) {\n"
    "                @_dfill_n(row, m->src[1], n, elem); /* a row of padding */\n"
    "                return;\n"
    "            }\n"
    "            off += p / every * sstr[d];\n"
    "        }\n"
    "        int64_t lo = m->lo[last], every = m->interior[last] + 1;\n"
    "        const char *x = m->src[0] + (size_t)off * elem;\n"
    "        for (int64_t j = 0; j < n; j++) {\n"
    "            int64_t p = j - lo;\n"
    "            int in = p >= 0 && p % every == 0 && p / every < xs[last];\n"
    "            memcpy(row + (size_t)j * elem, in ? x + (size_t)(p / every) * elem : m->src[1],\n"
    "                   elem);\n"
    "        }\n"
    "        return;\n"
    "    }\n",
    "    if (m->op == 3) {\n"
    "        int64_t off = 0;\n"
    "        for (int64_t d = 0; d < last; d++)\n"
    "            off += (m->flip[d] ? xs[d] - 1 - idx[d] : idx[d]) * sstr[d];\n"
    "        const char *x = m->src[0] + (size_t)off * elem;\n"
    "        for (int64_t j = 0; j < n; j++)\n"
    "            memcpy(row + (size_t)j * elem,\n"
    "                   x + (size_t)(m->flip[last] ? xs[last] - 1 - j : j) * elem, elem);\n"
    "        return;\n"
    "    }\n"
    "    if (m->op == 4) {\n"
    "        int64_t off = m->start[last];\n"
    "        for (int64_t d = 0; d < last; d++) off += (m->start[d] + idx[d]) * sstr[d];\n"
    "        memcpy(row, m->src[0] + (size_t)off * elem, (size_t)n * elem);\n"
    "        return;\n"
    "    }\n"
    "    {\n"
    "        int64_t xoff = 0, uoff = 0, len = zs[w + last];\n"
    "        int inside = 1;\n"
    "        for (int64_t d = 0; d < last; d++) {\n"
    "            int64_t u = idx[d] - m->start[d];\n"
    "            inside = inside && u >= 0 && u < zs[w + d];\n"
    "            xoff += idx[d] * sstr[d];\n"
    "            uoff += u * sstr[w + d];\n"
    "        }\n"
    "        memcpy(row, m->src[0] + (size_t)xoff * elem, (size_t)n * elem);\n"
    "        if (inside && len > 0)\n"
    "            memcpy(row + (size_t)m->start[last] * elem, m->src[1] + (size_t)uoff * elem,\n"
    "                   (size_t)len * elem);\n"
    "    }\n"
    "}\n\n",
    "/* Zeros in the result's padding (the interpreter's results have zeros there), then the\n"
    " * value. */\n"
    "static void @_dmove(const @_dmove_desc *m, void *out) {\n"
    "    int64_t rank = m->rank, total = 1, w = m->width;\n"
    "    int64_t *ystr = m->work, *sstr = ystr + w, *idx = sstr + m->count * w, *idx2 = idx + w;\n"
    "    size_t elem = m->elem;\n"
    "    char *y = (char *)out;\n"
    "    @_dstrides(rank, m->dims, ystr);\n"
    "    for (int64_t d = 0; d < rank; d++) total *= m->dims[d];\n"
    "    if (total > 0) memset(y, 0, (size_t)total * elem);\n"
    "    for (int64_t d = 0; d < rank; d++)\n"
    "        if (m->sizes[d] <= 0) return;\n"
    "    for (int64_t k = 0; k < m->count; k++)\n"
    "        @_dstrides(m->src_rank[k], m->src_dims + k * w, sstr + k * w);\n"
    "    if (m->op == 0) {\n"
    "        @_dreshape(m, y, ystr, sstr, idx, idx2);\n"
    "        return;\n"
    "    }\n"
    "    if (rank == 0) { /* one element: the operand's, or the update's */\n"
    "        memcpy(y, m->op == 5 ? m->src[1] : m->src[0], elem);\n"
    "        return;\n"
    "    }\n"
    "    int64_t n = m->sizes[rank - 1];\n"
    "    for (int64_t d = 0; d < rank; d++) idx[d] = 0;\n"
    "    for (;;) {\n"
    "        int64_t yoff = 0, d = rank - 2;\n"
    "        for (int64_t e = 0; e + 1 < rank; e++) yoff += idx[e] * ystr[e];\n"
    "        @_drow(m, y + (size_t)yoff * elem, idx, n, sstr);\n"
    "        while (d >= 0 && ++idx[d] == m->sizes[d]) idx[d--] = 0;\n"
    "        if (d < 0) break;\n"
    "    }\n"
    "}\n\n",
    NULL};

static const char *const dsum_text[] = {
    "/* The interpreter's pairwise sum (src/interp/interp_reduce.c): leaves of up to 16\n"
    " * elements summed in order, halves split at n / 2. */\n"
    "static float @_dpair_f32(const float *x, int64_t n) {\n"
    "    if (n <= 16) {\n"
    "        float s = x[0];\n"
    "        for (int64_t r = 1; r < n; r++) s += x[r];\n"
    "        return s;\n"
    "    }\n"
    "    return @_dpair_f32(x, n / 2) + @_dpair_f32(x + n / 2, n - n / 2);\n"
    "}\n\n",
    "static double @_dpair_f64(const double *x, int64_t n) {\n"
    "    if (n <= 16) {\n"
    "        double s = x[0];\n"
    "        for (int64_t r = 1; r < n; r++) s += x[r];\n"
    "        return s;\n"
    "    }\n"
    "    return @_dpair_f64(x, n / 2) + @_dpair_f64(x + n / 2, n - n / 2);\n"
    "}\n\n",
    "/* out (ydims at its bounds, zeros in its padding) = init + the pairwise sum, for each\n"
    " * element at the kept dims' sizes, of x's elements (xdims at the bounds, xsizes) over\n"
    " * the reduced dims in row-major order of their sizes, gathered into tmp. f64: double,\n"
    " * else float. */\n"
    "static void @_dsum(int f64, void *out, const int64_t *ydims, int64_t yrank,\n"
    "                   const void *x, const int64_t *xdims, const int64_t *xsizes,\n"
    "                   int64_t xrank, const unsigned char *reduced, const void *init,\n"
    "                   void *tmp, int64_t *work) {\n"
    "    /* work: 5 * xrank + yrank entries (the calling step's, sized from its instruction) */\n"
    "    size_t elem = f64 ? 8 : 4;\n"
    "    int64_t *xstr = work, *kept = xstr + xrank, *red = kept + xrank, *ki = red + xrank;\n"
    "    int64_t *ri = ki + xrank, *ystr = ri + xrank, nk = 0, nr = 0, count = 1, total = 1;\n"
    "    @_dstrides(xrank, xdims, xstr);\n"
    "    @_dstrides(yrank, ydims, ystr);\n"
    "    for (int64_t d = 0; d < yrank; d++) total *= ydims[d];\n"
    "    if (total > 0) memset(out, 0, (size_t)total * elem);\n"
    "    for (int64_t d = 0; d < xrank; d++) {\n"
    "        if (reduced[d]) {\n"
    "            red[nr++] = d;\n"
    "            count *= xsizes[d];\n"
    "        } else {\n"
    "            kept[nk++] = d;\n"
    "        }\n"
    "    }\n"
    "    for (int64_t j = 0; j < nk; j++)\n"
    "        if (xsizes[kept[j]] <= 0) return;\n"
    "    for (int64_t j = 0; j < nk; j++) ki[j] = 0;\n"
    "    for (;;) {\n"
    "        int64_t base = 0, yoff = 0;\n"
    "        for (int64_t j = 0; j < nk; j++) {\n"
    "            base += ki[j] * xstr[kept[j]];\n"
    "            yoff += ki[j] * ystr[j];\n"
    "        }\n"
    "        for (int64_t j = 0; j < nr; j++) ri[j] = 0;\n"
    "        for (int64_t e = 0; e < count; e++) {\n"
    "            int64_t off = base;\n"
    "            for (int64_t j = 0; j < nr; j++) off += ri[j] * xstr[red[j]];\n"
    "            memcpy((char *)tmp + (size_t)e * elem, (const char *)x + (size_t)off * elem,\n"
    "                   elem);\n"
    "            for (int64_t j = nr - 1; j >= 0 && ++ri[j] == xsizes[red[j]]; j--) ri[j] = 0;\n"
    "        }\n"
    "        char *acc = (char *)out + (size_t)yoff * elem;\n"
    "        if (f64) {\n"
    "            double a;\n"
    "            memcpy(&a, init, 8);\n"
    "            if (count > 0) a += @_dpair_f64((const double *)tmp, count);\n"
    "            memcpy(acc, &a, 8);\n"
    "        } else {\n"
    "            float a;\n"
    "            memcpy(&a, init, 4);\n"
    "            if (count > 0) a += @_dpair_f32((const float *)tmp, count);\n"
    "            memcpy(acc, &a, 4);\n"
    "        }\n"
    "        int64_t j = nk - 1;\n"
    "        while (j >= 0 && ++ki[j] == xsizes[kept[j]]) ki[j--] = 0;\n"
    "        if (j < 0) break;\n"
    "    }\n"
    "}\n\n",
    NULL};

static void put_template(cxla_strbuf *b, const char *const *text, const char *P) {
    for (; *text; text++)
        for (const char *p = *text; *p; p++) {
            if (*p == '@')
                cxla_strbuf_puts(b, P);
            else
                cxla_strbuf_putc(b, *p);
        }
}

void aot_dmove_helpers(const aot *a, cxla_strbuf *c) {
    if (a->dmove_used || a->dsum_used) put_template(c, dstrides_text, a->P);
    if (a->dmove_used) put_template(c, dmove_text, a->P);
    if (a->dsum_used) put_template(c, dsum_text, a->P);
}

/* ---- the steps ------------------------------------------------------------------------------ */

cxla_status aot_dmove_step(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins, int64_t nin,
                           const cxla_shape *const *shapes, aot_bounds bk, int64_t *lv) {
    int64_t *outs = NULL;
    if (in->shape.type == CXLA_TUPLE) return aot_no(in, "a move with a tuple result");
    CXLA_RETURN_IF_ERROR(aot_add_step(c, S_DMOVE, in, ins, nin, shapes, 1, &outs));
    lv[0] = outs[0];
    astep *st = &c->steps[c->step_count - 1];
    st->bounds = bk;
    if (bk == AB_SUM) {
        /* The block of one result element's inputs at the bounds. */
        const cxla_shape *xs = &in->operands[0]->shape;
        int64_t nd = 0, count = 1;
        const int64_t *rd = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
        for (int64_t i = 0; i < nd; i++)
            if (rd[i] >= 0 && rd[i] < xs->rank) count *= xs->dims[rd[i]];
        st->tmp = malloc(sizeof(int64_t));
        if (!st->tmp) return OOM();
        st->tmp[st->tmp_count++] = aot_add_leaf(
            c, (aleaf){.kind = L_ARENA,
                       .size = (size_t)(count ? count : 1) * cxla_type_storage(xs->type)});
        if (st->tmp[0] < 0) return OOM();
        a->dsum_used = true;
    } else {
        a->dmove_used = true;
    }
    return NULL;
}

/* "ind" + 4 spaces, in a small buffer. */
static const char *deeper(char *buf, size_t n, const char *ind) {
    snprintf(buf, n, "%s    ", ind);
    return buf;
}

/* Fails when |cond| (a C expression) holds, with |fmt| over |vals| (aot_dyn_put_fail). */
static void put_check(aot *a, cxla_strbuf *b, const char *ind, const cxla_instr *in,
                      const char *cond, const char *code, const char *fmt, const char *const *vals,
                      int nv) {
    char d[64];
    cxla_strbuf_printf(b, "%sif (%s)\n", ind, cond);
    aot_dyn_put_fail(a, b, deeper(d, sizeof d, ind), in, code, fmt, vals, nv);
}

/* `int64_t NAME = <the integer scalar at |ptr|>;` as interp_load_indices loads it (u64
 * beyond INT64_MAX clamped to it; sub-byte integers one per byte, sign- or
 * zero-extended). */
static void put_index(cxla_strbuf *b, const char *ind, cxla_type t, const char *ptr,
                      const char *name) {
    size_t bytes = cxla_type_storage(t);
    bool sgn = cxla_type_is_signed(t);
    const char *ct = bytes == 8   ? (sgn ? "int64_t" : "uint64_t")
                     : bytes == 4 ? (sgn ? "int32_t" : "uint32_t")
                     : bytes == 2 ? (sgn ? "int16_t" : "uint16_t")
                                  : (sgn ? "int8_t" : "uint8_t");
    cxla_strbuf_printf(b, "%sint64_t %s;\n%s{\n%s    %s v;\n%s    memcpy(&v, %s, sizeof v);\n", ind,
                       name, ind, ind, ct, ind, ptr);
    if (bytes == 8 && !sgn)
        cxla_strbuf_printf(b, "%s    %s = v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;\n", ind,
                           name);
    else
        cxla_strbuf_printf(b, "%s    %s = (int64_t)v;\n", ind, name);
    cxla_strbuf_printf(b, "%s}\n", ind);
}

/* The result's sizes (rz0) against its declared shape, as the interpreter puts the result
 * back into it. */
static void put_declared(aot *a, cxla_strbuf *b, const char *ind, const cxla_instr *in) {
    const cxla_shape *ys = &in->shape;
    for (int64_t d = 0; d < ys->rank; d++) {
        char cond[160], dn[48], bn[48], od[48];
        snprintf(dn, sizeof dn, "%" PRId64, d);
        snprintf(bn, sizeof bn, "%" PRId64, ys->dims[d]);
        snprintf(od, sizeof od, "rz0[%" PRId64 "]", d);
        if (exec_shape_dim_dynamic(ys, d)) {
            snprintf(cond, sizeof cond, "%s > %s", od, bn);
            const char *vals[3] = {dn, od, bn};
            put_check(a, b, ind, in, cond, "ERROR_DYNAMIC_MISMATCH", EXEC_DYN_MSG_BEYOND_BOUND,
                      vals, 3);
        } else {
            snprintf(cond, sizeof cond, "%s != %s", od, bn);
            const char *vals[3] = {dn, bn, od};
            put_check(a, b, ind, in, cond, "ERROR_DYNAMIC_MISMATCH", EXEC_DYN_MSG_STATIC_RESULT,
                      vals, 3);
        }
    }
}

/* "(const int64_t[]){dims}" of |s|. */
static void put_dims(const cxla_shape *s, cxla_strbuf *b) {
    cxla_strbuf_puts(b, "(const int64_t[]){");
    for (int64_t d = 0; d < s->rank; d++)
        cxla_strbuf_printf(b, "%s%" PRId64, d ? ", " : "", s->dims[d]);
    cxla_strbuf_puts(b, s->rank ? "}" : "0}");
}

/* The sizes and the descriptor of a move; then the call. */
static cxla_status put_move(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const cxla_shape *ys = &in->shape, *xs = &in->operands[0]->shape;
    const char *P = a->P, *I = "        ";
    int64_t n = in->operand_count;
    int64_t moved = in->opcode == CXLA_OP_CONCATENATE                                         ? n
                    : in->opcode == CXLA_OP_DYNAMIC_UPDATE_SLICE || in->opcode == CXLA_OP_PAD ? 2
                                                                                              : 1;
    if (st->in_count != n || moved > n) return aot_no(in, "a move with odd operands");
    cxla_status s = NULL;
    char v[6][64], cond[160];
    int op = OP_RESHAPE;
    switch (in->opcode) {
    case CXLA_OP_RESHAPE:
    case CXLA_OP_CONCATENATE:
    case CXLA_OP_REVERSE: {
        /* The operands' sizes as C expressions, one per operand. */
        const char **ops = malloc((size_t)(n ? n : 1) * sizeof(*ops));
        char(*opb)[32] = malloc((size_t)(n ? n : 1) * sizeof(*opb));
        if (!ops || !opb) {
            free(ops);
            free(opb);
            return OOM();
        }
        for (int64_t k = 0; k < n; k++) {
            snprintf(opb[k], sizeof opb[k], "oz[%" PRId64 "]", k);
            ops[k] = opb[k];
        }
        s = aot_dyn_put_rule(a, b, I, in, ops, "rz0");
        free(ops);
        free(opb);
        op = in->opcode == CXLA_OP_CONCATENATE ? OP_CONCAT
             : in->opcode == CXLA_OP_REVERSE   ? OP_REVERSE
                                               : OP_RESHAPE;
        break;
    }
    case CXLA_OP_PAD: {
        const cxla_attr *at = cxla_instr_attr(in, CXLA_ATTR_PADDING);
        if (!at || at->kind != CXLA_ATTR_KIND_PADDING || at->v.padding.rank != xs->rank)
            return aot_no(in, "needs a padding= for each dimension");
        op = OP_PAD;
        for (int64_t d = 0; d < xs->rank; d++) {
            const cxla_pad_dim *p = &at->v.padding.dims[d];
            /* shape inference's size at the cut sizes (bounded: no overflow). */
            cxla_strbuf_printf(b,
                               "%srz0[%" PRId64 "] = (oz[0][%" PRId64 "] > 0 ? oz[0][%" PRId64
                               "] - 1 : 0) * %" PRId64 " + oz[0][%" PRId64 "] + %" PRId64
                               " + %" PRId64 ";\n",
                               I, d, d, d, p->interior, d, p->low, p->high);
            snprintf(cond, sizeof cond, "rz0[%" PRId64 "] < 0", d);
            snprintf(v[0], 64, "%" PRId64, d);
            snprintf(v[1], 64, "oz[0][%" PRId64 "]", d);
            const char *vals[2] = {v[0], v[1]};
            put_check(a, b, I, in, cond, "ERROR_DYNAMIC_MISMATCH",
                      "padding dimension %" PRId64 " of dynamic size %" PRId64
                      " gives a negative size",
                      vals, 2);
        }
        put_declared(a, b, I, in);
        break;
    }
    case CXLA_OP_DYNAMIC_SLICE: {
        int64_t na = 0;
        const int64_t *want = cxla_instr_ints(in, CXLA_ATTR_DYNAMIC_SLICE_SIZES, &na);
        if (na != xs->rank) return aot_no(in, "needs dynamic_slice_sizes for each dimension");
        op = OP_SLICE;
        for (int64_t d = 0; d < xs->rank; d++) {
            /* The whole of a dynamic dimension follows the operand's size (cpu_dyn_move_plan). */
            if (exec_shape_dim_dynamic(ys, d) && want[d] == xs->dims[d])
                cxla_strbuf_printf(b, "%srz0[%" PRId64 "] = oz[0][%" PRId64 "];\n", I, d, d);
            else
                cxla_strbuf_printf(b, "%srz0[%" PRId64 "] = %" PRId64 ";\n", I, d, want[d]);
            /* The interpreter's words (interp_dynamic.c, its cut of a dynamic-slice). */
            snprintf(cond, sizeof cond, "rz0[%" PRId64 "] > oz[0][%" PRId64 "]", d, d);
            snprintf(v[0], 64, "rz0[%" PRId64 "]", d);
            snprintf(v[1], 64, "oz[0][%" PRId64 "]", d);
            snprintf(v[2], 64, "%" PRId64, d);
            const char *vals[3] = {v[0], v[1], v[2]};
            put_check(a, b, I, in, cond, "ERROR_DYNAMIC_MISMATCH",
                      "a slice of %" PRId64 " elements does not fit the dynamic size %" PRId64
                      " of dimension %" PRId64,
                      vals, 3);
        }
        put_declared(a, b, I, in);
        break;
    }
    case CXLA_OP_DYNAMIC_UPDATE_SLICE: {
        op = OP_UPDATE;
        /* The interpreter's words: shape inference over the operands cut to their sizes
         * (interp_dynamic.c), the update's and the operand's cut shapes in full. */
        const cxla_shape *us = &in->operands[1]->shape;
        if (us->rank != xs->rank) return aot_no(in, "an update of another rank");
        const char **vals = malloc((size_t)(2 * xs->rank + 1) * sizeof(*vals));
        char(*vb)[32] = malloc((size_t)(2 * xs->rank + 1) * sizeof(*vb));
        cxla_strbuf f;
        cxla_strbuf_init(&f);
        s = vals && vb ? NULL : OOM();
        for (int64_t d = 0; !s && d < xs->rank; d++) {
            cxla_strbuf_printf(b, "%srz0[%" PRId64 "] = oz[0][%" PRId64 "];\n", I, d, d);
            snprintf(cond, sizeof cond, "oz[1][%" PRId64 "] > oz[0][%" PRId64 "]", d, d);
            cxla_strbuf_free(&f);
            cxla_strbuf_init(&f);
            cxla_strbuf_printf(&f,
                               "at the operands' dynamic sizes: dynamic-update-slice: the update "
                               "%s[",
                               cxla_type_name(us->type));
            for (int64_t e = 0; e < xs->rank; e++) {
                cxla_strbuf_puts(&f, e ? ",%" PRId64 : "%" PRId64);
                snprintf(vb[e], sizeof vb[e], "oz[1][%" PRId64 "]", e);
                vals[e] = vb[e];
            }
            cxla_strbuf_printf(&f, "] is larger than the operand %s[", cxla_type_name(xs->type));
            for (int64_t e = 0; e < xs->rank; e++) {
                cxla_strbuf_puts(&f, e ? ",%" PRId64 : "%" PRId64);
                snprintf(vb[xs->rank + e], sizeof vb[e], "oz[0][%" PRId64 "]", e);
                vals[xs->rank + e] = vb[xs->rank + e];
            }
            cxla_strbuf_printf(&f, "] in dimension %" PRId64, d);
            if (f.failed || !f.data) s = OOM();
            if (!s)
                put_check(a, b, I, in, cond, "ERROR_DYNAMIC_MISMATCH", f.data, vals,
                          (int)(2 * xs->rank));
        }
        cxla_strbuf_free(&f);
        free(vals);
        free(vb);
        if (s) return s;
        put_declared(a, b, I, in);
        break;
    }
    case CXLA_OP_DYNAMIC_RESHAPE: {
        op = OP_RESHAPE;
        cxla_strbuf_printf(b, "%sint64_t real = 1, count = 1;\n", I);
        for (int64_t d = 0; d < xs->rank; d++)
            cxla_strbuf_printf(b, "%sreal *= oz[0][%" PRId64 "];\n", I, d);
        for (int64_t d = 0; d < ys->rank; d++) {
            char name[32], ptr[200];
            cxla_strbuf pb;
            cxla_strbuf_init(&pb);
            aot_put_leaf(a, c, st->in[1 + d], &pb);
            snprintf(ptr, sizeof ptr, "%s", pb.data ? pb.data : "0");
            cxla_strbuf_free(&pb);
            snprintf(name, sizeof name, "sz%" PRId64, d);
            put_index(b, I, in->operands[1 + d]->shape.type, ptr, name);
            bool dyn = exec_shape_dim_dynamic(ys, d);
            if (dyn)
                snprintf(cond, sizeof cond, "%s < 0 || %s > %" PRId64, name, name, ys->dims[d]);
            else
                snprintf(cond, sizeof cond, "%s != %" PRId64, name, ys->dims[d]);
            snprintf(v[0], 64, "%s", name);
            snprintf(v[1], 64, "%" PRId64, d);
            snprintf(v[2], 64, "%" PRId64, ys->dims[d]);
            const char *vals[3] = {v[0], v[1], v[2]};
            put_check(a, b, I, in, cond, "ERROR_DYNAMIC_SIZE",
                      dyn ? "size %" PRId64 " of result dimension %" PRId64
                            " is outside its bound 0..%" PRId64
                          : "size %" PRId64 " of result dimension %" PRId64
                            " is not its static size %" PRId64,
                      vals, 3);
            cxla_strbuf_printf(b, "%srz0[%" PRId64 "] = %s;\n%scount *= %s;\n", I, d, name, I,
                               name);
        }
        const char *vals[2] = {"real", "count"};
        put_check(a, b, I, in, "real != count", "ERROR_DYNAMIC_MISMATCH",
                  "the operand holds %" PRId64 " elements at its dynamic sizes but the sizes "
                  "give the result %" PRId64,
                  vals, 2);
        cxla_strbuf_printf(b, "%s(void)real;\n%s(void)count;\n", I, I);
        break;
    }
    default: return aot_no(in, "not a move of dynamic sizes");
    }
    if (s) return s;
    /* The descriptor, over arrays of this step sized from the instruction: a row of
     * |width| entries per source (the largest rank, at least 1). */
    int64_t width = ys->rank > 0 ? ys->rank : 1;
    for (int64_t k = 0; k < moved; k++)
        if (in->operands[k]->shape.rank > width) width = in->operands[k]->shape.rank;
    int64_t r1 = ys->rank > 0 ? ys->rank : 1;
    cxla_strbuf_printf(b,
                       "%sint64_t dm_dims[%" PRId64 "] = {0}, dm_sizes[%" PRId64
                       "] = {0}, dm_lo[%" PRId64 "] = {0}, dm_interior[%" PRId64
                       "] = {0}, dm_start[%" PRId64 "] = {0};\n"
                       "%sunsigned char dm_flip[%" PRId64 "] = {0};\n"
                       "%sconst char *dm_src[%" PRId64 "] = {0};\n"
                       "%sint64_t dm_src_rank[%" PRId64 "] = {0}, dm_src_dims[%" PRId64
                       "] = {0}, dm_src_sizes[%" PRId64 "] = {0}, dm_work[%" PRId64 "];\n",
                       I, r1, r1, r1, r1, r1, I, r1, I, moved, I, moved, moved * width,
                       moved * width, (moved + 4) * width);
    cxla_strbuf_printf(b,
                       "%s%s_dmove_desc m;\n%smemset(&m, 0, sizeof m);\n%sm.op = %d;\n"
                       "%sm.rank = %" PRId64 ";\n%sm.count = %" PRId64 ";\n%sm.width = %" PRId64
                       ";\n%sm.elem = %zu;\n"
                       "%sm.dims = dm_dims;\n%sm.sizes = dm_sizes;\n%sm.lo = dm_lo;\n"
                       "%sm.interior = dm_interior;\n%sm.start = dm_start;\n%sm.flip = dm_flip;\n"
                       "%sm.src = dm_src;\n%sm.src_rank = dm_src_rank;\n"
                       "%sm.src_dims = dm_src_dims;\n%sm.src_sizes = dm_src_sizes;\n"
                       "%sm.work = dm_work;\n",
                       I, P, I, I, op, I, ys->rank, I, moved, I, width, I,
                       cxla_type_storage(ys->type), I, I, I, I, I, I, I, I, I, I, I);
    for (int64_t d = 0; d < ys->rank; d++)
        cxla_strbuf_printf(b,
                           "%sdm_dims[%" PRId64 "] = %" PRId64 ";\n%sdm_sizes[%" PRId64
                           "] = rz0[%" PRId64 "];\n",
                           I, d, ys->dims[d], I, d, d);
    int64_t cdim = -1;
    if (op == OP_CONCAT) {
        int64_t nd = 0;
        cdim = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd)[0];
        cxla_strbuf_printf(b, "%sm.dim = %" PRId64 ";\n", I, cdim);
    }
    for (int64_t k = 0; k < moved; k++) {
        const cxla_shape *ks = &in->operands[k]->shape;
        cxla_strbuf_printf(b, "%sdm_src[%" PRId64 "] = (const char *)", I, k);
        aot_put_leaf(a, c, st->in[k], b);
        cxla_strbuf_printf(b, ";\n%sdm_src_rank[%" PRId64 "] = %" PRId64 ";\n", I, k, ks->rank);
        for (int64_t d = 0; d < ks->rank; d++) {
            /* A concatenate's operands lined up with the result's sizes in the other
             * dimensions (a static operand cut to a dynamic one's size). */
            bool cut = op == OP_CONCAT && d != cdim;
            cxla_strbuf_printf(b, "%sdm_src_dims[%" PRId64 "] = %" PRId64 ";\n", I, k * width + d,
                               ks->dims[d]);
            if (cut)
                cxla_strbuf_printf(b, "%sdm_src_sizes[%" PRId64 "] = rz0[%" PRId64 "];\n", I,
                                   k * width + d, d);
            else
                cxla_strbuf_printf(b,
                                   "%sdm_src_sizes[%" PRId64 "] = oz[%" PRId64 "][%" PRId64 "];\n",
                                   I, k * width + d, k, d);
        }
    }
    if (op == OP_PAD) {
        const cxla_attr *at = cxla_instr_attr(in, CXLA_ATTR_PADDING);
        for (int64_t d = 0; d < xs->rank; d++)
            cxla_strbuf_printf(
                b,
                "%sdm_lo[%" PRId64 "] = %" PRId64 ";\n%sdm_interior[%" PRId64 "] = %" PRId64 ";\n",
                I, d, at->v.padding.dims[d].low, I, d, at->v.padding.dims[d].interior);
    }
    if (op == OP_REVERSE) {
        int64_t nd = 0;
        const int64_t *dims = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
        for (int64_t i = 0; i < nd; i++)
            if (dims[i] >= 0 && dims[i] < ys->rank)
                cxla_strbuf_printf(b, "%sdm_flip[%" PRId64 "] = 1;\n", I, dims[i]);
    }
    if (op == OP_SLICE || op == OP_UPDATE) {
        int64_t first = op == OP_SLICE ? 1 : 2;
        bool vector = aot_dmove_vector_starts(in); /* the older form: one vector of starts */
        for (int64_t d = 0; d < xs->rank; d++) {
            char name[32], ptr[200];
            cxla_type it = in->operands[vector ? first : first + d]->shape.type;
            cxla_strbuf pb;
            cxla_strbuf_init(&pb);
            if (vector) cxla_strbuf_puts(&pb, "((const char *)");
            aot_put_leaf(a, c, st->in[vector ? first : first + d], &pb);
            if (vector) cxla_strbuf_printf(&pb, " + %zu)", (size_t)d * cxla_type_storage(it));
            snprintf(ptr, sizeof ptr, "%s", pb.data ? pb.data : "0");
            cxla_strbuf_free(&pb);
            snprintf(name, sizeof name, "st%" PRId64, d);
            put_index(b, I, it, ptr, name);
            /* Clamped into 0 .. size - extent, as the interpreter (and XLA) clamp. */
            const char *ext = op == OP_SLICE ? "rz0" : "oz[1]";
            cxla_strbuf_printf(b,
                               "%s{\n%s    int64_t hi = oz[0][%" PRId64 "] - %s[%" PRId64
                               "];\n%s    dm_start[%" PRId64 "] = %s < 0 ? 0 : %s > hi ? hi : %s;\n"
                               "%s}\n",
                               I, I, d, ext, d, I, d, name, name, name, I);
        }
    }
    cxla_strbuf_printf(b, "%s%s_dmove(&m, ", I, P);
    aot_put_leaf(a, c, st->out[0], b);
    cxla_strbuf_puts(b, ");\n");
    return NULL;
}

bool aot_dmove_vector_starts(const cxla_instr *in) {
    bool slice = in->opcode == CXLA_OP_DYNAMIC_SLICE;
    if (!slice && in->opcode != CXLA_OP_DYNAMIC_UPDATE_SLICE) return false;
    int64_t first = slice ? 1 : 2;
    const cxla_shape *xs = &in->operands[0]->shape;
    if (in->operand_count != first + 1 || xs->rank == 0) return false;
    const cxla_shape *vs = &in->operands[first]->shape;
    return vs->rank == 1 && vs->dims[0] == xs->rank;
}

/* The sizes (the reduce's rule) and the call of NAME_dsum. */
static cxla_status put_sum(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const cxla_shape *ys = &in->shape, *xs = &in->operands[0]->shape;
    const char *I = "        ";
    if (st->in_count != 2 || st->tmp_count != 1) return aot_no(in, "a sum with odd operands");
    const char *ops[2] = {"oz[0]", "oz[1]"};
    CXLA_RETURN_IF_ERROR(aot_dyn_put_rule(a, b, I, in, ops, "rz0"));
    int64_t nd = 0;
    const int64_t *rd = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    cxla_strbuf_printf(b, "%sstatic const unsigned char reduced[%" PRId64 "] = {", I,
                       xs->rank ? xs->rank : 1);
    for (int64_t d = 0; d < xs->rank; d++) {
        bool r = false;
        for (int64_t i = 0; i < nd; i++) r = r || rd[i] == d;
        cxla_strbuf_printf(b, "%s%d", d ? ", " : "", r ? 1 : 0);
    }
    /* NAME_dsum's strides and indices, sized from the instruction. */
    cxla_strbuf_printf(b, "%s};\n%sint64_t dwork[%" PRId64 "];\n%s%s_dsum(%d, ",
                       xs->rank ? "" : "0", I, 5 * xs->rank + ys->rank + 1, I, a->P,
                       xs->type == CXLA_F64 ? 1 : 0);
    aot_put_leaf(a, c, st->out[0], b);
    cxla_strbuf_puts(b, ", ");
    put_dims(ys, b);
    cxla_strbuf_printf(b, ", %" PRId64 ", ", ys->rank);
    aot_put_leaf(a, c, st->in[0], b);
    cxla_strbuf_puts(b, ", ");
    put_dims(xs, b);
    cxla_strbuf_printf(b, ", oz[0], %" PRId64 ", reduced, ", xs->rank);
    aot_put_leaf(a, c, st->in[1], b);
    cxla_strbuf_puts(b, ", ");
    aot_put_leaf(a, c, st->tmp[0], b);
    cxla_strbuf_puts(b, ", dwork);\n");
    return NULL;
}

cxla_status aot_dmove_emit(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const cxla_shape *ys = &in->shape;
    int64_t n = in->operand_count;
    cxla_strbuf_printf(b, "        const int64_t *const oz[%" PRId64 "] = {", n ? n : 1);
    for (int64_t k = 0; k < n && k < st->in_count; k++) {
        if (k) cxla_strbuf_puts(b, ", ");
        aot_dyn_put_sizes(c, st->in[k], b);
    }
    cxla_strbuf_printf(
        b, "%s};\n        int64_t rz0[%" PRId64 "];\n        (void)oz;\n        (void)rz0;\n",
        n ? "" : "0", ys->rank ? ys->rank : 1);
    CXLA_RETURN_IF_ERROR(st->bounds == AB_SUM ? put_sum(a, c, st, b) : put_move(a, c, st, b));
    int64_t l = st->out[0];
    if (c->dyn_off && c->dyn_off[l] >= 0)
        cxla_strbuf_printf(
            b, "        memcpy(dz + %" PRId64 ", rz0, %" PRId64 " * sizeof(int64_t));\n",
            c->dyn_off[l], ys->rank);
    return NULL;
}
