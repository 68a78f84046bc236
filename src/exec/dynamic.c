/* Dynamic-dimension rules that are functions of shapes (exec/dynamic.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exec/dynamic.h"
#include "exec/exec.h"

static const uint8_t kinds[CXLA_OP_COUNT] = {
    [CXLA_OP_TUPLE] = EXEC_DYN_PASS,
    [CXLA_OP_GET_TUPLE_ELEMENT] = EXEC_DYN_PASS,
    [CXLA_OP_WHILE] = EXEC_DYN_PASS,
    [CXLA_OP_CONDITIONAL] = EXEC_DYN_PASS,
    [CXLA_OP_CALL] = EXEC_DYN_PASS,
    [CXLA_OP_ASYNC_START] = EXEC_DYN_PASS,
    [CXLA_OP_ASYNC_UPDATE] = EXEC_DYN_PASS,
    [CXLA_OP_ASYNC_DONE] = EXEC_DYN_PASS,
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
            return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT, EXEC_DYN_MSG_RESHAPE_STATIC, real,
                              p);
        return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT, EXEC_DYN_MSG_RESHAPE_MULTIPLE, real, p);
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

/* ---- sizes in, sizes out: what a kernel run at the bounds needs ------------------------ */

/* Whether every dimension of |s| (an array) has a bound. */
static bool bounded_array(const cxla_shape *s) {
    if (!cxla_type_is_array(s->type)) return false;
    for (int64_t d = 0; d < s->rank; d++)
        if (s->dims[d] < 0) return false;
    return true;
}

static bool static_array(const cxla_shape *s) {
    return cxla_type_is_array(s->type) && cxla_shape_is_static(s);
}

static bool static_instr_shapes(const cxla_instr *in) {
    if (!static_array(&in->shape)) return false;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (!static_array(&in->operands[k]->shape)) return false;
    return true;
}

/* One instruction (not a fusion) whose kernel at the bounds computes its value below the
 * sizes: element i of the result reads only elements of the operands at indices that lie
 * below their sizes whenever i lies below the result's sizes. */
/* A sort of several operands (a tuple result) along a dimension static in all of them:
 * row by row, as one operand's (positionwise_one). */
static bool sort_tuple_positionwise(const cxla_instr *in) {
    int64_t nd = 0;
    const int64_t *dims = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    if (in->opcode != CXLA_OP_SORT || in->shape.type != CXLA_TUPLE || nd != 1 ||
        in->shape.tuple_count != in->operand_count || in->operand_count < 1)
        return false;
    for (int64_t k = 0; k < in->operand_count; k++) {
        const cxla_shape *s = &in->operands[k]->shape, *e = &in->shape.elements[k];
        if (!bounded_array(s) || !bounded_array(e) || e->rank != s->rank || dims[0] < 0 ||
            dims[0] >= s->rank || exec_shape_dim_dynamic(s, dims[0]))
            return false;
    }
    return true;
}

static bool positionwise_one(const cxla_instr *in) {
    if (sort_tuple_positionwise(in)) return true;
    if (!bounded_array(&in->shape)) return false;
    bool all_static = static_array(&in->shape);
    for (int64_t k = 0; k < in->operand_count; k++) {
        if (!bounded_array(&in->operands[k]->shape)) return false;
        all_static = all_static && static_array(&in->operands[k]->shape);
    }
    if (all_static) return true; /* no padding in or out */
    if (cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_ELEMENTWISE)
        return in->opcode != CXLA_OP_RNG && in->opcode != CXLA_OP_STOCHASTIC_CONVERT;
    switch (in->opcode) {
    case CXLA_OP_BROADCAST: return in->operand_count == 1;
    case CXLA_OP_TRANSPOSE: return in->operand_count == 1;
    case CXLA_OP_SLICE: return in->operand_count == 1; /* start + i * stride < the size */
    case CXLA_OP_IOTA: return in->operand_count == 0;  /* no operands: at its bounds */
    case CXLA_OP_MAP: /* elementwise: operands of the result's shape, lined up */
        for (int64_t k = 0; k < in->operand_count; k++)
            if (in->operands[k]->shape.rank != in->shape.rank) return false;
        return in->operand_count >= 1;
    case CXLA_OP_GATHER: {
        /* A static operand: each result element reads the index vector at its own batch
         * position (within the sizes for a result element within them) and clamps the
         * start within the operand, which has no padding. The index vector must be whole. */
        if (in->operand_count != 2 || !static_array(&in->operands[0]->shape)) return false;
        int64_t iv = 0;
        const cxla_shape *is = &in->operands[1]->shape;
        if (!cxla_instr_int(in, CXLA_ATTR_INDEX_VECTOR_DIM, &iv) || iv < 0 || iv > is->rank)
            return false;
        return iv == is->rank || !exec_shape_dim_dynamic(is, iv);
    }
    case CXLA_OP_SORT: {
        /* One operand sorted along a static dimension: each row sorts on its own, the
         * padding rows among themselves. */
        int64_t nd = 0;
        const int64_t *dims = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
        if (in->operand_count != 1) return false;
        const cxla_shape *s = &in->operands[0]->shape;
        return nd == 1 && dims[0] >= 0 && dims[0] < s->rank && !exec_shape_dim_dynamic(s, dims[0]);
    }
    case CXLA_OP_CONCATENATE: {
        /* Along a static dimension: each operand's place in it does not move. */
        int64_t nd = 0;
        const int64_t *dims = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
        if (nd != 1 || dims[0] < 0 || dims[0] >= in->shape.rank ||
            exec_shape_dim_dynamic(&in->shape, dims[0]))
            return false;
        for (int64_t k = 0; k < in->operand_count; k++)
            if (exec_shape_dim_dynamic(&in->operands[k]->shape, dims[0])) return false;
        return true;
    }
    case CXLA_OP_RESHAPE: {
        /* Only the outermost dimensions dynamic: the value is a prefix of the buffer in
         * row-major order on both sides, which the reshape moves as it is. */
        const cxla_shape *xs = &in->operands[0]->shape;
        for (int64_t d = 1; d < xs->rank; d++)
            if (exec_shape_dim_dynamic(xs, d)) return false;
        for (int64_t d = 1; d < in->shape.rank; d++)
            if (exec_shape_dim_dynamic(&in->shape, d)) return false;
        return in->operand_count == 1;
    }
    default: return false;
    }
}

bool exec_dynamic_positionwise(const cxla_instr *in) {
    if (in->opcode != CXLA_OP_FUSION) return positionwise_one(in);
    const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_CALLS);
    if (!c || !c->root || !bounded_array(&in->shape)) return false;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (!bounded_array(&in->operands[k]->shape)) return false;
    for (int64_t i = 0; i < c->instr_count; i++) {
        const cxla_instr *f = c->instrs[i];
        if (f->opcode == CXLA_OP_PARAMETER) {
            if (f->parameter_number < 0 || f->parameter_number >= in->operand_count) return false;
            continue;
        }
        if (f->opcode == CXLA_OP_CONSTANT) {
            if (!static_array(&f->shape)) return false;
            continue;
        }
        if (!positionwise_one(f)) return false;
    }
    return true;
}

/* Where dimension |d| of |in| takes its run-time size from, as far as elementwise
 * operations, broadcast and transpose pass it along unchanged: two dimensions with the
 * same source have the same size whenever the instructions between them ran (each of
 * them checks its own operands). |budget| bounds the walk (then the instruction itself). */
static void size_source(const cxla_instr *in, int64_t d, const cxla_instr **src, int64_t *sd,
                        int *budget) {
    *src = in;
    *sd = d;
    if (--*budget < 0 || !exec_shape_dim_dynamic(&in->shape, d)) return;
    if (cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_ELEMENTWISE) {
        for (int64_t k = 0; k < in->operand_count; k++) {
            const cxla_instr *o = in->operands[k];
            if (o->shape.rank == in->shape.rank && exec_shape_dim_dynamic(&o->shape, d)) {
                size_source(o, d, src, sd, budget);
                return;
            }
        }
        return;
    }
    int64_t nd = 0;
    const int64_t *dims = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    if (in->opcode == CXLA_OP_BROADCAST && in->operand_count == 1) {
        for (int64_t i = 0; i < nd; i++)
            if (dims[i] == d && exec_shape_dim_dynamic(&in->operands[0]->shape, i))
                size_source(in->operands[0], i, src, sd, budget);
    } else if (in->opcode == CXLA_OP_TRANSPOSE && in->operand_count == 1 && d < nd &&
               exec_shape_dim_dynamic(&in->operands[0]->shape, dims[d])) {
        size_source(in->operands[0], dims[d], src, sd, budget);
    }
}

bool exec_dynamic_cannot_fail(const cxla_instr *in) {
    if (!positionwise_one(in) || in->opcode == CXLA_OP_MAP) return false;
    /* A dynamic gather's batch sizes may miss a static result dimension: left unfused. */
    if (in->opcode == CXLA_OP_GATHER && !static_instr_shapes(in)) return false;
    if (in->shape.type == CXLA_TUPLE) return false; /* a sort of several operands */
    const cxla_shape *ys = &in->shape;
    if (in->opcode == CXLA_OP_BROADCAST || in->opcode == CXLA_OP_TRANSPOSE) {
        int64_t nd = 0;
        const int64_t *dims = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
        const cxla_shape *xs = &in->operands[0]->shape;
        for (int64_t i = 0; i < nd; i++) {
            /* broadcast: operand i -> result dims[i]; transpose: result i <- operand dims[i]. */
            int64_t x = in->opcode == CXLA_OP_BROADCAST ? i : dims[i];
            int64_t y = in->opcode == CXLA_OP_BROADCAST ? dims[i] : i;
            if (x < 0 || x >= xs->rank || y < 0 || y >= ys->rank) return false;
            if (exec_shape_dim_dynamic(xs, x) &&
                (!exec_shape_dim_dynamic(ys, y) || ys->dims[y] < xs->dims[x]))
                return false;
        }
        return true;
    }
    if (in->opcode == CXLA_OP_SLICE) {
        const cxla_shape *xs = &in->operands[0]->shape;
        for (int64_t d = 0; d < xs->rank && d < ys->rank; d++)
            if (exec_shape_dim_dynamic(xs, d) && !exec_shape_dim_dynamic(ys, d)) return false;
        return xs->rank == ys->rank;
    }
    if (in->opcode == CXLA_OP_RESHAPE) return static_array(&in->operands[0]->shape);
    if (in->opcode == CXLA_OP_CONCATENATE) return static_instr_shapes(in);
    if (!(cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_ELEMENTWISE)) return true;
    for (int64_t d = 0; d < ys->rank; d++) {
        const cxla_instr *from = NULL;
        int64_t from_dim = -1;
        for (int64_t k = 0; k < in->operand_count; k++) {
            const cxla_instr *o = in->operands[k], *src = NULL;
            if (o->shape.rank != ys->rank || !exec_shape_dim_dynamic(&o->shape, d)) continue;
            if (!exec_shape_dim_dynamic(ys, d) || ys->dims[d] < o->shape.dims[d])
                return false; /* a result that may not hold the size */
            int64_t sd = -1;
            int budget = 64;
            size_source(o, d, &src, &sd, &budget);
            if (from && (from != src || from_dim != sd)) return false; /* may differ */
            from = src;
            from_dim = sd;
        }
    }
    return true;
}

/* interp_dynamic.c's align for the slots (operand ks[i], dimension ds[i]) of the regions
 * |r|: the dynamic sizes must agree, the static ones are cut to them. */
static cxla_status align(const cxla_instr *in, int64_t (*r)[CXLA_MAX_RANK], const int64_t *ks,
                         const int64_t *ds, int64_t count) {
    int64_t size = -1, from = -1, from_dim = -1;
    for (int64_t i = 0; i < count; i++) {
        int64_t k = ks[i], d = ds[i];
        if (!exec_shape_dim_dynamic(&in->operands[k]->shape, d)) continue;
        int64_t v = r[k][d];
        if (size < 0) {
            size = v;
            from = k;
            from_dim = d;
        } else if (v != size) {
            return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT, EXEC_DYN_MSG_DISAGREE, k, v, d,
                              from, size, from_dim);
        }
    }
    if (size < 0) return NULL;
    for (int64_t i = 0; i < count; i++)
        if (r[ks[i]][ds[i]] > size) r[ks[i]][ds[i]] = size;
    return NULL;
}

/* The result's sizes |o| against its declared shape, as the interpreter puts a result back
 * into it. */
static cxla_status check_shape(const cxla_instr *in, const cxla_shape *decl, const int64_t *o) {
    for (int64_t d = 0; d < decl->rank; d++) {
        int64_t got = o[d], want = decl->dims[d];
        if (!exec_shape_dim_dynamic(decl, d) && got != want)
            return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT, EXEC_DYN_MSG_STATIC_RESULT, d, want,
                              got);
        if (exec_shape_dim_dynamic(decl, d) && want != CXLA_DIM_UNBOUNDED && got > want)
            return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT, EXEC_DYN_MSG_BEYOND_BOUND, d, got,
                              want);
    }
    return NULL;
}

static cxla_status check_result(const cxla_instr *in, const int64_t *o) {
    return check_shape(in, &in->shape, o);
}

/* A sort of several operands: they line up dimension by dimension (the interpreter's
 * EXEC_DYN_SAME), and every result element takes the sizes that come out. */
static cxla_status sizes_sort_tuple(const cxla_instr *in, const int64_t *const *ops,
                                    int64_t *const *out) {
    int64_t n = in->operand_count, rank = in->operands[0]->shape.rank;
    /* Sized from the instruction: one row of sizes and one slot per operand. */
    int64_t(*r)[CXLA_MAX_RANK] = malloc((size_t)n * sizeof(*r));
    int64_t *ks = malloc((size_t)n * 2 * sizeof(int64_t)), *ds = ks ? ks + n : NULL;
    cxla_status s = r && ks ? NULL : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    bool padded = false;
    for (int64_t k = 0; !s && k < n; k++)
        for (int64_t d = 0; d < rank; d++) {
            r[k][d] = ops[k][d];
            padded = padded || r[k][d] < in->operands[k]->shape.dims[d];
        }
    for (int64_t d = 0; !s && d < rank && padded; d++) {
        for (int64_t k = 0; k < n; k++) {
            ks[k] = k;
            ds[k] = d;
        }
        s = align(in, r, ks, ds, n);
    }
    for (int64_t e = 0; !s && e < n; e++) {
        const cxla_shape *ys = &in->shape.elements[e];
        for (int64_t d = 0; d < rank; d++) out[e][d] = padded ? r[0][d] : ys->dims[d];
        if (padded) s = check_shape(in, ys, out[e]);
    }
    free(r);
    free(ks);
    return s;
}

void exec_dynamic_rule_free(exec_dyn_rule *rule) {
    free(rule->groups);
    free(rule->slots);
    rule->groups = NULL;
    rule->slots = NULL;
    rule->group_count = 0;
}

/* A new group of |rule|, with room for |rule|'s slots per group (one per operand, at least
 * the two of a dot's pair). */
static exec_dyn_group *new_group(exec_dyn_rule *rule, int64_t per_group) {
    int64_t i = rule->group_count++;
    exec_dyn_group *g = &rule->groups[i];
    g->count = 0;
    g->k = rule->slots + 2 * i * per_group;
    g->d = g->k + per_group;
    return g;
}

static void copy_out(exec_dyn_rule *rule, int64_t j, int64_t k, int64_t d) {
    rule->out[j] = (exec_dyn_out){.kind = EXEC_DYN_OUT_COPY, .k = k, .d = d};
}

static void const_out(exec_dyn_rule *rule, int64_t j, int64_t v) {
    rule->out[j] = (exec_dyn_out){.kind = EXEC_DYN_OUT_CONST, .v = v};
}

cxla_status exec_dynamic_rule(const cxla_instr *in, exec_dyn_rule *out) {
    const cxla_shape *ys = &in->shape;
    int64_t n = in->operand_count, rank = 0;
    memset(out, 0, sizeof(*out));
    for (int64_t k = 0; k < n; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        if (!cxla_type_is_array(s->type))
            return exec_error(in, CXLA_STATUS_INTERNAL, "operand %" PRId64 " is not an array", k);
        if (s->rank > rank) rank = s->rank;
    }
    if (!cxla_type_is_array(ys->type) || ys->rank > CXLA_MAX_RANK)
        return exec_error(in, CXLA_STATUS_INTERNAL, "no size rule for a result of this shape");
    out->rank = ys->rank;
    /* Groups: one per dimension (operands of the largest rank) or per pair of a dot's
     * dimensions; at most CXLA_MAX_RANK of either. */
    int64_t per_group = n > 2 ? n : 2;
    out->groups = calloc(CXLA_MAX_RANK, sizeof(*out->groups));
    out->slots = calloc((size_t)(2 * CXLA_MAX_RANK * per_group), sizeof(int64_t));
    if (!out->groups || !out->slots) {
        exec_dynamic_rule_free(out);
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    }
    exec_dyn_kind kind = exec_dynamic_kind(in->opcode);
    if (kind == EXEC_DYN_SAME || kind == EXEC_DYN_CONCAT) {
        int64_t skip = -1, nd = 0; /* concatenate: the operands differ along their dimension */
        const int64_t *cd = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
        if (kind == EXEC_DYN_CONCAT && nd == 1) skip = cd[0];
        for (int64_t d = 0; d < rank; d++) {
            if (d == skip) continue;
            exec_dyn_group *g = new_group(out, per_group);
            for (int64_t k = 0; k < n; k++) {
                if (in->operands[k]->shape.rank != rank) continue;
                g->k[g->count] = k;
                g->d[g->count++] = d;
            }
        }
    }
    if (in->opcode == CXLA_OP_DOT && n == 2) {
        /* Batch and contracting dimensions line up; the result is the batch dimensions,
         * then the left's other dimensions, then the right's, in order. */
        static const cxla_attr_id pairs[2][2] = {
            {CXLA_ATTR_LHS_BATCH_DIMS, CXLA_ATTR_RHS_BATCH_DIMS},
            {CXLA_ATTR_LHS_CONTRACTING_DIMS, CXLA_ATTR_RHS_CONTRACTING_DIMS},
        };
        int64_t nb = 0, nr = 0, nc = 0, ncr = 0, j = 0;
        const int64_t *lb = cxla_instr_ints(in, pairs[0][0], &nb);
        const int64_t *rb = cxla_instr_ints(in, pairs[0][1], &nr);
        const int64_t *lc = cxla_instr_ints(in, pairs[1][0], &nc);
        const int64_t *rc = cxla_instr_ints(in, pairs[1][1], &ncr);
        int64_t lr = in->operands[0]->shape.rank, rr = in->operands[1]->shape.rank;
        for (int p = 0; p < 2; p++) {
            const int64_t *l = p ? lc : lb, *r2 = p ? rc : rb;
            int64_t m = p ? (nc < ncr ? nc : ncr) : (nb < nr ? nb : nr);
            for (int64_t i = 0; i < m; i++) {
                if (l[i] < 0 || l[i] >= lr || r2[i] < 0 || r2[i] >= rr ||
                    out->group_count == CXLA_MAX_RANK)
                    return exec_error(in, CXLA_STATUS_INTERNAL, "bad dot dimensions");
                exec_dyn_group *g = new_group(out, per_group);
                g->count = 2;
                g->k[0] = 0;
                g->d[0] = l[i];
                g->k[1] = 1;
                g->d[1] = r2[i];
            }
        }
        for (int64_t i = 0; i < nb && j < ys->rank; i++) copy_out(out, j++, 0, lb[i]);
        for (int side = 0; side < 2; side++) {
            const int64_t *b = side ? rb : lb, *c = side ? rc : lc;
            int64_t bn = side ? nr : nb, cn = side ? ncr : nc, rank2 = side ? rr : lr;
            for (int64_t d = 0; d < rank2; d++) {
                bool skip = false;
                for (int64_t i = 0; i < bn; i++) skip = skip || b[i] == d;
                for (int64_t i = 0; i < cn; i++) skip = skip || c[i] == d;
                if (!skip && j < ys->rank) copy_out(out, j++, side, d);
            }
        }
        if (j != ys->rank) return exec_error(in, CXLA_STATUS_INTERNAL, "bad dot result rank");
    } else if (in->opcode == CXLA_OP_CONCATENATE) {
        /* The operands lined up in the other dimensions above; the concatenated one adds
         * their sizes. */
        int64_t nd = 0;
        const int64_t *cd = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
        if (nd != 1 || n < 1) return exec_error(in, CXLA_STATUS_INTERNAL, "bad concatenate");
        for (int64_t d = 0; d < ys->rank; d++) {
            copy_out(out, d, 0, d);
            if (d == cd[0]) out->out[d] = (exec_dyn_out){.kind = EXEC_DYN_OUT_SUM, .d = d};
        }
    } else if (in->opcode == CXLA_OP_RESHAPE && n == 1) {
        out->reshape = true;
    } else if (in->opcode == CXLA_OP_SLICE) {
        /* The range clamped to the size (interp_dynamic.c's rule). */
        const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_SLICE);
        int64_t xr = in->operands[0]->shape.rank;
        if (!a || a->kind != CXLA_ATTR_KIND_SLICE || a->v.slice.rank != xr || xr != ys->rank)
            return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                              "needs a slice= range for each dimension");
        for (int64_t i = 0; i < xr; i++) {
            cxla_slice_dim sd = a->v.slice.dims[i];
            if (sd.stride < 1 || sd.start < 0)
                return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT, "malformed slice= range");
            out->out[i] = (exec_dyn_out){.kind = EXEC_DYN_OUT_SLICE,
                                         .k = 0,
                                         .d = i,
                                         .v = ys->dims[i],
                                         .start = sd.start,
                                         .limit = sd.limit,
                                         .stride = sd.stride,
                                         .check_static = !exec_shape_dim_dynamic(ys, i)};
        }
    } else if (in->opcode == CXLA_OP_BROADCAST) {
        /* exec_dynamic_broadcast_sizes as data: mapped dimensions take the operand's. */
        int64_t nd = 0, xr = n ? in->operands[0]->shape.rank : 0;
        const int64_t *bd = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
        bool mapped[CXLA_MAX_RANK] = {false};
        for (int64_t j = 0; j < ys->rank; j++) const_out(out, j, ys->dims[j]);
        for (int64_t i = 0; i < nd && i < xr; i++) {
            if (bd[i] < 0 || bd[i] >= ys->rank)
                return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                                  "dimensions= does not map the operand onto the result");
            copy_out(out, bd[i], 0, i);
            mapped[bd[i]] = true;
        }
        for (int64_t j = 0; j < ys->rank; j++)
            if (!mapped[j] && ys->dims[j] < 0)
                return exec_error(in, CXLA_STATUS_UNIMPLEMENTED,
                                  "no operand dimension gives unbounded result dimension "
                                  "%" PRId64 " a size",
                                  j);
    } else if (in->opcode == CXLA_OP_GATHER && n == 2) {
        /* The result's batch dimensions are the indices' (but the index vector's), in
         * order; its offset dimensions are the static slice sizes. */
        int64_t no = 0, iv = 0, k = 0;
        const int64_t *od = cxla_instr_ints(in, CXLA_ATTR_OFFSET_DIMS, &no);
        if (!cxla_instr_int(in, CXLA_ATTR_INDEX_VECTOR_DIM, &iv))
            return exec_error(in, CXLA_STATUS_INTERNAL, "no index_vector_dim");
        for (int64_t j = 0; j < ys->rank; j++) {
            bool offset = false;
            for (int64_t i = 0; i < no; i++) offset = offset || od[i] == j;
            if (offset) {
                const_out(out, j, ys->dims[j]);
                continue;
            }
            if (k == iv) k++;
            if (k >= in->operands[1]->shape.rank)
                return exec_error(in, CXLA_STATUS_INTERNAL, "bad gather dimensions");
            copy_out(out, j, 1, k++);
        }
    } else if ((in->opcode == CXLA_OP_REVERSE || in->opcode == CXLA_OP_SORT) && n == 1) {
        if (in->operands[0]->shape.rank != ys->rank)
            return exec_error(in, CXLA_STATUS_INTERNAL, "a result of another rank");
        for (int64_t d = 0; d < ys->rank; d++) copy_out(out, d, 0, d);
    } else if (in->opcode == CXLA_OP_TRANSPOSE && n == 1) {
        int64_t np = 0;
        const int64_t *perm = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &np);
        if (np != ys->rank) return exec_error(in, CXLA_STATUS_INTERNAL, "bad permutation");
        for (int64_t j = 0; j < np; j++) {
            if (perm[j] < 0 || perm[j] >= in->operands[0]->shape.rank)
                return exec_error(in, CXLA_STATUS_INTERNAL, "bad permutation");
            copy_out(out, j, 0, perm[j]);
        }
    } else if (in->opcode == CXLA_OP_REDUCE && n == 2) {
        int64_t nd = 0, j = 0;
        const int64_t *rd = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
        for (int64_t d = 0; d < in->operands[0]->shape.rank; d++) {
            bool reduced = false;
            for (int64_t i = 0; i < nd; i++) reduced = reduced || rd[i] == d;
            if (!reduced && j < ys->rank) copy_out(out, j++, 0, d);
        }
        if (j != ys->rank) return exec_error(in, CXLA_STATUS_INTERNAL, "bad reduce dimensions");
    } else if ((cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_ELEMENTWISE) ||
               in->opcode == CXLA_OP_MAP) {
        int64_t k0 = 0;
        while (k0 < n && in->operands[k0]->shape.rank != ys->rank) k0++;
        if (k0 == n) return exec_error(in, CXLA_STATUS_INTERNAL, "no operand of the result's rank");
        for (int64_t d = 0; d < ys->rank; d++) copy_out(out, d, k0, d);
    } else {
        return exec_error(in, CXLA_STATUS_INTERNAL, "no size rule for a kernel at the bounds");
    }
    return NULL;
}

/* The rule of |in| applied to operand sizes |ops|: the result's sizes in |o|. */
static cxla_status sizes_one(const cxla_instr *in, const int64_t *const *ops, int64_t *o) {
    const cxla_shape *ys = &in->shape;
    int64_t n = in->operand_count;
    bool padded = false;
    for (int64_t k = 0; k < n; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        if (!cxla_type_is_array(s->type))
            return exec_error(in, CXLA_STATUS_INTERNAL, "operand %" PRId64 " is not an array", k);
        for (int64_t d = 0; d < s->rank; d++) padded = padded || ops[k][d] < s->dims[d];
    }
    /* Nothing below its bounds: the driver's static path, the result at its bounds. */
    if (!padded) {
        for (int64_t d = 0; d < ys->rank; d++) o[d] = ys->dims[d];
        return NULL;
    }
    /* The operands' sizes, one row per operand (sized from the instruction). */
    int64_t(*r)[CXLA_MAX_RANK] = malloc((size_t)(n ? n : 1) * sizeof(*r));
    if (!r) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    for (int64_t k = 0; k < n; k++)
        for (int64_t d = 0; d < in->operands[k]->shape.rank; d++) r[k][d] = ops[k][d];
    exec_dyn_rule rule;
    cxla_status s = exec_dynamic_rule(in, &rule);
    for (int64_t g = 0; !s && g < rule.group_count; g++)
        s = align(in, r, rule.groups[g].k, rule.groups[g].d, rule.groups[g].count);
    if (!s && rule.reshape) s = exec_dynamic_reshape_sizes(in, &in->operands[0]->shape, r[0], o);
    for (int64_t j = 0; !s && !rule.reshape && j < rule.rank; j++) {
        const exec_dyn_out *x = &rule.out[j];
        switch (x->kind) {
        case EXEC_DYN_OUT_COPY: o[j] = r[x->k][x->d]; break;
        case EXEC_DYN_OUT_CONST: o[j] = x->v; break;
        case EXEC_DYN_OUT_SUM:
            o[j] = 0;
            for (int64_t k = 0; k < n; k++) o[j] += r[k][x->d];
            break;
        case EXEC_DYN_OUT_SLICE: {
            int64_t size = r[x->k][x->d];
            int64_t limit = x->limit < size ? x->limit : size;
            int64_t start = x->start < limit ? x->start : limit;
            o[j] = (limit - start + x->stride - 1) / x->stride;
            if (x->check_static && o[j] != x->v)
                s = exec_error(in, CXLA_STATUS_OUT_OF_RANGE, EXEC_DYN_MSG_SLICE_PAST, x->start,
                               x->limit, x->stride, x->d, size);
            break;
        }
        }
    }
    exec_dynamic_rule_free(&rule);
    free(r);
    return s ? s : check_result(in, o);
}

/* The sizes of fused instruction |f| (memo: by position in |c|, done[] marks them). */
static cxla_status sizes_fused(const cxla_computation *c, const cxla_instr *f,
                               const int64_t *const *ops, int64_t (*memo)[CXLA_MAX_RANK],
                               bool *done, int depth) {
    int64_t at = 0;
    while (at < c->instr_count && c->instrs[at] != f) at++;
    if (at == c->instr_count || depth > 512)
        return exec_error(f, CXLA_STATUS_INTERNAL, "not in its fused computation");
    if (done[at]) return NULL;
    if (f->opcode == CXLA_OP_PARAMETER) {
        for (int64_t d = 0; d < f->shape.rank; d++) memo[at][d] = ops[f->parameter_number][d];
    } else if (f->opcode == CXLA_OP_CONSTANT || f->opcode == CXLA_OP_TUPLE) {
        for (int64_t d = 0; f->shape.type != CXLA_TUPLE && d < f->shape.rank; d++)
            memo[at][d] = f->shape.dims[d];
    } else {
        const int64_t **fops =
            malloc((size_t)(f->operand_count ? f->operand_count : 1) * sizeof(*fops));
        cxla_status s = fops ? NULL : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        for (int64_t k = 0; !s && k < f->operand_count; k++) {
            const cxla_instr *o = f->operands[k];
            s = sizes_fused(c, o, ops, memo, done, depth + 1);
            int64_t j = 0;
            while (!s && c->instrs[j] != o) j++;
            if (!s) fops[k] = memo[j];
        }
        if (!s) s = sizes_one(f, fops, memo[at]);
        free(fops);
        if (s) return s;
    }
    done[at] = true;
    return NULL;
}

cxla_status exec_dynamic_sizes(const cxla_instr *in, const int64_t *const *ops,
                               int64_t *const *out) {
    if (sort_tuple_positionwise(in) ||
        (in->opcode == CXLA_OP_SORT && in->shape.type == CXLA_TUPLE &&
         in->shape.tuple_count == in->operand_count && in->operand_count >= 1))
        return sizes_sort_tuple(in, ops, out);
    if (in->opcode != CXLA_OP_FUSION) return sizes_one(in, ops, out[0]);
    const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_CALLS);
    if (!c || !c->root) return exec_error(in, CXLA_STATUS_INTERNAL, "no fused computation");
    int64_t n = c->instr_count ? c->instr_count : 1;
    int64_t(*memo)[CXLA_MAX_RANK] = malloc((size_t)n * sizeof(*memo));
    bool *done = calloc((size_t)n, sizeof(bool));
    cxla_status s =
        memo && done ? NULL : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    const cxla_instr *root = c->root;
    if (!s && root->opcode == CXLA_OP_TUPLE) {
        for (int64_t e = 0; e < root->operand_count && !s; e++) {
            const cxla_instr *o = root->operands[e];
            s = sizes_fused(c, o, ops, memo, done, 0);
            int64_t j = 0;
            while (!s && c->instrs[j] != o) j++;
            for (int64_t d = 0; !s && d < o->shape.rank; d++) out[e][d] = memo[j][d];
        }
    } else if (!s) {
        s = sizes_fused(c, root, ops, memo, done, 0);
        int64_t j = 0;
        while (!s && c->instrs[j] != root) j++;
        for (int64_t d = 0; !s && d < root->shape.rank; d++) out[0][d] = memo[j][d];
    }
    free(memo);
    free(done);
    return s;
}
