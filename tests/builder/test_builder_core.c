/* The builder's life cycle: building and running, sticky errors, parameters, roots,
 * sub-computations, names, the program shape and the HLO text. */
#include "builder_test_util.h"

static void test_axpy_runs(void) {
    cxla_builder *b = new_builder("axpy");
    cxla_shape v = SHAPE(CXLA_F32, 3);
    cxla_op x = cxla_parameter(b, 0, &v, "x");
    cxla_op y = cxla_parameter(b, 1, &v, "y");
    cxla_op r = cxla_add(cxla_mul(cxla_constant_r0(b, CXLA_F32, 2.0), x), y);
    CHECK(cxla_op_is_valid(r));
    const cxla_shape *rs = NULL;
    CHECK_OK(cxla_op_get_shape(r, &rs));
    CHECK(rs && rs->type == CXLA_F32 && rs->rank == 1 && rs->dims[0] == 3);
    cxla_xla_computation *c = finish(b);
    CHECK(c != NULL);
    CHECK_EQ_I64(cxla_xla_computation_parameter_count(c), 2);
    CHECK(cxla_xla_computation_parameter_shape(c, 1)->dims[0] == 3);
    CHECK(cxla_xla_computation_parameter_shape(c, 2) == NULL);
    CHECK(cxla_xla_computation_result_shape(c)->type == CXLA_F32);
    CHECK_EQ_STR(cxla_xla_computation_name(c), "axpy");
    expect_run(c, ARGS("f32[3] {1, 2, 3}", "f32[3] {10, 20, 30}"), "f32[3] {12, 24, 36}", NULL);
    /* The scalar 2 was broadcast explicitly, as XLA's builder does. */
    CHECK_EQ_I64(count_op(c, CXLA_OP_BROADCAST), 1);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "HloModule axpy"));
    CHECK(text && strstr(text, "ENTRY axpy"));
    CHECK(text && strstr(text, "x.1 = f32[3]{0} parameter(0)"));
    CHECK(text && strstr(text, "broadcast(") && strstr(text, "dimensions={}"));
    free(text);
    cxla_xla_computation_free(c);
}

static void test_sticky_errors(void) {
    cxla_builder *b = new_builder("bad");
    cxla_op x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 3), "x");
    cxla_op y = cxla_parameter(b, 1, &SHAPE(CXLA_F32, 4), "y");
    CHECK(cxla_builder_first_error(b) == NULL);
    cxla_op bad = cxla_add(x, y);
    CHECK(!cxla_op_is_valid(bad));
    CHECK(bad.builder == b);
    cxla_status e = cxla_builder_first_error(b);
    CHECK(e != NULL);
    const char *m = cxla_status_message(e);
    CHECK_MSG(strstr(m, "Add") && strstr(m, "f32[3]") && strstr(m, "f32[4]"), "message: %s", m);
    cxla_status_free(e);
    /* Later calls, valid or not, return invalid ops and keep the first error. */
    cxla_op later = cxla_neg(x);
    CHECK(!cxla_op_is_valid(later));
    cxla_op later2 = cxla_convert_element_type(bad, CXLA_S32);
    CHECK(!cxla_op_is_valid(later2));
    const cxla_shape *s = NULL;
    CHECK_ERROR(cxla_op_get_shape(bad, &s));
    expect_build_error(b, "f32[4]");
}

static void test_error_names_operation(void) {
    cxla_builder *b = new_builder("e");
    cxla_op x = cxla_parameter(b, 0, &SHAPE(CXLA_S32, 2), "x");
    cxla_floor(x);
    expect_build_error(b, "Floor (builder 'e')");

    b = new_builder("e2");
    x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2, 3), "x");
    cxla_transpose(x, I64S(0, 0), 2);
    expect_build_error(b, "Transpose");

    b = new_builder("e3");
    x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2, 3), "x");
    cxla_collapse(x, I64S(1, 0), 2);
    expect_build_error(b, "consecutive");
}

static void test_parameters(void) {
    /* A gap in the numbers. */
    cxla_builder *b = new_builder("gap");
    cxla_parameter(b, 0, &SCALAR(CXLA_F32), "a");
    cxla_parameter(b, 2, &SCALAR(CXLA_F32), "c");
    expect_build_error(b, "parameter 1 is missing");

    /* A number used twice. */
    b = new_builder("dup");
    cxla_parameter(b, 0, &SCALAR(CXLA_F32), "a");
    cxla_op p = cxla_parameter(b, 0, &SCALAR(CXLA_F32), "b");
    CHECK(!cxla_op_is_valid(p));
    expect_build_error(b, "already used");

    /* Negative number, NULL shape, invalid shape. */
    b = new_builder("neg");
    cxla_parameter(b, -1, &SCALAR(CXLA_F32), "a");
    expect_build_error(b, "negative");
    b = new_builder("nul");
    cxla_parameter(b, 0, NULL, "a");
    expect_build_error(b, "NULL");
    b = new_builder("badshape");
    cxla_parameter(b, 0, &SHAPE(CXLA_F32, -3), "a");
    expect_build_error(b, "Parameter");

    /* Out of order numbers are fine; odd names are sanitized. */
    b = new_builder("my comp!");
    cxla_op y = cxla_parameter(b, 1, &SCALAR(CXLA_S32), "y value");
    cxla_op x = cxla_parameter(b, 0, &SCALAR(CXLA_S32), NULL);
    cxla_sub(x, y);
    cxla_xla_computation *c = finish(b);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "HloModule my_comp_"));
    CHECK(text && strstr(text, "y_value.1 = s32[] parameter(1)"));
    CHECK(text && strstr(text, "parameter.2 = s32[] parameter(0)"));
    free(text);
    expect_run(c, ARGS("s32[] 10", "s32[] 3"), "s32[] 7", NULL);
    cxla_xla_computation_free(c);
}

static void test_foreign_and_zero_ops(void) {
    cxla_builder *a = new_builder("a"), *b = new_builder("b");
    cxla_op x = cxla_parameter(a, 0, &SCALAR(CXLA_F32), "x");
    cxla_op y = cxla_parameter(b, 0, &SCALAR(CXLA_F32), "y");
    cxla_op r = cxla_add(x, y);
    CHECK(!cxla_op_is_valid(r));
    expect_build_error(a, "operand 1 was built by builder 'b', not 'a'");
    cxla_builder_destroy(b);

    b = new_builder("z");
    cxla_op zero = {0};
    y = cxla_parameter(b, 0, &SCALAR(CXLA_F32), "y");
    cxla_add(y, zero);
    expect_build_error(b, "zero cxla_op");

    /* All-invalid operands: nothing to record, an invalid op back, no crash. */
    r = cxla_add(zero, zero);
    CHECK(!cxla_op_is_valid(r) && r.builder == NULL);
    r = cxla_neg(zero);
    CHECK(!cxla_op_is_valid(r));
}

static void test_build_rules(void) {
    cxla_builder *b = new_builder("empty");
    expect_build_error(b, "no operations");

    /* After a build: no more calls, no second build. */
    b = new_builder("twice");
    cxla_op x = cxla_parameter(b, 0, &SCALAR(CXLA_F32), "x");
    cxla_xla_computation *c = NULL;
    CHECK_OK(cxla_builder_build(b, &c));
    cxla_xla_computation *c2 = NULL;
    CHECK_ERROR_HAS(cxla_builder_build(b, &c2), "already built");
    CHECK(!cxla_op_is_valid(x));
    cxla_op y = cxla_neg(x);
    CHECK(!cxla_op_is_valid(y));
    cxla_builder_destroy(b);
    cxla_xla_computation_free(c);

    /* An explicit root. */
    b = new_builder("root");
    x = cxla_parameter(b, 0, &SCALAR(CXLA_F32), "x");
    cxla_op n = cxla_neg(x);
    cxla_abs(x);
    c = NULL;
    CHECK_OK(cxla_builder_build_with_root(b, n, &c));
    cxla_builder_destroy(b);
    expect_run(c, ARGS("f32[] -2.5"), "f32[] 2.5", NULL);
    cxla_xla_computation_free(c);

    /* A root from another builder. */
    cxla_builder *o = new_builder("other");
    cxla_op z = cxla_parameter(o, 0, &SCALAR(CXLA_F32), "z");
    b = new_builder("r2");
    cxla_parameter(b, 0, &SCALAR(CXLA_F32), "x");
    CHECK_ERROR_HAS(cxla_builder_build_with_root(b, z, &c), "built by builder 'other'");
    cxla_builder_destroy(b);
    cxla_builder_destroy(o);

    /* Sub-builder names and NULL arguments. */
    b = new_builder("main");
    cxla_builder *s = NULL;
    CHECK_OK(cxla_builder_create_sub_builder(b, "body", &s));
    CHECK_EQ_STR(cxla_builder_name(s), "main.body");
    cxla_builder_destroy(s);
    cxla_builder_destroy(b);
    CHECK_ERROR(cxla_builder_create(NULL, NULL));
    CHECK_ERROR(cxla_builder_build(NULL, &c));
    cxla_builder_destroy(NULL);
    cxla_xla_computation_free(NULL);
}

/* A sub-computation used twice (and through another computation) is copied once; the
 * original may be freed right after use. */
static void test_sub_computations(void) {
    cxla_xla_computation *add = scalar_comp(CXLA_F32, cxla_add, "add");
    /* inner: reduce of a vector with |add|. */
    cxla_builder *ib = new_builder("inner");
    cxla_op v = cxla_parameter(ib, 0, &SHAPE(CXLA_F32, 4), "v");
    cxla_reduce(v, cxla_zero(ib, CXLA_F32), add, I64S(0), 1);
    cxla_xla_computation *inner = finish(ib);

    cxla_builder *b = new_builder("outer");
    cxla_op m = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2, 4), "m");
    cxla_op s1 = cxla_reduce(m, cxla_zero(b, CXLA_F32), add, I64S(1), 1); /* f32[2] */
    cxla_op s2 = cxla_reduce(s1, cxla_zero(b, CXLA_F32), add, I64S(0), 1);
    cxla_op row = cxla_reshape(cxla_slice(m, I64S(0, 0), I64S(1, 4), NULL, 2), I64S(4), 1);
    cxla_op s3 = cxla_call(b, inner, &row, 1);
    cxla_xla_computation_free(inner);
    cxla_xla_computation_free(add);
    cxla_add(s2, s3);
    cxla_xla_computation *c = finish(b);
    const cxla_module *mod = cxla_xla_computation_module(c);
    CHECK_EQ_I64(mod->comp_count, 3); /* add, inner, outer */
    CHECK(mod->entry == mod->comps[mod->comp_count - 1]);
    expect_run(c, ARGS("f32[2,4] { {1, 2, 3, 4}, {5, 6, 7, 8} }"), "f32[] 46", NULL);
    cxla_xla_computation_free(c);

    /* A NULL computation and a computation of the wrong signature. */
    b = new_builder("nullcomp");
    v = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 4), "v");
    cxla_reduce(v, cxla_zero(b, CXLA_F32), NULL, I64S(0), 1);
    expect_build_error(b, "computation argument is NULL");
    cxla_xla_computation *iadd = scalar_comp(CXLA_S32, cxla_add, "iadd");
    b = new_builder("wrongsig");
    v = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 4), "v");
    cxla_reduce(v, cxla_zero(b, CXLA_F32), iadd, I64S(0), 1);
    expect_build_error(b, "Reduce");
    cxla_xla_computation_free(iadd);
}

/* The text of a built computation parses and runs (the run helper checks that for every
 * test); here, the computations appear callee first with unique names. */
static void test_text_names_unique(void) {
    cxla_xla_computation *add = scalar_comp(CXLA_F32, cxla_add, "main");
    cxla_builder *b = new_builder("main"); /* same name as the reducer */
    cxla_op v = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 3), "v");
    cxla_reduce(v, cxla_zero(b, CXLA_F32), add, I64S(0), 1);
    cxla_xla_computation_free(add);
    cxla_xla_computation *c = finish(b);
    char *text = hlo_text(c);
    CHECK(text && strstr(text, "ENTRY main "));
    CHECK(text && strstr(text, "to_apply=main."));
    free(text);
    expect_run(c, ARGS("f32[3] {1, 2, 3.5}"), "f32[] 6.5", NULL);
    cxla_xla_computation_free(c);
}

TEST_MAIN(TEST(test_axpy_runs), TEST(test_sticky_errors), TEST(test_error_names_operation),
          TEST(test_parameters), TEST(test_foreign_and_zero_ops), TEST(test_build_rules),
          TEST(test_sub_computations), TEST(test_text_names_unique))
