/* The interpreter's fft (src/interp/interp_fft.c) against a naive O(N^2) DFT written here
 * from the definition, in double: FFT, IFFT (scaled by 1/N), RFFT (the first n/2+1
 * entries of the innermost dim) and IRFFT (the full spectrum rebuilt by Hermitian
 * symmetry, X[-k] = conj(X[k]), inverted, real part), on every length 1..200 in 1-D and
 * on random 2-D and 3-D shapes with batch dims, for c64/f32 and c128/f64.
 *
 * Modules are built in memory and the handler is called directly. */
#include <complex.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

/* A complex number from its parts (C11's CMPLX is missing under clang 14). */
static double complex make_c(double re, double im) {
    double parts[2] = {re, im};
    double complex z;
    memcpy(&z, parts, sizeof(z));
    return z;
}

static uint64_t rng = 0x2545F4914F6CDD1Du;

static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int64_t rnd_in(int64_t lo, int64_t hi) {
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static double rnd_real(void) {
    return (double)(rnd() >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

typedef enum kind { K_FFT, K_IFFT, K_RFFT, K_IRFFT } kind;
static const char *const kind_words[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

static int64_t product(int64_t n, const int64_t *d) {
    int64_t p = 1;
    for (int64_t i = 0; i < n; i++) p *= d[i];
    return p;
}

/* A module with one parameter of |xs| feeding fft of shape |os|. */
static cxla_instr *build(const cxla_shape *xs, const cxla_shape *os, kind k, int64_t nlen,
                         const int64_t *len, cxla_module **out_module) {
    cxla_module *m = NULL;
    cxla_computation *c = NULL;
    cxla_instr *p = NULL, *in = NULL;
    CHECK_OK(cxla_module_create("fft", &m));
    CHECK_OK(cxla_module_add_computation(m, "main", &c));
    CHECK_OK(cxla_computation_add_instr(c, CXLA_OP_PARAMETER, "p0", xs, 0, NULL, &p));
    CHECK_OK(cxla_computation_add_instr(c, CXLA_OP_FFT, "fft", os, 1, &p, &in));
    p->parameter_number = 0;
    c->root = in;
    c->is_entry = true;
    m->entry = c;
    cxla_attr w = {.id = CXLA_ATTR_FFT_TYPE,
                   .name = cxla_attr_get_info(CXLA_ATTR_FFT_TYPE)->name,
                   .kind = CXLA_ATTR_KIND_WORD};
    w.v.s = kind_words[k];
    CHECK_OK(cxla_instr_set_attr(in, &w));
    cxla_attr a = {.id = CXLA_ATTR_FFT_LENGTH,
                   .name = cxla_attr_get_info(CXLA_ATTR_FFT_LENGTH)->name,
                   .kind = CXLA_ATTR_KIND_INTS};
    int64_t *vals = cxla_arena_alloc_array(m->arena, (size_t)nlen, sizeof(int64_t));
    for (int64_t i = 0; i < nlen; i++) vals[i] = len[i];
    a.v.ints.count = nlen;
    a.v.ints.values = vals;
    CHECK_OK(cxla_instr_set_attr(in, &a));
    *out_module = m;
    return in;
}

static cxla_status run_op(cxla_module *m, const cxla_instr *in, const cxla_literal *x,
                          cxla_literal **out) {
    interp_ctx ctx;
    CXLA_RETURN_IF_ERROR(interp_ctx_init(&ctx, m, NULL));
    const cxla_literal *ops[1] = {x};
    interp_op_fn fn = interp_handler(in->opcode);
    cxla_status s =
        fn ? fn(&ctx, in, ops, out) : cxla_error(CXLA_STATUS_UNIMPLEMENTED, "no handler for fft");
    interp_ctx_deinit(&ctx);
    return s;
}

/* Naive n-D DFT over |nd| dims |n| of one batch: out[j] = scale * sum_k in[k] *
 * exp(sign 2 pi i sum_d j_d k_d / n_d), with each phase reduced exactly mod n_d. */
static void naive_dft(int64_t nd, const int64_t *n, const double complex *in, double complex *out,
                      int sign, double scale) {
    int64_t total = product(nd, n);
    int64_t j[3] = {0, 0, 0};
    for (int64_t oj = 0; oj < total; oj++) {
        int64_t r = oj;
        for (int64_t d = nd - 1; d >= 0; d--) {
            j[d] = r % n[d];
            r /= n[d];
        }
        double complex s = 0;
        int64_t k[3] = {0, 0, 0};
        for (int64_t ik = 0; ik < total; ik++) {
            int64_t q = ik;
            for (int64_t d = nd - 1; d >= 0; d--) {
                k[d] = q % n[d];
                q /= n[d];
            }
            double frac = 0;
            for (int64_t d = 0; d < nd; d++) frac += (double)((j[d] * k[d]) % n[d]) / (double)n[d];
            double a = sign * 6.283185307179586476925286766559 * frac;
            s += in[ik] * make_c(cos(a), sin(a));
        }
        out[oj] = s * scale;
    }
}

/* Runs one fft of kind |k| over |nlen| innermost dims |len| with |nb| batch dims |batch|,
 * wide (c128/f64) or not, on random data; compares with naive_dft. */
static void check_case(kind k, bool wide, int64_t nb, const int64_t *batch, int64_t nlen,
                       const int64_t *len) {
    int64_t rank = nb + nlen, xd[8], od[8];
    for (int64_t i = 0; i < nb; i++) xd[i] = od[i] = batch[i];
    for (int64_t i = 0; i < nlen; i++) xd[nb + i] = od[nb + i] = len[i];
    int64_t n_last = len[nlen - 1], h = n_last / 2 + 1;
    if (k == K_RFFT) od[rank - 1] = h;
    if (k == K_IRFFT) xd[rank - 1] = h;
    cxla_type ct = wide ? CXLA_C128 : CXLA_C64, rt = wide ? CXLA_F64 : CXLA_F32;
    cxla_shape xs = {.type = k == K_RFFT ? rt : ct, .rank = rank, .dims = xd};
    cxla_shape os = {.type = k == K_IRFFT ? rt : ct, .rank = rank, .dims = od};
    cxla_module *m = NULL;
    cxla_instr *in = build(&xs, &os, k, nlen, len, &m);
    cxla_literal *x = NULL, *got = NULL;
    CHECK_OK(cxla_literal_create(&xs, &x));
    if (!m || !x) goto out;
    unsigned char *xdata = cxla_literal_data(x);
    size_t xes = cxla_type_storage(xs.type);
    int64_t xcount = cxla_literal_element_count(x);
    for (int64_t i = 0; i < xcount; i++) {
        if (xs.type == ct)
            cxla_store_c128(ct, xdata + i * xes, rnd_real(), rnd_real());
        else
            cxla_store_f64(rt, xdata + i * xes, rnd_real());
    }
    CHECK_OK(run_op(m, in, x, &got));
    if (!got) goto out;
    CHECK_EQ_I64(cxla_literal_type(got), os.type);

    int64_t nbatch = product(nb, batch), nfull = product(nlen, len);
    int64_t xper = product(nlen, xd + nb), oper = product(nlen, od + nb);
    double complex *full = malloc((size_t)nfull * sizeof(double complex));
    double complex *ref = malloc((size_t)nfull * sizeof(double complex));
    const unsigned char *gdata = cxla_literal_data_const(got);
    size_t oes = cxla_type_storage(os.type);
    double tol = wide ? 1e-12 : 2e-6;
    for (int64_t b = 0; b < nbatch && full && ref; b++) {
        /* The full input of this batch, as complex double (IRFFT: extended). */
        for (int64_t f = 0; f < nfull; f++) {
            int64_t idx[3], r = f;
            for (int64_t d = nlen - 1; d >= 0; d--) {
                idx[d] = r % len[d];
                r /= len[d];
            }
            bool mirror = k == K_IRFFT && idx[nlen - 1] >= h;
            if (mirror) /* X[-k] = conj(X[k]) */
                for (int64_t d = 0; d < nlen; d++) idx[d] = (len[d] - idx[d]) % len[d];
            int64_t xi = 0;
            for (int64_t d = 0; d < nlen; d++) xi = xi * xd[nb + d] + idx[d];
            const unsigned char *p = xdata + (size_t)(b * xper + xi) * xes;
            double re, im = 0;
            if (xs.type == ct)
                cxla_load_c128(ct, p, &re, &im);
            else
                re = cxla_load_f64(rt, p);
            full[f] = mirror ? make_c(re, -im) : make_c(re, im);
        }
        bool inverse = k == K_IFFT || k == K_IRFFT;
        double scale = inverse ? 1.0 / (double)nfull : 1.0, l1 = 0;
        for (int64_t f = 0; f < nfull; f++) l1 += cabs(full[f]);
        naive_dft(nlen, len, full, ref, inverse ? 1 : -1, scale);
        double bound = tol * (l1 * scale + 1e-300);
        for (int64_t o = 0; o < oper; o++) {
            /* Position in the full array of output element o. */
            int64_t idx[3], r = o, fi = 0;
            for (int64_t d = nlen - 1; d >= 0; d--) {
                idx[d] = r % od[nb + d];
                r /= od[nb + d];
            }
            for (int64_t d = 0; d < nlen; d++) fi = fi * len[d] + idx[d];
            double re, im = 0;
            const unsigned char *p = gdata + (size_t)(b * oper + o) * oes;
            if (os.type == ct)
                cxla_load_c128(ct, p, &re, &im);
            else
                re = cxla_load_f64(rt, p);
            double wr = creal(ref[fi]), wi = k == K_IRFFT ? 0 : cimag(ref[fi]);
            if (!(fabs(re - wr) <= bound && fabs(im - wi) <= bound)) {
                test_fail(__FILE__, __LINE__,
                          "%s %s len=[%" PRId64 ",%" PRId64 ",%" PRId64 "] (nlen %" PRId64
                          ") batch %" PRId64 " element %" PRId64
                          ": (%.17g, %.17g), want (%.17g, %.17g), bound %.3g",
                          kind_words[k], wide ? "wide" : "narrow", len[0], nlen > 1 ? len[1] : 0,
                          nlen > 2 ? len[2] : 0, nlen, b, o, re, im, wr, wi, bound);
                b = nbatch;
                break;
            }
        }
    }
    free(full);
    free(ref);
out:
    cxla_literal_free(got);
    cxla_literal_free(x);
    cxla_module_destroy(m);
}

static void test_fft_1d_all_lengths(void) {
    for (int k = 0; k < 4; k++) {
        for (int64_t n = 1; n <= 200; n++) {
            int64_t batch[1] = {rnd_in(1, 2)};
            check_case((kind)k, (n + k) % 2 == 0, rnd_in(0, 1), batch, 1, &n);
        }
    }
}

static void test_fft_1d_both_widths(void) {
    static const int64_t lens[] = {1, 2, 3, 5, 7, 8, 12, 16, 31, 32, 33, 64, 97, 128, 256, 300};
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
            for (int w = 0; w < 2; w++) {
                int64_t batch[2] = {2, 3};
                check_case((kind)k, w, 2, batch, 1, &lens[i]);
            }
}

static void test_fft_nd_random(void) {
    for (int iter = 0; iter < 300; iter++) {
        kind k = (kind)rnd_in(0, 3);
        int64_t nlen = rnd_in(2, 3), len[3], batch[2], nb = rnd_in(0, 2);
        for (int64_t i = 0; i < nlen; i++) len[i] = rnd_in(1, nlen == 2 ? 20 : 8);
        for (int64_t i = 0; i < nb; i++) batch[i] = rnd_in(1, 3);
        check_case(k, rnd_in(0, 1), nb, batch, nlen, len);
    }
}

static void test_fft_zero_size(void) {
    for (int k = 0; k < 4; k++) {
        int64_t batch[1] = {0}, len[2] = {3, 4};
        check_case((kind)k, true, 1, batch, 2, len);
        int64_t len0[1] = {0};
        if (k == K_FFT || k == K_IFFT) check_case((kind)k, false, 1, batch, 1, len0);
    }
}

static void test_fft_errors(void) {
    CHECK_EQ_I64(interp_handler_count(CXLA_OP_FFT), 1);
    /* fft_length disagreeing with the operand. */
    int64_t xd[1] = {4}, len[1] = {5};
    cxla_shape xs = {.type = CXLA_C64, .rank = 1, .dims = xd};
    cxla_module *m = NULL;
    cxla_instr *in = build(&xs, &xs, K_FFT, 1, len, &m);
    cxla_literal *x = NULL, *got = NULL;
    CHECK_OK(cxla_literal_create(&xs, &x));
    const char *msg = CHECK_ERROR(run_op(m, in, x, &got));
    CHECK(strstr(msg, "fft_length") != NULL);
    CHECK(got == NULL);
    cxla_literal_free(x);
    cxla_module_destroy(m);
    /* RFFT of a complex operand. */
    int64_t od[1] = {3};
    len[0] = 4;
    cxla_shape os = {.type = CXLA_C64, .rank = 1, .dims = od};
    in = build(&xs, &os, K_RFFT, 1, len, &m);
    CHECK_OK(cxla_literal_create(&xs, &x));
    msg = CHECK_ERROR(run_op(m, in, x, &got));
    CHECK(strstr(msg, "RFFT") != NULL);
    cxla_literal_free(x);
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_fft_1d_all_lengths), TEST(test_fft_1d_both_widths), TEST(test_fft_nd_random),
          TEST(test_fft_zero_size), TEST(test_fft_errors))
