/* Dot, dot-general, the convolution family, FFT, Cholesky, triangular solve and batch
 * normalization. */
#include <inttypes.h>
#include <string.h>

#include "builder/builder_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in the builder")

/* operand_precision={...} when |precision| says anything but default. */
static bool precision_attr(cxla_builder *b, const cxla_op_precision *precision, cxla_attr *a,
                           int *n) {
    if (!precision) return true;
    bool any = false;
    for (int i = 0; i < 2; i++) {
        if ((int)precision[i] < 0 || precision[i] > CXLA_OP_PRECISION_HIGHEST) {
            bld_fail(b, "precision", "unknown precision %d", (int)precision[i]);
            return false;
        }
        any = any || precision[i] != CXLA_OP_PRECISION_DEFAULT;
    }
    if (!any) return true;
    cxla_attr *p = &a[(*n)++];
    *p = bld_attr(CXLA_ATTR_OPERAND_PRECISION);
    p->v.precisions.count = 2;
    p->v.precisions.items = cxla_arena_alloc_array(b->module->arena, 2, sizeof(cxla_precision));
    if (!p->v.precisions.items) {
        bld_fail_status(b, "precision", OOM());
        return false;
    }
    for (int i = 0; i < 2; i++)
        p->v.precisions.items[i] =
            precision[i] == CXLA_OP_PRECISION_HIGHEST ? CXLA_PRECISION_HIGHEST
            : precision[i] == CXLA_OP_PRECISION_HIGH  ? CXLA_PRECISION_HIGH
                                                      : CXLA_PRECISION_DEFAULT;
    return true;
}

static bool preferred_shape(cxla_builder *b, const char *op, cxla_type t, cxla_shape *s) {
    memset(s, 0, sizeof(*s));
    if (t == CXLA_TYPE_INVALID) return true;
    if ((int)t < 0 || t >= CXLA_TYPE_COUNT || !cxla_type_is_array(t)) {
        bld_fail(b, op, "invalid preferred element type %d", (int)t);
        return false;
    }
    s->type = t;
    return true;
}

/* ---- dot ------------------------------------------------------------------------------------- */

cxla_op cxla_dot_general(cxla_op lhs, cxla_op rhs, const cxla_dot_dimension_numbers *dn,
                         const cxla_op_precision *precision, cxla_type preferred_element_type) {
    const char *op = "DotGeneral";
    cxla_op pair[2] = {lhs, rhs};
    cxla_builder *b = bld_of(pair, 2);
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *ins[2];
    if (!(ins[0] = bld_operand(b, op, lhs, 0)) || !(ins[1] = bld_operand(b, op, rhs, 1)))
        return bld_invalid(b);
    if (!dn) {
        bld_fail(b, op, "the dimension numbers are NULL");
        return bld_invalid(b);
    }
    cxla_attr a[5];
    int n = 0;
    if (!bld_check_list(b, op, "lhs_batch_dimensions", dn->lhs_batch_dimensions,
                        dn->lhs_batch_count) ||
        !bld_check_list(b, op, "rhs_batch_dimensions", dn->rhs_batch_dimensions,
                        dn->rhs_batch_count) ||
        !bld_check_list(b, op, "lhs_contracting_dimensions", dn->lhs_contracting_dimensions,
                        dn->lhs_contracting_count) ||
        !bld_check_list(b, op, "rhs_contracting_dimensions", dn->rhs_contracting_dimensions,
                        dn->rhs_contracting_count))
        return bld_invalid(b);
    if (dn->lhs_batch_count && !bld_attr_ints(b, CXLA_ATTR_LHS_BATCH_DIMS, dn->lhs_batch_dimensions,
                                              dn->lhs_batch_count, &a[n++]))
        return bld_invalid(b);
    if (!bld_attr_ints(b, CXLA_ATTR_LHS_CONTRACTING_DIMS, dn->lhs_contracting_dimensions,
                       dn->lhs_contracting_count, &a[n++]))
        return bld_invalid(b);
    if (dn->rhs_batch_count && !bld_attr_ints(b, CXLA_ATTR_RHS_BATCH_DIMS, dn->rhs_batch_dimensions,
                                              dn->rhs_batch_count, &a[n++]))
        return bld_invalid(b);
    if (!bld_attr_ints(b, CXLA_ATTR_RHS_CONTRACTING_DIMS, dn->rhs_contracting_dimensions,
                       dn->rhs_contracting_count, &a[n++]) ||
        !precision_attr(b, precision, a, &n))
        return bld_invalid(b);
    cxla_shape s;
    if (!preferred_shape(b, op, preferred_element_type, &s)) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_DOT, &s, 2, ins, n, a);
}

cxla_op cxla_dot(cxla_op lhs, cxla_op rhs) {
    cxla_op pair[2] = {lhs, rhs};
    cxla_builder *b = bld_of(pair, 2);
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *l = bld_operand(b, "Dot", lhs, 0);
    if (!l) return bld_invalid(b);
    int64_t lc = l->shape.rank == 1 ? 0 : 1, rc = 0;
    cxla_dot_dimension_numbers dn = {.lhs_contracting_dimensions = &lc,
                                     .lhs_contracting_count = 1,
                                     .rhs_contracting_dimensions = &rc,
                                     .rhs_contracting_count = 1};
    return cxla_dot_general(lhs, rhs, &dn, NULL, CXLA_TYPE_INVALID);
}

/* ---- convolution --------------------------------------------------------------------------- */

/* Decoded dimension numbers in the builder's arena (the default when |dn| is NULL). */
static bool conv_dims(cxla_builder *b, const char *op, const cxla_conv_dimension_numbers *dn,
                      int64_t spatial, cxla_conv_dims *out) {
    int64_t n = dn ? dn->spatial_count : spatial;
    if (n < 0 || n > CXLA_MAX_RANK - 2 || n > 10) {
        bld_fail(b, op, "unsupported number of spatial dimensions %" PRId64, n);
        return false;
    }
    int64_t *sp[3];
    for (int k = 0; k < 3; k++)
        if (!(sp[k] = bld_copy_ints(b, NULL, n))) {
            bld_fail_status(b, op, OOM());
            return false;
        }
    out->spatial_count = n;
    if (!dn) {
        out->input_batch = 0;
        out->input_feature = 1;
        out->kernel_output_feature = 0;
        out->kernel_input_feature = 1;
        out->output_batch = 0;
        out->output_feature = 1;
        for (int64_t i = 0; i < n; i++) sp[0][i] = sp[1][i] = sp[2][i] = i + 2;
    } else {
        if (!bld_check_list(b, op, "input_spatial_dimensions", dn->input_spatial_dimensions, n) ||
            !bld_check_list(b, op, "kernel_spatial_dimensions", dn->kernel_spatial_dimensions, n) ||
            !bld_check_list(b, op, "output_spatial_dimensions", dn->output_spatial_dimensions, n))
            return false;
        out->input_batch = dn->input_batch_dimension;
        out->input_feature = dn->input_feature_dimension;
        out->kernel_input_feature = dn->kernel_input_feature_dimension;
        out->kernel_output_feature = dn->kernel_output_feature_dimension;
        out->output_batch = dn->output_batch_dimension;
        out->output_feature = dn->output_feature_dimension;
        for (int64_t i = 0; i < n; i++) {
            sp[0][i] = dn->input_spatial_dimensions[i];
            sp[1][i] = dn->kernel_spatial_dimensions[i];
            sp[2][i] = dn->output_spatial_dimensions[i];
        }
    }
    out->input_spatial = sp[0];
    out->kernel_spatial = sp[1];
    out->output_spatial = sp[2];
    /* Every dimension of each operand named once, in range (the printer needs it). */
    int64_t rank = n + 2;
    const int64_t firsts[3][2] = {{out->input_batch, out->input_feature},
                                  {out->kernel_input_feature, out->kernel_output_feature},
                                  {out->output_batch, out->output_feature}};
    static const char *const what[3] = {"input", "kernel", "output"};
    for (int k = 0; k < 3; k++) {
        bool seen[CXLA_MAX_RANK] = {false};
        for (int64_t i = 0; i < n + 2; i++) {
            int64_t d = i < 2 ? firsts[k][i] : sp[k][i - 2];
            if (d < 0 || d >= rank || seen[d]) {
                bld_fail(b, op,
                         "invalid convolution dimension numbers: the %s dimensions must be a "
                         "permutation of 0..%" PRId64,
                         what[k], rank - 1);
                return false;
            }
            seen[d] = true;
        }
    }
    return true;
}

cxla_op cxla_conv_general_dilated(cxla_op lhs, cxla_op rhs, const int64_t *window_strides,
                                  int64_t spatial_count, const cxla_pad_pair *padding,
                                  const int64_t *lhs_dilation, const int64_t *rhs_dilation,
                                  const cxla_conv_dimension_numbers *dn,
                                  int64_t feature_group_count, int64_t batch_group_count,
                                  const cxla_op_precision *precision,
                                  cxla_type preferred_element_type) {
    const char *op = "ConvGeneralDilated";
    cxla_op pair[2] = {lhs, rhs};
    cxla_builder *b = bld_of(pair, 2);
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *ins[2];
    if (!(ins[0] = bld_operand(b, op, lhs, 0)) || !(ins[1] = bld_operand(b, op, rhs, 1)) ||
        !bld_check_list(b, op, "window_strides", window_strides, spatial_count))
        return bld_invalid(b);
    const cxla_shape *ls = &ins[0]->shape, *rs = &ins[1]->shape;
    if (!cxla_shape_is_array(ls) || !cxla_shape_is_array(rs) || ls->rank != spatial_count + 2 ||
        rs->rank != spatial_count + 2) {
        bld_fail(b, op,
                 "expects lhs and rhs of rank %" PRId64 " (%" PRId64
                 " spatial dimensions), got %s and %s",
                 spatial_count + 2, spatial_count, bld_shape_str(b, ls), bld_shape_str(b, rs));
        return bld_invalid(b);
    }
    cxla_attr a[5];
    int n = 0;
    cxla_conv_dims cd;
    if (!conv_dims(b, op, dn, spatial_count, &cd)) return bld_invalid(b);
    if (cd.spatial_count != spatial_count) {
        bld_fail(b, op,
                 "the dimension numbers have %" PRId64 " spatial dimensions, the strides %" PRId64,
                 cd.spatial_count, spatial_count);
        return bld_invalid(b);
    }
    cxla_attr *w = &a[n++];
    *w = bld_attr(CXLA_ATTR_WINDOW);
    w->v.window.rank = spatial_count;
    w->v.window.dims = cxla_arena_alloc_array(
        b->module->arena, (size_t)(spatial_count ? spatial_count : 1), sizeof(cxla_window_dim));
    if (!w->v.window.dims) {
        bld_fail_status(b, op, OOM());
        return bld_invalid(b);
    }
    for (int64_t i = 0; i < spatial_count; i++) {
        cxla_window_dim *d = &w->v.window.dims[i];
        d->size = rs->dims[cd.kernel_spatial[i]];
        d->stride = window_strides[i];
        d->pad_low = padding ? padding[i].low : 0;
        d->pad_high = padding ? padding[i].high : 0;
        d->lhs_dilation = lhs_dilation ? lhs_dilation[i] : 1;
        d->rhs_dilation = rhs_dilation ? rhs_dilation[i] : 1;
    }
    a[n] = bld_attr(CXLA_ATTR_DIM_LABELS);
    a[n++].v.conv = cd;
    if (feature_group_count != 1)
        a[n++] = bld_attr_int(CXLA_ATTR_FEATURE_GROUP_COUNT, feature_group_count);
    if (batch_group_count != 1)
        a[n++] = bld_attr_int(CXLA_ATTR_BATCH_GROUP_COUNT, batch_group_count);
    if (!precision_attr(b, precision, a, &n)) return bld_invalid(b);
    cxla_shape s;
    if (!preferred_shape(b, op, preferred_element_type, &s)) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_CONVOLUTION, &s, 2, ins, n, a);
}

cxla_op cxla_conv_general(cxla_op lhs, cxla_op rhs, const int64_t *window_strides,
                          int64_t spatial_count, const cxla_pad_pair *padding,
                          const cxla_conv_dimension_numbers *dimension_numbers,
                          int64_t feature_group_count, int64_t batch_group_count) {
    return cxla_conv_general_dilated(lhs, rhs, window_strides, spatial_count, padding, NULL, NULL,
                                     dimension_numbers, feature_group_count, batch_group_count,
                                     NULL, CXLA_TYPE_INVALID);
}

cxla_op cxla_conv_with_general_padding(cxla_op lhs, cxla_op rhs, const int64_t *window_strides,
                                       int64_t spatial_count, const cxla_pad_pair *padding,
                                       int64_t feature_group_count, int64_t batch_group_count) {
    return cxla_conv_general_dilated(lhs, rhs, window_strides, spatial_count, padding, NULL, NULL,
                                     NULL, feature_group_count, batch_group_count, NULL,
                                     CXLA_TYPE_INVALID);
}

cxla_op cxla_conv_with_general_dimensions(cxla_op lhs, cxla_op rhs, const int64_t *window_strides,
                                          int64_t spatial_count, cxla_padding padding,
                                          const cxla_conv_dimension_numbers *dn,
                                          int64_t feature_group_count, int64_t batch_group_count) {
    const char *op = "Conv";
    cxla_op pair[2] = {lhs, rhs};
    cxla_builder *b = bld_of(pair, 2);
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *l, *r;
    if (!(l = bld_operand(b, op, lhs, 0)) || !(r = bld_operand(b, op, rhs, 1)) ||
        !bld_check_list(b, op, "window_strides", window_strides, spatial_count))
        return bld_invalid(b);
    cxla_conv_dims cd;
    if (!conv_dims(b, op, dn, spatial_count, &cd)) return bld_invalid(b);
    if (padding != CXLA_PADDING_VALID && padding != CXLA_PADDING_SAME) {
        bld_fail(b, op, "unknown padding %d", (int)padding);
        return bld_invalid(b);
    }
    if (l->shape.rank != spatial_count + 2 || r->shape.rank != spatial_count + 2 ||
        cd.spatial_count != spatial_count) {
        bld_fail(b, op, "expects lhs and rhs of rank %" PRId64 ", got %s and %s", spatial_count + 2,
                 bld_shape_str(b, &l->shape), bld_shape_str(b, &r->shape));
        return bld_invalid(b);
    }
    cxla_pad_pair pads[CXLA_MAX_RANK];
    for (int64_t i = 0; i < spatial_count; i++)
        bld_make_padding(l->shape.dims[cd.input_spatial[i]], r->shape.dims[cd.kernel_spatial[i]],
                         window_strides[i], padding, &pads[i].low, &pads[i].high);
    return cxla_conv_general_dilated(lhs, rhs, window_strides, spatial_count, pads, NULL, NULL, dn,
                                     feature_group_count, batch_group_count, NULL,
                                     CXLA_TYPE_INVALID);
}

cxla_op cxla_conv(cxla_op lhs, cxla_op rhs, const int64_t *window_strides, int64_t spatial_count,
                  cxla_padding padding, int64_t feature_group_count, int64_t batch_group_count) {
    return cxla_conv_with_general_dimensions(lhs, rhs, window_strides, spatial_count, padding, NULL,
                                             feature_group_count, batch_group_count);
}

/* ---- FFT, Cholesky, triangular solve ----------------------------------------------------------
 */

cxla_op cxla_fft(cxla_op operand, cxla_fft_type fft_type, const int64_t *fft_length,
                 int64_t count) {
    static const char *const words[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    const char *op = "Fft";
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, operand, 0);
    if (!in || !bld_check_list(b, op, "fft_length", fft_length, count)) return bld_invalid(b);
    if ((int)fft_type < 0 || fft_type > CXLA_FFT_IRFFT) {
        bld_fail(b, op, "unknown FFT type %d", (int)fft_type);
        return bld_invalid(b);
    }
    cxla_attr a[2];
    a[0] = bld_attr_word(CXLA_ATTR_FFT_TYPE, words[fft_type]);
    if (!bld_attr_ints(b, CXLA_ATTR_FFT_LENGTH, fft_length, count, &a[1])) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_FFT, NULL, 1, &in, 2, a);
}

cxla_op cxla_cholesky(cxla_op a, bool lower) {
    cxla_builder *b = a.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, "Cholesky", a, 0);
    if (!in) return bld_invalid(b);
    cxla_attr at = bld_attr_bool(CXLA_ATTR_LOWER, true);
    return bld_emit_ops(b, "Cholesky", CXLA_OP_CHOLESKY, NULL, 1, &in, lower ? 1 : 0, &at);
}

cxla_op cxla_triangular_solve(cxla_op a, cxla_op b_op, bool left_side, bool lower,
                              bool unit_diagonal, cxla_transpose_type transpose_a) {
    static const char *const words[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
    const char *op = "TriangularSolve";
    cxla_op pair[2] = {a, b_op};
    cxla_builder *b = bld_of(pair, 2);
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *ins[2];
    if (!(ins[0] = bld_operand(b, op, a, 0)) || !(ins[1] = bld_operand(b, op, b_op, 1)))
        return bld_invalid(b);
    if ((int)transpose_a < 0 || transpose_a > CXLA_TRANSPOSE_ADJOINT) {
        bld_fail(b, op, "unknown transpose %d", (int)transpose_a);
        return bld_invalid(b);
    }
    cxla_attr at[4];
    int n = 0;
    if (left_side) at[n++] = bld_attr_bool(CXLA_ATTR_LEFT_SIDE, true);
    if (lower) at[n++] = bld_attr_bool(CXLA_ATTR_LOWER, true);
    if (unit_diagonal) at[n++] = bld_attr_bool(CXLA_ATTR_UNIT_DIAGONAL, true);
    at[n++] = bld_attr_word(CXLA_ATTR_TRANSPOSE_A, words[transpose_a]);
    return bld_emit_ops(b, op, CXLA_OP_TRIANGULAR_SOLVE, NULL, 2, ins, n, at);
}

/* ---- batch normalization ----------------------------------------------------------------------
 */

static cxla_op batch_norm(const char *op, cxla_opcode opcode, const cxla_op *ops, int64_t n,
                          float epsilon, int64_t feature_index) {
    cxla_builder *b = bld_of(ops, n);
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr **ins;
    if (!bld_operands(b, op, ops, n, &ins)) return bld_invalid(b);
    cxla_attr a[2] = {bld_attr_float(CXLA_ATTR_EPSILON, epsilon),
                      bld_attr_int(CXLA_ATTR_FEATURE_INDEX, feature_index)};
    return bld_emit_ops(b, op, opcode, NULL, n, ins, 2, a);
}

cxla_op cxla_batch_norm_training(cxla_op operand, cxla_op scale, cxla_op offset, float epsilon,
                                 int64_t feature_index) {
    cxla_op ops[3] = {operand, scale, offset};
    return batch_norm("BatchNormTraining", CXLA_OP_BATCH_NORM_TRAINING, ops, 3, epsilon,
                      feature_index);
}

cxla_op cxla_batch_norm_inference(cxla_op operand, cxla_op scale, cxla_op offset, cxla_op mean,
                                  cxla_op variance, float epsilon, int64_t feature_index) {
    cxla_op ops[5] = {operand, scale, offset, mean, variance};
    return batch_norm("BatchNormInference", CXLA_OP_BATCH_NORM_INFERENCE, ops, 5, epsilon,
                      feature_index);
}

cxla_op cxla_batch_norm_grad(cxla_op operand, cxla_op scale, cxla_op batch_mean, cxla_op batch_var,
                             cxla_op grad_output, float epsilon, int64_t feature_index) {
    cxla_op ops[5] = {operand, scale, batch_mean, batch_var, grad_output};
    return batch_norm("BatchNormGrad", CXLA_OP_BATCH_NORM_GRAD, ops, 5, epsilon, feature_index);
}
