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
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_math.h"
#include "cpu/emit_nest.h"
#include "exec/math.h"
#include "interp/interp.h"

enum { MAX_CONSTANT_ELEMENTS = 1 << 16 };

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

/* Whether |instr|'s array is in e->consts already; records it if not. */
static bool const_emitted(em *e, const cxla_instr *instr) {
    for (int64_t i = 0; i < e->nconst_done; i++)
        if (e->const_done[i] == instr) return true;
    if (e->nconst_done == e->capconst_done) {
        int64_t cap = e->capconst_done ? 2 * e->capconst_done : 8;
        const cxla_instr **grown = cxla_arena_alloc_array(e->arena, (size_t)cap, sizeof(*grown));
        if (!grown) { /* the array is emitted again: a compile error, never a wrong value */
            if (!e->err) e->err = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
            return false;
        }
        if (e->nconst_done) memcpy(grown, e->const_done, (size_t)e->nconst_done * sizeof(*grown));
        e->const_done = grown;
        e->capconst_done = cap;
    }
    e->const_done[e->nconst_done++] = instr;
    return false;
}

/* Emits |instr|'s literal as a static array (once per kernel); returns its name. */
static const char *const_array(em *e, const cxla_instr *instr) {
    const cxla_literal *lit = instr->literal;
    cxla_type t = instr->shape.type;
    int64_t n = cxla_literal_element_count(lit);
    const char *name = F("%s_c%" PRId64, e->name, instr->id);
    if (const_emitted(e, instr)) return name;
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

/* Element |x| of complex constant |instr|: its parts' bits as an array of twice the
 * elements (NaN payloads and -0 survive), made into a value by cxla_c64_bits. */
static const char *complex_const(em *e, const cxla_instr *instr, ix *x) {
    const cxla_literal *lit = instr->literal;
    cxla_type t = instr->shape.type;
    int64_t n = cxla_literal_element_count(lit);
    bool wide = t == CXLA_C128;
    const char *ut = wide ? "uint64_t" : "uint32_t", *k = wide ? "c128" : "c64";
    const char *name = F("%s_c%" PRId64, e->name, instr->id);
    const char *at = n <= 1 ? "0" : ix_lin(e, x);
    const char *value = F("cxla_%s_bits(%s[2 * (%s)], %s[2 * (%s) + 1])", k, name, at, name, at);
    if (const_emitted(e, instr)) return value;
    cxla_strbuf_printf(&e->consts, "/* %s */\nstatic const %s %s[%" PRId64 "] = {", instr->name, ut,
                       name, 2 * n + 2);
    const unsigned char *p = cxla_literal_data_const(lit);
    for (int64_t i = 0; i < 2 * n; i++) {
        uint64_t v = 0;
        uint32_t w = 0;
        if (wide)
            memcpy(&v, p + (size_t)i * 8, 8);
        else
            memcpy(&w, p + (size_t)i * 4, 4), v = w;
        cxla_strbuf_printf(&e->consts, "%s0x%" PRIx64 "%s,", i % 8 == 0 ? "\n    " : " ", v,
                           wide ? "ull" : "u");
    }
    cxla_strbuf_puts(&e->consts, " 0, 0};\n");
    return value;
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
    cpu_emit_buf_free(&t);
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
    /* Clamped to [0, 0]: always 0. The index is not computed (values have no side
     * effects), so that no variable is left unread when the dimension has size 1 and drops
     * out of the offset (-Wunused-but-set-variable). */
    if (hi == 0) return "0";
    /* The older form: one vector of start indices after the operands, element k - first. */
    int64_t first = instr->opcode == CXLA_OP_DYNAMIC_SLICE ? 1 : 2;
    bool vector = instr->operand_count == first + 1 && instr->operands[first]->shape.rank == 1;
    const cxla_instr *op = instr->operands[vector ? first : k];
    ix s = vector ? ix_new(1, op->shape.dims) : ix_new(0, NULL);
    if (vector) s.d[0] = F("%" PRId64, k - first);
    const char *v = value(e, op, &s);
    const char *as64 = op->shape.type == CXLA_U64
                           ? F("(%s > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)%s)", v, v)
                           : F("(int64_t)%s", v);
    return F("cxla_clamp_index(%s, %" PRId64 ")", as64, hi);
}

/* Emits the statements of |instr| at |x| into a new variable; returns its name. */
static const char *compute_op(em *e, const cxla_instr *instr, ix *x);

/* An instruction's value at |x|; with mixed precision, its operands are read converted to
 * the one float type the interpreter converts them to (as cxla_literal_convert: the convert
 * operation's rule). */
static const char *compute(em *e, const cxla_instr *instr, ix *x) {
    e->mixed_to =
        input_index(e, instr) >= 0 ? CXLA_TYPE_INVALID : interp_mixed_precision_target(instr);
    const char *v = compute_op(e, instr, x);
    e->mixed_to = CXLA_TYPE_INVALID;
    return v;
}

static const char *compute_op(em *e, const cxla_instr *instr, ix *x) {
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
        if (cxla_type_is_complex(t)) return complex_const(e, instr, x);
        if (cxla_literal_element_count(instr->literal) == 0) return "0"; /* never read */
        if (instr->shape.rank == 0 || cxla_literal_element_count(instr->literal) == 1)
            return const_value(e, t, raw_element(instr->literal, 0));
        expr = load(e, t, const_array(e, instr), ix_lin(e, x), true);
        break;
    }
    case CXLA_OP_GET_DIMENSION_SIZE: {
        int64_t n = 0;
        const int64_t *d = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &n);
        expr = F("(int32_t)%" PRId64, ops[0]->shape.dims[d[0]]); /* op_ok: one, in range */
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
    case CXLA_OP_GATHER: {
        /* emit_gather.c's map: each operand index a (clamped) start plus an offset. */
        cpu_gather_map m;
        cpu_emit_gather_map(instr, &m);
        ix y = ix_new(ops[0]->shape.rank, ops[0]->shape.dims);
        for (int64_t d = 0; d < y.rank; d++) {
            const char *start = "0";
            if (m.batch_out[d] >= 0) {
                start = ix_dim(e, x, m.batch_out[d]);
            } else if (m.start_k[d] >= 0 && m.max_start[d] > 0) { /* else clamped to 0 */
                ix iy = ix_new(ops[1]->shape.rank, ops[1]->shape.dims);
                for (int64_t j = 0; j < iy.rank; j++)
                    iy.d[j] = j == m.ivd ? F("%" PRId64, m.start_k[d]) : ix_dim(e, x, m.idx_out[j]);
                const char *iv = value(e, ops[1], &iy);
                const char *as64 =
                    ops[1]->shape.type == CXLA_U64
                        ? F("(%s > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)%s)", iv, iv)
                        : F("(int64_t)%s", iv);
                start = F("cxla_clamp_index(%s, %" PRId64 ")", as64, m.max_start[d]);
            }
            y.d[d] =
                m.offset_out[d] >= 0 ? F("(%s + %s)", start, ix_dim(e, x, m.offset_out[d])) : start;
        }
        return value(e, ops[0], &y);
    }
    case CXLA_OP_REDUCE: return cpu_nest_inline_reduce(e, instr, x);
    case CXLA_OP_PAD:
    case CXLA_OP_CONCATENATE:
    case CXLA_OP_DYNAMIC_UPDATE_SLICE: break; /* branches: below */
    case CXLA_OP_CONVERT: {
        ix y = same_ix(e, ops[0], x);
        expr = cpu_emit_convert(arena, ops[0]->shape.type, t, value(e, ops[0], &y));
        break;
    }
    case CXLA_OP_STOCHASTIC_CONVERT: {
        /* cxla_stochastic in the prelude: the interpreter's rounding on the exact value. */
        ix y0 = same_ix(e, ops[0], x), y1 = same_ix(e, ops[1], x);
        cxla_type ft = ops[0]->shape.type;
        const char *a = cpu_emit_decode(arena, ft, value(e, ops[0], &y0));
        expr = F("(%s)cxla_stochastic((double)%s, (uint64_t)%s, %d, %d)", CT, a,
                 value(e, ops[1], &y1), cxla_type_bits(ops[1]->shape.type), cxla_type_bits(t));
        break;
    }
    case CXLA_OP_COMPARE: {
        ix y0 = same_ix(e, ops[0], x), y1 = same_ix(e, ops[1], x);
        cxla_type ot = e->mixed_to != CXLA_TYPE_INVALID ? e->mixed_to : ops[0]->shape.type;
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
            /* Same operands need no test (clang's -Wtautological-compare refuses "x >= x"). */
            if (strcmp(lo, a) == 0)
                line(e, "const %s %s = %s;", CT, m, a);
            else
                line(e, "const %s %s = %s >= %s ? %s : %s;", CT, m, lo, a, lo, a);
            expr = strcmp(hi, lo) == 0 && strcmp(lo, a) == 0
                       ? m
                       : F("%s <= %s ? %s : %s", hi, m, hi, m);
        }
        break;
    }
    default: {
        /* Small floats: decoded, computed in f32, the result encoded (rounded). */
        cxla_type ot = e->mixed_to != CXLA_TYPE_INVALID ? e->mixed_to : ops[0]->shape.type;
        cxla_type ct = cpu_emit_is_small(ot) ? CXLA_F32 : ot;
        cpu_emit_math_type(ot);
        if (op == CXLA_OP_COPY) {
            ix y = same_ix(e, ops[0], x);
            return value(e, ops[0], &y);
        } else if (instr->operand_count == 1) {
            ix y = same_ix(e, ops[0], x);
            expr = cpu_emit_unary(arena, op, ct, cpu_emit_decode(arena, ot, value(e, ops[0], &y)));
            if (op == CXLA_OP_EXP && ct == CXLA_F32) expr = cpu_emit_row_exp(arena, instr, expr);
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
        cpu_emit_buf_free(&cond);
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
        cpu_emit_buf_free(&cond);
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

static const char *value_of(em *e, const cxla_instr *instr, ix *x);

static const char *value(em *e, const cxla_instr *instr, ix *x) {
    cxla_type want = e->mixed_to;
    if (want == CXLA_TYPE_INVALID) return value_of(e, instr, x);
    e->mixed_to = CXLA_TYPE_INVALID; /* the operand's own operands are its business */
    const char *v = value_of(e, instr, x);
    e->mixed_to = want;
    cxla_type t = instr->shape.type;
    if (!cxla_type_is_float(t) || t == want || e->err) return v;
    return cpu_emit_convert(e->arena, t, want, v);
}

static const char *value_of(em *e, const cxla_instr *instr, ix *x) {
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
           (cpu_emit_type_ok(s->type) || cxla_type_is_complex(s->type) ||
            cpu_emit_subbyte(s->type));
}

/* Sub-byte integers (emit_expr.c) in elementwise operations and data movement (gather
 * too); not in reduce. */
static bool has_subbyte(const cxla_instr *instr) {
    if (cpu_emit_subbyte(instr->shape.type)) return true;
    for (int64_t k = 0; k < instr->operand_count; k++)
        if (cpu_emit_subbyte(instr->operands[k]->shape.type)) return true;
    return false;
}

/* Complex values (emit_expr.c): moved (transpose and iota too), selected, compared for
 * equality, made from parts (complex, convert from f32 / f64) and taken apart (real, imag,
 * abs), gathered, and the arithmetic and functions cpu_emit_complex_*_ok lists; no
 * reduce or clamp of them. */
static bool complex_op_ok(const cxla_instr *instr) {
    const cxla_type t = instr->shape.type;
    const cxla_type ot = instr->operand_count ? instr->operands[0]->shape.type : t;
    switch (instr->opcode) {
    case CXLA_OP_PARAMETER:
    case CXLA_OP_BROADCAST:
    case CXLA_OP_RESHAPE:
    case CXLA_OP_TRANSPOSE:
    case CXLA_OP_COPY:
    case CXLA_OP_IOTA:
    case CXLA_OP_GATHER:
    case CXLA_OP_GET_DIMENSION_SIZE:
    case CXLA_OP_REVERSE:
    case CXLA_OP_SLICE:
    case CXLA_OP_CONCATENATE:
    case CXLA_OP_PAD:
    case CXLA_OP_DYNAMIC_SLICE:
    case CXLA_OP_DYNAMIC_UPDATE_SLICE:
    case CXLA_OP_CONSTANT:
    case CXLA_OP_SELECT:
    case CXLA_OP_TUPLE: return true;
    case CXLA_OP_COMPARE: {
        const char *ct = cxla_instr_word(instr, CXLA_ATTR_COMPARISON_TYPE);
        const char *d = cxla_instr_word(instr, CXLA_ATTR_DIRECTION);
        return d && (!strcmp(d, "EQ") || !strcmp(d, "NE")) && !(ct && !strcmp(ct, "TOTALORDER"));
    }
    case CXLA_OP_CONVERT: return cxla_type_is_complex(t); /* to complex from anything */
    case CXLA_OP_COMPLEX: return ot == CXLA_F32 || ot == CXLA_F64;
    default: break;
    }
    if (!(cxla_opcode_get_info(instr->opcode)->flags & CXLA_OPF_ELEMENTWISE)) return false;
    if (instr->operand_count == 1) return cpu_emit_complex_unary_ok(instr->opcode);
    return instr->operand_count == 2 && ot == t && cpu_emit_complex_binary_ok(instr->opcode);
}

static bool has_complex(const cxla_instr *instr) {
    if (cxla_type_is_complex(instr->shape.type)) return true;
    for (int64_t k = 0; k < instr->operand_count; k++)
        if (cxla_type_is_complex(instr->operands[k]->shape.type)) return true;
    return false;
}

/* Whether |instr| (inside a fusion, or unfused with its operands as inputs) has a C form;
 * |why| says why not. */
/* Whether floats of two precisions meet in |instr| (f32 + bf16, a bf16 value broadcast
 * into f32), which the verifier allows as XLA's does: the interpreter runs those, with
 * its conversions; the kernels here assume one element type. Conversions are not mixed. */
static bool mixed_precision(const cxla_instr *instr) {
    cxla_opcode op = instr->opcode;
    if (op == CXLA_OP_CONVERT || op == CXLA_OP_BITCAST_CONVERT || op == CXLA_OP_PARAMETER)
        return false;
    cxla_type seen = cxla_type_is_float(instr->shape.type) ? instr->shape.type : CXLA_TYPE_INVALID;
    for (int64_t k = 0; k < instr->operand_count; k++) {
        cxla_type t = instr->operands[k]->shape.type;
        if (!cxla_type_is_float(t)) continue;
        if (seen != CXLA_TYPE_INVALID && t != seen) return true;
        seen = t;
    }
    return false;
}

static bool op_ok(const cxla_instr *instr, bool in_fusion, const char **why) {
    /* Kernels of emit_lib.c's (these reasons are what shows when it refuses them too). */
    switch (instr->opcode) {
    case CXLA_OP_SCAN:
        *why = "scan has a kernel only for a body that computes each position on its own "
               "(elementwise operations, compare, select, convert)";
        return false;
    case CXLA_OP_RAGGED_DOT:
    case CXLA_OP_SCALED_DOT:
        *why = "ragged-dot and scaled-dot have kernels for real floats and integers (not "
               "complex, not floats into an integer result)";
        return false;
    default: break;
    }
    *why = "a reduce, reduce-window or scatter of more than 64 inputs (operands): its kernel's "
           "reducer gives one result per input, 64 at most (CPU_EMIT_MAX_REDUCER_RESULTS in "
           "src/cpu/emit_internal.h; the JIT runs it on the interpreter's handler)";
    if ((instr->opcode == CXLA_OP_REDUCE || instr->opcode == CXLA_OP_REDUCE_WINDOW ||
         instr->opcode == CXLA_OP_SCATTER) &&
        instr->operand_count / 2 > CPU_EMIT_MAX_REDUCER_RESULTS)
        return false;
    *why = "unsupported shape or element type";
    if (!static_array(&instr->shape)) return false;
    for (int64_t k = 0; k < instr->operand_count; k++)
        if (!static_array(&instr->operands[k]->shape)) return false;
    /* Mixed precision where the interpreter converts the operands (elementwise operations
     * and data movement: value() converts them the same way); elsewhere not taken. */
    *why = "mixed floating-point precision (left to the interpreter)";
    if (mixed_precision(instr) && interp_mixed_precision_target(instr) == CXLA_TYPE_INVALID)
        return false;
    *why = "complex numbers: only data movement, select, EQ/NE, convert, complex, real, imag "
           "and the elementwise arithmetic and functions";
    if (has_complex(instr) && !complex_op_ok(instr)) return false;
    *why = "sub-byte integers: elementwise operations, data movement and gather only";
    if (has_subbyte(instr) && instr->opcode == CXLA_OP_REDUCE) return false;
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
        *why = "start indices must be integer scalars, one per dimension, or one integer "
               "vector of them";
        const cxla_shape *vs =
            instr->operand_count == first + 1 ? &instr->operands[first]->shape : NULL;
        if (vs && vs->rank == 1 && instr->operands[0]->shape.rank != 0) /* the older form */
            return cxla_type_is_integer(vs->type) && vs->dims[0] == instr->operands[0]->shape.rank;
        if (instr->operand_count != first + instr->operands[0]->shape.rank) return false;
        for (int64_t k = first; k < instr->operand_count; k++)
            if (!cxla_type_is_integer(instr->operands[k]->shape.type) ||
                instr->operands[k]->shape.rank != 0)
                return false;
        return true;
    }
    case CXLA_OP_CONVERT: return true;
    case CXLA_OP_GET_DIMENSION_SIZE: {
        /* Static operands only (static_array above): the size is a constant. */
        int64_t n = 0;
        const int64_t *d = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &n);
        *why = "dimensions= must name one dimension whose size fits in s32";
        return instr->operand_count == 1 && n == 1 && d[0] >= 0 &&
               d[0] < instr->operands[0]->shape.rank &&
               instr->operands[0]->shape.dims[d[0]] <= INT32_MAX && t == CXLA_S32;
    }
    case CXLA_OP_GATHER:
        *why = "gather dimension numbers or index type not supported";
        return cpu_emit_gather_map(instr, NULL);
    case CXLA_OP_COMPARE: {
        const char *d = cxla_instr_word(instr, CXLA_ATTR_DIRECTION);
        return d && cpu_emit_compare(NULL, d, NULL, CXLA_PRED, "a", "b") != NULL;
    }
    case CXLA_OP_SELECT:
    case CXLA_OP_CLAMP: return true;
    case CXLA_OP_STOCHASTIC_CONVERT: {
        /* The interpreter's checks: a float, unsigned random bits as wide, a signed result. */
        cxla_type ft = instr->operands[0]->shape.type, rt = instr->operands[1]->shape.type;
        *why = "stochastic-convert needs a float operand, unsigned random bits as wide and a "
               "signed integer result";
        return cxla_type_is_float(ft) && cxla_type_is_unsigned(rt) &&
               cxla_type_bits(rt) == cxla_type_bits(ft) && cxla_type_is_signed(t) &&
               (cpu_emit_type_ok(t) || cpu_emit_subbyte(t)) &&
               (cpu_emit_type_ok(rt) || cpu_emit_subbyte(rt));
    }
    case CXLA_OP_COMPLEX: return complex_op_ok(instr);
    case CXLA_OP_REDUCE:
        *why = "reduce needs one input and a reducer of add, multiply, maximum, minimum, and, "
               "or, xor";
        return cpu_nest_match_reducer(instr) != RED_NONE;
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
            /* A reduce in the fast order is computed where its value is needed (a row's
             * maximum or sum before the row's elements; see inline_reduce). */
            if (!at_root && cpu_nest_reduce_in_loop(x)) continue;
            if (!at_root || x->user_count > (x == root ? 0 : 1)) {
                *why = "a reduce must be an output of the fusion";
                return x;
            }
        }
    }
    return NULL;
}

/* A fusion whose root is a reduce-window (emit_window.c writes it, reading its inputs
 * through fused_window_read): every other instruction has a C form and is no reduce. */
static bool fused_window_ok(const cxla_computation *c) {
    const char *why;
    for (int64_t i = 0; i < c->instr_count; i++) {
        const cxla_instr *x = c->instrs[i];
        if (x == c->root) continue;
        if (x->opcode == CXLA_OP_REDUCE || x->opcode == CXLA_OP_TUPLE || !op_ok(x, true, &why))
            return false;
    }
    return cpu_emit_reduce_window_ok(c->root);
}

bool cpu_can_emit(const cxla_instr *instr) {
    const char *why;
    if (instr->opcode == CXLA_OP_DOT) return cpu_emit_dot_ok(instr);
    if (instr->opcode == CXLA_OP_REDUCE_WINDOW) return cpu_emit_reduce_window_ok(instr);
    if (instr->opcode == CXLA_OP_SELECT_AND_SCATTER) return cpu_emit_select_and_scatter_ok(instr);
    if (instr->opcode == CXLA_OP_SCATTER) return cpu_emit_scatter_ok(instr);
    if (instr->opcode == CXLA_OP_CONVOLUTION) return cpu_emit_conv_ok(instr);
    if (instr->opcode == CXLA_OP_FUSION) {
        const cxla_computation *c = cxla_instr_called(instr, CXLA_ATTR_CALLS);
        if (!c || !c->root) return false;
        for (int64_t k = 0; k < instr->operand_count; k++)
            if (!static_array(&instr->operands[k]->shape)) return false;
        if (c->root->opcode == CXLA_OP_REDUCE_WINDOW) return fused_window_ok(c);
        return fusion_blocker(c, &why) == NULL;
    }
    return op_ok(instr, false, &why) || cpu_emit_lib_ok(instr);
}

/* ---- loops --------------------------------------------------------------------------- *
 *
 * What gcc -O2 vectorizes (its "very cheap" cost model, checked with -fopt-info-vec): an
 * innermost loop with a constant trip count, contiguous accesses through restrict pointers
 * that are function parameters (restrict locals loaded from in[] are not trusted, and
 * without them the loop would need a run-time alias check, which that model refuses), and
 * no calls. So a kernel is a static body function taking its arrays as restrict
 * parameters; flat loops run in blocks of BLOCK elements (a constant inner loop) plus a
 * constant tail; a nest's innermost loop has a constant count, split into a part that is
 * a multiple of 16 and a remainder when it is not; reductions run across blocks of output
 * lanes when the lanes are contiguous (a column sum) and as interleaved pairwise leaves
 * otherwise (a row sum). */

enum { BLOCK = 64 };

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

/* Stores every output of |g| at |x|. */
static void store_group(em *e, const group *g, ix *x) {
    for (int64_t j = 0; j < g->count; j++) {
        const cxla_instr *o = g->outs[g->idx[j]];
        ix y = *x;
        y.dims = o->shape.dims;
        const char *v = value(e, o, &y);
        if (e->stream_at)
            line(e, "ob%" PRId64 "[%s] = %s;", g->idx[j], e->stream_at, v);
        else
            line(e, "o%" PRId64 "[%s] = %s;", g->idx[j], ix_lin(e, x), v);
    }
}

/* The iterations of the outer loop of an elementwise nest over |s|. */
static int64_t elementwise_range(const cxla_shape *s, bool dims) {
    int64_t which[CXLA_MAX_RANK];
    int64_t nb = big_dims(s, which);
    if (dims && nb >= 2) return s->dims[which[0]];
    int64_t n = elements_of(s);
    return n / BLOCK + (n % BLOCK ? 1 : 0);
}

/* A flat loop over the |n| elements of |x|'s shape: blocks of BLOCK (one iteration of the
 * outer loop each) and a constant tail. |single| names the one dimension the index runs
 * along when the others are 1 (-1: use the linear index). */
static void flat_nest(em *e, const group *g, ix *x, int64_t n, int64_t single) {
    int64_t full = n / BLOCK, tail = n % BLOCK;
    int64_t mark = e->ncse;
    /* Whole blocks stream (see above): a block's elements into the local blocks, then out. */
    bool stream = cpu_nest_stream_flat(e, g) && cpu_nest_stream_lines(g, BLOCK);
    for (int part = 0; part < 2; part++) {
        int64_t count = part == 0 ? BLOCK : tail;
        if (count == 0 || (part == 0 && full == 0)) continue;
        if (part == 0) {
            const char *hi = e->ranged ? F("(end < %" PRId64 " ? end : %" PRId64 ")", full, full)
                                       : F("%" PRId64, full);
            line(e, "for (int64_t b = %s; b < %s; b++) {", lo_of(e), hi);
            e->indent++;
            line(e, "const int64_t base = b * %d;", BLOCK);
            if (stream) cpu_nest_stream_blocks(e, g, BLOCK);
        } else {
            line(e, "if (%s > %" PRId64 ") {", hi_of(e, full + 1), full);
            e->indent++;
            line(e, "const int64_t base = %" PRId64 ";", full * BLOCK);
        }
        line(e, "for (int64_t k = 0; k < %" PRId64 "; k++) {", count);
        e->indent++;
        line(e, "const int64_t i = base + k;");
        line(e, "(void)i; /* unused when the output is a scalar (-Wunused-variable) */");
        ix y = ix_new(x->rank, x->dims);
        if (y.rank > 0) y.lin = "i"; /* a scalar stays at "0", its values hoisted */
        if (single >= 0)
            for (int64_t k = 0; k < y.rank; k++) y.d[k] = k == single ? "i" : "0";
        e->stream_at = stream && part == 0 ? "k" : NULL;
        store_group(e, g, &y);
        e->stream_at = NULL;
        cse_reset(e, mark);
        close_loops(e, 1);
        if (stream && part == 0) cpu_nest_stream_out(e, g, "base", "0", BLOCK);
        close_loops(e, 1);
    }
}

/* Whether the kernel's fused computation computes a reduce inside its loop (row fusion). */
static bool has_inline_reduce(const em *e) {
    if (!e->fused) return false;
    const cxla_instr *root = e->fused->root;
    for (int64_t i = 0; i < e->fused->instr_count; i++) {
        const cxla_instr *r = e->fused->instrs[i];
        if (r->opcode != CXLA_OP_REDUCE || r == root) continue;
        bool out = false;
        for (int64_t u = 0; u < r->user_count; u++)
            out = out || (r->users[u] == root && root->opcode == CXLA_OP_TUPLE);
        if (!out) return true;
    }
    return false;
}

/* Computes, before the innermost loop of a nest over |s| at |x| (its outer indices set),
 * the in-loop reduces of the last dimension of an array shaped as |s|: one value per row,
 * kept in scope for the row's elements (their index is the one a broadcast along the last
 * dimension asks for). In post order, so that a reduce that reads another finds it. */
static void row_reduces(em *e, const cxla_shape *s, ix *x) {
    if (!has_inline_reduce(e)) return;
    for (int64_t i = 0; i < e->fused->instr_count && !e->err; i++) {
        const cxla_instr *r = e->fused->instrs[i];
        if (r->opcode != CXLA_OP_REDUCE || r == e->fused->root ||
            !same_dims(&r->operands[0]->shape, s) || r->shape.rank != s->rank - 1)
            continue;
        int64_t nd = 0;
        const int64_t *dims = cxla_instr_ints(r, CXLA_ATTR_DIMENSIONS, &nd);
        if (nd != 1 || dims[0] != s->rank - 1) continue;
        ix y = ix_new(r->shape.rank, r->shape.dims);
        for (int64_t k = 0; k < r->shape.rank; k++) y.d[k] = x->d[k];
        value(e, r, &y);
    }
}

/* A nest over the dimensions of |s| larger than 1: the first ranged, the innermost with a
 * constant count (a multiple of 16 and a remainder, each its own loop). */
static void dims_nest(em *e, const group *g, const cxla_shape *s) {
    int64_t which[CXLA_MAX_RANK];
    int64_t nb = big_dims(s, which);
    if (elements_of(s) == 0) return; /* nothing to write */
    ix x = ix_new(s->rank, s->dims);
    for (int64_t k = 0; k < s->rank; k++) x.d[k] = "0";
    if (nb <= 1) {
        flat_nest(e, g, &x, elements_of(s), nb == 1 ? which[0] : -1);
        return;
    }
    if (cpu_nest_transpose(e, g, s)) return;
    int opened = 0;
    for (int64_t j = 0; j + 1 < nb; j++) {
        int64_t k = which[j];
        const char *i = F("i%" PRId64, k);
        if (j == 0)
            line(e, "for (int64_t %s = %s; %s < %s; %s++) {", i, lo_of(e), i, hi_of(e, s->dims[k]),
                 i);
        else
            line(e, "for (int64_t %s = 0; %s < %" PRId64 "; %s++) {", i, i, s->dims[k], i);
        e->indent++;
        opened++;
        x.d[k] = i;
    }
    int64_t last = which[nb - 1], d = s->dims[last];
    int64_t main_count = d >= 32 && d % 16 ? d - d % 16 : d;
    const char *i = F("i%" PRId64, last);
    e->nrow_stored = 0;
    e->row_out = NULL;
    e->row_out_local = false;
    if (g->count == 1) {
        e->row_out = F("o%" PRId64, g->idx[0]);
        e->row_out_type = g->outs[g->idx[0]]->shape.type;
    }
    /* Rows streamed out through local blocks (emit_rows.c). */
    bool stream = cpu_nest_rows_stream(e, g, s, last);
    if (stream) cpu_nest_rows_begin(e, g, s);
    ix r0 = x;
    r0.d[last] = "0";
    r0.lin = NULL;
    e->row_shape = s;
    const char *start = e->row_start = ix_lin(e, &r0);
    e->row_reduces_done = 0;
    e->row_prefetched = false;
    row_reduces(e, s, &x);
    e->row_out = NULL;
    e->row_out_local = false;
    e->row_start = NULL;
    for (int64_t j = 0; j < e->nrow_stored; j++) {
        /* Stored in the output row (or the local row) by its reduce: read there by the
         * row's loop. */
        const cxla_instr *st = e->row_stored[j];
        ix y = x;
        y.d[last] = i;
        y.dims = st->shape.dims;
        y.lin = NULL;
        const char *at = ix_lin(e, &y);
        cse_add(e, st, at, stream ? F("row[%s]", i) : F("o%" PRId64 "[%s]", g->idx[0], at));
    }
    if (stream) {
        cpu_nest_rows_loop(e, g, s, &x, start);
        close_loops(e, opened);
        return;
    }
    int64_t mark = e->ncse;
    for (int part = 0; part < 2; part++) {
        int64_t from = part == 0 ? 0 : main_count, to = part == 0 ? main_count : d;
        if (from == to) continue;
        line(e, "for (int64_t %s = %" PRId64 "; %s < %" PRId64 "; %s++) {", i, from, i, to, i);
        e->indent++;
        ix y = x;
        y.d[last] = i;
        store_group(e, g, &y);
        cse_reset(e, mark);
        close_loops(e, 1);
    }
    close_loops(e, opened);
}

/* The parameter declarations and arguments of the kernel's arrays. */
static void build_params(em *e, const cxla_instr *const *outs, int64_t nout) {
    cxla_strbuf op, ip, oa, ia, names;
    cxla_strbuf_init(&op);
    cxla_strbuf_init(&ip);
    cxla_strbuf_init(&oa);
    cxla_strbuf_init(&ia);
    cxla_strbuf_init(&names);
    for (int64_t i = 0; i < nout; i++) {
        const char *st = cpu_emit_stype(outs[i]->shape.type);
        cxla_strbuf_printf(&op, "%s%s *restrict o%" PRId64, i ? ", " : "", st, i);
        cxla_strbuf_printf(&oa, "%s(%s *)out[%" PRId64 "]", i ? ", " : "", st, i);
    }
    int64_t n = e->fused ? e->fused->param_count : e->top->operand_count;
    for (int64_t k = 0; k < n; k++) {
        if (e->aliased && k == e->alias_in) continue; /* read through o0 (the body's local) */
        const cxla_shape *s = e->fused ? &e->fused->params[k]->shape : &e->top->operands[k]->shape;
        const char *st = cpu_emit_stype(s->type);
        const char *sep = ip.len ? ", " : "";
        cxla_strbuf_printf(&ip, "%sconst %s *restrict p%" PRId64, sep, st, k);
        cxla_strbuf_printf(&ia, "%s(const %s *)in[%" PRId64 "]", sep, st, k);
        cxla_strbuf_printf(&names, "%sp%" PRId64, sep, k);
    }
    e->out_params = F("%s", op.data ? op.data : "");
    e->in_params = F("%s", ip.data ? ip.data : "");
    e->out_args = F("%s", oa.data ? oa.data : "");
    e->in_args = F("%s", ia.data ? ia.data : "");
    e->in_names = F("%s", names.data ? names.data : "");
    cpu_emit_buf_free(&op);
    cpu_emit_buf_free(&ip);
    cpu_emit_buf_free(&oa);
    cpu_emit_buf_free(&ia);
    cpu_emit_buf_free(&names);
}

/* ---- for emit_transpose.c and emit_reduce.c (emit_nest.h)
 * -------------------------------------------- */

const char *cpu_nest_value(em *e, const cxla_instr *instr, ix *x) {
    return value(e, instr, x);
}
void cpu_nest_store_group(em *e, const group *g, ix *x) {
    store_group(e, g, x);
}
void cpu_nest_cse_add(em *e, const cxla_instr *instr, const char *key, const char *var) {
    cse_add(e, instr, key, var);
}
const char *cpu_nest_ix_lin(em *e, ix *x) {
    return ix_lin(e, x);
}
int64_t cpu_nest_input_index(const em *e, const cxla_instr *instr) {
    return input_index(e, instr);
}
bool cpu_nest_has_inline_reduce(const em *e) {
    return has_inline_reduce(e);
}
int64_t cpu_nest_elementwise_range(const cxla_shape *s, bool dims) {
    return elementwise_range(s, dims);
}
void cpu_nest_fail(em *e, const cxla_instr *instr, const char *why) {
    fail(e, instr, why);
}
void cpu_nest_comment(em *e, const cxla_instr *instr) {
    comment(e, instr);
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

static void write_prelude(cxla_strbuf *out, bool fast) {
    for (int i = 0; cpu_emit_prelude_lines[i]; i++)
        cxla_strbuf_puts(out, cpu_emit_prelude_lines[i]);
    cpu_emit_small_float_helpers(out);
    if (fast) {
        cxla_strbuf_puts(out, "\n/* ---- fast f32 functions (src/cpu/cxla_math.h) */\n");
        cxla_strbuf_puts(out, cpu_math_source());
    }
    cxla_strbuf_putc(out, '\n');
}

/* The prelude's text, written once per process for each value of cpu_emit_fast_math():
 * about 100 KB that every translation unit repeats (16 for a module of 1,000
 * instructions, where printing it was 8% of the CPU time of a load from the cache, which
 * emits the C to find its key). Kept until the process ends. */
static pthread_mutex_t prelude_lock = PTHREAD_MUTEX_INITIALIZER;
static char *prelude_text[2];
static size_t prelude_len[2];

void cpu_emit_prelude(cxla_strbuf *out) {
    bool fast = cpu_emit_fast_math();
    pthread_mutex_lock(&prelude_lock);
    if (!prelude_text[fast]) {
        cxla_strbuf b;
        cxla_strbuf_init(&b);
        write_prelude(&b, fast);
        char *copy = b.failed || !b.data ? NULL : malloc(b.len);
        if (copy) {
            memcpy(copy, b.data, b.len);
            prelude_text[fast] = copy;
            prelude_len[fast] = b.len;
        }
        cxla_strbuf_free(&b);
    }
    const char *text = prelude_text[fast];
    size_t len = prelude_len[fast];
    pthread_mutex_unlock(&prelude_lock);
    if (text)
        cxla_strbuf_append(out, text, len);
    else
        write_prelude(out, fast); /* out of memory for the kept copy: the same text */
}

/* Bytes of an array shape. */
static double bytes_of(const cxla_shape *s) {
    return (double)elements_of(s) * (double)cxla_type_storage(s->type);
}

/* The kernel's work in byte-equivalents (cpu_kernel_info.cost): the bytes it reads and
 * writes, and TRANSCENDENTAL_BYTES per element of each math function (a libm call in
 * double costs about what streaming that many bytes does). */
enum { TRANSCENDENTAL_BYTES = 32 };
static double kernel_cost(const em *e, const cxla_instr *const *outs, int64_t nout) {
    double c = 0;
    for (int64_t i = 0; i < nout; i++) c += bytes_of(&outs[i]->shape);
    for (int64_t k = 0; k < e->top->operand_count; k++) c += bytes_of(&e->top->operands[k]->shape);
    const cxla_instr *const *list =
        e->fused ? (const cxla_instr *const *)e->fused->instrs : &e->top;
    int64_t n = e->fused ? e->fused->instr_count : 1;
    for (int64_t i = 0; i < n; i++)
        if (exec_math_unary(list[i]->opcode) && cxla_type_is_float(list[i]->shape.type))
            c += (double)TRANSCENDENTAL_BYTES * (double)elements_of(&list[i]->shape);
    return c;
}

/* The reader of a fused reduce-window's inputs (cpu_emit_reader): the value of the root's
 * operand |k| at linear offset |at|, its statements written where the window kernel is. */
static const char *fused_window_read(void *ctx, cxla_strbuf *b, int indent, int64_t k,
                                     const char *at) {
    em *e = ctx;
    const cxla_instr *src = e->fused->root->operands[k];
    cxla_strbuf *saved = e->b;
    int saved_indent = e->indent;
    int64_t mark = e->ncse;
    e->b = b;
    e->indent = indent;
    ix y = ix_new(src->shape.rank, src->shape.dims);
    /* |at| may be a sum (`base + k`); the index arithmetic divides it. */
    if (src->shape.rank > 0) y.lin = F("(%s)", at);
    const char *v = value(e, src, &y);
    /* The statements live in the caller's block: nothing is reused after it. */
    e->ncse = mark;
    e->b = saved;
    e->indent = saved_indent;
    return v;
}

static cxla_status emit_fused_window(const cxla_instr *instr, const cxla_computation *fused,
                                     const char *name, cxla_strbuf *out,
                                     cpu_kernel_info *out_info) {
    if (!fused_window_ok(fused))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "cpu backend: cannot emit fusion %s: its reduce-window or an "
                          "instruction feeding it has no C form",
                          instr->name);
    em ctx;
    memset(&ctx, 0, sizeof ctx);
    em *e = &ctx;
    e->arena = cxla_arena_create();
    if (!e->arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cpu_emit_fmt_reset();
    e->name = name;
    e->top = instr;
    e->fused = fused;
    cxla_strbuf_init(&e->consts);
    cxla_strbuf_init(&e->helpers);
    const cxla_instr *outs[1] = {fused->root};
    build_params(e, outs, 1);
    cpu_emit_reader reader = {fused_window_read, e,           e->in_params,
                              e->in_args,        e->in_names, fused->param_count};
    cxla_strbuf text;
    cxla_strbuf_init(&text);
    cxla_status st = cpu_emit_reduce_window_fused(instr, name, &text, out_info, &reader);
    if (!st) st = e->err;
    if (!st) {
        cxla_strbuf_append(out, e->consts.data ? e->consts.data : "", e->consts.len);
        cxla_strbuf_append(out, text.data ? text.data : "", text.len);
        if (out->failed || e->consts.failed)
            st = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s",
                            instr->name);
    } else if (st == e->err) {
        e->err = NULL;
    }
    cpu_emit_buf_free(&text);
    cpu_emit_buf_free(&e->consts);
    cpu_emit_buf_free(&e->helpers);
    cxla_status_free(e->err);
    cxla_arena_destroy(e->arena);
    return st;
}

cxla_status cpu_emit_kernel(const cxla_instr *instr, const char *name, cxla_strbuf *out) {
    return cpu_emit_kernel_info(instr, name, out, NULL);
}

static cxla_status emit_kernel_info(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                    cpu_kernel_info *out_info, int64_t alias);

cxla_status cpu_emit_kernel_info(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                 cpu_kernel_info *out_info) {
    size_t start = out->len;
    cpu_emit_complex_libm_reset();
    cxla_status s = emit_kernel_info(instr, name, out, out_info, -1);
    if (!s) cpu_emit_complex_libm_guard(name, out, start);
    return s;
}

/* Whether instruction |x| of a kernel's computation is computed at each output index from
 * its operands at that same index: an elementwise operation over the output's dimensions
 * (not a reduce, broadcast, reshape, transpose, slice or anything that moves elements). */
static bool same_index_op(const cxla_instr *x, const cxla_shape *out) {
    return (cxla_opcode_get_info(x->opcode)->flags & CXLA_OPF_ELEMENTWISE) &&
           same_dims(&x->shape, out);
}

bool cpu_emit_alias_ok(const cxla_instr *instr, int64_t k) {
    if (k < 0 || k >= instr->operand_count) return false;
    const cxla_shape *os = &instr->shape, *ks = &instr->operands[k]->shape;
    /* Whole-byte elements of one type, so that element i of both lies at the same bytes. */
    if (!static_array(os) || !static_array(ks) || os->type != ks->type ||
        cpu_emit_subbyte(os->type) || !same_dims(os, ks))
        return false;
    if (instr->opcode != CXLA_OP_FUSION) {
        /* One elementwise instruction that the general emitter writes (not a library kernel),
         * reading its operand k once. */
        const char *why = NULL;
        if (!same_index_op(instr, os) || !op_ok(instr, false, &why)) return false;
        for (int64_t j = 0; j < instr->operand_count; j++)
            if (j != k && instr->operands[j] == instr->operands[k]) return false;
        return true;
    }
    const cxla_computation *c = cxla_instr_called(instr, CXLA_ATTR_CALLS);
    if (!cpu_can_emit(instr) || !c || !c->root || k >= c->param_count ||
        c->root->opcode == CXLA_OP_TUPLE || c->root->opcode == CXLA_OP_REDUCE ||
        c->root->opcode == CXLA_OP_REDUCE_WINDOW)
        return false;
    /* Every value that depends on parameter k is computed at the output's index from
     * values at that index, up to the root: then each output element is written after the
     * last read of parameter k's element at the same index, and no other is read. Marked
     * to a fixed point over the instructions (a few passes in post order). */
    enum { MAX_INSTRS = 4096 };
    int64_t n = c->instr_count;
    if (n > MAX_INSTRS) return false;
    bool reach[MAX_INSTRS] = {false};
    bool changed = true, root = false;
    while (changed) {
        changed = false;
        for (int64_t i = 0; i < n; i++) {
            const cxla_instr *x = c->instrs[i];
            if (reach[i]) continue;
            bool r = x->opcode == CXLA_OP_PARAMETER && x->parameter_number == k;
            for (int64_t j = 0; !r && j < n; j++)
                for (int64_t o = 0; reach[j] && o < x->operand_count; o++)
                    r = r || x->operands[o] == c->instrs[j];
            if (!r) continue;
            if (x->opcode != CXLA_OP_PARAMETER && !same_index_op(x, os)) return false;
            reach[i] = changed = true;
            root = root || x == c->root;
        }
    }
    for (int64_t j = 0; j < instr->operand_count; j++)
        if (j != k && instr->operands[j] == instr->operands[k]) return false;
    return root;
}

cxla_status cpu_emit_kernel_alias(const cxla_instr *instr, int64_t k, const char *name,
                                  cxla_strbuf *out, cpu_kernel_info *out_info) {
    if (!cpu_emit_alias_ok(instr, k))
        return cxla_error(CXLA_STATUS_INTERNAL,
                          "cpu backend: %s cannot write its result over operand %" PRId64,
                          instr->name, k);
    size_t start = out->len;
    cpu_emit_complex_libm_reset();
    cxla_status s = emit_kernel_info(instr, name, out, out_info, k);
    if (!s) cpu_emit_complex_libm_guard(name, out, start);
    return s;
}

static cxla_status emit_kernel_info(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                    cpu_kernel_info *out_info, int64_t alias) {
    const char *why = NULL;
    if (out_info) memset(out_info, 0, sizeof(*out_info));
    if (instr->opcode == CXLA_OP_DOT) return cpu_emit_dot(instr, name, out, out_info);
    if (instr->opcode == CXLA_OP_REDUCE_WINDOW)
        return cpu_emit_reduce_window(instr, name, out, out_info);
    if (instr->opcode == CXLA_OP_SELECT_AND_SCATTER)
        return cpu_emit_select_and_scatter(instr, name, out, out_info);
    if (instr->opcode == CXLA_OP_SCATTER) return cpu_emit_scatter(instr, name, out, out_info);
    if (instr->opcode == CXLA_OP_CONVOLUTION) return cpu_emit_conv(instr, name, out, out_info);
    if (instr->opcode != CXLA_OP_FUSION && !op_ok(instr, false, &why) && cpu_emit_lib_ok(instr))
        return cpu_emit_lib(instr, name, out, out_info); /* emit_lib.c */
    const cxla_computation *fused = NULL;
    if (instr->opcode == CXLA_OP_FUSION) {
        fused = cxla_instr_called(instr, CXLA_ATTR_CALLS);
        if (!fused || !fused->root)
            return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                              "cpu backend: cannot emit fusion %s: no called computation",
                              instr->name);
        if (fused->root->opcode == CXLA_OP_REDUCE_WINDOW)
            return emit_fused_window(instr, fused, name, out, out_info);
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
    cpu_emit_fmt_reset();
    e->name = name;
    e->top = instr;
    e->fused = fused;
    e->aliased = alias >= 0;
    e->alias_in = alias;
    cxla_strbuf_init(&e->consts);
    cxla_strbuf_init(&e->helpers);
    cxla_strbuf body, hoist;
    cxla_strbuf_init(&body);
    cxla_strbuf_init(&hoist);
    e->b = &body;
    e->indent = 1;
    void_inputs(e);

    /* The outputs: the root, or the root tuple's elements. */
    const cxla_instr *root = fused ? fused->root : instr;
    enum { MAX_OUTS = 256 };
    const cxla_instr *outs[MAX_OUTS];
    int64_t nout = 1;
    if (fused && root->opcode == CXLA_OP_TUPLE) {
        nout = root->operand_count < MAX_OUTS ? root->operand_count : MAX_OUTS;
        for (int64_t i = 0; i < nout; i++) outs[i] = root->operands[i];
    } else {
        outs[0] = root;
    }
    build_params(e, outs, nout);

    /* The nests: one per reduce, one per shape of the other outputs (they share their
     * operands' values). All nests split by one range when their outer loops agree;
     * otherwise the kernel is one unit of work. */
    int64_t group_of[MAX_OUTS], range = 0;
    bool agree = true;
    for (int64_t i = 0; i < nout; i++) {
        group_of[i] = i;
        if (outs[i]->opcode != CXLA_OP_REDUCE)
            for (int64_t j = 0; j < i; j++)
                if (outs[j]->opcode != CXLA_OP_REDUCE &&
                    same_dims(&outs[j]->shape, &outs[i]->shape)) {
                    group_of[i] = group_of[j];
                    break;
                }
        if (group_of[i] != i) continue;
        int64_t r;
        if (outs[i]->opcode == CXLA_OP_REDUCE) {
            r = cpu_nest_reduce_range(outs[i]);
        } else {
            bool dims = false;
            for (int64_t j = i; j < nout; j++)
                if (same_dims(&outs[j]->shape, &outs[i]->shape) &&
                    outs[j]->opcode != CXLA_OP_REDUCE)
                    dims = dims || needs_dims(e, outs[j]);
            r = cpu_nest_range(e, &outs[i]->shape, dims);
        }
        if (i == 0)
            range = r;
        else if (r != range)
            agree = false;
    }
    e->ranged = agree && range > 1;
    if (!e->ranged) range = 1;

    for (int64_t i = 0; i < nout && !e->err; i++) {
        if (group_of[i] != i) continue;
        if (outs[i]->opcode == CXLA_OP_REDUCE) {
            e->hoist = NULL;
            cpu_nest_reduce(e, outs[i], i);
            e->ncse = 0;
            continue;
        }
        int64_t idx[MAX_OUTS], count = 0;
        bool dims = false;
        for (int64_t j = i; j < nout; j++)
            if (group_of[j] == i) {
                idx[count++] = j;
                dims = dims || needs_dims(e, outs[j]);
            }
        group g = {outs, idx, count};
        cpu_emit_buf_free(&hoist);
        cxla_strbuf_init(&hoist);
        cxla_strbuf *main_b = e->b;
        e->hoist = &hoist;
        e->hoist_indent = e->indent;
        cxla_strbuf loop;
        cxla_strbuf_init(&loop);
        e->b = &loop;
        const cxla_shape *s = &outs[i]->shape;
        if (dims) {
            dims_nest(e, &g, s);
        } else {
            ix x = ix_new(s->rank, s->dims);
            flat_nest(e, &g, &x, elements_of(s), -1);
        }
        e->b = main_b;
        cxla_strbuf_append(e->b, hoist.data ? hoist.data : "", hoist.len);
        cxla_strbuf_append(e->b, loop.data ? loop.data : "", loop.len);
        cpu_emit_buf_free(&loop);
        e->ncse = 0;
        e->hoist = NULL;
    }

    cxla_status st = e->err;
    if (!st) {
        /* The kernel: its HLO, constants, helpers, the body, then the entry point. */
        cxla_strbuf head;
        cxla_strbuf_init(&head);
        cxla_hlo_print_instr(&head, instr, CXLA_HLO_STYLE_SHORT);
        if (head.data) {
            for (char *p = strstr(head.data, "*/"); p; p = strstr(p, "*/")) p[1] = ' ';
            for (char *p = strstr(head.data, "/*"); p; p = strstr(p, "/*")) p[1] = ' ';
        }
        cxla_strbuf_printf(out, "/* ---- %s: %s */\n", name, head.data ? head.data : instr->name);
        cpu_emit_buf_free(&head);
        cxla_strbuf_append(out, e->consts.data ? e->consts.data : "", e->consts.len);
        cxla_strbuf_append(out, e->helpers.data ? e->helpers.data : "", e->helpers.len);
        const char *sep = e->in_params[0] ? ", " : "";
        cxla_strbuf_printf(out, "static void %s_body(%s%s%s, int64_t begin, int64_t end) {\n", name,
                           e->out_params, sep, e->in_params);
        cxla_strbuf_puts(out, "    (void)begin;\n    (void)end;\n");
        /* An empty output writes nothing (-Wunused-parameter). */
        for (int64_t i = 0; i < nout; i++) cxla_strbuf_printf(out, "    (void)o%" PRId64 ";\n", i);
        if (e->aliased) {
            /* The input lies in the result's buffer (cpu_emit_kernel_alias). Read through a
             * pointer based on o0, so that no two restrict pointers reach the elements that
             * are written (C11 6.7.3.1), and the compiler sees one array: each element is
             * read before it is written, at its own index only (cpu_emit_alias_ok). */
            const cxla_shape *as =
                fused ? &fused->params[alias]->shape : &instr->operands[alias]->shape;
            cxla_strbuf_printf(out,
                               "    const %s *const p%" PRId64 " = o0; /* operand %" PRId64
                               " is the result's buffer */\n",
                               cpu_emit_stype(as->type), alias, alias);
        }
        cxla_strbuf_append(out, body.data ? body.data : "", body.len);
        cxla_strbuf_puts(out, "}\n");
        cxla_strbuf_printf(out,
                           "/* Iterations [begin, end) of the outer loop, of %" PRId64 ". */\n"
                           "void %s(void *const *out, const void *const *in, int64_t begin, "
                           "int64_t end);\n",
                           range, name);
        cxla_strbuf_printf(out,
                           "void %s(void *const *out, const void *const *in, int64_t begin, "
                           "int64_t end) {\n",
                           name);
        cxla_strbuf_printf(out, "    (void)in;\n    if (end > %" PRId64 ") end = %" PRId64 ";\n",
                           range, range);
        cxla_strbuf_puts(out, "    if (begin < 0) begin = 0;\n    if (begin >= end) return;\n");
        cxla_strbuf_printf(out, "    %s_body(%s%s%s, begin, end);\n", name, e->out_args, sep,
                           e->in_args);
        /* Streaming stores are weakly ordered: done before the caller's barrier. */
        if (e->streamed) cxla_strbuf_puts(out, "    CXLA_STREAM_FENCE();\n");
        cxla_strbuf_puts(out, "}\n\n");
        if (out->failed || body.failed || hoist.failed || e->consts.failed || e->helpers.failed ||
            cpu_emit_fmt_failed())
            st = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s",
                            instr->name);
        if (!st && out_info) {
            out_info->range = range;
            out_info->cost = kernel_cost(e, outs, nout);
        }
    }
    cxla_strbuf_free(&body);
    cxla_strbuf_free(&hoist);
    cxla_strbuf_free(&e->consts);
    cxla_strbuf_free(&e->helpers);
    cxla_arena_destroy(e->arena);
    return st;
}
