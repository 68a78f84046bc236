/* An error inside an async-start in sugar form reads the same on the cpu backend, where the
 * async-desugar pass has made it a wrapped computation (its root a copy of the operation
 * named "s.N"), as on the interpreter, which runs the sugar itself: the start the user
 * wrote, "s (custom-call, line 5): ...", not "in s: s.6 (custom-call, line 5): ...". */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "cxla/cxla.h"
#include "harness.h"

static const char sugar[] =
    "HloModule m\n\n"
    "ENTRY main {\n"
    "  x = f32[2] parameter(0)\n"
    "  s = ((f32[2]), f32[2], s32[]) custom-call-start(x), custom_call_target=\"no_such_target\"\n"
    "  ROOT d = f32[2] custom-call-done(s)\n"
    "}\n";

/* The same start wrapping a call whose callee holds the failing custom call. */
static const char call_sugar[] =
    "HloModule m\n\n"
    "f {\n"
    "  p = f32[2] parameter(0)\n"
    "  ROOT c = f32[2] custom-call(p), custom_call_target=\"no_such_target\"\n"
    "}\n\n"
    "ENTRY main {\n"
    "  x = f32[2] parameter(0)\n"
    "  s = ((f32[2]), f32[2], s32[]) call-start(x), to_apply=f\n"
    "  ROOT d = f32[2] call-done(s)\n"
    "}\n";

/* The message of running |text| on |backend| (a copy; NULL when it ran). */
static char *run_error(const char *backend, const char *text) {
    cxla_client_options co;
    cxla_client_options_init(&co);
    co.backend = backend;
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(&co, &c));
    cxla_executable *e = NULL;
    if (c) CHECK_OK(cxla_client_compile_hlo_text(c, text, strlen(text), "sugar.hlo", &e));
    cxla_literal *arg = NULL, *out = NULL;
    CHECK_OK(cxla_literal_parse("f32[2] {1, 2}", (size_t)-1, NULL, &arg));
    cxla_status s =
        e && arg ? cxla_executable_run(e, (const cxla_literal *const *)&arg, 1, &out) : NULL;
    char *msg = s ? strdup(cxla_status_message(s)) : NULL;
    cxla_status_free(s);
    cxla_literal_free(arg);
    cxla_literal_free(out);
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
    return msg;
}

static void check_same(const char *text, const char *want_prefix) {
    char *interp = run_error("interpreter", text), *cpu = run_error("cpu", text);
    CHECK_MSG(interp && !strncmp(interp, want_prefix, strlen(want_prefix)),
              "interpreter: %s\n  expected it to start with: %s", interp ? interp : "(ran)",
              want_prefix);
    CHECK_EQ_STR(cpu, interp);
    free(interp);
    free(cpu);
}

static void test_custom_call_start(void) {
    check_same(sugar, "s (custom-call, line 5): custom-call target 'no_such_target'");
}

static void test_call_start(void) {
    check_same(call_sugar, "in s: c (custom-call, line 5): custom-call target 'no_such_target'");
}

TEST_MAIN(TEST(test_custom_call_start), TEST(test_call_start))
