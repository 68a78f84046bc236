/* Bounded dynamic shapes that the cpu backend once left to the interpreter's handler
 * (tests/hlo/cases/dynamic_more.hlo): every module there must compile to a plan with no
 * handler step, and run again here with its inputs placed in buffers at the parameters'
 * bounds whose padding holds garbage (the case runner's inputs have zeros there), giving
 * the interpreter's result bit for bit (sizes, values, zeros in the padding) or its error
 * message. The static forms of the same operations (unrecognized window computations,
 * batching dimensions) must have no handler step either. */
#define _POSIX_C_SOURCE 200809L /* strndup */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

static int64_t handler_steps(void *compiled) {
    const cpu_plan *plan = cpu_compiled_plan(compiled);
    cpu_plan_stats st = {0};
    if (!plan) return -1;
    cpu_plan_get_stats(plan, &st);
    return st.handler_steps;
}

/* |in| (an array at its sizes) placed in an array of the bounds of |shape| whose every other
 * element is |garbage|, with |in|'s dimensions as the dynamic sizes. NULL when |shape| has
 * no dynamic dimension (|in| is passed as it is) or on a failure (reported). */
static cxla_literal *padded(const cxla_shape *shape, const cxla_literal *in, double garbage) {
    if (!cxla_type_is_array(shape->type) || !shape->dynamic) return NULL;
    const cxla_shape *is = cxla_literal_shape(in);
    if (is->rank != shape->rank || is->type != shape->type) return NULL;
    cxla_shape plain = *shape;
    plain.layout = NULL;
    cxla_literal *l = NULL;
    cxla_status s = cxla_literal_create(&plain, &l);
    CHECK_MSG(!s, "literal: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    if (!l) return NULL;
    int64_t count = 0, icount = 0;
    cxla_shape_element_count(&plain, &count);
    cxla_shape_element_count(is, &icount);
    size_t elem = count ? cxla_literal_byte_size(l) / (size_t)count : 1;
    char *data = cxla_literal_data(l);
    for (int64_t e = 0; e < count; e++)
        cxla_store_f64(shape->type, data + (size_t)e * elem, garbage);
    const char *src = cxla_literal_data_const(in);
    int64_t idx[CXLA_MAX_RANK] = {0};
    for (int64_t e = 0; e < icount; e++) {
        int64_t off = 0;
        for (int64_t d = 0; d < shape->rank; d++) off = off * shape->dims[d] + idx[d];
        memcpy(data + (size_t)off * elem, src + (size_t)e * elem, elem);
        cxla_index_next(is->rank, is->dims, idx);
    }
    for (int64_t d = 0; d < shape->rank; d++) {
        if (!shape->dynamic[d]) continue;
        s = cxla_literal_set_dynamic_size(l, d, is->dims[d]);
        CHECK_MSG(!s, "sizes: %s", s ? cxla_status_message(s) : "");
        cxla_status_free(s);
    }
    return l;
}

/* Runs |compiled| (of |m|) and the interpreter on |args|: equal results, or the same error. */
static void same(const cxla_module *m, void *compiled, cxla_literal *const *args, int64_t n,
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
    } else if (!cxla_literal_equal(want, got)) {
        char *a = cxla_literal_to_string(want, 3), *b = cxla_literal_to_string(got, 3);
        test_fail(__FILE__, __LINE__, "%s: cpu and interpreter differ:\n  %s\n  %s", what,
                  a ? a : "?", b ? b : "?");
        free(a);
        free(b);
    }
    cxla_status_free(ws);
    cxla_status_free(gs);
    cxla_literal_free(want);
    cxla_literal_free(got);
}

/* One module of the case file (|text|, NUL-terminated), its INPUT lines as arguments. */
static void run_case(const char *text, int64_t line) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "dynamic_more.hlo", &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        test_fail(__FILE__, __LINE__, "case at line %" PRId64 ": %s", line, cxla_status_message(s));
        cxla_status_free(s);
        cxla_module_destroy(m);
        return;
    }
    void *compiled = NULL;
    exec_compile_options co = {0};
    s = cpu_backend.compile(m, &co, &compiled);
    CHECK_MSG(!s, "case at line %" PRId64 ": compile: %s", line, s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    if (!compiled) {
        cxla_module_destroy(m);
        return;
    }
    int64_t h = handler_steps(compiled);
    CHECK_MSG(h == 0, "case at line %" PRId64 " (%s): %" PRId64 " handler steps", line, m->name, h);
    cxla_literal *args[16] = {0}, *raw[16] = {0};
    int64_t n = 0;
    bool ok = true;
    for (const char *p = text; p && *p && ok;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > 10 && strncmp(p, "// INPUT: ", 10) == 0) {
            ok = n < 16 && n < m->entry->param_count;
            char *lit = strndup(p + 10, len - 10);
            s = ok && lit ? cxla_literal_parse(lit, (size_t)-1, NULL, &raw[n]) : NULL;
            CHECK_MSG(!s, "case at line %" PRId64 ": INPUT: %s", line,
                      s ? cxla_status_message(s) : "");
            ok = ok && lit && !s;
            cxla_status_free(s);
            free(lit);
            if (ok) n++;
        }
        p = eol ? eol + 1 : NULL;
    }
    for (int pass = 0; pass < 2 && ok; pass++) {
        /* Garbage that a sum, a product or a comparison would show: a large value, then a
         * small negative one (floats and integers alike). */
        double garbage = pass ? -3 : 77;
        for (int64_t i = 0; i < n; i++) {
            cxla_literal *g = padded(&m->entry->params[i]->shape, raw[i], garbage);
            args[i] = g ? g : raw[i];
        }
        char what[128];
        snprintf(what, sizeof(what), "case at line %" PRId64 " (%s), garbage %g", line, m->name,
                 garbage);
        same(m, compiled, args, n, what);
        for (int64_t i = 0; i < n; i++)
            if (args[i] != raw[i]) cxla_literal_free(args[i]);
    }
    for (int64_t i = 0; i < n; i++) cxla_literal_free(raw[i]);
    cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

static void test_cases(void) {
    char *data = NULL;
    size_t size = 0;
    cxla_status s =
        cxla_read_file(CXLA_SOURCE_DIR "/tests/hlo/cases/dynamic_more.hlo", &data, &size);
    CHECK_MSG(!s, "%s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    if (!data) return;
    /* Split at lines that are exactly "// -----", as the case runner does. */
    int64_t cases = 0, line = 1, start_line = 1;
    char *start = data;
    for (char *p = data;; p++) {
        bool end = *p == 0;
        bool sep = !end && (p == data || p[-1] == '\n') && strncmp(p, "// -----", 8) == 0 &&
                   (p[8] == '\n' || p[8] == 0);
        if (end || sep) {
            char saved = *p;
            *p = 0;
            if (strstr(start, "HloModule")) {
                run_case(start, start_line);
                cases++;
            }
            *p = saved;
            if (end) break;
            while (*p && *p != '\n') p++;
            if (!*p) break;
            start = p + 1;
            start_line = line + 1;
        }
        if (*p == '\n') line++;
    }
    CHECK_MSG(cases >= 16, "%" PRId64 " cases", cases);
    free(data);
}

/* The static forms: kernels, no handler. */
static void test_static(void) {
    static const char *const modules[] = {
        "HloModule rw_static\n"
        "f {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  m = f32[] multiply(a, b)\n  ROOT s = f32[] add(m, b)\n}\n"
        "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  a2 = f32[] multiply(a, a)\n  b2 = f32[] multiply(b, b)\n"
        "  ROOT c = pred[] compare(a2, b2), direction=GE\n}\n"
        "ENTRY main {\n  x = f32[5,4] parameter(0)\n  i = f32[] constant(1)\n"
        "  w = f32[5,4] reduce-window(x, i), window={size=2x1 pad=0_1x0_0}, to_apply=f\n"
        "  s = f32[5,4] parameter(1)\n"
        "  ss = f32[5,4] select-and-scatter(x, s, i), window={size=2x1 pad=0_1x0_0}, "
        "select=ge, scatter=f\n"
        "  ROOT t = (f32[5,4], f32[5,4]) tuple(w, ss)\n}\n",
        "HloModule gather_scatter_batching_static\n"
        "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\n"
        "ENTRY main {\n  x = f32[2,5,3] parameter(0)\n  idx = s32[2,4,1] parameter(1)\n"
        "  g = f32[2,4,3] gather(x, idx), offset_dims={2}, collapsed_slice_dims={1}, "
        "start_index_map={1}, index_vector_dim=2, slice_sizes={1,1,3}, "
        "operand_batching_dims={0}, start_indices_batching_dims={0}\n"
        "  r = f32[2,5,3] scatter(x, idx, g), update_window_dims={2}, "
        "inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=2, "
        "input_batching_dims={0}, scatter_indices_batching_dims={0}, to_apply=add\n"
        "  ROOT t = (f32[2,4,3], f32[2,5,3]) tuple(g, r)\n}\n",
    };
    for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++) {
        cxla_module *m = NULL;
        cxla_status s = cxla_hlo_parse(modules[i], strlen(modules[i]), "static", &m);
        if (!s) s = cxla_verify_module(m);
        void *compiled = NULL;
        exec_compile_options co = {0};
        if (!s) s = cpu_backend.compile(m, &co, &compiled);
        CHECK_MSG(!s, "static module %zu: %s", i, s ? cxla_status_message(s) : "");
        cxla_status_free(s);
        if (compiled) {
            int64_t h = handler_steps(compiled);
            CHECK_MSG(h == 0, "static module %zu: %" PRId64 " handler steps", i, h);
            cpu_backend.destroy(compiled);
        }
        cxla_module_destroy(m);
    }
}

TEST_MAIN(TEST(test_cases), TEST(test_static))
