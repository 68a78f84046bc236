/* Runs the data-driven cases in tests/hlo/cases/ (see its README) on the interpreter, or,
 * when CASES_BACKEND names another backend (tests/cpu/test_cpu_cases.c includes this file
 * so), on that backend: each result must match the case's EXPECT and, bit for bit (any
 * NaN matching any NaN), the interpreter's result. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>

#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "runtime/replicas.h"

typedef struct hlo_case {
    const char *file;
    int64_t first_line; /* of the case in the file */
    char *text;         /* the case's text, NUL-terminated */
} hlo_case;

static int cases_run, cases_failed;

#ifdef CASES_BACKEND
/* Whether |m| computes an f32 (or smaller float) transcendental function, which the
 * backend may approximate within a documented bound (docs/semantics.md). */
static bool uses_fast_math(const cxla_module *m) {
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            const cxla_instr *in = m->comps[c]->instrs[i];
            if (cxla_type_is_float(in->shape.type) && in->shape.type != CXLA_F64 &&
                CASES_FAST_MATH_OP(in->opcode))
                return true;
        }
    return false;
}

#ifdef CASES_FAST_REDUCE
/* Whether |m| sums 128 or more f32/f64 elements per output element, which the backend's
 * fast reduction order may sum in another order (docs/semantics.md; CASES_FAST_REDUCE
 * says whether that order is on). */
static bool reorders_sums(const cxla_module *m) {
    if (!CASES_FAST_REDUCE) return false;
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            const cxla_instr *in = m->comps[c]->instrs[i];
            if (in->opcode != CXLA_OP_REDUCE || in->operand_count != 2) continue;
            const cxla_shape *s = &in->operands[0]->shape;
            const cxla_computation *r = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
            if ((s->type != CXLA_F32 && s->type != CXLA_F64) || !r || !r->root ||
                r->root->opcode != CXLA_OP_ADD)
                continue;
            int64_t n = 1, out = 1;
            for (int64_t k = 0; k < s->rank; k++) n *= s->dims[k];
            for (int64_t k = 0; k < in->shape.rank; k++) out *= in->shape.dims[k];
            if (out > 0 && n / out >= 128) return true;
        }
    return false;
}
#else
static bool reorders_sums(const cxla_module *m) {
    (void)m;
    return false;
}
#endif

/* Runs |m| on the backend under test, then on the interpreter, which must agree: bit for
 * bit, or, for a module with approximated functions or long sums in the fast reduction
 * order, within a tolerance loose enough for
 * their bounds compounded through the case (about 100 ulp of f32, 2 of bf16) and tight
 * enough that a wrong kernel fails. Such a result is then checked against EXPECT as the
 * interpreter's (its exact value is what EXPECT states). */
static cxla_status run_module(const cxla_module *m, const cxla_literal *const *args, int64_t n,
                              cxla_literal **out) {
    void *compiled = NULL;
    exec_compile_options co = {0};
    exec_run_options ro = {0};
    CXLA_RETURN_IF_ERROR(CASES_BACKEND.compile(m, &co, &compiled));
    cxla_status s = CASES_BACKEND.execute(compiled, &ro, args, n, out);
    CASES_BACKEND.destroy(compiled);
    cxla_literal *oracle = NULL;
    cxla_status so = interp_run_module(m, NULL, args, n, &oracle);
    if (!s && !so) {
        so = cxla_literal_compare(*out, oracle, NULL);
        if (so && (uses_fast_math(m) || reorders_sums(m))) {
            cxla_tolerance tol = {.atol = 1e-6, .rtol = 1e-5, .ulps = 2};
            cxla_status within = cxla_literal_compare(*out, oracle, &tol);
            if (!within) {
                cxla_status_free(so);
                so = NULL;
                cxla_literal_free(*out);
                *out = oracle;
                oracle = NULL;
            }
            cxla_status_free(within);
        }
        if (so)
            so = cxla_status_annotate(so, "%s differs from the interpreter", CASES_BACKEND.name);
        if (so) {
            cxla_literal_free(*out);
            *out = NULL;
            s = so;
            so = NULL;
        }
    } else if (!s != !so) {
        /* One failed, the other did not: an error case must fail on both. */
        cxla_status e = cxla_error(CXLA_STATUS_INTERNAL, "%s %s where the interpreter %s: %s",
                                   CASES_BACKEND.name, s ? "failed" : "succeeded",
                                   s ? "succeeded" : "failed", cxla_status_message(s ? s : so));
        cxla_status_free(s);
        s = e;
        cxla_literal_free(*out);
        *out = NULL;
    }
    cxla_status_free(so);
    cxla_literal_free(oracle);
    return s;
}
#else
static cxla_status run_module(const cxla_module *m, const cxla_literal *const *args, int64_t n,
                              cxla_literal **out) {
    return interp_run_module(m, NULL, args, n, out);
}
#endif

/* Reads "// KEY: value" directives; returns a malloc'd array of values for |key|. */
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
            values[n] = strndup(v, (size_t)(p + len - v));
            n++;
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

static void case_fail(const hlo_case *c, const char *what, const char *message) {
    fprintf(stderr, "%s (case at line %" PRId64 "): %s: %s\n", c->file, c->first_line, what,
            message);
    cases_failed++;
    test_failures++;
}

/* ---- cases on several devices ("// REPLICAS: n") ------------------------------------- */

/* A case with "// REPLICAS: n" runs on n replicas (times the module's partitions) in one
 * process (cxla_run_replicated): its INPUTs are the arguments of device 0, then those of
 * device 1, ... (or one set every device gets), its EXPECTs the result of each device (or
 * one every device must give), an EXPECT_ERROR a text of the run's error. With
 * CASES_BACKEND every device runs on that backend, and each result must equal the
 * interpreter's run's bit for bit (an error case must fail on both). */
static cxla_status run_devices(const cxla_module *m, const exec_backend *backend, int64_t replicas,
                               const cxla_literal *const *const *per, int64_t nargs,
                               cxla_literal **results) {
    cxla_replicas_options o = {.replica_count = replicas, .timeout_seconds = 60};
    exec_compile_options co = {0};
    cxla_status s = NULL;
    if (backend) {
        o.backend = backend;
        s = backend->compile(m, &co, &o.compiled);
    }
    if (!s) s = cxla_run_replicated(m, &o, per, nargs, results, NULL);
    if (backend && o.compiled) backend->destroy(o.compiled);
    return s;
}

static void free_results(cxla_literal **r, int64_t n) {
    for (int64_t d = 0; r && d < n; d++) cxla_literal_free(r[d]);
    free(r);
}

static void run_replicated_case(const hlo_case *c, const cxla_module *m, const char *count,
                                char **inputs, int64_t ni, char **expect, int64_t ne, char **errs,
                                int64_t nerr) {
    int64_t replicas = strtoll(count, NULL, 10);
    int64_t parts = m->num_partitions > 0 ? m->num_partitions : 1;
    int64_t devices = replicas * parts, nargs = m->entry ? m->entry->param_count : 0;
    bool expects = nerr == 1 ? ne == 0 : nerr == 0 && (ne == 1 || ne == devices);
    if (replicas < 1 || replicas > 64 || !expects || (ni != nargs && ni != devices * nargs)) {
        case_fail(c, "bad case",
                  "REPLICAS needs one set of INPUTs or one per device, one EXPECT or one per "
                  "device, or one EXPECT_ERROR");
        return;
    }
    cxla_literal **args = calloc((size_t)(ni + 1), sizeof(*args));
    const cxla_literal **per = calloc((size_t)(devices + 1), sizeof(*per) * (size_t)(nargs + 1));
    const cxla_literal *const **rows = calloc((size_t)(devices + 1), sizeof(*rows));
    cxla_literal **got = calloc((size_t)devices, sizeof(*got));
    cxla_status s = NULL;
    for (int64_t i = 0; i < ni && !s; i++) {
        s = cxla_literal_parse(inputs[i], (size_t)-1, NULL, &args[i]);
        if (s) s = cxla_status_annotate(s, "INPUT %" PRId64, i);
    }
    for (int64_t d = 0; d < devices && !s; d++) {
        for (int64_t j = 0; j < nargs; j++)
            per[d * nargs + j] = args[(ni == nargs ? 0 : d * nargs) + j];
        rows[d] = per + d * nargs;
    }
    if (!s) s = run_devices(m, NULL, replicas, rows, nargs, got);
#ifdef CASES_BACKEND
    cxla_literal **oracle = got;
    cxla_status so = s;
    got = calloc((size_t)devices, sizeof(*got));
    s = run_devices(m, &CASES_BACKEND, replicas, rows, nargs, got);
    if (!s != !so) {
        cxla_status e = cxla_error(CXLA_STATUS_INTERNAL, "%s %s where the interpreter %s: %s",
                                   CASES_BACKEND.name, s ? "failed" : "succeeded",
                                   s ? "succeeded" : "failed", cxla_status_message(s ? s : so));
        cxla_status_free(s);
        s = e;
    } else if (so && nerr && !strstr(cxla_status_message(so), errs[0])) {
        cxla_status_free(s);
        s = so;
        so = NULL;
    }
    for (int64_t d = 0; d < devices && !s; d++) {
        s = cxla_literal_compare(got[d], oracle[d], NULL);
        if (s)
            s = cxla_status_annotate(s, "device %" PRId64 ": %s differs from the interpreter", d,
                                     CASES_BACKEND.name);
    }
    cxla_status_free(so);
    free_results(oracle, devices);
#endif
    if (nerr) {
        if (!s)
            case_fail(c, "expected an error", errs[0]);
        else if (!strstr(cxla_status_message(s), errs[0]))
            case_fail(c, "wrong error", cxla_status_message(s));
        cxla_status_free(s);
        s = NULL;
    }
    for (int64_t d = 0; d < devices && !s && !nerr; d++) {
        cxla_literal *want = NULL;
        s = cxla_literal_parse(expect[ne == 1 ? 0 : d], (size_t)-1, NULL, &want);
        if (!s) s = cxla_literal_compare(got[d], want, NULL);
        if (s) {
            char *g = cxla_literal_to_string(got[d], CXLA_LITERAL_PRINT_SHAPE);
            s = cxla_status_annotate(s, "device %" PRId64 ": result %s", d, g ? g : "?");
            free(g);
        }
        cxla_literal_free(want);
    }
    if (s) {
        case_fail(c, "failed", cxla_status_message(s));
        cxla_status_free(s);
    }
    free_results(got, devices);
    for (int64_t i = 0; i < ni; i++) cxla_literal_free(args[i]);
    free(args);
    free(per);
    free(rows);
}

static void run_case(const hlo_case *c) {
    cases_run++;
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(c->text, strlen(c->text), c->file, &m);
    if (!s) s = cxla_verify_module(m);
    /* REJECT: the parser or the verifier must refuse the module with this text. */
    char **reject;
    int64_t nrej = directives(c->text, "REJECT", &reject);
    if (nrej) {
        if (nrej > 1 || strstr(c->text, "// EXPECT"))
            case_fail(c, "bad case", "REJECT goes alone, once");
        else if (!s)
            case_fail(c, "expected the module to be rejected", reject[0]);
        else if (!strstr(cxla_status_message(s), reject[0]))
            case_fail(c, "rejected with the wrong error", cxla_status_message(s));
        cxla_status_free(s);
        free_strings(reject, nrej);
        cxla_module_destroy(m);
        return;
    }
    if (s) {
        case_fail(c, "module rejected", cxla_status_message(s));
        cxla_status_free(s);
        cxla_module_destroy(m);
        return;
    }
    char **inputs, **expect, **expect_error, **tolerance;
    int64_t ni = directives(c->text, "INPUT", &inputs);
    int64_t ne = directives(c->text, "EXPECT", &expect);
    int64_t nerr = directives(c->text, "EXPECT_ERROR", &expect_error);
    int64_t nt = directives(c->text, "TOLERANCE", &tolerance);
    char **replicas;
    int64_t nrep = directives(c->text, "REPLICAS", &replicas);
    if (nrep) {
        run_replicated_case(c, m, replicas[0], inputs, ni, expect, ne, expect_error, nerr);
        free_strings(replicas, nrep);
        free_strings(inputs, ni);
        free_strings(expect, ne);
        free_strings(expect_error, nerr);
        free_strings(tolerance, nt);
        cxla_module_destroy(m);
        return;
    }
    cxla_literal **args = calloc((size_t)(ni ? ni : 1), sizeof(*args));
    for (int64_t i = 0; i < ni && !s; i++) {
        s = cxla_literal_parse(inputs[i], (size_t)-1, NULL, &args[i]);
        if (s) s = cxla_status_annotate(s, "INPUT %" PRId64, i);
    }
    cxla_literal *result = NULL;
    if (!s) {
        if (ne + nerr != 1) {
            case_fail(c, "bad case", "needs exactly one EXPECT or EXPECT_ERROR");
        } else {
            s = run_module(m, (const cxla_literal *const *)args, ni, &result);
            if (nerr) {
                if (!s) {
                    case_fail(c, "expected an error", expect_error[0]);
                } else if (!strstr(cxla_status_message(s), expect_error[0])) {
                    case_fail(c, "wrong error", cxla_status_message(s));
                }
                cxla_status_free(s);
                s = NULL;
            } else if (!s) {
                cxla_literal *want = NULL;
                s = cxla_literal_parse(expect[0], (size_t)-1, NULL, &want);
                if (s) s = cxla_status_annotate(s, "EXPECT");
                cxla_tolerance tol = {0};
                bool have_tol = nt > 0;
                if (have_tol) {
                    const char *t = tolerance[0];
                    const char *a = strstr(t, "atol="), *r = strstr(t, "rtol="),
                               *u = strstr(t, "ulps=");
                    if (a) tol.atol = strtod(a + 5, NULL);
                    if (r) tol.rtol = strtod(r + 5, NULL);
                    if (u) tol.ulps = strtoll(u + 5, NULL, 10);
                }
                if (!s) s = cxla_literal_compare(result, want, have_tol ? &tol : NULL);
                if (s) {
                    char *got = cxla_literal_to_string(result, CXLA_LITERAL_PRINT_SHAPE);
                    s = cxla_status_annotate(s, "result %s", got ? got : "?");
                    free(got);
                }
                cxla_literal_free(want);
            }
        }
    }
    if (s) {
        case_fail(c, "failed", cxla_status_message(s));
        cxla_status_free(s);
    }
    cxla_literal_free(result);
    for (int64_t i = 0; i < ni; i++) cxla_literal_free(args[i]);
    free(args);
    free_strings(inputs, ni);
    free_strings(expect, ne);
    free_strings(expect_error, nerr);
    free_strings(tolerance, nt);
    cxla_module_destroy(m);
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
    /* Split at lines that are exactly "// -----". */
    char *start = data;
    int64_t line = 1, start_line = 1;
    for (char *p = data;; p++) {
        bool end = *p == 0;
        bool sep = !end && (p == data || p[-1] == '\n') && strncmp(p, "// -----", 8) == 0 &&
                   (p[8] == '\n' || p[8] == 0);
        if (end || sep) {
            char saved = *p;
            *p = 0;
            if (strstr(start, "ENTRY") || strstr(start, "HloModule")) {
                hlo_case c = {path, start_line, start};
                run_case(&c);
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
    free(data);
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        names = realloc(names, sizeof(char *) * (n + 1));
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(char *), compare_names);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        size_t len = strlen(names[i]);
        if (len > 4 && strcmp(names[i] + len - 4, ".hlo") == 0)
            run_file(path);
        else if (!strchr(names[i], '.'))
            run_dir(path);
        free(names[i]);
    }
    free(names);
}

static void test_cases(void) {
    const char *filter = getenv("CXLA_CASES");
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/tests/hlo/cases%s%s", CXLA_SOURCE_DIR, filter ? "/" : "",
             filter ? filter : "");
    size_t len = strlen(dir);
    if (len > 4 && strcmp(dir + len - 4, ".hlo") == 0)
        run_file(dir);
    else
        run_dir(dir);
    printf("%d cases run, %d failed\n", cases_run, cases_failed);
    CHECK(cases_run > 0);
}

TEST_MAIN(TEST(test_cases))
