/* The collectives as steps of the cpu backend (cpu_service.h): replica-id, partition-id,
 * all-reduce, all-gather, reduce-scatter, all-to-all, collective-broadcast,
 * collective-permute and the -start forms of all-reduce, all-gather and
 * collective-permute (their -done forms only name a part of the -start's result: the plan
 * aliases them, cpu_steps.c). They meet the other devices through exec's communicator
 * (exec/collective.h: the same groups, messages and checks as the interpreter's handlers,
 * so the results are the interpreter's bit for bit): the arrays sent are views of the
 * arena's buffers, the arrays received are copied (or reduced) into them.
 *
 * The reducer of an all-reduce or reduce-scatter is a plain add, mul, max, min, and, or,
 * xor of the operands' type (interp_match_reducer): each is a typed loop that combines two
 * buffers element by element in group order (acc = op(acc, x), as the interpreter's
 * reduce_in_order), compiled with the library; f32, f64 and the integer types have loops
 * of their own that the C compiler vectorizes, the other types (f16, bf16, f8, complex,
 * sub-byte integers, pred) go through the interpreter's typed fold per element. An
 * all-reduce whose reducer is of another float type than its operands (a bf16 all-reduce
 * with an f32 add) converts, as the interpreter does: the values to the reducer's type,
 * combined in it, the result back. Any other reducer (a computation, a reduce-scatter's
 * of another type) keeps the interpreter's handler: cpu_collective_lookup returns NULL. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_service.h"
#include "exec/custom_call.h"
#include "exec/collective.h"
#include "interp/interp_reduce.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* ---- views of arena buffers --------------------------------------------------------- */

/* A literal that borrows a row-major buffer (what exec_exchange sends). It points into
 * itself: never moved once made. */
typedef struct view {
    cxla_literal lit;
    cxla_shape shape;
    cxla_layout layout;
    int64_t m2m[CXLA_MAX_RANK];
    int64_t dims[CXLA_MAX_RANK];
} view;

static void view_init(view *v, const cxla_shape *s, const void *data) {
    memset(v, 0, sizeof(*v));
    v->shape = *s;
    v->shape.layout = &v->layout;
    v->shape.dynamic = NULL;
    v->shape.dims = v->dims;
    v->layout.minor_to_major = v->m2m;
    for (int64_t i = 0; i < s->rank; i++) {
        v->dims[i] = s->dims[i];
        v->m2m[i] = s->rank - 1 - i;
    }
    v->lit.shape = &v->shape;
    cxla_shape_byte_size(s, &v->lit.size);
    cxla_shape_element_count(s, &v->lit.count);
    v->lit.data = v->lit.size ? (void *)data : NULL;
}

static size_t bytes_of(const cxla_shape *s) {
    size_t n = 0;
    if (cxla_shape_byte_size(s, &n)) return 0;
    return n;
}

/* The shape of result leaf |i| of |n| (a tuple of n, or one array). */
static const cxla_shape *result_leaf(const cxla_shape *shape, int64_t i, int64_t n) {
    if (shape->type == CXLA_TUPLE) return i < shape->tuple_count ? &shape->elements[i] : NULL;
    return n == 1 ? shape : NULL;
}

/* Checks that result |i| of |shape| has the dims of operand |op| with dimension |d|
 * multiplied by |mul| and divided by |div| (d < 0: the operand's dims), as the
 * interpreter's check_declared words it. */
static cxla_status check_declared(const cxla_instr *instr, const cxla_shape *shape, int64_t i,
                                  int64_t n, const cxla_shape *op, int64_t d, int64_t mul,
                                  int64_t div, int64_t participants) {
    const cxla_shape *decl = result_leaf(shape, i, n);
    int64_t dims[CXLA_MAX_RANK] = {0};
    for (int64_t j = 0; j < op->rank; j++) dims[j] = op->dims[j];
    if (d >= 0) dims[d] = dims[d] * mul / div;
    if (decl && decl->rank == op->rank) {
        bool same = true;
        for (int64_t j = 0; j < op->rank; j++) same = same && decl->dims[j] == dims[j];
        if (same) return NULL;
    }
    cxla_shape w = {.type = op->type, .rank = op->rank, .dims = dims};
    char *ds = decl ? cxla_shape_to_string(decl, CXLA_SHAPE_PRINT_NO_LAYOUT) : NULL;
    char *ws = cxla_shape_to_string(&w, CXLA_SHAPE_PRINT_NO_LAYOUT);
    cxla_status s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                               "the declared result %s does not match %s, the result of a "
                               "group of %" PRId64,
                               ds ? ds : "?", ws ? ws : "?", participants);
    free(ds);
    free(ws);
    return s;
}

/* The result holds one leaf per operand: a tuple of them, or one. */
static cxla_status check_pack(const cxla_instr *instr, const cxla_shape *shape, int64_t n) {
    if (shape->type == CXLA_TUPLE ? shape->tuple_count == n : n == 1) return NULL;
    return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                      "the result has %" PRId64 " elements for %" PRId64 " operands",
                      shape->type == CXLA_TUPLE ? shape->tuple_count : 1, n);
}

static void copy_operands(const cxla_instr *instr, void *const *out, const void *const *in) {
    for (int64_t i = 0; i < instr->operand_count; i++) {
        size_t b = bytes_of(&instr->operands[i]->shape);
        if (b && out[i] != in[i]) memcpy(out[i], in[i], b);
    }
}

static cxla_status next_sequence(cpu_svc_run *r, const cxla_instr *instr, int64_t *out) {
    if (instr->id < 0 || instr->id >= r->id_count)
        return exec_error(instr, CXLA_STATUS_INTERNAL, "the instruction has no id");
    *out = r->collective_counts[instr->id]++;
    return NULL;
}

/* Devices and this device's group (exec_collective_group). */
static cxla_status group_of(cpu_svc_run *r, const cxla_instr *instr, bool global_ids, exec_group *g,
                            int64_t *seq) {
    exec_devices dv;
    CXLA_RETURN_IF_ERROR(next_sequence(r, instr, seq));
    CXLA_RETURN_IF_ERROR(exec_collective_devices(r->options, r->module, instr, &dv));
    return exec_collective_group(r->options, instr, global_ids, &dv, g);
}

/* ---- combining with the reducer ------------------------------------------------------- */

#define INT_COMBINE(T)                                                                             \
    do {                                                                                           \
        T *restrict a = acc;                                                                       \
        const T *restrict b = x;                                                                   \
        switch (kind) {                                                                            \
        case INTERP_REDUCER_ADD:                                                                   \
            for (int64_t j = 0; j < n; j++) a[j] = (T)((uint64_t)a[j] + (uint64_t)b[j]);           \
            return;                                                                                \
        case INTERP_REDUCER_MUL:                                                                   \
            for (int64_t j = 0; j < n; j++) a[j] = (T)((uint64_t)a[j] * (uint64_t)b[j]);           \
            return;                                                                                \
        case INTERP_REDUCER_MAX:                                                                   \
            for (int64_t j = 0; j < n; j++) a[j] = b[j] > a[j] ? b[j] : a[j];                      \
            return;                                                                                \
        case INTERP_REDUCER_MIN:                                                                   \
            for (int64_t j = 0; j < n; j++) a[j] = b[j] < a[j] ? b[j] : a[j];                      \
            return;                                                                                \
        case INTERP_REDUCER_AND:                                                                   \
            for (int64_t j = 0; j < n; j++) a[j] &= b[j];                                          \
            return;                                                                                \
        case INTERP_REDUCER_OR:                                                                    \
            for (int64_t j = 0; j < n; j++) a[j] |= b[j];                                          \
            return;                                                                                \
        case INTERP_REDUCER_XOR:                                                                   \
            for (int64_t j = 0; j < n; j++) a[j] ^= b[j];                                          \
            return;                                                                                \
        default: return;                                                                           \
        }                                                                                          \
    } while (0)

/* IEEE 754-2019 maximum / minimum (NaN propagates, -0 < +0), as interp_reduce.c. */
#define FLOAT_COMBINE(T)                                                                           \
    do {                                                                                           \
        T *restrict a = acc;                                                                       \
        const T *restrict b = x;                                                                   \
        switch (kind) {                                                                            \
        case INTERP_REDUCER_ADD:                                                                   \
            for (int64_t j = 0; j < n; j++) a[j] += b[j];                                          \
            return;                                                                                \
        case INTERP_REDUCER_MUL:                                                                   \
            for (int64_t j = 0; j < n; j++) a[j] *= b[j];                                          \
            return;                                                                                \
        case INTERP_REDUCER_MAX:                                                                   \
            for (int64_t j = 0; j < n; j++) {                                                      \
                T p = a[j], q = b[j];                                                              \
                a[j] = p != p ? p : q != q ? q : p == q ? (signbit(p) ? q : p) : p > q ? p : q;    \
            }                                                                                      \
            return;                                                                                \
        case INTERP_REDUCER_MIN:                                                                   \
            for (int64_t j = 0; j < n; j++) {                                                      \
                T p = a[j], q = b[j];                                                              \
                a[j] = p != p ? p : q != q ? q : p == q ? (signbit(p) ? p : q) : p < q ? p : q;    \
            }                                                                                      \
            return;                                                                                \
        default: return;                                                                           \
        }                                                                                          \
    } while (0)

/* acc = kind(acc, x) element by element over |n| elements of |t|. */
static void combine(interp_reducer kind, cxla_type t, void *acc, const void *x, int64_t n) {
    switch (t) {
    case CXLA_F32: FLOAT_COMBINE(float);
    case CXLA_F64: FLOAT_COMBINE(double);
    case CXLA_S8: INT_COMBINE(int8_t);
    case CXLA_S16: INT_COMBINE(int16_t);
    case CXLA_S32: INT_COMBINE(int32_t);
    case CXLA_S64: INT_COMBINE(int64_t);
    case CXLA_U8: INT_COMBINE(uint8_t);
    case CXLA_U16: INT_COMBINE(uint16_t);
    case CXLA_U32: INT_COMBINE(uint32_t);
    case CXLA_U64: INT_COMBINE(uint64_t);
    default: break;
    }
    /* The interpreter's own typed fold, one element at a time. */
    static const int64_t zero = 0;
    const int64_t *offsets[1] = {&zero};
    const int64_t sizes[1] = {1};
    interp_space one = {.rank = 1, .count = 1, .sizes = sizes, .offsets = offsets};
    size_t es = cxla_type_storage(t);
    for (int64_t j = 0; j < n; j++) {
        uint8_t *a = (uint8_t *)acc + (size_t)j * es;
        interp_reduce_space(kind, t, x, j, &one, a, a);
    }
}

/* The reducer of |instr| when the steps can apply it (see the top of the file). With
 * |converted|, also a reducer of another float type than the operands' (all-reduce's). */
static interp_reducer reducer_in(const cxla_instr *instr, bool converted) {
    const cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!comp || instr->operand_count < 1) return INTERP_REDUCER_NONE;
    interp_reducer kind = interp_match_reducer(comp);
    cxla_type rt = comp->root->shape.type;
    for (int64_t i = 0; i < instr->operand_count; i++) {
        cxla_type t = instr->operands[i]->shape.type;
        bool other = converted && rt != t && cxla_type_is_float(rt) && cxla_type_is_float(t);
        if ((rt != t && !other) || !interp_reducer_supports(kind, rt)) return INTERP_REDUCER_NONE;
        if (cxla_type_bits(t) < 8 && t != CXLA_PRED && cxla_type_storage(t) == 1 &&
            !cxla_type_is_float(t))
            return INTERP_REDUCER_NONE; /* packed sub-byte integers: the handler */
    }
    return kind;
}

static interp_reducer reducer_of(const cxla_instr *instr) {
    return reducer_in(instr, false);
}

/* The leader's reduction of operand |i| for a reducer of type |rt| other than the operand's
 * (as the interpreter's reduce_converted): every member's values converted to |rt|,
 * combined in group order, the result converted back into |out|. */
static cxla_status combine_converted(interp_reducer kind, cxla_type rt, const cxla_literal *mine,
                                     cxla_literal *const *received, int64_t stride, int64_t others,
                                     void *out) {
    cxla_literal *acc = NULL, *back = NULL;
    cxla_status s = cxla_literal_convert(mine, rt, &acc);
    for (int64_t k = 0; k < others && !s; k++) {
        cxla_literal *c = NULL;
        s = cxla_literal_convert(received[k * stride], rt, &c);
        if (!s) combine(kind, rt, acc->data, c->data, acc->count);
        cxla_literal_free(c);
    }
    if (!s) s = cxla_literal_convert(acc, cxla_literal_type(mine), &back);
    if (!s && back->size) memcpy(out, back->data, back->size);
    cxla_literal_free(acc);
    cxla_literal_free(back);
    return s;
}

/* ---- replica-id, partition-id --------------------------------------------------------- */

static cxla_status make_id(const cxla_instr *instr, int64_t id, void *const *out) {
    int64_t count = 0;
    if (!cxla_type_is_array(instr->shape.type) || instr->shape.type == CXLA_TUPLE ||
        cxla_shape_element_count(&instr->shape, &count) || count != 1)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "the result must be a scalar");
    cxla_store_u64(instr->shape.type, out[0], (uint64_t)id);
    return NULL;
}

static cxla_status step_replica_id(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                   const void *const *in) {
    (void)in;
    return make_id(instr, r->options->replica_id, out);
}

static cxla_status step_partition_id(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                     const void *const *in) {
    (void)in;
    return make_id(instr, r->options->partition_id, out);
}

/* ---- all-reduce ------------------------------------------------------------------------ */

/* As the interpreter: the group's leader (its first member) receives the others'
 * operands, reduces them in group order and sends each the results. */
static cxla_status all_reduce_into(cpu_svc_run *r, const cxla_instr *instr, const cxla_shape *shape,
                                   void *const *out, const void *const *in) {
    int64_t n = instr->operand_count, seq = 0;
    CXLA_RETURN_IF_ERROR(check_pack(instr, shape, n));
    exec_group g;
    CXLA_RETURN_IF_ERROR(group_of(r, instr, true, &g, &seq));
    if (g.count == 1) {
        exec_group_free(&g);
        copy_operands(instr, out, in);
        return NULL;
    }
    interp_reducer kind = reducer_in(instr, true);
    cxla_type rt = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY)->root->shape.type;
    int64_t others = g.count - 1;
    bool leader = g.me == 0;
    int64_t peers = leader ? others : 1;
    view *mine = malloc((size_t)n * sizeof(*mine));
    const cxla_literal **expect = malloc((size_t)(peers * n + 1) * sizeof(*expect));
    const cxla_literal **sends = malloc((size_t)(peers * n + 1) * sizeof(*sends));
    cxla_literal **received = calloc((size_t)(peers * n + 1), sizeof(*received));
    cxla_status s = mine && expect && sends && received ? NULL : OOM();
    for (int64_t i = 0; i < n && !s; i++) view_init(&mine[i], &instr->operands[i]->shape, in[i]);
    for (int64_t k = 0; k < peers && !s; k++)
        for (int64_t i = 0; i < n; i++) expect[k * n + i] = &mine[i].lit;
    if (!s && leader) {
        s = exec_collective_exchange(r->options, instr, seq, n, 0, NULL, NULL, others,
                                     g.members + 1, expect, received, 1);
        for (int64_t i = 0; i < n && !s; i++) {
            const cxla_shape *os = &instr->operands[i]->shape;
            size_t b = bytes_of(os);
            if (os->type != rt) {
                s = combine_converted(kind, rt, &mine[i].lit, received + i, n, others, out[i]);
                view_init(&mine[i], os, out[i]);
                continue;
            }
            if (b) memmove(out[i], in[i], b);
            for (int64_t k = 1; k < g.count; k++)
                combine(kind, os->type, out[i], received[(k - 1) * n + i]->data, mine[i].lit.count);
            view_init(&mine[i], os, out[i]); /* what goes back: the results */
        }
        for (int64_t k = 0; k < others && !s; k++)
            for (int64_t i = 0; i < n; i++) sends[k * n + i] = &mine[i].lit;
        if (!s)
            s = exec_collective_exchange(r->options, instr, seq, n, others, g.members + 1, sends, 0,
                                         NULL, NULL, NULL, 1);
    } else if (!s) {
        for (int64_t i = 0; i < n; i++) sends[i] = &mine[i].lit;
        s = exec_collective_exchange(r->options, instr, seq, n, 1, g.members, sends, 0, NULL, NULL,
                                     NULL, 1);
        /* The leader waits for the whole group first (see interp_collective.c). */
        if (!s)
            s = exec_collective_exchange(r->options, instr, seq, n, 0, NULL, NULL, 1, g.members,
                                         expect, received, 2);
        for (int64_t i = 0; i < n && !s; i++)
            if (mine[i].lit.size) memcpy(out[i], received[i]->data, mine[i].lit.size);
    }
    for (int64_t k = 0; received && k < peers * n; k++) cxla_literal_free(received[k]);
    free(received);
    free(expect);
    free(sends);
    free(mine);
    exec_group_free(&g);
    return s;
}

static cxla_status step_all_reduce(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                   const void *const *in) {
    return all_reduce_into(r, instr, &instr->shape, out, in);
}

/* ---- all-gather, reduce-scatter, all-to-all --------------------------------------------- */

/* The single dimension of dimensions={d}, in range for every operand. */
static cxla_status the_dimension(const cxla_instr *instr, int64_t *out) {
    int64_t nd = 0;
    const int64_t *dl = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd);
    if (!dl || nd != 1)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "needs dimensions={d}");
    for (int64_t i = 0; i < instr->operand_count; i++)
        if (dl[0] < 0 || dl[0] >= instr->operands[i]->shape.rank)
            return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                              "dimension %" PRId64 " is out of range for operand %" PRId64, dl[0],
                              i);
    *out = dl[0];
    return NULL;
}

/* outer (dims before |d|) and the bytes of one slab at and after |d| of |s|. */
static void slabs(const cxla_shape *s, int64_t d, int64_t *outer, size_t *slab) {
    int64_t o = 1, inner = 1;
    for (int64_t j = 0; j < d; j++) o *= s->dims[j];
    for (int64_t j = d + 1; j < s->rank; j++) inner *= s->dims[j];
    *outer = o;
    *slab = (size_t)(s->dims[d] * inner) * cxla_type_storage(s->type);
}

/* |count| arrays of shape |piece| concatenated along |d| into |dst|. */
static void concat_into(void *dst, const cxla_shape *piece, int64_t d,
                        const cxla_literal *const *parts, int64_t count) {
    int64_t outer;
    size_t chunk;
    slabs(piece, d, &outer, &chunk);
    for (int64_t o = 0; o < outer && chunk; o++)
        for (int64_t k = 0; k < count; k++)
            memcpy((uint8_t *)dst + ((size_t)o * (size_t)count + (size_t)k) * chunk,
                   (const uint8_t *)parts[k]->data + (size_t)o * chunk, chunk);
}

/* Piece |k| of |count| along |d| of |src| (shape |s|) into |dst|. */
static void split_into(void *dst, const void *src, const cxla_shape *s, int64_t d, int64_t count,
                       int64_t k) {
    int64_t outer;
    size_t stride;
    slabs(s, d, &outer, &stride);
    size_t chunk = stride / (size_t)count;
    for (int64_t o = 0; o < outer && chunk; o++)
        memcpy((uint8_t *)dst + (size_t)o * chunk,
               (const uint8_t *)src + (size_t)o * stride + (size_t)k * chunk, chunk);
}

static cxla_status all_gather_into(cpu_svc_run *r, const cxla_instr *instr, const cxla_shape *shape,
                                   void *const *out, const void *const *in) {
    int64_t n = instr->operand_count, seq = 0, d = 0;
    CXLA_RETURN_IF_ERROR(check_pack(instr, shape, n));
    CXLA_RETURN_IF_ERROR(the_dimension(instr, &d));
    exec_group g;
    CXLA_RETURN_IF_ERROR(group_of(r, instr, true, &g, &seq));
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++)
        s = check_declared(instr, shape, i, n, &instr->operands[i]->shape, d, g.count, 1, g.count);
    if (s || g.count == 1) {
        exec_group_free(&g);
        if (!s) copy_operands(instr, out, in);
        return s;
    }
    view *mine = malloc((size_t)n * sizeof(*mine));
    const cxla_literal **outgoing = malloc((size_t)(g.count * n) * sizeof(*outgoing));
    const cxla_literal **column = malloc((size_t)g.count * sizeof(*column));
    exec_gathered t = {0};
    s = mine && outgoing && column ? NULL : OOM();
    for (int64_t i = 0; i < n && !s; i++) view_init(&mine[i], &instr->operands[i]->shape, in[i]);
    for (int64_t k = 0; k < g.count && !s; k++)
        for (int64_t i = 0; i < n; i++) outgoing[k * n + i] = &mine[i].lit;
    if (!s) s = exec_collective_exchange_in_group(r->options, instr, seq, &g, n, outgoing, &t);
    for (int64_t i = 0; i < n && !s; i++) {
        for (int64_t k = 0; k < g.count; k++) column[k] = t.table[k * n + i];
        concat_into(out[i], &instr->operands[i]->shape, d, column, g.count);
    }
    exec_gathered_free(&t);
    free(mine);
    free(outgoing);
    free(column);
    exec_group_free(&g);
    return s;
}

static cxla_status step_all_gather(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                   const void *const *in) {
    return all_gather_into(r, instr, &instr->shape, out, in);
}

/* Leaves of element |e| of the tuple result start after the leaves of the ones before. */
static int64_t leaves_before(const cxla_shape *s, int64_t e) {
    int64_t n = 0;
    for (int64_t i = 0; i < e; i++) n += exec_leaf_count(&s->elements[i]);
    return n;
}

/* all-gather-start: (operand(s), result(s)). */
static cxla_status step_all_gather_start(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                         const void *const *in) {
    const cxla_shape *d = &instr->shape;
    if (d->type != CXLA_TUPLE || d->tuple_count != 2)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "the result must be an (input, output) tuple");
    CXLA_RETURN_IF_ERROR(check_pack(instr, &d->elements[0], instr->operand_count));
    CXLA_RETURN_IF_ERROR(all_gather_into(r, instr, &d->elements[1], out + leaves_before(d, 1), in));
    copy_operands(instr, out, in);
    return NULL;
}

static cxla_status step_reduce_scatter(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                       const void *const *in) {
    int64_t n = instr->operand_count, seq = 0, d = 0;
    const cxla_shape *shape = &instr->shape;
    CXLA_RETURN_IF_ERROR(check_pack(instr, shape, n));
    CXLA_RETURN_IF_ERROR(the_dimension(instr, &d));
    exec_group g;
    CXLA_RETURN_IF_ERROR(group_of(r, instr, true, &g, &seq));
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++) {
        const cxla_shape *os = &instr->operands[i]->shape;
        if (os->dims[d] % g.count != 0)
            s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                           "dimension %" PRId64 " of operand %" PRId64 " (%" PRId64
                           ") is not divisible by the %" PRId64 " participants",
                           d, i, os->dims[d], g.count);
        else
            s = check_declared(instr, shape, i, n, os, d, 1, g.count, g.count);
    }
    if (s || g.count == 1) {
        exec_group_free(&g);
        if (!s) copy_operands(instr, out, in);
        return s;
    }
    interp_reducer kind = reducer_of(instr);
    /* The shards, piece k of each operand for member k: one buffer of them all. */
    size_t total = 0;
    for (int64_t i = 0; i < n; i++) total += bytes_of(&instr->operands[i]->shape);
    uint8_t *buf = malloc(total ? total : 1);
    view *shards = malloc((size_t)(g.count * n) * sizeof(*shards));
    const cxla_literal **outgoing = malloc((size_t)(g.count * n) * sizeof(*outgoing));
    exec_gathered t = {0};
    s = buf && shards && outgoing ? NULL : OOM();
    size_t at = 0;
    for (int64_t k = 0; k < g.count && !s; k++) {
        for (int64_t i = 0; i < n; i++) {
            const cxla_shape *os = &instr->operands[i]->shape;
            int64_t dims[CXLA_MAX_RANK];
            for (int64_t j = 0; j < os->rank; j++) dims[j] = os->dims[j];
            dims[d] /= g.count;
            cxla_shape ps = {.type = os->type, .rank = os->rank, .dims = dims};
            split_into(buf + at, in[i], os, d, g.count, k);
            view_init(&shards[k * n + i], &ps, buf + at);
            outgoing[k * n + i] = &shards[k * n + i].lit;
            at += bytes_of(&ps);
        }
    }
    if (!s) s = exec_collective_exchange_in_group(r->options, instr, seq, &g, n, outgoing, &t);
    for (int64_t i = 0; i < n && !s; i++) {
        const cxla_literal *first = t.table[i];
        if (first->size) memcpy(out[i], first->data, first->size);
        for (int64_t k = 1; k < g.count; k++)
            combine(kind, first->shape->type, out[i], t.table[k * n + i]->data, first->count);
    }
    exec_gathered_free(&t);
    free(buf);
    free(shards);
    free(outgoing);
    exec_group_free(&g);
    return s;
}

static cxla_status step_all_to_all(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                   const void *const *in) {
    int64_t n = instr->operand_count, seq = 0, d = 0, nd = 0;
    exec_group g;
    CXLA_RETURN_IF_ERROR(group_of(r, instr, false, &g, &seq));
    bool array_form = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd) != NULL;
    cxla_status s = NULL;
    if (array_form) {
        s = the_dimension(instr, &d);
        if (!s && n != 1)
            s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                           "the array form (dimensions=) takes one operand, got %" PRId64, n);
        int64_t size = s ? 0 : instr->operands[0]->shape.dims[d];
        if (!s && size % g.count != 0)
            s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                           "dimension %" PRId64 " (%" PRId64 ") is not divisible by the %" PRId64
                           " participants",
                           d, size, g.count);
    } else if (n != g.count) {
        s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                       "the tuple form takes one operand per participant (%" PRId64
                       "), got %" PRId64,
                       g.count, n);
    }
    if (!s) s = check_pack(instr, &instr->shape, n);
    if (!s && array_form)
        s = check_declared(instr, &instr->shape, 0, 1, &instr->operands[0]->shape, -1, 1, 1,
                           g.count);
    if (s || g.count == 1) {
        exec_group_free(&g);
        if (!s) copy_operands(instr, out, in);
        return s;
    }
    const cxla_shape *os = &instr->operands[0]->shape;
    int64_t dims[CXLA_MAX_RANK];
    for (int64_t j = 0; j < os->rank; j++) dims[j] = os->dims[j];
    if (array_form) dims[d] /= g.count;
    cxla_shape ps = {.type = os->type, .rank = os->rank, .dims = dims};
    size_t piece = array_form ? bytes_of(&ps) : 0;
    uint8_t *buf = array_form ? malloc(piece * (size_t)g.count + 1) : NULL;
    view *views = malloc((size_t)g.count * sizeof(*views));
    const cxla_literal **outgoing = malloc((size_t)g.count * sizeof(*outgoing));
    exec_gathered t = {0};
    s = views && outgoing && (buf || !array_form) ? NULL : OOM();
    for (int64_t k = 0; k < g.count && !s; k++) {
        if (array_form) {
            split_into(buf + (size_t)k * piece, in[0], os, d, g.count, k);
            view_init(&views[k], &ps, buf + (size_t)k * piece);
        } else {
            view_init(&views[k], &instr->operands[k]->shape, in[k]);
        }
        outgoing[k] = &views[k].lit;
    }
    if (!s) s = exec_collective_exchange_in_group(r->options, instr, seq, &g, 1, outgoing, &t);
    if (!s && array_form) {
        concat_into(out[0], &ps, d, t.table, g.count);
    } else if (!s) {
        for (int64_t k = 0; k < g.count; k++)
            if (t.table[k]->size) memcpy(out[k], t.table[k]->data, t.table[k]->size);
    }
    exec_gathered_free(&t);
    free(buf);
    free(views);
    free(outgoing);
    exec_group_free(&g);
    return s;
}

/* ---- collective-broadcast, collective-permute --------------------------------------------- */

static cxla_status step_collective_broadcast(cpu_svc_run *r, const cxla_instr *instr,
                                             void *const *out, const void *const *in) {
    int64_t n = instr->operand_count, seq = 0;
    CXLA_RETURN_IF_ERROR(check_pack(instr, &instr->shape, n));
    exec_group g;
    CXLA_RETURN_IF_ERROR(group_of(r, instr, false, &g, &seq));
    int64_t others = g.count - 1;
    view *mine = malloc((size_t)n * sizeof(*mine));
    const cxla_literal **sends = malloc((size_t)((others ? others : 1) * n) * sizeof(*sends));
    cxla_literal **received = calloc((size_t)n, sizeof(*received));
    cxla_status s = mine && sends && received ? NULL : OOM();
    for (int64_t i = 0; i < n && !s; i++) view_init(&mine[i], &instr->operands[i]->shape, in[i]);
    if (!s && g.me == 0) { /* the root sends to every other member and keeps its operands */
        for (int64_t j = 0; j < others; j++)
            for (int64_t i = 0; i < n; i++) sends[j * n + i] = &mine[i].lit;
        s = exec_collective_exchange(r->options, instr, seq, n, others, g.members + 1, sends, 0,
                                     NULL, NULL, NULL, 1);
        if (!s) copy_operands(instr, out, in);
    } else if (!s) {
        for (int64_t i = 0; i < n; i++) sends[i] = &mine[i].lit;
        s = exec_collective_exchange(r->options, instr, seq, n, 0, NULL, NULL, 1, g.members, sends,
                                     received, 1);
        for (int64_t i = 0; i < n && !s; i++)
            if (received[i]->size) memcpy(out[i], received[i]->data, received[i]->size);
    }
    for (int64_t i = 0; received && i < n; i++) cxla_literal_free(received[i]);
    free(received);
    free(sends);
    free(mine);
    exec_group_free(&g);
    return s;
}

/* Replica r receives what the pair {s, r} sends; one that receives nothing gets zeros
 * (its own operands when it sends to itself). As the interpreter's permute_output. */
static cxla_status permute_into(cpu_svc_run *r, const cxla_instr *instr, const cxla_shape *shape,
                                void *const *out, const void *const *in) {
    int64_t n = instr->operand_count, seq = 0;
    CXLA_RETURN_IF_ERROR(check_pack(instr, shape, n));
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_SOURCE_TARGET_PAIRS);
    if (!a || a->kind != CXLA_ATTR_KIND_INT_LISTS)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "missing source_target_pairs={{s,t},...}");
    exec_devices dv;
    CXLA_RETURN_IF_ERROR(next_sequence(r, instr, &seq));
    CXLA_RETURN_IF_ERROR(exec_collective_devices(r->options, r->module, instr, &dv));
    int64_t channel;
    bool by_partition = cxla_instr_int(instr, CXLA_ATTR_CHANNEL_ID, &channel);
    const char *word = by_partition ? "partition" : "replica";
    int64_t space = by_partition ? dv.partitions : dv.replicas;
    int64_t me = by_partition ? dv.partition : dv.replica;
    int64_t pairs = a->v.int_lists.count, source = -1;
    int64_t *targets = malloc((size_t)(pairs ? pairs : 1) * sizeof(*targets));
    view *mine = malloc((size_t)(n ? n : 1) * sizeof(*mine));
    cxla_literal **received = calloc((size_t)(n ? n : 1), sizeof(*received));
    const cxla_literal **sends = NULL, **expect = NULL;
    int64_t target_count = 0;
    bool to_self = false;
    cxla_status s = targets && mine && received ? NULL : OOM();
    for (int64_t i = 0; i < pairs && !s; i++) {
        const int64_t *p = a->v.int_lists.lists[i];
        if (a->v.int_lists.lengths[i] != 2) {
            s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                           "source_target_pairs entry %" PRId64 " must be {source,target}", i);
            break;
        }
        for (int k = 0; k < 2 && !s; k++)
            if (p[k] < 0 || (r->options->comm && p[k] >= space))
                s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                               "source_target_pairs name %s %" PRId64 " but the run has %" PRId64
                               " %ss",
                               word, p[k], space, word);
        if (s) break;
        if (p[1] == me) {
            if (source >= 0)
                s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                               "%s %" PRId64 " is the target of two pairs", word, me);
            source = p[0];
        }
        if (p[0] == me) {
            if (p[1] == me)
                to_self = true;
            else
                targets[target_count++] = by_partition ? dv.replica * dv.partitions + p[1]
                                                       : p[1] * dv.partitions + dv.partition;
        }
    }
    int64_t from = source < 0 || source == me ? -1
                   : by_partition             ? dv.replica * dv.partitions + source
                                              : source * dv.partitions + dv.partition;
    if (!s) {
        sends = malloc((size_t)((target_count ? target_count : 1) * n) * sizeof(*sends));
        expect = malloc((size_t)(n ? n : 1) * sizeof(*expect));
        if (!sends || !expect) s = OOM();
    }
    for (int64_t i = 0; i < n && !s; i++) {
        view_init(&mine[i], &instr->operands[i]->shape, in[i]);
        expect[i] = &mine[i].lit;
    }
    for (int64_t j = 0; j < target_count && !s; j++)
        for (int64_t i = 0; i < n; i++) sends[j * n + i] = &mine[i].lit;
    if (!s)
        s = exec_collective_exchange(r->options, instr, seq, n, target_count, targets, sends,
                                     from >= 0 ? 1 : 0, &from, expect, received, 1);
    for (int64_t i = 0; i < n && !s; i++) {
        size_t b = bytes_of(&instr->operands[i]->shape);
        if (!b) continue;
        if (from >= 0)
            memcpy(out[i], received[i]->data, b);
        else if (to_self)
            memmove(out[i], in[i], b);
        else
            memset(out[i], 0, b);
    }
    for (int64_t i = 0; received && i < n; i++) cxla_literal_free(received[i]);
    free(received);
    free(targets);
    free(sends);
    free(expect);
    free(mine);
    return s;
}

static cxla_status step_collective_permute(cpu_svc_run *r, const cxla_instr *instr,
                                           void *const *out, const void *const *in) {
    return permute_into(r, instr, &instr->shape, out, in);
}

/* collective-permute-start: (input, output, context...), the contexts zeros. */
static cxla_status step_collective_permute_start(cpu_svc_run *r, const cxla_instr *instr,
                                                 void *const *out, const void *const *in) {
    const cxla_shape *d = &instr->shape;
    if (d->type != CXLA_TUPLE || d->tuple_count < 2)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "the result must be an (input, output, context...) tuple");
    CXLA_RETURN_IF_ERROR(check_pack(instr, &d->elements[0], instr->operand_count));
    CXLA_RETURN_IF_ERROR(permute_into(r, instr, &d->elements[1], out + leaves_before(d, 1), in));
    copy_operands(instr, out, in);
    for (int64_t e = 2; e < d->tuple_count; e++) {
        const cxla_shape *cs = &d->elements[e];
        if (cs->type == CXLA_TUPLE || !cxla_type_is_array(cs->type)) continue;
        size_t b = bytes_of(cs);
        if (b) memset(out[leaves_before(d, e)], 0, b);
    }
    return NULL;
}

/* ---- lookup ---------------------------------------------------------------------------- */

static bool arrays_only(const cxla_instr *instr) {
    for (int64_t i = 0; i < instr->operand_count; i++) {
        const cxla_shape *s = &instr->operands[i]->shape;
        if (s->type == CXLA_TUPLE || !cxla_type_is_array(s->type)) return false;
        if (cxla_type_bits(s->type) < 8) return false; /* packed: byte offsets do not split */
    }
    return true;
}

cpu_svc_fn cpu_collective_lookup(const cxla_instr *instr) {
    switch (instr->opcode) {
    case CXLA_OP_REPLICA_ID: return step_replica_id;
    case CXLA_OP_PARTITION_ID: return step_partition_id;
    default: break;
    }
    if (!arrays_only(instr)) return NULL;
    switch (instr->opcode) {
    case CXLA_OP_ALL_REDUCE:
    case CXLA_OP_ALL_REDUCE_START:
        return reducer_in(instr, true) != INTERP_REDUCER_NONE ? step_all_reduce : NULL;
    case CXLA_OP_REDUCE_SCATTER:
        return reducer_of(instr) != INTERP_REDUCER_NONE ? step_reduce_scatter : NULL;
    case CXLA_OP_ALL_GATHER: return step_all_gather;
    case CXLA_OP_ALL_GATHER_START: return step_all_gather_start;
    case CXLA_OP_ALL_TO_ALL: return step_all_to_all;
    case CXLA_OP_COLLECTIVE_BROADCAST: return step_collective_broadcast;
    /* Several array operands permute together (XLA's list form; the -done gives one
     * result per operand); the combined in-place form has a tuple operand and keeps the
     * handler for the interpreter's error (arrays_only). */
    case CXLA_OP_COLLECTIVE_PERMUTE:
        return instr->operand_count >= 1 ? step_collective_permute : NULL;
    case CXLA_OP_COLLECTIVE_PERMUTE_START:
        return instr->operand_count >= 1 ? step_collective_permute_start : NULL;
    default: return NULL;
    }
}
