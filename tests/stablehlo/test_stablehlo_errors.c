/* StableHLO errors in the user's terms: a verifier failure on the converted module names
 * the file, the user's line:column, function, operation and %value, with StableHLO types,
 * and none of the converter's own names (main.1, add.4); so do the front end's errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxla/stablehlo.h"
#include "harness.h"

/* The error of parsing |text| as bad.mlir (a copy the caller frees; "" on success). */
static char *error_of(const char *text) {
    cxla_module *m = NULL;
    cxla_status st = cxla_stablehlo_parse(text, strlen(text), "bad.mlir", &m, NULL);
    CHECK_MSG(st != NULL, "parsed, but it should fail:\n%s", text);
    CHECK(m == NULL);
    const char *text_of = st ? cxla_status_message(st) : "";
    char *msg = malloc(strlen(text_of) + 1);
    if (msg) memcpy(msg, text_of, strlen(text_of) + 1);
    cxla_status_free(st);
    cxla_module_destroy(m);
    return msg;
}

/* No name the converter made (computation 'main.1', instruction 'add.4'), nor its
 * wording or HLO shapes, leaks into |msg|. */
static void expect_user_terms(const char *msg, int line) {
    static const char *const leaks[] = {".1'",           ".2'",           ".3'",       ".4'",
                                        "computation '", "instruction '", "converted", "f32[",
                                        "s32[",          "pred["};
    for (size_t i = 0; i < sizeof leaks / sizeof leaks[0]; i++)
        if (strstr(msg, leaks[i]))
            test_fail(__FILE__, line, "the message has \"%s\": %s", leaks[i], msg);
}

static void expect_exact(const char *text, const char *want, int line) {
    char *msg = error_of(text);
    if (msg && strcmp(msg, want) != 0)
        test_fail(__FILE__, line, "got:\n  %s\nwanted:\n  %s", msg, want);
    if (msg) expect_user_terms(msg, line);
    free(msg);
}
#define EXPECT_ERROR(text, want) expect_exact(text, want, __LINE__)

static void test_verifier_errors_in_main(void) {
    EXPECT_ERROR("func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n"
                 "  %c = stablehlo.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> "
                 "tensor<2xf32>\n"
                 "  return %c : tensor<2xf32>\n"
                 "}\n",
                 "bad.mlir:2:8: in function 'main', operation 'stablehlo.add' (%c): operands "
                 "must have the same dimensions, got tensor<2xf32> and tensor<3xf32>");
    /* the third op of the function, a declared type that is not the inferred one */
    EXPECT_ERROR("func.func @main(%a: tensor<2x3xf32>) -> tensor<3x3xf32> {\n"
                 "  %b = stablehlo.negate %a : tensor<2x3xf32>\n"
                 "  %c = stablehlo.abs %b : tensor<2x3xf32>\n"
                 "    %d = stablehlo.multiply %b, %c : (tensor<2x3xf32>, tensor<2x3xf32>) -> "
                 "tensor<3x3xf32>\n"
                 "  return %d : tensor<3x3xf32>\n"
                 "}\n",
                 "bad.mlir:4:10: in function 'main', operation 'stablehlo.multiply' (%d): "
                 "declared shape tensor<3x3xf32> differs from the inferred tensor<2x3xf32> "
                 "(operands: tensor<2x3xf32>, tensor<2x3xf32>)");
    /* i1, ui8 and complex element types as StableHLO writes them */
    EXPECT_ERROR("func.func @main(%a: tensor<2xi1>, %b: tensor<3xi1>) -> tensor<2xi1> {\n"
                 "  %c = stablehlo.and %a, %b : (tensor<2xi1>, tensor<3xi1>) -> tensor<2xi1>\n"
                 "  return %c : tensor<2xi1>\n"
                 "}\n",
                 "bad.mlir:2:8: in function 'main', operation 'stablehlo.and' (%c): operands "
                 "must have the same dimensions, got tensor<2xi1> and tensor<3xi1>");
    EXPECT_ERROR("func.func @main(%a: tensor<4xui8>, %b: tensor<1xui8>) -> tensor<4xui8> {\n"
                 "  %c = stablehlo.maximum %a, %b : (tensor<4xui8>, tensor<1xui8>) -> "
                 "tensor<4xui8>\n"
                 "  return %c : tensor<4xui8>\n"
                 "}\n",
                 "bad.mlir:2:8: in function 'main', operation 'stablehlo.maximum' (%c): "
                 "operands must have the same dimensions, got tensor<4xui8> and tensor<1xui8>");
    EXPECT_ERROR("func.func @main(%a: tensor<2xcomplex<f32>>, %b: tensor<3xcomplex<f32>>) -> "
                 "tensor<2xcomplex<f32>> {\n"
                 "  %c = stablehlo.subtract %a, %b : (tensor<2xcomplex<f32>>, "
                 "tensor<3xcomplex<f32>>) -> tensor<2xcomplex<f32>>\n"
                 "  return %c : tensor<2xcomplex<f32>>\n"
                 "}\n",
                 "bad.mlir:2:8: in function 'main', operation 'stablehlo.subtract' (%c): "
                 "operands must have the same dimensions, got tensor<2xcomplex<f32>> and "
                 "tensor<3xcomplex<f32>>");
}

static void test_verifier_errors_in_regions_and_calls(void) {
    /* a function other than main, called from main */
    EXPECT_ERROR("func.func private @helper(%x: tensor<2xi32>, %y: tensor<3xi32>) -> "
                 "tensor<2xi32> {\n"
                 "  %s = stablehlo.subtract %x, %y : (tensor<2xi32>, tensor<3xi32>) -> "
                 "tensor<2xi32>\n"
                 "  return %s : tensor<2xi32>\n"
                 "}\n"
                 "func.func @main(%a: tensor<2xi32>, %b: tensor<3xi32>) -> tensor<2xi32> {\n"
                 "  %r = func.call @helper(%a, %b) : (tensor<2xi32>, tensor<3xi32>) -> "
                 "tensor<2xi32>\n"
                 "  return %r : tensor<2xi32>\n"
                 "}\n",
                 "bad.mlir:2:8: in function 'helper', operation 'stablehlo.subtract' (%s): "
                 "operands must have the same dimensions, got tensor<2xi32> and tensor<3xi32>");
    /* a reduce body */
    EXPECT_ERROR(
        "func.func @main(%a: tensor<4xf32>) -> tensor<f32> {\n"
        "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "  %r = stablehlo.reduce(%a init: %z) across dimensions = [0] : (tensor<4xf32>, "
        "tensor<f32>) -> tensor<f32>\n"
        "   reducer(%p: tensor<f32>, %q: tensor<f32>) {\n"
        "    %k = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
        "    %m = stablehlo.maximum %p, %k : (tensor<f32>, tensor<2xf32>) -> tensor<f32>\n"
        "    stablehlo.return %m : tensor<f32>\n"
        "  }\n"
        "  return %r : tensor<f32>\n"
        "}\n",
        "bad.mlir:6:10: in function 'main', operation 'stablehlo.maximum' (%m), in a region of "
        "'stablehlo.reduce' (%r): operands must have the same dimensions, got tensor<f32> and "
        "tensor<2xf32>");
    /* a while body, in a function called from main */
    EXPECT_ERROR("func.func private @count() -> tensor<i32> {\n"
                 "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
                 "  %one = stablehlo.constant dense<[1, 1]> : tensor<2xi32>\n"
                 "  %ten = stablehlo.constant dense<10> : tensor<i32>\n"
                 "  %w = stablehlo.while(%i = %zero) : tensor<i32>\n"
                 "   cond {\n"
                 "    %lt = stablehlo.compare LT, %i, %ten : (tensor<i32>, tensor<i32>) -> "
                 "tensor<i1>\n"
                 "    stablehlo.return %lt : tensor<i1>\n"
                 "  } do {\n"
                 "    %n = stablehlo.add %i, %one : (tensor<i32>, tensor<2xi32>) -> tensor<i32>\n"
                 "    stablehlo.return %n : tensor<i32>\n"
                 "  }\n"
                 "  return %w : tensor<i32>\n"
                 "}\n"
                 "func.func @main() -> tensor<i32> {\n"
                 "  %0 = func.call @count() : () -> tensor<i32>\n"
                 "  return %0 : tensor<i32>\n"
                 "}\n",
                 "bad.mlir:10:10: in function 'count', operation 'stablehlo.add' (%n), in a "
                 "region of 'stablehlo.while' (%w): operands must have the same dimensions, got "
                 "tensor<i32> and tensor<2xi32>");
}

/* The front end's own errors name the op the same way. */
static void test_front_end_errors(void) {
    EXPECT_ERROR("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                 "  %c = stablehlo.frobnicate %a : tensor<2xf32>\n"
                 "  return %c : tensor<2xf32>\n"
                 "}\n",
                 "bad.mlir:2:8: in function 'main', operation 'stablehlo.frobnicate' (%c): "
                 "unknown operation (cxla does not convert it)");
    EXPECT_ERROR("func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {\n"
                 "  %c = stablehlo.reshape %a : (tensor<2xf32>) -> tensor<3xf32>\n"
                 "  return %c : tensor<3xf32>\n"
                 "}\n",
                 "bad.mlir:2:8: in function 'main', operation 'stablehlo.reshape' (%c): "
                 "element counts differ: tensor<2xf32> has 2, tensor<3xf32> has 3");
    EXPECT_ERROR("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                 "  %c = stablehlo.add %a, %zz : tensor<2xf32>\n"
                 "  return %c : tensor<2xf32>\n"
                 "}\n",
                 "bad.mlir:2:8: in function 'main', operation 'stablehlo.add' (%c): use of "
                 "undefined value %zz");
    /* what a function returns against its type, at the return */
    EXPECT_ERROR("func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {\n"
                 "  %b = stablehlo.negate %a : tensor<2xf32>\n"
                 "  return %b : tensor<2xf32>\n"
                 "}\n",
                 "bad.mlir:3:3: in function 'main', operation 'func.return': result 0 is "
                 "tensor<2xf32>, but @main's type says tensor<3xf32>");
}

TEST_MAIN(TEST(test_verifier_errors_in_main), TEST(test_verifier_errors_in_regions_and_calls),
          TEST(test_front_end_errors))
