/* CHLO operations (the client HLO dialect JAX emits) lowered to HLO: those with an HLO
 * opcode of their own map to it; the others are built from ordinary operations. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stablehlo/convert_internal.h"

typedef struct chlo_map {
    const char *name;
    cxla_opcode opcode;
} chlo_map;

static const chlo_map kDirect[] = {
    {"acos", CXLA_OP_ACOS},   {"acosh", CXLA_OP_ACOSH}, {"asin", CXLA_OP_ASIN},
    {"asinh", CXLA_OP_ASINH}, {"atan", CXLA_OP_ATAN},   {"atanh", CXLA_OP_ATANH},
    {"cosh", CXLA_OP_COSH},   {"sinh", CXLA_OP_SINH},   {"tan", CXLA_OP_TAN},
    {"erf", CXLA_OP_ERF},     {"mulhi", CXLA_OP_MULHI},
};

static const cxla_shape *out0(cv *c, const mlir_op *op) {
    if (op->out_type_count < 1) return cv_fail(c, op, "the result type is missing"), NULL;
    return &op->out_types[0];
}

static cxla_instr *unary(cv *c, cv_scope *s, const mlir_op *op, cxla_opcode opc, cxla_instr *x) {
    return cv_emit(c, s, op, opc, &x->shape, 1, &x);
}

static cxla_instr *binary(cv *c, cv_scope *s, const mlir_op *op, cxla_opcode opc, cxla_instr *x,
                          cxla_instr *y) {
    cxla_instr *xy[2] = {x, y};
    if (!x || !y) return NULL;
    return cv_emit(c, s, op, opc, &x->shape, 2, xy);
}

/* A constant of |like|'s shape holding |v|. */
static cxla_instr *full(cv *c, cv_scope *s, const mlir_op *op, const cxla_instr *like, double v) {
    cxla_instr *k = cv_constant_scalar(c, s, like->shape.type, v);
    if (!k || like->shape.rank == 0) return k;
    cxla_shape sh = like->shape;
    sh.layout = NULL;
    cxla_instr *b = cv_emit(c, s, op, CXLA_OP_BROADCAST, &sh, 1, &k);
    if (!cv_attr_ints(c, op, b, CXLA_ATTR_DIMENSIONS, NULL, 0)) return NULL;
    return b;
}

static bool top_k(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *x;
    if (op->operand_count != 1 || !(x = cv_lookup(c, s, op, op->operands[0]))) return false;
    const mlir_attr *k = mlir_op_attr(op, "k");
    if (!k || k->kind != MA_INT) return cv_fail(c, op, "no k");
    if (op->out_type_count != 2) return cv_fail(c, op, "expected two results");
    cxla_shape sh = {.type = CXLA_TUPLE, .tuple_count = 2, .elements = op->out_types};
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_TOPK, &sh, 1, &x);
    return cv_attr_int(c, op, in, CXLA_ATTR_K, k->i) &&
           cv_attr_text(c, op, in, CXLA_ATTR_LARGEST, "true") && cv_bind_results(c, s, op, in);
}

bool cv_scan(cv *c, cv_scope *s, const mlir_op *op);

static cxla_instr *cmp(cv *c, cv_scope *s, const mlir_op *op, const char *dir, cxla_instr *x,
                       cxla_instr *y) {
    if (!x || !y) return NULL;
    cxla_shape sh = x->shape;
    sh.type = CXLA_PRED;
    sh.layout = NULL;
    cxla_instr *xy[2] = {x, y};
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_COMPARE, &sh, 2, xy);
    return cv_attr_text(c, op, in, CXLA_ATTR_DIRECTION, dir) ? in : NULL;
}

static cxla_instr *sel(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *p, cxla_instr *x,
                       cxla_instr *y) {
    if (!p || !x || !y) return NULL;
    cxla_instr *v[3] = {p, x, y};
    return cv_emit(c, s, op, CXLA_OP_SELECT, &x->shape, 3, v);
}

static cxla_instr *convert_to(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x, cxla_type t) {
    if (!x || x->shape.type == t) return x;
    cxla_shape sh = x->shape;
    sh.type = t;
    sh.layout = NULL;
    return cv_emit(c, s, op, CXLA_OP_CONVERT, &sh, 1, &x);
}

/* log(Gamma(x)) by the Lanczos approximation (g = 7, 9 terms), with the reflection
 * formula below 1/2: the method XLA's Lgamma uses; small float types compute in f32. */
static bool lgamma_op(cv *c, cv_scope *s, const mlir_op *op) {
    static const double kCoeff[] = {
        676.5203681218851,  -1259.1392167224028,  771.32342877765313,    -176.61502916214059,
        12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
    const double kG = 7.0;
    cxla_instr *x0;
    if (op->operand_count != 1 || !(x0 = cv_lookup(c, s, op, op->operands[0]))) return false;
    cxla_type out_t = x0->shape.type;
    if (!cxla_type_is_float(out_t)) return cv_fail(c, op, "lgamma needs a float operand");
    cxla_instr *x = convert_to(c, s, op, x0, out_t == CXLA_F64 ? CXLA_F64 : CXLA_F32);
    if (!x) return false;
#define K(v)       full(c, s, op, x, (v))
#define B(o, a, b) binary(c, s, op, CXLA_OP_##o, (a), (b))
#define U(o, a)    (a ? unary(c, s, op, CXLA_OP_##o, (a)) : NULL)
    cxla_instr *reflect = cmp(c, s, op, "LT", x, K(0.5));
    cxla_instr *z = sel(c, s, op, reflect, U(NEGATE, x), B(SUBTRACT, x, K(1.0)));
    cxla_instr *a = K(0.99999999999980993);
    for (int i = 0; i < 8 && a; i++) a = B(ADD, a, B(DIVIDE, K(kCoeff[i]), B(ADD, z, K(i + 1.0))));
    cxla_instr *t = B(ADD, z, K(kG + 0.5));
    /* log(t) = log(g + 1/2) + log1p(z / (g + 1/2)), accurate for small z */
    cxla_instr *log_t = B(ADD, K(log(kG + 0.5)), U(LOG1P, B(DIVIDE, z, K(kG + 0.5))));
    cxla_instr *log_y =
        B(ADD,
          B(SUBTRACT, B(ADD, K(0.91893853320467274178), B(MULTIPLY, B(ADD, z, K(0.5)), log_t)), t),
          U(LOG, a));
    /* reflection: lgamma(x) = log(pi) - log|sin(pi x)| - lgamma(1 - x) */
    cxla_instr *sinpx = U(ABS, U(SIN, B(MULTIPLY, K(3.14159265358979323846), x)));
    cxla_instr *refl = B(SUBTRACT, B(SUBTRACT, K(1.1447298858494002), U(LOG, sinpx)), log_y);
    cxla_instr *r = sel(c, s, op, reflect, refl, log_y);
    /* lgamma(+-inf) = +inf */
    cxla_instr *inf = cmp(c, s, op, "EQ", U(ABS, x), K(INFINITY));
    r = sel(c, s, op, inf, K(INFINITY), r);
#undef K
#undef B
#undef U
    r = convert_to(c, s, op, r, out_t);
    return r && cv_bind_results(c, s, op, r);
}

static bool ragged_dot(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[3];
    int64_t n;
    if (!cv_operands(c, s, op, ops, 3, &n)) return false;
    if (n != 3) return cv_fail(c, op, "expected 3 operands");
    const mlir_attr *dn = mlir_op_attr(op, "ragged_dot_dimension_numbers");
    if (!dn) return cv_fail(c, op, "no ragged_dot_dimension_numbers");
    const cxla_shape *rs = out0(c, op);
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_RAGGED_DOT, rs, 3, ops) : NULL;
    static const struct {
        const char *key;
        cxla_attr_id id;
    } lists[] = {{"lhs_batching_dimensions", CXLA_ATTR_LHS_BATCH_DIMS},
                 {"lhs_contracting_dimensions", CXLA_ATTR_LHS_CONTRACTING_DIMS},
                 {"rhs_batching_dimensions", CXLA_ATTR_RHS_BATCH_DIMS},
                 {"rhs_contracting_dimensions", CXLA_ATTR_RHS_CONTRACTING_DIMS},
                 {"lhs_ragged_dimensions", CXLA_ATTR_LHS_RAGGED_DIMS},
                 {"rhs_group_dimensions", CXLA_ATTR_RHS_GROUP_DIMS}};
    for (size_t i = 0; in && i < CXLA_ARRAY_SIZE(lists); i++) {
        int64_t v[CXLA_MAX_RANK], k;
        if (!cv_ints(c, op, mlir_attr_get(dn, lists[i].key), v, CXLA_MAX_RANK, &k)) return false;
        if (k == 0 &&
            (lists[i].id == CXLA_ATTR_LHS_BATCH_DIMS || lists[i].id == CXLA_ATTR_RHS_BATCH_DIMS ||
             lists[i].id == CXLA_ATTR_RHS_GROUP_DIMS))
            continue;
        if (!cv_attr_ints(c, op, in, lists[i].id, v, k)) return false;
    }
    return in && cv_bind_results(c, s, op, in);
}

/* erf^-1(x) in f32 (the small float types widened to it) by Giles' single-precision
 * approximation ("Approximating the erfinv function", GPU Computing Gems), as XLA's
 * ErfInv32: w = -log1p(-x^2); a degree-8 polynomial in w - 2.5 below 5, in sqrt(w) - 3
 * above; times x; +-1 give +-inf. f64 (XLA's ErfInv64, another set of coefficients) is
 * not lowered yet. */
static bool erf_inv_op(cv *c, cv_scope *s, const mlir_op *op) {
    static const double kLow[] = {2.81022636e-08,  3.43273939e-07, -3.5233877e-06,
                                  -4.39150654e-06, 0.00021858087,  -0.00125372503,
                                  -0.00417768164,  0.246640727,    1.50140941};
    static const double kHigh[] = {-0.000200214257, 0.000100950558, 0.00134934322,
                                   -0.00367342844,  0.00573950773,  -0.0076224613,
                                   0.00943887047,   1.00167406,     2.83297682};
    cxla_instr *x0;
    if (op->operand_count != 1 || !(x0 = cv_lookup(c, s, op, op->operands[0]))) return false;
    cxla_type out_t = x0->shape.type;
    if (!cxla_type_is_float(out_t)) return cv_fail(c, op, "erf_inv needs a float operand");
    if (out_t == CXLA_F64)
        return cv_fail(c, op,
                       "not supported: chlo.erf_inv of f64 (XLA's ErfInv64 is not lowered yet)");
    cxla_instr *x = convert_to(c, s, op, x0, CXLA_F32);
    if (!x) return false;
#define K(v)       full(c, s, op, x, (v))
#define B(o, a, b) binary(c, s, op, CXLA_OP_##o, (a), (b))
#define U(o, a)    (a ? unary(c, s, op, CXLA_OP_##o, (a)) : NULL)
    cxla_instr *w = U(NEGATE, U(LOG1P, U(NEGATE, B(MULTIPLY, x, x))));
    cxla_instr *low = cmp(c, s, op, "LT", w, K(5.0));
    cxla_instr *t = sel(c, s, op, low, B(SUBTRACT, w, K(2.5)), B(SUBTRACT, U(SQRT, w), K(3.0)));
    cxla_instr *p = sel(c, s, op, low, K(kLow[0]), K(kHigh[0]));
    for (int i = 1; i < 9 && p; i++)
        p = B(ADD, sel(c, s, op, low, K(kLow[i]), K(kHigh[i])), B(MULTIPLY, p, t));
    cxla_instr *r = B(MULTIPLY, p, x);
    cxla_instr *one = cmp(c, s, op, "EQ", U(ABS, x), K(1.0));
    r = sel(c, s, op, one, B(MULTIPLY, x, K(INFINITY)), r);
#undef K
#undef B
#undef U
    r = convert_to(c, s, op, r, out_t);
    return r && cv_bind_results(c, s, op, r);
}

bool cv_chlo(cv *c, cv_scope *s, const mlir_op *op, bool *handled) {
    *handled = true;
    const char *nm = op->name + 5;
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(kDirect); i++) {
        if (strcmp(nm, kDirect[i].name) != 0) continue;
        cxla_instr *ops[2];
        int64_t n;
        if (!cv_operands(c, s, op, ops, 2, &n)) return false;
        const cxla_shape *rs = out0(c, op);
        cxla_instr *in = rs ? cv_emit(c, s, op, kDirect[i].opcode, rs, n, ops) : NULL;
        return in && cv_bind_results(c, s, op, in);
    }
    if (strcmp(nm, "top_k") == 0) return top_k(c, s, op);
    if (strcmp(nm, "scan") == 0) return cv_scan(c, s, op);
    if (strcmp(nm, "lgamma") == 0) return lgamma_op(c, s, op);
    if (strcmp(nm, "erf_inv") == 0) return erf_inv_op(c, s, op);
    if (strcmp(nm, "ragged_dot") == 0) return ragged_dot(c, s, op);
    if (strcmp(nm, "erfc") == 0) {
        cxla_instr *x;
        if (op->operand_count != 1 || !(x = cv_lookup(c, s, op, op->operands[0]))) return false;
        cxla_instr *r = binary(c, s, op, CXLA_OP_SUBTRACT, full(c, s, op, x, 1.0),
                               unary(c, s, op, CXLA_OP_ERF, x));
        return r && cv_bind_results(c, s, op, r);
    }
    *handled = false;
    return true;
}
