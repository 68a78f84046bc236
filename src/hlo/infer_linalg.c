/* Shape inference for dot (and its ragged and block-scaled forms), convolution, FFT,
 * Cholesky, triangular solve and batch normalization (XLA's InferDotOpShape,
 * InferRaggedDotOpShape, InferConvolveShape, InferFftShape, InferCholeskyShape,
 * InferTriangularSolveShape, InferBatchNorm*Shape). */
#include <inttypes.h>
#include <string.h>

#include "hlo/infer_internal.h"

typedef struct dims_list {
    const int64_t *v;
    int64_t n;
} dims_list;

static const int64_t no_dims[1] = {0};

static dims_list opt_list(const cxla_instr *in, cxla_attr_id id) {
    dims_list l;
    l.v = cxla_instr_ints(in, id, &l.n);
    if (!l.v) l.v = no_dims;
    return l;
}

static bool is_floaty(cxla_type t) {
    return cxla_type_is_float(t) || cxla_type_is_complex(t);
}

/* operand_precision={p,p}: one entry per operand; packed_nibble on both or neither, and
 * then only on 8-bit integers. */
static cxla_status check_precision(const cxla_instr *in, cxla_arena *arena, const cxla_shape *lhs,
                                   const cxla_shape *rhs) {
    const cxla_attr *p = cxla_instr_attr(in, CXLA_ATTR_OPERAND_PRECISION);
    if (!p) return NULL;
    if (p->kind != CXLA_ATTR_KIND_PRECISIONS || p->v.precisions.count != 2)
        return cxla_infer_fail(in, "operand_precision must have 2 entries (one per operand)");
    int nibbles = 0;
    for (int i = 0; i < 2; i++) nibbles += p->v.precisions.items[i] == CXLA_PRECISION_PACKED_NIBBLE;
    if (nibbles == 1)
        return cxla_infer_fail(in, "packed_nibble precision must be given for both operands");
    if (nibbles == 2 && (!cxla_type_is_integer(lhs->type) || cxla_type_bits(lhs->type) != 8 ||
                         !cxla_type_is_integer(rhs->type) || cxla_type_bits(rhs->type) != 8))
        return cxla_infer_fail(in,
                               "packed_nibble precision applies to 8-bit integers, got %s and %s",
                               STR(lhs), STR(rhs));
    return NULL;
}

/* The result element type: the declared one (XLA's preferred_element_type), which may
 * widen but not narrow integer operands. Operands share a type, or are both floats, or
 * (as XLA's dots and convolutions take them: s8 x bf16) are an integer and a float with a
 * floating-point result, in which the products are computed. */
static cxla_status result_type(const cxla_instr *in, cxla_arena *arena, const cxla_shape *lhs,
                               const cxla_shape *rhs, cxla_type *out) {
    cxla_type a = lhs->type, b = rhs->type;
    bool declared = cxla_type_is_array(in->shape.type) && in->shape.type != CXLA_TOKEN &&
                    in->shape.type != CXLA_OPAQUE;
    bool mixed_ok = declared && is_floaty(in->shape.type) &&
                    (is_floaty(a) || cxla_type_is_integer(a)) &&
                    (is_floaty(b) || cxla_type_is_integer(b)) &&
                    (cxla_type_is_complex(in->shape.type) ||
                     (!cxla_type_is_complex(a) && !cxla_type_is_complex(b)));
    if (a != b && !(is_floaty(a) && is_floaty(b)) && !mixed_ok)
        return cxla_infer_fail(in,
                               "operands must have the same element type (or both be "
                               "floating point, or an integer and a float with a floating-point "
                               "result), got %s and %s",
                               STR(lhs), STR(rhs));
    cxla_type from = cxla_type_bits(a) >= cxla_type_bits(b) ? a : b;
    if (is_floaty(a) != is_floaty(b)) from = is_floaty(a) ? a : b;
    cxla_type want = declared ? in->shape.type : from;
    if (!is_floaty(from) && cxla_type_bits(want) < cxla_type_bits(from))
        return cxla_infer_fail(in,
                               "the result type %s must not be narrower than the operand type %s",
                               cxla_type_name(want), cxla_type_name(from));
    *out = want;
    return NULL;
}

static cxla_status check_dot_list(const cxla_instr *in, cxla_arena *arena, const char *name,
                                  dims_list l, const cxla_shape *s, uint8_t *seen) {
    for (int64_t i = 0; i < l.n; i++) {
        if (l.v[i] < 0 || l.v[i] >= s->rank)
            return cxla_infer_fail(in, "%s=%s: %" PRId64 " is out of range for %s", name,
                                   INTS_STR(l.v, l.n), l.v[i], STR(s));
        if (seen[l.v[i]])
            return cxla_infer_fail(in, "%s=%s: dimension %" PRId64 " of %s is used twice", name,
                                   INTS_STR(l.v, l.n), l.v[i], STR(s));
        seen[l.v[i]] = 1;
    }
    return NULL;
}

/* The dims of dot(lhs, rhs): batch, lhs free, rhs free. |rhs_skip| (or -1) is an extra rhs
 * dimension left out (ragged-dot's group dimension). */
static cxla_status dot_dims(const cxla_instr *in, cxla_arena *arena, const cxla_shape *lhs,
                            const cxla_shape *rhs, int64_t rhs_skip, int64_t *dims, uint8_t *dyn,
                            int64_t *rank) {
    if (!cxla_infer_is_array(lhs) || !cxla_infer_is_array(rhs))
        return cxla_infer_fail(in, "operands must be arrays, got %s and %s", STR(lhs), STR(rhs));
    dims_list lb = opt_list(in, CXLA_ATTR_LHS_BATCH_DIMS),
              rb = opt_list(in, CXLA_ATTR_RHS_BATCH_DIMS);
    /* No contracting dimensions is an outer product: XLA's parser takes both lists as
     * optional (empty DotDimensionNumbers). */
    dims_list lc = opt_list(in, CXLA_ATTR_LHS_CONTRACTING_DIMS),
              rc = opt_list(in, CXLA_ATTR_RHS_CONTRACTING_DIMS);
    uint8_t lseen[CXLA_MAX_RANK] = {0}, rseen[CXLA_MAX_RANK] = {0};
    CXLA_RETURN_IF_ERROR(check_dot_list(in, arena, "lhs_contracting_dims", lc, lhs, lseen));
    CXLA_RETURN_IF_ERROR(check_dot_list(in, arena, "lhs_batch_dims", lb, lhs, lseen));
    if (rhs_skip >= 0) rseen[rhs_skip] = 1;
    CXLA_RETURN_IF_ERROR(check_dot_list(in, arena, "rhs_contracting_dims", rc, rhs, rseen));
    CXLA_RETURN_IF_ERROR(check_dot_list(in, arena, "rhs_batch_dims", rb, rhs, rseen));
    if (lc.n != rc.n)
        return cxla_infer_fail(in,
                               "lhs_contracting_dims=%s and rhs_contracting_dims=%s must have "
                               "the same length",
                               INTS_STR(lc.v, lc.n), INTS_STR(rc.v, rc.n));
    for (int64_t i = 0; i < lc.n; i++)
        if (lhs->dims[lc.v[i]] != rhs->dims[rc.v[i]])
            return cxla_infer_fail(in,
                                   "contracting dimension sizes differ: dimension %" PRId64
                                   " of %s and %" PRId64 " of %s",
                                   lc.v[i], STR(lhs), rc.v[i], STR(rhs));
    if (lb.n != rb.n)
        return cxla_infer_fail(in,
                               "lhs_batch_dims=%s and rhs_batch_dims=%s must have the same "
                               "length",
                               INTS_STR(lb.v, lb.n), INTS_STR(rb.v, rb.n));
    for (int64_t i = 0; i < lb.n; i++)
        if (lhs->dims[lb.v[i]] != rhs->dims[rb.v[i]])
            return cxla_infer_fail(in,
                                   "batch dimension sizes differ: dimension %" PRId64
                                   " of %s and %" PRId64 " of %s",
                                   lb.v[i], STR(lhs), rb.v[i], STR(rhs));
    int64_t r = 0;
    for (int64_t i = 0; i < lb.n; i++) {
        dims[r] = lhs->dims[lb.v[i]];
        dyn[r++] = cxla_infer_dyn(lhs, lb.v[i]);
    }
    for (int64_t i = 0; i < lhs->rank; i++)
        if (!lseen[i]) {
            dims[r] = lhs->dims[i];
            dyn[r++] = cxla_infer_dyn(lhs, i);
        }
    for (int64_t i = 0; i < rhs->rank; i++)
        if (!rseen[i]) {
            if (r >= CXLA_MAX_RANK) return cxla_infer_fail(in, "the result rank is too large");
            dims[r] = rhs->dims[i];
            dyn[r++] = cxla_infer_dyn(rhs, i);
        }
    *rank = r;
    return NULL;
}

CXLA_INFER_DECLARE(cxla_infer_dot) {
    const cxla_shape *lhs = OPS(0), *rhs = OPS(1);
    int64_t dims[CXLA_MAX_RANK], rank;
    uint8_t dyn[CXLA_MAX_RANK];
    CXLA_RETURN_IF_ERROR(dot_dims(in, arena, lhs, rhs, -1, dims, dyn, &rank));
    CXLA_RETURN_IF_ERROR(check_precision(in, arena, lhs, rhs));
    cxla_type t;
    CXLA_RETURN_IF_ERROR(result_type(in, arena, lhs, rhs, &t));
    return cxla_infer_make_array(arena, t, rank, dims, dyn, out);
}

/* ragged-dot(lhs, rhs, group_sizes): lhs_ragged_dims names one lhs dimension split into
 * groups of group_sizes (last dimension g). A ragged non-contracting dimension takes the
 * group's slice of rhs (rhs_group_dims names rhs's g-sized group dimension, left out of
 * the result); a ragged contracting dimension gives one result per group (a leading g);
 * a ragged batch dimension gives the plain dot. */
CXLA_INFER_DECLARE(cxla_infer_ragged_dot) {
    const cxla_shape *lhs = OPS(0), *rhs = OPS(1), *gs = OPS(2);
    if (!cxla_infer_is_array(gs) || !cxla_type_is_integer(gs->type) || gs->rank < 1)
        return cxla_infer_fail(in, "group_sizes must be an integer array of rank >= 1, got %s",
                               STR(gs));
    int64_t g = gs->dims[gs->rank - 1];
    dims_list ragged = opt_list(in, CXLA_ATTR_LHS_RAGGED_DIMS);
    dims_list group = opt_list(in, CXLA_ATTR_RHS_GROUP_DIMS);
    if (ragged.n != 1 || !cxla_infer_is_array(lhs) || ragged.v[0] < 0 || ragged.v[0] >= lhs->rank)
        return cxla_infer_fail(in, "lhs_ragged_dims=%s must name one dimension of %s",
                               INTS_STR(ragged.v, ragged.n), STR(lhs));
    dims_list lb = opt_list(in, CXLA_ATTR_LHS_BATCH_DIMS),
              lc = opt_list(in, CXLA_ATTR_LHS_CONTRACTING_DIMS);
    int64_t rd = ragged.v[0];
    bool contracting = cxla_infer_contains(lc.v, lc.n, rd);
    bool batch = cxla_infer_contains(lb.v, lb.n, rd);
    int64_t rhs_skip = -1;
    if (!contracting && !batch) {
        if (group.n != 1 || !cxla_infer_is_array(rhs) || group.v[0] < 0 || group.v[0] >= rhs->rank)
            return cxla_infer_fail(in,
                                   "a ragged non-contracting dimension needs rhs_group_dims "
                                   "naming one dimension of %s, got %s",
                                   STR(rhs), INTS_STR(group.v, group.n));
        rhs_skip = group.v[0];
        if (rhs->dims[rhs_skip] != g)
            return cxla_infer_fail(in,
                                   "rhs group dimension %" PRId64 " of %s must have the %" PRId64
                                   " groups of group_sizes %s",
                                   rhs_skip, STR(rhs), g, STR(gs));
    } else if (group.n != 0) {
        return cxla_infer_fail(in,
                               "rhs_group_dims=%s is only for a ragged non-contracting "
                               "dimension",
                               INTS_STR(group.v, group.n));
    }
    int64_t dims[CXLA_MAX_RANK + 1], rank;
    uint8_t dyn[CXLA_MAX_RANK + 1] = {0};
    CXLA_RETURN_IF_ERROR(dot_dims(in, arena, lhs, rhs, rhs_skip, dims + 1, dyn + 1, &rank));
    CXLA_RETURN_IF_ERROR(check_precision(in, arena, lhs, rhs));
    cxla_type t;
    CXLA_RETURN_IF_ERROR(result_type(in, arena, lhs, rhs, &t));
    if (contracting) {
        dims[0] = g;
        return cxla_infer_make_array(arena, t, rank + 1, dims, dyn, out);
    }
    return cxla_infer_make_array(arena, t, rank, dims + 1, dyn + 1, out);
}

/* scaled-dot(lhs, rhs, lhs_scale, rhs_scale), the order of XLA's CreateScaledDot and of
 * its tests: dot of lhs and rhs; each scale has its operand's rank and each of its
 * dimensions divides the operand's (block scaling). operand_precision has one entry per
 * dot operand (lhs, rhs), as dot's. */
CXLA_INFER_DECLARE(cxla_infer_scaled_dot) {
    const cxla_shape *lhs = OPS(0), *rhs = OPS(1), *ls = OPS(2), *rs = OPS(3);
    const cxla_shape *pairs[2][2] = {{lhs, ls}, {rhs, rs}};
    for (int i = 0; i < 2; i++) {
        const cxla_shape *x = pairs[i][0], *s = pairs[i][1];
        if (!cxla_infer_is_array(x) || !cxla_infer_is_array(s) || s->rank != x->rank)
            return cxla_infer_fail(in, "scale %s must be an array of the rank of its operand %s",
                                   STR(s), STR(x));
        for (int64_t d = 0; d < x->rank; d++)
            if (s->dims[d] <= 0 ? x->dims[d] != 0 : x->dims[d] % s->dims[d] != 0)
                return cxla_infer_fail(
                    in, "scale %s does not divide its operand %s in dimension %" PRId64, STR(s),
                    STR(x), d);
    }
    int64_t dims[CXLA_MAX_RANK], rank;
    uint8_t dyn[CXLA_MAX_RANK];
    CXLA_RETURN_IF_ERROR(dot_dims(in, arena, lhs, rhs, -1, dims, dyn, &rank));
    CXLA_RETURN_IF_ERROR(check_precision(in, arena, lhs, rhs));
    cxla_type t;
    CXLA_RETURN_IF_ERROR(result_type(in, arena, lhs, rhs, &t));
    return cxla_infer_make_array(arena, t, rank, dims, dyn, out);
}

/* ---- convolution ----------------------------------------------------------------- */

/* |first|, |second| and |spatial| must be a permutation of 0..n-1. */
static bool is_dim_permutation(int64_t n, int64_t first, int64_t second, const int64_t *spatial,
                               int64_t count) {
    uint8_t seen[CXLA_MAX_RANK] = {0};
    if (count + 2 != n || n > CXLA_MAX_RANK) return false;
    int64_t all[CXLA_MAX_RANK];
    all[0] = first;
    all[1] = second;
    for (int64_t i = 0; i < count; i++) all[i + 2] = spatial ? spatial[i] : -1;
    for (int64_t i = 0; i < n; i++) {
        if (all[i] < 0 || all[i] >= n || seen[all[i]]) return false;
        seen[all[i]] = 1;
    }
    return true;
}

CXLA_INFER_DECLARE(cxla_infer_convolution) {
    const cxla_shape *lhs = OPS(0), *rhs = OPS(1);
    if (!cxla_infer_is_array(lhs) || !cxla_infer_is_array(rhs))
        return cxla_infer_fail(in, "operands must be arrays, got %s and %s", STR(lhs), STR(rhs));
    const cxla_attr *dl = cxla_instr_attr(in, CXLA_ATTR_DIM_LABELS);
    if (!dl || dl->kind != CXLA_ATTR_KIND_DIM_LABELS)
        return cxla_infer_fail(in, "missing attribute dim_labels=");
    const cxla_conv_dims *c = &dl->v.conv;
    int64_t fgc = 1, bgc = 1;
    cxla_instr_int(in, CXLA_ATTR_FEATURE_GROUP_COUNT, &fgc);
    cxla_instr_int(in, CXLA_ATTR_BATCH_GROUP_COUNT, &bgc);
    if (fgc <= 0)
        return cxla_infer_fail(in, "feature_group_count=%" PRId64 " must be positive", fgc);
    if (bgc <= 0) return cxla_infer_fail(in, "batch_group_count=%" PRId64 " must be positive", bgc);
    if (fgc > 1 && bgc > 1)
        return cxla_infer_fail(in,
                               "feature_group_count=%" PRId64 " and batch_group_count=%" PRId64
                               " cannot both exceed 1",
                               fgc, bgc);
    int64_t ns = c->spatial_count, n = ns + 2;
    const cxla_attr *win = cxla_instr_attr(in, CXLA_ATTR_WINDOW);
    int64_t wrank = win && win->kind == CXLA_ATTR_KIND_WINDOW ? win->v.window.rank : 0;
    if (wrank != ns)
        return cxla_infer_fail(in,
                               "the window has %" PRId64 " dimensions but dim_labels has %" PRId64
                               " spatial dimensions",
                               wrank, ns);
    if (lhs->rank != n)
        return cxla_infer_fail(in, "the input %s must have rank %" PRId64 " (dim_labels)", STR(lhs),
                               n);
    if (rhs->rank != n)
        return cxla_infer_fail(in, "the kernel %s must have rank %" PRId64 " (dim_labels)",
                               STR(rhs), n);
    if (!is_dim_permutation(n, c->input_batch, c->input_feature, c->input_spatial, ns))
        return cxla_infer_fail(in, "the input labels of dim_labels must name each dimension once");
    if (!is_dim_permutation(n, c->kernel_input_feature, c->kernel_output_feature, c->kernel_spatial,
                            ns))
        return cxla_infer_fail(in, "the kernel labels of dim_labels must name each dimension once");
    if (!is_dim_permutation(n, c->output_batch, c->output_feature, c->output_spatial, ns))
        return cxla_infer_fail(in, "the output labels of dim_labels must name each dimension once");
    int64_t in_batch = lhs->dims[c->input_batch], in_feat = lhs->dims[c->input_feature];
    int64_t k_in = rhs->dims[c->kernel_input_feature], k_out = rhs->dims[c->kernel_output_feature];
    const char *shapes = cxla_infer_operands_str(arena, in);
    if (k_out % bgc != 0)
        return cxla_infer_fail(in,
                               "kernel output features (%" PRId64
                               ") must be a multiple of batch_group_count=%" PRId64 "; got %s",
                               k_out, bgc, shapes);
    if (in_feat % fgc != 0 || in_feat / fgc != k_in)
        return cxla_infer_fail(in,
                               "input features (%" PRId64 ") / feature_group_count=%" PRId64
                               " must equal kernel input features (%" PRId64 "); got %s",
                               in_feat, fgc, k_in, shapes);
    if (k_out % fgc != 0)
        return cxla_infer_fail(in,
                               "kernel output features (%" PRId64
                               ") must be a multiple of feature_group_count=%" PRId64 "; got %s",
                               k_out, fgc, shapes);
    if (in_batch % bgc != 0)
        return cxla_infer_fail(in,
                               "input batch (%" PRId64
                               ") must be a multiple of batch_group_count=%" PRId64 "; got %s",
                               in_batch, bgc, shapes);
    int64_t base[CXLA_MAX_RANK], wout[CXLA_MAX_RANK];
    for (int64_t i = 0; i < ns; i++) {
        base[i] = lhs->dims[c->input_spatial[i]];
        if (win->v.window.dims[i].size != rhs->dims[c->kernel_spatial[i]])
            return cxla_infer_fail(in,
                                   "window size %" PRId64 " of spatial dimension %" PRId64
                                   " differs from the kernel's %" PRId64 "; got %s",
                                   win->v.window.dims[i].size, i, rhs->dims[c->kernel_spatial[i]],
                                   shapes);
    }
    if (ns > 0) CXLA_RETURN_IF_ERROR(cxla_infer_window_output(in, arena, win, ns, base, wout));
    int64_t dims[CXLA_MAX_RANK];
    uint8_t dyn[CXLA_MAX_RANK] = {0};
    dims[c->output_batch] = in_batch / bgc;
    dims[c->output_feature] = k_out;
    dyn[c->output_batch] = cxla_infer_dyn(lhs, c->input_batch);
    for (int64_t i = 0; i < ns; i++) {
        dims[c->output_spatial[i]] = wout[i];
        dyn[c->output_spatial[i]] =
            cxla_infer_dyn(lhs, c->input_spatial[i]) || cxla_infer_dyn(rhs, c->kernel_spatial[i]);
    }
    if (cxla_infer_dyn(rhs, c->kernel_output_feature))
        return cxla_infer_fail(in, "a dynamic kernel output feature dimension is not supported: %s",
                               STR(rhs));
    CXLA_RETURN_IF_ERROR(check_precision(in, arena, lhs, rhs));
    if (fgc != 1 || bgc != 1) {
        const cxla_attr *p = cxla_instr_attr(in, CXLA_ATTR_OPERAND_PRECISION);
        if (p && p->kind == CXLA_ATTR_KIND_PRECISIONS && p->v.precisions.count == 2 &&
            p->v.precisions.items[0] == CXLA_PRECISION_PACKED_NIBBLE)
            return cxla_infer_fail(in, "packed_nibble precision does not support group counts");
    }
    cxla_type t;
    CXLA_RETURN_IF_ERROR(result_type(in, arena, lhs, rhs, &t));
    return cxla_infer_make_array(arena, t, n, dims, dyn, out);
}

/* ---- fft, cholesky, triangular-solve --------------------------------------------- */

CXLA_INFER_DECLARE(cxla_infer_fft) {
    const cxla_shape *x = OPS(0);
    if (!cxla_infer_is_array(x))
        return cxla_infer_fail(in, "the operand must be an array, got %s", STR(x));
    const char *type;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_word(in, CXLA_ATTR_FFT_TYPE, &type));
    const int64_t *len;
    int64_t n;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_ints(in, CXLA_ATTR_FFT_LENGTH, &len, &n));
    if (n < 1 || n > 3)
        return cxla_infer_fail(in, "fft_length=%s must have 1 to 3 entries", INTS_STR(len, n));
    if (x->rank < n)
        return cxla_infer_fail(
            in, "an FFT of rank %" PRId64 " needs an operand of rank >= %" PRId64 ", got %s", n, n,
            STR(x));
    int64_t first = x->rank - n, last = x->rank - 1;
    int64_t dims[CXLA_MAX_RANK];
    for (int64_t i = 0; i < x->rank; i++) dims[i] = x->dims[i];
    if (strcmp(type, "FFT") == 0 || strcmp(type, "IFFT") == 0) {
        if (!cxla_type_is_complex(x->type))
            return cxla_infer_fail(in, "%s needs a complex operand, got %s", type, STR(x));
        return cxla_infer_copy(arena, x, out);
    }
    if (strcmp(type, "RFFT") == 0) {
        if (x->type != CXLA_F32 && x->type != CXLA_F64)
            return cxla_infer_fail(in, "RFFT needs an f32 or f64 operand, got %s", STR(x));
        for (int64_t i = 0; i < n; i++)
            if (x->dims[first + i] != len[i])
                return cxla_infer_fail(in,
                                       "RFFT: the minor dimensions of %s must match "
                                       "fft_length=%s",
                                       STR(x), INTS_STR(len, n));
        if (len[n - 1] != 0) dims[last] = len[n - 1] / 2 + 1;
        return cxla_infer_make_array(arena, x->type == CXLA_F32 ? CXLA_C64 : CXLA_C128, x->rank,
                                     dims, x->dynamic, out);
    }
    if (strcmp(type, "IRFFT") == 0) {
        if (!cxla_type_is_complex(x->type))
            return cxla_infer_fail(in, "IRFFT needs a complex operand, got %s", STR(x));
        for (int64_t i = 0; i + 1 < n; i++)
            if (x->dims[first + i] != len[i])
                return cxla_infer_fail(in,
                                       "IRFFT: the minor dimensions of %s but the last must "
                                       "match fft_length=%s",
                                       STR(x), INTS_STR(len, n));
        if ((x->dims[last] != 0 || len[n - 1] != 0) && x->dims[last] != len[n - 1] / 2 + 1)
            return cxla_infer_fail(
                in, "IRFFT: the last dimension of %s must be fft_length/2+1 = %" PRId64, STR(x),
                len[n - 1] / 2 + 1);
        dims[last] = len[n - 1];
        return cxla_infer_make_array(arena, cxla_type_component(x->type), x->rank, dims, x->dynamic,
                                     out);
    }
    return cxla_infer_fail(in, "unknown fft_type=%s (expected FFT, IFFT, RFFT or IRFFT)", type);
}

static cxla_status check_square(const cxla_instr *in, cxla_arena *arena, const cxla_shape *a) {
    if (!cxla_infer_is_array(a) || !is_floaty(a->type))
        return cxla_infer_fail(in, "'a' must be a floating-point or complex array, got %s", STR(a));
    if (a->rank < 2) return cxla_infer_fail(in, "'a' must have rank >= 2, got %s", STR(a));
    if (a->dims[a->rank - 1] != a->dims[a->rank - 2])
        return cxla_infer_fail(in, "the two minor dimensions of 'a' must be equal, got %s", STR(a));
    return NULL;
}

CXLA_INFER_DECLARE(cxla_infer_cholesky) {
    CXLA_RETURN_IF_ERROR(check_square(in, arena, OPS(0)));
    return cxla_infer_copy(arena, OPS(0), out);
}

CXLA_INFER_DECLARE(cxla_infer_triangular_solve) {
    const cxla_shape *a = OPS(0), *b = OPS(1);
    CXLA_RETURN_IF_ERROR(check_square(in, arena, a));
    if (!cxla_infer_is_array(b) || b->type != a->type)
        return cxla_infer_fail(in, "'b' must be an array of the element type of 'a', got %s and %s",
                               STR(a), STR(b));
    if (b->rank != a->rank)
        return cxla_infer_fail(in, "'a' and 'b' must have the same rank, got %s and %s", STR(a),
                               STR(b));
    bool left = cxla_instr_bool(in, CXLA_ATTR_LEFT_SIDE);
    if (a->dims[a->rank - 1] != b->dims[b->rank - (left ? 2 : 1)])
        return cxla_infer_fail(in,
                               "the shared dimension of 'a' %s and 'b' %s differs (left_side=%s)",
                               STR(a), STR(b), left ? "true" : "false");
    for (int64_t i = 0; i + 2 < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return cxla_infer_fail(in, "the batch dimensions of 'a' %s and 'b' %s differ", STR(a),
                                   STR(b));
    const char *t = cxla_instr_word(in, CXLA_ATTR_TRANSPOSE_A);
    if (t && strcmp(t, "NO_TRANSPOSE") != 0 && strcmp(t, "TRANSPOSE") != 0 &&
        strcmp(t, "ADJOINT") != 0)
        return cxla_infer_fail(in, "unknown transpose_a=%s", t);
    return cxla_infer_copy(arena, b, out);
}

/* ---- batch normalization --------------------------------------------------------- */

/* Operand 0 is the normalized array; |features| lists the operands that must be rank-1
 * arrays of its element type with one entry per feature. Returns the feature count. */
static cxla_status batch_norm_common(const cxla_instr *in, cxla_arena *arena, const int *features,
                                     int nfeatures, int64_t *feature_index, cxla_shape *feature) {
    const cxla_shape *x = OPS(0);
    if (!cxla_infer_is_array(x) || !cxla_type_is_float(x->type))
        return cxla_infer_fail(in, "the operand must be a floating-point array, got %s", STR(x));
    const cxla_attr *eps = cxla_instr_attr(in, CXLA_ATTR_EPSILON);
    if (!eps || eps->kind != CXLA_ATTR_KIND_FLOAT)
        return cxla_infer_fail(in, "missing attribute epsilon=F");
    CXLA_RETURN_IF_ERROR(cxla_infer_req_int(in, CXLA_ATTR_FEATURE_INDEX, feature_index));
    if (x->rank < 1) return cxla_infer_fail(in, "the operand %s must have rank >= 1", STR(x));
    if (*feature_index < 0 || *feature_index >= x->rank)
        return cxla_infer_fail(in, "feature_index=%" PRId64 " is out of range for %s",
                               *feature_index, STR(x));
    int64_t count = x->dims[*feature_index];
    for (int i = 0; i < nfeatures; i++) {
        const cxla_shape *s = OPS(features[i]);
        if (!cxla_infer_is_array(s) || s->rank != 1 || s->type != x->type || s->dims[0] != count)
            return cxla_infer_fail(
                in, "operand %d must be %s[%" PRId64 "] (one %s per feature of %s), got %s",
                features[i], cxla_type_name(x->type), count, cxla_type_name(x->type), STR(x),
                STR(s));
    }
    return cxla_infer_make_array(arena, x->type, 1, &count, NULL, feature);
}

static cxla_status three(cxla_arena *arena, const cxla_shape *x, const cxla_shape *f,
                         cxla_shape *out) {
    const cxla_shape *parts[3] = {x, f, f};
    return cxla_infer_make_tuple(arena, 3, parts, out);
}

CXLA_INFER_DECLARE(cxla_infer_batch_norm_training) {
    static const int features[] = {1, 2};
    int64_t fi;
    cxla_shape f;
    CXLA_RETURN_IF_ERROR(batch_norm_common(in, arena, features, 2, &fi, &f));
    return three(arena, OPS(0), &f, out);
}

CXLA_INFER_DECLARE(cxla_infer_batch_norm_inference) {
    static const int features[] = {1, 2, 3, 4};
    int64_t fi;
    cxla_shape f;
    CXLA_RETURN_IF_ERROR(batch_norm_common(in, arena, features, 4, &fi, &f));
    return cxla_infer_copy(arena, OPS(0), out);
}

CXLA_INFER_DECLARE(cxla_infer_batch_norm_grad) {
    static const int features[] = {1, 2, 3};
    int64_t fi;
    cxla_shape f;
    CXLA_RETURN_IF_ERROR(batch_norm_common(in, arena, features, 3, &fi, &f));
    const cxla_shape *x = OPS(0), *g = OPS(4);
    if (!cxla_infer_is_array(g) || g->type != x->type || !cxla_infer_same_dims(g, x))
        return cxla_infer_fail(in, "grad_output %s must have the operand's shape %s", STR(g),
                               STR(x));
    return three(arena, x, &f, out);
}
