/* Internal to the HLO text reader and printer (lexer.c, parser.c, parser_checks.c,
 * attr_text.c, printer.c): a cursor over the text with the lexical rules of
 * hlo-text-format.md section 2, error reporting (first error wins), and the attribute
 * value parsers and printers.
 *
 * The text is |len| bytes and is never read past its end (it need not be NUL-terminated).
 * Every reader skips whitespace and comments before it looks. A reader that fails records
 * the error in the lexer (unless one is already there) and returns false; callers just
 * return false up the chain, and the first error reaches the user.
 */
#ifndef CXLA_HLO_LEXER_H_
#define CXLA_HLO_LEXER_H_

#include "hlo/hlo.h"

typedef struct cxla_hlo_lexer {
    const char *text;
    size_t len;
    size_t pos;
    const char *filename; /* for error messages; may be NULL */
    cxla_module *module;  /* values are allocated in its arena */
    cxla_status error;    /* the first error, or NULL */
    /* Line/column cache: positions usually grow, so counting lines is amortized O(1). */
    size_t lc_pos;
    int64_t lc_line, lc_col;
} cxla_hlo_lexer;

void cxla_hlo_lexer_init(cxla_hlo_lexer *lx, const char *text, size_t len, const char *filename,
                         cxla_module *module);

/* Characters. */
bool cxla_hlo_is_name_start(char c); /* [A-Za-z_] */
bool cxla_hlo_is_name_char(char c);  /* [A-Za-z0-9_.-] */

/* Line and column (1-based) of |pos|. */
void cxla_hlo_line_col(cxla_hlo_lexer *lx, size_t pos, int64_t *out_line, int64_t *out_col);

/* Skips whitespace and comments; returns the new position. */
size_t cxla_hlo_skip(cxla_hlo_lexer *lx);
/* After skipping: true when the next character is |c| (not consumed). */
bool cxla_hlo_at(cxla_hlo_lexer *lx, char c);
/* After skipping: consumes |c| or |s| when it is next. */
bool cxla_hlo_accept(cxla_hlo_lexer *lx, char c);
bool cxla_hlo_accept_str(cxla_hlo_lexer *lx, const char *s);
/* After skipping: the keyword |word| followed by a non-name character. */
bool cxla_hlo_accept_keyword(cxla_hlo_lexer *lx, const char *word);
/* Consumes |c| or fails with "expected 'c' |context|, found ...". */
bool cxla_hlo_expect(cxla_hlo_lexer *lx, char c, const char *context);

/* A name: an optional '%' then [A-Za-z_][A-Za-z0-9_.-]*. Returns its length without the
 * '%' (0 and nothing consumed when there is none); *out points into the text. */
size_t cxla_hlo_name(cxla_hlo_lexer *lx, const char **out);
/* A word [A-Za-z0-9_]+ (enum values, keywords); 0 when there is none. */
size_t cxla_hlo_word(cxla_hlo_lexer *lx, const char **out);
/* An integer '-'? [0-9]+ that fits int64; |what| names it in errors. */
bool cxla_hlo_int(cxla_hlo_lexer *lx, int64_t *out, const char *what);
/* A real number (also inf, -inf, nan). */
bool cxla_hlo_float(cxla_hlo_lexer *lx, double *out, const char *what);
/* A quoted string, unescaped into the module's arena (NUL-terminated). */
bool cxla_hlo_string(cxla_hlo_lexer *lx, const char **out);
/* A raw value kept verbatim: quoted strings and balanced (), [], {} groups joined with any
 * other characters up to a ',' or whitespace outside of them (or an unmatched closer).
 * Sets [*start, *end) and consumes it; fails on an empty or unbalanced value. */
bool cxla_hlo_raw(cxla_hlo_lexer *lx, size_t *start, size_t *end, const char *what);
/* Skips one quoted string or balanced group starting exactly at text[*pos]. */
bool cxla_hlo_skip_group(cxla_hlo_lexer *lx, size_t *pos);

/* Errors: "FILE: line L, column C: MESSAGE" then the line and a caret under the column.
 * They record the first error and return false. _found appends ", found <what is there>". */
bool cxla_hlo_error(cxla_hlo_lexer *lx, size_t pos, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
bool cxla_hlo_error_found(cxla_hlo_lexer *lx, size_t pos, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
bool cxla_hlo_oom(cxla_hlo_lexer *lx);
/* Records |status| from another reader (shape, literal) in this format: its "at line L,
 * column C" position is kept when present, else |pos| is used. Consumes |status|. */
bool cxla_hlo_fail_status(cxla_hlo_lexer *lx, cxla_status status, size_t pos);
/* Appends a warning with the position to the module's warnings. */
void cxla_hlo_warn(cxla_hlo_lexer *lx, size_t pos, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* A shape at the cursor, in the module's arena; array shapes without a layout get the
 * default one (as XLA's parser does), tuples recursively. */
bool cxla_hlo_shape(cxla_hlo_lexer *lx, cxla_shape *out);
/* Gives every array shape in |shape| that lacks a layout the default one. */
bool cxla_hlo_fill_layouts(cxla_arena *arena, cxla_shape *shape);

/* ---- attribute values (attr_text.c) ------------------------------------------------ */

/* Parses the value of |attr| (id, name and kind set by the caller) at the cursor.
 * Computation and instruction names are left in attr->pending_names (items NULL) for the
 * parser to resolve. Values are checked as XLA checks them (enum words, window and
 * dim_labels shapes, sharding and replica group sizes, aliasing syntax ...). */
bool cxla_hlo_parse_attr_value(cxla_hlo_lexer *lx, cxla_attr *attr);
/* Prints the value of |attr| (what follows "name="). */
void cxla_hlo_print_attr_value(cxla_strbuf *b, const cxla_attr *attr, cxla_hlo_style style);
/* Prints a quoted, C-escaped string (absl::CEscape). */
void cxla_hlo_print_string(cxla_strbuf *b, const char *s);
/* Prints a name, with '%' in the long style. */
void cxla_hlo_print_name(cxla_strbuf *b, const char *name, cxla_hlo_style style);

/* The opcode of a word, through a hash map built once per parse. */
typedef struct cxla_hlo_names {
    cxla_strmap opcodes; /* value: opcode + 1 */
    cxla_strmap attrs;   /* value: attr id + 1 */
} cxla_hlo_names;
bool cxla_hlo_names_init(cxla_hlo_names *names, cxla_arena *arena);
cxla_opcode cxla_hlo_lookup_opcode(const cxla_hlo_names *names, const char *name, size_t len);
cxla_attr_id cxla_hlo_lookup_attr(const cxla_hlo_names *names, const char *name, size_t len);

/* ---- checks after parsing (parser_checks.c) ---------------------------------------- */

/* What the parser remembers of each instruction (indexed by id) for the checks. */
/* SHAPE_OMITTED: the text wrote no result shape; NESTED: written as another's operand. */
enum { CXLA_HLO_SHAPE_OMITTED = 1, CXLA_HLO_NESTED = 2 };
typedef struct cxla_hlo_instr_info {
    size_t pos; /* where its name was written */
    unsigned flags;
} cxla_hlo_instr_info;

/* The structural checks XLA's parser makes once names are resolved: operand counts,
 * which called computations and attributes an opcode takes, conditional branches,
 * dimensions lists, custom-call layout constraints, async chains. Shape rules proper are
 * the verifier's. */
/* Whether |in|'s opcode takes attribute |id| (called computations, result_accuracy). */
bool cxla_hlo_attr_allowed(const cxla_instr *in, cxla_attr_id id);
bool cxla_hlo_check_module(cxla_hlo_lexer *lx, const cxla_module *m,
                           const cxla_hlo_instr_info *info);

#endif /* CXLA_HLO_LEXER_H_ */
