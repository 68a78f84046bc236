/* The cpu backend's step sequences (src/cpu/cpu_steps.c): control flow runs as nested
 * steps over one arena, bit-exact against the interpreter; a dynamic-update-slice in a
 * while loop updates the state in place (no copy step, an arena smaller than the state);
 * swapped loop state is copied through temporaries; a value read after an update is not
 * clobbered; a scatter takes over its operand's buffer only where the operand dies there;
 * input_output_alias without donation leaves the caller's argument alone, with donation
 * the aliased results are computed in the arguments; bounded dynamic shapes run as steps; a
 * while loop that never ends is cancelled at its back-edge; and each instruction reports
 * how it runs. */
#include <stdio.h>
#include <stdlib.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cxla/custom_call.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

static cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "steps_test", &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        test_fail(__FILE__, __LINE__, "module rejected: %s", cxla_status_message(s));
        cxla_status_free(s);
        cxla_module_destroy(m);
        return NULL;
    }
    return m;
}

static cxla_literal *lit(const char *text, const cxla_shape *shape) {
    cxla_literal *l = NULL;
    cxla_status s = cxla_literal_parse(text, strlen(text), shape, &l);
    if (s) {
        test_fail(__FILE__, __LINE__, "literal: %s", cxla_status_message(s));
        cxla_status_free(s);
    }
    return l;
}

/* Compiles |text|, runs it on the cpu backend and the interpreter with |inputs| (literal
 * texts, one per parameter) and checks that the results are equal bit for bit. Returns
 * the compiled form (cpu_backend.destroy it) and its module in *out_m. */
static void *run_both(const char *text, const char *const *inputs, cxla_module **out_m) {
    cxla_module *m = parse(text);
    *out_m = m;
    if (!m) return NULL;
    cxla_literal *args[4] = {0};
    int64_t n = m->entry->param_count;
    for (int64_t p = 0; p < n && p < 4; p++) args[p] = lit(inputs[p], &m->entry->params[p]->shape);
    void *compiled = NULL;
    exec_compile_options co = {0};
    cxla_status s = cpu_backend.compile(m, &co, &compiled);
    CHECK_MSG(!s, "compile: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    cxla_literal *want = NULL, *got = NULL;
    s = interp_run_module(m, NULL, (const cxla_literal *const *)args, n, &want);
    CHECK_MSG(!s, "interpreter: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    if (compiled) {
        exec_run_options ro = {0};
        s = cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, n, &got);
        CHECK_MSG(!s, "cpu: %s", s ? cxla_status_message(s) : "");
        cxla_status_free(s);
    }
    if (want && got) CHECK_MSG(cxla_literal_equal(want, got), "cpu and interpreter differ");
    cxla_literal_free(want);
    cxla_literal_free(got);
    for (int64_t p = 0; p < n && p < 4; p++) cxla_literal_free(args[p]);
    return compiled;
}

/* A loop writes row i of a 512x256 f32 state (512 KiB) with a dynamic-update-slice. The
 * state is updated in place: no copy step, and the arena does not hold a second state
 * (the state itself is the result literal's storage). */
static void test_while_dus_in_place(void) {
    static const char *text = "HloModule dus_loop\n"
                              "cond {\n"
                              "  p = (s32[], f32[512,256]) parameter(0)\n"
                              "  i = s32[] get-tuple-element(p), index=0\n"
                              "  n = s32[] constant(512)\n"
                              "  ROOT lt = pred[] compare(i, n), direction=LT\n"
                              "}\n"
                              "body {\n"
                              "  p = (s32[], f32[512,256]) parameter(0)\n"
                              "  i = s32[] get-tuple-element(p), index=0\n"
                              "  buf = f32[512,256] get-tuple-element(p), index=1\n"
                              "  x = f32[] convert(i)\n"
                              "  row = f32[1,256] broadcast(x), dimensions={}\n"
                              "  z = s32[] constant(0)\n"
                              "  upd = f32[512,256] dynamic-update-slice(buf, row, i, z)\n"
                              "  one = s32[] constant(1)\n"
                              "  next = s32[] add(i, one)\n"
                              "  ROOT t = (s32[], f32[512,256]) tuple(next, upd)\n"
                              "}\n"
                              "ENTRY main {\n"
                              "  s = f32[] parameter(0)\n"
                              "  init = f32[512,256] broadcast(s), dimensions={}\n"
                              "  zero = s32[] constant(0)\n"
                              "  t0 = (s32[], f32[512,256]) tuple(zero, init)\n"
                              "  w = (s32[], f32[512,256]) while(t0), condition=cond, body=body\n"
                              "  ROOT r = f32[512,256] get-tuple-element(w), index=1\n"
                              "}\n";
    static const char *const inputs[] = {"-1.5"};
    cxla_module *m = NULL;
    void *compiled = run_both(text, inputs, &m);
    const cpu_plan *plan = compiled ? cpu_compiled_plan(compiled) : NULL;
    CHECK(plan != NULL);
    if (plan) {
        cpu_plan_stats st;
        cpu_plan_get_stats(plan, &st);
        /* Only the counter is copied (its initial value is a constant, and its next value
         * is computed while the old one is still read): 4 bytes each way. */
        CHECK_MSG(st.copy_bytes <= 8, "copy steps move %zu bytes", st.copy_bytes);
        CHECK_EQ_I64(st.handler_steps, 0);
        CHECK(st.in_place >= 2); /* the state takes the init's buffer; the update the state's */
        CHECK_MSG(st.arena_size < 512 * 256 * 4, "arena of %zu bytes", st.arena_size);
        const char *what = cpu_compiled_call_what(compiled, "upd");
        CHECK(what && strcmp(what, "in place") == 0);
        what = cpu_compiled_call_what(compiled, "buf"); /* a get-tuple-element: no copy */
        CHECK(what && strcmp(what, "alias") == 0);
        what = cpu_compiled_call_what(compiled, "w");
        CHECK(what && strcmp(what, "step") == 0);
        what = cpu_compiled_call_what(compiled, "lt");
        CHECK(what && strcmp(what, "kernel") == 0);
    }
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* The body swaps two state leaves and reads the old state after updating it: the swap
 * goes through temporaries and the read sees the value before the update. */
static void test_while_swap_and_read_after_update(void) {
    static const char *text =
        "HloModule swap_loop\n"
        "cond {\n"
        "  p = (s32[], f32[4], f32[4], f32[4]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  n = s32[] constant(5)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "body {\n"
        "  p = (s32[], f32[4], f32[4], f32[4]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  a = f32[4] get-tuple-element(p), index=1\n"
        "  b = f32[4] get-tuple-element(p), index=2\n"
        "  c = f32[4] get-tuple-element(p), index=3\n"
        "  xf = f32[] convert(i)\n"
        "  x = f32[1] reshape(xf)\n"
        "  u = f32[4] dynamic-update-slice(c, x, i)\n"
        "  s = f32[4] add(c, u)\n"
        "  one = s32[] constant(1)\n"
        "  next = s32[] add(i, one)\n"
        "  ROOT t = (s32[], f32[4], f32[4], f32[4]) tuple(next, b, a, s)\n"
        "}\n"
        "ENTRY main {\n"
        "  a = f32[4] parameter(0)\n"
        "  b = f32[4] parameter(1)\n"
        "  zero = s32[] constant(0)\n"
        "  c = f32[4] constant({10, 20, 30, 40})\n"
        "  t0 = (s32[], f32[4], f32[4], f32[4]) tuple(zero, a, b, c)\n"
        "  w = (s32[], f32[4], f32[4], f32[4]) while(t0), condition=cond, body=body\n"
        "  w1 = f32[4] get-tuple-element(w), index=1\n"
        "  w2 = f32[4] get-tuple-element(w), index=2\n"
        "  w3 = f32[4] get-tuple-element(w), index=3\n"
        "  ab = (f32[4], f32[4]) tuple(w1, w2)\n"
        "  ROOT r = ((f32[4], f32[4]), f32[4], f32[4]) tuple(ab, w3, w1)\n"
        "}\n";
    static const char *const inputs[] = {"{1, 2, 3, 4}", "{5, 6, 7, 8}"};
    cxla_module *m = NULL;
    void *compiled = run_both(text, inputs, &m);
    CHECK(compiled && cpu_compiled_plan(compiled) != NULL);
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* A conditional inside a called computation inside a loop, with nested tuples: steps
 * all the way down, no handler. */
static void test_nested_control_flow(void) {
    static const char *text =
        "HloModule nested\n"
        "neg {\n"
        "  p = (f32[3], s32[]) parameter(0)\n"
        "  x = f32[3] get-tuple-element(p), index=0\n"
        "  ROOT n = f32[3] negate(x)\n"
        "}\n"
        "dbl {\n"
        "  p = (f32[3], s32[]) parameter(0)\n"
        "  x = f32[3] get-tuple-element(p), index=0\n"
        "  ROOT d = f32[3] add(x, x)\n"
        "}\n"
        "step {\n"
        "  x = f32[3] parameter(0)\n"
        "  i = s32[] parameter(1)\n"
        "  two = s32[] constant(2)\n"
        "  r = s32[] remainder(i, two)\n"
        "  arg = (f32[3], s32[]) tuple(x, i)\n"
        "  ROOT c = f32[3] conditional(r, arg, arg), branch_computations={neg, dbl}\n"
        "}\n"
        "cond {\n"
        "  p = (s32[], (f32[3], f32[3])) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  n = s32[] constant(6)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "body {\n"
        "  p = (s32[], (f32[3], f32[3])) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  xy = (f32[3], f32[3]) get-tuple-element(p), index=1\n"
        "  x = f32[3] get-tuple-element(xy), index=0\n"
        "  y = f32[3] get-tuple-element(xy), index=1\n"
        "  s = f32[3] call(x, i), to_apply=step\n"
        "  one = s32[] constant(1)\n"
        "  next = s32[] add(i, one)\n"
        "  yx = (f32[3], f32[3]) tuple(s, x)\n"
        "  ROOT t = (s32[], (f32[3], f32[3])) tuple(next, yx)\n"
        "}\n"
        "ENTRY main {\n"
        "  x = f32[3] parameter(0)\n"
        "  zero = s32[] constant(0)\n"
        "  xx = (f32[3], f32[3]) tuple(x, x)\n"
        "  t0 = (s32[], (f32[3], f32[3])) tuple(zero, xx)\n"
        "  ROOT w = (s32[], (f32[3], f32[3])) while(t0), condition=cond, body=body\n"
        "}\n";
    static const char *const inputs[] = {"{1, -2.5, 3}"};
    cxla_module *m = NULL;
    void *compiled = run_both(text, inputs, &m);
    const cpu_plan *plan = compiled ? cpu_compiled_plan(compiled) : NULL;
    CHECK(plan != NULL);
    if (plan) {
        cpu_plan_stats st;
        cpu_plan_get_stats(plan, &st);
        CHECK_EQ_I64(st.handler_steps, 0);
    }
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* Scatter takes over its operand's buffer (cpu_kernel_info.in_place) where the operand dies
 * at the scatter: the loop state row by row, with no copy step of the state and an arena
 * smaller than the state; a scatter whose operand is read afterwards gets a buffer of its
 * own; a scatter of the entry's parameter never writes the caller's argument. */
static const char *scatter_loop =
    "HloModule scatter_loop\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "cond {\n"
    "  p = (s32[], f32[256,128]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(256)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  p = (s32[], f32[256,128]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  buf = f32[256,128] get-tuple-element(p), index=1\n"
    "  x = f32[] convert(i)\n"
    "  row = f32[1,128] broadcast(x), dimensions={}\n"
    "  idx = s32[1,1] reshape(i)\n"
    "  upd = f32[256,128] scatter(buf, idx, row), update_window_dims={1}, "
    "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
    "to_apply=add\n"
    "  one = s32[] constant(1)\n"
    "  next = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[256,128]) tuple(next, upd)\n"
    "}\n"
    "ENTRY main {\n"
    "  s = f32[] parameter(0)\n"
    "  init = f32[256,128] broadcast(s), dimensions={}\n"
    "  zero = s32[] constant(0)\n"
    "  t0 = (s32[], f32[256,128]) tuple(zero, init)\n"
    "  w = (s32[], f32[256,128]) while(t0), condition=cond, body=body\n"
    "  ROOT r = f32[256,128] get-tuple-element(w), index=1\n"
    "}\n";

static void test_scatter_in_place_in_loop(void) {
    static const char *const inputs[] = {"0.25"};
    cxla_module *m = NULL;
    void *compiled = run_both(scatter_loop, inputs, &m);
    const cpu_plan *plan = compiled ? cpu_compiled_plan(compiled) : NULL;
    CHECK(plan != NULL);
    if (plan) {
        cpu_plan_stats st;
        cpu_plan_get_stats(plan, &st);
        /* Only the counter moves (4 bytes each way); the state never. */
        CHECK_MSG(st.copy_bytes <= 8, "copy steps move %zu bytes", st.copy_bytes);
        CHECK_MSG(st.arena_size < 256 * 128 * 4, "arena of %zu bytes", st.arena_size);
        CHECK(st.in_place >= 2); /* the state takes init's buffer, the scatter the state's */
        const char *what = cpu_compiled_call_what(compiled, "upd");
        CHECK_MSG(what && strcmp(what, "kernel in place") == 0, "upd runs as %s",
                  what ? what : "?");
    }
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

static void test_scatter_not_in_place(void) {
    /* x is read again after the scatter (by y): the scatter must not write into it; and
     * the multi-output scatter's second operand is the parameter, the caller's. */
    static const char *text =
        "HloModule scatter_keep\n"
        "add {\n"
        "  a = f32[] parameter(0)\n"
        "  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n"
        "}\n"
        "add2 {\n"
        "  a = f32[] parameter(0)\n"
        "  b = f32[] parameter(1)\n"
        "  c = f32[] parameter(2)\n"
        "  d = f32[] parameter(3)\n"
        "  s = f32[] add(a, c)\n"
        "  t = f32[] add(b, d)\n"
        "  ROOT r = (f32[], f32[]) tuple(s, t)\n"
        "}\n"
        "ENTRY main {\n"
        "  p = f32[8] parameter(0)\n"
        "  x = f32[8] multiply(p, p)\n"
        "  i = s32[2,1] constant({{1}, {6}})\n"
        "  u = f32[2] constant({100, 200})\n"
        "  sc = f32[8] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, "
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
        "  y = f32[8] add(sc, x)\n"
        "  z = f32[8] negate(y)\n"
        "  m2 = (f32[8], f32[8]) scatter(z, p, i, u, u), update_window_dims={}, "
        "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
        "to_apply=add2\n"
        "  a = f32[8] get-tuple-element(m2), index=0\n"
        "  b = f32[8] get-tuple-element(m2), index=1\n"
        "  ROOT r = (f32[8], f32[8], f32[8]) tuple(a, b, p)\n"
        "}\n";
    cxla_module *m = parse(text);
    if (!m) return;
    cxla_literal *arg = lit("{1, 2, 3, 4, 5, 6, 7, 8}", &m->entry->params[0]->shape);
    cxla_literal *before = NULL, *got = NULL, *want = NULL;
    if (arg) CHECK_OK(cxla_literal_clone(arg, &before));
    void *compiled = NULL;
    exec_compile_options co = {0};
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    if (compiled && arg) {
        exec_run_options ro = {0};
        CHECK_OK(cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)&arg, 1, &got));
        CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)&arg, 1, &want));
        CHECK(got && want && cxla_literal_equal(got, want));
        CHECK(before && cxla_literal_equal(arg, before)); /* the argument is untouched */
        const char *what = cpu_compiled_call_what(compiled, "sc");
        CHECK_MSG(what && strcmp(what, "kernel") == 0, "sc runs as %s", what ? what : "?");
        /* z dies at m2 and takes it over; p, the second operand, is the caller's. */
        what = cpu_compiled_call_what(compiled, "m2");
        CHECK_MSG(what && strcmp(what, "kernel in place") == 0, "m2 runs as %s", what ? what : "?");
    }
    if (compiled) cpu_backend.destroy(compiled);
    cxla_literal_free(arg);
    cxla_literal_free(before);
    cxla_literal_free(got);
    cxla_literal_free(want);
    cxla_module_destroy(m);
}

/* A donated run (exec_run_options.donated): the second plan writes the aliased results in
 * the arguments' memory: the update in place (the argument literal itself changes) and a
 * result first written after its argument's last read straight into it; the lent plan
 * never writes an argument. */
static void test_donated_plan(void) {
    static const char *text =
        "HloModule donated, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, "
        "must-alias) }\n"
        "ENTRY main {\n"
        "  p = f32[256] parameter(0)\n"
        "  w = f32[64] parameter(1)\n"
        "  u = f32[2] parameter(2)\n"
        "  i = s32[] constant(3)\n"
        "  r = f32[256] dynamic-update-slice(p, u, i)\n"
        "  z = f32[] constant(0)\n"
        "  s = f32[] reduce(w, z), dimensions={0}, to_apply=add\n"
        "  b = f32[64] broadcast(s), dimensions={}\n"
        "  ROOT t = (f32[256], f32[64]) tuple(r, b)\n"
        "}\n"
        "add {\n"
        "  x = f32[] parameter(0)\n"
        "  y = f32[] parameter(1)\n"
        "  ROOT a = f32[] add(x, y)\n"
        "}\n";
    cxla_module *m = parse(text);
    if (!m) return;
    cxla_literal *a = NULL, *w = NULL, *u = lit("{-1, -2}", &m->entry->params[2]->shape);
    CHECK_OK(cxla_literal_create(&m->entry->params[0]->shape, &a));
    CHECK_OK(cxla_literal_create(&m->entry->params[1]->shape, &w));
    void *compiled = NULL;
    exec_compile_options co = {0};
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    const cpu_plan *lent = compiled ? cpu_compiled_plan(compiled) : NULL;
    const cpu_plan *given = compiled ? cpu_compiled_donated_plan(compiled) : NULL;
    CHECK(lent && given);
    if (lent && given && a && w && u) {
        cpu_plan_stats ls, gs;
        cpu_plan_get_stats(lent, &ls);
        cpu_plan_get_stats(given, &gs);
        CHECK_EQ_I64(ls.donated, 0);
        CHECK_EQ_I64(gs.donated, 2);
        float *pa = cxla_literal_data(a), *pw = cxla_literal_data(w);
        for (int k = 0; k < 256; k++) pa[k] = (float)k;
        for (int k = 0; k < 64; k++) pw[k] = 1.0f;
        const cxla_literal *args[3] = {a, w, u};
        bool donated[3] = {true, true, false};
        int64_t in_place[2] = {-1, -1};
        cxla_literal *got = NULL;
        /* Lent: no argument changes, nothing reported in place. */
        exec_run_options ro = {.in_place_arg = in_place};
        CHECK_OK(cpu_backend.execute(compiled, &ro, args, 3, &got));
        CHECK(in_place[0] == -1 && in_place[1] == -1);
        CHECK(pa[3] == 3 && pa[4] == 4 && pw[0] == 1);
        const cxla_literal *r0 = got ? cxla_literal_tuple_element_const(got, 0) : NULL;
        CHECK(r0 && ((const float *)cxla_literal_data_const(r0))[3] == -1);
        cxla_literal_free(got);
        got = NULL;
        /* Donated: both results in the arguments. */
        ro.donated = donated;
        CHECK_OK(cpu_backend.execute(compiled, &ro, args, 3, &got));
        CHECK_EQ_I64(in_place[0], 0);
        CHECK_EQ_I64(in_place[1], 1);
        CHECK(pa[2] == 2 && pa[3] == -1 && pa[4] == -2 && pa[5] == 5);
        CHECK(pw[0] == 64 && pw[63] == 64);
        cxla_literal_free(got);
        cpu_backend.destroy(compiled);
    }
    cxla_literal_free(a);
    cxla_literal_free(w);
    cxla_literal_free(u);
    cxla_module_destroy(m);
}

/* Bounded dynamic shapes run as steps: buffers at the bounds, each value's sizes carried
 * through a while loop's state, kernels at the bounds for dynamic elementwise work, sizes
 * steps for set-dimension-size and get-dimension-size, kernels for the static rest;
 * results (sizes included) are the interpreter's (more in test_cpu_dynamic.c). Unbounded ones keep
 * the driver (no plan). */
static void test_dynamic_steps(void) {
    static const char *text = "HloModule dyn_loop\n"
                              "cond {\n"
                              "  p = (s32[], f32[<=8]) parameter(0)\n"
                              "  i = s32[] get-tuple-element(p), index=0\n"
                              "  n = s32[] constant(3)\n"
                              "  ROOT lt = pred[] compare(i, n), direction=LT\n"
                              "}\n"
                              "body {\n"
                              "  p = (s32[], f32[<=8]) parameter(0)\n"
                              "  i = s32[] get-tuple-element(p), index=0\n"
                              "  v = f32[<=8] get-tuple-element(p), index=1\n"
                              "  d = f32[<=8] add(v, v)\n"
                              "  one = s32[] constant(1)\n"
                              "  next = s32[] add(i, one)\n"
                              "  ROOT t = (s32[], f32[<=8]) tuple(next, d)\n"
                              "}\n"
                              "ENTRY main {\n"
                              "  x = f32[8] parameter(0)\n"
                              "  k = s32[] parameter(1)\n"
                              "  y = f32[8] negate(x)\n"
                              "  s = f32[<=8] set-dimension-size(y, k), dimensions={0}\n"
                              "  zero = s32[] constant(0)\n"
                              "  t0 = (s32[], f32[<=8]) tuple(zero, s)\n"
                              "  w = (s32[], f32[<=8]) while(t0), condition=cond, body=body\n"
                              "  r = f32[<=8] get-tuple-element(w), index=1\n"
                              "  g = s32[] get-dimension-size(r), dimensions={0}\n"
                              "  ROOT out = (f32[<=8], s32[]) tuple(r, g)\n"
                              "}\n";
    static const char *const inputs[] = {"{1, 2, 3, 4, 5, 6, 7, 8}", "5"};
    cxla_module *m = NULL;
    void *compiled = run_both(text, inputs, &m);
    const cpu_plan *plan = compiled ? cpu_compiled_plan(compiled) : NULL;
    CHECK(plan != NULL);
    if (plan) {
        cpu_plan_stats st;
        cpu_plan_get_stats(plan, &st);
        /* The dynamic add is a kernel at the bounds, the sizes steps of their own. */
        CHECK(st.handler_steps == 0);
        CHECK(st.bounds_steps == 1);
        const char *what = cpu_compiled_call_what(compiled, "y");
        CHECK(what && strcmp(what, "kernel") == 0);
        what = cpu_compiled_call_what(compiled, "d");
        CHECK(what && strcmp(what, "kernel") == 0);
        what = cpu_compiled_call_what(compiled, "g");
        CHECK(what && strcmp(what, "sizes") == 0);
        cxla_literal *x = lit("{1, 2, 3, 4, 5, 6, 7, 8}", &m->entry->params[0]->shape);
        cxla_literal *k = lit("5", &m->entry->params[1]->shape), *got = NULL;
        const cxla_literal *args[2] = {x, k};
        exec_run_options ro = {0};
        if (x && k) CHECK_OK(cpu_backend.execute(compiled, &ro, args, 2, &got));
        const cxla_literal *r = got ? cxla_literal_tuple_element_const(got, 0) : NULL;
        CHECK(r && cxla_literal_dynamic_size(r, 0) == 5);
        CHECK(r && ((const float *)cxla_literal_data_const(r))[4] == -40);
        cxla_literal_free(got);
        cxla_literal_free(x);
        cxla_literal_free(k);
    }
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
    static const char *unbounded = "HloModule u\n"
                                   "ENTRY e {\n"
                                   "  v = f32[?] parameter(0)\n"
                                   "  ROOT n = f32[?] negate(v)\n"
                                   "}\n";
    m = parse(unbounded);
    compiled = NULL;
    exec_compile_options co = {0};
    if (m) CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    CHECK(compiled && cpu_compiled_plan(compiled) == NULL);
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* A concatenate of sorted slices along its outer dimension: each sort writes its piece of
 * the result in place and the concatenate (fused with the reshapes) has no step; where a
 * piece is read again afterwards (s1 below) nothing is done in place. */
#define PIECES_BODY                                                                                \
    "less {\n"                                                                                     \
    "  a = f32[] parameter(0)\n"                                                                   \
    "  b = f32[] parameter(1)\n"                                                                   \
    "  ROOT c = pred[] compare(a, b), direction=LT\n"                                              \
    "}\n"                                                                                          \
    "ENTRY main {\n"                                                                               \
    "  x = f32[64,256] parameter(0)\n"                                                             \
    "  i = s32[3] parameter(1)\n"                                                                  \
    "  z = s32[] constant(0)\n"                                                                    \
    "  i0 = s32[1] slice(i), slice={[0:1]}\n"                                                      \
    "  j0 = s32[] reshape(i0)\n"                                                                   \
    "  i1 = s32[1] slice(i), slice={[1:2]}\n"                                                      \
    "  j1 = s32[] reshape(i1)\n"                                                                   \
    "  i2 = s32[1] slice(i), slice={[2:3]}\n"                                                      \
    "  j2 = s32[] reshape(i2)\n"                                                                   \
    "  d0 = f32[8,256] dynamic-slice(x, j0, z), dynamic_slice_sizes={8,256}\n"                     \
    "  d1 = f32[8,256] dynamic-slice(x, j1, z), dynamic_slice_sizes={8,256}\n"                     \
    "  d2 = f32[8,256] dynamic-slice(x, j2, z), dynamic_slice_sizes={8,256}\n"                     \
    "  s0 = f32[8,256] sort(d0), dimensions={1}, to_apply=less\n"                                  \
    "  s1 = f32[8,256] sort(d1), dimensions={1}, to_apply=less\n"                                  \
    "  s2 = f32[8,256] sort(d2), dimensions={1}, to_apply=less\n"                                  \
    "  r0 = f32[1,8,256] reshape(s0)\n"                                                            \
    "  r1 = f32[1,8,256] reshape(s1)\n"                                                            \
    "  r2 = f32[1,8,256] reshape(s2)\n"

static void test_concat_pieces_in_place(void) {
    static const char *text = "HloModule pieces\n" PIECES_BODY
                              "  ROOT c = f32[3,8,256] concatenate(r0, r1, r2), dimensions={0}\n"
                              "}\n";
    static const char *kept = "HloModule pieces_kept\n" PIECES_BODY
                              "  c = f32[3,8,256] concatenate(r0, r1, r2), dimensions={0}\n"
                              "  ROOT t = (f32[3,8,256], f32[8,256]) tuple(c, s1)\n"
                              "}\n";
    /* x: 64x256 distinct values. */
    char *xs = malloc(64 * 256 * 8 + 4);
    if (!xs) return;
    size_t at = 0;
    xs[at++] = '{';
    for (int r = 0; r < 64; r++) {
        at += (size_t)sprintf(xs + at, "%s{", r ? "," : "");
        for (int k = 0; k < 256; k++)
            at += (size_t)sprintf(xs + at, "%s%d", k ? "," : "", (r * 7 + k * 13) % 1000);
        xs[at++] = '}';
    }
    xs[at++] = '}';
    xs[at] = '\0';
    const char *inputs[2] = {xs, "{60, -2, 17}"};
    for (int v = 0; v < 2; v++) {
        cxla_module *m = NULL;
        void *compiled = run_both(v ? kept : text, inputs, &m);
        const cpu_plan *plan = compiled ? cpu_compiled_plan(compiled) : NULL;
        CHECK(plan != NULL);
        if (plan) {
            cpu_plan_stats st;
            cpu_plan_get_stats(plan, &st);
            if (v == 0) {
                CHECK_EQ_I64(st.in_place, 3);
            } else {
                CHECK_EQ_I64(st.in_place, 0);
            }
        }
        if (compiled) cpu_backend.destroy(compiled);
        cxla_module_destroy(m);
    }
    free(xs);
}

/* input_output_alias without donation: the run lends its arguments, so the result is a
 * copy and the argument is left as it was, while the update is still exact. */
static void test_input_output_alias_without_donation(void) {
    static const char *text = "HloModule aliased, input_output_alias={ {}: (0, {}, may-alias) }\n"
                              "ENTRY main {\n"
                              "  p = f32[6] parameter(0)\n"
                              "  u = f32[2] parameter(1)\n"
                              "  i = s32[] constant(3)\n"
                              "  ROOT r = f32[6] dynamic-update-slice(p, u, i)\n"
                              "}\n";
    cxla_module *m = parse(text);
    if (!m) return;
    cxla_literal *a = lit("{1, 2, 3, 4, 5, 6}", &m->entry->params[0]->shape);
    cxla_literal *u = lit("{-1, -2}", &m->entry->params[1]->shape);
    cxla_literal *a_before = NULL, *got = NULL, *want = NULL;
    if (a) CHECK_OK(cxla_literal_clone(a, &a_before));
    void *compiled = NULL;
    exec_compile_options co = {0};
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    const cxla_literal *args[2] = {a, u};
    if (compiled && a && u) {
        exec_run_options ro = {0};
        CHECK_OK(cpu_backend.execute(compiled, &ro, args, 2, &got));
        want = lit("{1, 2, 3, -1, -2, 6}", &m->entry->root->shape);
        CHECK(got && want && cxla_literal_equal(got, want));
        CHECK(a_before && cxla_literal_equal(a, a_before)); /* the argument is untouched */
        const char *what = cpu_compiled_call_what(compiled, "r");
        CHECK(what && strcmp(what, "kernel") == 0); /* not in place: p is the caller's */
        cpu_backend.destroy(compiled);
    }
    cxla_literal_free(a);
    cxla_literal_free(u);
    cxla_literal_free(a_before);
    cxla_literal_free(got);
    cxla_literal_free(want);
    cxla_module_destroy(m);
}

/* The poll hook requests the cancellation after a few polls: the loop that never ends
 * stops with the requester's code and a message that names where it was. */
static int polls;
static void poll_hook(exec_cancel *self, void *user) {
    (void)user;
    if (++polls == 5) exec_cancel_request(self, CXLA_STATUS_CANCELLED, "test: enough");
}

static void test_while_is_cancellable(void) {
    static const char *text = "HloModule forever\n"
                              "cond {\n"
                              "  p = s32[] parameter(0)\n"
                              "  ROOT t = pred[] constant(true)\n"
                              "}\n"
                              "body {\n"
                              "  p = s32[] parameter(0)\n"
                              "  one = s32[] constant(1)\n"
                              "  ROOT n = s32[] add(p, one)\n"
                              "}\n"
                              "ENTRY main {\n"
                              "  x = s32[] parameter(0)\n"
                              "  ROOT w = s32[] while(x), condition=cond, body=body\n"
                              "}\n";
    cxla_module *m = parse(text);
    if (!m) return;
    cxla_literal *x = lit("0", &m->entry->params[0]->shape);
    void *compiled = NULL;
    exec_compile_options co = {0};
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    if (compiled && x) {
        CHECK(cpu_compiled_plan(compiled) != NULL);
        exec_cancel cancel;
        exec_cancel_init(&cancel, NULL);
        cancel.poll = poll_hook;
        polls = 0;
        exec_run_options ro = {.cancel = &cancel};
        cxla_literal *got = NULL;
        const cxla_literal *args[1] = {x};
        cxla_status s = cpu_backend.execute(compiled, &ro, args, 1, &got);
        CHECK(s != NULL && got == NULL);
        if (s) {
            CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_CANCELLED);
            CHECK_MSG(strstr(cxla_status_message(s), "test: enough") != NULL, "%s",
                      cxla_status_message(s));
            CHECK_MSG(strstr(cxla_status_message(s), "while") != NULL, "%s",
                      cxla_status_message(s));
        }
        cxla_status_free(s);
        cxla_literal_free(got);
        CHECK(polls >= 5);
        cpu_backend.destroy(compiled);
    }
    cxla_literal_free(x);
    cxla_module_destroy(m);
}

/* ---- service steps: collectives, custom calls, host transfers, rng ---------------------- */

static void twice_f32(void *out, const void **in) {
    const float *x = in[0];
    float *y = out;
    for (int i = 0; i < 4; i++) y[i] = 2 * x[i];
}

static void always_fails(void *out, const void **in, cxla_custom_call_status *status) {
    (void)out, (void)in;
    cxla_custom_call_status_set_failure(status, "steps2 says no");
}

typedef struct host_log {
    int infeeds, outfeeds;
    float last_out[4];
} host_log;

static cxla_status infeed_cb(void *user, const cxla_shape *shape, const char *config,
                             cxla_literal **out) {
    (void)config;
    ((host_log *)user)->infeeds++;
    return cxla_literal_parse("{0.5, 1.5, -2, 4}", 17, shape, out);
}

static cxla_status outfeed_cb(void *user, const cxla_literal *data, const cxla_shape *shape,
                              const char *config) {
    (void)shape, (void)config;
    host_log *h = user;
    h->outfeeds++;
    memcpy(h->last_out, cxla_literal_data_const(data), sizeof(h->last_out));
    return NULL;
}

/* Collectives (on one device), rng, custom calls and host transfers run as steps of their
 * own: no interpreter handler, results bit-exact with the interpreter given the same seed
 * and host queue, the rng state carried between rng instructions and a while loop's
 * iterations, and a failing custom call named in the error. */
static void test_service_steps(void) {
    static const char *text = "HloModule services, replica_count=1\n"
                              "add {\n"
                              "  a = f32[] parameter(0)\n"
                              "  b = f32[] parameter(1)\n"
                              "  ROOT s = f32[] add(a, b)\n"
                              "}\n"
                              "ENTRY main {\n"
                              "  x = f32[4] parameter(0)\n"
                              "  tok = token[] after-all()\n"
                              "  inf = (f32[4], token[]) infeed(tok)\n"
                              "  d = f32[4] get-tuple-element(inf), index=0\n"
                              "  t1 = token[] get-tuple-element(inf), index=1\n"
                              "  ar = f32[4] all-reduce(d), replica_groups={}, to_apply=add\n"
                              "  ag = f32[4] all-gather(ar), replica_groups={}, dimensions={0}\n"
                              "  cp = f32[4] collective-permute(ag), source_target_pairs={{0,0}}\n"
                              "  id = u32[] replica-id()\n"
                              "  idf = f32[] convert(id)\n"
                              "  lo = f32[] constant(-1)\n"
                              "  hi = f32[] constant(3)\n"
                              "  u = f32[4] rng(lo, hi), distribution=rng_uniform\n"
                              "  nrm = f32[4] rng(lo, hi), distribution=rng_normal\n"
                              "  ilo = s32[] constant(-5)\n"
                              "  ihi = s32[] constant(1000)\n"
                              "  iu = s32[4] rng(ilo, ihi), distribution=rng_uniform\n"
                              "  iuf = f32[4] convert(iu)\n"
                              "  tw = f32[4] custom-call(x), custom_call_target=\"steps2_twice\"\n"
                              "  al = f32[4] custom-call(), custom_call_target=\"AllocateBuffer\"\n"
                              "  b = f32[4] broadcast(idf), dimensions={}\n"
                              "  s1 = f32[4] add(cp, u)\n"
                              "  s2 = f32[4] add(s1, nrm)\n"
                              "  s3 = f32[4] add(s2, iuf)\n"
                              "  s4 = f32[4] add(s3, tw)\n"
                              "  s5 = f32[4] add(s4, al)\n"
                              "  s6 = f32[4] add(s5, b)\n"
                              "  t2 = token[] outfeed(s6, t1)\n"
                              "  ROOT r = (f32[4], f32[4]) tuple(s6, u)\n"
                              "}\n";
    cxla_status s = cxla_custom_call_register("steps2_twice", (cxla_custom_call_fn)twice_f32,
                                              CXLA_CUSTOM_CALL_API_ORIGINAL);
    CHECK(!s);
    cxla_status_free(s);
    cxla_module *m = parse(text);
    if (!m) return;
    cxla_literal *arg = lit("{1, 2, 3, 4}", &m->entry->params[0]->shape);
    void *compiled = NULL;
    exec_compile_options co = {0};
    s = cpu_backend.compile(m, &co, &compiled);
    CHECK_MSG(!s, "compile: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    const cpu_plan *plan = compiled ? cpu_compiled_plan(compiled) : NULL;
    CHECK(plan != NULL);
    if (plan) {
        cpu_plan_stats st;
        cpu_plan_get_stats(plan, &st);
        CHECK_EQ_I64(st.handler_steps, 0);
        CHECK(st.service_steps >= 10);
    }
    if (compiled) {
        const char *w = cpu_compiled_call_what(compiled, "ar");
        CHECK_MSG(w && strcmp(w, "collective") == 0, "ar runs as %s", w ? w : "(null)");
        w = cpu_compiled_call_what(compiled, "tw");
        CHECK_MSG(w && strcmp(w, "custom call") == 0, "tw runs as %s", w ? w : "(null)");
        w = cpu_compiled_call_what(compiled, "nrm");
        CHECK_MSG(w && strcmp(w, "rng") == 0, "nrm runs as %s", w ? w : "(null)");
        w = cpu_compiled_call_what(compiled, "inf");
        CHECK_MSG(w && strcmp(w, "host transfer") == 0, "inf runs as %s", w ? w : "(null)");
    }
    /* Two seeds (0 keeps XLA's key 0), two runs each: every run starts a fresh state. */
    for (uint64_t seed = 0; seed < 2 && compiled; seed++) {
        host_log hi = {0}, hc = {0};
        exec_host host_i = {.user = &hi, .infeed = infeed_cb, .outfeed = outfeed_cb};
        exec_host host_c = {.user = &hc, .infeed = infeed_cb, .outfeed = outfeed_cb};
        exec_run_options oi = {.seed = seed * 12345, .host = &host_i, .check_finite = true};
        exec_run_options oc = {.seed = seed * 12345, .host = &host_c, .check_finite = true};
        cxla_literal *want = NULL, *got = NULL;
        s = interp_run_module(m, &oi, (const cxla_literal *const *)&arg, 1, &want);
        CHECK_MSG(!s, "interpreter: %s", s ? cxla_status_message(s) : "");
        cxla_status_free(s);
        s = cpu_backend.execute(compiled, &oc, (const cxla_literal *const *)&arg, 1, &got);
        CHECK_MSG(!s, "cpu: %s", s ? cxla_status_message(s) : "");
        cxla_status_free(s);
        if (want && got) CHECK_MSG(cxla_literal_equal(want, got), "cpu and interpreter differ");
        CHECK_EQ_I64(hc.infeeds, 1);
        CHECK_EQ_I64(hc.outfeeds, 1);
        CHECK(memcmp(hi.last_out, hc.last_out, sizeof(hc.last_out)) == 0);
        cxla_literal_free(want);
        cxla_literal_free(got);
    }
    /* Without host callbacks the infeed fails, naming the instruction. */
    if (compiled) {
        exec_run_options none = {0};
        cxla_literal *got = NULL;
        s = cpu_backend.execute(compiled, &none, (const cxla_literal *const *)&arg, 1, &got);
        CHECK(s != NULL);
        CHECK_MSG(s && strstr(cxla_status_message(s), "inf (infeed") &&
                      strstr(cxla_status_message(s), "no host infeed handler"),
                  "%s", s ? cxla_status_message(s) : "");
        cxla_status_free(s);
        cxla_literal_free(got);
        cpu_backend.destroy(compiled);
    }
    cxla_literal_free(arg);
    cxla_module_destroy(m);
    s = cxla_custom_call_register("steps2_twice", NULL, CXLA_CUSTOM_CALL_API_ORIGINAL);
    cxla_status_free(s);
}

/* rng in a computation called twice, and one after the calls: inlining copies the
 * callee's rng (both copies keep its key under a seed, as the interpreter runs the one
 * instruction twice) and puts the copies where the calls were, so that the state is drawn
 * in the interpreter's order. */
static void check_rng_module(const char *text);

static void test_rng_through_inlined_calls(void) {
    static const char *text = "HloModule rng_calls\n"
                              "sub {\n"
                              "  p = f32[] parameter(0)\n"
                              "  lo = f32[] constant(0)\n"
                              "  hi = f32[] constant(1)\n"
                              "  r = f32[4] rng(lo, hi), distribution=rng_uniform\n"
                              "  b = f32[4] broadcast(p), dimensions={}\n"
                              "  ROOT a = f32[4] add(r, b)\n"
                              "}\n"
                              "ENTRY e {\n"
                              "  x = f32[] constant(10)\n"
                              "  y = f32[] constant(20)\n"
                              "  c1 = f32[4] call(x), to_apply=sub\n"
                              "  c2 = f32[4] call(y), to_apply=sub\n"
                              "  lo = f32[] constant(0)\n"
                              "  hi = f32[] constant(1)\n"
                              "  r3 = f32[4] rng(lo, hi), distribution=rng_uniform\n"
                              "  ROOT t = (f32[4], f32[4], f32[4]) tuple(c1, c2, r3)\n"
                              "}\n";
    check_rng_module(text);
}

/* An rng-start (async sugar) beside a plain rng: the async-desugar pass puts the rng in a
 * wrapped computation, where it keeps the interpreter's key for the sugar (0 before the
 * seed: the interpreter's list of rngs does not hold it), and the plain one its own. */
static void test_rng_start(void) {
    check_rng_module("HloModule rng_start\n"
                     "ENTRY e {\n"
                     "  lo = f32[] constant(0)\n"
                     "  hi = f32[] constant(1)\n"
                     "  s = ((f32[], f32[]), f32[4], s32[]) rng-start(lo, hi), "
                     "distribution=rng_uniform\n"
                     "  r = f32[4] rng-done(s)\n"
                     "  c = f32[4] rng(lo, hi), distribution=rng_uniform\n"
                     "  ROOT t = (f32[4], f32[4]) tuple(r, c)\n"
                     "}\n");
}

/* Runs |text| on the interpreter and the cpu backend under three seeds: equal results. */
static void check_rng_module(const char *text) {
    cxla_module *m = parse(text);
    if (!m) return;
    void *compiled = NULL;
    exec_compile_options co = {0};
    cxla_status s = cpu_backend.compile(m, &co, &compiled);
    CHECK_MSG(!s, "compile: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    for (uint64_t seed = 0; seed < 3 && compiled; seed++) {
        exec_run_options o = {.seed = seed * 777};
        cxla_literal *want = NULL, *got = NULL;
        s = interp_run_module(m, &o, NULL, 0, &want);
        CHECK_MSG(!s, "interpreter: %s", s ? cxla_status_message(s) : "");
        cxla_status_free(s);
        s = cpu_backend.execute(compiled, &o, NULL, 0, &got);
        CHECK_MSG(!s, "cpu: %s", s ? cxla_status_message(s) : "");
        cxla_status_free(s);
        if (want && got)
            CHECK_MSG(cxla_literal_equal(want, got), "seed %d: cpu and interpreter differ",
                      (int)(seed * 777));
        cxla_literal_free(want);
        cxla_literal_free(got);
    }
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

static void test_failing_custom_call_names_it(void) {
    static const char *text =
        "HloModule failing\n"
        "ENTRY main {\n"
        "  x = f32[4] parameter(0)\n"
        "  ROOT bad = f32[4] custom-call(x), custom_call_target=\"steps2_no\", "
        "api_version=API_VERSION_STATUS_RETURNING\n"
        "}\n";
    cxla_status s = cxla_custom_call_register("steps2_no", (cxla_custom_call_fn)always_fails,
                                              CXLA_CUSTOM_CALL_API_STATUS_RETURNING);
    cxla_status_free(s);
    cxla_module *m = parse(text);
    if (!m) return;
    cxla_literal *arg = lit("{1, 2, 3, 4}", &m->entry->params[0]->shape);
    void *compiled = NULL;
    exec_compile_options co = {0};
    s = cpu_backend.compile(m, &co, &compiled);
    CHECK(!s);
    cxla_status_free(s);
    if (compiled) {
        const cpu_plan *plan = cpu_compiled_plan(compiled);
        cpu_plan_stats st = {0};
        if (plan) cpu_plan_get_stats(plan, &st);
        CHECK_EQ_I64(st.handler_steps, 0);
        exec_run_options ro = {0};
        cxla_literal *got = NULL;
        s = cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)&arg, 1, &got);
        CHECK(s != NULL);
        CHECK_MSG(s && strstr(cxla_status_message(s), "bad (custom-call") &&
                      strstr(cxla_status_message(s), "steps2 says no"),
                  "%s", s ? cxla_status_message(s) : "");
        cxla_status_free(s);
        cxla_literal_free(got);
        cpu_backend.destroy(compiled);
    }
    cxla_literal_free(arg);
    cxla_module_destroy(m);
    s = cxla_custom_call_register("steps2_no", NULL, CXLA_CUSTOM_CALL_API_STATUS_RETURNING);
    cxla_status_free(s);
}

TEST_MAIN(TEST(test_while_dus_in_place), TEST(test_while_swap_and_read_after_update),
          TEST(test_nested_control_flow), TEST(test_input_output_alias_without_donation),
          TEST(test_while_is_cancellable), TEST(test_service_steps),
          TEST(test_rng_through_inlined_calls), TEST(test_rng_start),
          TEST(test_failing_custom_call_names_it), TEST(test_scatter_in_place_in_loop),
          TEST(test_scatter_not_in_place), TEST(test_donated_plan), TEST(test_dynamic_steps),
          TEST(test_concat_pieces_in_place))
