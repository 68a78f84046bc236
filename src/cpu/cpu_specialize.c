/* The per-executable cache of specialized forms of a module with unbounded dimensions
 * (cpu_specialize.h).
 *
 * Why the bounds are the argument sizes themselves (each '?' dimension of an entry
 * parameter becomes static at its size) rather than rounded up (a power of two, so that
 * one form serves several sizes):
 *  - exactness: the interpreter's driver holds a '?' value as a literal of its actual size,
 *    so a static dimension of that size is the same value, and every operation computes
 *    what the driver computes. A rounded bound would hold the value below its bound, where
 *    the interpreter's bound-dependent rules (set-dimension-size's range, a dynamic-slice of
 *    the whole bound, reshapes grouped by bounds, the operations that refuse padded
 *    operands) would answer differently, and shapes that the module pins (an add of a '?'
 *    operand with an f32[5] one) would not infer at all;
 *  - speed: static shapes get kernels, library calls and in-place updates; a bounded
 *    dynamic instruction runs as the interpreter's handler step (cpu_steps.c), no faster
 *    than the driver;
 *  - the cost is a compile per distinct size set: the on-disk cache (compiler.c) makes a
 *    size seen before (in this process or an earlier one) cost a lookup, not a cc run,
 *    and this cache keeps the last few forms loaded.
 * Once bounded dynamic shapes get kernels, rounding could serve modules without
 * bound-dependent operations with fewer compiles.
 *
 * A form that cannot be made for some sizes (shape inference or the verifier refuses the
 * module at those sizes) is cached too, as "the driver", so that those sizes do not retry
 * it on every run. */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_specialize.h"
#include "exec/dynamic.h"
#include "exec/specialize.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

enum { DEFAULT_CAPACITY = 8, MAX_CAPACITY = 1024 };

typedef struct spec_entry {
    int64_t *sizes;      /* the key: the '?' parameter dimensions' sizes */
    cxla_module *module; /* owned; NULL: these sizes run on the driver */
    void *compiled;      /* cpu_backend's form of module; NULL with it */
    bool pending;        /* one thread is making it; the others wait */
    bool evicted;        /* out of the cache; the last user frees it */
    int64_t users;
    uint64_t used; /* the cache's clock at the last use */
} spec_entry;

struct cpu_spec_cache {
    cxla_module *source; /* owned copy of the user's module */
    exec_compile_options options;
    int64_t key_len;
    char *refusal; /* NULL: specialized */
    pthread_mutex_t lock;
    pthread_cond_t ready;
    spec_entry **entries;
    int64_t count, capacity;
    uint64_t clock;
    cpu_spec_stats stats;
};

static void entry_free(spec_entry *e) {
    if (!e) return;
    if (e->compiled) cpu_backend.destroy(e->compiled);
    cxla_module_destroy(e->module);
    free(e->sizes);
    free(e);
}

static int64_t capacity_from_env(void) {
    const char *v = getenv("CXLA_CPU_SPECIALIZATIONS");
    if (!v || !*v) return DEFAULT_CAPACITY;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    if (*end || n < 1 || n > MAX_CAPACITY) return DEFAULT_CAPACITY;
    return (int64_t)n;
}

cxla_status cpu_spec_create(const cxla_module *module, const exec_compile_options *options,
                            cpu_spec_cache **out) {
    *out = NULL;
    int64_t key_len = exec_unbounded_param_dims(module);
    bool any = key_len > 0;
    for (int64_t c = 0; c < module->comp_count && !any; c++)
        for (int64_t i = 0; i < module->comps[c]->instr_count && !any; i++)
            any = exec_shape_has_unbounded(&module->comps[c]->instrs[i]->shape);
    if (!any) return NULL;
    cpu_spec_cache *c = calloc(1, sizeof(*c));
    if (!c) return OOM();
    c->key_len = key_len;
    c->capacity = capacity_from_env();
    c->stats.capacity = c->capacity;
    if (options) c->options = *options;
    c->entries = calloc((size_t)c->capacity, sizeof(*c->entries));
    cxla_status s = c->entries ? cxla_module_clone(module, &c->source) : OOM();
    if (s) {
        free(c->entries);
        free(c);
        return s;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->ready, NULL);
    /* Sizes of 1 tell what no sizes change: a '?' dimension nothing sizes, or one that only
     * a bound can specialize meeting a bound-dependent operation (exec/specialize.h). */
    int64_t *ones = calloc((size_t)(key_len ? key_len : 1), sizeof(int64_t));
    if (!ones) {
        cpu_spec_destroy(c);
        return OOM();
    }
    for (int64_t i = 0; i < key_len; i++) ones[i] = 1;
    cxla_module *trial = NULL;
    s = exec_specialize_module(c->source, ones, key_len, &trial);
    free(ones);
    cxla_module_destroy(trial);
    if (cxla_status_code_of(s) == CXLA_STATUS_UNIMPLEMENTED) {
        const char *why = cxla_status_message(s);
        c->refusal = malloc(strlen(why) + 1);
        if (c->refusal) memcpy(c->refusal, why, strlen(why) + 1);
        cxla_status_free(s);
        s = c->refusal ? NULL : OOM();
    } else if (cxla_status_code_of(s) == CXLA_STATUS_INVALID_ARGUMENT) {
        cxla_status_free(s); /* sizes of 1 may not fit; real ones will tell */
        s = NULL;
    }
    if (s) {
        cpu_spec_destroy(c);
        return s;
    }
    *out = c;
    return NULL;
}

void cpu_spec_destroy(cpu_spec_cache *c) {
    if (!c) return;
    for (int64_t i = 0; i < c->count; i++) entry_free(c->entries[i]);
    free(c->entries);
    cxla_module_destroy(c->source);
    free(c->refusal);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->ready);
    free(c);
}

const char *cpu_spec_refusal(const cpu_spec_cache *c) {
    return c ? c->refusal : NULL;
}

const cxla_module *cpu_spec_source(const cpu_spec_cache *c) {
    return c->source;
}

void cpu_spec_get_stats(cpu_spec_cache *c, cpu_spec_stats *out) {
    memset(out, 0, sizeof(*out));
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    *out = c->stats;
    out->cached = c->count;
    pthread_mutex_unlock(&c->lock);
}

/* ---- the cache ------------------------------------------------------------------------- */

static spec_entry *find(const cpu_spec_cache *c, const int64_t *sizes) {
    for (int64_t i = 0; i < c->count; i++)
        if (c->key_len == 0 ||
            memcmp(c->entries[i]->sizes, sizes, (size_t)c->key_len * sizeof(int64_t)) == 0)
            return c->entries[i];
    return NULL;
}

static void unlink_entry(cpu_spec_cache *c, const spec_entry *e) {
    for (int64_t i = 0; i < c->count; i++)
        if (c->entries[i] == e) {
            c->entries[i] = c->entries[--c->count];
            return;
        }
}

/* Makes room for one more entry: the least recently used one that is not being made
 * leaves; it is returned for freeing when nobody uses it (under the lock: NULL if none). */
static spec_entry *evict_one(cpu_spec_cache *c) {
    spec_entry *lru = NULL;
    for (int64_t i = 0; i < c->count; i++) {
        spec_entry *e = c->entries[i];
        if (!e->pending && (!lru || e->used < lru->used)) lru = e;
    }
    if (!lru) return NULL;
    unlink_entry(c, lru);
    c->stats.evictions++;
    if (lru->users > 0) {
        lru->evicted = true;
        return NULL;
    }
    return lru;
}

static void release(cpu_spec_cache *c, spec_entry *e) {
    pthread_mutex_lock(&c->lock);
    bool last = --e->users == 0 && e->evicted;
    pthread_mutex_unlock(&c->lock);
    if (last) entry_free(e);
}

/* Makes |e|'s form (outside the lock). Sizes the module cannot take leave it empty: the
 * driver runs them. */
static cxla_status make(cpu_spec_cache *c, spec_entry *e) {
    cxla_status s = exec_specialize_module(c->source, e->sizes, c->key_len, &e->module);
    cxla_status_code code = cxla_status_code_of(s);
    if (code == CXLA_STATUS_UNIMPLEMENTED || code == CXLA_STATUS_INVALID_ARGUMENT) {
        cxla_status_free(s);
        return NULL;
    }
    if (!s) s = cpu_backend.compile(e->module, &c->options, &e->compiled);
    return s;
}

/* The entry for |sizes|, in use by the caller (release it), made first when missing. */
static cxla_status acquire(cpu_spec_cache *c, const int64_t *sizes, spec_entry **out) {
    pthread_mutex_lock(&c->lock);
    spec_entry *e;
    while ((e = find(c, sizes)) && e->pending) pthread_cond_wait(&c->ready, &c->lock);
    if (e) {
        e->users++;
        e->used = ++c->clock;
        c->stats.hits++;
        pthread_mutex_unlock(&c->lock);
        *out = e;
        return NULL;
    }
    e = calloc(1, sizeof(*e));
    if (e) e->sizes = malloc((size_t)(c->key_len ? c->key_len : 1) * sizeof(int64_t));
    if (!e || !e->sizes) {
        pthread_mutex_unlock(&c->lock);
        entry_free(e);
        return OOM();
    }
    if (c->key_len) memcpy(e->sizes, sizes, (size_t)c->key_len * sizeof(int64_t));
    e->pending = true;
    e->users = 1;
    e->used = ++c->clock;
    spec_entry *gone = c->count == c->capacity ? evict_one(c) : NULL;
    bool listed = c->count < c->capacity; /* all pending: this one is not kept */
    if (listed) c->entries[c->count++] = e;
    c->stats.compiles++;
    pthread_mutex_unlock(&c->lock);
    entry_free(gone);

    cxla_status s = make(c, e);

    pthread_mutex_lock(&c->lock);
    e->pending = false;
    if (s && listed) unlink_entry(c, e);
    if (!listed) e->evicted = true; /* freed by release */
    pthread_cond_broadcast(&c->ready);
    pthread_mutex_unlock(&c->lock);
    if (s) {
        entry_free(e); /* waiters only looked it up; they make their own */
        return s;
    }
    *out = e;
    return NULL;
}

/* ---- one run ------------------------------------------------------------------------------ */

static void strip_layouts(cxla_shape *s) {
    s->layout = NULL;
    for (int64_t i = 0; s->type == CXLA_TUPLE && i < s->tuple_count; i++)
        strip_layouts(&s->elements[i]);
}

/* The specialized run's result |res| (taken) as the driver returns it for |m|: '?'
 * dimensions static at their sizes, bounded ones as declared, in the entry layout the
 * driver gives (interp_run_module_overridden). Usually the form's '?' dimensions are
 * static and |res| is that already (the form has the same entry layout); a '?' dimension
 * the form holds below a bound is cut to its size here. */
/* Whether every '?' dimension of |declared| is static in |got| (the form's result leaf):
 * then the form's literal is already the one the driver returns. */
static bool unbounded_static(const cxla_shape *declared, const cxla_literal *got) {
    if (declared->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < declared->tuple_count; i++)
            if (got->shape->type != CXLA_TUPLE || i >= got->tuple_count ||
                !unbounded_static(&declared->elements[i], got->elements[i]))
                return false;
        return true;
    }
    if (!cxla_type_is_array(declared->type)) return true;
    for (int64_t d = 0; d < declared->rank; d++)
        if (exec_shape_dim_dynamic(declared, d) && declared->dims[d] == CXLA_DIM_UNBOUNDED &&
            exec_shape_dim_dynamic(got->shape, d))
            return false;
    return true;
}

static cxla_status as_declared(const cxla_module *m, cxla_literal *res, cxla_literal **out) {
    const cxla_shape *root = &m->entry->root->shape;
    if (!exec_shape_has_unbounded(root) || unbounded_static(root, res)) {
        *out = res;
        return NULL;
    }
    cxla_shape *target = NULL;
    cxla_literal *flat = NULL;
    cxla_status s = cxla_shape_clone(root, &target);
    if (!s) {
        strip_layouts(target);
        s = cxla_literal_to_bounded(res, target, &flat);
    }
    cxla_shape_destroy(target);
    cxla_literal_free(res);
    if (s) return s;
    const cxla_shape *rs = m->has_entry_layout ? &m->entry_result_shape : NULL;
    if (rs && (!cxla_layout_is_default(rs) || rs->type == CXLA_TUPLE)) {
        s = interp_relayout(flat, rs, out);
        cxla_literal_free(flat);
        return s;
    }
    *out = flat;
    return NULL;
}

static bool literal_static(const cxla_literal *lit) {
    return !cxla_literal_is_padded(lit) && cxla_shape_is_static(lit->shape);
}

static cxla_status run_form(const spec_entry *e, const exec_run_options *options,
                            const cxla_literal *const *args, int64_t arg_count,
                            cxla_literal **out) {
    /* A static parameter takes a static literal: dynamic arguments of the '?' dimensions
     * are cut to their sizes first (the driver reads them at their sizes too). */
    enum { SMALL = 16 };
    cxla_literal *owned_small[SMALL] = {0};
    const cxla_literal *use_small[SMALL];
    cxla_literal **owned =
        arg_count <= SMALL ? owned_small : calloc((size_t)arg_count, sizeof(*owned));
    const cxla_literal **use =
        arg_count <= SMALL ? use_small : calloc((size_t)arg_count, sizeof(*use));
    cxla_status s = owned && use ? NULL : OOM();
    const cxla_computation *entry = e->module->entry;
    for (int64_t i = 0; i < arg_count && !s; i++) {
        use[i] = args[i];
        if (cxla_shape_is_static(&entry->params[i]->shape) && !literal_static(args[i])) {
            s = cxla_literal_to_static(args[i], &owned[i]);
            use[i] = owned[i];
        }
    }
    exec_run_options ro = options ? *options : (exec_run_options){0};
    ro.donated = NULL; /* the form has no input_output_alias (exec/specialize.h) */
    ro.in_place_arg = NULL;
    if (!s) s = cpu_backend.execute(e->compiled, &ro, use, arg_count, out);
    for (int64_t i = 0; owned && i < arg_count; i++) cxla_literal_free(owned[i]);
    if (owned != owned_small) free(owned);
    if (use != use_small) free((void *)use);
    return s;
}

cxla_status cpu_spec_run(cpu_spec_cache *c, const exec_run_options *options,
                         const cxla_literal *const *args, int64_t arg_count,
                         cxla_literal **out_result, bool *out_ran) {
    *out_ran = false;
    if (c->refusal) return NULL;
    enum { SMALL = 32 };
    int64_t sizes_small[SMALL];
    int64_t *sizes = c->key_len <= SMALL ? sizes_small : malloc((size_t)c->key_len * 8);
    if (!sizes) return OOM();
    cxla_status s = NULL;
    spec_entry *e = NULL;
    if (exec_unbounded_arg_sizes(c->source, args, arg_count, sizes)) s = acquire(c, sizes, &e);
    if (sizes != sizes_small) free(sizes);
    if (s) return s;
    if (!e || !e->compiled) {
        pthread_mutex_lock(&c->lock);
        c->stats.driver_runs++;
        pthread_mutex_unlock(&c->lock);
        if (e) release(c, e);
        return NULL;
    }
    cxla_literal *res = NULL;
    s = run_form(e, options, args, arg_count, &res);
    release(c, e);
    if (!s) s = as_declared(c->source, res, out_result);
    if (!s) *out_ran = true;
    return s;
}
