/* Dynamic-dimension rules that are functions of shapes (exec/dynamic.h). */
#include <inttypes.h>

#include "exec/dynamic.h"
#include "exec/exec.h"

static const uint8_t kinds[CXLA_OP_COUNT] = {
    [CXLA_OP_TUPLE] = EXEC_DYN_PASS,
    [CXLA_OP_GET_TUPLE_ELEMENT] = EXEC_DYN_PASS,
    [CXLA_OP_WHILE] = EXEC_DYN_PASS,
    [CXLA_OP_CONDITIONAL] = EXEC_DYN_PASS,
    [CXLA_OP_CALL] = EXEC_DYN_PASS,
    [CXLA_OP_FUSION] = EXEC_DYN_PASS,
    [CXLA_OP_OPTIMIZATION_BARRIER] = EXEC_DYN_PASS,
    [CXLA_OP_ADD_DEPENDENCY] = EXEC_DYN_PASS,
    [CXLA_OP_DOMAIN] = EXEC_DYN_PASS,
    [CXLA_OP_COPY_START] = EXEC_DYN_PASS,
    [CXLA_OP_COPY_DONE] = EXEC_DYN_PASS,
    [CXLA_OP_AFTER_ALL] = EXEC_DYN_PASS,
    [CXLA_OP_GET_DIMENSION_SIZE] = EXEC_DYN_PASS,
    [CXLA_OP_SET_DIMENSION_SIZE] = EXEC_DYN_PASS,
    [CXLA_OP_DYNAMIC_RESHAPE] = EXEC_DYN_PASS,
    [CXLA_OP_MAP] = EXEC_DYN_SAME,
    [CXLA_OP_SORT] = EXEC_DYN_SAME,
    [CXLA_OP_REDUCE] = EXEC_DYN_SAME,
    [CXLA_OP_REDUCE_WINDOW] = EXEC_DYN_SAME,
    [CXLA_OP_CONCATENATE] = EXEC_DYN_CONCAT,
    [CXLA_OP_DOT] = EXEC_DYN_DOT,
    [CXLA_OP_BITCAST_CONVERT] = EXEC_DYN_INFER,
    [CXLA_OP_TRANSPOSE] = EXEC_DYN_INFER,
    [CXLA_OP_PAD] = EXEC_DYN_INFER,
    [CXLA_OP_REVERSE] = EXEC_DYN_INFER,
    [CXLA_OP_DYNAMIC_UPDATE_SLICE] = EXEC_DYN_INFER,
    [CXLA_OP_SELECT_AND_SCATTER] = EXEC_DYN_INFER,
    [CXLA_OP_TOPK] = EXEC_DYN_INFER,
    [CXLA_OP_GATHER] = EXEC_DYN_INFER,
    [CXLA_OP_SCATTER] = EXEC_DYN_INFER,
    [CXLA_OP_CONVOLUTION] = EXEC_DYN_INFER,
    [CXLA_OP_FFT] = EXEC_DYN_INFER,
    [CXLA_OP_CHOLESKY] = EXEC_DYN_INFER,
    [CXLA_OP_TRIANGULAR_SOLVE] = EXEC_DYN_INFER,
    [CXLA_OP_BATCH_NORM_TRAINING] = EXEC_DYN_INFER,
    [CXLA_OP_BATCH_NORM_INFERENCE] = EXEC_DYN_INFER,
    [CXLA_OP_BATCH_NORM_GRAD] = EXEC_DYN_INFER,
    [CXLA_OP_RESHAPE] = EXEC_DYN_RESHAPE,
    [CXLA_OP_BROADCAST] = EXEC_DYN_BROADCAST,
    [CXLA_OP_SLICE] = EXEC_DYN_SLICE,
    [CXLA_OP_DYNAMIC_SLICE] = EXEC_DYN_DYNAMIC_SLICE,
};

exec_dyn_kind exec_dynamic_kind(cxla_opcode op) {
    if (cxla_opcode_get_info(op)->flags & CXLA_OPF_ELEMENTWISE) return EXEC_DYN_SAME;
    return (exec_dyn_kind)kinds[op];
}

bool exec_shape_has_unbounded(const cxla_shape *s) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            if (exec_shape_has_unbounded(&s->elements[i])) return true;
        return false;
    }
    if (!s->dynamic) return false;
    for (int64_t i = 0; i < s->rank; i++)
        if (s->dynamic[i] && s->dims[i] == CXLA_DIM_UNBOUNDED) return true;
    return false;
}

bool exec_shape_dim_dynamic(const cxla_shape *s, int64_t d) {
    return s->dynamic && d >= 0 && d < s->rank && s->dynamic[d];
}

cxla_status exec_dynamic_reshape_sizes(const cxla_instr *in, const cxla_shape *xs, const int64_t *r,
                                       int64_t *o) {
    const cxla_shape *ys = &in->shape;
    int64_t n = xs->rank, m = ys->rank, real = 1, unknown = 0, u = -1;
    bool zero = false, unbounded = false;
    for (int64_t i = 0; i < n; i++) {
        real *= r[i];
        zero = zero || xs->dims[i] == 0;
    }
    for (int64_t j = 0; j < m; j++) {
        o[j] = ys->dims[j];
        zero = zero || ys->dims[j] == 0;
        if (exec_shape_dim_dynamic(ys, j)) {
            unknown++;
            u = j;
            unbounded = unbounded || ys->dims[j] == CXLA_DIM_UNBOUNDED;
        }
    }
    if (unknown <= 1) {
        int64_t p = 1;
        for (int64_t j = 0; j < m; j++)
            if (j != u) p *= o[j];
        if (unknown == 1 && p == 0) {
            o[u] = ys->dims[u] < 0 ? 0 : ys->dims[u]; /* no elements whatever the size */
            return NULL;
        }
        if (unknown == 1 && real % p == 0) {
            o[u] = real / p;
            return NULL;
        }
        if (unknown == 0 && real == p) return NULL;
        if (unknown == 0)
            return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                              "the operand holds %" PRId64
                              " elements at its dynamic sizes but the static result holds "
                              "%" PRId64,
                              real, p);
        return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                          "the operand holds %" PRId64
                          " elements at its dynamic sizes, not a multiple of the %" PRId64
                          " of the result's static dimensions",
                          real, p);
    }
    if (unbounded)
        return exec_error(in, CXLA_STATUS_UNIMPLEMENTED,
                          "cannot tell how %" PRId64
                          " elements split between several dynamic result dimensions, one "
                          "of them unbounded; use dynamic-reshape",
                          real);
    if (zero) { /* an empty array at any size: keep the bounds */
        for (int64_t j = 0; j < m; j++) o[j] = ys->dims[j];
        return NULL;
    }
    int64_t i = 0, j = 0;
    while (i < n || j < m) {
        int64_t gi = i, gj = j, pin = 1, pout = 1;
        if (i < n) pin = xs->dims[i++];
        if (j < m) pout = ys->dims[j++];
        while (pin != pout) {
            if (pin < pout && i < n)
                pin *= xs->dims[i++];
            else if (pout < pin && j < m)
                pout *= ys->dims[j++];
            else
                return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                                  "the bounds of the operand and the result hold different "
                                  "element counts");
        }
        int64_t greal = 1, gu = -1, gcount = 0, p = 1;
        for (int64_t a = gi; a < i; a++) greal *= r[a];
        for (int64_t b = gj; b < j; b++) {
            if (exec_shape_dim_dynamic(ys, b)) {
                gu = b;
                gcount++;
            } else {
                p *= ys->dims[b];
            }
        }
        if (gcount > 1)
            return exec_error(in, CXLA_STATUS_UNIMPLEMENTED,
                              "cannot tell how %" PRId64
                              " elements split between result dimensions %" PRId64 "..%" PRId64
                              ", several of them dynamic; use dynamic-reshape",
                              greal, gj, j - 1);
        if (gcount == 1 && greal % p == 0) {
            o[gu] = greal / p;
        } else if (gcount == 1 || greal != p) {
            return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                              "operand dimensions %" PRId64 "..%" PRId64 " hold %" PRId64
                              " elements at their dynamic sizes, which do not fill result "
                              "dimensions %" PRId64 "..%" PRId64,
                              gi, i - 1, greal, gj, j - 1);
        }
    }
    return NULL;
}

cxla_status exec_dynamic_broadcast_sizes(const cxla_instr *in, int64_t operand_rank,
                                         const int64_t *r, int64_t *o) {
    const cxla_shape *ys = &in->shape;
    int64_t nd = 0;
    const int64_t *bd = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    bool mapped[CXLA_MAX_RANK] = {false};
    for (int64_t j = 0; j < ys->rank; j++) o[j] = ys->dims[j];
    for (int64_t i = 0; i < nd && i < operand_rank; i++) {
        if (bd[i] < 0 || bd[i] >= ys->rank)
            return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                              "dimensions= does not map the operand onto the result");
        o[bd[i]] = r[i];
        mapped[bd[i]] = true;
    }
    for (int64_t j = 0; j < ys->rank; j++)
        if (!mapped[j] && o[j] < 0)
            return exec_error(in, CXLA_STATUS_UNIMPLEMENTED,
                              "no operand dimension gives unbounded result dimension "
                              "%" PRId64 " a size",
                              j);
    return NULL;
}
