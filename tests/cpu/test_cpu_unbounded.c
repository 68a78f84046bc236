/* Modules with unbounded dynamic dimensions ('?') on the cpu backend (src/cpu/cpu_specialize.c,
 * src/exec/specialize.c): one executable runs many sizes, each through a form compiled for
 * those sizes and cached (reused, evicted least recently used first), size 0 included;
 * results are the interpreter's exactly, the result's shape included ('?' dimensions
 * static at their sizes, bounded ones as declared); runs from several threads share the
 * cache; sizes a form cannot take and modules that cannot be specialized run on the
 * interpreter's driver, with the interpreter's answers and error messages. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/cpu_specialize.h"
#include "exec/specialize.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

static cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "unbounded_test", &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        test_fail(__FILE__, __LINE__, "module rejected: %s", cxla_status_message(s));
        cxla_status_free(s);
        cxla_module_destroy(m);
        return NULL;
    }
    return m;
}

static cxla_literal *lit(const char *text) {
    cxla_literal *l = NULL;
    cxla_status s = cxla_literal_parse(text, (size_t)-1, NULL, &l);
    if (s) {
        test_fail(__FILE__, __LINE__, "literal '%s': %s", text, cxla_status_message(s));
        cxla_status_free(s);
    }
    return l;
}

static void *compile(const cxla_module *m) {
    void *compiled = NULL;
    exec_compile_options co = {0};
    cxla_status s = m ? cpu_backend.compile(m, &co, &compiled) : NULL;
    CHECK_MSG(!s, "compile: %s", cxla_status_message(s));
    cxla_status_free(s);
    return compiled;
}

/* "f32[n,k] {...}" with small integers (exact in f32 whatever order sums take), varied by
 * |seed|. */
static char *array_text(const char *type, int64_t n, int64_t k, int seed) {
    size_t cap = 64 + (size_t)(n * (k ? k : 1)) * 8;
    char *t = malloc(cap);
    size_t len = k ? (size_t)snprintf(t, cap, "%s[%lld,%lld] {", type, (long long)n, (long long)k)
                   : (size_t)snprintf(t, cap, "%s[%lld] {", type, (long long)n);
    for (int64_t i = 0; i < n; i++) {
        if (k) len += (size_t)snprintf(t + len, cap - len, "%s{", i ? ", " : "");
        for (int64_t j = 0; j < (k ? k : 1); j++)
            len += (size_t)snprintf(t + len, cap - len, "%s%d", j || (!k && i) ? ", " : "",
                                    (int)((i * 7 + j * 3 + seed) % 11) - 5);
        if (k) len += (size_t)snprintf(t + len, cap - len, "}");
    }
    snprintf(t + len, cap - len, "}");
    return t;
}

static char *text_of(const cxla_literal *l) {
    return l ? cxla_literal_to_string(l, CXLA_LITERAL_PRINT_SHAPE | CXLA_LITERAL_PRINT_LAYOUT)
             : NULL;
}

/* Runs |args| on the interpreter and on |compiled|: both succeed with the same literal
 * (elements, shape, sizes and layout), or both fail with the same message. */
static void same_as_interp(const cxla_module *m, void *compiled, cxla_literal *const *args,
                           int64_t n, const char *what) {
    cxla_literal *want = NULL, *got = NULL;
    cxla_status ws = interp_run_module(m, NULL, (const cxla_literal *const *)args, n, &want);
    exec_run_options ro = {0};
    cxla_status gs =
        compiled ? cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, n, &got)
                 : cxla_error(CXLA_STATUS_INTERNAL, "not compiled");
    if (ws || gs) {
        CHECK_MSG(ws && gs, "%s: interpreter: %s; cpu: %s", what,
                  ws ? cxla_status_message(ws) : "ok", gs ? cxla_status_message(gs) : "ok");
        if (ws && gs)
            CHECK_MSG(strcmp(cxla_status_message(ws), cxla_status_message(gs)) == 0,
                      "%s: messages differ:\n  interpreter: %s\n  cpu:         %s", what,
                      cxla_status_message(ws), cxla_status_message(gs));
    } else {
        char *w = text_of(want), *g = text_of(got);
        CHECK_MSG(w && g && strcmp(w, g) == 0, "%s:\n  interpreter: %s\n  cpu:         %s", what, w,
                  g);
        CHECK_MSG(cxla_literal_equal(want, got), "%s: the elements differ", what);
        free(w);
        free(g);
    }
    cxla_status_free(ws);
    cxla_status_free(gs);
    cxla_literal_free(want);
    cxla_literal_free(got);
}

static cpu_spec_stats stats(void *compiled) {
    cpu_spec_stats st;
    cpu_compiled_spec_stats(compiled, &st);
    return st;
}

/* ---- many sizes, one executable ----------------------------------------------------------- */

static const char *const kMix =
    "HloModule mix\n"
    "add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "ENTRY e {\n"
    "  x = f32[?,3] parameter(0)\n"
    "  y = f32[?,3] parameter(1)\n"
    "  w = f32[3,4] parameter(2)\n"
    "  s = f32[?,3] add(x, y)\n"
    "  m = f32[?,3] multiply(s, x)\n"
    "  zero = f32[] constant(0)\n"
    "  r = f32[?] reduce(m, zero), dimensions={1}, to_apply=add_f32\n"
    "  d = f32[?,4] dot(s, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  flat = f32[?] reshape(s)\n"
    "  t = f32[3,?] transpose(m), dimensions={1,0}\n"
    "  b = f32[?,3,2] broadcast(s), dimensions={0,1}\n"
    "  n = s32[] get-dimension-size(x), dimensions={0}\n"
    "  c = f32[?] concatenate(r, flat), dimensions={0}\n"
    "  total = f32[] reduce(c, zero), dimensions={0}, to_apply=add_f32\n"
    "  ROOT out = (f32[?], f32[?,4], f32[3,?], f32[?,3,2], s32[], f32[?], f32[]) "
    "tuple(r, d, t, b, n, c, total)\n"
    "}\n";

static void run_mix(const cxla_module *m, void *compiled, int64_t n) {
    char *tx = array_text("f32", n, 3, 1), *ty = array_text("f32", n, 3, 4),
         *tw = array_text("f32", 3, 4, 2);
    cxla_literal *args[3] = {lit(tx), lit(ty), lit(tw)};
    char what[64];
    snprintf(what, sizeof(what), "mix at size %lld", (long long)n);
    if (args[0] && args[1] && args[2]) same_as_interp(m, compiled, args, 3, what);
    for (int i = 0; i < 3; i++) cxla_literal_free(args[i]);
    free(tx);
    free(ty);
    free(tw);
}

static void test_many_sizes(void) {
    cxla_module *m = parse(kMix);
    void *compiled = compile(m);
    static const int64_t sizes[] = {3, 1, 0, 5, 3, 8, 1, 0};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) run_mix(m, compiled, sizes[i]);
    cpu_spec_stats st = stats(compiled);
    CHECK_EQ_I64(st.compiles, 5); /* 3, 1, 0, 5, 8 */
    CHECK_EQ_I64(st.hits, 3);
    CHECK_EQ_I64(st.evictions, 0);
    CHECK_EQ_I64(st.driver_runs, 0);
    CHECK_EQ_I64(st.cached, 5);
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* The specialized form is static at the sizes: every instruction has its kernel or call. */
static void test_form_is_static(void) {
    cxla_module *m = parse(kMix), *form = NULL;
    int64_t sizes[2] = {4, 4};
    if (m) CHECK_EQ_I64(exec_unbounded_param_dims(m), 2);
    if (m) CHECK_OK(exec_specialize_module(m, sizes, 2, &form));
    if (form) {
        CHECK(cxla_shape_is_static(&form->entry->root->shape));
        const cxla_instr *c = cxla_computation_find_instr(form->entry, "c");
        CHECK(c && c->shape.rank == 1 && c->shape.dims[0] == 4 + 12);
        void *compiled = compile(form);
        CHECK_EQ_STR(cpu_compiled_call_what(compiled, "total"), "kernel");
        if (compiled) cpu_backend.destroy(compiled);
    }
    /* Sizes that the shapes reject: x and y of different sizes meet in the add. */
    sizes[1] = 5;
    cxla_module *bad = NULL;
    if (m) {
        const char *msg = CHECK_ERROR(exec_specialize_module(m, sizes, 2, &bad));
        CHECK_MSG(strstr(msg, "'s'") || strstr(msg, "s:") || strstr(msg, "add"), "%s", msg);
    }
    CHECK(bad == NULL);
    cxla_module_destroy(form);
    cxla_module_destroy(m);
}

/* Bounded dimensions beside unbounded ones: the bounded result keeps its bound and size,
 * the unbounded one comes back static; a dynamic argument for a '?' parameter is read at
 * its size. */
static void test_bounded_beside(void) {
    static const char *text = "HloModule both\n"
                              "add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                              "  ROOT s = f32[] add(a, b)\n}\n"
                              "ENTRY e {\n"
                              "  x = f32[?] parameter(0)\n"
                              "  v = f32[8] parameter(1)\n"
                              "  k = s32[] parameter(2)\n"
                              "  d = f32[<=8] set-dimension-size(v, k), dimensions={0}\n"
                              "  zero = f32[] constant(0)\n"
                              "  sx = f32[] reduce(x, zero), dimensions={0}, to_apply=add_f32\n"
                              "  bs = f32[8] broadcast(sx), dimensions={}\n"
                              "  r = f32[<=8] add(d, bs)\n"
                              "  nx = f32[?] negate(x)\n"
                              "  ROOT t = (f32[<=8], f32[?]) tuple(r, nx)\n"
                              "}\n";
    cxla_module *m = parse(text);
    void *compiled = compile(m);
    const char *xs[] = {"f32[3] {1, 2, 3}", "f32[0] {}", "f32[<=10](4) {1, -1, 2, -2}",
                        "f32[3] {4, 5, 6}"};
    const char *ks[] = {"s32[] 5", "s32[] 0", "s32[] 8", "s32[] 2"};
    for (int i = 0; i < 4; i++) {
        cxla_literal *args[3] = {lit(xs[i]), lit("f32[8] {1, 2, 3, 4, 5, 6, 7, 8}"), lit(ks[i])};
        same_as_interp(m, compiled, args, 3, xs[i]);
        for (int j = 0; j < 3; j++) cxla_literal_free(args[j]);
    }
    cpu_spec_stats st = stats(compiled);
    CHECK_EQ_I64(st.compiles, 3); /* sizes 3, 0, 4 */
    CHECK_EQ_I64(st.hits, 1);
    CHECK_EQ_I64(st.driver_runs, 0);
    /* A size beyond the bound of k: the interpreter's error, from the form's handler. */
    cxla_literal *args[3] = {lit("f32[2] {1, 2}"), lit("f32[8] {1, 2, 3, 4, 5, 6, 7, 8}"),
                             lit("s32[] 9")};
    same_as_interp(m, compiled, args, 3, "size 9 for a bound of 8");
    for (int j = 0; j < 3; j++) cxla_literal_free(args[j]);
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* A while loop over an unbounded state, and an entry layout that is not the default. */
static void test_loop_and_layout(void) {
    static const char *loop =
        "HloModule loop\n"
        "body {\n  p = (s32[], f32[?]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
        "  v = f32[?] get-tuple-element(p), index=1\n  one = s32[] constant(1)\n"
        "  i2 = s32[] add(i, one)\n  v2 = f32[?] add(v, v)\n"
        "  ROOT t = (s32[], f32[?]) tuple(i2, v2)\n}\n"
        "cond {\n  p = (s32[], f32[?]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
        "  three = s32[] constant(3)\n  ROOT lt = pred[] compare(i, three), direction=LT\n}\n"
        "ENTRY e {\n  x = f32[?] parameter(0)\n  zero = s32[] constant(0)\n"
        "  init = (s32[], f32[?]) tuple(zero, x)\n"
        "  w = (s32[], f32[?]) while(init), condition=cond, body=body\n"
        "  ROOT r = f32[?] get-tuple-element(w), index=1\n}\n";
    cxla_module *m = parse(loop);
    void *compiled = compile(m);
    const char *xs[] = {"f32[4] {1, 2, 3, 4}", "f32[1] {-2}", "f32[0] {}"};
    for (int i = 0; i < 3; i++) {
        cxla_literal *a = lit(xs[i]);
        same_as_interp(m, compiled, &a, 1, xs[i]);
        cxla_literal_free(a);
    }
    CHECK_EQ_I64(stats(compiled).driver_runs, 0);
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);

    static const char *layout =
        "HloModule layout, entry_computation_layout={(f32[?,3]{0,1})->(f32[3,?]{0,1}, f32[?]{0})}\n"
        "ENTRY e {\n  x = f32[?,3] parameter(0)\n"
        "  t = f32[3,?] transpose(x), dimensions={1,0}\n"
        "  f = f32[?] reshape(x)\n"
        "  ROOT r = (f32[3,?], f32[?]) tuple(t, f)\n}\n";
    m = parse(layout);
    compiled = compile(m);
    const char *ys[] = {"f32[2,3] {{1, 2, 3}, {4, 5, 6}}", "f32[0,3] {}"};
    for (int i = 0; i < 2; i++) {
        cxla_literal *a = lit(ys[i]);
        same_as_interp(m, compiled, &a, 1, ys[i]);
        cxla_literal_free(a);
    }
    CHECK_EQ_I64(stats(compiled).driver_runs, 0);
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* ---- the cache: eviction ---------------------------------------------------------------- */

static const char *const kNegate = "HloModule neg\nENTRY e {\n  v = f32[?] parameter(0)\n"
                                   "  ROOT n = f32[?] negate(v)\n}\n";

static void run_negate(const cxla_module *m, void *compiled, int64_t n) {
    char *t = array_text("f32", n, 0, (int)n);
    cxla_literal *a = lit(t);
    same_as_interp(m, compiled, &a, 1, t);
    cxla_literal_free(a);
    free(t);
}

static void test_eviction(void) {
    setenv("CXLA_CPU_SPECIALIZATIONS", "2", 1);
    cxla_module *m = parse(kNegate);
    void *compiled = compile(m);
    unsetenv("CXLA_CPU_SPECIALIZATIONS");
    static const int64_t sizes[] = {1, 2, 3, 1, 2, 2};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) run_negate(m, compiled, sizes[i]);
    cpu_spec_stats st = stats(compiled);
    CHECK_EQ_I64(st.capacity, 2);
    CHECK_EQ_I64(st.compiles, 5); /* 1, 2, 3 (1 goes), 1 (2 goes), 2 (3 goes) */
    CHECK_EQ_I64(st.evictions, 3);
    CHECK_EQ_I64(st.hits, 1);
    CHECK_EQ_I64(st.cached, 2);
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* ---- threads ---------------------------------------------------------------------------- */

typedef struct worker {
    void *compiled;
    int id;
    int failures;
} worker;

/* Runs sizes id, id+1, id+2 in turn (with a cache of 2 that evicts forms other threads
 * may be running) and checks each result against its definition. */
static void *work(void *arg) {
    worker *w = arg;
    for (int round = 0; round < 12; round++) {
        int64_t n = w->id + round % 3;
        char *t = array_text("f32", n, 0, w->id + round);
        cxla_literal *a = NULL, *got = NULL;
        cxla_status s = cxla_literal_parse(t, (size_t)-1, NULL, &a);
        exec_run_options ro = {0};
        if (!s) s = cpu_backend.execute(w->compiled, &ro, (const cxla_literal *const *)&a, 1, &got);
        if (s || !got || cxla_literal_shape(got)->rank != 1 ||
            cxla_literal_shape(got)->dims[0] != n ||
            !cxla_shape_is_static(cxla_literal_shape(got))) {
            w->failures++;
        } else {
            const float *x = cxla_literal_data_const(a), *y = cxla_literal_data_const(got);
            for (int64_t i = 0; i < n; i++)
                if (y[i] != -x[i]) w->failures++;
        }
        cxla_status_free(s);
        cxla_literal_free(a);
        cxla_literal_free(got);
        free(t);
    }
    return NULL;
}

static void test_threads(void) {
    setenv("CXLA_CPU_SPECIALIZATIONS", "2", 1);
    cxla_module *m = parse(kNegate);
    void *compiled = compile(m);
    unsetenv("CXLA_CPU_SPECIALIZATIONS");
    enum { N = 4 };
    worker w[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        w[i] = (worker){.compiled = compiled, .id = i + 1};
        CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
    }
    for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < N; i++)
        CHECK_MSG(w[i].failures == 0, "thread %d: %d wrong", i, w[i].failures);
    cpu_spec_stats st = stats(compiled);
    CHECK_EQ_I64(st.hits + st.compiles, N * 12);
    CHECK(st.cached <= 2);
    CHECK(st.evictions > 0);
    CHECK_EQ_I64(st.driver_runs, 0);
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* ---- what runs on the driver -------------------------------------------------------------- */

/* Sizes the shapes reject run on the driver, which answers as the interpreter does: an add
 * of a '?' operand and a static one cuts the static one (the form at size 3 would not
 * infer), two '?' operands of different sizes are an error, an argument of the wrong rank
 * or type too. */
static void test_driver_sizes(void) {
    static const char *text = "HloModule pinned\nENTRY e {\n  a = f32[?] parameter(0)\n"
                              "  c = f32[5] parameter(1)\n  b = f32[?] parameter(2)\n"
                              "  s = f32[?] add(a, c)\n  ROOT t = f32[?] add(s, b)\n}\n";
    cxla_module *m = parse(text);
    void *compiled = compile(m);
    /* The driver's form is compiled by the first run that needs it. */
    CHECK(cpu_compiled_call_what(compiled, "t") == NULL);
    const char *five = "f32[5] {1, 2, 3, 4, 5}";
    struct {
        const char *a, *b;
    } runs[] = {
        {"f32[5] {1, 1, 1, 1, 1}", "f32[5] {0, 1, 0, 1, 0}"}, /* specialized */
        {"f32[3] {1, 1, 1}", "f32[3] {2, 2, 2}"},             /* the driver cuts c */
        {"f32[3] {1, 1, 1}", "f32[4] {2, 2, 2, 2}"},          /* an error */
        {"f32[3] {1, 1, 1}", "f32[3] {2, 2, 2}"},             /* the driver, remembered */
        {"f32[2,1] {{1}, {2}}", "f32[2] {1, 2}"},             /* wrong rank */
        {"s32[2] {1, 2}", "f32[2] {1, 2}"},                   /* wrong type */
    };
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        cxla_literal *args[3] = {lit(runs[i].a), lit(five), lit(runs[i].b)};
        same_as_interp(m, compiled, args, 3, runs[i].a);
        for (int j = 0; j < 3; j++) cxla_literal_free(args[j]);
    }
    cpu_spec_stats st = stats(compiled);
    CHECK_EQ_STR(cpu_compiled_call_what(compiled, "t"), "interpreter handler");
    CHECK_EQ_I64(st.compiles, 3); /* (5, 5), (3, 3), (3, 4) */
    CHECK_EQ_I64(st.hits, 1);
    CHECK_EQ_I64(st.driver_runs, 5);
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* Modules that are never specialized: a '?' dimension nothing sizes (iota), a '?'
 * dimension that only a bound could specialize meeting set-dimension-size, whose range
 * check depends on it, and an outfeed of a '?' value (the driver compares the operand's
 * declared shape with the value and fails). They run on the driver with the interpreter's results;
 * --explain says why. */
static void test_refused(void) {
    static const struct {
        const char *text, *arg, *why;
    } cases[] = {
        {"HloModule i\nENTRY e {\n  x = s32[?] parameter(0)\n"
         "  i = s32[?] iota(), iota_dimension=0\n  ROOT a = s32[?] add(x, i)\n}\n",
         "s32[3] {1, 2, 3}", "cannot compute the size of an unbounded"},
        {"HloModule sds\nENTRY e {\n  v = f32[6] parameter(0)\n  k = s32[] parameter(1)\n"
         "  d = f32[?] set-dimension-size(v, k), dimensions={0}\n"
         "  two = s32[] constant(2)\n"
         "  e = f32[?] set-dimension-size(d, two), dimensions={0}\n"
         "  ROOT n = f32[?] negate(e)\n}\n",
         NULL, "depends on that bound"},
        {"HloModule o\nENTRY e {\n  x = f32[?] parameter(0)\n  t0 = token[] after-all()\n"
         "  o = token[] outfeed(x, t0)\n  ROOT y = f32[?] negate(x)\n}\n",
         "f32[2] {1, 2}", "of 'outfeed' is unbounded"},
    };
    for (int c = 0; c < 3; c++) {
        cxla_module *m = parse(cases[c].text);
        void *compiled = compile(m);
        cxla_strbuf out;
        cxla_strbuf_init(&out);
        if (m) CHECK_OK(cpu_explain(m, &out));
        CHECK_MSG(out.data && strstr(out.data, "not specialized per argument sizes") &&
                      strstr(out.data, cases[c].why),
                  "explain: %s", out.data ? out.data : "");
        cxla_strbuf_free(&out);
        if (cases[c].arg) {
            cxla_literal *a = lit(cases[c].arg);
            same_as_interp(m, compiled, &a, 1, cases[c].text);
            cxla_literal_free(a);
        } else {
            const char *ks[] = {"s32[] 4", "s32[] 1", "s32[] 7"};
            for (int k = 0; k < 3; k++) {
                cxla_literal *args[2] = {lit("f32[6] {1, 2, 3, 4, 5, 6}"), lit(ks[k])};
                same_as_interp(m, compiled, args, 2, ks[k]);
                for (int j = 0; j < 2; j++) cxla_literal_free(args[j]);
            }
        }
        cpu_spec_stats st = stats(compiled);
        CHECK_EQ_I64(st.compiles, 0);
        if (compiled) cpu_backend.destroy(compiled);
        cxla_module_destroy(m);
    }
    /* A module that is specialized says so. */
    cxla_module *m = parse(kNegate);
    cxla_strbuf out;
    cxla_strbuf_init(&out);
    if (m) CHECK_OK(cpu_explain(m, &out));
    CHECK_MSG(out.data && strstr(out.data, "specialized per argument sizes") &&
                  !strstr(out.data, "not specialized"),
              "explain: %s", out.data ? out.data : "");
    cxla_strbuf_free(&out);
    cxla_module_destroy(m);
}

/* A dynamic-reshape to '?' dimensions whose sizes are constants (tests/hlo/cases/
 * dynamic_control.hlo): static at those sizes, so the module is specialized; sizes whose
 * element count the constants do not give run on the driver, with its error. One whose
 * size is a parameter is still refused. */
static void test_constant_reshape(void) {
    static const char *const text =
        "HloModule r\nENTRY e {\n  x = s32[?] parameter(0)\n  two = s32[] constant(2)\n"
        "  c = s32[?] set-dimension-size(x, two), dimensions={0}\n"
        "  three = s32[] constant(3)\n"
        "  r = s32[?,?] dynamic-reshape(x, two, three)\n"
        "  ROOT t = (s32[?], s32[?,?]) tuple(c, r)\n}\n";
    cxla_module *m = parse(text);
    void *compiled = compile(m);
    cxla_strbuf out;
    cxla_strbuf_init(&out);
    if (m) CHECK_OK(cpu_explain(m, &out));
    CHECK_MSG(out.data && strstr(out.data, "specialized per argument sizes") &&
                  !strstr(out.data, "not specialized"),
              "explain: %s", out.data ? out.data : "");
    cxla_strbuf_free(&out);
    const char *const args[] = {"s32[6] {1, 2, 3, 4, 5, 6}", "s32[5] {1, 2, 3, 4, 5}", "s32[0] {}",
                                "s32[6] {6, 5, 4, 3, 2, 1}"};
    for (int k = 0; k < 4; k++) {
        cxla_literal *a = lit(args[k]);
        if (m && a) same_as_interp(m, compiled, &a, 1, args[k]);
        cxla_literal_free(a);
    }
    cpu_spec_stats st = stats(compiled);
    CHECK_EQ_I64(st.compiles, 3); /* 6 compiled; 5 and 0 refused (they do not fit) */
    CHECK_EQ_I64(st.hits, 1);
    CHECK_EQ_I64(st.driver_runs, 2);
    if (compiled) cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
    /* A size the arguments do not fix: refused. */
    m = parse("HloModule p\nENTRY e {\n  x = s32[?] parameter(0)\n  k = s32[] parameter(1)\n"
              "  three = s32[] constant(3)\n"
              "  ROOT r = s32[?,?] dynamic-reshape(x, k, three)\n}\n");
    cxla_strbuf_init(&out);
    if (m) CHECK_OK(cpu_explain(m, &out));
    CHECK_MSG(out.data && strstr(out.data, "not specialized per argument sizes"), "explain: %s",
              out.data ? out.data : "");
    cxla_strbuf_free(&out);
    cxla_module_destroy(m);
}

/* An error of an instruction that the passes copied (a callee's, inlined: "r.8") names the
 * instruction the user wrote ("r"), on the interpreter's driver (a module never
 * specialized: interp_overrides.name) and in a step sequence's handler step alike. */
static void test_errors_name_user_instructions(void) {
    static const char *const texts[2] = {
        "HloModule drv\ncallee {\n  p = c64[2] parameter(0)\n  ROOT r = c64[2] maximum(p, p)\n}\n"
        "ENTRY e {\n  c = c64[2] parameter(0)\n  kk = c64[2] call(c), to_apply=callee\n"
        "  x = s32[?] parameter(1)\n  i = s32[?] iota(), iota_dimension=0\n"
        "  a = s32[?] add(x, i)\n  ROOT t = (c64[2], s32[?]) tuple(kk, a)\n}\n",
        "HloModule st\ncallee {\n  p = c64[2] parameter(0)\n  ROOT r = c64[2] maximum(p, p)\n}\n"
        "ENTRY e {\n  c = c64[2] parameter(0)\n  ROOT kk = c64[2] call(c), to_apply=callee\n}\n",
    };
    for (int k = 0; k < 2; k++) {
        cxla_module *m = parse(texts[k]);
        void *compiled = compile(m);
        CHECK((cpu_compiled_plan(compiled) == NULL) == (k == 0)); /* the driver, then a plan */
        cxla_literal *args[2] = {lit("c64[2] {(1, 2), (3, 4)}"), lit("s32[2] {1, 2}")};
        exec_run_options ro = {0};
        cxla_literal *got = NULL;
        cxla_status s = compiled
                            ? cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args,
                                                  k == 0 ? 2 : 1, &got)
                            : NULL;
        const char *msg = cxla_status_message(s);
        CHECK_MSG(s && strncmp(msg, "r (maximum, line 4): not defined for c64", 40) == 0, "%s: %s",
                  texts[k], msg);
        cxla_status_free(s);
        cxla_literal_free(got);
        for (int j = 0; j < 2; j++) cxla_literal_free(args[j]);
        if (compiled) cpu_backend.destroy(compiled);
        cxla_module_destroy(m);
    }
}

TEST_MAIN(TEST(test_many_sizes), TEST(test_form_is_static), TEST(test_bounded_beside),
          TEST(test_loop_and_layout), TEST(test_eviction), TEST(test_threads),
          TEST(test_driver_sizes), TEST(test_refused), TEST(test_constant_reshape),
          TEST(test_errors_name_user_instructions))
