/* The MLIR text reader of the StableHLO front end: modules, functions, ops in the pretty
 * and generic syntax, regions, attributes and types, into the op tree of mlir.h.
 *
 * The pretty syntax differs per op; instead of one grammar per op the reader collects
 * what any of them writes (operands, key = value pairs, bare words, @callee, [slices],
 * an attribute dictionary, the type signature after ':' and trailing regions) and leaves
 * the meaning to the converter. An op ends where the next statement starts: a result
 * list followed by '=', an op name, or the '}' that closes the block.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stablehlo/mlir.h"

typedef struct parser {
    mlir_module *m;
    const char *t;
    size_t n, pos;
    cxla_status err;
    int depth;
} parser;

enum { MAX_DEPTH = 200 };

cxla_status mlir_error_at(const mlir_module *m, size_t pos, const char *format, ...) {
    int64_t line = 0, col = 0;
    cxla_text_line_col(m->text, m->len, pos, &line, &col);
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_printf(&b, "%s:%" PRId64 ":%" PRId64 ": ", m->filename ? m->filename : "<text>",
                       line, col);
    va_list ap;
    va_start(ap, format);
    cxla_strbuf_vprintf(&b, format, ap);
    va_end(ap);
    cxla_status st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s", b.data ? b.data : "error");
    cxla_strbuf_free(&b);
    return st;
}

static bool fail(parser *p, size_t pos, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(parser *p, size_t pos, const char *format, ...) {
    if (p->err) return false;
    char msg[512];
    va_list ap;
    va_start(ap, format);
    vsnprintf(msg, sizeof msg, format, ap);
    va_end(ap);
    /* Say what is there. */
    char found[40];
    size_t k = 0;
    if (pos >= p->n) {
        snprintf(found, sizeof found, "end of input");
    } else {
        found[k++] = '\'';
        for (size_t i = pos; i < p->n && k < 30 && p->t[i] != '\n'; i++)
            found[k++] = isprint((unsigned char)p->t[i]) ? p->t[i] : '?';
        found[k++] = '\'';
        found[k] = 0;
    }
    p->err = mlir_error_at(p->m, pos, "%s, found %s", msg, found);
    return false;
}

static bool oom(parser *p) {
    if (!p->err) p->err = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    return false;
}

static void *alloc(parser *p, size_t size) {
    void *r = cxla_arena_alloc(p->m->arena, size ? size : 1);
    if (r) memset(r, 0, size ? size : 1);
    return r;
}

static const char *dup(parser *p, const char *s, size_t len) {
    return cxla_arena_strndup(p->m->arena, s, len);
}

/* A growable array of pointers, copied into the arena when done. */
typedef struct vec {
    void **items;
    int64_t count, cap;
} vec;

static bool vpush(parser *p, vec *v, void *x) {
    if (v->count == v->cap) {
        int64_t cap = v->cap ? v->cap * 2 : 8;
        void **q = realloc(v->items, (size_t)cap * sizeof(void *));
        if (!q) return oom(p);
        v->items = q;
        v->cap = cap;
    }
    v->items[v->count++] = x;
    return true;
}

static void **vdone(parser *p, vec *v) {
    void **r = alloc(p, (size_t)(v->count ? v->count : 1) * sizeof(void *));
    if (r && v->count) memcpy(r, v->items, (size_t)v->count * sizeof(void *));
    free(v->items);
    v->items = NULL;
    v->cap = 0;
    return r;
}

/* ---- characters ----------------------------------------------------------------------- */

static void skip(parser *p) {
    while (p->pos < p->n) {
        char c = p->t[p->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            p->pos++;
        } else if (c == '/' && p->pos + 1 < p->n && p->t[p->pos + 1] == '/') {
            while (p->pos < p->n && p->t[p->pos] != '\n') p->pos++;
        } else {
            break;
        }
    }
}

static char peek(parser *p) {
    skip(p);
    return p->pos < p->n ? p->t[p->pos] : 0;
}

static char peek_at(parser *p, size_t off) {
    return p->pos + off < p->n ? p->t[p->pos + off] : 0;
}

static bool accept(parser *p, char c) {
    if (peek(p) == c) {
        p->pos++;
        return true;
    }
    return false;
}

static bool accept_str(parser *p, const char *s) {
    skip(p);
    size_t k = strlen(s);
    if (p->pos + k <= p->n && memcmp(p->t + p->pos, s, k) == 0) {
        p->pos += k;
        return true;
    }
    return false;
}

static bool expect(parser *p, char c, const char *context) {
    if (accept(p, c)) return true;
    return fail(p, p->pos, "expected '%c' %s", c, context);
}

static bool is_word_start(char c) {
    return isalpha((unsigned char)c) || c == '_';
}
static bool is_word_char(char c) {
    return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$' || c == '-';
}

/* A bare identifier [A-Za-z_][A-Za-z0-9_.$-]*; returns its length (0: none). */
static size_t word(parser *p, const char **out) {
    skip(p);
    if (p->pos >= p->n || !is_word_start(p->t[p->pos])) return 0;
    size_t s = p->pos;
    while (p->pos < p->n && is_word_char(p->t[p->pos])) {
        /* '-' only inside a word, never the start of '->' */
        if (p->t[p->pos] == '-' && p->pos + 1 < p->n && p->t[p->pos + 1] == '>') break;
        p->pos++;
    }
    *out = p->t + s;
    return p->pos - s;
}

static bool word_is(const char *w, size_t n, const char *s) {
    return strlen(s) == n && memcmp(w, s, n) == 0;
}

static bool accept_keyword(parser *p, const char *kw) {
    skip(p);
    size_t save = p->pos;
    const char *w;
    size_t n = word(p, &w);
    if (n && word_is(w, n, kw)) return true;
    p->pos = save;
    return false;
}

/* %name or %name#k (value names; also block arguments). Returns the arena copy. */
static const char *value_name(parser *p) {
    skip(p);
    if (peek(p) != '%') {
        fail(p, p->pos, "expected a value name ('%%...')");
        return NULL;
    }
    size_t s = p->pos++;
    while (p->pos < p->n && (isalnum((unsigned char)p->t[p->pos]) || p->t[p->pos] == '_' ||
                             p->t[p->pos] == '$' || p->t[p->pos] == '.' || p->t[p->pos] == '-'))
        p->pos++;
    if (p->pos == s + 1) {
        fail(p, s, "expected a value name after '%%'");
        return NULL;
    }
    if (p->pos < p->n && p->t[p->pos] == '#') {
        p->pos++;
        size_t d = p->pos;
        while (p->pos < p->n && isdigit((unsigned char)p->t[p->pos])) p->pos++;
        if (p->pos == d) {
            fail(p, d, "expected a result number after '#'");
            return NULL;
        }
    }
    const char *r = dup(p, p->t + s, p->pos - s);
    if (!r) oom(p);
    return r;
}

static bool parse_int(parser *p, int64_t *out) {
    skip(p);
    size_t s = p->pos;
    bool neg = false;
    if (p->pos < p->n && (p->t[p->pos] == '-' || p->t[p->pos] == '+')) {
        neg = p->t[p->pos] == '-';
        p->pos++;
    }
    if (p->pos >= p->n || !isdigit((unsigned char)p->t[p->pos]))
        return fail(p, s, "expected an integer");
    uint64_t v = 0;
    bool hex = p->pos + 1 < p->n && p->t[p->pos] == '0' &&
               (p->t[p->pos + 1] == 'x' || p->t[p->pos + 1] == 'X');
    if (hex) p->pos += 2;
    size_t d = p->pos;
    while (p->pos < p->n &&
           (hex ? isxdigit((unsigned char)p->t[p->pos]) : isdigit((unsigned char)p->t[p->pos]))) {
        int digit = isdigit((unsigned char)p->t[p->pos]) ? p->t[p->pos] - '0'
                                                         : (tolower(p->t[p->pos]) - 'a' + 10);
        uint64_t base = hex ? 16 : 10;
        if (v > (UINT64_MAX - (uint64_t)digit) / base) return fail(p, s, "integer too large");
        v = v * base + (uint64_t)digit;
        p->pos++;
    }
    if (p->pos == d) return fail(p, s, "expected digits");
    if (!neg && v > (uint64_t)INT64_MAX && !hex) return fail(p, s, "integer too large");
    if (neg && v > (uint64_t)INT64_MAX + 1) return fail(p, s, "integer too large");
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* ---- types ---------------------------------------------------------------------------- */

cxla_type mlir_element_type(const char *s, size_t n) {
    static const struct {
        const char *name;
        cxla_type type;
    } table[] = {
        {"i1", CXLA_PRED},
        {"i2", CXLA_S2},
        {"i4", CXLA_S4},
        {"i8", CXLA_S8},
        {"i16", CXLA_S16},
        {"i32", CXLA_S32},
        {"i64", CXLA_S64},
        {"si2", CXLA_S2},
        {"si4", CXLA_S4},
        {"si8", CXLA_S8},
        {"si16", CXLA_S16},
        {"si32", CXLA_S32},
        {"si64", CXLA_S64},
        {"ui1", CXLA_U1},
        {"ui2", CXLA_U2},
        {"ui4", CXLA_U4},
        {"ui8", CXLA_U8},
        {"ui16", CXLA_U16},
        {"ui32", CXLA_U32},
        {"ui64", CXLA_U64},
        {"index", CXLA_S64},
        {"f16", CXLA_F16},
        {"bf16", CXLA_BF16},
        {"f32", CXLA_F32},
        {"f64", CXLA_F64},
        {"f8E5M2", CXLA_F8E5M2},
        {"f8E4M3", CXLA_F8E4M3},
        {"f8E4M3FN", CXLA_F8E4M3FN},
        {"f8E4M3B11FNUZ", CXLA_F8E4M3B11FNUZ},
        {"f8E3M4", CXLA_F8E3M4},
        {"f8E5M2FNUZ", CXLA_F8E5M2FNUZ},
        {"f8E4M3FNUZ", CXLA_F8E4M3FNUZ},
        {"f8E8M0FNU", CXLA_F8E8M0FNU},
        {"f4E2M1FN", CXLA_F4E2M1FN},
        {"f6E2M3FN", CXLA_F6E2M3FN},
        {"f6E3M2FN", CXLA_F6E3M2FN},
    };
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(table); i++)
        if (word_is(s, n, table[i].name)) return table[i].type;
    return CXLA_TYPE_INVALID;
}

static bool parse_type(parser *p, cxla_shape *out);

static bool element_type(parser *p, cxla_type *out) {
    skip(p);
    size_t s = p->pos;
    const char *w;
    size_t n = word(p, &w);
    if (n && word_is(w, n, "complex")) {
        if (!expect(p, '<', "after 'complex'")) return false;
        size_t cs = p->pos;
        n = word(p, &w);
        cxla_type comp = mlir_element_type(w, n);
        if (!expect(p, '>', "after the complex component type")) return false;
        if (comp == CXLA_F32) {
            *out = CXLA_C64;
        } else if (comp == CXLA_F64) {
            *out = CXLA_C128;
        } else {
            return fail(p, cs, "complex types need f32 or f64 components");
        }
        return true;
    }
    if (!n) return fail(p, s, "expected an element type");
    *out = mlir_element_type(w, n);
    if (*out == CXLA_TYPE_INVALID) return fail(p, s, "unknown element type '%.*s'", (int)n, w);
    return true;
}

/* tensor<2x?x3xf32, #stablehlo.bounds<...>> */
static bool tensor_type(parser *p, cxla_shape *out) {
    if (!expect(p, '<', "after 'tensor'")) return false;
    int64_t dims[CXLA_MAX_RANK];
    uint8_t dyn[CXLA_MAX_RANK];
    int64_t rank = 0;
    bool any_dyn = false;
    for (;;) {
        skip(p);
        char c = peek(p);
        if (c == '?' || isdigit((unsigned char)c)) {
            int64_t d = CXLA_DIM_UNBOUNDED;
            bool is_dyn = false;
            if (c == '?') {
                p->pos++;
                is_dyn = true;
            } else {
                size_t s = p->pos;
                while (p->pos < p->n && isdigit((unsigned char)p->t[p->pos])) p->pos++;
                d = 0;
                for (size_t i = s; i < p->pos; i++) {
                    if (d > (INT64_MAX - 9) / 10) return fail(p, s, "dimension too large");
                    d = d * 10 + (p->t[i] - '0');
                }
            }
            if (p->pos >= p->n || p->t[p->pos] != 'x')
                return fail(p, p->pos, "expected 'x' after a dimension");
            p->pos++;
            if (rank >= CXLA_MAX_RANK) return fail(p, p->pos, "too many dimensions");
            dims[rank] = d;
            dyn[rank] = is_dyn;
            any_dyn |= is_dyn;
            rank++;
            continue;
        }
        break;
    }
    cxla_type et;
    if (!element_type(p, &et)) return false;
    /* An encoding: bounds of dynamic dimensions. */
    if (accept(p, ',')) {
        size_t s = p->pos;
        if (accept_str(p, "#stablehlo.bounds<") || accept_str(p, "#stablehlo.type_extensions<")) {
            accept_keyword(p, "bounds");
            accept(p, '=');
            accept(p, '[');
            for (int64_t i = 0; i < rank; i++) {
                if (i && !expect(p, ',', "between bounds")) return false;
                if (accept(p, '?')) continue;
                int64_t b;
                if (!parse_int(p, &b)) return false;
                if (dyn[i]) dims[i] = b;
            }
            accept(p, ']');
            if (!expect(p, '>', "after the bounds")) return false;
        } else {
            return fail(p, s, "unsupported tensor encoding");
        }
    }
    if (!expect(p, '>', "to close the tensor type")) return false;
    memset(out, 0, sizeof *out);
    out->type = et;
    out->rank = rank;
    out->dims = alloc(p, sizeof(int64_t) * (size_t)(rank ? rank : 1));
    if (!out->dims) return oom(p);
    memcpy(out->dims, dims, sizeof(int64_t) * (size_t)rank);
    if (any_dyn) {
        out->dynamic = alloc(p, (size_t)rank);
        if (!out->dynamic) return oom(p);
        memcpy(out->dynamic, dyn, (size_t)rank);
    }
    return true;
}

static bool parse_type(parser *p, cxla_shape *out) {
    skip(p);
    if (++p->depth > MAX_DEPTH) return fail(p, p->pos, "types nested too deeply");
    size_t s = p->pos;
    bool ok = false;
    memset(out, 0, sizeof *out);
    if (accept_str(p, "!stablehlo.token") || accept_str(p, "!mhlo.token")) {
        out->type = CXLA_TOKEN;
        ok = true;
    } else {
        const char *w;
        size_t n = word(p, &w);
        if (n && word_is(w, n, "tensor")) {
            ok = tensor_type(p, out);
        } else if (n && word_is(w, n, "tuple")) {
            if (!expect(p, '<', "after 'tuple'")) goto done;
            vec els = {0};
            if (!accept(p, '>')) {
                do {
                    cxla_shape *e = alloc(p, sizeof *e);
                    if (!e || !vpush(p, &els, e)) {
                        free(els.items);
                        ok = oom(p);
                        goto done;
                    }
                    if (!parse_type(p, e)) {
                        free(els.items);
                        goto done;
                    }
                } while (accept(p, ','));
                if (!expect(p, '>', "to close the tuple type")) {
                    free(els.items);
                    goto done;
                }
            }
            out->type = CXLA_TUPLE;
            out->tuple_count = els.count;
            out->elements = alloc(p, sizeof(cxla_shape) * (size_t)(els.count ? els.count : 1));
            if (!out->elements) {
                free(els.items);
                ok = oom(p);
                goto done;
            }
            for (int64_t i = 0; i < els.count; i++) out->elements[i] = *(cxla_shape *)els.items[i];
            free(els.items);
            ok = true;
        } else if (n) {
            /* A bare element type: a scalar (as in some attribute types). */
            p->pos = s;
            cxla_type et;
            if (element_type(p, &et)) {
                out->type = et;
                out->dims = alloc(p, sizeof(int64_t));
                ok = out->dims != NULL;
            }
        } else {
            fail(p, s, "expected a type");
        }
    }
done:
    p->depth--;
    return ok;
}

/* ---- attributes ----------------------------------------------------------------------- */

static mlir_attr *parse_attr(parser *p, bool in_dict);

static mlir_attr *new_attr(parser *p, mlir_attr_kind kind, size_t pos) {
    mlir_attr *a = alloc(p, sizeof *a);
    if (!a) {
        oom(p);
        return NULL;
    }
    a->kind = kind;
    a->pos = pos;
    return a;
}

static bool parse_string(parser *p, const char **out, size_t *out_len) {
    skip(p);
    if (p->pos >= p->n || p->t[p->pos] != '"') return fail(p, p->pos, "expected a string");
    size_t s = ++p->pos;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    while (p->pos < p->n && p->t[p->pos] != '"') {
        char c = p->t[p->pos++];
        if (c == '\\' && p->pos < p->n) {
            char e = p->t[p->pos++];
            if (isxdigit((unsigned char)e) && p->pos < p->n &&
                isxdigit((unsigned char)p->t[p->pos])) {
                char hx[3] = {e, p->t[p->pos++], 0};
                c = (char)strtol(hx, NULL, 16);
            } else if (e == 'n') {
                c = '\n';
            } else if (e == 't') {
                c = '\t';
            } else {
                c = e;
            }
        }
        cxla_strbuf_putc(&b, c);
    }
    if (p->pos >= p->n) {
        cxla_strbuf_free(&b);
        return fail(p, s - 1, "unterminated string");
    }
    p->pos++;
    *out_len = b.len;
    *out = dup(p, b.data ? b.data : "", b.len);
    cxla_strbuf_free(&b);
    return *out ? true : oom(p);
}

/* A number token (int, float, hex, inf, nan) at the cursor: its text range. */
static bool number_token(parser *p, size_t *s, size_t *len) {
    skip(p);
    *s = p->pos;
    size_t i = p->pos;
    if (i < p->n && (p->t[i] == '-' || p->t[i] == '+')) i++;
    if (i + 1 < p->n && p->t[i] == '0' && (p->t[i + 1] == 'x' || p->t[i + 1] == 'X')) {
        i += 2;
        while (i < p->n && isxdigit((unsigned char)p->t[i])) i++;
    } else if (i < p->n && (isdigit((unsigned char)p->t[i]) || p->t[i] == '.')) {
        while (i < p->n && (isdigit((unsigned char)p->t[i]) || p->t[i] == '.')) i++;
        if (i < p->n && (p->t[i] == 'e' || p->t[i] == 'E')) {
            i++;
            if (i < p->n && (p->t[i] == '-' || p->t[i] == '+')) i++;
            while (i < p->n && isdigit((unsigned char)p->t[i])) i++;
        }
    } else if (i < p->n && isalpha((unsigned char)p->t[i])) {
        while (i < p->n && isalpha((unsigned char)p->t[i])) i++;
    } else {
        return fail(p, *s, "expected a number");
    }
    *len = i - *s;
    p->pos = i;
    return true;
}

static bool dense_elements(parser *p, mlir_attr *a, vec *pos, vec *len, int depth) {
    if (depth > MAX_DEPTH) return fail(p, p->pos, "dense value nested too deeply");
    char c = peek(p);
    if (c == '[') {
        p->pos++;
        if (accept(p, ']')) return true;
        do {
            if (!dense_elements(p, a, pos, len, depth + 1)) return false;
        } while (accept(p, ','));
        return expect(p, ']', "to close a dense list");
    }
    if (c == '(') { /* complex (re, im) */
        p->pos++;
        if (!dense_elements(p, a, pos, len, depth + 1)) return false;
        if (!expect(p, ',', "between the parts of a complex value")) return false;
        if (!dense_elements(p, a, pos, len, depth + 1)) return false;
        return expect(p, ')', "to close a complex value");
    }
    size_t s, l;
    if (!number_token(p, &s, &l)) return false;
    return vpush(p, pos, (void *)(uintptr_t)s) && vpush(p, len, (void *)(uintptr_t)l);
}

/* dense<...> : type */
static mlir_attr *parse_dense(parser *p, size_t start) {
    mlir_attr *a = new_attr(p, MA_DENSE, start);
    if (!a || !expect(p, '<', "after 'dense'")) return NULL;
    char c = peek(p);
    if (c == '"') {
        const char *s;
        size_t n;
        if (!parse_string(p, &s, &n)) return NULL;
        /* The string was unescaped; a hex blob is "0x...". */
        if (n < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) {
            fail(p, start, "a dense string must be hex ('0x...')");
            return NULL;
        }
        a->hex = s + 2;
        a->hex_len = n - 2;
    } else if (c == '>') {
        /* dense<> : an empty tensor */
    } else {
        a->splat = c != '[';
        vec pos = {0}, len = {0};
        bool ok = dense_elements(p, a, &pos, &len, 0);
        a->tok_count = pos.count;
        a->tok_pos = (size_t *)alloc(p, sizeof(size_t) * (size_t)(pos.count ? pos.count : 1));
        a->tok_len = (size_t *)alloc(p, sizeof(size_t) * (size_t)(pos.count ? pos.count : 1));
        if (ok && (!a->tok_pos || !a->tok_len)) ok = oom(p);
        for (int64_t i = 0; ok && i < pos.count; i++) {
            a->tok_pos[i] = (size_t)(uintptr_t)pos.items[i];
            a->tok_len[i] = (size_t)(uintptr_t)len.items[i];
        }
        free(pos.items);
        free(len.items);
        if (!ok) return NULL;
    }
    if (!expect(p, '>', "to close 'dense<'")) return NULL;
    if (!expect(p, ':', "and the type after a dense value")) return NULL;
    if (!parse_type(p, &a->type)) return NULL;
    a->has_type = true;
    return a;
}

/* [a, b, ...] possibly followed by 'x' [..] and '->' [..] (dot and conv dimensions). */
static mlir_attr *parse_array(parser *p, size_t start) {
    mlir_attr *a = new_attr(p, MA_ARRAY, start);
    if (!a) return NULL;
    vec items = {0};
    if (!accept(p, ']')) {
        do {
            mlir_attr *e = parse_attr(p, false);
            if (!e || !vpush(p, &items, e)) {
                free(items.items);
                return NULL;
            }
        } while (accept(p, ','));
        if (!expect(p, ']', "to close a list")) {
            free(items.items);
            return NULL;
        }
    }
    a->count = items.count;
    a->items = (mlir_attr **)vdone(p, &items);
    if (!a->items) return oom(p), NULL;
    /* [..] x [..] (-> [..]) */
    skip(p);
    size_t save = p->pos;
    bool cross = false;
    if (p->pos < p->n && p->t[p->pos] == 'x') {
        p->pos++;
        if (peek(p) == '[') cross = true;
    }
    if (!cross) {
        p->pos = save;
        return a;
    }
    mlir_attr *group = new_attr(p, MA_ARRAY, start);
    if (!group) return NULL;
    vec groups = {0};
    vpush(p, &groups, a);
    for (;;) {
        if (!expect(p, '[', "to start a dimension list")) break;
        mlir_attr *b = parse_array(p, p->pos - 1);
        if (!b) break;
        if (b->cross) { /* a nested cross: flatten */
            for (int64_t i = 0; i < b->count; i++) vpush(p, &groups, b->items[i]);
        } else {
            vpush(p, &groups, b);
        }
        if (accept_str(p, "->")) continue;
        break;
    }
    if (p->err) {
        free(groups.items);
        return NULL;
    }
    group->cross = true;
    group->count = groups.count;
    group->items = (mlir_attr **)vdone(p, &groups);
    return group->items ? group : (oom(p), NULL);
}

/* Entries "key = value" or plain values up to |close|. */
static bool parse_entries(parser *p, mlir_attr *a, char close, bool in_dict) {
    vec keys = {0}, items = {0};
    bool ok = true;
    if (!accept(p, close)) {
        do {
            skip(p);
            size_t save = p->pos;
            const char *k = NULL;
            size_t kn = 0;
            if (peek(p) == '"') {
                const char *s;
                size_t n;
                if (!parse_string(p, &s, &n)) {
                    ok = false;
                    break;
                }
                if (peek(p) == '=') {
                    k = s;
                    kn = n;
                } else {
                    p->pos = save;
                }
            } else {
                kn = word(p, &k);
                if (kn && peek(p) != '=') {
                    /* a bare key (unit attribute) in a dictionary, or a value */
                    char c = peek(p);
                    if (in_dict && (c == ',' || c == close)) {
                        mlir_attr *u = new_attr(p, MA_UNIT, save);
                        const char *kk = dup(p, k, kn);
                        if (!u || !kk || !vpush(p, &keys, (void *)kk) || !vpush(p, &items, u)) {
                            ok = oom(p);
                            break;
                        }
                        continue;
                    }
                    p->pos = save;
                    kn = 0;
                    k = NULL;
                }
            }
            const char *key = NULL;
            if (kn) {
                accept(p, '=');
                key = dup(p, k, kn);
                if (!key) {
                    ok = oom(p);
                    break;
                }
            }
            mlir_attr *v = parse_attr(p, in_dict);
            if (!v || !vpush(p, &keys, (void *)key) || !vpush(p, &items, v)) {
                ok = false;
                break;
            }
        } while (accept(p, ','));
        if (ok && !accept(p, close)) ok = fail(p, p->pos, "expected ',' or '%c'", close);
    }
    a->count = items.count;
    a->keys = (const char **)vdone(p, &keys);
    a->items = (mlir_attr **)vdone(p, &items);
    if (ok && (!a->keys || !a->items)) ok = oom(p);
    return ok && !p->err;
}

/* #dialect.name<...> or #dialect<word ...> */
static mlir_attr *parse_dialect(parser *p, size_t start) {
    p->pos++; /* '#' */
    const char *w;
    size_t n = word(p, &w);
    if (!n) return fail(p, start, "expected a dialect attribute name after '#'"), NULL;
    mlir_attr *a = new_attr(p, MA_DIALECT, start);
    if (!a) return NULL;
    a->s = dup(p, w, n);
    a->slen = n;
    if (!a->s) return oom(p), NULL;
    if (p->pos < p->n && p->t[p->pos] == '<') {
        p->pos++;
        /* #stablehlo<comparison_direction LT>: name then value words */
        skip(p);
        size_t save = p->pos;
        const char *k;
        size_t kn = word(p, &k);
        if (kn && (peek(p) != '=' && peek(p) != ',' && peek(p) != '>') && !strchr(a->s, '.')) {
            /* "#stablehlo<kind VALUE>" */
            char *full = cxla_arena_alloc(p->m->arena, n + kn + 2);
            if (!full) return oom(p), NULL;
            memcpy(full, w, n);
            full[n] = '.';
            memcpy(full + n + 1, k, kn);
            full[n + 1 + kn] = 0;
            a->s = full;
            a->slen = n + 1 + kn;
        } else {
            p->pos = save;
        }
        if (!parse_entries(p, a, '>', true)) return NULL;
    }
    return a;
}

/* One attribute value. In a dictionary, numbers may carry ': type'. */
static mlir_attr *parse_attr(parser *p, bool in_dict) {
    skip(p);
    if (++p->depth > MAX_DEPTH) {
        fail(p, p->pos, "attributes nested too deeply");
        p->depth--;
        return NULL;
    }
    size_t s = p->pos;
    mlir_attr *a = NULL;
    char c = peek(p);
    if (c == '[') {
        p->pos++;
        a = parse_array(p, s);
    } else if (c == '{') {
        p->pos++;
        a = new_attr(p, MA_DICT, s);
        if (a && !parse_entries(p, a, '}', true)) a = NULL;
    } else if (c == '"') {
        a = new_attr(p, MA_STRING, s);
        if (a && !parse_string(p, &a->s, &a->slen)) a = NULL;
    } else if (c == '@') {
        p->pos++;
        a = new_attr(p, MA_SYMBOL, s);
        if (a) {
            const char *w;
            size_t n;
            if (peek(p) == '"') {
                if (!parse_string(p, &w, &n)) a = NULL;
            } else {
                n = word(p, &w);
            }
            if (a && !n) {
                fail(p, s, "expected a symbol name after '@'");
                a = NULL;
            }
            if (a) {
                a->s = dup(p, w, n);
                a->slen = n;
            }
        }
    } else if (c == '#') {
        a = parse_dialect(p, s);
    } else if (c == '-' || c == '+' || isdigit((unsigned char)c)) {
        size_t ts, tl;
        if (number_token(p, &ts, &tl)) {
            char buf[80];
            if (tl >= sizeof buf) tl = sizeof buf - 1;
            memcpy(buf, p->t + ts, tl);
            buf[tl] = 0;
            bool is_float = strchr(buf, '.') || strchr(buf, 'e') || strchr(buf, 'E') ||
                            strchr(buf, 'n') || strchr(buf, 'i');
            if (strstr(buf, "0x") || strstr(buf, "0X")) is_float = false;
            if (is_float) {
                a = new_attr(p, MA_FLOAT, s);
                if (a) a->f = strtod(buf, NULL);
            } else {
                p->pos = ts;
                int64_t v;
                if (parse_int(p, &v)) {
                    a = new_attr(p, MA_INT, s);
                    if (a) {
                        a->i = v;
                        a->f = (double)v;
                    }
                }
            }
            if (a && in_dict && peek(p) == ':') {
                p->pos++;
                if (!parse_type(p, &a->type))
                    a = NULL;
                else
                    a->has_type = true;
            }
        }
    } else if (is_word_start(c)) {
        const char *w;
        size_t n = word(p, &w);
        if (word_is(w, n, "dense")) {
            a = parse_dense(p, s);
        } else if (word_is(w, n, "true") || word_is(w, n, "false")) {
            a = new_attr(p, MA_BOOL, s);
            if (a) {
                a->b = w[0] == 't';
                a->i = a->b;
            }
            if (a && in_dict && peek(p) == ':') {
                p->pos++;
                if (!parse_type(p, &a->type)) a = NULL;
            }
        } else if (word_is(w, n, "array")) {
            /* array<i64: 1, 2> */
            a = new_attr(p, MA_ARRAY, s);
            if (a && expect(p, '<', "after 'array'")) {
                cxla_type et;
                if (!element_type(p, &et)) {
                    a = NULL;
                } else {
                    vec items = {0};
                    if (accept(p, ':')) {
                        do {
                            mlir_attr *e = parse_attr(p, false);
                            if (!e || !vpush(p, &items, e)) {
                                a = NULL;
                                break;
                            }
                        } while (accept(p, ','));
                    }
                    if (a) {
                        a->count = items.count;
                        a->items = (mlir_attr **)vdone(p, &items);
                        if (!expect(p, '>', "to close 'array<'")) a = NULL;
                    } else {
                        free(items.items);
                    }
                }
            } else {
                a = NULL;
            }
        } else if (word_is(w, n, "tensor") || word_is(w, n, "tuple")) {
            p->pos = s;
            a = new_attr(p, MA_TYPE, s);
            if (a && !parse_type(p, &a->type)) a = NULL;
        } else if (word_is(w, n, "unit")) {
            a = new_attr(p, MA_UNIT, s);
        } else {
            a = new_attr(p, MA_WORD, s);
            if (a) {
                a->s = dup(p, w, n);
                a->slen = n;
                if (!a->s) a = NULL, oom(p);
            }
        }
    } else if (c == '(') {
        /* (a, b): a parenthesized list, e.g. a type list; kept as an array */
        p->pos++;
        a = new_attr(p, MA_ARRAY, s);
        if (a && !parse_entries(p, a, ')', false)) a = NULL;
    } else if (c == '<') {
        /* <key = value, ...> (e.g. a dot algorithm) */
        p->pos++;
        a = new_attr(p, MA_DICT, s);
        if (a && !parse_entries(p, a, '>', true)) a = NULL;
    } else if (c == '!') {
        a = new_attr(p, MA_TYPE, s);
        if (a && !parse_type(p, &a->type)) a = NULL;
    } else {
        fail(p, s, "expected an attribute value");
    }
    p->depth--;
    return p->err ? NULL : a;
}

/* ---- ops ------------------------------------------------------------------------------ */

typedef struct op_builder {
    vec results, operands, attr_names, attrs, words, iters, regions;
} op_builder;

static void ob_free(op_builder *b) {
    free(b->results.items);
    free(b->operands.items);
    free(b->attr_names.items);
    free(b->attrs.items);
    free(b->words.items);
    free(b->iters.items);
    free(b->regions.items);
}

static mlir_block *parse_block_body(parser *p, const char **arg_names, cxla_shape *arg_types,
                                    int64_t arg_count);

/* { ^bb0(%a: t, ...): ops } or { ops } */
static mlir_region *parse_region(parser *p) {
    if (!expect(p, '{', "to start a region")) return NULL;
    vec names = {0}, types = {0};
    if (peek(p) == '^') {
        while (p->pos < p->n && (is_word_char(p->t[p->pos]) || p->t[p->pos] == '^')) p->pos++;
        if (accept(p, '(') && !accept(p, ')')) {
            do {
                const char *nm = value_name(p);
                cxla_shape *t = alloc(p, sizeof *t);
                if (!nm || !t || !expect(p, ':', "after a block argument") || !parse_type(p, t) ||
                    !vpush(p, &names, (void *)nm) || !vpush(p, &types, t)) {
                    free(names.items);
                    free(types.items);
                    return NULL;
                }
                if (peek(p) == 'l' && accept_keyword(p, "loc")) { /* loc(...) */
                    int d = 0;
                    do {
                        char c = p->t[p->pos++];
                        d += c == '(';
                        d -= c == ')';
                    } while (p->pos < p->n && d > 0);
                }
            } while (accept(p, ','));
            if (!expect(p, ')', "to close the block arguments")) {
                free(names.items);
                free(types.items);
                return NULL;
            }
        }
        if (!expect(p, ':', "after the block label")) {
            free(names.items);
            free(types.items);
            return NULL;
        }
    }
    int64_t count = names.count;
    cxla_shape *tarr = alloc(p, sizeof(cxla_shape) * (size_t)(count ? count : 1));
    if (!tarr) return oom(p), NULL;
    for (int64_t i = 0; i < count; i++) tarr[i] = *(cxla_shape *)types.items[i];
    free(types.items);
    const char **narr = (const char **)vdone(p, &names);
    if (!narr) return oom(p), NULL;
    mlir_region *r = alloc(p, sizeof *r);
    if (!r) return oom(p), NULL;
    r->block = parse_block_body(p, narr, tarr, count);
    if (!r->block) return NULL;
    if (!expect(p, '}', "to close the region")) return NULL;
    return r;
}

/* Does a new statement start here? (results then '=', an op name, '}') */
static bool at_statement_start(parser *p) {
    skip(p);
    if (p->pos >= p->n) return true;
    char c = p->t[p->pos];
    if (c == '}') return true;
    if (c == '%') {
        size_t save = p->pos;
        bool is_def = false;
        for (;;) {
            skip(p);
            if (peek(p) != '%') break;
            p->pos++;
            while (p->pos < p->n && (is_word_char(p->t[p->pos]) || p->t[p->pos] == '#')) p->pos++;
            if (peek(p) == ':' && isdigit((unsigned char)peek_at(p, 1))) {
                p->pos++;
                while (p->pos < p->n && isdigit((unsigned char)p->t[p->pos])) p->pos++;
            }
            if (accept(p, ',')) continue;
            if (peek(p) == '=' && peek_at(p, 1) != '=') is_def = true;
            break;
        }
        p->pos = save;
        return is_def;
    }
    if (c == '"') {
        /* "op.name"( starts a generic op; "name" %x is a pretty op's string */
        size_t i = p->pos + 1;
        while (i < p->n && p->t[i] != '"' && p->t[i] != '\n') i++;
        i++;
        while (i < p->n && (p->t[i] == ' ' || p->t[i] == '\t')) i++;
        return i < p->n && p->t[i] == '(';
    }
    if (is_word_start(c)) {
        size_t i = p->pos;
        bool dot = false;
        while (i < p->n && is_word_char(p->t[i])) dot |= p->t[i++] == '.';
        if (dot) return true;
        size_t n = i - p->pos;
        return (n == 4 && memcmp(p->t + p->pos, "call", 4) == 0) ||
               (n == 6 && memcmp(p->t + p->pos, "return", 6) == 0);
    }
    return false;
}

static bool add_attr(parser *p, op_builder *b, const char *name, size_t n, mlir_attr *a) {
    const char *nm = dup(p, name, n);
    if (!nm) return oom(p);
    return vpush(p, &b->attr_names, (void *)nm) && vpush(p, &b->attrs, a);
}

static bool parse_dict_into(parser *p, op_builder *b) {
    mlir_attr d = {0};
    if (!parse_entries(p, &d, '}', true)) return false;
    for (int64_t i = 0; i < d.count; i++) {
        if (!d.keys[i]) return fail(p, d.items[i]->pos, "expected 'name = value'");
        if (!add_attr(p, b, d.keys[i], strlen(d.keys[i]), d.items[i])) return false;
    }
    return true;
}

/* A list of types: t, (t, t) -> t, t -> t, (t) -> (t, t) */
static bool parse_type_list(parser *p, vec *out) {
    if (accept(p, '(')) {
        if (!accept(p, ')')) {
            do {
                cxla_shape *t = alloc(p, sizeof *t);
                if (!t || !parse_type(p, t) || !vpush(p, out, t)) return false;
                /* argument attributes in function results: {..} */
                if (peek(p) == '{') {
                    p->pos++;
                    mlir_attr d = {0};
                    if (!parse_entries(p, &d, '}', true)) return false;
                }
            } while (accept(p, ','));
            if (!expect(p, ')', "to close the type list")) return false;
        }
        return true;
    }
    cxla_shape *t = alloc(p, sizeof *t);
    return t && parse_type(p, t) && vpush(p, out, t);
}

static cxla_shape *shapes_of(parser *p, vec *v) {
    cxla_shape *r = alloc(p, sizeof(cxla_shape) * (size_t)(v->count ? v->count : 1));
    if (!r) {
        oom(p);
    } else {
        for (int64_t i = 0; i < v->count; i++) r[i] = *(cxla_shape *)v->items[i];
    }
    free(v->items);
    v->items = NULL;
    return r;
}

/* ': signature' of an op. */
static bool parse_signature(parser *p, mlir_op *op) {
    vec ins = {0}, outs = {0};
    skip(p);
    bool paren = peek(p) == '(';
    bool ok = parse_type_list(p, &ins);
    if (ok && accept_str(p, "->")) {
        op->functional = true;
        ok = parse_type_list(p, &outs);
    } else if (ok && !paren) {
        while (ok && peek(p) == ',') {
            p->pos++;
            cxla_shape *t = alloc(p, sizeof *t);
            ok = t && parse_type(p, t) && vpush(p, &ins, t);
        }
        for (int64_t i = 0; ok && i < ins.count; i++) ok = vpush(p, &outs, ins.items[i]);
    } else if (ok) {
        /* (t, t) without '->': the operand types only */
    }
    if (!ok) {
        free(ins.items);
        free(outs.items);
        return false;
    }
    op->in_type_count = ins.count;
    op->out_type_count = outs.count;
    op->in_types = shapes_of(p, &ins);
    op->out_types = shapes_of(p, &outs);
    op->has_types = true;
    return op->in_types && op->out_types;
}

static bool parse_slice_spec(parser *p, mlir_op *op) {
    /* [a:b(:c), ...] ; '[' consumed */
    int64_t v[3 * CXLA_MAX_RANK];
    int64_t rank = 0;
    if (!accept(p, ']')) {
        do {
            if (rank >= CXLA_MAX_RANK) return fail(p, p->pos, "too many slice dimensions");
            int64_t a, b, c = 1;
            if (!parse_int(p, &a) || !expect(p, ':', "in a slice") || !parse_int(p, &b))
                return false;
            if (accept(p, ':') && !parse_int(p, &c)) return false;
            v[3 * rank] = a;
            v[3 * rank + 1] = b;
            v[3 * rank + 2] = c;
            rank++;
        } while (accept(p, ','));
        if (!expect(p, ']', "to close the slice")) return false;
    }
    op->slice_rank = rank;
    op->slice = alloc(p, sizeof(int64_t) * (size_t)(3 * rank + 1));
    if (!op->slice) return oom(p);
    memcpy(op->slice, v, sizeof(int64_t) * (size_t)(3 * rank));
    return true;
}

/* Items of the pretty syntax up to ':' or the next statement. |close| is ')' inside
 * parentheses (and 0 at the top). */
static bool pretty_items(parser *p, mlir_op *op, op_builder *b, char close) {
    for (int guard = 0; guard < 100000; guard++) {
        if (p->err) return false;
        skip(p);
        if (p->pos >= p->n) return true;
        char c = p->t[p->pos];
        if (close && c == close) return true;
        if (!close && (c == ':' || at_statement_start(p))) return true;
        if (c == ',') {
            p->pos++;
            continue;
        }
        size_t s = p->pos;
        if (c == '%') {
            const char *v = value_name(p);
            if (!v) return false;
            if (accept(p, '=')) { /* while (%arg = %init) */
                const char *init = value_name(p);
                if (!init || !vpush(p, &b->iters, (void *)v) ||
                    !vpush(p, &b->operands, (void *)init))
                    return false;
                continue;
            }
            if (!vpush(p, &b->operands, (void *)v)) return false;
            if (peek(p) == '[') { /* %t[1] or %x [a:b] */
                size_t save = ++p->pos;
                int64_t k;
                if (parse_int(p, &k) && accept(p, ']')) {
                    op->index = k;
                    op->has_index = true;
                } else {
                    cxla_status_free(p->err);
                    p->err = NULL;
                    p->pos = save;
                    if (!parse_slice_spec(p, op)) return false;
                }
            }
            continue;
        }
        if (c == '(') {
            p->pos++;
            if (!pretty_items(p, op, b, ')') || !expect(p, ')', "to close '('")) return false;
            continue;
        }
        if (c == '[') {
            p->pos++;
            if (!parse_slice_spec(p, op)) return false;
            continue;
        }
        if (c == '{') {
            /* a region ({ ^bb0(...): ... }) or an attribute dictionary */
            size_t save = p->pos++;
            if (peek(p) == '^') {
                p->pos = save;
                mlir_region *r = parse_region(p);
                if (!r || !vpush(p, &b->regions, r)) return false;
                continue;
            }
            if (!parse_dict_into(p, b)) return false;
            continue;
        }
        if (c == '@') {
            p->pos++;
            const char *w;
            size_t n;
            if (peek(p) == '"') {
                if (!parse_string(p, &w, &n)) return false;
            } else {
                n = word(p, &w);
            }
            if (!n) return fail(p, s, "expected a symbol after '@'");
            op->callee = dup(p, w, n);
            if (!op->callee) return oom(p);
            continue;
        }
        if (is_word_start(c)) {
            const char *w;
            size_t n = word(p, &w);
            if (peek(p) == '=' && peek_at(p, 1) != '=') {
                p->pos++;
                mlir_attr *a = parse_attr(p, false);
                if (!a || !add_attr(p, b, w, n, a)) return false;
                continue;
            }
            if (word_is(w, n, "applies")) { /* reduce ... applies stablehlo.add */
                size_t ws = p->pos;
                const char *fn;
                size_t fl = word(p, &fn);
                if (!fl) return fail(p, ws, "expected an operation name after 'applies'");
                mlir_attr *a = new_attr(p, MA_WORD, ws);
                if (!a) return false;
                a->s = dup(p, fn, fl);
                a->slen = fl;
                if (!a->s || !add_attr(p, b, "applies", 7, a)) return oom(p);
                continue;
            }
            if (peek(p) == ':' && close == ')') { /* reduce(%x init: %y) */
                p->pos++;
                continue;
            }
            if (word_is(w, n, "inits")) { /* chlo.scan(%in) inits(%carry): where carries start */
                mlir_attr *a = new_attr(p, MA_INT, s);
                if (!a) return false;
                a->i = b->operands.count;
                if (!add_attr(p, b, "inits_at", 8, a)) return false;
                continue;
            }
            if (word_is(w, n, "dense")) {
                p->pos = s;
            } else {
                mlir_attr *a = new_attr(p, MA_WORD, s);
                if (!a) return false;
                a->s = dup(p, w, n);
                a->slen = n;
                if (!a->s || !vpush(p, &b->words, a)) return oom(p);
                continue;
            }
        }
        mlir_attr *a = parse_attr(p, false);
        if (!a) return false;
        if (!vpush(p, &b->words, a)) return false;
    }
    return fail(p, p->pos, "operation too long");
}

/* reducer(%a: t, %b: t) (%c: t, %d: t) { ... } : the block's arguments are the first of
 * each pair, then the second of each pair. */
static bool parse_reducer(parser *p, op_builder *b) {
    vec first = {0}, second = {0}, ft = {0}, st = {0};
    bool ok = true;
    while (ok && accept(p, '(')) {
        for (int k = 0; ok && k < 2; k++) {
            if (k && !expect(p, ',', "between the reducer's arguments")) {
                ok = false;
                break;
            }
            const char *nm = value_name(p);
            cxla_shape *t = alloc(p, sizeof *t);
            ok = nm && t && expect(p, ':', "after a reducer argument") && parse_type(p, t) &&
                 vpush(p, k ? &second : &first, (void *)nm) && vpush(p, k ? &st : &ft, t);
        }
        ok = ok && expect(p, ')', "to close the reducer's arguments");
    }
    if (ok) ok = expect(p, '{', "to start the reducer's body");
    int64_t n = first.count + second.count;
    const char **names = alloc(p, sizeof(char *) * (size_t)(n ? n : 1));
    cxla_shape *types = alloc(p, sizeof(cxla_shape) * (size_t)(n ? n : 1));
    if (ok && (!names || !types)) ok = oom(p);
    for (int64_t i = 0; ok && i < first.count; i++) {
        names[i] = first.items[i];
        types[i] = *(cxla_shape *)ft.items[i];
        names[first.count + i] = second.items[i];
        types[first.count + i] = *(cxla_shape *)st.items[i];
    }
    free(first.items);
    free(second.items);
    free(ft.items);
    free(st.items);
    if (!ok) return false;
    mlir_region *r = alloc(p, sizeof *r);
    if (!r) return oom(p);
    r->block = parse_block_body(p, names, types, n);
    if (!r->block || !expect(p, '}', "to close the reducer's body")) return false;
    return vpush(p, &b->regions, r);
}

static mlir_op *parse_op(parser *p) {
    skip(p);
    mlir_op *op = alloc(p, sizeof *op);
    if (!op) return oom(p), NULL;
    op_builder b = {0};
    op->pos = p->pos;
    /* Results. */
    if (peek(p) == '%') {
        do {
            const char *nm = value_name(p);
            if (!nm) goto bad;
            if (peek(p) == ':' && isdigit((unsigned char)peek_at(p, 1))) {
                p->pos++;
                int64_t k;
                if (!parse_int(p, &k)) goto bad;
                if (k < 0 || k > 100000) {
                    fail(p, p->pos, "bad result count");
                    goto bad;
                }
                for (int64_t i = 0; i < k; i++) {
                    char buf[32];
                    snprintf(buf, sizeof buf, "#%" PRId64, i);
                    size_t ln = strlen(nm), lb = strlen(buf);
                    char *full = cxla_arena_alloc(p->m->arena, ln + lb + 1);
                    if (!full) goto oomed;
                    memcpy(full, nm, ln);
                    memcpy(full + ln, buf, lb + 1);
                    if (!vpush(p, &b.results, full)) goto bad;
                }
            } else if (!vpush(p, &b.results, (void *)nm)) {
                goto bad;
            }
        } while (accept(p, ','));
        if (!expect(p, '=', "after the results")) goto bad;
    }
    skip(p);
    op->pos = p->pos;
    cxla_text_line_col(p->t, p->n, p->pos, &op->line, &op->column);
    if (peek(p) == '"') {
        const char *s;
        size_t n;
        op->generic = true;
        if (!parse_string(p, &s, &n)) goto bad;
        op->name = s;
        if (!expect(p, '(', "after a generic operation's name")) goto bad;
        if (!accept(p, ')')) {
            do {
                const char *v = value_name(p);
                if (!v || !vpush(p, &b.operands, (void *)v)) goto bad;
            } while (accept(p, ','));
            if (!expect(p, ')', "to close the operands")) goto bad;
        }
        if (accept_str(p, "<{")) {
            if (!parse_dict_into(p, &b)) goto bad;
            if (!expect(p, '>', "to close the properties")) goto bad;
        }
        if (peek(p) == '(') {
            p->pos++;
            do {
                mlir_region *r = parse_region(p);
                if (!r || !vpush(p, &b.regions, r)) goto bad;
            } while (accept(p, ','));
            if (!expect(p, ')', "to close the regions")) goto bad;
        }
        if (accept(p, '{') && !parse_dict_into(p, &b)) goto bad;
        if (!expect(p, ':', "before the type of a generic operation")) goto bad;
        if (!parse_signature(p, op)) goto bad;
    } else {
        const char *w;
        size_t n = word(p, &w);
        if (!n) {
            fail(p, p->pos, "expected an operation");
            goto bad;
        }
        if (word_is(w, n, "call") || word_is(w, n, "return")) {
            char *full = cxla_arena_alloc(p->m->arena, n + 6);
            if (!full) goto oomed;
            memcpy(full, "func.", 5);
            memcpy(full + 5, w, n);
            full[n + 5] = 0;
            op->name = full;
        } else {
            op->name = dup(p, w, n);
        }
        if (!op->name) goto oomed;
        if (!pretty_items(p, op, &b, 0)) goto bad;
        if (accept(p, ':')) {
            if (!parse_signature(p, op)) goto bad;
        }
        /* Trailing regions. */
        for (;;) {
            if (accept_keyword(p, "cond") || accept_keyword(p, "do")) {
                mlir_region *r = parse_region(p);
                if (!r || !vpush(p, &b.regions, r)) goto bad;
                continue;
            }
            if (accept_keyword(p, "reducer")) {
                if (!parse_reducer(p, &b)) goto bad;
                continue;
            }
            break;
        }
    }
    op->result_count = b.results.count;
    op->operand_count = b.operands.count;
    op->attr_count = b.attrs.count;
    op->word_count = b.words.count;
    op->iter_count = b.iters.count;
    op->region_count = b.regions.count;
    op->results = (const char **)vdone(p, &b.results);
    op->operands = (const char **)vdone(p, &b.operands);
    op->attr_names = (const char **)vdone(p, &b.attr_names);
    op->attrs = (mlir_attr **)vdone(p, &b.attrs);
    op->words = (mlir_attr **)vdone(p, &b.words);
    op->iter_names = (const char **)vdone(p, &b.iters);
    op->regions = (mlir_region **)vdone(p, &b.regions);
    if (!op->results || !op->operands || !op->attr_names || !op->attrs || !op->words ||
        !op->iter_names || !op->regions)
        return oom(p), NULL;
    /* Trailing location: loc(...) */
    if (accept_keyword(p, "loc")) {
        int d = 0;
        skip(p);
        do {
            if (p->pos >= p->n) break;
            char c = p->t[p->pos++];
            d += c == '(';
            d -= c == ')';
        } while (d > 0);
    }
    return op;
oomed:
    oom(p);
bad:
    ob_free(&b);
    return NULL;
}

static mlir_block *parse_block_body(parser *p, const char **arg_names, cxla_shape *arg_types,
                                    int64_t arg_count) {
    if (++p->depth > MAX_DEPTH) {
        fail(p, p->pos, "regions nested too deeply");
        return NULL;
    }
    mlir_block *blk = alloc(p, sizeof *blk);
    if (!blk) return oom(p), NULL;
    blk->arg_names = arg_names;
    blk->arg_types = arg_types;
    blk->arg_count = arg_count;
    vec ops = {0};
    while (peek(p) != '}' && p->pos < p->n) {
        if (peek(p) == '^') {
            fail(p, p->pos, "blocks with several basic blocks are not supported");
            break;
        }
        size_t before = p->pos;
        mlir_op *op = parse_op(p);
        if (!op || !vpush(p, &ops, op)) break;
        if (p->pos == before) {
            fail(p, p->pos, "expected an operation");
            break;
        }
    }
    p->depth--;
    if (p->err) {
        free(ops.items);
        return NULL;
    }
    blk->op_count = ops.count;
    blk->ops = (mlir_op **)vdone(p, &ops);
    return blk->ops ? blk : (oom(p), NULL);
}

/* func.func [public|private] @name(%arg: type {attrs}, ...) -> results [attributes {..}]
 * { body } */
static bool parse_func(parser *p, size_t start) {
    mlir_func *f = alloc(p, sizeof *f);
    if (!f) return oom(p);
    f->pos = start;
    cxla_text_line_col(p->t, p->n, start, &f->line, &f->column);
    f->is_public = true;
    if (accept_keyword(p, "private"))
        f->is_public = false;
    else if (accept_keyword(p, "public"))
        f->is_public = true;
    else if (accept_keyword(p, "nested"))
        f->is_public = false;
    if (!expect(p, '@', "before the function's name")) return false;
    const char *w;
    size_t n;
    if (peek(p) == '"') {
        if (!parse_string(p, &w, &n)) return false;
    } else {
        n = word(p, &w);
    }
    if (!n) return fail(p, p->pos, "expected the function's name");
    f->name = dup(p, w, n);
    if (!expect(p, '(', "to start the function's arguments")) return false;
    vec names = {0}, types = {0};
    bool ok = true;
    if (!accept(p, ')')) {
        do {
            const char *nm = value_name(p);
            cxla_shape *t = alloc(p, sizeof *t);
            ok = nm && t && expect(p, ':', "after an argument name") && parse_type(p, t) &&
                 vpush(p, &names, (void *)nm) && vpush(p, &types, t);
            if (ok && peek(p) == '{') {
                p->pos++;
                mlir_attr d = {0};
                ok = parse_entries(p, &d, '}', true);
            }
            if (ok && accept_keyword(p, "loc")) {
                int d = 0;
                do {
                    char c = p->t[p->pos++];
                    d += c == '(';
                    d -= c == ')';
                } while (p->pos < p->n && d > 0);
            }
        } while (ok && accept(p, ','));
        if (ok) ok = expect(p, ')', "to close the function's arguments");
    }
    vec res = {0};
    if (ok && accept_str(p, "->")) ok = parse_type_list(p, &res);
    int64_t nargs = names.count;
    const char **narr = (const char **)vdone(p, &names);
    cxla_shape *tarr = shapes_of(p, &types);
    f->result_count = res.count;
    f->result_types = shapes_of(p, &res);
    if (!ok) return false;
    if (!narr || !tarr || !f->result_types) return oom(p);
    if (accept_keyword(p, "attributes")) {
        if (!expect(p, '{', "after 'attributes'")) return false;
        mlir_attr d = {0};
        if (!parse_entries(p, &d, '}', true)) return false;
    }
    if (!expect(p, '{', "to start the function's body")) return false;
    f->body = parse_block_body(p, narr, tarr, nargs);
    if (!f->body || !expect(p, '}', "to close the function's body")) return false;
    mlir_module *m = p->m;
    mlir_func **fs = cxla_arena_alloc(m->arena, sizeof(*fs) * (size_t)(m->func_count + 1));
    if (!fs) return oom(p);
    if (m->func_count) memcpy(fs, m->funcs, sizeof(*fs) * (size_t)m->func_count);
    fs[m->func_count++] = f;
    m->funcs = fs;
    return true;
}

static bool parse_top(parser *p, bool in_module) {
    for (;;) {
        skip(p);
        if (p->pos >= p->n)
            return in_module ? fail(p, p->pos, "expected '}' to close the module") : true;
        if (in_module && accept(p, '}')) return true;
        size_t s = p->pos;
        const char *w;
        size_t n = word(p, &w);
        if (n && (word_is(w, n, "func.func") || word_is(w, n, "func"))) {
            if (!parse_func(p, s)) return false;
        } else if (n && (word_is(w, n, "module") || word_is(w, n, "builtin.module"))) {
            if (peek(p) == '@') {
                p->pos++;
                const char *mn;
                size_t mlen = word(p, &mn);
                if (!p->m->name && mlen) p->m->name = dup(p, mn, mlen);
            }
            if (accept_keyword(p, "attributes")) {
                if (!expect(p, '{', "after 'attributes'")) return false;
                mlir_attr d = {0};
                if (!parse_entries(p, &d, '}', true)) return false;
                for (int64_t i = 0; i < d.count; i++) {
                    if (!d.keys[i] || d.items[i]->kind != MA_INT) continue;
                    if ((strcmp(d.keys[i], "mhlo.num_replicas") == 0 ||
                         strcmp(d.keys[i], "mhlo.num_partitions") == 0) &&
                        (d.items[i]->i < 1 || d.items[i]->i > 1000000))
                        return fail(p, d.items[i]->pos, "%s must be between 1 and 1000000",
                                    d.keys[i]);
                    if (strcmp(d.keys[i], "mhlo.num_replicas") == 0)
                        p->m->num_replicas = d.items[i]->i;
                    if (strcmp(d.keys[i], "mhlo.num_partitions") == 0)
                        p->m->num_partitions = d.items[i]->i;
                }
            }
            if (!expect(p, '{', "to start the module's body")) return false;
            if (!parse_top(p, true)) return false;
        } else {
            return fail(p, s, "expected 'func.func' or 'module'");
        }
    }
}

cxla_status mlir_parse(const char *text, size_t len, const char *filename, mlir_module **out) {
    *out = NULL;
    mlir_module *m = calloc(1, sizeof *m);
    if (!m) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    m->arena = cxla_arena_create();
    if (!m->arena) {
        free(m);
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    }
    m->text = text;
    m->len = len;
    m->filename = filename;
    m->num_replicas = m->num_partitions = 1;
    for (size_t i = 0; i < len; i++)
        if (text[i] == 0) {
            cxla_status st = mlir_error_at(m, i, "NUL byte in the text");
            mlir_module_free(m);
            return st;
        }
    parser p = {.m = m, .t = text, .n = len};
    if (!parse_top(&p, false)) {
        cxla_status st = p.err ? p.err : cxla_error(CXLA_STATUS_INTERNAL, "parse failed");
        mlir_module_free(m);
        return st;
    }
    if (m->func_count == 0) {
        mlir_module_free(m);
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s: no functions in the text",
                          filename ? filename : "<text>");
    }
    *out = m;
    return NULL;
}

void mlir_module_free(mlir_module *m) {
    if (!m) return;
    cxla_arena_destroy(m->arena);
    free(m);
}

const mlir_attr *mlir_op_attr(const mlir_op *op, const char *name) {
    for (int64_t i = 0; i < op->attr_count; i++)
        if (strcmp(op->attr_names[i], name) == 0) return op->attrs[i];
    return NULL;
}

const mlir_attr *mlir_attr_get(const mlir_attr *a, const char *key) {
    if (!a || (a->kind != MA_DICT && a->kind != MA_DIALECT)) return NULL;
    for (int64_t i = 0; i < a->count; i++)
        if (a->keys[i] && strcmp(a->keys[i], key) == 0) return a->items[i];
    return NULL;
}
