/* Buffer assignment over a schedule (cpu_arena_assign, cpu_internal.h): first fit in a
 * free list of ranges, walked step by step. The cpu backend's step sequences (cpu_steps.c)
 * and the ahead-of-time output (aot.c) both place their buffers with it. Also the module's
 * input_output_alias decoded into leaf pairs (cpu_io_aliases), for donated runs. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

enum { ALIGN = 64 };

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

/* ---- input_output_alias ------------------------------------------------------------------ */

/* A cursor over the attribute's text (kept verbatim by the parser, which checked its
 * syntax): spaces skipped before each token. */
typedef struct cursor {
    const char *s;
} cursor;

static bool eat(cursor *c, char ch) {
    while (*c->s == ' ' || *c->s == '\t' || *c->s == '\n' || *c->s == '\r') c->s++;
    if (*c->s != ch) return false;
    c->s++;
    return true;
}

static bool read_int(cursor *c, int64_t *out) {
    eat(c, ' ');
    char *end = NULL;
    long long v = strtoll(c->s, &end, 10);
    if (end == c->s) return false;
    c->s = end;
    *out = v;
    return true;
}

/* "{a, b, ...}" into index[0 .. *n). */
static bool read_index(cursor *c, int64_t *index, int64_t *n) {
    *n = 0;
    if (!eat(c, '{')) return false;
    if (eat(c, '}')) return true;
    do {
        if (*n == CXLA_MAX_RANK || !read_int(c, &index[*n])) return false;
        (*n)++;
    } while (eat(c, ','));
    return eat(c, '}');
}

static int64_t leaves_of(const cxla_shape *s) {
    if (s->type != CXLA_TUPLE) return 1;
    int64_t n = 0;
    for (int64_t i = 0; i < s->tuple_count; i++) n += leaves_of(&s->elements[i]);
    return n;
}

/* The leaf that |index| names in |s| (its position among the leaves, depth-first, after
 * |base|) and its shape; false when the index leaves the shape or stops at a tuple. */
static bool leaf_at(const cxla_shape *s, const int64_t *index, int64_t n, int64_t base,
                    int64_t *out_leaf, const cxla_shape **out_shape) {
    for (int64_t k = 0; k < n; k++) {
        if (s->type != CXLA_TUPLE || index[k] < 0 || index[k] >= s->tuple_count) return false;
        for (int64_t i = 0; i < index[k]; i++) base += leaves_of(&s->elements[i]);
        s = &s->elements[index[k]];
    }
    if (s->type == CXLA_TUPLE) return false;
    *out_leaf = base;
    *out_shape = s;
    return true;
}

static bool same_array(const cxla_shape *a, const cxla_shape *b) {
    if (a->type != b->type || a->rank != b->rank || !cxla_type_is_array(a->type)) return false;
    for (int64_t d = 0; d < a->rank; d++) {
        bool da = a->dynamic && a->dynamic[d], db = b->dynamic && b->dynamic[d];
        if (a->dims[d] != b->dims[d] || da != db) return false;
    }
    return true;
}

cxla_status cpu_io_aliases(const cxla_module *m, cpu_io_alias **out, int64_t *out_count) {
    *out = NULL;
    *out_count = 0;
    const cxla_attr *a = NULL;
    for (int64_t i = 0; i < m->attr_count; i++)
        if (m->attrs[i].id == CXLA_ATTR_INPUT_OUTPUT_ALIAS) a = &m->attrs[i];
    if (!a || !a->v.s || !m->entry || !m->entry->root) return NULL;
    const cxla_computation *entry = m->entry;
    cursor c = {a->v.s};
    cpu_io_alias *list = NULL;
    int64_t n = 0, cap = 0;
    cxla_status s = NULL;
    if (!eat(&c, '{')) s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "expected '{'");
    bool more = !s && !eat(&c, '}');
    while (more && !s) {
        int64_t oi[CXLA_MAX_RANK], pi[CXLA_MAX_RANK], on = 0, pn = 0, param = -1;
        if (!read_index(&c, oi, &on) || !eat(&c, ':') || !eat(&c, '(') || !read_int(&c, &param) ||
            !eat(&c, ',') || !read_index(&c, pi, &pn)) {
            s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "expected {index}: (parameter, {index})");
            break;
        }
        bool must = false;
        if (eat(&c, ',')) {
            eat(&c, ' ');
            must = strncmp(c.s, "must-alias", 10) == 0;
            while (*c.s && *c.s != ')') c.s++;
        }
        if (!eat(&c, ')')) {
            s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "expected ')'");
            break;
        }
        more = eat(&c, ',');
        if (!more && !eat(&c, '}')) s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "expected '}'");
        cpu_io_alias e = {.param = param, .must = must};
        const cxla_shape *os = NULL, *ps = NULL;
        if (!s && !leaf_at(&entry->root->shape, oi, on, 0, &e.output, &os))
            s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                           "output index %" PRId64 " names no array of the result", n);
        if (!s && (param < 0 || param >= entry->param_count))
            s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "parameter %" PRId64 " does not exist",
                           param);
        int64_t base = 0;
        for (int64_t p = 0; !s && p < param; p++) base += leaves_of(&entry->params[p]->shape);
        if (!s && !leaf_at(&entry->params[param]->shape, pi, pn, base, &e.arg, &ps))
            s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                           "the index of parameter %" PRId64 " names no array of it", param);
        if (!s && !same_array(os, ps))
            s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                           "the output and parameter %" PRId64 " have different shapes", param);
        for (int64_t k = 0; k < n && !s; k++)
            if (list[k].arg == e.arg || list[k].output == e.output)
                s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                               "a %s is aliased twice (parameter %" PRId64 ")",
                               list[k].arg == e.arg ? "parameter leaf" : "result leaf", param);
        if (s) break;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            cpu_io_alias *nl = realloc(list, (size_t)cap * sizeof(*nl));
            if (!nl) {
                s = OOM();
                break;
            }
            list = nl;
        }
        list[n++] = e;
    }
    if (s) {
        free(list);
        return cxla_status_annotate(s, "module %s: input_output_alias=%s", m->name, a->v.s);
    }
    *out = list;
    *out_count = n;
    return NULL;
}
