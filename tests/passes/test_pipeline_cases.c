/* Runs the cpu pipeline, and each of its passes alone, on every data-driven case of
 * tests/hlo/cases/ (with the case's inputs) and on the shared models small enough to
 * run twice on the interpreter (generated inputs), and checks that the interpreter's
 * results are bit-for-bit the same before and after. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>

#include "passes_check.h"

static int modules_checked, modules_failed;

/* Values of "// KEY: value" lines (malloc'd array of malloc'd strings). */
static int64_t directives(const char *text, const char *key, char ***out) {
    int64_t n = 0;
    char **values = NULL;
    size_t klen = strlen(key);
    for (const char *p = text; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *q = p;
        while (q < p + len && (*q == ' ' || *q == '\t')) q++;
        if ((size_t)(p + len - q) > klen + 3 && strncmp(q, "// ", 3) == 0 &&
            strncmp(q + 3, key, klen) == 0 && q[3 + klen] == ':') {
            const char *v = q + 4 + klen;
            while (*v == ' ') v++;
            values = realloc(values, sizeof(char *) * (size_t)(n + 1));
            values[n++] = strndup(v, (size_t)(p + len - v));
        }
        p = eol ? eol + 1 : NULL;
    }
    *out = values;
    return n;
}

static void free_strings(char **s, int64_t n) {
    for (int64_t i = 0; i < n; i++) free(s[i]);
    free(s);
}

/* One check: parse |text|, run the passes (NULL: the whole pipeline) and compare. */
static void check_text(const char *text, const char *label, char **inputs, int64_t ni,
                       const cxla_pass *pass) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), label, &m);
    if (!s) s = cxla_verify_module(m);
    if (s) { /* the parser and verifier tests own these */
        cxla_status_free(s);
        cxla_module_destroy(m);
        return;
    }
    cxla_literal **args = NULL;
    if (ni > 0) {
        args = calloc((size_t)ni, sizeof(*args));
        for (int64_t i = 0; i < ni && !s; i++)
            s = cxla_literal_parse(inputs[i], (size_t)-1, NULL, &args[i]);
    }
    if (!s && ni == m->entry->param_count) {
        char what[4600];
        snprintf(what, sizeof(what), "%s [%s]", label, pass ? pass->name : "cpu pipeline");
        modules_checked++;
        const cxla_pass *one[1] = {pass};
        if (!pc_check_passes(m, args, pass ? one : NULL, 1, what)) modules_failed++;
    }
    cxla_status_free(s);
    for (int64_t i = 0; args && i < ni; i++) cxla_literal_free(args[i]);
    free(args);
    cxla_module_destroy(m);
}

static void check_all_passes(const char *text, const char *label, char **inputs, int64_t ni) {
    check_text(text, label, inputs, ni, NULL);
    int64_t n;
    const cxla_pass *const *p = cxla_passes_cpu_list(&n);
    for (int64_t k = 0; k < n; k++) {
        bool seen = false;
        for (int64_t j = 0; j < k; j++) seen = seen || p[j] == p[k];
        if (!seen) check_text(text, label, inputs, ni, p[k]);
    }
    /* Every convolution to b01f_01io->b01f, not only those conv-canon picks. */
    if (strstr(text, "convolution("))
        check_text(text, label, inputs, ni, &cxla_pass_conv_canon_all);
}

static void run_case(const char *file, int64_t line, const char *text) {
    char **reject, **inputs;
    int64_t nrej = directives(text, "REJECT", &reject);
    int64_t ni = directives(text, "INPUT", &inputs);
    if (!nrej) {
        char label[4400];
        snprintf(label, sizeof(label), "%s:%" PRId64, file, line);
        check_all_passes(text, label, inputs, ni);
    }
    free_strings(reject, nrej);
    free_strings(inputs, ni);
}

static void run_file(const char *path) {
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
            if (strstr(start, "ENTRY")) run_case(path, start_line, start);
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

/* The .hlo files of |dir|, sorted (malloc'd). */
static size_t list_hlo(const char *dir, char ***out) {
    DIR *d = opendir(dir);
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".hlo") != 0) continue;
        names = realloc(names, sizeof(char *) * (n + 1));
        names[n++] = strdup(e->d_name);
    }
    if (d) closedir(d);
    if (n) qsort(names, n, sizeof(char *), compare_names);
    *out = names;
    return n;
}

static void test_cases(void) {
    char dir[4096], path[4200];
    snprintf(dir, sizeof(dir), "%s/tests/hlo/cases", CXLA_SOURCE_DIR);
    char **names;
    size_t n = list_hlo(dir, &names);
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        run_file(path);
        free(names[i]);
    }
    free(names);
    printf("cases: %d module checks, %d failed\n", modules_checked, modules_failed);
    CHECK(modules_checked > 100);
}

/* Elements produced by one run through every instruction (loops counted once): a
 * measure of how long the interpreter takes. */
static int64_t work_of(const cxla_module *m) {
    int64_t total = 0;
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            const cxla_instr *in = m->comps[c]->instrs[i];
            int64_t e = 0;
            if (cxla_type_is_array(in->shape.type)) {
                cxla_status s = cxla_shape_element_count(&in->shape, &e);
                cxla_status_free(s);
            }
            int64_t w = e;
            if (in->opcode == CXLA_OP_DOT || in->opcode == CXLA_OP_CONVOLUTION) {
                int64_t k = 0;
                cxla_status s = cxla_shape_element_count(&in->operands[0]->shape, &k);
                cxla_status_free(s);
                w = e > 0 && k > INT64_MAX / e ? INT64_MAX : e * k; /* a generous bound */
            }
            total = total > INT64_MAX - w ? INT64_MAX : total + w;
        }
    return total;
}

static void test_models(void) {
    const char *shared = test_shared_dir();
    if (!shared) {
        printf("../shared is absent: the shared models are skipped\n");
        return;
    }
    const char *all = getenv("CXLA_PASSES_ALL_MODELS");
    int64_t limit = all ? INT64_MAX : (int64_t)1 << 25;
    char dir[4096], path[4200];
    snprintf(dir, sizeof(dir), "%s/models", shared);
    char **names;
    size_t n = list_hlo(dir, &names);
    int checked = 0;
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        free(names[i]);
        cxla_module *m = NULL;
        cxla_status s = cxla_hlo_parse_file(path, &m);
        if (!s) s = cxla_verify_module(m);
        if (s) {
            CHECK_MSG(false, "%s: %s", path, cxla_status_message(s));
            cxla_status_free(s);
            cxla_module_destroy(m);
            continue;
        }
        int64_t w = work_of(m);
        if (w > limit) {
            printf("skipped %s: about %" PRId64 " elements of work (set CXLA_PASSES_ALL_MODELS=1 "
                   "to include it)\n",
                   path, w);
            cxla_module_destroy(m);
            continue;
        }
        printf("checking %s\n", path);
        fflush(stdout);
        if (pc_check_passes(m, NULL, NULL, 0, path)) checked++;
        cxla_module_destroy(m);
    }
    free(names);
    printf("models: %d checked bit-exact through the cpu pipeline\n", checked);
    CHECK(n == 0 || checked > 0);
}

TEST_MAIN(TEST(test_cases), TEST(test_models))
