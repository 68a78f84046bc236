/* What the emitter's kernel writers share beside emit.c's nests: small scalar
 * computations written inline (reducers, selectors, update computations, comparators;
 * reduce-window and select-and-scatter in emit_window.c, scatter in emit_gather.c, scan's
 * bodies in emit_scan.c call them; emit_lib.c's sort comparators, map functions and
 * reducers as C functions of their scalars), and the pieces of a kernel every writer prints
 * (its head comment, its entry point; the arrays kernels take). See emit_internal.h.
 *
 * A scalar computation is written as the interpreter evaluates it on one element: each
 * value a C temporary of its compute type (emit_expr.c), a tuple the list of its leaves,
 * a call or fusion its computation written in place on its operands' values. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "cpu/emit_internal.h"
#include "interp/interp.h"
#include "interp/interp_reduce.h"
#include "literal/literal_internal.h"

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

/* How deep calls and fusions nest inside one scalar computation, and how many scalars one
 * value (a tuple's leaves) may hold: bounds on the C written, far above what reducers and
 * comparators use. */
enum { MAX_DEPTH = 8, MAX_LEAVES = 64 };

/* The element types a scalar value may have: the emitter's, sub-byte integers (one per
 * byte) and complex values. */
static bool held_type(cxla_type t) {
    return cpu_emit_type_ok(t) || cpu_emit_subbyte(t) || cxla_type_is_complex(t);
}

/* One value: with |over| NULL, an array of exactly one element (any rank: a broadcast of
 * a scalar to f32[1,1] is still one value); with |over|, an array of exactly |over|'s
 * dimensions (positionwise). */
static bool over_shape_ok(const cxla_shape *s, const cxla_shape *over) {
    if (!cxla_type_is_array(s->type) || s->type == CXLA_TUPLE || s->type == CXLA_TOKEN ||
        s->dynamic)
        return false;
    if (!over) {
        for (int64_t d = 0; d < s->rank; d++)
            if (s->dims[d] != 1) return false;
        return held_type(s->type);
    }
    if (!cpu_emit_type_ok(s->type) || s->rank != over->rank) return false;
    for (int64_t d = 0; d < s->rank; d++)
        if (s->dims[d] != over->dims[d]) return false;
    return true;
}

/* The count of one-element values |s| holds: 1 for an array, a tuple's leaves depth
 * first; -1 when some leaf is not a value (over_shape_ok) or there are too many. */
static int64_t leaves_of(const cxla_shape *s, const cxla_shape *over) {
    if (s->type != CXLA_TUPLE) return over_shape_ok(s, over) ? 1 : -1;
    int64_t n = 0;
    for (int64_t k = 0; k < s->tuple_count; k++) {
        int64_t m = leaves_of(&s->elements[k], over);
        if (m < 0 || n + m > MAX_LEAVES) return -1;
        n += m;
    }
    return n;
}

static bool comp_ok(const cxla_computation *c, const cxla_shape *over, int depth);

/* A computation called with |ops| as its parameters, each of the parameter's shape. */
static bool callee_ok(const cxla_computation *c, const cxla_instr *const *ops, int64_t n,
                      const cxla_shape *over, int depth) {
    if (!c || !c->root || c->param_count != n || depth >= MAX_DEPTH) return false;
    for (int64_t k = 0; k < n; k++)
        if (!cxla_shape_equal(&c->params[k]->shape, &ops[k]->shape)) return false;
    return comp_ok(c, over, depth + 1);
}

/* reduce over one-element inputs: the reducer applied once to (inits..., inputs...), or
 * the interpreter's fold of a reducer it recognizes (see reduce_value). */
static bool reduce_ok(const cxla_instr *in, int depth) {
    int64_t n = in->operand_count / 2;
    const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    if (n < 1 || in->operand_count != 2 * n || !c || !c->root || c->param_count != 2 * n ||
        depth >= MAX_DEPTH)
        return false;
    if ((n == 1) != (in->shape.type != CXLA_TUPLE)) return false;
    if (n > 1 && in->shape.tuple_count != n) return false;
    for (int64_t i = 0; i < n; i++) {
        const cxla_shape *x = &in->operands[i]->shape, *init = &in->operands[n + i]->shape;
        const cxla_shape *r = n == 1 ? &in->shape : &in->shape.elements[i];
        if (x->type == CXLA_TUPLE || init->rank != 0 || x->type != init->type ||
            r->type != init->type || c->params[i]->shape.type != init->type ||
            c->params[i]->shape.rank != 0 || c->params[n + i]->shape.type != x->type ||
            c->params[n + i]->shape.rank != 0)
            return false;
    }
    return comp_ok(c, NULL, depth + 1);
}

static bool scalar_instr_ok(const cxla_instr *in, const cxla_shape *over, int depth) {
    if (leaves_of(&in->shape, over) < 0) return false;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (leaves_of(&in->operands[k]->shape, over) < 0) return false;
    cxla_type t = in->shape.type;
    bool array = t != CXLA_TUPLE;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (in->operands[k]->shape.type == CXLA_TUPLE && in->opcode != CXLA_OP_GET_TUPLE_ELEMENT &&
            in->opcode != CXLA_OP_COPY && in->opcode != CXLA_OP_CALL &&
            in->opcode != CXLA_OP_FUSION && in->opcode != CXLA_OP_TUPLE)
            return false; /* a tuple operand only where the value passes whole */
    const cxla_instr *const *ops = (const cxla_instr *const *)in->operands;
    cxla_type ot = in->operand_count ? ops[0]->shape.type : t;
    switch (in->opcode) {
    case CXLA_OP_PARAMETER: return true;
    case CXLA_OP_CONSTANT:
        return array && in->literal && !in->literal_elided &&
               cxla_literal_element_count(in->literal) == 1;
    case CXLA_OP_CONVERT: return array;
    case CXLA_OP_COPY: return cxla_shape_equal(&ops[0]->shape, &in->shape);
    case CXLA_OP_TUPLE: return true;
    case CXLA_OP_GET_TUPLE_ELEMENT: {
        int64_t i = -1;
        return in->operand_count == 1 && ot == CXLA_TUPLE &&
               cxla_instr_int(in, CXLA_ATTR_INDEX, &i) && i >= 0 && i < ops[0]->shape.tuple_count;
    }
    case CXLA_OP_CALL:
    case CXLA_OP_FUSION: {
        const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
        if (!c) c = cxla_instr_called(in, CXLA_ATTR_CALLS);
        return callee_ok(c, ops, in->operand_count, over, depth) &&
               cxla_shape_equal(&c->root->shape, &in->shape);
    }
    case CXLA_OP_MAP: {
        /* Over one element only: the computation takes scalars, not |over|'s arrays. */
        const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
        if (over || !array || !c || !c->root || c->param_count != in->operand_count ||
            depth >= MAX_DEPTH || c->root->shape.type != t || c->root->shape.rank != 0)
            return false;
        for (int64_t k = 0; k < in->operand_count; k++)
            if (c->params[k]->shape.rank != 0 || c->params[k]->shape.type != ops[k]->shape.type)
                return false;
        return comp_ok(c, NULL, depth + 1);
    }
    case CXLA_OP_REDUCE: return !over && reduce_ok(in, depth);
    case CXLA_OP_BROADCAST:
    case CXLA_OP_RESHAPE:
    case CXLA_OP_BITCAST:
    case CXLA_OP_TRANSPOSE:
    case CXLA_OP_REVERSE:
    case CXLA_OP_SLICE:
        /* One element in, the same element out. */
        return !over && array && in->operand_count == 1 && ot == t;
    case CXLA_OP_IOTA: return !over && array && in->operand_count == 0 && t != CXLA_PRED;
    case CXLA_OP_DYNAMIC_SLICE:
    case CXLA_OP_DYNAMIC_UPDATE_SLICE:
        /* Of one element the start indices can only be clamped to 0: the operand's element,
         * or the update's. */
        return !over && array && in->operand_count >= 2 && ot == t &&
               (in->opcode == CXLA_OP_DYNAMIC_SLICE || ops[1]->shape.type == t);
    case CXLA_OP_GET_DIMENSION_SIZE: {
        /* Static one-element operands: the size is the constant 1. */
        int64_t n = 0;
        const int64_t *d = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &n);
        return !over && in->operand_count == 1 && ot != CXLA_TUPLE && t == CXLA_S32 && n == 1 &&
               d[0] >= 0 && d[0] < ops[0]->shape.rank;
    }
    case CXLA_OP_COMPLEX:
        /* Made from two parts of one real type (emit_expr.c). */
        return array && in->operand_count == 2 && ops[1]->shape.type == ot &&
               ((ot == CXLA_F32 && t == CXLA_C64) || (ot == CXLA_F64 && t == CXLA_C128));
    case CXLA_OP_BITCAST_CONVERT:
        /* Whole bytes of one width: the bits as they are (the interpreter's memcpy). Not
         * pred (a byte other than 0 and 1 is no pred the kernels hold) nor sub-byte. */
        return array && in->operand_count == 1 && ot != CXLA_PRED && t != CXLA_PRED &&
               !cpu_emit_subbyte(ot) && !cpu_emit_subbyte(t) &&
               cxla_type_bits(ot) == cxla_type_bits(t) && cxla_type_bits(t) % 8 == 0 &&
               cxla_type_storage(ot) == cxla_type_storage(t);
    case CXLA_OP_COMPARE: {
        const char *d = cxla_instr_word(in, CXLA_ATTR_DIRECTION);
        const char *ct = cxla_instr_word(in, CXLA_ATTR_COMPARISON_TYPE);
        if (!d || in->operand_count != 2 || ot != ops[1]->shape.type) return false;
        if (cxla_type_is_complex(ot)) /* EQ and NE by parts, as the interpreter */
            return (!strcmp(d, "EQ") || !strcmp(d, "NE")) && !(ct && !strcmp(ct, "TOTALORDER"));
        return cpu_emit_compare(NULL, d, NULL, CXLA_PRED, "a", "b") != NULL;
    }
    case CXLA_OP_SELECT:
        return array && in->operand_count == 3 && ot == CXLA_PRED && ops[1]->shape.type == t &&
               ops[2]->shape.type == t;
    case CXLA_OP_CLAMP:
        /* emit.c's clamp: not complex (the interpreter refuses it). */
        return array && in->operand_count == 3 && !cxla_type_is_complex(t) && ot == t &&
               ops[1]->shape.type == t && ops[2]->shape.type == t;
    default: break;
    }
    if (!array || !(cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_ELEMENTWISE)) return false;
    if (in->opcode == CXLA_OP_STOCHASTIC_CONVERT) return false;
    if (in->operand_count == 1) return cpu_emit_unary_ok(in->opcode, ot);
    if (in->operand_count == 2)
        return ot == t && ops[1]->shape.type == t && cpu_emit_binary_ok(in->opcode, t);
    return false;
}

static bool comp_ok(const cxla_computation *c, const cxla_shape *over, int depth) {
    for (int64_t i = 0; i < c->instr_count; i++)
        if (!scalar_instr_ok(c->instrs[i], over, depth)) return false;
    return true;
}

bool cpu_emit_scalar_ok(const cxla_computation *c, int64_t nargs, int64_t nres) {
    return cpu_emit_positionwise_ok(c, nargs, nres, NULL);
}

bool cpu_emit_positionwise_ok(const cxla_computation *c, int64_t nargs, int64_t nres,
                              const cxla_shape *over) {
    if (!c || !c->root || c->param_count != nargs) return false;
    for (int64_t k = 0; k < nargs; k++)
        if (c->params[k]->shape.type == CXLA_TUPLE || !over_shape_ok(&c->params[k]->shape, over))
            return false;
    /* The results: one value, or a root tuple of |nres| values. */
    const cxla_instr *root = c->root;
    if (nres == 1) {
        if (root->shape.type == CXLA_TUPLE) return false;
    } else {
        if (root->opcode != CXLA_OP_TUPLE || root->operand_count != nres) return false;
        for (int64_t k = 0; k < nres; k++)
            if (root->operands[k]->shape.type == CXLA_TUPLE) return false;
    }
    return comp_ok(c, over, 0);
}

/* The C text of the one element at |p| of type |t|, as its compute type: the bits (NaN
 * payloads and -0 survive). */
static const char *bits_const(writer *w, cxla_type t, const void *p) {
    if (cxla_type_is_complex(t)) {
        uint32_t q[2] = {0, 0};
        uint64_t d[2] = {0, 0};
        if (t == CXLA_C64) {
            memcpy(q, p, 8);
            return F("cxla_c64_bits(0x%08" PRIx32 "u, 0x%08" PRIx32 "u)", q[0], q[1]);
        }
        memcpy(d, p, 16);
        return F("cxla_c128_bits(0x%016" PRIx64 "ull, 0x%016" PRIx64 "ull)", d[0], d[1]);
    }
    uint64_t v = 0;
    size_t es = cxla_type_storage(t);
    memcpy(&v, p, es < 8 ? es : 8); /* little endian */
    if (t == CXLA_F32) return F("cxla_f32_from_bits(0x%08" PRIx64 "u)", v);
    if (t == CXLA_F64) return F("cxla_f64_from_bits(0x%016" PRIx64 "ull)", v);
    if (cpu_emit_is_small(t) || t == CXLA_PRED)
        return F("(%s)0x%" PRIx64 "u", cpu_emit_ctype(t), v);
    if (cxla_type_is_signed(t)) {
        int bits = cxla_type_bits(t);
        int64_t s = bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
        if (s == INT64_MIN) return "INT64_MIN";
        return F("(%s)%" PRId64 "ll", cpu_emit_ctype(t), s);
    }
    return F("(%s)%" PRIu64 "ull", cpu_emit_ctype(t), v);
}

/* A value: its scalars' C names, a tuple's leaves depth first. */
typedef struct sval {
    int64_t n;
    const char **leaf;
} sval;

/* One computation being written: its arguments' values and the values computed so far. */
typedef struct scalar_ctx {
    writer *w;
    const cxla_computation *c;
    const sval *args;
    const sval **vals; /* per instruction of c, NULL until computed */
} scalar_ctx;

static const sval *one(writer *w, const char *name) {
    sval *v = cxla_arena_alloc(w->arena, sizeof *v);
    const char **l = cxla_arena_alloc(w->arena, sizeof *l);
    if (!v || !l) {
        static const char *zero = "0";
        static const sval none = {1, &zero};
        return &none;
    }
    l[0] = name;
    v->n = 1;
    v->leaf = l;
    return v;
}

/* A new temporary of |t| holding |expr|. */
static const char *temp(writer *w, cxla_type t, const char *expr, const char *what) {
    const char *v = F("f%" PRId64, w->tmp++);
    ln(w, "const %s %s = %s; /* %s */", cpu_emit_ctype(t), v, expr ? expr : "0", what);
    ln(w, "(void)%s;", v);
    return v;
}

static const sval *scalar_value(scalar_ctx *s, const cxla_instr *in);

/* Writes |c| on |args|; the value of its root. */
static const sval *call_value(writer *w, const cxla_computation *c, const sval *args) {
    const sval **vals = cxla_arena_alloc_array(w->arena, (size_t)c->instr_count + 1, sizeof *vals);
    if (!vals) return one(w, "0");
    memset(vals, 0, ((size_t)c->instr_count + 1) * sizeof *vals);
    scalar_ctx s = {w, c, args, vals};
    return scalar_value(&s, c->root);
}

static const char *leaf0(scalar_ctx *s, const cxla_instr *in) {
    return scalar_value(s, in)->leaf[0];
}

/* reduce over one-element inputs (reduce_ok). A reducer the interpreter recognizes is its
 * fold: acc = init, then acc op x (fold_pred's rules for pred), whatever order the
 * computation names its parameters in; any other is the computation on (inits, inputs). */
static const sval *reduce_value(scalar_ctx *s, const cxla_instr *in) {
    writer *w = s->w;
    cxla_arena *arena = w->arena;
    int64_t n = in->operand_count / 2;
    const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    cxla_type t = in->operands[0]->shape.type;
    interp_reducer kind = n == 1 ? interp_match_reducer(c) : INTERP_REDUCER_NONE;
    if (kind != INTERP_REDUCER_NONE && interp_reducer_supports(kind, t)) {
        const char *acc = leaf0(s, in->operands[1]), *x = leaf0(s, in->operands[0]);
        if (t == CXLA_PRED) {
            const char *op = kind == INTERP_REDUCER_XOR ? "^"
                             : kind == INTERP_REDUCER_ADD || kind == INTERP_REDUCER_OR ||
                                     kind == INTERP_REDUCER_MAX
                                 ? "|"
                                 : "&";
            return one(w, temp(w, t, F("(uint8_t)((%s %s %s) != 0)", acc, op, x), in->name));
        }
        static const cxla_opcode op_of[] = {
            [INTERP_REDUCER_ADD] = CXLA_OP_ADD,     [INTERP_REDUCER_MUL] = CXLA_OP_MULTIPLY,
            [INTERP_REDUCER_MAX] = CXLA_OP_MAXIMUM, [INTERP_REDUCER_MIN] = CXLA_OP_MINIMUM,
            [INTERP_REDUCER_AND] = CXLA_OP_AND,     [INTERP_REDUCER_OR] = CXLA_OP_OR,
            [INTERP_REDUCER_XOR] = CXLA_OP_XOR,
        };
        cxla_type ct = cpu_emit_is_small(t) ? CXLA_F32 : t;
        cpu_emit_math_type(t);
        const char *e = cpu_emit_binary(arena, op_of[kind], ct, cpu_emit_decode(arena, t, acc),
                                        cpu_emit_decode(arena, t, x));
        return one(w, temp(w, t, e ? cpu_emit_encode(arena, t, e) : NULL, in->name));
    }
    sval *args = cxla_arena_alloc_array(arena, (size_t)(2 * n), sizeof *args);
    if (!args) return one(w, "0");
    for (int64_t i = 0; i < n; i++) {
        args[i] = *scalar_value(s, in->operands[n + i]);
        args[n + i] = *scalar_value(s, in->operands[i]);
    }
    return call_value(w, c, args);
}

static const sval *scalar_value_of(scalar_ctx *s, const cxla_instr *in) {
    writer *w = s->w;
    cxla_arena *arena = w->arena;
    cxla_type t = in->shape.type;
    const cxla_instr *const *ops = (const cxla_instr *const *)in->operands;
    const char *expr = NULL;
    switch (in->opcode) {
    case CXLA_OP_PARAMETER: return &s->args[in->parameter_number];
    case CXLA_OP_CONSTANT: return one(w, bits_const(w, t, cxla_literal_data_const(in->literal)));
    case CXLA_OP_COPY:
    case CXLA_OP_BROADCAST:
    case CXLA_OP_RESHAPE:
    case CXLA_OP_BITCAST:
    case CXLA_OP_TRANSPOSE:
    case CXLA_OP_REVERSE:
    case CXLA_OP_SLICE:
    case CXLA_OP_DYNAMIC_SLICE: return scalar_value(s, ops[0]);
    case CXLA_OP_DYNAMIC_UPDATE_SLICE: return scalar_value(s, ops[1]);
    case CXLA_OP_GET_DIMENSION_SIZE: return one(w, "(int32_t)1");
    case CXLA_OP_TUPLE: {
        sval *v = cxla_arena_alloc(arena, sizeof *v);
        const char **l = cxla_arena_alloc_array(arena, MAX_LEAVES, sizeof *l);
        if (!v || !l) return one(w, "0");
        v->n = 0;
        v->leaf = l;
        for (int64_t k = 0; k < in->operand_count; k++) {
            const sval *e = scalar_value(s, ops[k]);
            for (int64_t j = 0; j < e->n && v->n < MAX_LEAVES; j++) l[v->n++] = e->leaf[j];
        }
        return v;
    }
    case CXLA_OP_GET_TUPLE_ELEMENT: {
        const sval *whole = scalar_value(s, ops[0]);
        int64_t index = 0, at = 0;
        cxla_instr_int(in, CXLA_ATTR_INDEX, &index);
        for (int64_t k = 0; k < index; k++) at += leaves_of(&ops[0]->shape.elements[k], NULL);
        sval *v = cxla_arena_alloc(arena, sizeof *v);
        if (!v) return one(w, "0");
        v->n = leaves_of(&in->shape, NULL);
        v->leaf = whole->leaf + at;
        return v;
    }
    case CXLA_OP_CALL:
    case CXLA_OP_FUSION:
    case CXLA_OP_MAP: {
        const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
        if (!c) c = cxla_instr_called(in, CXLA_ATTR_CALLS);
        sval *args = cxla_arena_alloc_array(arena, (size_t)in->operand_count + 1, sizeof *args);
        if (!args) return one(w, "0");
        for (int64_t k = 0; k < in->operand_count; k++) args[k] = *scalar_value(s, ops[k]);
        ln(w, "/* %s: %s */", in->name, c->name);
        return call_value(w, c, args);
    }
    case CXLA_OP_REDUCE: return reduce_value(s, in);
    case CXLA_OP_IOTA: {
        /* Index 0, stored as the interpreter's iota stores it. */
        unsigned char zero[16] = {0};
        if (!cxla_type_is_complex(t)) cxla_store_s64(t, zero, 0);
        return one(w, bits_const(w, t, zero));
    }
    case CXLA_OP_BITCAST_CONVERT: {
        const char *v = F("f%" PRId64, w->tmp++), *x = leaf0(s, ops[0]);
        ln(w, "%s %s; /* %s */", cpu_emit_ctype(t), v, in->name);
        ln(w, "memcpy(&%s, &%s, sizeof(%s));", v, x, v);
        ln(w, "(void)%s;", v);
        return one(w, v);
    }
    case CXLA_OP_CONVERT:
        expr = cpu_emit_convert(arena, ops[0]->shape.type, t, leaf0(s, ops[0]));
        break;
    case CXLA_OP_COMPARE: {
        cxla_type ot = ops[0]->shape.type;
        const char *a = cpu_emit_decode(arena, ot, leaf0(s, ops[0]));
        const char *b = cpu_emit_decode(arena, ot, leaf0(s, ops[1]));
        expr = cpu_emit_compare(arena, cxla_instr_word(in, CXLA_ATTR_DIRECTION),
                                cxla_instr_word(in, CXLA_ATTR_COMPARISON_TYPE),
                                cpu_emit_is_small(ot) ? CXLA_F32 : ot, a, b);
        break;
    }
    case CXLA_OP_SELECT:
        expr = F("%s ? %s : %s", leaf0(s, ops[0]), leaf0(s, ops[1]), leaf0(s, ops[2]));
        break;
    case CXLA_OP_CLAMP: {
        /* emit.c's clamp rule for rule: floats min(hi, max(lo, x)) in f32 (small floats
         * rounded back), integers by two comparisons. */
        const char *lo = leaf0(s, ops[0]), *x = leaf0(s, ops[1]), *hi = leaf0(s, ops[2]);
        if (cxla_type_is_float(t)) {
            const char *sfx = t == CXLA_F64 ? "f64" : "f32";
            expr = cpu_emit_encode(arena, t,
                                   F("cxla_min_%s(%s, cxla_max_%s(%s, %s))", sfx,
                                     cpu_emit_decode(arena, t, hi), sfx,
                                     cpu_emit_decode(arena, t, lo), cpu_emit_decode(arena, t, x)));
        } else {
            const char *m = temp(w, t, F("%s >= %s ? %s : %s", lo, x, lo, x), in->name);
            expr = F("%s <= %s ? %s : %s", hi, m, hi, m);
        }
        break;
    }
    default: {
        /* Small floats: decoded, computed in f32, the result encoded (as emit.c). */
        cxla_type ot = ops[0]->shape.type, ct = cpu_emit_is_small(ot) ? CXLA_F32 : ot;
        cpu_emit_math_type(ot);
        if (in->operand_count == 1)
            expr =
                cpu_emit_unary(arena, in->opcode, ct, cpu_emit_decode(arena, ot, leaf0(s, ops[0])));
        else
            expr =
                cpu_emit_binary(arena, in->opcode, ct, cpu_emit_decode(arena, ot, leaf0(s, ops[0])),
                                cpu_emit_decode(arena, ot, leaf0(s, ops[1])));
        if (expr) expr = cpu_emit_encode(arena, t, expr);
        break;
    }
    }
    return one(w, temp(w, t, expr, in->name));
}

static const sval *scalar_value(scalar_ctx *s, const cxla_instr *in) {
    int64_t at = 0;
    while (at < s->c->instr_count && s->c->instrs[at] != in) at++;
    if (at == s->c->instr_count) return one(s->w, "0"); /* not of this computation */
    if (!s->vals[at]) s->vals[at] = scalar_value_of(s, in);
    return s->vals[at];
}

void cpu_emit_scalar(cxla_arena *arena, cxla_strbuf *b, int indent, int64_t *tmp,
                     const cxla_computation *c, const char *const *args, const char **out) {
    writer wr = {arena, b, indent, *tmp};
    sval *a = cxla_arena_alloc_array(arena, (size_t)c->param_count + 1, sizeof *a);
    if (!a) {
        out[0] = "0";
        return;
    }
    const char **names = cxla_arena_alloc_array(arena, (size_t)c->param_count + 1, sizeof *names);
    if (!names) {
        out[0] = "0";
        return;
    }
    for (int64_t k = 0; k < c->param_count; k++) {
        names[k] = args[k];
        a[k].n = 1;
        a[k].leaf = &names[k];
    }
    const sval *r = call_value(&wr, c, a);
    for (int64_t k = 0; k < r->n; k++) out[k] = r->leaf[k];
    *tmp = wr.tmp;
}

bool cpu_emit_scalar_function_ok(const cxla_computation *c, int64_t nparams, const cxla_type *rts,
                                 int64_t nr) {
    if (!cpu_emit_scalar_ok(c, nparams, nr)) return false;
    for (int64_t k = 0; k < nparams; k++)
        if (c->params[k]->shape.rank != 0) return false;
    for (int64_t k = 0; k < nr; k++) {
        const cxla_shape *r = nr == 1 ? &c->root->shape : &c->root->operands[k]->shape;
        if (r->type != rts[k] || r->rank != 0) return false;
    }
    return true;
}

cxla_status cpu_emit_scalar_function(cxla_arena *arena, const cxla_computation *c,
                                     const char *fname, cxla_strbuf *out) {
    const cxla_instr *root = c->root;
    bool tuple = root->opcode == CXLA_OP_TUPLE;
    int64_t nr = tuple ? root->operand_count : 1;
    const char **pname = cxla_arena_alloc_array(arena, (size_t)c->param_count + 1, sizeof *pname);
    const char **res = cxla_arena_alloc_array(arena, (size_t)nr + 1, sizeof *res);
    if (!pname || !res) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cxla_strbuf_printf(out, "/* The computation %s. */\nstatic inline %s %s(", c->name,
                       tuple ? "void" : cpu_emit_ctype(root->shape.type), fname);
    for (int64_t k = 0; k < c->param_count; k++) {
        cxla_strbuf_printf(out, "%s%s p%" PRId64, k ? ", " : "",
                           cpu_emit_ctype(c->params[k]->shape.type), k);
        pname[k] = cpu_emit_fmt(arena, "p%" PRId64, k);
    }
    for (int64_t k = 0; tuple && k < nr; k++)
        cxla_strbuf_printf(out, ", %s *o%" PRId64, cpu_emit_ctype(root->operands[k]->shape.type),
                           k);
    cxla_strbuf_puts(out, ") {\n");
    for (int64_t k = 0; k < c->param_count; k++)
        cxla_strbuf_printf(out, "    (void)p%" PRId64 ";\n", k);
    int64_t tmp = 0;
    cpu_emit_scalar(arena, out, 1, &tmp, c, pname, res);
    for (int64_t k = 0; k < nr; k++) {
        if (tuple)
            cxla_strbuf_printf(out, "    *o%" PRId64 " = %s;\n", k, res[k]);
        else
            cxla_strbuf_printf(out, "    return %s;\n", res[k]);
    }
    cxla_strbuf_puts(out, "}\n");
    return NULL;
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
