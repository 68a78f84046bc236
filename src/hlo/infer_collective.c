/* Shape inference for the collectives and their -start/-done forms, as XLA's
 * ShapeInference (InferAllGatherShape, InferReduceScatterShape, InferAllToAllShape,
 * InferCollectivePermuteShape ...) and ShapeVerifier (shard counts from the declared
 * shape checked against the replica groups) define them. A group size of 1 means
 * "unknown" (no replica_groups and a module of one replica/partition), as in XLA. */
#include <inttypes.h>
#include <string.h>

#include "hlo/infer_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in shape inference")

static cxla_status arrays(const cxla_instr *in, cxla_arena *arena) {
    if (in->operand_count < 1) return cxla_infer_fail(in, "expects at least one operand");
    for (int64_t i = 0; i < in->operand_count; i++)
        if (!cxla_infer_is_array(OPS(i)))
            return cxla_infer_fail(in, "operand %" PRId64 " must be an array, got %s", i,
                                   STR(OPS(i)));
    return NULL;
}

static cxla_status pack(cxla_arena *arena, int64_t n, cxla_shape *shapes, cxla_shape *out) {
    if (n == 1) {
        *out = shapes[0];
        return NULL;
    }
    const cxla_shape **ptrs = cxla_arena_alloc_array(arena, (size_t)n, sizeof(*ptrs));
    if (!ptrs) return OOM();
    for (int64_t i = 0; i < n; i++) ptrs[i] = &shapes[i];
    return cxla_infer_make_tuple(arena, n, ptrs, out);
}

/* The reduction of all-reduce / reduce-scatter: (T, T) -> T for every operand's T. */
static cxla_status check_collective_reducer(const cxla_instr *in, cxla_arena *arena,
                                            bool required) {
    cxla_computation *f = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    if (!f) {
        if (!required) return NULL;
        return cxla_infer_fail(in, "missing called computation to_apply=");
    }
    CXLA_RETURN_IF_ERROR(cxla_infer_check_callable(in, f));
    const char *sig = cxla_infer_signature_str(arena, f);
    if (f->param_count != 2 || !cxla_infer_is_scalar(&f->root->shape) ||
        !cxla_infer_compatible(&f->params[0]->shape, &f->root->shape) ||
        !cxla_infer_compatible(&f->params[1]->shape, &f->root->shape))
        return cxla_infer_fail(in,
                               "to_apply '%s' must be (T, T) -> T on scalars, its signature is "
                               "%s",
                               f->name, sig);
    /* XLA's verifier does not compare the reducer's type with the operands' (a bf16
     * all-reduce may add in f32); cxla lets float precisions differ, which the interpreter
     * converts between (to the reducer's type and back), and keeps integers exact. */
    for (int64_t i = 0; i < in->operand_count; i++) {
        cxla_type t = OPS(i)->type, r = f->root->shape.type;
        if (t != r && !(cxla_type_is_float(t) && cxla_type_is_float(r)))
            return cxla_infer_fail(in, "operand %" PRId64 " %s does not match to_apply '%s' %s", i,
                                   STR(OPS(i)), f->name, sig);
    }
    return NULL;
}

/* ---- all-reduce ------------------------------------------------------------------ */

CXLA_INFER_DECLARE(cxla_infer_all_reduce) {
    CXLA_RETURN_IF_ERROR(arrays(in, arena));
    int64_t g;
    CXLA_RETURN_IF_ERROR(cxla_infer_group_size(in, arena, false, true, &g));
    CXLA_RETURN_IF_ERROR(check_collective_reducer(in, arena, true));
    return cxla_infer_operands_tuple(in, arena, true, out);
}

CXLA_INFER_DECLARE(cxla_infer_all_reduce_start) {
    return cxla_infer_all_reduce(in, arena, out);
}

CXLA_INFER_DECLARE(cxla_infer_all_reduce_done) {
    return cxla_infer_copy(arena, OPS(0), out);
}

CXLA_INFER_DECLARE(cxla_infer_collective_reduce) {
    CXLA_RETURN_IF_ERROR(arrays(in, arena));
    int64_t g;
    CXLA_RETURN_IF_ERROR(cxla_infer_group_size(in, arena, false, true, &g));
    CXLA_RETURN_IF_ERROR(check_collective_reducer(in, arena, false));
    return cxla_infer_operands_tuple(in, arena, true, out);
}

/* ---- all-gather and reduce-scatter ----------------------------------------------- */

/* The declared result array of operand |i| (all-gather-start: inside element {1}). */
static const cxla_shape *declared_output(const cxla_instr *in, int64_t i, bool start) {
    const cxla_shape *d = &in->shape;
    if (start) {
        if (d->type != CXLA_TUPLE || d->tuple_count != 2) return NULL;
        d = &d->elements[1];
    }
    if (in->operand_count == 1) return cxla_infer_is_array(d) ? d : NULL;
    if (d->type != CXLA_TUPLE || d->tuple_count != in->operand_count) return NULL;
    return cxla_infer_is_array(&d->elements[i]) ? &d->elements[i] : NULL;
}

static int64_t ceil_ratio(int64_t a, int64_t b) {
    return a / b + (a % b != 0);
}

/* all-gather (grow == true) multiplies dimension d by the shard count; reduce-scatter
 * divides it. The shard count is read from the declared result, as XLA's verifier does,
 * and must equal the group size when that is known. */
static cxla_status gather_scatter(const cxla_instr *in, cxla_arena *arena, bool grow, bool start,
                                  cxla_shape *results) {
    CXLA_RETURN_IF_ERROR(arrays(in, arena));
    int64_t g;
    CXLA_RETURN_IF_ERROR(cxla_infer_group_size(in, arena, true, true, &g));
    const int64_t *dl;
    int64_t nd;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_ints(in, CXLA_ATTR_DIMENSIONS, &dl, &nd));
    if (nd != 1)
        return cxla_infer_fail(in, "dimensions=%s must name one dimension", INTS_STR(dl, nd));
    int64_t d = dl[0];
    for (int64_t i = 0; i < in->operand_count; i++)
        if (d < 0 || d >= OPS(i)->rank)
            return cxla_infer_fail(in, "dimension %" PRId64 " is out of range for operand %s", d,
                                   STR(OPS(i)));
    int64_t shards = g;
    const cxla_shape *o = declared_output(in, 0, start);
    const cxla_shape *x = OPS(0);
    if (o && o->rank == x->rank && o->dims[d] > 0 && x->dims[d] > 0)
        shards = grow ? ceil_ratio(o->dims[d], x->dims[d]) : ceil_ratio(x->dims[d], o->dims[d]);
    if (g != 1 && shards != g)
        return cxla_infer_fail(
            in, "%s to %s makes %" PRId64 " shards but the groups have %" PRId64 " members", STR(x),
            o ? STR(o) : "?", shards, g);
    if (shards < 1) shards = 1;
    for (int64_t i = 0; i < in->operand_count; i++) {
        const cxla_shape *s = OPS(i);
        int64_t dims[CXLA_MAX_RANK];
        for (int64_t j = 0; j < s->rank; j++) dims[j] = s->dims[j];
        if (s->dims[d] != CXLA_DIM_UNBOUNDED) {
            if (grow) {
                if (!cxla_mul_i64(dims[d], shards, &dims[d]))
                    return cxla_infer_fail(in, "the result size overflows");
            } else {
                if (dims[d] % shards != 0)
                    return cxla_infer_fail(in,
                                           "dimension %" PRId64
                                           " of %s is not divisible by the %" PRId64 " shards",
                                           d, STR(s), shards);
                dims[d] /= shards;
            }
        }
        CXLA_RETURN_IF_ERROR(
            cxla_infer_make_array(arena, s->type, s->rank, dims, s->dynamic, &results[i]));
    }
    return NULL;
}

CXLA_INFER_DECLARE(cxla_infer_all_gather) {
    cxla_shape *r =
        cxla_arena_alloc_array(arena, (size_t)in->operand_count + 1, sizeof(cxla_shape));
    if (!r) return OOM();
    CXLA_RETURN_IF_ERROR(gather_scatter(in, arena, true, false, r));
    return pack(arena, in->operand_count, r, out);
}

CXLA_INFER_DECLARE(cxla_infer_all_gather_start) {
    cxla_shape *r =
        cxla_arena_alloc_array(arena, (size_t)in->operand_count + 1, sizeof(cxla_shape));
    if (!r) return OOM();
    CXLA_RETURN_IF_ERROR(gather_scatter(in, arena, true, true, r));
    cxla_shape parts[2];
    CXLA_RETURN_IF_ERROR(cxla_infer_operands_tuple(in, arena, true, &parts[0]));
    CXLA_RETURN_IF_ERROR(pack(arena, in->operand_count, r, &parts[1]));
    return pack(arena, 2, parts, out);
}

CXLA_INFER_DECLARE(cxla_infer_all_gather_done) {
    const cxla_shape *s = OPS(0);
    if (s->type != CXLA_TUPLE || s->tuple_count != 2)
        return cxla_infer_fail(
            in, "the operand must be an all-gather-start's (input, output), got %s", STR(s));
    return cxla_infer_copy(arena, &s->elements[1], out);
}

CXLA_INFER_DECLARE(cxla_infer_reduce_scatter) {
    cxla_shape *r =
        cxla_arena_alloc_array(arena, (size_t)in->operand_count + 1, sizeof(cxla_shape));
    if (!r) return OOM();
    CXLA_RETURN_IF_ERROR(gather_scatter(in, arena, false, false, r));
    CXLA_RETURN_IF_ERROR(check_collective_reducer(in, arena, true));
    return pack(arena, in->operand_count, r, out);
}

/* ---- all-to-all ------------------------------------------------------------------ */

CXLA_INFER_DECLARE(cxla_infer_all_to_all) {
    CXLA_RETURN_IF_ERROR(arrays(in, arena));
    int64_t g;
    CXLA_RETURN_IF_ERROR(cxla_infer_group_size(in, arena, true, false, &g));
    const int64_t *dl;
    int64_t nd;
    dl = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    if (dl) {
        /* Array form: split and concatenate along one dimension; the shape is unchanged. */
        const cxla_shape *x = OPS(0);
        if (in->operand_count != 1)
            return cxla_infer_fail(in,
                                   "the array form (dimensions=) takes one operand, got %" PRId64,
                                   in->operand_count);
        if (nd != 1 || dl[0] < 0 || dl[0] >= x->rank)
            return cxla_infer_fail(in, "dimensions=%s must name one dimension of %s",
                                   INTS_STR(dl, nd), STR(x));
        if (x->dims[dl[0]] != CXLA_DIM_UNBOUNDED && g > 0 && x->dims[dl[0]] % g != 0)
            return cxla_infer_fail(
                in, "dimension %" PRId64 " of %s is not divisible by the %" PRId64 " participants",
                dl[0], STR(x), g);
        return cxla_infer_copy(arena, x, out);
    }
    /* Tuple form: one operand per participant, all of one shape. */
    if (g != 1 && in->operand_count != g)
        return cxla_infer_fail(
            in, "the tuple form takes one operand per participant (%" PRId64 "), got %" PRId64, g,
            in->operand_count);
    for (int64_t i = 1; i < in->operand_count; i++)
        if (!cxla_infer_compatible(OPS(0), OPS(i)))
            return cxla_infer_fail(in, "operands must have the same shape, got %s and %s",
                                   STR(OPS(0)), STR(OPS(i)));
    return cxla_infer_operands_tuple(in, arena, false, out);
}

/* ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets,
 * recv_sizes): the result is the output buffer. */
CXLA_INFER_DECLARE(cxla_infer_ragged_all_to_all) {
    CXLA_RETURN_IF_ERROR(arrays(in, arena));
    int64_t g;
    CXLA_RETURN_IF_ERROR(cxla_infer_group_size(in, arena, true, false, &g));
    const cxla_shape *x = OPS(0), *y = OPS(1);
    if (x->type != y->type || x->rank != y->rank)
        return cxla_infer_fail(
            in, "input %s and output %s must have the same element type and rank", STR(x), STR(y));
    for (int64_t i = 2; i < 6; i++) {
        const cxla_shape *s = OPS(i);
        if (!cxla_type_is_integer(s->type) || !cxla_infer_compatible(s, OPS(2)))
            return cxla_infer_fail(in,
                                   "offsets and sizes must be integer arrays of one shape, got %s",
                                   cxla_infer_operands_str(arena, in));
    }
    return cxla_infer_copy(arena, y, out);
}

/* ---- collective-permute and broadcast -------------------------------------------- */

/* The combined in-place form: (input, output, input_offsets, output_offsets) with tuple
 * offsets. */
static bool permute_in_place(const cxla_instr *in) {
    return in->operand_count == 4 && OPS(2)->type == CXLA_TUPLE;
}

/* The start indices |off| of buffer |b| (rank |rank|) in operand |op| of the in-place form,
 * as XLA's verifier (CheckBufferOffset) takes them: a tuple of |rank| integer scalars (one
 * slice), or a tuple of tuples of |rank| integer scalars (one slice per inner tuple). The
 * slice count in |out_slots|. */
static cxla_status in_place_offsets(const cxla_instr *in, cxla_arena *arena, const cxla_shape *off,
                                    int64_t op, int64_t b, int64_t rank, int64_t *out_slots) {
    const char *what = op == 2 ? "input" : "output";
    if (off->type != CXLA_TUPLE)
        return cxla_infer_fail(in,
                               "the %s start indices of buffer %" PRId64 " must be a tuple, got %s",
                               what, b, STR(off));
    bool nested = off->tuple_count > 0 && off->elements[0].type == CXLA_TUPLE;
    int64_t slots = nested ? off->tuple_count : 1;
    for (int64_t j = 0; j < slots; j++) {
        const cxla_shape *t = nested ? &off->elements[j] : off;
        bool ok = t->type == CXLA_TUPLE && t->tuple_count == rank;
        for (int64_t d = 0; ok && d < rank; d++)
            ok = t->elements[d].type != CXLA_TUPLE && cxla_infer_is_scalar(&t->elements[d]) &&
                 cxla_type_is_integer(t->elements[d].type);
        if (!ok)
            return cxla_infer_fail(
                in,
                "the %s start indices of buffer %" PRId64 " must be a tuple of %" PRId64
                " integer scalars, or a tuple of such tuples (one per slice), got %s",
                what, b, rank, STR(off));
    }
    *out_slots = slots;
    return NULL;
}

/* The in-place form's operands (XLA's CheckInplaceCollectivePermute, and what cxla's
 * semantics need besides, docs/semantics.md): input and output both arrays, or both
 * tuples of as many arrays, each input of its output's element type and rank; start
 * indices per buffer with one count of slices k throughout; slice_sizes={{...},...}: k
 * lists per buffer (buffer-major), each of one size per dimension, within both buffers;
 * a source or target in at most k pairs. The slice count in |out_slots|. */
static cxla_status check_in_place(const cxla_instr *in, cxla_arena *arena, int64_t *out_slots) {
    const cxla_shape *x = OPS(0), *y = OPS(1);
    bool tuple = x->type == CXLA_TUPLE;
    int64_t nb = tuple ? x->tuple_count : 1;
    if ((y->type == CXLA_TUPLE) != tuple || (tuple && y->tuple_count != nb) || nb < 1)
        return cxla_infer_fail(in,
                               "the input %s and the output %s must both be arrays, or tuples of "
                               "as many arrays",
                               STR(x), STR(y));
    int64_t slots = -1;
    for (int64_t b = 0; b < nb; b++) {
        const cxla_shape *xb = tuple ? &x->elements[b] : x, *yb = tuple ? &y->elements[b] : y;
        if (!cxla_infer_is_array(xb) || !cxla_infer_is_array(yb) || xb->type != yb->type ||
            xb->rank != yb->rank)
            return cxla_infer_fail(in,
                                   "input buffer %s and output buffer %s must be arrays of one "
                                   "element type and rank",
                                   STR(xb), STR(yb));
        for (int64_t op = 2; op < 4; op++) {
            const cxla_shape *o = OPS(op);
            if (tuple && (o->type != CXLA_TUPLE || o->tuple_count != nb))
                return cxla_infer_fail(
                    in, "the %s start indices %s must hold one entry per buffer (%" PRId64 ")",
                    op == 2 ? "input" : "output", STR(o), nb);
            int64_t k = 0;
            CXLA_RETURN_IF_ERROR(
                in_place_offsets(in, arena, tuple ? &o->elements[b] : o, op, b, xb->rank, &k));
            if (slots >= 0 && k != slots)
                return cxla_infer_fail(in,
                                       "the start indices name %" PRId64
                                       " slices in one place and %" PRId64
                                       " in another; every buffer's input and output start "
                                       "indices must name as many",
                                       slots, k);
            slots = k;
        }
    }
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_SLICE_SIZES);
    if (!a || a->kind != CXLA_ATTR_KIND_INT_LISTS || a->v.int_lists.count != nb * slots)
        return cxla_infer_fail(in,
                               "the in-place form needs slice_sizes={{...},...} with %" PRId64
                               " list(s): %" PRId64 " per buffer, one per slice",
                               nb * slots, slots);
    for (int64_t b = 0; b < nb; b++) {
        const cxla_shape *xb = tuple ? &x->elements[b] : x, *yb = tuple ? &y->elements[b] : y;
        for (int64_t j = 0; j < slots; j++) {
            int64_t l = b * slots + j, n = a->v.int_lists.lengths[l];
            const int64_t *v = a->v.int_lists.lists[l];
            bool ok = n == xb->rank;
            for (int64_t d = 0; ok && d < n; d++)
                ok = v[d] >= 0 && v[d] <= xb->dims[d] && v[d] <= yb->dims[d];
            if (!ok)
                return cxla_infer_fail(in,
                                       "slice_sizes entry %" PRId64 " %s must hold one size per "
                                       "dimension within both the input %s and the output %s",
                                       l, INTS_STR(v, n), STR(xb), STR(yb));
        }
    }
    *out_slots = slots;
    return NULL;
}

/* |slots|: how many times a source or a target may appear (1 but in the in-place form). */
static cxla_status check_pairs(const cxla_instr *in, cxla_arena *arena, int64_t slots) {
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_SOURCE_TARGET_PAIRS);
    if (!a || a->kind != CXLA_ATTR_KIND_INT_LISTS)
        return cxla_infer_fail(in, "missing attribute source_target_pairs={{s,t},...}");
    const cxla_module *m = in->parent ? in->parent->module : NULL;
    int64_t channel;
    bool cross_partition = cxla_instr_int(in, CXLA_ATTR_CHANNEL_ID, &channel);
    int64_t limit = m ? (cross_partition ? m->num_partitions : m->replica_count) : 1;
    int64_t n = a->v.int_lists.count;
    for (int64_t i = 0; i < n; i++) {
        if (a->v.int_lists.lengths[i] != 2)
            return cxla_infer_fail(
                in, "source_target_pairs entry %" PRId64 " must be {source,target}", i);
        for (int k = 0; k < 2; k++) {
            int64_t v = a->v.int_lists.lists[i][k];
            if (v < 0 || (limit > 1 && v >= limit))
                return cxla_infer_fail(
                    in, "%s %" PRId64 " in source_target_pairs is outside 0..%" PRId64,
                    k ? "target" : "source", v, limit - 1);
        }
        /* The in-place form lets a device send (receive) one slice per slot. */
        for (int k = 0; k < 2; k++) {
            int64_t seen = 0;
            for (int64_t j = 0; j < i; j++)
                if (a->v.int_lists.lengths[j] == 2 &&
                    a->v.int_lists.lists[j][k] == a->v.int_lists.lists[i][k])
                    seen++;
            if (seen >= slots)
                return cxla_infer_fail(in,
                                       slots == 1 ? "%s %" PRId64
                                                    " appears twice in source_target_pairs"
                                                  : "%s %" PRId64 " appears more than %" PRId64
                                                    " times (the slices of the start indices) in "
                                                    "source_target_pairs",
                                       k ? "target" : "source", a->v.int_lists.lists[i][k], slots);
        }
    }
    return NULL;
}

CXLA_INFER_DECLARE(cxla_infer_collective_permute) {
    if (in->operand_count < 1) return cxla_infer_fail(in, "expects at least one operand");
    int64_t slots = 1;
    if (permute_in_place(in)) CXLA_RETURN_IF_ERROR(check_in_place(in, arena, &slots));
    CXLA_RETURN_IF_ERROR(check_pairs(in, arena, slots));
    if (permute_in_place(in)) return cxla_infer_copy(arena, OPS(1), out);
    CXLA_RETURN_IF_ERROR(arrays(in, arena));
    return cxla_infer_operands_tuple(in, arena, true, out);
}

CXLA_INFER_DECLARE(cxla_infer_collective_permute_start) {
    if (in->operand_count < 1) return cxla_infer_fail(in, "expects at least one operand");
    int64_t slots = 1;
    if (permute_in_place(in)) CXLA_RETURN_IF_ERROR(check_in_place(in, arena, &slots));
    CXLA_RETURN_IF_ERROR(check_pairs(in, arena, slots));
    cxla_shape io[2];
    if (permute_in_place(in)) {
        CXLA_RETURN_IF_ERROR(cxla_infer_copy(arena, OPS(0), &io[0]));
        CXLA_RETURN_IF_ERROR(cxla_infer_copy(arena, OPS(1), &io[1]));
    } else {
        CXLA_RETURN_IF_ERROR(arrays(in, arena));
        CXLA_RETURN_IF_ERROR(cxla_infer_operands_tuple(in, arena, true, &io[0]));
        io[1] = io[0];
    }
    /* (input, output, context...) with the context shapes as declared. */
    const cxla_shape *d = &in->shape;
    int64_t extra = d->type == CXLA_TUPLE && d->tuple_count > 2 ? d->tuple_count - 2 : 0;
    const cxla_shape **parts = cxla_arena_alloc_array(arena, (size_t)(2 + extra), sizeof(*parts));
    if (!parts) return OOM();
    parts[0] = &io[0];
    parts[1] = &io[1];
    for (int64_t i = 0; i < extra; i++) parts[2 + i] = &d->elements[2 + i];
    return cxla_infer_make_tuple(arena, 2 + extra, parts, out);
}

CXLA_INFER_DECLARE(cxla_infer_collective_permute_done) {
    const cxla_shape *s = OPS(0);
    if (s->type != CXLA_TUPLE || s->tuple_count < 2)
        return cxla_infer_fail(in,
                               "the operand must be a collective-permute-start's (input, "
                               "output, ...), got %s",
                               STR(s));
    return cxla_infer_copy(arena, &s->elements[1], out);
}

/* collective-broadcast(input[, root]): the input's shape (XLA's
 * InferCollectiveBroadcastShape; a second operand carries a dynamic root). */
CXLA_INFER_DECLARE(cxla_infer_collective_broadcast) {
    CXLA_RETURN_IF_ERROR(arrays(in, arena));
    int64_t g;
    CXLA_RETURN_IF_ERROR(cxla_infer_group_size(in, arena, true, false, &g));
    return cxla_infer_copy(arena, OPS(0), out);
}
