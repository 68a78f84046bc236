/* Layout normalization: inside a compiled module every array has the default
 * (major-to-minor) layout. The entry's parameters and result keep their layouts in
 * entry_computation_layout, and the backend relayouts at that boundary (as the
 * interpreter does).
 *
 * Layouts only change results through bitcast, which reinterprets its operand's buffer in
 * its own layout. Each bitcast between arrays without padding or tiling becomes the same
 * data movement on default-layout arrays: a transpose of the operand into its physical
 * order, a reshape (or, when the element type changes, a bitcast between default
 * layouts) to the result's physical dimensions, and a transpose back to the result's
 * logical order. Copies that only changed the layout become no-ops and are removed.
 * Left alone: layouts inside attributes (outfeed_shape, operand_layout_constraints). A
 * send's data takes its operand's default layout too (a layout-sensitive verifier wants
 * them equal, as XLA's HandleSend); the layout it declared, the one the host receives,
 * goes into operand_layout_constraints, which the send step relays the data into. A custom call's
 * operand and result layouts are kept as constraints and a physical result
 * (keep_custom_call_layouts),
 * bitcasts from or to padded or tiled layouts (the pass then fails rather than change
 * their meaning). Constants get their literal relaid to the default layout. */
#include <string.h>

#include "exec/custom_call.h"
#include "passes/passes_internal.h"
#include "shape/shape_internal.h"

static bool layout_plain(const cxla_shape *s) {
    const cxla_layout *l = s->layout;
    return !l || (!l->padded_dims && l->tile_count == 0 && l->element_size_bits == 0);
}

/* The permutation that lists |s|'s dimensions from major to minor. */
static void major_to_minor(const cxla_shape *s, int64_t *perm) {
    int64_t m2m[CXLA_MAX_RANK];
    cxla_shape_minor_to_major(s, m2m);
    for (int64_t i = 0; i < s->rank; i++) perm[i] = m2m[s->rank - 1 - i];
}

static bool identity(const int64_t *p, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (p[i] != i) return false;
    return true;
}

static cxla_status add_transpose(cxla_instr *x, const int64_t *perm, const char *base,
                                 cxla_instr **out) {
    if (identity(perm, x->shape.rank)) {
        *out = x;
        return NULL;
    }
    cxla_module *m = x->parent->module;
    int64_t dims[CXLA_MAX_RANK];
    for (int64_t i = 0; i < x->shape.rank; i++) dims[i] = x->shape.dims[perm[i]];
    cxla_shape s;
    CXLA_RETURN_IF_ERROR(passes_array_shape(m, x->shape.type, x->shape.rank, dims, &s));
    CXLA_RETURN_IF_ERROR(passes_add(x->parent, CXLA_OP_TRANSPOSE, base, &s, 1, &x, out));
    return passes_set_ints(*out, CXLA_ATTR_DIMENSIONS, perm, x->shape.rank);
}

static cxla_status rewrite_bitcast(cxla_instr *bc) {
    cxla_instr *x = bc->operands[0];
    const cxla_shape *a = &x->shape, *b = &bc->shape;
    if (!passes_is_static_array(a) || !passes_is_static_array(b)) return NULL;
    if (cxla_layout_is_default(a) && cxla_layout_is_default(b) && a->type != b->type)
        return NULL; /* already between default layouts */
    if (!layout_plain(a) || !layout_plain(b))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "layout normalization: %s is a bitcast from or to a padded or tiled "
                          "layout",
                          bc->name);
    cxla_module *m = bc->parent->module;
    int64_t pa[CXLA_MAX_RANK], pb[CXLA_MAX_RANK], inv_b[CXLA_MAX_RANK], phys_b[CXLA_MAX_RANK];
    major_to_minor(a, pa);
    major_to_minor(b, pb);
    for (int64_t i = 0; i < b->rank; i++) {
        inv_b[pb[i]] = i;
        phys_b[i] = b->dims[pb[i]];
    }
    cxla_instr *t1, *mid, *y;
    CXLA_RETURN_IF_ERROR(add_transpose(x, pa, "transpose", &t1));
    cxla_shape ms;
    CXLA_RETURN_IF_ERROR(passes_array_shape(m, b->type, b->rank, phys_b, &ms));
    bool same_count = passes_elements(a) == passes_elements(b);
    cxla_opcode op = a->type == b->type && same_count ? CXLA_OP_RESHAPE : CXLA_OP_BITCAST;
    CXLA_RETURN_IF_ERROR(passes_add(bc->parent, op, op == CXLA_OP_RESHAPE ? "reshape" : "bitcast",
                                    &ms, 1, &t1, &mid));
    CXLA_RETURN_IF_ERROR(add_transpose(mid, inv_b, "transpose", &y));
    return passes_replace(bc, y);
}

/* Gives every array in |s| (a copy in the arena) the default layout; true when one
 * changed. */
static cxla_status default_layouts(cxla_arena *arena, cxla_shape *s, bool *changed) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            CXLA_RETURN_IF_ERROR(default_layouts(arena, &s->elements[i], changed));
        return NULL;
    }
    if (!cxla_type_is_array(s->type) || s->rank == 0) return NULL;
    if (s->layout && cxla_layout_is_default(s) && layout_plain(s) && !s->layout->memory_space)
        return NULL;
    if (!s->layout && cxla_layout_is_default(s)) return NULL;
    *changed = true;
    return cxla_layout_make_default(arena, s->rank, &s->layout);
}

static bool shape_needs_work(const cxla_shape *s) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            if (shape_needs_work(&s->elements[i])) return true;
        return false;
    }
    if (!cxla_type_is_array(s->type) || s->rank == 0 || !s->layout) return false;
    return !cxla_layout_is_default(s) || !layout_plain(s) || s->layout->memory_space;
}

/* A send whose result is (data, u32[], token[]): its data's layout is the host's. */
static bool is_send(const cxla_instr *in) {
    return in->opcode == CXLA_OP_SEND && in->shape.type == CXLA_TUPLE && in->shape.tuple_count == 3;
}

/* Whether array |r| is in a plain layout other than the default (its physical form is
 * then another row-major array: physical_shape). */
static bool needs_physical(const cxla_shape *r) {
    return passes_is_static_array(r) && r->rank >= 2 && !cxla_layout_is_default(r) &&
           layout_plain(r);
}

/* |r|'s dimensions in major-to-minor order, row-major, into *out (|out| may be |r|). */
static cxla_status physical_shape(cxla_module *m, const cxla_shape *r, cxla_shape *out) {
    int64_t perm[CXLA_MAX_RANK], phys[CXLA_MAX_RANK];
    major_to_minor(r, perm);
    for (int64_t i = 0; i < r->rank; i++) phys[i] = r->dims[perm[i]];
    return passes_array_shape(m, r->type, r->rank, phys, out);
}

/* Instruction |x| of a plain non-default layout now yields its physical form (the same
 * bytes), and a transpose after it gives its users the logical array. */
static cxla_status physical_result(cxla_instr *x, bool *changed) {
    const cxla_shape r = x->shape;
    if (!needs_physical(&r)) return NULL;
    cxla_module *m = x->parent->module;
    int64_t perm[CXLA_MAX_RANK], inv[CXLA_MAX_RANK];
    major_to_minor(&r, perm);
    for (int64_t i = 0; i < r.rank; i++) inv[perm[i]] = i;
    int64_t nu = x->user_count;
    cxla_instr **users = cxla_arena_alloc_array(m->arena, (size_t)(nu ? nu : 1), sizeof(*users));
    if (!users) return PASSES_OOM();
    if (nu) memcpy(users, x->users, (size_t)nu * sizeof(*users));
    cxla_shape logical;
    CXLA_RETURN_IF_ERROR(passes_array_shape(m, r.type, r.rank, r.dims, &logical));
    CXLA_RETURN_IF_ERROR(physical_shape(m, &r, &x->shape));
    cxla_instr *t;
    CXLA_RETURN_IF_ERROR(
        passes_add(x->parent, CXLA_OP_TRANSPOSE, "transpose", &logical, 1, &x, &t));
    CXLA_RETURN_IF_ERROR(passes_set_ints(t, CXLA_ATTR_DIMENSIONS, inv, r.rank));
    for (int64_t u = 0; u < nu; u++)
        for (int64_t j = 0; j < users[u]->operand_count; j++)
            if (users[u]->operands[j] == x)
                CXLA_RETURN_IF_ERROR(cxla_instr_replace_operand(users[u], j, t));
    if (x->parent->root == x) x->parent->root = t;
    *changed = true;
    return NULL;
}

/* A foreign custom call hands its target buffers in the layouts the module gives them (XLA's
 * calling convention; the interpreter and the cpu backend's service step relay to them),
 * so normalizing them would change the bytes the target sees. Operands: their layouts go
 * into operand_layout_constraints (left alone below) when the call has none. An array
 * result in another plain layout: the call returns its physical form (the dimensions in
 * major-to-minor order, row-major: the same bytes) and a transpose gives the users the
 * logical array; so does each element of a tuple result that only get-tuple-element reads.
 * Left as they were: a result output_to_operand_aliasing pairs with an operand, a tuple
 * result read otherwise, nested tuples. */
static cxla_status keep_custom_call_layouts(cxla_instr *cc, bool *changed) {
    cxla_module *m = cc->parent->module;
    const char *target = NULL;
    cxla_custom_call_fn fn = NULL;
    cxla_custom_call_api_version api;
    exec_builtin_target builtin = EXEC_BUILTIN_NONE;
    cxla_status st = exec_custom_call_resolve(cc, &target, &fn, &api, &builtin);
    if (st)
        cxla_status_free(st); /* resolved when it runs: a foreign target, perhaps */
    else if (builtin != EXEC_BUILTIN_NONE)
        return NULL; /* the built-in targets read values, not bytes */
    bool operands = false;
    for (int64_t k = 0; k < cc->operand_count; k++)
        operands = operands || shape_needs_work(&cc->operands[k]->shape);
    if (operands && !cxla_instr_attr(cc, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS)) {
        int64_t n = cc->operand_count;
        cxla_shape *shapes = cxla_arena_alloc_array(m->arena, (size_t)n, sizeof(*shapes));
        if (!shapes) return PASSES_OOM();
        for (int64_t k = 0; k < n; k++)
            CXLA_RETURN_IF_ERROR(
                cxla_shape_copy_to_arena(m->arena, &cc->operands[k]->shape, &shapes[k]));
        cxla_attr a = {.id = CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS,
                       .name = cxla_attr_get_info(CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS)->name,
                       .kind = CXLA_ATTR_KIND_SHAPES};
        a.v.shapes.count = n;
        a.v.shapes.items = shapes;
        CXLA_RETURN_IF_ERROR(cxla_instr_set_attr(cc, &a));
        *changed = true;
    }
    if (cxla_instr_attr(cc, CXLA_ATTR_OUTPUT_TO_OPERAND_ALIASING)) return NULL;
    if (cc->shape.type != CXLA_TUPLE) return physical_result(cc, changed);
    /* A tuple of arrays read through get-tuple-element only: each element in its
     * physical form, each get-tuple-element of one followed by its transpose. */
    if (cc->parent->root == cc) return NULL;
    for (int64_t u = 0; u < cc->user_count; u++)
        if (cc->users[u]->opcode != CXLA_OP_GET_TUPLE_ELEMENT) return NULL;
    for (int64_t e = 0; e < cc->shape.tuple_count; e++)
        if (cc->shape.elements[e].type == CXLA_TUPLE) return NULL;
    cxla_shape tuple;
    CXLA_RETURN_IF_ERROR(cxla_shape_copy_to_arena(m->arena, &cc->shape, &tuple));
    int64_t nu = cc->user_count;
    cxla_instr **users = cxla_arena_alloc_array(m->arena, (size_t)(nu ? nu : 1), sizeof(*users));
    if (!users) return PASSES_OOM();
    if (nu) memcpy(users, cc->users, (size_t)nu * sizeof(*users));
    for (int64_t e = 0; e < tuple.tuple_count; e++) {
        cxla_shape *x = &tuple.elements[e];
        if (!needs_physical(x)) continue;
        CXLA_RETURN_IF_ERROR(physical_shape(m, x, x));
        for (int64_t u = 0; u < nu; u++) {
            int64_t index = -1;
            if (cxla_instr_int(users[u], CXLA_ATTR_INDEX, &index) && index == e)
                CXLA_RETURN_IF_ERROR(physical_result(users[u], changed));
        }
    }
    cc->shape = tuple;
    *changed = true;
    return NULL;
}

/* The data's layout in a send's result is the layout the host receives (XLA's
 * SendToHost puts shape_with_layout there, and XLA's layout assignment makes the operand
 * match it). Here the operand gets the default layout, and the send's data with it; the
 * declared layout is kept as the send's operand_layout_constraints (unless it has them),
 * the layout the send step hands the data to the host in: one shape per operand, as the
 * parser wants them (the data's, then the token's), so that the module prints and parses
 * back. */
static cxla_status keep_send_layout(cxla_instr *send) {
    if (cxla_instr_attr(send, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS) || send->operand_count != 2)
        return NULL;
    cxla_module *m = send->parent->module;
    cxla_shape *host = cxla_arena_alloc_array(m->arena, 2, sizeof(*host));
    if (!host) return PASSES_OOM();
    CXLA_RETURN_IF_ERROR(cxla_shape_copy_to_arena(m->arena, &send->shape.elements[0], &host[0]));
    CXLA_RETURN_IF_ERROR(cxla_shape_copy_to_arena(m->arena, &send->operands[1]->shape, &host[1]));
    cxla_attr a = {.id = CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS,
                   .name = cxla_attr_get_info(CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS)->name,
                   .kind = CXLA_ATTR_KIND_SHAPES};
    a.v.shapes.count = 2;
    a.v.shapes.items = host;
    return cxla_instr_set_attr(send, &a);
}

static cxla_status run_layout(cxla_module *m, bool *changed) {
    *changed = false;
    /* Bitcasts first, while their operands still carry the layouts that give them meaning. */
    for (int64_t c = 0; c < m->comp_count; c++) {
        cxla_computation *comp = m->comps[c];
        int64_t n = comp->instr_count;
        cxla_instr **snap = cxla_arena_alloc_array(m->arena, (size_t)(n ? n : 1), sizeof(*snap));
        if (!snap) return PASSES_OOM();
        memcpy(snap, comp->instrs, (size_t)n * sizeof(*snap));
        for (int64_t i = 0; i < n; i++)
            if (snap[i]->opcode == CXLA_OP_BITCAST && snap[i]->parent &&
                (shape_needs_work(&snap[i]->shape) ||
                 shape_needs_work(&snap[i]->operands[0]->shape) ||
                 snap[i]->shape.type == snap[i]->operands[0]->shape.type)) {
                int64_t before = comp->instr_count;
                CXLA_RETURN_IF_ERROR(rewrite_bitcast(snap[i]));
                if (comp->instr_count != before) *changed = true;
            }
    }
    for (int64_t c = 0; c < m->comp_count; c++) {
        cxla_computation *comp = m->comps[c];
        int64_t n = comp->instr_count; /* the transposes it adds need no work */
        for (int64_t i = 0; i < n; i++)
            if (comp->instrs[i]->opcode == CXLA_OP_CUSTOM_CALL)
                CXLA_RETURN_IF_ERROR(keep_custom_call_layouts(comp->instrs[i], changed));
    }
    for (int64_t c = 0; c < m->comp_count; c++) {
        cxla_computation *comp = m->comps[c];
        for (int64_t i = 0; i < comp->instr_count; i++) {
            cxla_instr *in = comp->instrs[i];
            if (!shape_needs_work(&in->shape)) continue;
            if (is_send(in) && shape_needs_work(&in->shape.elements[0]))
                CXLA_RETURN_IF_ERROR(keep_send_layout(in));
            cxla_shape s;
            CXLA_RETURN_IF_ERROR(cxla_shape_copy_to_arena(m->arena, &in->shape, &s));
            bool ch = false;
            CXLA_RETURN_IF_ERROR(default_layouts(m->arena, &s, &ch));
            in->shape = s;
            *changed = true;
            if (in->opcode == CXLA_OP_CONSTANT && in->literal && !in->literal_elided &&
                cxla_type_is_array(cxla_literal_shape(in->literal)->type) &&
                !cxla_layout_is_default(cxla_literal_shape(in->literal))) {
                cxla_literal *relaid;
                CXLA_RETURN_IF_ERROR(cxla_literal_relayout(in->literal, NULL, &relaid));
                CXLA_RETURN_IF_ERROR(cxla_module_adopt_literal(m, relaid));
                in->literal = relaid;
            }
        }
    }
    /* Copies that only changed a layout now copy nothing. */
    for (int64_t c = 0; c < m->comp_count; c++) {
        cxla_computation *comp = m->comps[c];
        int64_t n = comp->instr_count;
        cxla_instr **snap = cxla_arena_alloc_array(m->arena, (size_t)(n ? n : 1), sizeof(*snap));
        if (!snap) return PASSES_OOM();
        memcpy(snap, comp->instrs, (size_t)n * sizeof(*snap));
        for (int64_t i = 0; i < n; i++) {
            cxla_instr *in = snap[i];
            if (in->opcode == CXLA_OP_COPY && in->parent && !passes_has_control_deps(in) &&
                passes_is_static_array(&in->shape) &&
                cxla_shape_equal(&in->shape, &in->operands[0]->shape)) {
                CXLA_RETURN_IF_ERROR(passes_replace(in, in->operands[0]));
                *changed = true;
            }
        }
    }
    return NULL;
}

const cxla_pass cxla_pass_layout = {"layout", run_layout};
