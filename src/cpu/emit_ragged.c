/* The emitter's ragged-dot and scaled-dot kernels (emit_lib.h): the interpreter's loops
 * (src/interp/interp_ragged.c) as generated C, so that the JIT and `cxla compile` run them
 * with no library.
 *
 * Each output element sums its products in the order of the flattened contraction index
 * from zero, in the interpreter's compute kind: f32 (each product rounded to float, each
 * sum rounded to float), f64 when the result or an operand is f64, or 64-bit wrapping
 * integers for an integer result; rounded once to the result type. Integer (and pred)
 * operands of a float result are converted to the result type first, as the interpreter's
 * loads do. scaled-dot multiplies each operand element by its block's scale first, the
 * product rounded in the compute kind (and added to +0, which turns -0 into +0, as the
 * interpreter's scale_by does).
 *
 * ragged-dot reads its group sizes at run time. The group of a ragged index is found as the
 * interpreter finds it (consecutive groups from 0, each [start, start + size)); indices past
 * the last group give zeros (modes 1 and 3) or count nowhere (mode 2). A negative group
 * size is the interpreter's error; a kernel has no error path, so here it counts as 0: the
 * JIT checks the sizes before the kernel runs (cpu_emit_ragged_check, the interpreter's
 * message), and generated code of `cxla compile` takes them as empty groups (docs/aot.md).
 *
 * The outer range runs over the output elements. Complex dots and integer results of float
 * operands are not taken here (the interpreter's handler, and a refusal ahead of time). */
#include <inttypes.h>
#include <string.h>

#include "cpu/emit_lib.h"
#include "exec/exec.h"
#include "literal/literal_internal.h"

#define F(...) cpu_emit_fmt(arena, __VA_ARGS__)

typedef enum kind { K_F32, K_F64, K_INT } kind;

/* The dimensions of the dot and, for ragged-dot, its mode and groups (interp_ragged.c's
 * plan, checked the same way). */
typedef struct rplan {
    const cxla_shape *ls, *rs;
    int64_t nb, nc, nlf, nrf;
    int64_t lb[CXLA_MAX_RANK], rb[CXLA_MAX_RANK], lc[CXLA_MAX_RANK], rc[CXLA_MAX_RANK];
    int64_t lf[CXLA_MAX_RANK], rf[CXLA_MAX_RANK];
    int64_t lstr[CXLA_MAX_RANK], rstr[CXLA_MAX_RANK];
    int mode; /* 0 scaled-dot, 1 non-contracting, 2 contracting, 3 batch */
    int64_t rd, gd, g;
    int64_t pd[CXLA_MAX_RANK], npd; /* lhs dims indexing group_sizes' leading dims */
    bool broadcast;                 /* rank-1 group_sizes: one row for all */
    kind k;
} rplan;

static void strides(const cxla_shape *s, int64_t *st) {
    for (int64_t d = s->rank - 1, v = 1; d >= 0; d--) {
        st[d] = v;
        v *= s->dims[d];
    }
}

static bool float_or_int(cxla_type t) {
    return t != CXLA_TUPLE && cpu_emit_type_ok(t);
}

static bool make_plan(const cxla_instr *instr, int64_t rhs_skip, rplan *p) {
    int64_t nlb = 0, nrb = 0, nlc = 0, nrc = 0;
    const int64_t *lb = cxla_instr_ints(instr, CXLA_ATTR_LHS_BATCH_DIMS, &nlb);
    const int64_t *rb = cxla_instr_ints(instr, CXLA_ATTR_RHS_BATCH_DIMS, &nrb);
    const int64_t *lc = cxla_instr_ints(instr, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nlc);
    const int64_t *rc = cxla_instr_ints(instr, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nrc);
    if (!lb) nlb = 0;
    if (!rb) nrb = 0;
    if (!lc) nlc = 0;
    if (!rc) nrc = 0;
    const cxla_shape *ls = p->ls, *rs = p->rs;
    bool lused[CXLA_MAX_RANK] = {false}, rused[CXLA_MAX_RANK] = {false};
    if (nlb != nrb || nlc != nrc) return false;
    if (rhs_skip >= 0) rused[rhs_skip] = true;
    for (int64_t i = 0; i < nlb + nlc; i++) {
        int64_t l = i < nlb ? lb[i] : lc[i - nlb], r = i < nlb ? rb[i] : rc[i - nlb];
        if (l < 0 || l >= ls->rank || r < 0 || r >= rs->rank || lused[l] || rused[r] ||
            ls->dims[l] != rs->dims[r])
            return false;
        lused[l] = rused[r] = true;
    }
    p->nb = nlb;
    p->nc = nlc;
    for (int64_t i = 0; i < nlb; i++) p->lb[i] = lb[i], p->rb[i] = rb[i];
    for (int64_t i = 0; i < nlc; i++) p->lc[i] = lc[i], p->rc[i] = rc[i];
    for (int64_t d = 0; d < ls->rank; d++)
        if (!lused[d]) p->lf[p->nlf++] = d;
    for (int64_t d = 0; d < rs->rank; d++)
        if (!rused[d]) p->rf[p->nrf++] = d;
    strides(ls, p->lstr);
    strides(rs, p->rstr);
    /* The result: (g,) batch, lhs free, rhs free dims, as the interpreter writes them. */
    const cxla_shape *os = &instr->shape;
    int64_t q = p->mode == 2 ? 1 : 0;
    if (os->rank != q + p->nb + p->nlf + p->nrf) return false;
    for (int64_t i = 0; i < p->nb; i++)
        if (os->dims[q++] != ls->dims[p->lb[i]]) return false;
    for (int64_t i = 0; i < p->nlf; i++)
        if (os->dims[q++] != ls->dims[p->lf[i]]) return false;
    for (int64_t i = 0; i < p->nrf; i++)
        if (os->dims[q++] != rs->dims[p->rf[i]]) return false;
    /* The compute kind (interp_ragged.c's pick_kind, complex left out). */
    cxla_type rt = os->type, a = ls->type, b = rs->type;
    if (!float_or_int(rt) || !float_or_int(a) || !float_or_int(b)) return false;
    if (rt == CXLA_PRED) return false;
    if (cxla_type_is_float(rt))
        p->k = rt == CXLA_F64 || a == CXLA_F64 || b == CXLA_F64 ? K_F64 : K_F32;
    else if (!cxla_type_is_float(a) && !cxla_type_is_float(b))
        p->k = K_INT;
    else
        return false; /* floats into an integer result: the interpreter's handler */
    return true;
}

static bool ragged_plan(const cxla_instr *instr, rplan *p) {
    memset(p, 0, sizeof(*p));
    if (instr->operand_count != 3 || !cpu_lib_plain(instr) || instr->shape.type == CXLA_TUPLE)
        return false;
    p->ls = &instr->operands[0]->shape;
    p->rs = &instr->operands[1]->shape;
    const cxla_shape *gs = &instr->operands[2]->shape;
    if (!cxla_type_is_integer(gs->type) || !cpu_emit_type_ok(gs->type) || gs->rank < 1)
        return false;
    int64_t nr = 0, ng = 0;
    const int64_t *rdims = cxla_instr_ints(instr, CXLA_ATTR_LHS_RAGGED_DIMS, &nr);
    const int64_t *gdims = cxla_instr_ints(instr, CXLA_ATTR_RHS_GROUP_DIMS, &ng);
    if (!rdims || nr != 1 || rdims[0] < 0 || rdims[0] >= p->ls->rank) return false;
    if (!gdims) ng = 0;
    p->gd = ng == 1 ? gdims[0] : -1;
    if (p->gd >= p->rs->rank) return false;
    p->rd = rdims[0];
    /* The mode from the ragged dimension's kind; the plan needs it for the result. */
    int64_t nlb = 0, nlc = 0;
    const int64_t *lb = cxla_instr_ints(instr, CXLA_ATTR_LHS_BATCH_DIMS, &nlb);
    const int64_t *lc = cxla_instr_ints(instr, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nlc);
    bool in_c = false, in_b = false;
    for (int64_t i = 0; lc && i < nlc; i++) in_c |= lc[i] == p->rd;
    for (int64_t i = 0; lb && i < nlb; i++) in_b |= lb[i] == p->rd;
    p->mode = in_c ? 2 : in_b ? 3 : 1;
    if ((p->mode == 1) != (p->gd >= 0)) return false;
    if (!make_plan(instr, p->gd, p)) return false;
    if (p->mode != 3)
        for (int64_t i = 0; i < p->nb; i++) p->pd[p->npd++] = p->lb[i];
    const int64_t *kind_dims = p->mode == 1 ? p->lf : p->mode == 2 ? p->lc : p->lb;
    int64_t kind_n = p->mode == 1 ? p->nlf : p->mode == 2 ? p->nc : p->nb;
    for (int64_t d = 0; d < p->rd; d++)
        for (int64_t i = 0; i < kind_n; i++)
            if (kind_dims[i] == d) p->pd[p->npd++] = d;
    p->g = gs->dims[gs->rank - 1];
    p->broadcast = gs->rank == 1;
    if (!p->broadcast) {
        if (gs->rank - 1 != p->npd) return false;
        for (int64_t i = 0; i < p->npd; i++)
            if (gs->dims[i] != p->ls->dims[p->pd[i]]) return false;
    }
    if (p->mode == 1 && p->rs->dims[p->gd] != p->g) return false;
    if (p->mode == 2 && instr->shape.dims[0] != p->g) return false;
    return true;
}

static bool scaled_plan(const cxla_instr *instr, rplan *p) {
    memset(p, 0, sizeof(*p));
    if (instr->operand_count != 4 || !cpu_lib_plain(instr) || instr->shape.type == CXLA_TUPLE)
        return false;
    p->ls = &instr->operands[0]->shape;
    p->rs = &instr->operands[1]->shape;
    for (int i = 0; i < 2; i++) {
        const cxla_shape *x = &instr->operands[i]->shape, *sc = &instr->operands[i + 2]->shape;
        if (!float_or_int(sc->type) || sc->type == CXLA_PRED || sc->rank != x->rank) return false;
        for (int64_t d = 0; d < x->rank; d++)
            if (sc->dims[d] > 0 ? x->dims[d] % sc->dims[d] != 0 : x->dims[d] != 0) return false;
    }
    if (!make_plan(instr, -1, p)) return false;
    /* Scales of an integer kind would be converted to the result type; floats only here. */
    if (p->k == K_INT) return false;
    return true;
}

bool cpu_emit_ragged_ok(const cxla_instr *instr) {
    rplan p;
    if (instr->opcode == CXLA_OP_RAGGED_DOT) return ragged_plan(instr, &p);
    if (instr->opcode == CXLA_OP_SCALED_DOT) return scaled_plan(instr, &p);
    return false;
}

/* Element |e| (a C value of operand type |t|) as a value of the compute kind, loaded as the
 * interpreter's load(): floats exactly, integers and pred of a float result converted to the
 * result type |rt| first; an integer kind converts to |rt| and widens to 64 bits. */
static const char *in_kind(cxla_arena *arena, const rplan *p, cxla_type t, cxla_type rt,
                           const char *e) {
    if (p->k == K_INT) {
        const char *v = cpu_emit_convert(arena, t, rt, e);
        return cxla_type_is_signed(rt) ? F("(uint64_t)(int64_t)%s", v) : F("(uint64_t)%s", v);
    }
    const char *ct = p->k == K_F32 ? "float" : "double";
    if (!cxla_type_is_float(t)) {
        e = cpu_emit_convert(arena, t, rt, e);
        t = rt;
    }
    return F("(%s)%s", ct, cpu_emit_decode(arena, t, e));
}

/* The product of two values of the compute kind, rounded as the interpreter's mul_add. */
static const char *product(cxla_arena *arena, kind k, const char *a, const char *b) {
    switch (k) {
    case K_F32: return F("(double)(%s * %s)", a, b);
    case K_F64: return F("(%s * %s)", a, b);
    default: return F("(%s * %s)", a, b);
    }
}

/* Writes the kernel. in[0], in[1]: lhs and rhs; ragged-dot: in[2] the group sizes;
 * scaled-dot: in[2], in[3] the scales. */
static cxla_status emit_kernel(cxla_arena *arena, const cxla_instr *instr, const rplan *p,
                               const char *name, cxla_strbuf *out, cpu_kernel_info *info) {
    const cxla_shape *os = &instr->shape, *ls = p->ls, *rs = p->rs;
    cxla_type rt = os->type;
    bool scaled = instr->opcode == CXLA_OP_SCALED_DOT;
    int64_t count = cpu_lib_count(os), K = 1;
    for (int64_t i = 0; i < p->nc; i++) K *= ls->dims[p->lc[i]];
    const char *acc_t = p->k == K_F32 ? "float" : p->k == K_F64 ? "double" : "uint64_t";
    cpu_lib_head(instr, name, out);
    const cxla_shape *gs = scaled ? NULL : &instr->operands[2]->shape;
    if (!scaled) {
        /* The group of ragged index r in row |row| of the group sizes, or -1 (interp_ragged.c's
         * group_of over its starts); a negative size counts as 0. */
        cxla_strbuf_printf(out,
                           "static inline int64_t %s_group(const %s *restrict sizes, int64_t row, "
                           "int64_t r) {\n"
                           "    const %s *restrict s = sizes + row * %" PRId64 ";\n"
                           "    int64_t start = 0;\n"
                           "    for (int64_t i = 0; i < %" PRId64 "; i++) {\n"
                           "        const int64_t n = %s;\n"
                           "        if (r >= start && r - start < n) return i;\n"
                           "        start = n > INT64_MAX - start ? INT64_MAX : start + n;\n"
                           "    }\n"
                           "    return -1;\n}\n",
                           name, cpu_emit_ctype(gs->type), cpu_emit_ctype(gs->type), p->g, p->g,
                           /* unsigned sizes below 64 bits cannot be negative (-Wtype-limits) */
                           cxla_type_is_signed(gs->type) || gs->type == CXLA_U64
                               ? "(int64_t)s[i] < 0 ? 0 : (int64_t)s[i]"
                               : "(int64_t)s[i]");
    }
    cpu_lib_open(name, count > 0 ? count : 1, out);
    cxla_strbuf_printf(out,
                       "    const %s *restrict lhs = in[0];\n"
                       "    const %s *restrict rhs = in[1];\n"
                       "    %s *restrict y = out[0];\n"
                       "    (void)lhs;\n    (void)rhs;\n",
                       cpu_emit_ctype(ls->type), cpu_emit_ctype(rs->type), cpu_emit_ctype(rt));
    if (scaled)
        cxla_strbuf_printf(out,
                           "    const %s *restrict lsc = in[2];\n"
                           "    const %s *restrict rsc = in[3];\n"
                           "    (void)lsc;\n    (void)rsc;\n",
                           cpu_emit_ctype(instr->operands[2]->shape.type),
                           cpu_emit_ctype(instr->operands[3]->shape.type));
    else
        cxla_strbuf_printf(out, "    const %s *restrict gs = in[2];\n    (void)gs;\n",
                           cpu_emit_ctype(gs->type));
    cxla_strbuf_printf(out, "    for (int64_t o = begin; o < end && o < %" PRId64 "; o++) {\n",
                       count);
    /* The output's coordinates, last first; li_d and ri_d name the operands' coordinates. */
    const char *li[CXLA_MAX_RANK], *ri[CXLA_MAX_RANK];
    for (int64_t d = 0; d < ls->rank; d++) li[d] = "0";
    for (int64_t d = 0; d < rs->rank; d++) ri[d] = "0";
    cxla_strbuf_puts(out, "        int64_t rest = o;\n        (void)rest;\n");
    int64_t lead = p->mode == 2 ? 1 : 0;
    const char *grp_out = "0";
    for (int64_t q = os->rank - 1; q >= 0; q--) {
        cxla_strbuf_printf(out,
                           "        const int64_t i%" PRId64 " = rest %% %" PRId64 ";\n"
                           "        rest /= %" PRId64 ";\n"
                           "        (void)i%" PRId64 ";\n",
                           q, os->dims[q], os->dims[q], q);
        const char *v = F("i%" PRId64, q);
        int64_t at = q - lead;
        if (q < lead) {
            grp_out = v;
        } else if (at < p->nb) {
            li[p->lb[at]] = v;
            ri[p->rb[at]] = v;
        } else if (at < p->nb + p->nlf) {
            li[p->lf[at - p->nb]] = v;
        } else {
            ri[p->rf[at - p->nb - p->nlf]] = v;
        }
    }
    for (int64_t i = 0; i < p->nc; i++) {
        li[p->lc[i]] = F("k%" PRId64, i);
        ri[p->rc[i]] = F("k%" PRId64, i);
    }
    cxla_strbuf_printf(out, "        %s acc = 0;\n", acc_t);
    /* The row of the group sizes: the prefix dims' coordinates, row-major. */
    cxla_strbuf row;
    cxla_strbuf_init(&row);
    cxla_strbuf_puts(&row, "0");
    for (int64_t i = 0; !scaled && !p->broadcast && i < p->npd; i++) {
        const char *prev = F("%s", row.data ? row.data : "0");
        row.len = 0;
        cxla_strbuf_printf(&row, "(%s) * %" PRId64 " + %s", prev, ls->dims[p->pd[i]], li[p->pd[i]]);
    }
    const char *rowx = F("%s", row.data ? row.data : "0");
    cpu_emit_buf_free(&row);
    int depth = 2;
    if (p->mode == 1 || p->mode == 3) {
        cxla_strbuf_printf(out, "        const int64_t grp = %s_group(gs, %s, %s);\n", name, rowx,
                           li[p->rd]);
        if (p->mode == 1) ri[p->gd] = "grp";
        cxla_strbuf_puts(out, "        if (grp >= 0) {\n");
        depth = 3;
    }
    /* The contraction, first dimension outermost: the flattened index ascending. */
    for (int64_t i = 0; i < p->nc && K > 0; i++, depth++)
        cxla_strbuf_printf(out,
                           "%*sfor (int64_t k%" PRId64 " = 0; k%" PRId64 " < %" PRId64 "; k%" PRId64
                           "++) {\n",
                           4 * depth, "", i, i, ls->dims[p->lc[i]], i);
    if (K > 0) {
        int ind = 4 * depth;
        if (p->mode == 2) {
            cxla_strbuf_printf(out, "%*sif (%s_group(gs, %s, %s) == %s) {\n", ind, "", name, rowx,
                               li[p->rd], grp_out);
            ind += 4;
        }
        cxla_strbuf lo, ro;
        cxla_strbuf_init(&lo);
        cxla_strbuf_init(&ro);
        cxla_strbuf_puts(&lo, "0");
        cxla_strbuf_puts(&ro, "0");
        for (int64_t d = 0; d < ls->rank; d++)
            if (strcmp(li[d], "0")) cxla_strbuf_printf(&lo, " + %s * %" PRId64, li[d], p->lstr[d]);
        for (int64_t d = 0; d < rs->rank; d++)
            if (strcmp(ri[d], "0")) cxla_strbuf_printf(&ro, " + %s * %" PRId64, ri[d], p->rstr[d]);
        const char *a = in_kind(arena, p, ls->type, rt, F("lhs[%s]", lo.data ? lo.data : "0"));
        const char *b = in_kind(arena, p, rs->type, rt, F("rhs[%s]", ro.data ? ro.data : "0"));
        cpu_emit_buf_free(&lo);
        cpu_emit_buf_free(&ro);
        if (scaled) {
            /* Each operand element times its block's scale (scale_by: 0 + x * s). */
            const char *sv[2];
            for (int i = 0; i < 2; i++) {
                const cxla_shape *x = i ? rs : ls, *sc = &instr->operands[2 + i]->shape;
                const char *const *ix = i ? ri : li;
                int64_t sst[CXLA_MAX_RANK];
                strides(sc, sst);
                cxla_strbuf so;
                cxla_strbuf_init(&so);
                cxla_strbuf_puts(&so, "0");
                for (int64_t d = 0; d < x->rank; d++) {
                    if (!strcmp(ix[d], "0") || sc->dims[d] == 0) continue;
                    cxla_strbuf_printf(&so, " + %s / %" PRId64 " * %" PRId64, ix[d],
                                       x->dims[d] / sc->dims[d], sst[d]);
                }
                sv[i] = in_kind(arena, p, sc->type, rt,
                                F("%s[%s]", i ? "rsc" : "lsc", so.data ? so.data : "0"));
                cpu_emit_buf_free(&so);
            }
            cxla_strbuf_printf(out, "%*sconst %s a = (%s)(0.0 + %s);\n", ind, "", acc_t, acc_t,
                               product(arena, p->k, a, sv[0]));
            cxla_strbuf_printf(out, "%*sconst %s b = (%s)(0.0 + %s);\n", ind, "", acc_t, acc_t,
                               product(arena, p->k, b, sv[1]));
        } else {
            cxla_strbuf_printf(out, "%*sconst %s a = %s;\n", ind, "", acc_t, a);
            cxla_strbuf_printf(out, "%*sconst %s b = %s;\n", ind, "", acc_t, b);
        }
        if (p->k == K_F32)
            cxla_strbuf_printf(out, "%*sacc = (float)((double)acc + %s);\n", ind, "",
                               product(arena, p->k, "a", "b"));
        else
            cxla_strbuf_printf(out, "%*sacc += a * b;\n", ind, "");
        if (p->mode == 2) cxla_strbuf_printf(out, "%*s}\n", ind - 4, "");
    }
    for (depth--; depth >= 2; depth--) cxla_strbuf_printf(out, "%*s}\n", 4 * depth, "");
    /* Rounded once to the result type (cxla_store_f64 / cxla_store_s64). */
    const char *res;
    if (p->k == K_INT)
        res = cpu_emit_convert(arena, CXLA_U64, rt, "acc");
    else if (rt == CXLA_F32 || rt == CXLA_F64)
        res = F("(%s)acc", cpu_emit_ctype(rt));
    else
        res = F("cxla_st_%s_d((double)acc)", cxla_type_name(rt));
    cxla_strbuf_printf(out, "        y[o] = %s;\n    }\n}\n\n", res);
    if (info) {
        info->range = count > 0 ? count : 1;
        info->cost = (double)count * (double)(K > 0 ? K : 1) * 8.0;
    }
    return NULL;
}

cxla_status cpu_emit_ragged(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                            cpu_kernel_info *info) {
    rplan p;
    bool ok = instr->opcode == CXLA_OP_RAGGED_DOT   ? ragged_plan(instr, &p)
              : instr->opcode == CXLA_OP_SCALED_DOT ? scaled_plan(instr, &p)
                                                    : false;
    if (!ok)
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "cpu backend: cannot emit %s (%s)",
                          instr->name, cxla_opcode_name(instr->opcode));
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cxla_status s = emit_kernel(arena, instr, &p, name, out, info);
    cxla_arena_destroy(arena);
    return s;
}

cxla_status cpu_emit_ragged_check(const cxla_instr *instr, const void *group_sizes) {
    if (instr->opcode != CXLA_OP_RAGGED_DOT || instr->operand_count != 3) return NULL;
    const cxla_shape *gs = &instr->operands[2]->shape;
    if (!cxla_type_is_integer(gs->type) || gs->rank < 1) return NULL;
    int64_t g = gs->dims[gs->rank - 1], count = cpu_lib_count(gs);
    size_t es = cxla_type_storage(gs->type);
    for (int64_t i = 0; i < count; i++) {
        int64_t n = cxla_load_s64(gs->type, (const char *)group_sizes + (size_t)i * es);
        if (n < 0)
            return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                              "group %" PRId64 " has a negative size %" PRId64, i % g, n);
    }
    return NULL;
}
