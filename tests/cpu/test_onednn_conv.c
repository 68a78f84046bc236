/* Convolutions on the cpu backend (src/cpu/onednn_conv.c) against the interpreter: dim_labels,
 * paddings, strides, dilations, feature and batch groups, transposed convolutions, in f32,
 * bf16 and f16 (oneDNN when the build has it, within the bound of docs/semantics.md, "cpu
 * backend": onednn_check.h) and in integer and f64 types (the emitter's exact loop nest), each
 * checked for the way it ran (oneDNN, the loops or a kernel). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/onednn.h"
#include "cpu/onednn_check.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

/* A module of one convolution. */
static void conv_case(const char *a, const char *k, const char *r, const char *attrs, int64_t n,
                      const char *rtype, const char *want_what) {
    cxla_strbuf t;
    cxla_strbuf_init(&t);
    cxla_strbuf_printf(&t,
                       "HloModule c\nENTRY e {\n  a = %s parameter(0)\n  b = %s parameter(1)\n"
                       "  ROOT r = %s convolution(a, b), %s\n}\n",
                       a, k, r, attrs);
    check(t.data, rtype, n, want_what);
    cxla_strbuf_free(&t);
}

/* How a batch-grouped convolution runs when oneDNN takes it (check: "any" without oneDNN). */
#define BWD_WEIGHTS "onednn convolution, backward weights"

static void test_conv_forms_f32(void) {
    rng_state = 4;
    /* NHWC / HWIO, pad 1 (the anchor's form, smaller) */
    conv_case("f32[2,12,12,16]", "f32[3,3,16,24]", "$R[2,12,12,24]",
              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 144, "f32", "onednn");
    /* NCHW / OIHW, stride 2, no padding */
    conv_case("f32[2,8,13,11]", "f32[16,8,3,3]", "$R[2,16,6,5]",
              "window={size=3x3 stride=2x2}, dim_labels=bf01_oi01->bf01", 72, "f32", "onednn");
    /* rhs dilation, asymmetric padding */
    conv_case("f32[1,15,14,4]", "f32[3,2,4,6]", "$R[1,14,13,6]",
              "window={size=3x2 pad=2_1x1_0 rhs_dilate=2x2}, dim_labels=b01f_01io->b01f", 24, "f32",
              "onednn");
    /* unusual dim_labels on all three */
    conv_case("f32[9,3,10,2]", "f32[5,3,2,3]", "$R[8,1,5,10]",
              "window={size=3x2 pad=0_1x0_0}, dim_labels=0fb1_o01i->01fb", 12, "f32", "onednn");
    /* 1D and 3D; no spatial dims at all */
    conv_case("f32[3,40,6]", "f32[5,6,7]", "$R[3,38,7]",
              "window={size=5 pad=1_1}, dim_labels=b0f_0io->b0f", 30, "f32", "onednn");
    conv_case("f32[1,6,7,5,3]", "f32[2,3,2,3,4]", "$R[1,5,5,4,4]",
              "window={size=2x3x2}, dim_labels=b012f_012io->b012f", 36, "f32", "onednn");
    conv_case("f32[5,12]", "f32[12,7]", "$R[5,7]", "dim_labels=bf_io->bf", 12, "f32", "onednn");
    /* feature groups: 4 groups; depthwise (groups = channels, multiplier 2) */
    conv_case("f32[2,9,9,16]", "f32[3,3,4,12]", "$R[2,9,9,12]",
              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4",
              36, "f32", "onednn");
    conv_case("f32[1,10,10,8]", "f32[3,3,1,16]", "$R[1,10,10,16]",
              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=8", 9,
              "f32", "onednn");
    /* window reversal (a copy of the kernel, flipped) */
    conv_case("f32[2,7,7,3]", "f32[3,2,3,5]", "$R[2,7,6,5]",
              "window={size=3x2 pad=1_1x0_0 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f", 18,
              "f32", "onednn");
    /* lhs dilation: a transposed convolution (backward data), with rhs dilation and groups */
    conv_case("f32[2,5,6,4]", "f32[3,3,4,6]", "$R[2,11,12,6]",
              "window={size=3x3 pad=2_2x1_2 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f", 36, "f32",
              "onednn");
    conv_case("f32[1,4,6,5]", "f32[6,2,3,3]", "$R[1,6,16,7]",
              "window={size=3x3 pad=1_1x2_0 lhs_dilate=3x2 rhs_dilate=1x2}, "
              "dim_labels=bf01_oi01->bf01, feature_group_count=2",
              18, "f32", "onednn");
    conv_case("f32[2,5,5,3]", "f32[2,2,3,4]", "$R[2,10,10,4]",
              "window={size=2x2 pad=1_1x1_1 lhs_dilate=2x2 rhs_reversal=1x1}, "
              "dim_labels=b01f_01io->b01f",
              12, "f32", "onednn");
    /* lhs dilation with padding past the window's reach (JAX's conv_transpose "SAME" with a
     * kernel smaller than the stride; negative padding, a crop): the primitive writes the
     * box between the outputs that read only padding, which are zeroed */
    conv_case("f32[2,5,5,3]", "f32[3,3,3,4]", "$R[2,20,20,4]",
              "window={size=3x3 pad=2_3x2_3 lhs_dilate=4x4}, dim_labels=b01f_01io->b01f", 27, "f32",
              "onednn");
    conv_case("f32[2,6,7,3]", "f32[3,2,3,4]", "$R[2,21,7,4]",
              "window={size=3x2 pad=7_0x-2_-3 lhs_dilate=3x2}, dim_labels=b01f_01io->b01f", 18,
              "f32", "onednn");
    conv_case("f32[1,3,9,8]", "f32[6,1,2,2]", "$R[1,6,36,24]",
              "window={size=2x2 pad=0_4x-2_5 lhs_dilate=4x3 rhs_reversal=0x1}, "
              "dim_labels=bf01_oi01->bf01, feature_group_count=3",
              4, "f32", "onednn");
    /* batch groups: oneDNN's backward weights (test_conv_batch_groups has more) */
    conv_case("f32[4,6,6,3]", "f32[3,3,3,8]", "$R[2,4,4,8]",
              "window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2", 27, "f32",
              BWD_WEIGHTS);
    /* what oneDNN does not take: negative padding, lhs dilation with stride: the loops (with
     * oneDNN, for its types) or the emitter's exact loop nest (without) */
    const char *other = cpu_onednn_available() ? "loops" : "kernel";
    conv_case("f32[1,8,8,2]", "f32[3,3,2,3]", "$R[1,4,6,3]",
              "window={size=3x3 pad=-1_-1x0_0}, dim_labels=b01f_01io->b01f", 18, "f32", other);
    conv_case("f32[1,5,5,2]", "f32[3,3,2,3]", "$R[1,5,5,3]",
              "window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=2x2}, "
              "dim_labels=b01f_01io->b01f",
              18, "f32", other);
}

static void test_conv_small_floats_and_loops(void) {
    rng_state = 5;
    conv_case("bf16[2,12,12,16]", "bf16[3,3,16,24]", "$R[2,12,12,24]",
              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 144, "bf16", NULL);
    conv_case("bf16[2,8,9,9]", "bf16[8,8,3,3]", "$R[2,8,9,9]",
              "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01", 72, "f32", NULL);
    conv_case("f16[2,8,9,9]", "f16[8,8,3,3]", "$R[2,8,9,9]",
              "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01", 72, "f16", NULL);
    /* integer and f64 convolutions: the emitter's exact loop nest (emit_conv.c), exact */
    conv_case("s32[2,9,9,4]", "s32[3,3,4,5]", "s32[2,9,9,5]",
              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 0, "f32", "kernel");
    conv_case("f64[2,9,9,4]", "f64[3,3,4,5]", "f64[2,5,5,5]",
              "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 0, "f32",
              "kernel");
}

/* Random 2D convolutions: dim_labels as random permutations, strides, paddings, both
 * dilations, window reversal, feature groups. */
static void test_conv_random(void) {
    rng_state = 9;
    static const char letters_in[] = "bf01", letters_k[] = "io01", letters_out[] = "bf01";
    for (int iter = 0; iter < 40; iter++) {
        int64_t g = 1 + pick(3), B = 1 + pick(3), KZ = 1 + pick(3), OZ = g * (1 + pick(3));
        int64_t in_sz[2], k_sz[2], st[2], pl[2], ph[2], ld[2], rdl[2], rev[2], out_sz[2];
        bool ok = true;
        for (int d = 0; d < 2; d++) {
            in_sz[d] = 1 + pick(8);
            k_sz[d] = 1 + pick(3);
            st[d] = 1 + pick(2);
            pl[d] = pick(3);
            ph[d] = pick(3);
            ld[d] = pick(4) == 0 ? 2 : 1;
            rdl[d] = pick(3) == 0 ? 2 : 1;
            rev[d] = pick(4) == 0;
            int64_t span = (in_sz[d] - 1) * ld[d] + 1 + pl[d] + ph[d];
            int64_t ext = (k_sz[d] - 1) * rdl[d] + 1;
            out_sz[d] = span < ext ? 0 : (span - ext) / st[d] + 1;
            ok = ok && out_sz[d] > 0;
        }
        if (!ok) continue;
        int64_t pi[4] = {0, 1, 2, 3}, pk[4] = {0, 1, 2, 3}, po[4] = {0, 1, 2, 3};
        shuffle(pi, 4);
        shuffle(pk, 4);
        shuffle(po, 4);
        /* p*[i]: the position of label i. */
        int64_t idims[4], kdims[4], odims[4];
        int64_t ival[4] = {B, KZ * g, in_sz[0], in_sz[1]}, kval[4] = {KZ, OZ, k_sz[0], k_sz[1]};
        int64_t oval[4] = {B, OZ, out_sz[0], out_sz[1]};
        char il[5] = {0}, kl[5] = {0}, ol[5] = {0};
        for (int i = 0; i < 4; i++) {
            idims[pi[i]] = ival[i], il[pi[i]] = letters_in[i];
            kdims[pk[i]] = kval[i], kl[pk[i]] = letters_k[i];
            odims[po[i]] = oval[i], ol[po[i]] = letters_out[i];
        }
        cxla_strbuf a, k, r, at;
        cxla_strbuf_init(&a);
        cxla_strbuf_init(&k);
        cxla_strbuf_init(&r);
        cxla_strbuf_init(&at);
        dims_text(&a, "f32", idims, 4);
        dims_text(&k, "f32", kdims, 4);
        dims_text(&r, "$R", odims, 4);
        cxla_strbuf_printf(&at,
                           "window={size=%" PRId64 "x%" PRId64 " stride=%" PRId64 "x%" PRId64
                           " pad=%" PRId64 "_%" PRId64 "x%" PRId64 "_%" PRId64
                           " lhs_dilate=%" PRId64 "x%" PRId64 " rhs_dilate=%" PRId64 "x%" PRId64
                           " rhs_reversal=%" PRId64 "x%" PRId64
                           "}, dim_labels=%s_%s->%s, feature_group_count=%" PRId64,
                           k_sz[0], k_sz[1], st[0], st[1], pl[0], ph[0], pl[1], ph[1], ld[0], ld[1],
                           rdl[0], rdl[1], rev[0], rev[1], il, kl, ol, g);
        conv_case(a.data, k.data, r.data, at.data, KZ * k_sz[0] * k_sz[1], "f32", NULL);
        cxla_strbuf_free(&a);
        cxla_strbuf_free(&k);
        cxla_strbuf_free(&r);
        cxla_strbuf_free(&at);
    }
}

/* Transposed convolutions (lhs dilation) against the interpreter on random shapes: 1-D to
 * 3-D, dilations up to 9 (odd ones too), rhs dilation, reversal, feature groups, random
 * dim_labels, padding from negative to past the window's reach (the primitive's box and
 * zeroed edges), now and then a stride or batch groups (the loops). */
static void test_conv_transposed_random(void) {
    rng_state = 19;
    static const char letters_in[] = "bf012", letters_k[] = "io012", letters_out[] = "bf012";
    for (int iter = 0; iter < 60; iter++) {
        int64_t n = 1 + pick(3), r = n + 2;
        int64_t g = pick(3) == 0 ? 2 + pick(2) : 1, bg = g == 1 && pick(6) == 0 ? 2 : 1;
        int64_t B = (1 + pick(2)) * bg, KZ = 1 + pick(4), OZ = g * bg * (1 + pick(3));
        int64_t in_sz[3], k_sz[3], st[3], pl[3], ph[3], ld[3], rdl[3], rev[3], out_sz[3];
        bool ok = true;
        for (int64_t d = 0; d < n; d++) {
            in_sz[d] = 1 + pick(n == 3 ? 4 : 7);
            k_sz[d] = 1 + pick(n == 3 ? 3 : 5);
            st[d] = pick(8) == 0 ? 2 : 1;
            ld[d] = 2 + pick(8);
            rdl[d] = pick(4) == 0 ? 2 : 1;
            rev[d] = pick(2);
            int64_t ext = (k_sz[d] - 1) * rdl[d] + 1;
            pl[d] = pick((int)ext + 7) - 3;
            ph[d] = pick((int)ext + 7) - 3;
            int64_t span = (in_sz[d] - 1) * ld[d] + 1 + pl[d] + ph[d];
            out_sz[d] = span < ext ? 0 : (span - ext) / st[d] + 1;
            ok = ok && out_sz[d] > 0;
        }
        if (!ok) continue;
        int64_t pi[5] = {0, 1, 2, 3, 4}, pk[5] = {0, 1, 2, 3, 4}, po[5] = {0, 1, 2, 3, 4};
        shuffle(pi, r);
        shuffle(pk, r);
        shuffle(po, r);
        int64_t idims[5], kdims[5], odims[5];
        int64_t ival[5] = {B, KZ * g}, kval[5] = {KZ, OZ}, oval[5] = {B / bg, OZ};
        for (int64_t d = 0; d < n; d++) {
            ival[2 + d] = in_sz[d];
            kval[2 + d] = k_sz[d];
            oval[2 + d] = out_sz[d];
        }
        char il[6] = {0}, kl[6] = {0}, ol[6] = {0};
        for (int64_t i = 0; i < r; i++) {
            idims[pi[i]] = ival[i], il[pi[i]] = letters_in[i];
            kdims[pk[i]] = kval[i], kl[pk[i]] = letters_k[i];
            odims[po[i]] = oval[i], ol[po[i]] = letters_out[i];
        }
        cxla_strbuf a, k, res, at;
        cxla_strbuf_init(&a);
        cxla_strbuf_init(&k);
        cxla_strbuf_init(&res);
        cxla_strbuf_init(&at);
        dims_text(&a, "f32", idims, r);
        dims_text(&k, "f32", kdims, r);
        dims_text(&res, "$R", odims, r);
        const char *names[7] = {
            "size=", " stride=", " pad=", " lhs_dilate=", " rhs_dilate=", " rhs_reversal="};
        cxla_strbuf_puts(&at, "window={");
        for (int f = 0; f < 6; f++) {
            cxla_strbuf_puts(&at, names[f]);
            for (int64_t d = 0; d < n; d++) {
                if (d) cxla_strbuf_putc(&at, 'x');
                const int64_t *v[6] = {k_sz, st, pl, ld, rdl, rev};
                if (f == 2)
                    cxla_strbuf_printf(&at, "%" PRId64 "_%" PRId64, pl[d], ph[d]);
                else
                    cxla_strbuf_printf(&at, "%" PRId64, v[f][d]);
            }
        }
        cxla_strbuf_printf(&at,
                           "}, dim_labels=%s_%s->%s, feature_group_count=%" PRId64
                           ", batch_group_count=%" PRId64,
                           il, kl, ol, g, bg);
        int64_t taps = KZ;
        for (int64_t d = 0; d < n; d++) taps *= k_sz[d];
        conv_case(a.data, k.data, res.data, at.data, taps, "f32", NULL);
        cxla_strbuf_free(&a);
        cxla_strbuf_free(&k);
        cxla_strbuf_free(&res);
        cxla_strbuf_free(&at);
    }
}

/* The weight gradient of a depthwise convolution as JAX writes it (its transpose rule turns
 * feature_group_count = C into batch_group_count = C): the forward convolution reads x
 * [N,H,W,C] (b01f) with a kernel [KH,KW,1,C*M] (01io), stride s, padding plo_phi and rhs
 * dilation r, giving dy [N,HO,WO,C*M]; its gradient is convolution(x, dy) with the window
 * HOxWO, stride r, rhs dilation s, padding plo and what gives KH (KW) outputs (negative when
 * the forward window left input elements out), dim_labels f01b_i01o->01bf. Square images and
 * kernels. */
static void dw_grad_case(const char *t, int64_t N, int64_t H, int64_t C, int64_t M, int64_t K,
                         int64_t st, int64_t plo, int64_t phi, int64_t r, const char *rtype,
                         const char *want) {
    int64_t HO = (H + plo + phi - ((K - 1) * r + 1)) / st + 1;
    int64_t ph = (K - 1) * r + (HO - 1) * st + 1 - H - plo;
    char a[64], k[64], res[64], at[256];
    snprintf(a, sizeof(a), "%s[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]", t, N, H, H, C);
    snprintf(k, sizeof(k), "%s[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]", t, N, HO, HO,
             C * M);
    snprintf(res, sizeof(res), "$R[%" PRId64 ",%" PRId64 ",1,%" PRId64 "]", K, K, C * M);
    snprintf(at, sizeof(at),
             "window={size=%" PRId64 "x%" PRId64 " stride=%" PRId64 "x%" PRId64 " pad=%" PRId64
             "_%" PRId64 "x%" PRId64 "_%" PRId64 " rhs_dilate=%" PRId64 "x%" PRId64
             "}, dim_labels=f01b_i01o->01bf, batch_group_count=%" PRId64,
             HO, HO, r, r, plo, ph, plo, ph, st, st, C);
    conv_case(a, k, res, at, N * HO * HO, rtype, want);
}

/* Batch-grouped convolutions (weight gradients of grouped ones) as oneDNN's backward weights,
 * checked to run that way: depthwise (G = input features, multipliers 1 and 2), 1 < G < C,
 * strides, paddings (negative too), rhs dilation, 1 to 3 spatial dims and none, other
 * dim_labels, f32, bf16 and f16; and what still runs the loops. */
static void test_conv_batch_groups(void) {
    rng_state = 23;
    /* MobileNet's depthwise 3x3, pad 1, stride 1 and 2 (the second: dy's window strided) */
    dw_grad_case("f32", 4, 14, 16, 1, 3, 1, 1, 1, 1, "f32", BWD_WEIGHTS);
    dw_grad_case("f32", 3, 15, 8, 1, 3, 2, 1, 1, 1, "f32", BWD_WEIGHTS);
    /* TensorFlow's SAME with stride 2 on an even size (padding 0_1), a multiplier of 2,
     * rhs dilation 2, a forward window that leaves the last rows out (negative padding) */
    dw_grad_case("f32", 2, 12, 6, 1, 3, 2, 0, 1, 1, "f32", BWD_WEIGHTS);
    dw_grad_case("f32", 2, 9, 5, 2, 3, 1, 1, 1, 1, "f32", BWD_WEIGHTS);
    dw_grad_case("f32", 2, 11, 4, 1, 3, 1, 2, 2, 2, "f32", BWD_WEIGHTS);
    dw_grad_case("f32", 2, 10, 4, 1, 3, 2, 0, 0, 1, "f32", BWD_WEIGHTS);
    /* bf16 and f16 (oneDNN may lack them on a CPU: either way) */
    dw_grad_case("bf16", 4, 10, 16, 1, 3, 1, 1, 1, 1, "bf16", NULL);
    dw_grad_case("bf16", 4, 10, 16, 1, 3, 2, 1, 1, 1, "f32", NULL);
    dw_grad_case("f16", 2, 8, 8, 1, 3, 1, 1, 1, 1, "f16", NULL);
    /* 1 < G < C: 3 groups of 2 input and 4 output features; output batch 2 (IB = 6) */
    conv_case("f32[5,9,9,6]", "f32[5,7,7,12]", "$R[3,3,2,12]",
              "window={size=7x7 pad=0_0x0_0}, dim_labels=f01b_i01o->01bf, batch_group_count=3", 245,
              "f32", BWD_WEIGHTS);
    /* the canonical and NCHW forms, a negative low padding */
    conv_case("f32[6,7,7,3]", "f32[3,3,3,4]", "$R[3,4,5,4]",
              "window={size=3x3 stride=1x1 pad=-1_0x0_0}, dim_labels=b01f_01io->b01f, "
              "batch_group_count=2",
              27, "f32", BWD_WEIGHTS);
    conv_case("f32[2,8,9,9]", "f32[2,8,4,4]", "$R[2,8,2,2]",
              "window={size=4x4 stride=2x2 pad=1_0x1_0 rhs_dilate=2x2}, "
              "dim_labels=fb01_io01->bf01, batch_group_count=4",
              32, "f32", BWD_WEIGHTS);
    /* 1-D, 3-D, no spatial dims */
    conv_case("f32[3,20,4]", "f32[3,18,8]", "$R[3,1,8]",
              "window={size=18}, dim_labels=f0b_i0o->0bf, batch_group_count=4", 54, "f32",
              BWD_WEIGHTS);
    conv_case("f32[2,5,6,5,6]", "f32[2,5,6,5,6]", "$R[3,3,3,1,6]",
              "window={size=5x6x5 pad=1_1x1_1x1_1}, dim_labels=f012b_i012o->012bf, "
              "batch_group_count=6",
              300, "f32", BWD_WEIGHTS);
    conv_case("f32[7,6]", "f32[7,9]", "$R[2,9]", "dim_labels=fb_io->bf, batch_group_count=3", 7,
              "f32", BWD_WEIGHTS);
    /* one group: an ordinary convolution's weight gradient (more window elements than
     * outputs), JAX's form for a 3x3 stride 2 SAME, a 1x1, and NCHW's */
    conv_case("f32[4,16,16,3]", "f32[4,8,8,8]", "$R[3,3,3,8]",
              "window={size=8x8 pad=0_1x0_1 rhs_dilate=2x2}, dim_labels=f01b_i01o->01bf", 256,
              "f32", BWD_WEIGHTS);
    conv_case("f32[6,10,10,5]", "f32[6,10,10,7]", "$R[1,1,5,7]",
              "window={size=10x10}, dim_labels=f01b_i01o->01bf", 600, "f32", BWD_WEIGHTS);
    conv_case("f32[3,4,9,9]", "f32[3,6,9,9]", "$R[4,6,3,3]",
              "window={size=9x9 pad=1_1x1_1}, dim_labels=fb01_io01->bf01", 243, "f32", BWD_WEIGHTS);
    conv_case("bf16[4,12,12,8]", "bf16[4,12,12,16]", "$R[3,3,8,16]",
              "window={size=12x12 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf", 576, "f32", NULL);
    /* a weight gradient scaled (SGD's learning rate: output fusion) runs as backward weights,
     * then the epilogue's loops (oneDNN's backward weights takes no post-ops) */
    fused_ops = 1;
    const char *scaled[2] = {"window={size=10x10}, dim_labels=f01b_i01o->01bf",
                             "window={size=10x10 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf, "
                             "batch_group_count=5"};
    const char *scaled_out[2] = {"$R[1,1,5,7]", "$R[3,3,1,5]"};
    const char *scaled_dy[2] = {"f32[6,10,10,7]", "f32[6,10,10,5]"};
    for (int i = 0; i < 2; i++) {
        cxla_strbuf t;
        cxla_strbuf_init(&t);
        cxla_strbuf_printf(&t,
                           "HloModule c\nENTRY e {\n  a = f32[6,10,10,5] parameter(0)\n"
                           "  b = %s parameter(1)\n  g = %s convolution(a, b), %s\n"
                           "  c = $R[] constant(0.01)\n  cb = %s broadcast(c), dimensions={}\n"
                           "  ROOT r = %s multiply(g, cb)\n}\n",
                           scaled_dy[i], scaled_out[i], scaled[i], scaled_out[i], scaled_out[i]);
        check(t.data, "f32", 600,
              cpu_onednn_available() ? "onednn convolution, then epilogue loops" : NULL);
        cxla_strbuf_free(&t);
    }
    fused_ops = 0;
    /* what still runs the loops: window reversal, lhs dilation */
    const char *other = cpu_onednn_available() ? "loops" : "kernel";
    conv_case("f32[4,6,6,3]", "f32[3,3,3,8]", "$R[2,4,4,8]",
              "window={size=3x3 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f, "
              "batch_group_count=2",
              27, "f32", other);
    conv_case("f32[4,4,4,3]", "f32[3,3,3,8]", "$R[2,7,7,8]",
              "window={size=3x3 lhs_dilate=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
              "batch_group_count=2",
              27, "f32", other);
}

/* Random batch-grouped convolutions (and one-group ones): 1 to 3 spatial dims, random
 * dim_labels, strides, paddings from -1 to 2, rhs dilation, output batches and groups; each
 * one oneDNN's backward weights unless some window reads only padding in a spatial dim (then
 * the loops), one group when it has a weight gradient's shape (else the forward primitive). */
static void test_conv_batch_groups_random(void) {
    rng_state = 29;
    static const char letters_in[] = "bf012", letters_k[] = "io012", letters_out[] = "bf012";
    for (int iter = 0; iter < 50; iter++) {
        int64_t n = 1 + pick(3), r = n + 2;
        int64_t G = 1 + pick(4), OB = 1 + pick(2), IZ = 1 + pick(4), OZ = G * (1 + pick(3));
        int64_t L[3], W[3], S[3], D[3], pl[3], ph[3], O[3];
        bool ok = true, box = true;
        double taps = 1, outs = 1; /* one group: backward weights for a weight gradient's shape */
        for (int64_t d = 0; d < n; d++) {
            L[d] = 1 + pick(n == 3 ? 5 : 9);
            W[d] = 1 + pick(n == 3 ? 3 : 5);
            S[d] = 1 + pick(2);
            D[d] = pick(3) == 0 ? 2 : 1;
            pl[d] = pick(4) - 1;
            ph[d] = pick(4) - 1;
            int64_t span = L[d] + pl[d] + ph[d], ext = (W[d] - 1) * D[d] + 1;
            O[d] = span < ext ? 0 : (span - ext) / S[d] + 1;
            ok = ok && O[d] > 0;
            int64_t pr = ext + (O[d] - 1) * S[d] - L[d] - pl[d];
            box = box && L[d] + (pr < 0 ? pr : 0) - (pl[d] < 0 ? -pl[d] : 0) >= 1;
            taps *= (double)W[d];
            outs *= (double)O[d];
        }
        if (!ok) continue;
        int64_t pi[5] = {0, 1, 2, 3, 4}, pk[5] = {0, 1, 2, 3, 4}, po[5] = {0, 1, 2, 3, 4};
        shuffle(pi, r);
        shuffle(pk, r);
        shuffle(po, r);
        int64_t idims[5], kdims[5], odims[5];
        int64_t ival[5] = {OB * G, IZ}, kval[5] = {IZ, OZ}, oval[5] = {OB, OZ};
        for (int64_t d = 0; d < n; d++) {
            ival[2 + d] = L[d];
            kval[2 + d] = W[d];
            oval[2 + d] = O[d];
        }
        char il[6] = {0}, kl[6] = {0}, ol[6] = {0};
        for (int64_t i = 0; i < r; i++) {
            idims[pi[i]] = ival[i], il[pi[i]] = letters_in[i];
            kdims[pk[i]] = kval[i], kl[pk[i]] = letters_k[i];
            odims[po[i]] = oval[i], ol[po[i]] = letters_out[i];
        }
        cxla_strbuf a, k, res, at;
        cxla_strbuf_init(&a);
        cxla_strbuf_init(&k);
        cxla_strbuf_init(&res);
        cxla_strbuf_init(&at);
        dims_text(&a, "f32", idims, r);
        dims_text(&k, "f32", kdims, r);
        dims_text(&res, "$R", odims, r);
        const char *names[4] = {"size=", " stride=", " pad=", " rhs_dilate="};
        const int64_t *v[4] = {W, S, pl, D};
        cxla_strbuf_puts(&at, "window={");
        for (int f = 0; f < 4; f++) {
            cxla_strbuf_puts(&at, names[f]);
            for (int64_t d = 0; d < n; d++) {
                if (d) cxla_strbuf_putc(&at, 'x');
                if (f == 2)
                    cxla_strbuf_printf(&at, "%" PRId64 "_%" PRId64, pl[d], ph[d]);
                else
                    cxla_strbuf_printf(&at, "%" PRId64, v[f][d]);
            }
        }
        cxla_strbuf_printf(&at, "}, dim_labels=%s_%s->%s, batch_group_count=%" PRId64, il, kl, ol,
                           G);
        int64_t n_prod = IZ;
        for (int64_t d = 0; d < n; d++) n_prod *= W[d];
        bool bwd = box && (G > 1 || taps > outs);
        conv_case(a.data, k.data, res.data, at.data, n_prod, "f32",
                  bwd     ? BWD_WEIGHTS
                  : G > 1 ? (cpu_onednn_available() ? "loops" : "any")
                          : NULL);
        cxla_strbuf_free(&a);
        cxla_strbuf_free(&k);
        cxla_strbuf_free(&res);
        cxla_strbuf_free(&at);
    }
}

TEST_MAIN(TEST(test_conv_forms_f32), TEST(test_conv_small_floats_and_loops), TEST(test_conv_random),
          TEST(test_conv_transposed_random), TEST(test_conv_batch_groups),
          TEST(test_conv_batch_groups_random))
