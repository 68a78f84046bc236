/* Reductions, windows, sorting, top-k, gather and scatter. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "builder/builder_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in the builder")

void bld_make_padding(int64_t input, int64_t window, int64_t stride, cxla_padding padding,
                      int64_t *low, int64_t *high) {
    *low = *high = 0;
    if (padding != CXLA_PADDING_SAME || stride < 1) return;
    int64_t output = input / stride + (input % stride != 0);
    int64_t need = (output - 1) * stride + window - input;
    if (need < 0) need = 0;
    *low = need / 2;
    *high = need - need / 2;
}

cxla_xla_computation *bld_scalar_binary_computation(cxla_builder *b, const char *op,
                                                    cxla_opcode opcode, cxla_type type) {
    const char *base = opcode == CXLA_OP_COMPARE ? "compare-lt" : cxla_opcode_name(opcode);
    char name[64];
    snprintf(name, sizeof(name), "%s_%s", base, cxla_type_name(type));
    for (char *p = name + strlen(base) + 1; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    cxla_builder *sb;
    cxla_status s = cxla_builder_create(name, &sb);
    if (s) {
        bld_fail_status(b, op, s);
        return NULL;
    }
    cxla_shape scalar = {.type = type};
    cxla_op x = cxla_parameter(sb, 0, &scalar, "lhs"), y = cxla_parameter(sb, 1, &scalar, "rhs");
    switch (opcode) {
    case CXLA_OP_ADD: cxla_add(x, y); break;
    case CXLA_OP_MULTIPLY: cxla_mul(x, y); break;
    case CXLA_OP_MAXIMUM: cxla_max(x, y); break;
    case CXLA_OP_MINIMUM: cxla_min(x, y); break;
    case CXLA_OP_OR: cxla_or(x, y); break;
    case CXLA_OP_AND: cxla_and(x, y); break;
    default: cxla_lt_total_order(x, y); break;
    }
    cxla_xla_computation *c = NULL;
    s = cxla_builder_build(sb, &c);
    cxla_builder_destroy(sb);
    if (s) bld_fail_status(b, op, s);
    return c;
}

/* Operand instructions of |a| then |b| (each |n| long) into one arena list. */
static cxla_instr **concat2(cxla_builder *b, const char *op, cxla_instr **x, int64_t nx,
                            cxla_instr **y, int64_t ny) {
    cxla_instr **v =
        cxla_arena_alloc_array(b->module->arena, (size_t)(nx + ny + 1), sizeof(cxla_instr *));
    if (!v) {
        bld_fail_status(b, op, OOM());
        return NULL;
    }
    for (int64_t i = 0; i < nx; i++) v[i] = x[i];
    for (int64_t i = 0; i < ny; i++) v[nx + i] = y[i];
    return v;
}

/* ---- reduce --------------------------------------------------------------------------------- */

cxla_op cxla_reduce_variadic(cxla_builder *b, const cxla_op *operands, const cxla_op *init_values,
                             int64_t count, const cxla_xla_computation *computation,
                             const int64_t *dimensions, int64_t dimension_count) {
    const char *op = "Reduce";
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr **xs, **inits, **all;
    if (!bld_operands(b, op, operands, count, &xs) ||
        !bld_operands(b, op, init_values, count, &inits) ||
        !bld_check_list(b, op, "dimensions", dimensions, dimension_count) ||
        !(all = concat2(b, op, xs, count, inits, count)))
        return bld_invalid(b);
    cxla_computation *f = bld_import(b, op, computation);
    if (!f) return bld_invalid(b);
    cxla_attr a[2];
    if (!bld_attr_ints(b, CXLA_ATTR_DIMENSIONS, dimensions, dimension_count, &a[0]) ||
        !bld_attr_comps(b, CXLA_ATTR_TO_APPLY, &f, 1, &a[1]))
        return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_REDUCE, NULL, 2 * count, all, 2, a);
}

cxla_op cxla_reduce(cxla_op operand, cxla_op init_value, const cxla_xla_computation *computation,
                    const int64_t *dimensions, int64_t count) {
    return cxla_reduce_variadic(operand.builder, &operand, &init_value, 1, computation, dimensions,
                                count);
}

cxla_op cxla_reduce_all(cxla_op operand, cxla_op init_value,
                        const cxla_xla_computation *computation) {
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, "ReduceAll", operand, 0);
    if (!in) return bld_invalid(b);
    int64_t dims[CXLA_MAX_RANK];
    int64_t rank = in->shape.rank;
    for (int64_t i = 0; i < rank && i < CXLA_MAX_RANK; i++) dims[i] = i;
    return cxla_reduce(operand, init_value, computation, dims, rank);
}

/* ---- windows ----------------------------------------------------------------------------------
 */

static bool window_attr(cxla_builder *b, const char *op, int64_t rank, const int64_t *sizes,
                        const int64_t *strides, const int64_t *base_dilations,
                        const int64_t *window_dilations, const cxla_pad_pair *padding,
                        cxla_attr *out) {
    if (!bld_check_list(b, op, "window_dimensions", sizes, rank) ||
        !bld_check_list(b, op, "window_strides", strides, rank))
        return false;
    *out = bld_attr(CXLA_ATTR_WINDOW);
    cxla_window_dim *d = cxla_arena_alloc_array(b->module->arena, (size_t)(rank ? rank : 1),
                                                sizeof(cxla_window_dim));
    if (!d) {
        bld_fail_status(b, op, OOM());
        return false;
    }
    for (int64_t i = 0; i < rank; i++) {
        d[i].size = sizes[i];
        d[i].stride = strides[i];
        d[i].pad_low = padding ? padding[i].low : 0;
        d[i].pad_high = padding ? padding[i].high : 0;
        d[i].lhs_dilation = base_dilations ? base_dilations[i] : 1;
        d[i].rhs_dilation = window_dilations ? window_dilations[i] : 1;
    }
    out->v.window.rank = rank;
    out->v.window.dims = d;
    return true;
}

/* Padding pairs for |padding| over the operand |x| (rank entries); NULL after an error. */
static cxla_pad_pair *padding_for(cxla_builder *b, const char *op, const cxla_shape *x,
                                  const int64_t *sizes, const int64_t *strides, int64_t rank,
                                  cxla_padding padding) {
    if (!bld_check_list(b, op, "window_dimensions", sizes, rank) ||
        !bld_check_list(b, op, "window_strides", strides, rank))
        return NULL;
    if (!cxla_shape_is_array(x) || x->rank != rank) {
        bld_fail(b, op, "the window has %" PRId64 " dimensions but the operand is %s", rank,
                 bld_shape_str(b, x));
        return NULL;
    }
    if (padding != CXLA_PADDING_VALID && padding != CXLA_PADDING_SAME) {
        bld_fail(b, op, "unknown padding %d", (int)padding);
        return NULL;
    }
    cxla_pad_pair *p =
        cxla_arena_alloc_array(b->module->arena, (size_t)(rank ? rank : 1), sizeof(cxla_pad_pair));
    if (!p) {
        bld_fail_status(b, op, OOM());
        return NULL;
    }
    for (int64_t i = 0; i < rank; i++) {
        if (sizes[i] < 1 || strides[i] < 1) {
            bld_fail(b, op,
                     "window dimension %" PRId64 " has size %" PRId64 " and stride %" PRId64
                     "; both must be >= 1",
                     i, sizes[i], strides[i]);
            return NULL;
        }
        bld_make_padding(x->dims[i], sizes[i], strides[i], padding, &p[i].low, &p[i].high);
    }
    return p;
}

cxla_op cxla_reduce_window_general(cxla_builder *b, const cxla_op *operands,
                                   const cxla_op *init_values, int64_t count,
                                   const cxla_xla_computation *computation,
                                   const int64_t *window_dimensions, const int64_t *window_strides,
                                   const int64_t *base_dilations, const int64_t *window_dilations,
                                   const cxla_pad_pair *padding, int64_t rank) {
    const char *op = "ReduceWindow";
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr **xs, **inits, **all;
    if (!bld_operands(b, op, operands, count, &xs) ||
        !bld_operands(b, op, init_values, count, &inits) ||
        !(all = concat2(b, op, xs, count, inits, count)))
        return bld_invalid(b);
    cxla_attr a[2];
    if (!window_attr(b, op, rank, window_dimensions, window_strides, base_dilations,
                     window_dilations, padding, &a[0]))
        return bld_invalid(b);
    cxla_computation *f = bld_import(b, op, computation);
    if (!f || !bld_attr_comps(b, CXLA_ATTR_TO_APPLY, &f, 1, &a[1])) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_REDUCE_WINDOW, NULL, 2 * count, all, 2, a);
}

cxla_op cxla_reduce_window(cxla_op operand, cxla_op init_value,
                           const cxla_xla_computation *computation,
                           const int64_t *window_dimensions, const int64_t *window_strides,
                           int64_t rank, cxla_padding padding) {
    const char *op = "ReduceWindow";
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, operand, 0);
    if (!in) return bld_invalid(b);
    cxla_pad_pair *p =
        padding_for(b, op, &in->shape, window_dimensions, window_strides, rank, padding);
    if (!p) return bld_invalid(b);
    return cxla_reduce_window_general(b, &operand, &init_value, 1, computation, window_dimensions,
                                      window_strides, NULL, NULL, p, rank);
}

cxla_op cxla_select_and_scatter_with_general_padding(
    cxla_op operand, const cxla_xla_computation *select, const int64_t *window_dimensions,
    const int64_t *window_strides, const cxla_pad_pair *padding, int64_t rank, cxla_op source,
    cxla_op init_value, const cxla_xla_computation *scatter) {
    const char *op = "SelectAndScatter";
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *ins[3];
    if (!(ins[0] = bld_operand(b, op, operand, 0)) || !(ins[1] = bld_operand(b, op, source, 1)) ||
        !(ins[2] = bld_operand(b, op, init_value, 2)))
        return bld_invalid(b);
    cxla_attr a[3];
    if (!window_attr(b, op, rank, window_dimensions, window_strides, NULL, NULL, padding, &a[0]))
        return bld_invalid(b);
    cxla_computation *sel = bld_import(b, op, select);
    cxla_computation *sc = sel ? bld_import(b, op, scatter) : NULL;
    if (!sc || !bld_attr_comps(b, CXLA_ATTR_SELECT, &sel, 1, &a[1]) ||
        !bld_attr_comps(b, CXLA_ATTR_SCATTER, &sc, 1, &a[2]))
        return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_SELECT_AND_SCATTER, NULL, 3, ins, 3, a);
}

cxla_op cxla_select_and_scatter(cxla_op operand, const cxla_xla_computation *select,
                                const int64_t *window_dimensions, const int64_t *window_strides,
                                int64_t rank, cxla_padding padding, cxla_op source,
                                cxla_op init_value, const cxla_xla_computation *scatter) {
    const char *op = "SelectAndScatter";
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, operand, 0);
    if (!in) return bld_invalid(b);
    cxla_pad_pair *p =
        padding_for(b, op, &in->shape, window_dimensions, window_strides, rank, padding);
    if (!p) return bld_invalid(b);
    return cxla_select_and_scatter_with_general_padding(
        operand, select, window_dimensions, window_strides, p, rank, source, init_value, scatter);
}

/* ---- sort and top-k ----------------------------------------------------------------------------
 */

cxla_op cxla_sort(cxla_builder *b, const cxla_op *operands, int64_t count,
                  const cxla_xla_computation *comparator, int64_t dimension, bool is_stable) {
    const char *op = "Sort";
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr **ins;
    if (!bld_operands(b, op, operands, count, &ins)) return bld_invalid(b);
    if (count < 1) {
        bld_fail(b, op, "expects at least one operand");
        return bld_invalid(b);
    }
    if (dimension == -1) dimension = ins[0]->shape.rank - 1;
    cxla_computation *f = bld_import(b, op, comparator);
    if (!f) return bld_invalid(b);
    cxla_attr a[3];
    int n = 0;
    if (!bld_attr_ints(b, CXLA_ATTR_DIMENSIONS, &dimension, 1, &a[n++])) return bld_invalid(b);
    if (is_stable) a[n++] = bld_attr_bool(CXLA_ATTR_IS_STABLE, true);
    if (!bld_attr_comps(b, CXLA_ATTR_TO_APPLY, &f, 1, &a[n++])) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_SORT, NULL, count, ins, n, a);
}

cxla_op cxla_sort_ascending(cxla_op operand) {
    const char *op = "Sort";
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, operand, 0);
    if (!in) return bld_invalid(b);
    if (!cxla_shape_is_array(&in->shape) || in->shape.rank < 1) {
        bld_fail(b, op, "expects an array of rank >= 1, got %s", bld_shape_str(b, &in->shape));
        return bld_invalid(b);
    }
    cxla_xla_computation *lt =
        bld_scalar_binary_computation(b, op, CXLA_OP_COMPARE, in->shape.type);
    if (!lt) return bld_invalid(b);
    cxla_op r = cxla_sort(b, &operand, 1, lt, -1, false);
    cxla_xla_computation_free(lt);
    return r;
}

cxla_op cxla_top_k(cxla_op operand, int64_t k, bool largest) {
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, "TopK", operand, 0);
    if (!in) return bld_invalid(b);
    cxla_attr a[2] = {bld_attr_int(CXLA_ATTR_K, k), bld_attr_bool(CXLA_ATTR_LARGEST, largest)};
    return bld_emit_ops(b, "TopK", CXLA_OP_TOPK, NULL, 1, &in, 2, a);
}

/* (a, b, index_a, index_b) -> comparator(a, b): the comparator of the sort that
 * TopK-with-comparator lowers to, which carries the indices along. */
static cxla_xla_computation *index_comparator(cxla_builder *b, const char *op, cxla_type type,
                                              const cxla_xla_computation *comparator) {
    cxla_builder *sub = NULL;
    cxla_status s = cxla_builder_create_sub_builder(b, "top_k_comparator", &sub);
    if (s) {
        bld_fail_status(b, op, s);
        return NULL;
    }
    cxla_shape t = {.type = type}, i32 = {.type = CXLA_S32};
    cxla_op args[2] = {cxla_parameter(sub, 0, &t, "a"), cxla_parameter(sub, 1, &t, "b")};
    cxla_parameter(sub, 2, &i32, "index_a");
    cxla_parameter(sub, 3, &i32, "index_b");
    cxla_op r = cxla_call(sub, comparator, args, 2);
    cxla_xla_computation *c = NULL;
    s = cxla_builder_build_with_root(sub, r, &c);
    cxla_builder_destroy(sub);
    if (s) {
        bld_fail_status(b, op, cxla_status_annotate(s, "the comparator"));
        return NULL;
    }
    return c;
}

cxla_op cxla_top_k_with_comparator(cxla_op operand, int64_t k,
                                   const cxla_xla_computation *comparator) {
    const char *op = "TopK";
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, operand, 0);
    if (!in) return bld_invalid(b);
    const cxla_shape *x = &in->shape;
    if (!cxla_shape_is_array(x) || x->rank < 1) {
        bld_fail(b, op, "expects an array of rank >= 1, got %s", bld_shape_str(b, x));
        return bld_invalid(b);
    }
    int64_t last = x->rank - 1, n = x->dims[last];
    if (k < 0 || k > n) {
        bld_fail(b, op, "k = %" PRId64 " is out of range for %s (0..%" PRId64 ")", k,
                 bld_shape_str(b, x), n);
        return bld_invalid(b);
    }
    if (!comparator) {
        bld_fail(b, op, "the comparator is NULL");
        return bld_invalid(b);
    }
    cxla_xla_computation *cmp = index_comparator(b, op, x->type, comparator);
    if (!cmp) return bld_invalid(b);
    /* A stable sort of (values, indices) along the last dimension, then the first k of
     * each: equal values keep their index order, the lowest index first. */
    cxla_shape ishape = bld_array_shape(b, CXLA_S32, x->rank, x->dims);
    cxla_op pair[2] = {operand, cxla_iota(b, &ishape, last)};
    cxla_op sorted = cxla_sort(b, pair, 2, cmp, last, true);
    cxla_xla_computation_free(cmp);
    int64_t *start = bld_copy_ints(b, NULL, x->rank), *limit = bld_copy_ints(b, x->dims, x->rank);
    if (!start || !limit) {
        bld_fail_status(b, op, cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
        return bld_invalid(b);
    }
    memset(start, 0, (size_t)x->rank * sizeof(int64_t));
    limit[last] = k;
    cxla_op parts[2];
    for (int i = 0; i < 2; i++)
        parts[i] = cxla_slice(cxla_get_tuple_element(sorted, i), start, limit, NULL, x->rank);
    return cxla_tuple(b, parts, 2);
}

/* ---- gather and scatter ------------------------------------------------------------------------
 */

/* Appends an INTS attribute (skipped when |optional| and empty). */
static bool push_ints(cxla_builder *b, const char *op, cxla_attr *a, int *n, cxla_attr_id id,
                      const int64_t *v, int64_t count, bool optional) {
    if (!bld_check_list(b, op, cxla_attr_get_info(id)->name, v, count)) return false;
    if (optional && count == 0) return true;
    return bld_attr_ints(b, id, v, count, &a[(*n)++]);
}

cxla_op cxla_gather(cxla_op operand, cxla_op start_indices, const cxla_gather_dimension_numbers *dn,
                    const int64_t *slice_sizes, int64_t slice_sizes_count,
                    bool indices_are_sorted) {
    const char *op = "Gather";
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *ins[2];
    if (!(ins[0] = bld_operand(b, op, operand, 0)) ||
        !(ins[1] = bld_operand(b, op, start_indices, 1)))
        return bld_invalid(b);
    if (!dn) {
        bld_fail(b, op, "the dimension numbers are NULL");
        return bld_invalid(b);
    }
    cxla_attr a[8];
    int n = 0;
    if (!push_ints(b, op, a, &n, CXLA_ATTR_OFFSET_DIMS, dn->offset_dims, dn->offset_dims_count,
                   false) ||
        !push_ints(b, op, a, &n, CXLA_ATTR_COLLAPSED_SLICE_DIMS, dn->collapsed_slice_dims,
                   dn->collapsed_slice_dims_count, false) ||
        !push_ints(b, op, a, &n, CXLA_ATTR_START_INDEX_MAP, dn->start_index_map,
                   dn->start_index_map_count, false) ||
        !push_ints(b, op, a, &n, CXLA_ATTR_OPERAND_BATCHING_DIMS, dn->operand_batching_dims,
                   dn->operand_batching_dims_count, true) ||
        !push_ints(b, op, a, &n, CXLA_ATTR_START_INDICES_BATCHING_DIMS,
                   dn->start_indices_batching_dims, dn->start_indices_batching_dims_count, true) ||
        !push_ints(b, op, a, &n, CXLA_ATTR_SLICE_SIZES, slice_sizes, slice_sizes_count, false))
        return bld_invalid(b);
    a[n++] = bld_attr_int(CXLA_ATTR_INDEX_VECTOR_DIM, dn->index_vector_dim);
    if (indices_are_sorted) a[n++] = bld_attr_bool(CXLA_ATTR_INDICES_ARE_SORTED, true);
    return bld_emit_ops(b, op, CXLA_OP_GATHER, NULL, 2, ins, n, a);
}

cxla_op cxla_scatter_variadic(cxla_builder *b, const cxla_op *operands, int64_t count,
                              cxla_op scatter_indices, const cxla_op *updates,
                              const cxla_xla_computation *update_computation,
                              const cxla_scatter_dimension_numbers *dn, bool indices_are_sorted,
                              bool unique_indices) {
    const char *op = "Scatter";
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr **xs, **us, *idx, **all;
    if (!bld_operands(b, op, operands, count, &xs) ||
        !(idx = bld_operand(b, op, scatter_indices, count)) ||
        !bld_operands(b, op, updates, count, &us) || !(all = concat2(b, op, xs, count, &idx, 1)) ||
        !(all = concat2(b, op, all, count + 1, us, count)))
        return bld_invalid(b);
    if (!dn) {
        bld_fail(b, op, "the dimension numbers are NULL");
        return bld_invalid(b);
    }
    cxla_attr a[9];
    int n = 0;
    if (!push_ints(b, op, a, &n, CXLA_ATTR_UPDATE_WINDOW_DIMS, dn->update_window_dims,
                   dn->update_window_dims_count, false) ||
        !push_ints(b, op, a, &n, CXLA_ATTR_INSERTED_WINDOW_DIMS, dn->inserted_window_dims,
                   dn->inserted_window_dims_count, false) ||
        !push_ints(b, op, a, &n, CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS,
                   dn->scatter_dims_to_operand_dims, dn->scatter_dims_to_operand_dims_count,
                   false) ||
        !push_ints(b, op, a, &n, CXLA_ATTR_INPUT_BATCHING_DIMS, dn->input_batching_dims,
                   dn->input_batching_dims_count, true) ||
        !push_ints(b, op, a, &n, CXLA_ATTR_SCATTER_INDICES_BATCHING_DIMS,
                   dn->scatter_indices_batching_dims, dn->scatter_indices_batching_dims_count,
                   true))
        return bld_invalid(b);
    a[n++] = bld_attr_int(CXLA_ATTR_INDEX_VECTOR_DIM, dn->index_vector_dim);
    if (indices_are_sorted) a[n++] = bld_attr_bool(CXLA_ATTR_INDICES_ARE_SORTED, true);
    if (unique_indices) a[n++] = bld_attr_bool(CXLA_ATTR_UNIQUE_INDICES, true);
    cxla_computation *f = bld_import(b, op, update_computation);
    if (!f || !bld_attr_comps(b, CXLA_ATTR_TO_APPLY, &f, 1, &a[n++])) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_SCATTER, NULL, 2 * count + 1, all, n, a);
}

cxla_op cxla_scatter(cxla_op operand, cxla_op scatter_indices, cxla_op updates,
                     const cxla_xla_computation *update_computation,
                     const cxla_scatter_dimension_numbers *dimension_numbers,
                     bool indices_are_sorted, bool unique_indices) {
    return cxla_scatter_variadic(operand.builder, &operand, 1, scatter_indices, &updates,
                                 update_computation, dimension_numbers, indices_are_sorted,
                                 unique_indices);
}
