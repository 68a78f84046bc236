/* Dynamic shapes in the interpreter (docs/semantics.md, "Dynamic shapes").
 *
 * A value of a shape with bounded dynamic dimensions ("f32[<=10]") is a literal of the
 * bounds that carries its current sizes (XLA's DynamicPadder model: the storage of the
 * bound, the size beside it); a value of an unbounded dimension ("f32[?]") is a literal
 * of its actual size. Handlers know nothing of this. The driver sends an instruction here
 * when an operand is below its bounds or the instruction declares an unbounded result
 * dimension; then:
 *
 *   1. each array operand is cut to its current sizes (the padding is left out), and
 *      where an operand of a static shape lines up with a dynamic one (elementwise
 *      operands, reduce inputs, concatenated operands, dot's batch and contracting
 *      dimensions) the static one is cut to the dynamic size, as XLA's padder ignores
 *      its extra elements; two dynamic sizes that line up must be equal;
 *   2. the result shape for the cut operands comes from shape inference, or for
 *      reshape and broadcast from the rules of exec/dynamic.c, slice and
 *      dynamic-slice from the rules below;
 *   3. the handler runs on the cut operands, as on static values;
 *   4. the result goes back into the declared shape: a bounded dimension keeps its bound
 *      as storage and gets the computed size; an unbounded one is the computed size; a
 *      static one must come out at its size.
 *
 * So an operation on dynamic values gives what it gives on the arrays cut to their
 * sizes. Operations that pass values along whole (tuple, calls, while, conditional ...)
 * and those that read or set sizes themselves run directly.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exec/dynamic.h"
#include "interp/interp.h"
#include "interp/interp_gather.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* "f32[<=10](5)": a value's shape with its sizes, for messages (malloc'd). */
static char *describe(const cxla_literal *lit) {
    char *shape = cxla_shape_to_string(lit->shape, CXLA_SHAPE_PRINT_NO_LAYOUT);
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_puts(&b, shape ? shape : "?");
    free(shape);
    if (cxla_type_is_array(lit->shape->type) && lit->dyn_sizes) {
        cxla_strbuf_putc(&b, '(');
        for (int64_t i = 0; i < lit->shape->rank; i++)
            cxla_strbuf_printf(&b, "%s%" PRId64, i ? "," : "", lit->dyn_sizes[i]);
        cxla_strbuf_putc(&b, ')');
    }
    return cxla_strbuf_take(&b);
}

/* ---- one evaluation --------------------------------------------------------------- */

typedef struct dyn_call {
    interp_ctx *ctx;
    const cxla_instr *in;
    const cxla_literal *const *ops;
    int64_t n;
    cxla_arena *arena;
    int64_t (*region)[CXLA_MAX_RANK]; /* per array operand: the part to keep */
    cxla_instr tmp;                   /* |in| with the cut operands and the cut result */
    cxla_instr **tmp_ops;
    const cxla_literal **hops; /* what the handler gets */
    cxla_literal **owned;      /* cut copies to free */
} dyn_call;

/* Lines up the slots (operand ks[i], dimension ds[i]): the dynamic ones must agree, and
 * the static ones are cut to their size. */
static cxla_status align(dyn_call *c, const int64_t *ks, const int64_t *ds, int64_t count) {
    int64_t size = -1, from = -1, from_dim = -1;
    for (int64_t i = 0; i < count; i++) {
        int64_t k = ks[i], d = ds[i];
        if (!exec_shape_dim_dynamic(&c->in->operands[k]->shape, d)) continue;
        int64_t v = c->region[k][d];
        if (size < 0) {
            size = v;
            from = k;
            from_dim = d;
        } else if (v != size) {
            return interp_error(c->in, CXLA_STATUS_INVALID_ARGUMENT,
                                "dynamic sizes disagree: operand %" PRId64 " has size %" PRId64
                                " in dimension %" PRId64 " but operand %" PRId64
                                " has size %" PRId64 " in dimension %" PRId64,
                                k, v, d, from, size, from_dim);
        }
    }
    if (size < 0) return NULL;
    for (int64_t i = 0; i < count; i++)
        if (c->region[ks[i]][ds[i]] > size) c->region[ks[i]][ds[i]] = size;
    return NULL;
}

/* EXEC_DYN_SAME / EXEC_DYN_CONCAT: operands of the largest rank, dimension by dimension (all but
 * |skip|). */
static cxla_status align_same(dyn_call *c, int64_t skip) {
    int64_t rank = 0;
    for (int64_t k = 0; k < c->n; k++)
        if (cxla_type_is_array(c->ops[k]->shape->type) && c->ops[k]->shape->rank > rank)
            rank = c->ops[k]->shape->rank;
    size_t cap = (size_t)(c->n ? c->n : 1);
    int64_t *ks = cxla_arena_alloc_array(c->arena, cap, sizeof(int64_t));
    int64_t *ds = cxla_arena_alloc_array(c->arena, cap, sizeof(int64_t));
    if (!ks || !ds) return OOM();
    for (int64_t d = 0; d < rank; d++) {
        if (d == skip) continue;
        int64_t m = 0;
        for (int64_t k = 0; k < c->n; k++) {
            if (!cxla_type_is_array(c->ops[k]->shape->type) || c->ops[k]->shape->rank != rank)
                continue;
            ks[m] = k;
            ds[m] = d;
            m++;
        }
        CXLA_RETURN_IF_ERROR(align(c, ks, ds, m));
    }
    return NULL;
}

static cxla_status align_dot(dyn_call *c) {
    static const cxla_attr_id pairs[2][2] = {
        {CXLA_ATTR_LHS_BATCH_DIMS, CXLA_ATTR_RHS_BATCH_DIMS},
        {CXLA_ATTR_LHS_CONTRACTING_DIMS, CXLA_ATTR_RHS_CONTRACTING_DIMS},
    };
    for (int p = 0; p < 2; p++) {
        int64_t nl = 0, nr = 0;
        const int64_t *l = cxla_instr_ints(c->in, pairs[p][0], &nl);
        const int64_t *r = cxla_instr_ints(c->in, pairs[p][1], &nr);
        for (int64_t i = 0; i < nl && i < nr; i++) {
            if (l[i] < 0 || l[i] >= c->ops[0]->shape->rank || r[i] < 0 ||
                r[i] >= c->ops[1]->shape->rank)
                continue; /* shape inference reports it */
            int64_t ks[2] = {0, 1}, ds[2] = {l[i], r[i]};
            CXLA_RETURN_IF_ERROR(align(c, ks, ds, 2));
        }
    }
    return NULL;
}

/* A copy of |in|'s attributes in the arena, to change one of them. */
static cxla_attr *copy_attrs(dyn_call *c) {
    cxla_attr *a = cxla_arena_alloc_array(
        c->arena, (size_t)(c->in->attr_count ? c->in->attr_count : 1), sizeof(cxla_attr));
    if (a && c->in->attr_count)
        memcpy(a, c->in->attrs, (size_t)c->in->attr_count * sizeof(cxla_attr));
    return a;
}

static cxla_attr *find_attr(cxla_attr *attrs, int64_t count, cxla_attr_id id) {
    for (int64_t i = 0; i < count; i++)
        if (attrs[i].id == id) return &attrs[i];
    return NULL;
}

/* reshape: the output sizes for operand sizes |r|. Static output dimensions keep their
 * size; a single dynamic one takes what is left; several are solved group by group,
 * where a group is a run of operand and output dimensions whose bounds multiply to the
 * same product (one dynamic output dimension per group). */
/* The result shape of the cut operation, for the kinds not left to shape inference. */
static cxla_status rule_shape(dyn_call *c, exec_dyn_kind kind, int64_t *o) {
    const cxla_instr *in = c->in;
    const cxla_shape *ys = &in->shape;
    const cxla_literal *x = c->ops[0];
    const int64_t *r = c->region[0];
    if (!cxla_type_is_array(ys->type) || !cxla_type_is_array(x->shape->type))
        return interp_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                            "expects an array operand and result");
    switch (kind) {
    case EXEC_DYN_RESHAPE: return exec_dynamic_reshape_sizes(in, x->shape, r, o);
    case EXEC_DYN_BROADCAST: return exec_dynamic_broadcast_sizes(in, x->shape->rank, r, o);
    case EXEC_DYN_SLICE: {
        cxla_attr *attrs = copy_attrs(c);
        cxla_attr *a = attrs ? find_attr(attrs, in->attr_count, CXLA_ATTR_SLICE) : NULL;
        if (!attrs) return OOM();
        if (!a || a->kind != CXLA_ATTR_KIND_SLICE || a->v.slice.rank != x->shape->rank)
            return interp_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                                "needs a slice= range for each dimension");
        int64_t rank = a->v.slice.rank;
        cxla_slice_dim *sd =
            cxla_arena_alloc_array(c->arena, (size_t)(rank ? rank : 1), sizeof(cxla_slice_dim));
        if (!sd) return OOM();
        for (int64_t i = 0; i < rank; i++) {
            cxla_slice_dim s = a->v.slice.dims[i];
            int64_t limit = s.limit < r[i] ? s.limit : r[i];
            int64_t start = s.start < limit ? s.start : limit;
            if (s.stride < 1 || start < 0)
                return interp_error(in, CXLA_STATUS_INVALID_ARGUMENT, "malformed slice= range");
            sd[i] = (cxla_slice_dim){start, limit, s.stride};
            o[i] = (limit - start + s.stride - 1) / s.stride;
            if (!exec_shape_dim_dynamic(ys, i) && o[i] != ys->dims[i])
                return interp_error(in, CXLA_STATUS_OUT_OF_RANGE,
                                    "slice [%" PRId64 ":%" PRId64 ":%" PRId64
                                    "] of dimension %" PRId64
                                    " reads past its dynamic size %" PRId64,
                                    s.start, s.limit, s.stride, i, r[i]);
        }
        a->v.slice.dims = sd;
        c->tmp.attrs = attrs;
        return NULL;
    }
    case EXEC_DYN_DYNAMIC_SLICE: {
        cxla_attr *attrs = copy_attrs(c);
        cxla_attr *a =
            attrs ? find_attr(attrs, in->attr_count, CXLA_ATTR_DYNAMIC_SLICE_SIZES) : NULL;
        if (!attrs) return OOM();
        if (!a || a->kind != CXLA_ATTR_KIND_INTS || a->v.ints.count != x->shape->rank)
            return interp_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                                "needs dynamic_slice_sizes= for each dimension");
        int64_t rank = a->v.ints.count;
        int64_t *k = cxla_arena_alloc_array(c->arena, (size_t)(rank ? rank : 1), sizeof(int64_t));
        if (!k) return OOM();
        for (int64_t i = 0; i < rank; i++) {
            int64_t want = a->v.ints.values[i], bound = x->shape->dims[i];
            if (exec_shape_dim_dynamic(ys, i) && want == bound && r[i] < bound) {
                k[i] = r[i]; /* the whole dimension: it keeps the operand's size */
            } else if (want > r[i]) {
                return interp_error(in, CXLA_STATUS_OUT_OF_RANGE,
                                    "a slice of %" PRId64 " elements does not fit the dynamic "
                                    "size %" PRId64 " of dimension %" PRId64,
                                    want, r[i], i);
            } else {
                k[i] = want;
            }
            o[i] = k[i];
        }
        a->v.ints.values = k;
        c->tmp.attrs = attrs;
        return NULL;
    }
    default: return interp_error(in, CXLA_STATUS_INTERNAL, "no dynamic rule for this operation");
    }
}

/* Puts the handler's result |res| (owned) back into the declared shape |decl|. */
static cxla_status expand(const cxla_instr *in, const cxla_shape *decl, cxla_literal *res,
                          cxla_literal **out) {
    const cxla_shape *rs = res->shape;
    if (decl->type == CXLA_TUPLE) {
        int64_t count = decl->tuple_count;
        if (rs->type != CXLA_TUPLE || res->tuple_count != count) {
            cxla_literal_free(res);
            return interp_error(in, CXLA_STATUS_INTERNAL, "the result is not the declared tuple");
        }
        cxla_literal **elements = calloc((size_t)(count ? count : 1), sizeof(*elements));
        cxla_status s = elements ? NULL : OOM();
        for (int64_t i = 0; i < count && !s; i++) {
            cxla_literal *e = cxla_literal_tuple_take(res, i);
            s = e ? expand(in, &decl->elements[i], e, &elements[i]) : OOM();
        }
        cxla_literal_free(res);
        if (!s) s = cxla_literal_create_tuple(elements, count, out);
        if (s && elements)
            for (int64_t i = 0; i < count; i++) cxla_literal_free(elements[i]);
        free(elements);
        return s;
    }
    if (!cxla_type_is_array(decl->type)) {
        *out = res;
        return NULL;
    }
    cxla_status s = NULL;
    if (rs->type != decl->type || rs->rank != decl->rank)
        s = interp_error(in, CXLA_STATUS_INTERNAL,
                         "the result's type or rank is not the declared one");
    for (int64_t d = 0; d < decl->rank && !s; d++) {
        int64_t got = rs->dims[d], want = decl->dims[d];
        if (!exec_shape_dim_dynamic(decl, d) && got != want)
            s = interp_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                             "dimension %" PRId64 " of the result is static (%" PRId64
                             ") but has %" PRId64 " elements at the operands' dynamic sizes",
                             d, want, got);
        else if (exec_shape_dim_dynamic(decl, d) && want != CXLA_DIM_UNBOUNDED && got > want)
            s = interp_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                             "dimension %" PRId64 " of the result has %" PRId64
                             " elements, beyond its bound %" PRId64,
                             d, got, want);
    }
    if (!s && !decl->dynamic) {
        *out = res;
        return NULL;
    }
    if (!s) {
        cxla_shape target = *decl;
        target.layout = NULL; /* values inside the interpreter are row-major */
        s = cxla_literal_to_bounded(res, &target, out);
    }
    cxla_literal_free(res);
    return s;
}

static cxla_status unsupported(const cxla_instr *in, const cxla_literal *const *ops,
                               int64_t padded) {
    if (padded < 0)
        return interp_error(in, CXLA_STATUS_UNIMPLEMENTED,
                            "'%s' cannot compute the size of an unbounded ('?') result dimension",
                            cxla_opcode_name(in->opcode));
    char *d = cxla_type_is_array(ops[padded]->shape->type) ? describe(ops[padded]) : NULL;
    cxla_status s =
        interp_error(in, CXLA_STATUS_UNIMPLEMENTED,
                     "'%s' does not support an operand below its dynamic bounds "
                     "(operand %" PRId64 " is %s)",
                     cxla_opcode_name(in->opcode), padded, d ? d : "a tuple holding one");
    free(d);
    return s;
}

static cxla_status run(dyn_call *c, exec_dyn_kind kind, interp_op_fn fn, cxla_literal **out) {
    const cxla_instr *in = c->in;
    int64_t n = c->n;
    /* 1. The part of each operand to keep. */
    for (int64_t k = 0; k < n; k++) {
        const cxla_literal *x = c->ops[k];
        if (cxla_type_is_array(x->shape->type)) {
            if (x->shape->rank != in->operands[k]->shape.rank)
                return interp_error(in, CXLA_STATUS_INTERNAL,
                                    "operand %" PRId64 " does not have its declared rank", k);
            cxla_literal_sizes(x, c->region[k]);
        } else if (cxla_literal_is_padded(x)) {
            return unsupported(in, c->ops, k);
        }
    }
    if (kind == EXEC_DYN_SAME) CXLA_RETURN_IF_ERROR(align_same(c, -1));
    if (kind == EXEC_DYN_CONCAT) {
        int64_t nd = 0;
        const int64_t *d = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
        CXLA_RETURN_IF_ERROR(align_same(c, nd == 1 ? d[0] : -1));
    }
    if (kind == EXEC_DYN_DOT && n == 2) CXLA_RETURN_IF_ERROR(align_dot(c));
    /* 2. Cut operands: views of the whole storage or copies of a part, static shapes. */
    for (int64_t k = 0; k < n; k++) {
        const cxla_literal *x = c->ops[k];
        cxla_instr *t = cxla_arena_alloc(c->arena, sizeof(*t));
        if (!t) return OOM();
        *t = *in->operands[k];
        c->tmp_ops[k] = t;
        c->hops[k] = x;
        if (!cxla_type_is_array(x->shape->type)) continue;
        int64_t rank = x->shape->rank;
        int64_t *dims =
            cxla_arena_alloc_array(c->arena, (size_t)(rank ? rank : 1), sizeof(int64_t));
        cxla_shape *vs = cxla_arena_alloc(c->arena, sizeof(*vs));
        if (!dims || !vs) return OOM();
        bool whole = true;
        for (int64_t d = 0; d < rank; d++) {
            dims[d] = c->region[k][d];
            whole = whole && dims[d] == x->shape->dims[d];
        }
        *vs = (cxla_shape){.type = x->shape->type, .rank = rank, .dims = dims};
        t->shape = *vs;
        if (whole) {
            cxla_literal *view = cxla_arena_alloc(c->arena, sizeof(*view));
            if (!view) return OOM();
            *view = *x; /* borrows the storage; handlers never free operands */
            vs->layout = x->shape->layout;
            view->shape = vs;
            view->dyn_sizes = NULL;
            c->hops[k] = view;
        } else {
            CXLA_RETURN_IF_ERROR(cxla_literal_create_validated(vs, &c->owned[k]));
            cxla_literal_copy_region(x, c->owned[k], dims);
            c->hops[k] = c->owned[k];
        }
    }
    c->tmp = *in;
    c->tmp.operands = c->tmp_ops;
    /* 3. The result shape at these sizes. */
    if (kind == EXEC_DYN_RESHAPE || kind == EXEC_DYN_BROADCAST || kind == EXEC_DYN_SLICE ||
        kind == EXEC_DYN_DYNAMIC_SLICE) {
        int64_t rank = in->shape.rank;
        int64_t *o = cxla_arena_alloc_array(c->arena, (size_t)(rank ? rank : 1), sizeof(int64_t));
        if (!o) return OOM();
        CXLA_RETURN_IF_ERROR(rule_shape(c, kind, o));
        c->tmp.shape = (cxla_shape){.type = in->shape.type, .rank = rank, .dims = o};
    } else {
        cxla_shape rs;
        cxla_status s = cxla_infer_shape(&c->tmp, c->arena, &rs);
        if (s) {
            cxla_status e =
                interp_error(in, cxla_status_code_of(s), "at the operands' dynamic sizes: %s",
                             cxla_status_message(s));
            cxla_status_free(s);
            return e;
        }
        c->tmp.shape = rs;
    }
    /* 4. The operation itself, then its result in the declared shape. The handler may not
     * take operands over: it sees views and copies, not the frame's values. */
    interp_ctx *ctx = c->ctx;
    cxla_literal **saved = ctx->take_values;
    ctx->take_values = NULL;
    cxla_literal *res = NULL;
    cxla_status s = fn(ctx, &c->tmp, c->hops, &res);
    ctx->take_values = saved;
    if (s) return s;
    return expand(in, &in->shape, res, out);
}

/* Gives a result computed at full size the dynamic dimensions its declared shape has
 * (some handlers make static results): the value is the same, at its bounds. */
static cxla_status conform(const cxla_shape *decl, cxla_literal *res) {
    const cxla_shape *rs = res->shape;
    if (decl->type == CXLA_TUPLE && rs->type == CXLA_TUPLE) {
        cxla_status s = NULL;
        for (int64_t i = 0; i < decl->tuple_count && i < res->tuple_count && !s; i++)
            s = conform(&decl->elements[i], res->elements[i]);
        cxla_literal_tuple_refresh_shape(res);
        return s;
    }
    if (!cxla_type_is_array(decl->type) || !decl->dynamic || rs->type != decl->type ||
        rs->rank != decl->rank)
        return NULL;
    bool differ = false;
    for (int64_t d = 0; d < rs->rank; d++) {
        if (rs->dims[d] != decl->dims[d]) return NULL; /* not the declared storage */
        differ = differ || exec_shape_dim_dynamic(decl, d) != exec_shape_dim_dynamic(rs, d);
    }
    if (!differ) return NULL;
    cxla_shape flagged = *rs;
    flagged.dynamic = decl->dynamic;
    return cxla_literal_replace_shape(res, &flagged);
}

cxla_status interp_dynamic_eval(interp_ctx *ctx, const cxla_instr *instr,
                                const cxla_literal *const *operands, interp_op_fn fn,
                                cxla_literal **out) {
    exec_dyn_kind kind = exec_dynamic_kind(instr->opcode);
    if (kind == EXEC_DYN_PASS) return fn(ctx, instr, operands, out);
    int64_t n = instr->operand_count, padded = -1;
    for (int64_t k = 0; k < n && padded < 0; k++)
        if (cxla_literal_is_padded(operands[k])) padded = k;
    if (padded < 0 && !exec_shape_has_unbounded(&instr->shape)) {
        CXLA_RETURN_IF_ERROR(fn(ctx, instr, operands, out));
        cxla_status s = conform(&instr->shape, *out);
        if (s) {
            cxla_literal_free(*out);
            *out = NULL;
        }
        return s;
    }
    if (kind == EXEC_DYN_NONE) return unsupported(instr, operands, padded);
    dyn_call c = {.ctx = ctx, .in = instr, .ops = operands, .n = n};
    c.arena = cxla_arena_create();
    if (!c.arena) return OOM();
    size_t m = (size_t)(n ? n : 1);
    c.region = cxla_arena_alloc_array(c.arena, m, sizeof(*c.region));
    c.tmp_ops = cxla_arena_alloc_array(c.arena, m, sizeof(*c.tmp_ops));
    c.hops = cxla_arena_alloc_array(c.arena, m, sizeof(*c.hops));
    c.owned = calloc(m, sizeof(*c.owned));
    cxla_status s = c.region && c.tmp_ops && c.hops && c.owned ? run(&c, kind, fn, out) : OOM();
    for (int64_t k = 0; c.owned && k < n; k++) cxla_literal_free(c.owned[k]);
    free(c.owned);
    cxla_arena_destroy(c.arena);
    return s;
}

/* ---- entry arguments and set-dimension-size ---------------------------------------- */

cxla_status interp_dynamic_bind_argument(const cxla_shape *want, const cxla_literal *arg,
                                         int64_t index, cxla_literal **out) {
    const cxla_shape *got = arg->shape;
    if (want->type == CXLA_TUPLE) {
        if (got->type != CXLA_TUPLE || arg->tuple_count != want->tuple_count)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "argument %" PRId64 " must be a tuple of %" PRId64 " elements", index,
                              want->tuple_count);
        int64_t count = want->tuple_count;
        cxla_literal **elements = calloc((size_t)(count ? count : 1), sizeof(*elements));
        if (!elements) return OOM();
        cxla_status s = NULL;
        for (int64_t i = 0; i < count && !s; i++)
            s = interp_dynamic_bind_argument(&want->elements[i], arg->elements[i], index,
                                             &elements[i]);
        if (!s) s = cxla_literal_create_tuple(elements, count, out);
        if (s)
            for (int64_t i = 0; i < count; i++) cxla_literal_free(elements[i]);
        free(elements);
        return s;
    }
    if (!cxla_type_is_array(want->type)) {
        if (got->type != want->type)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "argument %" PRId64 " must be a %s",
                              index, cxla_type_name(want->type));
        return cxla_literal_clone(arg, out);
    }
    cxla_shape target = *want;
    target.layout = NULL; /* values inside the interpreter are row-major */
    cxla_status s = cxla_literal_to_bounded(arg, &target, out);
    if (!s) return NULL;
    char *w = cxla_shape_to_string(want, CXLA_SHAPE_PRINT_NO_LAYOUT);
    char *g = describe(arg);
    cxla_status e = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                               "argument %" PRId64 " (%s) does not fit parameter shape %s: %s",
                               index, g ? g : "?", w ? w : "?", cxla_status_message(s));
    free(w);
    free(g);
    cxla_status_free(s);
    return e;
}

/* set-dimension-size(x, size), dimensions={d}: x with the size of dimension d set. The
 * storage is copied whole (as XLA's evaluator copies the buffer), so growing a size again
 * shows the elements that were there. The size must lie in 0..bound (XLA does not check;
 * cxla reports it). An unbounded dimension is cut to the size. */
cxla_status interp_op_set_dimension_size(interp_ctx *ctx, const cxla_instr *instr,
                                         const cxla_literal *const *operands, cxla_literal **out) {
    (void)ctx;
    const cxla_literal *x = operands[0], *v = operands[1];
    if (!cxla_type_is_array(x->shape->type))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "the operand must be an array");
    if (!cxla_type_is_integer(v->shape->type) || v->shape->rank != 0)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the size must be an integer scalar");
    int64_t nd = 0, rank = x->shape->rank;
    const int64_t *dd = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd);
    if (nd != 1 || dd[0] < 0 || dd[0] >= rank)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "dimensions= must name one dimension of a rank %" PRId64 " operand",
                            rank);
    int64_t dim = dd[0], size = 0, bound = x->shape->dims[dim];
    interp_load_indices(v->shape->type, v->data, 1, &size);
    if (size < 0 || size > bound)
        return interp_error(instr, CXLA_STATUS_OUT_OF_RANGE,
                            "size %" PRId64 " of dimension %" PRId64
                            " is outside its bound 0..%" PRId64,
                            size, dim, bound);
    bool unbounded = instr->shape.rank == rank && exec_shape_dim_dynamic(&instr->shape, dim) &&
                     instr->shape.dims[dim] == CXLA_DIM_UNBOUNDED;
    int64_t dims[CXLA_MAX_RANK], region[CXLA_MAX_RANK], sizes[CXLA_MAX_RANK];
    uint8_t dyn[CXLA_MAX_RANK];
    cxla_literal_sizes(x, sizes);
    for (int64_t i = 0; i < rank; i++) {
        dims[i] = region[i] = x->shape->dims[i];
        dyn[i] = exec_shape_dim_dynamic(x->shape, i) || i == dim;
    }
    if (unbounded) { /* '?' values hold their actual size: cut */
        dims[dim] = region[dim] = size;
        dyn[dim] = 0;
    }
    sizes[dim] = size;
    cxla_shape rs = {.type = x->shape->type, .rank = rank, .dims = dims, .dynamic = dyn};
    cxla_literal *y;
    CXLA_RETURN_IF_ERROR(interp_new_array(&rs, &y));
    cxla_literal_copy_region(x, y, region);
    cxla_status s = NULL;
    for (int64_t i = 0; i < rank && !s; i++)
        if (sizes[i] < dims[i]) s = cxla_literal_set_dynamic_size(y, i, sizes[i]);
    if (s) {
        cxla_literal_free(y);
        return s;
    }
    *out = y;
    return NULL;
}
