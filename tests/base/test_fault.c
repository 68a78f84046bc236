/* Allocation-failure injection (src/base/fault.h), SQLite's way: a representative module
 * goes through the parser, the verifier, the runtime (client, compile, one run, a run
 * on two replicas with an all-reduce) and the interpreter, once without faults to count
 * its allocations, and then once for every n up to that count with the n-th allocation
 * failing (and once more with every allocation from the n-th on failing). Each time the
 * scenario must either succeed with the right result or fail with a status; it must
 * never crash, and in the sanitizer build (where the option is on by default) it must
 * leak nothing. Skipped (77) in builds without -DCXLA_FAULT_INJECTION=ON.
 *
 * The same on the cpu backend (its passes, emitter, compiler driver and cache, the arena
 * plan), in two forms that fit a test run: with the compile cache warm (the C compiler,
 * another process, never runs: of the ~600 allocations in this process, the first 300
 * and every third after them fail in turn), and with the cache cold (the compiler runs
 * each time, so every 29th allocation only), where a failed compile must leave no entry
 * but the right one in the cache. Under ASan the whole test takes 20 to 40 s. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fault.h"
#include "cpu/compiler.h"
#include "cxla/cxla.h"
#include "harness.h"
#include "hlo/hlo.h"

/* Small, but with what the parts allocate for: computations called by a while loop, a
 * reduce (in async sugar, which the async-desugar pass rewrites) and a call, a tuple, a
 * dot, a broadcast, constants, and an all-reduce. */
static const char *const module_text =
    "HloModule fault, replica_count=2\n"
    "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
    "cond {\n  t = (s32[], f32[2,2]) parameter(0)\n  i = s32[] get-tuple-element(t), index=0\n"
    "  n = s32[] constant(3)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
    "body {\n  t = (s32[], f32[2,2]) parameter(0)\n  i = s32[] get-tuple-element(t), index=0\n"
    "  m = f32[2,2] get-tuple-element(t), index=1\n  one = s32[] constant(1)\n"
    "  j = s32[] add(i, one)\n  d = f32[2,2] dot(m, m), lhs_contracting_dims={1}, "
    "rhs_contracting_dims={0}\n  ROOT r = (s32[], f32[2,2]) tuple(j, d)\n}\n"
    "half {\n  h = f32[2,2] parameter(0)\n  c = f32[] constant(0.5)\n"
    "  b = f32[2,2] broadcast(c), dimensions={}\n  ROOT m = f32[2,2] multiply(h, b)\n}\n"
    "ENTRY main {\n  p = f32[2,2] parameter(0)\n  z = s32[] constant(0)\n"
    "  t = (s32[], f32[2,2]) tuple(z, p)\n"
    "  w = (s32[], f32[2,2]) while(t), condition=cond, body=body\n"
    "  m = f32[2,2] get-tuple-element(w), index=1\n  k = f32[2,2] call(m), to_apply=half\n"
    "  zero = f32[] constant(0)\n"
    "  rs = ((f32[2,2], f32[]), f32[2], s32[]) reduce-start(k, zero), dimensions={1}, "
    "to_apply=add\n  s = f32[2] reduce-done(rs)\n"
    "  ROOT ar = f32[2] all-reduce(s), replica_groups={}, to_apply=add\n}\n";

/* p = [[1,1],[0,1]]: p^8 = [[1,8],[0,1]], halved [[.5,4],[0,.5]], row sums [4.5, .5],
 * all-reduced over 2 replicas: [9, 1]. */
static const float want[2] = {9.0f, 1.0f};

static bool is_want(const cxla_literal *r) {
    const float *v = r ? cxla_literal_data_const(r) : NULL;
    return v && cxla_literal_element_count(r) == 2 && v[0] == want[0] && v[1] == want[1];
}

/* The backend the runtime part of the scenario compiles for. */
static const char *backend = "interpreter";

/* The whole scenario; NULL when everything worked and gave |want| on both paths. */
static cxla_status scenario(void) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(module_text, (size_t)-1, "fault.hlo", &m);
    if (!s) s = cxla_verify_module(m);
    cxla_module_destroy(m);
    if (s) return s;
    cxla_client *client = NULL;
    cxla_executable *e = NULL;
    cxla_literal *arg = NULL, *one = NULL, *results[2] = {NULL, NULL};
    cxla_client_options co;
    cxla_client_options_init(&co);
    co.backend = backend;
    s = cxla_client_create(&co, &client);
    if (!s) s = cxla_client_compile_hlo_text(client, module_text, (size_t)-1, "fault.hlo", &e);
    if (!s) s = cxla_literal_parse("f32[2,2] {{1, 1}, {0, 1}}", (size_t)-1, NULL, &arg);
    /* One device: the all-reduce of a group of one is the identity (4.5, 0.5). */
    if (!s) {
        cxla_run_options o;
        cxla_run_options_init(&o);
        o.replica_id = 0;
        const cxla_literal *args[1] = {arg};
        cxla_status one_s = cxla_executable_run_with_options(e, &o, args, 1, &one);
        /* A module of 2 replicas refuses one device, or runs it: either is a status. */
        cxla_status_free(one_s);
    }
    if (!s) {
        cxla_run_options o;
        cxla_run_options_init(&o);
        o.replica_count = 2;
        const cxla_literal *rows[2][1] = {{arg}, {arg}};
        const cxla_literal *const *per[2] = {rows[0], rows[1]};
        s = cxla_executable_execute(e, &o, per, 1, results);
        if (!s && (!is_want(results[0]) || !is_want(results[1])))
            s = cxla_error(CXLA_STATUS_INTERNAL, "a wrong result after a fault");
    }
    cxla_literal_free(results[0]);
    cxla_literal_free(results[1]);
    cxla_literal_free(one);
    cxla_literal_free(arg);
    cxla_executable_destroy(e);
    cxla_client_destroy(client);
    return s;
}

/* Called before each run of the scenario (the cold cache empties the cache), and after
 * each run with a fault (the cold cache checks its entries). */
static void (*before_each)(void);
static void (*after_each_check)(long long n);

/* Runs the scenario without faults to count its allocations, then with the n-th failing
 * (once, then persistently) for n = 1 .. |first| and then every |stride|-th n up to the
 * count. */
static void every_allocation_fails(long long first, long long stride) {
    /* CXLA_TEST_FAULT_FULL=1: every n, for a thorough run by hand (minutes when cold). */
    const char *full = getenv("CXLA_TEST_FAULT_FULL");
    if (full && strcmp(full, "1") == 0) first = (long long)1 << 62;
    if (before_each) before_each();
    cxla_fault_arm(0, 0);
    cxla_status s = scenario();
    CHECK_MSG(!s, "%s: the scenario fails without faults: %s", backend, cxla_status_message(s));
    cxla_status_free(s);
    /* Count with an armed counter that never fires. */
    if (before_each) before_each();
    cxla_fault_arm((long long)1 << 62, 0);
    s = scenario();
    long long total = cxla_fault_count();
    cxla_fault_arm(0, 0);
    cxla_status_free(s);
    CHECK_MSG(total > 100, "only %lld allocations counted", total);
    int64_t failed = 0, succeeded = 0, runs = 0;
    for (int persistent = 0; persistent <= 1; persistent++) {
        for (long long n = 1; n <= total + 1; n = n < first ? n + 1 : n + stride) {
            if (before_each) before_each();
            cxla_fault_arm(n, persistent);
            s = scenario();
            int fired = cxla_fault_fired();
            cxla_fault_arm(0, 0);
            runs++;
            if (!fired) {
                CHECK_MSG(!s, "%s n=%lld: no fault, yet: %s", backend, n, cxla_status_message(s));
                cxla_status_free(s);
                break;
            }
            /* The right result despite the fault (an allocation with a fallback), or a
             * status; never a wrong result. */
            CHECK_MSG(!s || cxla_status_code_of(s) != CXLA_STATUS_INTERNAL ||
                          !strstr(cxla_status_message(s), "a wrong result"),
                      "%s n=%lld%s: %s", backend, n, persistent ? " (persistent)" : "",
                      cxla_status_message(s));
            if (s)
                failed++;
            else
                succeeded++;
            cxla_status_free(s);
            if (after_each_check) after_each_check(n);
        }
    }
    CHECK_MSG(failed > 0, "no fault made the scenario fail (%" PRId64 " succeeded)", succeeded);
    printf("%s: %lld allocations, %" PRId64 " runs with faults: %" PRId64
           " failed with a status, %" PRId64 " succeeded\n",
           backend, total, runs, failed, succeeded);
}

static void test_every_allocation_fails_once(void) {
    backend = "interpreter";
    every_allocation_fails((long long)1 << 62, 1);
}

/* ---- the cpu backend --------------------------------------------------------------- */

static char cache_dir[256];

/* The cache's entries (KEY.so), at most |cap| names of up to 63 characters; the count. */
static int cache_entries(char names[][64], int cap) {
    int n = 0;
    DIR *d = opendir(cache_dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 3 && len < 64 && strcmp(e->d_name + len - 3, ".so") == 0 && n < cap)
            strcpy(names[n++], e->d_name);
    }
    if (d) closedir(d);
    return n;
}

static void clear_cache(void) {
    cxla_status s = cpu_cache_clear(NULL);
    cxla_status_free(s);
}

/* The entry the fault-free compile writes; a failed compile may leave only it. */
static char good_entry[64];

static void check_cache_entries(long long n) {
    char names[8][64];
    int count = cache_entries(names, 8);
    for (int i = 0; i < count; i++)
        CHECK_MSG(strcmp(names[i], good_entry) == 0,
                  "n=%lld: a cache entry %s besides the right one (%s)", n, names[i], good_entry);
}

static void use_private_cache(void) {
    snprintf(cache_dir, sizeof(cache_dir), "/tmp/cxla-test-fault-XXXXXX");
    CHECK(mkdtemp(cache_dir) != NULL);
    setenv("CXLA_CACHE_DIR", cache_dir, 1);
    /* One worker thread: every run allocates the same things in the same order. */
    setenv("CXLA_NUM_THREADS", "1", 1);
}

/* Warm: the first run compiles and fills the cache; the runs with faults load from it,
 * and add no entry (one would come from a source that a fault made different). */
static void test_cpu_warm_cache(void) {
    use_private_cache();
    backend = "cpu";
    cxla_status s = scenario();
    CHECK_MSG(!s, "cpu: the scenario fails without faults: %s", cxla_status_message(s));
    cxla_status_free(s);
    char names[8][64];
    CHECK_EQ_I64(cache_entries(names, 8), 1);
    snprintf(good_entry, sizeof(good_entry), "%s", names[0]);
    before_each = NULL;
    after_each_check = check_cache_entries;
    every_allocation_fails(300, 3); /* the first 300, then every third */
    after_each_check = NULL;
    clear_cache();
    rmdir(cache_dir);
}

/* Cold: every run compiles (the C compiler runs); a failure may leave no entry in the
 * cache but the one of the right source. */
static void test_cpu_cold_cache(void) {
    use_private_cache();
    backend = "cpu";
    clear_cache();
    cxla_status s = scenario();
    CHECK_MSG(!s, "cpu: the scenario fails without faults: %s", cxla_status_message(s));
    cxla_status_free(s);
    char names[8][64];
    CHECK_EQ_I64(cache_entries(names, 8), 1);
    snprintf(good_entry, sizeof(good_entry), "%s", names[0]);
    before_each = clear_cache;
    after_each_check = check_cache_entries;
    every_allocation_fails(1, 29); /* each run compiles: ~40 runs */
    before_each = NULL;
    after_each_check = NULL;
    clear_cache();
    rmdir(cache_dir);
}

static void test_skip_without_faults(void) {
    if (!cxla_fault_available())
        test_skip_all("built without -DCXLA_FAULT_INJECTION=ON (the sanitizer build has it)");
}

TEST_MAIN(TEST(test_skip_without_faults), TEST(test_every_allocation_fails_once),
          TEST(test_cpu_warm_cache), TEST(test_cpu_cold_cache))
