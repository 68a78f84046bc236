/* No module of tests/hlo/cases runs an instruction on the interpreter's handler inside the
 * cpu backend's step sequence (issue 13, section 3), so that a new fallback cannot creep
 * in unseen: each case module is compiled with the cpu backend and its plan's stats read.
 * A module that runs (no EXPECT_ERROR) must have no handler step at all; a module that
 * expects an error may keep handler steps only where the handler's only job is to report
 * the interpreter's error (stats.error_steps, "the interpreter's error" in --explain).
 * Modules without a plan (unbounded dynamic shapes that run on the interpreter's driver or
 * specialized per run, docs/semantics.md) are counted apart; REJECT cases never compile. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/cpu_steps.h"
#include "harness.h"
#include "hlo/hlo.h"

static int modules, planned, failed;

/* The names of |m|'s instructions that the plan of |compiled| runs as |word|, into |out|. */
static void names_as(const cxla_module *m, const void *compiled, const char *word, char *out,
                     size_t size) {
    size_t len = 0;
    out[0] = 0;
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            const char *name = m->comps[c]->instrs[i]->name;
            const char *what = cpu_compiled_call_what(compiled, name);
            if (!what || strcmp(what, word) != 0 || len + strlen(name) + 3 >= size) continue;
            len += (size_t)snprintf(out + len, size - len, "%s%s", len ? ", " : "", name);
        }
}

static void check_case(const char *file, int64_t line, const char *text) {
    if (strstr(text, "// REJECT:")) return;
    bool expects_error = strstr(text, "// EXPECT_ERROR:") != NULL;
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), file, &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        test_fail(__FILE__, __LINE__, "%s:%" PRId64 ": does not load: %s", file, line,
                  cxla_status_message(s));
        cxla_status_free(s);
        cxla_module_destroy(m);
        return;
    }
    modules++;
    void *compiled = NULL;
    exec_compile_options co = {0};
    s = cpu_backend.compile(m, &co, &compiled);
    if (s) { /* a compile-time error is the module's error: no step runs */
        if (!expects_error) {
            test_fail(__FILE__, __LINE__, "%s:%" PRId64 ": compile: %s", file, line,
                      cxla_status_message(s));
            failed++;
        }
        cxla_status_free(s);
        cxla_module_destroy(m);
        return;
    }
    const cpu_plan *plan = cpu_compiled_plan(compiled);
    if (plan) {
        planned++;
        cpu_plan_stats st;
        cpu_plan_get_stats(plan, &st);
        int64_t allowed = expects_error ? st.error_steps : 0;
        if (st.handler_steps > allowed) {
            char names[512];
            names_as(m, compiled, "interpreter handler", names, sizeof(names));
            test_fail(__FILE__, __LINE__,
                      "%s:%" PRId64 ": module %s runs %" PRId64
                      " instruction(s) on the interpreter's handler (%" PRId64
                      " only report its error): %s",
                      file, line, m->name, st.handler_steps, st.error_steps, names);
            failed++;
        }
    }
    cpu_backend.destroy(compiled);
    cxla_module_destroy(m);
}

/* Each case of |path| (split at lines "// -----", as test_hlo_cases.c does). */
static void check_file(const char *path) {
    char *data;
    size_t size;
    cxla_status s = cxla_read_file(path, &data, &size);
    if (s) {
        test_fail(__FILE__, __LINE__, "%s", cxla_status_message(s));
        cxla_status_free(s);
        return;
    }
    char *start = data;
    int64_t line = 1, start_line = 1;
    for (char *p = data;; p++) {
        bool end = *p == 0;
        bool sep = !end && (p == data || p[-1] == '\n') && strncmp(p, "// -----", 8) == 0 &&
                   (p[8] == '\n' || p[8] == 0);
        if (end || sep) {
            char saved = *p;
            *p = 0;
            if (strstr(start, "ENTRY") || strstr(start, "HloModule"))
                check_case(path, start_line, start);
            *p = saved;
            if (end) break;
            while (*p && *p != '\n') p++;
            if (!*p) break;
            start = p + 1;
            start_line = line + 1;
        }
        if (*p == '\n') line++;
    }
    free(data);
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_no_handler_steps(void) {
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/tests/hlo/cases", CXLA_SOURCE_DIR);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d) return;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 4 || strcmp(e->d_name + len - 4, ".hlo") != 0) continue;
        char **more = realloc(names, sizeof(char *) * (n + 1));
        if (!more) break;
        names = more;
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(char *), compare_names);
    for (size_t i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        check_file(path);
        free(names[i]);
    }
    free(names);
    printf("%d modules, %d with a step sequence, %d with handler steps\n", modules, planned,
           failed);
    CHECK(planned > 1000); /* the cases are all there */
}

/* ---- issue 13: no fixed limits of rank or operand count in the moves and reduces ---------- */

static cxla_module *parse_text(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "wide", &m);
    if (!s) s = cxla_verify_module(m);
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    return m;
}

/* The steps themselves at run time, not only the plan (test_no_handler_steps above: the
 * plan has no handler step for tests/hlo/cases/dynamic_wide.hlo): a concatenate of 65
 * operands, a reverse of rank 17 and a reduce of rank 17 below their bounds compute their
 * values without asking for the interpreter's handler (which they did when their sizes
 * and strides lived in arrays of 16 and 64: *out_handler then, or no step at all). */
static void test_wide_steps(void) {
    /* 65 operands along the dynamic dimension: a (size 1) and b (size 2) in turn. */
    cxla_strbuf t;
    cxla_strbuf_init(&t);
    cxla_strbuf_puts(&t, "HloModule c\nENTRY e {\n  a = f32[<=2] parameter(0)\n"
                         "  b = f32[<=2] parameter(1)\n  ROOT c = f32[<=130] concatenate(");
    for (int k = 0; k < 65; k++) cxla_strbuf_printf(&t, "%s%s", k ? ", " : "", k % 2 ? "b" : "a");
    cxla_strbuf_puts(&t, "), dimensions={0}\n}\n");
    cxla_module *m = parse_text(t.data);
    cxla_strbuf_free(&t);
    if (!m) return;
    const cxla_instr *c = m->entry->root;
    CHECK(cpu_dyn_move_ok(c) && cpu_dyn_move_wide_ok(c));
    float a[2] = {1, 99}, b[2] = {2, 3}, out[130];
    int64_t za[1] = {1}, zb[1] = {2};
    const void *ins[65];
    const int64_t *opz[65];
    for (int k = 0; k < 65; k++) {
        ins[k] = k % 2 ? (const void *)b : (const void *)a;
        opz[k] = k % 2 ? zb : za;
    }
    cpu_dyn_desc d;
    bool handler = true;
    cxla_status s = cpu_dyn_move_plan(c, ins, opz, &d, &handler);
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    CHECK(!handler);
    if (!s && !handler) {
        memset(out, 0xff, sizeof out);
        cpu_dyn_move(&d, out);
        CHECK(d.sizes[0] == 97);
        for (int64_t j = 0, k = 0; k < 65; k++) {
            bool is_b = k % 2;
            CHECK(out[j++] == (is_b ? 2 : 1));
            if (is_b) CHECK(out[j++] == 3);
        }
        for (int j = 97; j < 130; j++) CHECK(out[j] == 0); /* zeros in the padding */
    }
    cpu_dyn_move_free(&d);
    cxla_module_destroy(m);

    /* Rank 17: a reverse of both dynamic dimensions, f32[<=3,1 x 15,<=3] at sizes 2 x 2. */
    static const char *const rev =
        "HloModule r\nENTRY e {\n  a = f32[<=3,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,<=3] parameter(0)\n"
        "  ROOT r = f32[<=3,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,<=3] reverse(a), dimensions={0,16}\n}\n";
    m = parse_text(rev);
    if (!m) return;
    c = m->entry->root;
    CHECK(cpu_dyn_move_ok(c));
    float x[9] = {1, 2, 77, 3, 4, 77, 77, 77, 77}, y[9];
    int64_t zx[17];
    for (int dd = 0; dd < 17; dd++) zx[dd] = 1;
    zx[0] = zx[16] = 2;
    const void *rin[1] = {x};
    const int64_t *rz[1] = {zx};
    handler = true;
    s = cpu_dyn_move_plan(c, rin, rz, &d, &handler);
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    CHECK(!handler);
    if (!s && !handler) {
        cpu_dyn_move(&d, y);
        static const float want[9] = {4, 3, 0, 2, 1, 0, 0, 0, 0};
        for (int j = 0; j < 9; j++) CHECK_MSG(y[j] == want[j], "y[%d] = %g", j, (double)y[j]);
        CHECK(d.rank == 17 && d.sizes[0] == 2 && d.sizes[16] == 2 && d.sizes[8] == 1);
    }
    cpu_dyn_move_free(&d);
    cxla_module_destroy(m);

    /* Rank 17: an f32 sum over a dynamic dimension (19 of 20) from 0.5, the interpreter's
     * loop over the sizes. */
    static const char *const red =
        "HloModule s\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\n"
        "ENTRY e {\n  a = f32[<=20,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2] parameter(0)\n"
        "  z = f32[] constant(0.5)\n"
        "  ROOT r = f32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2] reduce(a, z), dimensions={0}, "
        "to_apply=add\n}\n";
    m = parse_text(red);
    if (!m) return;
    c = m->entry->root;
    CHECK(cpu_dyn_reduce_ok(c));
    float v[40], init = 0.5f, r[2] = {-1, -1};
    for (int i = 0; i < 20; i++) {
        v[2 * i] = (float)(i + 1);
        v[2 * i + 1] = i < 19 ? (float)(2 * (i + 1)) : 1e30f; /* row 19 is padding */
    }
    zx[0] = 19;
    zx[16] = 2;
    const void *sin[2] = {v, &init};
    const int64_t *sz[2] = {zx, zx};
    int64_t outz[16];
    handler = true;
    s = cpu_dyn_reduce(c, r, sin, sz, outz, &handler);
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    CHECK(!handler);
    CHECK_MSG(r[0] == 190.5f && r[1] == 380.5f, "%g %g", (double)r[0], (double)r[1]);
    cxla_module_destroy(m);
}

/* ---- packed sub-byte layouts: no obstacle to the steps -------------------------------------
 *
 * The layout pass drops E(n) from the shapes inside a module, but the rules that choose a
 * step read the shapes they are given: a module compiled without the passes (ahead of time
 * with no_passes; test_aot runs tests/hlo/cases/dynamic_subbyte.hlo so) keeps its packed
 * layouts, and cxla stores sub-byte elements one per byte in every buffer whatever E(n)
 * says, so each rule must take them as it takes the unpacked shapes. */
static void test_packed_steps(void) {
    static const char *const text =
        "HloModule p\n"
        "add {\n  a = s4[] parameter(0)\n  b = s4[] parameter(1)\n"
        "  ROOT s = s4[] add(a, b)\n}\n"
        "ENTRY e {\n"
        "  a = s4[<=6]{0:E(4)} parameter(0)\n"
        "  b = s4[<=6]{0:E(4)} parameter(1)\n"
        "  u = u4[2,<=5]{1,0:E(4)} parameter(2)\n"
        "  v = u4[<=5,2]{1,0:E(4)} parameter(3)\n"
        "  s = s4[<=6]{0:E(4)} add(a, b)\n"
        "  c = s4[<=12]{0:E(4)} concatenate(a, b), dimensions={0}\n"
        "  one = s4[] constant(1)\n"
        "  r = s4[] reduce(a, one), dimensions={0}, to_apply=add\n"
        "  d = u4[2,2]{1,0:E(4)} dot(u, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  ROOT t = (s4[<=6]{0:E(4)}, s4[<=12]{0:E(4)}, s4[], u4[2,2]{1,0:E(4)}) "
        "tuple(s, c, r, d)\n"
        "}\n";
    cxla_module *m = parse_text(text);
    if (!m) return;
    cxla_instr *const *ops = m->entry->root->operands;
    size_t elem = 0;
    CHECK(cpu_whole_elements(&ops[1]->shape, &elem) && elem == 1); /* one per byte */
    CHECK(cpu_bounds_kind(ops[0], false) == B_POSITIONWISE);       /* the add at the bounds */
    CHECK(cpu_dyn_move_ok(ops[1]));                                /* the concatenate */
    CHECK(cpu_dyn_reduce_ok(ops[2]));                              /* the sum from 1 */
    CHECK(cpu_dynwin_ok(ops[3]));                                  /* the u4 dot */
    /* The dot's step over the sizes: u (2 x 3 of 5) and v (3 of 5 x 2), garbage (15) past
     * the sizes; u4 products summed and wrapped to 4 bits as the interpreter does. */
    uint8_t u[10], v[10], y[4] = {9, 9, 9, 9};
    for (int i = 0; i < 10; i++) u[i] = v[i] = 15;
    static const uint8_t uu[2][3] = {{15, 3, 7}, {2, 9, 14}}, vv[3][2] = {{15, 1}, {4, 12}, {8, 3}};
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 3; k++) u[i * 5 + k] = uu[i][k];
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 2; j++) v[k * 2 + j] = vv[k][j];
    int64_t zu[2] = {2, 3}, zv[2] = {3, 2}, zy[2] = {0, 0};
    const void *ins[2] = {u, v};
    const int64_t *opz[2] = {zu, zv};
    bool handler = true;
    cxla_status s = cpu_dynwin_run(ops[3], y, ins, opz, zy, &handler);
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    CHECK(!handler && zy[0] == 2 && zy[1] == 2);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            unsigned sum = 0;
            for (int k = 0; k < 3; k++) sum += uu[i][k] * vv[k][j];
            CHECK_MSG(y[i * 2 + j] == (sum & 15u), "y[%d][%d] = %u, not %u", i, j, y[i * 2 + j],
                      sum & 15u);
        }
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_no_handler_steps), TEST(test_wide_steps), TEST(test_packed_steps))
