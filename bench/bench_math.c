/* Times the cpu backend's fast f32 functions (src/cpu/cxla_math.h) against the
 * interpreter's libm form (float)fn((double)x), one thread, over 16M floats each
 * (see bench/README.md); for the seven functions that have float-only forms (exp, expm1,
 * log, log1p, tanh, logistic, erf) also against the double forms they replaced
 * (bench_math_old.h), in the same run.
 *
 *   bench_math [--in-cache] [function ...]    (default: all fifteen)
 *
 * --in-cache: the best of 3000 passes over 4096 floats (16 KiB per array, in L1), scaled
 * to 16M floats: the arithmetic alone. Over 16M floats in memory a fast function is bound
 * by the memory; and on a busy machine a run of milliseconds is cut by the scheduler,
 * while the best of many runs of microseconds is not.
 *
 * Prints one line per function: "<name> <fast ms> <double ms> <libm ms> <double / fast>
 * <libm / fast> <max ulp>" ("-" where there is no double form). Each
 * time is the best of 5 runs over the same inputs, in a loop shaped as the generated
 * code's (blocks of 64 over restrict pointers), so the compiler vectorizes the fast one;
 * bench_math is built with -march=native -ffp-contract=off where the compiler takes them,
 * as generated code is. Inputs are spread over each function's useful range (exp over
 * [-87, 88], log over (0, 1e6], sin over [-100, 100], ...), from a fixed sequence. The last
 * column is the largest ulp distance between the two outputs: a check that the timed loop
 * computes what the tests measured. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_math_old.h"
#include "cpu/cxla_math.h"

#define N    (INT64_C(1) << 24)
#define RUNS 5

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float ref_logistic(float x) {
    return (float)(1.0 / (1.0 + exp(-(double)x)));
}

static float ref_rsqrt(float x) {
    return (float)(1.0 / sqrt((double)x));
}

/* One pair of loops per function: the fast one (inlined, vectorized) and libm's. */
#define LOOP64(BODY)                                                                               \
    for (int64_t i0 = 0; i0 + 64 <= n; i0 += 64)                                                   \
        for (int k = 0; k < 64; k++) {                                                             \
            int64_t i = i0 + k;                                                                    \
            BODY;                                                                                  \
        }
#define UNARY_LOOPS(NAME, REF)                                                                     \
    static void fast_##NAME(const float *restrict x, const float *restrict y, float *restrict o,   \
                            int64_t n) {                                                           \
        (void)y;                                                                                   \
        LOOP64(o[i] = cxla_f32_##NAME(x[i]))                                                       \
    }                                                                                              \
    static void libm_##NAME(const float *restrict x, const float *restrict y, float *restrict o,   \
                            int64_t n) {                                                           \
        (void)y;                                                                                   \
        LOOP64(o[i] = REF(x[i]))                                                                   \
    }
#define BINARY_LOOPS(NAME, REF)                                                                    \
    static void fast_##NAME(const float *restrict x, const float *restrict y, float *restrict o,   \
                            int64_t n) {                                                           \
        LOOP64(o[i] = cxla_f32_##NAME(x[i], y[i]))                                                 \
    }                                                                                              \
    static void libm_##NAME(const float *restrict x, const float *restrict y, float *restrict o,   \
                            int64_t n) {                                                           \
        LOOP64(o[i] = (float)REF((double)x[i], (double)y[i]))                                      \
    }

/* The double forms the float-only ones replaced. */
#define OLD_LOOPS(NAME)                                                                            \
    static void old_##NAME(const float *restrict x, const float *restrict y, float *restrict o,    \
                           int64_t n) {                                                            \
        (void)y;                                                                                   \
        LOOP64(o[i] = cxla_old_f32_##NAME(x[i]))                                                   \
    }

OLD_LOOPS(exp)
OLD_LOOPS(expm1)
OLD_LOOPS(log)
OLD_LOOPS(log1p)
OLD_LOOPS(tanh)
OLD_LOOPS(logistic)
OLD_LOOPS(erf)

UNARY_LOOPS(exp, (float)exp)
UNARY_LOOPS(expm1, (float)expm1)
UNARY_LOOPS(log, (float)log)
UNARY_LOOPS(log1p, (float)log1p)
UNARY_LOOPS(tanh, (float)tanh)
UNARY_LOOPS(logistic, ref_logistic)
UNARY_LOOPS(erf, (float)erf)
UNARY_LOOPS(sin, (float)sin)
UNARY_LOOPS(cos, (float)cos)
UNARY_LOOPS(tan, (float)tan)
UNARY_LOOPS(rsqrt, ref_rsqrt)
UNARY_LOOPS(sqrt, (float)sqrt)
UNARY_LOOPS(cbrt, (float)cbrt)
BINARY_LOOPS(atan2, atan2)
BINARY_LOOPS(pow, pow)

typedef void (*loop_fn)(const float *restrict, const float *restrict, float *restrict, int64_t);

typedef struct bench_case {
    const char *name;
    loop_fn fast, libm, old; /* old: the double form, or NULL */
    float lo, hi;            /* x uniform in [lo, hi] */
    float ylo, yhi;          /* y for the two-argument ones */
} bench_case;

#define CASE(NAME, LO, HI, YLO, YHI)                                                               \
    { #NAME, fast_##NAME, libm_##NAME, NULL, LO, HI, YLO, YHI }
#define CASE_OLD(NAME, LO, HI)                                                                     \
    { #NAME, fast_##NAME, libm_##NAME, old_##NAME, LO, HI, 0, 0 }

static const bench_case cases[] = {
    CASE_OLD(exp, -87.0f, 88.0f),
    CASE_OLD(expm1, -10.0f, 10.0f),
    CASE_OLD(log, 0.0f, 1e6f),
    CASE_OLD(log1p, -0.9f, 100.0f),
    CASE_OLD(tanh, -10.0f, 10.0f),
    CASE_OLD(logistic, -20.0f, 20.0f),
    CASE_OLD(erf, -4.0f, 4.0f),
    CASE(sin, -100.0f, 100.0f, 0, 0),
    CASE(cos, -100.0f, 100.0f, 0, 0),
    CASE(tan, -100.0f, 100.0f, 0, 0),
    CASE(rsqrt, 0.0f, 1e4f, 0, 0),
    CASE(sqrt, 0.0f, 1e4f, 0, 0),
    CASE(cbrt, -1e4f, 1e4f, 0, 0),
    CASE(atan2, -10.0f, 10.0f, -10.0f, 10.0f),
    CASE(pow, 0.0f, 10.0f, -10.0f, 10.0f),
};

/* x_i = lo + (hi - lo) u_i, u_i from a fixed Weyl sequence in [0, 1). */
static void fill(float *v, int64_t n, float lo, float hi, uint32_t seed) {
    uint32_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        s += 2654435761u;
        v[i] = lo + (hi - lo) * (float)((double)s / 4294967296.0);
    }
}

/* The elements of one timed run and the runs (16M floats, 5 runs; or --in-cache). */
static int64_t g_n = N, g_runs = RUNS;

/* The best run, in ms per 16M floats. */
static double best_ms(loop_fn f, const float *x, const float *y, float *o) {
    double best = 1e30;
    for (int64_t r = 0; r < g_runs; r++) {
        double t0 = now();
        f(x, y, o, g_n);
        double t = now() - t0;
        best = t < best ? t : best;
    }
    return best * 1e3 * (double)(N / g_n);
}

static int64_t ulps(float a, float b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? 0 : INT64_MAX;
    uint32_t ua = cxla_m_f2u(a), ub = cxla_m_f2u(b);
    int64_t ia = (ua >> 31) ? -(int64_t)(ua & 0x7fffffffu) : (int64_t)ua;
    int64_t ib = (ub >> 31) ? -(int64_t)(ub & 0x7fffffffu) : (int64_t)ub;
    return ia > ib ? ia - ib : ib - ia;
}

int main(int argc, char **argv) {
    float *x = malloc(sizeof(float) * (size_t)N), *y = malloc(sizeof(float) * (size_t)N);
    float *o1 = malloc(sizeof(float) * (size_t)N), *o2 = malloc(sizeof(float) * (size_t)N);
    if (!x || !y || !o1 || !o2) {
        fprintf(stderr, "bench_math: out of memory\n");
        return 1;
    }
    for (int a = 1; a < argc; a++)
        if (strcmp(argv[a], "--in-cache") == 0) {
            g_n = 4096;
            g_runs = 3000;
        }
    printf("ms per 16M floats: the best of %lld runs over %lld floats\n", (long long)g_runs,
           (long long)g_n);
    printf("%-9s %9s %9s %9s %9s %9s %8s\n", "function", "fast ms", "double ms", "libm ms",
           "dbl/fast", "libm/fast", "max ulp");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const bench_case *bc = &cases[c];
        bool wanted = true, named = false;
        for (int a = 1; a < argc; a++) {
            if (strcmp(argv[a], "--in-cache") == 0) continue;
            named = true;
            wanted = strcmp(argv[a], bc->name) == 0;
            if (wanted) break;
        }
        wanted = wanted || !named;
        if (!wanted) continue;
        fill(x, N, bc->lo, bc->hi, 1u);
        fill(y, N, bc->ylo, bc->yhi, 7u);
        double tf = best_ms(bc->fast, x, y, o1);
        double td = bc->old ? best_ms(bc->old, x, y, o2) : 0.0;
        double tl = best_ms(bc->libm, x, y, o2);
        int64_t worst = 0;
        for (int64_t i = 0; i < g_n; i++) {
            int64_t d = ulps(o1[i], o2[i]);
            worst = d > worst ? d : worst;
        }
        char old_ms[32] = "-", old_ratio[32] = "-";
        if (bc->old) {
            snprintf(old_ms, sizeof old_ms, "%.2f", td);
            snprintf(old_ratio, sizeof old_ratio, "%.2f", td / tf);
        }
        printf("%-9s %9.2f %9s %9.2f %9s %9.2f %8lld\n", bc->name, tf, old_ms, tl, old_ratio,
               tl / tf, (long long)worst);
    }
    free(x);
    free(y);
    free(o1);
    free(o2);
    return 0;
}
