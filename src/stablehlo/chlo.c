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
    {"tan", CXLA_OP_TAN},     {"erf", CXLA_OP_ERF},     {"mulhi", CXLA_OP_MULHI},
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
    if (!(x = cv_one_operand(c, s, op))) return false;
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
    if (!(x0 = cv_one_operand(c, s, op))) return false;
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
    /* (z + 1/2) log t - t written as (z + 1/2 - t / log t) log t, which does not overflow
     * to inf - inf for large z (as XLA) */
    cxla_instr *log_y =
        B(ADD,
          B(ADD, K(0.91893853320467274178),
            B(MULTIPLY, B(SUBTRACT, B(ADD, z, K(0.5)), B(DIVIDE, t, log_t)), log_t)),
          U(LOG, a));
    /* reflection: lgamma(x) = log(pi) - log|sin(pi x)| - lgamma(1 - x). |sin(pi x)| is
     * taken at the fractional part of |x| folded into [0, 1/2], so it is exactly 0 at the
     * integers (lgamma = +inf there) and pi x does not lose precision for large x. */
    cxla_instr *ax = U(ABS, x);
    cxla_instr *frac = B(SUBTRACT, ax, U(FLOOR, ax));
    frac = sel(c, s, op, cmp(c, s, op, "GT", frac, K(0.5)), B(SUBTRACT, K(1.0), frac), frac);
    cxla_instr *log_sin = U(LOG, U(SIN, B(MULTIPLY, K(3.14159265358979323846), frac)));
    cxla_shape ps = x->shape;
    ps.type = CXLA_PRED;
    ps.layout = NULL;
    cxla_instr *finite = log_sin ? cv_emit(c, s, op, CXLA_OP_IS_FINITE, &ps, 1, &log_sin) : NULL;
    cxla_instr *refl =
        sel(c, s, op, finite, B(SUBTRACT, B(SUBTRACT, K(1.1447298858494002), log_sin), log_y),
            U(NEGATE, log_sin));
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

/* The special functions below are built from element-wise HLO as XLA's client math
 * library builds them (xla/hlo/builder/lib/math.cc, and the CHLO legalization that
 * mirrors it): f64 computes in f64, every narrower float type in f32 and converts back. */
typedef cxla_instr *(*math_fn)(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x);

static bool unary_math(cv *c, cv_scope *s, const mlir_op *op, const char *what, math_fn fn) {
    cxla_instr *x0;
    if (!(x0 = cv_one_operand(c, s, op))) return false;
    cxla_type out_t = x0->shape.type;
    if (!cxla_type_is_float(out_t)) return cv_fail(c, op, "%s needs a real float operand", what);
    cxla_instr *x = convert_to(c, s, op, x0, out_t == CXLA_F64 ? CXLA_F64 : CXLA_F32);
    cxla_instr *r = x ? fn(c, s, op, x) : NULL;
    r = convert_to(c, s, op, r, out_t);
    return r && cv_bind_results(c, s, op, r);
}

#define K(v)       full(c, s, op, x, (v))
#define B(o, a, b) binary(c, s, op, CXLA_OP_##o, (a), (b))
#define U(o, a)    ((a) ? unary(c, s, op, CXLA_OP_##o, (a)) : NULL)

/* sum of coefficients[i] * T_i by Clenshaw's recurrence as Cephes' chbevl: b0 = t*b1 - b2
 * + c for each coefficient (highest order first), then (b0 - b2) / 2. */
static cxla_instr *chebyshev(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x, cxla_instr *t,
                             const double *coeff, int n) {
    cxla_instr *b0 = K(0.0), *b1 = K(0.0), *b2 = NULL;
    for (int i = 0; i < n && b0; i++) {
        b2 = b1;
        b1 = b0;
        b0 = B(ADD, B(SUBTRACT, B(MULTIPLY, t, b1), b2), K(coeff[i]));
    }
    return B(MULTIPLY, B(SUBTRACT, b0, b2), K(0.5));
}

/* erf^-1(x) by Giles' approximations ("Approximating the erfinv function", GPU Computing
 * Gems) in w = -log1p(-x^2), as XLA's ErfInv32 / ErfInv64; +-1 give +-inf.
 * f32: a degree-8 polynomial in w - 2.5 below w = 5, in sqrt(w) - 3 above.
 * f64: degree 22 in w - 3.125 below 6.25, degree 18 in sqrt(w) - 3.25 below 16, degree 16
 * in sqrt(w) - 5 above. */
static cxla_instr *erf_inv32(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x) {
    static const double kLow[] = {2.81022636e-08,  3.43273939e-07, -3.5233877e-06,
                                  -4.39150654e-06, 0.00021858087,  -0.00125372503,
                                  -0.00417768164,  0.246640727,    1.50140941};
    static const double kHigh[] = {-0.000200214257, 0.000100950558, 0.00134934322,
                                   -0.00367342844,  0.00573950773,  -0.0076224613,
                                   0.00943887047,   1.00167406,     2.83297682};
    cxla_instr *w = U(NEGATE, U(LOG1P, U(NEGATE, B(MULTIPLY, x, x))));
    cxla_instr *low = cmp(c, s, op, "LT", w, K(5.0));
    cxla_instr *t = sel(c, s, op, low, B(SUBTRACT, w, K(2.5)), B(SUBTRACT, U(SQRT, w), K(3.0)));
    cxla_instr *p = sel(c, s, op, low, K(kLow[0]), K(kHigh[0]));
    for (int i = 1; i < 9 && p; i++)
        p = B(ADD, sel(c, s, op, low, K(kLow[i]), K(kHigh[i])), B(MULTIPLY, p, t));
    cxla_instr *one = cmp(c, s, op, "EQ", U(ABS, x), K(1.0));
    return sel(c, s, op, one, B(MULTIPLY, x, K(INFINITY)), B(MULTIPLY, p, x));
}

static cxla_instr *erf_inv64(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x) {
    static const double kLt625[23] = {
        -3.6444120640178196996e-21, -1.685059138182016589e-19,  1.2858480715256400167e-18,
        1.115787767802518096e-17,   -1.333171662854620906e-16,  2.0972767875968561637e-17,
        6.6376381343583238325e-15,  -4.0545662729752068639e-14, -8.1519341976054721522e-14,
        2.6335093153082322977e-12,  -1.2975133253453532498e-11, -5.4154120542946279317e-11,
        1.051212273321532285e-09,   -4.1126339803469836976e-09, -2.9070369957882005086e-08,
        4.2347877827932403518e-07,  -1.3654692000834678645e-06, -1.3882523362786468719e-05,
        0.0001867342080340571352,   -0.00074070253416626697512, -0.0060336708714301490533,
        0.24015818242558961693,     1.6536545626831027356};
    static const double kLt16[19] = {
        2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
        1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
        2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
        6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
        0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
        -0.0037512085075692412107, 0.005370914553590063617,   1.0052589676941592334,
        3.0838856104922207635};
    static const double kGe16[17] = {
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09,  -1.4960026627149240478e-08,
        2.9147953450901080826e-08,  -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06,  -1.9681778105531670567e-05,
        7.5995277030017761139e-05,  -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977,      4.8499064014085844221};
    cxla_instr *w = U(NEGATE, U(LOG1P, U(NEGATE, B(MULTIPLY, x, x))));
    cxla_instr *lt625 = cmp(c, s, op, "LT", w, K(6.25));
    cxla_instr *lt16 = cmp(c, s, op, "LT", w, K(16.0));
    cxla_instr *t = sel(c, s, op, lt625, B(SUBTRACT, w, K(3.125)),
                        B(SUBTRACT, U(SQRT, w), sel(c, s, op, lt16, K(3.25), K(5.0))));
    /* The three polynomials run in step, aligned at their highest-order terms; the
     * shorter ones stop (keep p) once their coefficients run out. */
    cxla_instr *p = NULL;
    for (int i = 0; i < 23; i++) {
        cxla_instr *k = K(kLt625[i]);
        if (i < 19) k = sel(c, s, op, lt625, k, K(kLt16[i]));
        if (i < 17) k = sel(c, s, op, lt16, k, K(kGe16[i]));
        if (i == 0) {
            p = k;
            continue;
        }
        cxla_instr *next = B(ADD, k, B(MULTIPLY, p, t));
        if (i >= 19)
            next = sel(c, s, op, lt625, next, p);
        else if (i >= 17)
            next = sel(c, s, op, lt16, next, p);
        p = next;
        if (!p) return NULL;
    }
    cxla_instr *one = cmp(c, s, op, "EQ", U(ABS, x), K(1.0));
    return sel(c, s, op, one, B(MULTIPLY, x, K(INFINITY)), B(MULTIPLY, p, x));
}

static cxla_instr *erf_inv(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x) {
    return x->shape.type == CXLA_F64 ? erf_inv64(c, s, op, x) : erf_inv32(c, s, op, x);
}

/* The Lanczos series of lgamma_op (g = 7, 9 terms). */
static const double kLanczosG = 7.0;
static const double kLanczosBase = 0.99999999999980993227684700473478;
static const double kLanczos[8] = {
    676.520368121885098567009190444019, -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,   -176.61502916214059906584551354,
    12.507343278686904814458936853,     -0.13857109526572011689554707,
    9.984369578019570859563e-6,         1.50563273514931155834e-7};

/* digamma(z + 1) = log(t) + A'(z) / A(z) - g / t with t = z + g + 1/2 and A the Lanczos
 * sum (A' its derivative); z = x - 1, or z = -x below 1/2 with the reflection
 * digamma(x) = digamma(1 - x) - pi cot(pi x), x first shifted into [-1/2, 1/2] so pi x
 * keeps its precision. Zero and the negative integers are poles: -inf at zero (+0 and -0),
 * where the two one-sided limits agree, NaN at the negative integers, where they do not;
 * as StableHLO's CHLO legalization and XLA's client Digamma give now (older versions of
 * both gave NaN at zero too). */
static cxla_instr *digamma(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x) {
    const double pi = 3.14159265358979323846;
    cxla_instr *reflect = cmp(c, s, op, "LT", x, K(0.5));
    cxla_instr *z = sel(c, s, op, reflect, U(NEGATE, x), B(SUBTRACT, x, K(1.0)));
    cxla_instr *num = K(0.0), *den = K(kLanczosBase);
    for (int i = 0; i < 8 && den; i++) {
        cxla_instr *zk = B(ADD, z, K(i + 1.0));
        num = B(SUBTRACT, num, B(DIVIDE, K(kLanczos[i]), B(MULTIPLY, zk, zk)));
        den = B(ADD, den, B(DIVIDE, K(kLanczos[i]), zk));
    }
    cxla_instr *t = B(ADD, z, K(kLanczosG + 0.5));
    cxla_instr *log_t = B(ADD, K(log(kLanczosG + 0.5)), U(LOG1P, B(DIVIDE, z, K(kLanczosG + 0.5))));
    cxla_instr *y = B(SUBTRACT, B(ADD, log_t, B(DIVIDE, num, den)), B(DIVIDE, K(kLanczosG), t));
    cxla_instr *reduced = B(ADD, x, U(ABS, U(FLOOR, B(ADD, x, K(0.5)))));
    cxla_instr *pix = B(MULTIPLY, K(pi), reduced);
    cxla_instr *refl = B(SUBTRACT, y, B(DIVIDE, B(MULTIPLY, K(pi), U(COS, pix)), U(SIN, pix)));
    cxla_instr *r = sel(c, s, op, reflect, refl, y);
    cxla_instr *pole = B(AND, cmp(c, s, op, "LT", x, K(0.0)), cmp(c, s, op, "EQ", x, U(FLOOR, x)));
    r = sel(c, s, op, pole, K(NAN), r);
    return sel(c, s, op, cmp(c, s, op, "EQ", x, K(0.0)), K(-INFINITY), r);
}

/* exp(-|x|) I1(x) by Cephes' i1e: Chebyshev expansions in |x|/2 - 2 up to |x| = 8 (times
 * |x|) and in 32/|x| - 2 beyond (over sqrt|x|), with x's sign. f32 uses the shorter
 * single-precision tables (the double ones' last 17 and 7 terms, rounded to f32). */
static cxla_instr *bessel_i1e(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x) {
    static const double kA[29] = {
        2.77791411276104639959E-18,  -2.11142121435816608115E-17, 1.55363195773620046921E-16,
        -1.10559694773538630805E-15, 7.60068429473540693410E-15,  -5.04218550472791168711E-14,
        3.22379336594557470981E-13,  -1.98397439776494371520E-12, 1.17361862988909016308E-11,
        -6.66348972350202774223E-11, 3.62559028155211703701E-10,  -1.88724975172282928790E-9,
        9.38153738649577178388E-9,   -4.44505912879632808065E-8,  2.00329475355213526229E-7,
        -8.56872026469545474066E-7,  3.47025130813767847674E-6,   -1.32731636560394358279E-5,
        4.78156510755005422638E-5,   -1.61760815825896745588E-4,  5.12285956168575772895E-4,
        -1.51357245063125314899E-3,  4.15642294431288815669E-3,   -1.05640848946261981558E-2,
        2.47264490306265168283E-2,   -5.29459812080949914269E-2,  1.02643658689847095384E-1,
        -1.76416518357834055153E-1,  2.52587186443633654823E-1};
    static const double kB[25] = {
        7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17,
        -3.20952592199342395980E-17, 2.96262899764595013876E-16,  3.30820231092092828324E-16,
        -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
        4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
        -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,
        3.25260358301548823856E-11,  -1.89749581235054123450E-11, -5.58974346219658380687E-10,
        -3.83538038596423702205E-9,  -2.63146884688951950684E-8,  -2.51223623787020892529E-7,
        -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
        7.78576235018280120474E-1};
    bool f64 = x->shape.type == CXLA_F64;
    int na = f64 ? 29 : 17, nb = f64 ? 25 : 7;
    cxla_instr *z = U(ABS, x);
    cxla_instr *le8 =
        B(MULTIPLY, z,
          chebyshev(c, s, op, x, B(SUBTRACT, B(MULTIPLY, K(0.5), z), K(2.0)), kA + 29 - na, na));
    cxla_instr *gt8 =
        B(DIVIDE,
          chebyshev(c, s, op, x, B(SUBTRACT, B(DIVIDE, K(32.0), z), K(2.0)), kB + 25 - nb, nb),
          U(SQRT, z));
    return B(MULTIPLY, U(SIGN, x), sel(c, s, op, cmp(c, s, op, "LE", z, K(8.0)), le8, gt8));
}

/* erfc in f32 as CHLO's lowering computes it (materializeErfcApproximationF32, from
 * Cephes' erfcf): 1 - erf(x) below |x| = 1, where nothing cancels; beyond, exp(-x^2) / |x|
 * times a polynomial in 1/x^2 (one for |x| < 2, one above), and 2 minus that for
 * negative x. So tiny results stay tiny instead of flushing to zero as 1 - erf(x) does. */
static cxla_instr *erfc_f32(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x) {
    static const double kP[9] = {
        2.326819970068386E-2,  -1.387039388740657E-1, 3.687424674597105E-1,
        -5.824733027278666E-1, 6.210004621745983E-1,  -4.944515323274145E-1,
        3.404879937665872E-1,  -2.741127028184656E-1, 5.638259427386472E-1};
    static const double kR[8] = {-1.047766399936249E1,  1.297719955372516E1,  -7.495518717768503E0,
                                 2.921019019210786E0,   -1.015265279202700E0, 4.218463358204948E-1,
                                 -2.820767439740514E-1, 5.641895067754075E-1};
    cxla_instr *ax = U(ABS, x);
    cxla_instr *q = B(DIVIDE, K(1.0), ax);
    cxla_instr *y = B(MULTIPLY, q, q);
    cxla_instr *p = K(0.0), *r = K(0.0);
    for (int i = 0; i < 9; i++) p = B(ADD, B(MULTIPLY, p, y), K(kP[i]));
    for (int i = 0; i < 8; i++) r = B(ADD, B(MULTIPLY, r, y), K(kR[i]));
    cxla_instr *poly = sel(c, s, op, cmp(c, s, op, "LT", ax, K(2.0)), p, r);
    cxla_instr *big = B(MULTIPLY, B(MULTIPLY, U(EXP, U(NEGATE, B(MULTIPLY, x, x))), q), poly);
    big = sel(c, s, op, cmp(c, s, op, "LT", x, K(0.0)), B(SUBTRACT, K(2.0), big), big);
    cxla_instr *small = B(SUBTRACT, K(1.0), U(ERF, x));
    return sel(c, s, op, cmp(c, s, op, "LT", ax, K(1.0)), small, big);
}

/* chlo.next_after(x, y): the representable value next to x in the direction of y, as
 * C's nextafter and CHLO's lowering: NaN if either is NaN; y when x == y; the smallest
 * subnormal with y's sign when x is zero; otherwise x's bit pattern plus one (away from
 * zero: x and y of one sign with |x| < |y|) or minus one (toward zero). IEEE-style
 * types only: the bit steps of the fn/fnuz/fnu encodings are not the value's. */
static bool next_after(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[2];
    int64_t n;
    if (!cv_operands(c, s, op, ops, 2, &n)) return false;
    if (n != 2) return cv_fail(c, op, "next_after takes two operands");
    cxla_instr *x = ops[0], *y = ops[1];
    cxla_type t = x->shape.type;
    int bits = cxla_type_bits(t);
    if (!cxla_type_is_float(t) || cxla_type_get_info(t)->float_kind != CXLA_FLOAT_IEEE ||
        (bits != 8 && bits != 16 && bits != 32 && bits != 64))
        return cv_fail(c, op,
                       "next_after needs an IEEE float type (f16, bf16, f32, f64, f8e5m2, "
                       "f8e4m3, f8e3m4), not %s",
                       cxla_type_name(t));
    cxla_type it = bits == 64 ? CXLA_S64 : bits == 32 ? CXLA_S32 : bits == 16 ? CXLA_S16 : CXLA_S8;
    cxla_shape ish = x->shape;
    ish.type = it;
    ish.layout = NULL;
    cxla_instr *xi = cv_emit(c, s, op, CXLA_OP_BITCAST_CONVERT, &ish, 1, &x);
    cxla_instr *one = xi ? full(c, s, op, xi, 1.0) : NULL;
    cxla_instr *zero = full(c, s, op, x, 0.0);
#define B2(o, a, b) binary(c, s, op, CXLA_OP_##o, (a), (b))
    cxla_instr *x_neg = cmp(c, s, op, "LT", xi, full(c, s, op, xi, 0.0));
    cxla_instr *yi = cv_emit(c, s, op, CXLA_OP_BITCAST_CONVERT, &ish, 1, &y);
    cxla_instr *y_neg = cmp(c, s, op, "LT", yi, full(c, s, op, xi, 0.0));
    cxla_instr *ax = x ? unary(c, s, op, CXLA_OP_ABS, x) : NULL;
    cxla_instr *ay = y ? unary(c, s, op, CXLA_OP_ABS, y) : NULL;
    cxla_instr *away = B2(AND, cmp(c, s, op, "EQ", x_neg, y_neg), cmp(c, s, op, "LT", ax, ay));
    cxla_instr *stepped = sel(c, s, op, away, B2(ADD, xi, one), B2(SUBTRACT, xi, one));
    cxla_instr *r =
        stepped ? cv_emit(c, s, op, CXLA_OP_BITCAST_CONVERT, &x->shape, 1, &stepped) : NULL;
    /* The smallest subnormal: the bit pattern 1, with y's sign. */
    cxla_instr *tiny = one ? cv_emit(c, s, op, CXLA_OP_BITCAST_CONVERT, &x->shape, 1, &one) : NULL;
    cxla_instr *signed_tiny =
        sel(c, s, op, y_neg, tiny ? unary(c, s, op, CXLA_OP_NEGATE, tiny) : NULL, tiny);
    r = sel(c, s, op, cmp(c, s, op, "EQ", x, zero), signed_tiny, r);
    r = sel(c, s, op, cmp(c, s, op, "EQ", x, y), y, r);
    cxla_instr *nan = B2(OR, cmp(c, s, op, "NE", x, x), cmp(c, s, op, "NE", y, y));
    r = sel(c, s, op, nan, full(c, s, op, x, NAN), r);
#undef B2
    return r && cv_bind_results(c, s, op, r);
}

#undef K
#undef B
#undef U

/* sinh and cosh as CHLO lowers them (ChloLegalizeToStablehlo's materializeSinhApproximation
 * and materializeCoshApproximation), so that results agree with the reference in the
 * range where the formulas round differently from libm: e^(x + log(1/2)) -+ e^(-x +
 * log(1/2)), which does not overflow where e^x does but e^x / 2 does not; sinh of |x| < 1
 * as (expm1(x) + expm1(x) / (expm1(x) + 1)) / 2, free of cancellation. f16 and bf16
 * compute in f32. Complex operands keep the sinh and cosh opcodes. */
static bool sinh_cosh(cv *c, cv_scope *s, const mlir_op *op, bool is_sinh) {
    cxla_instr *x0;
    if (!(x0 = cv_one_operand(c, s, op))) return false;
    cxla_type out_t = x0->shape.type;
    if (cxla_type_is_complex(out_t)) {
        cxla_instr *in = unary(c, s, op, is_sinh ? CXLA_OP_SINH : CXLA_OP_COSH, x0);
        return in && cv_bind_results(c, s, op, in);
    }
    if (!cxla_type_is_float(out_t))
        return cv_fail(c, op, "%s needs a float operand", is_sinh ? "sinh" : "cosh");
    cxla_instr *x = convert_to(c, s, op, x0, cxla_type_bits(out_t) < 32 ? CXLA_F32 : out_t);
    if (!x) return false;
#define K(v)       full(c, s, op, x, (v))
#define B(o, a, b) binary(c, s, op, CXLA_OP_##o, (a), (b))
#define U(o, a)    ((a) ? unary(c, s, op, CXLA_OP_##o, (a)) : NULL)
    cxla_instr *log_half = U(LOG, K(0.5));
    cxla_instr *e_add = U(EXP, B(ADD, x, log_half));
    cxla_instr *e_sub = U(EXP, B(SUBTRACT, log_half, x));
    cxla_instr *r = is_sinh ? B(SUBTRACT, e_add, e_sub) : B(ADD, e_add, e_sub);
    if (is_sinh) {
        cxla_instr *em1 = U(EXPM1, x);
        cxla_instr *small = B(MULTIPLY, K(0.5), B(ADD, em1, B(DIVIDE, em1, B(ADD, em1, K(1.0)))));
        r = sel(c, s, op, cmp(c, s, op, "LT", U(ABS, x), K(1.0)), small, r);
    }
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
    if (strcmp(nm, "sinh") == 0) return sinh_cosh(c, s, op, true);
    if (strcmp(nm, "cosh") == 0) return sinh_cosh(c, s, op, false);
    if (strcmp(nm, "erf_inv") == 0) return unary_math(c, s, op, "erf_inv", erf_inv);
    if (strcmp(nm, "digamma") == 0) return unary_math(c, s, op, "digamma", digamma);
    if (strcmp(nm, "bessel_i1e") == 0) return unary_math(c, s, op, "bessel_i1e", bessel_i1e);
    if (strcmp(nm, "ragged_dot") == 0) return ragged_dot(c, s, op);
    if (strcmp(nm, "next_after") == 0) return next_after(c, s, op);
    if (strcmp(nm, "erfc") == 0) {
        cxla_instr *x;
        if (!(x = cv_one_operand(c, s, op))) return false;
        if (x->shape.type != CXLA_F64) {
            /* f32 and narrower: CHLO's f32 approximation, in f32 (so bf16 and f16 keep
             * results that 1 - erf(x) would flush to zero). */
            if (!cxla_type_is_float(x->shape.type))
                return cv_fail(c, op, "erfc needs a real float operand");
            cxla_instr *r = convert_to(
                c, s, op, erfc_f32(c, s, op, convert_to(c, s, op, x, CXLA_F32)), x->shape.type);
            return r && cv_bind_results(c, s, op, r);
        }
        cxla_instr *r = binary(c, s, op, CXLA_OP_SUBTRACT, full(c, s, op, x, 1.0),
                               unary(c, s, op, CXLA_OP_ERF, x));
        return r && cv_bind_results(c, s, op, r);
    }
    *handled = false;
    return true;
}
