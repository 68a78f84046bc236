/* Interpreter handlers: scan (see interp.h), the 2025 opcode for prefix computations.
 *
 * scan(inputs..., inits...), dimensions={d}, num_carries=c, is_reverse, to_apply=f: the
 * last c operands are the initial carries, the others the scanned inputs, which share
 * the size n of dimension d. Step t (0..n-1) visits index i = t, or n-1-t when reversed:
 * f receives each input's slice at i along d (that dimension removed) followed by the
 * carries, and returns (outputs..., carries...) as a tuple (or one value: the output
 * when c = 0, the carry when the result has no output). Each output's slice i along d is
 * the step's output; the carries feed the next step. The result is (output arrays...,
 * final carries...), or the one value when the written shape is not a tuple. This is
 * the loop that XLA's ScanExpander builds; is_associative only permits other evaluation
 * orders and is ignored here.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"

#define BAD(instr, ...) interp_error((instr), CXLA_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* Copies slice |i| along |d| between |whole| (dims |dims|) and |part|: out of |whole|
 * when |extract|, into it otherwise. */
static void copy_slice(char *whole, char *part, int64_t rank, const int64_t *dims, int64_t d,
                       int64_t i, size_t es, bool extract) {
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < d; k++) outer *= dims[k];
    for (int64_t k = d + 1; k < rank; k++) inner *= dims[k];
    size_t row = (size_t)inner * es;
    for (int64_t o = 0; o < outer; o++) {
        char *w = whole + ((size_t)(o * dims[d] + i)) * row, *p = part + (size_t)o * row;
        if (extract)
            memcpy(p, w, row);
        else
            memcpy(w, p, row);
    }
}

static bool is_array(const cxla_shape *s) {
    return s->type != CXLA_TUPLE && s->type != CXLA_TOKEN && s->type != CXLA_OPAQUE;
}

static cxla_status op_scan(interp_ctx *ctx, const cxla_instr *instr,
                           const cxla_literal *const *operands, cxla_literal **out) {
    cxla_computation *f = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    int64_t nd = 0, c = 0;
    const int64_t *dd = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd);
    cxla_instr_int(instr, CXLA_ATTR_NUM_CARRIES, &c);
    bool reverse = cxla_instr_bool(instr, CXLA_ATTR_IS_REVERSE);
    int64_t n_ops = instr->operand_count, ni = n_ops - c;
    if (!f || !dd || nd != 1 || c < 0 || ni < 1 || f->param_count != n_ops)
        return BAD(instr,
                   "needs to_apply with one parameter per operand, one dimension and "
                   "at least one input besides the %" PRId64 " carries",
                   c);
    int64_t d = dd[0];
    const cxla_shape *s0 = cxla_literal_shape(operands[0]);
    if (!is_array(s0) || d < 0 || d >= s0->rank)
        return BAD(instr, "dimension %" PRId64 " is not a dimension of input 0", d);
    int64_t len = s0->dims[d];
    for (int64_t k = 0; k < ni; k++) {
        const cxla_shape *s = cxla_literal_shape(operands[k]);
        const cxla_shape *p = &f->params[k]->shape;
        bool ok = is_array(s) && s->rank == p->rank + 1 && d < s->rank && s->dims[d] == len &&
                  s->type == p->type;
        for (int64_t j = 0, q = 0; ok && j < s->rank; j++)
            if (j != d) ok = s->dims[j] == p->dims[q++];
        if (!ok) return BAD(instr, "input %" PRId64 " does not match parameter %" PRId64, k, k);
    }
    bool tuple = instr->shape.type == CXLA_TUPLE;
    int64_t n_res = tuple ? instr->shape.tuple_count : 1, no = n_res - c;
    if (no < 0 || (!tuple && n_res != 1))
        return BAD(instr, "the result has fewer elements than the %" PRId64 " carries", c);
    cxla_literal **outs = calloc((size_t)(n_res > 0 ? n_res : 1), sizeof(*outs));
    cxla_literal **carry = calloc((size_t)(c > 0 ? c : 1), sizeof(*carry));
    const cxla_literal **args = calloc((size_t)n_ops, sizeof(*args));
    cxla_literal **slices = calloc((size_t)ni, sizeof(*slices));
    cxla_status s = outs && carry && args && slices
                        ? NULL
                        : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    for (int64_t k = 0; !s && k < no; k++) {
        const cxla_shape *os = tuple ? &instr->shape.elements[k] : &instr->shape;
        if (!is_array(os) || d >= os->rank || os->dims[d] != len)
            s = BAD(instr,
                    "output %" PRId64 " must be an array with dimension %" PRId64
                    " of size %" PRId64,
                    k, d, len);
        else
            s = interp_new_array(os, &outs[k]);
    }
    for (int64_t k = 0; !s && k < c; k++) s = cxla_literal_clone(operands[ni + k], &carry[k]);
    for (int64_t k = 0; !s && k < ni; k++) s = interp_new_array(&f->params[k]->shape, &slices[k]);
    for (int64_t t = 0; !s && t < len; t++) {
        int64_t i = reverse ? len - 1 - t : t;
        for (int64_t k = 0; k < ni; k++) {
            const cxla_shape *is = cxla_literal_shape(operands[k]);
            copy_slice((char *)cxla_literal_data_const(operands[k]), cxla_literal_data(slices[k]),
                       is->rank, is->dims, d, i, cxla_type_storage(is->type), true);
            args[k] = slices[k];
        }
        for (int64_t k = 0; k < c; k++) args[ni + k] = carry[k];
        cxla_literal *r = NULL;
        s = interp_eval_computation(ctx, f, args, n_ops, &r);
        if (s) {
            s = cxla_status_annotate(s, "in %s, step %" PRId64, instr->name, t);
            break;
        }
        const cxla_shape *rs = cxla_literal_shape(r);
        int64_t rn = rs->type == CXLA_TUPLE ? cxla_literal_tuple_count(r) : 1;
        if (rn != no + c) {
            s = BAD(instr,
                    "to_apply returns %" PRId64 " values, not %" PRId64 " outputs and %" PRId64
                    " carries",
                    rn, no, c);
        }
        for (int64_t k = 0; !s && k < no + c; k++) {
            cxla_literal *v = rs->type == CXLA_TUPLE ? cxla_literal_tuple_element(r, k) : r;
            if (k < no) {
                const cxla_shape *os = cxla_literal_shape(outs[k]), *vs = cxla_literal_shape(v);
                if (!is_array(vs) || vs->type != os->type ||
                    cxla_literal_element_count(v) * len != cxla_literal_element_count(outs[k])) {
                    s = BAD(instr, "step output %" PRId64 " does not fit its output array", k);
                    break;
                }
                copy_slice(cxla_literal_data(outs[k]), cxla_literal_data(v), os->rank, os->dims, d,
                           i, cxla_type_storage(os->type), false);
            } else {
                cxla_literal *next = rs->type == CXLA_TUPLE ? cxla_literal_tuple_take(r, k) : r;
                if (next == r) r = NULL;
                cxla_literal_free(carry[k - no]);
                carry[k - no] = next;
                if (!next) s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
            }
        }
        cxla_literal_free(r);
    }
    if (!s) {
        for (int64_t k = 0; k < c; k++) {
            outs[no + k] = carry[k];
            carry[k] = NULL;
        }
        if (tuple) {
            s = cxla_literal_create_tuple(outs, n_res, out);
            if (!s) memset(outs, 0, (size_t)n_res * sizeof(*outs));
        } else {
            *out = outs[0];
            outs[0] = NULL;
        }
    }
    for (int64_t k = 0; outs && k < n_res; k++) cxla_literal_free(outs[k]);
    for (int64_t k = 0; carry && k < c; k++) cxla_literal_free(carry[k]);
    for (int64_t k = 0; slices && k < ni; k++) cxla_literal_free(slices[k]);
    free(outs);
    free(carry);
    free(args);
    free(slices);
    return s;
}

const interp_op_fn interp_scan_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_SCAN] = op_scan,
};
