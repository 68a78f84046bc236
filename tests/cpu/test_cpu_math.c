/* The fast f32 functions of src/cpu/cxla_math.h against the interpreter's reference
 * (float)fn((double)x) with libm, in ulp (the distance between the two floats in the
 * ordered list of all floats; +0 and -0 are one point but must agree in sign; NaN must
 * meet NaN). Each function fails when it exceeds its documented bound (docs/semantics.md).
 *
 * One-argument functions: every 2^32 float when CXLA_MATH_EXHAUSTIVE=1 is set (minutes
 * per function); by default a sample: every 257th bit pattern (16.7 million floats, every
 * exponent with about 32,000 mantissas), every float of a window of 2^21 (both signs)
 * where the function is most delicate, and the special values. Two-argument
 * functions (atan2, pow): a grid of special and spread values squared, random pairs, and
 * for pow pairs whose result lands in the normal and denormal range. Work is split over
 * two threads, or CXLA_MATH_THREADS. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "cpu/cpu_math.h"
#include "cpu/cxla_math.h"
#include "harness.h"
#include "exec/math.h"

#define SPECIAL_MISMATCH (INT64_C(1) << 40)

static int64_t ordered(float f) {
    uint32_t b = cxla_m_f2u(f);
    return (b & 0x80000000u) ? -(int64_t)(b & 0x7fffffffu) : (int64_t)b;
}

/* Distance in ulp, or SPECIAL_MISMATCH when NaN-ness or the sign of a zero differ. */
static int64_t ulp_distance(float got, float ref) {
    if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got) ? 0 : SPECIAL_MISMATCH;
    if (got == 0 && ref == 0) return signbit(got) == signbit(ref) ? 0 : SPECIAL_MISMATCH;
    int64_t d = ordered(got) - ordered(ref);
    return d < 0 ? -d : d;
}

typedef struct stats {
    int64_t max_ulp;
    float worst_x, worst_y;
    uint64_t count;
    uint64_t differ;   /* results not bit-identical to the reference */
    uint64_t over_one; /* results more than 1 ulp off */
} stats;

static void stats_add(stats *st, int64_t d, float x, float y) {
    st->count++;
    if (d > 0) st->differ++;
    if (d > 1) st->over_one++;
    if (d > st->max_ulp) {
        st->max_ulp = d;
        st->worst_x = x;
        st->worst_y = y;
    }
}

static void stats_merge(stats *into, const stats *from) {
    into->count += from->count;
    into->differ += from->differ;
    into->over_one += from->over_one;
    if (from->max_ulp > into->max_ulp) {
        into->max_ulp = from->max_ulp;
        into->worst_x = from->worst_x;
        into->worst_y = from->worst_y;
    }
}

/* ---- the functions and their references -------------------------------------------- */

/* The interpreter's f32 result: (float)fn((double)x) with fn from exec/math.h's list
 * (test_references checks that each ref_ below uses the function that list names). */

static float ref_exp(float x) {
    return (float)exp((double)x);
}
static float ref_expm1(float x) {
    return (float)expm1((double)x);
}
static float ref_log(float x) {
    return (float)log((double)x);
}
static float ref_log1p(float x) {
    return (float)log1p((double)x);
}
static float ref_tanh(float x) {
    return (float)tanh((double)x);
}
static float ref_logistic(float x) {
    return (float)exec_math_logistic((double)x);
}
static float ref_erf(float x) {
    return (float)erf((double)x);
}
static float ref_sin(float x) {
    return (float)sin((double)x);
}
static float ref_cos(float x) {
    return (float)cos((double)x);
}
static float ref_tan(float x) {
    return (float)tan((double)x);
}
static float ref_rsqrt(float x) {
    return (float)exec_math_rsqrt((double)x);
}
static float ref_sqrt(float x) {
    return (float)sqrt((double)x);
}
static float ref_cbrt(float x) {
    return (float)cbrt((double)x);
}
static float ref_atan2(float y, float x) {
    return (float)atan2((double)y, (double)x);
}
static float ref_pow(float x, float y) {
    return (float)pow((double)x, (double)y);
}

/* A sweep over bit patterns lo, lo + step, ... < hi: the fast function inlined. */
#define DEFINE_SWEEP(NAME)                                                                         \
    static void sweep_##NAME(uint64_t lo, uint64_t hi, uint64_t step, stats *st) {                 \
        for (uint64_t b = lo; b < hi; b += step) {                                                 \
            float x = cxla_m_u2f((uint32_t)b);                                                     \
            stats_add(st, ulp_distance(cxla_f32_##NAME(x), ref_##NAME(x)), x, 0.0f);               \
        }                                                                                          \
    }
DEFINE_SWEEP(exp)
DEFINE_SWEEP(expm1)
DEFINE_SWEEP(log)
DEFINE_SWEEP(log1p)
DEFINE_SWEEP(tanh)
DEFINE_SWEEP(logistic)
DEFINE_SWEEP(erf)
DEFINE_SWEEP(sin)
DEFINE_SWEEP(cos)
DEFINE_SWEEP(tan)
DEFINE_SWEEP(rsqrt)
DEFINE_SWEEP(sqrt)
DEFINE_SWEEP(cbrt)

typedef void (*sweep_fn)(uint64_t lo, uint64_t hi, uint64_t step, stats *st);
typedef float (*unary_fn)(float x);

typedef struct unary_case {
    const char *name;
    cxla_opcode op;
    const char *ref_name; /* the function exec/math.h names for op */
    sweep_fn sweep;
    float (*fast)(float);
    unary_fn ref;
    float dense_start; /* the DENSE_COUNT floats from here up (and their negatives) too */
    int bound;         /* the documented bound in ulp (docs/semantics.md) */
} unary_case;

/* The sample's density (the build as generated code uses a sparser one: the same code
 * under other flags). */
#ifndef CXLA_MATH_SAMPLE_STEP
#define CXLA_MATH_SAMPLE_STEP 257
#endif
#ifndef CXLA_MATH_PAIRS
#define CXLA_MATH_PAIRS (UINT64_C(1) << 24)
#endif
#define SAMPLE_STEP CXLA_MATH_SAMPLE_STEP
#define DENSE_COUNT (UINT64_C(1) << 21)
#define UNARY(NAME, OP, REF, START, BOUND)                                                         \
    { #NAME, CXLA_OP_##OP, REF, sweep_##NAME, cxla_f32_##NAME, ref_##NAME, START, BOUND }

/* The dense windows: where a reduction step or a piece boundary is (for cos the switch of
 * reductions), where cancellation would show (log near 1), and the overflow and underflow
 * thresholds of exp. */
static const unary_case unary_cases[] = {
    UNARY(exp, EXP, "exp", 88.0f, 1),
    UNARY(expm1, EXPM1, "expm1", 0.34f, 1),
    UNARY(log, LOG, "log", 0.99f, 1),
    UNARY(log1p, LOG1P, "log1p", 0.40f, 1),
    UNARY(tanh, TANH, "tanh", 0.17f, 2),
    UNARY(logistic, LOGISTIC, "exec_math_logistic", 1.0f, 2), /* 1 + e^-x near 1.3 */
    UNARY(erf, ERF, "erf", 0.99f, 1),                         /* across the switch of pieces at 1 */
    UNARY(sin, SIN, "sin", 1.5f, 1),
    UNARY(cos, COS, "cos", 0x1.ffp22f, 1), /* across the switch to Payne-Hanek at 2^23 */
    UNARY(tan, TAN, "tan", 1.5f, 1),
    UNARY(rsqrt, RSQRT, "exec_math_rsqrt", 1.0f, 1),
    UNARY(sqrt, SQRT, "sqrt", 1.0f, 0),
    UNARY(cbrt, CBRT, "cbrt", 1.0f, 1),
};

/* clang-format off */
static const float special_values[] = {
    0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1.0f, -1.0f, 2.0f, -2.0f, 0.5f, -0.5f,
    FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX, FLT_TRUE_MIN, -FLT_TRUE_MIN, 0x1p-126f * 0.75f,
    88.7228391f, 88.7228394f, -87.3365479f, -103.972076f, -103.972084f, /* exp thresholds */
    3.1415927f, -3.1415927f, 1.5707964f, 0x1p23f, 0x1p24f, 0x1p64f, 0x1p127f,
    16367173.0f * 0x1p72f, /* close to a multiple of pi/2 */
    9.0f, 10.0f, 3.95f, 3.92f, 1.25f, 17.0f, 40.0f, -17.0f, -40.0f, -110.0f, /* clamps, pieces */
    0x1p-30f, -0x1p-30f, 0x1.8p-23f,
    0x1p53f, 0x1p52f, 0x1p54f, 0x1.000002p53f, /* log1p: 1 + x inexact (an exhaustive find) */
    /* the worst inputs of the exhaustive runs of the float-only forms (docs/semantics.md) */
    0x1p-24f, -0x1.400002p-23f,              /* exp */
    0x1p-23f, -0x1.efbdfp-21f,               /* expm1 */
    0x1.46p-140f, 0x1.bb67bp-23f, 0x1.91b4p-135f, /* log, log1p, erf */
    0x1.e73186p-14f, -0x1.e73186p-14f,       /* tanh */
    -0x1.194afep+0f, 0x1.800002p-24f,        /* logistic */
    4.0f, 3.9f, -87.5f, 88.72f, -17.5f, -18.0f, /* erf's end, denormal exp, expm1's clamp */
    /* exp's clamps and the switch of its power-of-two split at 0 (2^(k+64) 2^-64 below,
     * 2^(k-1) 2 from 0 up); tanh's halved reduction at the first change of k (|x| = ln2/4),
     * a denormal, and its clamp */
    89.0f, 89.5f, -104.0f, -104.5f, -150.0f, -0x1p-149f, 0x1p-100f, -0x1p-100f,
    0x1.62e42ep-3f, 0x1.62e430p-3f, -0x1.62e430p-3f, 0x1p-140f, 9.999999f, 10.000001f,
    -0x1.9fe368p+6f, -0x1.9fe36ap+6f, 1e30f, -1e30f,
};
/* clang-format on */

/* ---- threads ------------------------------------------------------------------------ */

typedef struct job {
    void (*run)(struct job *);
    const unary_case *uc;
    uint64_t lo, hi, step;
    int part, parts;
    stats st;
} job;

static void *job_main(void *arg) {
    job *j = arg;
    j->run(j);
    return NULL;
}

/* Threads: 2, or CXLA_MATH_THREADS (for an exhaustive run on a bigger machine). */
#define MAX_THREADS 64
static int thread_count(void) {
    const char *e = getenv("CXLA_MATH_THREADS");
    int n = e ? atoi(e) : 2;
    return n < 1 ? 1 : (n > MAX_THREADS ? MAX_THREADS : n);
}

/* Runs jobs[0..n) at once, jobs[0] on this thread. */
static void run_jobs(job *jobs, int n) {
    pthread_t t[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    for (int i = 1; i < n; i++) started[i] = pthread_create(&t[i], NULL, job_main, &jobs[i]) == 0;
    jobs[0].run(&jobs[0]);
    for (int i = 1; i < n; i++) {
        if (started[i])
            pthread_join(t[i], NULL);
        else
            jobs[i].run(&jobs[i]);
    }
}

static void unary_job(job *j) {
    j->uc->sweep(j->lo, j->hi, j->step, &j->st);
}

static bool exhaustive(void) {
    const char *e = getenv("CXLA_MATH_EXHAUSTIVE");
    return e && e[0] == '1';
}

static void check_unary(const unary_case *uc) {
    int64_t bound = cpu_math_f32_bound_ulp(uc->op);
    stats total = {0};
    job jobs[MAX_THREADS];
    int n = thread_count();
    bool all = exhaustive();
    /* Every float (or every SAMPLE_STEP-th), in n contiguous parts. */
    uint64_t step = all ? 1 : SAMPLE_STEP, part = (UINT64_C(1) << 32) / (uint64_t)n;
    for (int p = 0; p < n; p++) {
        uint64_t lo = (uint64_t)p * part;
        lo += (step - lo % step) % step; /* stay on the global grid of multiples of step */
        uint64_t hi = p == n - 1 ? UINT64_C(1) << 32 : (uint64_t)(p + 1) * part;
        jobs[p] = (job){.run = unary_job, .uc = uc, .lo = lo, .hi = hi, .step = step};
    }
    run_jobs(jobs, n);
    for (int p = 0; p < n; p++) stats_merge(&total, &jobs[p].st);
    if (!all) {
        /* Every float of the dense window, both signs. */
        for (int sign = 0; sign < 2; sign++) {
            uint64_t lo = cxla_m_f2u(uc->dense_start) + (sign ? UINT64_C(0x80000000) : 0);
            for (int p = 0; p < n; p++)
                jobs[p] = (job){.run = unary_job,
                                .uc = uc,
                                .lo = lo + DENSE_COUNT * (uint64_t)p / (uint64_t)n,
                                .hi = lo + DENSE_COUNT * (uint64_t)(p + 1) / (uint64_t)n,
                                .step = 1};
            run_jobs(jobs, n);
            for (int p = 0; p < n; p++) stats_merge(&total, &jobs[p].st);
        }
    }
    for (size_t i = 0; i < sizeof special_values / sizeof special_values[0]; i++) {
        float x = special_values[i];
        int64_t d = ulp_distance(uc->fast(x), uc->ref(x));
        CHECK_MSG(d <= bound, "%s(%a): %a, reference %a", uc->name, (double)x, (double)uc->fast(x),
                  (double)uc->ref(x));
        stats_add(&total, d, x, 0.0f);
    }
    printf("  %-9s max %lld ulp (bound %lld) at %a; %llu inputs%s, %llu differ, %llu over 1 ulp\n",
           uc->name, (long long)total.max_ulp, (long long)bound, (double)total.worst_x,
           (unsigned long long)total.count, all ? " (all floats)" : "",
           (unsigned long long)total.differ, (unsigned long long)total.over_one);
    CHECK_MSG(total.max_ulp <= bound, "%s: %lld ulp at %a (%a, reference %a)", uc->name,
              (long long)total.max_ulp, (double)total.worst_x, (double)uc->fast(total.worst_x),
              (double)uc->ref(total.worst_x));
}

/* bf16 and f16 are computed in f32 and rounded (the interpreter rounds its f32 result
 * too): every value of both types, through the fast function and through the reference,
 * must round to the same value or to neighbours in the type's own ulp, whatever the f32
 * bound (two floats within a few f32 ulp straddle at most one of the narrow type's rounding
 * boundaries, 2^13 or more f32 ulp apart). NaN must meet NaN and zeros agree in sign. */
static int64_t narrow_ordered(uint16_t b) {
    return (b & 0x8000u) ? -(int64_t)(b & 0x7fffu) : (int64_t)b;
}

static void check_narrow(const unary_case *uc) {
    for (int bf = 0; bf < 2; bf++) {
        int64_t worst = 0;
        uint32_t worst_bits = 0, differ = 0;
        for (uint32_t b = 0; b < 65536u; b++) {
            float x = bf ? cxla_bf16_to_f32((uint16_t)b) : cxla_f16_to_f32((uint16_t)b);
            float g = uc->fast(x), r = uc->ref(x);
            uint16_t gb = bf ? cxla_f32_to_bf16(g) : cxla_f32_to_f16(g);
            uint16_t rb = bf ? cxla_f32_to_bf16(r) : cxla_f32_to_f16(r);
            float gn = bf ? cxla_bf16_to_f32(gb) : cxla_f16_to_f32(gb);
            float rn = bf ? cxla_bf16_to_f32(rb) : cxla_f16_to_f32(rb);
            int64_t d;
            if (isnan(gn) || isnan(rn))
                d = isnan(gn) && isnan(rn) ? 0 : SPECIAL_MISMATCH;
            else if (gn == 0 && rn == 0)
                d = signbit(gn) == signbit(rn) ? 0 : SPECIAL_MISMATCH;
            else
                d = narrow_ordered(gb) - narrow_ordered(rb);
            d = d < 0 ? -d : d;
            if (d > 0) differ++;
            if (d > worst) {
                worst = d;
                worst_bits = b;
            }
        }
        printf("  %-9s %s: max %lld ulp of its own over all 65536 values, %u differ\n", uc->name,
               bf ? "bf16" : "f16 ", (long long)worst, differ);
        CHECK_MSG(worst <= 1, "%s in %s: %lld ulp at bits 0x%04x", uc->name, bf ? "bf16" : "f16",
                  (long long)worst, worst_bits);
    }
}

#define UNARY_TEST(NAME)                                                                           \
    static void test_##NAME(void) {                                                                \
        for (size_t i = 0; i < sizeof unary_cases / sizeof unary_cases[0]; i++)                    \
            if (strcmp(unary_cases[i].name, #NAME) == 0) {                                         \
                check_unary(&unary_cases[i]);                                                      \
                check_narrow(&unary_cases[i]);                                                     \
            }                                                                                      \
    }
UNARY_TEST(exp)
UNARY_TEST(expm1)
UNARY_TEST(log)
UNARY_TEST(log1p)
UNARY_TEST(tanh)
UNARY_TEST(logistic)
UNARY_TEST(erf)
UNARY_TEST(sin)
UNARY_TEST(cos)
UNARY_TEST(tan)
UNARY_TEST(rsqrt)
UNARY_TEST(sqrt)
UNARY_TEST(cbrt)

/* cxla_m_exp_nonpos, which the emitter writes for softmax's exp(x - max of the row)
 * (emit_rows.c), must be cxla_f32_exp to the bit for every argument <= 0 and NaN: every
 * 127th negative bit pattern (NaN payloads included), every float of [-104.5, -103.5]
 * around its clamp, of [-88.8, -87.3] (denormal results) and of [-1, -0.5], and both
 * zeros. */
static void exp_nonpos_range(uint32_t lo, uint32_t hi, uint32_t step, int64_t *differ,
                             uint32_t *first) {
    for (uint64_t b = lo; b <= hi; b += step) {
        float x = cxla_m_u2f((uint32_t)b);
        if (cxla_m_f2u(cxla_m_exp_nonpos(x)) != cxla_m_f2u(cxla_f32_exp(x)) && (*differ)++ == 0)
            *first = (uint32_t)b;
    }
}

static void test_exp_nonpos(void) {
    int64_t differ = 0;
    uint32_t first = 0;
    exp_nonpos_range(0x80000000u, 0xffffffffu, 127, &differ, &first);
    exp_nonpos_range(cxla_m_f2u(-103.5f), cxla_m_f2u(-104.5f), 1, &differ, &first);
    exp_nonpos_range(cxla_m_f2u(-87.3f), cxla_m_f2u(-88.8f), 1, &differ, &first);
    exp_nonpos_range(cxla_m_f2u(-0.5f), cxla_m_f2u(-1.0f), 1, &differ, &first);
    exp_nonpos_range(0x80000000u, 0x80000000u, 1, &differ, &first);
    exp_nonpos_range(0u, 0u, 1, &differ, &first);
    CHECK_MSG(differ == 0,
              "cxla_m_exp_nonpos differs from cxla_f32_exp for %lld arguments, "
              "first %a",
              (long long)differ, (double)cxla_m_u2f(first));
}

/* ---- two arguments ------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *state) { /* splitmix64 */
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The grid's values: the specials, then for every 4th exponent three mantissas, both signs;
 * small integers and halves (pow's integer/odd rules). */
static int grid_values(float *out) {
    int n = 0;
    for (size_t i = 0; i < sizeof special_values / sizeof special_values[0]; i++)
        out[n++] = special_values[i];
    for (uint32_t e = 0; e < 255; e += 4) {
        static const uint32_t mant[] = {0, 0x2aaaab, 0x7fffff};
        for (int m = 0; m < 3; m++) {
            out[n++] = cxla_m_u2f((e << 23) | mant[m]);
            out[n++] = cxla_m_u2f(0x80000000u | (e << 23) | mant[m]);
        }
    }
    for (int i = -8; i <= 8; i++) {
        out[n++] = (float)i;
        out[n++] = (float)i + 0.5f;
    }
    out[n++] = 0x1p24f + 2.0f;
    out[n++] = 0x1p23f + 1.0f;
    out[n++] = -(0x1p23f + 1.0f);
    return n;
}

/* Random pairs: every bit pattern alike, and for pow half of them with a result in
 * range. */
static void binary_random(job *j) {
    bool pow_ = strcmp(j->uc->name, "pow") == 0;
    uint64_t state = 0x1234567ull + (uint64_t)j->part;
    for (uint64_t i = 0; i < j->hi; i++) {
        uint64_t r = rng_next(&state);
        float x = cxla_m_u2f((uint32_t)r), y = cxla_m_u2f((uint32_t)(r >> 32));
        if (pow_ && (i & 1)) {
            /* A positive or negative base and an exponent that puts x^y in [2^-150, 2^128]
             * (y rounded to an integer for negative x, half the time). */
            x = cxla_m_u2f((uint32_t)r & 0x7fffffffu);
            double lx = log(fabs((double)x));
            if (!(lx != 0) || !isfinite(lx)) continue;
            double t = -104.0 + (double)(r >> 40) / (double)(1u << 24) * 192.0;
            y = (float)(t / lx);
            if (i & 2) {
                x = -x;
                y = (float)rint((double)y);
            }
        }
        float got = pow_ ? cxla_f32_pow(x, y) : cxla_f32_atan2(x, y);
        float ref = pow_ ? ref_pow(x, y) : ref_atan2(x, y);
        stats_add(&j->st, ulp_distance(got, ref), x, y);
    }
}

static float g_grid[1024];
static int g_grid_n;

static void binary_job_grid(job *j) {
    bool pow_ = strcmp(j->uc->name, "pow") == 0;
    for (int a = j->part; a < g_grid_n; a += j->parts)
        for (int b = 0; b < g_grid_n; b++) {
            float x = g_grid[a], y = g_grid[b];
            float got = pow_ ? cxla_f32_pow(x, y) : cxla_f32_atan2(x, y);
            float ref = pow_ ? ref_pow(x, y) : ref_atan2(x, y);
            stats_add(&j->st, ulp_distance(got, ref), x, y);
        }
    binary_random(j);
}

static void check_binary(const char *name, cxla_opcode op, uint64_t random_pairs) {
    int64_t bound = cpu_math_f32_bound_ulp(op);
    g_grid_n = grid_values(g_grid);
    unary_case uc = {.name = name, .op = op};
    job jobs[MAX_THREADS];
    int n = thread_count();
    for (int p = 0; p < n; p++)
        jobs[p] = (job){.run = binary_job_grid,
                        .uc = &uc,
                        .hi = random_pairs / (uint64_t)n,
                        .part = p,
                        .parts = n};
    run_jobs(jobs, n);
    stats total = {0};
    for (int p = 0; p < n; p++) stats_merge(&total, &jobs[p].st);
    printf("  %-9s max %lld ulp (bound %lld) at (%a, %a); %llu pairs, %llu differ, %llu over 1 "
           "ulp\n",
           name, (long long)total.max_ulp, (long long)bound, (double)total.worst_x,
           (double)total.worst_y, (unsigned long long)total.count, (unsigned long long)total.differ,
           (unsigned long long)total.over_one);
    CHECK_MSG(total.max_ulp <= bound, "%s: %lld ulp at (%a, %a)", name, (long long)total.max_ulp,
              (double)total.worst_x, (double)total.worst_y);
}

static void test_atan2(void) {
    check_binary("atan2", CXLA_OP_ATAN2, exhaustive() ? UINT64_C(1) << 31 : CXLA_MATH_PAIRS);
}

static void test_pow(void) {
    check_binary("pow", CXLA_OP_POWER, exhaustive() ? UINT64_C(1) << 31 : CXLA_MATH_PAIRS);
}

/* The references are the interpreter's functions, and the emitter's mapping names the
 * functions tested here, with the documented bounds. */
static void test_references(void) {
    for (size_t i = 0; i < sizeof unary_cases / sizeof unary_cases[0]; i++) {
        const unary_case *uc = &unary_cases[i];
        const exec_math_info *mi = exec_math_unary(uc->op);
        CHECK_MSG(mi && strcmp(mi->fn_name, uc->ref_name) == 0, "%s: exec/math.h says %s", uc->name,
                  mi ? mi->fn_name : "(none)");
        char name[64];
        snprintf(name, sizeof name, "cxla_f32_%s", uc->name);
        const char *fn = cpu_math_f32_function(uc->op);
        CHECK_MSG(fn && strcmp(fn, name) == 0, "%s: cpu_math_f32_function gives %s", uc->name,
                  fn ? fn : "(none)");
        CHECK_EQ_I64(cpu_math_f32_bound_ulp(uc->op), uc->bound);
    }
    CHECK_EQ_STR(cpu_math_f32_function(CXLA_OP_POWER), "cxla_f32_pow");
    CHECK_EQ_STR(cpu_math_f32_function(CXLA_OP_ATAN2), "cxla_f32_atan2");
    /* Every opcode with a fast function is one of the fifteen tested here, and its name is
     * defined in the embedded text. */
    int count = 0;
    for (int op = 0; op < CXLA_OP_COUNT; op++) {
        const char *fn = cpu_math_f32_function((cxla_opcode)op);
        if (!fn) {
            CHECK_EQ_I64(cpu_math_f32_bound_ulp((cxla_opcode)op), -1);
            continue;
        }
        count++;
        char def[80];
        snprintf(def, sizeof def, "float %s(float", fn);
        CHECK_MSG(strstr(cpu_math_source(), def) != NULL, "%s is not defined", fn);
    }
    CHECK_EQ_I64(count, 15);
    CHECK(cpu_math_f32_function(CXLA_OP_ATAN) == NULL &&
          cpu_math_f32_function(CXLA_OP_ADD) == NULL);
}

/* Results the bound does not cover: the exact cases. */
static void test_exact_values(void) {
    CHECK(cxla_f32_exp(0.0f) == 1.0f);
    CHECK(cxla_f32_log(1.0f) == 0.0f && !signbit(cxla_f32_log(1.0f)));
    CHECK(signbit(cxla_f32_expm1(-0.0f)) && signbit(cxla_f32_sin(-0.0f)));
    CHECK(signbit(cxla_f32_tanh(-0.0f)) && signbit(cxla_f32_erf(-0.0f)));
    CHECK(signbit(cxla_f32_log1p(-0.0f)) && signbit(cxla_f32_tan(-0.0f)));
    CHECK(cxla_f32_pow(2.0f, 10.0f) == 1024.0f && cxla_f32_pow(-2.0f, 3.0f) == -8.0f);
    CHECK(cxla_f32_pow(NAN, 0.0f) == 1.0f && cxla_f32_pow(1.0f, NAN) == 1.0f);
    CHECK(cxla_f32_pow(-1.0f, INFINITY) == 1.0f && isnan(cxla_f32_pow(-2.0f, 0.5f)));
    CHECK(cxla_f32_pow(-0.0f, -3.0f) == -INFINITY && cxla_f32_pow(-INFINITY, 0.5f) == INFINITY);
    CHECK(cxla_f32_sqrt(4.0f) == 2.0f && cxla_f32_cbrt(-27.0f) == -3.0f);
    CHECK(cxla_f32_rsqrt(-0.0f) == -INFINITY && isnan(cxla_f32_sqrt(-1.0f)));
    CHECK(cxla_f32_atan2(0.0f, -0.0f) == 0x1.921fb6p+1f && cxla_f32_cos(0.0f) == 1.0f);
}

/* The library's embedded text is the header this test was compiled with. */
static void test_embedded_source(void) {
    FILE *f = fopen(CXLA_SOURCE_DIR "/src/cpu/cxla_math.h", "rb");
    CHECK(f != NULL);
    if (!f) return;
    static char text[1 << 17];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    CHECK(n > 1000 && n < sizeof text - 1);
    CHECK(strcmp(cpu_math_source(), text) == 0);
    CHECK(strstr(cpu_math_source(), "float cxla_f32_pow(float x, float y)") != NULL);
}

TEST_MAIN(TEST(test_embedded_source), TEST(test_references), TEST(test_exact_values),
          TEST(test_exp), TEST(test_exp_nonpos), TEST(test_expm1), TEST(test_log), TEST(test_log1p),
          TEST(test_tanh), TEST(test_logistic), TEST(test_erf), TEST(test_sin), TEST(test_cos),
          TEST(test_tan), TEST(test_rsqrt), TEST(test_sqrt), TEST(test_cbrt), TEST(test_atan2),
          TEST(test_pow))
