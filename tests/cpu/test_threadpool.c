/* The cpu backend's thread pool: the cost model's split, every iteration of a range run
 * exactly once whatever the split, shared pools, and large kernels (elementwise over
 * broadcasts, row and column sums in fusions, multi-output fusions) giving the same bits
 * on 1, 2 and 3 threads as on the interpreter. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/threadpool.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

static void test_parts(void) {
    CHECK(cpu_pool_parts(1000, 100, 8) == 1);             /* small: the calling thread */
    CHECK(cpu_pool_parts(1e9, 100, 8) == 8);              /* large: one part per thread */
    CHECK(cpu_pool_parts(1e9, 3, 8) == 3);                /* no more parts than iterations */
    CHECK(cpu_pool_parts(1e9, 1, 8) == 1);                /* a kernel that cannot be split */
    CHECK(cpu_pool_parts(1e9, 100, 1) == 1);              /* one thread */
    CHECK(cpu_pool_parts(3.0 * 256 * 1024, 100, 8) == 3); /* parts of at least the minimum */
    CHECK(cpu_pool_threads(5) == 5);
    CHECK(cpu_pool_threads(0) >= 1);
}

enum { N = 1000 };
static atomic_int hits[N];

static void count_kernel(void *const *out, const void *const *in, int64_t begin, int64_t end) {
    (void)out;
    (void)in;
    for (int64_t i = begin; i < end; i++) atomic_fetch_add(&hits[i], 1);
}

static void test_pool_runs_every_iteration_once(void) {
    cpu_pool *a = NULL, *b = NULL;
    CHECK_OK(cpu_pool_acquire(3, &a));
    CHECK_OK(cpu_pool_acquire(3, &b));
    CHECK(a && a == b); /* one pool per thread count */
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < N; i++) atomic_store(&hits[i], 0);
        cpu_kernel_info info = {.range = N - round, .cost = 1e9};
        cpu_pool_run_kernel(a, count_kernel, &info, NULL, NULL);
        int bad = 0;
        for (int i = 0; i < N; i++) bad += atomic_load(&hits[i]) != (i < N - round ? 1 : 0);
        CHECK_MSG(bad == 0, "round %d: %d iterations not run exactly once", round, bad);
    }
    cpu_pool_release(b);
    cpu_pool_release(a);
}

/* Kernels big enough to be split: every output kind the emitter has. */
static const char *const module_text =
    "HloModule big\n"
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "mx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n"
    "fe {\n  x = f32[384,1000] parameter(0)\n  v = f32[1000] parameter(1)\n"
    "  vb = f32[384,1000] broadcast(v), dimensions={1}\n  m = f32[384,1000] multiply(x, vb)\n"
    "  ROOT t = f32[384,1000] tanh(m)\n}\n"
    "frow {\n  x = f32[384,1000] parameter(0)\n  e = f32[384,1000] exponential(x)\n"
    "  z = f32[] constant(0)\n  ROOT r = f32[384] reduce(e, z), dimensions={1}, to_apply=add\n}\n"
    "fcol {\n  x = f32[384,1000] parameter(0)\n  z = f32[] constant(0)\n"
    "  ROOT r = f32[1000] reduce(x, z), dimensions={0}, to_apply=add\n}\n"
    "fmo {\n  x = f32[384,1000] parameter(0)\n  z = f32[] constant(0)\n"
    "  ni = f32[] constant(-inf)\n"
    "  s = f32[384] reduce(x, z), dimensions={1}, to_apply=add\n"
    "  m = f32[384] reduce(x, ni), dimensions={1}, to_apply=mx\n"
    "  ROOT t = (f32[384], f32[384]) tuple(s, m)\n}\n"
    "ENTRY main {\n  x = f32[384,1000] parameter(0)\n  v = f32[1000] parameter(1)\n"
    "  y = f32[384,1000] parameter(2)\n"
    "  f1 = f32[384,1000] fusion(x, v), kind=kLoop, calls=fe\n"
    "  f2 = f32[384] fusion(f1), kind=kInput, calls=frow\n"
    "  f3 = f32[1000] fusion(y), kind=kInput, calls=fcol\n"
    "  f4 = (f32[384], f32[384]) fusion(x), kind=kInput, calls=fmo\n"
    "  a = f32[384,1000] add(x, y)\n"
    "  z = f32[] constant(0)\n"
    "  s = f32[] reduce(a, z), dimensions={0,1}, to_apply=add\n"
    "  g0 = f32[384] get-tuple-element(f4), index=0\n"
    "  g1 = f32[384] get-tuple-element(f4), index=1\n"
    "  ROOT r = (f32[384,1000], f32[384], f32[1000], f32[384], f32[384], f32[]) "
    "tuple(f1, f2, f3, g0, g1, s)\n}\n";

static void fill(cxla_literal *lit, uint64_t seed) {
    float *p = cxla_literal_data(lit);
    int64_t n = cxla_literal_element_count(lit);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (float)((int64_t)(seed >> 40) - (1 << 23)) / (float)(1 << 22);
    }
}

static void test_threads_match_interpreter(void) {
    /* Bit for bit with the interpreter: its own math functions, not the fast ones. */
    setenv("CXLA_CPU_EXACT_MATH", "1", 1);
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(module_text, (size_t)-1, "big", &m));
    if (!m) return;
    CHECK_OK(cxla_hlo_verify(m));
    cxla_literal *args[3] = {NULL};
    for (int k = 0; k < 3; k++) {
        CHECK_OK(cxla_literal_create(&m->entry->params[k]->shape, &args[k]));
        fill(args[k], (uint64_t)k + 1);
    }
    cxla_literal *oracle = NULL;
    CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)args, 3, &oracle));
    const int counts[] = {1, 2, 3};
    for (int t = 0; t < 3 && oracle; t++) {
        exec_compile_options co = {.thread_count = counts[t]};
        exec_run_options ro = {0};
        void *compiled = NULL;
        CHECK_OK(cpu_backend.compile(m, &co, &compiled));
        if (!compiled) continue;
        cxla_literal *got = NULL;
        CHECK_OK(cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, 3, &got));
        if (got) {
            cxla_status s = cxla_literal_compare(got, oracle, NULL);
            CHECK_MSG(s == NULL, "%d threads: %s", counts[t], s ? cxla_status_message(s) : "");
            cxla_status_free(s);
            cxla_literal_free(got);
        }
        cpu_backend.destroy(compiled);
    }
    cxla_literal_free(oracle);
    for (int k = 0; k < 3; k++) cxla_literal_free(args[k]);
    cxla_module_destroy(m);
}

/* oneDNN's calls and the kernels take the pool's threads divided among the runs in
 * progress (replicas on threads), at least one. */
static void test_share(void) {
    cpu_pool *pool = NULL;
    CHECK_OK(cpu_pool_acquire(4, &pool));
    if (!pool) return;
    CHECK_EQ_I64(cpu_pool_share(pool), 4);
    cpu_pool_enter(pool);
    CHECK_EQ_I64(cpu_pool_share(pool), 4);
    cpu_pool_enter(pool);
    CHECK_EQ_I64(cpu_pool_share(pool), 2);
    for (int i = 0; i < 3; i++) cpu_pool_enter(pool);
    CHECK_EQ_I64(cpu_pool_share(pool), 1); /* 5 runs on 4 threads */
    for (int i = 0; i < 5; i++) cpu_pool_leave(pool);
    CHECK_EQ_I64(cpu_pool_share(pool), 4);
    CHECK_EQ_I64(cpu_pool_share(NULL), 1);
    cpu_pool_release(pool);
}

TEST_MAIN(TEST(test_parts), TEST(test_share), TEST(test_pool_runs_every_iteration_once),
          TEST(test_threads_match_interpreter))
