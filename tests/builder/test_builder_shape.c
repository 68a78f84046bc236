/* Shape operations through the builder on the seeds' examples: Collapse, Reshape (in and
 * out of order, to and from scalars), Broadcast, BroadcastInDim, Concatenate, Slice,
 * DynamicSlice, DynamicUpdateSlice, Pad, Rev, Transpose, Tuple/GetTupleElement, Iota,
 * Get/SetDimensionSize; constants; and the errors. */
#include "builder_test_util.h"

/* The seeds' v = f32[4x2x3]. */
static const float seed_v[24] = {10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27,
                                 30, 31, 32, 35, 36, 37, 40, 41, 42, 45, 46, 47};

static cxla_op make_v(cxla_builder *b) {
    return cxla_constant_f32(b, 3, I64S(4, 2, 3), seed_v);
}

static void test_seed_collapse(void) {
    cxla_builder *b = new_builder("collapse012");
    cxla_collapse(make_v(b), I64S(0, 1, 2), 3);
    cxla_xla_computation *c = finish(b);
    expect_run(c, NOARGS,
               "f32[24] {10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27, 30, 31, 32, 35, 36, 37, "
               "40, 41, 42, 45, 46, 47}",
               NULL);
    CHECK_EQ_I64(count_op(c, CXLA_OP_RESHAPE), 1); /* Collapse lowers to reshape */
    cxla_xla_computation_free(c);
    /* The seeds print these two results under swapped names (v01 as f32[4x6], v12 as
     * f32[8x3]); their own definition (the collapsed dimensions become one of the product
     * size, in place) and XLA's implementation give {0,1} -> [8,3] and {1,2} -> [4,6].
     * docs/semantics.md records the erratum. */
    b = new_builder("collapse01");
    cxla_collapse(make_v(b), I64S(0, 1), 2);
    check_build_run(b, NOARGS,
                    "f32[8,3] { {10, 11, 12}, {15, 16, 17}, {20, 21, 22}, {25, 26, 27}, {30, 31, "
                    "32}, {35, 36, 37}, {40, 41, 42}, {45, 46, 47} }");
    b = new_builder("collapse12");
    cxla_collapse(make_v(b), I64S(1, 2), 2);
    check_build_run(b, NOARGS,
                    "f32[4,6] { {10, 11, 12, 15, 16, 17}, {20, 21, 22, 25, 26, 27}, {30, 31, 32, "
                    "35, 36, 37}, {40, 41, 42, 45, 46, 47} }");
    /* {1, 0} and {0, 2} are not valid dimension sets. */
    b = new_builder("collapse_bad");
    cxla_collapse(make_v(b), I64S(0, 2), 2);
    expect_build_error(b, "consecutive");
    b = new_builder("collapse_range");
    cxla_collapse(make_v(b), I64S(2, 3), 2);
    expect_build_error(b, "out of range");
}

static void test_seed_reshape(void) {
    cxla_builder *b = new_builder("v012_24");
    cxla_reshape_with_order(make_v(b), I64S(0, 1, 2), 3, I64S(24), 1);
    cxla_xla_computation *c = finish(b);
    expect_run(c, NOARGS,
               "f32[24] {10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27, 30, 31, 32, 35, 36, 37, "
               "40, 41, 42, 45, 46, 47}",
               NULL);
    CHECK_EQ_I64(count_op(c, CXLA_OP_TRANSPOSE), 0); /* in order: no transpose */
    cxla_xla_computation_free(c);
    b = new_builder("v012_83");
    cxla_reshape_with_order(make_v(b), I64S(0, 1, 2), 3, I64S(8, 3), 2);
    check_build_run(b, NOARGS,
                    "f32[8,3] { {10, 11, 12}, {15, 16, 17}, {20, 21, 22}, {25, 26, 27}, {30, 31, "
                    "32}, {35, 36, 37}, {40, 41, 42}, {45, 46, 47} }");
    b = new_builder("v021_24");
    cxla_reshape_with_order(make_v(b), I64S(1, 2, 0), 3, I64S(24), 1);
    c = finish(b);
    expect_run(c, NOARGS,
               "f32[24] {10, 20, 30, 40, 11, 21, 31, 41, 12, 22, 32, 42, 15, 25, 35, 45, 16, 26, "
               "36, 46, 17, 27, 37, 47}",
               NULL);
    CHECK_EQ_I64(count_op(c, CXLA_OP_TRANSPOSE), 1); /* out of order: transpose + reshape */
    cxla_xla_computation_free(c);
    b = new_builder("v021_83");
    cxla_reshape_with_order(make_v(b), I64S(1, 2, 0), 3, I64S(8, 3), 2);
    check_build_run(b, NOARGS,
                    "f32[8,3] { {10, 20, 30}, {40, 11, 21}, {31, 41, 12}, {22, 32, 42}, {15, 25, "
                    "35}, {45, 16, 26}, {36, 46, 17}, {27, 37, 47} }");
    b = new_builder("v021_262");
    cxla_reshape_with_order(make_v(b), I64S(1, 2, 0), 3, I64S(2, 6, 2), 3);
    check_build_run(b, NOARGS,
                    "f32[2,6,2] { { {10, 20}, {30, 40}, {11, 21}, {31, 41}, {12, 22}, {32, 42} }, "
                    "{ {15, 25}, {35, 45}, {16, 26}, {36, 46}, {17, 27}, {37, 47} } }");
    /* Reshape(f32[1x1] {{5}}, {0,1}, {}) == 5; Reshape(5, {}, {1,1}) == f32[1x1] {{5}}. */
    b = new_builder("to_scalar");
    cxla_reshape_with_order(cxla_constant_f32(b, 2, I64S(1, 1), (const float[]){5}), I64S(0, 1), 2,
                            NULL, 0);
    check_build_run(b, NOARGS, "f32[] 5");
    b = new_builder("from_scalar");
    cxla_reshape_with_order(cxla_constant_r0(b, CXLA_F32, 5), NULL, 0, I64S(1, 1), 2);
    check_build_run(b, NOARGS, "f32[1,1] { {5} }");
    b = new_builder("reshape_bad");
    cxla_reshape(make_v(b), I64S(5, 5), 2);
    expect_build_error(b, "element counts differ");
    b = new_builder("reshape_order_bad");
    cxla_reshape_with_order(make_v(b), I64S(0, 0, 1), 3, I64S(24), 1);
    expect_build_error(b, "permutation");
}

static void test_seed_broadcast(void) {
    /* Broadcast(2.0f, {2, 3}) -> f32[2,3] of 2.0f. */
    cxla_builder *b = new_builder("broadcast");
    cxla_broadcast(cxla_constant_r0(b, CXLA_F32, 2), I64S(2, 3), 2);
    check_build_run(b, NOARGS, "f32[2,3] { {2, 2, 2}, {2, 2, 2} }");
    /* New dimensions go on the left. */
    b = new_builder("broadcast_left");
    cxla_broadcast(cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){1, 2}), I64S(3), 1);
    check_build_run(b, NOARGS, "s32[3,2] { {1, 2}, {1, 2}, {1, 2} }");
    /* BroadcastInDim: a vector into dimension 0 or 1; a size-1 dimension expanded. */
    b = new_builder("bid");
    cxla_broadcast_in_dim(cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){1, 2}), I64S(2, 3), 2,
                          I64S(0), 1);
    check_build_run(b, NOARGS, "s32[2,3] { {1, 1, 1}, {2, 2, 2} }");
    b = new_builder("bid_degenerate");
    cxla_broadcast_in_dim(cxla_constant_s32(b, 2, I64S(1, 2), (const int32_t[]){7, 8}),
                          I64S(3, 2, 2), 3, I64S(0, 2), 2);
    cxla_xla_computation *c = finish(b);
    expect_run(c, NOARGS,
               "s32[3,2,2] { { {7, 8}, {7, 8} }, { {7, 8}, {7, 8} }, { {7, 8}, {7, 8} } }", NULL);
    CHECK_EQ_I64(count_op(c, CXLA_OP_RESHAPE), 1);
    cxla_xla_computation_free(c);
    b = new_builder("bid_bad");
    cxla_broadcast_in_dim(cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){1, 2}), I64S(3), 1,
                          I64S(0), 1);
    expect_build_error(b, "must be 1 or the output size");
    b = new_builder("bid_order");
    cxla_broadcast_in_dim(cxla_constant_s32(b, 2, I64S(2, 2), (const int32_t[]){1, 2, 3, 4}),
                          I64S(2, 2), 2, I64S(1, 0), 2);
    expect_build_error(b, "strictly increasing");
}

static void test_seed_concatenate(void) {
    cxla_builder *b = new_builder("concat1");
    cxla_op parts[3] = {cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){2, 3}),
                        cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){4, 5}),
                        cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){6, 7})};
    cxla_concat_in_dim(b, parts, 3, 0);
    check_build_run(b, NOARGS, "s32[6] {2, 3, 4, 5, 6, 7}");
    b = new_builder("concat2");
    cxla_op ab[2] = {cxla_constant_s32(b, 2, I64S(3, 2), (const int32_t[]){1, 2, 3, 4, 5, 6}),
                     cxla_constant_s32(b, 2, I64S(1, 2), (const int32_t[]){7, 8})};
    cxla_concatenate(b, ab, 2, 0); /* the seeds' name */
    check_build_run(b, NOARGS, "s32[4,2] { {1, 2}, {3, 4}, {5, 6}, {7, 8} }");
    b = new_builder("concat_scalar");
    cxla_op s[2] = {cxla_constant_r0(b, CXLA_S32, 1), cxla_constant_r0(b, CXLA_S32, 2)};
    cxla_concat_in_dim(b, s, 2, 0); /* rank-0 values cannot be concatenated */
    expect_build_error(b, "ConcatInDim");
}

static const float seed_b[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

static void test_seed_slices(void) {
    cxla_builder *b = new_builder("slice1");
    cxla_slice(cxla_constant_f32(b, 1, I64S(5), seed_b), I64S(2), I64S(4), NULL, 1);
    check_build_run(b, NOARGS, "f32[2] {2, 3}");
    b = new_builder("slice2");
    cxla_slice(cxla_constant_f32(b, 2, I64S(4, 3), seed_b), I64S(2, 1), I64S(4, 3), NULL, 2);
    check_build_run(b, NOARGS, "f32[2,2] { {7, 8}, {10, 11} }");
    b = new_builder("slice_strided");
    cxla_slice_in_dim(cxla_constant_f32(b, 2, I64S(4, 3), seed_b), 0, 3, 2, 1);
    check_build_run(b, NOARGS, "f32[4,2] { {0, 2}, {3, 5}, {6, 8}, {9, 11} }");
    b = new_builder("slice_bad");
    cxla_slice(cxla_constant_f32(b, 1, I64S(5), seed_b), I64S(2), I64S(6), NULL, 1);
    expect_build_error(b, "Slice");

    /* DynamicSlice(a, {2}, {2}) and DynamicSlice(b, {2, 1}, {2, 2}); scalar and vector
     * index forms. */
    b = new_builder("ds1");
    cxla_op s = cxla_parameter(b, 0, &SCALAR(CXLA_S32), "s");
    cxla_dynamic_slice(cxla_constant_f32(b, 1, I64S(5), seed_b), &s, 1, I64S(2), 1);
    check_build_run(b, ARGS("s32[] 2"), "f32[2] {2, 3}");
    b = new_builder("ds2");
    cxla_op sv = cxla_parameter(b, 0, &SHAPE(CXLA_S32, 2), "s");
    cxla_dynamic_slice_vector(cxla_constant_f32(b, 2, I64S(4, 3), seed_b), sv, I64S(2, 2), 2);
    cxla_xla_computation *c = finish(b);
    expect_run(c, ARGS("s32[2] {2, 1}"), "f32[2,2] { {7, 8}, {10, 11} }", NULL);
    /* Out of range starts are clamped (the newer seed). */
    expect_run(c, ARGS("s32[2] {7, -3}"), "f32[2,2] { {6, 7}, {9, 10} }", NULL);
    cxla_xla_computation_free(c);

    /* DynamicUpdateSlice(a, {5, 6}, {2}) and the 2-d example. */
    b = new_builder("dus1");
    s = cxla_constant_r0(b, CXLA_S32, 2);
    cxla_dynamic_update_slice(cxla_constant_f32(b, 1, I64S(5), seed_b),
                              cxla_constant_f32(b, 1, I64S(2), (const float[]){5, 6}), &s, 1);
    check_build_run(b, NOARGS, "f32[5] {0, 1, 5, 6, 4}");
    b = new_builder("dus2");
    sv = cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){1, 1});
    cxla_dynamic_update_slice_vector(
        cxla_constant_f32(b, 2, I64S(4, 3), seed_b),
        cxla_constant_f32(b, 2, I64S(3, 2), (const float[]){12, 13, 14, 15, 16, 17}), sv);
    check_build_run(b, NOARGS, "f32[4,3] { {0, 1, 2}, {3, 12, 13}, {6, 14, 15}, {9, 16, 17} }");
    b = new_builder("ds_bad");
    sv = cxla_constant_s32(b, 1, I64S(3), (const int32_t[]){1, 1, 1});
    cxla_dynamic_slice_vector(cxla_constant_f32(b, 2, I64S(4, 3), seed_b), sv, I64S(2, 2), 2);
    expect_build_error(b, "vector of 2 integers");
}

static void test_pad_rev_transpose(void) {
    /* Edge, negative edge and interior padding. */
    cxla_builder *b = new_builder("pad");
    cxla_padding_config_dim cfg[2] = {{1, 0, 1}, {-1, 2, 0}};
    cxla_pad(cxla_constant_f32(b, 2, I64S(2, 3), (const float[]){1, 2, 3, 4, 5, 6}),
             cxla_constant_r0(b, CXLA_F32, 0), cfg, 2);
    check_build_run(b, NOARGS,
                    "f32[4,4] { {0, 0, 0, 0}, {2, 3, 0, 0}, {0, 0, 0, 0}, {5, 6, 0, 0} }");
    b = new_builder("pad_in_dim");
    cxla_pad_in_dim(cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){1, 2}),
                    cxla_constant_r0(b, CXLA_S32, 9), 0, 2, 1);
    check_build_run(b, NOARGS, "s32[5] {9, 9, 1, 2, 9}");
    b = new_builder("pad_bad");
    cxla_pad_in_dim(cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){1, 2}),
                    cxla_constant_r0(b, CXLA_F32, 9), 0, 2, 1);
    expect_build_error(b, "padding value");

    b = new_builder("rev");
    cxla_rev(cxla_constant_f32(b, 2, I64S(2, 3), (const float[]){1, 2, 3, 4, 5, 6}), I64S(0, 1), 2);
    check_build_run(b, NOARGS, "f32[2,3] { {6, 5, 4}, {3, 2, 1} }");
    b = new_builder("transpose");
    cxla_transpose(cxla_constant_f32(b, 2, I64S(2, 3), (const float[]){1, 2, 3, 4, 5, 6}),
                   I64S(1, 0), 2);
    check_build_run(b, NOARGS, "f32[3,2] { {1, 4}, {2, 5}, {3, 6} }");
}

/* Seed: t = tuple(v, s); gettupleelement(t, 1) is s32 5. */
static void test_seed_tuple(void) {
    cxla_builder *b = new_builder("tuple");
    cxla_op v = cxla_iota_1d(b, CXLA_F32, 10);
    cxla_op s = cxla_constant_r0(b, CXLA_S32, 5);
    cxla_op t = cxla_tuple(b, (cxla_op[]){v, s}, 2);
    cxla_op e = cxla_get_tuple_element(t, 1);
    const cxla_shape *es = NULL;
    CHECK_OK(cxla_op_get_shape(e, &es));
    CHECK(es && es->type == CXLA_S32 && es->rank == 0);
    cxla_xla_computation *c = NULL;
    CHECK_OK(cxla_builder_build_with_root(b, t, &c));
    cxla_builder_destroy(b);
    expect_run(c, NOARGS, "(f32[10] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, s32[] 5)", NULL);
    cxla_xla_computation_free(c);
    b = new_builder("gte");
    t = cxla_tuple(b, (cxla_op[]){cxla_iota_1d(b, CXLA_F32, 10), cxla_constant_r0(b, CXLA_S32, 5)},
                   2);
    cxla_get_tuple_element(t, 1);
    check_build_run(b, NOARGS, "s32[] 5");
    b = new_builder("gte_bad");
    cxla_get_tuple_element(cxla_tuple(b, NULL, 0), 0);
    expect_build_error(b, "out of range");
}

/* Seed: Iota(s32[4, 8], 0) and Iota(s32[4, 8], 1); floats are converted integers. */
static void test_seed_iota(void) {
    cxla_builder *b = new_builder("iota0");
    cxla_iota(b, &SHAPE(CXLA_S32, 4, 8), 0);
    check_build_run(b, NOARGS,
                    "s32[4,8] { {0,0,0,0,0,0,0,0}, {1,1,1,1,1,1,1,1}, {2,2,2,2,2,2,2,2}, "
                    "{3,3,3,3,3,3,3,3} }");
    b = new_builder("iota1");
    cxla_iota(b, &SHAPE(CXLA_S32, 4, 8), 1);
    check_build_run(b, NOARGS,
                    "s32[4,8] { {0,1,2,3,4,5,6,7}, {0,1,2,3,4,5,6,7}, {0,1,2,3,4,5,6,7}, "
                    "{0,1,2,3,4,5,6,7} }");
    b = new_builder("iota_f");
    cxla_iota_1d(b, CXLA_BF16, 4);
    check_build_run(b, NOARGS, "bf16[4] {0, 1, 2, 3}");
    b = new_builder("iota_bad");
    cxla_iota(b, &SHAPE(CXLA_S32, 4), 1);
    expect_build_error(b, "iota_dimension");
}

/* Seed: GetDimensionSize and SetDimensionSize; the seed's sums: 1..10 with its size set
 * to 5 sums to 15 and multiplies to 120, set to 6 it sums to 21. */
static void test_seed_dimension_size(void) {
    cxla_builder *b = new_builder("get_size");
    cxla_get_dimension_size(cxla_parameter(b, 0, &SHAPE(CXLA_F32, 3, 7), "x"), 1);
    check_build_run(b, ARGS("f32[3,7] { {0,0,0,0,0,0,0}, {0,0,0,0,0,0,0}, {0,0,0,0,0,0,0} }"),
                    "s32[] 7");
    static const struct {
        int size;
        bool mul;
        const char *expected;
    } cases[] = {{5, false, "f32[] 15"}, {5, true, "f32[] 120"}, {6, false, "f32[] 21"}};
    cxla_xla_computation *add = scalar_comp(CXLA_F32, cxla_add, "add");
    cxla_xla_computation *mul = scalar_comp(CXLA_F32, cxla_mul, "mul");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        b = new_builder("set_size");
        cxla_op v = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 10), "v");
        cxla_op padded =
            cxla_set_dimension_size(v, cxla_constant_r0(b, CXLA_S32, cases[i].size), 0);
        const cxla_shape *ps = NULL;
        CHECK_OK(cxla_op_get_shape(padded, &ps));
        CHECK(ps && ps->dims[0] == 10 && ps->dynamic && ps->dynamic[0]); /* f32[<=10] */
        if (cases[i].mul)
            cxla_reduce_all(padded, cxla_constant_r0(b, CXLA_F32, 1), mul);
        else
            cxla_reduce_all(padded, cxla_zero(b, CXLA_F32), add);
        check_build_run(b, ARGS("f32[10] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}"), cases[i].expected);
    }
    cxla_xla_computation_free(add);
    cxla_xla_computation_free(mul);
    b = new_builder("set_size_bad");
    cxla_set_dimension_size(cxla_iota_1d(b, CXLA_F32, 10), cxla_constant_r0(b, CXLA_F32, 5), 0);
    expect_build_error(b, "s32[]");
}

static void test_constants(void) {
    cxla_builder *b = new_builder("extremes");
    cxla_tuple(b,
               (cxla_op[]){cxla_min_value(b, CXLA_F32), cxla_max_value(b, CXLA_F32),
                           cxla_min_value(b, CXLA_S8), cxla_max_value(b, CXLA_U16),
                           cxla_max_value(b, CXLA_F8E4M3FN), cxla_min_value(b, CXLA_PRED),
                           cxla_zero(b, CXLA_S64), cxla_one(b, CXLA_BF16),
                           cxla_max_value(b, CXLA_S64), cxla_min_value(b, CXLA_F8E4M3FNUZ)},
               10);
    check_build_run(b, NOARGS,
                    "(f32[] -inf, f32[] inf, s8[] -128, u16[] 65535, f8e4m3fn[] 448, pred[] "
                    "false, s64[] 0, bf16[] 1, s64[] 9223372036854775807, f8e4m3fnuz[] -240)");
    /* A literal in a column-major layout becomes a constant in the default layout. */
    cxla_literal *l = lit("f32[2,2] { {1, 2}, {3, 4} }"), *cm = NULL;
    cxla_layout col = {.minor_to_major = (int64_t[]){0, 1}};
    CHECK_OK(cxla_literal_relayout(l, &col, &cm));
    b = new_builder("literal");
    cxla_constant_literal(b, cm);
    cxla_literal_free(l);
    cxla_literal_free(cm);
    check_build_run(b, NOARGS, "f32[2,2] { {1, 2}, {3, 4} }");
    /* Tuple constants build and print (the interpreter does not run them yet). */
    l = lit("(f32[2] {1, 2}, s32[] 3)");
    b = new_builder("tuple_literal");
    cxla_constant_literal(b, l);
    cxla_literal_free(l);
    cxla_xla_computation *c = finish(b);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "constant(( {1, 2}, 3 ))"));
    free(text);
    cxla_xla_computation_free(c);
    b = new_builder("const_bad");
    cxla_constant_array(b, CXLA_F32, 1, I64S(2), NULL);
    expect_build_error(b, "data is NULL");
    b = new_builder("const_bad2");
    cxla_max_value(b, CXLA_C64);
    expect_build_error(b, "highest");
    b = new_builder("const_bad3");
    cxla_constant_literal(b, NULL);
    expect_build_error(b, "NULL");
}

TEST_MAIN(TEST(test_seed_collapse), TEST(test_seed_reshape), TEST(test_seed_broadcast),
          TEST(test_seed_concatenate), TEST(test_seed_slices), TEST(test_pad_rev_transpose),
          TEST(test_seed_tuple), TEST(test_seed_iota), TEST(test_seed_dimension_size),
          TEST(test_constants))
