/* The cpu backend's thread pool: the cost model's split, every iteration of a range run
 * exactly once whatever the split (and the chunks of a cancellable run), shared pools,
 * a long kernel stopped between chunks by a cancellation from another thread and, in a
 * plan, at the first chunk boundary after the request (naming the instruction), and
 * large kernels (elementwise over broadcasts, row and column sums in fusions,
 * multi-output fusions) giving the same bits on 1, 2 and 3 threads as on the
 * interpreter; pools whose parts run on OpenMP's team and pools with their own workers,
 * nested kernels included. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <sched.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    CHECK(cpu_pool_chunks(1000, 100) == 1);               /* small: one chunk */
    CHECK(cpu_pool_chunks(1e12, 100) == 100);             /* huge: one per iteration at most */
    CHECK(cpu_pool_chunks(1e12, 1) == 1);                 /* a kernel that cannot be split */
    CHECK(cpu_pool_chunks(2.5 * 32 * 1048576, 64) == 3);  /* about 32 Mi byte-equivalents */
    /* The chunks the threads of a split take in turn: 4 per thread, each worth 256 Ki
     * byte-equivalents, no more than the iterations, never fewer than the threads. */
    CHECK(cpu_pool_chunks_split(1e9, 1000, 2) == 8);
    CHECK(cpu_pool_chunks_split(1e9, 5, 2) == 5);
    CHECK(cpu_pool_chunks_split(3.0 * 256 * 1024, 1000, 2) == 3);
    CHECK(cpu_pool_chunks_split(1.0 * 256 * 1024, 1000, 2) == 2);
    CHECK(cpu_pool_chunks_split(1e9, 1000, 1) == 1);
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
        CHECK(cpu_pool_run_kernel(a, count_kernel, &info, NULL, NULL, NULL));
        int bad = 0;
        for (int i = 0; i < N; i++) bad += atomic_load(&hits[i]) != (i < N - round ? 1 : 0);
        CHECK_MSG(bad == 0, "round %d: %d iterations not run exactly once", round, bad);
    }
    cpu_pool_release(b);
    cpu_pool_release(a);
}

/* Chunks (a cancellation that is never requested) split the parts differently, yet every
 * iteration still runs exactly once. */
static void test_chunks_run_every_iteration_once(void) {
    cpu_pool *a = NULL;
    CHECK_OK(cpu_pool_acquire(3, &a));
    exec_cancel never;
    exec_cancel_init(&never, NULL);
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < N; i++) atomic_store(&hits[i], 0);
        /* 1e9 / 32 Mi: about 30 chunks in all, fewer than the iterations. */
        cpu_kernel_info info = {.range = N - 37 * round, .cost = 1e9};
        CHECK(cpu_pool_run_kernel(round % 2 ? a : NULL, count_kernel, &info, NULL, NULL, &never));
        int bad = 0;
        for (int i = 0; i < N; i++) bad += atomic_load(&hits[i]) != (i < info.range ? 1 : 0);
        CHECK_MSG(bad == 0, "round %d: %d iterations not run exactly once", round, bad);
    }
    cpu_pool_release(a);
}

/* A kernel whose iterations each run a kernel of their own on the same pool (a nested
 * split: on OpenMP's team, a nested region of one thread that must still run every part). */
static cpu_pool *nest_pool;
static atomic_int nest_hits[8][N];

static void nest_inner(void *const *out, const void *const *in, int64_t begin, int64_t end) {
    (void)out;
    atomic_int *row = (atomic_int *)in[0];
    for (int64_t i = begin; i < end; i++) atomic_fetch_add(&row[i], 1);
}

static void nest_outer(void *const *out, const void *const *in, int64_t begin, int64_t end) {
    (void)out;
    (void)in;
    for (int64_t r = begin; r < end; r++) {
        const void *inner_in[1] = {nest_hits[r]};
        cpu_kernel_info info = {.range = N, .cost = 1e9};
        cpu_pool_run_kernel(nest_pool, nest_inner, &info, NULL, inner_in, NULL);
    }
}

/* Every iteration once, nested or not, on a pool whose parts run on OpenMP's team (when
 * the process has OpenMP: oneDNN's) and on one that keeps its own workers
 * (the default; CXLA_CPU_POOL=openmp asks for the team when a pool is created). */
static void test_team_and_workers(void) {
    for (int kind = 0; kind < 2; kind++) {
        if (kind == 0) setenv("CXLA_CPU_POOL", "openmp", 1);
        cpu_pool *pool = NULL;
        CHECK_OK(cpu_pool_acquire(kind == 0 ? 2 : 5, &pool)); /* new counts: new pools */
        if (kind == 0) unsetenv("CXLA_CPU_POOL");
        if (!pool) continue;
        /* The team exactly when the process has OpenMP's entry point. */
        bool openmp = kind == 0 && dlsym(RTLD_DEFAULT, "GOMP_parallel") != NULL;
        CHECK(cpu_pool_on_team(pool) == openmp);
        nest_pool = pool;
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < N; i++) atomic_store(&hits[i], 0);
            cpu_kernel_info info = {.range = N - round, .cost = 1e9};
            CHECK(cpu_pool_run_kernel(pool, count_kernel, &info, NULL, NULL, NULL));
            int bad = 0;
            for (int i = 0; i < N; i++) bad += atomic_load(&hits[i]) != (i < N - round ? 1 : 0);
            CHECK_MSG(bad == 0, "pool %d round %d: %d iterations not run exactly once", kind, round,
                      bad);
            for (int r = 0; r < 8; r++)
                for (int i = 0; i < N; i++) atomic_store(&nest_hits[r][i], 0);
            cpu_kernel_info outer = {.range = 8, .cost = 1e9};
            CHECK(cpu_pool_run_kernel(pool, nest_outer, &outer, NULL, NULL, NULL));
            bad = 0;
            for (int r = 0; r < 8; r++)
                for (int i = 0; i < N; i++) bad += atomic_load(&nest_hits[r][i]) != 1;
            CHECK_MSG(bad == 0, "pool %d round %d: %d nested iterations not run exactly once", kind,
                      round, bad);
        }
        cpu_pool_release(pool);
    }
}

/* CXLA_CPU_POOL_AWAY=1 (threadpool.c, away_from_caller): every iteration still runs once,
 * and a worker that runs a part is not allowed on the CPU its caller ran on when it split
 * the kernel (its own affinity mask, read inside the kernel), when the process may use two
 * CPUs or more. */
static pthread_t away_caller;
static int away_cpu_at_call;
static atomic_int away_worker_parts, away_bad_masks; /* this round's */

static void away_kernel(void *const *out, const void *const *in, int64_t begin, int64_t end) {
    count_kernel(out, in, begin, end);
    /* About a microsecond per iteration, so that a worker wakes in time to take parts. */
    for (volatile int64_t k = 0; k < (end - begin) * 1000; k = k + 1) {
    }
    if (pthread_equal(pthread_self(), away_caller)) return;
    atomic_fetch_add(&away_worker_parts, 1);
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof(mine), &mine) != 0 || CPU_ISSET(away_cpu_at_call, &mine))
        atomic_fetch_add(&away_bad_masks, 1);
}

static void test_workers_away_from_caller(void) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < 2) return;
    setenv("CXLA_CPU_POOL_AWAY", "1", 1);
    cpu_pool *pool = NULL;
    CHECK_OK(cpu_pool_acquire(4, &pool)); /* a new count: a new pool, made with the setting */
    unsetenv("CXLA_CPU_POOL_AWAY");
    if (!pool) return;
    away_caller = pthread_self();
    int bad_parts = 0, worker_parts = 0;
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < N; i++) atomic_store(&hits[i], 0);
        atomic_store(&away_worker_parts, 0);
        atomic_store(&away_bad_masks, 0);
        away_cpu_at_call = sched_getcpu();
        cpu_kernel_info info = {.range = N - round, .cost = 1e9};
        CHECK(cpu_pool_run_kernel(pool, away_kernel, &info, NULL, NULL, NULL));
        int bad = 0;
        for (int i = 0; i < N; i++) bad += atomic_load(&hits[i]) != (i < N - round ? 1 : 0);
        CHECK_MSG(bad == 0, "round %d: %d iterations not run exactly once", round, bad);
        /* The caller may have moved since it set the masks: only rounds where it did not. */
        if (sched_getcpu() != away_cpu_at_call) continue;
        bad_parts += atomic_load(&away_bad_masks);
        worker_parts += atomic_load(&away_worker_parts);
    }
    CHECK_MSG(bad_parts == 0, "%d of %d parts ran on a worker allowed on the caller's CPU",
              bad_parts, worker_parts);
    if (getenv("CXLA_TEST_VERBOSE"))
        fprintf(stderr, "workers ran %d parts away from the caller\n", worker_parts);
    cpu_pool_release(pool);
}

/* A slow kernel: a millisecond per iteration. */
static atomic_int slow_done;
static void slow_kernel(void *const *out, const void *const *in, int64_t begin, int64_t end) {
    (void)out;
    (void)in;
    for (int64_t i = begin; i < end; i++) {
        struct timespec t = {0, 1000000};
        nanosleep(&t, NULL);
        atomic_fetch_add(&slow_done, 1);
    }
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *cancel_after_50ms(void *arg) {
    struct timespec t = {0, 50000000};
    nanosleep(&t, NULL);
    exec_cancel_request(arg, CXLA_STATUS_CANCELLED, "asked by the test");
    return NULL;
}

/* 3,000 iterations of a millisecond on 3 threads (a second of work, or three) stop soon
 * after another thread cancels them at 50 ms; without the cancellation, false is never
 * returned (the rounds above). */
static void test_cancel_stops_a_long_kernel(void) {
    cpu_pool *a = NULL;
    CHECK_OK(cpu_pool_acquire(3, &a));
    for (int with_pool = 0; with_pool <= 1; with_pool++) {
        exec_cancel cancel;
        exec_cancel_init(&cancel, NULL);
        atomic_store(&slow_done, 0);
        /* Cost as for one chunk per iteration: the check comes every millisecond. */
        cpu_kernel_info info = {.range = 3000, .cost = 1e15};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, cancel_after_50ms, &cancel) == 0);
        double t0 = now();
        bool done =
            cpu_pool_run_kernel(with_pool ? a : NULL, slow_kernel, &info, NULL, NULL, &cancel);
        double took = now() - t0;
        pthread_join(t, NULL);
        CHECK_MSG(!done, "the kernel ran to its end (%d iterations)", atomic_load(&slow_done));
        CHECK_MSG(atomic_load(&slow_done) < 1500, "%d iterations ran", atomic_load(&slow_done));
        CHECK_MSG(took < 0.6, "took %g s", took);
    }
    cpu_pool_release(a);
}

/* A poll hook that requests the cancellation the |n|-th time it runs. */
typedef struct poll_counter {
    int calls, cancel_at;
} poll_counter;

static void count_polls(exec_cancel *self, void *user) {
    poll_counter *pc = user;
    if (++pc->calls == pc->cancel_at)
        exec_cancel_request(self, CXLA_STATUS_CANCELLED, "asked by the poll hook");
}

/* One kernel of 8 Mi elements (about 100 Mi byte-equivalents: several chunks) on one
 * thread: the plan polls once before it, the kernel between its chunks. A request made
 * at the kernel's first chunk boundary stops the run there, naming the fusion. */
static void test_plan_stops_inside_a_kernel(void) {
    static const char *const text =
        "HloModule long\n"
        "f {\n  x = f32[2048,4096] parameter(0)\n  e = f32[2048,4096] tanh(x)\n"
        "  ROOT m = f32[2048,4096] multiply(e, x)\n}\n"
        "ENTRY main {\n  x = f32[2048,4096] parameter(0)\n"
        "  ROOT big = f32[2048,4096] fusion(x), kind=kLoop, calls=f\n}\n";
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, (size_t)-1, "long", &m));
    if (!m) return;
    CHECK_OK(cxla_hlo_verify(m));
    cxla_literal *x = NULL;
    CHECK_OK(cxla_literal_create(&m->entry->params[0]->shape, &x));
    exec_compile_options co = {.thread_count = 1};
    void *compiled = NULL;
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    /* at 1: the plan's poll before the kernel; at 2: the kernel's first chunk boundary
     * (before chunks, the kernel ran to its end and the run succeeded). */
    for (int at = 1; at <= 2 && compiled && x; at++) {
        exec_cancel cancel;
        exec_cancel_init(&cancel, NULL);
        poll_counter pc = {0, at};
        cancel.poll = count_polls;
        cancel.poll_user = &pc;
        exec_run_options ro = {.cancel = &cancel};
        cxla_literal *got = NULL;
        const cxla_literal *args[1] = {x};
        cxla_status s = cpu_backend.execute(compiled, &ro, args, 1, &got);
        CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_CANCELLED);
        CHECK_MSG(s && strstr(cxla_status_message(s), "at big (fusion, computation main") &&
                      strstr(cxla_status_message(s), "asked by the poll hook"),
                  "at %d: %s", at, cxla_status_message(s));
        CHECK_EQ_I64(pc.calls, at);
        CHECK(got == NULL);
        cxla_status_free(s);
        cxla_literal_free(got);
    }
    if (compiled) cpu_backend.destroy(compiled);
    cxla_literal_free(x);
    cxla_module_destroy(m);
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
          TEST(test_workers_away_from_caller), TEST(test_team_and_workers),
          TEST(test_chunks_run_every_iteration_once), TEST(test_cancel_stops_a_long_kernel),
          TEST(test_plan_stops_inside_a_kernel), TEST(test_threads_match_interpreter))
