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

static int64_t *dup_ints(cxla_arena *a, const int64_t *v, int64_t n) {
    int64_t *p = cxla_arena_alloc_array(a, (size_t)(n > 0 ? n : 1), sizeof(int64_t));
    if (p && n > 0 && v) memcpy(p, v, (size_t)n * sizeof(int64_t));
    return p;
}

static const char *dup_str(cxla_arena *a, const char *s) {
    return s ? cxla_arena_strndup(a, s, strlen(s)) : NULL;
}

static cxla_computation *map_comp(const cxla_module *src, cxla_computation **map,
                                  const cxla_computation *c) {
    for (int64_t i = 0; i < src->comp_count; i++)
        if (src->comps[i] == c) return map[i];
    return NULL;
}

cxla_status bld_copy_attr(cxla_module *dst, const cxla_module *src, cxla_computation **map,
                          const cxla_attr *from, cxla_attr *to) {
    cxla_arena *a = dst->arena;
    *to = *from;
    to->pending_names = NULL;
    if (from->id == CXLA_ATTR_UNKNOWN && !(to->name = dup_str(a, from->name))) return OOM();
    switch (from->kind) {
    case CXLA_ATTR_KIND_BOOL:
    case CXLA_ATTR_KIND_INT:
    case CXLA_ATTR_KIND_FLOAT: return NULL;
    case CXLA_ATTR_KIND_STRING:
    case CXLA_ATTR_KIND_WORD:
    case CXLA_ATTR_KIND_RAW:
        if (from->v.s && !(to->v.s = dup_str(a, from->v.s))) return OOM();
        return NULL;
    case CXLA_ATTR_KIND_INTS:
        to->v.ints.values = dup_ints(a, from->v.ints.values, from->v.ints.count);
        return to->v.ints.values ? NULL : OOM();
    case CXLA_ATTR_KIND_INT_LISTS: {
        int64_t n = from->v.int_lists.count;
        to->v.int_lists.lengths = dup_ints(a, from->v.int_lists.lengths, n);
        to->v.int_lists.lists = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(int64_t *));
        if (!to->v.int_lists.lengths || !to->v.int_lists.lists) return OOM();
        for (int64_t i = 0; i < n; i++)
            if (!(to->v.int_lists.lists[i] =
                      dup_ints(a, from->v.int_lists.lists[i], from->v.int_lists.lengths[i])))
                return OOM();
        return NULL;
    }
    case CXLA_ATTR_KIND_COMPUTATION:
    case CXLA_ATTR_KIND_COMPUTATIONS: {
        int64_t n = from->v.comps.count;
        to->v.comps.items =
            cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(cxla_computation *));
        if (!to->v.comps.items) return OOM();
        for (int64_t i = 0; i < n; i++) {
            to->v.comps.items[i] = map_comp(src, map, from->v.comps.items[i]);
            if (!to->v.comps.items[i])
                return cxla_error(CXLA_STATUS_INTERNAL,
                                  "importing: a called computation was not copied first");
        }
        return NULL;
    }
    case CXLA_ATTR_KIND_SHAPE:
    case CXLA_ATTR_KIND_SHAPES: {
        int64_t n = from->v.shapes.count;
        to->v.shapes.items = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(cxla_shape));
        if (!to->v.shapes.items) return OOM();
        for (int64_t i = 0; i < n; i++)
            CXLA_RETURN_IF_ERROR(
                cxla_shape_copy_to_arena(a, &from->v.shapes.items[i], &to->v.shapes.items[i]));
        return NULL;
    }
    case CXLA_ATTR_KIND_WINDOW: {
        int64_t n = from->v.window.rank;
        to->v.window.dims = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(cxla_window_dim));
        if (!to->v.window.dims) return OOM();
        if (n) memcpy(to->v.window.dims, from->v.window.dims, (size_t)n * sizeof(cxla_window_dim));
        return NULL;
    }
    case CXLA_ATTR_KIND_PADDING: {
        int64_t n = from->v.padding.rank;
        to->v.padding.dims = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(cxla_pad_dim));
        if (!to->v.padding.dims) return OOM();
        if (n) memcpy(to->v.padding.dims, from->v.padding.dims, (size_t)n * sizeof(cxla_pad_dim));
        return NULL;
    }
    case CXLA_ATTR_KIND_SLICE: {
        int64_t n = from->v.slice.rank;
        to->v.slice.dims = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(cxla_slice_dim));
        if (!to->v.slice.dims) return OOM();
        if (n) memcpy(to->v.slice.dims, from->v.slice.dims, (size_t)n * sizeof(cxla_slice_dim));
        return NULL;
    }
    case CXLA_ATTR_KIND_DIM_LABELS: {
        int64_t n = from->v.conv.spatial_count;
        to->v.conv.input_spatial = dup_ints(a, from->v.conv.input_spatial, n);
        to->v.conv.kernel_spatial = dup_ints(a, from->v.conv.kernel_spatial, n);
        to->v.conv.output_spatial = dup_ints(a, from->v.conv.output_spatial, n);
        return to->v.conv.input_spatial && to->v.conv.kernel_spatial && to->v.conv.output_spatial
                   ? NULL
                   : OOM();
    }
    case CXLA_ATTR_KIND_REPLICA_GROUPS: {
        const cxla_replica_groups *f = &from->v.groups;
        cxla_replica_groups *t = &to->v.groups;
        int64_t n = f->group_count;
        t->group_sizes = dup_ints(a, f->group_sizes, n);
        t->groups = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(int64_t *));
        t->iota_reshape_dims = dup_ints(a, f->iota_reshape_dims, f->iota_reshape_rank);
        t->iota_transpose_perm = dup_ints(a, f->iota_transpose_perm, f->iota_transpose_rank);
        if (!t->group_sizes || !t->groups || !t->iota_reshape_dims || !t->iota_transpose_perm)
            return OOM();
        for (int64_t i = 0; i < n; i++)
            if (!(t->groups[i] = dup_ints(a, f->groups[i], f->group_sizes[i]))) return OOM();
        if (f->text && !(t->text = dup_str(a, f->text))) return OOM();
        return NULL;
    }
    case CXLA_ATTR_KIND_PRECISIONS: {
        int64_t n = from->v.precisions.count;
        to->v.precisions.items =
            cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(cxla_precision));
        if (!to->v.precisions.items) return OOM();
        if (n)
            memcpy(to->v.precisions.items, from->v.precisions.items,
                   (size_t)n * sizeof(cxla_precision));
        return NULL;
    }
    case CXLA_ATTR_KIND_LITERAL: {
        if (!from->v.literal) return NULL;
        CXLA_RETURN_IF_ERROR(cxla_literal_clone(from->v.literal, &to->v.literal));
        return cxla_module_adopt_literal(dst, to->v.literal);
    }
    case CXLA_ATTR_KIND_INSTRUCTIONS:
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "importing: control predecessors are not supported");
    default: return cxla_error(CXLA_STATUS_INTERNAL, "importing: unknown attribute kind");
    }
}

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
            CXLA_RETURN_IF_ERROR(bld_copy_attr(m, src, map, &old->attrs[k], &a));
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
