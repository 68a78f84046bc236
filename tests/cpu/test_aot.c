/* Ahead-of-time output (src/cpu/aot.h): the tests/hlo/cases modules that compile ahead of
 * time are written out, compiled with `-std=c11 -Wall -Wextra -Wpedantic -Werror` by gcc and
 * clang (and tcc when installed) together with a generated driver, linked without libcxla,
 * run, and their results compared bit for bit with the interpreter's. Plus the errors for
 * what has no ahead-of-time form, and the header from C++. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu/aot.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

/* ---- leaves of literals ---------------------------------------------------------------------- */

typedef struct leaves {
    cxla_literal **items; /* owned, row-major */
    int64_t count, cap;
} leaves;

static cxla_status flatten(const cxla_literal *lit, leaves *out) {
    if (cxla_literal_shape(lit)->type == CXLA_TUPLE) {
        for (int64_t e = 0; e < lit->tuple_count; e++)
            CXLA_RETURN_IF_ERROR(flatten(lit->elements[e], out));
        return NULL;
    }
    if (out->count == out->cap) {
        out->cap = out->cap ? 2 * out->cap : 8;
        out->items = realloc(out->items, (size_t)out->cap * sizeof(*out->items));
    }
    return interp_default_layout(lit, &out->items[out->count++]);
}

static void leaves_free(leaves *l) {
    for (int64_t i = 0; i < l->count; i++) cxla_literal_free(l->items[i]);
    free(l->items);
    memset(l, 0, sizeof(*l));
}

/* ---- tools ------------------------------------------------------------------------------------
 */

static bool have(const char *tool) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

static char tmpdir[256];

static void make_tmpdir(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cxla_test_aot_XXXXXX");
    if (!mkdtemp(tmpdir)) test_skip_all("cannot make a temporary directory");
}

static void remove_tmpdir(void) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
}

static char *directive(const char *text, const char *key, int64_t nth) {
    size_t klen = strlen(key);
    int64_t seen = 0;
    for (const char *p = text; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *q = p;
        while (q < p + len && (*q == ' ' || *q == '\t')) q++;
        if ((size_t)(p + len - q) > klen + 3 && strncmp(q, "// ", 3) == 0 &&
            strncmp(q + 3, key, klen) == 0 && q[3 + klen] == ':' && seen++ == nth) {
            const char *v = q + 4 + klen;
            while (*v == ' ') v++;
            return strndup(v, (size_t)(p + len - v));
        }
        p = eol ? eol + 1 : NULL;
    }
    return NULL;
}

/* ---- one file of cases ----------------------------------------------------------------------- */

typedef struct one_case {
    char name[32];
    int64_t line;
    leaves args, want; /* want: the interpreter's result leaves */
} one_case;

static int total_compiled, total_skipped, total_cases;

static void put_bytes(cxla_strbuf *b, const char *name, const void *data, size_t n) {
    const unsigned char *p = data;
    cxla_strbuf_printf(b, "static const unsigned char %s[%zu] = {", name, n + 1);
    for (size_t i = 0; i < n; i++) cxla_strbuf_printf(b, "%s%u,", i % 24 ? "" : "\n", p[i]);
    cxla_strbuf_puts(b, "0};\n");
}

/* Bit for bit, except that any NaN matches any NaN (cxla_literal_compare, as the cpu
 * backend's case test). */
static bool same_bits(const cxla_literal *w, const unsigned char *got, size_t bytes) {
    if (bytes != w->size) return false;
    if (bytes == 0 || memcmp(got, w->data, bytes) == 0) return true;
    cxla_literal *g = NULL;
    cxla_status s = interp_new_array(cxla_literal_shape(w), &g);
    if (!s) {
        memcpy(g->data, got, bytes);
        s = cxla_literal_compare(g, w, NULL);
    }
    bool same = s == NULL;
    cxla_status_free(s);
    cxla_literal_free(g);
    return same;
}

/* Generates the cases of |path| that compile ahead of time, and a driver that runs each
 * and writes its return code and results to a file; builds and runs it with each
 * compiler; compares. */
static void run_file(const char *path, int file_index, const char *const *compilers, int ncc) {
    char *data;
    size_t size;
    cxla_status s = cxla_read_file(path, &data, &size);
    if (s) {
        test_fail(__FILE__, __LINE__, "%s", cxla_status_message(s));
        cxla_status_free(s);
        return;
    }
    one_case *cases = NULL;
    int64_t ncases = 0;
    cxla_strbuf driver, sources;
    cxla_strbuf_init(&driver);
    cxla_strbuf_init(&sources);
    cxla_strbuf main_body;
    cxla_strbuf_init(&main_body);
    cxla_strbuf_puts(&driver, "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n");
    char *start = data;
    int64_t line = 1, start_line = 1;
    for (char *p = data;; p++) {
        bool end = *p == 0;
        bool sep = !end && (p == data || p[-1] == '\n') && strncmp(p, "// -----", 8) == 0 &&
                   (p[8] == '\n' || p[8] == 0);
        if (end || sep) {
            char saved = *p;
            *p = 0;
            char *expect = directive(start, "EXPECT", 0);
            bool usable = (strstr(start, "ENTRY") || strstr(start, "HloModule")) && expect &&
                          !strstr(start, "// EXPECT_ERROR") && !strstr(start, "// REJECT");
            free(expect);
            cxla_module *m = NULL;
            if (usable) {
                total_cases++;
                s = cxla_hlo_parse(start, strlen(start), path, &m);
                if (!s) s = cxla_verify_module(m);
            }
            one_case c;
            memset(&c, 0, sizeof c);
            snprintf(c.name, sizeof c.name, "f%dc%d", file_index, (int)ncases);
            c.line = start_line;
            cxla_literal **args = NULL;
            int64_t nargs = 0;
            for (char *in; usable && !s && (in = directive(start, "INPUT", nargs)); nargs++) {
                args = realloc(args, (size_t)(nargs + 1) * sizeof(*args));
                s = cxla_literal_parse(in, (size_t)-1, NULL, &args[nargs]);
                free(in);
                if (s) break;
            }
            cxla_literal *oracle = NULL;
            if (usable && !s)
                s = interp_run_module(m, NULL, (const cxla_literal *const *)args, nargs, &oracle);
            cxla_strbuf h, src, dat;
            cxla_strbuf_init(&h);
            cxla_strbuf_init(&src);
            cxla_strbuf_init(&dat);
            if (usable && !s) {
                cpu_aot_options o = {.data_threshold = 64}; /* exercise NAME_data.c */
                s = cpu_aot_generate(m, &o, c.name, &h, &src, &dat);
                if (s && cxla_status_code_of(s) == CXLA_STATUS_UNIMPLEMENTED) {
                    if (getenv("CXLA_TEST_VERBOSE"))
                        fprintf(stderr, "%s:%" PRId64 ": not ahead of time: %s\n", path, start_line,
                                cxla_status_message(s));
                    total_skipped++;
                    cxla_status_free(s);
                    s = NULL;
                    usable = false;
                }
            } else if (usable && s) {
                /* The interpreter or the parser failed where EXPECT says it should not:
                 * test_hlo_cases reports that; skip here. */
                cxla_status_free(s);
                s = NULL;
                usable = false;
            }
            for (int64_t i = 0; usable && !s && i < nargs; i++) s = flatten(args[i], &c.args);
            if (usable && !s) s = flatten(oracle, &c.want);
            if (usable && !s) {
                char file[512];
                snprintf(file, sizeof file, "%s/%s.h", tmpdir, c.name);
                s = cxla_write_file(file, h.data, h.len);
                snprintf(file, sizeof file, "%s/%s.c", tmpdir, c.name);
                if (!s) s = cxla_write_file(file, src.data, src.len);
                cxla_strbuf_printf(&sources, " '%s'", file);
                if (!s && dat.len) {
                    snprintf(file, sizeof file, "%s/%s_data.c", tmpdir, c.name);
                    s = cxla_write_file(file, dat.data, dat.len);
                    cxla_strbuf_printf(&sources, " '%s'", file);
                }
            }
            if (usable && !s) {
                const char *N = c.name;
                cxla_strbuf_printf(&driver, "#include \"%s.h\"\n", N);
                for (int64_t i = 0; i < c.args.count; i++) {
                    char an[64];
                    snprintf(an, sizeof an, "%s_in%d", N, (int)i);
                    put_bytes(&driver, an, c.args.items[i]->data, c.args.items[i]->size);
                }
                cxla_strbuf_printf(&main_body,
                                   "    {\n"
                                   "        const void *args[%s_arg_count + 1] = {0};\n"
                                   "        void *res[%s_result_count + 1] = {0};\n"
                                   "        if (%s_arg_count != %" PRId64 ") return 10;\n",
                                   N, N, N, c.args.count);
                for (int64_t i = 0; i < c.args.count; i++)
                    cxla_strbuf_printf(&main_body,
                                       "        args[%d] = copy(%s_in%d, sizeof %s_in%d);\n",
                                       (int)i, N, (int)i, N, (int)i);
                cxla_strbuf_printf(
                    &main_body,
                    "        for (int i = 0; i < %s_result_count; i++) res[i] = "
                    "calloc(1, %s_result_bytes[i] + 1);\n"
                    "        void *scratch = aligned_alloc(64, %s_scratch_size() / 64 * 64 + 64);\n"
                    "        int rc = %s_run(args, res, scratch);\n"
                    "        fprintf(f, \"%s %%d %%d\\n\", rc, %s_result_count);\n"
                    "        for (int i = 0; i < %s_result_count; i++) {\n"
                    "            fprintf(f, \"%%zu\\n\", %s_result_bytes[i]);\n"
                    "            fwrite(res[i], 1, %s_result_bytes[i], f);\n"
                    "            free(res[i]);\n"
                    "        }\n"
                    "        for (int i = 0; i < %s_arg_count; i++) free((void *)args[i]);\n"
                    "        free(scratch);\n"
                    "    }\n",
                    N, N, N, N, N, N, N, N, N, N);
                cases = realloc(cases, (size_t)(ncases + 1) * sizeof(*cases));
                cases[ncases++] = c;
                memset(&c, 0, sizeof c);
            }
            if (s) {
                test_fail(__FILE__, __LINE__, "%s:%" PRId64 ": %s", path, start_line,
                          cxla_status_message(s));
                cxla_status_free(s);
                s = NULL;
            }
            leaves_free(&c.args);
            leaves_free(&c.want);
            cxla_strbuf_free(&h);
            cxla_strbuf_free(&src);
            cxla_strbuf_free(&dat);
            for (int64_t i = 0; i < nargs; i++) cxla_literal_free(args[i]);
            free(args);
            cxla_literal_free(oracle);
            cxla_module_destroy(m);
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
    if (ncases > 0) {
        cxla_strbuf_puts(&driver, "static void *copy(const unsigned char *p, size_t n) {\n"
                                  "    void *q = malloc(n);\n"
                                  "    if (q) memcpy(q, p, n);\n"
                                  "    return q;\n"
                                  "}\n\n"
                                  "int main(int argc, char **argv) {\n"
                                  "    if (argc != 2) return 2;\n"
                                  "    FILE *f = fopen(argv[1], \"wb\");\n"
                                  "    if (!f) return 3;\n"
                                  "    (void)copy;\n");
        cxla_strbuf_append(&driver, main_body.data, main_body.len);
        cxla_strbuf_puts(&driver, "    return fclose(f) != 0;\n}\n");
        char file[512];
        snprintf(file, sizeof file, "%s/driver%d.c", tmpdir, file_index);
        s = cxla_write_file(file, driver.data, driver.len);
        CHECK(s == NULL);
        cxla_status_free(s);
        for (int k = 0; k < ncc; k++) {
            char out[512], res[512];
            size_t cap = sources.len + 4096;
            char *cmd = malloc(cap);
            snprintf(out, sizeof out, "%s/prog%d_%d", tmpdir, file_index, k);
            snprintf(res, sizeof res, "%s/res%d_%d", tmpdir, file_index, k);
            int n = snprintf(cmd, cap,
                             "%s -std=c11 -Wall -Wextra -Wpedantic -Werror -O1 -I'%s' -o '%s' "
                             "'%s'%s -lm 2>&1 | head -30",
                             compilers[k], tmpdir, out, file, sources.data);
            if (n <= 0 || (size_t)n >= cap) {
                test_fail(__FILE__, __LINE__, "%s: command too long", path);
                free(cmd);
                continue;
            }
            /* A failing compile prints its errors; the missing program fails below. */
            if (system(cmd) != 0) fprintf(stderr, "%s: the compile command failed\n", path);
            snprintf(cmd, cap, "'%s' '%s'", out, res);
            int rc = access(out, X_OK) == 0 ? system(cmd) : -1;
            free(cmd);
            CHECK_MSG(rc == 0, "%s with %s: the generated program failed (%d)", path, compilers[k],
                      rc);
            if (rc != 0) continue;
            FILE *f = fopen(res, "rb");
            CHECK(f != NULL);
            for (int64_t ci = 0; f && ci < ncases; ci++) {
                one_case *c = &cases[ci];
                char nm[64];
                int code = -1, nres = -1;
                if (fscanf(f, "%63s %d %d\n", nm, &code, &nres) != 3 || strcmp(nm, c->name)) {
                    test_fail(__FILE__, __LINE__, "%s: bad results file", path);
                    break;
                }
                CHECK_MSG(code == 0 && nres == c->want.count,
                          "%s:%" PRId64 " (%s): run returned %d with %d results, want %" PRId64,
                          path, c->line, compilers[k], code, nres, c->want.count);
                for (int64_t r = 0; r < nres; r++) {
                    size_t bytes = 0;
                    if (fscanf(f, "%zu", &bytes) != 1 || fgetc(f) != '\n') break;
                    unsigned char *got = malloc(bytes + 1);
                    size_t read = fread(got, 1, bytes, f);
                    const cxla_literal *w = r < c->want.count ? c->want.items[r] : NULL;
                    bool same = w && read == bytes && same_bits(w, got, bytes);
                    CHECK_MSG(same,
                              "%s:%" PRId64 " (%s): result %" PRId64
                              " differs from the interpreter",
                              path, c->line, compilers[k], r);
                    free(got);
                }
                if (k == 0) total_compiled++;
            }
            if (f) fclose(f);
        }
    }
    for (int64_t i = 0; i < ncases; i++) {
        leaves_free(&cases[i].args);
        leaves_free(&cases[i].want);
    }
    free(cases);
    cxla_strbuf_free(&driver);
    cxla_strbuf_free(&sources);
    cxla_strbuf_free(&main_body);
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_aot_cases(void) {
    const char *candidates[] = {"gcc", "clang", "tcc"};
    const char *compilers[3];
    int ncc = 0;
    for (int i = 0; i < 3; i++)
        if (have(candidates[i])) compilers[ncc++] = candidates[i];
    if (ncc == 0) test_skip_all("no C compiler (gcc, clang, tcc) found");
    make_tmpdir();
    const char *dir = CXLA_SOURCE_DIR "/tests/hlo/cases";
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".hlo")) continue;
        names = realloc(names, sizeof(char *) * (n + 1));
        names[n++] = strdup(e->d_name);
    }
    if (d) closedir(d);
    if (n) qsort(names, n, sizeof(char *), compare_names);
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        run_file(path, (int)i, compilers, ncc);
        free(names[i]);
    }
    free(names);
    fprintf(stderr,
            "aot: %d of %d cases compile ahead of time (run with %d compilers), %d do not\n",
            total_compiled, total_cases, ncc, total_skipped);
    /* A floor, so that a regression that makes everything UNIMPLEMENTED fails. */
    CHECK(total_compiled >= 100);
    if (!test_failures) remove_tmpdir();
}

/* ---- errors -----------------------------------------------------------------------------------
 */

static cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "test", &m);
    CHECK(s == NULL);
    cxla_status_free(s);
    return m;
}

static void test_aot_errors(void) {
    cxla_module *m = parse("HloModule s\n"
                           "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                           "  ROOT c = pred[] compare(a, b), direction=LT\n}\n"
                           "ENTRY e {\n  p = f32[4] parameter(0)\n"
                           "  ROOT my_sort = f32[4] sort(p), dimensions={0}, to_apply=lt\n}\n");
    cxla_strbuf h, c, d;
    cxla_strbuf_init(&h);
    cxla_strbuf_init(&c);
    cxla_strbuf_init(&d);
    const char *msg =
        test_expect_error(cpu_aot_generate(m, NULL, "s", &h, &c, &d), __FILE__, __LINE__);
    CHECK(strstr(msg, "my_sort") != NULL);
    CHECK(strstr(msg, "sort") != NULL);
    CHECK(strstr(msg, "ahead-of-time") != NULL);
    cxla_module_destroy(m);
    /* A non-row-major entry result. */
    m = parse("HloModule t, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{0,1}}\n"
              "ENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n"
              "  ROOT n = f32[2,3]{0,1} negate(p)\n}\n");
    msg = test_expect_error(cpu_aot_generate(m, NULL, "t", &h, &c, &d), __FILE__, __LINE__);
    CHECK(strstr(msg, "row-major") != NULL);
    cxla_module_destroy(m);
    cxla_strbuf_free(&h);
    cxla_strbuf_free(&c);
    cxla_strbuf_free(&d);
}

/* The header compiles as C++ too (extern "C"), and the files land where cpu_aot_write says. */
static void test_aot_write_and_cplusplus(void) {
    make_tmpdir();
    cxla_module *m = parse("HloModule w\n"
                           "ENTRY e {\n  x = f32[3] parameter(0)\n  y = f32[3] parameter(1)\n"
                           "  ROOT s = f32[3] add(x, y)\n}\n");
    cpu_aot_options o = {.prefix = "my_model", .target = CPU_AOT_NATIVE};
    cxla_status s = cpu_aot_write(m, &o, tmpdir, "w");
    CHECK(s == NULL);
    cxla_status_free(s);
    char path[512];
    snprintf(path, sizeof path, "%s/w.h", tmpdir);
    CHECK(access(path, R_OK) == 0);
    snprintf(path, sizeof path, "%s/w.c", tmpdir);
    CHECK(access(path, R_OK) == 0);
    snprintf(path, sizeof path, "%s/w_data.c", tmpdir);
    CHECK(access(path, R_OK) != 0); /* no big constants */
    char *text = NULL;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/w.h", tmpdir);
    s = cxla_read_file(path, &text, &size);
    CHECK(s == NULL);
    cxla_status_free(s);
    CHECK(text && strstr(text, "int my_model_run(const void *const *args"));
    CHECK(text && strstr(text, "extern \"C\""));
    CHECK(text && strstr(text, "f32[3], row-major, 12 bytes"));
    free(text);
    if (have("g++")) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "printf '#include \"w.h\"\\nint main() { return my_model_arg_count - 2; }\\n' > "
                 "'%s/main.cc' && g++ -std=c++11 -Wall -Wextra -Werror -I'%s' -c -o '%s/main.o' "
                 "'%s/main.cc'",
                 tmpdir, tmpdir, tmpdir, tmpdir);
        CHECK(system(cmd) == 0);
    }
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

TEST_MAIN(TEST(test_aot_errors), TEST(test_aot_write_and_cplusplus), TEST(test_aot_cases))
