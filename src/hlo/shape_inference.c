/* Shape inference: the per-opcode table and the handlers of the leaves, the elementwise
 * operations and the shape manipulations. Reductions, gathers and sorting live in
 * infer_reduce.c; dot, convolution and linear algebra in infer_linalg.c; control flow,
 * side effects and async wrappers in infer_control.c; collectives in infer_collective.c;
 * shared helpers in infer_util.c. The rules follow XLA's ShapeInference and HloVerifier
 * (xla/service/shape_inference.cc, hlo_verifier.cc); docs/hlo.md lists the choices. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/infer_internal.h"
#include "shape/shape_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in shape inference")

static bool unbounded_at(const cxla_shape *s, int64_t i) {
    return s->dims[i] == CXLA_DIM_UNBOUNDED;
}

/* ---- leaves ---------------------------------------------------------------------- */

static cxla_status declared(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    cxla_status s = cxla_shape_validate(&in->shape);
    if (s) {
        cxla_status e = cxla_infer_fail(in, "invalid declared shape: %s", cxla_status_message(s));
        cxla_status_free(s);
        return e;
    }
    return cxla_infer_copy(arena, &in->shape, out);
}

static cxla_status infer_parameter(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    if (in->parameter_number < 0)
        return cxla_infer_fail(in, "parameter number %" PRId64 " is negative",
                               in->parameter_number);
    return declared(in, arena, out);
}

static cxla_status infer_constant(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    CXLA_RETURN_IF_ERROR(declared(in, arena, out));
    if (!in->literal) {
        if (in->literal_elided) return NULL;
        return cxla_infer_fail(in, "a constant needs a literal");
    }
    const cxla_shape *ls = cxla_literal_shape(in->literal);
    if (!cxla_infer_compatible(ls, &in->shape))
        return cxla_infer_fail(in, "the literal has shape %s but the constant is declared %s",
                               STR(ls), STR(&in->shape));
    return NULL;
}

static cxla_status infer_iota(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    CXLA_RETURN_IF_ERROR(declared(in, arena, out));
    const cxla_shape *s = &in->shape;
    if (!cxla_infer_is_array(s) || s->rank == 0)
        return cxla_infer_fail(in, "the result must be an array of rank >= 1, got %s", STR(s));
    cxla_type t = s->type;
    if (!cxla_type_is_integer(t) && !cxla_type_is_float(t) && !cxla_type_is_complex(t))
        return cxla_infer_fail(in,
                               "the element type must be an integer, float or complex type, "
                               "got %s",
                               STR(s));
    int64_t d;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_int(in, CXLA_ATTR_IOTA_DIMENSION, &d));
    if (d < 0 || d >= s->rank)
        return cxla_infer_fail(in, "iota_dimension=%" PRId64 " is out of range for %s", d, STR(s));
    return NULL;
}

CXLA_INFER_DECLARE(cxla_infer_replica_id) {
    (void)in;
    return cxla_infer_make_scalar(arena, CXLA_U32, out);
}

/* ---- elementwise unary ----------------------------------------------------------- */

static cxla_status infer_unary(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    const cxla_shape *x = OPS(0);
    if (!cxla_infer_is_array(x))
        return cxla_infer_fail(in, "the operand must be an array, got %s", STR(x));
    cxla_type t = x->type, result = t;
    bool flt = cxla_type_is_float(t), cpx = cxla_type_is_complex(t);
    bool sint = cxla_type_is_signed(t), integer = cxla_type_is_integer(t);
    const char *want = NULL;
    cxla_type_rule rule = cxla_opcode_get_info(in->opcode)->type_rule;
    switch (rule) {
    case CXLA_TR_FLOAT:
        if (!flt) want = "a floating-point";
        break;
    case CXLA_TR_FLOAT_COMPLEX:
        if (!flt && !cpx) want = "a floating-point or complex";
        break;
    case CXLA_TR_REAL_IMAG:
    case CXLA_TR_ABS:
        if (cpx)
            result = cxla_type_component(t);
        else if (!flt && !(rule == CXLA_TR_ABS && sint))
            want = rule == CXLA_TR_ABS ? "a signed integer, floating-point or complex"
                                       : "a floating-point or complex";
        break;
    case CXLA_TR_INT:
        if (!integer) want = "an integer";
        break;
    case CXLA_TR_NEGATE:
        if (!integer && !flt && !cpx) want = "an integer, floating-point or complex";
        break;
    case CXLA_TR_SIGN:
        if (!sint && !flt && !cpx) want = "a signed integer, floating-point or complex";
        break;
    case CXLA_TR_PRED_INT:
        if (!integer && t != CXLA_PRED) want = "a pred or integer";
        break;
    case CXLA_TR_IS_FINITE:
        if (!flt) want = "a floating-point";
        result = CXLA_PRED;
        break;
    default:
        return cxla_infer_fail(in, "opcodes.def gives %s no unary type rule",
                               cxla_opcode_name(in->opcode));
    }
    if (want) return cxla_infer_fail(in, "expected %s operand, got %s", want, STR(x));
    return cxla_infer_with_type(arena, x, result, out);
}

/* copy and domain pass any shape through (tuples too); opt-barrier likewise. */
static cxla_status infer_identity(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    return cxla_infer_copy(arena, OPS(0), out);
}

static cxla_status infer_convert(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    const cxla_shape *x = OPS(0);
    if (!cxla_infer_is_array(x) || !cxla_type_is_array(in->shape.type))
        return cxla_infer_fail(in, "converts arrays only, cannot convert %s to %s", STR(x),
                               STR(&in->shape));
    /* XLA's InferConvertShape: complex -> real is not defined (take `real` first). */
    if (cxla_type_is_complex(x->type) && !cxla_type_is_complex(in->shape.type))
        return cxla_infer_fail(in,
                               "conversion from complex to real type %s => %s is not "
                               "implemented (as in XLA); take the real part with real() first",
                               STR(x), cxla_type_name(in->shape.type));
    return cxla_infer_with_type(arena, x, in->shape.type, out);
}

static cxla_status infer_bitcast_convert(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    const cxla_shape *x = OPS(0);
    cxla_type to = in->shape.type;
    if (!cxla_infer_is_array(x) || !cxla_type_is_array(to))
        return cxla_infer_fail(in, "converts arrays only, cannot convert %s to %s", STR(x),
                               STR(&in->shape));
    if (cxla_type_is_complex(x->type) != cxla_type_is_complex(to))
        return cxla_infer_fail(in, "cannot convert between complex and real types: %s to %s",
                               STR(x), cxla_type_name(to));
    int from_bits = cxla_type_bits(x->type), to_bits = cxla_type_bits(to);
    int lo = from_bits < to_bits ? from_bits : to_bits, hi = from_bits ^ to_bits ^ lo;
    if (lo <= 0 || hi % lo != 0)
        return cxla_infer_fail(in, "bit widths %d (%s) and %d (%s) do not divide each other",
                               from_bits, cxla_type_name(x->type), to_bits, cxla_type_name(to));
    int64_t ratio = hi / lo;
    int64_t dims[CXLA_MAX_RANK + 1];
    uint8_t dyn[CXLA_MAX_RANK + 1] = {0};
    for (int64_t i = 0; i < x->rank; i++) {
        dims[i] = x->dims[i];
        dyn[i] = cxla_infer_dyn(x, i);
    }
    int64_t rank = x->rank;
    if (from_bits > to_bits) {
        if (rank == CXLA_MAX_RANK) return cxla_infer_fail(in, "the result rank is too large");
        dims[rank++] = ratio; /* a new minor dimension */
    } else if (from_bits < to_bits) {
        if (rank < 1 || x->dims[rank - 1] != ratio)
            return cxla_infer_fail(in,
                                   "converting %s to the %d-bit %s needs a last dimension of "
                                   "size %" PRId64,
                                   STR(x), to_bits, cxla_type_name(to), ratio);
        rank--;
    }
    return cxla_infer_make_array(arena, to, rank, dims, dyn, out);
}

static cxla_status infer_reduce_precision(const cxla_instr *in, cxla_arena *arena,
                                          cxla_shape *out) {
    const cxla_shape *x = OPS(0);
    if (!cxla_infer_is_array(x) || !cxla_type_is_float(x->type))
        return cxla_infer_fail(in, "expected a floating-point operand, got %s", STR(x));
    int64_t e, mbits;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_int(in, CXLA_ATTR_EXPONENT_BITS, &e));
    CXLA_RETURN_IF_ERROR(cxla_infer_req_int(in, CXLA_ATTR_MANTISSA_BITS, &mbits));
    if (e < 1) return cxla_infer_fail(in, "exponent_bits=%" PRId64 ", expected >= 1", e);
    if (mbits < 0) return cxla_infer_fail(in, "mantissa_bits=%" PRId64 ", expected >= 0", mbits);
    return cxla_infer_copy(arena, x, out);
}

static cxla_status infer_stochastic_convert(const cxla_instr *in, cxla_arena *arena,
                                            cxla_shape *out) {
    const cxla_shape *x = OPS(0), *r = OPS(1);
    if (!cxla_infer_is_array(x) || !cxla_type_is_float(x->type))
        return cxla_infer_fail(in, "expected a floating-point operand, got %s", STR(x));
    if (!cxla_infer_is_array(r) || !cxla_type_is_unsigned(r->type))
        return cxla_infer_fail(in, "the random bits must be unsigned integers, got %s", STR(r));
    if (cxla_type_bits(x->type) != cxla_type_bits(r->type))
        return cxla_infer_fail(in, "the random bits %s must have the bit width of the operand %s",
                               STR(r), STR(x));
    if (!cxla_infer_same_dims(x, r))
        return cxla_infer_fail(in, "operand %s and random bits %s must have the same dimensions",
                               STR(x), STR(r));
    if (!cxla_type_is_array(in->shape.type))
        return cxla_infer_fail(in, "the result must be an array, declared %s", STR(&in->shape));
    return cxla_infer_with_type(arena, x, in->shape.type, out);
}

static cxla_status infer_bitcast(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    CXLA_RETURN_IF_ERROR(declared(in, arena, out));
    const cxla_shape *x = OPS(0);
    if (!cxla_infer_is_array(x) || !cxla_infer_is_array(&in->shape))
        return cxla_infer_fail(in, "reinterprets arrays only, got %s to %s", STR(x),
                               STR(&in->shape));
    if (!cxla_shape_is_static(x) || !cxla_shape_is_static(&in->shape)) return NULL;
    int64_t nx, ny;
    cxla_status s = cxla_shape_element_count(x, &nx);
    if (!s) s = cxla_shape_element_count(&in->shape, &ny);
    if (s) {
        cxla_status_free(s);
        return cxla_infer_fail(in, "element count overflows");
    }
    int64_t bx, by;
    if (!cxla_mul_i64(nx, cxla_type_bits(x->type), &bx) ||
        !cxla_mul_i64(ny, cxla_type_bits(in->shape.type), &by))
        return cxla_infer_fail(in, "byte size overflows");
    if (bx != by)
        return cxla_infer_fail(in, "%s (%" PRId64 " bits) and %s (%" PRId64 " bits) differ in size",
                               STR(x), bx, STR(&in->shape), by);
    return NULL;
}

/* ---- elementwise binary and ternary ---------------------------------------------- */

/* Merges the dimensions of two same-rank arrays: sizes must match, a '?' takes the
 * other side's size, and a dimension is dynamic when either side's is. */
static cxla_status merge_dims(const cxla_instr *in, cxla_arena *arena, const cxla_shape *a,
                              const cxla_shape *b, cxla_type type, cxla_shape *out) {
    if (a->rank != b->rank)
        return cxla_infer_fail(in, "operands must have the same dimensions, got %s and %s", STR(a),
                               STR(b));
    int64_t dims[CXLA_MAX_RANK];
    uint8_t dyn[CXLA_MAX_RANK];
    for (int64_t i = 0; i < a->rank; i++) {
        bool ua = unbounded_at(a, i), ub = unbounded_at(b, i);
        if (!ua && !ub && a->dims[i] != b->dims[i])
            return cxla_infer_fail(in, "operands must have the same dimensions, got %s and %s",
                                   STR(a), STR(b));
        if (ua && !ub) {
            dims[i] = b->dims[i];
            dyn[i] = cxla_infer_dyn(b, i);
        } else if (ub && !ua) {
            dims[i] = a->dims[i];
            dyn[i] = cxla_infer_dyn(a, i);
        } else {
            dims[i] = a->dims[i];
            dyn[i] = cxla_infer_dyn(a, i) || cxla_infer_dyn(b, i);
        }
    }
    return cxla_infer_make_array(arena, type, a->rank, dims, dyn, out);
}

static cxla_status infer_binary(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    const cxla_shape *a = OPS(0), *b = OPS(1);
    if (!cxla_infer_is_array(a) || !cxla_infer_is_array(b))
        return cxla_infer_fail(in, "operands must be arrays, got %s and %s", STR(a), STR(b));
    if (a->type != b->type)
        return cxla_infer_fail(in, "operands must have the same element type, got %s and %s",
                               STR(a), STR(b));
    cxla_type t = a->type, result = t;
    bool integer = cxla_type_is_integer(t), flt = cxla_type_is_float(t);
    bool cpx = cxla_type_is_complex(t);
    const char *want = NULL;
    switch (cxla_opcode_get_info(in->opcode)->type_rule) {
    case CXLA_TR_ARITH:
        if (t == CXLA_PRED) want = "arithmetic (not pred)";
        break;
    case CXLA_TR_FLOAT_COMPLEX:
        if (!flt && !cpx) want = "floating-point or complex";
        break;
    case CXLA_TR_PRED_INT:
        if (!integer && t != CXLA_PRED) want = "pred or integer";
        break;
    case CXLA_TR_INT:
        if (!integer) want = "integer";
        break;
    case CXLA_TR_COMPLEX:
        if (t == CXLA_F32)
            result = CXLA_C64;
        else if (t == CXLA_F64)
            result = CXLA_C128;
        else
            want = "f32 or f64";
        break;
    case CXLA_TR_ANY: /* add, multiply, maximum, minimum: every array type */ break;
    default:
        return cxla_infer_fail(in, "opcodes.def gives %s no binary type rule",
                               cxla_opcode_name(in->opcode));
    }
    if (want)
        return cxla_infer_fail(in, "expected %s operands, got %s and %s", want, STR(a), STR(b));
    return merge_dims(in, arena, a, b, result, out);
}

static cxla_status infer_compare(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    const cxla_shape *a = OPS(0), *b = OPS(1);
    if (!cxla_infer_is_array(a) || !cxla_infer_is_array(b))
        return cxla_infer_fail(in, "operands must be arrays, got %s and %s", STR(a), STR(b));
    if (a->type != b->type)
        return cxla_infer_fail(in, "operands must have the same element type, got %s and %s",
                               STR(a), STR(b));
    const char *dir;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_word(in, CXLA_ATTR_DIRECTION, &dir));
    static const char *const dirs[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
    bool ok = false;
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(dirs); i++) ok = ok || strcmp(dir, dirs[i]) == 0;
    if (!ok) return cxla_infer_fail(in, "unknown direction=%s (expected EQ NE GE GT LE LT)", dir);
    const char *type = cxla_instr_word(in, CXLA_ATTR_COMPARISON_TYPE);
    if (type) {
        cxla_type t = a->type;
        bool fl = cxla_type_is_float(t) || cxla_type_is_complex(t);
        if (strcmp(type, "FLOAT") == 0 || strcmp(type, "TOTALORDER") == 0)
            ok = fl;
        else if (strcmp(type, "SIGNED") == 0)
            ok = cxla_type_is_signed(t);
        else if (strcmp(type, "UNSIGNED") == 0)
            ok = cxla_type_is_unsigned(t) || t == CXLA_PRED;
        else
            return cxla_infer_fail(in, "unknown comparison type=%s", type);
        if (!ok)
            return cxla_infer_fail(in, "comparison type=%s does not suit %s operands", type,
                                   cxla_type_name(t));
    }
    return merge_dims(in, arena, a, b, CXLA_PRED, out);
}

static cxla_status infer_select(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    const cxla_shape *p = OPS(0), *t = OPS(1), *f = OPS(2);
    if (!cxla_infer_is_array(p) || !cxla_infer_is_array(t) || !cxla_infer_is_array(f))
        return cxla_infer_fail(in, "operands must be arrays, got %s",
                               cxla_infer_operands_str(arena, in));
    if (p->type != CXLA_PRED)
        return cxla_infer_fail(in, "the predicate must be pred, got %s", STR(p));
    if (t->type != f->type)
        return cxla_infer_fail(in,
                               "on_true and on_false must have the same element type, got %s "
                               "and %s",
                               STR(t), STR(f));
    /* A scalar predicate selects whole arrays (old dumps); otherwise dims must match. */
    if (p->rank != 0 || t->rank == 0) {
        cxla_shape merged;
        CXLA_RETURN_IF_ERROR(merge_dims(in, arena, p, t, t->type, &merged));
        return merge_dims(in, arena, &merged, f, t->type, out);
    }
    return merge_dims(in, arena, t, f, t->type, out);
}

static cxla_status infer_clamp(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    const cxla_shape *lo = OPS(0), *x = OPS(1), *hi = OPS(2);
    if (!cxla_infer_is_array(lo) || !cxla_infer_is_array(x) || !cxla_infer_is_array(hi))
        return cxla_infer_fail(in, "operands must be arrays, got %s",
                               cxla_infer_operands_str(arena, in));
    if (lo->type != x->type || hi->type != x->type)
        return cxla_infer_fail(in, "min, operand and max must have the same element type, got %s",
                               cxla_infer_operands_str(arena, in));
    cxla_shape r;
    CXLA_RETURN_IF_ERROR(cxla_infer_copy(arena, x, &r));
    if (lo->rank != 0 || x->rank == 0)
        CXLA_RETURN_IF_ERROR(merge_dims(in, arena, &r, lo, x->type, &r));
    if (hi->rank != 0 || x->rank == 0)
        CXLA_RETURN_IF_ERROR(merge_dims(in, arena, &r, hi, x->type, &r));
    *out = r;
    return NULL;
}

/* ---- shape manipulation ---------------------------------------------------------- */

static cxla_status expect_array(const cxla_instr *in, cxla_arena *arena, int64_t i,
                                const char *what) {
    if (!cxla_infer_is_array(OPS(i)))
        return cxla_infer_fail(in, "%s must be an array, got %s", what, STR(OPS(i)));
    return NULL;
}

static cxla_status infer_broadcast(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    const cxla_shape *x = OPS(0), *y = &in->shape;
    CXLA_RETURN_IF_ERROR(expect_array(in, arena, 0, "the operand"));
    if (!cxla_infer_is_array(y))
        return cxla_infer_fail(in, "the result must be an array, declared %s", STR(y));
    const int64_t *d = NULL;
    int64_t n = 0;
    if (x->rank > 0 || cxla_instr_attr(in, CXLA_ATTR_DIMENSIONS))
        CXLA_RETURN_IF_ERROR(cxla_infer_req_ints(in, CXLA_ATTR_DIMENSIONS, &d, &n));
    if (n != x->rank)
        return cxla_infer_fail(in, "dimensions=%s must have one entry per operand dimension of %s",
                               INTS_STR(d, n), STR(x));
    if (!cxla_infer_all_unique(d, n))
        return cxla_infer_fail(in, "dimensions=%s repeats a dimension", INTS_STR(d, n));
    int64_t dims[CXLA_MAX_RANK];
    uint8_t dyn[CXLA_MAX_RANK];
    if (y->rank > CXLA_MAX_RANK) return cxla_infer_fail(in, "the result rank is too large");
    for (int64_t i = 0; i < y->rank; i++) {
        dims[i] = y->dims[i];
        dyn[i] = cxla_infer_dyn(y, i);
    }
    for (int64_t i = 0; i < n; i++) {
        if (d[i] < 0 || d[i] >= y->rank)
            return cxla_infer_fail(in, "dimensions=%s: %" PRId64 " is out of range for result %s",
                                   INTS_STR(d, n), d[i], STR(y));
        if (x->dims[i] != y->dims[d[i]])
            return cxla_infer_fail(in,
                                   "operand dimension %" PRId64 " of %s has size %" PRId64
                                   " but maps to result dimension %" PRId64 " of %s",
                                   i, STR(x), x->dims[i], d[i], STR(y));
        dyn[d[i]] = cxla_infer_dyn(x, i);
    }
    return cxla_infer_make_array(arena, x->type, y->rank, dims, dyn, out);
}

static bool count_elements(const cxla_shape *s, int64_t *out) {
    int64_t n = 1;
    for (int64_t i = 0; i < s->rank; i++) {
        if (s->dims[i] < 0) return false; /* unbounded: unknown */
        if (!cxla_mul_i64(n, s->dims[i], &n)) return false;
    }
    *out = n;
    return true;
}

static cxla_status infer_reshape(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    const cxla_shape *x = OPS(0), *y = &in->shape;
    CXLA_RETURN_IF_ERROR(expect_array(in, arena, 0, "the operand"));
    if (!cxla_infer_is_array(y))
        return cxla_infer_fail(in, "the result must be an array, declared %s", STR(y));
    int64_t nx, ny;
    if (count_elements(x, &nx) && count_elements(y, &ny) && nx != ny)
        return cxla_infer_fail(in, "element counts differ: %s has %" PRId64 ", %s has %" PRId64,
                               STR(x), nx, STR(y), ny);
    /* Declared dims; the element type is the operand's. */
    return cxla_infer_make_array(arena, x->type, y->rank, y->dims, y->dynamic, out);
}

static cxla_status infer_dynamic_reshape(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    if (in->operand_count < 1) return cxla_infer_fail(in, "expects an operand");
    const cxla_shape *y = &in->shape;
    if (!cxla_infer_is_array(y))
        return cxla_infer_fail(in, "the result must be an array, declared %s", STR(y));
    if (in->operand_count != y->rank + 1)
        return cxla_infer_fail(in,
                               "expects the operand and one size per result dimension (%" PRId64
                               "), got %" PRId64 " operands",
                               y->rank, in->operand_count);
    for (int64_t i = 1; i < in->operand_count; i++)
        if (!cxla_infer_is_scalar(OPS(i)) || OPS(i)->type != CXLA_S32)
            return cxla_infer_fail(in, "size operand %" PRId64 " must be s32[], got %s", i,
                                   STR(OPS(i)));
    return infer_reshape(in, arena, out);
}

static cxla_status infer_transpose(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    const cxla_shape *x = OPS(0);
    CXLA_RETURN_IF_ERROR(expect_array(in, arena, 0, "the operand"));
    const int64_t *p;
    int64_t n;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_ints(in, CXLA_ATTR_DIMENSIONS, &p, &n));
    bool perm = n == x->rank && cxla_infer_all_unique(p, n);
    for (int64_t i = 0; perm && i < n; i++) perm = p[i] >= 0 && p[i] < n;
    if (!perm)
        return cxla_infer_fail(in, "dimensions=%s is not a permutation of the dimensions of %s",
                               INTS_STR(p, n), STR(x));
    int64_t dims[CXLA_MAX_RANK];
    uint8_t dyn[CXLA_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        dims[i] = x->dims[p[i]];
        dyn[i] = cxla_infer_dyn(x, p[i]);
    }
    return cxla_infer_make_array(arena, x->type, n, dims, dyn, out);
}

static cxla_status infer_slice(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    const cxla_shape *x = OPS(0);
    CXLA_RETURN_IF_ERROR(expect_array(in, arena, 0, "the operand"));
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_SLICE);
    if (!a || a->kind != CXLA_ATTR_KIND_SLICE)
        return cxla_infer_fail(in, "missing attribute slice={[start:limit:stride], ...}");
    if (a->v.slice.rank != x->rank)
        return cxla_infer_fail(in, "slice has %" PRId64 " ranges for operand %s of rank %" PRId64,
                               a->v.slice.rank, STR(x), x->rank);
    int64_t dims[CXLA_MAX_RANK];
    uint8_t dyn[CXLA_MAX_RANK];
    for (int64_t i = 0; i < x->rank; i++) {
        const cxla_slice_dim *s = &a->v.slice.dims[i];
        if (s->start < 0)
            return cxla_infer_fail(in, "dimension %" PRId64 ": negative start %" PRId64, i,
                                   s->start);
        if (s->stride < 1)
            return cxla_infer_fail(in, "dimension %" PRId64 ": stride %" PRId64 " must be >= 1", i,
                                   s->stride);
        if (s->start > s->limit)
            return cxla_infer_fail(
                in, "dimension %" PRId64 ": start %" PRId64 " is greater than limit %" PRId64, i,
                s->start, s->limit);
        if (!unbounded_at(x, i) && s->limit > x->dims[i])
            return cxla_infer_fail(
                in, "dimension %" PRId64 ": limit %" PRId64 " exceeds the size of %s", i, s->limit,
                STR(x));
        dims[i] = (s->limit - s->start) / s->stride + ((s->limit - s->start) % s->stride != 0);
        dyn[i] = dims[i] != 1 && cxla_infer_dyn(x, i);
    }
    return cxla_infer_make_array(arena, x->type, x->rank, dims, dyn, out);
}

/* Start indices of dynamic-slice / dynamic-update-slice: one integer scalar per
 * dimension, all of the same type; or (old form) one integer vector of rank entries. */
static cxla_status check_start_indices(const cxla_instr *in, cxla_arena *arena, int64_t first,
                                       int64_t rank) {
    int64_t n = in->operand_count - first;
    if (n >= 1 && OPS(first)->rank == 1 && cxla_infer_is_array(OPS(first))) {
        const cxla_shape *v = OPS(first);
        if (n != 1)
            return cxla_infer_fail(in, "the vector form takes one index operand, got %" PRId64, n);
        if (!cxla_type_is_integer(v->type) || v->dims[0] != rank)
            return cxla_infer_fail(in,
                                   "the start index vector must be an integer vector of %" PRId64
                                   " elements, got %s",
                                   rank, STR(v));
        return NULL;
    }
    if (n != rank)
        return cxla_infer_fail(
            in, "expects one start index per dimension (%" PRId64 "), got %" PRId64, rank, n);
    for (int64_t i = first; i < in->operand_count; i++) {
        const cxla_shape *s = OPS(i);
        if (!cxla_infer_is_scalar(s) || !cxla_type_is_integer(s->type))
            return cxla_infer_fail(in, "start index %" PRId64 " must be an integer scalar, got %s",
                                   i - first, STR(s));
        if (s->type != OPS(first)->type)
            return cxla_infer_fail(in, "start indices must have the same type, got %s and %s",
                                   STR(OPS(first)), STR(s));
    }
    return NULL;
}

static cxla_status infer_dynamic_slice(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    if (in->operand_count < 1) return cxla_infer_fail(in, "expects an operand");
    const cxla_shape *x = OPS(0);
    CXLA_RETURN_IF_ERROR(expect_array(in, arena, 0, "the operand"));
    CXLA_RETURN_IF_ERROR(check_start_indices(in, arena, 1, x->rank));
    const int64_t *sz;
    int64_t n;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_ints(in, CXLA_ATTR_DYNAMIC_SLICE_SIZES, &sz, &n));
    if (n != x->rank)
        return cxla_infer_fail(in, "dynamic_slice_sizes=%s needs one size per dimension of %s",
                               INTS_STR(sz, n), STR(x));
    for (int64_t i = 0; i < n; i++)
        if (sz[i] < 0 || (!unbounded_at(x, i) && sz[i] > x->dims[i]))
            return cxla_infer_fail(in,
                                   "dynamic_slice_sizes=%s: size %" PRId64 " of dimension %" PRId64
                                   " is outside 0..%" PRId64 " of %s",
                                   INTS_STR(sz, n), sz[i], i, x->dims[i], STR(x));
    return cxla_infer_make_array(arena, x->type, n, sz, NULL, out);
}

static cxla_status infer_dynamic_update_slice(const cxla_instr *in, cxla_arena *arena,
                                              cxla_shape *out) {
    if (in->operand_count < 2) return cxla_infer_fail(in, "expects an operand and an update");
    const cxla_shape *x = OPS(0), *u = OPS(1);
    CXLA_RETURN_IF_ERROR(expect_array(in, arena, 0, "the operand"));
    CXLA_RETURN_IF_ERROR(expect_array(in, arena, 1, "the update"));
    CXLA_RETURN_IF_ERROR(check_start_indices(in, arena, 2, x->rank));
    if (u->rank != x->rank)
        return cxla_infer_fail(in, "the update %s must have the rank of the operand %s", STR(u),
                               STR(x));
    if (u->type != x->type)
        return cxla_infer_fail(in, "the update %s must have the element type of the operand %s",
                               STR(u), STR(x));
    uint8_t dyn[CXLA_MAX_RANK];
    for (int64_t i = 0; i < x->rank; i++) {
        if (!unbounded_at(x, i) && u->dims[i] > x->dims[i])
            return cxla_infer_fail(
                in, "the update %s is larger than the operand %s in dimension %" PRId64, STR(u),
                STR(x), i);
        dyn[i] = cxla_infer_dyn(x, i) || (cxla_infer_dyn(u, i) && u->dims[i] == x->dims[i]);
    }
    return cxla_infer_make_array(arena, x->type, x->rank, x->dims, dyn, out);
}

static cxla_status one_dimension(const cxla_instr *in, cxla_arena *arena, int64_t rank,
                                 const cxla_shape *x, int64_t *out_dim) {
    const int64_t *d;
    int64_t n;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_ints(in, CXLA_ATTR_DIMENSIONS, &d, &n));
    if (n != 1)
        return cxla_infer_fail(in, "dimensions=%s must name exactly one dimension", INTS_STR(d, n));
    if (d[0] < 0 || d[0] >= rank)
        return cxla_infer_fail(in, "dimension %" PRId64 " is out of range for %s", d[0], STR(x));
    *out_dim = d[0];
    return NULL;
}

static cxla_status infer_concatenate(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    if (in->operand_count < 1) return cxla_infer_fail(in, "expects at least one operand");
    const cxla_shape *x = OPS(0);
    for (int64_t i = 0; i < in->operand_count; i++)
        CXLA_RETURN_IF_ERROR(expect_array(in, arena, i, "every operand"));
    int64_t d;
    CXLA_RETURN_IF_ERROR(one_dimension(in, arena, x->rank, x, &d));
    int64_t dims[CXLA_MAX_RANK];
    uint8_t dyn[CXLA_MAX_RANK];
    for (int64_t j = 0; j < x->rank; j++) {
        dims[j] = x->dims[j];
        dyn[j] = cxla_infer_dyn(x, j);
    }
    for (int64_t i = 1; i < in->operand_count; i++) {
        const cxla_shape *y = OPS(i);
        if (y->rank != x->rank || y->type != x->type)
            return cxla_infer_fail(in,
                                   "operands must have the same rank and element type, got %s "
                                   "and %s",
                                   STR(x), STR(y));
        for (int64_t j = 0; j < x->rank; j++) {
            dyn[j] = dyn[j] || cxla_infer_dyn(y, j);
            if (j == d) {
                if (dims[j] == CXLA_DIM_UNBOUNDED || unbounded_at(y, j))
                    dims[j] = CXLA_DIM_UNBOUNDED;
                else if (!cxla_add_i64(dims[j], y->dims[j], &dims[j]))
                    return cxla_infer_fail(in, "the result size overflows");
            } else if (y->dims[j] != x->dims[j] && !unbounded_at(x, j) && !unbounded_at(y, j)) {
                return cxla_infer_fail(
                    in, "operands may differ only in dimension %" PRId64 ", got %s and %s", d,
                    STR(x), STR(y));
            }
        }
    }
    return cxla_infer_make_array(arena, x->type, x->rank, dims, dyn, out);
}

static cxla_status infer_pad(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    const cxla_shape *x = OPS(0), *v = OPS(1);
    CXLA_RETURN_IF_ERROR(expect_array(in, arena, 0, "the operand"));
    if (!cxla_infer_is_scalar(v) || v->type != x->type)
        return cxla_infer_fail(in, "the padding value must be a %s scalar, got %s",
                               cxla_type_name(x->type), STR(v));
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_PADDING);
    if (!a || a->kind != CXLA_ATTR_KIND_PADDING)
        return cxla_infer_fail(in, "missing attribute padding=low_high_interior x ...");
    if (a->v.padding.rank != x->rank)
        return cxla_infer_fail(in, "padding has %" PRId64 " dimensions for operand %s",
                               a->v.padding.rank, STR(x));
    int64_t dims[CXLA_MAX_RANK];
    uint8_t dyn[CXLA_MAX_RANK];
    for (int64_t i = 0; i < x->rank; i++) {
        const cxla_pad_dim *p = &a->v.padding.dims[i];
        if (p->interior < 0)
            return cxla_infer_fail(
                in, "dimension %" PRId64 ": interior padding %" PRId64 " is negative", i,
                p->interior);
        dyn[i] = cxla_infer_dyn(x, i);
        if (unbounded_at(x, i)) {
            dims[i] = CXLA_DIM_UNBOUNDED;
            continue;
        }
        int64_t d = x->dims[i], gaps = d > 0 ? d - 1 : 0, r;
        if (!cxla_mul_i64(gaps, p->interior, &r) || !cxla_add_i64(r, d, &r) ||
            !cxla_add_i64(r, p->low, &r) || !cxla_add_i64(r, p->high, &r))
            return cxla_infer_fail(in, "dimension %" PRId64 " overflows", i);
        if (r < 0)
            return cxla_infer_fail(
                in, "dimension %" PRId64 " of %s pads to a negative size %" PRId64, i, STR(x), r);
        dims[i] = r;
    }
    return cxla_infer_make_array(arena, x->type, x->rank, dims, dyn, out);
}

static cxla_status infer_reverse(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    const cxla_shape *x = OPS(0);
    CXLA_RETURN_IF_ERROR(expect_array(in, arena, 0, "the operand"));
    const int64_t *d;
    int64_t n;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_ints(in, CXLA_ATTR_DIMENSIONS, &d, &n));
    if (!cxla_infer_all_unique(d, n))
        return cxla_infer_fail(in, "dimensions=%s repeats a dimension", INTS_STR(d, n));
    for (int64_t i = 0; i < n; i++)
        if (d[i] < 0 || d[i] >= x->rank)
            return cxla_infer_fail(in, "dimension %" PRId64 " is out of range for %s", d[i],
                                   STR(x));
    return cxla_infer_copy(arena, x, out);
}

static cxla_status infer_get_dimension_size(const cxla_instr *in, cxla_arena *arena,
                                            cxla_shape *out) {
    const cxla_shape *x = OPS(0);
    CXLA_RETURN_IF_ERROR(expect_array(in, arena, 0, "the operand"));
    int64_t d;
    CXLA_RETURN_IF_ERROR(one_dimension(in, arena, x->rank, x, &d));
    if (x->dims[d] > INT32_MAX)
        return cxla_infer_fail(in, "dimension %" PRId64 " of %s exceeds the s32 range", d, STR(x));
    return cxla_infer_make_scalar(arena, CXLA_S32, out);
}

static cxla_status infer_set_dimension_size(const cxla_instr *in, cxla_arena *arena,
                                            cxla_shape *out) {
    const cxla_shape *x = OPS(0), *v = OPS(1);
    CXLA_RETURN_IF_ERROR(expect_array(in, arena, 0, "the operand"));
    int64_t d;
    CXLA_RETURN_IF_ERROR(one_dimension(in, arena, x->rank, x, &d));
    if (!cxla_infer_is_scalar(v) || v->type != CXLA_S32)
        return cxla_infer_fail(in, "the size must be s32[], got %s", STR(v));
    if (x->dims[d] > INT32_MAX)
        return cxla_infer_fail(in, "dimension %" PRId64 " of %s exceeds the s32 range", d, STR(x));
    uint8_t dyn[CXLA_MAX_RANK];
    for (int64_t i = 0; i < x->rank; i++) dyn[i] = cxla_infer_dyn(x, i) || i == d;
    return cxla_infer_make_array(arena, x->type, x->rank, x->dims, dyn, out);
}

static cxla_status infer_tuple(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    return cxla_infer_operands_tuple(in, arena, false, out);
}

static cxla_status infer_get_tuple_element(const cxla_instr *in, cxla_arena *arena,
                                           cxla_shape *out) {
    const cxla_shape *t = OPS(0);
    if (t->type != CXLA_TUPLE)
        return cxla_infer_fail(in, "the operand must be a tuple, got %s", STR(t));
    int64_t i;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_int(in, CXLA_ATTR_INDEX, &i));
    if (i < 0 || i >= t->tuple_count)
        return cxla_infer_fail(in, "index=%" PRId64 " is out of range for %s", i, STR(t));
    return cxla_infer_copy(arena, &t->elements[i], out);
}

/* shuffle: a newer opcode without a published rule: the declared shape, which must hold
 * the operand's elements. */
static cxla_status infer_shuffle(const cxla_instr *in, cxla_arena *arena, cxla_shape *out) {
    CXLA_RETURN_IF_ERROR(declared(in, arena, out));
    const cxla_shape *x = OPS(0);
    if (!cxla_infer_is_array(x) || !cxla_infer_is_array(&in->shape) || x->type != in->shape.type)
        return cxla_infer_fail(in, "operand %s and result %s must be arrays of one element type",
                               STR(x), STR(&in->shape));
    return NULL;
}

/* ---- the table ------------------------------------------------------------------- */

static const cxla_infer_fn infer_table[CXLA_OP_COUNT] = {
    [CXLA_OP_PARAMETER] = infer_parameter,
    [CXLA_OP_CONSTANT] = infer_constant,
    [CXLA_OP_IOTA] = infer_iota,
    [CXLA_OP_REPLICA_ID] = cxla_infer_replica_id,
    [CXLA_OP_PARTITION_ID] = cxla_infer_replica_id,
    [CXLA_OP_RNG_GET_AND_UPDATE_STATE] = cxla_infer_rng_get_and_update_state,
    [CXLA_OP_AFTER_ALL] = cxla_infer_after_all,

    [CXLA_OP_ABS] = infer_unary,
    [CXLA_OP_NEGATE] = infer_unary,
    [CXLA_OP_SIGN] = infer_unary,
    [CXLA_OP_NOT] = infer_unary,
    [CXLA_OP_FLOOR] = infer_unary,
    [CXLA_OP_CEIL] = infer_unary,
    [CXLA_OP_ROUND_NEAREST_AFZ] = infer_unary,
    [CXLA_OP_ROUND_NEAREST_EVEN] = infer_unary,
    [CXLA_OP_EXP] = infer_unary,
    [CXLA_OP_EXPM1] = infer_unary,
    [CXLA_OP_LOG] = infer_unary,
    [CXLA_OP_LOG1P] = infer_unary,
    [CXLA_OP_LOGISTIC] = infer_unary,
    [CXLA_OP_SQRT] = infer_unary,
    [CXLA_OP_RSQRT] = infer_unary,
    [CXLA_OP_CBRT] = infer_unary,
    [CXLA_OP_SIN] = infer_unary,
    [CXLA_OP_COS] = infer_unary,
    [CXLA_OP_TAN] = infer_unary,
    [CXLA_OP_TANH] = infer_unary,
    [CXLA_OP_ACOS] = infer_unary,
    [CXLA_OP_ACOSH] = infer_unary,
    [CXLA_OP_ASIN] = infer_unary,
    [CXLA_OP_ASINH] = infer_unary,
    [CXLA_OP_ATAN] = infer_unary,
    [CXLA_OP_ATANH] = infer_unary,
    [CXLA_OP_COSH] = infer_unary,
    [CXLA_OP_SINH] = infer_unary,
    [CXLA_OP_ERF] = infer_unary,
    [CXLA_OP_IS_FINITE] = infer_unary,
    [CXLA_OP_POPCNT] = infer_unary,
    [CXLA_OP_CLZ] = infer_unary,
    [CXLA_OP_REAL] = infer_unary,
    [CXLA_OP_IMAG] = infer_unary,
    [CXLA_OP_COPY] = infer_identity,
    [CXLA_OP_CONVERT] = infer_convert,
    [CXLA_OP_BITCAST_CONVERT] = infer_bitcast_convert,
    [CXLA_OP_REDUCE_PRECISION] = infer_reduce_precision,
    [CXLA_OP_STOCHASTIC_CONVERT] = infer_stochastic_convert,
    [CXLA_OP_BITCAST] = infer_bitcast,
    [CXLA_OP_OPTIMIZATION_BARRIER] = infer_identity,

    [CXLA_OP_ADD] = infer_binary,
    [CXLA_OP_SUBTRACT] = infer_binary,
    [CXLA_OP_MULTIPLY] = infer_binary,
    [CXLA_OP_DIVIDE] = infer_binary,
    [CXLA_OP_REMAINDER] = infer_binary,
    [CXLA_OP_POWER] = infer_binary,
    [CXLA_OP_ATAN2] = infer_binary,
    [CXLA_OP_MAXIMUM] = infer_binary,
    [CXLA_OP_MINIMUM] = infer_binary,
    [CXLA_OP_AND] = infer_binary,
    [CXLA_OP_OR] = infer_binary,
    [CXLA_OP_XOR] = infer_binary,
    [CXLA_OP_SHIFT_LEFT] = infer_binary,
    [CXLA_OP_SHIFT_RIGHT_ARITHMETIC] = infer_binary,
    [CXLA_OP_SHIFT_RIGHT_LOGICAL] = infer_binary,
    [CXLA_OP_COMPLEX] = infer_binary,
    [CXLA_OP_MULHI] = infer_binary,
    [CXLA_OP_COMPARE] = infer_compare,
    [CXLA_OP_SELECT] = infer_select,
    [CXLA_OP_CLAMP] = infer_clamp,
    [CXLA_OP_MAP] = cxla_infer_map,

    [CXLA_OP_BROADCAST] = infer_broadcast,
    [CXLA_OP_RESHAPE] = infer_reshape,
    [CXLA_OP_DYNAMIC_RESHAPE] = infer_dynamic_reshape,
    [CXLA_OP_TRANSPOSE] = infer_transpose,
    [CXLA_OP_SLICE] = infer_slice,
    [CXLA_OP_DYNAMIC_SLICE] = infer_dynamic_slice,
    [CXLA_OP_DYNAMIC_UPDATE_SLICE] = infer_dynamic_update_slice,
    [CXLA_OP_CONCATENATE] = infer_concatenate,
    [CXLA_OP_PAD] = infer_pad,
    [CXLA_OP_REVERSE] = infer_reverse,
    [CXLA_OP_GET_DIMENSION_SIZE] = infer_get_dimension_size,
    [CXLA_OP_SET_DIMENSION_SIZE] = infer_set_dimension_size,
    [CXLA_OP_TUPLE] = infer_tuple,
    [CXLA_OP_GET_TUPLE_ELEMENT] = infer_get_tuple_element,
    [CXLA_OP_SHUFFLE] = infer_shuffle,

    [CXLA_OP_REDUCE] = cxla_infer_reduce,
    [CXLA_OP_REDUCE_WINDOW] = cxla_infer_reduce_window,
    [CXLA_OP_SELECT_AND_SCATTER] = cxla_infer_select_and_scatter,
    [CXLA_OP_SORT] = cxla_infer_sort,
    [CXLA_OP_TOPK] = cxla_infer_topk,
    [CXLA_OP_GATHER] = cxla_infer_gather,
    [CXLA_OP_SCATTER] = cxla_infer_scatter,
    [CXLA_OP_SCAN] = cxla_infer_scan,

    [CXLA_OP_DOT] = cxla_infer_dot,
    [CXLA_OP_RAGGED_DOT] = cxla_infer_ragged_dot,
    [CXLA_OP_SCALED_DOT] = cxla_infer_scaled_dot,
    [CXLA_OP_CONVOLUTION] = cxla_infer_convolution,
    [CXLA_OP_FFT] = cxla_infer_fft,
    [CXLA_OP_CHOLESKY] = cxla_infer_cholesky,
    [CXLA_OP_TRIANGULAR_SOLVE] = cxla_infer_triangular_solve,
    [CXLA_OP_BATCH_NORM_TRAINING] = cxla_infer_batch_norm_training,
    [CXLA_OP_BATCH_NORM_INFERENCE] = cxla_infer_batch_norm_inference,
    [CXLA_OP_BATCH_NORM_GRAD] = cxla_infer_batch_norm_grad,

    [CXLA_OP_WHILE] = cxla_infer_while,
    [CXLA_OP_CONDITIONAL] = cxla_infer_conditional,
    [CXLA_OP_CALL] = cxla_infer_call,
    [CXLA_OP_FUSION] = cxla_infer_fusion,
    [CXLA_OP_CUSTOM_CALL] = cxla_infer_custom_call,
    [CXLA_OP_DOMAIN] = infer_identity,

    [CXLA_OP_RNG] = cxla_infer_rng,
    [CXLA_OP_RNG_BIT_GENERATOR] = cxla_infer_rng_bit_generator,

    [CXLA_OP_ADD_DEPENDENCY] = cxla_infer_add_dependency,
    [CXLA_OP_INFEED] = cxla_infer_infeed,
    [CXLA_OP_OUTFEED] = cxla_infer_outfeed,
    [CXLA_OP_SEND] = cxla_infer_send,
    [CXLA_OP_SEND_DONE] = cxla_infer_send_done,
    [CXLA_OP_RECV] = cxla_infer_recv,
    [CXLA_OP_RECV_DONE] = cxla_infer_recv_done,

    [CXLA_OP_ALL_REDUCE] = cxla_infer_all_reduce,
    [CXLA_OP_ALL_REDUCE_START] = cxla_infer_all_reduce_start,
    [CXLA_OP_ALL_REDUCE_DONE] = cxla_infer_all_reduce_done,
    [CXLA_OP_ALL_GATHER] = cxla_infer_all_gather,
    [CXLA_OP_ALL_GATHER_START] = cxla_infer_all_gather_start,
    [CXLA_OP_ALL_GATHER_DONE] = cxla_infer_all_gather_done,
    [CXLA_OP_ALL_TO_ALL] = cxla_infer_all_to_all,
    [CXLA_OP_RAGGED_ALL_TO_ALL] = cxla_infer_ragged_all_to_all,
    [CXLA_OP_REDUCE_SCATTER] = cxla_infer_reduce_scatter,
    [CXLA_OP_COLLECTIVE_PERMUTE] = cxla_infer_collective_permute,
    [CXLA_OP_COLLECTIVE_PERMUTE_START] = cxla_infer_collective_permute_start,
    [CXLA_OP_COLLECTIVE_PERMUTE_DONE] = cxla_infer_collective_permute_done,
    [CXLA_OP_COLLECTIVE_BROADCAST] = cxla_infer_collective_broadcast,
    [CXLA_OP_COLLECTIVE_REDUCE] = cxla_infer_collective_reduce,

    [CXLA_OP_ASYNC_START] = cxla_infer_async_start,
    [CXLA_OP_ASYNC_UPDATE] = cxla_infer_async_update,
    [CXLA_OP_ASYNC_DONE] = cxla_infer_async_done,
    [CXLA_OP_COPY_START] = cxla_infer_copy_start,
    [CXLA_OP_COPY_DONE] = cxla_infer_copy_done,
};

bool cxla_infer_has_handler(cxla_opcode op) {
    return (int)op >= 0 && op < CXLA_OP_COUNT && infer_table[op] != NULL;
}

cxla_status cxla_infer_shape(const cxla_instr *instr, cxla_arena *arena, cxla_shape *out_shape) {
    if (!instr || !arena || !out_shape)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cxla_infer_shape: NULL argument");
    memset(out_shape, 0, sizeof(*out_shape));
    if (!cxla_infer_has_handler(instr->opcode))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "no shape inference for opcode %d",
                          (int)instr->opcode);
    int arity = cxla_opcode_get_info(instr->opcode)->arity;
    if (arity >= 0 && instr->operand_count != arity)
        return cxla_infer_fail(instr, "expects %d operand(s), got %" PRId64, arity,
                               instr->operand_count);
    if (instr->operand_count > 0 && !instr->operands)
        return cxla_infer_fail(instr, "operands are missing");
    for (int64_t i = 0; i < instr->operand_count; i++) {
        const cxla_instr *o = instr->operands[i];
        if (!o) return cxla_infer_fail(instr, "operand %" PRId64 " is missing", i);
        /* Handlers index fixed-size arrays by rank: refuse malformed operand shapes. */
        if (o->shape.rank < 0 || o->shape.rank > CXLA_MAX_RANK ||
            (o->shape.rank > 0 && !o->shape.dims))
            return cxla_infer_fail(instr, "operand %" PRId64 " '%s' has a malformed shape", i,
                                   o->name ? o->name : "?");
    }
    return infer_table[instr->opcode](instr, arena, out_shape);
}
