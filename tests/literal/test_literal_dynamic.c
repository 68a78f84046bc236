/* Literals of bounded dynamic shapes: current sizes, their text form, comparison,
 * conversion to static and back, and .npy files. */
#include <stdlib.h>

#include "cxla/npy.h"
#include "harness.h"
#include "literal/literal_internal.h"

static cxla_literal *parse(const char *text) {
    cxla_literal *lit = NULL;
    CHECK_OK(cxla_literal_parse(text, (size_t)-1, NULL, &lit));
    return lit;
}

static void check_text(const cxla_literal *lit, int flags, const char *want) {
    if (!lit) return;
    char *s = cxla_literal_to_string(lit, flags);
    CHECK_EQ_STR(s, want);
    free(s);
}

/* f32[<=5] holding 1..5 at its bound. */
static cxla_literal *bounded5(void) {
    return parse("f32[<=5] {1, 2, 3, 4, 5}");
}

static void test_sizes(void) {
    cxla_literal *lit = bounded5();
    if (!lit) return;
    CHECK_EQ_I64(cxla_literal_dynamic_size(lit, 0), 5); /* new literals are at their bounds */
    CHECK(!cxla_literal_is_padded(lit));
    CHECK_OK(cxla_literal_set_dynamic_size(lit, 0, 2));
    CHECK_EQ_I64(cxla_literal_dynamic_size(lit, 0), 2);
    CHECK(cxla_literal_is_padded(lit));
    /* Storage and element access keep the bounds. */
    CHECK_EQ_I64(cxla_literal_element_count(lit), 5);
    double v = 0;
    CHECK_OK(cxla_literal_get_f64(lit, (int64_t[]){4}, &v));
    CHECK(v == 5);
    check_text(lit, CXLA_LITERAL_PRINT_SHAPE, "f32[<=5](2) {1, 2}");
    check_text(lit, CXLA_LITERAL_PRINT_DEFAULT, "{1, 2}");
    /* Size 0, then back to the bound (no longer padded). */
    CHECK_OK(cxla_literal_set_dynamic_size(lit, 0, 0));
    check_text(lit, CXLA_LITERAL_PRINT_SHAPE, "f32[<=5](0) {}");
    CHECK_OK(cxla_literal_set_dynamic_size(lit, 0, 5));
    CHECK(!cxla_literal_is_padded(lit));
    check_text(lit, CXLA_LITERAL_PRINT_SHAPE, "f32[<=5](5) {1, 2, 3, 4, 5}");
    /* Errors. */
    CHECK_ERROR_HAS(cxla_literal_set_dynamic_size(lit, 0, 6), "outside its bound 0..5");
    CHECK_ERROR_HAS(cxla_literal_set_dynamic_size(lit, 0, -1), "outside its bound");
    CHECK_ERROR_HAS(cxla_literal_set_dynamic_size(lit, 1, 1), "out of range");
    CHECK_EQ_I64(cxla_literal_dynamic_size(lit, 1), -1);
    CHECK_EQ_I64(cxla_literal_dynamic_size(lit, -1), -1);
    cxla_literal_free(lit);

    cxla_literal *st = parse("s32[3] {1, 2, 3}");
    if (st) {
        CHECK_EQ_I64(cxla_literal_dynamic_size(st, 0), 3);
        CHECK_ERROR_HAS(cxla_literal_set_dynamic_size(st, 0, 2), "static");
        CHECK_OK(cxla_literal_set_dynamic_size(st, 0, 3)); /* its own size: nothing to do */
        check_text(st, CXLA_LITERAL_PRINT_SHAPE, "s32[3] {1, 2, 3}");
    }
    cxla_literal_free(st);
    cxla_literal *t = parse("( s32[] 0, f32[<=2] {1, 2} )");
    if (t) {
        CHECK_EQ_I64(cxla_literal_dynamic_size(t, 0), -1);
        CHECK_ERROR_HAS(cxla_literal_set_dynamic_size(t, 0, 1), "not an array");
        CHECK(!cxla_literal_is_padded(t));
        CHECK_OK(cxla_literal_set_dynamic_size(cxla_literal_tuple_element(t, 1), 0, 1));
        CHECK(cxla_literal_is_padded(t));
        check_text(t, CXLA_LITERAL_PRINT_SHAPE, "( s32[] 0, f32[<=2](1) {1} )");
    }
    cxla_literal_free(t);
}

static void test_text_2d(void) {
    cxla_literal *m = parse("s32[<=3,<=4](2,3) { { 1, 2, 3 }, { 4, 5, 6 } }");
    if (!m) return;
    CHECK_EQ_I64(cxla_literal_dynamic_size(m, 0), 2);
    CHECK_EQ_I64(cxla_literal_dynamic_size(m, 1), 3);
    check_text(m, CXLA_LITERAL_PRINT_SHAPE, "s32[<=3,<=4](2,3) { { 1, 2, 3 }, { 4, 5, 6 } }");
    /* The value sits at the bounded strides; the padding is zero. */
    int64_t v = -1;
    CHECK_OK(cxla_literal_get_s64(m, (int64_t[]){1, 0}, &v));
    CHECK_EQ_I64(v, 4);
    CHECK_OK(cxla_literal_get_s64(m, (int64_t[]){0, 3}, &v));
    CHECK_EQ_I64(v, 0);
    CHECK_OK(cxla_literal_get_s64(m, (int64_t[]){2, 1}, &v));
    CHECK_EQ_I64(v, 0);
    cxla_literal_free(m);

    /* A static dimension among dynamic ones lists its size too; a layout prints. */
    cxla_literal *a = parse("f32[2,<=3]{0,1}(2,1) { { 7 }, { 8 } }");
    if (a) {
        check_text(a, CXLA_LITERAL_PRINT_SHAPE | CXLA_LITERAL_PRINT_LAYOUT,
                   "f32[2,<=3]{0,1}(2,1) { {7}, {8} }");
        double v2 = 0;
        CHECK_OK(cxla_literal_get_f64(a, (int64_t[]){1, 0}, &v2));
        CHECK(v2 == 8);
    }
    cxla_literal_free(a);
    /* XLA's own form (no sizes) fills the bounds. */
    cxla_literal *full = parse("f32[<=2] {1, 2}");
    check_text(full, CXLA_LITERAL_PRINT_SHAPE, "f32[<=2](2) {1, 2}");
    cxla_literal_free(full);
}

static void test_text_errors(void) {
    cxla_literal *lit = NULL;
    CHECK_ERROR_HAS(cxla_literal_parse("f32[<=2](3) {1, 2, 3}", (size_t)-1, NULL, &lit),
                    "dynamic size '3' of dimension 0 must be an integer in 0..2 (its bound)");
    CHECK_ERROR_HAS(cxla_literal_parse("f32[<=2](1) {1, 2}", (size_t)-1, NULL, &lit),
                    "expects 1 elements in dimension 0");
    CHECK_ERROR_HAS(cxla_literal_parse("f32[<=2](2) {1}", (size_t)-1, NULL, &lit), "but sees 1");
    CHECK_ERROR_HAS(cxla_literal_parse("f32[3,<=2](2,1) {{1}, {2}}", (size_t)-1, NULL, &lit),
                    "static dimension 0");
    CHECK_ERROR_HAS(cxla_literal_parse("f32[<=2,<=2](1) {{1}}", (size_t)-1, NULL, &lit),
                    "expects ','");
    CHECK_ERROR_HAS(cxla_literal_parse("f32[<=2](1,1) {1}", (size_t)-1, NULL, &lit), "sees more");
    CHECK_ERROR_HAS(cxla_literal_parse("f32[<=2](-1) {}", (size_t)-1, NULL, &lit),
                    "must be an integer");
    CHECK_ERROR_HAS(cxla_literal_parse("f32[<=2](1.5) {1}", (size_t)-1, NULL, &lit),
                    "must be an integer");
    CHECK_ERROR_HAS(cxla_literal_parse("f32[?](1) {1}", (size_t)-1, NULL, &lit), "unbounded");
}

static void test_compare(void) {
    cxla_literal *a = parse("f32[<=4](2) {1, 2}");
    cxla_literal *b = parse("f32[<=4] {1, 2, 9, 9}");
    if (!a || !b) goto done;
    CHECK(!cxla_literal_equal(a, b)); /* sizes differ */
    CHECK_ERROR_HAS(cxla_literal_compare(a, b, NULL), "dynamic size 2 of dimension 0");
    CHECK_OK(cxla_literal_set_dynamic_size(b, 0, 2));
    CHECK(cxla_literal_equal(a, b)); /* padding (0 vs 9) is not compared */
    CHECK_OK(cxla_literal_set_f64(b, (int64_t[]){1}, 3));
    CHECK_ERROR_HAS(cxla_literal_compare(a, b, NULL), "1 of 2 elements differ");
    cxla_literal *s = parse("f32[2] {1, 2}");
    if (s) CHECK_ERROR_HAS(cxla_literal_compare(a, s, NULL), "differs from expected f32[2]");
    cxla_literal_free(s);
    cxla_literal *z = parse("f32[<=4](0) {}");
    cxla_literal *z2 = parse("f32[<=4] {5, 6, 7, 8}");
    if (z && z2) {
        CHECK_OK(cxla_literal_set_dynamic_size(z2, 0, 0));
        CHECK(cxla_literal_equal(z, z2));
    }
    cxla_literal_free(z);
    cxla_literal_free(z2);
done:
    cxla_literal_free(a);
    cxla_literal_free(b);
}

static void test_copies_keep_sizes(void) {
    cxla_literal *m = parse("s32[<=3,<=4](2,3) { { 1, 2, 3 }, { 4, 5, 6 } }");
    if (!m) return;
    cxla_literal *c = NULL, *f = NULL, *r = NULL;
    CHECK_OK(cxla_literal_clone(m, &c));
    check_text(c, CXLA_LITERAL_PRINT_SHAPE, "s32[<=3,<=4](2,3) { { 1, 2, 3 }, { 4, 5, 6 } }");
    CHECK_OK(cxla_literal_convert(m, CXLA_F32, &f));
    check_text(f, CXLA_LITERAL_PRINT_SHAPE, "f32[<=3,<=4](2,3) { { 1, 2, 3 }, { 4, 5, 6 } }");
    cxla_layout col = {.minor_to_major = (int64_t[]){0, 1}};
    CHECK_OK(cxla_literal_relayout(m, &col, &r));
    if (r) {
        CHECK(cxla_literal_equal(r, m));
        int64_t v = 0;
        CHECK_OK(cxla_literal_get_s64(r, (int64_t[]){1, 2}, &v));
        CHECK_EQ_I64(v, 6);
    }
    cxla_literal_free(c);
    cxla_literal_free(f);
    cxla_literal_free(r);
    cxla_literal_free(m);
}

static void test_to_static_and_bounded(void) {
    cxla_literal *m = parse("s32[<=3,<=4](2,3) { { 1, 2, 3 }, { 4, 5, 6 } }");
    cxla_literal *st = NULL, *back = NULL, *wide = NULL;
    if (!m) return;
    CHECK_OK(cxla_literal_to_static(m, &st));
    check_text(st, CXLA_LITERAL_PRINT_SHAPE | CXLA_LITERAL_PRINT_LAYOUT,
               "s32[2,3]{1,0} { { 1, 2, 3 }, { 4, 5, 6 } }");
    /* Back into the bounds, and into wider bounds with a static and an unbounded dim. */
    cxla_shape bounded = {
        .type = CXLA_S32, .rank = 2, .dims = (int64_t[]){3, 4}, .dynamic = (uint8_t[]){1, 1}};
    if (st) CHECK_OK(cxla_literal_to_bounded(st, &bounded, &back));
    if (back) CHECK(cxla_literal_equal(back, m));
    cxla_shape other = {.type = CXLA_S32,
                        .rank = 2,
                        .dims = (int64_t[]){2, CXLA_DIM_UNBOUNDED},
                        .dynamic = (uint8_t[]){0, 1}};
    CHECK_OK(cxla_literal_to_bounded(m, &other, &wide));
    check_text(wide, CXLA_LITERAL_PRINT_SHAPE, "s32[2,3] { { 1, 2, 3 }, { 4, 5, 6 } }");
    cxla_literal *bad = NULL;
    cxla_shape small = {
        .type = CXLA_S32, .rank = 2, .dims = (int64_t[]){3, 2}, .dynamic = (uint8_t[]){1, 1}};
    CHECK_ERROR_HAS(cxla_literal_to_bounded(m, &small, &bad), "size 3 of dimension 1");
    cxla_shape stat = {.type = CXLA_S32, .rank = 2, .dims = (int64_t[]){3, 3}};
    CHECK_ERROR_HAS(cxla_literal_to_bounded(m, &stat, &bad), "static size 3");
    cxla_shape f32 = {.type = CXLA_F32, .rank = 2, .dims = (int64_t[]){2, 3}};
    CHECK_ERROR_HAS(cxla_literal_to_bounded(m, &f32, &bad), "does not fit");
    cxla_literal_free(st);
    cxla_literal_free(back);
    cxla_literal_free(wide);
    cxla_literal_free(m);

    /* Tuples leaf by leaf. */
    cxla_literal *t = parse("(s32[] 7, f32[<=3](1) {4})"), *ts = NULL;
    if (t) CHECK_OK(cxla_literal_to_static(t, &ts));
    check_text(ts, CXLA_LITERAL_PRINT_SHAPE, "( s32[] 7, f32[1] {4} )");
    cxla_literal_free(t);
    cxla_literal_free(ts);
}

static void test_npy_writes_the_value(void) {
    cxla_literal *m = parse("f32[<=4](3) {1, 2, 3}");
    void *data = NULL;
    size_t size = 0;
    if (m) CHECK_OK(cxla_npy_write_buffer(m, &data, &size));
    cxla_literal *back = NULL;
    if (data) CHECK_OK(cxla_npy_read_buffer(data, size, CXLA_F32, &back));
    check_text(back, CXLA_LITERAL_PRINT_SHAPE, "f32[3] {1, 2, 3}");
    free(data);
    cxla_literal_free(back);
    cxla_literal_free(m);
}

TEST_MAIN(TEST(test_sizes), TEST(test_text_2d), TEST(test_text_errors), TEST(test_compare),
          TEST(test_copies_keep_sizes), TEST(test_to_static_and_bounded),
          TEST(test_npy_writes_the_value))
