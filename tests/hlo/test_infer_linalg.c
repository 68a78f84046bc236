/* Shape inference for dot, ragged-dot, scaled-dot, convolution, fft, cholesky,
 * triangular-solve and the batch normalizations. */
#include "test_infer_helpers.h"

static cxla_instr *dot(tm *t, cxla_opcode op, const char *shape, cxla_instr *a, cxla_instr *b,
                       int nlc, int lc, int nrc, int rc) {
    cxla_instr *d = I(t, op, shape, 2, a, b);
    if (nlc >= 0) a_ints(t, d, CXLA_ATTR_LHS_CONTRACTING_DIMS, nlc, lc);
    if (nrc >= 0) a_ints(t, d, CXLA_ATTR_RHS_CONTRACTING_DIMS, nrc, rc);
    return d;
}

static void test_dot(void) {
    tm t = t_new();
    cxla_instr *a = P(&t, "bf16[2048,16]"), *b = P(&t, "bf16[16,16]"), *c = P(&t, "bf16[17,16]");
    INFER_OK(dot(&t, CXLA_OP_DOT, "bf16[2048,16]", a, b, 1, 1, 1, 0), "bf16[2048,16]");
    INFER_OK(dot(&t, CXLA_OP_DOT, "f32[2048,16]", a, b, 1, 1, 1, 0), "f32[2048,16]");
    INFER_OK(dot(&t, CXLA_OP_DOT, "bf16[2048,16]", a, b, 1, 1, 1, 1), "bf16[2048,16]");
    /* The contracting lists are optional, as in XLA's parser: absent means empty. */
    INFER_ERR(dot(&t, CXLA_OP_DOT, "", a, b, -1, 0, 1, 0),
              "lhs_contracting_dims={} and rhs_contracting_dims={0} must have the same length");
    INFER_ERR(dot(&t, CXLA_OP_DOT, "", a, b, 1, 1, -1, 0),
              "lhs_contracting_dims={1} and rhs_contracting_dims={} must have the same length");
    INFER_OK(dot(&t, CXLA_OP_DOT, "", a, b, -1, 0, -1, 0), "bf16[2048,16,16,16]");
    INFER_ERR(dot(&t, CXLA_OP_DOT, "", a, c, 1, 1, 1, 0),
              "contracting dimension sizes differ: dimension 1 of bf16[2048,16] and 0 of "
              "bf16[17,16]");
    INFER_ERR(dot(&t, CXLA_OP_DOT, "", a, b, 1, 2, 1, 0),
              "lhs_contracting_dims={2}: 2 is out of range for bf16[2048,16]");
    INFER_ERR(dot(&t, CXLA_OP_DOT, "", a, b, 1, 1, 0, 0),
              "lhs_contracting_dims={1} and rhs_contracting_dims={} must have the same length");
    /* outer product */
    cxla_instr *u = P(&t, "f32[2]"), *v = P(&t, "f32[3]");
    INFER_OK(dot(&t, CXLA_OP_DOT, "f32[2,3]", u, v, 0, 0, 0, 0), "f32[2,3]");
    /* batch dims come first, then lhs free, then rhs free */
    cxla_instr *x = P(&t, "f32[8,16,64]"), *y = P(&t, "f32[8,64,32]"), *y9 = P(&t, "f32[9,64,32]");
    cxla_instr *bd = dot(&t, CXLA_OP_DOT, "f32[8,16,32]", x, y, 1, 1, 1, 1);
    INFER_ERR(bd, "contracting dimension sizes differ");
    a_ints(&t, bd, CXLA_ATTR_LHS_CONTRACTING_DIMS, 1, 2);
    a_ints(&t, bd, CXLA_ATTR_RHS_CONTRACTING_DIMS, 1, 1);
    a_ints(&t, bd, CXLA_ATTR_LHS_BATCH_DIMS, 1, 0);
    INFER_ERR(bd, "lhs_batch_dims={0} and rhs_batch_dims={} must have the same length");
    a_ints(&t, bd, CXLA_ATTR_RHS_BATCH_DIMS, 1, 0);
    INFER_OK(bd, "f32[8,16,32]");
    a_ints(&t, bd, CXLA_ATTR_LHS_BATCH_DIMS, 1, 2);
    INFER_ERR(bd, "lhs_batch_dims={2}: dimension 2 of f32[8,16,64] is used twice");
    cxla_instr *bd2 = dot(&t, CXLA_OP_DOT, "", x, y9, 1, 2, 1, 1);
    a_ints(&t, bd2, CXLA_ATTR_LHS_BATCH_DIMS, 1, 0);
    a_ints(&t, bd2, CXLA_ATTR_RHS_BATCH_DIMS, 1, 0);
    INFER_ERR(bd2,
              "batch dimension sizes differ: dimension 0 of f32[8,16,64] and 0 of f32[9,64,32]");
    /* element types: the declared (preferred) type may widen integers, not narrow them */
    cxla_instr *i8a = P(&t, "s8[4,8]"), *i8b = P(&t, "s8[8,2]"), *i32b = P(&t, "s32[8,2]");
    INFER_OK(dot(&t, CXLA_OP_DOT, "s32[4,2]", i8a, i8b, 1, 1, 1, 0), "s32[4,2]");
    cxla_instr *i32a = P(&t, "s32[4,8]");
    INFER_ERR(dot(&t, CXLA_OP_DOT, "s8[4,2]", i32a, i32b, 1, 1, 1, 0),
              "the result type s8 must not be narrower than the operand type s32");
    INFER_ERR(dot(&t, CXLA_OP_DOT, "s32[4,2]", i8a, i32b, 1, 1, 1, 0),
              "operands must have the same element type");
    /* an integer and a float operand (s8 x bf16, as XLA takes them) need a float result */
    cxla_instr *bfb = P(&t, "bf16[8,2]");
    INFER_OK(dot(&t, CXLA_OP_DOT, "bf16[4,2]", i8a, bfb, 1, 1, 1, 0), "bf16[4,2]");
    INFER_OK(dot(&t, CXLA_OP_DOT, "f32[4,2]", i8a, bfb, 1, 1, 1, 0), "f32[4,2]");
    INFER_ERR(dot(&t, CXLA_OP_DOT, "s32[4,2]", i8a, bfb, 1, 1, 1, 0),
              "operands must have the same element type");
    cxla_instr *fa = P(&t, "f8e4m3fn[4,8]"), *fb = P(&t, "f8e5m2[8,2]");
    INFER_OK(dot(&t, CXLA_OP_DOT, "f32[4,2]", fa, fb, 1, 1, 1, 0), "f32[4,2]");
    /* operand_precision */
    cxla_instr *p = dot(&t, CXLA_OP_DOT, "s32[4,2]", i8a, i8b, 1, 1, 1, 0);
    a_precisions(&t, p, 2, CXLA_PRECISION_HIGH, CXLA_PRECISION_HIGHEST);
    INFER_OK(p, "s32[4,2]");
    a_precisions(&t, p, 1, CXLA_PRECISION_HIGH);
    INFER_ERR(p, "operand_precision must have 2 entries");
    a_precisions(&t, p, 2, CXLA_PRECISION_PACKED_NIBBLE, CXLA_PRECISION_DEFAULT);
    INFER_ERR(p, "packed_nibble precision must be given for both operands");
    a_precisions(&t, p, 2, CXLA_PRECISION_PACKED_NIBBLE, CXLA_PRECISION_PACKED_NIBBLE);
    INFER_OK(p, "s32[4,2]");
    cxla_instr *q = dot(&t, CXLA_OP_DOT, "f32[4,2]", fa, fb, 1, 1, 1, 0);
    a_precisions(&t, q, 2, CXLA_PRECISION_PACKED_NIBBLE, CXLA_PRECISION_PACKED_NIBBLE);
    INFER_ERR(q, "packed_nibble precision applies to 8-bit integers");
    cxla_instr *tup = P(&t, "(f32[2])");
    INFER_ERR(dot(&t, CXLA_OP_DOT, "", tup, v, 0, 0, 0, 0), "operands must be arrays");
    t_free(&t);
}

static void test_ragged_dot(void) {
    tm t = t_new();
    cxla_instr *lhs = P(&t, "f32[11,5]"), *rhs = P(&t, "f32[3,5,7]"), *gs = P(&t, "s32[3]");
    cxla_instr *gs4 = P(&t, "s32[4]"), *fgs = P(&t, "f32[3]");
    /* ragged non-contracting: each group of rows takes its own rhs slice */
    cxla_instr *r = I(&t, CXLA_OP_RAGGED_DOT, "f32[11,7]", 3, lhs, rhs, gs);
    a_ints(&t, r, CXLA_ATTR_LHS_CONTRACTING_DIMS, 1, 1);
    a_ints(&t, r, CXLA_ATTR_RHS_CONTRACTING_DIMS, 1, 1);
    INFER_ERR(r, "lhs_ragged_dims={} must name one dimension of f32[11,5]");
    a_ints(&t, r, CXLA_ATTR_LHS_RAGGED_DIMS, 1, 0);
    INFER_ERR(r, "a ragged non-contracting dimension needs rhs_group_dims");
    a_ints(&t, r, CXLA_ATTR_RHS_GROUP_DIMS, 1, 0);
    INFER_OK(r, "f32[11,7]");
    cxla_instr *r4 = I(&t, CXLA_OP_RAGGED_DOT, "f32[11,7]", 3, lhs, rhs, gs4);
    a_ints(&t, r4, CXLA_ATTR_LHS_CONTRACTING_DIMS, 1, 1);
    a_ints(&t, r4, CXLA_ATTR_RHS_CONTRACTING_DIMS, 1, 1);
    a_ints(&t, r4, CXLA_ATTR_LHS_RAGGED_DIMS, 1, 0);
    a_ints(&t, r4, CXLA_ATTR_RHS_GROUP_DIMS, 1, 0);
    INFER_ERR(r4, "rhs group dimension 0 of f32[3,5,7] must have the 4 groups");
    INFER_ERR(I(&t, CXLA_OP_RAGGED_DOT, "f32[11,7]", 3, lhs, rhs, fgs),
              "group_sizes must be an integer array");
    /* ragged contracting: one result per group */
    cxla_instr *rhs2 = P(&t, "f32[5,7]");
    cxla_instr *rc = I(&t, CXLA_OP_RAGGED_DOT, "f32[3,11,7]", 3, lhs, rhs2, gs);
    a_ints(&t, rc, CXLA_ATTR_LHS_CONTRACTING_DIMS, 1, 1);
    a_ints(&t, rc, CXLA_ATTR_RHS_CONTRACTING_DIMS, 1, 0);
    a_ints(&t, rc, CXLA_ATTR_LHS_RAGGED_DIMS, 1, 1);
    INFER_OK(rc, "f32[3,11,7]");
    a_ints(&t, rc, CXLA_ATTR_RHS_GROUP_DIMS, 1, 0);
    INFER_ERR(rc, "rhs_group_dims={0} is only for a ragged non-contracting dimension");
    /* ragged batch */
    cxla_instr *bl = P(&t, "f32[2,11,5]"), *br = P(&t, "f32[2,5,7]"), *g2 = P(&t, "s32[2]");
    cxla_instr *rb = I(&t, CXLA_OP_RAGGED_DOT, "f32[2,11,7]", 3, bl, br, g2);
    a_ints(&t, rb, CXLA_ATTR_LHS_BATCH_DIMS, 1, 0);
    a_ints(&t, rb, CXLA_ATTR_RHS_BATCH_DIMS, 1, 0);
    a_ints(&t, rb, CXLA_ATTR_LHS_CONTRACTING_DIMS, 1, 2);
    a_ints(&t, rb, CXLA_ATTR_RHS_CONTRACTING_DIMS, 1, 1);
    a_ints(&t, rb, CXLA_ATTR_LHS_RAGGED_DIMS, 1, 0);
    INFER_OK(rb, "f32[2,11,7]");
    t_free(&t);
}

static void test_scaled_dot(void) {
    tm t = t_new();
    cxla_instr *l = P(&t, "f8e4m3fn[16,64]"), *ls = P(&t, "f8e8m0fnu[16,2]");
    cxla_instr *r = P(&t, "f8e4m3fn[64,32]"), *rs = P(&t, "f8e8m0fnu[2,32]");
    cxla_instr *bad = P(&t, "f8e8m0fnu[3,32]"), *r1 = P(&t, "f8e8m0fnu[2]");
    cxla_instr *d = I(&t, CXLA_OP_SCALED_DOT, "f32[16,32]", 4, l, r, ls, rs);
    a_ints(&t, d, CXLA_ATTR_LHS_CONTRACTING_DIMS, 1, 1);
    a_ints(&t, d, CXLA_ATTR_RHS_CONTRACTING_DIMS, 1, 0);
    INFER_OK(d, "f32[16,32]");
    cxla_instr *d2 = I(&t, CXLA_OP_SCALED_DOT, "f32[16,32]", 4, l, r, ls, bad);
    a_ints(&t, d2, CXLA_ATTR_LHS_CONTRACTING_DIMS, 1, 1);
    a_ints(&t, d2, CXLA_ATTR_RHS_CONTRACTING_DIMS, 1, 0);
    INFER_ERR(d2,
              "scale f8e8m0fnu[3,32] does not divide its operand f8e4m3fn[64,32] in dimension 0");
    cxla_instr *d3 = I(&t, CXLA_OP_SCALED_DOT, "f32[16,32]", 4, l, r, ls, r1);
    INFER_ERR(d3, "must be an array of the rank of its operand");
    /* operand_precision: one entry per dot operand (lhs, rhs), not per operand. */
    a_precisions(&t, d, 2, CXLA_PRECISION_HIGHEST, CXLA_PRECISION_DEFAULT);
    INFER_OK(d, "f32[16,32]");
    a_precisions(&t, d, 4, CXLA_PRECISION_DEFAULT, CXLA_PRECISION_DEFAULT, CXLA_PRECISION_DEFAULT,
                 CXLA_PRECISION_DEFAULT);
    INFER_ERR(d, "operand_precision must have 2 entries");
    t_free(&t);
}

static cxla_instr *conv(tm *t, const char *shape, cxla_instr *x, cxla_instr *w, const char *win,
                        const char *labels) {
    cxla_instr *c = I(t, CXLA_OP_CONVOLUTION, shape, 2, x, w);
    if (win) a_window(t, c, win);
    if (labels) a_dim_labels(t, c, labels);
    return c;
}

static void test_convolution(void) {
    tm t = t_new();
    cxla_instr *x = P(&t, "f32[1,224,224,3]"), *w = P(&t, "f32[3,3,3,32]");
    const char *nhwc = "b01f_01io->b01f";
    cxla_instr *c = conv(&t, "f32[1,112,112,32]", x, w, "size=3x3 stride=2x2 pad=0_1x0_1", NULL);
    INFER_ERR(c, "missing attribute dim_labels");
    a_dim_labels(&t, c, nhwc);
    INFER_OK(c, "f32[1,112,112,32]");
    a_int(c, CXLA_ATTR_FEATURE_GROUP_COUNT, 0);
    INFER_ERR(c, "feature_group_count=0 must be positive");
    a_int(c, CXLA_ATTR_FEATURE_GROUP_COUNT, 1);
    a_int(c, CXLA_ATTR_BATCH_GROUP_COUNT, -1);
    INFER_ERR(c, "batch_group_count=-1 must be positive");
    a_int(c, CXLA_ATTR_BATCH_GROUP_COUNT, 2);
    a_int(c, CXLA_ATTR_FEATURE_GROUP_COUNT, 3);
    INFER_ERR(c, "cannot both exceed 1");
    INFER_ERR(conv(&t, "", x, w, "size=3", nhwc),
              "the window has 1 dimensions but dim_labels has 2 spatial dimensions");
    INFER_ERR(conv(&t, "", x, w, "size=3x4", nhwc),
              "window size 4 of spatial dimension 1 differs from the kernel's 3");
    cxla_instr *x3 = P(&t, "f32[1,224,3]"), *w3 = P(&t, "f32[3,3,32]");
    INFER_ERR(conv(&t, "", x3, w, "size=3x3", nhwc), "the input f32[1,224,3] must have rank 4");
    INFER_ERR(conv(&t, "", x, w3, "size=3x3", nhwc), "the kernel f32[3,3,32] must have rank 4");
    cxla_instr *w4 = P(&t, "f32[3,3,4,32]");
    INFER_ERR(conv(&t, "", x, w4, "size=3x3", nhwc),
              "input features (3) / feature_group_count=1 must equal kernel input features (4)");
    /* labels that are not permutations */
    cxla_instr *bad = conv(&t, "", x, w, "size=3x3", nhwc);
    cxla_attr *dl = (cxla_attr *)cxla_instr_attr(bad, CXLA_ATTR_DIM_LABELS);
    dl->v.conv.input_feature = dl->v.conv.input_batch;
    INFER_ERR(bad, "the input labels of dim_labels must name each dimension once");
    dl->v.conv.input_feature = 3;
    dl->v.conv.kernel_input_feature = 7;
    INFER_ERR(bad, "the kernel labels");
    dl->v.conv.kernel_input_feature = 2;
    dl->v.conv.output_spatial[1] = dl->v.conv.output_spatial[0];
    INFER_ERR(bad, "the output labels");

    /* NCHW / OIHW */
    cxla_instr *xn = P(&t, "f32[2,3,10,10]"), *wn = P(&t, "f32[4,3,3,3]");
    INFER_OK(conv(&t, "", xn, wn, "size=3x3", "bf01_oi01->bf01"), "f32[2,4,8,8]");
    /* output labels permute the result */
    INFER_OK(conv(&t, "", xn, wn, "size=3x3", "bf01_oi01->01fb"), "f32[8,8,4,2]");
    /* no spatial dimensions: no window */
    cxla_instr *x0 = P(&t, "f32[2,3]"), *w0 = P(&t, "f32[3,4]");
    INFER_OK(conv(&t, "", x0, w0, NULL, "bf_io->bf"), "f32[2,4]");
    /* depthwise (feature groups) */
    cxla_instr *xd = P(&t, "f32[1,112,112,32]"), *wd = P(&t, "f32[3,3,1,32]");
    cxla_instr *dw = conv(&t, "", xd, wd, "size=3x3 pad=1_1x1_1", nhwc);
    a_int(dw, CXLA_ATTR_FEATURE_GROUP_COUNT, 32);
    INFER_OK(dw, "f32[1,112,112,32]");
    cxla_instr *wd2 = P(&t, "f32[3,3,2,33]");
    cxla_instr *dw2 = conv(&t, "", xd, wd2, "size=3x3 pad=1_1x1_1", nhwc);
    a_int(dw2, CXLA_ATTR_FEATURE_GROUP_COUNT, 16);
    INFER_ERR(dw2, "kernel output features (33) must be a multiple of feature_group_count=16");
    /* batch groups */
    cxla_instr *xb = P(&t, "f32[4,8,8,3]"), *wb = P(&t, "f32[3,3,3,8]"),
               *wb9 = P(&t, "f32[3,3,3,9]");
    cxla_instr *xb5 = P(&t, "f32[5,8,8,3]");
    cxla_instr *bg = conv(&t, "", xb, wb, "size=3x3", nhwc);
    a_int(bg, CXLA_ATTR_BATCH_GROUP_COUNT, 2);
    INFER_OK(bg, "f32[2,6,6,8]");
    cxla_instr *bg2 = conv(&t, "", xb, wb9, "size=3x3", nhwc);
    a_int(bg2, CXLA_ATTR_BATCH_GROUP_COUNT, 2);
    INFER_ERR(bg2, "kernel output features (9) must be a multiple of batch_group_count=2");
    cxla_instr *bg3 = conv(&t, "", xb5, wb, "size=3x3", nhwc);
    a_int(bg3, CXLA_ATTR_BATCH_GROUP_COUNT, 2);
    INFER_ERR(bg3, "input batch (5) must be a multiple of batch_group_count=2");
    /* base dilation (transposed convolution) and window dilation */
    cxla_instr *xt = P(&t, "f32[1,4,4,1]"), *wt = P(&t, "f32[3,3,1,1]");
    INFER_OK(conv(&t, "", xt, wt, "size=3x3 pad=2_2x2_2 lhs_dilate=2x2", nhwc), "f32[1,9,9,1]");
    INFER_OK(conv(&t, "", xt, wt, "size=3x3 rhs_dilate=1x2", nhwc), "f32[1,2,0,1]");
    /* dynamic kernel output features */
    cxla_instr *wdyn = P(&t, "f32[3,3,3,<=32]");
    INFER_ERR(conv(&t, "", x, wdyn, "size=3x3", nhwc), "dynamic kernel output feature");
    /* packed nibble needs int8 and no groups */
    cxla_instr *xi = P(&t, "s8[1,8,8,4]"), *wi = P(&t, "s8[3,3,2,4]");
    cxla_instr *pn = conv(&t, "s32[1,6,6,4]", xi, wi, "size=3x3", nhwc);
    a_int(pn, CXLA_ATTR_FEATURE_GROUP_COUNT, 2);
    INFER_OK(pn, "s32[1,6,6,4]");
    a_precisions(&t, pn, 2, CXLA_PRECISION_PACKED_NIBBLE, CXLA_PRECISION_PACKED_NIBBLE);
    INFER_ERR(pn, "packed_nibble precision does not support group counts");
    cxla_instr *tup = P(&t, "(f32[])");
    INFER_ERR(conv(&t, "", tup, w, "size=3x3", nhwc), "operands must be arrays");
    t_free(&t);
}

static void test_fft(void) {
    tm t = t_new();
    cxla_instr *r = P(&t, "f32[8,8]"), *c = P(&t, "c64[8,5]"), *c8 = P(&t, "c64[4,8]");
    cxla_instr *d = P(&t, "f64[3,4,6]"), *s = P(&t, "s32[8]"), *z = P(&t, "f32[0]");
    cxla_instr *f = I(&t, CXLA_OP_FFT, "", 1, r);
    INFER_ERR(f, "missing attribute fft_type");
    a_word(f, CXLA_ATTR_FFT_TYPE, "RFFT");
    INFER_ERR(f, "missing attribute fft_length");
    a_ints(&t, f, CXLA_ATTR_FFT_LENGTH, 1, 8);
    INFER_OK(f, "c64[8,5]");
    a_ints(&t, f, CXLA_ATTR_FFT_LENGTH, 1, 7);
    INFER_ERR(f, "RFFT: the minor dimensions of f32[8,8] must match fft_length={7}");
    a_ints(&t, f, CXLA_ATTR_FFT_LENGTH, 4, 1, 1, 1, 1);
    INFER_ERR(f, "must have 1 to 3 entries");
    a_ints(&t, f, CXLA_ATTR_FFT_LENGTH, 3, 8, 8, 8);
    INFER_ERR(f, "an FFT of rank 3 needs an operand of rank >= 3");
    a_word(f, CXLA_ATTR_FFT_TYPE, "DCT");
    a_ints(&t, f, CXLA_ATTR_FFT_LENGTH, 1, 8);
    INFER_ERR(f, "unknown fft_type=DCT");
    a_word(f, CXLA_ATTR_FFT_TYPE, "FFT");
    INFER_ERR(f, "FFT needs a complex operand");
    a_word(f, CXLA_ATTR_FFT_TYPE, "IRFFT");
    INFER_ERR(f, "IRFFT needs a complex operand");

    cxla_instr *i = I(&t, CXLA_OP_FFT, "", 1, c);
    a_word(i, CXLA_ATTR_FFT_TYPE, "IRFFT");
    a_ints(&t, i, CXLA_ATTR_FFT_LENGTH, 1, 8);
    INFER_OK(i, "f32[8,8]");
    a_ints(&t, i, CXLA_ATTR_FFT_LENGTH, 1, 12);
    INFER_ERR(i, "the last dimension of c64[8,5] must be fft_length/2+1 = 7");
    a_ints(&t, i, CXLA_ATTR_FFT_LENGTH, 2, 7, 8);
    INFER_ERR(i, "IRFFT: the minor dimensions of c64[8,5] but the last must match");
    a_ints(&t, i, CXLA_ATTR_FFT_LENGTH, 2, 8, 8);
    INFER_OK(i, "f32[8,8]");
    a_word(i, CXLA_ATTR_FFT_TYPE, "IFFT");
    INFER_OK(i, "c64[8,5]");

    cxla_instr *ff = I(&t, CXLA_OP_FFT, "", 1, c8);
    a_word(ff, CXLA_ATTR_FFT_TYPE, "FFT");
    a_ints(&t, ff, CXLA_ATTR_FFT_LENGTH, 2, 4, 8);
    INFER_OK(ff, "c64[4,8]");
    cxla_instr *r2 = I(&t, CXLA_OP_FFT, "", 1, d);
    a_word(r2, CXLA_ATTR_FFT_TYPE, "RFFT");
    a_ints(&t, r2, CXLA_ATTR_FFT_LENGTH, 2, 4, 6);
    INFER_OK(r2, "c128[3,4,4]");
    cxla_instr *r3 = I(&t, CXLA_OP_FFT, "", 1, s);
    a_word(r3, CXLA_ATTR_FFT_TYPE, "RFFT");
    a_ints(&t, r3, CXLA_ATTR_FFT_LENGTH, 1, 8);
    INFER_ERR(r3, "RFFT needs an f32 or f64 operand, got s32[8]");
    cxla_instr *r4 = I(&t, CXLA_OP_FFT, "", 1, z); /* zero-sized dimensions are kept */
    a_word(r4, CXLA_ATTR_FFT_TYPE, "RFFT");
    a_ints(&t, r4, CXLA_ATTR_FFT_LENGTH, 1, 0);
    INFER_OK(r4, "c64[0]");
    cxla_instr *tup = P(&t, "(f32[8])");
    INFER_ERR(I(&t, CXLA_OP_FFT, "", 1, tup), "the operand must be an array");
    t_free(&t);
}

static void test_cholesky_triangular_solve(void) {
    tm t = t_new();
    cxla_instr *a = P(&t, "f32[4,4]"), *bc = P(&t, "c64[2,3,3]"), *s = P(&t, "s32[4,4]");
    cxla_instr *v = P(&t, "f32[4]"), *n = P(&t, "f32[4,3]");
    INFER_OK(I(&t, CXLA_OP_CHOLESKY, "", 1, a), "f32[4,4]");
    INFER_OK(I(&t, CXLA_OP_CHOLESKY, "", 1, bc), "c64[2,3,3]");
    INFER_ERR(I(&t, CXLA_OP_CHOLESKY, "", 1, s), "floating-point or complex array, got s32[4,4]");
    INFER_ERR(I(&t, CXLA_OP_CHOLESKY, "", 1, v), "'a' must have rank >= 2, got f32[4]");
    INFER_ERR(I(&t, CXLA_OP_CHOLESKY, "", 1, n), "the two minor dimensions of 'a' must be equal");

    cxla_instr *b = P(&t, "f32[4,3]"), *br = P(&t, "f32[3,4]"), *bd = P(&t, "f64[4,3]");
    cxla_instr *b3 = P(&t, "f32[1,4,3]"), *ab = P(&t, "f32[2,4,4]"), *bb = P(&t, "f32[3,4,3]");
    cxla_instr *ts = I(&t, CXLA_OP_TRIANGULAR_SOLVE, "", 2, a, b);
    a_bool(ts, CXLA_ATTR_LEFT_SIDE, true);
    INFER_OK(ts, "f32[4,3]");
    a_word(ts, CXLA_ATTR_TRANSPOSE_A, "ADJOINT");
    INFER_OK(ts, "f32[4,3]");
    a_word(ts, CXLA_ATTR_TRANSPOSE_A, "CONJUGATE");
    INFER_ERR(ts, "unknown transpose_a=CONJUGATE");
    INFER_OK(I(&t, CXLA_OP_TRIANGULAR_SOLVE, "", 2, a, br), "f32[3,4]"); /* right side */
    INFER_ERR(I(&t, CXLA_OP_TRIANGULAR_SOLVE, "", 2, a, b),
              "the shared dimension of 'a' f32[4,4] and 'b' f32[4,3] differs (left_side=false)");
    INFER_ERR(I(&t, CXLA_OP_TRIANGULAR_SOLVE, "", 2, a, bd), "the element type of 'a'");
    INFER_ERR(I(&t, CXLA_OP_TRIANGULAR_SOLVE, "", 2, a, b3), "the same rank");
    cxla_instr *tb = I(&t, CXLA_OP_TRIANGULAR_SOLVE, "", 2, ab, bb);
    a_bool(tb, CXLA_ATTR_LEFT_SIDE, true);
    INFER_ERR(tb, "the batch dimensions of 'a' f32[2,4,4] and 'b' f32[3,4,3] differ");
    INFER_ERR(I(&t, CXLA_OP_TRIANGULAR_SOLVE, "", 2, s, s), "floating-point or complex");
    t_free(&t);
}

static void test_batch_norm(void) {
    tm t = t_new();
    cxla_instr *x = P(&t, "bf16[1,2048,16]"), *sc = P(&t, "bf16[2048]"), *of = P(&t, "bf16[2048]");
    cxla_instr *s16 = P(&t, "bf16[16]"), *f32 = P(&t, "f32[2048]"), *ix = P(&t, "s32[1,2048,16]");
    cxla_instr *scal = P(&t, "bf16[]");
    cxla_instr *bt = I(&t, CXLA_OP_BATCH_NORM_TRAINING, "", 3, x, sc, of);
    INFER_ERR(bt, "missing attribute epsilon");
    a_float(bt, CXLA_ATTR_EPSILON, 1e-12);
    INFER_ERR(bt, "missing attribute feature_index");
    a_int(bt, CXLA_ATTR_FEATURE_INDEX, 1);
    INFER_OK(bt, "(bf16[1,2048,16], bf16[2048], bf16[2048])");
    a_int(bt, CXLA_ATTR_FEATURE_INDEX, 3);
    INFER_ERR(bt, "feature_index=3 is out of range for bf16[1,2048,16]");
    a_int(bt, CXLA_ATTR_FEATURE_INDEX, 2);
    INFER_ERR(bt, "operand 1 must be bf16[16] (one bf16 per feature of bf16[1,2048,16]), got "
                  "bf16[2048]");
    cxla_instr *bt2 = I(&t, CXLA_OP_BATCH_NORM_TRAINING, "", 3, x, sc, f32);
    a_float(bt2, CXLA_ATTR_EPSILON, 1e-3);
    a_int(bt2, CXLA_ATTR_FEATURE_INDEX, 1);
    INFER_ERR(bt2, "operand 2 must be bf16[2048]");
    cxla_instr *bt3 = I(&t, CXLA_OP_BATCH_NORM_TRAINING, "", 3, ix, sc, of);
    a_float(bt3, CXLA_ATTR_EPSILON, 1e-3);
    a_int(bt3, CXLA_ATTR_FEATURE_INDEX, 1);
    INFER_ERR(bt3, "the operand must be a floating-point array, got s32[1,2048,16]");
    cxla_instr *bt4 = I(&t, CXLA_OP_BATCH_NORM_TRAINING, "", 3, scal, s16, s16);
    a_float(bt4, CXLA_ATTR_EPSILON, 1e-3);
    a_int(bt4, CXLA_ATTR_FEATURE_INDEX, 0);
    INFER_ERR(bt4, "must have rank >= 1");

    cxla_instr *bi = I(&t, CXLA_OP_BATCH_NORM_INFERENCE, "", 5, x, sc, of, sc, of);
    a_float(bi, CXLA_ATTR_EPSILON, 1e-3);
    a_int(bi, CXLA_ATTR_FEATURE_INDEX, 1);
    INFER_OK(bi, "bf16[1,2048,16]");
    cxla_instr *bi2 = I(&t, CXLA_OP_BATCH_NORM_INFERENCE, "", 5, x, sc, of, sc, s16);
    a_float(bi2, CXLA_ATTR_EPSILON, 1e-3);
    a_int(bi2, CXLA_ATTR_FEATURE_INDEX, 1);
    INFER_ERR(bi2, "operand 4 must be bf16[2048]");

    cxla_instr *g = P(&t, "bf16[1,2048,16]"), *g2 = P(&t, "bf16[1,2048,15]");
    cxla_instr *bg = I(&t, CXLA_OP_BATCH_NORM_GRAD, "", 5, x, sc, of, sc, g);
    a_float(bg, CXLA_ATTR_EPSILON, 1e-12);
    a_int(bg, CXLA_ATTR_FEATURE_INDEX, 1);
    INFER_OK(bg, "(bf16[1,2048,16], bf16[2048], bf16[2048])");
    cxla_instr *bg2 = I(&t, CXLA_OP_BATCH_NORM_GRAD, "", 5, x, sc, of, sc, g2);
    a_float(bg2, CXLA_ATTR_EPSILON, 1e-12);
    a_int(bg2, CXLA_ATTR_FEATURE_INDEX, 1);
    INFER_ERR(bg2, "grad_output bf16[1,2048,15] must have the operand's shape bf16[1,2048,16]");
    t_free(&t);
}

TEST_MAIN(TEST(test_dot), TEST(test_ragged_dot), TEST(test_scaled_dot), TEST(test_convolution),
          TEST(test_fft), TEST(test_cholesky_triangular_solve), TEST(test_batch_norm))
