/* The HLO text parser: modules, stack-frame tables, computations and instructions in any
 * of the styles found in the wild (hlo-text-format.md sections 3-6): short (dumps), long
 * (HloModule::ToString, '%' names, program shapes) and old long (operand shapes too).
 *
 * One pass over the text builds the module; names used before their definition are
 * resolved afterwards: operands and control predecessors at the end of their computation,
 * called computations at the end of the module. Then omitted result shapes are inferred,
 * computations are put callees-first, the entry layout is decoded or derived, and the
 * instructions are checked the way XLA's parser checks them (parser_checks.c).
 *
 * Errors: the first one wins and carries "FILE: line L, column C: what" with the line and
 * a caret. The partial module is destroyed. The text is never read past |len|. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/infer_internal.h"
#include "hlo/lexer.h"
#include "literal/literal_internal.h"
#include "shape/shape_internal.h"

/* The most '#' indexes an operand name may carry (name#1#0 reaches into nested tuples). */
#define MAX_TUPLE_PATH 8

/* An operand named before its definition (or with a name#index tuple index). */
typedef struct pending_operand {
    cxla_instr *instr;
    int64_t slot;
    const char *name; /* into the text */
    size_t len;
    size_t pos;
    int64_t tuple_path[MAX_TUPLE_PATH]; /* name#N#M...: the indexes, outermost first */
    int tuple_depth;                    /* how many; 0 for a plain name */
    const cxla_shape *declared;         /* operand shape written before the name, or NULL */
} pending_operand;

/* An attribute naming computations (module-wide) or instructions (per computation). */
typedef struct pending_ref {
    cxla_instr *instr; /* the attribute is found again by id (and name, for unknown ones) */
    cxla_attr_id id;
    const char *name; /* the attribute's name (for unknown ids) */
    size_t pos;
} pending_ref;

/* What the text said about a computation beyond its instructions. */
typedef struct comp_info {
    cxla_computation *comp;
    size_t pos;
    const cxla_shape *params; /* the program shape, when written */
    int64_t param_count;      /* -1 when no program shape was written */
    const cxla_shape *result;
} comp_info;

typedef struct parser {
    cxla_hlo_lexer lx;
    cxla_module *m;
    cxla_arena *scratch;
    cxla_hlo_names names;
    cxla_strmap warned;      /* unknown attribute names already warned about */
    cxla_strmap params;      /* parameter numbers of the current computation -> instruction */
    cxla_strmap names_used;  /* every instruction name in the module (XLA's are unique) */
    cxla_strmap name_suffix; /* base name -> the N to try first for "base.N" (unique_name) */
    int64_t name_clashes;    /* names written in more than one computation (uniquify_names) */
    /* Per computation. */
    pending_operand *ops;
    size_t op_count, op_cap;
    pending_ref *ctrl;
    size_t ctrl_count, ctrl_cap;
    /* Module-wide. */
    pending_ref *comp_refs;
    size_t comp_ref_count, comp_ref_cap;
    cxla_hlo_instr_info *instr_info; /* by instruction id */
    size_t instr_cap;
    comp_info *comp_info; /* by computation index (in text order) */
    size_t comp_cap;
    /* Scratch for operands and names. */
    cxla_instr **operand_buf;
    size_t operand_cap;
    size_t operand_top; /* slots of operand_buf in use by the instructions being parsed */
    char *name_buf;
    size_t name_cap;
    size_t entry_layout_pos;
    bool saw_entry_keyword;
    cxla_computation *last_top; /* the last computation written at the top level */
    int nesting;                /* depth of nested instructions being parsed as operands */
} parser;

/* Nested instructions as operands recurse; the fuzzer must not exhaust the stack. */
#define MAX_NESTING 64

#define GROW(arr, count, cap) grow_array((void **)&(arr), &(cap), (count) + 1, sizeof(*(arr)))

static bool grow_array(void **arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return true;
    size_t ncap = *cap ? *cap * 2 : 16;
    while (ncap < need) ncap *= 2;
    void *q = realloc(*arr, ncap * elem);
    if (!q) return false;
    memset((char *)q + *cap * elem, 0, (ncap - *cap) * elem);
    *arr = q;
    *cap = ncap;
    return true;
}

static bool reserve_name(parser *p, size_t size) {
    if (size <= p->name_cap) return true;
    size_t cap = p->name_cap ? p->name_cap : 64;
    while (cap < size) cap *= 2;
    char *q = realloc(p->name_buf, cap);
    if (!q) return false;
    p->name_buf = q;
    p->name_cap = cap;
    return true;
}

/* A NUL-terminated copy of a name in the scratch buffer (valid until the next call). */
static const char *name_z(parser *p, const char *s, size_t len) {
    if (!reserve_name(p, len + 1)) return NULL;
    memcpy(p->name_buf, s, len);
    p->name_buf[len] = 0;
    return p->name_buf;
}

static bool note_instr(parser *p, cxla_instr *in, size_t pos, unsigned flags) {
    size_t id = (size_t)in->id;
    if (!grow_array((void **)&p->instr_info, &p->instr_cap, id + 1, sizeof(*p->instr_info)))
        return false;
    p->instr_info[id] = (cxla_hlo_instr_info){pos, flags};
    return true;
}

/* ---- instructions ------------------------------------------------------------------ */

/* "name.N" with the smallest N >= 1 not used in the module (in the scratch buffer).
 * The search for a name starts where the last one for the same base ended
 * (name_suffix), so that thousands of computations that each call their parameter "p"
 * cost constant time per name, not a scan over p.1 ... p.N each. */
static const char *unique_name(parser *p, const char *name, size_t len) {
    uintptr_t start = (uintptr_t)cxla_strmap_get(&p->name_suffix, name, len);
    for (int64_t k = start ? (int64_t)start : 1;; k++) {
        char suffix[24];
        int n = snprintf(suffix, sizeof(suffix), ".%" PRId64, k);
        if (!reserve_name(p, len + (size_t)n + 1)) return NULL;
        memcpy(p->name_buf, name, len);
        memcpy(p->name_buf + len, suffix, (size_t)n + 1);
        if (!cxla_strmap_get(&p->names_used, p->name_buf, len + (size_t)n)) {
            const char *key = start ? name : cxla_arena_strndup(p->scratch, name, len);
            if (!key || !cxla_strmap_put(&p->name_suffix, key, len, (void *)(uintptr_t)(k + 1)))
                return NULL;
            return p->name_buf;
        }
    }
}

/* After skipping: does a shape start here ('(' or an element type then '[')? */
static bool looks_like_shape(parser *p) {
    cxla_hlo_lexer *lx = &p->lx;
    size_t q = cxla_hlo_skip(lx);
    if (q >= lx->len) return false;
    if (lx->text[q] == '(') return true;
    if (!cxla_hlo_is_name_start(lx->text[q])) return false;
    size_t e = q;
    while (e < lx->len &&
           (cxla_hlo_is_name_start(lx->text[e]) || (lx->text[e] >= '0' && lx->text[e] <= '9')))
        e++;
    size_t word = e - q;
    e = cxla_text_skip_space(lx->text, lx->len, e);
    if (word == 1 && lx->text[q] == 'b' && e < lx->len && lx->text[e] == '(')
        return true; /* a buffer shape b(f32[4]); no opcode is named "b" */
    return e < lx->len && lx->text[e] == '[' &&
           cxla_type_from_name(lx->text + q, word) != CXLA_TYPE_INVALID;
}

/* Old texts write a scalar's layout as "{}": accept it after a rank-0 shape. */
static void skip_empty_layout(parser *p, const cxla_shape *s) {
    cxla_hlo_lexer *lx = &p->lx;
    if (s->type == CXLA_TUPLE || s->rank != 0) return;
    size_t save = lx->pos;
    if (cxla_hlo_accept(lx, '{') && cxla_hlo_accept(lx, '}')) return;
    lx->pos = save;
}

static bool push_pending_operand(parser *p, const pending_operand *po) {
    if (!GROW(p->ops, p->op_count, p->op_cap)) return cxla_hlo_oom(&p->lx);
    p->ops[p->op_count++] = *po;
    return true;
}

static bool check_declared(parser *p, const cxla_shape *declared, const cxla_instr *operand,
                           size_t pos) {
    if (!declared || operand->shape.type == CXLA_TYPE_INVALID) return true;
    /* As XLA's ShapeUtil::Compatible: layouts and the dynamic-dimension flags are
     * ignored, so f32[4] may annotate an f32[<=4] operand (its bound). */
    if (cxla_infer_compatible(declared, &operand->shape)) return true;
    char *d = cxla_shape_to_string(declared, 0), *o = cxla_shape_to_string(&operand->shape, 0);
    cxla_hlo_error(&p->lx, pos,
                   "The declared operand shape %s is not compatible with the shape of the "
                   "operand instruction %s (%s)",
                   d ? d : "?", operand->name, o ? o : "?");
    free(d);
    free(o);
    return false;
}

/* The get-tuple-element that name#N stands for: reused when the computation already has
 * one made the same way, else created (named "<name>.gte<N>"). */
static cxla_instr *tuple_element(parser *p, cxla_computation *comp, cxla_instr *tuple,
                                 int64_t index, size_t pos) {
    cxla_hlo_lexer *lx = &p->lx;
    if (tuple->shape.type != CXLA_TUPLE) {
        cxla_hlo_error(lx, pos, "GTE operand must be tuple: '%s' is not", tuple->name);
        return NULL;
    }
    if (index < 0 || index >= tuple->shape.tuple_count) {
        cxla_hlo_error(lx, pos,
                       "GTE index %" PRId64 " out of bounds for '%s' (%" PRId64 " elements)", index,
                       tuple->name, tuple->shape.tuple_count);
        return NULL;
    }
    char suffix[40];
    snprintf(suffix, sizeof(suffix), ".gte%" PRId64, index);
    size_t base = strlen(tuple->name), slen = strlen(suffix);
    char *name = malloc(base + slen + 24);
    if (!name) {
        cxla_hlo_oom(lx);
        return NULL;
    }
    memcpy(name, tuple->name, base);
    memcpy(name + base, suffix, slen + 1);
    cxla_instr *in = NULL;
    for (int k = 1; !in; k++) {
        cxla_instr *old = cxla_computation_find_instr(comp, name);
        if (!old && !cxla_strmap_get(&p->names_used, name, strlen(name))) break;
        if (old && old->opcode == CXLA_OP_GET_TUPLE_ELEMENT && old->operand_count == 1 &&
            old->operands[0] == tuple) {
            int64_t idx;
            if (cxla_instr_int(old, CXLA_ATTR_INDEX, &idx) && idx == index) in = old;
        }
        snprintf(name + base + slen, 24, ".%d", k);
    }
    if (!in) {
        cxla_status st = cxla_computation_add_instr(comp, CXLA_OP_GET_TUPLE_ELEMENT, name,
                                                    &tuple->shape.elements[index], 1, &tuple, &in);
        cxla_attr a = {.id = CXLA_ATTR_INDEX, .kind = CXLA_ATTR_KIND_INT, .v.i = index};
        a.name = cxla_attr_get_info(CXLA_ATTR_INDEX)->name;
        if (!st) st = cxla_instr_set_attr(in, &a);
        if (st || !note_instr(p, in, pos, 0) ||
            !cxla_strmap_put(&p->names_used, in->name, strlen(in->name), in)) {
            in = NULL;
            st ? cxla_hlo_fail_status(lx, st, pos) : cxla_hlo_oom(lx);
        }
    }
    free(name);
    return in;
}

static bool parse_instruction_rhs(parser *p, cxla_computation *comp, const char *name,
                                  size_t name_len, size_t name_pos, size_t start,
                                  bool allow_attributes, cxla_instr **out);
static bool inline_body_at(parser *p);
static bool parse_inline_computation(parser *p, const cxla_instr *owner, const char *attr,
                                     size_t attr_len, cxla_attr *a);

/* Is the word at |q| followed by '(' (an opcode: a nested instruction, not a name)? */
static bool nested_at(parser *p, size_t q) {
    cxla_hlo_lexer *lx = &p->lx;
    if (q >= lx->len || !cxla_hlo_is_name_start(lx->text[q])) return false;
    while (q < lx->len && cxla_hlo_is_name_char(lx->text[q])) q++;
    q = cxla_text_skip_space(lx->text, lx->len, q);
    return q < lx->len && lx->text[q] == '(';
}

/* One operand: [shape] name [#index], resolved now when defined, else left pending; or a
 * nested instruction [shape] opcode(operands) without attributes (XLA's ParseOperands:
 * the comma after it separates operands, so attributes would be ambiguous). */
static bool parse_operand(parser *p, cxla_computation *comp, size_t slot, cxla_instr **out) {
    cxla_hlo_lexer *lx = &p->lx;
    size_t pos = cxla_hlo_skip(lx);
    if (looks_like_shape(p) || nested_at(p, pos)) {
        size_t save = lx->pos;
        bool nested = true;
        if (looks_like_shape(p)) {
            cxla_shape tmp;
            if (!cxla_hlo_shape(lx, &tmp)) return false;
            nested = nested_at(p, cxla_hlo_skip(lx));
        }
        lx->pos = save;
        if (nested) {
            if (p->nesting >= MAX_NESTING)
                return cxla_hlo_error(lx, pos, "instructions nested more than %d deep",
                                      MAX_NESTING);
            p->nesting++;
            bool ok = parse_instruction_rhs(p, comp, NULL, 0, pos, pos, false, out);
            p->nesting--;
            return ok;
        }
    }
    cxla_shape *declared = NULL;
    if (looks_like_shape(p)) {
        declared = cxla_arena_alloc(p->m->arena, sizeof(*declared));
        if (!declared) return cxla_hlo_oom(lx);
        if (!cxla_hlo_shape(lx, declared)) return false;
        skip_empty_layout(p, declared);
    }
    size_t name_pos = cxla_hlo_skip(lx);
    const char *name;
    size_t len = cxla_hlo_name(lx, &name);
    if (!len) return cxla_hlo_error_found(lx, name_pos, "expected an operand name");
    int64_t path[MAX_TUPLE_PATH];
    int depth = 0;
    while (lx->pos < lx->len && lx->text[lx->pos] == '#') {
        lx->pos++;
        size_t q = cxla_hlo_skip(lx);
        if (q >= lx->len || !((lx->text[q] >= '0' && lx->text[q] <= '9') || lx->text[q] == '-'))
            return cxla_hlo_error_found(lx, q, "expects integer for the tuple index after '#'");
        if (depth == MAX_TUPLE_PATH)
            return cxla_hlo_error(lx, q, "more than %d tuple indexes after '%.*s'", MAX_TUPLE_PATH,
                                  (int)len, name);
        if (!cxla_hlo_int(lx, &path[depth], "tuple index")) return false;
        if (path[depth] < 0)
            return cxla_hlo_error(lx, q, "GTE index %" PRId64 " out of bounds", path[depth]);
        depth++;
    }
    cxla_instr *target = cxla_strmap_get(&comp->instr_by_name, name, len);
    if (!target) {
        pending_operand po = {NULL, (int64_t)slot, name, len, name_pos, {0}, depth, declared};
        memcpy(po.tuple_path, path, (size_t)depth * sizeof(path[0]));
        *out = NULL;
        return push_pending_operand(p, &po);
    }
    for (int i = 0; i < depth && target; i++)
        target = tuple_element(p, comp, target, path[i], name_pos);
    if (!target) return false;
    if (!check_declared(p, declared, target, pos)) return false;
    *out = target;
    return true;
}

/* Operands go to p->operand_buf[base...]; a nested instruction uses the slots after
 * its outer instruction's (the buffer may move meanwhile: indexes, not pointers). */
static bool parse_operands(parser *p, cxla_computation *comp, size_t base, size_t *out_count) {
    cxla_hlo_lexer *lx = &p->lx;
    size_t n = 0;
    if (!cxla_hlo_accept(lx, ')')) {
        do {
            cxla_instr *operand = NULL;
            if (!parse_operand(p, comp, n, &operand)) return false;
            if (!grow_array((void **)&p->operand_buf, &p->operand_cap, base + n + 1,
                            sizeof(*p->operand_buf)))
                return cxla_hlo_oom(lx);
            p->operand_buf[base + n] = operand;
            n++;
            p->operand_top = base + n;
        } while (cxla_hlo_accept(lx, ','));
        if (!cxla_hlo_expect(lx, ')', "to close the operand list")) return false;
    }
    *out_count = n;
    return true;
}

/* Parses "{...}" (an elided constant) when it is next. */
static bool accept_elided(parser *p) {
    cxla_hlo_lexer *lx = &p->lx;
    size_t save = lx->pos;
    if (cxla_hlo_accept(lx, '{') && cxla_hlo_accept_str(lx, "...") && cxla_hlo_accept(lx, '}'))
        return true;
    lx->pos = save;
    return false;
}

/* The opcode word at the cursor, with the async sugar X-start / X-update / X-done. */
static bool parse_opcode(parser *p, cxla_opcode *op, cxla_opcode *wrapped) {
    cxla_hlo_lexer *lx = &p->lx;
    *wrapped = CXLA_OP_COUNT;
    *op = CXLA_OP_COUNT;
    size_t q = cxla_hlo_skip(lx), start = q;
    while (q < lx->len && (cxla_hlo_is_name_start(lx->text[q]) || lx->text[q] == '-' ||
                           (lx->text[q] >= '0' && lx->text[q] <= '9')))
        q++;
    size_t n = q - start;
    if (!n) return cxla_hlo_error_found(lx, start, "expected an opcode");
    const char *w = lx->text + start;
    *wrapped = CXLA_OP_COUNT;
    *op = cxla_hlo_lookup_opcode(&p->names, w, n);
    if (*op == CXLA_OP_COUNT) {
        static const struct {
            const char *suffix;
            cxla_opcode op;
        } sugar[] = {{"-start", CXLA_OP_ASYNC_START},
                     {"-update", CXLA_OP_ASYNC_UPDATE},
                     {"-done", CXLA_OP_ASYNC_DONE}};
        for (size_t i = 0; i < CXLA_ARRAY_SIZE(sugar); i++) {
            size_t sl = strlen(sugar[i].suffix);
            if (n <= sl || memcmp(w + n - sl, sugar[i].suffix, sl) != 0) continue;
            cxla_opcode inner = cxla_hlo_lookup_opcode(&p->names, w, n - sl);
            /* Operations with their own start/done opcodes are not wrapped this way. */
            if (inner == CXLA_OP_COUNT || inner == CXLA_OP_ALL_REDUCE ||
                inner == CXLA_OP_ALL_GATHER || inner == CXLA_OP_COLLECTIVE_PERMUTE ||
                inner == CXLA_OP_COPY || inner == CXLA_OP_SEND || inner == CXLA_OP_RECV ||
                (cxla_opcode_get_info(inner)->flags &
                 (CXLA_OPF_ASYNC_START | CXLA_OPF_ASYNC_DONE)) ||
                inner == CXLA_OP_ASYNC_UPDATE)
                break;
            *op = sugar[i].op;
            *wrapped = inner;
            break;
        }
    }
    if (*op == CXLA_OP_COUNT)
        return cxla_hlo_error(lx, start, "Unknown opcode: '%.*s'", (int)(n > 64 ? 64 : n), w);
    lx->pos = q;
    return true;
}

/* Reads "name=" of an attribute; returns the name's length (0 on error). */
static size_t attr_name(parser *p, const char **out, size_t *pos) {
    cxla_hlo_lexer *lx = &p->lx;
    size_t q = cxla_hlo_skip(lx), start = q;
    *pos = start;
    while (q < lx->len && cxla_hlo_is_name_char(lx->text[q])) q++;
    if (q == start || q >= lx->len || lx->text[q] != '=') {
        cxla_hlo_error_found(lx, start, "expected an attribute name followed by '='");
        return 0;
    }
    *out = lx->text + start;
    lx->pos = q + 1;
    return q - start;
}

/* Fills |a| for the attribute named [name, name+len) and parses its value. */
static bool parse_attr(parser *p, const char *name, size_t len, size_t pos, cxla_attr *a,
                       const char *owner) {
    cxla_hlo_lexer *lx = &p->lx;
    memset(a, 0, sizeof(*a));
    a->id = cxla_hlo_lookup_attr(&p->names, name, len);
    if (a->id == CXLA_ATTR_UNKNOWN) {
        a->kind = CXLA_ATTR_KIND_RAW;
        a->name = cxla_arena_strndup(p->m->arena, name, len);
        if (!a->name) return cxla_hlo_oom(lx);
        if (!cxla_strmap_get(&p->warned, a->name, len)) {
            if (!cxla_strmap_put(&p->warned, a->name, len, (void *)1)) return cxla_hlo_oom(lx);
            const char *hint = cxla_attr_suggest(name, len);
            cxla_hlo_warn(lx, pos, "unknown attribute '%s' (on %s) kept as text%s%s%s", a->name,
                          owner, hint ? "; did you mean '" : "", hint ? hint : "",
                          hint ? "'?" : "");
        }
    } else {
        const cxla_attr_info *info = cxla_attr_get_info(a->id);
        a->kind = info->kind;
        a->name = info->name;
    }
    return cxla_hlo_parse_attr_value(lx, a);
}

static bool same_attr(const cxla_attr *x, const cxla_attr *y) {
    return x->id == y->id && (x->id != CXLA_ATTR_UNKNOWN || strcmp(x->name, y->name) == 0);
}

static bool push_ref(parser *p, pending_ref **arr, size_t *count, size_t *cap, cxla_instr *in,
                     const cxla_attr *a, size_t pos) {
    if (!grow_array((void **)arr, cap, *count + 1, sizeof(**arr))) return cxla_hlo_oom(&p->lx);
    (*arr)[(*count)++] = (pending_ref){in, a->id, a->name, pos};
    return true;
}

static bool parse_instr_attrs(parser *p, cxla_instr *in) {
    cxla_hlo_lexer *lx = &p->lx;
    while (cxla_hlo_accept(lx, ',')) {
        const char *name;
        size_t pos, len = attr_name(p, &name, &pos);
        if (!len) return false;
        cxla_attr_id id = cxla_hlo_lookup_attr(&p->names, name, len);
        if (!cxla_hlo_attr_allowed(in, id)) {
            cxla_opcode op = in->async_wrapped != CXLA_OP_COUNT ? in->async_wrapped : in->opcode;
            return cxla_hlo_error(lx, pos, "unexpected attribute \"%s\" for %s '%s'",
                                  cxla_attr_get_info(id)->name, cxla_opcode_name(op), in->name);
        }
        cxla_attr a;
        const cxla_attr_info *ai = id == CXLA_ATTR_UNKNOWN ? NULL : cxla_attr_get_info(id);
        if (ai &&
            (ai->kind == CXLA_ATTR_KIND_COMPUTATION || ai->kind == CXLA_ATTR_KIND_COMPUTATIONS) &&
            inline_body_at(p)) {
            memset(&a, 0, sizeof(a));
            a.id = id;
            a.kind = ai->kind;
            a.name = ai->name;
            if (!parse_inline_computation(p, in, name, len, &a)) return false;
        } else if (!parse_attr(p, name, len, pos, &a, in->name)) {
            return false;
        }
        for (int64_t i = 0; i < in->attr_count; i++)
            if (same_attr(&in->attrs[i], &a))
                return cxla_hlo_error(lx, pos, "attribute '%s' is given twice", a.name);
        if (a.kind == CXLA_ATTR_KIND_COMPUTATION || a.kind == CXLA_ATTR_KIND_COMPUTATIONS) {
            if (!push_ref(p, &p->comp_refs, &p->comp_ref_count, &p->comp_ref_cap, in, &a, pos))
                return false;
        } else if (a.kind == CXLA_ATTR_KIND_INSTRUCTIONS) {
            if (!push_ref(p, &p->ctrl, &p->ctrl_count, &p->ctrl_cap, in, &a, pos)) return false;
        }
        cxla_status st = cxla_instr_set_attr(in, &a);
        if (st) return cxla_hlo_fail_status(lx, st, pos);
    }
    return true;
}

/* A nested instruction was named "<opcode>.N" before the text named one of its own so:
 * the nested one (which the text cannot name) takes another name. */
static bool make_room(parser *p, cxla_computation *comp, const char *name, size_t len) {
    cxla_instr *old = cxla_strmap_get(&p->names_used, name, len);
    if (!old || old->parent != comp || !(p->instr_info[old->id].flags & CXLA_HLO_NESTED))
        return true;
    const char *opn = cxla_opcode_name(old->opcode);
    const char *z = unique_name(p, opn, strlen(opn));
    char *fresh = z ? cxla_arena_strndup(p->m->arena, z, strlen(z)) : NULL;
    if (!fresh || !cxla_strmap_put(&comp->instr_by_name, fresh, strlen(fresh), old) ||
        !cxla_strmap_put(&p->names_used, fresh, strlen(fresh), old) ||
        !cxla_strmap_put(&comp->instr_by_name, old->name, strlen(old->name), NULL) ||
        !cxla_strmap_put(&p->names_used, old->name, strlen(old->name), NULL))
        return cxla_hlo_oom(&p->lx);
    old->name = fresh;
    return true;
}

static bool parse_instruction(parser *p, cxla_computation *comp, cxla_instr **root) {
    cxla_hlo_lexer *lx = &p->lx;
    size_t start = cxla_hlo_skip(lx);
    bool is_root = cxla_hlo_accept_keyword(lx, "ROOT");
    size_t name_pos = cxla_hlo_skip(lx);
    const char *name;
    size_t name_len = cxla_hlo_name(lx, &name);
    if (!name_len)
        return cxla_hlo_error_found(lx, name_pos,
                                    "expected an instruction name (or '}' to end computation "
                                    "'%s')",
                                    comp->name);
    if (!make_room(p, comp, name, name_len)) return false;
    if (cxla_strmap_get(&comp->instr_by_name, name, name_len))
        return cxla_hlo_error(lx, name_pos,
                              "an instruction named '%.*s' already exists in "
                              "computation '%s'",
                              (int)name_len, name, comp->name);
    if (!cxla_hlo_expect(lx, '=', "after the instruction name")) return false;
    cxla_instr *in;
    if (!parse_instruction_rhs(p, comp, name, name_len, name_pos, start, true, &in)) return false;
    if (is_root) {
        if (*root)
            return cxla_hlo_error(lx, start,
                                  "one computation should have only one ROOT: '%s' "
                                  "is already the root of '%s'",
                                  (*root)->name, comp->name);
        *root = in;
    }
    return true;
}

/* A word followed by '[' where a shape or an opcode goes is a misspelled element type
 * ("flt32[5,3]"), not an unknown opcode: say so (false, with the error). */
static bool unknown_type_at(parser *p, size_t q) {
    cxla_hlo_lexer *lx = &p->lx;
    size_t e = q;
    while (e < lx->len &&
           (cxla_hlo_is_name_start(lx->text[e]) || (lx->text[e] >= '0' && lx->text[e] <= '9')))
        e++;
    size_t b = cxla_text_skip_space(lx->text, lx->len, e);
    if (e == q || b >= lx->len || lx->text[b] != '[') return true;
    const char *hint = cxla_type_suggest(lx->text + q, e - q);
    return cxla_hlo_error(lx, q, "unknown element type '%.*s'%s%s%s",
                          (int)(e - q > 64 ? 64 : e - q), lx->text + q,
                          hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
}

/* Does |s| (or an element of it) have a tiled layout? */
static bool has_tiles(const cxla_shape *s) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            if (has_tiles(&s->elements[i])) return true;
        return false;
    }
    return s->layout && s->layout->tile_count > 0;
}

/* |s| with its tiles dropped (in the arena): a constant's literal is parsed in it, as XLA
 * parses the literal in an untiled layout and relayouts it; the instruction keeps the
 * tiles, which describe memory the interpreter does not model. */
static bool untiled(cxla_arena *ar, const cxla_shape *s, cxla_shape *out) {
    *out = *s;
    if (s->type == CXLA_TUPLE) {
        out->elements = cxla_arena_alloc_array(ar, (size_t)(s->tuple_count ? s->tuple_count : 1),
                                               sizeof(*out->elements));
        if (!out->elements) return false;
        for (int64_t i = 0; i < s->tuple_count; i++)
            if (!untiled(ar, &s->elements[i], &out->elements[i])) return false;
        return true;
    }
    if (!s->layout || !s->layout->tile_count) return true;
    cxla_layout *l = cxla_arena_alloc(ar, sizeof(*l));
    if (!l) return false;
    *l = *s->layout;
    l->tile_count = 0;
    l->tiles = NULL;
    out->layout = l;
    return true;
}

/* [shape] opcode(operands) [, attributes]: the instruction named [name, name+len), or a
 * nested one (|name| NULL) named after its opcode, "<opcode>.N" unique in the module. */
static bool parse_instruction_rhs(parser *p, cxla_computation *comp, const char *name,
                                  size_t name_len, size_t name_pos, size_t start,
                                  bool allow_attributes, cxla_instr **out) {
    cxla_hlo_lexer *lx = &p->lx;
    *out = NULL;
    cxla_shape shape;
    memset(&shape, 0, sizeof(shape));
    bool has_shape = looks_like_shape(p);
    if (has_shape) {
        if (!cxla_hlo_shape(lx, &shape)) return false;
        skip_empty_layout(p, &shape);
    }
    size_t op_pos = cxla_hlo_skip(lx);
    if (!has_shape && !unknown_type_at(p, op_pos)) return false;
    cxla_opcode op, wrapped;
    if (!parse_opcode(p, &op, &wrapped)) return false;
    if (!cxla_hlo_expect(lx, '(', "after the opcode")) return false;
    size_t nops = 0, first_pending = p->op_count, base = p->operand_top;
    int64_t param_number = -1;
    cxla_literal *literal = NULL;
    bool elided = false;
    if (op == CXLA_OP_PARAMETER) {
        size_t q = cxla_hlo_skip(lx);
        if (!cxla_hlo_int(lx, &param_number, "parameter number")) return false;
        if (param_number < 0)
            return cxla_hlo_error(lx, q, "parameter number %" PRId64 " is negative", param_number);
        if (!cxla_hlo_expect(lx, ')', "after the parameter number")) return false;
    } else if (op == CXLA_OP_CONSTANT) {
        size_t q = cxla_hlo_skip(lx);
        if (!has_shape)
            return cxla_hlo_error(lx, op_pos,
                                  "a constant needs its shape written before "
                                  "'constant'");
        cxla_shape lshape = shape;
        if (has_tiles(&shape) && !untiled(p->m->arena, &shape, &lshape)) return cxla_hlo_oom(lx);
        if (accept_elided(p)) {
            elided = true;
        } else {
            cxla_status st = cxla_literal_parse_at(lx->text, lx->len, &q, &lshape, &literal);
            if (st) return cxla_hlo_fail_status(lx, st, lx->pos);
            st = cxla_module_adopt_literal(p->m, literal);
            if (st) return cxla_hlo_fail_status(lx, st, lx->pos);
            lx->pos = q;
        }
        if (!cxla_hlo_expect(lx, ')', "after the constant's value")) return false;
    } else if (!parse_operands(p, comp, base, &nops)) {
        return false;
    }
    /* A written name is kept as written: one that another computation also uses is made
     * unique once every computation is read (uniquify_names). A nested instruction has no
     * name in the text: it gets its opcode's, made unique in the module now. */
    const char *z;
    if (!name) {
        name = cxla_opcode_name(op);
        z = unique_name(p, name, strlen(name));
    } else {
        p->name_clashes += cxla_strmap_get(&p->names_used, name, name_len) != NULL;
        z = name_z(p, name, name_len);
    }
    if (!z) return cxla_hlo_oom(lx);
    cxla_instr *in;
    cxla_status st =
        cxla_computation_add_instr(comp, op, z, has_shape ? &shape : NULL, (int64_t)nops,
                                   nops ? p->operand_buf + base : NULL, &in);
    p->operand_top = base;
    if (st) return cxla_hlo_fail_status(lx, st, name_pos);
    if (!cxla_strmap_put(&p->names_used, in->name, strlen(in->name), in)) return cxla_hlo_oom(lx);
    in->parameter_number = param_number;
    in->literal = literal;
    in->literal_elided = elided;
    in->async_wrapped = wrapped;
    cxla_hlo_line_col(lx, start, &in->line, &in->column);
    unsigned flags =
        (has_shape ? 0u : CXLA_HLO_SHAPE_OMITTED) | (allow_attributes ? 0u : CXLA_HLO_NESTED);
    if (!note_instr(p, in, name_pos, flags)) return cxla_hlo_oom(lx);
    if (op == CXLA_OP_PARAMETER) {
        cxla_instr *twin =
            cxla_strmap_get(&p->params, (const char *)&param_number, sizeof(param_number));
        if (twin)
            return cxla_hlo_error(lx, start,
                                  "Duplicate parameter number %" PRId64 " in "
                                  "computation '%s' ('%s' and '%s')",
                                  param_number, comp->name, twin->name, in->name);
        int64_t *key = cxla_arena_alloc(p->scratch, sizeof(*key));
        if (!key) return cxla_hlo_oom(lx);
        *key = param_number;
        if (!cxla_strmap_put(&p->params, (const char *)key, sizeof(*key), in))
            return cxla_hlo_oom(lx);
    }
    /* The pending operands of nested instructions already name theirs. */
    for (size_t i = first_pending; i < p->op_count; i++)
        if (!p->ops[i].instr) p->ops[i].instr = in;
    *out = in;
    return !allow_attributes || parse_instr_attrs(p, in);
}

/* ---- computations -------------------------------------------------------------------- */

static bool resolve_operands(parser *p, cxla_computation *comp) {
    cxla_hlo_lexer *lx = &p->lx;
    for (size_t i = 0; i < p->op_count; i++) {
        pending_operand *po = &p->ops[i];
        cxla_instr *target = cxla_strmap_get(&comp->instr_by_name, po->name, po->len);
        if (!target)
            return cxla_hlo_error(lx, po->pos,
                                  "instruction does not exist: '%.*s' is not "
                                  "defined in computation '%s'",
                                  (int)po->len, po->name, comp->name);
        for (int k = 0; k < po->tuple_depth && target; k++)
            target = tuple_element(p, comp, target, po->tuple_path[k], po->pos);
        if (!target) return false;
        if (!check_declared(p, po->declared, target, po->pos)) return false;
        cxla_status st = cxla_instr_replace_operand(po->instr, po->slot, target);
        if (st) return cxla_hlo_fail_status(lx, st, po->pos);
    }
    p->op_count = 0;
    return true;
}

/* The attribute a pending reference points at. */
static cxla_attr *find_attr(const pending_ref *r) {
    for (int64_t i = 0; i < r->instr->attr_count; i++) {
        cxla_attr *a = &r->instr->attrs[i];
        if (a->id == r->id && (r->id != CXLA_ATTR_UNKNOWN || strcmp(a->name, r->name) == 0))
            return a;
    }
    return NULL;
}

static bool resolve_control(parser *p, cxla_computation *comp) {
    for (size_t i = 0; i < p->ctrl_count; i++) {
        pending_ref *r = &p->ctrl[i];
        cxla_attr *a = find_attr(r);
        for (int64_t k = 0; a && k < a->v.instrs.count; k++) {
            const char *n = a->pending_names[k];
            cxla_instr *t = cxla_computation_find_instr(comp, n);
            if (!t)
                return cxla_hlo_error(&p->lx, r->pos,
                                      "'%s' is not defined in computation '%s' "
                                      "(named in %s of '%s')",
                                      n, comp->name, r->name, r->instr->name);
            a->v.instrs.items[k] = t;
        }
    }
    p->ctrl_count = 0;
    return true;
}

/* Numbers the parameters: each number once, no gaps. */
static bool number_params(parser *p, cxla_computation *comp, size_t pos) {
    int64_t max = -1;
    for (int64_t i = 0; i < comp->instr_count; i++) {
        const cxla_instr *in = comp->instrs[i];
        if (in->opcode == CXLA_OP_PARAMETER && in->parameter_number > max)
            max = in->parameter_number;
    }
    if (max + 1 > comp->instr_count)
        return cxla_hlo_error(&p->lx, pos,
                              "computation '%s' has parameter number %" PRId64 " but only %" PRId64
                              " instructions: parameter "
                              "numbers must be 0, 1, 2, ...",
                              comp->name, max, comp->instr_count);
    comp->param_count = max + 1;
    comp->params = cxla_arena_alloc_array(p->m->arena, (size_t)(max + 1 > 0 ? max + 1 : 1),
                                          sizeof(cxla_instr *));
    if (!comp->params) return cxla_hlo_oom(&p->lx);
    for (int64_t i = 0; i < comp->instr_count; i++) {
        cxla_instr *in = comp->instrs[i];
        if (in->opcode != CXLA_OP_PARAMETER) continue;
        if (comp->params[in->parameter_number])
            return cxla_hlo_error(&p->lx, p->instr_info[in->id].pos,
                                  "Duplicate parameter number %" PRId64 " in computation '%s' "
                                  "('%s' and '%s')",
                                  in->parameter_number, comp->name,
                                  comp->params[in->parameter_number]->name, in->name);
        comp->params[in->parameter_number] = in;
    }
    for (int64_t i = 0; i < comp->param_count; i++)
        if (!comp->params[i])
            return cxla_hlo_error(&p->lx, pos,
                                  "computation '%s' has no parameter number %" PRId64
                                  " (parameters are numbered 0, 1, 2, ...)",
                                  comp->name, i);
    return true;
}

/* (name: shape, ...) -> shape */
static bool parse_program_shape(parser *p, cxla_computation *comp, size_t index) {
    cxla_hlo_lexer *lx = &p->lx;
    cxla_arena *ar = p->m->arena;
    cxla_shape *params = NULL;
    size_t count = 0, cap = 0;
    if (!cxla_hlo_expect(lx, '(', "to open the parameter list")) return false;
    if (!cxla_hlo_accept(lx, ')')) {
        do {
            size_t q = cxla_hlo_skip(lx);
            const char *n;
            if (!cxla_hlo_name(lx, &n))
                return cxla_hlo_error_found(lx, q,
                                            "expected a parameter name in the program "
                                            "shape of '%s'",
                                            comp->name);
            cxla_hlo_accept(lx, ':'); /* "p0: f32[]" as printed, "p0 f32[]" in old texts */
            if (count == cap) {
                size_t ncap = cap ? cap * 2 : 8;
                cxla_shape *np = cxla_arena_alloc_array(ar, ncap, sizeof(*np));
                if (!np) return cxla_hlo_oom(lx);
                if (count) memcpy(np, params, count * sizeof(*np));
                params = np;
                cap = ncap;
            }
            if (!cxla_hlo_shape(lx, &params[count])) return false;
            count++;
        } while (cxla_hlo_accept(lx, ','));
        if (!cxla_hlo_expect(lx, ')', "to close the parameter list")) return false;
    }
    if (!cxla_hlo_accept_str(lx, "->"))
        return cxla_hlo_error_found(lx, lx->pos, "expected '->' before the result shape");
    cxla_shape *result = cxla_arena_alloc(ar, sizeof(*result));
    if (!result) return cxla_hlo_oom(lx);
    if (!cxla_hlo_shape(lx, result)) return false;
    p->comp_info[index].params = params;
    p->comp_info[index].param_count = (int64_t)count;
    p->comp_info[index].result = result;
    return true;
}

/* Adds computation [name, name+len) to the module with its comp_info entry. */
static bool new_computation(parser *p, const char *name, size_t len, size_t name_pos, size_t start,
                            cxla_computation **out) {
    cxla_hlo_lexer *lx = &p->lx;
    const char *z = name_z(p, name, len);
    if (!z) return cxla_hlo_oom(lx);
    cxla_computation *comp;
    cxla_status st = cxla_module_add_computation(p->m, z, &comp);
    if (st) return cxla_hlo_fail_status(lx, st, name_pos);
    size_t index = (size_t)p->m->comp_count - 1;
    if (!GROW(p->comp_info, index, p->comp_cap)) return cxla_hlo_oom(lx);
    p->comp_info[index] = (comp_info){comp, name_pos, NULL, -1, NULL};
    cxla_hlo_line_col(lx, start, &comp->line, &comp->column);
    *out = comp;
    return true;
}

/* '{' instructions '}': the body of |comp|, its operands and control predecessors
 * resolved, its root and parameters set. */
static bool parse_body(parser *p, cxla_computation *comp, size_t name_pos) {
    cxla_hlo_lexer *lx = &p->lx;
    cxla_strmap_init(&p->params, p->scratch);
    if (!cxla_hlo_expect(lx, '{', "to open the computation body")) return false;
    cxla_instr *root = NULL;
    for (;;) {
        size_t q = cxla_hlo_skip(lx);
        if (q >= lx->len)
            return cxla_hlo_error(lx, q,
                                  "expected '}' to close computation '%s' (started at "
                                  "line %" PRId64 ")",
                                  comp->name, comp->line);
        if (cxla_hlo_accept(lx, '}')) break;
        if (!parse_instruction(p, comp, &root)) return false;
    }
    if (comp->instr_count == 0)
        return cxla_hlo_error(lx, name_pos, "computation '%s' has no instructions", comp->name);
    if (!resolve_operands(p, comp) || !resolve_control(p, comp)) return false;
    comp->root = root ? root : comp->instrs[comp->instr_count - 1];
    comp->is_entry = false;
    return number_params(p, comp, name_pos);
}

static bool parse_computation(parser *p, cxla_computation **entry) {
    cxla_hlo_lexer *lx = &p->lx;
    size_t start = cxla_hlo_skip(lx);
    bool is_entry = cxla_hlo_accept_keyword(lx, "ENTRY");
    size_t name_pos = cxla_hlo_skip(lx);
    const char *name;
    size_t len = cxla_hlo_name(lx, &name);
    if (!len) return cxla_hlo_error_found(lx, name_pos, "expected a computation name");
    if (cxla_strmap_get(&p->m->comp_by_name, name, len))
        return cxla_hlo_error(lx, name_pos, "a computation named '%.*s' already exists", (int)len,
                              name);
    if (is_entry && *entry && p->saw_entry_keyword)
        return cxla_hlo_error(lx, start,
                              "expects only one ENTRY computation: '%s' is already "
                              "the entry",
                              (*entry)->name);
    cxla_computation *comp;
    if (!new_computation(p, name, len, name_pos, start, &comp)) return false;
    p->last_top = comp; /* not an inline body added after it */
    if (is_entry) {
        *entry = comp;
        p->saw_entry_keyword = true;
    }
    if (cxla_hlo_at(lx, '(') && !parse_program_shape(p, comp, (size_t)p->m->comp_count - 1))
        return false;
    /* The body's '}' is followed by the computation's attributes; they are parsed after
     * the body, whose operands are resolved at its end (an inline body's too). */
    if (!parse_body(p, comp, name_pos)) return false;
    if (cxla_hlo_accept(lx, ',')) {
        size_t q = cxla_hlo_skip(lx);
        const char *thread;
        if (!cxla_hlo_accept_keyword(lx, "execution_thread") ||
            !cxla_hlo_expect(lx, '=', "after execution_thread"))
            return lx->error ? false
                             : cxla_hlo_error_found(lx, q,
                                                    "expected execution_thread=\"...\" "
                                                    "after the computation");
        if (!cxla_hlo_string(lx, &thread)) return false;
        comp->execution_thread = thread;
    }
    return true;
}

/* Is an inline computation body next ('{' then ROOT or "name =")? A list of names
 * ("calls={%c}") is not one. */
static bool inline_body_at(parser *p) {
    cxla_hlo_lexer *lx = &p->lx;
    size_t q = cxla_hlo_skip(lx);
    if (q >= lx->len || lx->text[q] != '{') return false;
    q = cxla_text_skip_space(lx->text, lx->len, q + 1);
    if (q + 4 <= lx->len && memcmp(lx->text + q, "ROOT", 4) == 0 &&
        (q + 4 == lx->len || !cxla_hlo_is_name_char(lx->text[q + 4])))
        return true;
    if (q < lx->len && lx->text[q] == '%') q++;
    if (q >= lx->len || !cxla_hlo_is_name_start(lx->text[q])) return false;
    while (q < lx->len && cxla_hlo_is_name_char(lx->text[q])) q++;
    q = cxla_text_skip_space(lx->text, lx->len, q);
    return q < lx->len && lx->text[q] == '=';
}

/* A computation written inline as an attribute's value (XLA's ParseHloComputation takes
 * '{' instructions '}' in place of a name): it becomes a computation of the module named
 * "<instruction>.<attribute>" (made unique), and |a| names it as if the text had. The
 * enclosing computation's pending names are set aside while the body is parsed. */
static bool parse_inline_computation(parser *p, const cxla_instr *owner, const char *attr,
                                     size_t attr_len, cxla_attr *a) {
    cxla_hlo_lexer *lx = &p->lx;
    size_t start = cxla_hlo_skip(lx);
    if (p->nesting >= MAX_NESTING)
        return cxla_hlo_error(lx, start, "computations nested more than %d deep", MAX_NESTING);
    size_t olen = strlen(owner->name);
    char *want = malloc(olen + attr_len + 2);
    if (!want) return cxla_hlo_oom(lx);
    memcpy(want, owner->name, olen);
    want[olen] = '.';
    memcpy(want + olen + 1, attr, attr_len);
    want[olen + 1 + attr_len] = '\0';
    char *name = malloc(olen + attr_len + 24);
    if (!name) {
        free(want);
        return cxla_hlo_oom(lx);
    }
    strcpy(name, want);
    for (int k = 1; cxla_strmap_get(&p->m->comp_by_name, name, strlen(name)); k++)
        snprintf(name, olen + attr_len + 24, "%s.%d", want, k);
    free(want);
    cxla_computation *comp;
    bool ok = new_computation(p, name, strlen(name), start, start, &comp);
    free(name);
    if (!ok) return false;
    pending_operand *ops = p->ops;
    size_t op_count = p->op_count, op_cap = p->op_cap;
    pending_ref *ctrl = p->ctrl;
    size_t ctrl_count = p->ctrl_count, ctrl_cap = p->ctrl_cap;
    cxla_strmap params = p->params;
    p->ops = NULL;
    p->op_count = p->op_cap = 0;
    p->ctrl = NULL;
    p->ctrl_count = p->ctrl_cap = 0;
    p->nesting++;
    ok = parse_body(p, comp, start);
    p->nesting--;
    free(p->ops);
    free(p->ctrl);
    p->ops = ops;
    p->op_count = op_count;
    p->op_cap = op_cap;
    p->ctrl = ctrl;
    p->ctrl_count = ctrl_count;
    p->ctrl_cap = ctrl_cap;
    p->params = params;
    if (!ok) return false;
    cxla_arena *ar = p->m->arena;
    a->pending_names = cxla_arena_alloc_array(ar, 1, sizeof(char *));
    a->v.comps.items = cxla_arena_alloc_array(ar, 1, sizeof(cxla_computation *));
    if (!a->pending_names || !a->v.comps.items) return cxla_hlo_oom(lx);
    a->pending_names[0] = comp->name;
    a->v.comps.count = 1;
    return true;
}

/* ---- the module ---------------------------------------------------------------------- */

/* Header attributes live in module->attrs, sorted by id (unknown ones last, in order). */
static bool module_set_attr(parser *p, const cxla_attr *a, size_t pos) {
    cxla_module *m = p->m;
    int64_t at = m->attr_count;
    for (int64_t i = 0; i < m->attr_count; i++) {
        if (same_attr(&m->attrs[i], a))
            return cxla_hlo_error(&p->lx, pos, "attribute '%s' is given twice", a->name);
        if (a->id != CXLA_ATTR_UNKNOWN && m->attrs[i].id > a->id && at == m->attr_count) at = i;
    }
    cxla_attr *n = cxla_arena_alloc_array(m->arena, (size_t)m->attr_count + 1, sizeof(*n));
    if (!n) return cxla_hlo_oom(&p->lx);
    if (at) memcpy(n, m->attrs, (size_t)at * sizeof(*n));
    n[at] = *a;
    if (m->attr_count > at)
        memcpy(n + at + 1, m->attrs + at, (size_t)(m->attr_count - at) * sizeof(*n));
    m->attrs = n;
    m->attr_count++;
    return true;
}

/* entry_computation_layout={(shape, ...)->shape} */
static bool parse_entry_layout(parser *p, cxla_attr *a) {
    cxla_hlo_lexer *lx = &p->lx;
    cxla_module *m = p->m;
    size_t start = cxla_hlo_skip(lx);
    cxla_shape *params = NULL;
    size_t count = 0, cap = 0;
    if (!cxla_hlo_expect(lx, '{', "to open entry_computation_layout") ||
        !cxla_hlo_expect(lx, '(', "before the parameter shapes"))
        return false;
    if (!cxla_hlo_accept(lx, ')')) {
        do {
            if (count == cap) {
                size_t ncap = cap ? cap * 2 : 8;
                cxla_shape *np = cxla_arena_alloc_array(m->arena, ncap, sizeof(*np));
                if (!np) return cxla_hlo_oom(lx);
                if (count) memcpy(np, params, count * sizeof(*np));
                params = np;
                cap = ncap;
            }
            if (!cxla_hlo_shape(lx, &params[count])) return false;
            count++;
        } while (cxla_hlo_accept(lx, ','));
        if (!cxla_hlo_expect(lx, ')', "after the parameter shapes")) return false;
    }
    if (!cxla_hlo_accept_str(lx, "->"))
        return cxla_hlo_error_found(lx, lx->pos, "expected '->' before the result shape");
    if (!cxla_hlo_shape(lx, &m->entry_result_shape)) return false;
    if (!cxla_hlo_expect(lx, '}', "to close entry_computation_layout")) return false;
    m->entry_param_count = (int64_t)count;
    m->entry_param_shapes = params;
    m->has_entry_layout = true;
    p->entry_layout_pos = start;
    a->v.s = cxla_arena_strndup(m->arena, lx->text + start, lx->pos - start);
    return a->v.s ? true : cxla_hlo_oom(lx);
}

/* XLA prints origin_recovery_table={...} followed by a newline (then the blank line after
 * the header); texts from other versions lack it. The value keeps that newline when the
 * text has it, so both kinds print back as they were. */
static bool keep_blank_line(parser *p, cxla_attr *a) {
    cxla_hlo_lexer *lx = &p->lx;
    int newlines = 0;
    size_t q = lx->pos;
    for (; q < lx->len && (lx->text[q] == '\n' || lx->text[q] == ' ' || lx->text[q] == '\r' ||
                           lx->text[q] == '\t');
         q++)
        newlines += lx->text[q] == '\n';
    if (newlines < 3 || (q < lx->len && lx->text[q] == ',')) return true;
    size_t n = strlen(a->v.s);
    char *s = cxla_arena_alloc(p->m->arena, n + 2);
    if (!s) return cxla_hlo_oom(lx);
    memcpy(s, a->v.s, n);
    memcpy(s + n, "\n", 2);
    a->v.s = s;
    return true;
}

static bool parse_header(parser *p) {
    cxla_hlo_lexer *lx = &p->lx;
    cxla_module *m = p->m;
    size_t q = cxla_hlo_skip(lx);
    const char *name;
    size_t len = cxla_hlo_name(lx, &name);
    if (!len) return cxla_hlo_error_found(lx, q, "expected the module name after HloModule");
    m->name = cxla_arena_strndup(m->arena, name, len);
    if (!m->name) return cxla_hlo_oom(lx);
    if (lx->pos < lx->len && lx->text[lx->pos] == ':') lx->pos++; /* "HloModule name:" (old) */
    while (cxla_hlo_accept(lx, ',')) {
        const char *an;
        size_t pos, alen = attr_name(p, &an, &pos);
        if (!alen) return false;
        cxla_attr a;
        cxla_attr_id id = cxla_hlo_lookup_attr(&p->names, an, alen);
        if (id == CXLA_ATTR_ENTRY_COMPUTATION_LAYOUT) {
            memset(&a, 0, sizeof(a));
            a.id = id;
            a.kind = CXLA_ATTR_KIND_RAW;
            a.name = cxla_attr_get_info(id)->name;
            if (m->has_entry_layout)
                return cxla_hlo_error(lx, pos, "attribute '%s' is given twice", a.name);
            if (!parse_entry_layout(p, &a)) return false;
        } else if (!parse_attr(p, an, alen, pos, &a, "the module")) {
            return false;
        }
        if (id == CXLA_ATTR_ORIGIN_RECOVERY_TABLE && !keep_blank_line(p, &a)) return false;
        if (id == CXLA_ATTR_REPLICA_COUNT || id == CXLA_ATTR_NUM_PARTITIONS) {
            if (a.v.i < 1)
                return cxla_hlo_error(lx, pos, "%s must be at least 1, not %" PRId64, a.name,
                                      a.v.i);
            *(id == CXLA_ATTR_REPLICA_COUNT ? &m->replica_count : &m->num_partitions) = a.v.i;
        }
        if (!module_set_attr(p, &a, pos)) return false;
    }
    return true;
}

/* The stack-frame tables XLA prints after the module header, each at most once. A word is
 * the start of one only when an entry number, the end of the text or another (unseen)
 * table follows it, so that a computation named like a table still parses as one and the
 * printed text parses back the same way. Returns the table's index, or -1. */
static const char *const stack_frame_tables[] = {"FileNames", "FunctionNames", "FileLocations",
                                                 "StackFrames"};

static int stack_frame_table_at(cxla_hlo_lexer *lx, unsigned seen) {
    size_t save = lx->pos;
    int found = -1;
    for (int i = 0; i < (int)CXLA_ARRAY_SIZE(stack_frame_tables) && found < 0; i++) {
        lx->pos = save;
        if ((seen & (1u << i)) || !cxla_hlo_accept_keyword(lx, stack_frame_tables[i])) continue;
        size_t q = cxla_hlo_skip(lx);
        if (q >= lx->len || (lx->text[q] >= '0' && lx->text[q] <= '9') ||
            stack_frame_table_at(lx, seen | 1u << i) >= 0)
            found = i;
    }
    lx->pos = save;
    return found;
}

/* FileNames / FunctionNames / FileLocations / StackFrames, kept verbatim. */
static bool parse_stack_frames(parser *p) {
    cxla_hlo_lexer *lx = &p->lx;
    size_t start = cxla_hlo_skip(lx), end = start;
    unsigned seen = 0;
    for (;;) {
        size_t q = cxla_hlo_skip(lx);
        int table = stack_frame_table_at(lx, seen);
        if (table >= 0) {
            seen |= 1u << table;
            lx->pos = q + strlen(stack_frame_tables[table]);
            end = lx->pos;
            continue;
        }
        if (q >= lx->len || lx->text[q] < '0' || lx->text[q] > '9') break;
        int64_t n;
        if (!cxla_hlo_int(lx, &n, "stack frame table entry number")) return false;
        size_t v = cxla_hlo_skip(lx);
        if (v >= lx->len || (lx->text[v] != '"' && lx->text[v] != '{'))
            return cxla_hlo_error_found(lx, v,
                                        "expected a string or {...} in the stack frame "
                                        "table");
        if (!cxla_hlo_skip_group(lx, &lx->pos)) return false;
        end = lx->pos;
    }
    p->m->stack_frames = cxla_arena_strndup(p->m->arena, lx->text + start, end - start);
    return p->m->stack_frames ? true : cxla_hlo_oom(lx);
}

static bool resolve_computation_refs(parser *p) {
    for (size_t i = 0; i < p->comp_ref_count; i++) {
        pending_ref *r = &p->comp_refs[i];
        cxla_attr *a = find_attr(r);
        for (int64_t k = 0; a && k < a->v.comps.count; k++) {
            const char *n = a->pending_names[k];
            cxla_computation *c = cxla_module_find_computation(p->m, n);
            if (!c)
                return cxla_hlo_error(&p->lx, r->pos,
                                      "computation '%s' (%s of '%s') is not "
                                      "defined",
                                      n, r->name, r->instr->name);
            a->v.comps.items[k] = c;
        }
    }
    return true;
}

/* Puts the computations callees-first, keeping the text order where it already is one
 * (as XLA prints it), the entry last. Fails on a recursive call. */
static bool order_computations(parser *p) {
    typedef struct frame {
        int64_t comp, instr, attr, item;
    } frame;
    cxla_module *m = p->m;
    int64_t n = m->comp_count;
    cxla_strmap index; /* name -> text position + 1 */
    cxla_strmap_init(&index, p->scratch);
    uint8_t *state = calloc((size_t)n, 1); /* 0 new, 1 on the stack, 2 placed */
    frame *stack = malloc((size_t)n * sizeof(*stack));
    comp_info *info = malloc((size_t)n * sizeof(*info));
    cxla_computation **order = cxla_arena_alloc_array(m->arena, (size_t)n, sizeof(*order));
    bool ok = state && stack && order && info;
    for (int64_t i = 0; ok && i < n; i++)
        ok = cxla_strmap_put(&index, m->comps[i]->name, strlen(m->comps[i]->name),
                             (void *)(uintptr_t)(i + 1));
    if (!ok) cxla_hlo_oom(&p->lx);
    int64_t count = 0, entry = -1;
    for (int64_t i = 0; i < n; i++)
        if (m->comps[i] == m->entry) entry = i;
    for (int64_t pass = 0; ok && pass <= n; pass++) {
        int64_t root = pass < n ? pass : entry;
        if (root < 0 || (pass < n && root == entry) || state[root]) continue;
        int64_t depth = 1;
        stack[0] = (frame){root, 0, 0, 0};
        state[root] = 1;
        while (ok && depth > 0) {
            frame *f = &stack[depth - 1];
            const cxla_computation *comp = m->comps[f->comp];
            int64_t next = -1;
            for (; next < 0 && f->instr < comp->instr_count; f->instr++, f->attr = 0) {
                const cxla_instr *in = comp->instrs[f->instr];
                for (; next < 0 && f->attr < in->attr_count; f->attr++, f->item = 0) {
                    const cxla_attr *at = &in->attrs[f->attr];
                    if (at->kind != CXLA_ATTR_KIND_COMPUTATION &&
                        at->kind != CXLA_ATTR_KIND_COMPUTATIONS)
                        continue;
                    while (next < 0 && f->item < at->v.comps.count) {
                        const cxla_computation *callee = at->v.comps.items[f->item++];
                        int64_t ci = (int64_t)(uintptr_t)cxla_strmap_get(&index, callee->name,
                                                                         strlen(callee->name)) -
                                     1;
                        if (ci < 0 || state[ci] == 2) continue;
                        if (state[ci] == 1) {
                            ok = cxla_hlo_error(&p->lx, p->comp_info[ci].pos,
                                                "computation '%s' calls itself (through '%s')",
                                                callee->name, comp->name);
                            break;
                        }
                        next = ci;
                    }
                    if (next >= 0 || !ok) break;
                }
                if (next >= 0 || !ok) break;
            }
            if (!ok) break;
            if (next >= 0) {
                state[next] = 1;
                stack[depth++] = (frame){next, 0, 0, 0};
            } else {
                state[f->comp] = 2;
                info[count] = p->comp_info[f->comp];
                order[count++] = m->comps[f->comp];
                depth--;
            }
        }
    }
    if (ok) {
        memcpy(m->comps, order, (size_t)n * sizeof(*order));
        memcpy(p->comp_info, info, (size_t)n * sizeof(*info));
    }
    free(state);
    free(stack);
    free(info);
    return ok;
}

/* Fills in the result shapes the text left out, callees first, operands first. */
static bool infer_shapes(parser *p) {
    cxla_hlo_lexer *lx = &p->lx;
    for (int64_t c = 0; c < p->m->comp_count; c++) {
        cxla_computation *comp = p->m->comps[c];
        for (int64_t i = 0; i < comp->instr_count; i++) {
            cxla_instr *in = comp->instrs[i];
            if (!(p->instr_info[in->id].flags & CXLA_HLO_SHAPE_OMITTED)) continue;
            size_t pos = p->instr_info[in->id].pos;
            if (cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_NEEDS_SHAPE)
                return cxla_hlo_error(lx, pos,
                                      "the shape of a %s instruction must be written "
                                      "('%s')",
                                      cxla_opcode_name(in->opcode), in->name);
            for (int64_t k = 0; k < in->operand_count; k++)
                if (in->operands[k] && in->operands[k]->shape.type == CXLA_TYPE_INVALID)
                    return cxla_hlo_error(lx, pos,
                                          "cannot infer the shape of '%s': its operand "
                                          "'%s' has no shape yet",
                                          in->name, in->operands[k]->name);
            cxla_shape shape;
            cxla_status st = cxla_infer_shape(in, p->m->arena, &shape);
            if (st) {
                cxla_status_free(st);
                st = NULL;
                return cxla_hlo_error(lx, pos, "cannot infer the shape of '%s' (%s): write it",
                                      in->name, cxla_opcode_name(in->opcode));
            }
            st = shape.type == CXLA_TYPE_INVALID ? cxla_error(CXLA_STATUS_INTERNAL, "no shape")
                                                 : cxla_shape_validate(&shape);
            if (st) {
                cxla_status_free(st);
                return cxla_hlo_error(lx, pos, "cannot infer the shape of '%s' (%s): write it",
                                      in->name, cxla_opcode_name(in->opcode));
            }
            if (!cxla_hlo_fill_layouts(p->m->arena, &shape)) return cxla_hlo_oom(lx);
            in->shape = shape;
        }
    }
    return true;
}

/* XLA's parser does not keep the shapes written on send, recv, send-done, recv-done and
 * outfeed: it builds each instruction from its operands (and recv from the data part of
 * its written shape), so that the rest of what is written there is never compared. The
 * same here: (data, u32[], token[]) for send and recv, token[] for send-done and outfeed,
 * (data, token[]) for recv-done. Operands that do not fit are left for the verifier. */
static bool rebuild_channel_shapes(parser *p) {
    cxla_arena *ar = p->m->arena;
    for (int64_t c = 0; c < p->m->comp_count; c++) {
        cxla_computation *comp = p->m->comps[c];
        for (int64_t i = 0; i < comp->instr_count; i++) {
            cxla_instr *in = comp->instrs[i];
            const cxla_shape *data = NULL;
            cxla_shape ctx, tok, shape;
            cxla_infer_make_token(&tok);
            memset(&ctx, 0, sizeof(ctx));
            ctx.type = CXLA_U32;
            switch (in->opcode) {
            case CXLA_OP_SEND:
                if (in->operand_count == 2 && in->operands[0]) data = &in->operands[0]->shape;
                break;
            case CXLA_OP_RECV:
                if (in->shape.type == CXLA_TUPLE && in->shape.tuple_count >= 1)
                    data = &in->shape.elements[0];
                break;
            case CXLA_OP_RECV_DONE: {
                const cxla_instr *op = in->operand_count == 1 ? in->operands[0] : NULL;
                if (op && op->shape.type == CXLA_TUPLE && op->shape.tuple_count >= 1)
                    data = &op->shape.elements[0];
                break;
            }
            case CXLA_OP_SEND_DONE:
            case CXLA_OP_OUTFEED: in->shape = tok; continue;
            default: continue;
            }
            if (!data || data->type == CXLA_TYPE_INVALID) continue;
            const cxla_shape *send_parts[3] = {data, &ctx, &tok};
            const cxla_shape *done_parts[2] = {data, &tok};
            cxla_status st = in->opcode == CXLA_OP_RECV_DONE
                                 ? cxla_infer_make_tuple(ar, 2, done_parts, &shape)
                                 : cxla_infer_make_tuple(ar, 3, send_parts, &shape);
            if (st) {
                cxla_status_free(st);
                return cxla_hlo_oom(&p->lx);
            }
            if (!cxla_hlo_fill_layouts(ar, &shape)) return cxla_hlo_oom(&p->lx);
            in->shape = shape;
        }
    }
    return true;
}

static bool shapes_disagree(parser *p, size_t pos, const char *format, const cxla_shape *a,
                            const cxla_shape *b, const char *a_name, const char *b_name) {
    char *sa = cxla_shape_to_string(a, 0), *sb = cxla_shape_to_string(b, 0);
    cxla_hlo_error(&p->lx, pos, format, a_name, sa ? sa : "?", b_name, sb ? sb : "?");
    free(sa);
    free(sb);
    return false;
}

/* Program shapes written in computation headers must match the body. */
static bool check_program_shapes(parser *p) {
    for (int64_t c = 0; c < p->m->comp_count; c++) {
        const comp_info *ci = &p->comp_info[c];
        const cxla_computation *comp = ci->comp;
        /* XLA's ParseComputation reads the parameter list and checks only the result
         * against the root: the parameters written there are ignored. */
        if (ci->param_count < 0) continue;
        if (comp->root->shape.type != CXLA_TYPE_INVALID &&
            !cxla_shape_compatible(ci->result, &comp->root->shape))
            return shapes_disagree(p, ci->pos,
                                   "Shape of computation %s, %s, is not compatible with that of "
                                   "its root instruction %s, %s",
                                   ci->result, &comp->root->shape, comp->name, comp->root->name);
    }
    return true;
}

/* Decodes or derives the entry layout and checks it against the entry computation. */
static bool entry_layout(parser *p) {
    cxla_module *m = p->m;
    const cxla_computation *e = m->entry;
    if (!m->has_entry_layout) {
        m->entry_param_count = e->param_count;
        m->entry_param_shapes = cxla_arena_alloc_array(
            m->arena, (size_t)(e->param_count ? e->param_count : 1), sizeof(cxla_shape));
        if (!m->entry_param_shapes) return cxla_hlo_oom(&p->lx);
        for (int64_t i = 0; i < e->param_count; i++) m->entry_param_shapes[i] = e->params[i]->shape;
        m->entry_result_shape = e->root->shape;
        return true;
    }
    size_t pos = p->entry_layout_pos;
    if (m->entry_param_count != e->param_count)
        return cxla_hlo_error(&p->lx, pos,
                              "entry_computation_layout has %" PRId64
                              " parameters but the entry computation '%s' has %" PRId64,
                              m->entry_param_count, e->name, e->param_count);
    for (int64_t i = 0; i < e->param_count; i++)
        if (!cxla_shape_compatible(&m->entry_param_shapes[i], &e->params[i]->shape))
            return shapes_disagree(p, pos,
                                   "entry_computation_layout's %s shape %s is not compatible "
                                   "with the entry parameter %s, %s",
                                   &m->entry_param_shapes[i], &e->params[i]->shape, "parameter",
                                   e->params[i]->name);
    if (!cxla_shape_compatible(&m->entry_result_shape, &e->root->shape))
        return shapes_disagree(p, pos,
                               "entry_computation_layout's %s shape %s is not compatible with "
                               "the entry root %s, %s",
                               &m->entry_result_shape, &e->root->shape, "result", e->root->name);
    return true;
}

/* Instruction names are unique in a module, but a text may write one name in several
 * computations (XLA's own dumps never do). XLA's parser keeps every computation's names as
 * written, and its module then renames a name already taken as it adds the computations in
 * text order: a later duplicate gets a ".N" suffix (NameUniquer). cxla does the same but
 * for the order: the entry computation's names are kept first (its parameter names are
 * what users see: input names, messages), then the other computations' in text order,
 * then the names the parser made up for nested instructions. A name already taken becomes
 * ROOT.N, ROOT being the name without a numeric ".N" suffix (as NameUniquer takes it) and
 * N the smallest number >= 1 giving a name no instruction of the module has: no name
 * written in the text changes unless it clashes, and a printed module parses back with
 * every name. The computation still finds a renamed instruction by its written name. */
static bool uniquify_names(parser *p) {
    if (!p->name_clashes) return true;
    cxla_module *m = p->m;
    cxla_strmap taken, next;
    cxla_strmap_init(&taken, p->scratch);
    cxla_strmap_init(&next, p->scratch); /* ROOT -> the N to try first */
    cxla_instr **pending = NULL;
    size_t np = 0, cap = 0;
    bool ok = true;
    for (int made_up = 0; ok && made_up < 2; made_up++)
        for (int64_t k = -1; ok && k < m->comp_count; k++) {
            cxla_computation *c = k < 0 ? m->entry : m->comps[k];
            if (k >= 0 && c == m->entry) continue;
            for (int64_t i = 0; ok && i < c->instr_count; i++) {
                cxla_instr *in = c->instrs[i];
                bool nested = (p->instr_info[in->id].flags & CXLA_HLO_NESTED) != 0;
                if (nested != (made_up == 1)) continue;
                size_t len = strlen(in->name);
                if (!cxla_strmap_get(&taken, in->name, len)) {
                    ok = cxla_strmap_put(&taken, in->name, len, in);
                } else if (GROW(pending, np, cap)) {
                    pending[np++] = in;
                } else {
                    ok = false;
                }
            }
        }
    for (size_t j = 0; ok && j < np; j++) {
        cxla_instr *in = pending[j];
        size_t len = strlen(in->name), root = len;
        size_t dot = len;
        while (dot > 0 && in->name[dot - 1] >= '0' && in->name[dot - 1] <= '9') dot--;
        if (dot > 1 && dot < len && in->name[dot - 1] == '.') root = dot - 1;
        uintptr_t start = (uintptr_t)cxla_strmap_get(&next, in->name, root);
        for (uint64_t k = start ? start : 1; ok; k++) {
            char suffix[24];
            int n = snprintf(suffix, sizeof(suffix), ".%" PRIu64, k);
            char *fresh = cxla_arena_alloc(m->arena, root + (size_t)n + 1);
            if (!fresh) {
                ok = false;
                break;
            }
            memcpy(fresh, in->name, root);
            memcpy(fresh + root, suffix, (size_t)n + 1);
            size_t flen = root + (size_t)n;
            if (cxla_strmap_get(&taken, fresh, flen)) continue;
            ok = cxla_strmap_put(&next, fresh, root, (void *)(uintptr_t)(k + 1)) &&
                 cxla_strmap_put(&taken, fresh, flen, in) &&
                 cxla_strmap_put(&in->parent->instr_by_name, fresh, flen, in);
            in->name = fresh;
            break;
        }
    }
    free(pending);
    return ok || cxla_hlo_oom(&p->lx);
}

static bool parse_module(parser *p) {
    cxla_hlo_lexer *lx = &p->lx;
    if (cxla_hlo_accept_keyword(lx, "HloModule") && !parse_header(p)) return false;
    cxla_hlo_skip(lx);
    if (stack_frame_table_at(&p->lx, 0) >= 0 && !parse_stack_frames(p)) return false;
    cxla_computation *entry = NULL;
    while (cxla_hlo_skip(lx) < lx->len)
        if (!parse_computation(p, &entry)) return false;
    if (p->m->comp_count == 0)
        return cxla_hlo_error(lx, lx->pos, "expected a computation (the text has none)");
    p->m->entry = entry ? entry : p->last_top;
    p->m->entry->is_entry = true;
    return uniquify_names(p) && resolve_computation_refs(p) && order_computations(p) &&
           cxla_hlo_check_module(lx, p->m, p->instr_info) && infer_shapes(p) &&
           rebuild_channel_shapes(p) && check_program_shapes(p) && entry_layout(p);
}

cxla_status cxla_hlo_parse(const char *text, size_t len, const char *filename,
                           cxla_module **out_module) {
    *out_module = NULL;
    if (!text && len) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "no HLO text (NULL)");
    if (!text) text = "";
    if (len == (size_t)-1) len = strlen(text);
    /* A binary HloModuleProto (.pb) is known by its content (proto_read.c). */
    if (cxla_hlo_looks_like_proto(text, len))
        return cxla_hlo_parse_proto(text, len, filename, out_module);
    cxla_module *m;
    CXLA_RETURN_IF_ERROR(cxla_module_create("module", &m));
    parser p;
    memset(&p, 0, sizeof(p));
    p.m = m;
    cxla_hlo_lexer_init(&p.lx, text, len, filename, m);
    p.scratch = cxla_arena_create();
    bool ok = p.scratch && cxla_hlo_names_init(&p.names, p.scratch);
    if (!ok) {
        cxla_hlo_oom(&p.lx);
    } else {
        cxla_strmap_init(&p.warned, p.scratch);
        cxla_strmap_init(&p.names_used, p.scratch);
        cxla_strmap_init(&p.name_suffix, p.scratch);
        /* HLO text has no NUL bytes; one would silently cut the names, strings and
         * tables that the module keeps as C strings (found by the fuzzer). */
        const char *nul = len ? memchr(text, '\0', len) : NULL;
        ok = nul ? cxla_hlo_error(&p.lx, (size_t)(nul - text), "a NUL byte in the text")
                 : parse_module(&p);
    }
    cxla_status st = p.lx.error;
    if (!ok && !st) st = cxla_error(CXLA_STATUS_INTERNAL, "HLO parse failed without a message");
    free(p.ops);
    free(p.ctrl);
    free(p.comp_refs);
    free(p.instr_info);
    free(p.comp_info);
    free(p.operand_buf);
    free(p.name_buf);
    cxla_arena_destroy(p.scratch);
    if (st) {
        cxla_module_destroy(m);
        return st;
    }
    *out_module = m;
    return NULL;
}

cxla_status cxla_hlo_parse_file(const char *path, cxla_module **out_module) {
    *out_module = NULL;
    char *text = NULL;
    size_t size = 0;
    CXLA_RETURN_IF_ERROR(cxla_read_file(path, &text, &size));
    cxla_status s = cxla_hlo_parse(text, size, path, out_module);
    free(text);
    return s;
}
