/* What the emitter's kernel writers share beside emit.c's nests: small scalar
 * computations written inline (reducers, selectors, update computations, comparators;
 * reduce-window and select-and-scatter in emit_window.c, scatter in emit_gather.c, scan's
 * bodies in emit_scan.c call them; emit_lib.c's sort comparators, map functions and
 * reducers as C functions of their scalars), and the pieces of a kernel every writer prints
 * (its head comment, its entry point; the arrays kernels take). See emit_internal.h.
 *
 * A scalar computation is written as the interpreter evaluates it on one element: each
 * value a C temporary of its compute type (emit_expr.c), a small array one temporary per
 * element (row-major), a tuple the list of its leaves, a call or fusion its computation
 * written in place on its operands' values, a while loop a C loop over variables holding
 * its state, a conditional an if or a switch setting variables that hold its result.
 * Every bound (nesting, leaves, cost) is checked before anything is written, so the
 * writer itself never fails but for memory. */
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
    bool pos; /* positionwise (cpu_emit_positionwise_ok): each array one value */
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

/* Bounds on the C written: how deep calls, fusions, loops and branches nest inside one
 * scalar computation; how many scalars one value (an array's elements, a tuple's leaves)
 * may hold; and how many scalar operations the whole computation may write (a reduce, map
 * or dot of small arrays is written out element by element). Far above what reducers and
 * comparators use. */
enum { MAX_DEPTH = 8, MAX_LEAVES = 64, MAX_COST = 1 << 12 };

/* The element types a scalar value may have: the emitter's, sub-byte integers (one per
 * byte) and complex values. */
static bool held_type(cxla_type t) {
    return cpu_emit_type_ok(t) || cpu_emit_subbyte(t) || cxla_type_is_complex(t);
}

static bool default_layout(const cxla_shape *s);

/* The element count of a static array. */
static int64_t elems_of(const cxla_shape *s) {
    int64_t n = 1;
    for (int64_t d = 0; d < s->rank; d++) n *= s->dims[d];
    return n;
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

/* A small array inside a scalar computation (|over| NULL): 1 to MAX_LEAVES elements, each
 * its own C scalar in row-major order (so the layout must be the default one where the
 * order could show: bitcast, constants). */
static bool small_array_ok(const cxla_shape *s) {
    if (!cxla_type_is_array(s->type) || s->type == CXLA_TUPLE || s->type == CXLA_TOKEN ||
        s->dynamic || !held_type(s->type))
        return false;
    int64_t n = 1; /* counted with a cap: many dimensions of 64 would overflow */
    for (int64_t d = 0; d < s->rank; d++) {
        if (s->dims[d] < 1 || s->dims[d] > MAX_LEAVES) return false;
        n *= s->dims[d];
        if (n > MAX_LEAVES) return false;
    }
    return n == 1 || default_layout(s);
}

/* The count of scalars |s| holds: an array's elements (1 per array with |over|), a
 * tuple's leaves depth first; -1 when some leaf is not a value or there are too many. */
static int64_t leaves_of(const cxla_shape *s, const cxla_shape *over) {
    if (s->type != CXLA_TUPLE) {
        if (over) return over_shape_ok(s, over) ? 1 : -1;
        return small_array_ok(s) ? elems_of(s) : -1;
    }
    int64_t n = 0;
    for (int64_t k = 0; k < s->tuple_count; k++) {
        int64_t m = leaves_of(&s->elements[k], over);
        if (m < 0 || n + m > MAX_LEAVES) return -1;
        n += m;
    }
    return n;
}

static bool same_dims(const cxla_shape *a, const cxla_shape *b) {
    if (a->rank != b->rank) return false;
    for (int64_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* Costs (scalar operations written), -1 for "not written": sums and products that stay
 * below MAX_COST. */
static int64_t add_cost(int64_t a, int64_t b) {
    if (a < 0 || b < 0 || a + b > MAX_COST) return -1;
    return a + b;
}
static int64_t mul_cost(int64_t a, int64_t k) {
    if (a < 0 || k < 0 || (k > 0 && a > MAX_COST / k)) return -1;
    return a * k;
}

static int64_t comp_cost(const cxla_computation *c, const cxla_shape *over, int depth);

/* A computation called with |ops| as its parameters, each of the parameter's shape. */
static int64_t callee_cost(const cxla_computation *c, const cxla_instr *const *ops, int64_t n,
                           const cxla_shape *over, int depth) {
    if (!c || !c->root || c->param_count != n || depth >= MAX_DEPTH) return -1;
    for (int64_t k = 0; k < n; k++)
        if (!cxla_shape_equal(&c->params[k]->shape, &ops[k]->shape)) return -1;
    return comp_cost(c, over, depth + 1);
}

/* Whether |ints| (|n| of them) are distinct dimensions below |rank|, marked in |used|. */
static bool dims_distinct(const int64_t *ints, int64_t n, int64_t rank, bool *used) {
    for (int64_t i = 0; i < n; i++) {
        if (!ints || ints[i] < 0 || ints[i] >= rank || used[ints[i]]) return false;
        used[ints[i]] = true;
    }
    return true;
}

/* A dot's dimension numbers (interp_linalg.c's plan): the result is [batch..., lhs free...,
 * rhs free...], each element the sum over the contracting dimensions, row-major in the
 * order they are listed. */
typedef struct dot_dims {
    int64_t nb, nc, nlf, nrf, k;
    int64_t lb[CXLA_MAX_RANK], rb[CXLA_MAX_RANK], lc[CXLA_MAX_RANK], rc[CXLA_MAX_RANK];
    int64_t lf[CXLA_MAX_RANK], rf[CXLA_MAX_RANK];
} dot_dims;

static bool dot_dims_of(const cxla_instr *in, dot_dims *d) {
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
    bool lused[CXLA_MAX_RANK] = {false}, rused[CXLA_MAX_RANK] = {false};
    if (nlb != nrb || nlc != nrc || !dims_distinct(lb, nlb, ls->rank, lused) ||
        !dims_distinct(lc, nlc, ls->rank, lused) || !dims_distinct(rb, nrb, rs->rank, rused) ||
        !dims_distinct(rc, nrc, rs->rank, rused))
        return false;
    d->nb = nlb;
    d->nc = nlc;
    d->k = 1;
    for (int64_t i = 0; i < nlb; i++) {
        if (ls->dims[lb[i]] != rs->dims[rb[i]]) return false;
        d->lb[i] = lb[i];
        d->rb[i] = rb[i];
    }
    for (int64_t i = 0; i < nlc; i++) {
        if (ls->dims[lc[i]] != rs->dims[rc[i]]) return false;
        d->lc[i] = lc[i];
        d->rc[i] = rc[i];
        d->k *= ls->dims[lc[i]];
    }
    d->nlf = d->nrf = 0;
    for (int64_t j = 0; j < ls->rank; j++)
        if (!lused[j]) d->lf[d->nlf++] = j;
    for (int64_t j = 0; j < rs->rank; j++)
        if (!rused[j]) d->rf[d->nrf++] = j;
    const cxla_shape *o = &in->shape;
    if (o->rank != d->nb + d->nlf + d->nrf) return false;
    for (int64_t i = 0; i < d->nb; i++)
        if (o->dims[i] != ls->dims[d->lb[i]]) return false;
    for (int64_t i = 0; i < d->nlf; i++)
        if (o->dims[d->nb + i] != ls->dims[d->lf[i]]) return false;
    for (int64_t i = 0; i < d->nrf; i++)
        if (o->dims[d->nb + d->nlf + i] != rs->dims[d->rf[i]]) return false;
    return true;
}

/* reduce: the reducer applied in the interpreter's order (reduce_value), or the fold of a
 * reducer the interpreter recognizes. */
static int64_t reduce_cost(const cxla_instr *in, int depth) {
    int64_t n = in->operand_count / 2;
    const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    if (n < 1 || in->operand_count != 2 * n || !c || !c->root || c->param_count != 2 * n ||
        depth >= MAX_DEPTH)
        return -1;
    if ((n == 1) != (in->shape.type != CXLA_TUPLE)) return -1;
    if (n > 1 && in->shape.tuple_count != n) return -1;
    const cxla_shape *x0 = &in->operands[0]->shape;
    int64_t nd = 0;
    const int64_t *dims = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    bool used[CXLA_MAX_RANK] = {false};
    if (x0->type == CXLA_TUPLE || !dims_distinct(dims, dims ? nd : 0, x0->rank, used)) return -1;
    for (int64_t i = 0; i < n; i++) {
        const cxla_shape *x = &in->operands[i]->shape, *init = &in->operands[n + i]->shape;
        const cxla_shape *r = n == 1 ? &in->shape : &in->shape.elements[i];
        if (x->type == CXLA_TUPLE || !same_dims(x, x0) || init->rank != 0 ||
            x->type != init->type || r->type != init->type || r->rank != x0->rank - nd ||
            c->params[i]->shape.type != init->type || c->params[i]->shape.rank != 0 ||
            c->params[n + i]->shape.type != x->type || c->params[n + i]->shape.rank != 0)
            return -1;
    }
    int64_t body = comp_cost(c, NULL, depth + 1);
    interp_reducer kind = n == 1 ? interp_match_reducer(c) : INTERP_REDUCER_NONE;
    if (kind != INTERP_REDUCER_NONE && interp_reducer_supports(kind, x0->type))
        return body < 0 ? -1 : elems_of(x0);
    return mul_cost(body, elems_of(x0));
}

/* The cost of |in|'s C (MAX_COST at most), or -1 when it has none. */
static int64_t instr_cost(const cxla_instr *in, const cxla_shape *over, int depth) {
    int64_t leaves = leaves_of(&in->shape, over);
    if (leaves < 0) return -1;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (leaves_of(&in->operands[k]->shape, over) < 0) return -1;
    cxla_type t = in->shape.type;
    bool array = t != CXLA_TUPLE;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (in->operands[k]->shape.type == CXLA_TUPLE && in->opcode != CXLA_OP_GET_TUPLE_ELEMENT &&
            in->opcode != CXLA_OP_COPY && in->opcode != CXLA_OP_CALL &&
            in->opcode != CXLA_OP_FUSION && in->opcode != CXLA_OP_TUPLE &&
            in->opcode != CXLA_OP_WHILE && in->opcode != CXLA_OP_CONDITIONAL)
            return -1; /* a tuple operand only where the value passes whole */
    const cxla_instr *const *ops = (const cxla_instr *const *)in->operands;
    cxla_type ot = in->operand_count ? ops[0]->shape.type : t;
    const cxla_shape *os = in->operand_count ? &ops[0]->shape : &in->shape;
    int64_t nints = 0;
    const int64_t *ints = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nints);
    if (!ints) nints = 0;
    bool ok = false;
    switch (in->opcode) {
    case CXLA_OP_PARAMETER:
    case CXLA_OP_TUPLE: return leaves;
    case CXLA_OP_CONSTANT:
        return array && in->literal && !in->literal_elided &&
                       cxla_literal_element_count(in->literal) == leaves
                   ? leaves
                   : -1;
    case CXLA_OP_CONVERT: ok = array; break;
    case CXLA_OP_COPY: ok = cxla_shape_equal(os, &in->shape); break;
    case CXLA_OP_GET_TUPLE_ELEMENT: {
        int64_t i = -1;
        ok = in->operand_count == 1 && ot == CXLA_TUPLE &&
             cxla_instr_int(in, CXLA_ATTR_INDEX, &i) && i >= 0 && i < os->tuple_count;
        break;
    }
    case CXLA_OP_CALL:
    case CXLA_OP_FUSION: {
        const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
        if (!c) c = cxla_instr_called(in, CXLA_ATTR_CALLS);
        int64_t cost = callee_cost(c, ops, in->operand_count, over, depth);
        return cost >= 0 && cxla_shape_equal(&c->root->shape, &in->shape) ? cost : -1;
    }
    case CXLA_OP_MAP: {
        /* Element by element: the computation takes scalars, not |over|'s arrays. */
        const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
        if (over || !array || !c || !c->root || c->param_count != in->operand_count ||
            depth >= MAX_DEPTH || c->root->shape.type != t || c->root->shape.rank != 0)
            return -1;
        for (int64_t k = 0; k < in->operand_count; k++)
            if (c->params[k]->shape.rank != 0 || c->params[k]->shape.type != ops[k]->shape.type ||
                !same_dims(&ops[k]->shape, &in->shape))
                return -1;
        return mul_cost(comp_cost(c, NULL, depth + 1), leaves);
    }
    case CXLA_OP_REDUCE: return over ? -1 : reduce_cost(in, depth);
    case CXLA_OP_WHILE: {
        /* The state as C variables, the condition and the body written inside a C loop. */
        const cxla_computation *cond = cxla_instr_called(in, CXLA_ATTR_CONDITION);
        const cxla_computation *body = cxla_instr_called(in, CXLA_ATTR_BODY);
        if (over || in->operand_count != 1 || leaves < 1 || !cxla_shape_equal(os, &in->shape))
            return -1;
        int64_t cc = callee_cost(cond, ops, 1, NULL, depth);
        int64_t bc = callee_cost(body, ops, 1, NULL, depth);
        if (cc < 0 || bc < 0 || cond->root->shape.type != CXLA_PRED ||
            cond->root->shape.rank != 0 || !cxla_shape_equal(&body->root->shape, &in->shape))
            return -1;
        return add_cost(add_cost(cc, bc), 2 * leaves);
    }
    case CXLA_OP_CONDITIONAL: {
        /* A pred (true, false) or an s32 branch index (out of range: the last branch). */
        if (over || in->operand_count < 2 || os->rank != 0 || leaves < 1 ||
            (ot != CXLA_PRED && ot != CXLA_S32))
            return -1;
        int64_t nb = in->operand_count - 1, cost = leaves;
        const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_BRANCH_COMPUTATIONS);
        if (ot == CXLA_PRED ? nb != 2 : !a || a->v.comps.count != nb) return -1;
        for (int64_t k = 0; k < nb; k++) {
            const cxla_computation *b =
                ot != CXLA_PRED ? a->v.comps.items[k]
                                : cxla_instr_called(in, k == 0 ? CXLA_ATTR_TRUE_COMPUTATION
                                                               : CXLA_ATTR_FALSE_COMPUTATION);
            cost = add_cost(cost, callee_cost(b, ops + k + 1, 1, NULL, depth));
            if (cost < 0 || !cxla_shape_equal(&b->root->shape, &in->shape)) return -1;
        }
        return cost;
    }
    case CXLA_OP_DOT: {
        /* The interpreter's products and sums (emit_conv.c's rules of interp_linalg.c). */
        dot_dims d;
        bool bad = false;
        cpu_emit_packed_nibble(in, &bad);
        if (over || !array || in->operand_count != 2 || bad || !dot_dims_of(in, &d)) return -1;
        return mul_cost(leaves, d.k + 1);
    }
    case CXLA_OP_BROADCAST:
        ok = !over && array && ot == t && nints == os->rank;
        for (int64_t k = 0; ok && k < nints; k++)
            ok = ints[k] >= 0 && ints[k] < in->shape.rank && in->shape.dims[ints[k]] == os->dims[k];
        break;
    case CXLA_OP_RESHAPE:
    case CXLA_OP_BITCAST:
        /* Row-major order both sides (small_array_ok keeps default layouts). */
        ok = !over && array && ot == t && leaves_of(os, NULL) == leaves;
        break;
    case CXLA_OP_TRANSPOSE: {
        bool used[CXLA_MAX_RANK] = {false};
        ok = !over && array && ot == t && nints == os->rank && in->shape.rank == os->rank &&
             dims_distinct(ints, nints, os->rank, used);
        for (int64_t k = 0; ok && k < nints; k++) ok = in->shape.dims[k] == os->dims[ints[k]];
        break;
    }
    case CXLA_OP_REVERSE: {
        bool used[CXLA_MAX_RANK] = {false};
        ok = !over && array && ot == t && same_dims(os, &in->shape) &&
             dims_distinct(ints, nints, os->rank, used);
        break;
    }
    case CXLA_OP_SLICE: {
        const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_SLICE);
        ok = !over && array && ot == t && a && a->kind == CXLA_ATTR_KIND_SLICE &&
             a->v.slice.rank == os->rank && in->shape.rank == os->rank;
        for (int64_t k = 0; ok && k < os->rank; k++) {
            const cxla_slice_dim *s = &a->v.slice.dims[k];
            ok = s->stride >= 1 && s->start >= 0 &&
                 s->start + (in->shape.dims[k] - 1) * s->stride < os->dims[k];
        }
        break;
    }
    case CXLA_OP_CONCATENATE:
        ok = !over && array && nints == 1 && ints[0] >= 0 && ints[0] < in->shape.rank;
        for (int64_t k = 0, at = 0; ok && k < in->operand_count; k++) {
            const cxla_shape *s = &ops[k]->shape;
            ok = s->type == t && s->rank == in->shape.rank;
            for (int64_t j = 0; ok && j < s->rank; j++)
                ok = j == ints[0] || s->dims[j] == in->shape.dims[j];
            at += s->dims[ints[0]];
            if (k + 1 == in->operand_count) ok = ok && at == in->shape.dims[ints[0]];
        }
        break;
    case CXLA_OP_PAD: {
        const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_PADDING);
        ok = !over && array && in->operand_count == 2 && ot == t && ops[1]->shape.type == t &&
             ops[1]->shape.rank == 0 && a && a->kind == CXLA_ATTR_KIND_PADDING &&
             a->v.padding.rank == os->rank && in->shape.rank == os->rank;
        for (int64_t k = 0; ok && k < os->rank; k++) {
            const cxla_pad_dim *p = &a->v.padding.dims[k];
            ok = p->interior >= 0 &&
                 p->low + p->high + os->dims[k] + (os->dims[k] - 1) * p->interior ==
                     in->shape.dims[k];
        }
        break;
    }
    case CXLA_OP_IOTA: {
        int64_t d = -1;
        ok = !over && array && in->operand_count == 0 && t != CXLA_PRED &&
             cxla_instr_int(in, CXLA_ATTR_IOTA_DIMENSION, &d) && d >= 0 && d < in->shape.rank;
        break;
    }
    case CXLA_OP_DYNAMIC_SLICE:
    case CXLA_OP_DYNAMIC_UPDATE_SLICE: {
        /* Starts read at run time (one integer scalar per dimension, or one vector of
         * them), clamped so the box stays inside (dynamic_value). */
        bool dus = in->opcode == CXLA_OP_DYNAMIC_UPDATE_SLICE;
        int64_t first = dus ? 2 : 1, ni = in->operand_count - first;
        const cxla_shape *box = dus && in->operand_count > 1 ? &ops[1]->shape : &in->shape;
        ok = !over && array && ni >= 0 && ot == t && box->rank == os->rank && box->type == t &&
             (!dus || same_dims(&in->shape, os));
        for (int64_t d = 0; ok && d < os->rank; d++) ok = box->dims[d] <= os->dims[d];
        bool vec = ok && ni == 1 && ops[first]->shape.rank == 1 && os->rank != 0;
        if (ok && vec) ok = ops[first]->shape.dims[0] == os->rank;
        if (ok && !vec) ok = ni == os->rank;
        for (int64_t k = first; ok && k < in->operand_count; k++)
            ok = cxla_type_is_integer(ops[k]->shape.type) && cpu_emit_type_ok(ops[k]->shape.type) &&
                 (vec || elems_of(&ops[k]->shape) == 1);
        break;
    }
    case CXLA_OP_GET_DIMENSION_SIZE: {
        int64_t n = 0;
        const int64_t *d = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &n);
        ok = !over && in->operand_count == 1 && ot != CXLA_TUPLE && t == CXLA_S32 && n == 1 &&
             d[0] >= 0 && d[0] < os->rank;
        break;
    }
    case CXLA_OP_COMPLEX:
        /* Made from two parts of one real type (emit_expr.c). */
        ok = array && in->operand_count == 2 && ops[1]->shape.type == ot &&
             ((ot == CXLA_F32 && t == CXLA_C64) || (ot == CXLA_F64 && t == CXLA_C128));
        break;
    case CXLA_OP_BITCAST_CONVERT:
        /* Whole bytes of one width: the bits as they are (the interpreter's memcpy). Not
         * pred (a byte other than 0 and 1 is no pred the kernels hold) nor sub-byte. */
        ok = array && in->operand_count == 1 && ot != CXLA_PRED && t != CXLA_PRED &&
             !cpu_emit_subbyte(ot) && !cpu_emit_subbyte(t) &&
             cxla_type_bits(ot) == cxla_type_bits(t) && cxla_type_bits(t) % 8 == 0 &&
             cxla_type_storage(ot) == cxla_type_storage(t);
        break;
    case CXLA_OP_COMPARE: {
        const char *d = cxla_instr_word(in, CXLA_ATTR_DIRECTION);
        const char *ct = cxla_instr_word(in, CXLA_ATTR_COMPARISON_TYPE);
        if (!d || in->operand_count != 2 || ot != ops[1]->shape.type) return -1;
        if (cxla_type_is_complex(ot)) /* EQ and NE by parts, as the interpreter */
            ok = (!strcmp(d, "EQ") || !strcmp(d, "NE")) && !(ct && !strcmp(ct, "TOTALORDER"));
        else
            ok = cpu_emit_compare(NULL, d, NULL, CXLA_PRED, "a", "b") != NULL;
        break;
    }
    case CXLA_OP_SELECT:
        /* The predicate may be a scalar of array operands. */
        ok = array && in->operand_count == 3 && ot == CXLA_PRED && ops[1]->shape.type == t &&
             ops[2]->shape.type == t;
        break;
    case CXLA_OP_CLAMP:
        /* emit.c's clamp: not complex (the interpreter refuses it); bounds may be scalars. */
        ok = array && in->operand_count == 3 && !cxla_type_is_complex(t) && ot == t &&
             ops[1]->shape.type == t && ops[2]->shape.type == t;
        break;
    default:
        if (!array || !(cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_ELEMENTWISE) ||
            in->opcode == CXLA_OP_STOCHASTIC_CONVERT)
            return -1;
        if (in->operand_count == 1)
            ok = cpu_emit_unary_ok(in->opcode, ot);
        else if (in->operand_count == 2)
            ok = ot == t && ops[1]->shape.type == t && cpu_emit_binary_ok(in->opcode, t);
        break;
    }
    return ok ? (leaves > 0 ? leaves : 1) : -1;
}

static int64_t comp_cost(const cxla_computation *c, const cxla_shape *over, int depth) {
    int64_t cost = 0;
    for (int64_t i = 0; i < c->instr_count && cost >= 0; i++)
        cost = add_cost(cost, instr_cost(c->instrs[i], over, depth));
    return cost;
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
    /* The results: one value, or a root tuple of |nres| values (one element each). */
    const cxla_instr *root = c->root;
    if (nres == 1) {
        if (root->shape.type == CXLA_TUPLE || leaves_of(&root->shape, over) != 1) return false;
    } else {
        if (root->opcode != CXLA_OP_TUPLE || root->operand_count != nres) return false;
        for (int64_t k = 0; k < nres; k++)
            if (root->operands[k]->shape.type == CXLA_TUPLE ||
                leaves_of(&root->operands[k]->shape, over) != 1)
                return false;
    }
    return comp_cost(c, over, 0) >= 0;
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

/* A value: its scalars' C names (an array's elements row-major, a tuple's leaves depth
 * first). */
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

static const sval *none(void) {
    static const char *zero = "0";
    static const sval v = {1, &zero};
    return &v;
}

/* A value of |n| leaves, to be filled. */
static sval *vnew(writer *w, int64_t n) {
    sval *v = cxla_arena_alloc(w->arena, sizeof *v);
    const char **l = cxla_arena_alloc_array(w->arena, (size_t)(n > 0 ? n : 1), sizeof *l);
    if (!v || !l) return NULL;
    for (int64_t i = 0; i < n; i++) l[i] = "0";
    v->n = n;
    v->leaf = l;
    return v;
}

static const sval *one(writer *w, const char *name) {
    sval *v = vnew(w, 1);
    if (!v) return none();
    v->leaf[0] = name;
    return v;
}

/* The scalars a value of |s| holds as the writer keeps it: 1 per array positionwise. */
static int64_t wleaves(const writer *w, const cxla_shape *s) {
    if (s->type != CXLA_TUPLE) return w->pos ? 1 : elems_of(s);
    int64_t n = 0;
    for (int64_t k = 0; k < s->tuple_count; k++) n += wleaves(w, &s->elements[k]);
    return n;
}

/* Leaf |i| of |v|, or its only leaf (a scalar beside arrays: select's predicate, clamp's
 * bounds). */
static const char *at(const sval *v, int64_t i) {
    return v->leaf[v->n == 1 ? 0 : i < v->n ? i : 0];
}

/* Row-major strides of |s| and the index of element |lin|. */
static void strides_of(const cxla_shape *s, int64_t *str) {
    int64_t m = 1;
    for (int64_t d = s->rank - 1; d >= 0; d--) {
        str[d] = m;
        m *= s->dims[d];
    }
}
static void unravel_dims(int64_t rank, const int64_t *dims, int64_t lin, int64_t *idx) {
    for (int64_t d = rank - 1; d >= 0; d--) {
        idx[d] = dims[d] ? lin % dims[d] : 0;
        lin = dims[d] ? lin / dims[d] : 0;
    }
}
static void unravel(const cxla_shape *s, int64_t lin, int64_t *idx) {
    unravel_dims(s->rank, s->dims, lin, idx);
}

/* A new temporary of |t| holding |expr|. */
static const char *temp(writer *w, cxla_type t, const char *expr, const char *what) {
    const char *v = F("f%" PRId64, w->tmp++);
    ln(w, "const %s %s = %s; /* %s */", cpu_emit_ctype(t), v, expr ? expr : "0", what);
    ln(w, "(void)%s;", v);
    return v;
}

/* A new variable of |t| set to |expr| (changed later: loop state, branch results). */
static const char *var(writer *w, cxla_type t, const char *expr, const char *what) {
    const char *v = F("f%" PRId64, w->tmp++);
    if (expr)
        ln(w, "%s %s = %s; /* %s */", cpu_emit_ctype(t), v, expr, what);
    else {
        ln(w, "%s %s; /* %s */", cpu_emit_ctype(t), v, what);
        ln(w, "memset(&%s, 0, sizeof(%s));", v, v);
    }
    ln(w, "(void)%s;", v);
    return v;
}

/* The element types of |s|'s leaves, depth first, into |types| (wleaves of them). */
static int64_t leaf_types(const writer *w, const cxla_shape *s, cxla_type *types) {
    if (s->type != CXLA_TUPLE) {
        int64_t n = wleaves(w, s);
        for (int64_t i = 0; i < n; i++) types[i] = s->type;
        return n;
    }
    int64_t n = 0;
    for (int64_t k = 0; k < s->tuple_count; k++) n += leaf_types(w, &s->elements[k], types + n);
    return n;
}

static const sval *scalar_value(scalar_ctx *s, const cxla_instr *in);

/* Writes |c| on |args|; the value of its root. */
static const sval *call_value(writer *w, const cxla_computation *c, const sval *args) {
    const sval **vals = cxla_arena_alloc_array(w->arena, (size_t)c->instr_count + 1, sizeof *vals);
    if (!vals) return none();
    memset(vals, 0, ((size_t)c->instr_count + 1) * sizeof *vals);
    scalar_ctx s = {w, c, args, vals};
    return scalar_value(&s, c->root);
}

static const char *leaf0(scalar_ctx *s, const cxla_instr *in) {
    return scalar_value(s, in)->leaf[0];
}

/* One step of a recognized reducer |kind| on |acc| and |x| of |t| (fold_pred's rules for
 * pred; small floats in f32, rounded to the type after every step). */
static const char *fold_step(writer *w, interp_reducer kind, cxla_type t, const char *acc,
                             const char *x, const char *what) {
    cxla_arena *arena = w->arena;
    if (t == CXLA_PRED) {
        const char *op =
            kind == INTERP_REDUCER_XOR ? "^"
            : kind == INTERP_REDUCER_ADD || kind == INTERP_REDUCER_OR || kind == INTERP_REDUCER_MAX
                ? "|"
                : "&";
        return temp(w, t, F("(uint8_t)((%s %s %s) != 0)", acc, op, x), what);
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
    return temp(w, t, e ? cpu_emit_encode(arena, t, e) : NULL, what);
}

/* The interpreter's pairwise sum (interp_reduce.c, pairwise_f32/f64): runs of up to 16
 * added in order, longer ones split in halves. */
static const char *pairwise(writer *w, cxla_type t, const char *const *x, int64_t n,
                            const char *what) {
    if (n <= 16) {
        const char *s = x[0];
        for (int64_t i = 1; i < n; i++) s = fold_step(w, INTERP_REDUCER_ADD, t, s, x[i], what);
        return s;
    }
    int64_t half = n / 2;
    const char *a = pairwise(w, t, x, half, what), *b = pairwise(w, t, x + half, n - half, what);
    return fold_step(w, INTERP_REDUCER_ADD, t, a, b, what);
}

/* reduce (reduce_cost): for each result element, its reduced elements in row-major order
 * (the operand's dimension order), as the interpreter visits them. A reducer the
 * interpreter recognizes is its fold: acc = init, then acc op x (f32/f64 addition: init +
 * the pairwise sum), whatever order the computation names its parameters in; any other is
 * the computation on (accumulators, inputs), written once per element. */
static const sval *reduce_value(scalar_ctx *s, const cxla_instr *in) {
    writer *w = s->w;
    cxla_arena *arena = w->arena;
    int64_t n = in->operand_count / 2;
    const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    const cxla_shape *xs = &in->operands[0]->shape;
    cxla_type t = xs->type;
    bool reduced[CXLA_MAX_RANK] = {false};
    int64_t nd = 0;
    const int64_t *dims = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    for (int64_t i = 0; dims && i < nd; i++) reduced[dims[i]] = true;
    /* The input elements of each result element, in order. */
    int64_t total = w->pos ? 1 : elems_of(xs), outs = 1, inner = 1;
    for (int64_t d = 0; d < xs->rank && !w->pos; d++) {
        if (reduced[d])
            inner *= xs->dims[d];
        else
            outs *= xs->dims[d];
    }
    int64_t *order = cxla_arena_alloc_array(arena, (size_t)total, sizeof *order);
    const sval **x = cxla_arena_alloc_array(arena, (size_t)(2 * n), sizeof *x);
    sval *r = vnew(w, n * outs);
    if (!order || !x || !r) return none();
    {
        int64_t idx[CXLA_MAX_RANK], str[CXLA_MAX_RANK];
        strides_of(xs, str);
        for (int64_t e = 0; e < total; e++) {
            unravel(xs, e, idx);
            int64_t o = 0, q = 0;
            for (int64_t d = 0; d < xs->rank; d++) {
                if (reduced[d])
                    q = q * xs->dims[d] + idx[d];
                else
                    o = o * xs->dims[d] + idx[d];
            }
            order[o * inner + q] = e;
        }
    }
    for (int64_t i = 0; i < 2 * n; i++) x[i] = scalar_value(s, in->operands[i]);
    interp_reducer kind = n == 1 ? interp_match_reducer(c) : INTERP_REDUCER_NONE;
    const char **run = cxla_arena_alloc_array(arena, (size_t)inner, sizeof *run);
    if (!run) return none();
    for (int64_t o = 0; o < outs; o++) {
        if (kind != INTERP_REDUCER_NONE && interp_reducer_supports(kind, t)) {
            const char *acc = x[1]->leaf[0];
            for (int64_t q = 0; q < inner; q++) run[q] = at(x[0], order[o * inner + q]);
            if (kind == INTERP_REDUCER_ADD && (t == CXLA_F32 || t == CXLA_F64))
                acc = fold_step(w, kind, t, acc, pairwise(w, t, run, inner, in->name), in->name);
            else
                for (int64_t q = 0; q < inner; q++)
                    acc = fold_step(w, kind, t, acc, run[q], in->name);
            r->leaf[o] = acc;
            continue;
        }
        /* Any other reducer: acc = f(acc..., x...). */
        sval *args = cxla_arena_alloc_array(arena, (size_t)(2 * n), sizeof *args);
        if (!args) return none();
        for (int64_t i = 0; i < n; i++) args[i] = *x[n + i];
        for (int64_t q = 0; q < inner; q++) {
            for (int64_t i = 0; i < n; i++) {
                const char **l = cxla_arena_alloc(arena, sizeof *l);
                if (!l) return none();
                l[0] = at(x[i], order[o * inner + q]);
                args[n + i].n = 1;
                args[n + i].leaf = l;
            }
            const sval *v = call_value(w, c, args);
            for (int64_t i = 0; i < n; i++) {
                const char **l = cxla_arena_alloc(arena, sizeof *l);
                if (!l) return none();
                l[0] = v->leaf[i < v->n ? i : 0];
                args[i].n = 1;
                args[i].leaf = l;
            }
        }
        for (int64_t i = 0; i < n; i++) r->leaf[i * outs + o] = args[i].leaf[0];
    }
    return r;
}

/* dot (dot_dims_of): each result element the sum of its products in the order of the
 * flattened contraction index, from zero, in the compute type of emit_conv.c's rules
 * (the interpreter's), rounded once to the result type. */
static const sval *dot_value(scalar_ctx *s, const cxla_instr *in) {
    writer *w = s->w;
    cxla_arena *arena = w->arena;
    dot_dims d;
    if (!dot_dims_of(in, &d)) return none();
    const cxla_shape *ls = &in->operands[0]->shape, *rs = &in->operands[1]->shape;
    cxla_type rt = in->shape.type, ct = cpu_emit_product_type(rt, ls->type, rs->type);
    bool cplx = cxla_type_is_complex(ct), nib = false, bad = false;
    nib = cpu_emit_packed_nibble(in, &bad);
    const char *acc_t = ct == CXLA_U64 ? "uint64_t" : cpu_emit_ctype(ct);
    const char *zero = ct == CXLA_C64    ? "cxla_c64_make(0, 0)"
                       : ct == CXLA_C128 ? "cxla_c128_make(0, 0)"
                                         : "0";
    const sval *a = scalar_value(s, in->operands[0]), *b = scalar_value(s, in->operands[1]);
    int64_t n = elems_of(&in->shape);
    sval *r = vnew(w, n);
    if (!r) return none();
    int64_t lstr[CXLA_MAX_RANK], rstr[CXLA_MAX_RANK], oi[CXLA_MAX_RANK], ki[CXLA_MAX_RANK];
    strides_of(ls, lstr);
    strides_of(rs, rstr);
    /* The contraction index as a shape of the contracting dimensions, in their order. */
    int64_t kdims[CXLA_MAX_RANK];
    for (int64_t i = 0; i < d.nc; i++) kdims[i] = ls->dims[d.lc[i]];
    for (int64_t e = 0; e < n; e++) {
        unravel(&in->shape, e, oi);
        int64_t lbase = 0, rbase = 0;
        for (int64_t i = 0; i < d.nb; i++) {
            lbase += oi[i] * lstr[d.lb[i]];
            rbase += oi[i] * rstr[d.rb[i]];
        }
        for (int64_t i = 0; i < d.nlf; i++) lbase += oi[d.nb + i] * lstr[d.lf[i]];
        for (int64_t i = 0; i < d.nrf; i++) rbase += oi[d.nb + d.nlf + i] * rstr[d.rf[i]];
        const char *acc = F("f%" PRId64, w->tmp++);
        ln(w, "%s %s = %s; /* %s */", acc_t, acc, zero, in->name);
        for (int64_t k = 0; k < d.k; k++) {
            unravel_dims(d.nc, kdims, k, ki);
            int64_t li = lbase, ri = rbase;
            for (int64_t i = 0; i < d.nc; i++) {
                li += ki[i] * lstr[d.lc[i]];
                ri += ki[i] * rstr[d.rc[i]];
            }
            const char *x = cpu_emit_product_operand(arena, ls->type, rt, ct, nib, at(a, li));
            const char *y = cpu_emit_product_operand(arena, rs->type, rt, ct, nib, at(b, ri));
            if (!x || !y) continue;
            if (cplx)
                ln(w, "%s = %s_add(%s, %s_mul(%s, %s));", acc, acc_t, acc, acc_t, x, y);
            else if (nib)
                ln(w, "%s += %s;", acc, cpu_emit_nibble_product(arena, rt, x, y));
            else
                ln(w, "%s += (%s)(%s) * (%s)(%s);", acc, acc_t, x, acc_t, y);
        }
        r->leaf[e] = temp(w, rt, cpu_emit_convert(arena, ct, rt, acc), in->name);
    }
    return r;
}

/* while: the state's leaves as C variables; the condition and the body written inside a C
 * loop, the body's results all read before the state changes (a body may swap them). */
static const sval *while_value(scalar_ctx *s, const cxla_instr *in) {
    writer *w = s->w;
    const cxla_computation *cond = cxla_instr_called(in, CXLA_ATTR_CONDITION);
    const cxla_computation *body = cxla_instr_called(in, CXLA_ATTR_BODY);
    const sval *init = scalar_value(s, in->operands[0]);
    int64_t n = init->n;
    cxla_type types[MAX_LEAVES];
    if (leaf_types(w, &in->shape, types) != n) return none();
    sval *st = vnew(w, n);
    if (!st) return none();
    ln(w, "/* %s: while, condition %s, body %s */", in->name, cond->name, body->name);
    for (int64_t i = 0; i < n; i++) st->leaf[i] = var(w, types[i], init->leaf[i], in->name);
    ln(w, "for (;;) {");
    w->indent++;
    const sval *go = call_value(w, cond, st);
    ln(w, "if (!%s) break;", go->leaf[0]);
    const sval *next = call_value(w, body, st);
    const char *copies[MAX_LEAVES];
    for (int64_t i = 0; i < n; i++) copies[i] = temp(w, types[i], at(next, i), in->name);
    for (int64_t i = 0; i < n; i++) ln(w, "%s = %s;", st->leaf[i], copies[i]);
    w->indent--;
    ln(w, "}");
    return st;
}

/* conditional: the result's leaves as C variables, set by the branch the selector takes
 * (a pred: true_computation or false_computation; an s32: that branch, the last one when
 * out of range, as the interpreter). */
static const sval *conditional_value(scalar_ctx *s, const cxla_instr *in) {
    writer *w = s->w;
    const char *sel = leaf0(s, in->operands[0]);
    bool pred = in->operands[0]->shape.type == CXLA_PRED;
    int64_t nb = in->operand_count - 1;
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_BRANCH_COMPUTATIONS);
    const sval **ops = cxla_arena_alloc_array(w->arena, (size_t)nb, sizeof *ops);
    cxla_type types[MAX_LEAVES];
    int64_t n = leaf_types(w, &in->shape, types);
    sval *res = vnew(w, n);
    if (!ops || !res) return none();
    for (int64_t k = 0; k < nb; k++) ops[k] = scalar_value(s, in->operands[k + 1]);
    ln(w, "/* %s: conditional */", in->name);
    for (int64_t i = 0; i < n; i++) res->leaf[i] = var(w, types[i], NULL, in->name);
    if (pred)
        ln(w, "if (%s) {", sel);
    else
        ln(w, "switch ((int64_t)%s) {", sel);
    for (int64_t k = 0; k < nb; k++) {
        const cxla_computation *b =
            pred ? cxla_instr_called(in, k == 0 ? CXLA_ATTR_TRUE_COMPUTATION
                                                : CXLA_ATTR_FALSE_COMPUTATION)
                 : a->v.comps.items[k];
        if (pred && k == 1) ln(w, "} else {");
        if (!pred && k + 1 < nb) ln(w, "case %" PRId64 ": {", k);
        if (!pred && k + 1 == nb) ln(w, "default: {");
        w->indent++;
        ln(w, "/* branch %" PRId64 ": %s */", k, b->name);
        const sval *v = call_value(w, b, ops[k]);
        for (int64_t i = 0; i < n; i++) ln(w, "%s = %s;", res->leaf[i], at(v, i));
        if (!pred) ln(w, "break;");
        w->indent--;
        if (!pred) ln(w, "}");
    }
    ln(w, "}");
    return res;
}

/* The moves of small arrays: result element e is operand element src(e), or (pad) the
 * padding value where src gives -1. */
static const sval *move_value(scalar_ctx *s, const cxla_instr *in) {
    writer *w = s->w;
    const cxla_shape *os = &in->operands[0]->shape, *ys = &in->shape;
    int64_t n = elems_of(ys), ostr[CXLA_MAX_RANK], y[CXLA_MAX_RANK], x[CXLA_MAX_RANK];
    strides_of(os, ostr);
    int64_t nints = 0;
    const int64_t *ints = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nints);
    sval *r = vnew(w, n);
    if (!r) return none();
    if (in->opcode == CXLA_OP_CONCATENATE) {
        for (int64_t e = 0; e < n; e++) {
            unravel(ys, e, y);
            int64_t k = 0, pos = y[ints[0]];
            while (k + 1 < in->operand_count && pos >= in->operands[k]->shape.dims[ints[0]])
                pos -= in->operands[k++]->shape.dims[ints[0]];
            const cxla_shape *ks = &in->operands[k]->shape;
            int64_t kstr[CXLA_MAX_RANK], li = 0;
            strides_of(ks, kstr);
            y[ints[0]] = pos;
            for (int64_t d = 0; d < ks->rank; d++) li += y[d] * kstr[d];
            r->leaf[e] = at(scalar_value(s, in->operands[k]), li);
        }
        return r;
    }
    const sval *v = scalar_value(s, in->operands[0]);
    const sval *pad = in->opcode == CXLA_OP_PAD ? scalar_value(s, in->operands[1]) : NULL;
    const cxla_attr *a = cxla_instr_attr(in, in->opcode == CXLA_OP_PAD     ? CXLA_ATTR_PADDING
                                             : in->opcode == CXLA_OP_SLICE ? CXLA_ATTR_SLICE
                                                                           : CXLA_ATTR_DIMENSIONS);
    for (int64_t e = 0; e < n; e++) {
        unravel(ys, e, y);
        bool inside = true;
        switch (in->opcode) {
        case CXLA_OP_BROADCAST:
            for (int64_t k = 0; k < os->rank; k++) x[k] = y[ints[k]];
            break;
        case CXLA_OP_TRANSPOSE:
            for (int64_t k = 0; k < os->rank; k++) x[ints[k]] = y[k];
            break;
        case CXLA_OP_REVERSE:
            for (int64_t k = 0; k < os->rank; k++) x[k] = y[k];
            for (int64_t k = 0; k < nints; k++) x[ints[k]] = os->dims[ints[k]] - 1 - y[ints[k]];
            break;
        case CXLA_OP_SLICE:
            for (int64_t k = 0; k < os->rank; k++)
                x[k] = a->v.slice.dims[k].start + y[k] * a->v.slice.dims[k].stride;
            break;
        case CXLA_OP_PAD:
            for (int64_t k = 0; k < os->rank && inside; k++) {
                const cxla_pad_dim *p = &a->v.padding.dims[k];
                int64_t off = y[k] - p->low, step = p->interior + 1;
                inside = off >= 0 && off % step == 0 && off / step < os->dims[k];
                x[k] = inside ? off / step : 0;
            }
            break;
        default: /* reshape, bitcast: row-major order kept */ unravel(os, e, x); break;
        }
        int64_t li = 0;
        for (int64_t k = 0; k < os->rank; k++) li += x[k] * ostr[k];
        r->leaf[e] = inside ? at(v, li) : pad->leaf[0];
    }
    return r;
}

/* dynamic-slice and dynamic-update-slice of small arrays: the operand as a local C array,
 * each start read as int64_t (u64 above INT64_MAX as INT64_MAX, as the interpreter loads
 * indices) and clamped to [0, dim - size]; the slice's elements read at, or the update's
 * written to, the box's offset from there. */
static const sval *dynamic_value(scalar_ctx *s, const cxla_instr *in) {
    writer *w = s->w;
    bool dus = in->opcode == CXLA_OP_DYNAMIC_UPDATE_SLICE;
    int64_t first = dus ? 2 : 1, ni = in->operand_count - first;
    const cxla_shape *os = &in->operands[0]->shape;
    const cxla_shape *box = dus ? &in->operands[1]->shape : &in->shape;
    bool vec = ni == 1 && in->operands[first]->shape.rank == 1 && os->rank != 0;
    const sval *v = scalar_value(s, in->operands[0]);
    const sval *u = dus ? scalar_value(s, in->operands[1]) : NULL;
    int64_t n = elems_of(os), bn = elems_of(box), ostr[CXLA_MAX_RANK], idx[CXLA_MAX_RANK];
    strides_of(os, ostr);
    sval *r = vnew(w, elems_of(&in->shape));
    if (!r) return none();
    const char *base = "0";
    for (int64_t d = 0; d < os->rank; d++) {
        const cxla_instr *ix = in->operands[vec ? first : first + d];
        const char *x = vec ? at(scalar_value(s, ix), d) : leaf0(s, ix);
        const char *e = ix->shape.type == CXLA_U64
                            ? F("(%s > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)%s)", x, x)
                            : F("(int64_t)%s", x);
        int64_t hi = os->dims[d] - box->dims[d];
        const char *sv = F("f%" PRId64, w->tmp++);
        ln(w, "const int64_t %s = %s; /* %s: start %" PRId64 " */", sv, e, in->name, d);
        base = F("%s + (%s < 0 ? 0 : %s > %" PRId64 " ? %" PRId64 " : %s) * %" PRId64, base, sv, sv,
                 hi, hi, sv, ostr[d]);
    }
    const char *b = F("f%" PRId64, w->tmp++), *a = F("f%" PRId64, w->tmp++);
    ln(w, "const int64_t %s = %s;", b, base);
    cxla_strbuf list;
    cxla_strbuf_init(&list);
    for (int64_t i = 0; i < n; i++) cxla_strbuf_printf(&list, "%s%s", i ? ", " : "", at(v, i));
    ln(w, "%s%s %s[%" PRId64 "] = {%s}; /* %s */", dus ? "" : "const ",
       cpu_emit_ctype(in->shape.type), a, n, list.data && !list.failed ? list.data : "0", in->name);
    cpu_emit_buf_free(&list);
    ln(w, "(void)%s;", a);
    for (int64_t k = 0; k < bn; k++) {
        unravel(box, k, idx);
        int64_t off = 0;
        for (int64_t d = 0; d < os->rank; d++) off += idx[d] * ostr[d];
        if (dus)
            ln(w, "%s[%s + %" PRId64 "] = %s;", a, b, off, at(u, k));
        else
            r->leaf[k] = F("%s[%s + %" PRId64 "]", a, b, off);
    }
    for (int64_t i = 0; dus && i < n; i++) r->leaf[i] = F("%s[%" PRId64 "]", a, i);
    return r;
}

/* The C expression of elementwise |in| on leaf |i| of its operands' values |v|. */
static const char *elementwise(scalar_ctx *s, const cxla_instr *in, const sval *const *v,
                               int64_t i) {
    writer *w = s->w;
    cxla_arena *arena = w->arena;
    cxla_type t = in->shape.type;
    const cxla_instr *const *ops = (const cxla_instr *const *)in->operands;
    switch (in->opcode) {
    case CXLA_OP_CONVERT: return cpu_emit_convert(arena, ops[0]->shape.type, t, at(v[0], i));
    case CXLA_OP_BITCAST_CONVERT: {
        const char *r = F("f%" PRId64, w->tmp++);
        ln(w, "%s %s; /* %s */", cpu_emit_ctype(t), r, in->name);
        ln(w, "memcpy(&%s, &%s, sizeof(%s));", r, at(v[0], i), r);
        ln(w, "(void)%s;", r);
        return r;
    }
    case CXLA_OP_COMPARE: {
        cxla_type ot = ops[0]->shape.type;
        const char *a = cpu_emit_decode(arena, ot, at(v[0], i));
        const char *b = cpu_emit_decode(arena, ot, at(v[1], i));
        return cpu_emit_compare(arena, cxla_instr_word(in, CXLA_ATTR_DIRECTION),
                                cxla_instr_word(in, CXLA_ATTR_COMPARISON_TYPE),
                                cpu_emit_is_small(ot) ? CXLA_F32 : ot, a, b);
    }
    case CXLA_OP_SELECT: return F("%s ? %s : %s", at(v[0], i), at(v[1], i), at(v[2], i));
    case CXLA_OP_CLAMP: {
        /* emit.c's clamp rule for rule: floats min(hi, max(lo, x)) in f32 (small floats
         * rounded back), integers by two comparisons. */
        const char *lo = at(v[0], i), *x = at(v[1], i), *hi = at(v[2], i);
        if (cxla_type_is_float(t)) {
            const char *sfx = t == CXLA_F64 ? "f64" : "f32";
            return cpu_emit_encode(arena, t,
                                   F("cxla_min_%s(%s, cxla_max_%s(%s, %s))", sfx,
                                     cpu_emit_decode(arena, t, hi), sfx,
                                     cpu_emit_decode(arena, t, lo), cpu_emit_decode(arena, t, x)));
        }
        const char *m = temp(w, t, F("%s >= %s ? %s : %s", lo, x, lo, x), in->name);
        return F("%s <= %s ? %s : %s", hi, m, hi, m);
    }
    default: {
        /* Small floats: decoded, computed in f32, the result encoded (as emit.c). */
        cxla_type ot = ops[0]->shape.type, ct = cpu_emit_is_small(ot) ? CXLA_F32 : ot;
        const char *expr;
        cpu_emit_math_type(ot);
        if (in->operand_count == 1)
            expr = cpu_emit_unary(arena, in->opcode, ct, cpu_emit_decode(arena, ot, at(v[0], i)));
        else
            expr = cpu_emit_binary(arena, in->opcode, ct, cpu_emit_decode(arena, ot, at(v[0], i)),
                                   cpu_emit_decode(arena, ot, at(v[1], i)));
        return expr ? cpu_emit_encode(arena, t, expr) : NULL;
    }
    }
}

static const sval *scalar_value_of(scalar_ctx *s, const cxla_instr *in) {
    writer *w = s->w;
    cxla_arena *arena = w->arena;
    cxla_type t = in->shape.type;
    const cxla_instr *const *ops = (const cxla_instr *const *)in->operands;
    int64_t n = in->shape.type == CXLA_TUPLE ? 1 : wleaves(w, &in->shape);
    switch (in->opcode) {
    case CXLA_OP_PARAMETER: return &s->args[in->parameter_number];
    case CXLA_OP_CONSTANT: {
        sval *v = vnew(w, n);
        if (!v) return none();
        const unsigned char *p = cxla_literal_data_const(in->literal);
        for (int64_t i = 0; i < n; i++)
            v->leaf[i] = bits_const(w, t, p + (size_t)i * cxla_type_storage(t));
        return v;
    }
    case CXLA_OP_COPY:
    case CXLA_OP_BROADCAST:
    case CXLA_OP_RESHAPE:
    case CXLA_OP_BITCAST:
    case CXLA_OP_TRANSPOSE:
    case CXLA_OP_REVERSE:
    case CXLA_OP_SLICE:
    case CXLA_OP_CONCATENATE:
    case CXLA_OP_PAD:
        if (w->pos) return scalar_value(s, ops[0]); /* positionwise: the same element */
        return move_value(s, in);
    case CXLA_OP_DYNAMIC_SLICE:
    case CXLA_OP_DYNAMIC_UPDATE_SLICE: return dynamic_value(s, in);
    case CXLA_OP_GET_DIMENSION_SIZE: {
        int64_t nd = 0;
        const int64_t *d = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
        return one(w, F("(int32_t)%" PRId64, ops[0]->shape.dims[d[0]]));
    }
    case CXLA_OP_TUPLE: {
        sval *v = vnew(w, wleaves(w, &in->shape));
        if (!v) return none();
        int64_t m = 0;
        for (int64_t k = 0; k < in->operand_count; k++) {
            const sval *e = scalar_value(s, ops[k]);
            for (int64_t j = 0; j < e->n && m < v->n; j++) v->leaf[m++] = e->leaf[j];
        }
        return v;
    }
    case CXLA_OP_GET_TUPLE_ELEMENT: {
        const sval *whole = scalar_value(s, ops[0]);
        int64_t index = 0, first = 0;
        cxla_instr_int(in, CXLA_ATTR_INDEX, &index);
        for (int64_t k = 0; k < index; k++) first += wleaves(w, &ops[0]->shape.elements[k]);
        sval *v = cxla_arena_alloc(arena, sizeof *v);
        if (!v) return none();
        v->n = wleaves(w, &in->shape);
        v->leaf = whole->leaf + first;
        return v;
    }
    case CXLA_OP_CALL:
    case CXLA_OP_FUSION: {
        const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
        if (!c) c = cxla_instr_called(in, CXLA_ATTR_CALLS);
        sval *args = cxla_arena_alloc_array(arena, (size_t)in->operand_count + 1, sizeof *args);
        if (!args) return none();
        for (int64_t k = 0; k < in->operand_count; k++) args[k] = *scalar_value(s, ops[k]);
        ln(w, "/* %s: %s */", in->name, c->name);
        return call_value(w, c, args);
    }
    case CXLA_OP_MAP: {
        /* The computation on each element's scalars. */
        const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
        sval *args = cxla_arena_alloc_array(arena, (size_t)in->operand_count + 1, sizeof *args);
        const char **names =
            cxla_arena_alloc_array(arena, (size_t)in->operand_count + 1, sizeof *names);
        sval *r = vnew(w, n);
        if (!args || !names || !r) return none();
        for (int64_t i = 0; i < n; i++) {
            for (int64_t k = 0; k < in->operand_count; k++) {
                names[k] = at(scalar_value(s, ops[k]), i);
                args[k].n = 1;
                args[k].leaf = &names[k];
            }
            ln(w, "/* %s: %s */", in->name, c->name);
            r->leaf[i] = call_value(w, c, args)->leaf[0];
        }
        return r;
    }
    case CXLA_OP_REDUCE: return reduce_value(s, in);
    case CXLA_OP_DOT: return dot_value(s, in);
    case CXLA_OP_WHILE: return while_value(s, in);
    case CXLA_OP_CONDITIONAL: return conditional_value(s, in);
    case CXLA_OP_IOTA: {
        /* Each element's index along the dimension, stored as the interpreter's iota
         * stores it. */
        int64_t d = 0, y[CXLA_MAX_RANK];
        cxla_instr_int(in, CXLA_ATTR_IOTA_DIMENSION, &d);
        sval *v = vnew(w, n);
        if (!v) return none();
        for (int64_t i = 0; i < n; i++) {
            unsigned char bits[16] = {0};
            unravel(&in->shape, i, y);
            cxla_store_s64(t, bits, w->pos ? 0 : y[d]);
            v->leaf[i] = bits_const(w, t, bits);
        }
        return v;
    }
    default: break;
    }
    /* Elementwise operations, leaf by leaf. */
    const sval *v[3] = {NULL, NULL, NULL};
    for (int64_t k = 0; k < in->operand_count && k < 3; k++) v[k] = scalar_value(s, ops[k]);
    sval *r = vnew(w, n);
    if (!r) return none();
    for (int64_t i = 0; i < n; i++) r->leaf[i] = temp(w, t, elementwise(s, in, v, i), in->name);
    return r;
}

static const sval *scalar_value(scalar_ctx *s, const cxla_instr *in) {
    int64_t k = 0;
    while (k < s->c->instr_count && s->c->instrs[k] != in) k++;
    if (k == s->c->instr_count) return none(); /* not of this computation */
    if (!s->vals[k]) s->vals[k] = scalar_value_of(s, in);
    return s->vals[k];
}

void cpu_emit_scalar(cxla_arena *arena, cxla_strbuf *b, int indent, int64_t *tmp,
                     const cxla_computation *c, const char *const *args, const char **out) {
    /* Positionwise (emit_scan.c) where a parameter is not one element: each array is then
     * one C value, that of the position being written. */
    bool pos = false;
    for (int64_t k = 0; k < c->param_count; k++)
        if (c->params[k]->shape.type != CXLA_TUPLE && elems_of(&c->params[k]->shape) != 1)
            pos = true;
    writer wr = {arena, b, indent, *tmp, pos};
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
