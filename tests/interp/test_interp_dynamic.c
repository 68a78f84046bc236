/* Dynamic dimensions in the interpreter, through the C API: the seed's example, values
 * whose padding holds garbage (which must never reach a result), every element type
 * through set-dimension-size and the shape operations, entry arguments, the fast path
 * for static values, and errors. The data-driven cases are tests/hlo/cases/dynamic*.hlo. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

static cxla_module *module_of(const char *text) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "t.hlo", &m));
    if (m) CHECK_OK(cxla_verify_module(m));
    return m;
}

static cxla_literal *lit(const char *text) {
    cxla_literal *l = NULL;
    CHECK_OK(cxla_literal_parse(text, (size_t)-1, NULL, &l));
    return l;
}

/* Runs |text| on |args| and compares the result with |want| (literal text). */
static void run_expect(const char *text, cxla_literal **args, int64_t n, const char *want) {
    cxla_module *m = module_of(text);
    cxla_literal *r = NULL, *w = lit(want);
    bool ok = true;
    for (int64_t i = 0; i < n; i++) ok = ok && args[i];
    if (m && w && ok) {
        CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)args, n, &r));
        if (r) {
            cxla_status s = cxla_literal_compare(r, w, NULL);
            if (s) {
                char *got = cxla_literal_to_string(r, CXLA_LITERAL_PRINT_SHAPE);
                CHECK_MSG(false, "%s (got %s)", cxla_status_message(s), got ? got : "?");
                free(got);
                cxla_status_free(s);
            }
        }
    }
    cxla_literal_free(r);
    cxla_literal_free(w);
    cxla_module_destroy(m);
}

static const char *seed_text = "HloModule seed\n"
                               "add {\n"
                               "  a = f32[] parameter(0)\n"
                               "  b = f32[] parameter(1)\n"
                               "  ROOT s = f32[] add(a, b)\n"
                               "}\n"
                               "ENTRY main {\n"
                               "  v = f32[10] parameter(0)\n"
                               "  n = s32[] parameter(1)\n"
                               "  p = f32[<=10] set-dimension-size(v, n), dimensions={0}\n"
                               "  z = f32[] constant(0)\n"
                               "  sum = f32[] reduce(p, z), dimensions={0}, to_apply=add\n"
                               "  ROOT t = (f32[<=10], f32[]) tuple(p, sum)\n"
                               "}\n";

static void test_seed_example(void) {
    cxla_module *m = module_of(seed_text);
    cxla_literal *v = lit("f32[10] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}");
    for (int n = 0; n <= 10 && m && v; n++) {
        cxla_literal *size = NULL, *r = NULL;
        CHECK_OK(cxla_literal_create_scalar(CXLA_S32, n, &size));
        const cxla_literal *args[] = {v, size};
        CHECK_OK(interp_run_module(m, NULL, args, 2, &r));
        if (r) {
            const cxla_literal *p = cxla_literal_tuple_element_const(r, 0);
            const cxla_literal *sum = cxla_literal_tuple_element_const(r, 1);
            /* The value comes back as a dynamic literal of the bound with its size. */
            CHECK(cxla_shape_equal(cxla_literal_shape(p), &(cxla_shape){
                                                              .type = CXLA_F32,
                                                              .rank = 1,
                                                              .dims = (int64_t[]){10},
                                                              .dynamic = (uint8_t[]){1},
                                                          }));
            CHECK_EQ_I64(cxla_literal_dynamic_size(p, 0), n);
            CHECK(cxla_literal_is_padded(r) == (n < 10));
            double s = -1;
            CHECK_OK(cxla_literal_get_f64(sum, NULL, &s));
            CHECK_MSG(s == n * (n + 1) / 2.0, "size %d: sum %g", n, s);
            cxla_literal *st = NULL;
            CHECK_OK(cxla_literal_to_static(p, &st));
            if (st) {
                CHECK_EQ_I64(cxla_literal_shape(st)->dims[0], n);
                CHECK(cxla_shape_is_static(cxla_literal_shape(st)));
            }
            cxla_literal_free(st);
        }
        cxla_literal_free(r);
        cxla_literal_free(size);
    }
    cxla_literal_free(v);
    cxla_module_destroy(m);
}

/* An argument whose padding holds NaN, infinities and huge values: no result may see them. */
static void test_garbage_padding_never_leaks(void) {
    const char *text =
        "HloModule garbage\n"
        "add {\n"
        "  a = f32[] parameter(0)\n"
        "  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n"
        "}\n"
        "max {\n"
        "  a = f32[] parameter(0)\n"
        "  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] maximum(a, b)\n"
        "}\n"
        "lt {\n"
        "  a = f32[] parameter(0)\n"
        "  b = f32[] parameter(1)\n"
        "  ROOT s = pred[] compare(a, b), direction=LT\n"
        "}\n"
        "ENTRY main {\n"
        "  x = f32[<=6] parameter(0)\n"
        "  z = f32[] constant(0)\n"
        "  ninf = f32[] constant(-inf)\n"
        "  sum = f32[] reduce(x, z), dimensions={0}, to_apply=add\n"
        "  mx = f32[] reduce(x, ninf), dimensions={0}, to_apply=max\n"
        "  srt = f32[<=6] sort(x), dimensions={0}, to_apply=lt\n"
        "  dot = f32[] dot(x, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
        "  rev = f32[<=6] reverse(x), dimensions={0}\n"
        "  cat = f32[<=12] concatenate(x, x), dimensions={0}\n"
        "  m = f32[<=6,<=6] broadcast(x), dimensions={1}\n"
        "  ROOT t = (f32[], f32[], f32[<=6], f32[], f32[<=6], f32[<=12]) "
        "tuple(sum, mx, srt, dot, rev, cat)\n"
        "}\n";
    cxla_literal *x = lit("f32[<=6] {-3, -1, -2, 0, 0, 0}");
    if (x) {
        CHECK_OK(cxla_literal_set_f64(x, (int64_t[]){3}, NAN));
        CHECK_OK(cxla_literal_set_f64(x, (int64_t[]){4}, INFINITY));
        CHECK_OK(cxla_literal_set_f64(x, (int64_t[]){5}, 1e30));
        CHECK_OK(cxla_literal_set_dynamic_size(x, 0, 3));
    }
    cxla_literal *args[] = {x};
    run_expect(text, args, 1,
               "( f32[] -6, f32[] -1, f32[<=6](3) {-3, -2, -1}, f32[] 14, "
               "f32[<=6](3) {-2, -1, -3}, f32[<=12](6) {-3, -1, -2, -3, -1, -2} )");
    cxla_literal_free(x);
}

/* Every element type through set-dimension-size, reverse and concatenate. */
static void test_every_type(void) {
    int tested = 0;
    for (int t = 1; t < CXLA_TYPE_COUNT; t++) {
        cxla_type type = (cxla_type)t;
        if (!cxla_type_is_array(type)) continue;
        const char *tn = cxla_type_name(type);
        char text[1024];
        snprintf(text, sizeof text,
                 "HloModule every_type\n"
                 "ENTRY main {\n"
                 "  x = %s[5] parameter(0)\n"
                 "  n = s32[] constant(3)\n"
                 "  d = %s[<=5] set-dimension-size(x, n), dimensions={0}\n"
                 "  r = %s[<=5] reverse(d), dimensions={0}\n"
                 "  ROOT c = %s[<=10] concatenate(r, d), dimensions={0}\n"
                 "}\n",
                 tn, tn, tn, tn);
        cxla_module *m = module_of(text);
        cxla_shape s5 = {.type = type, .rank = 1, .dims = (int64_t[]){5}};
        cxla_literal *x = NULL, *r = NULL;
        CHECK_OK(cxla_literal_create(&s5, &x));
        double stored[5] = {0};
        for (int64_t i = 0; x && i < 5; i++) {
            if (cxla_type_is_complex(type))
                CHECK_OK(cxla_literal_set_c128(x, &i, (double)(i + 1), -(double)i));
            else
                CHECK_OK(cxla_literal_set_f64(x, &i, (double)(i + 1)));
            double im = 0;
            CHECK_OK(cxla_literal_get_c128(x, &i, &stored[i], &im));
        }
        const cxla_literal *args[] = {x};
        if (m && x) CHECK_OK(interp_run_module(m, NULL, args, 1, &r));
        if (r) {
            tested++;
            CHECK_MSG(cxla_literal_dynamic_size(r, 0) == 6, "%s: size %lld", tn,
                      (long long)cxla_literal_dynamic_size(r, 0));
            static const int64_t order[6] = {2, 1, 0, 0, 1, 2};
            for (int64_t i = 0; i < 6; i++) {
                double re = 0, im = 0;
                CHECK_OK(cxla_literal_get_c128(r, &i, &re, &im));
                CHECK_MSG(re == stored[order[i]] || (isnan(re) && isnan(stored[order[i]])),
                          "%s: element %lld is %g, want %g", tn, (long long)i, re,
                          stored[order[i]]);
            }
        }
        cxla_literal_free(x);
        cxla_literal_free(r);
        cxla_module_destroy(m);
    }
    CHECK(tested > 15);
}

static void test_entry_arguments(void) {
    const char *text = "HloModule args\n"
                       "ENTRY main {\n"
                       "  x = s32[<=3,<=4] parameter(0)\n"
                       "  ROOT n = s32[<=3,<=4] negate(x)\n"
                       "}\n";
    /* A static literal, a dynamic one of other bounds, one at the bounds, one empty. */
    cxla_literal *a[4] = {
        lit("s32[2,3] {{1, 2, 3}, {4, 5, 6}}"), lit("s32[<=9,<=9](2,3) {{1, 2, 3}, {4, 5, 6}}"),
        lit("s32[3,4] {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}"), lit("s32[0,4] {}")};
    const char *want[4] = {"s32[<=3,<=4](2,3) {{-1, -2, -3}, {-4, -5, -6}}",
                           "s32[<=3,<=4](2,3) {{-1, -2, -3}, {-4, -5, -6}}",
                           ("s32[<=3,<=4](3,4) {{-1, -2, -3, -4}, {-5, -6, -7, -8}, "
                            "{-9, -10, -11, -12}}"),
                           "s32[<=3,<=4](0,4) {}"};
    for (int i = 0; i < 4; i++) {
        run_expect(text, &a[i], 1, want[i]);
        cxla_literal_free(a[i]);
    }
    /* Too large, wrong type, wrong rank. */
    cxla_module *m = module_of(text);
    const char *bad[3] = {"s32[4,1] {{1}, {2}, {3}, {4}}", "f32[1,1] {{1}}", "s32[2] {1, 2}"};
    for (int i = 0; i < 3 && m; i++) {
        cxla_literal *b = lit(bad[i]), *r = NULL;
        const cxla_literal *args[] = {b};
        if (b) CHECK_ERROR_HAS(interp_run_module(m, NULL, args, 1, &r), "argument 0");
        cxla_literal_free(b);
    }
    cxla_module_destroy(m);
}

/* Static values take the driver's fast path: no dynamic handling at all. */
static void test_fast_path(void) {
    const char *text = "HloModule fast\n"
                       "ENTRY main {\n"
                       "  x = f32[4] parameter(0)\n"
                       "  y = f32[<=4] parameter(1)\n"
                       "  a = f32[4] add(x, x)\n"
                       "  b = f32[<=4] add(y, y)\n"
                       "  ROOT t = (f32[4], f32[<=4]) tuple(a, b)\n"
                       "}\n";
    cxla_module *m = module_of(text);
    cxla_literal *x = lit("f32[4] {1, 2, 3, 4}"), *y = lit("f32[<=4](2) {1, 2}");
    if (m && x && y) {
        const cxla_instr *a = cxla_computation_find_instr(m->entry, "a");
        const cxla_instr *b = cxla_computation_find_instr(m->entry, "b");
        const cxla_literal *xs[] = {x, x}, *ys[] = {y, y};
        if (a) CHECK(!interp_dynamic_maybe(a, xs));
        if (b) CHECK(interp_dynamic_maybe(b, ys));
        cxla_literal *args[] = {x, y};
        run_expect(text, args, 2, "( f32[4] {2, 4, 6, 8}, f32[<=4](2) {2, 4} )");
    }
    cxla_literal_free(x);
    cxla_literal_free(y);
    cxla_module_destroy(m);
}

static void test_errors_name_the_instruction(void) {
    const char *text = "HloModule errors\n"
                       "ENTRY main {\n"
                       "  x = c64[<=8] parameter(0)\n"
                       "  ROOT f = c64[<=8] fft(x), fft_type=FFT, fft_length={8}\n"
                       "}\n";
    cxla_module *m = module_of(text);
    cxla_literal *x = lit("c64[<=8](3) {(1, 0), (2, 0), (3, 0)}"), *r = NULL;
    const cxla_literal *args[] = {x};
    if (m && x) {
        const char *msg = CHECK_ERROR(interp_run_module(m, NULL, args, 1, &r));
        CHECK(strstr(msg, "f (fft, line 4)") != NULL);
        CHECK(strstr(msg, "fft_length") != NULL); /* 3 elements are no 8-point FFT */
    }
    cxla_literal_free(x);
    cxla_module_destroy(m);
    /* Shape inference at the cut sizes says what does not fit. */
    const char *t2 = "HloModule errors2\n"
                     "ENTRY main {\n"
                     "  x = f32[<=4] parameter(0)\n"
                     "  z = f32[] constant(0)\n"
                     "  ROOT p = f32[<=2] pad(x, z), padding=-2_0\n"
                     "}\n";
    m = module_of(t2);
    x = lit("f32[1] {1}");
    const cxla_literal *args2[] = {x};
    r = NULL;
    if (m && x) {
        const char *msg = CHECK_ERROR(interp_run_module(m, NULL, args2, 1, &r));
        CHECK(strstr(msg, "p (pad, line 5): at the operands' dynamic sizes: pad:") != NULL);
    }
    cxla_literal_free(x);
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_seed_example), TEST(test_garbage_padding_never_leaks), TEST(test_every_type),
          TEST(test_entry_arguments), TEST(test_fast_path), TEST(test_errors_name_the_instruction))
