/* What the emitter's kernel writers share beside emit.c's nests: small scalar
 * computations written inline (reducers, selectors, update computations, comparators;
 * reduce-window and select-and-scatter in emit_window.c, scatter in emit_gather.c, scan's
 * bodies in emit_scan.c call them), and the pieces of a kernel every writer prints (its
 * head comment, its entry point; the arrays kernels take). See emit_internal.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "cpu/emit_internal.h"

#define F(...) cpu_emit_fmt(w->arena, __VA_ARGS__)

/* Where scalar_value writes: statements at |indent| into |b|, temporaries f<tmp>. */
typedef struct writer {
    cxla_arena *arena;
    cxla_strbuf *b;
    int indent;
    int64_t tmp;
} writer;

static void ln(writer *w, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void ln(writer *w, const char *format, ...) {
    for (int i = 0; i < w->indent; i++) cxla_strbuf_puts(w->b, "    ");
    va_list args;
    va_start(args, format);
    cxla_strbuf_vprintf(w->b, format, args);
    va_end(args);
    cxla_strbuf_putc(w->b, '\n');
}

/* ---- scalar computations inline ------------------------------------------------------ */

/* Scalars of the emitter's types, sub-byte integers (one per byte) and complex values. */
static bool scalar_shape_ok(const cxla_shape *s) {
    return cxla_type_is_array(s->type) && s->rank == 0 && !s->dynamic &&
           (cpu_emit_type_ok(s->type) || cpu_emit_subbyte(s->type) ||
            cxla_type_is_complex(s->type));
}

/* A scalar, or with |over|, an array of exactly |over|'s dimensions (positionwise). */
static bool over_shape_ok(const cxla_shape *s, const cxla_shape *over) {
    if (!over) return scalar_shape_ok(s);
    if (!cxla_type_is_array(s->type) || s->type == CXLA_TUPLE || s->dynamic ||
        !cpu_emit_type_ok(s->type) || s->rank != over->rank)
        return false;
    for (int64_t d = 0; d < s->rank; d++)
        if (s->dims[d] != over->dims[d]) return false;
    return true;
}

static bool scalar_instr_ok(const cxla_instr *in, const cxla_shape *over) {
    if (!over_shape_ok(&in->shape, over)) return false;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (!over_shape_ok(&in->operands[k]->shape, over)) return false;
    cxla_type t = in->shape.type;
    const cxla_instr *const *ops = (const cxla_instr *const *)in->operands;
    switch (in->opcode) {
    case CXLA_OP_PARAMETER: return true;
    case CXLA_OP_CONSTANT:
        return in->literal && !in->literal_elided && cxla_literal_element_count(in->literal) == 1;
    case CXLA_OP_CONVERT: return true;
    case CXLA_OP_COPY: return ops[0]->shape.type == t;
    case CXLA_OP_COMPARE: {
        const char *d = cxla_instr_word(in, CXLA_ATTR_DIRECTION);
        if (cxla_type_is_complex(ops[0]->shape.type)) return false; /* not written inline yet */
        return d && ops[0]->shape.type == ops[1]->shape.type &&
               cpu_emit_compare(NULL, d, NULL, CXLA_PRED, "a", "b") != NULL;
    }
    case CXLA_OP_SELECT:
        return ops[0]->shape.type == CXLA_PRED && ops[1]->shape.type == t &&
               ops[2]->shape.type == t;
    default: break;
    }
    if (!(cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_ELEMENTWISE)) return false;
    if (in->operand_count == 1) return cpu_emit_unary_ok(in->opcode, ops[0]->shape.type);
    if (in->operand_count == 2)
        return ops[0]->shape.type == t && ops[1]->shape.type == t &&
               cpu_emit_binary_ok(in->opcode, t);
    return false;
}

bool cpu_emit_scalar_ok(const cxla_computation *c, int64_t nargs, int64_t nres) {
    return cpu_emit_positionwise_ok(c, nargs, nres, NULL);
}

bool cpu_emit_positionwise_ok(const cxla_computation *c, int64_t nargs, int64_t nres,
                              const cxla_shape *over) {
    if (!c || !c->root || c->param_count != nargs) return false;
    for (int64_t i = 0; i < c->instr_count; i++) {
        const cxla_instr *in = c->instrs[i];
        if (in == c->root && in->opcode == CXLA_OP_TUPLE) {
            if (nres == 1 || in->operand_count != nres) return false;
            for (int64_t k = 0; k < nres; k++)
                if (!over_shape_ok(&in->operands[k]->shape, over)) return false;
            continue;
        }
        if (in->opcode == CXLA_OP_TUPLE || !scalar_instr_ok(in, over)) return false;
    }
    return nres == 1 ? c->root->opcode != CXLA_OP_TUPLE : c->root->opcode == CXLA_OP_TUPLE;
}

/* The C text of the one element of a scalar constant, as its compute type. */
static const char *scalar_const(writer *w, const cxla_instr *in) {
    cxla_type t = in->shape.type;
    if (cxla_type_is_complex(t)) { /* the parts' bits (NaN payloads and -0 survive) */
        uint32_t q[2] = {0, 0};
        uint64_t p[2] = {0, 0};
        if (t == CXLA_C64) {
            memcpy(q, cxla_literal_data_const(in->literal), 8);
            return F("cxla_c64_bits(0x%08" PRIx32 "u, 0x%08" PRIx32 "u)", q[0], q[1]);
        }
        memcpy(p, cxla_literal_data_const(in->literal), 16);
        return F("cxla_c128_bits(0x%016" PRIx64 "ull, 0x%016" PRIx64 "ull)", p[0], p[1]);
    }
    uint64_t v = 0;
    size_t es = cxla_type_storage(t);
    memcpy(&v, cxla_literal_data_const(in->literal), es < 8 ? es : 8); /* little endian */
    if (t == CXLA_F32) return F("cxla_f32_from_bits(0x%08" PRIx64 "u)", v);
    if (t == CXLA_F64) return F("cxla_f64_from_bits(0x%016" PRIx64 "ull)", v);
    if (cpu_emit_is_small(t)) return F("(%s)0x%" PRIx64 "u", cpu_emit_ctype(t), v);
    if (cxla_type_is_signed(t)) {
        int bits = cxla_type_bits(t);
        int64_t s = bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
        if (s == INT64_MIN) return "INT64_MIN";
        return F("(%s)%" PRId64 "ll", cpu_emit_ctype(t), s);
    }
    return F("(%s)%" PRIu64 "ull", cpu_emit_ctype(t), v);
}

typedef struct scalar_ctx {
    writer *w;
    const cxla_computation *c;
    const char *const *args;
    const char **vals; /* per instruction of c, NULL until computed */
} scalar_ctx;

static const char *scalar_value(scalar_ctx *s, const cxla_instr *in) {
    int64_t at = 0;
    while (at < s->c->instr_count && s->c->instrs[at] != in) at++;
    if (at == s->c->instr_count) return "0"; /* not of this computation: checked before */
    if (s->vals[at]) return s->vals[at];
    writer *w = s->w;
    cxla_arena *arena = w->arena;
    cxla_type t = in->shape.type;
    const cxla_instr *const *ops = (const cxla_instr *const *)in->operands;
    const char *expr = NULL;
    switch (in->opcode) {
    case CXLA_OP_PARAMETER: return s->vals[at] = s->args[in->parameter_number];
    case CXLA_OP_CONSTANT: return s->vals[at] = scalar_const(w, in);
    case CXLA_OP_COPY: return s->vals[at] = scalar_value(s, ops[0]);
    case CXLA_OP_CONVERT:
        expr = cpu_emit_convert(arena, ops[0]->shape.type, t, scalar_value(s, ops[0]));
        break;
    case CXLA_OP_COMPARE: {
        cxla_type ot = ops[0]->shape.type;
        const char *a = cpu_emit_decode(arena, ot, scalar_value(s, ops[0]));
        const char *b = cpu_emit_decode(arena, ot, scalar_value(s, ops[1]));
        expr = cpu_emit_compare(arena, cxla_instr_word(in, CXLA_ATTR_DIRECTION),
                                cxla_instr_word(in, CXLA_ATTR_COMPARISON_TYPE),
                                cpu_emit_is_small(ot) ? CXLA_F32 : ot, a, b);
        break;
    }
    case CXLA_OP_SELECT:
        expr = F("%s ? %s : %s", scalar_value(s, ops[0]), scalar_value(s, ops[1]),
                 scalar_value(s, ops[2]));
        break;
    default: {
        /* Small floats: decoded, computed in f32, the result encoded (as emit.c). */
        cxla_type ot = ops[0]->shape.type, ct = cpu_emit_is_small(ot) ? CXLA_F32 : ot;
        cpu_emit_math_type(ot);
        if (in->operand_count == 1)
            expr = cpu_emit_unary(arena, in->opcode, ct,
                                  cpu_emit_decode(arena, ot, scalar_value(s, ops[0])));
        else
            expr = cpu_emit_binary(arena, in->opcode, ct,
                                   cpu_emit_decode(arena, ot, scalar_value(s, ops[0])),
                                   cpu_emit_decode(arena, ot, scalar_value(s, ops[1])));
        if (expr) expr = cpu_emit_encode(arena, t, expr);
        break;
    }
    }
    const char *v = F("f%" PRId64, w->tmp++);
    ln(w, "const %s %s = %s;", cpu_emit_ctype(t), v, expr ? expr : "0");
    return s->vals[at] = v;
}

void cpu_emit_scalar(cxla_arena *arena, cxla_strbuf *b, int indent, int64_t *tmp,
                     const cxla_computation *c, const char *const *args, const char **out) {
    writer wr = {arena, b, indent, *tmp};
    const char **vals = cxla_arena_alloc_array(arena, (size_t)c->instr_count + 1, sizeof *vals);
    if (!vals) {
        out[0] = "0";
        return;
    }
    memset(vals, 0, ((size_t)c->instr_count + 1) * sizeof *vals);
    scalar_ctx s = {&wr, c, args, vals};
    if (c->root->opcode == CXLA_OP_TUPLE) {
        for (int64_t k = 0; k < c->root->operand_count; k++)
            out[k] = scalar_value(&s, c->root->operands[k]);
    } else {
        out[0] = scalar_value(&s, c->root);
    }
    *tmp = wr.tmp;
}

/* ---- shared kernel pieces ------------------------------------------------------------ */

static bool default_layout(const cxla_shape *s) {
    if (!s->layout || s->rank == 0) return true;
    int64_t m2m[CXLA_MAX_RANK];
    cxla_shape_minor_to_major(s, m2m);
    for (int64_t k = 0; k < s->rank; k++)
        if (m2m[k] != s->rank - 1 - k) return false;
    return true;
}

bool cpu_emit_static_array(const cxla_shape *s) {
    return cxla_type_is_array(s->type) && !s->dynamic && default_layout(s) &&
           cpu_emit_type_ok(s->type);
}

bool cpu_emit_held_array(const cxla_shape *s) {
    return cxla_type_is_array(s->type) && !s->dynamic && default_layout(s) &&
           (cpu_emit_type_ok(s->type) || cpu_emit_subbyte(s->type) ||
            cxla_type_is_complex(s->type));
}

void cpu_emit_kernel_head(cxla_strbuf *out, const cxla_instr *instr, const char *name) {
    cxla_strbuf head;
    cxla_strbuf_init(&head);
    cxla_hlo_print_instr(&head, instr, CXLA_HLO_STYLE_SHORT);
    if (head.data) {
        for (char *p = strstr(head.data, "*/"); p; p = strstr(p, "*/")) p[1] = ' ';
        for (char *p = strstr(head.data, "/*"); p; p = strstr(p, "/*")) p[1] = ' ';
        for (char *p = head.data; *p; p++)
            if (*p == '\n') *p = ' ';
    }
    cxla_strbuf_printf(out, "/* ---- %s: %s */\n", name, head.data ? head.data : instr->name);
    cpu_emit_buf_free(&head);
}

void cpu_emit_kernel_entry(cxla_strbuf *out, const char *name, int64_t range, const char *args,
                           const char *pre) {
    cxla_strbuf_printf(out,
                       "/* Iterations [begin, end) of the outer loop, of %" PRId64 ". */\n"
                       "void %s(void *const *out, const void *const *in, int64_t begin, "
                       "int64_t end);\n"
                       "void %s(void *const *out, const void *const *in, int64_t begin, "
                       "int64_t end) {\n",
                       range, name, name);
    cxla_strbuf_printf(out, "    (void)in;\n    if (end > %" PRId64 ") end = %" PRId64 ";\n", range,
                       range);
    cxla_strbuf_puts(out, "    if (begin < 0) begin = 0;\n    if (begin >= end) return;\n");
    if (pre) cxla_strbuf_puts(out, pre);
    cxla_strbuf_printf(out, "    %s_body(%s, begin, end);\n}\n\n", name, args);
}
