/* Fused while loops (src/cpu/cpu_loop.c): a loop of kernels and copies runs as one step,
 * as a generated C function or (CXLA_LOOP_NO_CC) as the interpreted program, and keeps
 * the state right: read after an update in the same iteration, swapped state, no
 * iteration at all, a body of one kernel, nested loops, conditionals, dynamic-update-slices in
 * place, kernels big enough for the thread pool; a loop with a step that cannot be fused keeps its
 * steps (its inner loop fused alone). Every case is compared bit for bit with the interpreter, and
 * with the same plan run step by step (CXLA_LOOP_STEPS). Each kernel is compiled once: one
 * that only the loop calls is in the loop's translation unit alone. */
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

typedef struct want_stats {
    int64_t fused_loops; /* of the plan */
    int64_t loops_as_c;  /* when the loops are compiled */
    /* When compiled: whether some buffers of the generated code lie at fixed offsets of the
     * arena, and whether some constants are written into it (cpu_loop.c's slot_where). */
    bool arena_slots, const_slots;
} want_stats;

static cxla_literal *lit(const char *text, const cxla_shape *shape) {
    cxla_literal *l = NULL;
    cxla_status s = cxla_literal_parse(text, strlen(text), shape, &l);
    if (s) {
        test_fail(__FILE__, __LINE__, "literal: %s", cxla_status_message(s));
        cxla_status_free(s);
    }
    return l;
}

static cxla_literal *run_cpu(void *compiled, cxla_literal **args, int64_t n) {
    cxla_literal *got = NULL;
    exec_run_options ro = {0};
    cxla_status s = cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, n, &got);
    CHECK_MSG(!s, "cpu: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    return got;
}

/* Compiles |text| twice (loops as C, loops as ops), checks the plan's statistics and runs
 * each form fused and step by step against the interpreter, bit for bit. */
static void check_loop(const char *name, const char *text, const char *const *inputs,
                       want_stats want) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), name, &m);
    if (!s) s = cxla_verify_module(m);
    CHECK_MSG(!s, "%s: %s", name, s ? cxla_status_message(s) : "");
    if (s) {
        cxla_status_free(s);
        cxla_module_destroy(m);
        return;
    }
    cxla_literal *args[4] = {0};
    int64_t n = m->entry->param_count;
    for (int64_t p = 0; p < n && p < 4; p++) args[p] = lit(inputs[p], &m->entry->params[p]->shape);
    cxla_literal *want_lit = NULL;
    s = interp_run_module(m, NULL, (const cxla_literal *const *)args, n, &want_lit);
    CHECK_MSG(!s, "%s: interpreter: %s", name, s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    for (int as_c = 1; as_c >= 0 && want_lit; as_c--) {
        if (as_c)
            unsetenv("CXLA_LOOP_NO_CC");
        else
            setenv("CXLA_LOOP_NO_CC", "1", 1);
        void *compiled = NULL;
        exec_compile_options co = {0};
        s = cpu_backend.compile(m, &co, &compiled);
        CHECK_MSG(!s, "%s: compile: %s", name, s ? cxla_status_message(s) : "");
        cxla_status_free(s);
        const cpu_plan *plan = compiled ? cpu_compiled_plan(compiled) : NULL;
        CHECK_MSG(plan != NULL, "%s: no plan", name);
        if (plan) {
            cpu_plan_stats st;
            cpu_plan_get_stats(plan, &st);
            CHECK_MSG(st.fused_loops == want.fused_loops, "%s: %lld fused loops, want %lld", name,
                      (long long)st.fused_loops, (long long)want.fused_loops);
            int64_t c = as_c ? want.loops_as_c : 0;
            CHECK_MSG(st.loops_as_c == c, "%s (as C: %d): %lld loops as C, want %lld", name, as_c,
                      (long long)st.loops_as_c, (long long)c);
            if (as_c && want.arena_slots)
                CHECK_MSG(st.loop_arena_slots > 0, "%s: no buffer at a fixed arena offset", name);
            if (as_c && want.const_slots)
                CHECK_MSG(st.loop_const_slots > 0, "%s: no constant in the generated code", name);
            if (!as_c)
                CHECK_MSG(st.loop_arena_slots == 0 && st.loop_const_slots == 0,
                          "%s: slots counted without generated code", name);
        }
        for (int steps = 0; steps < 2 && compiled; steps++) {
            if (steps)
                setenv("CXLA_LOOP_STEPS", "1", 1);
            else
                unsetenv("CXLA_LOOP_STEPS");
            cxla_literal *got = run_cpu(compiled, args, n);
            CHECK_MSG(got && cxla_literal_equal(want_lit, got),
                      "%s (as C: %d, step by step: %d): cpu and interpreter differ", name, as_c,
                      steps);
            cxla_literal_free(got);
        }
        unsetenv("CXLA_LOOP_STEPS");
        if (compiled) cpu_backend.destroy(compiled);
    }
    unsetenv("CXLA_LOOP_NO_CC");
    cxla_literal_free(want_lit);
    for (int64_t p = 0; p < n && p < 4; p++) cxla_literal_free(args[p]);
    cxla_module_destroy(m);
}

/* Three state arrays rotate (a <- b, b <- a: a swap through temporaries), c is updated
 * in place by a dynamic-update-slice and read again after it in the same iteration. */
static void test_swap_and_read_after_update(void) {
    static const char *text =
        "HloModule swap_loop\n"
        "cond {\n"
        "  p = (s32[], f32[4], f32[4], f32[4]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  n = s32[] constant(7)\n"
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
        "  s = f32[4] add(u, a)\n"
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
        "  ROOT w = (s32[], f32[4], f32[4], f32[4]) while(t0), condition=cond, body=body\n"
        "}\n";
    static const char *const inputs[] = {"{1, 2, 3, 4}", "{5, 6, 7, 8}"};
    check_loop("swap_loop", text, inputs, (want_stats){1, 1, false, false});
}

/* The condition is false at once: the state is the initial value, untouched. */
static void test_zero_trip(void) {
    static const char *text = "HloModule zero_trip\n"
                              "cond {\n"
                              "  p = (s32[], f32[3]) parameter(0)\n"
                              "  i = s32[] get-tuple-element(p), index=0\n"
                              "  n = s32[] constant(0)\n"
                              "  ROOT lt = pred[] compare(i, n), direction=LT\n"
                              "}\n"
                              "body {\n"
                              "  p = (s32[], f32[3]) parameter(0)\n"
                              "  i = s32[] get-tuple-element(p), index=0\n"
                              "  x = f32[3] get-tuple-element(p), index=1\n"
                              "  y = f32[3] multiply(x, x)\n"
                              "  one = s32[] constant(1)\n"
                              "  next = s32[] add(i, one)\n"
                              "  ROOT t = (s32[], f32[3]) tuple(next, y)\n"
                              "}\n"
                              "ENTRY main {\n"
                              "  x = f32[3] parameter(0)\n"
                              "  zero = s32[] constant(0)\n"
                              "  t0 = (s32[], f32[3]) tuple(zero, x)\n"
                              "  ROOT w = (s32[], f32[3]) while(t0), condition=cond, body=body\n"
                              "}\n";
    static const char *const inputs[] = {"{1.5, -2, 3}"};
    check_loop("zero_trip", text, inputs, (want_stats){1, 1, false, false});
}

/* A body of one kernel over a scalar state, the condition one kernel too (Collatz steps
 * of 27: 111 iterations). */
static void test_one_kernel_body(void) {
    static const char *text = "HloModule one_kernel\n"
                              "cond {\n"
                              "  p = s32[] parameter(0)\n"
                              "  one = s32[] constant(1)\n"
                              "  ROOT ne = pred[] compare(p, one), direction=NE\n"
                              "}\n"
                              "body {\n"
                              "  p = s32[] parameter(0)\n"
                              "  two = s32[] constant(2)\n"
                              "  r = s32[] remainder(p, two)\n"
                              "  zero = s32[] constant(0)\n"
                              "  even = pred[] compare(r, zero), direction=EQ\n"
                              "  h = s32[] divide(p, two)\n"
                              "  three = s32[] constant(3)\n"
                              "  t = s32[] multiply(p, three)\n"
                              "  one = s32[] constant(1)\n"
                              "  t1 = s32[] add(t, one)\n"
                              "  ROOT n = s32[] select(even, h, t1)\n"
                              "}\n"
                              "ENTRY main {\n"
                              "  x = s32[] parameter(0)\n"
                              "  ROOT w = s32[] while(x), condition=cond, body=body\n"
                              "}\n";
    static const char *const inputs[] = {"27"};
    check_loop("one_kernel", text, inputs, (want_stats){1, 1, false, false});
}

/* An outer loop whose body runs an inner loop (over the outer's counter) and a call:
 * both loops in one program. */
static void test_nested_loops(void) {
    static const char *text = "HloModule nested_loops\n"
                              "icond {\n"
                              "  p = (s32[], f32[2]) parameter(0)\n"
                              "  j = s32[] get-tuple-element(p), index=0\n"
                              "  n = s32[] constant(3)\n"
                              "  ROOT lt = pred[] compare(j, n), direction=LT\n"
                              "}\n"
                              "ibody {\n"
                              "  p = (s32[], f32[2]) parameter(0)\n"
                              "  j = s32[] get-tuple-element(p), index=0\n"
                              "  x = f32[2] get-tuple-element(p), index=1\n"
                              "  h = f32[] constant(0.5)\n"
                              "  hb = f32[2] broadcast(h), dimensions={}\n"
                              "  y = f32[2] add(x, hb)\n"
                              "  one = s32[] constant(1)\n"
                              "  nj = s32[] add(j, one)\n"
                              "  ROOT t = (s32[], f32[2]) tuple(nj, y)\n"
                              "}\n"
                              "twice {\n"
                              "  x = f32[2] parameter(0)\n"
                              "  ROOT d = f32[2] add(x, x)\n"
                              "}\n"
                              "ocond {\n"
                              "  p = (s32[], f32[2]) parameter(0)\n"
                              "  i = s32[] get-tuple-element(p), index=0\n"
                              "  n = s32[] constant(4)\n"
                              "  ROOT lt = pred[] compare(i, n), direction=LT\n"
                              "}\n"
                              "obody {\n"
                              "  p = (s32[], f32[2]) parameter(0)\n"
                              "  i = s32[] get-tuple-element(p), index=0\n"
                              "  x = f32[2] get-tuple-element(p), index=1\n"
                              "  zero = s32[] constant(0)\n"
                              "  t0 = (s32[], f32[2]) tuple(zero, x)\n"
                              "  w = (s32[], f32[2]) while(t0), condition=icond, body=ibody\n"
                              "  y = f32[2] get-tuple-element(w), index=1\n"
                              "  z = f32[2] call(y), to_apply=twice\n"
                              "  one = s32[] constant(1)\n"
                              "  ni = s32[] add(i, one)\n"
                              "  ROOT t = (s32[], f32[2]) tuple(ni, z)\n"
                              "}\n"
                              "ENTRY main {\n"
                              "  x = f32[2] parameter(0)\n"
                              "  zero = s32[] constant(0)\n"
                              "  t0 = (s32[], f32[2]) tuple(zero, x)\n"
                              "  ROOT w = (s32[], f32[2]) while(t0), condition=ocond, body=obody\n"
                              "}\n";
    static const char *const inputs[] = {"{1, -3}"};
    check_loop("nested_loops", text, inputs, (want_stats){2, 1, false, false});
}

/* The outer loop's body draws random numbers (a service step): it keeps its steps; its
 * inner loop of kernels is fused alone. */
static void test_fallback_outer(void) {
    static const char *text = "HloModule fallback\n"
                              "icond {\n"
                              "  p = (s32[], f32[4]) parameter(0)\n"
                              "  j = s32[] get-tuple-element(p), index=0\n"
                              "  n = s32[] constant(5)\n"
                              "  ROOT lt = pred[] compare(j, n), direction=LT\n"
                              "}\n"
                              "ibody {\n"
                              "  p = (s32[], f32[4]) parameter(0)\n"
                              "  j = s32[] get-tuple-element(p), index=0\n"
                              "  x = f32[4] get-tuple-element(p), index=1\n"
                              "  y = f32[4] multiply(x, x)\n"
                              "  one = s32[] constant(1)\n"
                              "  nj = s32[] add(j, one)\n"
                              "  ROOT t = (s32[], f32[4]) tuple(nj, y)\n"
                              "}\n"
                              "ocond {\n"
                              "  p = (s32[], f32[4]) parameter(0)\n"
                              "  i = s32[] get-tuple-element(p), index=0\n"
                              "  n = s32[] constant(3)\n"
                              "  ROOT lt = pred[] compare(i, n), direction=LT\n"
                              "}\n"
                              "obody {\n"
                              "  p = (s32[], f32[4]) parameter(0)\n"
                              "  i = s32[] get-tuple-element(p), index=0\n"
                              "  x = f32[4] get-tuple-element(p), index=1\n"
                              "  lo = f32[] constant(0.5)\n"
                              "  hi = f32[] constant(1)\n"
                              "  u = f32[4] rng(lo, hi), distribution=rng_uniform\n"
                              "  zero = s32[] constant(0)\n"
                              "  t0 = (s32[], f32[4]) tuple(zero, u)\n"
                              "  w = (s32[], f32[4]) while(t0), condition=icond, body=ibody\n"
                              "  y = f32[4] get-tuple-element(w), index=1\n"
                              "  z = f32[4] add(x, y)\n"
                              "  one = s32[] constant(1)\n"
                              "  ni = s32[] add(i, one)\n"
                              "  ROOT t = (s32[], f32[4]) tuple(ni, z)\n"
                              "}\n"
                              "ENTRY main {\n"
                              "  x = f32[4] parameter(0)\n"
                              "  zero = s32[] constant(0)\n"
                              "  t0 = (s32[], f32[4]) tuple(zero, x)\n"
                              "  ROOT w = (s32[], f32[4]) while(t0), condition=ocond, body=obody\n"
                              "}\n";
    static const char *const inputs[] = {"{0, 1, 2, 3}"};
    check_loop("fallback", text, inputs, (want_stats){1, 1, false, false});
}

/* A state of 512 KiB: the add is big enough for the thread pool, so the program runs as
 * ops (not as C) and the pool splits that kernel; the row update stays in place. */
static void test_pooled_kernel(void) {
    static const char *text =
        "HloModule pooled\n"
        "cond {\n"
        "  p = (s32[], f32[512,256]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  n = s32[] constant(6)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "body {\n"
        "  p = (s32[], f32[512,256]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  x = f32[512,256] get-tuple-element(p), index=1\n"
        "  y = f32[512,256] add(x, x)\n"
        "  f = f32[] convert(i)\n"
        "  row = f32[1,256] broadcast(f), dimensions={}\n"
        "  zero = s32[] constant(0)\n"
        "  u = f32[512,256] dynamic-update-slice(y, row, i, zero)\n"
        "  one = s32[] constant(1)\n"
        "  ni = s32[] add(i, one)\n"
        "  ROOT t = (s32[], f32[512,256]) tuple(ni, u)\n"
        "}\n"
        "ENTRY main {\n"
        "  s = f32[] parameter(0)\n"
        "  init = f32[512,256] broadcast(s), dimensions={}\n"
        "  zero = s32[] constant(0)\n"
        "  t0 = (s32[], f32[512,256]) tuple(zero, init)\n"
        "  ROOT w = (s32[], f32[512,256]) while(t0), condition=cond, body=body\n"
        "}\n";
    static const char *const inputs[] = {"0.25"};
    check_loop("pooled", text, inputs, (want_stats){1, 0, false, false});
}

/* State rewritten by a kernel and copied back every iteration, big enough (1.2 MB, not a
 * whole number of the copy's 64 KiB blocks) for the copy to be split over the pool
 * (cpu_loop.c, copy_state), beside a small state array copied whole. */
static void test_pooled_copy(void) {
    static const char *text =
        "HloModule pooled_copy\n"
        "cond {\n"
        "  p = (s32[], f32[300001], f32[7]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  n = s32[] constant(5)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "body {\n"
        "  p = (s32[], f32[300001], f32[7]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  x = f32[300001] get-tuple-element(p), index=1\n"
        "  v = f32[7] get-tuple-element(p), index=2\n"
        "  f = f32[] convert(i)\n"
        "  fb = f32[300001] broadcast(f), dimensions={}\n"
        "  io = f32[300001] iota(), iota_dimension=0\n"
        "  h = f32[] constant(0.5)\n"
        "  hb = f32[300001] broadcast(h), dimensions={}\n"
        "  xh = f32[300001] multiply(x, hb)\n"
        "  xi = f32[300001] add(xh, io)\n"
        "  y = f32[300001] add(xi, fb)\n"
        "  s = f32[7] slice(y), slice={[299994:300001]}\n"
        "  w = f32[7] add(v, s)\n"
        "  one = s32[] constant(1)\n"
        "  ni = s32[] add(i, one)\n"
        "  ROOT t = (s32[], f32[300001], f32[7]) tuple(ni, y, w)\n"
        "}\n"
        "ENTRY main {\n"
        "  s = f32[] parameter(0)\n"
        "  init = f32[300001] broadcast(s), dimensions={}\n"
        "  v0 = f32[7] broadcast(s), dimensions={}\n"
        "  zero = s32[] constant(0)\n"
        "  t0 = (s32[], f32[300001], f32[7]) tuple(zero, init, v0)\n"
        "  ROOT w = (s32[], f32[300001], f32[7]) while(t0), condition=cond, body=body\n"
        "}\n";
    static const char *const inputs[] = {"0.25"};
    check_loop("pooled_copy", text, inputs, (want_stats){1, 0, false, false});
}

/* Updates of 2x3 blocks into a 5x6 state at starts of two index types (s8 starts, one
 * running past the edge; u64 ones, one beyond INT64_MAX): clamped as the
 * interpreter clamps them, row by row, in the generated code. */
static void test_dus_rows(void) {
    static const char *text =
        "HloModule dus_rows\n"
        "cond {\n"
        "  p = (s32[], f32[5,6], s8[], u64[]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  n = s32[] constant(6)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "body {\n"
        "  p = (s32[], f32[5,6], s8[], u64[]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  x = f32[5,6] get-tuple-element(p), index=1\n"
        "  j = s8[] get-tuple-element(p), index=2\n"
        "  h = u64[] get-tuple-element(p), index=3\n"
        "  f = f32[] convert(i)\n"
        "  blk = f32[2,3] broadcast(f), dimensions={}\n"
        "  ci = s8[] convert(i)\n"
        "  u = f32[5,6] dynamic-update-slice(x, blk, ci, j)\n"
        "  g = f32[] constant(-1)\n"
        "  one_blk = f32[1,2] broadcast(g), dimensions={}\n"
        "  z = u64[] constant(0)\n"
        "  v = f32[5,6] dynamic-update-slice(u, one_blk, z, h)\n"
        "  one = s32[] constant(1)\n"
        "  ni = s32[] add(i, one)\n"
        "  three = s8[] constant(3)\n"
        "  nj = s8[] add(j, three)\n"
        "  ROOT t = (s32[], f32[5,6], s8[], u64[]) tuple(ni, v, nj, h)\n"
        "}\n"
        "ENTRY main {\n"
        "  x = f32[5,6] parameter(0)\n"
        "  zero = s32[] constant(0)\n"
        "  j0 = s8[] constant(-2)\n"
        "  h0 = u64[] constant(18446744073709551000)\n"
        "  t0 = (s32[], f32[5,6], s8[], u64[]) tuple(zero, x, j0, h0)\n"
        "  ROOT w = (s32[], f32[5,6], s8[], u64[]) while(t0), condition=cond, "
        "body=body\n"
        "}\n";
    static const char *const inputs[] = {
        "{{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}, {13, 14, 15, 16, 17, 18}, "
        "{19, 20, 21, 22, 23, 24}, {25, 26, 27, 28, 29, 30}}"};
    check_loop("dus_rows", text, inputs, (want_stats){1, 1, false, false});
}

/* Conditionals in the body: one on a pred, one on an s32 index that runs out of range
 * (the last branch), inside a called computation: fused with the loop. */
static void test_conditionals(void) {
    static const char *text =
        "HloModule conds\n"
        "neg {\n"
        "  x = f32[3] parameter(0)\n"
        "  ROOT n = f32[3] negate(x)\n"
        "}\n"
        "dbl {\n"
        "  x = f32[3] parameter(0)\n"
        "  ROOT d = f32[3] add(x, x)\n"
        "}\n"
        "half {\n"
        "  x = f32[3] parameter(0)\n"
        "  h = f32[] constant(0.5)\n"
        "  hb = f32[3] broadcast(h), dimensions={}\n"
        "  ROOT m = f32[3] multiply(x, hb)\n"
        "}\n"
        "step {\n"
        "  x = f32[3] parameter(0)\n"
        "  i = s32[] parameter(1)\n"
        "  two = s32[] constant(2)\n"
        "  r = s32[] remainder(i, two)\n"
        "  zero = s32[] constant(0)\n"
        "  even = pred[] compare(r, zero), direction=EQ\n"
        "  a = f32[3] conditional(even, x, x), true_computation=neg, "
        "false_computation=dbl\n"
        "  ROOT c = f32[3] conditional(i, a, a, a), branch_computations={neg, "
        "dbl, half}\n"
        "}\n"
        "cond {\n"
        "  p = (s32[], f32[3]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  n = s32[] constant(6)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "body {\n"
        "  p = (s32[], f32[3]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  x = f32[3] get-tuple-element(p), index=1\n"
        "  s = f32[3] call(x, i), to_apply=step\n"
        "  one = s32[] constant(1)\n"
        "  ni = s32[] add(i, one)\n"
        "  ROOT t = (s32[], f32[3]) tuple(ni, s)\n"
        "}\n"
        "ENTRY main {\n"
        "  x = f32[3] parameter(0)\n"
        "  m = s32[] constant(-1)\n"
        "  t0 = (s32[], f32[3]) tuple(m, x)\n"
        "  ROOT w = (s32[], f32[3]) while(t0), condition=cond, body=body\n"
        "}\n";
    static const char *const inputs[] = {"{1, -2.5, 3}"};
    check_loop("conds", text, inputs, (want_stats){1, 1, false, false});
}

/* The generated function's buffers at fixed offsets of the arena, pieces of a concatenate
 * computed in place among them, and constants written into its code: floats whose bits
 * matter (NaN, -0, infinity, a subnormal), an s64 and u8, one read by a kernel, one copied
 * into the state; the result leaves stay behind the table's pointers. */
static void test_fixed_slots(void) {
    static const char *text =
        "HloModule fixed_slots\n"
        "cond {\n"
        "  p = (s64[], f32[4], u8[3], f32[4]) parameter(0)\n"
        "  i = s64[] get-tuple-element(p), index=0\n"
        "  n = s64[] constant(5)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "body {\n"
        "  p = (s64[], f32[4], u8[3], f32[4]) parameter(0)\n"
        "  i = s64[] get-tuple-element(p), index=0\n"
        "  x = f32[4] get-tuple-element(p), index=1\n"
        "  b = u8[3] get-tuple-element(p), index=2\n"
        "  c = f32[4] constant({nan, -0, inf, 1e-45})\n"
        "  y = f32[4] multiply(x, c)\n"
        "  lo = f32[2] slice(y), slice={[0:2]}\n"
        "  hi = f32[2] slice(x), slice={[2:4]}\n"
        "  l2 = f32[2] negate(lo)\n"
        "  h2 = f32[2] add(hi, hi)\n"
        "  z = f32[4] concatenate(l2, h2), dimensions={0}\n"
        "  k = u8[3] constant({250, 7, 128})\n"
        "  nb = u8[3] add(b, k)\n"
        "  big = s64[] constant(4611686018427387904)\n"
        "  one = s64[] constant(1)\n"
        "  bz = s64[] and(i, big)\n"
        "  n1 = s64[] add(i, one)\n"
        "  ni = s64[] add(n1, bz)\n"
        "  ROOT t = (s64[], f32[4], u8[3], f32[4]) tuple(ni, z, nb, c)\n"
        "}\n"
        "ENTRY main {\n"
        "  x = f32[4] parameter(0)\n"
        "  b = u8[3] parameter(1)\n"
        "  zero = s64[] constant(0)\n"
        "  t0 = (s64[], f32[4], u8[3], f32[4]) tuple(zero, x, b, x)\n"
        "  w = (s64[], f32[4], u8[3], f32[4]) while(t0), condition=cond, body=body\n"
        "  r = f32[4] get-tuple-element(w), index=1\n"
        "  q = u8[3] get-tuple-element(w), index=2\n"
        "  e = f32[4] get-tuple-element(w), index=3\n"
        "  ROOT o = (f32[4], u8[3], f32[4]) tuple(r, q, e)\n"
        "}\n";
    static const char *const inputs[] = {"{1.5, -2, 0.25, 3}", "{1, 2, 3}"};
    check_loop("fixed_slots", text, inputs, (want_stats){1, 1, true, true});
}

/* A module whose result aliases its argument (input_output_alias) has a second plan for
 * donated arguments; both plans' loops are compiled in one unit (cxla_loop_0_0 and
 * cxla_loop_1_0, their kernels once), and the donated run updates the argument's memory
 * with the same values as the interpreter. */
static void test_donated_plan(void) {
    static const char *text =
        "HloModule donated_loop, input_output_alias={ {1}: (0, {}, may-alias) }\n"
        "cond {\n"
        "  p = (s32[], f32[4]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  n = s32[] constant(4)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "body {\n"
        "  p = (s32[], f32[4]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  x = f32[4] get-tuple-element(p), index=1\n"
        "  y = f32[4] multiply(x, x)\n"
        "  u = f32[1] constant({-1.5})\n"
        "  z = f32[4] dynamic-update-slice(y, u, i)\n"
        "  one = s32[] constant(1)\n"
        "  ni = s32[] add(i, one)\n"
        "  ROOT t = (s32[], f32[4]) tuple(ni, z)\n"
        "}\n"
        "ENTRY main {\n"
        "  x = f32[4] parameter(0)\n"
        "  zero = s32[] constant(0)\n"
        "  t0 = (s32[], f32[4]) tuple(zero, x)\n"
        "  ROOT w = (s32[], f32[4]) while(t0), condition=cond, body=body\n"
        "}\n";
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "donated_loop", &m);
    if (!s) s = cxla_verify_module(m);
    CHECK_MSG(!s, "donated_loop: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    if (!m) return;
    cxla_literal *arg = lit("{0.5, -2, 3, 1.25}", &m->entry->params[0]->shape);
    cxla_literal *want = NULL;
    s = interp_run_module(m, NULL, (const cxla_literal *const *)&arg, 1, &want);
    CHECK_MSG(!s, "interpreter: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    void *compiled = NULL;
    exec_compile_options co = {0};
    s = cpu_backend.compile(m, &co, &compiled);
    CHECK_MSG(!s, "compile: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    const cpu_plan *plans[2] = {compiled ? cpu_compiled_plan(compiled) : NULL,
                                compiled ? cpu_compiled_donated_plan(compiled) : NULL};
    for (int k = 0; k < 2; k++) {
        CHECK_MSG(plans[k] != NULL, "plan %d missing", k);
        if (!plans[k]) continue;
        cpu_plan_stats st;
        cpu_plan_get_stats(plans[k], &st);
        CHECK_MSG(st.fused_loops == 1 && st.loops_as_c == 1,
                  "plan %d: %lld fused loops, %lld as C, want 1 and 1", k,
                  (long long)st.fused_loops, (long long)st.loops_as_c);
    }
    if (compiled && want) {
        bool donated[1] = {true};
        int64_t in_place[2] = {-1, -1};
        exec_run_options ro = {0};
        ro.donated = donated;
        ro.in_place_arg = in_place;
        cxla_literal *got = NULL;
        s = cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)&arg, 1, &got);
        CHECK_MSG(!s, "donated run: %s", s ? cxla_status_message(s) : "");
        cxla_status_free(s);
        CHECK_MSG(in_place[1] == 0, "the state was not computed in the donated argument");
        if (got) {
            CHECK_MSG(cxla_literal_equal(want->elements[0], got->elements[0]),
                      "donated run: the counter differs");
            const cxla_literal *x = in_place[1] == 0 ? arg : got->elements[1];
            CHECK_MSG(cxla_literal_equal(want->elements[1], x),
                      "donated run: the state differs from the interpreter's");
        }
        cxla_literal_free(got);
    }
    if (compiled) cpu_backend.destroy(compiled);
    cxla_literal_free(want);
    cxla_literal_free(arg);
    cxla_module_destroy(m);
}

/* Counts, over the C files in |dir|, the kernels' head comments ("/ * ---- NAME: HLO * /"
 * with NAME a kernel's: k<ID>_..., or cxla_lk<ID> in the loops' unit) by their HLO text:
 * *out_dups gets how many are in more than one place, *out_loop and *out_own how many are
 * the loops' kernels and kernels of their own. */
static void count_kernels(const char *dir, int64_t *out_dups, int64_t *out_loop, int64_t *out_own) {
    *out_dups = *out_loop = *out_own = 0;
    enum { MAX_SEEN = 256 };
    char *seen[MAX_SEEN];
    int64_t nseen = 0;
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n < 3 || strcmp(de->d_name + n - 2, ".c") != 0) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        char *text = NULL;
        size_t len = 0;
        CHECK_OK(cxla_read_file(path, &text, &len));
        for (char *l = text; l && *l;) {
            char *end = strchr(l, '\n');
            if (end) *end = '\0';
            const char *name = strncmp(l, "/* ---- ", 8) == 0 ? l + 8 : NULL;
            const char *colon = name ? strstr(name, ": ") : NULL;
            bool loop = name && strncmp(name, "cxla_lk", 7) == 0;
            bool own = name && name[0] == 'k' && name[1] >= '0' && name[1] <= '9';
            if (colon && (loop || own)) {
                *out_loop += loop;
                *out_own += own;
                bool dup = false;
                for (int64_t i = 0; i < nseen && !dup; i++) dup = strcmp(seen[i], colon) == 0;
                if (dup) (*out_dups)++;
                if (!dup && nseen < MAX_SEEN) seen[nseen++] = strdup(colon);
            }
            l = end ? end + 1 : NULL;
        }
        free(text);
    }
    if (d) closedir(d);
    for (int64_t i = 0; i < nseen; i++) free(seen[i]);
}

/* A kernel that only the loop calls is compiled once, in the loop's translation unit (with
 * its entry point there for the steps run one by one), not also in a unit of its own; the
 * entry's kernels stay in theirs. A CXLA_CC wrapper keeps a copy of every C file it
 * compiles. The results, fused and step by step, are check_loop's. */
static void test_kernels_compiled_once(void) {
    static const char *text = "HloModule once\n"
                              "cond {\n"
                              "  p = (s32[], f32[4]) parameter(0)\n"
                              "  i = s32[] get-tuple-element(p), index=0\n"
                              "  n = s32[] constant(5)\n"
                              "  ROOT lt = pred[] compare(i, n), direction=LT\n"
                              "}\n"
                              "body {\n"
                              "  p = (s32[], f32[4]) parameter(0)\n"
                              "  i = s32[] get-tuple-element(p), index=0\n"
                              "  x = f32[4] get-tuple-element(p), index=1\n"
                              "  c = f32[] constant(1.5)\n"
                              "  b = f32[4] broadcast(c), dimensions={}\n"
                              "  y = f32[4] multiply(x, b)\n"
                              "  z = f32[4] add(y, x)\n"
                              "  one = s32[] constant(1)\n"
                              "  ni = s32[] add(i, one)\n"
                              "  ROOT t = (s32[], f32[4]) tuple(ni, z)\n"
                              "}\n"
                              "ENTRY main {\n"
                              "  x = f32[4] parameter(0)\n"
                              "  e = f32[4] exponential(x)\n"
                              "  zero = s32[] constant(0)\n"
                              "  t0 = (s32[], f32[4]) tuple(zero, e)\n"
                              "  w = (s32[], f32[4]) while(t0), condition=cond, body=body\n"
                              "  r = f32[4] get-tuple-element(w), index=1\n"
                              "  ROOT o = f32[4] negate(r)\n"
                              "}\n";
    static const char *const inputs[] = {"{0.5, -1, 2, 0}"};
    check_loop("once", text, inputs, (want_stats){1, 1, false, false});

    char dir[] = "/tmp/cxla-test-once-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char script[600], cache[600], cmd[1400];
    snprintf(script, sizeof script, "%s/cc.sh", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    const char *cc = getenv("CXLA_CC");
    char *saved_cc = cc ? strdup(cc) : NULL;
    const char *saved_cache = getenv("CXLA_CACHE_DIR");
    char *saved_cache_copy = saved_cache ? strdup(saved_cache) : NULL;
    FILE *f = fopen(script, "w");
    CHECK(f != NULL);
    if (f) {
        fprintf(f,
                "#!/bin/sh\n"
                "for a in \"$@\"; do\n"
                "  case \"$a\" in *.c) cp \"$a\" \"%s/src-$$-${a##*/}\" ;; esac\n"
                "done\n"
                "exec %s \"$@\"\n",
                dir, saved_cc && *saved_cc ? saved_cc : "cc");
        fclose(f);
    }
    snprintf(cmd, sizeof cmd, "chmod +x %s", script);
    CHECK(system(cmd) == 0);
    setenv("CXLA_CC", script, 1);
    setenv("CXLA_CACHE_DIR", cache, 1);
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "once", &m));
    void *compiled = NULL;
    exec_compile_options co = {0};
    if (m) CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
    int64_t dups = 0, loop = 0, own = 0;
    count_kernels(dir, &dups, &loop, &own);
    CHECK_MSG(dups == 0, "%lld kernels compiled twice", (long long)dups);
    CHECK_MSG(loop >= 1, "no kernel in the loops' unit");
    CHECK_MSG(own >= 2, "%lld kernels in units of their own, want the entry's 2", (long long)own);
    if (saved_cc)
        setenv("CXLA_CC", saved_cc, 1);
    else
        unsetenv("CXLA_CC");
    if (saved_cache_copy)
        setenv("CXLA_CACHE_DIR", saved_cache_copy, 1);
    else
        unsetenv("CXLA_CACHE_DIR");
    free(saved_cc);
    free(saved_cache_copy);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

TEST_MAIN(TEST(test_pooled_copy), TEST(test_kernels_compiled_once), TEST(test_fixed_slots),
          TEST(test_donated_plan), TEST(test_conditionals), TEST(test_dus_rows),
          TEST(test_swap_and_read_after_update), TEST(test_zero_trip), TEST(test_one_kernel_body),
          TEST(test_nested_loops), TEST(test_fallback_outer), TEST(test_pooled_kernel))
