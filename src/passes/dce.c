/* Dead-code elimination: removes instructions nothing uses (not the root, not parameters,
 * nothing with a side effect or control dependencies), then the computations the entry
 * no longer reaches. */
#include "passes/passes_internal.h"

static cxla_status dce_computation(cxla_computation *c, bool *changed) {
    cxla_instr **order;
    CXLA_RETURN_IF_ERROR(cxla_computation_post_order(c, &order));
    int64_t n = c->instr_count;
    /* Users before operands: one sweep removes whole dead chains. */
    for (int64_t i = n - 1; i >= 0; i--) {
        cxla_instr *in = order[i];
        if (in->user_count > 0 || in == c->root || in->opcode == CXLA_OP_PARAMETER) continue;
        /* Side effects stay even when unused (an outfeed's token is rarely read). */
        if (passes_has_side_effect(in) || passes_has_control_deps(in)) continue;
        CXLA_RETURN_IF_ERROR(cxla_computation_remove_instr(c, in));
        *changed = true;
    }
    return NULL;
}

static cxla_status run_dce(cxla_module *m, bool *changed) {
    *changed = false;
    for (int64_t i = 0; i < m->comp_count; i++)
        CXLA_RETURN_IF_ERROR(dce_computation(m->comps[i], changed));
    int64_t removed = 0;
    CXLA_RETURN_IF_ERROR(cxla_module_remove_unreachable(m, &removed));
    if (removed) *changed = true;
    return NULL;
}

const cxla_pass cxla_pass_dce = {"dce", run_dce};
