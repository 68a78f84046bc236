/* The interpreter's elementwise family, on whole ranges of inputs: every bit pattern of
 * the f8 and f4 types through unary and binary operations, f16/bf16 on samples, f32 and
 * f64 transcendental functions in ulps against long double libm, the integer operations
 * exhaustively on the 8-bit and sub-byte types against a reference written here from
 * XLA's rules, conversions against the literal module's element-by-element converter,
 * and the error paths the verifier would normally keep away. Instructions are built in
 * memory and their handlers called directly, so nothing here needs the parser. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

/* ---- random numbers --------------------------------------------------------------- */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- building instructions and literals --------------------------------------------- */

static cxla_module *mod;
static cxla_computation *comp;
static int counter;

static void begin(void) {
    CHECK_OK(cxla_module_create("m", &mod));
    CHECK_OK(cxla_module_add_computation(mod, "c", &comp));
}

static void end(void) {
    cxla_module_destroy(mod);
    mod = NULL;
    comp = NULL;
}

static cxla_instr *instr(cxla_opcode op, cxla_type type, int64_t rank, const int64_t *dims,
                         int64_t operand_count) {
    cxla_shape s = {.type = type, .rank = rank, .dims = (int64_t *)dims};
    char name[32];
    snprintf(name, sizeof(name), "i%d", counter++);
    cxla_instr *ops[4] = {NULL, NULL, NULL, NULL};
    cxla_instr *in = NULL;
    CHECK_OK(cxla_computation_add_instr(comp, op, name, &s, operand_count, ops, &in));
    return in;
}

static cxla_instr *instr1(cxla_opcode op, cxla_type type, int64_t n, int64_t operand_count) {
    return instr(op, type, 1, &n, operand_count);
}

static void set_word(cxla_instr *in, cxla_attr_id id, const char *word) {
    cxla_attr a = {.id = id, .name = cxla_attr_get_info(id)->name, .kind = CXLA_ATTR_KIND_WORD};
    a.v.s = word;
    CHECK_OK(cxla_instr_set_attr(in, &a));
}

static void set_int(cxla_instr *in, cxla_attr_id id, int64_t v) {
    cxla_attr a = {.id = id, .name = cxla_attr_get_info(id)->name, .kind = CXLA_ATTR_KIND_INT};
    a.v.i = v;
    CHECK_OK(cxla_instr_set_attr(in, &a));
}

static cxla_literal *vec(cxla_type t, int64_t n) {
    cxla_shape s = {.type = t, .rank = 1, .dims = &n};
    cxla_literal *l = NULL;
    CHECK_OK(cxla_literal_create(&s, &l));
    return l;
}

static cxla_status run(const cxla_instr *in, const cxla_literal *a, const cxla_literal *b,
                       const cxla_literal *c, cxla_literal **out) {
    interp_ctx ctx;
    memset(&ctx, 0, sizeof(ctx));
    const cxla_literal *ops[3] = {a, b, c};
    interp_op_fn fn = interp_handler(in->opcode);
    if (!fn) return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "no handler");
    *out = NULL;
    return fn(&ctx, in, ops, out);
}

/* Runs and checks success; NULL on failure. */
static cxla_literal *eval(const cxla_instr *in, const cxla_literal *a, const cxla_literal *b,
                          const cxla_literal *c) {
    cxla_literal *out = NULL;
    cxla_status s = run(in, a, b, c, &out);
    if (s) {
        test_fail(__FILE__, __LINE__, "%s: %s", in->name, cxla_status_message(s));
        cxla_status_free(s);
        return NULL;
    }
    return out;
}

/* ---- small floats: bits, order, ulps ------------------------------------------------ */

static const cxla_type small_types[] = {
    CXLA_F16,           CXLA_BF16,     CXLA_F8E5M2,     CXLA_F8E4M3,     CXLA_F8E4M3FN,
    CXLA_F8E4M3B11FNUZ, CXLA_F8E3M4,   CXLA_F8E5M2FNUZ, CXLA_F8E4M3FNUZ, CXLA_F8E8M0FNU,
    CXLA_F4E2M1FN,      CXLA_F6E2M3FN, CXLA_F6E3M2FN,
};

static uint32_t get_bits(cxla_type t, const cxla_literal *l, int64_t i) {
    const unsigned char *p =
        (const unsigned char *)cxla_literal_data_const(l) + (size_t)i * cxla_type_storage(t);
    if (cxla_type_storage(t) == 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    return p[0] & ((1u << cxla_type_bits(t)) - 1); /* f4, f6: the low bits */
}

static void put_bits(cxla_type t, cxla_literal *l, int64_t i, uint32_t bits) {
    unsigned char *p = (unsigned char *)cxla_literal_data(l) + (size_t)i * cxla_type_storage(t);
    if (cxla_type_storage(t) == 2) {
        uint16_t v = (uint16_t)bits;
        memcpy(p, &v, 2);
    } else {
        p[0] = (unsigned char)bits;
    }
}

/* A monotone integer for the finite values of a small float: the sign-magnitude bits as
 * a signed number, so neighbours differ by one (e8m0fnu is unsigned). */
static int64_t ordinal(cxla_type t, uint32_t bits) {
    const cxla_type_info *info = cxla_type_get_info(t);
    if (info->float_kind == CXLA_FLOAT_FNU) return bits;
    uint32_t sign = 1u << (info->bits - 1);
    return bits & sign ? -(int64_t)(bits & (sign - 1)) : (int64_t)bits;
}

static bool same_value(cxla_type t, uint32_t a, uint32_t b, int ulps) {
    double x = cxla_float_to_double(t, a), y = cxla_float_to_double(t, b);
    if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
    if (ulps == 0 || isinf(x) || isinf(y)) return a == b;
    return llabs(ordinal(t, a) - ordinal(t, b)) <= ulps;
}

/* ---- references written here, from the operation semantics ---------------------------- */

static double ref_sign(double x) {
    if (isnan(x) || x == 0) return x;
    return x < 0 ? -1 : 1;
}

static double ref_unary(cxla_opcode op, double x) {
    switch (op) {
    case CXLA_OP_NEGATE: return -x;
    case CXLA_OP_ABS: return fabs(x);
    case CXLA_OP_SIGN: return ref_sign(x);
    case CXLA_OP_FLOOR: return floor(x);
    case CXLA_OP_CEIL: return ceil(x);
    case CXLA_OP_ROUND_NEAREST_AFZ: return round(x);
    case CXLA_OP_ROUND_NEAREST_EVEN: return nearbyint(x);
    case CXLA_OP_SQRT: return sqrt(x);
    case CXLA_OP_EXP: return exp(x);
    case CXLA_OP_LOG: return log(x);
    case CXLA_OP_SIN: return sin(x);
    case CXLA_OP_TANH: return tanh(x);
    case CXLA_OP_LOGISTIC: return 1 / (1 + exp(-x));
    case CXLA_OP_ERF: return erf(x);
    case CXLA_OP_CBRT: return cbrt(x);
    case CXLA_OP_ATAN: return atan(x);
    case CXLA_OP_EXPM1: return expm1(x);
    case CXLA_OP_LOG1P: return log1p(x);
    case CXLA_OP_RSQRT: return 1 / sqrt(x);
    default: return NAN;
    }
}

static double ref_max(double a, double b) {
    if (isnan(a) || isnan(b)) return NAN;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}

static double ref_min(double a, double b) {
    if (isnan(a) || isnan(b)) return NAN;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}

static double ref_binary(cxla_opcode op, double a, double b) {
    switch (op) {
    case CXLA_OP_ADD: return a + b;
    case CXLA_OP_SUBTRACT: return a - b;
    case CXLA_OP_MULTIPLY: return a * b;
    case CXLA_OP_DIVIDE: return a / b;
    case CXLA_OP_REMAINDER: return fmod(a, b);
    case CXLA_OP_MAXIMUM: return ref_max(a, b);
    case CXLA_OP_MINIMUM: return ref_min(a, b);
    case CXLA_OP_POWER: return pow(a, b);
    case CXLA_OP_ATAN2: return atan2(a, b);
    default: return NAN;
    }
}

/* ---- tests -------------------------------------------------------------------------- */

static void test_every_opcode_has_one_handler(void) {
    static const cxla_opcode ops[] = {
        CXLA_OP_IOTA,
        CXLA_OP_ABS,
        CXLA_OP_NEGATE,
        CXLA_OP_SIGN,
        CXLA_OP_NOT,
        CXLA_OP_FLOOR,
        CXLA_OP_CEIL,
        CXLA_OP_ROUND_NEAREST_AFZ,
        CXLA_OP_ROUND_NEAREST_EVEN,
        CXLA_OP_EXP,
        CXLA_OP_EXPM1,
        CXLA_OP_LOG,
        CXLA_OP_LOG1P,
        CXLA_OP_LOGISTIC,
        CXLA_OP_SQRT,
        CXLA_OP_RSQRT,
        CXLA_OP_CBRT,
        CXLA_OP_SIN,
        CXLA_OP_COS,
        CXLA_OP_TAN,
        CXLA_OP_TANH,
        CXLA_OP_ACOS,
        CXLA_OP_ACOSH,
        CXLA_OP_ASIN,
        CXLA_OP_ASINH,
        CXLA_OP_ATAN,
        CXLA_OP_ATANH,
        CXLA_OP_COSH,
        CXLA_OP_SINH,
        CXLA_OP_ERF,
        CXLA_OP_IS_FINITE,
        CXLA_OP_POPCNT,
        CXLA_OP_CLZ,
        CXLA_OP_REAL,
        CXLA_OP_IMAG,
        CXLA_OP_CONVERT,
        CXLA_OP_BITCAST_CONVERT,
        CXLA_OP_REDUCE_PRECISION,
        CXLA_OP_STOCHASTIC_CONVERT,
        CXLA_OP_ADD,
        CXLA_OP_SUBTRACT,
        CXLA_OP_MULTIPLY,
        CXLA_OP_DIVIDE,
        CXLA_OP_REMAINDER,
        CXLA_OP_POWER,
        CXLA_OP_ATAN2,
        CXLA_OP_MAXIMUM,
        CXLA_OP_MINIMUM,
        CXLA_OP_AND,
        CXLA_OP_OR,
        CXLA_OP_XOR,
        CXLA_OP_SHIFT_LEFT,
        CXLA_OP_SHIFT_RIGHT_ARITHMETIC,
        CXLA_OP_SHIFT_RIGHT_LOGICAL,
        CXLA_OP_COMPLEX,
        CXLA_OP_MULHI,
        CXLA_OP_COMPARE,
        CXLA_OP_SELECT,
        CXLA_OP_CLAMP,
    };
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        CHECK_MSG(interp_elementwise_ops[ops[i]] != NULL, "%s has no handler",
                  cxla_opcode_name(ops[i]));
        CHECK_MSG(interp_handler_count(ops[i]) == 1, "%s: %d handlers", cxla_opcode_name(ops[i]),
                  interp_handler_count(ops[i]));
    }
}

/* Every pattern of each f8/f4 type (a sample of f16/bf16) through unary operations,
 * against the double function rounded once into the type: exact for the exact
 * operations (and sqrt), within an ulp for the transcendental ones. */
static void test_small_float_unary_sweep(void) {
    static const cxla_opcode exact[] = {CXLA_OP_NEGATE,
                                        CXLA_OP_ABS,
                                        CXLA_OP_SIGN,
                                        CXLA_OP_FLOOR,
                                        CXLA_OP_CEIL,
                                        CXLA_OP_ROUND_NEAREST_AFZ,
                                        CXLA_OP_ROUND_NEAREST_EVEN,
                                        CXLA_OP_SQRT};
    static const cxla_opcode approx[] = {
        CXLA_OP_EXP,  CXLA_OP_LOG,  CXLA_OP_SIN,   CXLA_OP_TANH,  CXLA_OP_LOGISTIC, CXLA_OP_ERF,
        CXLA_OP_CBRT, CXLA_OP_ATAN, CXLA_OP_EXPM1, CXLA_OP_LOG1P, CXLA_OP_RSQRT};
    begin();
    for (size_t k = 0; k < sizeof(small_types) / sizeof(small_types[0]); k++) {
        cxla_type t = small_types[k];
        int bits = cxla_type_bits(t);
        int64_t n = bits <= 8 ? (int64_t)1 << bits : 65536;
        cxla_literal *x = vec(t, n);
        for (int64_t i = 0; i < n; i++) put_bits(t, x, i, (uint32_t)i);
        for (int pass = 0; pass < 2; pass++) {
            const cxla_opcode *ops = pass ? approx : exact;
            size_t count =
                pass ? sizeof(approx) / sizeof(approx[0]) : sizeof(exact) / sizeof(exact[0]);
            for (size_t j = 0; j < count; j++) {
                cxla_literal *r = eval(instr1(ops[j], t, n, 1), x, NULL, NULL);
                if (!r) continue;
                int bad = 0;
                for (int64_t i = 0; i < n && bad < 3; i++) {
                    double v = ref_unary(ops[j], cxla_float_to_double(t, (uint32_t)i));
                    if (cxla_type_get_info(t)->float_kind == CXLA_FLOAT_FN_NO_NAN && isnan(v))
                        continue; /* NaN's zero: host-defined sign */
                    uint32_t want = cxla_float_from_double(t, v), got = get_bits(t, r, i);
                    if (!same_value(t, got, want, pass)) {
                        bad++;
                        test_fail(__FILE__, __LINE__, "%s %s(0x%x): got 0x%x, want 0x%x",
                                  cxla_type_name(t), cxla_opcode_name(ops[j]), (unsigned)i, got,
                                  want);
                    }
                }
                cxla_literal_free(r);
            }
        }
        cxla_literal_free(x);
    }
    end();
}

/* Every pair of f8/f4 patterns (random pairs for f16/bf16) through binary operations:
 * + - * / rem max min exactly as the double result rounded once, power and atan2 within
 * an ulp. */
static void test_small_float_binary_sweep(void) {
    static const cxla_opcode ops[] = {CXLA_OP_ADD,     CXLA_OP_SUBTRACT,  CXLA_OP_MULTIPLY,
                                      CXLA_OP_DIVIDE,  CXLA_OP_REMAINDER, CXLA_OP_MAXIMUM,
                                      CXLA_OP_MINIMUM, CXLA_OP_POWER,     CXLA_OP_ATAN2};
    begin();
    for (size_t k = 0; k < sizeof(small_types) / sizeof(small_types[0]); k++) {
        cxla_type t = small_types[k];
        int bits = cxla_type_bits(t);
        int64_t n = bits <= 8 ? (int64_t)1 << (2 * bits) : 100000;
        cxla_literal *a = vec(t, n), *b = vec(t, n);
        for (int64_t i = 0; i < n; i++) {
            if (bits <= 8) {
                put_bits(t, a, i, (uint32_t)(i >> bits));
                put_bits(t, b, i, (uint32_t)(i & ((1 << bits) - 1)));
            } else {
                put_bits(t, a, i, (uint32_t)(rnd() & 0xffff));
                put_bits(t, b, i, (uint32_t)(rnd() & 0xffff));
            }
        }
        for (size_t j = 0; j < sizeof(ops) / sizeof(ops[0]); j++) {
            cxla_literal *r = eval(instr1(ops[j], t, n, 2), a, b, NULL);
            if (!r) continue;
            int ulps = ops[j] == CXLA_OP_POWER || ops[j] == CXLA_OP_ATAN2;
            int bad = 0;
            for (int64_t i = 0; i < n && bad < 3; i++) {
                uint32_t ba = get_bits(t, a, i), bb = get_bits(t, b, i);
                double x = cxla_float_to_double(t, ba), y = cxla_float_to_double(t, bb);
                double v = ref_binary(ops[j], x, y);
                /* The result is computed in f32, so f32 underflow and overflow apply. */
                v = (double)(float)v;
                if (cxla_type_get_info(t)->float_kind == CXLA_FLOAT_FN_NO_NAN && isnan(v)) continue;
                uint32_t want = cxla_float_from_double(t, v), got = get_bits(t, r, i);
                if (!same_value(t, got, want, ulps)) {
                    bad++;
                    test_fail(__FILE__, __LINE__, "%s %s(0x%x, 0x%x): got 0x%x, want 0x%x",
                              cxla_type_name(t), cxla_opcode_name(ops[j]), ba, bb, got, want);
                }
            }
            cxla_literal_free(r);
        }
        cxla_literal_free(a);
        cxla_literal_free(b);
    }
    end();
}

/* f32 and f64 transcendental functions in ulps against long double libm. */
typedef long double (*ld_fn)(long double);

static long double ld_logistic(long double x) {
    return 1.0L / (1.0L + expl(-x));
}

static long double ld_rsqrt(long double x) {
    return 1.0L / sqrtl(x);
}

static double ulp_error(long double got, long double want, int mant_bits, int min_exp) {
    if (isnan(want)) return isnan(got) ? 0 : INFINITY;
    if (isinf(want)) return got == want ? 0 : INFINITY;
    int e;
    frexpl(want, &e);
    if (e - 1 < min_exp) e = min_exp + 1;
    long double ulp = ldexpl(1.0L, e - 1 - mant_bits);
    return (double)(fabsl(got - want) / ulp);
}

static void test_transcendental_ulps(void) {
    if (LDBL_MANT_DIG <= DBL_MANT_DIG) return; /* no wider reference on this machine */
    static const struct {
        cxla_opcode op;
        ld_fn fn;
        double lo, hi;
    } fns[] = {
        {CXLA_OP_EXP, expl, -80, 80},
        {CXLA_OP_EXPM1, expm1l, -5, 5},
        {CXLA_OP_LOG, logl, 1e-30, 1e30},
        {CXLA_OP_LOG1P, log1pl, -0.9, 10},
        {CXLA_OP_SQRT, sqrtl, 0, 1e30},
        {CXLA_OP_RSQRT, ld_rsqrt, 1e-30, 1e30},
        {CXLA_OP_CBRT, cbrtl, -1e30, 1e30},
        {CXLA_OP_SIN, sinl, -1e4, 1e4},
        {CXLA_OP_COS, cosl, -1e4, 1e4},
        {CXLA_OP_TAN, tanl, -1e4, 1e4},
        {CXLA_OP_TANH, tanhl, -10, 10},
        {CXLA_OP_ACOS, acosl, -1, 1},
        {CXLA_OP_ASIN, asinl, -1, 1},
        {CXLA_OP_ATAN, atanl, -1e4, 1e4},
        {CXLA_OP_ACOSH, acoshl, 1, 1e10},
        {CXLA_OP_ASINH, asinhl, -1e10, 1e10},
        {CXLA_OP_ATANH, atanhl, -0.999, 0.999},
        {CXLA_OP_COSH, coshl, -80, 80},
        {CXLA_OP_SINH, sinhl, -80, 80},
        {CXLA_OP_ERF, erfl, -5, 5},
        {CXLA_OP_LOGISTIC, ld_logistic, -80, 80},
    };
    enum { N = 20000 };
    begin();
    for (size_t k = 0; k < sizeof(fns) / sizeof(fns[0]); k++) {
        cxla_literal *x32 = vec(CXLA_F32, N), *x64 = vec(CXLA_F64, N);
        float *p32 = cxla_literal_data(x32);
        double *p64 = cxla_literal_data(x64);
        for (int i = 0; i < N; i++) {
            double u = (double)(rnd() >> 11) / 9007199254740992.0;
            /* Half uniform, half log-uniform in magnitude, to reach small values too. */
            double v = fns[k].lo + u * (fns[k].hi - fns[k].lo);
            if (i % 2 && fns[k].lo >= 0 && fns[k].lo > 0)
                v = fns[k].lo * pow(fns[k].hi / fns[k].lo, u);
            p32[i] = (float)v;
            p64[i] = v;
        }
        cxla_literal *r32 = eval(instr1(fns[k].op, CXLA_F32, N, 1), x32, NULL, NULL);
        cxla_literal *r64 = eval(instr1(fns[k].op, CXLA_F64, N, 1), x64, NULL, NULL);
        if (r32 && r64) {
            const float *g32 = cxla_literal_data_const(r32);
            const double *g64 = cxla_literal_data_const(r64);
            double worst32 = 0, worst64 = 0;
            for (int i = 0; i < N; i++) {
                double e32 = ulp_error(g32[i], fns[k].fn(p32[i]), 23, -126);
                double e64 = ulp_error(g64[i], fns[k].fn(p64[i]), 52, -1022);
                if (e32 > worst32) worst32 = e32;
                if (e64 > worst64) worst64 = e64;
            }
            /* f32 goes through double and is rounded once: within 0.5 ulp plus a hair.
             * f64 is glibc's: a few ulps at most. */
            CHECK_MSG(worst32 <= 0.501, "%s f32: %.3f ulps", cxla_opcode_name(fns[k].op), worst32);
            CHECK_MSG(worst64 <= 4, "%s f64: %.3f ulps", cxla_opcode_name(fns[k].op), worst64);
        }
        cxla_literal_free(r32);
        cxla_literal_free(r64);
        cxla_literal_free(x32);
        cxla_literal_free(x64);
    }
    end();
}

/* f32 + - * / are IEEE f32 operations: equal to the double result rounded to f32 (the
 * double rounding is innocuous for these), NaNs aside. */
static void test_f32_arithmetic_is_exact(void) {
    static const cxla_opcode ops[] = {CXLA_OP_ADD, CXLA_OP_SUBTRACT, CXLA_OP_MULTIPLY,
                                      CXLA_OP_DIVIDE};
    enum { N = 50000 };
    begin();
    cxla_literal *a = vec(CXLA_F32, N), *b = vec(CXLA_F32, N);
    uint32_t *pa = cxla_literal_data(a), *pb = cxla_literal_data(b);
    for (int i = 0; i < N; i++) {
        pa[i] = (uint32_t)rnd();
        pb[i] = i % 3 ? (uint32_t)rnd() : (pa[i] ^ (uint32_t)(rnd() & 0xff)); /* near values */
    }
    for (size_t j = 0; j < sizeof(ops) / sizeof(ops[0]); j++) {
        cxla_literal *r = eval(instr1(ops[j], CXLA_F32, N, 2), a, b, NULL);
        if (!r) continue;
        const float *x = cxla_literal_data_const(a), *y = cxla_literal_data_const(b);
        const float *g = cxla_literal_data_const(r);
        int bad = 0;
        for (int i = 0; i < N && bad < 3; i++) {
            float want = (float)ref_binary(ops[j], x[i], y[i]);
            bool ok = (isnan(want) && isnan(g[i])) || memcmp(&want, &g[i], 4) == 0;
            if (!ok) {
                bad++;
                test_fail(__FILE__, __LINE__, "%s(%a, %a) = %a, want %a", cxla_opcode_name(ops[j]),
                          x[i], y[i], g[i], want);
            }
        }
        cxla_literal_free(r);
    }
    cxla_literal_free(a);
    cxla_literal_free(b);
    end();
}

/* ---- integers ------------------------------------------------------------------------ */

static int64_t wrap_to(int64_t v, int bits, bool is_signed) {
    uint64_t m = bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
    uint64_t u = (uint64_t)v & m;
    if (is_signed && bits < 64 && (u >> (bits - 1)) & 1) return (int64_t)(u | ~m);
    return (int64_t)u;
}

/* XLA's integer rules on values of at most 8 bits, in int64 arithmetic. */
static int64_t ref_int(cxla_opcode op, int64_t a, int64_t b, int bits, bool s) {
    int64_t min = s ? -((int64_t)1 << (bits - 1)) : 0;
    int64_t sa = wrap_to(a, bits, true); /* the bits read as signed */
    uint64_t ua = (uint64_t)wrap_to(a, bits, false), ub = (uint64_t)wrap_to(b, bits, false);
    int64_t r;
    switch (op) {
    case CXLA_OP_ADD: r = a + b; break;
    case CXLA_OP_SUBTRACT: r = a - b; break;
    case CXLA_OP_MULTIPLY: r = a * b; break;
    case CXLA_OP_DIVIDE: r = b == 0 ? -1 : (s && a == min && b == -1) ? min : a / b; break;
    case CXLA_OP_REMAINDER: r = b == 0 ? a : (s && a == min && b == -1) ? 0 : a % b; break;
    case CXLA_OP_POWER:
        if (s && b < 0) {
            r = a == 1;
        } else {
            r = 1;
            for (int64_t e = 0; e < b; e++) r = wrap_to(r * a, bits, s);
        }
        break;
    case CXLA_OP_MAXIMUM: r = a > b ? a : b; break;
    case CXLA_OP_MINIMUM: r = a < b ? a : b; break;
    case CXLA_OP_AND: r = a & b; break;
    case CXLA_OP_OR: r = a | b; break;
    case CXLA_OP_XOR: r = a ^ b; break;
    case CXLA_OP_SHIFT_LEFT: r = ub >= (uint64_t)bits ? 0 : (int64_t)(ua << ub); break;
    case CXLA_OP_SHIFT_RIGHT_ARITHMETIC:
        r = ub >= (uint64_t)bits
                ? (sa < 0 ? -1 : 0)
                : sa / ((int64_t)1 << ub) - (sa < 0 && sa % ((int64_t)1 << ub) != 0);
        break;
    case CXLA_OP_SHIFT_RIGHT_LOGICAL: r = ub >= (uint64_t)bits ? 0 : (int64_t)(ua >> ub); break;
    case CXLA_OP_MULHI: {
        int64_t p = a * b; /* exact: both fit in 8 bits */
        r = p >= 0 ? p / ((int64_t)1 << bits) : -((-p + ((int64_t)1 << bits) - 1) >> bits);
        break;
    }
    default: r = 0; break;
    }
    return wrap_to(r, bits, s);
}

static int64_t load_int(cxla_type t, const cxla_literal *l, int64_t i) {
    return cxla_load_s64(t, (const char *)cxla_literal_data_const(l) + i);
}

/* Every pair of values of the 8-bit and sub-byte integer types through every binary
 * operation. */
static void test_int_binary_exhaustive(void) {
    static const cxla_type types[] = {CXLA_S8, CXLA_U8, CXLA_S4, CXLA_U4,
                                      CXLA_S2, CXLA_U2, CXLA_S1, CXLA_U1};
    static const cxla_opcode ops[] = {CXLA_OP_ADD,
                                      CXLA_OP_SUBTRACT,
                                      CXLA_OP_MULTIPLY,
                                      CXLA_OP_DIVIDE,
                                      CXLA_OP_REMAINDER,
                                      CXLA_OP_POWER,
                                      CXLA_OP_MAXIMUM,
                                      CXLA_OP_MINIMUM,
                                      CXLA_OP_AND,
                                      CXLA_OP_OR,
                                      CXLA_OP_XOR,
                                      CXLA_OP_SHIFT_LEFT,
                                      CXLA_OP_SHIFT_RIGHT_ARITHMETIC,
                                      CXLA_OP_SHIFT_RIGHT_LOGICAL,
                                      CXLA_OP_MULHI};
    begin();
    for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
        cxla_type t = types[k];
        int bits = cxla_type_bits(t);
        bool s = cxla_type_is_signed(t);
        int64_t count = (int64_t)1 << bits, n = count * count;
        int64_t lo = s ? -(count / 2) : 0;
        cxla_literal *a = vec(t, n), *b = vec(t, n);
        for (int64_t i = 0; i < n; i++) {
            cxla_store_s64(t, (char *)cxla_literal_data(a) + i, lo + i / count);
            cxla_store_s64(t, (char *)cxla_literal_data(b) + i, lo + i % count);
        }
        for (size_t j = 0; j < sizeof(ops) / sizeof(ops[0]); j++) {
            cxla_literal *r = eval(instr1(ops[j], t, n, 2), a, b, NULL);
            if (!r) continue;
            int bad = 0;
            for (int64_t i = 0; i < n && bad < 3; i++) {
                int64_t x = load_int(t, a, i), y = load_int(t, b, i);
                int64_t want = ref_int(ops[j], x, y, bits, s), got = load_int(t, r, i);
                if (got != want) {
                    bad++;
                    test_fail(__FILE__, __LINE__, "%s %s(%lld, %lld) = %lld, want %lld",
                              cxla_type_name(t), cxla_opcode_name(ops[j]), (long long)x,
                              (long long)y, (long long)got, (long long)want);
                }
            }
            cxla_literal_free(r);
        }
        cxla_literal_free(a);
        cxla_literal_free(b);
    }
    end();
}

/* The 64-bit mulhi against a 128-bit product assembled from 32-bit halves by hand on a
 * few known values. */
static void test_mulhi_64(void) {
    begin();
    cxla_literal *a = vec(CXLA_S64, 4), *b = vec(CXLA_S64, 4);
    int64_t *pa = cxla_literal_data(a), *pb = cxla_literal_data(b);
    pa[0] = INT64_MIN, pb[0] = INT64_MIN;                    /* 2^126: high = 2^62 */
    pa[1] = -1, pb[1] = 1;                                   /* -1: high = -1 */
    pa[2] = INT64_MAX, pb[2] = 2;                            /* 2^64 - 2: high = 0 */
    pa[3] = ((int64_t)1 << 40), pb[3] = -((int64_t)1 << 30); /* -2^70: high = -2^6 */
    cxla_literal *r = eval(instr1(CXLA_OP_MULHI, CXLA_S64, 4, 2), a, b, NULL);
    if (r) {
        const int64_t *g = cxla_literal_data_const(r);
        CHECK_EQ_I64(g[0], (int64_t)1 << 62);
        CHECK_EQ_I64(g[1], -1);
        CHECK_EQ_I64(g[2], 0);
        CHECK_EQ_I64(g[3], -64);
    }
    cxla_literal_free(r);
    cxla_literal *ua = vec(CXLA_U64, 1), *ub = vec(CXLA_U64, 1);
    ((uint64_t *)cxla_literal_data(ua))[0] = UINT64_MAX;
    ((uint64_t *)cxla_literal_data(ub))[0] = UINT64_MAX; /* (2^64-1)^2: high = 2^64 - 2 */
    r = eval(instr1(CXLA_OP_MULHI, CXLA_U64, 1, 2), ua, ub, NULL);
    if (r) CHECK_EQ_U64(((const uint64_t *)cxla_literal_data_const(r))[0], UINT64_MAX - 1);
    cxla_literal_free(r);
    cxla_literal_free(a);
    cxla_literal_free(b);
    cxla_literal_free(ua);
    cxla_literal_free(ub);
    end();
}

/* compare with a comparison type that differs from the element type's own (the verifier
 * refuses it; the kernel reinterprets the bits). */
static void test_compare_reinterprets(void) {
    begin();
    cxla_literal *a = vec(CXLA_U8, 2), *b = vec(CXLA_U8, 2);
    uint8_t *pa = cxla_literal_data(a), *pb = cxla_literal_data(b);
    pa[0] = 255, pb[0] = 1; /* signed: -1 < 1 */
    pa[1] = 3, pb[1] = 2;
    cxla_instr *in = instr1(CXLA_OP_COMPARE, CXLA_PRED, 2, 2);
    set_word(in, CXLA_ATTR_DIRECTION, "LT");
    set_word(in, CXLA_ATTR_COMPARISON_TYPE, "SIGNED");
    cxla_literal *r = eval(in, a, b, NULL);
    if (r) {
        const uint8_t *g = cxla_literal_data_const(r);
        CHECK_EQ_I64(g[0], 1);
        CHECK_EQ_I64(g[1], 0);
    }
    cxla_literal_free(r);
    cxla_literal_free(a);
    cxla_literal_free(b);
    end();
}

/* convert between every pair of types agrees with the literal module's element-by-element
 * converter on random bit patterns (the typed fast paths against the generic one). */
static void test_convert_matches_literal_rules(void) {
    enum { N = 700 };
    begin();
    for (int from = CXLA_PRED; from <= CXLA_F6E3M2FN; from++) {
        cxla_type f = (cxla_type)from;
        cxla_literal *x = vec(f, N);
        size_t fs = cxla_type_storage(f);
        unsigned char *px = cxla_literal_data(x);
        for (int i = 0; i < N; i++) {
            uint64_t bits = rnd();
            if (i % 4 == 0) bits &= 0xff; /* small values */
            /* A valid stored element: random bits go through the type's own store. */
            if (cxla_type_is_integer(f) || f == CXLA_PRED)
                cxla_store_u64(f, px + (size_t)i * fs, bits);
            else if (cxla_type_is_complex(f) || f == CXLA_F32 || f == CXLA_F64)
                for (size_t k = 0; k < fs; k++)
                    px[(size_t)i * fs + k] = (unsigned char)(rnd() >> (8 * (k % 8)));
            else
                cxla_store_f64(
                    f, px + (size_t)i * fs,
                    cxla_float_to_double(
                        f, (uint32_t)(bits & (fs == 2 ? 0xffff : (1u << cxla_type_bits(f)) - 1))));
        }
        for (int to = CXLA_PRED; to <= CXLA_F6E3M2FN; to++) {
            cxla_type t = (cxla_type)to;
            cxla_literal *r = eval(instr1(CXLA_OP_CONVERT, t, N, 1), x, NULL, NULL);
            if (!r) continue;
            size_t ts = cxla_type_storage(t);
            int bad = 0;
            for (int i = 0; i < N && bad < 3; i++) {
                unsigned char want[16] = {0};
                cxla_convert_element(f, px + (size_t)i * fs, t, want);
                const unsigned char *got =
                    (const unsigned char *)cxla_literal_data_const(r) + (size_t)i * ts;
                bool ok = memcmp(got, want, ts) == 0;
                if (t == CXLA_PRED && cxla_type_is_float(f) &&
                    isnan(cxla_load_f64(f, px + (size_t)i * fs)))
                    ok = got[0] == 1; /* NaN != 0 is true (XLA: fcmp une) */
                if (!ok && cxla_type_is_float(t) && !cxla_type_is_small_float(t)) {
                    /* NaNs may differ in payload */
                    ok = isnan(cxla_load_f64(t, got)) && isnan(cxla_load_f64(t, want));
                }
                if (!ok && cxla_type_is_complex(t)) {
                    double gr, gi, wr, wi;
                    cxla_load_c128(t, got, &gr, &gi);
                    cxla_load_c128(t, want, &wr, &wi);
                    ok = (gr == wr || (isnan(gr) && isnan(wr))) &&
                         (gi == wi || (isnan(gi) && isnan(wi)));
                }
                if (!ok && cxla_type_is_small_float(t)) {
                    ok = isnan(cxla_load_f64(t, got)) && isnan(cxla_load_f64(t, want));
                }
                if (!ok) {
                    bad++;
                    test_fail(__FILE__, __LINE__, "convert %s -> %s differs at %d",
                              cxla_type_name(f), cxla_type_name(t), i);
                }
            }
            cxla_literal_free(r);
        }
        cxla_literal_free(x);
    }
    end();
}

/* Small floats run in chunks of 256: values across chunk boundaries, with scalar bounds
 * broadcast in clamp and a scalar predicate in select. */
static void test_chunks_and_broadcast(void) {
    enum { N = 1000 };
    begin();
    cxla_literal *x = vec(CXLA_BF16, N), *lo = NULL, *hi = NULL;
    for (int i = 0; i < N; i++) put_bits(CXLA_BF16, x, i, cxla_f32_to_bf16((float)(i - 500)));
    cxla_shape sc = {.type = CXLA_BF16};
    CHECK_OK(cxla_literal_create(&sc, &lo));
    CHECK_OK(cxla_literal_create(&sc, &hi));
    put_bits(CXLA_BF16, lo, 0, cxla_f32_to_bf16(-100.0f));
    put_bits(CXLA_BF16, hi, 0, cxla_f32_to_bf16(250.0f));
    cxla_literal *r = eval(instr1(CXLA_OP_CLAMP, CXLA_BF16, N, 3), lo, x, hi);
    if (r)
        for (int i = 0; i < N; i++) {
            float v = (float)(i - 500), want = v < -100 ? -100 : v > 250 ? 250 : v;
            if (cxla_bf16_to_f32((uint16_t)get_bits(CXLA_BF16, r, i)) != want) {
                test_fail(__FILE__, __LINE__, "clamp at %d", i);
                break;
            }
        }
    cxla_literal_free(r);
    cxla_literal *y = NULL;
    r = eval(instr1(CXLA_OP_ADD, CXLA_BF16, N, 2), x, x, NULL);
    if (r)
        for (int i = 0; i < N; i++)
            if (cxla_bf16_to_f32((uint16_t)get_bits(CXLA_BF16, r, i)) !=
                cxla_bf16_to_f32(cxla_f32_to_bf16(2.0f * (float)(i - 500)))) {
                test_fail(__FILE__, __LINE__, "add at %d", i);
                break;
            }
    cxla_literal_free(r);
    cxla_shape ps = {.type = CXLA_PRED};
    cxla_literal *p = NULL;
    CHECK_OK(cxla_literal_create(&ps, &p));
    ((uint8_t *)cxla_literal_data(p))[0] = 0;
    y = vec(CXLA_BF16, N);
    r = eval(instr1(CXLA_OP_SELECT, CXLA_BF16, N, 3), p, x, y);
    if (r) CHECK(memcmp(cxla_literal_data_const(r), cxla_literal_data_const(y), 2 * N) == 0);
    cxla_literal_free(r);
    cxla_literal_free(p);
    cxla_literal_free(y);
    cxla_literal_free(lo);
    cxla_literal_free(hi);
    cxla_literal_free(x);
    end();
}

/* The old form of select: a scalar predicate picks one of two tuples whole. */
static void test_select_tuples(void) {
    begin();
    cxla_literal *e1[1] = {vec(CXLA_S32, 2)}, *e2[1] = {vec(CXLA_S32, 2)};
    ((int32_t *)cxla_literal_data(e1[0]))[0] = 7;
    ((int32_t *)cxla_literal_data(e2[0]))[0] = 9;
    cxla_literal *t1 = NULL, *t2 = NULL, *p = NULL;
    CHECK_OK(cxla_literal_create_tuple(e1, 1, &t1));
    CHECK_OK(cxla_literal_create_tuple(e2, 1, &t2));
    cxla_shape ps = {.type = CXLA_PRED};
    CHECK_OK(cxla_literal_create(&ps, &p));
    cxla_instr *in = instr(CXLA_OP_SELECT, CXLA_TUPLE, 0, NULL, 3);
    for (int v = 0; v < 2; v++) {
        ((uint8_t *)cxla_literal_data(p))[0] = (uint8_t)v;
        cxla_literal *r = eval(in, p, t1, t2);
        if (r) {
            const cxla_literal *e = cxla_literal_tuple_element_const(r, 0);
            CHECK_EQ_I64(((const int32_t *)cxla_literal_data_const(e))[0], v ? 7 : 9);
        }
        cxla_literal_free(r);
    }
    cxla_literal *out = NULL;
    cxla_literal *pv = vec(CXLA_PRED, 1);
    CHECK_ERROR_HAS(run(in, pv, t1, t2, &out), "scalar predicate");
    cxla_literal_free(pv);
    cxla_literal_free(p);
    cxla_literal_free(t1);
    cxla_literal_free(t2);
    end();
}

/* Errors the verifier normally keeps away: the handlers report them, never crash. */
static void test_errors(void) {
    begin();
    cxla_literal *f = vec(CXLA_F32, 2), *s = vec(CXLA_S32, 2), *f3 = vec(CXLA_F32, 3), *out;
    CHECK_ERROR_HAS(run(instr1(CXLA_OP_ADD, CXLA_F32, 2, 2), f, s, NULL, &out),
                    "same element type");
    CHECK_ERROR_HAS(run(instr1(CXLA_OP_ADD, CXLA_F32, 2, 2), f, f3, NULL, &out), "dimensions");
    CHECK_ERROR_HAS(run(instr1(CXLA_OP_ADD, CXLA_S32, 2, 2), f, f, NULL, &out), "declared s32");
    CHECK_ERROR_HAS(run(instr1(CXLA_OP_AND, CXLA_F32, 2, 2), f, f, NULL, &out),
                    "not defined for f32");
    CHECK_ERROR_HAS(run(instr1(CXLA_OP_EXP, CXLA_S32, 2, 1), s, NULL, NULL, &out),
                    "not defined for s32");
    CHECK_ERROR_HAS(run(instr1(CXLA_OP_POPCNT, CXLA_F32, 2, 1), f, NULL, NULL, &out),
                    "not defined");
    CHECK_ERROR_HAS(run(instr1(CXLA_OP_SELECT, CXLA_F32, 2, 3), f, f, f, &out), "must be pred");
    cxla_instr *cmp = instr1(CXLA_OP_COMPARE, CXLA_PRED, 2, 2);
    CHECK_ERROR_HAS(run(cmp, f, f, NULL, &out), "direction");
    set_word(cmp, CXLA_ATTR_DIRECTION, "XX");
    CHECK_ERROR_HAS(run(cmp, f, f, NULL, &out), "unknown direction");
    cxla_instr *rp = instr1(CXLA_OP_REDUCE_PRECISION, CXLA_F32, 2, 1);
    CHECK_ERROR_HAS(run(rp, f, NULL, NULL, &out), "exponent_bits");
    set_int(rp, CXLA_ATTR_EXPONENT_BITS, 0);
    set_int(rp, CXLA_ATTR_MANTISSA_BITS, 3);
    CHECK_ERROR_HAS(run(rp, f, NULL, NULL, &out), ">= 1");
    cxla_instr *io = instr1(CXLA_OP_IOTA, CXLA_F32, 2, 0);
    CHECK_ERROR_HAS(run(io, NULL, NULL, NULL, &out), "iota_dimension");
    set_int(io, CXLA_ATTR_IOTA_DIMENSION, 1);
    CHECK_ERROR_HAS(run(io, NULL, NULL, NULL, &out), "iota_dimension");
    CHECK_ERROR_HAS(run(instr1(CXLA_OP_BITCAST_CONVERT, CXLA_S16, 2, 1), f, NULL, NULL, &out),
                    "do not fill");
    CHECK_ERROR_HAS(run(instr1(CXLA_OP_COMPLEX, CXLA_C64, 2, 2), s, s, NULL, &out),
                    "f32 or two f64");
    cxla_literal *tup = NULL;
    CHECK_OK(cxla_literal_create_tuple(NULL, 0, &tup));
    CHECK_ERROR_HAS(run(instr1(CXLA_OP_NEGATE, CXLA_F32, 2, 1), tup, NULL, NULL, &out), "array");
    CHECK_ERROR_HAS(run(instr1(CXLA_OP_CONVERT, CXLA_F32, 2, 1), tup, NULL, NULL, &out), "array");
    cxla_literal_free(tup);
    cxla_literal_free(f);
    cxla_literal_free(s);
    cxla_literal_free(f3);
    end();
}

TEST_MAIN(TEST(test_every_opcode_has_one_handler), TEST(test_small_float_unary_sweep),
          TEST(test_small_float_binary_sweep), TEST(test_transcendental_ulps),
          TEST(test_f32_arithmetic_is_exact), TEST(test_int_binary_exhaustive), TEST(test_mulhi_64),
          TEST(test_compare_reinterprets), TEST(test_convert_matches_literal_rules),
          TEST(test_chunks_and_broadcast), TEST(test_select_tuples), TEST(test_errors))
