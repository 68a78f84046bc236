/* Element-wise operations through the builder: the seeds' examples (ConvertElementType,
 * Select with array and scalar predicates, Clamp with scalar bounds), XLA's broadcasting
 * rules for binary operations, comparisons with and without total order, every unary
 * function, map, bitcast and precision conversions, and their errors. */
#include <math.h>

#include "builder_test_util.h"

/* Seed: let a: s32[3] = {0, 1, 2}; convert(a, f32) == f32[3]{0.0, 1.0, 2.0}. */
static void test_seed_convert(void) {
    cxla_builder *b = new_builder("convert");
    cxla_convert_element_type(cxla_constant_s32(b, 1, I64S(3), (const int32_t[]){0, 1, 2}),
                              CXLA_F32);
    check_build_run(b, NOARGS, "f32[3] {0, 1, 2}");

    b = new_builder("convert_bad");
    cxla_convert_element_type(cxla_constant_r0(b, CXLA_F32, 1), CXLA_TUPLE);
    expect_build_error(b, "ConvertElementType");
}

/* Seed: Select(pred, v1, v2) with a pred array and with a scalar pred. */
static void test_seed_select(void) {
    cxla_builder *b = new_builder("select");
    cxla_op p = cxla_parameter(b, 0, &SHAPE(CXLA_PRED, 4), "pred");
    cxla_op v1 = cxla_constant_s32(b, 1, I64S(4), (const int32_t[]){1, 2, 3, 4});
    cxla_op v2 = cxla_constant_s32(b, 1, I64S(4), (const int32_t[]){100, 200, 300, 400});
    cxla_select(p, v1, v2);
    check_build_run(b, ARGS("pred[4] {1, 0, 0, 1}"), "s32[4] {1, 200, 300, 4}");

    b = new_builder("select_scalar");
    p = cxla_parameter(b, 0, &SCALAR(CXLA_PRED), "pred");
    v1 = cxla_constant_s32(b, 1, I64S(4), (const int32_t[]){1, 2, 3, 4});
    v2 = cxla_constant_s32(b, 1, I64S(4), (const int32_t[]){100, 200, 300, 400});
    cxla_select(p, v1, v2);
    cxla_xla_computation *c = finish(b);
    expect_run(c, ARGS("pred[] true"), "s32[4] {1, 2, 3, 4}", NULL);
    expect_run(c, ARGS("pred[] false"), "s32[4] {100, 200, 300, 400}", NULL);
    CHECK_EQ_I64(count_op(c, CXLA_OP_BROADCAST), 1); /* the scalar pred, broadcast */
    cxla_xla_computation_free(c);

    b = new_builder("select_bad");
    cxla_select(cxla_constant_r0(b, CXLA_S32, 1), cxla_constant_r0(b, CXLA_S32, 1),
                cxla_constant_r0(b, CXLA_S32, 2));
    expect_build_error(b, "pred");
}

/* Seed: Clamp(min, operand, max) with operand s32[3]{-1, 5, 9}, min 0, max 6 -> {0, 5, 6}. */
static void test_seed_clamp(void) {
    cxla_builder *b = new_builder("clamp");
    cxla_op x = cxla_constant_s32(b, 1, I64S(3), (const int32_t[]){-1, 5, 9});
    cxla_clamp(cxla_constant_r0(b, CXLA_S32, 0), x, cxla_constant_r0(b, CXLA_S32, 6));
    cxla_xla_computation *c = finish(b);
    expect_run(c, NOARGS, "s32[3] {0, 5, 6}", NULL);
    CHECK_EQ_I64(count_op(c, CXLA_OP_BROADCAST), 2);
    cxla_xla_computation_free(c);

    /* Array bounds, and floats with NaN. */
    b = new_builder("clamp_f");
    cxla_op lo = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 3), "lo");
    x = cxla_parameter(b, 1, &SHAPE(CXLA_F32, 3), "x");
    cxla_op hi = cxla_parameter(b, 2, &SHAPE(CXLA_F32, 3), "hi");
    cxla_clamp(lo, x, hi);
    check_build_run(b, ARGS("f32[3] {0, 0, -1}", "f32[3] {-5, 0.5, 7}", "f32[3] {1, 1, 2}"),
                    "f32[3] {0, 0.5, 2}");

    b = new_builder("clamp_bad");
    cxla_clamp(cxla_constant_r0(b, CXLA_S32, 0), cxla_constant_r0(b, CXLA_F32, 1),
               cxla_constant_r0(b, CXLA_S32, 6));
    expect_build_error(b, "Clamp");
}

/* Binary operations: same shapes, scalars, degenerate dimensions, broadcast_dimensions. */
static void test_binary_broadcasting(void) {
    /* Matrix + vector along dimension 1 and along dimension 0 (the seed's use case). */
    cxla_builder *b = new_builder("bcast");
    cxla_op m = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2, 3), "m");
    cxla_op v = cxla_parameter(b, 1, &SHAPE(CXLA_F32, 3), "v");
    cxla_add_bcast(m, v, I64S(1), 1);
    check_build_run(b, ARGS("f32[2,3] { {1, 2, 3}, {4, 5, 6} }", "f32[3] {10, 20, 30}"),
                    "f32[2,3] { {11, 22, 33}, {14, 25, 36} }");
    b = new_builder("bcast0");
    m = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2, 3), "m");
    v = cxla_parameter(b, 1, &SHAPE(CXLA_F32, 2), "v");
    cxla_sub_bcast(v, m, I64S(0), 1); /* the lower-rank operand on the left */
    check_build_run(b, ARGS("f32[2,3] { {1, 2, 3}, {4, 5, 6} }", "f32[2] {10, 20}"),
                    "f32[2,3] { {9, 8, 7}, {16, 15, 14} }");

    /* Degenerate dimensions: [2,1] * [1,3] -> [2,3] (reshape + broadcast each side). */
    b = new_builder("degenerate");
    cxla_op c1 = cxla_parameter(b, 0, &SHAPE(CXLA_S32, 2, 1), "c");
    cxla_op r1 = cxla_parameter(b, 1, &SHAPE(CXLA_S32, 1, 3), "r");
    cxla_mul(c1, r1);
    cxla_xla_computation *c = finish(b);
    expect_run(c, ARGS("s32[2,1] { {2}, {3} }", "s32[1,3] { {1, 10, 100} }"),
               "s32[2,3] { {2, 20, 200}, {3, 30, 300} }", NULL);
    CHECK_EQ_I64(count_op(c, CXLA_OP_RESHAPE), 2);
    CHECK_EQ_I64(count_op(c, CXLA_OP_BROADCAST), 2);
    cxla_xla_computation_free(c);

    /* InDim broadcasting then degenerate: [2,1] with {0,2} into [2,3,4]. */
    b = new_builder("indim_degenerate");
    cxla_op s = cxla_parameter(b, 0, &SHAPE(CXLA_S32, 2, 1), "s");
    cxla_op l = cxla_parameter(b, 1, &SHAPE(CXLA_S32, 2, 3, 4), "l");
    cxla_op r = cxla_add_bcast(s, l, I64S(0, 2), 2);
    const cxla_shape *rs = NULL;
    CHECK_OK(cxla_op_get_shape(r, &rs));
    CHECK(rs && rs->rank == 3 && rs->dims[0] == 2 && rs->dims[1] == 3 && rs->dims[2] == 4);
    check_build_run(b,
                    ARGS("s32[2,1] { {100}, {200} }",
                         "s32[2,3,4] { { {0,1,2,3}, {4,5,6,7}, {8,9,10,11} }, { {0,1,2,3}, "
                         "{4,5,6,7}, {8,9,10,11} } }"),
                    "s32[2,3,4] { { {100,101,102,103}, {104,105,106,107}, {108,109,110,111} }, "
                    "{ {200,201,202,203}, {204,205,206,207}, {208,209,210,211} } }");

    /* Scalars on either side; remainder takes the sign of the dividend. */
    b = new_builder("rem");
    cxla_rem(cxla_constant_s32(b, 1, I64S(4), (const int32_t[]){7, -7, 7, -7}),
             cxla_constant_s32(b, 1, I64S(4), (const int32_t[]){3, 3, -3, -3}));
    check_build_run(b, NOARGS, "s32[4] {1, -1, 1, -1}");
    b = new_builder("scalar_left");
    cxla_div(cxla_constant_r0(b, CXLA_F32, 1), cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2), "x"));
    check_build_run(b, ARGS("f32[2] {4, -0}"), "f32[2] {0.25, -inf}");

    /* Every binary arithmetic operation on one pair of inputs. */
    struct {
        cxla_op (*fn)(cxla_op, cxla_op);
        const char *expected;
    } cases[] = {
        {cxla_add, "s32[3] {13, -3, 6}"},
        {cxla_sub, "s32[3] {7, -13, 2}"},
        {cxla_mul, "s32[3] {30, -40, 8}"},
        {cxla_div, "s32[3] {3, -1, 2}"},
        {cxla_max, "s32[3] {10, 5, 4}"},
        {cxla_min, "s32[3] {3, -8, 2}"},
        {cxla_and, "s32[3] {2, 0, 0}"},
        {cxla_or, "s32[3] {11, -3, 6}"},
        {cxla_xor, "s32[3] {9, -3, 6}"},
        {cxla_pow, "s32[3] {1000, -32768, 16}"},
        {cxla_shift_left, "s32[3] {80, -256, 16}"},
        {cxla_shift_right_arithmetic, "s32[3] {1, -1, 1}"},
        {cxla_shift_right_logical, "s32[3] {1, 134217727, 1}"},
    };
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(cases); i++) {
        b = new_builder("binop");
        cxla_op x = cxla_constant_s32(b, 1, I64S(3), (const int32_t[]){10, -8, 4});
        cxla_op y = cxla_constant_s32(b, 1, I64S(3), (const int32_t[]){3, 5, 2});
        cases[i].fn(x, y);
        check_build_run(b, NOARGS, cases[i].expected);
    }
    b = new_builder("logical");
    cxla_op t = cxla_constant_array(b, CXLA_PRED, 1, I64S(4), (const uint8_t[]){1, 1, 0, 0});
    cxla_op f = cxla_constant_array(b, CXLA_PRED, 1, I64S(4), (const uint8_t[]){1, 0, 1, 0});
    cxla_tuple(b, (cxla_op[]){cxla_logical_and(t, f), cxla_logical_or(t, f), cxla_logical_not(t)},
               3);
    check_build_run(b, NOARGS,
                    "(pred[4] {1, 0, 0, 0}, pred[4] {1, 1, 1, 0}, pred[4] {0, 0, 1, 1})");
    b = new_builder("atan2_complex");
    cxla_op y = cxla_constant_f32(b, 1, I64S(2), (const float[]){1, -1});
    cxla_op x = cxla_constant_f32(b, 1, I64S(2), (const float[]){1, 0});
    cxla_tuple(b, (cxla_op[]){cxla_atan2(y, x), cxla_complex(x, y)}, 2);
    cxla_tolerance tol = {.atol = 1e-6, .rtol = 1e-6};
    c = finish(b);
    expect_run(c, NOARGS, "(f32[2] {0.785398163, -1.570796327}, c64[2] {(1, 1), (0, -1)})", &tol);
    cxla_xla_computation_free(c);
}

static void test_binary_errors(void) {
    struct {
        int64_t lr, rr;
        const int64_t *ld, *rd, *bd;
        int64_t nbd;
        const char *msg;
    } cases[] = {
        {1, 1, I64S(3), I64S(4), NULL, 0, "incompatible shapes f32[3] and f32[4]"},
        {2, 1, I64S(2, 3), I64S(3), NULL, 0, "equal rank"},
        {2, 1, I64S(2, 3), I64S(3), I64S(0), 1, "mismatch"},
        {2, 1, I64S(2, 3), I64S(3), I64S(2), 1, "out of range"},
        {2, 1, I64S(2, 3), I64S(3), I64S(0, 1), 2, "one per dimension"},
        {3, 2, I64S(2, 3, 4), I64S(4, 2), I64S(2, 0), 2, "strictly increasing"},
        {2, 2, I64S(2, 3), I64S(2, 3), I64S(1, 0), 2, "identity"},
    };
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(cases); i++) {
        cxla_builder *b = new_builder("binerr");
        cxla_shape ls = {.type = CXLA_F32, .rank = cases[i].lr, .dims = (int64_t *)cases[i].ld};
        cxla_shape rs = {.type = CXLA_F32, .rank = cases[i].rr, .dims = (int64_t *)cases[i].rd};
        cxla_add_bcast(cxla_parameter(b, 0, &ls, "l"), cxla_parameter(b, 1, &rs, "r"), cases[i].bd,
                       cases[i].nbd);
        expect_build_error(b, cases[i].msg);
    }
    cxla_builder *b = new_builder("types");
    cxla_add(cxla_constant_r0(b, CXLA_F32, 1), cxla_constant_r0(b, CXLA_S32, 1));
    expect_build_error(b, "same element type");
    b = new_builder("predsub");
    cxla_sub(cxla_constant_r0(b, CXLA_PRED, 1), cxla_constant_r0(b, CXLA_PRED, 1));
    expect_build_error(b, "Sub");
    b = new_builder("shift_f");
    cxla_shift_left(cxla_constant_r0(b, CXLA_F32, 1), cxla_constant_r0(b, CXLA_F32, 1));
    expect_build_error(b, "integer");
    b = new_builder("neg_count");
    cxla_add_bcast(cxla_constant_r0(b, CXLA_F32, 1), cxla_constant_r0(b, CXLA_F32, 1), NULL, -1);
    expect_build_error(b, "negative count");
}

/* Comparisons: every direction, IEEE vs total order on NaN and signed zeros. */
static void test_compare(void) {
    const char *x = "f32[5] {1, nan, -0, 2, -nan}", *y = "f32[5] {1, nan, 0, 1, 3}";
    struct {
        cxla_op (*fn)(cxla_op, cxla_op);
        const char *expected;
    } cases[] = {
        {cxla_eq, "pred[5] {1, 0, 1, 0, 0}"},
        {cxla_ne, "pred[5] {0, 1, 0, 1, 1}"},
        {cxla_ge, "pred[5] {1, 0, 1, 1, 0}"},
        {cxla_gt, "pred[5] {0, 0, 0, 1, 0}"},
        {cxla_le, "pred[5] {1, 0, 1, 0, 0}"},
        {cxla_lt, "pred[5] {0, 0, 0, 0, 0}"},
        {cxla_eq_total_order, "pred[5] {1, 1, 0, 0, 0}"},
        {cxla_ne_total_order, "pred[5] {0, 0, 1, 1, 1}"},
        {cxla_ge_total_order, "pred[5] {1, 1, 0, 1, 0}"},
        {cxla_gt_total_order, "pred[5] {0, 0, 0, 1, 0}"},
        {cxla_le_total_order, "pred[5] {1, 1, 1, 0, 1}"},
        {cxla_lt_total_order, "pred[5] {0, 0, 1, 0, 1}"},
    };
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(cases); i++) {
        cxla_builder *b = new_builder("cmp");
        cases[i].fn(cxla_parameter(b, 0, &SHAPE(CXLA_F32, 5), "x"),
                    cxla_parameter(b, 1, &SHAPE(CXLA_F32, 5), "y"));
        cxla_xla_computation *c = finish(b);
        expect_run(c, ARGS(x, y), cases[i].expected, NULL);
        char *text = hlo_text(c);
        CHECK(text && (strstr(text, "type=TOTALORDER") != NULL) == (i >= 6));
        free(text);
        cxla_xla_computation_free(c);
    }
    /* Integers: total order is the plain comparison (no type printed); broadcasting. */
    cxla_builder *b = new_builder("cmp_int");
    cxla_op m = cxla_constant_s32(b, 2, I64S(2, 2), (const int32_t[]){1, 5, 7, 2});
    cxla_lt_total_order_bcast(m, cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){3, 6}), I64S(1),
                              1);
    cxla_xla_computation *c = finish(b);
    expect_run(c, NOARGS, "pred[2,2] { {1, 1}, {0, 1} }", NULL);
    char *text = hlo_text(c);
    CHECK(text && !strstr(text, "type="));
    free(text);
    cxla_xla_computation_free(c);
    /* The general form: unsigned comparison of signed values is rejected; an explicit
     * default type prints nothing. */
    b = new_builder("cmp_general");
    cxla_compare(cxla_constant_r0(b, CXLA_U8, 200), cxla_constant_r0(b, CXLA_U8, 100), NULL, 0,
                 CXLA_COMPARE_GT, CXLA_COMPARISON_UNSIGNED);
    c = finish(b);
    expect_run(c, NOARGS, "pred[] true", NULL);
    text = hlo_text(c);
    CHECK(text && strstr(text, "direction=GT") && !strstr(text, "type="));
    free(text);
    cxla_xla_computation_free(c);
    b = new_builder("cmp_bad");
    cxla_compare(cxla_constant_r0(b, CXLA_S32, 1), cxla_constant_r0(b, CXLA_S32, 2), NULL, 0,
                 CXLA_COMPARE_EQ, CXLA_COMPARISON_TOTALORDER);
    expect_build_error(b, "TOTALORDER");
    b = new_builder("cmp_dir");
    cxla_compare(cxla_constant_r0(b, CXLA_S32, 1), cxla_constant_r0(b, CXLA_S32, 2), NULL, 0,
                 (cxla_comparison_direction)42, CXLA_COMPARISON_DEFAULT);
    expect_build_error(b, "direction");
}

/* Every unary function on sample values (f32 unless noted), against libm. */
static void test_unary(void) {
    const float xs[4] = {0.25f, 1.5f, -2.5f, 3.0f};
    struct {
        cxla_op (*fn)(cxla_op);
        double (*ref)(double);
        bool positive; /* domain: use |x| */
    } cases[] = {
        {cxla_abs, fabs, false},
        {cxla_neg, NULL, false},
        {cxla_floor, floor, false},
        {cxla_ceil, ceil, false},
        {cxla_round, round, false},
        {cxla_exp, exp, false},
        {cxla_expm1, expm1, false},
        {cxla_log, log, true},
        {cxla_log1p, log1p, true},
        {cxla_sqrt, sqrt, true},
        {cxla_cbrt, cbrt, false},
        {cxla_sin, sin, false},
        {cxla_cos, cos, false},
        {cxla_tan, tan, false},
        {cxla_tanh, tanh, false},
        {cxla_erf, erf, false},
        {cxla_atan, atan, false},
        {cxla_sinh, sinh, false},
        {cxla_cosh, cosh, false},
        {cxla_asinh, asinh, false},
        {cxla_acosh, acosh, true},
        {cxla_rsqrt, NULL, true},
        {cxla_logistic, NULL, false},
        {cxla_sign, NULL, false},
        {cxla_round_nearest_even, nearbyint, false},
    };
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(cases); i++) {
        float in[4], want[4];
        for (int k = 0; k < 4; k++) {
            in[k] = cases[i].positive ? fabsf(xs[k]) + (cases[i].fn == cxla_acosh ? 1.0f : 0.0f)
                                      : xs[k];
            double v = in[k];
            double r = cases[i].ref                   ? cases[i].ref(v)
                       : cases[i].fn == cxla_neg      ? -v
                       : cases[i].fn == cxla_rsqrt    ? 1.0 / sqrt(v)
                       : cases[i].fn == cxla_logistic ? 1.0 / (1.0 + exp(-v))
                                                      : (v > 0) - (v < 0);
            want[k] = (float)r;
        }
        cxla_builder *b = new_builder("unary");
        cases[i].fn(cxla_constant_f32(b, 1, I64S(4), in));
        cxla_xla_computation *c = finish(b);
        cxla_literal *out = run_args(c, NOARGS);
        for (int k = 0; out && k < 4; k++) {
            double got = 0;
            CHECK_OK(cxla_literal_get_f64(out, (int64_t[]){k}, &got));
            CHECK_MSG(fabs(got - want[k]) <= 1e-5 * (1 + fabs(want[k])),
                      "unary case %zu element %d: %g vs %g", i, k, got, (double)want[k]);
        }
        cxla_literal_free(out);
        cxla_xla_computation_free(c);
    }
    /* Integer and predicate functions, complex parts, is_finite, acos/asin/atanh. */
    cxla_builder *b = new_builder("unary_int");
    cxla_op v = cxla_constant_s32(b, 1, I64S(3), (const int32_t[]){0, 7, -1});
    cxla_op z = cxla_constant_f32(b, 1, I64S(3), (const float[]){0.5f, -0.5f, 0});
    cxla_tuple(b,
               (cxla_op[]){cxla_population_count(v), cxla_clz(v), cxla_not(v), cxla_abs(v),
                           cxla_sign(v), cxla_is_finite(cxla_div(z, z)), cxla_acos(z), cxla_asin(z),
                           cxla_atanh(z)},
               9);
    cxla_tolerance tol = {.atol = 1e-6, .rtol = 1e-6};
    cxla_xla_computation *c = finish(b);
    expect_run(c, NOARGS,
               "(s32[3] {0, 3, 32}, s32[3] {32, 29, 0}, s32[3] {-1, -8, 0}, s32[3] {0, 7, 1}, "
               "s32[3] {0, 1, -1}, pred[3] {1, 1, 0}, f32[3] {1.04719755, 2.0943951, 1.57079633}, "
               "f32[3] {0.523598776, -0.523598776, 0}, f32[3] {0.549306144, -0.549306144, 0})",
               &tol);
    cxla_xla_computation_free(c);
    b = new_builder("complex_parts");
    cxla_op w = cxla_parameter(b, 0, &SHAPE(CXLA_C64, 2), "w");
    cxla_tuple(b, (cxla_op[]){cxla_real(w), cxla_imag(w), cxla_conj(w), cxla_abs(w)}, 4);
    check_build_run(b, ARGS("c64[2] {(3, 4), (-1, 0)}"),
                    "(f32[2] {3, -1}, f32[2] {4, 0}, c64[2] {(3, -4), (-1, -0)}, f32[2] {5, 1})");
    b = new_builder("conj_real");
    cxla_conj(cxla_constant_r0(b, CXLA_F32, 1));
    expect_build_error(b, "Conj");
    b = new_builder("barrier");
    cxla_op t = cxla_tuple(b, (cxla_op[]){cxla_constant_r0(b, CXLA_F32, 1)}, 1);
    cxla_optimization_barrier(t);
    check_build_run(b, NOARGS, "(f32[] 1)");
}

/* Map: a scalar function over arrays; scalars broadcast; the seed's operands. */
static void test_map(void) {
    cxla_builder *fb = new_builder("fma");
    cxla_shape s = SCALAR(CXLA_F32);
    cxla_op a = cxla_parameter(fb, 0, &s, "a"), b1 = cxla_parameter(fb, 1, &s, "b"),
            c1 = cxla_parameter(fb, 2, &s, "c");
    cxla_add(cxla_mul(a, b1), c1);
    cxla_xla_computation *fma = finish(fb);
    cxla_builder *b = new_builder("map");
    cxla_op ops[3] = {cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2, 2), "x"),
                      cxla_parameter(b, 1, &SHAPE(CXLA_F32, 2, 2), "y"),
                      cxla_constant_r0(b, CXLA_F32, 0.5)};
    cxla_map(b, ops, 3, fma, NULL, 0);
    cxla_xla_computation *c = finish(b);
    expect_run(c, ARGS("f32[2,2] { {1, 2}, {3, 4} }", "f32[2,2] { {10, 20}, {30, 40} }"),
               "f32[2,2] { {10.5, 40.5}, {90.5, 160.5} }", NULL);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "dimensions={0,1}") && strstr(text, "to_apply=fma"));
    free(text);
    cxla_xla_computation_free(c);
    b = new_builder("map_bad");
    cxla_op x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2), "x");
    cxla_map(b, &x, 1, fma, NULL, 0); /* 1 operand for a 3-parameter function */
    expect_build_error(b, "Map");
    cxla_xla_computation_free(fma);
}

static void test_bitcast_and_precision(void) {
    cxla_builder *b = new_builder("bitcast");
    cxla_op x = cxla_constant_f32(b, 1, I64S(2), (const float[]){1.0f, -2.0f});
    cxla_tuple(
        b,
        (cxla_op[]){
            cxla_bitcast_convert_type(x, CXLA_S32), cxla_bitcast_convert_type(x, CXLA_U16),
            cxla_reduce_precision(
                cxla_constant_f32(b, 1, I64S(2), (const float[]){1.00048828125f, 70000}), 5, 10)},
        3);
    check_build_run(b, NOARGS,
                    "(s32[2] {1065353216, -1073741824}, u16[2,2] { {0, 16256}, {0, 49152} }, "
                    "f32[2] {1, inf})");
    b = new_builder("bitcast_bad");
    cxla_bitcast_convert_type(cxla_constant_r0(b, CXLA_F32, 1), CXLA_C64);
    expect_build_error(b, "complex");
}

TEST_MAIN(TEST(test_seed_convert), TEST(test_seed_select), TEST(test_seed_clamp),
          TEST(test_binary_broadcasting), TEST(test_binary_errors), TEST(test_compare),
          TEST(test_unary), TEST(test_map), TEST(test_bitcast_and_precision))
