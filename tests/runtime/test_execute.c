/* The public API of runs on several devices (include/cxla/runtime.h, src/runtime/
 * execute.c): cxla_executable_device_count, cxla_executable_execute on 1 to 4 replicas
 * with per-replica arguments and a collective, partitions, the module's own counts,
 * errors naming the device, time limits, host queues, and the MPI entry points in a
 * single process. Expected values are computed here from the definitions. */
#include <inttypes.h>
#include <stdlib.h>

#include "cxla/cxla.h"
#include "harness.h"

#define ADD_S32                                                                                    \
    "add {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT s = s32[] add(x, y)\n}\n"

static cxla_executable *compile(cxla_client *c, const char *text) {
    cxla_executable *e = NULL;
    cxla_status s = cxla_client_compile_hlo_text(c, text, (size_t)-1, "test", &e);
    if (s) {
        test_fail(__FILE__, __LINE__, "compile: %s\n%s", cxla_status_message(s), text);
        cxla_status_free(s);
        return NULL;
    }
    return e;
}

static cxla_literal *s32_vector(const int32_t *v, int64_t n) {
    cxla_literal *l = NULL;
    int64_t dims[1] = {n};
    cxla_shape shape = {.type = CXLA_S32, .rank = 1, .dims = dims};
    CHECK_OK(cxla_literal_create(&shape, &l));
    if (l) memcpy(cxla_literal_data(l), v, (size_t)n * sizeof(int32_t));
    return l;
}

static const int32_t *s32_data(const cxla_literal *l) {
    return (const int32_t *)cxla_literal_data_const(l);
}

/* all-reduce and all-gather of per-replica vectors, and replica-id, on 1..4 replicas. */
static void test_execute_replicas(void) {
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(NULL, &c));
    for (int64_t n = 1; n <= 4; n++) {
        char text[1024];
        snprintf(text, sizeof(text),
                 "HloModule m\n" ADD_S32 "ENTRY main {\n  p = s32[3] parameter(0)\n"
                 "  ar = s32[3] all-reduce(p), replica_groups={}, to_apply=add\n"
                 "  ag = s32[%" PRId64 "] all-gather(p), replica_groups={}, dimensions={0}\n"
                 "  id = u32[] replica-id()\n"
                 "  ROOT t = (s32[3], s32[%" PRId64 "], u32[]) tuple(ar, ag, id)\n}\n",
                 3 * n, 3 * n);
        cxla_executable *e = compile(c, text);
        if (!e) continue;
        cxla_run_options o;
        cxla_run_options_init(&o);
        o.replica_count = n;
        int64_t count = 0;
        CHECK_OK(cxla_executable_device_count(e, &o, &count));
        CHECK_EQ_I64(count, n);
        cxla_literal *args[4] = {0};
        const cxla_literal *rows[4][1];
        const cxla_literal *const *per[4];
        for (int64_t r = 0; r < n; r++) {
            int32_t v[3] = {(int32_t)(10 * r + 1), (int32_t)(10 * r + 2), (int32_t)(r * r)};
            args[r] = s32_vector(v, 3);
            rows[r][0] = args[r];
            per[r] = rows[r];
        }
        cxla_literal *results[4] = {0};
        CHECK_OK(cxla_executable_execute(e, &o, per, 1, results));
        for (int64_t r = 0; r < n && results[r]; r++) {
            const cxla_literal *ar = cxla_literal_tuple_element_const(results[r], 0);
            const cxla_literal *ag = cxla_literal_tuple_element_const(results[r], 1);
            const cxla_literal *id = cxla_literal_tuple_element_const(results[r], 2);
            for (int64_t i = 0; i < 3; i++) {
                int64_t sum = 0;
                for (int64_t k = 0; k < n; k++)
                    sum += i == 0 ? 10 * k + 1 : i == 1 ? 10 * k + 2 : k * k;
                CHECK_EQ_I64(s32_data(ar)[i], sum);
            }
            for (int64_t k = 0; k < n; k++)
                for (int64_t i = 0; i < 3; i++)
                    CHECK_EQ_I64(s32_data(ag)[k * 3 + i], s32_data(args[k])[i]);
            CHECK_EQ_I64(*(const uint32_t *)cxla_literal_data_const(id), r);
        }
        for (int64_t r = 0; r < n; r++) {
            cxla_literal_free(args[r]);
            cxla_literal_free(results[r]);
        }
        cxla_executable_destroy(e);
    }
    cxla_client_destroy(c);
}

/* The module's replica_count and num_partitions are the defaults; partition-id and the
 * device numbering d = replica * partitions + partition. */
static void test_execute_module_counts(void) {
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(NULL, &c));
    cxla_executable *e = compile(c, "HloModule m, replica_count=2, num_partitions=3\n"
                                    "ENTRY main {\n  r = u32[] replica-id()\n"
                                    "  p = u32[] partition-id()\n"
                                    "  ROOT t = (u32[], u32[]) tuple(r, p)\n}\n");
    if (e) {
        int64_t count = 0;
        CHECK_OK(cxla_executable_device_count(e, NULL, &count));
        CHECK_EQ_I64(count, 6);
        cxla_literal *results[6] = {0};
        CHECK_OK(cxla_executable_execute(e, NULL, NULL, 0, results));
        for (int64_t d = 0; d < 6 && results[d]; d++) {
            const cxla_literal *r = cxla_literal_tuple_element_const(results[d], 0);
            const cxla_literal *p = cxla_literal_tuple_element_const(results[d], 1);
            CHECK_EQ_I64(*(const uint32_t *)cxla_literal_data_const(r), d / 3);
            CHECK_EQ_I64(*(const uint32_t *)cxla_literal_data_const(p), d % 3);
            cxla_literal_free(results[d]);
        }
        /* Other counts than the module states are refused, naming both. */
        cxla_run_options o;
        cxla_run_options_init(&o);
        o.replica_count = 3;
        const char *msg = CHECK_ERROR(cxla_executable_device_count(e, &o, &count));
        CHECK_MSG(strstr(msg, "2 replicas") && strstr(msg, "3"), "message: %s", msg);
        cxla_executable_destroy(e);
    }
    cxla_client_destroy(c);
}

/* A replica that fails makes the run fail naming it; the others do not wait. */
static void test_execute_failure_names_device(void) {
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(NULL, &c));
    /* Only replica 2 calls a custom-call target that exists nowhere, before the
     * all-reduce that the others wait in. */
    cxla_executable *e = compile(
        c, "HloModule m\n" ADD_S32 "ENTRY main {\n  p = s32[2] parameter(0)\n"
           "  id = u32[] replica-id()\n  two = u32[] constant(2)\n"
           "  bad = pred[] compare(id, two), direction=EQ\n"
           "  x = s32[2] conditional(bad, p, p), true_computation=fails, "
           "false_computation=fine\n"
           "  ROOT ar = s32[2] all-reduce(x), replica_groups={}, to_apply=add\n}\n"
           "fails {\n  a = s32[2] parameter(0)\n"
           "  ROOT c = s32[2] custom-call(a), custom_call_target=\"no_such_target_anywhere\"\n}\n"
           "fine {\n  ROOT a = s32[2] parameter(0)\n}\n");
    if (e) {
        cxla_run_options o;
        cxla_run_options_init(&o);
        o.replica_count = 4;
        o.collective_timeout_seconds = 30;
        int32_t v[2] = {1, 2};
        cxla_literal *a = s32_vector(v, 2);
        const cxla_literal *row[1] = {a};
        const cxla_literal *const *rows[4] = {row, row, row, row};
        cxla_literal *results[4] = {0};
        const char *msg = CHECK_ERROR(cxla_executable_execute(e, &o, rows, 1, results));
        CHECK_MSG(strstr(msg, "replica 2 failed") && strstr(msg, "no_such_target_anywhere"),
                  "message: %s", msg);
        for (int r = 0; r < 4; r++) CHECK(results[r] == NULL);
        cxla_literal_free(a);
        cxla_executable_destroy(e);
    }
    cxla_client_destroy(c);
}

/* A replica that never reaches the collective: the others fail at the time limit,
 * saying who did not come, instead of hanging. */
static void test_execute_timeout(void) {
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(NULL, &c));
    /* Replica 1 skips the all-reduce (its branch has none) and then waits in the
     * all-gather, which the others never reach; so every device waits in vain. */
    cxla_executable *e =
        compile(c, "HloModule m\n" ADD_S32 "ENTRY main {\n  p = s32[2] parameter(0)\n"
                   "  id = u32[] replica-id()\n  one = u32[] constant(1)\n"
                   "  skip = pred[] compare(id, one), direction=EQ\n"
                   "  ROOT x = s32[2] conditional(skip, p, p), true_computation=gathers, "
                   "false_computation=reduces\n}\n"
                   "reduces {\n  a = s32[2] parameter(0)\n"
                   "  ROOT r = s32[2] all-reduce(a), replica_groups={}, to_apply=add\n}\n"
                   "gathers {\n  a = s32[2] parameter(0)\n"
                   "  g = s32[4] all-gather(a), replica_groups={}, dimensions={0}\n"
                   "  ROOT s = s32[2] slice(g), slice={[0:2]}\n}\n");
    if (e) {
        cxla_run_options o;
        cxla_run_options_init(&o);
        o.replica_count = 2;
        o.collective_timeout_seconds = 0.5;
        int32_t v[2] = {1, 2};
        cxla_literal *a = s32_vector(v, 2);
        const cxla_literal *row[1] = {a};
        const cxla_literal *const *rows[2] = {row, row};
        cxla_literal *results[2] = {0};
        const char *msg = CHECK_ERROR(cxla_executable_execute(e, &o, rows, 1, results));
        CHECK_MSG(strstr(msg, "failed") && strstr(msg, "timed out") && strstr(msg, "missing"),
                  "message: %s", msg);
        cxla_literal_free(a);
        cxla_executable_destroy(e);
    }
    cxla_client_destroy(c);
}

/* Bad calls: counts, missing and wrong arguments (naming the device). */
static void test_execute_errors(void) {
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(NULL, &c));
    cxla_executable *e = compile(c, "HloModule m\nENTRY main {\n  p = s32[2] parameter(0)\n"
                                    "  ROOT n = s32[2] negate(p)\n}\n");
    if (e) {
        cxla_run_options o;
        cxla_run_options_init(&o);
        int64_t count = 0;
        o.replica_count = -1;
        CHECK_ERROR(cxla_executable_device_count(e, &o, &count));
        o.replica_count = 5000;
        CHECK_ERROR(cxla_executable_device_count(e, &o, &count));
        o.replica_count = 2;
        o.collective_timeout_seconds = -1;
        CHECK_ERROR(cxla_executable_device_count(e, &o, &count));
        o.collective_timeout_seconds = 0;
        CHECK_OK(cxla_executable_device_count(e, NULL, &count));
        CHECK_EQ_I64(count, 1);
        int32_t v[2] = {3, -4};
        cxla_literal *a = s32_vector(v, 2);
        const cxla_literal *row[1] = {a};
        const cxla_literal *none[1] = {NULL};
        const cxla_literal *const *rows[2] = {row, none};
        cxla_literal *results[2] = {0};
        const char *msg = CHECK_ERROR(cxla_executable_execute(e, &o, rows, 1, results));
        CHECK_MSG(strstr(msg, "replica 1"), "message: %s", msg);
        msg = CHECK_ERROR(cxla_executable_execute(e, &o, rows, 2, results));
        CHECK_MSG(strstr(msg, "takes 1 argument"), "message: %s", msg);
        CHECK_ERROR(cxla_executable_execute(e, &o, NULL, 1, results));
        CHECK_ERROR(cxla_executable_execute(NULL, &o, rows, 1, results));
        /* Per-replica arguments of the wrong shape fail naming the device. */
        int32_t w[3] = {1, 2, 3};
        cxla_literal *b = s32_vector(w, 3);
        const cxla_literal *row_b[1] = {b};
        const cxla_literal *const *rows_b[2] = {row, row_b};
        msg = CHECK_ERROR(cxla_executable_execute(e, &o, rows_b, 1, results));
        CHECK_MSG(strstr(msg, "replica 1 failed"), "message: %s", msg);
        /* A good run: per-replica negation. */
        const cxla_literal *const *rows_ok[2] = {row, row};
        CHECK_OK(cxla_executable_execute(e, &o, rows_ok, 1, results));
        for (int r = 0; r < 2 && results[r]; r++) {
            CHECK_EQ_I64(s32_data(results[r])[0], -3);
            CHECK_EQ_I64(s32_data(results[r])[1], 4);
            cxla_literal_free(results[r]);
        }
        cxla_literal_free(a);
        cxla_literal_free(b);
        cxla_executable_destroy(e);
    }
    cxla_client_destroy(c);
}

/* The replicas share the client's outfeed queue. */
static void test_execute_host_queues(void) {
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(NULL, &c));
    cxla_executable *e = compile(
        c, "HloModule m\nENTRY main {\n  id = u32[] replica-id()\n"
           "  tok = token[] after-all()\n"
           "  o = token[] outfeed(id, tok), outfeed_shape=u32[]\n  ROOT r = u32[] copy(id)\n}\n");
    if (e) {
        cxla_run_options o;
        cxla_run_options_init(&o);
        o.replica_count = 3;
        cxla_literal *results[3] = {0};
        CHECK_OK(cxla_executable_execute(e, &o, NULL, 0, results));
        CHECK_EQ_I64(cxla_client_outfeed_count(c), 3);
        uint32_t seen = 0;
        for (int i = 0; i < 3; i++) {
            cxla_literal *v = NULL;
            CHECK_OK(cxla_client_outfeed_pop(c, &v));
            if (v) seen |= 1u << *(const uint32_t *)cxla_literal_data_const(v);
            cxla_literal_free(v);
            cxla_literal_free(results[i]);
        }
        CHECK_EQ_I64(seen, 7);
        cxla_executable_destroy(e);
    }
    cxla_client_destroy(c);
}

/* Open MPI keeps memory from MPI_Init until the process ends (its own and its plugins'),
 * which LeakSanitizer would report against this test; cxla's own allocations stay
 * checked. Open MPI is built without frame pointers, so allocation stacks are taken with
 * the slow unwinder, which sees through its frames to the library names matched here.
 * (Both hooks only matter in sanitizer builds; options given in ASAN_OPTIONS still win.) */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
    return "fast_unwind_on_malloc=0";
}
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
    return "leak:libmpi.so\n"
           "leak:libopen-pal.so\n"
           "leak:libopen-rte.so\n"
           "leak:libpmix.so\n"
           "leak:libhwloc.so\n"
           "leak:libevent\n"
           "leak:mca_\n";
}

/* Without mpirun a process is a world of one: a session runs one device (or, in a build
 * without MPI, every entry point says so). */
static void test_execute_mpi_single_process(void) {
    cxla_mpi_session *session = NULL;
    cxla_status s = cxla_mpi_session_create(NULL, NULL, &session);
    if (!cxla_mpi_available()) {
        const char *msg = CHECK_ERROR(s);
        CHECK_MSG(strstr(msg, "without MPI"), "message: %s", msg);
        msg = CHECK_ERROR(cxla_executable_execute_mpi(NULL, NULL, NULL, NULL, 0, NULL));
        CHECK_MSG(strstr(msg, "without MPI"), "message: %s", msg);
        return;
    }
    CHECK_OK(s);
    if (!session) return;
    CHECK_EQ_I64(cxla_mpi_session_size(session), 1);
    CHECK_EQ_I64(cxla_mpi_session_rank(session), 0);
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(NULL, &c));
    cxla_executable *e =
        compile(c, "HloModule m\n" ADD_S32 "ENTRY main {\n  p = s32[2] parameter(0)\n"
                   "  ROOT ar = s32[2] all-reduce(p), replica_groups={}, "
                   "to_apply=add\n}\n");
    if (e) {
        int32_t v[2] = {5, 6};
        cxla_literal *a = s32_vector(v, 2);
        const cxla_literal *row[1] = {a};
        cxla_literal *result = NULL;
        CHECK_OK(cxla_executable_execute_mpi(session, e, NULL, row, 1, &result));
        if (result) CHECK_EQ_I64(s32_data(result)[1], 6);
        cxla_literal_free(result);
        /* Two replicas need two processes. */
        cxla_run_options o;
        cxla_run_options_init(&o);
        o.replica_count = 2;
        const char *msg = CHECK_ERROR(cxla_executable_execute_mpi(session, e, &o, row, 1, &result));
        CHECK_MSG(strstr(msg, "MPI processes"), "message: %s", msg);
        /* A device that failed before it started: the verdict names it. */
        msg = CHECK_ERROR(cxla_executable_execute_mpi_failed(
            session, e, NULL, cxla_error(CXLA_STATUS_NOT_FOUND, "no inputs here")));
        CHECK_MSG(strstr(msg, "replica 0 failed") && strstr(msg, "no inputs here"), "message: %s",
                  msg);
        cxla_literal_free(a);
        cxla_executable_destroy(e);
    }
    cxla_client_destroy(c);
    cxla_mpi_session_destroy(session);
}

TEST_MAIN(TEST(test_execute_replicas), TEST(test_execute_module_counts),
          TEST(test_execute_failure_names_device), TEST(test_execute_timeout),
          TEST(test_execute_errors), TEST(test_execute_host_queues),
          TEST(test_execute_mpi_single_process))
