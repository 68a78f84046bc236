/* While loops whose body rewrites a large state leaf with a kernel that reads it at the
 * index it writes (cpu_steps_control.c's alias_step, cpu_emit_kernel_alias): the new
 * leaf is written where the state lies, with no copy of it a step. Each case runs on the
 * interpreter and on the cpu backend (loops as generated C, as ops, and step by step),
 * bit for bit, and checks the plan: how many leaves are rewritten in place
 * (loop_aliased) and how many bytes its copy steps move (copy_bytes), so that a copy
 * that comes back fails. Bodies that must not be done in place: one that reads the old
 * state after the new leaf is computed, kernels that read the state at other indices
 * (reverse, a reduce of it broadcast back), the same leaf read through two operands. Also
 * nested loops, a pooled kernel, an integer state that the condition reads, a loop whose
 * initial state is the entry's parameter (the caller's buffer must not change) and one
 * whose state is the entry's result. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/emit.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

static cxla_literal *lit(const char *text, const cxla_shape *shape) {
    cxla_literal *l = NULL;
    cxla_status s = cxla_literal_parse(text, strlen(text), shape, &l);
    if (s) {
        test_fail(__FILE__, __LINE__, "literal: %s", cxla_status_message(s));
        cxla_status_free(s);
    }
    return l;
}

/* Compiles |text| (loops as C, then as ops), checks that the plan rewrites |aliased| state
 * leaves in place and that its copy steps move at most |max_copy| bytes a run, runs it
 * fused and step by step against the interpreter (bit for bit) and checks that the
 * arguments are as they were. */
static void check(const char *name, const char *text, const char *const *inputs, int64_t aliased,
                  size_t max_copy, int64_t swapped) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), name, &m);
    if (!s) s = cxla_verify_module(m);
    CHECK_MSG(!s, "%s: %s", name, s ? cxla_status_message(s) : "");
    if (s) {
        cxla_status_free(s);
        cxla_module_destroy(m);
        return;
    }
    enum { MAX_ARGS = 4 };
    cxla_literal *args[MAX_ARGS] = {0}, *kept[MAX_ARGS] = {0};
    int64_t n = m->entry->param_count;
    for (int64_t p = 0; p < n && p < MAX_ARGS; p++) {
        args[p] = lit(inputs[p], &m->entry->params[p]->shape);
        kept[p] = lit(inputs[p], &m->entry->params[p]->shape);
    }
    cxla_literal *want = NULL;
    s = interp_run_module(m, NULL, (const cxla_literal *const *)args, n, &want);
    CHECK_MSG(!s, "%s: interpreter: %s", name, s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    for (int as_c = 1; as_c >= 0 && want; as_c--) {
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
            CHECK_MSG(st.loop_aliased == aliased,
                      "%s: %lld state leaves rewritten in place, want %lld", name,
                      (long long)st.loop_aliased, (long long)aliased);
            CHECK_MSG(st.copy_bytes <= max_copy, "%s: copy steps move %zu bytes a run, want <= %zu",
                      name, st.copy_bytes, max_copy);
            CHECK_MSG(st.loop_swapped == swapped, "%s: %lld new state leaves swapped, want %lld",
                      name, (long long)st.loop_swapped, (long long)swapped);
        }
        for (int steps = 0; steps < 2 && compiled; steps++) {
            if (steps)
                setenv("CXLA_LOOP_STEPS", "1", 1);
            else
                unsetenv("CXLA_LOOP_STEPS");
            cxla_literal *got = NULL;
            exec_run_options ro = {0};
            s = cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, n, &got);
            CHECK_MSG(!s, "%s: run: %s", name, s ? cxla_status_message(s) : "");
            cxla_status_free(s);
            CHECK_MSG(got && cxla_literal_equal(want, got),
                      "%s (as C: %d, step by step: %d): cpu and interpreter differ", name, as_c,
                      steps);
            cxla_literal_free(got);
            for (int64_t p = 0; p < n && p < MAX_ARGS; p++)
                CHECK_MSG(cxla_literal_equal(args[p], kept[p]),
                          "%s (as C: %d, step by step: %d): argument %lld changed", name, as_c,
                          steps, (long long)p);
        }
        unsetenv("CXLA_LOOP_STEPS");
        if (compiled) cpu_backend.destroy(compiled);
    }
    unsetenv("CXLA_LOOP_NO_CC");
    cxla_literal_free(want);
    for (int64_t p = 0; p < n && p < MAX_ARGS; p++) {
        cxla_literal_free(args[p]);
        cxla_literal_free(kept[p]);
    }
    cxla_module_destroy(m);
}

#define COND(STATE, N)                                                                             \
    "cond {\n"                                                                                     \
    "  p = " STATE " parameter(0)\n"                                                               \
    "  i = s32[] get-tuple-element(p), index=0\n"                                                  \
    "  n = s32[] constant(" N ")\n"                                                                \
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"                                             \
    "}\n"

/* x = x * 0.5 + i over f32[1024], the loop's state the entry's result: the fusion writes
 * x where it lies; only the counter (4 bytes) is copied. */
static void test_elementwise(void) {
    static const char *text = "HloModule ew\n" COND(
        "(s32[], f32[1024])",
        "9") "body {\n"
             "  p = (s32[], f32[1024]) parameter(0)\n"
             "  i = s32[] get-tuple-element(p), index=0\n"
             "  x = f32[1024] get-tuple-element(p), index=1\n"
             "  h = f32[] constant(0.5)\n"
             "  hb = f32[1024] broadcast(h), dimensions={}\n"
             "  xh = f32[1024] multiply(x, hb)\n"
             "  f = f32[] convert(i)\n"
             "  fb = f32[1024] broadcast(f), dimensions={}\n"
             "  y = f32[1024] add(xh, fb)\n"
             "  one = s32[] constant(1)\n"
             "  ni = s32[] add(i, one)\n"
             "  ROOT t = (s32[], f32[1024]) tuple(ni, y)\n"
             "}\n"
             "ENTRY main {\n"
             "  s = f32[] parameter(0)\n"
             "  io = f32[1024] iota(), iota_dimension=0\n"
             "  sb = f32[1024] broadcast(s), dimensions={}\n"
             "  init = f32[1024] multiply(io, sb)\n"
             "  zero = s32[] constant(0)\n"
             "  t0 = (s32[], f32[1024]) tuple(zero, init)\n"
             "  ROOT w = (s32[], f32[1024]) while(t0), condition=cond, body=body\n"
             "}\n";
    static const char *const inputs[] = {"0.37"};
    check("ew", text, inputs, 1, 64, 0);
}

/* The initial state is the entry's parameter: copied once into the state's buffer (the
 * caller's array stays as it was), then rewritten in place every step; the entry also
 * returns the parameter itself. */
static void test_parameter_state(void) {
    static const char *text = "HloModule param_state\n" COND(
        "(s32[], f32[2,512])",
        "6") "body {\n"
             "  p = (s32[], f32[2,512]) parameter(0)\n"
             "  i = s32[] get-tuple-element(p), index=0\n"
             "  x = f32[2,512] get-tuple-element(p), index=1\n"
             "  y = f32[2,512] multiply(x, x)\n"
             "  c = f32[] constant(0.25)\n"
             "  cb = f32[2,512] broadcast(c), dimensions={}\n"
             "  z = f32[2,512] subtract(y, cb)\n"
             "  one = s32[] constant(1)\n"
             "  ni = s32[] add(i, one)\n"
             "  ROOT t = (s32[], f32[2,512]) tuple(ni, z)\n"
             "}\n"
             "ENTRY main {\n"
             "  x = f32[2,512] parameter(0)\n"
             "  zero = s32[] constant(0)\n"
             "  t0 = (s32[], f32[2,512]) tuple(zero, x)\n"
             "  w = (s32[], f32[2,512]) while(t0), condition=cond, body=body\n"
             "  r = f32[2,512] get-tuple-element(w), index=1\n"
             "  ROOT o = (f32[2,512], f32[2,512]) tuple(r, x)\n"
             "}\n";
    char *in = malloc(1024 * 16 + 16);
    if (!in) return;
    size_t at = 0;
    at += (size_t)sprintf(in + at, "{");
    for (int r = 0; r < 2; r++) {
        at += (size_t)sprintf(in + at, "%s{", r ? ", " : "");
        for (int c = 0; c < 512; c++)
            at +=
                (size_t)sprintf(in + at, "%s%.4f", c ? ", " : "", (r * 512 + c) % 37 * 0.03 - 0.5);
        at += (size_t)sprintf(in + at, "}");
    }
    sprintf(in + at, "}");
    const char *inputs[] = {in};
    /* The initial copy (4096 bytes, once a run) and the counter's. */
    check("param_state", text, inputs, 1, 4096 + 64, 0);
    free(in);
}

/* The body reads the old x after the new x is computed (v = v + x comes after x2): x2
 * must not be written over x, while v2 may be written over v. A rule that let the
 * kernel computing x2 write in place would give v the new x. */
static void test_read_after_new(void) {
    static const char *text = "HloModule read_after\n" COND(
        "(s32[], f32[512], f32[512])",
        "5") "body {\n"
             "  p = (s32[], f32[512], f32[512]) parameter(0)\n"
             "  i = s32[] get-tuple-element(p), index=0\n"
             "  x = f32[512] get-tuple-element(p), index=1\n"
             "  v = f32[512] get-tuple-element(p), index=2\n"
             "  two = f32[] constant(2)\n"
             "  tb = f32[512] broadcast(two), dimensions={}\n"
             "  x2 = f32[512] multiply(x, tb)\n"
             "  b = f32[512] add(x2, x2)\n"
             "  xo = f32[512] optimization-barrier(x)\n"
             "  v2 = f32[512] add(v, xo)\n"
             "  v3 = f32[512] add(v2, b)\n"
             "  one = s32[] constant(1)\n"
             "  ni = s32[] add(i, one)\n"
             "  ROOT t = (s32[], f32[512], f32[512]) tuple(ni, x2, v3)\n"
             "}\n"
             "ENTRY main {\n"
             "  s = f32[] parameter(0)\n"
             "  io = f32[512] iota(), iota_dimension=0\n"
             "  sb = f32[512] broadcast(s), dimensions={}\n"
             "  init = f32[512] add(io, sb)\n"
             "  zero = s32[] constant(0)\n"
             "  t0 = (s32[], f32[512], f32[512]) tuple(zero, init, io)\n"
             "  ROOT w = (s32[], f32[512], f32[512]) while(t0), condition=cond, body=body\n"
             "}\n";
    static const char *const inputs[] = {"1.5"};
    /* x2 is copied (2048 bytes a step), v3 is written over v. */
    check("read_after", text, inputs, 1, 2048 + 64, 0);
}

/* Kernels that read the state at other indices than they write (a reverse, a transpose)
 * may not write over it; a kernel reading it at its own index after a reduce of it may. */
static void test_other_indices(void) {
    static const char *rev = "HloModule other_rev\n" COND(
        "(s32[], f32[1024])",
        "4") "body {\n"
             "  p = (s32[], f32[1024]) parameter(0)\n"
             "  i = s32[] get-tuple-element(p), index=0\n"
             "  x = f32[1024] get-tuple-element(p), index=1\n"
             "  r = f32[1024] reverse(x), dimensions={0}\n"
             "  h = f32[] constant(0.5)\n"
             "  hb = f32[1024] broadcast(h), dimensions={}\n"
             "  rh = f32[1024] multiply(r, hb)\n"
             "  y = f32[1024] add(rh, x)\n"
             "  one = s32[] constant(1)\n"
             "  ni = s32[] add(i, one)\n"
             "  ROOT t = (s32[], f32[1024]) tuple(ni, y)\n"
             "}\n"
             "ENTRY main {\n"
             "  s = f32[] parameter(0)\n"
             "  io = f32[1024] iota(), iota_dimension=0\n"
             "  sb = f32[1024] broadcast(s), dimensions={}\n"
             "  init = f32[1024] multiply(io, sb)\n"
             "  zero = s32[] constant(0)\n"
             "  t0 = (s32[], f32[1024]) tuple(zero, init)\n"
             "  ROOT w = (s32[], f32[1024]) while(t0), condition=cond, body=body\n"
             "}\n";
    static const char *tr = "HloModule other_tr\n" COND(
        "(s32[], f32[32,32])",
        "4") "body {\n"
             "  p = (s32[], f32[32,32]) parameter(0)\n"
             "  i = s32[] get-tuple-element(p), index=0\n"
             "  x = f32[32,32] get-tuple-element(p), index=1\n"
             "  xt = f32[32,32] transpose(x), dimensions={1,0}\n"
             "  h = f32[] constant(0.5)\n"
             "  hb = f32[32,32] broadcast(h), dimensions={}\n"
             "  th = f32[32,32] multiply(xt, hb)\n"
             "  y = f32[32,32] add(th, x)\n"
             "  one = s32[] constant(1)\n"
             "  ni = s32[] add(i, one)\n"
             "  ROOT t = (s32[], f32[32,32]) tuple(ni, y)\n"
             "}\n"
             "ENTRY main {\n"
             "  s = f32[] parameter(0)\n"
             "  io = f32[32,32] iota(), iota_dimension=1\n"
             "  sb = f32[32,32] broadcast(s), dimensions={}\n"
             "  init = f32[32,32] add(io, sb)\n"
             "  zero = s32[] constant(0)\n"
             "  t0 = (s32[], f32[32,32]) tuple(zero, init)\n"
             "  ROOT w = (s32[], f32[32,32]) while(t0), condition=cond, body=body\n"
             "}\n";
    /* The state scaled by its rows' sums: the reduce is a kernel of its own before the
     * division, which then reads x at its own index only and may write over it. */
    static const char *norm =
        "HloModule norm\n"
        "add {\n"
        "  a = f32[] parameter(0)\n"
        "  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n"
        "}\n" COND("(s32[], f32[16,64])",
                   "4") "body {\n"
                        "  p = (s32[], f32[16,64]) parameter(0)\n"
                        "  i = s32[] get-tuple-element(p), index=0\n"
                        "  x = f32[16,64] get-tuple-element(p), index=1\n"
                        "  z = f32[] constant(0)\n"
                        "  rs = f32[16] reduce(x, z), dimensions={1}, to_apply=add\n"
                        "  rb = f32[16,64] broadcast(rs), dimensions={0}\n"
                        "  y = f32[16,64] divide(x, rb)\n"
                        "  one = s32[] constant(1)\n"
                        "  ni = s32[] add(i, one)\n"
                        "  ROOT t = (s32[], f32[16,64]) tuple(ni, y)\n"
                        "}\n"
                        "ENTRY main {\n"
                        "  s = f32[] parameter(0)\n"
                        "  io = f32[16,64] iota(), iota_dimension=1\n"
                        "  sb = f32[16,64] broadcast(s), dimensions={}\n"
                        "  init = f32[16,64] add(io, sb)\n"
                        "  zero = s32[] constant(0)\n"
                        "  t0 = (s32[], f32[16,64]) tuple(zero, init)\n"
                        "  ROOT w = (s32[], f32[16,64]) while(t0), condition=cond, body=body\n"
                        "}\n";
    static const char *const inputs[] = {"0.75"};
    check("other_rev", rev, inputs, 0, 4096 + 64, 0);
    check("other_tr", tr, inputs, 0, 4096 + 64, 0);
    check("norm", norm, inputs, 1, 64, 0);
}

/* A state leaf read through two operands of one kernel (y = x * x): the kernel must not
 * get the form that reads one operand through its result (the other operand would be a
 * second pointer to the elements it writes), so x keeps its copy; and the emitter says so
 * of the instruction itself. */
static void test_two_operands(void) {
    static const char *text = "HloModule two_ops\n" COND(
        "(s32[], f32[1024])",
        "3") "body {\n"
             "  p = (s32[], f32[1024]) parameter(0)\n"
             "  i = s32[] get-tuple-element(p), index=0\n"
             "  x = f32[1024] get-tuple-element(p), index=1\n"
             "  y = f32[1024] multiply(x, x)\n"
             "  one = s32[] constant(1)\n"
             "  ni = s32[] add(i, one)\n"
             "  ROOT t = (s32[], f32[1024]) tuple(ni, y)\n"
             "}\n"
             "ENTRY main {\n"
             "  s = f32[] parameter(0)\n"
             "  io = f32[1024] iota(), iota_dimension=0\n"
             "  sb = f32[1024] broadcast(s), dimensions={}\n"
             "  init = f32[1024] multiply(io, sb)\n"
             "  zero = s32[] constant(0)\n"
             "  t0 = (s32[], f32[1024]) tuple(zero, init)\n"
             "  ROOT w = (s32[], f32[1024]) while(t0), condition=cond, body=body\n"
             "}\n";
    static const char *const inputs[] = {"0.01"};
    check("two_ops", text, inputs, 0, 4096 + 64, 0);
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "two_ops", &m);
    CHECK(!s);
    cxla_status_free(s);
    const cxla_computation *body = NULL;
    for (int64_t c = 0; m && c < m->comp_count; c++)
        if (strcmp(m->comps[c]->name, "body") == 0) body = m->comps[c];
    for (int64_t i = 0; body && i < body->instr_count; i++) {
        const cxla_instr *in = body->instrs[i];
        if (strcmp(in->name, "y") == 0) {
            CHECK_MSG(!cpu_emit_alias_ok(in, 0) && !cpu_emit_alias_ok(in, 1),
                      "multiply(x, x) may write over x");
        }
        if (strcmp(in->name, "ni") == 0)
            CHECK_MSG(cpu_emit_alias_ok(in, 0) && cpu_emit_alias_ok(in, 1),
                      "add(i, one) may write over either operand");
    }
    cxla_module_destroy(m);
}

/* A tuple state where one leaf passes through unchanged (costs nothing: no step) and one
 * is rewritten reading it: nothing of either is copied. */
static void test_pass_through(void) {
    static const char *text = "HloModule pass_through\n" COND(
        "(s32[], f32[1024], f32[1024])",
        "7") "body {\n"
             "  p = (s32[], f32[1024], f32[1024]) parameter(0)\n"
             "  i = s32[] get-tuple-element(p), index=0\n"
             "  big = f32[1024] get-tuple-element(p), index=1\n"
             "  v = f32[1024] get-tuple-element(p), index=2\n"
             "  h = f32[] constant(0.5)\n"
             "  hb = f32[1024] broadcast(h), dimensions={}\n"
             "  vh = f32[1024] multiply(v, hb)\n"
             "  y = f32[1024] add(vh, big)\n"
             "  one = s32[] constant(1)\n"
             "  ni = s32[] add(i, one)\n"
             "  ROOT t = (s32[], f32[1024], f32[1024]) tuple(ni, big, y)\n"
             "}\n"
             "ENTRY main {\n"
             "  s = f32[] parameter(0)\n"
             "  io = f32[1024] iota(), iota_dimension=0\n"
             "  sb = f32[1024] broadcast(s), dimensions={}\n"
             "  a = f32[1024] multiply(io, sb)\n"
             "  b = f32[1024] add(io, sb)\n"
             "  zero = s32[] constant(0)\n"
             "  t0 = (s32[], f32[1024], f32[1024]) tuple(zero, a, b)\n"
             "  ROOT w = (s32[], f32[1024], f32[1024]) while(t0), condition=cond, body=body\n"
             "}\n";
    static const char *const inputs[] = {"-0.125"};
    check("pass_through", text, inputs, 1, 64, 0);
}

/* Nested loops, each rewriting its state in place: the inner one x = x * 0.5 + 1, the
 * outer one x = x - 0.25 after it. */
static void test_nested(void) {
    static const char *text =
        "HloModule nested\n"
        "icond {\n"
        "  p = (s32[], f32[512]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  n = s32[] constant(3)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "ibody {\n"
        "  p = (s32[], f32[512]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  x = f32[512] get-tuple-element(p), index=1\n"
        "  h = f32[] constant(0.5)\n"
        "  hb = f32[512] broadcast(h), dimensions={}\n"
        "  xh = f32[512] multiply(x, hb)\n"
        "  o = f32[] constant(1)\n"
        "  ob = f32[512] broadcast(o), dimensions={}\n"
        "  y = f32[512] add(xh, ob)\n"
        "  one = s32[] constant(1)\n"
        "  ni = s32[] add(i, one)\n"
        "  ROOT t = (s32[], f32[512]) tuple(ni, y)\n"
        "}\n" COND("(s32[], f32[512])",
                   "4") "body {\n"
                        "  p = (s32[], f32[512]) parameter(0)\n"
                        "  j = s32[] get-tuple-element(p), index=0\n"
                        "  x = f32[512] get-tuple-element(p), index=1\n"
                        "  zero = s32[] constant(0)\n"
                        "  t0 = (s32[], f32[512]) tuple(zero, x)\n"
                        "  w = (s32[], f32[512]) while(t0), condition=icond, body=ibody\n"
                        "  xi = f32[512] get-tuple-element(w), index=1\n"
                        "  q = f32[] constant(0.25)\n"
                        "  qb = f32[512] broadcast(q), dimensions={}\n"
                        "  y = f32[512] subtract(xi, qb)\n"
                        "  one = s32[] constant(1)\n"
                        "  nj = s32[] add(j, one)\n"
                        "  ROOT t = (s32[], f32[512]) tuple(nj, y)\n"
                        "}\n"
                        "ENTRY main {\n"
                        "  s = f32[] parameter(0)\n"
                        "  io = f32[512] iota(), iota_dimension=0\n"
                        "  sb = f32[512] broadcast(s), dimensions={}\n"
                        "  init = f32[512] multiply(io, sb)\n"
                        "  zero = s32[] constant(0)\n"
                        "  t0 = (s32[], f32[512]) tuple(zero, init)\n"
                        "  ROOT w = (s32[], f32[512]) while(t0), condition=cond, body=body\n"
                        "}\n";
    static const char *const inputs[] = {"3.25"};
    check("nested", text, inputs, 2, 64, 0);
}

/* A state of 1.2 MB: the kernel is split over the thread pool, each part reading and
 * writing its own elements; the loop runs as ops (pooled kernels are not generated). */
static void test_pooled(void) {
    static const char *text = "HloModule pooled_alias\n" COND(
        "(s32[], f32[300001])",
        "5") "body {\n"
             "  p = (s32[], f32[300001]) parameter(0)\n"
             "  i = s32[] get-tuple-element(p), index=0\n"
             "  x = f32[300001] get-tuple-element(p), index=1\n"
             "  e = f32[300001] exponential(x)\n"
             "  k = f32[] constant(-0.001)\n"
             "  kb = f32[300001] broadcast(k), dimensions={}\n"
             "  y = f32[300001] multiply(e, kb)\n"
             "  one = s32[] constant(1)\n"
             "  ni = s32[] add(i, one)\n"
             "  ROOT t = (s32[], f32[300001]) tuple(ni, y)\n"
             "}\n"
             "ENTRY main {\n"
             "  s = f32[] parameter(0)\n"
             "  io = f32[300001] iota(), iota_dimension=0\n"
             "  sb = f32[300001] broadcast(s), dimensions={}\n"
             "  init = f32[300001] multiply(io, sb)\n"
             "  zero = s32[] constant(0)\n"
             "  t0 = (s32[], f32[300001]) tuple(zero, init)\n"
             "  ROOT w = (s32[], f32[300001]) while(t0), condition=cond, body=body\n"
             "}\n";
    static const char *const inputs[] = {"0.00001"};
    check("pooled_alias", text, inputs, 1, 64, 0);
}

/* An integer state the condition reads (the loop ends when its largest element passes a
 * bound): x = x * 3 + 1 wraps nowhere before that, and each condition sees the state the
 * last body wrote in place. */
static void test_integer_state(void) {
    static const char *text = "HloModule int_state\n"
                              "max {\n"
                              "  a = s32[] parameter(0)\n"
                              "  b = s32[] parameter(1)\n"
                              "  ROOT m = s32[] maximum(a, b)\n"
                              "}\n"
                              "cond {\n"
                              "  p = (s32[1024]) parameter(0)\n"
                              "  x = s32[1024] get-tuple-element(p), index=0\n"
                              "  z = s32[] constant(0)\n"
                              "  m = s32[] reduce(x, z), dimensions={0}, to_apply=max\n"
                              "  b = s32[] constant(5000000)\n"
                              "  ROOT lt = pred[] compare(m, b), direction=LT\n"
                              "}\n"
                              "body {\n"
                              "  p = (s32[1024]) parameter(0)\n"
                              "  x = s32[1024] get-tuple-element(p), index=0\n"
                              "  three = s32[] constant(3)\n"
                              "  tb = s32[1024] broadcast(three), dimensions={}\n"
                              "  y = s32[1024] multiply(x, tb)\n"
                              "  o = s32[] constant(1)\n"
                              "  ob = s32[1024] broadcast(o), dimensions={}\n"
                              "  z = s32[1024] add(y, ob)\n"
                              "  ROOT t = (s32[1024]) tuple(z)\n"
                              "}\n"
                              "ENTRY main {\n"
                              "  s = s32[] parameter(0)\n"
                              "  io = s32[1024] iota(), iota_dimension=0\n"
                              "  sb = s32[1024] broadcast(s), dimensions={}\n"
                              "  init = s32[1024] add(io, sb)\n"
                              "  t0 = (s32[1024]) tuple(init)\n"
                              "  ROOT w = (s32[1024]) while(t0), condition=cond, body=body\n"
                              "}\n";
    static const char *const inputs[] = {"3"};
    check("int_state", text, inputs, 1, 0, 0);
}

/* The loop of test_other_indices' reverse over 1.2 MB: the new state cannot be written over
 * the old, so the two buffers swap every step (double buffering) and the loop's end puts
 * the state back in its own buffer (the entry's result here) after an odd count of steps,
 * or finds it there after an even one. With the state from the entry's parameter too (it
 * must not change), and as a loop nested in another whose state is the inner one's. */
static const char *swap_text(char *buf, size_t size, int steps, bool from_param) {
    snprintf(buf, size,
             "HloModule swap_rev\n"
             "cond {\n"
             "  p = (s32[], f32[300001]) parameter(0)\n"
             "  i = s32[] get-tuple-element(p), index=0\n"
             "  n = s32[] constant(%d)\n"
             "  ROOT lt = pred[] compare(i, n), direction=LT\n"
             "}\n"
             "body {\n"
             "  p = (s32[], f32[300001]) parameter(0)\n"
             "  i = s32[] get-tuple-element(p), index=0\n"
             "  x = f32[300001] get-tuple-element(p), index=1\n"
             "  r = f32[300001] reverse(x), dimensions={0}\n"
             "  h = f32[] constant(0.5)\n"
             "  hb = f32[300001] broadcast(h), dimensions={}\n"
             "  rh = f32[300001] multiply(r, hb)\n"
             "  f = f32[] convert(i)\n"
             "  fb = f32[300001] broadcast(f), dimensions={}\n"
             "  y = f32[300001] add(rh, fb)\n"
             "  one = s32[] constant(1)\n"
             "  ni = s32[] add(i, one)\n"
             "  ROOT t = (s32[], f32[300001]) tuple(ni, y)\n"
             "}\n"
             "ENTRY main {\n"
             "%s"
             "  zero = s32[] constant(0)\n"
             "  t0 = (s32[], f32[300001]) tuple(zero, init)\n"
             "  ROOT w = (s32[], f32[300001]) while(t0), condition=cond, body=body\n"
             "}\n",
             steps,
             from_param ? "  init = f32[300001] parameter(0)\n"
                        : "  s = f32[] parameter(0)\n"
                          "  io = f32[300001] iota(), iota_dimension=0\n"
                          "  sb = f32[300001] broadcast(s), dimensions={}\n"
                          "  init = f32[300001] multiply(io, sb)\n");
    return buf;
}

static void test_double_buffer(void) {
    enum { STATE = 300001 * 4 };
    char text[4096];
    static const char *const inputs[] = {"0.001"};
    check("swap_odd", swap_text(text, sizeof text, 5, false), inputs, 0, STATE + 64, 1);
    check("swap_even", swap_text(text, sizeof text, 4, false), inputs, 0, STATE + 64, 1);
    check("swap_none", swap_text(text, sizeof text, 0, false), inputs, 0, STATE + 64, 1);
    /* From the entry's parameter: its copy into the state, then the swaps. */
    char *arg = malloc(300001 * 12 + 16);
    if (!arg) return;
    size_t at = (size_t)sprintf(arg, "{");
    for (int k = 0; k < 300001; k++)
        at += (size_t)sprintf(arg + at, "%s%d", k ? ", " : "",
                              (int)((long long)k * 7919 % 1000) - 500);
    sprintf(arg + at, "}");
    const char *pin[] = {arg};
    check("swap_param", swap_text(text, sizeof text, 3, true), pin, 0, 2 * STATE + 64, 1);
    free(arg);
    static const char *nested =
        "HloModule swap_nested\n"
        "icond {\n"
        "  p = (s32[], f32[300001]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  n = s32[] constant(3)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "ibody {\n"
        "  p = (s32[], f32[300001]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  x = f32[300001] get-tuple-element(p), index=1\n"
        "  r = f32[300001] reverse(x), dimensions={0}\n"
        "  y = f32[300001] add(r, x)\n"
        "  one = s32[] constant(1)\n"
        "  ni = s32[] add(i, one)\n"
        "  ROOT t = (s32[], f32[300001]) tuple(ni, y)\n"
        "}\n"
        "cond {\n"
        "  p = (s32[], f32[300001]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n"
        "  n = s32[] constant(3)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "body {\n"
        "  p = (s32[], f32[300001]) parameter(0)\n"
        "  j = s32[] get-tuple-element(p), index=0\n"
        "  x = f32[300001] get-tuple-element(p), index=1\n"
        "  zero = s32[] constant(0)\n"
        "  t0 = (s32[], f32[300001]) tuple(zero, x)\n"
        "  w = (s32[], f32[300001]) while(t0), condition=icond, body=ibody\n"
        "  xi = f32[300001] get-tuple-element(w), index=1\n"
        "  q = f32[] constant(0.125)\n"
        "  qb = f32[300001] broadcast(q), dimensions={}\n"
        "  y = f32[300001] multiply(xi, qb)\n"
        "  one = s32[] constant(1)\n"
        "  nj = s32[] add(j, one)\n"
        "  ROOT t = (s32[], f32[300001]) tuple(nj, y)\n"
        "}\n"
        "ENTRY main {\n"
        "  s = f32[] parameter(0)\n"
        "  io = f32[300001] iota(), iota_dimension=0\n"
        "  sb = f32[300001] broadcast(s), dimensions={}\n"
        "  init = f32[300001] multiply(io, sb)\n"
        "  zero = s32[] constant(0)\n"
        "  t0 = (s32[], f32[300001]) tuple(zero, init)\n"
        "  ROOT w = (s32[], f32[300001]) while(t0), condition=cond, body=body\n"
        "}\n";
    /* The inner loop swaps (3 steps: its end copies the state back); the outer one
     * rewrites its state in place. */
    check("swap_nested", nested, inputs, 1, STATE + 64, 1);
}

/* The state rewritten by a kernel, then a row of it by a dynamic-update-slice in place: the
 * kernel writes over the state and the update writes its row there (no copy); and the
 * same where the row comes from the old state at an index that the new state gives, so
 * read after the kernel (which must not write over it then). */
static void test_update_after_kernel(void) {
    static const char *text = "HloModule upd_after\n" COND(
        "(s32[], f32[64,32])",
        "6") "body {\n"
             "  p = (s32[], f32[64,32]) parameter(0)\n"
             "  i = s32[] get-tuple-element(p), index=0\n"
             "  x = f32[64,32] get-tuple-element(p), index=1\n"
             "  two = f32[] constant(2)\n"
             "  tb = f32[64,32] broadcast(two), dimensions={}\n"
             "  y = f32[64,32] multiply(x, tb)\n"
             "  f = f32[] convert(i)\n"
             "  row = f32[1,32] broadcast(f), dimensions={}\n"
             "  zero = s32[] constant(0)\n"
             "  u = f32[64,32] dynamic-update-slice(y, row, i, zero)\n"
             "  one = s32[] constant(1)\n"
             "  ni = s32[] add(i, one)\n"
             "  ROOT t = (s32[], f32[64,32]) tuple(ni, u)\n"
             "}\n"
             "ENTRY main {\n"
             "  s = f32[] parameter(0)\n"
             "  io = f32[64,32] iota(), iota_dimension=0\n"
             "  sb = f32[64,32] broadcast(s), dimensions={}\n"
             "  init = f32[64,32] add(io, sb)\n"
             "  zero = s32[] constant(0)\n"
             "  t0 = (s32[], f32[64,32]) tuple(zero, init)\n"
             "  ROOT w = (s32[], f32[64,32]) while(t0), condition=cond, body=body\n"
             "}\n";
    static const char *old_row = "HloModule upd_old_row\n" COND(
        "(s32[], f32[64,32])",
        "6") "body {\n"
             "  p = (s32[], f32[64,32]) parameter(0)\n"
             "  i = s32[] get-tuple-element(p), index=0\n"
             "  x = f32[64,32] get-tuple-element(p), index=1\n"
             "  two = f32[] constant(2)\n"
             "  tb = f32[64,32] broadcast(two), dimensions={}\n"
             "  y = f32[64,32] multiply(x, tb)\n"
             "  zero = s32[] constant(0)\n"
             "  y00 = f32[1,1] slice(y), slice={[0:1], [0:1]}\n"
             "  yr = f32[] reshape(y00)\n"
             "  yi = s32[] convert(yr)\n"
             "  row = f32[1,32] dynamic-slice(x, yi, zero), dynamic_slice_sizes={1,32}\n"
             "  one = s32[] constant(1)\n"
             "  ip = s32[] add(i, one)\n"
             "  u = f32[64,32] dynamic-update-slice(y, row, ip, zero)\n"
             "  ni = s32[] add(i, one)\n"
             "  ROOT t = (s32[], f32[64,32]) tuple(ni, u)\n"
             "}\n"
             "ENTRY main {\n"
             "  s = f32[] parameter(0)\n"
             "  io = f32[64,32] iota(), iota_dimension=0\n"
             "  sb = f32[64,32] broadcast(s), dimensions={}\n"
             "  init = f32[64,32] add(io, sb)\n"
             "  zero = s32[] constant(0)\n"
             "  t0 = (s32[], f32[64,32]) tuple(zero, init)\n"
             "  ROOT w = (s32[], f32[64,32]) while(t0), condition=cond, body=body\n"
             "}\n";
    static const char *const inputs[] = {"0.5"};
    check("upd_after", text, inputs, 1, 64, 0);
    check("upd_old_row", old_row, inputs, 0, 8192 + 64, 0);
}

TEST_MAIN(TEST(test_elementwise), TEST(test_parameter_state), TEST(test_read_after_new),
          TEST(test_other_indices), TEST(test_two_operands), TEST(test_pass_through),
          TEST(test_nested), TEST(test_pooled), TEST(test_integer_state), TEST(test_double_buffer),
          TEST(test_update_after_kernel))
