/* Helpers shared by the passes: side-effect tests, cloning and replacing instructions. */
#include <inttypes.h>
#include <string.h>

#include "passes/passes_internal.h"
#include "shape/shape_internal.h"

static bool opcode_has_side_effect(cxla_opcode op) {
    unsigned f = cxla_opcode_get_info(op)->flags;
    if (f &
        (CXLA_OPF_SIDE_EFFECT | CXLA_OPF_COLLECTIVE | CXLA_OPF_ASYNC_START | CXLA_OPF_ASYNC_DONE))
        return true;
    switch (op) {
    /* Stateful or order-sensitive even though the table does not flag them. */
    case CXLA_OP_RNG_BIT_GENERATOR:
    case CXLA_OP_ASYNC_UPDATE:
    case CXLA_OP_ADD_DEPENDENCY:
    case CXLA_OP_OPTIMIZATION_BARRIER:
    case CXLA_OP_REPLICA_ID:
    case CXLA_OP_PARTITION_ID:
    case CXLA_OP_AFTER_ALL:
    case CXLA_OP_DOMAIN: return true;
    default: return false;
    }
}

/* Depth-limited walk over called computations (a module without recursion is finite;
 * the limit only guards against a broken one). */
static bool computation_has_side_effect(const cxla_computation *c, int depth) {
    if (depth > 64) return true;
    for (int64_t i = 0; i < c->instr_count; i++) {
        const cxla_instr *in = c->instrs[i];
        if (opcode_has_side_effect(in->opcode)) return true;
        cxla_computation *called[16];
        int64_t n = cxla_instr_called_computations(in, called, 16);
        if (n > 16) return true;
        for (int64_t k = 0; k < n; k++)
            if (computation_has_side_effect(called[k], depth + 1)) return true;
    }
    return false;
}

bool passes_has_side_effect(const cxla_instr *in) {
    if (opcode_has_side_effect(in->opcode)) return true;
    cxla_computation *called[16];
    int64_t n = cxla_instr_called_computations(in, called, 16);
    if (n > 16) return true;
    for (int64_t k = 0; k < n; k++)
        if (computation_has_side_effect(called[k], 1)) return true;
    return false;
}

bool passes_has_control_deps(const cxla_instr *in) {
    if (in->parent->module->control_predecessor_attrs == 0) return false;
    if (cxla_instr_attr(in, CXLA_ATTR_CONTROL_PREDECESSORS)) return true;
    const cxla_computation *c = in->parent;
    for (int64_t i = 0; i < c->instr_count; i++) {
        const cxla_attr *p = cxla_instr_attr(c->instrs[i], CXLA_ATTR_CONTROL_PREDECESSORS);
        for (int64_t k = 0; p && k < p->v.instrs.count; k++)
            if (p->v.instrs.items[k] == in) return true;
    }
    return false;
}

cxla_status passes_add(cxla_computation *comp, cxla_opcode op, const char *base,
                       const cxla_shape *shape, int64_t operand_count, cxla_instr *const *operands,
                       cxla_instr **out) {
    const char *name = cxla_module_unique_name(comp->module, base);
    if (!name) return PASSES_OOM();
    return cxla_computation_add_instr(comp, op, name, shape, operand_count, operands, out);
}

cxla_status passes_clone_instr(cxla_computation *dst, const cxla_instr *src,
                               cxla_instr *const *operands, cxla_instr **out) {
    cxla_instr *in;
    CXLA_RETURN_IF_ERROR(
        passes_add(dst, src->opcode, src->name, &src->shape, src->operand_count, operands, &in));
    in->parameter_number = src->parameter_number;
    in->literal = src->literal; /* owned by the module: shared, not copied */
    in->literal_elided = src->literal_elided;
    in->async_wrapped = src->async_wrapped;
    in->line = src->line;
    in->column = src->column;
    for (int64_t j = 0; j < src->attr_count; j++) {
        if (src->attrs[j].kind == CXLA_ATTR_KIND_INSTRUCTIONS) continue;
        CXLA_RETURN_IF_ERROR(cxla_instr_set_attr(in, &src->attrs[j]));
    }
    *out = in;
    return NULL;
}

cxla_status passes_replace(cxla_instr *old, cxla_instr *with) {
    CXLA_RETURN_IF_ERROR(cxla_instr_replace_all_uses(old, with));
    if (old->user_count == 0 && old->parent->root != old && old->opcode != CXLA_OP_PARAMETER &&
        !passes_has_side_effect(old) && !passes_has_control_deps(old))
        return cxla_computation_remove_instr(old->parent, old);
    return NULL;
}

cxla_status passes_set_ints(cxla_instr *in, cxla_attr_id id, const int64_t *values, int64_t count) {
    cxla_arena *arena = in->parent->module->arena;
    int64_t *copy = cxla_arena_alloc_array(arena, (size_t)(count ? count : 1), sizeof(int64_t));
    if (!copy) return PASSES_OOM();
    if (count) memcpy(copy, values, (size_t)count * sizeof(int64_t));
    cxla_attr a = {.id = id, .name = cxla_attr_get_info(id)->name, .kind = CXLA_ATTR_KIND_INTS};
    a.v.ints.count = count;
    a.v.ints.values = copy;
    return cxla_instr_set_attr(in, &a);
}

cxla_status passes_array_shape(cxla_module *m, cxla_type type, int64_t rank, const int64_t *dims,
                               cxla_shape *out) {
    cxla_shape s = {.type = type, .rank = rank, .dims = (int64_t *)dims};
    CXLA_RETURN_IF_ERROR(cxla_shape_copy_to_arena(m->arena, &s, out));
    if (rank > 0) CXLA_RETURN_IF_ERROR(cxla_layout_make_default(m->arena, rank, &out->layout));
    return NULL;
}

bool passes_is_static_array(const cxla_shape *s) {
    return cxla_type_is_array(s->type) && !s->dynamic;
}

int64_t passes_elements(const cxla_shape *s) {
    int64_t n = 0;
    cxla_status st = cxla_shape_element_count(s, &n);
    if (st) {
        cxla_status_free(st);
        return INT64_MAX;
    }
    return n;
}
