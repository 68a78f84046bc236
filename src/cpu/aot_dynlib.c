/* Bounded dynamic shapes in ahead-of-time output: the kernel steps at the bounds that read
 * or rewrite something by the run-time sizes, the JIT's newer kinds (src/cpu/cpu_steps.h's
 * B_SORT, B_SIZED, B_INDEXED, B_INFERRED; cpu_dynamic_lib.c, cpu_dynwin.c) written as C
 * (aot_internal.h's AB_SORT ... AB_SCATTER; aot_dynlib_check says which; docs/aot.md,
 * "Dynamic shapes"):
 *
 * - sort along a dynamic dimension and reduce with any reducer (an argmax): the JIT's
 *   kernels that take the sizes as one more input (cpu_emit_sort_sized,
 *   cpu_emit_sized_reduce), the inputs' sizes lined up as the interpreter lines them up;
 * - select-and-scatter and scatters with dynamic update windows: the JIT's sized kernels
 *   (cpu_emit_sized_select_and_scatter, cpu_emit_sized_scatter), after shape inference's
 *   checks over the cut operands written as C (the interpreter's messages);
 * - bitcast and bitcast-convert: the static kernel at the bounds, the result's sizes
 *   inferred from the operand's;
 * - reduce-window of N inputs (the JIT's B_WINDOW): the static kernel over copies whose
 *   elements past the lined-up sizes hold the init values (which the interpreter folds at
 *   the cut operands' window padding);
 * - gather and scatter: aot_dindex.c.
 *
 * Each writes phase 0 (the sizes rz<e> from oz[], with the interpreter's errors) or phase 1
 * (after a[] and r[]: the copies) of aot_dyn_emit_kernel; aot_dyn.c does the rest (the
 * padding zeroed, the sizes kept). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/aot_internal.h"
#include "cpu/aot_jit.h"
#include "cpu/emit.h"
#include "cpu/emit_internal.h"
#include "exec/dynamic.h"

static const char *num(char *buf, size_t n, int64_t v) {
    snprintf(buf, n, "%" PRId64, v);
    return buf;
}

static int64_t result_leaves(const cxla_instr *in) {
    return in->shape.type == CXLA_TUPLE ? in->shape.tuple_count : 1;
}

static const cxla_shape *result_leaf(const cxla_instr *in, int64_t e) {
    return in->shape.type == CXLA_TUPLE ? &in->shape.elements[e] : &in->shape;
}

/* exec/dynamic.c's check_shape as C: the sizes |name| (an int64_t array) of a result leaf
 * of |in| declared as |ys|: a static dimension must come out at its size, a dynamic one
 * within its bound. */
static void put_check_result(aot *a, cxla_strbuf *b, const char *ind, const cxla_instr *in,
                             const cxla_shape *ys, const char *name) {
    cxla_strbuf in2;
    cxla_strbuf_init(&in2);
    cxla_strbuf_printf(&in2, "%s    ", ind);
    for (int64_t d = 0; d < ys->rank; d++) {
        char od[48], v0[48], v1[48];
        snprintf(od, sizeof od, "%s[%" PRId64 "]", name, d);
        if (!exec_shape_dim_dynamic(ys, d)) {
            cxla_strbuf_printf(b, "%sif (%s != %" PRId64 ")\n", ind, od, ys->dims[d]);
            const char *vals[3] = {num(v0, 48, d), num(v1, 48, ys->dims[d]), od};
            aot_dyn_put_fail(a, b, in2.data, in, "ERROR_DYNAMIC_MISMATCH",
                             EXEC_DYN_MSG_STATIC_RESULT, vals, 3);
        } else {
            cxla_strbuf_printf(b, "%sif (%s > %" PRId64 ")\n", ind, od, ys->dims[d]);
            const char *vals[3] = {num(v0, 48, d), od, num(v1, 48, ys->dims[d])};
            aot_dyn_put_fail(a, b, in2.data, in, "ERROR_DYNAMIC_MISMATCH",
                             EXEC_DYN_MSG_BEYOND_BOUND, vals, 3);
        }
    }
    cxla_strbuf_free(&in2);
}

/* AB_INFERRED (the JIT's B_INFERRED, cpu_dynamic_lib.c): bitcast-convert keeps the
 * operand's sizes dimension by dimension, a minor dimension it splits off or joins being
 * static (shape inference over the cut operand); a bitcast takes an operand at its bounds
 * only (below them it is the interpreter's error, in its words), its result at its bounds.
 * The result's sizes into rz0. */
static cxla_status put_inferred_sizes(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const cxla_shape *xs = &in->operands[0]->shape, *ys = &in->shape;
    if (in->operand_count != 1 || !cxla_type_is_array(ys->type))
        return aot_no(in, "a bitcast of one array into an array only");
    cxla_strbuf_puts(b, "        const int64_t *const oz[1] = {");
    aot_dyn_put_sizes(c, st->in[0], b);
    cxla_strbuf_printf(b, "};\n        int64_t rz0[%" PRId64 "];\n        (void)rz0;\n",
                       ys->rank ? ys->rank : 1);
    cxla_strbuf_puts(b, "        int padded = 0");
    for (int64_t d = 0; d < xs->rank; d++)
        if (exec_shape_dim_dynamic(xs, d))
            cxla_strbuf_printf(b, " || oz[0][%" PRId64 "] < %" PRId64, d, xs->dims[d]);
    cxla_strbuf_puts(b, ";\n        (void)padded;\n");
    if (in->opcode == CXLA_OP_BITCAST) {
        /* interp_dynamic.c's unsupported(): "f32[<=4](2)", the operand with its sizes. */
        char *shape = cxla_shape_to_string(xs, CXLA_SHAPE_PRINT_NO_LAYOUT);
        cxla_strbuf f;
        cxla_strbuf_init(&f);
        cxla_strbuf_printf(&f,
                           "'bitcast' does not support an operand below its dynamic bounds "
                           "(operand 0 is %s(",
                           shape ? shape : "?");
        free(shape);
        const char *vals[CXLA_MAX_RANK];
        char vb[CXLA_MAX_RANK][32];
        for (int64_t d = 0; d < xs->rank && d < CXLA_MAX_RANK; d++) {
            cxla_strbuf_puts(&f, d ? ",%" PRId64 : "%" PRId64);
            snprintf(vb[d], sizeof vb[d], "oz[0][%" PRId64 "]", d);
            vals[d] = vb[d];
        }
        cxla_strbuf_puts(&f, "))");
        cxla_strbuf_puts(b, "        if (padded)\n");
        aot_dyn_put_fail(a, b, "            ", in, "ERROR_DYNAMIC_MISMATCH", f.data ? f.data : "",
                         vals, (int)xs->rank);
        cxla_strbuf_free(&f);
        for (int64_t d = 0; d < ys->rank; d++)
            cxla_strbuf_printf(b, "        rz0[%" PRId64 "] = %" PRId64 ";\n", d, ys->dims[d]);
        return NULL;
    }
    if (ys->rank != xs->rank && ys->rank != xs->rank + 1 && ys->rank + 1 != xs->rank)
        return aot_no(in,
                      "a bitcast-convert of another rank than its operand's, plus or minus one");
    if (ys->rank + 1 == xs->rank && exec_shape_dim_dynamic(xs, xs->rank - 1))
        return aot_no(in, "a bitcast-convert that joins a dynamic minor dimension");
    for (int64_t d = 0; d < ys->rank; d++) {
        if (d < xs->rank)
            cxla_strbuf_printf(b, "        rz0[%" PRId64 "] = oz[0][%" PRId64 "];\n", d, d);
        else
            cxla_strbuf_printf(b, "        rz0[%" PRId64 "] = %" PRId64 ";\n", d, ys->dims[d]);
    }
    cxla_strbuf_puts(b, "        if (padded) {\n");
    put_check_result(a, b, "            ", in, ys, "rz0");
    cxla_strbuf_puts(b, "        }\n");
    return NULL;
}

/* AB_WINDOW: a reduce-window of N inputs over dynamic dimensions (the JIT's B_WINDOW,
 * cpu_dynwin.c's fill kernel). The interpreter lines the inputs up (exec_dynamic_rule's
 * EXEC_DYN_SAME: two dynamic sizes must agree, a static input is cut to a dynamic one's)
 * and runs the static operation on the cut inputs, where a window position past a size is
 * the window's padding (or a hole), which folds the init value. Copies of the inputs whose
 * elements past the lined-up sizes hold their init values (phase 1, put_window_fill) give
 * the static kernel at the bounds the same values at every position of every window the
 * cut result has, in the same order. The lined-up sizes into lz; the result leaves' sizes
 * (each the same): shape inference's window rule (cpu_dynwin.c's window_out) over lz,
 * checked against the declared shapes. */
static cxla_status put_window_sizes(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    int64_t count = in->operand_count, n = count / 2;
    const cxla_shape *xs = &in->operands[0]->shape;
    const cxla_attr *w = cxla_instr_attr(in, CXLA_ATTR_WINDOW);
    if (!w || w->kind != CXLA_ATTR_KIND_WINDOW || w->v.window.rank != xs->rank || count < 2 ||
        count % 2 || n > 64 || result_leaves(in) != n || st->in_count != count)
        return aot_no(in, "a reduce-window whose window does not match its operand");
    int64_t rank = xs->rank;
    cxla_strbuf_printf(b, "        const int64_t *const oz[%" PRId64 "] = {", count);
    for (int64_t k = 0; k < count; k++) {
        if (k) cxla_strbuf_puts(b, ", ");
        aot_dyn_put_sizes(c, st->in[k], b);
    }
    cxla_strbuf_printf(
        b, "};\n        int64_t lz[%" PRId64 "];\n        (void)oz;\n        (void)lz;\n",
        rank ? rank : 1);
    for (int64_t e = 0; e < n; e++) {
        if (result_leaf(in, e)->rank != rank) return aot_no(in, "a result of another rank");
        cxla_strbuf_printf(
            b, "        int64_t rz%" PRId64 "[%" PRId64 "];\n        (void)rz%" PRId64 ";\n", e,
            rank ? rank : 1, e);
    }
    cxla_strbuf_puts(b, "        {\n");
    for (int64_t k = 0; k < n; k++) {
        if (in->operands[k]->shape.rank != rank) return aot_no(in, "inputs of different ranks");
        cxla_strbuf_printf(b, "            int64_t r%" PRId64 "[%" PRId64 "];\n", k,
                           rank ? rank : 1);
        for (int64_t d = 0; d < rank; d++)
            cxla_strbuf_printf(
                b, "            r%" PRId64 "[%" PRId64 "] = oz[%" PRId64 "][%" PRId64 "];\n", k, d,
                k, d);
        cxla_strbuf_printf(b, "            (void)r%" PRId64 ";\n", k);
    }
    cxla_strbuf_puts(b, "            int padded = 0");
    for (int64_t k = 0; k < n; k++)
        for (int64_t d = 0; d < rank; d++)
            if (exec_shape_dim_dynamic(&in->operands[k]->shape, d))
                cxla_strbuf_printf(b, " || r%" PRId64 "[%" PRId64 "] < %" PRId64, k, d,
                                   in->operands[k]->shape.dims[d]);
    cxla_strbuf_puts(b, ";\n            (void)padded;\n            if (padded) {\n");
    int64_t ks[64], ds[64];
    for (int64_t d = 0; d < rank; d++) {
        for (int64_t k = 0; k < n; k++) {
            ks[k] = k;
            ds[k] = d;
        }
        aot_dyn_put_align(a, b, "                ", in, ks, ds, n);
    }
    for (int64_t d = 0; d < rank; d++)
        cxla_strbuf_printf(b, "                lz[%" PRId64 "] = r0[%" PRId64 "];\n", d, d);
    for (int64_t j = 0; j < rank; j++) {
        const cxla_window_dim *wd = &w->v.window.dims[j];
        int64_t span = (wd->size - 1) * wd->rhs_dilation + 1;
        cxla_strbuf_printf(
            b,
            "                {\n"
            "                    int64_t base = lz[%" PRId64 "] == 0 ? 0 : (lz[%" PRId64
            "] - 1) * %" PRId64 " + 1;\n"
            "                    int64_t all = base + (%" PRId64 ") + (%" PRId64 ");\n"
            "                    rz0[%" PRId64 "] = all >= %" PRId64 " ? (all - %" PRId64
            ") / %" PRId64 " + 1 : 0;\n"
            "                }\n",
            j, j, wd->lhs_dilation, wd->pad_low, wd->pad_high, j, span, span, wd->stride);
    }
    for (int64_t e = 0; e < n; e++) {
        char name[32];
        snprintf(name, sizeof name, "rz%" PRId64, e);
        for (int64_t d = 0; e && d < rank; d++)
            cxla_strbuf_printf(
                b, "                rz%" PRId64 "[%" PRId64 "] = rz0[%" PRId64 "];\n", e, d, d);
        put_check_result(a, b, "                ", in, result_leaf(in, e), name);
    }
    cxla_strbuf_puts(b, "            } else {\n");
    for (int64_t d = 0; d < rank; d++)
        cxla_strbuf_printf(b, "                lz[%" PRId64 "] = %" PRId64 ";\n", d, xs->dims[d]);
    for (int64_t e = 0; e < n; e++)
        for (int64_t d = 0; d < rank; d++)
            cxla_strbuf_printf(b, "                rz%" PRId64 "[%" PRId64 "] = %" PRId64 ";\n", e,
                               d, result_leaf(in, e)->dims[d]);
    cxla_strbuf_puts(b, "            }\n        }\n");
    return NULL;
}

/* AB_WINDOW, phase 1: each input whose lined-up sizes lz are below its bounds is copied
 * into its temporary (the last N of tmp[]) with the elements past lz set to its init value
 * (a static input cut to a dynamic one's size too: the interpreter cuts it), and the
 * kernel reads the copy. */
static cxla_status put_window_fill(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    int64_t n = in->operand_count / 2, t = st->tmp_count - n;
    if (t < 0) return cxla_error(CXLA_STATUS_INTERNAL, "%s: no copies to fill", in->name);
    for (int64_t k = 0; k < n; k++, t++) {
        const cxla_shape *xs = &in->operands[k]->shape;
        size_t bytes = 0; /* the input's at its bounds */
        if (cxla_shape_byte_size(xs, &bytes) || !bytes) continue;
        cxla_strbuf_puts(b, "        if (0");
        for (int64_t d = 0; d < xs->rank; d++)
            cxla_strbuf_printf(b, " || lz[%" PRId64 "] < %" PRId64, d, xs->dims[d]);
        cxla_strbuf_puts(b, ") {\n            char *t = (char *)");
        aot_put_leaf(a, c, st->tmp[t], b);
        cxla_strbuf_printf(b,
                           ";\n            memcpy(t, a[%" PRId64 "], %zu);\n"
                           "            %s_dfill(t, %d, (const int64_t[]){",
                           k, bytes, a->P, (int)xs->rank);
        for (int64_t d = 0; d < xs->rank; d++)
            cxla_strbuf_printf(b, "%s%" PRId64, d ? ", " : "", xs->dims[d]);
        cxla_strbuf_printf(b,
                           "%s}, lz, %zu, a[%" PRId64 "]);\n"
                           "            a[%" PRId64 "] = t;\n"
                           "        }\n",
                           xs->rank ? "" : "0", cxla_type_storage(xs->type), n + k, k);
    }
    return NULL;
}

/* AB_SORT and AB_SIZED: the inputs (a sort's operands, a reduce's arrays) lined up
 * dimension by dimension as the interpreter lines them up (two dynamic sizes must agree,
 * a static one is cut to a dynamic one's; exec/dynamic.c's align, put_align here) into
 * lz[], what the kernel reads; the result leaves' sizes into rz<e> (a sort's are lz, a
 * reduce's lz without its reduced dimensions), checked against their declared shapes
 * (exec/dynamic.c's check_shape) when some input is below its bounds. */
static cxla_status put_lined_sizes(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    int64_t n = in->operand_count, m = st->bounds == AB_SIZED ? n / 2 : n;
    const cxla_shape *xs = &in->operands[0]->shape;
    if (m < 1 || xs->rank > CXLA_MAX_RANK)
        return aot_no(in, "no inputs for a kernel over the run-time sizes");
    int64_t nd = 0;
    const int64_t *rd =
        st->bounds == AB_SIZED ? cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd) : NULL;
    cxla_strbuf_printf(b, "        const int64_t *const oz[%" PRId64 "] = {", n);
    for (int64_t k = 0; k < n; k++) {
        if (k) cxla_strbuf_puts(b, ", ");
        aot_dyn_put_sizes(c, st->in[k], b);
    }
    cxla_strbuf_printf(b, "};\n        int64_t lz[%" PRId64 "];\n", xs->rank ? xs->rank : 1);
    for (int64_t e = 0; e < result_leaves(in); e++)
        cxla_strbuf_printf(
            b, "        int64_t rz%" PRId64 "[%" PRId64 "];\n        (void)rz%" PRId64 ";\n", e,
            result_leaf(in, e)->rank ? result_leaf(in, e)->rank : 1, e);
    cxla_strbuf_puts(b, "        {\n");
    for (int64_t k = 0; k < m; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        if (s->rank != xs->rank) return aot_no(in, "inputs of different ranks");
        cxla_strbuf_printf(b, "            int64_t r%" PRId64 "[%" PRId64 "];\n", k,
                           xs->rank ? xs->rank : 1);
        for (int64_t d = 0; d < s->rank; d++)
            cxla_strbuf_printf(
                b, "            r%" PRId64 "[%" PRId64 "] = oz[%" PRId64 "][%" PRId64 "];\n", k, d,
                k, d);
        cxla_strbuf_printf(b, "            (void)r%" PRId64 ";\n", k);
    }
    cxla_strbuf_puts(b, "            int padded = 0");
    for (int64_t k = 0; k < m; k++)
        for (int64_t d = 0; d < xs->rank; d++)
            if (exec_shape_dim_dynamic(&in->operands[k]->shape, d))
                cxla_strbuf_printf(b, " || r%" PRId64 "[%" PRId64 "] < %" PRId64, k, d,
                                   in->operands[k]->shape.dims[d]);
    cxla_strbuf_puts(b, ";\n            (void)padded;\n            if (padded) {\n");
    /* The inputs and the dimension lined up, one entry per input (any number of them). */
    int64_t *ks = malloc((size_t)m * 2 * sizeof(int64_t)), *ds = ks ? ks + m : NULL;
    if (!ks) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    for (int64_t d = 0; d < xs->rank; d++) {
        for (int64_t k = 0; k < m; k++) {
            ks[k] = k;
            ds[k] = d;
        }
        aot_dyn_put_align(a, b, "                ", in, ks, ds, m);
    }
    free(ks);
    cxla_strbuf_puts(b, "            }\n");
    for (int64_t d = 0; d < xs->rank; d++)
        cxla_strbuf_printf(b, "            lz[%" PRId64 "] = r0[%" PRId64 "];\n", d, d);
    for (int64_t e = 0; e < result_leaves(in); e++) {
        const cxla_shape *ys = result_leaf(in, e);
        int64_t j = 0;
        for (int64_t d = 0; d < xs->rank; d++) {
            bool reduced = false;
            for (int64_t i = 0; i < nd; i++) reduced = reduced || rd[i] == d;
            if (reduced) continue;
            if (j >= ys->rank) return aot_no(in, "a result of another rank");
            cxla_strbuf_printf(b, "            rz%" PRId64 "[%" PRId64 "] = lz[%" PRId64 "];\n", e,
                               j++, d);
        }
        if (j != ys->rank) return aot_no(in, "a result of another rank");
        char name[32];
        snprintf(name, sizeof name, "rz%" PRId64, e);
        cxla_strbuf_puts(b, "            if (padded) {\n");
        put_check_result(a, b, "                ", in, ys, name);
        cxla_strbuf_puts(b, "            }\n");
    }
    cxla_strbuf_puts(b, "        }\n");
    return NULL;
}

/* "s32[%,%]": a shape's type with a placeholder per dimension (its cut sizes), as shape
 * inference prints the operands it was given. */
static void put_cut_shape(cxla_strbuf *f, const cxla_shape *s) {
    cxla_strbuf_printf(f, "%s[", cxla_type_name(s->type));
    for (int64_t d = 0; d < s->rank; d++) cxla_strbuf_puts(f, d ? ",%" PRId64 : "%" PRId64);
    cxla_strbuf_puts(f, "]");
}

/* "f32[%,%]" into |f| for shape |s| (its cut sizes), with the values "<arr>[d]" appended
 * to |vals| from *nv on (at most CXLA_MAX_RANK, buffers |vb|). */
static void put_cut_vals(cxla_strbuf *f, const cxla_shape *s, const char *arr, const char **vals,
                         char (*vb)[64], int *nv) {
    put_cut_shape(f, s);
    for (int64_t d = 0; d < s->rank; d++) {
        snprintf(vb[*nv], 64, "%s[%" PRId64 "]", arr, d);
        vals[*nv] = vb[*nv];
        (*nv)++;
    }
}

/* AB_SIZED of a select-and-scatter (the JIT's sized kernel, cpu_emit_sized_select_and_scatter,
 * which takes every select and scatter computation the emitter writes): the kernel reads
 * the operand's sizes then the source's (lz). The interpreter runs shape inference over
 * the cut operands, whose source must have the window's output shape over the cut operand
 * (its message otherwise); the result has the operand's sizes (checked against the
 * declared shape as the interpreter puts it back). */
static cxla_status put_select_scatter_sizes(aot *a, const acomp *c, const astep *st,
                                            cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const cxla_shape *xs = &in->operands[0]->shape, *ss = &in->operands[1]->shape;
    const cxla_attr *w = cxla_instr_attr(in, CXLA_ATTR_WINDOW);
    int64_t rank = xs->rank;
    if (in->operand_count != 3 || st->in_count != 3 || ss->rank != rank || in->shape.rank != rank ||
        rank > CXLA_MAX_RANK ||
        (rank && (!w || w->kind != CXLA_ATTR_KIND_WINDOW || w->v.window.rank != rank)))
        return aot_no(in, "a select-and-scatter whose window does not match its operand");
    cxla_strbuf_puts(b, "        const int64_t *const oz[3] = {");
    for (int64_t k = 0; k < 3; k++) {
        if (k) cxla_strbuf_puts(b, ", ");
        aot_dyn_put_sizes(c, st->in[k], b);
    }
    cxla_strbuf_printf(b,
                       "};\n        int64_t lz[%" PRId64 "], rz0[%" PRId64 "], wz[%" PRId64
                       "];\n        (void)oz;\n        (void)lz;\n        (void)rz0;\n"
                       "        (void)wz;\n",
                       rank ? 2 * rank : 1, rank ? rank : 1, rank ? rank : 1);
    for (int64_t j = 0; j < rank; j++) {
        const cxla_window_dim *wd = &w->v.window.dims[j];
        int64_t span = (wd->size - 1) * wd->rhs_dilation + 1;
        cxla_strbuf_printf(b,
                           "        lz[%" PRId64 "] = rz0[%" PRId64 "] = oz[0][%" PRId64
                           "];\n        lz[%" PRId64 "] = oz[1][%" PRId64 "];\n",
                           j, j, j, rank + j, j);
        cxla_strbuf_printf(b,
                           "        {\n"
                           "            int64_t base = oz[0][%" PRId64
                           "] == 0 ? 0 : (oz[0][%" PRId64 "] - 1) * %" PRId64 " + 1;\n"
                           "            int64_t all = base + (%" PRId64 ") + (%" PRId64 ");\n"
                           "            wz[%" PRId64 "] = all >= %" PRId64 " ? (all - %" PRId64
                           ") / %" PRId64 " + 1 : 0;\n"
                           "        }\n",
                           j, j, wd->lhs_dilation, wd->pad_low, wd->pad_high, j, span, span,
                           wd->stride);
    }
    /* infer_reduce.c's select-and-scatter rule over the cut operands, in its words. */
    cxla_strbuf f;
    cxla_strbuf_init(&f);
    const char *vals[2 * CXLA_MAX_RANK];
    char vb[2 * CXLA_MAX_RANK][64];
    int nv = 0;
    cxla_strbuf_puts(&f, "at the operands' dynamic sizes: select-and-scatter: the source ");
    put_cut_vals(&f, ss, "oz[1]", vals, vb, &nv);
    cxla_strbuf_puts(&f, " must have the windowed operand's shape ");
    put_cut_vals(&f, xs, "wz", vals, vb, &nv);
    cxla_strbuf_puts(b, "        if (0");
    for (int64_t j = 0; j < rank; j++)
        cxla_strbuf_printf(b, " || oz[1][%" PRId64 "] != wz[%" PRId64 "]", j, j);
    cxla_strbuf_puts(b, ")\n");
    aot_dyn_put_fail(a, b, "            ", in, "ERROR_DYNAMIC_MISMATCH", f.data ? f.data : "", vals,
                     nv);
    cxla_strbuf_free(&f);
    put_check_result(a, b, "        ", in, &in->shape, "rz0");
    return NULL;
}

/* Whether reduce-window |in| is one AB_WINDOW takes: N array inputs of one rank and N
 * static scalar init values, a window of that rank, N result leaves of that rank. */
static bool window_ok(const cxla_instr *in) {
    int64_t count = in->operand_count, n = count / 2;
    if (count < 2 || count % 2 || n > 64 || result_leaves(in) != n) return false;
    if ((n > 1) != (in->shape.type == CXLA_TUPLE)) return false;
    const cxla_shape *xs = &in->operands[0]->shape;
    const cxla_attr *w = cxla_instr_attr(in, CXLA_ATTR_WINDOW);
    if (!w || w->kind != CXLA_ATTR_KIND_WINDOW || w->v.window.rank != xs->rank) return false;
    for (int64_t k = 0; k < count; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        if (!cxla_type_is_array(s->type)) return false;
        if (k >= n ? s->rank != 0 : s->rank != xs->rank) return false;
    }
    for (int64_t e = 0; e < n; e++)
        if (!cxla_type_is_array(result_leaf(in, e)->type) || result_leaf(in, e)->rank != xs->rank)
            return false;
    return true;
}

cxla_status aot_dynlib_check(aot *a, const cxla_instr *in, aot_bounds *out_bounds, bool *taken) {
    *taken = false;
    const cxla_instr *at_bounds = a->bounds_instr ? a->bounds_instr[in->id] : NULL;
    switch (in->opcode) {
    case CXLA_OP_REDUCE_WINDOW:
        if (!window_ok(in))
            return aot_no(in, "a reduce-window whose inputs, init values, window or results "
                              "do not line up (N arrays of one rank, N scalars)");
        *taken = true;
        *out_bounds = AB_WINDOW;
        return NULL;
    case CXLA_OP_SELECT_AND_SCATTER: {
        const cxla_attr *w = cxla_instr_attr(in, CXLA_ATTR_WINDOW);
        int64_t rank = in->operands[0]->shape.rank;
        if (in->operand_count != 3 || in->operands[1]->shape.rank != rank ||
            in->operands[2]->shape.rank != 0 || in->shape.type == CXLA_TUPLE ||
            in->shape.rank != rank ||
            (rank && (!w || w->kind != CXLA_ATTR_KIND_WINDOW || w->v.window.rank != rank)))
            return aot_no(in, "a select-and-scatter whose window, source or result does not "
                              "match its operand");
        if (!at_bounds || !cpu_emit_sized_select_and_scatter_ok(at_bounds))
            return aot_no(in, "a select-and-scatter whose window, element types or "
                              "computations the emitter's sized kernel does not take");
        *taken = true;
        *out_bounds = AB_SIZED;
        return NULL;
    }
    default: return NULL;
    }
}

cxla_status aot_dynlib_emit_sized(const cxla_instr *at_bounds, const char *name, cxla_strbuf *out,
                                  cpu_kernel_info *info) {
    /* The scatter kernels set only some fields (no work memory). */
    memset(info, 0, sizeof *info);
    if (at_bounds->opcode == CXLA_OP_SCATTER)
        return cpu_emit_sized_scatter(at_bounds, name, out, info);
    if (at_bounds->opcode == CXLA_OP_SELECT_AND_SCATTER)
        return cpu_emit_sized_select_and_scatter(at_bounds, name, out, info);
    return cpu_emit_sized_reduce(at_bounds, name, out, info);
}

cxla_status aot_dynlib_emit(aot *a, const acomp *c, const astep *st, int phase, cxla_strbuf *b,
                            bool *done) {
    *done = true;
    if (st->bounds == AB_GATHER || st->bounds == AB_SCATTER ||
        (st->bounds == AB_SIZED && st->instr->opcode == CXLA_OP_SCATTER))
        return aot_dindex_emit(a, c, st, phase, b, done); /* aot_dindex.c */
    if (phase == 0 && st->bounds == AB_SIZED && st->instr->opcode == CXLA_OP_SELECT_AND_SCATTER)
        return put_select_scatter_sizes(a, c, st, b);
    if (phase == 0 && (st->bounds == AB_SORT || st->bounds == AB_SIZED))
        return put_lined_sizes(a, c, st, b);
    if (phase == 0 && st->bounds == AB_INFERRED) return put_inferred_sizes(a, c, st, b);
    if (phase == 0 && st->bounds == AB_WINDOW) return put_window_sizes(a, c, st, b);
    if (phase == 1 && st->bounds == AB_WINDOW) return put_window_fill(a, c, st, b);
    *done = false;
    return NULL;
}
