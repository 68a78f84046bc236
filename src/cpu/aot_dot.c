/* Ahead-of-time dot (aot_internal.h): a loop nest per output element summing its products in
 * the order of the flattened contraction index, from 0, in the interpreter's compute type
 * (src/interp/interp_linalg.c), for every element-type combination the interpreter takes:
 *
 *   result f16/bf16/f8/f32    f32 (f64 when an operand is f64), rounded once at the end
 *   result f64                f64
 *   result c64 / c128         c64 pairs (c128 when an operand is c128 or f64) / c128 pairs;
 *                             each product (ar br - ai bi) + (ar bi + ai br) i formed from four
 *                             rounded products (cxla_c64_mul) and then added by parts
 *   result integer or pred    64-bit wrapping sums, narrowed to the result (pred: != 0)
 *
 * Operands are loaded as the interpreter's load_compute loads them: floats (and complex values)
 * widened exactly to the compute type; an integer or pred operand of a float or complex result
 * first converted to the result type (s8 into bf16 rounds to bf16), anything of a pred result
 * converted to pred; an integer operand of an integer result sign- or zero-extended.
 * PACKED_NIBBLE on both operands of an integer dot adds the product of the low signed (or
 * unsigned, by the result's signedness) nibbles and that of the high ones: the interpreter
 * does it in two passes over the whole sum, which with wrapping integer sums is the same.
 *
 * The kernel is plain C (no <complex.h>): gcc, clang and tcc compile it. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cpu/aot_internal.h"
#include "cpu/emit_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* Element types a kernel holds: the emitter's (pred, 8-bit and wider integers, real floats),
 * sub-byte integers and complex. */
static bool type_ok(cxla_type t) {
    return cpu_emit_type_ok(t) || cpu_emit_subbyte(t) || cxla_type_is_complex(t);
}

bool aot_dot_ok(const cxla_instr *in, const char **why) {
    *why = "dot of these element types has no plain-C form (complex operands need a complex "
           "result)";
    if (in->opcode != CXLA_OP_DOT || in->operand_count != 2) return false;
    cxla_type r = in->shape.type, l = in->operands[0]->shape.type, rr = in->operands[1]->shape.type;
    if (!type_ok(r) || !type_ok(l) || !type_ok(rr)) return false;
    if ((cxla_type_is_complex(l) || cxla_type_is_complex(rr)) && !cxla_type_is_complex(r))
        return false; /* the interpreter's check_types refuses it */
    bool bad;
    cpu_emit_packed_nibble(in, &bad);
    *why = "PACKED_NIBBLE on one operand only, or on a dot whose result is not an integer";
    if (bad) return false;
    *why = "sparse dots have no plain-C form";
    if (cxla_instr_attr(in, CXLA_ATTR_SPARSITY)) return false;
    *why = "bad dimension numbers";
    const cxla_shape *ls = &in->operands[0]->shape, *rs = &in->operands[1]->shape;
    int64_t nlb = 0, nrb = 0, nlc = 0, nrc = 0;
    const int64_t *lb = cxla_instr_ints(in, CXLA_ATTR_LHS_BATCH_DIMS, &nlb);
    const int64_t *rb = cxla_instr_ints(in, CXLA_ATTR_RHS_BATCH_DIMS, &nrb);
    const int64_t *lc = cxla_instr_ints(in, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nlc);
    const int64_t *rc = cxla_instr_ints(in, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nrc);
    if (!lb) nlb = 0;
    if (!rb) nrb = 0;
    if (!lc) nlc = 0;
    if (!rc) nrc = 0;
    if (nlb != nrb || nlc != nrc) return false;
    int64_t nlf = ls->rank - nlb - nlc, nrf = rs->rank - nrb - nrc;
    return nlf >= 0 && nrf >= 0 && in->shape.rank == nlb + nlf + nrf;
}

/* The row-major offset of operand |s| whose dim d is indexed by |idx|[d]. */
static void put_offset(cxla_strbuf *b, const cxla_shape *s, const char *const *idx) {
    bool any = false;
    for (int64_t d = 0; d < s->rank; d++) {
        int64_t stride = 1;
        for (int64_t j = d + 1; j < s->rank; j++) stride *= s->dims[j];
        if (s->dims[d] == 1) continue;
        cxla_strbuf_printf(b, "%s%s * %" PRId64, any ? " + " : "", idx[d], stride);
        any = true;
    }
    if (!any) cxla_strbuf_puts(b, "0");
}

cxla_status aot_dot_emit(aot *a, const cxla_instr *in, const char *name) {
    cxla_strbuf *b = &a->kernels;
    const cxla_shape *ls = &in->operands[0]->shape, *rs = &in->operands[1]->shape;
    const cxla_shape *os = &in->shape;
    int64_t nlb = 0, nlc = 0, nrb = 0, nrc = 0;
    const int64_t *lb = cxla_instr_ints(in, CXLA_ATTR_LHS_BATCH_DIMS, &nlb);
    const int64_t *rb = cxla_instr_ints(in, CXLA_ATTR_RHS_BATCH_DIMS, &nrb);
    const int64_t *lc = cxla_instr_ints(in, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nlc);
    const int64_t *rc = cxla_instr_ints(in, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nrc);
    if (!lb) nlb = 0;
    if (!lc) nlc = 0;
    char onames[CXLA_MAX_RANK][16], knames[CXLA_MAX_RANK][16];
    const char *lidx[CXLA_MAX_RANK], *ridx[CXLA_MAX_RANK];
    for (int64_t d = 0; d < os->rank; d++) snprintf(onames[d], 16, "i%d", (int)d);
    for (int64_t k = 0; k < nlc; k++) snprintf(knames[k], 16, "k%d", (int)k);
    /* Batch dims are the first output dims; then lhs free dims, then rhs free dims. */
    bool lused[CXLA_MAX_RANK] = {false}, rused[CXLA_MAX_RANK] = {false};
    for (int64_t i = 0; i < nlb; i++) {
        lidx[lb[i]] = onames[i], lused[lb[i]] = true;
        ridx[rb[i]] = onames[i], rused[rb[i]] = true;
    }
    for (int64_t k = 0; k < nlc; k++) {
        lidx[lc[k]] = knames[k], lused[lc[k]] = true;
        ridx[rc[k]] = knames[k], rused[rc[k]] = true;
    }
    int64_t o = nlb;
    for (int64_t d = 0; d < ls->rank; d++)
        if (!lused[d]) lidx[d] = onames[o++];
    for (int64_t d = 0; d < rs->rank; d++)
        if (!rused[d]) ridx[d] = onames[o++];
    cxla_type rt = os->type;
    cxla_type ct = cpu_emit_product_type(rt, ls->type, rs->type);
    bool cplx = cxla_type_is_complex(ct), bad;
    bool nib = cpu_emit_packed_nibble(in, &bad);
    const char *acc_t = ct == CXLA_U64 ? "uint64_t" : cpu_emit_ctype(ct);
    cxla_arena *arena = cxla_arena_create(); /* for the emitter's expression helpers */
    if (!arena) return OOM();
    cpu_emit_fmt_reset(); /* its placeholders for text it could not make are looked for below */
    cxla_strbuf t;
    cxla_strbuf_init(&t);
    cxla_hlo_print_instr(&t, in, CXLA_HLO_STYLE_SHORT);
    if (t.data) {
        for (char *p = strstr(t.data, "*/"); p; p = strstr(p, "*/")) p[1] = ' ';
        for (char *p = strstr(t.data, "/*"); p; p = strstr(p, "/*")) p[1] = ' ';
    }
    cxla_strbuf_printf(b,
                       "/* ---- %s: %s\n * Each element sums its products in the order of the "
                       "contraction index, from 0, in %s (as the interpreter). */\n",
                       name, t.data ? t.data : in->name, acc_t);
    cxla_strbuf_free(&t);
    cxla_strbuf_printf(b,
                       "static void %s(void *const *out, const void *const *in, int64_t begin, "
                       "int64_t end) {\n",
                       name);
    cxla_strbuf_printf(b, "    const %s *restrict lhs = (const %s *)in[0];\n",
                       cpu_emit_stype(ls->type), cpu_emit_stype(ls->type));
    cxla_strbuf_printf(b, "    const %s *restrict rhs = (const %s *)in[1];\n",
                       cpu_emit_stype(rs->type), cpu_emit_stype(rs->type));
    cxla_strbuf_printf(b, "    %s *restrict o = (%s *)out[0];\n", cpu_emit_stype(rt),
                       cpu_emit_stype(rt));
    int indent = 1;
#define IND()                                                                                      \
    for (int i_ = 0; i_ < indent; i_++) cxla_strbuf_puts(b, "    ")
    for (int64_t d = 0; d < os->rank; d++) {
        IND();
        cxla_strbuf_printf(b, "for (int64_t %s = 0; %s < %" PRId64 "; %s++) {\n", onames[d],
                           onames[d], os->dims[d], onames[d]);
        indent++;
    }
    IND();
    if (cplx)
        cxla_strbuf_printf(b, "%s acc = %s_make(0, 0);\n", acc_t, acc_t);
    else
        cxla_strbuf_printf(b, "%s acc = 0;\n", acc_t);
    for (int64_t j = 0; j < nlc; j++) {
        IND();
        cxla_strbuf_printf(b, "for (int64_t %s = 0; %s < %" PRId64 "; %s++) {\n", knames[j],
                           knames[j], ls->dims[lc[j]], knames[j]);
        indent++;
    }
    cxla_strbuf lo, ro;
    cxla_strbuf_init(&lo);
    cxla_strbuf_init(&ro);
    put_offset(&lo, ls, lidx);
    put_offset(&ro, rs, ridx);
    const char *lofs = lo.data ? lo.data : "0", *rofs = ro.data ? ro.data : "0"; /* failed */
    const char *x = cpu_emit_product_operand(arena, ls->type, rt, ct, nib,
                                             cpu_emit_fmt(arena, "lhs[%s]", lofs));
    const char *y = cpu_emit_product_operand(arena, rs->type, rt, ct, nib,
                                             cpu_emit_fmt(arena, "rhs[%s]", rofs));
    IND();
    if (cplx)
        cxla_strbuf_printf(b, "acc = %s_add(acc, %s_mul(%s, %s));\n", acc_t, acc_t, x, y);
    else if (nib)
        cxla_strbuf_printf(b, "acc += %s;\n", cpu_emit_nibble_product(arena, rt, x, y));
    else
        cxla_strbuf_printf(b, "acc += %s * %s;\n", x, y);
    cpu_emit_buf_free(&lo);
    cpu_emit_buf_free(&ro);
    for (int64_t j = 0; j < nlc; j++) {
        indent--;
        IND();
        cxla_strbuf_puts(b, "}\n");
    }
    const char *oidx[CXLA_MAX_RANK] = {0};
    for (int64_t d = 0; d < os->rank; d++) oidx[d] = onames[d];
    cxla_strbuf oo;
    cxla_strbuf_init(&oo);
    put_offset(&oo, os, oidx);
    IND();
    cxla_strbuf_printf(b, "o[%s] = %s;\n", oo.data ? oo.data : "0",
                       cpu_emit_convert(arena, ct, rt, "acc"));
    cxla_arena_destroy(arena);
    cpu_emit_buf_free(&oo);
    for (int64_t d = 0; d < os->rank; d++) {
        indent--;
        IND();
        cxla_strbuf_puts(b, "}\n");
    }
#undef IND
    cxla_strbuf_puts(b, "    (void)lhs;\n    (void)rhs;\n    (void)begin; /* one call runs all of "
                        "it */\n    (void)end;\n}\n\n");
    /* An index or an expression that could not be made is a placeholder that compiles. */
    if (cpu_emit_fmt_failed())
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s", in->name);
    return NULL;
}
