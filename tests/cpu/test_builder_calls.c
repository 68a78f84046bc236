/* XLA's builder decompositions (custom calls with targets "xla_builder.*" that carry their
 * decomposition as called_computations; tests/hlo/cases/builder_calls.hlo runs the data
 * cases on every backend): the text prints and parses back unchanged, a registered
 * function of the target's name wins over the decomposition on both backends, the
 * builder-calls pass turns the rest into calls (and only those), and the StableHLO front
 * end maps a custom_call's called_computations the same way. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cxla/custom_call.h"
#include "cxla/stablehlo.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "passes/passes.h"

/* XLA's long text form (HloModule::ToString), as cxla prints it. */
static const char *const kLong =
    "HloModule cosh, entry_computation_layout={(f64[4]{0})->f64[4]{0}}\n"
    "\n"
    "%xla_builder.math.Cosh (x: f64[4]) -> f64[4] {\n"
    "  %x = f64[4]{0} parameter(0)\n"
    "  %e = f64[4]{0} exponential(f64[4]{0} %x)\n"
    "  %n = f64[4]{0} negate(f64[4]{0} %x)\n"
    "  %en = f64[4]{0} exponential(f64[4]{0} %n)\n"
    "  %s = f64[4]{0} add(f64[4]{0} %e, f64[4]{0} %en)\n"
    "  %half = f64[] constant(0.5)\n"
    "  %h = f64[4]{0} broadcast(f64[] %half), dimensions={}\n"
    "  ROOT %r = f64[4]{0} multiply(f64[4]{0} %s, f64[4]{0} %h)\n"
    "}\n"
    "\n"
    "ENTRY %main (p: f64[4]) -> f64[4] {\n"
    "  %p = f64[4]{0} parameter(0)\n"
    "  ROOT %c = f64[4]{0} custom-call(f64[4]{0} %p), "
    "custom_call_target=\"xla_builder.math.Cosh\", "
    "called_computations={%xla_builder.math.Cosh}\n"
    "}\n";

static cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "builder_calls", &m);
    if (!s) s = cxla_verify_module(m);
    CHECK_MSG(!s, "module: %s", cxla_status_message(s));
    cxla_status_free(s);
    return m;
}

/* Printed and parsed back unchanged, in XLA's long and short forms. */
static void test_round_trip(void) {
    cxla_module *m = parse(kLong);
    if (!m) return;
    char *longer = cxla_hlo_print(m, CXLA_HLO_STYLE_LONG);
    CHECK_MSG(longer && strcmp(longer, kLong) == 0, "printed:\n%s", longer ? longer : "(null)");
    char *shorter = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT);
    CHECK(shorter &&
          strstr(shorter, "custom-call(p), custom_call_target=\"xla_builder.math.Cosh\", "
                          "called_computations={xla_builder.math.Cosh}\n"));
    cxla_module *again = shorter ? parse(shorter) : NULL;
    char *twice = again ? cxla_hlo_print(again, CXLA_HLO_STYLE_SHORT) : NULL;
    CHECK(twice && strcmp(twice, shorter) == 0);
    free(longer);
    free(shorter);
    free(twice);
    cxla_module_destroy(again);
    cxla_module_destroy(m);
}

/* A function registered under the target's name: out = 42 everywhere. */
static void fill42(void *out, const void **in) {
    (void)in;
    double *y = out;
    for (int i = 0; i < 4; i++) y[i] = 42;
}

/* Runs |m| on p = {0, 1, -1, 2} on the interpreter and the cpu backend; both results must
 * equal |expect|; the plan runs "c" as |what| (NULL: not at all, it was inlined) and no
 * instruction on the interpreter's handler. */
static void run_both(const cxla_module *m, const char *expect, const char *what) {
    cxla_literal *p = NULL, *want = NULL, *gi = NULL, *gc = NULL;
    const char *ps = "{0, 1, -1, 2}";
    CHECK_OK(cxla_literal_parse(ps, strlen(ps), &m->entry->params[0]->shape, &p));
    CHECK_OK(cxla_literal_parse(expect, strlen(expect), &m->entry->root->shape, &want));
    void *compiled = NULL;
    exec_compile_options co = {0};
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    const cpu_plan *plan = compiled ? cpu_compiled_plan(compiled) : NULL;
    if (plan) {
        cpu_plan_stats st;
        cpu_plan_get_stats(plan, &st);
        CHECK_EQ_I64(st.handler_steps, 0);
        const char *w = cpu_compiled_call_what(compiled, "c");
        CHECK_MSG(what ? w && strcmp(w, what) == 0 : w == NULL, "c runs as %s",
                  w ? w : "(nothing)");
    }
    if (p) CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)&p, 1, &gi));
    if (p && compiled) {
        exec_run_options ro = {0};
        CHECK_OK(cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)&p, 1, &gc));
    }
    char *ti = gi ? cxla_literal_to_string(gi, 0) : NULL,
         *tc = gc ? cxla_literal_to_string(gc, 0) : NULL;
    CHECK_MSG(want && gi && cxla_literal_compare(gi, want, &(cxla_tolerance){.ulps = 2}) == NULL,
              "the interpreter gives %s", ti ? ti : "?");
    CHECK_MSG(gi && gc && cxla_literal_equal(gi, gc), "the cpu backend gives %s", tc ? tc : "?");
    free(ti);
    free(tc);
    cpu_backend.destroy(compiled);
    cxla_literal_free(p);
    cxla_literal_free(want);
    cxla_literal_free(gi);
    cxla_literal_free(gc);
}

/* A registered function of the target's name wins on both backends; without it the
 * decomposition runs (inlined on the cpu backend). */
static void test_registered_wins(void) {
    cxla_module *m = parse(kLong);
    if (!m) return;
    CHECK_OK(cxla_custom_call_register("xla_builder.math.Cosh", (cxla_custom_call_fn)fill42,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    run_both(m, "{42, 42, 42, 42}", "custom call");
    CHECK_OK(
        cxla_custom_call_register("xla_builder.math.Cosh", NULL, CXLA_CUSTOM_CALL_API_ORIGINAL));
    run_both(m, "{1, 1.5430806348152437, 1.5430806348152437, 3.7621956910836314}", NULL);
    cxla_module_destroy(m);
}

/* The cpu backend decides when the module compiles: an executable compiled while a
 * function was registered and run after it is gone fails clearly; one compiled without
 * keeps its decomposition when a function is registered later. */
static void test_registered_at_compile_time(void) {
    cxla_module *m = parse(kLong);
    if (!m) return;
    cxla_literal *p = NULL, *got = NULL;
    const char *ps = "{0, 1, -1, 2}";
    CHECK_OK(cxla_literal_parse(ps, strlen(ps), &m->entry->params[0]->shape, &p));
    CHECK_OK(cxla_custom_call_register("xla_builder.math.Cosh", (cxla_custom_call_fn)fill42,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    void *with = NULL, *without = NULL;
    exec_compile_options co = {0};
    exec_run_options ro = {0};
    CHECK_OK(cpu_backend.compile(m, &co, &with));
    CHECK_OK(
        cxla_custom_call_register("xla_builder.math.Cosh", NULL, CXLA_CUSTOM_CALL_API_ORIGINAL));
    CHECK_OK(cpu_backend.compile(m, &co, &without));
    CHECK_OK(cxla_custom_call_register("xla_builder.math.Cosh", (cxla_custom_call_fn)fill42,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    if (p && without) {
        CHECK_OK(cpu_backend.execute(without, &ro, (const cxla_literal *const *)&p, 1, &got));
        double first = 0;
        CHECK(got && !cxla_literal_get_f64(got, (int64_t[]){1}, &first) && first > 1.54 &&
              first < 1.55); /* cosh(1), not 42 */
        cxla_literal_free(got);
        got = NULL;
    }
    CHECK_OK(
        cxla_custom_call_register("xla_builder.math.Cosh", NULL, CXLA_CUSTOM_CALL_API_ORIGINAL));
    if (p && with)
        CHECK_ERROR_HAS(cpu_backend.execute(with, &ro, (const cxla_literal *const *)&p, 1, &got),
                        "custom-call target 'xla_builder.math.Cosh' was registered when the "
                        "module compiled and is not now");
    cxla_literal_free(got);
    cpu_backend.destroy(with);
    cpu_backend.destroy(without);
    cxla_literal_free(p);
    cxla_module_destroy(m);
}

/* The pass rewrites exactly the custom calls that carry a decomposition and that no
 * registered function takes, in place (the name stays), and leaves other targets. */
static void test_pass(void) {
    cxla_module *m =
        parse("HloModule m\n"
              "f {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] negate(x)\n}\n"
              "ENTRY main {\n"
              "  x = f32[2] parameter(0)\n"
              "  a = f32[2] custom-call(x), custom_call_target=\"xla_builder.math.Neg\", "
              "called_computations={f}, metadata={op_name=\"neg\"}\n"
              "  b = f32[2] custom-call(a), custom_call_target=\"other.Neg\", "
              "called_computations={f}\n"
              "  ROOT c = f32[2] custom-call(b), custom_call_target=\"xla_builder.math.Abs\"\n"
              "}\n");
    if (!m) return;
    const cxla_pass *p = &cxla_pass_builder_calls;
    CHECK_OK(cxla_pipeline_run(m, "test", &p, 1, NULL));
    const cxla_instr *a = cxla_computation_find_instr(m->entry, "a");
    const cxla_instr *b = cxla_computation_find_instr(m->entry, "b");
    const cxla_instr *c = cxla_computation_find_instr(m->entry, "c");
    CHECK(a && a->opcode == CXLA_OP_CALL && cxla_instr_called(a, CXLA_ATTR_TO_APPLY) &&
          !cxla_instr_attr(a, CXLA_ATTR_CUSTOM_CALL_TARGET) &&
          cxla_instr_attr(a, CXLA_ATTR_METADATA));
    CHECK(b && b->opcode == CXLA_OP_CUSTOM_CALL); /* not a builder target */
    CHECK(c && c->opcode == CXLA_OP_CUSTOM_CALL); /* no decomposition */
    char *t = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT);
    CHECK_MSG(t && strstr(t, "a = f32[2]{0} call(x), to_apply=f, metadata={op_name=\"neg\"}\n"),
              "%s", t ? t : "");
    free(t);
    cxla_module_destroy(m);
}

/* stablehlo.custom_call with called_computations = [@f]: HLO's called_computations={f},
 * so that the decomposition runs as it does from HLO text. */
static void test_stablehlo(void) {
    const char *text = "func.func private @acosh(%x: tensor<4xf64>) -> tensor<4xf64> {\n"
                       "  %one = stablehlo.constant dense<1.0> : tensor<4xf64>\n"
                       "  %xx = stablehlo.multiply %x, %x : tensor<4xf64>\n"
                       "  %d = stablehlo.subtract %xx, %one : tensor<4xf64>\n"
                       "  %s = stablehlo.sqrt %d : tensor<4xf64>\n"
                       "  %a = stablehlo.add %x, %s : tensor<4xf64>\n"
                       "  %l = stablehlo.log %a : tensor<4xf64>\n"
                       "  return %l : tensor<4xf64>\n"
                       "}\n"
                       "func.func @main(%p: tensor<4xf64>) -> tensor<4xf64> {\n"
                       "  %0 = stablehlo.custom_call @xla_builder.math.Acosh(%p) "
                       "{called_computations = [@acosh]} : (tensor<4xf64>) -> tensor<4xf64>\n"
                       "  return %0 : tensor<4xf64>\n"
                       "}\n";
    cxla_module *m = NULL;
    CHECK_OK(cxla_stablehlo_parse(text, strlen(text), "acosh.mlir", &m, NULL));
    if (!m) return;
    CHECK_OK(cxla_verify_module(m));
    const cxla_instr *root = m->entry->root;
    cxla_computation *called[2];
    CHECK(root->opcode == CXLA_OP_CUSTOM_CALL &&
          cxla_instr_called_computations(root, called, 2) == 1 && called[0]->param_count == 1);
    /* p = {0, 1, -1, 2} + 1: acosh of 1, 2, 0, 3 (acosh(0) is NaN). */
    cxla_literal *p = NULL, *gi = NULL, *gc = NULL, *want = NULL;
    const char *ps = "{1, 2, 0, 3}", *ws = "{0, 1.3169578969248166, nan, 1.762747174039086}";
    CHECK_OK(cxla_literal_parse(ps, strlen(ps), &m->entry->params[0]->shape, &p));
    CHECK_OK(cxla_literal_parse(ws, strlen(ws), &root->shape, &want));
    void *compiled = NULL;
    exec_compile_options co = {0};
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    if (p) CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)&p, 1, &gi));
    if (p && compiled) {
        exec_run_options ro = {0};
        CHECK_OK(cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)&p, 1, &gc));
    }
    CHECK(gi && want && cxla_literal_compare(gi, want, &(cxla_tolerance){.ulps = 4}) == NULL);
    CHECK(gi && gc && cxla_literal_equal(gi, gc));
    cpu_backend.destroy(compiled);
    cxla_literal_free(p);
    cxla_literal_free(want);
    cxla_literal_free(gi);
    cxla_literal_free(gc);
    cxla_module_destroy(m);
    /* A called_computations entry that is not a function is an error naming the op. */
    const char *bad = "func.func @main(%p: tensor<4xf64>) -> tensor<4xf64> {\n"
                      "  %0 = stablehlo.custom_call @xla_builder.math.Acosh(%p) "
                      "{called_computations = [\"acosh\"]} : (tensor<4xf64>) -> tensor<4xf64>\n"
                      "  return %0 : tensor<4xf64>\n"
                      "}\n";
    m = NULL;
    CHECK_ERROR_HAS(cxla_stablehlo_parse(bad, strlen(bad), "bad.mlir", &m, NULL),
                    "called_computations must name functions");
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_round_trip), TEST(test_registered_wins), TEST(test_registered_at_compile_time),
          TEST(test_pass), TEST(test_stablehlo))
