/* Algebraic simplifier: the rewrites XLA's AlgebraicSimplifier applies most often, each
 * only where it cannot change a bit of the result.
 *
 *   x + (-0.0) -> x, x - (+0.0) -> x (floats); x + 0, x - 0 -> x (integers).
 *     Not x + (+0.0): (-0.0) + (+0.0) is +0.0, so it would turn a -0.0 into +0.0.
 *   x * 1 -> x, x / 1 -> x (integers and floats: IEEE multiplication and division by one
 *     are exact, and integer ones cannot overflow).
 *   negate(negate(x)) -> x (a sign flip twice; integer negation wraps both ways).
 *   reshape(reshape(x)) -> reshape(x); transpose(transpose(x)) -> one transpose;
 *   broadcast(broadcast(x)) -> one broadcast (they only move elements).
 *   reshape, transpose, broadcast, slice, pad, reverse, convert, copy and concatenate that
 *   return their operand unchanged (same shape and layout) -> the operand.
 *
 * The constants 0, -0.0 and 1 may be a constant or a broadcast of one, checked element by
 * element on the bits (complex and pred values are left alone). A signaling NaN x stays
 * signaling where x * 1 would have quieted it: XLA makes the same choice (docs/passes.md).
 * Nothing is rewritten whose shape has dynamic dimensions.
 */
#include <math.h>
#include <string.h>

#include "passes/passes_internal.h"

enum { MAX_CHECKED = 1 << 16 }; /* constants bigger than this are not inspected */

typedef enum { WANT_ZERO, WANT_NEG_ZERO, WANT_POS_ZERO, WANT_ONE } want_value;

/* True when every element of the constant behind |in| (a constant, or a broadcast of one)
 * is |want|, bit for bit. */
static bool is_constant_value(const cxla_instr *in, want_value want) {
    if (in->opcode == CXLA_OP_BROADCAST) in = in->operands[0];
    if (in->opcode != CXLA_OP_CONSTANT || !in->literal || in->literal_elided) return false;
    const cxla_literal *lit = in->literal;
    const cxla_shape *s = cxla_literal_shape(lit);
    if (!passes_is_static_array(s)) return false;
    bool is_int = cxla_type_is_integer(s->type), is_float = cxla_type_is_float(s->type);
    if (!is_int && !is_float) return false;
    if (is_int && (want == WANT_NEG_ZERO || want == WANT_POS_ZERO)) return false;
    if (is_float && want == WANT_ZERO) return false;
    int64_t n = cxla_literal_element_count(lit);
    if (n > MAX_CHECKED) return false;
    int64_t index[CXLA_MAX_RANK] = {0};
    for (int64_t k = 0; k < n; k++) {
        if (is_int) {
            int64_t v;
            uint64_t u;
            cxla_status st = cxla_type_is_unsigned(s->type) ? cxla_literal_get_u64(lit, index, &u)
                                                            : cxla_literal_get_s64(lit, index, &v);
            if (cxla_type_is_unsigned(s->type)) v = u > 1 ? 2 : (int64_t)u;
            if (st) {
                cxla_status_free(st);
                return false;
            }
            if (v != (want == WANT_ONE ? 1 : 0)) return false;
        } else {
            double v;
            cxla_status st = cxla_literal_get_f64(lit, index, &v);
            if (st) {
                cxla_status_free(st);
                return false;
            }
            /* Widening to f64 is exact for every float type, signs of zeros included. */
            if (want == WANT_ONE && v != 1.0) return false;
            if (want == WANT_NEG_ZERO && !(v == 0.0 && signbit(v))) return false;
            if (want == WANT_POS_ZERO && !(v == 0.0 && !signbit(v))) return false;
        }
        cxla_index_next(s->rank, s->dims, index);
    }
    return true;
}

/* |x| can stand for |in|: the same shape, layout included, and static. */
static bool same_shape(const cxla_instr *in, const cxla_instr *x) {
    return passes_is_static_array(&in->shape) && passes_is_static_array(&x->shape) &&
           cxla_shape_equal(&in->shape, &x->shape);
}

static bool is_identity_perm(const int64_t *p, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (p[i] != i) return false;
    return true;
}

/* The operand |in| reduces to, or NULL; or rewrites |in| in place (*rewrote). */
static cxla_status simplify_one(cxla_instr *in, cxla_instr **out_same, bool *rewrote) {
    *out_same = NULL;
    if (!passes_is_static_array(&in->shape)) return NULL;
    for (int64_t i = 0; i < in->operand_count; i++)
        if (!passes_is_static_array(&in->operands[i]->shape)) return NULL;
    cxla_instr *a = in->operand_count > 0 ? in->operands[0] : NULL;
    cxla_instr *b = in->operand_count > 1 ? in->operands[1] : NULL;
    bool fl = cxla_type_is_float(in->shape.type);
    bool in_t = cxla_type_is_integer(in->shape.type);
    int64_t n;
    switch (in->opcode) {
    case CXLA_OP_ADD:
        if (!fl && !in_t) break;
        if (is_constant_value(b, fl ? WANT_NEG_ZERO : WANT_ZERO) && same_shape(in, a))
            *out_same = a;
        else if (is_constant_value(a, fl ? WANT_NEG_ZERO : WANT_ZERO) && same_shape(in, b))
            *out_same = b;
        break;
    case CXLA_OP_SUBTRACT:
        if ((fl || in_t) && is_constant_value(b, fl ? WANT_POS_ZERO : WANT_ZERO) &&
            same_shape(in, a))
            *out_same = a;
        break;
    case CXLA_OP_MULTIPLY:
        if (!fl && !in_t) break;
        if (is_constant_value(b, WANT_ONE) && same_shape(in, a))
            *out_same = a;
        else if (is_constant_value(a, WANT_ONE) && same_shape(in, b))
            *out_same = b;
        break;
    case CXLA_OP_DIVIDE:
        if ((fl || in_t) && is_constant_value(b, WANT_ONE) && same_shape(in, a)) *out_same = a;
        break;
    case CXLA_OP_NEGATE:
        if (a->opcode == CXLA_OP_NEGATE && same_shape(in, a->operands[0]))
            *out_same = a->operands[0];
        break;
    case CXLA_OP_RESHAPE:
        if (same_shape(in, a)) {
            *out_same = a;
        } else if (a->opcode == CXLA_OP_RESHAPE && passes_is_static_array(&a->operands[0]->shape)) {
            CXLA_RETURN_IF_ERROR(cxla_instr_replace_operand(in, 0, a->operands[0]));
            *rewrote = true;
        }
        break;
    case CXLA_OP_TRANSPOSE: {
        const int64_t *p = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &n);
        if (!p || n != in->shape.rank) break;
        if (is_identity_perm(p, n)) {
            if (same_shape(in, a)) *out_same = a;
            break;
        }
        if (a->opcode != CXLA_OP_TRANSPOSE) break;
        int64_t n1;
        const int64_t *p1 = cxla_instr_ints(a, CXLA_ATTR_DIMENSIONS, &n1);
        if (!p1 || n1 != n) break;
        /* out[i] = a.dim[p[i]] = x.dim[p1[p[i]]] */
        int64_t composed[CXLA_MAX_RANK];
        for (int64_t i = 0; i < n; i++) composed[i] = p1[p[i]];
        CXLA_RETURN_IF_ERROR(passes_set_ints(in, CXLA_ATTR_DIMENSIONS, composed, n));
        CXLA_RETURN_IF_ERROR(cxla_instr_replace_operand(in, 0, a->operands[0]));
        *rewrote = true;
        break;
    }
    case CXLA_OP_BROADCAST: {
        const int64_t *d = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &n);
        if (n != a->shape.rank) break;
        if (a->shape.rank == in->shape.rank && is_identity_perm(d, n)) {
            if (same_shape(in, a)) *out_same = a;
            break;
        }
        if (a->opcode != CXLA_OP_BROADCAST) break;
        int64_t n1;
        const int64_t *d1 = cxla_instr_ints(a, CXLA_ATTR_DIMENSIONS, &n1);
        if (n1 != a->operands[0]->shape.rank) break;
        /* x dim i -> a dim d1[i] -> out dim d[d1[i]] */
        int64_t composed[CXLA_MAX_RANK];
        for (int64_t i = 0; i < n1; i++) composed[i] = d[d1[i]];
        CXLA_RETURN_IF_ERROR(passes_set_ints(in, CXLA_ATTR_DIMENSIONS, composed, n1));
        CXLA_RETURN_IF_ERROR(cxla_instr_replace_operand(in, 0, a->operands[0]));
        *rewrote = true;
        break;
    }
    case CXLA_OP_SLICE: {
        const cxla_attr *sl = cxla_instr_attr(in, CXLA_ATTR_SLICE);
        if (!sl || sl->kind != CXLA_ATTR_KIND_SLICE || sl->v.slice.rank != a->shape.rank) break;
        bool whole = true;
        for (int64_t i = 0; i < sl->v.slice.rank; i++) {
            const cxla_slice_dim *d = &sl->v.slice.dims[i];
            whole = whole && d->start == 0 && d->limit == a->shape.dims[i] && d->stride == 1;
        }
        if (whole && same_shape(in, a)) *out_same = a;
        break;
    }
    case CXLA_OP_PAD: {
        const cxla_attr *pd = cxla_instr_attr(in, CXLA_ATTR_PADDING);
        if (!pd || pd->kind != CXLA_ATTR_KIND_PADDING) break;
        bool none = true;
        for (int64_t i = 0; i < pd->v.padding.rank; i++) {
            const cxla_pad_dim *d = &pd->v.padding.dims[i];
            none = none && d->low == 0 && d->high == 0 && d->interior == 0;
        }
        if (none && same_shape(in, a)) *out_same = a;
        break;
    }
    case CXLA_OP_REVERSE:
        cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &n);
        if (n == 0 && same_shape(in, a)) *out_same = a;
        break;
    case CXLA_OP_CONVERT:
    case CXLA_OP_COPY:
        if (same_shape(in, a)) *out_same = a;
        break;
    case CXLA_OP_CONCATENATE:
        if (in->operand_count == 1 && same_shape(in, a)) *out_same = a;
        break;
    default: break;
    }
    return NULL;
}

static cxla_status simplify_computation(cxla_computation *c, bool *changed) {
    for (int round = 0; round < 8; round++) {
        bool any = false;
        cxla_instr **order;
        CXLA_RETURN_IF_ERROR(cxla_computation_post_order(c, &order));
        int64_t n = c->instr_count;
        for (int64_t i = 0; i < n; i++) {
            cxla_instr *in = order[i];
            if (!in->parent || passes_has_side_effect(in) || passes_has_control_deps(in)) continue;
            cxla_instr *same = NULL;
            bool rewrote = false;
            CXLA_RETURN_IF_ERROR(simplify_one(in, &same, &rewrote));
            if (same) CXLA_RETURN_IF_ERROR(passes_replace(in, same));
            any = any || same || rewrote;
        }
        if (!any) break;
        *changed = true;
    }
    return NULL;
}

static cxla_status run_simplify(cxla_module *m, bool *changed) {
    *changed = false;
    for (int64_t i = 0; i < m->comp_count; i++)
        CXLA_RETURN_IF_ERROR(simplify_computation(m->comps[i], changed));
    return NULL;
}

const cxla_pass cxla_pass_simplify = {"simplify", run_simplify};
