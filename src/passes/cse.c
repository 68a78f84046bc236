/* Common-subexpression elimination: two instructions of one computation with the same
 * opcode, operands, attributes and shape compute the same value; the later one is
 * replaced by the earlier. Never side effects, rng, instructions with control
 * dependencies, parameters, or constants whose values are elided; constants merge only
 * when their bytes are identical (so 0.0 and -0.0, or two NaN payloads, stay apart).
 * Attributes are compared by value except metadata (which names the source, not the
 * meaning); a kind this file does not know how to compare counts as different. */
#include <stdlib.h>
#include <string.h>

#include "passes/passes_internal.h"

static bool ints_equal(int64_t n, const int64_t *a, int64_t m, const int64_t *b) {
    return n == m && (n == 0 || memcmp(a, b, (size_t)n * sizeof(int64_t)) == 0);
}

static bool shapes_equal(const cxla_shape *a, const cxla_shape *b) {
    return cxla_shape_equal(a, b);
}

static bool attr_equal(const cxla_attr *a, const cxla_attr *b) {
    if (a->id != b->id || a->kind != b->kind) return false;
    if (a->id == CXLA_ATTR_UNKNOWN && strcmp(a->name, b->name) != 0) return false;
    switch (a->kind) {
    case CXLA_ATTR_KIND_BOOL: return a->v.b == b->v.b;
    case CXLA_ATTR_KIND_INT: return a->v.i == b->v.i;
    case CXLA_ATTR_KIND_FLOAT: return memcmp(&a->v.f, &b->v.f, sizeof(double)) == 0;
    case CXLA_ATTR_KIND_STRING:
    case CXLA_ATTR_KIND_WORD:
    case CXLA_ATTR_KIND_RAW: return a->v.s && b->v.s && strcmp(a->v.s, b->v.s) == 0;
    case CXLA_ATTR_KIND_INTS:
        return ints_equal(a->v.ints.count, a->v.ints.values, b->v.ints.count, b->v.ints.values);
    case CXLA_ATTR_KIND_INT_LISTS:
        if (a->v.int_lists.count != b->v.int_lists.count) return false;
        for (int64_t i = 0; i < a->v.int_lists.count; i++)
            if (!ints_equal(a->v.int_lists.lengths[i], a->v.int_lists.lists[i],
                            b->v.int_lists.lengths[i], b->v.int_lists.lists[i]))
                return false;
        return true;
    case CXLA_ATTR_KIND_COMPUTATION:
    case CXLA_ATTR_KIND_COMPUTATIONS:
        if (a->v.comps.count != b->v.comps.count) return false;
        for (int64_t i = 0; i < a->v.comps.count; i++)
            if (a->v.comps.items[i] != b->v.comps.items[i]) return false;
        return true;
    case CXLA_ATTR_KIND_SHAPE:
    case CXLA_ATTR_KIND_SHAPES:
        if (a->v.shapes.count != b->v.shapes.count) return false;
        for (int64_t i = 0; i < a->v.shapes.count; i++)
            if (!shapes_equal(&a->v.shapes.items[i], &b->v.shapes.items[i])) return false;
        return true;
    case CXLA_ATTR_KIND_WINDOW:
        if (a->v.window.rank != b->v.window.rank) return false;
        for (int64_t i = 0; i < a->v.window.rank; i++) {
            const cxla_window_dim *x = &a->v.window.dims[i], *y = &b->v.window.dims[i];
            if (x->size != y->size || x->stride != y->stride || x->pad_low != y->pad_low ||
                x->pad_high != y->pad_high || x->lhs_dilation != y->lhs_dilation ||
                x->rhs_dilation != y->rhs_dilation || x->reversal != y->reversal)
                return false;
        }
        return true;
    case CXLA_ATTR_KIND_PADDING:
        if (a->v.padding.rank != b->v.padding.rank) return false;
        for (int64_t i = 0; i < a->v.padding.rank; i++) {
            const cxla_pad_dim *x = &a->v.padding.dims[i], *y = &b->v.padding.dims[i];
            if (x->low != y->low || x->high != y->high || x->interior != y->interior) return false;
        }
        return true;
    case CXLA_ATTR_KIND_SLICE:
        if (a->v.slice.rank != b->v.slice.rank) return false;
        for (int64_t i = 0; i < a->v.slice.rank; i++) {
            const cxla_slice_dim *x = &a->v.slice.dims[i], *y = &b->v.slice.dims[i];
            if (x->start != y->start || x->limit != y->limit || x->stride != y->stride)
                return false;
        }
        return true;
    case CXLA_ATTR_KIND_PRECISIONS:
        if (a->v.precisions.count != b->v.precisions.count) return false;
        for (int64_t i = 0; i < a->v.precisions.count; i++)
            if (a->v.precisions.items[i] != b->v.precisions.items[i]) return false;
        return true;
    default: return false; /* not compared: never merged */
    }
}

static bool attrs_equal(const cxla_instr *a, const cxla_instr *b) {
    int64_t i = 0, j = 0;
    for (;;) {
        while (i < a->attr_count && a->attrs[i].id == CXLA_ATTR_METADATA) i++;
        while (j < b->attr_count && b->attrs[j].id == CXLA_ATTR_METADATA) j++;
        if (i == a->attr_count || j == b->attr_count)
            return i == a->attr_count && j == b->attr_count;
        if (!attr_equal(&a->attrs[i], &b->attrs[j])) return false;
        i++;
        j++;
    }
}

static bool literal_bytes_equal(const cxla_literal *a, const cxla_literal *b) {
    if (!a || !b) return false;
    if (cxla_literal_tuple_count(a) || cxla_literal_tuple_count(b)) return false;
    if (!cxla_shape_equal(cxla_literal_shape(a), cxla_literal_shape(b))) return false;
    size_t n = cxla_literal_byte_size(a);
    return n == cxla_literal_byte_size(b) &&
           (n == 0 || memcmp(cxla_literal_data_const(a), cxla_literal_data_const(b), n) == 0);
}

static bool can_merge(const cxla_instr *in) {
    if (in->opcode == CXLA_OP_PARAMETER || in->opcode == CXLA_OP_RNG ||
        in->opcode == CXLA_OP_RNG_BIT_GENERATOR)
        return false;
    if (in->opcode == CXLA_OP_CONSTANT && (!in->literal || in->literal_elided)) return false;
    return !passes_has_side_effect(in) && !passes_has_control_deps(in);
}

static bool same_value(const cxla_instr *a, const cxla_instr *b) {
    if (a->opcode != b->opcode || a->operand_count != b->operand_count) return false;
    if (!cxla_shape_equal(&a->shape, &b->shape)) return false;
    for (int64_t i = 0; i < a->operand_count; i++)
        if (a->operands[i] != b->operands[i]) return false;
    if (a->opcode == CXLA_OP_CONSTANT && !literal_bytes_equal(a->literal, b->literal)) return false;
    return attrs_equal(a, b);
}

static uint64_t key_of(const cxla_instr *in) {
    uint64_t h = 1469598103934665603ull ^ (uint64_t)in->opcode;
    for (int64_t i = 0; i < in->operand_count; i++)
        h = (h ^ (uint64_t)in->operands[i]->id) * 1099511628211ull;
    h = (h ^ (uint64_t)in->shape.type) * 1099511628211ull;
    for (int64_t i = 0; i < in->shape.rank; i++)
        h = (h ^ (uint64_t)in->shape.dims[i]) * 1099511628211ull;
    return h;
}

static cxla_status cse_computation(cxla_computation *c, bool *changed) {
    cxla_instr **order;
    CXLA_RETURN_IF_ERROR(cxla_computation_post_order(c, &order));
    int64_t n = c->instr_count;
    /* Open addressing over the kept instructions, by key. */
    size_t cap = 16;
    while (cap < (size_t)n * 2 + 2) cap *= 2;
    cxla_instr **table = calloc(cap, sizeof(*table));
    if (!table) return PASSES_OOM();
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++) {
        cxla_instr *in = order[i];
        if (!can_merge(in)) continue;
        size_t j = (size_t)key_of(in) & (cap - 1);
        cxla_instr *found = NULL;
        for (; table[j]; j = (j + 1) & (cap - 1))
            if (same_value(table[j], in)) {
                found = table[j];
                break;
            }
        if (!found) {
            table[j] = in;
            continue;
        }
        s = passes_replace(in, found);
        *changed = true;
    }
    free(table);
    return s;
}

static cxla_status run_cse(cxla_module *m, bool *changed) {
    *changed = false;
    for (int64_t i = 0; i < m->comp_count; i++)
        CXLA_RETURN_IF_ERROR(cse_computation(m->comps[i], changed));
    return NULL;
}

const cxla_pass cxla_pass_cse = {"cse", run_cse};
