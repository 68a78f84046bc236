/* The comparison of tests/cpu/test_onednn.c and test_onednn_conv.c (onednn_check.h): a module
 * run on the interpreter and on the cpu backend, compared within the bound of
 * docs/semantics.md ("cpu backend"), and the way its root ran checked. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/onednn.h"
#include "cpu/onednn_check.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

uint64_t rng_state;

/* Elementwise operations fused after the product (bias add, relu, scale): each may round
 * once more on either side, so the bound grows by one f32 ulp of the result per operation
 * (the magnitudes then come from the fused module itself, which scales them alike). */
int fused_ops;

/* When set, the magnitudes come from this module instead of the one tested (both with
 * "$R"): for a tanh at the end, the same module with abs in its place, since the error
 * of tanh(z) is at most z's (tanh is 1-Lipschitz) but tanh squashes the magnitudes. */
const char *mag_text;

double uniform(void) { /* splitmix64 -> [0, 1) */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

/* Floats are drawn in [-2, 2) times this (the tanh tests make it small, so that their
 * products are not so large that tanh rounds them all to +-1). */
double fill_scale = 1;

/* Random values: floats in [-2, 2) (times fill_scale), integers in [-20, 20], complex
 * parts in [-2, 2). */
void fill(cxla_literal *lit) {
    const cxla_shape *s = cxla_literal_shape(lit);
    size_t es = cxla_type_storage(s->type);
    char *p = cxla_literal_data(lit);
    for (int64_t i = 0; i < lit->count; i++, p += es) {
        if (cxla_type_is_complex(s->type))
            cxla_store_c128(s->type, p, uniform() * 4 - 2, uniform() * 4 - 2);
        else if (cxla_type_is_float(s->type))
            cxla_store_f64(s->type, p, (uniform() * 4 - 2) * fill_scale);
        else
            cxla_store_s64(s->type, p, (int64_t)(uniform() * 41) - 20);
    }
}

/* |x| element by element (floats only). */
static void make_abs(cxla_literal *lit) {
    const cxla_shape *s = cxla_literal_shape(lit);
    size_t es = cxla_type_storage(s->type);
    char *p = cxla_literal_data(lit);
    for (int64_t i = 0; i < lit->count; i++, p += es)
        cxla_store_f64(s->type, p, fabs(cxla_load_f64(s->type, p)));
}

/* |text| with every "$R" replaced by |rtype|, and every "$T" (the type of a whole fused
 * chain: its operands, product and epilogue) by |ttype|. */
char *with_types(const char *text, const char *rtype, const char *ttype) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    for (const char *p = text; *p; p++) {
        if (p[0] == '$' && p[1] == 'T') {
            cxla_strbuf_append(&b, ttype, strlen(ttype));
            p++;
        } else if (p[0] == '$' && p[1] == 'R') {
            cxla_strbuf_append(&b, rtype, strlen(rtype));
            p++;
        } else {
            cxla_strbuf_putc(&b, *p);
        }
    }
    return b.data;
}

char *with_type(const char *text, const char *rtype) {
    return with_types(text, rtype, rtype);
}

cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "onednn_test", &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        test_fail(__FILE__, __LINE__, "module rejected: %s\n%s", cxla_status_message(s), text);
        cxla_status_free(s);
        cxla_module_destroy(m);
        return NULL;
    }
    return m;
}

/* Unit in the last place of |v| in a type of |bits| significand bits (subnormals of f16
 * and bf16 included through their smallest exponent). */
static double ulp(double v, int bits, int min_exp) {
    int e;
    frexp(fabs(v), &e);
    if (e < min_exp) e = min_exp;
    return ldexp(1.0, e - bits);
}

static int significand_bits(cxla_type t, int *min_exp) {
    switch (t) {
    case CXLA_BF16: *min_exp = -125; return 8;
    case CXLA_F16: *min_exp = -13; return 11;
    case CXLA_F8E4M3FN: *min_exp = -5; return 4;
    case CXLA_F8E5M2: *min_exp = -13; return 3;
    default: *min_exp = -125; return 24;
    }
}

/* Runs module |text| (the root named "r"; "$R" is the result element type |rtype|) on the
 * interpreter and the cpu backend and compares. |n|: the products per result element
 * (0: exact comparison). |want_what|: how the root must run: "onednn" (when the build has
 * oneDNN; "loops" without), "loops", or NULL (either: oneDNN may lack a type on a CPU). */
void check(const char *text, const char *rtype, int64_t n, const char *want_what) {
    char *full = with_type(text, rtype);
    cxla_module *m = parse(full);
    if (!m) {
        free(full);
        return;
    }
    int64_t params = m->entry->param_count;
    cxla_literal *args[MAX_PARAMS] = {0}, *abs_args[MAX_PARAMS] = {0};
    for (int64_t p = 0; p < params && p < MAX_PARAMS; p++) {
        CHECK_OK(cxla_literal_create(&m->entry->params[p]->shape, &args[p]));
        fill(args[p]);
    }
    cxla_literal *want = NULL, *got_plan = NULL, *got_driver = NULL;
    CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)args, params, &want));
    void *compiled = NULL;
    exec_compile_options co = {0};
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    if (compiled) {
        /* The root's product after the passes: output fusion renames it, and conv-canon
         * puts a transpose after a convolution in an unusual layout. */
        cxla_module *opt = NULL;
        cxla_strbuf src;
        cxla_strbuf_init(&src);
        CHECK_OK(cpu_generate(m, NULL, &opt, &src, NULL));
        cxla_strbuf_free(&src);
        const cxla_instr *root = opt && opt->entry ? opt->entry->root : NULL;
        while (root && root->opcode == CXLA_OP_TRANSPOSE &&
               (root->operands[0]->opcode == CXLA_OP_CONVOLUTION ||
                root->operands[0]->opcode == CXLA_OP_FUSION))
            root = root->operands[0];
        const char *what = cpu_compiled_call_what(compiled, root ? root->name : "r");
        cxla_module_destroy(opt);
        const char *expect = want_what;
        if (getenv("CXLA_TEST_VERBOSE")) fprintf(stderr, "%s -> %s\n", full, what ? what : "-");
        /* Without oneDNN, what it would run is the emitter's kernel or the loops. */
        if (expect && strncmp(expect, "onednn", 6) == 0 && !cpu_onednn_available()) expect = "any";
        if (expect && strcmp(expect, "any") == 0) expect = NULL;
        if (want_what) CHECK_MSG(what != NULL, "%s: the root has no kernel or library call", full);
        if (what && expect)
            CHECK_MSG(strncmp(what, expect, strlen(expect)) == 0, "%s: runs as '%s', not '%s'",
                      full, what, expect);
        exec_run_options plan = {0}, driver = {.check_finite = true};
        CHECK_OK(cpu_backend.execute(compiled, &plan, (const cxla_literal *const *)args, params,
                                     &got_plan));
        if (n == 0 || !cxla_type_is_complex(m->entry->root->shape.type))
            CHECK_OK(cpu_backend.execute(compiled, &driver, (const cxla_literal *const *)args,
                                         params, &got_driver));
        cpu_backend.destroy(compiled);
    }
    cxla_literal *mag = NULL;
    if (n > 0 && want) {
        /* The sum of magnitudes: |a| and |b| through the same instruction, f32 result. */
        char *f32_text = with_type(mag_text ? mag_text : text, "f32");
        cxla_module *mm = parse(f32_text);
        bool converts = strstr(text, "$T") != NULL; /* the operands become f32 too */
        for (int64_t p = 0; p < params && mm; p++) {
            if (converts)
                CHECK_OK(cxla_literal_convert(args[p], CXLA_F32, &abs_args[p]));
            else
                CHECK_OK(cxla_literal_clone(args[p], &abs_args[p]));
            make_abs(abs_args[p]);
        }
        if (mm)
            CHECK_OK(
                interp_run_module(mm, NULL, (const cxla_literal *const *)abs_args, params, &mag));
        cxla_module_destroy(mm);
        free(f32_text);
    }
    cxla_literal *gots[2] = {got_plan, got_driver};
    for (int g = 0; g < 2; g++) {
        cxla_literal *got = gots[g];
        if (!got || !want) continue;
        if (n == 0) {
            cxla_status d = cxla_literal_compare(got, want, NULL);
            CHECK_MSG(!d, "%s\n(%s) differs from the interpreter: %s", full, g ? "driver" : "plan",
                      d ? cxla_status_message(d) : "");
            cxla_status_free(d);
            continue;
        }
        if (!mag) continue;
        cxla_type rt = cxla_literal_shape(want)->type;
        int min_exp, bits = significand_bits(rt, &min_exp);
        double u = ldexp(1.0, -24), gamma = (double)n * u / (1 - (double)n * u);
        size_t es = cxla_type_storage(rt);
        const char *pw = cxla_literal_data(want), *pg = cxla_literal_data(got);
        const float *pm = cxla_literal_data(mag);
        int64_t bad = 0;
        double worst = 0;
        for (int64_t i = 0; i < want->count; i++) {
            double w = cxla_load_f64(rt, pw + (size_t)i * es);
            double v = cxla_load_f64(rt, pg + (size_t)i * es);
            /* The magnitude's own f32 rounding is covered by the extra (1 + 2 gamma). */
            double tol = 2 * gamma * fabs((double)pm[i]) * (1 + 2 * gamma);
            if (bits < 24) tol += ulp(fmax(fabs(w), fabs(v)), bits, min_exp);
            tol += fused_ops * ulp(fmax(fabs(w), fabs(v)), 24, -125);
            /* A fused chain of f16 or bf16 is computed in f32 and rounded once: each of its
             * operations skips the interpreter's rounding to the type, an error of at most
             * half an ulp of the value there, below an ulp of the magnitude there, which the
             * later operations scale no more than the magnitudes do. */
            if (bits < 24 && strstr(text, "$T"))
                tol += fused_ops * ulp(fabs((double)pm[i]), bits, min_exp);
            double err = fabs(w - v);
            if (!(err <= tol)) bad++;
            if (tol > 0 && err / tol > worst) worst = err / tol;
        }
        if (getenv("CXLA_TEST_VERBOSE")) fprintf(stderr, "  worst error / bound: %.3g\n", worst);
        CHECK_MSG(bad == 0,
                  "%s\n(%s) %" PRId64 " of %" PRId64 " elements outside the bound (worst %.3g x)",
                  full, g ? "driver" : "plan", bad, want->count, worst);
    }
    for (int64_t p = 0; p < params && p < MAX_PARAMS; p++) {
        cxla_literal_free(args[p]);
        cxla_literal_free(abs_args[p]);
    }
    cxla_literal_free(want);
    cxla_literal_free(got_plan);
    cxla_literal_free(got_driver);
    cxla_literal_free(mag);
    cxla_module_destroy(m);
    free(full);
}

/* Random dot dimension numbers: batch, contracting and free dims of random sizes in
 * random positions of both operands. */
int pick(int n) {
    return (int)(uniform() * n) % n;
}

void shuffle(int64_t *v, int64_t n) {
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = pick((int)i + 1), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

void ints_text(cxla_strbuf *b, const int64_t *v, int64_t n) {
    cxla_strbuf_putc(b, '{');
    for (int64_t i = 0; i < n; i++) cxla_strbuf_printf(b, "%s%" PRId64, i ? "," : "", v[i]);
    cxla_strbuf_putc(b, '}');
}

void dims_text(cxla_strbuf *b, const char *type, const int64_t *d, int64_t n) {
    cxla_strbuf_printf(b, "%s[", type);
    for (int64_t i = 0; i < n; i++) cxla_strbuf_printf(b, "%s%" PRId64, i ? "," : "", d[i]);
    cxla_strbuf_putc(b, ']');
}
