/* Growable strings, file reading, and text positions for error messages. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/base.h"

void cxla_strbuf_init(cxla_strbuf *b) {
    memset(b, 0, sizeof(*b));
}

void cxla_strbuf_free(cxla_strbuf *b) {
    free(b->data);
    memset(b, 0, sizeof(*b));
}

static bool reserve(cxla_strbuf *b, size_t extra) {
    if (b->failed) return false;
    size_t need;
    if (!cxla_add_size(b->len, extra + 1, &need)) {
        b->failed = true;
        return false;
    }
    if (need <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void cxla_strbuf_append(cxla_strbuf *b, const char *s, size_t len) {
    if (!reserve(b, len)) return;
    if (len) memcpy(b->data + b->len, s, len);
    b->len += len;
    b->data[b->len] = 0;
}

void cxla_strbuf_puts(cxla_strbuf *b, const char *s) {
    cxla_strbuf_append(b, s, strlen(s));
}

void cxla_strbuf_putc(cxla_strbuf *b, char c) {
    cxla_strbuf_append(b, &c, 1);
}

void cxla_strbuf_vprintf(cxla_strbuf *b, const char *format, va_list args) {
    va_list copy;
    va_copy(copy, args);
    int n = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    if (n < 0 || !reserve(b, (size_t)n)) return;
    vsnprintf(b->data + b->len, (size_t)n + 1, format, args);
    b->len += (size_t)n;
}

void cxla_strbuf_printf(cxla_strbuf *b, const char *format, ...) {
    va_list args;
    va_start(args, format);
    cxla_strbuf_vprintf(b, format, args);
    va_end(args);
}

char *cxla_strbuf_take(cxla_strbuf *b) {
    if (b->failed) {
        cxla_strbuf_free(b);
        return NULL;
    }
    if (!b->data && !reserve(b, 0)) return NULL;
    if (!b->len) b->data[0] = 0;
    char *s = b->data;
    memset(b, 0, sizeof(*b));
    return s;
}

size_t cxla_read_limit(void) {
    const char *env = getenv("CXLA_READ_LIMIT");
    if (env && *env) {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(env, &end, 10);
        if (errno == 0 && end && *end == '\0' && v > 0 && v <= SIZE_MAX - 1) return (size_t)v;
    }
    return CXLA_READ_LIMIT_DEFAULT;
}

cxla_status cxla_open_file(const char *path, FILE **out_file, bool *out_regular, size_t *out_size) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return cxla_error(errno == ENOENT ? CXLA_STATUS_NOT_FOUND : CXLA_STATUS_UNAVAILABLE,
                          "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        int e = errno;
        fclose(f);
        return cxla_error(CXLA_STATUS_UNAVAILABLE, "cannot read '%s': %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        fclose(f);
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "'%s' is a directory, where a file was expected (%s)", path,
                          strerror(EISDIR));
    }
    *out_regular = S_ISREG(st.st_mode);
    *out_size = 0;
    if (*out_regular) {
        if ((uintmax_t)st.st_size > (uintmax_t)(SIZE_MAX - 1)) {
            fclose(f);
            return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "'%s' is too large to read", path);
        }
        *out_size = (size_t)st.st_size;
    }
    *out_file = f;
    return NULL;
}

/* Reads |f| to its end into |b|: a regular file up to the |size| it had when opened, any
 * other source up to cxla_read_limit(). Stops at the first failure. */
static cxla_status read_all(FILE *f, const char *path, bool regular, size_t size, cxla_strbuf *b) {
    size_t limit = regular ? size : cxla_read_limit();
    if (regular) {
        /* One allocation of the file's size (plus the NUL). */
        char *data = malloc(size + 1);
        if (!data)
            return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory reading '%s' (%zu bytes)", path, size);
        size_t n = size ? fread(data, 1, size, f) : 0;
        if (n != size && ferror(f)) {
            int e = errno;
            free(data);
            return cxla_error(CXLA_STATUS_UNAVAILABLE, "error reading '%s': %s", path, strerror(e));
        }
        data[n] = '\0'; /* a file that shrank meanwhile: what was there */
        b->data = data;
        b->len = n;
        b->cap = size + 1;
        return NULL;
    }
    char chunk[65536];
    for (;;) {
        size_t want = sizeof(chunk);
        if (limit - b->len < want) want = limit - b->len + 1; /* one byte past: over the limit */
        size_t n = fread(chunk, 1, want, f);
        if (n == 0) break;
        if (b->len + n > limit)
            return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                              "'%s' is not a regular file and gives more than %zu bytes, the "
                              "limit for such sources (the environment variable "
                              "CXLA_READ_LIMIT sets another, in bytes)",
                              path, limit);
        cxla_strbuf_append(b, chunk, n);
        if (b->failed)
            return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory reading '%s' (after %zu bytes)", path, b->len);
    }
    if (ferror(f))
        return cxla_error(CXLA_STATUS_UNAVAILABLE, "error reading '%s': %s", path, strerror(errno));
    return NULL;
}

cxla_status cxla_read_file(const char *path, char **out_data, size_t *out_size) {
    FILE *f = NULL;
    bool regular = false;
    size_t size = 0;
    CXLA_RETURN_IF_ERROR(cxla_open_file(path, &f, &regular, &size));
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_status s = read_all(f, path, regular, size, &b);
    fclose(f);
    if (s) {
        cxla_strbuf_free(&b);
        return s;
    }
    size_t len = b.len;
    char *data = cxla_strbuf_take(&b);
    if (!data)
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory reading '%s'", path);
    *out_data = data;
    *out_size = len;
    return NULL;
}

cxla_status cxla_write_file(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f)
        return cxla_error(CXLA_STATUS_UNAVAILABLE, "cannot create '%s': %s", path, strerror(errno));
    size_t n = size ? fwrite(data, 1, size, f) : 0;
    int closed = fclose(f);
    if (n != size || closed != 0)
        return cxla_error(CXLA_STATUS_UNAVAILABLE, "error writing '%s'", path);
    return NULL;
}

void cxla_text_line_col(const char *text, size_t len, size_t pos, int64_t *out_line,
                        int64_t *out_col) {
    if (pos > len) pos = len;
    int64_t line = 1, col = 1;
    for (size_t i = 0; i < pos; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    *out_line = line;
    *out_col = col;
}

void cxla_describe_position(cxla_strbuf *b, const char *text, size_t len, size_t pos) {
    if (pos > len) pos = len;
    int64_t line, col;
    cxla_text_line_col(text, len, pos, &line, &col);
    size_t start = pos;
    while (start > 0 && text[start - 1] != '\n') start--;
    size_t end = pos;
    while (end < len && text[end] != '\n') end++;
    cxla_strbuf_printf(b, "line %lld, column %lld", (long long)line, (long long)col);
    /* Show at most 120 characters of the line around the column. */
    size_t from = start, to = end;
    if (pos - from > 80) from = pos - 80;
    if (to - from > 120) to = from + 120;
    cxla_strbuf_puts(b, "\n  ");
    for (size_t i = from; i < to; i++) {
        char c = text[i];
        cxla_strbuf_putc(b, (c == '\t' || (unsigned char)c < 32) ? ' ' : c);
    }
    cxla_strbuf_puts(b, "\n  ");
    for (size_t i = from; i < pos; i++) cxla_strbuf_putc(b, ' ');
    cxla_strbuf_putc(b, '^');
}
