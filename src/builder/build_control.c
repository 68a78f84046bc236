/* Control flow and calls (while, conditional, call, custom-call), random numbers and
 * collectives. */
#include <inttypes.h>
#include <string.h>

#include "builder/builder_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in the builder")

/* ---- control flow and calls ------------------------------------------------------------------ */

cxla_op cxla_while(const cxla_xla_computation *condition, const cxla_xla_computation *body,
                   cxla_op init) {
    const char *op = "While";
    cxla_builder *b = init.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, init, 0);
    if (!in) return bld_invalid(b);
    cxla_computation *c = bld_import(b, op, condition);
    cxla_computation *f = c ? bld_import(b, op, body) : NULL;
    cxla_attr a[2];
    if (!f || !bld_attr_comps(b, CXLA_ATTR_CONDITION, &c, 1, &a[0]) ||
        !bld_attr_comps(b, CXLA_ATTR_BODY, &f, 1, &a[1]))
        return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_WHILE, NULL, 1, &in, 2, a);
}

cxla_op cxla_conditional(cxla_op predicate, cxla_op true_operand,
                         const cxla_xla_computation *true_computation, cxla_op false_operand,
                         const cxla_xla_computation *false_computation) {
    const char *op = "Conditional";
    cxla_op ops[3] = {predicate, true_operand, false_operand};
    cxla_builder *b = bld_of(ops, 3);
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr **ins;
    if (!bld_operands(b, op, ops, 3, &ins)) return bld_invalid(b);
    if (ins[0]->shape.type != CXLA_PRED || ins[0]->shape.rank != 0) {
        bld_fail(b, op, "the predicate must be pred[], got %s", bld_shape_str(b, &ins[0]->shape));
        return bld_invalid(b);
    }
    cxla_computation *t = bld_import(b, op, true_computation);
    cxla_computation *f = t ? bld_import(b, op, false_computation) : NULL;
    cxla_attr a[2];
    if (!f || !bld_attr_comps(b, CXLA_ATTR_TRUE_COMPUTATION, &t, 1, &a[0]) ||
        !bld_attr_comps(b, CXLA_ATTR_FALSE_COMPUTATION, &f, 1, &a[1]))
        return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_CONDITIONAL, NULL, 3, ins, 2, a);
}

cxla_op cxla_conditional_branches(cxla_op branch_index,
                                  const cxla_xla_computation *const *branch_computations,
                                  const cxla_op *branch_operands, int64_t count) {
    const char *op = "Conditional";
    cxla_builder *b = branch_index.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *idx = bld_operand(b, op, branch_index, 0), **ops;
    if (!idx || !bld_operands(b, op, branch_operands, count, &ops) ||
        !bld_check_list(b, op, "branch_computations", branch_computations, count))
        return bld_invalid(b);
    if (count < 1) {
        bld_fail(b, op, "expects at least one branch");
        return bld_invalid(b);
    }
    cxla_instr **ins =
        cxla_arena_alloc_array(b->module->arena, (size_t)count + 1, sizeof(cxla_instr *));
    cxla_computation **comps =
        cxla_arena_alloc_array(b->module->arena, (size_t)count, sizeof(cxla_computation *));
    if (!ins || !comps) {
        bld_fail_status(b, op, OOM());
        return bld_invalid(b);
    }
    ins[0] = idx;
    for (int64_t i = 0; i < count; i++) {
        ins[i + 1] = ops[i];
        if (!(comps[i] = bld_import(b, op, branch_computations[i]))) return bld_invalid(b);
    }
    cxla_attr a;
    if (!bld_attr_comps(b, CXLA_ATTR_BRANCH_COMPUTATIONS, comps, count, &a)) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_CONDITIONAL, NULL, count + 1, ins, 1, &a);
}

cxla_op cxla_call(cxla_builder *b, const cxla_xla_computation *computation, const cxla_op *operands,
                  int64_t count) {
    const char *op = "Call";
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr **ins;
    if (!bld_operands(b, op, operands, count, &ins)) return bld_invalid(b);
    cxla_computation *f = bld_import(b, op, computation);
    cxla_attr a;
    if (!f || !bld_attr_comps(b, CXLA_ATTR_TO_APPLY, &f, 1, &a)) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_CALL, NULL, count, ins, 1, &a);
}

cxla_op cxla_custom_call(cxla_builder *b, const char *call_target_name, const cxla_op *operands,
                         int64_t count, const cxla_shape *shape, const char *opaque,
                         bool has_side_effect) {
    cxla_custom_call_options o;
    cxla_custom_call_options_init(&o);
    o.opaque = opaque;
    o.has_side_effect = has_side_effect;
    return cxla_custom_call_with_options(b, call_target_name, operands, count, shape, &o);
}

/* ---- random numbers ----------------------------------------------------------------------------
 */

static cxla_op rng(const char *op, const char *distribution, cxla_op x, cxla_op y,
                   const cxla_shape *shape) {
    cxla_op pair[2] = {x, y};
    cxla_builder *b = bld_of(pair, 2);
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *ins[2];
    if (!(ins[0] = bld_operand(b, op, x, 0)) || !(ins[1] = bld_operand(b, op, y, 1)))
        return bld_invalid(b);
    if (!shape) {
        bld_fail(b, op, "the shape is NULL");
        return bld_invalid(b);
    }
    cxla_attr a = bld_attr_word(CXLA_ATTR_DISTRIBUTION, distribution);
    return bld_emit_ops(b, op, CXLA_OP_RNG, shape, 2, ins, 1, &a);
}

cxla_op cxla_rng_uniform(cxla_op a, cxla_op b, const cxla_shape *shape) {
    return rng("RngUniform", "rng_uniform", a, b, shape);
}

cxla_op cxla_rng_normal(cxla_op mu, cxla_op sigma, const cxla_shape *shape) {
    return rng("RngNormal", "rng_normal", mu, sigma, shape);
}

cxla_op cxla_rng_bernoulli(cxla_op mean, const cxla_shape *shape) {
    const char *op = "RngBernoulli";
    cxla_builder *b = mean.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *m = bld_operand(b, op, mean, 0);
    if (!m) return bld_invalid(b);
    if (!shape || !cxla_shape_is_array(shape) ||
        !(cxla_type_is_integer(shape->type) || shape->type == CXLA_PRED)) {
        bld_fail(b, op, "the shape must be an integer array shape (u32 in the specification)");
        return bld_invalid(b);
    }
    if (m->shape.type != CXLA_F32 || m->shape.rank != 0) {
        bld_fail(b, op, "the mean must be f32[], got %s", bld_shape_str(b, &m->shape));
        return bld_invalid(b);
    }
    cxla_shape f = *shape;
    f.type = CXLA_F32;
    f.layout = NULL;
    cxla_op u = cxla_rng_uniform(cxla_zero(b, CXLA_F32), cxla_one(b, CXLA_F32), &f);
    return cxla_convert_element_type(cxla_lt(u, mean), shape->type);
}

cxla_op cxla_rng_bit_generator(cxla_rng_algorithm algorithm, cxla_op initial_state,
                               const cxla_shape *shape) {
    static const char *const words[] = {"rng_default", "rng_three_fry", "rng_philox"};
    const char *op = "RngBitGenerator";
    cxla_builder *b = initial_state.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, initial_state, 0);
    if (!in) return bld_invalid(b);
    if (!shape || (int)algorithm < 0 || algorithm > CXLA_RNG_PHILOX) {
        bld_fail(b, op, "the shape is NULL or the algorithm unknown");
        return bld_invalid(b);
    }
    cxla_shape parts[2] = {in->shape, *shape};
    cxla_shape tuple = {.type = CXLA_TUPLE, .tuple_count = 2, .elements = parts};
    cxla_attr a = bld_attr_word(CXLA_ATTR_ALGORITHM, words[algorithm]);
    return bld_emit_ops(b, op, CXLA_OP_RNG_BIT_GENERATOR, &tuple, 1, &in, 1, &a);
}

/* ---- collectives -------------------------------------------------------------------------------
 */

/* replica_groups (always), channel_id and use_global_device_ids (when set). */
static bool collective_attrs(cxla_builder *b, const char *op, const cxla_replica_group *groups,
                             int64_t group_count, int64_t channel_id, bool use_global, cxla_attr *a,
                             int *n) {
    if (!bld_check_list(b, op, "replica_groups", groups, group_count) ||
        !bld_attr_replica_groups(b, groups, group_count, &a[(*n)++]))
        return false;
    if (channel_id > 0) a[(*n)++] = bld_attr_int(CXLA_ATTR_CHANNEL_ID, channel_id);
    if (use_global) a[(*n)++] = bld_attr_bool(CXLA_ATTR_USE_GLOBAL_DEVICE_IDS, true);
    return true;
}

/* The operands of a collective: a tuple operand contributes its elements. */
static bool flatten(cxla_builder *b, const char *op, cxla_op operand, cxla_instr ***ins,
                    int64_t *n) {
    cxla_instr *in = bld_operand(b, op, operand, 0);
    if (!in) return false;
    if (in->shape.type != CXLA_TUPLE) {
        *ins = cxla_arena_alloc_array(b->module->arena, 1, sizeof(cxla_instr *));
        if (!*ins) return false;
        (*ins)[0] = in;
        *n = 1;
        return true;
    }
    int64_t k = in->shape.tuple_count;
    *ins = cxla_arena_alloc_array(b->module->arena, (size_t)(k ? k : 1), sizeof(cxla_instr *));
    if (!*ins) return false;
    for (int64_t i = 0; i < k; i++) {
        cxla_op e = cxla_get_tuple_element(operand, i);
        if (!cxla_op_is_valid(e)) return false;
        (*ins)[i] = bld_instr(b, e);
    }
    *n = k;
    return true;
}

cxla_op cxla_all_reduce(cxla_op operand, const cxla_xla_computation *computation,
                        const cxla_replica_group *replica_groups, int64_t group_count,
                        int64_t channel_id, bool use_global_device_ids) {
    const char *op = "AllReduce";
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr **ins;
    int64_t n;
    if (!flatten(b, op, operand, &ins, &n)) return bld_invalid(b);
    cxla_attr a[4];
    int na = 0;
    if (!collective_attrs(b, op, replica_groups, group_count, channel_id, use_global_device_ids, a,
                          &na))
        return bld_invalid(b);
    cxla_computation *f = bld_import(b, op, computation);
    if (!f || !bld_attr_comps(b, CXLA_ATTR_TO_APPLY, &f, 1, &a[na++])) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_ALL_REDUCE, NULL, n, ins, na, a);
}

cxla_op cxla_cross_replica_sum(cxla_op operand, const cxla_replica_group *replica_groups,
                               int64_t group_count) {
    const char *op = "CrossReplicaSum";
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, operand, 0);
    if (!in) return bld_invalid(b);
    const cxla_shape *s = &in->shape;
    if (s->type == CXLA_TUPLE && s->tuple_count > 0) s = &s->elements[0];
    if (!cxla_shape_is_array(s)) {
        bld_fail(b, op, "expects an array or a tuple of arrays, got %s",
                 bld_shape_str(b, &in->shape));
        return bld_invalid(b);
    }
    cxla_xla_computation *add = bld_scalar_binary_computation(b, op, CXLA_OP_ADD, s->type);
    if (!add) return bld_invalid(b);
    cxla_op r = cxla_all_reduce(operand, add, replica_groups, group_count, 0, false);
    cxla_xla_computation_free(add);
    return r;
}

/* all-gather (grow) and reduce-scatter: the declared result scales |dimension|. */
static cxla_op gather_scatter(const char *op, cxla_opcode opcode, cxla_op operand,
                              const cxla_xla_computation *computation, int64_t dimension,
                              int64_t shard_count, const cxla_replica_group *groups,
                              int64_t group_count, int64_t channel_id, bool use_global) {
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, operand, 0);
    if (!in) return bld_invalid(b);
    const cxla_shape *x = &in->shape;
    if (!cxla_shape_is_array(x) || dimension < 0 || dimension >= x->rank || shard_count < 1) {
        bld_fail(b, op, "dimension %" PRId64 " and shard count %" PRId64 " do not suit %s",
                 dimension, shard_count, bld_shape_str(b, x));
        return bld_invalid(b);
    }
    int64_t dims[CXLA_MAX_RANK];
    for (int64_t i = 0; i < x->rank; i++) dims[i] = x->dims[i];
    if (opcode == CXLA_OP_ALL_GATHER) {
        if (!cxla_mul_i64(dims[dimension], shard_count, &dims[dimension])) {
            bld_fail(b, op, "the result size overflows");
            return bld_invalid(b);
        }
    } else {
        if (dims[dimension] % shard_count != 0) {
            bld_fail(b, op, "dimension %" PRId64 " of %s is not divisible by %" PRId64 " shards",
                     dimension, bld_shape_str(b, x), shard_count);
            return bld_invalid(b);
        }
        dims[dimension] /= shard_count;
    }
    cxla_shape s = bld_array_shape(b, x->type, x->rank, dims);
    cxla_attr a[5];
    int n = 0;
    if (!collective_attrs(b, op, groups, group_count, channel_id, use_global, a, &n) ||
        !bld_attr_ints(b, CXLA_ATTR_DIMENSIONS, &dimension, 1, &a[n++]))
        return bld_invalid(b);
    if (computation) {
        cxla_computation *f = bld_import(b, op, computation);
        if (!f || !bld_attr_comps(b, CXLA_ATTR_TO_APPLY, &f, 1, &a[n++])) return bld_invalid(b);
    }
    return bld_emit_ops(b, op, opcode, &s, 1, &in, n, a);
}

cxla_op cxla_all_gather(cxla_op operand, int64_t all_gather_dimension, int64_t shard_count,
                        const cxla_replica_group *replica_groups, int64_t group_count,
                        int64_t channel_id, bool use_global_device_ids) {
    return gather_scatter("AllGather", CXLA_OP_ALL_GATHER, operand, NULL, all_gather_dimension,
                          shard_count, replica_groups, group_count, channel_id,
                          use_global_device_ids);
}

cxla_op cxla_reduce_scatter(cxla_op operand, const cxla_xla_computation *computation,
                            int64_t scatter_dimension, int64_t shard_count,
                            const cxla_replica_group *replica_groups, int64_t group_count,
                            int64_t channel_id, bool use_global_device_ids) {
    cxla_builder *b = operand.builder;
    if (!computation) {
        if (bld_ok(b)) bld_fail(b, "ReduceScatter", "the computation is NULL");
        return bld_invalid(b);
    }
    return gather_scatter("ReduceScatter", CXLA_OP_REDUCE_SCATTER, operand, computation,
                          scatter_dimension, shard_count, replica_groups, group_count, channel_id,
                          use_global_device_ids);
}

cxla_op cxla_all_to_all(cxla_op operand, int64_t split_dimension, int64_t concat_dimension,
                        int64_t split_count, const cxla_replica_group *replica_groups,
                        int64_t group_count, int64_t channel_id) {
    const char *op = "AllToAll";
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, operand, 0);
    if (!in) return bld_invalid(b);
    const cxla_shape *x = &in->shape;
    int64_t rank = x->rank;
    if (!cxla_shape_is_array(x) || split_dimension < 0 || split_dimension >= rank ||
        concat_dimension < 0 || concat_dimension >= rank || split_count < 1 ||
        x->dims[split_dimension] % split_count != 0 || rank + 1 > CXLA_MAX_RANK) {
        bld_fail(b, op,
                 "split dimension %" PRId64 ", concat dimension %" PRId64
                 " and split count %" PRId64 " do not suit %s",
                 split_dimension, concat_dimension, split_count, bld_shape_str(b, x));
        return bld_invalid(b);
    }
    int64_t xd[CXLA_MAX_RANK];
    for (int64_t i = 0; i < rank; i++) xd[i] = x->dims[i];
    cxla_attr a[3];
    int n = 0;
    if (!collective_attrs(b, op, replica_groups, group_count, channel_id, false, a, &n) ||
        !bld_attr_ints(b, CXLA_ATTR_DIMENSIONS, &split_dimension, 1, &a[n++]))
        return bld_invalid(b);
    cxla_op r = bld_emit_ops(b, op, CXLA_OP_ALL_TO_ALL, NULL, 1, &in, n, a);
    if (split_dimension == concat_dimension || !cxla_op_is_valid(r)) return r;
    /* Blocks arrive along the split dimension; move them to the concat dimension. */
    int64_t sizes[CXLA_MAX_RANK], k = 0;
    for (int64_t i = 0; i < rank; i++) {
        if (i != split_dimension) {
            sizes[k++] = xd[i];
            continue;
        }
        sizes[k++] = split_count;
        sizes[k++] = xd[i] / split_count;
    }
    r = bld_reshape(b, op, r, rank + 1, sizes);
    int64_t perm[CXLA_MAX_RANK];
    k = 0;
    for (int64_t i = 0; i < rank; i++) {
        int64_t after = i >= split_dimension ? i + 1 : i;
        if (i == concat_dimension) perm[k++] = split_dimension;
        perm[k++] = after;
    }
    r = cxla_transpose(r, perm, rank + 1);
    xd[split_dimension] /= split_count;
    xd[concat_dimension] *= split_count;
    return bld_reshape(b, op, r, rank, xd);
}

cxla_op cxla_collective_permute(cxla_op operand, const int64_t *pairs, int64_t pair_count,
                                int64_t channel_id) {
    const char *op = "CollectivePermute";
    cxla_builder *b = operand.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *in = bld_operand(b, op, operand, 0);
    if (!in || !bld_check_list(b, op, "source_target_pairs", pairs, pair_count))
        return bld_invalid(b);
    cxla_attr a[2];
    int n = 0;
    a[n] = bld_attr(CXLA_ATTR_SOURCE_TARGET_PAIRS);
    cxla_arena *ar = b->module->arena;
    size_t cnt = (size_t)(pair_count ? pair_count : 1);
    a[n].v.int_lists.count = pair_count;
    a[n].v.int_lists.lengths = cxla_arena_alloc_array(ar, cnt, sizeof(int64_t));
    a[n].v.int_lists.lists = cxla_arena_alloc_array(ar, cnt, sizeof(int64_t *));
    if (!a[n].v.int_lists.lengths || !a[n].v.int_lists.lists) {
        bld_fail_status(b, op, OOM());
        return bld_invalid(b);
    }
    for (int64_t i = 0; i < pair_count; i++) {
        a[n].v.int_lists.lengths[i] = 2;
        if (!(a[n].v.int_lists.lists[i] = bld_copy_ints(b, pairs + 2 * i, 2))) {
            bld_fail_status(b, op, OOM());
            return bld_invalid(b);
        }
    }
    n++;
    if (channel_id > 0) a[n++] = bld_attr_int(CXLA_ATTR_CHANNEL_ID, channel_id);
    return bld_emit_ops(b, op, CXLA_OP_COLLECTIVE_PERMUTE, NULL, 1, &in, n, a);
}
