/* Custom calls whose operands, operand_layout_constraints or results are not row-major run
 * as service steps on the cpu backend (issue 13, section 3), not on the interpreter's
 * handler: the step hands the target copies of its leaves relaid to the declared layouts
 * and relays what it writes back, so the target sees XLA's calling convention. The targets
 * here read and write raw memory order (which is what reveals a layout), and each module's
 * result is checked against the values worked out by hand and against the interpreter. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cxla/custom_call.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

/* out[i] = in[i] + 100 i, over six f32s in memory order. */
static void probe(void *out, const void **in) {
    const float *x = in[0];
    float *y = out;
    for (int i = 0; i < 6; i++) y[i] = x[i] + 100.0f * (float)i;
}

/* A tuple result: out[0] as probe, out[1] the operand's bytes as they came. */
static void probe_pair(void *out, const void **in) {
    void **outs = out;
    probe(outs[0], in);
    memcpy(outs[1], in[0], 6 * sizeof(float));
}

/* In place (output_to_operand_aliasing): out[i] += i in memory order; out starts as the
 * operand in the result's layout. */
static void bump(void *out, const void **in) {
    float *y = out;
    (void)in;
    for (int i = 0; i < 6; i++) y[i] += (float)i;
}

/* Compiles and runs |text| on x = {{1, 2, 3}, {4, 5, 6}} with both backends, checks
 * both against |expect| (a literal of the root's shape) and that the plan has no
 * handler step and runs "c" as a custom call (when |named|). */
static void check_as(const char *text, const char *expect, bool named) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "custom_layout", &m);
    if (!s) s = cxla_verify_module(m);
    CHECK_MSG(!s, "module: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    if (!m) return;
    cxla_literal *x = NULL, *want = NULL, *gi = NULL, *gc = NULL;
    const char *xs = "{{1, 2, 3}, {4, 5, 6}}";
    CHECK_OK(cxla_literal_parse(xs, strlen(xs), &m->entry->params[0]->shape, &x));
    CHECK_OK(cxla_literal_parse(expect, strlen(expect), &m->entry->root->shape, &want));
    void *compiled = NULL;
    exec_compile_options co = {0};
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    const cpu_plan *plan = compiled ? cpu_compiled_plan(compiled) : NULL;
    CHECK(plan != NULL);
    if (plan) {
        cpu_plan_stats st;
        cpu_plan_get_stats(plan, &st);
        CHECK_EQ_I64(st.handler_steps, 0);
        const char *w = named ? cpu_compiled_call_what(compiled, "c") : "custom call";
        CHECK_MSG(w && strcmp(w, "custom call") == 0, "c runs as %s", w ? w : "(null)");
    }
    if (x) {
        CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)&x, 1, &gi));
        if (compiled) {
            exec_run_options ro = {0};
            CHECK_OK(cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)&x, 1, &gc));
        }
    }
    if (want && gi) CHECK_MSG(cxla_literal_equal(want, gi), "the interpreter differs");
    if (want && gc) {
        char *t = cxla_literal_to_string(gc, 0);
        CHECK_MSG(cxla_literal_equal(want, gc), "the cpu backend differs: %s", t ? t : "?");
        free(t);
    }
    cpu_backend.destroy(compiled);
    cxla_literal_free(x);
    cxla_literal_free(want);
    cxla_literal_free(gi);
    cxla_literal_free(gc);
    cxla_module_destroy(m);
}

static void check(const char *text, const char *expect) {
    check_as(text, expect, true);
}

/* The operand and the result column-major: memory order 1 4 2 5 3 6 in, 1 104 202 305 403
 * 506 out, which read column-major are {{1, 202, 403}, {104, 305, 506}}. */
static void test_operand_and_result_layouts(void) {
    check("HloModule m\n"
          "ENTRY main {\n"
          "  x = f32[2,3]{1,0} parameter(0)\n"
          "  t = f32[2,3]{0,1} copy(x)\n"
          "  c = f32[2,3]{0,1} custom-call(t), custom_call_target=\"layout_probe\"\n"
          "  ROOT r = f32[2,3]{1,0} copy(c)\n"
          "}\n",
          "{{1, 202, 403}, {104, 305, 506}}");
}

/* The operand row-major in the module, column-major by operand_layout_constraints, the
 * result a row-major vector: the memory order the target saw, plus 100 i. */
static void test_layout_constraints(void) {
    check("HloModule m\n"
          "ENTRY main {\n"
          "  x = f32[2,3]{1,0} parameter(0)\n"
          "  c = f32[6]{0} custom-call(x), custom_call_target=\"layout_probe\", "
          "operand_layout_constraints={f32[2,3]{0,1}}\n"
          "  ROOT r = f32[6]{0} negate(c)\n"
          "}\n",
          "{-1, -104, -202, -305, -403, -506}");
}

/* A tuple result with one column-major leaf and one row-major leaf. */
static void test_tuple_result(void) {
    check("HloModule m\n"
          "ENTRY main {\n"
          "  x = f32[2,3]{1,0} parameter(0)\n"
          "  t = f32[2,3]{0,1} copy(x)\n"
          "  c = (f32[2,3]{0,1}, f32[6]{0}) custom-call(t), custom_call_target=\"layout_probe2\"\n"
          "  a = f32[2,3]{0,1} get-tuple-element(c), index=0\n"
          "  b = f32[6]{0} get-tuple-element(c), index=1\n"
          "  ra = f32[2,3]{1,0} copy(a)\n"
          "  ROOT r = (f32[2,3]{1,0}, f32[6]{0}) tuple(ra, b)\n"
          "}\n",
          "({{1, 202, 403}, {104, 305, 506}}, {1, 4, 2, 5, 3, 6})");
}

/* output_to_operand_aliasing between a column-major operand and a row-major result: the
 * result starts as the operand relaid to row-major (1 2 3 4 5 6) and the target adds its
 * memory positions: {{1, 3, 5}, {7, 9, 11}}. */
static void test_aliased_layouts(void) {
    check("HloModule m\n"
          "ENTRY main {\n"
          "  x = f32[2,3]{1,0} parameter(0)\n"
          "  t = f32[2,3]{0,1} copy(x)\n"
          "  c = f32[2,3]{1,0} custom-call(t), custom_call_target=\"layout_bump\", "
          "output_to_operand_aliasing={{}: (0, {})}\n"
          "  ROOT r = f32[2,3]{1,0} negate(c)\n"
          "}\n",
          "{{-1, -3, -5}, {-7, -9, -11}}");
}

/* The same custom call wrapped by custom-call-start: the async-desugar pass makes it a
 * custom call of a wrapped computation, which the layout pass treats as any other (its
 * name there is the pass's, so only the values and the absence of handler steps are
 * checked). */
static void test_wrapped_layouts(void) {
    check_as("HloModule m\n"
             "ENTRY main {\n"
             "  x = f32[2,3]{1,0} parameter(0)\n"
             "  t = f32[2,3]{0,1} copy(x)\n"
             "  s = ((f32[2,3]{0,1}), f32[2,3]{0,1}, s32[]) custom-call-start(t), "
             "custom_call_target=\"layout_probe\"\n"
             "  c = f32[2,3]{0,1} custom-call-done(s)\n"
             "  ROOT r = f32[2,3]{1,0} copy(c)\n"
             "}\n",
             "{{1, 202, 403}, {104, 305, 506}}", false);
}

static void register_targets(bool on) {
    CHECK_OK(cxla_custom_call_register("layout_probe", on ? (cxla_custom_call_fn)probe : NULL,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    CHECK_OK(cxla_custom_call_register("layout_probe2", on ? (cxla_custom_call_fn)probe_pair : NULL,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    CHECK_OK(cxla_custom_call_register("layout_bump", on ? (cxla_custom_call_fn)bump : NULL,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
}

static void test_all(void) {
    register_targets(true);
    test_operand_and_result_layouts();
    test_layout_constraints();
    test_tuple_result();
    test_aliased_layouts();
    test_wrapped_layouts();
    register_targets(false);
}

TEST_MAIN(TEST(test_all))
