/* Internal helpers shared by every module: assertions, checked arithmetic, an arena
 * allocator and a growable string buffer. Nothing here is public API. */
#ifndef CXLA_BASE_BASE_H_
#define CXLA_BASE_BASE_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cxla/status.h"

/* Internal invariants (never user input). On in debug and sanitizer builds. */
void cxla_assert_fail(const char *expr, const char *file, int line);
#if defined(CXLA_DEBUG_ASSERTS) || !defined(NDEBUG)
#define CXLA_ASSERT(x) ((x) ? (void)0 : cxla_assert_fail(#x, __FILE__, __LINE__))
#else
#define CXLA_ASSERT(x) ((void)0)
#endif

#define CXLA_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Checked arithmetic: false when the result overflows (or is negative for sizes). */
static inline bool cxla_mul_i64(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool cxla_add_i64(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_add_overflow(a, b, out);
}
static inline bool cxla_mul_size(size_t a, size_t b, size_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool cxla_add_size(size_t a, size_t b, size_t *out) {
    return !__builtin_add_overflow(a, b, out);
}

/* Arena: many small allocations freed at once. Allocations are 16-byte aligned and
 * zero-filled. NULL when memory is short. */
typedef struct cxla_arena cxla_arena;
cxla_arena *cxla_arena_create(void);
void cxla_arena_destroy(cxla_arena *arena);
void *cxla_arena_alloc(cxla_arena *arena, size_t size);
/* |count| elements of |size| bytes, NULL on overflow or when memory is short. */
void *cxla_arena_alloc_array(cxla_arena *arena, size_t count, size_t size);
char *cxla_arena_strndup(cxla_arena *arena, const char *s, size_t len);
size_t cxla_arena_bytes_used(const cxla_arena *arena);

/* Growable NUL-terminated string. A failed allocation sets |failed| and later appends do
 * nothing, so callers check once at the end. */
typedef struct cxla_strbuf {
    char *data;
    size_t len;
    size_t cap;
    bool failed;
} cxla_strbuf;
void cxla_strbuf_init(cxla_strbuf *b);
void cxla_strbuf_free(cxla_strbuf *b);
void cxla_strbuf_append(cxla_strbuf *b, const char *s, size_t len);
void cxla_strbuf_puts(cxla_strbuf *b, const char *s);
void cxla_strbuf_putc(cxla_strbuf *b, char c);
void cxla_strbuf_printf(cxla_strbuf *b, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void cxla_strbuf_vprintf(cxla_strbuf *b, const char *format, va_list args);
/* Hands the string to the caller (malloc'd; free()) and resets |b|; NULL if failed. */
char *cxla_strbuf_take(cxla_strbuf *b);

/* Asks the kernel for transparent huge pages over the whole 2 MiB pages inside
 * [p, p + size) when size is 4 MiB or more (src/base/pages.c): before the block is first
 * written, its pages then fault in 2 MiB at a time. A hint: nothing changes where the
 * system does not support it. */
void cxla_advise_huge_pages(void *p, size_t size);

/* Reads a whole file into a malloc'd buffer (NUL-terminated, |out_size| without it).
 * A regular file is read by its size (one allocation); a source without a size (a pipe,
 * a device such as /dev/zero) is read up to cxla_read_limit() bytes and fails beyond.
 * Errors: a file that cannot be opened (NOT_FOUND, UNAVAILABLE), a directory
 * (INVALID_ARGUMENT, saying so), a read error (UNAVAILABLE), out of memory or over the
 * limit (RESOURCE_EXHAUSTED); every message names |path|. */
cxla_status cxla_read_file(const char *path, char **out_data, size_t *out_size);
/* Opens |path| for reading, refusing directories as cxla_read_file does; |out_regular|
 * says whether it is a regular file, whose size |out_size| gets (0 otherwise). */
cxla_status cxla_open_file(const char *path, FILE **out_file, bool *out_regular, size_t *out_size);
/* The most bytes read from a source that is not a regular file: 1 GiB, or the
 * environment variable CXLA_READ_LIMIT (a positive number of bytes). */
#define CXLA_READ_LIMIT_DEFAULT ((size_t)1 << 30)
size_t cxla_read_limit(void);
cxla_status cxla_write_file(const char *path, const void *data, size_t size);

/* Describes a position in a text for error messages: "line L, column C" plus the line
 * itself and a caret under the column, appended to |b|. */
void cxla_describe_position(cxla_strbuf *b, const char *text, size_t len, size_t pos);
void cxla_text_line_col(const char *text, size_t len, size_t pos, int64_t *out_line,
                        int64_t *out_col);

/* String-keyed hash map storing pointers, allocated in an arena (never shrinks). A key is
 * |len| bytes (NULs allowed), copied into the arena when first put: the caller's buffer
 * may change or go once cxla_strmap_put returns. */
typedef struct cxla_strmap {
    cxla_arena *arena;
    size_t count, capacity; /* capacity is a power of two */
    const char **keys;
    size_t *key_lens;
    void **values;
} cxla_strmap;
void cxla_strmap_init(cxla_strmap *map, cxla_arena *arena);
/* Inserts or replaces; false when memory is short. */
bool cxla_strmap_put(cxla_strmap *map, const char *key, size_t len, void *value);
void *cxla_strmap_get(const cxla_strmap *map, const char *key, size_t len);

#endif /* CXLA_BASE_BASE_H_ */
