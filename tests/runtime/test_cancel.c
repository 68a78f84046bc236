/* Every run ends (issue 17): a run cancelled through cxla_cancel stops between two
 * instructions, also in a while loop that never ends, naming the instruction; a replica
 * stuck outside a collective while the others wait in it ends when their time limit
 * passes, with the message that names who did not arrive; and threaded collectives
 * scale to a thousand replicas. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "cxla/cxla.h"
#include "harness.h"

/* A loop that never ends: the counter goes up while it is >= 0 (s64: centuries). */
#define FOREVER_COMPUTATIONS                                                                       \
    "cond {\n  c = s64[] parameter(0)\n  z = s64[] constant(0)\n"                                  \
    "  ROOT ge = pred[] compare(c, z), direction=GE\n}\n"                                          \
    "body {\n  b = s64[] parameter(0)\n  one = s64[] constant(1)\n"                                \
    "  ROOT n = s64[] add(b, one)\n}\n"

static const char *const forever_text =
    "HloModule forever\n" FOREVER_COMPUTATIONS "ENTRY main {\n  s = s64[] constant(0)\n"
    "  ROOT w = s64[] while(s), condition=cond, body=body\n}\n";

static cxla_executable *compile(cxla_client *client, const char *text) {
    cxla_executable *e = NULL;
    cxla_status s = cxla_client_compile_hlo_text(client, text, (size_t)-1, "test", &e);
    if (s) {
        test_fail(__FILE__, __LINE__, "does not compile: %s", cxla_status_message(s));
        cxla_status_free(s);
    }
    return e;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct canceller {
    cxla_cancel *cancel;
    double after; /* seconds */
} canceller;

static void *cancel_later(void *arg) {
    canceller *c = arg;
    struct timespec t = {0, (long)(c->after * 1e9)};
    nanosleep(&t, NULL);
    cxla_cancel_request(c->cancel, CXLA_STATUS_OK, "asked by the test");
    return NULL;
}

/* A run of a loop without end stops when another thread requests its cancellation. On the
 * interpreter, named: it checks between every two instructions, so the message names one
 * in the loop's computations (the cpu backend, the default, checks between chunks of
 * work and names the while: test_cancel_nested_run and tests/tools/test_cli_ends.sh). */
static void test_cancel_endless_loop(void) {
    cxla_client_options co;
    cxla_client_options_init(&co);
    co.backend = "interpreter";
    cxla_client *client = NULL;
    CHECK_OK(cxla_client_create(&co, &client));
    cxla_executable *e = client ? compile(client, forever_text) : NULL;
    cxla_cancel *cancel = NULL;
    CHECK_OK(cxla_cancel_create(&cancel));
    if (!e || !cancel) goto done;
    CHECK(!cxla_cancel_requested(cancel));
    canceller c = {cancel, 0.1};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, cancel_later, &c) == 0);
    cxla_run_options o;
    cxla_run_options_init(&o);
    o.cancel = cancel;
    cxla_literal *out = NULL;
    double t0 = now();
    cxla_status s = cxla_executable_run_with_options(e, &o, NULL, 0, &out);
    double took = now() - t0;
    pthread_join(t, NULL);
    const char *msg = cxla_status_message(s);
    CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_CANCELLED);
    CHECK_MSG(strstr(msg, "the run was cancelled: asked by the test") &&
                  (strstr(msg, "computation body") || strstr(msg, "computation cond")),
              "%s", msg);
    CHECK_MSG(took < 5, "took %g s", took);
    CHECK(out == NULL);
    CHECK(cxla_cancel_requested(cancel));
    cxla_status_free(s);
    /* A request stays: the next run with it stops at its first instruction. */
    s = cxla_executable_run_with_options(e, &o, NULL, 0, &out);
    CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_CANCELLED);
    CHECK_MSG(strstr(cxla_status_message(s), "at s (constant"), "%s", cxla_status_message(s));
    cxla_status_free(s);
    /* The code of the request is kept; only the first request counts. */
    cxla_cancel_destroy(cancel);
    cancel = NULL;
    CHECK_OK(cxla_cancel_create(&cancel));
    cxla_cancel_request(cancel, CXLA_STATUS_DEADLINE_EXCEEDED, "too slow");
    cxla_cancel_request(cancel, CXLA_STATUS_OK, "second");
    o.cancel = cancel;
    s = cxla_executable_run_with_options(e, &o, NULL, 0, &out);
    CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_DEADLINE_EXCEEDED);
    CHECK_MSG(strstr(cxla_status_message(s), "cancelled: too slow"), "%s", cxla_status_message(s));
    cxla_status_free(s);
    cxla_cancel_request(NULL, CXLA_STATUS_OK, "ignored");
    CHECK(!cxla_cancel_requested(NULL));
done:
    cxla_cancel_destroy(cancel);
    cxla_executable_destroy(e);
    cxla_client_destroy(client);
}

/* Replica 1 loops without end before the all-reduce that the others wait in: after the
 * collective time limit the run ends, with the verdict that names the missing replica,
 * and replica 1 is stopped by the run's cancellation. The same when the stuck replica is
 * the one (0) through which the all-reduce goes. */
static void test_stuck_replica_ends(void) {
    cxla_client *client = NULL;
    CHECK_OK(cxla_client_create(NULL, &client));
    for (int stuck = 0; stuck <= 1 && client; stuck++) {
        char text[2048];
        snprintf(text, sizeof(text),
                 "HloModule stuck\n" FOREVER_COMPUTATIONS
                 "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                 "  ROOT s = f32[] add(x, y)\n}\n"
                 "spin {\n  a = f32[4] parameter(0)\n  s = s64[] constant(0)\n"
                 "  w = s64[] while(s), condition=cond, body=body\n  wf = f32[] convert(w)\n"
                 "  b = f32[4] broadcast(wf), dimensions={}\n  ROOT c = f32[4] add(a, b)\n}\n"
                 "pass {\n  a = f32[4] parameter(0)\n  ROOT c = f32[4] copy(a)\n}\n"
                 "ENTRY main {\n  p = f32[4] parameter(0)\n  r = u32[] replica-id()\n"
                 "  k = u32[] constant(%d)\n  is = pred[] compare(r, k), direction=EQ\n"
                 "  c = f32[4] conditional(is, p, p), true_computation=spin, "
                 "false_computation=pass\n"
                 "  ROOT ar = f32[4] all-reduce(c), replica_groups={}, to_apply=add\n}\n",
                 stuck);
        cxla_executable *e = compile(client, text);
        if (!e) break;
        cxla_literal *args[3] = {NULL, NULL, NULL};
        const cxla_literal *const *per[3];
        const cxla_literal *rows[3];
        for (int d = 0; d < 3; d++) {
            CHECK_OK(cxla_literal_parse("f32[4] {1, 2, 3, 4}", (size_t)-1, NULL, &args[d]));
            rows[d] = args[d];
            per[d] = &rows[d];
        }
        cxla_run_options o;
        cxla_run_options_init(&o);
        o.replica_count = 3;
        o.collective_timeout_seconds = 0.3;
        cxla_literal *results[3] = {NULL, NULL, NULL};
        double t0 = now();
        cxla_status s = cxla_executable_execute(e, &o, per, 1, results);
        double took = now() - t0;
        const char *msg = cxla_status_message(s);
        CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_DEADLINE_EXCEEDED);
        char want[64];
        snprintf(want, sizeof(want), "missing: replica %d", stuck);
        CHECK_MSG(strstr(msg, "timed out") && strstr(msg, want), "stuck %d: %s", stuck, msg);
        CHECK_MSG(took < 10, "took %g s", took);
        CHECK(!results[0] && !results[1] && !results[2]);
        cxla_status_free(s);
        for (int d = 0; d < 3; d++) cxla_literal_free(args[d]);
        cxla_executable_destroy(e);
    }
    cxla_client_destroy(client);
}

/* The caller's cancellation stops every device of a replicated run, those waiting in a
 * collective too. */
static void test_cancel_replicated(void) {
    cxla_client *client = NULL;
    CHECK_OK(cxla_client_create(NULL, &client));
    cxla_executable *e =
        client ? compile(client, "HloModule m\n" FOREVER_COMPUTATIONS
                                 "add {\n  x = s64[] parameter(0)\n  y = s64[] parameter(1)\n"
                                 "  ROOT s = s64[] add(x, y)\n}\n"
                                 "ENTRY main {\n  s = s64[] constant(0)\n"
                                 "  w = s64[] while(s), condition=cond, body=body\n"
                                 "  ROOT ar = s64[] all-reduce(w), replica_groups={}, "
                                 "to_apply=add\n}\n")
               : NULL;
    cxla_cancel *cancel = NULL;
    CHECK_OK(cxla_cancel_create(&cancel));
    if (e && cancel) {
        canceller c = {cancel, 0.1};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, cancel_later, &c) == 0);
        cxla_run_options o;
        cxla_run_options_init(&o);
        o.replica_count = 4;
        o.cancel = cancel;
        cxla_literal *results[4] = {NULL};
        cxla_status s = cxla_executable_execute(e, &o, NULL, 0, results);
        pthread_join(t, NULL);
        CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_CANCELLED);
        CHECK_MSG(strstr(cxla_status_message(s), "the run was cancelled: asked by the test"), "%s",
                  cxla_status_message(s));
        cxla_status_free(s);
    }
    cxla_cancel_destroy(cancel);
    cxla_executable_destroy(e);
    cxla_client_destroy(client);
}

/* 1,024 replicas of an all-reduce of f32[4]: right, and fast enough for a test (the
 * collectives are linear in the replica count; bench/bench_collectives.sh times more). */
static void test_many_replicas(void) {
    enum { N = 1024 };
    cxla_client *client = NULL;
    CHECK_OK(cxla_client_create(NULL, &client));
    cxla_executable *e =
        client ? compile(client, "HloModule m\n"
                                 "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                                 "  ROOT s = f32[] add(x, y)\n}\n"
                                 "ENTRY main {\n  p = f32[4] parameter(0)\n"
                                 "  ROOT ar = f32[4] all-reduce(p), replica_groups={}, "
                                 "to_apply=add\n}\n")
               : NULL;
    cxla_literal **args = calloc(N, sizeof(*args));
    const cxla_literal **rows = calloc(N, sizeof(*rows));
    const cxla_literal *const **per = calloc(N, sizeof(*per));
    cxla_literal **results = calloc(N, sizeof(*results));
    for (int d = 0; d < N && e; d++) {
        char text[64];
        snprintf(text, sizeof(text), "f32[4] {%d, 1, -%d, 0.5}", d, d);
        CHECK_OK(cxla_literal_parse(text, (size_t)-1, NULL, &args[d]));
        rows[d] = args[d];
        per[d] = &rows[d];
    }
    if (e) {
        cxla_run_options o;
        cxla_run_options_init(&o);
        o.replica_count = N;
        CHECK_OK(cxla_executable_execute(e, &o, per, 1, results));
        /* sum d = N (N - 1) / 2 = 523776, exact in f32 */
        for (int d = 0; d < N; d++) {
            const float *v = results[d] ? cxla_literal_data_const(results[d]) : NULL;
            CHECK_MSG(v && v[0] == 523776.0f && v[1] == 1024.0f && v[2] == -523776.0f &&
                          v[3] == 512.0f,
                      "replica %d", d);
            if (!v) break;
        }
    }
    for (int d = 0; d < N; d++) {
        cxla_literal_free(args[d]);
        cxla_literal_free(results[d]);
    }
    free(args);
    free(rows);
    free(per);
    free(results);
    cxla_executable_destroy(e);
    cxla_client_destroy(client);
}

/* A run started inside a run (StableHLO's interpreter.run_parallel, whose two devices
 * loop without end) stops when the outer run is cancelled from another thread: the
 * outer run's cancellation is the parent of the inner run's. On the interpreter and on
 * the cpu backend (whose driver runs the custom call). */
static void test_cancel_nested_run(void) {
    static const char *const text =
        "func.func @f(%x: tensor<i64>) -> tensor<i64> {\n"
        "  %r = stablehlo.while(%i = %x) : tensor<i64>\n"
        "  cond {\n"
        "    %z = stablehlo.constant dense<0> : tensor<i64>\n"
        "    %c = stablehlo.compare GE, %i, %z : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
        "    stablehlo.return %c : tensor<i1>\n"
        "  } do {\n"
        "    %one = stablehlo.constant dense<1> : tensor<i64>\n"
        "    %n = stablehlo.add %i, %one : tensor<i64>\n"
        "    stablehlo.return %n : tensor<i64>\n"
        "  }\n"
        "  return %r : tensor<i64>\n"
        "}\n"
        "func.func @main() -> tensor<i64> {\n"
        "  %a = stablehlo.constant dense<0> : tensor<i64>\n"
        "  %r:2 = \"interpreter.run_parallel\"(%a, %a) {programs = [[@f], [@f]]} :\n"
        "     (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)\n"
        "  return %r#1 : tensor<i64>\n"
        "}\n";
    static const char *const backends[2] = {"interpreter", "cpu"};
    for (int b = 0; b < 2; b++) {
        cxla_client_options co;
        cxla_client_options_init(&co);
        co.backend = backends[b];
        cxla_client *client = NULL;
        CHECK_OK(cxla_client_create(&co, &client));
        cxla_executable *e = NULL;
        if (client)
            CHECK_OK(cxla_client_compile_stablehlo_text(client, text, (size_t)-1, "nested", &e));
        cxla_cancel *cancel = NULL;
        CHECK_OK(cxla_cancel_create(&cancel));
        if (e && cancel) {
            canceller c = {cancel, 0.2};
            pthread_t t;
            CHECK(pthread_create(&t, NULL, cancel_later, &c) == 0);
            cxla_run_options o;
            cxla_run_options_init(&o);
            o.cancel = cancel;
            cxla_literal *out = NULL;
            double t0 = now();
            cxla_status s = cxla_executable_run_with_options(e, &o, NULL, 0, &out);
            double took = now() - t0;
            pthread_join(t, NULL);
            const char *msg = cxla_status_message(s);
            CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_CANCELLED);
            CHECK_MSG(strstr(msg, "custom-call") && strstr(msg, "cancelled: asked by the test"),
                      "%s: %s", backends[b], msg);
            /* The inner run's time limit is a minute: stopping before it is the point. */
            CHECK_MSG(took < 10, "%s: took %g s", backends[b], took);
            CHECK(out == NULL);
            cxla_status_free(s);
            cxla_literal_free(out);
        }
        cxla_cancel_destroy(cancel);
        cxla_executable_destroy(e);
        cxla_client_destroy(client);
    }
}

/* A reducer whose while loop never ends, over a constant operand: compiling must end
 * (constant folding and the cpu plan's trial run such computations on the interpreter, each
 * with a time limit), and the run stops when cancelled, on both backends. The loop's counter
 * is s64 and starts at 0, so the cpu backend's scalar writer cannot see it end and keeps the
 * reduce on the handler, which checks cancellation between instructions (a kernel cannot be
 * stopped while it runs). */
static void test_cancel_loop_in_reducer(void) {
    static const char *const text =
        "HloModule reducer_forever\n" FOREVER_COMPUTATIONS
        "red {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  z = s64[] constant(0)\n  w = s64[] while(z), condition=cond, body=body\n"
        "  c = f32[] convert(w)\n  s = f32[] add(a, b)\n  ROOT r = f32[] add(s, c)\n}\n"
        "ENTRY main {\n  x = f32[4] constant({1, 2, 3, 4})\n  i = f32[] constant(0)\n"
        "  ROOT y = f32[] reduce(x, i), dimensions={0}, to_apply=red\n}\n";
    static const char *const backends[2] = {"interpreter", "cpu"};
    for (int b = 0; b < 2; b++) {
        cxla_client_options co;
        cxla_client_options_init(&co);
        co.backend = backends[b];
        cxla_client *client = NULL;
        CHECK_OK(cxla_client_create(&co, &client));
        double t0 = now();
        cxla_executable *e = client ? compile(client, text) : NULL;
        CHECK_MSG(now() - t0 < 30, "%s: compiling took %g s", backends[b], now() - t0);
        cxla_cancel *cancel = NULL;
        CHECK_OK(cxla_cancel_create(&cancel));
        if (e && cancel) {
            canceller c = {cancel, 0.2};
            pthread_t t;
            CHECK(pthread_create(&t, NULL, cancel_later, &c) == 0);
            cxla_run_options o;
            cxla_run_options_init(&o);
            o.cancel = cancel;
            cxla_literal *out = NULL;
            t0 = now();
            cxla_status s = cxla_executable_run_with_options(e, &o, NULL, 0, &out);
            double took = now() - t0;
            pthread_join(t, NULL);
            const char *msg = cxla_status_message(s);
            CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_CANCELLED);
            CHECK_MSG(strstr(msg, "cancelled: asked by the test"), "%s: %s", backends[b], msg);
            CHECK_MSG(took < 10, "%s: took %g s", backends[b], took);
            CHECK(out == NULL);
            cxla_status_free(s);
            cxla_literal_free(out);
        }
        cxla_cancel_destroy(cancel);
        cxla_executable_destroy(e);
        cxla_client_destroy(client);
    }
}

TEST_MAIN(TEST(test_cancel_endless_loop), TEST(test_stuck_replica_ends),
          TEST(test_cancel_replicated), TEST(test_many_replicas), TEST(test_cancel_nested_run),
          TEST(test_cancel_loop_in_reducer))
