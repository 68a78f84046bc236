/* Helpers shared by the builder tests: building, running on the interpreter (directly and
 * after a round trip through HLO text), literals from text, scalar sub-computations. */
#ifndef CXLA_TESTS_BUILDER_TEST_UTIL_H_
#define CXLA_TESTS_BUILDER_TEST_UTIL_H_

#include <stdlib.h>
#include <string.h>

#include "builder/builder_internal.h"
#include "cxla/builder.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "cpu/cpu.h"
#include "interp/interp.h"

static inline cxla_builder *new_builder(const char *name) {
    cxla_builder *b = NULL;
    CHECK_OK(cxla_builder_create(name, &b));
    return b;
}

/* Builds and destroys |b|; NULL (after a failed CHECK) when the build fails. */
static inline cxla_xla_computation *finish(cxla_builder *b) {
    cxla_xla_computation *c = NULL;
    CHECK_OK(cxla_builder_build(b, &c));
    cxla_builder_destroy(b);
    return c;
}

static inline cxla_literal *lit(const char *text) {
    cxla_literal *l = NULL;
    CHECK_OK(cxla_literal_parse(text, (size_t)-1, NULL, &l));
    return l;
}

/* A scalar computation (x, y) -> x OP y of |type|. */
static inline cxla_xla_computation *scalar_comp(cxla_type type, cxla_op (*fn)(cxla_op, cxla_op),
                                                const char *name) {
    cxla_builder *b = new_builder(name);
    cxla_shape s = {.type = type};
    fn(cxla_parameter(b, 0, &s, "x"), cxla_parameter(b, 1, &s, "y"));
    return finish(b);
}

/* Runs |c| on literals given as text (NULL-terminated list) on the interpreter, twice:
 * the built module itself and the module parsed back from its HLO text; the two results
 * must agree. Returns the result (caller frees) or NULL. */
static inline cxla_literal *run_args(const cxla_xla_computation *c, const char *const *args) {
    if (!c) return NULL;
    cxla_literal *in[16] = {0};
    int n = 0;
    while (args && args[n]) {
        in[n] = lit(args[n]);
        n++;
    }
    exec_run_options opts = {0};
    cxla_literal *out = NULL, *out2 = NULL;
    CHECK_OK(interp_run_module(cxla_xla_computation_module(c), &opts,
                               (const cxla_literal *const *)in, n, &out));
    /* CXLA_TEST_BACKEND=cpu also runs the built module on the cpu backend, which must give
     * the interpreter's result bit for bit (tests/cpu/test_cpu_suites.sh). */
    const char *backend = getenv("CXLA_TEST_BACKEND");
    if (out && backend && strcmp(backend, "cpu") == 0) {
        void *compiled = NULL;
        exec_compile_options co = {0};
        cxla_literal *cpu_out = NULL;
        CHECK_OK(cpu_backend.compile(cxla_xla_computation_module(c), &co, &compiled));
        if (compiled) {
            CHECK_OK(
                cpu_backend.execute(compiled, &opts, (const cxla_literal *const *)in, n, &cpu_out));
            cpu_backend.destroy(compiled);
        }
        if (cpu_out) CHECK_OK(cxla_literal_compare(cpu_out, out, NULL));
        cxla_literal_free(cpu_out);
    }
    char *text = NULL;
    CHECK_OK(cxla_xla_computation_to_hlo_text(c, &text));
    cxla_module *m = NULL;
    if (text) {
        cxla_status s = cxla_hlo_parse(text, strlen(text), "built", &m);
        if (s) {
            CHECK_MSG(false, "reparsing the built text failed: %s\n%s", cxla_status_message(s),
                      text);
            cxla_status_free(s);
        } else {
            CHECK_OK(cxla_verify_module(m));
            CHECK_OK(interp_run_module(m, &opts, (const cxla_literal *const *)in, n, &out2));
            if (out && out2) CHECK_OK(cxla_literal_compare(out2, out, NULL));
        }
    }
    cxla_module_destroy(m);
    free(text);
    cxla_literal_free(out2);
    for (int i = 0; i < n; i++) cxla_literal_free(in[i]);
    return out;
}

/* Runs and compares with |expected| (literal text with its shape); exact unless |tol|. */
static inline void expect_run(const cxla_xla_computation *c, const char *const *args,
                              const char *expected, const cxla_tolerance *tol) {
    cxla_literal *out = run_args(c, args);
    cxla_literal *want = lit(expected);
    if (out && want) {
        cxla_status s = cxla_literal_compare(out, want, tol);
        if (s) {
            char *got = cxla_literal_to_string(out, CXLA_LITERAL_PRINT_SHAPE);
            CHECK_MSG(false, "result mismatch: %s\n  got:      %s\n  expected: %s",
                      cxla_status_message(s), got ? got : "?", expected);
            free(got);
            cxla_status_free(s);
        }
    }
    cxla_literal_free(out);
    cxla_literal_free(want);
}

/* Builds |b| (destroying it), runs it and compares; frees the computation. */
static inline void check_build_run(cxla_builder *b, const char *const *args, const char *expected) {
    cxla_xla_computation *c = finish(b);
    expect_run(c, args, expected, NULL);
    cxla_xla_computation_free(c);
}

/* The HLO text of a computation (caller frees). */
static inline char *hlo_text(const cxla_xla_computation *c) {
    char *t = NULL;
    if (c) CHECK_OK(cxla_xla_computation_to_hlo_text(c, &t));
    return t;
}

/* Number of instructions of |opcode| in the entry computation. */
static inline int count_op(const cxla_xla_computation *c, cxla_opcode opcode) {
    const cxla_module *m = cxla_xla_computation_module(c);
    int n = 0;
    for (int64_t i = 0; m && i < m->entry->instr_count; i++)
        n += m->entry->instrs[i]->opcode == opcode;
    return n;
}

/* Checks building |b| fails with a message containing |substr|; destroys |b|. */
static inline void expect_build_error(cxla_builder *b, const char *substr) {
    cxla_xla_computation *c = NULL;
    CHECK_ERROR_HAS(cxla_builder_build(b, &c), substr);
    CHECK(c == NULL);
    cxla_xla_computation_free(c);
    cxla_builder_destroy(b);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NOARGS    ((const char *const *)NULL)
#define SHAPE(t, ...)                                                                              \
    ((cxla_shape){.type = (t),                                                                     \
                  .rank = sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t),                      \
                  .dims = (int64_t[]){__VA_ARGS__}})
#define SCALAR(t) ((cxla_shape){.type = (t)})
#define I64S(...) ((const int64_t[]){__VA_ARGS__})
#define NI64(...) (int64_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

#endif /* CXLA_TESTS_BUILDER_TEST_UTIL_H_ */
