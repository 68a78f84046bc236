/* custom-call in the interpreter (src/interp/interp_custom_call.c): registered targets of
 * each API version, targets found with dlsym among this program's exported symbols (the
 * test is linked with ENABLE_EXPORTS), failures, missing targets, tuple operands and
 * results, layouts, opaque data, operand aliasing and the built-in targets. */
#include <stdlib.h>

#include "cxla/custom_call.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

/* Parses and verifies |text|, runs it on literals given as text and returns the result
 * (NULL on error: |out_status| gets the error, or the check fails when NULL). */
static cxla_literal *run_text(const char *text, const char *const *args, int n,
                              cxla_status *out_status) {
    cxla_module *m = NULL;
    cxla_literal *lits[8] = {NULL}, *result = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "t.hlo", &m);
    if (!s) s = cxla_verify_module(m);
    for (int i = 0; i < n && !s; i++) s = cxla_literal_parse(args[i], (size_t)-1, NULL, &lits[i]);
    if (!s) s = interp_run_module(m, NULL, (const cxla_literal *const *)lits, n, &result);
    for (int i = 0; i < n; i++) cxla_literal_free(lits[i]);
    cxla_module_destroy(m);
    if (out_status)
        *out_status = s;
    else
        CHECK_OK(s);
    return result;
}

/* Runs and compares with |expected| (literal text with shape). */
static void expect_result(const char *text, const char *const *args, int n, const char *expected) {
    cxla_literal *r = run_text(text, args, n, NULL), *e = NULL;
    CHECK_OK(cxla_literal_parse(expected, (size_t)-1, NULL, &e));
    if (r && e) CHECK_OK(cxla_literal_compare(r, e, NULL));
    cxla_literal_free(r);
    cxla_literal_free(e);
}

/* Runs and returns the error message (a static copy), checking that it fails. */
static const char *expect_error(const char *text, const char *const *args, int n) {
    cxla_status s = NULL;
    cxla_literal *r = run_text(text, args, n, &s);
    cxla_literal_free(r);
    return CHECK_ERROR(s);
}

/* ---- targets --------------------------------------------------------------------------- */

/* out = in0 + in1 (f32[3]), the original signature. */
static void add3(void *out, const void **in) {
    const float *a = in[0], *b = in[1];
    float *o = out;
    for (int i = 0; i < 3; i++) o[i] = a[i] + b[i];
}

/* Exported for dlsym (no 'static'): out = 2 * in0 (f32[4]). */
void cxla_test_exported_double(void *out, const void **in);
void cxla_test_exported_double(void *out, const void **in) {
    const float *a = in[0];
    float *o = out;
    for (int i = 0; i < 4; i++) o[i] = 2 * a[i];
}

/* Exported, status-returning: fails when in0[0] < 0. */
void cxla_test_exported_checked(void *out, const void **in, cxla_custom_call_status *status);
void cxla_test_exported_checked(void *out, const void **in, cxla_custom_call_status *status) {
    const float *a = in[0];
    if (a[0] < 0) {
        cxla_custom_call_status_set_failure(status, "negative input");
        return;
    }
    *(float *)out = a[0];
}

static void fail_always(void *out, const void **in, cxla_custom_call_status *status) {
    cxla_custom_call_status_set_failure(status, "first message");
    cxla_custom_call_status_set_failure(status, "the input is bad");
}

static void fail_then_recover(void *out, const void **in, cxla_custom_call_status *status) {
    cxla_custom_call_status_set_failure(status, "transient");
    cxla_custom_call_status_set_success(status);
    *(int32_t *)out = 5;
}

/* Writes the opaque bytes' length and values into an s32[8] result. */
static void echo_opaque(void *out, const void **in, const char *opaque, size_t opaque_len,
                        cxla_custom_call_status *status) {
    int32_t *o = out;
    o[0] = (int32_t)opaque_len;
    for (size_t i = 0; i < opaque_len && i < 7; i++) o[i + 1] = (unsigned char)opaque[i];
}

/* Tuple result (f32[2], s32[]) from a tuple operand (f32[2], s32[]) and an s32[]:
 * {x * 10, n + m}. in[] is flattened: x, n, m. */
static void tuple_io(void *out, const void **in) {
    void **outs = out;
    const float *x = in[0];
    const int32_t *n = in[1], *m = in[2];
    float *y = outs[0];
    int32_t *k = outs[1];
    y[0] = x[0] * 10;
    y[1] = x[1] * 10;
    *k = *n + *m;
}

/* f32[2,3]: writes in[0]'s memory order into the result's memory order. */
static void copy_memory(void *out, const void **in) {
    memcpy(out, in[0], 6 * sizeof(float));
}

/* Records the memory order it sees: out (s32[6] row-major) = in0's raw order as ints. */
static void dump_memory(void *out, const void **in) {
    const float *a = in[0];
    int32_t *o = out;
    for (int i = 0; i < 6; i++) o[i] = (int32_t)a[i];
}

/* Adds 1 in place: reads only |out| (aliased with operand 0). */
static void increment_in_place(void *out, const void **in) {
    float *o = out;
    for (int i = 0; i < 3; i++) o[i] += 1;
    (void)in;
}

static void write_seven(void *out, const void **in) {
    *(int32_t *)out = 7;
}
static void write_eight(void *out, const void **in) {
    *(int32_t *)out = 8;
}

/* ---- tests ------------------------------------------------------------------------------- */

static const char add_module[] =
    "HloModule m\n"
    "ENTRY main {\n"
    "  a = f32[3] parameter(0)\n"
    "  b = f32[3] parameter(1)\n"
    "  ROOT c = f32[3] custom-call(a, b), custom_call_target=\"add3\"\n"
    "}\n";

static void test_registered_original(void) {
    CHECK_OK(cxla_custom_call_register("add3", (cxla_custom_call_fn)add3,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    const char *args[] = {"f32[3] {1, 2, 3}", "f32[3] {10, 20, -30.5}"};
    expect_result(add_module, args, 2, "f32[3] {11, 22, -27.5}");
    /* api_version=API_VERSION_ORIGINAL written out is the same. */
    const char *explicit_version =
        "HloModule m\n"
        "ENTRY main {\n"
        "  a = f32[3] parameter(0)\n"
        "  b = f32[3] parameter(1)\n"
        "  ROOT c = f32[3] custom-call(a, b), custom_call_target=\"add3\", "
        "api_version=API_VERSION_ORIGINAL\n"
        "}\n";
    expect_result(explicit_version, args, 2, "f32[3] {11, 22, -27.5}");
    /* Called as status-returning: a registration mismatch. */
    const char *mismatch = "HloModule m\n"
                           "ENTRY main {\n"
                           "  a = f32[3] parameter(0)\n"
                           "  b = f32[3] parameter(1)\n"
                           "  ROOT c = f32[3] custom-call(a, b), custom_call_target=\"add3\", "
                           "api_version=API_VERSION_STATUS_RETURNING\n"
                           "}\n";
    const char *msg = expect_error(mismatch, args, 2);
    CHECK(strstr(msg, "registered as API_VERSION_ORIGINAL") != NULL);
    CHECK(strstr(msg, "c (custom-call") != NULL);
    /* Unregistered: now found nowhere. */
    CHECK_OK(cxla_custom_call_register("add3", NULL, CXLA_CUSTOM_CALL_API_ORIGINAL));
    msg = expect_error(add_module, args, 2);
    CHECK(strstr(msg, "target 'add3'") != NULL);
}

static void test_register_replaces(void) {
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  ROOT c = s32[] custom-call(), custom_call_target=\"seven\"\n"
                       "}\n";
    CHECK_OK(cxla_custom_call_register("seven", (cxla_custom_call_fn)write_seven,
                                       CXLA_CUSTOM_CALL_API_UNSPECIFIED));
    expect_result(text, NULL, 0, "s32[] 7");
    CHECK_OK(cxla_custom_call_register("seven", (cxla_custom_call_fn)write_eight,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    expect_result(text, NULL, 0, "s32[] 8");
    CHECK_OK(cxla_custom_call_register("seven", NULL, CXLA_CUSTOM_CALL_API_ORIGINAL));
}

static void test_register_errors(void) {
    const char *msg = CHECK_ERROR(
        cxla_custom_call_register("", (cxla_custom_call_fn)add3, CXLA_CUSTOM_CALL_API_ORIGINAL));
    CHECK(strstr(msg, "needs a name") != NULL);
    CHECK_ERROR(
        cxla_custom_call_register(NULL, (cxla_custom_call_fn)add3, CXLA_CUSTOM_CALL_API_ORIGINAL));
    msg = CHECK_ERROR(
        cxla_custom_call_register("x", (cxla_custom_call_fn)add3, CXLA_CUSTOM_CALL_API_TYPED_FFI));
    CHECK(strstr(msg, "typed FFI") != NULL);
    msg = CHECK_ERROR(
        cxla_custom_call_register("x", (cxla_custom_call_fn)add3, (cxla_custom_call_api_version)9));
    CHECK(strstr(msg, "unknown api_version") != NULL);
}

static void test_dlsym(void) {
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  a = f32[4] parameter(0)\n"
                       "  ROOT c = f32[4] custom-call(a), "
                       "custom_call_target=\"cxla_test_exported_double\"\n"
                       "}\n";
    const char *args[] = {"f32[4] {1, -2, 0.5, inf}"};
    expect_result(text, args, 1, "f32[4] {2, -4, 1, inf}");
}

static void test_status_returning(void) {
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  a = f32[2] parameter(0)\n"
                       "  ROOT checked = f32[] custom-call(a), "
                       "custom_call_target=\"cxla_test_exported_checked\", "
                       "api_version=API_VERSION_STATUS_RETURNING\n"
                       "}\n";
    const char *ok[] = {"f32[2] {3, 4}"};
    expect_result(text, ok, 1, "f32[] 3");
    const char *bad[] = {"f32[2] {-3, 4}"};
    const char *msg = expect_error(text, bad, 1);
    CHECK(strstr(msg, "custom-call target 'cxla_test_exported_checked' failed: negative input") !=
          NULL);
    CHECK(strstr(msg, "checked (custom-call, line 4)") != NULL);

    CHECK_OK(cxla_custom_call_register("fail_always", (cxla_custom_call_fn)fail_always,
                                       CXLA_CUSTOM_CALL_API_STATUS_RETURNING));
    const char *fail = "HloModule m\n"
                       "ENTRY main {\n"
                       "  ROOT f = s32[] custom-call(), custom_call_target=\"fail_always\", "
                       "api_version=API_VERSION_STATUS_RETURNING\n"
                       "}\n";
    msg = expect_error(fail, NULL, 0);
    CHECK(strstr(msg, "failed: the input is bad") != NULL); /* the last message wins */
    CHECK(strstr(msg, "first message") == NULL);

    CHECK_OK(cxla_custom_call_register("recover", (cxla_custom_call_fn)fail_then_recover,
                                       CXLA_CUSTOM_CALL_API_STATUS_RETURNING));
    const char *recover = "HloModule m\n"
                          "ENTRY main {\n"
                          "  ROOT f = s32[] custom-call(), custom_call_target=\"recover\", "
                          "api_version=API_VERSION_STATUS_RETURNING\n"
                          "}\n";
    expect_result(recover, NULL, 0, "s32[] 5");
}

static void test_unified_opaque(void) {
    CHECK_OK(cxla_custom_call_register("echo_opaque", (cxla_custom_call_fn)echo_opaque,
                                       CXLA_CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED));
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  ROOT e = s32[8] custom-call(), custom_call_target=\"echo_opaque\", "
                       "api_version=API_VERSION_STATUS_RETURNING_UNIFIED, "
                       "backend_config=\"a\\\"b\\n\\001z\"\n"
                       "}\n";
    /* a " b \n \001 z: six bytes. */
    expect_result(text, NULL, 0, "s32[8] {6, 97, 34, 98, 10, 1, 122, 0}");
    const char *none = "HloModule m\n"
                       "ENTRY main {\n"
                       "  ROOT e = s32[8] custom-call(), custom_call_target=\"echo_opaque\", "
                       "api_version=API_VERSION_STATUS_RETURNING_UNIFIED\n"
                       "}\n";
    expect_result(none, NULL, 0, "s32[8] {0, 0, 0, 0, 0, 0, 0, 0}");
}

static void test_missing_target(void) {
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  a = f32[2] parameter(0)\n"
                       "  ROOT nothing = f32[2] custom-call(a), "
                       "custom_call_target=\"no_such_function_anywhere\"\n"
                       "}\n";
    const char *args[] = {"f32[2] {1, 2}"};
    cxla_status s = NULL;
    cxla_literal *r = run_text(text, args, 1, &s);
    CHECK(r == NULL);
    CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_NOT_FOUND);
    const char *msg = CHECK_ERROR(s);
    CHECK(strstr(msg, "'no_such_function_anywhere'") != NULL);
    CHECK(strstr(msg, "nothing (custom-call, line 4)") != NULL);
}

static void test_typed_ffi_unsupported(void) {
    const char *text =
        "HloModule m\n"
        "ENTRY main {\n"
        "  ROOT f = s32[] custom-call(), custom_call_target=\"cxla_test_exported_double\", "
        "api_version=API_VERSION_TYPED_FFI\n"
        "}\n";
    const char *msg = expect_error(text, NULL, 0);
    CHECK(strstr(msg, "typed FFI") != NULL);
    CHECK(strstr(msg, "f (custom-call") != NULL);
}

static void test_tuples(void) {
    CHECK_OK(cxla_custom_call_register("tuple_io", (cxla_custom_call_fn)tuple_io,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    const char *text =
        "HloModule m\n"
        "ENTRY main {\n"
        "  p = (f32[2], s32[]) parameter(0)\n"
        "  m = s32[] parameter(1)\n"
        "  ROOT t = (f32[2], s32[]) custom-call(p, m), custom_call_target=\"tuple_io\"\n"
        "}\n";
    const char *args[] = {"(f32[2], s32[]) ({1.5, -2}, 40)", "s32[] 2"};
    expect_result(text, args, 2, "(f32[2], s32[]) ({15, -20}, 42)");
}

static void test_layouts(void) {
    CHECK_OK(cxla_custom_call_register("dump_memory", (cxla_custom_call_fn)dump_memory,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    CHECK_OK(cxla_custom_call_register("copy_memory", (cxla_custom_call_fn)copy_memory,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    const char *args[] = {"f32[2,3] {{1, 2, 3}, {4, 5, 6}}"};
    /* Row-major by default. */
    const char *row = "HloModule m\n"
                      "ENTRY main {\n"
                      "  a = f32[2,3] parameter(0)\n"
                      "  ROOT d = s32[6] custom-call(a), custom_call_target=\"dump_memory\"\n"
                      "}\n";
    expect_result(row, args, 1, "s32[6] {1, 2, 3, 4, 5, 6}");
    /* operand_layout_constraints asks for column-major. */
    const char *col = "HloModule m\n"
                      "ENTRY main {\n"
                      "  a = f32[2,3] parameter(0)\n"
                      "  ROOT d = s32[6]{0} custom-call(a), custom_call_target=\"dump_memory\", "
                      "operand_layout_constraints={f32[2,3]{0,1}}\n"
                      "}\n";
    expect_result(col, args, 1, "s32[6] {1, 4, 2, 5, 3, 6}");
    /* The operand's own layout counts when there is no constraint. */
    const char *own = "HloModule m\n"
                      "ENTRY main {\n"
                      "  a = f32[2,3] parameter(0)\n"
                      "  b = f32[2,3]{0,1} copy(a)\n"
                      "  ROOT d = s32[6] custom-call(b), custom_call_target=\"dump_memory\"\n"
                      "}\n";
    expect_result(own, args, 1, "s32[6] {1, 4, 2, 5, 3, 6}");
    /* The result is read in its declared layout: copying row-major memory into a
     * column-major result transposes the memory order, not the values' positions. */
    const char *result_layout =
        "HloModule m\n"
        "ENTRY main {\n"
        "  a = f32[2,3] parameter(0)\n"
        "  ROOT d = f32[2,3]{0,1} custom-call(a), custom_call_target=\"copy_memory\"\n"
        "}\n";
    /* memory 1 2 3 4 5 6 read column-major: (0,0)=1 (1,0)=2 (0,1)=3 (1,1)=4 ... */
    expect_result(result_layout, args, 1, "f32[2,3] {{1, 3, 5}, {2, 4, 6}}");
}

static void test_aliasing(void) {
    CHECK_OK(cxla_custom_call_register("increment", (cxla_custom_call_fn)increment_in_place,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  a = f32[3] parameter(0)\n"
                       "  ROOT i = f32[3] custom-call(a), custom_call_target=\"increment\", "
                       "output_to_operand_aliasing={{}: (0, {})}\n"
                       "}\n";
    const char *args[] = {"f32[3] {1, 2, 3}"};
    expect_result(text, args, 1, "f32[3] {2, 3, 4}");
    /* Without the aliasing the output starts zero-filled. */
    const char *plain = "HloModule m\n"
                        "ENTRY main {\n"
                        "  a = f32[3] parameter(0)\n"
                        "  ROOT i = f32[3] custom-call(a), custom_call_target=\"increment\"\n"
                        "}\n";
    expect_result(plain, args, 1, "f32[3] {1, 1, 1}");
    /* The parameter itself is not changed: it is used again after the call. */
    const char *reuse = "HloModule m\n"
                        "ENTRY main {\n"
                        "  a = f32[3] parameter(0)\n"
                        "  i = f32[3] custom-call(a), custom_call_target=\"increment\", "
                        "output_to_operand_aliasing={{}: (0, {})}\n"
                        "  ROOT s = f32[3] add(i, a)\n"
                        "}\n";
    expect_result(reuse, args, 1, "f32[3] {3, 5, 7}");
}

static void test_builtin_identities(void) {
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  a = f32[2] parameter(0)\n"
                       "  s = f32[2] custom-call(a), custom_call_target=\"Sharding\", "
                       "sharding={replicated}\n"
                       "  f = f32[2] custom-call(s), custom_call_target=\"SPMDFullToShardShape\"\n"
                       "  h = f32[2] custom-call(f), custom_call_target=\"MoveToHost\"\n"
                       "  d = f32[2] custom-call(h), custom_call_target=\"MoveToDevice\"\n"
                       "  g = f32[2] custom-call(d), custom_call_target=\"SPMDShardToFullShape\"\n"
                       "  ROOT p = f32[2] custom-call(g), "
                       "custom_call_target=\"annotate_device_placement\"\n"
                       "}\n";
    const char *args[] = {"f32[2] {1.5, -0}"};
    expect_result(text, args, 1, "f32[2] {1.5, -0}");
    const char *several = "HloModule m\n"
                          "ENTRY main {\n"
                          "  a = f32[2] parameter(0)\n"
                          "  b = s32[] parameter(1)\n"
                          "  ROOT t = (f32[2], s32[]) custom-call(a, b), "
                          "custom_call_target=\"xla.sdy.GlobalToLocalShape\"\n"
                          "}\n";
    const char *args2[] = {"f32[2] {1, 2}", "s32[] 3"};
    expect_result(several, args2, 2, "(f32[2], s32[]) ({1, 2}, 3)");
    const char *one_in_tuple = "HloModule m\n"
                               "ENTRY main {\n"
                               "  a = f32[2] parameter(0)\n"
                               "  ROOT t = (f32[2]) custom-call(a), "
                               "custom_call_target=\"xla.sdy.LocalToGlobalShape\"\n"
                               "}\n";
    expect_result(one_in_tuple, args2, 1, "(f32[2]) ({1, 2})");
    const char *sharded = "HloModule m\n"
                          "ENTRY main {\n"
                          "  a = f32[4] parameter(0)\n"
                          "  ROOT f = f32[2] custom-call(a), "
                          "custom_call_target=\"SPMDFullToShardShape\"\n"
                          "}\n";
    const char *args3[] = {"f32[4] {1, 2, 3, 4}"};
    const char *msg = expect_error(sharded, args3, 1);
    CHECK(strstr(msg, "several devices") != NULL);
    CHECK(strstr(msg, "f (custom-call") != NULL);
    const char *alloc = "HloModule m\n"
                        "ENTRY main {\n"
                        "  ROOT b = (f32[2]{0}, s32[2,2]{0,1}) custom-call(), "
                        "custom_call_target=\"AllocateBuffer\"\n"
                        "}\n";
    expect_result(alloc, NULL, 0, "(f32[2], s32[2,2]) ({0, 0}, {{0, 0}, {0, 0}})");
}

static void test_builtin_topk(void) {
    const char *text =
        "HloModule m\n"
        "gt {\n"
        "  x = f32[] parameter(0)\n"
        "  y = f32[] parameter(1)\n"
        "  ROOT c = pred[] compare(x, y), direction=GT\n"
        "}\n"
        "lt {\n"
        "  x = f32[] parameter(0)\n"
        "  y = f32[] parameter(1)\n"
        "  ROOT c = pred[] compare(x, y), direction=LT\n"
        "}\n"
        "ENTRY main {\n"
        "  a = f32[2,4] parameter(0)\n"
        "  big = (f32[2,2], s32[2,2]) custom-call(a), custom_call_target=\"TopK\", "
        "to_apply=gt\n"
        "  small = (f32[2,3], s32[2,3]) custom-call(a), custom_call_target=\"TopK\", "
        "to_apply=lt\n"
        "  b0 = f32[2,2] get-tuple-element(big), index=0\n"
        "  b1 = s32[2,2] get-tuple-element(big), index=1\n"
        "  s0 = f32[2,3] get-tuple-element(small), index=0\n"
        "  s1 = s32[2,3] get-tuple-element(small), index=1\n"
        "  ROOT t = (f32[2,2], s32[2,2], f32[2,3], s32[2,3]) tuple(b0, b1, s0, s1)\n"
        "}\n";
    const char *args[] = {"f32[2,4] {{3, 1, 4, 1}, {-5, 9, 2, 6}}"};
    expect_result(text, args, 1,
                  "(f32[2,2], s32[2,2], f32[2,3], s32[2,3]) "
                  "({{4, 3}, {9, 6}}, {{2, 0}, {1, 3}}, {{1, 1, 3}, {-5, 2, 6}}, "
                  "{{1, 3, 0}, {0, 2, 3}})");
}

static void test_custom_call_start(void) {
    /* The async sugar runs the wrapped custom call. */
    CHECK_OK(cxla_custom_call_register("add3", (cxla_custom_call_fn)add3,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  a = f32[3] parameter(0)\n"
                       "  b = f32[3] parameter(1)\n"
                       "  s = ((f32[3], f32[3]), f32[3], u32[]) custom-call-start(a, b), "
                       "custom_call_target=\"add3\"\n"
                       "  ROOT d = f32[3] custom-call-done(s)\n"
                       "}\n";
    const char *args[] = {"f32[3] {1, 2, 3}", "f32[3] {1, 1, 1}"};
    expect_result(text, args, 2, "f32[3] {2, 3, 4}");
    CHECK_OK(cxla_custom_call_register("add3", NULL, CXLA_CUSTOM_CALL_API_ORIGINAL));
}

TEST_MAIN(TEST(test_registered_original), TEST(test_register_replaces), TEST(test_register_errors),
          TEST(test_dlsym), TEST(test_status_returning), TEST(test_unified_opaque),
          TEST(test_missing_target), TEST(test_typed_ffi_unsupported), TEST(test_tuples),
          TEST(test_layouts), TEST(test_aliasing), TEST(test_builtin_identities),
          TEST(test_builtin_topk), TEST(test_custom_call_start))
