/* Bounded dynamic shapes on the cpu backend's steps: which instructions run a kernel
 * generated at their bounds (cpu_bounds_kind, read by cpu_backend.c to generate those
 * kernels and by cpu_steps.c to build their steps), the reducers whose init value fills a
 * reduce's padding (cpu_bounds_identity), and the get-dimension-size and
 * set-dimension-size instructions that run as steps of their own (cpu_size_step_ok).
 * docs/semantics.md, "Bounded dynamic shapes run as steps too". */
#include "cpu/cpu_steps.h"
#include "exec/dynamic.h"
#include "literal/literal_internal.h"

static bool static_shape(const cxla_shape *s) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            if (!static_shape(&s->elements[i])) return false;
        return true;
    }
    return !cxla_type_is_array(s->type) || cxla_shape_is_static(s);
}

static bool static_instr(const cxla_instr *in) {
    if (!static_shape(&in->shape)) return false;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (!static_shape(&in->operands[k]->shape)) return false;
    return true;
}

static bool bounded_shape(const cxla_shape *s) {
    if (!cxla_type_is_array(s->type)) return true;
    for (int64_t d = 0; d < s->rank; d++)
        if (s->dims[d] == CXLA_DIM_UNBOUNDED) return false;
    return true;
}

/* Whether the array |s| has whole-byte elements (packed sub-byte arrays are left to the
 * handler: the padding fill and the zeroing work on whole elements). */
bool cpu_whole_elements(const cxla_shape *s, size_t *out_elem) {
    int64_t count = 0;
    size_t size = 0;
    if (!cxla_type_is_array(s->type) || cxla_shape_element_count(s, &count) ||
        cxla_shape_byte_size(s, &size))
        return false;
    if (count == 0) {
        *out_elem = 1;
        return true;
    }
    size_t elem = size / (size_t)count;
    *out_elem = elem;
    return elem > 0 && elem * (size_t)count == size;
}

/* The operation of a reducer that is one binary operation of its two parameters
 * (CXLA_OP_COUNT: another one). */
static cxla_opcode reducer_op(const cxla_instr *in) {
    const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    if (!c || !c->root || c->param_count != 2 || c->root->operand_count != 2) return CXLA_OP_COUNT;
    const cxla_instr *r = c->root, *a = r->operands[0], *b = r->operands[1];
    if (a->opcode != CXLA_OP_PARAMETER || b->opcode != CXLA_OP_PARAMETER ||
        a->parameter_number == b->parameter_number || r->shape.type != in->shape.type)
        return CXLA_OP_COUNT;
    switch (r->opcode) {
    case CXLA_OP_ADD:
    case CXLA_OP_MULTIPLY:
    case CXLA_OP_MAXIMUM:
    case CXLA_OP_MINIMUM:
    case CXLA_OP_AND:
    case CXLA_OP_OR:
    case CXLA_OP_XOR: return r->opcode;
    default: return CXLA_OP_COUNT;
    }
}

static bool is_float(cxla_type t) {
    return t == CXLA_F16 || t == CXLA_BF16 || t == CXLA_F32 || t == CXLA_F64;
}

static bool is_plain_int(cxla_type t) {
    switch (t) {
    case CXLA_PRED:
    case CXLA_S8:
    case CXLA_S16:
    case CXLA_S32:
    case CXLA_S64:
    case CXLA_U8:
    case CXLA_U16:
    case CXLA_U32:
    case CXLA_U64: return true;
    default: return false;
    }
}

/* Whether the value at |p| of type |t| leaves every value unchanged under |op|: padding
 * filled with it then adds nothing to a reduction. (+0 for a float sum: the fast order's
 * tolerance covers a -0 sum that comes out +0.) */
static bool is_identity(cxla_opcode op, cxla_type t, const void *p) {
    if (is_float(t)) {
        double v = cxla_load_f64(t, p);
        switch (op) {
        case CXLA_OP_ADD: return v == 0;
        case CXLA_OP_MULTIPLY: return v == 1;
        case CXLA_OP_MAXIMUM: return v < 0 && v * 0.5 == v; /* -inf */
        case CXLA_OP_MINIMUM: return v > 0 && v * 0.5 == v; /* +inf */
        default: return false;
        }
    }
    if (t == CXLA_PRED) {
        bool v = *(const uint8_t *)p != 0;
        return op == CXLA_OP_AND || op == CXLA_OP_MINIMUM ? v : !v;
    }
    bool is_signed = t == CXLA_S8 || t == CXLA_S16 || t == CXLA_S32 || t == CXLA_S64;
    int bits = t == CXLA_S8 || t == CXLA_U8     ? 8
               : t == CXLA_S16 || t == CXLA_U16 ? 16
               : t == CXLA_S32 || t == CXLA_U32 ? 32
                                                : 64;
    uint64_t mask = bits == 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
    uint64_t v = cxla_load_u64(t, p) & mask;
    uint64_t top = is_signed ? mask >> 1 : mask; /* the largest value */
    uint64_t bottom = is_signed ? (top + 1) & mask : 0;
    switch (op) {
    case CXLA_OP_ADD:
    case CXLA_OP_OR:
    case CXLA_OP_XOR: return v == 0;
    case CXLA_OP_MULTIPLY: return v == 1;
    case CXLA_OP_AND: return v == mask;
    case CXLA_OP_MAXIMUM: return v == bottom;
    case CXLA_OP_MINIMUM: return v == top;
    default: return false;
    }
}

int cpu_bounds_kind(const cxla_instr *in, bool fast_math) {
    size_t elem = 0;
    if (static_instr(in)) return B_STATIC;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (!cpu_whole_elements(&in->operands[k]->shape, &elem)) return B_STATIC;
    const cxla_shape *s = &in->shape;
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            if (!cpu_whole_elements(&s->elements[i], &elem)) return B_STATIC;
    } else if (!cpu_whole_elements(s, &elem)) {
        return B_STATIC;
    }
    if (exec_dynamic_positionwise(in)) return B_POSITIONWISE;
    int lib = cpu_dyn_lib_kind(in); /* sort, gather, scatter: cpu_dynamic_lib.c */
    if (lib != B_STATIC) return lib;
    if (cpu_dynwin_fill_ok(in)) return B_WINDOW; /* reduce-window, padding filled: cpu_dynwin.c */
    /* A dot whose operands' padding is zeroed first: integer dots are exact in any order,
     * float ones only in the fast order (the zeros change the order of the sum). */
    if (in->opcode == CXLA_OP_DOT && in->operand_count == 2 && cxla_type_is_array(s->type) &&
        !cxla_instr_attr(in, CXLA_ATTR_SPARSITY)) {
        for (int64_t k = 0; k < 2; k++)
            for (int64_t d = 0; d < in->operands[k]->shape.rank; d++)
                if (in->operands[k]->shape.dims[d] < 0) return B_STATIC;
        if (is_float(s->type) && !fast_math) return B_STATIC;
        return is_float(s->type) || is_plain_int(s->type) ? B_DOT : B_STATIC;
    }
    /* A reduce of one input whose padding its init value can fill: integer, logical,
     * maximum and minimum reductions are exact in any order; float sums and products only
     * in the fast order (exact math keeps the interpreter's handler, whose pairwise order
     * depends on the size). */
    if (in->opcode != CXLA_OP_REDUCE || in->operand_count != 2 || !cxla_type_is_array(s->type) ||
        in->operands[1]->shape.rank != 0 || in->operands[0]->shape.type != s->type ||
        in->operands[1]->shape.type != s->type)
        return B_STATIC;
    for (int64_t d = 0; d < in->operands[0]->shape.rank; d++)
        if (in->operands[0]->shape.dims[d] < 0) return B_STATIC;
    cxla_opcode op = reducer_op(in);
    if (op == CXLA_OP_COUNT || !(is_float(s->type) || is_plain_int(s->type))) return B_STATIC;
    if (is_float(s->type) && (op == CXLA_OP_AND || op == CXLA_OP_OR || op == CXLA_OP_XOR))
        return B_STATIC;
    if (is_float(s->type) && !fast_math && (op == CXLA_OP_ADD || op == CXLA_OP_MULTIPLY))
        return B_STATIC;
    return B_REDUCE;
}

bool cpu_bounds_identity(const cxla_instr *in, const void *init) {
    return is_identity(reducer_op(in), in->shape.type, init);
}

/* get-dimension-size or set-dimension-size that a step of its own runs (S_SIZE): an array
 * operand and one dimension in range (anything else goes to the handler for its error). */
bool cpu_size_step_ok(const cxla_instr *in) {
    if (in->opcode != CXLA_OP_GET_DIMENSION_SIZE && in->opcode != CXLA_OP_SET_DIMENSION_SIZE)
        return false;
    if (in->operand_count < 1) return false;
    const cxla_shape *x = &in->operands[0]->shape;
    int64_t nd = 0;
    const int64_t *dd = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    if (!cxla_type_is_array(x->type) || !bounded_shape(x) || nd != 1 || dd[0] < 0 ||
        dd[0] >= x->rank)
        return false;
    if (in->opcode == CXLA_OP_GET_DIMENSION_SIZE)
        return in->operand_count == 1 && in->shape.type == CXLA_S32 && in->shape.rank == 0;
    const cxla_shape *v = &in->operands[1]->shape, *y = &in->shape;
    if (in->operand_count != 2 || !cxla_type_is_integer(v->type) || v->rank != 0 ||
        y->type != x->type || y->rank != x->rank || !bounded_shape(y))
        return false;
    for (int64_t d = 0; d < x->rank; d++)
        if (y->dims[d] != x->dims[d]) return false;
    return true;
}
