/* Constant folding: an instruction whose operands are all constants becomes a constant,
 * computed by the interpreter (the oracle), so folding cannot change a bit of the result.
 *
 * Left alone: results over FOLD_MAX_ELEMENTS elements (a big constant costs memory and
 * compile time where the instruction costs little), broadcast and iota (cheaper to keep
 * than to materialize), instructions without operands, tuples, tokens, dynamic shapes,
 * side effects, rng, control flow (while could run for a long time), calls, fusions,
 * custom calls, non-default layouts, and operands whose constant values are elided.
 * A computation the instruction calls may still loop (a reducer's while loop): each
 * evaluation gets FOLD_NS and, past it, is left for run time, where the run's own
 * cancellation (--timeout, cxla_cancel) applies. */
#include "interp/interp.h"
#include "passes/passes_internal.h"

enum { FOLD_MAX_ELEMENTS = 1024 };
#define FOLD_NS (100 * 1000 * 1000)

static bool foldable(const cxla_instr *in) {
    if (in->operand_count == 0 || !passes_is_static_array(&in->shape)) return false;
    if (!cxla_layout_is_default(&in->shape)) return false;
    if (passes_elements(&in->shape) > FOLD_MAX_ELEMENTS) return false;
    switch (in->opcode) {
    case CXLA_OP_BROADCAST:
    case CXLA_OP_IOTA:
    case CXLA_OP_WHILE:
    case CXLA_OP_CONDITIONAL:
    case CXLA_OP_CALL:
    case CXLA_OP_FUSION:
    case CXLA_OP_CUSTOM_CALL:
    case CXLA_OP_RNG:
    case CXLA_OP_RNG_BIT_GENERATOR:
    case CXLA_OP_STOCHASTIC_CONVERT:
    case CXLA_OP_GET_DIMENSION_SIZE:
    case CXLA_OP_SET_DIMENSION_SIZE:
    case CXLA_OP_DYNAMIC_RESHAPE: return false;
    default: break;
    }
    for (int64_t i = 0; i < in->operand_count; i++) {
        const cxla_instr *o = in->operands[i];
        if (o->opcode != CXLA_OP_CONSTANT || !o->literal || o->literal_elided) return false;
        if (!passes_is_static_array(&o->shape)) return false;
        if (!passes_is_static_array(cxla_literal_shape(o->literal))) return false;
    }
    return !passes_has_side_effect(in) && !passes_has_control_deps(in);
}

/* Evaluates |in| on its operands' literals with the interpreter's handler. */
static cxla_status evaluate(interp_ctx *ctx, const cxla_instr *in, cxla_literal **out) {
    interp_op_fn fn = interp_handler(in->opcode);
    if (!fn) return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "no handler");
    enum { SMALL = 16 };
    const cxla_literal *small[SMALL];
    const cxla_literal **ops = small;
    if (in->operand_count > SMALL)
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "too many operands");
    cxla_literal *relaid[SMALL] = {0};
    cxla_status s = NULL;
    for (int64_t i = 0; i < in->operand_count && !s; i++) {
        const cxla_literal *lit = in->operands[i]->literal;
        if (!cxla_layout_is_default(cxla_literal_shape(lit))) {
            s = cxla_literal_relayout(lit, NULL, &relaid[i]);
            lit = relaid[i];
        }
        ops[i] = lit;
    }
    if (!s) s = fn(ctx, in, ops, out);
    for (int64_t i = 0; i < in->operand_count; i++) cxla_literal_free(relaid[i]);
    return s;
}

static cxla_status run_constant_fold(cxla_module *m, bool *changed) {
    *changed = false;
    interp_ctx ctx;
    exec_run_options options = {0};
    exec_cancel cancel;
    exec_deadline deadline;
    options.cancel = &cancel;
    CXLA_RETURN_IF_ERROR(interp_ctx_init(&ctx, m, &options));
    cxla_status s = NULL;
    for (int64_t c = 0; c < m->comp_count && !s; c++) {
        cxla_computation *comp = m->comps[c];
        cxla_instr **order;
        s = cxla_computation_post_order(comp, &order);
        int64_t n = s ? 0 : comp->instr_count;
        for (int64_t i = 0; i < n && !s; i++) {
            cxla_instr *in = order[i];
            if (!foldable(in)) continue;
            cxla_literal *value = NULL;
            exec_cancel_init_deadline(&cancel, &deadline, FOLD_NS);
            cxla_status e = evaluate(&ctx, in, &value);
            if (e) { /* left for run time, where it reports its own error */
                cxla_status_free(e);
                cxla_literal_free(value);
                continue;
            }
            if (!cxla_shape_compatible(cxla_literal_shape(value), &in->shape) ||
                cxla_literal_tuple_count(value) != 0) {
                cxla_literal_free(value);
                continue;
            }
            s = cxla_module_adopt_literal(m, value);
            cxla_instr *k = NULL;
            if (!s) s = passes_add(comp, CXLA_OP_CONSTANT, "constant", &in->shape, 0, NULL, &k);
            if (!s) {
                k->literal = value;
                s = passes_replace(in, k);
                *changed = true;
            }
        }
    }
    interp_ctx_deinit(&ctx);
    return s;
}

const cxla_pass cxla_pass_constant_fold = {"constant-fold", run_constant_fold};
