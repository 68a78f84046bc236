/* Shape text, as XLA prints and parses it (hlo-text-format.md section 7):
 *   f32[2,3]{1,0}   f32[]   s32[<=10,?]   (f32[2]{0}, s32[])   token[]
 *   f32[8,128]{1,0:T(8,128)(2,1)L(2)#(s32)*(u32)E(4)S(1)M(8)}
 *
 * The printer follows xla/shape_util.cc (PrintHumanStringWithLayout, PrintTupleShapes)
 * and xla/layout.cc (Layout::Print): dims joined by ",", tuple elements by ", " with a
 * "/ *index=N* /" comment before every fifth one, scalars without a "{}" layout, and
 * layout extensions in the order D T L # * E S SC P M. Extensions cxla does not model
 * (D, SC, P and any unknown ones) are kept in layout->extra, in that order, and
 * printed back in their places.
 *
 * The parser reads the input byte by byte and never past |len| (the text need not be
 * NUL-terminated); whitespace and comments may sit between any two tokens. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "shape/shape_internal.h"

/* Deepest tuple nesting the parser accepts (keeps the recursion off the stack's end). */
enum { PARSE_MAX_DEPTH = 128 };

/* ---- Characters and spaces ---------------------------------------------------------- */

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
static bool is_alpha(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static bool is_ident(char c) {
    return is_alpha(c) || is_digit(c) || c == '_';
}

size_t cxla_text_skip_space(const char *text, size_t len, size_t pos) {
    while (pos < len) {
        char c = text[pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            pos++;
        } else if (c == '/' && pos + 1 < len && text[pos + 1] == '*') {
            size_t q = pos + 2;
            while (q + 1 < len && !(text[q] == '*' && text[q + 1] == '/')) q++;
            if (q + 1 >= len) return pos; /* unterminated: left for the caller to report */
            pos = q + 2;
        } else if (c == '/' && pos + 1 < len && text[pos + 1] == '/') {
            while (pos < len && text[pos] != '\n') pos++;
        } else {
            break;
        }
    }
    return pos;
}

/* ---- Printer ------------------------------------------------------------------------ */

/* Slots of the extensions kept verbatim, in XLA's printing order around the others. */
enum { SLOT_D, SLOT_SC, SLOT_P, SLOT_OTHER, SLOT_COUNT };

/* Length of the extension item at |s| (NAME followed by one or more balanced
 * parenthesised groups), or 0 when |s| does not start with one. |n| bytes available. */
static size_t extension_item_len(const char *s, size_t n) {
    size_t i = 0;
    if (n > 0 && (s[0] == '#' || s[0] == '*')) {
        i = 1;
    } else {
        while (i < n && is_alpha(s[i])) i++;
    }
    if (i == 0 || i >= n || s[i] != '(') return 0;
    while (i < n && s[i] == '(') {
        int64_t depth = 0;
        do {
            if (i >= n) return 0;
            if (s[i] == '(') depth++;
            if (s[i] == ')') depth--;
            i++;
        } while (depth > 0);
    }
    return i;
}

static int extension_slot(const char *name, size_t item_len) {
    size_t n = 0;
    while (n < item_len && is_alpha(name[n])) n++;
    if (n == 1 && name[0] == 'D') return SLOT_D;
    if (n == 2 && name[0] == 'S' && name[1] == 'C') return SLOT_SC;
    if (n == 1 && name[0] == 'P') return SLOT_P;
    return SLOT_OTHER;
}

static void begin_extension(cxla_strbuf *b, bool *colon) {
    if (!*colon) cxla_strbuf_putc(b, ':');
    *colon = true;
}

/* Prints the items of |extra| that belong in |slot|. Text that cannot be split into
 * items (a hand-made layout) goes, as it is, with the last slot. */
static void print_extra_slot(cxla_strbuf *b, const char *extra, int slot, bool *colon) {
    if (!extra) return;
    size_t n = strlen(extra), i = 0;
    while (i < n) {
        size_t k = extension_item_len(extra + i, n - i);
        if (k == 0) {
            if (slot == SLOT_OTHER) {
                begin_extension(b, colon);
                cxla_strbuf_append(b, extra + i, n - i);
            }
            return;
        }
        if (extension_slot(extra + i, k) == slot) {
            begin_extension(b, colon);
            cxla_strbuf_append(b, extra + i, k);
        }
        i += k;
    }
}

static void print_int_extension(cxla_strbuf *b, bool *colon, const char *name, int64_t value) {
    begin_extension(b, colon);
    cxla_strbuf_printf(b, "%s(%lld)", name, (long long)value);
}

static void print_type_extension(cxla_strbuf *b, bool *colon, char sigil, cxla_type type) {
    begin_extension(b, colon);
    cxla_strbuf_printf(b, "%c(%s)", sigil,
                       cxla_type_is_integer(type) ? cxla_type_name(type) : "invalid");
}

void cxla_layout_print(cxla_strbuf *b, const cxla_shape *shape) {
    const cxla_layout *l = shape->layout;
    CXLA_ASSERT(l != NULL);
    if (!l) return;
    cxla_strbuf_putc(b, '{');
    for (int64_t i = 0; i < shape->rank; i++) {
        if (i) cxla_strbuf_putc(b, ',');
        int64_t d = l->minor_to_major ? l->minor_to_major[i] : shape->rank - 1 - i;
        cxla_strbuf_printf(b, "%lld", (long long)d);
    }
    bool colon = false;
    print_extra_slot(b, l->extra, SLOT_D, &colon);
    if (l->tile_count > 0 && l->tiles) {
        begin_extension(b, &colon);
        cxla_strbuf_putc(b, 'T');
        for (int64_t t = 0; t < l->tile_count; t++) {
            const cxla_tile *tile = &l->tiles[t];
            cxla_strbuf_putc(b, '(');
            for (int64_t k = 0; k < tile->rank; k++) {
                if (k) cxla_strbuf_putc(b, ',');
                int64_t v = tile->dims[k];
                if (v >= 0)
                    cxla_strbuf_printf(b, "%lld", (long long)v);
                else if (v == CXLA_TILE_COMBINE)
                    cxla_strbuf_putc(b, '*');
                else
                    cxla_strbuf_printf(b, "Invalid value %lld", (long long)v);
            }
            cxla_strbuf_putc(b, ')');
        }
    }
    /* XLA's default alignment is 1 and is not printed; cxla also stores 0 for "none". */
    if (l->tail_padding_alignment != 0 && l->tail_padding_alignment != 1)
        print_int_extension(b, &colon, "L", l->tail_padding_alignment);
    if (l->index_type != CXLA_TYPE_INVALID) print_type_extension(b, &colon, '#', l->index_type);
    if (l->pointer_type != CXLA_TYPE_INVALID) print_type_extension(b, &colon, '*', l->pointer_type);
    if (l->element_size_bits != 0) print_int_extension(b, &colon, "E", l->element_size_bits);
    if (l->memory_space != 0) print_int_extension(b, &colon, "S", l->memory_space);
    print_extra_slot(b, l->extra, SLOT_SC, &colon);
    print_extra_slot(b, l->extra, SLOT_P, &colon);
    if (l->dynamic_metadata_prefix > 0)
        print_int_extension(b, &colon, "M", l->dynamic_metadata_prefix);
    print_extra_slot(b, l->extra, SLOT_OTHER, &colon);
    cxla_strbuf_putc(b, '}');
}

void cxla_shape_print(cxla_strbuf *b, const cxla_shape *shape, int flags) {
    if (shape->type == CXLA_TUPLE) {
        cxla_strbuf_putc(b, '(');
        for (int64_t i = 0; i < shape->tuple_count; i++) {
            /* XLA marks every fifth element with its index. */
            if (i > 0 && i % 5 == 0)
                cxla_strbuf_printf(b, ", /*index=%lld*/", (long long)i);
            else if (i > 0)
                cxla_strbuf_puts(b, ", ");
            cxla_shape_print(b, &shape->elements[i], flags);
        }
        cxla_strbuf_putc(b, ')');
        return;
    }
    cxla_strbuf_puts(b, cxla_type_name(shape->type));
    cxla_strbuf_putc(b, '[');
    for (int64_t i = 0; i < shape->rank; i++) {
        if (i) cxla_strbuf_putc(b, ',');
        int64_t d = shape->dims[i];
        if (shape->dynamic && shape->dynamic[i]) {
            if (d == CXLA_DIM_UNBOUNDED)
                cxla_strbuf_putc(b, '?');
            else
                cxla_strbuf_printf(b, "<=%lld", (long long)d);
        } else {
            cxla_strbuf_printf(b, "%lld", (long long)d);
        }
    }
    cxla_strbuf_putc(b, ']');
    if ((flags & CXLA_SHAPE_PRINT_NO_LAYOUT) || !shape->layout || !cxla_type_is_array(shape->type))
        return;
    if (shape->rank == 0) {
        /* As XLA: a scalar's layout is printed only when it says more than "{}". */
        cxla_strbuf tmp;
        cxla_strbuf_init(&tmp);
        cxla_layout_print(&tmp, shape);
        if (tmp.failed)
            b->failed = true;
        else if (strcmp(tmp.data, "{}") != 0)
            cxla_strbuf_append(b, tmp.data, tmp.len);
        cxla_strbuf_free(&tmp);
        return;
    }
    cxla_layout_print(b, shape);
}

char *cxla_shape_to_string(const cxla_shape *shape, int flags) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_shape_print(&b, shape, flags);
    return cxla_strbuf_take(&b);
}

/* ---- Parser ------------------------------------------------------------------------- */

typedef struct parser {
    const char *text;
    size_t len;
    cxla_arena *arena;
} parser;

static size_t skip(const parser *p, size_t pos) {
    return cxla_text_skip_space(p->text, p->len, pos);
}

static bool at_char(const parser *p, size_t pos, char c) {
    return pos < p->len && p->text[pos] == c;
}

/* Names the text at |pos| for an error message: 'f32x', ')', end of input. */
static void describe_found(cxla_strbuf *b, const parser *p, size_t pos) {
    if (pos >= p->len) {
        cxla_strbuf_puts(b, "end of input");
        return;
    }
    char c = p->text[pos];
    if (is_ident(c)) {
        size_t end = pos;
        while (end < p->len && is_ident(p->text[end]) && end - pos < 32) end++;
        cxla_strbuf_printf(b, "'%.*s%s'", (int)(end - pos), p->text + pos,
                           end < p->len && is_ident(p->text[end]) ? "..." : "");
    } else if ((unsigned char)c >= 32 && (unsigned char)c < 127) {
        cxla_strbuf_printf(b, "'%c'", c);
    } else {
        cxla_strbuf_printf(b, "byte 0x%02x", (unsigned)(unsigned char)c);
    }
}

static cxla_status vparse_error(const parser *p, size_t pos, bool found, const char *format,
                                va_list args) {
    if (pos > p->len) pos = p->len;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    if (pos + 1 < p->len && p->text[pos] == '/' && p->text[pos + 1] == '*') {
        /* cxla_text_skip_space stops at a comment only when it never ends. */
        cxla_strbuf_puts(&b, "unterminated comment: '/*' has no closing '*/'");
    } else {
        cxla_strbuf_vprintf(&b, format, args);
        if (found) {
            cxla_strbuf_puts(&b, ", found ");
            describe_found(&b, p, pos);
        }
    }
    cxla_strbuf_puts(&b, " at ");
    cxla_describe_position(&b, p->text, p->len, pos);
    if (b.failed) {
        cxla_strbuf_free(&b);
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory reporting a shape error");
    }
    cxla_status st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s", b.data);
    cxla_strbuf_free(&b);
    return st;
}

/* "expected X, found 'y' at line L, column C" plus the line and a caret. */
static cxla_status parse_error(const parser *p, size_t pos, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* "problem at line L, column C" plus the line and a caret (for whole constructs). */
static cxla_status parse_error_at(const parser *p, size_t pos, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static cxla_status parse_error(const parser *p, size_t pos, const char *format, ...) {
    va_list args;
    va_start(args, format);
    cxla_status st = vparse_error(p, pos, true, format, args);
    va_end(args);
    return st;
}

static cxla_status parse_error_at(const parser *p, size_t pos, const char *format, ...) {
    va_list args;
    va_start(args, format);
    cxla_status st = vparse_error(p, pos, false, format, args);
    va_end(args);
    return st;
}

static cxla_status out_of_memory(void) {
    return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory parsing a shape");
}

/* Reads an integer ('-'? digits) at *pos into |out|; |what| names it for errors. */
static cxla_status parse_int(const parser *p, size_t *pos, const char *what, int64_t *out) {
    size_t q = *pos, start = q;
    bool negative = at_char(p, q, '-');
    if (negative) q++;
    if (q >= p->len || !is_digit(p->text[q])) return parse_error(p, start, "expected %s", what);
    uint64_t v = 0;
    bool overflow = false;
    while (q < p->len && is_digit(p->text[q])) {
        uint64_t digit = (uint64_t)(p->text[q] - '0');
        if (v > ((uint64_t)INT64_MAX - digit) / 10) overflow = true;
        if (!overflow) v = v * 10 + digit;
        q++;
    }
    if (overflow) {
        size_t n = q - start;
        return parse_error_at(p, start, "%s '%.*s%s' does not fit in int64", what,
                              (int)(n > 40 ? 40 : n), p->text + start, n > 40 ? "..." : "");
    }
    *out = negative ? -(int64_t)v : (int64_t)v;
    *pos = q;
    return NULL;
}

/* Expects |c| at skip(*pos) and moves past it. */
static cxla_status expect_char(const parser *p, size_t *pos, char c, const char *what) {
    size_t q = skip(p, *pos);
    if (!at_char(p, q, c)) return parse_error(p, q, "expected '%c' %s", c, what);
    *pos = q + 1;
    return NULL;
}

/* The known layout extensions (bit flags, to reject duplicates). */
enum {
    EXT_T = 1 << 0,
    EXT_L = 1 << 1,
    EXT_INDEX = 1 << 2,
    EXT_POINTER = 1 << 3,
    EXT_E = 1 << 4,
    EXT_S = 1 << 5,
    EXT_M = 1 << 6,
};

static int known_extension(const char *name, size_t n) {
    if (n != 1) return 0;
    switch (name[0]) {
    case 'T': return EXT_T;
    case 'L': return EXT_L;
    case '#': return EXT_INDEX;
    case '*': return EXT_POINTER;
    case 'E': return EXT_E;
    case 'S': return EXT_S;
    case 'M': return EXT_M;
    default: return 0;
    }
}

/* T(8,128)(2,1): *pos is at the first '('. */
static cxla_status parse_tiles(const parser *p, size_t *pos, cxla_layout *l) {
    size_t q = *pos;
    int64_t cap = 0;
    for (;;) {
        int64_t dims[CXLA_MAX_RANK];
        int64_t rank = 0;
        q = skip(p, q + 1); /* past '(' */
        if (!at_char(p, q, ')')) {
            for (;;) {
                if (rank == CXLA_MAX_RANK)
                    return parse_error_at(p, q, "a tile has more than %d dimensions",
                                          CXLA_MAX_RANK);
                int64_t v;
                if (at_char(p, q, '*')) {
                    v = CXLA_TILE_COMBINE;
                    q++;
                } else {
                    size_t at = q;
                    CXLA_RETURN_IF_ERROR(
                        parse_int(p, &q, "a tile dimension (a positive number or '*')", &v));
                    if (v <= 0)
                        return parse_error_at(
                            p, at, "tile dimension %lld must be positive (or '*')", (long long)v);
                }
                dims[rank++] = v;
                q = skip(p, q);
                if (!at_char(p, q, ',')) break;
                q = skip(p, q + 1);
            }
        }
        if (!at_char(p, q, ')')) return parse_error(p, q, "expected ',' or ')' in a tile");
        q++;
        if (l->tile_count == cap) {
            int64_t ncap = cap ? cap * 2 : 4;
            cxla_tile *tiles = cxla_arena_alloc_array(p->arena, (size_t)ncap, sizeof(cxla_tile));
            if (!tiles) return out_of_memory();
            if (l->tile_count) memcpy(tiles, l->tiles, (size_t)l->tile_count * sizeof(cxla_tile));
            l->tiles = tiles;
            cap = ncap;
        }
        cxla_tile *tile = &l->tiles[l->tile_count++];
        tile->rank = rank;
        tile->dims = NULL;
        if (rank) {
            tile->dims = cxla_arena_alloc_array(p->arena, (size_t)rank, sizeof(int64_t));
            if (!tile->dims) return out_of_memory();
            memcpy(tile->dims, dims, (size_t)rank * sizeof(int64_t));
        }
        size_t r = skip(p, q);
        if (!at_char(p, r, '(')) break;
        q = r;
    }
    *pos = q;
    return NULL;
}

/* (n) after L, E, S or M: *pos is at '('. */
static cxla_status parse_int_group(const parser *p, size_t *pos, char name, int64_t min,
                                   int64_t *out) {
    size_t q = skip(p, *pos + 1), at = q;
    char what[64];
    snprintf(what, sizeof(what), "a number in %c(...)", name);
    CXLA_RETURN_IF_ERROR(parse_int(p, &q, what, out));
    if (*out < min)
        return parse_error_at(p, at, "%c(%lld) is out of range: the value must be at least %lld",
                              name, (long long)*out, (long long)min);
    *pos = q;
    return expect_char(p, pos, ')', "to close the layout extension");
}

/* (s32) after # or *: *pos is at '('. */
static cxla_status parse_type_group(const parser *p, size_t *pos, char sigil, cxla_type *out) {
    size_t q = skip(p, *pos + 1), start = q;
    while (q < p->len && is_ident(p->text[q])) q++;
    if (q == start) return parse_error(p, start, "expected an integer type in %c(...)", sigil);
    cxla_type t = cxla_type_from_name(p->text + start, q - start);
    int n = (int)(q - start > 64 ? 64 : q - start);
    if (t == CXLA_TYPE_INVALID)
        return parse_error_at(p, start, "unknown element type '%.*s' in %c(...)", n,
                              p->text + start, sigil);
    if (!cxla_type_is_integer(t))
        return parse_error_at(p, start, "%c(%.*s) needs an integer type", sigil, n,
                              p->text + start);
    *out = t;
    *pos = q;
    return expect_char(p, pos, ')', "to close the layout extension");
}

/* Characters an unmodelled extension's groups may hold (comments and spaces are
 * dropped; '/' is excluded so that dropping spaces can never make a comment). */
static bool extension_char_ok(char c) {
    return is_ident(c) || (c != 0 && strchr(",:+~*[]{}<=?.-#", c) != NULL);
}

/* An unmodelled extension NAME(...)(...), appended without spaces or comments to |out|;
 * *pos is at the first '('. */
static cxla_status capture_extension(const parser *p, size_t *pos, const char *name, size_t n,
                                     cxla_strbuf *out) {
    size_t q = *pos;
    cxla_strbuf_append(out, name, n);
    for (;;) {
        int64_t depth = 0;
        for (;;) {
            if (q >= p->len)
                return parse_error(p, q, "expected ')' to close the layout extension '%.*s'",
                                   (int)n, name);
            char c = p->text[q];
            if (c == '(')
                depth++;
            else if (c == ')')
                depth--;
            else if (!extension_char_ok(c))
                return parse_error(p, q, "unexpected character in the layout extension '%.*s'",
                                   (int)n, name);
            cxla_strbuf_putc(out, c);
            q++;
            if (depth == 0) break;
            q = skip(p, q);
        }
        size_t r = skip(p, q);
        if (!at_char(p, r, '(')) break;
        q = r;
    }
    *pos = q;
    return NULL;
}

/* One extension after ':' in a layout; *pos is at its name. */
static cxla_status parse_extension(const parser *p, size_t *pos, cxla_layout *l, int *seen,
                                   cxla_strbuf extra[SLOT_COUNT]) {
    size_t q = *pos, start = q;
    if (at_char(p, q, '#') || at_char(p, q, '*')) {
        q++;
    } else {
        while (q < p->len && is_alpha(p->text[q])) q++;
    }
    if (q == start)
        return parse_error(p, start,
                           "expected a layout extension such as T(8,128), E(4) or S(1), or '}' "
                           "to end the layout");
    const char *name = p->text + start;
    size_t n = q - start;
    int nn = (int)(n > 32 ? 32 : n);
    q = skip(p, q);
    if (!at_char(p, q, '('))
        return parse_error(p, q, "expected '(' after the layout extension '%.*s'", nn, name);
    int kind = known_extension(name, n);
    if (kind & *seen)
        return parse_error_at(p, start, "the layout extension '%c' appears twice", name[0]);
    *seen |= kind;
    switch (kind) {
    case EXT_T: CXLA_RETURN_IF_ERROR(parse_tiles(p, &q, l)); break;
    case EXT_L:
        CXLA_RETURN_IF_ERROR(parse_int_group(p, &q, 'L', 1, &l->tail_padding_alignment));
        break;
    case EXT_E: CXLA_RETURN_IF_ERROR(parse_int_group(p, &q, 'E', 0, &l->element_size_bits)); break;
    case EXT_S: CXLA_RETURN_IF_ERROR(parse_int_group(p, &q, 'S', 0, &l->memory_space)); break;
    case EXT_M:
        CXLA_RETURN_IF_ERROR(parse_int_group(p, &q, 'M', 0, &l->dynamic_metadata_prefix));
        break;
    case EXT_INDEX: CXLA_RETURN_IF_ERROR(parse_type_group(p, &q, '#', &l->index_type)); break;
    case EXT_POINTER: CXLA_RETURN_IF_ERROR(parse_type_group(p, &q, '*', &l->pointer_type)); break;
    default:
        CXLA_RETURN_IF_ERROR(capture_extension(p, &q, name, n, &extra[extension_slot(name, n)]));
        break;
    }
    *pos = q;
    return NULL;
}

/* D(...) lists one dimension level type per dimension: D (dense), C (compressed), S
 * (singleton) or H (loose compressed), each optionally followed by '+' (non-unique) and
 * '~' (unordered). P(...), the physical shape, only makes sense for a sparse layout. */
static cxla_status check_sparse_extensions(const parser *p, size_t layout_pos, const cxla_strbuf *d,
                                           const cxla_strbuf *phys) {
    bool sparse = false;
    if (d->len) {
        /* Captured text is "D(...)" with spaces and comments removed. */
        for (size_t i = 2; i + 1 < d->len; i++) {
            char c = d->data[i];
            if (c == ',' || c == '+' || c == '~') continue;
            if (c == 'D') continue;
            if (c == 'C' || c == 'S' || c == 'H') {
                sparse = true;
                continue;
            }
            return parse_error_at(p, layout_pos,
                                  "invalid dimension level type '%c' in %.*s (expected D, C, S "
                                  "or H, optionally followed by + or ~)",
                                  c, (int)(d->len > 64 ? 64 : d->len), d->data);
        }
    }
    if (phys->len && !sparse)
        return parse_error_at(p, layout_pos,
                              "a physical shape P(...) is only allowed in a sparse layout (one "
                              "with C, S or H dimension level types in D(...))");
    return NULL;
}

/* Prints minor_to_major for an error message. */
static void format_m2m(char *buf, size_t size, const int64_t *m2m, int64_t n) {
    size_t used = 0;
    buf[0] = 0;
    for (int64_t i = 0; i < n && used + 24 < size; i++)
        used +=
            (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)m2m[i]);
}

/* A layout "{1,0:T(8,128)...}" for a shape of |rank|; *pos is at '{'. */
static cxla_status parse_layout(const parser *p, size_t *pos, int64_t rank,
                                cxla_layout **out_layout) {
    size_t start = *pos;
    cxla_layout *l = cxla_arena_alloc(p->arena, sizeof(cxla_layout));
    if (!l) return out_of_memory();
    int64_t m2m[CXLA_MAX_RANK];
    int64_t n = 0;
    size_t q = skip(p, start + 1);
    if (q < p->len && (is_digit(p->text[q]) || p->text[q] == '-')) {
        for (;;) {
            if (n == CXLA_MAX_RANK)
                return parse_error_at(p, q, "layout has more entries than the shape's rank %lld",
                                      (long long)rank);
            CXLA_RETURN_IF_ERROR(parse_int(p, &q, "a dimension number in the layout", &m2m[n]));
            n++;
            q = skip(p, q);
            if (!at_char(p, q, ',')) break;
            q = skip(p, q + 1);
        }
    }
    if (at_char(p, q, ':')) {
        cxla_strbuf extra[SLOT_COUNT];
        for (int s = 0; s < SLOT_COUNT; s++) cxla_strbuf_init(&extra[s]);
        int seen = 0;
        cxla_status st = NULL;
        q = skip(p, q + 1);
        while (!st && q < p->len && p->text[q] != '}') {
            st = parse_extension(p, &q, l, &seen, extra);
            q = skip(p, q);
        }
        if (!st) st = check_sparse_extensions(p, start, &extra[SLOT_D], &extra[SLOT_P]);
        if (!st) {
            for (int s = 1; s < SLOT_COUNT; s++)
                cxla_strbuf_append(&extra[0], extra[s].data ? extra[s].data : "", extra[s].len);
            if (extra[0].failed)
                st = out_of_memory();
            else if (extra[0].len &&
                     !(l->extra = cxla_arena_strndup(p->arena, extra[0].data, extra[0].len)))
                st = out_of_memory();
        }
        for (int s = 0; s < SLOT_COUNT; s++) cxla_strbuf_free(&extra[s]);
        CXLA_RETURN_IF_ERROR(st);
    }
    if (!at_char(p, q, '}')) return parse_error(p, q, "expected ',', ':' or '}' in the layout");
    q++;
    char buf[256];
    format_m2m(buf, sizeof(buf), m2m, n);
    if (n != rank)
        return parse_error_at(p, start,
                              "layout {%s} has %lld minor_to_major entries but the shape has "
                              "rank %lld",
                              buf, (long long)n, (long long)rank);
    bool used[CXLA_MAX_RANK] = {false};
    for (int64_t i = 0; i < n; i++) {
        if (m2m[i] < 0 || m2m[i] >= rank)
            return parse_error_at(p, start,
                                  "layout {%s} is not a permutation of 0..%lld: %lld is out of "
                                  "range",
                                  buf, (long long)(rank - 1), (long long)m2m[i]);
        if (used[m2m[i]])
            return parse_error_at(p, start,
                                  "layout {%s} is not a permutation of 0..%lld: %lld appears "
                                  "twice",
                                  buf, (long long)(rank - 1), (long long)m2m[i]);
        used[m2m[i]] = true;
    }
    if (rank) {
        l->minor_to_major = cxla_arena_alloc_array(p->arena, (size_t)rank, sizeof(int64_t));
        if (!l->minor_to_major) return out_of_memory();
        memcpy(l->minor_to_major, m2m, (size_t)rank * sizeof(int64_t));
    }
    *out_layout = l;
    *pos = q;
    return NULL;
}

static cxla_status parse_shape(const parser *p, size_t *pos, cxla_shape *out, int depth);

/* "(a, b, ...)"; *pos is at '('. */
static cxla_status parse_tuple(const parser *p, size_t *pos, cxla_shape *out, int depth) {
    size_t open = *pos;
    if (depth >= PARSE_MAX_DEPTH)
        return parse_error_at(p, open, "tuples nest deeper than %d levels", PARSE_MAX_DEPTH);
    out->type = CXLA_TUPLE;
    size_t q = skip(p, open + 1);
    if (at_char(p, q, ')')) {
        *pos = q + 1;
        return NULL;
    }
    int64_t cap = 0;
    for (;;) {
        if (out->tuple_count == cap) {
            int64_t ncap = cap ? cap * 2 : 4;
            cxla_shape *e = cxla_arena_alloc_array(p->arena, (size_t)ncap, sizeof(cxla_shape));
            if (!e) return out_of_memory();
            if (cap) memcpy(e, out->elements, (size_t)out->tuple_count * sizeof(cxla_shape));
            out->elements = e;
            cap = ncap;
        }
        CXLA_RETURN_IF_ERROR(parse_shape(p, &q, &out->elements[out->tuple_count], depth + 1));
        out->tuple_count++;
        q = skip(p, q);
        if (at_char(p, q, ')')) break;
        if (!at_char(p, q, ',')) {
            int64_t line, col;
            cxla_text_line_col(p->text, p->len, open, &line, &col);
            return parse_error(p, q,
                               "expected ',' or ')' in the tuple opened at line %lld, column %lld",
                               (long long)line, (long long)col);
        }
        q++;
    }
    *pos = q + 1;
    return NULL;
}

/* "f32[2,<=3,?]{1,0,2}" or a tuple; leading spaces skipped. */
static cxla_status parse_shape(const parser *p, size_t *pos, cxla_shape *out, int depth) {
    memset(out, 0, sizeof(*out));
    size_t q = skip(p, *pos);
    if (at_char(p, q, '(')) {
        *pos = q;
        return parse_tuple(p, pos, out, depth);
    }
    if (q >= p->len || !is_alpha(p->text[q]))
        return parse_error(p, q,
                           "expected a shape (an element type such as f32, or '(' for a "
                           "tuple)");
    size_t start = q;
    while (q < p->len && is_ident(p->text[q])) q++;
    size_t name_len = q - start;
    int nn = (int)(name_len > 64 ? 64 : name_len);
    cxla_type type = cxla_type_from_name(p->text + start, name_len);
    if (type == CXLA_TYPE_INVALID) {
        if (name_len == 1 && p->text[start] == 'b' && at_char(p, skip(p, q), '(')) {
            /* A buffer shape b(f32[32]) (XLA's Shape::IsBuffer: an array handed around
             * by reference, as custom calls such as Pin/Unpin take it) holds the same
             * elements as its array: cxla reads it as that array and prints the array. */
            size_t open = skip(p, q);
            q = open + 1;
            CXLA_RETURN_IF_ERROR(parse_shape(p, &q, out, depth + 1));
            if (out->type == CXLA_TUPLE || out->type == CXLA_TOKEN)
                return parse_error_at(p, open + 1, "a buffer shape b(...) holds an array");
            q = skip(p, q);
            if (!at_char(p, q, ')'))
                return parse_error(p, q, "expected ')' to close the buffer shape b(...)");
            *pos = q + 1;
            return NULL;
        }
        return parse_error_at(p, start, "unknown element type '%.*s%s'", nn, p->text + start,
                              name_len > 64 ? "..." : "");
    }
    out->type = type;
    q = skip(p, q);
    if (!at_char(p, q, '['))
        return parse_error(p, q, "expected '[' after the element type '%s'", cxla_type_name(type));
    size_t open = q;
    q = skip(p, q + 1);
    int64_t dims[CXLA_MAX_RANK];
    uint8_t dynamic[CXLA_MAX_RANK];
    int64_t rank = 0;
    bool any_dynamic = false;
    if (at_char(p, q, ']')) {
        q++;
    } else {
        for (;;) {
            if (rank == CXLA_MAX_RANK)
                return parse_error_at(p, q, "too many dimensions: cxla supports rank up to %d",
                                      CXLA_MAX_RANK);
            bool dyn = false;
            int64_t v;
            if (at_char(p, q, '?')) {
                dyn = true;
                v = CXLA_DIM_UNBOUNDED;
                q++;
            } else {
                if (at_char(p, q, '<') && at_char(p, q + 1, '=')) {
                    dyn = true;
                    q = skip(p, q + 2);
                }
                size_t at = q;
                CXLA_RETURN_IF_ERROR(
                    parse_int(p, &q, "a dimension size (a number, '<=N' or '?')", &v));
                if (v < 0)
                    return parse_error_at(p, at, "dimension size %lld is negative", (long long)v);
            }
            dims[rank] = v;
            dynamic[rank] = dyn;
            any_dynamic |= dyn;
            rank++;
            q = skip(p, q);
            if (at_char(p, q, ']')) {
                q++;
                break;
            }
            if (!at_char(p, q, ',')) {
                int64_t line, col;
                cxla_text_line_col(p->text, p->len, open, &line, &col);
                return parse_error(p, q,
                                   "expected ',' or ']' in the dimensions opened at line %lld, "
                                   "column %lld",
                                   (long long)line, (long long)col);
            }
            q = skip(p, q + 1);
        }
    }
    if ((type == CXLA_TOKEN || type == CXLA_OPAQUE) && rank != 0)
        return parse_error_at(p, start, "%s[] takes no dimensions", cxla_type_name(type));
    out->rank = rank;
    if (rank) {
        out->dims = cxla_arena_alloc_array(p->arena, (size_t)rank, sizeof(int64_t));
        if (!out->dims) return out_of_memory();
        memcpy(out->dims, dims, (size_t)rank * sizeof(int64_t));
        if (any_dynamic) {
            out->dynamic = cxla_arena_alloc(p->arena, (size_t)rank);
            if (!out->dynamic) return out_of_memory();
            memcpy(out->dynamic, dynamic, (size_t)rank);
        }
    }
    /* A '{' starts a layout only when a number or ':' follows: "f32[] {" before a
     * computation body, or "{}" after a shape, are left alone. */
    size_t end = q;
    size_t brace = skip(p, q);
    if (at_char(p, brace, '{')) {
        size_t t = skip(p, brace + 1);
        if (t < p->len && (is_digit(p->text[t]) || p->text[t] == ':' ||
                           (p->text[t] == '-' && t + 1 < p->len && is_digit(p->text[t + 1])))) {
            if (!cxla_type_is_array(type))
                return parse_error_at(p, brace, "%s[] cannot have a layout", cxla_type_name(type));
            end = brace;
            CXLA_RETURN_IF_ERROR(parse_layout(p, &end, rank, &out->layout));
        }
    }
    /* The remaining rule, that the buffer's size fits in memory arithmetic. */
    cxla_status st = cxla_shape_validate(out);
    if (st) {
        cxla_status e = parse_error_at(p, start, "%s", cxla_status_message(st));
        cxla_status_free(st);
        return e;
    }
    *pos = end;
    return NULL;
}

cxla_status cxla_shape_parse_at(const char *text, size_t len, size_t *pos, cxla_arena *arena,
                                cxla_shape *out_shape) {
    memset(out_shape, 0, sizeof(*out_shape));
    if (!text) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "no shape text (NULL)");
    if (len == (size_t)-1) len = strlen(text);
    if (*pos > len)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "shape text position %zu is past its end %zu", *pos, len);
    parser p = {.text = text, .len = len, .arena = arena};
    size_t q = *pos;
    cxla_status st = parse_shape(&p, &q, out_shape, 0);
    if (st) {
        memset(out_shape, 0, sizeof(*out_shape));
        return st;
    }
    *pos = q;
    return NULL;
}

cxla_status cxla_shape_parse(const char *text, size_t len, cxla_shape **out_shape) {
    *out_shape = NULL;
    if (!text) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "no shape text (NULL)");
    if (len == (size_t)-1) len = strlen(text);
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return out_of_memory();
    cxla_shape shape;
    size_t pos = 0;
    cxla_status st = cxla_shape_parse_at(text, len, &pos, arena, &shape);
    if (!st) {
        size_t rest = cxla_text_skip_space(text, len, pos);
        if (rest < len) {
            parser p = {.text = text, .len = len, .arena = arena};
            st = parse_error(&p, rest, "expected the end of the shape text");
        }
    }
    if (!st) st = cxla_shape_clone(&shape, out_shape);
    cxla_arena_destroy(arena);
    return st;
}
