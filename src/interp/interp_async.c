/* Interpreter handlers for the asynchronous wrappers (async-start, -update, -done, and
 * the sugared `xxx-start` forms that name the wrapped opcode), copy-start / copy-done,
 * and the helpers the collectives share with them: values packed as a tuple of the
 * operands, zeros of a shape, a tuple's element. The wrapped work runs at once, in
 * -start; the state tuples carry zeros as their contexts. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"

static cxla_status oom(void) {
    return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

/* ---- helpers shared with interp_collective.c ------------------------------------- */

cxla_status interp_zeros(const cxla_shape *shape, cxla_literal **out) {
    if (shape->type == CXLA_TOKEN) {
        cxla_shape token = {.type = CXLA_TOKEN};
        return cxla_literal_create(&token, out);
    }
    if (shape->type != CXLA_TUPLE) return interp_new_array(shape, out);
    int64_t n = shape->tuple_count;
    cxla_literal **elements = calloc((size_t)(n ? n : 1), sizeof(*elements));
    if (!elements) return oom();
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++) s = interp_zeros(&shape->elements[i], &elements[i]);
    if (!s) s = cxla_literal_create_tuple(elements, n, out);
    if (s)
        for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
    free(elements);
    return s;
}

cxla_status interp_operand_value(interp_ctx *ctx, const cxla_literal *const *operands, int64_t k,
                                 bool may_take, cxla_literal **out) {
    cxla_literal *taken = may_take ? interp_take_operand(ctx, k) : NULL;
    if (taken) {
        *out = taken;
        return NULL;
    }
    return cxla_literal_clone(operands[k], out);
}

cxla_status interp_pack_operands(interp_ctx *ctx, const cxla_instr *instr,
                                 const cxla_literal *const *operands, const cxla_shape *shape,
                                 bool may_take, cxla_literal **out) {
    int64_t n = instr->operand_count;
    if (shape->type != CXLA_TUPLE) {
        if (n < 1) return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "needs an operand");
        return interp_operand_value(ctx, operands, 0, may_take, out);
    }
    if (shape->tuple_count != n)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result tuple has %" PRId64 " elements for %" PRId64 " operands",
                            shape->tuple_count, n);
    cxla_literal **elements = calloc((size_t)(n ? n : 1), sizeof(*elements));
    if (!elements) return oom();
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++)
        s = interp_operand_value(ctx, operands, i, may_take, &elements[i]);
    if (!s) s = cxla_literal_create_tuple(elements, n, out);
    if (s)
        for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
    free(elements);
    return s;
}

cxla_status interp_tuple_element_of(interp_ctx *ctx, const cxla_instr *instr,
                                    const cxla_literal *const *operands, int64_t index,
                                    cxla_literal **out) {
    const cxla_literal *t = operands[0];
    if (cxla_literal_type(t) != CXLA_TUPLE || index >= cxla_literal_tuple_count(t))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the operand must be a tuple with an element %" PRId64, index);
    cxla_literal *owned = interp_take_operand(ctx, 0);
    if (owned) {
        *out = cxla_literal_tuple_take(owned, index);
        cxla_literal_free(owned);
        return *out ? NULL : oom();
    }
    return cxla_literal_clone(cxla_literal_tuple_element_const(t, index), out);
}

cxla_status interp_make_tuple(cxla_literal **elements, int64_t n, cxla_literal **out) {
    cxla_status s = cxla_literal_create_tuple(elements, n, out);
    if (s)
        for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
    return s;
}

cxla_status interp_op_pass(interp_ctx *ctx, const cxla_instr *instr,
                           const cxla_literal *const *operands, cxla_literal **out) {
    (void)instr;
    return interp_operand_value(ctx, operands, 0, true, out);
}

cxla_status interp_op_element0(interp_ctx *ctx, const cxla_instr *instr,
                               const cxla_literal *const *operands, cxla_literal **out) {
    return interp_tuple_element_of(ctx, instr, operands, 0, out);
}

cxla_status interp_op_element1(interp_ctx *ctx, const cxla_instr *instr,
                               const cxla_literal *const *operands, cxla_literal **out) {
    return interp_tuple_element_of(ctx, instr, operands, 1, out);
}

/* ---- async wrappers ------------------------------------------------------------- */

/* The wrapped operation's result: the called computation, or for the sugared form
 * (`reduce-scatter-start` ...) without one, the wrapped opcode's handler run on this
 * instruction's operands and attributes with the declared result shape {1}. */
static cxla_status run_wrapped(interp_ctx *ctx, const cxla_instr *instr,
                               const cxla_literal *const *operands, cxla_literal **out) {
    cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_CALLS);
    if (comp) {
        cxla_status s = interp_eval_computation(ctx, comp, operands, instr->operand_count, out);
        return s ? cxla_status_annotate(s, "in %s", instr->name) : NULL;
    }
    if (instr->async_wrapped == CXLA_OP_COUNT)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "no wrapped computation (calls=)");
    interp_op_fn fn = interp_handler(instr->async_wrapped);
    if (!fn)
        return interp_error(instr, CXLA_STATUS_UNIMPLEMENTED,
                            "the interpreter does not support '%s' yet",
                            cxla_opcode_name(instr->async_wrapped));
    /* The copy keeps the id: a wrapped collective meets its peers under it. */
    cxla_instr wrapped = *instr;
    wrapped.opcode = instr->async_wrapped;
    wrapped.async_wrapped = CXLA_OP_COUNT;
    wrapped.shape = instr->shape.elements[1];
    /* The operands also go into the state's {0}: the wrapped handler must not take them. */
    int64_t saved = ctx->take_operand_count;
    bool saved_gte = ctx->take_exclusive_gte;
    ctx->take_operand_count = 0;
    ctx->take_exclusive_gte = false;
    /* Over dynamic shapes the wrapped operation's own rule applies (async-start itself
     * passes values along, exec/dynamic.c). */
    cxla_status s = interp_dynamic_eval(ctx, &wrapped, operands, fn, out);
    ctx->take_operand_count = saved;
    ctx->take_exclusive_gte = saved_gte;
    return s;
}

/* async-start: ((operands...), result, context...). */
static cxla_status op_async_start(interp_ctx *ctx, const cxla_instr *instr,
                                  const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_shape *d = &instr->shape;
    if (d->type != CXLA_TUPLE || d->tuple_count < 2 || d->elements[0].type != CXLA_TUPLE)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result must be ((operands...), result, context...)");
    int64_t n = d->tuple_count;
    cxla_literal **parts = calloc((size_t)n, sizeof(*parts));
    if (!parts) return oom();
    cxla_status s = run_wrapped(ctx, instr, operands, &parts[1]);
    if (!s) s = interp_pack_operands(ctx, instr, operands, &d->elements[0], true, &parts[0]);
    for (int64_t i = 2; i < n && !s; i++) s = interp_zeros(&d->elements[i], &parts[i]);
    if (s) {
        for (int64_t i = 0; i < n; i++) cxla_literal_free(parts[i]);
        free(parts);
        return s;
    }
    s = interp_make_tuple(parts, n, out);
    free(parts);
    return s;
}

/* copy-start: (destination, source, u32[] context), both holding the operand. */
static cxla_status op_copy_start(interp_ctx *ctx, const cxla_instr *instr,
                                 const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_shape *d = &instr->shape;
    if (d->type != CXLA_TUPLE || d->tuple_count < 2)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result must be a (destination, source, context) tuple");
    int64_t n = d->tuple_count;
    cxla_literal **parts = calloc((size_t)n, sizeof(*parts));
    if (!parts) return oom();
    cxla_status s = cxla_literal_clone(operands[0], &parts[0]);
    if (!s) s = interp_operand_value(ctx, operands, 0, true, &parts[1]);
    for (int64_t i = 2; i < n && !s; i++) s = interp_zeros(&d->elements[i], &parts[i]);
    if (s) {
        for (int64_t i = 0; i < n; i++) cxla_literal_free(parts[i]);
        free(parts);
        return s;
    }
    s = interp_make_tuple(parts, n, out);
    free(parts);
    return s;
}

const interp_op_fn interp_async_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_ASYNC_START] = op_async_start,    [CXLA_OP_ASYNC_UPDATE] = interp_op_pass,
    [CXLA_OP_ASYNC_DONE] = interp_op_element1, [CXLA_OP_COPY_START] = op_copy_start,
    [CXLA_OP_COPY_DONE] = interp_op_element0,
};
