/* The kernel structure of the emitter (see emit.h): loop nests over outputs, the index
 * of each operand element, fusion, reductions, constants.
 *
 * A value is emitted on demand: value(instr, index) writes the statements that compute
 * |instr| at |index| and names the C variable that holds it. An index is a C expression
 * per dimension and/or one linear (row-major) offset; each is derived from the other
 * when needed, so a chain of elementwise operations and reshapes runs one flat loop and
 * reads its operands at the loop counter. Values are reused within a scope (one element
 * of the loop; a branch of a pad or concatenate), and values at a rank-0 index do not
 * depend on the loop and are computed once before it. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cpu/emit_internal.h"

enum { MAX_CONSTANT_ELEMENTS = 1 << 16, PAIRWISE_LEAF = 16 };

typedef struct ix {
    int64_t rank;
    const int64_t *dims;
    const char *d[CXLA_MAX_RANK]; /* per dimension; NULL until derived */
    const char *lin;              /* row-major offset; NULL until derived */
} ix;

typedef struct cse_entry {
    const cxla_instr *instr;
    const char *key;
    const char *var;
} cse_entry;

typedef struct em {
    cxla_arena *arena;
    cxla_strbuf *b;     /* where statements go now */
    cxla_strbuf *hoist; /* loop-invariant statements (NULL: inline) */
    cxla_strbuf consts; /* file-scope constants of this kernel */
    cxla_strbuf helpers;
    const char *name;
    int indent, hoist_indent;
    int64_t tmp;
    const cxla_instr *top;         /* the instruction the kernel computes */
    const cxla_computation *fused; /* its fused computation, or NULL */
    cse_entry *cse;
    int64_t ncse, capcse;
    cxla_status err;
} em;

#define F(...) cpu_emit_fmt(e->arena, __VA_ARGS__)

static void line(em *e, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void line(em *e, const char *format, ...) {
    for (int i = 0; i < e->indent; i++) cxla_strbuf_puts(e->b, "    ");
    va_list args;
    va_start(args, format);
    cxla_strbuf_vprintf(e->b, format, args);
    va_end(args);
    cxla_strbuf_putc(e->b, '\n');
}

static void fail(em *e, const cxla_instr *instr, const char *why) {
    if (e->err) return;
    if (instr != e->top)
        e->err = cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                            "cpu backend: cannot emit %s (%s) in fusion %s: %s", instr->name,
                            cxla_opcode_name(instr->opcode), e->top->name, why);
    else
        e->err = cxla_error(CXLA_STATUS_UNIMPLEMENTED, "cpu backend: cannot emit %s (%s): %s",
                            instr->name, cxla_opcode_name(instr->opcode), why);
}

/* ---- indices ------------------------------------------------------------------------- */

static int64_t stride_of(const ix *x, int64_t k) {
    int64_t s = 1;
    for (int64_t j = k + 1; j < x->rank; j++) s *= x->dims[j];
    return s;
}

static ix ix_new(int64_t rank, const int64_t *dims) {
    ix x;
    memset(&x, 0, sizeof x);
    x.rank = rank;
    x.dims = dims;
    if (rank == 0) x.lin = "0";
    return x;
}

static const char *ix_dim(em *e, ix *x, int64_t k) {
    if (x->d[k]) return x->d[k];
    if (x->dims[k] == 1) return x->d[k] = "0";
    int64_t s = stride_of(x, k);
    if (k == 0)
        x->d[k] = s == 1 ? x->lin : F("(%s / %" PRId64 ")", x->lin, s);
    else if (s == 1)
        x->d[k] = F("(%s %% %" PRId64 ")", x->lin, x->dims[k]);
    else
        x->d[k] = F("(%s / %" PRId64 " %% %" PRId64 ")", x->lin, s, x->dims[k]);
    return x->d[k];
}

static const char *ix_lin(em *e, ix *x) {
    if (x->lin) return x->lin;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    for (int64_t k = 0; k < x->rank; k++) {
        if (x->dims[k] == 1) continue;
        int64_t s = stride_of(x, k);
        if (b.len) cxla_strbuf_puts(&b, " + ");
        if (s == 1)
            cxla_strbuf_puts(&b, x->d[k]);
        else
            cxla_strbuf_printf(&b, "%s * %" PRId64, x->d[k], s);
    }
    x->lin = b.len ? F("(%s)", b.data) : "0";
    cxla_strbuf_free(&b);
    return x->lin;
}

static const char *ix_key(em *e, ix *x) {
    if (x->rank == 0) return "";
    return ix_lin(e, x);
}

/* ---- scopes of reusable values ------------------------------------------------------- */

static const char *cse_find(em *e, const cxla_instr *instr, const char *key) {
    for (int64_t i = e->ncse - 1; i >= 0; i--)
        if (e->cse[i].instr == instr && strcmp(e->cse[i].key, key) == 0) return e->cse[i].var;
    return NULL;
}

static void cse_add(em *e, const cxla_instr *instr, const char *key, const char *var) {
    if (e->ncse == e->capcse) {
        int64_t cap = e->capcse ? 2 * e->capcse : 64;
        cse_entry *n = cxla_arena_alloc_array(e->arena, (size_t)cap, sizeof *n);
        if (!n) {
            e->err = e->err ? e->err : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
            return;
        }
        if (e->ncse) memcpy(n, e->cse, (size_t)e->ncse * sizeof *n);
        e->cse = n;
        e->capcse = cap;
    }
    e->cse[e->ncse++] = (cse_entry){instr, key, var};
}

/* ---- inputs and constants ------------------------------------------------------------ */

/* The kernel input |instr| is, or -1: a parameter of the fused computation, or an operand
 * of an unfused instruction. */
static int64_t input_index(const em *e, const cxla_instr *instr) {
    if (e->fused) return instr->opcode == CXLA_OP_PARAMETER ? instr->parameter_number : -1;
    for (int64_t k = 0; k < e->top->operand_count; k++)
        if (e->top->operands[k] == instr) return k;
    return -1;
}

static uint64_t raw_element(const cxla_literal *lit, int64_t i) {
    size_t es = cxla_type_storage(cxla_literal_shape(lit)->type);
    const unsigned char *p = (const unsigned char *)cxla_literal_data_const(lit) + (size_t)i * es;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64 = 0;
    switch (es) {
    case 1: memcpy(&u8, p, 1); return u8;
    case 2: memcpy(&u16, p, 2); return u16;
    case 4: memcpy(&u32, p, 4); return u32;
    default: memcpy(&u64, p, 8); return u64;
    }
}

/* The C text of element bits |v| of type |t| as a value of its compute type. */
static const char *const_value(em *e, cxla_type t, uint64_t v) {
    switch (t) {
    case CXLA_F32: return F("cxla_f32_from_bits(0x%08" PRIx64 "u)", v);
    case CXLA_F64: return F("cxla_f64_from_bits(0x%016" PRIx64 "ull)", v);
    default: break;
    }
    if (cpu_emit_is_small(t)) return F("(%s)0x%" PRIx64 "u", cpu_emit_ctype(t), v);
    if (cxla_type_is_signed(t)) {
        int bits = cxla_type_bits(t);
        int64_t s = bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
        if (s == INT64_MIN) return "INT64_MIN";
        return F("(%s)%" PRId64 "ll", cpu_emit_ctype(t), s);
    }
    return F("(%s)%" PRIu64 "ull", cpu_emit_ctype(t), v);
}

/* The storage type of a constant array: floats as their bits (NaN payloads survive). */
static const char *const_array_type(cxla_type t) {
    if (t == CXLA_F32) return "uint32_t";
    if (t == CXLA_F64) return "uint64_t";
    return cpu_emit_stype(t);
}

/* Emits |instr|'s literal as a static array; returns its name. */
static const char *const_array(em *e, const cxla_instr *instr) {
    const cxla_literal *lit = instr->literal;
    cxla_type t = instr->shape.type;
    int64_t n = cxla_literal_element_count(lit);
    const char *name = F("%s_c%" PRId64, e->name, instr->id);
    cxla_strbuf_printf(&e->consts, "/* %s */\nstatic const %s %s[%" PRId64 "] = {", instr->name,
                       const_array_type(t), name, n);
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = raw_element(lit, i);
        const char *sep = i % 8 == 0 ? "\n    " : " ";
        if (cxla_type_is_signed(t)) {
            int bits = cxla_type_bits(t);
            int64_t s = bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
            if (s == INT64_MIN)
                cxla_strbuf_printf(&e->consts, "%sINT64_MIN", sep);
            else
                cxla_strbuf_printf(&e->consts, "%s%" PRId64 "%s", sep, s, bits == 64 ? "ll" : "");
        } else {
            cxla_strbuf_printf(&e->consts, "%s0x%" PRIx64 "%s", sep, v,
                               cxla_type_storage(t) == 8 ? "ull" : "u");
        }
        if (i + 1 < n) cxla_strbuf_putc(&e->consts, ',');
    }
    cxla_strbuf_puts(&e->consts, "};\n");
    return name;
}

/* A load of element |at| of storage array |arr| of type |t|, as its compute type. */
static const char *load(em *e, cxla_type t, const char *arr, const char *at, bool raw_floats) {
    const char *x = F("%s[%s]", arr, at);
    if (raw_floats && t == CXLA_F32) return F("cxla_f32_from_bits(%s)", x);
    if (raw_floats && t == CXLA_F64) return F("cxla_f64_from_bits(%s)", x);
    return x;
}

/* ---- values -------------------------------------------------------------------------- */

static const char *value(em *e, const cxla_instr *instr, ix *x);

/* The HLO text of |instr| as a comment. */
static void comment(em *e, const cxla_instr *instr) {
    cxla_strbuf t;
    cxla_strbuf_init(&t);
    cxla_hlo_print_instr(&t, instr, CXLA_HLO_STYLE_SHORT);
    if (t.data) {
        /* Neither the end nor the start of a comment (-Wcomment) inside the comment. */
        for (char *p = strstr(t.data, "*/"); p; p = strstr(p, "*/")) p[1] = ' ';
        for (char *p = strstr(t.data, "/*"); p; p = strstr(p, "/*")) p[1] = ' ';
        for (char *p = t.data; *p; p++)
            if (*p == '\n') *p = ' ';
        if (t.len > 200) memcpy(t.data + 196, " ...", 5);
        line(e, "/* %s */", t.data);
    }
    cxla_strbuf_free(&t);
}

/* An operand's index when it has the same dimensions as |x| (elementwise), or is a
 * scalar broadcast implicitly (select's predicate, clamp's bounds). */
static ix same_ix(em *e, const cxla_instr *operand, ix *x) {
    if (operand->shape.rank == 0) return ix_new(0, NULL);
    (void)e;
    ix y = *x;
    y.dims = operand->shape.dims;
    return y;
}

/* A start index of dynamic-slice / dynamic-update-slice: operand |k| as int64_t, clamped
 * to [0, hi] (the interpreter's read_starts). */
static const char *start_index(em *e, const cxla_instr *instr, int64_t k, int64_t hi) {
    const cxla_instr *op = instr->operands[k];
    ix s = ix_new(0, NULL);
    const char *v = value(e, op, &s);
    const char *as64 = op->shape.type == CXLA_U64
                           ? F("(%s > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)%s)", v, v)
                           : F("(int64_t)%s", v);
    return F("cxla_clamp_index(%s, %" PRId64 ")", as64, hi);
}

/* Emits the statements of |instr| at |x| into a new variable; returns its name. */
static const char *compute(em *e, const cxla_instr *instr, ix *x) {
    cxla_arena *arena = e->arena;
    cxla_type t = instr->shape.type;
    const char *CT = cpu_emit_ctype(t);
    const char *v = F("v%" PRId64, e->tmp++);
    int64_t in = input_index(e, instr);
    if (in >= 0) {
        line(e, "const %s %s = %s;", CT, v, load(e, t, F("p%" PRId64, in), ix_lin(e, x), false));
        return v;
    }
    cxla_opcode op = instr->opcode;
    const cxla_instr *const *ops = (const cxla_instr *const *)instr->operands;
    const char *expr = NULL;
    switch (op) {
    case CXLA_OP_CONSTANT: {
        if (cxla_literal_element_count(instr->literal) == 0) return "0"; /* never read */
        if (instr->shape.rank == 0 || cxla_literal_element_count(instr->literal) == 1)
            return const_value(e, t, raw_element(instr->literal, 0));
        expr = load(e, t, const_array(e, instr), ix_lin(e, x), true);
        break;
    }
    case CXLA_OP_IOTA: {
        int64_t d = 0;
        cxla_instr_int(instr, CXLA_ATTR_IOTA_DIMENSION, &d);
        expr = cpu_emit_convert(arena, CXLA_S64, t, ix_dim(e, x, d));
        break;
    }
    case CXLA_OP_COPY:
    case CXLA_OP_RESHAPE:
    case CXLA_OP_BITCAST: {
        ix y = ix_new(ops[0]->shape.rank, ops[0]->shape.dims);
        if (ops[0]->shape.rank > 0) y.lin = ix_lin(e, x); /* a scalar is read at "0" */
        return value(e, ops[0], &y);
    }
    case CXLA_OP_BROADCAST: {
        int64_t n = 0;
        const int64_t *dims = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &n);
        ix y = ix_new(ops[0]->shape.rank, ops[0]->shape.dims);
        for (int64_t k = 0; k < n; k++) y.d[k] = ix_dim(e, x, dims[k]);
        return value(e, ops[0], &y);
    }
    case CXLA_OP_TRANSPOSE: {
        int64_t n = 0;
        const int64_t *perm = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &n);
        ix y = ix_new(ops[0]->shape.rank, ops[0]->shape.dims);
        for (int64_t k = 0; k < n; k++) y.d[perm[k]] = ix_dim(e, x, k);
        return value(e, ops[0], &y);
    }
    case CXLA_OP_REVERSE: {
        int64_t n = 0;
        const int64_t *dims = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &n);
        ix y = ix_new(ops[0]->shape.rank, ops[0]->shape.dims);
        for (int64_t k = 0; k < y.rank; k++) y.d[k] = ix_dim(e, x, k);
        for (int64_t j = 0; j < n; j++)
            y.d[dims[j]] = F("(%" PRId64 " - %s)", y.dims[dims[j]] - 1, y.d[dims[j]]);
        return value(e, ops[0], &y);
    }
    case CXLA_OP_SLICE: {
        const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_SLICE);
        ix y = ix_new(ops[0]->shape.rank, ops[0]->shape.dims);
        for (int64_t k = 0; k < y.rank; k++) {
            const cxla_slice_dim *s = &a->v.slice.dims[k];
            const char *i = ix_dim(e, x, k);
            if (s->stride == 1)
                y.d[k] = s->start == 0 ? i : F("(%s + %" PRId64 ")", i, s->start);
            else
                y.d[k] = F("(%s * %" PRId64 " + %" PRId64 ")", i, s->stride, s->start);
        }
        return value(e, ops[0], &y);
    }
    case CXLA_OP_DYNAMIC_SLICE: {
        ix y = ix_new(ops[0]->shape.rank, ops[0]->shape.dims);
        for (int64_t k = 0; k < y.rank; k++) {
            const char *s = start_index(e, instr, 1 + k, y.dims[k] - instr->shape.dims[k]);
            y.d[k] = F("(%s + %s)", s, ix_dim(e, x, k));
        }
        return value(e, ops[0], &y);
    }
    case CXLA_OP_PAD:
    case CXLA_OP_CONCATENATE:
    case CXLA_OP_DYNAMIC_UPDATE_SLICE: break; /* branches: below */
    case CXLA_OP_CONVERT: {
        ix y = same_ix(e, ops[0], x);
        expr = cpu_emit_convert(arena, ops[0]->shape.type, t, value(e, ops[0], &y));
        break;
    }
    case CXLA_OP_COMPARE: {
        ix y0 = same_ix(e, ops[0], x), y1 = same_ix(e, ops[1], x);
        cxla_type ot = ops[0]->shape.type;
        const char *a = cpu_emit_decode(arena, ot, value(e, ops[0], &y0));
        const char *b = cpu_emit_decode(arena, ot, value(e, ops[1], &y1));
        expr = cpu_emit_compare(arena, cxla_instr_word(instr, CXLA_ATTR_DIRECTION),
                                cxla_instr_word(instr, CXLA_ATTR_COMPARISON_TYPE),
                                cpu_emit_is_small(ot) ? CXLA_F32 : ot, a, b);
        break;
    }
    case CXLA_OP_SELECT: {
        ix y0 = same_ix(e, ops[0], x), y1 = same_ix(e, ops[1], x), y2 = same_ix(e, ops[2], x);
        const char *p = value(e, ops[0], &y0);
        const char *a = value(e, ops[1], &y1), *b = value(e, ops[2], &y2);
        expr = F("%s ? %s : %s", p, a, b);
        break;
    }
    case CXLA_OP_CLAMP: {
        ix y0 = same_ix(e, ops[0], x), y1 = same_ix(e, ops[1], x), y2 = same_ix(e, ops[2], x);
        const char *lo = value(e, ops[0], &y0), *a = value(e, ops[1], &y1);
        const char *hi = value(e, ops[2], &y2);
        if (cxla_type_is_float(t)) {
            /* Small floats: in f32, rounded back (as the interpreter: NaNs are re-encoded). */
            const char *sfx = t == CXLA_F64 ? "f64" : "f32";
            expr = cpu_emit_encode(arena, t,
                                   F("cxla_min_%s(%s, cxla_max_%s(%s, %s))", sfx,
                                     cpu_emit_decode(arena, t, hi), sfx,
                                     cpu_emit_decode(arena, t, lo), cpu_emit_decode(arena, t, a)));
        } else {
            const char *m = F("v%" PRId64, e->tmp++);
            line(e, "const %s %s = %s >= %s ? %s : %s;", CT, m, lo, a, lo, a);
            expr = F("%s <= %s ? %s : %s", hi, m, hi, m);
        }
        break;
    }
    default: {
        /* Small floats: decoded, computed in f32, the result encoded (rounded). */
        cxla_type ot = ops[0]->shape.type, ct = cpu_emit_is_small(ot) ? CXLA_F32 : ot;
        if (op == CXLA_OP_COPY) {
            ix y = same_ix(e, ops[0], x);
            return value(e, ops[0], &y);
        } else if (instr->operand_count == 1) {
            ix y = same_ix(e, ops[0], x);
            expr = cpu_emit_unary(arena, op, ct, cpu_emit_decode(arena, ot, value(e, ops[0], &y)));
        } else if (instr->operand_count == 2) {
            ix y0 = same_ix(e, ops[0], x), y1 = same_ix(e, ops[1], x);
            const char *a = cpu_emit_decode(arena, ot, value(e, ops[0], &y0));
            const char *b = cpu_emit_decode(arena, ot, value(e, ops[1], &y1));
            expr = cpu_emit_binary(arena, op, ct, a, b);
        }
        if (expr) expr = cpu_emit_encode(arena, t, expr);
        break;
    }
    }
    if (expr) {
        line(e, "const %s %s = %s;", CT, v, expr);
        return v;
    }
    if (op != CXLA_OP_PAD && op != CXLA_OP_CONCATENATE && op != CXLA_OP_DYNAMIC_UPDATE_SLICE) {
        fail(e, instr, "no C form for this operation and element type");
        return "0";
    }
    /* Operations that pick an operand by position: each branch is its own scope. */
    line(e, "%s %s;", CT, v);
    int64_t mark = e->ncse;
    if (op == CXLA_OP_PAD) {
        const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_PADDING);
        ix s = ix_new(0, NULL);
        const char *pad = value(e, ops[1], &s);
        ix y = ix_new(ops[0]->shape.rank, ops[0]->shape.dims);
        cxla_strbuf cond;
        cxla_strbuf_init(&cond);
        for (int64_t k = 0; k < y.rank; k++) {
            const cxla_pad_dim *p = &a->v.padding.dims[k];
            const char *i = ix_dim(e, x, k);
            const char *rel = p->low == 0 ? i : F("(%s - %" PRId64 ")", i, p->low);
            int64_t step = p->interior + 1;
            if (cond.len) cxla_strbuf_puts(&cond, " && ");
            if (step == 1) {
                cxla_strbuf_printf(&cond, "%s >= 0 && %s < %" PRId64, rel, rel, y.dims[k]);
                y.d[k] = rel;
            } else {
                cxla_strbuf_printf(
                    &cond, "%s >= 0 && %s %% %" PRId64 " == 0 && %s / %" PRId64 " < %" PRId64, rel,
                    rel, step, rel, step, y.dims[k]);
                y.d[k] = F("(%s / %" PRId64 ")", rel, step);
            }
        }
        line(e, "if (%s) {", cond.len ? cond.data : "1");
        cxla_strbuf_free(&cond);
        e->indent++;
        const char *in_v = value(e, ops[0], &y);
        line(e, "%s = %s;", v, in_v);
        e->ncse = mark;
        e->indent--;
        line(e, "} else {");
        line(e, "    %s = %s;", v, pad);
        line(e, "}");
    } else if (op == CXLA_OP_CONCATENATE) {
        int64_t dim = 0;
        int64_t nd = 0;
        const int64_t *dims = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd);
        if (dims && nd > 0) dim = dims[0];
        const char *i = ix_dim(e, x, dim);
        int64_t offset = 0;
        for (int64_t k = 0; k < instr->operand_count; k++) {
            int64_t size = ops[k]->shape.dims[dim];
            if (k + 1 < instr->operand_count)
                line(e, "%sif (%s < %" PRId64 ") {", k ? "} else " : "", i, offset + size);
            else
                line(e, "%s", k ? "} else {" : "{");
            e->indent++;
            ix y = ix_new(ops[k]->shape.rank, ops[k]->shape.dims);
            for (int64_t j = 0; j < y.rank; j++) y.d[j] = ix_dim(e, x, j);
            if (offset) y.d[dim] = F("(%s - %" PRId64 ")", i, offset);
            const char *in_v = value(e, ops[k], &y);
            line(e, "%s = %s;", v, in_v);
            e->ncse = mark;
            e->indent--;
            offset += size;
        }
        line(e, "}");
    } else {
        /* dynamic-update-slice: the update inside its (clamped) box, the operand outside. */
        const cxla_instr *upd = ops[1];
        ix y = ix_new(upd->shape.rank, upd->shape.dims);
        cxla_strbuf cond;
        cxla_strbuf_init(&cond);
        for (int64_t k = 0; k < y.rank; k++) {
            const char *s = start_index(e, instr, 2 + k, instr->shape.dims[k] - upd->shape.dims[k]);
            const char *sv = F("s%" PRId64, e->tmp++);
            line(e, "const int64_t %s = %s;", sv, s);
            const char *rel = F("(%s - %s)", ix_dim(e, x, k), sv);
            if (cond.len) cxla_strbuf_puts(&cond, " && ");
            cxla_strbuf_printf(&cond, "%s >= 0 && %s < %" PRId64, rel, rel, y.dims[k]);
            y.d[k] = rel;
        }
        line(e, "if (%s) {", cond.len ? cond.data : "1");
        cxla_strbuf_free(&cond);
        e->indent++;
        const char *u = value(e, upd, &y);
        line(e, "%s = %s;", v, u);
        e->ncse = mark;
        e->indent--;
        line(e, "} else {");
        e->indent++;
        ix z = same_ix(e, ops[0], x);
        const char *o = value(e, ops[0], &z);
        line(e, "%s = %s;", v, o);
        e->ncse = mark;
        e->indent--;
        line(e, "}");
    }
    return v;
}

static const char *value(em *e, const cxla_instr *instr, ix *x) {
    if (e->err) return "0";
    const char *key = ix_key(e, x);
    const char *v = cse_find(e, instr, key);
    if (v) return v;
    /* Values at a rank-0 index do not change in the loop: compute them before it. */
    cxla_strbuf *saved = e->b;
    int saved_indent = e->indent;
    if (x->rank == 0 && e->hoist) {
        e->b = e->hoist;
        e->indent = e->hoist_indent;
    }
    bool shows = input_index(e, instr) < 0 && instr->opcode != CXLA_OP_CONSTANT &&
                 instr->opcode != CXLA_OP_RESHAPE && instr->opcode != CXLA_OP_BROADCAST;
    if (shows && e->fused) comment(e, instr);
    v = compute(e, instr, x);
    e->b = saved;
    e->indent = saved_indent;
    cse_add(e, instr, key, v);
    return v;
}

/* ---- what can be emitted ------------------------------------------------------------- */

static bool default_layout(const cxla_shape *s) {
    if (!s->layout || s->rank == 0) return true;
    int64_t m2m[CXLA_MAX_RANK];
    cxla_shape_minor_to_major(s, m2m);
    for (int64_t k = 0; k < s->rank; k++)
        if (m2m[k] != s->rank - 1 - k) return false;
    return true;
}

static bool static_array(const cxla_shape *s) {
    return cxla_type_is_array(s->type) && !s->dynamic && default_layout(s) &&
           cpu_emit_type_ok(s->type);
}

/* The reducer of a reduce this emitter handles (one input, a recognized reducer defined
 * on the type), else NONE. Mirrors interp_match_reducer and interp_reducer_supports. */
typedef enum reducer {
    RED_NONE,
    RED_ADD,
    RED_MUL,
    RED_MAX,
    RED_MIN,
    RED_AND,
    RED_OR,
    RED_XOR
} reducer;

static reducer match_reducer(const cxla_instr *instr) {
    if (instr->opcode != CXLA_OP_REDUCE || instr->operand_count != 2) return RED_NONE;
    const cxla_computation *c = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!c || c->param_count != 2 || !c->root || c->root->operand_count != 2) return RED_NONE;
    const cxla_instr *r = c->root, *a = r->operands[0], *b = r->operands[1];
    cxla_type t = instr->operands[0]->shape.type;
    if (a->opcode != CXLA_OP_PARAMETER || b->opcode != CXLA_OP_PARAMETER || a == b ||
        r->shape.type != t || a->shape.type != t || b->shape.type != t || r->shape.rank != 0 ||
        a->shape.rank != 0 || b->shape.rank != 0 || instr->operands[1]->shape.type != t)
        return RED_NONE;
    bool flt = cxla_type_is_float(t);
    switch (r->opcode) {
    case CXLA_OP_ADD: return RED_ADD;
    case CXLA_OP_MULTIPLY: return RED_MUL;
    case CXLA_OP_MAXIMUM: return RED_MAX;
    case CXLA_OP_MINIMUM: return RED_MIN;
    case CXLA_OP_AND: return flt ? RED_NONE : RED_AND;
    case CXLA_OP_OR: return flt ? RED_NONE : RED_OR;
    case CXLA_OP_XOR: return flt ? RED_NONE : RED_XOR;
    default: return RED_NONE;
    }
}

/* Whether |instr| (inside a fusion, or unfused with its operands as inputs) has a C form;
 * |why| says why not. */
static bool op_ok(const cxla_instr *instr, bool in_fusion, const char **why) {
    *why = "unsupported shape or element type";
    if (!static_array(&instr->shape)) return false;
    for (int64_t k = 0; k < instr->operand_count; k++)
        if (!static_array(&instr->operands[k]->shape)) return false;
    cxla_opcode op = instr->opcode;
    cxla_type t = instr->shape.type;
    *why = "operation not supported by the C emitter";
    switch (op) {
    case CXLA_OP_PARAMETER: return in_fusion;
    case CXLA_OP_CONSTANT:
        *why = "constant too large or elided";
        return instr->literal && !instr->literal_elided &&
               cxla_literal_element_count(instr->literal) <= MAX_CONSTANT_ELEMENTS &&
               default_layout(cxla_literal_shape(instr->literal));
    case CXLA_OP_IOTA:
    case CXLA_OP_BROADCAST:
    case CXLA_OP_RESHAPE:
    case CXLA_OP_TRANSPOSE:
    case CXLA_OP_REVERSE:
    case CXLA_OP_SLICE:
    case CXLA_OP_CONCATENATE:
    case CXLA_OP_COPY: return true;
    case CXLA_OP_PAD: return instr->operand_count == 2;
    case CXLA_OP_DYNAMIC_SLICE:
    case CXLA_OP_DYNAMIC_UPDATE_SLICE: {
        int64_t first = op == CXLA_OP_DYNAMIC_SLICE ? 1 : 2;
        *why = "start indices must be integer scalars, one per dimension";
        if (instr->operand_count != first + instr->operands[0]->shape.rank) return false;
        for (int64_t k = first; k < instr->operand_count; k++)
            if (!cxla_type_is_integer(instr->operands[k]->shape.type) ||
                instr->operands[k]->shape.rank != 0)
                return false;
        return true;
    }
    case CXLA_OP_CONVERT: return true;
    case CXLA_OP_COMPARE: {
        const char *d = cxla_instr_word(instr, CXLA_ATTR_DIRECTION);
        return d && cpu_emit_compare(NULL, d, NULL, CXLA_PRED, "a", "b") != NULL;
    }
    case CXLA_OP_SELECT:
    case CXLA_OP_CLAMP: return true;
    case CXLA_OP_REDUCE:
        *why = "reduce needs one input and a reducer of add, multiply, maximum, minimum, and, "
               "or, xor";
        return match_reducer(instr) != RED_NONE;
    default: break;
    }
    if (!(cxla_opcode_get_info(op)->flags & CXLA_OPF_ELEMENTWISE)) return false;
    *why = "not defined for this element type";
    if (instr->operand_count == 1) return cpu_emit_unary_ok(op, instr->operands[0]->shape.type);
    if (instr->operand_count == 2)
        return cpu_emit_binary_ok(op, instr->operands[0]->shape.type) &&
               instr->operands[0]->shape.type == t;
    return false;
}

/* Checks a fused computation: every instruction has a C form, reduces only at the root
 * (or as tuple elements of the root). Returns the offending instruction or NULL. */
static const cxla_instr *fusion_blocker(const cxla_computation *c, const char **why) {
    const cxla_instr *root = c->root;
    for (int64_t i = 0; i < c->instr_count; i++) {
        const cxla_instr *x = c->instrs[i];
        if (x == root && x->opcode == CXLA_OP_TUPLE) {
            for (int64_t k = 0; k < x->operand_count; k++) {
                const cxla_instr *o = x->operands[k];
                if (o->opcode == CXLA_OP_TUPLE || o->opcode == CXLA_OP_PARAMETER) {
                    *why = "a multi-output fusion's outputs must be computed arrays";
                    return x;
                }
            }
            continue;
        }
        if (!op_ok(x, true, why)) return x;
        if (x->opcode == CXLA_OP_REDUCE) {
            bool at_root = x == root;
            for (int64_t u = 0; u < x->user_count; u++)
                at_root = at_root || (x->users[u] == root && root->opcode == CXLA_OP_TUPLE);
            if (!at_root || x->user_count > (x == root ? 0 : 1)) {
                *why = "a reduce must be an output of the fusion";
                return x;
            }
        }
    }
    return NULL;
}

bool cpu_can_emit(const cxla_instr *instr) {
    const char *why;
    if (instr->opcode == CXLA_OP_FUSION) {
        const cxla_computation *c = cxla_instr_called(instr, CXLA_ATTR_CALLS);
        if (!c || !c->root) return false;
        for (int64_t k = 0; k < instr->operand_count; k++)
            if (!static_array(&instr->operands[k]->shape)) return false;
        return fusion_blocker(c, &why) == NULL;
    }
    return op_ok(instr, false, &why);
}

/* ---- loops --------------------------------------------------------------------------- */

/* Whether the values of |instr| (and what it reads, inside the kernel) need the
 * per-dimension index; if not, one flat loop over the linear offset does. */
static bool needs_dims(const em *e, const cxla_instr *instr) {
    if (input_index(e, instr) >= 0) return false;
    switch (instr->opcode) {
    case CXLA_OP_CONSTANT:
    case CXLA_OP_RESHAPE:
    case CXLA_OP_COPY: break;
    case CXLA_OP_BROADCAST:
        if (instr->operands[0]->shape.rank != 0) return true;
        break;
    default:
        if (!(cxla_opcode_get_info(instr->opcode)->flags & CXLA_OPF_ELEMENTWISE)) return true;
    }
    for (int64_t k = 0; k < instr->operand_count; k++)
        if (needs_dims(e, instr->operands[k])) return true;
    return false;
}

/* Opens the loops over |s| with counters named |var|0, |var|1, ... (or one flat counter
 * |var| when !|dims|); fills |x|. Returns the number of loops opened. */
static int open_loops(em *e, const cxla_shape *s, bool dims, const char *var, ix *x) {
    *x = ix_new(s->rank, s->dims);
    if (s->rank == 0) return 0;
    if (!dims) {
        int64_t n = 1;
        for (int64_t k = 0; k < s->rank; k++) n *= s->dims[k];
        line(e, "for (int64_t %s = 0; %s < %" PRId64 "; %s++) {", var, var, n, var);
        e->indent++;
        x->lin = var;
        return 1;
    }
    for (int64_t k = 0; k < s->rank; k++) {
        const char *i = F("%s%" PRId64, var, k);
        line(e, "for (int64_t %s = 0; %s < %" PRId64 "; %s++) {", i, i, s->dims[k], i);
        e->indent++;
        x->d[k] = i;
    }
    return (int)s->rank;
}

static void close_loops(em *e, int n) {
    for (int i = 0; i < n; i++) {
        e->indent--;
        line(e, "}");
    }
}

static const char *store(em *e, cxla_type t, const char *v) {
    (void)e;
    (void)t;
    return v; /* values are held as they are stored */
}

/* Declares the input pointers p0, p1, ... (in |e->b|). */
static void declare_inputs(em *e) {
    int64_t n = e->fused ? e->fused->param_count : e->top->operand_count;
    for (int64_t k = 0; k < n; k++) {
        const cxla_shape *s = e->fused ? &e->fused->params[k]->shape : &e->top->operands[k]->shape;
        const char *st = cpu_emit_stype(s->type);
        line(e, "const %s *restrict p%" PRId64 " = (const %s *)in[%" PRId64 "];", st, k, st, k);
        line(e, "(void)p%" PRId64 ";", k);
    }
}

/* ---- reductions ---------------------------------------------------------------------- */

/* acc = op(acc, x) in the interpreter's fold for |t|. */
static const char *fold(em *e, reducer r, cxla_type t, const char *acc, const char *x) {
    static const cxla_opcode ops[] = {
        [RED_ADD] = CXLA_OP_ADD,     [RED_MUL] = CXLA_OP_MULTIPLY, [RED_MAX] = CXLA_OP_MAXIMUM,
        [RED_MIN] = CXLA_OP_MINIMUM, [RED_AND] = CXLA_OP_AND,      [RED_OR] = CXLA_OP_OR,
        [RED_XOR] = CXLA_OP_XOR};
    if (t == CXLA_PRED) {
        const char *o = r == RED_XOR                                    ? "^"
                        : (r == RED_ADD || r == RED_OR || r == RED_MAX) ? "|"
                                                                        : "&";
        return F("(uint8_t)((%s %s %s) != 0)", acc, o, x);
    }
    if (cxla_type_is_integer(t) && (r == RED_MAX || r == RED_MIN))
        return F("%s %s %s ? %s : %s", x, r == RED_MAX ? ">" : "<", acc, x, acc);
    if (!cpu_emit_is_small(t)) return cpu_emit_binary(e->arena, ops[r], t, acc, x);
    /* Small floats: in f32, rounded after every step (as the interpreter's fold). */
    return cpu_emit_encode(e->arena, t,
                           cpu_emit_binary(e->arena, ops[r], CXLA_F32,
                                           cpu_emit_decode(e->arena, t, acc),
                                           cpu_emit_decode(e->arena, t, x)));
}

/* The operand index of a reduce from its kept dimensions' counters |kept| (in output
 * order) and the reduced dimensions' counters |red| (in dimension order). */
static ix reduce_operand_ix(const cxla_instr *reduce, const bool *reduced, const char *const *kept,
                            const char *const *red) {
    const cxla_shape *s = &reduce->operands[0]->shape;
    ix y = ix_new(s->rank, s->dims);
    int64_t ko = 0, ro = 0;
    for (int64_t j = 0; j < s->rank; j++) y.d[j] = reduced[j] ? red[ro++] : kept[ko++];
    return y;
}

/* The pairwise sum of the interpreter (pairwise_f32/f64 in src/interp/interp_reduce.c)
 * as a recursive helper over the reduced elements [first, first + n) of the output
 * element at o[]: leaves of up to 16 summed in order, longer ranges split at n / 2. */
static const char *pairwise_helper(em *e, const cxla_instr *reduce, const bool *reduced,
                                   int64_t index) {
    const cxla_instr *src = reduce->operands[0];
    cxla_type t = src->shape.type;
    const char *CT = cpu_emit_ctype(t);
    const char *fn = F("%s_sum%" PRId64, e->name, index);
    cxla_strbuf body;
    cxla_strbuf_init(&body);
    cxla_strbuf *saved_b = e->b, *saved_hoist = e->hoist;
    int saved_indent = e->indent;
    int64_t saved_ncse = e->ncse;
    e->b = &body;
    e->hoist = NULL;
    e->indent = 0;
    line(e, "/* The pairwise sum of %s at output o[] over reduced elements [first, first + n). */",
         reduce->name);
    line(e, "static %s %s(const void *const *in, const int64_t *o, int64_t first, int64_t n) {", CT,
         fn);
    e->indent++;
    line(e, "if (n > %d) {", PAIRWISE_LEAF);
    line(e, "    int64_t half = n / 2;");
    line(e, "    return %s(in, o, first, half) + %s(in, o, first + half, n - half);", fn, fn);
    line(e, "}");
    declare_inputs(e);
    line(e, "(void)o;");
    line(e, "%s s = 0;", CT);
    line(e, "for (int64_t r = first; r < first + n; r++) {");
    e->indent++;
    /* The reduced counters from r, row-major over the reduced dimensions. */
    const char *kept[CXLA_MAX_RANK], *red[CXLA_MAX_RANK];
    int64_t nk = 0, nr = 0, rdims[CXLA_MAX_RANK];
    for (int64_t j = 0; j < src->shape.rank; j++) {
        if (reduced[j])
            rdims[nr++] = src->shape.dims[j];
        else
            kept[nk] = F("o[%" PRId64 "]", nk), nk++;
    }
    ix rx = ix_new(nr, rdims);
    rx.lin = "r";
    for (int64_t j = 0; j < nr; j++) red[j] = ix_dim(e, &rx, j);
    ix y = reduce_operand_ix(reduce, reduced, kept, red);
    const char *x = value(e, src, &y);
    line(e, "s = r == first ? %s : s + %s;", x, x);
    e->indent--;
    line(e, "}");
    line(e, "return s;");
    e->indent--;
    line(e, "}");
    cxla_strbuf_append(&e->helpers, body.data ? body.data : "", body.len);
    cxla_strbuf_free(&body);
    e->b = saved_b;
    e->hoist = saved_hoist;
    e->indent = saved_indent;
    e->ncse = saved_ncse;
    return fn;
}

/* The loops of one reduce writing output pointer |out|. */
static void emit_reduce(em *e, const cxla_instr *reduce, const char *out, int64_t index) {
    reducer r = match_reducer(reduce);
    const cxla_instr *src = reduce->operands[0];
    cxla_type t = reduce->shape.type;
    const char *CT = cpu_emit_ctype(t);
    bool reduced[CXLA_MAX_RANK] = {false};
    int64_t nd = 0;
    const int64_t *dims = cxla_instr_ints(reduce, CXLA_ATTR_DIMENSIONS, &nd);
    for (int64_t k = 0; k < nd; k++) reduced[dims[k]] = true;
    int64_t count = 1;
    for (int64_t k = 0; k < nd; k++) count *= src->shape.dims[dims[k]];
    bool pairwise = r == RED_ADD && (t == CXLA_F32 || t == CXLA_F64) && count > 0;
    const char *fn = pairwise ? pairwise_helper(e, reduce, reduced, index) : NULL;
    if (e->fused) comment(e, reduce);
    ix s = ix_new(0, NULL);
    const char *init = value(e, reduce->operands[1], &s);
    ix ox;
    int loops = open_loops(e, &reduce->shape, true, F("i%" PRId64 "_", index), &ox);
    int64_t mark = e->ncse;
    const char *acc = F("acc%" PRId64, index);
    if (pairwise) {
        if (ox.rank) {
            cxla_strbuf list;
            cxla_strbuf_init(&list);
            for (int64_t k = 0; k < ox.rank; k++)
                cxla_strbuf_printf(&list, "%s%s", k ? ", " : "", ox.d[k]);
            line(e, "const int64_t o[%" PRId64 "] = {%s};", ox.rank, list.data);
            cxla_strbuf_free(&list);
        } else {
            line(e, "const int64_t *o = NULL;");
        }
        line(e, "const %s %s = %s + %s(in, o, 0, %" PRId64 ");", CT, acc, init, fn, count);
    } else {
        line(e, "%s %s = %s;", CT, acc, init);
        const char *red[CXLA_MAX_RANK];
        int64_t nr = 0;
        int opened = 0;
        for (int64_t j = 0; j < src->shape.rank; j++) {
            if (!reduced[j]) continue;
            const char *rv = F("r%" PRId64 "_%" PRId64, index, nr);
            red[nr++] = rv;
            line(e, "for (int64_t %s = 0; %s < %" PRId64 "; %s++) {", rv, rv, src->shape.dims[j],
                 rv);
            e->indent++;
            opened++;
        }
        ix y = reduce_operand_ix(reduce, reduced, ox.d, red);
        const char *x = value(e, src, &y);
        line(e, "%s = %s;", acc, fold(e, r, t, acc, x));
        close_loops(e, opened);
    }
    e->ncse = mark;
    line(e, "%s[%s] = %s;", out, ix_lin(e, &ox), store(e, t, acc));
    close_loops(e, loops);
}

/* ---- kernels ------------------------------------------------------------------------- */

void cpu_emit_sanitize(const char *text, cxla_strbuf *out) {
    if (!text || !*text) {
        cxla_strbuf_puts(out, "_");
        return;
    }
    if (*text >= '0' && *text <= '9') cxla_strbuf_putc(out, '_');
    for (const char *p = text; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        cxla_strbuf_putc(out, ok ? c : '_');
    }
}

void cpu_emit_prelude(cxla_strbuf *out) {
    for (int i = 0; cpu_emit_prelude_lines[i]; i++)
        cxla_strbuf_puts(out, cpu_emit_prelude_lines[i]);
    cpu_emit_small_float_helpers(out);
    cxla_strbuf_putc(out, '\n');
}

cxla_status cpu_emit_kernel(const cxla_instr *instr, const char *name, cxla_strbuf *out) {
    const char *why = NULL;
    const cxla_computation *fused = NULL;
    if (instr->opcode == CXLA_OP_FUSION) {
        fused = cxla_instr_called(instr, CXLA_ATTR_CALLS);
        if (!fused || !fused->root)
            return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                              "cpu backend: cannot emit fusion %s: no called computation",
                              instr->name);
        const cxla_instr *b = fusion_blocker(fused, &why);
        if (b)
            return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                              "cpu backend: cannot emit %s (%s) in fusion %s: %s", b->name,
                              cxla_opcode_name(b->opcode), instr->name, why);
        for (int64_t k = 0; k < instr->operand_count; k++)
            if (!static_array(&instr->operands[k]->shape))
                return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                                  "cpu backend: cannot emit fusion %s: operand %" PRId64
                                  " is not a static array of a supported type",
                                  instr->name, k);
    } else if (!op_ok(instr, false, &why)) {
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "cpu backend: cannot emit %s (%s): %s",
                          instr->name, cxla_opcode_name(instr->opcode), why);
    }
    em ctx;
    memset(&ctx, 0, sizeof ctx);
    em *e = &ctx;
    e->arena = cxla_arena_create();
    if (!e->arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    e->name = name;
    e->top = instr;
    e->fused = fused;
    cxla_strbuf_init(&e->consts);
    cxla_strbuf_init(&e->helpers);
    cxla_strbuf body, hoist;
    cxla_strbuf_init(&body);
    cxla_strbuf_init(&hoist);
    e->b = &body;
    e->indent = 1;

    /* The outputs: the root, or the root tuple's elements. */
    const cxla_instr *root = fused ? fused->root : instr;
    const cxla_instr *outs[256];
    int64_t nout = 1;
    if (fused && root->opcode == CXLA_OP_TUPLE) {
        nout = root->operand_count < 256 ? root->operand_count : 256;
        for (int64_t i = 0; i < nout; i++) outs[i] = root->operands[i];
    } else {
        outs[0] = root;
    }
    line(e, "(void)in;");
    for (int64_t i = 0; i < nout; i++) {
        const char *st = cpu_emit_stype(outs[i]->shape.type);
        line(e, "%s *restrict o%" PRId64 " = (%s *)out[%" PRId64 "];", st, i, st, i);
    }
    declare_inputs(e);
    /* Reduces, each its own loop nest. */
    for (int64_t i = 0; i < nout; i++) {
        if (outs[i]->opcode != CXLA_OP_REDUCE) continue;
        e->hoist = NULL;
        emit_reduce(e, outs[i], F("o%" PRId64, i), i);
        e->ncse = 0;
    }
    /* The other outputs: one loop nest for all of one shape (they share their operands'
     * values), in output order. */
    bool done[256] = {false};
    for (int64_t i = 0; i < nout && !e->err; i++) {
        if (outs[i]->opcode == CXLA_OP_REDUCE || done[i]) continue;
        const cxla_shape *s = &outs[i]->shape;
        bool dims = false;
        for (int64_t j = i; j < nout; j++) {
            const cxla_shape *sj = &outs[j]->shape;
            bool same = outs[j]->opcode != CXLA_OP_REDUCE && sj->rank == s->rank;
            for (int64_t k = 0; same && k < s->rank; k++) same = sj->dims[k] == s->dims[k];
            if (same) dims = dims || needs_dims(e, outs[j]);
        }
        cxla_strbuf_free(&hoist);
        cxla_strbuf_init(&hoist);
        cxla_strbuf *main_b = e->b;
        e->hoist = &hoist;
        e->hoist_indent = e->indent;
        cxla_strbuf loop;
        cxla_strbuf_init(&loop);
        e->b = &loop;
        ix x;
        int loops = open_loops(e, s, dims, "i", &x);
        for (int64_t j = i; j < nout; j++) {
            const cxla_shape *sj = &outs[j]->shape;
            bool same = outs[j]->opcode != CXLA_OP_REDUCE && sj->rank == s->rank;
            for (int64_t k = 0; same && k < s->rank; k++) same = sj->dims[k] == s->dims[k];
            if (!same) continue;
            done[j] = true;
            ix y = x;
            y.dims = sj->dims;
            const char *v = value(e, outs[j], &y);
            line(e, "o%" PRId64 "[%s] = %s;", j, ix_lin(e, &x), store(e, sj->type, v));
        }
        close_loops(e, loops);
        e->b = main_b;
        cxla_strbuf_append(e->b, hoist.data ? hoist.data : "", hoist.len);
        cxla_strbuf_append(e->b, loop.data ? loop.data : "", loop.len);
        cxla_strbuf_free(&loop);
        e->ncse = 0;
        e->hoist = NULL;
    }

    cxla_status st = e->err;
    if (!st) {
        /* The kernel: its HLO, constants, helpers, then the function. */
        cxla_strbuf head;
        cxla_strbuf_init(&head);
        cxla_hlo_print_instr(&head, instr, CXLA_HLO_STYLE_SHORT);
        if (head.data) {
            for (char *p = strstr(head.data, "*/"); p; p = strstr(p, "*/")) p[1] = ' ';
            for (char *p = strstr(head.data, "/*"); p; p = strstr(p, "/*")) p[1] = ' ';
        }
        cxla_strbuf_printf(out, "/* ---- %s: %s */\n", name, head.data ? head.data : instr->name);
        cxla_strbuf_free(&head);
        cxla_strbuf_append(out, e->consts.data ? e->consts.data : "", e->consts.len);
        cxla_strbuf_append(out, e->helpers.data ? e->helpers.data : "", e->helpers.len);
        cxla_strbuf_printf(out, "void %s(void *const *out, const void *const *in);\n", name);
        cxla_strbuf_printf(out, "void %s(void *const *out, const void *const *in) {\n", name);
        cxla_strbuf_append(out, body.data ? body.data : "", body.len);
        cxla_strbuf_puts(out, "}\n\n");
        if (out->failed || body.failed || e->consts.failed || e->helpers.failed)
            st = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s",
                            instr->name);
    }
    cxla_strbuf_free(&body);
    cxla_strbuf_free(&hoist);
    cxla_strbuf_free(&e->consts);
    cxla_strbuf_free(&e->helpers);
    cxla_arena_destroy(e->arena);
    return st;
}
