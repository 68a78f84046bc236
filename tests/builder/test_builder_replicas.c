/* The seeds' collective examples with concrete values, built with the builder and run on
 * several replicas (threads of one process, src/runtime/replicas.h). Single-replica
 * shapes and lowerings are in test_builder_control.c. */
#include "builder_test_util.h"
#include "runtime/replicas.h"

/* Runs |c| on |n| replicas, replica d getting the literal texts[d]; checks replica d's
 * result against want[d]. */
static void run_on_replicas(const cxla_xla_computation *c, int64_t n, const char *const *texts,
                            const char *const *want) {
    if (!c) return;
    cxla_literal *args[8] = {0}, *results[8] = {0};
    const cxla_literal *rows[8][1];
    const cxla_literal *const *per[8];
    for (int64_t d = 0; d < n; d++) {
        args[d] = lit(texts[d]);
        rows[d][0] = args[d];
        per[d] = rows[d];
    }
    cxla_replicas_options o = {.replica_count = n, .timeout_seconds = 30};
    CHECK_OK(cxla_run_replicated(cxla_xla_computation_module(c), &o, per, 1, results, NULL));
    for (int64_t d = 0; d < n; d++) {
        cxla_literal *w = lit(want[d]);
        if (results[d] && w) {
            cxla_status s = cxla_literal_compare(results[d], w, NULL);
            if (s) {
                char *g = cxla_literal_to_string(results[d], CXLA_LITERAL_PRINT_SHAPE);
                CHECK_MSG(false, "replica %d: %s\n  got:      %s\n  expected: %s", (int)d,
                          cxla_status_message(s), g ? g : "?", want[d]);
                free(g);
                cxla_status_free(s);
            }
        }
        cxla_literal_free(w);
        cxla_literal_free(results[d]);
        cxla_literal_free(args[d]);
    }
}

static cxla_xla_computation *add_f32(void) {
    return scalar_comp(CXLA_F32, cxla_add, "add");
}

/* Seed: two replicas holding [1.0, 2.5] and [3.0, 5.25]; AllGather on dimension 0 gives
 * [1.0, 2.5, 3.0, 5.25] on both. */
static void test_seed_all_gather(void) {
    cxla_builder *b = new_builder("all_gather");
    cxla_all_gather(cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2), "x"), 0, 2, NULL, 0, 0, false);
    cxla_xla_computation *c = finish(b);
    run_on_replicas(
        c, 2, (const char *[]){"f32[2] {1.0, 2.5}", "f32[2] {3.0, 5.25}"},
        (const char *[]){"f32[4] {1.0, 2.5, 3.0, 5.25}", "f32[4] {1.0, 2.5, 3.0, 5.25}"});
    cxla_xla_computation_free(c);
}

/* Seed: the same values, AllReduce with a sum gives [4.0, 7.75] on both; a tuple operand
 * reduces element by element. CrossReplicaSum (the older name) is the same. */
static void test_seed_all_reduce(void) {
    cxla_xla_computation *add = add_f32();
    cxla_builder *b = new_builder("all_reduce");
    cxla_all_reduce(cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2), "x"), add, NULL, 0, 0, false);
    cxla_xla_computation *c = finish(b);
    const char *in[] = {"f32[2] {1.0, 2.5}", "f32[2] {3.0, 5.25}"};
    const char *want[] = {"f32[2] {4.0, 7.75}", "f32[2] {4.0, 7.75}"};
    run_on_replicas(c, 2, in, want);
    cxla_xla_computation_free(c);
    b = new_builder("cross_replica_sum");
    cxla_cross_replica_sum(cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2), "x"), NULL, 0);
    c = finish(b);
    run_on_replicas(c, 2, in, want);
    cxla_xla_computation_free(c);
    cxla_xla_computation_free(add);
}

/* Seed: replicas holding [1.0, 2.25] and [3.0, 5.25]; ReduceScatter (sum) on dimension 0
 * gives [4.0] on the first and [7.5] on the second. */
static void test_seed_reduce_scatter(void) {
    cxla_xla_computation *add = add_f32();
    cxla_builder *b = new_builder("reduce_scatter");
    cxla_reduce_scatter(cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2), "x"), add, 0, 2, NULL, 0, 0,
                        false);
    cxla_xla_computation *c = finish(b);
    run_on_replicas(c, 2, (const char *[]){"f32[2] {1.0, 2.25}", "f32[2] {3.0, 5.25}"},
                    (const char *[]){"f32[1] {4.0}", "f32[1] {7.5}"});
    cxla_xla_computation_free(c);
    cxla_xla_computation_free(add);
}

/* Seed: AllToAll(x: f32[4,16], split_dimension=1, concat_dimension=0, split_count=4) on 4
 * replicas; each replica's result is f32[16,4]. The seed's prose says the operand is
 * split "along dimension 0" and the blocks concatenated "along dimension 1", which swaps
 * the two; the code (split 1, concat 0) and the stated f32[4,4] blocks and f32[16,4]
 * result agree with each other, and that is what is checked: replica r's result holds,
 * in rows 4k..4k+3, columns 4r..4r+3 of replica k's operand. */
static void test_seed_all_to_all(void) {
    cxla_builder *b = new_builder("alltoall");
    cxla_op x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 4, 16), "x");
    cxla_op r = cxla_all_to_all(x, 1, 0, 4, NULL, 0, 0);
    const cxla_shape *rs = NULL;
    CHECK_OK(cxla_op_get_shape(r, &rs));
    CHECK(rs && rs->rank == 2 && rs->dims[0] == 16 && rs->dims[1] == 4);
    cxla_xla_computation *c = finish(b);
    /* Replica k's operand: x[i][j] = 1000 k + 100 i + j. */
    char in[4][2048], want[4][2048];
    const char *ins[4], *wants[4];
    for (int k = 0; k < 4; k++) {
        int n = snprintf(in[k], sizeof(in[k]), "f32[4,16] {");
        for (int i = 0; i < 4; i++) {
            n += snprintf(in[k] + n, sizeof(in[k]) - (size_t)n, "%s{", i ? ", " : "");
            for (int j = 0; j < 16; j++)
                n += snprintf(in[k] + n, sizeof(in[k]) - (size_t)n, "%s%d", j ? ", " : "",
                              1000 * k + 100 * i + j);
            n += snprintf(in[k] + n, sizeof(in[k]) - (size_t)n, "}");
        }
        snprintf(in[k] + n, sizeof(in[k]) - (size_t)n, "}");
        ins[k] = in[k];
    }
    for (int r2 = 0; r2 < 4; r2++) {
        int n = snprintf(want[r2], sizeof(want[r2]), "f32[16,4] {");
        for (int row = 0; row < 16; row++) {
            int k = row / 4, i = row % 4;
            n += snprintf(want[r2] + n, sizeof(want[r2]) - (size_t)n, "%s{", row ? ", " : "");
            for (int j = 0; j < 4; j++)
                n += snprintf(want[r2] + n, sizeof(want[r2]) - (size_t)n, "%s%d", j ? ", " : "",
                              1000 * k + 100 * i + 4 * r2 + j);
            n += snprintf(want[r2] + n, sizeof(want[r2]) - (size_t)n, "}");
        }
        snprintf(want[r2] + n, sizeof(want[r2]) - (size_t)n, "}");
        wants[r2] = want[r2];
    }
    run_on_replicas(c, 4, ins, wants);
    cxla_xla_computation_free(c);
}

/* ReplicaId: each replica sees its own id (the seed: an unsigned integer in [0, N)). */
static void test_replica_id(void) {
    cxla_builder *b = new_builder("replica_id");
    cxla_op p = cxla_parameter(b, 0, &SCALAR(CXLA_U32), "p");
    cxla_add(cxla_replica_id(b), p);
    cxla_xla_computation *c = finish(b);
    run_on_replicas(c, 3, (const char *[]){"u32[] 10", "u32[] 10", "u32[] 10"},
                    (const char *[]){"u32[] 10", "u32[] 11", "u32[] 12"});
    cxla_xla_computation_free(c);
}

TEST_MAIN(TEST(test_seed_all_gather), TEST(test_seed_all_reduce), TEST(test_seed_reduce_scatter),
          TEST(test_seed_all_to_all), TEST(test_replica_id))
