/* The checks XLA's HLO parser makes once every name is resolved (hlo_parser.cc rejects
 * these texts; see the invalid/ conformance cases): operand counts, the called
 * computations and attributes each opcode takes, conditional branches, single-dimension
 * attributes, custom-call layout constraints and async chains. Whether shapes fit the
 * operation is the verifier's job (cxla_verify_module), not this file's. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/lexer.h"

/* The opcode whose attributes an instruction carries: the wrapped one for async sugar. */
static cxla_opcode effective_opcode(const cxla_instr *in) {
    if ((in->opcode == CXLA_OP_ASYNC_START || in->opcode == CXLA_OP_ASYNC_UPDATE ||
         in->opcode == CXLA_OP_ASYNC_DONE) &&
        in->async_wrapped != CXLA_OP_COUNT)
        return in->async_wrapped;
    return in->opcode;
}

static bool is_async(cxla_opcode op) {
    return op == CXLA_OP_ASYNC_START || op == CXLA_OP_ASYNC_UPDATE || op == CXLA_OP_ASYNC_DONE;
}

static unsigned flags_of(cxla_opcode op) {
    return cxla_opcode_get_info(op)->flags;
}

/* Whether |op| (the instruction's own opcode |own|) may carry attribute |id|. */
static bool attr_allowed(cxla_attr_id id, cxla_opcode op, cxla_opcode own) {
    switch (id) {
    case CXLA_ATTR_CONDITION:
    case CXLA_ATTR_BODY: return op == CXLA_OP_WHILE;
    case CXLA_ATTR_SELECT:
    case CXLA_ATTR_SCATTER: return op == CXLA_OP_SELECT_AND_SCATTER;
    case CXLA_ATTR_TRUE_COMPUTATION:
    case CXLA_ATTR_FALSE_COMPUTATION:
    case CXLA_ATTR_BRANCH_COMPUTATIONS: return op == CXLA_OP_CONDITIONAL;
    case CXLA_ATTR_TO_APPLY:
        return (flags_of(op) & (CXLA_OPF_TO_APPLY | CXLA_OPF_TO_APPLY_OPTIONAL)) != 0;
    case CXLA_ATTR_IS_COMPOSITE: return op == CXLA_OP_CALL;
    case CXLA_ATTR_CALLED_COMPUTATIONS: return op == CXLA_OP_CUSTOM_CALL;
    case CXLA_ATTR_CALLS: return own == CXLA_OP_FUSION || is_async(own);
    case CXLA_ATTR_RESULT_ACCURACY: return (flags_of(op) & CXLA_OPF_RESULT_ACCURACY) != 0;
    default: return true;
    }
}

bool cxla_hlo_attr_allowed(const cxla_instr *in, cxla_attr_id id) {
    return attr_allowed(id, effective_opcode(in), in->opcode);
}

typedef struct checker {
    cxla_hlo_lexer *lx;
    const cxla_hlo_instr_info *info;
} checker;

static size_t pos_of(const checker *k, const cxla_instr *in) {
    return k->info[in->id].pos;
}

static const char *opname(const cxla_instr *in) {
    return cxla_opcode_name(in->opcode);
}

static bool check_operand_count(const checker *k, const cxla_instr *in) {
    int64_t n = in->operand_count;
    cxla_opcode op = in->opcode;
    int arity = cxla_opcode_get_info(op)->arity;
    size_t pos = pos_of(k, in);
    if ((op == CXLA_OP_ASYNC_UPDATE || op == CXLA_OP_ASYNC_DONE) && n != 1)
        return cxla_hlo_error(k->lx, pos,
                              "No operand found for AsyncUpdate and AsyncDone: '%s' "
                              "takes exactly one operand (the async-start or "
                              "async-update it continues), not %" PRId64,
                              in->name, n);
    if (arity >= 0 && n != arity)
        return cxla_hlo_error(k->lx, pos, "%s '%s' takes %d operand%s, not %" PRId64, opname(in),
                              in->name, arity, arity == 1 ? "" : "s", n);
    const char *need = NULL;
    switch (op) {
    case CXLA_OP_CONDITIONAL:
        need = n < 1 ? "at least one (the predicate or branch index)" : NULL;
        break;
    case CXLA_OP_REDUCE:
    case CXLA_OP_REDUCE_WINDOW: need = n < 2 || n % 2 ? "an even number, at least 2" : NULL; break;
    case CXLA_OP_SCATTER: need = n < 3 || n % 2 == 0 ? "an odd number, at least 3" : NULL; break;
    case CXLA_OP_DYNAMIC_RESHAPE:
        need = n < 1 ? "at least one (DynamicReshape requires at least one operand.)" : NULL;
        break;
    case CXLA_OP_MAP:
    case CXLA_OP_SORT:
    case CXLA_OP_CONCATENATE:
    case CXLA_OP_DYNAMIC_SLICE: need = n < 1 ? "at least one" : NULL; break;
    case CXLA_OP_DYNAMIC_UPDATE_SLICE: need = n < 2 ? "at least two" : NULL; break;
    default: break;
    }
    if (need)
        return cxla_hlo_error(k->lx, pos, "%s '%s' has %" PRId64 " operands: it takes %s",
                              opname(in), in->name, n, need);
    return true;
}

static bool require(const checker *k, const cxla_instr *in, cxla_attr_id id) {
    if (cxla_instr_attr(in, id)) return true;
    return cxla_hlo_error(k->lx, pos_of(k, in), "%s '%s' needs the attribute %s", opname(in),
                          in->name, cxla_attr_get_info(id)->name);
}

static bool check_attrs(const checker *k, const cxla_instr *in) {
    cxla_opcode op = effective_opcode(in);
    for (int64_t i = 0; i < in->attr_count; i++) {
        const cxla_attr *a = &in->attrs[i];
        if (!attr_allowed(a->id, op, in->opcode))
            return cxla_hlo_error(k->lx, pos_of(k, in), "unexpected attribute \"%s\" for %s '%s'",
                                  a->name, cxla_opcode_name(op), in->name);
        if (a->id == CXLA_ATTR_DIMENSIONS)
            for (int64_t d = 0; d < a->v.ints.count; d++)
                if (a->v.ints.values[d] < 0)
                    return cxla_hlo_error(k->lx, pos_of(k, in),
                                          "dimension %" PRId64 " of '%s' is "
                                          "negative",
                                          a->v.ints.values[d], in->name);
    }
    /* Required called computations. */
    if (flags_of(in->opcode) & CXLA_OPF_TO_APPLY) return require(k, in, CXLA_ATTR_TO_APPLY);
    switch (in->opcode) {
    case CXLA_OP_WHILE:
        return require(k, in, CXLA_ATTR_CONDITION) && require(k, in, CXLA_ATTR_BODY);
    case CXLA_OP_SELECT_AND_SCATTER:
        return require(k, in, CXLA_ATTR_SELECT) && require(k, in, CXLA_ATTR_SCATTER);
    case CXLA_OP_FUSION: return require(k, in, CXLA_ATTR_CALLS);
    case CXLA_OP_ASYNC_START:
        return in->async_wrapped != CXLA_OP_COUNT || require(k, in, CXLA_ATTR_CALLS);
    default: return true;
    }
}

/* Attributes that hold exactly one dimension, and the ones that must be there. */
static bool check_dimensions(const checker *k, const cxla_instr *in) {
    /* The sugared X-update / X-done inherit the wrapped operation from their X-start and
     * need none of its attributes (XLA parses them on the start only). */
    if ((in->opcode == CXLA_OP_ASYNC_UPDATE || in->opcode == CXLA_OP_ASYNC_DONE) &&
        in->async_wrapped != CXLA_OP_COUNT)
        return true;
    cxla_opcode op = effective_opcode(in);
    bool one = false, needed = false;
    switch (op) {
    case CXLA_OP_ALL_GATHER:
    case CXLA_OP_ALL_GATHER_START:
    case CXLA_OP_REDUCE_SCATTER:
    case CXLA_OP_GET_DIMENSION_SIZE:
    case CXLA_OP_SET_DIMENSION_SIZE:
    case CXLA_OP_CONCATENATE:
    case CXLA_OP_SORT: one = needed = true; break;
    case CXLA_OP_REDUCE:
    case CXLA_OP_TRANSPOSE:
    case CXLA_OP_REVERSE:
    case CXLA_OP_SCAN: needed = true; break;
    default: break;
    }
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_DIMENSIONS);
    if (!a) return !needed || require(k, in, CXLA_ATTR_DIMENSIONS);
    int64_t n = a->v.ints.count;
    if (one && n != 1)
        return cxla_hlo_error(k->lx, pos_of(k, in),
                              "%s '%s' needs exactly one dimension in "
                              "dimensions={...}, found %" PRId64,
                              cxla_opcode_name(op), in->name, n);
    if (op == CXLA_OP_ALL_TO_ALL && n > 1)
        return cxla_hlo_error(k->lx, pos_of(k, in),
                              "all-to-all '%s' takes at most one split "
                              "dimension, found %" PRId64,
                              in->name, n);
    return true;
}

static bool check_conditional(const checker *k, const cxla_instr *in) {
    if (in->opcode != CXLA_OP_CONDITIONAL || in->operand_count < 1 || !in->operands[0]) return true;
    const cxla_shape *s = &in->operands[0]->shape;
    size_t pos = pos_of(k, in);
    if (s->type == CXLA_TYPE_INVALID) return true;
    if (s->type == CXLA_TUPLE || s->rank != 0)
        return cxla_hlo_error(k->lx, pos,
                              "The first operand must be a scalar of PRED or S32 "
                              "(conditional '%s')",
                              in->name);
    if (s->type == CXLA_PRED) {
        if (cxla_instr_attr(in, CXLA_ATTR_BRANCH_COMPUTATIONS))
            return cxla_hlo_error(k->lx, pos,
                                  "unexpected attribute \"branch_computations\" for "
                                  "conditional '%s' with a PRED predicate (it takes "
                                  "true_computation and false_computation)",
                                  in->name);
        if (!require(k, in, CXLA_ATTR_TRUE_COMPUTATION) ||
            !require(k, in, CXLA_ATTR_FALSE_COMPUTATION))
            return false;
        if (in->operand_count != 3)
            return cxla_hlo_error(k->lx, pos,
                                  "conditional '%s' with a PRED predicate takes 3 "
                                  "operands, not %" PRId64,
                                  in->name, in->operand_count);
        return true;
    }
    if (s->type != CXLA_S32)
        return cxla_hlo_error(k->lx, pos,
                              "The first operand must be a scalar of PRED or S32 "
                              "(conditional '%s')",
                              in->name);
    if (cxla_instr_attr(in, CXLA_ATTR_TRUE_COMPUTATION) ||
        cxla_instr_attr(in, CXLA_ATTR_FALSE_COMPUTATION))
        return cxla_hlo_error(k->lx, pos,
                              "unexpected attribute true_computation/"
                              "false_computation for conditional '%s' with an S32 "
                              "branch index",
                              in->name);
    if (!require(k, in, CXLA_ATTR_BRANCH_COMPUTATIONS)) return false;
    int64_t branches = cxla_instr_attr(in, CXLA_ATTR_BRANCH_COMPUTATIONS)->v.comps.count;
    if (branches != in->operand_count - 1 || branches < 1)
        return cxla_hlo_error(
            k->lx, pos, "conditional '%s' has %" PRId64 " branches but %" PRId64 " branch operands",
            in->name, branches, in->operand_count - 1);
    return true;
}

static bool check_layout_constraints(const checker *k, const cxla_instr *in) {
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS);
    if (!a) return true;
    size_t pos = pos_of(k, in);
    if (a->v.shapes.count != in->operand_count)
        return cxla_hlo_error(k->lx, pos,
                              "Expected %" PRId64 " operand layout constraints, %" PRId64
                              " given (custom-call '%s')",
                              in->operand_count, a->v.shapes.count, in->name);
    for (int64_t i = 0; i < in->operand_count; i++) {
        const cxla_shape *c = &a->v.shapes.items[i], *o = &in->operands[i]->shape;
        if (o->type == CXLA_TYPE_INVALID || cxla_shape_compatible(c, o)) continue;
        char *cs = cxla_shape_to_string(c, 0), *os = cxla_shape_to_string(o, 0);
        cxla_hlo_error(k->lx, pos,
                       "Operand layout constraint shape %s for operand %" PRId64
                       " is not compatible with operand shape %s",
                       cs ? cs : "?", i, os ? os : "?");
        free(cs);
        free(os);
        return false;
    }
    return true;
}

/* async-start / -update / -done: a chain from one start, same wrapped operation, same
 * computation and thread; start and update shapes ((operands...), result, context...). */
static bool check_async(const checker *k, const cxla_instr *in) {
    size_t pos = pos_of(k, in);
    cxla_opcode op = in->opcode;
    if (!is_async(op)) return true;
    if (op != CXLA_OP_ASYNC_DONE) {
        const cxla_shape *s = &in->shape;
        bool good =
            s->type == CXLA_TUPLE && s->tuple_count >= 2 && s->elements[0].type == CXLA_TUPLE;
        if (good && op == CXLA_OP_ASYNC_START) {
            good = s->elements[0].tuple_count == in->operand_count;
            for (int64_t i = 0; good && i < in->operand_count; i++)
                good = in->operands[i]->shape.type == CXLA_TYPE_INVALID ||
                       cxla_shape_compatible(&s->elements[0].elements[i], &in->operands[i]->shape);
        }
        if (!good)
            return cxla_hlo_error(k->lx, pos,
                                  "AsyncStart and AsyncUpdate expect the shape to be "
                                  "a tuple of at least two elements, the first the "
                                  "tuple of the operand shapes ('%s')",
                                  in->name);
    }
    if (op == CXLA_OP_ASYNC_START) return true;
    /* Walk back to the chain's start. */
    const cxla_instr *start = in->operands[0];
    for (int64_t steps = 0; start && start->opcode == CXLA_OP_ASYNC_UPDATE &&
                            start->operand_count == 1 && steps < in->parent->instr_count;
         steps++)
        start = start->operands[0];
    const cxla_instr *prev = in->operands[0];
    if (prev->opcode == CXLA_OP_ASYNC_DONE)
        return cxla_hlo_error(k->lx, pos,
                              "AsyncUpdate and AsyncDone cannot have AsyncDone as "
                              "operand. ('%s' uses '%s')",
                              in->name, prev->name);
    if (!start || start->opcode != CXLA_OP_ASYNC_START ||
        (prev->opcode != CXLA_OP_ASYNC_START && prev->opcode != CXLA_OP_ASYNC_UPDATE))
        return cxla_hlo_error(k->lx, pos,
                              "%s '%s' must follow an async-start or async-update, "
                              "not '%s'",
                              opname(in), in->name, prev->name);
    /* The wrapped operation. */
    cxla_opcode start_wrapped = start->async_wrapped;
    const cxla_computation *start_calls = cxla_instr_called(start, CXLA_ATTR_CALLS);
    if (start_wrapped == CXLA_OP_COUNT && start_calls && start_calls->root)
        start_wrapped = start_calls->root->opcode;
    if (in->async_wrapped != CXLA_OP_COUNT && start_wrapped != CXLA_OP_COUNT &&
        in->async_wrapped != start_wrapped)
        return cxla_hlo_error(k->lx, pos, "Expect async wrapped opcode to be %s, but got %s ('%s')",
                              cxla_opcode_name(start_wrapped), cxla_opcode_name(in->async_wrapped),
                              in->name);
    const cxla_computation *calls = cxla_instr_called(in, CXLA_ATTR_CALLS);
    if (calls && start_calls && calls != start_calls)
        return cxla_hlo_error(k->lx, pos,
                              "Expect async_wrapped_computation to be %s, but got %s "
                              "('%s')",
                              start_calls->name, calls->name, in->name);
    const cxla_attr *thread = cxla_instr_attr(in, CXLA_ATTR_ASYNC_EXECUTION_THREAD);
    if (thread) {
        const cxla_attr *st = cxla_instr_attr(start, CXLA_ATTR_ASYNC_EXECUTION_THREAD);
        const char *want = st ? st->v.s : "main";
        if (strcmp(want, thread->v.s) != 0)
            return cxla_hlo_error(k->lx, pos,
                                  "Expect async_execution_thread to be %s, but got "
                                  "%s ('%s')",
                                  want, thread->v.s, in->name);
    }
    return true;
}

static bool check_instr(const checker *k, const cxla_instr *in) {
    if ((k->info[in->id].flags & CXLA_HLO_SHAPE_OMITTED) && cxla_instr_attr(in, CXLA_ATTR_ORIGIN))
        return cxla_hlo_error(k->lx, pos_of(k, in),
                              "an original value (origin=...) needs the "
                              "instruction's shape written ('%s')",
                              in->name);
    return check_operand_count(k, in) && check_attrs(k, in) && check_dimensions(k, in) &&
           check_conditional(k, in) && check_layout_constraints(k, in) && check_async(k, in);
}

bool cxla_hlo_check_module(cxla_hlo_lexer *lx, const cxla_module *m,
                           const cxla_hlo_instr_info *info) {
    checker k = {lx, info};
    for (int64_t c = 0; c < m->comp_count; c++) {
        const cxla_computation *comp = m->comps[c];
        for (int64_t i = 0; i < comp->instr_count; i++)
            if (!check_instr(&k, comp->instrs[i])) return false;
    }
    return true;
}
