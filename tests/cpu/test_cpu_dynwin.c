/* Bounded dynamic shapes on the cpu backend: reduce-window, select-and-scatter and float
 * dots over the run-time sizes as steps of their own (src/cpu/cpu_dynwin.c), not the
 * interpreter's handler. Every module runs on the interpreter and the cpu backend with
 * arguments below their bounds (sizes 0, in the middle, at the bounds) whose padding holds
 * garbage; the results (sizes, values bit for bit, zeros in the padding) or the error
 * messages must be the same, and the plan must have no handler step. */
#define _POSIX_C_SOURCE 200809L /* setenv, strdup */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/emit.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

static cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "dynwin_test", &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        test_fail(__FILE__, __LINE__, "module rejected: %s", cxla_status_message(s));
        cxla_status_free(s);
        cxla_module_destroy(m);
        return NULL;
    }
    return m;
}

/* An argument of parameter shape |shape| at |sizes| (NULL: the bounds): the value's
 * elements, row-major over the sizes, are first + k * step; every element past the sizes
 * (the padding of a dynamic dimension, the part of a static one that a dynamic operand
 * cuts) is |garbage|, which must never reach a result. */
static cxla_literal *arg(const cxla_shape *shape, const int64_t *sizes, double first, double step,
                         double garbage) {
    cxla_shape plain = *shape;
    plain.layout = NULL;
    cxla_literal *l = NULL;
    cxla_status s = cxla_literal_create(&plain, &l);
    CHECK_MSG(!s, "literal: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    if (!l) return NULL;
    char *data = cxla_literal_data(l);
    int64_t idx[CXLA_MAX_RANK] = {0}, count = 0, k = 0;
    cxla_shape_element_count(&plain, &count);
    size_t elem = count ? cxla_literal_byte_size(l) / (size_t)count : 1;
    for (int64_t e = 0; e < count; e++) {
        bool inside = true;
        for (int64_t d = 0; d < shape->rank; d++) inside = inside && (!sizes || idx[d] < sizes[d]);
        /* Values that round in every order: sums depend on it. */
        double v = first + step * (double)k;
        if (inside) k++;
        cxla_store_f64(shape->type, data + (size_t)e * elem, inside ? v : garbage);
        cxla_index_next(shape->rank, shape->dims, idx);
    }
    for (int64_t d = 0; sizes && d < shape->rank; d++) {
        if (!shape->dynamic || !shape->dynamic[d]) continue;
        s = cxla_literal_set_dynamic_size(l, d, sizes[d]);
        CHECK_MSG(!s, "sizes: %s", s ? cxla_status_message(s) : "");
        cxla_status_free(s);
    }
    return l;
}

/* Runs |compiled| (of |m|) and the interpreter on |args|: equal results (bit for bit), or
 * the same error. Returns whether the interpreter succeeded. */
static bool same(const cxla_module *m, void *compiled, cxla_literal *const *args, int64_t n,
                 const char *what) {
    cxla_literal *want = NULL, *got = NULL;
    cxla_status ws = interp_run_module(m, NULL, (const cxla_literal *const *)args, n, &want);
    exec_run_options ro = {0};
    cxla_status gs = cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, n, &got);
    if (ws || gs) {
        CHECK_MSG(ws && gs, "%s: interpreter %s, cpu %s", what, ws ? cxla_status_message(ws) : "ok",
                  gs ? cxla_status_message(gs) : "ok");
        if (ws && gs)
            CHECK_MSG(strcmp(cxla_status_message(ws), cxla_status_message(gs)) == 0,
                      "%s: the errors differ:\n  interpreter: %s\n  cpu:         %s", what,
                      cxla_status_message(ws), cxla_status_message(gs));
    } else {
        bool eq = cxla_literal_equal(want, got);
        if (!eq) {
            char *a = cxla_literal_to_string(want, 3), *b = cxla_literal_to_string(got, 3);
            test_fail(__FILE__, __LINE__, "%s: cpu and interpreter differ:\n  %s\n  %s", what,
                      a ? a : "?", b ? b : "?");
            free(a);
            free(b);
        }
    }
    bool ok = !ws;
    cxla_status_free(ws);
    cxla_status_free(gs);
    cxla_literal_free(want);
    cxla_literal_free(got);
    return ok;
}

static void *compile(const cxla_module *m) {
    void *compiled = NULL;
    exec_compile_options co = {0};
    cxla_status s = cpu_backend.compile(m, &co, &compiled);
    CHECK_MSG(!s, "compile: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    return compiled;
}

static void check_what(void *compiled, const char *name, const char *want) {
    const char *what = cpu_compiled_call_what(compiled, name);
    CHECK_MSG(what && strcmp(what, want) == 0, "%s runs as '%s', not '%s'", name,
              what ? what : "(nothing)", want);
}

static void no_handlers(void *compiled) {
    const cpu_plan *plan = cpu_compiled_plan(compiled);
    cpu_plan_stats st = {0};
    if (plan) cpu_plan_get_stats(plan, &st);
    CHECK_MSG(plan && st.handler_steps == 0, "%" PRId64 " handler steps", st.handler_steps);
}

/* Sets CXLA_CPU_EXACT_MATH to |v| (NULL: unset); returns the old value (malloc'd). */
static char *exact_math(const char *v) {
    const char *old = getenv("CXLA_CPU_EXACT_MATH");
    char *saved = old ? strdup(old) : NULL;
    if (v)
        setenv("CXLA_CPU_EXACT_MATH", v, 1);
    else
        unsetenv("CXLA_CPU_EXACT_MATH");
    return saved;
}

/* The window output size of shape inference, for the source of select-and-scatter. */
static int64_t wout(int64_t n, int64_t size, int64_t stride, int64_t lo, int64_t hi) {
    int64_t padded = n + lo + hi;
    return padded >= size ? (padded - size) / stride + 1 : 0;
}

static const char *WINDOWS =
    "HloModule windows\n"
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n}\n"
    "max {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
    "  ROOT m = s32[] maximum(a, b)\n}\n"
    "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
    "ENTRY main {\n"
    "  x = f32[<=8,<=6] parameter(0)\n"
    "  i = s32[<=8,<=6] parameter(1)\n"
    "  src = f32[<=4,<=3] parameter(2)\n"
    "  z = f32[] constant(0.5)\n"
    "  lo = s32[] constant(-100)\n"
    /* a window at the end of a size folds the init value (0.5, not an identity) */
    "  w = f32[<=7,<=3] reduce-window(x, z), window={size=2x3 stride=1x2 pad=0_0x1_1}, "
    "to_apply=add\n"
    /* base dilation: the holes and the padding fold -100 */
    "  mx = s32[<=8,<=6] reduce-window(i, lo), window={size=3x2 stride=2x1 pad=1_1x0_1 "
    "lhs_dilate=2x1}, to_apply=max\n"
    /* the selection never meets the padding (garbage larger than every value) */
    "  sas = f32[<=8,<=6] select-and-scatter(x, src, z), window={size=2x2 stride=2x2 "
    "pad=0_1x0_0}, select=ge, scatter=add\n"
    "  ROOT r = (f32[<=7,<=3], s32[<=8,<=6], f32[<=8,<=6]) tuple(w, mx, sas)\n"
    "}\n";

static void run_windows(void *compiled, const cxla_module *m) {
    static const int64_t sz[][2] = {{8, 6}, {0, 0}, {3, 4}, {0, 6}, {8, 0},
                                    {1, 1}, {7, 5}, {2, 3}, {5, 2}};
    for (size_t k = 0; k < sizeof(sz) / sizeof(sz[0]); k++) {
        const int64_t *z = sz[k];
        int64_t zs[2] = {wout(z[0], 2, 2, 0, 1), wout(z[1], 2, 2, 0, 0)};
        for (int wrong = 0; wrong < 2; wrong++) {
            int64_t zw[2] = {zs[0], zs[1] + wrong}; /* a source the windows do not fit */
            if (wrong && zw[1] > 3) continue;
            cxla_literal *args[3] = {arg(&m->entry->params[0]->shape, z, -3.37, 0.731, 1e30),
                                     arg(&m->entry->params[1]->shape, z, -7, 3, 1000000),
                                     arg(&m->entry->params[2]->shape, zw, 0.1, 0.3, -2e30)};
            char what[96];
            snprintf(what, sizeof(what), "windows over (%" PRId64 ",%" PRId64 "), source %s", z[0],
                     z[1], wrong ? "too large" : "fitting");
            bool ok = args[0] && args[1] && args[2] && same(m, compiled, args, 3, what);
            CHECK_MSG(ok == !wrong, "%s: %s", what, ok ? "ran" : "failed");
            for (int a = 0; a < 3; a++) cxla_literal_free(args[a]);
        }
    }
}

static void test_windows(void) {
    cxla_module *m = parse(WINDOWS);
    for (int exact = 0; m && exact < 2; exact++) {
        char *saved = exact_math(exact ? "1" : NULL);
        void *compiled = compile(m);
        if (compiled) {
            check_what(compiled, "w", "dynamic step");
            check_what(compiled, "mx", "dynamic step");
            check_what(compiled, "sas", "dynamic step");
            no_handlers(compiled);
            run_windows(compiled, m);
            cpu_backend.destroy(compiled);
        }
        char *ignored = exact_math(saved);
        free(ignored);
        free(saved);
    }
    cxla_module_destroy(m);
}

/* Float dots in exact math: the interpreter's sum in ascending contraction index at the
 * actual contracting size, bit for bit (values that round, so that another order, or
 * zeros added, would show); a static operand lined up with a dynamic one is cut (inf
 * where it is cut off must not turn into NaN); contracting sizes that differ are the
 * interpreter's error. */
static const char *DOTS =
    "HloModule dots\n"
    "ENTRY main {\n"
    "  a = f32[<=5,<=40] parameter(0)\n"
    "  b = f32[<=40,<=20] parameter(1)\n"
    "  h = f16[<=3,<=5,<=7] parameter(2)\n"
    "  g = f16[<=3,<=7,4] parameter(3)\n"
    "  s = f64[6,40] parameter(4)\n"
    "  q = f64[<=40,<=20] parameter(5)\n"
    "  d = f32[<=5,<=20] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  e = f16[<=3,<=5,4] dot(h, g), lhs_batch_dims={0}, rhs_batch_dims={0}, "
    "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n"
    "  f = f64[6,<=20] dot(s, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  ROOT r = (f32[<=5,<=20], f16[<=3,<=5,4], f64[6,<=20]) tuple(d, e, f)\n"
    "}\n";

static void test_exact_dots(void) {
    cxla_module *m = parse(DOTS);
    char *saved = exact_math("1");
    void *compiled = m ? compile(m) : NULL;
    if (compiled) {
        check_what(compiled, "d", "dynamic step");
        check_what(compiled, "e", "dynamic step");
        check_what(compiled, "f", "dynamic step");
        no_handlers(compiled);
        /* {m, k, k2 (the right side's contracting size), n, the batch of e} */
        static const int64_t sz[][5] = {{5, 40, 40, 20, 3}, {0, 0, 0, 0, 0},   {4, 17, 17, 18, 2},
                                        {2, 0, 0, 3, 1},    {1, 33, 33, 1, 3}, {3, 4, 5, 2, 2},
                                        {5, 39, 39, 16, 1}};
        for (size_t k = 0; k < sizeof(sz) / sizeof(sz[0]); k++) {
            const int64_t *z = sz[k];
            int64_t za[2] = {z[0], z[1]}, zb[2] = {z[2], z[3]}, zs[2] = {6, z[2]};
            int64_t kk = z[1] < 7 ? z[1] : 7, zh[3] = {z[4], z[0], kk}, zg[3] = {z[4], kk, 4};
            if (z[1] != z[2]) zg[1] = kk == 7 ? 6 : kk + 1;
            const cxla_shape *const *ps = (const cxla_shape *const[]){
                &m->entry->params[0]->shape, &m->entry->params[1]->shape,
                &m->entry->params[2]->shape, &m->entry->params[3]->shape,
                &m->entry->params[4]->shape, &m->entry->params[5]->shape};
            cxla_literal *args[6] = {
                arg(ps[0], za, -1.37, 0.1173, 1e30),   arg(ps[1], zb, 0.9, -0.0311, -1e30),
                arg(ps[2], zh, -2.1, 0.137, 60000),    arg(ps[3], zg, 1.3, -0.071, -60000),
                arg(ps[4], zs, 0.3, 0.0173, INFINITY), arg(ps[5], zb, -0.77, 0.0123, NAN)};
            char what[96];
            snprintf(what, sizeof(what),
                     "dots of (%" PRId64 ",%" PRId64 ") and (%" PRId64 ",%" PRId64 ")", z[0], z[1],
                     z[2], z[3]);
            bool all = true;
            for (int a = 0; a < 6; a++) all = all && args[a];
            bool ok = all && same(m, compiled, args, 6, what);
            CHECK_MSG(ok == (z[1] == z[2]), "%s: %s", what, ok ? "ran" : "failed");
            for (int a = 0; a < 6; a++) cxla_literal_free(args[a]);
        }
        cpu_backend.destroy(compiled);
    }
    char *ignored = exact_math(saved);
    free(ignored);
    free(saved);
    cxla_module_destroy(m);
}

/* A static operand lined up with a dynamic one in the default mode (an f64 dot: a kernel
 * at the bounds in the interpreter's order): the part the dynamic size cuts off holds inf,
 * which the kernel must not multiply by the other side's zeroed padding. */
static void test_static_cut_dot(void) {
    static const char *text =
        "HloModule cut\n"
        "ENTRY main {\n"
        "  s = f64[6,40] parameter(0)\n"
        "  q = f64[<=40,<=4] parameter(1)\n"
        "  ROOT f = f64[6,<=4] dot(s, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "}\n";
    cxla_module *m = parse(text);
    char *saved = exact_math(NULL);
    void *compiled = m ? compile(m) : NULL;
    if (compiled) {
        no_handlers(compiled);
        static const int64_t ks[] = {0, 1, 17, 39, 40};
        for (size_t k = 0; k < sizeof(ks) / sizeof(ks[0]); k++) {
            int64_t zs[2] = {6, ks[k]}, zq[2] = {ks[k], 3};
            cxla_literal *args[2] = {arg(&m->entry->params[0]->shape, zs, 0.3, 0.0173, INFINITY),
                                     arg(&m->entry->params[1]->shape, zq, -0.77, 0.0123, NAN)};
            char what[64];
            snprintf(what, sizeof(what), "a static operand cut to %" PRId64, ks[k]);
            CHECK(args[0] && args[1] && same(m, compiled, args, 2, what));
            cxla_literal_free(args[0]);
            cxla_literal_free(args[1]);
        }
        cpu_backend.destroy(compiled);
    }
    char *ignored = exact_math(saved);
    free(ignored);
    free(saved);
    cxla_module_destroy(m);
}

/* Reduces the interpreter folds with its general path (several inputs, a reducer it does
 * not recognize) over dynamic dimensions: a kernel at the bounds whose reduced loops run
 * to the sizes (cpu_emit_sized_reduce), so the padding (garbage larger than every value,
 * which an argmax would pick) is never folded; a static input lined up with a dynamic one
 * is cut; two dynamic inputs of different sizes are the interpreter's error. */
static const char *SIZED =
    "HloModule sized\n"
    "argmax {\n  av = f32[] parameter(0)\n  ai = s32[] parameter(1)\n"
    "  bv = f32[] parameter(2)\n  bi = s32[] parameter(3)\n"
    "  gt = pred[] compare(av, bv), direction=GE\n  v = f32[] select(gt, av, bv)\n"
    "  i = s32[] select(gt, ai, bi)\n  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"
    "odd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  h = f32[] constant(0.5)\n  m = f32[] multiply(a, h)\n  ROOT s = f32[] add(m, b)\n}\n"
    "pair {\n  a0 = f32[] parameter(0)\n  a1 = f32[] parameter(1)\n"
    "  b0 = f32[] parameter(2)\n  b1 = f32[] parameter(3)\n"
    "  s0 = f32[] add(a0, b1)\n  s1 = f32[] maximum(a1, b0)\n"
    "  ROOT t = (f32[], f32[]) tuple(s0, s1)\n}\n"
    "ENTRY main {\n"
    "  x = f32[<=8,<=6] parameter(0)\n"
    "  i = s32[<=8,<=6] parameter(1)\n"
    "  st = f32[8,6] parameter(2)\n"
    "  ninf = f32[] constant(-inf)\n"
    "  m1 = s32[] constant(-1)\n"
    "  one = f32[] constant(1)\n"
    "  am = (f32[<=8], s32[<=8]) reduce(x, i, ninf, m1), dimensions={1}, to_apply=argmax\n"
    "  od = f32[<=6] reduce(x, one), dimensions={0}, to_apply=odd\n"
    "  pr = (f32[], f32[]) reduce(x, st, one, ninf), dimensions={0,1}, to_apply=pair\n"
    "  ROOT r = ((f32[<=8], s32[<=8]), f32[<=6], (f32[], f32[])) tuple(am, od, pr)\n"
    "}\n";

static void test_sized_reduce(void) {
    cxla_module *m = parse(SIZED);
    for (int exact = 0; m && exact < 2; exact++) {
        char *saved = exact_math(exact ? "1" : NULL);
        void *compiled = compile(m);
        if (compiled) {
            check_what(compiled, "am", "kernel");
            check_what(compiled, "od", "kernel");
            check_what(compiled, "pr", "kernel");
            no_handlers(compiled);
            static const int64_t sz[][2] = {{8, 6}, {0, 0}, {3, 4}, {0, 6},
                                            {8, 0}, {1, 1}, {7, 5}, {2, 3}};
            for (size_t k = 0; k < sizeof(sz) / sizeof(sz[0]); k++) {
                for (int wrong = 0; wrong < 2; wrong++) {
                    const int64_t *z = sz[k];
                    int64_t zi[2] = {z[0], z[1] == 6 ? 5 : z[1] + wrong};
                    if (!wrong) zi[1] = z[1];
                    cxla_literal *args[3] = {
                        arg(&m->entry->params[0]->shape, z, -3.37, 0.731, 1e30),
                        arg(&m->entry->params[1]->shape, zi, 100, -3, 1000000),
                        arg(&m->entry->params[2]->shape, z, 0.25, 0.5, 1e30)};
                    char what[96];
                    snprintf(what, sizeof(what), "reduces over (%" PRId64 ",%" PRId64 ")%s", z[0],
                             z[1], wrong ? ", the indices of another size" : "");
                    bool ok = args[0] && args[1] && args[2] && same(m, compiled, args, 3, what);
                    CHECK_MSG(ok == !wrong, "%s: %s", what, ok ? "ran" : "failed");
                    for (int a = 0; a < 3; a++) cxla_literal_free(args[a]);
                }
            }
            cpu_backend.destroy(compiled);
        }
        char *ignored = exact_math(saved);
        free(ignored);
        free(saved);
    }
    cxla_module_destroy(m);
}

/* Dots no kernel at the bounds runs, of sub-byte integers, mixed types and pred (the
 * emitter writes no kernel for them; their step's loop in 64-bit two's complement, the
 * operands converted as the interpreter converts them) and floats of mixed types (f32
 * sums of bf16 and s8 operands, an f64 sum of f32 ones), over a dynamic contracting
 * dimension whose padding holds garbage, in both math modes. */
static const char *MIXED =
    "HloModule mixed\n"
    "ENTRY main {\n"
    "  a = s4[3,<=9] parameter(0)\n"
    "  b = s4[<=9,<=4] parameter(1)\n"
    "  c = u4[3,<=9] parameter(2)\n"
    "  d = u4[<=9,<=4] parameter(3)\n"
    "  p = pred[3,<=9] parameter(4)\n"
    "  q = pred[<=9,<=4] parameter(5)\n"
    "  e = s8[3,<=9] parameter(6)\n"
    "  f = bf16[3,<=9] parameter(7)\n"
    "  g = bf16[<=9,<=4] parameter(8)\n"
    "  h = f32[3,<=9] parameter(9)\n"
    "  k = f32[<=9,<=4] parameter(10)\n"
    "  m = s8[<=9,<=4] parameter(11)\n"
    "  d0 = s32[3,<=4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  d1 = s8[3,<=4] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  d2 = u4[3,<=4] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  d3 = pred[3,<=4] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  d4 = f32[3,<=4] dot(e, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  d5 = f32[3,<=4] dot(f, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  d6 = f64[3,<=4] dot(h, k), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  d7 = s32[3,<=4] dot(h, k), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  d8 = f16[3,<=4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  ROOT r = (s32[3,<=4], s8[3,<=4], u4[3,<=4], pred[3,<=4], f32[3,<=4], f32[3,<=4], "
    "f64[3,<=4], s32[3,<=4], f16[3,<=4]) tuple(d0, d1, d2, d3, d4, d5, d6, d7, d8)\n"
    "}\n";

static void test_mixed_dots(void) {
    static const char *const names[] = {"d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"};
    cxla_module *m = parse(MIXED);
    for (int exact = 0; m && exact < 2; exact++) {
        char *saved = exact_math(exact ? "1" : NULL);
        void *compiled = compile(m);
        if (compiled) {
            for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++)
                check_what(compiled, names[n], "dynamic step");
            no_handlers(compiled);
            /* {k of the left sides, k of the right sides, n} */
            static const int64_t sz[][3] = {{9, 9, 4}, {0, 0, 0}, {5, 5, 3},
                                            {1, 1, 4}, {9, 9, 0}, {4, 5, 2}};
            for (size_t k = 0; k < sizeof(sz) / sizeof(sz[0]); k++) {
                const int64_t *z = sz[k];
                int64_t zl[2] = {3, z[0]}, zr[2] = {z[1], z[2]};
                cxla_literal *args[12];
                bool all = true;
                for (int a = 0; a < 12; a++) {
                    const cxla_shape *ps = &m->entry->params[a]->shape;
                    bool left = ps->dims[0] == 3;
                    /* Integer steps over the sub-byte ranges (stores wrap or saturate the
                     * same on both backends); floats that round; garbage past the sizes. */
                    double first = cxla_type_is_float(ps->type) ? -1.37 : -7;
                    double step = cxla_type_is_float(ps->type) ? 0.1173 : 3;
                    if (ps->type == CXLA_PRED) first = 0, step = 0.5;
                    args[a] = arg(ps, left ? zl : zr, first, step, ps->type == CXLA_PRED ? 1 : 5);
                    all = all && args[a];
                }
                char what[96];
                snprintf(what, sizeof(what),
                         "mixed dots over k %" PRId64 " and %" PRId64 ", n %" PRId64, z[0], z[1],
                         z[2]);
                bool ok = all && same(m, compiled, args, 12, what);
                CHECK_MSG(ok == (z[0] == z[1]), "%s: %s", what, ok ? "ran" : "failed");
                for (int a = 0; a < 12; a++) cxla_literal_free(args[a]);
            }
            cpu_backend.destroy(compiled);
        }
        char *ignored = exact_math(saved);
        free(ignored);
        free(saved);
    }
    cxla_module_destroy(m);
}

/* ---- issue 13: any rank ------------------------------------------------------------------ */

/* The steps above at rank 17 (their sizes, strides and window tables lived in arrays of 8,
 * and ranks over 8 took the interpreter's handler): the windows of WINDOWS over
 * [<=6, 1 x 15, <=5] and an f32 dot of rank 17 in exact math, 15 batch dimensions of 1. The
 * text is WIDE with "@" standing for the 15 middle dimensions ("1,...,1"), "#" for their
 * window fields ("1x...x1") and "%" for their paddings ("0_0x...x0_0"). */
static const char *WIDE =
    "HloModule wide\n"
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n}\n"
    "max {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
    "  ROOT m = s32[] maximum(a, b)\n}\n"
    "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
    "ENTRY main {\n"
    "  x = f32[<=6,@,<=5] parameter(0)\n"
    "  i = s32[<=6,@,<=5] parameter(1)\n"
    "  src = f32[<=3,@,<=2] parameter(2)\n"
    "  a = f32[@,<=3,<=20] parameter(3)\n"
    "  b = f32[@,<=20,<=4] parameter(4)\n"
    "  z = f32[] constant(0.5)\n"
    "  lo = s32[] constant(-100)\n"
    "  w = f32[<=5,@,<=3] reduce-window(x, z), window={size=2x#x2 stride=1x#x2 "
    "pad=0_0x%x0_1}, to_apply=add\n"
    "  mx = s32[<=6,@,<=5] reduce-window(i, lo), window={size=3x#x2 stride=2x#x1 "
    "pad=1_1x%x0_1 lhs_dilate=2x#x1}, to_apply=max\n"
    "  sas = f32[<=6,@,<=5] select-and-scatter(x, src, z), window={size=2x#x2 stride=2x#x2 "
    "pad=0_1x%x0_0}, select=ge, scatter=add\n"
    "  d = f32[@,<=3,<=4] dot(a, b), lhs_batch_dims={0,1,2,3,4,5,6,7,8,9,10,11,12,13,14}, "
    "rhs_batch_dims={0,1,2,3,4,5,6,7,8,9,10,11,12,13,14}, lhs_contracting_dims={16}, "
    "rhs_contracting_dims={15}\n"
    "  ROOT r = (f32[<=5,@,<=3], s32[<=6,@,<=5], f32[<=6,@,<=5], f32[@,<=3,<=4]) "
    "tuple(w, mx, sas, d)\n"
    "}\n";

/* WIDE with its placeholders written out (malloc'd). */
static char *wide_text(void) {
    size_t len = strlen(WIDE), n = 0;
    char *t = malloc(len * 24 + 1);
    if (!t) return NULL;
    for (const char *p = WIDE; *p; p++) {
        const char *unit = *p == '@' ? "1," : *p == '#' ? "1x" : *p == '%' ? "0_0x" : NULL;
        if (!unit) {
            t[n++] = *p;
            continue;
        }
        for (int k = 0; k < 15; k++) {
            memcpy(t + n, unit, strlen(unit));
            n += strlen(unit);
        }
        n--; /* no separator after the last */
    }
    t[n] = 0;
    return t;
}

/* Sizes of rank 17: |first| and |last| around 15 ones (|outer| 15 ones then two). */
static void sizes17(int64_t first, int64_t last, bool outer, int64_t *z) {
    for (int d = 0; d < 17; d++) z[d] = 1;
    if (outer) {
        z[15] = first;
        z[16] = last;
    } else {
        z[0] = first;
        z[16] = last;
    }
}

static void test_wide_steps(void) {
    char *text = wide_text();
    cxla_module *m = text ? parse(text) : NULL;
    free(text);
    for (int exact = 0; m && exact < 2; exact++) {
        char *saved = exact_math(exact ? "1" : NULL);
        void *compiled = compile(m);
        if (compiled) {
            check_what(compiled, "w", "dynamic step");
            check_what(compiled, "mx", "dynamic step");
            check_what(compiled, "sas", "dynamic step");
            if (exact) check_what(compiled, "d", "dynamic step");
            no_handlers(compiled);
            /* {x's first and last size, the dot's m, k, k of b, n} */
            static const int64_t sz[][6] = {{6, 5, 3, 20, 20, 4}, {0, 0, 0, 0, 0, 0},
                                            {3, 4, 2, 17, 17, 3}, {0, 5, 1, 0, 0, 2},
                                            {6, 0, 3, 19, 19, 1}, {5, 3, 1, 9, 10, 4}};
            for (size_t k = 0; k < sizeof(sz) / sizeof(sz[0]); k++) {
                const int64_t *v = sz[k];
                for (int wrong = 0; wrong < 2; wrong++) {
                    int64_t zx[17], zs[17], za[17], zb[17];
                    sizes17(v[0], v[1], false, zx);
                    sizes17(wout(v[0], 2, 2, 0, 1), wout(v[1], 2, 2, 0, 0) + wrong, false, zs);
                    sizes17(v[2], v[3], true, za);
                    sizes17(v[4], v[5], true, zb);
                    if (wrong && zs[16] > 2) continue;
                    const cxla_shape *ps[5];
                    for (int p = 0; p < 5; p++) ps[p] = &m->entry->params[p]->shape;
                    cxla_literal *args[5] = {
                        arg(ps[0], zx, -3.37, 0.731, 1e30), arg(ps[1], zx, -7, 3, 1000000),
                        arg(ps[2], zs, 0.1, 0.3, -2e30), arg(ps[3], za, -1.37, 0.1173, 1e30),
                        arg(ps[4], zb, 0.9, -0.0311, NAN)};
                    char what[128];
                    snprintf(what, sizeof(what),
                             "rank 17 over (%" PRId64 ",%" PRId64 "), dot k %" PRId64
                             " and %" PRId64 ", source %s",
                             v[0], v[1], v[3], v[4], wrong ? "too large" : "fitting");
                    bool all = true;
                    for (int a = 0; a < 5; a++) all = all && args[a];
                    bool ok = all && same(m, compiled, args, 5, what);
                    CHECK_MSG(ok == (!wrong && v[3] == v[4]), "%s: %s", what,
                              ok ? "ran" : "failed");
                    for (int a = 0; a < 5; a++) cxla_literal_free(args[a]);
                }
            }
            cpu_backend.destroy(compiled);
        }
        char *ignored = exact_math(saved);
        free(ignored);
        free(saved);
    }
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_windows), TEST(test_exact_dots), TEST(test_static_cut_dot),
          TEST(test_sized_reduce), TEST(test_wide_steps), TEST(test_mixed_dots))
