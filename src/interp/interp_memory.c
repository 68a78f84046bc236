/* The memory a module needs at least (interp_live_bound, interp_memory.h): the bytes of its
 * parameters and constants plus the largest set of array values live at once along the
 * interpreter's schedule (each computation in post order), called computations and loop
 * bodies included. A run that holds much more than this holds some value past its last
 * use; tests/interp/test_memory.c compares both backends' peaks with it.
 *
 * The model, per computation: every array leaf an instruction makes is a buffer, alive
 * from the instruction that makes it to the last instruction that reads a value holding
 * it. Tuple, get-tuple-element, bitcast and the identities make no buffer: their leaves
 * are their operands'. Parameters and constants are counted apart, once. An instruction
 * may write its result into an operand's buffer of the same size that dies at it (a
 * while loop's state, dynamic-update-slice's and scatter's operand, an elementwise
 * operand), as XLA's buffer assignment does. While an instruction runs, the computations
 * it calls hold their own peak on top (a while loop's body or condition; a call's
 * callee less its result, which is the call's). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp_memory.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

enum { MAX_DEPTH = 200, MAX_CALLED = 64 };

typedef struct buffer {
    size_t size;
    int64_t last;   /* the last step that reads it; step_count: the root's */
    int64_t parent; /* the buffer it shares (written in place), or itself */
    int64_t def;    /* the step that makes it */
} buffer;

/* What the computations already measured need: peak, and the bytes of their root's own
 * buffers at the end (the part of the peak that a call's result is). */
typedef struct comp_memo {
    const cxla_computation *comp;
    size_t peak, final;
} comp_memo;

typedef struct bound_state {
    comp_memo *memo;
    int64_t memo_count, memo_cap;
} bound_state;

static int64_t leaf_count(const cxla_shape *s) {
    if (s->type != CXLA_TUPLE) return 1;
    int64_t n = 0;
    for (int64_t i = 0; i < s->tuple_count; i++) n += leaf_count(&s->elements[i]);
    return n;
}

static size_t array_bytes(const cxla_shape *s) {
    size_t n = 0;
    if (!cxla_type_is_array(s->type)) return 0;
    cxla_status st = cxla_shape_byte_size(s, &n);
    if (st) {
        cxla_status_free(st);
        return 0;
    }
    return n;
}

/* The array leaves of |s| in depth-first order, into sizes[*k ...]. */
static void leaf_sizes(const cxla_shape *s, size_t *sizes, int64_t *k) {
    if (s->type != CXLA_TUPLE) {
        sizes[(*k)++] = array_bytes(s);
        return;
    }
    for (int64_t i = 0; i < s->tuple_count; i++) leaf_sizes(&s->elements[i], sizes, k);
}

size_t interp_shape_bytes(const cxla_shape *s) {
    if (s->type != CXLA_TUPLE) return array_bytes(s);
    size_t n = 0;
    for (int64_t i = 0; i < s->tuple_count; i++) n += interp_shape_bytes(&s->elements[i]);
    return n;
}

static int64_t find(buffer *b, int64_t x) {
    while (b[x].parent != x) x = b[x].parent = b[b[x].parent].parent;
    return x;
}

static bool aliases_operand(cxla_opcode op) {
    switch (op) {
    case CXLA_OP_TUPLE:
    case CXLA_OP_GET_TUPLE_ELEMENT:
    case CXLA_OP_BITCAST:
    case CXLA_OP_OPTIMIZATION_BARRIER:
    case CXLA_OP_DOMAIN:
    case CXLA_OP_ADD_DEPENDENCY: return true;
    default: return false;
    }
}

/* Whether |in|'s result may take the buffer of operand |k| when that dies at |in|. */
static bool may_write_into(const cxla_instr *in, int64_t k) {
    if (in->opcode == CXLA_OP_WHILE) return k == 0;
    if (in->opcode == CXLA_OP_DYNAMIC_UPDATE_SLICE) return k == 0;
    if (in->opcode == CXLA_OP_SCATTER) return k == 0 && in->shape.type != CXLA_TUPLE;
    return (cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_ELEMENTWISE) &&
           in->shape.type != CXLA_TUPLE;
}

static cxla_status comp_peak(bound_state *bs, const cxla_computation *comp, int depth,
                             size_t *out_peak, size_t *out_final);

static cxla_status measure(bound_state *bs, const cxla_computation *comp, int depth,
                           size_t *out_peak, size_t *out_final) {
    for (int64_t i = 0; i < bs->memo_count; i++)
        if (bs->memo[i].comp == comp) {
            *out_peak = bs->memo[i].peak;
            *out_final = bs->memo[i].final;
            return NULL;
        }
    if (depth > MAX_DEPTH)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "computation '%s' is called more than %d deep", comp->name, MAX_DEPTH);
    CXLA_RETURN_IF_ERROR(comp_peak(bs, comp, depth, out_peak, out_final));
    if (bs->memo_count == bs->memo_cap) {
        int64_t cap = bs->memo_cap ? 2 * bs->memo_cap : 16;
        comp_memo *m = realloc(bs->memo, (size_t)cap * sizeof(*m));
        if (!m) return OOM();
        bs->memo = m;
        bs->memo_cap = cap;
    }
    bs->memo[bs->memo_count++] = (comp_memo){comp, *out_peak, *out_final};
    return NULL;
}

/* The peak of |comp|'s own buffers (parameters and constants not counted) while it runs. */
static cxla_status comp_peak(bound_state *bs, const cxla_computation *comp, int depth,
                             size_t *out_peak, size_t *out_final) {
    cxla_arena *a = cxla_arena_create();
    if (!a) return OOM();
    cxla_instr **order = NULL;
    cxla_status s = cxla_computation_post_order_in(comp, a, &order);
    int64_t n = comp->instr_count;
    /* Per step: where its leaves start in |leaves|, how many, the extra while it runs. */
    int64_t *first = cxla_arena_alloc_array(a, (size_t)n + 1, sizeof(int64_t));
    int64_t *count = cxla_arena_alloc_array(a, (size_t)n + 1, sizeof(int64_t));
    size_t *inner = cxla_arena_alloc_array(a, (size_t)n + 1, sizeof(size_t));
    bool *live = cxla_arena_alloc_array(a, (size_t)n + 1, sizeof(bool));
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) total += leaf_count(&comp->instrs[i]->shape);
    int64_t *leaves = cxla_arena_alloc_array(a, (size_t)total + 1, sizeof(int64_t));
    buffer *buf = cxla_arena_alloc_array(a, (size_t)total + 1, sizeof(buffer));
    size_t *sizes = cxla_arena_alloc_array(a, (size_t)total + 1, sizeof(size_t));
    if (!s && (!first || !count || !inner || !live || !leaves || !buf || !sizes)) s = OOM();
    cxla_strmap step_of;
    cxla_strmap_init(&step_of, a);
    for (int64_t i = 0; i < n && !s; i++)
        if (!cxla_strmap_put(&step_of, order[i]->name, strlen(order[i]->name),
                             (void *)(intptr_t)(i + 1)))
            s = OOM();
    /* As the interpreter: what no one reads (not the root, no side effect) is not run. */
    for (int64_t i = n - 1; i >= 0 && !s; i--) {
        const cxla_instr *in = order[i];
        bool needed = in == comp->root || in->opcode == CXLA_OP_PARAMETER ||
                      (cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_SIDE_EFFECT);
        for (int64_t u = 0; u < in->user_count && !needed; u++) {
            const cxla_instr *user = in->users[u];
            if (user->parent != comp) continue;
            intptr_t us = (intptr_t)cxla_strmap_get(&step_of, user->name, strlen(user->name));
            needed = us && live[us - 1];
        }
        live[i] = needed;
    }
    int64_t nbuf = 0, nleaf = 0;
#define STEP_OF(op) ((intptr_t)cxla_strmap_get(&step_of, (op)->name, strlen((op)->name)) - 1)
    for (int64_t i = 0; i < n && !s; i++) {
        const cxla_instr *in = order[i];
        first[i] = nleaf;
        count[i] = 0;
        if (!live[i]) continue;
        int64_t nl = leaf_count(&in->shape);
        if (aliases_operand(in->opcode) && in->operand_count > 0) {
            /* The operands' leaves (tuple: all of them; get-tuple-element: its element's). */
            int64_t from = 0, take = 0;
            if (in->opcode == CXLA_OP_TUPLE) {
                for (int64_t k = 0; k < in->operand_count; k++) {
                    int64_t o = STEP_OF(in->operands[k]);
                    memcpy(&leaves[nleaf + take], &leaves[first[o]],
                           (size_t)count[o] * sizeof(int64_t));
                    take += count[o];
                }
            } else {
                int64_t o = STEP_OF(in->operands[0]), index = 0;
                if (in->opcode == CXLA_OP_GET_TUPLE_ELEMENT &&
                    cxla_instr_int(in, CXLA_ATTR_INDEX, &index)) {
                    const cxla_shape *ts = &in->operands[0]->shape;
                    for (int64_t e = 0; e < index && e < ts->tuple_count; e++)
                        from += leaf_count(&ts->elements[e]);
                }
                take = count[o] - from < nl ? count[o] - from : nl;
                memmove(&leaves[nleaf], &leaves[first[o] + from],
                        (size_t)(take > 0 ? take : 0) * sizeof(int64_t));
            }
            count[i] = take > 0 ? take : 0;
            nleaf += count[i];
            continue;
        }
        if (in->opcode == CXLA_OP_PARAMETER || in->opcode == CXLA_OP_CONSTANT) {
            for (int64_t l = 0; l < nl; l++) { /* counted apart: buffers of no size */
                buf[nbuf] = (buffer){0, i, nbuf, i};
                leaves[nleaf++] = nbuf++;
            }
            count[i] = nl;
            continue;
        }
        int64_t k = 0;
        leaf_sizes(&in->shape, sizes, &k);
        for (int64_t l = 0; l < nl; l++) {
            buf[nbuf] = (buffer){sizes[l], i, nbuf, i};
            leaves[nleaf++] = nbuf++;
        }
        count[i] = nl;
        /* The computations it calls. */
        cxla_computation *called[MAX_CALLED];
        int64_t nc = cxla_instr_called_computations(in, called, MAX_CALLED);
        for (int64_t c = 0; c < nc && c < MAX_CALLED && !s; c++) {
            size_t peak = 0, final = 0;
            s = measure(bs, called[c], depth + 1, &peak, &final);
            /* A while loop's state is the caller's; a call's result is its root. */
            size_t extra = in->opcode == CXLA_OP_WHILE ? peak : peak - final;
            if (extra > inner[i]) inner[i] = extra;
        }
    }
    /* Last uses. */
    for (int64_t i = 0; i < n && !s; i++) {
        const cxla_instr *in = order[i];
        if (!live[i]) continue;
        for (int64_t k = 0; k < in->operand_count; k++) {
            int64_t o = STEP_OF(in->operands[k]);
            for (int64_t l = 0; l < count[o]; l++)
                if (buf[leaves[first[o] + l]].last < i) buf[leaves[first[o] + l]].last = i;
        }
    }
    int64_t r = STEP_OF(comp->root);
    for (int64_t l = 0; !s && r >= 0 && l < count[r]; l++) buf[leaves[first[r] + l]].last = n;
    /* In place: a result leaf takes an operand leaf of the same size that dies here. */
    for (int64_t i = 0; i < n && !s; i++) {
        const cxla_instr *in = order[i];
        if (!live[i] || aliases_operand(in->opcode)) continue;
        for (int64_t k = 0; k < in->operand_count; k++) {
            if (!may_write_into(in, k)) continue;
            int64_t o = STEP_OF(in->operands[k]);
            int64_t m = count[o] < count[i] ? count[o] : count[i];
            for (int64_t l = 0; l < m; l++) {
                int64_t from = find(buf, leaves[first[o] + l]);
                int64_t to = find(buf, leaves[first[i] + l]);
                if (from == to || buf[to].def != i || buf[from].size == 0 ||
                    buf[from].size != buf[to].size || buf[from].last != i)
                    continue;
                buf[from].last = buf[to].last;
                buf[to].size = 0;
                buf[to].parent = from;
            }
        }
    }
#undef STEP_OF
    /* The sweep: at step i its new buffers join, its callees' peak sits on top, then the
     * buffers read for the last time leave. */
    size_t *freed_at = cxla_arena_alloc_array(a, (size_t)n + 2, sizeof(size_t));
    size_t *made_at = cxla_arena_alloc_array(a, (size_t)n + 2, sizeof(size_t));
    if (!s && (!freed_at || !made_at)) s = OOM();
    size_t cur = 0, peak = 0, final = 0;
    for (int64_t b = 0; b < nbuf && !s; b++) {
        if (buf[b].parent != b || buf[b].size == 0) continue;
        made_at[buf[b].def] += buf[b].size;
        freed_at[buf[b].last] += buf[b].size;
        if (buf[b].last == n) final += buf[b].size;
    }
    for (int64_t i = 0; i < n && !s; i++) {
        cur += made_at[i];
        if (cur + inner[i] > peak) peak = cur + inner[i];
        cur -= freed_at[i];
    }
    if (cur > peak) peak = cur;
    /* The entry's result is the caller's: its leaves that are parameters or constants are
     * copies (a model that returns its weights returns them anew). */
    if (!s && depth == 0 && r >= 0) {
        size_t *rsz = cxla_arena_alloc_array(a, (size_t)count[r] + 1, sizeof(size_t));
        int64_t k = 0;
        if (!rsz || leaf_count(&comp->root->shape) != count[r]) {
            s = rsz ? NULL : OOM();
        } else {
            leaf_sizes(&comp->root->shape, rsz, &k);
            size_t copies = 0;
            for (int64_t l = 0; l < count[r]; l++)
                if (buf[find(buf, leaves[first[r] + l])].size == 0) copies += rsz[l];
            peak += copies;
            final += copies;
        }
    }
    if (!s) {
        *out_peak = peak;
        *out_final = final;
    }
    cxla_arena_destroy(a);
    return s;
}

cxla_status interp_live_bound(const cxla_module *m, interp_memory_bound *out) {
    *out = (interp_memory_bound){0};
    if (!m->entry) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "the module has no entry");
    for (int64_t p = 0; p < m->entry->param_count; p++)
        out->params += interp_shape_bytes(&m->entry->params[p]->shape);
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++)
            if (m->comps[c]->instrs[i]->opcode == CXLA_OP_CONSTANT)
                out->constants += interp_shape_bytes(&m->comps[c]->instrs[i]->shape);
    bound_state bs = {0};
    size_t final = 0;
    cxla_status s = measure(&bs, m->entry, 0, &out->live, &final);
    free(bs.memo);
    return s;
}
