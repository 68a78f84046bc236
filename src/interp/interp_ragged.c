/* Interpreter handlers: the ragged family (see interp.h): ragged-dot and scaled-dot, the
 * two newer forms of dot.
 *
 * ragged-dot(lhs, rhs, group_sizes) splits one lhs dimension (lhs_ragged_dims) into
 * consecutive groups whose sizes are the last dimension of group_sizes (g groups); any
 * leading dimensions of group_sizes give separate sizes per batch index and per lhs
 * dimension of the same kind outer to the ragged one (a rank-1 group_sizes applies to
 * all). JAX's ragged_dot_general defines three modes by the kind of the ragged dimension:
 *
 *   non-contracting m   [b,m,k] x [g,b,k,n] -> [b,m,n]: row m of group i multiplies
 *                       rhs group i (rhs_group_dims names rhs's g dimension)
 *   contracting k       [b,m,k] x [b,k,n] -> [g,b,m,n]: result i sums over the k of
 *                       group i only
 *   batch b             [b,m,k] x [b,k,n] -> [b,m,n]: the plain dot
 *
 * In each mode, indices of the ragged dimension past the last group (the group sizes
 * may add up to less than its size) give zeros. A negative group size is an error.
 *
 * scaled-dot(lhs, rhs, lhs_scale, rhs_scale) is the dot of the block-scaled operands:
 * each scale has its operand's rank and divides each dimension into equal blocks, and
 * element x[i] stands for x[i] * scale[i / block] (the MX formats' representation).
 *
 * Both compute as dot does (interp_linalg.c): operands converted to the compute type of
 * the result (f32 for f32 and smaller floats, f64, complex, or 64-bit wrapping integers),
 * each output the sum of its products in the order of the flattened contraction index,
 * rounded once to the result type. So a ragged-dot whose groups cover everything gives
 * the same bits as the equivalent dot.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"

#define OOM()           cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")
#define BAD(instr, ...) interp_error((instr), CXLA_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

typedef enum kind { K_F32, K_F64, K_C64, K_C128, K_INT } kind;

/* The compute kind of dot for result type |rt| and operand types |a|, |b|. */
static kind pick_kind(cxla_type rt, cxla_type a, cxla_type b) {
    bool wide = a == CXLA_F64 || b == CXLA_F64 || a == CXLA_C128 || b == CXLA_C128;
    if (rt == CXLA_C128) return K_C128;
    if (rt == CXLA_C64) return wide ? K_C128 : K_C64;
    if (rt == CXLA_F64) return K_F64;
    if (cxla_type_is_float(rt)) return (a == CXLA_F64 || b == CXLA_F64) ? K_F64 : K_F32;
    return K_INT;
}

/* One value in the compute kind: real part, imaginary part, or the integer. */
typedef struct val {
    double re, im;
    uint64_t i;
} val;

/* Element |p| of |type| as an operand of a dot with result type |rt| in kind |k|. */
static val load(kind k, cxla_type rt, cxla_type type, const void *p) {
    val v = {0, 0, 0};
    unsigned char tmp[16];
    /* Integers (and pred) of a float result, and anything of an integer result, are
     * converted to the result type first. */
    if (k == K_INT || !(cxla_type_is_float(type) || cxla_type_is_complex(type))) {
        cxla_convert_element(type, p, rt, tmp);
        p = tmp;
        type = rt;
    }
    if (k == K_INT) {
        v.i = (uint64_t)cxla_load_s64(type, p);
    } else if (k == K_C64 || k == K_C128) {
        cxla_load_c128(type, p, &v.re, &v.im);
    } else {
        v.re = cxla_load_f64(type, p);
    }
    return v;
}

/* acc += a * b in kind |k| (K_F32 and K_C64 round every step to float). */
static void mul_add(kind k, val *acc, val a, val b) {
    switch (k) {
    case K_F32: acc->re = (float)(acc->re + (double)((float)a.re * (float)b.re)); break;
    case K_F64: acc->re += a.re * b.re; break;
    case K_C64: {
        float re = (float)a.re * (float)b.re - (float)a.im * (float)b.im;
        float im = (float)a.re * (float)b.im + (float)a.im * (float)b.re;
        acc->re = (float)(acc->re + re);
        acc->im = (float)(acc->im + im);
        break;
    }
    case K_C128:
        acc->re += a.re * b.re - a.im * b.im;
        acc->im += a.re * b.im + a.im * b.re;
        break;
    case K_INT: acc->i += a.i * b.i; break;
    }
}

static val scale_by(kind k, val x, val s) {
    val r = {0, 0, 0};
    mul_add(k, &r, x, s);
    return r;
}

static void store(kind k, cxla_type rt, void *p, val v) {
    if (k == K_INT)
        cxla_store_s64(rt, p, (int64_t)v.i);
    else if (cxla_type_is_complex(rt))
        cxla_store_c128(rt, p, v.re, v.im);
    else
        cxla_store_f64(rt, p, v.re);
}

/* Loads every element of |lit| (row-major) in kind |k|; with |scale|, each element is
 * multiplied by its block's scale. */
static cxla_status load_all(const cxla_instr *instr, kind k, cxla_type rt, const cxla_literal *lit,
                            const cxla_literal *scale, val **out) {
    const cxla_shape *s = cxla_literal_shape(lit);
    int64_t n = cxla_literal_element_count(lit);
    val *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(*v));
    if (!v) return OOM();
    size_t es = cxla_type_storage(s->type);
    const char *data = cxla_literal_data_const(lit);
    for (int64_t i = 0; i < n; i++) v[i] = load(k, rt, s->type, data + (size_t)i * es);
    if (scale) {
        const cxla_shape *ss = cxla_literal_shape(scale);
        size_t ses = cxla_type_storage(ss->type);
        const char *sdata = cxla_literal_data_const(scale);
        int64_t idx[CXLA_MAX_RANK] = {0}, sstr[CXLA_MAX_RANK];
        interp_row_major_strides(ss->rank, ss->dims, sstr);
        for (int64_t i = 0; i < n; i++) {
            int64_t off = 0;
            for (int64_t d = 0; d < s->rank; d++)
                off += idx[d] / (s->dims[d] / ss->dims[d]) * sstr[d];
            v[i] = scale_by(k, v[i], load(k, rt, ss->type, sdata + (size_t)off * ses));
            for (int64_t d = s->rank - 1; d >= 0 && ++idx[d] == s->dims[d]; d--) idx[d] = 0;
        }
    }
    *out = v;
    return NULL;
}

/* The dims of a dot and, for ragged-dot, its ragged dimension and groups. */
typedef struct plan {
    const cxla_shape *ls, *rs;
    int64_t nb, nc, nlf, nrf;
    int64_t lb[CXLA_MAX_RANK], rb[CXLA_MAX_RANK], lc[CXLA_MAX_RANK], rc[CXLA_MAX_RANK];
    int64_t lf[CXLA_MAX_RANK], rf[CXLA_MAX_RANK];
    int64_t lstr[CXLA_MAX_RANK], rstr[CXLA_MAX_RANK];
    /* ragged-dot: */
    int mode; /* 0 none, 1 non-contracting, 2 contracting, 3 batch */
    int64_t rd, gd, g;
    int64_t *groups; /* per prefix: g starts then g sizes */
    int64_t prefix_count;
} plan;

static cxla_status make_plan(const cxla_instr *instr, const cxla_shape *ls, const cxla_shape *rs,
                             int64_t rhs_skip, plan *p) {
    memset(p, 0, sizeof(*p));
    p->ls = ls;
    p->rs = rs;
    int64_t nlb = 0, nrb = 0, nlc = 0, nrc = 0;
    const int64_t *lb = cxla_instr_ints(instr, CXLA_ATTR_LHS_BATCH_DIMS, &nlb);
    const int64_t *rb = cxla_instr_ints(instr, CXLA_ATTR_RHS_BATCH_DIMS, &nrb);
    const int64_t *lc = cxla_instr_ints(instr, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nlc);
    const int64_t *rc = cxla_instr_ints(instr, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nrc);
    if (!lb) nlb = 0;
    if (!rb) nrb = 0;
    if (!lc) nlc = 0;
    if (!rc) nrc = 0;
    bool lused[CXLA_MAX_RANK] = {false}, rused[CXLA_MAX_RANK] = {false};
    if (nlb != nrb || nlc != nrc)
        return BAD(instr, "the batch and contracting dimension lists must pair up");
    if (rhs_skip >= 0) rused[rhs_skip] = true;
    for (int64_t i = 0; i < nlb + nlc; i++) {
        int64_t l = i < nlb ? lb[i] : lc[i - nlb], r = i < nlb ? rb[i] : rc[i - nlb];
        if (l < 0 || l >= ls->rank || r < 0 || r >= rs->rank || lused[l] || rused[r] ||
            ls->dims[l] != rs->dims[r])
            return BAD(instr, "dimension lists do not match the operands");
        lused[l] = rused[r] = true;
    }
    p->nb = nlb;
    p->nc = nlc;
    if (nlb) memcpy(p->lb, lb, (size_t)nlb * sizeof(int64_t));
    if (nlb) memcpy(p->rb, rb, (size_t)nlb * sizeof(int64_t));
    if (nlc) memcpy(p->lc, lc, (size_t)nlc * sizeof(int64_t));
    if (nlc) memcpy(p->rc, rc, (size_t)nlc * sizeof(int64_t));
    for (int64_t d = 0; d < ls->rank; d++)
        if (!lused[d]) p->lf[p->nlf++] = d;
    for (int64_t d = 0; d < rs->rank; d++)
        if (!rused[d]) p->rf[p->nrf++] = d;
    interp_row_major_strides(ls->rank, ls->dims, p->lstr);
    interp_row_major_strides(rs->rank, rs->dims, p->rstr);
    return NULL;
}

/* Reads group_sizes into per-prefix (start, size) rows. |prefix_dims| are the lhs dims
 * that index group_sizes' leading dimensions. */
static cxla_status load_groups(const cxla_instr *instr, plan *p, const cxla_literal *gs,
                               int64_t nprefix, const int64_t *prefix_dims) {
    const cxla_shape *s = cxla_literal_shape(gs);
    p->g = s->dims[s->rank - 1];
    if (s->rank != 1) {
        bool ok = s->rank - 1 == nprefix;
        for (int64_t i = 0; ok && i < nprefix; i++) ok = s->dims[i] == p->ls->dims[prefix_dims[i]];
        if (!ok)
            return BAD(instr,
                       "group_sizes of rank %" PRId64 " must be [g] or have %" PRId64
                       " leading dimensions matching lhs",
                       s->rank, nprefix);
    }
    p->prefix_count = cxla_literal_element_count(gs) / (p->g > 0 ? p->g : 1);
    if (p->g == 0) p->prefix_count = 1;
    p->groups = malloc((size_t)(2 * p->prefix_count * (p->g > 0 ? p->g : 1)) * sizeof(int64_t));
    if (!p->groups) return OOM();
    const char *data = cxla_literal_data_const(gs);
    size_t es = cxla_type_storage(s->type);
    for (int64_t r = 0; r < p->prefix_count; r++) {
        int64_t start = 0, *row = p->groups + 2 * r * p->g;
        for (int64_t i = 0; i < p->g; i++) {
            int64_t n = cxla_load_s64(s->type, data + (size_t)(r * p->g + i) * es);
            if (n < 0) return BAD(instr, "group %" PRId64 " has a negative size %" PRId64, i, n);
            row[i] = start;
            row[p->g + i] = n;
            start = n > INT64_MAX - start ? INT64_MAX : start + n;
        }
    }
    return NULL;
}

/* The group of ragged index |r| in prefix row |row|, or -1. */
static int64_t group_of(const plan *p, int64_t row, int64_t r) {
    const int64_t *starts = p->groups + 2 * row * p->g, *sizes = starts + p->g;
    for (int64_t i = 0; i < p->g; i++)
        if (r >= starts[i] && r - starts[i] < sizes[i]) return i;
    return -1;
}

/* The prefix row of lhs index |li| (full coordinates) with rank-1 group_sizes -> 0. */
static int64_t prefix_row(const plan *p, const int64_t *li, int64_t nprefix, const int64_t *pd,
                          bool broadcast) {
    if (broadcast) return 0;
    int64_t row = 0;
    for (int64_t i = 0; i < nprefix; i++) row = row * p->ls->dims[pd[i]] + li[pd[i]];
    return row;
}

/* Computes every output element. */
static void run(const plan *p, kind k, cxla_type rt, const val *L, const val *R, char *out,
                int64_t out_count, int64_t nprefix, const int64_t *pd, bool broadcast) {
    size_t es = cxla_type_storage(rt);
    int64_t K = 1, kdims[CXLA_MAX_RANK];
    for (int64_t i = 0; i < p->nc; i++) K *= kdims[i] = p->ls->dims[p->lc[i]];
    int64_t lead = p->mode == 2 ? 1 : 0;
    int64_t odims[CXLA_MAX_RANK + 1], orank = 0;
    if (lead) odims[orank++] = p->g;
    for (int64_t i = 0; i < p->nb; i++) odims[orank++] = p->ls->dims[p->lb[i]];
    for (int64_t i = 0; i < p->nlf; i++) odims[orank++] = p->ls->dims[p->lf[i]];
    for (int64_t i = 0; i < p->nrf; i++) odims[orank++] = p->rs->dims[p->rf[i]];
    int64_t oi[CXLA_MAX_RANK + 1] = {0};
    for (int64_t o = 0; o < out_count; o++) {
        int64_t li[CXLA_MAX_RANK] = {0}, ri[CXLA_MAX_RANK] = {0}, q = lead;
        for (int64_t i = 0; i < p->nb; i++, q++) li[p->lb[i]] = ri[p->rb[i]] = oi[q];
        for (int64_t i = 0; i < p->nlf; i++, q++) li[p->lf[i]] = oi[q];
        for (int64_t i = 0; i < p->nrf; i++, q++) ri[p->rf[i]] = oi[q];
        val acc = {0, 0, 0};
        bool zero = false;
        if (p->mode == 1 || p->mode == 3) {
            int64_t grp = group_of(p, prefix_row(p, li, nprefix, pd, broadcast), li[p->rd]);
            zero = grp < 0;
            if (p->mode == 1) ri[p->gd] = grp;
        }
        int64_t kk[CXLA_MAX_RANK] = {0};
        for (int64_t c = 0; !zero && c < K; c++) {
            for (int64_t i = 0; i < p->nc; i++) li[p->lc[i]] = ri[p->rc[i]] = kk[i];
            bool take = true;
            if (p->mode == 2)
                take = group_of(p, prefix_row(p, li, nprefix, pd, broadcast), li[p->rd]) == oi[0];
            if (take) {
                int64_t lo = 0, ro = 0;
                for (int64_t d = 0; d < p->ls->rank; d++) lo += li[d] * p->lstr[d];
                for (int64_t d = 0; d < p->rs->rank; d++) ro += ri[d] * p->rstr[d];
                mul_add(k, &acc, L[lo], R[ro]);
            }
            for (int64_t i = p->nc - 1; i >= 0 && ++kk[i] == kdims[i]; i--) kk[i] = 0;
        }
        store(k, rt, out + (size_t)o * es, acc);
        for (int64_t d = orank - 1; d >= 0 && ++oi[d] == odims[d]; d--) oi[d] = 0;
    }
}

static cxla_status check_arrays(const cxla_instr *instr, const cxla_literal *const *ops, int n) {
    for (int i = 0; i < n; i++) {
        const cxla_shape *s = cxla_literal_shape(ops[i]);
        if (s->type == CXLA_TUPLE || s->type == CXLA_TOKEN || s->type == CXLA_OPAQUE)
            return BAD(instr, "operand %d must be an array", i);
    }
    return NULL;
}

static cxla_status op_ragged_dot(interp_ctx *ctx, const cxla_instr *instr,
                                 const cxla_literal *const *operands, cxla_literal **out) {
    CXLA_RETURN_IF_ERROR(check_arrays(instr, operands, 3));
    const cxla_shape *ls = cxla_literal_shape(operands[0]), *rs = cxla_literal_shape(operands[1]);
    const cxla_shape *gs = cxla_literal_shape(operands[2]);
    if (!cxla_type_is_integer(gs->type) || gs->rank < 1)
        return BAD(instr, "group_sizes must be an integer array");
    int64_t nr = 0, ng = 0;
    const int64_t *rdims = cxla_instr_ints(instr, CXLA_ATTR_LHS_RAGGED_DIMS, &nr);
    const int64_t *gdims = cxla_instr_ints(instr, CXLA_ATTR_RHS_GROUP_DIMS, &ng);
    if (!rdims || nr != 1 || rdims[0] < 0 || rdims[0] >= ls->rank)
        return BAD(instr, "lhs_ragged_dims must name one lhs dimension");
    if (!gdims) ng = 0;
    int64_t gd = ng == 1 ? gdims[0] : -1;
    if (gd >= rs->rank) return BAD(instr, "rhs_group_dims is out of range");
    plan p;
    CXLA_RETURN_IF_ERROR(make_plan(instr, ls, rs, gd, &p));
    p.rd = rdims[0];
    p.gd = gd;
    /* The mode, and the lhs dims that index group_sizes' leading dimensions: the batch
     * dims (except in batch mode), then the dims of the ragged one's kind outer to it. */
    int64_t pd[CXLA_MAX_RANK], npd = 0;
    bool in_c = false, in_b = false;
    for (int64_t i = 0; i < p.nc; i++) in_c |= p.lc[i] == p.rd;
    for (int64_t i = 0; i < p.nb; i++) in_b |= p.lb[i] == p.rd;
    p.mode = in_c ? 2 : in_b ? 3 : 1;
    if ((p.mode == 1) != (gd >= 0))
        return BAD(instr, "rhs_group_dims must name one dimension exactly when the ragged "
                          "dimension is a non-contracting one");
    if (p.mode != 3)
        for (int64_t i = 0; i < p.nb; i++) pd[npd++] = p.lb[i];
    const int64_t *kind_dims = p.mode == 1 ? p.lf : p.mode == 2 ? p.lc : p.lb;
    int64_t kind_n = p.mode == 1 ? p.nlf : p.mode == 2 ? p.nc : p.nb;
    for (int64_t d = 0; d < p.rd; d++)
        for (int64_t i = 0; i < kind_n; i++)
            if (kind_dims[i] == d) pd[npd++] = d;
    cxla_status s = load_groups(instr, &p, operands[2], npd, pd);
    if (!s && p.mode == 1 && rs->dims[gd] != p.g)
        s = BAD(instr, "the rhs group dimension has %" PRId64 " groups, group_sizes %" PRId64,
                rs->dims[gd], p.g);
    cxla_type rt = instr->shape.type;
    kind k = pick_kind(rt, ls->type, rs->type);
    val *L = NULL, *R = NULL;
    cxla_literal *result = NULL;
    if (!s) s = load_all(instr, k, rt, operands[0], NULL, &L);
    if (!s) s = load_all(instr, k, rt, operands[1], NULL, &R);
    if (!s) s = interp_new_array(&instr->shape, &result);
    if (!s)
        run(&p, k, rt, L, R, cxla_literal_data(result), cxla_literal_element_count(result), npd, pd,
            gs->rank == 1);
    free(L);
    free(R);
    free(p.groups);
    if (s) {
        cxla_literal_free(result);
        return s;
    }
    *out = result;
    return NULL;
}

static cxla_status op_scaled_dot(interp_ctx *ctx, const cxla_instr *instr,
                                 const cxla_literal *const *operands, cxla_literal **out) {
    CXLA_RETURN_IF_ERROR(check_arrays(instr, operands, 4));
    const cxla_shape *ls = cxla_literal_shape(operands[0]), *rs = cxla_literal_shape(operands[1]);
    for (int i = 0; i < 2; i++) {
        const cxla_shape *x = cxla_literal_shape(operands[i]);
        const cxla_shape *sc = cxla_literal_shape(operands[i + 2]);
        bool ok = sc->rank == x->rank;
        for (int64_t d = 0; ok && d < x->rank; d++)
            ok = sc->dims[d] > 0 ? x->dims[d] % sc->dims[d] == 0 : x->dims[d] == 0;
        if (!ok) return BAD(instr, "scale %d does not divide its operand into blocks", i + 2);
    }
    plan p;
    CXLA_RETURN_IF_ERROR(make_plan(instr, ls, rs, -1, &p));
    cxla_type rt = instr->shape.type;
    kind k = pick_kind(rt, ls->type, rs->type);
    val *L = NULL, *R = NULL;
    cxla_literal *result = NULL;
    cxla_status s = load_all(instr, k, rt, operands[0], operands[2], &L);
    if (!s) s = load_all(instr, k, rt, operands[1], operands[3], &R);
    if (!s) s = interp_new_array(&instr->shape, &result);
    if (!s)
        run(&p, k, rt, L, R, cxla_literal_data(result), cxla_literal_element_count(result), 0, NULL,
            true);
    free(L);
    free(R);
    if (s) {
        cxla_literal_free(result);
        return s;
    }
    *out = result;
    return NULL;
}

const interp_op_fn interp_ragged_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_RAGGED_DOT] = op_ragged_dot,
    [CXLA_OP_SCALED_DOT] = op_scaled_dot,
};
