/* The cpu backend's executable: a sequence of steps over one preallocated arena (issue 13,
 * section 3). Every computation that runs in sequence (the entry, while conditions and
 * bodies, conditional branches, called computations, recursively) becomes a sequence of
 * steps; nothing of the module runs on the interpreter's driver. A step is
 * - a generated kernel or a library call (cpu_call),
 * - a copy of buffers (while state that cannot be updated in place, branch results),
 * - an in-place dynamic-update-slice (writes the update into its operand's buffer),
 * - a kernel that declares results it may write over its operands (cpu_kernel_info.in_place:
 *   scatter) gets those operands' buffers when they die there, as dynamic-update-slice does,
 * - a while loop, a conditional or a call, with the step sequences of what they call,
 * - a service step (cpu_service.h): collectives through exec_comm, custom calls through
 *   the custom-call registry, host transfers through exec_host, rng over exec's
 *   generators, on the arena's buffers,
 * - or, for what has none of these yet, the interpreter's handler of that one instruction
 *   (interp_handler) run on literals that view the arena's buffers.
 *
 * Buffers. Every array (or token) leaf that an instruction produces is a value; tuples and
 * get-tuple-element only regroup values, so they copy nothing. Values are merged into
 * classes that share one buffer: the result of an in-place dynamic-update-slice or
 * scatter with its operand, the state of a while loop with its initial value (when that dies at the
 * loop) and with the body's results (when the body's parameter is dead before they are computed), a
 * branch's result with the conditional's result buffer. A value may be merged into another's buffer
 * only when the other is dead by then and is owned by the sequence that writes it: never an entry
 * parameter (the caller's, only read), a constant, or a value a called computation receives from
 * its caller.
 *
 * Liveness. Steps are numbered in one global order in which a control step's children
 * come between its start and its end. A buffer lives from its first write to its last
 * read; a read inside a loop of a buffer written before the loop keeps it alive until the
 * loop ends (the next iteration reads it again). The arena offsets then come from
 * cpu_arena_assign (cpu_plan.c). Entry parameters are read where they lie; the entry's
 * result leaves are written straight into the result literals when they are arena
 * buffers of their own.
 *
 * Bounded dynamic shapes: buffers at the bounds; each class with a dynamic shape keeps
 * its current sizes in the run (dyn_off); get-dimension-size and set-dimension-size are
 * steps over those sizes (S_SIZE); kernels generated at the bounds run the instructions
 * cpu_bounds_kind (cpu_bounds.c) accepts, the result's sizes from exec_dynamic_sizes; every
 * instructions that move elements by the sizes (reshape, concatenate, pad, reverse,
 * dynamic-slice, dynamic-update-slice, dynamic-reshape) and the reduces with a reducer the
 * interpreter recognizes that no kernel runs are steps of cpu_dynamic.c (S_MOVE);
 * every other instruction that touches one is a handler step (calls, services and in-place
 * updates need static shapes). Modules with
 * unbounded dimensions keep the interpreter's driver (cpu_plan_build returns no plan;
 * docs/semantics.md).
 *
 * This file builds the plan (values, classes, steps, liveness, offsets); cpu_steps_run.c
 * runs it; cpu_steps.h holds the data both read. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_loop.h"
#include "cpu/cpu_steps.h"
#include "cpu/emit.h"
#include "literal/literal_internal.h"

#define OOM() CPU_STEPS_OOM()

/* ---- values -------------------------------------------------------------------------- */

typedef struct event {
    int64_t v, pos;
    bool def;
} event;

typedef struct range {
    int64_t a, b;
} range;

typedef struct bld {
    cpu_plan *p;
    const cxla_module *m;
    cpu_kernel_fn const *kernels;
    const cpu_kernel_info *infos;
    const cpu_call *calls;
    int64_t id_count;
    int64_t vcap;
    event *ev;
    int64_t en, ecap;
    range *loops;
    int64_t ln, lcap;
    int64_t pos;
    int64_t next_seq;
    int depth;
} bld;

static int64_t find(value *v, int64_t x) {
    while (v[x].parent != x) {
        v[x].parent = v[v[x].parent].parent;
        x = v[x].parent;
    }
    return x;
}

/* Merges the class of |a| into that of |b| (both arena buffers of one size). */
static void merge(value *v, int64_t a, int64_t b) {
    a = find(v, a);
    b = find(v, b);
    if (a == b) return;
    v[a].parent = b;
    v[b].members += v[a].members;
}

static int64_t new_value(bld *b, const cxla_shape *shape, vkind kind, int64_t owner) {
    cpu_plan *p = b->p;
    if (p->value_count == b->vcap) {
        int64_t cap = b->vcap ? 2 * b->vcap : 256;
        value *n = realloc(p->values, (size_t)cap * sizeof(*n));
        if (!n) return -1;
        p->values = n;
        b->vcap = cap;
    }
    int64_t id = p->value_count++;
    value *v = &p->values[id];
    memset(v, 0, sizeof(*v));
    v->parent = id;
    v->members = 1;
    v->kind = shape->type == CXLA_TOKEN ? V_TOKEN : kind;
    v->shape = shape;
    v->owner = owner;
    v->def_seq = v->def_pos = v->def_leaf = -1;
    v->result = -1;
    v->alias_of = -1;
    v->sub_of = -1;
    if (cxla_type_is_array(shape->type) && cxla_shape_byte_size(shape, &v->size)) v->size = 0;
    return id;
}

static bool note(bld *b, int64_t v, bool def) {
    if (b->en == b->ecap) {
        int64_t cap = b->ecap ? 2 * b->ecap : 1024;
        event *n = realloc(b->ev, (size_t)cap * sizeof(*n));
        if (!n) return false;
        b->ev = n;
        b->ecap = cap;
    }
    b->ev[b->en++] = (event){v, b->pos, def};
    return true;
}

static int64_t leaf_count(const cxla_shape *s) {
    if (s->type != CXLA_TUPLE) return 1;
    int64_t n = 0;
    for (int64_t i = 0; i < s->tuple_count; i++) n += leaf_count(&s->elements[i]);
    return n;
}

/* The leaves of |s| depth-first, into |out| (leaf_count(s) entries). */
static void leaf_shapes(const cxla_shape *s, const cxla_shape **out, int64_t *n) {
    if (s->type != CXLA_TUPLE) {
        out[(*n)++] = s;
        return;
    }
    for (int64_t i = 0; i < s->tuple_count; i++) leaf_shapes(&s->elements[i], out, n);
}

static bool static_shape(const cxla_shape *s) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            if (!static_shape(&s->elements[i])) return false;
        return true;
    }
    return !cxla_type_is_array(s->type) || cxla_shape_is_static(s);
}

/* Whether every dynamic dimension of |s| has a bound (buffers are sized at the bounds). */
static bool bounded_shape(const cxla_shape *s) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            if (!bounded_shape(&s->elements[i])) return false;
        return true;
    }
    if (!cxla_type_is_array(s->type)) return true;
    for (int64_t d = 0; d < s->rank; d++)
        if (s->dims[d] == CXLA_DIM_UNBOUNDED) return false;
    return true;
}

/* Whether |in| and its operands have static shapes only (kernels, calls, services and
 * in-place updates need that; the others go to the interpreter's handler, which meets
 * values below their bounds as the driver does). */
static bool static_instr(const cxla_instr *in) {
    if (!static_shape(&in->shape)) return false;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (!static_shape(&in->operands[k]->shape)) return false;
    return true;
}

/* ---- steps ----------------------------------------------------------------------------- */

static step *add_step(bld *b, seq *q, step_kind kind, const cxla_instr *in,
                      const cxla_computation *comp, int64_t in_count, int64_t out_count) {
    if (q->count == q->cap) {
        int64_t cap = q->cap ? 2 * q->cap : 16;
        step *n = realloc(q->steps, (size_t)cap * sizeof(*n));
        if (!n) return NULL;
        q->steps = n;
        q->cap = cap;
    }
    step *sp = &q->steps[q->count];
    memset(sp, 0, sizeof(*sp));
    sp->kind = kind;
    sp->instr = in;
    sp->comp = comp;
    sp->in_count = in_count;
    sp->out_count = out_count;
    sp->in = calloc((size_t)(in_count ? in_count : 1), sizeof(int64_t));
    sp->out = calloc((size_t)(out_count ? out_count : 1), sizeof(int64_t));
    if (!sp->in || !sp->out) {
        free(sp->in);
        free(sp->out);
        return NULL;
    }
    q->count++;
    if (in_count > b->p->max_operands) b->p->max_operands = in_count;
    if (out_count > b->p->max_operands) b->p->max_operands = out_count;
    return sp;
}

static void seq_free(seq *q) {
    for (int64_t i = 0; i < q->count; i++) {
        step *sp = &q->steps[i];
        free(sp->in);
        free(sp->out);
        for (int64_t k = 0; k < sp->sub_count; k++) seq_free(&sp->sub[k]);
        free(sp->sub);
        cpu_loop_free(sp->fused);
    }
    free(q->steps);
    memset(q, 0, sizeof(*q));
}

/* A copy step of |n| pairs src[i] -> dst[i] at the current position. */
static cxla_status add_copies(bld *b, seq *q, const cxla_instr *in, const cxla_computation *comp,
                              const int64_t *src, const int64_t *dst, int64_t n) {
    if (n == 0) return NULL;
    step *sp = add_step(b, q, S_COPY, in, comp, n, n);
    if (!sp) return OOM();
    for (int64_t i = 0; i < n; i++) {
        sp->in[i] = src[i];
        sp->out[i] = dst[i];
        if (!note(b, src[i], false) || !note(b, dst[i], true)) return OOM();
        b->p->stats.copy_bytes += b->p->values[dst[i]].size;
    }
    b->p->stats.copy_steps++;
    b->pos++;
    return NULL;
}

/* ---- building one sequence ---------------------------------------------------------------- */

/* What a sequence knows of its instructions while it is built. */
typedef struct frame {
    const cxla_computation *comp;
    int64_t id; /* the sequence's number (value owners) */
    cxla_instr **order;
    int64_t n;
    int64_t *pos_of;  /* by instruction id: position in order, -1 */
    int64_t **leaves; /* by position: value ids */
    int64_t *nleaves; /* by position */
    int64_t **last;   /* by position and leaf: the last position that reads it */
} frame;

static void frame_free(frame *f) {
    for (int64_t i = 0; i < f->n; i++) {
        if (f->leaves) free(f->leaves[i]);
        if (f->last) free(f->last[i]);
    }
    free(f->leaves);
    free(f->last);
    free(f->nleaves);
    free(f->pos_of);
}

/* Offset of element |index| of tuple shape |s| among its leaves. */
static int64_t element_offset(const cxla_shape *s, int64_t index) {
    int64_t off = 0;
    for (int64_t i = 0; i < index && i < s->tuple_count; i++) off += leaf_count(&s->elements[i]);
    return off;
}

/* The instructions that only name a part of their operand 0, as get-tuple-element does:
 * the element index (-1: all of it). */
static bool alias_of(const cxla_instr *in, int64_t *index) {
    switch (in->opcode) {
    case CXLA_OP_GET_TUPLE_ELEMENT:
        *index = 0;
        cxla_instr_int(in, CXLA_ATTR_INDEX, index);
        return true;
    case CXLA_OP_ALL_REDUCE_DONE:
    case CXLA_OP_ASYNC_UPDATE: *index = -1; return in->operand_count == 1;
    case CXLA_OP_ALL_GATHER_DONE:
    case CXLA_OP_COLLECTIVE_PERMUTE_DONE:
    case CXLA_OP_ASYNC_DONE:
        *index = 1;
        return in->operand_count == 1 && in->operands[0]->shape.type == CXLA_TUPLE &&
               in->operands[0]->shape.tuple_count >= 2;
    default: return false;
    }
}

/* Last reads of every leaf, from the users back to the producers: a tuple or a
 * get-tuple-element reads nothing itself but hands its leaves' reads to its operand's. */
static cxla_status compute_last_reads(frame *f) {
    for (int64_t i = 0; i < f->n; i++) {
        f->nleaves[i] = leaf_count(&f->order[i]->shape);
        f->last[i] = malloc((size_t)(f->nleaves[i] ? f->nleaves[i] : 1) * sizeof(int64_t));
        if (!f->last[i]) return OOM();
        for (int64_t e = 0; e < f->nleaves[i]; e++) f->last[i][e] = NEVER_READ;
    }
    int64_t r = f->pos_of[f->comp->root->id];
    for (int64_t e = 0; e < f->nleaves[r]; e++) f->last[r][e] = READ_AT_END;
    for (int64_t i = f->n - 1; i >= 0; i--) {
        const cxla_instr *u = f->order[i];
        int64_t off = 0, index = 0;
        bool alias = alias_of(u, &index);
        for (int64_t k = 0; k < u->operand_count; k++) {
            int64_t j = f->pos_of[u->operands[k]->id];
            if (j < 0) return cxla_error(CXLA_STATUS_INTERNAL, "%s: operand outside", u->name);
            for (int64_t e = 0; e < f->nleaves[j]; e++) {
                int64_t at = i;
                if (u->opcode == CXLA_OP_TUPLE) {
                    at = f->last[i][off + e];
                } else if (alias) {
                    int64_t start = index < 0 ? 0 : element_offset(&u->operands[0]->shape, index);
                    if (e < start || e >= start + f->nleaves[i]) continue;
                    at = f->last[i][e - start];
                }
                if (at > f->last[j][e]) f->last[j][e] = at;
            }
            off += f->nleaves[j];
        }
    }
    return NULL;
}

/* Whether value |v| of frame |f| is dead after position |i| and |f|'s to overwrite. */
static bool dies_at(const bld *b, const frame *f, int64_t v, int64_t i) {
    const value *x = &b->p->values[v];
    if (x->owner != f->id || x->def_seq != f->id || x->def_pos < 0) return false;
    const value *c = &b->p->values[find(b->p->values, v)];
    if (c->kind != V_ARENA && !(c->kind == V_ARG && c->writable)) return false;
    return f->last[x->def_pos][x->def_leaf] <= i;
}

static cxla_status build_seq(bld *b, const cxla_computation *comp, int64_t *const *param_leaves,
                             const bool *param_owned, seq *q, int64_t seq_id, int64_t **out_root,
                             int64_t *out_root_count, frame *out_frame);

/* How each instruction runs, for cpu_plan_what: the first word set stays. */
enum {
    W_NONE,
    W_STEP,
    W_HANDLER,
    W_SVC,
    W_IN_PLACE,
    W_ALIAS,
    W_KERNEL_IN_PLACE,
    W_CONCAT_IN_PLACE,
    W_SIZES,
    W_MOVE,
    W_DYN_REDUCE,
    W_DYN_STEP
};

static void set_what(bld *b, const cxla_instr *in, uint8_t what) {
    if (in->id >= 0 && in->id < b->p->id_count && !b->p->what[in->id]) b->p->what[in->id] = what;
}

/* Fresh values for the leaves of instruction |i| of |f|, produced by a step there. */
static cxla_status fresh_leaves(bld *b, frame *f, int64_t i) {
    const cxla_instr *in = f->order[i];
    int64_t n = f->nleaves[i];
    const cxla_shape *small[16];
    const cxla_shape **shapes = n <= 16 ? small : malloc((size_t)n * sizeof(*shapes));
    if (!shapes) return OOM();
    int64_t c = 0;
    leaf_shapes(&in->shape, shapes, &c);
    cxla_status s = NULL;
    for (int64_t e = 0; e < n && !s; e++) {
        int64_t v = new_value(b, shapes[e], V_ARENA, f->id);
        if (v < 0) {
            s = OOM();
            break;
        }
        value *x = &b->p->values[v];
        x->def_seq = f->id;
        x->def_pos = i;
        x->def_leaf = e;
        x->from_step = true;
        f->leaves[i][e] = v;
    }
    if (shapes != small) free(shapes);
    return s;
}

/* The operands' leaves of |in| in order, into a new array (*out_n of them). */
static cxla_status operand_leaves(frame *f, const cxla_instr *in, int64_t **out, int64_t *out_n) {
    int64_t n = 0;
    for (int64_t k = 0; k < in->operand_count; k++) n += f->nleaves[f->pos_of[in->operands[k]->id]];
    int64_t *ls = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!ls) return OOM();
    int64_t c = 0;
    for (int64_t k = 0; k < in->operand_count; k++) {
        int64_t j = f->pos_of[in->operands[k]->id];
        for (int64_t e = 0; e < f->nleaves[j]; e++) ls[c++] = f->leaves[j][e];
    }
    *out = ls;
    *out_n = n;
    return NULL;
}

/* Whether |in| can update operand 0 in place as a dynamic-update-slice step. */
static bool dus_in_place(const bld *b, const frame *f, const cxla_instr *in, int64_t i,
                         size_t *out_elem) {
    if (in->opcode != CXLA_OP_DYNAMIC_UPDATE_SLICE || in->operand_count < 2) return false;
    /* Scalar start indices only (run_dus reads one per dimension); the older form with one
     * vector of them is a kernel. */
    if (in->operand_count != 2 + in->shape.rank) return false;
    if (!static_instr(in)) return false;
    if (!cxla_type_is_array(in->shape.type) || in->shape.type == CXLA_TUPLE) return false;
    int64_t count = 0;
    size_t size = 0;
    if (cxla_shape_element_count(&in->shape, &count) || cxla_shape_byte_size(&in->shape, &size) ||
        count <= 0)
        return false;
    size_t elem = size / (size_t)count;
    if (elem == 0 || elem * (size_t)count != size) return false; /* packed sub-byte types */
    int64_t v0 = f->leaves[f->pos_of[in->operands[0]->id]][0];
    int64_t v1 = f->leaves[f->pos_of[in->operands[1]->id]][0];
    if (find(b->p->values, v0) == find(b->p->values, v1)) return false;
    if (!dies_at(b, f, v0, i)) return false;
    *out_elem = elem;
    return true;
}

/* Results of a kernel that may take over their operand's buffer (cpu_kernel_info.in_place:
 * scatter): out[k] joins in[k]'s class when in[k] dies at this step and is the sequence's
 * to overwrite (dies_at), no other operand leaf of the step is in that class (the kernel
 * reads the others, the updates say, while it writes the result), and the sizes agree.
 * Returns how many did. */
static int64_t kernel_in_place(bld *b, const frame *f, step *sp, int64_t i) {
    int64_t merged = 0;
    value *v = b->p->values;
    for (int64_t k = 0; k < sp->info.in_place && k < sp->in_count && k < sp->out_count; k++) {
        int64_t c = find(v, sp->in[k]);
        bool unique = true;
        for (int64_t j = 0; j < sp->in_count; j++)
            if (j != k && find(v, sp->in[j]) == c) unique = false;
        if (!unique || v[c].size != v[sp->out[k]].size || !dies_at(b, f, sp->in[k], i)) continue;
        merge(v, sp->out[k], sp->in[k]);
        merged++;
    }
    b->p->stats.in_place += merged;
    return merged;
}

/* Whether |in| only lays its operands one after the other: a concatenate along a
 * dimension whose outer dimensions are all 1, in row-major layouts, or a fusion of one
 * whose operands are its parameters (or reshapes of them, which move no byte in
 * row-major order), each used once. Operand k is then bytes [offs[k], offs[k] + its
 * size) of the result. */
bool cpu_concat_pieces(const cxla_instr *in, size_t *offs) {
    const cxla_instr *root = in;
    const cxla_computation *fused = NULL;
    if (in->opcode == CXLA_OP_FUSION) {
        fused = cxla_instr_called(in, CXLA_ATTR_CALLS);
        if (!fused || !fused->root) return false;
        root = fused->root;
    }
    if (root->opcode != CXLA_OP_CONCATENATE || root->operand_count != in->operand_count ||
        !cxla_type_is_array(in->shape.type) || !cxla_shape_is_static(&in->shape) ||
        !cxla_layout_is_default(&in->shape) || in->operand_count < 1 || in->operand_count > 4096)
        return false;
    int64_t nd = 0, dim = 0;
    const int64_t *dims = cxla_instr_ints(root, CXLA_ATTR_DIMENSIONS, &nd);
    if (!dims || nd != 1) return false;
    dim = dims[0];
    for (int64_t d = 0; d < dim && d < in->shape.rank; d++)
        if (in->shape.dims[d] != 1) return false;
    bool used[4096] = {false};
    size_t off = 0, total = 0;
    if (cxla_shape_byte_size(&in->shape, &total)) return false;
    for (int64_t k = 0; k < root->operand_count; k++) {
        const cxla_instr *op = root->operands[k];
        if (fused && op->opcode == CXLA_OP_RESHAPE) op = op->operands[0];
        int64_t at = k;
        if (fused) {
            if (op->opcode != CXLA_OP_PARAMETER || op->parameter_number < 0 ||
                op->parameter_number >= in->operand_count || used[op->parameter_number])
                return false;
            at = op->parameter_number;
            used[at] = true;
        }
        const cxla_shape *os = &in->operands[at]->shape;
        size_t size = 0;
        if (os->type != in->shape.type || !cxla_shape_is_static(os) ||
            !cxla_layout_is_default(os) || cxla_shape_byte_size(os, &size) ||
            !cxla_layout_is_default(&root->operands[k]->shape))
            return false;
        offs[at] = off;
        off += size;
    }
    return off == total;
}

/* A concatenate of pieces (cpu_concat_pieces) whose operands all die there, each in a buffer
 * of its own that no other value shares: each operand's buffer becomes its piece of the
 * result's buffer, so its producer writes it in place and the concatenate has no step.
 * Returns whether it did (the result's values are fresh then). */
static cxla_status concat_in_place(bld *b, frame *f, int64_t i, bool *out_done) {
    const cxla_instr *in = f->order[i];
    *out_done = false;
    if (in->opcode != CXLA_OP_CONCATENATE && in->opcode != CXLA_OP_FUSION) return NULL;
    size_t small[64];
    size_t *offs =
        in->operand_count <= 64 ? small : malloc((size_t)in->operand_count * sizeof(size_t));
    if (!offs) return OOM();
    bool ok = cpu_concat_pieces(in, offs);
    value *v = b->p->values;
    for (int64_t k = 0; k < in->operand_count && ok; k++) {
        int64_t x = f->leaves[f->pos_of[in->operands[k]->id]][0], c = find(v, x);
        ok = v[c].kind == V_ARENA && v[c].members == 1 && v[c].sub_of < 0 && v[x].from_step &&
             v[c].result < 0 && dies_at(b, f, x, i);
        for (int64_t j = 0; j < k && ok; j++)
            ok = find(v, f->leaves[f->pos_of[in->operands[j]->id]][0]) != c;
    }
    if (ok) {
        cxla_status s = fresh_leaves(b, f, i);
        if (s) {
            if (offs != small) free(offs);
            return s;
        }
        v = b->p->values;
        int64_t o = f->leaves[i][0];
        for (int64_t k = 0; k < in->operand_count; k++) {
            int64_t c = find(v, f->leaves[f->pos_of[in->operands[k]->id]][0]);
            v[c].sub_of = o;
            v[c].sub_off = offs[k];
            if (!note(b, c, false)) ok = false;
        }
        if (!note(b, o, true)) ok = false;
        b->pos++;
        b->p->stats.in_place += in->operand_count;
        set_what(b, in, W_CONCAT_IN_PLACE);
        *out_done = true;
        if (!ok) {
            if (offs != small) free(offs);
            return OOM();
        }
    }
    if (offs != small) free(offs);
    return NULL;
}

static cxla_status build_while(bld *b, frame *f, seq *q, int64_t i);
static cxla_status build_conditional(bld *b, frame *f, seq *q, int64_t i);
static cxla_status build_call(bld *b, frame *f, seq *q, int64_t i);

static cxla_status build_instr(bld *b, frame *f, seq *q, int64_t i) {
    const cxla_instr *in = f->order[i];
    int64_t n = f->nleaves[i];
    switch (in->opcode) {
    case CXLA_OP_PARAMETER: return NULL; /* set by the caller */
    case CXLA_OP_CONSTANT: {
        if (!in->literal) break; /* elided ({...}): the handler's error, when it runs */
        const cxla_literal *lit = in->literal;
        bool relay = in->shape.type == CXLA_TUPLE || !cxla_layout_is_default(lit->shape);
        if (relay) {
            cxla_literal *r = NULL;
            CXLA_RETURN_IF_ERROR(interp_default_layout(lit, &r));
            cpu_plan *p = b->p;
            if (p->constant_count == p->constant_cap) {
                int64_t cap = p->constant_cap ? 2 * p->constant_cap : 16;
                cxla_literal **nc = realloc(p->constants, (size_t)cap * sizeof(*nc));
                if (!nc) {
                    cxla_literal_free(r);
                    return OOM();
                }
                p->constants = nc;
                p->constant_cap = cap;
            }
            p->constants[p->constant_count++] = r;
            lit = r;
        }
        /* The leaves of the literal, depth-first. */
        const cxla_literal *stack_small[16];
        const cxla_literal **leaves = n <= 16 ? stack_small : malloc((size_t)n * sizeof(*leaves));
        if (!leaves) return OOM();
        int64_t c = 0;
        const cxla_literal *todo[64];
        int64_t top = 0;
        todo[top++] = lit;
        while (top > 0 && c < n) {
            const cxla_literal *x = todo[--top];
            if (x->shape->type == CXLA_TUPLE) {
                for (int64_t k = x->tuple_count - 1; k >= 0 && top < 64; k--)
                    todo[top++] = x->elements[k];
            } else {
                leaves[c++] = x;
            }
        }
        const cxla_shape *shapes_small[16];
        const cxla_shape **shapes = n <= 16 ? shapes_small : malloc((size_t)n * sizeof(*shapes));
        cxla_status s = shapes && c == n ? NULL : OOM();
        int64_t sc = 0;
        if (shapes) leaf_shapes(&in->shape, shapes, &sc);
        for (int64_t e = 0; e < n && !s; e++) {
            int64_t v = new_value(b, shapes[e], V_CONST, -1);
            if (v < 0)
                s = OOM();
            else
                b->p->values[v].data = leaves[e]->data;
            f->leaves[i][e] = v;
        }
        if (leaves != stack_small) free(leaves);
        if (shapes != shapes_small) free(shapes);
        return s;
    }
    case CXLA_OP_TUPLE: {
        int64_t c = 0;
        for (int64_t k = 0; k < in->operand_count; k++) {
            int64_t j = f->pos_of[in->operands[k]->id];
            for (int64_t e = 0; e < f->nleaves[j] && c < n; e++)
                f->leaves[i][c++] = f->leaves[j][e];
        }
        set_what(b, in, W_ALIAS);
        return NULL;
    }
    case CXLA_OP_GET_TUPLE_ELEMENT:
    case CXLA_OP_ALL_REDUCE_DONE:
    case CXLA_OP_ASYNC_UPDATE:
    case CXLA_OP_ALL_GATHER_DONE:
    case CXLA_OP_COLLECTIVE_PERMUTE_DONE:
    case CXLA_OP_ASYNC_DONE: {
        int64_t index = 0, j = f->pos_of[in->operands[0]->id];
        if (!alias_of(in, &index)) break;
        int64_t start = index < 0 ? 0 : element_offset(&in->operands[0]->shape, index);
        if ((index < 0 && n != f->nleaves[j]) || start + n > f->nleaves[j])
            return exec_error(in, CXLA_STATUS_INTERNAL, "bad tuple index %" PRId64, index);
        for (int64_t e = 0; e < n; e++) f->leaves[i][e] = f->leaves[j][start + e];
        set_what(b, in, W_ALIAS);
        return NULL;
    }
    case CXLA_OP_WHILE: set_what(b, in, W_STEP); return build_while(b, f, q, i);
    case CXLA_OP_CONDITIONAL: set_what(b, in, W_STEP); return build_conditional(b, f, q, i);
    case CXLA_OP_CALL:
        if (cxla_instr_called(in, CXLA_ATTR_TO_APPLY) || cxla_instr_called(in, CXLA_ATTR_CALLS)) {
            set_what(b, in, W_STEP);
            return build_call(b, f, q, i);
        }
        break;
    default: break;
    }
    /* A concatenate whose operands were computed in place: no step. */
    bool done = false;
    CXLA_RETURN_IF_ERROR(concat_in_place(b, f, i, &done));
    if (done) return NULL;
    /* A step computing this instruction's own values. */
    CXLA_RETURN_IF_ERROR(fresh_leaves(b, f, i));
    int64_t *ins = NULL, nin = 0;
    CXLA_RETURN_IF_ERROR(operand_leaves(f, in, &ins, &nin));
    step_kind kind = S_HANDLER;
    bool has_id = in->id >= 0 && in->id < b->id_count;
    size_t elem = 0;
    cpu_svc_fn svc = NULL;
    bool fixed = static_instr(in);
    /* A kernel of a dynamic instruction was generated at its bounds (cpu_bounds_kind). */
    int bk = B_STATIC;
    if (dus_in_place(b, f, in, i, &elem))
        kind = S_DUS;
    else if (has_id && b->kernels[in->id] && fixed)
        kind = S_KERNEL;
    else if (has_id && b->kernels[in->id] &&
             (bk = cpu_bounds_kind(in, cpu_emit_fast_math())) != B_STATIC)
        kind = S_KERNEL;
    else if (has_id && b->kernels[in->id] && !fixed && cpu_dyn_sized_ok(in)) {
        kind = S_KERNEL;
        bk = B_SIZED;
    } else if (cpu_size_step_ok(in))
        kind = S_SIZE;
    else if (!fixed && (cpu_dyn_move_wide_ok(in) || cpu_dyn_reduce_ok(in) || cpu_dynwin_ok(in)))
        kind = S_MOVE;
    else if (has_id && b->calls && b->calls[in->id].fn && fixed)
        kind = S_CALL;
    else if (has_id && fixed && (svc = cpu_svc_lookup(in)))
        kind = S_SVC;
    step *sp = add_step(b, q, kind, in, f->comp, nin, n);
    if (!sp) {
        free(ins);
        return OOM();
    }
    memcpy(sp->in, ins, (size_t)nin * sizeof(int64_t));
    free(ins);
    for (int64_t e = 0; e < n; e++) sp->out[e] = f->leaves[i][e];
    if (kind == S_KERNEL) {
        sp->fn = b->kernels[in->id];
        sp->info = b->infos[in->id];
        /* The kernel's work memory (cpu_kernel_info.scratch): a value of its own after the
         * results, written by this step and read by none, so it lives only here. */
        if (sp->info.scratch) {
            int64_t *outs = realloc(sp->out, (size_t)(n + 1) * sizeof(int64_t));
            if (!outs) return OOM();
            sp->out = outs;
            int64_t v = n > 0 ? new_value(b, b->p->values[outs[0]].shape, V_ARENA, -1) : -1;
            if (v < 0) return OOM();
            b->p->values[v].kind = V_ARENA;
            b->p->values[v].size = sp->info.scratch;
            sp->out[n] = v;
            sp->out_count = n + 1;
            if (n + 1 > b->p->max_operands) b->p->max_operands = n + 1;
        }
        if (sp->info.in_place > 0 && bk == B_STATIC && kernel_in_place(b, f, sp, i) > 0)
            set_what(b, in, W_KERNEL_IN_PLACE);
        sp->bounds = (bounds_kind)bk;
        sp->mask = -1;
        if (bk != B_STATIC) {
            b->p->stats.bounds_steps++;
            if (in->operand_count < 1 || !cpu_whole_elements(&in->operands[0]->shape, &sp->elem))
                sp->elem = 0;
        }
        if (bk == B_SIZED && in->operand_count + 1 > b->p->max_operands)
            b->p->max_operands = in->operand_count + 1; /* the sizes: one more input */
        if (bk == B_REDUCE || bk == B_DOT || bk == B_WINDOW) {
            /* The scratch copies of the operands whose padding is filled (the reduce's
             * input; both operands of a dot; a reduce-window's inputs): values of their own,
             * written by this step and read by none. */
            int64_t at = sp->out_count, count = bk == B_DOT      ? 2
                                                : bk == B_WINDOW ? in->operand_count / 2
                                                                 : 1;
            int64_t *outs = realloc(sp->out, (size_t)(at + count) * sizeof(int64_t));
            if (!outs) return OOM();
            sp->out = outs;
            for (int64_t k = 0; k < count; k++) {
                int64_t v = new_value(b, &in->operands[k]->shape, V_ARENA, -1);
                if (v < 0) return OOM();
                sp->out[at + k] = v;
            }
            sp->out_count = at + count;
            sp->mask = at;
            if (at + count > b->p->max_operands) b->p->max_operands = at + count;
        }
        if (bk == B_INDEXED || bk == B_SORT) {
            /* gather, scatter: the indices rewritten by the sizes in a scratch copy (a value
             * of its own, as above); sort: the sizes as one more input (cpu_dynamic_lib.c). */
            int64_t at = sp->out_count, ix = cpu_dyn_lib_indices(in);
            if (bk == B_INDEXED) {
                int64_t *outs = realloc(sp->out, (size_t)(at + 1) * sizeof(int64_t));
                if (!outs) return OOM();
                sp->out = outs;
                int64_t v = new_value(b, &in->operands[ix]->shape, V_ARENA, -1);
                if (v < 0) return OOM();
                sp->out[at] = v;
                sp->out_count = at + 1;
                sp->mask = at;
            }
            if (sp->out_count > b->p->max_operands) b->p->max_operands = sp->out_count;
            if (sp->in_count + 1 > b->p->max_operands) b->p->max_operands = sp->in_count + 1;
        }
    } else if (kind == S_CALL) {
        sp->call = &b->calls[in->id];
    } else if (kind == S_SVC) {
        sp->svc = svc;
        b->p->stats.service_steps++;
        set_what(b, in, W_SVC);
    } else if (kind == S_SIZE) {
        /* set-dimension-size over its operand's own buffer when that dies here: the bytes
         * stay, only the sizes change. */
        if (in->opcode == CXLA_OP_SET_DIMENSION_SIZE &&
            find(b->p->values, sp->in[0]) != find(b->p->values, sp->in[1]) &&
            b->p->values[sp->in[0]].size == b->p->values[sp->out[0]].size &&
            dies_at(b, f, sp->in[0], i)) {
            merge(b->p->values, sp->out[0], sp->in[0]);
            b->p->stats.in_place++;
            set_what(b, in, W_IN_PLACE);
        }
        set_what(b, in, W_SIZES);
    } else if (kind == S_MOVE) {
        b->p->stats.move_steps++;
        set_what(b, in,
                 in->opcode == CXLA_OP_REDUCE ? W_DYN_REDUCE
                 : in->opcode == CXLA_OP_REDUCE_WINDOW || in->opcode == CXLA_OP_DOT ||
                         in->opcode == CXLA_OP_SELECT_AND_SCATTER
                     ? W_DYN_STEP
                     : W_MOVE);
    } else if (kind == S_DUS) {
        sp->elem = elem;
        merge(b->p->values, sp->out[0], sp->in[0]);
        b->p->stats.in_place++;
        set_what(b, in, W_IN_PLACE);
    } else {
        b->p->has_handlers = true;
        b->p->stats.handler_steps++;
        set_what(b, in, W_HANDLER);
    }
    for (int64_t k = 0; k < sp->in_count; k++)
        if (!note(b, sp->in[k], false)) return OOM();
    for (int64_t e = 0; e < sp->out_count; e++)
        if (!note(b, sp->out[e], true)) return OOM();
    b->pos++;
    return NULL;
}

/* Builds the sequence of |comp| into |q| with its parameters' leaves given; returns the
 * root's leaves (*out_root, malloc'd) and, when |out_frame| is not NULL, the frame (whose
 * last reads the caller needs; frame_free it). */
static cxla_status build_seq(bld *b, const cxla_computation *comp, int64_t *const *param_leaves,
                             const bool *param_owned, seq *q, int64_t seq_id, int64_t **out_root,
                             int64_t *out_root_count, frame *out_frame) {
    if (++b->depth > MAX_DEPTH) {
        b->depth--;
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "computation %s: calls nest deeper than %d",
                          comp->name, MAX_DEPTH);
    }
    frame f = {.comp = comp, .id = seq_id, .n = comp->instr_count};
    cxla_status s = cxla_computation_post_order_in(comp, b->m->arena, &f.order);
    if (!s) {
        f.pos_of = malloc((size_t)(b->id_count ? b->id_count : 1) * sizeof(int64_t));
        f.leaves = calloc((size_t)(f.n ? f.n : 1), sizeof(int64_t *));
        f.last = calloc((size_t)(f.n ? f.n : 1), sizeof(int64_t *));
        f.nleaves = calloc((size_t)(f.n ? f.n : 1), sizeof(int64_t));
        if (!f.pos_of || !f.leaves || !f.last || !f.nleaves) s = OOM();
    }
    for (int64_t k = 0; k < b->id_count && !s; k++) f.pos_of[k] = -1;
    for (int64_t i = 0; i < f.n && !s; i++) {
        if (f.order[i]->id < 0 || f.order[i]->id >= b->id_count)
            s = cxla_error(CXLA_STATUS_INTERNAL, "%s: bad instruction id", f.order[i]->name);
        else
            f.pos_of[f.order[i]->id] = i;
    }
    if (!s) s = compute_last_reads(&f);
    for (int64_t i = 0; i < f.n && !s; i++) {
        f.leaves[i] = calloc((size_t)(f.nleaves[i] ? f.nleaves[i] : 1), sizeof(int64_t));
        if (!f.leaves[i]) s = OOM();
    }
    /* Parameters: the caller's values; those it hands over become this sequence's. */
    for (int64_t i = 0; i < f.n && !s; i++) {
        const cxla_instr *in = f.order[i];
        if (in->opcode != CXLA_OP_PARAMETER) continue;
        int64_t pn = in->parameter_number;
        if (pn < 0 || pn >= comp->param_count) {
            s = exec_error(in, CXLA_STATUS_INTERNAL, "bad parameter number");
            break;
        }
        for (int64_t e = 0; e < f.nleaves[i]; e++) {
            int64_t v = param_leaves[pn][e];
            f.leaves[i][e] = v;
            if ((param_owned && param_owned[pn]) || (seq_id == 0 && b->p->values[v].writable)) {
                value *x = &b->p->values[v];
                x->owner = seq_id;
                x->def_seq = seq_id;
                x->def_pos = i;
                x->def_leaf = e;
            }
        }
    }
    for (int64_t i = 0; i < f.n && !s; i++) s = build_instr(b, &f, q, i);
    if (!s) {
        int64_t r = f.pos_of[comp->root->id];
        *out_root_count = f.nleaves[r];
        *out_root = malloc((size_t)(f.nleaves[r] ? f.nleaves[r] : 1) * sizeof(int64_t));
        if (!*out_root)
            s = OOM();
        else
            memcpy(*out_root, f.leaves[r], (size_t)f.nleaves[r] * sizeof(int64_t));
    }
    b->depth--;
    if (!s && out_frame) {
        *out_frame = f;
        return NULL;
    }
    frame_free(&f);
    return s;
}

/* Results of a called sequence (|root|, |n| leaves) that |f| may read as its own: the
 * callee's values get the caller as owner; those it passes through from elsewhere (its
 * parameters, constants) are copied, so that no value is reachable two ways. */
static cxla_status adopt_results(bld *b, frame *f, seq *q, int64_t i, int64_t callee_id,
                                 const int64_t *root, int64_t n) {
    CXLA_RETURN_IF_ERROR(fresh_leaves(b, f, i));
    int64_t *src = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *dst = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!src || !dst) {
        free(src);
        free(dst);
        return OOM();
    }
    int64_t c = 0;
    for (int64_t e = 0; e < n; e++) {
        int64_t v = f->leaves[i][e];
        const value *r = &b->p->values[root[e]];
        bool unique = true;
        for (int64_t k = 0; k < e; k++)
            if (find(b->p->values, root[k]) == find(b->p->values, root[e])) unique = false;
        if (unique && r->owner == callee_id && r->from_step &&
            b->p->values[find(b->p->values, root[e])].kind == V_ARENA) {
            merge(b->p->values, v, root[e]);
        } else if (b->p->values[v].kind != V_TOKEN) {
            src[c] = root[e];
            dst[c++] = v;
        }
    }
    cxla_status s = add_copies(b, q, f->order[i], f->comp, src, dst, c);
    free(src);
    free(dst);
    return s;
}

static cxla_status build_call(bld *b, frame *f, seq *q, int64_t i) {
    const cxla_instr *in = f->order[i];
    cxla_computation *callee = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    if (!callee) callee = cxla_instr_called(in, CXLA_ATTR_CALLS);
    if (callee->param_count > in->operand_count)
        return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT, "%s takes %" PRId64 " arguments",
                          callee->name, callee->param_count);
    int64_t **params =
        calloc((size_t)(callee->param_count ? callee->param_count : 1), sizeof(int64_t *));
    if (!params) return OOM();
    for (int64_t k = 0; k < callee->param_count; k++)
        params[k] = f->leaves[f->pos_of[in->operands[k]->id]];
    step *sp = add_step(b, q, S_SEQ, in, f->comp, 0, 0);
    seq *sub = sp ? calloc(1, sizeof(seq)) : NULL;
    if (!sub) {
        free(params);
        return OOM();
    }
    sp->sub = sub;
    sp->sub_count = 1;
    b->pos++;
    int64_t id = b->next_seq++, *root = NULL, rn = 0;
    cxla_status s = build_seq(b, callee, params, NULL, sub, id, &root, &rn, NULL);
    free(params);
    b->pos++;
    if (!s) s = adopt_results(b, f, q, i, id, root, rn);
    free(root);
    return s;
}

static cxla_status build_conditional(bld *b, frame *f, seq *q, int64_t i) {
    const cxla_instr *in = f->order[i];
    int64_t nb = 0;
    cxla_computation *two[2];
    cxla_computation *const *branches = NULL;
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_BRANCH_COMPUTATIONS);
    if (a) {
        nb = a->v.comps.count;
        branches = a->v.comps.items;
    } else {
        two[0] = cxla_instr_called(in, CXLA_ATTR_TRUE_COMPUTATION);
        two[1] = cxla_instr_called(in, CXLA_ATTR_FALSE_COMPUTATION);
        if (!two[0] || !two[1])
            return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT, "missing branch");
        nb = 2;
        branches = two;
    }
    if (nb < 1 || in->operand_count < nb + 1)
        return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT, "needs a branch and its operand");
    /* The result buffers, which every branch writes. */
    CXLA_RETURN_IF_ERROR(fresh_leaves(b, f, i));
    int64_t n = f->nleaves[i];
    int64_t index = f->leaves[f->pos_of[in->operands[0]->id]][0];
    step *sp = add_step(b, q, S_COND, in, f->comp, 1, n);
    if (!sp) return OOM();
    sp->in[0] = index;
    memcpy(sp->out, f->leaves[i], (size_t)n * sizeof(int64_t));
    sp->sub = calloc((size_t)nb, sizeof(seq));
    if (!sp->sub) return OOM();
    sp->sub_count = nb;
    if (!note(b, index, false)) return OOM();
    b->pos++;
    int64_t *src = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *dst = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    cxla_status s = src && dst ? NULL : OOM();
    for (int64_t k = 0; k < nb && !s; k++) {
        int64_t *params[1] = {f->leaves[f->pos_of[in->operands[k + 1]->id]]};
        int64_t id = b->next_seq++, *root = NULL, rn = 0;
        /* sp may move when the branch adds steps to other sequences: never to q, though. */
        seq *bq = &q->steps[q->count - 1].sub[k];
        if (branches[k]->param_count != 1) {
            s = exec_error(in, CXLA_STATUS_INVALID_ARGUMENT, "branch %s takes one parameter",
                           branches[k]->name);
            break;
        }
        s = build_seq(b, branches[k], params, NULL, bq, id, &root, &rn, NULL);
        if (!s && rn != n) s = exec_error(in, CXLA_STATUS_INTERNAL, "branch result leaves");
        int64_t c = 0;
        for (int64_t e = 0; e < n && !s; e++) {
            int64_t out = f->leaves[i][e];
            const value *r = &b->p->values[root[e]];
            bool unique = true;
            for (int64_t j = 0; j < e; j++)
                if (find(b->p->values, root[j]) == find(b->p->values, root[e])) unique = false;
            int64_t rc = find(b->p->values, root[e]);
            if (unique && r->owner == id && r->from_step && b->p->values[rc].members == 1 &&
                b->p->values[rc].kind == V_ARENA) {
                merge(b->p->values, root[e], out); /* the branch writes the result itself */
            } else if (b->p->values[out].kind != V_TOKEN) {
                src[c] = root[e];
                dst[c++] = out;
            }
        }
        if (!s) s = add_copies(b, bq, in, branches[k], src, dst, c);
        free(root);
    }
    free(src);
    free(dst);
    b->pos++;
    return s;
}

static cxla_status build_while(bld *b, frame *f, seq *q, int64_t i) {
    const cxla_instr *in = f->order[i];
    cxla_computation *cond = cxla_instr_called(in, CXLA_ATTR_CONDITION);
    cxla_computation *body = cxla_instr_called(in, CXLA_ATTR_BODY);
    if (!cond || !body || in->operand_count != 1 || cond->param_count != 1 ||
        body->param_count != 1)
        return exec_error(in, CXLA_STATUS_INVALID_ARGUMENT, "needs condition and body");
    int64_t n = f->nleaves[i];
    const int64_t *init = f->leaves[f->pos_of[in->operands[0]->id]];
    int64_t body_id = b->next_seq++, cond_id = b->next_seq++;
    /* The state: the initial values where they die here, else new buffers and a copy. */
    int64_t *w = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *src = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *dst = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *tmp = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *wm = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    cxla_status s = w && src && dst && tmp && wm ? NULL : OOM();
    const cxla_shape *small[16];
    const cxla_shape **shapes = n <= 16 ? small : malloc((size_t)n * sizeof(*shapes));
    if (!shapes) s = OOM();
    int64_t c = 0, sc = 0;
    if (!s) leaf_shapes(&in->shape, shapes, &sc);
    for (int64_t e = 0; e < n && !s; e++) {
        w[e] = new_value(b, shapes[e], V_ARENA, body_id);
        if (w[e] < 0) {
            s = OOM();
            break;
        }
        if (b->p->values[w[e]].kind == V_TOKEN) continue;
        bool unique = true;
        for (int64_t k = 0; k < e; k++)
            if (find(b->p->values, init[k]) == find(b->p->values, init[e])) unique = false;
        if (unique && dies_at(b, f, init[e], i)) {
            merge(b->p->values, w[e], init[e]);
            b->p->stats.in_place++;
        } else {
            src[c] = init[e];
            dst[c++] = w[e];
        }
    }
    if (shapes != small) free(shapes);
    if (!s) s = add_copies(b, q, in, f->comp, src, dst, c);
    step *sp = s ? NULL : add_step(b, q, S_WHILE, in, f->comp, 0, 0);
    if (!s && !sp) s = OOM();
    if (!s) {
        sp->sub = calloc(2, sizeof(seq));
        if (!sp->sub)
            s = OOM();
        else
            sp->sub_count = 2;
    }
    int64_t a = b->pos++;
    int64_t *root = NULL, rn = 0, *croot = NULL, cn = 0;
    frame bf = {0};
    bool have_frame = false;
    if (!s) {
        int64_t *params[1] = {w};
        s = build_seq(b, cond, params, NULL, &q->steps[q->count - 1].sub[0], cond_id, &croot, &cn,
                      NULL);
        if (!s && (cn != 1 || b->p->values[croot[0]].shape->type != CXLA_PRED))
            s = exec_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                           "the condition must give a pred[] scalar");
        if (!s) {
            q->steps[q->count - 1].pred = croot[0];
            if (!note(b, croot[0], false)) s = OOM();
            b->pos++;
        }
    }
    /* How many values share each state buffer before the body: the body may write a
     * result into it only when no in-place update there made another value of it. */
    for (int64_t e = 0; e < n && !s; e++) wm[e] = b->p->values[find(b->p->values, w[e])].members;
    if (!s) {
        int64_t *params[1] = {w};
        bool owned[1] = {true};
        s = build_seq(b, body, params, owned, &q->steps[q->count - 1].sub[1], body_id, &root, &rn,
                      &bf);
        have_frame = !s;
        if (!s && rn != n) s = exec_error(in, CXLA_STATUS_INTERNAL, "body result leaves");
    }
    /* The next state: results the body computed after its parameter's leaf was last read
     * are written in the state's buffer itself; the others are copied there, through
     * temporaries when they are other leaves of the state (a swap). */
    int64_t t = 0;
    c = 0;
    int64_t param_pos = -1;
    for (int64_t k = 0; have_frame && k < bf.n; k++)
        if (bf.order[k]->opcode == CXLA_OP_PARAMETER) param_pos = k;
    for (int64_t e = 0; e < n && !s; e++) {
        int64_t rc = find(b->p->values, root[e]), wc = find(b->p->values, w[e]);
        if (rc == wc || b->p->values[wc].kind == V_TOKEN) continue;
        const value *r = &b->p->values[root[e]];
        bool unique = true;
        for (int64_t k = 0; k < n; k++)
            if (k != e && find(b->p->values, root[k]) == rc) unique = false;
        bool is_state = false;
        for (int64_t k = 0; k < n; k++)
            if (find(b->p->values, w[k]) == rc) is_state = true;
        int64_t param_last = param_pos >= 0 ? bf.last[param_pos][e] : NEVER_READ;
        if (unique && r->owner == body_id && r->from_step && r->def_seq == body_id &&
            b->p->values[rc].members == 1 && b->p->values[rc].kind == V_ARENA &&
            b->p->values[wc].members == wm[e] && param_last < r->def_pos) {
            merge(b->p->values, root[e], w[e]);
            b->p->stats.in_place++;
        } else if (is_state) {
            int64_t tv = new_value(b, b->p->values[w[e]].shape, V_ARENA, body_id);
            if (tv < 0) {
                s = OOM();
                break;
            }
            tmp[t] = tv;
            src[t] = root[e];
            t++;
        }
    }
    seq *body_q = s ? NULL : &q->steps[q->count - 1].sub[1];
    if (!s && t > 0) s = add_copies(b, body_q, in, body, src, tmp, t);
    /* src was the temporaries' sources; now the final copies. */
    int64_t ti = 0;
    for (int64_t e = 0; e < n && !s; e++) {
        int64_t rc = find(b->p->values, root[e]), wc = find(b->p->values, w[e]);
        if (rc == wc || b->p->values[wc].kind == V_TOKEN) continue;
        bool is_state = false;
        for (int64_t k = 0; k < n; k++)
            if (find(b->p->values, w[k]) == rc) is_state = true;
        src[c] = is_state ? tmp[ti++] : root[e];
        dst[c++] = w[e];
    }
    if (!s) s = add_copies(b, body_q, in, body, src, dst, c);
    if (have_frame) frame_free(&bf);
    free(root);
    free(croot);
    /* The loop's end: the state is read again by the next iteration. */
    for (int64_t e = 0; e < n && !s; e++)
        if (!note(b, w[e], false)) s = OOM();
    int64_t end = b->pos++;
    if (!s) {
        if (b->ln == b->lcap) {
            int64_t cap = b->lcap ? 2 * b->lcap : 16;
            range *nl = realloc(b->loops, (size_t)cap * sizeof(*nl));
            if (!nl)
                s = OOM();
            else {
                b->loops = nl;
                b->lcap = cap;
            }
        }
        if (!s) b->loops[b->ln++] = (range){a, end};
    }
    /* The loop's results: the state, now the caller's. */
    for (int64_t e = 0; e < n && !s; e++) {
        int64_t v = new_value(b, b->p->values[w[e]].shape, V_ARENA, f->id);
        if (v < 0) {
            s = OOM();
            break;
        }
        value *x = &b->p->values[v];
        x->def_seq = f->id;
        x->def_pos = i;
        x->def_leaf = e;
        x->from_step = true;
        merge(b->p->values, v, w[e]);
        f->leaves[i][e] = v;
    }
    free(w);
    free(src);
    free(dst);
    free(tmp);
    free(wm);
    return s;
}

/* ---- finishing the plan --------------------------------------------------------------------- */

static void resolve_seq(value *v, seq *q) {
    for (int64_t i = 0; i < q->count; i++) {
        step *sp = &q->steps[i];
        for (int64_t k = 0; k < sp->in_count; k++) sp->in[k] = find(v, sp->in[k]);
        for (int64_t k = 0; k < sp->out_count; k++) sp->out[k] = find(v, sp->out[k]);
        if (sp->kind == S_WHILE) sp->pred = find(v, sp->pred);
        for (int64_t k = 0; k < sp->sub_count; k++) resolve_seq(v, &sp->sub[k]);
    }
}

/* The lifetime of every class over the global order (-1 for those never touched): from
 * its first event to its last, a read inside a loop that the class was written before
 * lasting until the loop ends. |first| and |last| hold value_count entries. */
static void spans(const bld *b, int64_t *first, int64_t *last) {
    cpu_plan *p = b->p;
    int64_t n = p->value_count;
    for (int64_t c = 0; c < n; c++) first[c] = last[c] = -1;
    for (int64_t e = 0; e < b->en; e++) {
        int64_t c = find(p->values, b->ev[e].v);
        if (first[c] < 0 || b->ev[e].pos < first[c]) first[c] = b->ev[e].pos;
    }
    for (int64_t e = 0; e < b->en; e++) {
        int64_t c = find(p->values, b->ev[e].v), u = b->ev[e].pos;
        /* A read inside a loop that the buffer was written before: until the loop ends. */
        for (int64_t l = 0; l < b->ln; l++) {
            const range *r = &b->loops[l];
            if (r->a <= u && u <= r->b && !(r->a <= first[c] && first[c] <= r->b) && r->b > u)
                u = r->b;
        }
        if (u > last[c]) last[c] = u;
    }
    /* A piece lives inside its whole: the whole's buffer spans its pieces' lives. */
    for (int64_t c = 0; c < n; c++) {
        if (p->values[c].parent != c || p->values[c].sub_of < 0 || first[c] < 0) continue;
        int64_t t = c;
        for (int depth = 0; p->values[t].sub_of >= 0 && depth < MAX_DEPTH; depth++)
            t = find(p->values, p->values[t].sub_of);
        if (first[t] < 0 || first[c] < first[t]) first[t] = first[c];
        if (last[c] > last[t]) last[t] = last[c];
    }
}

/* A plan for donated arguments: each aliased result leaf that is not already the donated
 * argument's buffer (an in-place update made it so) takes that buffer when the argument
 * is dead before the result's buffer is first written, so the result is computed straight
 * into the caller's donated memory. */
static cxla_status donate(bld *b, int64_t *const *params) {
    cpu_plan *p = b->p;
    int64_t n = p->value_count;
    int64_t *first = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *last = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!first || !last) {
        free(first);
        free(last);
        return OOM();
    }
    spans(b, first, last);
    for (int64_t a = 0; a < p->alias_count; a++) {
        const cpu_io_alias *al = &p->aliases[a];
        int64_t leaf = al->arg - p->arg_base[al->param];
        int64_t pc = find(p->values, params[al->param][leaf]);
        int64_t rc = find(p->values, p->root[al->output]);
        if (!p->values[pc].writable) continue; /* a dynamic shape */
        if (rc == pc) {
            p->stats.donated++; /* in-place updates made it the argument's buffer */
            continue;
        }
        bool unique = true;
        for (int64_t k = 0; k < p->root_count; k++)
            if (k != al->output && find(p->values, p->root[k]) == rc) unique = false;
        const value *r = &p->values[rc];
        if (!unique || r->kind != V_ARENA || r->size != p->values[pc].size || first[rc] < 0 ||
            last[pc] >= first[rc])
            continue;
        merge(p->values, rc, pc);
        p->stats.in_place++;
        p->stats.donated++;
    }
    free(first);
    free(last);
    return NULL;
}

/* Lifetimes of the arena classes over the global order, then their offsets. */
static cxla_status place(bld *b) {
    cpu_plan *p = b->p;
    int64_t n = p->value_count;
    int64_t *first = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *last = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *which = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    cpu_arena_buffer *bufs = calloc((size_t)(n ? n : 1), sizeof(*bufs));
    cxla_status s = first && last && which && bufs ? NULL : OOM();
    if (!s) spans(b, first, last);
    int64_t count = 0;
    for (int64_t c = 0; c < n && !s; c++) {
        const value *x = &p->values[c];
        if (x->parent != c || x->kind != V_ARENA || x->result >= 0 || x->sub_of >= 0 ||
            first[c] < 0)
            continue;
        which[count] = c;
        bufs[count++] = (cpu_arena_buffer){
            .size = x->size, .first = first[c], .last = last[c] > first[c] ? last[c] : first[c]};
    }
    int64_t steps = b->pos > 0 ? b->pos : 1;
    if (!s) s = cpu_arena_assign(bufs, count, steps, &p->arena_size);
    for (int64_t k = 0; k < count && !s; k++) p->values[which[k]].offset = bufs[k].offset;
    free(first);
    free(last);
    free(which);
    free(bufs);
    return s;
}

/* Where each class with a dynamic array shape keeps its current sizes in a run: a class
 * is dynamic when any of its values is (a while state declared dynamic may start from a
 * static value). */
static cxla_status dynamic_sizes(cpu_plan *p) {
    for (int64_t v = 0; v < p->value_count; v++) {
        const cxla_shape *sh = p->values[v].shape;
        if (!sh || !cxla_type_is_array(sh->type) || cxla_shape_is_static(sh)) continue;
        if (!p->dyn_off) {
            p->dyn_off = malloc((size_t)p->value_count * sizeof(int64_t));
            if (!p->dyn_off) return OOM();
            for (int64_t k = 0; k < p->value_count; k++) p->dyn_off[k] = -1;
        }
        int64_t c = find(p->values, v);
        if (p->dyn_off[c] >= 0) continue;
        p->dyn_off[c] = p->dyn_total;
        p->dyn_total += sh->rank > 0 ? sh->rank : 1;
    }
    return NULL;
}

/* Whether the plan can run |comp| and what it calls in sequence: static shapes, or
 * dynamic ones with bounds (unbounded '?' dimensions keep the interpreter's driver). */
static bool plannable(const cxla_computation *comp, int depth) {
    if (depth > MAX_DEPTH) return false;
    for (int64_t i = 0; i < comp->instr_count; i++) {
        const cxla_instr *in = comp->instrs[i];
        if (!bounded_shape(&in->shape)) return false;
        if (in->opcode != CXLA_OP_WHILE && in->opcode != CXLA_OP_CONDITIONAL &&
            in->opcode != CXLA_OP_CALL)
            continue;
        cxla_computation *called[64];
        int64_t k = cxla_instr_called_computations(in, called, 64);
        if (k > 64) return false;
        for (int64_t j = 0; j < k; j++)
            if (!plannable(called[j], depth + 1)) return false;
    }
    return true;
}

void cpu_plan_destroy(cpu_plan *p) {
    if (!p) return;
    seq_free(&p->entry);
    free(p->values);
    free(p->root);
    free(p->arg_base);
    free(p->arg_copy);
    free(p->aliases);
    free(p->dyn_off);
    for (int64_t c = 0; c < p->constant_count; c++) cxla_literal_free(p->constants[c]);
    free(p->constants);
    free(p->what);
    free(p->rng_keys);
    free(atomic_load(&p->spare));
    free(p);
}

uint64_t *cpu_plan_rng_keys(cpu_plan *plan) {
    return plan ? plan->rng_keys : NULL;
}

cxla_status cpu_plan_build(const cxla_module *m, cpu_kernel_fn const *kernels,
                           const cpu_kernel_info *infos, const cpu_call *calls, int64_t id_count,
                           cpu_pool *pool, bool donating, cpu_plan **out) {
    *out = NULL;
    const cxla_computation *entry = m->entry;
    if (!entry || !plannable(entry, 0)) return NULL; /* unbounded shapes: the driver */
    for (int64_t i = 0; i < entry->param_count; i++)
        if (!bounded_shape(&entry->params[i]->shape)) return NULL;
    cpu_io_alias *aliases = NULL;
    int64_t alias_count = 0;
    if (donating) {
        CXLA_RETURN_IF_ERROR(cpu_io_aliases(m, &aliases, &alias_count));
        if (alias_count == 0) return NULL; /* nothing to donate to */
    }
    cpu_plan *p = calloc(1, sizeof(*p));
    if (!p) {
        free(aliases);
        return OOM();
    }
    p->donating = donating;
    p->aliases = aliases;
    p->alias_count = alias_count;
    p->module = m;
    p->pool = pool;
    p->id_count = id_count;
    p->what = calloc((size_t)(id_count ? id_count : 1), 1);
    p->arg_base = calloc((size_t)(entry->param_count ? entry->param_count : 1), sizeof(int64_t));
    bld b = {.p = p,
             .m = m,
             .kernels = kernels,
             .infos = infos,
             .calls = calls,
             .id_count = id_count,
             .next_seq = 1};
    cxla_status s = p->what && p->arg_base ? NULL : OOM();
    if (!s) s = cpu_svc_rng_keys(m, id_count, &p->rng_keys);
    int64_t **params =
        calloc((size_t)(entry->param_count ? entry->param_count : 1), sizeof(int64_t *));
    if (!params) s = OOM();
    /* Entry parameters: read where the caller's arguments lie. */
    for (int64_t i = 0; i < entry->param_count && !s; i++) {
        const cxla_shape *ps = &entry->params[i]->shape;
        int64_t n = leaf_count(ps), c = 0;
        const cxla_shape **shapes = malloc((size_t)(n ? n : 1) * sizeof(*shapes));
        params[i] = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
        if (!shapes || !params[i]) {
            free(shapes);
            s = OOM();
            break;
        }
        leaf_shapes(ps, shapes, &c);
        p->arg_base[i] = p->arg_leaf_count;
        for (int64_t e = 0; e < n && !s; e++) {
            int64_t v = new_value(&b, shapes[e], V_ARG, -1);
            if (v < 0)
                s = OOM();
            else
                p->values[v].arg = p->arg_leaf_count + e;
            params[i][e] = v;
        }
        p->arg_leaf_count += n;
        free(shapes);
    }
    /* Donated arguments the module aliases: the entry's to overwrite. */
    for (int64_t a = 0; a < alias_count && !s; a++) {
        const cpu_io_alias *al = &aliases[a];
        value *x = &p->values[params[al->param][al->arg - p->arg_base[al->param]]];
        if (!static_shape(x->shape)) continue; /* its sizes travel apart: not worth it */
        x->writable = true;
        x->alias_of = al->output;
    }
    /* Dynamic array parameters: an arena buffer at their bounds for the whole run, which
     * each run binds the argument into (no new memory a run). */
    for (int64_t i = 0; i < entry->param_count && !s; i++) {
        const cxla_shape *ps = &entry->params[i]->shape;
        size_t elem = 0;
        if (!cxla_type_is_array(ps->type) || static_shape(ps) || !cpu_whole_elements(ps, &elem))
            continue;
        if (!p->arg_copy) {
            p->arg_copy = malloc((size_t)entry->param_count * sizeof(int64_t));
            if (!p->arg_copy) {
                s = OOM();
                break;
            }
            for (int64_t k = 0; k < entry->param_count; k++) p->arg_copy[k] = -1;
        }
        int64_t v = new_value(&b, ps, V_ARENA, -1);
        if (v < 0 || !note(&b, v, true)) s = OOM();
        p->arg_copy[i] = v;
    }
    int64_t *root = NULL, rn = 0;
    if (!s) s = build_seq(&b, entry, params, NULL, &p->entry, 0, &root, &rn, NULL);
    int64_t end = b.pos;
    b.pos = end > 0 ? end - 1 : 0; /* the last step: the copies live through it */
    for (int64_t i = 0; p->arg_copy && i < entry->param_count && !s; i++)
        if (p->arg_copy[i] >= 0 && !note(&b, p->arg_copy[i], false)) s = OOM();
    b.pos = end;
    if (!s) {
        p->root = root;
        p->root_count = rn;
        root = NULL;
        if (donating) s = donate(&b, params);
    }
    for (int64_t i = 0; params && i < entry->param_count; i++) free(params[i]);
    free(params);
    if (!s) {
        for (int64_t k = 0; k < rn; k++) {
            int64_t c = find(p->values, p->root[k]);
            p->root[k] = c;
            /* The first time the root names an arena buffer, it is the result itself. */
            if (p->values[c].kind == V_ARENA && p->values[c].result < 0) p->values[c].result = k;
        }
        resolve_seq(p->values, &p->entry);
        for (int64_t c = 0; c < p->value_count; c++)
            if (p->values[c].sub_of >= 0)
                p->values[c].sub_of = find(p->values, p->values[c].sub_of);
        s = place(&b);
    }
    if (!s) s = dynamic_sizes(p);
    /* Loops of kernels and copies as one step each (cpu_loop.h), once the buffers and
     * sizes are final. */
    if (!s) s = cpu_loop_fuse(p);
    free(root);
    free(b.ev);
    free(b.loops);
    if (s) {
        cpu_plan_destroy(p);
        return s;
    }
    p->stats.arena_size = p->arena_size;
    *out = p;
    return NULL;
}

void cpu_plan_get_stats(const cpu_plan *plan, cpu_plan_stats *out) {
    *out = plan->stats;
}

const char *cpu_plan_what(const cpu_plan *plan, const cxla_instr *instr) {
    if (!plan || instr->id < 0 || instr->id >= plan->id_count) return NULL;
    switch (plan->what[instr->id]) {
    case W_STEP: return "step";
    case W_HANDLER: return "interpreter handler";
    case W_SVC: return cpu_svc_what(instr);
    case W_IN_PLACE: return "in place";
    case W_ALIAS: return "alias";
    case W_KERNEL_IN_PLACE: return "kernel in place";
    case W_CONCAT_IN_PLACE: return "pieces in place";
    case W_SIZES: return "sizes";
    case W_MOVE: return "dynamic move";
    case W_DYN_REDUCE: return "dynamic reduce";
    case W_DYN_STEP: return "dynamic step";
    default: return NULL;
    }
}
