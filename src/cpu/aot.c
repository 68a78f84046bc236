/* Ahead-of-time output (aot.h): the optimized module's sequential computations as C
 * functions over a scratch arena, with the emitter's kernels and constants.
 *
 * Each computation is scheduled in post order. Its values are "leaves" (arrays; a tuple is
 * a list of leaves, flattened depth first, so tuple and get-tuple-element copy nothing):
 * a parameter leaf is in[i], a constant leaf a static array, a root leaf that a step
 * computes is written straight into out[k], and every other leaf lives in the
 * computation's part of the scratch arena at an offset chosen by cpu_arena_assign over the
 * steps (kernel calls, while loops, conditionals, calls). A computation's callees get the
 * arena after its own part: scratch(c) = own(c) + max over callees of scratch(callee),
 * which is enough since a callee runs only while its caller's step runs (HLO has no
 * recursion). Leaves share buffers by the rules of the JIT's plan (share_buffers below:
 * in-place dynamic-update-slice and scatter, concatenates by pieces, a while state in one
 * set of buffers that its body, built for out == in, updates in place); the entry is built
 * a second time for donated arguments when the module has input_output_alias. The C of
 * each built computation is written by aot_emit.c. */
#include "cpu/aot.h"
#include "cpu/aot_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/emit.h"
#include "cpu/emit_internal.h"
#include "literal/literal_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

enum { DEFAULT_DATA_THRESHOLD = 4096 };

/* ---- helpers ---------------------------------------------------------------------------- */

cxla_status aot_no(const cxla_instr *in, const char *why) {
    return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                      "cxla compile: %s (%s) in computation %s%s has no ahead-of-time form: %s",
                      in->name, cxla_opcode_name(in->opcode), in->parent ? in->parent->name : "?",
                      in->parent && in->parent->is_entry ? " (the entry)" : "", why);
}

int64_t aot_leaf_count(const cxla_shape *s) {
    if (s->type != CXLA_TUPLE) return 1;
    int64_t n = 0;
    for (int64_t e = 0; e < s->tuple_count; e++) n += aot_leaf_count(&s->elements[e]);
    return n;
}

/* The leaf shapes of |s| in flattened order, from out[*n]. */
void aot_leaf_shapes(const cxla_shape *s, const cxla_shape **out, int64_t *n) {
    if (s->type != CXLA_TUPLE) {
        out[(*n)++] = s;
        return;
    }
    for (int64_t e = 0; e < s->tuple_count; e++) aot_leaf_shapes(&s->elements[e], out, n);
}

static bool leaf_shape_ok(const aot *a, const cxla_shape *s) {
    if (s->type == CXLA_TOKEN) return true; /* 0 bytes, never read */
    return cxla_type_is_array(s->type) && (cxla_shape_is_static(s) || aot_dyn_shape_ok(a, s)) &&
           cxla_layout_is_default(s) &&
           (cxla_type_storage(s->type) == 1 || cxla_type_storage(s->type) == 2 ||
            cxla_type_storage(s->type) == 4 || cxla_type_storage(s->type) == 8 ||
            s->type == CXLA_C128);
}

static cxla_status check_shape(const aot *a, const cxla_instr *in, const cxla_shape *s) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t e = 0; e < s->tuple_count; e++)
            CXLA_RETURN_IF_ERROR(check_shape(a, in, &s->elements[e]));
        return NULL;
    }
    if (leaf_shape_ok(a, s)) return NULL;
    char *t = cxla_shape_to_string(s, CXLA_SHAPE_PRINT_DEFAULT);
    /* Unbounded dynamic dimensions get their own message: bounded ones compile
     * (aot_dyn.c), these have no bounds to lay the arrays out at. */
    bool unbounded = false;
    for (int64_t d = 0; cxla_type_is_array(s->type) && d < s->rank; d++)
        unbounded = unbounded || s->dims[d] == CXLA_DIM_UNBOUNDED;
    const char *why = unbounded ? "it has unbounded dynamic dimensions; ahead-of-time code takes "
                                  "static and bounded (<=N) dimensions only (export the model with "
                                  "bounds or concrete sizes)"
                                : "it is not a row-major array of a supported type";
    cxla_status st =
        cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                   "cxla compile: %s (%s) in computation %s has no ahead-of-time form: its "
                   "value %s: %s",
                   in->name, cxla_opcode_name(in->opcode), in->parent ? in->parent->name : "?",
                   t ? t : "?", why);
    free(t);
    return st;
}

/* Whether |declared| has a static dimension where |value| (the same structure) has a
 * dynamic one. */
static bool hides_dynamic(const cxla_shape *declared, const cxla_shape *value) {
    if (declared->type == CXLA_TUPLE) {
        if (value->type != CXLA_TUPLE || value->tuple_count != declared->tuple_count) return false;
        for (int64_t e = 0; e < declared->tuple_count; e++)
            if (hides_dynamic(&declared->elements[e], &value->elements[e])) return true;
        return false;
    }
    if (!cxla_type_is_array(declared->type) || !cxla_type_is_array(value->type) ||
        declared->rank != value->rank || !value->dynamic)
        return false;
    for (int64_t d = 0; d < value->rank; d++)
        if (value->dynamic[d] && !(declared->dynamic && declared->dynamic[d])) return true;
    return false;
}

/* Whether the value of |in| goes nowhere but into its computation's root, through tuples
 * and get-tuple-elements (nothing reads it by its declared shape on the way). */
static bool only_into_root(const cxla_instr *in, int depth) {
    if (depth > 64 || !in->parent || (in != in->parent->root && in->user_count == 0)) return false;
    for (int64_t u = 0; u < in->user_count; u++) {
        const cxla_instr *x = in->users[u];
        if ((x->opcode != CXLA_OP_TUPLE && x->opcode != CXLA_OP_GET_TUPLE_ELEMENT) ||
            !only_into_root(x, depth + 1))
            return false;
    }
    return true;
}

/* A tuple or get-tuple-element that declares static dimensions for a dynamic operand's
 * value (shape inference lets it through) holds the dynamic value (docs/semantics.md,
 * "Dynamic shapes"). Its leaves are its operand's, which keep their sizes, so in the entry,
 * on the way to its root only, it may do it: the interface gives those result leaves the
 * value's dynamic dimensions (aot_iface.c), as the interpreter returns the value in its
 * dynamic form. Elsewhere a user or a caller would read the declared static shape where the
 * value is dynamic. */
static cxla_status check_passed_along(const cxla_instr *in, bool entry) {
    if (entry && only_into_root(in, 0)) return NULL;
    bool hides = false;
    if (in->opcode == CXLA_OP_TUPLE && in->shape.type == CXLA_TUPLE)
        for (int64_t k = 0; k < in->operand_count && k < in->shape.tuple_count; k++)
            hides = hides || hides_dynamic(&in->shape.elements[k], &in->operands[k]->shape);
    if (in->opcode == CXLA_OP_GET_TUPLE_ELEMENT && in->operand_count == 1) {
        int64_t index = 0;
        cxla_instr_int(in, CXLA_ATTR_INDEX, &index);
        const cxla_shape *ts = &in->operands[0]->shape;
        if (ts->type == CXLA_TUPLE && index >= 0 && index < ts->tuple_count)
            hides = hides_dynamic(&in->shape, &ts->elements[index]);
    }
    return hides ? aot_no(in, "it declares static dimensions for a dynamic value, which stays "
                              "dynamic (declare those dimensions bounded, <=N)")
                 : NULL;
}

int64_t aot_add_leaf(acomp *c, aleaf l) {
    if (c->leaf_count == c->leaf_cap) {
        int64_t cap = c->leaf_cap ? 2 * c->leaf_cap : 64;
        aleaf *n = realloc(c->leaves, (size_t)cap * sizeof(*n));
        if (!n) return -1;
        c->leaves = n;
        c->leaf_cap = cap;
    }
    l.first = l.last = -1;
    l.parent = c->leaf_count;
    l.members = 1;
    l.cfirst = l.clast = -1;
    l.sub_of = -1;
    c->leaves[c->leaf_count] = l;
    return c->leaf_count++;
}

int64_t aot_arena_leaf(acomp *c, const cxla_shape *s) {
    size_t size = 0;
    if (cxla_shape_byte_size(s, &size)) size = 0; /* checked shapes: cannot fail */
    return aot_add_leaf(c, (aleaf){.kind = L_ARENA, .shape = s, .size = size});
}

static cxla_status emit_const_array(aot *a, const cxla_instr *in, const cxla_literal *lit,
                                    int64_t k);

static const cxla_literal *literal_leaf(const cxla_literal *lit, int64_t *k) {
    if (cxla_literal_shape(lit)->type != CXLA_TUPLE) return (*k)-- == 0 ? lit : NULL;
    for (int64_t e = 0; e < lit->tuple_count; e++) {
        const cxla_literal *l = literal_leaf(lit->elements[e], k);
        if (l) return l;
    }
    return NULL;
}

const cxla_literal *aot_literal_leaf(const cxla_literal *lit, int64_t k) {
    return lit ? literal_leaf(lit, &k) : NULL;
}

/* The C text of leaf |l| of |c| as a pointer. A constant's array is written when it is
 * first named, so that no unused static array is left for -Wunused to find. */
void aot_put_leaf(aot *a, const acomp *c, int64_t l, cxla_strbuf *b) {
    const aleaf *x = &c->leaves[c->leaves[l].parent]; /* the class's buffer (place) */
    if (x->sub_of >= 0) {                             /* a piece of a concatenate's result */
        cxla_strbuf_puts(b, "((char *)");
        aot_put_leaf(a, c, x->sub_of, b);
        cxla_strbuf_printf(b, " + %zu)", x->sub_off);
        return;
    }
    if (x->kind == L_CONST && !a->err) {
        char key[64], *stored = NULL;
        snprintf(key, sizeof key, "%" PRId64 "_%" PRId64, x->index, x->sub);
        if (!cxla_strmap_get(&a->consts_done, key, strlen(key))) {
            int64_t k = x->sub;
            const cxla_literal *lit = literal_leaf(x->constant->literal, &k);
            if (!lit)
                a->err = cxla_error(CXLA_STATUS_INTERNAL, "%s: no leaf %" PRId64, x->constant->name,
                                    x->sub);
            else if (!(stored = cxla_arena_strndup(a->consts_done.arena, key, strlen(key))) ||
                     !cxla_strmap_put(&a->consts_done, stored, strlen(stored), (void *)1))
                a->err = OOM(); /* the map keeps the key's pointer: a copy, not |key| */
            else
                a->err = emit_const_array(a, x->constant, lit, x->sub);
        }
    }
    switch (x->kind) {
    case L_PARAM: /* a writable one is also an out[] buffer, written through this name */
        cxla_strbuf_printf(b, x->writable ? "((void *)in[%" PRId64 "])" : "in[%" PRId64 "]",
                           x->index);
        return;
    case L_OUT: cxla_strbuf_printf(b, "out[%" PRId64 "]", x->index); return;
    case L_CONST: cxla_strbuf_printf(b, "%s_c%" PRId64 "_%" PRId64, a->P, x->index, x->sub); return;
    case L_ARENA: cxla_strbuf_printf(b, "(scratch + %zu)", x->offset); return;
    }
}

/* "{e0, e1}" of leaves, or "{0}" for none. */
void aot_put_leaf_list(aot *a, const acomp *c, const int64_t *ls, int64_t n, cxla_strbuf *b) {
    cxla_strbuf_puts(b, "{");
    for (int64_t i = 0; i < n; i++) {
        if (i) cxla_strbuf_puts(b, ", ");
        aot_put_leaf(a, c, ls[i], b);
    }
    cxla_strbuf_puts(b, n ? "}" : "0}");
}

static const char *uint_of_size(size_t n) {
    return n == 1 ? "uint8_t" : n == 2 ? "uint16_t" : n == 4 ? "uint32_t" : "uint64_t";
}

/* ---- constants ---------------------------------------------------------------------------- */

/* One array of constant |in| (its leaf |k|: tuple constants have several) as a static
 * array P_c<id>_<k>, or an extern one defined in NAME_data.c when it is big. */
static cxla_status emit_const_array(aot *a, const cxla_instr *in, const cxla_literal *lit,
                                    int64_t k) {
    cxla_literal *relaid = NULL, *zeroed = NULL;
    if (!cxla_layout_is_default(lit->shape) || lit->packed) {
        CXLA_RETURN_IF_ERROR(cxla_literal_relayout(lit, NULL, &relaid));
        lit = relaid;
    }
    if (cxla_literal_is_padded(lit)) {
        /* A constant below its bounds (the parser's are at them; a folded one may not be):
         * zeros in its padding, as every value's here. Its sizes: aot_dyn_emit_begin. */
        cxla_status s = cxla_literal_to_bounded(lit, cxla_literal_shape(lit), &zeroed);
        if (s) {
            cxla_literal_free(relaid);
            return s;
        }
        lit = zeroed;
    }
    const cxla_shape *shape = cxla_literal_shape(lit);
    size_t es = cxla_type_storage(shape->type);
    int64_t n = cxla_literal_element_count(lit);
    if (cxla_type_is_complex(shape->type)) {
        /* Two words per element (real part first), each of its part's width: one 64-bit
         * word for a c64 would put the real part in the high half on a big-endian target. */
        es /= 2;
        n *= 2;
    }
    const unsigned char *p = cxla_literal_data_const(lit);
    bool big = (size_t)n * es > a->threshold;
    cxla_strbuf *b = big ? &a->data : &a->consts;
    const char *ut = uint_of_size(es);
    char *t = cxla_shape_to_string(shape, CXLA_SHAPE_PRINT_NO_LAYOUT);
    cxla_strbuf_printf(
        b, "/* %s: %s (element bits) */\n%sconst %s %s_c%" PRId64 "_%" PRId64 "[%" PRId64 "] = {",
        in->name, t ? t : "?", big ? "" : "static ", ut, a->P, in->id, k, n ? n : 1);
    free(t);
    if (big)
        cxla_strbuf_printf(&a->consts,
                           "extern const %s %s_c%" PRId64 "_%" PRId64 "[%" PRId64 "]; /* %s */\n",
                           ut, a->P, in->id, k, n ? n : 1, in->name);
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = 0;
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        const unsigned char *q = p + (size_t)i * es;
        switch (es) {
        case 1: memcpy(&u8, q, 1), v = u8; break;
        case 2: memcpy(&u16, q, 2), v = u16; break;
        case 4: memcpy(&u32, q, 4), v = u32; break;
        default: memcpy(&v, q, 8); break;
        }
        int per_line = es == 8 ? 6 : es == 4 ? 8 : 12;
        cxla_strbuf_puts(b, i % per_line == 0 ? "\n    " : " ");
        cxla_strbuf_printf(b, "0x%" PRIx64 "%s%s", v, es == 8 ? "u" : "", i + 1 < n ? "," : "");
    }
    cxla_strbuf_puts(b, n ? "\n};\n" : "0};\n");
    cxla_literal_free(relaid);
    cxla_literal_free(zeroed);
    return NULL;
}

/* ---- building a computation's schedule --------------------------------------------------------
 */

/* What a computation's function is built as: called with separate in[] and out[] (plain),
 * as a while body called with out == in (the state updated in place), or as the entry
 * with donated arguments (out[k] == in[arg] for input_output_alias's pairs). */
enum { ROLE_PLAIN, ROLE_BODY, ROLE_DONATED };

static cxla_status build(aot *a, const cxla_computation *comp, int role, acomp **out);

int64_t aot_comp_pos(const cxla_module *m, const cxla_computation *c) {
    for (int64_t i = 0; i < m->comp_count; i++)
        if (m->comps[i] == c) return i;
    return -1;
}

/* A new step of |c| reading the leaves |in| (|nin|), with |nout| new arena leaves for the
 * result shapes in |shapes| (written to *out_ls). */
cxla_status aot_add_step(acomp *c, step_kind kind, const cxla_instr *instr, const int64_t *in,
                         int64_t nin, const cxla_shape *const *shapes, int64_t nout,
                         int64_t **out_ls) {
    astep *s = &c->steps[c->step_count++];
    s->kind = kind;
    s->instr = instr;
    s->in_count = nin;
    s->out_count = nout;
    s->in = malloc((size_t)(nin ? nin : 1) * sizeof(int64_t));
    s->out = malloc((size_t)(nout ? nout : 1) * sizeof(int64_t));
    if (!s->in || !s->out) return OOM();
    if (nin) memcpy(s->in, in, (size_t)nin * sizeof(int64_t));
    for (int64_t i = 0; i < nout; i++) {
        s->out[i] = aot_arena_leaf(c, shapes[i]);
        if (s->out[i] < 0) return OOM();
        c->leaves[s->out[i]].from_step = true;
    }
    *out_ls = s->out;
    return NULL;
}

/* The callee |callee| must take |nin| leaves and give |nout|. */
static cxla_status check_callee(const cxla_instr *in, const acomp *callee, int64_t nin,
                                int64_t nout) {
    if (callee->param_leaves != nin || callee->root_count != nout)
        return aot_no(in, "the called computation's parameters or result do not match");
    return NULL;
}

/* The step of an instruction the emitter (or aot_dot.c) writes a kernel for, with its
 * work memory; the result leaves in *out_ls. Errors: UNIMPLEMENTED naming the instruction
 * and the emitter's reason. */
static cxla_status kernel_step(aot *a, acomp *c, const cxla_instr *user, const int64_t *ins,
                               int64_t nin, const cxla_shape *const *shapes, int64_t count,
                               aot_bounds bk, int64_t **out_ls) {
    cxla_status s = NULL;
    const char *why = NULL;
    int64_t *outs = NULL;
    char name[64];
    /* Dynamic shapes: the kernel of the instruction at its bounds (aot_dyn.c); the step
     * keeps the instruction itself, whose shapes say where the sizes matter. */
    const cxla_instr *in = bk != AB_STATIC && a->bounds_instr && a->bounds_instr[user->id]
                               ? a->bounds_instr[user->id]
                               : user;
    snprintf(name, sizeof name, "%s_k%" PRId64, a->P, in->id);
    bool kernel = cpu_can_emit(in);
    if (!kernel && !aot_dot_ok(in, &why)) {
        if (in->opcode == CXLA_OP_DOT) {
            s = aot_no(in, why);
            return s;
        }
        /* The emitter's own reason (for a fusion, the fused instruction it stops
         * at), and what compiles ahead of time. */
        cxla_strbuf scratch;
        cxla_strbuf_init(&scratch);
        cxla_status e = cpu_emit_kernel(in, name, &scratch);
        cxla_strbuf_free(&scratch);
        cxla_strbuf why_text;
        cxla_strbuf_init(&why_text);
        cxla_strbuf_printf(&why_text,
                           "%s%s(cxla compile takes elementwise, data-movement, reduce, "
                           "dot, fusions of those, while, conditional and call)",
                           e ? cxla_status_message(e) : "", e ? "; " : "");
        s = aot_no(in, why_text.data ? why_text.data : "no C kernel");
        cxla_strbuf_free(&why_text);
        cxla_status_free(e);
        return s;
    }
    if (count != (in->shape.type == CXLA_TUPLE ? in->shape.tuple_count : 1)) {
        s = aot_no(in, "a kernel's result must be an array or a flat tuple");
        return s;
    }
    /* A dynamic-update-slice's kernel is written when a step calls it (aot_emit_function): the
     * steps that update in place call none, and an unused static kernel would warn. */
    bool defer = kernel && in->opcode == CXLA_OP_DYNAMIC_UPDATE_SLICE;
    if (!a->emitted[in->id] && !defer) {
        a->emitted[in->id] = true;
        if (kernel) {
            cpu_kernel_info info;
            /* A kernel over dynamic shapes that reads the run-time sizes (aot_dyn.c,
             * AB_SORT and AB_SIZED: a sort, reduce, scatter or select-and-scatter) is the
             * JIT's kernel of that kind. */
            s = bk == AB_SORT    ? cpu_emit_sort_sized(in, name, &a->kernels, &info)
                : bk == AB_SIZED ? aot_dynlib_emit_sized(in, name, &a->kernels, &info)
                                 : cpu_emit_kernel_info(in, name, &a->kernels, &info);
            if (!s) a->scratch[in->id] = info.scratch;
            if (!s) a->kernel_in_place[in->id] = info.in_place;
        } else {
            s = aot_dot_emit(a, in, name);
        }
    }
    /* --blas onednn: a oneDNN call, the exact kernel (without work memory) its
     * fallback. */
    bool blas = !s && a->blas && bk == AB_STATIC && !a->scratch[in->id] && aot_blas_takes(in);
    if (blas) s = aot_blas_emit_desc(a, in);
    if (!s) s = aot_add_step(c, blas ? S_BLAS : S_KERNEL, user, ins, nin, shapes, count, &outs);
    if (!s) c->steps[c->step_count - 1].bounds = bk;
    /* Work memory: an arena leaf live during the step, passed after the results; then the
     * copies whose padding a reduce's init value or a dot's zeros fill (aot_dyn.c). */
    int64_t fills = s ? 0 : aot_fill_count(&c->steps[c->step_count - 1]);
    if (!s && (a->scratch[in->id] || fills)) {
        astep *st = &c->steps[c->step_count - 1];
        st->tmp = malloc((size_t)(1 + fills) * sizeof(int64_t));
        if (!st->tmp) {
            s = OOM();
            return s;
        }
        if (a->scratch[in->id])
            st->tmp[st->tmp_count++] =
                aot_add_leaf(c, (aleaf){.kind = L_ARENA, .size = a->scratch[in->id]});
        for (int64_t k = 0; k < fills && k < nin; k++) {
            size_t bytes = 0; /* the operand's at its bounds (a gather's, a scatter's: its
                               * indices) */
            int64_t op = bk == AB_GATHER ? 1 : bk == AB_SCATTER ? (in->operand_count - 1) / 2 : k;
            if (op >= in->operand_count || cxla_shape_byte_size(&in->operands[op]->shape, &bytes))
                bytes = 0;
            st->tmp[st->tmp_count++] = aot_add_leaf(c, (aleaf){.kind = L_ARENA, .size = bytes});
        }
        for (int64_t k = 0; k < st->tmp_count; k++)
            if (st->tmp[k] < 0) s = OOM();
    }
    *out_ls = outs;
    return s;
}

static cxla_status build_instrs(aot *a, acomp *c, const cxla_computation *comp, cxla_instr **order,
                                int64_t **lv, int64_t *lc) {
    const cxla_module *m = a->m;
    int64_t n = comp->instr_count;
    /* Parameter leaves: in[] holds every parameter's leaves, by parameter number. */
    int64_t *param_base = calloc((size_t)(comp->param_count + 1), sizeof(int64_t));
    if (!param_base) return OOM();
    for (int64_t p = 0; p < comp->param_count; p++)
        param_base[p + 1] = param_base[p] + aot_leaf_count(&comp->params[p]->shape);
    c->param_leaves = param_base[comp->param_count];
    c->param_leaf = malloc((size_t)(c->param_leaves ? c->param_leaves : 1) * sizeof(int64_t));
    if (!c->param_leaf) {
        free(param_base);
        return OOM();
    }
    for (int64_t k = 0; k < c->param_leaves; k++) c->param_leaf[k] = -1;
    cxla_strmap pos;
    cxla_strmap_init(&pos, m->arena);
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++)
        if (!cxla_strmap_put(&pos, order[i]->name, strlen(order[i]->name),
                             (void *)(intptr_t)(i + 1)))
            s = OOM();
#define POS(instr)                                                                                 \
    ((int64_t)(intptr_t)cxla_strmap_get(&pos, (instr)->name, strlen((instr)->name)) - 1)
    const cxla_shape **shapes = NULL;
    int64_t *ins = NULL;
    int64_t ins_cap = 0;
    for (int64_t i = 0; i < n && !s; i++) {
        const cxla_instr *in = order[i];
        s = check_shape(a, in, &in->shape);
        if (!s) s = check_passed_along(in, comp == m->entry);
        aot_bounds bk = AB_STATIC;
        if (!s) s = aot_dyn_check(a, in, comp == m->entry, &bk);
        if (s) break;
        int64_t count = aot_leaf_count(&in->shape);
        lc[i] = count;
        lv[i] = calloc((size_t)(count ? count : 1), sizeof(int64_t));
        free(shapes);
        shapes = calloc((size_t)(count ? count : 1), sizeof(*shapes));
        if (!lv[i] || !shapes) {
            s = OOM();
            break;
        }
        int64_t ns = 0;
        aot_leaf_shapes(&in->shape, shapes, &ns);
        /* The operands' leaves, concatenated. */
        int64_t nin = 0;
        for (int64_t k = 0; k < in->operand_count; k++) nin += lc[POS(in->operands[k])];
        if (nin + 1 > ins_cap) {
            free(ins);
            ins_cap = nin + 1;
            ins = malloc((size_t)ins_cap * sizeof(int64_t));
            if (!ins) {
                s = OOM();
                break;
            }
        }
        nin = 0;
        for (int64_t k = 0; k < in->operand_count; k++) {
            int64_t p = POS(in->operands[k]);
            for (int64_t j = 0; j < lc[p]; j++) ins[nin++] = lv[p][j];
        }
        int64_t *outs = NULL;
        if (a->bounds && aot_dyn_instr(in) &&
            (in->opcode == CXLA_OP_GET_DIMENSION_SIZE ||
             in->opcode == CXLA_OP_SET_DIMENSION_SIZE)) {
            s = aot_dyn_size_step(a, c, in, ins, nin, shapes, lv[i]);
            continue;
        }
        if (bk == AB_MOVE || bk == AB_SUM) { /* by the run-time sizes (aot_dmove.c) */
            s = aot_dmove_step(a, c, in, ins, nin, shapes, bk, lv[i]);
            continue;
        }
        if (aot_rng_takes(in)) { /* the stateful random operations (aot_rng.c) */
            s = aot_rng_build(a, c, in, ins, nin, shapes, count, lv[i]);
            continue;
        }
        if (aot_ops_takes(in)) { /* custom calls, host transfers, collectives (aot_ops.c) */
            s = aot_ops_build(a, c, in, ins, nin, shapes, count, lv[i]);
            continue;
        }
        switch (in->opcode) {
        case CXLA_OP_PARAMETER:
            for (int64_t j = 0; j < count && !s; j++) {
                int64_t at = param_base[in->parameter_number] + j;
                lv[i][j] =
                    aot_add_leaf(c, (aleaf){.kind = L_PARAM, .index = at, .shape = shapes[j]});
                if (lv[i][j] < 0) s = OOM();
                if (!s && at < c->param_leaves) c->param_leaf[at] = lv[i][j];
            }
            continue;
        case CXLA_OP_CONSTANT:
            if (!in->literal || in->literal_elided)
                s = aot_no(in, "the constant's value is elided in the module text");
            for (int64_t j = 0; j < count && !s; j++) {
                lv[i][j] = aot_add_leaf(c, (aleaf){.kind = L_CONST,
                                                   .index = in->id,
                                                   .sub = j,
                                                   .shape = shapes[j],
                                                   .constant = in});
                if (lv[i][j] < 0) s = OOM();
            }
            continue;
        case CXLA_OP_TUPLE:
        case CXLA_OP_OPTIMIZATION_BARRIER:
            memcpy(lv[i], ins, (size_t)count * sizeof(int64_t));
            continue;
        case CXLA_OP_DOMAIN:
            /* A sharding domain marker: its operand, as the interpreter's identity. */
            if (nin != count) {
                s = aot_no(in, "the operand does not match the result");
                break;
            }
            memcpy(lv[i], ins, (size_t)count * sizeof(int64_t));
            continue;
        case CXLA_OP_GET_TUPLE_ELEMENT: {
            int64_t index = 0, skip = 0;
            cxla_instr_int(in, CXLA_ATTR_INDEX, &index);
            const cxla_shape *ts = &in->operands[0]->shape;
            for (int64_t e = 0; e < index && e < ts->tuple_count; e++)
                skip += aot_leaf_count(&ts->elements[e]);
            memcpy(lv[i], lv[POS(in->operands[0])] + skip, (size_t)count * sizeof(int64_t));
            continue;
        }
        case CXLA_OP_WHILE: {
            acomp *cond = NULL, *body = NULL;
            s = build(a, cxla_instr_called(in, CXLA_ATTR_CONDITION), ROLE_PLAIN, &cond);
            if (!s) s = build(a, cxla_instr_called(in, CXLA_ATTR_BODY), ROLE_BODY, &body);
            if (!s) s = check_callee(in, cond, count, 1);
            if (!s) s = check_callee(in, body, count, count);
            if (!s) s = aot_add_step(c, S_WHILE, in, ins, nin, shapes, count, &outs);
            if (s) break;
            /* The state lives in the result leaves (share_buffers may give them the initial
             * values' buffers); the condition's pred in a temporary. */
            astep *st = &c->steps[c->step_count - 1];
            st->tmp = malloc(sizeof(int64_t));
            if (!st->tmp) {
                s = OOM();
                break;
            }
            st->tmp[0] = aot_add_leaf(c, (aleaf){.kind = L_ARENA, .size = 1});
            st->tmp_count = 1;
            if (st->tmp[0] < 0) s = OOM();
            break;
        }
        case CXLA_OP_CONDITIONAL: {
            cxla_computation *called[64];
            int64_t nb = cxla_instr_called_computations(in, called, 64);
            if (nb < 1 || nb > 64 || nb != in->operand_count - 1) {
                s = aot_no(in, "the branches do not match the operands");
                break;
            }
            for (int64_t k = 0; k < nb && !s; k++) {
                acomp *br = NULL;
                s = build(a, called[k], ROLE_PLAIN, &br);
                if (!s) s = check_callee(in, br, lc[POS(in->operands[k + 1])], count);
            }
            const cxla_shape *sel = &in->operands[0]->shape;
            if (!s &&
                (sel->rank != 0 || (sel->type != CXLA_PRED && !cxla_type_is_integer(sel->type))))
                s = aot_no(in, "the branch selector must be a pred or integer scalar");
            if (!s) s = aot_add_step(c, S_COND, in, ins, nin, shapes, count, &outs);
            break;
        }
        case CXLA_OP_CALL: {
            acomp *callee = NULL;
            s = build(a, cxla_instr_called(in, CXLA_ATTR_TO_APPLY), ROLE_PLAIN, &callee);
            if (!s) s = check_callee(in, callee, nin, count);
            if (!s) s = aot_add_step(c, S_CALL, in, ins, nin, shapes, count, &outs);
            break;
        }
        case CXLA_OP_ASYNC_START: {
            /* ((operands...), result, contexts...): the operands' leaves as they are, the
             * wrapped computation called at once (as the interpreter runs it in -start),
             * zeros for the contexts. */
            cxla_computation *wrapped = cxla_instr_called(in, CXLA_ATTR_CALLS);
            const cxla_shape *d = &in->shape;
            if (d->type != CXLA_TUPLE || d->tuple_count < 2 ||
                aot_leaf_count(&d->elements[0]) != nin) {
                s = aot_no(in, "the result must be ((operands), result, contexts...) of one "
                               "wrapped computation");
                break;
            }
            int64_t n1 = aot_leaf_count(&d->elements[1]);
            if (!wrapped) {
                /* The sugar (negate-start ...) has its wrapped computation by now
                 * (passes/async_desugar.c) unless its shapes do not line up. */
                s = aot_no(in, in->async_wrapped == CXLA_OP_COUNT
                                   ? "no wrapped computation (calls=)"
                                   : "async sugar whose state is not ((operands), result, "
                                     "contexts...) of its wrapped operation");
                break;
            }
            acomp *callee = NULL;
            s = build(a, wrapped, ROLE_PLAIN, &callee);
            if (!s) s = check_callee(in, callee, nin, n1);
            if (!s) s = aot_add_step(c, S_CALL, in, ins, nin, shapes + nin, n1, &outs);
            if (s) break;
            memcpy(lv[i], ins, (size_t)nin * sizeof(int64_t));
            if (outs) memcpy(lv[i] + nin, outs, (size_t)n1 * sizeof(int64_t));
            outs = NULL;
            if (count > nin + n1) {
                s = aot_add_step(c, S_ZERO, in, NULL, 0, shapes + nin + n1, count - nin - n1,
                                 &outs);
                if (!s)
                    memcpy(lv[i] + nin + n1, outs, (size_t)(count - nin - n1) * sizeof(int64_t));
                outs = NULL;
            }
            break;
        }
        case CXLA_OP_COPY_START: {
            /* (destination, source, context...): a copy of the operand, the operand itself,
             * zeros (the interpreter's). copy-done takes the destination. */
            const cxla_shape *d = &in->shape;
            if (d->type != CXLA_TUPLE || d->tuple_count < 2 ||
                aot_leaf_count(&d->elements[0]) != nin || aot_leaf_count(&d->elements[1]) != nin) {
                s = aot_no(in, "the result must be (destination, source, context)");
                break;
            }
            s = aot_add_step(c, S_COPY, in, ins, nin, shapes, nin, &outs);
            if (s) break;
            memcpy(lv[i], outs, (size_t)nin * sizeof(int64_t));
            memcpy(lv[i] + nin, ins, (size_t)nin * sizeof(int64_t));
            outs = NULL;
            if (count > 2 * nin) {
                s = aot_add_step(c, S_ZERO, in, NULL, 0, shapes + 2 * nin, count - 2 * nin, &outs);
                if (!s) memcpy(lv[i] + 2 * nin, outs, (size_t)(count - 2 * nin) * sizeof(int64_t));
                outs = NULL;
            }
            break;
        }
        case CXLA_OP_COPY_DONE:
            memcpy(lv[i], lv[POS(in->operands[0])], (size_t)count * sizeof(int64_t));
            continue;
        case CXLA_OP_FUSION:
            /* A fusion the emitter cannot write as one kernel (a dot inside, as in XLA's
             * optimized dumps, whose custom fusions the JIT hands to oneDNN) runs its fused
             * computation as a call: each instruction its own step, as the interpreter
             * evaluates it. */
            if (bk == AB_STATIC && !cpu_can_emit(in) && cxla_instr_called(in, CXLA_ATTR_CALLS)) {
                acomp *callee = NULL;
                s = build(a, cxla_instr_called(in, CXLA_ATTR_CALLS), ROLE_PLAIN, &callee);
                if (!s) s = check_callee(in, callee, nin, count);
                if (!s) s = aot_add_step(c, S_CALL, in, ins, nin, shapes, count, &outs);
                break;
            }
            s = kernel_step(a, c, in, ins, nin, shapes, count, bk, &outs);
            break;
        default: s = kernel_step(a, c, in, ins, nin, shapes, count, bk, &outs); break;
        }
        if (!s && outs) memcpy(lv[i], outs, (size_t)count * sizeof(int64_t));
    }
    if (!s) {
        int64_t r = POS(comp->root);
        c->root_count = lc[r];
        c->root = malloc((size_t)(lc[r] ? lc[r] : 1) * sizeof(int64_t));
        if (!c->root) s = OOM();
        if (!s && lc[r]) memcpy(c->root, lv[r], (size_t)lc[r] * sizeof(int64_t));
    }
#undef POS
    free(param_base);
    free(shapes);
    free(ins);
    return s;
}

/* ---- buffers: which leaves share one, and where each lives ----------------------------------
 *
 * The JIT's plan (cpu_steps.c) merges values into classes that share a buffer; the same
 * rules, per computation: a leaf may take over the buffer of a class that is dead after the
 * step that writes it (its last read is that step) and that this computation may overwrite:
 * a buffer of its own scratch, or a parameter leaf that is also an out[] buffer (a while
 * body's state, a donated argument), never the caller's other arguments or a constant. So
 * - a dynamic-update-slice writes its update into its operand's buffer (no copy of the rest),
 * - a scatter's results take its operands' buffers (cpu_kernel_info.in_place),
 * - a while loop's state takes its initial values' buffers,
 * - collective-permute's in-place form updates its output buffers that die there,
 * - in a function whose out[k] is in[p] (a while body, the donated entry), the result k is
 *   the parameter p itself (passed through: nothing to do), or is computed straight into it
 *   when p is dead before its first write, or is copied there at the end. */

static int64_t leaf_find(acomp *c, int64_t l) {
    while (c->leaves[l].parent != l) {
        c->leaves[l].parent = c->leaves[c->leaves[l].parent].parent;
        l = c->leaves[l].parent;
    }
    return l;
}

/* Merges the class of |x| into that of |into|. */
static void leaf_merge(acomp *c, int64_t x, int64_t into) {
    x = leaf_find(c, x);
    into = leaf_find(c, into);
    if (x == into) return;
    aleaf *a = &c->leaves[x], *b = &c->leaves[into];
    a->parent = into;
    b->members += a->members;
    /* -1: a parameter, there before the first step. */
    if (b->cfirst >= 0 && (a->cfirst < 0 || a->cfirst < b->cfirst)) b->cfirst = a->cfirst;
    if (a->clast > b->clast) b->clast = a->clast;
}

size_t aot_leaf_size(const aleaf *x) {
    size_t size = x->size;
    if (x->kind != L_ARENA && x->shape && cxla_shape_byte_size(x->shape, &size)) size = 0;
    return size;
}

/* Whether the class of |l| may be overwritten after step |s|: nothing reads it later and
 * it is this computation's to overwrite. */
static bool dies_at(acomp *c, int64_t l, int64_t s) {
    const aleaf *r = &c->leaves[leaf_find(c, l)];
    bool owned = (r->kind == L_ARENA && r->from_step) || (r->kind == L_PARAM && r->writable);
    return owned && r->clast <= s;
}

/* Whether leaf |l|'s class is some other leaf's of |ls| (|n|, skipping position |skip|). */
static bool class_among(acomp *c, int64_t l, const int64_t *ls, int64_t n, int64_t skip) {
    int64_t r = leaf_find(c, l);
    for (int64_t j = 0; j < n; j++)
        if (j != skip && leaf_find(c, ls[j]) == r) return true;
    return false;
}

/* A concatenate whose operands only lay one after the other (cpu_concat_pieces), each a
 * buffer of its own (one leaf, computed by a step, no piece yet) that dies there: each
 * becomes its piece of the result's buffer, so the steps that compute the operands write
 * the result and the concatenate is no code, as the JIT's plan does. */
static cxla_status concat_in_place(acomp *c, astep *st, int64_t s) {
    const cxla_instr *in = st->instr;
    if ((in->opcode != CXLA_OP_CONCATENATE && in->opcode != CXLA_OP_FUSION) || st->out_count != 1 ||
        st->tmp_count || st->bounds != AB_STATIC || st->in_count != in->operand_count ||
        in->operand_count < 1)
        return NULL;
    size_t *offs = malloc((size_t)in->operand_count * sizeof(size_t));
    if (!offs) return OOM();
    bool ok = cpu_concat_pieces(in, offs);
    for (int64_t k = 0; k < st->in_count && ok; k++) {
        const aleaf *x = &c->leaves[leaf_find(c, st->in[k])];
        ok = x->kind == L_ARENA && x->from_step && x->members == 1 && x->sub_of < 0 &&
             x->cfirst >= 0 && dies_at(c, st->in[k], s) &&
             !class_among(c, st->in[k], st->in, k, -1);
    }
    if (ok) {
        st->pieces = true;
        aleaf *w = &c->leaves[leaf_find(c, st->out[0])];
        for (int64_t k = 0; k < st->in_count; k++) {
            aleaf *x = &c->leaves[leaf_find(c, st->in[k])];
            x->sub_of = st->out[0];
            x->sub_off = offs[k];
            if (x->cfirst < w->cfirst) w->cfirst = x->cfirst; /* the whole lives from its pieces */
        }
    }
    free(offs);
    return NULL;
}

/* Result leaves of at least this many bytes that a kernel may write over the parameter it
 * is returned in (a while body's state; the JIT's ALIAS_MIN_BYTES): below, the copy costs
 * less than the kernel's second form. */
enum { ALIAS_MIN_BYTES = 1024 };

/* Step |s| of |c| when it is a kernel that may write its result (class |rc|) over the
 * parameter's buffer (class |pc|) that it reads through exactly one operand (*out_k), at
 * each element's own index (cpu_emit_alias_ok); else NULL. */
static astep *alias_step(aot *a, acomp *c, int64_t s, int64_t rc, int64_t pc, int64_t *out_k) {
    astep *st = &c->steps[s];
    const cxla_instr *in = st->instr;
    if (st->kind != S_KERNEL || st->bounds != AB_STATIC || st->in_place || st->pieces ||
        st->out_count != 1 || st->tmp_count != 0 || a->kernel_in_place[in->id] ||
        st->in_count != in->operand_count || leaf_find(c, st->out[0]) != rc ||
        aot_leaf_size(&c->leaves[pc]) < ALIAS_MIN_BYTES)
        return NULL;
    int64_t k = -1;
    for (int64_t j = 0; j < st->in_count; j++) {
        if (leaf_find(c, st->in[j]) != pc) continue;
        if (k >= 0) return NULL; /* read through two operands */
        k = j;
    }
    if (k < 0 || k >= 64 || !cpu_emit_alias_ok(in, k)) return NULL;
    *out_k = k;
    return st;
}

static cxla_status share_buffers(aot *a, acomp *c) {
    int64_t end = c->step_count; /* the final copies; the root is read there */
    for (int64_t s = 0; s < c->step_count; s++) {
        const astep *st = &c->steps[s];
        for (int64_t k = 0; k < st->out_count; k++) c->leaves[st->out[k]].first = s;
        for (int64_t k = 0; k < st->tmp_count; k++)
            c->leaves[st->tmp[k]].first = c->leaves[st->tmp[k]].last = s;
        for (int64_t k = 0; k < st->in_count; k++) c->leaves[st->in[k]].last = s;
    }
    for (int64_t k = 0; k < c->root_count; k++) c->leaves[c->root[k]].last = end;
    /* A parameter that out[] names but the computation never reads still needs its leaf. */
    for (int64_t k = 0; c->out_is_in && k < c->root_count; k++) {
        int64_t p = c->out_is_in[k];
        if (p < 0 || c->param_leaf[p] >= 0) continue;
        c->param_leaf[p] = aot_add_leaf(
            c, (aleaf){.kind = L_PARAM, .index = p, .shape = c->leaves[c->root[k]].shape});
        if (c->param_leaf[p] < 0) return OOM();
    }
    for (int64_t l = 0; l < c->leaf_count; l++) {
        aleaf *x = &c->leaves[l];
        x->cfirst = x->first;
        x->clast = x->last;
    }
    for (int64_t k = 0; c->out_is_in && k < c->root_count; k++)
        if (c->out_is_in[k] >= 0) c->leaves[c->param_leaf[c->out_is_in[k]]].writable = true;
    /* The steps, in order: each may take over the buffers of what dies there. */
    for (int64_t s = 0; s < c->step_count; s++) {
        astep *st = &c->steps[s];
        const cxla_instr *in = st->instr;
        if (st->kind == S_KERNEL && in->opcode == CXLA_OP_DYNAMIC_UPDATE_SLICE &&
            st->out_count == 1 && st->in_count >= 2 && st->in_count == in->operand_count &&
            in->operand_count == 2 + in->shape.rank && /* scalar starts, not the vector form */
            in->shape.type != CXLA_TUPLE && dies_at(c, st->in[0], s) &&
            !class_among(c, st->in[0], st->in, st->in_count, 0) &&
            aot_leaf_size(&c->leaves[st->in[0]]) == aot_leaf_size(&c->leaves[st->out[0]])) {
            st->in_place = true;
            leaf_merge(c, st->out[0], st->in[0]);
            continue;
        }
        if (st->kind == S_KERNEL) {
            cxla_status e = concat_in_place(c, st, s);
            if (e) return e;
            if (st->pieces) continue;
        }
        int64_t n = st->kind == S_KERNEL ? a->kernel_in_place[in->id] : 0;
        for (int64_t k = 0; k < n && k < st->in_count && k < st->out_count; k++)
            if (dies_at(c, st->in[k], s) && !class_among(c, st->in[k], st->in, st->in_count, k) &&
                aot_leaf_size(&c->leaves[st->in[k]]) == aot_leaf_size(&c->leaves[st->out[k]]))
                leaf_merge(c, st->out[k], st->in[k]);
        /* The in-place permute and ragged-all-to-all update an output buffer that dies (their
         * outputs follow their out_count inputs). */
        if (st->kind == S_PERMUTE || st->kind == S_RAGGED)
            for (int64_t k = 0; k < st->out_count && st->out_count + k < st->in_count; k++) {
                int64_t o = st->in[st->out_count + k];
                if (dies_at(c, o, s) &&
                    !class_among(c, o, st->in, st->in_count, st->out_count + k) &&
                    aot_leaf_size(&c->leaves[o]) == aot_leaf_size(&c->leaves[st->out[k]]))
                    leaf_merge(c, st->out[k], o);
            }
        if (st->kind == S_WHILE)
            for (int64_t k = 0; k < st->out_count && k < st->in_count; k++)
                if (aot_leaf_size(&c->leaves[st->out[k]]) > 0 && dies_at(c, st->in[k], s) &&
                    !class_among(c, st->in[k], st->in, k, -1))
                    leaf_merge(c, st->out[k], st->in[k]);
    }
    /* Results that are parameters' buffers: computed there when the parameter is dead
     * before the result's first write and nothing else shares either buffer, else copied at
     * the end (through a temporary when the source is another parameter's buffer). */
    if (c->out_is_in) {
        c->end_tmp = malloc((size_t)(c->root_count ? c->root_count : 1) * sizeof(int64_t));
        if (!c->end_tmp) return OOM();
    }
    for (int64_t k = 0; c->out_is_in && k < c->root_count; k++) {
        c->end_tmp[k] = -1;
        int64_t p = c->out_is_in[k];
        if (p < 0) continue;
        int64_t rc = leaf_find(c, c->root[k]), pc = leaf_find(c, c->param_leaf[p]);
        if (rc == pc) continue;
        const aleaf *r = &c->leaves[rc], *q = &c->leaves[pc];
        if (r->kind == L_ARENA && r->from_step && r->cfirst >= 0 && q->members == 1 &&
            q->clast < r->cfirst && !class_among(c, rc, c->root, c->root_count, k)) {
            leaf_merge(c, rc, pc);
            continue;
        }
        /* Or the kernel computing it is the parameter's last reader and may write over it
         * (the state rewritten where it lies, no copy at the end). */
        int64_t ak = -1;
        astep *as = r->kind == L_ARENA && r->from_step && r->cfirst >= 0 && r->members == 1 &&
                            q->members == 1 && q->clast == r->cfirst &&
                            !class_among(c, rc, c->root, c->root_count, k)
                        ? alias_step(a, c, r->cfirst, rc, pc, &ak)
                        : NULL;
        if (as) {
            as->aliased = true;
            as->alias = ak;
            leaf_merge(c, rc, pc);
            continue;
        }
        if (r->kind == L_PARAM && r->writable && aot_leaf_size(r) > 0) {
            c->end_tmp[k] = aot_arena_leaf(c, c->leaves[c->root[k]].shape);
            if (c->end_tmp[k] < 0) return OOM();
            aleaf *t = &c->leaves[c->end_tmp[k]];
            t->first = t->last = t->cfirst = t->clast = end;
        }
    }
    /* The other results a step computes are written straight into out[k] (the first
     * mention of a buffer in the root). */
    for (int64_t k = 0; k < c->root_count; k++) {
        if (c->out_is_in && c->out_is_in[k] >= 0) continue;
        aleaf *l = &c->leaves[leaf_find(c, c->root[k])];
        if (l->kind == L_ARENA) {
            l->kind = L_OUT;
            l->index = k;
        }
    }
    for (int64_t l = 0; l < c->leaf_count; l++) leaf_find(c, l);
    return NULL;
}

/* Offsets of the arena buffers (one per class); the callees' part after them. */
static cxla_status place(aot *a, acomp *c) {
    int64_t n = 0;
    cpu_arena_buffer *bufs = calloc((size_t)(c->leaf_count ? c->leaf_count : 1), sizeof(*bufs));
    int64_t *which = calloc((size_t)(c->leaf_count ? c->leaf_count : 1), sizeof(int64_t));
    cxla_status s = (!bufs || !which) ? OOM() : NULL;
    for (int64_t l = 0; l < c->leaf_count && !s; l++) {
        aleaf *x = &c->leaves[l];
        if (x->parent != l || x->kind != L_ARENA || x->cfirst < 0 || x->sub_of >= 0) continue;
        which[n] = l;
        bufs[n++] = (cpu_arena_buffer){.size = x->size,
                                       .first = x->cfirst,
                                       .last = x->clast > x->cfirst ? x->clast : x->cfirst};
    }
    if (!s) s = cpu_arena_assign(bufs, n, c->step_count + 1, &c->own);
    for (int64_t b = 0; b < n && !s; b++) c->leaves[which[b]].offset = bufs[b].offset;
    free(bufs);
    free(which);
    /* The callees' part. */
    size_t callee = 0;
    for (int64_t st = 0; st < c->step_count && !s; st++) {
        cxla_computation *called[64];
        const astep *x = &c->steps[st];
        step_kind sk = x->kind;
        int64_t nc = sk != S_WHILE && sk != S_COND && sk != S_CALL
                         ? 0
                         : cxla_instr_called_computations(x->instr, called, 64);
        for (int64_t k = 0; k < nc && k < 64; k++) {
            const acomp *y = &a->comps[aot_comp_pos(a->m, called[k])];
            if (y->total > callee) callee = y->total;
        }
        if (sk == S_WHILE) {
            const acomp *y =
                &a->bodies[aot_comp_pos(a->m, cxla_instr_called(x->instr, CXLA_ATTR_BODY))];
            if (y->total > callee) callee = y->total;
        }
    }
    c->total = c->own + callee;
    return s;
}

static cxla_status build(aot *a, const cxla_computation *comp, int role, acomp **out) {
    int64_t cp = comp ? aot_comp_pos(a->m, comp) : -1;
    if (cp < 0)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cxla compile: a missing computation");
    acomp *c = role == ROLE_BODY      ? &a->bodies[cp]
               : role == ROLE_DONATED ? &a->donated
                                      : &a->comps[cp];
    *out = c;
    if (c->built) return NULL;
    if (c->building)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cxla compile: computation %s calls itself",
                          comp->name);
    c->building = true;
    cxla_instr **order = NULL;
    CXLA_RETURN_IF_ERROR(cxla_computation_post_order_in(comp, a->m->arena, &order));
    int64_t n = comp->instr_count;
    int64_t **lv = calloc((size_t)(n ? n : 1), sizeof(*lv));
    int64_t *lc = calloc((size_t)(n ? n : 1), sizeof(*lc));
    /* At most two steps per instruction (an async start's call and its zero contexts). */
    c->steps = calloc((size_t)(n ? 2 * n : 1), sizeof(*c->steps));
    cxla_status s = (!lv || !lc || !c->steps) ? OOM() : NULL;
    if (!s) s = build_instrs(a, c, comp, order, lv, lc);
    for (int64_t i = 0; lv && i < n; i++) free(lv[i]);
    free(lv);
    free(lc);
    /* Which out[] buffers are in[] ones (a while body: all, leaf by leaf). */
    if (!s && role != ROLE_PLAIN) {
        c->out_is_in = malloc((size_t)(c->root_count ? c->root_count : 1) * sizeof(int64_t));
        if (!c->out_is_in) s = OOM();
        for (int64_t k = 0; !s && k < c->root_count; k++)
            c->out_is_in[k] = role == ROLE_BODY && k < c->param_leaves ? k : -1;
        for (int64_t k = 0; !s && role == ROLE_DONATED && k < a->alias_count; k++)
            if (a->aliases[k].output < c->root_count && a->aliases[k].arg < c->param_leaves)
                c->out_is_in[a->aliases[k].output] = a->aliases[k].arg;
    }
    if (!s) s = share_buffers(a, c);
    if (!s) s = place(a, c);
    if (!s && a->bounds) s = aot_dyn_place(c); /* every function passes sizes on */
    if (!s) {
        c->fn = a->fn_count++;
        s = aot_emit_function(a, comp, c);
    }
    c->built = !s;
    c->building = false;
    return s;
}

static void acomp_free(acomp *c) {
    for (int64_t s = 0; c->steps && s < c->step_count; s++) {
        free(c->steps[s].in);
        free(c->steps[s].out);
        free(c->steps[s].tmp);
    }
    free(c->steps);
    free(c->leaves);
    free(c->root);
    free(c->out_is_in);
    free(c->param_leaf);
    free(c->end_tmp);
    free(c->dyn_off);
}

static void aot_free(aot *a) {
    for (int64_t i = 0; a->comps && i < a->m->comp_count; i++) acomp_free(&a->comps[i]);
    for (int64_t i = 0; a->bodies && i < a->m->comp_count; i++) acomp_free(&a->bodies[i]);
    acomp_free(&a->donated);
    free(a->bodies);
    free(a->aliases);
    free(a->kernel_in_place);
    free(a->alias_emitted);
    free(a->comps);
    free(a->rng_instrs);
    free(a->rng_keys);
    free(a->emitted);
    free(a->scratch);
    free(a->bounds_instr);
    cxla_module_destroy(a->bounds);
    cxla_strbuf_free(&a->consts);
    cxla_strbuf_free(&a->data);
    cxla_strbuf_free(&a->kernels);
    cxla_strbuf_free(&a->funcs);
    cxla_strbuf_free(&a->targets);
}

/* The pairs of |module|'s input_output_alias whose argument and result leaves are row-major
 * at the interface (others are read from or written to copies in the scratch area, so the
 * caller's buffers are not the computation's), into a->aliases. */
static cxla_status usable_aliases(aot *a, const cxla_module *module) {
    cpu_io_alias *all = NULL;
    int64_t n = 0;
    CXLA_RETURN_IF_ERROR(cpu_io_aliases(module, &all, &n));
    const cxla_computation *e = module->entry;
    int64_t na = 0, nr = 0;
    for (int64_t p = 0; p < e->param_count; p++) na += aot_leaf_count(&e->params[p]->shape);
    const cxla_shape *rshape =
        module->has_entry_layout ? &module->entry_result_shape : &e->root->shape;
    nr = aot_leaf_count(rshape);
    const cxla_shape **as = calloc((size_t)(na ? na : 1), sizeof(*as));
    const cxla_shape **rs = calloc((size_t)(nr ? nr : 1), sizeof(*rs));
    if (!as || !rs) {
        free(as);
        free(rs);
        free(all);
        return OOM();
    }
    int64_t c = 0;
    for (int64_t p = 0; p < e->param_count; p++)
        aot_leaf_shapes(module->has_entry_layout && module->entry_param_shapes &&
                                p < module->entry_param_count
                            ? &module->entry_param_shapes[p]
                            : &e->params[p]->shape,
                        as, &c);
    c = 0;
    aot_leaf_shapes(rshape, rs, &c);
    int64_t kept = 0;
    for (int64_t k = 0; k < n; k++) {
        const cxla_shape *x = all[k].arg < na ? as[all[k].arg] : NULL;
        const cxla_shape *y = all[k].output < nr ? rs[all[k].output] : NULL;
        size_t size = 0;
        if (!x || !y || !cxla_layout_is_default(x) || !cxla_layout_is_default(y) ||
            cxla_shape_byte_size(x, &size) || size == 0)
            continue;
        all[kept++] = all[k];
    }
    free(as);
    free(rs);
    a->aliases = all;
    a->alias_count = kept;
    return NULL;
}

cxla_status cpu_aot_generate(const cxla_module *module, const cpu_aot_options *options,
                             const char *name, cxla_strbuf *out_header, cxla_strbuf *out_source,
                             cxla_strbuf *out_data) {
    cpu_aot_options defaults = {0};
    const cpu_aot_options *o = options ? options : &defaults;
    cxla_strbuf prefix, ignored;
    cxla_strbuf_init(&prefix);
    cxla_strbuf_init(&ignored);
    cpu_emit_sanitize(o->prefix && *o->prefix ? o->prefix : name, &prefix);
    cxla_module *m = NULL;
    cpu_compile_options co = {.no_passes = o->no_passes, .no_onednn_passes = true};
    cxla_status s = cpu_generate(module, &co, &m, &ignored, NULL);
    cxla_strbuf_free(&ignored);
    aot a;
    memset(&a, 0, sizeof a);
    a.m = m;
    a.P = prefix.data;
    a.threshold = o->data_threshold ? o->data_threshold : DEFAULT_DATA_THRESHOLD;
    a.blas = o->blas_onednn;
    a.user_module = module;
    cxla_strbuf_init(&a.consts);
    cxla_strbuf_init(&a.data);
    cxla_strbuf_init(&a.kernels);
    cxla_strbuf_init(&a.funcs);
    cxla_strbuf_init(&a.targets);
    if (m) cxla_strmap_init(&a.consts_done, m->arena);
    if (!s && (!m->entry || !a.P))
        s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cxla compile: module %s has no entry",
                       module->name);
    if (!s) {
        a.comps = calloc((size_t)m->comp_count, sizeof(*a.comps));
        a.bodies = calloc((size_t)m->comp_count, sizeof(*a.bodies));
        a.emitted = calloc((size_t)(m->next_id > 0 ? m->next_id : 1), sizeof(bool));
        a.scratch = calloc((size_t)(m->next_id > 0 ? m->next_id : 1), sizeof(size_t));
        a.kernel_in_place = calloc((size_t)(m->next_id > 0 ? m->next_id : 1), sizeof(int64_t));
        a.alias_emitted = calloc((size_t)(m->next_id > 0 ? m->next_id : 1), sizeof(uint64_t));
        if (!a.comps || !a.bodies || !a.emitted || !a.scratch || !a.kernel_in_place ||
            !a.alias_emitted)
            s = OOM();
    }
    acomp *entry = NULL, *donated = NULL;
    if (!s) s = aot_dyn_prepare(&a);
    if (!s) s = build(&a, m->entry, ROLE_PLAIN, &entry);
    /* input_output_alias: a second entry for results given their arguments' buffers. */
    if (!s) s = usable_aliases(&a, module);
    if (!s && a.alias_count) s = build(&a, m->entry, ROLE_DONATED, &donated);
    if (!s)
        s = aot_write_interface(&a, module, o, name, entry, donated, out_header, out_source,
                                out_data);
    aot_free(&a);
    cxla_module_destroy(m);
    cxla_strbuf_free(&prefix);
    return s;
}

cxla_status cpu_aot_write(const cxla_module *module, const cpu_aot_options *options,
                          const char *dir, const char *name) {
    cxla_strbuf h, c, d, path;
    cxla_strbuf_init(&h);
    cxla_strbuf_init(&c);
    cxla_strbuf_init(&d);
    cxla_strbuf_init(&path);
    cxla_status s = cpu_aot_generate(module, options, name, &h, &c, &d);
    const char *sep = dir && *dir ? "/" : "";
    const char *base = dir ? dir : "";
    struct {
        const char *suffix;
        cxla_strbuf *text;
    } files[] = {{".h", &h}, {".c", &c}, {"_data.c", &d}};
    for (int f = 0; f < 3 && !s; f++) {
        if (files[f].text->len == 0) continue;
        path.len = 0;
        cxla_strbuf_printf(&path, "%s%s%s%s", base, sep, name, files[f].suffix);
        if (path.failed) {
            s = OOM();
            break;
        }
        s = cxla_write_file(path.data, files[f].text->data, files[f].text->len);
    }
    cxla_strbuf_free(&h);
    cxla_strbuf_free(&c);
    cxla_strbuf_free(&d);
    cxla_strbuf_free(&path);
    return s;
}
