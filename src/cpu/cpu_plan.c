/* Buffer assignment over a schedule (cpu_arena_assign, cpu_internal.h): first fit in a
 * free list of ranges, walked step by step. The cpu backend's step sequences (cpu_steps.c)
 * and the ahead-of-time output (aot.c) both place their buffers with it. */
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
