/* Interpreter handlers: sort and topk (see interp_reduce.h), and element comparison.
 *
 * Both sort with a stable merge sort, whether or not is_stable is set (a stable sort is
 * a valid unstable one), so equal elements keep their order and every run gives the
 * same result. A comparator that is a single compare of parameters 0 and 1 compares
 * typed elements directly; any other comparator is called with the 2N scalars
 * (parameter 2k: operand k at the left position, 2k + 1: at the right one).
 *
 * topk orders by XLA's total order (-NaN < -Inf < -0 < +0 < +Inf < +NaN, as XLA's CPU
 * TopK compares floats' bits) and keeps the lower index first among equal values. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp_reduce.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* ---- comparisons -------------------------------------------------------------------- */

static interp_direction parse_direction(const char *w) {
    static const struct {
        const char *name;
        interp_direction dir;
    } names[] = {{"EQ", INTERP_DIR_EQ}, {"NE", INTERP_DIR_NE}, {"LT", INTERP_DIR_LT},
                 {"LE", INTERP_DIR_LE}, {"GT", INTERP_DIR_GT}, {"GE", INTERP_DIR_GE}};
    for (size_t i = 0; w && i < CXLA_ARRAY_SIZE(names); i++)
        if (strcmp(w, names[i].name) == 0) return names[i].dir;
    return INTERP_DIR_NONE;
}

static interp_direction reverse_direction(interp_direction d) {
    switch (d) {
    case INTERP_DIR_LT: return INTERP_DIR_GT;
    case INTERP_DIR_LE: return INTERP_DIR_GE;
    case INTERP_DIR_GT: return INTERP_DIR_LT;
    case INTERP_DIR_GE: return INTERP_DIR_LE;
    default: return d;
    }
}

static bool is_scalar_instr(const cxla_instr *in, cxla_opcode op, int64_t operands) {
    return in && in->opcode == op && in->operand_count == operands && in->shape.rank == 0 &&
           cxla_type_is_array(in->shape.type);
}

/* A scalar float constant; its value in |out|. */
static bool float_constant(const cxla_instr *in, double *out) {
    if (!is_scalar_instr(in, CXLA_OP_CONSTANT, 0) || !in->literal ||
        !cxla_type_is_float(in->shape.type) || cxla_literal_type(in->literal) != in->shape.type)
        return false;
    *out = cxla_load_f64(in->shape.type, cxla_literal_data_const(in->literal));
    return true;
}

static bool is_compare(const cxla_instr *in, const char *direction) {
    const char *d = cxla_instr_word(in, CXLA_ATTR_DIRECTION);
    const char *t = cxla_instr_word(in, CXLA_ATTR_COMPARISON_TYPE);
    return is_scalar_instr(in, CXLA_OP_COMPARE, 2) && d && strcmp(d, direction) == 0 &&
           (!t || strcmp(t, "FLOAT") == 0);
}

/* JAX's canonicalization of a float sort key (lax._canonicalize_float_for_sort):
 * select(p != p, +nan, select(p == 0, 0, p)) for a parameter p; returns p. */
static const cxla_instr *canonicalized_param(const cxla_instr *in) {
    double v;
    if (!is_scalar_instr(in, CXLA_OP_SELECT, 3)) return NULL;
    const cxla_instr *nan_test = in->operands[0], *nan_value = in->operands[1],
                     *inner = in->operands[2];
    if (!is_scalar_instr(inner, CXLA_OP_SELECT, 3)) return NULL;
    const cxla_instr *p = inner->operands[2], *zero_test = inner->operands[0];
    if (!p || p->opcode != CXLA_OP_PARAMETER || !is_compare(nan_test, "NE") ||
        nan_test->operands[0] != p || nan_test->operands[1] != p ||
        !float_constant(nan_value, &v) || v == v || signbit(v) ||
        !float_constant(inner->operands[1], &v) || v != 0 || !is_compare(zero_test, "EQ") ||
        zero_test->operands[0] != p || !float_constant(zero_test->operands[1], &v) || v != 0 ||
        nan_value->shape.type != p->shape.type)
        return NULL;
    return p;
}

interp_comparator interp_match_comparator(const cxla_computation *comp) {
    interp_comparator none = {INTERP_DIR_NONE, false, false, CXLA_TYPE_INVALID};
    if (!comp || comp->param_count < 2 || !comp->root) return none;
    const cxla_instr *root = comp->root;
    if (root->opcode != CXLA_OP_COMPARE || root->operand_count != 2 ||
        root->shape.type != CXLA_PRED || root->shape.rank != 0)
        return none;
    const cxla_instr *a = root->operands[0], *b = root->operands[1];
    bool canonical = false;
    const char *ct = cxla_instr_word(root, CXLA_ATTR_COMPARISON_TYPE);
    if (a && b && a->opcode == CXLA_OP_SELECT && ct && strcmp(ct, "TOTALORDER") == 0) {
        a = canonicalized_param(a);
        b = canonicalized_param(b);
        canonical = true;
    }
    if (!a || !b || a->opcode != CXLA_OP_PARAMETER || b->opcode != CXLA_OP_PARAMETER ||
        a->parent != comp || b->parent != comp || a->shape.type != b->shape.type ||
        a->shape.rank != 0 || b->shape.rank != 0)
        return none;
    bool swapped;
    if (a->parameter_number == 0 && b->parameter_number == 1)
        swapped = false;
    else if (a->parameter_number == 1 && b->parameter_number == 0)
        swapped = true;
    else
        return none;
    cxla_type t = a->shape.type;
    cxla_type_class k = cxla_type_class_of(t);
    if (k != CXLA_CLASS_PRED && k != CXLA_CLASS_SIGNED && k != CXLA_CLASS_UNSIGNED &&
        k != CXLA_CLASS_FLOAT)
        return none;
    interp_direction dir = parse_direction(cxla_instr_word(root, CXLA_ATTR_DIRECTION));
    if (dir == INTERP_DIR_NONE || (canonical && k != CXLA_CLASS_FLOAT)) return none;
    bool total = false;
    if (ct) {
        if (strcmp(ct, "TOTALORDER") == 0)
            total = k == CXLA_CLASS_FLOAT;
        else if (strcmp(ct, "FLOAT") == 0 ? k != CXLA_CLASS_FLOAT
                 : strcmp(ct, "SIGNED") == 0
                     ? k != CXLA_CLASS_SIGNED
                     : strcmp(ct, "UNSIGNED") != 0 ||
                           (k != CXLA_CLASS_UNSIGNED && k != CXLA_CLASS_PRED))
            return none; /* e.g. an unsigned comparison of signed integers */
    }
    interp_comparator c = {swapped ? reverse_direction(dir) : dir, total, canonical, t};
    return c;
}

/* Orders doubles as their bits do after flipping the magnitude of negatives:
 * -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN. */
static int64_t total_order_key(double v) {
    int64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    return bits < 0 ? bits ^ INT64_MAX : bits;
}

int interp_compare_elements(cxla_type type, bool total_order, const void *a, const void *b) {
    switch (cxla_type_class_of(type)) {
    case CXLA_CLASS_SIGNED: {
        int64_t x = cxla_load_s64(type, a), y = cxla_load_s64(type, b);
        return x < y ? -1 : x > y;
    }
    case CXLA_CLASS_PRED:
    case CXLA_CLASS_UNSIGNED: {
        uint64_t x = cxla_load_u64(type, a), y = cxla_load_u64(type, b);
        return x < y ? -1 : x > y;
    }
    default: break;
    }
    double x, y;
    if (type == CXLA_F32) {
        float fx, fy;
        memcpy(&fx, a, sizeof(fx));
        memcpy(&fy, b, sizeof(fy));
        x = fx;
        y = fy;
    } else if (type == CXLA_F64) {
        memcpy(&x, a, sizeof(x));
        memcpy(&y, b, sizeof(y));
    } else {
        x = cxla_load_f64(type, a); /* every small float converts exactly */
        y = cxla_load_f64(type, b);
    }
    if (total_order) {
        int64_t kx = total_order_key(x), ky = total_order_key(y);
        return kx < ky ? -1 : kx > ky;
    }
    if (x < y) return -1;
    if (x > y) return 1;
    return x == y ? 0 : 2;
}

bool interp_direction_holds(interp_direction direction, int cmp) {
    switch (direction) {
    case INTERP_DIR_EQ: return cmp == 0;
    case INTERP_DIR_NE: return cmp != 0;
    case INTERP_DIR_LT: return cmp == -1;
    case INTERP_DIR_LE: return cmp == -1 || cmp == 0;
    case INTERP_DIR_GT: return cmp == 1;
    case INTERP_DIR_GE: return cmp == 1 || cmp == 0;
    default: return false;
    }
}

bool interp_comparator_holds(const interp_comparator *c, const void *a, const void *b) {
    int cmp;
    if (c->canonical) {
        double x = cxla_load_f64(c->type, a), y = cxla_load_f64(c->type, b);
        x = x != x ? NAN : x == 0 ? 0.0 : x; /* NAN is positive */
        y = y != y ? NAN : y == 0 ? 0.0 : y;
        cmp = interp_compare_elements(CXLA_F64, true, &x, &y);
    } else {
        cmp = interp_compare_elements(c->type, c->total_order, a, b);
    }
    return interp_direction_holds(c->direction, cmp);
}

/* ---- stable merge sort ------------------------------------------------------------ */

/* What "less" means for one sort: a typed comparison, or a computation call. Positions
 * are element indices along the sorted dimension of the current row. */
typedef struct sorter {
    int64_t n;                         /* operands */
    const cxla_literal *const *inputs; /* n operands */
    int64_t base, stride;              /* element offset of the row's first element, step */
    interp_comparator cmp;             /* typed: direction != NONE */
    interp_scalar_fn *fn;              /* otherwise */
} sorter;

static const uint8_t *element_at(const cxla_literal *lit, int64_t i) {
    return (const uint8_t *)cxla_literal_data_const(lit) +
           (size_t)i * cxla_type_storage(cxla_literal_type(lit));
}

static cxla_status sorter_less(const sorter *so, int64_t i, int64_t j, bool *out) {
    int64_t oi = so->base + i * so->stride, oj = so->base + j * so->stride;
    if (so->cmp.direction != INTERP_DIR_NONE) {
        *out = interp_comparator_holds(&so->cmp, element_at(so->inputs[0], oi),
                                       element_at(so->inputs[0], oj));
        return NULL;
    }
    for (int64_t k = 0; k < so->n; k++) {
        interp_scalar_set_arg(so->fn, 2 * k, element_at(so->inputs[k], oi));
        interp_scalar_set_arg(so->fn, 2 * k + 1, element_at(so->inputs[k], oj));
    }
    cxla_literal *r = NULL;
    cxla_status s = interp_scalar_call(so->fn, &r);
    if (!s) {
        const uint8_t *p = interp_scalar_result(so->fn, r, 0, 1, CXLA_PRED, &s);
        if (p) *out = *p != 0;
    }
    cxla_literal_free(r);
    return s;
}

/* Sorts perm[0..len) (indices along the row) stably: an element moves before an earlier
 * one only when less(later, earlier). Bottom-up merging between |perm| and |tmp|; |out|
 * gets whichever holds the result. */
static cxla_status merge_sort(const sorter *so, int64_t *perm, int64_t *tmp, int64_t len,
                              int64_t **out) {
    int64_t *src = perm, *dst = tmp;
    for (int64_t width = 1; width < len; width *= 2) {
        for (int64_t lo = 0; lo < len; lo += 2 * width) {
            int64_t mid = lo + width < len ? lo + width : len;
            int64_t hi = mid + width < len ? mid + width : len;
            int64_t i = lo, j = mid, k = lo;
            bool lt = true;
            /* Runs already in order need no merging. */
            if (mid < hi) CXLA_RETURN_IF_ERROR(sorter_less(so, src[mid], src[mid - 1], &lt));
            if (!lt) {
                memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof(int64_t));
                continue;
            }
            while (i < mid && j < hi) {
                CXLA_RETURN_IF_ERROR(sorter_less(so, src[j], src[i], &lt));
                dst[k++] = lt ? src[j++] : src[i++];
            }
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    *out = src;
    return NULL;
}

/* ---- sort --------------------------------------------------------------------------- */

cxla_status interp_op_sort(interp_ctx *ctx, const cxla_instr *instr,
                           const cxla_literal *const *operands, cxla_literal **out) {
    int64_t n = instr->operand_count;
    if (n < 1) return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "needs an operand");
    const cxla_shape *xs = cxla_literal_shape(operands[0]);
    cxla_type *types = malloc((size_t)n * sizeof(cxla_type));
    if (!types) return OOM();
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++) {
        const cxla_shape *t = cxla_literal_shape(operands[i]);
        bool ok = cxla_type_is_array(t->type) && t->rank == xs->rank;
        for (int64_t j = 0; ok && j < t->rank; j++) ok = t->dims[j] == xs->dims[j];
        if (!ok)
            s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                             "the operands must be arrays of the same dimensions");
        types[i] = t->type;
    }
    int64_t nd = 0;
    const int64_t *d = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd);
    if (!s && (nd != 1 || d[0] < 0 || d[0] >= xs->rank))
        s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                         "dimensions must name one dimension of the operands");
    const cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!s && !comp) s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "needs to_apply");
    bool tuple = instr->shape.type == CXLA_TUPLE;
    cxla_literal **res = NULL;
    if (!s) s = interp_reduce_new_results(instr, n, tuple, xs->rank, xs->dims, types, &res);
    free(types);
    if (s) return s;

    sorter so = {.n = n, .inputs = operands};
    interp_scalar_fn fn = {0};
    so.cmp = interp_match_comparator(comp);
    if (so.cmp.direction != INTERP_DIR_NONE && so.cmp.type != xs->type)
        so.cmp.direction = INTERP_DIR_NONE;
    if (so.cmp.direction == INTERP_DIR_NONE) {
        s = interp_scalar_fn_init(&fn, ctx, instr, comp);
        if (!s && fn.arg_count != 2 * n)
            s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                             "comparator '%s' must take %" PRId64 " parameters", comp->name, 2 * n);
        for (int64_t k = 0; k < 2 * n && !s; k++)
            s = interp_scalar_fn_expect(&fn, k, cxla_literal_type(operands[k / 2]));
        so.fn = &fn;
    }
    int64_t dim = d[0], len = xs->dims[dim];
    int64_t strides[CXLA_MAX_RANK];
    interp_row_major_strides(xs->rank, xs->dims, strides);
    int64_t inner = strides[dim], outer = 1;
    for (int64_t j = 0; j < dim; j++) outer *= xs->dims[j];
    if (len == 0 || inner == 0) outer = 0;
    int64_t *perm = malloc((size_t)(len ? len : 1) * sizeof(int64_t));
    int64_t *tmp = malloc((size_t)(len ? len : 1) * sizeof(int64_t));
    if (!s && (!perm || !tmp)) s = OOM();
    so.stride = inner;
    for (int64_t o = 0; o < outer && !s; o++) {
        for (int64_t in = 0; in < inner && !s; in++) {
            so.base = o * len * inner + in;
            for (int64_t i = 0; i < len; i++) perm[i] = i;
            int64_t *sorted = NULL;
            s = merge_sort(&so, perm, tmp, len, &sorted);
            for (int64_t k = 0; k < n && !s; k++) {
                size_t size = cxla_type_storage(cxla_literal_type(operands[k]));
                uint8_t *dst = cxla_literal_data(res[k]);
                for (int64_t i = 0; i < len; i++)
                    memcpy(dst + (size_t)(so.base + i * inner) * size,
                           element_at(operands[k], so.base + sorted[i] * inner), size);
            }
        }
    }
    free(perm);
    free(tmp);
    if (fn.args) interp_scalar_fn_deinit(&fn);
    if (s) {
        interp_reduce_free_literals(res, n);
        return s;
    }
    return interp_reduce_pack_results(res, n, tuple, out);
}

/* ---- topk --------------------------------------------------------------------------- */

cxla_status interp_op_topk(interp_ctx *ctx, const cxla_instr *instr,
                           const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0];
    const cxla_shape *xs = cxla_literal_shape(x);
    cxla_type_class klass = cxla_type_class_of(xs->type);
    if (!cxla_type_is_array(xs->type) || xs->rank < 1 ||
        (klass != CXLA_CLASS_PRED && klass != CXLA_CLASS_SIGNED && klass != CXLA_CLASS_UNSIGNED &&
         klass != CXLA_CLASS_FLOAT))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the operand must be an array of rank >= 1 of an ordered type");
    int64_t k = -1, last = xs->rank - 1, len = xs->dims[last];
    cxla_instr_int(instr, CXLA_ATTR_K, &k);
    if (k < 0 || k > len)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "k=%" PRId64 " must be in 0..%" PRId64, k, len);
    if (len > INT32_MAX)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the last dimension (%" PRId64 ") does not fit s32 indices", len);
    bool largest =
        !cxla_instr_attr(instr, CXLA_ATTR_LARGEST) || cxla_instr_bool(instr, CXLA_ATTR_LARGEST);
    int64_t dims[CXLA_MAX_RANK];
    memcpy(dims, xs->dims, (size_t)xs->rank * sizeof(int64_t));
    dims[last] = k;
    cxla_type types[2] = {xs->type, CXLA_S32};
    cxla_literal **res = NULL;
    CXLA_RETURN_IF_ERROR(interp_reduce_new_results(instr, 2, true, xs->rank, dims, types, &res));

    /* less(i, j): i comes first: greater (smaller) in total order. */
    sorter so = {.n = 1, .inputs = operands, .stride = 1};
    so.cmp.direction = largest ? INTERP_DIR_GT : INTERP_DIR_LT;
    so.cmp.total_order = true;
    so.cmp.type = xs->type;
    int64_t rows = len > 0 ? cxla_literal_element_count(x) / len : 0;
    int64_t *perm = malloc((size_t)(len ? len : 1) * sizeof(int64_t));
    int64_t *tmp = malloc((size_t)(len ? len : 1) * sizeof(int64_t));
    cxla_status s = perm && tmp ? NULL : OOM();
    size_t size = cxla_type_storage(xs->type);
    uint8_t *values = cxla_literal_data(res[0]);
    int32_t *indices = cxla_literal_data(res[1]);
    for (int64_t r = 0; r < rows && !s && k > 0; r++) {
        so.base = r * len;
        for (int64_t i = 0; i < len; i++) perm[i] = i;
        int64_t *sorted = NULL;
        s = merge_sort(&so, perm, tmp, len, &sorted);
        for (int64_t i = 0; i < k && !s; i++) {
            memcpy(values + (size_t)(r * k + i) * size, element_at(x, so.base + sorted[i]), size);
            indices[r * k + i] = (int32_t)sorted[i];
        }
    }
    free(perm);
    free(tmp);
    (void)ctx;
    if (s) {
        interp_reduce_free_literals(res, 2);
        return s;
    }
    return interp_reduce_pack_results(res, 2, true, out);
}

/* ---- TopK with a comparator ------------------------------------------------------------ */

cxla_status interp_topk_by(interp_ctx *ctx, const cxla_instr *instr, const cxla_literal *x,
                           const cxla_computation *comp, int64_t k, cxla_literal **out) {
    const cxla_shape *xs = cxla_literal_shape(x);
    if (!cxla_type_is_array(xs->type) || xs->rank < 1)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the operand must be an array of rank >= 1");
    int64_t last = xs->rank - 1, len = xs->dims[last];
    if (k < 0 || k > len)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "k=%" PRId64 " must be in 0..%" PRId64, k, len);
    if (len > INT32_MAX)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the last dimension (%" PRId64 ") does not fit s32 indices", len);
    if (comp->param_count != 2 && comp->param_count != 4)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the comparator '%s' must take 2 parameters (the values) or 4 (the "
                            "values and their s32 indices)",
                            comp->name);
    int64_t n = comp->param_count / 2;
    interp_scalar_fn fn = {0};
    cxla_status s = interp_scalar_fn_init(&fn, ctx, instr, comp);
    for (int64_t p = 0; p < comp->param_count && !s; p++)
        s = interp_scalar_fn_expect(&fn, p, p < 2 ? xs->type : CXLA_S32);
    /* The indices, s32 along the last dimension, as the sort's second operand. */
    cxla_literal *iota = NULL;
    if (!s && n == 2) {
        cxla_shape is = *xs;
        is.type = CXLA_S32;
        is.layout = NULL;
        s = cxla_literal_create(&is, &iota);
        int32_t *v = s ? NULL : cxla_literal_data(iota);
        for (int64_t i = 0; v && i < cxla_literal_element_count(iota); i++)
            v[i] = (int32_t)(i % len);
    }
    int64_t dims[CXLA_MAX_RANK];
    memcpy(dims, xs->dims, (size_t)xs->rank * sizeof(int64_t));
    dims[last] = k;
    cxla_type types[2] = {xs->type, CXLA_S32};
    cxla_literal **res = NULL;
    if (!s) s = interp_reduce_new_results(instr, 2, true, xs->rank, dims, types, &res);
    const cxla_literal *inputs[2] = {x, iota};
    sorter so = {.n = n, .inputs = inputs, .stride = 1, .fn = &fn};
    int64_t rows = len > 0 ? cxla_literal_element_count(x) / len : 0;
    int64_t *perm = malloc((size_t)(len ? len : 1) * sizeof(int64_t));
    int64_t *tmp = malloc((size_t)(len ? len : 1) * sizeof(int64_t));
    if (!s && (!perm || !tmp)) s = OOM();
    size_t size = cxla_type_storage(xs->type);
    for (int64_t r = 0; r < rows && !s && k > 0; r++) {
        so.base = r * len;
        for (int64_t i = 0; i < len; i++) perm[i] = i;
        int64_t *sorted = NULL;
        s = merge_sort(&so, perm, tmp, len, &sorted);
        uint8_t *values = cxla_literal_data(res[0]);
        int32_t *indices = cxla_literal_data(res[1]);
        for (int64_t i = 0; i < k && !s; i++) {
            memcpy(values + (size_t)(r * k + i) * size, element_at(x, so.base + sorted[i]), size);
            indices[r * k + i] = (int32_t)sorted[i];
        }
    }
    free(perm);
    free(tmp);
    cxla_literal_free(iota);
    if (fn.args) interp_scalar_fn_deinit(&fn);
    if (s) {
        if (res) interp_reduce_free_literals(res, 2);
        return s;
    }
    return interp_reduce_pack_results(res, 2, true, out);
}
