/* Ahead-of-time output: the C function of one built computation (aot_internal.h,
 * aot_emit_function): its steps in order, each kernel called over the leaves the plan
 * placed (aot.c), while loops, conditionals and calls as C control flow over the callees'
 * functions, dynamic-update-slice in place, and the final copies of results that could not
 * be computed in their buffers. The steps that other files own (aot_ops.c, aot_rng.c,
 * aot_blas.c, aot_dyn.c) write their own statements. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/aot_internal.h"
#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/emit_internal.h"

/* ---- emitting a computation ----------------------------------------------------------------- */

static void comment_instr(cxla_strbuf *b, const cxla_instr *in) {
    cxla_strbuf t;
    cxla_strbuf_init(&t);
    cxla_hlo_print_instr(&t, in, CXLA_HLO_STYLE_SHORT);
    if (t.data) {
        for (char *p = strstr(t.data, "*/"); p; p = strstr(p, "*/")) p[1] = ' ';
        for (char *p = strstr(t.data, "/*"); p; p = strstr(p, "/*")) p[1] = ' ';
        for (char *p = t.data; *p; p++)
            if (*p == '\n') *p = ' ';
        if (t.len > 160) memcpy(t.data + 156, " ...", 5);
    }
    cxla_strbuf_printf(b, "    /* %s */\n", t.data ? t.data : in->name);
    cxla_strbuf_free(&t);
}

/* With dynamic shapes (a->bounds) every function also takes its parameters' sizes and
 * returns its results' (aot_dyn_put_zlist's arrays |zi| and |zo|, NULL: "0"). */
static void put_call(aot *a, cxla_strbuf *b, const cxla_computation *callee, const char *in,
                     const char *out, const char *indent, const char *zi, const char *zo) {
    const acomp *x = &a->comps[aot_comp_pos(a->m, callee)];
    cxla_strbuf_printf(b, "%src = %s_f%" PRId64 "(opt, rng, %s, %s, sub", indent, a->P, x->fn, in,
                       out);
    if (a->bounds) cxla_strbuf_printf(b, ", %s, %s", zi ? zi : "0", zo ? zo : "0");
    cxla_strbuf_printf(b, "); /* %s */\n%sif (rc) return rc;\n", callee->name, indent);
}

/* A call of while body |body| (built with out == in). */
static void put_body_call(aot *a, cxla_strbuf *b, const cxla_computation *body, const char *in,
                          const char *out, const char *indent, const char *zi, const char *zo) {
    const acomp *x = &a->bodies[aot_comp_pos(a->m, body)];
    cxla_strbuf_printf(b, "%src = %s_f%" PRId64 "(opt, rng, %s, %s, sub", indent, a->P, x->fn, in,
                       out);
    if (a->bounds) cxla_strbuf_printf(b, ", %s, %s", zi ? zi : "0", zo ? zo : "0");
    cxla_strbuf_printf(b, "); /* %s */\n%sif (rc) return rc;\n", body->name, indent);
}

/* A dynamic-update-slice in place (share_buffers): the start indices clamped as the
 * interpreter clamps them, then the update's rows written into the operand's buffer, which
 * is the result's; the rest of it is not touched. */
static cxla_status emit_dus_in_place(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const cxla_shape *os = &in->shape, *us = &in->operands[1]->shape;
    int64_t r = os->rank, r1 = r ? r : 1;
    if (st->in_count != 2 + r || us->rank != r)
        return cxla_error(CXLA_STATUS_INTERNAL, "%s: bad dynamic-update-slice", in->name);
    if (!a->dus_helper) {
        a->dus_helper = true;
        cxla_strbuf_printf(
            &a->kernels,
            "/* dynamic-update-slice in place: the update |src| (row-major, dims ud) into |dst|\n"
            " * (dims od) from the start |at| (clamped by the caller), one row at a time. */\n"
            "static void %s_dus(char *dst, const char *src, int rank, const int64_t *od,\n"
            "                   const int64_t *ud, const int64_t *at, size_t elem) {\n"
            "    int64_t idx[%d] = {0}, total = 1;\n"
            "    for (int d = 0; d < rank; d++) total *= ud[d];\n"
            "    if (total == 0) return;\n"
            "    int64_t row = rank ? ud[rank - 1] : 1, rows = total / row;\n"
            "    for (int64_t k = 0; k < rows; k++) {\n"
            "        int64_t off = 0, stride = 1;\n"
            "        for (int d = rank - 1; d >= 0; d--) {\n"
            "            off += (at[d] + idx[d]) * stride;\n"
            "            stride *= od[d];\n"
            "        }\n"
            "        memcpy(dst + (size_t)off * elem, src + (size_t)(k * row) * elem,\n"
            "               (size_t)row * elem);\n"
            "        for (int d = rank - 2; d >= 0; d--) { /* the update's next row */\n"
            "            if (++idx[d] < ud[d]) break;\n"
            "            idx[d] = 0;\n"
            "        }\n"
            "    }\n"
            "}\n\n",
            a->P, CXLA_MAX_RANK);
    }
    cxla_strbuf_puts(b, "        /* in place: the update into its operand's buffer */\n");
    cxla_strbuf_printf(b, "        static const int64_t od[%" PRId64 "] = {", r1);
    for (int64_t d = 0; d < r1; d++)
        cxla_strbuf_printf(b, "%s%" PRId64, d ? ", " : "", r ? os->dims[d] : 0);
    cxla_strbuf_printf(b, "}, ud[%" PRId64 "] = {", r1);
    for (int64_t d = 0; d < r1; d++)
        cxla_strbuf_printf(b, "%s%" PRId64, d ? ", " : "", r ? us->dims[d] : 0);
    cxla_strbuf_printf(b, "};\n        int64_t at[%" PRId64 "] = {0};\n", r1);
    for (int64_t d = 0; d < r; d++) {
        cxla_type it = in->operands[2 + d]->shape.type;
        if (!cxla_type_is_integer(it)) return aot_no(in, "the start indices must be integers");
        int64_t hi = os->dims[d] - us->dims[d];
        if (it == CXLA_U64) {
            cxla_strbuf_puts(b, "        {\n            uint64_t u = *(const uint64_t *)");
            aot_put_leaf(a, c, st->in[2 + d], b);
            cxla_strbuf_puts(
                b,
                ";\n            int64_t v = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;\n");
        } else {
            cxla_strbuf_printf(b, "        {\n            int64_t v = (int64_t) * (const %s *)",
                               cpu_emit_stype(it));
            aot_put_leaf(a, c, st->in[2 + d], b);
            cxla_strbuf_puts(b, ";\n");
        }
        cxla_strbuf_printf(b,
                           "            at[%" PRId64 "] = v < 0 ? 0 : v > %" PRId64 " ? %" PRId64
                           " : v;\n        }\n",
                           d, hi, hi);
    }
    cxla_strbuf_printf(b, "        %s_dus((char *)", a->P);
    aot_put_leaf(a, c, st->out[0], b);
    cxla_strbuf_puts(b, ", (const char *)");
    aot_put_leaf(a, c, st->in[1], b);
    cxla_strbuf_printf(b, ", %d, od, ud, at, %zu);\n", (int)r, cxla_type_storage(os->type));
    return NULL;
}

/* The results no step wrote where they belong, copied at the end: first the sources that
 * are parameters' buffers another result is written into (to temporaries), then the
 * results that are buffers of their own, then those that are parameters' buffers. */
static void emit_final_copies(aot *a, const acomp *c, cxla_strbuf *b) {
    for (int64_t k = 0; c->end_tmp && k < c->root_count; k++) {
        if (c->end_tmp[k] < 0) continue;
        cxla_strbuf_puts(b, "    memcpy(");
        aot_put_leaf(a, c, c->end_tmp[k], b);
        cxla_strbuf_puts(b, ", ");
        aot_put_leaf(a, c, c->root[k], b);
        cxla_strbuf_printf(b, ", %zu); /* result %" PRId64 ", before the state changes */\n",
                           aot_leaf_size(&c->leaves[c->root[k]]), k);
    }
    for (int pass = 0; pass < 2; pass++)
        for (int64_t k = 0; k < c->root_count; k++) {
            int64_t p = c->out_is_in ? c->out_is_in[k] : -1;
            if ((pass == 0) != (p < 0)) continue;
            int64_t rc = c->leaves[c->root[k]].parent;
            const aleaf *l = &c->leaves[rc];
            if (p < 0 && l->kind == L_OUT && l->index == k) continue;
            if (p >= 0 && rc == c->leaves[c->param_leaf[p]].parent) continue;
            size_t size = aot_leaf_size(&c->leaves[c->root[k]]);
            if (size == 0) continue;
            cxla_strbuf_printf(b, "    memcpy(out[%" PRId64 "], ", k);
            aot_put_leaf(a, c, c->end_tmp && c->end_tmp[k] >= 0 ? c->end_tmp[k] : c->root[k], b);
            cxla_strbuf_printf(b, ", %zu);\n", size);
        }
}

cxla_status aot_emit_function(aot *a, const cxla_computation *comp, acomp *c) {
    cxla_strbuf *b = &a->funcs;
    cxla_strbuf_printf(b,
                       "/* computation %s: %" PRId64 " parameter leaves, %" PRId64
                       " result leaves, %zu bytes of its own scratch (%zu with its callees) */\n",
                       comp->name, c->param_leaves, c->root_count, c->own, c->total);
    cxla_strbuf_printf(
        b,
        "static int %s_f%" PRId64
        "(const %s_options *opt, uint64_t *rng, const void *const *in, void *const *out,\n"
        "        char *scratch%s) {\n",
        a->P, c->fn, a->P, c->dyn_off ? ", const int64_t *const *zin, int64_t *const *zout" : "");
    cxla_strbuf_printf(b, "    char *const sub = scratch + %zu; /* the callees' scratch */\n",
                       c->own);
    cxla_strbuf_puts(
        b, "    int rc = 0;\n    (void)opt;\n    (void)rng;\n    (void)in;\n    (void)out;\n    "
           "(void)sub;\n    (void)rc;\n");
    if (c->dyn_off) aot_dyn_emit_begin(a, c, b);
    for (int64_t si = 0; si < c->step_count; si++) {
        const astep *st = &c->steps[si];
        const cxla_instr *in = st->instr;
        comment_instr(b, in);
        cxla_strbuf_puts(b, "    {\n");
        switch (st->kind) {
        case S_COPY:
        case S_ZERO:
        case S_CUSTOM:
        case S_INFEED:
        case S_OUTFEED:
        case S_BLAS:
        case S_SEND:
        case S_RECV:
        case S_RECV_DONE:
        case S_PERMUTE:
        case S_RAGGED: {
            cxla_status e = aot_ops_emit(a, c, st, b);
            if (e) return e;
            break;
        }
        case S_RNG: {
            cxla_status e = aot_rng_emit(a, c, st, b);
            if (e) return e;
            break;
        }
        case S_SIZE: {
            cxla_status e = aot_dyn_emit_size(a, c, st, b);
            if (e) return e;
            break;
        }
        case S_DMOVE: {
            cxla_status e = aot_dmove_emit(a, c, st, b);
            if (e) return e;
            break;
        }
        case S_KERNEL:
            if (st->pieces) {
                cxla_strbuf_puts(b, "        /* pieces in place: the operands were computed in "
                                    "their places */\n");
                break;
            }
            if (st->in_place) {
                cxla_status e = emit_dus_in_place(a, c, st, b);
                if (e) return e;
                break;
            }
            if (in->opcode == CXLA_OP_DYNAMIC_UPDATE_SLICE && !a->emitted[in->id]) {
                /* written when first called (kernel_step) */
                char name[64];
                cpu_kernel_info info;
                snprintf(name, sizeof name, "%s_k%" PRId64, a->P, in->id);
                a->emitted[in->id] = true;
                cxla_status e = cpu_emit_kernel_info(in, name, &a->kernels, &info);
                if (!e && info.scratch)
                    e = cxla_error(CXLA_STATUS_INTERNAL, "%s: unexpected work memory", in->name);
                if (e) return e;
            }
            if (st->bounds != AB_STATIC) {
                cxla_status e = aot_dyn_emit_kernel(a, c, st, 0, b);
                if (e) return e;
            }
            int64_t work = st->tmp_count > aot_fill_count(st) ? 1 : 0; /* work memory */
            /* A kernel that reads the run-time sizes takes them after its operands. */
            bool sized = st->bounds == AB_SORT || st->bounds == AB_SIZED;
            cxla_strbuf_printf(b, "        const void *a[%" PRId64 "] = ",
                               (st->in_count + sized) ? st->in_count + sized : 1);
            aot_put_leaf_list(a, c, st->in, st->in_count, b);
            if (sized) cxla_strbuf_printf(b, ";\n        a[%" PRId64 "] = lz", st->in_count);
            cxla_strbuf_printf(b, ";\n        void *r[%" PRId64 "] = ",
                               (st->out_count + work) ? st->out_count + work : 1);
            if (work) { /* the kernel's work memory, after its results */
                cxla_strbuf_puts(b, "{");
                for (int64_t k = 0; k < st->out_count; k++) {
                    aot_put_leaf(a, c, st->out[k], b);
                    cxla_strbuf_puts(b, ", ");
                }
                aot_put_leaf(a, c, st->tmp[0], b);
                cxla_strbuf_puts(b, "}");
            } else {
                aot_put_leaf_list(a, c, st->out, st->out_count, b);
            }
            cxla_strbuf_puts(b, ";\n");
            if (st->bounds != AB_STATIC) {
                cxla_status e = aot_dyn_emit_kernel(a, c, st, 1, b);
                if (e) return e;
            }
            if (st->aliased) {
                /* Its result over operand st->alias (a state rewritten where it lies): the
                 * kernel's form that reads that operand through its result (emit.h). */
                uint64_t bit = (uint64_t)1 << st->alias;
                char name[64];
                snprintf(name, sizeof name, "%s_ka%" PRId64 "_%" PRId64, a->P, in->id, st->alias);
                if (!(a->alias_emitted[in->id] & bit)) {
                    a->alias_emitted[in->id] |= bit;
                    cxla_status e = cpu_emit_kernel_alias(in, st->alias, name, &a->kernels, NULL);
                    if (e) return e;
                }
                cxla_strbuf_printf(b, "        %s(" AOT_KERNEL_CALL_ARGS ");\n", name);
            } else {
                cxla_strbuf_printf(b, "        %s_k%" PRId64 "(" AOT_KERNEL_CALL_ARGS ");\n", a->P,
                                   in->id);
            }
            if (st->bounds != AB_STATIC) {
                cxla_status e = aot_dyn_emit_kernel(a, c, st, 2, b);
                if (e) return e;
            }
            break;
        case S_CALL:
            cxla_strbuf_printf(
                b, "        const void *a[%" PRId64 "] = ", st->in_count ? st->in_count : 1);
            aot_put_leaf_list(a, c, st->in, st->in_count, b);
            cxla_strbuf_printf(
                b, ";\n        void *r[%" PRId64 "] = ", st->out_count ? st->out_count : 1);
            aot_put_leaf_list(a, c, st->out, st->out_count, b);
            cxla_strbuf_puts(b, ";\n");
            if (a->bounds) {
                aot_dyn_put_reset(c, st->out, st->out_count, "        ", b);
                aot_dyn_put_zlist(c, st->in, st->in_count, false, "zi", "        ", b);
                aot_dyn_put_zlist(c, st->out, st->out_count, true, "zo", "        ", b);
            }
            /* call's to_apply, or the computation an async-start wraps (aot_ops.c) or a
             * fusion with no kernel of its own fuses (aot.c) */
            put_call(a, b,
                     cxla_instr_called(in, in->opcode == CXLA_OP_ASYNC_START ||
                                                   in->opcode == CXLA_OP_FUSION
                                               ? CXLA_ATTR_CALLS
                                               : CXLA_ATTR_TO_APPLY),
                     "a", "r", "        ", "zi", "zo");
            break;
        case S_COND: {
            cxla_computation *called[64];
            int64_t nb = cxla_instr_called_computations(in, called, 64);
            const cxla_shape *sel = &in->operands[0]->shape;
            cxla_strbuf_printf(
                b, "        void *r[%" PRId64 "] = ", st->out_count ? st->out_count : 1);
            aot_put_leaf_list(a, c, st->out, st->out_count, b);
            cxla_strbuf_puts(b, ";\n        int64_t branch;\n");
            if (sel->type == CXLA_PRED) {
                /* true_computation is branch 0. */
                cxla_strbuf_puts(b, "        branch = *(const uint8_t *)");
                aot_put_leaf(a, c, st->in[0], b);
                cxla_strbuf_puts(b, " ? 0 : 1;\n");
            } else {
                cxla_strbuf_printf(b, "        branch = (int64_t) * (const %s *)",
                                   cpu_emit_stype(sel->type));
                aot_put_leaf(a, c, st->in[0], b);
                cxla_strbuf_printf(b,
                                   ";\n        /* An index out of range runs the last branch. */\n"
                                   "        if (branch < 0 || branch >= %" PRId64
                                   ") branch = %" PRId64 ";\n",
                                   nb, nb - 1);
            }
            cxla_strbuf_puts(b, "        switch (branch) {\n");
            int64_t at = 1; /* leaves of the branch operands start after the selector */
            for (int64_t k = 0; k < nb; k++) {
                const acomp *br = &a->comps[aot_comp_pos(a->m, called[k])];
                int64_t nl = br->param_leaves;
                if (k + 1 < nb)
                    cxla_strbuf_printf(b, "        case %" PRId64 ": {\n", k);
                else
                    cxla_strbuf_puts(b, "        default: {\n");
                cxla_strbuf_printf(b, "            const void *a[%" PRId64 "] = ", nl ? nl : 1);
                aot_put_leaf_list(a, c, st->in + at, nl, b);
                cxla_strbuf_puts(b, ";\n");
                if (a->bounds) {
                    aot_dyn_put_reset(c, st->out, st->out_count, "            ", b);
                    aot_dyn_put_zlist(c, st->in + at, nl, false, "zi", "            ", b);
                    aot_dyn_put_zlist(c, st->out, st->out_count, true, "zo", "            ", b);
                }
                put_call(a, b, called[k], "a", "r", "            ", "zi", "zo");
                cxla_strbuf_puts(b, "            break;\n        }\n");
                at += nl;
            }
            cxla_strbuf_puts(b, "        }\n");
            break;
        }
        case S_WHILE: {
            int64_t n = st->out_count, n1 = n ? n : 1;
            cxla_strbuf_printf(b,
                               "        /* The state, updated in place by the body (called with "
                               "out == in). */\n"
                               "        void *st[%" PRId64 "] = ",
                               n1);
            aot_put_leaf_list(a, c, st->out, n, b);
            cxla_strbuf_printf(b, ";\n        const void *now[%" PRId64 "] = ", n1);
            aot_put_leaf_list(a, c, st->out, n, b);
            cxla_strbuf_puts(b, ";\n");
            for (int64_t k = 0; k < n; k++) {
                size_t size = aot_leaf_size(&c->leaves[st->out[k]]);
                if (c->leaves[st->in[k]].parent == c->leaves[st->out[k]].parent || size == 0)
                    continue; /* the initial value's buffer is the state's */
                cxla_strbuf_printf(b, "        memcpy(st[%" PRId64 "], ", k);
                aot_put_leaf(a, c, st->in[k], b);
                cxla_strbuf_printf(b, ", %zu);\n", size);
            }
            if (a->bounds) { /* the state's sizes, updated by the body as its values */
                aot_dyn_put_while_sizes(c, st, "        ", b);
                aot_dyn_put_zlist(c, st->out, n, false, "zi", "        ", b);
                aot_dyn_put_zlist(c, st->out, n, true, "zo", "        ", b);
            }
            cxla_strbuf_puts(b, "        uint8_t *const pred = (uint8_t *)");
            aot_put_leaf(a, c, st->tmp[0], b);
            cxla_strbuf_puts(b, ";\n        void *pr[1] = {pred};\n        for (;;) {\n");
            put_call(a, b, cxla_instr_called(in, CXLA_ATTR_CONDITION), "now", "pr", "            ",
                     "zi", NULL);
            cxla_strbuf_puts(b, "            if (!*pred) break;\n");
            put_body_call(a, b, cxla_instr_called(in, CXLA_ATTR_BODY), "now", "st", "            ",
                          "zi", "zo");
            cxla_strbuf_puts(b, "        }\n        (void)st;\n");
            break;
        }
        }
        cxla_strbuf_puts(b, "    }\n");
    }
    emit_final_copies(a, c, b);
    if (c->dyn_off) aot_dyn_emit_end(a, c, b);
    cxla_strbuf_puts(b, "    return 0;\n}\n\n");
    return a->err;
}
