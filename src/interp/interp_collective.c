/* Interpreter handlers for replica-id, partition-id and the collectives: all-reduce,
 * all-gather, reduce-scatter, all-to-all, ragged-all-to-all, collective-broadcast,
 * collective-reduce, collective-permute and their dedicated -start/-done forms.
 *
 * Every device of a run executes the same module; its collectives meet those of the
 * other devices through exec_run_options.comm (see interp.h), one exchange of messages per
 * execution of a collective. Each device computes its own result from the values it
 * received, always in the order of the replica group, so that the results are the same
 * on every device and from run to run. Without a communicator the run is one device:
 * groups of one member are the identity and larger ones fail.
 *
 * Groups follow XLA's CollectiveOpGroupMode: without channel_id the ids in
 * replica_groups are replicas (each partition has its own groups); with channel_id they
 * are partitions for all-to-all, collective-broadcast and collective-permute, replicas
 * of every partition for the others, and flattened device ids (replica *
 * num_partitions + partition) with use_global_device_ids=true. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/collective.h"
#include "interp/interp.h"
#include "interp/interp_reduce.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* Devices, groups and exchanges: exec/collective.h. */
typedef exec_devices devices;
typedef exec_group group;
typedef exec_gathered gathered;
#define group_free    exec_group_free
#define gathered_free exec_gathered_free

static cxla_status get_devices(interp_ctx *ctx, const cxla_instr *instr, devices *d) {
    return exec_collective_devices(&ctx->options, ctx->module, instr, d);
}

static cxla_status resolve_group(interp_ctx *ctx, const cxla_instr *instr,
                                 bool global_ids_meaningful, const devices *dv, group *g) {
    return exec_collective_group(&ctx->options, instr, global_ids_meaningful, dv, g);
}

/* ---- exchanges -------------------------------------------------------------------- */

/* How many times this device executed |instr| before; counts this execution. */
static cxla_status next_sequence(interp_ctx *ctx, const cxla_instr *instr, int64_t *out) {
    int64_t id = instr->id;
    if (id < 0) return interp_error(instr, CXLA_STATUS_INTERNAL, "the instruction has no id");
    if (id >= ctx->collective_counts_size) {
        int64_t size = ctx->collective_counts_size ? ctx->collective_counts_size : 64;
        while (size <= id) size *= 2;
        int64_t *p = realloc(ctx->collective_counts, (size_t)size * sizeof(*p));
        if (!p) return OOM();
        memset(p + ctx->collective_counts_size, 0,
               (size_t)(size - ctx->collective_counts_size) * sizeof(*p));
        ctx->collective_counts = p;
        ctx->collective_counts_size = size;
    }
    *out = ctx->collective_counts[id]++;
    return NULL;
}

static cxla_status exchange(interp_ctx *ctx, const cxla_instr *instr, int64_t seq, int64_t parts,
                            int64_t send_count, const int64_t *to, const cxla_literal *const *sends,
                            int64_t recv_count, const int64_t *from,
                            const cxla_literal *const *expect, cxla_literal **recvs,
                            int64_t wait_rounds) {
    return exec_collective_exchange(&ctx->options, instr, seq, parts, send_count, to, sends,
                                    recv_count, from, expect, recvs, wait_rounds);
}

static cxla_status exchange_in_group(interp_ctx *ctx, const cxla_instr *instr, int64_t seq,
                                     const group *g, int64_t parts,
                                     const cxla_literal *const *outgoing, gathered *out) {
    return exec_collective_exchange_in_group(&ctx->options, instr, seq, g, parts, outgoing, out);
}

/* ---- array pieces ----------------------------------------------------------------- */

/* Piece |k| of |count| equal pieces of the row-major array |x| along |dim|. */
static cxla_status split_piece(const cxla_literal *x, int64_t dim, int64_t count, int64_t k,
                               cxla_literal **out) {
    const cxla_shape *s = cxla_literal_shape(x);
    int64_t dims[CXLA_MAX_RANK];
    for (int64_t j = 0; j < s->rank; j++) dims[j] = s->dims[j];
    dims[dim] = s->dims[dim] / count;
    cxla_shape ps = {.type = s->type, .rank = s->rank, .dims = dims};
    CXLA_RETURN_IF_ERROR(interp_new_array(&ps, out));
    size_t esize = cxla_type_storage(s->type);
    int64_t outer = 1, inner = 1;
    for (int64_t j = 0; j < dim; j++) outer *= s->dims[j];
    for (int64_t j = dim + 1; j < s->rank; j++) inner *= s->dims[j];
    size_t chunk = (size_t)(dims[dim] * inner) * esize;
    size_t stride = (size_t)(s->dims[dim] * inner) * esize;
    const uint8_t *src = cxla_literal_data_const(x);
    uint8_t *dst = cxla_literal_data(*out);
    for (int64_t o = 0; o < outer && chunk > 0; o++)
        memcpy(dst + (size_t)o * chunk, src + (size_t)o * stride + (size_t)k * chunk, chunk);
    return NULL;
}

/* The arrays |pieces| (row-major, equal shapes) concatenated along |dim|. */
static cxla_status concat_pieces(const cxla_literal *const *pieces, int64_t count, int64_t dim,
                                 cxla_literal **out) {
    const cxla_shape *s = cxla_literal_shape(pieces[0]);
    int64_t dims[CXLA_MAX_RANK];
    for (int64_t j = 0; j < s->rank; j++) dims[j] = s->dims[j];
    if (!cxla_mul_i64(dims[dim], count, &dims[dim]))
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "the result is too large");
    cxla_shape rs = {.type = s->type, .rank = s->rank, .dims = dims};
    CXLA_RETURN_IF_ERROR(interp_new_array(&rs, out));
    size_t esize = cxla_type_storage(s->type);
    int64_t outer = 1, inner = 1;
    for (int64_t j = 0; j < dim; j++) outer *= s->dims[j];
    for (int64_t j = dim + 1; j < s->rank; j++) inner *= s->dims[j];
    size_t chunk = (size_t)(s->dims[dim] * inner) * esize;
    uint8_t *dst = cxla_literal_data(*out);
    for (int64_t o = 0; o < outer && chunk > 0; o++)
        for (int64_t k = 0; k < count; k++)
            memcpy(dst + ((size_t)o * (size_t)count + (size_t)k) * chunk,
                   (const uint8_t *)cxla_literal_data_const(pieces[k]) + (size_t)o * chunk, chunk);
    return NULL;
}

/* ---- reduction -------------------------------------------------------------------- */

/* f(...f(f(vals[0], vals[1]), vals[2])..., vals[count-1]) element by element, with the
 * scalar computation |comp| (its recognized typed loop when it has one). */
static cxla_status reduce_in_order(interp_ctx *ctx, const cxla_instr *instr,
                                   const cxla_computation *comp, const cxla_literal *const *vals,
                                   int64_t count, cxla_literal **out);

/* A reducer whose scalar type differs from the operands' (XLA's verifier does not compare
 * them: a bf16 all-reduce with an f32 add): the values are converted to the reducer's
 * type, reduced in it, and the result converted back to the operands' type. */
static cxla_status reduce_converted(interp_ctx *ctx, const cxla_instr *instr,
                                    const cxla_computation *comp, const cxla_literal *const *vals,
                                    int64_t count, cxla_literal **out) {
    cxla_type from = cxla_literal_type(vals[0]), to = comp->root->shape.type;
    cxla_literal **conv = calloc((size_t)count, sizeof(*conv));
    if (!conv) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cxla_status s = NULL;
    for (int64_t k = 0; k < count && !s; k++) s = cxla_literal_convert(vals[k], to, &conv[k]);
    cxla_literal *r = NULL;
    if (!s) s = reduce_in_order(ctx, instr, comp, (const cxla_literal *const *)conv, count, &r);
    if (!s) s = cxla_literal_convert(r, from, out);
    cxla_literal_free(r);
    for (int64_t k = 0; k < count; k++) cxla_literal_free(conv[k]);
    free(conv);
    return s;
}

static cxla_status reduce_in_order(interp_ctx *ctx, const cxla_instr *instr,
                                   const cxla_computation *comp, const cxla_literal *const *vals,
                                   int64_t count, cxla_literal **out) {
    if (count > 1 && cxla_type_is_array(comp->root->shape.type) &&
        comp->root->shape.type != cxla_literal_type(vals[0]))
        return reduce_converted(ctx, instr, comp, vals, count, out);
    CXLA_RETURN_IF_ERROR(cxla_literal_clone(vals[0], out));
    if (count == 1) return NULL;
    cxla_type t = cxla_literal_type(vals[0]);
    int64_t n = cxla_literal_element_count(vals[0]);
    size_t esize = cxla_type_storage(t);
    uint8_t *acc = cxla_literal_data(*out);
    interp_reducer kind = interp_match_reducer(comp);
    cxla_status s = NULL;
    if (kind != INTERP_REDUCER_NONE && interp_reducer_supports(kind, t) &&
        comp->root->shape.type == t) {
        static const int64_t zero = 0;
        const int64_t *offsets[1] = {&zero};
        const int64_t sizes[1] = {1};
        interp_space one = {.rank = 1, .count = 1, .sizes = sizes, .offsets = offsets};
        for (int64_t k = 1; k < count; k++) {
            const void *x = cxla_literal_data_const(vals[k]);
            for (int64_t j = 0; j < n; j++) {
                uint8_t *a = acc + (size_t)j * esize;
                interp_reduce_space(kind, t, x, j, &one, a, a);
            }
        }
        return NULL;
    }
    interp_scalar_fn f;
    s = interp_scalar_fn_init(&f, ctx, instr, comp);
    if (!s && f.arg_count != 2)
        s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                         "to_apply '%s' must take two scalars, it takes %" PRId64, comp->name,
                         f.arg_count);
    if (!s) s = interp_scalar_fn_expect(&f, 0, t);
    if (!s) s = interp_scalar_fn_expect(&f, 1, t);
    for (int64_t k = 1; k < count && !s; k++) {
        const uint8_t *x = cxla_literal_data_const(vals[k]);
        for (int64_t j = 0; j < n && !s; j++) {
            interp_scalar_set_arg(&f, 0, acc + (size_t)j * esize);
            interp_scalar_set_arg(&f, 1, x + (size_t)j * esize);
            cxla_literal *r = NULL;
            s = interp_scalar_call(&f, &r);
            const void *p = s ? NULL : interp_scalar_result(&f, r, 0, 1, t, &s);
            if (p) memcpy(acc + (size_t)j * esize, p, esize);
            cxla_literal_free(r);
        }
    }
    if (f.args) interp_scalar_fn_deinit(&f);
    if (s) {
        cxla_literal_free(*out);
        *out = NULL;
    }
    return s;
}

/* ---- results ---------------------------------------------------------------------- */

/* |n| results (owned) as |shape| holds them: a tuple when it is one, else results[0]. */
static cxla_status pack_results(const cxla_instr *instr, cxla_literal **results, int64_t n,
                                const cxla_shape *shape, cxla_literal **out) {
    if (shape->type == CXLA_TUPLE) {
        if (shape->tuple_count != n) {
            for (int64_t i = 0; i < n; i++) cxla_literal_free(results[i]);
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "the result tuple has %" PRId64 " elements for %" PRId64 " values",
                                shape->tuple_count, n);
        }
        return interp_make_tuple(results, n, out);
    }
    for (int64_t i = 1; i < n; i++) cxla_literal_free(results[i]);
    if (n != 1) {
        cxla_literal_free(results[0]);
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "%" PRId64 " operands need a tuple result", n);
    }
    *out = results[0];
    return NULL;
}

/* Checks that result |i| of |shape| (a tuple of n, or one array) has |want|'s dims. */
static cxla_status check_declared(const cxla_instr *instr, const cxla_shape *shape, int64_t i,
                                  int64_t n, const cxla_literal *want, int64_t participants) {
    const cxla_shape *d = shape->type == CXLA_TUPLE
                              ? (i < shape->tuple_count ? &shape->elements[i] : NULL)
                              : (n == 1 ? shape : NULL);
    const cxla_shape *w = cxla_literal_shape(want);
    if (d && d->rank == w->rank) {
        bool same = true;
        for (int64_t j = 0; j < w->rank; j++) same = same && d->dims[j] == w->dims[j];
        if (same) return NULL;
    }
    char *ds = d ? cxla_shape_to_string(d, CXLA_SHAPE_PRINT_NO_LAYOUT) : NULL;
    char *ws = cxla_shape_to_string(w, CXLA_SHAPE_PRINT_NO_LAYOUT);
    cxla_status s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                 "the declared result %s does not match %s, the result of a "
                                 "group of %" PRId64,
                                 ds ? ds : "?", ws ? ws : "?", participants);
    free(ds);
    free(ws);
    return s;
}

static cxla_status new_results(int64_t n, cxla_literal ***out) {
    *out = calloc((size_t)(n ? n : 1), sizeof(**out));
    return *out ? NULL : OOM();
}

static void free_results(cxla_literal **r, int64_t n) {
    if (!r) return;
    for (int64_t i = 0; i < n; i++) cxla_literal_free(r[i]);
    free(r);
}

/* The single dimension of dimensions={d}. */
static cxla_status the_dimension(const cxla_instr *instr, const cxla_literal *const *operands,
                                 int64_t *out) {
    int64_t nd = 0;
    const int64_t *dl = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd);
    if (!dl || nd != 1)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "needs dimensions={d}");
    for (int64_t i = 0; i < instr->operand_count; i++)
        if (dl[0] < 0 || dl[0] >= cxla_literal_shape(operands[i])->rank)
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "dimension %" PRId64 " is out of range for operand %" PRId64, dl[0],
                                i);
    *out = dl[0];
    return NULL;
}

static cxla_status check_arrays(const cxla_instr *instr, const cxla_literal *const *operands) {
    if (instr->operand_count < 1)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "needs an operand");
    for (int64_t i = 0; i < instr->operand_count; i++)
        if (!cxla_type_is_array(cxla_literal_type(operands[i])))
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "operand %" PRId64 " must be an array", i);
    return NULL;
}

/* ---- ids -------------------------------------------------------------------------- */

static cxla_status make_id(const cxla_instr *instr, int64_t id, cxla_literal **out) {
    CXLA_RETURN_IF_ERROR(interp_new_array(&instr->shape, out));
    if (cxla_literal_element_count(*out) != 1) {
        cxla_literal_free(*out);
        *out = NULL;
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "the result must be a scalar");
    }
    cxla_store_u64(instr->shape.type, cxla_literal_data(*out), (uint64_t)id);
    return NULL;
}

static cxla_status op_replica_id(interp_ctx *ctx, const cxla_instr *instr,
                                 const cxla_literal *const *operands, cxla_literal **out) {
    (void)operands;
    return make_id(instr, ctx->options.replica_id, out);
}

static cxla_status op_partition_id(interp_ctx *ctx, const cxla_instr *instr,
                                   const cxla_literal *const *operands, cxla_literal **out) {
    (void)operands;
    return make_id(instr, ctx->options.partition_id, out);
}

/* ---- all-reduce ------------------------------------------------------------------- */

/* The all-reduce of the operands over the group, into results shaped as |shape|. */
/* The all-reduce of a group goes through its first member, the leader: the others send
 * it their operands, it reduces them in group order (the order every member would use)
 * and sends each the results. 2 (n - 1) messages instead of n (n - 1), and one
 * reduction instead of n: a collective costs what its data costs, with thousands of
 * replicas too. The results are the same on every member, as XLA's all-reduce is. */
static cxla_status all_reduce_into(interp_ctx *ctx, const cxla_instr *instr,
                                   const cxla_literal *const *operands, const cxla_shape *shape,
                                   bool may_take, cxla_literal **out) {
    CXLA_RETURN_IF_ERROR(check_arrays(instr, operands));
    devices dv;
    group g;
    int64_t seq;
    CXLA_RETURN_IF_ERROR(next_sequence(ctx, instr, &seq));
    CXLA_RETURN_IF_ERROR(get_devices(ctx, instr, &dv));
    CXLA_RETURN_IF_ERROR(resolve_group(ctx, instr, true, &dv, &g));
    if (g.count == 1) {
        group_free(&g);
        return interp_pack_operands(ctx, instr, operands, shape, may_take, out);
    }
    const cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    int64_t n = instr->operand_count, others = g.count - 1;
    bool leader = g.me == 0;
    /* Per other member (leader) or for the leader alone: n arrays each way. */
    int64_t peers = leader ? others : 1;
    const cxla_literal **expect = malloc((size_t)(peers * n + 1) * sizeof(*expect));
    const cxla_literal **sends = malloc((size_t)(peers * n + 1) * sizeof(*sends));
    cxla_literal **received = calloc((size_t)(peers * n + 1), sizeof(*received));
    const cxla_literal **column = malloc((size_t)g.count * sizeof(*column));
    cxla_literal **results = NULL;
    cxla_status s = NULL;
    if (!expect || !sends || !received || !column) s = OOM();
    if (!s && !comp) s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "missing to_apply=");
    for (int64_t k = 0; k < peers && !s; k++)
        for (int64_t i = 0; i < n; i++) expect[k * n + i] = operands[i];
    if (!s && leader) {
        s = exchange(ctx, instr, seq, n, 0, NULL, NULL, others, g.members + 1, expect, received, 1);
        if (!s) s = new_results(n, &results);
        for (int64_t i = 0; i < n && !s; i++) {
            column[0] = operands[i];
            for (int64_t k = 1; k < g.count; k++) column[k] = received[(k - 1) * n + i];
            s = reduce_in_order(ctx, instr, comp, column, g.count, &results[i]);
        }
        for (int64_t k = 0; k < others && !s; k++)
            for (int64_t i = 0; i < n; i++) sends[k * n + i] = results[i];
        if (!s)
            s = exchange(ctx, instr, seq, n, others, g.members + 1, sends, 0, NULL, NULL, NULL, 1);
    } else if (!s) {
        s = exchange(ctx, instr, seq, n, 1, g.members, operands, 0, NULL, NULL, NULL, 1);
        /* The leader waits for the whole group first: give it the time to say who is
         * missing before this device gives up on the leader. */
        if (!s) s = exchange(ctx, instr, seq, n, 0, NULL, NULL, 1, g.members, expect, received, 2);
        if (!s) s = new_results(n, &results);
        for (int64_t i = 0; i < n && !s; i++) {
            results[i] = received[i];
            received[i] = NULL;
        }
    }
    for (int64_t k = 0; received && k < peers * n; k++) cxla_literal_free(received[k]);
    free(received);
    free(expect);
    free(sends);
    free(column);
    group_free(&g);
    if (s) {
        free_results(results, n);
        return s;
    }
    s = pack_results(instr, results, n, shape, out);
    free(results);
    return s;
}

static cxla_status op_all_reduce(interp_ctx *ctx, const cxla_instr *instr,
                                 const cxla_literal *const *operands, cxla_literal **out) {
    return all_reduce_into(ctx, instr, operands, &instr->shape, true, out);
}

/* ---- all-gather and reduce-scatter ------------------------------------------------ */

static cxla_status all_gather_into(interp_ctx *ctx, const cxla_instr *instr,
                                   const cxla_literal *const *operands, const cxla_shape *shape,
                                   bool may_take, cxla_literal **out) {
    CXLA_RETURN_IF_ERROR(check_arrays(instr, operands));
    devices dv;
    group g;
    int64_t seq, d;
    CXLA_RETURN_IF_ERROR(next_sequence(ctx, instr, &seq));
    CXLA_RETURN_IF_ERROR(the_dimension(instr, operands, &d));
    CXLA_RETURN_IF_ERROR(get_devices(ctx, instr, &dv));
    CXLA_RETURN_IF_ERROR(resolve_group(ctx, instr, true, &dv, &g));
    int64_t n = instr->operand_count;
    for (int64_t i = 0; i < n && g.count == 1; i++) {
        cxla_status s = check_declared(instr, shape, i, n, operands[i], 1);
        if (s) {
            group_free(&g);
            return s;
        }
    }
    if (g.count == 1) {
        group_free(&g);
        return interp_pack_operands(ctx, instr, operands, shape, may_take, out);
    }
    const cxla_literal **outgoing = malloc((size_t)(g.count * n) * sizeof(*outgoing));
    const cxla_literal **column = malloc((size_t)g.count * sizeof(*column));
    cxla_literal **results = NULL;
    gathered t = {0};
    cxla_status s = NULL;
    if (!outgoing || !column) s = OOM();
    for (int64_t k = 0; k < g.count && !s; k++)
        for (int64_t i = 0; i < n; i++) outgoing[k * n + i] = operands[i];
    if (!s) s = exchange_in_group(ctx, instr, seq, &g, n, outgoing, &t);
    if (!s) s = new_results(n, &results);
    for (int64_t i = 0; i < n && !s; i++) {
        for (int64_t k = 0; k < g.count; k++) column[k] = t.table[k * n + i];
        s = concat_pieces(column, g.count, d, &results[i]);
        if (!s) s = check_declared(instr, shape, i, n, results[i], g.count);
    }
    gathered_free(&t);
    free(outgoing);
    free(column);
    group_free(&g);
    if (s) {
        free_results(results, n);
        return s;
    }
    s = pack_results(instr, results, n, shape, out);
    free(results);
    return s;
}

static cxla_status op_all_gather(interp_ctx *ctx, const cxla_instr *instr,
                                 const cxla_literal *const *operands, cxla_literal **out) {
    return all_gather_into(ctx, instr, operands, &instr->shape, true, out);
}

/* all-gather-start: (operand(s), result(s)). */
static cxla_status op_all_gather_start(interp_ctx *ctx, const cxla_instr *instr,
                                       const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_shape *d = &instr->shape;
    if (d->type != CXLA_TUPLE || d->tuple_count != 2)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result must be an (input, output) tuple");
    cxla_literal *parts[2] = {NULL, NULL};
    cxla_status s = all_gather_into(ctx, instr, operands, &d->elements[1], false, &parts[1]);
    if (!s) s = interp_pack_operands(ctx, instr, operands, &d->elements[0], true, &parts[0]);
    if (s) {
        cxla_literal_free(parts[1]);
        return s;
    }
    return interp_make_tuple(parts, 2, out);
}

static cxla_status op_reduce_scatter(interp_ctx *ctx, const cxla_instr *instr,
                                     const cxla_literal *const *operands, cxla_literal **out) {
    CXLA_RETURN_IF_ERROR(check_arrays(instr, operands));
    devices dv;
    group g;
    int64_t seq, d;
    CXLA_RETURN_IF_ERROR(next_sequence(ctx, instr, &seq));
    CXLA_RETURN_IF_ERROR(the_dimension(instr, operands, &d));
    CXLA_RETURN_IF_ERROR(get_devices(ctx, instr, &dv));
    CXLA_RETURN_IF_ERROR(resolve_group(ctx, instr, true, &dv, &g));
    int64_t n = instr->operand_count;
    const cxla_shape *shape = &instr->shape;
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++) {
        int64_t size = cxla_literal_shape(operands[i])->dims[d];
        if (size % g.count != 0)
            s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                             "dimension %" PRId64 " of operand %" PRId64 " (%" PRId64
                             ") is not divisible by the %" PRId64 " participants",
                             d, i, size, g.count);
        else if (g.count == 1)
            s = check_declared(instr, shape, i, n, operands[i], 1);
    }
    if (s || g.count == 1) {
        group_free(&g);
        return s ? s : interp_pack_operands(ctx, instr, operands, shape, true, out);
    }
    const cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    cxla_literal **shards = calloc((size_t)(g.count * n), sizeof(*shards));
    const cxla_literal **column = malloc((size_t)g.count * sizeof(*column));
    cxla_literal **results = NULL;
    gathered t = {0};
    if (!shards || !column) s = OOM();
    if (!s && !comp) s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "missing to_apply=");
    for (int64_t k = 0; k < g.count && !s; k++)
        for (int64_t i = 0; i < n && !s; i++)
            s = split_piece(operands[i], d, g.count, k, &shards[k * n + i]);
    if (!s) s = exchange_in_group(ctx, instr, seq, &g, n, (const cxla_literal *const *)shards, &t);
    if (!s) s = new_results(n, &results);
    for (int64_t i = 0; i < n && !s; i++) {
        for (int64_t k = 0; k < g.count; k++) column[k] = t.table[k * n + i];
        s = reduce_in_order(ctx, instr, comp, column, g.count, &results[i]);
        if (!s) s = check_declared(instr, shape, i, n, results[i], g.count);
    }
    gathered_free(&t);
    free_results(shards, g.count * n);
    free(column);
    group_free(&g);
    if (s) {
        free_results(results, n);
        return s;
    }
    s = pack_results(instr, results, n, shape, out);
    free(results);
    return s;
}

/* ---- all-to-all and collective-broadcast ------------------------------------------ */

static cxla_status op_all_to_all(interp_ctx *ctx, const cxla_instr *instr,
                                 const cxla_literal *const *operands, cxla_literal **out) {
    CXLA_RETURN_IF_ERROR(check_arrays(instr, operands));
    devices dv;
    group g;
    int64_t seq;
    CXLA_RETURN_IF_ERROR(next_sequence(ctx, instr, &seq));
    CXLA_RETURN_IF_ERROR(get_devices(ctx, instr, &dv));
    CXLA_RETURN_IF_ERROR(resolve_group(ctx, instr, false, &dv, &g));
    int64_t nd = 0;
    bool array_form = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd) != NULL;
    int64_t n = instr->operand_count, d = 0;
    cxla_status s = NULL;
    if (array_form) {
        s = the_dimension(instr, operands, &d);
        if (!s && n != 1)
            s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                             "the array form (dimensions=) takes one operand, got %" PRId64, n);
        int64_t size = s ? 0 : cxla_literal_shape(operands[0])->dims[d];
        if (!s && size % g.count != 0)
            s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                             "dimension %" PRId64 " (%" PRId64 ") is not divisible by the %" PRId64
                             " participants",
                             d, size, g.count);
    } else if (n != g.count) {
        s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                         "the tuple form takes one operand per participant (%" PRId64
                         "), got %" PRId64,
                         g.count, n);
    }
    if (s || g.count == 1) {
        group_free(&g);
        return s ? s : interp_pack_operands(ctx, instr, operands, &instr->shape, true, out);
    }
    /* Piece k (of the split operand, or operand k) goes to member k. */
    cxla_literal **pieces = calloc((size_t)g.count, sizeof(*pieces));
    const cxla_literal **outgoing = malloc((size_t)g.count * sizeof(*outgoing));
    cxla_literal **results = NULL;
    gathered t = {0};
    if (!pieces || !outgoing) s = OOM();
    for (int64_t k = 0; k < g.count && !s; k++) {
        if (array_form) {
            s = split_piece(operands[0], d, g.count, k, &pieces[k]);
            outgoing[k] = pieces[k];
        } else {
            outgoing[k] = operands[k];
        }
    }
    if (!s) s = exchange_in_group(ctx, instr, seq, &g, 1, outgoing, &t);
    /* The array form concatenates what it received in group order; the tuple form's
     * element k is what member k sent. */
    int64_t result_count = array_form ? 1 : g.count;
    if (!s) s = new_results(result_count, &results);
    if (!s && array_form) {
        s = concat_pieces(t.table, g.count, d, &results[0]);
        if (!s) s = check_declared(instr, &instr->shape, 0, 1, results[0], g.count);
    }
    for (int64_t k = 0; k < g.count && !s && !array_form; k++)
        s = cxla_literal_clone(t.table[k], &results[k]);
    gathered_free(&t);
    free_results(pieces, g.count);
    free(outgoing);
    group_free(&g);
    if (s) {
        free_results(results, result_count);
        return s;
    }
    s = pack_results(instr, results, result_count, &instr->shape, out);
    free(results);
    return s;
}

/* collective-broadcast: every member gets the value of the group's first member. */
static cxla_status op_collective_broadcast(interp_ctx *ctx, const cxla_instr *instr,
                                           const cxla_literal *const *operands,
                                           cxla_literal **out) {
    CXLA_RETURN_IF_ERROR(check_arrays(instr, operands));
    devices dv;
    group g;
    int64_t seq;
    CXLA_RETURN_IF_ERROR(next_sequence(ctx, instr, &seq));
    CXLA_RETURN_IF_ERROR(get_devices(ctx, instr, &dv));
    CXLA_RETURN_IF_ERROR(resolve_group(ctx, instr, false, &dv, &g));
    int64_t n = instr->operand_count;
    cxla_status s = NULL;
    if (g.me == 0) {
        /* The root sends to every other member and keeps its operands. */
        int64_t others = g.count - 1;
        const cxla_literal **sends = malloc((size_t)((others ? others : 1) * n) * sizeof(*sends));
        if (!sends) s = OOM();
        for (int64_t j = 0; j < others && !s; j++)
            for (int64_t i = 0; i < n; i++) sends[j * n + i] = operands[i];
        if (!s)
            s = exchange(ctx, instr, seq, n, others, g.members + 1, sends, 0, NULL, NULL, NULL, 1);
        free(sends);
        group_free(&g);
        return s ? s : interp_pack_operands(ctx, instr, operands, &instr->shape, true, out);
    }
    cxla_literal **results = NULL;
    s = new_results(n, &results);
    if (!s) s = exchange(ctx, instr, seq, n, 0, NULL, NULL, 1, g.members, operands, results, 1);
    group_free(&g);
    if (s) {
        free_results(results, n);
        return s;
    }
    s = pack_results(instr, results, n, &instr->shape, out);
    free(results);
    return s;
}

/* ---- collective-permute ----------------------------------------------------------- */

/* ---- collective-permute, the combined in-place form ----------------------------------
 *
 * collective-permute(input, output, input_start_indices, output_start_indices),
 * slice_sizes={{...},...} (XLA's in-place form; the verifier checks the shapes,
 * infer_collective.c): input and output are arrays, or tuples of as many arrays (the
 * buffers); each buffer has k slices (start indices: a tuple of scalars, k = 1, or a tuple
 * of k such tuples), and slice_sizes lists k sizes per buffer, buffer-major. Pair i of
 * source_target_pairs uses slice j = the number of earlier pairs with the same source.
 * The result is this device's output buffers, where, for each pair {s, me} in order, the
 * window of slice j's sizes at this device's output start indices j takes the window of
 * the same sizes at the source's input start indices j of the source's input buffers.
 * Start indices are clamped into their buffer as dynamic-slice clamps them. What no pair
 * writes keeps the output buffers' values. */

/* A start index as a signed value (unsigned ones above INT64_MAX saturate). */
static int64_t start_index(cxla_type t, const void *p) {
    if (cxla_type_class_of(t) == CXLA_CLASS_UNSIGNED) {
        uint64_t u = cxla_load_u64(t, p);
        return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
    }
    return cxla_load_s64(t, p);
}

/* Buffer |b| of a buffers operand (an array, or a tuple of arrays). */
static const cxla_literal *buffer_of(const cxla_literal *v, int64_t b) {
    return cxla_literal_type(v) == CXLA_TUPLE ? cxla_literal_tuple_element_const(v, b) : v;
}

/* The start indices of |off| (a start-indices operand) as one s64 array: for each buffer
 * b, each slice j, each dimension d (ranks[b] of them). */
static cxla_status flat_starts(const cxla_literal *off, bool tuple, int64_t nb, int64_t k,
                               const int64_t *ranks, cxla_literal **out) {
    int64_t total = 0;
    for (int64_t b = 0; b < nb; b++) total += k * ranks[b];
    int64_t dims[1] = {total};
    cxla_shape fs = {.type = CXLA_S64, .rank = 1, .dims = dims};
    CXLA_RETURN_IF_ERROR(interp_new_array(&fs, out));
    int64_t *v = cxla_literal_data(*out), at = 0;
    for (int64_t b = 0; b < nb; b++) {
        const cxla_literal *ob = tuple ? cxla_literal_tuple_element_const(off, b) : off;
        for (int64_t j = 0; j < k; j++) {
            const cxla_literal *t = ob;
            if (cxla_literal_tuple_count(ob) > 0 &&
                cxla_literal_type(cxla_literal_tuple_element_const(ob, 0)) == CXLA_TUPLE)
                t = cxla_literal_tuple_element_const(ob, j);
            for (int64_t d = 0; d < ranks[b]; d++) {
                const cxla_literal *e = cxla_literal_tuple_element_const(t, d);
                v[at++] = start_index(cxla_literal_type(e), cxla_literal_data_const(e));
            }
        }
    }
    return NULL;
}

/* Copies the window of |size| at |sstart| of the row-major |src| (dims |sdims|) to
 * |dstart| of the row-major |dst| (dims |ddims|), element by element; the starts are
 * clamped as dynamic-slice clamps them. */
static void copy_window(uint8_t *dst, const int64_t *ddims, const int64_t *dstart,
                        const uint8_t *src, const int64_t *sdims, const int64_t *sstart,
                        const int64_t *size, int64_t rank, size_t es) {
    int64_t count = 1, ds[CXLA_MAX_RANK], ss[CXLA_MAX_RANK], idx[CXLA_MAX_RANK] = {0};
    for (int64_t d = 0; d < rank; d++) {
        count *= size[d];
        ds[d] = dstart[d] < 0 ? 0 : dstart[d] > ddims[d] - size[d] ? ddims[d] - size[d] : dstart[d];
        ss[d] = sstart[d] < 0 ? 0 : sstart[d] > sdims[d] - size[d] ? sdims[d] - size[d] : sstart[d];
    }
    for (int64_t n = 0; n < count; n++) {
        int64_t so = 0, dof = 0;
        for (int64_t d = 0; d < rank; d++) {
            so = so * sdims[d] + ss[d] + idx[d];
            dof = dof * ddims[d] + ds[d] + idx[d];
        }
        memcpy(dst + (size_t)dof * es, src + (size_t)so * es, es);
        for (int64_t d = rank - 1; d >= 0 && ++idx[d] == size[d]; d--) idx[d] = 0;
    }
}

static cxla_status permute_in_place(interp_ctx *ctx, const cxla_instr *instr,
                                    const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_SOURCE_TARGET_PAIRS);
    const cxla_attr *sz = cxla_instr_attr(instr, CXLA_ATTR_SLICE_SIZES);
    bool tuple = cxla_literal_type(operands[0]) == CXLA_TUPLE;
    int64_t nb = tuple ? cxla_literal_tuple_count(operands[0]) : 1;
    if (nb > 64)
        return interp_error(instr, CXLA_STATUS_UNIMPLEMENTED,
                            "the in-place form of %" PRId64 " buffers: at most 64 are supported",
                            nb);
    if (!a || a->kind != CXLA_ATTR_KIND_INT_LISTS || !sz || sz->kind != CXLA_ATTR_KIND_INT_LISTS ||
        nb < 1 || nb > 64 || sz->v.int_lists.count % nb != 0 || sz->v.int_lists.count == 0)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the in-place form needs source_target_pairs={{s,t},...} and "
                            "slice_sizes={{...},...} with as many lists per buffer");
    int64_t k = sz->v.int_lists.count / nb, ranks[64];
    for (int64_t b = 0; b < nb; b++) {
        ranks[b] = cxla_literal_shape(buffer_of(operands[0], b))->rank;
        for (int64_t j = 0; j < k; j++)
            if (sz->v.int_lists.lengths[b * k + j] != ranks[b])
                return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                    "slice_sizes entry %" PRId64 " needs %" PRId64 " sizes",
                                    b * k + j, ranks[b]);
    }
    devices dv;
    int64_t seq;
    CXLA_RETURN_IF_ERROR(next_sequence(ctx, instr, &seq));
    CXLA_RETURN_IF_ERROR(get_devices(ctx, instr, &dv));
    int64_t channel;
    bool by_partition = cxla_instr_int(instr, CXLA_ATTR_CHANNEL_ID, &channel);
    const char *word = by_partition ? "partition" : "replica";
    int64_t space = by_partition ? dv.partitions : dv.replicas;
    int64_t me = by_partition ? dv.partition : dv.replica;
    int64_t pairs = a->v.int_lists.count, parts = nb + 1;
    /* The devices this one sends to and receives from, each once, as run-wide ids. */
    int64_t *to = malloc((size_t)(pairs ? pairs : 1) * sizeof(*to));
    int64_t *from = malloc((size_t)(pairs ? pairs : 1) * sizeof(*from));
    int64_t *from_id = malloc((size_t)(pairs ? pairs : 1) * sizeof(*from_id));
    const cxla_literal **mine = calloc((size_t)parts, sizeof(*mine));
    cxla_literal **res = calloc((size_t)nb, sizeof(*res));
    cxla_literal *my_starts = NULL, *out_starts = NULL;
    cxla_status s = to && from && from_id && mine && res ? NULL : OOM();
    int64_t nto = 0, nfrom = 0;
    for (int64_t i = 0; i < pairs && !s; i++) {
        const int64_t *p = a->v.int_lists.lists[i];
        if (a->v.int_lists.lengths[i] != 2) {
            s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                             "source_target_pairs entry %" PRId64 " must be {source,target}", i);
            break;
        }
        for (int c = 0; c < 2 && !s; c++)
            if (p[c] < 0 || (ctx->options.comm && p[c] >= space))
                s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
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
    /* Each message: the sender's input buffers and its input start indices. */
    if (!s) s = flat_starts(operands[2], tuple, nb, k, ranks, &my_starts);
    if (!s) s = flat_starts(operands[3], tuple, nb, k, ranks, &out_starts);
    for (int64_t b = 0; b < nb && !s; b++) {
        s = interp_default_layout(buffer_of(operands[0], b), (cxla_literal **)&mine[b]);
        if (!s) s = interp_default_layout(buffer_of(operands[1], b), &res[b]);
    }
    if (!s) mine[nb] = my_starts;
    const cxla_literal **sends = NULL, **expect = NULL;
    cxla_literal **recvs = NULL;
    if (!s) {
        sends = malloc((size_t)((nto ? nto : 1) * parts) * sizeof(*sends));
        expect = malloc((size_t)((nfrom ? nfrom : 1) * parts) * sizeof(*expect));
        recvs = calloc((size_t)((nfrom ? nfrom : 1) * parts), sizeof(*recvs));
        if (!sends || !expect || !recvs) s = OOM();
    }
    for (int64_t j = 0; j < nto && !s; j++)
        for (int64_t i = 0; i < parts; i++) sends[j * parts + i] = mine[i];
    for (int64_t j = 0; j < nfrom && !s; j++)
        for (int64_t i = 0; i < parts; i++) expect[j * parts + i] = mine[i];
    if (!s) s = exchange(ctx, instr, seq, parts, nto, to, sends, nfrom, from_id, expect, recvs, 1);
    /* The pairs that target this device, in order, each with its slice. */
    const int64_t *outs = out_starts ? cxla_literal_data_const(out_starts) : NULL;
    for (int64_t i = 0; i < pairs && !s; i++) {
        const int64_t *p = a->v.int_lists.lists[i];
        int64_t j = 0;
        for (int64_t e = 0; e < i; e++) j += a->v.int_lists.lists[e][0] == p[0];
        if (p[1] != me) continue;
        if (j >= k) {
            s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                             "%s %" PRId64 " sends more than the %" PRId64
                             " slice(s) of the start indices",
                             word, p[0], k);
            break;
        }
        const cxla_literal *const *src = mine;
        for (int64_t f = 0; f < nfrom; f++)
            if (p[0] != me && from[f] == p[0]) src = (const cxla_literal *const *)&recvs[f * parts];
        const int64_t *ins = cxla_literal_data_const(src[nb]);
        for (int64_t b = 0, at = 0; b < nb; at += k * ranks[b], b++) {
            const cxla_shape *xs = cxla_literal_shape(src[b]), *ys = cxla_literal_shape(res[b]);
            copy_window(cxla_literal_data(res[b]), ys->dims, outs + at + j * ranks[b],
                        cxla_literal_data_const(src[b]), xs->dims, ins + at + j * ranks[b],
                        sz->v.int_lists.lists[b * k + j], ranks[b], cxla_type_storage(xs->type));
        }
    }
    for (int64_t i = 0; recvs && i < nfrom * parts; i++) cxla_literal_free(recvs[i]);
    free(recvs);
    free(sends);
    free(expect);
    for (int64_t b = 0; mine && b < nb; b++) cxla_literal_free((cxla_literal *)mine[b]);
    free(mine);
    cxla_literal_free(my_starts);
    cxla_literal_free(out_starts);
    free(to);
    free(from);
    free(from_id);
    if (!s && !tuple) {
        *out = res[0];
        res[0] = NULL;
    } else if (!s) {
        s = interp_make_tuple(res, nb, out); /* takes the elements, also when it fails */
        memset(res, 0, (size_t)nb * sizeof(*res));
    }
    for (int64_t b = 0; res && b < nb; b++) cxla_literal_free(res[b]);
    free(res);
    return s;
}

/* Replica r receives what the pair {s, r} sends; one that receives nothing gets zeros.
 * The ids are replicas (each partition on its own), or partitions of this replica with a
 * channel_id. */
static cxla_status permute_output(interp_ctx *ctx, const cxla_instr *instr,
                                  const cxla_literal *const *operands, const cxla_shape *shape,
                                  bool may_take, cxla_literal **out) {
    if (instr->operand_count == 4 && cxla_literal_type(operands[2]) == CXLA_TUPLE)
        return permute_in_place(ctx, instr, operands, out);
    CXLA_RETURN_IF_ERROR(check_arrays(instr, operands));
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_SOURCE_TARGET_PAIRS);
    if (!a || a->kind != CXLA_ATTR_KIND_INT_LISTS)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "missing source_target_pairs={{s,t},...}");
    devices dv;
    int64_t seq;
    CXLA_RETURN_IF_ERROR(next_sequence(ctx, instr, &seq));
    CXLA_RETURN_IF_ERROR(get_devices(ctx, instr, &dv));
    int64_t channel;
    bool by_partition = cxla_instr_int(instr, CXLA_ATTR_CHANNEL_ID, &channel);
    const char *word = by_partition ? "partition" : "replica";
    int64_t space = by_partition ? dv.partitions : dv.replicas;
    int64_t me = by_partition ? dv.partition : dv.replica;
    int64_t pairs = a->v.int_lists.count, source = -1, n = instr->operand_count;
    int64_t *targets = malloc((size_t)(pairs ? pairs : 1) * sizeof(*targets));
    if (!targets) return OOM();
    int64_t target_count = 0;
    bool to_self = false;
    cxla_status s = NULL;
    for (int64_t i = 0; i < pairs && !s; i++) {
        const int64_t *p = a->v.int_lists.lists[i];
        if (a->v.int_lists.lengths[i] != 2) {
            s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                             "source_target_pairs entry %" PRId64 " must be {source,target}", i);
            break;
        }
        for (int k = 0; k < 2 && !s; k++)
            if (p[k] < 0 || (ctx->options.comm && p[k] >= space))
                s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                 "source_target_pairs name %s %" PRId64 " but the run has %" PRId64
                                 " %ss",
                                 word, p[k], space, word);
        if (s) break;
        if (p[1] == me) {
            if (source >= 0)
                s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
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
    const cxla_literal **sends = NULL;
    if (!s) {
        sends = malloc((size_t)((target_count ? target_count : 1) * n) * sizeof(*sends));
        if (!sends) s = OOM();
    }
    for (int64_t j = 0; j < target_count && !s; j++)
        for (int64_t i = 0; i < n; i++) sends[j * n + i] = operands[i];
    cxla_literal **results = NULL;
    if (!s) s = new_results(n, &results);
    if (!s)
        s = exchange(ctx, instr, seq, n, target_count, targets, sends, from >= 0 ? 1 : 0, &from,
                     operands, results, 1);
    free(targets);
    free(sends);
    if (s) {
        free_results(results, n);
        return s;
    }
    if (from < 0) {
        free_results(results, n);
        if (to_self) return interp_pack_operands(ctx, instr, operands, shape, may_take, out);
        return interp_zeros(shape, out);
    }
    s = pack_results(instr, results, n, shape, out);
    free(results);
    return s;
}

static cxla_status op_collective_permute(interp_ctx *ctx, const cxla_instr *instr,
                                         const cxla_literal *const *operands, cxla_literal **out) {
    return permute_output(ctx, instr, operands, &instr->shape, true, out);
}

/* collective-permute-start: (input, output, context...). */
static cxla_status op_collective_permute_start(interp_ctx *ctx, const cxla_instr *instr,
                                               const cxla_literal *const *operands,
                                               cxla_literal **out) {
    const cxla_shape *d = &instr->shape;
    if (d->type != CXLA_TUPLE || d->tuple_count < 2)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result must be an (input, output, context...) tuple");
    int64_t n = d->tuple_count;
    cxla_literal **parts = calloc((size_t)n, sizeof(*parts));
    if (!parts) return OOM();
    cxla_status s = permute_output(ctx, instr, operands, &d->elements[1], false, &parts[1]);
    if (!s && instr->operand_count == 4 && cxla_literal_type(operands[2]) == CXLA_TUPLE)
        s = cxla_literal_clone(operands[0], &parts[0]); /* the in-place form's input */
    else if (!s)
        s = interp_pack_operands(ctx, instr, operands, &d->elements[0], true, &parts[0]);
    for (int64_t i = 2; i < n && !s; i++) s = interp_zeros(&d->elements[i], &parts[i]);
    if (s) {
        for (int64_t i = 0; i < n; i++) cxla_literal_free(parts[i]);
        free(parts);
        return s;
    }
    s = interp_make_tuple(parts, n, out);
    free(parts);
    return s;
}

/* ---- collective-reduce ------------------------------------------------------------ */

/* collective-reduce: a reduction to one device (NCCL's reduce). The group's first member
 * (its root) gets the operands of all members reduced with to_apply in group order, as
 * all-reduce computes them; XLA writes the result only on the root and leaves the other
 * members' outputs unwritten, so cxla defines them as the member's own operands. */
static cxla_status op_collective_reduce(interp_ctx *ctx, const cxla_instr *instr,
                                        const cxla_literal *const *operands, cxla_literal **out) {
    if (cxla_instr_bool(instr, CXLA_ATTR_HAS_DYNAMIC_ROOT))
        return interp_error(instr, CXLA_STATUS_UNIMPLEMENTED,
                            "collective-reduce with a root chosen at run time "
                            "(has_dynamic_root=true) is not supported by the interpreter yet");
    CXLA_RETURN_IF_ERROR(check_arrays(instr, operands));
    devices dv;
    group g;
    int64_t seq;
    CXLA_RETURN_IF_ERROR(next_sequence(ctx, instr, &seq));
    CXLA_RETURN_IF_ERROR(get_devices(ctx, instr, &dv));
    CXLA_RETURN_IF_ERROR(resolve_group(ctx, instr, true, &dv, &g));
    const cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    int64_t n = instr->operand_count;
    cxla_status s = NULL;
    if (!comp) s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "missing to_apply=");
    if (s || g.count == 1) {
        group_free(&g);
        return s ? s : interp_pack_operands(ctx, instr, operands, &instr->shape, true, out);
    }
    if (g.me != 0) {
        /* A member sends its operands to the root and keeps them. */
        s = exchange(ctx, instr, seq, n, 1, g.members, operands, 0, NULL, NULL, NULL, 1);
        group_free(&g);
        return s ? s : interp_pack_operands(ctx, instr, operands, &instr->shape, true, out);
    }
    int64_t others = g.count - 1;
    const cxla_literal **expect = calloc((size_t)(others * n), sizeof(*expect));
    cxla_literal **received = calloc((size_t)(others * n), sizeof(*received));
    const cxla_literal **column = malloc((size_t)g.count * sizeof(*column));
    cxla_literal **results = NULL;
    if (!expect || !received || !column) s = OOM();
    for (int64_t j = 0; j < others && !s; j++)
        for (int64_t i = 0; i < n; i++) expect[j * n + i] = operands[i];
    if (!s)
        s = exchange(ctx, instr, seq, n, 0, NULL, NULL, others, g.members + 1, expect, received, 1);
    if (!s) s = new_results(n, &results);
    for (int64_t i = 0; i < n && !s; i++) {
        column[0] = operands[i];
        for (int64_t j = 0; j < others; j++) column[j + 1] = received[j * n + i];
        s = reduce_in_order(ctx, instr, comp, column, g.count, &results[i]);
    }
    free_results(received, others * n);
    free(expect);
    free(column);
    group_free(&g);
    if (s) {
        free_results(results, n);
        return s;
    }
    s = pack_results(instr, results, n, &instr->shape, out);
    free(results);
    return s;
}

/* ---- ragged-all-to-all ------------------------------------------------------------ */

/* ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets,
 * recv_sizes): each member sends pieces of its input (runs of rows along dimension 0) to
 * every member, which writes them into its copy of output. The four metadata arrays hold
 * G * u integers (G the group size, u the updates per peer), update i to member k at
 * index k * u + i: rows [input_offsets, input_offsets + send_sizes) of the sender's
 * input go to rows from output_offsets (an offset in the receiver's output) of member
 * k's result; recv_sizes[k * u + i] is what this member receives from member k and must
 * match that sender's size. Rows nobody writes keep output's values.
 *
 * Every member sends its whole input and its metadata to every other (fixed shapes, as
 * the exchange checks them), and each computes its own result from what it received:
 * the same outcome as sending only the pieces. */
enum { RAGGED_PARTS = 4 }; /* input, input_offsets, send_sizes, output_offsets */

/* Element |i| of the integer array |a|. */
static int64_t int_at(const cxla_literal *a, int64_t i) {
    cxla_type t = cxla_literal_type(a);
    return cxla_load_s64(t, (const char *)cxla_literal_data_const(a) +
                                (size_t)i * cxla_type_storage(t));
}

static cxla_status op_ragged_all_to_all(interp_ctx *ctx, const cxla_instr *instr,
                                        const cxla_literal *const *operands, cxla_literal **out) {
    if (instr->operand_count != 6)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "takes 6 operands (input, output, input_offsets, send_sizes, "
                            "output_offsets, recv_sizes), got %" PRId64,
                            instr->operand_count);
    CXLA_RETURN_IF_ERROR(check_arrays(instr, operands));
    const cxla_shape *in_s = cxla_literal_shape(operands[0]);
    const cxla_shape *out_s = cxla_literal_shape(operands[1]);
    if (in_s->rank < 1 || in_s->type != out_s->type || in_s->rank != out_s->rank)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "input and output must be arrays of one element type and rank >= 1");
    int64_t row = 1;
    for (int64_t j = 1; j < in_s->rank; j++) {
        if (in_s->dims[j] != out_s->dims[j])
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "input and output differ in dimension %" PRId64 " (%" PRId64
                                " vs %" PRId64 "); only dimension 0 may",
                                j, in_s->dims[j], out_s->dims[j]);
        row *= in_s->dims[j];
    }
    int64_t meta = cxla_literal_element_count(operands[2]);
    for (int64_t i = 2; i < 6; i++)
        if (!cxla_type_is_integer(cxla_literal_type(operands[i])) ||
            cxla_literal_element_count(operands[i]) != meta)
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "the offsets and sizes must be integer arrays of one size");
    devices dv;
    group g;
    int64_t seq;
    CXLA_RETURN_IF_ERROR(next_sequence(ctx, instr, &seq));
    CXLA_RETURN_IF_ERROR(get_devices(ctx, instr, &dv));
    CXLA_RETURN_IF_ERROR(resolve_group(ctx, instr, false, &dv, &g));
    cxla_status s = NULL;
    if (meta == 0 || meta % g.count != 0)
        s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                         "the offsets and sizes hold %" PRId64
                         " values, not a positive multiple of the %" PRId64 " participants",
                         meta, g.count);
    int64_t u = s ? 0 : meta / g.count;
    const cxla_literal **outgoing = malloc((size_t)(g.count * RAGGED_PARTS) * sizeof(*outgoing));
    gathered t = {0};
    if (!s && !outgoing) s = OOM();
    for (int64_t k = 0; k < g.count && !s; k++) {
        outgoing[k * RAGGED_PARTS + 0] = operands[0];
        outgoing[k * RAGGED_PARTS + 1] = operands[2];
        outgoing[k * RAGGED_PARTS + 2] = operands[3];
        outgoing[k * RAGGED_PARTS + 3] = operands[4];
    }
    if (!s) s = exchange_in_group(ctx, instr, seq, &g, RAGGED_PARTS, outgoing, &t);
    free(outgoing);
    cxla_literal *result = NULL;
    if (!s) s = cxla_literal_clone(operands[1], &result);
    size_t esize = cxla_type_storage(in_s->type);
    char name[64];
    for (int64_t k = 0; k < g.count && !s; k++) {
        const cxla_literal *const *from = t.table + k * RAGGED_PARTS;
        const cxla_shape *src_s = cxla_literal_shape(from[0]);
        const char *src = cxla_literal_data_const(from[0]);
        char *dst = cxla_literal_data(result);
        for (int64_t i = 0; i < u && !s; i++) {
            int64_t idx = g.me * u + i;
            int64_t in_off = int_at(from[1], idx), size = int_at(from[2], idx);
            int64_t out_off = int_at(from[3], idx), want = int_at(operands[5], k * u + i);
            exec_device_name(dv.partitions, g.members[k], name, sizeof(name));
            if (size != want)
                s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                 "%s sends %" PRId64 " rows in update %" PRId64
                                 " but recv_sizes[%" PRId64 "] expects %" PRId64,
                                 name, size, i, k * u + i, want);
            else if (size < 0 || in_off < 0 || in_off > src_s->dims[0] - size || out_off < 0 ||
                     out_off > out_s->dims[0] - size)
                s = interp_error(instr, CXLA_STATUS_OUT_OF_RANGE,
                                 "update %" PRId64 " from %s (rows %" PRId64 "..%" PRId64
                                 " of its input, %" PRId64 " rows, to rows %" PRId64 "..%" PRId64
                                 " of the output, %" PRId64 " rows) is out of range",
                                 i, name, in_off, in_off + size, src_s->dims[0], out_off,
                                 out_off + size, out_s->dims[0]);
            else if (size > 0)
                memcpy(dst + (size_t)(out_off * row) * esize, src + (size_t)(in_off * row) * esize,
                       (size_t)(size * row) * esize);
        }
    }
    gathered_free(&t);
    group_free(&g);
    if (s) {
        cxla_literal_free(result);
        return s;
    }
    *out = result;
    return NULL;
}

const interp_op_fn interp_collective_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_REPLICA_ID] = op_replica_id,
    [CXLA_OP_PARTITION_ID] = op_partition_id,
    [CXLA_OP_ALL_REDUCE] = op_all_reduce,
    [CXLA_OP_ALL_REDUCE_START] = op_all_reduce,
    [CXLA_OP_ALL_REDUCE_DONE] = interp_op_pass,
    [CXLA_OP_ALL_GATHER] = op_all_gather,
    [CXLA_OP_ALL_GATHER_START] = op_all_gather_start,
    [CXLA_OP_ALL_GATHER_DONE] = interp_op_element1,
    [CXLA_OP_REDUCE_SCATTER] = op_reduce_scatter,
    [CXLA_OP_ALL_TO_ALL] = op_all_to_all,
    [CXLA_OP_COLLECTIVE_BROADCAST] = op_collective_broadcast,
    [CXLA_OP_COLLECTIVE_PERMUTE] = op_collective_permute,
    [CXLA_OP_COLLECTIVE_PERMUTE_START] = op_collective_permute_start,
    [CXLA_OP_COLLECTIVE_PERMUTE_DONE] = interp_op_element1,
    [CXLA_OP_COLLECTIVE_REDUCE] = op_collective_reduce,
    [CXLA_OP_RAGGED_ALL_TO_ALL] = op_ragged_all_to_all,
};
