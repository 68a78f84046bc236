/* Every opcode either has exactly one interpreter handler or is on the list of those
 * that later work adds (docs/semantics.md, "Not yet supported by the interpreter"). */
#include "harness.h"
#include "interp/interp.h"

/* Operations the interpreter does not run yet, and parameter (run by the driver). */
static const cxla_opcode not_yet[] = {
    CXLA_OP_PARAMETER, /* run by the driver */
    CXLA_OP_SHUFFLE,   /* XLA publishes no text form or semantics of its permutations */
};

static bool on_list(cxla_opcode op) {
    for (size_t i = 0; i < sizeof(not_yet) / sizeof(not_yet[0]); i++)
        if (not_yet[i] == op) return true;
    return false;
}

static void test_every_opcode_has_one_handler(void) {
    for (int i = 0; i < CXLA_OP_COUNT; i++) {
        cxla_opcode op = (cxla_opcode)i;
        int n = interp_handler_count(op);
        CHECK_MSG(n <= 1, "%s is handled by %d families", cxla_opcode_name(op), n);
        if (on_list(op))
            CHECK_MSG(n == 0, "%s has a handler now: take it off the not-yet list",
                      cxla_opcode_name(op));
        else
            CHECK_MSG(n == 1, "%s has no interpreter handler", cxla_opcode_name(op));
    }
}

/* An operation the interpreter cannot run (here: a custom call whose target exists
 * nowhere) fails with an error naming the target and the instruction. */
static void test_unsupported_is_a_clear_error(void) {
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  x = f32[2,2] parameter(0)\n"
                       "  ROOT c = f32[2,2] custom-call(x), custom_call_target=\"foo\"\n"
                       "}\n";
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "t.hlo", &m));
    if (m) CHECK_OK(cxla_verify_module(m));
    cxla_literal *x = NULL, *r = NULL;
    CHECK_OK(cxla_literal_parse("f32[2,2] { { 4, 2 }, { 2, 3 } }", (size_t)-1, NULL, &x));
    const cxla_literal *args[] = {x};
    if (m && x) {
        const char *msg = CHECK_ERROR(interp_run_module(m, NULL, args, 1, &r));
        CHECK(strstr(msg, "custom-call target 'foo'") != NULL);
        CHECK(strstr(msg, "c (custom-call") != NULL);
    }
    cxla_literal_free(x);
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_every_opcode_has_one_handler), TEST(test_unsupported_is_a_clear_error))
