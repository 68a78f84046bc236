/* Fast f32 transcendental functions of the compiled cpu backend.
 *
 * What: cxla_f32_exp, _expm1, _log, _log1p, _tanh, _logistic, _erf, _sin, _cos, _tan,
 * _atan2, _pow, _rsqrt, _sqrt, _cbrt: float in, float out, each within a proven bound of
 * the interpreter's result (float)fn((double)x) computed with libm. The bounds, the
 * measurements and the argument behind them are in docs/semantics.md ("cpu backend: fast
 * f32 functions"); tests/cpu/test_cpu_math.c fails when a function exceeds its bound.
 *
 * Who uses it: the C emitter pastes this text (cpu_math_source(), src/cpu/cpu_math.h)
 * into every generated source, including ahead-of-time output, so it is plain C11 with
 * no intrinsics and no calls: every function is straight-line code (selects, not
 * branches) that gcc -O2 -march=native vectorizes in a loop. Bits move through memcpy;
 * math.h gives only the constants INFINITY and NAN. The one extension, __builtin_fmaf
 * where the target has the instruction (cxla_m_fmaf below), is left out of portable
 * output.
 *
 * How: two kinds. exp, expm1, log, log1p, tanh, logistic and erf are float-only: argument
 * reductions that are exact in float, polynomials with float coefficients, a result built
 * as a large exact term plus a small correction, selects for the special values; no
 * double and no 64-bit integer, so a vector holds 16 of them with AVX-512. Their bounds
 * (1 ulp; 2 for tanh and logistic) come from running every one of the 2^32 floats.
 * sin, cos, tan, atan2, pow, rsqrt, sqrt and cbrt work in double: a float argument is
 * exact as a double, the double computation has a relative error below 2^-32, and the
 * one rounding to float gives one of the two floats around the exact value, as the
 * interpreter's does: at most 1 ulp apart (sqrt: 0, it is corrected to the correctly
 * rounded result). Special values (NaN, +-Inf, +-0, negative arguments of log and sqrt)
 * are fixed by selects at the end, following C99 Annex F as libm does.
 *
 * Requires IEEE binary32/binary64 with FLT_EVAL_METHOD 0 or 16 (SSE, not x87), round to
 * nearest and no value-changing optimization (-ffast-math, -fassociative-math); the
 * rounding tricks (x + 0x1.8p52) - 0x1.8p52 rely on it. Contracting a*b+c
 * into an fma (gcc's default outside ISO mode) keeps every bound: the exact steps use
 * products that are exact, the others stay within their error figures. The reductions and
 * polynomials of exp, expm1, tanh, logistic and erf use fused multiply-adds explicitly
 * (cxla_m_fmaf) where the target has them, whatever the contraction flag.
 */
#ifndef CXLA_MATH_H_
#define CXLA_MATH_H_

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* 16 (TS 18661-3, gcc on CPUs with AVX512-FP16): _Float16 arithmetic in _Float16, float and
 * double in their own types, which for this file is the same as 0. */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0 && FLT_EVAL_METHOD != 16
#error "cxla_math.h needs FLT_EVAL_METHOD == 0 (x86: SSE not x87; s390x: -fexcess-precision=fast)"
#endif
/* -ffast-math would fold (t + C) - C to t and drop the NaN checks. */
#if defined(__FAST_MATH__)
#error "cxla_math.h must not be compiled with -ffast-math"
#endif

/* Every function here is inlined into its loop, however many call sites a source has (gcc
 * at -O2 inlines a large function at a single call site only); other compilers get plain
 * static inline. */
#if defined(__GNUC__) && !defined(CXLA_PORTABLE) /* cxla compile --target portable */
#define CXLA_M_INLINE static inline __attribute__((always_inline))
#else
#define CXLA_M_INLINE static inline
#endif

/* ---- bits --------------------------------------------------------------------------- */

CXLA_M_INLINE uint32_t cxla_m_f2u(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

CXLA_M_INLINE float cxla_m_u2f(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

CXLA_M_INLINE uint64_t cxla_m_d2u(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

CXLA_M_INLINE double cxla_m_u2d(uint64_t u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* |x| and the sign of s put on |x|, by bits (fabsf and copysignf are libm calls). */
CXLA_M_INLINE float cxla_m_absf(float x) {
    return cxla_m_u2f(cxla_m_f2u(x) & 0x7fffffffu);
}

CXLA_M_INLINE float cxla_m_copysignf(float x, float s) {
    return cxla_m_u2f((cxla_m_f2u(x) & 0x7fffffffu) | (cxla_m_f2u(s) & 0x80000000u));
}

/* 1 when x is not NaN and not +-Inf. */
CXLA_M_INLINE int cxla_m_finitef(float x) {
    return (cxla_m_f2u(x) & 0x7f800000u) != 0x7f800000u;
}

/* c ? a : b with c 0 or 1, by bit masks: gcc turns a ?: between floating-point values into
 * a branch when it can fold one arm (a clamp to a constant, say), and under its default
 * -ftrapping-math it then will not if-convert the loop back; masks stay straight-line. */
CXLA_M_INLINE float cxla_m_self(int c, float a, float b) {
    uint32_t m = 0u - (uint32_t)c;
    return cxla_m_u2f((cxla_m_f2u(a) & m) | (cxla_m_f2u(b) & ~m));
}

CXLA_M_INLINE double cxla_m_seld(int c, double a, double b) {
    uint64_t m = 0u - (uint64_t)c;
    return cxla_m_u2d((cxla_m_d2u(a) & m) | (cxla_m_d2u(b) & ~m));
}

/* a * b + c. Where the target has a fused multiply-add instruction (gcc and clang define
 * __FMA__ on x86 with FMA, __ARM_FEATURE_FMA on arm64, under -march=native) it is that
 * instruction, one rounding, also in generated code, which the JIT compiles with
 * -ffp-contract=off (that flag keeps the user's a*b+c from being fused; it does not touch
 * an explicit fma): the polynomials and reductions of the float cores then take half the
 * instructions. Elsewhere the product and the sum round separately (or are contracted where
 * the compiler is allowed to). The bounds hold both ways, each measured on every float
 * (docs/semantics.md). A builtin, not fmaf: a target without the instruction must not get
 * a call to libm's (slow, exact) fmaf. */
#if defined(__GNUC__) && !defined(CXLA_PORTABLE) && (defined(__FMA__) || defined(__ARM_FEATURE_FMA))
#define CXLA_M_HAVE_FMA 1
CXLA_M_INLINE float cxla_m_fmaf(float a, float b, float c) {
    return __builtin_fmaf(a, b, c);
}
#else
#define CXLA_M_HAVE_FMA 0
CXLA_M_INLINE float cxla_m_fmaf(float a, float b, float c) {
    return a * b + c;
}
#endif

/* Round to the nearest integer (ties to even) for |x| < 2^51: adding 1.5 * 2^52 leaves
 * no fraction bits. The sum's bits also hold the integer (two's complement, mod 2^51). */
#define CXLA_M_SHIFT 0x1.8p52

/* ---- double cores ------------------------------------------------------------------- */

/* e^x = 2^k (1 + q) for |x| <= 700: returns q = e^r - 1 with x = k ln2 + r, |r| <= ln2/2,
 * and 2^k in *out_scale. q is a degree 8 polynomial (r + r^2/2 + r^3 P(r), P fitted at
 * Chebyshev nodes on [-0.3466, 0.3466]): relative error of q and of 1 + q below 2^-35.
 * ln2 is split (32 + 53 bits) so that k * ln2_hi is exact and r is accurate to 2^-60. */
CXLA_M_INLINE double cxla_m_expq(double x, double *out_scale) {
    double t = x * 0x1.71547652b82fep+0 + CXLA_M_SHIFT; /* x / ln2 + shift */
    uint64_t kb = cxla_m_d2u(t);
    double k = t - CXLA_M_SHIFT;
    double r = (x - k * 0x1.62e42fee00000p-1) - k * 0x1.a39ef35793c76p-33;
    double p = 0x1.5555555a97e1fp-3 +
               r * (0x1.5555555c87151p-5 +
                    r * (0x1.1110e0b212b02p-7 +
                         r * (0x1.6c16858b83363p-10 +
                              r * (0x1.a1255bc04d5eep-13 + r * 0x1.a1131fd0e81afp-16))));
    /* 2^k from the bits of t: kb - bits(shift) is k, mod 2^64. */
    *out_scale = cxla_m_u2d((kb - 0x4338000000000000ull + 1023u) << 52);
    return r + r * r * (0.5 + r * p);
}

/* ln x for a positive, finite, normal double x. x = 2^k z with z in [sqrt(1/2), sqrt(2));
 * ln z = 2 atanh(s), s = (z - 1) / (z + 1), |s| <= 0.1716, as 2s + s^3 Q(s^2) with Q of
 * degree 5 fitted at Chebyshev nodes: relative error below 2^-48 (pow needs it). z - 1 is
 * exact, so the result is relatively accurate near x = 1 too. */
CXLA_M_INLINE double cxla_m_log(double x) {
    uint64_t ix = cxla_m_d2u(x);
    /* tmp's top 12 bits are k + 2048 (the offset keeps the arithmetic unsigned). */
    uint64_t tmp = ix - 0x3fe6a09e667f3bcdull + 0x8000000000000000ull;
    double k = cxla_m_u2d((tmp >> 52) | 0x4330000000000000ull) - (0x1p52 + 2048.0);
    double z = cxla_m_u2d(ix - ((tmp & 0xfff0000000000000ull) ^ 0x8000000000000000ull));
    double f = z - 1.0;
    double s = f / (2.0 + f);
    double s2 = s * s;
    double q = 0x1.555555555574bp-1 +
               s2 * (0x1.9999999af96cep-2 +
                     s2 * (0x1.2492468ed0051p-2 +
                           s2 * (0x1.c71f9347c9fb6p-3 +
                                 s2 * (0x1.738a1dc88f255p-3 + s2 * 0x1.54151a87c2656p-3))));
    return k * 0x1.62e42fefa39efp-1 + (2.0 * s + s * s2 * q);
}

/* ---- float cores -------------------------------------------------------------------- */

/* Round to the nearest integer (ties to even) for |x| < 2^22, as CXLA_M_SHIFT in float:
 * the sum's low mantissa bits hold the integer (two's complement, mod 2^22). */
#define CXLA_M_SHIFTF 0x1.8p23f

/* x = k ln2 + r with k = round(x / ln2), for |x| <= 104 (|k| <= 150): returns r,
 * |r| <= ln2/2 (a little more where x / ln2 + shift is one fused multiply-add),
 * and k as a float in *out_k and in the low bits of *out_kb. ln2 is split in two: ln2_hi
 * has 15 significant bits, so k ln2_hi is exact, and x - k ln2_hi is exact too (the two are
 * within a factor of 2 of each other when k != 0, Sterbenz); r is then r - k ln2_lo rounded
 * once: relative error 2^-24, plus an absolute error below 2^-36 from ln2_lo's rounding. */
CXLA_M_INLINE float cxla_m_exp_reduce(float x, float *out_k, uint32_t *out_kb) {
    float t = cxla_m_fmaf(x, 0x1.715476p+0f, CXLA_M_SHIFTF); /* x / ln2 + shift */
    float k = t - CXLA_M_SHIFTF;
    *out_k = k;
    *out_kb = cxla_m_f2u(t) - cxla_m_f2u(CXLA_M_SHIFTF); /* k, mod 2^32 */
    return cxla_m_fmaf(-k, 0x1.7f7d1cp-20f, cxla_m_fmaf(-k, 0x1.62e400p-1f, x));
}

/* e^r - 1 for |r| <= 0.354: r + r^2 Q(r), Q of degree 5 fitted at Chebyshev nodes with
 * float coefficients (scripts/fit_math.py: relative error 2^-30 in exact arithmetic). The
 * leading r is added last, so the rounding errors of the correction r^2 Q (at most 1/6 of
 * the result) count for little: about 0.6 ulp of e^r - 1 in all. Q is evaluated as
 * (q0 + q1 r) + r^2 ((q2 + q3 r) + r^2 (q4 + q5 r)) rather than by Horner's rule: the same
 * number of operations, but four steps from r to Q instead of five, which lets the
 * out-of-order core overlap more elements when exp feeds tanh (the elementwise chain). */
CXLA_M_INLINE float cxla_m_expm1_poly(float r) {
    float r2 = r * r;
    float q01 = cxla_m_fmaf(0x1.555556p-3f, r, 0.5f);
    float q23 = cxla_m_fmaf(0x1.110fd0p-7f, r, 0x1.5554fap-5f);
    float q45 = cxla_m_fmaf(0x1.a2b47cp-13f, r, 0x1.6d3a9cp-10f);
    float q = cxla_m_fmaf(cxla_m_fmaf(q45, r2, q23), r2, q01);
    return cxla_m_fmaf(r2, q, r);
}

/* The same e^r - 1 by Horner's rule (five steps from r to Q), for expm1: where k = 1 its
 * result 2 q + 1 cancels (q near -0.29), which magnifies the polynomial's rounding errors,
 * and without fused multiply-adds the evaluation above reaches 2 ulp there (at
 * 0x1.664d7ep-2); this one stays within 1. */
CXLA_M_INLINE float cxla_m_expm1_poly_horner(float r) {
    float q = 0x1.a2b47cp-13f;
    q = cxla_m_fmaf(q, r, 0x1.6d3a9cp-10f);
    q = cxla_m_fmaf(q, r, 0x1.110fd0p-7f);
    q = cxla_m_fmaf(q, r, 0x1.5554fap-5f);
    q = cxla_m_fmaf(q, r, 0x1.555556p-3f);
    q = cxla_m_fmaf(q, r, 0.5f);
    return cxla_m_fmaf(r * r, q, r);
}

/* 2^k as a float for the k of cxla_m_exp_reduce's *out_kb, -126 <= k <= 127. */
CXLA_M_INLINE float cxla_m_pow2f(uint32_t kb) {
    return cxla_m_u2f((kb + 127u) << 23);
}

/* ---- exp, expm1, logistic, tanh ----------------------------------------------------- */

/* e^x = 2^k e^r, e^r = 1 + (e^r - 1) rounded once. Clamped to [-104, 89]: below, the
 * result is under half the smallest denormal (0); above, it overflows (Inf). 2^k is
 * applied as 2^(k+b) 2^-b, both normal: for x < 0, b = 64 (k >= -150), so the first
 * product is exact and the second rounds once, and denormal results are e^r rounded once
 * more on the denormal grid, as libm's; for x >= 0, b = -1 (k <= 128), and the product by 2
 * is exact or overflows to Inf. */
CXLA_M_INLINE float cxla_f32_exp(float x) {
    int under = x<-104.0f, over = x> 89.0f;
    float c = cxla_m_self(under, -104.0f, x); /* NaN stays NaN */
    c = cxla_m_self(over, 89.0f, c);
    float k;
    uint32_t kb;
    float r = cxla_m_exp_reduce(c, &k, &kb);
    float p = 1.0f + cxla_m_expm1_poly(r);
    int neg = c < 0.0f;
    uint32_t e = neg ? kb + (127u + 64u) : kb + (127u - 1u); /* the biased exponent of 2^(k+b) */
    return (p * cxla_m_u2f(e << 23)) * cxla_m_self(neg, 0x1p-64f, 2.0f);
}

/* e^x - 1 = 2^k (1 + q) - 1 = 2 (h q + (h - 1/2)) with h = 2^(k-1) and q = e^r - 1: for
 * k = 0 just q (relatively accurate near 0), and h - 1/2 is exact for -24 <= k <= 24 (and
 * beyond, its rounding is below the result's ulp); for k != 0 |result| >= 0.29, so the sum
 * does not cancel. Doubling is exact (it only overflows, to Inf, where expm1 does: h = 2^127
 * keeps the sum finite). Clamped to [-18, 89]: below -17.4 the float result is -1. */
CXLA_M_INLINE float cxla_f32_expm1(float x) {
    /* tiny: below 2^-25 the result is x (x^2/2 is under half its ulp), and halving a
     * denormal q would round; this also keeps -0 */
    int under = x<-18.0f, over = x> 89.0f, tiny = cxla_m_absf(x) < 0x1p-25f;
    float c = cxla_m_self(under, -18.0f, x);
    c = cxla_m_self(over, 89.0f, c);
    float k;
    uint32_t kb;
    float r = cxla_m_exp_reduce(c, &k, &kb);
    float q = cxla_m_expm1_poly_horner(r);
    float h = cxla_m_pow2f(kb - 1u);
    float v = 2.0f * (h * q + (h - 0.5f));
    return cxla_m_self(tiny, x, v);
}

/* cxla_f32_exp for x <= 0 (either zero) or NaN, bit for bit, in four instructions fewer:
 * no upper clamp, and b = 64 always (for x = -0 or +0, k = 0 and the result is 1 exactly
 * whichever b). */
CXLA_M_INLINE float cxla_m_exp_nonpos(float x) {
    int under = x < -104.0f;
    float c = cxla_m_self(under, -104.0f, x); /* NaN stays NaN */
    float k;
    uint32_t kb;
    float r = cxla_m_exp_reduce(c, &k, &kb);
    float p = 1.0f + cxla_m_expm1_poly(r);
    return (p * cxla_m_u2f((kb + (127u + 64u)) << 23)) * 0x1p-64f;
}

/* 1 / (1 + e^-x) as e / (1 + e) for x < 0 and 1 / (1 + e) for x >= 0, with e = e^-|x| in
 * (0, 1]: e never overflows, 1 + e does not cancel, and for x below -87.3 (denormal
 * results) 1 + e is 1 and the result is e itself, rounded as exp's. One division. */
CXLA_M_INLINE float cxla_f32_logistic(float x) {
    float e = cxla_m_exp_nonpos(-cxla_m_absf(x));
    int neg = x < 0.0f;
    float n = cxla_m_self(neg, e, 1.0f);
    return n / (1.0f + e); /* NaN: e is NaN */
}

/* tanh |x| = t / (t + 2) with t = e^(2|x|) - 1 = 2^k q + (2^k - 1) (as expm1; k <= 29 so
 * nothing overflows): no cancellation anywhere, relatively accurate down to the denormals
 * (there t = 2|x| and the quotient is |x| exactly). For |x| >= 10 the float result is 1
 * (1 - tanh 10 < 2^-57). One division.
 *
 * 2|x| is never formed: the reduction of cxla_m_exp_reduce and the polynomial of
 * cxla_m_expm1_poly run on |x| = k ln2/2 + h, with every constant scaled by a power of two
 * (exact), so h = r/2 and q/2 are the halves of what they compute on 2|x|, bit for bit, and
 * 2^k q = 2^(k+1) (q/2): one instruction fewer on the path of GELU. */
CXLA_M_INLINE float cxla_f32_tanh(float x) {
    float a = cxla_m_absf(x);
    int over = a > 10.0f;
    a = cxla_m_self(over, 10.0f, a);                          /* NaN stays NaN */
    float tk = cxla_m_fmaf(a, 0x1.715476p+1f, CXLA_M_SHIFTF); /* 2|x| / ln2 + shift */
    float k = tk - CXLA_M_SHIFTF;
    uint32_t kb = cxla_m_f2u(tk) - cxla_m_f2u(CXLA_M_SHIFTF); /* k, mod 2^32 */
    float h = cxla_m_fmaf(-k, 0x1.7f7d1cp-21f, cxla_m_fmaf(-k, 0x1.62e400p-2f, a));
    /* (e^(2h) - 1) / 2 = h + h^2 Q(h), Q's coefficients those of cxla_m_expm1_poly times
     * 2^(i+1) */
    float h2 = h * h;
    float q01 = cxla_m_fmaf(0x1.555556p-1f, h, 1.0f);
    float q23 = cxla_m_fmaf(0x1.110fd0p-3f, h, 0x1.5554fap-2f);
    float q45 = cxla_m_fmaf(0x1.a2b47cp-7f, h, 0x1.6d3a9cp-5f);
    float q = cxla_m_fmaf(cxla_m_fmaf(q45, h2, q23), h2, q01);
    float qh = cxla_m_fmaf(h2, q, h);
    float s2 = cxla_m_pow2f(kb + 1u); /* 2^(k+1) */
    float t = cxla_m_fmaf(s2, qh, cxla_m_fmaf(s2, 0.5f, -1.0f));
    return cxla_m_copysignf(t / (t + 2.0f), x);
}

/* ---- log, log1p --------------------------------------------------------------------- */

/* k ln2 + ln(1 + f) + c for f in [sqrt(1/2) - 1, sqrt(2) - 1] and a small correction c:
 * ln(1 + f) = 2 atanh(s), s = f / (2 + f), |s| <= 0.1716, written f - f^2/2 + s (f^2/2 +
 * R(s^2)) (fdlibm's arrangement: the large terms f and f^2/2 are nearly exact, the rest is a
 * correction below 0.03 of the result), R(z) = z P(z) with P of degree 3 fitted at
 * Chebyshev nodes (relative error 2^-33 in exact arithmetic). The small terms are summed
 * first and k ln2_hi (exact, 15 bits) last. One division. */
CXLA_M_INLINE float cxla_m_log_core(float f, float k, float c) {
    float s = f / (2.0f + f);
    float z = s * s;
    float p = 0x1.ce8ec4p-3f;
    p = p * z + 0x1.24c124p-2f;
    p = p * z + 0x1.99986ep-2f;
    p = p * z + 0x1.555556p-1f;
    float hfsq = 0.5f * f * f;
    float v = s * (hfsq + z * p) + (k * 0x1.7f7d1cp-20f + c);
    return ((v - hfsq) + f) + k * 0x1.62e400p-1f;
}

/* x = 2^k m with m in [sqrt(1/2), sqrt(2)) from the bits (denormals scaled by 2^23 first);
 * *out_f = m - 1 (exact), k returned as a float. For a positive finite x. */
CXLA_M_INLINE float cxla_m_log_split(float x, float *out_f) {
    int sub = x < 0x1p-126f;
    float xs = cxla_m_self(sub, x * 0x1p23f, x);
    uint32_t ix = cxla_m_f2u(xs);
    /* tmp's top 9 bits are k + 256 (the offset keeps the arithmetic unsigned). */
    uint32_t tmp = ix - 0x3f3504f3u + 0x80000000u; /* 0x3f3504f3: sqrt(1/2) */
    float k = (float)(int32_t)(tmp >> 23) - 256.0f;
    *out_f = cxla_m_u2f(ix - ((tmp & 0xff800000u) ^ 0x80000000u)) - 1.0f;
    return k - cxla_m_self(sub, 23.0f, 0.0f);
}

CXLA_M_INLINE float cxla_f32_log(float x) {
    int inf = x == INFINITY, zero = x == 0.0f, nan = (x < 0.0f) | (x != x);
    float f;
    float k = cxla_m_log_split(x, &f); /* garbage for x <= 0, Inf, NaN: fixed below */
    float r = cxla_m_log_core(f, k, 0.0f);
    r = cxla_m_self(inf, x, r);
    r = cxla_m_self(zero, -INFINITY, r);
    return cxla_m_self(nan, NAN, r);
}

/* ln(1 + x) with u = 1 + x rounded: u = 2^k m as log's. When k = 0 (x in about
 * [-0.29, 0.41]) f = x itself (exact) and the core does the rest. Otherwise ln(1 + x) =
 * ln u + ln(1 + c/u) = k ln2 + ln m + c/u within 2^-47, with c = x - (u - 1) the rounding
 * error of u (exact: u - 1 and x - (u - 1) are exact for u in [0.35, 2^24]; beyond, c/u is
 * below 2^-24 against a result above 16). |result| >= 0.34 there. Two divisions. */
CXLA_M_INLINE float cxla_f32_log1p(float x) {
    float u = 1.0f + x;
    float f;
    float k = cxla_m_log_split(u, &f);
    int k0 = k == 0.0f;
    float c = (x - (u - 1.0f)) / u;
    f = cxla_m_self(k0, x, f);
    c = cxla_m_self(k0, 0.0f, c);
    int inf = x == INFINITY, minus1 = x == -1.0f, zero = x == 0.0f;
    int nan = (x < -1.0f) | (x != x);
    float r = cxla_m_log_core(f, k, c);
    r = cxla_m_self(inf, x, r);
    r = cxla_m_self(minus1, -INFINITY, r);
    r = cxla_m_self(zero, x, r); /* -0 -> -0 */
    return cxla_m_self(nan, NAN, r);
}

/* ---- erf ---------------------------------------------------------------------------- */

/* erf |x| = |x| + |x| P(x^2) for |x| < 1 (P of degree 6 fitted to erf(x)/x - 1: the leading
 * |x| is exact and the correction at most 0.13 of it; relative error 2^-28 in exact
 * arithmetic); 1 - e^(-x^2) R(1/|x|) on [1, 4] (R of degree 8 fitted to erfc(x) e^(x^2) in
 * 1/x, relative error 2^-23.6; erfc <= 0.16 there, so its errors count at most a sixth
 * against the result). x^2's rounding (2^-24 relative, 16 2^-24 at 4) shifts e^(-x^2) by
 * x^2 2^-24 relative, at most 0.16 ulp of the result. From 4 on the float result is 1
 * (erfc 4 < 2^-25). Both pieces are computed and one selected; one division. */
CXLA_M_INLINE float cxla_f32_erf(float x) {
    float af = cxla_m_absf(x);
    int over = af > 4.0f;
    float a = cxla_m_self(over, 4.0f, af); /* NaN stays NaN */
    float z = a * a;
    float p = 0x1.49234ep-14f;
    p = p * z - 0x1.a3dc18p-11f;
    p = p * z + 0x1.5401dcp-8f;
    p = p * z - 0x1.b7f88cp-6f;
    p = p * z + 0x1.ce2cf0p-4f;
    p = p * z - 0x1.81273ep-2f;
    p = p * z + 0x1.06eba8p-3f;
    float small = a + a * p;
    float u = 1.0f / a;
    float rr = -0x1.4a239cp-7f;
    rr = rr * u + 0x1.034b52p-5f;
    rr = rr * u + 0x1.1a1fb0p-6f;
    rr = rr * u - 0x1.dfccf0p-3f;
    rr = rr * u + 0x1.f75a16p-2f;
    rr = rr * u - 0x1.e083ccp-2f;
    rr = rr * u + 0x1.52c87ap-5f;
    rr = rr * u + 0x1.1e481cp-1f;
    rr = rr * u + 0x1.145404p-12f;
    /* e^(-z) for z in [1, 16]: 2^k with k in [-24, -1] is one normal power of two */
    float k;
    uint32_t kb;
    float r = cxla_m_exp_reduce(-z, &k, &kb);
    float e = (1.0f + cxla_m_expm1_poly(r)) * cxla_m_pow2f(kb);
    float large = 1.0f - e * rr;
    int is_small = a < 1.0f;
    return cxla_m_copysignf(cxla_m_self(is_small, small, large), x);
}

/* ---- sin, cos, tan ------------------------------------------------------------------ */

/* One step of the large-argument reduction: t = x c is exact (24 x 24 bits); its value
 * mod 4 (exact, in [-2, 2]; 0 when |t| >= 2^49, a multiple of 4 then) is added to the
 * sum *s with its rounding error collected in *e (Knuth's two-sum). */
CXLA_M_INLINE void cxla_m_pio2_step(double x, double c, double *s, double *e) {
    double t = x * c;
    double m = t - ((t + 0x1.8p54) - 0x1.8p54);
    int in_range = (t < 0x1p49) & (t > -0x1p49);
    m = cxla_m_seld(in_range, m, 0.0);
    double sum = *s + m;
    double bb = sum - *s;
    *e += (*s - (sum - bb)) + (m - bb);
    *s = sum;
}

/* x = (k + r) pi/2 with |r| <= 1/2 (a little over): returns r pi/2 as a double with a
 * relative error below 2^-50, and k mod 4 in *out_q.
 * |x| < 2^23: Cody-Waite with pi/2 in four pieces of 30 bits (k < 2^23, so k P1, k P2,
 * k P3 are exact and the subtractions round only where the remainder is large).
 * |x| >= 2^23: Payne-Hanek: x 2/pi mod 4 as the sum of x c_i mod 4 over 24-bit pieces c_i
 * of 2/pi (216 bits: the rest is below 2^-88 for any float), in double-double.
 * Both are computed and one selected (no branch). Cody-Waite's error is relative by
 * construction; Payne-Hanek's is below 2^-85 absolute (in units of pi/2), and no float
 * comes nearer a multiple of pi/2 than 1.6e-9 (16367173 * 2^72, about 2^-29). */
CXLA_M_INLINE double cxla_m_trig_reduce(float x, uint32_t *out_q) {
    double xd = (double)x;
    double t = xd * 0x1.45f306dc9c883p-1 + CXLA_M_SHIFT;
    uint64_t kb = cxla_m_d2u(t);
    double k = t - CXLA_M_SHIFT;
    double r =
        ((xd - k * 0x1.921fb54000000p+0) - k * 0x1.10b4611800000p-30) - k * 0x1.313198a000000p-61;
    r = r - k * 0x1.701b839a25205p-92;

    double s = 0.0, e = 0.0;
    cxla_m_pio2_step(xd, 0x1.45f3060000000p-1, &s, &e);
    cxla_m_pio2_step(xd, 0x1.b939100000000p-26, &s, &e);
    cxla_m_pio2_step(xd, 0x1.529fc00000000p-52, &s, &e);
    cxla_m_pio2_step(xd, 0x1.3abe880000000p-75, &s, &e);
    cxla_m_pio2_step(xd, 0x1.ea69ba0000000p-97, &s, &e);
    cxla_m_pio2_step(xd, 0x1.81b6c40000000p-121, &s, &e);
    cxla_m_pio2_step(xd, 0x1.2b32780000000p-145, &s, &e);
    cxla_m_pio2_step(xd, 0x1.0e41040000000p-170, &s, &e);
    cxla_m_pio2_step(xd, 0x1.fca2c60000000p-193, &s, &e);
    double tb = s + CXLA_M_SHIFT; /* |s| <= 18 */
    uint64_t kb2 = cxla_m_d2u(tb);
    double rb = ((s - (tb - CXLA_M_SHIFT)) + e) * 0x1.921fb54442d18p+0;

    int small = cxla_m_absf(x) < 0x1p23f;
    uint64_t mask = 0u - (uint64_t)small;
    *out_q = (uint32_t)((kb & mask) | (kb2 & ~mask)) & 3u;
    return cxla_m_seld(small, r, rb);
}

/* sin and cos of |a| <= pi/4 (+ a little): Taylor series to a^11 and a^12 (truncation
 * relative errors below 2^-36 and 2^-41). */
CXLA_M_INLINE double cxla_m_sin_poly(double a) {
    double z = a * a;
    return a + a * z *
                   (-0x1.5555555555555p-3 +
                    z * (0x1.1111111111111p-7 +
                         z * (-0x1.a01a01a01a01ap-13 +
                              z * (0x1.71de3a556c734p-19 + z * -0x1.ae64567f544e4p-26))));
}

CXLA_M_INLINE double cxla_m_cos_poly(double a) {
    double z = a * a;
    return 1.0 +
           z * (-0.5 + z * (0x1.5555555555555p-5 +
                            z * (-0x1.6c16c16c16c17p-10 +
                                 z * (0x1.a01a01a01a01ap-16 +
                                      z * (-0x1.27e4fb7789f5cp-22 + z * 0x1.1eed8eff8d898p-29)))));
}

/* The value in quadrant q from sin a and cos a: +-sin a or +-cos a; NaN for +-Inf and
 * NaN, -0 for -0. Every arm is computed before the selects (so that gcc if-converts). */
CXLA_M_INLINE float cxla_m_trig_finish(float x, uint32_t q, double sa, double ca) {
    double v = cxla_m_seld(q & 1u, ca, sa);
    double nv = -v;
    v = cxla_m_seld((q >> 1) & 1u, nv, v);
    float r = (float)v, nan = x - x;
    int zero = x == 0.0f, finite = cxla_m_finitef(x);
    r = cxla_m_self(zero, x, r); /* -0 -> -0 */
    return cxla_m_self(finite, r, nan);
}

/* sin x: quadrant q picks +-sin a or +-cos a. */
CXLA_M_INLINE float cxla_f32_sin(float x) {
    uint32_t q;
    double a = cxla_m_trig_reduce(x, &q);
    return cxla_m_trig_finish(x, q, cxla_m_sin_poly(a), cxla_m_cos_poly(a));
}

CXLA_M_INLINE float cxla_f32_cos(float x) {
    uint32_t q;
    double a = cxla_m_trig_reduce(x, &q);
    /* cos x = sin(x + pi/2); trig_finish keeps a zero x, but cos +-0 = 1 */
    float r = cxla_m_trig_finish(x, q + 1u, cxla_m_sin_poly(a), cxla_m_cos_poly(a));
    int zero = x == 0.0f;
    return cxla_m_self(zero, 1.0f, r);
}

/* tan x = sin a / cos a, or -cos a / sin a in odd quadrants: one division. */
CXLA_M_INLINE float cxla_f32_tan(float x) {
    uint32_t q;
    double a = cxla_m_trig_reduce(x, &q);
    double sa = cxla_m_sin_poly(a), ca = cxla_m_cos_poly(a);
    int odd = (int)(q & 1u);
    double nca = -ca;
    double v = cxla_m_seld(odd, nca, sa) / cxla_m_seld(odd, sa, ca);
    float r = (float)v, nan = x - x;
    int zero = x == 0.0f, finite = cxla_m_finitef(x);
    r = cxla_m_self(zero, x, r); /* -0 -> -0 */
    return cxla_m_self(finite, r, nan);
}

/* ---- atan2 -------------------------------------------------------------------------- */

/* atan2(y, x) from atan of m = min(|x|,|y|) / max(|x|,|y|) in [0, 1]: for m > tan(pi/8)
 * atan m = pi/4 + atan u, u = (mn - mx) / (mn + mx) (exact numerator and denominator);
 * atan u = u + u^3 A(u^2) on |u| <= tan(pi/8), A of degree 6 fitted at Chebyshev nodes
 * (relative error below 2^-38). Then pi/2 - a when |y| > |x|, pi - a when x is negative
 * (or -0), and y's sign. Both-zero and both-infinite arguments are mapped to 0/1 and 1/1,
 * which gives C's +-0, +-pi, +-pi/4 and +-3pi/4 there. */
CXLA_M_INLINE float cxla_f32_atan2(float y, float x) {
    double ax = (double)cxla_m_absf(x), ay = (double)cxla_m_absf(y);
    int x_big = ax > ay, y_big = ay > ax, nan = (x != x) | (y != y);
    int both_inf = (ax == (double)INFINITY) & (ay == (double)INFINITY);
    double mx = cxla_m_seld(x_big, ax, ay), mn = cxla_m_seld(x_big, ay, ax);
    int zero = mx == 0.0;
    mn = cxla_m_seld(both_inf, 1.0, mn);
    mx = cxla_m_seld(both_inf | zero, 1.0, mx);
    int big = mn > 0x1.a827999fcef32p-2 * mx; /* tan(pi/8) */
    double diff = mn - mx, sum = mn + mx;
    double u = cxla_m_seld(big, diff, mn) / cxla_m_seld(big, sum, mx);
    double z = u * u;
    double p = -0x1.5555555506817p-2 +
               z * (0x1.999998308a1f6p-3 +
                    z * (-0x1.2491c344707ecp-3 +
                         z * (0x1.c6f70a32ff410p-4 +
                              z * (-0x1.71d961cef27bcp-4 +
                                   z * (0x1.2460024796c31p-4 + z * -0x1.4ba6b97c74361p-5)))));
    double a = cxla_m_seld(big, 0x1.921fb54442d18p-1, 0.0) + (u + u * z * p);
    double a2 = 0x1.921fb54442d18p+0 - a; /* pi/2 - a */
    a = cxla_m_seld(y_big, a2, a);
    double a3 = 0x1.921fb54442d18p+1 - a; /* pi - a */
    a = cxla_m_seld((int)(cxla_m_f2u(x) >> 31), a3, a);
    float r = cxla_m_copysignf((float)a, y), xy = x + y;
    return cxla_m_self(nan, xy, r);
}

/* ---- pow ---------------------------------------------------------------------------- */

/* |x|^y = e^(y ln|x|) in double: ln|x| has relative error below 2^-48 and |y ln|x|| is
 * clamped to [-110, 100] (outside, the float result is 0 or Inf), so the exponent is
 * off by at most 2^-41 and e^t by 2^-34 relative. The sign is negative when x is
 * negative (or -0, -Inf) and y an odd integer; then C99 Annex F's cases by selects:
 * pow(x, +-0) = 1, pow(1, y) = 1, pow(-1, +-Inf) = 1, NaN when either is NaN, and NaN for
 * finite negative x with finite non-integer y. */
CXLA_M_INLINE float cxla_f32_pow(float x, float y) {
    double ax = (double)cxla_m_absf(x), yd = (double)y;
    double l = cxla_m_log(ax);
    int x_zero = ax == 0.0, x_inf = ax == (double)INFINITY;
    l = cxla_m_seld(x_zero, -(double)INFINITY, l);
    l = cxla_m_seld(x_inf, (double)INFINITY, l);
    double t = yd * l; /* NaN only for 0 * Inf, fixed below */
    int under = t<-110.0, over = t> 100.0;
    t = cxla_m_seld(under, -110.0, t);
    t = cxla_m_seld(over, 100.0, t);
    double s;
    double q = cxla_m_expq(t, &s);
    float r = (float)(s + s * q);

    /* y is an integer when |y| >= 2^24 (Inf included) or equal to its rounding; odd when
     * also below 2^24 and y/2 is not an integer. */
    double ay = (double)cxla_m_absf(y);
    int below = ay < 0x1p24;
    double yh = 0.5 * yd;
    /* below 2^24 the roundings are exact and valid; above, their results are unused */
    int y_whole = ((yd + CXLA_M_SHIFT) - CXLA_M_SHIFT) == yd;
    int yh_whole = ((yh + CXLA_M_SHIFT) - CXLA_M_SHIFT) == yh;
    int is_int = (!below) | y_whole;
    int is_odd = below & y_whole & !yh_whole;
    int neg = ((cxla_m_f2u(x) & 0x80000000u) != 0) & is_odd;
    float nr = -r;
    r = cxla_m_self(neg, nr, r);

    int one = (ax == 1.0) & (ay == (double)INFINITY);
    int finite_neg = (x < 0.0f) & (x > -INFINITY);
    int nan = (x != x) | (y != y) | (finite_neg & !is_int);
    int unit = (y == 0.0f) | (x == 1.0f);
    r = cxla_m_self(one, 1.0f, r);
    r = cxla_m_self(nan, NAN, r);
    return cxla_m_self(unit, 1.0f, r);
}

/* ---- rsqrt, sqrt, cbrt -------------------------------------------------------------- */

#if defined(__NO_MATH_ERRNO__)
/* Compiled with -fno-math-errno (as generated code should be), sqrt is an instruction that
 * gcc and clang vectorize: the interpreter's own expressions, bit-exact. (With errno,
 * each call keeps a path to libm for negative arguments and the loop stays scalar.) */
CXLA_M_INLINE float cxla_f32_rsqrt(float x) {
    return (float)(1.0 / sqrt((double)x));
}

CXLA_M_INLINE float cxla_f32_sqrt(float x) {
    return sqrtf(x); /* correctly rounded, as (float)sqrt((double)x) */
}
#else
/* 1/sqrt(x) for a positive normal double: the classic bit estimate (relative error
 * below 0.035) and three Newton steps (0.035 -> 2e-3 -> 5e-6 -> 4e-11, below 2^-34). */
CXLA_M_INLINE double cxla_m_rsqrt(double x) {
    double y = cxla_m_u2d(0x5fe6eb50c7b537a9ull - (cxla_m_d2u(x) >> 1));
    double h = 0.5 * x;
    y = y * (1.5 - h * y * y);
    y = y * (1.5 - h * y * y);
    y = y * (1.5 - h * y * y);
    return y;
}

/* The interpreter computes (float)(1.0 / sqrt((double)x)); this is within 1 ulp. */
CXLA_M_INLINE float cxla_f32_rsqrt(float x) {
    int inf = x == INFINITY, zero = x == 0.0f, nan = (x < 0.0f) | (x != x);
    float r = (float)cxla_m_rsqrt((double)x);
    r = cxla_m_self(inf, 0.0f, r);
    r = cxla_m_self(zero, cxla_m_copysignf(INFINITY, x), r); /* 1/sqrt(-0) = -Inf */
    return cxla_m_self(nan, NAN, r);
}

/* Correctly rounded (as the interpreter's): x * rsqrt(x) is within 2^-33 of sqrt x, so
 * its float is the right one or a neighbour; the midpoints m between the candidate and its
 * neighbours decide, since m (25 bits) squared is exact in double and never equals x. */
CXLA_M_INLINE float cxla_f32_sqrt(float x) {
    double xd = (double)x;
    float f = (float)(xd * cxla_m_rsqrt(xd));
    uint32_t b = cxla_m_f2u(f);
    double fd = (double)f;
    float up = cxla_m_u2f(b + 1u), down = cxla_m_u2f(b - 1u);
    double hi = 0.5 * (fd + (double)up);
    double lo = 0.5 * (fd + (double)down);
    int too_low = hi * hi < xd;
    int too_high = lo * lo > xd;
    f = cxla_m_self(too_high, down, f);
    f = cxla_m_self(too_low, up, f);
    int keep = (x == 0.0f) | (x == INFINITY), nan = (x < 0.0f) | (x != x);
    f = cxla_m_self(keep, x, f); /* +-0 -> +-0 */
    return cxla_m_self(nan, NAN, f);
}
#endif

/* cbrt |x| from an estimate that divides the exponent by 3 in the high word (fdlibm's
 * constant, 5 bits) and two Halley steps y (y^3 + 2a) / (2y^3 + a) (cubic convergence:
 * 2^-5 -> 2^-15 -> below 2^-44). */
CXLA_M_INLINE float cxla_f32_cbrt(float x) {
    double a = (double)cxla_m_absf(x);
    int32_t hi = (int32_t)(cxla_m_d2u(a) >> 32);
    int32_t h3 = (int32_t)((double)hi * (1.0 / 3.0)) + 715094163;
    double y = cxla_m_u2d((uint64_t)(uint32_t)h3 << 32);
    double y3 = y * y * y;
    y = y * (y3 + 2.0 * a) / (2.0 * y3 + a);
    y3 = y * y * y;
    y = y * (y3 + 2.0 * a) / (2.0 * y3 + a);
    float r = cxla_m_copysignf((float)y, x);
    int keep = (x == 0.0f) | !cxla_m_finitef(x);
    return cxla_m_self(keep, x, r); /* +-0, +-Inf, NaN */
}

#endif /* CXLA_MATH_H_ */
