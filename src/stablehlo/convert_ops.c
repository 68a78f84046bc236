/* StableHLO ops -> HLO instructions, one function per family: element-wise, shapes,
 * reductions and windows, gather and scatter, linear algebra, control flow, the rest. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stablehlo/convert_internal.h"

bool cv_while(cv *c, cv_scope *s, const mlir_op *op);
bool cv_branches(cv *c, cv_scope *s, const mlir_op *op, bool is_if);

enum { MAXN = 4096 };

/* ---- attribute helpers --------------------------------------------------------------- */

bool cv_ints(cv *c, const mlir_op *op, const mlir_attr *a, int64_t *out, int64_t max,
             int64_t *count) {
    *count = 0;
    if (!a) return true;
    if (a->kind == MA_INT) {
        out[0] = a->i;
        *count = 1;
        return true;
    }
    if (a->kind == MA_ARRAY) {
        for (int64_t i = 0; i < a->count; i++) {
            const mlir_attr *e = a->items[i];
            if (e->kind == MA_ARRAY) { /* [[lo, hi], ...]: flattened */
                int64_t n;
                if (*count + e->count > max) return cv_fail(c, op, "list too long");
                if (!cv_ints(c, op, e, out + *count, max - *count, &n)) return false;
                *count += n;
                continue;
            }
            if (e->kind != MA_INT && e->kind != MA_BOOL)
                return cv_fail(c, op, "expected a list of integers");
            if (*count >= max) return cv_fail(c, op, "list too long");
            out[(*count)++] = e->kind == MA_BOOL ? e->b : e->i;
        }
        return true;
    }
    if (a->kind == MA_DENSE) {
        /* The count can overflow (dense<1> : tensor<4294967296x4294967296xi64>). */
        int64_t n = 0;
        cxla_status cs = cxla_shape_element_count(&a->type, &n);
        if (cs) return cv_status(c, op, cs);
        if (n < 0 || n > max) return cv_fail(c, op, "list too long");
        cxla_literal *lit = NULL;
        cxla_status st = cv_dense_literal(c->mm, a, &a->type, &lit);
        if (st) return cv_status(c, op, st);
        cxla_literal *conv = NULL;
        st = cxla_literal_convert(lit, CXLA_S64, &conv);
        cxla_literal_free(lit);
        if (st) return cv_status(c, op, st);
        memcpy(out, cxla_literal_data_const(conv), sizeof(int64_t) * (size_t)n);
        cxla_literal_free(conv);
        *count = n;
        return true;
    }
    if (a->kind == MA_BOOL) {
        out[0] = a->b;
        *count = 1;
        return true;
    }
    return cv_fail(c, op, "expected a list of integers");
}

/* The first of several attribute names that is present. */
static const mlir_attr *attr2(const mlir_op *op, const char *a, const char *b) {
    const mlir_attr *r = mlir_op_attr(op, a);
    return r ? r : (b ? mlir_op_attr(op, b) : NULL);
}

/* An enum value: LT, #stablehlo<comparison_direction LT>, "LT". */
static const char *enum_word(const mlir_attr *a) {
    if (!a) return NULL;
    if (a->kind == MA_WORD || a->kind == MA_STRING) return a->s;
    if (a->kind == MA_DIALECT && a->count >= 1 && a->items[0]->kind == MA_WORD)
        return a->items[0]->s;
    /* #stablehlo<transpose TRANSPOSE>: the value reads as a key without a value */
    if (a->kind == MA_DIALECT && a->count >= 1 && a->keys[0] && a->items[0]->kind == MA_UNIT)
        return a->keys[0];
    return NULL;
}

static bool attr_bool(const mlir_attr *a) {
    return a && ((a->kind == MA_BOOL && a->b) || a->kind == MA_UNIT || (a->kind == MA_INT && a->i));
}

static bool get_int(const mlir_op *op, const char *a, const char *b, int64_t *out) {
    const mlir_attr *r = attr2(op, a, b);
    if (!r || (r->kind != MA_INT && r->kind != MA_BOOL)) return false;
    *out = r->i;
    return true;
}

static const cxla_shape *result_shape(cv *c, const mlir_op *op, int64_t i) {
    /* `select %p, %a, %b : tensor<i1>, tensor<f32>`: one list of operand types whose
     * last entry is the result's. */
    if (!op->functional && op->result_count <= 1 && op->out_type_count > 1)
        return &op->out_types[op->out_type_count - 1];
    if (op->out_type_count > i) return &op->out_types[i];
    cv_fail(c, op, "the result type is missing");
    return NULL;
}

static cxla_shape tuple_of(cv *c, const cxla_shape *items, int64_t n) {
    cxla_shape sh = {.type = CXLA_TUPLE, .tuple_count = n};
    sh.elements = cxla_arena_alloc_array(c->m->arena, (size_t)(n ? n : 1), sizeof(cxla_shape));
    if (sh.elements && n) memcpy(sh.elements, items, sizeof(cxla_shape) * (size_t)n);
    return sh;
}

/* The result shape of an op: its one result, or a tuple of its results. */
static cxla_shape results_shape(cv *c, const mlir_op *op) {
    if (op->out_type_count == 1) return op->out_types[0];
    if (!op->functional && op->result_count <= 1 && op->out_type_count > 1)
        return op->out_types[op->out_type_count - 1];
    return tuple_of(c, op->out_types, op->out_type_count);
}

/* ---- element-wise ---------------------------------------------------------------------- */

/* Operations emitted with their operands and the written result type as they are. */
static bool simple(cv *c, cv_scope *s, const mlir_op *op, cxla_opcode opcode) {
    cxla_instr *ops[MAXN];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXN, &n)) return false;
    cxla_shape sh = results_shape(c, op);
    if (op->out_type_count == 0) return cv_fail(c, op, "the result type is missing");
    /* bitcast-convert between complex and real types of other widths, reshape of a
     * value to the same type ... all keep the written type. */
    cxla_instr *in = cv_emit(c, s, op, opcode, &sh, n, ops);
    return in && cv_bind_results(c, s, op, in);
}

/* complex -> real converts the real part (StableHLO's rule; also for i1). */
static bool convert_op(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *x;
    if (!(x = cv_one_operand(c, s, op))) return false;
    const cxla_shape *rs = result_shape(c, op, 0);
    if (!rs) return false;
    if (cxla_type_is_complex(x->shape.type) && !cxla_type_is_complex(rs->type)) {
        cxla_shape re = x->shape;
        re.type = cxla_type_component(x->shape.type);
        re.layout = NULL;
        x = cv_emit(c, s, op, CXLA_OP_REAL, &re, 1, &x);
        if (!x) return false;
    }
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_CONVERT, rs, 1, &x);
    return in && cv_bind_results(c, s, op, in);
}

/* maximum / minimum; complex values compare lexicographically (real, then imaginary). */
static bool max_min(cv *c, cv_scope *s, const mlir_op *op, bool is_max) {
    cxla_instr *ops[2];
    int64_t n;
    if (!cv_operands(c, s, op, ops, 2, &n)) return false;
    if (n != 2) return cv_fail(c, op, "expected 2 operands");
    const cxla_shape *rs = result_shape(c, op, 0);
    if (!rs) return false;
    if (!cxla_type_is_complex(rs->type)) {
        cxla_instr *in = cv_emit(c, s, op, is_max ? CXLA_OP_MAXIMUM : CXLA_OP_MINIMUM, rs, 2, ops);
        return in && cv_bind_results(c, s, op, in);
    }
    cxla_shape part = *rs, pred = *rs;
    part.type = cxla_type_component(rs->type);
    part.layout = pred.layout = NULL;
    pred.type = CXLA_PRED;
    cxla_instr *ra = cv_emit(c, s, op, CXLA_OP_REAL, &part, 1, &ops[0]);
    cxla_instr *rb = cv_emit(c, s, op, CXLA_OP_REAL, &part, 1, &ops[1]);
    cxla_instr *ia = cv_emit(c, s, op, CXLA_OP_IMAG, &part, 1, &ops[0]);
    cxla_instr *ib = cv_emit(c, s, op, CXLA_OP_IMAG, &part, 1, &ops[1]);
    if (!ra || !rb || !ia || !ib) return false;
    const char *dir = is_max ? "GT" : "LT";
    cxla_instr *p1[2] = {ra, rb}, *p2[2] = {ra, rb}, *p3[2] = {ia, ib};
    cxla_instr *rgt = cv_emit(c, s, op, CXLA_OP_COMPARE, &pred, 2, p1);
    cxla_instr *req = cv_emit(c, s, op, CXLA_OP_COMPARE, &pred, 2, p2);
    cxla_instr *igt = cv_emit(c, s, op, CXLA_OP_COMPARE, &pred, 2, p3);
    if (!cv_attr_text(c, op, rgt, CXLA_ATTR_DIRECTION, dir) ||
        !cv_attr_text(c, op, req, CXLA_ATTR_DIRECTION, "EQ") ||
        !cv_attr_text(c, op, igt, CXLA_ATTR_DIRECTION, dir))
        return false;
    cxla_instr *p4[2] = {req, igt};
    cxla_instr *both = cv_emit(c, s, op, CXLA_OP_AND, &pred, 2, p4);
    cxla_instr *p5[2] = {rgt, both};
    cxla_instr *pick = both ? cv_emit(c, s, op, CXLA_OP_OR, &pred, 2, p5) : NULL;
    cxla_instr *p6[3] = {pick, ops[0], ops[1]};
    cxla_instr *in = pick ? cv_emit(c, s, op, CXLA_OP_SELECT, rs, 3, p6) : NULL;
    return in && cv_bind_results(c, s, op, in);
}

/* select with a scalar predicate: HLO wants the predicate broadcast. */
static bool select_op(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[3];
    int64_t n;
    if (!cv_operands(c, s, op, ops, 3, &n)) return false;
    if (n != 3) return cv_fail(c, op, "expected 3 operands");
    const cxla_shape *rs = result_shape(c, op, 0);
    if (!rs) return false;
    if (ops[0]->shape.type != CXLA_TUPLE && ops[0]->shape.rank == 0 && rs->type != CXLA_TUPLE &&
        rs->rank > 0) {
        cxla_shape ps = *rs;
        ps.type = CXLA_PRED;
        ps.layout = NULL;
        cxla_instr *b = cv_emit(c, s, op, CXLA_OP_BROADCAST, &ps, 1, &ops[0]);
        if (!cv_attr_ints(c, op, b, CXLA_ATTR_DIMENSIONS, NULL, 0)) return false;
        ops[0] = b;
    }
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_SELECT, rs, 3, ops);
    return in && cv_bind_results(c, s, op, in);
}

static bool compare_op(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[2];
    int64_t n;
    if (!cv_operands(c, s, op, ops, 2, &n)) return false;
    if (n != 2) return cv_fail(c, op, "expected 2 operands");
    const char *dir = enum_word(mlir_op_attr(op, "comparison_direction"));
    const char *type = enum_word(mlir_op_attr(op, "compare_type"));
    for (int64_t i = 0; i < op->word_count; i++) {
        const char *w = enum_word(op->words[i]);
        if (!w) continue;
        if (!dir)
            dir = w;
        else if (!type)
            type = w;
    }
    if (!dir) return cv_fail(c, op, "no comparison direction");
    const cxla_shape *rs = result_shape(c, op, 0);
    if (!rs) return false;
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_COMPARE, rs, 2, ops);
    if (!cv_attr_text(c, op, in, CXLA_ATTR_DIRECTION, dir)) return false;
    if (type && strcmp(type, "NOTYPE") != 0 &&
        !cv_attr_text(c, op, in, CXLA_ATTR_COMPARISON_TYPE, type))
        return false;
    return cv_bind_results(c, s, op, in);
}

/* ---- shapes -------------------------------------------------------------------------- */

static bool broadcast_in_dim(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *x;
    if (!(x = cv_one_operand(c, s, op))) return false;
    const cxla_shape *rs = result_shape(c, op, 0);
    if (!rs) return false;
    int64_t dims[CXLA_MAX_RANK], n;
    if (!cv_ints(c, op, attr2(op, "dims", "broadcast_dimensions"), dims, CXLA_MAX_RANK, &n))
        return false;
    if (n != x->shape.rank) return cv_fail(c, op, "dims has %" PRId64 " entries", n);
    /* HLO's broadcast keeps each operand dimension's size: drop the size-1 dimensions that
     * StableHLO expands (a reshape), then broadcast. */
    int64_t keep[CXLA_MAX_RANK], kdims[CXLA_MAX_RANK], k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (dims[i] < 0 || dims[i] >= rs->rank) return cv_fail(c, op, "dims out of range");
        if (x->shape.dims[i] == 1 && rs->dims[dims[i]] != 1) continue;
        keep[k] = x->shape.dims[i];
        kdims[k++] = dims[i];
    }
    if (k != n) {
        cxla_shape r = {.type = x->shape.type, .rank = k, .dims = keep};
        x = cv_emit(c, s, op, CXLA_OP_RESHAPE, &r, 1, &x);
        if (!x) return false;
    }
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_BROADCAST, rs, 1, &x);
    return cv_attr_ints(c, op, in, CXLA_ATTR_DIMENSIONS, kdims, k) && cv_bind_results(c, s, op, in);
}

static bool with_dims(cv *c, cv_scope *s, const mlir_op *op, cxla_opcode opcode, const char *a,
                      const char *b) {
    cxla_instr *ops[MAXN];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXN, &n)) return false;
    int64_t dims[CXLA_MAX_RANK], nd;
    if (!cv_ints(c, op, attr2(op, a, b), dims, CXLA_MAX_RANK, &nd)) return false;
    cxla_shape rs = results_shape(c, op);
    if (c->err) return false;
    cxla_instr *in = cv_emit(c, s, op, opcode, &rs, n, ops);
    return cv_attr_ints(c, op, in, CXLA_ATTR_DIMENSIONS, dims, nd) && cv_bind_results(c, s, op, in);
}

static bool slice_op(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *x;
    if (!(x = cv_one_operand(c, s, op))) return false;
    int64_t rank = x->shape.rank;
    int64_t st[CXLA_MAX_RANK], li[CXLA_MAX_RANK], sd[CXLA_MAX_RANK], n1, n2, n3;
    if (op->slice) {
        if (op->slice_rank != rank) return cv_fail(c, op, "slice rank");
        for (int64_t i = 0; i < rank; i++) {
            st[i] = op->slice[3 * i];
            li[i] = op->slice[3 * i + 1];
            sd[i] = op->slice[3 * i + 2];
        }
    } else {
        if (!cv_ints(c, op, mlir_op_attr(op, "start_indices"), st, CXLA_MAX_RANK, &n1) ||
            !cv_ints(c, op, mlir_op_attr(op, "limit_indices"), li, CXLA_MAX_RANK, &n2) ||
            !cv_ints(c, op, mlir_op_attr(op, "strides"), sd, CXLA_MAX_RANK, &n3))
            return false;
        if (n1 != rank || n2 != rank || n3 != rank)
            return cv_fail(
                c, op, "start_indices, limit_indices and strides need %" PRId64 " entries", rank);
    }
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_putc(&b, '{');
    for (int64_t i = 0; i < rank; i++)
        cxla_strbuf_printf(&b, "%s[%" PRId64 ":%" PRId64 ":%" PRId64 "]", i ? "," : "", st[i],
                           li[i], sd[i]);
    cxla_strbuf_putc(&b, '}');
    const cxla_shape *rs = result_shape(c, op, 0);
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_SLICE, rs, 1, &x) : NULL;
    bool ok = cv_attr_text(c, op, in, CXLA_ATTR_SLICE, b.data);
    cxla_strbuf_free(&b);
    return ok && cv_bind_results(c, s, op, in);
}

static bool pad_op(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[2];
    int64_t n;
    if (!cv_operands(c, s, op, ops, 2, &n)) return false;
    if (n != 2) return cv_fail(c, op, "expected 2 operands");
    int64_t lo[CXLA_MAX_RANK], hi[CXLA_MAX_RANK], in_[CXLA_MAX_RANK], a, b2, c3;
    if (!cv_ints(c, op, attr2(op, "low", "edge_padding_low"), lo, CXLA_MAX_RANK, &a) ||
        !cv_ints(c, op, attr2(op, "high", "edge_padding_high"), hi, CXLA_MAX_RANK, &b2) ||
        !cv_ints(c, op, attr2(op, "interior", "interior_padding"), in_, CXLA_MAX_RANK, &c3))
        return false;
    int64_t rank = ops[0]->shape.rank;
    if (a != rank || b2 != rank || c3 != rank) return cv_fail(c, op, "padding needs rank entries");
    const cxla_shape *rs = result_shape(c, op, 0);
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_PAD, rs, 2, ops) : NULL;
    if (!in) return false;
    if (rank > 0) {
        cxla_strbuf b;
        cxla_strbuf_init(&b);
        for (int64_t i = 0; i < rank; i++)
            cxla_strbuf_printf(&b, "%s%" PRId64 "_%" PRId64 "_%" PRId64, i ? "x" : "", lo[i], hi[i],
                               in_[i]);
        bool ok = cv_attr_text(c, op, in, CXLA_ATTR_PADDING, b.data);
        cxla_strbuf_free(&b);
        if (!ok) return false;
    }
    return cv_bind_results(c, s, op, in);
}

static bool iota_op(cv *c, cv_scope *s, const mlir_op *op) {
    int64_t d = 0;
    if (!get_int(op, "dim", "iota_dimension", &d)) return cv_fail(c, op, "no iota dimension");
    const cxla_shape *rs = result_shape(c, op, 0);
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_IOTA, rs, 0, NULL) : NULL;
    return cv_attr_int(c, op, in, CXLA_ATTR_IOTA_DIMENSION, d) && cv_bind_results(c, s, op, in);
}

static bool dynamic_slice(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[MAXN];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXN, &n)) return false;
    int64_t sizes[CXLA_MAX_RANK], ns;
    if (!cv_ints(c, op, attr2(op, "sizes", "slice_sizes"), sizes, CXLA_MAX_RANK, &ns)) return false;
    const cxla_shape *rs = result_shape(c, op, 0);
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_DYNAMIC_SLICE, rs, n, ops) : NULL;
    return cv_attr_ints(c, op, in, CXLA_ATTR_DYNAMIC_SLICE_SIZES, sizes, ns) &&
           cv_bind_results(c, s, op, in);
}

static bool gte_op(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *x;
    if (!(x = cv_one_operand(c, s, op))) return false;
    int64_t k = op->index;
    if (!op->has_index && !get_int(op, "index", NULL, &k)) return cv_fail(c, op, "no index");
    if (x->shape.type != CXLA_TUPLE || k < 0 || k >= x->shape.tuple_count)
        return cv_fail(c, op, "index out of range");
    return cv_define(c, s, op, op->results[0], cv_gte(c, s, x, k));
}

static bool reduce_precision(cv *c, cv_scope *s, const mlir_op *op) {
    int64_t e = -1, m = -1;
    const mlir_attr *f = mlir_op_attr(op, "format");
    if (f && f->kind == MA_WORD) {
        if (sscanf(f->s, "e%" SCNd64 "m%" SCNd64, &e, &m) != 2)
            return cv_fail(c, op, "bad format '%s'", f->s);
    } else if (!get_int(op, "exponent_bits", NULL, &e) || !get_int(op, "mantissa_bits", NULL, &m)) {
        return cv_fail(c, op, "no exponent_bits / mantissa_bits");
    }
    cxla_instr *x;
    if (!(x = cv_one_operand(c, s, op))) return false;
    const cxla_shape *rs = result_shape(c, op, 0);
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_REDUCE_PRECISION, rs, 1, &x) : NULL;
    return cv_attr_int(c, op, in, CXLA_ATTR_EXPONENT_BITS, e) &&
           cv_attr_int(c, op, in, CXLA_ATTR_MANTISSA_BITS, m) && cv_bind_results(c, s, op, in);
}

static bool opt_barrier(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[MAXN];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXN, &n)) return false;
    cxla_instr *t = cv_tuple(c, s, ops, n);
    cxla_instr *in = t ? cv_emit(c, s, op, CXLA_OP_OPTIMIZATION_BARRIER, &t->shape, 1, &t) : NULL;
    if (!in) return false;
    for (int64_t i = 0; i < op->result_count; i++)
        if (!cv_define(c, s, op, op->results[i], cv_gte(c, s, in, i))) return false;
    return true;
}

/* ---- reductions, windows, sort, gather, scatter --------------------------------------- */

static bool reduce_op(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[MAXN];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXN, &n)) return false;
    if (n % 2 || n == 0) return cv_fail(c, op, "expected inputs and as many init values");
    if (!op->generic && n > 2) {
        /* reduce(%in0 init: %init0), (%in1 init: %init1): pairs -> inputs, then inits */
        cxla_instr *tmp[MAXN];
        for (int64_t i = 0; i < n / 2; i++) {
            tmp[i] = ops[2 * i];
            tmp[n / 2 + i] = ops[2 * i + 1];
        }
        memcpy(ops, tmp, sizeof(cxla_instr *) * (size_t)n);
    }
    int64_t dims[CXLA_MAX_RANK], nd;
    if (!cv_ints(c, op, attr2(op, "dimensions", NULL), dims, CXLA_MAX_RANK, &nd)) return false;
    cxla_computation *comp;
    const mlir_attr *applies = mlir_op_attr(op, "applies");
    if (applies) {
        if ((applies->kind != MA_WORD && applies->kind != MA_STRING) || !applies->s)
            return cv_fail(c, op, "applies must name an operation");
        const char *w = applies->s;
        const char *nm = strchr(w, '.') ? strchr(w, '.') + 1 : w;
        cxla_opcode opc = cxla_opcode_from_stablehlo_name(nm);
        if (opc == CXLA_OP_COUNT) return cv_fail(c, op, "unknown reducer %s", w);
        comp = cv_binary_computation(c, op, opc, ops[n / 2]->shape.type, n / 2);
    } else {
        if (op->region_count != 1) return cv_fail(c, op, "expected a reducer region");
        comp = cv_apply_region(c, s, op, op->regions[0], "reducer");
    }
    if (!comp) return false;
    cxla_shape rs = results_shape(c, op);
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_REDUCE, &rs, n, ops);
    return cv_attr_ints(c, op, in, CXLA_ATTR_DIMENSIONS, dims, nd) &&
           cv_attr_comps(c, op, in, CXLA_ATTR_TO_APPLY, &comp, 1) && cv_bind_results(c, s, op, in);
}

/* The window attribute text: size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal. */
static bool window_text(cv *c, const mlir_op *op, cxla_strbuf *b, int64_t rank, const int64_t *size,
                        const int64_t *stride, const int64_t *pad, const int64_t *lhs,
                        const int64_t *rhs, const int64_t *rev) {
    if (rank == 0) {
        cxla_strbuf_puts(b, "{}");
        return true;
    }
    cxla_strbuf_puts(b, "{size=");
    for (int64_t i = 0; i < rank; i++) cxla_strbuf_printf(b, "%s%" PRId64, i ? "x" : "", size[i]);
    cxla_strbuf_puts(b, " stride=");
    for (int64_t i = 0; i < rank; i++)
        cxla_strbuf_printf(b, "%s%" PRId64, i ? "x" : "", stride ? stride[i] : 1);
    cxla_strbuf_puts(b, " pad=");
    for (int64_t i = 0; i < rank; i++)
        cxla_strbuf_printf(b, "%s%" PRId64 "_%" PRId64, i ? "x" : "", pad ? pad[2 * i] : 0,
                           pad ? pad[2 * i + 1] : 0);
    cxla_strbuf_puts(b, " lhs_dilate=");
    for (int64_t i = 0; i < rank; i++)
        cxla_strbuf_printf(b, "%s%" PRId64, i ? "x" : "", lhs ? lhs[i] : 1);
    cxla_strbuf_puts(b, " rhs_dilate=");
    for (int64_t i = 0; i < rank; i++)
        cxla_strbuf_printf(b, "%s%" PRId64, i ? "x" : "", rhs ? rhs[i] : 1);
    if (rev) {
        cxla_strbuf_puts(b, " rhs_reversal=");
        for (int64_t i = 0; i < rank; i++)
            cxla_strbuf_printf(b, "%s%d", i ? "x" : "", rev[i] ? 1 : 0);
    }
    cxla_strbuf_putc(b, '}');
    (void)c;
    (void)op;
    return true;
}

/* Reads an optional integer list attribute of |rank| entries (NULL when absent). */
static bool opt_list(cv *c, const mlir_op *op, const char *name, int64_t *buf, int64_t rank,
                     int64_t per, const int64_t **out) {
    *out = NULL;
    const mlir_attr *a = mlir_op_attr(op, name);
    if (!a) return true;
    int64_t n;
    if (!cv_ints(c, op, a, buf, CXLA_MAX_RANK * 2, &n)) return false;
    if (n != rank * per) return cv_fail(c, op, "%s needs %" PRId64 " entries", name, rank * per);
    *out = buf;
    return true;
}

static bool reduce_window(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[MAXN];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXN, &n)) return false;
    if (n % 2 || n == 0) return cv_fail(c, op, "expected inputs and init values");
    int64_t rank = ops[0]->shape.rank;
    int64_t size[CXLA_MAX_RANK * 2], stb[CXLA_MAX_RANK * 2], padb[CXLA_MAX_RANK * 2],
        lb[CXLA_MAX_RANK * 2], rb[CXLA_MAX_RANK * 2];
    const int64_t *sz, *st, *pad, *lhs, *rhs;
    if (!opt_list(c, op, "window_dimensions", size, rank, 1, &sz) ||
        !opt_list(c, op, "window_strides", stb, rank, 1, &st) ||
        !opt_list(c, op, "padding", padb, rank, 2, &pad) ||
        !opt_list(c, op, "base_dilations", lb, rank, 1, &lhs) ||
        !opt_list(c, op, "window_dilations", rb, rank, 1, &rhs))
        return false;
    if (!sz) return cv_fail(c, op, "no window_dimensions");
    if (op->region_count != 1) return cv_fail(c, op, "expected a reducer region");
    cxla_computation *comp = cv_apply_region(c, s, op, op->regions[0], "reducer");
    if (!comp) return false;
    cxla_shape rs = results_shape(c, op);
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_REDUCE_WINDOW, &rs, n, ops);
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    window_text(c, op, &b, rank, sz, st, pad, lhs, rhs, NULL);
    bool ok = in && (rank == 0 || cv_attr_text(c, op, in, CXLA_ATTR_WINDOW, b.data));
    cxla_strbuf_free(&b);
    return ok && cv_attr_comps(c, op, in, CXLA_ATTR_TO_APPLY, &comp, 1) &&
           cv_bind_results(c, s, op, in);
}

static bool select_and_scatter(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[3];
    int64_t n;
    if (!cv_operands(c, s, op, ops, 3, &n)) return false;
    if (n != 3 || op->region_count != 2) return cv_fail(c, op, "expected 3 operands, 2 regions");
    int64_t rank = ops[0]->shape.rank;
    int64_t size[CXLA_MAX_RANK * 2], stb[CXLA_MAX_RANK * 2], padb[CXLA_MAX_RANK * 2];
    const int64_t *sz, *st, *pad;
    if (!opt_list(c, op, "window_dimensions", size, rank, 1, &sz) ||
        !opt_list(c, op, "window_strides", stb, rank, 1, &st) ||
        !opt_list(c, op, "padding", padb, rank, 2, &pad))
        return false;
    int64_t ones[CXLA_MAX_RANK];
    for (int64_t i = 0; i < rank; i++) ones[i] = 1;
    if (!sz) sz = ones;
    cxla_computation *sel = cv_apply_region(c, s, op, op->regions[0], "select");
    cxla_computation *sca = sel ? cv_apply_region(c, s, op, op->regions[1], "scatter") : NULL;
    if (!sca) return false;
    const cxla_shape *rs = result_shape(c, op, 0);
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_SELECT_AND_SCATTER, rs, 3, ops) : NULL;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    window_text(c, op, &b, rank, sz, st, pad, NULL, NULL, NULL);
    bool ok = in && (rank == 0 || cv_attr_text(c, op, in, CXLA_ATTR_WINDOW, b.data));
    cxla_strbuf_free(&b);
    return ok && cv_attr_comps(c, op, in, CXLA_ATTR_SELECT, &sel, 1) &&
           cv_attr_comps(c, op, in, CXLA_ATTR_SCATTER, &sca, 1) && cv_bind_results(c, s, op, in);
}

static bool sort_op(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[MAXN];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXN, &n)) return false;
    if (n == 0) return cv_fail(c, op, "expected at least one operand");
    int64_t dim = -1;
    get_int(op, "dimension", NULL, &dim);
    if (dim < 0) dim += ops[0]->shape.rank;
    if (op->region_count != 1) return cv_fail(c, op, "expected a comparator region");
    cxla_computation *comp = cv_apply_region(c, s, op, op->regions[0], "comparator");
    if (!comp) return false;
    cxla_shape rs = results_shape(c, op);
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_SORT, &rs, n, ops);
    if (!cv_attr_ints(c, op, in, CXLA_ATTR_DIMENSIONS, &dim, 1)) return false;
    if (attr_bool(mlir_op_attr(op, "is_stable")) &&
        !cv_attr_text(c, op, in, CXLA_ATTR_IS_STABLE, "true"))
        return false;
    return cv_attr_comps(c, op, in, CXLA_ATTR_TO_APPLY, &comp, 1) && cv_bind_results(c, s, op, in);
}

static bool set_list(cv *c, const mlir_op *op, cxla_instr *in, cxla_attr_id id, const mlir_attr *dn,
                     const char *key, bool always) {
    const mlir_attr *a = mlir_attr_get(dn, key);
    int64_t v[CXLA_MAX_RANK * 2], n = 0;
    if (a && !cv_ints(c, op, a, v, CXLA_MAX_RANK * 2, &n)) return false;
    if (!a && !always) return true;
    if (n == 0 && !always) return true;
    return cv_attr_ints(c, op, in, id, v, n);
}

static bool gather_op(cv *c, cv_scope *s, const mlir_op *op, bool dynamic) {
    cxla_instr *ops[3];
    int64_t n;
    if (!cv_operands(c, s, op, ops, 3, &n)) return false;
    if (n != (dynamic ? 3 : 2)) return cv_fail(c, op, "wrong operand count");
    const mlir_attr *dn = mlir_op_attr(op, "dimension_numbers");
    if (!dn) return cv_fail(c, op, "no dimension_numbers");
    int64_t sizes[CXLA_MAX_RANK], ns = 0;
    if (dynamic) {
        if (ops[2]->opcode != CXLA_OP_CONSTANT || !ops[2]->literal)
            return cv_fail(c, op, "slice_sizes must be a constant");
        cxla_literal *l = NULL;
        cxla_status st = cxla_literal_convert(ops[2]->literal, CXLA_S64, &l);
        if (st) return cv_status(c, op, st);
        ns = cxla_literal_element_count(l);
        if (ns > CXLA_MAX_RANK) ns = CXLA_MAX_RANK;
        memcpy(sizes, cxla_literal_data_const(l), sizeof(int64_t) * (size_t)ns);
        cxla_literal_free(l);
    } else if (!cv_ints(c, op, mlir_op_attr(op, "slice_sizes"), sizes, CXLA_MAX_RANK, &ns)) {
        return false;
    }
    const cxla_shape *rs = result_shape(c, op, 0);
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_GATHER, rs, 2, ops) : NULL;
    int64_t ivd = 0;
    const mlir_attr *iv = mlir_attr_get(dn, "index_vector_dim");
    if (iv) ivd = iv->i;
    bool ok =
        in && set_list(c, op, in, CXLA_ATTR_OFFSET_DIMS, dn, "offset_dims", true) &&
        set_list(c, op, in, CXLA_ATTR_COLLAPSED_SLICE_DIMS, dn, "collapsed_slice_dims", true) &&
        set_list(c, op, in, CXLA_ATTR_START_INDEX_MAP, dn, "start_index_map", true) &&
        set_list(c, op, in, CXLA_ATTR_OPERAND_BATCHING_DIMS, dn, "operand_batching_dims", false) &&
        set_list(c, op, in, CXLA_ATTR_START_INDICES_BATCHING_DIMS, dn,
                 "start_indices_batching_dims", false) &&
        cv_attr_int(c, op, in, CXLA_ATTR_INDEX_VECTOR_DIM, ivd) &&
        cv_attr_ints(c, op, in, CXLA_ATTR_SLICE_SIZES, sizes, ns);
    if (ok && attr_bool(mlir_op_attr(op, "indices_are_sorted")))
        ok = cv_attr_text(c, op, in, CXLA_ATTR_INDICES_ARE_SORTED, "true");
    return ok && cv_bind_results(c, s, op, in);
}

static bool scatter_op(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[MAXN];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXN, &n)) return false;
    if (n < 3 || (n - 1) % 2) return cv_fail(c, op, "wrong operand count");
    const mlir_attr *dn = mlir_op_attr(op, "scatter_dimension_numbers");
    if (!dn) return cv_fail(c, op, "no scatter_dimension_numbers");
    if (op->region_count != 1) return cv_fail(c, op, "expected an update region");
    cxla_computation *comp = cv_apply_region(c, s, op, op->regions[0], "update");
    if (!comp) return false;
    cxla_shape rs = results_shape(c, op);
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_SCATTER, &rs, n, ops);
    int64_t ivd = 0;
    const mlir_attr *iv = mlir_attr_get(dn, "index_vector_dim");
    if (iv) ivd = iv->i;
    bool ok =
        in && set_list(c, op, in, CXLA_ATTR_UPDATE_WINDOW_DIMS, dn, "update_window_dims", true) &&
        set_list(c, op, in, CXLA_ATTR_INSERTED_WINDOW_DIMS, dn, "inserted_window_dims", true) &&
        set_list(c, op, in, CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, dn,
                 "scatter_dims_to_operand_dims", true) &&
        set_list(c, op, in, CXLA_ATTR_INPUT_BATCHING_DIMS, dn, "input_batching_dims", false) &&
        set_list(c, op, in, CXLA_ATTR_SCATTER_INDICES_BATCHING_DIMS, dn,
                 "scatter_indices_batching_dims", false) &&
        cv_attr_int(c, op, in, CXLA_ATTR_INDEX_VECTOR_DIM, ivd);
    if (ok && attr_bool(mlir_op_attr(op, "indices_are_sorted")))
        ok = cv_attr_text(c, op, in, CXLA_ATTR_INDICES_ARE_SORTED, "true");
    if (ok && attr_bool(mlir_op_attr(op, "unique_indices")))
        ok = cv_attr_text(c, op, in, CXLA_ATTR_UNIQUE_INDICES, "true");
    return ok && cv_attr_comps(c, op, in, CXLA_ATTR_TO_APPLY, &comp, 1) &&
           cv_bind_results(c, s, op, in);
}

static bool map_op(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[MAXN];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXN, &n)) return false;
    int64_t dims[CXLA_MAX_RANK], nd;
    if (!cv_ints(c, op, mlir_op_attr(op, "dimensions"), dims, CXLA_MAX_RANK, &nd)) return false;
    if (op->region_count != 1) return cv_fail(c, op, "expected a region");
    cxla_computation *comp = cv_apply_region(c, s, op, op->regions[0], "mapped");
    const cxla_shape *rs = result_shape(c, op, 0);
    cxla_instr *in = comp && rs ? cv_emit(c, s, op, CXLA_OP_MAP, rs, n, ops) : NULL;
    return cv_attr_ints(c, op, in, CXLA_ATTR_DIMENSIONS, dims, nd) &&
           cv_attr_comps(c, op, in, CXLA_ATTR_TO_APPLY, &comp, 1) && cv_bind_results(c, s, op, in);
}

/* ---- linear algebra ------------------------------------------------------------------ */

static bool precision_attr(cv *c, const mlir_op *op, cxla_instr *in) {
    const mlir_attr *p = attr2(op, "precision", "precision_config");
    if (!p || p->kind != MA_ARRAY || p->count == 0) return true;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_putc(&b, '{');
    for (int64_t i = 0; i < p->count; i++) {
        const char *w = enum_word(p->items[i]);
        if (!w) w = "DEFAULT";
        cxla_strbuf_printf(&b, "%s%s", i ? "," : "", w);
        for (char *q = b.data + b.len - strlen(w); *q; q++)
            *q = (char)(*q >= 'A' && *q <= 'Z' ? *q - 'A' + 'a' : *q);
    }
    cxla_strbuf_putc(&b, '}');
    bool ok = cv_attr_text(c, op, in, CXLA_ATTR_OPERAND_PRECISION, b.data);
    cxla_strbuf_free(&b);
    return ok;
}

static bool dot_general(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[2];
    int64_t n;
    if (!cv_operands(c, s, op, ops, 2, &n)) return false;
    if (n != 2) return cv_fail(c, op, "expected 2 operands");
    int64_t lb[CXLA_MAX_RANK], rb[CXLA_MAX_RANK], lc[CXLA_MAX_RANK], rc[CXLA_MAX_RANK];
    int64_t nlb = 0, nrb = 0, nlc = 0, nrc = 0;
    const mlir_attr *dn = mlir_op_attr(op, "dot_dimension_numbers");
    if (strcmp(op->name, "stablehlo.dot") == 0) {
        lc[0] = ops[0]->shape.rank - 1;
        rc[0] = 0;
        nlc = nrc = 1;
    } else if (dn) {
        if (!cv_ints(c, op, mlir_attr_get(dn, "lhs_batching_dimensions"), lb, CXLA_MAX_RANK,
                     &nlb) ||
            !cv_ints(c, op, mlir_attr_get(dn, "rhs_batching_dimensions"), rb, CXLA_MAX_RANK,
                     &nrb) ||
            !cv_ints(c, op, mlir_attr_get(dn, "lhs_contracting_dimensions"), lc, CXLA_MAX_RANK,
                     &nlc) ||
            !cv_ints(c, op, mlir_attr_get(dn, "rhs_contracting_dimensions"), rc, CXLA_MAX_RANK,
                     &nrc))
            return false;
    } else {
        const mlir_attr *bd = mlir_op_attr(op, "batching_dims");
        const mlir_attr *cd = mlir_op_attr(op, "contracting_dims");
        if (bd && (!bd->cross || bd->count != 2)) return cv_fail(c, op, "bad batching_dims");
        if (cd && (!cd->cross || cd->count != 2)) return cv_fail(c, op, "bad contracting_dims");
        if (bd && (!cv_ints(c, op, bd->items[0], lb, CXLA_MAX_RANK, &nlb) ||
                   !cv_ints(c, op, bd->items[1], rb, CXLA_MAX_RANK, &nrb)))
            return false;
        if (cd && (!cv_ints(c, op, cd->items[0], lc, CXLA_MAX_RANK, &nlc) ||
                   !cv_ints(c, op, cd->items[1], rc, CXLA_MAX_RANK, &nrc)))
            return false;
    }
    const cxla_shape *rs = result_shape(c, op, 0);
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_DOT, rs, 2, ops) : NULL;
    bool ok = in;
    if (ok && nlb) ok = cv_attr_ints(c, op, in, CXLA_ATTR_LHS_BATCH_DIMS, lb, nlb);
    if (ok && nrb) ok = cv_attr_ints(c, op, in, CXLA_ATTR_RHS_BATCH_DIMS, rb, nrb);
    if (ok) ok = cv_attr_ints(c, op, in, CXLA_ATTR_LHS_CONTRACTING_DIMS, lc, nlc);
    if (ok) ok = cv_attr_ints(c, op, in, CXLA_ATTR_RHS_CONTRACTING_DIMS, rc, nrc);
    return ok && precision_attr(c, op, in) && cv_bind_results(c, s, op, in);
}

/* [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f] -> "b01f_01io->b01f" */
static bool conv_labels(cv *c, const mlir_op *op, const mlir_attr *dn, cxla_strbuf *b,
                        int64_t *kernel_spatial, int64_t *nspatial) {
    const mlir_attr *g = dn;
    if (g && g->kind == MA_DIALECT && g->count == 1 && g->items[0]->kind == MA_ARRAY)
        g = g->items[0];
    if (g && g->kind == MA_DIALECT) {
        /* raw form: input_batch_dimension = 0, ... */
        return cv_fail(c, op, "convolution dimension numbers in the raw form are not supported");
    }
    if (!g || g->kind != MA_ARRAY || !g->cross || g->count != 3)
        return cv_fail(c, op, "expected dim_numbers [..]x[..]->[..]");
    *nspatial = 0;
    unsigned seen[3] = {0, 0, 0}; /* the spatial numbers each group names */
    for (int k = 0; k < 3; k++) {
        const mlir_attr *grp = g->items[k];
        if (k) cxla_strbuf_puts(b, k == 1 ? "_" : "->");
        for (int64_t i = 0; i < grp->count; i++) {
            const mlir_attr *e = grp->items[i];
            if (e->kind == MA_INT) {
                if (e->i < 0 || e->i > 9) return cv_fail(c, op, "too many spatial dimensions");
                if (seen[k] & (1u << e->i))
                    return cv_fail(c, op, "spatial dimension %" PRId64 " named twice",
                                   (int64_t)e->i);
                seen[k] |= 1u << e->i;
                cxla_strbuf_putc(b, (char)('0' + e->i));
                if (k == 1) {
                    kernel_spatial[e->i] = i;
                    if (e->i + 1 > *nspatial) *nspatial = e->i + 1;
                }
            } else if (e->kind == MA_WORD && e->slen == 1) {
                cxla_strbuf_putc(b, e->s[0]);
            } else {
                return cv_fail(c, op, "bad dimension label");
            }
        }
    }
    /* Each group names the spatial dimensions 0 .. n-1, each once. */
    unsigned all = (1u << *nspatial) - 1;
    if (seen[0] != all || seen[1] != all || seen[2] != all)
        return cv_fail(c, op,
                       "dim_numbers: input, kernel and output must each name the spatial "
                       "dimensions 0..%" PRId64 " once",
                       *nspatial - 1);
    return true;
}

static bool convolution(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[2];
    int64_t n;
    if (!cv_operands(c, s, op, ops, 2, &n)) return false;
    if (n != 2) return cv_fail(c, op, "expected 2 operands");
    cxla_strbuf labels;
    cxla_strbuf_init(&labels);
    int64_t kspatial[16], ns = 0;
    if (!conv_labels(c, op, attr2(op, "dim_numbers", "dimension_numbers"), &labels, kspatial,
                     &ns)) {
        cxla_strbuf_free(&labels);
        return false;
    }
    const mlir_attr *w = mlir_op_attr(op, "window");
    int64_t stb[CXLA_MAX_RANK * 2], padb[CXLA_MAX_RANK * 2], lb[CXLA_MAX_RANK * 2],
        rb[CXLA_MAX_RANK * 2], revb[CXLA_MAX_RANK * 2];
    const int64_t *st = NULL, *pad = NULL, *lhs = NULL, *rhs = NULL, *rev = NULL;
    bool ok = true;
    struct {
        const char *pretty, *generic;
        int64_t *buf;
        const int64_t **out;
        int per;
    } lists[] = {{"stride", "window_strides", stb, &st, 1},
                 {"pad", "padding", padb, &pad, 2},
                 {"lhs_dilate", "lhs_dilation", lb, &lhs, 1},
                 {"rhs_dilate", "rhs_dilation", rb, &rhs, 1},
                 {"reverse", "window_reversal", revb, &rev, 1}};
    for (size_t i = 0; ok && i < CXLA_ARRAY_SIZE(lists); i++) {
        const mlir_attr *a = w ? mlir_attr_get(w, lists[i].pretty) : NULL;
        if (!a) a = mlir_op_attr(op, lists[i].generic);
        if (!a) continue;
        int64_t k;
        ok = cv_ints(c, op, a, lists[i].buf, CXLA_MAX_RANK * 2, &k);
        if (ok && k != ns * lists[i].per)
            ok = cv_fail(c, op, "%s needs %" PRId64 " entries", lists[i].pretty, ns * lists[i].per);
        *lists[i].out = lists[i].buf;
    }
    int64_t size[16];
    for (int64_t i = 0; i < ns; i++) {
        if (kspatial[i] >= ops[1]->shape.rank || ops[1]->shape.type == CXLA_TUPLE) {
            cxla_strbuf_free(&labels);
            return cv_fail(c, op, "dim_numbers name more kernel dimensions than its rank");
        }
        size[i] = ops[1]->shape.dims[kspatial[i]];
    }
    cxla_strbuf win;
    cxla_strbuf_init(&win);
    window_text(c, op, &win, ns, size, st, pad, lhs, rhs, rev);
    const cxla_shape *rs = ok ? result_shape(c, op, 0) : NULL;
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_CONVOLUTION, rs, 2, ops) : NULL;
    ok = in && (ns == 0 || cv_attr_text(c, op, in, CXLA_ATTR_WINDOW, win.data)) &&
         cv_attr_text(c, op, in, CXLA_ATTR_DIM_LABELS, labels.data);
    cxla_strbuf_free(&win);
    cxla_strbuf_free(&labels);
    int64_t fg = 1, bg = 1;
    get_int(op, "feature_group_count", NULL, &fg);
    get_int(op, "batch_group_count", NULL, &bg);
    if (ok && fg != 1) ok = cv_attr_int(c, op, in, CXLA_ATTR_FEATURE_GROUP_COUNT, fg);
    if (ok && bg != 1) ok = cv_attr_int(c, op, in, CXLA_ATTR_BATCH_GROUP_COUNT, bg);
    return ok && precision_attr(c, op, in) && cv_bind_results(c, s, op, in);
}

static bool fft_op(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *x;
    if (!(x = cv_one_operand(c, s, op))) return false;
    const char *type = enum_word(attr2(op, "type", "fft_type"));
    int64_t len[8], nl;
    if (!type) return cv_fail(c, op, "no fft type");
    if (!cv_ints(c, op, attr2(op, "length", "fft_length"), len, 8, &nl)) return false;
    const cxla_shape *rs = result_shape(c, op, 0);
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_FFT, rs, 1, &x) : NULL;
    return cv_attr_text(c, op, in, CXLA_ATTR_FFT_TYPE, type) &&
           cv_attr_ints(c, op, in, CXLA_ATTR_FFT_LENGTH, len, nl) && cv_bind_results(c, s, op, in);
}

static bool triangular_solve(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[2];
    int64_t n;
    if (!cv_operands(c, s, op, ops, 2, &n)) return false;
    if (n != 2) return cv_fail(c, op, "expected 2 operands");
    const cxla_shape *rs = result_shape(c, op, 0);
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_TRIANGULAR_SOLVE, rs, 2, ops) : NULL;
    bool ok = in;
    if (ok && attr_bool(mlir_op_attr(op, "left_side")))
        ok = cv_attr_text(c, op, in, CXLA_ATTR_LEFT_SIDE, "true");
    if (ok && attr_bool(mlir_op_attr(op, "lower")))
        ok = cv_attr_text(c, op, in, CXLA_ATTR_LOWER, "true");
    if (ok && attr_bool(mlir_op_attr(op, "unit_diagonal")))
        ok = cv_attr_text(c, op, in, CXLA_ATTR_UNIT_DIAGONAL, "true");
    const char *t = enum_word(mlir_op_attr(op, "transpose_a"));
    if (ok && t) ok = cv_attr_text(c, op, in, CXLA_ATTR_TRANSPOSE_A, t);
    return ok && cv_bind_results(c, s, op, in);
}

static bool cholesky(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *x;
    if (!(x = cv_one_operand(c, s, op))) return false;
    const cxla_shape *rs = result_shape(c, op, 0);
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_CHOLESKY, rs, 1, &x) : NULL;
    bool ok = in;
    if (ok && attr_bool(mlir_op_attr(op, "lower")))
        ok = cv_attr_text(c, op, in, CXLA_ATTR_LOWER, "true");
    return ok && cv_bind_results(c, s, op, in);
}

static bool batch_norm(cv *c, cv_scope *s, const mlir_op *op, cxla_opcode opc) {
    cxla_instr *ops[5];
    int64_t n;
    if (!cv_operands(c, s, op, ops, 5, &n)) return false;
    const mlir_attr *eps = mlir_op_attr(op, "epsilon");
    int64_t fi = 0;
    get_int(op, "feature_index", NULL, &fi);
    cxla_shape rs = results_shape(c, op);
    cxla_instr *in = cv_emit(c, s, op, opc, &rs, n, ops);
    char buf[64];
    snprintf(buf, sizeof buf, "%.17g", eps ? eps->f : 0.0);
    return cv_attr_text(c, op, in, CXLA_ATTR_EPSILON, buf) &&
           cv_attr_int(c, op, in, CXLA_ATTR_FEATURE_INDEX, fi) && cv_bind_results(c, s, op, in);
}

/* ---- calls, random numbers, custom calls ---------------------------------------------- */

static bool call_op(cv *c, cv_scope *s, const mlir_op *op, const char *callee) {
    if (!callee) return cv_fail(c, op, "no callee");
    cxla_computation *comp = cv_func(c, op, callee);
    if (!comp) return false;
    cxla_instr *ops[MAXN];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXN, &n)) return false;
    if (n != comp->param_count)
        return cv_fail(c, op, "@%s takes %" PRId64 " arguments, got %" PRId64, callee,
                       comp->param_count, n);
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_CALL, &comp->root->shape, n, ops);
    if (!cv_attr_comps(c, op, in, CXLA_ATTR_TO_APPLY, &comp, 1)) return false;
    return cv_bind_results(c, s, op, in);
}

static bool rng_bit_generator(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *x;
    if (!(x = cv_one_operand(c, s, op))) return false;
    const char *alg = enum_word(mlir_op_attr(op, "rng_algorithm"));
    const char *hlo = "rng_default";
    if (alg && strcmp(alg, "THREE_FRY") == 0) hlo = "rng_three_fry";
    if (alg && strcmp(alg, "PHILOX") == 0) hlo = "rng_philox";
    cxla_shape rs = results_shape(c, op);
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_RNG_BIT_GENERATOR, &rs, 1, &x);
    return cv_attr_text(c, op, in, CXLA_ATTR_ALGORITHM, hlo) && cv_bind_results(c, s, op, in);
}

static bool rng_op(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[3];
    int64_t n;
    if (!cv_operands(c, s, op, ops, 3, &n)) return false;
    const char *d = enum_word(mlir_op_attr(op, "rng_distribution"));
    const cxla_shape *rs = result_shape(c, op, 0);
    cxla_instr *in = rs ? cv_emit(c, s, op, CXLA_OP_RNG, rs, 2, ops) : NULL;
    return cv_attr_text(c, op, in, CXLA_ATTR_DISTRIBUTION,
                        d && strcmp(d, "NORMAL") == 0 ? "rng_normal" : "rng_uniform") &&
           cv_bind_results(c, s, op, in);
}

static bool custom_call(cv *c, cv_scope *s, const mlir_op *op) {
    const char *target = op->callee;
    const mlir_attr *t = mlir_op_attr(op, "call_target_name");
    if (!target && t && t->kind == MA_STRING) target = t->s;
    if (!target) return cv_fail(c, op, "no call target");
    cxla_instr *ops[MAXN];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXN, &n)) return false;
    cxla_shape rs = results_shape(c, op);
    if (op->out_type_count == 0) rs = tuple_of(c, NULL, 0);
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_CUSTOM_CALL, &rs, n, ops);
    if (!in) return false;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_putc(&b, '"');
    for (const char *q = target; *q; q++) {
        if (*q == '"' || *q == '\\') cxla_strbuf_putc(&b, '\\');
        cxla_strbuf_putc(&b, *q);
    }
    cxla_strbuf_putc(&b, '"');
    bool ok = cv_attr_text(c, op, in, CXLA_ATTR_CUSTOM_CALL_TARGET, b.data);
    cxla_strbuf_free(&b);
    if (ok && attr_bool(mlir_op_attr(op, "has_side_effect")))
        ok = cv_attr_text(c, op, in, CXLA_ATTR_CUSTOM_CALL_HAS_SIDE_EFFECT, "true");
    /* called_computations = [@f, ...]: HLO's called_computations={f, ...} (XLA's builder
     * functions, targets "xla_builder.*", carry their decomposition so). */
    const mlir_attr *cc = mlir_op_attr(op, "called_computations");
    if (ok && cc && cc->kind == MA_ARRAY && cc->count > 0) {
        cxla_computation *comps[64];
        if (cc->count > 64) return cv_fail(c, op, "more than 64 called_computations");
        for (int64_t i = 0; i < cc->count && ok; i++) {
            const mlir_attr *f = cc->items[i];
            if (!f || f->kind != MA_SYMBOL)
                return cv_fail(c, op, "called_computations must name functions (@name)");
            ok = (comps[i] = cv_func(c, op, f->s)) != NULL;
        }
        if (ok) ok = cv_attr_comps(c, op, in, CXLA_ATTR_CALLED_COMPUTATIONS, comps, cc->count);
    }
    return ok && cv_bind_results(c, s, op, in);
}

static bool constant_op(cv *c, cv_scope *s, const mlir_op *op) {
    const mlir_attr *v = mlir_op_attr(op, "value");
    for (int64_t i = 0; !v && i < op->word_count; i++)
        if (op->words[i]->kind == MA_DENSE) v = op->words[i];
    if (!v || v->kind != MA_DENSE) return cv_fail(c, op, "expected a dense value");
    /* A big splat (dense<0.0> : tensor<4096x4096xf32>) is a scalar and a broadcast, as XLA
     * would fold it, so that nothing of its size is built before it runs. */
    /* So is an empty array (tensor<1000000x0xf32> would print a million "{}"), from a
     * zero scalar since it has no value. */
    int64_t count = 0;
    cxla_status cs = cxla_type_is_array(v->type.type)
                         ? cxla_shape_element_count(&v->type, &count)
                         : cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "not an array");
    bool empty = !cs && count == 0 && v->type.rank > 0;
    bool broadcast = !cs && (empty || (count > 4096 && cv_dense_is_splat(v, &v->type)));
    cxla_status_free(cs);
    cxla_shape ks = v->type;
    if (broadcast) ks.rank = 0, ks.layout = NULL;
    cxla_literal *lit = NULL;
    cxla_status st = cv_dense_literal(c->mm, v, empty ? &v->type : &ks, &lit);
    if (!st && empty) { /* the value was checked; the constant is a zero scalar */
        cxla_literal_free(lit);
        lit = NULL;
        st = cxla_literal_create(&ks, &lit);
    }
    if (!st) st = cxla_module_adopt_literal(c->m, lit);
    if (st) return cv_status(c, op, st);
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_CONSTANT, &ks, 0, NULL);
    if (!in) return false;
    in->literal = lit;
    if (broadcast) {
        cxla_shape bs = v->type;
        bs.layout = NULL;
        in = cv_emit(c, s, op, CXLA_OP_BROADCAST, &bs, 1, &in);
        if (!cv_attr_ints(c, op, in, CXLA_ATTR_DIMENSIONS, NULL, 0)) return false;
    }
    return cv_bind_results(c, s, op, in);
}

static bool composite(cv *c, cv_scope *s, const mlir_op *op) {
    const mlir_attr *d = mlir_op_attr(op, "decomposition");
    if (!d || d->kind != MA_SYMBOL) return cv_fail(c, op, "no decomposition");
    return call_op(c, s, op, d->s);
}

/* The values of a constant integer operand. */
static bool const_ints(cv *c, const mlir_op *op, cxla_instr *in, int64_t *out, int64_t max,
                       int64_t *n) {
    if (!in || in->opcode != CXLA_OP_CONSTANT || !in->literal)
        return cv_fail(c, op,
                       "the shape operands must be constants (dynamic shapes are not "
                       "supported)");
    cxla_literal *l = NULL;
    cxla_status st = cxla_literal_convert(in->literal, CXLA_S64, &l);
    if (st) return cv_status(c, op, st);
    *n = cxla_literal_element_count(l);
    if (*n > max) *n = max;
    memcpy(out, cxla_literal_data_const(l), sizeof(int64_t) * (size_t)*n);
    cxla_literal_free(l);
    return true;
}

/* A copy of |op| with its first |keep| operands and extra integer-list attributes made
 * from the constant operands |from[k]| (operand indices), named |names[k]|. */
static mlir_op *static_form(cv *c, const mlir_op *op, int64_t keep, const char *const *names,
                            const int64_t *from, int64_t count, cv_scope *s) {
    mlir_op *o = cxla_arena_alloc(c->m->arena, sizeof *o);
    if (!o) return cv_fail(c, op, "out of memory"), NULL;
    *o = *op;
    o->operand_count = keep;
    o->attr_count = op->attr_count + count;
    o->attr_names = cxla_arena_alloc_array(c->m->arena, (size_t)o->attr_count + 1, sizeof(char *));
    o->attrs = cxla_arena_alloc_array(c->m->arena, (size_t)o->attr_count + 1, sizeof(mlir_attr *));
    if (!o->attr_names || !o->attrs) return cv_fail(c, op, "out of memory"), NULL;
    for (int64_t i = 0; i < count; i++) {
        if (from[i] >= op->operand_count) return cv_fail(c, op, "missing operand"), NULL;
        int64_t v[CXLA_MAX_RANK * 2], n = 0;
        if (!const_ints(c, op, cv_lookup(c, s, op, op->operands[from[i]]), v, CXLA_MAX_RANK * 2,
                        &n))
            return NULL;
        mlir_attr *a = cxla_arena_alloc(c->m->arena, sizeof *a);
        mlir_attr **items = cxla_arena_alloc_array(c->m->arena, (size_t)n + 1, sizeof(*items));
        if (!a || !items) return cv_fail(c, op, "out of memory"), NULL;
        memset(a, 0, sizeof *a);
        a->kind = MA_ARRAY;
        a->count = n;
        a->items = items;
        for (int64_t k = 0; k < n; k++) {
            items[k] = cxla_arena_alloc(c->m->arena, sizeof(mlir_attr));
            if (!items[k]) return cv_fail(c, op, "out of memory"), NULL;
            memset(items[k], 0, sizeof(mlir_attr));
            items[k]->kind = MA_INT;
            items[k]->i = v[k];
        }
        o->attr_names[i] = names[i];
        o->attrs[i] = a;
    }
    for (int64_t i = 0; i < op->attr_count; i++) {
        o->attr_names[count + i] = op->attr_names[i];
        o->attrs[count + i] = op->attrs[i];
    }
    return o;
}

static bool scan_op(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *ops[MAXN];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXN, &n)) return false;
    const mlir_attr *at = mlir_op_attr(op, "inits_at");
    int64_t num_inputs = at ? at->i : n / 2;
    int64_t dim = 0, rev = 0;
    get_int(op, "dimension", NULL, &dim);
    get_int(op, "is_reverse", "reverse", &rev);
    if (op->region_count != 1) return cv_fail(c, op, "expected a body region");
    cxla_computation *comp = cv_apply_region(c, s, op, op->regions[0], "scan_body");
    if (!comp) return false;
    cxla_shape rs = results_shape(c, op);
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_SCAN, &rs, n, ops);
    bool ok = cv_attr_ints(c, op, in, CXLA_ATTR_DIMENSIONS, &dim, 1) &&
              cv_attr_int(c, op, in, CXLA_ATTR_NUM_CARRIES, n - num_inputs) &&
              cv_attr_comps(c, op, in, CXLA_ATTR_TO_APPLY, &comp, 1);
    if (ok && rev) ok = cv_attr_text(c, op, in, CXLA_ATTR_IS_REVERSE, "true");
    return ok && cv_bind_results(c, s, op, in);
}

bool cv_scan(cv *c, cv_scope *s, const mlir_op *op);
bool cv_scan(cv *c, cv_scope *s, const mlir_op *op) {
    return scan_op(c, s, op);
}

bool cv_op(cv *c, cv_scope *s, const mlir_op *op) {
    const char *name = op->name;
    bool handled = false;
    if (strncmp(name, "check.", 6) == 0 || (strcmp(name, "stablehlo.custom_call") == 0 &&
                                            op->callee && strncmp(op->callee, "check.", 6) == 0)) {
        if (!cv_check(c, s, op, &handled)) return false;
        if (handled) return true;
    }
    if (strcmp(name, "interpreter.probe") == 0) {
        /* The reference interpreter's instrumentation: an identity that also writes the
         * value to a file for check.expect_serialized_eq. */
        c->skip_reason = "interpreter.probe writes values to files (the reference "
                         "interpreter's instrumentation)";
        if (op->operand_count != 1 || op->result_count != 1)
            return cv_fail(c, op, "expected one operand");
        return cv_define(c, s, op, op->results[0], cv_lookup(c, s, op, op->operands[0]));
    }
    if (strcmp(name, "interpreter.run_parallel") == 0) return cv_run_parallel(c, s, op);
    if (strcmp(name, "interpreter.print") == 0) {
        /* The reference interpreter prints the value; cxla's programs print nothing (the
         * cases that use it check nothing either). */
        return true;
    }
    if (strncmp(name, "chlo.", 5) == 0) {
        if (!cv_chlo(c, s, op, &handled)) return false;
        if (handled) return true;
        return cv_fail(c, op, "unknown CHLO operation (cxla does not convert it)");
    }
    if (strcmp(name, "func.call") == 0 || strcmp(name, "call") == 0)
        return call_op(c, s, op,
                       op->callee
                           ? op->callee
                           : (mlir_op_attr(op, "callee") ? mlir_op_attr(op, "callee")->s : NULL));
    const char *sh = NULL;
    if (strncmp(name, "stablehlo.", 10) == 0) sh = name + 10;
    if (strncmp(name, "mhlo.", 5) == 0) sh = name + 5;
    if (!sh) return cv_fail(c, op, "unknown operation (cxla does not convert it)");
    if (strcmp(sh, "constant") == 0) return constant_op(c, s, op);
    if (strncmp(sh, "dynamic_", 8) == 0 && strcmp(sh, "dynamic_slice") != 0 &&
        strcmp(sh, "dynamic_update_slice") != 0 && strcmp(sh, "dynamic_gather") != 0) {
        /* Shapes given as operands: with a static result type they must be constants, and
         * the op is its static form. */
        static const char *const pad_names[] = {"edge_padding_low", "edge_padding_high",
                                                "interior_padding"};
        static const int64_t pad_from[] = {2, 3, 4};
        static const char *const conv_names[] = {"padding"};
        static const int64_t conv_from[] = {2};
        mlir_op *o = NULL;
        if (strcmp(sh, "dynamic_iota") == 0) {
            o = static_form(c, op, 0, NULL, NULL, 0, s);
            return o && iota_op(c, s, o);
        }
        if (strcmp(sh, "dynamic_reshape") == 0) {
            o = static_form(c, op, 1, NULL, NULL, 0, s);
            return o && simple(c, s, o, CXLA_OP_RESHAPE);
        }
        if (strcmp(sh, "dynamic_broadcast_in_dim") == 0) {
            o = static_form(c, op, 1, NULL, NULL, 0, s);
            return o && broadcast_in_dim(c, s, o);
        }
        if (strcmp(sh, "dynamic_pad") == 0) {
            o = static_form(c, op, 2, pad_names, pad_from, 3, s);
            return o && pad_op(c, s, o);
        }
        if (strcmp(sh, "dynamic_conv") == 0) {
            o = static_form(c, op, 2, conv_names, conv_from, 1, s);
            return o && convolution(c, s, o);
        }
    }
    if (strcmp(sh, "select") == 0) return select_op(c, s, op);
    if (strcmp(sh, "compare") == 0) return compare_op(c, s, op);
    if (strcmp(sh, "broadcast_in_dim") == 0) return broadcast_in_dim(c, s, op);
    if (strcmp(sh, "transpose") == 0)
        return with_dims(c, s, op, CXLA_OP_TRANSPOSE, "dims", "permutation");
    if (strcmp(sh, "reverse") == 0)
        return with_dims(c, s, op, CXLA_OP_REVERSE, "dims", "dimensions");
    if (strcmp(sh, "concatenate") == 0)
        return with_dims(c, s, op, CXLA_OP_CONCATENATE, "dim", "dimension");
    if (strcmp(sh, "get_dimension_size") == 0)
        return with_dims(c, s, op, CXLA_OP_GET_DIMENSION_SIZE, "dim", "dimension");
    if (strcmp(sh, "slice") == 0) return slice_op(c, s, op);
    if (strcmp(sh, "pad") == 0) return pad_op(c, s, op);
    if (strcmp(sh, "iota") == 0) return iota_op(c, s, op);
    if (strcmp(sh, "dynamic_slice") == 0) return dynamic_slice(c, s, op);
    if (strcmp(sh, "get_tuple_element") == 0) return gte_op(c, s, op);
    if (strcmp(sh, "reduce_precision") == 0) return reduce_precision(c, s, op);
    if (strcmp(sh, "optimization_barrier") == 0) return opt_barrier(c, s, op);
    if (strcmp(sh, "reduce") == 0) return reduce_op(c, s, op);
    if (strcmp(sh, "reduce_window") == 0) return reduce_window(c, s, op);
    if (strcmp(sh, "select_and_scatter") == 0) return select_and_scatter(c, s, op);
    if (strcmp(sh, "sort") == 0) return sort_op(c, s, op);
    if (strcmp(sh, "gather") == 0) return gather_op(c, s, op, false);
    if (strcmp(sh, "dynamic_gather") == 0) return gather_op(c, s, op, true);
    if (strcmp(sh, "scatter") == 0) return scatter_op(c, s, op);
    if (strcmp(sh, "map") == 0) return map_op(c, s, op);
    if (strcmp(sh, "dot_general") == 0 || strcmp(sh, "dot") == 0) return dot_general(c, s, op);
    if (strcmp(sh, "convolution") == 0) return convolution(c, s, op);
    if (strcmp(sh, "fft") == 0) return fft_op(c, s, op);
    if (strcmp(sh, "triangular_solve") == 0) return triangular_solve(c, s, op);
    if (strcmp(sh, "cholesky") == 0) return cholesky(c, s, op);
    if (strcmp(sh, "batch_norm_training") == 0)
        return batch_norm(c, s, op, CXLA_OP_BATCH_NORM_TRAINING);
    if (strcmp(sh, "batch_norm_inference") == 0)
        return batch_norm(c, s, op, CXLA_OP_BATCH_NORM_INFERENCE);
    if (strcmp(sh, "batch_norm_grad") == 0) return batch_norm(c, s, op, CXLA_OP_BATCH_NORM_GRAD);
    if (strcmp(sh, "while") == 0) return cv_while(c, s, op);
    if (strcmp(sh, "case") == 0) return cv_branches(c, s, op, false);
    if (strcmp(sh, "if") == 0) return cv_branches(c, s, op, true);
    if (strcmp(sh, "custom_call") == 0) return custom_call(c, s, op);
    if (strcmp(sh, "composite") == 0) return composite(c, s, op);
    if (strcmp(sh, "rng_bit_generator") == 0) return rng_bit_generator(c, s, op);
    if (strcmp(sh, "rng") == 0) return rng_op(c, s, op);
    if (strcmp(sh, "convert") == 0) return convert_op(c, s, op);
    if (strcmp(sh, "bitcast_convert") == 0) return cv_bitcast_convert(c, s, op);
    if (strcmp(sh, "maximum") == 0 || strcmp(sh, "minimum") == 0)
        return max_min(c, s, op, sh[1] == 'a');
    /* The operations that convert one to one: opcodes.def's stablehlo column. */
    cxla_opcode simple_op =
        strcmp(sh, "create_token") == 0 ? CXLA_OP_AFTER_ALL : cxla_opcode_from_stablehlo_name(sh);
    if (simple_op != CXLA_OP_COUNT) return simple(c, s, op, simple_op);
    if (!cv_collective(c, s, op, sh, &handled)) return false;
    if (handled) return true;
    return cv_fail(c, op, "unknown operation (cxla does not convert it)");
}
