/* Row fusion's shape rule (used by fusion.c's cxla_pass_fusion_rows; docs/passes.md).
 *
 * A row fusion computes, per row of its loop, the reductions of the row's last dimension
 * first and then the row's elements (the cpu emitter's dims_nest): one value per reduce
 * and row, held in a scalar while the row's elements are written. That is right only when
 * each element of the fusion's result reads each reduce at its own row: the reduce's value
 * must reach the root through elementwise work on row values, a broadcast back along the
 * last dimension (dimensions {0, ..., rank-2}), and elementwise work on the row's elements
 * or a further reduce of the last dimension (layer norm's variance reads the mean). Any
 * other path (a broadcast along another dimension, a transpose, a reverse, a slice: a row
 * value read at another row's or a column's index) would make the emitter recompute a
 * whole row reduction for every element, so such a reduce stays out (fusion.c then leaves
 * it a reduce of its own, read by the loop). */
#include <stdbool.h>
#include <string.h>

#include "passes/passes_internal.h"

enum { MAX_STEPS = 4096 }; /* uses walked; a bigger DAG is refused, not walked for long */

static bool same_dims(const cxla_shape *a, const int64_t *dims, int64_t rank) {
    return a->rank == rank && memcmp(a->dims, dims, (size_t)rank * sizeof(int64_t)) == 0;
}

static bool elementwise(const cxla_instr *in) {
    return (cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_ELEMENTWISE) != 0;
}

/* Whether the broadcast |b| of a row value puts it back along the last dimension of |s|. */
static bool along_rows(const cxla_instr *b, const cxla_shape *s) {
    if (!same_dims(&b->shape, s->dims, s->rank)) return false;
    int64_t nd = 0;
    const int64_t *dims = cxla_instr_ints(b, CXLA_ATTR_DIMENSIONS, &nd);
    if (nd != s->rank - 1) return false;
    for (int64_t k = 0; k < nd; k++)
        if (dims[k] != k) return false;
    return true;
}

/* Whether |r| reduces dimension rank-1 alone. */
static bool reduces_last(const cxla_instr *r, int64_t rank) {
    int64_t nd = 0;
    const int64_t *dims = cxla_instr_ints(r, CXLA_ATTR_DIMENSIONS, &nd);
    return nd == 1 && dims[0] == rank - 1;
}

/* Walks the uses of |v| (a row value when |row|, else one of the row's elements) up to
 * |root|; false on a use that reads it elsewhere, or after MAX_STEPS uses. */
static bool walk(const cxla_instr *v, bool row, const cxla_instr *root, const cxla_shape *s,
                 int64_t *steps) {
    if (v == root) return !row;
    if (v->user_count == 0) return false; /* a value outside the group: not the pattern */
    for (int64_t i = 0; i < v->user_count; i++) {
        const cxla_instr *u = v->users[i];
        if (++*steps > MAX_STEPS) return false;
        bool next_row;
        if (row && elementwise(u) && same_dims(&u->shape, s->dims, s->rank - 1))
            next_row = true;
        else if (row && u->opcode == CXLA_OP_BROADCAST && along_rows(u, s))
            next_row = false;
        else if (!row && elementwise(u) && same_dims(&u->shape, s->dims, s->rank))
            next_row = false;
        else if (!row && u->opcode == CXLA_OP_REDUCE && u->operand_count == 2 &&
                 u->operands[0] == v && reduces_last(u, s->rank))
            next_row = true;
        else
            return false;
        if (!walk(u, next_row, root, s, steps)) return false;
    }
    return true;
}

bool passes_row_reduce_uses_rows(const cxla_instr *reduce, const cxla_instr *root) {
    const cxla_shape *s = &reduce->operands[0]->shape;
    if (s->rank < 2 || !same_dims(&root->shape, s->dims, s->rank)) return false;
    int64_t steps = 0;
    return walk(reduce, true, root, s, &steps);
}
