/* The list of unary math functions (src/exec/math.h): each entry is found under its
 * opcode, the libm names it gives are the functions it computes with (looked up in the
 * process and compared at sample points), every unary float function of opcodes.def
 * (those with result_accuracy) is listed, and the interpreter computes what the list
 * says (the interpreter reads it; this shows an f64 run agrees with it bit for bit). */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <float.h>
#include <stdlib.h>

#include "exec/math.h"
#include "harness.h"
#include "interp/interp.h"

static const double samples[] = {0.3, -0.7, 0.0, -0.0, 2.5, 1e-9, 0.999};

typedef double (*fn64)(double);
typedef float (*fn32)(float);

static void test_table(void) {
    int64_t listed = 0;
    for (int i = 0; i < CXLA_OP_COUNT; i++) {
        cxla_opcode op = (cxla_opcode)i;
        const cxla_opcode_info *oi = cxla_opcode_get_info(op);
        const exec_math_info *m = exec_math_unary(op);
        if (oi->flags & CXLA_OPF_RESULT_ACCURACY)
            CHECK_MSG(m != NULL, "%s carries result_accuracy but is not in exec/math.h", oi->name);
        if (!m) continue;
        listed++;
        CHECK_EQ_I64(m->op, op);
        CHECK_MSG((oi->flags & CXLA_OPF_ELEMENTWISE) && oi->arity == 1, "%s is not unary",
                  oi->name);
        CHECK_MSG((m->libm_f64 == NULL) == (m->libm_f32 == NULL), "%s: libm names for one type",
                  oi->name);
        if (!m->libm_f64) {
            CHECK_MSG(strncmp(m->fn_name, "exec_math_", 10) == 0, "%s: %s", oi->name, m->fn_name);
            continue;
        }
        CHECK_EQ_STR(m->fn_name, m->libm_f64);
        void *p64 = dlsym(RTLD_DEFAULT, m->libm_f64), *p32 = dlsym(RTLD_DEFAULT, m->libm_f32);
        if (!p64 || !p32) continue; /* libm linked statically: the names are still checked */
        fn64 f;
        fn32 g;
        memcpy(&f, &p64, sizeof(f));
        memcpy(&g, &p32, sizeof(g));
        for (size_t k = 0; k < sizeof(samples) / sizeof(samples[0]); k++) {
            double x = samples[k], a = m->fn(x), b = f(x);
            CHECK_MSG(memcmp(&a, &b, sizeof(a)) == 0 || (isnan(a) && isnan(b)),
                      "%s(%g): %.17g, %s gives %.17g", oi->name, x, a, m->libm_f64, b);
            float xf = (float)x, af = (float)m->fn((double)xf), bf = g(xf);
            CHECK_MSG((isnan(af) && isnan(bf)) || af == bf ||
                          fabsf(af - bf) <= 4 * FLT_EPSILON * fabsf(af) || fabsf(af - bf) < 1e-30f,
                      "%s(%g): f32 %.9g, %s gives %.9g", oi->name, x, af, m->libm_f32, bf);
        }
    }
    CHECK_EQ_I64(listed, 30);
    CHECK(exec_math_unary(CXLA_OP_ADD) == NULL);
    CHECK(exec_math_unary(CXLA_OP_COUNT) == NULL);
    CHECK(exec_math_sign(-0.0) == 0 && signbit(exec_math_sign(-0.0)));
    CHECK(exec_math_sign(-3) == -1 && isnan(exec_math_sign(NAN)));
    CHECK(exec_math_imag(5) == 0 && !signbit(exec_math_imag(-5)));
}

/* The interpreter's f64 results are the list's functions, bit for bit. */
static void test_interpreter_agrees(void) {
    for (int i = 0; i < CXLA_OP_COUNT; i++) {
        const exec_math_info *m = exec_math_unary((cxla_opcode)i);
        if (!m || i == CXLA_OP_REAL || i == CXLA_OP_IMAG) continue; /* these give f64 too */
        char text[256];
        snprintf(text, sizeof(text),
                 "HloModule m\nENTRY main {\n  x = f64[2] parameter(0)\n"
                 "  ROOT y = f64[2] %s(x)\n}\n",
                 cxla_opcode_name((cxla_opcode)i));
        cxla_module *mod = NULL;
        cxla_literal *arg = NULL, *r = NULL;
        CHECK_OK(cxla_hlo_parse(text, strlen(text), "t.hlo", &mod));
        CHECK_OK(cxla_literal_parse("f64[2] {0.3, -0.7}", (size_t)-1, NULL, &arg));
        if (mod && arg) {
            CHECK_OK(cxla_verify_module(mod));
            const cxla_literal *args[1] = {arg};
            CHECK_OK(interp_run_module(mod, NULL, args, 1, &r));
        }
        if (r) {
            const double *y = cxla_literal_data_const(r);
            double want[2] = {m->fn(0.3), m->fn(-0.7)};
            for (int k = 0; k < 2; k++)
                CHECK_MSG(memcmp(&y[k], &want[k], sizeof(double)) == 0 ||
                              (isnan(y[k]) && isnan(want[k])),
                          "%s: interpreter %.17g, list %.17g", cxla_opcode_name((cxla_opcode)i),
                          y[k], want[k]);
        }
        cxla_literal_free(r);
        cxla_literal_free(arg);
        cxla_module_destroy(mod);
    }
}

TEST_MAIN(TEST(test_table), TEST(test_interpreter_agrees))
