/* The HLO IR: creating modules, computations and instructions, attributes, users, and
 * the graph helpers passes need (post-order, replace uses, clone). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo.h"
#include "shape/shape_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* Grows an arena array of pointers to hold at least |need| entries. */
static bool grow_ptrs(cxla_arena *arena, void ***items, int64_t *capacity, int64_t need) {
    if (need <= *capacity) return true;
    int64_t cap = *capacity ? *capacity * 2 : 8;
    while (cap < need) cap *= 2;
    void **p = cxla_arena_alloc_array(arena, (size_t)cap, sizeof(void *));
    if (!p) return false;
    if (*capacity) memcpy(p, *items, (size_t)*capacity * sizeof(void *));
    *items = p;
    *capacity = cap;
    return true;
}

cxla_status cxla_module_create(const char *name, cxla_module **out_module) {
    cxla_module *m = calloc(1, sizeof(*m));
    if (!m) return OOM();
    m->arena = cxla_arena_create();
    if (!m->arena) {
        free(m);
        return OOM();
    }
    m->name = cxla_arena_strndup(m->arena, name ? name : "module", strlen(name ? name : "module"));
    if (!m->name) {
        cxla_module_destroy(m);
        return OOM();
    }
    cxla_strmap_init(&m->comp_by_name, m->arena);
    cxla_strbuf_init(&m->warnings);
    m->replica_count = 1;
    m->num_partitions = 1;
    *out_module = m;
    return NULL;
}

void cxla_module_destroy(cxla_module *module) {
    if (!module) return;
    for (int64_t i = 0; i < module->literal_count; i++) cxla_literal_free(module->literals[i]);
    free(module->literals);
    cxla_strbuf_free(&module->warnings);
    cxla_arena_destroy(module->arena);
    free(module);
}

const char *cxla_module_name(const cxla_module *module) {
    return module ? module->name : "";
}

const char *cxla_module_warnings(const cxla_module *module) {
    return module && module->warnings.len ? module->warnings.data : "";
}

cxla_status cxla_module_adopt_literal(cxla_module *module, cxla_literal *literal) {
    if (module->literal_count == module->literal_capacity) {
        int64_t cap = module->literal_capacity ? module->literal_capacity * 2 : 16;
        cxla_literal **p = realloc(module->literals, (size_t)cap * sizeof(*p));
        if (!p) {
            cxla_literal_free(literal);
            return OOM();
        }
        module->literals = p;
        module->literal_capacity = cap;
    }
    module->literals[module->literal_count++] = literal;
    return NULL;
}

void cxla_module_warn(cxla_module *module, const char *format, ...) {
    va_list args;
    va_start(args, format);
    cxla_strbuf_vprintf(&module->warnings, format, args);
    va_end(args);
    cxla_strbuf_putc(&module->warnings, '\n');
}

cxla_status cxla_module_add_computation(cxla_module *module, const char *name,
                                        cxla_computation **out_computation) {
    size_t len = strlen(name);
    if (cxla_strmap_get(&module->comp_by_name, name, len))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "a computation named '%s' already exists in module '%s'", name,
                          module->name);
    cxla_computation *c = cxla_arena_alloc(module->arena, sizeof(*c));
    if (!c) return OOM();
    c->name = cxla_arena_strndup(module->arena, name, len);
    c->module = module;
    cxla_strmap_init(&c->instr_by_name, module->arena);
    if (!c->name ||
        !grow_ptrs(module->arena, (void ***)&module->comps, &module->comp_capacity,
                   module->comp_count + 1) ||
        !cxla_strmap_put(&module->comp_by_name, c->name, len, c))
        return OOM();
    module->comps[module->comp_count++] = c;
    *out_computation = c;
    return NULL;
}

cxla_computation *cxla_module_find_computation(const cxla_module *module, const char *name) {
    return cxla_strmap_get(&module->comp_by_name, name, strlen(name));
}

static cxla_status add_user(cxla_arena *arena, cxla_instr *operand, cxla_instr *user) {
    for (int64_t i = 0; i < operand->user_count; i++)
        if (operand->users[i] == user) return NULL;
    if (!grow_ptrs(arena, (void ***)&operand->users, &operand->user_capacity,
                   operand->user_count + 1))
        return OOM();
    operand->users[operand->user_count++] = user;
    return NULL;
}

static void remove_user(cxla_instr *operand, cxla_instr *user) {
    for (int64_t i = 0; i < user->operand_count; i++)
        if (user->operands[i] == operand) return; /* still used through another slot */
    for (int64_t i = 0; i < operand->user_count; i++) {
        if (operand->users[i] != user) continue;
        memmove(&operand->users[i], &operand->users[i + 1],
                (size_t)(operand->user_count - i - 1) * sizeof(cxla_instr *));
        operand->user_count--;
        return;
    }
}

cxla_status cxla_computation_add_instr(cxla_computation *comp, cxla_opcode opcode, const char *name,
                                       const cxla_shape *shape, int64_t operand_count,
                                       cxla_instr *const *operands, cxla_instr **out_instr) {
    cxla_module *m = comp->module;
    size_t len = strlen(name);
    if (cxla_strmap_get(&comp->instr_by_name, name, len))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "an instruction named '%s' already exists in computation '%s'", name,
                          comp->name);
    cxla_instr *in = cxla_arena_alloc(m->arena, sizeof(*in));
    if (!in) return OOM();
    in->opcode = opcode;
    in->name = cxla_arena_strndup(m->arena, name, len);
    in->parent = comp;
    in->id = m->next_id++;
    in->async_wrapped = CXLA_OP_COUNT;
    in->parameter_number = -1;
    if (!in->name) return OOM();
    if (shape) CXLA_RETURN_IF_ERROR(cxla_shape_copy_to_arena(m->arena, shape, &in->shape));
    if (operand_count > 0) {
        in->operands =
            cxla_arena_alloc_array(m->arena, (size_t)operand_count, sizeof(cxla_instr *));
        if (!in->operands) return OOM();
        memcpy(in->operands, operands, (size_t)operand_count * sizeof(cxla_instr *));
        in->operand_count = operand_count;
        for (int64_t i = 0; i < operand_count; i++)
            if (operands[i]) CXLA_RETURN_IF_ERROR(add_user(m->arena, operands[i], in));
    }
    if (!grow_ptrs(m->arena, (void ***)&comp->instrs, &comp->instr_capacity,
                   comp->instr_count + 1) ||
        !cxla_strmap_put(&comp->instr_by_name, in->name, len, in))
        return OOM();
    comp->instrs[comp->instr_count++] = in;
    *out_instr = in;
    return NULL;
}

cxla_instr *cxla_computation_find_instr(const cxla_computation *comp, const char *name) {
    return cxla_strmap_get(&comp->instr_by_name, name, strlen(name));
}

/* ---- attributes ------------------------------------------------------------------ */

cxla_status cxla_instr_set_attr(cxla_instr *instr, const cxla_attr *attr) {
    if (attr->id == CXLA_ATTR_CONTROL_PREDECESSORS)
        instr->parent->module->control_predecessor_attrs++;
    int64_t pos = 0;
    while (pos < instr->attr_count && instr->attrs[pos].id < attr->id) pos++;
    if (pos < instr->attr_count && instr->attrs[pos].id == attr->id &&
        (attr->id != CXLA_ATTR_UNKNOWN || strcmp(instr->attrs[pos].name, attr->name) == 0)) {
        instr->attrs[pos] = *attr;
        return NULL;
    }
    if (attr->id == CXLA_ATTR_UNKNOWN) pos = instr->attr_count; /* unknowns keep their order */
    cxla_attr *a = cxla_arena_alloc_array(instr->parent->module->arena,
                                          (size_t)instr->attr_count + 1, sizeof(cxla_attr));
    if (!a) return OOM();
    if (pos) memcpy(a, instr->attrs, (size_t)pos * sizeof(cxla_attr));
    a[pos] = *attr;
    if (instr->attr_count > pos)
        memcpy(a + pos + 1, instr->attrs + pos,
               (size_t)(instr->attr_count - pos) * sizeof(cxla_attr));
    instr->attrs = a;
    instr->attr_count++;
    return NULL;
}

const cxla_attr *cxla_instr_attr(const cxla_instr *instr, cxla_attr_id id) {
    for (int64_t i = 0; i < instr->attr_count; i++)
        if (instr->attrs[i].id == id) return &instr->attrs[i];
    return NULL;
}

const int64_t *cxla_instr_ints(const cxla_instr *instr, cxla_attr_id id, int64_t *out_count) {
    const cxla_attr *a = cxla_instr_attr(instr, id);
    if (!a || a->kind != CXLA_ATTR_KIND_INTS) {
        *out_count = 0;
        return NULL;
    }
    *out_count = a->v.ints.count;
    return a->v.ints.values;
}

bool cxla_instr_int(const cxla_instr *instr, cxla_attr_id id, int64_t *out_value) {
    const cxla_attr *a = cxla_instr_attr(instr, id);
    if (!a || a->kind != CXLA_ATTR_KIND_INT) return false;
    *out_value = a->v.i;
    return true;
}

bool cxla_instr_bool(const cxla_instr *instr, cxla_attr_id id) {
    const cxla_attr *a = cxla_instr_attr(instr, id);
    return a && a->kind == CXLA_ATTR_KIND_BOOL && a->v.b;
}

const char *cxla_instr_word(const cxla_instr *instr, cxla_attr_id id) {
    const cxla_attr *a = cxla_instr_attr(instr, id);
    return a && a->kind == CXLA_ATTR_KIND_WORD ? a->v.s : NULL;
}

cxla_computation *cxla_instr_called(const cxla_instr *instr, cxla_attr_id id) {
    const cxla_attr *a = cxla_instr_attr(instr, id);
    if (!a || (a->kind != CXLA_ATTR_KIND_COMPUTATION && a->kind != CXLA_ATTR_KIND_COMPUTATIONS) ||
        a->v.comps.count < 1)
        return NULL;
    return a->v.comps.items[0];
}

int64_t cxla_instr_called_computations(const cxla_instr *instr, cxla_computation **out,
                                       int64_t max) {
    int64_t n = 0;
    for (int64_t i = 0; i < instr->attr_count; i++) {
        const cxla_attr *a = &instr->attrs[i];
        if (a->kind != CXLA_ATTR_KIND_COMPUTATION && a->kind != CXLA_ATTR_KIND_COMPUTATIONS)
            continue;
        for (int64_t j = 0; j < a->v.comps.count; j++) {
            if (n < max && out) out[n] = a->v.comps.items[j];
            n++;
        }
    }
    return n;
}

/* ---- graph helpers --------------------------------------------------------------- */

cxla_status cxla_instr_replace_operand(cxla_instr *instr, int64_t index, cxla_instr *with) {
    if (index < 0 || index >= instr->operand_count)
        return cxla_error(CXLA_STATUS_OUT_OF_RANGE, "%s has no operand %" PRId64, instr->name,
                          index);
    cxla_instr *old = instr->operands[index];
    instr->operands[index] = with;
    if (old) remove_user(old, instr);
    return add_user(instr->parent->module->arena, with, instr);
}

cxla_status cxla_instr_replace_all_uses(cxla_instr *old, cxla_instr *with) {
    while (old->user_count > 0) {
        cxla_instr *user = old->users[0];
        for (int64_t i = 0; i < user->operand_count; i++)
            if (user->operands[i] == old) {
                user->operands[i] = with;
                CXLA_RETURN_IF_ERROR(add_user(old->parent->module->arena, with, user));
            }
        remove_user(old, user);
    }
    if (old->parent->root == old) old->parent->root = with;
    return NULL;
}

/* Iterative DFS post-order with a visiting state to detect cycles. */
cxla_status cxla_computation_post_order(const cxla_computation *comp, cxla_instr ***out) {
    return cxla_computation_post_order_in(comp, comp->module->arena, out);
}

cxla_status cxla_computation_post_order_in(const cxla_computation *comp, cxla_arena *arena,
                                           cxla_instr ***out) {
    int64_t n = comp->instr_count;
    cxla_instr **order = cxla_arena_alloc_array(arena, (size_t)(n ? n : 1), sizeof(*order));
    uint8_t *state = calloc((size_t)(n ? n : 1), 1); /* 0 new, 1 on stack, 2 done */
    struct frame {
        cxla_instr *instr;
        int64_t next;
    } *stack = malloc(sizeof(*stack) * (size_t)(n ? n : 1));
    cxla_status s = NULL;
    if (!order || !state || !stack) {
        s = OOM();
        goto done;
    }
    /* Instruction ids are unique in the module: map id -> position with a table. */
    int64_t min_id = INT64_MAX, max_id = INT64_MIN;
    for (int64_t i = 0; i < n; i++) {
        if (comp->instrs[i]->id < min_id) min_id = comp->instrs[i]->id;
        if (comp->instrs[i]->id > max_id) max_id = comp->instrs[i]->id;
    }
    int64_t span = n ? max_id - min_id + 1 : 1;
    int64_t *pos = malloc(sizeof(int64_t) * (size_t)span);
    if (!pos) {
        s = OOM();
        goto done;
    }
    for (int64_t i = 0; i < span; i++) pos[i] = -1;
    for (int64_t i = 0; i < n; i++) pos[comp->instrs[i]->id - min_id] = i;
    int64_t count = 0;
    for (int64_t start = 0; start < n && !s; start++) {
        if (state[start]) continue;
        int64_t depth = 0;
        stack[depth++] = (struct frame){comp->instrs[start], 0};
        state[start] = 1;
        while (depth > 0) {
            struct frame *f = &stack[depth - 1];
            cxla_instr *in = f->instr;
            const cxla_attr *preds = cxla_instr_attr(in, CXLA_ATTR_CONTROL_PREDECESSORS);
            int64_t npreds = preds ? preds->v.instrs.count : 0;
            if (f->next < in->operand_count + npreds) {
                cxla_instr *dep = f->next < in->operand_count
                                      ? in->operands[f->next]
                                      : preds->v.instrs.items[f->next - in->operand_count];
                f->next++;
                if (!dep || dep->parent != comp) continue;
                int64_t p = dep->id - min_id;
                if (p < 0 || p >= span || pos[p] < 0) continue;
                int64_t k = pos[p];
                if (state[k] == 1) {
                    s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                   "computation '%s' has a cycle through instruction '%s'",
                                   comp->name, dep->name);
                    break;
                }
                if (state[k] == 0) {
                    state[k] = 1;
                    stack[depth++] = (struct frame){dep, 0};
                }
                continue;
            }
            state[pos[in->id - min_id]] = 2;
            order[count++] = in;
            depth--;
        }
    }
    free(pos);
    if (!s) *out = order;
done:
    free(state);
    free(stack);
    return s;
}

/* The |k|-th computation |instr| calls (in attribute order), or NULL past the last. */
static cxla_computation *called_at(const cxla_instr *instr, int64_t k) {
    for (int64_t i = 0; i < instr->attr_count; i++) {
        const cxla_attr *a = &instr->attrs[i];
        if (a->kind != CXLA_ATTR_KIND_COMPUTATION && a->kind != CXLA_ATTR_KIND_COMPUTATIONS)
            continue;
        if (k < a->v.comps.count) return a->v.comps.items[k];
        k -= a->v.comps.count;
    }
    return NULL;
}

cxla_status cxla_module_computation_post_order(const cxla_module *module, cxla_computation ***out,
                                               int64_t *out_count) {
    int64_t n = module->comp_count;
    cxla_computation **order =
        cxla_arena_alloc_array(module->arena, (size_t)(n ? n : 1), sizeof(*order));
    uint8_t *state = calloc((size_t)(n ? n : 1), 1);
    if (!order || !state) {
        free(state);
        return OOM();
    }
    int64_t count = 0;
    cxla_status s = NULL;
    /* Recursion depth is bounded by the number of computations; use an explicit stack. */
    struct frame {
        int64_t comp;
        int64_t instr, called;
    } *stack = malloc(sizeof(*stack) * (size_t)(n ? n : 1));
    if (!stack) {
        free(state);
        return OOM();
    }
    for (int64_t root = 0; root < n && !s; root++) {
        if (state[root]) continue;
        int64_t depth = 0;
        stack[depth++] = (struct frame){root, 0, 0};
        state[root] = 1;
        while (depth > 0 && !s) {
            struct frame *f = &stack[depth - 1];
            cxla_computation *c = module->comps[f->comp];
            cxla_computation *next = NULL;
            while (!next && f->instr < c->instr_count) {
                next = called_at(c->instrs[f->instr], f->called);
                if (next) {
                    f->called++;
                } else {
                    f->instr++;
                    f->called = 0;
                }
            }
            if (!next) {
                state[f->comp] = 2;
                order[count++] = c;
                depth--;
                continue;
            }
            int64_t idx = -1;
            for (int64_t i = 0; i < n; i++)
                if (module->comps[i] == next) idx = i;
            if (idx < 0) continue;
            if (state[idx] == 1) {
                s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                               "computation '%s' calls itself (through '%s')", next->name, c->name);
            } else if (state[idx] == 0) {
                state[idx] = 1;
                stack[depth++] = (struct frame){idx, 0, 0};
            }
        }
    }
    free(state);
    free(stack);
    if (s) return s;
    *out = order;
    *out_count = count;
    return NULL;
}

cxla_status cxla_computation_clone(const cxla_computation *comp, const char *new_name,
                                   const char *suffix, cxla_computation **out_clone) {
    cxla_module *m = comp->module;
    cxla_computation *c;
    CXLA_RETURN_IF_ERROR(cxla_module_add_computation(m, new_name, &c));
    c->execution_thread = comp->execution_thread;
    cxla_strmap map; /* old name -> new instruction */
    cxla_strmap_init(&map, m->arena);
    cxla_instr **order;
    CXLA_RETURN_IF_ERROR(cxla_computation_post_order(comp, &order));
    if (comp->param_count) {
        c->params =
            cxla_arena_alloc_array(m->arena, (size_t)comp->param_count, sizeof(cxla_instr *));
        if (!c->params) return OOM();
        c->param_count = comp->param_count;
    }
    for (int64_t i = 0; i < comp->instr_count; i++) {
        const cxla_instr *old = order[i];
        cxla_instr *ops[CXLA_MAX_RANK];
        cxla_instr **operands = ops;
        if (old->operand_count > CXLA_MAX_RANK) {
            operands =
                cxla_arena_alloc_array(m->arena, (size_t)old->operand_count, sizeof(*operands));
            if (!operands) return OOM();
        }
        for (int64_t j = 0; j < old->operand_count; j++) {
            cxla_instr *o = old->operands[j];
            cxla_instr *mapped = o ? cxla_strmap_get(&map, o->name, strlen(o->name)) : NULL;
            operands[j] = mapped ? mapped : o;
        }
        size_t nlen = strlen(old->name) + strlen(suffix) + 1;
        char *name = cxla_arena_alloc(m->arena, nlen);
        if (!name) return OOM();
        snprintf(name, nlen, "%s%s", old->name, suffix);
        cxla_instr *in;
        CXLA_RETURN_IF_ERROR(cxla_computation_add_instr(c, old->opcode, name, &old->shape,
                                                        old->operand_count, operands, &in));
        in->parameter_number = old->parameter_number;
        in->literal = old->literal;
        in->literal_elided = old->literal_elided;
        in->async_wrapped = old->async_wrapped;
        in->line = old->line;
        in->column = old->column;
        for (int64_t j = 0; j < old->attr_count; j++) {
            cxla_attr a = old->attrs[j];
            if (a.kind == CXLA_ATTR_KIND_INSTRUCTIONS) {
                cxla_instr **items = cxla_arena_alloc_array(
                    m->arena, (size_t)(a.v.instrs.count ? a.v.instrs.count : 1), sizeof(*items));
                if (!items) return OOM();
                for (int64_t k = 0; k < a.v.instrs.count; k++) {
                    cxla_instr *o = a.v.instrs.items[k];
                    cxla_instr *mapped = cxla_strmap_get(&map, o->name, strlen(o->name));
                    items[k] = mapped ? mapped : o;
                }
                a.v.instrs.items = items;
            }
            CXLA_RETURN_IF_ERROR(cxla_instr_set_attr(in, &a));
        }
        if (!cxla_strmap_put(&map, old->name, strlen(old->name), in)) return OOM();
        if (old->opcode == CXLA_OP_PARAMETER && old->parameter_number >= 0 &&
            old->parameter_number < c->param_count)
            c->params[old->parameter_number] = in;
        if (old == comp->root) c->root = in;
    }
    *out_clone = c;
    return NULL;
}

/* ---- removal and bookkeeping for passes ------------------------------------------ */

cxla_status cxla_computation_remove_instr(cxla_computation *comp, cxla_instr *instr) {
    if (instr->parent != comp)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "cannot remove %s from computation '%s': it belongs to '%s'", instr->name,
                          comp->name, instr->parent ? instr->parent->name : "?");
    if (instr->opcode == CXLA_OP_PARAMETER)
        return cxla_error(CXLA_STATUS_FAILED_PRECONDITION,
                          "cannot remove %s: it is a parameter of computation '%s'", instr->name,
                          comp->name);
    if (instr->user_count > 0)
        return cxla_error(CXLA_STATUS_FAILED_PRECONDITION,
                          "cannot remove %s from computation '%s': %s still uses it", instr->name,
                          comp->name, instr->users[0]->name);
    if (comp->root == instr)
        return cxla_error(CXLA_STATUS_FAILED_PRECONDITION,
                          "cannot remove %s: it is the root of computation '%s'", instr->name,
                          comp->name);
    for (int64_t i = 0; comp->module->control_predecessor_attrs && i < comp->instr_count; i++) {
        const cxla_attr *preds = cxla_instr_attr(comp->instrs[i], CXLA_ATTR_CONTROL_PREDECESSORS);
        for (int64_t k = 0; preds && k < preds->v.instrs.count; k++)
            if (preds->v.instrs.items[k] == instr)
                return cxla_error(CXLA_STATUS_FAILED_PRECONDITION,
                                  "cannot remove %s: %s names it as a control predecessor",
                                  instr->name, comp->instrs[i]->name);
    }
    int64_t at = -1;
    for (int64_t i = 0; i < comp->instr_count; i++)
        if (comp->instrs[i] == instr) at = i;
    if (at < 0)
        return cxla_error(CXLA_STATUS_NOT_FOUND, "%s is not in computation '%s'", instr->name,
                          comp->name);
    /* Drop it as a user of its operands: clear the slots first so that remove_user does
     * not see a second slot that still names the operand. */
    for (int64_t i = 0; i < instr->operand_count; i++) {
        cxla_instr *o = instr->operands[i];
        instr->operands[i] = NULL;
        if (o) remove_user(o, instr);
    }
    memmove(&comp->instrs[at], &comp->instrs[at + 1],
            (size_t)(comp->instr_count - at - 1) * sizeof(cxla_instr *));
    comp->instr_count--;
    /* The name map never shrinks: a NULL value frees the name. */
    if (!cxla_strmap_put(&comp->instr_by_name, instr->name, strlen(instr->name), NULL))
        return OOM();
    instr->parent = NULL;
    return NULL;
}

cxla_status cxla_module_remove_unreachable(cxla_module *module, int64_t *out_removed) {
    int64_t removed = 0;
    if (out_removed) *out_removed = 0;
    if (!module->entry) return NULL;
    int64_t n = module->comp_count;
    bool *live = calloc((size_t)(n ? n : 1), sizeof(bool));
    cxla_computation **work = malloc((size_t)(n ? n : 1) * sizeof(*work));
    if (!live || !work) {
        free(live);
        free(work);
        return OOM();
    }
    int64_t top = 0;
    for (int64_t i = 0; i < n; i++)
        if (module->comps[i] == module->entry) {
            live[i] = true;
            work[top++] = module->entry;
        }
    while (top > 0) {
        cxla_computation *c = work[--top];
        for (int64_t i = 0; i < c->instr_count; i++)
            for (int64_t k = 0;; k++) {
                cxla_computation *callee = called_at(c->instrs[i], k);
                if (!callee) break;
                for (int64_t j = 0; j < n; j++)
                    if (module->comps[j] == callee && !live[j]) {
                        live[j] = true;
                        work[top++] = callee;
                    }
            }
    }
    int64_t kept = 0;
    cxla_status s = NULL;
    for (int64_t i = 0; i < n; i++) {
        cxla_computation *c = module->comps[i];
        if (live[i]) {
            module->comps[kept++] = c;
            continue;
        }
        if (!s && !cxla_strmap_put(&module->comp_by_name, c->name, strlen(c->name), NULL))
            s = OOM();
        removed++;
    }
    module->comp_count = kept;
    free(live);
    free(work);
    if (out_removed) *out_removed = removed;
    return s;
}

cxla_status cxla_computation_sort(cxla_computation *comp) {
    cxla_instr **order;
    CXLA_RETURN_IF_ERROR(cxla_computation_post_order(comp, &order));
    memcpy(comp->instrs, order, (size_t)comp->instr_count * sizeof(cxla_instr *));
    return NULL;
}

const char *cxla_module_unique_name(cxla_module *module, const char *base) {
    size_t blen = strlen(base);
    /* Strip a trailing ".<digits>" so that names do not grow with each pass. */
    size_t cut = blen;
    while (cut > 0 && base[cut - 1] >= '0' && base[cut - 1] <= '9') cut--;
    if (cut > 0 && cut < blen && base[cut - 1] == '.') blen = cut - 1;
    for (;;) {
        size_t size = blen + 24;
        char *name = cxla_arena_alloc(module->arena, size);
        if (!name) return NULL;
        snprintf(name, size, "%.*s.%" PRId64, (int)blen, base, module->next_id++);
        size_t len = strlen(name);
        bool taken = cxla_strmap_get(&module->comp_by_name, name, len) != NULL;
        for (int64_t i = 0; i < module->comp_count && !taken; i++)
            taken = cxla_strmap_get(&module->comps[i]->instr_by_name, name, len) != NULL;
        if (!taken) return name;
    }
}
