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
 * This file builds the plan's values, plain steps and sequences; cpu_steps_control.c the
 * steps that run other sequences or hold their operands (call, conditional, while,
 * async-start, copy-start), with what both share in cpu_steps_build.h; cpu_steps_place.c
 * finishes it (donation, offsets, dynamic sizes); cpu_steps_run.c runs it; cpu_steps.h
 * holds the data they read. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/memcount.h"
#include "cpu/cpu_loop.h"
#include "cpu/cpu_steps_build.h"
#include "cpu/emit.h"
#include "literal/literal_internal.h"

#define OOM() CPU_STEPS_OOM()

/* ---- values -------------------------------------------------------------------------- */

int64_t cpu_steps_new_value(bld *b, const cxla_shape *shape, vkind kind, int64_t owner) {
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

bool cpu_steps_note(bld *b, int64_t v, bool def) {
    if (b->en == b->ecap) {
        int64_t cap = b->ecap ? 2 * b->ecap : 1024;
        cpu_event *n = realloc(b->ev, (size_t)cap * sizeof(*n));
        if (!n) return false;
        b->ev = n;
        b->ecap = cap;
    }
    b->ev[b->en++] = (cpu_event){v, b->pos, def};
    return true;
}

int64_t cpu_steps_leaf_count(const cxla_shape *s) {
    if (s->type != CXLA_TUPLE) return 1;
    int64_t n = 0;
    for (int64_t i = 0; i < s->tuple_count; i++) n += cpu_steps_leaf_count(&s->elements[i]);
    return n;
}

/* The leaves of |s| depth-first, into |out| (cpu_steps_leaf_count(s) entries). */
void cpu_steps_leaf_shapes(const cxla_shape *s, const cxla_shape **out, int64_t *n) {
    if (s->type != CXLA_TUPLE) {
        out[(*n)++] = s;
        return;
    }
    for (int64_t i = 0; i < s->tuple_count; i++) cpu_steps_leaf_shapes(&s->elements[i], out, n);
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
bool cpu_steps_static_instr(const cxla_instr *in) {
    if (!static_shape(&in->shape)) return false;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (!static_shape(&in->operands[k]->shape)) return false;
    return true;
}

/* ---- steps ----------------------------------------------------------------------------- */

step *cpu_steps_add_step(bld *b, seq *q, step_kind kind, const cxla_instr *in,
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
    sp->alias = -1;
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
cxla_status cpu_steps_add_copies(bld *b, seq *q, const cxla_instr *in, const cxla_computation *comp,
                                 const int64_t *src, const int64_t *dst, int64_t n) {
    if (n == 0) return NULL;
    step *sp = cpu_steps_add_step(b, q, S_COPY, in, comp, n, n);
    if (!sp) return OOM();
    for (int64_t i = 0; i < n; i++) {
        sp->in[i] = src[i];
        sp->out[i] = dst[i];
        if (!cpu_steps_note(b, src[i], false) || !cpu_steps_note(b, dst[i], true)) return OOM();
        b->p->stats.copy_bytes += b->p->values[dst[i]].size;
    }
    b->p->stats.copy_steps++;
    b->pos++;
    return NULL;
}

/* ---- building one sequence ---------------------------------------------------------------- */

void cpu_steps_frame_free(frame *f) {
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
    for (int64_t i = 0; i < index && i < s->tuple_count; i++)
        off += cpu_steps_leaf_count(&s->elements[i]);
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
    case CXLA_OP_OPTIMIZATION_BARRIER:
    case CXLA_OP_ASYNC_UPDATE: *index = -1; return in->operand_count == 1;
    case CXLA_OP_COPY_DONE:
        *index = 0;
        return in->operand_count == 1 && in->operands[0]->shape.type == CXLA_TUPLE &&
               in->operands[0]->shape.tuple_count >= 1;
    case CXLA_OP_ALL_GATHER_DONE:
    case CXLA_OP_COLLECTIVE_PERMUTE_DONE:
    case CXLA_OP_ASYNC_DONE:
        *index = 1;
        return in->operand_count == 1 && in->operands[0]->shape.type == CXLA_TUPLE &&
               in->operands[0]->shape.tuple_count >= 2;
    default: return false;
    }
}

/* The instructions whose result holds their operands' leaves as they are, besides
 * reading them: async-start's {0} (the operands, flat, first leaves of the result) and
 * copy-start's destination and source (operand 0, twice). How many copies of the
 * operands' leaves lead the result (0: none). The plan aliases them (build_held); the
 * handler, where it runs one, copies them, so the reads counted here only last longer. */
int64_t cpu_steps_held_copies(const cxla_instr *in) {
    if (in->shape.type != CXLA_TUPLE) return 0;
    if (in->opcode == CXLA_OP_COPY_START)
        return in->operand_count == 1 && in->shape.tuple_count >= 2 ? 2 : 0;
    if (in->opcode == CXLA_OP_ASYNC_START) return in->shape.tuple_count >= 2 ? 1 : 0;
    return 0;
}

/* Last reads of every leaf, from the users back to the producers: a tuple or a
 * get-tuple-element reads nothing itself but hands its leaves' reads to its operand's;
 * async-start and copy-start read their operands and hand on the reads of the leaves
 * their result holds (held_copies). */
static cxla_status compute_last_reads(frame *f) {
    for (int64_t i = 0; i < f->n; i++) {
        f->nleaves[i] = cpu_steps_leaf_count(&f->order[i]->shape);
        f->last[i] = malloc((size_t)(f->nleaves[i] ? f->nleaves[i] : 1) * sizeof(int64_t));
        if (!f->last[i]) return OOM();
        for (int64_t e = 0; e < f->nleaves[i]; e++) f->last[i][e] = NEVER_READ;
    }
    int64_t r = f->pos_of[f->comp->root->id];
    for (int64_t e = 0; e < f->nleaves[r]; e++) f->last[r][e] = READ_AT_END;
    for (int64_t i = f->n - 1; i >= 0; i--) {
        const cxla_instr *u = f->order[i];
        int64_t off = 0, index = 0, held = cpu_steps_held_copies(u), total = 0;
        bool alias = alias_of(u, &index);
        for (int64_t k = 0; held && k < u->operand_count; k++)
            total += f->nleaves[f->pos_of[u->operands[k]->id]];
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
                for (int64_t h = 0; h < held; h++) {
                    int64_t hl = h * total + off + e;
                    if (hl < f->nleaves[i] && f->last[i][hl] > at) at = f->last[i][hl];
                }
                if (at > f->last[j][e]) f->last[j][e] = at;
            }
            off += f->nleaves[j];
        }
    }
    return NULL;
}

/* Whether value |v| of frame |f| is dead after position |i| and |f|'s to overwrite. */
bool cpu_steps_dies_at(const bld *b, const frame *f, int64_t v, int64_t i) {
    const value *x = &b->p->values[v];
    if (x->owner != f->id || x->def_seq != f->id || x->def_pos < 0) return false;
    const value *c = &b->p->values[cpu_value_find(b->p->values, v)];
    if (c->kind != V_ARENA && !(c->kind == V_ARG && c->writable)) return false;
    return f->last[x->def_pos][x->def_leaf] <= i;
}

void cpu_steps_set_what(bld *b, const cxla_instr *in, uint8_t what) {
    if (in->id >= 0 && in->id < b->p->id_count && !b->p->what[in->id]) b->p->what[in->id] = what;
}

/* Fresh values for the leaves of instruction |i| of |f|, produced by a step there. */
cxla_status cpu_steps_fresh_leaves(bld *b, frame *f, int64_t i) {
    const cxla_instr *in = f->order[i];
    int64_t n = f->nleaves[i];
    const cxla_shape *small[16];
    const cxla_shape **shapes = n <= 16 ? small : malloc((size_t)n * sizeof(*shapes));
    if (!shapes) return OOM();
    int64_t c = 0;
    cpu_steps_leaf_shapes(&in->shape, shapes, &c);
    cxla_status s = NULL;
    for (int64_t e = 0; e < n && !s; e++) {
        int64_t v = cpu_steps_new_value(b, shapes[e], V_ARENA, f->id);
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
cxla_status cpu_steps_operand_leaves(frame *f, const cxla_instr *in, int64_t **out,
                                     int64_t *out_n) {
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
    if (!cpu_steps_static_instr(in)) return false;
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
    if (cpu_value_find(b->p->values, v0) == cpu_value_find(b->p->values, v1)) return false;
    if (!cpu_steps_dies_at(b, f, v0, i)) return false;
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
        int64_t c = cpu_value_find(v, sp->in[k]);
        bool unique = true;
        for (int64_t j = 0; j < sp->in_count; j++)
            if (j != k && cpu_value_find(v, sp->in[j]) == c) unique = false;
        if (!unique || v[c].size != v[sp->out[k]].size || !cpu_steps_dies_at(b, f, sp->in[k], i))
            continue;
        cpu_value_merge(v, sp->out[k], sp->in[k]);
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
        int64_t x = f->leaves[f->pos_of[in->operands[k]->id]][0], c = cpu_value_find(v, x);
        ok = v[c].kind == V_ARENA && v[c].members == 1 && v[c].sub_of < 0 && v[x].from_step &&
             v[c].result < 0 && cpu_steps_dies_at(b, f, x, i);
        for (int64_t j = 0; j < k && ok; j++)
            ok = cpu_value_find(v, f->leaves[f->pos_of[in->operands[j]->id]][0]) != c;
    }
    if (ok) {
        cxla_status s = cpu_steps_fresh_leaves(b, f, i);
        if (s) {
            if (offs != small) free(offs);
            return s;
        }
        v = b->p->values;
        int64_t o = f->leaves[i][0];
        for (int64_t k = 0; k < in->operand_count; k++) {
            int64_t c = cpu_value_find(v, f->leaves[f->pos_of[in->operands[k]->id]][0]);
            v[c].sub_of = o;
            v[c].sub_off = offs[k];
            if (!cpu_steps_note(b, c, false)) ok = false;
        }
        if (!cpu_steps_note(b, o, true)) ok = false;
        b->pos++;
        b->p->stats.in_place += in->operand_count;
        cpu_steps_set_what(b, in, W_CONCAT_IN_PLACE);
        *out_done = true;
        if (!ok) {
            if (offs != small) free(offs);
            return OOM();
        }
    }
    if (offs != small) free(offs);
    return NULL;
}

/* Hands literal |lit| to the plan, which frees it with itself (also on failure here). */
cxla_status cpu_steps_keep_constant(bld *b, cxla_literal *lit) {
    cpu_plan *p = b->p;
    if (p->constant_count == p->constant_cap) {
        int64_t cap = p->constant_cap ? 2 * p->constant_cap : 16;
        cxla_literal **nc = realloc(p->constants, (size_t)cap * sizeof(*nc));
        if (!nc) {
            cxla_literal_free(lit);
            return OOM();
        }
        p->constants = nc;
        p->constant_cap = cap;
    }
    p->constants[p->constant_count++] = lit;
    return NULL;
}

/* Whether the interpreter's handler of |in|, the step left to it, only reports an error:
 * it fails on operands of zeros. Asked (for `cxla compile --explain` and the plan's
 * stats) only of instructions without side effects whose operands and result are static
 * and small (up to 64 KiB together): the elementwise operations on types they are not
 * defined for, an elided constant, a bad rng-bit-generator state or scan body, a bitcast
 * that changes the host size, a TopK with an odd comparator. The step still runs the
 * handler, which reports the error with the run's values. */
/* The trial below is given TRIAL_NS: a computation inside the instruction may loop for
 * ever on zeros (a reducer's while loop), and the plan must still be built. A trial that
 * did not finish in time says nothing. */
enum { TRIAL_NS = 50 * 1000 * 1000 };

static bool handler_fails(const bld *b, const cxla_instr *in) {
    const cxla_opcode_info *info = cxla_opcode_get_info(in->opcode);
    const cxla_attr *target = cxla_instr_attr(in, CXLA_ATTR_CUSTOM_CALL_TARGET);
    bool topk = in->opcode == CXLA_OP_CUSTOM_CALL && target &&
                target->kind == CXLA_ATTR_KIND_STRING && target->v.s &&
                strcmp(target->v.s, "TopK") == 0;
    if (!cpu_steps_static_instr(in) || (info->flags & CXLA_OPF_COLLECTIVE) ||
        ((info->flags & CXLA_OPF_SIDE_EFFECT) && !topk))
        return false;
    size_t total = 0, size = 0;
    if (cxla_type_is_array(in->shape.type) && cxla_shape_byte_size(&in->shape, &total))
        return false;
    for (int64_t k = 0; k < in->operand_count; k++) {
        const cxla_shape *os = &in->operands[k]->shape;
        if (os->type == CXLA_TUPLE ||
            (cxla_type_is_array(os->type) && cxla_shape_byte_size(os, &size)))
            return false;
        total += size;
    }
    interp_op_fn fn = interp_handler(in->opcode);
    if (!fn || total > ((size_t)64 << 10) || in->operand_count > 64) return false;
    cxla_literal *ops[64] = {NULL}, *out = NULL;
    cxla_status s = NULL;
    for (int64_t k = 0; k < in->operand_count && !s; k++)
        s = interp_zeros(&in->operands[k]->shape, &ops[k]);
    if (s) {
        for (int64_t k = 0; k < in->operand_count; k++) cxla_literal_free(ops[k]);
        cxla_status_free(s);
        return false;
    }
    interp_ctx ctx;
    exec_run_options options = {0};
    exec_cancel trial;
    exec_deadline deadline;
    exec_cancel_init_deadline(&trial, &deadline, TRIAL_NS);
    options.cancel = &trial;
    bool failed = false;
    s = interp_ctx_init(&ctx, b->m, &options);
    if (!s) {
        s = fn(&ctx, in, (const cxla_literal *const *)ops, &out);
        failed = s != NULL && cxla_status_code_of(s) != CXLA_STATUS_RESOURCE_EXHAUSTED &&
                 !exec_cancelled(&trial);
        interp_ctx_deinit(&ctx);
    }
    cxla_status_free(s);
    cxla_literal_free(out);
    for (int64_t k = 0; k < in->operand_count; k++) cxla_literal_free(ops[k]);
    return failed;
}

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
            CXLA_RETURN_IF_ERROR(cpu_steps_keep_constant(b, r));
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
        if (shapes) cpu_steps_leaf_shapes(&in->shape, shapes, &sc);
        for (int64_t e = 0; e < n && !s; e++) {
            int64_t v = cpu_steps_new_value(b, shapes[e], V_CONST, -1);
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
        cpu_steps_set_what(b, in, W_ALIAS);
        return NULL;
    }
    case CXLA_OP_GET_TUPLE_ELEMENT:
    case CXLA_OP_ALL_REDUCE_DONE:
    case CXLA_OP_OPTIMIZATION_BARRIER:
    case CXLA_OP_COPY_DONE:
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
        cpu_steps_set_what(b, in, W_ALIAS);
        return NULL;
    }
    case CXLA_OP_COPY_START:
    case CXLA_OP_ASYNC_START: {
        bool done = false;
        CXLA_RETURN_IF_ERROR(cpu_steps_build_held(b, f, q, i, &done));
        if (done) return NULL;
        break;
    }
    case CXLA_OP_WHILE: cpu_steps_set_what(b, in, W_STEP); return cpu_steps_build_while(b, f, q, i);
    case CXLA_OP_CONDITIONAL:
        cpu_steps_set_what(b, in, W_STEP);
        return cpu_steps_build_conditional(b, f, q, i);
    case CXLA_OP_CALL:
        if (cxla_instr_called(in, CXLA_ATTR_TO_APPLY) || cxla_instr_called(in, CXLA_ATTR_CALLS)) {
            cpu_steps_set_what(b, in, W_STEP);
            return cpu_steps_build_call(b, f, q, i);
        }
        break;
    default: break;
    }
    /* A concatenate whose operands were computed in place: no step. */
    bool done = false;
    CXLA_RETURN_IF_ERROR(concat_in_place(b, f, i, &done));
    if (done) return NULL;
    /* A step computing this instruction's own values. */
    CXLA_RETURN_IF_ERROR(cpu_steps_fresh_leaves(b, f, i));
    int64_t *ins = NULL, nin = 0;
    CXLA_RETURN_IF_ERROR(cpu_steps_operand_leaves(f, in, &ins, &nin));
    step_kind kind = S_HANDLER;
    bool has_id = in->id >= 0 && in->id < b->id_count;
    size_t elem = 0;
    cpu_svc_fn svc = NULL;
    bool fixed = cpu_steps_static_instr(in);
    /* A kernel of a dynamic instruction was generated at its bounds (cpu_bounds_kind). */
    int bk = B_STATIC;
    if (dus_in_place(b, f, in, i, &elem))
        kind = S_DUS;
    else if (has_id && fixed && b->kernels[in->id] && (svc = cpu_collective_combine_lookup(in)))
        kind = S_SVC; /* a collective calling its reducer's combine function, the kernel */
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
    step *sp = cpu_steps_add_step(b, q, kind, in, f->comp, nin, n);
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
            int64_t v =
                n > 0 ? cpu_steps_new_value(b, b->p->values[outs[0]].shape, V_ARENA, -1) : -1;
            if (v < 0) return OOM();
            b->p->values[v].kind = V_ARENA;
            b->p->values[v].size = sp->info.scratch;
            sp->out[n] = v;
            sp->out_count = n + 1;
            if (n + 1 > b->p->max_operands) b->p->max_operands = n + 1;
        }
        if (sp->info.in_place > 0 && bk == B_STATIC && kernel_in_place(b, f, sp, i) > 0)
            cpu_steps_set_what(b, in, W_KERNEL_IN_PLACE);
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
                int64_t v = cpu_steps_new_value(b, &in->operands[k]->shape, V_ARENA, -1);
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
                int64_t v = cpu_steps_new_value(b, &in->operands[ix]->shape, V_ARENA, -1);
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
        sp->fn = has_id ? b->kernels[in->id] : NULL; /* cpu_svc_run.kernel */
        b->p->stats.service_steps++;
        cpu_steps_set_what(b, in, W_SVC);
    } else if (kind == S_SIZE) {
        /* set-dimension-size over its operand's own buffer when that dies here: the bytes
         * stay, only the sizes change. */
        if (in->opcode == CXLA_OP_SET_DIMENSION_SIZE &&
            cpu_value_find(b->p->values, sp->in[0]) != cpu_value_find(b->p->values, sp->in[1]) &&
            b->p->values[sp->in[0]].size == b->p->values[sp->out[0]].size &&
            cpu_steps_dies_at(b, f, sp->in[0], i)) {
            cpu_value_merge(b->p->values, sp->out[0], sp->in[0]);
            b->p->stats.in_place++;
            cpu_steps_set_what(b, in, W_IN_PLACE);
        }
        cpu_steps_set_what(b, in, W_SIZES);
    } else if (kind == S_MOVE) {
        b->p->stats.move_steps++;
        cpu_steps_set_what(b, in,
                           in->opcode == CXLA_OP_REDUCE ? W_DYN_REDUCE
                           : in->opcode == CXLA_OP_REDUCE_WINDOW || in->opcode == CXLA_OP_DOT ||
                                   in->opcode == CXLA_OP_SELECT_AND_SCATTER
                               ? W_DYN_STEP
                               : W_MOVE);
    } else if (kind == S_DUS) {
        sp->elem = elem;
        cpu_value_merge(b->p->values, sp->out[0], sp->in[0]);
        b->p->stats.in_place++;
        cpu_steps_set_what(b, in, W_IN_PLACE);
    } else {
        b->p->has_handlers = true;
        b->p->stats.handler_steps++;
        bool fails = handler_fails(b, in);
        if (fails) b->p->stats.error_steps++;
        cpu_steps_set_what(b, in, fails ? W_ERROR : W_HANDLER);
    }
    for (int64_t k = 0; k < sp->in_count; k++)
        if (!cpu_steps_note(b, sp->in[k], false)) return OOM();
    for (int64_t e = 0; e < sp->out_count; e++)
        if (!cpu_steps_note(b, sp->out[e], true)) return OOM();
    b->pos++;
    return NULL;
}

/* Builds the sequence of |comp| into |q| with its parameters' leaves given; returns the
 * root's leaves (*out_root, malloc'd) and, when |out_frame| is not NULL, the frame (whose
 * last reads the caller needs; frame_free it). */
cxla_status cpu_steps_build_seq(bld *b, const cxla_computation *comp, int64_t *const *param_leaves,
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
    cpu_steps_frame_free(&f);
    return s;
}

/* Whether the plan can run |comp| and what it calls in sequence: static shapes, or
 * dynamic ones with bounds (unbounded '?' dimensions keep the interpreter's driver). */
static bool plannable(const cxla_computation *comp, int depth) {
    if (depth > MAX_DEPTH) return false;
    for (int64_t i = 0; i < comp->instr_count; i++) {
        const cxla_instr *in = comp->instrs[i];
        if (!bounded_shape(&in->shape)) return false;
        if (in->opcode != CXLA_OP_WHILE && in->opcode != CXLA_OP_CONDITIONAL &&
            in->opcode != CXLA_OP_CALL && in->opcode != CXLA_OP_ASYNC_START)
            continue;
        cxla_computation *called[64];
        int64_t k = cxla_instr_called_computations(in, called, 64);
        if (in->opcode == CXLA_OP_ASYNC_START) { /* its wrapped computation (calls=) */
            called[0] = cxla_instr_called(in, CXLA_ATTR_CALLS);
            k = called[0] ? 1 : 0;
        }
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
    void *spare = atomic_load(&p->spare);
    if (spare) cxla_mem_give(cpu_plan_arena_bytes(p));
    free(spare);
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
        int64_t n = cpu_steps_leaf_count(ps), c = 0;
        const cxla_shape **shapes = malloc((size_t)(n ? n : 1) * sizeof(*shapes));
        params[i] = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
        if (!shapes || !params[i]) {
            free(shapes);
            s = OOM();
            break;
        }
        cpu_steps_leaf_shapes(ps, shapes, &c);
        p->arg_base[i] = p->arg_leaf_count;
        for (int64_t e = 0; e < n && !s; e++) {
            int64_t v = cpu_steps_new_value(&b, shapes[e], V_ARG, -1);
            if (v < 0)
                s = OOM();
            else
                p->values[v].arg = p->arg_leaf_count + e;
            params[i][e] = v;
        }
        p->arg_leaf_count += n;
        free(shapes);
    }
    /* Donated arguments the module aliases: the entry's to overwrite. A dynamic one only
     * where it is a whole array parameter (it is then used at its bounds in the caller's
     * memory, below); a dynamic leaf of a tuple is bound into a new literal each run. */
    for (int64_t a = 0; a < alias_count && !s; a++) {
        const cpu_io_alias *al = &aliases[a];
        value *x = &p->values[params[al->param][al->arg - p->arg_base[al->param]]];
        const cxla_shape *ps = &entry->params[al->param]->shape;
        size_t elem = 0;
        if (!static_shape(x->shape) &&
            (!cxla_type_is_array(ps->type) || !cpu_whole_elements(ps, &elem)))
            continue;
        x->writable = true;
        x->alias_of = al->output;
    }
    /* Dynamic array parameters: an arena buffer at their bounds for the whole run, which
     * each run binds the argument into (no new memory a run); a donated one the module
     * aliases is used where it lies instead (CPU_ARG_IN_PLACE). */
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
        if (p->values[params[i][0]].writable) {
            p->arg_copy[i] = CPU_ARG_IN_PLACE;
            continue;
        }
        int64_t v = cpu_steps_new_value(&b, ps, V_ARENA, -1);
        if (v < 0 || !cpu_steps_note(&b, v, true)) s = OOM();
        p->arg_copy[i] = v;
    }
    int64_t *root = NULL, rn = 0;
    if (!s) s = cpu_steps_build_seq(&b, entry, params, NULL, &p->entry, 0, &root, &rn, NULL);
    int64_t end = b.pos;
    b.pos = end > 0 ? end - 1 : 0; /* the last step: the copies live through it */
    for (int64_t i = 0; p->arg_copy && i < entry->param_count && !s; i++)
        if (p->arg_copy[i] >= 0 && !cpu_steps_note(&b, p->arg_copy[i], false)) s = OOM();
    b.pos = end;
    if (!s) {
        p->root = root;
        p->root_count = rn;
        root = NULL;
        if (donating) {
            cpu_lives l = {b.ev, b.en, b.loops, b.ln, b.pos};
            s = cpu_steps_donate(p, &l, params);
        }
    }
    for (int64_t i = 0; params && i < entry->param_count; i++) free(params[i]);
    free(params);
    if (!s) {
        for (int64_t k = 0; k < rn; k++) {
            int64_t c = cpu_value_find(p->values, p->root[k]);
            p->root[k] = c;
            /* The first time the root names an arena buffer, it is the result itself. */
            if (p->values[c].kind == V_ARENA && p->values[c].result < 0) p->values[c].result = k;
        }
        cpu_steps_resolve(p);
        cpu_lives l = {b.ev, b.en, b.loops, b.ln, b.pos};
        s = cpu_steps_place(p, &l);
    }
    if (!s) s = cpu_steps_dynamic_sizes(p);
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
    case W_ERROR: return "the interpreter's error";
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
