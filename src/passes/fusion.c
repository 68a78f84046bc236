/* Fusion: groups of cheap array operations become one `fusion` instruction calling a fused
 * computation, as XLA prints them (kind=kLoop / kInput, calls=%fused_computation.N), so
 * the interpreter runs a fused module unchanged and the backend emits one loop per fusion.
 *
 * - Loop fusion: starting from a consumer (visited from the root up), its producers join
 *   when they are loop-fusible (elementwise operations, broadcast, reshape, transpose,
 *   slice, pad, concatenate, reverse, iota, small constants, and dynamic-slice and gather
 *   of small operands) and every one of their users is already in the group; broadcasts,
 *   iotas and small constants also join when used elsewhere (they are duplicated: cheap to
 *   recompute). Nothing expensive is duplicated.
 * - Input fusion: the same, with a reduce or reduce-window (one input, an array result)
 *   as the root: the elementwise producers of its input run inside the reduction.
 * - Multi-output fusion: two fusions of one computation of the same kind and loop shape
 *   that read a common operand of at least MOF_MIN_ELEMENTS elements, and do not depend
 *   on each other, become one fusion with a tuple root (layer norm's mean and mean of
 *   squares read their input once); their users read get-tuple-element.
 * Never fused: dot, convolution, custom-call, sort, fft, while, conditional, call,
 * collectives, side effects, rng, map, tuple values, instructions with control
 * dependencies, and dynamic shapes except in elementwise operations, broadcast,
 * transpose and slice with bounds whose sizes cannot disagree (exec_dynamic_cannot_fail: a kernel
 * at the bounds computes them). Only computations that run as control flow (the entry, while bodies
 * and conditions, conditional branches) are fused, not reducers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/dynamic.h"
#include "passes/passes_internal.h"
#include "shape/shape_internal.h"

enum {
    MAX_GROUP = 256,              /* instructions in one fusion */
    MAX_PARAMS = 64,              /* parameters of one fusion */
    FUSE_CONSTANT_MAX = 64,       /* constants up to this many elements are fused */
    SMALL_GATHER_OPERAND = 65536, /* gather / dynamic-slice read operands up to this size */
    MOF_MIN_ELEMENTS = 1024,      /* a shared operand worth reading once */
};

static bool static_operands(const cxla_instr *in) {
    for (int64_t i = 0; i < in->operand_count; i++)
        if (!passes_is_static_array(&in->operands[i]->shape)) return false;
    return true;
}

static bool loop_fusible(const cxla_instr *in) {
    if (passes_has_side_effect(in) || passes_has_control_deps(in)) return false;
    /* Bounded dynamic shapes: the operations whose kernel at the bounds gives the value
     * below the sizes (elementwise, broadcast, transpose, slice) fuse, so the fusion's does too
     * (exec_dynamic_positionwise; the cpu backend runs it at the bounds); only those whose
     * sizes cannot disagree (exec_dynamic_cannot_fail), since an error inside a fusion
     * would name the fused copy of the instruction (m.14), not the user's m. */
    if (!passes_is_static_array(&in->shape) || !static_operands(in))
        return in->opcode != CXLA_OP_STOCHASTIC_CONVERT && exec_dynamic_cannot_fail(in) &&
               (in->opcode == CXLA_OP_BROADCAST || in->opcode == CXLA_OP_TRANSPOSE ||
                in->opcode == CXLA_OP_SLICE ||
                (cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_ELEMENTWISE));
    switch (in->opcode) {
    case CXLA_OP_BROADCAST:
    case CXLA_OP_RESHAPE:
    case CXLA_OP_TRANSPOSE:
    case CXLA_OP_SLICE:
    case CXLA_OP_PAD:
    case CXLA_OP_CONCATENATE:
    case CXLA_OP_REVERSE:
    case CXLA_OP_IOTA: return true;
    case CXLA_OP_CONSTANT:
        return in->literal && !in->literal_elided &&
               passes_elements(&in->shape) <= FUSE_CONSTANT_MAX;
    case CXLA_OP_DYNAMIC_SLICE:
    case CXLA_OP_GATHER: return passes_elements(&in->operands[0]->shape) <= SMALL_GATHER_OPERAND;
    case CXLA_OP_STOCHASTIC_CONVERT: return false; /* consumes random bits: keep it visible */
    default: return (cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_ELEMENTWISE) != 0;
    }
}

/* Duplicated into a fusion even when used elsewhere. */
static bool cheap(const cxla_instr *in) {
    return in->opcode == CXLA_OP_BROADCAST || in->opcode == CXLA_OP_IOTA ||
           in->opcode == CXLA_OP_CONSTANT;
}

/* A reduce of complex or sub-byte values is no fusion root: the interpreter folds those in
 * row-major order from the init value (no pairwise tree), which the cpu backend's kernel
 * that calls the reducer follows and its fused reduce loops do not take. */
static bool sequential_reduce(const cxla_instr *in) {
    if (in->opcode != CXLA_OP_REDUCE || in->operand_count < 1) return false;
    cxla_type t = in->operands[0]->shape.type;
    return cxla_type_is_complex(t) || (cxla_type_is_integer(t) && cxla_type_bits(t) < 8);
}

static bool input_root(const cxla_instr *in) {
    if (in->opcode != CXLA_OP_REDUCE && in->opcode != CXLA_OP_REDUCE_WINDOW) return false;
    return in->operand_count == 2 && passes_is_static_array(&in->shape) && static_operands(in) &&
           !passes_has_side_effect(in) && !passes_has_control_deps(in) && !sequential_reduce(in);
}

typedef struct group {
    cxla_instr *items[MAX_GROUP];
    bool moved[MAX_GROUP]; /* false: duplicated (the original stays) */
    int64_t count;
    cxla_instr *params[MAX_PARAMS];
    int64_t param_count;
} group;

static int64_t find(const group *g, const cxla_instr *in) {
    for (int64_t i = 0; i < g->count; i++)
        if (g->items[i] == in) return i;
    return -1;
}

static bool users_all_moved(const group *g, const cxla_instr *p) {
    if (p->parent->root == p) return false;
    for (int64_t u = 0; u < p->user_count; u++) {
        int64_t k = find(g, p->users[u]);
        if (k < 0 || !g->moved[k]) return false;
    }
    return true;
}

/* Row fusion (cxla_pass_fusion_rows only): a reduce of the last dimension of an array with
 * the loop's own dimensions (add, maximum or minimum of f32 or f64, rows of ROW_MIN to
 * ROW_MAX elements, at least two rows), whose users are all in the loop group already,
 * joins the loop: the backend then computes it for each row before the row's elements,
 * while the row is in cache (softmax's maximum and sum, layer norm's mean and variance),
 * instead of reading the whole array once per reduction. */
enum { ROW_MIN = 128, ROW_MAX = 16384 };

static bool row_reduce_joins(const group *g, const cxla_instr *p) {
    const cxla_instr *root = g->items[0];
    if (p->opcode != CXLA_OP_REDUCE || input_root(root) || !input_root(p) || !users_all_moved(g, p))
        return false;
    const cxla_shape *s = &p->operands[0]->shape;
    cxla_type t = s->type;
    if ((t != CXLA_F32 && t != CXLA_F64) || p->shape.type != t || s->rank < 2 ||
        !cxla_shape_same_dims(s, &root->shape) || s->dims[s->rank - 1] < ROW_MIN ||
        s->dims[s->rank - 1] > ROW_MAX || passes_elements(s) / s->dims[s->rank - 1] < 2)
        return false;
    int64_t nd = 0;
    const int64_t *dims = cxla_instr_ints(p, CXLA_ATTR_DIMENSIONS, &nd);
    if (nd != 1 || dims[0] != s->rank - 1) return false;
    const cxla_computation *c = cxla_instr_called(p, CXLA_ATTR_TO_APPLY);
    if (!c || c->param_count != 2 || !c->root || c->root->operand_count != 2) return false;
    const cxla_instr *r = c->root;
    if (r->operands[0]->opcode != CXLA_OP_PARAMETER ||
        r->operands[1]->opcode != CXLA_OP_PARAMETER || r->operands[0] == r->operands[1] ||
        r->shape.type != t || r->shape.rank != 0)
        return false;
    if (r->opcode != CXLA_OP_ADD && r->opcode != CXLA_OP_MAXIMUM && r->opcode != CXLA_OP_MINIMUM)
        return false;
    return passes_row_reduce_uses_rows(p, root); /* row_fusion.c */
}

/* Grows the group from its root until no operand can join. */
static void grow(group *g, bool rows) {
    bool again = true;
    while (again) {
        again = false;
        for (int64_t i = 0; i < g->count; i++) {
            cxla_instr *m = g->items[i];
            for (int64_t k = 0; k < m->operand_count && g->count < MAX_GROUP; k++) {
                cxla_instr *p = m->operands[k];
                if (find(g, p) >= 0) continue;
                if (!loop_fusible(p) && !(rows && g->moved[i] && row_reduce_joins(g, p))) continue;
                /* A duplicated member's operands stay used outside: only cheap ones join. */
                bool moved = g->moved[i] && users_all_moved(g, p);
                if (!moved && !cheap(p)) continue;
                g->items[g->count] = p;
                g->moved[g->count] = moved;
                g->count++;
                again = true;
            }
        }
    }
}

static cxla_status clone_into(cxla_computation *fc, group *g, cxla_instr *in, cxla_strmap *map,
                              cxla_instr **out) {
    cxla_instr *done = cxla_strmap_get(map, in->name, strlen(in->name));
    if (done) {
        *out = done;
        return NULL;
    }
    cxla_module *m = fc->module;
    if (find(g, in) < 0) { /* from outside: a parameter of the fusion */
        if (g->param_count == MAX_PARAMS)
            return cxla_error(CXLA_STATUS_INTERNAL, "fusion: too many parameters");
        char base[32];
        snprintf(base, sizeof(base), "param_%d", (int)g->param_count);
        cxla_instr *p;
        CXLA_RETURN_IF_ERROR(passes_add(fc, CXLA_OP_PARAMETER, base, &in->shape, 0, NULL, &p));
        p->parameter_number = g->param_count;
        g->params[g->param_count++] = in;
        *out = p;
    } else {
        cxla_instr *ops[CXLA_MAX_RANK * 4];
        cxla_instr **o = ops;
        if (in->operand_count > (int64_t)(sizeof(ops) / sizeof(ops[0]))) {
            o = cxla_arena_alloc_array(m->arena, (size_t)in->operand_count, sizeof(*o));
            if (!o) return PASSES_OOM();
        }
        for (int64_t k = 0; k < in->operand_count; k++)
            CXLA_RETURN_IF_ERROR(clone_into(fc, g, in->operands[k], map, &o[k]));
        CXLA_RETURN_IF_ERROR(passes_clone_instr(fc, in, o, out));
    }
    return cxla_strmap_put(map, in->name, strlen(in->name), *out) ? NULL : PASSES_OOM();
}

cxla_status passes_set_fusion_params(cxla_computation *fc, int64_t count) {
    fc->param_count = count;
    fc->params = cxla_arena_alloc_array(fc->module->arena, (size_t)(count ? count : 1),
                                        sizeof(cxla_instr *));
    if (!fc->params) return PASSES_OOM();
    for (int64_t i = 0; i < fc->instr_count; i++)
        if (fc->instrs[i]->opcode == CXLA_OP_PARAMETER)
            fc->params[fc->instrs[i]->parameter_number] = fc->instrs[i];
    return NULL;
}

cxla_status passes_make_fusion(cxla_computation *comp, cxla_computation *fc, const char *kind,
                               const cxla_shape *shape, cxla_instr *const *operands, int64_t n,
                               cxla_instr **out) {
    cxla_module *m = comp->module;
    CXLA_RETURN_IF_ERROR(passes_add(comp, CXLA_OP_FUSION, "fusion", shape, n, operands, out));
    cxla_attr k = {.id = CXLA_ATTR_KIND, .name = "kind", .kind = CXLA_ATTR_KIND_WORD};
    k.v.s = kind;
    CXLA_RETURN_IF_ERROR(cxla_instr_set_attr(*out, &k));
    cxla_attr c = {.id = CXLA_ATTR_CALLS, .name = "calls", .kind = CXLA_ATTR_KIND_COMPUTATIONS};
    c.v.comps.count = 1;
    c.v.comps.items = cxla_arena_alloc_array(m->arena, 1, sizeof(cxla_computation *));
    if (!c.v.comps.items) return PASSES_OOM();
    c.v.comps.items[0] = fc;
    return cxla_instr_set_attr(*out, &c);
}

cxla_status passes_new_fused_computation(cxla_module *m, cxla_computation **out) {
    const char *name = cxla_module_unique_name(m, "fused_computation");
    if (!name) return PASSES_OOM();
    return cxla_module_add_computation(m, name, out);
}

/* Removes the group's originals that nothing uses any more, users before operands. */
static cxla_status remove_dead(group *g) {
    bool again = true;
    while (again) {
        again = false;
        for (int64_t i = g->count - 1; i >= 0; i--) {
            cxla_instr *in = g->items[i];
            if (!in->parent || in->user_count > 0 || in->parent->root == in) continue;
            CXLA_RETURN_IF_ERROR(cxla_computation_remove_instr(in->parent, in));
            again = true;
        }
    }
    return NULL;
}

static cxla_status fuse_at(cxla_instr *root, bool rows, bool *changed) {
    bool input = input_root(root);
    if (!input && !loop_fusible(root)) return NULL;
    if (root->opcode == CXLA_OP_CONSTANT || root->opcode == CXLA_OP_IOTA) return NULL;
    group *g = calloc(1, sizeof(*g));
    if (!g) return PASSES_OOM();
    g->items[0] = root;
    g->moved[0] = true;
    g->count = 1;
    grow(g, rows);
    int64_t useful = 0;
    for (int64_t i = 1; i < g->count; i++)
        if (g->items[i]->opcode != CXLA_OP_CONSTANT) useful++;
    cxla_status s = NULL;
    if (useful > 0) {
        cxla_computation *comp = root->parent, *fc = NULL;
        cxla_module *m = comp->module;
        cxla_strmap map;
        cxla_strmap_init(&map, m->arena);
        cxla_instr *froot = NULL, *f = NULL;
        s = passes_new_fused_computation(m, &fc);
        if (!s) s = clone_into(fc, g, root, &map, &froot);
        if (!s) {
            fc->root = froot;
            s = passes_set_fusion_params(fc, g->param_count);
        }
        if (!s)
            s = passes_make_fusion(comp, fc, input ? "kInput" : "kLoop", &root->shape, g->params,
                                   g->param_count, &f);
        if (!s) s = cxla_instr_replace_all_uses(root, f);
        if (!s) s = remove_dead(g);
        if (!s) *changed = true;
    }
    free(g);
    return s;
}

/* ---- multi-output fusion ----------------------------------------------------------- */

/* Reachability over operands within one computation. Positions in a post-order (operands
 * first) bound the question: a |target| after |from| is never reached, and the walk skips
 * operands at or before |target|'s position. Computations of up to REACH_BITS_MAX
 * instructions keep every instruction's transitive operands as a bit set over positions,
 * so that a question is one bit (multi-output fusion asks about every pair of candidates
 * that share an operand); larger ones walk the operands with a mark per instruction id
 * stamped with the walk's number, visiting each instruction once (a walk without marks
 * revisits shared operands once per path). The order is recomputed after a merge
 * changes the computation. */
#define REACH_BITS_MAX 4096

typedef struct reach_walk {
    const cxla_computation *comp;
    bool stale;
    int64_t *pos;   /* by instruction id; -1: not in comp */
    uint32_t *mark; /* by instruction id; == gen: seen in this walk */
    int64_t count;  /* entries of pos and mark */
    uint32_t gen;
    const cxla_instr **stack; /* comp->instr_count entries */
    uint64_t *bits;           /* [position][words]: the transitive operands' positions */
    int64_t words;
} reach_walk;

static void reach_free(reach_walk *w) {
    free(w->bits);
    free(w->pos);
    free(w->mark);
    free(w->stack);
}

static int64_t reach_pos(const reach_walk *w, const cxla_instr *in) {
    return in->parent == w->comp && in->id >= 0 && in->id < w->count ? w->pos[in->id] : -1;
}

static cxla_status reach_order(reach_walk *w) {
    const cxla_computation *c = w->comp;
    int64_t n = c->module->next_id, len = c->instr_count ? c->instr_count : 1;
    reach_free(w);
    w->bits = NULL;
    w->pos = malloc((size_t)n * sizeof(*w->pos));
    w->mark = calloc((size_t)n, sizeof(*w->mark));
    w->stack = malloc((size_t)len * sizeof(*w->stack));
    w->count = n;
    w->gen = 0;
    cxla_arena *arena = cxla_arena_create();
    if (!w->pos || !w->mark || !w->stack || !arena) {
        cxla_arena_destroy(arena);
        return PASSES_OOM();
    }
    cxla_instr **order;
    cxla_status s = cxla_computation_post_order_in(c, arena, &order);
    if (!s) {
        for (int64_t i = 0; i < n; i++) w->pos[i] = -1;
        for (int64_t i = 0; i < c->instr_count; i++)
            if (order[i]->id >= 0 && order[i]->id < n) w->pos[order[i]->id] = i;
        w->stale = false;
    }
    if (!s && c->instr_count <= REACH_BITS_MAX) { /* without the memory, the walk answers */
        w->words = (c->instr_count + 63) / 64;
        w->bits = calloc((size_t)(c->instr_count * w->words), sizeof(*w->bits));
        for (int64_t i = 0; w->bits && i < c->instr_count; i++) {
            uint64_t *row = w->bits + i * w->words;
            for (int64_t k = 0; k < order[i]->operand_count; k++) {
                int64_t p = reach_pos(w, order[i]->operands[k]);
                if (p < 0 || p >= i) continue;
                const uint64_t *from = w->bits + p * w->words;
                for (int64_t j = 0; j < w->words; j++) row[j] |= from[j];
                row[p / 64] |= 1ull << (p % 64);
            }
        }
    }
    cxla_arena_destroy(arena);
    return s;
}

/* True when |target| is |from| or one of its transitive operands in the walk's
 * computation. */
static bool reaches(reach_walk *w, const cxla_instr *from, const cxla_instr *target) {
    int64_t lo = reach_pos(w, target), at = reach_pos(w, from);
    if (from == target) return true;
    if (lo < 0 || at < 0 || lo > at) return false;
    if (w->bits) return (w->bits[at * w->words + lo / 64] >> (lo % 64)) & 1;
    if (++w->gen == 0) { /* wrapped: clear the marks once */
        memset(w->mark, 0, (size_t)w->count * sizeof(*w->mark));
        w->gen = 1;
    }
    int64_t top = 0;
    w->stack[top++] = from;
    w->mark[from->id] = w->gen;
    while (top > 0) {
        const cxla_instr *in = w->stack[--top];
        for (int64_t i = 0; i < in->operand_count; i++) {
            const cxla_instr *op = in->operands[i];
            if (op == target) return true;
            int64_t p = reach_pos(w, op);
            if (p <= lo || w->mark[op->id] == w->gen) continue;
            w->mark[op->id] = w->gen;
            w->stack[top++] = op; /* marked once, so at most instr_count entries */
        }
    }
    return false;
}

static const cxla_instr *fused_root(const cxla_instr *f) {
    cxla_computation *fc = cxla_instr_called(f, CXLA_ATTR_CALLS);
    return fc ? fc->root : NULL;
}

static bool mof_candidate(const cxla_instr *f) {
    if (f->opcode != CXLA_OP_FUSION || !f->parent || !passes_is_static_array(&f->shape))
        return false;
    const char *kind = cxla_instr_word(f, CXLA_ATTR_KIND);
    return kind && (strcmp(kind, "kLoop") == 0 || strcmp(kind, "kInput") == 0) && fused_root(f);
}

static bool same_loop(const cxla_instr *a, const cxla_instr *b) {
    const char *ka = cxla_instr_word(a, CXLA_ATTR_KIND), *kb = cxla_instr_word(b, CXLA_ATTR_KIND);
    if (strcmp(ka, kb) != 0) return false;
    if (strcmp(ka, "kLoop") == 0) return cxla_shape_same_dims(&a->shape, &b->shape);
    const cxla_instr *ra = fused_root(a), *rb = fused_root(b);
    if (ra->opcode != CXLA_OP_REDUCE || rb->opcode != CXLA_OP_REDUCE) return false;
    int64_t na, nb;
    const int64_t *da = cxla_instr_ints(ra, CXLA_ATTR_DIMENSIONS, &na);
    const int64_t *db = cxla_instr_ints(rb, CXLA_ATTR_DIMENSIONS, &nb);
    return na == nb && (na == 0 || memcmp(da, db, (size_t)na * sizeof(int64_t)) == 0) &&
           cxla_shape_same_dims(&ra->operands[0]->shape, &rb->operands[0]->shape) &&
           cxla_shape_same_dims(&a->shape, &b->shape);
}

static bool share_large_operand(const cxla_instr *a, const cxla_instr *b) {
    for (int64_t i = 0; i < a->operand_count; i++)
        for (int64_t j = 0; j < b->operand_count; j++)
            if (a->operands[i] == b->operands[j] &&
                passes_elements(&a->operands[i]->shape) >= MOF_MIN_ELEMENTS)
                return true;
    return false;
}

/* Copies fusion |f|'s body into |fc|, its parameters mapped to |fc|'s parameters for
 * the same outside operands (added to |operands| as needed); returns the copied root. */
static cxla_status copy_body(cxla_computation *fc, const cxla_instr *f, cxla_instr **operands,
                             cxla_instr **fparams, int64_t *n, cxla_instr **out_root) {
    cxla_computation *src = cxla_instr_called(f, CXLA_ATTR_CALLS);
    cxla_module *m = fc->module;
    cxla_instr **order;
    CXLA_RETURN_IF_ERROR(cxla_computation_post_order(src, &order));
    cxla_strmap map;
    cxla_strmap_init(&map, m->arena);
    for (int64_t i = 0; i < src->instr_count; i++) {
        cxla_instr *old = order[i], *copy = NULL;
        if (old->opcode == CXLA_OP_PARAMETER) {
            cxla_instr *outside = f->operands[old->parameter_number];
            for (int64_t k = 0; k < *n; k++)
                if (operands[k] == outside) copy = fparams[k];
            if (!copy) {
                if (*n == MAX_PARAMS * 2)
                    return cxla_error(CXLA_STATUS_INTERNAL, "fusion: too many parameters");
                char base[32];
                snprintf(base, sizeof(base), "param_%d", (int)*n);
                CXLA_RETURN_IF_ERROR(
                    passes_add(fc, CXLA_OP_PARAMETER, base, &outside->shape, 0, NULL, &copy));
                copy->parameter_number = *n;
                operands[*n] = outside;
                fparams[*n] = copy;
                (*n)++;
            }
        } else {
            cxla_instr **ops = cxla_arena_alloc_array(
                m->arena, (size_t)(old->operand_count ? old->operand_count : 1), sizeof(*ops));
            if (!ops) return PASSES_OOM();
            for (int64_t k = 0; k < old->operand_count; k++)
                ops[k] =
                    cxla_strmap_get(&map, old->operands[k]->name, strlen(old->operands[k]->name));
            CXLA_RETURN_IF_ERROR(passes_clone_instr(fc, old, ops, &copy));
        }
        if (!cxla_strmap_put(&map, old->name, strlen(old->name), copy)) return PASSES_OOM();
    }
    *out_root = cxla_strmap_get(&map, src->root->name, strlen(src->root->name));
    return NULL;
}

static cxla_status merge(cxla_instr *a, cxla_instr *b) {
    cxla_computation *comp = a->parent;
    cxla_module *m = comp->module;
    cxla_computation *fc;
    CXLA_RETURN_IF_ERROR(passes_new_fused_computation(m, &fc));
    cxla_instr *operands[MAX_PARAMS * 2], *fparams[MAX_PARAMS * 2], *ra, *rb, *t, *f;
    int64_t n = 0;
    CXLA_RETURN_IF_ERROR(copy_body(fc, a, operands, fparams, &n, &ra));
    CXLA_RETURN_IF_ERROR(copy_body(fc, b, operands, fparams, &n, &rb));
    cxla_shape elems[2] = {a->shape, b->shape};
    cxla_shape tuple = {.type = CXLA_TUPLE, .tuple_count = 2, .elements = elems}, ts;
    CXLA_RETURN_IF_ERROR(cxla_shape_copy_to_arena(m->arena, &tuple, &ts));
    cxla_instr *roots[2] = {ra, rb};
    CXLA_RETURN_IF_ERROR(passes_add(fc, CXLA_OP_TUPLE, "tuple", &ts, 2, roots, &t));
    fc->root = t;
    CXLA_RETURN_IF_ERROR(passes_set_fusion_params(fc, n));
    CXLA_RETURN_IF_ERROR(
        passes_make_fusion(comp, fc, cxla_instr_word(a, CXLA_ATTR_KIND), &ts, operands, n, &f));
    cxla_instr *parts[2] = {a, b};
    for (int64_t i = 0; i < 2; i++) {
        cxla_instr *gte;
        CXLA_RETURN_IF_ERROR(passes_add(comp, CXLA_OP_GET_TUPLE_ELEMENT, "get-tuple-element",
                                        &parts[i]->shape, 1, &f, &gte));
        cxla_attr idx = {.id = CXLA_ATTR_INDEX, .name = "index", .kind = CXLA_ATTR_KIND_INT};
        idx.v.i = i;
        CXLA_RETURN_IF_ERROR(cxla_instr_set_attr(gte, &idx));
        CXLA_RETURN_IF_ERROR(passes_replace(parts[i], gte));
    }
    return NULL;
}

static cxla_status multi_output(cxla_computation *comp, bool *changed) {
    int64_t n = comp->instr_count;
    cxla_instr **snap =
        cxla_arena_alloc_array(comp->module->arena, (size_t)(n ? n : 1), sizeof(*snap));
    if (!snap) return PASSES_OOM();
    memcpy(snap, comp->instrs, (size_t)n * sizeof(*snap));
    reach_walk walk = {.comp = comp, .stale = true};
    for (int64_t i = 0; i < n; i++) {
        if (!mof_candidate(snap[i])) continue;
        for (int64_t j = i + 1; j < n; j++) {
            cxla_instr *a = snap[i], *b = snap[j];
            if (!mof_candidate(b) || !same_loop(a, b) || !share_large_operand(a, b)) continue;
            if (a->operand_count + b->operand_count > MAX_PARAMS) continue;
            cxla_status s = walk.stale ? reach_order(&walk) : NULL;
            if (!s && (reaches(&walk, a, b) || reaches(&walk, b, a))) continue;
            if (!s) s = merge(a, b);
            walk.stale = true;
            if (s) {
                reach_free(&walk);
                return s;
            }
            *changed = true;
            break; /* a is gone */
        }
    }
    reach_free(&walk);
    return NULL;
}

/* ---- the pass ---------------------------------------------------------------------- */

/* Marks the computations that run as control flow: the entry, while bodies and
 * conditions, conditional branches, call bodies. */
void passes_mark_control(cxla_module *m, cxla_computation *c, bool *marks, int depth) {
    int64_t idx = -1;
    for (int64_t i = 0; i < m->comp_count; i++)
        if (m->comps[i] == c) idx = i;
    if (idx < 0 || marks[idx] || depth > 64) return;
    marks[idx] = true;
    for (int64_t i = 0; i < c->instr_count; i++) {
        const cxla_instr *in = c->instrs[i];
        if (in->opcode != CXLA_OP_WHILE && in->opcode != CXLA_OP_CONDITIONAL &&
            in->opcode != CXLA_OP_CALL)
            continue;
        cxla_computation *called[64];
        int64_t k = cxla_instr_called_computations(in, called, 64);
        for (int64_t j = 0; j < k && j < 64; j++)
            passes_mark_control(m, called[j], marks, depth + 1);
    }
}

static cxla_status fusion(cxla_module *m, bool rows, bool *changed) {
    *changed = false;
    if (!m->entry) return NULL;
    int64_t count = m->comp_count;
    bool *marks = calloc((size_t)(count ? count : 1), sizeof(bool));
    cxla_computation **comps = malloc((size_t)(count ? count : 1) * sizeof(*comps));
    if (!marks || !comps) {
        free(marks);
        free(comps);
        return PASSES_OOM();
    }
    memcpy(comps, m->comps, (size_t)count * sizeof(*comps));
    passes_mark_control(m, m->entry, marks, 0);
    cxla_status s = NULL;
    for (int64_t c = 0; c < count && !s; c++) {
        if (!marks[c]) continue;
        cxla_computation *comp = comps[c];
        cxla_instr **order;
        s = cxla_computation_post_order(comp, &order);
        for (int64_t i = comp->instr_count - 1; i >= 0 && !s; i--)
            if (order[i]->parent == comp) s = fuse_at(order[i], rows, changed);
        if (!s) s = multi_output(comp, changed);
    }
    free(marks);
    free(comps);
    if (s || !*changed) return s;
    /* Fused computations were appended after their callers: put callees first again. */
    cxla_computation **corder;
    int64_t n;
    CXLA_RETURN_IF_ERROR(cxla_module_computation_post_order(m, &corder, &n));
    if (n == m->comp_count) memcpy(m->comps, corder, (size_t)n * sizeof(*corder));
    return NULL;
}

static cxla_status run_fusion(cxla_module *m, bool *changed) {
    return fusion(m, false, changed);
}

static cxla_status run_fusion_rows(cxla_module *m, bool *changed) {
    return fusion(m, true, changed);
}

const cxla_pass cxla_pass_fusion = {"fusion", run_fusion};
const cxla_pass cxla_pass_fusion_rows = {"fusion", run_fusion_rows};
