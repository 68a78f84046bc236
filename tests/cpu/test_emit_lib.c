/* The emitter's library-like kernels (src/cpu/emit_lib.c, emit_linalg.c, emit_rng.c,
 * emit_fft.c) against the interpreter: sort (typed and called comparators, several
 * operands, stability, NaNs, rows and columns, empty dims), topk, map, reduce-precision,
 * bitcast-convert, cholesky, triangular-solve, rng-bit-generator and fft. Each module's
 * root "r" must run as a generated kernel (cpu_compiled_call_what), through the step
 * sequence with and without check_finite, on random inputs
 * with edge values (NaN, +-Inf, -0, repeats), and match the interpreter bit for bit
 * (any NaN matching any NaN). The kernels are compiled with -Wall -Wextra -Werror by the
 * default compiler, and by clang too where it is installed. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/emit.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

enum { MAX_PARAMS = 5 };

static uint64_t rng_state = 0x5EED;

static uint64_t next(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Small values with repeats (ties for the sorts), and now and then an edge value. */
static void fill(cxla_literal *lit, bool edges) {
    const cxla_shape *s = cxla_literal_shape(lit);
    size_t es = cxla_type_storage(s->type);
    char *p = lit->data;
    static const double specials[] = {NAN, -NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e30, 1e-30};
    for (int64_t i = 0; i < lit->count; i++, p += es) {
        uint64_t r = next();
        double v = (double)(int64_t)(r % 17) / 4.0 - 2.0;
        if (edges && r % 11 == 0) v = specials[(r >> 8) % 8];
        if (s->type == CXLA_U64 && !edges)
            memcpy(p, &r, 8);
        else if (cxla_type_is_complex(s->type))
            cxla_store_c128(s->type, p, v, (double)(int64_t)((r >> 20) % 9) - 4.0);
        else if (cxla_type_is_float(s->type))
            cxla_store_f64(s->type, p, v);
        else
            cxla_store_s64(s->type, p, (int64_t)(r % 41) - 20);
    }
}

static bool is_nan(cxla_type t, const unsigned char *p) {
    switch (t) {
    case CXLA_F32:
    case CXLA_C64: {
        float f;
        memcpy(&f, p, 4);
        return f != f;
    }
    case CXLA_F64:
    case CXLA_C128: {
        double d;
        memcpy(&d, p, 8);
        return d != d;
    }
    default: return cxla_type_is_float(t) && isnan(cxla_load_f64(t, p));
    }
}

/* Bit for bit, any NaN matching any NaN; the first difference is reported. */
static void same(const cxla_literal *want, const cxla_literal *got, const char *where) {
    const cxla_shape *s = cxla_literal_shape(want);
    if (s->type == CXLA_TUPLE) {
        CHECK_MSG(cxla_literal_shape(got)->type == CXLA_TUPLE &&
                      got->tuple_count == want->tuple_count,
                  "%s: result shapes differ", where);
        for (int64_t e = 0; e < want->tuple_count && e < got->tuple_count; e++)
            same(want->elements[e], got->elements[e], where);
        return;
    }
    CHECK_MSG(want->size == got->size, "%s: sizes differ", where);
    if (want->size != got->size || !want->size || !memcmp(want->data, got->data, want->size))
        return;
    /* Complex values are compared part by part. */
    size_t es = cxla_type_storage(s->type), part = cxla_type_is_complex(s->type) ? es / 2 : es;
    const unsigned char *a = want->data, *b = got->data;
    for (size_t off = 0; off < want->size; off += part) {
        if (!memcmp(a + off, b + off, part)) continue;
        if (is_nan(s->type, a + off) && is_nan(s->type, b + off)) continue;
        char *w = cxla_literal_to_string(want, 0), *g = cxla_literal_to_string(got, 0);
        test_fail(__FILE__, __LINE__, "%s: element %zu differs\n  interpreter %s\n  cpu         %s",
                  where, off / es, w ? w : "?", g ? g : "?");
        free(w);
        free(g);
        return;
    }
}

/* Runs |text| (root "r") on the interpreter and the cpu backend and compares. */
static void check(const char *text, bool edges) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "test_emit_lib", &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        test_fail(__FILE__, __LINE__, "does not parse: %s\n%s", cxla_status_message(s), text);
        cxla_status_free(s);
        cxla_module_destroy(m);
        return;
    }
    int64_t params = m->entry->param_count;
    cxla_literal *args[MAX_PARAMS] = {0};
    for (int64_t p = 0; p < params && p < MAX_PARAMS; p++) {
        CHECK_OK(cxla_literal_create(&m->entry->params[p]->shape, &args[p]));
        fill(args[p], edges);
    }
    cxla_literal *want = NULL, *got_plan = NULL, *got_driver = NULL;
    CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)args, params, &want));
    void *compiled = NULL;
    exec_compile_options co = {0};
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    if (compiled && want) {
        const char *what = cpu_compiled_call_what(compiled, "r");
        CHECK_MSG(what && strcmp(what, "kernel") == 0, "the root runs as '%s', not a kernel:\n%s",
                  what ? what : "the interpreter's handler", text);
        exec_run_options plan = {0}, driver = {.check_finite = true};
        CHECK_OK(cpu_backend.execute(compiled, &plan, (const cxla_literal *const *)args, params,
                                     &got_plan));
        CHECK_OK(cpu_backend.execute(compiled, &driver, (const cxla_literal *const *)args, params,
                                     &got_driver));
        if (got_plan) same(want, got_plan, text);
        if (got_driver) same(want, got_driver, text);
    }
    cpu_backend.destroy(compiled);
    cxla_literal_free(want);
    cxla_literal_free(got_plan);
    cxla_literal_free(got_driver);
    for (int64_t p = 0; p < MAX_PARAMS; p++) cxla_literal_free(args[p]);
    cxla_module_destroy(m);
}

/* printf into a static buffer. */
static const char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *format, ...) {
    static char buf[8192];
    va_list ap;
    va_start(ap, format);
    vsnprintf(buf, sizeof buf, format, ap);
    va_end(ap);
    return buf;
}

/* ---- cases ---------------------------------------------------------------------------------- */

static void sort_cases(void) {
    static const char *const types[] = {"f32", "f64", "bf16", "f16", "s32", "u8", "s64", "pred"};
    static const char *const dirs[] = {"LT", "GT", "LE", "NE"};
    for (size_t t = 0; t < sizeof types / sizeof *types; t++)
        for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++)
            for (int total = 0; total < 2; total++) {
                if (total && (t >= 4 || d >= 2)) continue;
                /* Rows (dim 1) and columns (dim 0) of a matrix: typed comparators. */
                for (int dim = 0; dim < 2; dim++)
                    check(fmt("HloModule s\ncmp {\n  a = %s[] parameter(0)\n"
                              "  b = %s[] parameter(1)\n"
                              "  ROOT c = pred[] compare(a, b), direction=%s%s\n}\n"
                              "ENTRY e {\n  x = %s[7,37] parameter(0)\n"
                              "  ROOT r = %s[7,37] sort(x), dimensions={%d}, to_apply=cmp\n}\n",
                              types[t], types[t], dirs[d], total ? ", type=TOTALORDER" : "",
                              types[t], types[t], dim),
                          true);
            }
    /* A called comparator over three operands: key, then second key, payload along. */
    check("HloModule s\ncmp {\n  a0 = s32[] parameter(0)\n  b0 = s32[] parameter(1)\n"
          "  a1 = f32[] parameter(2)\n  b1 = f32[] parameter(3)\n"
          "  a2 = u8[] parameter(4)\n  b2 = u8[] parameter(5)\n"
          "  lt0 = pred[] compare(a0, b0), direction=LT\n"
          "  eq0 = pred[] compare(a0, b0), direction=EQ\n"
          "  lt1 = pred[] compare(a1, b1), direction=LT, type=TOTALORDER\n"
          "  both = pred[] and(eq0, lt1)\n"
          "  ROOT c = pred[] or(lt0, both)\n}\n"
          "ENTRY e {\n  x = s32[3,50] parameter(0)\n  y = f32[3,50] parameter(1)\n"
          "  z = u8[3,50] parameter(2)\n"
          "  ROOT r = (s32[3,50], f32[3,50], u8[3,50]) sort(x, y, z), dimensions={1}, "
          "is_stable=true, to_apply=cmp\n}\n",
          true);
    /* Stability: equal keys keep their payload order (an iota), with the key compared
     * through arithmetic (a called comparator), on a column of a 3-D array. */
    check("HloModule s\ncmp {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
          "  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n"
          "  three = s32[] constant(3)\n  ma = s32[] remainder(a, three)\n"
          "  mb = s32[] remainder(b, three)\n"
          "  ROOT c = pred[] compare(ma, mb), direction=GT\n}\n"
          "ENTRY e {\n  x = s32[4,33,2] parameter(0)\n"
          "  i = s32[4,33,2] iota(), iota_dimension=1\n"
          "  ROOT r = (s32[4,33,2], s32[4,33,2]) sort(x, i), dimensions={1}, to_apply=cmp\n}\n",
          false);
    /* JAX's canonicalizing float comparator, with an argsort payload. */
    check("HloModule s\ncmp {\n  k0 = f32[] parameter(0)\n  k1 = f32[] parameter(1)\n"
          "  i0 = s32[] parameter(2)\n  i1 = s32[] parameter(3)\n"
          "  nan = f32[] constant(nan)\n  zero = f32[] constant(0)\n"
          "  ne0 = pred[] compare(k0, k0), direction=NE\n"
          "  eq0 = pred[] compare(k0, zero), direction=EQ\n"
          "  z0 = f32[] select(eq0, zero, k0)\n  c0 = f32[] select(ne0, nan, z0)\n"
          "  ne1 = pred[] compare(k1, k1), direction=NE\n"
          "  eq1 = pred[] compare(k1, zero), direction=EQ\n"
          "  z1 = f32[] select(eq1, zero, k1)\n  c1 = f32[] select(ne1, nan, z1)\n"
          "  ROOT lt = pred[] compare(c0, c1), direction=LT, type=TOTALORDER\n}\n"
          "ENTRY e {\n  x = f32[5,40] parameter(0)\n"
          "  i = s32[5,40] iota(), iota_dimension=1\n"
          "  ROOT r = (f32[5,40], s32[5,40]) sort(x, i), dimensions={1}, to_apply=cmp\n}\n",
          true);
    /* bf16 keys through a called comparator (converted to f32 first). */
    check("HloModule s\ncmp {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
          "  fa = f32[] convert(a)\n  fb = f32[] convert(b)\n"
          "  na = f32[] negate(fa)\n  nb = f32[] negate(fb)\n"
          "  ROOT c = pred[] compare(na, nb), direction=LT\n}\n"
          "ENTRY e {\n  x = bf16[64] parameter(0)\n"
          "  ROOT r = bf16[64] sort(x), dimensions={0}, to_apply=cmp\n}\n",
          true);
    /* More rows than the kernel's slots: each slot sorts several rows in turn (along the
     * last dimension, and along the middle one, whose rows interleave). */
    check("HloModule s\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
          "  ROOT c = pred[] compare(a, b), direction=LT\n}\n"
          "ENTRY e {\n  x = f32[131,37] parameter(0)\n"
          "  ROOT r = f32[131,37] sort(x), dimensions={1}, to_apply=cmp\n}\n",
          true);
    check("HloModule s\ncmp {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
          "  i0 = s32[] parameter(2)\n  i1 = s32[] parameter(3)\n"
          "  ROOT c = pred[] compare(a, b), direction=GT\n}\n"
          "ENTRY e {\n  x = s32[9,21,17] parameter(0)\n"
          "  i = s32[9,21,17] iota(), iota_dimension=1\n"
          "  ROOT r = (s32[9,21,17], s32[9,21,17]) sort(x, i), dimensions={1}, to_apply=cmp\n}\n",
          true);
    /* Empty and one-element dims. */
    check("HloModule s\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
          "  ROOT c = pred[] compare(a, b), direction=LT\n}\n"
          "ENTRY e {\n  x = f32[3,0] parameter(0)\n"
          "  ROOT r = f32[3,0] sort(x), dimensions={1}, to_apply=cmp\n}\n",
          true);
    check("HloModule s\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
          "  ROOT c = pred[] compare(a, b), direction=LT\n}\n"
          "ENTRY e {\n  x = f32[1,5] parameter(0)\n"
          "  ROOT r = f32[1,5] sort(x), dimensions={0}, to_apply=cmp\n}\n",
          true);
}

static void topk_cases(void) {
    static const char *const types[] = {"f32", "bf16", "s32", "u8", "f64"};
    for (size_t t = 0; t < sizeof types / sizeof *types; t++)
        for (int largest = 0; largest < 2; largest++)
            check(fmt("HloModule t\nENTRY e {\n  x = %s[6,45] parameter(0)\n"
                      "  ROOT r = (%s[6,7], s32[6,7]) topk(x), k=7, largest=%s\n}\n",
                      types[t], types[t], largest ? "true" : "false"),
                  true);
    /* More rows than the kernel's slots (several rows per slot), k past the selection's
     * limit (the merge sort), k of the whole row, k of 1, ties and edge values. */
    check("HloModule t\nENTRY e {\n  x = f32[150,100] parameter(0)\n"
          "  ROOT r = (f32[150,70], s32[150,70]) topk(x), k=70, largest=true\n}\n",
          true);
    check("HloModule t\nENTRY e {\n  x = bf16[130,64] parameter(0)\n"
          "  ROOT r = (bf16[130,64], s32[130,64]) topk(x), k=64, largest=false\n}\n",
          true);
    check("HloModule t\nENTRY e {\n  x = f32[3,2000] parameter(0)\n"
          "  ROOT r = (f32[3,1], s32[3,1]) topk(x), k=1, largest=true\n}\n",
          true);
}

static void map_cases(void) {
    check("HloModule m\nf {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
          "  c = f32[] constant(0.5)\n  m = f32[] multiply(a, c)\n"
          "  ROOT s = f32[] maximum(m, b)\n}\n"
          "ENTRY e {\n  x = f32[3,700] parameter(0)\n  y = f32[3,700] parameter(1)\n"
          "  ROOT r = f32[3,700] map(x, y), dimensions={0,1}, to_apply=f\n}\n",
          true);
    check("HloModule m\nf {\n  a = bf16[] parameter(0)\n  b = bf16[] multiply(a, a)\n"
          "  ROOT s = s32[] convert(b)\n}\n"
          "ENTRY e {\n  x = bf16[40] parameter(0)\n"
          "  ROOT r = s32[40] map(x), dimensions={0}, to_apply=f\n}\n",
          true);
    check("HloModule m\nf {\n  a = s32[] parameter(0)\n  b = u32[] bitcast-convert(a)\n"
          "  k = u32[] constant(7)\n  ROOT s = u32[] shift-right-logical(b, k)\n}\n"
          "ENTRY e {\n  x = s32[2,9] parameter(0)\n"
          "  ROOT r = u32[2,9] map(x), dimensions={0,1}, to_apply=f\n}\n",
          true);
}

static void elementwise_cases(void) {
    static const struct {
        const char *type;
        int e, m;
    } rp[] = {{"f32", 5, 10}, {"f32", 8, 7}, {"f32", 4, 0},  {"f64", 8, 23},
              {"f64", 11, 2}, {"f16", 4, 3}, {"bf16", 5, 2}, {"f16", 5, 10}};
    for (size_t i = 0; i < sizeof rp / sizeof *rp; i++)
        check(
            fmt("HloModule p\nENTRY e {\n  x = %s[2,600] parameter(0)\n"
                "  ROOT r = %s[2,600] reduce-precision(x), exponent_bits=%d, mantissa_bits=%d\n}\n",
                rp[i].type, rp[i].type, rp[i].e, rp[i].m),
            true);
    check("HloModule b\nENTRY e {\n  x = f32[5,3] parameter(0)\n"
          "  ROOT r = u32[5,3] bitcast-convert(x)\n}\n",
          true);
    check("HloModule b\nENTRY e {\n  x = f32[6] parameter(0)\n"
          "  ROOT r = u8[6,4] bitcast-convert(x)\n}\n",
          true);
    check("HloModule b\nENTRY e {\n  x = s16[3,4] parameter(0)\n"
          "  ROOT r = f64[3] bitcast-convert(x)\n}\n",
          true);
    /* Sub-byte sides (split lowest bits first, joined, signed results sign-extended; the
     * operand bytes random, so their unused high bits must be ignored) and complex. */
    static const char *const sub[][2] = {
        {"u8[7]", "s4[7,2]"},       {"s4[5,2]", "s8[5]"},        {"u32[3]", "u2[3,16]"},
        {"s1[4,32]", "u32[4]"},     {"s4[9]", "u4[9]"},          {"u4[9]", "s4[9]"},
        {"f4e2m1fn[6,2]", "u8[6]"}, {"u16[3]", "f4e2m1fn[3,4]"}, {"s2[5,4]", "s8[5]"},
        {"f64[2]", "s4[2,16]"},     {"s4[3]", "f4e2m1fn[3]"},    {"c64[3]", "c64[3]"},
        {"c128[2,2]", "c128[2,2]"}, {"u8[3]", "u1[3,8]"}};
    for (size_t i = 0; i < sizeof sub / sizeof *sub; i++)
        check(fmt("HloModule b\nENTRY e {\n  x = %s parameter(0)\n"
                  "  ROOT r = %s bitcast-convert(x)\n}\n",
                  sub[i][0], sub[i][1]),
              true);
}

/* A diagonally dominant matrix from |x|: x + 20 I (the cholesky and the solves of it are
 * then well defined; edge values in x reach the NaN paths). */
static const char *dominant(const char *t, const char *dims, int64_t rank, const char *name) {
    static char buf[4][1024];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, 1024,
             "  %s_i = s32[%s] iota(), iota_dimension=%" PRId64 "\n"
             "  %s_j = s32[%s] iota(), iota_dimension=%" PRId64 "\n"
             "  %s_eq = pred[%s] compare(%s_i, %s_j), direction=EQ\n"
             "  %s_c = %s[] constant(20)\n  %s_z = %s[] constant(0)\n"
             "  %s_cb = %s[%s] broadcast(%s_c), dimensions={}\n"
             "  %s_zb = %s[%s] broadcast(%s_z), dimensions={}\n"
             "  %s_d = %s[%s] select(%s_eq, %s_cb, %s_zb)\n"
             "  %s = %s[%s] add(%s_x, %s_d)\n",
             name, dims, rank - 2, name, dims, rank - 1, name, dims, name, name, name, t, name, t,
             name, t, dims, name, name, t, dims, name, name, t, dims, name, name, name, name, t,
             dims, name, name);
    return b;
}

static void linalg_cases(void) {
    static const char *const types[] = {"f32", "f64", "bf16", "f16"};
    for (size_t t = 0; t < 4; t++)
        for (int lower = 0; lower < 2; lower++)
            for (int edges = 0; edges < 2; edges++) {
                char body[2048];
                snprintf(body, sizeof body, "%s", dominant(types[t], "3,6,6", 3, "a"));
                check(fmt("HloModule c\nENTRY e {\n  a_x = %s[3,6,6] parameter(0)\n%s"
                          "  ROOT r = %s[3,6,6] cholesky(a), lower=%s\n}\n",
                          types[t], body, types[t], lower ? "true" : "false"),
                      edges);
            }
    /* Random (not positive definite) matrices: the NaN result of the expander. */
    check("HloModule c\nENTRY e {\n  x = f32[4,5,5] parameter(0)\n"
          "  ROOT r = f32[4,5,5] cholesky(x), lower=true\n}\n",
          false);
    static const char *const trans[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
    for (size_t t = 0; t < 2; t++)
        for (int left = 0; left < 2; left++)
            for (int lower = 0; lower < 2; lower++)
                for (int tr = 0; tr < 3; tr++)
                    for (int unit = 0; unit < 2; unit++) {
                        char body[2048];
                        snprintf(body, sizeof body, "%s", dominant(types[t], "2,5,5", 3, "a"));
                        check(fmt("HloModule t\nENTRY e {\n  a_x = %s[2,5,5] parameter(0)\n"
                                  "  b = %s[2,%s] parameter(1)\n%s"
                                  "  ROOT r = %s[2,%s] triangular-solve(a, b), left_side=%s, "
                                  "lower=%s, unit_diagonal=%s, transpose_a=%s\n}\n",
                                  types[t], types[t], left ? "5,3" : "3,5", body, types[t],
                                  left ? "5,3" : "3,5", left ? "true" : "false",
                                  lower ? "true" : "false", unit ? "true" : "false", trans[tr]),
                              (tr + unit) % 2 == 0);
                    }
}

static void batch_norm_cases(void) {
    static const char *const types[] = {"f32", "bf16", "f64", "f16"};
    for (size_t t = 0; t < 4; t++)
        for (int fi = 0; fi < 3; fi++) {
            const char *T = types[t];
            int64_t dims[3] = {4, 3, 5}, f = dims[fi];
            check(fmt("HloModule b\nENTRY e {\n  x = %s[4,3,5] parameter(0)\n"
                      "  s = %s[%" PRId64 "] parameter(1)\n  o = %s[%" PRId64 "] parameter(2)\n"
                      "  ROOT r = (%s[4,3,5], %s[%" PRId64 "], %s[%" PRId64 "]) "
                      "batch-norm-training(x, s, o), epsilon=0.001, feature_index=%d\n}\n",
                      T, T, f, T, f, T, T, f, T, f, fi),
                  t == 0);
            check(fmt("HloModule b\nENTRY e {\n  x = %s[4,3,5] parameter(0)\n"
                      "  s = %s[%" PRId64 "] parameter(1)\n  o = %s[%" PRId64 "] parameter(2)\n"
                      "  m = %s[%" PRId64 "] parameter(3)\n  v0 = %s[%" PRId64 "] parameter(4)\n"
                      "  v = %s[%" PRId64 "] abs(v0)\n"
                      "  ROOT r = %s[4,3,5] batch-norm-inference(x, s, o, m, v), epsilon=0.01, "
                      "feature_index=%d\n}\n",
                      T, T, f, T, f, T, f, T, f, T, f, T, fi),
                  false);
            check(fmt("HloModule b\nENTRY e {\n  x = %s[4,3,5] parameter(0)\n"
                      "  s = %s[%" PRId64 "] parameter(1)\n  m = %s[%" PRId64 "] parameter(2)\n"
                      "  v0 = %s[%" PRId64 "] parameter(3)\n  v = %s[%" PRId64 "] abs(v0)\n"
                      "  dy = %s[4,3,5] parameter(4)\n"
                      "  ROOT r = (%s[4,3,5], %s[%" PRId64 "], %s[%" PRId64 "]) "
                      "batch-norm-grad(x, s, m, v, dy), epsilon=0.01, feature_index=%d\n}\n",
                      T, T, f, T, f, T, f, T, f, T, T, T, f, T, f, fi),
                  t == 1);
        }
}

static void rng_cases(void) {
    static const char *const shapes[] = {"u32[3,5]", "u64[7]", "u8[5,3]", "u16[3,3]",
                                         "u32[]",    "u32[0]", "u64[2,3]"};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        check(fmt("HloModule g\nENTRY e {\n  s = u64[2] parameter(0)\n"
                  "  ROOT r = (u64[2], %s) rng-bit-generator(s), algorithm=rng_three_fry\n}\n",
                  shapes[s]),
              false);
        check(fmt("HloModule g\nENTRY e {\n  s = u64[3] parameter(0)\n"
                  "  ROOT r = (u64[3], %s) rng-bit-generator(s), algorithm=rng_philox\n}\n",
                  shapes[s]),
              false);
        check(fmt("HloModule g\nENTRY e {\n  s = u64[2] parameter(0)\n"
                  "  ROOT r = (u64[2], %s) rng-bit-generator(s), algorithm=rng_default\n}\n",
                  shapes[s]),
              false);
    }
    check("HloModule g\nENTRY e {\n  s = u64[2] parameter(0)\n"
          "  ROOT r = u32[9,4] rng-bit-generator(s), algorithm=rng_philox\n}\n",
          false);
}

static void fft_cases(void) {
    /* Direct (<= 32), radix-2 and Bluestein lengths, 1 to 3 dims, every kind. */
    static const int64_t lens[] = {1, 5, 8, 12, 31, 64, 40, 100};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        int64_t n = lens[i], h = n / 2 + 1;
        for (int c128 = 0; c128 < 2; c128++) {
            const char *ct = c128 ? "c128" : "c64", *rt = c128 ? "f64" : "f32";
            bool edges = i % 3 == 0;
            check(fmt("HloModule f\nENTRY e {\n  x = %s[3,%" PRId64 "] parameter(0)\n"
                      "  ROOT r = %s[3,%" PRId64 "] fft(x), fft_type=FFT, fft_length={%" PRId64
                      "}\n}\n",
                      ct, n, ct, n, n),
                  edges);
            check(fmt("HloModule f\nENTRY e {\n  x = %s[2,%" PRId64 "] parameter(0)\n"
                      "  ROOT r = %s[2,%" PRId64 "] fft(x), fft_type=IFFT, fft_length={%" PRId64
                      "}\n}\n",
                      ct, n, ct, n, n),
                  edges);
            check(fmt("HloModule f\nENTRY e {\n  x = %s[2,%" PRId64 "] parameter(0)\n"
                      "  ROOT r = %s[2,%" PRId64 "] fft(x), fft_type=RFFT, fft_length={%" PRId64
                      "}\n}\n",
                      rt, n, ct, h, n),
                  edges);
            check(fmt("HloModule f\nENTRY e {\n  x = %s[2,%" PRId64 "] parameter(0)\n"
                      "  ROOT r = %s[2,%" PRId64 "] fft(x), fft_type=IRFFT, fft_length={%" PRId64
                      "}\n}\n",
                      ct, h, rt, n, n),
                  edges);
        }
    }
    check("HloModule f\nENTRY e {\n  x = c64[2,3,6,5] parameter(0)\n"
          "  ROOT r = c64[2,3,6,5] fft(x), fft_type=FFT, fft_length={3,6,5}\n}\n",
          false);
    check("HloModule f\nENTRY e {\n  x = c128[4,36] parameter(0)\n"
          "  ROOT r = c128[4,36] fft(x), fft_type=IFFT, fft_length={4,36}\n}\n",
          false);
    check("HloModule f\nENTRY e {\n  x = f32[2,6,10] parameter(0)\n"
          "  ROOT r = c64[2,6,6] fft(x), fft_type=RFFT, fft_length={6,10}\n}\n",
          true);
    check("HloModule f\nENTRY e {\n  x = c128[3,5,4] parameter(0)\n"
          "  ROOT r = f64[3,5,6] fft(x), fft_type=IRFFT, fft_length={5,6}\n}\n",
          false);
}

static void reduce_cases(void) {
    /* JAX's argmax: a variadic reduce of values and indices, NaN first, lower index on ties. */
    static const char *const dims[] = {"{1}", "{0}", "{0,1}"};
    static const char *const outs[] = {"[4]", "[9]", "[]"};
    for (int d = 0; d < 3; d++)
        check(fmt("HloModule a\nargmax {\n  a = f32[] parameter(0)\n  ai = s32[] parameter(1)\n"
                  "  b = f32[] parameter(2)\n  bi = s32[] parameter(3)\n"
                  "  gt = pred[] compare(a, b), direction=GT\n"
                  "  ne = pred[] compare(a, a), direction=NE\n"
                  "  pick = pred[] or(gt, ne)\n"
                  "  eq = pred[] compare(a, b), direction=EQ\n"
                  "  lt = pred[] compare(ai, bi), direction=LT\n"
                  "  tie = pred[] and(eq, lt)\n  pa = pred[] or(pick, tie)\n"
                  "  v = f32[] select(pa, a, b)\n  i = s32[] select(pa, ai, bi)\n"
                  "  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"
                  "ENTRY e {\n  x = f32[4,9] parameter(0)\n"
                  "  i = s32[4,9] iota(), iota_dimension=%d\n"
                  "  ninf = f32[] constant(-inf)\n  zero = s32[] constant(0)\n"
                  "  ROOT r = (f32%s, s32%s) reduce(x, i, ninf, zero), dimensions=%s, "
                  "to_apply=argmax\n}\n",
                  d == 1 ? 0 : 1, outs[d], outs[d], dims[d]),
              true);
    /* A reducer emit.c does not recognize: acc * 0.5 + x, in row-major order. */
    check("HloModule h\nf {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
          "  h = f32[] constant(0.5)\n  m = f32[] multiply(a, h)\n"
          "  ROOT s = f32[] add(m, b)\n}\n"
          "ENTRY e {\n  x = f32[3,5,7] parameter(0)\n  z = f32[] constant(1)\n"
          "  ROOT r = f32[5] reduce(x, z), dimensions={0,2}, to_apply=f\n}\n",
          true);
    check("HloModule h\nf {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
          "  ROOT s = bf16[] subtract(a, b)\n}\n"
          "ENTRY e {\n  x = bf16[6,0] parameter(0)\n  z = bf16[] constant(2)\n"
          "  ROOT r = bf16[6] reduce(x, z), dimensions={1}, to_apply=f\n}\n",
          true);
    /* Computations emit_scalar.c writes beyond elementwise operations: a reducer with a
     * clamp and a bitcast-convert through a call; a comparator that clamps its keys (ties
     * kept in order: stability) and compares complex payloads for equality; a map of a
     * clamp of small floats. */
    check("HloModule h\ncl {\n  a = f32[] parameter(0)\n  lo = f32[] constant(-0.5)\n"
          "  hi = f32[] constant(0.5)\n  ROOT c = f32[] clamp(lo, a, hi)\n}\n"
          "f {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
          "  s = f32[] add(a, b)\n  c = f32[] call(s), to_apply=cl\n"
          "  i = s32[] bitcast-convert(c)\n  j = s32[] constant(1)\n  k = s32[] xor(i, j)\n"
          "  ROOT o = f32[] bitcast-convert(k)\n}\n"
          "ENTRY e {\n  x = f32[4,7] parameter(0)\n  z = f32[] constant(0)\n"
          "  ROOT r = f32[4] reduce(x, z), dimensions={1}, to_apply=f\n}\n",
          true);
    check("HloModule h\nlt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
          "  p = c64[] parameter(2)\n  q = c64[] parameter(3)\n"
          "  lo = f32[] constant(-1)\n  hi = f32[] constant(1)\n"
          "  x = f32[] clamp(lo, a, hi)\n  y = f32[] clamp(lo, b, hi)\n"
          "  l = pred[] compare(x, y), direction=LT\n  e = pred[] compare(x, y), direction=EQ\n"
          "  z = c64[] constant((0, 0))\n  pz = pred[] compare(p, z), direction=EQ\n"
          "  qz = pred[] compare(q, z), direction=NE\n  w = pred[] and(pz, qz)\n"
          "  t = pred[] and(e, w)\n  ROOT o = pred[] or(l, t)\n}\n"
          "ENTRY e {\n  k = f32[3,11] parameter(0)\n  v = c64[3,11] parameter(1)\n"
          "  ROOT r = (f32[3,11], c64[3,11]) sort(k, v), dimensions={1}, to_apply=lt\n}\n",
          true);
    check("HloModule h\nf {\n  a = f8e5m2[] parameter(0)\n  b = f8e5m2[] parameter(1)\n"
          "  ROOT c = f8e5m2[] clamp(b, a, b)\n}\n"
          "ENTRY e {\n  x = f8e5m2[5,6] parameter(0)\n  y = f8e5m2[5,6] parameter(1)\n"
          "  ROOT r = f8e5m2[5,6] map(x, y), dimensions={0,1}, to_apply=f\n}\n",
          true);
}

static void run_all(void) {
    reduce_cases();
    sort_cases();
    topk_cases();
    map_cases();
    elementwise_cases();
    linalg_cases();
    batch_norm_cases();
    rng_cases();
    fft_cases();
}

static char cache_dir[256];

static void fresh_cache(void) {
    snprintf(cache_dir, sizeof cache_dir, "/tmp/cxla-test-emit-lib-XXXXXX");
    if (!mkdtemp(cache_dir)) snprintf(cache_dir, sizeof cache_dir, "/tmp/cxla-test-emit-lib");
    setenv("CXLA_CACHE_DIR", cache_dir, 1);
}

static void remove_cache(void) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", cache_dir);
}

static void test_against_interpreter(void) {
    fresh_cache();
    /* Warnings are errors: the generated code must compile cleanly. */
    setenv("CXLA_CFLAGS", "-O1 -Wall -Wextra -Werror", 1);
    run_all();
    unsetenv("CXLA_CFLAGS");
    remove_cache();
}

static void test_clang(void) {
    if (system("clang --version > /dev/null 2>&1") != 0) return; /* not installed */
    fresh_cache();
    setenv("CXLA_CC", "clang", 1);
    setenv("CXLA_CFLAGS", "-O0 -Wall -Wextra -Werror", 1);
    run_all();
    unsetenv("CXLA_CC");
    unsetenv("CXLA_CFLAGS");
    remove_cache();
}

TEST_MAIN(TEST(test_against_interpreter), TEST(test_clang))
