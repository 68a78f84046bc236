/* The public HLO text API (cxla/hlo.h) used as an embedding program would, through the
 * public headers only: parse, verify, print, warnings, errors, then compile and run the
 * parsed module through the runtime. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

static const char *kAdd = "HloModule add_one\n"
                          "\n"
                          "ENTRY main {\n"
                          "  x = f32[3] parameter(0)\n"
                          "  one = f32[] constant(1)\n"
                          "  ones = f32[3] broadcast(one), dimensions={}\n"
                          "  ROOT y = f32[3] add(x, ones)\n"
                          "}\n";

static void test_parse_print_verify(void) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(kAdd, (size_t)-1, "add.hlo", &m));
    if (!m) return;
    CHECK_EQ_STR(cxla_module_name(m), "add_one");
    CHECK_EQ_STR(cxla_module_warnings(m), "");
    CHECK_OK(cxla_hlo_verify(m));
    char *text = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT);
    CHECK(text != NULL);
    /* The printed text reads back to a module that prints the same. */
    cxla_module *back = NULL;
    if (text) CHECK_OK(cxla_hlo_parse(text, strlen(text), NULL, &back));
    char *again = back ? cxla_hlo_print(back, CXLA_HLO_STYLE_SHORT) : NULL;
    if (text && again) CHECK_EQ_STR(again, text);
    char *lng = cxla_hlo_print(m, CXLA_HLO_STYLE_LONG);
    CHECK(lng && strstr(lng, "%y = f32[3]{0} add(f32[3]{0} %x, f32[3]{0} %ones)"));
    free(lng);
    free(again);
    free(text);
    cxla_module_destroy(back);
    cxla_module_destroy(m);
    cxla_module_destroy(NULL);
}

static void test_errors(void) {
    cxla_module *m = NULL;
    const char *msg = CHECK_ERROR(cxla_hlo_parse(
        "HloModule m\nENTRY e {\n  x = f32[ parameter(0)\n}", (size_t)-1, "bad.hlo", &m));
    CHECK(m == NULL);
    CHECK_MSG(strstr(msg, "bad.hlo:3:12: "), "no file, line and column in '%s'", msg);
    /* Parsed, but the declared shape is wrong: the verifier says so. */
    CHECK_OK(cxla_hlo_parse("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n"
                            "  ROOT y = f32[3] negate(x)\n}",
                            (size_t)-1, NULL, &m));
    msg = CHECK_ERROR(cxla_hlo_verify(m));
    CHECK_MSG(strstr(msg, "negate") && strstr(msg, "f32[2]"), "message: '%s'", msg);
    cxla_module_destroy(m);
    msg = CHECK_ERROR(cxla_hlo_parse_file("/nonexistent/x.hlo", &m));
    CHECK_MSG(strstr(msg, "/nonexistent/x.hlo"), "message: '%s'", msg);
}

static void test_unknown_attribute_warns(void) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n"
                            "  ROOT y = f32[2] negate(x), brand_new_attribute=7\n}",
                            (size_t)-1, NULL, &m));
    if (!m) return;
    CHECK_MSG(strstr(cxla_module_warnings(m), "brand_new_attribute"), "warnings: '%s'",
              cxla_module_warnings(m));
    cxla_module_destroy(m);
}

static void test_file_and_compile(void) {
    char path[] = "/tmp/cxla_hlo_public_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    FILE *f = fdopen(fd, "w");
    fputs(kAdd, f);
    fclose(f);
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse_file(path, &m));
    remove(path);
    if (!m) return;
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(NULL, &c));
    cxla_executable *e = NULL;
    CHECK_OK(cxla_client_compile(c, m, &e)); /* takes the module */
    cxla_literal *x = NULL, *y = NULL;
    CHECK_OK(cxla_literal_parse("f32[3] {1, -2, 0.5}", (size_t)-1, NULL, &x));
    const cxla_literal *args[] = {x};
    if (e && x) CHECK_OK(cxla_executable_run(e, args, 1, &y));
    char *out = y ? cxla_literal_to_string(y, CXLA_LITERAL_PRINT_DEFAULT) : NULL;
    if (out) CHECK_EQ_STR(out, "{2, -1, 1.5}");
    free(out);
    cxla_literal_free(y);
    cxla_literal_free(x);
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

/* One verb ends an object's life: the _destroy names, and the _free aliases kept for one
 * release (docs/c-api.md), both release what they are given (the sanitizer build would
 * report a leak otherwise). */
static void test_destroy_names(void) {
    cxla_literal *a = NULL, *b = NULL;
    CHECK_OK(cxla_literal_parse("f32[2] {1, 2}", (size_t)-1, NULL, &a));
    CHECK_OK(cxla_literal_clone(a, &b));
    cxla_literal_destroy(a);
    cxla_literal_free(b);
    cxla_literal_destroy(NULL);
    cxla_shape *s = NULL, *t = NULL;
    int64_t dims[1] = {3};
    CHECK_OK(cxla_shape_create_array(CXLA_F32, 1, dims, &s));
    CHECK_OK(cxla_shape_clone(s, &t));
    cxla_shape_destroy(s);
    cxla_shape_free(t);
    cxla_shape_destroy(NULL);
    cxla_status e = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "x");
    cxla_status f = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "y");
    CHECK(e && f);
    cxla_status_destroy(e);
    cxla_status_free(f);
    cxla_status_destroy(NULL);
    cxla_xla_computation_destroy(NULL);
    cxla_xla_computation_free(NULL);
}

TEST_MAIN(TEST(test_destroy_names), TEST(test_parse_print_verify), TEST(test_errors),
          TEST(test_unknown_attribute_warns), TEST(test_file_and_compile))
