/* Narrow f32 products (passes/epilogue.h: cxla_dot_narrow; src/cpu/emit_dot.c): which dots
 * take each form, that the output fusion pass leaves them unfused, and that the emitter's
 * kernels for them give the interpreter's bits on 1, 2 and 3 threads, over shapes with
 * partial row blocks, partial 16-column groups, several column panels, contractions of 1
 * and operands holding infinities, NaN and -0 (the kernels that read 16 values of a
 * 10-wide rhs row read into the next row; those lanes must never reach a result). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"
#include "passes/epilogue.h"

static uint64_t rng_state;

static double uniform(void) { /* splitmix64 -> [0, 1) */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

/* Floats in [-2, 2); with |specials|, about one in 64 an infinity, a NaN or -0. */
static void fill(cxla_literal *lit, bool specials) {
    float *p = cxla_literal_data(lit);
    for (int64_t i = 0; i < lit->count; i++) {
        p[i] = (float)(uniform() * 4 - 2);
        if (specials && uniform() < 1.0 / 64) {
            static const float sp[] = {INFINITY, -INFINITY, NAN, -0.0f};
            p[i] = sp[(int)(uniform() * 4) & 3];
        }
    }
}

static cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "narrow_test", &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        test_fail(__FILE__, __LINE__, "module rejected: %s\n%s", cxla_status_message(s), text);
        cxla_status_free(s);
        cxla_module_destroy(m);
        return NULL;
    }
    return m;
}

/* The instruction named |name| in |m|'s entry. */
static const cxla_instr *named(const cxla_module *m, const char *name) {
    for (int64_t i = 0; m && m->entry && i < m->entry->instr_count; i++)
        if (strcmp(m->entry->instrs[i]->name, name) == 0) return m->entry->instrs[i];
    return NULL;
}

/* Runs |text| (root "r", whose dot is "d") on the interpreter and on the cpu backend at 1,
 * 2 and 3 threads; each result must be the interpreter's, bit for bit (any NaN for a NaN), and
 * "d" must run as a kernel when |kernel|. */
static void check_exact(const char *text, bool specials, bool kernel) {
    cxla_module *m = parse(text);
    if (!m) return;
    int64_t params = m->entry->param_count;
    cxla_literal *args[4] = {0}, *want = NULL;
    for (int64_t p = 0; p < params && p < 4; p++) {
        CHECK_OK(cxla_literal_create(&m->entry->params[p]->shape, &args[p]));
        fill(args[p], specials);
    }
    CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)args, params, &want));
    for (int threads = 1; threads <= 3 && want; threads++) {
        void *compiled = NULL;
        exec_compile_options co = {.thread_count = threads};
        CHECK_OK(cpu_backend.compile(m, &co, &compiled));
        if (!compiled) continue;
        const char *what = cpu_compiled_call_what(compiled, "d");
        if (kernel)
            CHECK_MSG(what && strncmp(what, "kernel", 6) == 0, "%s\nd runs as '%s', not a kernel",
                      text, what ? what : "-");
        cxla_literal *got = NULL;
        exec_run_options ro = {0};
        CHECK_OK(
            cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, params, &got));
        if (got) {
            CHECK_EQ_I64(got->count, want->count);
            int64_t bad = 0, first = -1;
            const float *gf = cxla_literal_data(got), *wf = cxla_literal_data(want);
            for (int64_t i = 0; i < want->count && got->count == want->count; i++) {
                uint32_t gb, wb;
                memcpy(&gb, &gf[i], 4);
                memcpy(&wb, &wf[i], 4);
                /* Which NaN comes out of two NaNs depends on the compiler's operand order,
                 * in the interpreter as in a kernel (docs/semantics.md): NaN equals NaN. */
                bool same = gb == wb || (isnan(gf[i]) && isnan(wf[i]));
                if (!same && bad++ == 0) first = i;
            }
            CHECK_MSG(bad == 0,
                      "%s\n%d threads: %" PRId64 " elements differ from the interpreter "
                      "(first at %" PRId64 ")",
                      text, threads, bad, first);
        }
        cxla_literal_free(got);
        cpu_backend.destroy(compiled);
    }
    for (int64_t p = 0; p < params && p < 4; p++) cxla_literal_free(args[p]);
    cxla_literal_free(want);
    cxla_module_destroy(m);
}

/* A module whose root is the dot "d" of f32 operands of the given dims. */
static char *dot_text(int64_t l0, int64_t l1, int64_t r0, int64_t r1, int lc, int rc) {
    int64_t m = lc == 1 ? l0 : l1, n = rc == 0 ? r1 : r0;
    char *t = malloc(512);
    if (!t) return NULL;
    snprintf(t, 512,
             "HloModule n\nENTRY e {\n  a = f32[%" PRId64 ",%" PRId64 "] parameter(0)\n"
             "  b = f32[%" PRId64 ",%" PRId64 "] parameter(1)\n"
             "  ROOT d = f32[%" PRId64 ",%" PRId64 "] dot(a, b), lhs_contracting_dims={%d}, "
             "rhs_contracting_dims={%d}\n}\n",
             l0, l1, r0, r1, m, n, lc, rc);
    return t;
}

static cxla_dot_narrow_form form_of(const char *text) {
    cxla_module *m = parse(text);
    const cxla_instr *d = named(m, "d");
    cxla_dot_narrow_form f = d ? cxla_dot_narrow(d) : CXLA_DOT_WIDE;
    cxla_module_destroy(m);
    return f;
}

typedef struct shape_case {
    int64_t l0, l1, r0, r1;
    int lc, rc;
    cxla_dot_narrow_form form;
} shape_case;

static const shape_case shapes[] = {
    /* lhs transposed, N <= 16: full and partial groups of 16 rows, K of 1 */
    {300, 37, 300, 10, 0, 0, CXLA_DOT_NARROW_LHS_T},
    {256, 1024, 256, 10, 0, 0, CXLA_DOT_NARROW_LHS_T}, /* the MLP's h2^T d2 */
    {1, 16, 1, 1, 0, 0, CXLA_DOT_NARROW_LHS_T},
    {70, 33, 16, 70, 0, 1, CXLA_DOT_NARROW_LHS_T}, /* rhs transposed too */
    /* K <= 16 < N: partial 16-column groups, several 256-column panels, rows % 4 */
    {256, 10, 1024, 10, 1, 1, CXLA_DOT_NARROW_K}, /* the MLP's d2 w2^T */
    {37, 10, 531, 10, 1, 1, CXLA_DOT_NARROW_K},
    {16, 1, 1, 17, 1, 0, CXLA_DOT_NARROW_K},
    {16, 41, 16, 300, 0, 0, CXLA_DOT_NARROW_K}, /* lhs transposed, N > 16, K = 16 */
    {5, 23, 5, 300, 0, 0, CXLA_DOT_NARROW_K},
    /* lhs [M, K], rhs [K, N], 8 <= N <= 16: the last rhs rows from the padded copy */
    {256, 1024, 1024, 10, 1, 0, CXLA_DOT_NARROW_N}, /* the MLP's h2 w2 */
    {37, 531, 531, 13, 1, 0, CXLA_DOT_NARROW_N},
    {19, 1, 1, 8, 1, 0, CXLA_DOT_NARROW_N},
    {19, 2, 2, 9, 1, 0, CXLA_DOT_NARROW_N},
    {23, 40, 40, 16, 1, 0, CXLA_DOT_NARROW_N},
    /* not narrow: too few rows, N too small for lanes along N, rhs transposed, wide */
    {15, 40, 40, 10, 1, 0, CXLA_DOT_WIDE},
    {64, 40, 40, 7, 1, 0, CXLA_DOT_WIDE},
    {64, 40, 10, 40, 1, 1, CXLA_DOT_WIDE},
    {64, 40, 40, 64, 1, 0, CXLA_DOT_WIDE},
};

static void test_forms_and_bits(void) {
    rng_state = 21;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        const shape_case *c = &shapes[i];
        char *text = dot_text(c->l0, c->l1, c->r0, c->r1, c->lc, c->rc);
        if (!text) continue;
        cxla_dot_narrow_form f = form_of(text);
        CHECK_MSG(f == c->form, "%s\nform %d, not %d", text, (int)f, (int)c->form);
        if (f != CXLA_DOT_WIDE) {
            check_exact(text, false, true);
            check_exact(text, true, true);
        }
        free(text);
    }
}

/* Not narrow: batch dims, other types, a vector operand, a non-default layout. */
static void test_not_narrow(void) {
    static const char *const texts[] = {
        "HloModule n\nENTRY e {\n  a = f32[2,32,8] parameter(0)\n  b = f32[2,8,10] parameter(1)\n"
        "  ROOT d = f32[2,32,10] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
        "rhs_batch_dims={0}, rhs_contracting_dims={1}\n}\n",
        "HloModule n\nENTRY e {\n  a = f64[32,8] parameter(0)\n  b = f64[8,10] parameter(1)\n"
        "  ROOT d = f64[32,10] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
        "HloModule n\nENTRY e {\n  a = f32[32,8] parameter(0)\n  b = f32[8] parameter(1)\n"
        "  ROOT d = f32[32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
        "HloModule n\nENTRY e {\n  a = f32[32,8]{0,1} parameter(0)\n  b = f32[8,10] parameter(1)\n"
        "  ROOT d = f32[32,10] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        CHECK_MSG(form_of(texts[i]) == CXLA_DOT_WIDE, "%s\nis narrow", texts[i]);
}

/* A dense layer of 10 outputs with its bias (the MLP's last layer): the output fusion pass
 * leaves the narrow dot alone, the bias add is a loop after its kernel, and the whole is
 * the interpreter's bits. */
static void test_layer_unfused(void) {
    static const char *const text =
        "HloModule layer\nENTRY e {\n  h = f32[64,200] parameter(0)\n"
        "  w = f32[200,10] parameter(1)\n  b = f32[10] parameter(2)\n"
        "  d = f32[64,10] dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  bb = f32[64,10] broadcast(b), dimensions={1}\n"
        "  ROOT r = f32[64,10] add(d, bb)\n}\n";
    rng_state = 5;
    check_exact(text, false, true);
    cxla_module *m = parse(text), *opt = NULL;
    if (!m) return;
    cxla_strbuf src;
    cxla_strbuf_init(&src);
    CHECK_OK(cpu_generate(m, NULL, &opt, &src, NULL));
    cxla_strbuf_free(&src);
    const cxla_instr *d = named(opt, "d");
    CHECK_MSG(d && d->opcode == CXLA_OP_DOT, "the dot was fused or renamed");
    cxla_module_destroy(opt);
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_forms_and_bits), TEST(test_not_narrow), TEST(test_layer_unfused))
