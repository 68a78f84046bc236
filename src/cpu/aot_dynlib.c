/* Bounded dynamic shapes in ahead-of-time output: the kernel steps at the bounds that read
 * or rewrite something by the run-time sizes, the JIT's newer kinds (src/cpu/cpu_steps.h's
 * B_SORT, B_SIZED, B_INDEXED, B_INFERRED; cpu_dynamic_lib.c, cpu_dynwin.c) written as C
 * (aot_internal.h's AB_SORT ... AB_SCATTER; docs/aot.md, "Dynamic shapes"):
 *
 * - sort along a dynamic dimension and reduce with any reducer (an argmax): the JIT's
 *   kernels that take the sizes as one more input (cpu_emit_sort_sized,
 *   cpu_emit_sized_reduce), the inputs' sizes lined up as the interpreter lines them up;
 * - bitcast and bitcast-convert: the static kernel at the bounds, the result's sizes
 *   inferred from the operand's;
 * - reduce-window of one input: the static kernel over a copy whose padding holds the init
 *   value (which the interpreter folds at the cut operand's window padding);
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

/* AB_WINDOW: a reduce-window of one input over dynamic dimensions. The interpreter runs
 * the static operation on the operand cut to its sizes, where a window position past a
 * size is the window's padding (or a hole), which folds the init value. A copy of the
 * operand whose buffer padding holds the init value (phase 1, as AB_REDUCE fills it) gives
 * the static kernel at the bounds the same value at every position of every window the
 * cut result has, in the same order. The result's sizes: shape inference's window rule
 * (cpu_dynwin.c's window_out) over the operand's sizes, checked against the declared
 * shape. */
static cxla_status put_window_sizes(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const cxla_shape *xs = &in->operands[0]->shape, *ys = &in->shape;
    const cxla_attr *w = cxla_instr_attr(in, CXLA_ATTR_WINDOW);
    if (!w || w->kind != CXLA_ATTR_KIND_WINDOW || w->v.window.rank != xs->rank ||
        ys->rank != xs->rank || in->operand_count != 2)
        return aot_no(in, "a reduce-window whose window does not match its operand");
    cxla_strbuf_puts(b, "        const int64_t *const oz[2] = {");
    aot_dyn_put_sizes(c, st->in[0], b);
    cxla_strbuf_puts(b, ", ");
    aot_dyn_put_sizes(c, st->in[1], b);
    cxla_strbuf_printf(
        b, "};\n        int64_t rz0[%" PRId64 "];\n        (void)oz;\n        (void)rz0;\n",
        ys->rank ? ys->rank : 1);
    for (int64_t j = 0; j < xs->rank; j++) {
        const cxla_window_dim *wd = &w->v.window.dims[j];
        int64_t span = (wd->size - 1) * wd->rhs_dilation + 1;
        cxla_strbuf_printf(b,
                           "        {\n"
                           "            int64_t base = oz[0][%" PRId64
                           "] == 0 ? 0 : (oz[0][%" PRId64 "] - 1) * %" PRId64 " + 1;\n"
                           "            int64_t padded = base + (%" PRId64 ") + (%" PRId64 ");\n"
                           "            rz0[%" PRId64 "] = padded >= %" PRId64
                           " ? (padded - %" PRId64 ") / %" PRId64 " + 1 : 0;\n"
                           "        }\n",
                           j, j, wd->lhs_dilation, wd->pad_low, wd->pad_high, j, span, span,
                           wd->stride);
    }
    cxla_strbuf_puts(b, "        int padded = 0");
    for (int64_t d = 0; d < xs->rank; d++)
        if (exec_shape_dim_dynamic(xs, d))
            cxla_strbuf_printf(b, " || oz[0][%" PRId64 "] < %" PRId64, d, xs->dims[d]);
    cxla_strbuf_puts(b, ";\n        (void)padded;\n        if (padded) {\n");
    put_check_result(a, b, "            ", in, ys, "rz0");
    cxla_strbuf_puts(b, "        } else {\n");
    for (int64_t d = 0; d < ys->rank; d++)
        cxla_strbuf_printf(b, "            rz0[%" PRId64 "] = %" PRId64 ";\n", d, ys->dims[d]);
    cxla_strbuf_puts(b, "        }\n");
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
    if (n > 64 || m < 1 || xs->rank > CXLA_MAX_RANK)
        return aot_no(in, "too many operands for a kernel over the run-time sizes");
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
    int64_t ks[64], ds[64];
    for (int64_t d = 0; d < xs->rank; d++) {
        for (int64_t k = 0; k < m; k++) {
            ks[k] = k;
            ds[k] = d;
        }
        aot_dyn_put_align(a, b, "                ", in, ks, ds, m);
    }
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

cxla_status aot_dynlib_emit(aot *a, const acomp *c, const astep *st, int phase, cxla_strbuf *b,
                            bool *done) {
    *done = true;
    if (st->bounds == AB_GATHER || st->bounds == AB_SCATTER ||
        (st->bounds == AB_SIZED && st->instr->opcode == CXLA_OP_SCATTER))
        return aot_dindex_emit(a, c, st, phase, b, done); /* aot_dindex.c */
    if (phase == 0 && (st->bounds == AB_SORT || st->bounds == AB_SIZED))
        return put_lined_sizes(a, c, st, b);
    if (phase == 0 && st->bounds == AB_INFERRED) return put_inferred_sizes(a, c, st, b);
    if (phase == 0 && st->bounds == AB_WINDOW) return put_window_sizes(a, c, st, b);
    *done = false;
    return NULL;
}
