/* The unary math functions on reals: one list that the interpreter (src/interp) and a C
 * emitter (src/cpu) both read, so that they cannot disagree about which function an
 * opcode means.
 *
 *   X(OPCODE, fn, "libm_f64", "libm_f32")
 *
 * fn is the C function on double that computes the operation exactly as the interpreter
 * does (f64 directly; f32, and the small floats through f32, in double rounded once). It
 * is a libm function, or one of the exec_math_* helpers below when libm has none. The
 * libm names are those of the libm functions of the same meaning for each type (NULL
 * when libm has none: an emitter writes the helper's expression). No errors: functions
 * of IEEE values. */
#ifndef CXLA_EXEC_MATH_H_
#define CXLA_EXEC_MATH_H_

#include <math.h>

#include "hlo/hlo.h"

#define EXEC_MATH_UNARY(X)                                                                         \
    X(ABS, fabs, "fabs", "fabsf")                                                                  \
    X(NEGATE, exec_math_negate, NULL, NULL)                                                        \
    X(SIGN, exec_math_sign, NULL, NULL)                                                            \
    X(FLOOR, floor, "floor", "floorf")                                                             \
    X(CEIL, ceil, "ceil", "ceilf")                                                                 \
    X(ROUND_NEAREST_AFZ, round, "round", "roundf")                                                 \
    X(ROUND_NEAREST_EVEN, rint, "rint", "rintf")                                                   \
    X(EXP, exp, "exp", "expf")                                                                     \
    X(EXPM1, expm1, "expm1", "expm1f")                                                             \
    X(LOG, log, "log", "logf")                                                                     \
    X(LOG1P, log1p, "log1p", "log1pf")                                                             \
    X(LOGISTIC, exec_math_logistic, NULL, NULL)                                                    \
    X(SQRT, sqrt, "sqrt", "sqrtf")                                                                 \
    X(RSQRT, exec_math_rsqrt, NULL, NULL)                                                          \
    X(CBRT, cbrt, "cbrt", "cbrtf")                                                                 \
    X(SIN, sin, "sin", "sinf")                                                                     \
    X(COS, cos, "cos", "cosf")                                                                     \
    X(TAN, tan, "tan", "tanf")                                                                     \
    X(TANH, tanh, "tanh", "tanhf")                                                                 \
    X(ACOS, acos, "acos", "acosf")                                                                 \
    X(ACOSH, acosh, "acosh", "acoshf")                                                             \
    X(ASIN, asin, "asin", "asinf")                                                                 \
    X(ASINH, asinh, "asinh", "asinhf")                                                             \
    X(ATAN, atan, "atan", "atanf")                                                                 \
    X(ATANH, atanh, "atanh", "atanhf")                                                             \
    X(COSH, cosh, "cosh", "coshf")                                                                 \
    X(SINH, sinh, "sinh", "sinhf")                                                                 \
    X(ERF, erf, "erf", "erff")                                                                     \
    X(REAL, exec_math_real, NULL, NULL)                                                            \
    X(IMAG, exec_math_imag, NULL, NULL)

/* The helpers, inline so that the interpreter's loops over them vectorize. */
static inline double exec_math_negate(double x) {
    return -x;
}
/* NaN stays NaN, +-0 stays +-0, else +-1. */
static inline double exec_math_sign(double x) {
    if (isnan(x) || x == 0) return x;
    return x < 0 ? -1.0 : 1.0;
}
/* 1 / (1 + e^-x) */
static inline double exec_math_logistic(double x) {
    return 1.0 / (1.0 + exp(-x));
}
/* 1 / sqrt(x) */
static inline double exec_math_rsqrt(double x) {
    return 1.0 / sqrt(x);
}
/* The real part of a real: x. */
static inline double exec_math_real(double x) {
    return x;
}
/* The imaginary part of a real: +0. */
static inline double exec_math_imag(double x) {
    (void)x;
    return 0.0;
}

typedef struct exec_math_info {
    cxla_opcode op;
    double (*fn)(double);
    const char *fn_name;             /* "exp", "exec_math_logistic" */
    const char *libm_f64, *libm_f32; /* NULL when libm has none */
} exec_math_info;

/* The entry of |op|; NULL when |op| is not a unary math function on reals. */
const exec_math_info *exec_math_unary(cxla_opcode op);

#endif /* CXLA_EXEC_MATH_H_ */
