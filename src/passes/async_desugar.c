/* Async desugaring: every async-start in sugar form (`negate-start(x)`, `reduce-start`,
 * `call-start`, `custom-call-start` ...: an ASYNC_START whose async_wrapped names the
 * operation, with the operation's attributes on the start) becomes the general form XLA
 * holds it in, `async-start(x), calls=%wrapped`: a new computation with one parameter
 * per operand (in operand order, an operand used twice is two parameters, so that {0}
 * stays the tuple of the parameters) and the wrapped operation as its root, with the
 * start's attributes (called computations, frontend attributes, backend config, metadata;
 * not control-predecessors, sharding, origin or statistics, which describe the start) and
 * {1}'s shape, layouts included. Its async-update and async-done lose the sugar too (and
 * any operation attributes older dumps repeat there). The interpreter runs both forms the
 * same way (interp_async.c: the wrapped operation on the operands with {1} as its shape,
 * by its own dynamic rule), so every backend then runs the wrapped operation through the
 * one path of a wrapped computation: its kernel, library call, service step or control
 * flow, also over dynamic shapes and ahead of time.
 *
 * Left alone: the dedicated async opcodes (all-reduce-start, all-gather-start,
 * collective-permute-start, copy-start, send, recv: no ASYNC_START), an async-start that
 * already has calls=, and a sugar start whose shapes do not line up (a state that is not
 * ((operands...), result, context...) with {0} holding the operands' shapes, or {1} not
 * what shape inference gives the wrapped operation): the interpreter's handler then runs
 * it, with its error. The parser and printer keep the sugar; only pipelines run this. */
#include <string.h>

#include "passes/passes_internal.h"

/* Attributes that describe the start itself rather than the operation it wraps. */
static bool start_only(cxla_attr_id id) {
    return id == CXLA_ATTR_CONTROL_PREDECESSORS || id == CXLA_ATTR_SHARDING ||
           id == CXLA_ATTR_ORIGIN || id == CXLA_ATTR_STATISTICS;
}

/* Attributes any instruction may carry, which the start, update and done keep. */
static bool generic(cxla_attr_id id) {
    return start_only(id) || id == CXLA_ATTR_METADATA || id == CXLA_ATTR_FRONTEND_ATTRIBUTES;
}

/* Keeps only |in|'s generic attributes, in a new list (the old one may be shared). */
static cxla_status keep_generic_attrs(cxla_instr *in, cxla_arena *arena) {
    int64_t n = 0;
    for (int64_t j = 0; j < in->attr_count; j++) n += generic(in->attrs[j].id);
    cxla_attr *kept = n ? cxla_arena_alloc_array(arena, (size_t)n, sizeof(*kept)) : NULL;
    if (n && !kept) return PASSES_OOM();
    n = 0;
    for (int64_t j = 0; j < in->attr_count; j++)
        if (generic(in->attrs[j].id)) kept[n++] = in->attrs[j]; /* still sorted */
    in->attrs = kept;
    in->attr_count = n;
    return NULL;
}

/* Whether sugar start |in| can become the general form: its state is ((operands...),
 * result, context...) with {0} the operands' shapes, and {1} is what shape inference gives
 * the wrapped operation on these operands and attributes. */
static bool lines_up(cxla_instr *in, cxla_arena *arena) {
    const cxla_shape *d = &in->shape;
    if (d->type != CXLA_TUPLE || d->tuple_count < 2 || d->elements[0].type != CXLA_TUPLE ||
        d->elements[0].tuple_count != in->operand_count)
        return false;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (!cxla_shape_compatible(&d->elements[0].elements[k], &in->operands[k]->shape))
            return false;
    unsigned flags = cxla_opcode_get_info(in->async_wrapped)->flags;
    if (flags & (CXLA_OPF_ASYNC_START | CXLA_OPF_ASYNC_DONE)) return false;
    if (in->async_wrapped == CXLA_OP_ASYNC_UPDATE || in->async_wrapped == CXLA_OP_PARAMETER)
        return false;
    cxla_instr w = *in;
    w.opcode = in->async_wrapped;
    w.async_wrapped = CXLA_OP_COUNT;
    w.shape = d->elements[1];
    cxla_shape inferred;
    cxla_status s = cxla_infer_shape(&w, arena, &inferred);
    bool ok = !s && cxla_shape_compatible(&d->elements[1], &inferred);
    cxla_status_free(s);
    return ok;
}

static cxla_status desugar(cxla_instr *in, bool *changed) {
    cxla_module *m = in->parent->module;
    if (!lines_up(in, m->arena)) return NULL;
    const char *op = cxla_opcode_name(in->async_wrapped);
    cxla_strbuf base;
    cxla_strbuf_init(&base);
    cxla_strbuf_printf(&base, "wrapped_%s", op);
    const char *name = base.data ? cxla_module_unique_name(m, base.data) : NULL;
    cxla_strbuf_free(&base);
    if (!name) return PASSES_OOM();
    cxla_computation *w = NULL;
    CXLA_RETURN_IF_ERROR(cxla_module_add_computation(m, name, &w));
    int64_t n = in->operand_count;
    cxla_instr **params = cxla_arena_alloc_array(m->arena, (size_t)(n ? n : 1), sizeof(*params));
    if (!params) return PASSES_OOM();
    for (int64_t k = 0; k < n; k++) {
        CXLA_RETURN_IF_ERROR(passes_add(w, CXLA_OP_PARAMETER, "param", &in->operands[k]->shape, 0,
                                        NULL, &params[k]));
        params[k]->parameter_number = k;
    }
    CXLA_RETURN_IF_ERROR(passes_set_fusion_params(w, n));
    /* The root: the wrapped operation where the user wrote the start (errors and the cpu
     * backend's messages map it back there). */
    cxla_instr *root;
    CXLA_RETURN_IF_ERROR(
        passes_add(w, in->async_wrapped, in->name, &in->shape.elements[1], n, params, &root));
    root->line = in->line;
    root->column = in->column;
    for (int64_t j = 0; j < in->attr_count; j++)
        if (!start_only(in->attrs[j].id))
            CXLA_RETURN_IF_ERROR(cxla_instr_set_attr(root, &in->attrs[j]));
    w->root = root;
    /* The start keeps its operands, shape and generic attributes, and calls the new
     * computation; its update and done chain loses the sugar. */
    CXLA_RETURN_IF_ERROR(keep_generic_attrs(in, m->arena));
    in->async_wrapped = CXLA_OP_COUNT;
    cxla_attr a = {.id = CXLA_ATTR_CALLS,
                   .name = cxla_attr_get_info(CXLA_ATTR_CALLS)->name,
                   .kind = CXLA_ATTR_KIND_COMPUTATIONS};
    a.v.comps.count = 1;
    a.v.comps.items = cxla_arena_alloc_array(m->arena, 1, sizeof(cxla_computation *));
    if (!a.v.comps.items) return PASSES_OOM();
    a.v.comps.items[0] = w;
    CXLA_RETURN_IF_ERROR(cxla_instr_set_attr(in, &a));
    cxla_instr *u = in->user_count == 1 ? in->users[0] : NULL;
    for (int guard = 0; u && guard < 1 << 20; guard++) {
        if (u->opcode != CXLA_OP_ASYNC_UPDATE && u->opcode != CXLA_OP_ASYNC_DONE) break;
        u->async_wrapped = CXLA_OP_COUNT;
        CXLA_RETURN_IF_ERROR(keep_generic_attrs(u, m->arena));
        u = u->opcode == CXLA_OP_ASYNC_UPDATE && u->user_count == 1 ? u->users[0] : NULL;
    }
    *changed = true;
    return NULL;
}

static cxla_status run_async_desugar(cxla_module *m, bool *changed) {
    *changed = false;
    int64_t count = m->comp_count; /* the computations it adds hold no sugar */
    for (int64_t c = 0; c < count; c++) {
        cxla_computation *comp = m->comps[c];
        for (int64_t i = 0; i < comp->instr_count; i++) {
            cxla_instr *in = comp->instrs[i];
            if (in->opcode == CXLA_OP_ASYNC_START && in->async_wrapped != CXLA_OP_COUNT &&
                !cxla_instr_attr(in, CXLA_ATTR_CALLS))
                CXLA_RETURN_IF_ERROR(desugar(in, changed));
        }
    }
    return NULL;
}

const cxla_pass cxla_pass_async_desugar = {"async-desugar", run_async_desugar};
