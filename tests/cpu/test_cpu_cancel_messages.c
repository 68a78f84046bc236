/* A run cancelled inside a while loop on the cpu backend says where it stopped (issue 13):
 * a fused loop (one compiled C function, cpu_loop.c) by its back-edge and the iteration it
 * had reached, a loop of an inner loop with the outer one too; a loop run step by step
 * (CXLA_LOOP_STEPS) by the instruction it stopped before, as the interpreter does, and the
 * iteration. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cxla/cxla.h"
#include "harness.h"

/* The counter goes up while it is >= 0 (s64: centuries). */
static const char *const forever_text =
    "HloModule forever\n"
    "cond {\n  c = s64[] parameter(0)\n  z = s64[] constant(0)\n"
    "  ROOT ge = pred[] compare(c, z), direction=GE\n}\n"
    "body {\n  b = s64[] parameter(0)\n  one = s64[] constant(1)\n"
    "  ROOT n = s64[] add(b, one)\n}\n"
    "ENTRY main {\n  s = s64[] constant(0)\n"
    "  ROOT w = s64[] while(s), condition=cond, body=body\n}\n";

/* An outer loop whose body runs the endless loop above. */
static const char *const nested_text =
    "HloModule nested\n"
    "cond {\n  c = s64[] parameter(0)\n  z = s64[] constant(0)\n"
    "  ROOT ge = pred[] compare(c, z), direction=GE\n}\n"
    "body {\n  b = s64[] parameter(0)\n  one = s64[] constant(1)\n"
    "  ROOT n = s64[] add(b, one)\n}\n"
    "ocond {\n  oc = s64[] parameter(0)\n  ten = s64[] constant(10)\n"
    "  ROOT olt = pred[] compare(oc, ten), direction=LT\n}\n"
    "obody {\n  ob = s64[] parameter(0)\n"
    "  ROOT inner = s64[] while(ob), condition=cond, body=body\n}\n"
    "ENTRY main {\n  s = s64[] constant(0)\n"
    "  ROOT outer = s64[] while(s), condition=ocond, body=obody\n}\n";

static void *cancel_later(void *arg) {
    struct timespec t = {0, 200 * 1000 * 1000};
    nanosleep(&t, NULL);
    cxla_cancel_request(arg, CXLA_STATUS_OK, "asked by the test");
    return NULL;
}

/* Compiles |text| on |backend| (before the clock starts), runs it until another thread
 * cancels it, and returns the run's message (malloc'd), or NULL after a failed check. On a
 * loaded machine the request may come before the run reached its loop ("at s (constant,
 * computation main ...": neither a back-edge nor "in the" body or condition of a loop):
 * that run is tried again, up to three times. */
static char *cancelled_once(const char *backend, const char *text);

static char *cancelled_message(const char *backend, const char *text) {
    char *msg = NULL;
    for (int tries = 0; tries < 3; tries++) {
        free(msg);
        msg = cancelled_once(backend, text);
        if (!msg || strstr(msg, "back-edge") || strstr(msg, "in the ")) break;
    }
    return msg;
}

static char *cancelled_once(const char *backend, const char *text) {
    cxla_client_options co;
    cxla_client_options_init(&co);
    co.backend = backend;
    cxla_client *client = NULL;
    cxla_executable *e = NULL;
    cxla_cancel *cancel = NULL;
    char *msg = NULL;
    CHECK_OK(cxla_client_create(&co, &client));
    if (client) CHECK_OK(cxla_client_compile_hlo_text(client, text, (size_t)-1, "test", &e));
    CHECK_OK(cxla_cancel_create(&cancel));
    if (e && cancel) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, cancel_later, cancel) == 0);
        cxla_run_options o;
        cxla_run_options_init(&o);
        o.cancel = cancel;
        cxla_literal *out = NULL;
        cxla_status s = cxla_executable_run_with_options(e, &o, NULL, 0, &out);
        pthread_join(t, NULL);
        CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_CANCELLED);
        CHECK(out == NULL);
        const char *m = cxla_status_message(s);
        CHECK_MSG(strstr(m, "the run was cancelled: asked by the test"), "%s", m);
        msg = strdup(m);
        cxla_status_free(s);
        cxla_literal_free(out);
    }
    cxla_cancel_destroy(cancel);
    cxla_executable_destroy(e);
    cxla_client_destroy(client);
    return msg;
}

/* A fused loop has no instruction to name: its back-edge and iteration. */
static void test_fused_loop(void) {
    unsetenv("CXLA_LOOP_STEPS");
    char *msg = cancelled_message("cpu", forever_text);
    if (!msg) return;
    CHECK_MSG(strstr(msg, "at the back-edge of w (while, computation main, line 14), after "
                          "iteration "),
              "%s", msg);
    /* The iteration is a count, and the loop had run many in 0.2 s. */
    const char *at = strstr(msg, "after iteration ");
    long long iteration = at ? atoll(at + strlen("after iteration ")) : 0;
    CHECK_MSG(iteration > 1000, "%s", msg);
    free(msg);
}

/* Inside an inner loop of a fused loop: the inner loop's back-edge and the outer loop. */
static void test_fused_nested_loop(void) {
    unsetenv("CXLA_LOOP_STEPS");
    char *msg = cancelled_message("cpu", nested_text);
    if (!msg) return;
    CHECK_MSG(strstr(msg, "at the back-edge of inner (while, computation obody, line 19), in the "
                          "loop outer (while, computation main, line 23) after ") &&
                  strstr(msg, "iterations of it and its inner loops"),
              "%s", msg);
    free(msg);
}

/* Step by step: the instruction it stopped before, in the loop's condition or body, as the
 * interpreter names it, and the iteration. */
static void test_loop_steps(void) {
    setenv("CXLA_LOOP_STEPS", "1", 1);
    char *msg = cancelled_message("cpu", forever_text);
    char *want = cancelled_message("interpreter", forever_text);
    unsetenv("CXLA_LOOP_STEPS");
    if (msg) {
        bool body =
            strstr(msg, "in the body of w (iteration ") && strstr(msg, "computation body, line ");
        bool cond = strstr(msg, "in the condition of w (iteration ") &&
                    strstr(msg, "computation cond, line ");
        bool edge = strstr(msg, "at the back-edge of w (while, computation main, line 14), after "
                                "iteration ");
        CHECK_MSG(body || cond || edge, "%s", msg);
    }
    if (want)
        CHECK_MSG(strstr(want, "computation body") || strstr(want, "computation cond"), "%s", want);
    free(msg);
    free(want);
}

TEST_MAIN(TEST(test_fused_loop), TEST(test_fused_nested_loop), TEST(test_loop_steps))
