/* Row fusion's kernels (src/cpu/emit_rows.c): in the fast order, a row fusion with two row
 * reduces (softmax) asks for the next row in its second pass over a row, and one with a
 * single reduce (a row sum and a division) does not; in exact mode (CXLA_CPU_EXACT_MATH=1)
 * there is no row fusion, hence no such request. The values are the case tests' concern
 * (tests/hlo/cases/row_fusion.hlo, tests/cpu/test_reduce_order.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "harness.h"
#include "hlo/hlo.h"

static const char softmax[] =
    "HloModule softmax\n"
    "max { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] maximum(a, b) }\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b) }\n"
    "ENTRY main {\n x = f32[8,512] parameter(0)\n ninf = f32[] constant(-inf)\n"
    " m = f32[8] reduce(x, ninf), dimensions={1}, to_apply=max\n"
    " mb = f32[8,512] broadcast(m), dimensions={0}\n d = f32[8,512] subtract(x, mb)\n"
    " e = f32[8,512] exponential(d)\n zero = f32[] constant(0)\n"
    " s = f32[8] reduce(e, zero), dimensions={1}, to_apply=add\n"
    " sb = f32[8,512] broadcast(s), dimensions={0}\n ROOT r = f32[8,512] divide(e, sb)\n}\n";

static const char row_sum_divide[] =
    "HloModule normalize\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b) }\n"
    "ENTRY main {\n x = f32[8,512] parameter(0)\n zero = f32[] constant(0)\n"
    " s = f32[8] reduce(x, zero), dimensions={1}, to_apply=add\n"
    " sb = f32[8,512] broadcast(s), dimensions={0}\n ROOT r = f32[8,512] divide(x, sb)\n}\n";

/* The C source the cpu backend generates for |text| (malloc'd), or NULL. */
static char *generate(const char *text) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "rows", &m));
    if (!m) return NULL;
    cxla_strbuf source;
    cxla_strbuf_init(&source);
    cpu_compile_options co = {0};
    cxla_status s = cpu_generate(m, &co, NULL, &source, NULL);
    CHECK_OK(s);
    cxla_module_destroy(m);
    char *out = source.data && !source.failed ? strdup(source.data) : NULL;
    cxla_strbuf_free(&source);
    return out;
}

static void test_second_pass_prefetches(void) {
    unsetenv("CXLA_CPU_EXACT_MATH");
    char *c = generate(softmax);
    CHECK(c != NULL);
    /* The next row (512 elements on) of the input, in the sum's loop over blocks. */
    CHECK(c && strstr(c, "+ 512 < 4096) { CXLA_PREFETCH(&p0[") != NULL);
    free(c);
    c = generate(row_sum_divide);
    CHECK(c != NULL);
    CHECK(c && strstr(c, "CXLA_PREFETCH(&p0[") == NULL);
    free(c);
}

static void test_exact_mode_has_no_row_fusion(void) {
    setenv("CXLA_CPU_EXACT_MATH", "1", 1);
    char *c = generate(softmax);
    unsetenv("CXLA_CPU_EXACT_MATH");
    CHECK(c != NULL);
    CHECK(c && strstr(c, "CXLA_PREFETCH(&p0[") == NULL);
    free(c);
}

TEST_MAIN(TEST(test_second_pass_prefetches), TEST(test_exact_mode_has_no_row_fusion))
