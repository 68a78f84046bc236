/* The HLO text cursor: whitespace and comments, names, numbers, strings, raw balanced
 * values, positions and error messages (hlo-text-format.md section 2). */
#include "hlo/lexer.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape_internal.h"

/* Deepest nesting of brackets a raw value may have. */
enum { RAW_MAX_DEPTH = 256 };

void cxla_hlo_lexer_init(cxla_hlo_lexer *lx, const char *text, size_t len, const char *filename,
                         cxla_module *module) {
    memset(lx, 0, sizeof(*lx));
    lx->text = text;
    lx->len = len;
    lx->filename = filename;
    lx->module = module;
    lx->lc_line = 1;
    lx->lc_col = 1;
}

bool cxla_hlo_is_name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool cxla_hlo_is_name_char(char c) {
    return cxla_hlo_is_name_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

static bool is_word_char(char c) {
    return cxla_hlo_is_name_start(c) || is_digit(c);
}

void cxla_hlo_line_col(cxla_hlo_lexer *lx, size_t pos, int64_t *out_line, int64_t *out_col) {
    if (pos > lx->len) pos = lx->len;
    if (pos < lx->lc_pos) {
        lx->lc_pos = 0;
        lx->lc_line = 1;
        lx->lc_col = 1;
    }
    for (size_t i = lx->lc_pos; i < pos; i++) {
        if (lx->text[i] == '\n') {
            lx->lc_line++;
            lx->lc_col = 1;
        } else {
            lx->lc_col++;
        }
    }
    lx->lc_pos = pos;
    *out_line = lx->lc_line;
    *out_col = lx->lc_col;
}

size_t cxla_hlo_skip(cxla_hlo_lexer *lx) {
    lx->pos = cxla_text_skip_space(lx->text, lx->len, lx->pos);
    return lx->pos;
}

bool cxla_hlo_at(cxla_hlo_lexer *lx, char c) {
    cxla_hlo_skip(lx);
    return lx->pos < lx->len && lx->text[lx->pos] == c;
}

bool cxla_hlo_accept(cxla_hlo_lexer *lx, char c) {
    if (!cxla_hlo_at(lx, c)) return false;
    lx->pos++;
    return true;
}

bool cxla_hlo_accept_str(cxla_hlo_lexer *lx, const char *s) {
    cxla_hlo_skip(lx);
    size_t n = strlen(s);
    if (lx->len - lx->pos < n || memcmp(lx->text + lx->pos, s, n) != 0) return false;
    lx->pos += n;
    return true;
}

bool cxla_hlo_accept_keyword(cxla_hlo_lexer *lx, const char *word) {
    cxla_hlo_skip(lx);
    size_t n = strlen(word);
    if (lx->len - lx->pos < n || memcmp(lx->text + lx->pos, word, n) != 0) return false;
    if (lx->pos + n < lx->len && cxla_hlo_is_name_char(lx->text[lx->pos + n])) return false;
    lx->pos += n;
    return true;
}

bool cxla_hlo_expect(cxla_hlo_lexer *lx, char c, const char *context) {
    if (cxla_hlo_accept(lx, c)) return true;
    return cxla_hlo_error_found(lx, lx->pos, "expected '%c' %s", c, context);
}

size_t cxla_hlo_name(cxla_hlo_lexer *lx, const char **out) {
    size_t q = cxla_hlo_skip(lx);
    if (q < lx->len && lx->text[q] == '%') q++;
    if (q >= lx->len || !cxla_hlo_is_name_start(lx->text[q])) return 0;
    size_t start = q;
    while (q < lx->len && cxla_hlo_is_name_char(lx->text[q])) q++;
    *out = lx->text + start;
    lx->pos = q;
    return q - start;
}

size_t cxla_hlo_word(cxla_hlo_lexer *lx, const char **out) {
    size_t q = cxla_hlo_skip(lx);
    size_t start = q;
    while (q < lx->len && is_word_char(lx->text[q])) q++;
    if (q == start) return 0;
    *out = lx->text + start;
    lx->pos = q;
    return q - start;
}

bool cxla_hlo_int(cxla_hlo_lexer *lx, int64_t *out, const char *what) {
    size_t q = cxla_hlo_skip(lx), start = q;
    bool negative = q < lx->len && lx->text[q] == '-';
    if (negative) q++;
    if (q >= lx->len || !is_digit(lx->text[q]))
        return cxla_hlo_error_found(lx, start, "expected an integer (%s)", what);
    uint64_t v = 0;
    while (q < lx->len && is_digit(lx->text[q])) {
        unsigned d = (unsigned)(lx->text[q] - '0');
        if (v > (UINT64_MAX - d) / 10)
            v = UINT64_MAX; /* saturate; rejected below */
        else
            v = v * 10 + d;
        q++;
    }
    if ((!negative && v > (uint64_t)INT64_MAX) || (negative && v > (uint64_t)INT64_MAX + 1))
        return cxla_hlo_error(lx, start, "the integer %.*s (%s) is out of range", (int)(q - start),
                              lx->text + start, what);
    *out = negative ? (int64_t)(0 - v) : (int64_t)v;
    lx->pos = q;
    return true;
}

bool cxla_hlo_float(cxla_hlo_lexer *lx, double *out, const char *what) {
    size_t q = cxla_hlo_skip(lx), start = q;
    bool negative = false;
    if (q < lx->len && (lx->text[q] == '-' || lx->text[q] == '+')) {
        negative = lx->text[q] == '-';
        q++;
    }
    if (lx->len - q >= 3 &&
        (memcmp(lx->text + q, "inf", 3) == 0 || memcmp(lx->text + q, "nan", 3) == 0) &&
        (q + 3 >= lx->len || !is_word_char(lx->text[q + 3]))) {
        double v = lx->text[q] == 'i' ? INFINITY : NAN;
        *out = negative ? -v : v;
        lx->pos = q + 3;
        return true;
    }
    char buf[80];
    size_t n = 0;
    if (negative) buf[n++] = '-';
    bool digits = false;
    while (q < lx->len && n < sizeof(buf) - 1) {
        char c = lx->text[q];
        bool exp_sign = (c == '-' || c == '+') && n > 0 && (buf[n - 1] == 'e' || buf[n - 1] == 'E');
        if (!(is_digit(c) || c == '.' || c == 'e' || c == 'E' || exp_sign)) break;
        if (is_digit(c)) digits = true;
        buf[n++] = c;
        q++;
    }
    buf[n] = 0;
    if (!digits) return cxla_hlo_error_found(lx, start, "expected a number (%s)", what);
    char *end = NULL;
    errno = 0;
    double v = strtod(buf, &end);
    if (!end || *end != 0)
        return cxla_hlo_error(lx, start, "malformed number '%s' (%s)", buf, what);
    *out = v;
    lx->pos = q;
    return true;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool cxla_hlo_string(cxla_hlo_lexer *lx, const char **out) {
    size_t q = cxla_hlo_skip(lx), start = q;
    if (q >= lx->len || lx->text[q] != '"')
        return cxla_hlo_error_found(lx, q, "expected a quoted string");
    size_t end = q;
    if (!cxla_hlo_skip_group(lx, &end)) return false;
    /* The unescaped text is never longer than the quoted one. */
    char *s = cxla_arena_alloc(lx->module->arena, end - start);
    if (!s) return cxla_hlo_oom(lx);
    size_t n = 0;
    for (q = start + 1; q < end - 1; q++) {
        char c = lx->text[q];
        if (c != '\\') {
            s[n++] = c;
            continue;
        }
        c = lx->text[++q]; /* skip_group guarantees a character after '\\' */
        switch (c) {
        case 'n': s[n++] = '\n'; break;
        case 't': s[n++] = '\t'; break;
        case 'r': s[n++] = '\r'; break;
        case 'a': s[n++] = '\a'; break;
        case 'b': s[n++] = '\b'; break;
        case 'f': s[n++] = '\f'; break;
        case 'v': s[n++] = '\v'; break;
        case 'x': {
            int v = 0, digits = 0;
            while (digits < 2 && q + 1 < end - 1 && hex_value(lx->text[q + 1]) >= 0) {
                v = v * 16 + hex_value(lx->text[++q]);
                digits++;
            }
            if (!digits) return cxla_hlo_error(lx, q - 1, "'\\x' without hex digits in a string");
            s[n++] = (char)v;
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                int v = c - '0', digits = 1;
                while (digits < 3 && q + 1 < end - 1 && lx->text[q + 1] >= '0' &&
                       lx->text[q + 1] <= '7') {
                    v = v * 8 + (lx->text[++q] - '0');
                    digits++;
                }
                s[n++] = (char)v;
            } else {
                s[n++] = c; /* \" \' \\ \? and anything else: the character itself */
            }
        }
    }
    s[n] = 0;
    if (strlen(s) != n)
        return cxla_hlo_error(lx, start, "strings with a NUL character (\\0) are not supported");
    *out = s;
    lx->pos = end;
    return true;
}

bool cxla_hlo_skip_group(cxla_hlo_lexer *lx, size_t *pos) {
    char stack[RAW_MAX_DEPTH];
    int depth = 0;
    size_t q = *pos, start = q;
    do {
        if (q >= lx->len) {
            if (depth > 0)
                return cxla_hlo_error(lx, start, "'%c' is never closed", lx->text[start]);
            return cxla_hlo_error(lx, start, "unexpected end of input");
        }
        char c = lx->text[q];
        if (c == 0) return cxla_hlo_error(lx, q, "a NUL byte in the text");
        if (c == '"' || c == '\'') {
            size_t open = q++;
            while (q < lx->len && lx->text[q] != c) {
                if (lx->text[q] == 0) return cxla_hlo_error(lx, q, "a NUL byte in a string");
                if (lx->text[q] == '\\') q++;
                q++;
            }
            if (q >= lx->len) return cxla_hlo_error(lx, open, "unterminated string");
            q++;
            continue;
        }
        if (c == '{' || c == '[' || c == '(') {
            if (depth == RAW_MAX_DEPTH)
                return cxla_hlo_error(lx, q, "brackets nested deeper than %d", RAW_MAX_DEPTH);
            stack[depth++] = c == '{' ? '}' : c == '[' ? ']' : ')';
        } else if (c == '}' || c == ']' || c == ')') {
            if (depth == 0 || stack[depth - 1] != c)
                return cxla_hlo_error(lx, q, "unbalanced '%c'", c);
            depth--;
        } else if (depth == 0) {
            return cxla_hlo_error_found(lx, q, "expected a quoted string or a bracketed group");
        }
        q++;
    } while (depth > 0);
    *pos = q;
    return true;
}

bool cxla_hlo_raw(cxla_hlo_lexer *lx, size_t *start, size_t *end, const char *what) {
    size_t q = cxla_hlo_skip(lx), first = q;
    while (q < lx->len) {
        char c = lx->text[q];
        if (c == '"' || c == '\'' || c == '{' || c == '[' || c == '(') {
            if (!cxla_hlo_skip_group(lx, &q)) return false;
            continue;
        }
        if (c == ',' || c == '}' || c == ']' || c == ')' || c == ' ' || c == '\t' || c == '\n' ||
            c == '\r')
            break;
        if (c == 0) return cxla_hlo_error(lx, q, "a NUL byte in the text");
        q++;
    }
    if (q == first) return cxla_hlo_error_found(lx, first, "expected a value for %s", what);
    *start = first;
    *end = q;
    lx->pos = q;
    return true;
}

/* ---- errors ------------------------------------------------------------------------ */

static void describe_found(cxla_strbuf *b, const cxla_hlo_lexer *lx, size_t pos) {
    if (pos >= lx->len) {
        cxla_strbuf_puts(b, "the end of the text");
        return;
    }
    char c = lx->text[pos];
    if (c == '/' && pos + 1 < lx->len && lx->text[pos + 1] == '*') {
        cxla_strbuf_puts(b, "an unterminated comment");
    } else if (cxla_hlo_is_name_char(c) || c == '%') {
        size_t end = pos + 1;
        while (end < lx->len && cxla_hlo_is_name_char(lx->text[end]) && end - pos < 40) end++;
        cxla_strbuf_printf(b, "'%.*s%s'", (int)(end - pos), lx->text + pos,
                           end < lx->len && cxla_hlo_is_name_char(lx->text[end]) ? "..." : "");
    } else if ((unsigned char)c >= 32 && (unsigned char)c < 127) {
        cxla_strbuf_printf(b, "'%c'", c);
    } else {
        cxla_strbuf_printf(b, "byte 0x%02x", (unsigned)(unsigned char)c);
    }
}

static bool record(cxla_hlo_lexer *lx, size_t pos, const char *message) {
    if (lx->error) return false;
    if (pos > lx->len) pos = lx->len;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    int64_t line, col;
    cxla_hlo_line_col(lx, pos, &line, &col);
    /* FILE:LINE:COL: message, as compilers write it (and the verifier, with the tool). */
    if (lx->filename) cxla_strbuf_printf(&b, "%s:", lx->filename);
    cxla_strbuf_printf(&b, "%" PRId64 ":%" PRId64 ": %s", line, col, message);
    /* The offending line with a caret, as cxla_describe_position shows it. */
    cxla_strbuf where;
    cxla_strbuf_init(&where);
    cxla_describe_position(&where, lx->text, lx->len, pos);
    const char *nl = where.data ? strchr(where.data, '\n') : NULL;
    if (nl) cxla_strbuf_puts(&b, nl);
    cxla_strbuf_free(&where);
    if (b.failed) {
        cxla_strbuf_free(&b);
        lx->error = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory reporting an error");
        return false;
    }
    lx->error = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s", b.data);
    cxla_strbuf_free(&b);
    return false;
}

static bool verror(cxla_hlo_lexer *lx, size_t pos, bool found, const char *format, va_list args) {
    if (lx->error) return false;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_vprintf(&b, format, args);
    if (found) {
        cxla_strbuf_puts(&b, ", found ");
        describe_found(&b, lx, pos);
    }
    bool r = record(lx, pos, b.data ? b.data : "error");
    cxla_strbuf_free(&b);
    return r;
}

bool cxla_hlo_error(cxla_hlo_lexer *lx, size_t pos, const char *format, ...) {
    va_list args;
    va_start(args, format);
    verror(lx, pos, false, format, args);
    va_end(args);
    return false;
}

bool cxla_hlo_error_found(cxla_hlo_lexer *lx, size_t pos, const char *format, ...) {
    va_list args;
    va_start(args, format);
    verror(lx, pos, true, format, args);
    va_end(args);
    return false;
}

bool cxla_hlo_oom(cxla_hlo_lexer *lx) {
    if (!lx->error)
        lx->error = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory parsing HLO text");
    return false;
}

/* Position of line |line|, column |col| in the text, or |fallback|. */
static size_t pos_of_line_col(const cxla_hlo_lexer *lx, long long line, long long col,
                              size_t fallback) {
    if (line < 1 || col < 1) return fallback;
    size_t q = 0;
    for (long long l = 1; l < line; l++) {
        while (q < lx->len && lx->text[q] != '\n') q++;
        if (q >= lx->len) return fallback;
        q++;
    }
    for (long long c = 1; c < col && q < lx->len && lx->text[q] != '\n'; c++) q++;
    return q;
}

bool cxla_hlo_fail_status(cxla_hlo_lexer *lx, cxla_status status, size_t pos) {
    if (!status) return true;
    if (lx->error || cxla_status_code_of(status) == CXLA_STATUS_RESOURCE_EXHAUSTED) {
        if (!lx->error)
            lx->error = status;
        else
            cxla_status_free(status);
        return false;
    }
    const char *msg = cxla_status_message(status);
    /* Other readers end their message with " at line L, column C" and the excerpt. */
    const char *at = strstr(msg, " at line ");
    long long line = 0, col = 0;
    size_t where = pos;
    int what_len = (int)strlen(msg);
    if (at && sscanf(at, " at line %lld, column %lld", &line, &col) == 2) {
        where = pos_of_line_col(lx, line, col, pos);
        what_len = (int)(at - msg);
    } else {
        const char *nl = strchr(msg, '\n');
        if (nl) what_len = (int)(nl - msg);
    }
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_printf(&b, "%.*s", what_len, msg);
    record(lx, where, b.data ? b.data : msg);
    cxla_strbuf_free(&b);
    cxla_status_free(status);
    return false;
}

void cxla_hlo_warn(cxla_hlo_lexer *lx, size_t pos, const char *format, ...) {
    int64_t line, col;
    cxla_hlo_line_col(lx, pos, &line, &col);
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    va_list args;
    va_start(args, format);
    cxla_strbuf_vprintf(&b, format, args);
    va_end(args);
    cxla_module_warn(lx->module, "%s%s%" PRId64 ":%" PRId64 ": warning: %s",
                     lx->filename ? lx->filename : "", lx->filename ? ":" : "", line, col,
                     b.data ? b.data : "");
    cxla_strbuf_free(&b);
}

/* ---- shapes ------------------------------------------------------------------------ */

bool cxla_hlo_fill_layouts(cxla_arena *arena, cxla_shape *shape) {
    if (shape->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < shape->tuple_count; i++)
            if (!cxla_hlo_fill_layouts(arena, &shape->elements[i])) return false;
        return true;
    }
    if (shape->layout || shape->rank == 0 || !cxla_type_is_array(shape->type)) return true;
    cxla_status st = cxla_layout_make_default(arena, shape->rank, &shape->layout);
    if (st) {
        cxla_status_free(st);
        return false;
    }
    return true;
}

bool cxla_hlo_shape(cxla_hlo_lexer *lx, cxla_shape *out) {
    size_t q = cxla_hlo_skip(lx);
    cxla_status st = cxla_shape_parse_at(lx->text, lx->len, &q, lx->module->arena, out);
    if (st) return cxla_hlo_fail_status(lx, st, lx->pos);
    lx->pos = q;
    if (!cxla_hlo_fill_layouts(lx->module->arena, out)) return cxla_hlo_oom(lx);
    return true;
}

/* ---- names ------------------------------------------------------------------------- */

bool cxla_hlo_names_init(cxla_hlo_names *names, cxla_arena *arena) {
    cxla_strmap_init(&names->opcodes, arena);
    cxla_strmap_init(&names->attrs, arena);
    for (int i = 0; i < CXLA_OP_COUNT; i++) {
        const char *n = cxla_opcode_name((cxla_opcode)i);
        if (!cxla_strmap_put(&names->opcodes, n, strlen(n), (void *)(uintptr_t)(i + 1)))
            return false;
    }
    for (int i = 0; i < CXLA_ATTR_UNKNOWN; i++) {
        const char *n = cxla_attr_get_info((cxla_attr_id)i)->name;
        if (!cxla_strmap_put(&names->attrs, n, strlen(n), (void *)(uintptr_t)(i + 1))) return false;
    }
    return true;
}

cxla_opcode cxla_hlo_lookup_opcode(const cxla_hlo_names *names, const char *name, size_t len) {
    uintptr_t v = (uintptr_t)cxla_strmap_get(&names->opcodes, name, len);
    if (v) return (cxla_opcode)(v - 1);
    return cxla_opcode_from_name(name, len); /* legacy names (rare) */
}

cxla_attr_id cxla_hlo_lookup_attr(const cxla_hlo_names *names, const char *name, size_t len) {
    uintptr_t v = (uintptr_t)cxla_strmap_get(&names->attrs, name, len);
    return v ? (cxla_attr_id)(v - 1) : CXLA_ATTR_UNKNOWN;
}
