/* The double forms that src/cpu/cxla_math.h used for exp, expm1, logistic, tanh, log, log1p
 * and erf before the float-only forms (commit 82183d9), kept here only so that bench_math
 * can time the three side by side (fast float, these, libm). Each computes in double with a
 * relative error below 2^-32 and rounds once: within 1 ulp of the interpreter. Needs
 * cxla_math.h first (cxla_m_expq, cxla_m_log and the bit helpers). Not used by the library. */
#ifndef CXLA_BENCH_MATH_OLD_H_
#define CXLA_BENCH_MATH_OLD_H_

#include "cpu/cxla_math.h"

/* e^x. Clamping to [-110, 100] keeps 2^k a normal double; beyond it the float result is
 * 0 or Inf either way. Relative error of the double result below 2^-34. */
CXLA_M_INLINE float cxla_old_f32_exp(float x) {
    int under = x<-110.0f, over = x> 100.0f;
    float c = cxla_m_self(under, -110.0f, x); /* NaN stays NaN */
    c = cxla_m_self(over, 100.0f, c);
    double s;
    double q = cxla_m_expq((double)c, &s);
    return (float)(s + s * q);
}

/* e^x - 1 = 2^k q + (2^k - 1): relatively accurate for small x (k = 0: just q), and for
 * k != 0 |result| >= 0.29 so the sum does not cancel. 2^k - 1 is exact for k >= -53 and
 * -1 below, where the float result is -1. */
CXLA_M_INLINE double cxla_old_m_expm1(double x) {
    double s;
    double q = cxla_m_expq(x, &s);
    return s * q + (s - 1.0);
}

CXLA_M_INLINE float cxla_old_f32_expm1(float x) {
    int under = x<-60.0f, over = x> 100.0f, zero = x == 0.0f;
    float c = cxla_m_self(under, -60.0f, x);
    c = cxla_m_self(over, 100.0f, c);
    float r = (float)cxla_old_m_expm1((double)c);
    return cxla_m_self(zero, x, r); /* -0 -> -0 */
}

/* 1 / (1 + e^-x), as the interpreter. Clamped to [-110, 40]: below, the result is under
 * half the smallest denormal; above, it rounds to 1. */
CXLA_M_INLINE float cxla_old_f32_logistic(float x) {
    int under = x<-110.0f, over = x> 40.0f;
    float c = cxla_m_self(under, -110.0f, x);
    c = cxla_m_self(over, 40.0f, c);
    double s;
    double q = cxla_m_expq(-(double)c, &s);
    return (float)(1.0 / (1.0 + (s + s * q)));
}

/* tanh |x| = t / (t + 2) with t = e^(2|x|) - 1: no cancellation anywhere. For |x| >= 10
 * the float result is 1 (1 - tanh 10 < 2^-57). */
CXLA_M_INLINE float cxla_old_f32_tanh(float x) {
    float a = cxla_m_absf(x);
    int over = a > 10.0f;
    a = cxla_m_self(over, 10.0f, a);
    double t = cxla_old_m_expm1(2.0 * (double)a);
    return cxla_m_copysignf((float)(t / (t + 2.0)), x);
}

/* ---- log, log1p --------------------------------------------------------------------- */

CXLA_M_INLINE float cxla_old_f32_log(float x) {
    int inf = x == INFINITY, zero = x == 0.0f, nan = (x < 0.0f) | (x != x);
    float r = (float)cxla_m_log((double)x); /* garbage for x <= 0, Inf, NaN: fixed below */
    r = cxla_m_self(inf, x, r);
    r = cxla_m_self(zero, -INFINITY, r);
    return cxla_m_self(nan, NAN, r);
}

/* ln(1 + x) = ln u + c with u = 1 + x rounded to double and c = x - (u - 1) its rounding
 * error. For a float x, 1 + x is exact unless |x| < 2^-29 (then c / u = c to 2^-29) or
 * x >= 2^53; there u - 1 is not exact either (x = 2^53 gives c = 1), and c / u is below
 * 2^-53, so c is dropped from 2^52 up. */
CXLA_M_INLINE float cxla_old_f32_log1p(float x) {
    double xd = (double)x;
    double u = 1.0 + xd;
    int huge = xd >= 0x1p52;
    double c = cxla_m_seld(huge, 0.0, xd - (u - 1.0));
    int inf = x == INFINITY, minus1 = x == -1.0f, zero = x == 0.0f;
    int nan = (x < -1.0f) | (x != x);
    float r = (float)(cxla_m_log(u) + c);
    r = cxla_m_self(inf, x, r);
    r = cxla_m_self(minus1, -INFINITY, r);
    r = cxla_m_self(zero, x, r); /* -0 -> -0 */
    return cxla_m_self(nan, NAN, r);
}

/* ---- erf ---------------------------------------------------------------------------- */

/* erf |x| = |x| P(x^2) for |x| < 1.25 (degree 9 in x^2, relative error < 2^-38);
 * 1 - e^(-x^2) R(|x|) on [1.25, 3.95] (R of degree 13 in (|x| - 2.6) / 1.35, fitted to
 * erfc(x) e^(x^2), absolute error < 2^-35, erf >= 0.92 there). From 3.95 on the float
 * result is 1 (erfc 3.95 < 2^-25). Both pieces are computed and one selected. */
CXLA_M_INLINE float cxla_old_f32_erf(float x) {
    float af = cxla_m_absf(x);
    int over = af > 3.95f;
    double a = (double)cxla_m_self(over, 3.95f, af);
    double z = a * a;
    /* Horner steps, highest coefficient first */
    double ps = -0x1.5fd292bc500bfp-24;
    ps = ps * z + 0x1.79e3ca41a6c48p-20;
    ps = ps * z - 0x1.e70ceddb54effp-17;
    ps = ps * z + 0x1.f7cc8e82135f7p-14;
    ps = ps * z - 0x1.c0064dbef306bp-11;
    ps = ps * z + 0x1.5659c70fcde90p-8;
    ps = ps * z - 0x1.b82cc45e6a3f3p-6;
    ps = ps * z + 0x1.ce2f20b2ed533p-4;
    ps = ps * z - 0x1.812746ad6e7b4p-2;
    ps = ps * z + 0x1.20dd750428692p+0;
    double small = a * ps;
    double t = (a - 2.6) * 0x1.7b425ed097b42p-1; /* [1.25, 3.95] -> [-1, 1] */
    double rr = -0x1.9c7a30251cd19p-21;
    rr = rr * t + 0x1.58eaaa297130ap-19;
    rr = rr * t - 0x1.658f8bbea4f24p-18;
    rr = rr * t + 0x1.03c36e9e6433ap-16;
    rr = rr * t - 0x1.9888bec304d97p-15;
    rr = rr * t + 0x1.257a80afbf086p-13;
    rr = rr * t - 0x1.97021ffb0eca4p-12;
    rr = rr * t + 0x1.13f6f2dd30580p-10;
    rr = rr * t - 0x1.6b823a80e69a2p-9;
    rr = rr * t + 0x1.cfa50170f5d12p-8;
    rr = rr * t - 0x1.1d90b75685460p-6;
    rr = rr * t + 0x1.5296a30b8ca43p-5;
    rr = rr * t - 0x1.80ce714f6442ap-4;
    rr = rr * t + 0x1.a0fffb7453d9cp-3;
    double s;
    double q = cxla_m_expq(-z, &s);
    double large = 1.0 - (s + s * q) * rr;
    int is_small = a < 1.25;
    return cxla_m_copysignf((float)cxla_m_seld(is_small, small, large), x);
}

#endif /* CXLA_BENCH_MATH_OLD_H_ */
