/* Specializing unbounded dynamic dimensions to one run's argument sizes (specialize.h).
 *
 * The copy is rewritten in program order, callees when their caller is reached (call,
 * fusion, while, conditional: their parameters take the caller's operand shapes), each
 * instruction whose declared shape has a '?' dimension getting what shape inference gives
 * over its (already rewritten) operands there; the declared static and bounded dimensions
 * stay as written, so the verifier then checks them against the new operands exactly as
 * it checks any module. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exec/dynamic.h"
#include "exec/exec.h"
#include "exec/specialize.h"
#include "literal/literal_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory specializing a module")

static bool unbounded_dim(const cxla_shape *s, int64_t d) {
    return exec_shape_dim_dynamic(s, d) && s->dims[d] == CXLA_DIM_UNBOUNDED;
}

static int64_t count_unbounded(const cxla_shape *s) {
    if (s->type == CXLA_TUPLE) {
        int64_t n = 0;
        for (int64_t i = 0; i < s->tuple_count; i++) n += count_unbounded(&s->elements[i]);
        return n;
    }
    int64_t n = 0;
    for (int64_t d = 0; cxla_type_is_array(s->type) && d < s->rank; d++) n += unbounded_dim(s, d);
    return n;
}

int64_t exec_unbounded_param_dims(const cxla_module *m) {
    int64_t n = 0;
    for (int64_t i = 0; m->entry && i < m->entry->param_count; i++)
        n += count_unbounded(&m->entry->params[i]->shape);
    return n;
}

/* ---- the arguments' sizes -------------------------------------------------------------- */

static bool leaf_sizes(const cxla_shape *want, const cxla_literal *arg, int64_t *sizes,
                       int64_t *at) {
    const cxla_shape *got = arg->shape;
    if (want->type == CXLA_TUPLE) {
        if (got->type != CXLA_TUPLE || arg->tuple_count != want->tuple_count) return false;
        for (int64_t i = 0; i < want->tuple_count; i++)
            if (!leaf_sizes(&want->elements[i], arg->elements[i], sizes, at)) return false;
        return true;
    }
    if (got->type != want->type) return false;
    if (!cxla_type_is_array(want->type)) return true;
    if (got->rank != want->rank) return false;
    for (int64_t d = 0; d < want->rank; d++) {
        int64_t size = cxla_literal_dynamic_size(arg, d);
        if (unbounded_dim(want, d))
            sizes[(*at)++] = size;
        else if (exec_shape_dim_dynamic(want, d) ? size > want->dims[d] : size != want->dims[d])
            return false;
    }
    return true;
}

bool exec_unbounded_arg_sizes(const cxla_module *m, const cxla_literal *const *args,
                              int64_t arg_count, int64_t *sizes) {
    const cxla_computation *e = m->entry;
    if (!e || arg_count != e->param_count) return false;
    int64_t at = 0;
    for (int64_t i = 0; i < arg_count; i++)
        if (!args[i] || !leaf_sizes(&e->params[i]->shape, args[i], sizes, &at)) return false;
    return true;
}

/* ---- shapes ------------------------------------------------------------------------------ */

typedef struct spec {
    cxla_module *m;          /* the copy being rewritten */
    const cxla_instr **orig; /* the original instruction of each id (its declared shape) */
    int64_t id_count;
    uint8_t *state; /* per computation of the copy: 0 not reached, 1 rewriting, 2 done */
} spec;

/* |declared| with each '?' dimension replaced by |given|'s (static or bounded), into |out|
 * (allocated in the copy's arena; the layout is |declared|'s). */
static cxla_status merge(spec *sp, const cxla_instr *in, const cxla_shape *declared,
                         const cxla_shape *given, cxla_shape *out) {
    *out = *declared;
    if (declared->type == CXLA_TUPLE) {
        if (given->type != CXLA_TUPLE || given->tuple_count != declared->tuple_count)
            return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                              "the shape at these sizes is not the declared tuple");
        int64_t n = declared->tuple_count;
        out->elements =
            cxla_arena_alloc_array(sp->m->arena, (size_t)(n ? n : 1), sizeof(*out->elements));
        if (!out->elements) return OOM();
        for (int64_t i = 0; i < n; i++)
            CXLA_RETURN_IF_ERROR(
                merge(sp, in, &declared->elements[i], &given->elements[i], &out->elements[i]));
        return NULL;
    }
    if (!cxla_type_is_array(declared->type) || count_unbounded(declared) == 0) return NULL;
    if (!cxla_type_is_array(given->type) || given->rank != declared->rank)
        return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                          "the shape at these sizes does not have the declared rank");
    int64_t rank = declared->rank;
    out->dims = cxla_arena_alloc_array(sp->m->arena, (size_t)rank, sizeof(int64_t));
    out->dynamic = cxla_arena_alloc(sp->m->arena, (size_t)rank);
    if (!out->dims || !out->dynamic) return OOM();
    bool any = false;
    for (int64_t d = 0; d < rank; d++) {
        bool from = unbounded_dim(declared, d);
        out->dims[d] = from ? given->dims[d] : declared->dims[d];
        out->dynamic[d] =
            from ? exec_shape_dim_dynamic(given, d) : exec_shape_dim_dynamic(declared, d);
        if (out->dims[d] == CXLA_DIM_UNBOUNDED)
            return exec_error(
                in, CXLA_STATUS_UNIMPLEMENTED,
                "dimension %" PRId64 " is unbounded ('?') and no argument gives it a size", d);
        any = any || out->dynamic[d];
    }
    if (!any) out->dynamic = NULL;
    return NULL;
}

/* Whether some '?' dimension of |orig| is bounded dynamic in |now|: a value the driver holds
 * at its size that the specialized module holds below a bound. */
static bool made_bounded(const cxla_shape *orig, const cxla_shape *now) {
    if (orig->type == CXLA_TUPLE) {
        if (now->type != CXLA_TUPLE) return false;
        for (int64_t i = 0; i < orig->tuple_count && i < now->tuple_count; i++)
            if (made_bounded(&orig->elements[i], &now->elements[i])) return true;
        return false;
    }
    if (!cxla_type_is_array(orig->type)) return false;
    for (int64_t d = 0; d < orig->rank && d < now->rank; d++)
        if (unbounded_dim(orig, d) && exec_shape_dim_dynamic(now, d)) return true;
    return false;
}

static int64_t dynamic_dims(const cxla_shape *s) {
    int64_t n = 0;
    for (int64_t d = 0; cxla_type_is_array(s->type) && d < s->rank; d++)
        n += exec_shape_dim_dynamic(s, d);
    return n;
}

/* The operations whose result depends on the bound of a value below it, not only on its
 * size (src/interp/interp_dynamic.c): set-dimension-size checks the size against the bound,
 * a dynamic-slice of the whole bound follows the size, dynamic-reshape reads the operand's
 * bounds, a reshape into several dynamic dimensions groups dimensions by their bounds, and
 * the operations that cannot leave padding out refuse a value below its bounds which the
 * driver holds at its size. */
static cxla_status check_bound_use(spec *sp, const cxla_instr *in) {
    const cxla_instr *o = sp->orig[in->id];
    bool depends = exec_dynamic_kind(in->opcode) == EXEC_DYN_NONE ||
                   in->opcode == CXLA_OP_SET_DIMENSION_SIZE ||
                   in->opcode == CXLA_OP_DYNAMIC_SLICE || in->opcode == CXLA_OP_DYNAMIC_RESHAPE ||
                   (in->opcode == CXLA_OP_RESHAPE && dynamic_dims(&o->shape) > 1);
    if (!depends) return NULL;
    for (int64_t k = 0; k < in->operand_count; k++) {
        const cxla_instr *x = in->operands[k];
        if (!made_bounded(&sp->orig[x->id]->shape, &x->shape)) continue;
        return exec_error(in, CXLA_STATUS_UNIMPLEMENTED,
                          "operand %" PRId64
                          " has an unbounded ('?') dimension that only a bound can "
                          "specialize, and what '%s' does depends on that bound",
                          k, cxla_opcode_name(in->opcode));
    }
    return NULL;
}

/* ---- rewriting ----------------------------------------------------------------------------- */

/* Same dimensions and dynamism, tuples element by element. */
static bool same_dims(const cxla_shape *a, const cxla_shape *b) {
    if (a->type != b->type) return false;
    if (a->type == CXLA_TUPLE) {
        if (a->tuple_count != b->tuple_count) return false;
        for (int64_t i = 0; i < a->tuple_count; i++)
            if (!same_dims(&a->elements[i], &b->elements[i])) return false;
        return true;
    }
    if (!cxla_type_is_array(a->type)) return true;
    if (a->rank != b->rank) return false;
    for (int64_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d] ||
            exec_shape_dim_dynamic(a, d) != exec_shape_dim_dynamic(b, d))
            return false;
    return true;
}

static int64_t comp_index(const cxla_module *m, const cxla_computation *c) {
    for (int64_t i = 0; i < m->comp_count; i++)
        if (m->comps[i] == c) return i;
    return -1;
}

static cxla_status rewrite_comp(spec *sp, cxla_computation *comp);

/* Gives |callee|'s parameter |p| the shape of |operand| (its '?' dimensions), then rewrites
 * the callee. A callee reached again must get the same shapes. */
static cxla_status bind_param(spec *sp, const cxla_instr *caller, cxla_computation *callee,
                              int64_t p, const cxla_instr *operand) {
    int64_t ci = comp_index(sp->m, callee);
    if (ci < 0 || p < 0 || p >= callee->param_count)
        return exec_error(caller, CXLA_STATUS_INVALID_ARGUMENT,
                          "calls a computation without parameter %" PRId64, p);
    cxla_instr *param = callee->params[p];
    cxla_shape s;
    CXLA_RETURN_IF_ERROR(merge(sp, param, &sp->orig[param->id]->shape, &operand->shape, &s));
    if (sp->state[ci] != 0) {
        if (same_dims(&param->shape, &s)) return NULL;
        return exec_error(caller, CXLA_STATUS_UNIMPLEMENTED,
                          "computation '%s' is also called elsewhere with other shapes; "
                          "its unbounded dimensions cannot take both",
                          callee->name);
    }
    param->shape = s;
    return NULL;
}

static cxla_status rewrite_callees(spec *sp, cxla_instr *in) {
    cxla_computation *list[64];
    int64_t n = 0;
    int64_t first = 0; /* the operand that feeds parameter 0 of each callee */
    switch (in->opcode) {
    case CXLA_OP_CALL:
    case CXLA_OP_FUSION: n = cxla_instr_called_computations(in, list, 64); break;
    case CXLA_OP_WHILE: {
        const cxla_attr *b = cxla_instr_attr(in, CXLA_ATTR_BODY);
        const cxla_attr *c = cxla_instr_attr(in, CXLA_ATTR_CONDITION);
        if (b && b->v.comps.count == 1) list[n++] = b->v.comps.items[0];
        if (c && c->v.comps.count == 1) list[n++] = c->v.comps.items[0];
        break;
    }
    case CXLA_OP_CONDITIONAL: n = cxla_instr_called_computations(in, list, 64); break;
    default: return NULL;
    }
    if (n > 64) return exec_error(in, CXLA_STATUS_UNIMPLEMENTED, "calls too many computations");
    for (int64_t j = 0; j < n; j++) {
        cxla_computation *callee = list[j];
        int64_t ci = comp_index(sp->m, callee);
        if (ci < 0) continue;
        if (in->opcode == CXLA_OP_CONDITIONAL) {
            /* Branch j takes operand j + 1 (true/false computations are listed in that
             * order too: true first). */
            first = j + 1;
            if (first < in->operand_count && callee->param_count == 1)
                CXLA_RETURN_IF_ERROR(bind_param(sp, in, callee, 0, in->operands[first]));
        } else if (in->opcode == CXLA_OP_WHILE) {
            if (in->operand_count == 1 && callee->param_count == 1)
                CXLA_RETURN_IF_ERROR(bind_param(sp, in, callee, 0, in->operands[0]));
        } else {
            for (int64_t p = 0; p < callee->param_count && p < in->operand_count; p++)
                CXLA_RETURN_IF_ERROR(bind_param(sp, in, callee, p, in->operands[p]));
        }
        if (sp->state[ci] == 0) CXLA_RETURN_IF_ERROR(rewrite_comp(sp, callee));
    }
    return NULL;
}

/* A dynamic-reshape whose '?' dimensions all have constant sizes: those dimensions are
 * static at them, which is the value the driver makes (a literal of those sizes); the
 * others as declared. false (and *out untouched) when a '?' dimension's size is not a
 * constant. Sizes that do not give the operand's element count are INVALID_ARGUMENT at
 * these sizes: the driver's run then reports the interpreter's error. */
static cxla_status constant_reshape(spec *sp, const cxla_instr *in, cxla_shape *out, bool *done) {
    *done = false;
    const cxla_shape *y = &in->shape;
    const cxla_shape *xs = &in->operands[0]->shape;
    if (!cxla_type_is_array(y->type) || !cxla_type_is_array(xs->type) ||
        in->operand_count != y->rank + 1)
        return NULL;
    int64_t rank = y->rank;
    /* Only '?' and static dimensions, over a static operand: a bound would need the
     * driver's rules for values below it. */
    if (dynamic_dims(xs) > 0) return NULL;
    for (int64_t d = 0; d < rank; d++)
        if (exec_shape_dim_dynamic(y, d) && !unbounded_dim(y, d)) return NULL;
    int64_t *dims = cxla_arena_alloc_array(sp->m->arena, (size_t)(rank ? rank : 1), 8);
    if (!dims) return OOM();
    for (int64_t d = 0; d < rank; d++) {
        const cxla_instr *z = in->operands[1 + d];
        dims[d] = y->dims[d];
        if (!unbounded_dim(y, d)) continue;
        if (z->opcode != CXLA_OP_CONSTANT || !z->literal || z->literal_elided ||
            z->shape.type != CXLA_S32 || z->shape.rank != 0)
            return NULL;
        dims[d] = cxla_load_s64(CXLA_S32, cxla_literal_data_const(z->literal));
    }
    int64_t want = 1, got = 1;
    bool negative = false;
    for (int64_t d = 0; d < xs->rank; d++) want *= xs->dims[d];
    for (int64_t d = 0; d < rank; d++) {
        negative = negative || dims[d] < 0;
        got *= dims[d] < 0 ? 0 : dims[d];
    }
    if (negative || got != want)
        return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                          "its constant sizes do not give the %" PRId64
                          " elements of its operand at these sizes",
                          want);
    *out = (cxla_shape){.type = y->type, .rank = rank, .dims = dims};
    *done = true;
    return NULL;
}

/* The shape of |in| over its rewritten operands, for the '?' dimensions it declares. */
static cxla_status given_shape(spec *sp, const cxla_instr *in, cxla_shape *out) {
    if (in->opcode == CXLA_OP_DYNAMIC_RESHAPE && in->operand_count > 0) {
        bool done = false;
        CXLA_RETURN_IF_ERROR(constant_reshape(sp, in, out, &done));
        if (done) return NULL;
    }
    if ((in->opcode == CXLA_OP_RESHAPE || in->opcode == CXLA_OP_BROADCAST) &&
        in->operand_count == 1 && cxla_type_is_array(in->operands[0]->shape.type) &&
        cxla_type_is_array(in->shape.type)) {
        /* The declared dims are chosen, not inferred: the driver's rules give the '?' ones
         * their sizes from the operand's (here its static sizes or bounds). */
        const cxla_shape *xs = &in->operands[0]->shape;
        int64_t rank = in->shape.rank;
        int64_t *o = cxla_arena_alloc_array(sp->m->arena, (size_t)(rank ? rank : 1), 8);
        uint8_t *dyn = cxla_arena_alloc(sp->m->arena, (size_t)(rank ? rank : 1));
        if (!o || !dyn) return OOM();
        bool xdyn = dynamic_dims(xs) > 0;
        for (int64_t d = 0; d < rank; d++) dyn[d] = xdyn;
        if (in->opcode == CXLA_OP_RESHAPE) {
            if (xdyn && dynamic_dims(&in->shape) > 1)
                return exec_error(in, CXLA_STATUS_UNIMPLEMENTED,
                                  "a reshape of a bounded value into several dynamic "
                                  "dimensions, one of them unbounded, groups them by bounds "
                                  "the driver does not have");
            CXLA_RETURN_IF_ERROR(exec_dynamic_reshape_sizes(in, xs, xs->dims, o));
        } else {
            CXLA_RETURN_IF_ERROR(exec_dynamic_broadcast_sizes(in, xs->rank, xs->dims, o));
            int64_t nd = 0;
            const int64_t *bd = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
            for (int64_t d = 0; d < rank; d++) dyn[d] = 0;
            for (int64_t i = 0; i < nd && i < xs->rank; i++)
                if (bd[i] >= 0 && bd[i] < rank) dyn[bd[i]] = exec_shape_dim_dynamic(xs, i);
        }
        *out = (cxla_shape){.type = in->shape.type, .rank = rank, .dims = o, .dynamic = dyn};
        return NULL;
    }
    cxla_status s = cxla_infer_shape(in, sp->m->arena, out);
    if (!s) return NULL;
    cxla_status e = exec_error(in, cxla_status_code_of(s), "%s", cxla_status_message(s));
    cxla_status_free(s);
    return e;
}

static cxla_status rewrite_instr(spec *sp, cxla_instr *in) {
    CXLA_RETURN_IF_ERROR(rewrite_callees(sp, in));
    CXLA_RETURN_IF_ERROR(check_bound_use(sp, in));
    if (count_unbounded(&in->shape) == 0) return NULL;
    cxla_shape given, s;
    CXLA_RETURN_IF_ERROR(given_shape(sp, in, &given));
    CXLA_RETURN_IF_ERROR(merge(sp, in, &in->shape, &given, &s));
    in->shape = s;
    return NULL;
}

static cxla_status rewrite_comp(spec *sp, cxla_computation *comp) {
    int64_t ci = comp_index(sp->m, comp);
    if (ci < 0) return NULL;
    sp->state[ci] = 1;
    for (int64_t i = 0; i < comp->instr_count; i++) {
        cxla_instr *in = comp->instrs[i];
        if (in->opcode == CXLA_OP_PARAMETER) continue; /* bound by the caller */
        CXLA_RETURN_IF_ERROR(rewrite_instr(sp, in));
    }
    sp->state[ci] = 2;
    return NULL;
}

/* The entry parameters' '?' dimensions become static at |sizes| (consumed in order). */
static cxla_status set_static(spec *sp, const cxla_instr *in, const cxla_shape *declared,
                              const int64_t *sizes, int64_t *at, cxla_shape *out) {
    *out = *declared;
    if (declared->type == CXLA_TUPLE) {
        int64_t n = declared->tuple_count;
        out->elements =
            cxla_arena_alloc_array(sp->m->arena, (size_t)(n ? n : 1), sizeof(*out->elements));
        if (!out->elements) return OOM();
        for (int64_t i = 0; i < n; i++)
            CXLA_RETURN_IF_ERROR(
                set_static(sp, in, &declared->elements[i], sizes, at, &out->elements[i]));
        return NULL;
    }
    if (!cxla_type_is_array(declared->type) || count_unbounded(declared) == 0) return NULL;
    cxla_shape given = *declared;
    given.dims = cxla_arena_alloc_array(sp->m->arena, (size_t)declared->rank, sizeof(int64_t));
    if (!given.dims) return OOM();
    for (int64_t d = 0; d < declared->rank; d++)
        given.dims[d] = unbounded_dim(declared, d) ? sizes[(*at)++] : declared->dims[d];
    given.dynamic = NULL; /* merge takes the given dims of the '?' ones as static */
    return merge(sp, in, declared, &given, out);
}

/* The module's header: its input_output_alias goes (specialize.h). */
static void drop_aliases(cxla_module *m) {
    int64_t k = 0;
    for (int64_t i = 0; i < m->attr_count; i++)
        if (m->attrs[i].id != CXLA_ATTR_INPUT_OUTPUT_ALIAS) m->attrs[k++] = m->attrs[i];
    m->attr_count = k;
}

static cxla_status no_unbounded_left(const cxla_module *m) {
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            const cxla_instr *in = m->comps[c]->instrs[i];
            if (exec_shape_has_unbounded(&in->shape))
                return exec_error(in, CXLA_STATUS_UNIMPLEMENTED,
                                  "keeps an unbounded ('?') dimension that no argument gives a "
                                  "size (computation '%s')",
                                  m->comps[c]->name);
        }
    return NULL;
}

/* What the driver refuses or answers otherwise whatever the sizes: an operation that cannot
 * compute the size of a '?' result dimension (the interpreter's error, which a static form
 * would not give: a send, an all-reduce of a '?' shape), one of those operations with a '?'
 * operand (an outfeed compares its operand's declared shape with the value), and a shape
 * attribute with a '?' dimension (an outfeed_shape). */
static cxla_status check_driver_only(const cxla_module *m) {
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            const cxla_instr *in = m->comps[c]->instrs[i];
            bool none =
                in->opcode != CXLA_OP_PARAMETER && exec_dynamic_kind(in->opcode) == EXEC_DYN_NONE;
            if (none && exec_shape_has_unbounded(&in->shape))
                return exec_error(in, CXLA_STATUS_UNIMPLEMENTED,
                                  "'%s' cannot compute the size of an unbounded ('?') result "
                                  "dimension",
                                  cxla_opcode_name(in->opcode));
            for (int64_t k = 0; none && k < in->operand_count; k++)
                if (exec_shape_has_unbounded(&in->operands[k]->shape))
                    return exec_error(in, CXLA_STATUS_UNIMPLEMENTED,
                                      "operand %" PRId64
                                      " of '%s' is unbounded ('?'), which the driver checks "
                                      "against its actual size",
                                      k, cxla_opcode_name(in->opcode));
            for (int64_t a = 0; a < in->attr_count; a++) {
                const cxla_attr *at = &in->attrs[a];
                if (at->kind != CXLA_ATTR_KIND_SHAPE && at->kind != CXLA_ATTR_KIND_SHAPES) continue;
                for (int64_t k = 0; k < at->v.shapes.count; k++)
                    if (exec_shape_has_unbounded(&at->v.shapes.items[k]))
                        return exec_error(in, CXLA_STATUS_UNIMPLEMENTED,
                                          "its attribute %s holds an unbounded ('?') "
                                          "dimension, which the driver compares with the "
                                          "value's size",
                                          cxla_attr_get_info(at->id)->name);
            }
        }
    return NULL;
}

static cxla_status specialize(spec *sp, const cxla_module *orig, const int64_t *sizes,
                              int64_t count) {
    CXLA_RETURN_IF_ERROR(check_driver_only(orig));
    cxla_module *m = sp->m;
    cxla_computation *e = m->entry;
    /* Every instruction of the copy keeps its id (cxla_module_clone). */
    for (int64_t c = 0; c < orig->comp_count; c++)
        for (int64_t i = 0; i < orig->comps[c]->instr_count; i++) {
            const cxla_instr *in = orig->comps[c]->instrs[i];
            if (in->id >= 0 && in->id < sp->id_count) sp->orig[in->id] = in;
        }
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            const cxla_instr *in = m->comps[c]->instrs[i];
            if (in->id < 0 || in->id >= sp->id_count || !sp->orig[in->id])
                return cxla_error(CXLA_STATUS_INTERNAL, "the module's copy renumbered '%s'",
                                  in->name);
        }
    int64_t at = 0;
    for (int64_t p = 0; p < e->param_count; p++) {
        cxla_instr *param = e->params[p];
        cxla_shape s;
        CXLA_RETURN_IF_ERROR(set_static(sp, param, &param->shape, sizes, &at, &s));
        param->shape = s;
        if (m->has_entry_layout && p < m->entry_param_count) {
            cxla_shape l;
            CXLA_RETURN_IF_ERROR(merge(sp, param, &m->entry_param_shapes[p], &s, &l));
            m->entry_param_shapes[p] = l;
        }
    }
    if (at != count)
        return cxla_error(CXLA_STATUS_INTERNAL,
                          "%" PRId64 " sizes for %" PRId64 " unbounded parameter dimensions", count,
                          at);
    CXLA_RETURN_IF_ERROR(rewrite_comp(sp, e));
    CXLA_RETURN_IF_ERROR(no_unbounded_left(m));
    if (m->has_entry_layout) {
        cxla_shape l;
        CXLA_RETURN_IF_ERROR(merge(sp, e->root, &m->entry_result_shape, &e->root->shape, &l));
        m->entry_result_shape = l;
    }
    drop_aliases(m);
    cxla_status v = cxla_verify_module(m);
    if (!v) return NULL;
    cxla_status r = cxla_error(cxla_status_code_of(v) == CXLA_STATUS_RESOURCE_EXHAUSTED
                                   ? CXLA_STATUS_RESOURCE_EXHAUSTED
                                   : CXLA_STATUS_INVALID_ARGUMENT,
                               "%s", cxla_status_message(v));
    cxla_status_free(v);
    return r;
}

cxla_status exec_specialize_module(const cxla_module *m, const int64_t *sizes, int64_t count,
                                   cxla_module **out) {
    *out = NULL;
    if (!m->entry)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "the module has no entry computation");
    spec sp = {.id_count = m->next_id};
    CXLA_RETURN_IF_ERROR(cxla_module_clone(m, &sp.m));
    sp.orig = calloc((size_t)(sp.id_count ? sp.id_count : 1), sizeof(*sp.orig));
    sp.state = calloc((size_t)(sp.m->comp_count ? sp.m->comp_count : 1), 1);
    cxla_status s = sp.orig && sp.state ? specialize(&sp, m, sizes, count) : OOM();
    free(sp.orig);
    free(sp.state);
    if (s) {
        cxla_module_destroy(sp.m);
        return s;
    }
    *out = sp.m;
    return NULL;
}
