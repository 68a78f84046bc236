/* The services of src/exec that backends share: the custom-call registry and how a
 * target resolves (registry, built-ins, errors), the instruction attributes of the
 * calling convention (opaque bytes, output_to_operand_aliasing), calls by signature, and
 * the runner of modules on several devices that the runtime installs. The interpreter's
 * end-to-end custom-call tests are tests/interp/test_interp_custom_call.c. */
#include <inttypes.h>
#include <stdlib.h>

#include "exec/custom_call.h"
#include "exec/exec.h"
#include "harness.h"

/* The root of the entry of |text| (parsed; |*out_m| to destroy). */
static const cxla_instr *root_of(const char *text, cxla_module **out_m) {
    *out_m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "t.hlo", out_m));
    return *out_m ? (*out_m)->entry->root : NULL;
}

static const char *with_call(const char *attrs, char *buf, size_t size) {
    snprintf(buf, size,
             "HloModule m\nENTRY main {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
             "  ROOT c = (f32[2], f32[2]) custom-call(a, b), %s\n}\n",
             attrs);
    return buf;
}

static int calls;
static void original(void *out, const void **in) {
    calls++;
    *(float *)out = *(const float *)in[0] + 1;
}
static void unified(void *out, const void **in, const char *opaque, size_t opaque_len,
                    cxla_custom_call_status *status) {
    calls++;
    if (opaque_len != 3 || memcmp(opaque, "a\0b", 3) != 0)
        cxla_custom_call_status_set_failure(status, "unexpected opaque bytes");
}

static void test_resolve(void) {
    char buf[512];
    cxla_module *m = NULL;
    const char *target = NULL;
    cxla_custom_call_fn fn = NULL;
    cxla_custom_call_api_version api;
    exec_builtin_target builtin;
    CHECK_OK(cxla_custom_call_register("exec_t", (cxla_custom_call_fn)original,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    const cxla_instr *in = root_of(with_call("custom_call_target=\"exec_t\"", buf, sizeof buf), &m);
    CHECK_OK(exec_custom_call_resolve(in, &target, &fn, &api, &builtin));
    CHECK_EQ_STR(target, "exec_t");
    CHECK(fn == (cxla_custom_call_fn)original);
    CHECK_EQ_I64(api, CXLA_CUSTOM_CALL_API_ORIGINAL);
    CHECK_EQ_I64(builtin, EXEC_BUILTIN_NONE);
    cxla_module_destroy(m);
    /* Registered under another signature than the instruction's. */
    in = root_of(with_call("custom_call_target=\"exec_t\", api_version=API_VERSION_STATUS_"
                           "RETURNING",
                           buf, sizeof buf),
                 &m);
    CHECK(strstr(CHECK_ERROR(exec_custom_call_resolve(in, &target, &fn, &api, &builtin)),
                 "registered as API_VERSION_ORIGINAL"));
    cxla_module_destroy(m);
    CHECK_OK(cxla_custom_call_register("exec_t", NULL, CXLA_CUSTOM_CALL_API_ORIGINAL));
    CHECK(!exec_custom_call_lookup("exec_t", &fn, &api));
    /* Removed: now found nowhere, and the message names the instruction. */
    in = root_of(with_call("custom_call_target=\"exec_t\"", buf, sizeof buf), &m);
    const char *msg = CHECK_ERROR(exec_custom_call_resolve(in, &target, &fn, &api, &builtin));
    CHECK(strstr(msg, "'exec_t' is not registered") && strstr(msg, "c (custom-call"));
    cxla_module_destroy(m);
    /* Built-ins. */
    in = root_of(with_call("custom_call_target=\"Sharding\"", buf, sizeof buf), &m);
    CHECK_OK(exec_custom_call_resolve(in, &target, &fn, &api, &builtin));
    CHECK_EQ_I64(builtin, EXEC_BUILTIN_IDENTITY);
    CHECK(fn == NULL);
    cxla_module_destroy(m);
    CHECK_EQ_I64(exec_custom_call_builtin("TopK"), EXEC_BUILTIN_TOPK);
    CHECK_EQ_I64(exec_custom_call_builtin("AllocateBuffer"), EXEC_BUILTIN_ALLOCATE);
    CHECK_EQ_I64(exec_custom_call_builtin("topk"), EXEC_BUILTIN_NONE);
    /* The typed FFI. */
    in = root_of(
        with_call("custom_call_target=\"x\", api_version=API_VERSION_TYPED_FFI", buf, sizeof buf),
        &m);
    CHECK(strstr(CHECK_ERROR(exec_custom_call_resolve(in, &target, &fn, &api, &builtin)),
                 "typed FFI"));
    cxla_module_destroy(m);
}

static void test_opaque_and_aliasing(void) {
    char buf[512];
    cxla_module *m = NULL;
    const cxla_instr *in =
        root_of(with_call("custom_call_target=\"x\", backend_config=\"a\\000b\", "
                          "output_to_operand_aliasing={{1}: (0, {}), {0}: (1, {})}",
                          buf, sizeof buf),
                &m);
    char *opaque = NULL;
    size_t len = 0;
    CHECK_OK(exec_custom_call_opaque(in, &opaque, &len));
    CHECK_EQ_I64((int64_t)len, 3);
    CHECK(opaque && memcmp(opaque, "a\0b", 3) == 0);
    CHECK_EQ_I64(exec_leaf_count(&in->shape), 2);
    int64_t alias[2];
    CHECK_OK(exec_custom_call_aliasing(in, alias, 2));
    CHECK_EQ_I64(alias[0], 1);
    CHECK_EQ_I64(alias[1], 0);
    /* Calls by signature. */
    cxla_custom_call_status st = {0};
    float x = 2, y = 0;
    const void *ins[1] = {&x};
    calls = 0;
    exec_custom_call_invoke((cxla_custom_call_fn)original, CXLA_CUSTOM_CALL_API_ORIGINAL, &y, ins,
                            NULL, 0, &st, NULL);
    CHECK(y == 3 && !st.failed);
    exec_custom_call_invoke((cxla_custom_call_fn)unified,
                            CXLA_CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED, &y, ins, opaque, len,
                            &st, NULL);
    CHECK(!st.failed);
    exec_custom_call_invoke((cxla_custom_call_fn)unified,
                            CXLA_CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED, &y, ins, "zz", 2, &st,
                            NULL);
    CHECK(st.failed && st.message && strcmp(st.message, "unexpected opaque bytes") == 0);
    CHECK_EQ_I64(calls, 3);
    exec_custom_call_status_clear(&st);
    CHECK(!st.failed && !st.message);
    free(opaque);
    cxla_module_destroy(m);
    /* Malformed aliasing. */
    in = root_of(with_call("custom_call_target=\"x\", output_to_operand_aliasing={{7}: (0, {})}",
                           buf, sizeof buf),
                 &m);
    CHECK(strstr(CHECK_ERROR(exec_custom_call_aliasing(in, alias, 2)),
                 "cannot read output_to_operand_aliasing"));
    cxla_module_destroy(m);
}

static int64_t runner_devices;
static cxla_status fake_runner(const cxla_module *module, const exec_devices_options *options,
                               const cxla_literal *const *const *args, int64_t arg_count,
                               cxla_literal **out_results) {
    runner_devices = options->replica_count * options->partition_count;
    return cxla_error(CXLA_STATUS_INTERNAL, "fake runner: %" PRId64 " args", arg_count);
}

static void test_run_devices_hook(void) {
    exec_devices_options o = {.replica_count = 2, .partition_count = 3};
    cxla_literal *results[6] = {NULL};
    /* This test creates no client, so nothing installed a runner yet. */
    CHECK(strstr(CHECK_ERROR(exec_run_devices(NULL, &o, NULL, 0, results)),
                 "create a client (cxla_client_create) first"));
    exec_set_run_devices(fake_runner);
    CHECK(strstr(CHECK_ERROR(exec_run_devices(NULL, &o, NULL, 4, results)), "fake runner: 4 args"));
    CHECK_EQ_I64(runner_devices, 6);
    /* A client installs the runtime's runner, which runs each device. */
    cxla_client *client = NULL;
    CHECK_OK(cxla_client_create(NULL, &client));
    cxla_module *m = NULL;
    const char *text = "HloModule m\nENTRY main {\n  ROOT r = u32[] replica-id()\n}\n";
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "t.hlo", &m));
    CHECK_OK(cxla_verify_module(m));
    const cxla_literal *const *no_args[2] = {NULL, NULL};
    runner_devices = 0;
    o = (exec_devices_options){.replica_count = 2, .partition_count = 1};
    CHECK_OK(exec_run_devices(m, &o, no_args, 0, results));
    CHECK_EQ_I64(runner_devices, 0);
    for (int d = 0; d < 2; d++) {
        CHECK(results[d] && *(const uint32_t *)cxla_literal_data_const(results[d]) == (uint32_t)d);
        cxla_literal_free(results[d]);
    }
    cxla_module_destroy(m);
    cxla_client_destroy(client);
}

TEST_MAIN(TEST(test_resolve), TEST(test_opaque_and_aliasing), TEST(test_run_devices_hook))
