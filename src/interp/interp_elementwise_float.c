/* Elementwise kernels for f32, f64, c64 and c128 (see interp_elementwise.h).
 *
 * f32 + - * / are exact IEEE f32 operations; the other f32 functions are computed in
 * double and rounded once, which keeps them within an ulp of the correctly rounded
 * result. f64 uses libm directly. Complex + - * / follow XLA's CPU backend formulas
 * (xla/service/elemental_ir_emitter.cc: the textbook product, Smith's division with its
 * corner cases) in the component precision; the complex transcendental functions are
 * C99's (Annex G: the HLO evaluator's std::complex functions), evaluated in double.
 */
#include <complex.h>
#include <math.h>
#include <string.h>

#include "interp/interp_elementwise.h"

/* for (i = 0; i < n; i++) body, in blocks of a constant 64 iterations (which GCC 12
 * vectorizes at -O2 where the body allows; it does not with an int64_t counter running
 * from i0_ to i0_ + 64) and then the rest. */
#define LOOP(...)                                                                                  \
    do {                                                                                           \
        int64_t i0_ = 0;                                                                           \
        for (; i0_ + 64 <= n; i0_ += 64) {                                                         \
            for (int k_ = 0; k_ < 64; k_++) {                                                      \
                int64_t i = i0_ + k_;                                                              \
                __VA_ARGS__;                                                                       \
            }                                                                                      \
        }                                                                                          \
        for (int64_t i = i0_; i < n; i++) {                                                        \
            __VA_ARGS__;                                                                           \
        }                                                                                          \
    } while (0)

/* ---- scalar functions ------------------------------------------------------------- */

/* maximum and minimum as XLA's CPU backend emits them (llvm.maximum / llvm.minimum):
 * a NaN operand gives NaN (the first one), and -0 < +0. */
static double max_f64(double a, double b) {
    if (isnan(a)) return a;
    if (isnan(b)) return b;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}

static double min_f64(double a, double b) {
    if (isnan(a)) return a;
    if (isnan(b)) return b;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}

static float max_f32(float a, float b) {
    if (isnan(a)) return a;
    if (isnan(b)) return b;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}

static float min_f32(float a, float b) {
    if (isnan(a)) return a;
    if (isnan(b)) return b;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}

/* ---- real kernels ----------------------------------------------------------------- */

/* The list of exec/math.h: f32 in double, rounded once; f64 directly. */
#define MATH_CASE_F32(OP, FN, L64, L32)                                                            \
    case CXLA_OP_##OP:                                                                             \
        LOOP(out[i] = (float)FN((double)x[i]));                                                    \
        return true;
#define MATH_CASE_F64(OP, FN, L64, L32)                                                            \
    case CXLA_OP_##OP: LOOP(out[i] = FN(x[i])); return true;

static bool unary_f32(cxla_opcode op, const float *restrict x, float *restrict out, int64_t n) {
    switch (op) {
        EXEC_MATH_UNARY(MATH_CASE_F32)
    default: return false;
    }
}

static bool unary_f64(cxla_opcode op, const double *restrict x, double *restrict out, int64_t n) {
    switch (op) {
        EXEC_MATH_UNARY(MATH_CASE_F64)
    default: return false;
    }
}

bool interp_ew_float_unary(cxla_opcode op, cxla_type type, const void *x, void *out, int64_t n) {
    if (type == CXLA_F32) return unary_f32(op, x, out, n);
    if (type == CXLA_F64) return unary_f64(op, x, out, n);
    return false;
}

void interp_ew_float_is_finite(cxla_type type, const void *x, uint8_t *out, int64_t n) {
    if (type == CXLA_F32) {
        const float *v = x;
        LOOP(out[i] = isfinite(v[i]) != 0);
    } else {
        const double *v = x;
        LOOP(out[i] = isfinite(v[i]) != 0);
    }
}

#define DEFINE_FLOAT_BINARY(NAME, T, MAX, MIN)                                                     \
    static bool binary_##NAME(cxla_opcode op, const T *restrict a, const T *restrict b,            \
                              T *restrict out, int64_t n) {                                        \
        switch (op) {                                                                              \
        case CXLA_OP_ADD: LOOP(out[i] = a[i] + b[i]); return true;                                 \
        case CXLA_OP_SUBTRACT: LOOP(out[i] = a[i] - b[i]); return true;                            \
        case CXLA_OP_MULTIPLY: LOOP(out[i] = a[i] * b[i]); return true;                            \
        case CXLA_OP_DIVIDE: LOOP(out[i] = a[i] / b[i]); return true;                              \
        case CXLA_OP_REMAINDER: LOOP(out[i] = (T)fmod(a[i], b[i])); return true;                   \
        case CXLA_OP_POWER: LOOP(out[i] = (T)pow(a[i], b[i])); return true;                        \
        case CXLA_OP_ATAN2: LOOP(out[i] = (T)atan2(a[i], b[i])); return true;                      \
        case CXLA_OP_MAXIMUM: LOOP(out[i] = MAX(a[i], b[i])); return true;                         \
        case CXLA_OP_MINIMUM: LOOP(out[i] = MIN(a[i], b[i])); return true;                         \
        default: return false;                                                                     \
        }                                                                                          \
    }

DEFINE_FLOAT_BINARY(f32, float, max_f32, min_f32)
DEFINE_FLOAT_BINARY(f64, double, max_f64, min_f64)

bool interp_ew_float_binary(cxla_opcode op, cxla_type type, const void *a, const void *b, void *out,
                            int64_t n) {
    if (type == CXLA_F32) return binary_f32(op, a, b, out, n);
    if (type == CXLA_F64) return binary_f64(op, a, b, out, n);
    return false;
}

#define COMPARE_LOOPS(T)                                                                           \
    do {                                                                                           \
        const T *x = a, *y = b;                                                                    \
        switch (dir) {                                                                             \
        case INTERP_CMP_EQ: LOOP(out[i] = x[i] == y[i]); break;                                    \
        case INTERP_CMP_NE: LOOP(out[i] = !(x[i] == y[i])); break;                                 \
        case INTERP_CMP_LT: LOOP(out[i] = isless(x[i], y[i])); break;                              \
        case INTERP_CMP_LE: LOOP(out[i] = islessequal(x[i], y[i])); break;                         \
        case INTERP_CMP_GT: LOOP(out[i] = isgreater(x[i], y[i])); break;                           \
        case INTERP_CMP_GE: LOOP(out[i] = isgreaterequal(x[i], y[i])); break;                      \
        }                                                                                          \
    } while (0)

void interp_ew_float_compare(interp_cmp_dir dir, cxla_type type, const void *a, const void *b,
                             uint8_t *out, int64_t n) {
    if (type == CXLA_F32)
        COMPARE_LOOPS(float);
    else
        COMPARE_LOOPS(double);
}

/* Total order: the bits as a signed integer, with the magnitude bits of negative values
 * flipped, order like -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN. */
static int64_t total_key_f32(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    if (u >> 31) u ^= 0x7fffffffu;
    return (int32_t)u;
}

static int64_t total_key_f64(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    if (u >> 63) u ^= 0x7fffffffffffffffu;
    return (int64_t)u;
}

#define TOTAL_LOOPS(T, KEY)                                                                        \
    do {                                                                                           \
        const T *x = a, *y = b;                                                                    \
        switch (dir) {                                                                             \
        case INTERP_CMP_EQ: LOOP(out[i] = KEY(x[i]) == KEY(y[i])); break;                          \
        case INTERP_CMP_NE: LOOP(out[i] = KEY(x[i]) != KEY(y[i])); break;                          \
        case INTERP_CMP_LT: LOOP(out[i] = KEY(x[i]) < KEY(y[i])); break;                           \
        case INTERP_CMP_LE: LOOP(out[i] = KEY(x[i]) <= KEY(y[i])); break;                          \
        case INTERP_CMP_GT: LOOP(out[i] = KEY(x[i]) > KEY(y[i])); break;                           \
        case INTERP_CMP_GE: LOOP(out[i] = KEY(x[i]) >= KEY(y[i])); break;                          \
        }                                                                                          \
    } while (0)

void interp_ew_float_compare_total(interp_cmp_dir dir, cxla_type type, const void *a, const void *b,
                                   uint8_t *out, int64_t n) {
    if (type == CXLA_F32)
        TOTAL_LOOPS(float, total_key_f32);
    else
        TOTAL_LOOPS(double, total_key_f64);
}

void interp_ew_float_clamp(cxla_type type, const void *lo, int64_t lo_step, const void *x,
                           int64_t x_step, const void *hi, int64_t hi_step, void *out, int64_t n) {
    if (type == CXLA_F32) {
        const float *l = lo, *v = x, *h = hi;
        float *o = out;
        LOOP(o[i] = min_f32(h[i * hi_step], max_f32(l[i * lo_step], v[i * x_step])));
    } else {
        const double *l = lo, *v = x, *h = hi;
        double *o = out;
        LOOP(o[i] = min_f64(h[i * hi_step], max_f64(l[i * lo_step], v[i * x_step])));
    }
}

/* ---- complex ---------------------------------------------------------------------- */

void interp_ew_complex_divide(double ar, double ai, double br, double bi, double *cr, double *ci) {
    /* Smith's algorithm, then the corner cases when the result is NaN + NaN i. */
    double rr, ri;
    if (fabs(br) < fabs(bi)) {
        double ratio = br / bi, denom = bi + br * ratio;
        rr = (ratio * ar + ai) / denom;
        ri = (ratio * ai - ar) / denom;
    } else {
        double ratio = bi / br, denom = br + bi * ratio;
        rr = (ratio * ai + ar) / denom;
        ri = (ai - ratio * ar) / denom;
    }
    if (isnan(rr) && isnan(ri)) {
        if (br == 0 && bi == 0 && (!isnan(ar) || !isnan(ai))) {
            double inf = copysign(INFINITY, br);
            rr = inf * ar;
            ri = inf * ai;
        } else if ((isinf(ar) || isinf(ai)) && isfinite(br) && isfinite(bi)) {
            double sr = copysign(isinf(ar) ? 1.0 : 0.0, ar),
                   si = copysign(isinf(ai) ? 1.0 : 0.0, ai);
            rr = INFINITY * (sr * br + si * bi);
            ri = INFINITY * (si * br - sr * bi);
        } else if ((isinf(br) || isinf(bi)) && isfinite(ar) && isfinite(ai)) {
            double sr = copysign(isinf(br) ? 1.0 : 0.0, br),
                   si = copysign(isinf(bi) ? 1.0 : 0.0, bi);
            rr = 0.0 * (ar * sr + ai * si);
            ri = 0.0 * (ai * sr - ar * si);
        }
    }
    *cr = rr;
    *ci = ri;
}

void interp_ew_complex_divide_f(float ar, float ai, float br, float bi, float *cr, float *ci) {
    float rr, ri;
    if (fabsf(br) < fabsf(bi)) {
        float ratio = br / bi, denom = bi + br * ratio;
        rr = (ratio * ar + ai) / denom;
        ri = (ratio * ai - ar) / denom;
    } else {
        float ratio = bi / br, denom = br + bi * ratio;
        rr = (ratio * ai + ar) / denom;
        ri = (ai - ratio * ar) / denom;
    }
    if (isnan(rr) && isnan(ri)) {
        if (br == 0 && bi == 0 && (!isnan(ar) || !isnan(ai))) {
            float inf = copysignf(INFINITY, br);
            rr = inf * ar;
            ri = inf * ai;
        } else if ((isinf(ar) || isinf(ai)) && isfinite(br) && isfinite(bi)) {
            float sr = copysignf(isinf(ar) ? 1.0f : 0.0f, ar);
            float si = copysignf(isinf(ai) ? 1.0f : 0.0f, ai);
            rr = INFINITY * (sr * br + si * bi);
            ri = INFINITY * (si * br - sr * bi);
        } else if ((isinf(br) || isinf(bi)) && isfinite(ar) && isfinite(ai)) {
            float sr = copysignf(isinf(br) ? 1.0f : 0.0f, br);
            float si = copysignf(isinf(bi) ? 1.0f : 0.0f, bi);
            rr = 0.0f * (ar * sr + ai * si);
            ri = 0.0f * (ai * sr - ar * si);
        }
    }
    *cr = rr;
    *ci = ri;
}

/* A complex number from its parts (not re + im * I, which turns inf into NaN; and C11's
 * CMPLX is missing with some compilers). */
static double complex make_c(double re, double im) {
    double parts[2] = {re, im};
    double complex z;
    memcpy(&z, parts, sizeof(z));
    return z;
}

/* e^z - 1, accurate near 0. */
static double complex cexpm1(double complex z) {
    double x = creal(z), y = cimag(z);
    if (y == 0) return make_c(expm1(x), y);
    double s = sin(y / 2);
    return make_c(expm1(x) * cos(y) - 2 * s * s, exp(x) * sin(y));
}

/* log(1 + z), accurate near 0 (XLA's formula there). */
static double complex clog1p(double complex z) {
    double a = creal(z), b = cimag(z);
    if (fabs(a) < 0.5 && fabs(b) < 0.5)
        return make_c(0.5 * log1p(a * a + 2 * a + b * b), atan2(b, a + 1));
    return clog(1 + z);
}

static double complex csign(double complex z) {
    double r = cabs(z);
    if (r == 0) return 0;
    return make_c(creal(z) / r, cimag(z) / r);
}

static double complex cdiv(double complex a, double complex b) {
    double r, i;
    interp_ew_complex_divide(creal(a), cimag(a), creal(b), cimag(b), &r, &i);
    return make_c(r, i);
}

/* One complex function; false when |op| has none. */
static bool complex_fn(cxla_opcode op, double complex z, double complex *out) {
    switch (op) {
    case CXLA_OP_NEGATE: *out = make_c(-creal(z), -cimag(z)); return true;
    case CXLA_OP_SIGN: *out = csign(z); return true;
    case CXLA_OP_EXP: *out = cexp(z); return true;
    case CXLA_OP_EXPM1: *out = cexpm1(z); return true;
    case CXLA_OP_LOG: *out = clog(z); return true;
    case CXLA_OP_LOG1P: *out = clog1p(z); return true;
    case CXLA_OP_LOGISTIC: *out = cdiv(1, 1 + cexp(-z)); return true;
    case CXLA_OP_SQRT: *out = csqrt(z); return true;
    case CXLA_OP_RSQRT: *out = cdiv(1, csqrt(z)); return true;
    case CXLA_OP_CBRT: *out = z == 0 ? z : cexp(clog(z) / 3); return true;
    case CXLA_OP_SIN: *out = csin(z); return true;
    case CXLA_OP_COS: *out = ccos(z); return true;
    case CXLA_OP_TAN: *out = ctan(z); return true;
    case CXLA_OP_TANH: *out = ctanh(z); return true;
    case CXLA_OP_ACOS: *out = cacos(z); return true;
    case CXLA_OP_ACOSH: *out = cacosh(z); return true;
    case CXLA_OP_ASIN: *out = casin(z); return true;
    case CXLA_OP_ASINH: *out = casinh(z); return true;
    case CXLA_OP_ATAN: *out = catan(z); return true;
    case CXLA_OP_ATANH: *out = catanh(z); return true;
    case CXLA_OP_COSH: *out = ccosh(z); return true;
    case CXLA_OP_SINH: *out = csinh(z); return true;
    default: return false;
    }
}

bool interp_ew_complex_unary(cxla_opcode op, cxla_type type, const void *x, void *out, int64_t n) {
    bool c64 = type == CXLA_C64;
    const float *xf = x;
    const double *xd = x;
    float *of = out;
    double *od = out;
    switch (op) {
    case CXLA_OP_ABS:
        if (c64)
            LOOP(of[i] = (float)hypot(xf[2 * i], xf[2 * i + 1]));
        else
            LOOP(od[i] = hypot(xd[2 * i], xd[2 * i + 1]));
        return true;
    case CXLA_OP_REAL:
    case CXLA_OP_IMAG: {
        int part = op == CXLA_OP_IMAG;
        if (c64)
            LOOP(of[i] = xf[2 * i + part]);
        else
            LOOP(od[i] = xd[2 * i + part]);
        return true;
    }
    default: break;
    }
    double complex probe;
    if (!complex_fn(op, 0, &probe)) return false;
    for (int64_t i = 0; i < n; i++) {
        double complex z =
            c64 ? make_c(xf[2 * i], xf[2 * i + 1]) : make_c(xd[2 * i], xd[2 * i + 1]);
        double complex r;
        complex_fn(op, z, &r);
        if (c64) {
            of[2 * i] = (float)creal(r);
            of[2 * i + 1] = (float)cimag(r);
        } else {
            od[2 * i] = creal(r);
            od[2 * i + 1] = cimag(r);
        }
    }
    return true;
}

/* x^y as the HLO evaluator computes it: 1 when x == 1 or y == 0; for x = +inf (real)
 * and a real y, inf (y > 0) or 0 (y < 0); otherwise C's cpow. */
static double complex cpower(double complex x, double complex y) {
    if (x == 1 || y == 0) return 1;
    if (cimag(x) == 0 && isinf(creal(x)) && creal(x) > 0 && cimag(y) == 0) {
        if (creal(y) > 0) return x;
        if (creal(y) < 0) return 0;
    }
    return cpow(x, y);
}

/* atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)) (the HLO evaluator's formula). */
static double complex catan2(double complex y, double complex x) {
    double complex iy = make_c(-cimag(y), creal(y));
    double complex v = clog(cdiv(x + iy, csqrt(x * x + y * y)));
    return make_c(cimag(v), -creal(v));
}

#define DEFINE_COMPLEX_ARITH(NAME, T, DIV)                                                         \
    static bool arith_##NAME(cxla_opcode op, const T *a, const T *b, T *out, int64_t n) {          \
        switch (op) {                                                                              \
        case CXLA_OP_ADD:                                                                          \
            LOOP({                                                                                 \
                out[2 * i] = a[2 * i] + b[2 * i];                                                  \
                out[2 * i + 1] = a[2 * i + 1] + b[2 * i + 1];                                      \
            });                                                                                    \
            return true;                                                                           \
        case CXLA_OP_SUBTRACT:                                                                     \
            LOOP({                                                                                 \
                out[2 * i] = a[2 * i] - b[2 * i];                                                  \
                out[2 * i + 1] = a[2 * i + 1] - b[2 * i + 1];                                      \
            });                                                                                    \
            return true;                                                                           \
        case CXLA_OP_MULTIPLY:                                                                     \
            LOOP({                                                                                 \
                T ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];              \
                T rr = ar * br, ii = ai * bi, ri = ar * bi, ir = ai * br;                          \
                out[2 * i] = rr - ii;                                                              \
                out[2 * i + 1] = ri + ir;                                                          \
            });                                                                                    \
            return true;                                                                           \
        case CXLA_OP_DIVIDE:                                                                       \
            LOOP(DIV(a[2 * i], a[2 * i + 1], b[2 * i], b[2 * i + 1], &out[2 * i],                  \
                     &out[2 * i + 1]));                                                            \
            return true;                                                                           \
        default: return false;                                                                     \
        }                                                                                          \
    }

DEFINE_COMPLEX_ARITH(c64, float, interp_ew_complex_divide_f)
DEFINE_COMPLEX_ARITH(c128, double, interp_ew_complex_divide)

bool interp_ew_complex_binary(cxla_opcode op, cxla_type type, const void *a, const void *b,
                              void *out, int64_t n) {
    bool c64 = type == CXLA_C64;
    if (op != CXLA_OP_POWER && op != CXLA_OP_ATAN2)
        return c64 ? arith_c64(op, a, b, out, n) : arith_c128(op, a, b, out, n);
    const float *af = a, *bf = b;
    const double *ad = a, *bd = b;
    float *of = out;
    double *od = out;
    for (int64_t i = 0; i < n; i++) {
        double complex x =
            c64 ? make_c(af[2 * i], af[2 * i + 1]) : make_c(ad[2 * i], ad[2 * i + 1]);
        double complex y =
            c64 ? make_c(bf[2 * i], bf[2 * i + 1]) : make_c(bd[2 * i], bd[2 * i + 1]);
        double complex r = op == CXLA_OP_POWER ? cpower(x, y) : catan2(x, y);
        if (c64) {
            of[2 * i] = (float)creal(r);
            of[2 * i + 1] = (float)cimag(r);
        } else {
            od[2 * i] = creal(r);
            od[2 * i + 1] = cimag(r);
        }
    }
    return true;
}

bool interp_ew_complex_compare(interp_cmp_dir dir, bool total, cxla_type type, const void *a,
                               const void *b, uint8_t *out, int64_t n) {
    if (dir != INTERP_CMP_EQ && dir != INTERP_CMP_NE) return false;
    bool ne = dir == INTERP_CMP_NE;
    if (total) {
        /* Bit equality of the parts, with -0 != +0 and NaNs equal by their bits. */
        size_t es = cxla_type_storage(type);
        const unsigned char *x = a, *y = b;
        LOOP(out[i] = (memcmp(x + (size_t)i * es, y + (size_t)i * es, es) != 0) == ne);
        return true;
    }
    if (type == CXLA_C64) {
        const float *x = a, *y = b;
        LOOP(out[i] = (x[2 * i] == y[2 * i] && x[2 * i + 1] == y[2 * i + 1]) != ne);
    } else {
        const double *x = a, *y = b;
        LOOP(out[i] = (x[2 * i] == y[2 * i] && x[2 * i + 1] == y[2 * i + 1]) != ne);
    }
    return true;
}

void interp_ew_make_complex(cxla_type component, const void *re, const void *im, void *out,
                            int64_t n) {
    if (component == CXLA_F32) {
        const float *r = re, *m = im;
        float *o = out;
        LOOP({
            o[2 * i] = r[i];
            o[2 * i + 1] = m[i];
        });
    } else {
        const double *r = re, *m = im;
        double *o = out;
        LOOP({
            o[2 * i] = r[i];
            o[2 * i + 1] = m[i];
        });
    }
}
