/* Service steps of the cpu backend (cpu_service.h) other than the collectives: custom
 * calls through the custom-call registry, infeed / outfeed / send / recv through the
 * host callbacks, and rng / rng-get-and-update-state over exec's generators. Each
 * follows the interpreter's handler (interp_custom_call.c, interp_host.c,
 * interp_rng.c) and gives its results bit for bit, on the arena's buffers.
 *
 * What keeps the interpreter's handler (the lookup returns NULL): the built-in TopK target
 * (the topk kernel runs it, every type the interpreter's topk takes: cpu_svc_topk_instr;
 * a comparator the interpreter rejects keeps the handler's error) and an identity target
 * that changes shapes (the handler's error). A foreign custom call whose operands,
 * operand_layout_constraints or result are not row-major gets relaid copies of its leaves
 * (call_foreign); host transfers hand the callbacks literals that view the arena (relaid
 * to the instruction's layouts when those are not row-major). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_service.h"
#include "exec/custom_call.h"
#include "exec/rng.h"
#include "interp/interp_host.h"
#include "interp/interp_reduce.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* ---- literals over the arena --------------------------------------------------------- */

/* A literal over |shape| whose arrays borrow the buffers ptrs[*next ...] (depth-first
 * leaves; freed with view_free, which leaves the buffers alone). */
static cxla_status view_tree(const cxla_shape *shape, void *const *ptrs, int64_t *next,
                             cxla_literal **out) {
    cxla_literal *v = calloc(1, sizeof(*v));
    if (!v) return OOM();
    *out = v;
    if (shape->type == CXLA_TUPLE) {
        int64_t n = shape->tuple_count;
        v->elements = calloc((size_t)(n ? n : 1), sizeof(*v->elements));
        if (!v->elements) return OOM();
        for (int64_t i = 0; i < n; i++) {
            v->tuple_count = i + 1;
            CXLA_RETURN_IF_ERROR(view_tree(&shape->elements[i], ptrs, next, &v->elements[i]));
        }
        return cxla_shape_clone(shape, &v->shape);
    }
    int64_t m2m[CXLA_MAX_RANK];
    cxla_layout layout = {.minor_to_major = m2m};
    cxla_shape with = *shape;
    if (cxla_type_is_array(shape->type)) {
        for (int64_t i = 0; i < shape->rank; i++) m2m[i] = shape->rank - 1 - i;
        with.layout = &layout;
    } else {
        with.layout = NULL;
    }
    void *data = ptrs[(*next)++];
    CXLA_RETURN_IF_ERROR(cxla_shape_clone(&with, &v->shape));
    if (cxla_type_is_array(shape->type)) {
        CXLA_RETURN_IF_ERROR(cxla_shape_byte_size(shape, &v->size));
        CXLA_RETURN_IF_ERROR(cxla_shape_element_count(shape, &v->count));
        v->data = v->size ? data : NULL;
    }
    return NULL;
}

static void view_free(cxla_literal *v) {
    if (!v) return;
    for (int64_t i = 0; i < v->tuple_count; i++) view_free(v->elements[i]);
    free(v->elements);
    cxla_shape_free(v->shape);
    free(v);
}

/* Copies the array leaves of |lit| (row-major) into out[*next ...]. */
static void copy_leaves(const cxla_literal *lit, void *const *out, int64_t *next) {
    if (lit->shape->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < lit->tuple_count; i++) copy_leaves(lit->elements[i], out, next);
        return;
    }
    void *dst = out[(*next)++];
    if (cxla_type_is_array(lit->shape->type) && lit->size && dst) memcpy(dst, lit->data, lit->size);
}

/* Zeros into the array leaves of |shape| at out[*next ...]. */
static void zero_leaves(const cxla_shape *shape, void *const *out, int64_t *next) {
    if (shape->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < shape->tuple_count; i++)
            zero_leaves(&shape->elements[i], out, next);
        return;
    }
    void *dst = out[(*next)++];
    size_t b = 0;
    if (cxla_type_is_array(shape->type) && !cxla_shape_byte_size(shape, &b) && b && dst)
        memset(dst, 0, b);
}

/* ---- custom calls ---------------------------------------------------------------------- */

/* The layout of |s| as host memory sees it (tiles and memory spaces ignored, as the
 * interpreter's custom calls do); NULL for row-major. */
static const cxla_layout *host_layout(const cxla_shape *s, cxla_layout *storage) {
    if (!s || !cxla_type_is_array(s->type) || !s->layout || cxla_layout_is_default(s)) return NULL;
    *storage = *s->layout;
    storage->tile_count = 0;
    storage->tiles = NULL;
    storage->memory_space = 0;
    return storage;
}

/* The buffers a foreign target sees: each leaf as a literal, a view of the arena's
 * row-major buffer or a copy relaid to the layout the call declares (owned, in |temps|). */
typedef struct call_leaves {
    cxla_literal **lits; /* by leaf; NULL for tokens */
    bool *owned;         /* by leaf: lits[i] is a relaid copy (else a view) */
    int64_t count;
} call_leaves;

static void call_leaves_free(call_leaves *l, int64_t n) {
    for (int64_t i = 0; l->lits && l->owned && i < n; i++) {
        if (l->owned[i])
            cxla_literal_free(l->lits[i]);
        else
            view_free(l->lits[i]);
    }
    free(l->lits);
    free(l->owned);
}

/* The operand leaves of |s| from buffers ptrs[*next ...] (row-major), each relaid to the
 * matching leaf of |want| (the operand_layout_constraints entry, else the operand's shape)
 * where that is not row-major, as the interpreter's add_leaves does. */
static cxla_status operand_leaves(const cxla_shape *s, const cxla_shape *want,
                                  const void *const *ptrs, int64_t *next, call_leaves *l) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            CXLA_RETURN_IF_ERROR(operand_leaves(
                &s->elements[i],
                want && want->type == CXLA_TUPLE && i < want->tuple_count ? &want->elements[i]
                                                                          : NULL,
                ptrs, next, l));
        return NULL;
    }
    int64_t at = l->count++;
    int64_t one = 0;
    void *data[1] = {(void *)ptrs[(*next)++]};
    if (!cxla_type_is_array(s->type)) return NULL;
    cxla_literal *v = NULL;
    cxla_status st = view_tree(s, data, &one, &v);
    cxla_layout storage;
    const cxla_layout *layout = want && want->rank == s->rank ? host_layout(want, &storage) : NULL;
    if (!st && layout) {
        cxla_literal *copy = NULL;
        st = cxla_literal_relayout(v, layout, &copy);
        view_free(v);
        v = copy;
        l->owned[at] = true;
    }
    l->lits[at] = v;
    return st;
}

/* The result leaves of |s|: views of the arena's buffers out[*next ...] where the leaf is
 * row-major, else zeroed literals in its layout that the target writes (copied back into
 * the arena after the call: result_back). */
static cxla_status result_leaves(const cxla_shape *s, void *const *out, int64_t *next,
                                 call_leaves *l) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            CXLA_RETURN_IF_ERROR(result_leaves(&s->elements[i], out, next, l));
        return NULL;
    }
    int64_t at = l->count++, one = 0;
    void *data[1] = {out[(*next)++]};
    if (!cxla_type_is_array(s->type)) return NULL;
    cxla_layout storage;
    const cxla_layout *layout = host_layout(s, &storage);
    if (!layout) return view_tree(s, data, &one, &l->lits[at]);
    cxla_shape in_layout = *s;
    in_layout.layout = (cxla_layout *)layout;
    l->owned[at] = true;
    return cxla_literal_create(&in_layout, &l->lits[at]); /* zeroed */
}

/* Starts the aliased result leaf |o| as a copy of operand leaf |i| in |o|'s layout, as
 * the interpreter's prefill does. */
static cxla_status prefill(const cxla_instr *instr, cxla_literal *o, const cxla_literal *i) {
    if (!o || !i) return NULL;
    if (!cxla_shape_compatible(o->shape, i->shape))
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "output_to_operand_aliasing pairs leaves of different shapes");
    if (o->data == i->data) return NULL;
    if (cxla_shape_equal(o->shape, i->shape)) {
        if (o->size) memcpy(o->data, i->data, o->size);
        return NULL;
    }
    cxla_literal *copy = NULL;
    CXLA_RETURN_IF_ERROR(cxla_literal_relayout(i, o->shape->layout, &copy));
    if (o->size) memcpy(o->data, copy->data, o->size);
    cxla_literal_free(copy);
    return NULL;
}

/* XLA's CPU calling convention on the arena: operand leaves and result leaves in place
 * where they are row-major; relaid copies (before the call for operands, whose layouts
 * come from operand_layout_constraints when given, else the operands' shapes; after it
 * for results) where the instruction declares another layout, so that the target sees
 * the bytes the interpreter hands it. An aliased result leaf (output_to_operand_aliasing)
 * starts as its operand and is passed for both. */
static cxla_status call_foreign(cpu_svc_run *r, const cxla_instr *instr, const char *target,
                                cxla_custom_call_fn fn, cxla_custom_call_api_version api,
                                void *const *out, const void *const *in) {
    int64_t in_total = 0, nout = exec_leaf_count(&instr->shape);
    for (int64_t k = 0; k < instr->operand_count; k++)
        in_total += exec_leaf_count(&instr->operands[k]->shape);
    size_t in_cap = (size_t)(in_total ? in_total : 1), out_cap = (size_t)(nout ? nout : 1);
    const cxla_attr *constraints = cxla_instr_attr(instr, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS);
    if (constraints && (constraints->kind != CXLA_ATTR_KIND_SHAPES ||
                        constraints->v.shapes.count != instr->operand_count))
        constraints = NULL;
    const void **ins = calloc(in_cap, sizeof(*ins));
    void **outs = calloc(out_cap, sizeof(*outs));
    int64_t *alias = calloc(out_cap, sizeof(*alias));
    call_leaves il = {calloc(in_cap, sizeof(*il.lits)), calloc(in_cap, sizeof(bool)), 0};
    call_leaves ol = {calloc(out_cap, sizeof(*ol.lits)), calloc(out_cap, sizeof(bool)), 0};
    cxla_status s =
        ins && outs && alias && il.lits && il.owned && ol.lits && ol.owned ? NULL : OOM();
    if (!s) {
        /* The interpreter's results start as zeros: what a target leaves alone reads so. */
        int64_t next = 0;
        zero_leaves(&instr->shape, out, &next);
    }
    for (int64_t k = 0, next = 0; k < instr->operand_count && !s; k++)
        s = operand_leaves(&instr->operands[k]->shape,
                           constraints ? &constraints->v.shapes.items[k]
                                       : &instr->operands[k]->shape,
                           in, &next, &il);
    if (!s) {
        int64_t next = 0;
        s = result_leaves(&instr->shape, out, &next, &ol);
    }
    for (int64_t i = 0; i < in_total && !s; i++) ins[i] = il.lits[i] ? il.lits[i]->data : in[i];
    for (int64_t i = 0; i < nout && !s; i++) outs[i] = ol.lits[i] ? ol.lits[i]->data : out[i];
    if (!s) s = exec_custom_call_aliasing(instr, alias, nout);
    for (int64_t i = 0; i < nout && !s; i++) {
        if (alias[i] < 0 || alias[i] >= in_total) continue;
        s = prefill(instr, ol.lits[i], il.lits[alias[i]]);
        ins[alias[i]] = outs[i];
    }
    char *opaque = NULL;
    size_t opaque_len = 0;
    cxla_custom_call_status st = {0};
    if (!s) s = exec_custom_call_opaque(instr, &opaque, &opaque_len);
    if (!s) {
        void *out_arg = instr->shape.type == CXLA_TUPLE ? (void *)outs : outs[0];
        exec_cancel *cancel = r->options->cancel;
        exec_custom_call_invoke(fn, api, out_arg, ins, opaque, opaque_len, &st, cancel);
        /* A target that failed because the run was cancelled (a run it started, stopped
         * by this run's cancellation): the cancellation is the reason. */
        if (st.failed && exec_cancelled(cancel))
            s = exec_cancel_error_at(cancel, instr);
        else if (st.failed)
            s = exec_error(instr, CXLA_STATUS_FAILED_PRECONDITION,
                           "custom-call target '%s' failed: %s", target,
                           st.message ? st.message : "(no message)");
    }
    /* Results written in another layout: back to the arena's row-major buffers. */
    for (int64_t i = 0; i < nout && !s; i++) {
        if (!ol.owned[i] || !ol.lits[i]) continue;
        cxla_literal *rm = NULL;
        s = cxla_literal_relayout(ol.lits[i], NULL, &rm);
        if (!s && rm->size && out[i]) memcpy(out[i], rm->data, rm->size);
        cxla_literal_free(rm);
    }
    exec_custom_call_status_clear(&st);
    free(opaque);
    free(ins);
    free(outs);
    free(alias);
    call_leaves_free(&il, in_total);
    call_leaves_free(&ol, nout);
    return s;
}

static cxla_status step_custom_call(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                    const void *const *in) {
    const char *target = NULL;
    cxla_custom_call_fn fn = NULL;
    cxla_custom_call_api_version api;
    exec_builtin_target builtin;
    CXLA_RETURN_IF_ERROR(exec_custom_call_resolve(instr, &target, &fn, &api, &builtin));
    int64_t next = 0;
    switch (builtin) {
    case EXEC_BUILTIN_IDENTITY: /* the lookup checked that the result packs the operands */
        for (int64_t k = 0, leaf = 0; k < instr->operand_count; k++) {
            cxla_literal *v = NULL;
            cxla_status s = view_tree(&instr->operands[k]->shape, (void *const *)in, &leaf, &v);
            if (!s) copy_leaves(v, out, &next);
            view_free(v);
            CXLA_RETURN_IF_ERROR(s);
        }
        return NULL;
    case EXEC_BUILTIN_ALLOCATE: zero_leaves(&instr->shape, out, &next); return NULL;
    case EXEC_BUILTIN_TOPK:
        return exec_error(instr, CXLA_STATUS_INTERNAL, "TopK has no step"); /* the lookup's */
    case EXEC_BUILTIN_DECOMPOSITION:
        /* The builder-calls pass makes every other one a call: this one had a registered
         * function when the module compiled, which is gone now. */
        return exec_error(instr, CXLA_STATUS_FAILED_PRECONDITION,
                          "custom-call target '%s' was registered when the module compiled and "
                          "is not now; compile the module again to run its decomposition",
                          target);
    case EXEC_BUILTIN_NONE:
    case EXEC_BUILTIN_COUNT: break;
    }
    return call_foreign(r, instr, target, fn, api, out, in);
}

static cpu_svc_fn custom_call_lookup(const cxla_instr *instr) {
    const char *target = NULL;
    cxla_custom_call_fn fn = NULL;
    cxla_custom_call_api_version api;
    exec_builtin_target builtin = EXEC_BUILTIN_NONE;
    cxla_status s = exec_custom_call_resolve(instr, &target, &fn, &api, &builtin);
    if (s) { /* reported when it runs (a target registered later may resolve then) */
        cxla_status_free(s);
        return step_custom_call;
    }
    /* A decomposition the builder-calls pass left (none: it rewrites every one that
     * resolves so) runs on the interpreter's handler, as a call. */
    if (builtin == EXEC_BUILTIN_TOPK || builtin == EXEC_BUILTIN_DECOMPOSITION) return NULL;
    if (builtin == EXEC_BUILTIN_IDENTITY) {
        const cxla_shape *rs = &instr->shape;
        int64_t n = instr->operand_count;
        if (n == 1 && cxla_shape_compatible(rs, &instr->operands[0]->shape))
            return step_custom_call;
        bool tuple = rs->type == CXLA_TUPLE && rs->tuple_count == n;
        for (int64_t i = 0; tuple && i < n; i++)
            tuple = cxla_shape_compatible(&rs->elements[i], &instr->operands[i]->shape);
        return tuple ? step_custom_call : NULL;
    }
    return step_custom_call;
}

bool cpu_svc_topk_instr(const cxla_instr *in, cxla_attr *attrs, cxla_instr *out) {
    const char *target = NULL;
    cxla_custom_call_fn fn = NULL;
    cxla_custom_call_api_version api;
    exec_builtin_target builtin = EXEC_BUILTIN_NONE;
    if (in->opcode != CXLA_OP_CUSTOM_CALL) return false;
    cxla_status st = exec_custom_call_resolve(in, &target, &fn, &api, &builtin);
    if (st) {
        cxla_status_free(st);
        return false;
    }
    const cxla_shape *r = &in->shape;
    if (builtin != EXEC_BUILTIN_TOPK || in->operand_count != 1 || r->type != CXLA_TUPLE ||
        r->tuple_count != 2)
        return false;
    const cxla_shape *x = &in->operands[0]->shape, *v = &r->elements[0], *ix = &r->elements[1];
    if (!cxla_type_is_array(x->type) || x->rank < 1 || v->type != x->type || ix->type != CXLA_S32 ||
        v->rank != x->rank || ix->rank != x->rank)
        return false;
    for (int64_t d = 0; d < x->rank; d++)
        if ((d < x->rank - 1 && v->dims[d] != x->dims[d]) || ix->dims[d] != v->dims[d])
            return false;
    bool largest = true;
    cxla_computation *comp = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    if (!comp) {
        cxla_computation *called[1];
        if (cxla_instr_called_computations(in, called, 1) == 1) comp = called[0];
    }
    if (comp) {
        interp_comparator c = interp_match_comparator(comp);
        if (c.direction != INTERP_DIR_GT && c.direction != INTERP_DIR_LT) return false;
        largest = c.direction == INTERP_DIR_GT;
    }
    attrs[0] = (cxla_attr){
        .id = CXLA_ATTR_K, .name = "k", .kind = CXLA_ATTR_KIND_INT, .v.i = v->dims[v->rank - 1]};
    attrs[1] = (cxla_attr){
        .id = CXLA_ATTR_LARGEST, .name = "largest", .kind = CXLA_ATTR_KIND_BOOL, .v.b = largest};
    *out = *in;
    out->opcode = CXLA_OP_TOPK;
    out->attrs = attrs;
    out->attr_count = 2;
    return true;
}

/* ---- host transfers -------------------------------------------------------------------- */

static const char *string_attr(const cxla_instr *instr, cxla_attr_id id) {
    const cxla_attr *a = cxla_instr_attr(instr, id);
    return a && a->kind == CXLA_ATTR_KIND_STRING && a->v.s ? a->v.s : "";
}

static int64_t channel_of(const cxla_instr *instr) {
    int64_t channel = 0;
    return cxla_instr_int(instr, CXLA_ATTR_CHANNEL_ID, &channel) ? channel : 0;
}

static bool is_empty_tuple(const cxla_shape *s) {
    return s->type == CXLA_TUPLE && s->tuple_count == 0;
}

static cxla_status no_handler(const cxla_instr *instr, const char *what) {
    return exec_error(instr, CXLA_STATUS_FAILED_PRECONDITION,
                      "no host %s handler is installed (run the module through the runtime: "
                      "a cxla_client provides the infeed and outfeed queues and the channels)",
                      what);
}

/* What a host callback returned (|got|, taken) into out[*next ...], checked against |want|
 * and brought to row-major, as the interpreter's accept_data. */
static cxla_status accept_data(const cxla_instr *instr, const char *what, cxla_literal *got,
                               const cxla_shape *want, void *const *out, int64_t *next) {
    if (!got) return exec_error(instr, CXLA_STATUS_INTERNAL, "the %s handler gave no data", what);
    cxla_status s = NULL;
    if (!cxla_shape_compatible(cxla_literal_shape(got), want)) {
        char *g = cxla_shape_to_string(cxla_literal_shape(got), CXLA_SHAPE_PRINT_NO_LAYOUT);
        char *w = cxla_shape_to_string(want, CXLA_SHAPE_PRINT_NO_LAYOUT);
        s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                       "the %s data has shape %s, but the instruction reads %s", what, g ? g : "?",
                       w ? w : "?");
        free(g);
        free(w);
    } else if (interp_is_row_major(got) && !got->dyn_sizes) {
        copy_leaves(got, out, next);
    } else {
        cxla_literal *rm = NULL;
        s = interp_relayout_tree(got, NULL, &rm);
        if (!s) copy_leaves(rm, out, next);
        cxla_literal_free(rm);
    }
    cxla_literal_free(got);
    return s;
}

/* infeed(token) -> (data, token). */
static cxla_status step_infeed(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                               const void *const *in) {
    (void)in;
    const cxla_shape *rs = &instr->shape;
    if (rs->type != CXLA_TUPLE || rs->tuple_count != 2)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "the result must be (data, token[])");
    const cxla_shape *want = &rs->elements[0];
    if (is_empty_tuple(want)) return NULL;
    const exec_host *host = r->options->host;
    if (!host || !host->infeed) return no_handler(instr, "infeed");
    cxla_literal *got = NULL;
    cxla_status s = interp_annotate(
        host->infeed(host->user, want, string_attr(instr, CXLA_ATTR_INFEED_CONFIG), &got), instr);
    if (s) {
        cxla_literal_free(got);
        return s;
    }
    int64_t next = 0;
    return accept_data(instr, "infeed", got, want, out, &next);
}

/* The operand leaves of operand 0 as a literal relaid to |shape|, to hand to the host. */
static cxla_status host_data(const cxla_instr *instr, const cxla_shape *shape,
                             const void *const *in, cxla_literal **out) {
    cxla_literal *v = NULL;
    int64_t next = 0;
    cxla_status s = view_tree(&instr->operands[0]->shape, (void *const *)in, &next, &v);
    if (!s) s = interp_relayout_tree(v, shape, out);
    view_free(v);
    return s;
}

/* outfeed(data, token) -> token. */
static cxla_status step_outfeed(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                const void *const *in) {
    (void)out;
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_OUTFEED_SHAPE);
    const cxla_shape *shape = a && a->kind == CXLA_ATTR_KIND_SHAPE && a->v.shapes.count == 1
                                  ? &a->v.shapes.items[0]
                                  : &instr->operands[0]->shape;
    if (!cxla_shape_compatible(shape, &instr->operands[0]->shape))
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "outfeed_shape does not match the data");
    if (is_empty_tuple(shape)) return NULL;
    const exec_host *host = r->options->host;
    if (!host || !host->outfeed) return no_handler(instr, "outfeed");
    cxla_literal *data = NULL;
    CXLA_RETURN_IF_ERROR(host_data(instr, shape, in, &data));
    cxla_status s =
        host->outfeed(host->user, data, shape, string_attr(instr, CXLA_ATTR_OUTFEED_CONFIG));
    cxla_literal_free(data);
    return interp_annotate(s, instr);
}

/* send(data, token) -> (data, u32[] context, token): the data goes at once. */
static cxla_status step_send(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                             const void *const *in) {
    const exec_host *host = r->options->host;
    if (!host || !host->send) return no_handler(instr, "send");
    const cxla_shape *rs = &instr->shape;
    const cxla_shape *shape = rs->type == CXLA_TUPLE && rs->tuple_count == 3
                                  ? &rs->elements[0]
                                  : &instr->operands[0]->shape;
    /* The layout the send declared before the layout pass gave its data the default. */
    const cxla_attr *host_layout = cxla_instr_attr(instr, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS);
    if (host_layout && host_layout->kind == CXLA_ATTR_KIND_SHAPES && host_layout->v.shapes.count)
        shape = &host_layout->v.shapes.items[0];
    cxla_literal *data = NULL;
    CXLA_RETURN_IF_ERROR(host_data(instr, shape, in, &data));
    cxla_status s = host->send(host->user, channel_of(instr),
                               cxla_instr_bool(instr, CXLA_ATTR_IS_HOST_TRANSFER), data);
    cxla_literal_free(data);
    CXLA_RETURN_IF_ERROR(interp_annotate(s, instr));
    if (rs->type != CXLA_TUPLE || rs->tuple_count != 3)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "the result must be (data, u32[], token[])");
    cxla_literal *v = NULL;
    int64_t leaf = 0, next = 0;
    s = view_tree(&instr->operands[0]->shape, (void *const *)in, &leaf, &v);
    if (!s) copy_leaves(v, out, &next);
    view_free(v);
    if (!s) zero_leaves(&rs->elements[1], out, &next);
    return s;
}

static cxla_status step_token(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                              const void *const *in) {
    (void)r, (void)instr, (void)out, (void)in;
    return NULL; /* send-done, after-all: a token */
}

/* recv(token) -> (buffer, u32[] context, token): zeros; the data comes at recv-done. */
static cxla_status step_recv(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                             const void *const *in) {
    (void)in;
    const cxla_shape *rs = &instr->shape;
    if (rs->type != CXLA_TUPLE || rs->tuple_count != 3)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "the result must be (data, u32[], token[])");
    if (!r->options->host || !r->options->host->recv) return no_handler(instr, "recv");
    int64_t next = 0;
    zero_leaves(&rs->elements[0], out, &next);
    zero_leaves(&rs->elements[1], out, &next);
    return NULL;
}

/* recv-done(context) -> (data, token). */
static cxla_status step_recv_done(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                  const void *const *in) {
    (void)in;
    const cxla_shape *rs = &instr->shape;
    if (rs->type != CXLA_TUPLE || rs->tuple_count != 2)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "the result must be (data, token[])");
    const exec_host *host = r->options->host;
    if (!host || !host->recv) return no_handler(instr, "recv");
    const cxla_shape *want = &rs->elements[0];
    cxla_literal *got = NULL;
    cxla_status s =
        interp_annotate(host->recv(host->user, channel_of(instr),
                                   cxla_instr_bool(instr, CXLA_ATTR_IS_HOST_TRANSFER), want, &got),
                        instr);
    if (s) {
        cxla_literal_free(got);
        return s;
    }
    int64_t next = 0;
    return accept_data(instr, "received", got, want, out, &next);
}

/* ---- rng ------------------------------------------------------------------------------- */

cxla_status cpu_svc_rng_keys(const cxla_module *m, int64_t id_count, uint64_t **out) {
    /* As interp_rng.c's rng_key: the k-th value of mt19937_64 (seed 42) for the k-th rng
     * of the module, computations in module order, instructions in post-order. */
    uint64_t *keys = calloc((size_t)(id_count ? id_count : 1), sizeof(*keys));
    if (!keys) return OOM();
    int64_t count = 0;
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++)
            count += m->comps[c]->instrs[i]->opcode == CXLA_OP_RNG;
    uint64_t *seq = malloc((size_t)(count ? count : 1) * sizeof(*seq));
    if (!seq) {
        free(keys);
        return OOM();
    }
    exec_mt19937_64(42, seq, count);
    int64_t k = 0;
    cxla_status s = NULL;
    for (int64_t c = 0; c < m->comp_count && !s; c++) {
        cxla_instr **order = NULL;
        s = cxla_computation_post_order(m->comps[c], &order);
        for (int64_t i = 0; !s && i < m->comps[c]->instr_count && k < count; i++) {
            const cxla_instr *in = order[i];
            if (in->opcode != CXLA_OP_RNG) continue;
            if (in->id >= 0 && in->id < id_count) keys[in->id] = seq[k];
            k++;
        }
    }
    free(seq);
    if (s) {
        free(keys);
        return s;
    }
    *out = keys;
    return NULL;
}

cxla_status cpu_svc_rng_keys_of_user(const cxla_module *user, const cxla_module *m,
                                     int64_t id_count, uint64_t *keys) {
    if (!user || !m || !keys) return NULL;
    int64_t count = 0, sugar = 0;
    for (int64_t c = 0; c < user->comp_count; c++)
        for (int64_t i = 0; i < user->comps[c]->instr_count; i++) {
            const cxla_instr *in = user->comps[c]->instrs[i];
            count += in->opcode == CXLA_OP_RNG;
            sugar += in->opcode == CXLA_OP_ASYNC_START && in->async_wrapped == CXLA_OP_RNG;
        }
    if (count == 0 && sugar == 0) return NULL;
    uint64_t *seq = malloc((size_t)(count ? count : 1) * sizeof(*seq));
    const cxla_instr **rngs = calloc((size_t)(count ? count : 1), sizeof(*rngs));
    cxla_status s = seq && rngs ? NULL : OOM();
    if (!s) exec_mt19937_64(42, seq, count);
    int64_t k = 0;
    for (int64_t c = 0; c < user->comp_count && !s; c++) {
        cxla_instr **order = NULL;
        s = cxla_computation_post_order(user->comps[c], &order);
        for (int64_t i = 0; !s && i < user->comps[c]->instr_count && k < count; i++)
            if (order[i]->opcode == CXLA_OP_RNG) rngs[k++] = order[i];
    }
    /* Each rng of |m| is the user's of the same name, or (a copy the passes made, say by
     * inlining a call made twice) of the same position in the text; the one an rng-start
     * wraps (the async-desugar pass's, at the start's position) has key 0, as the
     * interpreter's, whose list of rngs does not hold it; else it keeps the key its own
     * position in |m| gave it. */
    for (int64_t c = 0; c < m->comp_count && !s; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            const cxla_instr *in = m->comps[c]->instrs[i];
            if (in->opcode != CXLA_OP_RNG || in->id < 0 || in->id >= id_count) continue;
            int64_t found = -1;
            for (int64_t j = 0; j < k && found < 0; j++)
                if (strcmp(rngs[j]->name, in->name) == 0) found = j;
            for (int64_t j = 0; j < k && found < 0 && in->line > 0; j++)
                if (rngs[j]->line == in->line && rngs[j]->column == in->column) found = j;
            if (found >= 0) {
                keys[in->id] = seq[found];
                continue;
            }
            for (int64_t uc = 0; uc < user->comp_count && sugar && in->line > 0; uc++)
                for (int64_t j = 0; j < user->comps[uc]->instr_count; j++) {
                    const cxla_instr *u = user->comps[uc]->instrs[j];
                    if (u->opcode == CXLA_OP_ASYNC_START && u->async_wrapped == CXLA_OP_RNG &&
                        u->line == in->line && u->column == in->column)
                        keys[in->id] = 0;
                }
        }
    free(seq);
    free(rngs);
    return s;
}

static void advance_state(cpu_svc_run *r, uint64_t delta) {
    exec_u128 s = exec_u128_add((exec_u128){r->rng_state[0], r->rng_state[1]}, delta);
    r->rng_state[0] = s.lo;
    r->rng_state[1] = s.hi;
}

static cxla_status step_rng_get_and_update_state(cpu_svc_run *r, const cxla_instr *instr,
                                                 void *const *out, const void *const *in) {
    (void)in;
    int64_t delta = 0;
    if (cxla_instr_attr(instr, CXLA_ATTR_DELTA) && !cxla_instr_int(instr, CXLA_ATTR_DELTA, &delta))
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "delta must be an integer");
    const cxla_shape *rs = &instr->shape;
    if (rs->type != CXLA_U64 || rs->rank != 1 || rs->dims[0] != 2)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "the result must be u64[2]");
    memcpy(out[0], r->rng_state, 2 * sizeof(uint64_t));
    advance_state(r, (uint64_t)delta);
    return NULL;
}

static cxla_status step_rng(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                            const void *const *in) {
    cxla_type t = instr->shape.type;
    if (instr->operand_count != 2)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "expects 2 operands");
    for (int i = 0; i < 2; i++) {
        const cxla_shape *os = &instr->operands[i]->shape;
        if (os->type != t || os->rank != 0)
            return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "operand %d must be a %s scalar",
                              i, cxla_type_name(t));
    }
    const char *dist = cxla_instr_word(instr, CXLA_ATTR_DISTRIBUTION);
    bool normal = dist && strcmp(dist, "rng_normal") == 0;
    if (!dist || (!normal && strcmp(dist, "rng_uniform") != 0))
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "unknown distribution=%s",
                          dist ? dist : "(none)");
    bool is_float = cxla_type_is_float(t);
    if (normal ? !is_float : !is_float && !cxla_type_is_integer(t) && t != CXLA_PRED)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "%s does not support %s", dist,
                          cxla_type_name(t));
    uint64_t seed = r->options->seed;
    uint64_t key = seed == 0 ? 0 : r->rng_keys[instr->id] ^ seed;
    int64_t n = 0;
    CXLA_RETURN_IF_ERROR(cxla_shape_element_count(&instr->shape, &n));
    exec_u128 c = {r->rng_state[0], r->rng_state[1]};
    advance_state(r, (uint64_t)n * (cxla_type_bits(t) == 64 ? 2u : 1u));
    bool ok;
    if (normal)
        ok = exec_rng_fill_normal(key, c, &instr->shape, cxla_load_f64(t, in[0]),
                                  cxla_load_f64(t, in[1]), out[0]);
    else if (is_float)
        ok = exec_rng_fill_uniform_float(key, c, &instr->shape, cxla_load_f64(t, in[0]),
                                         cxla_load_f64(t, in[1]), out[0]);
    else
        ok = exec_rng_fill_uniform_int(key, c, &instr->shape, in[0], in[1], out[0]);
    return ok ? NULL : OOM();
}

/* ---- lookup ---------------------------------------------------------------------------- */

cpu_svc_fn cpu_svc_lookup(const cxla_instr *instr) {
    switch (instr->opcode) {
    case CXLA_OP_CUSTOM_CALL: return custom_call_lookup(instr);
    case CXLA_OP_INFEED: return step_infeed;
    case CXLA_OP_OUTFEED: return step_outfeed;
    case CXLA_OP_SEND: return step_send;
    case CXLA_OP_SEND_DONE:
    case CXLA_OP_AFTER_ALL: return step_token;
    case CXLA_OP_RECV: return step_recv;
    case CXLA_OP_RECV_DONE: return step_recv_done;
    case CXLA_OP_RNG: /* sub-byte types too: stored one element a byte, as the interpreter's */
        return cxla_type_is_array(instr->shape.type) && instr->shape.type != CXLA_TUPLE ? step_rng
                                                                                        : NULL;
    case CXLA_OP_RNG_GET_AND_UPDATE_STATE: return step_rng_get_and_update_state;
    default: return cpu_collective_lookup(instr);
    }
}

const char *cpu_svc_what(const cxla_instr *instr) {
    switch (instr->opcode) {
    case CXLA_OP_CUSTOM_CALL: return "custom call";
    case CXLA_OP_INFEED:
    case CXLA_OP_OUTFEED:
    case CXLA_OP_SEND:
    case CXLA_OP_SEND_DONE:
    case CXLA_OP_RECV:
    case CXLA_OP_RECV_DONE: return "host transfer";
    case CXLA_OP_RNG:
    case CXLA_OP_RNG_GET_AND_UPDATE_STATE: return "rng";
    case CXLA_OP_AFTER_ALL: return "step";
    default: return "collective";
    }
}

/* ---- --check-finite ---------------------------------------------------------------------- */

static bool words_finite(const void *p, size_t n, int bits, uint64_t exp_mask) {
    for (size_t i = 0; i < n; i++) {
        uint64_t w = 0;
        if (bits == 16) {
            uint16_t v;
            memcpy(&v, (const char *)p + 2 * i, 2);
            w = v;
        } else if (bits == 32) {
            uint32_t v;
            memcpy(&v, (const char *)p + 4 * i, 4);
            w = v;
        } else {
            memcpy(&w, (const char *)p + 8 * i, 8);
        }
        if ((w & exp_mask) == exp_mask) return false;
    }
    return true;
}

bool cpu_svc_all_finite(const cxla_shape *s, const void *data) {
    cxla_type t = s->type;
    if (!data || (!cxla_type_is_float(t) && !cxla_type_is_complex(t))) return true;
    size_t bytes = 0;
    if (cxla_shape_byte_size(s, &bytes)) return true;
    switch (t) { /* IEEE layouts: Inf and NaN have the all-ones exponent */
    case CXLA_F16: return words_finite(data, bytes / 2, 16, 0x7c00);
    case CXLA_BF16: return words_finite(data, bytes / 2, 16, 0x7f80);
    case CXLA_F32:
    case CXLA_C64: return words_finite(data, bytes / 4, 32, 0x7f800000);
    case CXLA_F64:
    case CXLA_C128: return words_finite(data, bytes / 8, 64, 0x7ff0000000000000);
    default: break;
    }
    size_t es = cxla_type_storage(t), n = es ? bytes / es : 0;
    for (size_t i = 0; i < n; i++) {
        double re, im;
        cxla_load_c128(t, (const char *)data + i * es, &re, &im);
        if (!isfinite(re) || !isfinite(im)) return false;
    }
    return true;
}
