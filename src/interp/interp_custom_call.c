/* Interpreter handler for custom-call: resolves the target through the shared registry
 * (exec/custom_call.h), runs the built-in targets on the interpreter's values (and an
 * `xla_builder.*` call's decomposition as a call of it, where the other backends run the
 * builder-calls pass's rewrite into a call: the two are compared), and calls
 * foreign functions with XLA's CPU calling convention (buffers in the module's layouts,
 * tuple results as arrays of leaf pointers). docs/semantics.md ("Custom calls") has the
 * user-facing description. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exec/custom_call.h"
#include "interp/interp_host.h"
#include "interp/interp_reduce.h"

static cxla_status oom(void) {
    return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

/* ---- leaves ------------------------------------------------------------------------- */

/* The layout of |s| as host memory sees it (tiles and memory spaces ignored); NULL for
 * row-major. */
static const cxla_layout *host_layout(const cxla_shape *s, cxla_layout *storage) {
    if (!s || !s->layout || cxla_layout_is_default(s)) return NULL;
    *storage = *s->layout;
    storage->tile_count = 0;
    storage->tiles = NULL;
    storage->memory_space = 0;
    return storage;
}

/* The operands' leaves for |in|: pointers into the values, or into relaid copies (kept
 * in |temps| to free) when the wanted layout is not row-major. |lits| holds the literal
 * of each leaf (NULL for tokens). */
typedef struct leaves {
    const void **ptrs;
    const cxla_literal **lits;
    int64_t count;
    cxla_literal **temps;
    int64_t temp_count;
} leaves;

static cxla_status add_leaves(leaves *l, const cxla_literal *lit, const cxla_shape *want) {
    cxla_type t = cxla_literal_type(lit);
    if (t == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            CXLA_RETURN_IF_ERROR(add_leaves(
                l, cxla_literal_tuple_element_const(lit, i),
                want && want->type == CXLA_TUPLE && i < want->tuple_count ? &want->elements[i]
                                                                          : NULL));
        return NULL;
    }
    if (!cxla_type_is_array(t)) {
        l->lits[l->count] = NULL;
        l->ptrs[l->count++] = NULL;
        return NULL;
    }
    cxla_layout storage;
    const cxla_layout *layout =
        want && want->rank == cxla_literal_shape(lit)->rank ? host_layout(want, &storage) : NULL;
    if (layout) {
        cxla_literal *copy = NULL;
        CXLA_RETURN_IF_ERROR(cxla_literal_relayout(lit, layout, &copy));
        l->temps[l->temp_count++] = copy;
        lit = copy;
    }
    l->lits[l->count] = lit;
    l->ptrs[l->count++] = cxla_literal_data_const(lit);
    return NULL;
}

/* A zero-filled literal of |shape| in its host layout. */
static cxla_status create_in_layout(const cxla_shape *shape, cxla_literal **out) {
    if (shape->type == CXLA_TUPLE) {
        int64_t n = shape->tuple_count;
        cxla_literal **elements = calloc((size_t)(n ? n : 1), sizeof(*elements));
        if (!elements) return oom();
        cxla_status s = NULL;
        for (int64_t i = 0; i < n && !s; i++)
            s = create_in_layout(&shape->elements[i], &elements[i]);
        if (!s) s = cxla_literal_create_tuple(elements, n, out);
        if (s)
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        free(elements);
        return s;
    }
    cxla_shape plain = *shape;
    cxla_layout storage;
    plain.layout =
        cxla_type_is_array(shape->type) ? (cxla_layout *)host_layout(shape, &storage) : NULL;
    return cxla_literal_create(&plain, out);
}

static void result_leaves(cxla_literal *lit, cxla_literal **lits, int64_t *n) {
    if (cxla_literal_type(lit) == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            result_leaves(cxla_literal_tuple_element(lit, i), lits, n);
        return;
    }
    lits[(*n)++] = lit;
}

/* Starts aliased output leaf |out| as a copy of input leaf |in| (in the output's layout). */
static cxla_status prefill(const cxla_instr *instr, cxla_literal *out, const cxla_literal *in) {
    if (!in || !cxla_type_is_array(cxla_literal_type(out))) return NULL;
    const cxla_shape *os = cxla_literal_shape(out), *is = cxla_literal_shape(in);
    if (!cxla_shape_compatible(os, is))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "output_to_operand_aliasing pairs leaves of different shapes");
    if (cxla_shape_equal(os, is)) {
        if (cxla_literal_byte_size(out))
            memcpy(cxla_literal_data(out), cxla_literal_data_const(in),
                   cxla_literal_byte_size(out));
        return NULL;
    }
    cxla_literal *copy = NULL;
    CXLA_RETURN_IF_ERROR(cxla_literal_relayout(in, os->layout, &copy));
    if (cxla_literal_byte_size(out))
        memcpy(cxla_literal_data(out), cxla_literal_data_const(copy), cxla_literal_byte_size(out));
    cxla_literal_free(copy);
    return NULL;
}

/* ---- calling a foreign function ----------------------------------------------------- */

static cxla_status call_foreign(interp_ctx *ctx, const cxla_instr *instr, const char *target,
                                cxla_custom_call_fn fn, cxla_custom_call_api_version api,
                                const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_attr *constraints = cxla_instr_attr(instr, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS);
    if (constraints && (constraints->kind != CXLA_ATTR_KIND_SHAPES ||
                        constraints->v.shapes.count != instr->operand_count))
        constraints = NULL;
    int64_t in_total = 0, out_total = exec_leaf_count(&instr->shape);
    for (int64_t k = 0; k < instr->operand_count; k++)
        in_total += exec_leaf_count(cxla_literal_shape(operands[k]));
    size_t in_cap = (size_t)(in_total ? in_total : 1),
           out_cap = (size_t)(out_total ? out_total : 1);
    leaves in = {0};
    in.ptrs = calloc(in_cap, sizeof(*in.ptrs));
    in.lits = calloc(in_cap, sizeof(*in.lits));
    in.temps = calloc(in_cap, sizeof(*in.temps));
    void **outs = calloc(out_cap, sizeof(*outs));
    cxla_literal **out_lits = calloc(out_cap, sizeof(*out_lits));
    int64_t *alias = calloc(out_cap, sizeof(*alias));
    char *opaque = NULL;
    size_t opaque_len = 0;
    cxla_literal *result = NULL;
    cxla_custom_call_status st = {0};
    cxla_status s = in.ptrs && in.lits && in.temps && outs && out_lits && alias ? NULL : oom();
    for (int64_t k = 0; k < instr->operand_count && !s; k++)
        s = add_leaves(&in, operands[k],
                       constraints ? &constraints->v.shapes.items[k] : &instr->operands[k]->shape);
    if (!s) s = create_in_layout(&instr->shape, &result);
    int64_t nout = 0;
    if (!s) {
        result_leaves(result, out_lits, &nout);
        for (int64_t i = 0; i < nout; i++) outs[i] = cxla_literal_data(out_lits[i]);
        s = exec_custom_call_aliasing(instr, alias, nout);
    }
    /* An aliased output starts as its operand and is passed for both: XLA's in-place
     * update, where the two are one buffer. */
    for (int64_t i = 0; i < nout && !s; i++) {
        if (alias[i] < 0 || alias[i] >= in.count) continue;
        s = prefill(instr, out_lits[i], in.lits[alias[i]]);
        in.ptrs[alias[i]] = outs[i];
    }
    if (!s) s = exec_custom_call_opaque(instr, &opaque, &opaque_len);
    if (!s) {
        void *out_arg = instr->shape.type == CXLA_TUPLE ? (void *)outs : outs[0];
        exec_custom_call_invoke(fn, api, out_arg, in.ptrs, opaque, opaque_len, &st,
                                ctx->options.cancel);
        /* A target that failed because the run was cancelled (a run it started, stopped
         * by the outer run's cancellation): the cancellation is the reason. */
        if (st.failed && exec_cancelled(ctx->options.cancel))
            s = exec_cancel_error_at(ctx->options.cancel, instr);
        else if (st.failed)
            s = interp_error(instr, CXLA_STATUS_FAILED_PRECONDITION,
                             "custom-call target '%s' failed: %s", target,
                             st.message ? st.message : "(no message)");
    }
    if (!s && interp_is_row_major(result)) {
        *out = result;
        result = NULL;
    } else if (!s) {
        s = interp_relayout_tree(result, NULL, out);
    }
    exec_custom_call_status_clear(&st);
    free(opaque);
    cxla_literal_free(result);
    for (int64_t i = 0; i < in.temp_count; i++) cxla_literal_free(in.temps[i]);
    free(in.temps);
    free(in.lits);
    free(in.ptrs);
    free(outs);
    free(out_lits);
    free(alias);
    return s;
}

/* ---- built-in targets --------------------------------------------------------------------- */

/* The result is the operand (one operand), or the tuple of the operands: annotations
 * that mean nothing on one device. A shape change means a sharded program. */
static cxla_status builtin_identity(interp_ctx *ctx, const cxla_instr *instr, const char *target,
                                    const cxla_literal *const *operands, cxla_literal **out) {
    int64_t n = instr->operand_count;
    const cxla_shape *r = &instr->shape;
    if (n == 1 && cxla_shape_compatible(r, cxla_literal_shape(operands[0]))) {
        cxla_literal *taken = interp_take_operand(ctx, 0);
        if (taken) {
            *out = taken;
            return NULL;
        }
        return cxla_literal_clone(operands[0], out);
    }
    bool tuple = r->type == CXLA_TUPLE && r->tuple_count == n;
    for (int64_t i = 0; tuple && i < n; i++)
        tuple = cxla_shape_compatible(&r->elements[i], cxla_literal_shape(operands[i]));
    if (!tuple) {
        char *rs = cxla_shape_to_string(r, CXLA_SHAPE_PRINT_NO_LAYOUT);
        cxla_status s = interp_error(
            instr, CXLA_STATUS_UNIMPLEMENTED,
            "custom-call target '%s' changes the shape of its %" PRId64
            " operand(s) to %s: that happens in a program sharded over several devices, "
            "and the interpreter runs one",
            target, n, rs ? rs : "?");
        free(rs);
        return s;
    }
    cxla_literal **elements = calloc((size_t)n, sizeof(*elements));
    if (!elements) return oom();
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++) s = cxla_literal_clone(operands[i], &elements[i]);
    if (!s) s = cxla_literal_create_tuple(elements, n, out);
    if (s)
        for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
    free(elements);
    return s;
}

/* AllocateBuffer: a fresh buffer of the result shape (zeros; XLA leaves it undefined). */
static cxla_status builtin_allocate(interp_ctx *ctx, const cxla_instr *instr, const char *target,
                                    const cxla_literal *const *operands, cxla_literal **out) {
    cxla_literal *lit = NULL;
    CXLA_RETURN_IF_ERROR(create_in_layout(&instr->shape, &lit));
    if (interp_is_row_major(lit)) {
        *out = lit;
        return NULL;
    }
    cxla_status s = interp_relayout_tree(lit, NULL, out);
    cxla_literal_free(lit);
    return s;
}

/* TopK (XLA's TopkRewriter): (values, s32 indices) of the k first elements along the
 * last dimension in the order of the comparator (to_apply / called_computations); k is
 * the result's last dimension. A plain greater-than (largest first) or less-than runs the
 * topk operation (total order); any other comparator a stable sort by it (interp_topk_by,
 * XLA's TopkDecomposer). */
static cxla_status builtin_topk(interp_ctx *ctx, const cxla_instr *instr, const char *target,
                                const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_shape *r = &instr->shape;
    if (instr->operand_count != 1 || r->type != CXLA_TUPLE || r->tuple_count != 2 ||
        !cxla_type_is_array(r->elements[0].type) || r->elements[0].rank < 1)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "custom-call target 'TopK' takes one array and returns "
                            "(values, indices)");
    bool largest = true;
    cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!comp) {
        cxla_computation *called[1];
        if (cxla_instr_called_computations(instr, called, 1) == 1) comp = called[0];
    }
    const cxla_shape *v = &r->elements[0];
    if (comp) {
        interp_comparator c = interp_match_comparator(comp);
        if (c.direction != INTERP_DIR_GT && c.direction != INTERP_DIR_LT)
            return interp_topk_by(ctx, instr, operands[0], comp, v->dims[v->rank - 1], out);
        largest = c.direction == INTERP_DIR_GT;
    }
    cxla_attr attrs[2] = {
        {.id = CXLA_ATTR_K, .name = "k", .kind = CXLA_ATTR_KIND_INT, .v.i = v->dims[v->rank - 1]},
        {.id = CXLA_ATTR_LARGEST, .name = "largest", .kind = CXLA_ATTR_KIND_BOOL, .v.b = largest},
    };
    cxla_instr topk = *instr;
    topk.opcode = CXLA_OP_TOPK;
    topk.attrs = attrs;
    topk.attr_count = 2;
    return interp_op_topk(ctx, &topk, operands, out);
}

/* ---- the handler -------------------------------------------------------------------------- */

static cxla_status op_custom_call(interp_ctx *ctx, const cxla_instr *instr,
                                  const cxla_literal *const *operands, cxla_literal **out) {
    const char *target = NULL;
    cxla_custom_call_fn fn = NULL;
    cxla_custom_call_api_version api;
    exec_builtin_target builtin;
    CXLA_RETURN_IF_ERROR(exec_custom_call_resolve(instr, &target, &fn, &api, &builtin));
    switch (builtin) {
    case EXEC_BUILTIN_IDENTITY: return builtin_identity(ctx, instr, target, operands, out);
    case EXEC_BUILTIN_ALLOCATE: return builtin_allocate(ctx, instr, target, operands, out);
    case EXEC_BUILTIN_TOPK: return builtin_topk(ctx, instr, target, operands, out);
    case EXEC_BUILTIN_DECOMPOSITION:
        /* XLA's builder library functions: a call of the computation they carry. */
        return interp_call(ctx, instr, exec_custom_call_decomposition(instr), operands, out);
    case EXEC_BUILTIN_NONE:
    case EXEC_BUILTIN_COUNT: break;
    }
    return call_foreign(ctx, instr, target, fn, api, operands, out);
}

const interp_op_fn interp_custom_call_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_CUSTOM_CALL] = op_custom_call,
};
