/* Bounded dynamic shapes in ahead-of-time output (aot_internal.h; docs/aot.md, "Dynamic
 * shapes"): the JIT's way (src/cpu/cpu_steps_run.c, run_bounds) written as C.
 *
 * Every array lives at its bounds. The entry's function keeps the run-time sizes of its
 * dynamic leaves in a local int64_t dz[] (acomp.dyn_off says where each leaf's are); its
 * parameters' come in from NAME_run_dynamic, its results' go out. A kernel step with
 * dynamic shapes computes its result's sizes from its operands' by the rules of
 * exec_dynamic_sizes (src/exec/dynamic.c): exec_dynamic_rule's data for the instruction,
 * printed here as C statements (per fused instruction for a fusion) with the same error
 * texts (the EXEC_DYN_MSG_* formats of exec/dynamic.h, prefixed as exec_error names the
 * instruction); then runs
 * the static kernel of the instruction at its bounds (a copy of the module without the
 * dynamic marks, as cpu_backend.c's bounds_module), a reduce over its input with the
 * padding filled by its init value and a dot over operands with zeros in their padding
 * first (copies in the scratch arena), and zeroes the result's padding (the
 * interpreter's results have zeros there, which set-dimension-size can bring back).
 * get-dimension-size and set-dimension-size read and write the sizes (S_SIZE).
 *
 * Every computation's function keeps its own dz[] and takes its parameters' sizes (zin)
 * and gives its results' (zout) beside its arrays, so sizes pass through while,
 * conditional and call (aot_dyn_put_zlist; a loop's state keeps them).
 *
 * The moves by the run-time sizes (pad, reverse, concatenate along a dynamic dimension,
 * ...) and f32/f64 sums at the sizes are steps of aot_dmove.c; the JIT's kernels that read
 * or rewrite something by the sizes (sorts along a dynamic dimension, reduces with any
 * reducer, bitcast, reduce-window, select-and-scatter) are aot_dynlib.c's, gather and scatter
 * aot_dindex.c's. What has no form yet and unbounded dimensions are compile-time errors naming the
 * instruction. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/aot_internal.h"
#include "cpu/aot_jit.h"
#include "cpu/emit.h"
#include "cpu/emit_internal.h"
#include "exec/dynamic.h"
#include "exec/exec.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

static bool shape_dynamic(const cxla_shape *s) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t e = 0; e < s->tuple_count; e++)
            if (shape_dynamic(&s->elements[e])) return true;
        return false;
    }
    if (!cxla_type_is_array(s->type) || !s->dynamic) return false;
    for (int64_t d = 0; d < s->rank; d++)
        if (s->dynamic[d]) return true;
    return false;
}

static void drop_dynamic(cxla_shape *s) {
    if (s->type == CXLA_TUPLE)
        for (int64_t e = 0; e < s->tuple_count; e++) drop_dynamic(&s->elements[e]);
    s->dynamic = NULL;
}

cxla_status aot_dyn_prepare(aot *a) {
    const cxla_module *m = a->m;
    bool any = false;
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            const cxla_shape *s = &m->comps[c]->instrs[i]->shape;
            if (exec_shape_has_unbounded(s)) return NULL; /* check_shape refuses it */
            any = any || shape_dynamic(s);
        }
    if (!any) return NULL;
    CXLA_RETURN_IF_ERROR(cxla_module_clone(m, &a->bounds));
    a->bounds_instr = calloc((size_t)(m->next_id > 0 ? m->next_id : 1), sizeof(*a->bounds_instr));
    if (!a->bounds_instr) return OOM();
    for (int64_t c = 0; c < a->bounds->comp_count; c++)
        for (int64_t i = 0; i < a->bounds->comps[c]->instr_count; i++) {
            cxla_instr *x = a->bounds->comps[c]->instrs[i];
            drop_dynamic(&x->shape);
            if (x->id >= 0 && x->id < m->next_id) a->bounds_instr[x->id] = x;
        }
    return NULL;
}

bool aot_dyn_shape_ok(const aot *a, const cxla_shape *s) {
    if (!a->bounds || !cxla_type_is_array(s->type)) return false;
    for (int64_t d = 0; d < s->rank; d++)
        if (s->dims[d] < 0) return false;
    return true;
}

bool aot_dyn_instr(const cxla_instr *in) {
    if (shape_dynamic(&in->shape)) return true;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (shape_dynamic(&in->operands[k]->shape)) return true;
    return false;
}

/* Whether every reduced dimension of reduce |in|'s input is static: each result element
 * then reads whole rows of valid elements, as positionwise kernels do. */
static bool reduce_over_static(const cxla_instr *in) {
    if (in->operand_count != 2 || !cxla_type_is_array(in->shape.type)) return false;
    int64_t nd = 0;
    const int64_t *rd = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    for (int64_t i = 0; i < nd; i++)
        if (exec_shape_dim_dynamic(&in->operands[0]->shape, rd[i])) return false;
    return true;
}

/* Whether dot |in| contracts static dimensions only (then positionwise as well). */
static bool dot_over_static(const cxla_instr *in) {
    if (in->operand_count != 2 || cxla_instr_attr(in, CXLA_ATTR_SPARSITY)) return false;
    static const cxla_attr_id cd[2] = {CXLA_ATTR_LHS_CONTRACTING_DIMS,
                                       CXLA_ATTR_RHS_CONTRACTING_DIMS};
    for (int k = 0; k < 2; k++) {
        int64_t n = 0;
        const int64_t *dd = cxla_instr_ints(in, cd[k], &n);
        for (int64_t i = 0; i < n; i++)
            if (exec_shape_dim_dynamic(&in->operands[k]->shape, dd[i])) return false;
    }
    return true;
}

/* The fill, as a C expression of a pointer to one element, that makes a kernel at the bounds
 * of float reduce |in| (f32 or f64, a reducer of one add or multiply of its parameters)
 * give the interpreter's bits over a dynamic dimension; NULL when there is none. The
 * interpreter multiplies in order, so 1 anywhere changes nothing. It adds init + a pairwise
 * sum whose leaves of up to 16 elements are sums in order; with at most 16 elements at the
 * bounds the whole is one leaf, in which -0 anywhere changes nothing (x + -0 is x for every
 * x, -0 included, where +0 would turn a -0 sum into +0). */
static const char *float_fill(const cxla_instr *in) {
    if (in->opcode != CXLA_OP_REDUCE || in->operand_count != 2 ||
        !cxla_type_is_array(in->shape.type) || in->operands[1]->shape.rank != 0)
        return NULL;
    cxla_type t = in->shape.type;
    bool in_order = t == CXLA_F16 || t == CXLA_BF16 || t == CXLA_C64 || t == CXLA_C128;
    if ((t != CXLA_F32 && t != CXLA_F64 && !in_order) || in->operands[0]->shape.type != t ||
        in->operands[1]->shape.type != t)
        return NULL;
    const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    if (!c || !c->root || c->param_count != 2 || c->root->operand_count != 2) return NULL;
    const cxla_instr *r = c->root, *x = r->operands[0], *y = r->operands[1];
    if (x->opcode != CXLA_OP_PARAMETER || y->opcode != CXLA_OP_PARAMETER ||
        x->parameter_number == y->parameter_number || r->shape.type != t)
        return NULL;
    /* f16 and bf16 (each step rounded to the type) and complex numbers (part by part) the
     * interpreter folds in order from the init value, at any size: -0 (both parts) adds
     * nothing, and 1 multiplies a half float by nothing (a complex product by (1, 0)
     * would, inf * 0 being NaN). */
    if (in_order && r->opcode == CXLA_OP_ADD)
        return t == CXLA_C64    ? "(const float[]){-0.0f, -0.0f}"
               : t == CXLA_C128 ? "(const double[]){-0.0, -0.0}"
                                : "(const uint16_t[]){0x8000}";
    if (in_order && r->opcode == CXLA_OP_MULTIPLY && t != CXLA_C64 && t != CXLA_C128)
        return t == CXLA_F16 ? "(const uint16_t[]){0x3c00}" : "(const uint16_t[]){0x3f80}";
    if (in_order) return NULL;
    bool f32 = t == CXLA_F32;
    if (r->opcode == CXLA_OP_MULTIPLY)
        return f32 ? "(const float[]){1.0f}" : "(const double[]){1.0}";
    if (r->opcode != CXLA_OP_ADD) return NULL;
    int64_t nd = 0, count = 1;
    const int64_t *rd = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    for (int64_t i = 0; i < nd; i++) {
        if (rd[i] < 0 || rd[i] >= in->operands[0]->shape.rank) return NULL;
        count *= in->operands[0]->shape.dims[rd[i]];
    }
    if (count > 16) return NULL; /* interp_reduce.c's PAIRWISE_LEAF */
    return f32 ? "(const float[]){-0.0f}" : "(const double[]){-0.0}";
}

/* The fill, as a C expression of a pointer to one element, that makes a kernel at the
 * bounds of integer or pred reduce |in| (a reducer of one add, multiply, and, or, xor,
 * maximum or minimum of its parameters; any width, sub-byte integers one per byte) give
 * the interpreter's bits over a dynamic dimension whatever its init value: the reducer's
 * identity, which wrapping integer arithmetic and the logical and order operations fold
 * to nothing in any order (the kernel folds the init value itself). Written into |buf|;
 * false when there is none. */
static bool int_fill(const cxla_instr *in, char *buf, size_t n) {
    if (in->opcode != CXLA_OP_REDUCE || in->operand_count != 2 ||
        !cxla_type_is_array(in->shape.type) || in->operands[1]->shape.rank != 0)
        return false;
    cxla_type t = in->shape.type;
    if ((!cxla_type_is_integer(t) && t != CXLA_PRED) || in->operands[0]->shape.type != t ||
        in->operands[1]->shape.type != t)
        return false;
    const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    if (!c || !c->root || c->param_count != 2 || c->root->operand_count != 2) return false;
    const cxla_instr *r = c->root, *x = r->operands[0], *y = r->operands[1];
    if (x->opcode != CXLA_OP_PARAMETER || y->opcode != CXLA_OP_PARAMETER ||
        x->parameter_number == y->parameter_number || r->shape.type != t)
        return false;
    bool is_signed = cxla_type_is_integer(t) && !cxla_type_is_unsigned(t);
    int bits = t == CXLA_PRED ? 1 : cxla_type_bits(t);
    /* The identity as the signed value |v| or the unsigned |u| (pred: 0 or 1). */
    uint64_t top = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1, u = 0;
    int64_t smax = (int64_t)(top >> 1), v = 0;
    switch (r->opcode) {
    case CXLA_OP_ADD:
    case CXLA_OP_MULTIPLY:
        if (t == CXLA_PRED) return false; /* the interpreter's own logic, not a fill's */
        v = r->opcode == CXLA_OP_MULTIPLY;
        u = (uint64_t)v;
        break;
    case CXLA_OP_OR:
    case CXLA_OP_XOR: break;
    case CXLA_OP_AND: /* all ones */
        v = -1;
        u = top;
        break;
    case CXLA_OP_MAXIMUM: v = -smax - 1; break; /* the least value (u: 0) */
    case CXLA_OP_MINIMUM:                       /* the largest value */
        v = smax;
        u = top;
        break;
    default: return false;
    }
    const char *ct = cpu_emit_ctype(t);
    if (is_signed && v == INT64_MIN)
        snprintf(buf, n, "(const %s[]){(%s)(-9223372036854775807LL - 1)}", ct, ct);
    else if (is_signed)
        snprintf(buf, n, "(const %s[]){(%s)(%" PRId64 "LL)}", ct, ct, v);
    else
        snprintf(buf, n, "(const %s[]){(%s)%" PRIu64 "ULL}", ct, ct, u);
    return true;
}

/* Whether reduce |in| (one input; its reducer one maximum or minimum of its parameters over
 * floats, or one add, multiply, and, or, maximum or minimum over pred: the interpreter's
 * pred add is or, multiply is and) is idempotent, so that its init value, whatever it is
 * (computed, NaN, -0), fills its input's padding and changes nothing: each result is
 * init op x0 op x1 ..., and (init op S) op init is init op S for these reducers. For
 * float maximum: a NaN init is the result whatever follows (the first NaN wins); else the
 * padding holds no NaN and init op S is no less than init in the order with -0 < +0, which
 * op init leaves alone, bit for bit (equal values of one sign are one value). Only which
 * NaN wins among several valid elements depends on the order, which is the kernel's at
 * the bounds as for a static reduce (docs/semantics.md, "The fast reduction order"). */
static bool idempotent_reduce(const cxla_instr *in) {
    if (in->opcode != CXLA_OP_REDUCE || in->operand_count != 2 ||
        !cxla_type_is_array(in->shape.type) || in->operands[1]->shape.rank != 0)
        return false;
    cxla_type t = in->shape.type;
    bool flt = t == CXLA_F16 || t == CXLA_BF16 || t == CXLA_F32 || t == CXLA_F64;
    if ((!flt && t != CXLA_PRED) || in->operands[0]->shape.type != t ||
        in->operands[1]->shape.type != t)
        return false;
    const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    if (!c || !c->root || c->param_count != 2 || c->root->operand_count != 2) return false;
    const cxla_instr *r = c->root, *x = r->operands[0], *y = r->operands[1];
    if (x->opcode != CXLA_OP_PARAMETER || y->opcode != CXLA_OP_PARAMETER ||
        x->parameter_number == y->parameter_number || r->shape.type != t)
        return false;
    switch (r->opcode) {
    case CXLA_OP_MAXIMUM:
    case CXLA_OP_MINIMUM: return true;
    case CXLA_OP_ADD:
    case CXLA_OP_MULTIPLY:
    case CXLA_OP_AND:
    case CXLA_OP_OR: return t == CXLA_PRED;
    default: return false;
    }
}

/* Whether dot |in| sums like the exact kernels over zeros in its operands' padding: of a
 * float result, the interpreter sums the products in order from +0, a sum that is never
 * -0, so the products of padding (+0) add nothing wherever they fall (integer and pred
 * operands are converted to the result type first, which keeps their zeros +0); of an
 * integer or pred result (sub-byte integers and mixed types too, which the JIT's kernels
 * at the bounds leave), wrapping sums and ORs to which zero products add nothing. Of a
 * complex result (c64, c128; real, integer or pred operands too) the same part by part:
 * the interpreter forms each product from four rounded real products, then adds its parts
 * in order from (+0, +0); a product of padding is (0 * 0 - 0 * 0, 0 * 0 + 0 * 0) = (+0, +0)
 * (the contracting elements beyond the size are zero in both operands: a static dimension
 * lined up with a dynamic one is cut too), and +0 added to a part that is never -0 changes
 * no bit, NaN and infinities included. */
static bool exact_dot(const cxla_instr *in) {
    if (in->opcode != CXLA_OP_DOT || in->operand_count != 2 ||
        cxla_instr_attr(in, CXLA_ATTR_SPARSITY))
        return false;
    cxla_type t = in->shape.type;
    if (!cxla_type_is_float(t) && !cxla_type_is_integer(t) && t != CXLA_PRED &&
        !cxla_type_is_complex(t))
        return false;
    for (int k = 0; k < 2; k++) {
        const cxla_shape *x = &in->operands[k]->shape;
        if (!cxla_type_is_float(x->type) && !cxla_type_is_integer(x->type) &&
            x->type != CXLA_PRED && !cxla_type_is_complex(x->type))
            return false;
        for (int64_t d = 0; d < x->rank; d++)
            if (x->dims[d] < 0) return false;
    }
    return true;
}

/* Whether gather or scatter |in| has what aot_dindex.c's rewrite of its indices takes. */
static bool indexed_plain(const cxla_instr *in) {
    return aot_dindex_ok(in);
}

cxla_status aot_dyn_check(aot *a, const cxla_instr *in, bool entry, aot_bounds *out_bounds) {
    (void)entry; /* every computation keeps its sizes in its function's dz[] */
    *out_bounds = AB_STATIC;
    if (!a->bounds || !aot_dyn_instr(in)) return NULL;
    switch (in->opcode) {
    case CXLA_OP_PARAMETER:
    case CXLA_OP_TUPLE:
    case CXLA_OP_GET_TUPLE_ELEMENT: return NULL; /* leaves passed along, sizes with them */
    case CXLA_OP_CONSTANT: return NULL;          /* its sizes set as its function starts */
    default: break;
    }
    switch (in->opcode) {
    case CXLA_OP_WHILE:
    case CXLA_OP_CONDITIONAL:
    case CXLA_OP_CALL:
        /* The sizes pass to the called computations' functions beside their arrays and
         * come back with their results (aot_dyn_put_zlist); a loop's state keeps them. */
        return NULL;
    case CXLA_OP_ASYNC_START:
    case CXLA_OP_ASYNC_UPDATE:
    case CXLA_OP_ASYNC_DONE: return aot_ops_async_dynamic(in); /* aot_ops.c */
    default: break;
    }
    if (in->opcode == CXLA_OP_GET_DIMENSION_SIZE || in->opcode == CXLA_OP_SET_DIMENSION_SIZE) {
        if (!aot_jit_size_step_ok(in))
            return aot_no(in, "needs an array operand, one dimension in range and an s32 result "
                              "(get) or an integer scalar size (set)");
        return NULL;
    }
    if ((in->opcode == CXLA_OP_REDUCE || in->opcode == CXLA_OP_REDUCE_WINDOW ||
         in->opcode == CXLA_OP_SCATTER) &&
        in->operand_count / 2 > CPU_EMIT_MAX_REDUCER_RESULTS)
        return aot_no(in, "a reduce, reduce-window or scatter of more than 64 inputs "
                          "(operands): its kernel's reducer gives one result per input, 64 at "
                          "most "
                          "(CPU_EMIT_MAX_REDUCER_RESULTS in src/cpu/emit_internal.h; the JIT "
                          "runs it on the interpreter's handler)");
    /* The result's leaves (any number of them), then every operand: whole elements. */
    int64_t nl = 0;
    const cxla_shape **leaves = malloc((size_t)(aot_leaf_count(&in->shape) + 1) * sizeof(*leaves));
    if (!leaves) return OOM();
    aot_leaf_shapes(&in->shape, leaves, &nl);
    for (int64_t k = 0; k < nl + in->operand_count; k++) {
        const cxla_shape *x = k < nl ? leaves[k] : &in->operands[k - nl]->shape;
        const char *why = k >= nl && x->type == CXLA_TUPLE
                              ? "with dynamic shapes it has no kernel at the bounds (a tuple "
                                "operand)"
                          : !aot_jit_whole_elements(x)
                              ? "dynamic shapes of sub-byte elements have no kernel at the bounds"
                              : NULL;
        if (why) {
            free(leaves);
            return aot_no(in, why);
        }
    }
    free(leaves);
    if (exec_dynamic_positionwise(in)) {
        *out_bounds = AB_POSITIONWISE;
        return NULL;
    }
    if (in->opcode == CXLA_OP_REDUCE && reduce_over_static(in) &&
        in->operands[1]->shape.rank == 0) {
        *out_bounds = AB_POSITIONWISE;
        return NULL;
    }
    if (in->opcode == CXLA_OP_DOT && dot_over_static(in)) {
        *out_bounds = AB_POSITIONWISE;
        return NULL;
    }
    /* Exact math: the kinds the JIT's exact mode runs as kernels (integer, logical, maximum
     * and minimum reductions; integer dots), with an init value known to be the
     * reducer's identity. */
    if (float_fill(in)) {
        *out_bounds = AB_REDUCE;
        return NULL;
    }
    char fill[96];
    if (int_fill(in, fill, sizeof fill)) {
        *out_bounds = AB_REDUCE;
        return NULL;
    }
    if (exact_dot(in)) {
        *out_bounds = AB_DOT;
        return NULL;
    }
    /* The moves of elements by the run-time sizes and float sums in the interpreter's
     * pairwise order at the sizes: steps of their own (aot_dmove.c). */
    if (aot_jit_move_ok(in)) {
        *out_bounds = AB_MOVE;
        return NULL;
    }
    if (aot_jit_float_sum_ok(in)) {
        *out_bounds = AB_SUM;
        return NULL;
    }
    int kind = aot_jit_bounds_kind(in);
    if (kind == AOT_JIT_REDUCE) {
        const cxla_instr *init = in->operands[1];
        const cxla_literal *lit = init->literal;
        if (idempotent_reduce(in)) { /* its padding filled with its init value, any init */
            *out_bounds = AB_REDUCE;
            return NULL;
        }
        if (init->opcode != CXLA_OP_CONSTANT || !lit || init->literal_elided ||
            !cpu_bounds_identity(in, lit->data))
            return aot_no(in, "a reduce over a dynamic dimension needs a constant init value "
                              "that is its reducer's identity (the padding is filled with it)");
        *out_bounds = AB_REDUCE;
        return NULL;
    }
    if (kind == AOT_JIT_DOT) {
        *out_bounds = AB_DOT;
        return NULL;
    }
    /* The JIT's kernels that read the run-time sizes (cpu_dynamic_lib.c, cpu_dynwin.c). */
    if (kind == AOT_JIT_SORT) {
        *out_bounds = AB_SORT;
        return NULL;
    }
    if (kind == AOT_JIT_INDEXED && in->opcode == CXLA_OP_GATHER && indexed_plain(in)) {
        *out_bounds = AB_GATHER;
        return NULL;
    }
    if (kind == AOT_JIT_INDEXED && in->opcode == CXLA_OP_SCATTER && indexed_plain(in)) {
        *out_bounds = AB_SCATTER;
        return NULL;
    }
    /* reduce-window, select-and-scatter and scatters with dynamic update windows: the
     * JIT's B_WINDOW and sized kernels (aot_dynlib.c). */
    bool taken = false;
    cxla_status ds = aot_dynlib_check(a, in, out_bounds, &taken);
    if (ds || taken) return ds;
    if (kind == AOT_JIT_INFERRED) {
        *out_bounds = AB_INFERRED;
        return NULL;
    }
    if (aot_jit_sized_ok(in, a->bounds_instr[in->id])) {
        *out_bounds = AB_SIZED;
        return NULL;
    }
    if (in->opcode == CXLA_OP_DOT)
        return aot_no(in, "a dot over a dynamic dimension of other types than floats and "
                          "integers");
    if (in->opcode == CXLA_OP_REDUCE && in->operand_count != 2)
        return aot_no(in, "a reduce of several inputs over a dynamic dimension: no fill of the "
                          "padding is known to change nothing in its reducer, and no step "
                          "folds it at the sizes ahead of time yet");
    if (in->opcode == CXLA_OP_REDUCE)
        return aot_no(in, "a reduce over a dynamic dimension whose reducer or element types "
                          "no kernel writes (neither one add, multiply, maximum, minimum, and, "
                          "or or xor of its parameters nor a computation of the scalar forms, "
                          "docs/semantics.md \"Scalar computations in kernels\"; the JIT runs "
                          "the interpreter's handler for it)");
    return aot_no(in, "with dynamic shapes it has no kernel at the bounds (the JIT runs the "
                      "interpreter's handler for it; docs/semantics.md, \"Bounded dynamic shapes "
                      "run as steps too\")");
}

cxla_status aot_dyn_size_step(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins,
                              int64_t nin, const cxla_shape *const *shapes, int64_t *lv) {
    (void)a;
    int64_t *outs = NULL;
    CXLA_RETURN_IF_ERROR(aot_add_step(c, S_SIZE, in, ins, nin, shapes, 1, &outs));
    lv[0] = outs[0]; /* the step's own array */
    return NULL;
}

cxla_status aot_dyn_place(acomp *c) {
    c->dyn_off = malloc((size_t)(c->leaf_count ? c->leaf_count : 1) * sizeof(int64_t));
    if (!c->dyn_off) return OOM();
    c->dyn_total = 0;
    for (int64_t l = 0; l < c->leaf_count; l++) {
        const cxla_shape *s = c->leaves[l].shape;
        c->dyn_off[l] = -1;
        if (s && shape_dynamic(s)) {
            c->dyn_off[l] = c->dyn_total;
            c->dyn_total += s->rank;
        }
    }
    return NULL;
}

/* ---- writing C ------------------------------------------------------------------------ */

/* The sizes of leaf |l| as a `const int64_t *` expression. */
void aot_dyn_put_sizes(const acomp *c, int64_t l, cxla_strbuf *b) {
    const cxla_shape *s = c->leaves[l].shape;
    if (c->dyn_off && c->dyn_off[l] >= 0) {
        cxla_strbuf_printf(b, "(dz + %" PRId64 ")", c->dyn_off[l]);
        return;
    }
    cxla_strbuf_puts(b, "(const int64_t[]){");
    for (int64_t d = 0; s && d < s->rank; d++)
        cxla_strbuf_printf(b, "%s%" PRId64, d ? ", " : "", s->dims[d]);
    cxla_strbuf_puts(b, s && s->rank ? "}" : "0}");
}

/* A failure with a message from printf format |fmt| (every conversion an int64_t), whose
 * values are the C expressions |vals|, naming |in| as exec_error does: code |code|. */
void aot_dyn_put_fail(aot *a, cxla_strbuf *b, const char *ind, const cxla_instr *in,
                      const char *code, const char *fmt, const char *const *vals, int nv) {
    /* exec_error's own prefix, around a marker. */
    cxla_status s = exec_error(in, CXLA_STATUS_INVALID_ARGUMENT, "%s", "\x01");
    const char *msg = s ? cxla_status_message(s) : "\x01";
    cxla_strbuf f;
    cxla_strbuf_init(&f);
    for (const char *p = msg; *p; p++) {
        if (*p != '\x01') {
            if (*p == '%') cxla_strbuf_putc(&f, '%');
            cxla_strbuf_putc(&f, *p);
            continue;
        }
        /* The format with each conversion as a bare '%' (P_dfail's placeholders). */
        for (const char *q = fmt; *q; q++) {
            if (*q != '%') {
                cxla_strbuf_putc(&f, *q);
            } else if (q[1] == '%') {
                cxla_strbuf_puts(&f, "%%");
                q++;
            } else {
                while (q[1] && strchr("0123456789.-+ #lhjzt", q[1])) q++;
                if (q[1]) q++;
                cxla_strbuf_putc(&f, '%');
            }
        }
    }
    cxla_status_free(s);
    cxla_strbuf_printf(b, "%sreturn %s_dfail(opt, %s_%s, ", ind, a->P, a->P, code);
    aot_put_string(b, f.data ? f.data : "", f.len);
    cxla_strbuf_puts(b, ", (const int64_t[]){");
    for (int i = 0; i < nv; i++) cxla_strbuf_printf(b, "%s%s", i ? ", " : "", vals[i]);
    cxla_strbuf_puts(b, nv ? "});\n" : "0});\n");
    cxla_strbuf_free(&f);
}

/* "name[d]" in a small buffer. */
static const char *ix(char *buf, size_t n, const char *name, int64_t d) {
    snprintf(buf, n, "%s[%" PRId64 "]", name, d);
    return buf;
}

static const char *num(char *buf, size_t n, int64_t v) {
    snprintf(buf, n, "%" PRId64, v);
    return buf;
}

/* interp_dynamic.c's align (exec/dynamic.c): the slots (operand ks[i], dimension ds[i]),
 * their arrays named r<k>: the dynamic ones must agree, the static ones are cut to them. */
void aot_dyn_put_align(aot *a, cxla_strbuf *b, const char *ind, const cxla_instr *in,
                       const int64_t *ks, const int64_t *ds, int64_t count) {
    int64_t first = -1;
    char v[6][48];
    for (int64_t i = 0; i < count; i++) {
        if (!exec_shape_dim_dynamic(&in->operands[ks[i]]->shape, ds[i])) continue;
        if (first < 0) {
            first = i;
            continue;
        }
        cxla_strbuf_printf(b, "%sif (r%" PRId64 "[%" PRId64 "] != r%" PRId64 "[%" PRId64 "])\n",
                           ind, ks[i], ds[i], ks[first], ds[first]);
        snprintf(v[0], 48, "%" PRId64, ks[i]);
        snprintf(v[1], 48, "r%" PRId64 "[%" PRId64 "]", ks[i], ds[i]);
        snprintf(v[2], 48, "%" PRId64, ds[i]);
        snprintf(v[3], 48, "%" PRId64, ks[first]);
        snprintf(v[4], 48, "r%" PRId64 "[%" PRId64 "]", ks[first], ds[first]);
        snprintf(v[5], 48, "%" PRId64, ds[first]);
        const char *vals[6] = {v[0], v[1], v[2], v[3], v[4], v[5]};
        cxla_strbuf t;
        cxla_strbuf_init(&t);
        cxla_strbuf_printf(&t, "%s    ", ind);
        aot_dyn_put_fail(a, b, t.data, in, "ERROR_DYNAMIC_MISMATCH", EXEC_DYN_MSG_DISAGREE, vals,
                         6);
        cxla_strbuf_free(&t);
    }
    if (first < 0) return;
    for (int64_t i = 0; i < count; i++)
        if (i != first)
            cxla_strbuf_printf(b,
                               "%sif (r%" PRId64 "[%" PRId64 "] > r%" PRId64 "[%" PRId64
                               "]) r%" PRId64 "[%" PRId64 "] = r%" PRId64 "[%" PRId64 "];\n",
                               ind, ks[i], ds[i], ks[first], ds[first], ks[i], ds[i], ks[first],
                               ds[first]);
}

/* The statements that set |out| (an int64_t array of the result's rank) to the sizes of
 * |in| (not a fusion) from its operands' sizes |ops| (C expressions): exec_dynamic_rule's
 * rule for |in|, the data that exec_dynamic_sizes applies (src/exec/dynamic.c), printed as
 * C. A reshape's rule is exec_dynamic_reshape_sizes, written here for at most one dynamic
 * result dimension (test_aot_dynamic_rules checks that the two agree). */
cxla_status aot_dyn_put_rule(aot *a, cxla_strbuf *b, const char *ind, const cxla_instr *in,
                             const char *const *ops, const char *out) {
    const cxla_shape *ys = &in->shape;
    int64_t n = in->operand_count;
    bool any_dynamic = false;
    for (int64_t k = 0; k < n; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        if (!cxla_type_is_array(s->type)) return aot_no(in, "an operand is not an array");
        any_dynamic = any_dynamic || shape_dynamic(s);
    }
    cxla_strbuf_printf(b, "%s{\n", ind);
    cxla_strbuf in2;
    cxla_strbuf_init(&in2);
    cxla_strbuf_printf(&in2, "%s    ", ind);
    const char *I = in2.data;
    /* Nothing below its bounds (always so when no operand is dynamic): at the bounds. */
    if (any_dynamic) {
        for (int64_t k = 0; k < n; k++) {
            const cxla_shape *s = &in->operands[k]->shape;
            cxla_strbuf_printf(b, "%sint64_t r%" PRId64 "[%" PRId64 "];\n", I, k,
                               s->rank ? s->rank : 1);
            for (int64_t d = 0; d < s->rank; d++)
                cxla_strbuf_printf(b, "%sr%" PRId64 "[%" PRId64 "] = %s[%" PRId64 "];\n", I, k, d,
                                   ops[k], d);
            cxla_strbuf_printf(b, "%s(void)r%" PRId64 ";\n", I, k);
        }
        cxla_strbuf_printf(b, "%sint padded = 0", I);
        for (int64_t k = 0; k < n; k++) {
            const cxla_shape *s = &in->operands[k]->shape;
            for (int64_t d = 0; d < s->rank; d++)
                if (exec_shape_dim_dynamic(s, d))
                    cxla_strbuf_printf(b, " || r%" PRId64 "[%" PRId64 "] < %" PRId64, k, d,
                                       s->dims[d]);
        }
        cxla_strbuf_printf(b, ";\n%sif (padded) {\n", I);
    }
    cxla_strbuf in3;
    cxla_strbuf_init(&in3);
    cxla_strbuf_printf(&in3, "%s    ", I);
    const char *J = in3.data;
    cxla_status s = NULL;
    char v[4][48];
    /* The rule as data (exec_dynamic_rule: what exec_dynamic_sizes applies), printed. */
    exec_dyn_rule rule;
    memset(&rule, 0, sizeof rule);
    if (any_dynamic) {
        cxla_status e = exec_dynamic_rule(in, &rule);
        if (e) {
            s = aot_no(in, cxla_status_message(e));
            cxla_status_free(e);
        }
    }
    for (int64_t g = 0; !s && g < rule.group_count; g++)
        aot_dyn_put_align(a, b, J, in, rule.groups[g].k, rule.groups[g].d, rule.groups[g].count);
    if (!any_dynamic || s) {
        /* no rule: the result at its bounds (below) */
    } else if (rule.reshape) {
        /* exec_dynamic_reshape_sizes' case of at most one dynamic result dimension (the
         * only one a kernel at the bounds runs: exec_dynamic_positionwise). */
        const cxla_shape *xs = &in->operands[0]->shape;
        int64_t unknown = 0, u = -1, p = 1;
        for (int64_t j = 0; j < ys->rank; j++)
            if (exec_shape_dim_dynamic(ys, j)) {
                unknown++;
                u = j;
            }
        for (int64_t j = 0; j < ys->rank; j++)
            if (j != u) p *= ys->dims[j];
        cxla_strbuf_printf(b, "%sint64_t real = 1;\n", J);
        for (int64_t d = 0; d < xs->rank; d++)
            cxla_strbuf_printf(b, "%sreal *= r0[%" PRId64 "];\n", J, d);
        for (int64_t j = 0; j < ys->rank; j++)
            cxla_strbuf_printf(b, "%s%s[%" PRId64 "] = %" PRId64 ";\n", J, out, j, ys->dims[j]);
        snprintf(v[0], 48, "%" PRId64, p);
        const char *vals[2] = {"real", v[0]};
        cxla_strbuf t;
        cxla_strbuf_init(&t);
        cxla_strbuf_printf(&t, "%s    ", J);
        if (!s && unknown == 1 && p != 0) {
            cxla_strbuf_printf(b, "%sif (real %% %" PRId64 " != 0)\n", J, p);
            aot_dyn_put_fail(a, b, t.data, in, "ERROR_DYNAMIC_MISMATCH",
                             EXEC_DYN_MSG_RESHAPE_MULTIPLE, vals, 2);
            cxla_strbuf_printf(b, "%s%s[%" PRId64 "] = real / %" PRId64 ";\n", J, out, u, p);
        } else if (!s && unknown == 0) {
            cxla_strbuf_printf(b, "%sif (real != %" PRId64 ")\n", J, p);
            aot_dyn_put_fail(a, b, t.data, in, "ERROR_DYNAMIC_MISMATCH",
                             EXEC_DYN_MSG_RESHAPE_STATIC, vals, 2);
        }
        if (!s && unknown > 1) {
            /* Several dynamic result dimensions: exec_dynamic_reshape_sizes splits the
             * elements group by group, the groups of operand and result dimensions whose
             * bounds hold as many elements (worked out here, at compile time); a group's one
             * dynamic dimension takes its operand dimensions' elements over its static
             * ones, a group without one must be filled exactly. */
            bool zero = false;
            for (int64_t d = 0; d < xs->rank; d++) zero = zero || xs->dims[d] == 0;
            for (int64_t j = 0; j < ys->rank; j++) zero = zero || ys->dims[j] == 0;
            int64_t i = 0, j = 0, n0 = xs->rank, m0 = ys->rank;
            while (!zero && !s && (i < n0 || j < m0)) {
                int64_t gi = i, gj = j, pin = 1, pout = 1;
                if (i < n0) pin = xs->dims[i++];
                if (j < m0) pout = ys->dims[j++];
                while (!s && pin != pout) {
                    if (pin < pout && i < n0)
                        pin *= xs->dims[i++];
                    else if (pout < pin && j < m0)
                        pout *= ys->dims[j++];
                    else
                        s = aot_no(in, "the bounds of the operand and the result hold "
                                       "different element counts");
                }
                if (s) break;
                int64_t gu = -1, gcount = 0, gp = 1;
                for (int64_t k = gj; k < j; k++) {
                    if (exec_shape_dim_dynamic(ys, k)) {
                        gu = k;
                        gcount++;
                    } else {
                        gp *= ys->dims[k];
                    }
                }
                cxla_strbuf_printf(b, "%s{\n%s    int64_t greal = 1", J, J);
                for (int64_t k = gi; k < i; k++) cxla_strbuf_printf(b, " * r0[%" PRId64 "]", k);
                cxla_strbuf_puts(b, ";\n");
                char g[4][48], ind2[128];
                snprintf(ind2, sizeof ind2, "%s        ", J);
                snprintf(g[0], 48, "%" PRId64, gi);
                snprintf(g[1], 48, "%" PRId64, i - 1);
                snprintf(g[2], 48, "%" PRId64, gj);
                snprintf(g[3], 48, "%" PRId64, j - 1);
                const char *fill[5] = {g[0], g[1], "greal", g[2], g[3]};
                const char *fmt_fill = "operand dimensions %" PRId64 "..%" PRId64 " hold %" PRId64
                                       " elements at their dynamic sizes, which do not fill "
                                       "result dimensions %" PRId64 "..%" PRId64;
                if (gcount > 1) {
                    const char *split[3] = {"greal", g[2], g[3]};
                    cxla_strbuf_printf(b, "%s    if (1)\n", J);
                    aot_dyn_put_fail(a, b, ind2, in, "ERROR_DYNAMIC_MISMATCH",
                                     "cannot tell how %" PRId64
                                     " elements split between result dimensions %" PRId64
                                     "..%" PRId64 ", several of them dynamic; use dynamic-reshape",
                                     split, 3);
                } else if (gcount == 1) {
                    cxla_strbuf_printf(b, "%s    if (greal %% %" PRId64 " != 0)\n", J, gp);
                    aot_dyn_put_fail(a, b, ind2, in, "ERROR_DYNAMIC_MISMATCH", fmt_fill, fill, 5);
                    cxla_strbuf_printf(b, "%s    %s[%" PRId64 "] = greal / %" PRId64 ";\n", J, out,
                                       gu, gp);
                } else {
                    cxla_strbuf_printf(b, "%s    if (greal != %" PRId64 ")\n", J, gp);
                    aot_dyn_put_fail(a, b, ind2, in, "ERROR_DYNAMIC_MISMATCH", fmt_fill, fill, 5);
                }
                cxla_strbuf_printf(b, "%s}\n", J);
            }
        }
        cxla_strbuf_printf(b, "%s(void)real;\n", J);
        cxla_strbuf_free(&t);
    } else {
        for (int64_t j = 0; j < rule.rank; j++) {
            const exec_dyn_out *x = &rule.out[j];
            switch (x->kind) {
            case EXEC_DYN_OUT_COPY:
                cxla_strbuf_printf(b, "%s%s[%" PRId64 "] = r%" PRId64 "[%" PRId64 "];\n", J, out, j,
                                   x->k, x->d);
                break;
            case EXEC_DYN_OUT_CONST:
                cxla_strbuf_printf(b, "%s%s[%" PRId64 "] = %" PRId64 ";\n", J, out, j, x->v);
                break;
            case EXEC_DYN_OUT_SUM:
                cxla_strbuf_printf(b, "%s%s[%" PRId64 "] = 0", J, out, j);
                for (int64_t k = 0; k < n; k++)
                    cxla_strbuf_printf(b, " + r%" PRId64 "[%" PRId64 "]", k, x->d);
                cxla_strbuf_puts(b, ";\n");
                break;
            case EXEC_DYN_OUT_SLICE: {
                char rs[48];
                snprintf(rs, sizeof rs, "r%" PRId64 "[%" PRId64 "]", x->k, x->d);
                cxla_strbuf_printf(b,
                                   "%s{\n%s    int64_t limit = %s < %" PRId64 " ? %s : %" PRId64
                                   ";\n%s    int64_t start = %" PRId64 " < limit ? %" PRId64
                                   " : limit;\n%s    %s[%" PRId64 "] = (limit - start + %" PRId64
                                   ") / %" PRId64 ";\n",
                                   J, J, rs, x->limit, rs, x->limit, J, x->start, x->start, J, out,
                                   j, x->stride - 1, x->stride);
                if (x->check_static) {
                    char v5[5][48];
                    snprintf(v5[0], 48, "%" PRId64, x->start);
                    snprintf(v5[1], 48, "%" PRId64, x->limit);
                    snprintf(v5[2], 48, "%" PRId64, x->stride);
                    snprintf(v5[3], 48, "%" PRId64, x->d);
                    snprintf(v5[4], 48, "%s", rs);
                    const char *vals[5] = {v5[0], v5[1], v5[2], v5[3], v5[4]};
                    cxla_strbuf_printf(b, "%s    if (%s[%" PRId64 "] != %" PRId64 ")\n", J, out, j,
                                       x->v);
                    cxla_strbuf t;
                    cxla_strbuf_init(&t);
                    cxla_strbuf_printf(&t, "%s        ", J);
                    aot_dyn_put_fail(a, b, t.data, in, "ERROR_DYNAMIC_MISMATCH",
                                     EXEC_DYN_MSG_SLICE_PAST, vals, 5);
                    cxla_strbuf_free(&t);
                }
                cxla_strbuf_printf(b, "%s}\n", J);
                break;
            }
            }
        }
    }
    exec_dynamic_rule_free(&rule);
    /* check_result: the result's sizes against its declared shape. */
    for (int64_t d = 0; !s && any_dynamic && d < ys->rank; d++) {
        char od[48], t[64];
        cxla_strbuf ind2;
        cxla_strbuf_init(&ind2);
        cxla_strbuf_printf(&ind2, "%s    ", J);
        ix(od, sizeof od, out, d);
        if (!exec_shape_dim_dynamic(ys, d)) {
            cxla_strbuf_printf(b, "%sif (%s != %" PRId64 ")\n", J, od, ys->dims[d]);
            const char *vals[3] = {num(v[0], 48, d), num(v[1], 48, ys->dims[d]), od};
            aot_dyn_put_fail(a, b, ind2.data, in, "ERROR_DYNAMIC_MISMATCH",
                             EXEC_DYN_MSG_STATIC_RESULT, vals, 3);
        } else {
            cxla_strbuf_printf(b, "%sif (%s > %" PRId64 ")\n", J, od, ys->dims[d]);
            snprintf(t, sizeof t, "%s", od);
            const char *vals[3] = {num(v[0], 48, d), t, num(v[1], 48, ys->dims[d])};
            aot_dyn_put_fail(a, b, ind2.data, in, "ERROR_DYNAMIC_MISMATCH",
                             EXEC_DYN_MSG_BEYOND_BOUND, vals, 3);
        }
        cxla_strbuf_free(&ind2);
    }
    if (any_dynamic) cxla_strbuf_printf(b, "%s} else {\n", I);
    for (int64_t d = 0; d < ys->rank; d++)
        cxla_strbuf_printf(b, "%s%s[%" PRId64 "] = %" PRId64 ";\n", any_dynamic ? J : I, out, d,
                           ys->dims[d]);
    if (any_dynamic) cxla_strbuf_printf(b, "%s}\n", I);
    cxla_strbuf_printf(b, "%s}\n", ind);
    cxla_strbuf_free(&in2);
    cxla_strbuf_free(&in3);
    return s;
}

static int64_t result_leaves(const cxla_instr *in) {
    return in->shape.type == CXLA_TUPLE ? in->shape.tuple_count : 1;
}

static const cxla_shape *result_leaf(const cxla_instr *in, int64_t e) {
    return in->shape.type == CXLA_TUPLE ? &in->shape.elements[e] : &in->shape;
}

/* The sizes of kernel step |st|'s result leaves into rz<e> from oz[] (its operands'):
 * one rule, or a fusion's rules instruction by instruction in post order. */
static cxla_status put_kernel_sizes(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    int64_t n = in->operand_count;
    cxla_strbuf_printf(b, "        const int64_t *const oz[%" PRId64 "] = {", n ? n : 1);
    for (int64_t k = 0; k < n; k++) {
        if (k) cxla_strbuf_puts(b, ", ");
        aot_dyn_put_sizes(c, st->in[k], b);
    }
    cxla_strbuf_puts(b, n ? "};\n        (void)oz;\n" : "0};\n        (void)oz;\n");
    for (int64_t e = 0; e < result_leaves(in); e++)
        cxla_strbuf_printf(
            b, "        int64_t rz%" PRId64 "[%" PRId64 "];\n        (void)rz%" PRId64 ";\n", e,
            result_leaf(in, e)->rank ? result_leaf(in, e)->rank : 1, e);
    char name[64];
    if (in->opcode != CXLA_OP_FUSION) {
        /* The operands' sizes as C expressions, one per operand (any number of them). */
        const char **ops = malloc((size_t)(n ? n : 1) * sizeof(*ops));
        char(*opb)[32] = malloc((size_t)(n ? n : 1) * sizeof(*opb));
        cxla_status s = ops && opb ? NULL : OOM();
        for (int64_t k = 0; !s && k < n; k++) {
            snprintf(opb[k], sizeof opb[k], "oz[%" PRId64 "]", k);
            ops[k] = opb[k];
        }
        if (!s) s = aot_dyn_put_rule(a, b, "        ", in, ops, "rz0");
        free(ops);
        free(opb);
        return s;
    }
    const cxla_computation *f = cxla_instr_called(in, CXLA_ATTR_CALLS);
    cxla_instr **order = NULL;
    if (!f || !f->root) return aot_no(in, "no fused computation");
    CXLA_RETURN_IF_ERROR(cxla_computation_post_order_in(f, a->m->arena, &order));
    cxla_status s = NULL;
    cxla_strbuf_puts(b, "        {\n");
    for (int64_t i = 0; i < f->instr_count && !s; i++) {
        const cxla_instr *x = order[i];
        if (x->shape.type == CXLA_TUPLE) continue; /* the root's tuple: its leaves below */
        int64_t xr = x->shape.rank ? x->shape.rank : 1;
        cxla_strbuf_printf(b, "            int64_t fz%" PRId64 "[%" PRId64 "];\n", x->id, xr);
        if (x->opcode == CXLA_OP_PARAMETER) {
            for (int64_t d = 0; d < x->shape.rank; d++)
                cxla_strbuf_printf(
                    b, "            fz%" PRId64 "[%" PRId64 "] = oz[%" PRId64 "][%" PRId64 "];\n",
                    x->id, d, x->parameter_number, d);
        } else if (x->opcode == CXLA_OP_CONSTANT) {
            for (int64_t d = 0; d < x->shape.rank; d++)
                cxla_strbuf_printf(b, "            fz%" PRId64 "[%" PRId64 "] = %" PRId64 ";\n",
                                   x->id, d, x->shape.dims[d]);
        } else {
            /* Its operands' sizes, one per operand (any number of them: a fused instruction
             * may have more operands than the fusion has parameters). */
            int64_t nx = x->operand_count;
            const char **ops = malloc((size_t)(nx ? nx : 1) * sizeof(*ops));
            char(*opb)[24] = malloc((size_t)(nx ? nx : 1) * sizeof(*opb));
            s = ops && opb ? NULL : OOM();
            for (int64_t k = 0; !s && k < nx; k++) {
                snprintf(opb[k], sizeof opb[k], "fz%" PRId64, x->operands[k]->id);
                ops[k] = opb[k];
            }
            snprintf(name, sizeof name, "fz%" PRId64, x->id);
            if (!s) s = aot_dyn_put_rule(a, b, "            ", x, ops, name);
            free(ops);
            free(opb);
        }
    }
    const cxla_instr *root = f->root;
    for (int64_t e = 0; !s && e < result_leaves(in); e++) {
        const cxla_instr *x = root->opcode == CXLA_OP_TUPLE ? root->operands[e] : root;
        for (int64_t d = 0; d < x->shape.rank; d++)
            cxla_strbuf_printf(
                b, "            rz%" PRId64 "[%" PRId64 "] = fz%" PRId64 "[%" PRId64 "];\n", e, d,
                x->id, d);
    }
    cxla_strbuf_puts(b, "        }\n");
    return s;
}

static size_t elem_bytes(const cxla_shape *s) {
    return cxla_type_storage(s->type);
}

/* "(const int64_t[]){dims}" of |s|. */
static void put_dims(const cxla_shape *s, cxla_strbuf *b) {
    cxla_strbuf_puts(b, "(const int64_t[]){");
    for (int64_t d = 0; d < s->rank; d++)
        cxla_strbuf_printf(b, "%s%" PRId64, d ? ", " : "", s->dims[d]);
    cxla_strbuf_puts(b, s->rank ? "}" : "0}");
}

cxla_status aot_dyn_emit_kernel(aot *a, const acomp *c, const astep *st, int phase,
                                cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const char *P = a->P;
    bool done = false; /* the kinds of aot_dynlib.c */
    cxla_status err = aot_dynlib_emit(a, c, st, phase, b, &done);
    if (err || done) return err;
    if (phase == 0) return put_kernel_sizes(a, c, st, b);
    if (phase == 1) {
        /* Fill the padding of copies: a reduce's input with its init value, a dot's operands
         * with zeros (the kernel at the bounds then adds nothing from it). */
        int64_t nk = aot_fill_count(st), t = st->tmp_count - nk;
        /* The sizes each operand is filled beyond: its own; for a dot, a static contracting
         * dimension lined up with a dynamic one is cut to that one's size too (as the
         * interpreter cuts it: its extra elements must meet no zeros, inf * 0 being NaN). */
        for (int64_t k = 0; k < nk; k++) {
            const cxla_shape *xs = &in->operands[k]->shape;
            cxla_strbuf_printf(b, "        int64_t cz%" PRId64 "[%" PRId64 "];\n", k,
                               xs->rank ? xs->rank : 1);
            for (int64_t d = 0; d < xs->rank; d++)
                cxla_strbuf_printf(
                    b, "        cz%" PRId64 "[%" PRId64 "] = oz[%" PRId64 "][%" PRId64 "];\n", k, d,
                    k, d);
        }
        if (st->bounds == AB_DOT) {
            int64_t nl = 0, nr = 0;
            const int64_t *lc = cxla_instr_ints(in, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nl);
            const int64_t *rc = cxla_instr_ints(in, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nr);
            for (int64_t i = 0; i < nl && i < nr; i++) {
                bool dl = exec_shape_dim_dynamic(&in->operands[0]->shape, lc[i]);
                bool dr = exec_shape_dim_dynamic(&in->operands[1]->shape, rc[i]);
                if (dl && !dr)
                    cxla_strbuf_printf(b,
                                       "        if (cz1[%" PRId64 "] > cz0[%" PRId64
                                       "]) cz1[%" PRId64 "] = cz0[%" PRId64 "];\n",
                                       rc[i], lc[i], rc[i], lc[i]);
                if (dr && !dl)
                    cxla_strbuf_printf(b,
                                       "        if (cz0[%" PRId64 "] > cz1[%" PRId64
                                       "]) cz0[%" PRId64 "] = cz1[%" PRId64 "];\n",
                                       lc[i], rc[i], lc[i], rc[i]);
            }
        }
        char ifill[96];
        bool ints = st->bounds == AB_REDUCE && int_fill(in, ifill, sizeof ifill);
        for (int64_t k = 0; k < nk; k++, t++) {
            const cxla_shape *xs = &in->operands[k]->shape;
            size_t bytes = 0; /* the operand's at its bounds (a parameter leaf has no size) */
            if (cxla_shape_byte_size(xs, &bytes)) bytes = 0;
            cxla_strbuf_printf(b, "        (void)cz%" PRId64 ";\n", k);
            if (!bytes) continue;
            cxla_strbuf_puts(b, "        if (0");
            for (int64_t d = 0; d < xs->rank; d++)
                cxla_strbuf_printf(b, " || cz%" PRId64 "[%" PRId64 "] < %" PRId64, k, d,
                                   xs->dims[d]);
            cxla_strbuf_puts(b, ") {\n            char *t = (char *)");
            aot_put_leaf(a, c, st->tmp[t], b);
            cxla_strbuf_printf(b,
                               ";\n            memcpy(t, a[%" PRId64 "], %zu);\n"
                               "            %s_dfill(t, %d, ",
                               k, bytes, P, (int)xs->rank);
            put_dims(xs, b);
            cxla_strbuf_printf(b,
                               ", cz%" PRId64 ", %zu, %s);\n            a[%" PRId64 "] = t;\n"
                               "        }\n",
                               k, elem_bytes(xs),
                               st->bounds != AB_REDUCE ? "0"
                               : float_fill(in)        ? float_fill(in)
                               : ints                  ? ifill
                                                       : "a[1]",
                               k);
        }
        return NULL;
    }
    /* phase 2: the result's padding zeroed, its sizes kept. */
    for (int64_t e = 0; e < st->out_count && e < result_leaves(in); e++) {
        const cxla_shape *ys = result_leaf(in, e);
        int64_t l = st->out[e];
        if (!shape_dynamic(ys)) continue;
        if (c->leaves[l].size) {
            cxla_strbuf_printf(b, "        %s_dfill(r[%" PRId64 "], %d, ", P, e, (int)ys->rank);
            put_dims(ys, b);
            cxla_strbuf_printf(b, ", rz%" PRId64 ", %zu, 0);\n", e, elem_bytes(ys));
        }
        if (c->dyn_off && c->dyn_off[l] >= 0)
            cxla_strbuf_printf(b,
                               "        memcpy(dz + %" PRId64 ", rz%" PRId64 ", %" PRId64
                               " * sizeof(int64_t));\n",
                               c->dyn_off[l], e, ys->rank);
    }
    return NULL;
}

cxla_status aot_dyn_emit_size(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const cxla_shape *xs = &in->operands[0]->shape;
    int64_t nd = 0;
    int64_t dim = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd)[0];
    cxla_strbuf_puts(b, "        const int64_t *xz = ");
    aot_dyn_put_sizes(c, st->in[0], b);
    cxla_strbuf_puts(b, ";\n");
    if (in->opcode == CXLA_OP_GET_DIMENSION_SIZE) {
        /* The bound fits in s32 (else the size might not: refused). */
        if (xs->dims[dim] > INT32_MAX) return aot_no(in, "a bound beyond s32");
        cxla_strbuf_puts(b, "        int32_t v = (int32_t)xz[");
        cxla_strbuf_printf(b, "%" PRId64 "];\n        memcpy(", dim);
        aot_put_leaf(a, c, st->out[0], b);
        cxla_strbuf_puts(b, ", &v, sizeof v);\n        (void)xz;\n");
        return NULL;
    }
    const cxla_shape *vs = &in->operands[1]->shape;
    cxla_strbuf_printf(b, "        %s sv;\n        memcpy(&sv, ", cpu_emit_stype(vs->type));
    aot_put_leaf(a, c, st->in[1], b);
    cxla_strbuf_puts(b, ", sizeof sv);\n        int64_t size = (int64_t)sv;\n");
    cxla_strbuf_printf(b, "        if (size < 0 || size > %" PRId64 ")\n", xs->dims[dim]);
    char v1[48], v2[48];
    const char *vals[3] = {"size", num(v1, 48, dim), num(v2, 48, xs->dims[dim])};
    /* set-dimension-size's error is OUT_OF_RANGE in the interpreter and the JIT. */
    aot_dyn_put_fail(a, b, "            ", in, "ERROR_DYNAMIC_SIZE", EXEC_DYN_MSG_SET_SIZE, vals,
                     3);
    size_t bytes = c->leaves[st->out[0]].size;
    if (bytes && c->leaves[st->out[0]].parent != c->leaves[st->in[0]].parent) {
        /* The whole storage, as the interpreter's handler (its padding too). */
        cxla_strbuf_puts(b, "        memcpy(");
        aot_put_leaf(a, c, st->out[0], b);
        cxla_strbuf_puts(b, ", ");
        aot_put_leaf(a, c, st->in[0], b);
        cxla_strbuf_printf(b, ", %zu);\n", bytes);
    }
    int64_t off = c->dyn_off ? c->dyn_off[st->out[0]] : -1;
    if (off >= 0) {
        for (int64_t d = 0; d < xs->rank; d++) {
            if (d == dim)
                cxla_strbuf_printf(b, "        dz[%" PRId64 "] = size;\n", off + d);
            else
                cxla_strbuf_printf(b, "        dz[%" PRId64 "] = xz[%" PRId64 "];\n", off + d, d);
        }
    }
    cxla_strbuf_puts(b, "        (void)xz;\n");
    return NULL;
}

void aot_dyn_emit_begin(aot *a, const acomp *c, cxla_strbuf *b) {
    (void)a;
    cxla_strbuf_printf(b,
                       "    int64_t dz[%" PRId64 "]; /* the run-time sizes of dynamic leaves */\n"
                       "    (void)zin;\n    (void)zout;\n    (void)dz;\n",
                       c->dyn_total ? c->dyn_total : 1);
    for (int64_t i = 0; i < c->param_leaves; i++) {
        int64_t l = c->param_leaf[i];
        if (l < 0 || c->dyn_off[l] < 0) continue;
        const cxla_shape *s = c->leaves[l].shape;
        for (int64_t d = 0; d < s->rank; d++)
            cxla_strbuf_printf(b,
                               "    dz[%" PRId64 "] = zin && zin[%" PRId64 "] ? zin[%" PRId64
                               "][%" PRId64 "] : %" PRId64 ";\n",
                               c->dyn_off[l] + d, i, i, d, s->dims[d]);
    }
    /* Constants with dynamic dimensions: their literals' sizes (the bounds, from the
     * parser), set once per call; nothing writes them after. */
    for (int64_t l = 0; l < c->leaf_count; l++) {
        const aleaf *x = &c->leaves[l];
        if (x->kind != L_CONST || c->dyn_off[l] < 0 || !x->constant) continue;
        const cxla_literal *lit = aot_literal_leaf(x->constant->literal, x->sub);
        for (int64_t d = 0; d < x->shape->rank; d++) {
            int64_t size = lit ? cxla_literal_dynamic_size(lit, d) : -1;
            cxla_strbuf_printf(b, "    dz[%" PRId64 "] = %" PRId64 ";\n", c->dyn_off[l] + d,
                               size >= 0 ? size : x->shape->dims[d]);
        }
    }
}

void aot_dyn_emit_end(aot *a, const acomp *c, cxla_strbuf *b) {
    (void)a;
    for (int64_t k = 0; k < c->root_count; k++) {
        int64_t l = c->root[k];
        if (c->dyn_off[l] < 0) continue;
        cxla_strbuf_printf(b,
                           "    if (zout && zout[%" PRId64 "]) memcpy(zout[%" PRId64
                           "], dz + %" PRId64 ", %" PRId64 " * sizeof(int64_t));\n",
                           k, k, c->dyn_off[l], c->leaves[l].shape->rank);
    }
}

/* "{1, 0}" flags of the dynamic dims of |s|. */
static void put_flags(const cxla_shape *s, cxla_strbuf *b) {
    cxla_strbuf_puts(b, "{");
    for (int64_t d = 0; d < s->rank; d++)
        cxla_strbuf_printf(b, "%s%d", d ? ", " : "", exec_shape_dim_dynamic(s, d) ? 1 : 0);
    cxla_strbuf_puts(b, "}");
}

void aot_dyn_header(const aot *a, const cxla_shape *const *as, int64_t na,
                    const cxla_shape *const *rs, int64_t nr, cxla_strbuf *h) {
    const char *P = a->P;
    cxla_strbuf_puts(h, "/* Dynamic dimensions. Every array is laid out at its bounds (the byte "
                        "sizes\n * above are the bounds'), row-major. These leaves have dynamic "
                        "dimensions\n * (1 marks one):\n");
    for (int w = 0; w < 2; w++)
        for (int64_t i = 0; i < (w ? nr : na); i++) {
            const cxla_shape *s = (w ? rs : as)[i];
            if (!shape_dynamic(s)) continue;
            cxla_strbuf_printf(h, " *   %s[%" PRId64 "]: rank %" PRId64 ", dynamic ",
                               w ? "results" : "args", i, s->rank);
            put_flags(s, h);
            cxla_strbuf_puts(h, "\n");
        }
    cxla_strbuf_printf(
        h,
        " * %s_arg_dynamic[i] and %s_result_dynamic[i] hold those flags (NULL for a static\n"
        " * leaf). %s_run_dynamic takes the run-time sizes: arg_sizes[i] points at rank-many\n"
        " * sizes of args[i] (a static dimension's size is its dimension; NULL, or arg_sizes\n"
        " * NULL: the leaf at its bounds); a dynamic size must lie in 0..bound, else\n"
        " * %s_ERROR_DYNAMIC_SIZE naming the argument and dimension, and nothing is run. The\n"
        " * padding of an argument (its elements beyond the sizes) is never read. result_sizes[k]\n"
        " * (when it and result_sizes are not NULL) receives results[k]'s sizes; a result's\n"
        " * padding is zero. %s_run and %s_run_with run every argument at its bounds. Sizes\n"
        " * that the operations cannot take (two dynamic sizes that must agree but differ, a\n"
        " * result that cannot hold them) fail with %s_ERROR_DYNAMIC_MISMATCH and the\n"
        " * interpreter's message. */\n"
        "extern const unsigned char *const %s_arg_dynamic[];\n"
        "extern const unsigned char *const %s_result_dynamic[];\n"
        "int %s_run_dynamic(const %s_options *options, const void *const *args,\n"
        "                  const int64_t *const *arg_sizes, void *const *results,\n"
        "                  int64_t *const *result_sizes, void *scratch);\n\n",
        P, P, P, P, P, P, P, P, P, P, P);
}

void aot_dyn_helpers(const aot *a, cxla_strbuf *c) {
    const char *P = a->P;
    aot_dmove_helpers(a, c);
    cxla_strbuf_printf(
        c,
        "/* ---- dynamic shapes ---- */\n"
        "/* A failure whose message is |fmt| with each %% replaced by the next of |v| (%%%% is\n"
        " * a %%). */\n"
        "static int %s_dfail(const %s_options *opt, int code, const char *fmt, const int64_t "
        "*v) {\n"
        "    if (!opt || !opt->error || opt->error_size == 0) return code;\n"
        "    size_t n = 0, cap = opt->error_size - 1;\n"
        "    for (const char *p = fmt; *p && n < cap; p++) {\n"
        "        if (*p != '%%' || p[1] == '%%') {\n"
        "            opt->error[n++] = *p;\n"
        "            if (*p == '%%') p++;\n"
        "            continue;\n"
        "        }\n"
        "        char digits[24];\n"
        "        int k = 0;\n"
        "        int64_t x = *v++;\n"
        "        uint64_t u = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;\n"
        "        do {\n"
        "            digits[k++] = (char)('0' + (int)(u %% 10));\n"
        "            u /= 10;\n"
        "        } while (u);\n"
        "        if (x < 0) digits[k++] = '-';\n"
        "        while (k > 0 && n < cap) opt->error[n++] = digits[--k];\n"
        "    }\n"
        "    opt->error[n] = 0;\n"
        "    return code;\n"
        "}\n\n"
        "/* Sets the elements of the row-major array |buf| (|dims|, |elem| bytes each) at or\n"
        " * beyond |sizes| in some dimension (the padding) to the element at |fill| (zero\n"
        " * when NULL). */\n"
        "static void %s_dfill(void *buf, int rank, const int64_t *dims, const int64_t *sizes,\n"
        "                     size_t elem, const void *fill) {\n"
        "    int64_t idx[%d], n = 1;\n"
        "    for (int d = 0; d < rank; d++) {\n"
        "        n *= dims[d];\n"
        "        idx[d] = 0;\n"
        "    }\n"
        "    if (rank == 0 || n == 0) return;\n"
        "    for (int64_t i = 0; i < n; i++) {\n"
        "        int pad = 0;\n"
        "        for (int d = 0; d < rank; d++) pad |= idx[d] >= sizes[d];\n"
        "        if (pad) {\n"
        "            char *q = (char *)buf + (size_t)i * elem;\n"
        "            if (fill)\n"
        "                memcpy(q, fill, elem);\n"
        "            else\n"
        "                memset(q, 0, elem);\n"
        "        }\n"
        "        for (int d = rank - 1; d >= 0 && ++idx[d] == dims[d]; d--) idx[d] = 0;\n"
        "    }\n"
        "}\n\n",
        P, P, P, CXLA_MAX_RANK);
}

void aot_dyn_interface(const aot *a, const cxla_shape *const *as, int64_t na,
                       const cxla_shape *const *rs, int64_t nr, cxla_strbuf *c) {
    const char *P = a->P;
    for (int w = 0; w < 2; w++) {
        const char *what = w ? "result" : "arg";
        int64_t n = w ? nr : na;
        for (int64_t i = 0; i < n; i++) {
            const cxla_shape *s = (w ? rs : as)[i];
            if (!shape_dynamic(s)) continue;
            cxla_strbuf_printf(c, "static const unsigned char %s_%s%" PRId64 "_dyn[] = ", P, what,
                               i);
            put_flags(s, c);
            cxla_strbuf_puts(c, ";\n");
        }
        cxla_strbuf_printf(c, "const unsigned char *const %s_%s_dynamic[%" PRId64 "] = {", P, what,
                           n ? n : 1);
        for (int64_t i = 0; i < n; i++) {
            if (shape_dynamic((w ? rs : as)[i]))
                cxla_strbuf_printf(c, "%s%s_%s%" PRId64 "_dyn", i ? ", " : "", P, what, i);
            else
                cxla_strbuf_printf(c, "%s0", i ? ", " : "");
        }
        cxla_strbuf_puts(c, n ? "};\n" : "0};\n");
    }
    cxla_strbuf_printf(c,
                       "\nint %s_run_with(const %s_options *opt, const void *const *args, void "
                       "*const *results,\n               void *scratch) {\n"
                       "    return %s_run_sized(opt, args, 0, results, 0, scratch);\n}\n\n"
                       "int %s_run_dynamic(const %s_options *opt, const void *const *args,\n"
                       "                  const int64_t *const *arg_sizes, void *const *results,\n"
                       "                  int64_t *const *result_sizes, void *scratch) {\n",
                       P, P, P, P, P);
    for (int64_t i = 0; i < na; i++) {
        const cxla_shape *s = as[i];
        if (!cxla_type_is_array(s->type)) continue;
        cxla_strbuf_printf(c, "    if (arg_sizes && arg_sizes[%" PRId64 "]) {\n", i);
        for (int64_t d = 0; d < s->rank; d++) {
            if (exec_shape_dim_dynamic(s, d))
                cxla_strbuf_printf(c,
                                   "        if (arg_sizes[%" PRId64 "][%" PRId64
                                   "] < 0 || arg_sizes[%" PRId64 "][%" PRId64 "] > %" PRId64 ")\n",
                                   i, d, i, d, s->dims[d]);
            else
                cxla_strbuf_printf(
                    c, "        if (arg_sizes[%" PRId64 "][%" PRId64 "] != %" PRId64 ")\n", i, d,
                    s->dims[d]);
            cxla_strbuf t;
            cxla_strbuf_init(&t);
            if (exec_shape_dim_dynamic(s, d))
                cxla_strbuf_printf(&t,
                                   "%s_run_dynamic: arg_sizes[%" PRId64 "][%" PRId64
                                   "] is %%, outside the bounds 0..%" PRId64
                                   " of dimension %" PRId64 " of args[%" PRId64 "]",
                                   P, i, d, s->dims[d], d, i);
            else
                cxla_strbuf_printf(&t,
                                   "%s_run_dynamic: arg_sizes[%" PRId64 "][%" PRId64
                                   "] is %%, but dimension %" PRId64 " of args[%" PRId64
                                   "] is static (%" PRId64 ")",
                                   P, i, d, d, i, s->dims[d]);
            cxla_strbuf_printf(c, "            return %s_dfail(opt, %s_ERROR_DYNAMIC_SIZE, ", P, P);
            aot_put_string(c, t.data ? t.data : "", t.len);
            cxla_strbuf_printf(c, ", &arg_sizes[%" PRId64 "][%" PRId64 "]);\n", i, d);
            cxla_strbuf_free(&t);
        }
        cxla_strbuf_puts(c, "    }\n");
    }
    cxla_strbuf_printf(c,
                       "    return %s_run_sized(opt, args, arg_sizes, results, result_sizes, "
                       "scratch);\n}\n\n",
                       P);
}

void aot_dyn_put_zlist(const acomp *c, const int64_t *ls, int64_t n, bool writable,
                       const char *name, const char *ind, cxla_strbuf *b) {
    cxla_strbuf_printf(b, "%s%sint64_t *const %s[%" PRId64 "] = {", ind, writable ? "" : "const ",
                       name, n ? n : 1);
    for (int64_t k = 0; k < n; k++) {
        int64_t off = c->dyn_off ? c->dyn_off[ls[k]] : -1;
        if (off >= 0)
            cxla_strbuf_printf(b, "%sdz + %" PRId64, k ? ", " : "", off);
        else
            cxla_strbuf_printf(b, "%s0", k ? ", " : "");
    }
    cxla_strbuf_printf(b, n ? "};\n%s(void)%s;\n" : "0};\n%s(void)%s;\n", ind, name);
}

void aot_dyn_put_while_sizes(const acomp *c, const astep *st, const char *ind, cxla_strbuf *b) {
    for (int64_t k = 0; k < st->out_count && k < st->in_count; k++) {
        int64_t off = c->dyn_off ? c->dyn_off[st->out[k]] : -1;
        const cxla_shape *s = c->leaves[st->out[k]].shape;
        if (off < 0 || !s || s->rank == 0) continue;
        cxla_strbuf_printf(b, "%smemcpy(dz + %" PRId64 ", ", ind, off);
        aot_dyn_put_sizes(c, st->in[k], b);
        cxla_strbuf_printf(b, ", %" PRId64 " * sizeof(int64_t));\n", s->rank);
    }
}

void aot_dyn_put_reset(const acomp *c, const int64_t *ls, int64_t n, const char *ind,
                       cxla_strbuf *b) {
    for (int64_t k = 0; k < n; k++) {
        int64_t off = c->dyn_off ? c->dyn_off[ls[k]] : -1;
        const cxla_shape *s = c->leaves[ls[k]].shape;
        for (int64_t d = 0; off >= 0 && s && d < s->rank; d++)
            cxla_strbuf_printf(b, "%sdz[%" PRId64 "] = %" PRId64 ";\n", ind, off + d, s->dims[d]);
    }
}
