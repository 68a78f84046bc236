/* Interpreter handlers: the second linalg family (see interp.h): cholesky,
 * triangular-solve and the three batch normalizations.
 *
 * Everything is computed in double (complex: pairs of doubles) and rounded once to the
 * result type (f16 and bf16 included). XLA's CPU backend expands these operations
 * (CholeskyExpander, TriangularSolveExpander, BatchNormExpander); the choices below follow
 * those expansions where the result is not fixed by the seeds:
 *
 * cholesky: the Cholesky-Banachiewicz column order of CholeskyExpander. With lower=true
 *   only the lower triangle (diagonal included) of each matrix is read and the strict upper
 *   triangle of the result is zero; with lower=false the minor dims are transposed (not
 *   conjugated) first and back after, so only the upper triangle is read and the strict
 *   lower triangle of the result is zero. Column j: d = a[j][j] - sum_k l[j][k] conj(l[j][k]),
 *   s = sqrt(re(d)), l[r][j] = (a[r][j] - sum_k l[r][k] conj(l[j][k])) / s for r >= j
 *   (so l[j][j] = d / s; the imaginary part of a diagonal entry survives divided by s). When
 *   some s is NaN (a pivot < 0 or NaN: the matrix is not positive definite) the whole matrix
 *   of that batch element becomes NaN (complex: (NaN, 0)), as the expander's final select
 *   does; other batch elements are unaffected. A zero pivot is not an error there: it gives
 *   0 / 0 = NaN on the diagonal and inf or NaN below, and NaN everywhere if a later pivot
 *   reads it. The expander works in blocks of 128 and a last block of one column takes
 *   sqrt directly; that case (n = 128k + 1) is reproduced for the last diagonal entry.
 *
 * triangular-solve: only the triangle of 'a' named by 'lower' is read (the diagonal too
 *   unless unit_diagonal, which takes it as 1). op(a) is a, its transpose or its conjugate
 *   transpose (ADJOINT; the same as TRANSPOSE for real types). left_side=true solves
 *   op(a) x = b, false solves x op(a) = b, by plain forward / backward substitution over
 *   the nonzero entries only; a zero diagonal entry gives inf / NaN by IEEE division.
 *
 * batch-norm-*: mean and biased variance over every dimension but feature_index (two
 *   passes in double); epsilon is the attribute rounded to f32, as XLA stores it. grad:
 *   grad_offset = sum(dy), grad_scale = sum(dy (x - mean)) / sqrt(var + eps),
 *   grad_operand = scale / sqrt(var + eps) * (dy - mean(dy) - (x - mean) mean(dy (x - mean))
 *   / (var + eps)).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"

#define OOM()           cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")
#define BAD(instr, ...) interp_error((instr), CXLA_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* ---- scalars -------------------------------------------------------------------------- */

typedef struct cval {
    double re, im;
} cval;

/* Real mode (cx false) only ever computes and keeps the real part. */
static cval c_sub(cval a, cval b) {
    return (cval){a.re - b.re, a.im - b.im};
}
static cval c_mul(cval a, cval b, bool cx) {
    if (!cx) return (cval){a.re * b.re, 0};
    return (cval){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
static cval c_conj(cval a) {
    return (cval){a.re, -a.im};
}
static cval c_div(cval a, cval b, bool cx) {
    if (!cx) return (cval){a.re / b.re, 0};
    if (b.im == 0) return (cval){a.re / b.re, a.im / b.re};
    if (fabs(b.re) >= fabs(b.im)) {
        double r = b.im / b.re, den = b.re + b.im * r;
        return (cval){(a.re + a.im * r) / den, (a.im - a.re * r) / den};
    }
    double r = b.re / b.im, den = b.re * r + b.im;
    return (cval){(a.re * r + a.im) / den, (a.im * r - a.re) / den};
}

static bool supported_type(cxla_type t, bool allow_complex) {
    return t == CXLA_F16 || t == CXLA_BF16 || t == CXLA_F32 || t == CXLA_F64 ||
           (allow_complex && (t == CXLA_C64 || t == CXLA_C128));
}

/* Loads |n| elements of |type| from |src| as complex values. */
static void load_all(cxla_type type, const void *src, cval *dst, int64_t n) {
    const unsigned char *p = src;
    size_t es = cxla_type_storage(type);
    bool cx = cxla_type_is_complex(type);
    for (int64_t i = 0; i < n; i++) {
        if (cx)
            cxla_load_c128(type, p + (size_t)i * es, &dst[i].re, &dst[i].im);
        else
            dst[i] = (cval){cxla_load_f64(type, p + (size_t)i * es), 0};
    }
}

static void store_all(cxla_type type, const cval *src, void *dst, int64_t n) {
    unsigned char *p = dst;
    size_t es = cxla_type_storage(type);
    bool cx = cxla_type_is_complex(type);
    for (int64_t i = 0; i < n; i++) {
        if (cx)
            cxla_store_c128(type, p + (size_t)i * es, src[i].re, src[i].im);
        else
            cxla_store_f64(type, p + (size_t)i * es, src[i].re);
    }
}

/* Checks operand |k| is an array of a supported type with rank >= 2, square minor dims
 * when |square|. */
static cxla_status check_matrix(const cxla_instr *instr, const cxla_literal *lit, const char *what,
                                bool square) {
    const cxla_shape *s = cxla_literal_shape(lit);
    if (!cxla_shape_is_array(s) || !supported_type(s->type, true) || s->rank < 2)
        return BAD(instr, "'%s' must be an f16, bf16, f32, f64, c64 or c128 array of rank >= 2",
                   what);
    if (square && s->dims[s->rank - 1] != s->dims[s->rank - 2])
        return BAD(instr, "the two minor dimensions of '%s' must be equal", what);
    return NULL;
}

/* ---- cholesky ------------------------------------------------------------------------- */

/* Factors the n x n matrix |a| (row-major; only the lower triangle is read) into |l|. */
static void cholesky_lower(const cval *a, cval *l, int64_t n, bool cx) {
    bool error = false;
    for (int64_t i = 0; i < n * n; i++) l[i] = (cval){0, 0};
    for (int64_t j = 0; j < n; j++) {
        cval d = a[j * n + j];
        for (int64_t k = 0; k < j; k++) d = c_sub(d, c_mul(l[j * n + k], c_conj(l[j * n + k]), cx));
        double s = sqrt(d.re);
        if (isnan(s)) error = true;
        cval sv = {s, 0};
        if (j == n - 1 && (n - 1) % 128 == 0)
            l[j * n + j] = sv; /* a last block of one column: sqrt directly */
        else
            l[j * n + j] = c_div(d, sv, cx);
        for (int64_t r = j + 1; r < n; r++) {
            cval v = a[r * n + j];
            for (int64_t k = 0; k < j; k++)
                v = c_sub(v, c_mul(l[r * n + k], c_conj(l[j * n + k]), cx));
            l[r * n + j] = c_div(v, sv, cx);
        }
    }
    if (error)
        for (int64_t i = 0; i < n * n; i++) l[i] = (cval){NAN, 0};
}

static cxla_status op_cholesky(interp_ctx *ctx, const cxla_instr *instr,
                               const cxla_literal *const *operands, cxla_literal **out) {
    (void)ctx;
    const cxla_literal *a = operands[0];
    CXLA_RETURN_IF_ERROR(check_matrix(instr, a, "a", true));
    const cxla_shape *as = cxla_literal_shape(a);
    cxla_type type = as->type;
    bool cx = cxla_type_is_complex(type);
    bool lower = cxla_instr_bool(instr, CXLA_ATTR_LOWER);
    int64_t n = as->dims[as->rank - 1];
    int64_t total = cxla_literal_element_count(a);
    int64_t mat = n * n;
    int64_t batch = mat ? total / mat : 0;
    cxla_literal *result = NULL;
    CXLA_RETURN_IF_ERROR(interp_new_array(as, &result));
    if (batch == 0) {
        *out = result;
        return NULL;
    }
    size_t m = (size_t)mat;
    cval *buf = malloc(3 * m * sizeof(cval));
    if (!buf) {
        cxla_literal_free(result);
        return OOM();
    }
    cval *am = buf, *at = buf + m, *l = buf + 2 * m;
    size_t es = cxla_type_storage(type);
    const unsigned char *src = cxla_literal_data_const(a);
    unsigned char *dst = cxla_literal_data(result);
    for (int64_t b = 0; b < batch; b++) {
        load_all(type, src + (size_t)(b * mat) * es, am, mat);
        if (!lower) { /* transpose (no conjugate) in and out, as the expander does */
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) at[i * n + j] = am[j * n + i];
            cholesky_lower(at, l, n, cx);
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) am[i * n + j] = l[j * n + i];
            store_all(type, am, dst + (size_t)(b * mat) * es, mat);
        } else {
            cholesky_lower(am, l, n, cx);
            store_all(type, l, dst + (size_t)(b * mat) * es, mat);
        }
    }
    free(buf);
    *out = result;
    return NULL;
}

/* ---- triangular-solve ----------------------------------------------------------------- */

static cxla_status op_triangular_solve(interp_ctx *ctx, const cxla_instr *instr,
                                       const cxla_literal *const *operands, cxla_literal **out) {
    (void)ctx;
    const cxla_literal *a = operands[0], *b = operands[1];
    CXLA_RETURN_IF_ERROR(check_matrix(instr, a, "a", true));
    CXLA_RETURN_IF_ERROR(check_matrix(instr, b, "b", false));
    const cxla_shape *as = cxla_literal_shape(a), *bs = cxla_literal_shape(b);
    cxla_type type = as->type;
    if (bs->type != type || bs->rank != as->rank)
        return BAD(instr, "'a' and 'b' must have the same element type and rank");
    for (int64_t i = 0; i + 2 < as->rank; i++)
        if (as->dims[i] != bs->dims[i])
            return BAD(instr, "the batch dimensions of 'a' and 'b' differ");
    bool cx = cxla_type_is_complex(type);
    bool left = cxla_instr_bool(instr, CXLA_ATTR_LEFT_SIDE);
    bool lower = cxla_instr_bool(instr, CXLA_ATTR_LOWER);
    bool unit = cxla_instr_bool(instr, CXLA_ATTR_UNIT_DIAGONAL);
    const char *t = cxla_instr_word(instr, CXLA_ATTR_TRANSPOSE_A);
    int trans = 0; /* 0 none, 1 transpose, 2 adjoint */
    if (t && strcmp(t, "TRANSPOSE") == 0)
        trans = 1;
    else if (t && strcmp(t, "ADJOINT") == 0)
        trans = 2;
    else if (t && strcmp(t, "NO_TRANSPOSE") != 0)
        return BAD(instr, "unknown transpose_a=%s", t);
    int64_t m = as->dims[as->rank - 1];
    int64_t rows = bs->dims[bs->rank - 2], cols = bs->dims[bs->rank - 1];
    if ((left ? rows : cols) != m) return BAD(instr, "the shared dimension of 'a' and 'b' differs");
    cxla_literal *result = NULL;
    CXLA_RETURN_IF_ERROR(interp_new_array(bs, &result));
    int64_t bmat = rows * cols, amat = m * m;
    int64_t batch = 1;
    for (int64_t i = 0; i + 2 < bs->rank; i++) batch *= bs->dims[i];
    if (bmat == 0 || batch == 0) {
        *out = result;
        return NULL;
    }
    cval *buf = malloc((size_t)(2 * amat + bmat) * sizeof(cval));
    if (!buf) {
        cxla_literal_free(result);
        return OOM();
    }
    cval *am = buf, *tm = buf + amat, *x = buf + 2 * amat;
    /* op(a) is lower triangular when exactly one of lower and a transpose holds. */
    bool tlower = lower != (trans != 0);
    size_t es = cxla_type_storage(type);
    const unsigned char *asrc = cxla_literal_data_const(a), *bsrc = cxla_literal_data_const(b);
    unsigned char *dst = cxla_literal_data(result);
    for (int64_t bi = 0; bi < batch; bi++) {
        load_all(type, asrc + (size_t)(bi * amat) * es, am, amat);
        load_all(type, bsrc + (size_t)(bi * bmat) * es, x, bmat);
        /* tm = op(triangle of a). */
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < m; j++) {
                bool in = lower ? j <= i : j >= i;
                cval v = in ? am[i * m + j] : (cval){0, 0};
                if (i == j && unit) v = (cval){1, 0};
                if (trans == 0)
                    tm[i * m + j] = v;
                else
                    tm[j * m + i] = trans == 2 ? c_conj(v) : v;
            }
        if (left) {
            /* tm x = b, column by column. */
            for (int64_t c = 0; c < cols; c++) {
                for (int64_t s = 0; s < m; s++) {
                    int64_t i = tlower ? s : m - 1 - s;
                    cval v = x[i * cols + c];
                    int64_t k0 = tlower ? 0 : i + 1, k1 = tlower ? i : m;
                    for (int64_t k = k0; k < k1; k++)
                        v = c_sub(v, c_mul(tm[i * m + k], x[k * cols + c], cx));
                    x[i * cols + c] = c_div(v, tm[i * m + i], cx);
                }
            }
        } else {
            /* x tm = b, row by row: x_j tm[j][j] = b_j - sum_{i != j} x_i tm[i][j]. */
            for (int64_t r = 0; r < rows; r++) {
                cval *xr = x + r * cols;
                for (int64_t s = 0; s < m; s++) {
                    int64_t j = tlower ? m - 1 - s : s;
                    cval v = xr[j];
                    int64_t k0 = tlower ? j + 1 : 0, k1 = tlower ? m : j;
                    for (int64_t k = k0; k < k1; k++) v = c_sub(v, c_mul(xr[k], tm[k * m + j], cx));
                    xr[j] = c_div(v, tm[j * m + j], cx);
                }
            }
        }
        store_all(type, x, dst + (size_t)(bi * bmat) * es, bmat);
    }
    free(buf);
    *out = result;
    return NULL;
}

/* ---- batch normalization -------------------------------------------------------------- */

typedef struct bn_geom {
    int64_t outer, features, inner; /* operand = [outer][features][inner] */
    double eps;
    cxla_type type;
} bn_geom;

/* Checks operand 0 and the rank-1 per-feature operands listed in |features|. */
static cxla_status bn_setup(const cxla_instr *instr, const cxla_literal *const *operands,
                            const int *features, int nfeatures, bn_geom *g) {
    const cxla_shape *x = cxla_literal_shape(operands[0]);
    if (!cxla_shape_is_array(x) || !supported_type(x->type, false) || x->rank < 1)
        return BAD(instr, "the operand must be an f16, bf16, f32 or f64 array of rank >= 1");
    const cxla_attr *eps = cxla_instr_attr(instr, CXLA_ATTR_EPSILON);
    if (!eps) return BAD(instr, "missing attribute epsilon");
    int64_t fi = -1;
    if (!cxla_instr_int(instr, CXLA_ATTR_FEATURE_INDEX, &fi) || fi < 0 || fi >= x->rank)
        return BAD(instr, "feature_index is missing or out of range");
    g->type = x->type;
    g->eps = (double)(float)eps->v.f; /* XLA keeps epsilon as an f32 */
    g->features = x->dims[fi];
    g->outer = 1;
    g->inner = 1;
    for (int64_t i = 0; i < fi; i++) g->outer *= x->dims[i];
    for (int64_t i = fi + 1; i < x->rank; i++) g->inner *= x->dims[i];
    for (int k = 0; k < nfeatures; k++) {
        const cxla_shape *s = cxla_literal_shape(operands[features[k]]);
        if (!cxla_shape_is_array(s) || s->type != x->type || s->rank != 1 ||
            s->dims[0] != g->features)
            return BAD(instr, "operand %d must be a rank-1 array with one entry per feature",
                       features[k]);
    }
    return NULL;
}

/* Loads a whole literal as doubles into a new buffer. */
static double *load_real(const cxla_literal *lit) {
    int64_t n = cxla_literal_element_count(lit);
    double *d = malloc((size_t)(n ? n : 1) * sizeof(double));
    if (!d) return NULL;
    cxla_type t = cxla_literal_type(lit);
    const unsigned char *p = cxla_literal_data_const(lit);
    size_t es = cxla_type_storage(t);
    for (int64_t i = 0; i < n; i++) d[i] = cxla_load_f64(t, p + (size_t)i * es);
    return d;
}

static void store_real(cxla_literal *lit, const double *v) {
    int64_t n = cxla_literal_element_count(lit);
    cxla_type t = cxla_literal_type(lit);
    unsigned char *p = cxla_literal_data(lit);
    size_t es = cxla_type_storage(t);
    for (int64_t i = 0; i < n; i++) cxla_store_f64(t, p + (size_t)i * es, v[i]);
}

static int64_t bn_index(const bn_geom *g, int64_t o, int64_t c, int64_t i) {
    return (o * g->features + c) * g->inner + i;
}

/* Per-feature mean and biased variance (two passes). */
static void bn_moments(const bn_geom *g, const double *x, double *mean, double *var) {
    double count = (double)(g->outer * g->inner);
    for (int64_t c = 0; c < g->features; c++) {
        double s = 0, q = 0;
        for (int64_t o = 0; o < g->outer; o++)
            for (int64_t i = 0; i < g->inner; i++) s += x[bn_index(g, o, c, i)];
        double mu = s / count;
        for (int64_t o = 0; o < g->outer; o++)
            for (int64_t i = 0; i < g->inner; i++) {
                double d = x[bn_index(g, o, c, i)] - mu;
                q += d * d;
            }
        mean[c] = mu;
        var[c] = q / count;
    }
}

/* y = (x - mean) / sqrt(var + eps) * scale + offset. */
static void bn_normalize(const bn_geom *g, const double *x, const double *scale,
                         const double *offset, const double *mean, const double *var, double *y) {
    for (int64_t o = 0; o < g->outer; o++)
        for (int64_t c = 0; c < g->features; c++) {
            double r = 1.0 / sqrt(var[c] + g->eps);
            for (int64_t i = 0; i < g->inner; i++) {
                int64_t k = bn_index(g, o, c, i);
                y[k] = (x[k] - mean[c]) * r * scale[c] + offset[c];
            }
        }
}

/* Makes the tuple result of |instr| (three arrays) from |values| (freed here). */
static cxla_status bn_tuple(const cxla_instr *instr, double *const *values, cxla_literal **out) {
    const cxla_shape *s = &instr->shape;
    if (!cxla_shape_is_tuple(s) || s->tuple_count != 3)
        return BAD(instr, "the result shape must be a tuple of three arrays");
    cxla_literal *el[3] = {NULL, NULL, NULL};
    cxla_status st = NULL;
    for (int k = 0; k < 3 && !st; k++) {
        st = interp_new_array(&s->elements[k], &el[k]);
        if (!st) store_real(el[k], values[k]);
    }
    if (!st) st = cxla_literal_create_tuple(el, 3, out);
    if (st)
        for (int k = 0; k < 3; k++) cxla_literal_free(el[k]);
    return st;
}

static cxla_status op_batch_norm_training(interp_ctx *ctx, const cxla_instr *instr,
                                          const cxla_literal *const *operands, cxla_literal **out) {
    (void)ctx;
    static const int feats[] = {1, 2};
    bn_geom g = {0};
    CXLA_RETURN_IF_ERROR(bn_setup(instr, operands, feats, 2, &g));
    size_t nf = (size_t)(g.features ? g.features : 1);
    double *x = load_real(operands[0]), *scale = load_real(operands[1]),
           *offset = load_real(operands[2]);
    double *y = malloc((size_t)(cxla_literal_element_count(operands[0]) + 1) * sizeof(double));
    double *mean = malloc(nf * sizeof(double)), *var = malloc(nf * sizeof(double));
    cxla_status s = NULL;
    if (!x || !scale || !offset || !y || !mean || !var) {
        s = OOM();
    } else {
        bn_moments(&g, x, mean, var);
        bn_normalize(&g, x, scale, offset, mean, var, y);
        double *values[3] = {y, mean, var};
        s = bn_tuple(instr, values, out);
    }
    free(x);
    free(scale);
    free(offset);
    free(y);
    free(mean);
    free(var);
    return s;
}

static cxla_status op_batch_norm_inference(interp_ctx *ctx, const cxla_instr *instr,
                                           const cxla_literal *const *operands,
                                           cxla_literal **out) {
    (void)ctx;
    static const int feats[] = {1, 2, 3, 4};
    bn_geom g = {0};
    CXLA_RETURN_IF_ERROR(bn_setup(instr, operands, feats, 4, &g));
    double *x = load_real(operands[0]), *scale = load_real(operands[1]),
           *offset = load_real(operands[2]), *mean = load_real(operands[3]),
           *var = load_real(operands[4]);
    double *y = malloc((size_t)(cxla_literal_element_count(operands[0]) + 1) * sizeof(double));
    cxla_literal *result = NULL;
    cxla_status s = NULL;
    if (!x || !scale || !offset || !mean || !var || !y) s = OOM();
    if (!s) s = interp_new_array(cxla_literal_shape(operands[0]), &result);
    if (!s) {
        bn_normalize(&g, x, scale, offset, mean, var, y);
        store_real(result, y);
        *out = result;
    }
    free(x);
    free(scale);
    free(offset);
    free(mean);
    free(var);
    free(y);
    return s;
}

static cxla_status op_batch_norm_grad(interp_ctx *ctx, const cxla_instr *instr,
                                      const cxla_literal *const *operands, cxla_literal **out) {
    (void)ctx;
    static const int feats[] = {1, 2, 3};
    bn_geom g = {0};
    CXLA_RETURN_IF_ERROR(bn_setup(instr, operands, feats, 3, &g));
    const cxla_shape *xs = cxla_literal_shape(operands[0]), *ds = cxla_literal_shape(operands[4]);
    if (!cxla_shape_is_array(ds) || ds->type != xs->type || ds->rank != xs->rank)
        return BAD(instr, "grad_output must have the shape of the operand");
    for (int64_t i = 0; i < xs->rank; i++)
        if (ds->dims[i] != xs->dims[i])
            return BAD(instr, "grad_output must have the shape of the operand");
    size_t nf = (size_t)(g.features ? g.features : 1);
    double *x = load_real(operands[0]), *scale = load_real(operands[1]),
           *mean = load_real(operands[2]), *var = load_real(operands[3]),
           *dy = load_real(operands[4]);
    double *dx = malloc((size_t)(cxla_literal_element_count(operands[0]) + 1) * sizeof(double));
    double *dscale = malloc(nf * sizeof(double)), *doffset = malloc(nf * sizeof(double));
    cxla_status s = NULL;
    if (!x || !scale || !mean || !var || !dy || !dx || !dscale || !doffset) {
        s = OOM();
    } else {
        double count = (double)(g.outer * g.inner);
        for (int64_t c = 0; c < g.features; c++) {
            double sum_dy = 0, sum_dyx = 0;
            for (int64_t o = 0; o < g.outer; o++)
                for (int64_t i = 0; i < g.inner; i++) {
                    int64_t k = bn_index(&g, o, c, i);
                    sum_dy += dy[k];
                    sum_dyx += dy[k] * (x[k] - mean[c]);
                }
            double ve = var[c] + g.eps, r = 1.0 / sqrt(ve);
            doffset[c] = sum_dy;
            dscale[c] = sum_dyx * r;
            double mdy = sum_dy / count, mdyx = sum_dyx / count;
            for (int64_t o = 0; o < g.outer; o++)
                for (int64_t i = 0; i < g.inner; i++) {
                    int64_t k = bn_index(&g, o, c, i);
                    dx[k] = scale[c] * r * (dy[k] - mdy - (x[k] - mean[c]) * mdyx / ve);
                }
        }
        double *values[3] = {dx, dscale, doffset};
        s = bn_tuple(instr, values, out);
    }
    free(x);
    free(scale);
    free(mean);
    free(var);
    free(dy);
    free(dx);
    free(dscale);
    free(doffset);
    return s;
}

const interp_op_fn interp_linalg2_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_CHOLESKY] = op_cholesky,
    [CXLA_OP_TRIANGULAR_SOLVE] = op_triangular_solve,
    [CXLA_OP_BATCH_NORM_TRAINING] = op_batch_norm_training,
    [CXLA_OP_BATCH_NORM_INFERENCE] = op_batch_norm_inference,
    [CXLA_OP_BATCH_NORM_GRAD] = op_batch_norm_grad,
};
