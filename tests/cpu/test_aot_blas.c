/* `cxla compile --blas onednn` (src/cpu/aot_blas.c): a dense layer (dot, bias, relu), a
 * dot with a transposed operand, and a strided, padded convolution compiled ahead of time
 * with oneDNN calls, built with gcc against libdnnl, run, and compared with the
 * interpreter within the bound docs/semantics.md gives for the cpu backend's oneDNN calls:
 *
 *   |aot - interpreter| <= 2 * gamma(n) * sum |a_i * b_i|  (+ one ulp of the result for the
 *   bias add), gamma(n) = n * u / (1 - n * u), u = 2^-24,
 *
 * with the sum of magnitudes computed by the interpreter from |a| and |b|. Skipped (with
 * a message) where gcc or libdnnl-dev is absent. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/aot.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

static char tmpdir[256];

static bool sh(const char *cmd) {
    return system(cmd) == 0;
}

static cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "test", &m);
    if (!s) s = cxla_verify_module(m);
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    return m;
}

/* f32 arguments of |m|'s entry filled from a fixed LCG in [-1, 1), and their magnitudes. */
static void make_args(const cxla_module *m, cxla_literal **args, cxla_literal **mags) {
    uint32_t x = 12345;
    for (int64_t p = 0; p < m->entry->param_count; p++) {
        const cxla_shape *s = &m->entry->params[p]->shape;
        CHECK(cxla_literal_create(s, &args[p]) == NULL);
        CHECK(cxla_literal_create(s, &mags[p]) == NULL);
        float *a = cxla_literal_data(args[p]), *b = cxla_literal_data(mags[p]);
        int64_t n = 0;
        CHECK(cxla_shape_element_count(s, &n) == NULL);
        for (int64_t i = 0; i < n; i++) {
            x = x * 1664525u + 1013904223u;
            a[i] = (float)((double)(x >> 8) / (double)(1u << 23) - 1.0);
            b[i] = fabsf(a[i]);
        }
    }
}

static const char *const driver =
    "#include <stdio.h>\n#include <stdlib.h>\n#include \"m.h\"\n"
    "int main(void) {\n"
    "    const void *args[m_arg_count];\n"
    "    for (int i = 0; i < m_arg_count; i++) {\n"
    "        char path[32];\n"
    "        snprintf(path, sizeof path, \"in%d.bin\", i);\n"
    "        FILE *f = fopen(path, \"rb\");\n"
    "        void *p = malloc(m_arg_bytes[i]);\n"
    "        if (!f || !p || fread(p, 1, m_arg_bytes[i], f) != m_arg_bytes[i]) return 2;\n"
    "        fclose(f);\n"
    "        args[i] = p;\n"
    "    }\n"
    "    void *out = malloc(m_result_bytes[0]);\n"
    "    void *res[1] = {out};\n"
    "    void *scratch = aligned_alloc(64, m_scratch_size() / 64 * 64 + 64);\n"
    "    char err[256] = \"\";\n"
    "    m_options o = {0};\n"
    "    o.error = err;\n"
    "    o.error_size = sizeof err;\n"
    "    int rc = m_run_with(&o, args, res, scratch);\n"
    "    if (rc) {\n"
    "        fprintf(stderr, \"%s | %s\\n\", m_error_string(rc), err);\n"
    "        return 3;\n"
    "    }\n"
    "    FILE *f = fopen(\"out.bin\", \"wb\");\n"
    "    if (!f || fwrite(out, 1, m_result_bytes[0], f) != m_result_bytes[0]) return 4;\n"
    "    fclose(f);\n"
    "    return 0;\n"
    "}\n";

/* Compiles |text| with --blas onednn, runs it on generated inputs and compares its single
 * f32 result with the interpreter's within the bound for |n| products per element; the
 * magnitudes come from |mag_text| (the same product of the inputs' absolute values).
 * |extra_ulps|: roundings after the product (the bias add). */
static void check_module(const char *what, const char *text, const char *mag_text, int64_t n,
                         double extra_ulps) {
    cxla_module *m = parse(text), *mm = parse(mag_text);
    if (!m || !mm) return;
    cxla_literal *args[4] = {0}, *mags[4] = {0}, *want = NULL, *mag = NULL;
    int64_t np = m->entry->param_count;
    make_args(m, args, mags);
    CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)args, np, &want));
    CHECK_OK(interp_run_module(mm, NULL, (const cxla_literal *const *)mags, mm->entry->param_count,
                               &mag));
    cpu_aot_options o = {.blas_onednn = true};
    CHECK_OK(cpu_aot_write(m, &o, tmpdir, "m"));
    char path[512], cmd[1600];
    /* The call is really there (else the exact loops would pass trivially). */
    snprintf(path, sizeof path, "%s/m.c", tmpdir);
    char *src = NULL;
    size_t size = 0;
    CHECK_OK(cxla_read_file(path, &src, &size));
    CHECK_MSG(src && strstr(src, "#include <dnnl.h>") && strstr(src, "m_dnn(&m_d"),
              "%s: no oneDNN call in the generated code", what);
    free(src);
    for (int64_t i = 0; i < np; i++) {
        snprintf(path, sizeof path, "%s/in%d.bin", tmpdir, (int)i);
        CHECK_OK(cxla_write_file(path, args[i]->data, args[i]->size));
    }
    snprintf(path, sizeof path, "%s/main.c", tmpdir);
    CHECK_OK(cxla_write_file(path, driver, strlen(driver)));
    snprintf(cmd, sizeof cmd,
             "cd '%s' && rm -f out.bin && gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -o "
             "prog main.c m.c -ldnnl -lm 2>&1 | head -20 && ./prog",
             tmpdir);
    CHECK_MSG(sh(cmd), "%s: the generated program failed", what);
    char *got = NULL;
    snprintf(path, sizeof path, "%s/out.bin", tmpdir);
    CHECK_OK(cxla_read_file(path, &got, &size));
    int64_t count = 0;
    if (want) CHECK(cxla_shape_element_count(cxla_literal_shape(want), &count) == NULL);
    CHECK(got && size == (size_t)count * 4);
    const double u = ldexp(1.0, -24), gamma = n * u / (1 - n * u);
    int64_t bad = 0, exact = 0;
    double worst = 0;
    for (int64_t i = 0; got && want && size == (size_t)count * 4 && i < count; i++) {
        float g, w = ((const float *)want->data)[i], s = ((const float *)mag->data)[i];
        memcpy(&g, got + 4 * i, 4);
        double tol = 2 * gamma * s + extra_ulps * ldexp(1.0, ilogb(fabs(w) + 1e-30) - 23);
        double err = fabs((double)g - (double)w);
        if (err == 0) exact++;
        if (err > tol) {
            if (bad++ < 5)
                test_fail(__FILE__, __LINE__, "%s: element %lld: %.9g vs %.9g (bound %.3g)", what,
                          (long long)i, g, w, tol);
        }
        if (tol > 0 && err / tol > worst) worst = err / tol;
    }
    fprintf(stderr, "aot blas: %s: %lld elements, %lld exact, worst error %.3f of the bound\n",
            what, (long long)count, (long long)exact, worst);
    CHECK(bad == 0);
    free(got);
    for (int64_t i = 0; i < np; i++) {
        cxla_literal_free(args[i]);
        cxla_literal_free(mags[i]);
    }
    cxla_literal_free(want);
    cxla_literal_free(mag);
    cxla_module_destroy(m);
    cxla_module_destroy(mm);
}

static void test_aot_blas(void) {
    if (!sh("gcc --version > /dev/null 2>&1")) test_skip_all("no gcc");
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cxla_aot_blas_%d", (int)getpid());
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' && cd '%s' && printf '#include <dnnl.h>\\nint main(void) { return "
             "DNNL_VERSION_MAJOR == 2 ? 0 : 1; }\\n' > probe.c && gcc probe.c -ldnnl -o probe "
             "> /dev/null 2>&1 && ./probe",
             tmpdir, tmpdir);
    if (!sh(cmd)) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (!sh(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
        test_skip_all("libdnnl-dev (oneDNN 2.x: dnnl.h and -ldnnl) is absent: --blas onednn "
                      "not tested");
    }
    check_module("dense layer",
                 "HloModule dense\nENTRY e {\n"
                 "  x = f32[8,64] parameter(0)\n  w = f32[64,16] parameter(1)\n"
                 "  b = f32[16] parameter(2)\n"
                 "  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 "  bb = f32[8,16] broadcast(b), dimensions={1}\n"
                 "  s = f32[8,16] add(d, bb)\n  z = f32[] constant(0)\n"
                 "  zz = f32[8,16] broadcast(z), dimensions={}\n"
                 "  ROOT r = f32[8,16] maximum(s, zz)\n}\n",
                 "HloModule mag\nENTRY e {\n"
                 "  x = f32[8,64] parameter(0)\n  w = f32[64,16] parameter(1)\n"
                 "  b = f32[16] parameter(2)\n"
                 "  ROOT d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, "
                 "rhs_contracting_dims={0}\n}\n",
                 64, 1);
    check_module("batched dot, transposed lhs",
                 "HloModule bdot\nENTRY e {\n"
                 "  x = f32[3,40,7] parameter(0)\n  w = f32[3,40,5] parameter(1)\n"
                 "  ROOT d = f32[3,7,5] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                 "lhs_contracting_dims={1}, rhs_contracting_dims={1}\n}\n",
                 "HloModule mag\nENTRY e {\n"
                 "  x = f32[3,40,7] parameter(0)\n  w = f32[3,40,5] parameter(1)\n"
                 "  ROOT d = f32[3,7,5] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                 "lhs_contracting_dims={1}, rhs_contracting_dims={1}\n}\n",
                 40, 0);
    const char *conv = "HloModule conv\nENTRY e {\n"
                       "  x = f32[2,9,9,3] parameter(0)\n  k = f32[3,3,3,4] parameter(1)\n"
                       "  ROOT c = f32[2,5,5,4] convolution(x, k), window={size=3x3 stride=2x2 "
                       "pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n";
    check_module("convolution", conv, conv, 27, 0);
    const char *dconv = "HloModule dconv\nENTRY e {\n"
                        "  x = f32[1,4,10,10] parameter(0)\n  k = f32[4,1,3,3] parameter(1)\n"
                        "  ROOT c = f32[1,4,8,8] convolution(x, k), window={size=3x3 "
                        "rhs_dilate=1x1}, dim_labels=bf01_oi01->bf01, feature_group_count=4\n}\n";
    check_module("depthwise convolution", dconv, dconv, 9, 0);
    if (!test_failures) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (!sh(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
    }
}

TEST_MAIN(TEST(test_aot_blas))
