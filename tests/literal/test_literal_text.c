/* Literal text: XLA's printed form of every element type, rank and tuple, round trips
 * (bit for bit, NaN payloads included), and every class of parse error. */
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "literal/literal_internal.h"
#include "shape/shape_internal.h"

/* ---- helpers ------------------------------------------------------------------------ */

static cxla_shape *shape_of(const char *text) {
    cxla_shape *shape = NULL;
    CHECK_OK(cxla_shape_parse(text, (size_t)-1, &shape));
    return shape;
}

/* A literal of |shape_text| holding |data| (its raw bytes, in the shape's layout). */
static cxla_literal *from_bytes(const char *shape_text, const void *data, size_t size) {
    cxla_shape *shape = shape_of(shape_text);
    if (!shape) return NULL;
    cxla_literal *lit = NULL;
    CHECK_OK(cxla_literal_create(shape, &lit));
    cxla_shape_free(shape);
    if (!lit) return NULL;
    CHECK_EQ_I64(cxla_literal_byte_size(lit), size);
    if (size && cxla_literal_byte_size(lit) == size) memcpy(cxla_literal_data(lit), data, size);
    return lit;
}

/* Same shapes and the same bytes, recursively. */
static bool same_bits(const cxla_literal *a, const cxla_literal *b) {
    if (!a || !b) return false;
    if (!cxla_shape_equal(cxla_literal_shape(a), cxla_literal_shape(b))) return false;
    if (cxla_literal_shape(a)->type == CXLA_TUPLE) {
        if (cxla_literal_tuple_count(a) != cxla_literal_tuple_count(b)) return false;
        for (int64_t i = 0; i < cxla_literal_tuple_count(a); i++)
            if (!same_bits(cxla_literal_tuple_element_const(a, i),
                           cxla_literal_tuple_element_const(b, i)))
                return false;
        return true;
    }
    size_t n = cxla_literal_byte_size(a);
    if (n != cxla_literal_byte_size(b)) return false;
    return n == 0 || memcmp(cxla_literal_data_const(a), cxla_literal_data_const(b), n) == 0;
}

static cxla_literal *parse_ok(const char *text, const cxla_shape *shape) {
    cxla_literal *lit = NULL;
    cxla_status s = cxla_literal_parse(text, strlen(text), shape, &lit);
    if (s) {
        test_fail(__FILE__, __LINE__, "parsing \"%s\" failed: %s", text, cxla_status_message(s));
        cxla_status_free(s);
        return NULL;
    }
    return lit;
}

/* parse(print(lit)) == lit bitwise: the value alone read with the literal's shape, and
 * the shape-prefixed form (with layout) read with none. */
static void check_round_trip(const cxla_literal *lit) {
    char *text = cxla_literal_to_string(lit, CXLA_LITERAL_PRINT_DEFAULT);
    CHECK(text != NULL);
    if (!text) return;
    cxla_literal *back = parse_ok(text, cxla_literal_shape(lit));
    CHECK_MSG(same_bits(lit, back), "round trip of \"%s\" differs", text);
    cxla_literal_free(back);
    free(text);
    text = cxla_literal_to_string(lit, CXLA_LITERAL_PRINT_SHAPE | CXLA_LITERAL_PRINT_LAYOUT);
    back = parse_ok(text, NULL);
    CHECK_MSG(same_bits(lit, back), "round trip of \"%s\" differs", text);
    cxla_literal_free(back);
    free(text);
}

/* Prints the literal of |shape_text| holding |data|, compares, and round-trips it. */
static void check_print_bytes(const char *shape_text, const void *data, size_t size,
                              const char *expected, int line) {
    cxla_literal *lit = from_bytes(shape_text, data, size);
    if (!lit) return;
    char *text = cxla_literal_to_string(lit, CXLA_LITERAL_PRINT_DEFAULT);
    if (!text || strcmp(text, expected) != 0)
        test_fail(__FILE__, line, "%s:\n  got:      %s\n  expected: %s", shape_text,
                  text ? text : "(null)", expected);
    free(text);
    check_round_trip(lit);
    cxla_literal_free(lit);
}

#define CHECK_PRINT(shape_text, ctype, expected, ...)                                              \
    check_print_bytes(shape_text, (const ctype[]){__VA_ARGS__},                                    \
                      sizeof((const ctype[]){__VA_ARGS__}), expected, __LINE__)

/* Parses |text| (shape first) and checks how it prints, with and without the shape. */
static void check_reprint(const char *text, const char *expected, const char *expected_shape,
                          int line) {
    cxla_literal *lit = parse_ok(text, NULL);
    if (!lit) return;
    char *a = cxla_literal_to_string(lit, CXLA_LITERAL_PRINT_DEFAULT);
    char *b = cxla_literal_to_string(lit, CXLA_LITERAL_PRINT_SHAPE);
    if (!a || strcmp(a, expected) != 0)
        test_fail(__FILE__, line, "%s:\n  got:      %s\n  expected: %s", text, a ? a : "(null)",
                  expected);
    if (expected_shape && (!b || strcmp(b, expected_shape) != 0))
        test_fail(__FILE__, line, "%s with shape:\n  got:      %s\n  expected: %s", text,
                  b ? b : "(null)", expected_shape);
    free(a);
    free(b);
    check_round_trip(lit);
    cxla_literal_free(lit);
}

#define CHECK_REPRINT(text, expected) check_reprint(text, expected, NULL, __LINE__)
#define CHECK_REPRINT2(text, expected, with_shape)                                                 \
    check_reprint(text, expected, with_shape, __LINE__)

/* Parsing |text| (shape first when |shape_text| is NULL) fails with a message holding
 * each of the fragments. */
static void check_error(const char *shape_text, const char *text, const char *frag1,
                        const char *frag2, int line) {
    cxla_shape *shape = shape_text ? shape_of(shape_text) : NULL;
    cxla_literal *lit = NULL;
    cxla_status s = cxla_literal_parse(text, strlen(text), shape, &lit);
    cxla_shape_free(shape);
    if (!s) {
        test_fail(__FILE__, line, "\"%s\" parsed, expected an error", text);
        cxla_literal_free(lit);
        return;
    }
    const char *m = cxla_status_message(s);
    if (frag1 && !strstr(m, frag1))
        test_fail(__FILE__, line, "error for \"%s\" lacks \"%s\": %s", text, frag1, m);
    if (frag2 && !strstr(m, frag2))
        test_fail(__FILE__, line, "error for \"%s\" lacks \"%s\": %s", text, frag2, m);
    if (!strstr(m, "line ") || !strstr(m, "column ") || !strchr(m, '^'))
        test_fail(__FILE__, line, "error for \"%s\" has no position: %s", text, m);
    cxla_status_free(s);
}

#define CHECK_PARSE_ERROR(shape_text, text, frag1, frag2)                                          \
    check_error(shape_text, text, frag1, frag2, __LINE__)

/* ---- printing every element type ------------------------------------------------------ */

static void test_print_integers(void) {
    CHECK_PRINT("pred[4]", uint8_t, "{1, 0, 0, 1}", 1, 0, 0, 1);
    CHECK_PRINT("pred[]", uint8_t, "true", 1);
    CHECK_PRINT("pred[]", uint8_t, "false", 0);
    CHECK_PRINT("s1[2]", int8_t, "{-1, 0}", -1, 0);
    CHECK_PRINT("s2[4]", int8_t, "{-2, -1, 0, 1}", -2, -1, 0, 1);
    CHECK_PRINT("s4[3]", int8_t, "{-8, 0, 7}", -8, 0, 7);
    CHECK_PRINT("s8[3]", int8_t, "{-128, 0, 127}", -128, 0, 127);
    CHECK_PRINT("s16[2]", int16_t, "{-32768, 32767}", -32768, 32767);
    CHECK_PRINT("s32[2]", int32_t, "{-2147483648, 2147483647}", INT32_MIN, INT32_MAX);
    CHECK_PRINT("s64[3]", int64_t, "{-9223372036854775808, 9223372036854775807, -1}", INT64_MIN,
                INT64_MAX, -1);
    CHECK_PRINT("u1[2]", uint8_t, "{0, 1}", 0, 1);
    CHECK_PRINT("u2[2]", uint8_t, "{0, 3}", 0, 3);
    CHECK_PRINT("u4[2]", uint8_t, "{0, 15}", 0, 15);
    CHECK_PRINT("u8[2]", uint8_t, "{0, 255}", 0, 255);
    CHECK_PRINT("u16[2]", uint16_t, "{0, 65535}", 0, 65535);
    CHECK_PRINT("u32[2]", uint32_t, "{0, 4294967295}", 0, UINT32_MAX);
    CHECK_PRINT("u64[2]", uint64_t, "{0, 18446744073709551615}", 0, UINT64_MAX);
    CHECK_PRINT("s32[]", int32_t, "-7", -7);
}

static void test_print_f32_f64(void) {
    /* %.6g when it reads back, else %.9g; specials; payloads as nan(0x..). */
    CHECK_PRINT("f32[7]", uint32_t,
                "{0.1, 1.00000012, 3.40282347e+38, 1.4013e-45, 1.17549435e-38, -0, 8388609}",
                0x3dcccccd, 0x3f800001, 0x7f7fffff, 0x00000001, 0x00800000, 0x80000000, 0x4b000001);
    CHECK_PRINT("f32[7]", uint32_t,
                "{inf, -inf, nan, -nan, nan(0x1), nan(0x7fffff), -nan(0x400001)}", 0x7f800000,
                0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7fffffff, 0xffc00001);
    CHECK_PRINT("f32[4]", float, "{1, -2.5, 1e+10, 123456}", 1.0f, -2.5f, 1e10f, 123456.0f);
    CHECK_PRINT("f32[]", float, "0.333333343", 1.0f / 3.0f);
    CHECK_PRINT("f64[6]", double,
                "{0.1, 0.33333333333333331, 1.7976931348623157e+308, 4.94065645841247e-324, -0, "
                "1e+100}",
                0.1, 1.0 / 3.0, 1.7976931348623157e308, 4.9406564584124654e-324, -0.0, 1e100);
    CHECK_PRINT("f64[6]", uint64_t, "{inf, -inf, nan, -nan, nan(0x1), nan(0x8000000000001)}",
                0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7ff8000000000000ull,
                0xfff8000000000000ull, 0x7ff0000000000001ull, 0x7ff8000000000001ull);
    CHECK_PRINT("f64[]", double, "2.2250738585072014e-308", 2.2250738585072014e-308);
}

static void test_print_f16_bf16(void) {
    /* %.5g for f16, %.4g for bf16 (max_digits10), no round-trip search. */
    CHECK_PRINT("f16[12]", uint16_t,
                "{65504, -65504, 6.1035e-05, 5.9605e-08, inf, -inf, nan, -nan, nan(0x1), -0, "
                "0.099976, 1}",
                0x7bff, 0xfbff, 0x0400, 0x0001, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0x8000,
                0x2e66, 0x3c00);
    CHECK_PRINT("bf16[9]", uint16_t,
                "{3.39e+38, 9.184e-41, 0.1001, inf, -nan, nan(0x1), -0, 0.334, 1.175e-38}", 0x7f7f,
                0x0001, 0x3dcd, 0x7f80, 0xffc0, 0x7f81, 0x8000, 0x3eab, 0x0080);
}

static void test_print_small_floats(void) {
    CHECK_PRINT("f8e5m2[12]", uint8_t,
                "{5.7e+04, 6.1e-05, 1.5e-05, inf, -inf, nan, -nan, nan(0x3), nan(0x1), -0, 1.5, "
                "0.25}",
                0x7b, 0x04, 0x01, 0x7c, 0xfc, 0x7e, 0xfe, 0x7f, 0x7d, 0x80, 0x3e, 0x34);
    CHECK_PRINT("f8e4m3[7]", uint8_t, "{240, inf, -inf, nan, nan(0x1), 0.00195, 1}", 0x77, 0x78,
                0xf8, 0x7c, 0x79, 0x01, 0x38);
    CHECK_PRINT("f8e4m3fn[7]", uint8_t, "{448, -448, nan, -nan, 0.00195, -0, 1.5}", 0x7e, 0xfe,
                0x7f, 0xff, 0x01, 0x80, 0x3c);
    /* fnuz: one NaN, 0x80, which XLA prints as -nan (its sign bit is set). */
    CHECK_PRINT("f8e4m3b11fnuz[5]", uint8_t, "{30, -30, -nan, 0.000122, 0}", 0x7f, 0xff, 0x80, 0x01,
                0x00);
    CHECK_PRINT("f8e3m4[7]", uint8_t, "{15.5, inf, -inf, nan, nan(0x1), 0.0156, 1}", 0x6f, 0x70,
                0xf0, 0x78, 0x71, 0x01, 0x30);
    CHECK_PRINT("f8e5m2fnuz[4]", uint8_t, "{5.7e+04, -5.7e+04, -nan, 7.6e-06}", 0x7f, 0xff, 0x80,
                0x01);
    CHECK_PRINT("f8e4m3fnuz[4]", uint8_t, "{240, -nan, 0.000977, 1}", 0x7f, 0x80, 0x01, 0x40);
    /* e8m0fnu: 2^-127 needs 4 digits to read back (XLA's 2 digits give 5.9e-39 = 0x01). */
    CHECK_PRINT("f8e8m0fnu[6]", uint8_t, "{1, 1.7e+38, 5.877e-39, nan, 2, 1.2e-38}", 0x7f, 0xfe,
                0x00, 0xff, 0x80, 0x01);
    CHECK_PRINT("f4e2m1fn[9]", uint8_t, "{6, -6, 0.5, -0, 1, 1.5, 2, 3, 4}", 0x7, 0xf, 0x1, 0x8,
                0x2, 0x3, 0x4, 0x5, 0x6);
}

static void test_print_complex(void) {
    CHECK_PRINT("c64[2]", float, "{(1, -2.5), (nan, -inf)}", 1.0f, -2.5f, NAN, -INFINITY);
    CHECK_PRINT("c64[]", float, "(0.1, 1.00000012)", 0.1f, 1.00000012f);
    CHECK_PRINT("c128[2]", double, "{(0.1, -0), (0.33333333333333331, 1e-300)}", 0.1, -0.0,
                1.0 / 3.0, 1e-300);
    CHECK_PRINT("c128[]", uint64_t, "(nan(0x1), -nan)", 0x7ff0000000000001ull,
                0xfff8000000000000ull);
}

/* ---- ranks, layouts, tuples, tokens, shapes -------------------------------------------- */

static void test_print_ranks(void) {
    CHECK_PRINT("f32[]", float, "1", 1.0f);
    CHECK_PRINT("s32[3]", int32_t, "{1, 2, 3}", 1, 2, 3);
    CHECK_PRINT("s32[1]", int32_t, "{7}", 7);
    CHECK_PRINT("s32[2,2]", int32_t, "{ { 1, 2 }, { 3, 4 } }", 1, 2, 3, 4);
    CHECK_PRINT("s32[2,1]", int32_t, "{ {1}, {2} }", 1, 2);
    CHECK_PRINT("s32[1,3]", int32_t, "{ { 1, 2, 3 } }", 1, 2, 3);
    CHECK_PRINT("s32[2,1,2]", int32_t, "{ { { 1, 2 } }, { { 3, 4 } } }", 1, 2, 3, 4);
    CHECK_PRINT("s32[2,1,1,2]", int32_t,
                "{ { /*i0=0*/ { /*i1=0*/ { 1, 2 } } }, { /*i0=1*/ { /*i1=0*/ { 3, 4 } } } }", 1, 2,
                3, 4);
    CHECK_PRINT("s32[1,1,1,1,1]", int32_t, "{ { /*i0=0*/ { /*i1=0*/ { /*i2=0*/ {5} } } } }", 5);
    CHECK_PRINT("pred[2,2]", uint8_t, "{ { 1, 0 }, { 0, 1 } }", 1, 0, 0, 1);
    CHECK_PRINT("c64[1,2]", float, "{ { (1, 2), (3, 4) } }", 1, 2, 3, 4);
}

static void test_print_empty(void) {
    const struct {
        const char *shape, *text;
    } cases[] = {
        {"f32[0]", "{}"},
        {"f32[0,3]", "{  }"},
        {"f32[2,0]", "{ {}, {} }"},
        {"f32[2,0,3]", "{ {  }, {  } }"},
        {"f32[1,0,2,2]", "{ { /*i0=0*/ } }"},
        {"s8[1,1,0,2]", "{ { /*i0=0*/ { /*i1=0*/ } } }"},
        {"pred[0]", "{}"},
    };
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(cases); i++) {
        cxla_literal *lit = from_bytes(cases[i].shape, NULL, 0);
        if (!lit) continue;
        char *text = cxla_literal_to_string(lit, 0);
        CHECK_EQ_STR(text, cases[i].text);
        free(text);
        check_round_trip(lit);
        cxla_literal_free(lit);
    }
}

static void test_print_with_shape(void) {
    CHECK_REPRINT2("f32[2] {1, 2}", "{1, 2}", "f32[2] {1, 2}");
    CHECK_REPRINT2("f32[2]{0} {1, 2}", "{1, 2}", "f32[2] {1, 2}");
    CHECK_REPRINT2("f32[] 1.5", "1.5", "f32[] 1.5");
    CHECK_REPRINT2("pred[] false", "false", "pred[] false");
    CHECK_REPRINT2("s32[2,2] {{1,2},{3,4}}", "{ { 1, 2 }, { 3, 4 } }",
                   "s32[2,2] { { 1, 2 }, { 3, 4 } }");
    cxla_literal *lit = parse_ok("f32[2,3]{0,1} {{1,2,3},{4,5,6}}", NULL);
    if (lit) {
        char *s = cxla_literal_to_string(lit, CXLA_LITERAL_PRINT_SHAPE | CXLA_LITERAL_PRINT_LAYOUT);
        CHECK_EQ_STR(s, "f32[2,3]{0,1} { { 1, 2, 3 }, { 4, 5, 6 } }");
        free(s);
        s = cxla_literal_to_string(lit, CXLA_LITERAL_PRINT_LAYOUT); /* layout needs _SHAPE */
        CHECK_EQ_STR(s, "{ { 1, 2, 3 }, { 4, 5, 6 } }");
        free(s);
        cxla_literal_free(lit);
    }
    /* Dynamic shapes: XLA appends the sizes of the dimensions and prints the elements
     * below them (more in test_literal_dynamic.c). */
    CHECK_REPRINT2("f32[<=3] {1, 2, 3}", "{1, 2, 3}", "f32[<=3](3) {1, 2, 3}");
    CHECK_REPRINT2("f32[2,<=2](2,2) {{1,2},{3,4}}", "{ { 1, 2 }, { 3, 4 } }",
                   "f32[2,<=2](2,2) { { 1, 2 }, { 3, 4 } }");
    lit = parse_ok("f32[<=3](2) {1, 2}", NULL);
    if (lit) {
        char *s = cxla_literal_to_string(lit, CXLA_LITERAL_PRINT_SHAPE);
        CHECK_EQ_STR(s, "f32[<=3](2) {1, 2}");
        free(s);
        cxla_literal_free(lit);
    }
    CHECK_PARSE_ERROR(NULL, "f32[<=3](4) {1, 2}", "dynamic size '4' of dimension 0",
                      "line 1, column 10");
}

static void test_layout_order(void) {
    /* Values are written row-major whatever the layout; the bytes follow the layout. */
    cxla_shape *shape = shape_of("s32[2,3]{0,1}");
    cxla_literal *lit = shape ? parse_ok("{ { 1, 2, 3 }, { 4, 5, 6 } }", shape) : NULL;
    if (lit) {
        const int32_t *d = cxla_literal_data_const(lit);
        const int32_t want[6] = {1, 4, 2, 5, 3, 6};
        CHECK(memcmp(d, want, sizeof want) == 0);
        char *s = cxla_literal_to_string(lit, 0);
        CHECK_EQ_STR(s, "{ { 1, 2, 3 }, { 4, 5, 6 } }");
        free(s);
        check_round_trip(lit);
        int64_t idx[2] = {1, 0};
        int64_t v = 0;
        CHECK_OK(cxla_literal_get_s64(lit, idx, &v));
        CHECK_EQ_I64(v, 4);
    }
    cxla_literal_free(lit);
    cxla_shape_free(shape);
    /* Rank 3, a permuted layout. */
    shape = shape_of("s8[2,2,2]{1,2,0}");
    lit = shape ? parse_ok("{ { { 0, 1 }, { 2, 3 } }, { { 4, 5 }, { 6, 7 } } }", shape) : NULL;
    if (lit) {
        for (int64_t i = 0; i < 8; i++) {
            int64_t idx[3] = {i / 4, (i / 2) % 2, i % 2}, v = -1;
            CHECK_OK(cxla_literal_get_s64(lit, idx, &v));
            CHECK_EQ_I64(v, i);
        }
        check_round_trip(lit);
    }
    cxla_literal_free(lit);
    cxla_shape_free(shape);
}

static void test_tuples_and_tokens(void) {
    CHECK_REPRINT2("(f32[2], s32[]) ({1, 2}, 3)", "( {1, 2}, 3 )", "( f32[2] {1, 2}, s32[] 3 )");
    CHECK_REPRINT2("( f32[2] {1, 2}, s32[] 3 )", "( {1, 2}, 3 )", "( f32[2] {1, 2}, s32[] 3 )");
    CHECK_REPRINT2("()  ()", "(  )", "(  )");
    CHECK_REPRINT2("(  )", "(  )", "(  )");
    CHECK_REPRINT2("((s32[], (f32[1])), ()) ((1, ({2})), ())", "( ( 1, ( {2} ) ), (  ) )",
                   "( ( s32[] 1, ( f32[1] {2} ) ), (  ) )");
    CHECK_REPRINT2("( (s32[] 1, f32[1]{0} {2}), (  ) )", "( ( 1, {2} ), (  ) )",
                   "( ( s32[] 1, f32[1] {2} ), (  ) )");
    CHECK_REPRINT2("(f32[2,1], f32[2]) ( { {1}, {2} }, {2, 42} )", "( { {1}, {2} }, {2, 42} )",
                   "( f32[2,1] { {1}, {2} }, f32[2] {2, 42} )");
    CHECK_REPRINT2("token", "token", "token");
    CHECK_REPRINT2("token[] token", "token", "token");
    CHECK_REPRINT2("(token[], f32[]) (token, 1)", "( token, 1 )", "( token, f32[] 1 )");
    CHECK_REPRINT2("( token, f32[] 1 )", "( token, 1 )", "( token, f32[] 1 )");

    /* A tuple value for a given tuple shape, and the old style repeating the shape. */
    cxla_shape *shape = shape_of("(f32[2], f32[2])");
    if (shape) {
        cxla_literal *a = parse_ok("( {2, 1}, {3, 1} )", shape);
        cxla_literal *b = parse_ok("(f32[2], f32[2]) ({2, 1},{3,1})", shape);
        CHECK(a && b && same_bits(a, b));
        char *s = a ? cxla_literal_to_string(a, 0) : NULL;
        CHECK_EQ_STR(s, "( {2, 1}, {3, 1} )");
        free(s);
        cxla_literal_free(a);
        cxla_literal_free(b);
        CHECK_PARSE_ERROR("(f32[2], f32[2])", "(f32[3], f32[2]) ({2, 1, 0},{3,1})",
                          "does not match", "line 1, column 1");
        CHECK_PARSE_ERROR("(f32[2], f32[2])", "( {2, 1} )", "expects 2 elements in the tuple",
                          "column 10");
        CHECK_PARSE_ERROR("(f32[2], f32[2])", "( {2, 1}, {1, 2}, {3, 4} )",
                          "expects 2 elements in the tuple, but sees more", "column 17");
        CHECK_PARSE_ERROR("(f32[2], f32[2])", "( {2, 1} {1, 2} )", "expects ','", "column 10");
        CHECK_PARSE_ERROR("(f32[2], f32[2])", "{2, 1}", "expects '(' to start a tuple", "column 1");
        cxla_shape_free(shape);
    }
    shape = shape_of("token[]");
    if (shape) {
        cxla_literal *t = parse_ok("token", shape);
        CHECK(t && cxla_literal_shape(t)->type == CXLA_TOKEN);
        cxla_literal_free(t);
        CHECK_PARSE_ERROR("token[]", "1", "expects 'token'", "column 1");
        cxla_shape_free(shape);
    }
}

static void test_parse_forms(void) {
    /* Number spellings XLA's lexer accepts. */
    CHECK_REPRINT("f32[8] {1., .5, -.5e-3, 1e2, 1E+2, 2.5e-1, -0, 7}",
                  "{1, 0.5, -0.0005, 100, 100, 0.25, -0, 7}");
    CHECK_REPRINT("f64[3] {18446744073709551615, -9223372036854775809, 0.1}",
                  "{1.8446744073709552e+19, -9.2233720368547758e+18, 0.1}");
    CHECK_REPRINT("bf16[] 1", "1");
    CHECK_REPRINT("f16[2] {65519, -1e-9}", "{65504, -0}");
    CHECK_REPRINT("u64[] 18446744073709551615", "18446744073709551615");
    CHECK_REPRINT("s64[2] {-9223372036854775808, 9223372036854775807}",
                  "{-9223372036854775808, 9223372036854775807}");
    CHECK_REPRINT("u8[2] {-0, 255}", "{0, 255}");
    CHECK_REPRINT("pred[4] {true, false, 1, 0}", "{1, 0, 1, 0}");
    CHECK_REPRINT("pred[] 1", "true");
    CHECK_REPRINT("f32[4] {inf, -inf, nan, -nan}", "{inf, -inf, nan, -nan}");
    /* NaN payloads land in the NaN bits of the type; the double's quiet bit alone is the
     * plain NaN. */
    CHECK_REPRINT("f32[3] {nan(0x1), -nan(0x7fffff), nan(0x8000000000000)}",
                  "{nan(0x1), -nan(0x7fffff), nan}");
    CHECK_REPRINT("f16[2] {nan(0x3ff), nan(0x200)}", "{nan(0x3ff), nan}");
    CHECK_REPRINT("f8e5m2[2] {nan(0x1), -nan(0x3)}", "{nan(0x1), -nan(0x3)}");
    CHECK_REPRINT("c64[] (nan(0x5), -nan(0x6))", "(nan(0x5), -nan(0x6))");
    CHECK_REPRINT("f8e4m3fn[3] {inf, -nan, 100}", "{nan, -nan, 96}");
    CHECK_REPRINT("f4e2m1fn[2] {100, -0.25}", "{6, -0}");
    /* Spaces, newlines and comments between tokens. */
    CHECK_REPRINT("  f32[2,2]\n{ /* a */ {1,\n2},// row\n{3 , 4 } }  ", "{ { 1, 2 }, { 3, 4 } }");
    CHECK_REPRINT("s32[1,1,1,2] { { /*i0=0*/ { /*i1=0*/ { 1, 2 } } } }",
                  "{ { /*i0=0*/ { /*i1=0*/ { 1, 2 } } } }");
    CHECK_REPRINT("c128[2] { ( 1 , 2 ) , (-3,4.5) }", "{(1, 2), (-3, 4.5)}");
    /* "f32[1] {0}": the {0} is the value, not a layout. */
    CHECK_REPRINT2("f32[1] {0}", "{0}", "f32[1] {0}");
    CHECK_REPRINT2("f32[1]{0} {0}", "{0}", "f32[1] {0}");
    CHECK_REPRINT2("s32[2] {1, 0}", "{1, 0}", "s32[2] {1, 0}");
}

static void test_parse_at_and_element(void) {
    const char *text = "f32[2] {1, 2}), next";
    size_t pos = 0;
    cxla_literal *lit = NULL;
    CHECK_OK(cxla_literal_parse_at(text, strlen(text), &pos, NULL, &lit));
    CHECK_EQ_I64(pos, 13);
    cxla_literal_free(lit);
    /* A value inside a larger text, with the shape given (as in constant(...)). */
    cxla_shape scalar = {.type = CXLA_BF16};
    const char *hlo = "c = bf16[] constant(0.5)";
    pos = 20;
    lit = NULL;
    CHECK_OK(cxla_literal_parse_at(hlo, strlen(hlo), &pos, &scalar, &lit));
    CHECK_EQ_I64(pos, 23);
    double v = 0;
    if (lit) CHECK_OK(cxla_literal_get_f64(lit, NULL, &v));
    CHECK(v == 0.5);
    cxla_literal_free(lit);
    /* Never reads past |len|: the text continues but the length stops it. */
    const char *cut = "f32[2] {1, 2}";
    CHECK_ERROR_HAS(cxla_literal_parse(cut, 12, NULL, &lit), "the end of the text");
    lit = parse_ok("f32[] 12345", NULL);
    cxla_literal_free(lit);
    CHECK_OK(cxla_literal_parse("f32[] 12345", 7, NULL, &lit));
    if (lit) CHECK_OK(cxla_literal_get_f64(lit, NULL, &v));
    CHECK(v == 1);
    cxla_literal_free(lit);

    cxla_strbuf b;
    cxla_strbuf_init(&b);
    uint8_t t = 1;
    float f = 0.1f;
    double c[2] = {1, -0.0};
    cxla_literal_print_element(&b, CXLA_PRED, &t);
    cxla_strbuf_putc(&b, ' ');
    cxla_literal_print_element(&b, CXLA_F32, &f);
    cxla_strbuf_putc(&b, ' ');
    cxla_literal_print_element(&b, CXLA_C128, c);
    char *s = cxla_strbuf_take(&b);
    CHECK_EQ_STR(s, "true 0.1 (1, -0)");
    free(s);
}

/* ---- errors ------------------------------------------------------------------------- */

static void test_errors_structure(void) {
    /* Wrong counts at each level, with the dimension, index and counts. */
    CHECK_PARSE_ERROR(
        NULL, "f32[2,3] {{1,2,3},{4,5}}",
        "expects 3 elements in dimension 1 at index [1] of shape f32[2,3], but sees 2",
        "line 1, column 23");
    CHECK_PARSE_ERROR(NULL, "f32[2,3] {{1,2,3},{4,5,6,7}}",
                      "expects 3 elements in dimension 1 at index [1] of shape f32[2,3], but sees "
                      "more",
                      "column 26");
    CHECK_PARSE_ERROR(NULL, "f32[2,3] {{1,2,3}}",
                      "expects 2 elements in dimension 0 of shape f32[2,3], but sees 1",
                      "column 18");
    CHECK_PARSE_ERROR(NULL, "f32[2,3] {{1,2,3},{1,2,3},{1,2,3}}",
                      "expects 2 elements in dimension 0 of shape f32[2,3], but sees more",
                      "column 27");
    CHECK_PARSE_ERROR(NULL, "s8[2,2,2] {{{1,2},{3,4}},{{5,6},{7}}}",
                      "expects 2 elements in dimension 2 at index [1,1]", "column 35");
    CHECK_PARSE_ERROR(NULL, "f32[0] {1}", "expects 0 elements in dimension 0", "column 9");
    /* Too deep, not deep enough. */
    CHECK_PARSE_ERROR(NULL, "f32[2] {{1},{2}}", "too many nested braces", "column 9");
    CHECK_PARSE_ERROR(NULL, "f32[] {1}", "too many nested braces", "column 7");
    CHECK_PARSE_ERROR(NULL, "f32[2,2] {1, 2}", "expects '{' to start dimension 1 at index [0]",
                      "column 11");
    /* A bare value for an array shape is XLA's element 0 (test_xla_dense_forms). */
    CHECK_PARSE_ERROR("f32[2]", "}", "expects '{' to start an array literal of shape f32[2]",
                      "column 1");
    CHECK_PARSE_ERROR(NULL, "f32[0] 1", "out of range", "column 8");
    /* Unterminated; commas are optional (XLA skips them), so "{1 2}" and "{1, 2,}" parse. */
    CHECK_PARSE_ERROR(NULL, "f32[2] {1, 2", "but sees the end of the text", "column 13");
    CHECK_PARSE_ERROR(NULL, "f32[2,1] {{1}, {2}", "expects ',' or '}'", "column 19");
    CHECK_PARSE_ERROR(NULL, "f32[2] {1, ", "but sees the end of the text", "column 12");
    CHECK_PARSE_ERROR(NULL, "f32[2] {1 2 3}", "expects 2 elements in dimension 0", "column 13");
    CHECK_PARSE_ERROR(NULL, "f32[2] {1 ; 2}", "expects ',' or '}' after element 0", "column 11");
    CHECK_PARSE_ERROR(NULL, "f32[2] {1, 2 /* open", "an unterminated comment", "column 14");
    CHECK_PARSE_ERROR(NULL, "c64[] (1, 2", "expects ')'", "column 12");
    CHECK_PARSE_ERROR(NULL, "c64[] (1 2)", "expects ','", "column 10");
    CHECK_PARSE_ERROR(NULL, "c64[] 1", "expects a complex value", "column 7");
    CHECK_PARSE_ERROR(NULL, "( f32[] 1, f32[] 2", "expects ',' or ')'", "column 19");
    /* Garbage after, empty input. */
    CHECK_PARSE_ERROR(NULL, "f32[2] {1, 2} }", "expects the end of the literal", "column 15");
    CHECK_PARSE_ERROR(NULL, "f32[] 1 2", "expects the end of the literal", "column 9");
    CHECK_PARSE_ERROR(NULL, "", "the text ends", "line 1, column 1");
    CHECK_PARSE_ERROR(NULL, "  /* only a comment */  ", "the text ends", "column 25");
    CHECK_PARSE_ERROR("f32[]", "", "expects a value of type f32", "line 1, column 1");
    CHECK_PARSE_ERROR("f32[]", "   ", "the end of the text", "column 4");
    /* Shapes. */
    CHECK_PARSE_ERROR(NULL, "q32[] 1", "q32", "column 1");
    CHECK_PARSE_ERROR(NULL, "{1, 2}", "expects a shape", "column 1");
    CHECK_PARSE_ERROR(NULL, "f32[2]{0:T(2)} {1, 2}", "tiled", "line 1, column 1");
    CHECK_PARSE_ERROR(NULL, "f32[99999999999] {1}", "too short", "line 1, column 1");
    CHECK_PARSE_ERROR(NULL, "(f32[2], f32[99999999999]) ({1, 2}, {1})", "too short",
                      "line 1, column 1");
    /* Positions on later lines. */
    CHECK_PARSE_ERROR(NULL, "f32[2,2] {\n  {1, 2},\n  {3}\n}", "but sees 1", "line 3, column 5");
    CHECK_PARSE_ERROR(NULL, "f32[2]\n{1,\n  zz}", "unknown word 'zz'", "line 3, column 3");
}

static void test_errors_values(void) {
    /* Bad numbers and words. */
    CHECK_PARSE_ERROR(NULL, "f32[] 1.2.3", "malformed number '1.2.3'", "column 7");
    CHECK_PARSE_ERROR(NULL, "f32[] 1e", "malformed number", "column 7");
    CHECK_PARSE_ERROR(NULL, "f32[] 12abc", "malformed number", "column 7");
    CHECK_PARSE_ERROR(NULL, "f32[] -", "expects a number", "column 7");
    CHECK_PARSE_ERROR(NULL, "f32[] .", "expects a number", "column 7");
    CHECK_PARSE_ERROR(NULL, "f32[] +1", "expects a value of type f32", "column 7");
    CHECK_PARSE_ERROR(NULL, "f32[] infinity", "unknown word 'infinity'", "column 7");
    CHECK_PARSE_ERROR(NULL, "f32[] -infinity", "unknown word", "column 7");
    CHECK_PARSE_ERROR(NULL, "f32[2] {1, foo}", "unknown word 'foo'", "column 12");
    CHECK_PARSE_ERROR(NULL, "s32[] 1.5", "expects an integer for primitive type s32", "column 7");
    CHECK_PARSE_ERROR(NULL, "s32[] 1e3", "expects an integer", "column 7");
    CHECK_PARSE_ERROR(NULL, "s32[] inf", "expects an integer", "column 7");
    CHECK_PARSE_ERROR(NULL, "s32[] true", "'true' is a pred value", "column 7");
    CHECK_PARSE_ERROR(NULL, "pred[] 0.0", "expects an integer for primitive type pred", "column 8");
    /* Out-of-range integers name the value and the type's range. */
    CHECK_PARSE_ERROR(NULL, "s8[] 128",
                      "value 128 is out of range for literal's primitive type s8 namely "
                      "[-128, 127]",
                      "column 6");
    CHECK_PARSE_ERROR(NULL, "s8[] -129", "value -129 is out of range", "column 6");
    CHECK_PARSE_ERROR(NULL, "u8[] -1",
                      "value -1 is out of range for literal's primitive type "
                      "u8 namely [0, 255]",
                      "column 6");
    CHECK_PARSE_ERROR(NULL, "u8[2] {1, 256}", "value 256", "column 11");
    CHECK_PARSE_ERROR(NULL, "s4[] 8", "namely [-8, 7]", "column 6");
    CHECK_PARSE_ERROR(NULL, "u4[] 16", "namely [0, 15]", "column 6");
    CHECK_PARSE_ERROR(NULL, "s1[] 1", "namely [-1, 0]", "column 6");
    CHECK_PARSE_ERROR(NULL, "u2[] 4", "namely [0, 3]", "column 6");
    CHECK_PARSE_ERROR(NULL, "s16[] 32768", "s16", "column 7");
    CHECK_PARSE_ERROR(NULL, "s32[] 2147483648", "s32", "column 7");
    CHECK_PARSE_ERROR(NULL, "s64[] 9223372036854775808", "s64", "column 7");
    CHECK_PARSE_ERROR(NULL, "s64[] -9223372036854775809", "s64", "column 7");
    CHECK_PARSE_ERROR(NULL, "u64[] 18446744073709551616", "value 18446744073709551616", "u64");
    /* u64 takes -1 as 2^64-1 and pred any integer (test_xla_dense_forms); u32 does not. */
    CHECK_PARSE_ERROR(NULL, "u32[] -1", "u32 namely [0, 4294967295]", "column 7");
    /* Out-of-range floats: those that round to a non-finite value. */
    CHECK_PARSE_ERROR(NULL, "f16[] 70000",
                      "value 70000 is out of range for literal's primitive "
                      "type f16 namely [-65504, 65504]",
                      "column 7");
    CHECK_PARSE_ERROR(NULL, "f16[] -65520", "f16", "column 7");
    CHECK_PARSE_ERROR(NULL, "f32[] 3.5e38", "f32", "column 7");
    CHECK_PARSE_ERROR(NULL, "bf16[] 3.4e38", "bf16", "column 8");
    CHECK_PARSE_ERROR(NULL, "f8e4m3fn[] 500", "namely [-448, 448]", "column 12");
    CHECK_PARSE_ERROR(NULL, "f8e5m2[] 1e6", "f8e5m2", "column 10");
    CHECK_PARSE_ERROR(NULL, "f8e8m0fnu[] -1", "f8e8m0fnu", "column 13");
    CHECK_PARSE_ERROR(NULL, "f64[] 1e309", "out of range for a double", "column 7");
    CHECK_PARSE_ERROR(NULL, "c64[] (1, 1e39)", "out of range", "column 11");
    /* NaN payloads. */
    CHECK_PARSE_ERROR(NULL, "f32[] nan(0x800000)", "NaN payload 0x800000 is out of range for f32",
                      "column 7");
    CHECK_PARSE_ERROR(NULL, "f16[] nan(0x400)", "largest 0x3ff", "column 7");
    CHECK_PARSE_ERROR(NULL, "f32[] nan(0x)", "malformed NaN payload", "column 10");
    CHECK_PARSE_ERROR(NULL, "f32[] nan(12)", "malformed NaN payload", "column 10");
    CHECK_PARSE_ERROR(NULL, "f32[] nan(0x1", "malformed NaN payload", "column 10");
    CHECK_PARSE_ERROR(NULL, "f32[] nan(0x0)", "NaN payload out of range", "column 10");
    CHECK_PARSE_ERROR(NULL, "f64[] nan(0x10000000000000)", "NaN payload out of range", "column 10");
    CHECK_PARSE_ERROR(NULL, "f8e4m3fn[] nan(0x1)", "does not support NaN payloads", "column 12");
    CHECK_PARSE_ERROR(NULL, "f8e4m3fnuz[] -nan(0x2)", "does not support NaN payloads", "column 14");
}

/* ---- random round trips ---------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Random but valid storage for one element of |type| (NaN patterns included). */
static void random_element(cxla_type type, uint8_t *p) {
    size_t n = cxla_type_storage(type);
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)next_random();
    int bits = cxla_type_bits(type);
    if (type == CXLA_PRED) {
        p[0] &= 1;
    } else if (cxla_type_is_float(type) && bits < 8) { /* f4, f6: the low bits */
        p[0] &= (uint8_t)((1u << bits) - 1);
    } else if (cxla_type_is_integer(type) && bits < 8) {
        uint8_t v = p[0] & (uint8_t)((1u << bits) - 1);
        if (cxla_type_is_signed(type) && (v >> (bits - 1))) v |= (uint8_t)(0xffu << bits);
        p[0] = v;
    }
    /* Sometimes a small value, so that ordinary numbers appear too. */
    if ((cxla_type_is_float(type) || cxla_type_is_complex(type)) && next_random() % 3 == 0) {
        cxla_store_f64(type, p, (double)((int64_t)(next_random() % 2001) - 1000) / 8.0);
        if (cxla_type_is_complex(type))
            cxla_store_c128(type, p, (double)(next_random() % 100) / 7.0,
                            -(double)(next_random() % 100) / 3.0);
    }
}

static void test_random_round_trips(void) {
    for (int t = 1; t < CXLA_TYPE_COUNT; t++) {
        cxla_type type = (cxla_type)t;
        if (!cxla_type_is_array(type)) continue;
        for (int iter = 0; iter < 40; iter++) {
            int64_t rank = (int64_t)(next_random() % 5), dims[4], m2m[4];
            for (int64_t i = 0; i < rank; i++) {
                dims[i] = (int64_t)(next_random() % 4);
                if (iter % 4) dims[i] += 1; /* mostly non-empty */
                m2m[i] = i;
            }
            for (int64_t i = rank - 1; i > 0; i--) { /* a random layout */
                int64_t j = (int64_t)(next_random() % (uint64_t)(i + 1)), x = m2m[i];
                m2m[i] = m2m[j];
                m2m[j] = x;
            }
            cxla_layout layout = {.minor_to_major = m2m};
            cxla_shape shape = {.type = type, .rank = rank, .dims = dims, .layout = &layout};
            cxla_literal *lit = NULL;
            CHECK_OK(cxla_literal_create(&shape, &lit));
            if (!lit) continue;
            uint8_t *data = cxla_literal_data(lit);
            size_t es = cxla_type_storage(type);
            for (int64_t i = 0; i < cxla_literal_element_count(lit); i++)
                random_element(type, data + (size_t)i * es);
            check_round_trip(lit);
            cxla_literal_free(lit);
        }
    }
    /* Every bit pattern of the 8-bit and smaller float types, and a sweep of f16/bf16. */
    for (int t = 1; t < CXLA_TYPE_COUNT; t++) {
        cxla_type type = (cxla_type)t;
        if (!cxla_type_is_float(type) || cxla_type_storage(type) != 1) continue;
        int count = 1 << cxla_type_bits(type); /* 16 for f4e2m1fn, 64 for the f6 types */
        cxla_shape shape = {.type = type, .rank = 1, .dims = (int64_t[]){count}};
        cxla_literal *lit = NULL;
        CHECK_OK(cxla_literal_create(&shape, &lit));
        if (!lit) continue;
        uint8_t *d = cxla_literal_data(lit);
        for (int i = 0; i < count; i++) d[i] = (uint8_t)i;
        check_round_trip(lit);
        cxla_literal_free(lit);
    }
    cxla_type wide[2] = {CXLA_F16, CXLA_BF16};
    for (int k = 0; k < 2; k++) {
        cxla_shape shape = {.type = wide[k], .rank = 1, .dims = (int64_t[]){65536}};
        cxla_literal *lit = NULL;
        CHECK_OK(cxla_literal_create(&shape, &lit));
        if (!lit) continue;
        uint16_t *d = cxla_literal_data(lit);
        for (int i = 0; i < 65536; i++) d[i] = (uint16_t)i;
        check_round_trip(lit);
        cxla_literal_free(lit);
    }
    /* Random tuples of random arrays. */
    for (int iter = 0; iter < 20; iter++) {
        cxla_literal *elements[3] = {NULL, NULL, NULL};
        int64_t n = (int64_t)(next_random() % 4);
        for (int64_t i = 0; i < n; i++) {
            cxla_type type;
            do type = (cxla_type)(1 + next_random() % (CXLA_TYPE_COUNT - 1));
            while (!cxla_type_is_array(type));
            int64_t dims[2] = {(int64_t)(next_random() % 3), (int64_t)(next_random() % 3)};
            cxla_shape shape = {.type = type, .rank = (int64_t)(next_random() % 3), .dims = dims};
            CHECK_OK(cxla_literal_create(&shape, &elements[i]));
            if (!elements[i]) continue;
            uint8_t *data = cxla_literal_data(elements[i]);
            for (int64_t j = 0; j < cxla_literal_element_count(elements[i]); j++)
                random_element(type, data + (size_t)j * cxla_type_storage(type));
        }
        bool all = true;
        for (int64_t i = 0; i < n; i++) all = all && elements[i];
        cxla_literal *tuple = NULL;
        if (all) CHECK_OK(cxla_literal_create_tuple(elements, n, &tuple));
        if (tuple) {
            check_round_trip(tuple);
            cxla_literal_free(tuple);
        } else {
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        }
    }
}

/* The forms XLA's ParseDenseLiteral accepts beyond the printed one (hlo_parser.cc): a
 * bare value for an array shape sets element 0 and leaves the rest zero, commas are
 * skipped wherever they are, u64 takes negatives as their two's complement and pred any
 * integer (static_cast<bool>). */
static void test_xla_dense_forms(void) {
    CHECK_REPRINT("f32[3] 7", "{7, 0, 0}");
    CHECK_REPRINT("s32[2,2] -4", "{ { -4, 0 }, { 0, 0 } }");
    CHECK_REPRINT("f32[2,3]{0,1} 5", "{ { 5, 0, 0 }, { 0, 0, 0 } }");
    CHECK_REPRINT("f32[3] {1 2 3}", "{1, 2, 3}");
    CHECK_REPRINT("f32[3] {,1,,2,3,}", "{1, 2, 3}");
    CHECK_REPRINT("s8[2,2] {{1 2} {3 4}}", "{ { 1, 2 }, { 3, 4 } }");
    CHECK_REPRINT("u64[2] {-1, -9223372036854775808}",
                  "{18446744073709551615, 9223372036854775808}");
    CHECK_REPRINT("pred[3] {2, 0, -1}", "{1, 0, 1}");
    /* A dynamic literal's sizes, not its bounds, say whether index 0 exists (the literal
     * fuzzer found "f32[<=4](0) 2" accepted, with 2 in its padding). */
    CHECK_PARSE_ERROR(NULL, "f32[<=4](0) 2", "of no elements at linear index 0", "column 13");
    CHECK_PARSE_ERROR(NULL, "f32[3,<=2](3,0) 2", "of no elements", "column 17");
}

TEST_MAIN(TEST(test_print_integers), TEST(test_print_f32_f64), TEST(test_print_f16_bf16),
          TEST(test_print_small_floats), TEST(test_print_complex), TEST(test_print_ranks),
          TEST(test_print_empty), TEST(test_print_with_shape), TEST(test_layout_order),
          TEST(test_tuples_and_tokens), TEST(test_parse_forms), TEST(test_parse_at_and_element),
          TEST(test_errors_structure), TEST(test_errors_values), TEST(test_xla_dense_forms),
          TEST(test_random_round_trips))
