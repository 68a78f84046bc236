/* The StableHLO -> HLO converter's driver: functions, scopes and values, regions (as
 * called computations, with the outer values they use passed in explicitly), the helpers
 * every op family uses, and the public entry cxla_stablehlo_parse. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/lexer.h"
#include "shape/shape_internal.h"
#include "stablehlo/convert_internal.h"

bool cv_fail(cv *c, const mlir_op *op, const char *format, ...) {
    if (c->err) return false;
    char msg[1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(msg, sizeof msg, format, ap);
    va_end(ap);
    if (op) {
        cxla_strbuf b;
        cxla_strbuf_init(&b);
        cv_describe_op(c, &b, op, NULL);
        c->err = mlir_error_at(c->mm, op->pos, "%s: %s", b.data ? b.data : op->name, msg);
        cxla_strbuf_free(&b);
    } else
        c->err = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s: %s",
                            c->mm->filename ? c->mm->filename : "<text>", msg);
    return false;
}

bool cv_status(cv *c, const mlir_op *op, cxla_status st) {
    if (!st) return true;
    bool r = cv_fail(c, op, "%s", cxla_status_message(st));
    cxla_status_free(st);
    return r;
}

static const char *unique_name(cv *c, const char *base) {
    char buf[96];
    snprintf(buf, sizeof buf, "%.60s.%" PRId64, base, ++c->counter);
    for (char *q = buf; *q; q++)
        if (!cxla_hlo_is_name_char(*q)) *q = '_';
    if (!cxla_hlo_is_name_start(buf[0])) buf[0] = '_';
    return cxla_arena_strndup(c->m->arena, buf, strlen(buf));
}

cxla_instr *cv_emit(cv *c, cv_scope *s, const mlir_op *op, cxla_opcode opcode,
                    const cxla_shape *shape, int64_t n, cxla_instr *const *operands) {
    if (c->err) return NULL;
    for (int64_t i = 0; i < n; i++)
        if (!operands[i]) return cv_fail(c, op, "missing operand"), NULL;
    cxla_shape sh;
    memset(&sh, 0, sizeof sh);
    if (shape) {
        cxla_status st = cxla_shape_copy_to_arena(c->m->arena, shape, &sh);
        if (st) return cv_status(c, op, st), NULL;
        if (!cxla_hlo_fill_layouts(c->m->arena, &sh)) return cv_fail(c, op, "out of memory"), NULL;
    }
    const char *name = unique_name(c, cxla_opcode_name(opcode));
    if (!name) return cv_fail(c, op, "out of memory"), NULL;
    cxla_instr *in = NULL;
    cxla_status st =
        cxla_computation_add_instr(s->comp, opcode, name, shape ? &sh : NULL, n, operands, &in);
    if (st) return cv_status(c, op, st), NULL;
    if (op) {
        in->line = op->line;
        in->column = op->column;
    }
    cv_note_instr(c, in, op);
    return in;
}

bool cv_finish_infer(cv *c, const mlir_op *op, cxla_instr *in) {
    if (!in) return false;
    cxla_shape sh;
    cxla_status st = cxla_infer_shape(in, c->m->arena, &sh);
    if (st) return cv_status(c, op, st);
    if (!cxla_hlo_fill_layouts(c->m->arena, &sh)) return cv_fail(c, op, "out of memory");
    in->shape = sh;
    return true;
}

cxla_instr *cv_emit_infer(cv *c, cv_scope *s, const mlir_op *op, cxla_opcode opcode, int64_t n,
                          cxla_instr *const *operands) {
    cxla_instr *in = cv_emit(c, s, op, opcode, NULL, n, operands);
    if (!in || !cv_finish_infer(c, op, in)) return NULL;
    return in;
}

bool cv_attr_text(cv *c, const mlir_op *op, cxla_instr *in, cxla_attr_id id, const char *text) {
    if (!in || c->err) return false;
    size_t n = strlen(text);
    char *copy = cxla_arena_strndup(c->m->arena, text, n);
    if (!copy) return cv_fail(c, op, "out of memory");
    cxla_hlo_lexer lx;
    cxla_hlo_lexer_init(&lx, copy, n, "converted", c->m);
    cxla_attr a;
    memset(&a, 0, sizeof a);
    a.id = id;
    a.name = cxla_attr_get_info(id)->name;
    a.kind = cxla_attr_get_info(id)->kind;
    if (!cxla_hlo_parse_attr_value(&lx, &a)) {
        bool r = cv_fail(c, op, "bad %s '%s': %s", a.name, text, cxla_status_message(lx.error));
        cxla_status_free(lx.error);
        return r;
    }
    cxla_status_free(lx.error);
    return cv_status(c, op, cxla_instr_set_attr(in, &a));
}

void cv_print_ints(cxla_strbuf *b, const int64_t *v, int64_t n) {
    cxla_strbuf_putc(b, '{');
    for (int64_t i = 0; i < n; i++) cxla_strbuf_printf(b, "%s%" PRId64, i ? "," : "", v[i]);
    cxla_strbuf_putc(b, '}');
}

bool cv_attr_ints(cv *c, const mlir_op *op, cxla_instr *in, cxla_attr_id id, const int64_t *v,
                  int64_t n) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cv_print_ints(&b, v, n);
    bool ok = cv_attr_text(c, op, in, id, b.data ? b.data : "{}");
    cxla_strbuf_free(&b);
    return ok;
}

bool cv_attr_int(cv *c, const mlir_op *op, cxla_instr *in, cxla_attr_id id, int64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    return cv_attr_text(c, op, in, id, buf);
}

bool cv_attr_comps(cv *c, const mlir_op *op, cxla_instr *in, cxla_attr_id id,
                   cxla_computation **comps, int64_t n) {
    if (!in || c->err) return false;
    cxla_attr a;
    memset(&a, 0, sizeof a);
    a.id = id;
    a.name = cxla_attr_get_info(id)->name;
    a.kind = cxla_attr_get_info(id)->kind;
    a.v.comps.count = n;
    a.v.comps.items = cxla_arena_alloc_array(c->m->arena, (size_t)(n ? n : 1), sizeof(*comps));
    if (!a.v.comps.items) return cv_fail(c, op, "out of memory");
    memcpy(a.v.comps.items, comps, sizeof(*comps) * (size_t)n);
    return cv_status(c, op, cxla_instr_set_attr(in, &a));
}

cxla_instr *cv_constant_scalar(cv *c, cv_scope *s, cxla_type type, double value) {
    cxla_literal *lit = NULL;
    cxla_status st = cxla_literal_create_scalar(type, value, &lit);
    if (!st) st = cxla_module_adopt_literal(c->m, lit);
    if (st) return cv_status(c, NULL, st), NULL;
    cxla_shape sh = {.type = type, .rank = 0};
    cxla_instr *in = cv_emit(c, s, NULL, CXLA_OP_CONSTANT, &sh, 0, NULL);
    if (in) in->literal = lit;
    return in;
}

cxla_instr *cv_gte(cv *c, cv_scope *s, cxla_instr *tuple, int64_t index) {
    if (!tuple) return NULL;
    if (tuple->shape.type != CXLA_TUPLE || index >= tuple->shape.tuple_count)
        return cv_fail(c, NULL, "internal: get-tuple-element of a non-tuple"), NULL;
    cxla_instr *in =
        cv_emit(c, s, NULL, CXLA_OP_GET_TUPLE_ELEMENT, &tuple->shape.elements[index], 1, &tuple);
    if (!in || !cv_attr_int(c, NULL, in, CXLA_ATTR_INDEX, index)) return NULL;
    return in;
}

cxla_instr *cv_tuple(cv *c, cv_scope *s, cxla_instr *const *items, int64_t n) {
    cxla_shape sh = {.type = CXLA_TUPLE, .tuple_count = n};
    sh.elements = cxla_arena_alloc_array(c->m->arena, (size_t)(n ? n : 1), sizeof(cxla_shape));
    if (!sh.elements) return cv_fail(c, NULL, "out of memory"), NULL;
    for (int64_t i = 0; i < n; i++) {
        if (!items[i]) return NULL;
        sh.elements[i] = items[i]->shape;
    }
    return cv_emit(c, s, NULL, CXLA_OP_TUPLE, &sh, n, items);
}

/* ---- values ------------------------------------------------------------------------- */

static cxla_instr *clone_constant(cv *c, cv_scope *s, const cxla_instr *k) {
    cxla_instr *in = cv_emit(c, s, NULL, CXLA_OP_CONSTANT, &k->shape, 0, NULL);
    if (in) in->literal = k->literal;
    return in;
}

cxla_instr *cv_lookup(cv *c, cv_scope *s, const mlir_op *op, const char *name) {
    if (c->err) return NULL;
    cxla_instr *in = cxla_strmap_get(&s->values, name, strlen(name));
    if (in) return in;
    /* An outer value: constants are copied in; anything else must have been captured. */
    for (cv_scope *o = s->parent; o; o = o->parent) {
        cxla_instr *outer = cxla_strmap_get(&o->values, name, strlen(name));
        if (!outer) continue;
        if (outer->opcode != CXLA_OP_CONSTANT)
            return cv_fail(c, op,
                           "the region uses the outer value %s, which is not a constant "
                           "(only while, case and if regions may use outer values)",
                           name),
                   NULL;
        in = clone_constant(c, s, outer);
        if (in && !cv_define(c, s, op, name, in)) return NULL;
        return in;
    }
    return cv_fail(c, op, "use of undefined value %s", name), NULL;
}

bool cv_define(cv *c, cv_scope *s, const mlir_op *op, const char *name, cxla_instr *in) {
    if (!in) return false;
    /* An op written without results (or with fewer than it makes) has no name to bind. */
    if (!name) return cv_fail(c, op, "the operation has fewer results than it produces");
    if (!cxla_strmap_put(&s->values, name, strlen(name), in))
        return cv_fail(c, op, "out of memory");
    return true;
}

bool cv_bind_results(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *in) {
    if (!in) return false;
    if (op->result_count == 1) {
        /* A single result that HLO returns as a 1-tuple (sort, reduce of one input never
         * do; calls of one-result functions do not either). */
        return cv_define(c, s, op, op->results[0], in);
    }
    if (op->result_count == 0) return true;
    if (in->shape.type != CXLA_TUPLE || in->shape.tuple_count != op->result_count)
        return cv_fail(c, op,
                       "internal: %" PRId64 " results but the HLO value is not a tuple of "
                       "that many",
                       op->result_count);
    for (int64_t i = 0; i < op->result_count; i++)
        if (!cv_define(c, s, op, op->results[i], cv_gte(c, s, in, i))) return false;
    return true;
}

bool cv_operands(cv *c, cv_scope *s, const mlir_op *op, cxla_instr **out, int64_t max,
                 int64_t *out_count) {
    if (op->operand_count > max) return cv_fail(c, op, "too many operands");
    /* The slots past the operands given are NULL, which cv_emit refuses ("missing operand")
     * for a converter that uses more than it got. */
    for (int64_t i = op->operand_count; i < max; i++) out[i] = NULL;
    for (int64_t i = 0; i < op->operand_count; i++) {
        out[i] = cv_lookup(c, s, op, op->operands[i]);
        if (!out[i]) return false;
    }
    if (out_count) *out_count = op->operand_count;
    return true;
}

cxla_instr *cv_one_operand(cv *c, cv_scope *s, const mlir_op *op) {
    if (op->operand_count != 1)
        return cv_fail(c, op, "expected 1 operand, got %" PRId64, op->operand_count), NULL;
    return cv_lookup(c, s, op, op->operands[0]);
}

/* ---- scopes and regions ------------------------------------------------------------- */

cv_scope *cv_new_scope(cv *c, cv_scope *parent, const char *comp_name, const mlir_op *op) {
    cv_scope *s = cxla_arena_alloc(c->m->arena, sizeof *s);
    if (!s) return cv_fail(c, op, "out of memory"), NULL;
    memset(s, 0, sizeof *s);
    s->parent = parent;
    cxla_strmap_init(&s->values, c->m->arena);
    const char *name = unique_name(c, comp_name);
    cxla_status st = name ? cxla_module_add_computation(c->m, name, &s->comp)
                          : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    if (st) return cv_status(c, op, st), NULL;
    cv_note_comp(c, s->comp->name, op);
    return s;
}

cxla_instr *cv_add_param(cv *c, cv_scope *s, const mlir_op *op, const cxla_shape *shape,
                         int64_t number) {
    cxla_instr *p = cv_emit(c, s, op, CXLA_OP_PARAMETER, shape, 0, NULL);
    if (p) p->parameter_number = number;
    return p;
}

/* Fills comp->params from the parameter instructions and sets the root. */
bool cv_finish_comp(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *root) {
    if (!root) return false;
    cxla_computation *comp = s->comp;
    int64_t n = 0;
    for (int64_t i = 0; i < comp->instr_count; i++)
        if (comp->instrs[i]->opcode == CXLA_OP_PARAMETER) n++;
    comp->param_count = n;
    comp->params = cxla_arena_alloc_array(c->m->arena, (size_t)(n ? n : 1), sizeof(cxla_instr *));
    if (!comp->params) return cv_fail(c, op, "out of memory");
    for (int64_t i = 0; i < comp->instr_count; i++) {
        cxla_instr *in = comp->instrs[i];
        if (in->opcode != CXLA_OP_PARAMETER) continue;
        if (in->parameter_number < 0 || in->parameter_number >= n)
            return cv_fail(c, op, "internal: parameter numbering");
        comp->params[in->parameter_number] = in;
    }
    comp->root = root;
    return true;
}

static bool block_ops(cv *c, cv_scope *s, const mlir_block *b, cxla_instr ***ret,
                      int64_t *ret_count);

/* Regions in regions and calls in calls, each level a few converter frames of tens of KiB
 * (the operand arrays): the parser allows regions 200 deep, a 64 KiB text a call chain of
 * hundreds of functions. */
enum { CV_MAX_BLOCK_DEPTH = 48 };

bool cv_block(cv *c, cv_scope *s, const mlir_block *b, cxla_instr ***ret, int64_t *ret_count) {
    *ret = NULL;
    *ret_count = 0;
    if (c->block_depth >= CV_MAX_BLOCK_DEPTH)
        return cv_fail(c, b->op_count ? b->ops[0] : NULL,
                       "regions and calls nested more than %d deep", CV_MAX_BLOCK_DEPTH);
    c->block_depth++;
    bool ok = block_ops(c, s, b, ret, ret_count);
    c->block_depth--;
    return ok;
}

static bool block_ops(cv *c, cv_scope *s, const mlir_block *b, cxla_instr ***ret,
                      int64_t *ret_count) {
    for (int64_t i = 0; i < b->op_count; i++) {
        const mlir_op *op = b->ops[i];
        if (strcmp(op->name, "func.return") == 0 || strcmp(op->name, "stablehlo.return") == 0 ||
            strcmp(op->name, "mhlo.return") == 0) {
            cxla_instr **vals = cxla_arena_alloc_array(
                c->m->arena, (size_t)(op->operand_count ? op->operand_count : 1), sizeof(*vals));
            if (!vals) return cv_fail(c, op, "out of memory");
            if (!cv_operands(c, s, op, vals, op->operand_count, NULL)) return false;
            *ret = vals;
            *ret_count = op->operand_count;
            return true;
        }
        /* Every failure should have said why; one that did not still names the op. */
        const mlir_op *outer = c->current_op;
        c->current_op = op;
        bool ok = cv_op(c, s, op);
        c->current_op = outer;
        if (!ok) return c->err ? false : cv_fail(c, op, "the operation could not be converted");
    }
    return true;
}

static cxla_instr *root_of(cv *c, cv_scope *s, const mlir_op *op, cxla_instr **vals, int64_t n) {
    if (n == 1) return vals[0];
    return cv_tuple(c, s, vals, n);
}

cxla_computation *cv_apply_region(cv *c, cv_scope *s, const mlir_op *op, const mlir_region *r,
                                  const char *what) {
    cv_scope *inner = cv_new_scope(c, s, what, op);
    if (!inner) return NULL;
    const mlir_block *b = r->block;
    for (int64_t i = 0; i < b->arg_count; i++)
        if (!cv_define(c, inner, op, b->arg_names[i],
                       cv_add_param(c, inner, op, &b->arg_types[i], i)))
            return NULL;
    cxla_instr **vals;
    int64_t n;
    if (!cv_block(c, inner, b, &vals, &n)) return NULL;
    if (!vals) return cv_fail(c, op, "the %s region has no stablehlo.return", what), NULL;
    if (!cv_finish_comp(c, inner, op, root_of(c, inner, op, vals, n))) return NULL;
    return inner->comp;
}

cxla_computation *cv_binary_computation(cv *c, const mlir_op *op, cxla_opcode opcode,
                                        cxla_type type, int64_t n) {
    cv_scope *inner = cv_new_scope(c, NULL, cxla_opcode_name(opcode), op);
    if (!inner) return NULL;
    cxla_shape sh = {.type = type, .rank = 0};
    cxla_instr **ps = calloc((size_t)(2 * n + 1), sizeof(*ps));
    cxla_instr **rs = calloc((size_t)(n + 1), sizeof(*rs));
    bool ok = ps && rs;
    for (int64_t i = 0; ok && i < 2 * n; i++) ok = (ps[i] = cv_add_param(c, inner, op, &sh, i));
    for (int64_t i = 0; ok && i < n; i++) {
        cxla_instr *pair[2] = {ps[i], ps[n + i]};
        ok = (rs[i] = cv_emit(c, inner, op, opcode, &sh, 2, pair));
    }
    if (ok) ok = cv_finish_comp(c, inner, op, root_of(c, inner, op, rs, n));
    free(ps);
    free(rs);
    if (!ok && !c->err) cv_fail(c, op, "out of memory");
    return ok ? inner->comp : NULL;
}

/* Names used in |b| (and nested regions) but defined neither there nor in |pre|. */
static void collect_free(cxla_strmap *defined, const mlir_block *b, const char ***names,
                         int64_t *count, int64_t *cap, cxla_strmap *seen) {
    for (int64_t i = 0; i < b->arg_count; i++)
        cxla_strmap_put(defined, b->arg_names[i], strlen(b->arg_names[i]), (void *)1);
    for (int64_t i = 0; i < b->op_count; i++) {
        const mlir_op *op = b->ops[i];
        for (int64_t k = 0; k < op->iter_count; k++)
            cxla_strmap_put(defined, op->iter_names[k], strlen(op->iter_names[k]), (void *)1);
        for (int64_t r = 0; r < op->region_count; r++)
            collect_free(defined, op->regions[r]->block, names, count, cap, seen);
        for (int64_t k = 0; k < op->operand_count; k++) {
            const char *nm = op->operands[k];
            size_t len = strlen(nm);
            if (cxla_strmap_get(defined, nm, len) || cxla_strmap_get(seen, nm, len)) continue;
            /* %x#1 is defined when %x#1 is (results are registered one by one). */
            cxla_strmap_put(seen, nm, len, (void *)1);
            if (*count == *cap) {
                *cap = *cap ? *cap * 2 : 8;
                const char **q = realloc(*names, sizeof(char *) * (size_t)*cap);
                if (!q) return;
                *names = q;
            }
            (*names)[(*count)++] = nm;
        }
        for (int64_t k = 0; k < op->result_count; k++)
            cxla_strmap_put(defined, op->results[k], strlen(op->results[k]), (void *)1);
    }
}

/* The outer values that |regions| use and that are not constants: what a while, case
 * or if passes in. */
static bool captures_of(cv *c, cv_scope *s, const mlir_op *op, const char *const *pre,
                        int64_t pre_count, const char ***out_names, cxla_instr ***out_instrs,
                        int64_t *out_count) {
    cxla_arena *tmp = cxla_arena_create();
    if (!tmp) return cv_fail(c, op, "out of memory");
    cxla_strmap defined, seen;
    cxla_strmap_init(&defined, tmp);
    cxla_strmap_init(&seen, tmp);
    for (int64_t i = 0; i < pre_count; i++)
        cxla_strmap_put(&defined, pre[i], strlen(pre[i]), (void *)1);
    const char **names = NULL;
    int64_t count = 0, cap = 0;
    for (int64_t r = 0; r < op->region_count; r++) {
        /* Sibling regions do not see each other's definitions. */
        cxla_strmap d2;
        cxla_strmap_init(&d2, tmp);
        for (int64_t i = 0; i < pre_count; i++)
            cxla_strmap_put(&d2, pre[i], strlen(pre[i]), (void *)1);
        collect_free(&d2, op->regions[r]->block, &names, &count, &cap, &seen);
    }
    cxla_arena_destroy(tmp);
    const char **kn = cxla_arena_alloc_array(c->m->arena, (size_t)(count + 1), sizeof(char *));
    cxla_instr **ki =
        cxla_arena_alloc_array(c->m->arena, (size_t)(count + 1), sizeof(cxla_instr *));
    if (!kn || !ki) {
        free(names);
        return cv_fail(c, op, "out of memory");
    }
    int64_t k = 0;
    for (int64_t i = 0; i < count; i++) {
        cxla_instr *v = cv_lookup(c, s, op, names[i]);
        if (!v) {
            free(names);
            return false;
        }
        if (v->opcode == CXLA_OP_CONSTANT) continue;
        kn[k] = names[i];
        ki[k++] = v;
    }
    free(names);
    *out_names = kn;
    *out_instrs = ki;
    *out_count = k;
    return true;
}

/* A scope for a region whose parameter is one tuple: |names| bound to its elements. */
static cv_scope *tuple_scope(cv *c, cv_scope *s, const mlir_op *op, const char *what,
                             const cxla_shape *tuple_shape, const char *const *names,
                             int64_t count) {
    cv_scope *inner = cv_new_scope(c, s, what, op);
    if (!inner) return NULL;
    cxla_instr *p = cv_add_param(c, inner, op, tuple_shape, 0);
    for (int64_t i = 0; i < count && p; i++)
        if (!cv_define(c, inner, op, names[i], cv_gte(c, inner, p, i))) return NULL;
    return p ? inner : NULL;
}

bool cv_while(cv *c, cv_scope *s, const mlir_op *op);
bool cv_while(cv *c, cv_scope *s, const mlir_op *op) {
    if (op->region_count != 2) return cv_fail(c, op, "expected cond and body regions");
    int64_t n = op->operand_count;
    const char **iter = NULL;
    if (op->iter_count == n) {
        iter = (const char **)op->iter_names;
    } else if (op->regions[0]->block->arg_count == n) {
        iter = op->regions[0]->block->arg_names;
    } else {
        return cv_fail(c, op, "cannot tell the loop's iteration arguments");
    }
    const char **cap_names;
    cxla_instr **cap;
    int64_t ncap;
    if (!captures_of(c, s, op, iter, n, &cap_names, &cap, &ncap)) return false;
    int64_t total = n + ncap;
    cxla_instr **init = calloc((size_t)(total + 1), sizeof(*init));
    const char **names = calloc((size_t)(total + 1), sizeof(*names));
    if (!init || !names) {
        free(init);
        free(names);
        return cv_fail(c, op, "out of memory");
    }
    bool ok = cv_operands(c, s, op, init, n, NULL);
    for (int64_t i = 0; i < ncap; i++) {
        init[n + i] = cap[i];
        names[n + i] = cap_names[i];
    }
    for (int64_t i = 0; i < n; i++) names[i] = iter[i];
    cxla_instr *state = ok ? cv_tuple(c, s, init, total) : NULL;
    cxla_computation *comps[2] = {NULL, NULL};
    for (int r = 0; r < 2 && state; r++) {
        const mlir_block *b = op->regions[r]->block;
        /* Generic form: the region's own argument names. */
        const char **rn = names;
        const char **own = NULL;
        if (b->arg_count == n && op->iter_count != n) {
            own = calloc((size_t)(total + 1), sizeof(*own));
            if (!own) break;
            for (int64_t i = 0; i < total; i++) own[i] = i < n ? b->arg_names[i] : names[i];
            rn = own;
        }
        cv_scope *inner = tuple_scope(c, s, op, r ? "body" : "cond", &state->shape, rn, total);
        free(own);
        if (!inner) break;
        cxla_instr **vals;
        int64_t nv;
        if (!cv_block(c, inner, b, &vals, &nv)) break;
        if (!vals) {
            cv_fail(c, op, "a while region has no stablehlo.return");
            break;
        }
        cxla_instr *root;
        if (r == 0) {
            if (nv != 1) {
                cv_fail(c, op, "the condition must return one value");
                break;
            }
            root = vals[0];
        } else {
            if (nv != n) {
                cv_fail(c, op, "the body returns %" PRId64 " values, expected %" PRId64, nv, n);
                break;
            }
            cxla_instr **outv = calloc((size_t)(total + 1), sizeof(*outv));
            if (!outv) break;
            for (int64_t i = 0; i < n; i++) outv[i] = vals[i];
            cxla_instr *p = inner->comp->instrs[0];
            for (int64_t i = 0; i < ncap; i++) outv[n + i] = cv_gte(c, inner, p, n + i);
            root = cv_tuple(c, inner, outv, total);
            free(outv);
        }
        if (!cv_finish_comp(c, inner, op, root)) break;
        comps[r] = inner->comp;
    }
    free(init);
    free(names);
    if (!comps[0] || !comps[1]) return c->err ? false : cv_fail(c, op, "out of memory");
    cxla_instr *w = cv_emit(c, s, op, CXLA_OP_WHILE, &state->shape, 1, &state);
    if (!cv_attr_comps(c, op, w, CXLA_ATTR_CONDITION, &comps[0], 1) ||
        !cv_attr_comps(c, op, w, CXLA_ATTR_BODY, &comps[1], 1))
        return false;
    for (int64_t i = 0; i < op->result_count && i < n; i++)
        if (!cv_define(c, s, op, op->results[i], cv_gte(c, s, w, i))) return false;
    return true;
}

/* case (index; N branches) and if (pred; true, false). */
bool cv_branches(cv *c, cv_scope *s, const mlir_op *op, bool is_if);
bool cv_branches(cv *c, cv_scope *s, const mlir_op *op, bool is_if) {
    if (op->operand_count != 1) return cv_fail(c, op, "expected one operand");
    if (is_if && op->region_count != 2) return cv_fail(c, op, "expected two regions");
    if (op->region_count < 1) return cv_fail(c, op, "expected branches");
    cxla_instr *index = cv_lookup(c, s, op, op->operands[0]);
    if (!index) return false;
    const char **cap_names;
    cxla_instr **cap;
    int64_t ncap;
    if (!captures_of(c, s, op, NULL, 0, &cap_names, &cap, &ncap)) return false;
    cxla_instr *arg = cv_tuple(c, s, cap, ncap);
    if (!arg) return false;
    int64_t nb = op->region_count;
    cxla_computation **comps = calloc((size_t)nb, sizeof(*comps));
    cxla_instr **operands = calloc((size_t)nb + 1, sizeof(*operands));
    if (!comps || !operands) {
        free(comps);
        free(operands);
        return cv_fail(c, op, "out of memory");
    }
    operands[0] = index;
    const cxla_shape *result_shape = NULL;
    bool ok = true;
    for (int64_t r = 0; r < nb && ok; r++) {
        operands[r + 1] = arg;
        cv_scope *inner = tuple_scope(c, s, op, "branch", &arg->shape, cap_names, ncap);
        cxla_instr **vals;
        int64_t nv;
        ok = inner && cv_block(c, inner, op->regions[r]->block, &vals, &nv);
        if (ok && !vals) ok = cv_fail(c, op, "a branch has no stablehlo.return");
        if (ok) ok = cv_finish_comp(c, inner, op, root_of(c, inner, op, vals, nv));
        if (ok) {
            comps[r] = inner->comp;
            result_shape = &inner->comp->root->shape;
        }
    }
    cxla_instr *cond = NULL;
    if (ok) cond = cv_emit(c, s, op, CXLA_OP_CONDITIONAL, result_shape, nb + 1, operands);
    if (cond) {
        if (is_if)
            ok = cv_attr_comps(c, op, cond, CXLA_ATTR_TRUE_COMPUTATION, &comps[0], 1) &&
                 cv_attr_comps(c, op, cond, CXLA_ATTR_FALSE_COMPUTATION, &comps[1], 1);
        else
            ok = cv_attr_comps(c, op, cond, CXLA_ATTR_BRANCH_COMPUTATIONS, comps, nb);
    }
    free(comps);
    free(operands);
    return ok && cond && cv_bind_results(c, s, op, cond);
}

/* ---- functions ---------------------------------------------------------------------- */

cxla_computation *cv_func(cv *c, const mlir_op *op, const char *name) {
    cxla_computation *done = cxla_strmap_get(&c->func_comps, name, strlen(name));
    if (done == (void *)1) return cv_fail(c, op, "recursive call of @%s", name), NULL;
    if (done) return done;
    const mlir_func *f = cxla_strmap_get(&c->funcs, name, strlen(name));
    if (!f) return cv_fail(c, op, "call of unknown function @%s", name), NULL;
    cxla_strmap_put(&c->func_comps, name, strlen(name), (void *)1);
    const mlir_func *saved = c->current_func;
    c->current_func = f;
    cv_scope *s = cv_new_scope(c, NULL, f->name, op);
    if (!s) return NULL;
    cv_note_comp(c, s->comp->name, NULL); /* the function's own, not a region of |op| */
    const mlir_op *outer = c->current_op;
    c->current_op = NULL; /* its parameters belong to the function, not to the call */
    const mlir_block *b = f->body;
    for (int64_t i = 0; i < b->arg_count; i++)
        if (!cv_define(c, s, op, b->arg_names[i], cv_add_param(c, s, op, &b->arg_types[i], i)))
            return NULL;
    for (int64_t i = 0; i < s->comp->instr_count; i++) cv_note_instr(c, s->comp->instrs[i], NULL);
    c->current_op = outer;
    cxla_instr **vals;
    int64_t n;
    if (!cv_block(c, s, b, &vals, &n)) return NULL;
    if (!vals) {
        mlir_op fake = {.name = "func.func", .pos = f->pos};
        return cv_fail(c, &fake, "@%s has no return", f->name), NULL;
    }
    /* What the function returns must be what its type says (static arrays: a dynamic or
     * tuple type is left to the verifier), else the entry's result differs unnoticed. */
    const mlir_op *ret_op = b->op_count ? b->ops[b->op_count - 1] : NULL;
    for (int64_t i = 0; ret_op && f->result_count == n && i < n; i++) {
        const cxla_shape *want = &f->result_types[i], *got = vals[i] ? &vals[i]->shape : NULL;
        if (!got || !cxla_type_is_array(want->type) || !cxla_type_is_array(got->type) ||
            want->dynamic || got->dynamic)
            continue;
        if (want->type != got->type || !cxla_shape_same_dims(want, got)) {
            char *w = cxla_shape_to_string(want, CXLA_SHAPE_PRINT_NO_LAYOUT);
            char *g = cxla_shape_to_string(got, CXLA_SHAPE_PRINT_NO_LAYOUT);
            cv_fail_types(c, ret_op, f, "result %" PRId64 " is %s, but @%s's type says %s", i,
                          g ? g : "?", f->name, w ? w : "?");
            free(w);
            free(g);
            return NULL;
        }
    }
    if (!cv_finish_comp(c, s, op, root_of(c, s, op, vals, n))) return NULL;
    c->current_func = saved;
    cxla_strmap_put(&c->func_comps, name, strlen(name), s->comp);
    return s->comp;
}

/* ---- the module --------------------------------------------------------------------- */

static const mlir_func *pick_entry(cv *c) {
    const mlir_func *pub = NULL;
    int64_t npub = 0;
    for (int64_t i = 0; i < c->mm->func_count; i++) {
        const mlir_func *f = c->mm->funcs[i];
        if (strcmp(f->name, "main") == 0) return f;
        if (f->is_public) {
            pub = f;
            npub++;
        }
    }
    if (npub == 1) return pub;
    if (npub == 0) return cv_fail(c, NULL, "no public function to run"), NULL;
    /* Several public functions and no @main: the reference tests put each test in its own
     * public function; run the last one, which calls the others if anything does. Only
     * functions nobody calls are candidates. */
    cxla_arena *tmp = cxla_arena_create();
    cxla_strmap called;
    cxla_strmap_init(&called, tmp);
    for (int64_t i = 0; i < c->mm->func_count; i++) {
        const mlir_block *b = c->mm->funcs[i]->body;
        for (int64_t k = 0; k < b->op_count; k++)
            if (b->ops[k]->callee)
                cxla_strmap_put(&called, b->ops[k]->callee, strlen(b->ops[k]->callee), (void *)1);
    }
    const mlir_func *pick = NULL;
    int64_t nroots = 0;
    for (int64_t i = 0; i < c->mm->func_count; i++) {
        const mlir_func *f = c->mm->funcs[i];
        if (f->is_public && !cxla_strmap_get(&called, f->name, strlen(f->name))) {
            pick = f;
            nroots++;
        }
    }
    cxla_arena_destroy(tmp);
    if (nroots == 1) return pick;
    if (nroots > 1) {
        /* Several test functions in one file: run them all (each takes nothing). */
        for (int64_t i = 0; i < c->mm->func_count; i++)
            if (c->mm->funcs[i]->is_public && c->mm->funcs[i]->body->arg_count) nroots = -1;
        if (nroots > 0) {
            c->run_all = true;
            return c->mm->funcs[0];
        }
    }
    cv_fail(c, NULL, "%" PRId64 " public functions and no @main: cannot tell which one to run",
            npub);
    return NULL;
}

bool cv_order_module(cv *c, cxla_computation *entry) {
    cxla_computation **order;
    int64_t count;
    cxla_status st = cxla_module_computation_post_order(c->m, &order, &count);
    if (st) return cv_status(c, NULL, st);
    /* Entry last. */
    int64_t k = 0;
    for (int64_t i = 0; i < count; i++)
        if (order[i] != entry) order[k++] = order[i];
    order[k++] = entry;
    c->m->comps = order;
    c->m->comp_count = k;
    c->m->comp_capacity = k;
    c->m->entry = entry;
    entry->is_entry = true;
    cxla_module *m = c->m;
    m->entry_param_count = entry->param_count;
    m->entry_param_shapes = cxla_arena_alloc_array(
        m->arena, (size_t)(entry->param_count ? entry->param_count : 1), sizeof(cxla_shape));
    if (!m->entry_param_shapes) return cv_fail(c, NULL, "out of memory");
    for (int64_t i = 0; i < entry->param_count; i++)
        m->entry_param_shapes[i] = entry->params[i]->shape;
    m->entry_result_shape = entry->root->shape;
    return true;
}

/* An entry that calls every public function nobody calls, in order. */
static cxla_computation *run_all(cv *c) {
    cxla_arena *tmp = cxla_arena_create();
    cxla_strmap called;
    cxla_strmap_init(&called, tmp);
    for (int64_t i = 0; i < c->mm->func_count; i++) {
        const mlir_block *b = c->mm->funcs[i]->body;
        for (int64_t k = 0; k < b->op_count; k++)
            if (b->ops[k]->callee)
                cxla_strmap_put(&called, b->ops[k]->callee, strlen(b->ops[k]->callee), (void *)1);
    }
    cv_scope *s = cv_new_scope(c, NULL, "main", NULL);
    cxla_instr **vals = calloc((size_t)c->mm->func_count + 1, sizeof(*vals));
    int64_t n = 0;
    for (int64_t i = 0; s && vals && i < c->mm->func_count && !c->err; i++) {
        const mlir_func *f = c->mm->funcs[i];
        if (!f->is_public || cxla_strmap_get(&called, f->name, strlen(f->name))) continue;
        cxla_computation *comp = cv_func(c, NULL, f->name);
        if (!comp) break;
        cxla_instr *in = cv_emit(c, s, NULL, CXLA_OP_CALL, &comp->root->shape, 0, NULL);
        if (!cv_attr_comps(c, NULL, in, CXLA_ATTR_TO_APPLY, &comp, 1)) break;
        vals[n++] = in;
    }
    cxla_arena_destroy(tmp);
    cxla_computation *r = NULL;
    if (s && vals && !c->err && cv_finish_comp(c, s, NULL, cv_tuple(c, s, vals, n))) r = s->comp;
    free(vals);
    return r;
}

bool cxla_stablehlo_is_mlir_path(const char *path) {
    size_t n = path ? strlen(path) : 0;
    return n >= 5 && strcmp(path + n - 5, ".mlir") == 0;
}

bool cxla_stablehlo_looks_like_mlir(const char *text, size_t len) {
    size_t q = 0;
    for (;;) {
        while (q < len && (text[q] == ' ' || text[q] == '\t' || text[q] == '\n' || text[q] == '\r'))
            q++;
        if (q + 1 < len && text[q] == '/' && text[q + 1] == '/') {
            while (q < len && text[q] != '\n') q++;
            continue;
        }
        break;
    }
    static const char *const starts[] = {"module", "func.func", "#", "stablehlo."};
    for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
        size_t n = strlen(starts[i]);
        if (len - q < n || memcmp(text + q, starts[i], n) != 0) continue;
        /* "module" must be the keyword, not a computation named "module_x". */
        if (i == 0 && q + n < len && text[q + n] != ' ' && text[q + n] != '@' &&
            text[q + n] != '{' && text[q + n] != '\n' && text[q + n] != '\t')
            continue;
        /* "module {" is also how a computation named "module" starts in HLO text; MLIR's
         * has no instruction "name = shape opcode(" on its next line: look for MLIR words. */
        if (i == 0) {
            size_t end = q + 4096 < len ? q + 4096 : len;
            bool mlir = false;
            for (size_t k = q; k + 4 < end && !mlir; k++)
                mlir = memcmp(text + k, "func", 4) == 0 || memcmp(text + k, "%arg", 4) == 0 ||
                       memcmp(text + k, "stab", 4) == 0;
            if (!mlir) continue;
        }
        return true;
    }
    return false;
}

cxla_status cxla_stablehlo_parse(const char *text, size_t len, const char *filename,
                                 cxla_module **out_module, cxla_stablehlo_info *info) {
    *out_module = NULL;
    if (info) memset(info, 0, sizeof *info);
    if (!text && len) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "no text (NULL)");
    mlir_module *mm = NULL;
    CXLA_RETURN_IF_ERROR(mlir_parse(text ? text : "", len, filename, &mm));
    cv c;
    memset(&c, 0, sizeof c);
    c.mm = mm;
    cxla_status st = cxla_module_create(mm->name ? mm->name : "stablehlo", &c.m);
    if (st) {
        mlir_module_free(mm);
        return st;
    }
    cv_register_check_target();
    cxla_strmap_init(&c.funcs, mm->arena);
    cxla_strmap_init(&c.func_comps, mm->arena);
    cxla_strmap_init(&c.instr_origins, mm->arena);
    cxla_strmap_init(&c.comp_origins, mm->arena);
    for (int64_t i = 0; i < mm->func_count; i++) {
        const mlir_func *f = mm->funcs[i];
        if (cxla_strmap_get(&c.funcs, f->name, strlen(f->name))) {
            mlir_op fake = {.name = "func.func", .pos = f->pos};
            cv_fail(&c, &fake, "@%s is defined twice", f->name);
            break;
        }
        cxla_strmap_put(&c.funcs, f->name, strlen(f->name), (void *)f);
    }
    const mlir_func *entry = c.err ? NULL : pick_entry(&c);
    cxla_computation *comp = NULL;
    if (entry && c.run_all) {
        comp = run_all(&c);
    } else if (entry) {
        comp = cv_func(&c, NULL, entry->name);
    }
    if (comp && !c.err) cv_order_module(&c, comp);
    if (!c.err) {
        c.m->replica_count = mm->num_replicas;
        c.m->num_partitions = mm->num_partitions;
        if (mm->num_replicas > 1 || mm->num_partitions > 1)
            c.skip_reason = "the program runs on several devices";
    }
    if (!c.err) {
        cxla_status v = cxla_verify_module(c.m);
        if (v) c.err = cv_verifier_error(&c, v);
    }
    if (c.err) {
        if (info) info->skip_reason = c.skip_reason;
        cxla_module_destroy(c.m);
        mlir_module_free(mm);
        return c.err;
    }
    if (info) {
        static char entry_name[128];
        snprintf(entry_name, sizeof entry_name, "%s", entry->name);
        info->check_count = c.check_count;
        info->skip_reason = c.skip_reason;
        info->entry_name = entry_name;
    }
    mlir_module_free(mm);
    *out_module = c.m;
    return NULL;
}
