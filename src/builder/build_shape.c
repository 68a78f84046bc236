/* Leaves (parameters, constants, iota, ids, tokens) and shape manipulation (broadcast,
 * reshape, collapse, transpose, rev, slices, concatenate, pad, tuples, dynamic sizes). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builder/builder_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in the builder")

/* The instruction of a single-operand op, or NULL (error recorded / builder failed). */
static cxla_instr *one(const char *op, cxla_op x) {
    cxla_builder *b = x.builder;
    if (!bld_ok(b)) return NULL;
    return bld_operand(b, op, x, 0);
}

/* ---- parameters and constants ----------------------------------------------------------- */

cxla_op cxla_parameter(cxla_builder *b, int64_t number, const cxla_shape *shape, const char *name) {
    const char *op = "Parameter";
    if (!bld_ok(b)) return bld_invalid(b);
    if (!shape) {
        bld_fail(b, op, "parameter %" PRId64 ": the shape is NULL", number);
        return bld_invalid(b);
    }
    if (number < 0) {
        bld_fail(b, op, "parameter number %" PRId64 " is negative", number);
        return bld_invalid(b);
    }
    if (number < b->param_capacity && b->params[number]) {
        bld_fail(b, op, "parameter number %" PRId64 " is already used by '%s'", number,
                 b->params[number]->name);
        return bld_invalid(b);
    }
    char prefix[128];
    const char *src = name && name[0] ? name : "parameter";
    size_t n = strlen(src);
    if (n > sizeof(prefix) - 1) n = sizeof(prefix) - 1;
    for (size_t i = 0; i < n; i++) {
        char c = src[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.';
        prefix[i] = ok ? c : '_';
    }
    prefix[n] = 0;
    if (number >= b->param_capacity) {
        int64_t cap = b->param_capacity ? b->param_capacity : 8;
        while (cap <= number) {
            if (cap > INT32_MAX) {
                bld_fail(b, op, "parameter number %" PRId64 " is too large", number);
                return bld_invalid(b);
            }
            cap *= 2;
        }
        cxla_instr **p = realloc(b->params, (size_t)cap * sizeof(*p));
        if (!p) {
            bld_fail_status(b, op, OOM());
            return bld_invalid(b);
        }
        for (int64_t i = b->param_capacity; i < cap; i++) p[i] = NULL;
        b->params = p;
        b->param_capacity = cap;
    }
    bld_spec spec = {
        .opcode = CXLA_OP_PARAMETER, .shape = shape, .parameter_number = number, .name = prefix};
    cxla_op r = bld_emit(b, op, &spec);
    if (cxla_op_is_valid(r)) b->params[number] = bld_instr(b, r);
    return r;
}

/* Emits a constant that takes ownership of |lit|. */
static cxla_op constant_owned(cxla_builder *b, const char *op, cxla_literal *lit) {
    cxla_status s = cxla_module_adopt_literal(b->module, lit);
    if (s) {
        bld_fail_status(b, op, s);
        return bld_invalid(b);
    }
    cxla_shape shape = *cxla_literal_shape(lit);
    shape.layout = NULL; /* the default layout, not printed */
    bld_spec spec = {.opcode = CXLA_OP_CONSTANT, .shape = &shape, .literal = lit};
    return bld_emit(b, op, &spec);
}

cxla_op cxla_constant_literal(cxla_builder *b, const cxla_literal *literal) {
    const char *op = "ConstantLiteral";
    if (!bld_ok(b)) return bld_invalid(b);
    if (!literal) {
        bld_fail(b, op, "the literal is NULL");
        return bld_invalid(b);
    }
    cxla_literal *lit;
    cxla_status s = cxla_literal_relayout(literal, NULL, &lit);
    if (s && cxla_literal_shape(literal)->type == CXLA_TUPLE) {
        cxla_status_free(s);
        s = cxla_literal_clone(literal, &lit);
    }
    if (s) {
        bld_fail_status(b, op, s);
        return bld_invalid(b);
    }
    return constant_owned(b, op, lit);
}

static cxla_op scalar_constant(cxla_builder *b, const char *op, cxla_type type, double value) {
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_literal *lit;
    cxla_status s = cxla_literal_create_scalar(type, value, &lit);
    if (s) {
        bld_fail_status(b, op, s);
        return bld_invalid(b);
    }
    return constant_owned(b, op, lit);
}

cxla_op cxla_constant_r0(cxla_builder *b, cxla_type type, double value) {
    return scalar_constant(b, "ConstantR0", type, value);
}

cxla_op cxla_constant_array(cxla_builder *b, cxla_type type, int64_t rank, const int64_t *dims,
                            const void *data) {
    const char *op = "ConstantArray";
    if (!bld_ok(b)) return bld_invalid(b);
    if (!bld_check_list(b, op, "dims", dims, rank)) return bld_invalid(b);
    cxla_shape shape = {.type = type, .rank = rank, .dims = (int64_t *)dims};
    cxla_literal *lit;
    cxla_status s = cxla_shape_is_array(&shape)
                        ? cxla_literal_create(&shape, &lit)
                        : cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s is not an array type",
                                     cxla_type_name(type));
    if (s) {
        bld_fail_status(b, op, s);
        return bld_invalid(b);
    }
    size_t bytes = cxla_literal_byte_size(lit);
    if (bytes > 0) {
        if (!data) {
            cxla_literal_free(lit);
            bld_fail(b, op, "the data is NULL");
            return bld_invalid(b);
        }
        memcpy(cxla_literal_data(lit), data, bytes);
    }
    return constant_owned(b, op, lit);
}

cxla_op cxla_constant_f32(cxla_builder *b, int64_t rank, const int64_t *dims, const float *values) {
    return cxla_constant_array(b, CXLA_F32, rank, dims, values);
}

cxla_op cxla_constant_s32(cxla_builder *b, int64_t rank, const int64_t *dims,
                          const int32_t *values) {
    return cxla_constant_array(b, CXLA_S32, rank, dims, values);
}

cxla_op cxla_zero(cxla_builder *b, cxla_type type) {
    return scalar_constant(b, "Zero", type, 0.0);
}

cxla_op cxla_one(cxla_builder *b, cxla_type type) {
    return scalar_constant(b, "One", type, 1.0);
}

/* The extreme value of |type| (|high| picks the top) into a new scalar literal. */
static cxla_status extreme(cxla_type type, bool high, cxla_literal **out) {
    if (cxla_type_is_complex(type) || !cxla_type_is_array(type))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s has no %s value", cxla_type_name(type),
                          high ? "highest" : "lowest");
    CXLA_RETURN_IF_ERROR(cxla_literal_create_scalar(type, 0.0, out));
    cxla_status s = NULL;
    const cxla_type_info *info = cxla_type_get_info(type);
    int bits = cxla_type_bits(type);
    if (type == CXLA_PRED) {
        s = cxla_literal_set_s64(*out, NULL, high ? 1 : 0);
    } else if (cxla_type_is_signed(type)) {
        int64_t hi = bits >= 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
        s = cxla_literal_set_s64(*out, NULL, high ? hi : -hi - 1);
    } else if (cxla_type_is_unsigned(type)) {
        uint64_t hi = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
        s = cxla_literal_set_u64(*out, NULL, high ? hi : 0);
    } else if (info->float_kind == CXLA_FLOAT_IEEE) {
        s = cxla_literal_set_f64(*out, NULL, high ? INFINITY : -INFINITY);
    } else {
        /* No infinity: the extreme finite value, found among the (at most 256) codes. */
        double best = high ? -INFINITY : INFINITY;
        for (uint32_t code = 0; code < (UINT32_C(1) << bits); code++) {
            double v = cxla_float_to_double(type, code);
            if (isfinite(v) && (high ? v > best : v < best)) best = v;
        }
        s = cxla_literal_set_f64(*out, NULL, best);
    }
    if (s) {
        cxla_literal_free(*out);
        *out = NULL;
    }
    return s;
}

static cxla_op extreme_constant(cxla_builder *b, const char *op, cxla_type type, bool high) {
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_literal *lit;
    cxla_status s = extreme(type, high, &lit);
    if (s) {
        bld_fail_status(b, op, s);
        return bld_invalid(b);
    }
    return constant_owned(b, op, lit);
}

cxla_op cxla_min_value(cxla_builder *b, cxla_type type) {
    return extreme_constant(b, "MinValue", type, false);
}

cxla_op cxla_max_value(cxla_builder *b, cxla_type type) {
    return extreme_constant(b, "MaxValue", type, true);
}

/* ---- other leaves ------------------------------------------------------------------------- */

cxla_op cxla_iota(cxla_builder *b, const cxla_shape *shape, int64_t iota_dimension) {
    if (!bld_ok(b)) return bld_invalid(b);
    if (!shape) {
        bld_fail(b, "Iota", "the shape is NULL");
        return bld_invalid(b);
    }
    cxla_attr a = bld_attr_int(CXLA_ATTR_IOTA_DIMENSION, iota_dimension);
    return bld_emit_ops(b, "Iota", CXLA_OP_IOTA, shape, 0, NULL, 1, &a);
}

cxla_op cxla_iota_1d(cxla_builder *b, cxla_type type, int64_t size) {
    cxla_shape s = {.type = type, .rank = 1, .dims = &size};
    return cxla_iota(b, &s, 0);
}

cxla_op cxla_replica_id(cxla_builder *b) {
    return bld_emit_ops(b, "ReplicaId", CXLA_OP_REPLICA_ID, NULL, 0, NULL, 0, NULL);
}

cxla_op cxla_partition_id(cxla_builder *b) {
    return bld_emit_ops(b, "PartitionId", CXLA_OP_PARTITION_ID, NULL, 0, NULL, 0, NULL);
}

cxla_op cxla_create_token(cxla_builder *b) {
    return bld_emit_ops(b, "CreateToken", CXLA_OP_AFTER_ALL, NULL, 0, NULL, 0, NULL);
}

cxla_op cxla_after_all(cxla_builder *b, const cxla_op *tokens, int64_t count) {
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr **ins;
    if (!bld_operands(b, "AfterAll", tokens, count, &ins)) return bld_invalid(b);
    for (int64_t i = 0; i < count; i++)
        if (ins[i]->shape.type != CXLA_TOKEN) {
            bld_fail(b, "AfterAll", "operand %" PRId64 " must be a token, got %s", i,
                     bld_shape_str(b, &ins[i]->shape));
            return bld_invalid(b);
        }
    return bld_emit_ops(b, "AfterAll", CXLA_OP_AFTER_ALL, NULL, count, ins, 0, NULL);
}

/* ---- broadcast and reshape ----------------------------------------------------------------- */

cxla_op cxla_broadcast(cxla_op operand, const int64_t *sizes, int64_t count) {
    const char *op = "Broadcast";
    cxla_builder *b = operand.builder;
    cxla_instr *in = one(op, operand);
    if (!in || !bld_check_list(b, op, "broadcast_sizes", sizes, count)) return bld_invalid(b);
    const cxla_shape *x = &in->shape;
    if (!cxla_shape_is_array(x) || count + x->rank > CXLA_MAX_RANK) {
        bld_fail(b, op, "cannot broadcast %s by %" PRId64 " dimensions", bld_shape_str(b, x),
                 count);
        return bld_invalid(b);
    }
    int64_t dims[CXLA_MAX_RANK], map[CXLA_MAX_RANK];
    for (int64_t i = 0; i < count; i++) dims[i] = sizes[i];
    for (int64_t i = 0; i < x->rank; i++) {
        dims[count + i] = x->dims[i];
        map[i] = count + i;
    }
    cxla_shape s = bld_array_shape(b, x->type, count + x->rank, dims);
    cxla_attr a;
    if (!bld_attr_ints(b, CXLA_ATTR_DIMENSIONS, map, x->rank, &a)) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_BROADCAST, &s, 1, &in, 1, &a);
}

cxla_op cxla_broadcast_in_dim(cxla_op operand, const int64_t *out_dims, int64_t out_rank,
                              const int64_t *bdims, int64_t bcount) {
    const char *op = "BroadcastInDim";
    cxla_builder *b = operand.builder;
    cxla_instr *in = one(op, operand);
    if (!in || !bld_check_list(b, op, "out_dim_size", out_dims, out_rank) ||
        !bld_check_list(b, op, "broadcast_dimensions", bdims, bcount))
        return bld_invalid(b);
    const cxla_shape *x = &in->shape;
    if (!cxla_shape_is_array(x) || out_rank > CXLA_MAX_RANK) {
        bld_fail(b, op, "cannot broadcast %s to rank %" PRId64, bld_shape_str(b, x), out_rank);
        return bld_invalid(b);
    }
    if (bcount != x->rank) {
        bld_fail(b, op,
                 "broadcast_dimensions has %" PRId64 " entries for the %" PRId64
                 " dimensions of %s",
                 bcount, x->rank, bld_shape_str(b, x));
        return bld_invalid(b);
    }
    int64_t mid[CXLA_MAX_RANK];
    for (int64_t i = 0; i < out_rank; i++) {
        if (out_dims[i] < 0) {
            bld_fail(b, op, "output dimension %" PRId64 " has negative size %" PRId64, i,
                     out_dims[i]);
            return bld_invalid(b);
        }
        mid[i] = out_dims[i];
    }
    bool degenerate = false;
    for (int64_t i = 0; i < bcount; i++) {
        int64_t d = bdims[i];
        if (d < 0 || d >= out_rank) {
            bld_fail(b, op, "broadcast dimension %" PRId64 " is out of range for rank %" PRId64, d,
                     out_rank);
            return bld_invalid(b);
        }
        if (i > 0 && bdims[i - 1] >= d) {
            bld_fail(b, op,
                     "broadcast_dimensions must be strictly increasing, got %" PRId64
                     " after %" PRId64,
                     d, bdims[i - 1]);
            return bld_invalid(b);
        }
        if (x->dims[i] != out_dims[d] && x->dims[i] != 1) {
            bld_fail(b, op,
                     "operand dimension %" PRId64 " of %s has size %" PRId64
                     "; it must be 1 or the output size %" PRId64,
                     i, bld_shape_str(b, x), x->dims[i], out_dims[d]);
            return bld_invalid(b);
        }
        mid[d] = x->dims[i];
        degenerate = degenerate || x->dims[i] != out_dims[d];
    }
    cxla_shape s = bld_array_shape(b, x->type, out_rank, mid);
    cxla_attr a;
    if (!bld_attr_ints(b, CXLA_ATTR_DIMENSIONS, bdims, bcount, &a)) return bld_invalid(b);
    cxla_op r = bld_emit_ops(b, op, CXLA_OP_BROADCAST, &s, 1, &in, 1, &a);
    if (!degenerate || !cxla_op_is_valid(r)) return r;
    return bld_broadcast_to(b, op, r, out_rank, out_dims);
}

cxla_op cxla_reshape(cxla_op operand, const int64_t *new_sizes, int64_t rank) {
    cxla_builder *b = operand.builder;
    if (!one("Reshape", operand) || !bld_check_list(b, "Reshape", "new_sizes", new_sizes, rank))
        return bld_invalid(b);
    return bld_reshape(b, "Reshape", operand, rank, new_sizes);
}

cxla_op cxla_reshape_with_order(cxla_op operand, const int64_t *dimensions, int64_t dimension_count,
                                const int64_t *new_sizes, int64_t rank) {
    const char *op = "Reshape";
    cxla_builder *b = operand.builder;
    if (!one(op, operand) || !bld_check_list(b, op, "dimensions", dimensions, dimension_count) ||
        !bld_check_list(b, op, "new_sizes", new_sizes, rank))
        return bld_invalid(b);
    bool identity = true;
    for (int64_t i = 0; i < dimension_count; i++) identity = identity && dimensions[i] == i;
    cxla_op x = operand;
    if (!identity) x = cxla_transpose(operand, dimensions, dimension_count);
    if (!cxla_op_is_valid(x)) return bld_invalid(b);
    return bld_reshape(b, op, x, rank, new_sizes);
}

cxla_op cxla_collapse(cxla_op operand, const int64_t *dimensions, int64_t count) {
    const char *op = "Collapse";
    cxla_builder *b = operand.builder;
    cxla_instr *in = one(op, operand);
    if (!in || !bld_check_list(b, op, "dimensions", dimensions, count)) return bld_invalid(b);
    const cxla_shape *x = &in->shape;
    if (count <= 1) return operand; /* nothing to collapse (XLA returns the operand) */
    for (int64_t i = 0; i < count; i++) {
        if (dimensions[i] < 0 || dimensions[i] >= x->rank) {
            bld_fail(b, op, "dimension %" PRId64 " is out of range for %s", dimensions[i],
                     bld_shape_str(b, x));
            return bld_invalid(b);
        }
        if (i > 0 && dimensions[i] != dimensions[i - 1] + 1) {
            bld_fail(b, op,
                     "the collapsed dimensions must be consecutive and in order, got %" PRId64
                     " after %" PRId64,
                     dimensions[i], dimensions[i - 1]);
            return bld_invalid(b);
        }
    }
    int64_t dims[CXLA_MAX_RANK], n = 0, product = 1;
    for (int64_t i = 0; i < dimensions[0]; i++) dims[n++] = x->dims[i];
    for (int64_t i = 0; i < count; i++) product *= x->dims[dimensions[i]];
    dims[n++] = product;
    for (int64_t i = dimensions[count - 1] + 1; i < x->rank; i++) dims[n++] = x->dims[i];
    return bld_reshape(b, op, operand, n, dims);
}

/* ---- transpose, rev, slices ------------------------------------------------------------------ */

static cxla_op with_ints(const char *op, cxla_opcode opcode, cxla_op operand, cxla_attr_id id,
                         const int64_t *values, int64_t count) {
    cxla_builder *b = operand.builder;
    cxla_instr *in = one(op, operand);
    if (!in || !bld_check_list(b, op, "dimensions", values, count)) return bld_invalid(b);
    cxla_attr a;
    if (!bld_attr_ints(b, id, values, count, &a)) return bld_invalid(b);
    return bld_emit_ops(b, op, opcode, NULL, 1, &in, 1, &a);
}

cxla_op cxla_transpose(cxla_op operand, const int64_t *permutation, int64_t count) {
    return with_ints("Transpose", CXLA_OP_TRANSPOSE, operand, CXLA_ATTR_DIMENSIONS, permutation,
                     count);
}

cxla_op cxla_rev(cxla_op operand, const int64_t *dimensions, int64_t count) {
    return with_ints("Rev", CXLA_OP_REVERSE, operand, CXLA_ATTR_DIMENSIONS, dimensions, count);
}

cxla_op cxla_slice(cxla_op operand, const int64_t *start, const int64_t *limit,
                   const int64_t *strides, int64_t rank) {
    const char *op = "Slice";
    cxla_builder *b = operand.builder;
    cxla_instr *in = one(op, operand);
    if (!in || !bld_check_list(b, op, "start_indices", start, rank) ||
        !bld_check_list(b, op, "limit_indices", limit, rank))
        return bld_invalid(b);
    cxla_attr a = bld_attr(CXLA_ATTR_SLICE);
    a.v.slice.rank = rank;
    a.v.slice.dims =
        cxla_arena_alloc_array(b->module->arena, (size_t)(rank ? rank : 1), sizeof(cxla_slice_dim));
    if (!a.v.slice.dims) {
        bld_fail_status(b, op, OOM());
        return bld_invalid(b);
    }
    for (int64_t i = 0; i < rank; i++)
        a.v.slice.dims[i] = (cxla_slice_dim){start[i], limit[i], strides ? strides[i] : 1};
    return bld_emit_ops(b, op, CXLA_OP_SLICE, NULL, 1, &in, 1, &a);
}

cxla_op cxla_slice_in_dim(cxla_op operand, int64_t start_index, int64_t limit_index, int64_t stride,
                          int64_t dimension) {
    const char *op = "SliceInDim";
    cxla_builder *b = operand.builder;
    cxla_instr *in = one(op, operand);
    if (!in) return bld_invalid(b);
    const cxla_shape *x = &in->shape;
    if (!cxla_shape_is_array(x) || dimension < 0 || dimension >= x->rank) {
        bld_fail(b, op, "dimension %" PRId64 " is out of range for %s", dimension,
                 bld_shape_str(b, x));
        return bld_invalid(b);
    }
    int64_t start[CXLA_MAX_RANK], limit[CXLA_MAX_RANK], strides[CXLA_MAX_RANK];
    for (int64_t i = 0; i < x->rank; i++) {
        start[i] = 0;
        limit[i] = x->dims[i];
        strides[i] = 1;
    }
    start[dimension] = start_index;
    limit[dimension] = limit_index;
    strides[dimension] = stride;
    return cxla_slice(operand, start, limit, strides, x->rank);
}

cxla_op cxla_dynamic_slice(cxla_op operand, const cxla_op *start_indices, int64_t index_count,
                           const int64_t *slice_sizes, int64_t size_count) {
    const char *op = "DynamicSlice";
    cxla_builder *b = operand.builder;
    cxla_instr *in = one(op, operand), **idx;
    if (!in || !bld_operands(b, op, start_indices, index_count, &idx) ||
        !bld_check_list(b, op, "slice_sizes", slice_sizes, size_count))
        return bld_invalid(b);
    cxla_instr **ins =
        cxla_arena_alloc_array(b->module->arena, (size_t)index_count + 1, sizeof(cxla_instr *));
    if (!ins) {
        bld_fail_status(b, op, OOM());
        return bld_invalid(b);
    }
    ins[0] = in;
    for (int64_t i = 0; i < index_count; i++) ins[i + 1] = idx[i];
    cxla_attr a;
    if (!bld_attr_ints(b, CXLA_ATTR_DYNAMIC_SLICE_SIZES, slice_sizes, size_count, &a))
        return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_DYNAMIC_SLICE, NULL, index_count + 1, ins, 1, &a);
}

/* Splits a rank-1 index vector into scalars (slice + reshape each), as XLA's builder does
 * for the deprecated vector forms. */
static bool split_indices(cxla_builder *b, const char *op, cxla_op vector, int64_t want,
                          cxla_op *out) {
    cxla_instr *v = bld_operand(b, op, vector, 1);
    if (!v) return false;
    if (!cxla_shape_is_array(&v->shape) || v->shape.rank != 1 || v->shape.dims[0] != want) {
        bld_fail(b, op, "start_indices must be a vector of %" PRId64 " integers, got %s", want,
                 bld_shape_str(b, &v->shape));
        return false;
    }
    for (int64_t i = 0; i < want; i++) {
        int64_t s = i, l = i + 1, st = 1;
        out[i] = bld_reshape(b, op, cxla_slice(vector, &s, &l, &st, 1), 0, NULL);
        if (!cxla_op_is_valid(out[i])) return false;
    }
    return true;
}

cxla_op cxla_dynamic_slice_vector(cxla_op operand, cxla_op start_indices,
                                  const int64_t *slice_sizes, int64_t size_count) {
    const char *op = "DynamicSlice";
    cxla_builder *b = operand.builder;
    cxla_instr *in = one(op, operand);
    cxla_op idx[CXLA_MAX_RANK];
    if (!in || !split_indices(b, op, start_indices, in->shape.rank, idx)) return bld_invalid(b);
    return cxla_dynamic_slice(operand, idx, in->shape.rank, slice_sizes, size_count);
}

cxla_op cxla_dynamic_update_slice(cxla_op operand, cxla_op update, const cxla_op *start_indices,
                                  int64_t index_count) {
    const char *op = "DynamicUpdateSlice";
    cxla_builder *b = operand.builder;
    cxla_instr *in = one(op, operand), *up, **idx;
    if (!in || !(up = bld_operand(b, op, update, 1)) ||
        !bld_operands(b, op, start_indices, index_count, &idx))
        return bld_invalid(b);
    cxla_instr **ins =
        cxla_arena_alloc_array(b->module->arena, (size_t)index_count + 2, sizeof(cxla_instr *));
    if (!ins) {
        bld_fail_status(b, op, OOM());
        return bld_invalid(b);
    }
    ins[0] = in;
    ins[1] = up;
    for (int64_t i = 0; i < index_count; i++) ins[i + 2] = idx[i];
    return bld_emit_ops(b, op, CXLA_OP_DYNAMIC_UPDATE_SLICE, NULL, index_count + 2, ins, 0, NULL);
}

cxla_op cxla_dynamic_update_slice_vector(cxla_op operand, cxla_op update, cxla_op start_indices) {
    const char *op = "DynamicUpdateSlice";
    cxla_builder *b = operand.builder;
    cxla_instr *in = one(op, operand);
    cxla_op idx[CXLA_MAX_RANK];
    if (!in || !split_indices(b, op, start_indices, in->shape.rank, idx)) return bld_invalid(b);
    return cxla_dynamic_update_slice(operand, update, idx, in->shape.rank);
}

/* ---- concatenate, pad, tuples, dynamic sizes ---------------------------------------------------
 */

cxla_op cxla_concatenate(cxla_builder *b, const cxla_op *operands, int64_t count,
                         int64_t dimension) {
    return cxla_concat_in_dim(b, operands, count, dimension);
}

cxla_op cxla_concat_in_dim(cxla_builder *b, const cxla_op *operands, int64_t count,
                           int64_t dimension) {
    const char *op = "ConcatInDim";
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr **ins;
    if (!bld_operands(b, op, operands, count, &ins)) return bld_invalid(b);
    cxla_attr a;
    if (!bld_attr_ints(b, CXLA_ATTR_DIMENSIONS, &dimension, 1, &a)) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_CONCATENATE, NULL, count, ins, 1, &a);
}

cxla_op cxla_pad(cxla_op operand, cxla_op padding_value, const cxla_padding_config_dim *config,
                 int64_t rank) {
    const char *op = "Pad";
    cxla_builder *b = operand.builder;
    cxla_instr *ins[2];
    if (!(ins[0] = one(op, operand)) || !(ins[1] = bld_operand(b, op, padding_value, 1)) ||
        !bld_check_list(b, op, "padding_config", config, rank))
        return bld_invalid(b);
    cxla_attr a = bld_attr(CXLA_ATTR_PADDING);
    a.v.padding.rank = rank;
    a.v.padding.dims =
        cxla_arena_alloc_array(b->module->arena, (size_t)(rank ? rank : 1), sizeof(cxla_pad_dim));
    if (!a.v.padding.dims) {
        bld_fail_status(b, op, OOM());
        return bld_invalid(b);
    }
    for (int64_t i = 0; i < rank; i++)
        a.v.padding.dims[i] = (cxla_pad_dim){
            config[i].edge_padding_low, config[i].edge_padding_high, config[i].interior_padding};
    return bld_emit_ops(b, op, CXLA_OP_PAD, NULL, 2, ins, 1, &a);
}

cxla_op cxla_pad_in_dim(cxla_op operand, cxla_op padding_value, int64_t dimension, int64_t low,
                        int64_t high) {
    const char *op = "PadInDim";
    cxla_builder *b = operand.builder;
    cxla_instr *in = one(op, operand);
    if (!in) return bld_invalid(b);
    int64_t rank = in->shape.rank;
    if (!cxla_shape_is_array(&in->shape) || dimension < 0 || dimension >= rank) {
        bld_fail(b, op, "dimension %" PRId64 " is out of range for %s", dimension,
                 bld_shape_str(b, &in->shape));
        return bld_invalid(b);
    }
    cxla_padding_config_dim config[CXLA_MAX_RANK];
    memset(config, 0, sizeof(config));
    config[dimension].edge_padding_low = low;
    config[dimension].edge_padding_high = high;
    return cxla_pad(operand, padding_value, config, rank);
}

cxla_op cxla_tuple(cxla_builder *b, const cxla_op *elements, int64_t count) {
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr **ins;
    if (!bld_operands(b, "Tuple", elements, count, &ins)) return bld_invalid(b);
    return bld_emit_ops(b, "Tuple", CXLA_OP_TUPLE, NULL, count, ins, 0, NULL);
}

cxla_op cxla_get_tuple_element(cxla_op tuple, int64_t index) {
    cxla_builder *b = tuple.builder;
    cxla_instr *in = one("GetTupleElement", tuple);
    if (!in) return bld_invalid(b);
    cxla_attr a = bld_attr_int(CXLA_ATTR_INDEX, index);
    return bld_emit_ops(b, "GetTupleElement", CXLA_OP_GET_TUPLE_ELEMENT, NULL, 1, &in, 1, &a);
}

cxla_op cxla_get_dimension_size(cxla_op operand, int64_t dimension) {
    return with_ints("GetDimensionSize", CXLA_OP_GET_DIMENSION_SIZE, operand, CXLA_ATTR_DIMENSIONS,
                     &dimension, 1);
}

cxla_op cxla_set_dimension_size(cxla_op operand, cxla_op size, int64_t dimension) {
    const char *op = "SetDimensionSize";
    cxla_builder *b = operand.builder;
    cxla_instr *ins[2];
    if (!(ins[0] = one(op, operand)) || !(ins[1] = bld_operand(b, op, size, 1)))
        return bld_invalid(b);
    cxla_attr a;
    if (!bld_attr_ints(b, CXLA_ATTR_DIMENSIONS, &dimension, 1, &a)) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_SET_DIMENSION_SIZE, NULL, 2, ins, 1, &a);
}
