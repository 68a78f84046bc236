/* Call inlining: every `call` is replaced by a copy of its computation's instructions in
 * the caller (XLA's CallInliner). A call runs its computation once per execution, and so
 * does the inlined copy: side effects inside are neither removed nor duplicated.
 * Computations are visited callees first, so nested calls end up fully inlined. Calls
 * with control dependencies are left alone (their order constraints have no place to go). */
#include <stdlib.h>
#include <string.h>

#include "passes/passes_internal.h"

static cxla_status inline_call(cxla_instr *call) {
    cxla_computation *caller = call->parent;
    cxla_module *m = caller->module;
    cxla_computation *callee = cxla_instr_called(call, CXLA_ATTR_TO_APPLY);
    cxla_instr **order;
    CXLA_RETURN_IF_ERROR(cxla_computation_post_order(callee, &order));
    int64_t first_new = caller->instr_count; /* the copies are appended from here */
    cxla_strmap map;                         /* callee instruction name -> its copy in the caller */
    cxla_strmap_init(&map, m->arena);
    for (int64_t i = 0; i < callee->instr_count; i++) {
        cxla_instr *old = order[i], *copy;
        if (old->opcode == CXLA_OP_PARAMETER) {
            if (old->parameter_number < 0 || old->parameter_number >= call->operand_count)
                return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                  "%s calls '%s', whose %s has no matching operand", call->name,
                                  callee->name, old->name);
            copy = call->operands[old->parameter_number];
        } else {
            cxla_instr **ops = cxla_arena_alloc_array(
                m->arena, (size_t)(old->operand_count ? old->operand_count : 1), sizeof(*ops));
            if (!ops) return PASSES_OOM();
            for (int64_t k = 0; k < old->operand_count; k++) {
                ops[k] =
                    cxla_strmap_get(&map, old->operands[k]->name, strlen(old->operands[k]->name));
                if (!ops[k])
                    return cxla_error(CXLA_STATUS_INTERNAL, "inlining %s: %s is unmapped",
                                      call->name, old->operands[k]->name);
            }
            CXLA_RETURN_IF_ERROR(passes_clone_instr(caller, old, ops, &copy));
            const cxla_attr *preds = cxla_instr_attr(old, CXLA_ATTR_CONTROL_PREDECESSORS);
            if (preds && preds->v.instrs.count > 0) {
                cxla_attr a = *preds;
                a.v.instrs.items = cxla_arena_alloc_array(m->arena, (size_t)preds->v.instrs.count,
                                                          sizeof(cxla_instr *));
                if (!a.v.instrs.items) return PASSES_OOM();
                a.v.instrs.count = 0;
                for (int64_t k = 0; k < preds->v.instrs.count; k++) {
                    const cxla_instr *p = preds->v.instrs.items[k];
                    cxla_instr *q = cxla_strmap_get(&map, p->name, strlen(p->name));
                    /* A parameter as predecessor orders nothing once inlined. */
                    if (q && q->parent == caller && p->opcode != CXLA_OP_PARAMETER)
                        a.v.instrs.items[a.v.instrs.count++] = q;
                }
                if (a.v.instrs.count) CXLA_RETURN_IF_ERROR(cxla_instr_set_attr(copy, &a));
            }
        }
        if (!cxla_strmap_put(&map, old->name, strlen(old->name), copy)) return PASSES_OOM();
    }
    cxla_instr *result = cxla_strmap_get(&map, callee->root->name, strlen(callee->root->name));
    /* The copies take the call's place in the caller's order: instructions with state (rng
     * draws from the run's state in execution order) run when the call would have, as the
     * interpreter runs the module, not after the caller's later instructions. */
    int64_t at = -1;
    for (int64_t i = 0; i < first_new && at < 0; i++)
        if (caller->instrs[i] == call) at = i;
    int64_t added = caller->instr_count - first_new;
    if (at >= 0 && added > 0) {
        cxla_instr **moved = malloc((size_t)added * sizeof(*moved));
        if (!moved) return PASSES_OOM();
        memcpy(moved, caller->instrs + first_new, (size_t)added * sizeof(*moved));
        memmove(caller->instrs + at + added, caller->instrs + at,
                (size_t)(first_new - at) * sizeof(*moved));
        memcpy(caller->instrs + at, moved, (size_t)added * sizeof(*moved));
        free(moved);
    }
    CXLA_RETURN_IF_ERROR(cxla_instr_replace_all_uses(call, result));
    return cxla_computation_remove_instr(caller, call);
}

static cxla_status run_inline(cxla_module *m, bool *changed) {
    *changed = false;
    cxla_computation **order;
    int64_t count;
    CXLA_RETURN_IF_ERROR(cxla_module_computation_post_order(m, &order, &count));
    for (int64_t c = 0; c < count; c++) {
        cxla_computation *comp = order[c];
        /* Snapshot: inlining appends instructions to this computation. */
        int64_t n = comp->instr_count;
        cxla_instr **calls = cxla_arena_alloc_array(m->arena, (size_t)(n ? n : 1), sizeof(*calls));
        if (!calls) return PASSES_OOM();
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) {
            cxla_instr *in = comp->instrs[i];
            if (in->opcode == CXLA_OP_CALL && cxla_instr_called(in, CXLA_ATTR_TO_APPLY) &&
                !passes_has_control_deps(in))
                calls[k++] = in;
        }
        for (int64_t i = 0; i < k; i++) {
            CXLA_RETURN_IF_ERROR(inline_call(calls[i]));
            *changed = true;
        }
    }
    if (*changed) CXLA_RETURN_IF_ERROR(cxla_module_remove_unreachable(m, NULL));
    return NULL;
}

const cxla_pass cxla_pass_inline = {"inline", run_inline};
