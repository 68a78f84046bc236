/* Fused while loops (cpu_loop.h). The step sequence runs a loop of small kernels one step
 * at a time: per step a cancellation check, the operand and result pointers gathered from
 * the classes, the thread pool's cost model, a timer when profiling; for the loops of
 * in_place_dynamic_update_slice_fusion (about 200 kernels of a few elements per
 * iteration of its outer loop) that bookkeeping is most of the time. A fused loop is the
 * same steps as a flat program: each operation names its operands and results as
 * positions ("slots") in one table of pointers filled once when the loop starts, so an
 * iteration is the kernel calls and copies alone, and the back-edge checks cancellation.
 *
 * Program layout: ops[0] is the loop itself (O_WHILE); a while op at index i has its
 * condition's ops at [i + 1, cond_end) and its body's at [cond_end, body_end), and the
 * next op after it is at body_end. Calls (S_SEQ) are inlined: their steps are the caller's.
 * A conditional op (O_COND) of n branches has branch b's ops at [marks[size + b],
 * marks[size + b + 1]); the next op is at marks[size + n].
 *
 * What fuses: kernels of static shapes (bounds kind B_STATIC), copies, in-place
 * dynamic-update-slices, calls, conditionals (pred or integer index) and while loops
 * whose own steps fuse. Library calls, handlers, services (collectives, host transfers,
 * custom calls, rng) and dynamic sizes keep the steps (the loop runs step by step, its fusable
 * inner loops fused on their own).
 *
 * Generated C (cpu_plan_emit_loops): each program becomes one C function in a translation
 * unit compiled with the kernels' units into one library. Its buffers in the arena are
 * written as the arena's base plus constant offsets and its small constants as arrays, so
 * that the C compiler tells the operands apart and keeps values in registers across the
 * inlined kernels (as the ahead-of-time library does with its scratch offsets); that and
 * checking cancellation once per a few MiB-equivalents of work made the JIT's fused loops
 * as fast as the library's (docs/performance.md, h-loopjit). The kernels a program calls
 * are written into the unit again, to be inlined; one that no step outside the generated
 * programs calls also gets its entry point there (for the steps run one by one:
 * --check-finite, CXLA_LOOP_STEPS), and cpu_backend.c leaves it out of its own units, so
 * that each kernel is compiled once (in_place_dynamic_update_slice_fusion: one unit
 * instead of two, 14% less CPU time for its cold compile). */
#include "cpu/cpu_loop.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/compiler.h"
#include "cpu/cpu_service.h"
#include "cpu/emit.h"
#include "cpu/threadpool.h"
#include "literal/literal_internal.h"

typedef struct where where; /* where a slot lies for the generated code (slot_where) */

typedef enum lop_kind { O_KERNEL, O_POOLED, O_COPY, O_DUS, O_WHILE, O_COND } lop_kind;

typedef struct lop {
    lop_kind kind;
    const step *sp; /* the step it runs (names, kernel info, dynamic-update-slice shapes) */
    cpu_kernel_fn fn;
    int64_t range;
    int64_t in, out; /* first slot of the operands, of the results (O_COPY: sources, targets) */
    int64_t n;       /* O_COPY: pairs, their byte counts from sizes[size] on; O_COND: branches */
    int64_t size;
    int64_t pred;               /* O_WHILE: the slot of the condition's result */
    int64_t cond_end, body_end; /* O_WHILE: see the layout above */
    /* O_COPY of a while body's new state leaves that may swap buffers with the state
     * (step.swap): run_ops swaps them, and the while op at |owner| puts the state back in
     * its own buffers when the loop ends (double buffering). */
    bool swap;
    int64_t owner;
} lop;

/* The generated form of a program (cpu_plan_emit_loops): see emit_fn for its contract. */
typedef long long (*loop_fn)(void *const *tab, int (*check)(void *), void *ctx,
                             void (*dus)(const void *, void *, const void *const *),
                             const void *const *steps);

struct cpu_loop {
    loop_fn gen;        /* NULL: the ops below run it */
    int64_t fixed[2];   /* its generated code's slots in the arena, constants (emit_fn) */
    const where *wh;    /* while emit_fn runs: where each slot lies (NULL: unknown) */
    const void **steps; /* by op: its step (the generated code's dynamic-update-slices) */
    lop *ops;
    int64_t count, cap;
    int64_t *slots; /* the class of each slot */
    int64_t nslots, scap;
    size_t *sizes; /* O_COPY's byte counts */
    int64_t nsizes, zcap;
    int64_t *marks; /* O_COND's branch boundaries */
    int64_t nmarks, mcap;
    int64_t cur_while; /* while building: the innermost while op being emitted */
};

bool cpu_loop_kernel_direct(const cpu_kernel_info *info) {
    /* 4096 threads: the most a pool has (cpu_pool_threads); one part there is one part
     * on any pool. */
    return cpu_pool_parts(info->cost, info->range, 4096) <= 1 &&
           cpu_pool_chunks(info->cost, info->range) <= 1;
}

void cpu_loop_free(cpu_loop *l) {
    if (!l) return;
    free(l->ops);
    free(l->steps);
    free(l->slots);
    free(l->sizes);
    free(l->marks);
    free(l);
}

/* ---- building -------------------------------------------------------------------------- */

static bool fusable_seq(const seq *q, int depth);
static const char *index_ctype(cxla_type t);

static bool fusable_step(const step *sp, int depth) {
    switch (sp->kind) {
    case S_KERNEL: /* a ragged-dot checks its group sizes before its kernel runs */
        return sp->bounds == B_STATIC && sp->fn && sp->instr->opcode != CXLA_OP_RAGGED_DOT;
    case S_COPY:
    case S_DUS: return true;
    case S_SEQ: return sp->sub_count == 1 && fusable_seq(&sp->sub[0], depth + 1);
    case S_WHILE:
        return sp->sub_count == 2 && fusable_seq(&sp->sub[0], depth + 1) &&
               fusable_seq(&sp->sub[1], depth + 1);
    case S_COND: {
        /* The branch index is read by the program itself: pred or a plain integer. */
        const cxla_shape *is = sp->in_count == 1 ? &sp->instr->operands[0]->shape : NULL;
        if (!is || sp->sub_count < 1 || (is->type != CXLA_PRED && !index_ctype(is->type)))
            return false;
        for (int64_t b = 0; b < sp->sub_count; b++)
            if (!fusable_seq(&sp->sub[b], depth + 1)) return false;
        return true;
    }
    default: return false;
    }
}

static bool fusable_seq(const seq *q, int depth) {
    if (depth > MAX_DEPTH) return false;
    for (int64_t i = 0; i < q->count; i++)
        if (!fusable_step(&q->steps[i], depth)) return false;
    return true;
}

/* Appends an op (zeroed but for kind and step); its index, or -1 when memory is short. */
static int64_t add_op(cpu_loop *l, lop_kind kind, const step *sp) {
    if (l->count == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 32;
        lop *n = realloc(l->ops, (size_t)cap * sizeof(*n));
        if (!n) return -1;
        l->ops = n;
        l->cap = cap;
    }
    l->ops[l->count] = (lop){.kind = kind, .sp = sp};
    return l->count++;
}

/* Appends slots for classes ids[0 .. n); the first one's index, or -1. */
static int64_t add_slots(cpu_loop *l, const int64_t *ids, int64_t n) {
    if (l->nslots + n > l->scap) {
        int64_t cap = l->scap ? 2 * l->scap : 64;
        while (cap < l->nslots + n) cap *= 2;
        int64_t *s = realloc(l->slots, (size_t)cap * sizeof(*s));
        if (!s) return -1;
        l->slots = s;
        l->scap = cap;
    }
    int64_t at = l->nslots;
    if (n > 0) memcpy(l->slots + at, ids, (size_t)n * sizeof(*ids));
    l->nslots += n;
    return at;
}

static int64_t add_sizes(cpu_loop *l, const cpu_plan *p, const int64_t *ids, int64_t n) {
    if (l->nsizes + n > l->zcap) {
        int64_t cap = l->zcap ? 2 * l->zcap : 16;
        while (cap < l->nsizes + n) cap *= 2;
        size_t *z = realloc(l->sizes, (size_t)cap * sizeof(*z));
        if (!z) return -1;
        l->sizes = z;
        l->zcap = cap;
    }
    int64_t at = l->nsizes;
    for (int64_t k = 0; k < n; k++) l->sizes[at + k] = p->values[ids[k]].size;
    l->nsizes += n;
    return at;
}

static bool emit_seq(cpu_loop *l, cpu_plan *p, const seq *q);

/* Whether class |c| is a buffer that no other class lies in and that lies in no other (not
 * a piece of a concatenate's, nor with pieces): its pointer may be swapped with another's. */
static bool whole_buffer(const cpu_plan *p, int64_t c) {
    if (p->values[c].sub_of >= 0) return false;
    for (int64_t v = 0; v < p->value_count; v++)
        if (p->values[v].parent == v && p->values[v].sub_of == c) return false;
    return true;
}

static bool emit_cond(cpu_loop *l, cpu_plan *p, const step *sp) {
    int64_t c = add_op(l, O_COND, sp);
    int64_t in = c < 0 ? -1 : add_slots(l, sp->in, 1);
    if (in < 0) return false;
    int64_t n = sp->sub_count;
    if (l->nmarks + n + 1 > l->mcap) {
        int64_t cap = l->mcap ? 2 * l->mcap : 16;
        while (cap < l->nmarks + n + 1) cap *= 2;
        int64_t *m = realloc(l->marks, (size_t)cap * sizeof(*m));
        if (!m) return false;
        l->marks = m;
        l->mcap = cap;
    }
    int64_t at = l->nmarks;
    l->nmarks += n + 1;
    l->ops[c].in = in;
    l->ops[c].n = n;
    l->ops[c].size = at;
    for (int64_t b = 0; b < n; b++) {
        l->marks[at + b] = l->count;
        if (!emit_seq(l, p, &sp->sub[b])) return false;
    }
    l->marks[at + n] = l->count;
    return true;
}

static bool emit_while(cpu_loop *l, cpu_plan *p, const step *sp) {
    int64_t w = add_op(l, O_WHILE, sp);
    if (w < 0) return false;
    int64_t pred = add_slots(l, &sp->pred, 1);
    int64_t outer = l->cur_while;
    l->cur_while = w;
    if (pred < 0 || !emit_seq(l, p, &sp->sub[0])) return false;
    l->ops[w].pred = pred;
    l->ops[w].cond_end = l->count;
    if (!emit_seq(l, p, &sp->sub[1])) return false;
    l->ops[w].body_end = l->count;
    l->cur_while = outer;
    p->stats.fused_loops++;
    return true;
}

static bool emit_seq(cpu_loop *l, cpu_plan *p, const seq *q) {
    for (int64_t i = 0; i < q->count; i++) {
        const step *sp = &q->steps[i];
        if (sp->kind == S_WHILE) {
            if (!emit_while(l, p, sp)) return false;
            continue;
        }
        if (sp->kind == S_SEQ) {
            if (!emit_seq(l, p, &sp->sub[0])) return false;
            continue;
        }
        if (sp->kind == S_COND) {
            if (!emit_cond(l, p, sp)) return false;
            continue;
        }
        lop_kind kind = sp->kind == S_COPY  ? O_COPY
                        : sp->kind == S_DUS ? O_DUS
                        : sp->direct        ? O_KERNEL
                                            : O_POOLED;
        int64_t o = add_op(l, kind, sp);
        if (o < 0) return false;
        int64_t in = add_slots(l, sp->in, sp->in_count);
        int64_t out = in < 0 ? -1 : add_slots(l, sp->out, sp->out_count);
        if (out < 0) return false;
        lop *op = &l->ops[o];
        op->in = in;
        op->out = out;
        op->fn = sp->fn;
        op->range = sp->info.range;
        if (kind == O_COPY) {
            op->n = sp->in_count;
            op->size = add_sizes(l, p, sp->out, sp->in_count);
            if (op->size < 0) return false;
            op = &l->ops[o];
            op->owner = l->cur_while;
            op->swap = sp->swap && l->cur_while >= 0;
            for (int64_t k = 0; k < sp->in_count && op->swap; k++)
                op->swap = whole_buffer(p, sp->in[k]) && whole_buffer(p, sp->out[k]);
            if (op->swap) p->stats.loop_swapped += op->n;
        }
    }
    return true;
}

/* Marks the small kernels of |q| and below (step.direct). */
static void mark_direct(seq *q, int depth) {
    for (int64_t i = 0; depth <= MAX_DEPTH && i < q->count; i++) {
        step *sp = &q->steps[i];
        if (sp->kind == S_KERNEL)
            sp->direct = sp->bounds == B_STATIC && sp->fn && cpu_loop_kernel_direct(&sp->info);
        for (int64_t k = 0; k < sp->sub_count; k++) mark_direct(&sp->sub[k], depth + 1);
    }
}

/* Fuses the outermost fusable loops of |q| and below: a fused loop's program holds the
 * loops nested in it, which keep no program of their own. */
static cxla_status fuse_seq(cpu_plan *p, seq *q, int depth) {
    for (int64_t i = 0; depth <= MAX_DEPTH && i < q->count; i++) {
        step *sp = &q->steps[i];
        if (sp->kind == S_WHILE && fusable_step(sp, depth)) {
            cpu_loop *l = calloc(1, sizeof(*l));
            if (l) l->cur_while = -1;
            if (!l || !emit_while(l, p, sp)) {
                cpu_loop_free(l);
                return CPU_STEPS_OOM();
            }
            sp->fused = l;
            continue;
        }
        for (int64_t k = 0; k < sp->sub_count; k++)
            CXLA_RETURN_IF_ERROR(fuse_seq(p, &sp->sub[k], depth + 1));
    }
    return NULL;
}

cxla_status cpu_loop_fuse(cpu_plan *p) {
    mark_direct(&p->entry, 0);
    if (p->dyn_off) return NULL; /* sizes per class: the steps keep them */
    return fuse_seq(p, &p->entry, 0);
}

/* ---- running --------------------------------------------------------------------------- */

static const step *run_while(const cpu_loop *l, int64_t w, void **tab, const cpu_loop_env *env);

/* A copy of loop state of at least POOL_COPY bytes (the carried array of a loop whose body
 * rewrites it: reduce_loop_1m_carry of bench/lowp_programs.py copies 4 MiB per step) is
 * split over the pool in blocks of COPY_BLOCK bytes, as the kernels around it are: one
 * thread's memcpy took as long as the step's kernels on two (docs/performance.md, "Long
 * programs"). */
enum { POOL_COPY = 1 << 20, COPY_BLOCK = 64 * 1024 };

typedef struct copy_job {
    unsigned char *dst;
    const unsigned char *src;
    size_t size;
} copy_job;

/* Blocks [begin, end) of a copy (a cpu_kernel_fn over in[0] = the copy_job). */
static void copy_blocks(void *const *out, const void *const *in, int64_t begin, int64_t end) {
    (void)out;
    const copy_job *j = in[0];
    size_t a = (size_t)begin * COPY_BLOCK, b = (size_t)end * COPY_BLOCK;
    if (b > j->size) b = j->size;
    if (a < b) memcpy(j->dst + a, j->src + a, b - a);
}

static void copy_state(cpu_pool *pool, void *dst, const void *src, size_t size) {
    if (size < POOL_COPY || !pool) {
        memcpy(dst, src, size);
        return;
    }
    copy_job job = {dst, src, size};
    const void *in[1] = {&job};
    cpu_kernel_info info = {.range = (int64_t)((size + COPY_BLOCK - 1) / COPY_BLOCK),
                            .cost = 2.0 * (double)size};
    cpu_pool_run_kernel(pool, copy_blocks, &info, NULL, in, NULL);
}

/* The swap pairs of |o| (lop.swap): each new state leaf's buffer becomes the state's and
 * the state's becomes the body's, in every slot of either class. */
static void swap_state(const cpu_loop *l, const lop *o, void **tab) {
    for (int64_t k = 0; k < o->n; k++) {
        int64_t cw = l->slots[o->out + k], cr = l->slots[o->in + k];
        void *pw = tab[o->out + k], *pr = tab[o->in + k];
        for (int64_t s = 0; s < l->nslots; s++) {
            if (l->slots[s] == cw)
                tab[s] = pr;
            else if (l->slots[s] == cr)
                tab[s] = pw;
        }
    }
}

/* The end of while op |w|: the state that a swap left in the body's buffer is copied into
 * the state's own (what the steps after the loop read), and every slot points where it did
 * when the program started. */
static void unswap_state(const cpu_loop *l, int64_t w, void **tab, const cpu_loop_env *env) {
    const lop *wo = &l->ops[w];
    for (int64_t i = wo->cond_end; i < wo->body_end; i++) {
        const lop *o = &l->ops[i];
        if (o->kind != O_COPY || !o->swap || o->owner != w) continue;
        for (int64_t k = 0; k < o->n; k++) {
            int64_t cw = l->slots[o->out + k], cr = l->slots[o->in + k];
            void *orig = env->ptr[cw], *cur = tab[o->out + k];
            if (cur == orig) continue;
            copy_state(env->pool, orig, cur, l->sizes[o->size + k]);
            for (int64_t s = 0; s < l->nslots; s++) {
                if (l->slots[s] == cw)
                    tab[s] = orig;
                else if (l->slots[s] == cr)
                    tab[s] = env->ptr[cr];
            }
        }
    }
}

static const step *run_ops(const cpu_loop *l, int64_t a, int64_t b, void **tab,
                           const cpu_loop_env *env) {
    for (int64_t i = a; i < b;) {
        const lop *o = &l->ops[i];
        switch (o->kind) {
        case O_KERNEL: o->fn(tab + o->out, (const void *const *)(tab + o->in), 0, o->range); break;
        case O_POOLED:
            if (!cpu_pool_run_kernel(env->pool, o->fn, &o->sp->info, tab + o->out,
                                     (const void *const *)(tab + o->in), env->cancel))
                return o->sp; /* stopped between two chunks of the kernel */
            break;
        case O_COPY:
            if (o->swap) {
                swap_state(l, o, tab);
                break;
            }
            for (int64_t k = 0; k < o->n; k++) {
                size_t size = l->sizes[o->size + k];
                void *dst = tab[o->out + k];
                const void *src = tab[o->in + k];
                if (size && dst != src) copy_state(env->pool, dst, src, size);
            }
            break;
        case O_DUS: cpu_steps_dus(o->sp, tab[o->out], (const void *const *)(tab + o->in)); break;
        case O_WHILE: {
            const step *at = run_while(l, i, tab, env);
            if (at) return at;
            i = o->body_end;
            continue;
        }
        case O_COND: { /* the step sequence's rule: out of range takes the last branch */
            const cxla_shape *is = &o->sp->instr->operands[0]->shape;
            int64_t br = is->type == CXLA_PRED ? (*(const uint8_t *)tab[o->in] ? 0 : 1)
                                               : cxla_load_s64(is->type, tab[o->in]);
            if (br < 0 || br >= o->n) br = o->n - 1;
            const int64_t *m = l->marks + o->size;
            const step *at = run_ops(l, m[br], m[br + 1], tab, env);
            if (at) return at;
            i = m[o->n];
            continue;
        }
        }
        i++;
    }
    return NULL;
}

static const step *run_while(const cpu_loop *l, int64_t w, void **tab, const cpu_loop_env *env) {
    const lop *o = &l->ops[w];
    for (;;) {
        const step *at = run_ops(l, w + 1, o->cond_end, tab, env);
        if (at) return at;
        if (!*(const uint8_t *)tab[o->pred]) {
            unswap_state(l, w, tab, env);
            return NULL;
        }
        at = run_ops(l, o->cond_end, o->body_end, tab, env);
        if (at) return at;
        if (env->check && env->check(env->ctx)) return o->sp; /* the back-edge */
    }
}

/* The generated code's callbacks: the back-edge check, and dynamic-update-slice. */
static int check_int(void *env) {
    const cpu_loop_env *e = env;
    return e->check(e->ctx) ? 1 : 0;
}

static void dus_cb(const void *sp, void *dst, const void *const *ins) {
    cpu_steps_dus(sp, dst, ins);
}

const step *cpu_loop_run(const cpu_loop *l, const cpu_loop_env *env, bool *out_oom) {
    *out_oom = false;
    enum { SMALL = 256 };
    void *small[SMALL];
    void **tab = l->nslots <= SMALL ? small : malloc((size_t)l->nslots * sizeof(void *));
    if (!tab) {
        *out_oom = true;
        return NULL;
    }
    for (int64_t k = 0; k < l->nslots; k++) tab[k] = env->ptr[l->slots[k]];
    const step *at = NULL;
    if (l->gen) {
        long long w = l->gen(tab, env->check ? check_int : NULL, (void *)env, dus_cb, l->steps);
        at = w >= 0 && w < l->count ? l->ops[w].sp : NULL;
    } else {
        at = run_while(l, 0, tab, env);
    }
    if (tab != small) free(tab);
    return at;
}

/* ---- generated C --------------------------------------------------------------------- */

/* The name of the kernel of |in| that writes its result over operand |k|
 * (cpu_emit_kernel_alias): PREFIX<id>_<k>. */
static void alias_name(const cxla_instr *in, int64_t k, const char *prefix, char *name,
                       size_t size) {
    snprintf(name, size, "%s%" PRId64 "_%" PRId64, prefix, in->id, k);
}

/* The kernels of program |l| as C, those not yet in |out| (done[instruction id]): one
 * static function cxla_lkID per instruction, which the programs of both plans call (a
 * loop's body may be another loop's too: in_place_dynamic_update_slice_fusion runs one body
 * in two loops). Then the program as one C function (emit_fn). */
/* The kernels of |l| not yet in the unit (|done| by instruction id), each as a static
 * inline function cxla_lk<ID>. Those no step outside the unit's loops calls (|outside[id]|
 * false) also get their usual entry point, named by |name_of|, so that the caller leaves
 * them out of its own units and each kernel is compiled once (|exported[id]| set). */
static cxla_status emit_kernels(const cpu_loop *l, bool *done, uint64_t *alias_done,
                                const bool *outside, cpu_kernel_namer name_of, bool *exported,
                                cxla_strbuf *out) {
    for (int64_t i = 0; i < l->count; i++) {
        if (l->ops[i].kind != O_KERNEL) continue;
        const cxla_instr *in = l->ops[i].sp->instr;
        int64_t ak = l->ops[i].sp->alias;
        if (ak >= 0) { /* the state rewritten in place: the kernel's form for it, inline */
            uint64_t bit = (uint64_t)1 << ak;
            if (alias_done[in->id] & bit) continue;
            alias_done[in->id] |= bit;
            char name[64];
            alias_name(in, ak, "cxla_lka", name, sizeof(name));
            cxla_strbuf_printf(out,
                               "\nstatic inline void %s(void *const *out, const void *const *in, "
                               "int64_t begin, int64_t end);\n",
                               name);
            CXLA_RETURN_IF_ERROR(cpu_emit_kernel_alias(in, ak, name, out, NULL));
            continue;
        }
        if (done[in->id]) continue;
        done[in->id] = true;
        char name[64];
        snprintf(name, sizeof(name), "cxla_lk%" PRId64, in->id);
        /* Internal linkage (the emitter's own definition then keeps it): under -fPIC the
         * C compiler does not inline a function another object could interpose. And
         * inline: gcc -O2 leaves a kernel called from two loops out of line without the
         * hint (in_place_dynamic_update_slice_fusion ran 15-25% slower so). */
        cxla_strbuf_printf(out,
                           "\nstatic inline void %s(void *const *out, const void *const *in, "
                           "int64_t begin, int64_t end);\n",
                           name);
        cpu_kernel_info info;
        /* A "TopK" custom call's kernel is the topk operation's (as cpu_backend.c emits it). */
        cxla_attr attrs[2];
        cxla_instr alt;
        const cxla_instr *src = in;
        if (in->opcode == CXLA_OP_CUSTOM_CALL && cpu_svc_topk_instr(in, attrs, &alt)) src = &alt;
        CXLA_RETURN_IF_ERROR(cpu_emit_kernel_info(src, name, out, &info));
        if (!name_of || outside[in->id]) continue;
        /* The steps of the loop, run one by one (--check-finite, CXLA_LOOP_STEPS), call the
         * kernel through this entry: its only out-of-line copy. */
        char entry[64];
        name_of(in, entry, sizeof(entry));
        cxla_strbuf_printf(out,
                           "/* %s out of line, for the loop's steps run one by one. */\n"
                           "void %s(void *const *out, const void *const *in, int64_t begin, "
                           "int64_t end);\n"
                           "void %s(void *const *out, const void *const *in, int64_t begin, "
                           "int64_t end) {\n"
                           "    %s(out, in, begin, end);\n"
                           "}\n",
                           name, entry, entry, name);
        exported[in->id] = true;
    }
    return NULL;
}

static void emit_slots(cxla_strbuf *out, const char *decl, int64_t first, int64_t n) {
    cxla_strbuf_printf(out, "%s[%" PRId64 "] = {", decl, n ? n : 1);
    for (int64_t k = 0; k < n; k++)
        cxla_strbuf_printf(out, "%ss%" PRId64, k ? ", " : "", first + k);
    if (n == 0) cxla_strbuf_puts(out, "0");
    cxla_strbuf_puts(out, "};");
}

/* The C type of an index of |t| (a dynamic-update-slice's start, a conditional's branch
 * index), NULL for the types the generated code does not read itself. */
static const char *index_ctype(cxla_type t) {
    switch (t) {
    case CXLA_S8: return "int8_t";
    case CXLA_S16: return "int16_t";
    case CXLA_S32: return "int32_t";
    case CXLA_S64: return "int64_t";
    case CXLA_U8: return "uint8_t";
    case CXLA_U16: return "uint16_t";
    case CXLA_U32: return "uint32_t";
    case CXLA_U64: return "uint64_t";
    default: return NULL;
    }
}

/* Where slot |k| of |l| lies, as the generated code writes it (slot_where). */
typedef enum where_kind { AT_TAB, AT_ARENA, AT_CONST } where_kind;

struct where {
    where_kind kind;
    size_t off, size; /* AT_ARENA: bytes into the run's arena, and the buffer's size */
    const value *val; /* AT_CONST: the constant */
};

/* Constants of at most this many bytes are written into the generated code. */
enum { CONST_INLINE_MAX = 256 };

/* Whether class |c| is the target of a write in |l| (a kernel's result, a copy's target, a
 * dynamic-update-slice's buffer). */
static bool written(const cpu_loop *l, int64_t c) {
    for (int64_t i = 0; i < l->count; i++) {
        const lop *o = &l->ops[i];
        int64_t n = o->kind == O_KERNEL || o->kind == O_POOLED ? o->sp->out_count
                    : o->kind == O_COPY                        ? o->n
                    : o->kind == O_DUS                         ? 1
                                                               : 0;
        for (int64_t k = 0; k < n; k++)
            if (l->slots[o->out + k] == c) return true;
    }
    return false;
}

/* Slot |k| of |l| in plan |p|: an arena buffer (or a piece of one) that is not a result
 * leaf lies at a fixed offset of the run's arena, and the generated code computes it from
 * the arena's base, so that the C compiler sees which operands are distinct buffers (it
 * then keeps values in registers across the inlined kernels, and decides each copy's
 * "source != target" itself); a small constant that nothing writes is written out, so
 * that it is folded into the kernels. The others (arguments, result leaves, big
 * constants) are read from the table, opaque pointers. */
static where slot_where(const cpu_loop *l, const cpu_plan *p, int64_t k) {
    int64_t c = l->slots[k];
    const value *x = &p->values[c];
    size_t off = 0;
    for (int depth = 0; x->sub_of >= 0 && depth <= MAX_DEPTH; depth++) {
        off += x->sub_off;
        x = &p->values[x->sub_of];
    }
    if (x->sub_of < 0 && x->kind == V_ARENA && x->result < 0 && x->size > 0)
        return (where){.kind = AT_ARENA, .off = x->offset + off, .size = p->values[c].size};
    if (x == &p->values[c] && x->kind == V_CONST && x->data && x->size > 0 &&
        x->size <= CONST_INLINE_MAX && !written(l, c)) {
        size_t es = cxla_type_storage(x->shape->type);
        if ((es == 1 || es == 2 || es == 4 || es == 8) && x->size % es == 0)
            return (where){.kind = AT_CONST, .val = x};
    }
    return (where){.kind = AT_TAB};
}

/* Whether slots |a| and |b| of |l| are known not to overlap (l->wh): buffers of the arena
 * whose ranges are apart, or one in the arena and the other not (arguments, results and
 * constants are never in it). */
static bool apart(const cpu_loop *l, int64_t a, int64_t b) {
    if (!l->wh) return false;
    const where *x = &l->wh[a], *y = &l->wh[b];
    if (x->kind == AT_ARENA && y->kind == AT_ARENA)
        return x->off + x->size <= y->off || y->off + y->size <= x->off;
    return (x->kind == AT_ARENA) != (y->kind == AT_ARENA);
}

/* Rows of at most this many bytes that may overlap are moved through a local copy, which
 * the C compiler keeps in registers, instead of a call of memmove (two of 12 bytes an
 * iteration were most of bench_scan_N2000_M3's loop). */
enum { SMALL_MOVE = 64 };

/* The C that moves |row| bytes from |src| to |dst| (expressions), which may overlap unless
 * |apart_|. */
static void emit_move(cxla_strbuf *out, int indent, const char *dst, const char *src, size_t row,
                      bool apart_) {
    if (apart_)
        cxla_strbuf_printf(out, "%*smemcpy(%s, %s, %zu);\n", indent, "", dst, src, row);
    else if (row <= SMALL_MOVE)
        cxla_strbuf_printf(out,
                           "%*s{ unsigned char t_[%zu]; memcpy(t_, %s, %zu); "
                           "memcpy(%s, t_, %zu); }\n",
                           indent, "", row, src, row, dst, row);
    else
        cxla_strbuf_printf(out, "%*smemmove(%s, %s, %zu);\n", indent, "", dst, src, row);
}

/* dynamic-update-slice op |o| as C with its shapes as constants (cpu_steps_dus's rule:
 * each start clamped into [0, operand - update], a u64 beyond INT64_MAX is huge, rows of
 * the update moved as by memmove); false when an index type is not a plain integer (then
 * the callback runs it). */
static bool emit_dus_c(const cpu_loop *l, const lop *o, int indent, cxla_strbuf *out) {
    const step *sp = o->sp;
    const cxla_instr *in = sp->instr;
    const cxla_shape *os = &in->shape, *us = &in->operands[1]->shape;
    int64_t rank = os->rank, total = 1;
    for (int64_t d = 0; d < rank; d++) {
        if (!index_ctype(in->operands[2 + d]->shape.type)) return false;
        total *= us->dims[d];
    }
    cxla_strbuf_printf(out, "%*s{ /* %s */\n", indent, "", in->name);
    if (total == 0) {
        cxla_strbuf_printf(out, "%*s}\n", indent, "");
        return true;
    }
    int ind = indent + 4;
    cxla_strbuf_printf(out, "%*slong long off = 0, v;\n", ind, "");
    int64_t stride = 1;
    for (int64_t d = rank - 1; d >= 0; d--) {
        cxla_type t = in->operands[2 + d]->shape.type;
        int64_t hi = os->dims[d] - us->dims[d];
        if (t == CXLA_U64)
            cxla_strbuf_printf(out,
                               "%*sv = *(const uint64_t *)s%" PRId64
                               " > (uint64_t)INT64_MAX ? INT64_MAX : (long long)*(const "
                               "uint64_t *)s%" PRId64 ";\n",
                               ind, "", o->in + 2 + d, o->in + 2 + d);
        else
            cxla_strbuf_printf(out, "%*sv = (long long)*(const %s *)s%" PRId64 ";\n", ind, "",
                               index_ctype(t), o->in + 2 + d);
        cxla_strbuf_printf(
            out, "%*soff += (v < 0 ? 0 : v > %" PRId64 "LL ? %" PRId64 "LL : v) * %" PRId64 "LL;\n",
            ind, "", hi, hi, stride);
        stride *= os->dims[d];
    }
    size_t row = (size_t)(rank ? us->dims[rank - 1] : 1) * sp->elem;
    int64_t rows = rank ? total / us->dims[rank - 1] : 1;
    cxla_strbuf_printf(out, "%*schar *d_ = (char *)s%" PRId64 " + (size_t)off * %zu;\n", ind, "",
                       o->out, sp->elem);
    cxla_strbuf_printf(out, "%*sconst char *u_ = (const char *)s%" PRId64 ";\n", ind, "",
                       o->in + 1);
    bool sep = apart(l, o->out, o->in + 1);
    if (rows == 1) {
        emit_move(out, ind, "d_", "u_", row, sep);
    } else {
        /* Row k of the update lands at the offset of its index in the operand. */
        cxla_strbuf_printf(out, "%*sfor (long long k = 0; k < %" PRId64 "LL; k++) {\n", ind, "",
                           rows);
        cxla_strbuf_printf(out, "%*slong long r = k, at = 0;\n", ind + 4, "");
        int64_t ostride = os->dims[rank - 1];
        for (int64_t d = rank - 2; d >= 0; d--) {
            cxla_strbuf_printf(
                out, "%*sat += (r %% %" PRId64 "LL) * %" PRId64 "LL; r /= %" PRId64 "LL;\n",
                ind + 4, "", us->dims[d], ostride, us->dims[d]);
            ostride *= os->dims[d];
        }
        char dst[64], src[64];
        snprintf(dst, sizeof(dst), "d_ + (size_t)at * %zu", sp->elem);
        snprintf(src, sizeof(src), "u_ + (size_t)k * %zu", row);
        emit_move(out, ind + 4, dst, src, row, sep);
        cxla_strbuf_printf(out, "%*s}\n", ind, "");
    }
    cxla_strbuf_printf(out, "%*s}\n", indent, "");
    return true;
}

static void emit_ops(const cpu_loop *l, int64_t a, int64_t b, int indent, cxla_strbuf *out);

/* The generated code checks cancellation once per CHECK_COST byte-equivalents of work
 * (threadpool.h's unit: about 40 us a MiB), counted at the back-edges, rather than at every
 * back-edge: a loop of a few tiny kernels checked at each iteration spent a tenth of its
 * time in the check's calls. Each operation counts OP_COST on top of its own cost (the
 * call, the pointers), so that an iteration is never free. */
#define CHECK_COST (4.0 * 1024 * 1024)
enum { OP_COST = 64 };

/* The work of ops [a, b) of |l| that the back-edge of the loop around them counts: their
 * kernels, copies and dynamic-update-slices, the costliest branch of a conditional, and a
 * nested loop's condition once (its iterations are counted at its own back-edge). */
static double own_cost(const cpu_loop *l, int64_t a, int64_t b) {
    double cost = 0;
    for (int64_t i = a; i < b;) {
        const lop *o = &l->ops[i];
        cost += OP_COST;
        switch (o->kind) {
        case O_KERNEL:
        case O_POOLED: cost += o->sp->info.cost > 0 ? o->sp->info.cost : 0; break;
        case O_COPY:
            for (int64_t k = 0; k < o->n; k++) cost += (double)l->sizes[o->size + k];
            break;
        case O_DUS: {
            const cxla_shape *us = &o->sp->instr->operands[1]->shape;
            double n = 1;
            for (int64_t d = 0; d < us->rank; d++) n *= (double)us->dims[d];
            cost += n * (double)o->sp->elem;
        } break;
        case O_WHILE:
            cost += own_cost(l, i + 1, o->cond_end);
            i = o->body_end;
            continue;
        case O_COND: {
            const int64_t *m = l->marks + o->size;
            double most = 0;
            for (int64_t k = 0; k < o->n; k++) {
                double c = own_cost(l, m[k], m[k + 1]);
                if (c > most) most = c;
            }
            cost += most;
            i = m[o->n];
            continue;
        }
        }
        i++;
    }
    return cost;
}

static void emit_while_c(const cpu_loop *l, int64_t w, int indent, cxla_strbuf *out) {
    const lop *o = &l->ops[w];
    cxla_strbuf_printf(out, "%*sfor (;;) { /* %s */\n", indent, "", o->sp->instr->name);
    emit_ops(l, w + 1, o->cond_end, indent + 4, out);
    cxla_strbuf_printf(out, "%*sif (!*(const unsigned char *)s%" PRId64 ") break;\n", indent + 4,
                       "", o->pred);
    emit_ops(l, o->cond_end, o->body_end, indent + 4, out);
    /* A cost at or above the budget checks at every back-edge. */
    double cost = own_cost(l, w + 1, o->body_end);
    long long spent = cost >= CHECK_COST ? (long long)CHECK_COST : (long long)cost;
    cxla_strbuf_printf(out,
                       "%*sif (check && (budget_ -= %lldLL) < 0) {\n"
                       "%*sbudget_ = %lldLL;\n"
                       "%*sif (check(ctx)) return %" PRId64 ";\n"
                       "%*s}\n",
                       indent + 4, "", spent, indent + 8, "", (long long)CHECK_COST - 1, indent + 8,
                       "", w, indent + 4, "");
    cxla_strbuf_printf(out, "%*s}\n", indent, "");
}

static void emit_ops(const cpu_loop *l, int64_t a, int64_t b, int indent, cxla_strbuf *out) {
    for (int64_t i = a; i < b;) {
        const lop *o = &l->ops[i];
        const step *sp = o->sp;
        switch (o->kind) {
        case O_KERNEL:
            cxla_strbuf_printf(out, "%*s{ /* %s */ ", indent, "", sp->instr->name);
            emit_slots(out, "void *o_", o->out, sp->out_count);
            cxla_strbuf_putc(out, ' ');
            emit_slots(out, "const void *i_", o->in, sp->in_count);
            if (sp->alias >= 0)
                cxla_strbuf_printf(out,
                                   " cxla_lka%" PRId64 "_%" PRId64 "(o_, i_, 0, %" PRId64
                                   "); } /* over its operand %" PRId64 " */\n",
                                   sp->instr->id, sp->alias, o->range, sp->alias);
            else
                cxla_strbuf_printf(out, " cxla_lk%" PRId64 "(o_, i_, 0, %" PRId64 "); }\n",
                                   sp->instr->id, o->range);
            break;
        case O_POOLED: break; /* not generated (generable) */
        case O_COPY:
            for (int64_t k = 0; k < o->n; k++)
                if (l->sizes[o->size + k])
                    cxla_strbuf_printf(out,
                                       "%*sif (s%" PRId64 " != s%" PRId64 ") memcpy(s%" PRId64
                                       ", s%" PRId64 ", %zu);\n",
                                       indent, "", o->out + k, o->in + k, o->out + k, o->in + k,
                                       l->sizes[o->size + k]);
            break;
        case O_DUS:
            if (emit_dus_c(l, o, indent, out)) break;
            cxla_strbuf_printf(out, "%*s{ /* %s */ ", indent, "", sp->instr->name);
            emit_slots(out, "const void *i_", o->in, sp->in_count);
            cxla_strbuf_printf(out, " dus(steps[%" PRId64 "], s%" PRId64 ", i_); }\n", i, o->out);
            break;
        case O_WHILE:
            emit_while_c(l, i, indent, out);
            i = o->body_end;
            continue;
        case O_COND: {
            const cxla_shape *is = &sp->instr->operands[0]->shape;
            const int64_t *m = l->marks + o->size;
            if (is->type == CXLA_PRED)
                cxla_strbuf_printf(out,
                                   "%*s{ /* %s */ long long b_ = *(const unsigned char *)s%" PRId64
                                   " ? 0 : 1;\n",
                                   indent, "", sp->instr->name, o->in);
            else
                cxla_strbuf_printf(
                    out, "%*s{ /* %s */ long long b_ = (long long)*(const %s *)s%" PRId64 ";\n",
                    indent, "", sp->instr->name, index_ctype(is->type), o->in);
            cxla_strbuf_printf(out,
                               "%*sif (b_ < 0 || b_ >= %" PRId64 "LL) b_ = %" PRId64
                               "LL;\n%*sswitch (b_) {\n",
                               indent + 4, "", o->n, o->n - 1, indent + 4, "");
            for (int64_t k = 0; k < o->n; k++) {
                cxla_strbuf_printf(out, "%*scase %" PRId64 ": {\n", indent + 4, "", k);
                emit_ops(l, m[k], m[k + 1], indent + 8, out);
                cxla_strbuf_printf(out, "%*s} break;\n", indent + 4, "");
            }
            cxla_strbuf_printf(out, "%*s}\n%*s}\n", indent + 4, "", indent, "");
            i = m[o->n];
            continue;
        }
        }
        i++;
    }
}

/* Constant |x| as a static array |name| of its element bits. */
static void emit_const(const value *x, const char *name, cxla_strbuf *out) {
    size_t es = cxla_type_storage(x->shape->type), n = x->size / es;
    const char *ut = es == 1 ? "uint8_t" : es == 2 ? "uint16_t" : es == 4 ? "uint32_t" : "uint64_t";
    cxla_strbuf_printf(out, "static const %s %s[%zu] = {", ut, name, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 0;
        const unsigned char *b = (const unsigned char *)x->data + i * es;
        switch (es) {
        case 1: v = b[0]; break;
        case 2: {
            uint16_t t;
            memcpy(&t, b, 2);
            v = t;
        } break;
        case 4: {
            uint32_t t;
            memcpy(&t, b, 4);
            v = t;
        } break;
        default: memcpy(&v, b, 8); break;
        }
        cxla_strbuf_printf(out, "%s0x%" PRIx64 "%s", i ? ", " : "", v, es == 8 ? "ull" : "u");
    }
    cxla_strbuf_puts(out, "};\n");
}

/* Program |l| of plan |p| as the function |fn| (cxla_loop_PLAN_PROG); counts its slots at
 * fixed places in l->fixed (arena buffers, constants). */
static void emit_fn(cpu_loop *l, const cpu_plan *p, const char *fn, cxla_strbuf *out) {
    /* The arena's base, from the first slot that lies in it. */
    int64_t anchor = -1;
    size_t anchor_off = 0;
    char name[96];
    l->fixed[0] = l->fixed[1] = 0;
    where *wh = calloc((size_t)(l->nslots ? l->nslots : 1), sizeof(*wh));
    for (int64_t k = 0; k < l->nslots; k++) {
        where w = slot_where(l, p, k);
        if (wh) wh[k] = w;
        snprintf(name, sizeof(name), "%s_c%" PRId64, fn, k);
        if (w.kind == AT_CONST) emit_const(w.val, name, out);
        if (w.kind != AT_TAB) l->fixed[w.kind == AT_ARENA ? 0 : 1]++;
        if (w.kind == AT_ARENA && anchor < 0) {
            anchor = k;
            anchor_off = w.off;
        }
    }
    cxla_strbuf_printf(out,
                       "\n/* The while loop %s as one function (cxla's fused loops). */\n"
                       "long long %s(void *const *tab, int (*check)(void *), void *ctx,\n"
                       "    void (*dus)(const void *, void *, const void *const *),\n"
                       "    const void *const *steps) {\n"
                       "    (void)check; (void)ctx; (void)dus; (void)steps;\n",
                       l->ops[0].sp->instr->name, fn);
    if (anchor >= 0)
        cxla_strbuf_printf(out, "    char *const a_ = (char *)tab[%" PRId64 "] - %zu;\n", anchor,
                           anchor_off);
    for (int64_t k = 0; k < l->nslots; k++) {
        where w = slot_where(l, p, k);
        if (w.kind == AT_ARENA)
            cxla_strbuf_printf(out, "    void *const s%" PRId64 " = a_ + %zu;\n", k, w.off);
        else if (w.kind == AT_CONST)
            cxla_strbuf_printf(out, "    void *const s%" PRId64 " = (void *)%s_c%" PRId64 ";\n", k,
                               fn, k);
        else
            cxla_strbuf_printf(out, "    void *const s%" PRId64 " = tab[%" PRId64 "];\n", k, k);
    }
    /* Work left before the next cancellation check (emit_while_c); the first back-edge
     * checks, as the step sequence's loops do. */
    cxla_strbuf_puts(out, "    long long budget_ = 0;\n");
    l->wh = wh; /* NULL when memory is short: every move then as if the buffers overlapped */
    emit_while_c(l, 0, 4, out);
    l->wh = NULL;
    free(wh);
    cxla_strbuf_puts(out, "    return -1;\n}\n");
}

/* Whether |l| can be generated: every kernel is called directly (the pooled ones need the
 * run's pool). */
static bool generable(const cpu_loop *l) {
    for (int64_t i = 0; i < l->count; i++)
        if (l->ops[i].kind == O_POOLED) return false;
    return true;
}

static void collect(seq *q, cpu_loop **progs, int64_t *n, int64_t cap, int depth) {
    for (int64_t i = 0; depth <= MAX_DEPTH && i < q->count; i++) {
        step *sp = &q->steps[i];
        if (sp->fused) {
            if (*n < cap && generable(sp->fused)) progs[(*n)++] = sp->fused;
            continue;
        }
        for (int64_t k = 0; k < sp->sub_count; k++) collect(&sp->sub[k], progs, n, cap, depth + 1);
    }
}

static int64_t count_programs(const seq *q, int depth) {
    int64_t n = 0;
    for (int64_t i = 0; depth <= MAX_DEPTH && i < q->count; i++) {
        const step *sp = &q->steps[i];
        if (sp->fused)
            n++;
        else
            for (int64_t k = 0; k < sp->sub_count; k++) n += count_programs(&sp->sub[k], depth + 1);
    }
    return n;
}

/* The generable programs of |p|, in a stable order (the one of its steps): *out_progs
 * (owned by the caller), *out_n of them. */
static cxla_status programs_of(cpu_plan *p, cpu_loop ***out_progs, int64_t *out_n) {
    *out_progs = NULL;
    *out_n = 0;
    int64_t cap = p ? count_programs(&p->entry, 0) : 0;
    if (cap == 0) return NULL;
    cpu_loop **progs = calloc((size_t)cap, sizeof(*progs));
    if (!progs) return CPU_STEPS_OOM();
    collect(&p->entry, progs, out_n, cap, 0);
    *out_progs = progs;
    return NULL;
}

/* Marks in |outside| (|ids| entries, by instruction id) the kernels that steps of |q| call
 * other than from a generated program: unfused steps, and the ops of the loops that are not
 * generated (generable). */
static void mark_outside(const seq *q, bool *outside, int64_t ids, int depth) {
    for (int64_t i = 0; depth <= MAX_DEPTH && i < q->count; i++) {
        const step *sp = &q->steps[i];
        if (sp->fused && generable(sp->fused)) continue;
        if (sp->kind == S_KERNEL && sp->fn && sp->instr->id >= 0 && sp->instr->id < ids)
            outside[sp->instr->id] = true;
        for (int64_t k = 0; k < sp->sub_count; k++)
            mark_outside(&sp->sub[k], outside, ids, depth + 1);
    }
}

cxla_status cpu_plan_emit_loops(cpu_plan *const *plans, int64_t n, const char *what,
                                cpu_kernel_namer name_of, cxla_strbuf *out, bool *out_any,
                                bool *out_exported) {
    *out_any = false;
    if (getenv("CXLA_LOOP_NO_CC")) return NULL;
    int64_t ids = 0;
    for (int64_t i = 0; i < n; i++)
        if (plans[i] && plans[i]->id_count > ids) ids = plans[i]->id_count;
    bool *done = calloc((size_t)(ids ? ids : 1), sizeof(*done));
    bool *outside = calloc((size_t)(ids ? ids : 1), sizeof(*outside));
    uint64_t *alias_done = calloc((size_t)(ids ? ids : 1), sizeof(*alias_done));
    if (!done || !outside || !alias_done) {
        free(done);
        free(outside);
        free(alias_done);
        return CPU_STEPS_OOM();
    }
    for (int64_t i = 0; i < n; i++)
        if (plans[i]) mark_outside(&plans[i]->entry, outside, ids, 0);
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++) {
        cpu_loop **progs = NULL;
        int64_t count = 0;
        s = programs_of(plans[i], &progs, &count);
        for (int64_t k = 0; k < count && !s; k++) {
            if (!*out_any) {
                cxla_strbuf_printf(out,
                                   "/* Generated by cxla's cpu backend from module %s: its fused "
                                   "while loops (src/cpu/cpu_loop.c). */\n",
                                   what);
                cpu_emit_prelude(out);
                /* gcc turns a kernel's copy loop of a few elements, once it is inlined into
                 * the loop (where its restrict operands are no longer told apart), into a
                 * call of memmove: a call per 12 bytes in bench_scan_N2000_M3. The pragma
                 * keeps the other options (-ffp-contract=off, -fno-math-errno). */
                cxla_strbuf_puts(out, "#include <string.h>\n"
                                      "#if defined(__GNUC__) && !defined(__clang__)\n"
                                      "#pragma GCC optimize(\"no-tree-loop-distribute-patterns\")\n"
                                      "#endif\n");
                *out_any = true;
            }
            char fn[64];
            snprintf(fn, sizeof(fn), "cxla_loop_%" PRId64 "_%" PRId64, i, k);
            s = emit_kernels(progs[k], done, alias_done, outside, out_exported ? name_of : NULL,
                             out_exported, out);
            if (!s) emit_fn(progs[k], plans[i], fn, out);
        }
        free(progs);
    }
    free(done);
    free(outside);
    free(alias_done);
    if (!s && out->failed) s = CPU_STEPS_OOM();
    return s;
}

/* Appends to |out| the kernels of |q| and below that write over an operand (step.alias),
 * those not yet there (|done|: by instruction id, a bit per operand). */
static cxla_status emit_aliased_seq(const seq *q, uint64_t *done, int64_t ids, const char *what,
                                    bool *out_any, cxla_strbuf *out, int depth) {
    for (int64_t i = 0; depth <= MAX_DEPTH && i < q->count; i++) {
        const step *sp = &q->steps[i];
        if (sp->kind == S_KERNEL && sp->alias >= 0 && sp->instr->id >= 0 && sp->instr->id < ids &&
            !(done[sp->instr->id] & ((uint64_t)1 << sp->alias))) {
            done[sp->instr->id] |= (uint64_t)1 << sp->alias;
            if (!*out_any) {
                cxla_strbuf_printf(out,
                                   "/* Generated by cxla's cpu backend from module %s: kernels "
                                   "that write a loop's state where it lies "
                                   "(src/cpu/cpu_loop.c). */\n",
                                   what);
                cpu_emit_prelude(out);
                *out_any = true;
            }
            char name[64];
            alias_name(sp->instr, sp->alias, "cxla_ka", name, sizeof(name));
            cxla_strbuf_putc(out, '\n');
            CXLA_RETURN_IF_ERROR(cpu_emit_kernel_alias(sp->instr, sp->alias, name, out, NULL));
        }
        for (int64_t k = 0; k < sp->sub_count; k++)
            CXLA_RETURN_IF_ERROR(
                emit_aliased_seq(&sp->sub[k], done, ids, what, out_any, out, depth + 1));
    }
    return NULL;
}

cxla_status cpu_plan_emit_aliased(cpu_plan *const *plans, int64_t n, const char *what,
                                  cxla_strbuf *out, bool *out_any) {
    *out_any = false;
    int64_t ids = 0;
    for (int64_t i = 0; i < n; i++)
        if (plans[i] && plans[i]->stats.loop_aliased > 0 && plans[i]->id_count > ids)
            ids = plans[i]->id_count;
    if (ids == 0) return NULL;
    uint64_t *done = calloc((size_t)ids, sizeof(*done));
    if (!done) return CPU_STEPS_OOM();
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++)
        if (plans[i]) s = emit_aliased_seq(&plans[i]->entry, done, ids, what, out_any, out, 0);
    free(done);
    if (!s && out->failed) s = CPU_STEPS_OOM();
    return s;
}

/* The function step |sp| runs: kernels[instruction id], or the kernel that writes over
 * its operand (step.alias) from |lib|; NULL when that one is missing. */
static cpu_kernel_fn step_fn(const step *sp, const cpu_kernel_fn *kernels, cpu_library *lib) {
    if (sp->kind != S_KERNEL || sp->alias < 0) return kernels[sp->instr->id];
    char name[64];
    alias_name(sp->instr, sp->alias, "cxla_ka", name, sizeof(name));
    void *sym = lib ? cpu_library_symbol(lib, name) : NULL;
    cpu_kernel_fn fn = NULL;
    /* dlsym returns data pointers; POSIX guarantees the conversion. */
    if (sym) memcpy(&fn, &sym, sizeof(sym));
    return fn;
}

/* Points the kernel steps of |q| and below at their functions (step_fn); the first step
 * whose function is missing, or NULL. */
static const step *bind_seq(seq *q, const cpu_kernel_fn *kernels, cpu_library *lib, int depth) {
    const step *missing = NULL;
    for (int64_t i = 0; depth <= MAX_DEPTH && i < q->count; i++) {
        step *sp = &q->steps[i];
        if ((sp->kind == S_KERNEL || sp->kind == S_SVC) && sp->fn) {
            sp->fn = step_fn(sp, kernels, lib);
            if (!sp->fn && !missing) missing = sp;
        }
        if (sp->fused)
            for (int64_t k = 0; k < sp->fused->count; k++)
                if (sp->fused->ops[k].fn) {
                    sp->fused->ops[k].fn = step_fn(sp->fused->ops[k].sp, kernels, lib);
                    if (!sp->fused->ops[k].fn && !missing) missing = sp->fused->ops[k].sp;
                }
        for (int64_t k = 0; k < sp->sub_count; k++) {
            const step *m = bind_seq(&sp->sub[k], kernels, lib, depth + 1);
            if (m && !missing) missing = m;
        }
    }
    return missing;
}

cxla_status cpu_plan_bind(cpu_plan *p, int64_t index, const cpu_kernel_fn *kernels,
                          cpu_library *lib, bool with_loops, const char *what) {
    if (!p) return NULL;
    const step *missing = bind_seq(&p->entry, kernels, lib, 0);
    if (missing)
        return cxla_error(CXLA_STATUS_INTERNAL,
                          "the compiled code of module '%s' lacks the kernel of %s that writes "
                          "over its operand %" PRId64,
                          what, missing->instr->name, missing->alias);
    if (!with_loops) return NULL;
    cpu_loop **progs = NULL;
    int64_t n = 0;
    CXLA_RETURN_IF_ERROR(programs_of(p, &progs, &n));
    cxla_status s = NULL;
    int64_t fixed[2] = {0, 0};
    for (int64_t k = 0; k < n && !s; k++) {
        cpu_loop *l = progs[k];
        char name[64];
        snprintf(name, sizeof(name), "cxla_loop_%" PRId64 "_%" PRId64, index, k);
        void *sym = cpu_library_symbol(lib, name);
        l->steps = calloc((size_t)(l->count ? l->count : 1), sizeof(*l->steps));
        if (!sym || !l->steps) {
            s = sym ? CPU_STEPS_OOM()
                    : cxla_error(CXLA_STATUS_INTERNAL, "the compiled loops of module '%s' lack %s",
                                 what, name);
            break;
        }
        for (int64_t i = 0; i < l->count; i++) l->steps[i] = l->ops[i].sp;
        /* dlsym returns data pointers; POSIX guarantees the conversion. */
        memcpy(&l->gen, &sym, sizeof(sym));
        fixed[0] += l->fixed[0];
        fixed[1] += l->fixed[1];
    }
    if (!s) {
        p->stats.loops_as_c = n;
        p->stats.loop_arena_slots = fixed[0];
        p->stats.loop_const_slots = fixed[1];
    } else { /* back to the ops, which need nothing of the library */
        for (int64_t k = 0; k < n; k++) progs[k]->gen = NULL;
    }
    free(progs);
    return s;
}
