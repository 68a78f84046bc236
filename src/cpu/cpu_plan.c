/* The cpu backend's arena plan: an entry computation made only of kernels and library
 * calls (and the parameters, constants, tuples and get-tuple-elements that feed them) runs
 * as a fixed sequence of steps over one preallocated arena, without the interpreter's
 * driver. A step is a kernel or a library call (cpu_call: a function with state, which
 * may fail); both read and write the same dense row-major buffers.
 *
 * Buffer assignment: every array an instruction produces is a "leaf"; a tuple is a list
 * of leaves and get-tuple-element picks one, so neither copies. Parameters are read where
 * the caller's arguments lie (relaid to row-major first only when they are not), constants
 * where the module keeps them, and the leaves of the root are written by their kernels
 * straight into the result literals. The other leaves live in the arena at offsets chosen
 * over the schedule (the computation's post-order): a leaf takes the first free range
 * that fits when its kernel runs and gives it back after its last use, so dead buffers
 * are reused; a kernel's results never share memory with its operands, since they are
 * placed before its operands' ranges are freed. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "literal/literal_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

enum { ALIGN = 64 };

typedef enum leaf_kind { LEAF_ARG, LEAF_ARG_ELEMENT, LEAF_CONST, LEAF_ARENA } leaf_kind;

typedef struct leaf {
    leaf_kind kind;
    int64_t param, element;  /* LEAF_ARG, LEAF_ARG_ELEMENT */
    const void *data;        /* LEAF_CONST */
    size_t offset, size;     /* LEAF_ARENA */
    int64_t result;          /* >= 0: written straight into result |result| */
    const cxla_shape *shape; /* the array's shape (row-major) */
} leaf;

typedef struct step {
    cpu_kernel_fn fn;     /* a kernel, or */
    cpu_kernel_info info; /* how the thread pool may split it */
    const cpu_call *call; /* a library call */
    const cxla_instr *instr;
    int64_t in_count, out_count;
    int64_t *in, *out; /* leaf indices */
} step;

struct cpu_plan {
    const cxla_module *module;
    cpu_pool *pool; /* the executable's (not owned); NULL: the calling thread only */
    leaf *leaves;
    int64_t leaf_count;
    step *steps;
    int64_t step_count;
    int64_t *root; /* the root's leaves */
    int64_t root_count;
    bool root_is_tuple;
    size_t arena_size;
    _Atomic(void *) spare; /* an arena kept from the last run, for the next */
    int64_t max_operands;
    cxla_literal **constants; /* relaid constants (owned) */
    int64_t constant_count;
};

/* ---- building ----------------------------------------------------------------------------- */

typedef struct builder {
    cpu_plan *p;
    int64_t leaf_cap, step_cap;
    int64_t **leaves_of; /* by instruction position: its leaves */
    int64_t *leaf_counts;
} builder;

static int64_t add_leaf(builder *b, leaf l) {
    if (b->p->leaf_count == b->leaf_cap) {
        int64_t cap = b->leaf_cap ? 2 * b->leaf_cap : 64;
        leaf *n = realloc(b->p->leaves, (size_t)cap * sizeof(*n));
        if (!n) return -1;
        b->p->leaves = n;
        b->leaf_cap = cap;
    }
    l.result = -1;
    b->p->leaves[b->p->leaf_count] = l;
    return b->p->leaf_count++;
}

static bool is_plain_array(const cxla_shape *s) {
    return cxla_type_is_array(s->type) && cxla_shape_is_static(s);
}

void cpu_plan_destroy(cpu_plan *p) {
    if (!p) return;
    for (int64_t s = 0; s < p->step_count; s++) {
        free(p->steps[s].in);
        free(p->steps[s].out);
    }
    free(p->steps);
    free(p->leaves);
    free(p->root);
    for (int64_t c = 0; c < p->constant_count; c++) cxla_literal_free(p->constants[c]);
    free(p->constants);
    free(atomic_load(&p->spare));
    free(p);
}

/* First fit in a free list of ranges sorted by offset, growing the arena at its end. */
typedef struct range {
    size_t offset, size;
} range;

typedef struct free_list {
    range *r;
    int64_t count, cap;
    size_t end;
} free_list;

static bool take_range(free_list *f, size_t size, size_t *out) {
    size = (size + ALIGN - 1) / ALIGN * ALIGN;
    if (size == 0) size = ALIGN;
    for (int64_t i = 0; i < f->count; i++) {
        if (f->r[i].size < size) continue;
        *out = f->r[i].offset;
        f->r[i].offset += size;
        f->r[i].size -= size;
        if (f->r[i].size == 0) {
            memmove(&f->r[i], &f->r[i + 1], (size_t)(f->count - i - 1) * sizeof(range));
            f->count--;
        }
        return true;
    }
    /* A free range that ends the arena grows instead of leaving a hole. */
    if (f->count > 0 && f->r[f->count - 1].offset + f->r[f->count - 1].size == f->end) {
        *out = f->r[f->count - 1].offset;
        f->end = *out + size;
        f->count--;
        return true;
    }
    *out = f->end;
    f->end += size;
    return true;
}

static bool give_range(free_list *f, size_t offset, size_t size) {
    size = (size + ALIGN - 1) / ALIGN * ALIGN;
    if (size == 0) size = ALIGN;
    if (f->count == f->cap) {
        int64_t cap = f->cap ? 2 * f->cap : 16;
        range *n = realloc(f->r, (size_t)cap * sizeof(*n));
        if (!n) return false;
        f->r = n;
        f->cap = cap;
    }
    int64_t i = 0;
    while (i < f->count && f->r[i].offset < offset) i++;
    memmove(&f->r[i + 1], &f->r[i], (size_t)(f->count - i) * sizeof(range));
    f->r[i] = (range){offset, size};
    f->count++;
    /* Merge with the neighbours. */
    if (i + 1 < f->count && f->r[i].offset + f->r[i].size == f->r[i + 1].offset) {
        f->r[i].size += f->r[i + 1].size;
        memmove(&f->r[i + 1], &f->r[i + 2], (size_t)(f->count - i - 2) * sizeof(range));
        f->count--;
    }
    if (i > 0 && f->r[i - 1].offset + f->r[i - 1].size == f->r[i].offset) {
        f->r[i - 1].size += f->r[i].size;
        memmove(&f->r[i], &f->r[i + 1], (size_t)(f->count - i - 1) * sizeof(range));
        f->count--;
    }
    return true;
}

cxla_status cpu_arena_assign(cpu_arena_buffer *buffers, int64_t count, int64_t step_count,
                             size_t *out_size) {
    *out_size = 0;
    /* The buffers by first step and by last step (counting sorts, stable). */
    int64_t *by_first = malloc((size_t)(count ? count : 1) * sizeof(int64_t));
    int64_t *by_last = malloc((size_t)(count ? count : 1) * sizeof(int64_t));
    int64_t *start = calloc((size_t)step_count + 2, sizeof(int64_t));
    int64_t *start2 = calloc((size_t)step_count + 2, sizeof(int64_t));
    cxla_status st = (!by_first || !by_last || !start || !start2) ? OOM() : NULL;
    for (int64_t b = 0; b < count && !st; b++)
        if (buffers[b].first < 0 || buffers[b].first >= step_count ||
            buffers[b].last < buffers[b].first || buffers[b].last >= step_count)
            st = cxla_error(CXLA_STATUS_INTERNAL, "buffer %" PRId64 " lives over bad steps", b);
    if (!st) {
        for (int64_t b = 0; b < count; b++) {
            start[buffers[b].first + 1]++;
            start2[buffers[b].last + 1]++;
        }
        for (int64_t s = 0; s < step_count; s++) {
            start[s + 1] += start[s];
            start2[s + 1] += start2[s];
        }
        for (int64_t b = 0; b < count; b++) {
            by_first[start[buffers[b].first]++] = b;
            by_last[start2[buffers[b].last]++] = b;
        }
    }
    free_list f = {0};
    int64_t fi = 0, li = 0;
    for (int64_t s = 0; s < step_count && !st; s++) {
        for (; fi < count && buffers[by_first[fi]].first == s; fi++) {
            cpu_arena_buffer *b = &buffers[by_first[fi]];
            take_range(&f, b->size, &b->offset);
        }
        for (; li < count && buffers[by_last[li]].last == s && !st; li++) {
            cpu_arena_buffer *b = &buffers[by_last[li]];
            if (!give_range(&f, b->offset, b->size)) st = OOM();
        }
    }
    if (!st) *out_size = f.end;
    free(f.r);
    free(by_first);
    free(by_last);
    free(start);
    free(start2);
    return st;
}

/* Places the arena leaves over the schedule (see the top of the file): a leaf lives from
 * the step that computes it to its last reader (or just that step when no one reads it). */
static cxla_status assign_offsets(cpu_plan *p) {
    int64_t n = p->leaf_count;
    int64_t *last_use = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *first = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    cpu_arena_buffer *bufs = calloc((size_t)(n ? n : 1), sizeof(*bufs));
    int64_t *which = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    cxla_status st = (!last_use || !first || !bufs || !which) ? OOM() : NULL;
    for (int64_t l = 0; l < n && !st; l++) last_use[l] = first[l] = -1;
    for (int64_t s = 0; s < p->step_count && !st; s++) {
        for (int64_t k = 0; k < p->steps[s].in_count; k++) last_use[p->steps[s].in[k]] = s;
        for (int64_t k = 0; k < p->steps[s].out_count; k++) first[p->steps[s].out[k]] = s;
    }
    int64_t count = 0;
    for (int64_t l = 0; l < n && !st; l++) {
        const leaf *lf = &p->leaves[l];
        if (lf->kind != LEAF_ARENA || lf->result >= 0 || first[l] < 0) continue;
        which[count] = l;
        bufs[count++] = (cpu_arena_buffer){.size = lf->size,
                                           .first = first[l],
                                           .last = last_use[l] > first[l] ? last_use[l] : first[l]};
    }
    if (!st) st = cpu_arena_assign(bufs, count, p->step_count, &p->arena_size);
    for (int64_t b = 0; b < count && !st; b++) p->leaves[which[b]].offset = bufs[b].offset;
    free(last_use);
    free(first);
    free(bufs);
    free(which);
    return st;
}

cxla_status cpu_plan_build(const cxla_module *m, cpu_kernel_fn const *kernels,
                           const cpu_kernel_info *infos, const cpu_call *calls, int64_t id_count,
                           cpu_pool *pool, cpu_plan **out) {
    *out = NULL;
    const cxla_computation *entry = m->entry;
    if (!entry || !cxla_shape_is_static(&entry->root->shape)) return NULL;
    cxla_instr **order;
    CXLA_RETURN_IF_ERROR(cxla_computation_post_order_in(entry, m->arena, &order));
    /* Only what the plan can run: decided before anything is built. */
    for (int64_t i = 0; i < entry->instr_count; i++) {
        const cxla_instr *in = order[i];
        switch (in->opcode) {
        case CXLA_OP_PARAMETER: {
            const cxla_shape *s = &in->shape;
            if (is_plain_array(s)) break;
            if (s->type != CXLA_TUPLE) return NULL;
            for (int64_t e = 0; e < s->tuple_count; e++)
                if (!is_plain_array(&s->elements[e])) return NULL;
            break;
        }
        case CXLA_OP_CONSTANT:
            if (!is_plain_array(&in->shape) || !in->literal) return NULL;
            break;
        case CXLA_OP_TUPLE:
            for (int64_t k = 0; k < in->operand_count; k++)
                if (!is_plain_array(&in->operands[k]->shape)) return NULL;
            break;
        case CXLA_OP_GET_TUPLE_ELEMENT:
            if (!is_plain_array(&in->shape)) return NULL;
            break;
        default:
            if (in->id < 0 || in->id >= id_count) return NULL;
            if (!kernels[in->id] && !(calls && calls[in->id].fn)) return NULL;
            if (cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_SIDE_EFFECT) return NULL;
        }
    }
    cpu_plan *p = calloc(1, sizeof(*p));
    builder b = {.p = p};
    int64_t n = entry->instr_count;
    if (p) {
        p->module = m;
        p->pool = pool;
        b.leaves_of = calloc((size_t)(n ? n : 1), sizeof(*b.leaves_of));
        b.leaf_counts = calloc((size_t)(n ? n : 1), sizeof(*b.leaf_counts));
        p->steps = calloc((size_t)(n ? n : 1), sizeof(*p->steps));
        p->constants = calloc((size_t)(n ? n : 1), sizeof(*p->constants));
    }
    cxla_status s =
        (!p || !b.leaves_of || !b.leaf_counts || !p->steps || !p->constants) ? OOM() : NULL;
    cxla_strmap pos;
    cxla_strmap_init(&pos, m->arena);
    for (int64_t i = 0; i < n && !s; i++)
        if (!cxla_strmap_put(&pos, order[i]->name, strlen(order[i]->name),
                             (void *)(intptr_t)(i + 1)))
            s = OOM();
#define POS(instr)                                                                                 \
    ((int64_t)(intptr_t)cxla_strmap_get(&pos, (instr)->name, strlen((instr)->name)) - 1)
    for (int64_t i = 0; i < n && !s; i++) {
        const cxla_instr *in = order[i];
        int64_t count = in->shape.type == CXLA_TUPLE ? in->shape.tuple_count : 1;
        int64_t *ls = calloc((size_t)(count ? count : 1), sizeof(int64_t));
        if (!ls) {
            s = OOM();
            break;
        }
        b.leaves_of[i] = ls;
        b.leaf_counts[i] = count;
        switch (in->opcode) {
        case CXLA_OP_PARAMETER:
            if (in->shape.type != CXLA_TUPLE) {
                ls[0] = add_leaf(
                    &b,
                    (leaf){.kind = LEAF_ARG, .param = in->parameter_number, .shape = &in->shape});
            } else {
                for (int64_t e = 0; e < count; e++)
                    ls[e] = add_leaf(&b, (leaf){.kind = LEAF_ARG_ELEMENT,
                                                .param = in->parameter_number,
                                                .element = e,
                                                .shape = &in->shape.elements[e]});
            }
            break;
        case CXLA_OP_CONSTANT: {
            const cxla_literal *lit = in->literal;
            if (!cxla_layout_is_default(lit->shape)) {
                cxla_literal *r = NULL;
                s = cxla_literal_relayout(lit, NULL, &r);
                if (s) break;
                p->constants[p->constant_count++] = r;
                lit = r;
            }
            ls[0] =
                add_leaf(&b, (leaf){.kind = LEAF_CONST, .data = lit->data, .shape = &in->shape});
            break;
        }
        case CXLA_OP_TUPLE:
            for (int64_t k = 0; k < count; k++) ls[k] = b.leaves_of[POS(in->operands[k])][0];
            break;
        case CXLA_OP_GET_TUPLE_ELEMENT: {
            int64_t index = 0, from = POS(in->operands[0]);
            cxla_instr_int(in, CXLA_ATTR_INDEX, &index);
            if (from < 0 || index < 0 || index >= b.leaf_counts[from]) {
                s = cxla_error(CXLA_STATUS_INTERNAL, "%s: bad tuple index", in->name);
                break;
            }
            ls[0] = b.leaves_of[from][index];
            break;
        }
        default: {
            step *sp = &p->steps[p->step_count++];
            sp->fn = kernels[in->id];
            sp->info = infos[in->id];
            sp->call = sp->fn ? NULL : &calls[in->id];
            sp->instr = in;
            sp->in_count = in->operand_count;
            /* A kernel's work memory (cpu_kernel_info.scratch): one more arena leaf after its
             * results, live only during the step. */
            size_t scratch = sp->fn ? sp->info.scratch : 0;
            sp->out_count = count + (scratch ? 1 : 0);
            sp->in = calloc((size_t)(sp->in_count ? sp->in_count : 1), sizeof(int64_t));
            sp->out = calloc((size_t)sp->out_count, sizeof(int64_t));
            if (!sp->in || !sp->out) {
                s = OOM();
                break;
            }
            if (sp->in_count > p->max_operands) p->max_operands = sp->in_count;
            for (int64_t k = 0; k < sp->in_count; k++)
                sp->in[k] = b.leaves_of[POS(in->operands[k])][0];
            for (int64_t e = 0; e < count && !s; e++) {
                const cxla_shape *es =
                    in->shape.type == CXLA_TUPLE ? &in->shape.elements[e] : &in->shape;
                size_t size = 0;
                s = cxla_shape_byte_size(es, &size);
                ls[e] = sp->out[e] =
                    add_leaf(&b, (leaf){.kind = LEAF_ARENA, .size = size, .shape = es});
            }
            if (scratch && !s) {
                sp->out[count] = add_leaf(&b, (leaf){.kind = LEAF_ARENA, .size = scratch});
                if (sp->out[count] < 0) s = OOM();
            }
        }
        }
        for (int64_t k = 0; k < count && !s; k++)
            if (ls[k] < 0) s = OOM();
    }
    if (!s) {
        int64_t r = POS(entry->root);
        p->root_is_tuple = entry->root->shape.type == CXLA_TUPLE;
        p->root_count = b.leaf_counts[r];
        p->root = calloc((size_t)(p->root_count ? p->root_count : 1), sizeof(int64_t));
        if (!p->root) s = OOM();
        for (int64_t k = 0; k < p->root_count && !s; k++) {
            int64_t li = b.leaves_of[r][k];
            p->root[k] = li;
            /* The first time the root names an arena leaf, its kernel writes the result. */
            if (p->leaves[li].kind == LEAF_ARENA && p->leaves[li].result < 0)
                p->leaves[li].result = k;
        }
    }
#undef POS
    if (!s) s = assign_offsets(p);
    for (int64_t i = 0; b.leaves_of && i < n; i++) free(b.leaves_of[i]);
    free(b.leaves_of);
    free(b.leaf_counts);
    if (s) {
        cpu_plan_destroy(p);
        return s;
    }
    *out = p;
    return NULL;
}

/* ---- running ------------------------------------------------------------------------------ */

static const void *leaf_data(const cpu_plan *p, const leaf *l, const cxla_literal *const *args,
                             char *arena, cxla_literal **results) {
    switch (l->kind) {
    case LEAF_ARG: return args[l->param]->data;
    case LEAF_ARG_ELEMENT: return args[l->param]->elements[l->element]->data;
    case LEAF_CONST: return l->data;
    case LEAF_ARENA: return l->result >= 0 ? results[l->result]->data : arena + l->offset;
    }
    (void)p;
    return NULL;
}

cxla_status cpu_plan_run(cpu_plan *p, const exec_run_options *options,
                         const cxla_literal *const *args, int64_t arg_count,
                         cxla_literal **out_result) {
    exec_cancel *cancel = options ? options->cancel : NULL;
    const cxla_computation *entry = p->module->entry;
    cxla_status s = NULL;
    /* Arguments: checked as the interpreter checks them, relaid when not row-major. */
    cxla_literal **owned = calloc((size_t)(arg_count ? arg_count : 1), sizeof(*owned));
    const cxla_literal **use = calloc((size_t)(arg_count ? arg_count : 1), sizeof(*use));
    cxla_literal **results = calloc((size_t)(p->root_count ? p->root_count : 1), sizeof(*results));
    const void **ins = calloc((size_t)(p->max_operands ? p->max_operands : 1), sizeof(*ins));
    void *outs_small[16];
    if (!owned || !use || !results || !ins) s = OOM();
    if (!s && arg_count != entry->param_count)
        s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                       "the entry computation '%s' takes %" PRId64 " arguments, got %" PRId64,
                       entry->name, entry->param_count, arg_count);
    for (int64_t i = 0; i < arg_count && !s; i++) {
        const cxla_shape *want = &entry->params[i]->shape;
        const cxla_shape *got = cxla_literal_shape(args[i]);
        if (!cxla_shape_compatible(want, got)) {
            char *w = cxla_shape_to_string(want, CXLA_SHAPE_PRINT_NO_LAYOUT);
            char *g = cxla_shape_to_string(got, CXLA_SHAPE_PRINT_NO_LAYOUT);
            s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                           "argument %" PRId64 " has shape %s but parameter %" PRId64
                           " of '%s' is %s",
                           i, g ? g : "?", i, entry->name, w ? w : "?");
            free(w);
            free(g);
            break;
        }
        bool relay = cxla_type_is_array(got->type) ? !cxla_layout_is_default(got) : false;
        for (int64_t e = 0; got->type == CXLA_TUPLE && e < args[i]->tuple_count; e++)
            relay = relay || !cxla_layout_is_default(args[i]->elements[e]->shape) ||
                    args[i]->elements[e]->dyn_sizes;
        if (relay) {
            s = interp_default_layout(args[i], &owned[i]);
            use[i] = owned[i];
        } else {
            use[i] = args[i];
        }
    }
    for (int64_t k = 0; k < p->root_count && !s; k++)
        s = interp_new_array(p->leaves[p->root[k]].shape, &results[k]);
    char *arena = NULL;
    if (!s && p->arena_size > 0) {
        arena = atomic_exchange(&p->spare, NULL);
        if (!arena) arena = aligned_alloc(ALIGN, p->arena_size);
        if (!arena) s = OOM();
    }
    for (int64_t i = 0; i < p->step_count && !s; i++) {
        const step *sp = &p->steps[i];
        if (cancel && exec_cancel_poll(cancel)) { /* between kernels (exec.h's contract) */
            char where[256];
            snprintf(where, sizeof(where), "at %s (%s, computation %s, line %" PRId64 ")",
                     sp->instr->name, cxla_opcode_name(sp->instr->opcode), entry->name,
                     sp->instr->line);
            s = exec_cancel_error(cancel, where);
            break;
        }
        for (int64_t k = 0; k < sp->in_count; k++)
            ins[k] = leaf_data(p, &p->leaves[sp->in[k]], use, arena, results);
        void **outs =
            sp->out_count <= 16 ? outs_small : calloc((size_t)sp->out_count, sizeof(void *));
        if (!outs) {
            s = OOM();
            break;
        }
        for (int64_t k = 0; k < sp->out_count; k++)
            outs[k] = (void *)leaf_data(p, &p->leaves[sp->out[k]], use, arena, results);
        if (sp->call)
            s = sp->call->fn(sp->call->state, outs, ins);
        else
            cpu_pool_run_kernel(p->pool, sp->fn, &sp->info, outs, ins);
        if (outs != outs_small) free(outs);
    }
    /* Root leaves no kernel wrote into the results: parameters, constants, repeats. */
    for (int64_t k = 0; k < p->root_count && !s; k++) {
        const leaf *l = &p->leaves[p->root[k]];
        if (l->kind == LEAF_ARENA && l->result == k) continue;
        const void *src = leaf_data(p, l, use, arena, results);
        if (results[k]->size) memcpy(results[k]->data, src, results[k]->size);
    }
    if (arena) {
        void *expected = NULL;
        if (!atomic_compare_exchange_strong(&p->spare, &expected, arena)) free(arena);
    }
    cxla_literal *result = NULL;
    if (!s) {
        if (p->root_is_tuple) {
            s = cxla_literal_create_tuple(results, p->root_count, &result);
            if (!s)
                for (int64_t k = 0; k < p->root_count; k++) results[k] = NULL;
        } else {
            result = results[0];
            results[0] = NULL;
        }
    }
    /* The entry's result layout, when it is not row-major. */
    const cxla_shape *rs = p->module->has_entry_layout ? &p->module->entry_result_shape : NULL;
    if (!s && rs && (rs->type == CXLA_TUPLE || !cxla_layout_is_default(rs))) {
        cxla_literal *relaid = NULL;
        s = interp_relayout(result, rs, &relaid);
        cxla_literal_free(result);
        result = relaid;
    }
    if (!s) *out_result = result;
    for (int64_t k = 0; results && k < p->root_count; k++) cxla_literal_free(results[k]);
    for (int64_t i = 0; owned && i < arg_count; i++) cxla_literal_free(owned[i]);
    free(owned);
    free(use);
    free(results);
    free(ins);
    return s;
}
