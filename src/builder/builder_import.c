/* Importing sub-computations: a built computation passed to an op is deep-copied (with
 * everything it calls) into the builder's module, renamed to stay unique there. Each
 * computation carries an origin id, so one reached twice is copied once. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/builder_internal.h"
#include "shape/shape_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in the builder")

/* "add.12" -> "add": the name without a numeric suffix. */
static size_t base_len(const char *name) {
    size_t n = strlen(name), i = n;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') i--;
    if (i > 0 && i < n && name[i - 1] == '.') return i - 1;
    return n;
}

static cxla_status copy_computation(cxla_builder *b, const cxla_module *src,
                                    const cxla_computation *from, cxla_computation **map,
                                    cxla_computation **out) {
    cxla_module *m = b->module;
    char name[256];
    size_t bl = base_len(from->name);
    snprintf(name, sizeof(name), "%.*s", (int)(bl > 200 ? 200 : bl), from->name);
    if (cxla_module_find_computation(m, name))
        snprintf(name, sizeof(name), "%.*s.%" PRId64, (int)(bl > 200 ? 200 : bl), from->name,
                 ++b->counter);
    cxla_computation *c;
    CXLA_RETURN_IF_ERROR(cxla_module_add_computation(m, name, &c));
    c->params = cxla_arena_alloc_array(
        m->arena, (size_t)(from->param_count ? from->param_count : 1), sizeof(cxla_instr *));
    if (!c->params) return OOM();
    c->param_count = from->param_count;
    cxla_strmap names; /* source instruction name -> copy */
    cxla_strmap_init(&names, m->arena);
    for (int64_t i = 0; i < from->instr_count; i++) {
        const cxla_instr *old = from->instrs[i];
        cxla_instr **ops = cxla_arena_alloc_array(
            m->arena, (size_t)(old->operand_count ? old->operand_count : 1), sizeof(*ops));
        if (!ops) return OOM();
        for (int64_t k = 0; k < old->operand_count; k++) {
            const cxla_instr *o = old->operands[k];
            ops[k] = cxla_strmap_get(&names, o->name, strlen(o->name));
            if (!ops[k])
                return cxla_error(CXLA_STATUS_INTERNAL,
                                  "importing: operand '%s' of '%s' is defined later", o->name,
                                  old->name);
        }
        size_t ol = base_len(old->name);
        snprintf(name, sizeof(name), "%.*s.%" PRId64, (int)(ol > 200 ? 200 : ol), old->name,
                 ++b->counter);
        cxla_instr *in;
        CXLA_RETURN_IF_ERROR(cxla_computation_add_instr(c, old->opcode, name, &old->shape,
                                                        old->operand_count, ops, &in));
        in->parameter_number = old->parameter_number;
        in->async_wrapped = old->async_wrapped;
        if (old->literal) {
            CXLA_RETURN_IF_ERROR(cxla_literal_clone(old->literal, &in->literal));
            CXLA_RETURN_IF_ERROR(cxla_module_adopt_literal(m, in->literal));
        }
        for (int64_t k = 0; k < old->attr_count; k++) {
            cxla_attr a;
            CXLA_RETURN_IF_ERROR(cxla_attr_copy(m, src, map, NULL, &old->attrs[k], &a));
            CXLA_RETURN_IF_ERROR(cxla_instr_set_attr(in, &a));
        }
        if (!cxla_strmap_put(&names, old->name, strlen(old->name), in)) return OOM();
        if (old->opcode == CXLA_OP_PARAMETER && old->parameter_number >= 0 &&
            old->parameter_number < c->param_count)
            c->params[old->parameter_number] = in;
        if (old == from->root) c->root = in;
    }
    *out = c;
    return NULL;
}

static cxla_computation *find_import(const cxla_builder *b, uint64_t origin) {
    for (int64_t k = 0; k < b->import_count; k++)
        if (b->import_origins[k] == origin) return b->import_comps[k];
    return NULL;
}

static cxla_status record_import(cxla_builder *b, uint64_t origin, cxla_computation *c) {
    if (b->import_count == b->import_capacity) {
        int64_t cap = b->import_capacity ? 2 * b->import_capacity : 8;
        uint64_t *o = realloc(b->import_origins, (size_t)cap * sizeof(*o));
        if (!o) return OOM();
        b->import_origins = o;
        cxla_computation **cs = realloc(b->import_comps, (size_t)cap * sizeof(*cs));
        if (!cs) return OOM();
        b->import_comps = cs;
        b->import_capacity = cap;
    }
    b->import_origins[b->import_count] = origin;
    b->import_comps[b->import_count++] = c;
    return NULL;
}

cxla_computation *bld_import(cxla_builder *b, const char *op, const cxla_xla_computation *x) {
    if (!bld_ok(b)) return NULL;
    if (!x) {
        bld_fail(b, op, "the computation argument is NULL");
        return NULL;
    }
    const cxla_module *src = x->module;
    cxla_computation **map = calloc((size_t)src->comp_count, sizeof(*map));
    if (!map) {
        bld_fail_status(b, op, OOM());
        return NULL;
    }
    cxla_status s = NULL;
    for (int64_t i = 0; i < src->comp_count && !s; i++) {
        map[i] = find_import(b, x->origins[i]);
        if (map[i]) continue;
        s = copy_computation(b, src, src->comps[i], map, &map[i]);
        if (!s) s = record_import(b, x->origins[i], map[i]);
    }
    cxla_computation *result = s ? NULL : map[src->comp_count - 1];
    free(map);
    if (s) bld_fail_status(b, op, s);
    return result;
}
