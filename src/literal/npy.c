/* NumPy .npy files: format versions 1.0, 2.0 and 3.0 (numpy/lib/format.py).
 *
 * A file is the magic "\x93NUMPY", a major and a minor version byte, the header length
 * (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), the header (a Python dict
 * literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }) padded with spaces
 * and a newline, then the elements in C or Fortran order. Which descr stands for which
 * cxla type, ml_dtypes' raw 'V' types included, is written in docs/npy.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxla/npy.h"
#include "literal/literal_internal.h"

#define NPY_MAGIC         "\x93NUMPY"
#define NPY_MAGIC_LEN     6
#define NPY_ALIGN         64 /* numpy's ARRAY_ALIGN */
#define NPY_GROWTH_DIGITS 21 /* numpy's GROWTH_AXIS_MAX_DIGITS: spare room after the dict */

static bool host_is_little_endian(void) {
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* ---------------------------------------------------------------------------------------
 * Printable excerpts of untrusted bytes for error messages. */

/* Copies at most |max| bytes of |s| into |out| (size >= 4 * max + 4), escaping anything
 * that is not printable ASCII, and marks a cut with "...". */
static void excerpt(const char *s, size_t len, size_t max, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < len && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[o++] = (char)c;
        } else {
            o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
        }
    }
    if (len > max) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = 0;
}

#define EXCERPT_MAX 40
#define EXCERPT_BUF (4 * EXCERPT_MAX + 4)

/* ---------------------------------------------------------------------------------------
 * Element types. */

/* The descr cxla writes for each array type. ml_dtypes registers its types with byte
 * order '=' and kind 'V' (ml_dtypes/_src/floats.cc, intn_numpy.h), so np.save writes
 * them as '<V1' / '<V2' (numpy's dtype.str turns '=' into '<' on little-endian hosts).
 * float8_e5m2 is the exception in ml_dtypes (kind 'f': '<f1', which np.load cannot read);
 * cxla writes it as '<V1' too and reads '<f1' as f8e5m2. */
static char write_kind(cxla_type type) {
    switch (type) {
    case CXLA_PRED: return 'b';
    case CXLA_S8:
    case CXLA_S16:
    case CXLA_S32:
    case CXLA_S64: return 'i';
    case CXLA_U8:
    case CXLA_U16:
    case CXLA_U32:
    case CXLA_U64: return 'u';
    case CXLA_F16:
    case CXLA_F32:
    case CXLA_F64: return 'f';
    case CXLA_C64:
    case CXLA_C128: return 'c';
    default: return cxla_type_is_array(type) ? 'V' : 0;
    }
}

/* Appends the names of the array types whose storage is |size| bytes ("bf16, f16, ..."). */
static void list_types_of_size(cxla_strbuf *b, size_t size) {
    bool first = true;
    for (int t = 1; t < CXLA_TYPE_COUNT; t++) {
        if (!cxla_type_is_array((cxla_type)t) || cxla_type_storage((cxla_type)t) != size) continue;
        if (!first) cxla_strbuf_puts(b, ", ");
        cxla_strbuf_puts(b, cxla_type_name((cxla_type)t));
        first = false;
    }
    if (first) cxla_strbuf_puts(b, "none");
}

/* What a descr resolves to. */
typedef struct npy_dtype {
    cxla_type type;
    bool swap;        /* the file's byte order is not the host's */
    size_t item_size; /* bytes per element in the file (== cxla storage) */
} npy_dtype;

static cxla_status descr_error(const char *descr, size_t len, const char *why) {
    char ex[EXCERPT_BUF];
    excerpt(descr, len, EXCERPT_MAX, ex);
    return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "npy: unsupported descr '%s': %s", ex, why);
}

/* Resolves a descr string: [<>|=] kind digits. */
static cxla_status resolve_descr(const char *descr, size_t len, cxla_type hint, npy_dtype *out) {
    size_t i = 0;
    char order = '=';
    if (len > 0 && descr[0] && strchr("<>|=", descr[0])) order = descr[i++];
    if (i >= len) return descr_error(descr, len, "no type code");
    char kind = descr[i++];
    switch (kind) {
    case 'O': return descr_error(descr, len, "Python objects (pickled data) cannot be read");
    case 'S':
    case 'a':
    case 'U': return descr_error(descr, len, "strings are not supported");
    case 'M':
    case 'm': return descr_error(descr, len, "datetimes and timedeltas are not supported");
    default: break;
    }
    size_t digits = 0, size = 0;
    while (i < len && descr[i] >= '0' && descr[i] <= '9') {
        if (digits++ >= 6) return descr_error(descr, len, "item size too large");
        size = size * 10 + (size_t)(descr[i++] - '0');
    }
    if (i != len || digits == 0)
        return descr_error(descr, len,
                           "expected a byte order, a type code and an item size, as in '<f4'");
    cxla_type type = CXLA_TYPE_INVALID;
    switch (kind) {
    case 'b':
        if (size == 1) type = CXLA_PRED;
        break;
    case 'i':
        type = size == 1   ? CXLA_S8
               : size == 2 ? CXLA_S16
               : size == 4 ? CXLA_S32
               : size == 8 ? CXLA_S64
                           : CXLA_TYPE_INVALID;
        break;
    case 'u':
        type = size == 1   ? CXLA_U8
               : size == 2 ? CXLA_U16
               : size == 4 ? CXLA_U32
               : size == 8 ? CXLA_U64
                           : CXLA_TYPE_INVALID;
        break;
    case 'f':
        if (size > 8) return descr_error(descr, len, "long double is not supported");
        /* '<f1' is how np.save writes ml_dtypes.float8_e5m2. */
        type = size == 1   ? CXLA_F8E5M2
               : size == 2 ? CXLA_F16
               : size == 4 ? CXLA_F32
               : size == 8 ? CXLA_F64
                           : CXLA_TYPE_INVALID;
        break;
    case 'c':
        if (size > 16) return descr_error(descr, len, "complex long double is not supported");
        type = size == 8 ? CXLA_C64 : size == 16 ? CXLA_C128 : CXLA_TYPE_INVALID;
        break;
    case 'V': {
        char ex[EXCERPT_BUF];
        excerpt(descr, len, EXCERPT_MAX, ex);
        if (size == 0) return descr_error(descr, len, "zero-size void type");
        bool hint_ok = cxla_type_is_array(hint);
        if (hint_ok && cxla_type_storage(hint) == size) {
            type = hint;
            break;
        }
        cxla_strbuf b;
        cxla_strbuf_init(&b);
        if (hint == CXLA_TYPE_INVALID || !hint_ok) {
            cxla_strbuf_printf(&b,
                               "npy: descr '%s' is a raw %zu-byte type (np.save writes ml_dtypes "
                               "types such as bfloat16 this way); pass the expected element type "
                               "as the type hint (one of: ",
                               ex, size);
        } else {
            cxla_strbuf_printf(&b,
                               "npy: descr '%s' has %zu-byte elements but the type hint %s has "
                               "%zu; pass the expected element type as the type hint (one of: ",
                               ex, size, cxla_type_name(hint), cxla_type_storage(hint));
        }
        list_types_of_size(&b, size);
        cxla_strbuf_putc(&b, ')');
        char *msg = cxla_strbuf_take(&b);
        cxla_status st =
            cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s", msg ? msg : "npy: out of memory");
        free(msg);
        return st;
    }
    default: return descr_error(descr, len, "unknown type code");
    }
    if (type == CXLA_TYPE_INVALID) return descr_error(descr, len, "no cxla type has this size");
    out->type = type;
    out->item_size = size;
    size_t component = size;
    if (cxla_type_is_complex(type)) component /= 2;
    bool little = host_is_little_endian();
    out->swap = component > 1 && ((order == '<' && !little) || (order == '>' && little));
    return NULL;
}

/* ---------------------------------------------------------------------------------------
 * The header: a Python dict literal with the keys 'descr', 'fortran_order' and 'shape'. */

typedef struct header_parser {
    const char *s;
    size_t len;
    size_t pos;
    bool python2; /* format 1.0/2.0: accept Python 2 'L' suffixes on integers */
} header_parser;

static cxla_status header_error(const header_parser *p, const char *what) {
    char ex[EXCERPT_BUF];
    size_t pos = p->pos < p->len ? p->pos : p->len;
    excerpt(p->s + pos, p->len - pos, 24, ex);
    return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "npy header: %s at byte %zu (near \"%s\")",
                      what, pos, ex);
}

static void skip_space(header_parser *p) {
    while (p->pos < p->len && strchr(" \t\n\r\f\v", p->s[p->pos]) && p->s[p->pos]) p->pos++;
}

static bool at(const header_parser *p, char c) {
    return p->pos < p->len && p->s[p->pos] == c;
}

static bool is_ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* A quoted string ('...' or "..."); *out points into the header. */
static cxla_status parse_string(header_parser *p, const char **out, size_t *out_len) {
    if (!at(p, '\'') && !at(p, '"')) return header_error(p, "expected a quoted string");
    char quote = p->s[p->pos];
    size_t start = ++p->pos;
    while (p->pos < p->len && p->s[p->pos] != quote) {
        char c = p->s[p->pos];
        if (c == '\\') return header_error(p, "escape sequences in strings are not supported");
        if (c == '\n' || c == '\r' || c == 0) return header_error(p, "unterminated string");
        p->pos++;
    }
    if (p->pos >= p->len) return header_error(p, "unterminated string");
    *out = p->s + start;
    *out_len = p->pos - start;
    p->pos++;
    return NULL;
}

/* A non-negative decimal integer that fits in int64. */
static cxla_status parse_dim(header_parser *p, int64_t *out) {
    bool negative = false;
    if (at(p, '-') || at(p, '+')) {
        negative = p->s[p->pos] == '-';
        p->pos++;
        skip_space(p);
    }
    size_t start = p->pos;
    int64_t v = 0;
    bool overflow = false;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
        int digit = p->s[p->pos] - '0';
        if (!cxla_mul_i64(v, 10, &v) || !cxla_add_i64(v, digit, &v)) overflow = true;
        p->pos++;
    }
    if (p->pos == start) {
        p->pos = start;
        return header_error(p, "expected an integer dimension in 'shape'");
    }
    if (p->python2 && (at(p, 'L') || at(p, 'l'))) p->pos++;
    if (p->pos < p->len && (is_ident_char(p->s[p->pos]) || p->s[p->pos] == '.')) {
        p->pos = start;
        return header_error(p, "'shape' dimensions must be decimal integers");
    }
    if (overflow) {
        p->pos = start;
        return header_error(p, "dimension too large");
    }
    if (negative && v != 0) {
        p->pos = start;
        return header_error(p, "negative dimension");
    }
    *out = v;
    return NULL;
}

/* A tuple of integers: (), (5,), (2, 3), (2, 3,). */
static cxla_status parse_shape(header_parser *p, int64_t *dims, int64_t *out_rank) {
    if (!at(p, '(')) {
        if (at(p, '[')) return header_error(p, "'shape' must be a tuple, not a list");
        return header_error(p, "'shape' must be a tuple of integers");
    }
    p->pos++;
    skip_space(p);
    int64_t rank = 0;
    bool comma = false;
    while (!at(p, ')')) {
        if (at(p, '(') || at(p, '['))
            return header_error(p, "'shape' must be a flat tuple of integers (nested brackets)");
        if (rank >= CXLA_MAX_RANK) {
            char what[80];
            snprintf(what, sizeof(what), "'shape' has more than %d dimensions", CXLA_MAX_RANK);
            return header_error(p, what);
        }
        CXLA_RETURN_IF_ERROR(parse_dim(p, &dims[rank]));
        rank++;
        skip_space(p);
        if (at(p, ',')) {
            comma = true;
            p->pos++;
            skip_space(p);
        } else if (!at(p, ')')) {
            return header_error(p, "expected ',' or ')' in 'shape'");
        }
    }
    if (rank == 1 && !comma)
        return header_error(p, "'shape' (n) is an integer, not a tuple: write (n,)");
    p->pos++;
    *out_rank = rank;
    return NULL;
}

typedef struct npy_header {
    const char *descr;
    size_t descr_len;
    bool fortran_order;
    int64_t rank;
    int64_t dims[CXLA_MAX_RANK];
} npy_header;

static cxla_status parse_header(header_parser *p, npy_header *h) {
    enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };
    int seen = 0;
    skip_space(p);
    if (!at(p, '{')) return header_error(p, "the header is not a dict (expected '{')");
    p->pos++;
    skip_space(p);
    while (!at(p, '}')) {
        if (p->pos >= p->len) return header_error(p, "unterminated dict (expected '}')");
        const char *key;
        size_t key_len;
        size_t key_pos = p->pos;
        CXLA_RETURN_IF_ERROR(parse_string(p, &key, &key_len));
        int which = 0;
        if (key_len == 5 && memcmp(key, "descr", 5) == 0) which = KEY_DESCR;
        if (key_len == 13 && memcmp(key, "fortran_order", 13) == 0) which = KEY_FORTRAN;
        if (key_len == 5 && memcmp(key, "shape", 5) == 0) which = KEY_SHAPE;
        if (!which) {
            p->pos = key_pos;
            return header_error(p, "unexpected key (an npy header has exactly 'descr', "
                                   "'fortran_order' and 'shape')");
        }
        if (seen & which) {
            p->pos = key_pos;
            return header_error(p, "duplicate key");
        }
        seen |= which;
        skip_space(p);
        if (!at(p, ':')) return header_error(p, "expected ':' after a key");
        p->pos++;
        skip_space(p);
        if (which == KEY_DESCR) {
            if (at(p, '['))
                return header_error(p, "structured dtypes (a list of fields) are not supported");
            if (at(p, '(')) return header_error(p, "subarray dtypes are not supported");
            if (!at(p, '\'') && !at(p, '"')) return header_error(p, "'descr' must be a string");
            CXLA_RETURN_IF_ERROR(parse_string(p, &h->descr, &h->descr_len));
        } else if (which == KEY_FORTRAN) {
            size_t start = p->pos;
            while (p->pos < p->len && is_ident_char(p->s[p->pos])) p->pos++;
            size_t n = p->pos - start;
            if (n == 4 && memcmp(p->s + start, "True", 4) == 0) {
                h->fortran_order = true;
            } else if (n == 5 && memcmp(p->s + start, "False", 5) == 0) {
                h->fortran_order = false;
            } else {
                p->pos = start;
                return header_error(p, "'fortran_order' must be True or False");
            }
        } else {
            CXLA_RETURN_IF_ERROR(parse_shape(p, h->dims, &h->rank));
        }
        skip_space(p);
        if (at(p, ',')) {
            p->pos++;
            skip_space(p);
        } else if (!at(p, '}')) {
            return header_error(p, "expected ',' or '}' after a value");
        }
    }
    p->pos++;
    skip_space(p);
    if (p->pos != p->len) return header_error(p, "unexpected text after the header dict");
    if (seen != (KEY_DESCR | KEY_FORTRAN | KEY_SHAPE)) {
        char what[120];
        snprintf(what, sizeof(what), "missing key%s%s%s", (seen & KEY_DESCR) ? "" : " 'descr'",
                 (seen & KEY_FORTRAN) ? "" : " 'fortran_order'",
                 (seen & KEY_SHAPE) ? "" : " 'shape'");
        return header_error(p, what);
    }
    return NULL;
}

/* ---------------------------------------------------------------------------------------
 * Elements. */

static void swap_bytes(uint8_t *p, size_t n) {
    for (size_t i = 0; i < n / 2; i++) {
        uint8_t t = p[i];
        p[i] = p[n - 1 - i];
        p[n - 1 - i] = t;
    }
}

/* Brings a one-byte element read from a file to cxla's storage form (types.h): pred 0/1,
 * sub-byte integers sign- or zero-extended from their low bits (ml_dtypes ignores the
 * upper bits), f4e2m1fn and the f6 types in the low bits. */
static uint8_t normalize_byte(cxla_type type, uint8_t b) {
    switch (type) {
    case CXLA_PRED: return b != 0;
    case CXLA_S1:
    case CXLA_S2:
    case CXLA_S4: {
        unsigned bits = (unsigned)cxla_type_bits(type);
        uint8_t mask = (uint8_t)((1u << bits) - 1), sign = (uint8_t)(1u << (bits - 1));
        b &= mask;
        return (b & sign) ? (uint8_t)(b | (uint8_t)~mask) : b;
    }
    case CXLA_U1:
    case CXLA_U2:
    case CXLA_U4:
    case CXLA_F4E2M1FN:
    case CXLA_F6E2M3FN:
    case CXLA_F6E3M2FN: return (uint8_t)(b & ((1u << cxla_type_bits(type)) - 1));
    default: return b;
    }
}

static bool needs_normalize(cxla_type type) {
    switch (type) {
    case CXLA_PRED:
    case CXLA_S1:
    case CXLA_S2:
    case CXLA_S4:
    case CXLA_U1:
    case CXLA_U2:
    case CXLA_U4:
    case CXLA_F4E2M1FN:
    case CXLA_F6E2M3FN:
    case CXLA_F6E3M2FN: return true;
    default: return false;
    }
}

/* The byte a one-byte element is written as: what ml_dtypes stores (the value in the
 * low bits, the upper bits zero; ml_dtypes/include/intn.h). */
static uint8_t file_byte(cxla_type type, uint8_t b) {
    switch (type) {
    case CXLA_PRED: return b != 0;
    case CXLA_S1:
    case CXLA_S2:
    case CXLA_S4:
    case CXLA_U1:
    case CXLA_U2:
    case CXLA_U4:
    case CXLA_F4E2M1FN:
    case CXLA_F6E2M3FN:
    case CXLA_F6E3M2FN: return (uint8_t)(b & ((1u << cxla_type_bits(type)) - 1));
    default: return b;
    }
}

/* Appends a shape as Python writes a tuple: (), (5,), (2, 3). */
static void print_shape(cxla_strbuf *b, int64_t rank, const int64_t *dims) {
    cxla_strbuf_putc(b, '(');
    for (int64_t i = 0; i < rank; i++) {
        if (i) cxla_strbuf_puts(b, ", ");
        cxla_strbuf_printf(b, "%lld", (long long)dims[i]);
    }
    if (rank == 1) cxla_strbuf_putc(b, ',');
    cxla_strbuf_putc(b, ')');
}

/* ---------------------------------------------------------------------------------------
 * Reading. */

cxla_status cxla_npy_read_buffer(const void *data, size_t size, cxla_type type_hint,
                                 cxla_literal **out_literal) {
    if (!out_literal || (!data && size))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "npy: NULL argument");
    *out_literal = NULL;
    const uint8_t *bytes = data;
    if (size < NPY_MAGIC_LEN + 2) {
        size_t n = size < NPY_MAGIC_LEN ? size : NPY_MAGIC_LEN;
        if (n > 0 && memcmp(bytes, NPY_MAGIC, n) != 0)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "npy: not a .npy file (the magic string \\x93NUMPY is missing)");
        return cxla_error(CXLA_STATUS_DATA_LOSS,
                          "npy: truncated file: %zu bytes, the magic string and version need 8",
                          size);
    }
    if (memcmp(bytes, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "npy: not a .npy file (the magic string \\x93NUMPY is missing)");
    unsigned major = bytes[6], minor = bytes[7];
    if (minor != 0 || major < 1 || major > 3)
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "npy: unsupported format version %u.%u (cxla reads 1.0, 2.0 and 3.0)",
                          major, minor);
    size_t prefix = major == 1 ? 10 : 12;
    if (size < prefix)
        return cxla_error(CXLA_STATUS_DATA_LOSS,
                          "npy: truncated file: %zu bytes, the version %u.0 header length "
                          "ends at byte %zu",
                          size, major, prefix);
    size_t header_len = (size_t)bytes[8] | (size_t)bytes[9] << 8;
    if (major > 1) header_len |= (size_t)bytes[10] << 16 | (size_t)bytes[11] << 24;
    if (header_len > size - prefix)
        return cxla_error(CXLA_STATUS_DATA_LOSS,
                          "npy: truncated file: the header is %zu bytes but only %zu follow "
                          "the header length",
                          header_len, size - prefix);

    header_parser p = {.s = (const char *)bytes + prefix, .len = header_len, .python2 = major < 3};
    npy_header h = {0};
    CXLA_RETURN_IF_ERROR(parse_header(&p, &h));
    npy_dtype dt = {0};
    CXLA_RETURN_IF_ERROR(resolve_descr(h.descr, h.descr_len, type_hint, &dt));

    /* Element count and data size, checked: any 0 dimension makes the array empty. */
    int64_t count = 1;
    bool empty = false;
    for (int64_t i = 0; i < h.rank; i++) empty |= h.dims[i] == 0;
    for (int64_t i = 0; i < h.rank && !empty; i++) {
        if (!cxla_mul_i64(count, h.dims[i], &count)) {
            cxla_strbuf b;
            cxla_strbuf_init(&b);
            print_shape(&b, h.rank, h.dims);
            char *s = cxla_strbuf_take(&b);
            cxla_status st =
                cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                           "npy: the element count of shape %s overflows", s ? s : "?");
            free(s);
            return st;
        }
    }
    if (empty) count = 0;
    size_t data_off = prefix + header_len, nbytes;
    if ((uint64_t)count > SIZE_MAX || !cxla_mul_size((size_t)count, dt.item_size, &nbytes))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "npy: the data size (%lld elements of %zu bytes) overflows",
                          (long long)count, dt.item_size);
    if (nbytes > size - data_off) {
        cxla_strbuf b;
        cxla_strbuf_init(&b);
        print_shape(&b, h.rank, h.dims);
        char *s = cxla_strbuf_take(&b);
        char ex[EXCERPT_BUF];
        excerpt(h.descr, h.descr_len, EXCERPT_MAX, ex);
        cxla_status st = cxla_error(CXLA_STATUS_DATA_LOSS,
                                    "npy: truncated data: shape %s of '%s' needs %zu bytes, "
                                    "the file has %zu after the header",
                                    s ? s : "?", ex, nbytes, size - data_off);
        free(s);
        return st;
    }
    /* Bytes after the data are ignored, as np.load does. */

    cxla_shape shape = {.type = dt.type, .rank = h.rank, .dims = h.dims};
    cxla_literal *lit = NULL;
    CXLA_RETURN_IF_ERROR(cxla_literal_create(&shape, &lit));
    if (cxla_literal_byte_size(lit) != nbytes) {
        cxla_literal_free(lit);
        return cxla_error(CXLA_STATUS_INTERNAL, "npy: literal size %zu, expected %zu",
                          cxla_literal_byte_size(lit), nbytes);
    }
    uint8_t *dst = cxla_literal_data(lit);
    const uint8_t *src = bytes + data_off;
    size_t item = dt.item_size;
    bool transpose = h.fortran_order && h.rank > 1;
    if (nbytes > 0 && !transpose) memcpy(dst, src, nbytes);
    if (nbytes > 0 && transpose) {
        /* Element at logical index x sits at sum x[d] * fstride[d] in Fortran order. */
        int64_t fstride[CXLA_MAX_RANK], index[CXLA_MAX_RANK] = {0};
        fstride[0] = 1;
        for (int64_t d = 1; d < h.rank; d++) fstride[d] = fstride[d - 1] * h.dims[d - 1];
        for (int64_t i = 0; i < count; i++) {
            int64_t off = 0;
            for (int64_t d = 0; d < h.rank; d++) off += index[d] * fstride[d];
            memcpy(dst + (size_t)i * item, src + (size_t)off * item, item);
            cxla_index_next(h.rank, h.dims, index);
        }
    }
    if (dt.swap) {
        size_t component = cxla_type_is_complex(dt.type) ? item / 2 : item;
        for (size_t off = 0; off < nbytes; off += component) swap_bytes(dst + off, component);
    }
    if (needs_normalize(dt.type)) {
        for (size_t i = 0; i < nbytes; i++) dst[i] = normalize_byte(dt.type, dst[i]);
    }
    *out_literal = lit;
    return NULL;
}

/* The size of the file a .npy header describes (header and data), from its first bytes
 * |bytes| (|size| of them: the magic, version, length and the whole header); 0 when it
 * cannot tell (cxla_npy_read_buffer then says why). */
static size_t npy_file_size(const uint8_t *bytes, size_t size, cxla_type type_hint) {
    if (size < 12 || memcmp(bytes, NPY_MAGIC, NPY_MAGIC_LEN) != 0) return 0;
    unsigned major = bytes[6];
    if (major < 1 || major > 3 || bytes[7] != 0) return 0;
    size_t prefix = major == 1 ? 10 : 12;
    size_t header_len = (size_t)bytes[8] | (size_t)bytes[9] << 8;
    if (major > 1) header_len |= (size_t)bytes[10] << 16 | (size_t)bytes[11] << 24;
    if (header_len > size - prefix) return 0;
    header_parser p = {.s = (const char *)bytes + prefix, .len = header_len, .python2 = major < 3};
    npy_header h = {0};
    npy_dtype dt = {0};
    cxla_status s = parse_header(&p, &h);
    if (!s) s = resolve_descr(h.descr, h.descr_len, type_hint, &dt);
    if (s) {
        cxla_status_free(s);
        return 0;
    }
    size_t count = 1, nbytes, total;
    for (int64_t i = 0; i < h.rank; i++)
        if (h.dims[i] < 0 || !cxla_mul_size(count, (size_t)h.dims[i], &count)) return 0;
    if (!cxla_mul_size(count, dt.item_size, &nbytes)) return 0;
    if (!cxla_add_size(prefix + header_len, nbytes, &total)) return 0;
    return total;
}

/* The .npy header's bytes are read first and checked, and then only the data it
 * describes: a file without an end (a pipe, /dev/zero) or a header that claims more
 * than the file holds fails before the data is allocated. */
cxla_status cxla_npy_read_file(const char *path, cxla_type type_hint, cxla_literal **out_literal) {
    if (!path || !out_literal)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "npy: NULL argument");
    *out_literal = NULL;
    FILE *f = NULL;
    bool regular = false;
    size_t file_size = 0;
    CXLA_RETURN_IF_ERROR(cxla_open_file(path, &f, &regular, &file_size)); /* names |path| */
    /* The magic, version and header length; then the header (at most 4 GiB by format,
     * bounded here like any read from a source without a size). */
    uint8_t start[12];
    size_t have = fread(start, 1, sizeof(start), f);
    size_t header_len = 0;
    if (have >= 10) header_len = (size_t)start[8] | (size_t)start[9] << 8;
    if (have == 12 && start[6] > 1) header_len |= (size_t)start[10] << 16 | (size_t)start[11] << 24;
    size_t prefix_len = have >= 8 && start[6] == 1 ? 10 : 12;
    size_t want = have < prefix_len ? have : prefix_len + header_len;
    cxla_status st = NULL;
    if (want > cxla_read_limit() || (regular && want > file_size)) want = have; /* truncated */
    if (want < have) want = have;
    uint8_t *data = malloc(want + 1);
    if (!data) st = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    size_t got = 0;
    if (!st) {
        memcpy(data, start, have);
        got = have + (want > have ? fread(data + have, 1, want - have, f) : 0);
    }
    size_t total = st ? 0 : npy_file_size(data, got, type_hint);
    if (!st && total > got) {
        if (regular && total > file_size) {
            /* cxla_npy_read_buffer words the truncation; no need to read the data. */
            total = got;
        } else if (!regular && total > cxla_read_limit()) {
            st = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                            "npy: the header describes %zu bytes, more than the %zu read from a "
                            "source that is not a regular file (CXLA_READ_LIMIT sets another "
                            "limit, in bytes)",
                            total, cxla_read_limit());
        } else {
            uint8_t *bigger = realloc(data, total);
            if (!bigger) {
                st = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                                "out of memory for the %zu bytes of the array", total);
            } else {
                data = bigger;
                got += fread(data + got, 1, total - got, f);
            }
        }
    }
    if (!st && ferror(f))
        st = cxla_error(CXLA_STATUS_UNAVAILABLE, "error reading: %s", strerror(errno));
    fclose(f);
    if (!st) st = cxla_npy_read_buffer(data, got, type_hint, out_literal);
    free(data);
    return cxla_status_annotate(st, "reading '%s'", path);
}

/* ---------------------------------------------------------------------------------------
 * Writing. */

cxla_status cxla_npy_write_buffer(const cxla_literal *literal, void **out_data, size_t *out_size) {
    if (!literal || !out_data || !out_size)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "npy: NULL argument");
    *out_data = NULL;
    *out_size = 0;
    if (cxla_type_is_array(cxla_literal_type(literal)) && cxla_literal_is_padded(literal)) {
        /* A literal below its dynamic bounds is written as its value alone. */
        cxla_literal *value = NULL;
        CXLA_RETURN_IF_ERROR(cxla_literal_to_static(literal, &value));
        cxla_status st = cxla_npy_write_buffer(value, out_data, out_size);
        cxla_literal_free(value);
        return st;
    }
    const cxla_shape *shape = cxla_literal_shape(literal);
    cxla_type type = shape->type;
    char kind = write_kind(type);
    if (!cxla_shape_is_array(shape) || !kind)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "npy: only arrays can be written to .npy files, not %s",
                          cxla_type_name(type));
    size_t item = cxla_type_storage(type);
    int64_t count = cxla_literal_element_count(literal);
    size_t nbytes;
    if (count < 0 || (uint64_t)count > SIZE_MAX || !cxla_mul_size((size_t)count, item, &nbytes))
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "npy: array too large");

    /* The header, byte for byte as np.save writes it (numpy/lib/format.py,
     * _write_array_header and _wrap_header). */
    char order = item == 1 && kind != 'V' ? '|' : host_is_little_endian() ? '<' : '>';
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_printf(&b, "{'descr': '%c%c%zu', 'fortran_order': False, 'shape': ", order, kind,
                       item);
    print_shape(&b, shape->rank, shape->dims);
    cxla_strbuf_puts(&b, ", }");
    if (shape->rank > 0) {
        char first[24];
        int n = snprintf(first, sizeof(first), "%lld", (long long)shape->dims[0]);
        for (int i = n; i < NPY_GROWTH_DIGITS; i++) cxla_strbuf_putc(&b, ' ');
    }
    if (b.failed) {
        cxla_strbuf_free(&b);
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "npy: out of memory");
    }
    size_t dict_len = b.len, prefix = 10;
    size_t hlen = dict_len + 1;
    size_t pad = NPY_ALIGN - (prefix + hlen) % NPY_ALIGN;
    int major = 1;
    if (hlen + pad > 0xffff) {
        major = 2;
        prefix = 12;
        pad = NPY_ALIGN - (prefix + hlen) % NPY_ALIGN;
    }
    size_t header_total = hlen + pad, total;
    if (!cxla_add_size(prefix + header_total, nbytes, &total)) {
        cxla_strbuf_free(&b);
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "npy: array too large");
    }
    uint8_t *out = malloc(total);
    if (!out) {
        cxla_strbuf_free(&b);
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "npy: out of memory (%zu bytes)", total);
    }
    memcpy(out, NPY_MAGIC, NPY_MAGIC_LEN);
    out[6] = (uint8_t)major;
    out[7] = 0;
    out[8] = (uint8_t)(header_total & 0xff);
    out[9] = (uint8_t)(header_total >> 8 & 0xff);
    if (major == 2) {
        out[10] = (uint8_t)(header_total >> 16 & 0xff);
        out[11] = (uint8_t)(header_total >> 24 & 0xff);
    }
    memcpy(out + prefix, b.data, dict_len);
    memset(out + prefix + dict_len, ' ', pad);
    out[prefix + dict_len + pad] = '\n';
    cxla_strbuf_free(&b);

    /* The elements in C order, whatever the literal's layout. */
    uint8_t *dst = out + prefix + header_total;
    const uint8_t *src = cxla_literal_data_const(literal);
    if (nbytes > 0) {
        if (cxla_layout_is_default(shape)) {
            memcpy(dst, src, nbytes);
        } else {
            int64_t index[CXLA_MAX_RANK] = {0};
            for (int64_t i = 0; i < count; i++) {
                int64_t linear = cxla_shape_linear_index(shape, index);
                memcpy(dst + (size_t)i * item, src + (size_t)linear * item, item);
                cxla_index_next(shape->rank, shape->dims, index);
            }
        }
        if (needs_normalize(type)) {
            for (size_t i = 0; i < nbytes; i++) dst[i] = file_byte(type, dst[i]);
        }
    }
    *out_data = out;
    *out_size = total;
    return NULL;
}

cxla_status cxla_npy_write_file(const char *path, const cxla_literal *literal) {
    if (!path) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "npy: NULL path");
    void *data = NULL;
    size_t size = 0;
    CXLA_RETURN_IF_ERROR(
        cxla_status_annotate(cxla_npy_write_buffer(literal, &data, &size), "writing '%s'", path));
    cxla_status st = cxla_write_file(path, data, size); /* names |path| itself */
    free(data);
    return st;
}
