/* Shape inference helpers shared by every family and by the verifier: error messages,
 * shape builders and comparisons, required attributes, called-computation signatures,
 * window arithmetic and replica-group sizes (declared in infer_internal.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/infer_internal.h"
#include "shape/shape_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in shape inference")

/* ---- errors ---------------------------------------------------------------------- */

cxla_status cxla_infer_fail(const cxla_instr *in, const char *format, ...) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_printf(&b, "%s: ", cxla_opcode_name(in->opcode));
    va_list args;
    va_start(args, format);
    cxla_strbuf_vprintf(&b, format, args);
    va_end(args);
    cxla_status s =
        b.failed || !b.data ? OOM() : cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s", b.data);
    cxla_strbuf_free(&b);
    return s;
}

static const char *take_string(cxla_arena *arena, cxla_strbuf *b) {
    const char *r = b->failed || !b->data ? NULL : cxla_arena_strndup(arena, b->data, b->len);
    cxla_strbuf_free(b);
    return r ? r : "?";
}

const char *cxla_infer_str(cxla_arena *arena, const cxla_shape *shape) {
    if (!shape) return "(none)";
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_shape_print(&b, shape, CXLA_SHAPE_PRINT_NO_LAYOUT);
    return take_string(arena, &b);
}

const char *cxla_infer_ints_str(cxla_arena *arena, const int64_t *values, int64_t count) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_putc(&b, '{');
    for (int64_t i = 0; i < count; i++)
        cxla_strbuf_printf(&b, "%s%" PRId64, i ? "," : "", values[i]);
    cxla_strbuf_putc(&b, '}');
    return take_string(arena, &b);
}

const char *cxla_infer_operands_str(cxla_arena *arena, const cxla_instr *in) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    for (int64_t i = 0; i < in->operand_count; i++) {
        if (i) cxla_strbuf_puts(&b, ", ");
        if (in->operands[i])
            cxla_shape_print(&b, &in->operands[i]->shape, CXLA_SHAPE_PRINT_NO_LAYOUT);
        else
            cxla_strbuf_puts(&b, "(missing)");
    }
    return take_string(arena, &b);
}

/* ---- shapes ---------------------------------------------------------------------- */

bool cxla_infer_is_array(const cxla_shape *s) {
    return cxla_type_is_array(s->type);
}

bool cxla_infer_is_token(const cxla_shape *s) {
    return s->type == CXLA_TOKEN;
}

bool cxla_infer_is_scalar(const cxla_shape *s) {
    return cxla_infer_is_array(s) && s->rank == 0;
}

bool cxla_infer_dyn(const cxla_shape *s, int64_t i) {
    return s->dynamic && i >= 0 && i < s->rank && s->dynamic[i];
}

static bool unbounded_at(const cxla_shape *s, int64_t i) {
    return s->dims[i] == CXLA_DIM_UNBOUNDED;
}

static bool compat_rec(const cxla_shape *a, const cxla_shape *b, int depth) {
    if (depth > 64) return false;
    if (a->type == CXLA_TUPLE || b->type == CXLA_TUPLE) {
        if (a->type != b->type || a->tuple_count != b->tuple_count) return false;
        for (int64_t i = 0; i < a->tuple_count; i++)
            if (!compat_rec(&a->elements[i], &b->elements[i], depth + 1)) return false;
        return true;
    }
    if (!cxla_type_is_array(a->type) || !cxla_type_is_array(b->type)) return a->type == b->type;
    if (a->type != b->type) return false;
    if (a->rank != b->rank) return false;
    for (int64_t i = 0; i < a->rank; i++) {
        if (unbounded_at(a, i) || unbounded_at(b, i)) continue;
        if (a->dims[i] != b->dims[i]) return false;
    }
    return true;
}

bool cxla_infer_compatible(const cxla_shape *a, const cxla_shape *b) {
    return compat_rec(a, b, 0);
}

bool cxla_infer_same_dims(const cxla_shape *a, const cxla_shape *b) {
    if (a->rank != b->rank) return false;
    for (int64_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

cxla_status cxla_infer_make_array(cxla_arena *arena, cxla_type type, int64_t rank,
                                  const int64_t *dims, const uint8_t *dynamic, cxla_shape *out) {
    memset(out, 0, sizeof(*out));
    if (rank < 0 || rank > CXLA_MAX_RANK)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "result rank %" PRId64 " is outside 0..%d",
                          rank, CXLA_MAX_RANK);
    out->type = type;
    out->rank = rank;
    if (rank == 0) return NULL;
    out->dims = cxla_arena_alloc_array(arena, (size_t)rank, sizeof(int64_t));
    if (!out->dims) return OOM();
    memcpy(out->dims, dims, (size_t)rank * sizeof(int64_t));
    bool any = false;
    for (int64_t i = 0; dynamic && i < rank; i++) any = any || dynamic[i];
    if (any) {
        out->dynamic = cxla_arena_alloc(arena, (size_t)rank);
        if (!out->dynamic) return OOM();
        for (int64_t i = 0; i < rank; i++) out->dynamic[i] = dynamic[i] ? 1 : 0;
    }
    return NULL;
}

cxla_status cxla_infer_make_scalar(cxla_arena *arena, cxla_type type, cxla_shape *out) {
    return cxla_infer_make_array(arena, type, 0, NULL, NULL, out);
}

cxla_status cxla_infer_make_token(cxla_shape *out) {
    memset(out, 0, sizeof(*out));
    out->type = CXLA_TOKEN;
    return NULL;
}

cxla_status cxla_infer_make_tuple(cxla_arena *arena, int64_t count,
                                  const cxla_shape *const *elements, cxla_shape *out) {
    memset(out, 0, sizeof(*out));
    out->type = CXLA_TUPLE;
    out->tuple_count = count;
    if (count == 0) return NULL;
    out->elements = cxla_arena_alloc_array(arena, (size_t)count, sizeof(cxla_shape));
    if (!out->elements) return OOM();
    for (int64_t i = 0; i < count; i++)
        CXLA_RETURN_IF_ERROR(cxla_shape_copy_to_arena(arena, elements[i], &out->elements[i]));
    return NULL;
}

cxla_status cxla_infer_copy(cxla_arena *arena, const cxla_shape *src, cxla_shape *out) {
    return cxla_shape_copy_to_arena(arena, src, out);
}

cxla_status cxla_infer_with_type(cxla_arena *arena, const cxla_shape *src, cxla_type type,
                                 cxla_shape *out) {
    return cxla_infer_make_array(arena, type, src->rank, src->dims, src->dynamic, out);
}

cxla_status cxla_infer_operands_tuple(const cxla_instr *in, cxla_arena *arena, bool unwrap_single,
                                      cxla_shape *out) {
    if (unwrap_single && in->operand_count == 1) return cxla_infer_copy(arena, OPS(0), out);
    const cxla_shape **elems =
        cxla_arena_alloc_array(arena, (size_t)(in->operand_count + 1), sizeof(*elems));
    if (!elems) return OOM();
    for (int64_t i = 0; i < in->operand_count; i++) elems[i] = OPS(i);
    return cxla_infer_make_tuple(arena, in->operand_count, elems, out);
}

/* ---- attributes and called computations ------------------------------------------ */

cxla_status cxla_infer_req_ints(const cxla_instr *in, cxla_attr_id id, const int64_t **values,
                                int64_t *count) {
    const cxla_attr *a = cxla_instr_attr(in, id);
    if (!a || a->kind != CXLA_ATTR_KIND_INTS)
        return cxla_infer_fail(in, "missing attribute %s={...}", cxla_attr_get_info(id)->name);
    *values = a->v.ints.values;
    *count = a->v.ints.count;
    return NULL;
}

cxla_status cxla_infer_req_int(const cxla_instr *in, cxla_attr_id id, int64_t *value) {
    if (!cxla_instr_int(in, id, value))
        return cxla_infer_fail(in, "missing attribute %s=N", cxla_attr_get_info(id)->name);
    return NULL;
}

cxla_status cxla_infer_req_word(const cxla_instr *in, cxla_attr_id id, const char **word) {
    *word = cxla_instr_word(in, id);
    if (!*word) return cxla_infer_fail(in, "missing attribute %s=", cxla_attr_get_info(id)->name);
    return NULL;
}

cxla_status cxla_infer_check_callable(const cxla_instr *in, const cxla_computation *comp) {
    if (!comp->root)
        return cxla_infer_fail(in, "called computation '%s' has no root instruction", comp->name);
    for (int64_t i = 0; i < comp->param_count; i++)
        if (!comp->params || !comp->params[i])
            return cxla_infer_fail(in, "called computation '%s' lacks parameter %" PRId64,
                                   comp->name, i);
    return NULL;
}

cxla_status cxla_infer_req_called(const cxla_instr *in, cxla_attr_id id, cxla_computation **comp) {
    *comp = cxla_instr_called(in, id);
    if (!*comp)
        return cxla_infer_fail(in, "missing called computation %s=", cxla_attr_get_info(id)->name);
    return cxla_infer_check_callable(in, *comp);
}

const char *cxla_infer_signature_str(cxla_arena *arena, const cxla_computation *comp) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_putc(&b, '(');
    for (int64_t i = 0; i < comp->param_count; i++) {
        if (i) cxla_strbuf_puts(&b, ", ");
        if (comp->params && comp->params[i])
            cxla_shape_print(&b, &comp->params[i]->shape, CXLA_SHAPE_PRINT_NO_LAYOUT);
        else
            cxla_strbuf_puts(&b, "?");
    }
    cxla_strbuf_puts(&b, ") -> ");
    if (comp->root)
        cxla_shape_print(&b, &comp->root->shape, CXLA_SHAPE_PRINT_NO_LAYOUT);
    else
        cxla_strbuf_puts(&b, "?");
    return take_string(arena, &b);
}

cxla_status cxla_infer_check_reducer(const cxla_instr *in, cxla_arena *arena,
                                     const cxla_computation *comp, int64_t n,
                                     const cxla_shape *const *init_shapes,
                                     const cxla_type *input_types) {
    CXLA_RETURN_IF_ERROR(cxla_infer_check_callable(in, comp));
    const char *sig = cxla_infer_signature_str(arena, comp);
    if (comp->param_count != 2 * n)
        return cxla_infer_fail(in,
                               "reduction computation '%s' must take %" PRId64
                               " parameters, but its signature is %s",
                               comp->name, 2 * n, sig);
    const cxla_shape *acc = &comp->root->shape;
    if (cxla_infer_is_array(acc) ? n != 1 : acc->type != CXLA_TUPLE || acc->tuple_count != n)
        return n == 1 ? cxla_infer_fail(in,
                                        "reduction computation '%s' must return a scalar, but "
                                        "its signature is %s",
                                        comp->name, sig)
                      : cxla_infer_fail(in,
                                        "reduction computation '%s' must return a tuple of %" PRId64
                                        " scalars, but its signature is %s",
                                        comp->name, n, sig);
    for (int64_t i = 0; i < n; i++) {
        const cxla_shape *a = acc->type == CXLA_TUPLE ? &acc->elements[i] : acc;
        if (!cxla_infer_is_scalar(a))
            return cxla_infer_fail(in,
                                   "reduction computation '%s' must return scalars, but its "
                                   "signature is %s",
                                   comp->name, sig);
        const cxla_shape *p_acc = &comp->params[i]->shape;
        const cxla_shape *p_in = &comp->params[n + i]->shape;
        if (!cxla_infer_compatible(a, p_acc))
            return cxla_infer_fail(in,
                                   "reduction computation '%s': parameter %" PRId64
                                   " must have the result's shape %s; its signature is %s",
                                   comp->name, i, STR(a), sig);
        if (init_shapes && !cxla_infer_compatible(a, init_shapes[i]))
            return cxla_infer_fail(in,
                                   "init value %" PRId64
                                   " has shape %s, but reduction computation '%s' "
                                   "accumulates %s",
                                   i, STR(init_shapes[i]), comp->name, STR(a));
        cxla_shape elem = {.type = input_types[i]};
        if (!cxla_infer_compatible(&elem, p_in))
            return cxla_infer_fail(in,
                                   "reduction computation '%s': parameter %" PRId64
                                   " must be %s, the element type of input %" PRId64
                                   "; its signature is %s",
                                   comp->name, n + i, STR(&elem), i, sig);
    }
    return NULL;
}

/* ---- lists and arithmetic -------------------------------------------------------- */

bool cxla_infer_contains(const int64_t *values, int64_t count, int64_t value) {
    for (int64_t i = 0; i < count; i++)
        if (values[i] == value) return true;
    return false;
}

bool cxla_infer_all_unique(const int64_t *values, int64_t count) {
    for (int64_t i = 0; i < count; i++)
        if (cxla_infer_contains(values + i + 1, count - i - 1, values[i])) return false;
    return true;
}

bool cxla_infer_is_sorted(const int64_t *values, int64_t count) {
    for (int64_t i = 1; i < count; i++)
        if (values[i - 1] > values[i]) return false;
    return true;
}

/* window_util::DilatedBound: (bound - 1) * dilation + 1, 0 for 0. */
static bool dilated_bound(int64_t bound, int64_t dilation, int64_t *out) {
    if (bound == 0) {
        *out = 0;
        return true;
    }
    int64_t t;
    return cxla_mul_i64(bound - 1, dilation, &t) && cxla_add_i64(t, 1, out);
}

cxla_status cxla_infer_window_output(const cxla_instr *in, cxla_arena *arena,
                                     const cxla_attr *window, int64_t rank,
                                     const int64_t *base_dims, int64_t *dims) {
    if (!window) {
        if (rank == 0) return NULL;
        return cxla_infer_fail(in, "missing attribute window={...} for an operand of rank %" PRId64,
                               rank);
    }
    if (window->kind != CXLA_ATTR_KIND_WINDOW)
        return cxla_infer_fail(in, "attribute window is not a window");
    if (window->v.window.rank != rank)
        return cxla_infer_fail(
            in, "the window has %" PRId64 " dimensions but the windowed operand has rank %" PRId64,
            window->v.window.rank, rank);
    for (int64_t i = 0; i < rank; i++) {
        const cxla_window_dim *w = &window->v.window.dims[i];
        if (w->size <= 0)
            return cxla_infer_fail(
                in, "window dimension %" PRId64 " has size %" PRId64 ", expected >= 1", i, w->size);
        if (w->stride <= 0)
            return cxla_infer_fail(
                in, "window dimension %" PRId64 " has stride %" PRId64 ", expected >= 1", i,
                w->stride);
        if (w->lhs_dilation < 1)
            return cxla_infer_fail(in,
                                   "window dimension %" PRId64 " has base (lhs) dilation %" PRId64
                                   ", expected >= 1",
                                   i, w->lhs_dilation);
        if (w->rhs_dilation < 1)
            return cxla_infer_fail(in,
                                   "window dimension %" PRId64 " has window (rhs) dilation %" PRId64
                                   ", expected >= 1",
                                   i, w->rhs_dilation);
        if (base_dims[i] == CXLA_DIM_UNBOUNDED) {
            dims[i] = CXLA_DIM_UNBOUNDED;
            continue;
        }
        int64_t base, padded, win;
        if (!dilated_bound(base_dims[i], w->lhs_dilation, &base) ||
            !cxla_add_i64(base, w->pad_low, &padded) ||
            !cxla_add_i64(padded, w->pad_high, &padded) ||
            !dilated_bound(w->size, w->rhs_dilation, &win))
            return cxla_infer_fail(in, "window dimension %" PRId64 " overflows int64", i);
        dims[i] = win > padded ? 0 : (padded - win) / w->stride + 1;
    }
    (void)arena;
    return NULL;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

cxla_status cxla_infer_group_size(const cxla_instr *in, cxla_arena *arena, bool uniform,
                                  bool use_global_ids_meaningful, int64_t *out_size) {
    const cxla_module *m = in->parent ? in->parent->module : NULL;
    int64_t replicas = m && m->replica_count > 0 ? m->replica_count : 1;
    int64_t partitions = m && m->num_partitions > 0 ? m->num_partitions : 1;
    int64_t channel;
    bool has_channel = cxla_instr_int(in, CXLA_ATTR_CHANNEL_ID, &channel);
    bool global = cxla_instr_bool(in, CXLA_ATTR_USE_GLOBAL_DEVICE_IDS);
    if (global && (!has_channel || !use_global_ids_meaningful))
        return cxla_infer_fail(in, "use_global_device_ids=true needs a channel_id");
    /* XLA's CollectiveOpGroupMode. */
    enum { CROSS_REPLICA, CROSS_PARTITION, CROSS_REPLICA_AND_PARTITION, FLATTENED } mode;
    if (!has_channel)
        mode = CROSS_REPLICA;
    else if (!use_global_ids_meaningful)
        mode = CROSS_PARTITION;
    else
        mode = global ? FLATTENED : CROSS_REPLICA_AND_PARTITION;

    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_REPLICA_GROUPS);
    const cxla_replica_groups *g =
        a && a->kind == CXLA_ATTR_KIND_REPLICA_GROUPS ? &a->v.groups : NULL;
    if (g && g->group_count == 0 && g->text) {
        *out_size = 1; /* mesh form: not decoded, nothing to check */
        return NULL;
    }
    if (!g || g->group_count == 0) {
        switch (mode) {
        case CROSS_REPLICA: *out_size = replicas; break;
        case CROSS_PARTITION: *out_size = partitions; break;
        case CROSS_REPLICA_AND_PARTITION:
            if (!cxla_mul_i64(replicas, partitions, out_size))
                return cxla_infer_fail(in, "replica_count x num_partitions overflows");
            break;
        case FLATTENED:
            return cxla_infer_fail(in, "replica_groups must be given with use_global_device_ids");
        }
        return NULL;
    }
    int64_t total = 0;
    for (int64_t i = 0; i < g->group_count; i++) {
        if (g->group_sizes[i] <= 0)
            return cxla_infer_fail(in, "replica group %" PRId64 " is empty", i);
        if (uniform && g->group_sizes[i] != g->group_sizes[0])
            return cxla_infer_fail(
                in, "replica groups must have the same size, got %" PRId64 " and %" PRId64,
                g->group_sizes[0], g->group_sizes[i]);
        if (!cxla_add_i64(total, g->group_sizes[i], &total))
            return cxla_infer_fail(in, "replica groups are too large");
    }
    int64_t *ids = cxla_arena_alloc_array(arena, (size_t)total, sizeof(int64_t));
    if (!ids) return OOM();
    int64_t k = 0;
    for (int64_t i = 0; i < g->group_count; i++)
        for (int64_t j = 0; j < g->group_sizes[i]; j++) ids[k++] = g->groups[i][j];
    qsort(ids, (size_t)total, sizeof(int64_t), cmp_i64);
    for (int64_t i = 0; i < total; i++) {
        if (i > 0 && ids[i] == ids[i - 1])
            return cxla_infer_fail(in, "replica %" PRId64 " appears twice in replica_groups",
                                   ids[i]);
        if (ids[i] != i)
            return cxla_infer_fail(
                in, "replica_groups must name each of 0..%" PRId64 " once; %" PRId64 " is missing",
                total - 1, i);
    }
    int64_t expected = mode == CROSS_PARTITION ? partitions : replicas;
    if (mode == FLATTENED && !cxla_mul_i64(replicas, partitions, &expected))
        return cxla_infer_fail(in, "replica_count x num_partitions overflows");
    if (expected != 1 && total != expected)
        return cxla_infer_fail(
            in, "replica_groups name %" PRId64 " participants, the module has %" PRId64, total,
            expected);
    *out_size = g->group_sizes[0];
    /* Each replica of a group takes part with all its partitions (XLA's GetSubgroupSize). */
    if (mode == CROSS_REPLICA_AND_PARTITION && !cxla_mul_i64(*out_size, partitions, out_size))
        return cxla_infer_fail(in, "the group size x num_partitions overflows");
    return NULL;
}
