/* The emitter's convolution kernel: an exact loop nest as generated C, for the convolutions
 * that oneDNN does not run (every convolution in a build without oneDNN; f64 and integer
 * ones with it) and for ahead-of-time output (aot.c), which has no library to call.
 *
 * Any dim_labels (the dims are strides baked into the text), padding (negative too),
 * strides, lhs and rhs dilation, window reversal, feature groups and batch groups. The
 * outer loop (the one the thread pool splits) runs over the output's (batch, spatial
 * position) pairs; inside, the output features in tiles of accumulators, then the window
 * positions row-major over the kernel's spatial dims, skipping those that fall into
 * padding or lhs-dilation holes, then the kernel's input features, then the tile.
 *
 * Each output element therefore adds its products in the order of the interpreter's
 * flattened contraction index (window position, then input feature: src/interp/
 * interp_linalg.c), from 0, in the same compute type (f32; f64 when the result or an
 * operand is f64; 64-bit wrapping integers), rounded once to the result type. The
 * interpreter's im2col path multiplies padding by the kernel (adding +-0, which leaves a
 * sum that started at +0 unchanged) and its direct path skips it as here, so the results
 * are the interpreter's bit for bit either way (given no fused multiply-adds: the
 * generated code is compiled without contraction). Complex convolutions accumulate in c64
 * (c128 when an operand is c128 or f64) pairs, each product formed by cxla_c64_mul (four
 * rounded products) and added by parts, as the interpreter's complex product; a padding
 * product (0 times a finite weight) is +-0 in each part, which a sum started at +0 ignores
 * too. Operands of other types than the result (s8 x bf16 -> f32, pred or integers into
 * complex) are loaded as the interpreter loads them (cpu_emit_product_operand), and
 * PACKED_NIBBLE integer convolutions add the products of the low and of the high nibbles. */
#include <inttypes.h>
#include <string.h>

#include "cpu/emit_internal.h"

enum { TILE = 64 }; /* output features held in accumulators at once */

typedef struct conv_form {
    int64_t n; /* spatial dims */
    int64_t ib, iz, isp[CXLA_MAX_RANK];
    int64_t ki, ko, ksp[CXLA_MAX_RANK];
    int64_t ob, oz, osp[CXLA_MAX_RANK];
    int64_t IB, IZ, KZ, OZ, OB, G, BG;
    const cxla_window_dim *win;
} conv_form;

/* The element types this kernel (and aot_dot.c) loads: the emitter's, sub-byte integers and
 * complex. */
static bool type_ok(cxla_type t) {
    return cpu_emit_type_ok(t) || cpu_emit_subbyte(t) || cxla_type_is_complex(t);
}

cxla_type cpu_emit_product_type(cxla_type r, cxla_type l, cxla_type k) {
    if (cxla_type_is_complex(r)) {
        bool wide =
            r == CXLA_C128 || l == CXLA_C128 || k == CXLA_C128 || l == CXLA_F64 || k == CXLA_F64;
        return wide ? CXLA_C128 : CXLA_C64;
    }
    if (cxla_type_is_float(r))
        return r == CXLA_F64 || l == CXLA_F64 || k == CXLA_F64 ? CXLA_F64 : CXLA_F32;
    return CXLA_U64;
}

const char *cpu_emit_product_operand(cxla_arena *ar, cxla_type from, cxla_type rt, cxla_type ct,
                                     bool nibble, const char *x) {
    if (ct == CXLA_U64) {
        /* An integer or pred of an integer result: extended; else (and for PACKED_NIBBLE)
         * converted to the result. */
        bool direct =
            !nibble && rt != CXLA_PRED && (cxla_type_is_integer(from) || from == CXLA_PRED);
        if (!direct) {
            x = cpu_emit_convert(ar, from, rt, x);
            from = rt;
        }
        return cxla_type_is_signed(from) ? cpu_emit_fmt(ar, "(uint64_t)(int64_t)%s", x)
                                         : cpu_emit_fmt(ar, "(uint64_t)%s", x);
    }
    if (!cxla_type_is_float(from) && !cxla_type_is_complex(from)) {
        x = cpu_emit_convert(ar, from, rt, x); /* integers and pred: to the result type first */
        from = rt;
    }
    if (cxla_type_is_complex(ct)) return cpu_emit_convert(ar, from, ct, x); /* exact */
    return cpu_emit_fmt(ar, "(%s)%s", ct == CXLA_F64 ? "double" : "float",
                        cpu_emit_decode(ar, from, x));
}

bool cpu_emit_packed_nibble(const cxla_instr *in, bool *out_bad) {
    const cxla_attr *p = cxla_instr_attr(in, CXLA_ATTR_OPERAND_PRECISION);
    *out_bad = false;
    if (!p || p->kind != CXLA_ATTR_KIND_PRECISIONS) return false;
    int n = 0;
    for (int64_t i = 0; i < p->v.precisions.count; i++)
        n += p->v.precisions.items[i] == CXLA_PRECISION_PACKED_NIBBLE;
    *out_bad =
        n != 0 && (n != 2 || p->v.precisions.count != 2 || !cxla_type_is_integer(in->shape.type));
    return n == 2 && !*out_bad;
}

const char *cpu_emit_nibble_product(cxla_arena *ar, cxla_type rt, const char *x, const char *y) {
    if (!cxla_type_is_signed(rt))
        return cpu_emit_fmt(ar, "(%s & 15u) * (%s & 15u) + (%s >> 4) * (%s >> 4)", x, y, x, y);
    /* The low nibble sign-extended from bit 3, the rest shifted arithmetically (from bit 59),
     * both by xor and subtract of the sign bit, in wrapping uint64_t. */
    const char *h = "UINT64_C(0x0800000000000000)";
    return cpu_emit_fmt(ar,
                        "(((%s & 15u) ^ 8u) - 8u) * (((%s & 15u) ^ 8u) - 8u) + "
                        "(((%s >> 4) ^ %s) - %s) * (((%s >> 4) ^ %s) - %s)",
                        x, y, x, h, h, y, h, h);
}

static bool labels_ok(int64_t a, int64_t b, int64_t n, const int64_t *sp, int64_t rank) {
    if (rank != n + 2 || a < 0 || b < 0 || a >= rank || b >= rank || a == b) return false;
    bool used[CXLA_MAX_RANK] = {false};
    used[a] = used[b] = true;
    for (int64_t i = 0; i < n; i++) {
        if (sp[i] < 0 || sp[i] >= rank || used[sp[i]]) return false;
        used[sp[i]] = true;
    }
    return true;
}

static bool static_row_major(const cxla_shape *s) {
    return cxla_type_is_array(s->type) && cxla_shape_is_static(s) && cxla_layout_is_default(s);
}

/* The convolution's numbers, or false when this kernel does not take it (types, PACKED_NIBBLE,
 * attributes the verifier would reject). */
static bool conv_form_of(const cxla_instr *in, conv_form *f) {
    if (in->opcode != CXLA_OP_CONVOLUTION || in->operand_count != 2) return false;
    const cxla_shape *ls = &in->operands[0]->shape, *rs = &in->operands[1]->shape, *os = &in->shape;
    if (!static_row_major(ls) || !static_row_major(rs) || !static_row_major(os)) return false;
    cxla_type r = os->type, l = ls->type, k = rs->type;
    if (!type_ok(r) || !type_ok(l) || !type_ok(k)) return false;
    /* Complex operands need a complex result (the interpreter refuses the others). */
    if ((cxla_type_is_complex(l) || cxla_type_is_complex(k)) && !cxla_type_is_complex(r))
        return false;
    bool bad;
    cpu_emit_packed_nibble(in, &bad);
    if (bad) return false;
    const cxla_attr *dl = cxla_instr_attr(in, CXLA_ATTR_DIM_LABELS);
    const cxla_attr *w = cxla_instr_attr(in, CXLA_ATTR_WINDOW);
    if (!dl || dl->kind != CXLA_ATTR_KIND_DIM_LABELS) return false;
    const cxla_conv_dims *d = &dl->v.conv;
    int64_t n = d->spatial_count;
    int64_t wrank = w && w->kind == CXLA_ATTR_KIND_WINDOW ? w->v.window.rank : 0;
    if (n < 0 || n + 2 > CXLA_MAX_RANK || wrank != n) return false;
    if (!labels_ok(d->input_batch, d->input_feature, n, d->input_spatial, ls->rank) ||
        !labels_ok(d->kernel_input_feature, d->kernel_output_feature, n, d->kernel_spatial,
                   rs->rank) ||
        !labels_ok(d->output_batch, d->output_feature, n, d->output_spatial, os->rank))
        return false;
    memset(f, 0, sizeof(*f));
    f->n = n;
    f->ib = d->input_batch;
    f->iz = d->input_feature;
    f->ki = d->kernel_input_feature;
    f->ko = d->kernel_output_feature;
    f->ob = d->output_batch;
    f->oz = d->output_feature;
    f->win = w && w->kind == CXLA_ATTR_KIND_WINDOW ? w->v.window.dims : NULL;
    for (int64_t i = 0; i < n; i++) {
        f->isp[i] = d->input_spatial[i];
        f->ksp[i] = d->kernel_spatial[i];
        f->osp[i] = d->output_spatial[i];
        const cxla_window_dim *wd = &f->win[i];
        if (wd->size != rs->dims[f->ksp[i]] || wd->stride < 1 || wd->lhs_dilation < 1 ||
            wd->rhs_dilation < 1)
            return false;
    }
    int64_t g = 1, bg = 1;
    cxla_instr_int(in, CXLA_ATTR_FEATURE_GROUP_COUNT, &g);
    cxla_instr_int(in, CXLA_ATTR_BATCH_GROUP_COUNT, &bg);
    f->G = g;
    f->BG = bg;
    f->IB = ls->dims[f->ib];
    f->IZ = ls->dims[f->iz];
    f->KZ = rs->dims[f->ki];
    f->OZ = rs->dims[f->ko];
    f->OB = os->dims[f->ob];
    return g >= 1 && bg >= 1 && f->IZ == f->KZ * g && f->OZ % g == 0 && f->OZ % bg == 0 &&
           f->IB % bg == 0 && f->OB == f->IB / bg && os->dims[f->oz] == f->OZ;
}

bool cpu_emit_conv_ok(const cxla_instr *instr) {
    conv_form f;
    return conv_form_of(instr, &f);
}

static void strides_of(const cxla_shape *s, int64_t *st) {
    int64_t v = 1;
    for (int64_t d = s->rank - 1; d >= 0; d--) {
        st[d] = v;
        v *= s->dims[d];
    }
}

static int64_t gcd(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

cxla_status cpu_emit_conv(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                          cpu_kernel_info *out_info) {
    conv_form f;
    if (!conv_form_of(instr, &f))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "cpu backend: cannot emit convolution %s: its types (complex operands "
                          "of a real result), layouts or PACKED_NIBBLE precision (on one operand, "
                          "or of a float result) need the library call",
                          instr->name);
    const cxla_shape *ls = &instr->operands[0]->shape, *rs = &instr->operands[1]->shape;
    const cxla_shape *os = &instr->shape;
    int64_t lst[CXLA_MAX_RANK], rst[CXLA_MAX_RANK], ost[CXLA_MAX_RANK];
    strides_of(ls, lst);
    strides_of(rs, rst);
    strides_of(os, ost);
    cxla_type rt = os->type;
    cxla_type ct = cpu_emit_product_type(rt, ls->type, rs->type);
    bool cplx = cxla_type_is_complex(ct), bad;
    bool nib = cpu_emit_packed_nibble(instr, &bad);
    const char *acc_t = ct == CXLA_U64 ? "uint64_t" : cpu_emit_ctype(ct);
    int64_t S = 1, P = 1;
    for (int64_t i = 0; i < f.n; i++) {
        S *= os->dims[f.osp[i]];
        P *= f.win[i].size;
    }
    int64_t range = f.OB * S;
    if (out_info) {
        double es = (double)cxla_type_storage(ls->type);
        out_info->range = range > 0 ? range : 1;
        out_info->cost = (double)range * (double)f.OZ * ((double)P * (double)f.KZ * (2.0 + es));
    }
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return OOM();
    cpu_emit_fmt_reset();
    cxla_strbuf text;
    cxla_strbuf_init(&text);
    cxla_hlo_print_instr(&text, instr, CXLA_HLO_STYLE_SHORT);
    for (char *p = text.data ? strstr(text.data, "*/") : NULL; p; p = strstr(p, "*/")) p[1] = ' ';
    for (char *p = text.data ? strstr(text.data, "/*") : NULL; p; p = strstr(p, "/*")) p[1] = ' ';
    for (char *p = text.data; p && *p; p++)
        if (*p == '\n') *p = ' ';
    if (text.data && text.len > 200) memcpy(text.data + 196, " ...", 5);
    cxla_strbuf_printf(out,
                       "/* %s\n * Exact loop nest: each output element sums over window positions "
                       "(row-major), then input\n * features, from 0, in %s (the interpreter's "
                       "order and type). */\n",
                       text.data ? text.data : instr->name, acc_t);
    cxla_strbuf_free(&text);
    const char *lt = cpu_emit_stype(ls->type), *kt = cpu_emit_stype(rs->type);
    const char *ot = cpu_emit_stype(rt);
    cxla_strbuf_printf(out,
                       "void %s(void *const *out, const void *const *in, int64_t begin, "
                       "int64_t end) {\n",
                       name);
    cxla_strbuf_printf(out,
                       "    const %s *restrict lhs = (const %s *)in[0];\n"
                       "    const %s *restrict rhs = (const %s *)in[1];\n"
                       "    %s *restrict res = (%s *)out[0];\n"
                       "    int64_t it0 = begin < 0 ? 0 : begin, it1 = end > %" PRId64 " ? %" PRId64
                       " : end;\n"
                       "    (void)lhs;\n    (void)rhs;\n    (void)res;\n",
                       lt, lt, kt, kt, ot, ot, range, range);
    if (range == 0 || f.OZ == 0) {
        cxla_strbuf_puts(out, "    (void)it0;\n    (void)it1;\n}\n\n");
        cxla_arena_destroy(arena);
        return out->failed ? OOM() : NULL;
    }
    int64_t OZg = f.OZ / f.G, OZb = f.OZ / f.BG;
    int64_t ZC = gcd(OZg, OZb); /* output features that share a feature and a batch group */
    cxla_strbuf_puts(out, "    for (int64_t it = it0; it < it1; it++) {\n");
    /* it = batch * S + the row-major position over the output's spatial dims. */
    cxla_strbuf_printf(out, "        const int64_t ob = it / %" PRId64 ";\n", S);
    int64_t below = 1;
    for (int64_t i = f.n - 1; i >= 0; i--) {
        cxla_strbuf_printf(
            out, "        const int64_t o%" PRId64 " = it / %" PRId64 " %% %" PRId64 ";\n", i,
            below, os->dims[f.osp[i]]);
        below *= os->dims[f.osp[i]];
    }
    cxla_strbuf_puts(out, "        int64_t obase = ob * ");
    cxla_strbuf_printf(out, "%" PRId64, ost[f.ob]);
    for (int64_t i = 0; i < f.n; i++)
        cxla_strbuf_printf(out, " + o%" PRId64 " * %" PRId64, i, ost[f.osp[i]]);
    cxla_strbuf_puts(out, ";\n");
    cxla_strbuf_printf(out, "        for (int64_t c = 0; c < %" PRId64 "; c++) {\n", f.OZ / ZC);
    cxla_strbuf_printf(out,
                       "            /* Output features [c * %" PRId64 ", (c + 1) * %" PRId64
                       "): feature group fg, batch group bg. */\n"
                       "            const int64_t fg = c * %" PRId64 " / %" PRId64
                       ", bg = c * %" PRId64 " / %" PRId64 ";\n"
                       "            const int64_t xbase = (ob + bg * %" PRId64 ") * %" PRId64
                       " + fg * %" PRId64 ";\n"
                       "            (void)fg;\n            (void)bg;\n",
                       ZC, ZC, ZC, OZg, ZC, OZb, f.OB, lst[f.ib], f.KZ * lst[f.iz]);
    cxla_strbuf_printf(out,
                       "            for (int64_t z0 = c * %" PRId64 "; z0 < (c + 1) * %" PRId64
                       "; z0 += %d) {\n"
                       "                const int64_t zn = (c + 1) * %" PRId64 " - z0 < %d ? (c "
                       "+ 1) * %" PRId64 " - z0 : %d;\n"
                       "                %s acc[%d];\n"
                       "                for (int64_t t = 0; t < zn; t++) acc[t] = %s;\n",
                       ZC, ZC, TILE, ZC, TILE, ZC, TILE, acc_t, TILE,
                       ct == CXLA_C64    ? "cxla_c64_make(0, 0)"
                       : ct == CXLA_C128 ? "cxla_c128_make(0, 0)"
                                         : "0");
    /* The window loops, one per spatial dim, skipping padding and lhs-dilation holes. */
    int depth = 16;
    for (int64_t i = 0; i < f.n; i++) {
        const cxla_window_dim *wd = &f.win[i];
        int64_t in_size = ls->dims[f.isp[i]];
        cxla_strbuf_printf(out,
                           "%*sfor (int64_t k%" PRId64 " = 0; k%" PRId64 " < %" PRId64 "; k%" PRId64
                           "++) {\n",
                           depth, "", i, i, wd->size, i);
        depth += 4;
        cxla_strbuf_printf(out,
                           "%*sconst int64_t u%" PRId64 " = o%" PRId64 " * %" PRId64 " + k%" PRId64
                           " * %" PRId64 " - %" PRId64 ";\n",
                           depth, "", i, i, wd->stride, i, wd->rhs_dilation, wd->pad_low);
        if (wd->lhs_dilation > 1) {
            cxla_strbuf_printf(
                out,
                "%*sif (u%" PRId64 " < 0 || u%" PRId64 " %% %" PRId64 " != 0) continue;\n"
                "%*sconst int64_t v%" PRId64 " = u%" PRId64 " / %" PRId64 ";\n",
                depth, "", i, i, wd->lhs_dilation, depth, "", i, i, wd->lhs_dilation);
        } else {
            cxla_strbuf_printf(out, "%*sconst int64_t v%" PRId64 " = u%" PRId64 ";\n", depth, "", i,
                               i);
        }
        cxla_strbuf_printf(out,
                           "%*sif (v%" PRId64 " < 0 || v%" PRId64 " >= %" PRId64 ") continue;\n",
                           depth, "", i, i, in_size);
    }
    cxla_strbuf_printf(out, "%*sconst %s *restrict xp = lhs + xbase", depth, "", lt);
    for (int64_t i = 0; i < f.n; i++)
        cxla_strbuf_printf(out, " + v%" PRId64 " * %" PRId64, i, lst[f.isp[i]]);
    cxla_strbuf_printf(out, ";\n%*sconst %s *restrict wp = rhs + z0 * %" PRId64, depth, "", kt,
                       rst[f.ko]);
    for (int64_t i = 0; i < f.n; i++) {
        if (f.win[i].reversal)
            cxla_strbuf_printf(out, " + (%" PRId64 " - k%" PRId64 ") * %" PRId64, f.win[i].size - 1,
                               i, rst[f.ksp[i]]);
        else
            cxla_strbuf_printf(out, " + k%" PRId64 " * %" PRId64, i, rst[f.ksp[i]]);
    }
    cxla_strbuf_puts(out, ";\n");
    cxla_strbuf_printf(out, "%*sfor (int64_t kz = 0; kz < %" PRId64 "; kz++) {\n", depth, "", f.KZ);
    const char *x = cpu_emit_product_operand(
        arena, ls->type, rt, ct, nib, cpu_emit_fmt(arena, "xp[kz * %" PRId64 "]", lst[f.iz]));
    const char *y = cpu_emit_product_operand(
        arena, rs->type, rt, ct, nib,
        cpu_emit_fmt(arena, "wp[kz * %" PRId64 " + t * %" PRId64 "]", rst[f.ki], rst[f.ko]));
    const char *step =
        !x || !y ? NULL
        : cplx   ? cpu_emit_fmt(arena, "acc[t] = %s_add(acc[t], %s_mul(xv, %s))", acc_t, acc_t, y)
        : nib    ? cpu_emit_fmt(arena, "acc[t] += %s", cpu_emit_nibble_product(arena, rt, "xv", y))
                 : cpu_emit_fmt(arena, "acc[t] += xv * %s", y);
    cxla_strbuf_printf(out,
                       "%*s    const %s xv = %s;\n"
                       "%*s    for (int64_t t = 0; t < zn; t++) %s;\n"
                       "%*s}\n",
                       depth, "", acc_t, x ? x : "0", depth, "", step ? step : "(void)0", depth,
                       "");
    for (int64_t i = f.n - 1; i >= 0; i--) {
        depth -= 4;
        cxla_strbuf_printf(out, "%*s}\n", depth, "");
    }
    const char *st = cpu_emit_convert(arena, ct, rt, "acc[t]");
    cxla_strbuf_printf(out,
                       "                for (int64_t t = 0; t < zn; t++) res[obase + (z0 + t) * "
                       "%" PRId64 "] = %s;\n",
                       ost[f.oz], st ? st : "0");
    cxla_strbuf_puts(out, "            }\n        }\n    }\n}\n\n");
    bool failed = cpu_emit_fmt_failed() || !step || !st;
    cxla_arena_destroy(arena);
    return out->failed || failed ? OOM() : NULL;
}
