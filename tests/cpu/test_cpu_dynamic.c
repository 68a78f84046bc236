/* Bounded dynamic shapes on the cpu backend's steps (src/cpu/cpu_steps.c, docs/semantics.md
 * "Dynamic shapes"): kernels run at the bounds for elementwise work, broadcast, transpose,
 * iota, sorts along a static dimension and fusions of them; reduces fill their input's
 * padding with the init value, dots zero their operands'; get-dimension-size and
 * set-dimension-size are steps of their own; the moves by the sizes (reshape, concatenate,
 * pad, reverse, dynamic-slice, dynamic-update-slice, dynamic-reshape) and the reduces no
 * kernel runs (exact math) are steps of src/cpu/cpu_dynamic.c. Every module runs on
 * the interpreter and the cpu backend with arguments below their bounds (sizes 0, in the
 * middle and at the bounds) whose padding holds garbage, and the results (sizes and the
 * padding that set-dimension-size brings back) or the error messages must be the same. */
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
    cxla_status s = cxla_hlo_parse(text, strlen(text), "dynamic_test", &m);
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
 * elements, row-major over the sizes, are first + k * step; every padding element is
 * |garbage|, which must never reach a result. */
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
        cxla_store_f64(shape->type, data + (size_t)e * elem,
                       inside ? first + step * (double)k++ : garbage);
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

static cxla_literal *scalar(cxla_type t, double v) {
    cxla_literal *l = NULL;
    cxla_status s = cxla_literal_create_scalar(t, v, &l);
    CHECK_MSG(!s, "scalar: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    return l;
}

/* Runs |compiled| (of |m|) and the interpreter on |args|: equal results, or the same
 * error. Returns whether the interpreter succeeded. */
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

static const int64_t sizes2[][2] = {{3, 4}, {0, 0}, {8, 6}, {0, 6}, {8, 0}, {1, 1}, {7, 5}};
enum { SIZES2 = sizeof(sizes2) / sizeof(sizes2[0]) };

/* Elementwise work, broadcast, transpose, convert, compare and select at the bounds, a
 * static operand lined up with dynamic ones; set-dimension-size then shows the result's
 * padding (zero, as the interpreter's) and an argument's (its garbage, in both). */
static void test_elementwise(void) {
    static const char *text = "HloModule elementwise\n"
                              "ENTRY main {\n"
                              "  x = f32[<=8,<=6] parameter(0)\n"
                              "  y = f32[<=8,<=6] parameter(1)\n"
                              "  b = f32[6] parameter(2)\n"
                              "  s = f32[<=8,<=6] add(x, y)\n"
                              "  bb = f32[8,6] broadcast(b), dimensions={1}\n"
                              "  m = f32[<=8,<=6] multiply(s, bb)\n"
                              "  t = f32[<=6,<=8] transpose(m), dimensions={1,0}\n"
                              "  c = s32[<=6,<=8] convert(t)\n"
                              "  z = f32[] constant(0)\n"
                              "  zb = f32[6,8] broadcast(z), dimensions={}\n"
                              "  g = pred[<=6,<=8] compare(t, zb), direction=GT\n"
                              "  e = f32[<=6,<=8] exponential(t)\n"
                              "  sel = f32[<=6,<=8] select(g, t, e)\n"
                              "  n = s32[] get-dimension-size(x), dimensions={0}\n"
                              "  six = s32[] constant(6)\n"
                              "  eight = s32[] constant(8)\n"
                              "  w0 = f32[<=6,<=8] set-dimension-size(sel, six), dimensions={0}\n"
                              "  w = f32[<=6,<=8] set-dimension-size(w0, eight), dimensions={1}\n"
                              "  x0 = f32[<=8,<=6] set-dimension-size(x, eight), dimensions={0}\n"
                              "  ROOT r = (f32[<=6,<=8], s32[<=6,<=8], s32[], f32[<=6,<=8], "
                              "f32[<=8,<=6]) tuple(sel, c, n, w, x0)\n"
                              "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (!compiled) {
        cxla_module_destroy(m);
        return;
    }
    const cpu_plan *plan = cpu_compiled_plan(compiled);
    CHECK(plan != NULL);
    if (plan) {
        cpu_plan_stats st;
        cpu_plan_get_stats(plan, &st);
        CHECK_MSG(st.handler_steps == 0, "%" PRId64 " handler steps", st.handler_steps);
        /* x + y stays alone (x and y may differ in size); the dynamic instructions after
         * it take their sizes from it, so they fuse (the select with its operands g, t and
         * e, all sized by t): 4 kernels at the bounds (s, m-t, c, g-e-sel), not 7. */
        CHECK_MSG(st.bounds_steps <= 4, "%" PRId64 " kernels at the bounds", st.bounds_steps);
    }
    check_what(compiled, "n", "sizes");
    for (int i = 0; i < SIZES2; i++) {
        const cxla_shape *ps = &m->entry->params[0]->shape;
        cxla_literal *args[3] = {arg(ps, sizes2[i], -3.5, 0.75, 1e6),
                                 arg(ps, sizes2[i], 2, -0.5, -7e5),
                                 arg(&m->entry->params[2]->shape, NULL, 1, 1, 0)};
        char what[64];
        snprintf(what, sizeof(what), "sizes (%" PRId64 ",%" PRId64 ")", sizes2[i][0], sizes2[i][1]);
        if (args[0] && args[1] && args[2]) CHECK(same(m, compiled, args, 3, what));
        for (int k = 0; k < 3; k++) cxla_literal_free(args[k]);
    }
    cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* Two dynamic sizes lined up that differ, and a static result dimension that a dynamic
 * size reaches: the interpreter's errors, word for word. */
static void test_errors(void) {
    static const char *text = "HloModule errors\n"
                              "ENTRY main {\n"
                              "  x = f32[<=8,<=6] parameter(0)\n"
                              "  y = f32[<=8,<=6] parameter(1)\n"
                              "  ROOT s = f32[<=8,<=6] add(x, y)\n"
                              "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (compiled) {
        check_what(compiled, "s", "kernel");
        const cxla_shape *ps = &m->entry->params[0]->shape;
        int64_t a[2] = {3, 4}, b[2] = {3, 5}, c[2] = {2, 4};
        cxla_literal *args[2] = {arg(ps, a, 1, 1, 9), arg(ps, b, 1, 1, 9)};
        CHECK(!same(m, compiled, args, 2, "dimension 1 differs"));
        cxla_literal_free(args[1]);
        args[1] = arg(ps, c, 1, 1, 9);
        CHECK(!same(m, compiled, args, 2, "dimension 0 differs"));
        cxla_literal_free(args[0]);
        cxla_literal_free(args[1]);
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
    /* x + x and its negation fuse (their sizes cannot disagree); the multiply by y, whose
     * sizes may differ from x's, stays out of the fusion, so its error names it. */
    static const char *fused = "HloModule fused_errors\n"
                               "ENTRY main {\n"
                               "  x = f32[<=8,<=6] parameter(0)\n"
                               "  y = f32[<=8,<=6] parameter(1)\n"
                               "  s = f32[<=8,<=6] add(x, x)\n"
                               "  n = f32[<=8,<=6] negate(s)\n"
                               "  ROOT m = f32[<=8,<=6] multiply(n, y)\n"
                               "}\n";
    m = parse(fused);
    compiled = m ? compile(m) : NULL;
    if (compiled) {
        const cpu_plan *plan = cpu_compiled_plan(compiled);
        cpu_plan_stats st = {0};
        if (plan) cpu_plan_get_stats(plan, &st);
        CHECK_MSG(plan && st.bounds_steps == 2, "%" PRId64 " kernels at the bounds, not 2",
                  st.bounds_steps);
        const cxla_shape *ps = &m->entry->params[0]->shape;
        int64_t a[2] = {3, 4}, b[2] = {3, 5};
        cxla_literal *args[2] = {arg(ps, a, 1, 1, 9), arg(ps, b, 1, 1, 9)};
        CHECK(!same(m, compiled, args, 2, "sizes that differ after a fusion"));
        cxla_literal_free(args[1]);
        args[1] = arg(ps, a, 2, 1, 9);
        CHECK(same(m, compiled, args, 2, "sizes that agree after a fusion"));
        cxla_literal_free(args[0]);
        cxla_literal_free(args[1]);
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
    static const char *text2 = "HloModule static_result\n"
                               "ENTRY main {\n"
                               "  x = f32[<=8] parameter(0)\n"
                               "  y = f32[8] parameter(1)\n"
                               "  ROOT s = f32[8] add(x, y)\n"
                               "}\n";
    m = parse(text2);
    compiled = m ? compile(m) : NULL;
    if (compiled) {
        int64_t a[1] = {5};
        cxla_literal *args[2] = {arg(&m->entry->params[0]->shape, a, 1, 1, 9),
                                 arg(&m->entry->params[1]->shape, NULL, 1, 1, 9)};
        CHECK(!same(m, compiled, args, 2, "a static result below its size"));
        cxla_literal_free(args[0]);
        cxla_literal_free(args[1]);
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
}

#define REDUCE_MODULE                                                                              \
    "HloModule reduces\n"                                                                          \
    "add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"                              \
    "  ROOT r = f32[] add(a, b)\n}\n"                                                              \
    "max_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"                              \
    "  ROOT r = f32[] maximum(a, b)\n}\n"                                                          \
    "add_s32 {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"                              \
    "  ROOT r = s32[] add(a, b)\n}\n"                                                              \
    "min_s32 {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"                              \
    "  ROOT r = s32[] minimum(a, b)\n}\n"                                                          \
    "ENTRY main {\n"                                                                               \
    "  x = f32[<=8,<=6] parameter(0)\n"                                                            \
    "  i = s32[<=8,<=6] parameter(1)\n"                                                            \
    "  z = f32[] constant(0)\n"                                                                    \
    "  one = f32[] constant(1)\n"                                                                  \
    "  ninf = f32[] constant(-inf)\n"                                                              \
    "  zi = s32[] constant(0)\n"                                                                   \
    "  big = s32[] constant(2147483647)\n"                                                         \
    "  rows = f32[<=8] reduce(x, z), dimensions={1}, to_apply=add_f32\n"                           \
    "  top = f32[] reduce(x, ninf), dimensions={0,1}, to_apply=max_f32\n"                          \
    "  cols = s32[<=6] reduce(i, zi), dimensions={0}, to_apply=add_s32\n"                          \
    "  plus1 = f32[<=8] reduce(x, one), dimensions={1}, to_apply=add_f32\n"                        \
    "  low = s32[] reduce(i, big), dimensions={0,1}, to_apply=min_s32\n"                           \
    "  ROOT r = (f32[<=8], f32[], s32[<=6], f32[<=8], s32[]) tuple(rows, top, cols, plus1, low)\n" \
    "}\n"

static void run_reduces(void *compiled, const cxla_module *m) {
    for (int k = 0; k < SIZES2; k++) {
        cxla_literal *args[2] = {arg(&m->entry->params[0]->shape, sizes2[k], -20, 0.5, 1e6),
                                 arg(&m->entry->params[1]->shape, sizes2[k], 40, -1, -1000000)};
        char what[64];
        snprintf(what, sizeof(what), "reduce at sizes (%" PRId64 ",%" PRId64 ")", sizes2[k][0],
                 sizes2[k][1]);
        if (args[0] && args[1]) CHECK(same(m, compiled, args, 2, what));
        cxla_literal_free(args[0]);
        cxla_literal_free(args[1]);
    }
}

/* Reduces over dynamic dimensions: the padding (garbage larger than every value for the
 * maximum, smaller for the minimum) never reaches the result; an init value that is not
 * the reducer's identity runs the interpreter's handler. In exact math a float sum is a
 * step of the interpreter's typed loop (its pairwise order depends on the size: see
 * test_exact_reduce); maximum and integer reduces stay kernels. Values are small integers and
 * halves, so that every order sums exactly. */
static void test_reduce(void) {
    cxla_module *m = parse(REDUCE_MODULE);
    void *compiled = m ? compile(m) : NULL;
    if (compiled) {
        check_what(compiled, "top", "kernel");
        check_what(compiled, "cols", "kernel");
        if (cpu_emit_fast_math()) check_what(compiled, "rows", "kernel");
        run_reduces(compiled, m);
        cpu_backend.destroy(compiled);
    }
    const char *old = getenv("CXLA_CPU_EXACT_MATH");
    char *saved = old ? strdup(old) : NULL;
    setenv("CXLA_CPU_EXACT_MATH", "1", 1);
    compiled = m ? compile(m) : NULL;
    if (compiled) {
        check_what(compiled, "rows", "dynamic reduce");
        check_what(compiled, "top", "kernel");
        check_what(compiled, "low", "kernel");
        run_reduces(compiled, m);
        cpu_backend.destroy(compiled);
    }
    if (saved)
        setenv("CXLA_CPU_EXACT_MATH", saved, 1);
    else
        unsetenv("CXLA_CPU_EXACT_MATH");
    free(saved);
    cxla_module_destroy(m);
}

/* slice (the range clamped to the size; a static result dimension that the size cuts is
 * the interpreter's error), concatenate along a static dimension (a static operand lined
 * up with a dynamic one is cut) and reshape of values dynamic in their outermost dimension
 * (a prefix of the buffer; sizes that do not divide are the interpreter's error) run at
 * the bounds. */
static void test_shape_ops(void) {
    static const char *text =
        "HloModule shape_ops\n"
        "ENTRY main {\n"
        "  x = f32[<=8,6] parameter(0)\n"
        "  s2 = f32[8,3] parameter(1)\n"
        "  s = f32[<=3,2] slice(x), slice={[2:8:2], [1:5:2]}\n"
        "  f = f32[<=48] reshape(x)\n"
        "  g = f32[<=4,12] reshape(x)\n"
        "  t = f32[<=2,6] slice(x), slice={[1:3:1], [0:6:1]}\n"
        "  one = s32[] constant(1)\n"
        "  w = f32[<=48] set-dimension-size(f, one), dimensions={0}\n"
        "  c = f32[<=8,9] concatenate(x, s2), dimensions={1}\n"
        "  ROOT r = (f32[<=3,2], f32[<=48], f32[<=4,12], f32[<=2,6], f32[<=48], f32[<=8,9]) "
        "tuple(s, f, g, t, w, c)\n"
        "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (!compiled) {
        cxla_module_destroy(m);
        return;
    }
    check_what(compiled, "f", "kernel");
    check_what(compiled, "g", "kernel");
    check_what(compiled, "c", "kernel");
    const cpu_plan *plan = cpu_compiled_plan(compiled);
    cpu_plan_stats st = {0};
    if (plan) cpu_plan_get_stats(plan, &st);
    CHECK_MSG(plan && st.handler_steps == 0, "%" PRId64 " handler steps", st.handler_steps);
    /* Odd row counts do not fill g's rows of 12: the interpreter's error. */
    for (int64_t n = 0; n <= 8; n++) {
        int64_t z[2] = {n, 6};
        cxla_literal *args[2] = {arg(&m->entry->params[0]->shape, z, -4, 0.5, 3e5),
                                 arg(&m->entry->params[1]->shape, NULL, 100, 1, 0)};
        char what[64];
        snprintf(what, sizeof(what), "%" PRId64 " rows", n);
        bool ok = args[0] && args[1] && same(m, compiled, args, 2, what);
        CHECK_MSG(ok == (n % 2 == 0), "%s: %s", what, ok ? "ran" : "failed");
        cxla_literal_free(args[0]);
        cxla_literal_free(args[1]);
    }
    cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
    /* A bound of 0: no elements, whatever the sizes. */
    static const char *empty = "HloModule empty\n"
                               "ENTRY main {\n"
                               "  x = f32[<=4,0] parameter(0)\n"
                               "  n = f32[<=4,0] negate(x)\n"
                               "  ROOT t = f32[0,<=4] transpose(n), dimensions={1,0}\n"
                               "}\n";
    m = parse(empty);
    compiled = m ? compile(m) : NULL;
    if (compiled) {
        for (int64_t k = 0; k <= 4; k++) {
            int64_t z[2] = {k, 0};
            cxla_literal *args[1] = {arg(&m->entry->params[0]->shape, z, 1, 1, 5)};
            CHECK(args[0] && same(m, compiled, args, 1, "a bound of 0"));
            cxla_literal_free(args[0]);
        }
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
    static const char *past = "HloModule slice_past\n"
                              "ENTRY main {\n"
                              "  x = f32[<=8] parameter(0)\n"
                              "  ROOT s = f32[3] slice(x), slice={[1:4:1]}\n"
                              "}\n";
    m = parse(past);
    compiled = m ? compile(m) : NULL;
    if (compiled) {
        check_what(compiled, "s", "kernel");
        for (int64_t n = 2; n <= 5; n++) {
            cxla_literal *args[1] = {arg(&m->entry->params[0]->shape, &n, 1, 1, 5e5)};
            char what[64];
            snprintf(what, sizeof(what), "a slice to 4 of %" PRId64, n);
            bool ok = args[0] && same(m, compiled, args, 1, what);
            CHECK_MSG(ok == (n >= 4), "%s: %s", what, ok ? "ran" : "failed");
            cxla_literal_free(args[0]);
        }
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
}

/* Dots over dynamic dimensions: the operands' padding (garbage) is zeroed before the
 * kernel at the bounds, so the contracting dimensions add nothing of it; a contracting
 * size of 0 gives zeros; contracting sizes that differ are the interpreter's error. */
static void test_dot(void) {
    static const char *text =
        "HloModule dots\n"
        "ENTRY main {\n"
        "  a = f32[<=5,<=7] parameter(0)\n"
        "  b = f32[<=7,<=4] parameter(1)\n"
        "  i = s32[<=5,<=7] parameter(2)\n"
        "  j = s32[<=7,<=4] parameter(3)\n"
        "  d = f32[<=5,<=4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  e = s32[<=5,<=4] dot(i, j), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  ROOT r = (f32[<=5,<=4], s32[<=5,<=4]) tuple(d, e)\n"
        "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (!compiled) {
        cxla_module_destroy(m);
        return;
    }
    check_what(compiled, "e", "kernel");
    static const int64_t sz[][4] = {{3, 4, 4, 2}, {0, 0, 0, 0}, {5, 7, 7, 4},
                                    {2, 0, 0, 3}, {1, 7, 7, 1}, {3, 4, 5, 2}};
    for (size_t k = 0; k < sizeof(sz) / sizeof(sz[0]); k++) {
        const int64_t *z = sz[k];
        cxla_literal *args[4] = {arg(&m->entry->params[0]->shape, z, -3, 0.5, 1e6),
                                 arg(&m->entry->params[1]->shape, z + 2, 2, -0.25, -1e6),
                                 arg(&m->entry->params[2]->shape, z, -3, 1, 1000000),
                                 arg(&m->entry->params[3]->shape, z + 2, 5, -1, -1000000)};
        char what[64];
        snprintf(what, sizeof(what),
                 "dot of (%" PRId64 ",%" PRId64 ") and (%" PRId64 ",%" PRId64 ")", z[0], z[1], z[2],
                 z[3]);
        bool ok = args[0] && args[1] && args[2] && args[3] && same(m, compiled, args, 4, what);
        CHECK_MSG(ok == (z[1] == z[2]), "%s: %s", what, ok ? "ran" : "failed");
        for (int a = 0; a < 4; a++) cxla_literal_free(args[a]);
    }
    cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* Arguments of a dynamic parameter are bound into the plan's arena at the bounds: static
 * literals smaller than the bounds (their rows at other strides), dynamic ones of the same
 * or other bounds, a column-major one (the interpreter's binding), one too large (its
 * error); set-dimension-size to the bounds shows the zeros around the value. */
static void test_arguments(void) {
    static const char *text = "HloModule arguments\n"
                              "ENTRY main {\n"
                              "  x = f32[<=8,<=6] parameter(0)\n"
                              "  n = f32[<=8,<=6] negate(x)\n"
                              "  eight = s32[] constant(8)\n"
                              "  six = s32[] constant(6)\n"
                              "  a = f32[<=8,<=6] set-dimension-size(x, eight), dimensions={0}\n"
                              "  b = f32[<=8,<=6] set-dimension-size(a, six), dimensions={1}\n"
                              "  ROOT r = (f32[<=8,<=6], f32[<=8,<=6]) tuple(n, b)\n"
                              "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (!compiled) {
        cxla_module_destroy(m);
        return;
    }
    static const char *const shapes[] = {"f32[3,4]",     "f32[8,6]",     "f32[0,5]",
                                         "f32[<=9,<=7]", "f32[<=8,<=6]", "f32[3,4]{0,1}",
                                         "f32[9,2]"};
    static const int64_t sizes[][2] = {{3, 4}, {8, 6}, {0, 5}, {5, 2}, {7, 1}, {3, 4}, {9, 2}};
    for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
        cxla_shape *sh = NULL;
        cxla_status st = cxla_shape_parse(shapes[k], strlen(shapes[k]), &sh);
        CHECK_MSG(!st, "shape %s", shapes[k]);
        cxla_status_free(st);
        if (!sh) continue;
        cxla_literal *args[1] = {arg(sh, sizes[k], 1, 1.5, -4e5)};
        if (args[0] && sh->layout) { /* arg() filled it row-major: relay to the layout */
            cxla_literal *relaid = NULL;
            cxla_shape rm = *sh;
            rm.layout = NULL;
            cxla_literal_free(args[0]);
            args[0] = arg(&rm, sizes[k], 1, 1.5, -4e5);
            st = cxla_literal_relayout(args[0], sh->layout, &relaid);
            CHECK(!st);
            cxla_status_free(st);
            cxla_literal_free(args[0]);
            args[0] = relaid;
        }
        char what[64];
        snprintf(what, sizeof(what), "an argument %s", shapes[k]);
        bool ok = args[0] && same(m, compiled, args, 1, what);
        CHECK_MSG(ok == (k + 1 < sizeof(shapes) / sizeof(shapes[0])), "%s: %s", what,
                  ok ? "ran" : "failed");
        cxla_literal_free(args[0]);
        cxla_shape_free(sh);
    }
    cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* get-dimension-size and set-dimension-size as steps: a copy of an argument, over the
 * buffer of a value that dies there, the size back at the bound (what was there shows:
 * the zeros of a result's padding), and sizes outside the bound (the interpreter's
 * error). */
static void test_sizes(void) {
    static const char *text = "HloModule sizes\n"
                              "ENTRY main {\n"
                              "  x = f32[<=8] parameter(0)\n"
                              "  n = s32[] parameter(1)\n"
                              "  a = f32[<=8] set-dimension-size(x, n), dimensions={0}\n"
                              "  neg = f32[<=8] negate(a)\n"
                              "  eight = s32[] constant(8)\n"
                              "  b = f32[<=8] set-dimension-size(neg, eight), dimensions={0}\n"
                              "  ga = s32[] get-dimension-size(a), dimensions={0}\n"
                              "  gx = s32[] get-dimension-size(x), dimensions={0}\n"
                              "  ROOT r = (f32[<=8], f32[<=8], s32[], s32[]) tuple(a, b, ga, gx)\n"
                              "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (!compiled) {
        cxla_module_destroy(m);
        return;
    }
    check_what(compiled, "a", "sizes");
    check_what(compiled, "b", "in place");
    check_what(compiled, "ga", "sizes");
    check_what(compiled, "neg", "kernel");
    const cpu_plan *plan = cpu_compiled_plan(compiled);
    cpu_plan_stats st = {0};
    if (plan) cpu_plan_get_stats(plan, &st);
    CHECK(plan && st.handler_steps == 0);
    static const int64_t xs[] = {0, 2, 5, 8}, ns[] = {0, 1, 3, 8, 9, -1};
    for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
        for (size_t j = 0; j < sizeof(ns) / sizeof(ns[0]); j++) {
            cxla_literal *args[2] = {arg(&m->entry->params[0]->shape, &xs[i], 1, 1, 77),
                                     scalar(CXLA_S32, (double)ns[j])};
            char what[64];
            snprintf(what, sizeof(what), "x at %" PRId64 ", size %" PRId64, xs[i], ns[j]);
            if (args[0] && args[1]) {
                bool ok = same(m, compiled, args, 2, what);
                CHECK_MSG(ok == (ns[j] >= 0 && ns[j] <= 8), "%s: %s", what, ok ? "ran" : "failed");
            }
            cxla_literal_free(args[0]);
            cxla_literal_free(args[1]);
        }
    }
    cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* The moves of elements by the sizes (src/cpu/cpu_dynamic.c): reshape of inner dynamic
 * dimensions, concatenate along a dynamic dimension, pad (negative and interior padding),
 * reverse, dynamic-slice (a whole dimension follows its size), dynamic-update-slice,
 * dynamic-reshape; and iota, a kernel at its bounds. No handler steps; the interpreter's
 * values (garbage in the arguments' padding never shows) and its errors where a slice or
 * an update does not fit the sizes. */
static void test_moves(void) {
    static const char *text =
        "HloModule moves\n"
        "ENTRY main {\n"
        "  x = s32[<=8,<=6] parameter(0)\n"
        "  y = s32[<=8,<=6] parameter(1)\n"
        "  i = s32[] parameter(2)\n"
        "  j = s32[] parameter(3)\n"
        "  flat = s32[<=48] reshape(x)\n"
        "  cat = s32[<=8,<=18] concatenate(x, y, x), dimensions={1}\n"
        "  z = s32[] constant(-1)\n"
        "  pd = s32[<=18,<=13] pad(x, z), padding=1_2_1x-1_3_1\n"
        "  rv = s32[<=8,<=6] reverse(x), dimensions={0,1}\n"
        "  pz = s32[<=10,<=7] pad(x, z), padding=2_0x-2_3\n"
        "  r0 = s32[<=8,<=6] reverse(x), dimensions={0}\n"
        "  r1 = s32[<=8,<=6] reverse(x), dimensions={1}\n"
        "  ds = s32[<=8,<=6] dynamic-slice(x, i, j), dynamic_slice_sizes={8,6}\n"
        "  d0 = s32[] get-dimension-size(x), dimensions={0}\n"
        "  d1 = s32[] get-dimension-size(x), dimensions={1}\n"
        "  dr = s32[<=6,<=8] dynamic-reshape(x, d1, d0)\n"
        "  io = s32[<=8,<=6] iota(), iota_dimension=1\n"
        "  ROOT t = (s32[<=48], s32[<=8,<=18], s32[<=18,<=13], s32[<=8,<=6], s32[<=8,<=6], "
        "s32[<=8,<=6], s32[<=6,<=8], s32[<=8,<=6], s32[<=10,<=7], s32[<=8,<=6]) "
        "tuple(flat, cat, pd, rv, r1, ds, dr, io, pz, r0)\n"
        "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (!compiled) {
        cxla_module_destroy(m);
        return;
    }
    const cpu_plan *plan = cpu_compiled_plan(compiled);
    cpu_plan_stats st = {0};
    if (plan) cpu_plan_get_stats(plan, &st);
    CHECK_MSG(plan && st.handler_steps == 0, "%" PRId64 " handler steps", st.handler_steps);
    CHECK_MSG(st.move_steps == 9, "%" PRId64 " moves, not 9", st.move_steps);
    static const char *moves[] = {"flat", "cat", "pd", "rv", "r1", "ds", "dr", "pz", "r0"};
    for (size_t k = 0; k < sizeof(moves) / sizeof(moves[0]); k++)
        check_what(compiled, moves[k], "dynamic move");
    check_what(compiled, "io", "kernel");
    static const int64_t starts[][2] = {{0, 0}, {1, 2}, {-3, 9}, {100, -100}};
    for (int k = 0; k < SIZES2; k++) {
        for (size_t q = 0; q < sizeof(starts) / sizeof(starts[0]); q++) {
            const cxla_shape *ps = &m->entry->params[0]->shape;
            cxla_literal *args[4] = {
                arg(ps, sizes2[k], 1, 1, 7777), arg(ps, sizes2[k], 100, 1, -99),
                scalar(CXLA_S32, (double)starts[q][0]), scalar(CXLA_S32, (double)starts[q][1])};
            char what[96];
            snprintf(what, sizeof(what), "moves at sizes (%" PRId64 ",%" PRId64 "), starts %d",
                     sizes2[k][0], sizes2[k][1], (int)q);
            if (args[0] && args[1] && args[2] && args[3]) CHECK(same(m, compiled, args, 4, what));
            for (int a = 0; a < 4; a++) cxla_literal_free(args[a]);
        }
    }
    cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
    /* Slices and updates that must fit the sizes: the interpreter's errors below them. */
    static const char *fit =
        "HloModule fit\n"
        "ENTRY main {\n"
        "  x = s32[<=8,<=6] parameter(0)\n"
        "  u = s32[<=3,2] parameter(1)\n"
        "  i = s32[] parameter(2)\n"
        "  ds = s32[<=8,2] dynamic-slice(x, i, i), dynamic_slice_sizes={8,2}\n"
        "  up = s32[<=8,<=6] dynamic-update-slice(x, u, i, i)\n"
        "  cs = s32[<=16,<=6] concatenate(x, x), dimensions={0}\n"
        "  ROOT t = (s32[<=8,2], s32[<=8,<=6], s32[<=16,<=6]) tuple(ds, up, cs)\n"
        "}\n";
    m = parse(fit);
    compiled = m ? compile(m) : NULL;
    if (compiled) {
        const cpu_plan *p2 = cpu_compiled_plan(compiled);
        cpu_plan_stats s2 = {0};
        if (p2) cpu_plan_get_stats(p2, &s2);
        CHECK_MSG(p2 && s2.handler_steps == 0, "%" PRId64 " handler steps", s2.handler_steps);
        static const int64_t us[][2] = {{0, 2}, {2, 2}, {3, 2}};
        int fails = 0, runs = 0;
        for (int k = 0; k < SIZES2; k++) {
            for (size_t q = 0; q < sizeof(us) / sizeof(us[0]); q++) {
                cxla_literal *args[3] = {arg(&m->entry->params[0]->shape, sizes2[k], 1, 1, 555),
                                         arg(&m->entry->params[1]->shape, us[q], -1, -1, 444),
                                         scalar(CXLA_S32, 1)};
                char what[96];
                snprintf(what, sizeof(what), "fit at sizes (%" PRId64 ",%" PRId64 "), update %d",
                         sizes2[k][0], sizes2[k][1], (int)q);
                if (args[0] && args[1] && args[2]) {
                    runs++;
                    fails += !same(m, compiled, args, 3, what);
                }
                for (int a = 0; a < 3; a++) cxla_literal_free(args[a]);
            }
        }
        /* Both outcomes are covered: sizes that fit, and the errors. */
        CHECK_MSG(fails > 0 && fails < runs, "%d of %d runs failed", fails, runs);
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
}

/* Float sums and products in exact math over dynamic dimensions: a step of the
 * interpreter's own typed loop over the elements below the sizes (cpu_dynamic.c), so the
 * pairwise order of the sum follows the actual size and the bits are the interpreter's;
 * values that round in every order, sizes across the pairwise leaves (16) and halves. An
 * f16 sum (rounded after every step) and an init that is not the identity too. */
static void test_exact_reduce(void) {
    static const char *text =
        "HloModule exact_reduces\n"
        "add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT r = f32[] add(a, b)\n}\n"
        "mul_f64 {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n"
        "  ROOT r = f64[] multiply(a, b)\n}\n"
        "add_f16 {\n  a = f16[] parameter(0)\n  b = f16[] parameter(1)\n"
        "  ROOT r = f16[] add(a, b)\n}\n"
        "ENTRY main {\n"
        "  x = f32[<=40,<=37] parameter(0)\n"
        "  y = f64[<=40,<=37] convert(x)\n"
        "  h = f16[<=40,<=37] convert(x)\n"
        "  z = f32[] constant(0.3)\n"
        "  one = f64[] constant(1)\n"
        "  zh = f16[] constant(0)\n"
        "  rows = f32[<=40] reduce(x, z), dimensions={1}, to_apply=add_f32\n"
        "  cols = f32[<=37] reduce(x, z), dimensions={0}, to_apply=add_f32\n"
        "  all = f32[] reduce(x, z), dimensions={0,1}, to_apply=add_f32\n"
        "  prod = f64[<=40] reduce(y, one), dimensions={1}, to_apply=mul_f64\n"
        "  hs = f16[<=37] reduce(h, zh), dimensions={0}, to_apply=add_f16\n"
        "  ROOT r = (f32[<=40], f32[<=37], f32[], f64[<=40], f16[<=37]) "
        "tuple(rows, cols, all, prod, hs)\n"
        "}\n";
    const char *old = getenv("CXLA_CPU_EXACT_MATH");
    char *saved = old ? strdup(old) : NULL;
    setenv("CXLA_CPU_EXACT_MATH", "1", 1);
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (compiled) {
        const cpu_plan *plan = cpu_compiled_plan(compiled);
        cpu_plan_stats st = {0};
        if (plan) cpu_plan_get_stats(plan, &st);
        CHECK_MSG(plan && st.handler_steps == 0, "%" PRId64 " handler steps", st.handler_steps);
        static const char *names[] = {"rows", "cols", "all", "prod", "hs"};
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
            check_what(compiled, names[k], "dynamic reduce");
        static const int64_t sizes[][2] = {{0, 0},   {1, 1},  {17, 33}, {40, 37}, {33, 16},
                                           {16, 17}, {0, 37}, {40, 0},  {39, 36}};
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            cxla_literal *a = arg(&m->entry->params[0]->shape, sizes[k], 0.1, 0.0371, 3e7);
            char what[64];
            snprintf(what, sizeof(what), "exact reduce at (%" PRId64 ",%" PRId64 ")", sizes[k][0],
                     sizes[k][1]);
            if (a) CHECK(same(m, compiled, &a, 1, what));
            cxla_literal_free(a);
        }
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
    if (saved)
        setenv("CXLA_CPU_EXACT_MATH", saved, 1);
    else
        unsetenv("CXLA_CPU_EXACT_MATH");
    free(saved);
}

/* Sorts along a static dimension (one operand, or values with keys) run their kernels at
 * the bounds: each row sorts on its own, the garbage of the padding rows only among
 * themselves, then zeroed; keys and values of different sizes are the interpreter's error.
 * Along the dynamic dimension the kernel takes the sizes (only the first size elements
 * sort; tests/cpu/test_cpu_dynamic_lib.c). */
static void test_sort(void) {
    static const char *text = "HloModule sorts\n"
                              "gt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                              "  ROOT r = pred[] compare(a, b), direction=GT\n}\n"
                              "gt4 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                              "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
                              "  ROOT r = pred[] compare(a, b), direction=GT\n}\n"
                              "ENTRY main {\n"
                              "  x = f32[<=8,6] parameter(0)\n"
                              "  rows = f32[<=8,6] sort(x), dimensions={1}, to_apply=gt\n"
                              "  cols = f32[<=8,6] sort(x), dimensions={0}, to_apply=gt\n"
                              "  k = s32[<=8,6] parameter(1)\n"
                              "  kv = (f32[<=8,6], s32[<=8,6]) sort(x, k), dimensions={1}, "
                              "to_apply=gt4\n"
                              "  ROOT t = (f32[<=8,6], f32[<=8,6], (f32[<=8,6], s32[<=8,6])) "
                              "tuple(rows, cols, kv)\n"
                              "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (compiled) {
        check_what(compiled, "rows", "kernel");
        check_what(compiled, "cols", "kernel"); /* the sizes as an input: cpu_dynamic_lib.c */
        check_what(compiled, "kv", "kernel");
        /* The keys' sizes must agree with the values' (the interpreter's error when not). */
        static const int64_t sizes[][2] = {{0, 6}, {3, 6}, {8, 6}, {1, 6}, {3, 6}};
        static const int64_t ksizes[][2] = {{0, 6}, {3, 6}, {8, 6}, {1, 6}, {2, 6}};
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            cxla_literal *a[2] = {arg(&m->entry->params[0]->shape, sizes[k], 5, -0.75, 1e9),
                                  arg(&m->entry->params[1]->shape, ksizes[k], 0, 1, -5)};
            char what[64];
            snprintf(what, sizeof(what), "sort at (%" PRId64 ",6), keys at %" PRId64, sizes[k][0],
                     ksizes[k][0]);
            if (a[0] && a[1]) CHECK(same(m, compiled, a, 2, what) == (sizes[k][0] == ksizes[k][0]));
            cxla_literal_free(a[0]);
            cxla_literal_free(a[1]);
        }
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
}

/* gather from a static operand with dynamic indices runs its kernel at the bounds: the
 * garbage indices of the padding are clamped within the operand, and their rows zeroed. */
static void test_gather(void) {
    static const char *text =
        "HloModule gathers\n"
        "ENTRY main {\n"
        "  m = s32[5,3] parameter(0)\n"
        "  i = s32[<=6] parameter(1)\n"
        "  g = s32[<=6,3] gather(m, i), offset_dims={1}, collapsed_slice_dims={0}, "
        "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}\n"
        "  ROOT n = s32[<=6,3] negate(g)\n"
        "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (compiled) {
        const cpu_plan *plan = cpu_compiled_plan(compiled);
        cpu_plan_stats st = {0};
        if (plan) cpu_plan_get_stats(plan, &st);
        CHECK_MSG(plan && st.handler_steps == 0, "%" PRId64 " handler steps", st.handler_steps);
        check_what(compiled, "g", "kernel");
        static const int64_t sizes[] = {0, 2, 6, 5};
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            cxla_literal *a[2] = {arg(&m->entry->params[0]->shape, NULL, 1, 1, 0),
                                  arg(&m->entry->params[1]->shape, &sizes[k], 4, -1, 1e6)};
            char what[64];
            snprintf(what, sizeof(what), "gather at %" PRId64, sizes[k]);
            if (a[0] && a[1]) CHECK(same(m, compiled, a, 2, what));
            cxla_literal_free(a[0]);
            cxla_literal_free(a[1]);
        }
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_elementwise), TEST(test_errors), TEST(test_reduce), TEST(test_dot),
          TEST(test_shape_ops), TEST(test_arguments), TEST(test_sizes), TEST(test_moves),
          TEST(test_exact_reduce), TEST(test_sort), TEST(test_gather))
