/* The dynamic-dimension rules of src/exec/dynamic.c, as functions of shapes: the kind of
 * each operation, reshape and broadcast result sizes, and their errors. End-to-end runs
 * of dynamic values are tests/interp/test_interp_dynamic.c and tests/hlo/cases/dynamic*. */
#include "exec/dynamic.h"
#include "harness.h"

/* The root of the entry of a module whose entry is "p = |param| parameter(0); ROOT r =
 * |root|" (verified; |*out_m| to destroy). */
static const cxla_instr *root_of(const char *param, const char *root, cxla_module **out_m) {
    char text[512];
    snprintf(text, sizeof(text),
             "HloModule m\nENTRY main {\n  p = %s parameter(0)\n  c = f32[2] constant({1, 2})\n"
             "  t = (f32[2]) tuple(c)\n  ROOT r = %s\n}\n",
             param, root);
    *out_m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "t.hlo", out_m));
    if (*out_m) CHECK_OK(cxla_verify_module(*out_m));
    return *out_m ? (*out_m)->entry->root : NULL;
}

static void test_kinds(void) {
    CHECK_EQ_I64(exec_dynamic_kind(CXLA_OP_ADD), EXEC_DYN_SAME);
    CHECK_EQ_I64(exec_dynamic_kind(CXLA_OP_EXP), EXEC_DYN_SAME);
    CHECK_EQ_I64(exec_dynamic_kind(CXLA_OP_RESHAPE), EXEC_DYN_RESHAPE);
    CHECK_EQ_I64(exec_dynamic_kind(CXLA_OP_TUPLE), EXEC_DYN_PASS);
    CHECK_EQ_I64(exec_dynamic_kind(CXLA_OP_DOT), EXEC_DYN_DOT);
    CHECK_EQ_I64(exec_dynamic_kind(CXLA_OP_CONCATENATE), EXEC_DYN_CONCAT);
    CHECK_EQ_I64(exec_dynamic_kind(CXLA_OP_RNG_BIT_GENERATOR), EXEC_DYN_NONE);
}

/* The operations with no dynamic rule (EXEC_DYN_NONE): leaves that take no operand, and
 * those that fail with an error naming the instruction when an operand is below its
 * bounds. Every other opcode must have a kind: adding an opcode means deciding. */
static const cxla_opcode no_rule[] = {
    CXLA_OP_PARAMETER,
    CXLA_OP_CONSTANT,
    CXLA_OP_IOTA,
    CXLA_OP_REPLICA_ID,
    CXLA_OP_PARTITION_ID,
    CXLA_OP_RNG_GET_AND_UPDATE_STATE,
    CXLA_OP_BITCAST,
    CXLA_OP_SHUFFLE,
    CXLA_OP_SCAN,
    CXLA_OP_RAGGED_DOT,
    CXLA_OP_SCALED_DOT,
    CXLA_OP_CUSTOM_CALL,
    CXLA_OP_RNG,
    CXLA_OP_RNG_BIT_GENERATOR,
    CXLA_OP_INFEED,
    CXLA_OP_OUTFEED,
    CXLA_OP_SEND,
    CXLA_OP_SEND_DONE,
    CXLA_OP_RECV,
    CXLA_OP_RECV_DONE,
    CXLA_OP_ALL_REDUCE,
    CXLA_OP_ALL_REDUCE_START,
    CXLA_OP_ALL_REDUCE_DONE,
    CXLA_OP_ALL_GATHER,
    CXLA_OP_ALL_GATHER_START,
    CXLA_OP_ALL_GATHER_DONE,
    CXLA_OP_ALL_TO_ALL,
    CXLA_OP_RAGGED_ALL_TO_ALL,
    CXLA_OP_REDUCE_SCATTER,
    CXLA_OP_COLLECTIVE_PERMUTE,
    CXLA_OP_COLLECTIVE_PERMUTE_START,
    CXLA_OP_COLLECTIVE_PERMUTE_DONE,
    CXLA_OP_COLLECTIVE_BROADCAST,
    CXLA_OP_COLLECTIVE_REDUCE,
};

static void test_every_opcode_decided(void) {
    for (int i = 0; i < CXLA_OP_COUNT; i++) {
        bool listed = false;
        for (size_t k = 0; k < sizeof(no_rule) / sizeof(no_rule[0]); k++)
            listed = listed || no_rule[k] == (cxla_opcode)i;
        exec_dyn_kind kind = exec_dynamic_kind((cxla_opcode)i);
        if (listed)
            CHECK_MSG(kind == EXEC_DYN_NONE, "%s has a dynamic rule now: take it off the list",
                      cxla_opcode_name((cxla_opcode)i));
        else
            CHECK_MSG(kind != EXEC_DYN_NONE, "%s has no dynamic rule and is not on the list",
                      cxla_opcode_name((cxla_opcode)i));
    }
}

static void test_shape_predicates(void) {
    cxla_module *m = NULL;
    const cxla_instr *r = root_of("f32[<=4,?]", "(f32[<=4,?], (f32[2])) tuple(p, t)", &m);
    if (r) {
        CHECK(exec_shape_has_unbounded(&r->shape));
        CHECK(!exec_shape_has_unbounded(&r->shape.elements[1]));
        const cxla_shape *p = &r->operands[0]->shape;
        CHECK(exec_shape_dim_dynamic(p, 0) && exec_shape_dim_dynamic(p, 1));
        CHECK(!exec_shape_dim_dynamic(p, 2) && !exec_shape_dim_dynamic(p, -1));
        CHECK(!exec_shape_dim_dynamic(&r->shape.elements[1].elements[0], 0));
    }
    cxla_module_destroy(m);
}

static void test_reshape_sizes(void) {
    cxla_module *m = NULL;
    int64_t o[CXLA_MAX_RANK];
    const cxla_instr *r = root_of("f32[<=6,4]", "f32[<=24] reshape(p)", &m);
    if (r) {
        CHECK_OK(exec_dynamic_reshape_sizes(r, &r->operands[0]->shape, (int64_t[]){3, 4}, o));
        CHECK_EQ_I64(o[0], 12);
    }
    cxla_module_destroy(m);
    r = root_of("f32[<=4,6]", "f32[<=4,2,3] reshape(p)", &m);
    if (r) {
        CHECK_OK(exec_dynamic_reshape_sizes(r, &r->operands[0]->shape, (int64_t[]){2, 6}, o));
        CHECK(o[0] == 2 && o[1] == 2 && o[2] == 3);
    }
    cxla_module_destroy(m);
    /* Two dynamic result dimensions in one group: the count cannot tell them apart. */
    r = root_of("f32[<=6]", "f32[<=2,<=3] reshape(p)", &m);
    if (r) {
        const char *msg =
            CHECK_ERROR(exec_dynamic_reshape_sizes(r, &r->operands[0]->shape, (int64_t[]){4}, o));
        CHECK(strstr(msg, "cannot tell how 4 elements split") && strstr(msg, "r (reshape"));
    }
    cxla_module_destroy(m);
    /* A static result the sizes do not fill. */
    r = root_of("f32[<=6]", "f32[6] reshape(p)", &m);
    if (r)
        CHECK(strstr(
            CHECK_ERROR(exec_dynamic_reshape_sizes(r, &r->operands[0]->shape, (int64_t[]){4}, o)),
            "holds 4 elements at its dynamic sizes but the static result holds 6"));
    cxla_module_destroy(m);
}

static void test_broadcast_sizes(void) {
    cxla_module *m = NULL;
    int64_t o[CXLA_MAX_RANK];
    const cxla_instr *r = root_of("f32[<=3]", "f32[2,<=3] broadcast(p), dimensions={1}", &m);
    if (r) {
        CHECK_OK(exec_dynamic_broadcast_sizes(r, 1, (int64_t[]){2}, o));
        CHECK(o[0] == 2 && o[1] == 2);
    }
    cxla_module_destroy(m);
    r = root_of("f32[]", "f32[?] broadcast(p), dimensions={}", &m);
    if (r)
        CHECK(strstr(CHECK_ERROR(exec_dynamic_broadcast_sizes(r, 0, NULL, o)),
                     "no operand dimension gives unbounded result dimension 0"));
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_kinds), TEST(test_every_opcode_decided), TEST(test_shape_predicates),
          TEST(test_reshape_sizes), TEST(test_broadcast_sizes))
