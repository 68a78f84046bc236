/* The steps of a plan that run other sequences or hold their operands (cpu_steps_build.h):
 * call (the callee's sequence, its results adopted), conditional (each branch writes the
 * result buffers), while (the state updated in place where liveness allows, a loop range
 * for liveness), async-start (its wrapped computation run as a call; the async-desugar
 * pass gave the sugar forms one) and copy-start (no step: aliases), their contexts zero
 * constants. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_steps_build.h"
#include "cpu/emit.h"

#define OOM() CPU_STEPS_OOM()

/* Results of a called sequence (|root|, |n| leaves) that |f| may read as its own, as
 * the leaves from |at| of instruction |i| (fresh_leaves made them): the callee's values get
 * the caller as owner; those it passes through from elsewhere (its parameters, constants)
 * are copied, so that no value is reachable two ways. */
static cxla_status adopt_results(bld *b, frame *f, seq *q, int64_t i, int64_t at, int64_t callee_id,
                                 const int64_t *root, int64_t n) {
    int64_t *src = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *dst = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!src || !dst) {
        free(src);
        free(dst);
        return OOM();
    }
    int64_t c = 0;
    for (int64_t e = 0; e < n; e++) {
        int64_t v = f->leaves[i][at + e];
        const value *r = &b->p->values[root[e]];
        bool unique = true;
        for (int64_t k = 0; k < e; k++)
            if (cpu_value_find(b->p->values, root[k]) == cpu_value_find(b->p->values, root[e]))
                unique = false;
        if (unique && r->owner == callee_id && r->from_step &&
            b->p->values[cpu_value_find(b->p->values, root[e])].kind == V_ARENA) {
            cpu_value_merge(b->p->values, v, root[e]);
        } else if (b->p->values[v].kind != V_TOKEN) {
            src[c] = root[e];
            dst[c++] = v;
        }
    }
    cxla_status s = cpu_steps_add_copies(b, q, f->order[i], f->comp, src, dst, c);
    free(src);
    free(dst);
    return s;
}

cxla_status cpu_steps_build_call(bld *b, frame *f, seq *q, int64_t i) {
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
    step *sp = cpu_steps_add_step(b, q, S_SEQ, in, f->comp, 0, 0);
    seq *sub = sp ? calloc(1, sizeof(seq)) : NULL;
    if (!sub) {
        free(params);
        return OOM();
    }
    sp->sub = sub;
    sp->sub_count = 1;
    b->pos++;
    int64_t id = b->next_seq++, *root = NULL, rn = 0;
    cxla_status s = cpu_steps_build_seq(b, callee, params, NULL, sub, id, &root, &rn, NULL);
    free(params);
    b->pos++;
    if (!s) s = cpu_steps_fresh_leaves(b, f, i);
    if (!s) s = adopt_results(b, f, q, i, 0, id, root, rn);
    free(root);
    return s;
}

/* A constant of zeros of |shape| (an array or a token), into *out. */
static cxla_status zero_value(bld *b, const cxla_shape *shape, int64_t *out) {
    int64_t v = cpu_steps_new_value(b, shape, V_CONST, -1);
    if (v < 0) return OOM();
    if (b->p->values[v].kind == V_CONST) {
        cxla_literal *z = NULL;
        CXLA_RETURN_IF_ERROR(cxla_literal_create(shape, &z)); /* zeroed */
        CXLA_RETURN_IF_ERROR(cpu_steps_keep_constant(b, z));
        b->p->values[v].data = z->data;
    }
    *out = v;
    return NULL;
}

/* Whether the leaves of |s| from the start are the shapes of |in|'s operands' leaves, in
 * order (layouts included: the leaves are aliased, not copied). */
static bool holds_operands(const frame *f, const cxla_instr *in, int64_t k0, int64_t k1,
                           const cxla_shape *s) {
    int64_t n = cpu_steps_leaf_count(s), c = 0, total = 0;
    for (int64_t k = k0; k < k1; k++) total += f->nleaves[f->pos_of[in->operands[k]->id]];
    if (n != total) return false;
    const cxla_shape *small[16];
    const cxla_shape **mine = n <= 16 ? small : malloc((size_t)n * sizeof(*mine));
    if (!mine) return false;
    cpu_steps_leaf_shapes(s, mine, &c);
    bool ok = true;
    c = 0;
    for (int64_t k = k0; k < k1 && ok; k++) {
        const cxla_shape *os[16];
        int64_t on = 0;
        if (cpu_steps_leaf_count(&in->operands[k]->shape) > 16) {
            ok = false;
            break;
        }
        cpu_steps_leaf_shapes(&in->operands[k]->shape, os, &on);
        for (int64_t e = 0; e < on && ok; e++) ok = cxla_shape_equal(os[e], mine[c++]);
    }
    if (mine != small) free(mine);
    return ok;
}

/* Whether values of shapes |a| and |b| have the same bytes in the arena: the same
 * element types and dimensions (layouts aside) and leaf by leaf the same byte size. */
static bool same_bytes(const cxla_shape *a, const cxla_shape *b) {
    if (!cxla_shape_compatible(a, b)) return false;
    if (a->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < a->tuple_count; i++)
            if (!same_bytes(&a->elements[i], &b->elements[i])) return false;
        return true;
    }
    size_t x = 0, y = 0;
    if (!cxla_type_is_array(a->type)) return true;
    return !cxla_shape_byte_size(a, &x) && !cxla_shape_byte_size(b, &y) && x == y;
}

/* copy-start and async-start, without a step of their own: the leaves of their result
 * that hold the operands (held_copies) are the operands' values; async-start's {1} is its
 * wrapped computation's sequence (calls=) run here, as build_call runs a callee (the
 * sugar forms have one: passes/async_desugar.c); the contexts after them are the zeros
 * the interpreter puts there, constants of the plan. *out_done stays false, with nothing
 * built, where the shapes do not line up as the interpreter needs (its handler runs it,
 * or reports the error). */
cxla_status cpu_steps_build_held(bld *b, frame *f, seq *q, int64_t i, bool *out_done) {
    const cxla_instr *in = f->order[i];
    *out_done = false;
    int64_t held = cpu_steps_held_copies(in), n = f->nleaves[i];
    const cxla_shape *d = &in->shape;
    cxla_computation *callee = cxla_instr_called(in, CXLA_ATTR_CALLS);
    if (held == 0) return NULL;
    if (in->opcode == CXLA_OP_COPY_START) {
        /* The arena holds every array row-major, whatever layout its shape names: a
         * destination in another layout holds the same bytes (the layout pass gives
         * copy-start's leaves the default layout anyway). */
        if (!same_bytes(&d->elements[0], &in->operands[0]->shape) ||
            !same_bytes(&d->elements[1], &in->operands[0]->shape))
            return NULL;
    } else if (!callee) {
        return NULL; /* sugar the async-desugar pass left: its shapes do not line up */
    } else {
        /* {0} is the tuple of the operands, or operand 0 itself when it is no tuple. */
        const cxla_shape *ops = &d->elements[0];
        bool one = ops->type != CXLA_TUPLE;
        if (callee->param_count != in->operand_count || !callee->root ||
            (one && in->operand_count != 1) || (!one && ops->tuple_count != in->operand_count) ||
            !holds_operands(f, in, 0, in->operand_count, ops) ||
            !cxla_shape_compatible(&callee->root->shape, &d->elements[1]) ||
            cpu_steps_leaf_count(&d->elements[1]) != cpu_steps_leaf_count(&callee->root->shape))
            return NULL;
    }
    int64_t *ins = NULL, nin = 0;
    CXLA_RETURN_IF_ERROR(cpu_steps_operand_leaves(f, in, &ins, &nin));
    cxla_status s = cpu_steps_fresh_leaves(b, f, i);
    int64_t at = held * nin; /* the first leaf after the held ones */
    if (!s && callee) {
        /* The wrapped computation, as a call: its result is {1}. */
        int64_t **params =
            calloc((size_t)(callee->param_count ? callee->param_count : 1), sizeof(int64_t *));
        step *sp = params ? cpu_steps_add_step(b, q, S_SEQ, in, f->comp, 0, 0) : NULL;
        seq *sub = sp ? calloc(1, sizeof(seq)) : NULL;
        if (!sub) s = OOM();
        for (int64_t k = 0; k < callee->param_count && !s; k++)
            params[k] = f->leaves[f->pos_of[in->operands[k]->id]];
        int64_t id = b->next_seq++, *root = NULL, rn = 0;
        if (!s) {
            sp->sub = sub;
            sp->sub_count = 1;
            b->pos++;
            s = cpu_steps_build_seq(b, callee, params, NULL, sub, id, &root, &rn, NULL);
            b->pos++;
        }
        if (!s) s = adopt_results(b, f, q, i, at, id, root, rn);
        at += rn;
        free(root);
        free(params);
        cpu_steps_set_what(b, in, W_STEP);
    } else if (!s) {
        cpu_steps_set_what(b, in, W_ALIAS);
    }
    for (int64_t h = 0; h < held && !s; h++)
        for (int64_t e = 0; e < nin; e++) f->leaves[i][h * nin + e] = ins[e];
    free(ins);
    if (!s) {
        const cxla_shape *small[16];
        const cxla_shape **shapes = n <= 16 ? small : malloc((size_t)n * sizeof(*shapes));
        int64_t c = 0;
        if (!shapes) s = OOM();
        if (!s) cpu_steps_leaf_shapes(d, shapes, &c);
        for (int64_t e = at; e < n && !s; e++) s = zero_value(b, shapes[e], &f->leaves[i][e]);
        if (shapes != small) free(shapes);
    }
    if (!s) *out_done = true;
    return s;
}

cxla_status cpu_steps_build_conditional(bld *b, frame *f, seq *q, int64_t i) {
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
    CXLA_RETURN_IF_ERROR(cpu_steps_fresh_leaves(b, f, i));
    int64_t n = f->nleaves[i];
    int64_t index = f->leaves[f->pos_of[in->operands[0]->id]][0];
    step *sp = cpu_steps_add_step(b, q, S_COND, in, f->comp, 1, n);
    if (!sp) return OOM();
    sp->in[0] = index;
    memcpy(sp->out, f->leaves[i], (size_t)n * sizeof(int64_t));
    sp->sub = calloc((size_t)nb, sizeof(seq));
    if (!sp->sub) return OOM();
    sp->sub_count = nb;
    if (!cpu_steps_note(b, index, false)) return OOM();
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
        s = cpu_steps_build_seq(b, branches[k], params, NULL, bq, id, &root, &rn, NULL);
        if (!s && rn != n) s = exec_error(in, CXLA_STATUS_INTERNAL, "branch result leaves");
        int64_t c = 0;
        for (int64_t e = 0; e < n && !s; e++) {
            int64_t out = f->leaves[i][e];
            const value *r = &b->p->values[root[e]];
            bool unique = true;
            for (int64_t j = 0; j < e; j++)
                if (cpu_value_find(b->p->values, root[j]) == cpu_value_find(b->p->values, root[e]))
                    unique = false;
            int64_t rc = cpu_value_find(b->p->values, root[e]);
            if (unique && r->owner == id && r->from_step && b->p->values[rc].members == 1 &&
                b->p->values[rc].kind == V_ARENA) {
                cpu_value_merge(b->p->values, root[e],
                                out); /* the branch writes the result itself */
            } else if (b->p->values[out].kind != V_TOKEN) {
                src[c] = root[e];
                dst[c++] = out;
            }
        }
        if (!s) s = cpu_steps_add_copies(b, bq, in, branches[k], src, dst, c);
        free(root);
    }
    free(src);
    free(dst);
    b->pos++;
    return s;
}

/* State leaves smaller than this keep their copy: a copy of a few hundred bytes costs less
 * than compiling the kernel a second time (cpu_emit_kernel_alias's form). */
enum { ALIAS_MIN_BYTES = 1024 };

/* New state leaves from at least this many bytes may swap buffers with the state instead
 * of being copied into it (double buffering): their buffer is then kept through the whole
 * loop, worth it where a copy costs more than a few microseconds. */
enum { SWAP_MIN_BYTES = 64 * 1024 };

/* The kernel step of |body| (the body's own steps, not a callee's) that computes value
 * |rc| (a class) at body instruction |def| and reads the state leaf of class |wc| as its
 * last read of it: whether it may write |rc| over that leaf where it lies, reading each
 * element before it writes it (cpu_emit_alias_ok), and which step and operand. The
 * operand is read through no other of its operands (then each would be a pointer to the
 * buffer being written). */
static step *alias_step(bld *b, seq *body, const cxla_instr *def, int64_t rc, int64_t wc,
                        int64_t *out_k) {
    value *v = b->p->values;
    if (v[wc].size < ALIAS_MIN_BYTES) return NULL;
    for (int64_t s = body->count - 1; s >= 0; s--) {
        step *sp = &body->steps[s];
        if (sp->instr != def) continue;
        if (sp->kind != S_KERNEL || sp->bounds != B_STATIC || sp->out_count != 1 ||
            sp->info.in_place || sp->info.scratch || sp->in_count != def->operand_count ||
            cpu_value_find(v, sp->out[0]) != rc)
            return NULL;
        int64_t k = -1;
        for (int64_t j = 0; j < sp->in_count; j++) {
            if (cpu_value_find(v, sp->in[j]) != wc) continue;
            if (k >= 0) return NULL; /* read through two operands */
            k = j;
        }
        /* (cpu_loop.c keeps the forms it emitted as one bit per operand, of 64.) */
        if (k < 0 || k >= 64 || !cpu_emit_alias_ok(def, k)) return NULL;
        *out_k = k;
        return sp;
    }
    return NULL;
}

/* The first value of the chain of in-place dynamic-update-slices of |body| (its own steps)
 * that ends in value |v|: |v| itself when no such update made it; *out_len values in the
 * chain. -1 when a value of it was not made by a step of |body| (bf: its frame). */
static int64_t chain_head(bld *b, const seq *body, const frame *bf, int64_t body_id, int64_t v,
                          int64_t *out_len) {
    int64_t len = 1;
    for (int depth = 0; depth < MAX_DEPTH; depth++) {
        const value *x = &b->p->values[v];
        if (x->def_seq != body_id || x->def_pos < 0 || x->def_pos >= bf->n) return -1;
        const cxla_instr *d = bf->order[x->def_pos];
        const step *sp = NULL;
        for (int64_t s = body->count - 1; s >= 0 && !sp; s--)
            if (body->steps[s].instr == d) sp = &body->steps[s];
        if (!sp) return -1;
        if (sp->kind != S_DUS) {
            *out_len = len;
            return v;
        }
        v = sp->in[0]; /* the operand it updated in place */
        len++;
    }
    return -1;
}

cxla_status cpu_steps_build_while(bld *b, frame *f, seq *q, int64_t i) {
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
    if (!s) cpu_steps_leaf_shapes(&in->shape, shapes, &sc);
    for (int64_t e = 0; e < n && !s; e++) {
        w[e] = cpu_steps_new_value(b, shapes[e], V_ARENA, body_id);
        if (w[e] < 0) {
            s = OOM();
            break;
        }
        if (b->p->values[w[e]].kind == V_TOKEN) continue;
        bool unique = true;
        for (int64_t k = 0; k < e; k++)
            if (cpu_value_find(b->p->values, init[k]) == cpu_value_find(b->p->values, init[e]))
                unique = false;
        if (unique && cpu_steps_dies_at(b, f, init[e], i)) {
            cpu_value_merge(b->p->values, w[e], init[e]);
            b->p->stats.in_place++;
        } else {
            src[c] = init[e];
            dst[c++] = w[e];
        }
    }
    if (shapes != small) free(shapes);
    if (!s) s = cpu_steps_add_copies(b, q, in, f->comp, src, dst, c);
    step *sp = s ? NULL : cpu_steps_add_step(b, q, S_WHILE, in, f->comp, 0, 0);
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
        s = cpu_steps_build_seq(b, cond, params, NULL, &q->steps[q->count - 1].sub[0], cond_id,
                                &croot, &cn, NULL);
        if (!s && (cn != 1 || b->p->values[croot[0]].shape->type != CXLA_PRED))
            s = exec_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                           "the condition must give a pred[] scalar");
        if (!s) {
            q->steps[q->count - 1].pred = croot[0];
            if (!cpu_steps_note(b, croot[0], false)) s = OOM();
            b->pos++;
        }
    }
    /* How many values share each state buffer before the body: the body may write a
     * result into it only when no in-place update there made another value of it. */
    for (int64_t e = 0; e < n && !s; e++)
        wm[e] = b->p->values[cpu_value_find(b->p->values, w[e])].members;
    if (!s) {
        int64_t *params[1] = {w};
        bool owned[1] = {true};
        s = cpu_steps_build_seq(b, body, params, owned, &q->steps[q->count - 1].sub[1], body_id,
                                &root, &rn, &bf);
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
        int64_t rc = cpu_value_find(b->p->values, root[e]), wc = cpu_value_find(b->p->values, w[e]);
        if (rc == wc || b->p->values[wc].kind == V_TOKEN) continue;
        const value *r = &b->p->values[root[e]];
        bool unique = true;
        for (int64_t k = 0; k < n; k++)
            if (k != e && cpu_value_find(b->p->values, root[k]) == rc) unique = false;
        bool is_state = false;
        for (int64_t k = 0; k < n; k++)
            if (cpu_value_find(b->p->values, w[k]) == rc) is_state = true;
        int64_t param_last = param_pos >= 0 ? bf.last[param_pos][e] : NEVER_READ;
        bool base = unique && r->owner == body_id && r->from_step && r->def_seq == body_id &&
                    b->p->values[rc].kind == V_ARENA;
        bool fresh = base && b->p->values[rc].members == 1;
        /* Or the kernel computing the new leaf (or the value that in-place
         * dynamic-update-slices then made it) reads the state's buffer and is the last to
         * read it: the value it reads there (the parameter's leaf, or what an update in the
         * body left in that buffer, as a nested loop's result) dies at it, the parameter's
         * leaf is dead by then. It may write over the old leaf where it reads each element
         * before writing it (alias_step); the updates then write there too. */
        seq *bq = &q->steps[q->count - 1].sub[1];
        int64_t ak = -1, len = 0, head = base ? chain_head(b, bq, &bf, body_id, root[e], &len) : -1;
        int64_t kpos = head >= 0 ? b->p->values[head].def_pos : -1;
        step *as = head >= 0 && b->p->values[rc].members == len && param_last <= kpos
                       ? alias_step(b, bq, bf.order[kpos], rc, wc, &ak)
                       : NULL;
        if (as) {
            const value *cv = &b->p->values[as->in[ak]];
            if (cv->def_seq != body_id || cv->def_pos < 0 || cv->def_pos >= bf.n ||
                cv->def_leaf < 0 || cv->def_leaf >= bf.nleaves[cv->def_pos] ||
                bf.last[cv->def_pos][cv->def_leaf] != kpos)
                as = NULL;
        }
        if ((fresh && param_last < r->def_pos && b->p->values[wc].members == wm[e]) || as) {
            cpu_value_merge(b->p->values, root[e], w[e]);
            b->p->stats.in_place++;
            if (as) {
                as->alias = ak;
                b->p->stats.loop_aliased++;
                cpu_steps_set_what(b, as->instr, W_KERNEL_IN_PLACE);
            }
        } else if (is_state) {
            int64_t tv = cpu_steps_new_value(b, b->p->values[w[e]].shape, V_ARENA, body_id);
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
    if (!s && t > 0) s = cpu_steps_add_copies(b, body_q, in, body, src, tmp, t);
    /* src was the temporaries' sources; now the final copies. A big new leaf that the body
     * computed into a buffer of its own may instead swap buffers with the state (double
     * buffering, cpu_loop.c): those pairs go last, in a copy step of their own, and their
     * source buffer lives through the whole loop (below), so that after a swap it holds
     * the state where nothing else of the loop has its buffer. */
    int64_t ti = 0, nswap = 0;
    int64_t *sw = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!sw) s = OOM();
    for (int64_t e = 0; e < n && !s; e++) {
        int64_t rc = cpu_value_find(b->p->values, root[e]), wc = cpu_value_find(b->p->values, w[e]);
        if (rc == wc || b->p->values[wc].kind == V_TOKEN) continue;
        bool is_state = false;
        for (int64_t k = 0; k < n; k++)
            if (cpu_value_find(b->p->values, w[k]) == rc) is_state = true;
        bool unique = true;
        for (int64_t k = 0; k < n; k++)
            if (k != e && cpu_value_find(b->p->values, root[k]) == rc) unique = false;
        const value *r = &b->p->values[root[e]];
        if (!is_state && unique && r->owner == body_id && r->from_step && r->def_seq == body_id &&
            b->p->values[rc].kind == V_ARENA && b->p->values[rc].size >= SWAP_MIN_BYTES) {
            sw[nswap++] = e;
            continue;
        }
        src[c] = is_state ? tmp[ti++] : root[e];
        dst[c++] = w[e];
    }
    if (!s) s = cpu_steps_add_copies(b, body_q, in, body, src, dst, c);
    for (int64_t k = 0; k < nswap && !s; k++) {
        src[k] = root[sw[k]];
        dst[k] = w[sw[k]];
    }
    if (!s && nswap > 0) {
        s = cpu_steps_add_copies(b, body_q, in, body, src, dst, nswap);
        if (!s) body_q->steps[body_q->count - 1].swap = true;
        /* The sources live from the loop's start to its end. */
        int64_t at = b->pos;
        b->pos = a;
        for (int64_t k = 0; k < nswap && !s; k++)
            if (!cpu_steps_note(b, src[k], false)) s = OOM();
        b->pos = at;
    }
    free(sw);
    if (have_frame) cpu_steps_frame_free(&bf);
    free(root);
    free(croot);
    /* The loop's end: the state is read again by the next iteration; the buffers it may
     * swap with live as long. */
    for (int64_t e = 0; e < n && !s; e++)
        if (!cpu_steps_note(b, w[e], false)) s = OOM();
    for (int64_t k = 0; k < nswap && !s; k++)
        if (!cpu_steps_note(b, src[k], false)) s = OOM();
    int64_t end = b->pos++;
    if (!s) {
        if (b->ln == b->lcap) {
            int64_t cap = b->lcap ? 2 * b->lcap : 16;
            cpu_range *nl = realloc(b->loops, (size_t)cap * sizeof(*nl));
            if (!nl)
                s = OOM();
            else {
                b->loops = nl;
                b->lcap = cap;
            }
        }
        if (!s) b->loops[b->ln++] = (cpu_range){a, end};
    }
    /* The loop's results: the state, now the caller's. */
    for (int64_t e = 0; e < n && !s; e++) {
        int64_t v = cpu_steps_new_value(b, b->p->values[w[e]].shape, V_ARENA, f->id);
        if (v < 0) {
            s = OOM();
            break;
        }
        value *x = &b->p->values[v];
        x->def_seq = f->id;
        x->def_pos = i;
        x->def_leaf = e;
        x->from_step = true;
        cpu_value_merge(b->p->values, v, w[e]);
        f->leaves[i][e] = v;
    }
    free(w);
    free(src);
    free(dst);
    free(tmp);
    free(wm);
    return s;
}
