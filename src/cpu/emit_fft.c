/* The emitter's fft kernel (emit_lib.h): FFT and IFFT of c64/c128, RFFT (f32 -> c64,
 * f64 -> c128) and IRFFT (back), over 1 to 3 dimensions, as src/interp/interp_fft.c
 * computes them: in complex double, a direct DFT for lengths up to 32, radix-2 for powers
 * of two and Bluestein's chirp-z otherwise, each line gathered into a buffer, the
 * dimensions transformed in the same order, each result rounded once. The twiddle, chirp
 * and Bluestein kernel tables are computed here with the interpreter's own arithmetic and
 * written into the kernel as exact hexadecimal constants, and the generated complex product
 * repeats C's (Annex G: the plain formula, and the recovery of infinities when both parts
 * come out NaN), so the results are the interpreter's bit for bit. The outer range runs
 * over the batch (the dimensions before the transformed ones); each batch element works in
 * its own part of the scratch memory. Lengths whose tables would pass MAX_TABLE doubles
 * stay with the interpreter. */
#include <complex.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/emit_lib.h"

enum { DIRECT_MAX = 32, MAX_TABLE = 1 << 17, MAX_PLANS = 4 };

typedef double complex cplx;

static cplx make_c(double re, double im) {
    double parts[2] = {re, im};
    cplx z;
    memcpy(&z, parts, sizeof(z));
    return z;
}

/* exp(-2 pi i k / n), as the interpreter's twiddle(). */
static cplx twiddle(int64_t k, int64_t n) {
    double a = -6.283185307179586476925286766559 * (double)k / (double)n;
    return make_c(cos(a), sin(a));
}

/* The interpreter's radix-2 transform, for the Bluestein kernel table. */
static void radix2(cplx *x, int64_t n, const cplx *tw) {
    for (int64_t i = 1, j = 0; i < n; i++) {
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            cplx t = x[i];
            x[i] = x[j];
            x[j] = t;
        }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
        int64_t half = len >> 1, step = n / len;
        for (int64_t s = 0; s < n; s += len)
            for (int64_t k = 0; k < half; k++) {
                cplx u = x[s + k], v = x[s + k + half] * tw[k * step];
                x[s + k] = u + v;
                x[s + k + half] = u - v;
            }
    }
}

static bool is_pow2(int64_t n) {
    return n > 0 && (n & (n - 1)) == 0;
}

typedef struct plan {
    int64_t n, m; /* m: Bluestein's convolution length */
    int kind;     /* 0 direct, 1 radix-2, 2 Bluestein */
} plan;

static plan plan_of(int64_t n) {
    plan p = {n, 0, 0};
    if (n <= DIRECT_MAX) return p;
    p.kind = is_pow2(n) ? 1 : 2;
    if (p.kind == 2) {
        p.m = 1;
        while (p.m < 2 * n - 1) p.m <<= 1;
    }
    return p;
}

/* Doubles of the tables of |p|, and of its work buffer. */
static int64_t table_doubles(plan p) {
    return p.kind == 0 ? 2 * p.n : p.kind == 1 ? p.n : p.m + 2 * p.n + 2 * p.m;
}

static int64_t work_doubles(plan p) {
    return p.kind == 0 ? 2 * p.n : p.kind == 2 ? 2 * p.m : 0;
}

typedef enum fft_kind { K_FFT, K_IFFT, K_RFFT, K_IRFFT } fft_kind;

typedef struct fft_form {
    fft_kind kind;
    int64_t rank, nlen, first, last, batch;
    int64_t in_block, out_block;
    int64_t xd[3], od[3]; /* the transformed dims of the operand and the result */
    plan plans[MAX_PLANS];
    int nplans;
    int64_t maxn, work, tables;
} fft_form;

static int plan_index(fft_form *f, int64_t n) {
    for (int i = 0; i < f->nplans; i++)
        if (f->plans[i].n == n) return i;
    if (f->nplans == MAX_PLANS) return -1;
    f->plans[f->nplans] = plan_of(n);
    plan p = f->plans[f->nplans];
    f->tables += table_doubles(p);
    if (work_doubles(p) > f->work) f->work = work_doubles(p);
    if (n > f->maxn) f->maxn = n;
    return f->nplans++;
}

static bool fft_form_of(const cxla_instr *instr, fft_form *f) {
    memset(f, 0, sizeof(*f));
    if (instr->operand_count != 1 || !cpu_lib_plain(instr) || instr->shape.type == CXLA_TUPLE)
        return false;
    const cxla_shape *xs = &instr->operands[0]->shape, *os = &instr->shape;
    const char *word = cxla_instr_word(instr, CXLA_ATTR_FFT_TYPE);
    if (!word) return false;
    if (strcmp(word, "FFT") == 0)
        f->kind = K_FFT;
    else if (strcmp(word, "IFFT") == 0)
        f->kind = K_IFFT;
    else if (strcmp(word, "RFFT") == 0)
        f->kind = K_RFFT;
    else if (strcmp(word, "IRFFT") == 0)
        f->kind = K_IRFFT;
    else
        return false;
    cxla_type it = xs->type, ot = os->type;
    bool ok = f->kind == K_RFFT
                  ? (it == CXLA_F32 && ot == CXLA_C64) || (it == CXLA_F64 && ot == CXLA_C128)
              : f->kind == K_IRFFT
                  ? (it == CXLA_C64 && ot == CXLA_F32) || (it == CXLA_C128 && ot == CXLA_F64)
                  : (it == CXLA_C64 || it == CXLA_C128) && ot == it;
    int64_t nlen = 0;
    const int64_t *len = cxla_instr_ints(instr, CXLA_ATTR_FFT_LENGTH, &nlen);
    if (!ok || !len || nlen < 1 || nlen > 3 || nlen > xs->rank || os->rank != xs->rank)
        return false;
    f->rank = xs->rank;
    f->nlen = nlen;
    f->first = xs->rank - nlen;
    f->last = xs->rank - 1;
    f->batch = 1;
    for (int64_t i = 0; i < f->first; i++) {
        if (xs->dims[i] != os->dims[i]) return false;
        f->batch *= xs->dims[i];
    }
    f->in_block = f->out_block = 1;
    for (int64_t i = 0; i < nlen; i++) {
        f->xd[i] = xs->dims[f->first + i];
        f->od[i] = os->dims[f->first + i];
        f->in_block *= f->xd[i];
        f->out_block *= f->od[i];
        /* The shapes the interpreter checks (fft_length against the dims). */
        bool lastd = i == nlen - 1;
        int64_t want = len[i];
        if (lastd && f->kind == K_RFFT) {
            if (f->xd[i] != len[i] || f->od[i] != (len[i] ? len[i] / 2 + 1 : 0)) return false;
        } else if (lastd && f->kind == K_IRFFT) {
            if (f->od[i] != want || f->xd[i] != (want ? want / 2 + 1 : f->xd[i])) return false;
        } else if (f->xd[i] != want || f->od[i] != want) {
            return false;
        }
    }
    if (f->batch * f->out_block == 0) return true; /* nothing to write */
    if (f->in_block == 0) return false;
    /* The plans, in the order the transforms use them. */
    bool ok_plans = true;
    for (int64_t i = 0; i < nlen; i++) {
        bool lastd = i == nlen - 1;
        int64_t n = f->kind == K_IRFFT && lastd ? f->od[i] : f->xd[i];
        if (n > 1 || (f->kind == K_IRFFT && lastd)) ok_plans = ok_plans && plan_index(f, n) >= 0;
    }
    return ok_plans && f->tables <= MAX_TABLE;
}

bool cpu_emit_fft_ok(const cxla_instr *instr) {
    fft_form f;
    return instr->opcode == CXLA_OP_FFT && fft_form_of(instr, &f);
}

/* ---- tables ---------------------------------------------------------------------------- */

static void put_table(cxla_strbuf *out, const char *name, const char *what, const cplx *v,
                      int64_t n) {
    cxla_strbuf_printf(out, "static const double %s_%s[%" PRId64 "] = {", name, what,
                       2 * n > 0 ? 2 * n : 1);
    for (int64_t i = 0; i < n; i++)
        cxla_strbuf_printf(out, "%s%a, %a%s", i % 3 == 0 ? "\n    " : "", creal(v[i]), cimag(v[i]),
                           i + 1 < n ? ", " : "");
    cxla_strbuf_puts(out, n ? "};\n" : "0};\n");
}

static cxla_status put_plan_tables(cxla_strbuf *out, const char *name, int index, plan p) {
    char what[32];
    int64_t count = p.kind == 0 ? p.n : p.kind == 1 ? p.n / 2 : 0;
    if (p.kind != 2) {
        cplx *tw = malloc((size_t)(count ? count : 1) * sizeof(cplx));
        if (!tw) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        for (int64_t k = 0; k < count; k++) tw[k] = twiddle(k, p.n);
        snprintf(what, sizeof what, "p%d_tw", index);
        put_table(out, name, what, tw, count);
        free(tw);
        return NULL;
    }
    int64_t n = p.n, m = p.m;
    cplx *tw = malloc((size_t)(m / 2) * sizeof(cplx)), *chirp = malloc((size_t)n * sizeof(cplx));
    cplx *kernel = malloc((size_t)m * sizeof(cplx));
    cxla_status s = NULL;
    if (!tw || !chirp || !kernel) {
        s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    } else {
        for (int64_t k = 0; k < m / 2; k++) tw[k] = twiddle(k, m);
        for (int64_t k = 0; k < n; k++) {
            int64_t r = (int64_t)(((uint64_t)k * (uint64_t)k) % (uint64_t)(2 * n));
            chirp[k] = twiddle(r, 2 * n);
        }
        for (int64_t t = 0; t < m; t++) kernel[t] = 0;
        kernel[0] = conj(chirp[0]);
        for (int64_t t = 1; t < n; t++) kernel[t] = kernel[m - t] = conj(chirp[t]);
        radix2(kernel, m, tw);
        for (int64_t t = 0; t < m; t++) kernel[t] /= (double)m;
        snprintf(what, sizeof what, "p%d_tw", index);
        put_table(out, name, what, tw, m / 2);
        snprintf(what, sizeof what, "p%d_chirp", index);
        put_table(out, name, what, chirp, n);
        snprintf(what, sizeof what, "p%d_kernel", index);
        put_table(out, name, what, kernel, m);
    }
    free(tw);
    free(chirp);
    free(kernel);
    return s;
}

/* ---- the helpers of the generated code --------------------------------------------------- */

static void put_helpers(cxla_strbuf *out, const char *N, const fft_form *f) {
    /* The complex product as C computes it for double complex (Annex G). */
    cxla_strbuf_printf(
        out,
        "static inline void %s_cmul(double a, double b, double c, double d, double *re, "
        "double *im) {\n"
        "    const double ac = a * c, bd = b * d, ad = a * d, bc = b * c;\n"
        "    double x = ac - bd, y = ad + bc;\n"
        "    if (isnan(x) && isnan(y)) {\n"
        "        int recalc = 0;\n"
        "        if (isinf(a) || isinf(b)) {\n"
        "            a = copysign(isinf(a) ? 1.0 : 0.0, a);\n"
        "            b = copysign(isinf(b) ? 1.0 : 0.0, b);\n"
        "            if (isnan(c)) c = copysign(0.0, c);\n"
        "            if (isnan(d)) d = copysign(0.0, d);\n"
        "            recalc = 1;\n"
        "        }\n"
        "        if (isinf(c) || isinf(d)) {\n"
        "            c = copysign(isinf(c) ? 1.0 : 0.0, c);\n"
        "            d = copysign(isinf(d) ? 1.0 : 0.0, d);\n"
        "            if (isnan(a)) a = copysign(0.0, a);\n"
        "            if (isnan(b)) b = copysign(0.0, b);\n"
        "            recalc = 1;\n"
        "        }\n"
        "        if (!recalc && (isinf(ac) || isinf(bd) || isinf(ad) || isinf(bc))) {\n"
        "            if (isnan(a)) a = copysign(0.0, a);\n"
        "            if (isnan(b)) b = copysign(0.0, b);\n"
        "            if (isnan(c)) c = copysign(0.0, c);\n"
        "            if (isnan(d)) d = copysign(0.0, d);\n"
        "            recalc = 1;\n"
        "        }\n"
        "        if (recalc) {\n"
        "            x = cxla_f64_from_bits(0x7ff0000000000000ull) * (a * c - b * d);\n"
        "            y = cxla_f64_from_bits(0x7ff0000000000000ull) * (a * d + b * c);\n"
        "        }\n"
        "    }\n"
        "    *re = x;\n"
        "    *im = y;\n"
        "}\n",
        N);
    bool any_radix2 = false, any_direct = false;
    for (int i = 0; i < f->nplans; i++) {
        any_radix2 = any_radix2 || f->plans[i].kind != 0;
        any_direct = any_direct || f->plans[i].kind == 0;
    }
    if (any_radix2)
        cxla_strbuf_printf(
            out,
            "/* In-place radix-2 forward FFT, interleaved (re, im); tw: exp(-2 pi i k/n), k < n/2. "
            "*/\n"
            "static void %s_radix2(double *x, int64_t n, const double *tw) {\n"
            "    for (int64_t i = 1, j = 0; i < n; i++) {\n"
            "        int64_t bit = n >> 1;\n"
            "        for (; j & bit; bit >>= 1) j ^= bit;\n"
            "        j ^= bit;\n"
            "        if (i < j) {\n"
            "            const double tr = x[2 * i], ti = x[2 * i + 1];\n"
            "            x[2 * i] = x[2 * j];\n"
            "            x[2 * i + 1] = x[2 * j + 1];\n"
            "            x[2 * j] = tr;\n"
            "            x[2 * j + 1] = ti;\n"
            "        }\n"
            "    }\n"
            "    for (int64_t len = 2; len <= n; len <<= 1) {\n"
            "        const int64_t half = len >> 1, step = n / len;\n"
            "        for (int64_t s = 0; s < n; s += len)\n"
            "            for (int64_t k = 0; k < half; k++) {\n"
            "                double *p = x + 2 * (s + k), *q = x + 2 * (s + k + half);\n"
            "                double vr, vi;\n"
            "                %s_cmul(q[0], q[1], tw[2 * k * step], tw[2 * k * step + 1], &vr, "
            "&vi);\n"
            "                const double ur = p[0], ui = p[1];\n"
            "                p[0] = ur + vr;\n"
            "                p[1] = ui + vi;\n"
            "                q[0] = ur - vr;\n"
            "                q[1] = ui - vi;\n"
            "            }\n"
            "    }\n"
            "}\n",
            N, N);
    if (any_direct)
        cxla_strbuf_printf(out,
                           "/* The direct DFT (twiddles indexed by jk mod n). */\n"
                           "static void %s_dft(double *x, int64_t n, const double *tw, double "
                           "*work) {\n"
                           "    for (int64_t k = 0; k < n; k++) {\n"
                           "        double sr = 0, si = 0;\n"
                           "        int64_t idx = 0;\n"
                           "        for (int64_t j = 0; j < n; j++) {\n"
                           "            double pr, pi;\n"
                           "            %s_cmul(x[2 * j], x[2 * j + 1], tw[2 * idx], tw[2 * idx + "
                           "1], &pr, &pi);\n"
                           "            sr = sr + pr;\n"
                           "            si = si + pi;\n"
                           "            idx += k;\n"
                           "            if (idx >= n) idx -= n;\n"
                           "        }\n"
                           "        work[2 * k] = sr;\n"
                           "        work[2 * k + 1] = si;\n"
                           "    }\n"
                           "    memcpy(x, work, (size_t)n * 2 * sizeof(double));\n"
                           "}\n",
                           N, N);
    for (int i = 0; i < f->nplans; i++) {
        if (f->plans[i].kind != 2) continue;
        cxla_strbuf_printf(
            out,
            "/* Bluestein's chirp-z transform of length %" PRId64 " (a convolution of %" PRId64
            "). */\n"
            "static void %s_blue%d(double *x, double *a) {\n"
            "    const int64_t n = %" PRId64 ", m = %" PRId64 ";\n"
            "    const double *chirp = %s_p%d_chirp, *kern = %s_p%d_kernel;\n"
            "    for (int64_t j = 0; j < n; j++)\n"
            "        %s_cmul(x[2 * j], x[2 * j + 1], chirp[2 * j], chirp[2 * j + 1], &a[2 * j], "
            "&a[2 * j + 1]);\n"
            "    for (int64_t j = n; j < m; j++) a[2 * j] = a[2 * j + 1] = 0;\n"
            "    %s_radix2(a, m, %s_p%d_tw);\n"
            "    for (int64_t t = 0; t < m; t++) {\n"
            "        double r, im;\n"
            "        %s_cmul(a[2 * t], a[2 * t + 1], kern[2 * t], kern[2 * t + 1], &r, &im);\n"
            "        a[2 * t] = r;\n"
            "        a[2 * t + 1] = -im;\n"
            "    }\n"
            "    %s_radix2(a, m, %s_p%d_tw);\n"
            "    for (int64_t k = 0; k < n; k++)\n"
            "        %s_cmul(a[2 * k], -a[2 * k + 1], chirp[2 * k], chirp[2 * k + 1], &x[2 * k], "
            "&x[2 * k + 1]);\n"
            "}\n",
            f->plans[i].n, f->plans[i].m, N, i, f->plans[i].n, f->plans[i].m, N, i, N, i, N, N, N,
            i, N, N, N, i, N);
    }
    /* The forward transform of plan |p| in place, and the inverse (scaled by 1/n). */
    cxla_strbuf_printf(out, "static void %s_forward(int p, double *x, double *work) {\n", N);
    cxla_strbuf_puts(out, "    (void)x;\n    (void)work;\n    switch (p) {\n");
    for (int i = 0; i < f->nplans; i++) {
        plan p = f->plans[i];
        if (p.kind == 0)
            cxla_strbuf_printf(out,
                               "    case %d: %s_dft(x, %" PRId64 ", %s_p%d_tw, work); break;\n", i,
                               N, p.n, N, i);
        else if (p.kind == 1)
            cxla_strbuf_printf(out, "    case %d: %s_radix2(x, %" PRId64 ", %s_p%d_tw); break;\n",
                               i, N, p.n, N, i);
        else
            cxla_strbuf_printf(out, "    case %d: %s_blue%d(x, work); break;\n", i, N, i);
    }
    cxla_strbuf_puts(out, "    default: break;\n    }\n}\n");
    cxla_strbuf_printf(out,
                       "static void %s_inverse(int p, int64_t n, double *x, double *work) {\n"
                       "    for (int64_t j = 0; j < n; j++) x[2 * j + 1] = -x[2 * j + 1];\n"
                       "    %s_forward(p, x, work);\n"
                       "    const double s = 1.0 / (double)n;\n"
                       "    for (int64_t j = 0; j < n; j++) {\n"
                       "        x[2 * j] = x[2 * j] * s;\n"
                       "        x[2 * j + 1] = -x[2 * j + 1] * s;\n"
                       "    }\n"
                       "}\n",
                       N, N);
    /* Every line along one dim of a block: gathered, transformed, put back. */
    cxla_strbuf_printf(out,
                       "static void %s_lines(double *buf, int64_t outer, int64_t n, int64_t inner, "
                       "int inverse, int p, double *line, double *work) {\n"
                       "    for (int64_t o = 0; o < outer; o++)\n"
                       "        for (int64_t in = 0; in < inner; in++) {\n"
                       "            double *base = buf + 2 * (o * n * inner + in);\n"
                       "            for (int64_t j = 0; j < n; j++) {\n"
                       "                line[2 * j] = base[2 * j * inner];\n"
                       "                line[2 * j + 1] = base[2 * j * inner + 1];\n"
                       "            }\n"
                       "            if (inverse)\n"
                       "                %s_inverse(p, n, line, work);\n"
                       "            else\n"
                       "                %s_forward(p, line, work);\n"
                       "            for (int64_t j = 0; j < n; j++) {\n"
                       "                base[2 * j * inner] = line[2 * j];\n"
                       "                base[2 * j * inner + 1] = line[2 * j + 1];\n"
                       "            }\n"
                       "        }\n"
                       "}\n",
                       N, N, N);
}

/* Emits the calls transforming dims [from, to) of a block of dims |d| (nlen of them). */
static void put_dims(cxla_strbuf *out, const char *N, fft_form *f, const char *buf,
                     const int64_t *d, int64_t from, int64_t to, bool inverse) {
    for (int64_t k = from; k < to; k++) {
        if (d[k] <= 1) continue; /* length 1: the identity either way */
        int64_t outer = 1, inner = 1;
        for (int64_t i = 0; i < k; i++) outer *= d[i];
        for (int64_t i = k + 1; i < f->nlen; i++) inner *= d[i];
        cxla_strbuf_printf(out,
                           "        %s_lines(%s, %" PRId64 ", %" PRId64 ", %" PRId64
                           ", %d, %d, line, work);\n",
                           N, buf, outer, d[k], inner, inverse ? 1 : 0, plan_index(f, d[k]));
    }
}

cxla_status cpu_emit_fft(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                         cpu_kernel_info *info) {
    fft_form f;
    if (!fft_form_of(instr, &f))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "cpu backend: cannot emit fft %s",
                          instr->name);
    const char *N = name;
    cxla_type it = instr->operands[0]->shape.type, ot = instr->shape.type;
    int64_t rows = f.batch * f.out_block > 0 ? f.batch : 0;
    bool real_in = f.kind == K_RFFT, real_out = f.kind == K_IRFFT;
    bool two = f.kind == K_RFFT || f.kind == K_IRFFT;
    int64_t line = 2 * (f.maxn > 0 ? f.maxn : 1), work = f.work > 0 ? f.work : 2;
    int64_t per = 2 * f.in_block + (two ? 2 * f.out_block : 0) + line + work;
    cpu_lib_head(instr, name, out);
    if (rows > 0) {
        for (int i = 0; i < f.nplans; i++)
            CXLA_RETURN_IF_ERROR(put_plan_tables(out, name, i, f.plans[i]));
        put_helpers(out, N, &f);
    }
    cpu_lib_open(name, rows > 0 ? rows : 1, out);
    bool c64_in = it == CXLA_C64 || it == CXLA_F32, c64_out = ot == CXLA_C64 || ot == CXLA_F32;
    cxla_strbuf_printf(out,
                       "    const %s *restrict x = in[0];\n"
                       "    %s *restrict y = out[0];\n"
                       "    double *const scratch = out[1];\n"
                       "    (void)x;\n    (void)y;\n    (void)scratch;\n"
                       "    for (int64_t b = begin; b < end && b < %" PRId64 "; b++) {\n"
                       "        double *buf = scratch + b * %" PRId64 ";\n"
                       "        double *obuf = buf + %" PRId64 ";\n"
                       "        double *line = obuf + %" PRId64 ";\n"
                       "        double *work = line + %" PRId64 ";\n"
                       "        (void)obuf;\n        (void)work;\n",
                       c64_in ? "float" : "double", c64_out ? "float" : "double", rows, per,
                       2 * f.in_block, two ? 2 * f.out_block : 0, line);
    if (rows == 0) {
        cxla_strbuf_puts(out, "    }\n}\n\n"); /* nothing to compute */
        if (info) info->range = 1;
        return NULL;
    }
    cxla_strbuf_printf(out, "        (void)%s_lines;\n        (void)%s_cmul;\n", N, N);
    /* The operand block, widened to complex double. */
    if (real_in)
        cxla_strbuf_printf(out,
                           "        for (int64_t i = 0; i < %" PRId64 "; i++) {\n"
                           "            buf[2 * i] = (double)x[b * %" PRId64 " + i];\n"
                           "            buf[2 * i + 1] = 0;\n"
                           "        }\n",
                           f.in_block, f.in_block);
    else
        cxla_strbuf_printf(out,
                           "        for (int64_t i = 0; i < %" PRId64
                           "; i++) buf[i] = (double)x[b * %" PRId64 " + i];\n",
                           2 * f.in_block, 2 * f.in_block);
    int64_t L = f.nlen - 1;
    const char *res = "buf";
    switch (f.kind) {
    case K_FFT:
    case K_IFFT: put_dims(out, N, &f, "buf", f.xd, 0, f.nlen, f.kind == K_IFFT); break;
    case K_RFFT: {
        put_dims(out, N, &f, "buf", f.xd, L, f.nlen, false);
        int64_t n = f.xd[L], h = f.od[L], lines = f.in_block / n;
        cxla_strbuf_printf(out,
                           "        for (int64_t l = 0; l < %" PRId64 "; l++)\n"
                           "            memcpy(obuf + 2 * l * %" PRId64 ", buf + 2 * l * %" PRId64
                           ", %" PRId64 " * sizeof(double));\n",
                           lines, h, n, 2 * h);
        put_dims(out, N, &f, "obuf", f.od, 0, L, false);
        res = "obuf";
        break;
    }
    case K_IRFFT: {
        put_dims(out, N, &f, "buf", f.xd, 0, L, true);
        int64_t h = f.xd[L], n = f.od[L], lines = f.in_block / h;
        /* Completed by Hermitian symmetry, then inverted. */
        cxla_strbuf_printf(out,
                           "        for (int64_t l = 0; l < %" PRId64 "; l++) {\n"
                           "            const double *src = buf + 2 * l * %" PRId64 ";\n"
                           "            double *dst = obuf + 2 * l * %" PRId64 ";\n"
                           "            for (int64_t k = 0; k < %" PRId64 "; k++) {\n"
                           "                if (k < %" PRId64 ") {\n"
                           "                    dst[2 * k] = src[2 * k];\n"
                           "                    dst[2 * k + 1] = src[2 * k + 1];\n"
                           "                } else {\n"
                           "                    dst[2 * k] = src[2 * (%" PRId64 " - k)];\n"
                           "                    dst[2 * k + 1] = -src[2 * (%" PRId64 " - k) + 1];\n"
                           "                }\n"
                           "            }\n"
                           "            %s_inverse(%d, %" PRId64 ", dst, work);\n"
                           "        }\n",
                           lines, h, n, n, h, n, n, N, plan_index(&f, n), n);
        res = "obuf";
        break;
    }
    }
    if (real_out)
        cxla_strbuf_printf(out,
                           "        for (int64_t i = 0; i < %" PRId64 "; i++) y[b * %" PRId64
                           " + i] = (%s)%s[2 * i];\n",
                           f.out_block, f.out_block, c64_out ? "float" : "double", res);
    else
        cxla_strbuf_printf(out,
                           "        for (int64_t i = 0; i < %" PRId64 "; i++) y[b * %" PRId64
                           " + i] = (%s)%s[i];\n",
                           2 * f.out_block, 2 * f.out_block, c64_out ? "float" : "double", res);
    cxla_strbuf_puts(out, "    }\n}\n\n");
    if (info) {
        info->range = rows > 0 ? rows : 1;
        info->scratch = (size_t)(rows > 0 ? rows : 1) * (size_t)per * 8;
        double lg = 1;
        for (int64_t l = 1; l < f.maxn; l *= 2) lg++;
        info->cost = (double)f.batch * (double)(f.in_block + f.out_block) * (16.0 + 8.0 * lg);
    }
    return NULL;
}
