/* The emitter's cholesky, triangular-solve and batch-norm kernels (emit_lib.h), for f16,
 * bf16, f32 and f64: the interpreter's algorithms (src/interp/interp_linalg2.c) in the same order
 * of operations, in double, each result rounded once to its type, so the results are the
 * interpreter's bit for bit. The outer range runs over the batch of matrices; each matrix
 * works in its own part of the scratch memory (doubles). Cholesky and triangular-solve of
 * c64 and c128 work in pairs of doubles (cxla_c128) with the interpreter's complex forms:
 * its product (four products, each rounded: cxla_c128_mul), its conjugates and its division
 * (the real-divisor shortcut, then Smith's scaling: cxla_la_div below, which is not C's nor
 * cxla_c128_div), so they too are its results bit for bit. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cpu/emit_lib.h"

static bool real_type(cxla_type t) {
    return t == CXLA_F16 || t == CXLA_BF16 || t == CXLA_F32 || t == CXLA_F64;
}

/* The C expression loading element |at| of |arr| (type |t|) as a double, and storing |v|. */
static void load_expr(cxla_strbuf *out, cxla_type t, const char *arr, const char *at) {
    if (t == CXLA_F64)
        cxla_strbuf_printf(out, "%s[%s]", arr, at);
    else if (t == CXLA_F32)
        cxla_strbuf_printf(out, "(double)%s[%s]", arr, at);
    else
        cxla_strbuf_printf(out, "(double)cxla_ld_%s(%s[%s])", cxla_type_name(t), arr, at);
}

static void store_expr(cxla_strbuf *out, cxla_type t, const char *v) {
    if (t == CXLA_F64)
        cxla_strbuf_puts(out, v);
    else if (t == CXLA_F32)
        cxla_strbuf_printf(out, "(float)(%s)", v);
    else
        cxla_strbuf_printf(out, "cxla_st_%s_d(%s)", cxla_type_name(t), v);
}

static const char *held(cxla_type t) {
    return cpu_emit_stype(t);
}

static bool complex_type(cxla_type t) {
    return t == CXLA_C64 || t == CXLA_C128;
}

/* The helpers of the complex kernels, once per translation unit: interp_linalg2.c's c_div
 * and c_conj, in double; its products rounded one by one as cxla_c128_mul rounds them. */
static void complex_helpers(cxla_strbuf *out) {
    cxla_strbuf_puts(out, "#ifndef CXLA_LINALG_COMPLEX\n"
                          "#define CXLA_LINALG_COMPLEX 1\n"
                          "static inline cxla_c128 cxla_la_conj(cxla_c128 a) {\n"
                          "    return cxla_c128_make(a.re, -a.im);\n"
                          "}\n"
                          "static inline cxla_c128 cxla_la_div(cxla_c128 a, cxla_c128 b) {\n"
                          "    double r, den, p, q;\n"
                          "    if (b.im == 0) return cxla_c128_make(a.re / b.re, a.im / b.re);\n"
                          "    if (fabs(b.re) >= fabs(b.im)) {\n"
                          "        r = b.im / b.re;\n"
                          "        den = b.im * r;\n"
                          "        CXLA_ROUNDED(double, den);\n"
                          "        den = b.re + den;\n"
                          "        p = a.im * r;\n"
                          "        q = a.re * r;\n"
                          "        CXLA_ROUNDED(double, p);\n"
                          "        CXLA_ROUNDED(double, q);\n"
                          "        return cxla_c128_make((a.re + p) / den, (a.im - q) / den);\n"
                          "    }\n"
                          "    r = b.re / b.im;\n"
                          "    den = b.re * r;\n"
                          "    CXLA_ROUNDED(double, den);\n"
                          "    den = den + b.im;\n"
                          "    p = a.re * r;\n"
                          "    q = a.im * r;\n"
                          "    CXLA_ROUNDED(double, p);\n"
                          "    CXLA_ROUNDED(double, q);\n"
                          "    return cxla_c128_make((p + a.im) / den, (q - a.re) / den);\n"
                          "}\n"
                          "#endif\n");
}

/* Element |at| of |arr| (c64 or c128) as a cxla_c128, and a cxla_c128 |v| stored as |t|. */
static void cload_expr(cxla_strbuf *out, cxla_type t, const char *arr, const char *at) {
    if (t == CXLA_C128)
        cxla_strbuf_printf(out, "%s[%s]", arr, at);
    else
        cxla_strbuf_printf(out, "cxla_c128_make((double)%s[%s].re, (double)%s[%s].im)", arr, at,
                           arr, at);
}

static void cstore_expr(cxla_strbuf *out, cxla_type t, const char *v) {
    if (t == CXLA_C128)
        cxla_strbuf_puts(out, v);
    else
        cxla_strbuf_printf(out, "cxla_c64_make((float)(%s).re, (float)(%s).im)", v, v);
}

/* ---- cholesky ------------------------------------------------------------------------------ */

static bool cholesky_ok(const cxla_instr *instr) {
    if (instr->operand_count != 1 || !cpu_lib_plain(instr)) return false;
    const cxla_shape *s = &instr->operands[0]->shape;
    return (real_type(s->type) || complex_type(s->type)) && s->rank >= 2 &&
           s->dims[s->rank - 1] == s->dims[s->rank - 2] && instr->shape.type == s->type;
}

/* Complex: interp_linalg2.c's cholesky_lower over pairs of doubles. */
static cxla_status emit_cholesky_complex(const cxla_instr *instr, const char *name,
                                         cxla_strbuf *out, cpu_kernel_info *info) {
    const cxla_shape *s = &instr->operands[0]->shape;
    cxla_type t = s->type;
    bool lower = cxla_instr_bool(instr, CXLA_ATTR_LOWER);
    int64_t n = s->dims[s->rank - 1], mat = n * n;
    int64_t batch = mat ? cpu_lib_count(s) / mat : 0;
    complex_helpers(out);
    cpu_lib_head(instr, name, out);
    cpu_lib_open(name, batch > 0 ? batch : 1, out);
    cxla_strbuf_printf(out,
                       "    const %s *restrict x = in[0];\n"
                       "    %s *restrict y = out[0];\n"
                       "    cxla_c128 *const scratch = out[1];\n"
                       "    (void)x;\n    (void)y;\n    (void)scratch;\n"
                       "    for (int64_t b = begin; b < end && b < %" PRId64 "; b++) {\n"
                       "        cxla_c128 *restrict a = scratch + b * %" PRId64 ";\n"
                       "        cxla_c128 *restrict l = a + %" PRId64 ";\n"
                       "        const int64_t at = b * %" PRId64 ";\n",
                       held(t), held(t), batch, 2 * mat, mat, mat);
    /* upper: transposed (not conjugated) in and out, as the interpreter does. */
    cxla_strbuf_printf(out,
                       "        for (int64_t i = 0; i < %" PRId64 "; i++)\n"
                       "            for (int64_t j = 0; j < %" PRId64 "; j++) a[i * %" PRId64
                       " + j] = ",
                       n, n, n);
    char idx[96];
    snprintf(idx, sizeof idx, "at + %s * %" PRId64 " + %s", lower ? "i" : "j", n,
             lower ? "j" : "i");
    cload_expr(out, t, "x", idx);
    cxla_strbuf_puts(out, ";\n");
    cxla_strbuf_printf(
        out,
        "        int error = 0;\n"
        "        for (int64_t i = 0; i < %" PRId64 "; i++) l[i] = cxla_c128_make(0, 0);\n"
        "        for (int64_t j = 0; j < %" PRId64 "; j++) {\n"
        "            cxla_c128 d = a[j * %" PRId64 " + j];\n"
        "            for (int64_t k = 0; k < j; k++)\n"
        "                d = cxla_c128_sub(d, cxla_c128_mul(l[j * %" PRId64
        " + k], cxla_la_conj(l[j * %" PRId64 " + k])));\n"
        "            const double s = sqrt(d.re);\n"
        "            const cxla_c128 sv = cxla_c128_make(s, 0);\n"
        "            if (isnan(s)) error = 1;\n"
        "            /* A last block of one column (n = 128k + 1) takes sqrt directly. */\n"
        "            l[j * %" PRId64 " + j] = j == %" PRId64 " && %d ? sv : cxla_la_div(d, sv);\n"
        "            for (int64_t r = j + 1; r < %" PRId64 "; r++) {\n"
        "                cxla_c128 v = a[r * %" PRId64 " + j];\n"
        "                for (int64_t k = 0; k < j; k++)\n"
        "                    v = cxla_c128_sub(v, cxla_c128_mul(l[r * %" PRId64
        " + k], cxla_la_conj(l[j * %" PRId64 " + k])));\n"
        "                l[r * %" PRId64 " + j] = cxla_la_div(v, sv);\n"
        "            }\n"
        "        }\n"
        "        /* Not positive definite: the whole matrix is (NaN, 0). */\n"
        "        if (error)\n"
        "            for (int64_t i = 0; i < %" PRId64 "; i++)\n"
        "                l[i] = cxla_c128_make(cxla_f64_from_bits(0x7ff8000000000000ull), 0);\n",
        mat, n, n, n, n, n, n - 1, n > 0 && (n - 1) % 128 == 0 ? 1 : 0, n, n, n, n, n, mat);
    cxla_strbuf_printf(out,
                       "        for (int64_t i = 0; i < %" PRId64 "; i++)\n"
                       "            for (int64_t j = 0; j < %" PRId64 "; j++) y[at + i * %" PRId64
                       " + j] = ",
                       n, n, n);
    snprintf(idx, sizeof idx, "l[%s * %" PRId64 " + %s]", lower ? "i" : "j", n, lower ? "j" : "i");
    cstore_expr(out, t, idx);
    cxla_strbuf_puts(out, ";\n    }\n}\n\n");
    if (info) {
        info->range = batch > 0 ? batch : 1;
        info->scratch = (size_t)(batch > 0 ? batch : 1) * 2 * (size_t)(mat ? mat : 1) * 16;
        info->cost = (double)batch * ((double)mat * 32.0 + 4.0 * (double)mat * (double)n);
    }
    return NULL;
}

static cxla_status emit_cholesky(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                 cpu_kernel_info *info) {
    const cxla_shape *s = &instr->operands[0]->shape;
    cxla_type t = s->type;
    if (complex_type(t)) return emit_cholesky_complex(instr, name, out, info);
    bool lower = cxla_instr_bool(instr, CXLA_ATTR_LOWER);
    int64_t n = s->dims[s->rank - 1], mat = n * n;
    int64_t batch = mat ? cpu_lib_count(s) / mat : 0;
    cpu_lib_head(instr, name, out);
    cpu_lib_open(name, batch > 0 ? batch : 1, out);
    cxla_strbuf_printf(out,
                       "    const %s *restrict x = in[0];\n"
                       "    %s *restrict y = out[0];\n"
                       "    double *const scratch = out[1];\n"
                       "    (void)x;\n    (void)y;\n    (void)scratch;\n"
                       "    for (int64_t b = begin; b < end && b < %" PRId64 "; b++) {\n"
                       "        double *restrict a = scratch + b * %" PRId64 ";\n"
                       "        double *restrict l = a + %" PRId64 ";\n"
                       "        const int64_t at = b * %" PRId64 ";\n",
                       held(t), held(t), batch, 2 * mat, mat, mat);
    /* upper: transposed (not conjugated) in and out, as the interpreter does. */
    cxla_strbuf_printf(out,
                       "        for (int64_t i = 0; i < %" PRId64 "; i++)\n"
                       "            for (int64_t j = 0; j < %" PRId64 "; j++) a[i * %" PRId64
                       " + j] = ",
                       n, n, n);
    char idx[96];
    snprintf(idx, sizeof idx, "at + %s * %" PRId64 " + %s", lower ? "i" : "j", n,
             lower ? "j" : "i");
    load_expr(out, t, "x", idx);
    cxla_strbuf_puts(out, ";\n");
    cxla_strbuf_printf(
        out,
        "        int error = 0;\n"
        "        for (int64_t i = 0; i < %" PRId64 "; i++) l[i] = 0.0;\n"
        "        for (int64_t j = 0; j < %" PRId64 "; j++) {\n"
        "            double d = a[j * %" PRId64 " + j];\n"
        "            for (int64_t k = 0; k < j; k++) d = d - l[j * %" PRId64
        " + k] * l[j * %" PRId64 " + k];\n"
        "            const double s = sqrt(d);\n"
        "            if (isnan(s)) error = 1;\n"
        "            /* A last block of one column (n = 128k + 1) takes sqrt directly. */\n"
        "            l[j * %" PRId64 " + j] = j == %" PRId64 " && %d ? s : d / s;\n"
        "            for (int64_t r = j + 1; r < %" PRId64 "; r++) {\n"
        "                double v = a[r * %" PRId64 " + j];\n"
        "                for (int64_t k = 0; k < j; k++) v = v - l[r * %" PRId64
        " + k] * l[j * %" PRId64 " + k];\n"
        "                l[r * %" PRId64 " + j] = v / s;\n"
        "            }\n"
        "        }\n"
        "        /* Not positive definite: the whole matrix is NaN. */\n"
        "        if (error)\n"
        "            for (int64_t i = 0; i < %" PRId64
        "; i++) l[i] = cxla_f64_from_bits(0x7ff8000000000000ull);\n",
        mat, n, n, n, n, n, n - 1, n > 0 && (n - 1) % 128 == 0 ? 1 : 0, n, n, n, n, n, mat);
    cxla_strbuf_printf(out,
                       "        for (int64_t i = 0; i < %" PRId64 "; i++)\n"
                       "            for (int64_t j = 0; j < %" PRId64 "; j++) y[at + i * %" PRId64
                       " + j] = ",
                       n, n, n);
    snprintf(idx, sizeof idx, "l[%s * %" PRId64 " + %s]", lower ? "i" : "j", n, lower ? "j" : "i");
    store_expr(out, t, idx);
    cxla_strbuf_puts(out, ";\n    }\n}\n\n");
    if (info) {
        info->range = batch > 0 ? batch : 1;
        info->scratch = (size_t)(batch > 0 ? batch : 1) * 2 * (size_t)(mat ? mat : 1) * 8;
        info->cost = (double)batch * ((double)mat * 16.0 + (double)mat * (double)n);
    }
    return NULL;
}

/* ---- triangular-solve ---------------------------------------------------------------------- */

typedef struct trsm_form {
    bool left, lower, unit;
    int trans; /* 0 none, 1 transpose, 2 adjoint (the same for real types) */
    int64_t m, rows, cols, batch;
} trsm_form;

static bool trsm_form_of(const cxla_instr *instr, trsm_form *f) {
    if (instr->operand_count != 2 || !cpu_lib_plain(instr)) return false;
    const cxla_shape *as = &instr->operands[0]->shape, *bs = &instr->operands[1]->shape;
    if (!(real_type(as->type) || complex_type(as->type)) || bs->type != as->type ||
        instr->shape.type != as->type || as->rank < 2 || bs->rank != as->rank ||
        as->dims[as->rank - 1] != as->dims[as->rank - 2])
        return false;
    for (int64_t i = 0; i + 2 < as->rank; i++)
        if (as->dims[i] != bs->dims[i]) return false;
    f->left = cxla_instr_bool(instr, CXLA_ATTR_LEFT_SIDE);
    f->lower = cxla_instr_bool(instr, CXLA_ATTR_LOWER);
    f->unit = cxla_instr_bool(instr, CXLA_ATTR_UNIT_DIAGONAL);
    const char *t = cxla_instr_word(instr, CXLA_ATTR_TRANSPOSE_A);
    f->trans = 0;
    if (t && strcmp(t, "TRANSPOSE") == 0)
        f->trans = 1;
    else if (t && strcmp(t, "ADJOINT") == 0)
        f->trans = 2;
    else if (t && strcmp(t, "NO_TRANSPOSE") != 0)
        return false;
    f->m = as->dims[as->rank - 1];
    f->rows = bs->dims[bs->rank - 2];
    f->cols = bs->dims[bs->rank - 1];
    if ((f->left ? f->rows : f->cols) != f->m) return false;
    f->batch = 1;
    for (int64_t i = 0; i + 2 < bs->rank; i++) f->batch *= bs->dims[i];
    if (f->rows * f->cols == 0) f->batch = 0;
    return true;
}

/* Complex: the interpreter's substitutions over pairs of doubles; ADJOINT conjugates. */
static cxla_status emit_trsm_complex(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                     cpu_kernel_info *info) {
    trsm_form f;
    trsm_form_of(instr, &f);
    cxla_type t = instr->shape.type;
    int64_t m = f.m, amat = m * m, bmat = f.rows * f.cols, cols = f.cols;
    bool tlower = f.lower != (f.trans != 0);
    complex_helpers(out);
    cpu_lib_head(instr, name, out);
    cpu_lib_open(name, f.batch > 0 ? f.batch : 1, out);
    cxla_strbuf_printf(out,
                       "    const %s *restrict A = in[0];\n"
                       "    const %s *restrict B = in[1];\n"
                       "    %s *restrict y = out[0];\n"
                       "    cxla_c128 *const scratch = out[1];\n"
                       "    (void)A;\n    (void)B;\n    (void)y;\n    (void)scratch;\n"
                       "    for (int64_t bi = begin; bi < end && bi < %" PRId64 "; bi++) {\n"
                       "        cxla_c128 *restrict tm = scratch + bi * %" PRId64 ";\n"
                       "        cxla_c128 *restrict x = tm + %" PRId64 ";\n"
                       "        const int64_t at = bi * %" PRId64 ", bt = bi * %" PRId64 ";\n"
                       "        /* tm = op(the triangle of a). */\n"
                       "        for (int64_t i = 0; i < %" PRId64 "; i++)\n"
                       "            for (int64_t j = 0; j < %" PRId64 "; j++) {\n"
                       "                cxla_c128 v = j %s i ? ",
                       held(t), held(t), held(t), f.batch, amat + bmat, amat, amat, bmat, m, m,
                       f.lower ? "<=" : ">=");
    char at[64], last[48], mstr[24];
    snprintf(at, sizeof at, "at + i * %" PRId64 " + j", m);
    snprintf(last, sizeof last, "%" PRId64 " - 1 - s", m);
    snprintf(mstr, sizeof mstr, "%" PRId64, m);
    cload_expr(out, t, "A", at);
    cxla_strbuf_printf(out,
                       " : cxla_c128_make(0, 0);\n"
                       "%s"
                       "                tm[%s * %" PRId64 " + %s] = %s;\n"
                       "            }\n"
                       "        for (int64_t i = 0; i < %" PRId64 "; i++) x[i] = ",
                       f.unit ? "                if (i == j) v = cxla_c128_make(1, 0);\n" : "",
                       f.trans == 0 ? "i" : "j", m, f.trans == 0 ? "j" : "i",
                       f.trans == 2 ? "cxla_la_conj(v)" : "v", bmat);
    cload_expr(out, t, "B", "bt + i");
    cxla_strbuf_puts(out, ";\n");
    if (f.left) {
        cxla_strbuf_printf(out,
                           "        /* tm x = b, column by column. */\n"
                           "        for (int64_t c = 0; c < %" PRId64 "; c++)\n"
                           "            for (int64_t s = 0; s < %" PRId64 "; s++) {\n"
                           "                const int64_t i = %s;\n"
                           "                cxla_c128 v = x[i * %" PRId64 " + c];\n"
                           "                for (int64_t k = %s; k < %s; k++)\n"
                           "                    v = cxla_c128_sub(v, cxla_c128_mul(tm[i * %" PRId64
                           " + k], x[k * %" PRId64 " + c]));\n"
                           "                x[i * %" PRId64 " + c] = cxla_la_div(v, tm[i * %" PRId64
                           " + i]);\n"
                           "            }\n",
                           cols, m, tlower ? "s" : last, cols, tlower ? "0" : "i + 1",
                           tlower ? "i" : mstr, m, cols, cols, m);
    } else {
        cxla_strbuf_printf(
            out,
            "        /* x tm = b, row by row. */\n"
            "        for (int64_t r = 0; r < %" PRId64 "; r++) {\n"
            "            cxla_c128 *xr = x + r * %" PRId64 ";\n"
            "            for (int64_t s = 0; s < %" PRId64 "; s++) {\n"
            "                const int64_t j = %s;\n"
            "                cxla_c128 v = xr[j];\n"
            "                for (int64_t k = %s; k < %s; k++)\n"
            "                    v = cxla_c128_sub(v, cxla_c128_mul(xr[k], tm[k * %" PRId64
            " + j]));\n"
            "                xr[j] = cxla_la_div(v, tm[j * %" PRId64 " + j]);\n"
            "            }\n"
            "        }\n",
            f.rows, cols, m, tlower ? last : "s", tlower ? "j + 1" : "0", tlower ? mstr : "j", m,
            m);
    }
    cxla_strbuf_printf(out, "        for (int64_t i = 0; i < %" PRId64 "; i++) y[bt + i] = ", bmat);
    cstore_expr(out, t, "x[i]");
    cxla_strbuf_puts(out, ";\n    }\n}\n\n");
    if (info) {
        info->range = f.batch > 0 ? f.batch : 1;
        info->scratch = (size_t)(f.batch > 0 ? f.batch : 1) * (size_t)(amat + bmat + 1) * 16;
        info->cost =
            (double)f.batch * ((double)(amat + 2 * bmat) * 16.0 + 4.0 * (double)bmat * (double)m);
    }
    return NULL;
}

static cxla_status emit_trsm(const cxla_instr *instr, const char *name, cxla_strbuf *whole,
                             cpu_kernel_info *info) {
    if (complex_type(instr->shape.type)) return emit_trsm_complex(instr, name, whole, info);
    /* The body is written with "@M" for the side of a, replaced by its value at the end. */
    cxla_strbuf text;
    cxla_strbuf_init(&text);
    cxla_strbuf *out = &text;
    trsm_form f;
    trsm_form_of(instr, &f);
    cxla_type t = instr->shape.type;
    int64_t m = f.m, amat = m * m, bmat = f.rows * f.cols, cols = f.cols;
    /* op(a) is lower triangular when exactly one of lower and a transpose holds. */
    bool tlower = f.lower != (f.trans != 0);
    cpu_lib_head(instr, name, whole);
    cpu_lib_open(name, f.batch > 0 ? f.batch : 1, whole);
    cxla_strbuf_printf(out,
                       "    const %s *restrict A = in[0];\n"
                       "    const %s *restrict B = in[1];\n"
                       "    %s *restrict y = out[0];\n"
                       "    double *const scratch = out[1];\n"
                       "    (void)A;\n    (void)B;\n    (void)y;\n    (void)scratch;\n"
                       "    for (int64_t bi = begin; bi < end && bi < %" PRId64 "; bi++) {\n"
                       "        double *restrict tm = scratch + bi * %" PRId64 ";\n"
                       "        double *restrict x = tm + %" PRId64 ";\n"
                       "        const int64_t at = bi * %" PRId64 ", bt = bi * %" PRId64 ";\n"
                       "        /* tm = op(the triangle of a). */\n"
                       "        for (int64_t i = 0; i < %" PRId64 "; i++)\n"
                       "            for (int64_t j = 0; j < %" PRId64 "; j++) {\n"
                       "                double v = j %s i ? ",
                       held(t), held(t), held(t), f.batch, amat + bmat, amat, amat, bmat, m, m,
                       f.lower ? "<=" : ">=");
    load_expr(out, t, "A", "at + i * @M + j");
    cxla_strbuf_printf(out,
                       " : 0.0;\n"
                       "%s"
                       "                tm[%s] = v;\n"
                       "            }\n"
                       "        for (int64_t i = 0; i < %" PRId64 "; i++) x[i] = ",
                       f.unit ? "                if (i == j) v = 1.0;\n" : "",
                       f.trans == 0 ? "i * @M + j" : "j * @M + i", bmat);
    load_expr(out, t, "B", "bt + i");
    cxla_strbuf_puts(out, ";\n");
    if (f.left) {
        cxla_strbuf_printf(out,
                           "        /* tm x = b, column by column. */\n"
                           "        for (int64_t c = 0; c < %" PRId64 "; c++)\n"
                           "            for (int64_t s = 0; s < @M; s++) {\n"
                           "                const int64_t i = %s;\n"
                           "                double v = x[i * %" PRId64 " + c];\n"
                           "                for (int64_t k = %s; k < %s; k++) v = v - tm[i * @M + "
                           "k] * x[k * %" PRId64 " + c];\n"
                           "                x[i * %" PRId64 " + c] = v / tm[i * @M + i];\n"
                           "            }\n",
                           cols, tlower ? "s" : "@M - 1 - s", cols, tlower ? "0" : "i + 1",
                           tlower ? "i" : "@M", cols, cols);
    } else {
        cxla_strbuf_printf(
            out,
            "        /* x tm = b, row by row. */\n"
            "        for (int64_t r = 0; r < %" PRId64 "; r++) {\n"
            "            double *xr = x + r * %" PRId64 ";\n"
            "            for (int64_t s = 0; s < @M; s++) {\n"
            "                const int64_t j = %s;\n"
            "                double v = xr[j];\n"
            "                for (int64_t k = %s; k < %s; k++) v = v - xr[k] * tm[k * @M + j];\n"
            "                xr[j] = v / tm[j * @M + j];\n"
            "            }\n"
            "        }\n",
            f.rows, cols, tlower ? "@M - 1 - s" : "s", tlower ? "j + 1" : "0", tlower ? "@M" : "j");
    }
    cxla_strbuf_printf(out, "        for (int64_t i = 0; i < %" PRId64 "; i++) y[bt + i] = ", bmat);
    store_expr(out, t, "x[i]");
    cxla_strbuf_puts(out, ";\n    }\n}\n\n");
    char side[32];
    snprintf(side, sizeof side, "%" PRId64, m);
    for (size_t i = 0; text.data && i < text.len; i++) {
        if (text.data[i] == '@' && text.data[i + 1] == 'M') {
            cxla_strbuf_puts(whole, side);
            i++;
        } else {
            cxla_strbuf_putc(whole, text.data[i]);
        }
    }
    if (text.failed) whole->failed = true;
    cpu_emit_buf_free(&text);
    if (info) {
        info->range = f.batch > 0 ? f.batch : 1;
        info->scratch = (size_t)(f.batch > 0 ? f.batch : 1) * (size_t)(amat + bmat + 1) * 8;
        info->cost = (double)f.batch * ((double)(amat + 2 * bmat) * 8.0 + (double)bmat * (double)m);
    }
    return NULL;
}

/* ---- batch-norm-training, -inference, -grad ------------------------------------------------
 *
 * Per feature, as the interpreter: the mean and biased variance in two passes in double,
 * then y = (x - mean) * (1 / sqrt(var + eps)) * scale + offset; the gradients from the sums
 * of dy and dy (x - mean). Features are independent: the outer range runs over them. */

typedef struct bn_form {
    int64_t outer, features, inner;
    double eps;
} bn_form;

static bool bn_form_of(const cxla_instr *instr, bn_form *f) {
    cxla_opcode op = instr->opcode;
    int64_t want = op == CXLA_OP_BATCH_NORM_TRAINING ? 3 : 5;
    if (instr->operand_count != want || !cpu_lib_plain(instr)) return false;
    const cxla_shape *x = &instr->operands[0]->shape;
    const cxla_attr *eps = cxla_instr_attr(instr, CXLA_ATTR_EPSILON);
    int64_t fi = -1;
    if (!real_type(x->type) || x->rank < 1 || !eps ||
        !cxla_instr_int(instr, CXLA_ATTR_FEATURE_INDEX, &fi) || fi < 0 || fi >= x->rank)
        return false;
    f->eps = (double)(float)eps->v.f; /* XLA keeps epsilon as an f32 */
    f->features = x->dims[fi];
    f->outer = f->inner = 1;
    for (int64_t i = 0; i < fi; i++) f->outer *= x->dims[i];
    for (int64_t i = fi + 1; i < x->rank; i++) f->inner *= x->dims[i];
    /* The per-feature operands; grad's fifth operand (dy) has the operand's shape. */
    for (int64_t k = 1; k < want; k++) {
        const cxla_shape *s = &instr->operands[k]->shape;
        bool like_x = op == CXLA_OP_BATCH_NORM_GRAD && k == 4;
        if (s->type != x->type ||
            (like_x ? s->rank != x->rank : s->rank != 1 || s->dims[0] != f->features))
            return false;
        for (int64_t d = 0; like_x && d < x->rank; d++)
            if (s->dims[d] != x->dims[d]) return false;
    }
    const cxla_shape *r = &instr->shape;
    if (op == CXLA_OP_BATCH_NORM_INFERENCE) return r->type == x->type;
    if (r->type != CXLA_TUPLE || r->tuple_count != 3) return false;
    for (int k = 0; k < 3; k++)
        if (r->elements[k].type != x->type) return false;
    return true;
}

static cxla_status emit_bn(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                           cpu_kernel_info *info) {
    bn_form f;
    bn_form_of(instr, &f);
    cxla_opcode op = instr->opcode;
    cxla_type t = instr->operands[0]->shape.type;
    const char *T = held(t);
    int64_t count = f.outer * f.inner;
    cpu_lib_head(instr, name, out);
    cpu_lib_open(name, f.features > 0 ? f.features : 1, out);
    for (int64_t k = 0; k < instr->operand_count; k++)
        cxla_strbuf_printf(out, "    const %s *restrict a%" PRId64 " = in[%" PRId64 "];\n", T, k,
                           k);
    int nout = op == CXLA_OP_BATCH_NORM_INFERENCE ? 1 : 3;
    for (int k = 0; k < nout; k++)
        cxla_strbuf_printf(out, "    %s *restrict o%d = out[%d];\n", T, k, k);
    cxla_strbuf_printf(out,
                       "    const double eps = %a, count = %a;\n"
                       "    (void)count;\n"
                       "    for (int64_t c = begin; c < end && c < %" PRId64 "; c++) {\n",
                       f.eps, (double)count, f.features);
    /* The element (o, c, i) and the loop over a feature's elements. */
    char at[128], loops[256];
    snprintf(at, sizeof at, "(o * %" PRId64 " + c) * %" PRId64 " + i", f.features, f.inner);
    snprintf(loops, sizeof loops,
             "        for (int64_t o = 0; o < %" PRId64 "; o++)\n"
             "            for (int64_t i = 0; i < %" PRId64 "; i++) {\n"
             "                const int64_t k = %s;\n",
             f.outer, f.inner, at);
    cxla_strbuf xk, fc[5];
    cxla_strbuf_init(&xk);
    load_expr(&xk, t, "a0", "k");
    for (int k = 1; k < 5; k++) {
        cxla_strbuf_init(&fc[k]);
        if (k < instr->operand_count)
            load_expr(&fc[k], t, (const char *[]){"", "a1", "a2", "a3", "a4"}[k], "c");
    }
    const char *X = xk.data ? xk.data : "0";
    if (op == CXLA_OP_BATCH_NORM_GRAD) {
        cxla_strbuf dyk;
        cxla_strbuf_init(&dyk);
        load_expr(&dyk, t, "a4", "k");
        cxla_strbuf_printf(out,
                           "        const double mean = %s, var = %s, scale = %s;\n"
                           "        double sum_dy = 0, sum_dyx = 0;\n%s"
                           "                sum_dy += %s;\n"
                           "                sum_dyx += %s * (%s - mean);\n"
                           "            }\n"
                           "        const double ve = var + eps, r = 1.0 / sqrt(ve);\n"
                           "        o2[c] = ",
                           fc[2].data, fc[3].data, fc[1].data, loops, dyk.data, dyk.data, X);
        store_expr(out, t, "sum_dy");
        cxla_strbuf_puts(out, ";\n        o1[c] = ");
        store_expr(out, t, "sum_dyx * r");
        cxla_strbuf_printf(out,
                           ";\n        const double mdy = sum_dy / count, mdyx = sum_dyx / count;\n"
                           "%s                o0[k] = ",
                           loops);
        char v[512];
        snprintf(v, sizeof v, "scale * r * (%s - mdy - (%s - mean) * mdyx / ve)", dyk.data, X);
        store_expr(out, t, v);
        cxla_strbuf_puts(out, ";\n            }\n");
        cpu_emit_buf_free(&dyk);
    } else {
        if (op == CXLA_OP_BATCH_NORM_TRAINING) {
            cxla_strbuf_printf(out,
                               "        double s = 0, q = 0;\n%s"
                               "                s += %s;\n"
                               "            }\n"
                               "        const double mean = s / count;\n%s"
                               "                const double d = %s - mean;\n"
                               "                q += d * d;\n"
                               "            }\n"
                               "        const double var = q / count;\n"
                               "        o1[c] = ",
                               loops, X, loops, X);
            store_expr(out, t, "mean");
            cxla_strbuf_puts(out, ";\n        o2[c] = ");
            store_expr(out, t, "var");
            cxla_strbuf_puts(out, ";\n");
        } else {
            cxla_strbuf_printf(out, "        const double mean = %s, var = %s;\n", fc[3].data,
                               fc[4].data);
        }
        cxla_strbuf_printf(out,
                           "        const double r = 1.0 / sqrt(var + eps);\n"
                           "        const double scale = %s, offset = %s;\n%s"
                           "                o0[k] = ",
                           fc[1].data, fc[2].data, loops);
        char v[512];
        snprintf(v, sizeof v, "(%s - mean) * r * scale + offset", X);
        store_expr(out, t, v);
        cxla_strbuf_puts(out, ";\n            }\n");
    }
    cxla_strbuf_puts(out, "    }\n}\n\n");
    cpu_emit_buf_free(&xk);
    for (int k = 1; k < 5; k++) cpu_emit_buf_free(&fc[k]);
    if (info) {
        info->range = f.features > 0 ? f.features : 1;
        info->cost = (double)f.features * (double)count * 3.0 * (double)cxla_type_storage(t);
    }
    return NULL;
}

bool cpu_emit_linalg_ok(const cxla_instr *instr) {
    trsm_form f;
    bn_form b;
    if (instr->opcode == CXLA_OP_BATCH_NORM_TRAINING ||
        instr->opcode == CXLA_OP_BATCH_NORM_INFERENCE || instr->opcode == CXLA_OP_BATCH_NORM_GRAD)
        return bn_form_of(instr, &b);
    if (instr->opcode == CXLA_OP_CHOLESKY) return cholesky_ok(instr);
    return instr->opcode == CXLA_OP_TRIANGULAR_SOLVE && trsm_form_of(instr, &f);
}

cxla_status cpu_emit_linalg(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                            cpu_kernel_info *out_info) {
    if (!cpu_emit_linalg_ok(instr))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "cpu backend: cannot emit %s (%s)",
                          instr->name, cxla_opcode_name(instr->opcode));
    if (instr->opcode == CXLA_OP_CHOLESKY) return emit_cholesky(instr, name, out, out_info);
    if (instr->opcode == CXLA_OP_TRIANGULAR_SOLVE) return emit_trsm(instr, name, out, out_info);
    return emit_bn(instr, name, out, out_info);
}
