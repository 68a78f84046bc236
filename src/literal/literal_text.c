/* Literal text: printing and parsing XLA's literal syntax.
 *
 * Printing follows xla/literal.cc (PrintHelper, oneline form, the form HLO constants use)
 * and xla/util.cc RoundTripFpToString for floats; parsing follows
 * xla/hlo/parser/hlo_parser.cc (ParseLiteral, ParseDenseLiteral, SetValueInLiteral) and
 * the number tokens of hlo_lexer.cc. Where XLA's parser has quirks, cxla is stricter or
 * exact instead (see the comments at each place):
 *   - commas are required between values (XLA skips commas anywhere);
 *   - integer tokens for float types are read as written, so "-0" stays -0 and integers
 *     above 2^63 keep their value (XLA converts them through int64);
 *   - pred takes true/false/0/1 only (XLA takes any integer as != 0);
 *   - a NaN payload on the imaginary part applies to the imaginary part.
 *
 * Printing rules (one line, the form of HLO constants):
 *   scalar:  1, -inf, nan, nan(0x1), true/false for pred, (1, 2) for complex
 *   rank 1:  {1, 2, 3}            (pred arrays print 0/1)
 *   rank 2+: { { 1, 2 }, { 3, 4 } }; innermost rows of <= 1 element print {1} / {};
 *            from rank 4 the inner opening braces carry "/ *iD=N* /" index comments
 *   tuple:   ( {1, 2}, 3 ), the empty tuple "(  )"; token: "token"
 *   with CXLA_LITERAL_PRINT_SHAPE each array is preceded by its shape and a space
 *   (plus "(d0,d1)" sizes for dynamic shapes, as XLA prints them); only the elements
 *   below the dynamic sizes print. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "literal/literal_internal.h"
#include "shape/shape_internal.h"

/* ---- printing ------------------------------------------------------------------- */

/* std::numeric_limits<T>::max_digits10 of a small float format (ml_dtypes' formula:
 * ceil(1 + digits * log10(2)) with digits = mantissa bits + 1): f16 5, bf16 4, e5m2 2,
 * e4m3* 3, e3m4 3, e8m0fnu 2, f4e2m1fn 2. */
static int max_digits10(const cxla_type_info *info) {
    return (int)ceil(1.0 + (info->mantissa_bits + 1) * 0.30102999566398119521);
}

static void print_nan(cxla_strbuf *b, bool negative, uint64_t payload, uint64_t quiet,
                      bool with_payload) {
    cxla_strbuf_puts(b, negative ? "-nan" : "nan");
    if (with_payload && payload != quiet)
        cxla_strbuf_printf(b, "(0x%llx)", (unsigned long long)payload);
}

/* f32: "%.6g" when it reads back to the same float, else "%.9g". */
static void print_f32(cxla_strbuf *b, const void *p) {
    uint32_t u;
    memcpy(&u, p, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) {
        if (u & 0x7fffffu)
            print_nan(b, u >> 31, u & 0x7fffffu, 0x400000u, true);
        else
            cxla_strbuf_puts(b, u >> 31 ? "-inf" : "inf");
        return;
    }
    float f;
    memcpy(&f, p, 4);
    char buf[64];
    snprintf(buf, sizeof buf, "%.6g", (double)f);
    if (strtof(buf, NULL) != f) snprintf(buf, sizeof buf, "%.9g", (double)f);
    cxla_strbuf_puts(b, buf);
}

/* f64: "%.15g" when it reads back to the same double, else "%.17g". */
static void print_f64(cxla_strbuf *b, const void *p) {
    uint64_t u;
    memcpy(&u, p, 8);
    const uint64_t exp_mask = 0x7ff0000000000000ull, mant_mask = 0xfffffffffffffull;
    if ((u & exp_mask) == exp_mask) {
        if (u & mant_mask)
            print_nan(b, u >> 63, u & mant_mask, 0x8000000000000ull, true);
        else
            cxla_strbuf_puts(b, u >> 63 ? "-inf" : "inf");
        return;
    }
    double d;
    memcpy(&d, p, 8);
    char buf[64];
    snprintf(buf, sizeof buf, "%.15g", d);
    if (strtod(buf, NULL) != d) snprintf(buf, sizeof buf, "%.17g", d);
    cxla_strbuf_puts(b, buf);
}

static uint32_t load_small_bits(cxla_type type, const void *p) {
    if (cxla_type_storage(type) == 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    uint8_t v = *(const uint8_t *)p;
    return v & ((1u << cxla_type_bits(type)) - 1); /* f4/f6: the low bits */
}

static void store_small_bits(cxla_type type, void *p, uint32_t bits) {
    if (cxla_type_storage(type) == 2) {
        uint16_t v = (uint16_t)bits;
        memcpy(p, &v, 2);
    } else {
        *(uint8_t *)p = (uint8_t)bits;
    }
}

/* f16, bf16, f8, f4: "%.*g" with the type's max_digits10 (XLA tries no shorter form). NaN
 * payloads print for the IEEE-style formats only (f16, bf16, e5m2, e4m3, e3m4), as XLA's
 * RoundTripNanPayload does; the sign of a NaN is its sign bit (fnuz's NaN, 0x80, prints
 * "-nan", as static_cast<double> of it gives -NaN in ml_dtypes; e8m0fnu has no sign). */
static void print_small_float(cxla_strbuf *b, cxla_type type, const void *p) {
    const cxla_type_info *info = cxla_type_get_info(type);
    uint32_t bits = load_small_bits(type, p);
    double v = cxla_float_to_double(type, bits);
    if (isnan(v)) {
        bool negative = info->float_kind != CXLA_FLOAT_FNU && ((bits >> (info->bits - 1)) & 1);
        int m = info->mantissa_bits;
        uint32_t mask = m > 0 ? (1u << m) - 1 : 0;
        print_nan(b, negative, bits & mask, m > 0 ? 1u << (m - 1) : 0,
                  info->float_kind == CXLA_FLOAT_IEEE);
        return;
    }
    if (isinf(v)) {
        cxla_strbuf_puts(b, v < 0 ? "-inf" : "inf");
        return;
    }
    /* XLA prints max_digits10 digits, which reads back to the same value for every
     * format but one: e8m0fnu's 2^-127 (0x00) prints "5.9e-39", which rounds to 0x01.
     * cxla adds digits until the text reads back (only that value ever needs it). */
    char buf[64];
    for (int digits = max_digits10(info); digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (cxla_float_from_double(type, strtod(buf, NULL)) == bits) break;
    }
    cxla_strbuf_puts(b, buf);
}

static void print_real(cxla_strbuf *b, cxla_type type, const void *p) {
    if (type == CXLA_F32)
        print_f32(b, p);
    else if (type == CXLA_F64)
        print_f64(b, p);
    else
        print_small_float(b, type, p);
}

/* One element; |pred_digit| prints pred as 0/1 (arrays) instead of true/false (scalars). */
static void print_value(cxla_strbuf *b, cxla_type type, const void *p, bool pred_digit) {
    switch (cxla_type_class_of(type)) {
    case CXLA_CLASS_PRED:
        if (pred_digit)
            cxla_strbuf_putc(b, *(const uint8_t *)p ? '1' : '0');
        else
            cxla_strbuf_puts(b, *(const uint8_t *)p ? "true" : "false");
        break;
    case CXLA_CLASS_SIGNED: cxla_strbuf_printf(b, "%" PRId64, cxla_load_s64(type, p)); break;
    case CXLA_CLASS_UNSIGNED: cxla_strbuf_printf(b, "%" PRIu64, cxla_load_u64(type, p)); break;
    case CXLA_CLASS_FLOAT: print_real(b, type, p); break;
    case CXLA_CLASS_COMPLEX: {
        cxla_type comp = cxla_type_component(type);
        size_t half = cxla_type_storage(comp);
        cxla_strbuf_putc(b, '(');
        print_real(b, comp, p);
        cxla_strbuf_puts(b, ", ");
        print_real(b, comp, (const char *)p + half);
        cxla_strbuf_putc(b, ')');
        break;
    }
    default: cxla_strbuf_puts(b, "?"); break;
    }
}

void cxla_literal_print_element(cxla_strbuf *b, cxla_type type, const void *p) {
    print_value(b, type, p, false);
}

typedef struct array_printer {
    cxla_strbuf *b;
    const cxla_literal *lit;
    const int64_t *dims;
    int64_t rank;
    int64_t strides[CXLA_MAX_RANK];
    int64_t index[CXLA_MAX_RANK];
    size_t elem_size;
} array_printer;

/* XLA's DenseArrayPrintHelper with oneline=true: the brace of the innermost dimension
 * hugs rows of <= 1 element, outer braces are padded with spaces, and from rank 4 the
 * opening brace of every inner non-innermost dimension names the index above it. */
static void print_level(array_printer *ap, int64_t level, int64_t offset) {
    cxla_strbuf *b = ap->b;
    int64_t rank = ap->rank, dim = ap->dims[level];
    bool innermost = level == rank - 1;
    if (rank == 1) {
        cxla_strbuf_putc(b, '{');
    } else if (innermost) {
        cxla_strbuf_puts(b, dim <= 1 ? "{" : "{ ");
    } else if (rank > 3 && level > 0) {
        cxla_strbuf_printf(b, "{ /*i%" PRId64 "=%" PRId64 "*/%s", level - 1, ap->index[level - 1],
                           dim > 0 ? " " : "");
    } else {
        cxla_strbuf_puts(b, "{ ");
    }
    for (int64_t i = 0; i < dim; i++) {
        ap->index[level] = i;
        int64_t off = offset + i * ap->strides[level];
        if (innermost) {
            const char *data = ap->lit->data;
            print_value(b, ap->lit->shape->type, data + (size_t)off * ap->elem_size, true);
        } else {
            print_level(ap, level + 1, off);
        }
        if (i < dim - 1) cxla_strbuf_puts(b, ", ");
    }
    if (rank == 1)
        cxla_strbuf_putc(b, '}');
    else if (innermost)
        cxla_strbuf_puts(b, dim <= 1 ? "}" : " }");
    else
        cxla_strbuf_puts(b, " }");
}

static bool shape_is_dynamic(const cxla_shape *shape) {
    if (!shape->dynamic) return false;
    for (int64_t i = 0; i < shape->rank; i++)
        if (shape->dynamic[i]) return true;
    return false;
}

static void print_array(cxla_strbuf *b, const cxla_literal *lit, int flags) {
    const cxla_shape *shape = lit->shape;
    if (flags & CXLA_LITERAL_PRINT_SHAPE) {
        cxla_shape_print(b, shape,
                         (flags & CXLA_LITERAL_PRINT_LAYOUT) ? CXLA_SHAPE_PRINT_DEFAULT
                                                             : CXLA_SHAPE_PRINT_NO_LAYOUT);
        if (shape_is_dynamic(shape)) {
            /* XLA appends the size of every dimension. */
            cxla_strbuf_putc(b, '(');
            for (int64_t i = 0; i < shape->rank; i++)
                cxla_strbuf_printf(b, "%s%" PRId64, i ? "," : "",
                                   cxla_literal_dynamic_size(lit, i));
            cxla_strbuf_putc(b, ')');
        }
        cxla_strbuf_putc(b, ' ');
    }
    if (shape->rank == 0) {
        print_value(b, shape->type, lit->data, false);
        return;
    }
    int64_t sizes[CXLA_MAX_RANK];
    cxla_literal_sizes(lit, sizes);
    array_printer ap = {.b = b,
                        .lit = lit,
                        .dims = sizes,
                        .rank = shape->rank,
                        .elem_size = cxla_type_storage(shape->type)};
    cxla_shape_strides(shape, ap.strides);
    print_level(&ap, 0, 0);
}

void cxla_literal_print(cxla_strbuf *b, const cxla_literal *literal, int flags) {
    const cxla_shape *shape = literal->shape;
    switch (shape->type) {
    case CXLA_TUPLE:
        cxla_strbuf_puts(b, "( ");
        for (int64_t i = 0; i < literal->tuple_count; i++) {
            if (i > 0) cxla_strbuf_puts(b, ", ");
            cxla_literal_print(b, literal->elements[i], flags);
        }
        cxla_strbuf_puts(b, " )");
        break;
    case CXLA_TOKEN: cxla_strbuf_puts(b, "token"); break;
    case CXLA_OPAQUE: cxla_strbuf_puts(b, "opaque"); break;
    default: print_array(b, literal, flags); break;
    }
}

char *cxla_literal_to_string(const cxla_literal *literal, int flags) {
    if (!literal) return NULL;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_literal_print(&b, literal, flags);
    return cxla_strbuf_take(&b);
}

/* ---- parsing: errors and tokens ----------------------------------------------------- */

/* Nesting limit for tuples read with their own shapes (arrays nest at most
 * CXLA_MAX_RANK deep; given tuple shapes are as deep as the caller made them). */
#define MAX_TUPLE_DEPTH 200

typedef struct parser {
    const char *text;
    size_t len;
    size_t pos;
    cxla_status error; /* the first error */
    size_t error_pos;  /* where it was found (for choosing between two attempts) */
    int depth;
} parser;

static bool fail_status(parser *P, size_t pos, cxla_status s) {
    if (P->error) {
        cxla_status_free(s);
        return false;
    }
    P->error = s;
    P->error_pos = pos;
    return false;
}

static bool vfail_at(parser *P, size_t pos, cxla_status_code code, const char *format,
                     va_list args) {
    if (P->error) return false;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_vprintf(&b, format, args);
    cxla_strbuf_puts(&b, " at ");
    cxla_describe_position(&b, P->text, P->len, pos);
    cxla_status s = b.failed ? cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")
                             : cxla_error(code, "%s", b.data);
    cxla_strbuf_free(&b);
    return fail_status(P, pos, s);
}

/* Records "<message> at line L, column C" plus the line and a caret; returns false. */
static bool fail_at(parser *P, size_t pos, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail_at(parser *P, size_t pos, const char *format, ...) {
    va_list args;
    va_start(args, format);
    bool r = vfail_at(P, pos, CXLA_STATUS_INVALID_ARGUMENT, format, args);
    va_end(args);
    return r;
}

static bool fail_code_at(parser *P, size_t pos, cxla_status_code code, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
static bool fail_code_at(parser *P, size_t pos, cxla_status_code code, const char *format, ...) {
    va_list args;
    va_start(args, format);
    bool r = vfail_at(P, pos, code, format, args);
    va_end(args);
    return r;
}

static void skip(parser *P) {
    P->pos = cxla_text_skip_space(P->text, P->len, P->pos);
}

static int peek(const parser *P) {
    return P->pos < P->len ? (unsigned char)P->text[P->pos] : -1;
}

static bool is_word_start(int c) {
    return c >= 0 && (isalpha(c) || c == '_');
}

/* XLA identifiers: [A-Za-z_][A-Za-z0-9_.-]* */
static bool is_word_char(int c) {
    return c >= 0 && (isalnum(c) || c == '_' || c == '.' || c == '-');
}

static size_t word_end(const parser *P, size_t pos) {
    while (pos < P->len && is_word_char((unsigned char)P->text[pos])) pos++;
    return pos;
}

static bool text_is(const parser *P, size_t start, size_t end, const char *word) {
    size_t n = strlen(word);
    return end - start == n && memcmp(P->text + start, word, n) == 0;
}

static bool starts_with(const parser *P, size_t pos, const char *s) {
    size_t n = strlen(s);
    return pos <= P->len && P->len - pos >= n && memcmp(P->text + pos, s, n) == 0;
}

/* A short quote of the text at |pos| for messages: the token there, or "end of text". */
static void describe_token(const parser *P, size_t pos, char *out, size_t out_size) {
    if (pos >= P->len) {
        snprintf(out, out_size, "the end of the text");
        return;
    }
    if (starts_with(P, pos, "/*")) {
        snprintf(out, out_size, "an unterminated comment");
        return;
    }
    size_t end = pos + 1;
    int c = (unsigned char)P->text[pos];
    if (is_word_char(c))
        while (end < P->len && is_word_char((unsigned char)P->text[end]) && end - pos < 32) end++;
    size_t n = end - pos;
    if (n == 1 && !isprint(c))
        snprintf(out, out_size, "byte 0x%02x", (unsigned)c);
    else
        snprintf(out, out_size, "'%.*s'", (int)n, P->text + pos);
    for (char *q = out; *q; q++)
        if (!isprint((unsigned char)*q)) *q = '?';
}

/* Fails with "<what>, but sees <the token at pos>". */
static bool fail_expected(parser *P, size_t pos, const char *what) {
    char tok[64];
    describe_token(P, pos, tok, sizeof tok);
    return fail_at(P, pos, "%s, but sees %s", what, tok);
}

static bool expect_char(parser *P, char c, const char *what) {
    skip(P);
    if (peek(P) != (unsigned char)c) return fail_expected(P, P->pos, what);
    P->pos++;
    return true;
}

/* A number as the lexer reads it: "-?(d+|d+.d*|d*.d+)([eE][+-]?d+)?", inf, -inf, nan,
 * -nan, nan(0xHEX). */
typedef enum number_kind { NUM_FINITE, NUM_INF, NUM_NAN } number_kind;
typedef struct number {
    size_t start, end; /* the token */
    number_kind kind;
    bool negative;
    bool is_integer;  /* digits only (and a sign) */
    uint64_t payload; /* NaN: 0 when none was written */
} number;

/* "(0x<hex>)" right after nan: the payload must be in 1 .. 2^52-1 (as XLA's lexer). */
static bool lex_nan_payload(parser *P, size_t *pos, uint64_t *payload) {
    size_t i = *pos;
    if (!starts_with(P, i, "(0x") && !starts_with(P, i, "(0X"))
        return fail_at(P, i, "malformed NaN payload: expects nan(0x<hex digits>)");
    i += 3;
    uint64_t v = 0;
    size_t digits = 0;
    bool too_big = false;
    while (i < P->len && isxdigit((unsigned char)P->text[i])) {
        int c = (unsigned char)P->text[i];
        unsigned d = (unsigned)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
        if (v > (0xfffffffffffffull >> 4)) too_big = true;
        v = (v << 4) | d;
        digits++;
        i++;
    }
    if (digits == 0 || i >= P->len || P->text[i] != ')')
        return fail_at(P, *pos, "malformed NaN payload: expects nan(0x<hex digits>)");
    if (too_big || v == 0 || v > 0xfffffffffffffull)
        return fail_at(P, *pos, "NaN payload out of range: expects 0x1 to 0xfffffffffffff");
    *payload = v;
    *pos = i + 1;
    return true;
}

/* Reads a number at P->pos (spaces already skipped). Words other than inf/nan are not
 * numbers: the caller handles true/false and reports unknown words. */
static bool lex_number(parser *P, number *num) {
    size_t i = P->pos;
    memset(num, 0, sizeof(*num));
    num->start = i;
    if (i < P->len && P->text[i] == '-') {
        num->negative = true;
        i++;
    }
    if (i < P->len && is_word_start((unsigned char)P->text[i])) {
        size_t end = word_end(P, i);
        if (text_is(P, i, end, "inf")) {
            num->kind = NUM_INF;
        } else if (text_is(P, i, end, "nan")) {
            num->kind = NUM_NAN;
            if (end < P->len && P->text[end] == '(' && !lex_nan_payload(P, &end, &num->payload))
                return false;
        } else {
            char tok[64];
            describe_token(P, num->start, tok, sizeof tok);
            return fail_at(P, num->start,
                           "unknown word %s in a literal: expects a number, inf, nan, true or "
                           "false",
                           tok);
        }
        num->end = end;
        P->pos = end;
        return true;
    }
    size_t int_digits = 0, frac_digits = 0;
    bool dot = false, exponent = false;
    while (i < P->len && isdigit((unsigned char)P->text[i])) i++, int_digits++;
    if (i < P->len && P->text[i] == '.') {
        dot = true;
        i++;
        while (i < P->len && isdigit((unsigned char)P->text[i])) i++, frac_digits++;
    }
    if (int_digits + frac_digits == 0) return fail_expected(P, num->start, "expects a number");
    if (i < P->len && (P->text[i] == 'e' || P->text[i] == 'E')) {
        size_t j = i + 1;
        if (j < P->len && (P->text[j] == '+' || P->text[j] == '-')) j++;
        if (j < P->len && isdigit((unsigned char)P->text[j])) {
            while (j < P->len && isdigit((unsigned char)P->text[j])) j++;
            i = j;
            exponent = true;
        }
    }
    if (i < P->len &&
        (isalnum((unsigned char)P->text[i]) || P->text[i] == '_' || P->text[i] == '.')) {
        size_t end = i;
        while (end < P->len && end - num->start < 40 &&
               (is_word_char((unsigned char)P->text[end]) || P->text[end] == '.'))
            end++;
        return fail_at(P, num->start, "malformed number '%.*s'", (int)(end - num->start),
                       P->text + num->start);
    }
    num->kind = NUM_FINITE;
    num->is_integer = !dot && !exponent;
    num->end = i;
    P->pos = i;
    return true;
}

static int token_len(const number *num) {
    size_t n = num->end - num->start;
    return n > 64 ? 64 : (int)n;
}

/* The magnitude of an integer token; false when it exceeds 2^64-1. */
static bool integer_magnitude(const parser *P, const number *num, uint64_t *out) {
    uint64_t v = 0;
    for (size_t i = num->start + (num->negative ? 1 : 0); i < num->end; i++) {
        unsigned d = (unsigned)(P->text[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* The value of a number as a double (inf/nan included; NaN payloads are applied by the
 * caller). A finite decimal too large for a double is an error, as in XLA. */
static bool number_to_double(parser *P, const number *num, double *out) {
    if (num->kind == NUM_INF) {
        *out = num->negative ? -INFINITY : INFINITY;
        return true;
    }
    if (num->kind == NUM_NAN) {
        *out = num->negative ? -NAN : NAN;
        return true;
    }
    size_t n = num->end - num->start;
    char small[128];
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf)
        return fail_status(P, num->start,
                           cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
    memcpy(buf, P->text + num->start, n);
    buf[n] = 0;
    double v = strtod(buf, NULL);
    if (buf != small) free(buf);
    if (isinf(v))
        return fail_at(P, num->start, "value %.*s is out of range for a double", token_len(num),
                       P->text + num->start);
    *out = v;
    return true;
}

/* ---- parsing: values ---------------------------------------------------------------- */

/* Largest finite value of a float type. */
static double float_max(cxla_type type) {
    if (type == CXLA_F32) return 3.40282346638528859812e+38;
    if (type == CXLA_F64) return 1.79769313486231570815e+308;
    const cxla_type_info *info = cxla_type_get_info(type);
    int e = info->exponent_bits, m = info->mantissa_bits;
    uint32_t bits = 0;
    switch (info->float_kind) {
    case CXLA_FLOAT_IEEE: bits = (((1u << e) - 1) << m) - 1; break;
    case CXLA_FLOAT_FN: bits = (1u << (e + m)) - 2; break;
    case CXLA_FLOAT_FNUZ:
    case CXLA_FLOAT_FN_NO_NAN: bits = (1u << (e + m)) - 1; break;
    case CXLA_FLOAT_FNU: bits = 0xfe; break;
    }
    return cxla_float_to_double(type, bits);
}

static double float_lowest(cxla_type type) {
    if (cxla_type_get_info(type)->float_kind == CXLA_FLOAT_FNU)
        return cxla_float_to_double(type, 0); /* unsigned: 2^-127 */
    return -float_max(type);
}

/* Stores a NaN into a real float type: XLA's handle_nan. Formats with payloads (the
 * IEEE-style ones) take the written payload (plain nan, or the double's quiet bit
 * alone, gives the type's quiet NaN); the others accept no payload. */
static bool store_nan(parser *P, cxla_type type, void *p, const number *num) {
    const cxla_type_info *info = cxla_type_get_info(type);
    uint64_t payload = num->payload;
    if (payload == 0x8000000000000ull) payload = 0; /* the double's quiet NaN: no payload */
    if (info->float_kind != CXLA_FLOAT_IEEE) {
        if (payload)
            return fail_at(P, num->start, "%s does not support NaN payloads", cxla_type_name(type));
        if (type == CXLA_F32 || type == CXLA_F64) return true; /* unreachable: IEEE */
        store_small_bits(type, p, cxla_float_from_double(type, num->negative ? -NAN : NAN));
        return true;
    }
    int m = info->mantissa_bits, e = info->exponent_bits;
    uint64_t mask = ((uint64_t)1 << m) - 1;
    if (payload == 0) payload = (uint64_t)1 << (m - 1);
    if (payload > mask)
        return fail_at(P, num->start, "NaN payload 0x%llx is out of range for %s (largest 0x%llx)",
                       (unsigned long long)payload, cxla_type_name(type), (unsigned long long)mask);
    uint64_t bits = ((((uint64_t)1 << e) - 1) << m) | payload;
    if (num->negative) bits |= (uint64_t)1 << (e + m);
    if (type == CXLA_F64) {
        memcpy(p, &bits, 8);
    } else if (type == CXLA_F32) {
        uint32_t u = (uint32_t)bits;
        memcpy(p, &u, 4);
    } else {
        store_small_bits(type, p, (uint32_t)bits);
    }
    return true;
}

/* A number into a real float type (f16 ... f64, f8, f4): rounded to nearest even; a
 * finite value that rounds to a non-finite one is out of range (XLA's
 * CheckParsedValueIsInRange). */
static bool store_float(parser *P, cxla_type type, void *p, const number *num) {
    if (num->kind == NUM_NAN) return store_nan(P, type, p, num);
    double v = 0;
    if (!number_to_double(P, num, &v)) return false;
    bool overflow = false;
    if (type == CXLA_F64) {
        memcpy(p, &v, 8);
    } else if (type == CXLA_F32) {
        float f = (float)v;
        overflow = isfinite(v) && !isfinite(f);
        memcpy(p, &f, 4);
    } else {
        uint32_t bits = cxla_float_from_double(type, v);
        overflow = isfinite(v) && !isfinite(cxla_float_to_double(type, bits));
        store_small_bits(type, p, bits);
    }
    if (overflow)
        return fail_at(P, num->start,
                       "value %.*s is out of range for literal's primitive type %s namely "
                       "[%g, %g]",
                       token_len(num), P->text + num->start, cxla_type_name(type),
                       float_lowest(type), float_max(type));
    return true;
}

/* An integer token into pred or an integer type, range checked (XLA's
 * CheckParsedValueIsInRange; pred takes 0 and 1). */
static bool store_integer(parser *P, cxla_type type, void *p, const number *num) {
    if (num->kind != NUM_FINITE || !num->is_integer)
        return fail_at(P, num->start, "expects an integer for primitive type %s, but sees '%.*s'",
                       cxla_type_name(type), token_len(num), P->text + num->start);
    uint64_t mag;
    bool fits = integer_magnitude(P, num, &mag);
    /* XLA reads the integer as an int64 and then: pred takes static_cast<bool> (any
     * nonzero value is true); u64 takes its two's complement bits, so -1 is 2^64-1
     * (the narrower unsigned types reject negatives, as the bits exceed their range). */
    if (fits && num->negative && mag <= (uint64_t)1 << 63 &&
        (type == CXLA_PRED || type == CXLA_U64)) {
        cxla_store_u64(type, p, type == CXLA_PRED ? 1 : 0 - mag);
        return true;
    }
    if (fits && type == CXLA_PRED) {
        cxla_store_u64(type, p, mag != 0);
        return true;
    }
    int bits = type == CXLA_PRED ? 1 : cxla_type_bits(type);
    bool is_signed = cxla_type_is_signed(type);
    uint64_t max_pos = is_signed ? ((uint64_t)1 << (bits - 1)) - 1
                                 : (bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1);
    uint64_t max_neg = is_signed ? (uint64_t)1 << (bits - 1) : 0;
    if (!fits || mag > (num->negative ? max_neg : max_pos)) {
        if (is_signed)
            return fail_at(P, num->start,
                           "value %.*s is out of range for literal's primitive type %s namely "
                           "[-%" PRIu64 ", %" PRIu64 "]",
                           token_len(num), P->text + num->start, cxla_type_name(type), max_neg,
                           max_pos);
        return fail_at(P, num->start,
                       "value %.*s is out of range for literal's primitive type %s namely "
                       "[0, %" PRIu64 "]",
                       token_len(num), P->text + num->start, cxla_type_name(type), max_pos);
    }
    if (num->negative)
        cxla_store_s64(type, p, (int64_t)(0 - mag));
    else
        cxla_store_u64(type, p, mag);
    return true;
}

/* One real value (float component or integer) at P->pos. */
static bool parse_number(parser *P, number *num, const char *what) {
    skip(P);
    int c = peek(P);
    if (c < 0 || !(isdigit(c) || c == '-' || c == '.' || is_word_start(c)))
        return fail_expected(P, P->pos, what);
    return lex_number(P, num);
}

static bool parse_complex(parser *P, cxla_type type, void *p) {
    cxla_type comp = cxla_type_component(type);
    char what[96];
    skip(P);
    if (peek(P) != '(') {
        snprintf(what, sizeof what, "expects a complex value '(real, imag)' of type %s",
                 cxla_type_name(type));
        return fail_expected(P, P->pos, what);
    }
    P->pos++;
    number re, im;
    if (!parse_number(P, &re, "expects the real part of a complex number")) return false;
    if (!store_float(P, comp, p, &re)) return false;
    if (!expect_char(P, ',', "expects ',' after the real part of a complex number")) return false;
    if (!parse_number(P, &im, "expects the imaginary part of a complex number")) return false;
    if (!store_float(P, comp, (char *)p + cxla_type_storage(comp), &im)) return false;
    return expect_char(P, ')', "expects ')' after the imaginary part of a complex number");
}

/* One element of |type| into |p|. */
static bool parse_element(parser *P, cxla_type type, void *p) {
    if (cxla_type_is_complex(type)) return parse_complex(P, type, p);
    skip(P);
    size_t start = P->pos;
    int c = peek(P);
    if (c < 0 || !(is_word_start(c) || isdigit(c) || c == '-' || c == '.')) {
        char what[96];
        snprintf(what, sizeof what, "expects a value of type %s", cxla_type_name(type));
        return fail_expected(P, start, what);
    }
    if (is_word_start(c)) {
        size_t end = word_end(P, start);
        bool t = text_is(P, start, end, "true"), f = text_is(P, start, end, "false");
        if (t || f) {
            if (type != CXLA_PRED)
                return fail_at(P, start, "'%s' is a pred value, not a value of type %s",
                               t ? "true" : "false", cxla_type_name(type));
            *(uint8_t *)p = t;
            P->pos = end;
            return true;
        }
    }
    number num;
    if (!lex_number(P, &num)) return false;
    if (cxla_type_is_float(type)) return store_float(P, type, p, &num);
    return store_integer(P, type, p, &num);
}

/* ---- parsing: arrays, tuples, shapes ------------------------------------------------ */

typedef struct array_parser {
    parser *P;
    cxla_literal *lit;
    int64_t dims[CXLA_MAX_RANK]; /* the literal's current sizes */
    char *shape_text;            /* for messages */
    int64_t strides[CXLA_MAX_RANK];
    int64_t index[CXLA_MAX_RANK];
    size_t elem_size;
} array_parser;

/* " at index [i0,i1]" naming the enclosing elements of dimension |level| (for messages;
 * |out| holds 256 bytes). */
static const char *index_text(const array_parser *ap, int64_t level, char *out) {
    const size_t out_size = 256;
    out[0] = 0;
    if (level == 0) return out;
    size_t n = (size_t)snprintf(out, out_size, " at index [");
    for (int64_t i = 0; i < level && n < out_size; i++)
        n += (size_t)snprintf(out + n, out_size - n, "%s%" PRId64, i ? "," : "", ap->index[i]);
    if (n < out_size) snprintf(out + n, out_size - n, "]");
    return out;
}

static bool parse_level(array_parser *ap, int64_t level, int64_t offset) {
    parser *P = ap->P;
    const cxla_shape *shape = ap->lit->shape;
    int64_t rank = shape->rank, dim = ap->dims[level];
    char where[256], what[512];
    skip(P);
    if (peek(P) != '{') {
        if (level == 0)
            snprintf(what, sizeof what, "expects '{' to start an array literal of shape %s",
                     ap->shape_text);
        else
            snprintf(what, sizeof what,
                     "expects '{' to start dimension %" PRId64 "%s of shape %s (a rank-%" PRId64
                     " literal nests %" PRId64 " levels of braces)",
                     level, index_text(ap, level, where), ap->shape_text, rank, rank);
        return fail_expected(P, P->pos, what);
    }
    P->pos++;
    int64_t count = 0;
    skip(P);
    while (peek(P) == ',') { /* leading commas, skipped as XLA does */
        P->pos++;
        skip(P);
    }
    size_t close_pos = P->pos;
    if (peek(P) == '}') {
        P->pos++;
    } else {
        for (;;) {
            skip(P);
            size_t item_pos = P->pos;
            if (count >= dim)
                return fail_at(P, item_pos,
                               "expects %" PRId64 " elements in dimension %" PRId64
                               "%s of shape %s, but sees more",
                               dim, level, index_text(ap, level, where), ap->shape_text);
            ap->index[level] = count;
            int64_t off = offset + count * ap->strides[level];
            if (level == rank - 1) {
                if (peek(P) == '{')
                    return fail_at(P, item_pos,
                                   "too many nested braces: shape %s has rank %" PRId64
                                   ", so its values sit inside %" PRId64 " brace level%s",
                                   ap->shape_text, rank, rank, rank == 1 ? "" : "s");
                char *data = ap->lit->data;
                if (!parse_element(P, shape->type, data + (size_t)off * ap->elem_size))
                    return false;
            } else if (!parse_level(ap, level + 1, off)) {
                return false;
            }
            count++;
            skip(P);
            int c = peek(P);
            /* XLA's ParseDenseLiteral skips commas wherever they are: "{1 2}" and
             * "{1,,2,}" read as {1, 2}. */
            while (c == ',') {
                P->pos++;
                skip(P);
                c = peek(P);
            }
            if (c == '}') {
                close_pos = P->pos;
                P->pos++;
                break;
            }
            if (c < 0 ||
                !(is_word_char(c) || c == '-' || c == '+' || c == '.' || c == '{' || c == '(')) {
                snprintf(what, sizeof what,
                         "expects ',' or '}' after element %" PRId64 " of dimension %" PRId64 "%s",
                         count - 1, level, index_text(ap, level, where));
                return fail_expected(P, P->pos, what);
            }
        }
    }
    if (count != dim)
        return fail_at(P, close_pos,
                       "expects %" PRId64 " elements in dimension %" PRId64
                       "%s of shape %s, but sees %" PRId64,
                       dim, level, index_text(ap, level, where), ap->shape_text, count);
    return true;
}

static bool parse_dense(parser *P, cxla_literal *lit) {
    const cxla_shape *shape = lit->shape;
    if (shape->rank == 0) {
        skip(P);
        if (peek(P) == '{')
            return fail_at(P, P->pos,
                           "too many nested braces: a scalar (shape %s[]) is written without "
                           "braces",
                           cxla_type_name(shape->type));
        return parse_element(P, shape->type, lit->data);
    }
    skip(P);
    int c0 = peek(P);
    if (c0 >= 0 && (is_word_start(c0) || isdigit(c0) || c0 == '-' || c0 == '.')) {
        /* A single value without braces for an array shape: XLA's ParseDenseLiteral stores
         * it at linear index 0 and leaves the other elements zero ("f32[3] constant(7)" is
         * {7, 0, 0}). The literal's bytes are zero already; index 0 is offset 0 in every
         * layout. An array of no elements (a dynamic one of size 0 among them: its
         * sizes, not its bounds, count) has no index 0. */
        int64_t sizes[CXLA_MAX_RANK], n = 1;
        cxla_literal_sizes(lit, sizes);
        for (int64_t i = 0; i < shape->rank; i++) n *= sizes[i];
        if (n == 0)
            return fail_at(P, P->pos,
                           "tries to set a value to a literal in shape %s[...] of no elements "
                           "at linear index 0, but the index is out of range",
                           cxla_type_name(shape->type));
        return parse_element(P, shape->type, lit->data);
    }
    array_parser ap = {.P = P, .lit = lit, .elem_size = cxla_type_storage(shape->type)};
    ap.shape_text = cxla_shape_to_string(shape, CXLA_SHAPE_PRINT_NO_LAYOUT);
    if (!ap.shape_text)
        return fail_status(P, P->pos, cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
    cxla_shape_strides(shape, ap.strides);
    cxla_literal_sizes(lit, ap.dims);
    bool ok = parse_level(&ap, 0, 0);
    free(ap.shape_text);
    return ok;
}

static bool parse_into(parser *P, cxla_literal *lit);

/* An old-style tuple value that repeats its shape, "(f32[2], s32[]) ({1, 2}, 3)": when
 * the text at P->pos reads as a tuple shape followed by '(', checks it against |shape|
 * and skips it. */
static bool skip_old_style_shape(parser *P, const cxla_shape *shape) {
    cxla_arena *arena = cxla_arena_create();
    if (!arena)
        return fail_status(P, P->pos, cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
    cxla_shape parsed;
    size_t p = P->pos;
    cxla_status s = cxla_shape_parse_at(P->text, P->len, &p, arena, &parsed);
    bool ok = true;
    if (s) {
        cxla_status_free(s);
    } else {
        size_t q = cxla_text_skip_space(P->text, P->len, p);
        if (q < P->len && P->text[q] == '(') {
            if (!cxla_shape_compatible(&parsed, shape)) {
                char *a = cxla_shape_to_string(&parsed, CXLA_SHAPE_PRINT_NO_LAYOUT);
                char *e = cxla_shape_to_string(shape, CXLA_SHAPE_PRINT_NO_LAYOUT);
                ok = fail_at(P, P->pos, "the literal's shape %s does not match the shape %s",
                             a ? a : "?", e ? e : "?");
                free(a);
                free(e);
            } else {
                P->pos = q;
            }
        }
    }
    cxla_arena_destroy(arena);
    return ok;
}

static bool parse_tuple_into(parser *P, cxla_literal *lit) {
    int64_t count = lit->tuple_count;
    skip(P);
    char what[128];
    if (peek(P) != '(') {
        snprintf(what, sizeof what, "expects '(' to start a tuple of %" PRId64 " elements", count);
        return fail_expected(P, P->pos, what);
    }
    if (!skip_old_style_shape(P, lit->shape)) return false;
    P->pos++; /* '(' */
    for (int64_t i = 0; i < count; i++) {
        skip(P);
        if (peek(P) == ')')
            return fail_at(P, P->pos,
                           "expects %" PRId64 " elements in the tuple, but sees %" PRId64, count,
                           i);
        if (i > 0 && !expect_char(P, ',', "expects ',' between tuple elements")) return false;
        if (!parse_into(P, lit->elements[i])) return false;
    }
    skip(P);
    if (peek(P) == ',')
        return fail_at(P, P->pos, "expects %" PRId64 " elements in the tuple, but sees more",
                       count);
    return expect_char(P, ')', "expects ')' at the end of the tuple");
}

static bool parse_word_token(parser *P) {
    skip(P);
    size_t end = word_end(P, P->pos);
    if (!text_is(P, P->pos, end, "token"))
        return fail_expected(P, P->pos, "expects 'token' (the value of a token literal)");
    P->pos = end;
    return true;
}

/* Parses the value of |lit| (created from its shape) in place. */
static bool parse_into(parser *P, cxla_literal *lit) {
    switch (lit->shape->type) {
    case CXLA_TUPLE: {
        if (P->depth >= MAX_TUPLE_DEPTH)
            return fail_at(P, P->pos, "tuples nested more than %d deep", MAX_TUPLE_DEPTH);
        P->depth++;
        bool ok = parse_tuple_into(P, lit);
        P->depth--;
        return ok;
    }
    case CXLA_TOKEN: return parse_word_token(P);
    case CXLA_OPAQUE: return fail_at(P, P->pos, "opaque literals have no text form");
    default: return parse_dense(P, lit);
    }
}

/* Element count of every array in |shape|, saturating at INT64_MAX. */
static int64_t total_elements(const cxla_shape *shape) {
    if (shape->type == CXLA_TUPLE) {
        int64_t total = 0;
        for (int64_t i = 0; i < shape->tuple_count; i++)
            if (!cxla_add_i64(total, total_elements(&shape->elements[i]), &total)) return INT64_MAX;
        return total;
    }
    if (!cxla_type_is_array(shape->type)) return 0;
    int64_t n = 1;
    for (int64_t i = 0; i < shape->rank; i++) {
        if (shape->dims[i] < 0) return 0; /* invalid: cxla_literal_create says why */
        if (!cxla_mul_i64(n, shape->dims[i], &n)) return INT64_MAX;
    }
    return n;
}

/* Shapes with more elements than this are checked against the length of the text
 * before their storage is allocated. */
#define EARLY_SIZE_CHECK 65536

/* Creates the literal of |shape| (written at |shape_pos|, for messages) and parses its
 * value at P->pos. Every element takes at least one character, so a large shape with
 * more elements than the rest of the text is rejected before its storage is allocated
 * (text cannot make cxla allocate much more than its own size). */
static bool create_and_parse(parser *P, const cxla_shape *shape, const int64_t *sizes,
                             size_t shape_pos, cxla_literal **out) {
    int64_t elements = total_elements(shape);
    size_t rest = P->len - P->pos;
    if (elements > EARLY_SIZE_CHECK && (uint64_t)elements > (uint64_t)rest) {
        char *s = cxla_shape_to_string(shape, CXLA_SHAPE_PRINT_NO_LAYOUT);
        bool ok = fail_at(P, shape_pos,
                          "expects %" PRId64 " elements for shape %s, but the text is too short "
                          "to hold them",
                          elements, s ? s : "?");
        free(s);
        return ok;
    }
    cxla_literal *lit = NULL;
    cxla_status s = cxla_literal_create(shape, &lit);
    for (int64_t i = 0; !s && sizes && i < shape->rank; i++)
        s = cxla_literal_set_dynamic_size(lit, i, sizes[i]);
    if (s) {
        fail_code_at(P, shape_pos, cxla_status_code_of(s), "%s", cxla_status_message(s));
        cxla_status_free(s);
        cxla_literal_free(lit);
        return false;
    }
    if (!parse_into(P, lit)) {
        cxla_literal_free(lit);
        return false;
    }
    *out = lit;
    return true;
}

/* After a dynamic shape XLA prints the size of every dimension, "f32[<=4](2) {1, 2}".
 * When they are there, fills |sizes| (rank entries) and sets *have; a size must be at
 * most the bound of a dynamic dimension and equal a static one. */
static bool parse_dynamic_sizes(parser *P, const cxla_shape *shape, int64_t *sizes, bool *have) {
    *have = false;
    if (shape->type == CXLA_TUPLE || !shape_is_dynamic(shape)) return true;
    skip(P);
    if (peek(P) != '(') return true;
    P->pos++;
    for (int64_t i = 0; i < shape->rank; i++) {
        if (i > 0 && !expect_char(P, ',', "expects ',' between dynamic sizes")) return false;
        number num;
        if (!parse_number(P, &num, "expects a dynamic size")) return false;
        uint64_t v;
        bool dynamic = shape->dynamic[i] != 0;
        int64_t bound = shape->dims[i];
        if (num.kind != NUM_FINITE || !num.is_integer || num.negative ||
            !integer_magnitude(P, &num, &v) || (bound >= 0 && v > (uint64_t)bound) ||
            (!dynamic && v != (uint64_t)bound))
            return fail_at(P, num.start,
                           dynamic ? "dynamic size '%.*s' of dimension %" PRId64
                                     " must be an integer in 0..%" PRId64 " (its bound)"
                                   : "size '%.*s' of the static dimension %" PRId64
                                     " differs from its size %" PRId64,
                           token_len(&num), P->text + num.start, i, bound);
        sizes[i] = (int64_t)v;
    }
    skip(P);
    if (peek(P) == ',')
        return fail_at(P, P->pos,
                       "expects %" PRId64 " dynamic sizes (one per dimension), but sees more",
                       shape->rank);
    *have = true;
    return expect_char(P, ')', "expects ')' after the dynamic sizes");
}

/* Parses "<shape> <value>" starting at P->pos with the shape ending at |shape_len|
 * (the whole text, or just past the dimensions' ']'). */
static bool parse_shape_then_value(parser *P, size_t shape_len, bool *shape_ok, int64_t *out_rank,
                                   size_t *value_pos, cxla_literal **out) {
    cxla_arena *arena = cxla_arena_create();
    if (!arena)
        return fail_status(P, P->pos, cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
    cxla_shape shape;
    size_t p = P->pos, start = P->pos;
    cxla_status s = cxla_shape_parse_at(P->text, shape_len, &p, arena, &shape);
    *shape_ok = s == NULL;
    bool ok = false;
    if (s) {
        fail_status(P, start, s);
    } else {
        *out_rank = shape.type == CXLA_TUPLE ? -1 : shape.rank;
        *value_pos = p;
        P->pos = p;
        int64_t sizes[CXLA_MAX_RANK];
        bool have_sizes = false;
        ok = parse_dynamic_sizes(P, &shape, sizes, &have_sizes) &&
             create_and_parse(P, &shape, have_sizes ? sizes : NULL, start, out);
    }
    cxla_arena_destroy(arena);
    return ok;
}

/* Just past the ']' closing the dimensions of the array shape at |pos| ("f32[2,3]"), or
 * 0 when there is none. */
static size_t dims_end(const parser *P, size_t pos) {
    size_t i = word_end(P, pos);
    i = cxla_text_skip_space(P->text, P->len, i);
    if (i >= P->len || P->text[i] != '[') return 0;
    for (i++; i < P->len; i++) {
        char c = P->text[i];
        if (c == ']') return i + 1;
        if (c == '{' || c == '}' || c == '(' || c == ')' || c == '[') return 0;
    }
    return 0;
}

static bool parse_self_shaped(parser *P, cxla_literal **out);

/* "( a, b )" where each element carries its own shape (XLA's ParseLiteral without a
 * shape, and what printing with CXLA_LITERAL_PRINT_SHAPE gives for tuples). */
static bool parse_self_shaped_tuple(parser *P, cxla_literal **out) {
    P->pos++; /* '(' */
    cxla_literal **elements = NULL;
    int64_t count = 0, cap = 0;
    bool ok = true;
    skip(P);
    if (peek(P) == ')') {
        P->pos++;
    } else {
        for (;;) {
            if (count == cap) {
                int64_t ncap = cap ? cap * 2 : 4;
                cxla_literal **n = realloc(elements, (size_t)ncap * sizeof(*n));
                if (!n) {
                    ok = fail_status(P, P->pos,
                                     cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
                    break;
                }
                elements = n;
                cap = ncap;
            }
            if (!parse_self_shaped(P, &elements[count])) {
                ok = false;
                break;
            }
            count++;
            skip(P);
            if (peek(P) == ',') {
                P->pos++;
                continue;
            }
            if (peek(P) == ')') {
                P->pos++;
                break;
            }
            ok = fail_expected(P, P->pos, "expects ',' or ')' after a tuple element");
            break;
        }
    }
    if (ok) {
        cxla_status s = cxla_literal_create_tuple(elements, count, out);
        if (s) ok = fail_status(P, P->pos, s);
    }
    if (!ok)
        for (int64_t i = 0; i < count; i++) cxla_literal_free(elements[i]);
    free(elements);
    return ok;
}

/* A literal that starts with its shape: "f32[2] {1, 2}", "f32[2]{0} {1, 2}",
 * "(f32[], s32[]) (1, 2)" (old style), "( f32[] 1, s32[] 2 )", "token". */
static bool parse_self_shaped(parser *P, cxla_literal **out) {
    if (P->depth >= MAX_TUPLE_DEPTH)
        return fail_at(P, P->pos, "tuples nested more than %d deep", MAX_TUPLE_DEPTH);
    skip(P);
    size_t start = P->pos;
    int c = peek(P);
    if (c < 0)
        return fail_at(P, start,
                       "expects a literal starting with its shape (such as f32[2] {1, 2}), but "
                       "the text ends");
    if (c == '(') {
        /* Old style first: a whole tuple shape followed by '('. */
        cxla_arena *arena = cxla_arena_create();
        if (!arena)
            return fail_status(P, start,
                               cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
        cxla_shape shape;
        size_t p = start;
        cxla_status s = cxla_shape_parse_at(P->text, P->len, &p, arena, &shape);
        bool old_style = false, ok = false;
        if (s) {
            cxla_status_free(s);
        } else {
            size_t q = cxla_text_skip_space(P->text, P->len, p);
            if (q < P->len && P->text[q] == '(') {
                old_style = true;
                P->pos = q;
                P->depth++;
                ok = create_and_parse(P, &shape, NULL, start, out);
                P->depth--;
            }
        }
        cxla_arena_destroy(arena);
        if (old_style) return ok;
        P->depth++;
        ok = parse_self_shaped_tuple(P, out);
        P->depth--;
        return ok;
    }
    if (!is_word_start(c)) return fail_expected(P, start, "expects a shape such as f32[2]");
    size_t end = word_end(P, start);
    if (text_is(P, start, end, "token") && (end >= P->len || P->text[end] != '[')) {
        cxla_shape token = {.type = CXLA_TOKEN};
        return create_and_parse(P, &token, NULL, start, out);
    }
    /* An array shape. Its layout and its value can look alike ("f32[1] {0}"): read the
     * shape with whatever layout follows first, and when that fails, the shape alone. */
    parser a = *P;
    a.error = NULL;
    bool shape_ok = false;
    int64_t rank = 0;
    size_t value_pos = 0;
    if (parse_shape_then_value(&a, P->len, &shape_ok, &rank, &value_pos, out)) {
        P->pos = a.pos;
        return true;
    }
    /* Retry without the layout when the shape failed, or when a rank-1 value failed (a
     * failure before the value, such as an unsupported layout, stands). */
    size_t q = dims_end(P, start);
    size_t after = q ? cxla_text_skip_space(P->text, P->len, q) : 0;
    bool retry = q && after < P->len && P->text[after] == '{' &&
                 (!shape_ok || (rank == 1 && a.error_pos >= value_pos));
    if (retry) {
        parser b = *P;
        b.error = NULL;
        bool b_shape_ok = false;
        int64_t b_rank = 0;
        size_t b_value_pos = 0;
        if (parse_shape_then_value(&b, q, &b_shape_ok, &b_rank, &b_value_pos, out)) {
            cxla_status_free(a.error);
            P->pos = b.pos;
            return true;
        }
        /* Report the attempt that got further. */
        if (b_shape_ok && (!shape_ok || b.error_pos > a.error_pos)) {
            cxla_status_free(a.error);
            return fail_status(P, b.error_pos, b.error);
        }
        cxla_status_free(b.error);
    }
    return fail_status(P, a.error_pos, a.error);
}

cxla_status cxla_literal_parse_at(const char *text, size_t len, size_t *pos,
                                  const cxla_shape *shape, cxla_literal **out_literal) {
    if (!text && len) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "literal text is NULL");
    if (len == (size_t)-1) len = strlen(text);
    if (*pos > len) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "position past the text");
    parser P = {.text = text ? text : "", .len = len, .pos = *pos};
    cxla_literal *lit = NULL;
    bool ok = shape ? create_and_parse(&P, shape, NULL, P.pos, &lit) : parse_self_shaped(&P, &lit);
    if (!ok) {
        if (!P.error) P.error = cxla_error(CXLA_STATUS_INTERNAL, "literal parse failed");
        return P.error;
    }
    *pos = P.pos;
    *out_literal = lit;
    return NULL;
}

cxla_status cxla_literal_parse(const char *text, size_t len, const cxla_shape *shape,
                               cxla_literal **out_literal) {
    if (!text && len) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "literal text is NULL");
    if (len == (size_t)-1) len = strlen(text);
    if (!text) text = "";
    size_t pos = 0;
    cxla_literal *lit = NULL;
    CXLA_RETURN_IF_ERROR(cxla_literal_parse_at(text, len, &pos, shape, &lit));
    parser P = {.text = text, .len = len, .pos = pos};
    skip(&P);
    if (P.pos < len) {
        cxla_literal_free(lit);
        fail_expected(&P, P.pos, "expects the end of the literal");
        return P.error;
    }
    *out_literal = lit;
    return NULL;
}
