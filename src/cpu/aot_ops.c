/* Ahead-of-time steps that are neither kernels nor control flow (aot_internal.h): custom
 * calls through the caller's table, infeed and outfeed through the caller's callbacks,
 * collectives on one device, replica-id and partition-id, tokens.
 *
 * The generated library runs as one device: replica 0 of partition 0, with the module's
 * replica_count and num_partitions. A collective whose group holds only this device is
 * a copy of its operands (all-reduce, all-gather, reduce-scatter, all-to-all,
 * collective-broadcast, collective-reduce: the interpreter's identity for a group of one,
 * whatever the reducer, which a group of one never calls; so no combine function of
 * emit_combine.c is needed here, those being for groups of several devices); a
 * collective-permute is a copy when device 0 sends to itself and zeros when nobody sends
 * to it (its in-place form: the output with the windows of the pairs {0,0}); a
 * ragged-all-to-all in a group of one moves its own rows (NAME_ERROR_COLLECTIVE for the
 * interpreter's run-time checks); anything that needs
 * another device is a compile-time error naming the instruction, as the interpreter's run on one
 * device is a run-time error. replica-id and partition-id are 0.
 *
 * Custom calls follow the runtime's convention (include/cxla/custom_call.h): one pointer
 * per operand leaf (tokens: NULL), the result buffer (or, for a tuple result, an array of
 * leaf pointers) zero-filled first (or holding the operand it aliases per
 * output_to_operand_aliasing), the opaque backend_config bytes, and a status the target
 * may mark failed. The function comes from NAME_options.custom_calls by target name and
 * must have been entered there with the instruction's api_version. The built-in targets
 * that mean nothing on one device (Sharding, ...) are copies; AllocateBuffer is zeros. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/aot_internal.h"
#include "cpu/emit.h"
#include "cpu/emit_internal.h"
#include "exec/custom_call.h"
#include "exec/dynamic.h"
#include "exec/exec.h"
#include "interp/interp_reduce.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

bool aot_ops_takes(const cxla_instr *in) {
    switch (in->opcode) {
    case CXLA_OP_REPLICA_ID:
    case CXLA_OP_PARTITION_ID:
    case CXLA_OP_AFTER_ALL:
    case CXLA_OP_ADD_DEPENDENCY:
    case CXLA_OP_INFEED:
    case CXLA_OP_OUTFEED:
    case CXLA_OP_CUSTOM_CALL:
    case CXLA_OP_ALL_REDUCE:
    case CXLA_OP_ALL_REDUCE_START:
    case CXLA_OP_ALL_REDUCE_DONE:
    case CXLA_OP_ALL_GATHER:
    case CXLA_OP_REDUCE_SCATTER:
    case CXLA_OP_COLLECTIVE_REDUCE:
    case CXLA_OP_ALL_TO_ALL:
    case CXLA_OP_COLLECTIVE_BROADCAST:
    case CXLA_OP_COLLECTIVE_PERMUTE:
    case CXLA_OP_RAGGED_ALL_TO_ALL:
    case CXLA_OP_ALL_GATHER_START:
    case CXLA_OP_ALL_GATHER_DONE:
    case CXLA_OP_COLLECTIVE_PERMUTE_START:
    case CXLA_OP_COLLECTIVE_PERMUTE_DONE:
    case CXLA_OP_ASYNC_UPDATE:
    case CXLA_OP_ASYNC_DONE:
    case CXLA_OP_SEND:
    case CXLA_OP_SEND_DONE:
    case CXLA_OP_RECV:
    case CXLA_OP_RECV_DONE: return true;
    default: return false;
    }
}

/* ---- one device ------------------------------------------------------------------------- */

/* How many devices the group of device 0 holds, as the interpreter's resolve_group counts
 * them (XLA's CollectiveOpGroupMode; every id of device 0 is 0). */
static cxla_status group_size(const cxla_module *m, const cxla_instr *in, int64_t *out) {
    int64_t replicas = m->replica_count > 0 ? m->replica_count : 1;
    int64_t partitions = m->num_partitions > 0 ? m->num_partitions : 1;
    int64_t channel;
    bool has_channel = cxla_instr_int(in, CXLA_ATTR_CHANNEL_ID, &channel);
    bool global_ids = in->opcode == CXLA_OP_ALL_REDUCE || in->opcode == CXLA_OP_ALL_REDUCE_START ||
                      in->opcode == CXLA_OP_ALL_GATHER || in->opcode == CXLA_OP_ALL_GATHER_START ||
                      in->opcode == CXLA_OP_REDUCE_SCATTER ||
                      in->opcode == CXLA_OP_COLLECTIVE_REDUCE;
    bool flattened =
        has_channel && global_ids && cxla_instr_bool(in, CXLA_ATTR_USE_GLOBAL_DEVICE_IDS);
    bool cross_partition = has_channel && !global_ids;
    bool both = has_channel && global_ids && !flattened;
    int64_t space = cross_partition ? partitions : flattened ? replicas * partitions : replicas;
    int64_t per = both ? partitions : 1;
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_REPLICA_GROUPS);
    const cxla_replica_groups *rg =
        a && a->kind == CXLA_ATTR_KIND_REPLICA_GROUPS ? &a->v.groups : NULL;
    if (rg && rg->group_count == 0 && rg->text) {
        *out = replicas * partitions;
        return NULL;
    }
    if (!rg || rg->group_count == 0) {
        if (flattened) return aot_no(in, "use_global_device_ids=true needs replica_groups");
        *out = space * per;
        return NULL;
    }
    for (int64_t i = 0; i < rg->group_count; i++)
        for (int64_t j = 0; j < rg->group_sizes[i]; j++)
            if (rg->groups[i][j] == 0) {
                *out = rg->group_sizes[i] * per;
                return NULL;
            }
    return aot_no(in, "device 0 is in none of the replica_groups");
}

static bool same_leaves(const cxla_shape *const *shapes, int64_t count, aot *a, const acomp *c,
                        const int64_t *ins, int64_t nin) {
    (void)a;
    if (count != nin) return false;
    for (int64_t k = 0; k < count; k++) {
        const cxla_shape *x = shapes[k], *y = c->leaves[ins[k]].shape;
        if (!y || x->type != y->type || x->rank != y->rank) return false;
        for (int64_t d = 0; d < x->rank; d++)
            if (x->dims[d] != y->dims[d]) return false;
    }
    return true;
}

/* ---- collective-permute's combined in-place form ----------------------------------------
 *
 * collective-permute(input, output, input_start_indices, output_start_indices),
 * slice_sizes={{...},...} (docs/semantics.md; the interpreter's permute_in_place): input and
 * output are arrays or tuples of nb arrays (the buffers), each buffer has k slices, and pair
 * i of source_target_pairs uses slice j, the number of earlier pairs with its source. On one
 * device the result is the output buffers in which, for each pair {0,0} in order, the
 * window of slice j's sizes at the output start indices j takes the window at the input
 * start indices j of the input (both clamped as dynamic-slice clamps them); pairs {0,t}
 * send to devices that are not there (dropped, as the interpreter drops them on one
 * device) and a pair {s,0} from another device is a compile-time error. The step reads
 * (input leaves, output leaves, input starts, output starts: buffer, slice, dimension)
 * and writes nb leaves; share_buffers (aot.c) lets the result take over an output buffer
 * that dies there, the update then written where it lies, as XLA means the form. */

/* Whether |in| is the in-place form, as the interpreter tells it: four operands, the third
 * (the input start indices) a tuple. */
static bool permute_in_place(const cxla_instr *in) {
    return (in->opcode == CXLA_OP_COLLECTIVE_PERMUTE ||
            in->opcode == CXLA_OP_COLLECTIVE_PERMUTE_START) &&
           in->operand_count == 4 && in->operands[2]->shape.type == CXLA_TUPLE;
}

/* The form's layout: nb buffers of ranks[b] (shapes shp[b]: the input's, then at nb + b
 * the output's), k slices each, the sizes of slice j of buffer b at sizes[b * k + j]. */
typedef struct permute_form {
    int64_t nb, k, starts; /* starts: the leaves of one start-indices operand */
    int64_t ranks[64];
    const cxla_shape *shp[128];
    const int64_t *const *sizes;
    const cxla_attr *pairs;
} permute_form;

static void buffer_shapes(const cxla_shape *s, const cxla_shape **out, int64_t nb) {
    for (int64_t b = 0; b < nb; b++) out[b] = s->type == CXLA_TUPLE ? &s->elements[b] : s;
}

/* The form of |in| (permute_in_place), checked as the interpreter checks it when it runs
 * (the verifier has checked the shapes): UNIMPLEMENTED naming it otherwise. */
static cxla_status permute_form_of(const cxla_instr *in, permute_form *f) {
    memset(f, 0, sizeof *f);
    const cxla_shape *x = &in->operands[0]->shape, *y = &in->operands[1]->shape;
    f->pairs = cxla_instr_attr(in, CXLA_ATTR_SOURCE_TARGET_PAIRS);
    const cxla_attr *sz = cxla_instr_attr(in, CXLA_ATTR_SLICE_SIZES);
    f->nb = x->type == CXLA_TUPLE ? x->tuple_count : 1;
    if (f->nb < 1 || f->nb > 64 || (y->type == CXLA_TUPLE ? y->tuple_count : 1) != f->nb)
        return aot_no(in, "the in-place form takes 1 to 64 buffers, as many in the input as in "
                          "the output");
    if (!f->pairs || f->pairs->kind != CXLA_ATTR_KIND_INT_LISTS || !sz ||
        sz->kind != CXLA_ATTR_KIND_INT_LISTS || sz->v.int_lists.count == 0 ||
        sz->v.int_lists.count % f->nb != 0)
        return aot_no(in, "the in-place form needs source_target_pairs={{s,t},...} and "
                          "slice_sizes={{...},...} with as many lists per buffer");
    f->k = sz->v.int_lists.count / f->nb;
    f->sizes = (const int64_t *const *)sz->v.int_lists.lists;
    buffer_shapes(x, f->shp, f->nb);
    buffer_shapes(y, f->shp + f->nb, f->nb);
    for (int64_t b = 0; b < f->nb; b++) {
        const cxla_shape *xs = f->shp[b], *ys = f->shp[f->nb + b];
        if (!cxla_type_is_array(xs->type) || xs->type != ys->type || xs->rank != ys->rank)
            return aot_no(in, "input and output buffers must be arrays of one element type and "
                              "rank");
        f->ranks[b] = xs->rank;
        f->starts += f->k * xs->rank;
        for (int64_t j = 0; j < f->k; j++) {
            int64_t e = b * f->k + j;
            if (sz->v.int_lists.lengths[e] != xs->rank)
                return aot_no(in, "a slice_sizes entry without one size per dimension");
            for (int64_t d = 0; d < xs->rank; d++)
                if (f->sizes[e][d] < 0 || f->sizes[e][d] > xs->dims[d] ||
                    f->sizes[e][d] > ys->dims[d])
                    return aot_no(in, "a slice_sizes entry outside its buffers");
        }
    }
    int64_t sent = 0; /* the pairs with source 0 so far */
    for (int64_t i = 0; i < f->pairs->v.int_lists.count; i++) {
        const int64_t *p = f->pairs->v.int_lists.lists[i];
        if (f->pairs->v.int_lists.lengths[i] != 2 || p[0] < 0 || p[1] < 0)
            return aot_no(in, "a source_target_pairs entry that is not {source,target} of "
                              "device ids");
        if (p[1] == 0 && p[0] != 0) {
            char why[160];
            snprintf(why, sizeof why,
                     "device 0 receives from device %" PRId64
                     ": collectives across devices need the runtime (cxla run --replicas)",
                     p[0]);
            return aot_no(in, why);
        }
        if (p[0] == 0 && p[1] == 0 && sent >= f->k) {
            char why[160];
            snprintf(why, sizeof why,
                     "device 0 sends more than the %" PRId64 " slice(s) of the start indices",
                     f->k);
            return aot_no(in, why);
        }
        if (p[0] == 0) sent++;
    }
    return NULL;
}

/* The step of the in-place form (collective-permute, or the -start's output element). */
static cxla_status permute_in_place_step(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins,
                                         int64_t nin, const cxla_shape *const *shapes,
                                         int64_t count, int64_t *lv) {
    (void)a;
    permute_form f;
    CXLA_RETURN_IF_ERROR(permute_form_of(in, &f));
    if (nin != 2 * f.nb + 2 * f.starts || count != f.nb)
        return aot_no(in, "start indices that are not one integer scalar per dimension of each "
                          "slice, or a result that is not the output buffers");
    for (int64_t k = 0; k < 2 * f.starts; k++) {
        const cxla_shape *t = c->leaves[ins[2 * f.nb + k]].shape;
        if (!t || t->rank != 0 || !cxla_type_is_integer(t->type))
            return aot_no(in, "the start indices must be integer scalars");
    }
    if (!same_leaves(shapes, count, a, c, ins + f.nb, f.nb))
        return aot_no(in, "the result's shapes differ from the output buffers'");
    int64_t *outs = NULL;
    CXLA_RETURN_IF_ERROR(aot_add_step(c, S_PERMUTE, in, ins, nin, shapes, count, &outs));
    memcpy(lv, outs, (size_t)count * sizeof(int64_t));
    return NULL;
}

/* ---- ragged-all-to-all on one device ------------------------------------------------------
 *
 * ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes)
 * (docs/semantics.md; the interpreter's op_ragged_all_to_all): in a group of one, update i
 * copies rows [input_offsets[i], + send_sizes[i]) of the input to rows from
 * output_offsets[i] of the output, in order, after the interpreter's checks (recv_sizes[i]
 * must be send_sizes[i]; the rows must lie in both arrays), which fail the run with
 * NAME_ERROR_COLLECTIVE and the interpreter's message. The step reads the six operands and
 * writes the result; share_buffers lets it take over the output's buffer where that dies. */

static cxla_status ragged_step(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins,
                               int64_t nin, const cxla_shape *const *shapes, int64_t count,
                               int64_t *lv);

static cxla_status collective(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins,
                              int64_t nin, const cxla_shape *const *shapes, int64_t count,
                              int64_t *lv) {
    int64_t n = 0;
    int64_t *outs = NULL;
    if (permute_in_place(in)) return permute_in_place_step(a, c, in, ins, nin, shapes, count, lv);
    if (in->opcode == CXLA_OP_RAGGED_ALL_TO_ALL)
        return ragged_step(a, c, in, ins, nin, shapes, count, lv);
    if (in->opcode == CXLA_OP_COLLECTIVE_PERMUTE ||
        in->opcode == CXLA_OP_COLLECTIVE_PERMUTE_START) {
        const cxla_attr *p = cxla_instr_attr(in, CXLA_ATTR_SOURCE_TARGET_PAIRS);
        if (!p || p->kind != CXLA_ATTR_KIND_INT_LISTS) return aot_no(in, "no source_target_pairs");
        int64_t source = -1;
        for (int64_t i = 0; i < p->v.int_lists.count; i++)
            if (p->v.int_lists.lengths[i] == 2 && p->v.int_lists.lists[i][1] == 0)
                source = p->v.int_lists.lists[i][0];
        if (source > 0) {
            char why[160];
            snprintf(why, sizeof why,
                     "device 0 receives from device %" PRId64
                     ": collectives across devices need the runtime (cxla run --replicas)",
                     source);
            return aot_no(in, why);
        }
        if (!same_leaves(shapes, count, a, c, ins, nin))
            return aot_no(in, "the result's shapes differ from the operands'");
        CXLA_RETURN_IF_ERROR(
            aot_add_step(c, source == 0 ? S_COPY : S_ZERO, in, ins, nin, shapes, count, &outs));
        memcpy(lv, outs, (size_t)count * sizeof(int64_t));
        return NULL;
    }
    if (in->opcode == CXLA_OP_COLLECTIVE_REDUCE && cxla_instr_bool(in, CXLA_ATTR_HAS_DYNAMIC_ROOT))
        return aot_no(in, "a root chosen at run time (has_dynamic_root=true), which the "
                          "interpreter does not run either");
    CXLA_RETURN_IF_ERROR(group_size(a->m, in, &n));
    if (n != 1) {
        char why[200];
        snprintf(why, sizeof why,
                 "its group holds %" PRId64
                 " devices; ahead-of-time code runs on one device, and collectives across "
                 "devices need the runtime (cxla run --replicas)",
                 n);
        return aot_no(in, why);
    }
    if (!same_leaves(shapes, count, a, c, ins, nin))
        return aot_no(in, "the result's shapes differ from the operands' (a group of one is the "
                          "identity)");
    CXLA_RETURN_IF_ERROR(aot_add_step(c, S_COPY, in, ins, nin, shapes, count, &outs));
    memcpy(lv, outs, (size_t)count * sizeof(int64_t));
    return NULL;
}

static cxla_status ragged_step(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins,
                               int64_t nin, const cxla_shape *const *shapes, int64_t count,
                               int64_t *lv) {
    int64_t n = 0;
    CXLA_RETURN_IF_ERROR(group_size(a->m, in, &n));
    if (n != 1) {
        char why[200];
        snprintf(why, sizeof why,
                 "its group holds %" PRId64
                 " devices; ahead-of-time code runs on one device, and collectives across "
                 "devices need the runtime (cxla run --replicas)",
                 n);
        return aot_no(in, why);
    }
    if (in->operand_count != 6 || nin != 6 || count != 1)
        return aot_no(in, "takes 6 arrays (input, output, input_offsets, send_sizes, "
                          "output_offsets, recv_sizes)");
    const cxla_shape *x = &in->operands[0]->shape, *y = &in->operands[1]->shape;
    if (!cxla_type_is_array(x->type) || x->rank < 1 || x->type != y->type || x->rank != y->rank)
        return aot_no(in, "input and output must be arrays of one element type and rank >= 1");
    for (int64_t d = 1; d < x->rank; d++)
        if (x->dims[d] != y->dims[d])
            return aot_no(in, "input and output differ in a dimension other than 0");
    int64_t meta = -1;
    for (int64_t k = 2; k < 6; k++) {
        const cxla_shape *t = &in->operands[k]->shape;
        int64_t e = 1;
        for (int64_t d = 0; d < t->rank; d++) e *= t->dims[d];
        if (!cxla_type_is_integer(t->type) || (meta >= 0 && e != meta))
            return aot_no(in, "the offsets and sizes must be integer arrays of one size");
        meta = e;
    }
    if (meta <= 0)
        return aot_no(in, "the offsets and sizes hold no values (the interpreter's error)");
    if (!same_leaves(shapes, count, a, c, ins + 1, 1))
        return aot_no(in, "the result's shape differs from the output's");
    int64_t *outs = NULL;
    CXLA_RETURN_IF_ERROR(aot_add_step(c, S_RAGGED, in, ins, nin, shapes, count, &outs));
    lv[0] = outs[0];
    return NULL;
}

/* all-gather-start, collective-permute-start: (operands, result, contexts...): the
 * operands' leaves as they are, the collective's result as above (the work is done at
 * once, as the interpreter does it in -start), zeros for the contexts. */
static cxla_status start_op(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins, int64_t nin,
                            const cxla_shape *const *shapes, int64_t count, int64_t *lv) {
    const cxla_shape *d = &in->shape;
    /* The in-place form's first element is its input (the first operand) alone. */
    int64_t n0 = permute_in_place(in) ? aot_leaf_count(&in->operands[0]->shape) : nin;
    if (d->type != CXLA_TUPLE || d->tuple_count < 2 || aot_leaf_count(&d->elements[0]) != n0 ||
        n0 > nin)
        return aot_no(in, "the result must be an (operands, result, contexts...) tuple");
    int64_t n1 = aot_leaf_count(&d->elements[1]);
    memcpy(lv, ins, (size_t)n0 * sizeof(int64_t));
    CXLA_RETURN_IF_ERROR(collective(a, c, in, ins, nin, shapes + n0, n1, lv + n0));
    if (count == n0 + n1) return NULL;
    int64_t *outs = NULL;
    CXLA_RETURN_IF_ERROR(
        aot_add_step(c, S_ZERO, in, NULL, 0, shapes + n0 + n1, count - n0 - n1, &outs));
    memcpy(lv + n0 + n1, outs, (size_t)(count - n0 - n1) * sizeof(int64_t));
    return NULL;
}

/* ---- TopK ------------------------------------------------------------------------------ */

/* XLA's "TopK" custom call: (values, s32 indices) of the k = last-dim-of-values first
 * elements of each row, largest first (or smallest first with a less-than comparator), in
 * XLA's total order, ties in index order. As the interpreter does (interp_custom_call.c),
 * it is the topk operation with k and largest set: the emitter's topk kernel
 * (emit_lib.c: the interpreter's stable merge sort), with its work memory as an arena
 * leaf after the results. */
static cxla_status topk(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins, int64_t nin,
                        const cxla_shape *const *shapes, int64_t count, int64_t *lv) {
    const cxla_shape *r = &in->shape;
    if (in->operand_count != 1 || nin != 1 || count != 2 || r->type != CXLA_TUPLE ||
        r->tuple_count != 2 || r->elements[0].rank < 1)
        return aot_no(in, "custom-call target 'TopK' takes one array and returns (values, "
                          "indices)");
    bool largest = true;
    cxla_computation *comp = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    if (!comp) {
        cxla_computation *called[1];
        if (cxla_instr_called_computations(in, called, 1) == 1) comp = called[0];
    }
    if (comp) {
        interp_comparator cmp = interp_match_comparator(comp);
        if (cmp.direction != INTERP_DIR_GT && cmp.direction != INTERP_DIR_LT)
            return aot_no(in, "the TopK comparator is not a plain greater-than or less-than");
        largest = cmp.direction == INTERP_DIR_GT;
    }
    const cxla_shape *v = &r->elements[0];
    cxla_attr attrs[2] = {
        {.id = CXLA_ATTR_K, .name = "k", .kind = CXLA_ATTR_KIND_INT, .v.i = v->dims[v->rank - 1]},
        {.id = CXLA_ATTR_LARGEST, .name = "largest", .kind = CXLA_ATTR_KIND_BOOL, .v.b = largest},
    };
    cxla_instr t = *in;
    t.opcode = CXLA_OP_TOPK;
    t.attrs = attrs;
    t.attr_count = 2;
    if (!cpu_can_emit(&t))
        return aot_no(in, "the emitter's topk kernel does not take this TopK (its element type "
                          "or shapes)");
    char name[64];
    snprintf(name, sizeof name, "%s_k%" PRId64, a->P, in->id);
    cpu_kernel_info info;
    memset(&info, 0, sizeof info);
    CXLA_RETURN_IF_ERROR(cpu_emit_kernel_info(&t, name, &a->kernels, &info));
    int64_t *outs = NULL;
    CXLA_RETURN_IF_ERROR(aot_add_step(c, S_KERNEL, in, ins, nin, shapes, count, &outs));
    memcpy(lv, outs, (size_t)count * sizeof(int64_t));
    if (!info.scratch) return NULL;
    astep *st = &c->steps[c->step_count - 1];
    st->tmp = malloc(sizeof(int64_t));
    if (!st->tmp) return OOM();
    st->tmp[0] = aot_add_leaf(c, (aleaf){.kind = L_ARENA, .size = info.scratch});
    st->tmp_count = 1;
    return st->tmp[0] < 0 ? OOM() : NULL;
}

/* ---- custom calls -------------------------------------------------------------------------- */

static const char *target_of(const cxla_instr *in) {
    const cxla_attr *t = cxla_instr_attr(in, CXLA_ATTR_CUSTOM_CALL_TARGET);
    return t && t->kind == CXLA_ATTR_KIND_STRING ? t->v.s : NULL;
}

/* The api_version number (1, 2 or 3) of a custom call, or an error. */
static cxla_status api_of(const cxla_instr *in, int *out) {
    const char *w = cxla_instr_word(in, CXLA_ATTR_API_VERSION);
    *out = 1;
    if (!w || strcmp(w, "API_VERSION_UNSPECIFIED") == 0 || strcmp(w, "API_VERSION_ORIGINAL") == 0)
        return NULL;
    if (strcmp(w, "API_VERSION_STATUS_RETURNING") == 0) {
        *out = 2;
        return NULL;
    }
    if (strcmp(w, "API_VERSION_STATUS_RETURNING_UNIFIED") == 0) {
        *out = 3;
        return NULL;
    }
    return aot_no(in, "the typed FFI (API_VERSION_TYPED_FFI) or an unknown api_version has no "
                      "ahead-of-time form (cxla supports api_version 1 to 3)");
}

static cxla_status custom_call(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins,
                               int64_t nin, const cxla_shape *const *shapes, int64_t count,
                               int64_t *lv) {
    const char *target = target_of(in);
    if (!target) return aot_no(in, "no custom_call_target");
    int64_t *outs = NULL;
    switch (exec_custom_call_builtin(target)) {
    case EXEC_BUILTIN_IDENTITY:
        if (!same_leaves(shapes, count, a, c, ins, nin))
            return aot_no(in, "a built-in annotation target whose result differs from its "
                              "operands (a sharded program)");
        CXLA_RETURN_IF_ERROR(aot_add_step(c, S_COPY, in, ins, nin, shapes, count, &outs));
        memcpy(lv, outs, (size_t)count * sizeof(int64_t));
        return NULL;
    case EXEC_BUILTIN_ALLOCATE:
        CXLA_RETURN_IF_ERROR(aot_add_step(c, S_ZERO, in, ins, nin, shapes, count, &outs));
        memcpy(lv, outs, (size_t)count * sizeof(int64_t));
        return NULL;
    case EXEC_BUILTIN_TOPK: return topk(a, c, in, ins, nin, shapes, count, lv);
    default: break;
    }
    int api = 1;
    CXLA_RETURN_IF_ERROR(api_of(in, &api));
    int64_t *alias = calloc((size_t)(count ? count : 1), sizeof(int64_t));
    if (!alias) return OOM();
    cxla_status s = exec_custom_call_aliasing(in, alias, count);
    for (int64_t k = 0; k < count && !s; k++)
        if (alias[k] >= nin) s = aot_no(in, "output_to_operand_aliasing names a missing operand");
    if (!s) s = aot_add_step(c, S_CUSTOM, in, ins, nin, shapes, count, &outs);
    free(alias);
    if (s) return s;
    memcpy(lv, outs, (size_t)count * sizeof(int64_t));
    /* For the header: each target once. */
    char line[64];
    snprintf(line, sizeof line, "(api_version %d)", api);
    cxla_strbuf key;
    cxla_strbuf_init(&key);
    cxla_strbuf_puts(&key, " *   \"");
    cxla_strbuf_puts(&key, target);
    cxla_strbuf_printf(&key, "\" %s\n", line);
    if (key.data && !strstr(a->targets.data ? a->targets.data : "", key.data))
        cxla_strbuf_append(&a->targets, key.data, key.len);
    bool failed = key.failed;
    cxla_strbuf_free(&key);
    return failed ? OOM() : NULL;
}

cxla_status aot_ops_build(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins, int64_t nin,
                          const cxla_shape *const *shapes, int64_t count, int64_t *lv) {
    int64_t *outs = NULL;
    switch (in->opcode) {
    case CXLA_OP_AFTER_ALL:
        /* A token: 0 bytes that nothing reads. */
        lv[0] = aot_add_leaf(c, (aleaf){.kind = L_ARENA, .shape = shapes[0], .size = 0});
        return lv[0] < 0 ? OOM() : NULL;
    case CXLA_OP_ADD_DEPENDENCY:
    case CXLA_OP_ALL_REDUCE_DONE:
        if (nin < count) return aot_no(in, "the operand does not match the result");
        memcpy(lv, ins, (size_t)count * sizeof(int64_t));
        return NULL;
    case CXLA_OP_REPLICA_ID:
    case CXLA_OP_PARTITION_ID:
        CXLA_RETURN_IF_ERROR(aot_add_step(c, S_ZERO, in, ins, nin, shapes, count, &outs));
        memcpy(lv, outs, (size_t)count * sizeof(int64_t));
        return NULL;
    case CXLA_OP_INFEED:
    case CXLA_OP_OUTFEED:
        if (in->opcode == CXLA_OP_INFEED)
            a->infeed = true;
        else
            a->outfeed = true;
        CXLA_RETURN_IF_ERROR(aot_add_step(c, in->opcode == CXLA_OP_INFEED ? S_INFEED : S_OUTFEED,
                                          in, ins, nin, shapes, count, &outs));
        memcpy(lv, outs, (size_t)count * sizeof(int64_t));
        return NULL;
    case CXLA_OP_CUSTOM_CALL: return custom_call(a, c, in, ins, nin, shapes, count, lv);
    case CXLA_OP_ALL_GATHER_START:
    case CXLA_OP_COLLECTIVE_PERMUTE_START: return start_op(a, c, in, ins, nin, shapes, count, lv);
    case CXLA_OP_ASYNC_UPDATE:
        if (nin != count) return aot_no(in, "the operand does not match the result");
        memcpy(lv, ins, (size_t)count * sizeof(int64_t));
        return NULL;
    case CXLA_OP_ALL_GATHER_DONE:
    case CXLA_OP_COLLECTIVE_PERMUTE_DONE:
    case CXLA_OP_ASYNC_DONE: {
        /* Element 1 of the start's tuple. */
        const cxla_shape *d = &in->operands[0]->shape;
        if (d->type != CXLA_TUPLE || d->tuple_count < 2 || aot_leaf_count(&d->elements[1]) != count)
            return aot_no(in, "the operand is not an (operands, result, ...) tuple");
        memcpy(lv, ins + aot_leaf_count(&d->elements[0]), (size_t)count * sizeof(int64_t));
        return NULL;
    }
    case CXLA_OP_SEND_DONE:
        lv[0] = aot_add_leaf(c, (aleaf){.kind = L_ARENA, .shape = shapes[0], .size = 0});
        return lv[0] < 0 ? OOM() : NULL;
    case CXLA_OP_SEND: {
        /* (data, u32[] context, token): the data's leaves as they are; the step hands them
         * to the callback and zeros the context. */
        const cxla_shape *d = &in->shape;
        int64_t n0 =
            d->type == CXLA_TUPLE && d->tuple_count == 3 ? aot_leaf_count(&d->elements[0]) : -1;
        if (n0 < 0 || nin != n0 + 1 || count != n0 + 2)
            return aot_no(in, "the result must be (data, u32[], token[])");
        a->send = true;
        memcpy(lv, ins, (size_t)n0 * sizeof(int64_t));
        CXLA_RETURN_IF_ERROR(aot_add_step(c, S_SEND, in, ins, n0, shapes + n0, 2, &outs));
        memcpy(lv + n0, outs, 2 * sizeof(int64_t));
        return NULL;
    }
    case CXLA_OP_RECV:
    case CXLA_OP_RECV_DONE: {
        const cxla_shape *d = &in->shape;
        bool recv = in->opcode == CXLA_OP_RECV;
        if (d->type != CXLA_TUPLE || d->tuple_count != (recv ? 3 : 2))
            return aot_no(in, recv ? "the result must be (data, u32[], token[])"
                                   : "the result must be (data, token[])");
        a->recv = true;
        CXLA_RETURN_IF_ERROR(
            aot_add_step(c, recv ? S_RECV : S_RECV_DONE, in, ins, nin, shapes, count, &outs));
        memcpy(lv, outs, (size_t)count * sizeof(int64_t));
        return NULL;
    }
    default: return collective(a, c, in, ins, nin, shapes, count, lv);
    }
}

/* ---- the generated statements ---------------------------------------------------------------- */

/* Parameter and constant leaves carry no size of their own: their shape's. */
static size_t leaf_bytes(const acomp *c, int64_t l) {
    const aleaf *x = &c->leaves[l];
    size_t size = x->size;
    if (x->kind != L_ARENA && x->shape && cxla_shape_byte_size(x->shape, &size)) size = 0;
    return size;
}

static bool is_token(const acomp *c, int64_t l) {
    return c->leaves[l].shape && c->leaves[l].shape->type == CXLA_TOKEN;
}

void aot_put_string(cxla_strbuf *b, const char *text, size_t len) {
    cxla_strbuf_putc(b, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '"' || ch == '\\')
            cxla_strbuf_printf(b, "\\%c", ch);
        else if (ch >= 32 && ch < 127 && ch != '?') /* '?': no trigraphs */
            cxla_strbuf_putc(b, (char)ch);
        else
            cxla_strbuf_printf(b, "\\%03o", ch);
    }
    cxla_strbuf_putc(b, '"');
}

/* A failure: the code, and the message (pieces, any NULL) in opt->error. */
static void put_fail(cxla_strbuf *b, const char *P, const char *indent, const char *code,
                     const cxla_instr *in, const char *what, const char *detail) {
    cxla_strbuf_printf(b, "%sreturn %s_fail(opt, %s_%s, ", indent, P, P, code);
    cxla_strbuf t;
    cxla_strbuf_init(&t);
    cxla_strbuf_printf(&t, "%s (%s): %s", in->name, cxla_opcode_name(in->opcode), what);
    aot_put_string(b, t.data ? t.data : "", t.len);
    cxla_strbuf_free(&t);
    cxla_strbuf_printf(b, ", %s);\n", detail ? detail : "0");
}

static cxla_status emit_custom(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const char *P = a->P, *target = target_of(in);
    int api = 1;
    CXLA_RETURN_IF_ERROR(api_of(in, &api));
    char *opaque = NULL;
    size_t opaque_len = 0;
    CXLA_RETURN_IF_ERROR(exec_custom_call_opaque(in, &opaque, &opaque_len));
    int64_t *alias = calloc((size_t)(st->out_count ? st->out_count : 1), sizeof(int64_t));
    cxla_status s = alias ? exec_custom_call_aliasing(in, alias, st->out_count) : OOM();
    if (s) {
        free(opaque);
        free(alias);
        return s;
    }
    cxla_strbuf_puts(b, "        static const char cc_target[] = ");
    aot_put_string(b, target, strlen(target));
    cxla_strbuf_puts(b, ";\n");
    cxla_strbuf_printf(b, "        const void *a[%" PRId64 "] = {",
                       st->in_count ? st->in_count : 1);
    for (int64_t k = 0; k < st->in_count; k++) {
        if (k) cxla_strbuf_puts(b, ", ");
        if (is_token(c, st->in[k]))
            cxla_strbuf_puts(b, "0");
        else
            aot_put_leaf(a, c, st->in[k], b);
    }
    cxla_strbuf_puts(b, st->in_count ? "};\n" : "0};\n");
    cxla_strbuf_printf(b, "        void *r[%" PRId64 "] = ", st->out_count ? st->out_count : 1);
    aot_put_leaf_list(a, c, st->out, st->out_count, b);
    cxla_strbuf_puts(b, ";\n");
    /* Result buffers start zero-filled, or holding the operand they alias. */
    for (int64_t k = 0; k < st->out_count; k++) {
        size_t n = leaf_bytes(c, st->out[k]);
        if (n == 0) continue;
        if (alias[k] >= 0)
            cxla_strbuf_printf(b, "        memcpy(r[%" PRId64 "], a[%" PRId64 "], %zu);\n", k,
                               alias[k], n);
        else
            cxla_strbuf_printf(b, "        memset(r[%" PRId64 "], 0, %zu);\n", k, n);
    }
    cxla_strbuf_printf(b, "        const %s_custom_call *cc = %s_find(opt, cc_target);\n", P, P);
    cxla_strbuf_puts(b, "        if (!cc) {\n");
    put_fail(b, P, "            ", "ERROR_NO_CUSTOM_CALL", in,
             "no function for custom-call target ", "cc_target");
    cxla_strbuf_puts(b, "        }\n");
    cxla_strbuf_printf(
        b, "        if (cc->api_version != %d && !(%d == 1 && cc->api_version == 0)) {\n", api,
        api);
    put_fail(b, P, "            ", "ERROR_CUSTOM_CALL_API", in,
             api == 1   ? "the function's api_version is not the instruction's (1: "
                          "API_VERSION_ORIGINAL), target "
             : api == 2 ? "the function's api_version is not the instruction's (2: "
                          "API_VERSION_STATUS_RETURNING), target "
                        : "the function's api_version is not the instruction's (3: "
                          "API_VERSION_STATUS_RETURNING_UNIFIED), target ",
             "cc_target");
    cxla_strbuf_puts(b, "        }\n");
    const char *outp = st->out_count == 1 && !(in->shape.type == CXLA_TUPLE) ? "r[0]" : "(void *)r";
    cxla_strbuf_printf(b, "        %s_custom_call_status status;\n", P);
    cxla_strbuf_puts(b, "        status.failed = 0;\n        status.message[0] = 0;\n");
    switch (api) {
    case 1:
        cxla_strbuf_printf(b, "        ((%s_custom_call_original_fn)cc->fn)(%s, a);\n", P, outp);
        break;
    case 2:
        cxla_strbuf_printf(
            b, "        ((%s_custom_call_status_returning_fn)cc->fn)(%s, a, &status);\n", P, outp);
        break;
    default:
        cxla_strbuf_printf(b, "        ((%s_custom_call_unified_fn)cc->fn)(%s, a, ", P, outp);
        aot_put_string(b, opaque ? opaque : "", opaque_len);
        cxla_strbuf_printf(b, ", %zu, &status);\n", opaque_len);
        break;
    }
    cxla_strbuf_puts(b, "        if (status.failed) {\n");
    put_fail(b, P, "            ", "ERROR_CUSTOM_CALL_FAILED", in,
             "the custom call failed: ", "status.message");
    cxla_strbuf_puts(b, "        }\n");
    free(opaque);
    free(alias);
    return NULL;
}

/* infeed: data leaves then a token out; outfeed: data leaves then a token in. */
static void emit_feed(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const char *P = a->P;
    bool infeed = st->kind == S_INFEED;
    const int64_t *ls = infeed ? st->out : st->in;
    int64_t n = (infeed ? st->out_count : st->in_count) - 1; /* the token is last */
    if (n < 0) n = 0;
    const char *cb = infeed ? "infeed" : "outfeed";
    if (n == 0) { /* an empty tuple: nothing moves, no callback (as the interpreter) */
        cxla_strbuf_puts(b, "        /* no data: nothing to transfer */\n");
        return;
    }
    cxla_strbuf_printf(b, "        %s *d[%" PRId64 "] = ", infeed ? "void" : "const void",
                       n ? n : 1);
    aot_put_leaf_list(a, c, ls, n, b);
    cxla_strbuf_printf(b, ";\n        static const size_t bytes[%" PRId64 "] = {", n ? n : 1);
    for (int64_t k = 0; k < n; k++)
        cxla_strbuf_printf(b, "%s%zu", k ? ", " : "", leaf_bytes(c, ls[k]));
    cxla_strbuf_puts(b, n ? "};\n" : "0};\n");
    cxla_strbuf_printf(b, "        if (!opt || !opt->%s) {\n", cb);
    put_fail(b, P, "            ", "ERROR_NO_HOST_CALLBACK", in,
             infeed ? "no infeed callback in the options" : "no outfeed callback in the options",
             NULL);
    cxla_strbuf_puts(b, "        }\n");
    const char *cfg =
        cxla_instr_word(in, infeed ? CXLA_ATTR_INFEED_CONFIG : CXLA_ATTR_OUTFEED_CONFIG);
    const cxla_attr *ca =
        cxla_instr_attr(in, infeed ? CXLA_ATTR_INFEED_CONFIG : CXLA_ATTR_OUTFEED_CONFIG);
    if (!cfg && ca && ca->kind == CXLA_ATTR_KIND_STRING) cfg = ca->v.s;
    cxla_strbuf_printf(b, "        if (opt->%s(opt->user, ", cb);
    aot_put_string(b, in->name, strlen(in->name));
    cxla_strbuf_puts(b, ", ");
    aot_put_string(b, cfg ? cfg : "", cfg ? strlen(cfg) : 0);
    cxla_strbuf_printf(b, ", d, bytes, %" PRId64 ") != 0) {\n", n);
    put_fail(b, P, "            ", infeed ? "ERROR_INFEED" : "ERROR_OUTFEED", in,
             infeed ? "the infeed callback failed" : "the outfeed callback failed", NULL);
    cxla_strbuf_puts(b, "        }\n");
}

/* send: the data leaves (st->in) to opt->send, the context (st->out[0]) zeroed; recv: the
 * result zeroed (the data arrives at recv-done); recv-done: the data leaves (all of st->out
 * but the token) from opt->recv. Each checks its callback first. */
static void emit_send_recv(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const char *P = a->P;
    bool send = st->kind == S_SEND;
    const char *cb = send ? "send" : "recv";
    cxla_strbuf_printf(b, "        if (!opt || !opt->%s) {\n", cb);
    put_fail(b, P, "            ", "ERROR_NO_HOST_CALLBACK", in,
             send ? "no send callback in the options" : "no recv callback in the options", NULL);
    cxla_strbuf_puts(b, "        }\n");
    if (st->kind == S_RECV) {
        for (int64_t k = 0; k < st->out_count; k++) {
            size_t n = leaf_bytes(c, st->out[k]);
            if (n == 0) continue;
            cxla_strbuf_puts(b, "        memset(");
            aot_put_leaf(a, c, st->out[k], b);
            cxla_strbuf_printf(b, ", 0, %zu);\n", n);
        }
        return;
    }
    const int64_t *ls = send ? st->in : st->out;
    int64_t n = send ? st->in_count : st->out_count - 1; /* recv-done: the token is last */
    if (n < 0) n = 0;
    cxla_strbuf_printf(b, "        %s *d[%" PRId64 "] = ", send ? "const void" : "void", n ? n : 1);
    aot_put_leaf_list(a, c, ls, n, b);
    cxla_strbuf_printf(b, ";\n        static const size_t bytes[%" PRId64 "] = {", n ? n : 1);
    for (int64_t k = 0; k < n; k++)
        cxla_strbuf_printf(b, "%s%zu", k ? ", " : "", leaf_bytes(c, ls[k]));
    cxla_strbuf_puts(b, n ? "};\n" : "0};\n");
    int64_t channel = 0;
    if (!cxla_instr_int(in, CXLA_ATTR_CHANNEL_ID, &channel)) channel = 0;
    cxla_strbuf_printf(b, "        if (opt->%s(opt->user, ", cb);
    aot_put_string(b, in->name, strlen(in->name));
    cxla_strbuf_printf(b, ", %" PRId64 ", %d, d, bytes, %" PRId64 ") != 0) {\n", channel,
                       cxla_instr_bool(in, CXLA_ATTR_IS_HOST_TRANSFER) ? 1 : 0, n);
    put_fail(b, P, "            ", send ? "ERROR_SEND" : "ERROR_RECV", in,
             send ? "the send callback failed" : "the recv callback failed", NULL);
    cxla_strbuf_puts(b, "        }\n");
    if (send && leaf_bytes(c, st->out[0])) {
        cxla_strbuf_puts(b, "        memset(");
        aot_put_leaf(a, c, st->out[0], b);
        cxla_strbuf_printf(b, ", 0, %zu);\n", leaf_bytes(c, st->out[0]));
    }
}

/* The window copy helper of emit_permute, written once into the kernels. */
static void put_window_helper(aot *a) {
    if (a->window_helper) return;
    a->window_helper = true;
    cxla_strbuf_printf(
        &a->kernels,
        "/* collective-permute in place: the window of |size| at |ss| of |src| (row-major,\n"
        " * dims sd) to |ds| of |dst| (dims dd), one row at a time; the starts clamped as\n"
        " * dynamic-slice clamps them. */\n"
        "static void %s_window(char *dst, const int64_t *dd, const int64_t *ds, const char "
        "*src,\n"
        "                      const int64_t *sd, const int64_t *ss, const int64_t *size, "
        "int rank,\n"
        "                      size_t elem) {\n"
        "    int64_t d0[%d], s0[%d], idx[%d], total = 1;\n"
        "    for (int d = 0; d < rank; d++) {\n"
        "        int64_t hd = dd[d] - size[d], hs = sd[d] - size[d];\n"
        "        d0[d] = ds[d] < 0 ? 0 : ds[d] > hd ? hd : ds[d];\n"
        "        s0[d] = ss[d] < 0 ? 0 : ss[d] > hs ? hs : ss[d];\n"
        "        idx[d] = 0;\n"
        "        total *= size[d];\n"
        "    }\n"
        "    if (total == 0) return;\n"
        "    int64_t row = rank ? size[rank - 1] : 1, rows = total / row;\n"
        "    for (int64_t k = 0; k < rows; k++) {\n"
        "        int64_t so = 0, doff = 0;\n"
        "        for (int d = 0; d < rank; d++) {\n"
        "            so = so * sd[d] + s0[d] + idx[d];\n"
        "            doff = doff * dd[d] + d0[d] + idx[d];\n"
        "        }\n"
        "        memcpy(dst + (size_t)doff * elem, src + (size_t)so * elem, (size_t)row * "
        "elem);\n"
        "        for (int d = rank - 2; d >= 0; d--) { /* the window's next row */\n"
        "            if (++idx[d] < size[d]) break;\n"
        "            idx[d] = 0;\n"
        "        }\n"
        "    }\n"
        "}\n\n",
        a->P, CXLA_MAX_RANK, CXLA_MAX_RANK, CXLA_MAX_RANK);
}

/* An S_PERMUTE step: each output buffer copied into the result's (none when share_buffers
 * gave the result its buffer), then, for each pair {0,0} in order, slice j's window of
 * each buffer from the input at its start indices, clamped, into the result at its own. */
static cxla_status emit_permute(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    permute_form f;
    CXLA_RETURN_IF_ERROR(permute_form_of(in, &f));
    if (st->in_count != 2 * f.nb + 2 * f.starts || st->out_count != f.nb)
        return cxla_error(CXLA_STATUS_INTERNAL, "cxla compile: %s: bad in-place permute step",
                          in->name);
    int64_t nb = f.nb;
    for (int64_t k = 0; k < nb; k++) {
        size_t n = leaf_bytes(c, st->out[k]);
        if (n == 0) continue;
        if (c->leaves[st->out[k]].parent == c->leaves[st->in[nb + k]].parent) {
            cxla_strbuf_printf(b, "        /* output %" PRId64 " updated in its buffer */\n", k);
            continue;
        }
        cxla_strbuf_puts(b, "        memcpy(");
        aot_put_leaf(a, c, st->out[k], b);
        cxla_strbuf_puts(b, ", ");
        aot_put_leaf(a, c, st->in[nb + k], b);
        cxla_strbuf_printf(b, ", %zu);\n", n);
    }
    int64_t *const *pairs = f.pairs->v.int_lists.lists;
    for (int64_t i = 0; i < f.pairs->v.int_lists.count; i++) {
        const int64_t *p = pairs[i];
        int64_t j = 0;
        for (int64_t e = 0; e < i; e++) j += pairs[e][0] == p[0];
        if (p[0] != 0 || p[1] != 0) continue; /* a send elsewhere: dropped on one device */
        for (int64_t bf = 0, at = 0; bf < nb; at += f.k * f.ranks[bf], bf++) {
            int64_t r = f.ranks[bf], r1 = r ? r : 1;
            const int64_t *size = f.sizes[bf * f.k + j];
            const cxla_shape *xs = f.shp[bf], *ys = f.shp[nb + bf];
            put_window_helper(a);
            cxla_strbuf_printf(b,
                               "        { /* pair %" PRId64 " {0,0}: slice %" PRId64
                               " of buffer %" PRId64 " */\n",
                               i, j, bf);
            const char *names[3] = {"sd", "dd", "sz"};
            for (int w = 0; w < 3; w++) {
                cxla_strbuf_printf(b, "            static const int64_t %s[%" PRId64 "] = {",
                                   names[w], r1);
                for (int64_t d = 0; d < r1; d++)
                    cxla_strbuf_printf(b, "%s%" PRId64, d ? ", " : "",
                                       !r       ? 0
                                       : w == 0 ? xs->dims[d]
                                       : w == 1 ? ys->dims[d]
                                                : size[d]);
                cxla_strbuf_puts(b, "};\n");
            }
            cxla_strbuf_printf(
                b, "            int64_t ss[%" PRId64 "] = {0}, ds[%" PRId64 "] = {0};\n", r1, r1);
            for (int side = 0; side < 2; side++)
                for (int64_t d = 0; d < r; d++) {
                    int64_t l = st->in[2 * nb + side * f.starts + at + j * r + d];
                    cxla_type t = c->leaves[l].shape->type;
                    cxla_strbuf_printf(b, "            %s[%" PRId64 "] = ", side ? "ds" : "ss", d);
                    if (t == CXLA_U64) { /* above INT64_MAX: saturated, then clamped */
                        cxla_strbuf_puts(b, "*(const uint64_t *)");
                        aot_put_leaf(a, c, l, b);
                        cxla_strbuf_puts(b, " > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t) * "
                                            "(const uint64_t *)");
                        aot_put_leaf(a, c, l, b);
                    } else {
                        cxla_strbuf_printf(b, "(int64_t) * (const %s *)", cpu_emit_stype(t));
                        aot_put_leaf(a, c, l, b);
                    }
                    cxla_strbuf_puts(b, ";\n");
                }
            cxla_strbuf_printf(b, "            %s_window((char *)", a->P);
            aot_put_leaf(a, c, st->out[bf], b);
            cxla_strbuf_puts(b, ", dd, ds, (const char *)");
            aot_put_leaf(a, c, st->in[bf], b);
            cxla_strbuf_printf(b, ", sd, ss, sz, %d, %zu);\n        }\n", (int)r,
                               cxla_type_storage(xs->type));
        }
    }
    return NULL;
}

/* P_xfail: a failure whose message is |fmt| with each % replaced by the next of |v| (%%
 * is a %), written without the C library's printf (as aot_dyn.c's P_dfail). */
static void put_xfail_helper(aot *a) {
    if (a->xfail_helper) return;
    a->xfail_helper = true;
    const char *P = a->P;
    cxla_strbuf_printf(
        &a->kernels,
        "/* A failure whose message is |fmt| with each %% replaced by the next of |v| (%%%% is\n"
        " * a %%). */\n"
        "static int %s_xfail(const %s_options *opt, int code, const char *fmt, const int64_t "
        "*v) {\n"
        "    if (!opt || !opt->error || opt->error_size == 0) return code;\n"
        "    size_t n = 0, cap = opt->error_size - 1;\n"
        "    for (const char *p = fmt; *p && n < cap; p++) {\n"
        "        if (*p != '%%' || p[1] == '%%') {\n"
        "            opt->error[n++] = *p;\n"
        "            if (*p == '%%') p++;\n"
        "            continue;\n"
        "        }\n"
        "        char digits[24];\n"
        "        int k = 0;\n"
        "        int64_t x = *v++;\n"
        "        uint64_t u = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;\n"
        "        do {\n"
        "            digits[k++] = (char)('0' + (int)(u %% 10));\n"
        "            u /= 10;\n"
        "        } while (u);\n"
        "        if (x < 0) digits[k++] = '-';\n"
        "        while (k > 0 && n < cap) opt->error[n++] = digits[--k];\n"
        "    }\n"
        "    opt->error[n] = 0;\n"
        "    return code;\n"
        "}\n\n",
        P, P);
}

/* `return P_xfail(...)` with the interpreter's message for |in| (exec_error's prefix
 * naming it), |fmt| a printf format whose conversions are all int64_t, over the C
 * expressions |vals|. */
static void put_xfail(aot *a, cxla_strbuf *b, const char *ind, const cxla_instr *in,
                      const char *fmt, const char *const *vals, int nv) {
    put_xfail_helper(a);
    cxla_status s = exec_error(in, CXLA_STATUS_INVALID_ARGUMENT, "%s", "\x01");
    const char *msg = s ? cxla_status_message(s) : "\x01";
    cxla_strbuf f;
    cxla_strbuf_init(&f);
    for (const char *p = msg; *p; p++) {
        if (*p != '\x01') {
            if (*p == '%') cxla_strbuf_putc(&f, '%');
            cxla_strbuf_putc(&f, *p);
            continue;
        }
        for (const char *q = fmt; *q; q++) { /* each conversion a bare '%' */
            if (*q != '%') {
                cxla_strbuf_putc(&f, *q);
            } else if (q[1] == '%') {
                cxla_strbuf_puts(&f, "%%");
                q++;
            } else {
                while (q[1] && strchr("0123456789.-+ #lhjzt", q[1])) q++;
                if (q[1]) q++;
                cxla_strbuf_putc(&f, '%');
            }
        }
    }
    cxla_status_free(s);
    cxla_strbuf_printf(b, "%sreturn %s_xfail(opt, %s_ERROR_COLLECTIVE, ", ind, a->P, a->P);
    aot_put_string(b, f.data ? f.data : "", f.len);
    cxla_strbuf_puts(b, ", (const int64_t[]){");
    for (int i = 0; i < nv; i++) cxla_strbuf_printf(b, "%s%s", i ? ", " : "", vals[i]);
    cxla_strbuf_puts(b, nv ? "});\n" : "0});\n");
    cxla_strbuf_free(&f);
}

/* Element |i| (a C expression) of the integer array leaf |l| as an int64_t expression, as
 * the interpreter's cxla_load_s64 reads it (a u64 above INT64_MAX wraps). */
static void put_int_at(aot *a, const acomp *c, int64_t l, const char *i, cxla_strbuf *b) {
    cxla_type t = c->leaves[l].shape->type;
    cxla_strbuf_printf(b, "(int64_t)((const %s *)", cpu_emit_stype(t));
    aot_put_leaf(a, c, l, b);
    cxla_strbuf_printf(b, ")[%s]", i);
}

/* An S_RAGGED step (see ragged_step). */
static cxla_status emit_ragged(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const cxla_shape *x = &in->operands[0]->shape, *y = &in->operands[1]->shape;
    if (st->in_count != 6 || st->out_count != 1)
        return cxla_error(CXLA_STATUS_INTERNAL, "cxla compile: %s: bad ragged step", in->name);
    int64_t row = 1, meta = 1;
    for (int64_t d = 1; d < x->rank; d++) row *= x->dims[d];
    const cxla_shape *ms = &in->operands[2]->shape;
    for (int64_t d = 0; d < ms->rank; d++) meta *= ms->dims[d];
    size_t es = cxla_type_storage(x->type), n = leaf_bytes(c, st->out[0]);
    if (n && c->leaves[st->out[0]].parent == c->leaves[st->in[1]].parent) {
        cxla_strbuf_puts(b, "        /* the output updated in its buffer */\n");
    } else if (n) {
        cxla_strbuf_puts(b, "        memcpy(");
        aot_put_leaf(a, c, st->out[0], b);
        cxla_strbuf_puts(b, ", ");
        aot_put_leaf(a, c, st->in[1], b);
        cxla_strbuf_printf(b, ", %zu);\n", n);
    }
    cxla_strbuf_printf(b, "        for (int64_t i = 0; i < %" PRId64 "; i++) {\n", meta);
    const char *names[4] = {"in_off", "size", "out_off", "want"};
    for (int k = 0; k < 4; k++) {
        cxla_strbuf_printf(b, "            const int64_t %s = ", names[k]);
        put_int_at(a, c, st->in[2 + k], "i", b);
        cxla_strbuf_puts(b, ";\n");
    }
    /* The interpreter's checks, in its order, with its words (the sender is replica 0, or
     * replica 0 partition 0 when the module has partitions). */
    char who[64];
    exec_device_name(a->m->num_partitions > 1 ? a->m->num_partitions : 1, 0, who, sizeof who);
    cxla_strbuf fmt;
    cxla_strbuf_init(&fmt);
    cxla_strbuf_puts(b, "            if (size != want) {\n");
    cxla_strbuf_printf(&fmt,
                       "%s sends %%" PRId64 " rows in update %%" PRId64 " but recv_sizes[%%" PRId64
                       "] expects %%" PRId64,
                       who);
    const char *v1[4] = {"size", "i", "i", "want"};
    put_xfail(a, b, "                ", in, fmt.data ? fmt.data : "", v1, 4);
    cxla_strbuf_puts(b, "            }\n");
    cxla_strbuf_printf(b,
                       "            if (size < 0 || in_off < 0 || in_off > %" PRId64
                       " - size || out_off < 0 || out_off > %" PRId64 " - size) {\n",
                       x->dims[0], y->dims[0]);
    cxla_strbuf_free(&fmt);
    cxla_strbuf_init(&fmt);
    cxla_strbuf_printf(&fmt,
                       "update %%" PRId64 " from %s (rows %%" PRId64 "..%%" PRId64
                       " of its input, %%" PRId64 " rows, to rows %%" PRId64 "..%%" PRId64
                       " of the output, %%" PRId64 " rows) is out of range",
                       who);
    char d0[32], e0[32];
    snprintf(d0, sizeof d0, "%" PRId64, x->dims[0]);
    snprintf(e0, sizeof e0, "%" PRId64, y->dims[0]);
    const char *v2[7] = {"i", "in_off", "in_off + size", d0, "out_off", "out_off + size", e0};
    put_xfail(a, b, "                ", in, fmt.data ? fmt.data : "", v2, 7);
    cxla_strbuf_free(&fmt);
    cxla_strbuf_puts(b, "            }\n");
    cxla_strbuf_puts(b, "            if (size > 0)\n                memcpy((char *)");
    aot_put_leaf(a, c, st->out[0], b);
    cxla_strbuf_printf(b, " + (size_t)(out_off * %" PRId64 ") * %zu, (const char *)", row, es);
    aot_put_leaf(a, c, st->in[0], b);
    cxla_strbuf_printf(b,
                       " + (size_t)(in_off * %" PRId64 ") * %zu,\n"
                       "                       (size_t)(size * %" PRId64 ") * %zu);\n        }\n",
                       row, es, row, es);
    return NULL;
}

cxla_status aot_ops_emit(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    switch (st->kind) {
    case S_PERMUTE: return emit_permute(a, c, st, b);
    case S_RAGGED: return emit_ragged(a, c, st, b);
    case S_COPY:
        for (int64_t k = 0; k < st->out_count; k++) {
            size_t n = leaf_bytes(c, st->out[k]);
            if (n == 0) continue;
            cxla_strbuf_puts(b, "        memcpy(");
            aot_put_leaf(a, c, st->out[k], b);
            cxla_strbuf_puts(b, ", ");
            aot_put_leaf(a, c, st->in[k], b);
            cxla_strbuf_printf(b, ", %zu);\n", n);
        }
        return NULL;
    case S_ZERO:
        for (int64_t k = 0; k < st->out_count; k++) {
            size_t n = leaf_bytes(c, st->out[k]);
            if (n == 0) continue;
            cxla_strbuf_puts(b, "        memset(");
            aot_put_leaf(a, c, st->out[k], b);
            cxla_strbuf_printf(b, ", 0, %zu);\n", n);
        }
        return NULL;
    case S_CUSTOM: return emit_custom(a, c, st, b);
    case S_INFEED:
    case S_OUTFEED: emit_feed(a, c, st, b); return NULL;
    case S_BLAS: aot_blas_emit_step(a, c, st, b); return NULL;
    case S_SEND:
    case S_RECV:
    case S_RECV_DONE: emit_send_recv(a, c, st, b); return NULL;
    default:
        return cxla_error(CXLA_STATUS_INTERNAL, "cxla compile: step of %s is not an op step",
                          st->instr->name);
    }
}

/* ---- the interface ------------------------------------------------------------------------ */

void aot_ops_header(const aot *a, cxla_strbuf *h) {
    const char *P = a->P;
    cxla_strbuf_printf(
        h,
        "/* The codes %s_run returns (%s_error_string says them in words; with options, the\n"
        " * message of the failure, naming the instruction, lands in options->error). */\n"
        "enum {\n"
        "    %s_OK = 0,\n"
        "    %s_ERROR_NULL_ARGUMENT = 1,    /* an argument pointer is NULL (not 0-byte ones) */\n"
        "    %s_ERROR_NULL_RESULT = 2,      /* a result pointer is NULL */\n"
        "    %s_ERROR_NULL_SCRATCH = 3,     /* no scratch area but one is needed */\n"
        "    %s_ERROR_NO_CUSTOM_CALL = 4,   /* a custom-call target not in options->custom_calls "
        "*/\n"
        "    %s_ERROR_CUSTOM_CALL_API = 5,  /* entered with another api_version than the call's "
        "*/\n"
        "    %s_ERROR_CUSTOM_CALL_FAILED = 6, /* the target set status->failed */\n"
        "    %s_ERROR_NO_HOST_CALLBACK = 7, /* a host transfer without its callback */\n"
        "    %s_ERROR_INFEED = 8,           /* the infeed callback returned nonzero */\n"
        "    %s_ERROR_OUTFEED = 9,          /* the outfeed callback returned nonzero */\n"
        "    %s_ERROR_ONEDNN = 10,          /* a oneDNN call failed (--blas onednn) */\n"
        "    %s_ERROR_SEND = 11,            /* the send callback returned nonzero */\n"
        "    %s_ERROR_RECV = 12,            /* the recv callback returned nonzero */\n"
        "    %s_ERROR_DYNAMIC_SIZE = 13,    /* a dynamic size outside its bounds (an argument's,\n"
        "                                    * set-dimension-size's) */\n"
        "    %s_ERROR_DYNAMIC_MISMATCH = 14, /* dynamic sizes an operation cannot take (two that\n"
        "                                     * must agree differ; a result cannot hold them) */\n"
        "    %s_ERROR_COLLECTIVE = 15        /* a collective's run-time check failed (the sizes\n"
        "                                     * and offsets of a ragged-all-to-all) */\n"
        "};\n\n",
        P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P);
    cxla_strbuf_printf(
        h,
        "/* Custom calls, as cxla's runtime calls them (cxla/custom_call.h; XLA's CPU "
        "convention):\n"
        " * |in| has one pointer per operand array (tuples flattened depth first; tokens NULL),\n"
        " * row-major; |out| is the result array, or for a tuple result an array of pointers to\n"
        " * its leaves, zero-filled before the call (or holding the operand it aliases). The\n"
        " * signature is the instruction's api_version: */\n"
        "typedef struct %s_custom_call_status {\n"
        "    int failed;        /* set to nonzero to fail the run (%s_ERROR_CUSTOM_CALL_FAILED) "
        "*/\n"
        "    char message[256]; /* and why, NUL-terminated */\n"
        "} %s_custom_call_status;\n"
        "typedef void (*%s_custom_call_original_fn)(void *out, const void **in); /* 1 */\n"
        "typedef void (*%s_custom_call_status_returning_fn)(void *out, const void **in,\n"
        "                                                 %s_custom_call_status *status); /* 2 */\n"
        "typedef void (*%s_custom_call_unified_fn)(void *out, const void **in, const char "
        "*opaque,\n"
        "                                        size_t opaque_len,\n"
        "                                        %s_custom_call_status *status); /* 3 */\n"
        "typedef void (*%s_custom_call_fn)(void); /* any of them, cast */\n"
        "typedef struct %s_custom_call {\n"
        "    const char *target;   /* custom_call_target */\n"
        "    %s_custom_call_fn fn; /* cast to the type its api_version names */\n"
        "    int api_version;      /* 1 (or 0), 2 or 3, as in the module */\n"
        "} %s_custom_call;\n\n",
        P, P, P, P, P, P, P, P, P, P, P, P);
    cxla_strbuf_printf(
        h,
        "/* What %s_run_with takes beyond the arrays; zero-initialize it and set what the\n"
        " * module needs. Host transfers: |leaves| are the infeed's or outfeed's data arrays\n"
        " * (tuples flattened, row-major), |bytes| their sizes; return 0, or nonzero to fail\n"
        " * the run. |instr| names the instruction, |config| is its infeed_config or\n"
        " * outfeed_config. */\n"
        "typedef struct %s_options {\n"
        "    const %s_custom_call *custom_calls; /* the table, searched by target */\n"
        "    int custom_call_count;\n"
        "    int (*infeed)(void *user, const char *instr, const char *config, void *const "
        "*leaves,\n"
        "                  const size_t *bytes, int count);\n"
        "    int (*outfeed)(void *user, const char *instr, const char *config,\n"
        "                   const void *const *leaves, const size_t *bytes, int count);\n"
        "    void *user;        /* passed to the callbacks */\n"
        "    char *error;       /* where a failure's message goes (may be NULL) */\n"
        "    size_t error_size; /* bytes at |error| */\n"
        "    /* send hands over the data at the send (|leaves| read-only); recv fills them at\n"
        "     * the recv-done. |channel_id| and |is_host_transfer| are the instruction's. */\n"
        "    int (*send)(void *user, const char *instr, int64_t channel_id, int "
        "is_host_transfer,\n"
        "                const void *const *leaves, const size_t *bytes, int count);\n"
        "    int (*recv)(void *user, const char *instr, int64_t channel_id, int "
        "is_host_transfer,\n"
        "                void *const *leaves, const size_t *bytes, int count);\n"
        "    /* rng: the run's seed (as cxla run --seed; 0: every rng's key is 0), and the\n"
        "     * random state, u64[2] low word first. NULL: each run starts from 0x7012395, as\n"
        "     * cxla's interpreter and JIT start each run. Else the caller's state: read at the\n"
        "     * start, advanced, written back after a successful run (one sequence across\n"
        "     * runs, as XLA keeps it per executable; one state per thread). */\n"
        "    uint64_t seed;\n"
        "    uint64_t *rng_state;\n"
        "} %s_options;\n\n",
        P, P, P, P);
    if (a->targets.len || a->infeed || a->outfeed || a->send || a->recv || a->rng) {
        cxla_strbuf_puts(h, "/* This module needs from the options:\n");
        if (a->targets.len) {
            cxla_strbuf_puts(h, " * custom-call targets:\n");
            cxla_strbuf_append(h, a->targets.data, a->targets.len);
        }
        if (a->infeed) cxla_strbuf_puts(h, " * an infeed callback\n");
        if (a->outfeed) cxla_strbuf_puts(h, " * an outfeed callback\n");
        if (a->send) cxla_strbuf_puts(h, " * a send callback\n");
        if (a->recv) cxla_strbuf_puts(h, " * a recv callback\n");
        if (a->rng) cxla_strbuf_puts(h, " * rng: a seed and, optionally, a random state\n");
        cxla_strbuf_puts(h, " */\n\n");
    } else {
        cxla_strbuf_printf(h,
                           "/* This module has no custom calls or host transfers: %s_run needs "
                           "no options. */\n\n",
                           P);
    }
}

void aot_ops_source(const aot *a, cxla_strbuf *c) {
    const char *P = a->P;
    cxla_strbuf_printf(
        c,
        "/* ---- failures and the custom-call table ---- */\n"
        "static int %s_fail(const %s_options *opt, int code, const char *what, const char *detail) "
        "{\n"
        "    if (opt && opt->error && opt->error_size > 0) {\n"
        "        size_t n = 0;\n"
        "        for (const char *p = what; p && *p && n + 1 < opt->error_size; p++) "
        "opt->error[n++] = *p;\n"
        "        for (const char *p = detail; p && *p && n + 1 < opt->error_size; p++) "
        "opt->error[n++] = *p;\n"
        "        opt->error[n] = 0;\n"
        "    }\n"
        "    return code;\n"
        "}\n\n",
        P, P);
    if (a->targets.len)
        cxla_strbuf_printf(c,
                           "static const %s_custom_call *%s_find(const %s_options *opt, const char "
                           "*target) {\n"
                           "    for (int i = 0; opt && i < opt->custom_call_count; i++)\n"
                           "        if (opt->custom_calls[i].target && opt->custom_calls[i].fn &&\n"
                           "            strcmp(opt->custom_calls[i].target, target) == 0)\n"
                           "            return &opt->custom_calls[i];\n"
                           "    return 0;\n"
                           "}\n\n",
                           P, P, P);
}

/* ---- async over dynamic shapes ---------------------------------------------------------- */

/* async-start, -update and -done pass values along as call does (exec/dynamic.c, on every
 * backend): async-start calls its wrapped computation (calls=) as a call, the sizes passing
 * in and out as they pass through call (aot_dyn_put_zlist). The sugar form (negate-start
 * ...) has one by now (passes/async_desugar.c), except where its shapes do not line up,
 * which aot.c refuses whatever the shapes. */
cxla_status aot_ops_async_dynamic(const cxla_instr *in) {
    (void)in;
    return NULL;
}
