/* Dots and fused products on the cpu backend (src/cpu/onednn.c) against the interpreter:
 * many dimension-number forms, layouts, epilogues, in f32, bf16 and f16 (oneDNN when the
 * build has it, within the bound of docs/semantics.md, "cpu backend": onednn_check.h) and in
 * integer, f64 and complex types (the loops, or the emitter's generated kernels: exact). Each
 * module runs through the arena plan and through the interpreter's driver with the
 * instruction overridden (--check-finite forces the driver), and the test checks which way
 * the instruction ran (oneDNN or the loops). Convolutions alone: test_onednn_conv.c. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/onednn.h"
#include "cpu/onednn_check.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

/* A module of one dot: "a" and "b" of the given shapes, root "r". */
static char *dot_module(const char *a, const char *b, const char *r, const char *dims) {
    cxla_strbuf t;
    cxla_strbuf_init(&t);
    cxla_strbuf_printf(&t,
                       "HloModule d\nENTRY e {\n  a = %s parameter(0)\n  b = %s parameter(1)\n"
                       "  ROOT r = %s dot(a, b), %s\n}\n",
                       a, b, r, dims);
    return t.data;
}

static void dot_case(const char *a, const char *b, const char *r, const char *dims, int64_t n,
                     const char *rtype, const char *want_what) {
    char *text = dot_module(a, b, r, dims);
    check(text, rtype, n, want_what);
    free(text);
}

static void test_dot_forms_f32(void) {
    rng_state = 1;
    /* plain, lhs transposed, rhs transposed, both */
    dot_case("f32[64,128]", "f32[128,96]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 128, "f32", "onednn");
    dot_case("f32[128,64]", "f32[128,96]", "$R[64,96]",
             "lhs_contracting_dims={0}, rhs_contracting_dims={0}", 128, "f32", "onednn");
    dot_case("f32[64,128]", "f32[96,128]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={1}", 128, "f32", "onednn");
    dot_case("f32[128,64]", "f32[96,128]", "$R[64,96]",
             "lhs_contracting_dims={0}, rhs_contracting_dims={1}", 128, "f32", "onednn");
    /* vector . vector, matrix . vector, vector . matrix, outer product (no contraction) */
    dot_case("f32[300]", "f32[300]", "$R[]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}",
             300, "f32", "onednn");
    dot_case("f32[33,70]", "f32[70]", "$R[33]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 70, "f32", "onednn");
    dot_case("f32[70]", "f32[70,19]", "$R[19]",
             "lhs_contracting_dims={0}, rhs_contracting_dims={0}", 70, "f32", "onednn");
    dot_case("f32[7,1]", "f32[1,9]", "$R[7,9]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 1, "f32", "onednn");
    dot_case("f32[7]", "f32[9]", "$R[7,9]", "lhs_contracting_dims={}, rhs_contracting_dims={}", 1,
             "f32", "onednn");
    /* batch dims first, in the middle, last; several of them */
    dot_case("f32[4,32,16]", "f32[4,16,8]", "$R[4,32,8]",
             "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
             "rhs_contracting_dims={1}",
             16, "f32", "onednn");
    dot_case("f32[8,3,5]", "f32[5,3,7]", "$R[3,8,7]",
             "lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, "
             "rhs_contracting_dims={0}",
             5, "f32", "onednn");
    dot_case("f32[6,10,3]", "f32[3,10,4]", "$R[3,6,4]",
             "lhs_batch_dims={2}, lhs_contracting_dims={1}, rhs_batch_dims={0}, "
             "rhs_contracting_dims={1}",
             10, "f32", "onednn");
    dot_case("f32[2,3,5,6]", "f32[3,2,6,4]", "$R[2,3,5,4]",
             "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={1,0}, "
             "rhs_contracting_dims={2}",
             6, "f32", "onednn");
    /* several contracting dims (merged by strides); several free dims */
    dot_case("f32[6,4,5]", "f32[4,5,7]", "$R[6,7]",
             "lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}", 20, "f32", "onednn");
    dot_case("f32[2,3,16]", "f32[16,4,5]", "$R[2,3,4,5]",
             "lhs_contracting_dims={2}, rhs_contracting_dims={0}", 16, "f32", "onednn");
    dot_case("f32[4,2,3]", "f32[5,4]", "$R[2,3,5]",
             "lhs_contracting_dims={0}, rhs_contracting_dims={1}", 4, "f32", "onednn");
    /* contracting pairs listed in reverse: taken in the lhs's order, one K */
    dot_case("f32[6,4,5]", "f32[4,5,7]", "$R[6,7]",
             "lhs_contracting_dims={2,1}, rhs_contracting_dims={1,0}", 20, "f32", "onednn");
    /* contracting dims in an order no stride can express: the loops */
    dot_case("f32[6,4,5]", "f32[5,4,7]", "$R[6,7]",
             "lhs_contracting_dims={2,1}, rhs_contracting_dims={0,1}", 20, "f32", "loops");
    /* free dims that do not merge (Gemma's einsums): the outer ones become batch dims of
     * their operand, broadcast over the other */
    dot_case("f32[1,11,64]", "f32[4,64,32]", "$R[1,11,4,32]",
             "lhs_contracting_dims={2}, rhs_contracting_dims={1}", 64, "f32", "onednn");
    dot_case("f32[2,1,64,16]", "f32[1,5,64]", "$R[2,1,16,1,5]",
             "lhs_contracting_dims={2}, rhs_contracting_dims={2}", 64, "f32", "onednn");
    dot_case("f32[3,6,5,8]", "f32[3,4,5,7]", "$R[3,6,8,4,7]",
             "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
             "rhs_contracting_dims={2}",
             5, "f32", "onednn");
    /* large enough for oneDNN's blocked kernels */
    dot_case("f32[256,512]", "f32[512,200]", "$R[256,200]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 512, "f32", "onednn");
}

static void test_dot_small_floats(void) {
    rng_state = 2;
    dot_case("bf16[64,128]", "bf16[128,96]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 128, "bf16", NULL);
    dot_case("bf16[64,128]", "bf16[96,128]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={1}", 128, "f32", NULL);
    dot_case("bf16[4,32,16]", "bf16[4,16,8]", "$R[4,32,8]",
             "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
             "rhs_contracting_dims={1}",
             16, "bf16", NULL);
    dot_case("f16[64,128]", "f16[128,96]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 128, "f16", NULL);
    dot_case("f16[30,40]", "f16[40,20]", "$R[30,20]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 40, "f32", NULL);
    /* operand_precision: accepted, f32 stays f32 */
    dot_case("f32[64,128]", "f32[128,96]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
             "operand_precision={default,default}",
             128, "f32", "onednn");
    /* Gemma's forms in bf16: free dims as batch dims, contracting pairs in reverse */
    dot_case("bf16[1,11,64]", "bf16[4,64,32]", "$R[1,11,4,32]",
             "lhs_contracting_dims={2}, rhs_contracting_dims={1}", 64, "bf16", "onednn");
    dot_case("bf16[2,1,64,16]", "bf16[1,5,64]", "$R[2,1,16,1,5]",
             "lhs_contracting_dims={2}, rhs_contracting_dims={2}", 64, "bf16", "onednn");
    dot_case("bf16[1,11,4,32]", "bf16[4,32,48]", "$R[1,11,48]",
             "lhs_contracting_dims={3,2}, rhs_contracting_dims={1,0}", 128, "bf16", "onednn");
    /* mixed operand types and f32 x f32 -> bf16: whichever way runs them */
    dot_case("f32[16,32]", "f32[32,8]", "$R[16,8]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 32, "bf16", NULL);
}

/* f8 operands (onednn.c, "f8 operands widened"): widened exactly to bf16 (to f32 beside an
 * f32 operand, as bf16 and f16 are) and multiplied by oneDNN, within the bound of an f32 sum
 * (the products of two f8 values are exact in f32); every f8 type but f8e8m0fnu; results in
 * f32 or bf16; forms
 * with batch dims and transposes; a constant operand widened once; a fused scale after the
 * product (JAX's dequantization). f8 results, and f8e8m0fnu (whose 2^-127 is a bf16
 * subnormal, which oneDNN's bf16 kernels read as zero), run the exact loops. */
static void test_dot_widened(void) {
    rng_state = 12;
    static const char *const types[] = {"f8e4m3fn",   "f8e5m2", "f8e4m3",       "f8e4m3fnuz",
                                        "f8e5m2fnuz", "f8e3m4", "f8e4m3b11fnuz"};
    char a[64], b[64];
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        snprintf(a, sizeof(a), "%s[64,128]", types[i]);
        snprintf(b, sizeof(b), "%s[128,96]", types[(i + 1) % 7]);
        dot_case(a, b, "$R[64,96]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 128,
                 "f32", "onednn matmul, f8 widened to bf16");
    }
    dot_case("f8e4m3fn[64,128]", "f8e5m2[96,128]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={1}", 128, "bf16",
             "onednn matmul, f8 widened to bf16");
    dot_case("f8e5m2[128,64]", "f8e4m3fn[128,96]", "$R[64,96]",
             "lhs_contracting_dims={0}, rhs_contracting_dims={0}", 128, "f32",
             "onednn matmul, f8 widened to bf16");
    dot_case("f8e4m3fn[4,32,16]", "f8e4m3fn[4,16,8]", "$R[4,32,8]",
             "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
             "rhs_contracting_dims={1}",
             16, "f32", "onednn matmul, f8 widened to bf16");
    dot_case("f8e4m3fn[256,512]", "f8e4m3fn[512,200]", "$R[256,200]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 512, "f32",
             "onednn matmul, f8 widened to bf16");
    /* an lhs of more than 8 MiB widened: parts over blocks of rows, one after another, each
     * widening its rows (the weights widened once), also beside bf16 weights and with a
     * row count that does not divide */
    dot_case("f8e4m3fn[4100,1100]", "f8e5m2[1100,48]", "$R[4100,48]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 1100, "f32",
             cpu_onednn_available() ? "onednn matmul, f8 widened in 2 blocks of rows" : "any");
    dot_case("f8e5m2[9001,520]", "bf16[520,24]", "$R[9001,24]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 520, "bf16",
             cpu_onednn_available() ? "onednn matmul, f8 widened in 2 blocks of rows" : "any");
    /* beside bf16: both bf16; beside f32: the f8 one widened to f32 */
    dot_case("f8e4m3fn[64,128]", "bf16[128,96]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 128, "f32",
             "onednn matmul, f8 widened to bf16");
    dot_case("f32[64,128]", "f8e5m2[128,96]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 128, "f32",
             "onednn matmul, f8 widened to f32");
    /* bf16 or f16 beside f32: widened to f32 (exact), an f32 product; with M >= 512 the
     * widened weights are packed too */
    dot_case("bf16[64,128]", "f32[128,96]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 128, "f32",
             "onednn matmul, bf16 widened to f32");
    dot_case("f32[64,128]", "f16[96,128]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={1}", 128, "f32",
             "onednn matmul, f16 widened to f32");
    dot_case("f32[600,70]", "bf16[70,80]", "$R[600,80]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 70, "f32",
             cpu_onednn_available() ? NULL : "any");
    /* results oneDNN does not store from these operands (f8, f16 from bf16, bf16 from f32):
     * f32 rounded once afterwards, within the bound plus one unit of the result */
    dot_case("f8e4m3fn[64,128]", "f8e4m3fn[128,96]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 128, "f8e4m3fn",
             "onednn matmul, f8 widened, f32 rounded to f8e4m3fn");
    dot_case("f8e5m2[64,128]", "f8e4m3fn[96,128]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={1}", 128, "f8e5m2",
             "onednn matmul, f8 widened, f32 rounded to f8e5m2");
    dot_case("bf16[64,128]", "bf16[128,96]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 128, "f16",
             "onednn matmul, f32 rounded to f16");
    dot_case("f32[64,128]", "f32[128,96]", "$R[64,96]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 128, "bf16",
             "onednn matmul, f32 rounded to bf16");
    dot_case("f32[600,70]", "f32[70,80]", "$R[600,80]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 70, "bf16",
             cpu_onednn_available() ? NULL : "any");
    dot_case("f8e8m0fnu[16,32]", "f8e8m0fnu[32,8]", "$R[16,8]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 0, "f32", "loops");
    dot_case("f8e4m3fn[16,32]", "f16[32,8]", "$R[16,8]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 0, "f32", "loops");
    /* a constant f8 operand: widened once */
    check("HloModule f8c\n"
          "ENTRY e {\n"
          "  x = f8e4m3fn[40,3] parameter(0)\n"
          "  w = f8e4m3fn[3,20] constant({{1,-2,0.5,3,-1,1,2,2,-0.25,1,1,0,0,1,1,1,-3,2,1,1},"
          "{2,-2,0,0,1.5,1,-1,-1,2,0.5,0,-1,1,2,3,1,-1,1,0.5,0.5},"
          "{1,-1,2,0,1,1,0,2,1,1,-2,1,1,3,448,-448,0.001953125,-0.015625,6,-6}})\n"
          "  ROOT r = $R[40,20] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
          "}\n",
          "f32", 3, "onednn matmul, constant reordered once, f8 widened to bf16");
    /* JAX's scaled fp8 product: f8 x f8 -> f32 times a scale: a constant one fused as a
     * post-op, a parameter one in a loop kernel after the product */
    fused_ops = 1;
    check("HloModule f8k\n"
          "ENTRY e {\n"
          "  x = f8e4m3fn[64,128] parameter(0)\n"
          "  w = f8e5m2[128,96] parameter(1)\n"
          "  d = f32[64,96] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
          "  c = f32[] constant(0.375)\n"
          "  cb = f32[64,96] broadcast(c), dimensions={}\n"
          "  ROOT r = $R[64,96] multiply(d, cb)\n"
          "}\n",
          "f32", 128, "onednn matmul with post-ops, f8 widened to bf16");
    check("HloModule f8s\n"
          "ENTRY e {\n"
          "  x = f8e4m3fn[64,128] parameter(0)\n"
          "  w = f8e4m3fn[128,96] parameter(1)\n"
          "  s = f32[] parameter(2)\n"
          "  d = f32[64,96] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
          "  sb = f32[64,96] broadcast(s), dimensions={}\n"
          "  ROOT r = $R[64,96] multiply(d, sb)\n"
          "}\n",
          "f32", 128, "kernel");
    fused_ops = 0;
}

/* bf16 subnormals (docs/semantics.md, "Dot and convolution on the cpu backend"): oneDNN's
 * bf16 kernels read them as zero where the interpreter keeps them, so the bound of a bf16
 * product grows by the products with a subnormal operand plus n * 2^-126. Half the rows of
 * a are subnormals (about 2^-130), the others normal; half the columns of b are 2^100, so
 * that the subnormal products (about 2^-25) are far above the f32 bound: each element must
 * be within the grown bound, and the rows of normal values must still be right. */
static void test_dot_bf16_subnormal(void) {
    cxla_module *m = parse("HloModule sub\nENTRY e {\n  a = bf16[8,32] parameter(0)\n"
                           "  b = bf16[32,8] parameter(1)\n  ROOT r = f32[8,8] dot(a, b), "
                           "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
    if (!m) return;
    cxla_literal *args[2] = {0};
    for (int p = 0; p < 2; p++)
        CHECK_OK(cxla_literal_create(&m->entry->params[p]->shape, &args[p]));
    char *pa = cxla_literal_data(args[0]), *pb = cxla_literal_data(args[1]);
    double av[8 * 32], bv[32 * 8];
    for (int i = 0; i < 8 * 32; i++) { /* rows 0-3 of a subnormal, columns 0, 2, .. of b 2^100 */
        av[i] = i < 4 * 32 ? ldexp(1.0 + (i % 7) / 8.0, -130) * ((i & 1) ? -0.5 : 1)
                           : (double)(i % 5) - 2.0;
        cxla_store_f64(CXLA_BF16, pa + 2 * i, av[i]);
        av[i] = cxla_load_f64(CXLA_BF16, pa + 2 * i);
        bv[i] = (i % 2 == 0) ? ldexp(1.0, 100) : (double)(i % 3) + 0.5;
        cxla_store_f64(CXLA_BF16, pb + 2 * i, bv[i]);
        bv[i] = cxla_load_f64(CXLA_BF16, pb + 2 * i);
    }
    cxla_literal *want = NULL, *got = NULL;
    CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)args, 2, &want));
    void *compiled = NULL;
    exec_compile_options co = {0};
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    exec_run_options ro = {0};
    if (compiled)
        CHECK_OK(cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, 2, &got));
    if (compiled) cpu_backend.destroy(compiled);
    double u = ldexp(1.0, -24), gamma = 32 * u / (1 - 32 * u);
    int64_t bad = 0;
    for (int i = 0; i < 8 && want && got; i++)
        for (int j = 0; j < 8; j++) {
            double mag = 0, sub = 0;
            for (int k = 0; k < 32; k++) {
                double t = fabs(av[i * 32 + k] * bv[k * 8 + j]);
                mag += t;
                if (av[i * 32 + k] != 0 && fabs(av[i * 32 + k]) < 0x1p-126) sub += t;
            }
            double w = ((const float *)cxla_literal_data(want))[i * 8 + j];
            double v = ((const float *)cxla_literal_data(got))[i * 8 + j];
            double tol = 2 * gamma * mag * (1 + 2 * gamma) + sub + 32 * 0x1p-126;
            if (!(fabs(w - v) <= tol)) bad++;
            /* The products of normal values are there: far above what the flushing drops. */
            if (fabs(w) > 1 && !(fabs(v - w) < 0.5 * fabs(w))) bad++;
        }
    CHECK_MSG(bad == 0, "bf16 subnormal dot: %lld elements outside the bound", (long long)bad);
    cxla_literal_free(args[0]);
    cxla_literal_free(args[1]);
    cxla_literal_free(want);
    cxla_literal_free(got);
    cxla_module_destroy(m);
}

/* Integer and f64 dots: the emitter's blocked kernel ("kernel"), exact; complex ones and
 * dimension numbers that do not merge into strides: the library call's loops, exact. */
static void test_dot_exact(void) {
    rng_state = 3;
    /* Without oneDNN, f32 dots run the kernel too: exact as well. */
    static const char *const types[] = {"s32", "s8", "u8", "s64", "u16", "f64", "c64", "f32"};
    size_t count = sizeof(types) / sizeof(types[0]) - (cpu_onednn_available() ? 1 : 0);
    for (size_t i = 0; i < count; i++) {
        char a[32], b[32], r[32], ab[32], bb[32], rb[32];
        snprintf(a, sizeof(a), "%s[37,70]", types[i]);
        snprintf(b, sizeof(b), "%s[70,45]", types[i]);
        snprintf(r, sizeof(r), "%s[37,45]", types[i]);
        const char *how = strcmp(types[i], "c64") == 0 ? "loops" : "kernel";
        dot_case(a, b, r, "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 0, "f32", how);
        snprintf(ab, sizeof(ab), "%s[3,9,20]", types[i]);
        snprintf(bb, sizeof(bb), "%s[20,3,6]", types[i]);
        snprintf(rb, sizeof(rb), "%s[3,9,6]", types[i]);
        dot_case(ab, bb, rb,
                 "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={1}, "
                 "rhs_contracting_dims={0}",
                 0, "f32", how);
        /* transposed operands (strides in the kernel), and unmergeable contracting dims */
        snprintf(a, sizeof(a), "%s[70,37]", types[i]);
        snprintf(b, sizeof(b), "%s[45,70]", types[i]);
        dot_case(a, b, r, "lhs_contracting_dims={0}, rhs_contracting_dims={1}", 0, "f32", how);
        snprintf(ab, sizeof(ab), "%s[6,4,5]", types[i]);
        snprintf(bb, sizeof(bb), "%s[4,5,7]", types[i]);
        snprintf(rb, sizeof(rb), "%s[6,7]", types[i]);
        dot_case(ab, bb, rb, "lhs_contracting_dims={2,1}, rhs_contracting_dims={1,0}", 0, "f32",
                 "loops");
    }
    /* wrapping: u8 and s16 products and sums that overflow their types */
    dot_case("u8[9,300]", "u8[300,5]", "u8[9,5]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 0, "f32", "kernel");
    dot_case("s16[9,300]", "s16[300,5]", "s16[9,5]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 0, "f32", "kernel");
    /* large enough for several panels of N and K */
    dot_case("s32[70,700]", "s32[700,600]", "s32[70,600]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 0, "f32", "kernel");
    /* s8 x s8 -> s32 and arrays with no elements */
    dot_case("s8[20,30]", "s8[30,10]", "s32[20,10]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 0, "f32", "kernel");
    dot_case("f32[0,4]", "f32[4,3]", "$R[0,3]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 0, "f32", "any");
    dot_case("f32[5,0]", "f32[0,3]", "$R[5,3]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 0, "f32", "any");
}

/* A dot inside a while body runs its call through the driver; one feeding a fusion-free
 * elementwise chain runs on the arena plan with its kernels. */
static void test_dot_in_programs(void) {
    rng_state = 6;
    check("HloModule p\n"
          "ENTRY e {\n"
          "  a = f32[32,64] parameter(0)\n"
          "  b = f32[64,16] parameter(1)\n"
          "  d = f32[32,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
          "  z = f32[] constant(0)\n"
          "  zb = f32[32,16] broadcast(z), dimensions={}\n"
          "  ROOT r = $R[32,16] maximum(d, zb)\n"
          "}\n",
          "f32", 64, NULL);
}

/* Fusions of a product and its elementwise consumers: one oneDNN primitive with a bias
 * and post-ops (scales are positive so that the fused module on |a|, |b| gives the
 * magnitudes). Forms oneDNN does not take keep the interpreter's handler (no call). */
/* Without oneDNN a fusion runs the loops, then the epilogue's loops. */
static const char *fused_want(const char *what) {
    return cpu_onednn_available() ? what : "loops, then epilogue loops";
}

static void test_fused_post_ops(void) {
    rng_state = 7;
    fused_ops = 3;
    /* dot + bias + relu + scale */
    check("HloModule f\n"
          "fused {\n"
          "  p0 = f32[48,64] parameter(0)\n"
          "  p1 = f32[64,40] parameter(1)\n"
          "  p2 = f32[40] parameter(2)\n"
          "  d = f32[48,40] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
          "  bb = f32[48,40] broadcast(p2), dimensions={1}\n"
          "  s = f32[48,40] add(d, bb)\n"
          "  z = f32[] constant(0)\n"
          "  zb = f32[48,40] broadcast(z), dimensions={}\n"
          "  m = f32[48,40] maximum(s, zb)\n"
          "  c = f32[] constant(0.5)\n"
          "  cb = f32[48,40] broadcast(c), dimensions={}\n"
          "  ROOT y = f32[48,40] multiply(cb, m)\n"
          "}\n"
          "ENTRY e {\n"
          "  a = f32[48,64] parameter(0)\n"
          "  b = f32[64,40] parameter(1)\n"
          "  bias = f32[40] parameter(2)\n"
          "  ROOT r = $R[48,40] fusion(a, b, bias), kind=kOutput, calls=fused\n"
          "}\n",
          "f32", 64, fused_want("onednn matmul with post-ops"));
    /* batched dot, rhs transposed, bias over two N dims, relu */
    check("HloModule f\n"
          "fused {\n"
          "  p0 = f32[3,10,16] parameter(0)\n"
          "  p1 = f32[3,4,5,16] parameter(1)\n"
          "  p2 = f32[4,5] parameter(2)\n"
          "  d = f32[3,10,4,5] dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
          "rhs_batch_dims={0}, rhs_contracting_dims={3}\n"
          "  bb = f32[3,10,4,5] broadcast(p2), dimensions={2,3}\n"
          "  s = f32[3,10,4,5] add(bb, d)\n"
          "  z = f32[] constant(0)\n"
          "  zb = f32[3,10,4,5] broadcast(z), dimensions={}\n"
          "  ROOT m = f32[3,10,4,5] maximum(zb, s)\n"
          "}\n"
          "ENTRY e {\n"
          "  a = f32[3,10,16] parameter(0)\n"
          "  b = f32[3,4,5,16] parameter(1)\n"
          "  bias = f32[4,5] parameter(2)\n"
          "  ROOT r = $R[3,10,4,5] fusion(a, b, bias), kind=kOutput, calls=fused\n"
          "}\n",
          "f32", 16, fused_want("onednn matmul with post-ops"));
    /* convolution (NCHW) + bias + relu, operands in another order */
    check("HloModule f\n"
          "fused {\n"
          "  p0 = f32[8] parameter(0)\n"
          "  p1 = f32[2,4,9,9] parameter(1)\n"
          "  p2 = f32[8,4,3,3] parameter(2)\n"
          "  c = f32[2,8,9,9] convolution(p1, p2), window={size=3x3 pad=1_1x1_1}, "
          "dim_labels=bf01_oi01->bf01\n"
          "  bb = f32[2,8,9,9] broadcast(p0), dimensions={1}\n"
          "  s = f32[2,8,9,9] add(c, bb)\n"
          "  z = f32[] constant(0)\n"
          "  zb = f32[2,8,9,9] broadcast(z), dimensions={}\n"
          "  ROOT m = f32[2,8,9,9] maximum(s, zb)\n"
          "}\n"
          "ENTRY e {\n"
          "  bias = f32[8] parameter(0)\n"
          "  a = f32[2,4,9,9] parameter(1)\n"
          "  b = f32[8,4,3,3] parameter(2)\n"
          "  ROOT r = $R[2,8,9,9] fusion(bias, a, b), kind=kOutput, calls=fused\n"
          "}\n",
          "f32", 36, fused_want("onednn convolution with post-ops"));
    /* a bias along M is not oneDNN's bias: the interpreter's handler */
    check("HloModule f\n"
          "fused {\n"
          "  p0 = f32[6,8] parameter(0)\n"
          "  p1 = f32[8,5] parameter(1)\n"
          "  p2 = f32[6] parameter(2)\n"
          "  d = f32[6,5] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
          "  bb = f32[6,5] broadcast(p2), dimensions={0}\n"
          "  ROOT s = f32[6,5] add(d, bb)\n"
          "}\n"
          "ENTRY e {\n"
          "  a = f32[6,8] parameter(0)\n"
          "  b = f32[8,5] parameter(1)\n"
          "  bias = f32[6] parameter(2)\n"
          "  ROOT r = $R[6,5] fusion(a, b, bias), kind=kOutput, calls=fused\n"
          "}\n",
          "f32", 8, NULL);
    fused_ops = 0;
}

/* Fused chains of bf16 and f16 ($T): oneDNN computes the bias and post-ops in f32 and
 * rounds once (docs/semantics.md gives the bound); the epilogue loops round after each
 * operation, as the interpreter. f16 runs whichever way this CPU's oneDNN takes it. */
static void test_fused_post_ops_narrow(void) {
    static const char *const types[] = {"bf16", "f16"};
    for (int t = 0; t < 2; t++) {
        rng_state = 17 + (uint64_t)t;
        fused_ops = 3;
        const char *want = t == 0 ? fused_want("onednn matmul with post-ops") : NULL;
        /* dot + bias + relu + scale */
        check("HloModule f\n"
              "fused {\n"
              "  p0 = $T[48,64] parameter(0)\n"
              "  p1 = $T[64,40] parameter(1)\n"
              "  p2 = $T[40] parameter(2)\n"
              "  d = $T[48,40] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
              "  bb = $T[48,40] broadcast(p2), dimensions={1}\n"
              "  s = $T[48,40] add(d, bb)\n"
              "  z = $T[] constant(0)\n"
              "  zb = $T[48,40] broadcast(z), dimensions={}\n"
              "  m = $T[48,40] maximum(s, zb)\n"
              "  c = $T[] constant(0.75)\n"
              "  cb = $T[48,40] broadcast(c), dimensions={}\n"
              "  ROOT y = $T[48,40] multiply(cb, m)\n"
              "}\n"
              "ENTRY e {\n"
              "  a = $T[48,64] parameter(0)\n"
              "  b = $T[64,40] parameter(1)\n"
              "  bias = $T[40] parameter(2)\n"
              "  ROOT r = $R[48,40] fusion(a, b, bias), kind=kOutput, calls=fused\n"
              "}\n",
              types[t], 64, want);
        /* batched dot, bias over two N dims, a vector multiplied */
        check("HloModule f\n"
              "fused {\n"
              "  p0 = $T[3,10,16] parameter(0)\n"
              "  p1 = $T[3,16,4,5] parameter(1)\n"
              "  p2 = $T[4,5] parameter(2)\n"
              "  p3 = $T[4,5] parameter(3)\n"
              "  d = $T[3,10,4,5] dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
              "rhs_batch_dims={0}, rhs_contracting_dims={1}\n"
              "  bb = $T[3,10,4,5] broadcast(p2), dimensions={2,3}\n"
              "  s = $T[3,10,4,5] add(bb, d)\n"
              "  vb = $T[3,10,4,5] broadcast(p3), dimensions={2,3}\n"
              "  ROOT m = $T[3,10,4,5] multiply(s, vb)\n"
              "}\n"
              "ENTRY e {\n"
              "  a = $T[3,10,16] parameter(0)\n"
              "  b = $T[3,16,4,5] parameter(1)\n"
              "  bias = $T[4,5] parameter(2)\n"
              "  v = $T[4,5] parameter(3)\n"
              "  ROOT r = $R[3,10,4,5] fusion(a, b, bias, v), kind=kOutput, calls=fused\n"
              "}\n",
              types[t], 16, t == 0 ? fused_want("onednn matmul with post-ops") : NULL);
        /* convolution (NHWC) + bias + scale + relu */
        check("HloModule f\n"
              "fused {\n"
              "  p0 = $T[2,12,12,16] parameter(0)\n"
              "  p1 = $T[3,3,16,24] parameter(1)\n"
              "  p2 = $T[24] parameter(2)\n"
              "  c = $T[2,12,12,24] convolution(p0, p1), window={size=3x3 pad=1_1x1_1}, "
              "dim_labels=b01f_01io->b01f\n"
              "  bb = $T[2,12,12,24] broadcast(p2), dimensions={3}\n"
              "  s = $T[2,12,12,24] add(c, bb)\n"
              "  h = $T[] constant(0.5)\n"
              "  hb = $T[2,12,12,24] broadcast(h), dimensions={}\n"
              "  k = $T[2,12,12,24] multiply(s, hb)\n"
              "  z = $T[] constant(0)\n"
              "  zb = $T[2,12,12,24] broadcast(z), dimensions={}\n"
              "  ROOT m = $T[2,12,12,24] maximum(k, zb)\n"
              "}\n"
              "ENTRY e {\n"
              "  a = $T[2,12,12,16] parameter(0)\n"
              "  b = $T[3,3,16,24] parameter(1)\n"
              "  bias = $T[24] parameter(2)\n"
              "  ROOT r = $R[2,12,12,24] fusion(a, b, bias), kind=kOutput, calls=fused\n"
              "}\n",
              types[t], 144, t == 0 ? fused_want("onednn convolution with post-ops") : NULL);
        /* formed by the pass from the unfused program (bf16 with oneDNN: one primitive) */
        check("HloModule f\n"
              "ENTRY e {\n"
              "  a = $T[2,8,9,9] parameter(0)\n"
              "  b = $T[8,8,3,3] parameter(1)\n"
              "  bias = $T[8] parameter(2)\n"
              "  c = $T[2,8,9,9] convolution(a, b), window={size=3x3 pad=1_1x1_1}, "
              "dim_labels=bf01_oi01->bf01\n"
              "  bb = $T[2,8,9,9] broadcast(bias), dimensions={1}\n"
              "  s = $T[2,8,9,9] add(c, bb)\n"
              "  z = $T[] constant(0)\n"
              "  zb = $T[2,8,9,9] broadcast(z), dimensions={}\n"
              "  ROOT r = $R[2,8,9,9] maximum(s, zb)\n"
              "}\n",
              types[t], 72,
              t == 0 && cpu_onednn_available() ? "onednn convolution with post-ops" : NULL);
    }
    fused_ops = 0;
}

/* Output fusions formed by the pass (src/passes/output_fusion.c) from unfused modules: a
 * dense layer, ResNet's convolution with bias, batch-norm scale and shift and relu (binary
 * post-ops), and a dot oneDNN does not take (contracting dims that do not merge): the
 * loops, then the epilogue's loops, bit for bit the interpreter's. (Without oneDNN the
 * backend does not run the pass: the emitter's dot kernel is faster than the loops.) */
static void test_output_fusion_programs(void) {
    rng_state = 9;
    fused_ops = 2;
    check("HloModule dense\n"
          "ENTRY e {\n"
          "  x = f32[64,96] parameter(0)\n"
          "  w = f32[96,48] parameter(1)\n"
          "  b = f32[48] parameter(2)\n"
          "  d = f32[64,48] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
          "  bb = f32[64,48] broadcast(b), dimensions={1}\n"
          "  s = f32[64,48] add(d, bb)\n"
          "  z = f32[] constant(0)\n"
          "  zb = f32[64,48] broadcast(z), dimensions={}\n"
          "  ROOT r = $R[64,48] maximum(s, zb)\n"
          "}\n",
          "f32", 96, cpu_onednn_available() ? "onednn matmul with post-ops" : NULL);
    fused_ops = 4;
    check("HloModule resnet_block\n"
          "ENTRY e {\n"
          "  x = f32[1,10,10,8] parameter(0)\n"
          "  k = f32[3,3,8,16] parameter(1)\n"
          "  b = f32[1,16] parameter(2)\n"
          "  g = f32[1,16] parameter(3)\n"
          "  h = f32[16] parameter(4)\n"
          "  c = f32[1,10,10,16] convolution(x, k), window={size=3x3 pad=1_1x1_1}, "
          "dim_labels=b01f_01io->b01f\n"
          "  bb = f32[1,10,10,16] broadcast(b), dimensions={0,3}\n"
          "  s = f32[1,10,10,16] add(c, bb)\n"
          "  gb = f32[1,10,10,16] broadcast(g), dimensions={0,3}\n"
          "  t = f32[1,10,10,16] multiply(gb, s)\n"
          "  hb = f32[1,10,10,16] broadcast(h), dimensions={3}\n"
          "  u = f32[1,10,10,16] add(t, hb)\n"
          "  z = f32[] constant(0)\n"
          "  zb = f32[1,10,10,16] broadcast(z), dimensions={}\n"
          "  ROOT r = $R[1,10,10,16] maximum(u, zb)\n"
          "}\n",
          "f32", 72, cpu_onednn_available() ? "onednn convolution with post-ops" : NULL);
    fused_ops = 0;
    check("HloModule unmerged\n"
          "ENTRY e {\n"
          "  x = f32[4,3,5] parameter(0)\n"
          "  w = f32[5,3,6] parameter(1)\n"
          "  b = f32[6] parameter(2)\n"
          "  v = f32[6] parameter(3)\n"
          "  d = f32[4,6] dot(x, w), lhs_contracting_dims={2,1}, rhs_contracting_dims={0,1}\n"
          "  bb = f32[4,6] broadcast(b), dimensions={1}\n"
          "  s0 = f32[4,6] multiply(d, bb)\n"
          "  vb = f32[4,6] broadcast(v), dimensions={1}\n"
          "  s = f32[4,6] subtract(s0, vb)\n"
          "  c = f32[] constant(3)\n"
          "  cb = f32[4,6] broadcast(c), dimensions={}\n"
          "  m = f32[4,6] multiply(s, cb)\n"
          "  z = f32[] constant(0)\n"
          "  zb = f32[4,6] broadcast(z), dimensions={}\n"
          "  ROOT r = $R[4,6] maximum(zb, m)\n"
          "}\n",
          "f32", 0, cpu_onednn_available() ? "loops, then epilogue loops" : NULL);
}

/* Two scales: oneDNN 2.6 gives the second linear post-op the first one's factor (x * 0.1 *
 * -3 came out as x * 0.01), so this fusion runs the product, then the epilogue's loops. */
static void test_fused_two_scales(void) {
    rng_state = 12;
    fused_ops = 0;
    check("HloModule two_scales\n"
          "ENTRY e {\n"
          "  x = f32[16,24] parameter(0)\n"
          "  y = f32[24,20] parameter(1)\n"
          "  p = f32[16,20] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
          "  c = f32[] constant(0.1)\n"
          "  cb = f32[16,20] broadcast(c), dimensions={}\n"
          "  s = f32[16,20] multiply(p, cb)\n"
          "  k = f32[] constant(-3)\n"
          "  kb = f32[16,20] broadcast(k), dimensions={}\n"
          "  ROOT r = $R[16,20] multiply(s, kb)\n"
          "}\n",
          "f32", 24, cpu_onednn_available() ? "onednn matmul, then epilogue loops" : NULL);
}

/* A convert of an f32 product (and its bias) to bf16, last in the epilogue: oneDNN stores
 * bf16, rounding its f32 values once to nearest even as the interpreter's convert does
 * (a convert to f16 is not fused: its own kernel after the fusion); a dot oneDNN does not
 * take runs the loops, then the epilogue's loops and the convert, bit for bit the
 * interpreter's. */
static void test_fused_convert(void) {
    rng_state = 13;
    fused_ops = 1;
    const char *dense = "HloModule dense_narrow\n"
                        "ENTRY e {\n"
                        "  x = bf16[64,96] parameter(0)\n"
                        "  w = bf16[96,48] parameter(1)\n"
                        "  b = f32[48] parameter(2)\n"
                        "  d = f32[64,48] dot(x, w), lhs_contracting_dims={1}, "
                        "rhs_contracting_dims={0}\n"
                        "  bb = f32[64,48] broadcast(b), dimensions={1}\n"
                        "  s = f32[64,48] add(d, bb)\n"
                        "  ROOT r = $R[64,48] convert(s)\n"
                        "}\n";
    check(dense, "bf16", 96, cpu_onednn_available() ? "onednn matmul with post-ops" : NULL);
    check(dense, "f16", 96, NULL);
    fused_ops = 0;
    check("HloModule unmerged_narrow\n"
          "ENTRY e {\n"
          "  x = f32[4,3,5] parameter(0)\n"
          "  w = f32[5,3,6] parameter(1)\n"
          "  b = f32[6] parameter(2)\n"
          "  d = f32[4,6] dot(x, w), lhs_contracting_dims={2,1}, rhs_contracting_dims={0,1}\n"
          "  bb = f32[4,6] broadcast(b), dimensions={1}\n"
          "  s = f32[4,6] add(d, bb)\n"
          "  ROOT r = $R[4,6] convert(s)\n"
          "}\n",
          "bf16", 0, cpu_onednn_available() ? "loops, then epilogue loops" : NULL);
    /* After a convolution, and to f16 after a dot: oneDNN 2.6 refuses the narrow result
     * (a convolution's f32 source with a bf16 or f16 destination; a matmul's f16 without
     * AVX512-FP16). The pass leaves the convert out of the fusion (a kernel after it);
     * a fusion given whole runs its product through oneDNN, then the bias and the convert
     * as loops. */
    fused_ops = 1;
    const char *conv = "HloModule conv_narrow\n"
                       "ENTRY e {\n"
                       "  a = f32[2,9,9,8] parameter(0)\n"
                       "  k = f32[3,3,8,16] parameter(1)\n"
                       "  b = f32[16] parameter(2)\n"
                       "  c = f32[2,9,9,16] convolution(a, k), window={size=3x3 pad=1_1x1_1}, "
                       "dim_labels=b01f_01io->b01f\n"
                       "  bb = f32[2,9,9,16] broadcast(b), dimensions={3}\n"
                       "  s = f32[2,9,9,16] add(c, bb)\n"
                       "  ROOT r = $R[2,9,9,16] convert(s)\n"
                       "}\n";
    check(conv, "f16", 72, "kernel");
    check(conv, "bf16", 72, "kernel");
    const char *conv_whole = "HloModule conv_narrow_whole\n"
                             "fused {\n"
                             "  p0 = f32[2,9,9,8] parameter(0)\n"
                             "  p1 = f32[3,3,8,16] parameter(1)\n"
                             "  p2 = f32[16] parameter(2)\n"
                             "  c = f32[2,9,9,16] convolution(p0, p1), window={size=3x3 "
                             "pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
                             "  bb = f32[2,9,9,16] broadcast(p2), dimensions={3}\n"
                             "  s = f32[2,9,9,16] add(c, bb)\n"
                             "  ROOT v = $R[2,9,9,16] convert(s)\n"
                             "}\n"
                             "ENTRY e {\n"
                             "  a = f32[2,9,9,8] parameter(0)\n"
                             "  k = f32[3,3,8,16] parameter(1)\n"
                             "  b = f32[16] parameter(2)\n"
                             "  ROOT r = $R[2,9,9,16] fusion(a, k, b), kind=kOutput, calls=fused\n"
                             "}\n";
    const char *conv_want = cpu_onednn_available() ? "onednn convolution, then epilogue loops"
                                                   : "loops, then epilogue loops";
    check(conv_whole, "f16", 72, conv_want);
    check(conv_whole, "bf16", 72, conv_want);
    check("HloModule dot_f16_whole\n"
          "fused {\n"
          "  p0 = f32[64,96] parameter(0)\n"
          "  p1 = f32[96,48] parameter(1)\n"
          "  p2 = f32[48] parameter(2)\n"
          "  d = f32[64,48] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
          "  bb = f32[64,48] broadcast(p2), dimensions={1}\n"
          "  s = f32[64,48] add(d, bb)\n"
          "  ROOT v = $R[64,48] convert(s)\n"
          "}\n"
          "ENTRY e {\n"
          "  a = f32[64,96] parameter(0)\n"
          "  k = f32[96,48] parameter(1)\n"
          "  b = f32[48] parameter(2)\n"
          "  ROOT r = $R[64,48] fusion(a, k, b), kind=kOutput, calls=fused\n"
          "}\n",
          "f16", 96, NULL);
    fused_ops = 0;
}

/* |text| with every "tanh(" replaced by "abs(" (a new string): the magnitudes' module for
 * a tanh epilogue (see mag_text). */
static char *tanh_to_abs(const char *text) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    for (const char *p = text; *p; p++) {
        if (strncmp(p, "tanh(", 5) == 0) {
            cxla_strbuf_append(&b, "abs(", 4);
            p += 4;
        } else {
            cxla_strbuf_putc(&b, *p);
        }
    }
    return b.data;
}

/* check() of a module whose epilogue ends in tanh. */
static void check_tanh(const char *text, const char *rtype, int64_t n, const char *want_what) {
    char *mag = tanh_to_abs(text);
    mag_text = mag;
    check(text, rtype, n, want_what);
    mag_text = NULL;
    free(mag);
}

/* A dense layer's tanh as oneDNN's eltwise post-op (within 1 ulp of the interpreter's
 * tanh on the CPUs measured: docs/semantics.md), with CXLA_CPU_EXACT_MATH=1 the
 * interpreter's own in the epilogue loops; a tanh of a bf16 chain, or after a relu, is
 * not fused. */
static void test_fused_tanh(void) {
    rng_state = 21;
    fused_ops = 2;
    fill_scale = 1.0 / 16; /* products of about 0.1 to 1: tanh far from +-1 */
    /* dot + bias + tanh, written as the fusion */
    const char *fused = "HloModule f\n"
                        "fused {\n"
                        "  p0 = f32[48,64] parameter(0)\n"
                        "  p1 = f32[64,40] parameter(1)\n"
                        "  p2 = f32[40] parameter(2)\n"
                        "  d = f32[48,40] dot(p0, p1), lhs_contracting_dims={1}, "
                        "rhs_contracting_dims={0}\n"
                        "  bb = f32[48,40] broadcast(p2), dimensions={1}\n"
                        "  s = f32[48,40] add(d, bb)\n"
                        "  ROOT t = f32[48,40] tanh(s)\n"
                        "}\n"
                        "ENTRY e {\n"
                        "  a = f32[48,64] parameter(0)\n"
                        "  b = f32[64,40] parameter(1)\n"
                        "  bias = f32[40] parameter(2)\n"
                        "  ROOT r = $R[48,40] fusion(a, b, bias), kind=kOutput, calls=fused\n"
                        "}\n";
    check_tanh(fused, "f32", 64, fused_want("onednn matmul with post-ops"));
    /* formed by the pass: the MLP's hidden layer, the transposed weights of a backward
     * pass, and a tanh between a scale and a vector (not last) */
    check_tanh("HloModule dense_tanh\n"
               "ENTRY e {\n"
               "  x = f32[32,96] parameter(0)\n"
               "  w = f32[96,72] parameter(1)\n"
               "  b = f32[72] parameter(2)\n"
               "  d = f32[32,72] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
               "  bb = f32[32,72] broadcast(b), dimensions={1}\n"
               "  s = f32[32,72] add(d, bb)\n"
               "  ROOT r = $R[32,72] tanh(s)\n"
               "}\n",
               "f32", 96, cpu_onednn_available() ? "onednn matmul with post-ops" : NULL);
    check_tanh("HloModule dense_tanh_t\n"
               "ENTRY e {\n"
               "  x = f32[96,32] parameter(0)\n"
               "  w = f32[72,96] parameter(1)\n"
               "  d = f32[32,72] dot(x, w), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n"
               "  c = f32[] constant(0.25)\n"
               "  cb = f32[32,72] broadcast(c), dimensions={}\n"
               "  s = f32[32,72] multiply(d, cb)\n"
               "  ROOT r = $R[32,72] tanh(s)\n"
               "}\n",
               "f32", 96, cpu_onednn_available() ? "onednn matmul with post-ops" : NULL);
    /* convolution + bias + tanh (NHWC) */
    check_tanh("HloModule conv_tanh\n"
               "ENTRY e {\n"
               "  a = f32[2,9,9,8] parameter(0)\n"
               "  k = f32[3,3,8,16] parameter(1)\n"
               "  b = f32[16] parameter(2)\n"
               "  c = f32[2,9,9,16] convolution(a, k), window={size=3x3 pad=1_1x1_1}, "
               "dim_labels=b01f_01io->b01f\n"
               "  bb = f32[2,9,9,16] broadcast(b), dimensions={3}\n"
               "  s = f32[2,9,9,16] add(c, bb)\n"
               "  ROOT r = $R[2,9,9,16] tanh(s)\n"
               "}\n",
               "f32", 72, cpu_onednn_available() ? "onednn convolution with post-ops" : NULL);
    /* exact math: the product from oneDNN, the bias and the interpreter's tanh as loops */
    setenv("CXLA_CPU_EXACT_MATH", "1", 1);
    check_tanh(fused, "f32", 64, fused_want("onednn matmul, then epilogue loops"));
    unsetenv("CXLA_CPU_EXACT_MATH");
    fused_ops = 1;
    /* Not fused: a tanh after a relu (the relu runs after the primitive) and a tanh of a
     * bf16 chain (oneDNN would skip the bf16 rounding before it): the tanh is a kernel of
     * its own after the fused product. */
    check_tanh("HloModule relu_tanh\n"
               "ENTRY e {\n"
               "  x = f32[16,24] parameter(0)\n"
               "  w = f32[24,8] parameter(1)\n"
               "  d = f32[16,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
               "  z = f32[] constant(0)\n"
               "  zb = f32[16,8] broadcast(z), dimensions={}\n"
               "  m = f32[16,8] maximum(d, zb)\n"
               "  ROOT r = $R[16,8] tanh(m)\n"
               "}\n",
               "f32", 24, "kernel");
    check_tanh("HloModule bf16_tanh\n"
               "ENTRY e {\n"
               "  x = bf16[16,24] parameter(0)\n"
               "  w = bf16[24,8] parameter(1)\n"
               "  d = bf16[16,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
               "  ROOT r = $R[16,8] tanh(d)\n"
               "}\n",
               "bf16", 24, "kernel");
    fused_ops = 0;
    fill_scale = 1;
}

/* A constant kernel is reordered once, when the call is prepared: the results are those of
 * the same kernel as a parameter. */
static void test_constant_weights(void) {
    rng_state = 10;
    check("HloModule constw\n"
          "ENTRY e {\n"
          "  x = f32[2,6,6,3] parameter(0)\n"
          "  k = f32[3,3,3,2] constant({{{{1,-2},{0.5,3},{-1,1}},{{2,2},{-0.25,1},{1,0}},"
          "{{0,1},{1,1},{-3,2}}},{{{1,1},{2,-2},{0,0}},{{1.5,1},{-1,-1},{2,0.5}},"
          "{{0,-1},{1,2},{3,1}}},{{{-1,1},{0.5,0.5},{1,-1}},{{2,0},{1,1},{0,2}},"
          "{{1,1},{-2,1},{1,3}}}})\n"
          "  ROOT r = $R[2,6,6,2] convolution(x, k), window={size=3x3 pad=1_1x1_1}, "
          "dim_labels=b01f_01io->b01f\n"
          "}\n",
          "f32", 27, "onednn convolution");
}

/* A matmul with M >= 512 rows takes its f32 weights in oneDNN's blocked layout, packed from
 * the row-major rhs on every run (onednn.c, want_packed): K and N that are not multiples of
 * the blocks (16, 64), so that the padding is written; an lhs read transposed; a scale
 * fused after it (the MLP's weight gradient); a constant rhs (oneDNN's reorder, once). Each
 * within the bound on 2 threads (the pack split over the pool), on 1, and with the plain
 * weights (CXLA_ONEDNN_WEIGHTS=plain). On CPUs with AVX-512 oneDNN 2.6's brgemm chooses
 * the blocked layout: the test checks that the pack runs there. */
static void test_packed_weights(void) {
    bool avx512 = false;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    avx512 = __builtin_cpu_supports("avx512bw");
#endif
    const char *packed =
        cpu_onednn_available() && avx512 ? "onednn matmul, weights packed per run" : "any";
    const char *scaled = cpu_onednn_available() && avx512
                             ? "onednn matmul with post-ops, weights packed per run"
                             : "any";
    static const char *scale_text =
        "HloModule dw\n"
        "ENTRY e {\n"
        "  x = f32[100,600] parameter(0)\n"
        "  d = f32[100,70] parameter(1)\n"
        "  p = f32[600,70] dot(x, d), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
        "  c = f32[] constant(0.1)\n"
        "  cb = f32[600,70] broadcast(c), dimensions={}\n"
        "  ROOT r = $R[600,70] multiply(p, cb)\n"
        "}\n";
    for (int pass = 0; pass < 3; pass++) {
        /* 0: two threads (CXLA_NUM_THREADS unset: the machine's cores), 1: one, 2: plain. */
        if (pass == 1) setenv("CXLA_NUM_THREADS", "1", 1);
        if (pass == 2) {
            unsetenv("CXLA_NUM_THREADS");
            setenv("CXLA_ONEDNN_WEIGHTS", "plain", 1);
            packed = cpu_onednn_available() ? "onednn matmul" : "any";
            scaled = cpu_onednn_available() ? "onednn matmul with post-ops" : "any";
        }
        rng_state = 12;
        dot_case("f32[512,100]", "f32[100,130]", "$R[512,130]",
                 "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 100, "f32", packed);
        dot_case("f32[520,256]", "f32[256,64]", "$R[520,64]",
                 "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 256, "f32", packed);
        dot_case("f32[33,600]", "f32[33,200]", "$R[600,200]",
                 "lhs_contracting_dims={0}, rhs_contracting_dims={0}", 33, "f32", packed);
        fused_ops = 1;
        check(scale_text, "f32", 100, scaled);
        fused_ops = 0;
        /* Below 512 rows, or a transposed rhs: the weights as they lie. */
        dot_case("f32[256,100]", "f32[100,130]", "$R[256,130]",
                 "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 100, "f32",
                 cpu_onednn_available() ? "onednn matmul" : "any");
    }
    unsetenv("CXLA_ONEDNN_WEIGHTS");
    /* A constant rhs: reordered once by oneDNN when the call is prepared (its elements
     * nonnegative: the magnitudes come from |x| and the same constant). */
    cxla_strbuf t;
    cxla_strbuf_init(&t);
    /* K = 24: a contraction of at most 16 would be a narrow product, the emitter's. */
    cxla_strbuf_printf(&t, "HloModule constw\nENTRY e {\n  x = f32[512,24] parameter(0)\n"
                           "  k = f32[24,70] constant({");
    for (int k = 0; k < 24; k++) {
        cxla_strbuf_printf(&t, "%s{", k ? "," : "");
        for (int n = 0; n < 70; n++) cxla_strbuf_printf(&t, "%s%d", n ? "," : "", (k * 7 + n) % 9);
        cxla_strbuf_printf(&t, "}");
    }
    cxla_strbuf_printf(&t, "})\n  ROOT r = $R[512,70] dot(x, k), lhs_contracting_dims={1}, "
                           "rhs_contracting_dims={0}\n}\n");
    rng_state = 13;
    check(t.data, "f32", 24,
          cpu_onednn_available() && avx512 ? "onednn matmul, constant reordered once" : "any");
    cxla_strbuf_free(&t);
}

/* Replicas share the pool's threads: with another run in progress on the pool, a
 * convolution made for 2 threads runs a copy made for 1 (created on first use), and its
 * results agree with the 2-thread run's (within the bound: the split may change the
 * order of the sums). */
static void test_replica_threads(void) {
    if (!cpu_onednn_available()) return;
    static const char *text = "HloModule r\n"
                              "ENTRY e {\n"
                              "  x = f32[2,12,12,16] parameter(0)\n"
                              "  k = f32[3,3,16,32] parameter(1)\n"
                              "  ROOT r = f32[2,12,12,32] convolution(x, k), "
                              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
                              "}\n";
    cxla_module *m = parse(text);
    if (!m) return;
    rng_state = 11;
    cxla_literal *args[2] = {0}, *full = NULL, *shared = NULL;
    for (int p = 0; p < 2; p++) {
        CHECK_OK(cxla_literal_create(&m->entry->params[p]->shape, &args[p]));
        fill(args[p]);
    }
    void *compiled = NULL;
    exec_compile_options co = {.thread_count = 2};
    exec_run_options ro = {0};
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    cpu_pool *pool = NULL;
    CHECK_OK(cpu_pool_acquire(2, &pool)); /* the executable's pool: shared by count */
    if (compiled && pool && args[0] && args[1]) {
        CHECK_OK(cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, 2, &full));
        cpu_pool_enter(pool); /* another replica runs */
        CHECK_EQ_I64(cpu_pool_share(pool), 2);
        CHECK_OK(cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, 2, &shared));
        cpu_pool_leave(pool);
        if (full && shared) {
            const float *a = cxla_literal_data(full), *b = cxla_literal_data(shared);
            int64_t bad = 0;
            for (int64_t i = 0; i < full->count; i++)
                if (!(fabsf(a[i] - b[i]) <= 1e-4f * (1 + fabsf(a[i])))) bad++;
            CHECK_EQ_I64(bad, 0);
        }
    }
    cpu_pool_release(pool);
    if (compiled) cpu_backend.destroy(compiled);
    for (int p = 0; p < 2; p++) cxla_literal_free(args[p]);
    cxla_literal_free(full);
    cxla_literal_free(shared);
    cxla_module_destroy(m);
}

/* A NaN product through a fused relu stays NaN (maximum keeps NaN; oneDNN's relu would
 * give 0, so the relu runs after the primitive); a relu followed by a negative scale does
 * not commute with it: no call. */
static void test_fused_relu_nan(void) {
    static const char *text = "HloModule f\n"
                              "fused {\n"
                              "  p0 = f32[2,2] parameter(0)\n"
                              "  p1 = f32[2,2] parameter(1)\n"
                              "  d = f32[2,2] dot(p0, p1), lhs_contracting_dims={1}, "
                              "rhs_contracting_dims={0}\n"
                              "  z = f32[] constant(0)\n"
                              "  zb = f32[2,2] broadcast(z), dimensions={}\n"
                              "  m = f32[2,2] maximum(d, zb)\n"
                              "  c = f32[] constant(SCALE)\n"
                              "  cb = f32[2,2] broadcast(c), dimensions={}\n"
                              "  ROOT y = f32[2,2] multiply(m, cb)\n"
                              "}\n"
                              "ENTRY e {\n"
                              "  a = f32[2,2] parameter(0)\n"
                              "  b = f32[2,2] parameter(1)\n"
                              "  ROOT r = f32[2,2] fusion(a, b), kind=kOutput, calls=fused\n"
                              "}\n";
    static const char *const scales[] = {"2", "-2"};
    for (int k = 0; k < 2; k++) {
        cxla_strbuf t;
        cxla_strbuf_init(&t);
        const char *at = strstr(text, "SCALE");
        cxla_strbuf_append(&t, text, (size_t)(at - text));
        cxla_strbuf_printf(&t, "%s%s", scales[k], at + 5);
        cxla_module *m = parse(t.data);
        if (!m) {
            cxla_strbuf_free(&t);
            continue;
        }
        cxla_literal *args[2] = {0}, *want = NULL, *got = NULL;
        static const char *const inputs[2] = {"{{nan, 1}, {-1, 2}}", "{{1, 1}, {1, -3}}"};
        for (int p = 0; p < 2; p++)
            CHECK_OK(cxla_literal_parse(inputs[p], strlen(inputs[p]), &m->entry->params[p]->shape,
                                        &args[p]));
        void *compiled = NULL;
        exec_compile_options co = {0};
        exec_run_options ro = {0};
        CHECK_OK(cpu_backend.compile(m, &co, &compiled));
        if (compiled && args[0] && args[1]) {
            const char *what = cpu_compiled_call_what(compiled, "r");
            if (k == 1)
                CHECK(what && strcmp(what, "interpreter handler") == 0);
            else if (!cpu_onednn_available())
                CHECK(what && strcmp(what, "loops, then epilogue loops") == 0);
            else
                CHECK(what && strncmp(what, "onednn matmul with post-ops", 27) == 0);
            CHECK_OK(
                cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, 2, &got));
            CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)args, 2, &want));
            if (got && want) {
                const float *g = cxla_literal_data(got), *w = cxla_literal_data(want);
                CHECK(isnan(g[0]) && isnan(g[1]) && isnan(w[0]) && isnan(w[1]));
                cxla_status d = cxla_literal_compare(got, want, NULL);
                CHECK_MSG(!d, "scale %s: %s", scales[k], d ? cxla_status_message(d) : "");
                cxla_status_free(d);
            }
        }
        if (compiled) cpu_backend.destroy(compiled);
        for (int p = 0; p < 2; p++) cxla_literal_free(args[p]);
        cxla_literal_free(want);
        cxla_literal_free(got);
        cxla_module_destroy(m);
        cxla_strbuf_free(&t);
    }
}

static void test_dot_random(void) {
    rng_state = 8;
    for (int iter = 0; iter < 60; iter++) {
        int64_t nb = pick(3), nc = pick(3), nlf = pick(3), nrf = pick(3);
        int64_t bs[3], cs[3], lfs[3], rfs[3], n = 1;
        for (int64_t i = 0; i < nb; i++) bs[i] = 1 + pick(4);
        for (int64_t i = 0; i < nc; i++) n *= cs[i] = 1 + pick(9);
        for (int64_t i = 0; i < nlf; i++) lfs[i] = 1 + pick(7);
        for (int64_t i = 0; i < nrf; i++) rfs[i] = 1 + pick(7);
        /* Positions: a random permutation of each operand's dims. */
        int64_t lr = nb + nc + nlf, rr = nb + nc + nrf, lp[9], rp[9];
        for (int64_t i = 0; i < lr; i++) lp[i] = i;
        for (int64_t i = 0; i < rr; i++) rp[i] = i;
        shuffle(lp, lr);
        shuffle(rp, rr);
        int64_t ld[9], rd[9], lb[3], rb[3], lc[3], rc[3], od[9], on = 0;
        for (int64_t i = 0; i < nb; i++) {
            ld[lp[i]] = rd[rp[i]] = od[on++] = bs[i];
            lb[i] = lp[i];
            rb[i] = rp[i];
        }
        for (int64_t i = 0; i < nc; i++) {
            ld[lp[nb + i]] = rd[rp[nb + i]] = cs[i];
            lc[i] = lp[nb + i];
            rc[i] = rp[nb + i];
        }
        /* Free dims appear in the result in the order of their positions. */
        int64_t k = 0;
        for (int64_t d = 0; d < lr; d++) {
            bool free_dim = true;
            for (int64_t i = 0; i < nb + nc; i++) free_dim = free_dim && lp[i] != d;
            if (free_dim) ld[d] = od[on++] = lfs[k++];
        }
        k = 0;
        for (int64_t d = 0; d < rr; d++) {
            bool free_dim = true;
            for (int64_t i = 0; i < nb + nc; i++) free_dim = free_dim && rp[i] != d;
            if (free_dim) rd[d] = od[on++] = rfs[k++];
        }
        static const char *const types[] = {"f32", "f32", "f32", "bf16"};
        const char *t = types[pick(4)];
        cxla_strbuf a, b, r, dn;
        cxla_strbuf_init(&a);
        cxla_strbuf_init(&b);
        cxla_strbuf_init(&r);
        cxla_strbuf_init(&dn);
        dims_text(&a, t, ld, lr);
        dims_text(&b, t, rd, rr);
        dims_text(&r, "$R", od, on);
        cxla_strbuf_printf(&dn, "lhs_batch_dims=");
        ints_text(&dn, lb, nb);
        cxla_strbuf_printf(&dn, ", lhs_contracting_dims=");
        ints_text(&dn, lc, nc);
        cxla_strbuf_printf(&dn, ", rhs_batch_dims=");
        ints_text(&dn, rb, nb);
        cxla_strbuf_printf(&dn, ", rhs_contracting_dims=");
        ints_text(&dn, rc, nc);
        dot_case(a.data, b.data, r.data, dn.data, n, strcmp(t, "f32") == 0 ? "f32" : "bf16", NULL);
        cxla_strbuf_free(&a);
        cxla_strbuf_free(&b);
        cxla_strbuf_free(&r);
        cxla_strbuf_free(&dn);
    }
}

TEST_MAIN(TEST(test_dot_forms_f32), TEST(test_dot_small_floats), TEST(test_dot_widened),
          TEST(test_dot_bf16_subnormal), TEST(test_dot_exact), TEST(test_dot_in_programs),
          TEST(test_fused_post_ops), TEST(test_fused_post_ops_narrow), TEST(test_fused_relu_nan),
          TEST(test_output_fusion_programs), TEST(test_fused_two_scales), TEST(test_fused_convert),
          TEST(test_fused_tanh), TEST(test_constant_weights), TEST(test_packed_weights),
          TEST(test_replica_threads), TEST(test_dot_random))
