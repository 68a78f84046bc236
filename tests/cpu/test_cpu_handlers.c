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

TEST_MAIN(TEST(test_no_handler_steps))
