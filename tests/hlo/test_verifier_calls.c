/* The verifier on instructions that pass values to called computations: with mixed
 * precision allowed (cxla_hlo_verify's default, as XLA's tests run), a call, while,
 * conditional, fusion or async-start must still give each parameter exactly its shape, and
 * a call, while, conditional, fusion, tuple or get-tuple-element must declare exactly the
 * shape it yields: XLA's ShapeVerifier compares these with ShapesSame (layout aside), not
 * CompatibleIgnoringFpPrecision. An f64 argument to an f32 parameter is an error here,
 * not a module the interpreter refuses later and the cpu backend runs anyway. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hlo/hlo.h"

static cxla_status verify_text(const char *text, bool mixed) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "t.hlo", &m);
    cxla_hlo_verify_options o = {.layout_sensitive = false, .allow_mixed_precision = mixed};
    if (!s) s = cxla_hlo_verify_with_options(m, &o);
    cxla_module_destroy(m);
    return s;
}

/* |text| fails to verify with and without mixed precision, naming |where| and |what|. */
static void expect_refused(const char *text, const char *where, const char *what) {
    for (int mixed = 1; mixed >= 0; mixed--) {
        cxla_status s = verify_text(text, mixed);
        const char *msg = s ? cxla_status_message(s) : "verified";
        CHECK_MSG(s && strstr(msg, where) && strstr(msg, what), "mixed=%d: %s\nmodule:\n%s", mixed,
                  msg, text);
        cxla_status_free(s);
    }
}

static const char call_f64[] = "HloModule m\n\n"
                               "f {\n"
                               "  p = f32[2] parameter(0)\n"
                               "  ROOT n = f32[2] negate(p)\n"
                               "}\n\n"
                               "ENTRY e {\n"
                               "  x = f64[2] parameter(0)\n"
                               "  ROOT c = f32[2] call(x), to_apply=f\n"
                               "}\n";

static void test_call_arguments(void) {
    expect_refused(call_f64, "instruction 'c'", "argument f64[2] does not match parameter 0");
    /* The same module with the argument's type right verifies. */
    char ok[sizeof call_f64];
    memcpy(ok, call_f64, sizeof ok);
    char *x = strstr(ok, "x = f64");
    CHECK(x != NULL);
    if (x) memcpy(x + 4, "f32", 3);
    CHECK_OK(verify_text(ok, true));
    CHECK_OK(verify_text(ok, false));
    /* An argument of another floating type in a tuple too. */
    expect_refused("HloModule m\n\nf {\n  p = (f32[2], s32[]) parameter(0)\n"
                   "  ROOT g = f32[2] get-tuple-element(p), index=0\n}\n\n"
                   "ENTRY e {\n  x = bf16[2] parameter(0)\n  i = s32[] parameter(1)\n"
                   "  t = (bf16[2], s32[]) tuple(x, i)\n"
                   "  ROOT c = f32[2] call(t), to_apply=f\n}\n",
                   "instruction 'c'", "does not match parameter 0");
}

static void test_call_result(void) {
    /* The callee gives f32; the call may not declare bf16. */
    expect_refused("HloModule m\n\nf {\n  p = f32[2] parameter(0)\n"
                   "  ROOT n = f32[2] negate(p)\n}\n\n"
                   "ENTRY e {\n  x = f32[2] parameter(0)\n"
                   "  ROOT c = bf16[2] call(x), to_apply=f\n}\n",
                   "instruction 'c'", "declared shape bf16[2] differs from the inferred f32[2]");
}

static void test_while(void) {
    const char *text = "HloModule m\n\n"
                       "cond {\n  p = f32[] parameter(0)\n  z = f32[] constant(0)\n"
                       "  ROOT lt = pred[] compare(p, z), direction=LT\n}\n\n"
                       "body {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n\n"
                       "ENTRY e {\n  x = f64[] parameter(0)\n"
                       "  ROOT w = f32[] while(x), condition=cond, body=body\n}\n";
    expect_refused(text, "instruction 'w'", "does not match parameter 0");
    /* The loop's declared result must be the body's too. */
    expect_refused("HloModule m\n\n"
                   "cond {\n  p = f32[] parameter(0)\n  z = f32[] constant(0)\n"
                   "  ROOT lt = pred[] compare(p, z), direction=LT\n}\n\n"
                   "body {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n\n"
                   "ENTRY e {\n  x = f32[] parameter(0)\n"
                   "  ROOT w = f16[] while(x), condition=cond, body=body\n}\n",
                   "instruction 'w'", "declared shape f16[] differs from the inferred f32[]");
}

static void test_conditional(void) {
    expect_refused("HloModule m\n\n"
                   "t {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n\n"
                   "f {\n  p = f64[2] parameter(0)\n  ROOT c = f32[2] convert(p)\n}\n\n"
                   "ENTRY e {\n  b = pred[] parameter(0)\n  x = f64[2] parameter(1)\n"
                   "  ROOT r = f32[2] conditional(b, x, x), true_computation=t, "
                   "false_computation=f\n}\n",
                   "instruction 'r'", "branch operand f64[2] does not match parameter 0 of 't'");
    expect_refused("HloModule m\n\n"
                   "b0 {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n\n"
                   "b1 {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] abs(p)\n}\n\n"
                   "ENTRY e {\n  i = s32[] parameter(0)\n  x = f32[2] parameter(1)\n"
                   "  ROOT r = bf16[2] conditional(i, x, x), branch_computations={b0, b1}\n}\n",
                   "instruction 'r'", "declared shape bf16[2] differs from the inferred f32[2]");
}

static void test_fusion_and_async(void) {
    expect_refused("HloModule m\n\n"
                   "fc {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n\n"
                   "ENTRY e {\n  x = f16[2] parameter(0)\n"
                   "  ROOT f = f32[2] fusion(x), kind=kLoop, calls=fc\n}\n",
                   "instruction 'f'", "does not match parameter 0");
    expect_refused("HloModule m\n\n"
                   "w {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n\n"
                   "ENTRY e {\n  x = f64[2] parameter(0)\n"
                   "  s = ((f64[2]), f32[2], s32[]) async-start(x), calls=w\n"
                   "  ROOT d = f32[2] async-done(s)\n}\n",
                   "instruction 's'", "does not match parameter 0 of 'w'");
}

static void test_tuples(void) {
    /* Tuple and get-tuple-element pass values through: no change of precision. */
    expect_refused("HloModule m\n\nENTRY e {\n  x = f32[2] parameter(0)\n"
                   "  ROOT t = (bf16[2]) tuple(x)\n}\n",
                   "instruction 't'",
                   "declared shape (bf16[2]) differs from the inferred (f32[2])");
    /* Elementwise operations keep XLA's mixed-precision latitude. */
    CHECK_OK(verify_text("HloModule m\n\nENTRY e {\n  x = f32[2] parameter(0)\n"
                         "  y = bf16[2] parameter(1)\n  ROOT a = f32[2] add(x, y)\n}\n",
                         true));
    CHECK_ERROR(verify_text("HloModule m\n\nENTRY e {\n  x = f32[2] parameter(0)\n"
                            "  y = bf16[2] parameter(1)\n  ROOT a = f32[2] add(x, y)\n}\n",
                            false));
}

TEST_MAIN(TEST(test_call_arguments), TEST(test_call_result), TEST(test_while),
          TEST(test_conditional), TEST(test_fusion_and_async), TEST(test_tuples))
