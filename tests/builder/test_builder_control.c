/* Control flow, calls, random numbers and collectives through the builder: the seeds'
 * While example (1000 iterations adding a constant vector), Conditional with a predicate
 * and with N branches (out-of-range index -> the last), Call, the collectives on one
 * replica (CrossReplicaSum, AllReduce, AllGather, ReduceScatter, AllToAll with the
 * seed's 4-way split, CollectivePermute), RNG operations and custom calls as HLO. */
#include "builder_test_util.h"

/* Seed: init = {0, zero_vector[10]}; while (result(0) < 1000) { iteration + 1,
 * accumulator + constant_vector[10] }. */
static void test_seed_while(void) {
    cxla_shape parts[2] = {SCALAR(CXLA_S32), SHAPE(CXLA_F32, 10)};
    cxla_shape state = {.type = CXLA_TUPLE, .tuple_count = 2, .elements = parts};
    cxla_builder *cb = new_builder("condition");
    cxla_op s = cxla_parameter(cb, 0, &state, "state");
    cxla_lt(cxla_get_tuple_element(s, 0), cxla_constant_r0(cb, CXLA_S32, 1000));
    cxla_xla_computation *cond = finish(cb);
    cxla_builder *bb = new_builder("body");
    s = cxla_parameter(bb, 0, &state, "state");
    float ones[10];
    for (int i = 0; i < 10; i++) ones[i] = (float)(i + 1) * 0.5f;
    cxla_tuple(bb,
               (cxla_op[]){cxla_add(cxla_get_tuple_element(s, 0), cxla_one(bb, CXLA_S32)),
                           cxla_add(cxla_get_tuple_element(s, 1),
                                    cxla_constant_f32(bb, 1, I64S(10), ones))},
               2);
    cxla_xla_computation *body = finish(bb);
    cxla_builder *b = new_builder("while");
    cxla_op init = cxla_tuple(
        b, (cxla_op[]){cxla_zero(b, CXLA_S32), cxla_broadcast(cxla_zero(b, CXLA_F32), I64S(10), 1)},
        2);
    cxla_while(cond, body, init);
    check_build_run(b, NOARGS,
                    "(s32[] 1000, f32[10] {500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, "
                    "5000})");
    /* A body of the wrong type is rejected. */
    b = new_builder("while_bad");
    cxla_while(cond, body, cxla_zero(b, CXLA_S32));
    expect_build_error(b, "While");
    cxla_xla_computation_free(cond);
    cxla_xla_computation_free(body);
}

static cxla_xla_computation *unary_comp(const char *name, cxla_op (*fn)(cxla_op)) {
    cxla_builder *b = new_builder(name);
    fn(cxla_parameter(b, 0, &SCALAR(CXLA_F32), "x"));
    return finish(b);
}

static void test_seed_conditional(void) {
    cxla_xla_computation *neg = unary_comp("neg", cxla_neg);
    cxla_xla_computation *abs = unary_comp("abs", cxla_abs);
    cxla_xla_computation *exp = unary_comp("exp", cxla_exp);
    cxla_builder *b = new_builder("cond");
    cxla_op p = cxla_parameter(b, 0, &SCALAR(CXLA_PRED), "p");
    cxla_conditional(p, cxla_constant_r0(b, CXLA_F32, 2), neg, cxla_constant_r0(b, CXLA_F32, -3),
                     abs);
    cxla_xla_computation *c = finish(b);
    expect_run(c, ARGS("pred[] true"), "f32[] -2", NULL);
    expect_run(c, ARGS("pred[] false"), "f32[] 3", NULL);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "true_computation=neg") && strstr(text, "false_computation=abs"));
    free(text);
    cxla_xla_computation_free(c);

    b = new_builder("branches");
    cxla_op i = cxla_parameter(b, 0, &SCALAR(CXLA_S32), "i");
    const cxla_xla_computation *branches[3] = {neg, abs, exp};
    cxla_op x = cxla_constant_r0(b, CXLA_F32, -1);
    cxla_conditional_branches(i, branches, (cxla_op[]){x, x, cxla_zero(b, CXLA_F32)}, 3);
    c = finish(b);
    expect_run(c, ARGS("s32[] 0"), "f32[] 1", NULL);
    expect_run(c, ARGS("s32[] 1"), "f32[] 1", NULL);
    expect_run(c, ARGS("s32[] 2"), "f32[] 1", NULL);
    expect_run(c, ARGS("s32[] 7"), "f32[] 1", NULL);  /* out of range: the last branch */
    expect_run(c, ARGS("s32[] -1"), "f32[] 1", NULL); /* exp(0) */
    cxla_xla_computation_free(c);
    /* Distinguish the default branch from branch 0 with another operand. */
    b = new_builder("branches2");
    i = cxla_parameter(b, 0, &SCALAR(CXLA_S32), "i");
    cxla_conditional_branches(i, branches,
                              (cxla_op[]){cxla_constant_r0(b, CXLA_F32, 5),
                                          cxla_constant_r0(b, CXLA_F32, -6),
                                          cxla_zero(b, CXLA_F32)},
                              3);
    c = finish(b);
    expect_run(c, ARGS("s32[] 0"), "f32[] -5", NULL);
    expect_run(c, ARGS("s32[] 1"), "f32[] 6", NULL);
    expect_run(c, ARGS("s32[] 3"), "f32[] 1", NULL);
    cxla_xla_computation_free(c);

    b = new_builder("cond_bad");
    cxla_conditional(cxla_constant_r0(b, CXLA_S32, 1), cxla_constant_r0(b, CXLA_F32, 2), neg,
                     cxla_constant_r0(b, CXLA_F32, 2), abs);
    expect_build_error(b, "predicate must be pred[]");
    cxla_xla_computation_free(neg);
    cxla_xla_computation_free(abs);
    cxla_xla_computation_free(exp);
}

static void test_call(void) {
    cxla_builder *fb = new_builder("seven");
    cxla_constant_r0(fb, CXLA_S32, 7);
    cxla_xla_computation *seven = finish(fb);
    cxla_xla_computation *sub = scalar_comp(CXLA_S32, cxla_sub, "sub");
    cxla_builder *b = new_builder("calls");
    cxla_op x = cxla_call(b, seven, NULL, 0); /* no arguments is allowed */
    cxla_call(b, sub, (cxla_op[]){x, cxla_constant_r0(b, CXLA_S32, 2)}, 2);
    check_build_run(b, NOARGS, "s32[] 5");
    b = new_builder("call_bad");
    cxla_call(b, sub, (cxla_op[]){cxla_constant_r0(b, CXLA_S32, 2)}, 1);
    expect_build_error(b, "Call");
    cxla_xla_computation_free(seven);
    cxla_xla_computation_free(sub);
}

/* On one replica every collective sees only itself. */
static void test_collectives_single_replica(void) {
    cxla_builder *b = new_builder("crs");
    cxla_cross_replica_sum(cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2), "x"), NULL, 0);
    cxla_xla_computation *c = finish(b);
    expect_run(c, ARGS("f32[2] {1, 2.5}"), "f32[2] {1, 2.5}", NULL);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "all-reduce(") && strstr(text, "replica_groups={}") &&
          strstr(text, "to_apply=add_F32"));
    free(text);
    cxla_xla_computation_free(c);

    cxla_xla_computation *max = scalar_comp(CXLA_S32, cxla_max, "max");
    b = new_builder("all_reduce_tuple");
    cxla_op t = cxla_tuple(b,
                           (cxla_op[]){cxla_constant_r0(b, CXLA_S32, 3),
                                       cxla_constant_s32(b, 1, I64S(2), (const int32_t[]){1, 2})},
                           2);
    cxla_replica_group g0 = {.ids = I64S(0), .count = 1};
    cxla_all_reduce(t, max, &g0, 1, 5, true);
    c = finish(b);
    expect_run(c, NOARGS, "(s32[] 3, s32[2] {1, 2})", NULL);
    text = hlo_text(c);
    CHECK(text && strstr(text, "channel_id=5, replica_groups={{0}}, use_global_device_ids=true"));
    free(text);
    cxla_xla_computation_free(c);

    b = new_builder("gather_scatter");
    cxla_op x = cxla_parameter(b, 0, &SHAPE(CXLA_S32, 2, 3), "x");
    cxla_tuple(b,
               (cxla_op[]){cxla_all_gather(x, 1, 1, NULL, 0, 0, false),
                           cxla_reduce_scatter(x, max, 0, 1, NULL, 0, 0, false),
                           cxla_all_to_all(x, 1, 0, 1, NULL, 0, 0),
                           cxla_collective_permute(x, I64S(0, 0), 1, 0)},
               4);
    check_build_run(b, ARGS("s32[2,3] { {1, 2, 3}, {4, 5, 6} }"),
                    "(s32[2,3] { {1, 2, 3}, {4, 5, 6} }, s32[2,3] { {1, 2, 3}, {4, 5, 6} }, "
                    "s32[2,3] { {1, 2, 3}, {4, 5, 6} }, s32[2,3] { {1, 2, 3}, {4, 5, 6} })");
    b = new_builder("ids");
    cxla_tuple(b, (cxla_op[]){cxla_replica_id(b), cxla_partition_id(b)}, 2);
    check_build_run(b, NOARGS, "(u32[] 0, u32[] 0)");
    cxla_xla_computation_free(max);
}

/* Shapes and HLO of collectives over several replicas (the interpreter runs one). */
static void test_collective_shapes(void) {
    /* Seed: AllToAll(x f32[4,16], split 1, concat 0, split_count 4) -> f32[16,4]. */
    cxla_builder *b = new_builder("alltoall");
    cxla_op x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 4, 16), "x");
    cxla_op r = cxla_all_to_all(x, 1, 0, 4, NULL, 0, 0);
    const cxla_shape *rs = NULL;
    CHECK_OK(cxla_op_get_shape(r, &rs));
    CHECK(rs && rs->rank == 2 && rs->dims[0] == 16 && rs->dims[1] == 4);
    cxla_xla_computation *c = finish(b);
    CHECK_EQ_I64(count_op(c, CXLA_OP_ALL_TO_ALL), 1);
    CHECK_EQ_I64(count_op(c, CXLA_OP_TRANSPOSE), 1);
    CHECK_EQ_I64(count_op(c, CXLA_OP_RESHAPE), 2);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "f32[4,4,4]{2,1,0} reshape(") && strstr(text, "dimensions={1,0,2}"));
    free(text);
    cxla_xla_computation_free(c);

    /* Seed: AllGather along 0 of [1.0, 2.5] over 2 replicas -> 4 elements; ReduceScatter
     * of 2 elements over 2 -> 1. */
    cxla_xla_computation *add = scalar_comp(CXLA_F32, cxla_add, "add");
    b = new_builder("gather2");
    cxla_replica_group pairs[2] = {{.ids = I64S(0, 2), .count = 2},
                                   {.ids = I64S(1, 3), .count = 2}};
    x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2), "x");
    cxla_op g = cxla_all_gather(x, 0, 2, pairs, 2, 0, false);
    cxla_op s = cxla_reduce_scatter(x, add, 0, 2, pairs, 2, 0, false);
    CHECK_OK(cxla_op_get_shape(g, &rs));
    CHECK(rs && rs->dims[0] == 4);
    CHECK_OK(cxla_op_get_shape(s, &rs));
    CHECK(rs && rs->dims[0] == 1);
    cxla_tuple(b, (cxla_op[]){g, s}, 2);
    c = finish(b);
    text = hlo_text(c);
    CHECK(text && strstr(text, "replica_groups={{0,2},{1,3}}, dimensions={0}"));
    free(text);
    cxla_xla_computation_free(c);
    b = new_builder("scatter_bad");
    x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 3), "x");
    cxla_reduce_scatter(x, add, 0, 2, NULL, 0, 0, false);
    expect_build_error(b, "not divisible");
    b = new_builder("a2a_bad");
    x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 4, 6), "x");
    cxla_all_to_all(x, 1, 0, 4, NULL, 0, 0);
    expect_build_error(b, "AllToAll");
    cxla_xla_computation_free(add);
}

/* RNG operations build as HLO; the interpreter does not run them yet. */
static void test_rng(void) {
    cxla_builder *b = new_builder("rng");
    cxla_shape s = SHAPE(CXLA_F32, 3, 2);
    cxla_op u = cxla_rng_uniform(cxla_zero(b, CXLA_F32), cxla_one(b, CXLA_F32), &s);
    cxla_op n = cxla_rng_normal(cxla_zero(b, CXLA_F32), cxla_one(b, CXLA_F32), &s);
    cxla_op bern = cxla_rng_bernoulli(cxla_constant_r0(b, CXLA_F32, 0.25), &SHAPE(CXLA_U32, 4));
    cxla_op bits = cxla_rng_bit_generator(
        CXLA_RNG_THREE_FRY, cxla_constant_array(b, CXLA_U64, 1, I64S(2), (const uint64_t[]){1, 2}),
        &SHAPE(CXLA_U32, 8));
    const cxla_shape *bs = NULL;
    CHECK_OK(cxla_op_get_shape(bern, &bs));
    CHECK(bs && bs->type == CXLA_U32 && bs->dims[0] == 4);
    CHECK_OK(cxla_op_get_shape(bits, &bs));
    CHECK(bs && bs->type == CXLA_TUPLE && bs->elements[0].type == CXLA_U64 &&
          bs->elements[1].dims[0] == 8);
    cxla_tuple(b, (cxla_op[]){u, n, bern, bits}, 4);
    cxla_xla_computation *c = finish(b);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "distribution=rng_uniform") &&
          strstr(text, "distribution=rng_normal") && strstr(text, "algorithm=rng_three_fry") &&
          strstr(text, "u32[4]{0} convert("));
    free(text);
    cxla_xla_computation_free(c);
    b = new_builder("rng_bad");
    cxla_rng_normal(cxla_zero(b, CXLA_S32), cxla_one(b, CXLA_S32), &SHAPE(CXLA_S32, 2));
    expect_build_error(b, "rng_normal");
    b = new_builder("bern_bad");
    cxla_rng_bernoulli(cxla_constant_r0(b, CXLA_F64, 0.5), &SHAPE(CXLA_U32, 2));
    expect_build_error(b, "f32[]");
}

/* Seed: CustomCall("myfunc", {x, y}, f32[3x3]) builds; tokens; after-all. */
static void test_custom_call_and_tokens(void) {
    cxla_builder *b = new_builder("custom");
    cxla_op x = cxla_constant_f32(b, 1, I64S(2), (const float[]){1, 2});
    cxla_op y = cxla_constant_f32(b, 2, I64S(2, 3), (const float[]){10, 20, 30, 40, 50, 60});
    cxla_custom_call(b, "myfunc", (cxla_op[]){x, y}, 2, &SHAPE(CXLA_F32, 3, 3), "a\"b", false);
    cxla_xla_computation *c = finish(b);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "f32[3,3]{1,0} custom-call(") &&
          strstr(text, "custom_call_target=\"myfunc\"") &&
          strstr(text, "backend_config=\"a\\\"b\""));
    free(text);
    cxla_xla_computation_free(c);
    b = new_builder("tokens");
    cxla_op t1 = cxla_create_token(b), t2 = cxla_create_token(b);
    cxla_after_all(b, (cxla_op[]){t1, t2}, 2);
    c = finish(b);
    CHECK(c && cxla_xla_computation_result_shape(c)->type == CXLA_TOKEN);
    cxla_xla_computation_free(c);
    b = new_builder("tokens_bad");
    cxla_after_all(b, (cxla_op[]){cxla_zero(b, CXLA_F32)}, 1);
    expect_build_error(b, "token");
}

TEST_MAIN(TEST(test_seed_while), TEST(test_seed_conditional), TEST(test_call),
          TEST(test_collectives_single_replica), TEST(test_collective_shapes), TEST(test_rng),
          TEST(test_custom_call_and_tokens))
