/* Dot, DotGeneral (the seeds' two examples), the convolution family (Conv with SAME and
 * VALID, ConvWithGeneralPadding, general dimensions, dilation, groups) against the seeds'
 * pseudo-code, FFT, Cholesky, TriangularSolve and batch normalization. */
#include <math.h>

#include "builder_test_util.h"

static void test_dot(void) {
    cxla_builder *b = new_builder("dots");
    cxla_op v = cxla_constant_f32(b, 1, I64S(3), (const float[]){1, 2, 3});
    cxla_op m = cxla_constant_f32(b, 2, I64S(2, 3), (const float[]){1, 0, 1, 0, 1, 0});
    cxla_op n = cxla_constant_f32(b, 2, I64S(3, 2), (const float[]){1, 2, 3, 4, 5, 6});
    cxla_tuple(b, (cxla_op[]){cxla_dot(v, v), cxla_dot(m, v), cxla_dot(m, n)}, 3);
    check_build_run(b, NOARGS, "(f32[] 14, f32[2] {4, 2}, f32[2,2] { {6, 8}, {3, 4} })");
    b = new_builder("dot_bad");
    cxla_dot(cxla_constant_f32(b, 1, I64S(3), (const float[]){1, 2, 3}),
             cxla_constant_f32(b, 1, I64S(2), (const float[]){1, 2}));
    expect_build_error(b, "DotGeneral");
}

static void test_seed_dot_general(void) {
    /* Contracting dimensions 1 and 1. */
    cxla_builder *b = new_builder("dg1");
    cxla_op lhs = cxla_constant_f32(b, 2, I64S(2, 3), (const float[]){1, 2, 3, 4, 5, 6});
    cxla_op rhs = cxla_constant_f32(b, 2, I64S(2, 3), (const float[]){1, 1, 1, 2, 2, 2});
    cxla_dot_dimension_numbers dn = {.lhs_contracting_dimensions = I64S(1),
                                     .lhs_contracting_count = 1,
                                     .rhs_contracting_dimensions = I64S(1),
                                     .rhs_contracting_count = 1};
    cxla_dot_general(lhs, rhs, &dn, NULL, CXLA_TYPE_INVALID);
    check_build_run(b, NOARGS, "f32[2,2] { {6, 12}, {15, 30} }");
    /* Batch dimension 0, batch size 2 of 2x2 matrices times the identity. */
    b = new_builder("dg2");
    lhs = cxla_constant_f32(b, 3, I64S(2, 2, 2), (const float[]){1, 2, 3, 4, 5, 6, 7, 8});
    rhs = cxla_constant_f32(b, 3, I64S(2, 2, 2), (const float[]){1, 0, 0, 1, 1, 0, 0, 1});
    cxla_dot_dimension_numbers bn = {.lhs_contracting_dimensions = I64S(2),
                                     .lhs_contracting_count = 1,
                                     .rhs_contracting_dimensions = I64S(1),
                                     .rhs_contracting_count = 1,
                                     .lhs_batch_dimensions = I64S(0),
                                     .lhs_batch_count = 1,
                                     .rhs_batch_dimensions = I64S(0),
                                     .rhs_batch_count = 1};
    cxla_op_precision prec[2] = {CXLA_OP_PRECISION_HIGHEST, CXLA_OP_PRECISION_DEFAULT};
    cxla_dot_general(lhs, rhs, &bn, prec, CXLA_F64);
    cxla_xla_computation *c = finish(b);
    expect_run(c, NOARGS, "f64[2,2,2] { { {1, 2}, {3, 4} }, { {5, 6}, {7, 8} } }", NULL);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                               "rhs_contracting_dims={1}, operand_precision={highest,default}"));
    free(text);
    cxla_xla_computation_free(c);
    /* Integer widening by the preferred type; narrowing is an error. */
    b = new_builder("dg_int");
    cxla_op a = cxla_constant_array(b, CXLA_S8, 1, I64S(2), (const int8_t[]){100, 100});
    cxla_dot_dimension_numbers vn = {.lhs_contracting_dimensions = I64S(0),
                                     .lhs_contracting_count = 1,
                                     .rhs_contracting_dimensions = I64S(0),
                                     .rhs_contracting_count = 1};
    cxla_dot_general(a, a, &vn, NULL, CXLA_S32);
    check_build_run(b, NOARGS, "s32[] 20000");
    b = new_builder("dg_narrow");
    a = cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){1, 2});
    cxla_dot_general(a, a, &vn, NULL, CXLA_S8);
    expect_build_error(b, "narrower");
}

/* The seeds' pseudo-code, for NCHW input and OIHW kernel with padding and strides. */
static void naive_conv(const float *in, int64_t n, int64_t c, int64_t h, int64_t w, const float *k,
                       int64_t o, int64_t kh, int64_t kw, int64_t sy, int64_t sx, int64_t py,
                       int64_t px, int64_t oh, int64_t ow, float *out) {
    for (int64_t b = 0; b < n; b++)
        for (int64_t oz = 0; oz < o; oz++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    double v = 0;
                    for (int64_t iz = 0; iz < c; iz++)
                        for (int64_t ky = 0; ky < kh; ky++)
                            for (int64_t kx = 0; kx < kw; kx++) {
                                int64_t iy = oy * sy + ky - py, ix = ox * sx + kx - px;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                v += in[((b * c + iz) * h + iy) * w + ix] *
                                     k[((oz * c + iz) * kh + ky) * kw + kx];
                            }
                    out[((b * o + oz) * oh + oy) * ow + ox] = (float)v;
                }
}

static void check_conv(cxla_op (*make)(cxla_builder *, cxla_op, cxla_op), const char *name,
                       int64_t sy, int64_t sx, int64_t py, int64_t px, int64_t oh, int64_t ow) {
    float in[2 * 2 * 5 * 4], k[3 * 2 * 3 * 2], want[2 * 3 * 5 * 4];
    for (int i = 0; i < 80; i++) in[i] = (float)((i * 7) % 11) - 5;
    for (int i = 0; i < 36; i++) k[i] = (float)((i * 5) % 7) - 3;
    naive_conv(in, 2, 2, 5, 4, k, 3, 3, 2, sy, sx, py, px, oh, ow, want);
    cxla_builder *b = new_builder(name);
    cxla_op lhs = cxla_constant_f32(b, 4, I64S(2, 2, 5, 4), in);
    cxla_op rhs = cxla_constant_f32(b, 4, I64S(3, 2, 3, 2), k);
    cxla_op r = make(b, lhs, rhs);
    const cxla_shape *rs = NULL;
    CHECK_OK(cxla_op_get_shape(r, &rs));
    bool shape_ok = rs && rs->rank == 4 && rs->dims[0] == 2 && rs->dims[1] == 3 &&
                    rs->dims[2] == oh && rs->dims[3] == ow;
    CHECK_MSG(shape_ok, "%s: result shape", name);
    cxla_xla_computation *c = finish(b);
    cxla_literal *out = run_args(c, NOARGS);
    for (int64_t i = 0; shape_ok && out && i < 2 * 3 * oh * ow; i++) {
        const float *got = cxla_literal_data_const(out);
        CHECK_MSG(fabsf(got[i] - want[i]) < 1e-4f, "%s element %lld: %g vs %g", name, (long long)i,
                  (double)got[i], (double)want[i]);
    }
    cxla_literal_free(out);
    cxla_xla_computation_free(c);
}

static cxla_op conv_valid(cxla_builder *b, cxla_op l, cxla_op r) {
    (void)b;
    return cxla_conv(l, r, I64S(1, 1), 2, CXLA_PADDING_VALID, 1, 1);
}
static cxla_op conv_same(cxla_builder *b, cxla_op l, cxla_op r) {
    (void)b;
    return cxla_conv(l, r, I64S(1, 1), 2, CXLA_PADDING_SAME, 1, 1);
}
static cxla_op conv_same_strided(cxla_builder *b, cxla_op l, cxla_op r) {
    (void)b;
    return cxla_conv(l, r, I64S(2, 3), 2, CXLA_PADDING_SAME, 1, 1);
}
static cxla_op conv_general_padding(cxla_builder *b, cxla_op l, cxla_op r) {
    (void)b;
    return cxla_conv_with_general_padding(l, r, I64S(2, 1), 2,
                                          (const cxla_pad_pair[]){{2, 1}, {0, 1}}, 1, 1);
}

static void test_conv(void) {
    check_conv(conv_valid, "conv_valid", 1, 1, 0, 0, 3, 3);
    /* SAME, stride 1: windows 3x2 on 5x4 pad (1,1) and (0,1). */
    check_conv(conv_same, "conv_same", 1, 1, 1, 0, 5, 4);
    /* SAME, strides 2x3: outputs ceil(5/2)=3, ceil(4/3)=2; padding (1,1), (0,0). */
    check_conv(conv_same_strided, "conv_same_strided", 2, 3, 1, 0, 3, 2);
    check_conv(conv_general_padding, "conv_general_padding", 2, 1, 2, 0, 3, 4);

    /* General dimensions (NHWC / HWIO) and dilation: a 1-D signal. */
    cxla_builder *b = new_builder("conv_nwc");
    cxla_op x = cxla_constant_f32(b, 3, I64S(1, 5, 1), (const float[]){1, 2, 3, 4, 5});
    cxla_op k = cxla_constant_f32(b, 3, I64S(2, 1, 1), (const float[]){1, 10});
    cxla_conv_dimension_numbers dn = {.spatial_count = 1,
                                      .input_batch_dimension = 0,
                                      .input_feature_dimension = 2,
                                      .input_spatial_dimensions = I64S(1),
                                      .kernel_input_feature_dimension = 1,
                                      .kernel_output_feature_dimension = 2,
                                      .kernel_spatial_dimensions = I64S(0),
                                      .output_batch_dimension = 0,
                                      .output_feature_dimension = 2,
                                      .output_spatial_dimensions = I64S(1)};
    cxla_conv_general_dilated(x, k, I64S(1), 1, NULL, NULL, I64S(2), &dn, 1, 1, NULL,
                              CXLA_TYPE_INVALID);
    cxla_xla_computation *c = finish(b);
    /* kernel dilated by 2: y[i] = x[i] + 10 x[i + 2] */
    expect_run(c, NOARGS, "f32[1,3,1] { { {31}, {42}, {53} } }", NULL);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "window={size=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f"));
    free(text);
    cxla_xla_computation_free(c);

    /* Depthwise: feature_group_count = input features. */
    b = new_builder("depthwise");
    x = cxla_constant_f32(b, 3, I64S(1, 2, 3), (const float[]){1, 2, 3, 4, 5, 6});
    k = cxla_constant_f32(b, 3, I64S(2, 1, 1), (const float[]){10, 100});
    cxla_conv(x, k, I64S(1), 1, CXLA_PADDING_VALID, 2, 1);
    c = finish(b);
    expect_run(c, NOARGS, "f32[1,2,3] { { {10, 20, 30}, {400, 500, 600} } }", NULL);
    text = hlo_text(c);
    CHECK(text && strstr(text, "feature_group_count=2"));
    free(text);
    cxla_xla_computation_free(c);

    b = new_builder("conv_bad");
    x = cxla_constant_f32(b, 3, I64S(1, 2, 3), (const float[]){1, 2, 3, 4, 5, 6});
    k = cxla_constant_f32(b, 3, I64S(1, 3, 1), (const float[]){1, 2, 3});
    cxla_conv(x, k, I64S(1), 1, CXLA_PADDING_VALID, 1, 1);
    expect_build_error(b, "ConvGeneralDilated");
    b = new_builder("conv_dims_bad");
    x = cxla_constant_f32(b, 3, I64S(1, 2, 3), (const float[]){1, 2, 3, 4, 5, 6});
    dn.input_feature_dimension = 0;
    cxla_conv_general(x, x, I64S(1), 1, NULL, &dn, 1, 1);
    expect_build_error(b, "permutation");
}

static void test_fft_cholesky_solve(void) {
    cxla_builder *b = new_builder("fft");
    cxla_fft(cxla_convert_element_type(
                 cxla_constant_f32(b, 1, I64S(4), (const float[]){1, 0, 0, 0}), CXLA_C64),
             CXLA_FFT_FFT, I64S(4), 1);
    check_build_run(b, NOARGS, "c64[4] {(1, 0), (1, 0), (1, 0), (1, 0)}");
    b = new_builder("rfft");
    cxla_fft(cxla_constant_f32(b, 1, I64S(4), (const float[]){1, 2, 3, 4}), CXLA_FFT_RFFT, I64S(4),
             1);
    cxla_tolerance ftol = {.atol = 1e-5};
    cxla_xla_computation *fc = finish(b);
    expect_run(fc, NOARGS, "c64[3] {(10, 0), (-2, 2), (-2, 0)}", &ftol);
    cxla_xla_computation_free(fc);

    /* Cholesky: only the lower triangle is defined. */
    b = new_builder("cholesky");
    cxla_cholesky(cxla_constant_f32(b, 2, I64S(2, 2), (const float[]){4, 2, 2, 3}), true);
    cxla_xla_computation *c = finish(b);
    cxla_literal *out = run_args(c, NOARGS);
    const float *l = out ? cxla_literal_data_const(out) : NULL;
    CHECK(l && fabsf(l[0] - 2) < 1e-6f && fabsf(l[2] - 1) < 1e-6f &&
          fabsf(l[3] - sqrtf(2)) < 1e-6f);
    cxla_literal_free(out);
    cxla_xla_computation_free(c);

    b = new_builder("solve");
    cxla_triangular_solve(cxla_constant_f32(b, 2, I64S(2, 2), (const float[]){2, 0, 1, 1}),
                          cxla_constant_f32(b, 2, I64S(2, 1), (const float[]){2, 3}), true, true,
                          false, CXLA_TRANSPOSE_NO_TRANSPOSE);
    check_build_run(b, NOARGS, "f32[2,1] { {1}, {2} }");
    b = new_builder("solve_t");
    cxla_triangular_solve(cxla_constant_f32(b, 2, I64S(2, 2), (const float[]){2, 0, 1, 1}),
                          cxla_constant_f32(b, 2, I64S(2, 1), (const float[]){2, 3}), true, true,
                          false, CXLA_TRANSPOSE_TRANSPOSE);
    /* a^T = [[2, 1], [0, 1]]: x1 = 3, 2 x0 + 3 = 2 -> x0 = -0.5 */
    check_build_run(b, NOARGS, "f32[2,1] { {-0.5}, {3} }");
    b = new_builder("solve_bad");
    cxla_triangular_solve(cxla_constant_f32(b, 2, I64S(2, 2), (const float[]){2, 0, 1, 1}),
                          cxla_constant_f32(b, 2, I64S(3, 1), (const float[]){2, 3, 4}), true, true,
                          false, CXLA_TRANSPOSE_NO_TRANSPOSE);
    expect_build_error(b, "TriangularSolve");
}

static void test_batch_norm(void) {
    cxla_builder *b = new_builder("bn_training");
    cxla_op x = cxla_constant_f32(b, 2, I64S(2, 2), (const float[]){1, 10, 3, 30});
    cxla_op scale = cxla_constant_f32(b, 1, I64S(2), (const float[]){1, 2});
    cxla_op offset = cxla_constant_f32(b, 1, I64S(2), (const float[]){0, 1});
    cxla_batch_norm_training(x, scale, offset, 0.0f, 1);
    cxla_tolerance tol = {.atol = 1e-5, .rtol = 1e-5};
    cxla_xla_computation *c = finish(b);
    expect_run(c, NOARGS, "(f32[2,2] { {-1, -1}, {1, 3} }, f32[2] {2, 20}, f32[2] {1, 100})", &tol);
    cxla_xla_computation_free(c);
    b = new_builder("bn_inference");
    x = cxla_constant_f32(b, 2, I64S(2, 2), (const float[]){1, 10, 3, 30});
    scale = cxla_constant_f32(b, 1, I64S(2), (const float[]){1, 2});
    offset = cxla_constant_f32(b, 1, I64S(2), (const float[]){0, 1});
    cxla_batch_norm_inference(x, scale, offset,
                              cxla_constant_f32(b, 1, I64S(2), (const float[]){2, 20}),
                              cxla_constant_f32(b, 1, I64S(2), (const float[]){1, 100}), 0.0f, 1);
    c = finish(b);
    expect_run(c, NOARGS, "f32[2,2] { {-1, -1}, {1, 3} }", &tol);
    cxla_xla_computation_free(c);
    b = new_builder("bn_grad");
    x = cxla_constant_f32(b, 2, I64S(2, 2), (const float[]){1, 10, 3, 30});
    scale = cxla_constant_f32(b, 1, I64S(2), (const float[]){1, 2});
    cxla_batch_norm_grad(x, scale, cxla_constant_f32(b, 1, I64S(2), (const float[]){2, 20}),
                         cxla_constant_f32(b, 1, I64S(2), (const float[]){1, 100}),
                         cxla_constant_f32(b, 2, I64S(2, 2), (const float[]){1, 1, 1, 1}), 0.0f, 1);
    c = finish(b);
    /* Constant grad_output: grad_operand 0, grad_scale sum(dy * xhat) = 0, grad_offset 2. */
    expect_run(c, NOARGS, "(f32[2,2] { {0, 0}, {0, 0} }, f32[2] {0, 0}, f32[2] {2, 2})", &tol);
    cxla_xla_computation_free(c);
    b = new_builder("bn_bad");
    x = cxla_constant_f32(b, 2, I64S(2, 2), (const float[]){1, 10, 3, 30});
    scale = cxla_constant_f32(b, 1, I64S(2), (const float[]){1, 2});
    cxla_batch_norm_training(x, scale, scale, 0.0f, 2);
    expect_build_error(b, "BatchNormTraining");
}

TEST_MAIN(TEST(test_dot), TEST(test_seed_dot_general), TEST(test_conv),
          TEST(test_fft_cholesky_solve), TEST(test_batch_norm))
