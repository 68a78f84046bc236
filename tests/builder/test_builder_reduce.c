/* Reductions, windows, sorting, top-k, gather and scatter through the builder, on the
 * seeds' examples: Reduce (1-D, the 3-D array over each dimension set, variadic argmax),
 * ReduceWindow (the 4x6 max pool, the min over [10000 ... 1] with VALID and SAME),
 * SelectAndScatter (an element selected by two windows), Sort (three operands), TopK,
 * Gather (batched dynamic slices, gather_nd) and Scatter. */
#include "builder_test_util.h"

/* Seed: a 1-D reduce of [10, 11, 12, 13] with add. */
static void test_seed_reduce_1d(void) {
    cxla_xla_computation *add = scalar_comp(CXLA_S32, cxla_add, "add");
    cxla_builder *b = new_builder("reduce1d");
    cxla_reduce(cxla_constant_s32(b, 1, I64S(4), (const int32_t[]){10, 11, 12, 13}),
                cxla_zero(b, CXLA_S32), add, I64S(0), 1);
    check_build_run(b, NOARGS, "s32[] 46");
    cxla_xla_computation_free(add);
}

/* Seed: the 3-D array (4, 2, 3) with 1..6 replicated along dimension 0. */
static void test_seed_reduce_3d(void) {
    cxla_xla_computation *add = scalar_comp(CXLA_F32, cxla_add, "add");
    float v[24];
    for (int i = 0; i < 24; i++) v[i] = (float)(i % 6 + 1);
    struct {
        const int64_t *dims;
        int64_t n;
        const char *expected;
    } cases[] = {
        {I64S(0), 1, "f32[2,3] { {4, 8, 12}, {16, 20, 24} }"},
        {I64S(2), 1, "f32[4,2] { {6, 15}, {6, 15}, {6, 15}, {6, 15} }"},
        {I64S(0, 1), 2, "f32[3] {20, 28, 36}"},
        {I64S(0, 1, 2), 3, "f32[] 84"},
        {I64S(1, 0), 2, "f32[3] {20, 28, 36}"}, /* unordered */
    };
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(cases); i++) {
        cxla_builder *b = new_builder("reduce3d");
        cxla_reduce(cxla_constant_f32(b, 3, I64S(4, 2, 3), v), cxla_zero(b, CXLA_F32), add,
                    cases[i].dims, cases[i].n);
        check_build_run(b, NOARGS, cases[i].expected);
    }
    cxla_builder *b = new_builder("reduce_all");
    cxla_reduce_all(cxla_constant_f32(b, 3, I64S(4, 2, 3), v), cxla_zero(b, CXLA_F32), add);
    check_build_run(b, NOARGS, "f32[] 84");
    b = new_builder("reduce_bad");
    cxla_reduce(cxla_constant_f32(b, 3, I64S(4, 2, 3), v), cxla_zero(b, CXLA_F32), add, I64S(3), 1);
    expect_build_error(b, "Reduce");
    b = new_builder("reduce_init");
    cxla_reduce(cxla_constant_f32(b, 3, I64S(4, 2, 3), v), cxla_zero(b, CXLA_S32), add, I64S(0), 1);
    expect_build_error(b, "Reduce");
    cxla_xla_computation_free(add);
}

/* Seed: variadic reduce computing max and argmax: f(max, argmax, value, index) returns
 * (value, index) when value >= max. */
static void test_seed_variadic_argmax(void) {
    cxla_builder *fb = new_builder("argmax");
    cxla_op mx = cxla_parameter(fb, 0, &SCALAR(CXLA_F32), "max");
    cxla_op am = cxla_parameter(fb, 1, &SCALAR(CXLA_S32), "argmax");
    cxla_op val = cxla_parameter(fb, 2, &SCALAR(CXLA_F32), "value");
    cxla_op idx = cxla_parameter(fb, 3, &SCALAR(CXLA_S32), "index");
    cxla_op take = cxla_ge(val, mx);
    cxla_tuple(fb, (cxla_op[]){cxla_select(take, val, mx), cxla_select(take, idx, am)}, 2);
    cxla_xla_computation *f = finish(fb);
    cxla_builder *b = new_builder("reduce_argmax");
    cxla_op x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 5), "x");
    cxla_op ops[2] = {x, cxla_iota_1d(b, CXLA_S32, 5)};
    cxla_op inits[2] = {cxla_min_value(b, CXLA_F32), cxla_constant_r0(b, CXLA_S32, -1)};
    cxla_reduce_variadic(b, ops, inits, 2, f, I64S(0), 1);
    check_build_run(b, ARGS("f32[5] {3, 9, -1, 9, 2}"), "(f32[] 9, s32[] 3)");
    cxla_xla_computation_free(f);
}

/* Seed: max-pool of a 4x6 input with 2x3 windows and strides, VALID, init MinValue. */
static void test_seed_reduce_window(void) {
    cxla_xla_computation *max = scalar_comp(CXLA_F32, cxla_max, "max");
    cxla_builder *b = new_builder("reduce_window_2x3");
    cxla_op input = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 4, 6), "input");
    cxla_reduce_window(input, cxla_min_value(b, CXLA_F32), max, I64S(2, 3), I64S(2, 3), 2,
                       CXLA_PADDING_VALID);
    check_build_run(b,
                    ARGS("f32[4,6] { {1, 9, 2, 3, 4, 5}, {6, 7, 8, 0, 1, 2}, {-1, -2, -3, -4, -5, "
                         "-6}, {-7, -8, -9, 10, -1, -2} }"),
                    "f32[2,2] { {9, 5}, {-1, 10} }");
    cxla_xla_computation_free(max);

    /* Seed: min over windows of 3 with stride 2 of [10000, 1000, 100, 10, 1]:
     * VALID -> [100, 1]; SAME pads with MAX_VALUE on both sides -> [1000, 10, 1]. */
    cxla_xla_computation *min = scalar_comp(CXLA_F32, cxla_min, "min");
    const float data[5] = {10000, 1000, 100, 10, 1};
    b = new_builder("min_valid");
    cxla_reduce_window(cxla_constant_f32(b, 1, I64S(5), data), cxla_max_value(b, CXLA_F32), min,
                       I64S(3), I64S(2), 1, CXLA_PADDING_VALID);
    check_build_run(b, NOARGS, "f32[2] {100, 1}");
    b = new_builder("min_same");
    cxla_reduce_window(cxla_constant_f32(b, 1, I64S(5), data), cxla_max_value(b, CXLA_F32), min,
                       I64S(3), I64S(2), 1, CXLA_PADDING_SAME);
    cxla_xla_computation *c = finish(b);
    expect_run(c, NOARGS, "f32[3] {1000, 10, 1}", NULL);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "window={size=3 stride=2 pad=1_1}"));
    free(text);
    cxla_xla_computation_free(c);

    /* General padding with dilations, variadic. */
    b = new_builder("rw_general");
    cxla_op x = cxla_constant_f32(b, 1, I64S(4), (const float[]){1, 2, 3, 4});
    cxla_op init = cxla_max_value(b, CXLA_F32);
    cxla_reduce_window_general(b, &x, &init, 1, min, I64S(2), I64S(1), I64S(2), I64S(1),
                               (const cxla_pad_pair[]){{1, 0}}, 1);
    /* base dilated: 1 _ 2 _ 3 _ 4, padded low by one: inf 1 inf 2 inf 3 inf 4 (the holes
     * take the init value); windows of 2 with stride 1. */
    check_build_run(b, NOARGS, "f32[7] {1, 1, 2, 2, 3, 3, 4}");
    b = new_builder("rw_bad");
    cxla_reduce_window(cxla_constant_f32(b, 1, I64S(5), data), cxla_max_value(b, CXLA_F32), min,
                       I64S(3), I64S(0), 1, CXLA_PADDING_SAME);
    expect_build_error(b, ">= 1");
    b = new_builder("rw_rank");
    cxla_reduce_window(cxla_constant_f32(b, 1, I64S(5), data), cxla_max_value(b, CXLA_F32), min,
                       I64S(3, 1), I64S(1, 1), 2, CXLA_PADDING_VALID);
    expect_build_error(b, "2 dimensions");
    cxla_xla_computation_free(min);
}

/* Seed: with overlapping windows an element may be selected twice; scatter adds the
 * sources (the seed's 9 selected by two windows receives 2 + 6 = 8). */
static void test_seed_select_and_scatter(void) {
    cxla_xla_computation *ge = scalar_comp(CXLA_F32, cxla_ge, "ge");
    cxla_xla_computation *add = scalar_comp(CXLA_F32, cxla_add, "add");
    cxla_builder *b = new_builder("sas");
    cxla_op operand = cxla_constant_f32(b, 2, I64S(1, 3), (const float[]){1, 9, 2});
    cxla_op source = cxla_constant_f32(b, 2, I64S(1, 2), (const float[]){2, 6});
    cxla_select_and_scatter(operand, ge, I64S(1, 2), I64S(1, 1), 2, CXLA_PADDING_VALID, source,
                            cxla_zero(b, CXLA_F32), add);
    check_build_run(b, NOARGS, "f32[1,3] { {0, 8, 0} }");
    /* Non-overlapping 2x2 max pooling gradient, SAME padding on an odd size. */
    b = new_builder("sas_same");
    operand = cxla_constant_f32(b, 2, I64S(3, 3), (const float[]){1, 5, 2, 7, 3, 4, 0, 8, 6});
    source = cxla_constant_f32(b, 2, I64S(2, 2), (const float[]){10, 20, 30, 40});
    cxla_select_and_scatter(operand, ge, I64S(2, 2), I64S(2, 2), 2, CXLA_PADDING_SAME, source,
                            cxla_zero(b, CXLA_F32), add);
    /* SAME on 3 with window 2 stride 2: output 2, padding 0 low / 1 high. */
    check_build_run(b, NOARGS, "f32[3,3] { {0, 0, 0}, {10, 0, 20}, {0, 30, 40} }");
    b = new_builder("sas_bad");
    operand = cxla_constant_f32(b, 2, I64S(1, 3), (const float[]){1, 9, 2});
    source = cxla_constant_f32(b, 2, I64S(1, 3), (const float[]){2, 6, 1});
    cxla_select_and_scatter(operand, ge, I64S(1, 2), I64S(1, 1), 2, CXLA_PADDING_VALID, source,
                            cxla_zero(b, CXLA_F32), add);
    expect_build_error(b, "SelectAndScatter");
    cxla_xla_computation_free(ge);
    cxla_xla_computation_free(add);
}

/* Seed: operand0 = [3, 1], operand1 = [42, 50], operand2 = [-3.0, 1.1], comparing only
 * operand0 with less-than -> ([1, 3], [50, 42], [1.1, -3.0]). */
static void test_seed_sort(void) {
    cxla_builder *cb = new_builder("less_on_first");
    cxla_op p[6];
    cxla_type types[6] = {CXLA_S32, CXLA_S32, CXLA_S32, CXLA_S32, CXLA_F32, CXLA_F32};
    for (int i = 0; i < 6; i++) p[i] = cxla_parameter(cb, i, &SCALAR(types[i]), "p");
    cxla_lt(p[0], p[1]);
    cxla_xla_computation *cmp = finish(cb);
    cxla_builder *b = new_builder("sort3");
    cxla_op ops[3] = {cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){3, 1}),
                      cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){42, 50}),
                      cxla_constant_f32(b, 1, I64S(2), (const float[]){-3.0f, 1.1f})};
    cxla_sort(b, ops, 3, cmp, -1, false);
    check_build_run(b, NOARGS, "(s32[2] {1, 3}, s32[2] {50, 42}, f32[2] {1.1, -3})");
    cxla_xla_computation_free(cmp);

    /* A matrix along dimension 0 (each column) and 1 (each row), stable. */
    cxla_xla_computation *lt = scalar_comp(CXLA_S32, cxla_lt, "lt");
    b = new_builder("sort_dim0");
    cxla_op m = cxla_constant_s32(b, 2, I64S(2, 3), (const int32_t[]){5, 1, 4, 2, 3, 0});
    cxla_sort(b, &m, 1, lt, 0, true);
    cxla_xla_computation *c = finish(b);
    expect_run(c, NOARGS, "s32[2,3] { {2, 1, 0}, {5, 3, 4} }", NULL);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "dimensions={0}, is_stable=true"));
    free(text);
    cxla_xla_computation_free(c);
    b = new_builder("sort_dim1");
    m = cxla_constant_s32(b, 2, I64S(2, 3), (const int32_t[]){5, 1, 4, 2, 3, 0});
    cxla_sort(b, &m, 1, lt, 1, false);
    check_build_run(b, NOARGS, "s32[2,3] { {1, 4, 5}, {0, 2, 3} }");
    b = new_builder("sort_bad");
    cxla_op fm = cxla_constant_f32(b, 1, I64S(2), (const float[]){1, 2});
    cxla_sort(b, &fm, 1, lt, 0, false);
    expect_build_error(b, "comparator");
    cxla_xla_computation_free(lt);

    /* The single-operand Sort of the older builder: ascending, NaN last. */
    b = new_builder("sort_simple");
    cxla_sort_ascending(cxla_parameter(b, 0, &SHAPE(CXLA_F32, 5), "x"));
    check_build_run(b, ARGS("f32[5] {3, nan, -1, 2, -inf}"), "f32[5] {-inf, -1, 2, 3, nan}");
}

/* Seed: TopK with k = 1 of [[0.1, 0.3, 0.1], [0.7, 0.2, -0.1]] -> ([[0.3], [0.7]],
 * [[1], [0]]). */
static void test_seed_top_k(void) {
    cxla_builder *b = new_builder("topk");
    cxla_top_k(
        cxla_constant_f32(b, 2, I64S(2, 3), (const float[]){0.1f, 0.3f, 0.1f, 0.7f, 0.2f, -0.1f}),
        1, true);
    check_build_run(b, NOARGS, "(f32[2,1] { {0.3}, {0.7} }, s32[2,1] { {1}, {0} })");
    b = new_builder("topk_small");
    cxla_top_k(cxla_constant_f32(b, 1, I64S(4), (const float[]){4, 1, 3, 2}), 2, false);
    check_build_run(b, NOARGS, "(f32[2] {1, 2}, s32[2] {1, 3})");
    b = new_builder("topk_bad");
    cxla_top_k(cxla_constant_f32(b, 1, I64S(4), (const float[]){4, 1, 3, 2}), 5, true);
    expect_build_error(b, "TopK");
}

/* Seed 002/003 TopK(operand, k, comparator): with strict >, k = 1 and
 * [[0.1, 0.3, 0.1], [0.7, 0.2, -0.1]] the result is ([[0.3], [0.7]], [[1], [0]]). */
static void test_seed_top_k_with_comparator(void) {
    cxla_xla_computation *gt = scalar_comp(CXLA_F32, cxla_gt, "gt");
    cxla_builder *b = new_builder("topk_cmp");
    cxla_op x =
        cxla_constant_f32(b, 2, I64S(2, 3), (const float[]){0.1f, 0.3f, 0.1f, 0.7f, 0.2f, -0.1f});
    cxla_top_k_with_comparator(x, 1, gt);
    check_build_run(b, NOARGS, "(f32[2,1] { {0.3}, {0.7} }, s32[2,1] { {1}, {0} })");
    /* Ties keep index order (the sort is stable); less-than gives the k smallest. */
    cxla_xla_computation *lt = scalar_comp(CXLA_F32, cxla_lt, "lt");
    b = new_builder("topk_ties");
    cxla_top_k_with_comparator(cxla_constant_f32(b, 1, I64S(5), (const float[]){3, 1, 3, 1, 2}), 3,
                               gt);
    check_build_run(b, NOARGS, "(f32[3] {3, 3, 2}, s32[3] {0, 2, 4})");
    b = new_builder("topk_lt");
    cxla_top_k_with_comparator(cxla_constant_f32(b, 1, I64S(5), (const float[]){3, 1, 3, 1, 2}), 2,
                               lt);
    check_build_run(b, NOARGS, "(f32[2] {1, 1}, s32[2] {1, 3})");
    /* Errors: k too large, a comparator of the wrong types. */
    b = new_builder("topk_k");
    cxla_top_k_with_comparator(cxla_constant_f32(b, 1, I64S(2), (const float[]){1, 2}), 3, gt);
    expect_build_error(b, "out of range");
    b = new_builder("topk_types");
    cxla_top_k_with_comparator(cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){1, 2}), 1, gt);
    expect_build_error(b, "TopK");
    cxla_xla_computation_free(gt);
    cxla_xla_computation_free(lt);
}

/* Seed: gathering 5 slices of [8, 6] from a [16, 11] array with S64[5, 2] indices:
 * out[G, O0, O1] = in[X + O0, Y + O1]. And tf.gather_nd: slice sizes [1, 11] pick rows. */
static void test_seed_gather(void) {
    cxla_builder *b = new_builder("gather_slices");
    /* in[r, c] = 100 r + c */
    cxla_op rows = cxla_iota(b, &SHAPE(CXLA_S32, 16, 11), 0);
    cxla_op cols = cxla_iota(b, &SHAPE(CXLA_S32, 16, 11), 1);
    cxla_op in = cxla_add(cxla_mul(rows, cxla_constant_r0(b, CXLA_S32, 100)), cols);
    cxla_op idx = cxla_parameter(b, 0, &SHAPE(CXLA_S64, 5, 2), "indices");
    cxla_gather_dimension_numbers dn = {.offset_dims = I64S(1, 2),
                                        .offset_dims_count = 2,
                                        .start_index_map = I64S(0, 1),
                                        .start_index_map_count = 2,
                                        .index_vector_dim = 1};
    cxla_gather(in, idx, &dn, I64S(8, 6), 2, false);
    cxla_xla_computation *c = finish(b);
    const int64_t starts[5][2] = {{0, 0}, {8, 5}, {2, 3}, {8, 0}, {1, 4}};
    cxla_literal *out = run_args(c, ARGS("s64[5,2] { {0, 0}, {8, 5}, {2, 3}, {8, 0}, {1, 4} }"));
    CHECK(out && cxla_literal_shape(out)->rank == 3 && cxla_literal_shape(out)->dims[0] == 5 &&
          cxla_literal_shape(out)->dims[1] == 8 && cxla_literal_shape(out)->dims[2] == 6);
    for (int g = 0; out && g < 5; g++)
        for (int o0 = 0; o0 < 8; o0++)
            for (int o1 = 0; o1 < 6; o1++) {
                int64_t v = -1;
                CHECK_OK(cxla_literal_get_s64(out, (int64_t[]){g, o0, o1}, &v));
                CHECK_EQ_I64(v, 100 * (starts[g][0] + o0) + starts[g][1] + o1);
            }
    cxla_literal_free(out);
    cxla_xla_computation_free(c);

    b = new_builder("gather_nd");
    in = cxla_iota(b, &SHAPE(CXLA_S32, 4, 3), 0);
    idx = cxla_constant_s32(b, 3, I64S(2, 2, 1), (const int32_t[]){3, 0, 1, 3});
    cxla_gather_dimension_numbers nd = {.offset_dims = I64S(2),
                                        .offset_dims_count = 1,
                                        .collapsed_slice_dims = I64S(0),
                                        .collapsed_slice_dims_count = 1,
                                        .start_index_map = I64S(0),
                                        .start_index_map_count = 1,
                                        .index_vector_dim = 2};
    cxla_gather(in, idx, &nd, I64S(1, 3), 2, false);
    check_build_run(b, NOARGS, "s32[2,2,3] { { {3,3,3}, {0,0,0} }, { {1,1,1}, {3,3,3} } }");
    b = new_builder("gather_bad");
    in = cxla_iota(b, &SHAPE(CXLA_S32, 4, 3), 0);
    idx = cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){3, 0});
    cxla_gather(in, idx, &nd, I64S(2, 3), 2, false); /* a collapsed dimension of size 2 */
    expect_build_error(b, "Gather");
}

static void test_scatter(void) {
    cxla_xla_computation *add = scalar_comp(CXLA_S32, cxla_add, "add");
    cxla_builder *b = new_builder("scatter");
    cxla_op operand =
        cxla_constant_s32(b, 2, I64S(3, 3), (const int32_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1});
    cxla_op idx = cxla_constant_s32(b, 1, I64S(3), (const int32_t[]){0, 2, 0});
    cxla_op updates =
        cxla_constant_s32(b, 2, I64S(3, 3), (const int32_t[]){1, 2, 3, 4, 5, 6, 7, 8, 9});
    cxla_scatter_dimension_numbers dn = {.update_window_dims = I64S(1),
                                         .update_window_dims_count = 1,
                                         .inserted_window_dims = I64S(0),
                                         .inserted_window_dims_count = 1,
                                         .scatter_dims_to_operand_dims = I64S(0),
                                         .scatter_dims_to_operand_dims_count = 1,
                                         .index_vector_dim = 1};
    cxla_scatter(operand, idx, updates, add, &dn, false, false);
    check_build_run(b, NOARGS, "s32[3,3] { {9, 11, 13}, {1, 1, 1}, {5, 6, 7} }");
    b = new_builder("scatter_bad");
    operand = cxla_constant_s32(b, 2, I64S(3, 3), (const int32_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1});
    idx = cxla_constant_s32(b, 1, I64S(3), (const int32_t[]){0, 2, 0});
    updates = cxla_constant_s32(b, 2, I64S(2, 3), (const int32_t[]){1, 2, 3, 4, 5, 6});
    cxla_scatter(operand, idx, updates, add, &dn, false, false);
    expect_build_error(b, "Scatter");
    cxla_xla_computation_free(add);
}

TEST_MAIN(TEST(test_seed_reduce_1d), TEST(test_seed_reduce_3d), TEST(test_seed_variadic_argmax),
          TEST(test_seed_reduce_window), TEST(test_seed_select_and_scatter), TEST(test_seed_sort),
          TEST(test_seed_top_k), TEST(test_seed_top_k_with_comparator), TEST(test_seed_gather),
          TEST(test_scatter))
