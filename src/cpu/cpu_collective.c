/* The collectives as steps of the cpu backend (cpu_service.h): replica-id, partition-id,
 * all-reduce, all-gather, reduce-scatter, all-to-all, ragged-all-to-all,
 * collective-broadcast, collective-reduce, collective-permute and the -start forms of
 * all-reduce, all-gather and collective-permute (their -done forms only name a part of the
 * -start's result: the plan aliases them, cpu_steps.c). They meet the other devices through
 * exec's communicator (exec/collective.h: the same groups, messages and checks as the
 * interpreter's handlers, so the results are the interpreter's bit for bit): the arrays sent
 * are views of the arena's buffers, the arrays received are copied (or reduced) into them.
 * Sub-byte integers are one per byte in the arena, as in the interpreter's values: their
 * arrays split and join as any other type's.
 *
 * The reducer of an all-reduce, reduce-scatter or collective-reduce combines two buffers
 * element by element in group order (acc = f(acc, x), as the interpreter's
 * reduce_in_order). A plain add, mul, max, min, and, or, xor (interp_match_reducer) is a
 * typed loop compiled with the library: f32, f64 and the integer types have loops of their
 * own that the C compiler vectorizes, the other types (f16, bf16, f8, complex, sub-byte
 * integers, pred) go through the interpreter's typed fold per element. Any other reducer
 * that the emitter writes (emit_combine.h: scalar parameters and root of one type, its
 * instructions those of emit_scalar.c) is a combine function compiled with the module
 * under the collective's id, which the step gets as cpu_svc_run.kernel
 * (cpu_collective_combine_lookup); it is never interpreted. Values of another type than
 * the reducer's (a bf16 all-reduce with an f32 add) are converted as the interpreter does:
 * to the reducer's type, combined in it, the result back. A reducer the emitter cannot
 * write (values of more than 64 elements inside it) is evaluated element by element by
 * the interpreter's scalar evaluation, as the interpreter's reduce_in_order does. The
 * combined in-place form of collective-permute (docs/semantics.md) has steps of its own,
 * with the interpreter's messages. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_service.h"
#include "cpu/emit_combine.h"
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

/* Devices (into |out_dv| when not NULL) and this device's group (exec_collective_group). */
static cxla_status group_in(cpu_svc_run *r, const cxla_instr *instr, bool global_ids, exec_group *g,
                            int64_t *seq, exec_devices *out_dv) {
    exec_devices dv;
    CXLA_RETURN_IF_ERROR(next_sequence(r, instr, seq));
    CXLA_RETURN_IF_ERROR(exec_collective_devices(r->options, r->module, instr, &dv));
    if (out_dv) *out_dv = dv;
    return exec_collective_group(r->options, instr, global_ids, &dv, g);
}

static cxla_status group_of(cpu_svc_run *r, const cxla_instr *instr, bool global_ids, exec_group *g,
                            int64_t *seq) {
    return group_in(r, instr, global_ids, g, seq, NULL);
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

/* A reducer the emitter cannot write as a combine function (values of more than 64
 * elements inside it, instructions the scalar writer does not take): the
 * interpreter's scalar evaluation of the computation, element by element, as the
 * interpreter's reduce_in_order calls it; exact, and slow. */
typedef struct evaluated {
    interp_ctx ctx;
    interp_scalar_fn fn;
} evaluated;

/* How a step combines with the reducer of its instruction: a plain operation (kind) of the
 * reducer's type |rt|, or (kind NONE) the combine function compiled with the module
 * (cpu_service.h, cpu_svc_run.kernel), or (kind NONE, no function) the evaluated reducer.
 * Values of another type than |rt| are converted to it and back, as the interpreter's
 * reduce_converted. reducer_release frees it. */
typedef struct reducer {
    interp_reducer kind;
    cxla_type rt;
    cpu_combine_fn fn;
    evaluated *eval;
} reducer;

/* The plain reducer of |instr| when the steps can apply it as a typed loop (see the top of
 * the file): every operand of the reducer's type or converted to it. */
static interp_reducer plain_reducer(const cxla_instr *instr) {
    const cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!comp || !comp->root || instr->operand_count < 1) return INTERP_REDUCER_NONE;
    interp_reducer kind = interp_match_reducer(comp);
    cxla_type rt = comp->root->shape.type;
    if (!cxla_type_is_array(rt) || !interp_reducer_supports(kind, rt)) return INTERP_REDUCER_NONE;
    return kind;
}

static void reducer_release(reducer *rd) {
    if (!rd->eval) return;
    if (rd->eval->fn.args) interp_scalar_fn_deinit(&rd->eval->fn);
    interp_ctx_deinit(&rd->eval->ctx);
    free(rd->eval);
    rd->eval = NULL;
}

/* The evaluated reducer of |instr| (see evaluated) into |out|. */
static cxla_status reducer_evaluated(cpu_svc_run *r, const cxla_instr *instr,
                                     const cxla_computation *comp, reducer *out) {
    out->eval = calloc(1, sizeof(*out->eval));
    if (!out->eval) return OOM();
    cxla_status s = interp_ctx_init(&out->eval->ctx, r->module, r->options);
    if (s) {
        free(out->eval);
        out->eval = NULL;
        return s;
    }
    s = interp_scalar_fn_init(&out->eval->fn, &out->eval->ctx, instr, comp);
    if (!s && out->eval->fn.arg_count != 2)
        s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                       "to_apply '%s' must take two scalars, it takes %" PRId64, comp->name,
                       out->eval->fn.arg_count);
    if (!s) s = interp_scalar_fn_expect(&out->eval->fn, 0, out->rt);
    if (!s) s = interp_scalar_fn_expect(&out->eval->fn, 1, out->rt);
    if (s) reducer_release(out);
    return s;
}

/* The reducer of |instr| for a run: its plain operation, else the run's compiled combine
 * function (an internal error when the plan has none but the emitter writes the reducer),
 * else the evaluated reducer. */
static cxla_status reducer_for(cpu_svc_run *r, const cxla_instr *instr, reducer *out) {
    const cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    memset(out, 0, sizeof(*out));
    if (!comp || !comp->root)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "missing to_apply=");
    out->kind = plain_reducer(instr);
    out->rt = comp->root->shape.type;
    if (out->kind != INTERP_REDUCER_NONE) return NULL;
    if (!cpu_emit_combine_ok(comp)) return reducer_evaluated(r, instr, comp, out);
    /* The plan holds the combine function as a kernel (the library's symbol stored as
     * one, as cpu_backend.c stores every symbol): its bits are the function's address. */
    cpu_kernel_fn k = r->kernel;
    _Static_assert(sizeof(k) == sizeof(out->fn), "function pointers of one size");
    if (k) memcpy(&out->fn, &k, sizeof(k));
    if (!out->fn)
        return exec_error(instr, CXLA_STATUS_INTERNAL,
                          "the reducer %s has no compiled combine function", comp->name);
    return NULL;
}

static cxla_status combine_with(const reducer *rd, void *acc, const void *x, int64_t n) {
    if (rd->kind != INTERP_REDUCER_NONE) {
        combine(rd->kind, rd->rt, acc, x, n);
        return NULL;
    }
    if (rd->fn) {
        if (n > 0) rd->fn(acc, x, n);
        return NULL;
    }
    size_t es = cxla_type_storage(rd->rt);
    cxla_status s = NULL;
    for (int64_t j = 0; j < n && !s; j++) {
        uint8_t *a = (uint8_t *)acc + (size_t)j * es;
        interp_scalar_set_arg(&rd->eval->fn, 0, a);
        interp_scalar_set_arg(&rd->eval->fn, 1, (const uint8_t *)x + (size_t)j * es);
        cxla_literal *v = NULL;
        s = interp_scalar_call(&rd->eval->fn, &v);
        const void *p = s ? NULL : interp_scalar_result(&rd->eval->fn, v, 0, 1, rd->rt, &s);
        if (p) memcpy(a, p, es);
        cxla_literal_free(v);
    }
    return s;
}

/* column[0] combined with column[1], ... column[count-1] in that order, element by element
 * (the interpreter's reduce_in_order), into |out| (the bytes of column[0]'s shape). Values
 * of another type than the reducer's are converted to it, combined, and converted back. */
static cxla_status reduce_column(const reducer *rd, const cxla_literal *const *column,
                                 int64_t count, void *out) {
    const cxla_literal *first = column[0];
    if (first->shape->type == rd->rt) {
        if (first->size && out != first->data) memmove(out, first->data, first->size);
        cxla_status s = NULL;
        for (int64_t k = 1; k < count && !s; k++)
            s = combine_with(rd, out, column[k]->data, first->count);
        return s;
    }
    cxla_literal *acc = NULL, *back = NULL;
    cxla_status s = cxla_literal_convert(first, rd->rt, &acc);
    for (int64_t k = 1; k < count && !s; k++) {
        cxla_literal *c = NULL;
        s = cxla_literal_convert(column[k], rd->rt, &c);
        if (!s) s = combine_with(rd, acc->data, c->data, acc->count);
        cxla_literal_free(c);
    }
    if (!s) s = cxla_literal_convert(acc, first->shape->type, &back);
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

/* The group's first member receives the other members' operands and reduces them with its
 * own (|mine|) in group order into |out| (all-reduce's leader, collective-reduce's root). */
static cxla_status leader_reduce(cpu_svc_run *r, const cxla_instr *instr, int64_t seq,
                                 const exec_group *g, const reducer *rd, const view *mine,
                                 void *const *out) {
    int64_t n = instr->operand_count, others = g->count - 1;
    const cxla_literal **expect = malloc((size_t)(others * n + 1) * sizeof(*expect));
    cxla_literal **received = calloc((size_t)(others * n + 1), sizeof(*received));
    const cxla_literal **column = malloc((size_t)g->count * sizeof(*column));
    cxla_status s = expect && received && column ? NULL : OOM();
    for (int64_t k = 0; k < others && !s; k++)
        for (int64_t i = 0; i < n; i++) expect[k * n + i] = &mine[i].lit;
    if (!s)
        s = exec_collective_exchange(r->options, instr, seq, n, 0, NULL, NULL, others,
                                     g->members + 1, expect, received, 1);
    for (int64_t i = 0; i < n && !s; i++) {
        column[0] = &mine[i].lit;
        for (int64_t k = 1; k < g->count; k++) column[k] = received[(k - 1) * n + i];
        s = reduce_column(rd, column, g->count, out[i]);
    }
    for (int64_t k = 0; received && k < others * n; k++) cxla_literal_free(received[k]);
    free(received);
    free(expect);
    free(column);
    return s;
}

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
    reducer rd = {0};
    int64_t others = g.count - 1;
    bool leader = g.me == 0;
    view *mine = malloc((size_t)n * sizeof(*mine));
    const cxla_literal **sends = malloc((size_t)((leader ? others : 1) * n + 1) * sizeof(*sends));
    cxla_literal **received = calloc((size_t)(n + 1), sizeof(*received));
    cxla_status s = mine && sends && received ? NULL : OOM();
    if (!s) s = reducer_for(r, instr, &rd);
    for (int64_t i = 0; i < n && !s; i++) view_init(&mine[i], &instr->operands[i]->shape, in[i]);
    if (!s && leader) {
        s = leader_reduce(r, instr, seq, &g, &rd, mine, out);
        for (int64_t i = 0; i < n && !s; i++) /* what goes back: the results */
            view_init(&mine[i], &instr->operands[i]->shape, out[i]);
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
                                         sends, received, 2);
        for (int64_t i = 0; i < n && !s; i++)
            if (mine[i].lit.size) memcpy(out[i], received[i]->data, mine[i].lit.size);
    }
    for (int64_t k = 0; received && k < n; k++) cxla_literal_free(received[k]);
    free(received);
    free(sends);
    free(mine);
    reducer_release(&rd);
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
    reducer rd;
    s = reducer_for(r, instr, &rd);
    if (s) {
        exec_group_free(&g);
        return s;
    }
    /* The shards, piece k of each operand for member k: one buffer of them all. */
    size_t total = 0;
    for (int64_t i = 0; i < n; i++) total += bytes_of(&instr->operands[i]->shape);
    uint8_t *buf = malloc(total ? total : 1);
    view *shards = malloc((size_t)(g.count * n) * sizeof(*shards));
    const cxla_literal **outgoing = malloc((size_t)(g.count * n) * sizeof(*outgoing));
    const cxla_literal **column = malloc((size_t)g.count * sizeof(*column));
    exec_gathered t = {0};
    s = buf && shards && outgoing && column ? NULL : OOM();
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
        for (int64_t k = 0; k < g.count; k++) column[k] = t.table[k * n + i];
        s = reduce_column(&rd, column, g.count, out[i]);
    }
    exec_gathered_free(&t);
    free(column);
    free(buf);
    free(shards);
    free(outgoing);
    reducer_release(&rd);
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

/* ---- collective-permute, the combined in-place form ------------------------------------
 *
 * As the interpreter's permute_in_place (its comment says the semantics): the result's
 * leaves start as copies of the output buffers, and each pair that targets this device, in
 * order, writes its slice's window from its source's input buffers. A message from a
 * source holds its input buffers (views of the arena) and its input start indices as one
 * s64 array (for each buffer, each slice, each dimension), the interpreter's message. */

/* The leaves of the in-place form's operands: |nb| input buffers, |nb| output buffers,
 * then the input start indices and the output start indices, |starts| scalars each (for
 * each buffer, each slice, each dimension: the depth-first order of their tuples). */
typedef struct in_place {
    int64_t nb, k, starts;
    int64_t ranks[64];
    const cxla_shape *in[64], *out[64];
    const cxla_attr *pairs, *sizes;
} in_place;

/* The integer scalar leaves of |s| depth first into |types| from |*n| on. */
static void scalar_leaf_types(const cxla_shape *s, cxla_type *types, int64_t *n, int64_t max) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            scalar_leaf_types(&s->elements[i], types, n, max);
        return;
    }
    if (*n < max) types[*n] = s->type;
    (*n)++;
}

static cxla_status in_place_form(const cxla_instr *instr, in_place *f) {
    const cxla_shape *x = &instr->operands[0]->shape, *y = &instr->operands[1]->shape;
    bool tuple = x->type == CXLA_TUPLE;
    f->nb = tuple ? x->tuple_count : 1;
    f->pairs = cxla_instr_attr(instr, CXLA_ATTR_SOURCE_TARGET_PAIRS);
    f->sizes = cxla_instr_attr(instr, CXLA_ATTR_SLICE_SIZES);
    if (f->nb > 64) /* the interpreter's message */
        return exec_error(instr, CXLA_STATUS_UNIMPLEMENTED,
                          "the in-place form of %" PRId64 " buffers: at most 64 are supported",
                          f->nb);
    if (!f->pairs || f->pairs->kind != CXLA_ATTR_KIND_INT_LISTS || !f->sizes ||
        f->sizes->kind != CXLA_ATTR_KIND_INT_LISTS || f->nb < 1 || f->nb > 64 ||
        (y->type == CXLA_TUPLE) != tuple || (tuple && y->tuple_count != f->nb) ||
        f->sizes->v.int_lists.count == 0 || f->sizes->v.int_lists.count % f->nb != 0)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "the in-place form needs source_target_pairs={{s,t},...} and "
                          "slice_sizes={{...},...} with as many lists per buffer");
    f->k = f->sizes->v.int_lists.count / f->nb;
    f->starts = 0;
    for (int64_t b = 0; b < f->nb; b++) {
        f->in[b] = tuple ? &x->elements[b] : x;
        f->out[b] = tuple ? &y->elements[b] : y;
        f->ranks[b] = f->in[b]->rank;
        f->starts += f->k * f->ranks[b];
        for (int64_t j = 0; j < f->k; j++)
            if (f->sizes->v.int_lists.lengths[b * f->k + j] != f->ranks[b])
                return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                  "slice_sizes entry %" PRId64 " needs %" PRId64 " sizes",
                                  b * f->k + j, f->ranks[b]);
    }
    return NULL;
}

/* The |f->starts| start indices of operand |op| (2 or 3), whose first leaf is in[at]. */
static cxla_status read_starts(const cxla_instr *instr, const in_place *f, int64_t op,
                               const void *const *in, int64_t at, int64_t *out) {
    cxla_type types[4096];
    int64_t n = 0;
    scalar_leaf_types(&instr->operands[op]->shape, types, &n, 4096);
    if (n != f->starts || n > 4096)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "operand %" PRId64 " holds %" PRId64 " start indices, not %" PRId64, op,
                          n, f->starts);
    for (int64_t i = 0; i < n; i++) {
        if (cxla_type_class_of(types[i]) == CXLA_CLASS_UNSIGNED) {
            uint64_t u = cxla_load_u64(types[i], in[at + i]);
            out[i] = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
        } else {
            out[i] = cxla_load_s64(types[i], in[at + i]);
        }
    }
    return NULL;
}

static int64_t clamp_start(int64_t v, int64_t dim, int64_t size) {
    return v < 0 ? 0 : v > dim - size ? dim - size : v;
}

/* The window of |size| at |sstart| of row-major |src| (dims |sdims|) into |dstart| of
 * row-major |dst|, starts clamped as dynamic-slice's; rows along the last dimension at a
 * time. */
static void copy_window(uint8_t *dst, const int64_t *ddims, const int64_t *dstart,
                        const uint8_t *src, const int64_t *sdims, const int64_t *sstart,
                        const int64_t *size, int64_t rank, size_t es) {
    int64_t rows = 1, ds[CXLA_MAX_RANK], ss[CXLA_MAX_RANK], idx[CXLA_MAX_RANK] = {0};
    for (int64_t d = 0; d < rank; d++) {
        if (size[d] == 0) return;
        if (d < rank - 1) rows *= size[d];
        ds[d] = clamp_start(dstart[d], ddims[d], size[d]);
        ss[d] = clamp_start(sstart[d], sdims[d], size[d]);
    }
    size_t row = (size_t)(rank ? size[rank - 1] : 1) * es;
    for (int64_t n = 0; n < rows; n++) {
        int64_t so = 0, dof = 0;
        for (int64_t d = 0; d < rank; d++) {
            so = so * sdims[d] + ss[d] + (d < rank - 1 ? idx[d] : 0);
            dof = dof * ddims[d] + ds[d] + (d < rank - 1 ? idx[d] : 0);
        }
        memmove(dst + (size_t)dof * es, src + (size_t)so * es, row);
        for (int64_t d = rank - 2; d >= 0 && ++idx[d] == size[d]; d--) idx[d] = 0;
    }
}

static cxla_status permute_in_place_into(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                         const void *const *in) {
    in_place f;
    CXLA_RETURN_IF_ERROR(in_place_form(instr, &f));
    int64_t seq = 0;
    exec_devices dv;
    CXLA_RETURN_IF_ERROR(next_sequence(r, instr, &seq));
    CXLA_RETURN_IF_ERROR(exec_collective_devices(r->options, r->module, instr, &dv));
    int64_t channel;
    bool by_partition = cxla_instr_int(instr, CXLA_ATTR_CHANNEL_ID, &channel);
    const char *word = by_partition ? "partition" : "replica";
    int64_t space = by_partition ? dv.partitions : dv.replicas;
    int64_t me = by_partition ? dv.partition : dv.replica;
    const cxla_attr *a = f.pairs;
    int64_t pairs = a->v.int_lists.count, nb = f.nb, parts = nb + 1;
    int64_t *to = malloc((size_t)(pairs ? pairs : 1) * sizeof(*to));
    int64_t *from = malloc((size_t)(pairs ? pairs : 1) * sizeof(*from));
    int64_t *from_id = malloc((size_t)(pairs ? pairs : 1) * sizeof(*from_id));
    int64_t *starts = malloc((size_t)(2 * f.starts + 1) * sizeof(*starts));
    view *mine = malloc((size_t)parts * sizeof(*mine));
    cxla_status s = to && from && from_id && starts && mine ? NULL : OOM();
    int64_t nto = 0, nfrom = 0;
    for (int64_t i = 0; i < pairs && !s; i++) {
        const int64_t *p = a->v.int_lists.lists[i];
        if (a->v.int_lists.lengths[i] != 2) {
            s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                           "source_target_pairs entry %" PRId64 " must be {source,target}", i);
            break;
        }
        for (int c = 0; c < 2 && !s; c++)
            if (p[c] < 0 || (r->options->comm && p[c] >= space))
                s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                               "source_target_pairs name %s %" PRId64 " but the run has %" PRId64
                               " %ss",
                               word, p[c], space, word);
        if (s) break;
        int64_t other = p[0] == me ? p[1] : p[0];
        int64_t id = by_partition ? dv.replica * dv.partitions + other
                                  : other * dv.partitions + dv.partition;
        bool seen = false;
        if (p[0] == me && p[1] != me) {
            for (int64_t j = 0; j < nto; j++) seen = seen || to[j] == id;
            if (!seen) to[nto++] = id;
        }
        seen = false;
        if (p[1] == me && p[0] != me) {
            for (int64_t j = 0; j < nfrom; j++) seen = seen || from[j] == p[0];
            if (!seen) {
                from[nfrom] = p[0];
                from_id[nfrom++] = id;
            }
        }
    }
    int64_t *ins = starts, *outs = starts + f.starts;
    if (!s) s = read_starts(instr, &f, 2, in, 2 * nb, ins);
    if (!s) s = read_starts(instr, &f, 3, in, 2 * nb + f.starts, outs);
    int64_t sdims[1] = {f.starts};
    cxla_shape ss = {.type = CXLA_S64, .rank = 1, .dims = sdims};
    if (!s) {
        for (int64_t b = 0; b < nb; b++) view_init(&mine[b], f.in[b], in[b]);
        view_init(&mine[nb], &ss, ins);
    }
    const cxla_literal **sends = NULL, **expect = NULL;
    cxla_literal **recvs = NULL;
    if (!s) {
        sends = malloc((size_t)((nto ? nto : 1) * parts) * sizeof(*sends));
        expect = malloc((size_t)((nfrom ? nfrom : 1) * parts) * sizeof(*expect));
        recvs = calloc((size_t)((nfrom ? nfrom : 1) * parts), sizeof(*recvs));
        if (!sends || !expect || !recvs) s = OOM();
    }
    for (int64_t j = 0; j < nto && !s; j++)
        for (int64_t i = 0; i < parts; i++) sends[j * parts + i] = &mine[i].lit;
    for (int64_t j = 0; j < nfrom && !s; j++)
        for (int64_t i = 0; i < parts; i++) expect[j * parts + i] = &mine[i].lit;
    if (!s)
        s = exec_collective_exchange(r->options, instr, seq, parts, nto, to, sends, nfrom, from_id,
                                     expect, recvs, 1);
    for (int64_t b = 0; b < nb && !s; b++) {
        size_t bytes = bytes_of(f.out[b]);
        if (bytes && out[b] != in[nb + b]) memmove(out[b], in[nb + b], bytes);
    }
    for (int64_t i = 0; i < pairs && !s; i++) {
        const int64_t *p = a->v.int_lists.lists[i];
        int64_t j = 0;
        for (int64_t e = 0; e < i; e++) j += a->v.int_lists.lists[e][0] == p[0];
        if (p[1] != me) continue;
        if (j >= f.k) {
            s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                           "%s %" PRId64 " sends more than the %" PRId64
                           " slice(s) of the start indices",
                           word, p[0], f.k);
            break;
        }
        const cxla_literal *const *src = NULL;
        for (int64_t g = 0; g < nfrom; g++)
            if (p[0] != me && from[g] == p[0]) src = (const cxla_literal *const *)&recvs[g * parts];
        const int64_t *sst = src ? (const int64_t *)src[nb]->data : ins;
        for (int64_t b = 0, at = 0; b < nb; at += f.k * f.ranks[b], b++)
            copy_window(out[b], f.out[b]->dims, outs + at + j * f.ranks[b],
                        src ? (const uint8_t *)src[b]->data : (const uint8_t *)in[b], f.in[b]->dims,
                        sst + at + j * f.ranks[b], f.sizes->v.int_lists.lists[b * f.k + j],
                        f.ranks[b], cxla_type_storage(f.in[b]->type));
    }
    for (int64_t i = 0; recvs && i < nfrom * parts; i++) cxla_literal_free(recvs[i]);
    free(recvs);
    free(sends);
    free(expect);
    free(mine);
    free(starts);
    free(to);
    free(from);
    free(from_id);
    return s;
}

static cxla_status step_permute_in_place(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                         const void *const *in) {
    return permute_in_place_into(r, instr, out, in);
}

/* collective-permute-start in the in-place form: (input, output, context...). */
static cxla_status step_permute_in_place_start(cpu_svc_run *r, const cxla_instr *instr,
                                               void *const *out, const void *const *in) {
    const cxla_shape *d = &instr->shape;
    if (d->type != CXLA_TUPLE || d->tuple_count < 2)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "the result must be an (input, output, context...) tuple");
    int64_t nb = exec_leaf_count(&d->elements[0]);
    CXLA_RETURN_IF_ERROR(permute_in_place_into(r, instr, out + leaves_before(d, 1), in));
    for (int64_t b = 0; b < nb; b++) {
        const cxla_shape *xs = instr->operands[0]->shape.type == CXLA_TUPLE
                                   ? &instr->operands[0]->shape.elements[b]
                                   : &instr->operands[0]->shape;
        size_t bytes = bytes_of(xs);
        if (bytes && out[b] != in[b]) memmove(out[b], in[b], bytes);
    }
    for (int64_t e = 2; e < d->tuple_count; e++) {
        const cxla_shape *cs = &d->elements[e];
        if (cs->type == CXLA_TUPLE || !cxla_type_is_array(cs->type)) continue;
        size_t b = bytes_of(cs);
        if (b) memset(out[leaves_before(d, e)], 0, b);
    }
    return NULL;
}

/* ---- collective-reduce ------------------------------------------------------------------ */

/* As the interpreter's: the group's first member (its root) gets every member's operands
 * reduced in group order, the others keep their own operands. */
static cxla_status step_collective_reduce(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                          const void *const *in) {
    if (cxla_instr_bool(instr, CXLA_ATTR_HAS_DYNAMIC_ROOT))
        return exec_error(instr, CXLA_STATUS_UNIMPLEMENTED,
                          "collective-reduce with a root chosen at run time "
                          "(has_dynamic_root=true) is not supported by the interpreter yet");
    int64_t n = instr->operand_count, seq = 0;
    CXLA_RETURN_IF_ERROR(check_pack(instr, &instr->shape, n));
    exec_group g;
    CXLA_RETURN_IF_ERROR(group_of(r, instr, true, &g, &seq));
    cxla_status s = NULL;
    if (!cxla_instr_called(instr, CXLA_ATTR_TO_APPLY))
        s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "missing to_apply=");
    if (s || g.count == 1) {
        exec_group_free(&g);
        if (!s) copy_operands(instr, out, in);
        return s;
    }
    view *mine = malloc((size_t)n * sizeof(*mine));
    const cxla_literal **sends = malloc((size_t)n * sizeof(*sends));
    s = mine && sends ? NULL : OOM();
    for (int64_t i = 0; i < n && !s; i++) {
        view_init(&mine[i], &instr->operands[i]->shape, in[i]);
        sends[i] = &mine[i].lit;
    }
    if (!s && g.me != 0) { /* a member sends its operands to the root and keeps them */
        s = exec_collective_exchange(r->options, instr, seq, n, 1, g.members, sends, 0, NULL, NULL,
                                     NULL, 1);
        if (!s) copy_operands(instr, out, in);
    } else if (!s) {
        reducer rd;
        s = reducer_for(r, instr, &rd);
        if (!s) s = leader_reduce(r, instr, seq, &g, &rd, mine, out);
        reducer_release(&rd);
    }
    free(mine);
    free(sends);
    exec_group_free(&g);
    return s;
}

/* ---- ragged-all-to-all -------------------------------------------------------------------- */

enum { RAGGED_PARTS = 4 }; /* input, input_offsets, send_sizes, output_offsets */

/* Element |i| of the integer array |a|. */
static int64_t int_at(const cxla_literal *a, int64_t i) {
    cxla_type t = a->shape->type;
    return cxla_load_s64(t, (const char *)a->data + (size_t)i * cxla_type_storage(t));
}

/* As the interpreter's (interp_collective.c, where its operands are described): every member
 * sends its input and its metadata to every other, and each writes the updates it receives
 * into its copy of output, member by member in group order, with the interpreter's checks
 * and messages. */
static cxla_status step_ragged_all_to_all(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                          const void *const *in) {
    if (instr->operand_count != 6)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "takes 6 operands (input, output, input_offsets, send_sizes, "
                          "output_offsets, recv_sizes), got %" PRId64,
                          instr->operand_count);
    const cxla_shape *in_s = &instr->operands[0]->shape, *out_s = &instr->operands[1]->shape;
    if (in_s->rank < 1 || in_s->type != out_s->type || in_s->rank != out_s->rank)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "input and output must be arrays of one element type and rank >= 1");
    int64_t row = 1;
    for (int64_t j = 1; j < in_s->rank; j++) {
        if (in_s->dims[j] != out_s->dims[j])
            return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                              "input and output differ in dimension %" PRId64 " (%" PRId64
                              " vs %" PRId64 "); only dimension 0 may",
                              j, in_s->dims[j], out_s->dims[j]);
        row *= in_s->dims[j];
    }
    int64_t meta = 0, count = 0;
    cxla_shape_element_count(&instr->operands[2]->shape, &meta);
    for (int64_t i = 2; i < 6; i++) {
        cxla_shape_element_count(&instr->operands[i]->shape, &count);
        if (!cxla_type_is_integer(instr->operands[i]->shape.type) || count != meta)
            return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                              "the offsets and sizes must be integer arrays of one size");
    }
    exec_devices dv;
    exec_group g;
    int64_t seq = 0;
    CXLA_RETURN_IF_ERROR(group_in(r, instr, false, &g, &seq, &dv));
    cxla_status s = NULL;
    if (meta == 0 || meta % g.count != 0)
        s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                       "the offsets and sizes hold %" PRId64
                       " values, not a positive multiple of the %" PRId64 " participants",
                       meta, g.count);
    int64_t u = s ? 0 : meta / g.count;
    view mine[RAGGED_PARTS], recv_sizes;
    static const int64_t parts_of[RAGGED_PARTS] = {0, 2, 3, 4};
    for (int64_t j = 0; j < RAGGED_PARTS; j++)
        view_init(&mine[j], &instr->operands[parts_of[j]]->shape, in[parts_of[j]]);
    view_init(&recv_sizes, &instr->operands[5]->shape, in[5]);
    const cxla_literal **outgoing =
        s ? NULL : malloc((size_t)(g.count * RAGGED_PARTS) * sizeof(*outgoing));
    exec_gathered t = {0};
    if (!s && !outgoing) s = OOM();
    for (int64_t k = 0; k < g.count && !s; k++)
        for (int64_t j = 0; j < RAGGED_PARTS; j++) outgoing[k * RAGGED_PARTS + j] = &mine[j].lit;
    if (!s)
        s = exec_collective_exchange_in_group(r->options, instr, seq, &g, RAGGED_PARTS, outgoing,
                                              &t);
    free(outgoing);
    size_t bytes = bytes_of(out_s), esize = cxla_type_storage(in_s->type);
    if (!s && bytes) memcpy(out[0], in[1], bytes);
    char name[64];
    for (int64_t k = 0; k < g.count && !s; k++) {
        const cxla_literal *const *from = t.table + k * RAGGED_PARTS;
        const char *src = from[0]->data;
        char *dst = out[0];
        for (int64_t i = 0; i < u && !s; i++) {
            int64_t idx = g.me * u + i;
            int64_t in_off = int_at(from[1], idx), size = int_at(from[2], idx);
            int64_t out_off = int_at(from[3], idx), want = int_at(&recv_sizes.lit, k * u + i);
            int64_t src_rows = from[0]->shape->dims[0];
            exec_device_name(dv.partitions, g.members[k], name, sizeof(name));
            if (size != want)
                s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                               "%s sends %" PRId64 " rows in update %" PRId64
                               " but recv_sizes[%" PRId64 "] expects %" PRId64,
                               name, size, i, k * u + i, want);
            else if (size < 0 || in_off < 0 || in_off > src_rows - size || out_off < 0 ||
                     out_off > out_s->dims[0] - size)
                s = exec_error(instr, CXLA_STATUS_OUT_OF_RANGE,
                               "update %" PRId64 " from %s (rows %" PRId64 "..%" PRId64
                               " of its input, %" PRId64 " rows, to rows %" PRId64 "..%" PRId64
                               " of the output, %" PRId64 " rows) is out of range",
                               i, name, in_off, in_off + size, src_rows, out_off, out_off + size,
                               out_s->dims[0]);
            else if (size > 0)
                memcpy(dst + (size_t)(out_off * row) * esize, src + (size_t)(in_off * row) * esize,
                       (size_t)(size * row) * esize);
        }
    }
    exec_gathered_free(&t);
    exec_group_free(&g);
    return s;
}

/* ---- the interpreter's errors ------------------------------------------------------------- */

/* What the interpreter reports for a collective whose operands it does not take: an
 * operand that is not an array (after the checks that come first there), without a
 * handler step. */
static cxla_status step_refused(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                const void *const *in) {
    (void)r;
    (void)out;
    (void)in;
    if (instr->opcode == CXLA_OP_COLLECTIVE_REDUCE &&
        cxla_instr_bool(instr, CXLA_ATTR_HAS_DYNAMIC_ROOT))
        return step_collective_reduce(r, instr, out, in);
    if (instr->opcode == CXLA_OP_RAGGED_ALL_TO_ALL && instr->operand_count != 6)
        return step_ragged_all_to_all(r, instr, out, in);
    if (instr->operand_count < 1)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "needs an operand");
    for (int64_t i = 0; i < instr->operand_count; i++)
        if (!cxla_type_is_array(instr->operands[i]->shape.type))
            return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                              "operand %" PRId64 " must be an array", i);
    return exec_error(instr, CXLA_STATUS_INTERNAL, "no collective step refuses these operands");
}

/* ---- lookup ---------------------------------------------------------------------------- */

/* Operands the steps take: arrays (sub-byte integers one per byte, as every value of a
 * compiled module is). */
static bool arrays_only(const cxla_instr *instr) {
    for (int64_t i = 0; i < instr->operand_count; i++) {
        const cxla_shape *s = &instr->operands[i]->shape;
        if (s->type == CXLA_TUPLE || !cxla_type_is_array(s->type)) return false;
    }
    return true;
}

/* The step of an instruction that combines with a reducer, or NULL. */
static cpu_svc_fn reducing_step(const cxla_instr *instr) {
    switch (instr->opcode) {
    case CXLA_OP_ALL_REDUCE:
    case CXLA_OP_ALL_REDUCE_START: return step_all_reduce;
    case CXLA_OP_REDUCE_SCATTER: return step_reduce_scatter;
    case CXLA_OP_COLLECTIVE_REDUCE: return step_collective_reduce;
    default: return NULL;
    }
}

/* Whether the reducer of |instr| is no plain operation and the emitter writes it as a
 * combine function. */
static bool needs_combiner(const cxla_instr *instr) {
    const cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    return comp && plain_reducer(instr) == INTERP_REDUCER_NONE && cpu_emit_combine_ok(comp);
}

cpu_svc_fn cpu_collective_lookup(const cxla_instr *instr) {
    switch (instr->opcode) {
    case CXLA_OP_REPLICA_ID: return step_replica_id;
    case CXLA_OP_PARTITION_ID: return step_partition_id;
    default: break;
    }
    bool permute = instr->opcode == CXLA_OP_COLLECTIVE_PERMUTE ||
                   instr->opcode == CXLA_OP_COLLECTIVE_PERMUTE_START;
    /* The combined in-place form (tuple start indices); operands that are not arrays: the
     * interpreter's error, from a step of its own. */
    if (permute && instr->operand_count == 4 && instr->operands[2]->shape.type == CXLA_TUPLE)
        return instr->opcode == CXLA_OP_COLLECTIVE_PERMUTE ? step_permute_in_place
                                                           : step_permute_in_place_start;
    if (!arrays_only(instr))
        return reducing_step(instr) || permute || instr->opcode == CXLA_OP_ALL_GATHER ||
                       instr->opcode == CXLA_OP_ALL_GATHER_START ||
                       instr->opcode == CXLA_OP_ALL_TO_ALL ||
                       instr->opcode == CXLA_OP_COLLECTIVE_BROADCAST ||
                       instr->opcode == CXLA_OP_RAGGED_ALL_TO_ALL
                   ? step_refused
                   : NULL;
    cpu_svc_fn reducing = reducing_step(instr);
    /* A reducer that is no plain operation but one the emitter writes has its step only
     * where the plan also has the combine function compiled under the instruction's id
     * (cpu_collective_combine_lookup); one the emitter cannot write is evaluated. */
    if (reducing) return needs_combiner(instr) ? NULL : reducing;
    switch (instr->opcode) {
    case CXLA_OP_ALL_GATHER: return step_all_gather;
    case CXLA_OP_ALL_GATHER_START: return step_all_gather_start;
    case CXLA_OP_ALL_TO_ALL: return step_all_to_all;
    case CXLA_OP_RAGGED_ALL_TO_ALL: return step_ragged_all_to_all;
    case CXLA_OP_COLLECTIVE_BROADCAST: return step_collective_broadcast;
    /* Several array operands permute together (XLA's list form; the -done gives one
     * result per operand). */
    case CXLA_OP_COLLECTIVE_PERMUTE:
        return instr->operand_count >= 1 ? step_collective_permute : NULL;
    case CXLA_OP_COLLECTIVE_PERMUTE_START:
        return instr->operand_count >= 1 ? step_collective_permute_start : NULL;
    default: return NULL;
    }
}

cpu_svc_fn cpu_collective_combine_lookup(const cxla_instr *instr) {
    if (!arrays_only(instr) || !needs_combiner(instr)) return NULL;
    return reducing_step(instr);
}

cxla_status cpu_collective_emit_combine(const cxla_instr *instr, const char *name,
                                        cxla_strbuf *out) {
    return cpu_emit_combine(instr, cxla_instr_called(instr, CXLA_ATTR_TO_APPLY), name, out);
}
