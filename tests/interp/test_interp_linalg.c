/* The interpreter's dot and convolution (src/interp/interp_linalg.c) against naive loops
 * written here straight from the seeds' definitions (DotGeneral; ConvWithGeneralPadding
 * with dilations, feature_group_count and batch_group_count), on random shapes, dimension
 * numbers, groups, strides, paddings, dilations and reversals.
 *
 * Values are small integers, so every sum is exact in any order and results compare
 * exactly; f64 cases use random reals and a tolerance. Modules are built in memory (no
 * parser) and the handlers are called directly. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

/* ---- helpers ------------------------------------------------------------------------ */

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Uniform in [lo, hi]. */
static int64_t rnd_in(int64_t lo, int64_t hi) {
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static void shuffle(int64_t *v, int64_t n) {
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = rnd_in(0, i), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

static int64_t product(int64_t n, const int64_t *d) {
    int64_t p = 1;
    for (int64_t i = 0; i < n; i++) p *= d[i];
    return p;
}

/* Row-major linear index. */
static int64_t linear(int64_t rank, const int64_t *dims, const int64_t *idx) {
    int64_t l = 0;
    for (int64_t i = 0; i < rank; i++) l = l * dims[i] + idx[i];
    return l;
}

static bool next_index(int64_t rank, const int64_t *dims, int64_t *idx) {
    for (int64_t i = rank - 1; i >= 0; i--) {
        if (++idx[i] < dims[i]) return true;
        idx[i] = 0;
    }
    return false;
}

/* A literal of |type| and dims filled with random integers in [lo, hi] (for floats) or
 * random bits (|lo| > |hi|: any value of an integer type). */
static cxla_literal *random_literal(cxla_type type, int64_t rank, const int64_t *dims, int64_t lo,
                                    int64_t hi) {
    cxla_shape shape = {.type = type, .rank = rank, .dims = (int64_t *)dims};
    cxla_literal *lit = NULL;
    CHECK_OK(cxla_literal_create(&shape, &lit));
    if (!lit) return NULL;
    unsigned char *d = cxla_literal_data(lit);
    size_t es = cxla_type_storage(type);
    for (int64_t i = 0; i < cxla_literal_element_count(lit); i++) {
        if (cxla_type_is_complex(type))
            cxla_store_c128(type, d + i * es, (double)rnd_in(lo, hi), (double)rnd_in(lo, hi));
        else if (lo > hi)
            cxla_store_u64(type, d + i * es, rnd());
        else if (type == CXLA_F64 && lo == 0 && hi == 0)
            cxla_store_f64(type, d + i * es, (double)(rnd() >> 11) / 9007199254740992.0 - 0.5);
        else
            cxla_store_s64(type, d + i * es, rnd_in(lo, hi));
    }
    return lit;
}

static int64_t *arena_ints(cxla_module *m, int64_t n, const int64_t *v) {
    int64_t *p = cxla_arena_alloc_array(m->arena, (size_t)(n ? n : 1), sizeof(int64_t));
    if (n) memcpy(p, v, (size_t)n * sizeof(int64_t));
    return p;
}

static void set_ints(cxla_instr *in, cxla_attr_id id, int64_t n, const int64_t *v) {
    cxla_attr a = {.id = id, .name = cxla_attr_get_info(id)->name, .kind = CXLA_ATTR_KIND_INTS};
    a.v.ints.count = n;
    a.v.ints.values = arena_ints(in->parent->module, n, v);
    CHECK_OK(cxla_instr_set_attr(in, &a));
}

static void set_int(cxla_instr *in, cxla_attr_id id, int64_t v) {
    cxla_attr a = {.id = id, .name = cxla_attr_get_info(id)->name, .kind = CXLA_ATTR_KIND_INT};
    a.v.i = v;
    CHECK_OK(cxla_instr_set_attr(in, &a));
}

/* A module with parameters of |ls| and |rs| feeding one |op| of shape |os|. */
static cxla_instr *build(cxla_opcode op, const cxla_shape *ls, const cxla_shape *rs,
                         const cxla_shape *os, cxla_module **out_module) {
    cxla_module *m = NULL;
    cxla_computation *c = NULL;
    cxla_instr *p[2] = {NULL, NULL}, *in = NULL;
    CHECK_OK(cxla_module_create("linalg", &m));
    CHECK_OK(cxla_module_add_computation(m, "main", &c));
    CHECK_OK(cxla_computation_add_instr(c, CXLA_OP_PARAMETER, "p0", ls, 0, NULL, &p[0]));
    CHECK_OK(cxla_computation_add_instr(c, CXLA_OP_PARAMETER, "p1", rs, 0, NULL, &p[1]));
    CHECK_OK(cxla_computation_add_instr(c, op, "op", os, 2, p, &in));
    p[0]->parameter_number = 0;
    p[1]->parameter_number = 1;
    c->root = in;
    c->is_entry = true;
    m->entry = c;
    *out_module = m;
    return in;
}

/* Runs |in|'s handler on (lhs, rhs). */
static cxla_status run_op(cxla_module *m, const cxla_instr *in, const cxla_literal *lhs,
                          const cxla_literal *rhs, cxla_literal **out) {
    interp_ctx ctx;
    CXLA_RETURN_IF_ERROR(interp_ctx_init(&ctx, m, NULL));
    const cxla_literal *ops[2] = {lhs, rhs};
    interp_op_fn fn = interp_handler(in->opcode);
    cxla_status s = fn ? fn(&ctx, in, ops, out)
                       : cxla_error(CXLA_STATUS_UNIMPLEMENTED, "no handler for %s",
                                    cxla_opcode_name(in->opcode));
    interp_ctx_deinit(&ctx);
    return s;
}

/* Compares |got| with reference values |want| (real parts; |want_im| imaginary parts or
 * NULL); exactly unless |tol| > 0 (relative to |scale|, the sum of |products|). */
static bool compare(const cxla_literal *got, const double *want, const double *want_im,
                    const double *scale, double tol, const char *what) {
    cxla_type t = cxla_literal_type(got);
    const unsigned char *d = cxla_literal_data_const(got);
    size_t es = cxla_type_storage(t);
    for (int64_t i = 0; i < cxla_literal_element_count(got); i++) {
        double re, im = 0;
        if (cxla_type_is_complex(t))
            cxla_load_c128(t, d + i * es, &re, &im);
        else
            re = cxla_load_f64(t, d + i * es);
        double wi = want_im ? want_im[i] : 0;
        bool ok = tol > 0 ? fabs(re - want[i]) <= tol * (scale[i] + 1e-300) &&
                                fabs(im - wi) <= tol * (scale[i] + 1e-300)
                          : (re == want[i] || (isnan(re) && isnan(want[i]))) &&
                                (im == wi || (isnan(im) && isnan(wi)));
        if (!ok) {
            test_fail(__FILE__, __LINE__,
                      "%s: element %" PRId64 " is (%.17g, %.17g), want (%.17g, %.17g)", what, i, re,
                      im, want[i], wi);
            return false;
        }
    }
    return true;
}

/* ---- dot ---------------------------------------------------------------------------- */

typedef struct dot_case {
    int64_t lrank, rrank, nb, nc;
    int64_t ldims[8], rdims[8];
    int64_t lb[4], rb[4], lc[4], rc[4];
    int64_t odims[12], orank;
} dot_case;

/* Random dimension numbers: |nb| batch, |nc| contracting, |nlf| / |nrf| free dims, placed
 * at random positions of each operand. */
static void random_dot(dot_case *d, int64_t nb, int64_t nc, int64_t nlf, int64_t nrf,
                       int64_t max_size) {
    int64_t bsz[4], csz[4];
    for (int64_t i = 0; i < nb; i++) bsz[i] = rnd_in(rnd_in(0, 9) ? 1 : 0, max_size);
    for (int64_t i = 0; i < nc; i++) csz[i] = rnd_in(rnd_in(0, 9) ? 1 : 0, max_size);
    d->nb = nb;
    d->nc = nc;
    d->lrank = nb + nc + nlf;
    d->rrank = nb + nc + nrf;
    int64_t lpos[8], rpos[8];
    for (int64_t i = 0; i < d->lrank; i++) lpos[i] = i;
    for (int64_t i = 0; i < d->rrank; i++) rpos[i] = i;
    shuffle(lpos, d->lrank);
    shuffle(rpos, d->rrank);
    for (int64_t i = 0; i < d->lrank; i++) d->ldims[i] = -1;
    for (int64_t i = 0; i < d->rrank; i++) d->rdims[i] = -1;
    for (int64_t i = 0; i < nb; i++) {
        d->lb[i] = lpos[i];
        d->rb[i] = rpos[i];
        d->ldims[lpos[i]] = d->rdims[rpos[i]] = bsz[i];
    }
    for (int64_t i = 0; i < nc; i++) {
        d->lc[i] = lpos[nb + i];
        d->rc[i] = rpos[nb + i];
        d->ldims[lpos[nb + i]] = d->rdims[rpos[nb + i]] = csz[i];
    }
    d->orank = 0;
    for (int64_t i = 0; i < nb; i++) d->odims[d->orank++] = bsz[i];
    for (int64_t i = 0; i < d->lrank; i++)
        if (d->ldims[i] < 0) d->odims[d->orank++] = d->ldims[i] = rnd_in(1, max_size);
    for (int64_t i = 0; i < d->rrank; i++)
        if (d->rdims[i] < 0) d->odims[d->orank++] = d->rdims[i] = rnd_in(1, max_size);
}

/* DotGeneral from the seed: result[batch, lhs free, rhs free] = sum over the contracting
 * multi-index of lhs * rhs. |re|/|im| get the value, |scale| the sum of |products|.
 * Integer types are summed in uint64 (wrapping) when |wrap| is set. */
static void ref_dot(const dot_case *d, const cxla_literal *l, const cxla_literal *r, bool wrap,
                    double *re, double *im, double *scale, uint64_t *wrapped) {
    cxla_type lt = cxla_literal_type(l), rt = cxla_literal_type(r);
    const unsigned char *ld = cxla_literal_data_const(l), *rd = cxla_literal_data_const(r);
    size_t les = cxla_type_storage(lt), res = cxla_type_storage(rt);
    int64_t lfree[8], rfree[8], nlf = 0, nrf = 0;
    for (int64_t i = 0; i < d->lrank; i++) {
        bool used = false;
        for (int64_t k = 0; k < d->nb; k++) used |= d->lb[k] == i;
        for (int64_t k = 0; k < d->nc; k++) used |= d->lc[k] == i;
        if (!used) lfree[nlf++] = i;
    }
    for (int64_t i = 0; i < d->rrank; i++) {
        bool used = false;
        for (int64_t k = 0; k < d->nb; k++) used |= d->rb[k] == i;
        for (int64_t k = 0; k < d->nc; k++) used |= d->rc[k] == i;
        if (!used) rfree[nrf++] = i;
    }
    int64_t csz[4];
    for (int64_t k = 0; k < d->nc; k++) csz[k] = d->ldims[d->lc[k]];
    int64_t count = product(d->orank, d->odims);
    int64_t oidx[12] = {0};
    for (int64_t e = 0; e < count; e++) {
        int64_t li[8] = {0}, ri[8] = {0}, ci[4] = {0};
        int64_t o = 0;
        for (int64_t k = 0; k < d->nb; k++, o++) li[d->lb[k]] = ri[d->rb[k]] = oidx[o];
        for (int64_t k = 0; k < nlf; k++, o++) li[lfree[k]] = oidx[o];
        for (int64_t k = 0; k < nrf; k++, o++) ri[rfree[k]] = oidx[o];
        double sr = 0, si = 0, sc = 0;
        uint64_t w = 0;
        bool more = product(d->nc, csz) > 0;
        while (more) {
            for (int64_t k = 0; k < d->nc; k++) li[d->lc[k]] = ri[d->rc[k]] = ci[k];
            const void *lp = ld + linear(d->lrank, d->ldims, li) * les;
            const void *rp = rd + linear(d->rrank, d->rdims, ri) * res;
            double ar, ai, br, bi;
            cxla_load_c128(lt, lp, &ar, &ai);
            cxla_load_c128(rt, rp, &br, &bi);
            sr += ar * br - ai * bi;
            si += ar * bi + ai * br;
            sc += fabs(ar * br) + fabs(ai * bi) + fabs(ar * bi) + fabs(ai * br);
            if (wrap) w += (uint64_t)cxla_load_s64(lt, lp) * (uint64_t)cxla_load_s64(rt, rp);
            more = next_index(d->nc, csz, ci);
        }
        re[e] = sr;
        if (im) im[e] = si;
        scale[e] = sc;
        if (wrapped) wrapped[e] = w;
        next_index(d->orank, d->odims, oidx);
    }
}

static cxla_instr *build_dot(const dot_case *d, cxla_type lt, cxla_type rt, cxla_type ot,
                             cxla_module **m) {
    cxla_shape ls = {.type = lt, .rank = d->lrank, .dims = (int64_t *)d->ldims};
    cxla_shape rs = {.type = rt, .rank = d->rrank, .dims = (int64_t *)d->rdims};
    cxla_shape os = {.type = ot, .rank = d->orank, .dims = (int64_t *)d->odims};
    cxla_instr *in = build(CXLA_OP_DOT, &ls, &rs, &os, m);
    set_ints(in, CXLA_ATTR_LHS_BATCH_DIMS, d->nb, d->lb);
    set_ints(in, CXLA_ATTR_RHS_BATCH_DIMS, d->nb, d->rb);
    set_ints(in, CXLA_ATTR_LHS_CONTRACTING_DIMS, d->nc, d->lc);
    set_ints(in, CXLA_ATTR_RHS_CONTRACTING_DIMS, d->nc, d->rc);
    return in;
}

/* One random dot of the given types; exact unless |tol| > 0. */
static bool check_dot(const dot_case *d, cxla_type lt, cxla_type rt, cxla_type ot, int64_t lo,
                      int64_t hi, double tol) {
    cxla_module *m = NULL;
    cxla_instr *in = build_dot(d, lt, rt, ot, &m);
    cxla_literal *l = random_literal(lt, d->lrank, d->ldims, lo, hi);
    cxla_literal *r = random_literal(rt, d->rrank, d->rdims, lo, hi);
    cxla_literal *got = NULL;
    bool ok = false;
    cxla_status s = run_op(m, in, l, r, &got);
    if (s) {
        test_fail(__FILE__, __LINE__, "dot failed: %s", cxla_status_message(s));
        cxla_status_free(s);
    } else {
        int64_t n = product(d->orank, d->odims);
        double *re = calloc((size_t)n + 1, sizeof(double)), *im = calloc((size_t)n + 1, 8),
               *sc = calloc((size_t)n + 1, 8);
        uint64_t *w = calloc((size_t)n + 1, 8);
        bool is_int = cxla_type_is_integer(ot);
        ref_dot(d, l, r, is_int, re, im, sc, w);
        CHECK_EQ_I64(cxla_literal_element_count(got), n);
        CHECK(cxla_literal_type(got) == ot);
        if (is_int) {
            /* Wrapped to the result width. */
            const unsigned char *gd = cxla_literal_data_const(got);
            ok = true;
            for (int64_t i = 0; i < n && ok; i++) {
                cxla_literal *tmp = NULL;
                cxla_shape one = {.type = ot};
                CHECK_OK(cxla_literal_create(&one, &tmp));
                cxla_store_u64(ot, cxla_literal_data(tmp), w[i]);
                int64_t want = cxla_load_s64(ot, cxla_literal_data_const(tmp));
                int64_t have = cxla_load_s64(ot, gd + i * cxla_type_storage(ot));
                if (want != have) {
                    test_fail(__FILE__, __LINE__,
                              "int dot element %" PRId64 ": %" PRId64 " vs %" PRId64, i, have,
                              want);
                    ok = false;
                }
                cxla_literal_free(tmp);
            }
        } else {
            ok = compare(got, re, cxla_type_is_complex(ot) ? im : NULL, sc, tol, "dot");
        }
        free(re);
        free(im);
        free(sc);
        free(w);
    }
    if (!ok) {
        fprintf(stderr, "  lhs %s%" PRId64 "d rhs %" PRId64 "d nb %" PRId64 " nc %" PRId64 "\n",
                cxla_type_name(lt), d->lrank, d->rrank, d->nb, d->nc);
    }
    cxla_literal_free(got);
    cxla_literal_free(l);
    cxla_literal_free(r);
    cxla_module_destroy(m);
    return ok;
}

static void test_dot_random_f32(void) {
    for (int it = 0; it < 400; it++) {
        dot_case d;
        random_dot(&d, rnd_in(0, 2), rnd_in(0, 3), rnd_in(0, 2), rnd_in(0, 2), 4);
        if (!check_dot(&d, CXLA_F32, CXLA_F32, CXLA_F32, -4, 4, 0)) break;
    }
}

static void test_dot_random_types(void) {
    for (int it = 0; it < 150; it++) {
        dot_case d;
        random_dot(&d, rnd_in(0, 2), rnd_in(0, 2), rnd_in(0, 2), rnd_in(0, 2), 4);
        bool ok = check_dot(&d, CXLA_F64, CXLA_F64, CXLA_F64, 0, 0, 1e-14) &&
                  check_dot(&d, CXLA_BF16, CXLA_BF16, CXLA_F32, -4, 4, 0) &&
                  check_dot(&d, CXLA_F16, CXLA_F16, CXLA_F16, -3, 3, 0) &&
                  check_dot(&d, CXLA_S8, CXLA_S8, CXLA_S32, -128, 127, 0) &&
                  check_dot(&d, CXLA_S32, CXLA_S32, CXLA_S32, 1, 0, 0) && /* any bits: wraps */
                  check_dot(&d, CXLA_U8, CXLA_U8, CXLA_U8, 1, 0, 0) &&
                  check_dot(&d, CXLA_S64, CXLA_S64, CXLA_S64, 1, 0, 0) &&
                  check_dot(&d, CXLA_C64, CXLA_C64, CXLA_C64, -3, 3, 0) &&
                  check_dot(&d, CXLA_C128, CXLA_C128, CXLA_C128, -3, 3, 0);
        if (!ok) break;
    }
}

/* Shapes that cross the register and cache blocks of the matrix product. */
static void test_dot_blocked_shapes(void) {
    static const int64_t shapes[][3] = {{37, 70, 300}, {5, 600, 3},  {64, 64, 64}, {1, 1, 1000},
                                        {9, 1, 513},   {1, 33, 257}, {4, 8, 256},  {13, 17, 0}};
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        dot_case d = {.lrank = 2, .rrank = 2, .nb = 0, .nc = 1, .orank = 2};
        d.ldims[0] = shapes[i][0];
        d.ldims[1] = shapes[i][2];
        d.rdims[0] = shapes[i][2];
        d.rdims[1] = shapes[i][1];
        d.lc[0] = 1;
        d.rc[0] = 0;
        d.odims[0] = shapes[i][0];
        d.odims[1] = shapes[i][1];
        CHECK(check_dot(&d, CXLA_F32, CXLA_F32, CXLA_F32, -3, 3, 0));
        CHECK(check_dot(&d, CXLA_F64, CXLA_F64, CXLA_F64, 0, 0, 1e-13));
        CHECK(check_dot(&d, CXLA_S32, CXLA_S32, CXLA_S32, 1, 0, 0));
        /* Transposed operands and a batch of 2. */
        dot_case t = {.lrank = 3, .rrank = 3, .nb = 1, .nc = 1, .orank = 3};
        int64_t lt[3] = {shapes[i][2], 2, shapes[i][0]}, rt[3] = {shapes[i][1], shapes[i][2], 2};
        memcpy(t.ldims, lt, sizeof(lt));
        memcpy(t.rdims, rt, sizeof(rt));
        t.lb[0] = 1;
        t.rb[0] = 2;
        t.lc[0] = 0;
        t.rc[0] = 1;
        t.odims[0] = 2;
        t.odims[1] = shapes[i][0];
        t.odims[2] = shapes[i][1];
        CHECK(check_dot(&t, CXLA_F32, CXLA_F32, CXLA_F32, -3, 3, 0));
    }
}

static void test_dot_nan_inf(void) {
    /* [2] . [2]: Inf * 0 is NaN and must not be skipped; Inf + finite stays Inf. */
    dot_case d = {.lrank = 1, .rrank = 1, .nb = 0, .nc = 1, .orank = 0};
    d.ldims[0] = d.rdims[0] = 2;
    d.lc[0] = d.rc[0] = 0;
    cxla_module *m = NULL;
    cxla_instr *in = build_dot(&d, CXLA_F32, CXLA_F32, CXLA_F32, &m);
    cxla_literal *l = random_literal(CXLA_F32, 1, d.ldims, 0, 0);
    cxla_literal *r = random_literal(CXLA_F32, 1, d.rdims, 0, 0);
    float *lv = cxla_literal_data(l), *rv = cxla_literal_data(r);
    lv[0] = INFINITY;
    rv[0] = 0;
    lv[1] = 1;
    rv[1] = 2;
    cxla_literal *got = NULL;
    CHECK_OK(run_op(m, in, l, r, &got));
    CHECK(got && isnan(*(const float *)cxla_literal_data_const(got)));
    cxla_literal_free(got);
    got = NULL;
    rv[0] = 3;
    CHECK_OK(run_op(m, in, l, r, &got));
    CHECK(got && isinf(*(const float *)cxla_literal_data_const(got)));
    cxla_literal_free(got);
    cxla_literal_free(l);
    cxla_literal_free(r);
    cxla_module_destroy(m);
}

static void test_dot_errors(void) {
    dot_case d = {.lrank = 2, .rrank = 2, .nb = 0, .nc = 1, .orank = 2};
    int64_t ld[2] = {2, 3}, rd[2] = {4, 5}, od[2] = {2, 5};
    memcpy(d.ldims, ld, sizeof(ld));
    memcpy(d.rdims, rd, sizeof(rd));
    memcpy(d.odims, od, sizeof(od));
    d.lc[0] = 1;
    d.rc[0] = 0;
    cxla_module *m = NULL;
    cxla_instr *in = build_dot(&d, CXLA_F32, CXLA_F32, CXLA_F32, &m);
    cxla_literal *l = random_literal(CXLA_F32, 2, d.ldims, -1, 1);
    cxla_literal *r = random_literal(CXLA_F32, 2, d.rdims, -1, 1);
    cxla_literal *got = NULL;
    CHECK_ERROR_HAS(run_op(m, in, l, r, &got), "contracting dims differ");
    int64_t bad = 7;
    set_ints(in, CXLA_ATTR_RHS_CONTRACTING_DIMS, 1, &bad);
    CHECK_ERROR_HAS(run_op(m, in, l, r, &got), "distinct dims");
    CHECK(got == NULL);
    cxla_literal_free(l);
    cxla_literal_free(r);
    cxla_module_destroy(m);
    CHECK_EQ_I64(interp_handler_count(CXLA_OP_DOT), 1);
    CHECK_EQ_I64(interp_handler_count(CXLA_OP_CONVOLUTION), 1);
}

/* ---- convolution -------------------------------------------------------------------- */

typedef struct conv_case {
    int64_t n; /* spatial dims */
    int64_t G, BG, OB, IB, KZ, IZ, OZ;
    int64_t in_size[3], k_size[3], out_size[3];
    int64_t stride[3], pad_lo[3], pad_hi[3], lhs_dil[3], rhs_dil[3];
    bool rev[3];
    /* Dim positions: input (batch, feature, spatial...), kernel (in, out, spatial...),
     * output (batch, feature, spatial...). */
    int64_t ipos[5], kpos[5], opos[5];
    int64_t idims[5], kdims[5], odims[5];
} conv_case;

/* |wide|: large and odd lhs dilations (mostly > 1), bigger windows, and padding from
 * negative to wider than the window (the phase classes of lhs dilation). */
static void random_conv_of(conv_case *c, int64_t n, bool wide) {
    c->n = n;
    c->G = c->BG = 1;
    int64_t which = rnd_in(0, 3);
    if (which == 1) c->G = rnd_in(2, 3);
    if (which == 2) c->BG = rnd_in(2, 3);
    c->OB = rnd_in(1, 2);
    c->IB = c->OB * c->BG;
    c->KZ = rnd_in(1, 3);
    c->IZ = c->KZ * c->G;
    c->OZ = c->G * c->BG * rnd_in(1, 2);
    for (int64_t i = 0; i < n; i++) {
        for (;;) {
            c->in_size[i] = rnd_in(1, 6);
            c->k_size[i] = rnd_in(1, 3);
            c->stride[i] = rnd_in(1, 3);
            c->lhs_dil[i] = rnd_in(0, 2) ? 1 : rnd_in(2, 3);
            c->rhs_dil[i] = rnd_in(0, 2) ? 1 : rnd_in(2, 3);
            c->pad_lo[i] = rnd_in(-2, 3);
            c->pad_hi[i] = rnd_in(-2, 3);
            c->rev[i] = rnd_in(0, 1);
            int64_t window = (c->k_size[i] - 1) * c->rhs_dil[i] + 1;
            if (wide) {
                c->in_size[i] = rnd_in(1, 7);
                c->k_size[i] = rnd_in(1, 6);
                c->stride[i] = rnd_in(0, 2) ? 1 : rnd_in(2, 3);
                c->lhs_dil[i] = rnd_in(0, 4) ? rnd_in(2, 9) : 1;
                window = (c->k_size[i] - 1) * c->rhs_dil[i] + 1;
                c->pad_lo[i] = rnd_in(-3, window + 3);
                c->pad_hi[i] = rnd_in(-3, window + 3);
            }
            int64_t padded = (c->in_size[i] - 1) * c->lhs_dil[i] + 1 + c->pad_lo[i] + c->pad_hi[i];
            if (padded < 0) continue;
            c->out_size[i] = padded >= window ? (padded - window) / c->stride[i] + 1 : 0;
            if (c->out_size[i] > 0 || rnd_in(0, 9) == 0) break;
        }
    }
    int64_t r = n + 2;
    for (int64_t i = 0; i < r; i++) c->ipos[i] = c->kpos[i] = c->opos[i] = i;
    shuffle(c->ipos, r);
    shuffle(c->kpos, r);
    shuffle(c->opos, r);
    c->idims[c->ipos[0]] = c->IB;
    c->idims[c->ipos[1]] = c->IZ;
    c->kdims[c->kpos[0]] = c->KZ;
    c->kdims[c->kpos[1]] = c->OZ;
    c->odims[c->opos[0]] = c->OB;
    c->odims[c->opos[1]] = c->OZ;
    for (int64_t i = 0; i < n; i++) {
        c->idims[c->ipos[2 + i]] = c->in_size[i];
        c->kdims[c->kpos[2 + i]] = c->k_size[i];
        c->odims[c->opos[2 + i]] = c->out_size[i];
    }
}

static void random_conv(conv_case *c, int64_t n) {
    random_conv_of(c, n, false);
}

static cxla_instr *build_conv(const conv_case *c, cxla_type lt, cxla_type rt, cxla_type ot,
                              cxla_module **m) {
    int64_t r = c->n + 2;
    cxla_shape ls = {.type = lt, .rank = r, .dims = (int64_t *)c->idims};
    cxla_shape rs = {.type = rt, .rank = r, .dims = (int64_t *)c->kdims};
    cxla_shape os = {.type = ot, .rank = r, .dims = (int64_t *)c->odims};
    cxla_instr *in = build(CXLA_OP_CONVOLUTION, &ls, &rs, &os, m);
    cxla_attr dl = {
        .id = CXLA_ATTR_DIM_LABELS, .name = "dim_labels", .kind = CXLA_ATTR_KIND_DIM_LABELS};
    cxla_conv_dims *d = &dl.v.conv;
    d->spatial_count = c->n;
    d->input_batch = c->ipos[0];
    d->input_feature = c->ipos[1];
    d->input_spatial = arena_ints(*m, c->n, c->ipos + 2);
    d->kernel_input_feature = c->kpos[0];
    d->kernel_output_feature = c->kpos[1];
    d->kernel_spatial = arena_ints(*m, c->n, c->kpos + 2);
    d->output_batch = c->opos[0];
    d->output_feature = c->opos[1];
    d->output_spatial = arena_ints(*m, c->n, c->opos + 2);
    CHECK_OK(cxla_instr_set_attr(in, &dl));
    if (c->n > 0) {
        cxla_attr w = {.id = CXLA_ATTR_WINDOW, .name = "window", .kind = CXLA_ATTR_KIND_WINDOW};
        cxla_window_dim *wd = cxla_arena_alloc_array((*m)->arena, (size_t)c->n, sizeof(*wd));
        for (int64_t i = 0; i < c->n; i++)
            wd[i] = (cxla_window_dim){.size = c->k_size[i],
                                      .stride = c->stride[i],
                                      .pad_low = c->pad_lo[i],
                                      .pad_high = c->pad_hi[i],
                                      .lhs_dilation = c->lhs_dil[i],
                                      .rhs_dilation = c->rhs_dil[i],
                                      .reversal = c->rev[i]};
        w.v.window.rank = c->n;
        w.v.window.dims = wd;
        CHECK_OK(cxla_instr_set_attr(in, &w));
    }
    if (c->G != 1) set_int(in, CXLA_ATTR_FEATURE_GROUP_COUNT, c->G);
    if (c->BG != 1) set_int(in, CXLA_ATTR_BATCH_GROUP_COUNT, c->BG);
    return in;
}

/* The seed's pseudo-code, generalized: for each output (b, z, o...), sum over the kernel's
 * spatial positions k and input features of the group, input position
 * u = o * stride - pad_low + k * rhs_dilation in the padded, lhs-dilated input (a hole
 * unless u % lhs_dilation == 0, then u / lhs_dilation, which must be inside the input);
 * the kernel is read at size-1-k where reversed. Feature groups: z's group is
 * z / (OZ / G) and reads input features group * KZ + kz. Batch groups: z's group is
 * z / (OZ / BG) and reads input batch b + group * OB. */
static void ref_conv(const conv_case *c, const cxla_literal *l, const cxla_literal *r, double *out,
                     double *out_im, double *scale) {
    cxla_type lt = cxla_literal_type(l), rt = cxla_literal_type(r);
    const unsigned char *ld = cxla_literal_data_const(l), *rd = cxla_literal_data_const(r);
    size_t les = cxla_type_storage(lt), res = cxla_type_storage(rt);
    int64_t rank = c->n + 2;
    int64_t count = product(rank, c->odims);
    int64_t oidx[5] = {0};
    for (int64_t e = 0; e < count; e++) {
        int64_t b = oidx[c->opos[0]], z = oidx[c->opos[1]];
        int64_t fg = z / (c->OZ / c->G), bg = z / (c->OZ / c->BG);
        double sum = 0, sum_im = 0, sc = 0;
        int64_t k[3] = {0};
        bool more = product(c->n, c->k_size) > 0;
        while (more) {
            int64_t iidx[5], kidx[5];
            bool inside = true;
            for (int64_t i = 0; i < c->n; i++) {
                int64_t u =
                    oidx[c->opos[2 + i]] * c->stride[i] - c->pad_lo[i] + k[i] * c->rhs_dil[i];
                if (u < 0 || u % c->lhs_dil[i] != 0 || u / c->lhs_dil[i] >= c->in_size[i])
                    inside = false;
                iidx[c->ipos[2 + i]] = inside ? u / c->lhs_dil[i] : 0;
                kidx[c->kpos[2 + i]] = c->rev[i] ? c->k_size[i] - 1 - k[i] : k[i];
            }
            for (int64_t kz = 0; inside && kz < c->KZ; kz++) {
                iidx[c->ipos[0]] = b + bg * c->OB;
                iidx[c->ipos[1]] = fg * c->KZ + kz;
                kidx[c->kpos[0]] = kz;
                kidx[c->kpos[1]] = z;
                double xr, xi, wr, wi;
                cxla_load_c128(lt, ld + linear(rank, c->idims, iidx) * les, &xr, &xi);
                cxla_load_c128(rt, rd + linear(rank, c->kdims, kidx) * res, &wr, &wi);
                sum += xr * wr - xi * wi;
                sum_im += xr * wi + xi * wr;
                sc += fabs(xr * wr) + fabs(xi * wi) + fabs(xr * wi) + fabs(xi * wr);
            }
            more = next_index(c->n, c->k_size, k);
        }
        out[e] = sum;
        out_im[e] = sum_im;
        scale[e] = sc;
        next_index(rank, c->odims, oidx);
    }
}

static bool check_conv(const conv_case *c, cxla_type lt, cxla_type rt, cxla_type ot, int64_t lo,
                       int64_t hi, double tol) {
    cxla_module *m = NULL;
    cxla_instr *in = build_conv(c, lt, rt, ot, &m);
    int64_t rank = c->n + 2;
    cxla_literal *l = random_literal(lt, rank, c->idims, lo, hi);
    cxla_literal *r = random_literal(rt, rank, c->kdims, lo, hi);
    cxla_literal *got = NULL;
    bool ok = false;
    cxla_status s = run_op(m, in, l, r, &got);
    if (s) {
        test_fail(__FILE__, __LINE__, "convolution failed: %s", cxla_status_message(s));
        cxla_status_free(s);
    } else {
        int64_t n = product(rank, c->odims);
        double *want = calloc((size_t)n + 1, 8), *want_im = calloc((size_t)n + 1, 8),
               *sc = calloc((size_t)n + 1, 8);
        ref_conv(c, l, r, want, want_im, sc);
        CHECK_EQ_I64(cxla_literal_element_count(got), n);
        ok = compare(got, want, cxla_type_is_complex(ot) ? want_im : NULL, sc, tol, "convolution");
        free(want);
        free(want_im);
        free(sc);
    }
    if (!ok) {
        fprintf(stderr,
                "  conv %s n=%" PRId64 " G=%" PRId64 " BG=%" PRId64 " IB=%" PRId64 " IZ=%" PRId64
                " OZ=%" PRId64 "\n",
                cxla_type_name(lt), c->n, c->G, c->BG, c->IB, c->IZ, c->OZ);
        for (int64_t i = 0; i < c->n; i++)
            fprintf(stderr,
                    "  dim %" PRId64 ": in %" PRId64 " k %" PRId64 " out %" PRId64
                    " stride %" PRId64 " pad %" PRId64 "_%" PRId64 " lhs_dil %" PRId64
                    " rhs_dil %" PRId64 " rev %d\n",
                    i, c->in_size[i], c->k_size[i], c->out_size[i], c->stride[i], c->pad_lo[i],
                    c->pad_hi[i], c->lhs_dil[i], c->rhs_dil[i], (int)c->rev[i]);
    }
    cxla_literal_free(got);
    cxla_literal_free(l);
    cxla_literal_free(r);
    cxla_module_destroy(m);
    return ok;
}

static void test_conv_random_f32(void) {
    for (int it = 0; it < 600; it++) {
        conv_case c;
        random_conv(&c, rnd_in(0, 3));
        if (!check_conv(&c, CXLA_F32, CXLA_F32, CXLA_F32, -3, 3, 0)) break;
    }
}

static void test_conv_random_types(void) {
    for (int it = 0; it < 150; it++) {
        conv_case c;
        random_conv(&c, rnd_in(0, 2));
        bool ok = check_conv(&c, CXLA_F64, CXLA_F64, CXLA_F64, 0, 0, 1e-14) &&
                  check_conv(&c, CXLA_BF16, CXLA_BF16, CXLA_F32, -3, 3, 0) &&
                  check_conv(&c, CXLA_S8, CXLA_S8, CXLA_S32, -100, 100, 0) &&
                  check_conv(&c, CXLA_S32, CXLA_S32, CXLA_S32, -1000, 1000, 0) &&
                  check_conv(&c, CXLA_C64, CXLA_C64, CXLA_C64, -3, 3, 0);
        if (!ok) break;
    }
}

/* Kernels holding inf or NaN: taps over padding and dilation holes are skipped (no
 * inf * 0 = NaN from them), as in the seed's pseudo-code. */
static void test_conv_non_finite(void) {
    for (int it = 0; it < 200; it++) {
        conv_case c;
        random_conv(&c, rnd_in(1, 2));
        cxla_module *m = NULL;
        cxla_instr *in = build_conv(&c, CXLA_F32, CXLA_F32, CXLA_F32, &m);
        int64_t rank = c.n + 2;
        cxla_literal *l = random_literal(CXLA_F32, rank, c.idims, 1, 3); /* no zeros */
        cxla_literal *r = random_literal(CXLA_F32, rank, c.kdims, -3, 3);
        float *kd = cxla_literal_data(r);
        int64_t kn = cxla_literal_element_count(r);
        if (kn > 0) kd[rnd_in(0, kn - 1)] = rnd_in(0, 1) ? INFINITY : NAN;
        cxla_literal *got = NULL;
        bool ok = false;
        cxla_status s = run_op(m, in, l, r, &got);
        if (s) {
            test_fail(__FILE__, __LINE__, "convolution failed: %s", cxla_status_message(s));
            cxla_status_free(s);
        } else {
            int64_t n = product(rank, c.odims);
            double *want = calloc((size_t)n + 1, 8), *want_im = calloc((size_t)n + 1, 8),
                   *sc = calloc((size_t)n + 1, 8);
            ref_conv(&c, l, r, want, want_im, sc);
            ok = compare(got, want, NULL, sc, 0, "non-finite convolution");
            free(want);
            free(want_im);
            free(sc);
        }
        cxla_literal_free(got);
        cxla_literal_free(l);
        cxla_literal_free(r);
        cxla_module_destroy(m);
        if (!ok) break;
    }
}

/* PACKED_NIBBLE on both operands (XLA's evaluator): each s8 holds two signed nibbles,
 * low = bits 0-3 sign-extended, high = the value shifted right by 4 (arithmetic), and
 * the product of two elements is low * low + high * high. */
static int64_t nibble_lo(int64_t v) {
    int64_t lo = v & 15;
    return lo >= 8 ? lo - 16 : lo;
}
static int64_t nibble_hi(int64_t v) {
    return (v - (v & 15)) / 16;
}

static void test_dot_packed_nibble(void) {
    for (int it = 0; it < 50; it++) {
        dot_case d;
        random_dot(&d, rnd_in(0, 1), rnd_in(1, 2), rnd_in(0, 2), rnd_in(0, 2), 4);
        cxla_module *m = NULL;
        cxla_instr *in = build_dot(&d, CXLA_S8, CXLA_S8, CXLA_S32, &m);
        cxla_attr a = {.id = CXLA_ATTR_OPERAND_PRECISION,
                       .name = "operand_precision",
                       .kind = CXLA_ATTR_KIND_PRECISIONS};
        cxla_precision *pp = cxla_arena_alloc_array(m->arena, 2, sizeof(*pp));
        pp[0] = pp[1] = CXLA_PRECISION_PACKED_NIBBLE;
        a.v.precisions.count = 2;
        a.v.precisions.items = pp;
        CHECK_OK(cxla_instr_set_attr(in, &a));
        cxla_literal *l = random_literal(CXLA_S8, d.lrank, d.ldims, -128, 127);
        cxla_literal *r = random_literal(CXLA_S8, d.rrank, d.rdims, -128, 127);
        /* The reference: split each operand into its nibbles and run two plain dots. */
        cxla_literal *parts[4];
        for (int k = 0; k < 4; k++) {
            const cxla_literal *src = k < 2 ? l : r;
            CHECK_OK(cxla_literal_clone(src, &parts[k]));
            int8_t *v = cxla_literal_data(parts[k]);
            for (int64_t i = 0; i < cxla_literal_element_count(src); i++)
                v[i] = (int8_t)(k % 2 ? nibble_hi(v[i]) : nibble_lo(v[i]));
        }
        int64_t n = product(d.orank, d.odims);
        double *re = calloc((size_t)n + 1, 8), *sc = calloc((size_t)n + 1, 8);
        double *re2 = calloc((size_t)n + 1, 8);
        ref_dot(&d, parts[0], parts[2], false, re, NULL, sc, NULL);
        ref_dot(&d, parts[1], parts[3], false, re2, NULL, sc, NULL);
        for (int64_t i = 0; i < n; i++) re[i] += re2[i];
        cxla_literal *got = NULL;
        CHECK_OK(run_op(m, in, l, r, &got));
        bool ok = got && compare(got, re, NULL, sc, 0, "packed nibble dot");
        free(re);
        free(re2);
        free(sc);
        for (int k = 0; k < 4; k++) cxla_literal_free(parts[k]);
        cxla_literal_free(got);
        cxla_literal_free(l);
        cxla_literal_free(r);
        cxla_module_destroy(m);
        if (!ok) break;
    }
}

/* A bigger NHWC / HWIO convolution crossing the im2col chunks and gemm blocks. */
static void test_conv_large(void) {
    conv_case c = {.n = 2, .G = 1, .BG = 1, .OB = 2, .IB = 2, .KZ = 24, .IZ = 24, .OZ = 40};
    for (int i = 0; i < 2; i++) {
        c.in_size[i] = 30;
        c.k_size[i] = 3;
        c.stride[i] = 1;
        c.pad_lo[i] = c.pad_hi[i] = 1;
        c.lhs_dil[i] = c.rhs_dil[i] = 1;
        c.out_size[i] = 30;
    }
    int64_t ip[4] = {0, 3, 1, 2}, kp[4] = {2, 3, 0, 1}, op[4] = {0, 3, 1, 2};
    memcpy(c.ipos, ip, sizeof(ip));
    memcpy(c.kpos, kp, sizeof(kp));
    memcpy(c.opos, op, sizeof(op));
    c.idims[0] = 2, c.idims[1] = 30, c.idims[2] = 30, c.idims[3] = 24;
    c.kdims[0] = 3, c.kdims[1] = 3, c.kdims[2] = 24, c.kdims[3] = 40;
    c.odims[0] = 2, c.odims[1] = 30, c.odims[2] = 30, c.odims[3] = 40;
    CHECK(check_conv(&c, CXLA_F32, CXLA_F32, CXLA_F32, -2, 2, 0));
    /* Depthwise: feature_group_count = input features, one kernel input feature. */
    c.G = 24;
    c.KZ = 1;
    c.OZ = 48;
    c.kdims[2] = 1;
    c.kdims[3] = 48;
    c.odims[3] = 48;
    CHECK(check_conv(&c, CXLA_F32, CXLA_F32, CXLA_F32, -2, 2, 0));
}

/* Convolutions cut into tiles (blocks of batches and feature groups, interp_linalg.c)
 * as small as one batch and one group: the same sums as the naive loop, exactly, for
 * results that are not the sums themselves (bf16 operands into f32, f32 in another dim
 * order), with lhs dilation's classes and feature groups. */
static void test_conv_tiled(void) {
    int64_t saved = interp_conv_tile_elements;
    for (int it = 0; it < 300; it++) {
        conv_case c;
        random_conv_of(&c, rnd_in(1, 2), it % 3 == 0);
        interp_conv_tile_elements = rnd_in(1, 60);
        bool ok = check_conv(&c, CXLA_BF16, CXLA_BF16, CXLA_F32, -3, 3, 0) &&
                  check_conv(&c, CXLA_F32, CXLA_F32, CXLA_F32, -3, 3, 0) &&
                  check_conv(&c, CXLA_BF16, CXLA_BF16, CXLA_BF16, -1, 1, 0);
        if (!ok) {
            fprintf(stderr, "  tile elements %" PRId64 "\n", interp_conv_tile_elements);
            break;
        }
    }
    interp_conv_tile_elements = saved;
}

/* ---- lhs dilation: the sums in the documented order ------------------------------- */

/* The documented order in f32, as a naive loop: each output element adds, from +0 in
 * float, x * w for window positions in row-major order, then the group's input features,
 * skipping positions in padding and lhs-dilation holes; rounded as it goes. */
static void ref_conv_f32(const conv_case *c, const float *x, const float *w, float *out) {
    int64_t rank = c->n + 2;
    int64_t count = product(rank, c->odims);
    int64_t oidx[5] = {0};
    for (int64_t e = 0; e < count; e++) {
        int64_t b = oidx[c->opos[0]], z = oidx[c->opos[1]];
        int64_t fg = z / (c->OZ / c->G), bg = z / (c->OZ / c->BG);
        float sum = 0.0f;
        int64_t k[3] = {0};
        bool more = product(c->n, c->k_size) > 0;
        while (more) {
            int64_t iidx[5], kidx[5];
            bool inside = true;
            for (int64_t i = 0; i < c->n; i++) {
                int64_t u =
                    oidx[c->opos[2 + i]] * c->stride[i] - c->pad_lo[i] + k[i] * c->rhs_dil[i];
                if (u < 0 || u % c->lhs_dil[i] != 0 || u / c->lhs_dil[i] >= c->in_size[i])
                    inside = false;
                iidx[c->ipos[2 + i]] = inside ? u / c->lhs_dil[i] : 0;
                kidx[c->kpos[2 + i]] = c->rev[i] ? c->k_size[i] - 1 - k[i] : k[i];
            }
            for (int64_t kz = 0; inside && kz < c->KZ; kz++) {
                iidx[c->ipos[0]] = b + bg * c->OB;
                iidx[c->ipos[1]] = fg * c->KZ + kz;
                kidx[c->kpos[0]] = kz;
                kidx[c->kpos[1]] = z;
                float p = x[linear(rank, c->idims, iidx)] * w[linear(rank, c->kdims, kidx)];
                sum = sum + p;
            }
            more = next_index(c->n, c->k_size, k);
        }
        out[e] = sum;
        next_index(rank, c->odims, oidx);
    }
}

/* A random f32: mostly reals of every sign and size, some +-0, and (|non_finite|) some
 * infinities and NaNs. */
static float random_real(bool non_finite) {
    int64_t kind = rnd_in(0, 19);
    if (kind == 0) return 0.0f;
    if (kind == 1) return -0.0f;
    if (non_finite && kind == 2) return rnd_in(0, 1) ? INFINITY : -INFINITY;
    if (non_finite && kind == 3) return NAN;
    float v = (float)((double)(rnd() >> 11) / 9007199254740992.0 - 0.5);
    return kind == 4 ? v * 1e30f : v;
}

/* The interpreter against ref_conv_f32, bit for bit (NaN for NaN). */
static bool check_conv_order(const conv_case *c, bool non_finite) {
    cxla_module *m = NULL;
    cxla_instr *in = build_conv(c, CXLA_F32, CXLA_F32, CXLA_F32, &m);
    int64_t rank = c->n + 2;
    cxla_literal *l = random_literal(CXLA_F32, rank, c->idims, 0, 0);
    cxla_literal *r = random_literal(CXLA_F32, rank, c->kdims, 0, 0);
    float *x = cxla_literal_data(l), *w = cxla_literal_data(r);
    for (int64_t i = 0; i < cxla_literal_element_count(l); i++) x[i] = random_real(false);
    /* A few non-finite kernel elements at most, so that most sums stay finite. */
    for (int64_t i = 0; i < cxla_literal_element_count(r); i++)
        w[i] = random_real(non_finite && rnd_in(0, 3) == 0);
    cxla_literal *got = NULL;
    bool ok = false;
    cxla_status s = run_op(m, in, l, r, &got);
    if (s) {
        test_fail(__FILE__, __LINE__, "convolution failed: %s", cxla_status_message(s));
        cxla_status_free(s);
    } else {
        int64_t n = product(rank, c->odims);
        float *want = calloc((size_t)n + 1, sizeof(float));
        ref_conv_f32(c, x, w, want);
        const float *g = cxla_literal_data_const(got);
        ok = true;
        for (int64_t i = 0; i < n && ok; i++) {
            uint32_t a, b;
            memcpy(&a, &g[i], 4);
            memcpy(&b, &want[i], 4);
            ok = a == b || (isnan(g[i]) && isnan(want[i]));
            if (!ok)
                test_fail(__FILE__, __LINE__,
                          "convolution element %" PRId64 " is %.9g (0x%08x), want %.9g (0x%08x)", i,
                          (double)g[i], (unsigned)a, (double)want[i], (unsigned)b);
        }
        free(want);
    }
    if (!ok)
        for (int64_t i = 0; i < c->n; i++)
            fprintf(stderr,
                    "  dim %" PRId64 ": in %" PRId64 " k %" PRId64 " out %" PRId64
                    " stride %" PRId64 " pad %" PRId64 "_%" PRId64 " lhs_dil %" PRId64
                    " rhs_dil %" PRId64 " rev %d (G=%" PRId64 " BG=%" PRId64 ")\n",
                    i, c->in_size[i], c->k_size[i], c->out_size[i], c->stride[i], c->pad_lo[i],
                    c->pad_hi[i], c->lhs_dil[i], c->rhs_dil[i], (int)c->rev[i], c->G, c->BG);
    cxla_literal_free(got);
    cxla_literal_free(l);
    cxla_literal_free(r);
    cxla_module_destroy(m);
    return ok;
}

/* Convolutions with lhs dilation (odd and large, with strides, rhs dilation, padding
 * negative or wider than the window, groups, 0-D to 3-D) on random reals and signed zeros:
 * the interpreter skips the holes and keeps the documented sum order bit for bit; with infs
 * and NaNs in the kernel too (holes and padding never meet them). */
static void test_conv_lhs_dilation_order(void) {
    for (int it = 0; it < 800; it++) {
        conv_case c;
        random_conv_of(&c, rnd_in(0, 3), true);
        if (!check_conv_order(&c, it % 4 == 3)) break;
    }
}

/* A transposed convolution whose phase classes each span two im2col chunks (a class reads
 * up to 2x2 window positions of 256 features: 1024 columns, so 1024 rows a chunk, of its
 * ~1700) and the gemm's blocks: NHWC 2x40x40x256 with lhs dilation 2x3 and a 4x5 window,
 * features 256 -> 2; and the same in NCHW (the sums in a buffer of their own). */
static void test_conv_transposed_large(void) {
    conv_case c = {.n = 2, .G = 1, .BG = 1, .OB = 2, .IB = 2, .KZ = 256, .IZ = 256, .OZ = 2};
    int64_t lhs[2] = {2, 3}, k[2] = {4, 5};
    for (int i = 0; i < 2; i++) {
        c.in_size[i] = 40;
        c.k_size[i] = k[i];
        c.stride[i] = 1;
        c.lhs_dil[i] = lhs[i];
        c.rhs_dil[i] = 1;
        c.pad_lo[i] = k[i] - 1;
        c.pad_hi[i] = k[i] - 1 + (i == 1 ? 2 : 0);
        c.rev[i] = i == 0;
        c.out_size[i] = (40 - 1) * lhs[i] + 1 + c.pad_lo[i] + c.pad_hi[i] - k[i] + 1;
    }
    for (int layout = 0; layout < 2; layout++) {
        int64_t nhwc[4] = {0, 3, 1, 2}, nchw[4] = {0, 1, 2, 3}, hwio[4] = {2, 3, 0, 1};
        memcpy(c.ipos, layout ? nchw : nhwc, sizeof(nhwc));
        memcpy(c.kpos, hwio, sizeof(hwio));
        memcpy(c.opos, layout ? nchw : nhwc, sizeof(nhwc));
        c.idims[c.ipos[0]] = c.IB, c.idims[c.ipos[1]] = c.IZ;
        c.kdims[c.kpos[0]] = c.KZ, c.kdims[c.kpos[1]] = c.OZ;
        c.odims[c.opos[0]] = c.OB, c.odims[c.opos[1]] = c.OZ;
        for (int i = 0; i < 2; i++) {
            c.idims[c.ipos[2 + i]] = c.in_size[i];
            c.kdims[c.kpos[2 + i]] = c.k_size[i];
            c.odims[c.opos[2 + i]] = c.out_size[i];
        }
        CHECK(check_conv_order(&c, false));
        CHECK(check_conv(&c, CXLA_F32, CXLA_F32, CXLA_F32, -2, 2, 0));
    }
}

static void test_conv_errors(void) {
    conv_case c;
    random_conv(&c, 1);
    c.G = 1;
    c.BG = 1;
    cxla_module *m = NULL;
    cxla_instr *in = build_conv(&c, CXLA_F32, CXLA_F32, CXLA_F32, &m);
    set_int(in, CXLA_ATTR_FEATURE_GROUP_COUNT, 0);
    cxla_literal *l = random_literal(CXLA_F32, 3, c.idims, -1, 1);
    cxla_literal *r = random_literal(CXLA_F32, 3, c.kdims, -1, 1);
    cxla_literal *got = NULL;
    CHECK_ERROR_HAS(run_op(m, in, l, r, &got), "must be >= 1");
    set_int(in, CXLA_ATTR_FEATURE_GROUP_COUNT, 1);
    cxla_attr *w = (cxla_attr *)cxla_instr_attr(in, CXLA_ATTR_WINDOW);
    if (w) w->v.window.dims[0].size += 1;
    CHECK_ERROR_HAS(run_op(m, in, l, r, &got), "window size");
    CHECK(got == NULL);
    cxla_literal_free(l);
    cxla_literal_free(r);
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_dot_random_f32), TEST(test_dot_random_types), TEST(test_dot_blocked_shapes),
          TEST(test_dot_nan_inf), TEST(test_dot_errors), TEST(test_conv_random_f32),
          TEST(test_conv_random_types), TEST(test_conv_large), TEST(test_conv_tiled),
          TEST(test_conv_errors), TEST(test_conv_non_finite), TEST(test_dot_packed_nibble),
          TEST(test_conv_lhs_dilation_order), TEST(test_conv_transposed_large))
