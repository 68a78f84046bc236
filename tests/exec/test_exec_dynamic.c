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

TEST_MAIN(TEST(test_kinds), TEST(test_shape_predicates), TEST(test_reshape_sizes),
          TEST(test_broadcast_sizes))
