/* Element-wise operations: unary functions, binary arithmetic and comparisons with XLA's
 * broadcasting rules (explicit broadcast and reshape instructions, as XlaBuilder emits
 * them), select and clamp with scalar broadcasting, map, conversions. */
#include <inttypes.h>
#include <string.h>

#include "builder/builder_internal.h"

/* ---- shared building blocks ------------------------------------------------------------ */

cxla_op bld_reshape(cxla_builder *b, const char *op, cxla_op x, int64_t rank, const int64_t *dims) {
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, x, 0);
    if (!in) return bld_invalid(b);
    cxla_shape s = bld_array_shape(b, in->shape.type, rank, dims);
    return bld_emit_ops(b, op, CXLA_OP_RESHAPE, &s, 1, &in, 0, NULL);
}

/* broadcast(x) to (type of x)[dims] with dimensions=|map|. */
static cxla_op in_dim_broadcast(cxla_builder *b, const char *op, cxla_op x, int64_t rank,
                                const int64_t *dims, const int64_t *map, int64_t map_count) {
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, x, 0);
    if (!in) return bld_invalid(b);
    cxla_shape s = bld_array_shape(b, in->shape.type, rank, dims);
    cxla_attr a;
    if (!bld_attr_ints(b, CXLA_ATTR_DIMENSIONS, map, map_count, &a)) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_BROADCAST, &s, 1, &in, 1, &a);
}

cxla_op bld_broadcast_to(cxla_builder *b, const char *op, cxla_op x, int64_t rank,
                         const int64_t *dims) {
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, x, 0);
    if (!in) return bld_invalid(b);
    const cxla_shape *xs = &in->shape;
    if (xs->rank == 0) return in_dim_broadcast(b, op, x, rank, dims, NULL, 0);
    if (xs->rank != rank) {
        bld_fail(b, op, "cannot broadcast %s to rank %" PRId64, bld_shape_str(b, xs), rank);
        return bld_invalid(b);
    }
    int64_t keep[CXLA_MAX_RANK], kept_dims[CXLA_MAX_RANK], n = 0;
    for (int64_t i = 0; i < rank; i++) {
        if (xs->dims[i] == 1 && dims[i] != 1) continue; /* degenerate: expanded */
        keep[n] = i;
        kept_dims[n++] = xs->dims[i];
    }
    cxla_op r = bld_reshape(b, op, x, n, kept_dims);
    return in_dim_broadcast(b, op, r, rank, dims, keep, n);
}

/* ---- unary ------------------------------------------------------------------------------- */

static cxla_op unary(const char *op, cxla_opcode opcode, cxla_op x) {
    cxla_builder *b = x.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, x, 0);
    if (!in) return bld_invalid(b);
    return bld_emit_ops(b, op, opcode, NULL, 1, &in, 0, NULL);
}

#define UNARY(fn, op, opcode)                                                                      \
    cxla_op cxla_##fn(cxla_op operand) {                                                           \
        return unary(op, CXLA_OP_##opcode, operand);                                               \
    }
UNARY(abs, "Abs", ABS)
UNARY(neg, "Neg", NEGATE)
UNARY(sign, "Sign", SIGN)
UNARY(not, "Not", NOT)
UNARY(logical_not, "LogicalNot", NOT)
UNARY(floor, "Floor", FLOOR)
UNARY(ceil, "Ceil", CEIL)
UNARY(round, "Round", ROUND_NEAREST_AFZ)
UNARY(round_nearest_even, "RoundNearestEven", ROUND_NEAREST_EVEN)
UNARY(exp, "Exp", EXP)
UNARY(expm1, "Expm1", EXPM1)
UNARY(log, "Log", LOG)
UNARY(log1p, "Log1p", LOG1P)
UNARY(logistic, "Logistic", LOGISTIC)
UNARY(sqrt, "Sqrt", SQRT)
UNARY(rsqrt, "Rsqrt", RSQRT)
UNARY(cbrt, "Cbrt", CBRT)
UNARY(sin, "Sin", SIN)
UNARY(cos, "Cos", COS)
UNARY(tan, "Tan", TAN)
UNARY(tanh, "Tanh", TANH)
UNARY(erf, "Erf", ERF)
UNARY(is_finite, "IsFinite", IS_FINITE)
UNARY(population_count, "PopulationCount", POPCNT)
UNARY(clz, "Clz", CLZ)
UNARY(real, "Real", REAL)
UNARY(imag, "Imag", IMAG)
UNARY(acos, "Acos", ACOS)
UNARY(asin, "Asin", ASIN)
UNARY(atan, "Atan", ATAN)
UNARY(acosh, "Acosh", ACOSH)
UNARY(asinh, "Asinh", ASINH)
UNARY(atanh, "Atanh", ATANH)
UNARY(cosh, "Cosh", COSH)
UNARY(sinh, "Sinh", SINH)
UNARY(optimization_barrier, "OptimizationBarrier", OPTIMIZATION_BARRIER)
#undef UNARY

cxla_op cxla_conj(cxla_op operand) {
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, "Conj", operand, 0);
    if (!in) return bld_invalid(b);
    if (!cxla_type_is_complex(in->shape.type)) {
        bld_fail(b, "Conj", "expected a complex operand, got %s", bld_shape_str(b, &in->shape));
        return bld_invalid(b);
    }
    return cxla_complex(cxla_real(operand), cxla_neg(cxla_imag(operand)));
}

/* ---- binary ------------------------------------------------------------------------------ */

static const char *const direction_words[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
static const char *const comparison_words[] = {NULL, "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};

static cxla_comparison_type default_comparison(cxla_type t) {
    if (cxla_type_is_float(t) || cxla_type_is_complex(t)) return CXLA_COMPARISON_FLOAT;
    if (cxla_type_is_signed(t)) return CXLA_COMPARISON_SIGNED;
    return CXLA_COMPARISON_UNSIGNED;
}

/* XLA's BinaryOp: infers the broadcast result dimensions, broadcasts the operands to them
 * explicitly, then emits |opcode|. |direction| >= 0 makes a compare. */
static cxla_op binary(const char *op, cxla_opcode opcode, cxla_op lhs, cxla_op rhs,
                      const int64_t *bd, int64_t nbd, int direction, cxla_comparison_type type,
                      bool total_order) {
    cxla_op pair[2] = {lhs, rhs};
    cxla_builder *b = bld_of(pair, 2);
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *ins[2];
    if (!(ins[0] = bld_operand(b, op, lhs, 0)) || !(ins[1] = bld_operand(b, op, rhs, 1)))
        return bld_invalid(b);
    if (!bld_check_list(b, op, "broadcast_dimensions", bd, nbd)) return bld_invalid(b);
    const cxla_shape *ls = &ins[0]->shape, *rs = &ins[1]->shape;
    cxla_attr attrs[2];
    int nattrs = 0;
    if (direction >= 0) {
        cxla_type t = ls->type;
        if (total_order)
            type = cxla_type_is_float(t) ? CXLA_COMPARISON_TOTALORDER : CXLA_COMPARISON_DEFAULT;
        if ((int)type < 0 || type > CXLA_COMPARISON_UNSIGNED) {
            bld_fail(b, op, "unknown comparison type %d", (int)type);
            return bld_invalid(b);
        }
        attrs[nattrs++] = bld_attr_word(CXLA_ATTR_DIRECTION, direction_words[direction]);
        /* XLA prints the type only when it differs from the element type's default. */
        if (type != CXLA_COMPARISON_DEFAULT && type != default_comparison(t))
            attrs[nattrs++] = bld_attr_word(CXLA_ATTR_COMPARISON_TYPE, comparison_words[type]);
    }
    bool arrays = cxla_shape_is_array(ls) && cxla_shape_is_array(rs);
    if (!arrays || ls->type != rs->type)
        return bld_emit_ops(b, op, opcode, NULL, 2, ins, nattrs, attrs); /* inference reports */
    /* The result dimensions. */
    int64_t dims[CXLA_MAX_RANK], rank;
    bool same_rank = ls->rank == rs->rank;
    const cxla_shape *small = ls->rank < rs->rank ? ls : rs, *large = small == ls ? rs : ls;
    if (same_rank) {
        for (int64_t i = 0; i < nbd; i++)
            if (nbd != ls->rank || bd[i] != i) {
                bld_fail(b, op,
                         "broadcast_dimensions must be empty or the identity for operands of "
                         "the same rank, got %s and %s",
                         bld_shape_str(b, ls), bld_shape_str(b, rs));
                return bld_invalid(b);
            }
        rank = ls->rank;
        for (int64_t i = 0; i < rank; i++) dims[i] = ls->dims[i];
    } else {
        if (nbd == 0 && small->rank != 0) {
            bld_fail(b, op,
                     "shapes must be equal rank, but are %s and %s (give broadcast_dimensions)",
                     bld_shape_str(b, ls), bld_shape_str(b, rs));
            return bld_invalid(b);
        }
        if (nbd != 0 && nbd != small->rank) {
            bld_fail(b, op,
                     "broadcast_dimensions has %" PRId64
                     " entries; it needs one per dimension of the lower-rank operand %s",
                     nbd, bld_shape_str(b, small));
            return bld_invalid(b);
        }
        rank = large->rank;
        for (int64_t i = 0; i < rank; i++) dims[i] = large->dims[i];
        for (int64_t i = 0; i < nbd; i++) {
            if (bd[i] < 0 || bd[i] >= large->rank) {
                bld_fail(b, op, "broadcast dimension %" PRId64 " is out of range for %s", bd[i],
                         bld_shape_str(b, large));
                return bld_invalid(b);
            }
            if (i > 0 && bd[i - 1] >= bd[i]) {
                bld_fail(b, op,
                         "broadcast_dimensions must be strictly increasing, got %" PRId64
                         " after %" PRId64,
                         bd[i], bd[i - 1]);
                return bld_invalid(b);
            }
            int64_t s = small->dims[i], l = large->dims[bd[i]];
            if (s != l && s != 1 && l != 1) {
                bld_fail(b, op,
                         "broadcast dimension %" PRId64 " mismatch: %" PRId64 " != %" PRId64
                         "; %s and %s",
                         i, s, l, bld_shape_str(b, small), bld_shape_str(b, large));
                return bld_invalid(b);
            }
            dims[bd[i]] = s;
        }
    }
    /* Degenerate-dimension broadcasting against the other side. */
    const cxla_shape *other = same_rank ? rs : large;
    for (int64_t i = 0; i < rank; i++) {
        int64_t o = other->dims[i];
        if (dims[i] == o || o == 1) continue;
        if (dims[i] == 1) {
            dims[i] = o;
            continue;
        }
        bld_fail(b, op, "incompatible shapes %s and %s", bld_shape_str(b, ls),
                 bld_shape_str(b, rs));
        return bld_invalid(b);
    }
    cxla_op updated[2] = {lhs, rhs};
    if (nbd > 0 && !same_rank) {
        int k = small == ls ? 0 : 1;
        int64_t to[CXLA_MAX_RANK];
        for (int64_t i = 0; i < rank; i++) to[i] = dims[i];
        for (int64_t i = 0; i < small->rank; i++) to[bd[i]] = small->dims[i];
        updated[k] = in_dim_broadcast(b, op, updated[k], rank, to, bd, nbd);
    }
    for (int k = 0; k < 2; k++) {
        if (!cxla_op_is_valid(updated[k])) return bld_invalid(b);
        const cxla_shape *s = &bld_instr(b, updated[k])->shape;
        bool same = s->rank == rank;
        for (int64_t i = 0; same && i < rank; i++) same = s->dims[i] == dims[i];
        if (!same) updated[k] = bld_broadcast_to(b, op, updated[k], rank, dims);
        if (!cxla_op_is_valid(updated[k])) return bld_invalid(b);
        ins[k] = bld_instr(b, updated[k]);
    }
    return bld_emit_ops(b, op, opcode, NULL, 2, ins, nattrs, attrs);
}

#define BINARY(fn, op, opcode)                                                                     \
    cxla_op cxla_##fn(cxla_op lhs, cxla_op rhs) {                                                  \
        return binary(op, CXLA_OP_##opcode, lhs, rhs, NULL, 0, -1, CXLA_COMPARISON_DEFAULT,        \
                      false);                                                                      \
    }                                                                                              \
    cxla_op cxla_##fn##_bcast(cxla_op lhs, cxla_op rhs, const int64_t *broadcast_dimensions,       \
                              int64_t count) {                                                     \
        return binary(op, CXLA_OP_##opcode, lhs, rhs, broadcast_dimensions, count, -1,             \
                      CXLA_COMPARISON_DEFAULT, false);                                             \
    }
BINARY(add, "Add", ADD)
BINARY(sub, "Sub", SUBTRACT)
BINARY(mul, "Mul", MULTIPLY)
BINARY(div, "Div", DIVIDE)
BINARY(rem, "Rem", REMAINDER)
BINARY(max, "Max", MAXIMUM)
BINARY(min, "Min", MINIMUM)
BINARY(and, "And", AND)
BINARY(or, "Or", OR)
BINARY(xor, "Xor", XOR)
BINARY(logical_and, "LogicalAnd", AND)
BINARY(logical_or, "LogicalOr", OR)
BINARY(pow, "Pow", POWER)
BINARY(atan2, "Atan2", ATAN2)
BINARY(shift_left, "ShiftLeft", SHIFT_LEFT)
BINARY(shift_right_arithmetic, "ShiftRightArithmetic", SHIFT_RIGHT_ARITHMETIC)
BINARY(shift_right_logical, "ShiftRightLogical", SHIFT_RIGHT_LOGICAL)
BINARY(complex, "Complex", COMPLEX)
#undef BINARY

#define COMPARE(fn, op, dir, total)                                                                \
    cxla_op cxla_##fn(cxla_op lhs, cxla_op rhs) {                                                  \
        return binary(op, CXLA_OP_COMPARE, lhs, rhs, NULL, 0, CXLA_COMPARE_##dir,                  \
                      CXLA_COMPARISON_DEFAULT, total);                                             \
    }                                                                                              \
    cxla_op cxla_##fn##_bcast(cxla_op lhs, cxla_op rhs, const int64_t *broadcast_dimensions,       \
                              int64_t count) {                                                     \
        return binary(op, CXLA_OP_COMPARE, lhs, rhs, broadcast_dimensions, count,                  \
                      CXLA_COMPARE_##dir, CXLA_COMPARISON_DEFAULT, total);                         \
    }
COMPARE(eq, "Eq", EQ, false)
COMPARE(ne, "Ne", NE, false)
COMPARE(ge, "Ge", GE, false)
COMPARE(gt, "Gt", GT, false)
COMPARE(le, "Le", LE, false)
COMPARE(lt, "Lt", LT, false)
COMPARE(eq_total_order, "EqTotalOrder", EQ, true)
COMPARE(ne_total_order, "NeTotalOrder", NE, true)
COMPARE(ge_total_order, "GeTotalOrder", GE, true)
COMPARE(gt_total_order, "GtTotalOrder", GT, true)
COMPARE(le_total_order, "LeTotalOrder", LE, true)
COMPARE(lt_total_order, "LtTotalOrder", LT, true)
#undef COMPARE

cxla_op cxla_compare(cxla_op lhs, cxla_op rhs, const int64_t *broadcast_dimensions,
                     int64_t broadcast_dimension_count, cxla_comparison_direction direction,
                     cxla_comparison_type type) {
    if ((int)direction < 0 || direction > CXLA_COMPARE_LT) {
        cxla_op pair[2] = {lhs, rhs};
        cxla_builder *b = bld_of(pair, 2);
        if (bld_ok(b)) bld_fail(b, "Compare", "unknown comparison direction %d", (int)direction);
        return bld_invalid(b);
    }
    return binary("Compare", CXLA_OP_COMPARE, lhs, rhs, broadcast_dimensions,
                  broadcast_dimension_count, (int)direction, type, false);
}

/* ---- select, clamp ------------------------------------------------------------------------- */

/* XLA's TernaryOp: scalar array operands are broadcast to the first non-scalar array's
 * dimensions; then the instruction. */
static cxla_op ternary(const char *op, cxla_opcode opcode, cxla_op x, cxla_op y, cxla_op z) {
    cxla_op ops[3] = {x, y, z};
    cxla_builder *b = bld_of(ops, 3);
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *ins[3];
    for (int k = 0; k < 3; k++)
        if (!(ins[k] = bld_operand(b, op, ops[k], k))) return bld_invalid(b);
    const cxla_shape *big = NULL;
    for (int k = 0; k < 3 && !big; k++)
        if (cxla_shape_is_array(&ins[k]->shape) && ins[k]->shape.rank > 0) big = &ins[k]->shape;
    if (big) {
        int64_t rank = big->rank, dims[CXLA_MAX_RANK];
        for (int64_t i = 0; i < rank; i++) dims[i] = big->dims[i];
        for (int k = 0; k < 3; k++) {
            if (!cxla_shape_is_array(&ins[k]->shape) || ins[k]->shape.rank != 0) continue;
            cxla_op r = bld_broadcast_to(b, op, ops[k], rank, dims);
            if (!cxla_op_is_valid(r)) return bld_invalid(b);
            ins[k] = bld_instr(b, r);
        }
    }
    return bld_emit_ops(b, op, opcode, NULL, 3, ins, 0, NULL);
}

cxla_op cxla_select(cxla_op pred, cxla_op on_true, cxla_op on_false) {
    return ternary("Select", CXLA_OP_SELECT, pred, on_true, on_false);
}

cxla_op cxla_clamp(cxla_op min, cxla_op operand, cxla_op max) {
    return ternary("Clamp", CXLA_OP_CLAMP, min, operand, max);
}

/* ---- map ----------------------------------------------------------------------------------- */

cxla_op cxla_map(cxla_builder *b, const cxla_op *operands, int64_t operand_count,
                 const cxla_xla_computation *computation, const int64_t *dimensions,
                 int64_t dimension_count) {
    const char *op = "Map";
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr **ins;
    if (!bld_operands(b, op, operands, operand_count, &ins) ||
        !bld_check_list(b, op, "dimensions", dimensions, dimension_count))
        return bld_invalid(b);
    if (operand_count < 1) {
        bld_fail(b, op, "expects at least one operand");
        return bld_invalid(b);
    }
    const cxla_shape *big = NULL;
    for (int64_t k = 0; k < operand_count && !big; k++)
        if (cxla_shape_is_array(&ins[k]->shape) && ins[k]->shape.rank > 0) big = &ins[k]->shape;
    if (big) {
        int64_t dims[CXLA_MAX_RANK];
        for (int64_t i = 0; i < big->rank; i++) dims[i] = big->dims[i];
        int64_t rank = big->rank;
        for (int64_t k = 0; k < operand_count; k++) {
            if (!cxla_shape_is_array(&ins[k]->shape) || ins[k]->shape.rank != 0) continue;
            cxla_op r = bld_broadcast_to(b, op, operands[k], rank, dims);
            if (!cxla_op_is_valid(r)) return bld_invalid(b);
            ins[k] = bld_instr(b, r);
        }
    }
    cxla_computation *f = bld_import(b, op, computation);
    if (!f) return bld_invalid(b);
    int64_t all[CXLA_MAX_RANK];
    int64_t rank = ins[0]->shape.rank;
    if (dimension_count == 0 && rank > 0 && rank <= CXLA_MAX_RANK) {
        for (int64_t i = 0; i < rank; i++) all[i] = i;
        dimensions = all;
        dimension_count = rank;
    }
    cxla_attr attrs[2];
    if (!bld_attr_ints(b, CXLA_ATTR_DIMENSIONS, dimensions, dimension_count, &attrs[0]) ||
        !bld_attr_comps(b, CXLA_ATTR_TO_APPLY, &f, 1, &attrs[1]))
        return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_MAP, NULL, operand_count, ins, 2, attrs);
}

/* ---- conversions ---------------------------------------------------------------------------- */

static cxla_op convert(const char *op, cxla_opcode opcode, cxla_op x, cxla_type type) {
    cxla_builder *b = x.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, x, 0);
    if (!in) return bld_invalid(b);
    if ((int)type <= CXLA_TYPE_INVALID || type >= CXLA_TYPE_COUNT) {
        bld_fail(b, op, "invalid element type %d", (int)type);
        return bld_invalid(b);
    }
    cxla_shape s = {.type = type};
    return bld_emit_ops(b, op, opcode, &s, 1, &in, 0, NULL);
}

cxla_op cxla_convert_element_type(cxla_op operand, cxla_type new_element_type) {
    return convert("ConvertElementType", CXLA_OP_CONVERT, operand, new_element_type);
}

cxla_op cxla_bitcast_convert_type(cxla_op operand, cxla_type new_element_type) {
    return convert("BitcastConvertType", CXLA_OP_BITCAST_CONVERT, operand, new_element_type);
}

cxla_op cxla_reduce_precision(cxla_op operand, int64_t exponent_bits, int64_t mantissa_bits) {
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, "ReducePrecision", operand, 0);
    if (!in) return bld_invalid(b);
    cxla_attr a[2] = {bld_attr_int(CXLA_ATTR_EXPONENT_BITS, exponent_bits),
                      bld_attr_int(CXLA_ATTR_MANTISSA_BITS, mantissa_bits)};
    return bld_emit_ops(b, "ReducePrecision", CXLA_OP_REDUCE_PRECISION, NULL, 1, &in, 2, a);
}
