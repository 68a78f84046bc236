/* Mixed floating-point precision in the interpreter: modules the verifier accepts (as
 * XLA's does with allow_mixed_precision) where an elementwise operation, broadcast, pad,
 * concatenate, select or clamp reads floats of another precision than its result's. The
 * driver converts those operands to the result's type (the widest float operand's for a
 * comparison) before the handler runs; the results here are worked out by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

static cxla_literal *lit(const char *text) {
    cxla_literal *l = NULL;
    CHECK_OK(cxla_literal_parse(text, (size_t)-1, NULL, &l));
    return l;
}

/* Runs |text| on |args| (literal texts) and compares the result with |want|. */
static void run_expect(const char *text, const char *const *args, int n, const char *want) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "t.hlo", &m));
    if (m) CHECK_OK(cxla_verify_module(m));
    cxla_literal *in[4] = {NULL}, *r = NULL, *w = lit(want);
    for (int i = 0; i < n; i++) in[i] = lit(args[i]);
    if (m && w) {
        CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)in, n, &r));
        if (r) {
            cxla_status s = cxla_literal_compare(r, w, NULL);
            if (s) {
                char *got = cxla_literal_to_string(r, CXLA_LITERAL_PRINT_SHAPE);
                CHECK_MSG(false, "%s (got %s)", cxla_status_message(s), got ? got : "?");
                free(got);
                cxla_status_free(s);
            }
        }
    }
    for (int i = 0; i < n; i++) cxla_literal_free(in[i]);
    cxla_literal_free(r);
    cxla_literal_free(w);
    cxla_module_destroy(m);
}

static void test_elementwise_and_data_movement(void) {
    /* bf16 2.0 broadcast and padded into f32, an f32 + bf16 add. */
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  a = f32[3] parameter(0)\n"
                       "  b = bf16[3] parameter(1)\n"
                       "  c = bf16[] parameter(2)\n"
                       "  s = f32[3] add(a, b)\n"
                       "  bc = f32[3] broadcast(c), dimensions={}\n"
                       "  m = f32[3] multiply(s, bc)\n"
                       "  p = f32[5] pad(m, c), padding=1_1\n"
                       "  k = f32[6] concatenate(p, bf16[1] reshape(c)), dimensions={0}\n"
                       "  ROOT r = f32[6] clamp(bf16[] constant(0), k, f16[] constant(8))\n"
                       "}\n";
    const char *args[] = {"f32[3] {1, 2, 3}", "bf16[3] {0.5, 1, 1.5}", "bf16[] 2"};
    run_expect(text, args, 3, "f32[6] {2, 3, 6, 8, 2, 2}");
}

static void test_result_precision_and_compare(void) {
    /* The f32 operand is converted to the bf16 result's type first: 1 + 2^-9 becomes 1,
     * 1.001 becomes 1. A comparison converts to the widest float operand instead: f32
     * 1.001 > bf16 1. */
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  a = f32[2] parameter(0)\n"
                       "  b = bf16[2] parameter(1)\n"
                       "  s = bf16[2] add(a, b)\n"
                       "  g = pred[2] compare(a, b), direction=GT\n"
                       "  ROOT t = (bf16[2], pred[2]) tuple(s, g)\n"
                       "}\n";
    const char *args[] = {"f32[2] {1.001953125, 1.001}", "bf16[2] {0, 1}"};
    run_expect(text, args, 2, "(bf16[2], pred[2]) ({1, 2}, {1, 1})");
}

/* Many operands: a concatenate of ten, nine of them bf16, into f32. */
static void test_many_operands(void) {
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  a = f32[1] parameter(0)\n"
                       "  b = bf16[1] parameter(1)\n"
                       "  ROOT c = f32[10] concatenate(b, b, b, b, b, b, b, b, b, a), "
                       "dimensions={0}\n"
                       "}\n";
    const char *args[] = {"f32[1] {1.001}", "bf16[1] {0.5}"};
    run_expect(text, args, 2, "f32[10] {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.001}");
}

TEST_MAIN(TEST(test_elementwise_and_data_movement), TEST(test_result_precision_and_compare),
          TEST(test_many_operands))
