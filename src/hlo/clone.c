/* Deep copies: an attribute value into another module, a whole module (hlo.h). */
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo.h"
#include "shape/shape_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory copying a module")

static int64_t *dup_ints(cxla_arena *a, const int64_t *v, int64_t n) {
    int64_t *p = cxla_arena_alloc_array(a, (size_t)(n > 0 ? n : 1), sizeof(int64_t));
    if (p && n > 0 && v) memcpy(p, v, (size_t)n * sizeof(int64_t));
    return p;
}

static const char *dup_str(cxla_arena *a, const char *s) {
    return s ? cxla_arena_strndup(a, s, strlen(s)) : NULL;
}

static cxla_computation *map_comp(const cxla_module *src, cxla_computation *const *map,
                                  const cxla_computation *c) {
    for (int64_t i = 0; i < src->comp_count; i++)
        if (src->comps[i] == c) return map[i];
    return NULL;
}

cxla_status cxla_attr_copy(cxla_module *dst, const cxla_module *src,
                           cxla_computation *const *comp_map, const cxla_strmap *instr_map,
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
            to->v.comps.items[i] = map_comp(src, comp_map, from->v.comps.items[i]);
            if (!to->v.comps.items[i])
                return cxla_error(CXLA_STATUS_INTERNAL,
                                  "copying attribute %s: a called computation was not copied first",
                                  from->name);
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
    case CXLA_ATTR_KIND_INSTRUCTIONS: {
        if (!instr_map)
            return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                              "copying attribute %s: instruction references (control "
                              "predecessors) cannot be copied here",
                              from->name);
        int64_t n = from->v.instrs.count;
        to->v.instrs.items = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(cxla_instr *));
        if (!to->v.instrs.items) return OOM();
        for (int64_t i = 0; i < n; i++) {
            const char *name = from->v.instrs.items[i]->name;
            to->v.instrs.items[i] = cxla_strmap_get(instr_map, name, strlen(name));
            if (!to->v.instrs.items[i])
                return cxla_error(CXLA_STATUS_INTERNAL,
                                  "copying attribute %s: instruction '%s' was not copied",
                                  from->name, name);
        }
        return NULL;
    }
    default: return cxla_error(CXLA_STATUS_INTERNAL, "copying an attribute of unknown kind");
    }
}

static const char *dup_opt(cxla_arena *a, const char *s, bool *failed) {
    if (!s) return NULL;
    const char *d = cxla_arena_strndup(a, s, strlen(s));
    if (!d) *failed = true;
    return d;
}

/* The instructions of |from| into |to| (already added to |m|), without attributes;
 * |names| maps source names to the copies. */
static cxla_status copy_instrs(cxla_module *m, const cxla_computation *from, cxla_computation *to,
                               cxla_strmap *names, bool share_constants) {
    if (from->param_count) {
        to->params =
            cxla_arena_alloc_array(m->arena, (size_t)from->param_count, sizeof(cxla_instr *));
        if (!to->params) return OOM();
        to->param_count = from->param_count;
    }
    for (int64_t i = 0; i < from->instr_count; i++) {
        const cxla_instr *old = from->instrs[i];
        cxla_instr **ops = cxla_arena_alloc_array(
            m->arena, (size_t)(old->operand_count ? old->operand_count : 1), sizeof(*ops));
        if (!ops) return OOM();
        for (int64_t k = 0; k < old->operand_count; k++) {
            const cxla_instr *o = old->operands[k];
            ops[k] = o ? cxla_strmap_get(names, o->name, strlen(o->name)) : NULL;
            if (o && !ops[k])
                return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                  "cloning module '%s': operand '%s' of '%s' is not defined "
                                  "before it (verify the module first)",
                                  m->name, o->name, old->name);
        }
        cxla_instr *in;
        CXLA_RETURN_IF_ERROR(cxla_computation_add_instr(to, old->opcode, old->name, &old->shape,
                                                        old->operand_count, ops, &in));
        in->id = old->id;
        in->parameter_number = old->parameter_number;
        in->literal_elided = old->literal_elided;
        in->async_wrapped = old->async_wrapped;
        in->line = old->line;
        in->column = old->column;
        if (old->literal && share_constants) {
            in->literal = old->literal; /* the source's, which outlives |m| */
        } else if (old->literal) {
            CXLA_RETURN_IF_ERROR(cxla_literal_clone(old->literal, &in->literal));
            CXLA_RETURN_IF_ERROR(cxla_module_adopt_literal(m, in->literal));
        }
        if (!cxla_strmap_put(names, in->name, strlen(in->name), in)) return OOM();
        if (old->opcode == CXLA_OP_PARAMETER && old->parameter_number >= 0 &&
            old->parameter_number < to->param_count && from->params[old->parameter_number] == old)
            to->params[old->parameter_number] = in;
        if (old == from->root) to->root = in;
    }
    return NULL;
}

/* The attributes of each instruction of |from| onto its copy in |to|. */
static cxla_status copy_instr_attrs(cxla_module *m, const cxla_module *src,
                                    cxla_computation *const *comp_map, const cxla_computation *from,
                                    cxla_computation *to, const cxla_strmap *names) {
    for (int64_t i = 0; i < from->instr_count; i++) {
        const cxla_instr *old = from->instrs[i];
        cxla_instr *in = to->instrs[i];
        if (!old->attr_count) continue;
        in->attrs = cxla_arena_alloc_array(m->arena, (size_t)old->attr_count, sizeof(cxla_attr));
        if (!in->attrs) return OOM();
        /* Copied in place, in the source's order (set_attr would re-sort unknowns). */
        for (int64_t k = 0; k < old->attr_count; k++)
            CXLA_RETURN_IF_ERROR(
                cxla_attr_copy(m, src, comp_map, names, &old->attrs[k], &in->attrs[k]));
        in->attr_count = old->attr_count;
    }
    return NULL;
}

static cxla_status clone_into(const cxla_module *src, cxla_module *m, cxla_computation **map,
                              cxla_strmap *names, bool share_constants) {
    bool failed = false;
    for (int64_t i = 0; i < src->comp_count; i++) {
        const cxla_computation *from = src->comps[i];
        CXLA_RETURN_IF_ERROR(cxla_module_add_computation(m, from->name, &map[i]));
        map[i]->is_entry = from->is_entry;
        map[i]->execution_thread = dup_opt(m->arena, from->execution_thread, &failed);
        map[i]->line = from->line;
        map[i]->column = from->column;
        if (from == src->entry) m->entry = map[i];
        cxla_strmap_init(&names[i], m->arena);
        CXLA_RETURN_IF_ERROR(copy_instrs(m, from, map[i], &names[i], share_constants));
    }
    for (int64_t i = 0; i < src->comp_count; i++)
        CXLA_RETURN_IF_ERROR(copy_instr_attrs(m, src, map, src->comps[i], map[i], &names[i]));
    if (src->attr_count) {
        m->attrs = cxla_arena_alloc_array(m->arena, (size_t)src->attr_count, sizeof(cxla_attr));
        if (!m->attrs) return OOM();
        for (int64_t k = 0; k < src->attr_count; k++)
            CXLA_RETURN_IF_ERROR(cxla_attr_copy(m, src, map, NULL, &src->attrs[k], &m->attrs[k]));
        m->attr_count = src->attr_count;
    }
    m->has_entry_layout = src->has_entry_layout;
    m->entry_param_count = src->entry_param_count;
    if (src->entry_param_shapes) {
        int64_t n = src->entry_param_count;
        m->entry_param_shapes =
            cxla_arena_alloc_array(m->arena, (size_t)(n ? n : 1), sizeof(cxla_shape));
        if (!m->entry_param_shapes) return OOM();
        for (int64_t k = 0; k < n; k++)
            CXLA_RETURN_IF_ERROR(cxla_shape_copy_to_arena(m->arena, &src->entry_param_shapes[k],
                                                          &m->entry_param_shapes[k]));
    }
    CXLA_RETURN_IF_ERROR(
        cxla_shape_copy_to_arena(m->arena, &src->entry_result_shape, &m->entry_result_shape));
    m->replica_count = src->replica_count;
    m->num_partitions = src->num_partitions;
    m->stack_frames = dup_opt(m->arena, src->stack_frames, &failed);
    m->next_id = src->next_id;
    if (src->warnings.len) cxla_strbuf_puts(&m->warnings, src->warnings.data);
    return failed ? OOM() : NULL;
}

static cxla_status clone_module(const cxla_module *module, bool share_constants,
                                cxla_module **out) {
    if (!module || !out)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cxla_module_clone: NULL argument");
    *out = NULL;
    cxla_module *m = NULL;
    CXLA_RETURN_IF_ERROR(cxla_module_create(module->name, &m));
    size_t n = (size_t)(module->comp_count ? module->comp_count : 1);
    cxla_computation **map = calloc(n, sizeof(*map));
    cxla_strmap *names = calloc(n, sizeof(*names));
    cxla_status s = map && names ? clone_into(module, m, map, names, share_constants) : OOM();
    free(map);
    free(names);
    if (s) {
        cxla_module_destroy(m);
        return s;
    }
    *out = m;
    return NULL;
}

cxla_status cxla_module_clone(const cxla_module *module, cxla_module **out) {
    return clone_module(module, false, out);
}

cxla_status cxla_module_clone_sharing_constants(const cxla_module *module, cxla_module **out) {
    return clone_module(module, true, out);
}
