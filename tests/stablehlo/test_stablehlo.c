/* The StableHLO front end: the MLIR reader (errors with line:column, types, dense
 * constants), the conversion of each op family on small programs whose results are
 * known by hand (or are the documented values of the functions), and checks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cxla/runtime.h"
#include "cxla/stablehlo.h"
#include "harness.h"
#include "hlo/hlo.h"

/* Parses, runs @main without arguments and compares the result with |expected| (HLO
 * literal text with its shape), exactly or within |atol|. */
static void expect_result(const char *text, const char *expected, const cxla_tolerance *tol,
                          int line) {
    cxla_module *m = NULL;
    cxla_stablehlo_info info;
    cxla_status st = cxla_stablehlo_parse(text, strlen(text), "test.mlir", &m, &info);
    if (st) {
        test_fail(__FILE__, line, "parse: %s", cxla_status_message(st));
        cxla_status_free(st);
        return;
    }
    cxla_client *client = NULL;
    cxla_executable *exe = NULL;
    cxla_literal *result = NULL, *want = NULL;
    CHECK_OK(cxla_client_create(NULL, &client));
    st = cxla_client_compile(client, m, &exe);
    if (!st) st = cxla_executable_run(exe, NULL, 0, &result);
    if (!st) st = cxla_literal_parse(expected, (size_t)-1, NULL, &want);
    if (!st) st = cxla_literal_compare(result, want, tol);
    if (st) test_fail(__FILE__, line, "%s", cxla_status_message(st));
    cxla_status_free(st);
    cxla_literal_free(result);
    cxla_literal_free(want);
    cxla_executable_destroy(exe);
    cxla_client_destroy(client);
}
#define EXPECT(text, expected) expect_result(text, expected, NULL, __LINE__)
#define EXPECT_NEAR(text, expected, tolerance)                                                     \
    expect_result(text, expected, &(cxla_tolerance){.atol = (tolerance)}, __LINE__)
#define EXPECT_ULPS(text, expected, n)                                                             \
    expect_result(text, expected, &(cxla_tolerance){.ulps = (n)}, __LINE__)

static const char *parse_error(const char *text) {
    cxla_module *m = NULL;
    const char *msg = CHECK_ERROR(cxla_stablehlo_parse(text, strlen(text), "bad.mlir", &m, NULL));
    CHECK(m == NULL);
    return msg ? msg : "";
}

static void test_errors_have_line_and_column(void) {
    const char *msg = parse_error("func.func @main() -> tensor<f32> {\n"
                                  "  %0 = stablehlo.constant dense<1.0> : tensor<f32>\n"
                                  "  %1 = stablehlo.add %0, %0 : tensor<f32\n"
                                  "  return %1 : tensor<f32>\n"
                                  "}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:4:") != NULL, "got: %s", msg);
    msg = parse_error("func.func @main() -> tensor<f32> {\n"
                      "  %0 = stablehlo.frobnicate : tensor<f32>\n"
                      "  return %0 : tensor<f32>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:2:8") && strstr(msg, "stablehlo.frobnicate"), "got: %s", msg);
    msg = parse_error("func.func @main() -> tensor<f32> {\n  return %9 : tensor<f32>\n}\n");
    CHECK_MSG(strstr(msg, "undefined value %9"), "got: %s", msg);
    msg = parse_error("func.func @main() -> tensor<2xf7E2M3FN> {\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:1:") && strstr(msg, "unknown element type 'f7E2M3FN'"),
              "got: %s", msg);
    msg = parse_error("func.func @main() -> tensor<2xf32> {\n"
                      "  %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>\n"
                      "  return %0 : tensor<2xf32>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:2:") && strstr(msg, "3 elements"), "got: %s", msg);
    /* integers beyond 64 bits, and floats that no integer holds (fuzzer finding: the
     * cast of 5e88 to an integer was undefined behaviour) */
    msg = parse_error("func.func @main() -> tensor<2xi64> {\n"
                      "  %0 = stablehlo.constant dense<[1, 52222222222222222222222]> : "
                      "tensor<2xi64>\n  return %0 : tensor<2xi64>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:2:") && strstr(msg, "does not fit in 64 bits"), "got: %s", msg);
    msg = parse_error("func.func @main() -> tensor<i32> {\n"
                      "  %0 = stablehlo.constant dense<5.0e88> : tensor<i32>\n"
                      "  return %0 : tensor<i32>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:2:") && strstr(msg, "not an integer"), "got: %s", msg);
    msg = parse_error("func.func @main() -> tensor<i32> {\n"
                      "  %0 = stablehlo.constant dense<2.5> : tensor<i32>\n"
                      "  return %0 : tensor<i32>\n}\n");
    CHECK_MSG(strstr(msg, "not an integer"), "got: %s", msg);
    /* a spatial dimension named twice, one never named (fuzzer finding: an unset kernel
     * position was read) */
    msg = parse_error("func.func @main(%a: tensor<1x4x4x1xf32>, %k: tensor<3x3x1x1xf32>) -> "
                      "tensor<1x2x2x1xf32> {\n"
                      "  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 1, 1, f]x[0, 2, i, "
                      "o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, "
                      "feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, "
                      "tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>\n"
                      "  return %0 : tensor<1x2x2x1xf32>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:2:") && strstr(msg, "named twice"), "got: %s", msg);
    msg = parse_error("func.func @main(%a: tensor<1x4x4x1xf32>, %k: tensor<3x3x1x1xf32>) -> "
                      "tensor<1x2x2x1xf32> {\n"
                      "  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 2, i, "
                      "o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, "
                      "feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, "
                      "tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>\n"
                      "  return %0 : tensor<1x2x2x1xf32>\n}\n");
    CHECK_MSG(strstr(msg, "each name the spatial dimensions 0..2 once"), "got: %s", msg);
    /* fewer operands than the operation takes (fuzzer finding: unset operand slots were
     * read) */
    msg = parse_error("func.func @main() -> tensor<i64> {\n"
                      "  %a = stablehlo.constant dense<1> : tensor<i64>\n"
                      "  %0 = stablehlo.rng %a : tensor<i64>\n"
                      "  return %0 : tensor<i64>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:3:8") && strstr(msg, "missing operand"), "got: %s", msg);
    /* a splat of a dynamic type (fuzzer finding: the element-count error leaked) */
    msg = parse_error("func.func @main() -> tensor<?xi64> {\n"
                      "  %0 = stablehlo.constant dense<1> : tensor<?xi64>\n"
                      "  return %0 : tensor<?xi64>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:2:"), "got: %s", msg);
    /* a splat too big to build as a literal where it cannot be a broadcast */
    msg = parse_error("func.func @main() {\n"
                      "  %0 = stablehlo.constant dense<1.0> : tensor<f32>\n"
                      "  check.expect_eq_const %0, dense<1.0> : tensor<100000x1000xf32>\n"
                      "  func.return\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:3:") && strstr(msg, "more than 256 MiB"), "got: %s", msg);
    parse_error("");
    parse_error("module {");
    parse_error("func.func @a() {\n  func.return\n}\nfunc.func @a() {\n  func.return\n}\n");
}

static void test_types(void) {
    const char *text =
        "module @m attributes {mhlo.num_partitions = 1 : i32} {\n"
        "  func.func public @main(%a: tensor<2x3xbf16>, %b: tensor<complex<f64>>,\n"
        "      %c: tensor<4xui8> {jax.arg_info = \"c\"}, %d: tensor<i1>, %e: tensor<3xf8E4M3FN>,\n"
        "      %f: tuple<tensor<i64>, tensor<2xi4>>, %g: !stablehlo.token) -> tensor<2x3xbf16> {\n"
        "    return %a : tensor<2x3xbf16>\n  }\n}\n";
    cxla_module *m = NULL;
    CHECK_OK(cxla_stablehlo_parse(text, strlen(text), "t.mlir", &m, NULL));
    if (!m) return;
    const cxla_computation *e = m->entry;
    CHECK_EQ_I64(e->param_count, 7);
    CHECK(e->params[0]->shape.type == CXLA_BF16 && e->params[0]->shape.rank == 2 &&
          e->params[0]->shape.dims[1] == 3);
    CHECK(e->params[1]->shape.type == CXLA_C128 && e->params[1]->shape.rank == 0);
    CHECK(e->params[2]->shape.type == CXLA_U8);
    CHECK(e->params[3]->shape.type == CXLA_PRED);
    CHECK(e->params[4]->shape.type == CXLA_F8E4M3FN);
    CHECK(e->params[5]->shape.type == CXLA_TUPLE && e->params[5]->shape.tuple_count == 2 &&
          e->params[5]->shape.elements[1].type == CXLA_S4);
    CHECK(e->params[6]->shape.type == CXLA_TOKEN);
    cxla_module_destroy(m);
}

static void test_dense(void) {
    /* 1.0f = 0x3F800000, 2.0f = 0x40000000, little-endian bytes */
    EXPECT("func.func @main() -> tensor<2xf32> {\n"
           "  %0 = stablehlo.constant dense<\"0x0000803F00000040\"> : tensor<2xf32>\n"
           "  return %0 : tensor<2xf32>\n}\n",
           "f32[2] {1, 2}");
    EXPECT("func.func @main() -> tensor<2x2xi16> {\n"
           "  %0 = stablehlo.constant dense<\"0xFFFF\"> : tensor<2x2xi16>\n"
           "  return %0 : tensor<2x2xi16>\n}\n",
           "s16[2,2] {{-1, -1}, {-1, -1}}");
    EXPECT("func.func @main() -> tensor<3xi1> {\n"
           "  %0 = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>\n"
           "  return %0 : tensor<3xi1>\n}\n",
           "pred[3] {1, 0, 1}");
    EXPECT("func.func @main() -> tensor<2xcomplex<f32>> {\n"
           "  %0 = stablehlo.constant dense<[(1.5, -2.0), (0.0, 3.0)]> : tensor<2xcomplex<f32>>\n"
           "  return %0 : tensor<2xcomplex<f32>>\n}\n",
           "c64[2] {(1.5, -2), (0, 3)}");
    EXPECT("func.func @main() -> tensor<2xui64> {\n"
           "  %0 = stablehlo.constant dense<[18446744073709551615, 0x10]> : tensor<2xui64>\n"
           "  return %0 : tensor<2xui64>\n}\n",
           "u64[2] {18446744073709551615, 16}");
    /* a NaN written as its bit pattern; -inf by name */
    EXPECT("func.func @main() -> tensor<2xf32> {\n"
           "  %0 = stablehlo.constant dense<[0x7FC00000, -inf]> : tensor<2xf32>\n"
           "  return %0 : tensor<2xf32>\n}\n",
           "f32[2] {nan, -inf}");
    /* a big splat is a scalar and a broadcast (fuzzer finding: dense<1> of a huge type was
     * built element by element while parsing) */
    EXPECT("func.func @main() -> tensor<f32> {\n"
           "  %0 = stablehlo.constant dense<2.5> : tensor<100x100xf32>\n"
           "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [0, 1]"
           " : (tensor<100x100xf32>, tensor<f32>) -> tensor<f32>\n"
           "  return %1 : tensor<f32>\n}\n",
           "f32[] 25000");
    EXPECT("func.func @main() -> tensor<3xi32> {\n"
           "  %0 = stablehlo.constant dense<\"0x07000000\"> : tensor<5000xi32>\n"
           "  %1 = stablehlo.slice %0 [4997:5000] : (tensor<5000xi32>) -> tensor<3xi32>\n"
           "  return %1 : tensor<3xi32>\n}\n",
           "s32[3] {7, 7, 7}");
    /* an empty array is a broadcast of a zero scalar (fuzzer finding: tensor<78850402x0>
     * printed 78 million "{}") */
    EXPECT("func.func @main() -> tensor<3x0xf32> {\n"
           "  %0 = stablehlo.constant dense<> : tensor<3x0xf32>\n"
           "  return %0 : tensor<3x0xf32>\n}\n",
           "f32[3,0] { {}, {}, {} }");
    /* a whole number written as a float for an integer tensor */
    EXPECT("func.func @main() -> tensor<i32> {\n"
           "  %0 = stablehlo.constant dense<-3.0e+00> : tensor<i32>\n"
           "  return %0 : tensor<i32>\n}\n",
           "s32[] -3");
}

static void test_elementwise(void) {
    EXPECT("func.func @main() -> tensor<3xi32> {\n"
           "  %a = stablehlo.constant dense<[1, -2, 7]> : tensor<3xi32>\n"
           "  %b = stablehlo.constant dense<[3, 4, -9]> : tensor<3xi32>\n"
           "  %0 = stablehlo.add %a, %b : tensor<3xi32>\n"
           "  %1 = \"stablehlo.multiply\"(%0, %b) : (tensor<3xi32>, tensor<3xi32>) -> "
           "tensor<3xi32>\n"
           "  %2 = stablehlo.compare GT, %1, %a, SIGNED : (tensor<3xi32>, tensor<3xi32>) -> "
           "tensor<3xi1>\n"
           "  %3 = stablehlo.select %2, %1, %a : tensor<3xi1>, tensor<3xi32>\n"
           "  return %3 : tensor<3xi32>\n}\n",
           "s32[3] {12, 8, 18}");
    /* complex maximum compares (real, imaginary) lexicographically; complex -> real
     * conversion keeps the real part */
    EXPECT("func.func @main() -> tensor<2xf64> {\n"
           "  %a = stablehlo.constant dense<[(1.0, 5.0), (2.0, 1.0)]> : tensor<2xcomplex<f64>>\n"
           "  %b = stablehlo.constant dense<[(1.0, 6.0), (1.0, 9.0)]> : tensor<2xcomplex<f64>>\n"
           "  %0 = stablehlo.maximum %a, %b : tensor<2xcomplex<f64>>\n"
           "  %1 = stablehlo.imag %0 : (tensor<2xcomplex<f64>>) -> tensor<2xf64>\n"
           "  return %1 : tensor<2xf64>\n}\n",
           "f64[2] {6, 1}");
    EXPECT_NEAR("func.func @main() -> tensor<3xf32> {\n"
                "  %a = stablehlo.constant dense<[3.0, 0.5, -0.5]> : tensor<3xf32>\n"
                "  %0 = chlo.lgamma %a : tensor<3xf32> -> tensor<3xf32>\n"
                "  return %0 : tensor<3xf32>\n}\n",
                /* log 2, log sqrt(pi), log(2 sqrt(pi)) */
                "f32[3] {0.6931472, 0.5723649, 1.2655121}", 1e-5);
    /* the reflection at the negative integers (poles: +inf, as XLA), and at negative
     * half-integers (Python's math.lgamma) */
    EXPECT_NEAR("func.func @main() -> tensor<4xf32> {\n"
                "  %a = stablehlo.constant dense<[-1.0, -3.0, -2.5, 0.0]> : tensor<4xf32>\n"
                "  %0 = chlo.lgamma %a : tensor<4xf32> -> tensor<4xf32>\n"
                "  return %0 : tensor<4xf32>\n}\n",
                "f32[4] {inf, inf, -0.0562437165, inf}", 1e-5);
    /* erf^-1: values whose erf (Python math.erf) gives back the inputs; +-1 give +-inf. */
    EXPECT_NEAR("func.func @main() -> tensor<5xf32> {\n"
                "  %a = stablehlo.constant dense<[0.5, -0.9, 0.999, 1.0, -1.0]> : tensor<5xf32>\n"
                "  %0 = chlo.erf_inv %a : tensor<5xf32> -> tensor<5xf32>\n"
                "  return %0 : tensor<5xf32>\n}\n",
                "f32[5] {0.4769362762, -1.1630871537, 2.3267537655, inf, -inf}", 1e-5);
    /* f64 takes Giles' double-precision polynomials, one case in each of the three ranges
     * of w = -log(1 - x^2) (below 6.25, below 16, above); expected values by Newton's
     * method on Python's math.erfc. Near 1, rounding x^2 to f64 moves w (as in XLA's
     * formula), hence the tolerance. */
    EXPECT_NEAR("func.func @main() -> tensor<6xf64> {\n"
                "  %a = stablehlo.constant dense<[0.5, -0.9, 0.9999, 0.99999999, -1.0, 0.0]> : "
                "tensor<6xf64>\n"
                "  %0 = chlo.erf_inv %a : tensor<6xf64> -> tensor<6xf64>\n"
                "  return %0 : tensor<6xf64>\n}\n",
                "f64[6] {0.4769362762044699, -1.1630871536766743, 2.75106390571208, "
                "4.052237243268763, -inf, 0}",
                1e-9);
    /* digamma: -gamma at 1, -gamma - 2 log 2 at 1/2, the reflection at -1/2 (2 - gamma -
     * 2 log 2), H_9 - gamma at 10; the poles: -inf at zero (either sign), NaN at the
     * negative integers (XLA's client Digamma and the CHLO legalization); bf16 computes
     * in f32. */
    EXPECT_NEAR("func.func @main() -> tensor<9xf32> {\n"
                "  %a = stablehlo.constant dense<[1.0, 0.5, -0.5, 10.0, 0.0, -2.0, -2.5, -0.0, "
                "-1.0]> : tensor<9xf32>\n"
                "  %0 = chlo.digamma %a : tensor<9xf32> -> tensor<9xf32>\n"
                "  return %0 : tensor<9xf32>\n}\n",
                "f32[9] {-0.5772156649, -1.9635100260, 0.0364899740, 2.2517525891, -inf, nan, "
                "1.1031566406, -inf, nan}",
                1e-5);
    EXPECT_NEAR("func.func @main() -> tensor<3xf64> {\n"
                "  %a = stablehlo.constant dense<[0.0, -3.0, 2.0]> : tensor<3xf64>\n"
                "  %0 = chlo.digamma %a : tensor<3xf64> -> tensor<3xf64>\n"
                "  return %0 : tensor<3xf64>\n}\n",
                "f64[3] {-inf, nan, 0.42278433509846713}", 1e-10);
    EXPECT_NEAR("func.func @main() -> tensor<3xbf16> {\n"
                "  %a = stablehlo.constant dense<[1.0, 0.5, 0.0]> : tensor<3xbf16>\n"
                "  %0 = chlo.digamma %a : tensor<3xbf16> -> tensor<3xbf16>\n"
                "  return %0 : tensor<3xbf16>\n}\n",
                "bf16[3] {-0.5772, -1.9635, -inf}", 1e-2);
    /* exp(-|x|) I1(x), odd in x; both expansions (|x| <= 8 and beyond); expected values
     * from the power series of I1 summed in double precision (i1e(1) = 0.20791042 as in
     * SciPy's documentation). */
    EXPECT_NEAR("func.func @main() -> tensor<7xf64> {\n"
                "  %a = stablehlo.constant dense<[0.5, 1.0, -3.0, 5.0, 10.0, 20.0, 0.0]> : "
                "tensor<7xf64>\n"
                "  %0 = chlo.bessel_i1e %a : tensor<7xf64> -> tensor<7xf64>\n"
                "  return %0 : tensor<7xf64>\n}\n",
                "f64[7] {0.15642080318487167, 0.20791041534970847, -0.19682671329730084, "
                "0.1639722669445424, 0.12126268138445555, 0.08750622218328873, 0}",
                1e-14);
    EXPECT_NEAR("func.func @main() -> tensor<4xf32> {\n"
                "  %a = stablehlo.constant dense<[1.0, -3.0, 10.0, 20.0]> : tensor<4xf32>\n"
                "  %0 = chlo.bessel_i1e %a : tensor<4xf32> -> tensor<4xf32>\n"
                "  return %0 : tensor<4xf32>\n}\n",
                "f32[4] {0.20791042, -0.19682671, 0.12126268, 0.08750622}", 1e-6);
}

/* chlo.next_after, bit for bit; chlo.erfc of bf16 in f32 as CHLO computes it: results far
 * below bf16's epsilon stay (1 - erf(x) in bf16 gives 0 from x = 3 on). */
static void test_chlo_next_after_erfc(void) {
    EXPECT("func.func @main() -> tensor<8xi32> {\n"
           "  %x = stablehlo.constant dense<[1.0, 1.0, 0.0, 0.0, -1.0, 0x7FC00000, 2.0, -0.0]> "
           ": tensor<8xf32>\n"
           "  %y = stablehlo.constant dense<[2.0, 0.0, 1.0, -1.0, -2.0, 1.0, 2.0, 1.0]> "
           ": tensor<8xf32>\n"
           "  %r = \"chlo.next_after\"(%x, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>\n"
           "  %b = stablehlo.bitcast_convert %r : (tensor<8xf32>) -> tensor<8xi32>\n"
           "  return %b : tensor<8xi32>\n}\n",
           "s32[8] {1065353217, 1065353215, 1, -2147483647, -1082130431, 2143289344, 1073741824, "
           "1}");
    EXPECT(
        "func.func @main() -> tensor<3xbf16> {\n"
        "  %x = stablehlo.constant dense<[1.0, -0.0, 3.0]> : tensor<3xbf16>\n"
        "  %y = stablehlo.constant dense<[0.0, -1.0, 3.0]> : tensor<3xbf16>\n"
        "  %r = \"chlo.next_after\"(%x, %y) : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>\n"
        "  return %r : tensor<3xbf16>\n}\n",
        "bf16[3] {0.99609375, -9.18355e-41, 3}");
    EXPECT_ULPS("func.func @main() -> tensor<5xbf16> {\n"
                "  %x = stablehlo.constant dense<[0.5, 3.0, 5.0, 9.0, -2.0]> : tensor<5xbf16>\n"
                "  %r = chlo.erfc %x : tensor<5xbf16> -> tensor<5xbf16>\n"
                "  return %r : tensor<5xbf16>\n}\n",
                "bf16[5] {0.47950011, 2.2090497e-05, 1.5374598e-12, 4.1370317e-37, 1.9953222}", 1);
    EXPECT_ULPS("func.func @main() -> tensor<4xf32> {\n"
                "  %x = stablehlo.constant dense<[0.5, 3.0, 5.0, 9.0]> : tensor<4xf32>\n"
                "  %r = chlo.erfc %x : tensor<4xf32> -> tensor<4xf32>\n"
                "  return %r : tensor<4xf32>\n}\n",
                "f32[4] {0.47950011, 2.2090497e-05, 1.5374598e-12, 4.1370317e-37}", 8);
}

/* chlo.sinh and chlo.cosh as CHLO lowers them: e^(x + log(1/2)) -+ e^(log(1/2) - x),
 * which overflows at f32 89.4159851 (libm's sinh gives 3.4028196e38 there, the reference
 * inf), and the expm1 form below |x| < 1, not odd-symmetric in its last bit (0.5 and -0.5
 * differ). The expected values are that arithmetic in NumPy float32; bf16 computes in f32. */
static void test_chlo_sinh_cosh(void) {
    EXPECT_ULPS("func.func @main() -> (tensor<6xf32>, tensor<6xf32>) {\n"
                "  %x = stablehlo.constant dense<[0.5, -0.5, 3.0, 89.4159851, -89.0, 88.0]> "
                ": tensor<6xf32>\n"
                "  %s = chlo.sinh %x : tensor<6xf32> -> tensor<6xf32>\n"
                "  %c = chlo.cosh %x : tensor<6xf32> -> tensor<6xf32>\n"
                "  return %s, %c : tensor<6xf32>, tensor<6xf32>\n}\n",
                "(f32[6], f32[6]) ({0.521095335, -0.521095276, 10.0178747, inf, -2.24480943e+38, "
                "8.25819299e+37}, {1.12762594, 1.12762594, 10.0676622, inf, 2.24480943e+38, "
                "8.25819299e+37})",
                2);
    EXPECT_ULPS("func.func @main() -> tensor<2xbf16> {\n"
                "  %x = stablehlo.constant dense<[88.0, -0.5]> : tensor<2xbf16>\n"
                "  %c = chlo.cosh %x : tensor<2xbf16> -> tensor<2xbf16>\n"
                "  return %c : tensor<2xbf16>\n}\n",
                "bf16[2] {8.25819299e+37, 1.12762594}", 1);
}

static void test_shapes(void) {
    /* size-1 dimensions expand in broadcast_in_dim */
    EXPECT("func.func @main() -> tensor<2x3xi32> {\n"
           "  %a = stablehlo.constant dense<[[1], [2]]> : tensor<2x1xi32>\n"
           "  %0 = stablehlo.broadcast_in_dim %a, dims = [0, 1] : (tensor<2x1xi32>) -> "
           "tensor<2x3xi32>\n"
           "  return %0 : tensor<2x3xi32>\n}\n",
           "s32[2,3] {{1, 1, 1}, {2, 2, 2}}");
    EXPECT("func.func @main() -> tensor<2x2xi32> {\n"
           "  %a = stablehlo.iota dim = 0 : tensor<3x4xi32>\n"
           "  %b = stablehlo.iota dim = 1 : tensor<3x4xi32>\n"
           "  %c = stablehlo.add %a, %b : tensor<3x4xi32>\n"
           "  %d = stablehlo.slice %c [1:3, 0:4:2] : (tensor<3x4xi32>) -> tensor<2x2xi32>\n"
           "  %e = stablehlo.transpose %d, dims = [1, 0] : (tensor<2x2xi32>) -> tensor<2x2xi32>\n"
           "  return %e : tensor<2x2xi32>\n}\n",
           "s32[2,2] {{1, 2}, {3, 4}}");
    EXPECT("func.func @main() -> tensor<7xi32> {\n"
           "  %a = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
           "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
           "  %0 = stablehlo.pad %a, %z, low = [1], high = [1], interior = [1] : "
           "(tensor<3xi32>, tensor<i32>) -> tensor<7xi32>\n"
           "  return %0 : tensor<7xi32>\n}\n",
           "s32[7] {0, 1, 0, 2, 0, 3, 0}");
}

static void test_reduce_and_windows(void) {
    EXPECT("func.func @main() -> tensor<2xf32> {\n"
           "  %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>\n"
           "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1]"
           " : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>\n"
           "  return %0 : tensor<2xf32>\n}\n",
           "f32[2] {3, 7}");
    /* two inputs written pairwise, a reducer region (argmax) */
    EXPECT("func.func @main() -> tensor<i32> {\n"
           "  %v = stablehlo.constant dense<[3.0, 9.0, 4.0]> : tensor<3xf32>\n"
           "  %i = stablehlo.iota dim = 0 : tensor<3xi32>\n"
           "  %lo = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
           "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
           "  %0:2 = stablehlo.reduce(%v init: %lo), (%i init: %zero) across dimensions = [0] :"
           " (tensor<3xf32>, tensor<3xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, "
           "tensor<i32>)\n"
           "   reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>) {\n"
           "    %gt = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
           "    %m = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>\n"
           "    %mi = stablehlo.select %gt, %ai, %bi : tensor<i1>, tensor<i32>\n"
           "    stablehlo.return %m, %mi : tensor<f32>, tensor<i32>\n  }\n"
           "  return %0#1 : tensor<i32>\n}\n",
           "s32[] 1");
    EXPECT("func.func @main() -> tensor<3xi32> {\n"
           "  %a = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
           "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
           "  %0 = \"stablehlo.reduce_window\"(%a, %z) ({\n"
           "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
           "    %s = stablehlo.add %x, %y : tensor<i32>\n"
           "    stablehlo.return %s : tensor<i32>\n"
           "  }) {window_dimensions = array<i64: 2>} : (tensor<4xi32>, tensor<i32>) -> "
           "tensor<3xi32>\n"
           "  return %0 : tensor<3xi32>\n}\n",
           "s32[3] {3, 5, 7}");
}

static void test_gather_scatter(void) {
    EXPECT("func.func @main() -> tensor<4xi32> {\n"
           "  %a = stablehlo.constant dense<[10, 20, 30, 40]> : tensor<4xi32>\n"
           "  %idx = stablehlo.constant dense<[[1], [3], [1]]> : tensor<3x1xi32>\n"
           "  %u = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
           "  %0 = \"stablehlo.scatter\"(%a, %idx, %u) ({\n"
           "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
           "    %s = stablehlo.add %x, %y : tensor<i32>\n"
           "    stablehlo.return %s : tensor<i32>\n"
           "  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],"
           " scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} :"
           " (tensor<4xi32>, tensor<3x1xi32>, tensor<3xi32>) -> tensor<4xi32>\n"
           "  return %0 : tensor<4xi32>\n}\n",
           "s32[4] {10, 24, 30, 42}");
    EXPECT("func.func @main() -> tensor<2xi32> {\n"
           "  %a = stablehlo.constant dense<[10, 20, 30, 40]> : tensor<4xi32>\n"
           "  %idx = stablehlo.constant dense<[[2], [0]]> : tensor<2x1xi32>\n"
           "  %0 = \"stablehlo.gather\"(%a, %idx) {dimension_numbers = #stablehlo.gather<"
           "collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,"
           " slice_sizes = array<i64: 1>} : (tensor<4xi32>, tensor<2x1xi32>) -> tensor<2xi32>\n"
           "  return %0 : tensor<2xi32>\n}\n",
           "s32[2] {30, 10}");
}

static void test_linalg(void) {
    EXPECT("func.func @main() -> tensor<2x2xf32> {\n"
           "  %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>\n"
           "  %b = stablehlo.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>\n"
           "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0],"
           " precision = [DEFAULT, DEFAULT] : (tensor<2x2xf32>, tensor<2x2xf32>) -> "
           "tensor<2x2xf32>\n"
           "  return %0 : tensor<2x2xf32>\n}\n",
           "f32[2,2] {{19, 22}, {43, 50}}");
    EXPECT("func.func @main() -> tensor<1x3x1xf32> {\n"
           "  %x = stablehlo.constant dense<[[[1.0], [2.0], [3.0], [4.0]]]> : tensor<1x4x1xf32>\n"
           "  %k = stablehlo.constant dense<[[[1.0]], [[10.0]]]> : tensor<2x1x1xf32>\n"
           "  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f],"
           " window = {stride = [1], pad = [[0, 0]]} {batch_group_count = 1 : i64,"
           " feature_group_count = 1 : i64} : (tensor<1x4x1xf32>, tensor<2x1x1xf32>) -> "
           "tensor<1x3x1xf32>\n"
           "  return %0 : tensor<1x3x1xf32>\n}\n",
           "f32[1,3,1] {{{21}, {32}, {43}}}");
}

static void test_control_flow(void) {
    /* the body uses %ten and %step from outside: passed in through the loop state */
    EXPECT("func.func @main() -> tensor<i64> {\n"
           "  %i0 = stablehlo.constant dense<0> : tensor<i64>\n"
           "  %ten = stablehlo.constant dense<10> : tensor<i64>\n"
           "  %s = stablehlo.constant dense<3> : tensor<i64>\n"
           "  %step = stablehlo.add %s, %s : tensor<i64>\n"
           "  %r0, %r1 = stablehlo.while(%i = %i0, %acc = %i0) : tensor<i64>, tensor<i64>\n"
           "  cond {\n"
           "    %c = stablehlo.compare LT, %i, %ten : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
           "    stablehlo.return %c : tensor<i1>\n"
           "  } do {\n"
           "    %one = stablehlo.constant dense<1> : tensor<i64>\n"
           "    %n = stablehlo.add %i, %one : tensor<i64>\n"
           "    %a = stablehlo.add %acc, %step : tensor<i64>\n"
           "    stablehlo.return %n, %a : tensor<i64>, tensor<i64>\n"
           "  }\n"
           "  return %r1 : tensor<i64>\n}\n",
           "s64[] 60");
    EXPECT("func.func @main() -> tensor<2xi64> {\n"
           "  %idx = stablehlo.constant dense<5> : tensor<i32>\n"
           "  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi64>\n"
           "  %y = stablehlo.add %x, %x : tensor<2xi64>\n"
           "  %r = \"stablehlo.case\"(%idx) ({\n"
           "    stablehlo.return %x : tensor<2xi64>\n"
           "  }, {\n"
           "    stablehlo.return %y : tensor<2xi64>\n"
           "  }) : (tensor<i32>) -> tensor<2xi64>\n"
           "  return %r : tensor<2xi64>\n}\n",
           "s64[2] {2, 4}"); /* out of range: the last branch */
    EXPECT("func.func private @two(%a: tensor<i32>) -> (tensor<i32>, tensor<i32>) {\n"
           "  %b = stablehlo.negate %a : tensor<i32>\n"
           "  func.return %a, %b : tensor<i32>, tensor<i32>\n}\n"
           "func.func @main() -> tensor<i32> {\n"
           "  %x = stablehlo.constant dense<4> : tensor<i32>\n"
           "  %0:2 = func.call @two(%x) : (tensor<i32>) -> (tensor<i32>, tensor<i32>)\n"
           "  %1 = stablehlo.subtract %0#0, %0#1 : tensor<i32>\n"
           "  return %1 : tensor<i32>\n}\n",
           "s32[] 8");
}

/* Runs a program and returns the check tally. */
static cxla_stablehlo_check_tally run_checks(const char *text) {
    cxla_stablehlo_check_tally t = {0};
    cxla_module *m = NULL;
    cxla_stablehlo_info info;
    CHECK_OK(cxla_stablehlo_parse(text, strlen(text), "c.mlir", &m, &info));
    if (!m) return t;
    cxla_client *client = NULL;
    cxla_executable *exe = NULL;
    cxla_literal *r = NULL;
    CHECK_OK(cxla_client_create(NULL, &client));
    CHECK_OK(cxla_client_compile(client, m, &exe));
    cxla_stablehlo_checks_reset();
    CHECK_OK(cxla_executable_run(exe, NULL, 0, &r));
    cxla_stablehlo_checks_get(&t);
    cxla_literal_free(r);
    cxla_executable_destroy(exe);
    cxla_client_destroy(client);
    return t;
}

static void test_checks(void) {
    cxla_stablehlo_check_tally t = run_checks(
        "func.func @checks() {\n"
        "  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
        "  check.expect_eq_const %a, dense<[1.0, 2.0]> : tensor<2xf32>\n"
        "  check.expect_almost_eq_const %a, dense<[1.00001, 2.0]> : tensor<2xf32>\n"
        "  check.expect_eq_const %a, dense<[1.0, 2.5]> : tensor<2xf32>\n"
        "  stablehlo.custom_call @check.expect_almost_eq(%a, %a) {has_side_effect = true} :"
        " (tensor<2xf32>, tensor<2xf32>) -> ()\n"
        "  func.return\n}\n");
    CHECK_EQ_I64(t.passed, 3);
    CHECK_EQ_I64(t.failed, 1);
    CHECK_MSG(t.failures && strstr(t.failures, "@checks line 5") && strstr(t.failures, "2.5") &&
                  strstr(t.failures, "{1}"),
              "got: %s", t.failures ? t.failures : "(none)");
    free(t.failures);
    /* within 3 ULP: 1 + 2^-23 is 1 ULP above 1 */
    t = run_checks("func.func @main() {\n"
                   "  %a = stablehlo.constant dense<1.0> : tensor<f32>\n"
                   "  %b = stablehlo.constant dense<0x3F800001> : tensor<f32>\n"
                   "  %c = stablehlo.constant dense<0x3F800004> : tensor<f32>\n"
                   "  stablehlo.custom_call @check.expect_close(%a, %b) {has_side_effect = true} :"
                   " (tensor<f32>, tensor<f32>) -> ()\n"
                   "  stablehlo.custom_call @check.expect_close(%a, %c) {has_side_effect = true} :"
                   " (tensor<f32>, tensor<f32>) -> ()\n"
                   "  func.return\n}\n");
    CHECK_EQ_I64(t.passed, 1);
    CHECK_EQ_I64(t.failed, 1);
    free(t.failures);
}

static void test_fmt_prints_hlo(void) {
    const char *text = "func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
                       "  %0 = stablehlo.exponential %a : tensor<3xf32>\n"
                       "  return %0 : tensor<3xf32>\n}\n";
    cxla_module *m = NULL;
    CHECK_OK(cxla_stablehlo_parse(text, strlen(text), "f.mlir", &m, NULL));
    if (!m) return;
    char *hlo = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT);
    CHECK(hlo && strstr(hlo, "exponential(") && strstr(hlo, "ENTRY"));
    /* and it parses back as HLO */
    cxla_module *again = NULL;
    CHECK_OK(cxla_hlo_parse(hlo, strlen(hlo), "printed", &again));
    cxla_module_destroy(again);
    free(hlo);
    cxla_module_destroy(m);
}

/* interpreter.run_parallel: collectives between the devices, per-device programs that
 * differ (send on one, recv on the other), infeed, and the printed module parsing back
 * as HLO that runs the same. Expected values by hand from the StableHLO spec. */
static void test_run_parallel(void) {
    /* all_reduce over 2 replicas; all_to_all splitting dim 1 and concatenating dim 0. */
    EXPECT("func.func @f(%x: tensor<2x2xi32>) -> (tensor<2x2xi32>, tensor<4x1xi32>) {\n"
           "  %r = \"stablehlo.all_reduce\"(%x) ({\n"
           "    ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
           "      %s = stablehlo.add %a, %b : tensor<i32>\n"
           "      stablehlo.return %s : tensor<i32>\n"
           "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} :\n"
           "     (tensor<2x2xi32>) -> tensor<2x2xi32>\n"
           "  %t = \"stablehlo.all_to_all\"(%x) {split_dimension = 1 : i64,\n"
           "     concat_dimension = 0 : i64, split_count = 2 : i64,\n"
           "     replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} :\n"
           "     (tensor<2x2xi32>) -> tensor<4x1xi32>\n"
           "  return %r, %t : tensor<2x2xi32>, tensor<4x1xi32>\n"
           "}\n"
           "func.func @main() -> (tensor<2x2xi32>, tensor<4x1xi32>, tensor<2x2xi32>, "
           "tensor<4x1xi32>) {\n"
           "  %a = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>\n"
           "  %b = stablehlo.constant dense<[[10, 20], [30, 40]]> : tensor<2x2xi32>\n"
           "  %r:4 = \"interpreter.run_parallel\"(%a, %b) {programs = [[@f], [@f]]} :\n"
           "     (tensor<2x2xi32>, tensor<2x2xi32>) -> (tensor<2x2xi32>, tensor<4x1xi32>, "
           "tensor<2x2xi32>, tensor<4x1xi32>)\n"
           "  return %r#0, %r#1, %r#2, %r#3 : tensor<2x2xi32>, tensor<4x1xi32>, "
           "tensor<2x2xi32>, tensor<4x1xi32>\n"
           "}\n",
           "(s32[2,2], s32[4,1], s32[2,2], s32[4,1]) ({ {11, 22}, {33, 44} }, "
           "{ {1}, {3}, {10}, {30} }, { {11, 22}, {33, 44} }, { {2}, {4}, {20}, {40} })");
    /* Different programs per device: replica 0 sends, replica 1 receives and adds the
     * infeed's value and its replica id. */
    EXPECT("func.func @snd(%x: tensor<2xi32>, %t: !stablehlo.token) -> !stablehlo.token {\n"
           "  %d = \"stablehlo.send\"(%x, %t) {channel_handle = "
           "#stablehlo.channel_handle<handle = 5, type = 2>, is_host_transfer = true} :\n"
           "     (tensor<2xi32>, !stablehlo.token) -> !stablehlo.token\n"
           "  return %d : !stablehlo.token\n"
           "}\n"
           "func.func @rcv(%t: !stablehlo.token) -> tensor<2xi32> {\n"
           "  %v, %d = \"stablehlo.recv\"(%t) {channel_handle = "
           "#stablehlo.channel_handle<handle = 5, type = 3>, is_host_transfer = true} :\n"
           "     (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)\n"
           "  %f, %d2 = \"stablehlo.infeed\"(%d) : (!stablehlo.token) -> (tensor<2xi32>, "
           "!stablehlo.token)\n"
           "  %id = stablehlo.replica_id : tensor<ui32>\n"
           "  %i = stablehlo.convert %id : (tensor<ui32>) -> tensor<i32>\n"
           "  %ib = stablehlo.broadcast_in_dim %i, dims = [] : (tensor<i32>) -> tensor<2xi32>\n"
           "  %s = stablehlo.add %v, %f : tensor<2xi32>\n"
           "  %s2 = stablehlo.add %s, %ib : tensor<2xi32>\n"
           "  return %s2 : tensor<2xi32>\n"
           "}\n"
           "func.func @q() -> tensor<2xi32> {\n"
           "  %c = stablehlo.constant dense<[100, 200]> : tensor<2xi32>\n"
           "  return %c : tensor<2xi32>\n"
           "}\n"
           "func.func @main() -> tensor<2xi32> {\n"
           "  %x = stablehlo.constant dense<[7, 8]> : tensor<2xi32>\n"
           "  %t = stablehlo.after_all : !stablehlo.token\n"
           "  %r:2 = \"interpreter.run_parallel\"(%x, %t, %t) {infeed = [@q],\n"
           "     programs = [[@snd], [@rcv]]} :\n"
           "     (tensor<2xi32>, !stablehlo.token, !stablehlo.token) -> (!stablehlo.token, "
           "tensor<2xi32>)\n"
           "  return %r#1 : tensor<2xi32>\n"
           "}\n",
           "s32[2] {108, 209}");
}

/* bitcast_convert with StableHLO's one-bit i1 (bit i of an element at index i of the new
 * minor dimension) and between complex<f64> and two complex<f32> (the bytes of the
 * (real, imaginary) pair; little-endian halves, as NumPy's .view gives). */
static void test_bitcast_convert(void) {
    static const char *kSplit = "func.func @main() -> tensor<2x8xi1> {\n"
                                "  %a = stablehlo.constant dense<[5, -128]> : tensor<2xi8>\n"
                                "  %0 = stablehlo.bitcast_convert %a : (tensor<2xi8>) -> "
                                "tensor<2x8xi1>\n"
                                "  return %0 : tensor<2x8xi1>\n}\n";
    EXPECT(kSplit, "pred[2,8] {{1, 0, 1, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 1}}");
    /* and back */
    EXPECT("func.func @main() -> tensor<2xi8> {\n"
           "  %a = stablehlo.constant dense<[5, -128]> : tensor<2xi8>\n"
           "  %0 = stablehlo.bitcast_convert %a : (tensor<2xi8>) -> tensor<2x8xi1>\n"
           "  %1 = stablehlo.bitcast_convert %0 : (tensor<2x8xi1>) -> tensor<2xi8>\n"
           "  return %1 : tensor<2xi8>\n}\n",
           "s8[2] {5, -128}");
    /* bits 0 and 15: 0x8001 */
    EXPECT("func.func @main() -> tensor<i16> {\n"
           "  %b = stablehlo.constant dense<[true, false, false, false, false, false, false, "
           "false, false, false, false, false, false, false, false, true]> : tensor<16xi1>\n"
           "  %0 = stablehlo.bitcast_convert %b : (tensor<16xi1>) -> tensor<i16>\n"
           "  return %0 : tensor<i16>\n}\n",
           "s16[] -32767");
    /* f32 1.0 is 0x3F800000: bits 23 to 29 */
    EXPECT("func.func @main() -> tensor<32xi1> {\n"
           "  %a = stablehlo.constant dense<1.0> : tensor<f32>\n"
           "  %0 = stablehlo.bitcast_convert %a : (tensor<f32>) -> tensor<32xi1>\n"
           "  return %0 : tensor<32xi1>\n}\n",
           "pred[32] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, "
           "1, 1, 1, 1, 1, 0, 0}");
    /* (0x0123456789ABCDEF, 0x11111111) -> [(0x89ABCDEF, 0x01234567), (0x11111111, 0)],
     * read back as u32 */
    EXPECT("func.func @main() -> tensor<2x2xui32> {\n"
           "  %a = stablehlo.constant dense<(0x0123456789ABCDEF, 0x0000000011111111)> : "
           "tensor<complex<f64>>\n"
           "  %0 = stablehlo.bitcast_convert %a : (tensor<complex<f64>>) -> "
           "tensor<2xcomplex<f32>>\n"
           "  %r = stablehlo.real %0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>\n"
           "  %i = stablehlo.imag %0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>\n"
           "  %ru = stablehlo.bitcast_convert %r : (tensor<2xf32>) -> tensor<2xui32>\n"
           "  %iu = stablehlo.bitcast_convert %i : (tensor<2xf32>) -> tensor<2xui32>\n"
           "  %rr = stablehlo.reshape %ru : (tensor<2xui32>) -> tensor<2x1xui32>\n"
           "  %ii = stablehlo.reshape %iu : (tensor<2xui32>) -> tensor<2x1xui32>\n"
           "  %c = stablehlo.concatenate %rr, %ii, dim = 1 : (tensor<2x1xui32>, "
           "tensor<2x1xui32>) -> tensor<2x2xui32>\n"
           "  return %c : tensor<2x2xui32>\n}\n",
           "u32[2,2] {{2309737967, 19088743}, {286331153, 0}}");
    /* NumPy: np.array([1.5, -2, 0.25, 3], np.float32).view(np.complex64).view(np.complex128) */
    EXPECT("func.func @main() -> tensor<complex<f64>> {\n"
           "  %b = stablehlo.constant dense<[(1.5, -2.0), (0.25, 3.0)]> : "
           "tensor<2xcomplex<f32>>\n"
           "  %0 = stablehlo.bitcast_convert %b : (tensor<2xcomplex<f32>>) -> "
           "tensor<complex<f64>>\n"
           "  return %0 : tensor<complex<f64>>\n}\n",
           "c128[] (-2.0000004749745131, 32.0000074505806)");
    const char *msg = parse_error("func.func @main() -> tensor<i16> {\n"
                                  "  %b = stablehlo.constant dense<true> : tensor<8xi1>\n"
                                  "  %0 = stablehlo.bitcast_convert %b : (tensor<8xi1>) -> "
                                  "tensor<i16>\n"
                                  "  return %0 : tensor<i16>\n}\n");
    CHECK_MSG(strstr(msg, "last i1 dimension of size 16"), "got: %s", msg);
}

/* Malformed programs found by auditing the converter: each is a clear error at the op. */
static void test_malformed_input(void) {
    /* reduce with `applies` and no operands: the init value's type was read from an unset
     * operand slot */
    const char *msg = parse_error("func.func @main() -> tensor<f32> {\n"
                                  "  %0 = stablehlo.reduce() applies stablehlo.add across "
                                  "dimensions = [0] : () -> tensor<f32>\n"
                                  "  return %0 : tensor<f32>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:2:8: in function 'main', operation 'stablehlo.reduce'") &&
                  strstr(msg, "init values"),
              "got: %s", msg);
    /* `applies` that is not an op name: its (absent) text was read */
    msg = parse_error("func.func @main() -> tensor<f32> {\n"
                      "  %a = stablehlo.constant dense<1.0> : tensor<2xf32>\n"
                      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
                      "  %0 = \"stablehlo.reduce\"(%a, %z) {applies = 1, dimensions = "
                      "array<i64: 0>} : (tensor<2xf32>, tensor<f32>) -> tensor<f32>\n"
                      "  return %0 : tensor<f32>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:4:8: in function 'main', operation 'stablehlo.reduce'") &&
                  strstr(msg, "applies"),
              "got: %s", msg);
    /* sort without operands or dimension: the rank of an unset operand slot was read */
    msg = parse_error("func.func @main() -> tensor<f32> {\n"
                      "  %0 = \"stablehlo.sort\"() ({\n"
                      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
                      "    %p = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> "
                      "tensor<i1>\n"
                      "    stablehlo.return %p : tensor<i1>\n"
                      "  }) : () -> tensor<f32>\n"
                      "  return %0 : tensor<f32>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:2:8: in function 'main', operation 'stablehlo.sort'") &&
                  strstr(msg, "at least one operand"),
              "got: %s", msg);
    /* get_tuple_element written without a result: the result name (NULL) was bound */
    msg = parse_error("func.func @main() -> tensor<f32> {\n"
                      "  %a = stablehlo.constant dense<1.0> : tensor<f32>\n"
                      "  %t = stablehlo.tuple %a : tuple<tensor<f32>>\n"
                      "  \"stablehlo.get_tuple_element\"(%t) {index = 0 : i32} : "
                      "(tuple<tensor<f32>>) -> ()\n"
                      "  return %a : tensor<f32>\n}\n");
    CHECK_MSG(
        strstr(msg, "bad.mlir:4:3: in function 'main', operation 'stablehlo.get_tuple_element'") &&
            strstr(msg, "fewer results"),
        "got: %s", msg);
    /* a one-operand op given two: it failed without a message (the module then had no
     * entry and the error named no op) */
    msg = parse_error("func.func @main() -> tensor<f32> {\n"
                      "  %a = stablehlo.constant dense<1.0> : tensor<f32>\n"
                      "  %0 = \"stablehlo.convert\"(%a, %a) : (tensor<f32>, tensor<f32>) -> "
                      "tensor<f32>\n"
                      "  return %0 : tensor<f32>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:3:8: in function 'main', operation 'stablehlo.convert'") &&
                  strstr(msg, "expected 1 operand"),
              "got: %s", msg);
    msg = parse_error("func.func @main() -> tensor<f32> {\n"
                      "  %a = stablehlo.constant dense<1.0> : tensor<f32>\n"
                      "  %0 = \"chlo.erfc\"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
                      "  return %0 : tensor<f32>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:3:8: in function 'main', operation 'chlo.erfc'") &&
                  strstr(msg, "expected 1 operand"),
              "got: %s", msg);
    /* collective_permute without a result type: the (absent) first result type was read */
    msg = parse_error("func.func @main() -> tensor<f32> {\n"
                      "  %a = stablehlo.constant dense<1.0> : tensor<f32>\n"
                      "  \"stablehlo.collective_permute\"(%a) {source_target_pairs = "
                      "dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<f32>) -> ()\n"
                      "  return %a : tensor<f32>\n}\n");
    CHECK_MSG(
        strstr(msg, "bad.mlir:3:3: in function 'main', operation 'stablehlo.collective_permute'") &&
            strstr(msg, "expected one result type"),
        "got: %s", msg);
    /* an integer list given as a dense value whose element count overflows (the count
     * wrapped to a small number) */
    msg = parse_error("func.func @main() -> tensor<2x3xf32> {\n"
                      "  %a = stablehlo.constant dense<1.0> : tensor<3x2xf32>\n"
                      "  %0 = \"stablehlo.transpose\"(%a) {permutation = dense<1> : "
                      "tensor<4294967296x4294967296xi64>} : (tensor<3x2xf32>) -> "
                      "tensor<2x3xf32>\n"
                      "  return %0 : tensor<2x3xf32>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:3:8: in function 'main', operation 'stablehlo.transpose'") &&
                  strstr(msg, "overflows"),
              "got: %s", msg);
    /* a run_parallel program that runs itself: each level converted in a new converter,
     * without end (stack overflow) */
    msg = parse_error("func.func @f() -> tensor<f32> {\n"
                      "  %0 = \"interpreter.run_parallel\"() {programs = [[@f]]} : () -> "
                      "tensor<f32>\n"
                      "  return %0 : tensor<f32>\n}\n"
                      "func.func @main() -> tensor<f32> {\n"
                      "  %0 = \"interpreter.run_parallel\"() {programs = [[@f]]} : () -> "
                      "tensor<f32>\n"
                      "  return %0 : tensor<f32>\n}\n");
    CHECK_MSG(strstr(msg, "bad.mlir:2:8: in function 'f', operation 'interpreter.run_parallel'") &&
                  strstr(msg, "nested"),
              "got: %s", msg);
    /* a chain of 100 calls (a 64 KiB text holds hundreds; each level takes tens of KiB of
     * stack) */
    size_t cap = 200 * 128, len = 0;
    char *chain = malloc(cap);
    CHECK(chain != NULL);
    if (!chain) return;
    for (int i = 0; i < 100; i++)
        len += (size_t)snprintf(chain + len, cap - len,
                                "func.func @f%d() -> tensor<f32> {\n"
                                "  %%0 = func.call @f%d() : () -> tensor<f32>\n"
                                "  return %%0 : tensor<f32>\n}\n",
                                i, i + 1);
    snprintf(chain + len, cap - len,
             "func.func @f100() -> tensor<f32> {\n"
             "  %%0 = stablehlo.constant dense<1.0> : tensor<f32>\n"
             "  return %%0 : tensor<f32>\n}\n"
             "func.func @main() -> tensor<f32> {\n"
             "  %%0 = func.call @f0() : () -> tensor<f32>\n"
             "  return %%0 : tensor<f32>\n}\n");
    msg = parse_error(chain);
    free(chain);
    CHECK_MSG(strstr(msg, "operation 'func.call' (%0): regions and calls nested more than"),
              "got: %s", msg);
}

TEST_MAIN(TEST(test_errors_have_line_and_column), TEST(test_types), TEST(test_dense),
          TEST(test_elementwise), TEST(test_shapes), TEST(test_reduce_and_windows),
          TEST(test_gather_scatter), TEST(test_linalg), TEST(test_control_flow), TEST(test_checks),
          TEST(test_fmt_prints_hlo), TEST(test_run_parallel), TEST(test_bitcast_convert),
          TEST(test_malformed_input), TEST(test_chlo_next_after_erfc), TEST(test_chlo_sinh_cosh))
