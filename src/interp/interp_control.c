/* Interpreter handlers: constants, tuples, calls and control flow (while, conditional,
 * call, fusion), identities (copy, opt-barrier, domain), tokens. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"

static cxla_status op_constant(interp_ctx *ctx, const cxla_instr *instr,
                               const cxla_literal *const *operands, cxla_literal **out) {
    if (!instr->literal)
        return interp_error(instr, CXLA_STATUS_FAILED_PRECONDITION,
                            "the constant's value was elided from the text ({...}); "
                            "give its value or let the runner fill it");
    return interp_default_layout(instr->literal, out);
}

static cxla_status op_tuple(interp_ctx *ctx, const cxla_instr *instr,
                            const cxla_literal *const *operands, cxla_literal **out) {
    int64_t n = instr->operand_count;
    cxla_literal **elements = calloc((size_t)(n ? n : 1), sizeof(*elements));
    if (!elements) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++) {
        elements[i] = interp_take_operand(ctx, i);
        if (!elements[i]) s = cxla_literal_clone(operands[i], &elements[i]);
    }
    if (!s) s = cxla_literal_create_tuple(elements, n, out);
    if (s)
        for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
    free(elements);
    return s;
}

static cxla_status op_get_tuple_element(interp_ctx *ctx, const cxla_instr *instr,
                                        const cxla_literal *const *operands, cxla_literal **out) {
    int64_t index = -1;
    cxla_instr_int(instr, CXLA_ATTR_INDEX, &index);
    const cxla_literal *e = cxla_literal_tuple_element_const(operands[0], index);
    if (!e)
        return interp_error(instr, CXLA_STATUS_OUT_OF_RANGE,
                            "tuple index %" PRId64 " is out of range (the tuple has %" PRId64
                            " elements)",
                            index, cxla_literal_tuple_count(operands[0]));
    cxla_literal *taken = interp_take_tuple_element(ctx, index);
    if (taken) {
        *out = taken;
        return NULL;
    }
    return cxla_literal_clone(e, out);
}

static cxla_status op_identity(interp_ctx *ctx, const cxla_instr *instr,
                               const cxla_literal *const *operands, cxla_literal **out) {
    cxla_literal *taken = interp_take_operand(ctx, 0);
    if (taken) {
        *out = taken;
        return NULL;
    }
    return cxla_literal_clone(operands[0], out);
}

static cxla_status op_token(interp_ctx *ctx, const cxla_instr *instr,
                            const cxla_literal *const *operands, cxla_literal **out) {
    cxla_shape token = {.type = CXLA_TOKEN};
    return cxla_literal_create(&token, out);
}

cxla_status interp_call(interp_ctx *ctx, const cxla_instr *instr, const cxla_computation *callee,
                        const cxla_literal *const *operands, cxla_literal **out) {
    /* Operands this call is the last user of are handed to the callee, which can then move
     * them (into its result tuple, say) instead of copying them. */
    enum { SMALL = 16 };
    int64_t n = instr->operand_count;
    /* A fusion may have more operands than its computation has parameters (XLA's verifier
     * allows it): parameter i takes operand i, the rest are not passed. */
    if (instr->opcode == CXLA_OP_FUSION && callee->param_count < n) n = callee->param_count;
    cxla_literal *small_args[SMALL] = {0};
    bool small_owned[SMALL] = {0};
    cxla_literal **args = small_args;
    bool *owned = small_owned;
    if (n > SMALL) {
        args = malloc((size_t)n * sizeof(*args));
        owned = malloc((size_t)n * sizeof(*owned));
        if (!args || !owned) {
            free(args);
            free(owned);
            return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        }
    }
    for (int64_t k = 0; k < n; k++) {
        cxla_literal *taken = interp_take_operand(ctx, k);
        args[k] = taken ? taken : (cxla_literal *)operands[k];
        owned[k] = taken != NULL;
    }
    cxla_status s = interp_eval_computation_some_donated(ctx, callee, args, owned, n, out);
    if (n > SMALL) {
        free(args);
        free(owned);
    }
    return s ? cxla_status_annotate(s, "in %s", instr->name) : NULL;
}

/* call, fusion and the async wrappers' bodies: evaluate the called computation. */
static cxla_status op_call(interp_ctx *ctx, const cxla_instr *instr,
                           const cxla_literal *const *operands, cxla_literal **out) {
    cxla_computation *callee = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!callee) callee = cxla_instr_called(instr, CXLA_ATTR_CALLS);
    if (!callee) return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "no computation to call");
    return interp_call(ctx, instr, callee, operands, out);
}

static cxla_status pred_value(const cxla_instr *instr, const cxla_literal *lit, bool *out) {
    if (cxla_literal_type(lit) != CXLA_PRED || cxla_literal_element_count(lit) != 1 ||
        cxla_literal_shape(lit)->rank != 0)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the condition must give a pred[] scalar");
    *out = ((const uint8_t *)cxla_literal_data_const(lit))[0] != 0;
    return NULL;
}

static cxla_status op_while(interp_ctx *ctx, const cxla_instr *instr,
                            const cxla_literal *const *operands, cxla_literal **out) {
    cxla_computation *cond = cxla_instr_called(instr, CXLA_ATTR_CONDITION);
    cxla_computation *body = cxla_instr_called(instr, CXLA_ATTR_BODY);
    if (!cond || !body)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "needs condition and body");
    cxla_literal *state = interp_take_operand(ctx, 0);
    if (!state) CXLA_RETURN_IF_ERROR(cxla_literal_clone(operands[0], &state));
    for (;;) {
        cxla_literal *c;
        const cxla_literal *arg = state;
        cxla_status s = interp_eval_computation(ctx, cond, &arg, 1, &c);
        bool go = false;
        if (!s) {
            s = pred_value(instr, c, &go);
            cxla_literal_free(c);
        }
        if (s || !go) {
            if (s) {
                cxla_literal_free(state);
                return cxla_status_annotate(s, "in the condition of %s", instr->name);
            }
            break;
        }
        /* The body owns the state, so it can update it in place. */
        cxla_literal *next;
        s = interp_eval_computation_donated(ctx, body, &state, 1, &next);
        if (s) return cxla_status_annotate(s, "in the body of %s", instr->name);
        state = next;
    }
    *out = state;
    return NULL;
}

static cxla_status op_conditional(interp_ctx *ctx, const cxla_instr *instr,
                                  const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *sel = operands[0];
    cxla_computation *branch = NULL;
    int64_t index = 0;
    if (cxla_literal_type(sel) == CXLA_PRED) {
        bool p = ((const uint8_t *)cxla_literal_data_const(sel))[0] != 0;
        branch =
            cxla_instr_called(instr, p ? CXLA_ATTR_TRUE_COMPUTATION : CXLA_ATTR_FALSE_COMPUTATION);
        index = p ? 0 : 1;
    } else {
        const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_BRANCH_COMPUTATIONS);
        if (!a || a->v.comps.count < 1)
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "no branch computations");
        int64_t i = (int64_t)cxla_load_s64(cxla_literal_type(sel), cxla_literal_data_const(sel));
        int64_t n = a->v.comps.count;
        /* An index out of range runs the last branch (operation semantics). */
        index = (i < 0 || i >= n) ? n - 1 : i;
        branch = a->v.comps.items[index];
    }
    if (!branch) return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "missing branch");
    if (index + 1 >= instr->operand_count)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "no operand for branch %" PRId64,
                            index);
    /* The branch's operand, handed over when this is its last use (as a call's). */
    cxla_literal *taken = interp_take_operand(ctx, index + 1);
    cxla_literal *arg = taken ? taken : (cxla_literal *)operands[index + 1];
    bool owned = taken != NULL;
    cxla_status s = interp_eval_computation_some_donated(ctx, branch, &arg, &owned, 1, out);
    return s ? cxla_status_annotate(s, "in branch %" PRId64 " of %s", index, instr->name) : NULL;
}

static cxla_status op_add_dependency(interp_ctx *ctx, const cxla_instr *instr,
                                     const cxla_literal *const *operands, cxla_literal **out) {
    return op_identity(ctx, instr, operands, out);
}

const interp_op_fn interp_control_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_CONSTANT] = op_constant,
    [CXLA_OP_TUPLE] = op_tuple,
    [CXLA_OP_GET_TUPLE_ELEMENT] = op_get_tuple_element,
    [CXLA_OP_COPY] = op_identity,
    [CXLA_OP_OPTIMIZATION_BARRIER] = op_identity,
    [CXLA_OP_DOMAIN] = op_identity,
    [CXLA_OP_AFTER_ALL] = op_token,
    [CXLA_OP_ADD_DEPENDENCY] = op_add_dependency,
    [CXLA_OP_CALL] = op_call,
    [CXLA_OP_FUSION] = op_call,
    [CXLA_OP_WHILE] = op_while,
    [CXLA_OP_CONDITIONAL] = op_conditional,
};
