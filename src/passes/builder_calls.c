/* Builder decompositions as calls: XLA's builder emits its library functions
 * (xla_builder.math.Acos, xla_builder.math.RegularizedIncompleteBeta,
 * xla_builder.prng.ScramblePhiloxKey ...) as custom calls whose target starts with
 * "xla_builder." and whose one called computation is the function's decomposition. Each
 * such custom call becomes a call of that computation, in place (its name, users and
 * control dependencies stay), so that the inliner and every later pass see ordinary
 * operations; the cpu backend and its ahead-of-time output run it so. The interpreter runs
 * the custom call itself as a call of the same computation (interp_custom_call.c), which
 * is what the two are compared against.
 *
 * A function registered under the target's name (cxla_custom_call_register) wins: that
 * custom call is left as it is. The choice is made when the pass runs, that is when the
 * module compiles. The verifier has already checked the decomposition's signature against
 * the operands and the result (cxla_infer_custom_call). */
#include <string.h>

#include "exec/custom_call.h"
#include "passes/passes_internal.h"

/* The attributes a call keeps from the custom call: the ones every instruction may carry. */
static bool kept(cxla_attr_id id) {
    return id == CXLA_ATTR_SHARDING || id == CXLA_ATTR_FRONTEND_ATTRIBUTES ||
           id == CXLA_ATTR_CONTROL_PREDECESSORS || id == CXLA_ATTR_METADATA;
}

static cxla_status rewrite(cxla_instr *in, cxla_computation *callee) {
    cxla_module *m = in->parent->module;
    cxla_attr *attrs = cxla_arena_alloc_array(m->arena, (size_t)in->attr_count + 1, sizeof(*attrs));
    if (!attrs) return PASSES_OOM();
    int64_t n = 0;
    for (int64_t i = 0; i < in->attr_count; i++)
        if (kept(in->attrs[i].id)) attrs[n++] = in->attrs[i];
    cxla_computation **comps = cxla_arena_alloc_array(m->arena, 1, sizeof(*comps));
    if (!comps) return PASSES_OOM();
    comps[0] = callee;
    in->opcode = CXLA_OP_CALL;
    in->attrs = attrs;
    in->attr_count = n;
    cxla_attr to_apply = {.id = CXLA_ATTR_TO_APPLY,
                          .name = cxla_attr_get_info(CXLA_ATTR_TO_APPLY)->name,
                          .kind = CXLA_ATTR_KIND_COMPUTATION};
    to_apply.v.comps.count = 1;
    to_apply.v.comps.items = comps;
    return cxla_instr_set_attr(in, &to_apply);
}

static cxla_status run_builder_calls(cxla_module *m, bool *changed) {
    *changed = false;
    for (int64_t c = 0; c < m->comp_count; c++) {
        cxla_computation *comp = m->comps[c];
        for (int64_t i = 0; i < comp->instr_count; i++) {
            cxla_instr *in = comp->instrs[i];
            cxla_computation *callee = exec_custom_call_decomposition(in);
            if (!callee) continue;
            const char *target = NULL;
            cxla_custom_call_fn fn = NULL;
            cxla_custom_call_api_version api;
            exec_builtin_target builtin = EXEC_BUILTIN_NONE;
            cxla_status st = exec_custom_call_resolve(in, &target, &fn, &api, &builtin);
            if (st) { /* a bad api_version, say: the custom call reports it when it runs */
                cxla_status_free(st);
                continue;
            }
            if (builtin != EXEC_BUILTIN_DECOMPOSITION) continue; /* a registered function */
            CXLA_RETURN_IF_ERROR(rewrite(in, callee));
            *changed = true;
        }
    }
    return NULL;
}

const cxla_pass cxla_pass_builder_calls = {"builder-calls", run_builder_calls};
