/* Bounded dynamic shapes in ahead-of-time output: gather and scatter over dynamic shapes
 * (aot_internal.h's AB_GATHER and AB_SCATTER; the JIT's B_INDEXED, cpu_dynamic_lib.c;
 * docs/aot.md, "Dynamic shapes"), written as C:
 *
 * - gather from a dynamic operand: the static kernel at the bounds over a copy of the
 *   indices in which each start is clamped within the operand's sizes less the slice's
 *   (the interpreter clamps within the operand cut to its sizes);
 * - scatter of one operand: the index vectors whose window the cut operand cannot hold, or
 *   that lie outside the indices' sizes, moved out of range in a copy of the indices, so
 *   the kernel at the bounds skips them as the interpreter does;
 * - both with batching dimensions (a batching dimension is a window of one at the index
 *   vector's own batch position, inside the sizes once the operand's and the indices'
 *   batching sizes agree) and with a dynamic index-vector dimension (at its bound the
 *   vectors are the static ones; below it shape inference over the cut operands fails).
 *
 * The interpreter runs shape inference over the operands cut to their sizes; the checks
 * that can fail there are written as C with its messages, in its order (phase 0: the
 * index vectors' length and the batching sizes before the result's sizes; phase 1: the
 * slice sizes, then the copy of the indices). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/aot_internal.h"
#include "cpu/emit.h"
#include "cpu/emit_internal.h"
#include "exec/dynamic.h"

bool aot_dindex_ok(const cxla_instr *in) {
    bool gather = in->opcode == CXLA_OP_GATHER;
    if ((!gather && in->opcode != CXLA_OP_SCATTER) || in->operand_count < 2) return false;
    /* A scatter of several operands: the same rewrite of its one array of indices (the
     * operands and the updates lined up by shape inference's checks, put_scatter_sizes). */
    if (!gather && in->operand_count % 2 == 0) return false;
    int64_t iv = 0;
    const cxla_shape *is = &in->operands[gather ? 1 : (in->operand_count - 1) / 2]->shape;
    if (!cxla_instr_int(in, CXLA_ATTR_INDEX_VECTOR_DIM, &iv) || iv < 0 || iv > is->rank)
        return false;
    return in->operands[0]->shape.rank <= CXLA_MAX_RANK && is->rank <= CXLA_MAX_RANK;
}

/* "s32[%,%]": a shape's type with a placeholder per dimension (its cut sizes), as shape
 * inference prints the operands it was given. */
static void put_cut_shape(cxla_strbuf *f, const cxla_shape *s) {
    cxla_strbuf_printf(f, "%s[", cxla_type_name(s->type));
    for (int64_t d = 0; d < s->rank; d++) cxla_strbuf_puts(f, d ? ",%" PRId64 : "%" PRId64);
    cxla_strbuf_puts(f, "]");
}

/* "{a,b}" of |n| integers, as shape inference prints a list. */
static void put_ints(cxla_strbuf *f, const int64_t *v, int64_t n) {
    cxla_strbuf_putc(f, '{');
    for (int64_t i = 0; i < n; i++) cxla_strbuf_printf(f, "%s%" PRId64, i ? "," : "", v[i]);
    cxla_strbuf_putc(f, '}');
}

/* The checks of shape inference over the cut operands that the sizes can fail, before the
 * result's sizes: the index vectors' length (a dynamic index-vector dimension) and the
 * batching dimensions' sizes, in the order infer_reduce.c checks them (a gather: the
 * vectors first; a scatter: the batching sizes first). xz, iz: the operand's and the
 * indices' sizes (C expressions of `const int64_t *`). */
static void put_shape_checks(aot *a, cxla_strbuf *b, const cxla_instr *in, const char *xz,
                             const char *iz) {
    bool gather = in->opcode == CXLA_OP_GATHER;
    int64_t m = gather ? 1 : (in->operand_count - 1) / 2; /* the indices' operand */
    const cxla_shape *xs = &in->operands[0]->shape, *is = &in->operands[m]->shape;
    const char *what = gather ? "gather" : "scatter";
    int64_t iv = 0, nm = 0, nob = 0, nib = 0;
    cxla_instr_int(in, CXLA_ATTR_INDEX_VECTOR_DIM, &iv);
    const int64_t *map = cxla_instr_ints(
        in, gather ? CXLA_ATTR_START_INDEX_MAP : CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, &nm);
    const int64_t *ob = cxla_instr_ints(
        in, gather ? CXLA_ATTR_OPERAND_BATCHING_DIMS : CXLA_ATTR_INPUT_BATCHING_DIMS, &nob);
    const int64_t *ib = cxla_instr_ints(in,
                                        gather ? CXLA_ATTR_START_INDICES_BATCHING_DIMS
                                               : CXLA_ATTR_SCATTER_INDICES_BATCHING_DIMS,
                                        &nib);
    const char *vals[4 + 2 * CXLA_MAX_RANK];
    char vb[4 + 2 * CXLA_MAX_RANK][64];
    for (int pass = 0; pass < 2; pass++) {
        bool vector = pass == (gather ? 0 : 1);
        if (vector && iv < is->rank && exec_shape_dim_dynamic(is, iv)) {
            cxla_strbuf f;
            cxla_strbuf_init(&f);
            cxla_strbuf_printf(&f, "at the operands' dynamic sizes: %s: %s=", what,
                               gather ? "start_index_map" : "scatter_dims_to_operand_dims");
            put_ints(&f, map, nm);
            cxla_strbuf_printf(&f, " has %" PRId64 " entries but the index vectors of ", nm);
            put_cut_shape(&f, is);
            cxla_strbuf_puts(&f, " have %" PRId64);
            int nv = 0;
            for (int64_t e = 0; e < is->rank; e++)
                snprintf(vb[nv], 64, "%s[%" PRId64 "]", iz, e), vals[nv] = vb[nv], nv++;
            snprintf(vb[nv], 64, "%s[%" PRId64 "]", iz, iv), vals[nv] = vb[nv], nv++;
            cxla_strbuf_printf(b, "            if (%s[%" PRId64 "] != %" PRId64 ")\n", iz, iv, nm);
            aot_dyn_put_fail(a, b, "                ", in, "ERROR_DYNAMIC_MISMATCH",
                             f.data ? f.data : "", vals, nv);
            cxla_strbuf_free(&f);
        }
        for (int64_t i = 0; !vector && i < nob && i < nib; i++) {
            if (ob[i] < 0 || ob[i] >= xs->rank || ib[i] < 0 || ib[i] >= is->rank) continue;
            if (!exec_shape_dim_dynamic(xs, ob[i]) && !exec_shape_dim_dynamic(is, ib[i])) continue;
            cxla_strbuf f;
            cxla_strbuf_init(&f);
            cxla_strbuf_printf(
                &f, "at the operands' dynamic sizes: %s: batching dimension %" PRId64 " of ", what,
                ob[i]);
            put_cut_shape(&f, xs);
            cxla_strbuf_printf(&f, " (size %%" PRId64 ") and %" PRId64 " of ", ib[i]);
            put_cut_shape(&f, is);
            cxla_strbuf_puts(&f, " (size %" PRId64 ") must match");
            int nv = 0;
            for (int64_t e = 0; e < xs->rank; e++)
                snprintf(vb[nv], 64, "%s[%" PRId64 "]", xz, e), vals[nv] = vb[nv], nv++;
            snprintf(vb[nv], 64, "%s[%" PRId64 "]", xz, ob[i]), vals[nv] = vb[nv], nv++;
            for (int64_t e = 0; e < is->rank; e++)
                snprintf(vb[nv], 64, "%s[%" PRId64 "]", iz, e), vals[nv] = vb[nv], nv++;
            snprintf(vb[nv], 64, "%s[%" PRId64 "]", iz, ib[i]), vals[nv] = vb[nv], nv++;
            cxla_strbuf_printf(b, "            if (%s[%" PRId64 "] != %s[%" PRId64 "])\n", xz,
                               ob[i], iz, ib[i]);
            aot_dyn_put_fail(a, b, "                ", in, "ERROR_DYNAMIC_MISMATCH",
                             f.data ? f.data : "", vals, nv);
            cxla_strbuf_free(&f);
        }
    }
}

/* Gather, phase 0: the shape checks, in a block of their own (aot_dyn.c then writes the
 * result's sizes by exec_dynamic_rule's gather rule). */
static void put_gather_checks(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    cxla_strbuf_puts(b, "        {\n            const int64_t *gx = ");
    aot_dyn_put_sizes(c, st->in[0], b);
    cxla_strbuf_puts(b, ", *gi = ");
    aot_dyn_put_sizes(c, st->in[1], b);
    cxla_strbuf_puts(b, ";\n            (void)gx;\n            (void)gi;\n");
    put_shape_checks(a, b, st->instr, "gx", "gi");
    cxla_strbuf_puts(b, "        }\n");
}

/* AB_GATHER, phase 1 (the JIT's B_INDEXED gather, cpu_dynamic_lib.c's clamp_gather): the
 * interpreter gathers from the operand cut to its sizes, so every slice must fit in them
 * (else shape inference over the cut operand fails: its message), and each start index is
 * clamped within [0, size - slice size] of its operand dimension. The indices are copied
 * so clamped into the step's last temporary, which the static kernel at the bounds reads:
 * its own clamp (within the bounds) then changes nothing, and no slice reaches the
 * padding. */
static cxla_status put_gather_indices(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const cxla_shape *xs = &in->operands[0]->shape, *is = &in->operands[1]->shape;
    int64_t iv = 0, nm = 0, ns = 0, count = 1, stride = 1;
    cxla_instr_int(in, CXLA_ATTR_INDEX_VECTOR_DIM, &iv);
    const int64_t *map = cxla_instr_ints(in, CXLA_ATTR_START_INDEX_MAP, &nm);
    const int64_t *slice = cxla_instr_ints(in, CXLA_ATTR_SLICE_SIZES, &ns);
    if (ns != xs->rank || xs->rank > CXLA_MAX_RANK || st->in_count != 2 || st->tmp_count < 1)
        return aot_no(in, "a gather whose slice sizes do not match its operand");
    /* The slices against the cut operand, in shape inference's words (infer_reduce.c). */
    cxla_strbuf f;
    cxla_strbuf_init(&f);
    cxla_strbuf_puts(&f, "at the operands' dynamic sizes: gather: slice_sizes={");
    for (int64_t d = 0; d < ns; d++) cxla_strbuf_printf(&f, "%s%" PRId64, d ? "," : "", slice[d]);
    cxla_strbuf_printf(
        &f, "}: size %%" PRId64 " of dimension %%" PRId64 " is outside 0..%%" PRId64 " of %s[",
        cxla_type_name(xs->type));
    for (int64_t d = 0; d < xs->rank; d++) cxla_strbuf_puts(&f, d ? ",%" PRId64 : "%" PRId64);
    cxla_strbuf_puts(&f, "]");
    for (int64_t d = 0; d < xs->rank; d++) {
        if (!exec_shape_dim_dynamic(xs, d)) continue;
        cxla_strbuf_printf(b, "        if (oz[0][%" PRId64 "] < %" PRId64 ")\n", d, slice[d]);
        const char *vals[3 + CXLA_MAX_RANK];
        char vb[3 + CXLA_MAX_RANK][32];
        snprintf(vb[0], 32, "%" PRId64, slice[d]);
        snprintf(vb[1], 32, "%" PRId64, d);
        snprintf(vb[2], 32, "oz[0][%" PRId64 "]", d);
        for (int64_t e = 0; e < xs->rank; e++) snprintf(vb[3 + e], 32, "oz[0][%" PRId64 "]", e);
        for (int64_t e = 0; e < 3 + xs->rank; e++) vals[e] = vb[e];
        aot_dyn_put_fail(a, b, "            ", in, "ERROR_DYNAMIC_MISMATCH", f.data ? f.data : "",
                         vals, (int)(3 + xs->rank));
    }
    cxla_strbuf_free(&f);
    for (int64_t d = 0; d < is->rank; d++) count *= is->dims[d];
    for (int64_t d = is->rank - 1; d > iv; d--) stride *= is->dims[d];
    /* Each index's start clamped as clamp_gather clamps it (the u64 ones loaded as
     * interp_load_indices loads them, saturated at INT64_MAX). */
    const char *T = cpu_emit_stype(is->type);
    cxla_strbuf_printf(b, "        {\n            static const int64_t map[%" PRId64 "] = {",
                       nm ? nm : 1);
    for (int64_t i = 0; i < nm; i++)
        cxla_strbuf_printf(b, "%s%" PRId64, i ? ", " : "",
                           map[i] >= 0 && map[i] < xs->rank ? map[i] : -1);
    cxla_strbuf_printf(b, nm ? "};\n" : "0};\n");
    cxla_strbuf_printf(b, "            static const int64_t slice[%" PRId64 "] = {", ns ? ns : 1);
    for (int64_t d = 0; d < ns; d++) cxla_strbuf_printf(b, "%s%" PRId64, d ? ", " : "", slice[d]);
    cxla_strbuf_printf(b, ns ? "};\n" : "0};\n");
    cxla_strbuf_printf(b,
                       "            const %s *src = (const %s *)a[1];\n"
                       "            %s *dst = (%s *)",
                       T, T, T, T);
    aot_put_leaf(a, c, st->tmp[st->tmp_count - 1], b);
    cxla_strbuf_printf(b, ";\n            for (int64_t j = 0; j < %" PRId64 "; j++) {\n", count);
    if (iv < is->rank)
        cxla_strbuf_printf(b, "                int64_t k = j / %" PRId64 " %% %" PRId64 ";\n",
                           stride, is->dims[iv]);
    else
        cxla_strbuf_puts(b, "                int64_t k = 0;\n");
    cxla_strbuf_printf(b,
                       "                if (k >= %" PRId64 " || map[k] < 0) {\n"
                       "                    dst[j] = src[j];\n"
                       "                    continue;\n"
                       "                }\n",
                       nm);
    if (is->type == CXLA_U64)
        cxla_strbuf_puts(b, "                int64_t v = src[j] > (uint64_t)INT64_MAX ? INT64_MAX "
                            ": (int64_t)src[j];\n");
    else
        cxla_strbuf_puts(b, "                int64_t v = (int64_t)src[j];\n");
    cxla_strbuf_printf(b,
                       "                int64_t hi = oz[0][map[k]] - slice[map[k]];\n"
                       "                v = v > hi ? hi : v;\n"
                       "                v = v < 0 ? 0 : v;\n"
                       "                dst[j] = (%s)v;\n"
                       "            }\n"
                       "            (void)map;\n            (void)slice;\n"
                       "            a[1] = dst;\n"
                       "        }\n",
                       T);
    return NULL;
}

/* AB_SCATTER, phase 0 (the JIT's B_INDEXED scatter, cpu_dynamic_lib.c, of one operand or
 * several, of any mix of dynamic and static marks): the result's sizes are the operands';
 * the interpreter's shape inference over the cut operands must pass (operands of one size
 * and updates of one size, an update window no larger than the cut operand's dimension,
 * the updates' scatter dimensions the indices' batch sizes: its messages). */
static cxla_status put_scatter_sizes(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    int64_t n = in->operand_count, m = (n - 1) / 2;
    bool sized = st->bounds == AB_SIZED;
    if (n < 3 || n % 2 == 0 || st->in_count != n) return aot_no(in, "a scatter with odd operands");
    const cxla_shape *xs = &in->operands[0]->shape, *is = &in->operands[m]->shape,
                     *us = &in->operands[m + 1]->shape;
    int64_t iv = 0, nw = 0, nins = 0;
    cxla_instr_int(in, CXLA_ATTR_INDEX_VECTOR_DIM, &iv);
    const int64_t *uwd = cxla_instr_ints(in, CXLA_ATTR_UPDATE_WINDOW_DIMS, &nw);
    const int64_t *ins = cxla_instr_ints(in, CXLA_ATTR_INSERTED_WINDOW_DIMS, &nins);
    char oi[32], ou[32];
    snprintf(oi, sizeof oi, "oz[%" PRId64 "]", m);
    snprintf(ou, sizeof ou, "oz[%" PRId64 "]", m + 1);
    cxla_strbuf_printf(b, "        const int64_t *const oz[%" PRId64 "] = {", n);
    for (int64_t k = 0; k < n; k++) {
        if (k) cxla_strbuf_puts(b, ", ");
        aot_dyn_put_sizes(c, st->in[k], b);
    }
    cxla_strbuf_puts(b, "};\n        (void)oz;\n");
    for (int64_t e = 0; e < m; e++)
        cxla_strbuf_printf(
            b, "        int64_t rz%" PRId64 "[%" PRId64 "];\n        (void)rz%" PRId64 ";\n", e,
            xs->rank ? xs->rank : 1, e);
    /* Several operands (updates) must have the same sizes: shape inference's message. */
    for (int64_t g = 0; g < 2; g++) {
        int64_t first = g ? m + 1 : 0, last = g ? n : m;
        for (int64_t k = first + 1; k < last; k++) {
            const cxla_shape *s0 = &in->operands[first]->shape, *sk = &in->operands[k]->shape;
            if (s0->rank != sk->rank) return aot_no(in, "operands of different ranks");
            bool dyn = false;
            for (int64_t d = 0; d < s0->rank; d++)
                dyn = dyn || exec_shape_dim_dynamic(s0, d) || exec_shape_dim_dynamic(sk, d);
            if (!dyn) continue;
            cxla_strbuf f, cond;
            cxla_strbuf_init(&f);
            cxla_strbuf_init(&cond);
            cxla_strbuf_printf(&f,
                               "at the operands' dynamic sizes: scatter: %s must have the same "
                               "dimensions, got ",
                               g ? "updates" : "operands");
            put_cut_shape(&f, s0);
            cxla_strbuf_puts(&f, " and ");
            put_cut_shape(&f, sk);
            const char *vals[2 * CXLA_MAX_RANK];
            char vb[2 * CXLA_MAX_RANK][64];
            int nv = 0;
            cxla_strbuf_puts(&cond, "0");
            for (int64_t d = 0; d < s0->rank; d++) {
                snprintf(vb[nv], sizeof vb[nv], "oz[%" PRId64 "][%" PRId64 "]", first, d),
                    vals[nv] = vb[nv], nv++;
                cxla_strbuf_printf(
                    &cond, " || oz[%" PRId64 "][%" PRId64 "] != oz[%" PRId64 "][%" PRId64 "]", k, d,
                    first, d);
            }
            for (int64_t d = 0; d < sk->rank; d++)
                snprintf(vb[nv], sizeof vb[nv], "oz[%" PRId64 "][%" PRId64 "]", k, d),
                    vals[nv] = vb[nv], nv++;
            cxla_strbuf_printf(b, "        if (%s)\n", cond.data);
            aot_dyn_put_fail(a, b, "            ", in, "ERROR_DYNAMIC_MISMATCH",
                             f.data ? f.data : "", vals, nv);
            cxla_strbuf_free(&f);
            cxla_strbuf_free(&cond);
        }
    }
    /* The batching sizes and the index vectors' length next, as shape inference. */
    cxla_strbuf_puts(b, "        {\n");
    put_shape_checks(a, b, in, "oz[0]", oi);
    cxla_strbuf_puts(b, "        }\n");
    for (int64_t e = 0; e < m; e++)
        for (int64_t d = 0; d < xs->rank; d++)
            cxla_strbuf_printf(b, "        rz%" PRId64 "[%" PRId64 "] = oz[0][%" PRId64 "];\n", e,
                               d, d);
    if (sized) {
        /* The sizes the sized kernel reads: the operand's, then the updates'. */
        int64_t ur = us->rank;
        cxla_strbuf_printf(b, "        int64_t lz[%" PRId64 "];\n",
                           xs->rank + ur ? xs->rank + ur : 1);
        for (int64_t d = 0; d < xs->rank; d++)
            cxla_strbuf_printf(b, "        lz[%" PRId64 "] = oz[0][%" PRId64 "];\n", d, d);
        for (int64_t d = 0; d < ur; d++)
            cxla_strbuf_printf(b, "        lz[%" PRId64 "] = %s[%" PRId64 "];\n", xs->rank + d, ou,
                               d);
    }
    int64_t nib = 0;
    const int64_t *ibd = cxla_instr_ints(in, CXLA_ATTR_INPUT_BATCHING_DIMS, &nib);
    const char *vals[4 + 2 * CXLA_MAX_RANK];
    char vb[4 + 2 * CXLA_MAX_RANK][64];
    /* Each update window dimension within the cut operand's (inserted and batching
     * dimensions have none). */
    for (int64_t i = 0, w = 0; i < xs->rank && w < nw; i++) {
        bool inserted = false;
        for (int64_t k = 0; k < nins; k++) inserted = inserted || ins[k] == i;
        for (int64_t k = 0; k < nib; k++) inserted = inserted || ibd[k] == i;
        if (inserted) continue;
        int64_t ud = uwd[w++];
        if (ud < 0 || ud >= us->rank) return aot_no(in, "bad update_window_dims");
        if ((!exec_shape_dim_dynamic(xs, i) && !exec_shape_dim_dynamic(us, ud)) ||
            us->dims[ud] == 0)
            continue;
        cxla_strbuf f;
        cxla_strbuf_init(&f);
        cxla_strbuf_puts(&f, "at the operands' dynamic sizes: scatter: update window dimension "
                             "%" PRId64 " of ");
        put_cut_shape(&f, us);
        cxla_strbuf_puts(&f, " (size %" PRId64 ") exceeds operand dimension %" PRId64 " of ");
        put_cut_shape(&f, xs);
        int nv = 0;
        snprintf(vb[nv], sizeof vb[nv], "%" PRId64, ud), vals[nv] = vb[nv], nv++;
        for (int64_t e = 0; e < us->rank; e++)
            snprintf(vb[nv], sizeof vb[nv], "%s[%" PRId64 "]", ou, e), vals[nv] = vb[nv], nv++;
        snprintf(vb[nv], sizeof vb[nv], "%s[%" PRId64 "]", ou, ud), vals[nv] = vb[nv], nv++;
        snprintf(vb[nv], sizeof vb[nv], "%" PRId64, i), vals[nv] = vb[nv], nv++;
        for (int64_t e = 0; e < xs->rank; e++)
            snprintf(vb[nv], sizeof vb[nv], "oz[0][%" PRId64 "]", e), vals[nv] = vb[nv], nv++;
        cxla_strbuf_printf(b, "        if (%s[%" PRId64 "] > oz[0][%" PRId64 "])\n", ou, ud, i);
        aot_dyn_put_fail(a, b, "            ", in, "ERROR_DYNAMIC_MISMATCH", f.data ? f.data : "",
                         vals, nv);
        cxla_strbuf_free(&f);
    }
    /* The updates' scatter dimensions against the indices' batch dimensions. */
    int64_t next = 0;
    for (int64_t i = 0; i < us->rank; i++) {
        bool window = false;
        for (int64_t k = 0; k < nw; k++) window = window || uwd[k] == i;
        if (window) continue;
        if (next == iv) next++;
        if (next >= is->rank) return aot_no(in, "bad scatter dimensions");
        int64_t id = next++;
        if (!exec_shape_dim_dynamic(us, i) && !exec_shape_dim_dynamic(is, id)) continue;
        cxla_strbuf f;
        cxla_strbuf_init(&f);
        cxla_strbuf_puts(&f, "at the operands' dynamic sizes: scatter: scatter dimension %" PRId64
                             " of the updates ");
        put_cut_shape(&f, us);
        cxla_strbuf_puts(&f, " has size %" PRId64 " but the indices ");
        put_cut_shape(&f, is);
        cxla_strbuf_puts(&f, " have %" PRId64);
        int nv = 0;
        snprintf(vb[nv], sizeof vb[nv], "%" PRId64, i), vals[nv] = vb[nv], nv++;
        for (int64_t e = 0; e < us->rank; e++)
            snprintf(vb[nv], sizeof vb[nv], "%s[%" PRId64 "]", ou, e), vals[nv] = vb[nv], nv++;
        snprintf(vb[nv], sizeof vb[nv], "%s[%" PRId64 "]", ou, i), vals[nv] = vb[nv], nv++;
        for (int64_t e = 0; e < is->rank; e++)
            snprintf(vb[nv], sizeof vb[nv], "%s[%" PRId64 "]", oi, e), vals[nv] = vb[nv], nv++;
        snprintf(vb[nv], sizeof vb[nv], "%s[%" PRId64 "]", oi, id), vals[nv] = vb[nv], nv++;
        cxla_strbuf_printf(b, "        if (%s[%" PRId64 "] != %s[%" PRId64 "])\n", ou, i, oi, id);
        aot_dyn_put_fail(a, b, "            ", in, "ERROR_DYNAMIC_MISMATCH", f.data ? f.data : "",
                         vals, nv);
        cxla_strbuf_free(&f);
    }
    return NULL;
}

/* AB_SCATTER, phase 1 (cpu_dynamic_lib.c's skip_scatter): the index vectors whose window
 * the cut operand cannot hold, or that lie outside the indices' sizes, are made out of range
 * at the bounds too (-1: the largest value of an unsigned type, past every bound), in a copy
 * of the indices that the static kernel at the bounds reads, so it skips them as the
 * interpreter skips them (or never sees them); the others land inside the sizes. */
static cxla_status put_scatter_indices(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    int64_t m = (in->operand_count - 1) / 2; /* the indices' operand (and kernel input) */
    const cxla_shape *xs = &in->operands[0]->shape, *is = &in->operands[m]->shape,
                     *us = &in->operands[m + 1]->shape;
    int64_t iv = 0, nmap = 0, nins = 0, nw = 0, count = 1;
    cxla_instr_int(in, CXLA_ATTR_INDEX_VECTOR_DIM, &iv);
    const int64_t *map = cxla_instr_ints(in, CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, &nmap);
    const int64_t *ins = cxla_instr_ints(in, CXLA_ATTR_INSERTED_WINDOW_DIMS, &nins);
    const int64_t *uwd = cxla_instr_ints(in, CXLA_ATTR_UPDATE_WINDOW_DIMS, &nw);
    if (xs->rank > CXLA_MAX_RANK || is->rank > CXLA_MAX_RANK || st->tmp_count < 1)
        return aot_no(in, "a scatter of too high a rank");
    /* The window's extent in each operand dimension: 1 where inserted or a batching
     * dimension (its index, the vector's own batch position, lies inside the sizes once
     * the batching sizes agree: phase 0), else the next update window dimension's. */
    int64_t nib = 0;
    const int64_t *ibd = cxla_instr_ints(in, CXLA_ATTR_INPUT_BATCHING_DIMS, &nib);
    int64_t wext[CXLA_MAX_RANK], rs[CXLA_MAX_RANK];
    for (int64_t d = 0, w = 0; d < xs->rank; d++) {
        bool inserted = false;
        for (int64_t i = 0; i < nins; i++) inserted = inserted || ins[i] == d;
        for (int64_t i = 0; i < nib; i++) inserted = inserted || ibd[i] == d;
        wext[d] = inserted ? 1 : w < nw ? us->dims[uwd[w++]] : 1;
    }
    for (int64_t d = 0; d < is->rank; d++) count *= is->dims[d];
    for (int64_t d = is->rank - 1, s = 1; d >= 0; d--) {
        rs[d] = s;
        s *= is->dims[d];
    }
    int64_t vlen = iv < is->rank ? is->dims[iv] : 1, vstride = iv < is->rank ? rs[iv] : 1;
    const char *T = cpu_emit_stype(is->type);
    cxla_strbuf_printf(b,
                       "        {\n            const %s *src = (const %s *)a[%" PRId64 "];\n"
                       "            %s *dst = (%s *)",
                       T, T, m, T, T);
    aot_put_leaf(a, c, st->tmp[st->tmp_count - 1], b);
    cxla_strbuf_printf(b,
                       ";\n            if (%" PRId64 " > 0) memcpy(dst, src, %" PRId64
                       " * sizeof *dst);\n"
                       "            for (int64_t j = 0; j < %" PRId64 "; j++) {\n",
                       count, count, count);
    if (iv < is->rank)
        cxla_strbuf_printf(b,
                           "                if (j / %" PRId64 " %% %" PRId64 " != 0) continue;\n",
                           rs[iv], is->dims[iv]);
    cxla_strbuf_puts(b, "                int bad = 0;\n");
    for (int64_t d = 0; d < is->rank; d++)
        if (d != iv && exec_shape_dim_dynamic(is, d))
            cxla_strbuf_printf(b,
                               "                if (j / %" PRId64 " %% %" PRId64 " >= oz[%" PRId64
                               "][%" PRId64 "]) bad = 1;\n",
                               rs[d], is->dims[d], m, d);
    for (int64_t k = 0; k < vlen && k < nmap; k++) {
        int64_t od = map[k];
        if (od < 0 || od >= xs->rank) continue; /* shape inference ruled it out */
        cxla_strbuf_printf(
            b,
            "                if (!bad) {\n                    const %s x = src[j + %" PRId64 "];\n",
            T, k * vstride);
        if (is->type == CXLA_U64)
            cxla_strbuf_puts(b, "                    int64_t v = x > (uint64_t)INT64_MAX ? "
                                "INT64_MAX : (int64_t)x;\n");
        else
            cxla_strbuf_puts(b, "                    int64_t v = (int64_t)x;\n");
        cxla_strbuf_printf(b,
                           "                    bad = v < 0 || v > oz[0][%" PRId64 "] - %" PRId64
                           ";\n                }\n",
                           od, wext[od]);
    }
    cxla_strbuf_printf(b,
                       "                if (bad)\n"
                       "                    for (int64_t k = 0; k < %" PRId64
                       "; k++) dst[j + k * %" PRId64 "] = (%s)-1;\n"
                       "            }\n"
                       "            a[%" PRId64 "] = dst;\n"
                       "        }\n",
                       vlen, vstride, T, m);
    return NULL;
}

cxla_status aot_dindex_emit(aot *a, const acomp *c, const astep *st, int phase, cxla_strbuf *b,
                            bool *done) {
    *done = true;
    if (phase == 0 && st->bounds == AB_GATHER) {
        put_gather_checks(a, c, st, b);
        *done = false; /* aot_dyn.c writes the result's sizes */
        return NULL;
    }
    if (phase == 0 && (st->bounds == AB_SCATTER || st->bounds == AB_SIZED))
        return put_scatter_sizes(a, c, st, b);
    if (phase == 1 && st->bounds == AB_GATHER) return put_gather_indices(a, c, st, b);
    if (phase == 1 && st->bounds == AB_SCATTER) return put_scatter_indices(a, c, st, b);
    *done = false;
    return NULL;
}
