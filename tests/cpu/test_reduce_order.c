/* The cpu backend's fast reduction order (docs/semantics.md, "Reductions on the cpu
 * backend"): row reductions in 64 lanes and a fixed tree, large reductions to a scalar
 * split into rows (src/passes/reduce_split.c), reductions inside a row fusion (softmax,
 * layer norm), and tiled transposes. In the fast order each result must equal, bit for
 * bit, a plain C implementation of the documented order, and be within the documented
 * bound of the interpreter's; with CXLA_CPU_EXACT_MATH=1 it must equal the interpreter's
 * bit for bit. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "passes/passes.h"

enum { LANES = 64 };

typedef enum op { OP_ADD, OP_MAX, OP_MIN } op;

static float apply(op o, float a, float b) {
    if (o == OP_ADD) return a + b;
    if (o == OP_MAX) return a > b ? a : b;
    return a < b ? a : b;
}

/* The documented lane order over x[0..n), n >= 2 * LANES. */
static float lanes_order(op o, const float *x, int64_t n) {
    float acc[LANES];
    int64_t q = n / LANES, r = n % LANES;
    for (int64_t k = 0; k < LANES; k++) acc[k] = x[k];
    for (int64_t b = 1; b < q; b++)
        for (int64_t k = 0; k < LANES; k++) acc[k] = apply(o, acc[k], x[b * LANES + k]);
    for (int64_t k = 0; k < r; k++) acc[k] = apply(o, acc[k], x[q * LANES + k]);
    for (int64_t w = LANES / 2; w >= 1; w /= 2)
        for (int64_t k = 0; k < w; k++) acc[k] = apply(o, acc[k], acc[k + w]);
    return acc[0];
}

/* The interpreter's pairwise sum (runs of up to 16 in order, longer ones halved). */
static float pairwise(const float *x, int64_t n) {
    if (n <= 16) {
        float s = x[0];
        for (int64_t i = 1; i < n; i++) s += x[i];
        return s;
    }
    int64_t h = n / 2;
    return pairwise(x, h) + pairwise(x + h, n - h);
}

/* Any reduce of n elements in the fast order: lanes from 2 * LANES up, else (sums) the
 * interpreter's pairwise order, (maximum, minimum) an in-order fold. */
static float fast_order(op o, const float *x, int64_t n) {
    if (n >= 2 * LANES) return lanes_order(o, x, n);
    if (o == OP_ADD) return pairwise(x, n);
    float a = x[0];
    for (int64_t i = 1; i < n; i++) a = apply(o, a, x[i]);
    return a;
}

static const char *const reducer_text[] = {"add", "maximum", "minimum"};

/* The module: f32[rows, n] -> x * x + x (so that the input fusion computes something)
 * -> reduce of the last dimension (rows > 0) or of both (rows < 0: a scalar). */
static char *module_text(op o, int64_t rows, int64_t n, float init) {
    static char buf[2048];
    int64_t r = rows < 0 ? -rows : rows;
    char result[32] = "";
    if (rows >= 0) snprintf(result, sizeof result, "%" PRId64, r);
    snprintf(buf, sizeof buf,
             "HloModule order\n"
             "red { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
             " ROOT c = f32[] %s(a, b) }\n"
             "ENTRY main {\n x = f32[%" PRId64 ",%" PRId64 "] parameter(0)\n"
             " sq = f32[%" PRId64 ",%" PRId64 "] multiply(x, x)\n"
             " y = f32[%" PRId64 ",%" PRId64 "] add(sq, x)\n"
             " i = f32[] constant(%.9g)\n"
             " ROOT r = f32[%s] reduce(y, i), dimensions={%s}, to_apply=red\n}\n",
             reducer_text[o], r, n, r, n, r, n, (double)init, result, rows < 0 ? "0,1" : "1");
    return buf;
}

static cxla_literal *run_cpu(cxla_module *m, cxla_literal *arg) {
    void *compiled = NULL;
    exec_compile_options co = {0};
    exec_run_options ro = {0};
    cxla_literal *got = NULL;
    cxla_status s = cpu_backend.compile(m, &co, &compiled);
    if (!s) s = cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)&arg, 1, &got);
    if (compiled) cpu_backend.destroy(compiled);
    CHECK_OK(s);
    return got;
}

static uint64_t seed = 12345;
/* Sums whose fast result differs from the interpreter's: the fast order is in effect. */
static int fast_differs;
static float rnd(void) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(seed >> 40) / (double)(1ull << 24) - 0.4) * 3.0f;
}

/* One reduce: fast order (documented order bit for bit, the interpreter within the
 * bound) and exact mode (the interpreter bit for bit). */
static void check_reduce(op o, int64_t rows, int64_t n) {
    int64_t r = rows < 0 ? -rows : rows, total = r * n;
    float init = o == OP_ADD ? 0.25f : o == OP_MAX ? -1e30f : 1e30f;
    cxla_module *m = NULL;
    const char *text = module_text(o, rows, n, init);
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "order", &m));
    if (!m) return;
    cxla_literal *arg = NULL;
    CHECK_OK(cxla_literal_create(&m->entry->params[0]->shape, &arg));
    float *x = cxla_literal_data(arg);
    float *y = malloc(sizeof(float) * (size_t)total);
    double *mag = calloc((size_t)r, sizeof(double));
    for (int64_t i = 0; i < total; i++) {
        x[i] = rnd();
        y[i] = x[i] * x[i] + x[i];
        mag[rows < 0 ? 0 : i / n] += fabs((double)y[i]);
    }
    cxla_literal *want = NULL;
    CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)&arg, 1, &want));

    /* Fast order. */
    unsetenv("CXLA_CPU_EXACT_MATH");
    cxla_literal *got = run_cpu(m, arg);
    int64_t outs = rows < 0 ? 1 : r;
    for (int64_t j = 0; got && want && j < outs; j++) {
        float doc;
        if (rows >= 0) {
            doc = apply(o, init, fast_order(o, y + j * n, n));
        } else {
            /* Split into rows of C (reduce_split.c), the partials reduced in turn. */
            int64_t c = 0;
            for (int64_t d = 4096; d <= 65536 && d <= total / 2; d++)
                if (total % d == 0 && (c == 0 || llabs(d - 32768) < llabs(c - 32768))) c = d;
            if (total < (1 << 20) || c == 0) {
                doc = apply(o, init, fast_order(o, y, total));
            } else {
                int64_t p = total / c;
                float *part = malloc(sizeof(float) * (size_t)p);
                float id = o == OP_ADD ? -0.0f : o == OP_MAX ? -INFINITY : INFINITY;
                for (int64_t i = 0; i < p; i++) part[i] = apply(o, id, fast_order(o, y + i * c, c));
                doc = apply(o, init, fast_order(o, part, p));
                free(part);
            }
        }
        float g = ((const float *)cxla_literal_data_const(got))[j];
        float w = ((const float *)cxla_literal_data_const(want))[j];
        CHECK_MSG(memcmp(&g, &doc, sizeof g) == 0,
                  "%s rows %" PRId64 " n %" PRId64 " output %" PRId64
                  ": cpu %.9g, the documented order %.9g",
                  reducer_text[o], rows, n, j, (double)g, (double)doc);
        /* The bound against the interpreter: both orders' first-order bounds. */
        int64_t cnt = rows < 0 ? total : n;
        double depth_fast = (double)(cnt / LANES + 1 + 7) * 2, depth_interp = 16 + 64 + 1;
        double bound = (depth_fast + depth_interp) * ldexp(1.0, -24) * (mag[j] + fabs(init));
        if (o == OP_ADD && memcmp(&g, &w, sizeof g) != 0) fast_differs++;
        if (o == OP_ADD)
            CHECK_MSG(fabs((double)g - (double)w) <= bound,
                      "add rows %" PRId64 " n %" PRId64 ": cpu %.9g, interpreter %.9g, bound %.3g",
                      rows, n, (double)g, (double)w, bound);
        else
            CHECK_MSG(g == w, "%s: cpu %.9g, interpreter %.9g", reducer_text[o], (double)g,
                      (double)w);
    }
    cxla_literal_free(got);

    /* Exact mode: the interpreter's order. */
    setenv("CXLA_CPU_EXACT_MATH", "1", 1);
    got = run_cpu(m, arg);
    if (got && want) CHECK_OK(cxla_literal_compare(got, want, NULL));
    unsetenv("CXLA_CPU_EXACT_MATH");
    cxla_literal_free(got);
    cxla_literal_free(want);
    cxla_literal_free(arg);
    free(y);
    free(mag);
    cxla_module_destroy(m);
}

static void test_row_reductions(void) {
    const int64_t sizes[] = {5, 127, 128, 129, 200, 1000, 4096 + 13};
    for (int o = 0; o < 3; o++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            check_reduce((op)o, 3, sizes[i]);
    /* Rows folded several at a time (row_lanes_helper: 4 of f32), then the rest one at a
     * time: each row still in its own order, bit for bit. Operands this small fold one
     * row at a time unless CXLA_CPU_ROW_GROUP says otherwise (row_group in emit.c). */
    setenv("CXLA_CPU_ROW_GROUP", "4", 1);
    for (int o = 0; o < 3; o++) {
        check_reduce((op)o, 9, 1000);
        check_reduce((op)o, 6, 4096 + 13);
    }
    unsetenv("CXLA_CPU_ROW_GROUP");
    CHECK(fast_differs > 0);
}

static void test_scalar_reductions(void) {
    fast_differs = 0;
    check_reduce(OP_ADD, -3, 1000);        /* below the split: lanes over 3000 */
    check_reduce(OP_ADD, -1024, 1024);     /* 2^20: split into 32 rows of 32768 */
    check_reduce(OP_ADD, -1000, 1000);     /* 10^6: rows of 31250 */
    check_reduce(OP_MAX, -1024, 1025);     /* rows of 32800 */
    check_reduce(OP_ADD, -1031, 1031 * 2); /* 1031 is prime: rows of 2062 are too short */
    CHECK(fast_differs > 0);
}

/* softmax and layer norm over rows: one fusion in the fast order (row fusion), within
 * the bounds of the interpreter; bit for bit in exact mode. */
static void check_module(const char *text, double rtol) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "rows", &m));
    if (!m) return;
    cxla_literal *arg = NULL;
    CHECK_OK(cxla_literal_create(&m->entry->params[0]->shape, &arg));
    float *x = cxla_literal_data(arg);
    int64_t n = cxla_literal_element_count(arg);
    for (int64_t i = 0; i < n; i++) x[i] = rnd();
    cxla_literal *want = NULL;
    CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)&arg, 1, &want));
    unsetenv("CXLA_CPU_EXACT_MATH");
    cxla_literal *got = run_cpu(m, arg);
    cxla_tolerance tol = {.atol = rtol, .rtol = rtol, .ulps = 0};
    if (got && want) CHECK_OK(cxla_literal_compare(got, want, &tol));
    cxla_literal_free(got);
    setenv("CXLA_CPU_EXACT_MATH", "1", 1);
    got = run_cpu(m, arg);
    if (got && want) CHECK_OK(cxla_literal_compare(got, want, NULL));
    unsetenv("CXLA_CPU_EXACT_MATH");
    cxla_literal_free(got);
    cxla_literal_free(want);
    cxla_literal_free(arg);
    cxla_module_destroy(m);
}

static const char softmax[] =
    "HloModule softmax\n"
    "max { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] maximum(a, b) }\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b) }\n"
    "ENTRY main {\n x = f32[6,300] parameter(0)\n ninf = f32[] constant(-inf)\n"
    " m = f32[6] reduce(x, ninf), dimensions={1}, to_apply=max\n"
    " mb = f32[6,300] broadcast(m), dimensions={0}\n d = f32[6,300] subtract(x, mb)\n"
    " e = f32[6,300] exponential(d)\n zero = f32[] constant(0)\n"
    " s = f32[6] reduce(e, zero), dimensions={1}, to_apply=add\n"
    " sb = f32[6,300] broadcast(s), dimensions={0}\n ROOT r = f32[6,300] divide(e, sb)\n}\n";

static const char layer_norm[] =
    "HloModule layer_norm\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b) }\n"
    "ENTRY main {\n x = f32[2,3,260] parameter(0)\n zero = f32[] constant(0)\n"
    " inv = f32[] constant(0.00384615385)\n invr = f32[2,3] broadcast(inv), dimensions={}\n"
    " s = f32[2,3] reduce(x, zero), dimensions={2}, to_apply=add\n"
    " mean = f32[2,3] multiply(s, invr)\n"
    " meanb = f32[2,3,260] broadcast(mean), dimensions={0,1}\n"
    " d = f32[2,3,260] subtract(x, meanb)\n d2 = f32[2,3,260] multiply(d, d)\n"
    " s2 = f32[2,3] reduce(d2, zero), dimensions={2}, to_apply=add\n"
    " var = f32[2,3] multiply(s2, invr)\n eps = f32[] constant(1e-05)\n"
    " epsr = f32[2,3] broadcast(eps), dimensions={}\n ve = f32[2,3] add(var, epsr)\n"
    " r = f32[2,3] rsqrt(ve)\n rb = f32[2,3,260] broadcast(r), dimensions={0,1}\n"
    " ROOT n = f32[2,3,260] multiply(d, rb)\n}\n";

/* JAX's softmax takes maximum(reduce, -inf) before the broadcast; the exponentials of
 * x - max use cxla_m_exp_nonpos (emit_rows.c) there too. */
static const char softmax_jax[] =
    "HloModule softmax_jax\n"
    "max { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] maximum(a, b) }\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b) }\n"
    "ENTRY main {\n x = f32[2,3,256] parameter(0)\n ninf = f32[] constant(-inf)\n"
    " r = f32[2,3] reduce(x, ninf), dimensions={2}, to_apply=max\n"
    " nb = f32[2,3] broadcast(ninf), dimensions={}\n m = f32[2,3] maximum(r, nb)\n"
    " m1 = f32[2,3,1] reshape(m)\n b1 = f32[2,3,1] broadcast(m1), dimensions={0,1,2}\n"
    " m2 = f32[2,3] reshape(b1)\n mb = f32[2,3,256] broadcast(m2), dimensions={0,1}\n"
    " d = f32[2,3,256] subtract(x, mb)\n e = f32[2,3,256] exponential(d)\n"
    " zero = f32[] constant(0)\n s = f32[2,3] reduce(e, zero), dimensions={2}, to_apply=add\n"
    " sb = f32[2,3,256] broadcast(s), dimensions={0,1}\n"
    " ROOT q = f32[2,3,256] divide(e, sb)\n}\n";

/* exp(y - the row's minimum), y = 30 x: arguments up to about 90, which
 * cxla_m_exp_nonpos gets wrong from 44 up (its scale 2^(k+64) overflows): it must not be
 * used here. */
static const char exp_minus_min[] =
    "HloModule exp_minus_min\n"
    "min { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] minimum(a, b) }\n"
    "ENTRY main {\n x = f32[4,300] parameter(0)\n c30 = f32[] constant(30)\n"
    " c30b = f32[4,300] broadcast(c30), dimensions={}\n y = f32[4,300] multiply(x, c30b)\n"
    " inf = f32[] constant(inf)\n m = f32[4] reduce(y, inf), dimensions={1}, to_apply=min\n"
    " mb = f32[4,300] broadcast(m), dimensions={0}\n d = f32[4,300] subtract(y, mb)\n"
    " ROOT e = f32[4,300] exponential(d)\n}\n";

static void test_row_fusion(void) {
    check_module(softmax, 1e-5);
    check_module(softmax_jax, 1e-5);
    check_module(exp_minus_min, 1e-5);
    check_module(layer_norm, 1e-5);
}

/* The interpreter's maximum and minimum (NaN propagates, the first one; -0 < +0). */
static float exact_minmax(op o, float a, float b) {
    if (isnan(a)) return a;
    if (isnan(b)) return b;
    if (a == b) return (signbit(a) != 0) == (o == OP_MAX) ? b : a;
    return o == OP_MAX ? (a > b ? a : b) : (a < b ? a : b);
}

/* The documented lane order with the interpreter's fold (which NaN wins, and the sign of
 * a zero, follow the order). */
static float lanes_exact(op o, const float *x, int64_t n) {
    float acc[LANES];
    int64_t q = n / LANES, r = n % LANES;
    for (int64_t k = 0; k < LANES; k++) acc[k] = x[k];
    for (int64_t b = 1; b < q; b++)
        for (int64_t k = 0; k < LANES; k++) acc[k] = exact_minmax(o, acc[k], x[b * LANES + k]);
    for (int64_t k = 0; k < r; k++) acc[k] = exact_minmax(o, acc[k], x[q * LANES + k]);
    for (int64_t w = LANES / 2; w >= 1; w /= 2)
        for (int64_t k = 0; k < w; k++) acc[k] = exact_minmax(o, acc[k], acc[k + w]);
    return acc[0];
}

static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* A maximum or minimum inside a row fusion first folds with plain comparisons and refolds
 * a row that met a NaN or came to a zero (emit_reduce.c, inline_reduce): rows made of
 * those cases, x - broadcast(reduce(x)) bit for bit against the documented order (the
 * zero's sign and the NaN's payload show in the difference). */
static void test_row_fusion_minmax(void) {
    enum { R = 12, N = 300 };
    for (int o = OP_MAX; o <= OP_MIN; o++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "HloModule screen\n"
                 "red { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                 " ROOT c = f32[] %s(a, b) }\n"
                 "ENTRY main {\n x = f32[%d,%d] parameter(0)\n i = f32[] constant(%s)\n"
                 " m = f32[%d] reduce(x, i), dimensions={1}, to_apply=red\n"
                 " mb = f32[%d,%d] broadcast(m), dimensions={0}\n"
                 " ROOT d = f32[%d,%d] subtract(x, mb)\n}\n",
                 reducer_text[o], R, N, o == OP_MAX ? "-inf" : "inf", R, R, N, R, N);
        cxla_module *m = NULL;
        CHECK_OK(cxla_hlo_parse(text, strlen(text), "screen", &m));
        if (!m) return;
        cxla_literal *arg = NULL;
        CHECK_OK(cxla_literal_create(&m->entry->params[0]->shape, &arg));
        float *x = cxla_literal_data(arg);
        float s = o == OP_MAX ? 1.0f : -1.0f; /* the direction the reduce looks */
        for (int64_t i = 0; i < R * N; i++) x[i] = rnd();
        for (int64_t j = 0; j < N; j++) {
            x[1 * N + j] = -s * 0.0f; /* the losing zero, and one winning zero */
            x[2 * N + j] = s * 0.0f;  /* the winning zero, and one losing zero */
            x[5 * N + j] = -s * INFINITY;
            x[9 * N + j] = -s * (float)(j + 1); /* the winner at the end of a tail */
        }
        x[1 * N + 77] = s * 0.0f;
        x[2 * N + 250] = -s * 0.0f;
        x[3 * N + 17] = from_bits(0x7fc00001u); /* two NaNs: which one wins is the order's */
        x[3 * N + 81] = from_bits(0xffc00002u);
        x[4 * N + 299] = from_bits(0x7fc00003u);
        x[6 * N + 100] = s * INFINITY;
        x[7 * N + 3] = -s * INFINITY;
        x[8 * N + 0] = from_bits(0x7f800005u); /* signalling: quietened by the subtract */
        x[9 * N + N - 1] = s * 1e30f;
        x[10 * N + 10] = s * INFINITY;
        x[10 * N + 20] = from_bits(0x7fc00004u);
        unsetenv("CXLA_CPU_EXACT_MATH");
        cxla_literal *got = run_cpu(m, arg);
        const float *g = got ? cxla_literal_data_const(got) : NULL;
        int bad = 0;
        for (int64_t r = 0; g && r < R; r++) {
            float red = exact_minmax((op)o, s * -INFINITY, lanes_exact((op)o, x + r * N, N));
            for (int64_t j = 0; j < N; j++) {
                float want = x[r * N + j] - red;
                if (bits_of(g[r * N + j]) != bits_of(want) && bad++ < 5)
                    CHECK_MSG(false,
                              "%s row %" PRId64 " column %" PRId64 ": cpu %08x, the "
                              "documented order %08x",
                              reducer_text[o], r, j, bits_of(g[r * N + j]), bits_of(want));
            }
        }
        CHECK(got != NULL && bad == 0);
        cxla_literal_free(got);
        cxla_literal_free(arg);
        cxla_module_destroy(m);
    }
}

/* A row fusion that reads twice what it writes streams its rows out through local blocks
 * (emit_rows.c) where its result is large (here CXLA_CPU_STREAM_BYTES makes a small one
 * count): the same bits as the plain stores, and the exponentials kept in the local row. */
static void test_row_fusion_streamed(void) {
    static const char text[] =
        "HloModule streamed\n"
        "max { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] maximum(a, b) }\n"
        "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b) }\n"
        "ENTRY main {\n x = f32[5,384] parameter(0)\n y = f32[5,384] parameter(1)\n"
        " z = f32[5,384] add(x, y)\n ninf = f32[] constant(-inf)\n"
        " m = f32[5] reduce(z, ninf), dimensions={1}, to_apply=max\n"
        " mb = f32[5,384] broadcast(m), dimensions={0}\n d = f32[5,384] subtract(z, mb)\n"
        " e = f32[5,384] exponential(d)\n zero = f32[] constant(0)\n"
        " s = f32[5] reduce(e, zero), dimensions={1}, to_apply=add\n"
        " sb = f32[5,384] broadcast(s), dimensions={0}\n ROOT r = f32[5,384] divide(e, sb)\n}\n";
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "streamed", &m));
    if (!m) return;
    cxla_literal *args[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        CHECK_OK(cxla_literal_create(&m->entry->params[k]->shape, &args[k]));
        float *x = cxla_literal_data(args[k]);
        for (int64_t i = 0; i < 5 * 384; i++) x[i] = rnd();
    }
    cxla_literal *want = NULL, *got[2] = {NULL, NULL};
    CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)args, 2, &want));
    unsetenv("CXLA_CPU_EXACT_MATH");
    for (int streamed = 0; streamed < 2; streamed++) {
        setenv("CXLA_CPU_STREAM_BYTES", streamed ? "1" : "0", 1);
        void *compiled = NULL;
        exec_compile_options co = {0};
        exec_run_options ro = {0};
        cxla_status s = cpu_backend.compile(m, &co, &compiled);
        if (!s)
            s = cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, 2,
                                    &got[streamed]);
        if (compiled) cpu_backend.destroy(compiled);
        CHECK_OK(s);
    }
    unsetenv("CXLA_CPU_STREAM_BYTES");
    if (got[0] && got[1]) CHECK_OK(cxla_literal_compare(got[1], got[0], NULL));
    cxla_tolerance tol = {.atol = 1e-5, .rtol = 1e-5, .ulps = 0};
    if (got[1] && want) CHECK_OK(cxla_literal_compare(got[1], want, &tol));
    for (int k = 0; k < 2; k++) cxla_literal_free(got[k]), cxla_literal_free(args[k]);
    cxla_literal_free(want);
    cxla_module_destroy(m);
}

/* Transposes (tiled in the loop nest) move elements: bit for bit in both modes. */
static void test_transposes(void) {
    static const char *const cases[] = {
        "HloModule t\nENTRY main {\n x = f32[100,70] parameter(0)\n"
        " ROOT t = f32[70,100] transpose(x), dimensions={1,0}\n}\n",
        "HloModule t\nENTRY main {\n x = f32[5,40,33] parameter(0)\n"
        " ROOT t = f32[33,40,5] transpose(x), dimensions={2,1,0}\n}\n",
        "HloModule t\nENTRY main {\n x = f32[3,37,65] parameter(0)\n"
        " ROOT t = f32[3,65,37] transpose(x), dimensions={0,2,1}\n}\n",
        "HloModule t\nENTRY main {\n x = f32[2,33,4,45] parameter(0)\n"
        " t = f32[2,4,45,33] transpose(x), dimensions={0,2,3,1}\n"
        " ROOT n = f32[2,4,45,33] negate(t)\n}\n",
        "HloModule t\nENTRY main {\n x = f32[64,96] parameter(0)\n"
        " ROOT t = f32[96,64] transpose(x), dimensions={1,0}\n}\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_module(cases[i], 0);
}

/* Column reduces (the last dimension kept): chunks of whole rows (src/cpu/emit.c,
 * col_group) and, from 2^20 elements, the split of dimension 0 into parts
 * (src/passes/reduce_split.c). Both keep the interpreter's order, so every result is
 * the interpreter's bit for bit, in the fast mode as in exact mode. |dims| is the
 * operand's shape, |red| the reduced dimensions ("0" or "0,1"), |parts| the S the split
 * must choose (0: no split), |special| puts NaN and infinities into some columns. */
static void check_cols(const char *type, const char *reducer, int64_t rank, const int64_t *dims,
                       const char *red, int64_t parts, bool special) {
    char shape[128] = "", out[128] = "", text[1024];
    int64_t n = 1;
    for (int64_t k = 0, m = 0; k < rank; k++) {
        n *= dims[k];
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%" PRId64, k ? "," : "",
                 dims[k]);
        bool reduced = (k == 0) || (k == 1 && strcmp(red, "0,1") == 0);
        if (!reduced)
            snprintf(out + strlen(out), sizeof out - strlen(out), "%s%" PRId64, m++ ? "," : "",
                     dims[k]);
    }
    const char *init = strcmp(reducer, "add") == 0       ? "0.25"
                       : strcmp(reducer, "maximum") == 0 ? "-inf"
                                                         : "inf";
    snprintf(text, sizeof text,
             "HloModule cols\n"
             "red { a = %s[] parameter(0)\n b = %s[] parameter(1)\n ROOT c = %s[] %s(a, b) }\n"
             "ENTRY main {\n x = %s[%s] parameter(0)\n y = %s[%s] multiply(x, x)\n"
             " i = %s[] constant(%s)\n"
             " ROOT r = %s[%s] reduce(y, i), dimensions={%s}, to_apply=red\n}\n",
             type, type, type, reducer, type, shape, type, shape, type, init, type, out, red);
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "cols", &m));
    if (!m) return;
    cxla_literal *f32 = NULL, *arg = NULL;
    cxla_shape fshape = m->entry->params[0]->shape; /* the same dims, f32 */
    fshape.type = CXLA_F32;
    CHECK_OK(cxla_literal_create(&fshape, &f32));
    float *x = cxla_literal_data(f32);
    for (int64_t i = 0; i < n; i++) x[i] = rnd();
    if (special)
        for (int64_t i = 0; i + 3 < n; i += n / 7 + 1) {
            x[i] = NAN;
            x[i + 1] = INFINITY;
            x[i + 3] = -INFINITY; /* squared: +inf, in another column than i + 1 */
        }
    if (f32) CHECK_OK(cxla_literal_convert(f32, m->entry->params[0]->shape.type, &arg));
    cxla_literal *want = NULL;
    if (arg) CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)&arg, 1, &want));
    for (int exact = 0; exact < 2 && want; exact++) {
        if (exact) setenv("CXLA_CPU_EXACT_MATH", "1", 1);
        cxla_literal *got = run_cpu(m, arg);
        if (got) {
            cxla_status st = cxla_literal_compare(got, want, NULL);
            CHECK_MSG(!st, "%s %s [%s] dims {%s} (%s mode): %s", type, reducer, shape, red,
                      exact ? "exact" : "fast", st ? cxla_status_message(st) : "");
            cxla_status_free(st);
        }
        cxla_literal_free(got);
        unsetenv("CXLA_CPU_EXACT_MATH");
    }
    /* The split itself: 1 + log2(parts) reduces, or the one reduce when it does not apply;
     * the interpreter gives the same bits on the split module. */
    CHECK_OK(cxla_pass_reduce_split.run(m, &(bool){false}));
    int64_t reduces = 0, want_reduces = 1;
    for (int64_t p = parts; p > 1; p /= 2) want_reduces++;
    for (int64_t i = 0; i < m->entry->instr_count; i++)
        reduces += m->entry->instrs[i]->opcode == CXLA_OP_REDUCE;
    CHECK_MSG(reduces == want_reduces,
              "%s [%s]: %" PRId64 " reduces after reduce-split, want %" PRId64, reducer, shape,
              reduces, want_reduces);
    cxla_literal *split = NULL;
    if (arg) CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)&arg, 1, &split));
    if (split && want) CHECK_OK(cxla_literal_compare(split, want, NULL));
    cxla_literal_free(split);
    cxla_literal_free(want);
    cxla_literal_free(arg);
    cxla_literal_free(f32);
    cxla_module_destroy(m);
}

static void test_column_reductions(void) {
    /* Split into 8 parts of 128 rows; one chunk of 1024 columns. */
    check_cols("f32", "add", 2, (const int64_t[]){1024, 1024}, "0", 8, false);
    /* 1030 rows: 2 parts; NaN and infinities. */
    check_cols("f32", "add", 2, (const int64_t[]){1030, 1024}, "0", 2, true);
    /* 1031 rows (odd): no split; lanes of 8, one chunk of 1040 columns. */
    check_cols("f32", "add", 2, (const int64_t[]){1031, 1040}, "0", 0, false);
    /* 8256 columns: chunks of 4096, 4096 and 64; 2 parts of 65 rows. */
    check_cols("f32", "add", 2, (const int64_t[]){130, 8256}, "0", 2, false);
    /* Rank 3, kept [100, 96] (lanes of 32, a chunk of 96): 4 parts of 32. */
    check_cols("f32", "add", 3, (const int64_t[]){128, 100, 96}, "0", 4, true);
    /* Two reduced dimensions: chunks, no split; short rows (8 columns). */
    check_cols("f32", "add", 3, (const int64_t[]){40, 30, 136}, "0,1", 0, false);
    check_cols("f32", "add", 2, (const int64_t[]){300, 8}, "0", 0, true);
    /* f64, maximum and minimum (NaN propagates), bf16 (rounded after every step). */
    check_cols("f64", "add", 2, (const int64_t[]){2048, 520}, "0", 8, true);
    check_cols("f32", "maximum", 2, (const int64_t[]){1024, 1024}, "0", 8, true);
    check_cols("f32", "minimum", 2, (const int64_t[]){1031, 1040}, "0", 0, false);
    check_cols("bf16", "add", 2, (const int64_t[]){1024, 1024}, "0", 0, true);
    check_cols("bf16", "maximum", 2, (const int64_t[]){200, 4104}, "0", 0, false);
}

TEST_MAIN(TEST(test_row_reductions), TEST(test_scalar_reductions), TEST(test_row_fusion),
          TEST(test_row_fusion_minmax), TEST(test_row_fusion_streamed), TEST(test_transposes),
          TEST(test_column_reductions))
