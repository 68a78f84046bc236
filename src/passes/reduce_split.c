/* Reduce splitting: a reduce of every dimension of a large f32 or f64 array with add,
 * maximum or minimum becomes two reduces over a reshape of the operand to [N / C, C]: one
 * that reduces each of the N / C rows (starting from the reducer's identity), which a
 * backend runs in parallel over the rows, then one over the N / C partials, starting from
 * the original init value. A sum to a scalar then uses every thread, and its order still
 * depends on N alone, never on the thread count.
 *
 * This changes the order of a floating-point sum (maximum and minimum give the same value
 * in any order), so it is not in the default pipeline: the cpu backend runs it before
 * fusion in its fast reduction order (when CXLA_CPU_EXACT_MATH is not set;
 * docs/semantics.md, "Reductions", gives the order and its error bound).
 *
 * C is the divisor of N in [CHUNK_LO, CHUNK_HI] nearest to CHUNK_AIM (the smaller one on a
 * tie); an N below SPLIT_MIN, or without such a divisor, is left alone.
 *
 * Column reduces: a reduce of dimension 0 alone of an [R, ...] array of SPLIT_MIN elements
 * or more becomes a reduce over a reshape to [S, R / S, ...] of dimension 1 (S parts of
 * R / S rows, from the identity; a backend runs the parts in parallel, each reading whole
 * rows), then S - 1 pairs of partials added in a tree, ((p0 + p1) + (p2 + p3)) + ..., and
 * the original init. S (8, 4 or 2: the largest that divides R with R / S >= COL_PART_MIN)
 * is where the interpreter's pairwise sum over R itself splits (halves of an even range
 * longer than 16), so a sum keeps the interpreter's value bit for bit: the split only lets
 * threads take whole rows instead of halves of each row. */
#include <stdlib.h>
#include <string.h>

#include "passes/passes_internal.h"

enum { SPLIT_MIN = 1 << 20, CHUNK_LO = 4096, CHUNK_HI = 65536, CHUNK_AIM = 32768 };
enum { COL_PARTS = 8, COL_PART_MIN = 32 };

typedef enum split_op { SPLIT_NONE, SPLIT_ADD, SPLIT_MAX, SPLIT_MIN_OP } split_op;

/* The reducer of |in| when it is add, maximum or minimum of its two scalar parameters of
 * the operand's type (f32 or f64), one input. */
static split_op split_reducer(const cxla_instr *in) {
    if (in->opcode != CXLA_OP_REDUCE || in->operand_count != 2) return SPLIT_NONE;
    cxla_type t = in->operands[0]->shape.type;
    if ((t != CXLA_F32 && t != CXLA_F64) || in->shape.type != t ||
        in->operands[1]->shape.type != t || !passes_is_static_array(&in->operands[0]->shape) ||
        passes_has_control_deps(in))
        return SPLIT_NONE;
    const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    if (!c || c->param_count != 2 || !c->root || c->root->operand_count != 2) return SPLIT_NONE;
    const cxla_instr *r = c->root, *a = r->operands[0], *b = r->operands[1];
    if (a->opcode != CXLA_OP_PARAMETER || b->opcode != CXLA_OP_PARAMETER || a == b ||
        r->shape.rank != 0 || r->shape.type != t || a->shape.type != t || b->shape.type != t)
        return SPLIT_NONE;
    switch (r->opcode) {
    case CXLA_OP_ADD: return SPLIT_ADD;
    case CXLA_OP_MAXIMUM: return SPLIT_MAX;
    case CXLA_OP_MINIMUM: return SPLIT_MIN_OP;
    default: return SPLIT_NONE;
    }
}

/* The row length C for |n| elements, or 0 (see the header comment). */
static int64_t chunk_of(int64_t n) {
    int64_t best = 0;
    for (int64_t c = CHUNK_LO; c <= CHUNK_HI && c <= n / 2; c++)
        if (n % c == 0 && (best == 0 || llabs(c - CHUNK_AIM) < llabs(best - CHUNK_AIM))) best = c;
    return best;
}

/* A scalar constant of type |t| holding the identity of |op| (-0 for add, so that a sum of
 * -0 stays -0; -inf for maximum, +inf for minimum). */
static cxla_status identity(cxla_computation *comp, cxla_type t, split_op op, cxla_instr **out) {
    cxla_module *m = comp->module;
    cxla_shape sh;
    CXLA_RETURN_IF_ERROR(passes_array_shape(m, t, 0, NULL, &sh));
    cxla_literal *lit = NULL;
    CXLA_RETURN_IF_ERROR(cxla_literal_create(&sh, &lit));
    double v = op == SPLIT_ADD ? -0.0 : op == SPLIT_MAX ? -1.0 / 0.0 : 1.0 / 0.0;
    if (t == CXLA_F32) {
        float f = (float)v;
        memcpy(cxla_literal_data(lit), &f, sizeof f);
    } else {
        memcpy(cxla_literal_data(lit), &v, sizeof v);
    }
    cxla_status s = cxla_module_adopt_literal(m, lit);
    if (s) {
        cxla_literal_free(lit);
        return s;
    }
    CXLA_RETURN_IF_ERROR(passes_add(comp, CXLA_OP_CONSTANT, "identity", &sh, 0, NULL, out));
    (*out)->literal = lit;
    return NULL;
}

static cxla_status split_one(cxla_computation *comp, cxla_instr *red, split_op op, int64_t c) {
    cxla_module *m = comp->module;
    cxla_instr *x = red->operands[0], *init = red->operands[1];
    cxla_type t = x->shape.type;
    int64_t n = passes_elements(&x->shape);
    int64_t dims[2] = {n / c, c};
    cxla_shape rows_shape, part_shape;
    CXLA_RETURN_IF_ERROR(passes_array_shape(m, t, 2, dims, &rows_shape));
    CXLA_RETURN_IF_ERROR(passes_array_shape(m, t, 1, dims, &part_shape));
    cxla_instr *rows, *id, *inner, *outer;
    CXLA_RETURN_IF_ERROR(passes_add(comp, CXLA_OP_RESHAPE, "rows", &rows_shape, 1, &x, &rows));
    CXLA_RETURN_IF_ERROR(identity(comp, t, op, &id));
    cxla_instr *inner_ops[2] = {rows, id};
    CXLA_RETURN_IF_ERROR(passes_clone_instr(comp, red, inner_ops, &inner));
    inner->shape = part_shape;
    const int64_t one = 1, zero = 0;
    CXLA_RETURN_IF_ERROR(passes_set_ints(inner, CXLA_ATTR_DIMENSIONS, &one, 1));
    cxla_instr *outer_ops[2] = {inner, init};
    CXLA_RETURN_IF_ERROR(passes_clone_instr(comp, red, outer_ops, &outer));
    CXLA_RETURN_IF_ERROR(passes_set_ints(outer, CXLA_ATTR_DIMENSIONS, &zero, 1));
    return passes_replace(red, outer);
}

/* The parts S of a column reduce (see the header comment), or 0: |in| reduces dimension 0
 * alone of an array of rank >= 2. */
static int64_t col_parts(const cxla_instr *in) {
    const cxla_shape *x = &in->operands[0]->shape;
    int64_t nd = 0;
    const int64_t *dims = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    if (x->rank < 2 || nd != 1 || dims[0] != 0) return 0;
    int64_t r = x->dims[0];
    for (int64_t s = COL_PARTS; s >= 2; s /= 2)
        if (r % s == 0 && r / s >= COL_PART_MIN) return s;
    return 0;
}

/* |x| reshaped to [|a|, |b|, dims of |x| after its first |skip|]. */
static cxla_status reshape_rows(cxla_computation *comp, cxla_instr *x, int64_t skip, int64_t a,
                                int64_t b, cxla_instr **out) {
    int64_t dims[CXLA_MAX_RANK];
    int64_t rank = x->shape.rank - skip + 2;
    if (rank > CXLA_MAX_RANK) return cxla_error(CXLA_STATUS_INTERNAL, "reduce-split: rank");
    dims[0] = a;
    dims[1] = b;
    for (int64_t k = skip; k < x->shape.rank; k++) dims[k - skip + 2] = x->shape.dims[k];
    cxla_shape sh;
    CXLA_RETURN_IF_ERROR(passes_array_shape(comp->module, x->shape.type, rank, dims, &sh));
    return passes_add(comp, CXLA_OP_RESHAPE, "parts", &sh, 1, &x, out);
}

/* A reduce like |red| of dimension |dim| of |x| from |init|, whose result drops that
 * dimension of |x|'s shape. */
static cxla_status reduce_dim(cxla_computation *comp, const cxla_instr *red, cxla_instr *x,
                              cxla_instr *init, int64_t dim, cxla_instr **out) {
    int64_t dims[CXLA_MAX_RANK], n = 0;
    for (int64_t k = 0; k < x->shape.rank; k++)
        if (k != dim) dims[n++] = x->shape.dims[k];
    cxla_shape sh;
    CXLA_RETURN_IF_ERROR(passes_array_shape(comp->module, x->shape.type, n, dims, &sh));
    cxla_instr *ops[2] = {x, init};
    CXLA_RETURN_IF_ERROR(passes_clone_instr(comp, red, ops, out));
    (*out)->shape = sh;
    return passes_set_ints(*out, CXLA_ATTR_DIMENSIONS, &dim, 1);
}

static cxla_status split_cols(cxla_computation *comp, cxla_instr *red, split_op op, int64_t s) {
    cxla_instr *x = red->operands[0], *init = red->operands[1], *id, *parts, *acc;
    int64_t r = x->shape.dims[0];
    CXLA_RETURN_IF_ERROR(identity(comp, x->shape.type, op, &id));
    CXLA_RETURN_IF_ERROR(reshape_rows(comp, x, 1, s, r / s, &parts));
    CXLA_RETURN_IF_ERROR(reduce_dim(comp, red, parts, id, 1, &acc));
    /* acc is [s, ...]: neighbours added pairwise until two partials are left. */
    for (; s > 2; s /= 2) {
        cxla_instr *pairs;
        CXLA_RETURN_IF_ERROR(reshape_rows(comp, acc, 1, s / 2, 2, &pairs));
        CXLA_RETURN_IF_ERROR(reduce_dim(comp, red, pairs, id, 1, &acc));
    }
    cxla_instr *outer;
    CXLA_RETURN_IF_ERROR(reduce_dim(comp, red, acc, init, 0, &outer));
    outer->shape = red->shape; /* the same dimensions, and its layout */
    return passes_replace(red, outer);
}

static cxla_status run_reduce_split(cxla_module *m, bool *changed) {
    *changed = false;
    for (int64_t ci = 0; ci < m->comp_count; ci++) {
        cxla_computation *comp = m->comps[ci];
        /* The instructions present now (splitting adds some, which need no visit). */
        int64_t n = comp->instr_count;
        cxla_instr **list = malloc(sizeof(*list) * (size_t)(n ? n : 1));
        if (!list) return PASSES_OOM();
        memcpy(list, comp->instrs, sizeof(*list) * (size_t)n);
        cxla_status s = NULL;
        for (int64_t i = 0; i < n && !s; i++) {
            cxla_instr *in = list[i];
            split_op op = split_reducer(in);
            if (op == SPLIT_NONE) continue;
            int64_t count = passes_elements(&in->operands[0]->shape);
            if (count < SPLIT_MIN || count == INT64_MAX) continue;
            if (in->shape.rank > 0) {
                int64_t parts = col_parts(in);
                if (parts) s = split_cols(comp, in, op, parts);
                if (!s && parts) *changed = true;
                continue;
            }
            int64_t c = chunk_of(count);
            if (!c) continue;
            s = split_one(comp, in, op, c);
            if (!s) *changed = true;
        }
        free(list);
        CXLA_RETURN_IF_ERROR(s);
    }
    return NULL;
}

const cxla_pass cxla_pass_reduce_split = {"reduce-split", run_reduce_split};
