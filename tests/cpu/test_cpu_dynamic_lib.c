/* Sort, gather, scatter and map of bounded dynamic shapes on the cpu backend as kernels
 * at the bounds (src/cpu/cpu_dynamic_lib.c, docs/semantics.md "Bounded dynamic shapes run
 * as steps too"), not the interpreter's handler: a sort along a dynamic dimension takes the
 * run-time sizes, a gather from a dynamic operand and a scatter over dynamic shapes read
 * indices clamped or moved out of range by the sizes, a map runs at the bounds. Every
 * module runs on the interpreter and the cpu backend with arguments whose padding holds
 * garbage, at sizes 0, in between and at the bounds; the results, the padding the
 * interpreter leaves (zeros, shown by set-dimension-size) and its errors must be the same. */
#define _POSIX_C_SOURCE 200809L
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

/* No handler steps in |compiled|; each of |names| runs as a kernel. */
static void all_kernels(void *compiled, const char *const *names, size_t count) {
    const cpu_plan *plan = cpu_compiled_plan(compiled);
    cpu_plan_stats st = {0};
    if (plan) cpu_plan_get_stats(plan, &st);
    CHECK_MSG(plan && st.handler_steps == 0, "%" PRId64 " handler steps", st.handler_steps);
    for (size_t k = 0; k < count; k++) check_what(compiled, names[k], "kernel");
}

/* Sorts along a dynamic dimension: one operand along either dimension of a matrix with
 * two dynamic ones, keys with values (a recognized comparator), a comparator computation
 * (absolute values, so ties keep their order: the sort is stable), integers in a total
 * order; the results' padding shown whole by set-dimension-size. Keys and values of
 * different sizes are the interpreter's error. */
static void test_sort(void) {
    static const char *text =
        "HloModule sorts\n"
        "gt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT r = pred[] compare(a, b), direction=GT\n}\n"
        "lt4 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
        "  ROOT r = pred[] compare(a, b), direction=LT\n}\n"
        "abs_lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
        "  x = f32[] abs(a)\n  y = f32[] abs(b)\n"
        "  ROOT r = pred[] compare(x, y), direction=LT\n}\n"
        "lt_s {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
        "  ROOT r = pred[] compare(a, b), direction=LT\n}\n"
        "ENTRY main {\n"
        "  x = f32[<=8,<=6] parameter(0)\n"
        "  k = s32[<=8,<=6] parameter(1)\n"
        "  rows = f32[<=8,<=6] sort(x), dimensions={1}, to_apply=gt\n"
        "  cols = f32[<=8,<=6] sort(x), dimensions={0}, to_apply=gt\n"
        "  kv = (f32[<=8,<=6], s32[<=8,<=6]) sort(x, k), dimensions={1}, to_apply=lt4\n"
        "  ab = (f32[<=8,<=6], s32[<=8,<=6]) sort(x, k), dimensions={0}, to_apply=abs_lt\n"
        "  ks = s32[<=8,<=6] sort(k), dimensions={1}, to_apply=lt_s\n"
        "  eight = s32[] constant(8)\n  six = s32[] constant(6)\n"
        "  w0 = f32[<=8,<=6] set-dimension-size(cols, eight), dimensions={0}\n"
        "  w = f32[<=8,<=6] set-dimension-size(w0, six), dimensions={1}\n"
        "  v = s32[<=8,<=6] get-tuple-element(ab), index=1\n"
        "  v0 = s32[<=8,<=6] set-dimension-size(v, eight), dimensions={0}\n"
        "  vw = s32[<=8,<=6] set-dimension-size(v0, six), dimensions={1}\n"
        "  ROOT t = (f32[<=8,<=6], f32[<=8,<=6], (f32[<=8,<=6], s32[<=8,<=6]), "
        "(f32[<=8,<=6], s32[<=8,<=6]), s32[<=8,<=6], f32[<=8,<=6], s32[<=8,<=6]) "
        "tuple(rows, cols, kv, ab, ks, w, vw)\n"
        "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (compiled) {
        static const char *const names[] = {"rows", "cols", "kv", "ab", "ks"};
        all_kernels(compiled, names, sizeof(names) / sizeof(names[0]));
        static const int64_t ksizes[][2] = {{3, 4}, {0, 0}, {8, 6}, {0, 6}, {8, 0},
                                            {1, 1}, {7, 5}, {2, 5}, {7, 4}};
        for (int i = 0; i < SIZES2 + 2; i++) {
            const int64_t *xs = sizes2[i < SIZES2 ? i : SIZES2 - 1];
            /* Values that repeat (ties: the stable order shows) and change sign. */
            cxla_literal *a[2] = {arg(&m->entry->params[0]->shape, xs, 2.5, -0.5, 1e9),
                                  arg(&m->entry->params[1]->shape, ksizes[i], 9, -1, -77)};
            if (a[0]) {
                char *d = cxla_literal_data(a[0]);
                for (int64_t e = 0; e < 48; e++) {
                    float f;
                    memcpy(&f, d + 4 * e, 4);
                    if (f < 1e8f) f = (float)((int)(f * 2) % 5) - 2.0f; /* -2 .. 2, repeated */
                    memcpy(d + 4 * e, &f, 4);
                }
            }
            char what[80];
            snprintf(what, sizeof(what),
                     "sort at (%" PRId64 ",%" PRId64 "), keys (%" PRId64 ",%" PRId64 ")", xs[0],
                     xs[1], ksizes[i][0], ksizes[i][1]);
            bool agree = xs[0] == ksizes[i][0] && xs[1] == ksizes[i][1];
            if (a[0] && a[1]) CHECK(same(m, compiled, a, 2, what) == agree);
            cxla_literal_free(a[0]);
            cxla_literal_free(a[1]);
        }
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
}

/* map at the bounds: two operands and a computation that divides (integer division by
 * the padding's garbage zeros must not trap: the emitter's division is XLA's); the
 * padding comes out zero as the interpreter leaves it; operands of different sizes are
 * the interpreter's error. */
static void test_map(void) {
    static const char *text = "HloModule maps\n"
                              "f {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
                              "  q = s32[] divide(a, b)\n  ROOT r = s32[] add(q, a)\n}\n"
                              "ENTRY main {\n"
                              "  x = s32[<=8,<=6] parameter(0)\n"
                              "  y = s32[<=8,<=6] parameter(1)\n"
                              "  mp = s32[<=8,<=6] map(x, y), dimensions={0,1}, to_apply=f\n"
                              "  eight = s32[] constant(8)\n  six = s32[] constant(6)\n"
                              "  w0 = s32[<=8,<=6] set-dimension-size(mp, eight), dimensions={0}\n"
                              "  w = s32[<=8,<=6] set-dimension-size(w0, six), dimensions={1}\n"
                              "  ROOT t = (s32[<=8,<=6], s32[<=8,<=6]) tuple(mp, w)\n"
                              "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (compiled) {
        static const char *const names[] = {"mp"};
        all_kernels(compiled, names, 1);
        for (int i = 0; i < SIZES2; i++) {
            const cxla_shape *ps = &m->entry->params[0]->shape;
            cxla_literal *a[2] = {arg(ps, sizes2[i], 7, 3, 5), arg(ps, sizes2[i], -3, 1, 0)};
            char what[64];
            snprintf(what, sizeof(what), "map at (%" PRId64 ",%" PRId64 ")", sizes2[i][0],
                     sizes2[i][1]);
            if (a[0] && a[1]) CHECK(same(m, compiled, a, 2, what));
            cxla_literal_free(a[0]);
            cxla_literal_free(a[1]);
        }
        /* Sizes that disagree. */
        static const int64_t other[2] = {3, 3};
        cxla_literal *a[2] = {arg(&m->entry->params[0]->shape, sizes2[0], 1, 1, 5),
                              arg(&m->entry->params[1]->shape, other, 1, 1, 5)};
        if (a[0] && a[1]) CHECK(!same(m, compiled, a, 2, "map of different sizes"));
        cxla_literal_free(a[0]);
        cxla_literal_free(a[1]);
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
}

/* gather from a dynamic operand: windows of 2x3 (and single rows) whose starts clamp
 * within the operand's sizes, not its bounds, with dynamic indices too; indices that run
 * negative and past the sizes; an operand smaller than the slice is the interpreter's
 * error (shape inference at the cut sizes). */
static void test_gather(void) {
    static const char *text =
        "HloModule gathers\n"
        "ENTRY main {\n"
        "  m = s32[<=7,<=5] parameter(0)\n"
        "  i = s32[<=6,2] parameter(1)\n"
        "  j = s64[<=6] parameter(2)\n"
        "  g = s32[<=6,2,3] gather(m, i), offset_dims={1,2}, collapsed_slice_dims={}, "
        "start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}\n"
        "  r = s32[<=6,<=5] gather(m, j), offset_dims={1}, collapsed_slice_dims={0}, "
        "start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}\n"
        "  six = s32[] constant(6)\n  five = s32[] constant(5)\n"
        "  w0 = s32[<=6,<=5] set-dimension-size(r, six), dimensions={0}\n"
        "  w = s32[<=6,<=5] set-dimension-size(w0, five), dimensions={1}\n"
        "  ROOT t = (s32[<=6,2,3], s32[<=6,<=5], s32[<=6,<=5]) tuple(g, r, w)\n"
        "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (compiled) {
        static const char *const names[] = {"g", "r"};
        all_kernels(compiled, names, 2);
        static const int64_t ms[][2] = {{7, 5}, {2, 3}, {5, 4}, {3, 5}, {1, 2}, {0, 0}, {7, 3}};
        static const int64_t is[] = {6, 0, 4, 1, 6, 3, 2};
        int fails = 0, runs = 0;
        for (size_t k = 0; k < sizeof(is) / sizeof(is[0]); k++) {
            int64_t isz[2] = {is[k], 2};
            cxla_literal *a[3] = {arg(&m->entry->params[0]->shape, ms[k], 1, 1, -999),
                                  arg(&m->entry->params[1]->shape, isz, -2, 1, 1e6),
                                  arg(&m->entry->params[2]->shape, &is[k], 6, -2, -1e6)};
            char what[80];
            snprintf(what, sizeof(what),
                     "gather from (%" PRId64 ",%" PRId64 "), %" PRId64 " indices", ms[k][0],
                     ms[k][1], is[k]);
            if (a[0] && a[1] && a[2]) {
                runs++;
                fails += !same(m, compiled, a, 3, what);
            }
            for (int q = 0; q < 3; q++) cxla_literal_free(a[q]);
        }
        CHECK_MSG(fails > 0 && fails < runs, "%d of %d runs failed", fails, runs);
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
}

/* scatter over dynamic shapes: an add and an assignment of 2x2 windows into an operand
 * with two dynamic dimensions, indices and updates with a dynamic batch dimension, u32
 * indices (a window moved out of range is the type's largest value); windows the cut
 * operand cannot hold are skipped (not clamped), indices in the padding never apply;
 * updates whose size differs from the indices' are the interpreter's error. */
static void test_scatter(void) {
    static const char *text =
        "HloModule scatters\n"
        "add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
        "  ROOT r = s32[] add(a, b)\n}\n"
        "put {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT r = s32[] copy(b)\n}\n"
        "ENTRY main {\n"
        "  x = s32[<=7,<=5] parameter(0)\n"
        "  i = s32[<=6,2] parameter(1)\n"
        "  u = s32[<=6,2,2] parameter(2)\n"
        "  iu = u32[<=6,2] convert(i)\n"
        "  sa = s32[<=7,<=5] scatter(x, i, u), update_window_dims={1,2}, "
        "inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, "
        "to_apply=add\n"
        "  sp = s32[<=7,<=5] scatter(x, iu, u), update_window_dims={1,2}, "
        "inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, "
        "to_apply=put\n"
        "  seven = s32[] constant(7)\n  five = s32[] constant(5)\n"
        "  w0 = s32[<=7,<=5] set-dimension-size(sa, seven), dimensions={0}\n"
        "  w = s32[<=7,<=5] set-dimension-size(w0, five), dimensions={1}\n"
        "  ROOT t = (s32[<=7,<=5], s32[<=7,<=5], s32[<=7,<=5]) tuple(sa, sp, w)\n"
        "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (compiled) {
        static const char *const names[] = {"sa", "sp"};
        all_kernels(compiled, names, 2);
        static const int64_t xs[][2] = {{7, 5}, {2, 3}, {5, 4}, {3, 5}, {1, 2}, {0, 0}, {4, 4}};
        static const int64_t is[] = {6, 0, 4, 5, 6, 3, 2};
        static const int64_t us[] = {6, 0, 4, 5, 6, 3, 3};
        int fails = 0, runs = 0;
        for (size_t k = 0; k < sizeof(is) / sizeof(is[0]); k++) {
            int64_t isz[2] = {is[k], 2}, usz[3] = {us[k], 2, 2};
            cxla_literal *a[3] = {arg(&m->entry->params[0]->shape, xs[k], 1, 1, -999),
                                  arg(&m->entry->params[1]->shape, isz, -1, 0.5, 2),
                                  arg(&m->entry->params[2]->shape, usz, 100, 10, 5e5)};
            char what[96];
            snprintf(what, sizeof(what),
                     "scatter into (%" PRId64 ",%" PRId64 "), %" PRId64 " indices, %" PRId64
                     " updates",
                     xs[k][0], xs[k][1], is[k], us[k]);
            if (a[0] && a[1] && a[2]) {
                runs++;
                fails += !same(m, compiled, a, 3, what);
            }
            for (int q = 0; q < 3; q++) cxla_literal_free(a[q]);
        }
        CHECK_MSG(fails > 0 && fails < runs, "%d of %d runs failed", fails, runs);
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
}

/* bitcast-convert element by element at the bounds (to the same width and to bytes, a
 * static minor dimension added) with the padding zeroed; bitcast of an operand at its
 * bounds is the static bitcast, of a padded one the interpreter's error. */
static void test_bitcast(void) {
    static const char *text =
        "HloModule bitcasts\n"
        "ENTRY main {\n"
        "  x = f32[<=8,<=6] parameter(0)\n"
        "  b = s32[<=8,<=6] bitcast-convert(x)\n"
        "  w = u8[<=8,<=6,4] bitcast-convert(x)\n"
        "  c = f32[<=8,<=6] bitcast(x)\n"
        "  eight = s32[] constant(8)\n  six = s32[] constant(6)\n"
        "  w0 = s32[<=8,<=6] set-dimension-size(b, eight), dimensions={0}\n"
        "  z = s32[<=8,<=6] set-dimension-size(w0, six), dimensions={1}\n"
        "  ROOT t = (s32[<=8,<=6], u8[<=8,<=6,4], f32[<=8,<=6], s32[<=8,<=6]) tuple(b, w, c, z)\n"
        "}\n";
    cxla_module *m = parse(text);
    void *compiled = m ? compile(m) : NULL;
    if (compiled) {
        static const char *const names[] = {"b", "w", "c"};
        all_kernels(compiled, names, 3);
        for (int i = 0; i < SIZES2; i++) {
            cxla_literal *a = arg(&m->entry->params[0]->shape, sizes2[i], -1.5, 0.25, 3e9);
            char what[64];
            snprintf(what, sizeof(what), "bitcast at (%" PRId64 ",%" PRId64 ")", sizes2[i][0],
                     sizes2[i][1]);
            bool full = sizes2[i][0] == 8 && sizes2[i][1] == 6;
            if (a) CHECK(same(m, compiled, &a, 1, what) == full);
            cxla_literal_free(a);
        }
        cpu_backend.destroy(compiled);
    }
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_sort), TEST(test_map), TEST(test_gather), TEST(test_scatter),
          TEST(test_bitcast))
