/* Windows and sized scatters over bounded dynamic shapes in ahead-of-time output
 * (src/cpu/aot_dynlib.c; docs/aot.md, "Dynamic shapes"): select-and-scatter (a comparator
 * and reducer the interpreter recognizes, and computations it does not), reduce-window of
 * several inputs (an argmax, a static input cut to a dynamic one's size), a reduce-window
 * with base dilation, and scatters whose update windows are dynamic (one operand, and two).
 *
 * Each module runs at every combination of its arguments' sizes (0 to the bound of each
 * dynamic dimension; garbage in the arguments' padding) through NAME_run_dynamic, built with
 * every C compiler found, and each run must give what the interpreter gives: the return
 * code, the result's sizes and bytes at its bounds (zeros in the padding), or
 * NAME_ERROR_DYNAMIC_MISMATCH with the interpreter's message word for word (sources that do
 * not match the windows, inputs whose sizes disagree, update windows larger than the
 * operand, a static result the sizes do not fill). Then sub-byte integers and pred
 * (h-dynwin2): integer reduces over dynamic dimensions whose init values are not their
 * reducers' identities (the padding filled with the identity), and dots of u4, s4 and pred
 * of several result types (the exact loops over zeroed padding). */
#define AOT_RANDOM /* test_aot.c's machinery only (its feature macros come first) */
#include "cpu/test_aot.c"
#include "exec/dynamic.h"
#include "literal/literal_internal.h"
#include <math.h>

static const char *const win_modules[] = {
    /* select-and-scatter, recognized computations (the JIT's step over the sizes) */
    "HloModule w0\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n}\nge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT c = pred[] compare(a, b), direction=GE\n}\nENTRY e {\n  x = f32[<=6] parameter(0)\n"
    "  src = f32[<=3] parameter(1)\n  z = f32[] constant(0)\n"
    "  ROOT sas = f32[<=6] select-and-scatter(x, src, z), window={size=2 stride=2 pad=0_1}, "
    "select=ge, scatter=add\n}\n",
    /* select-and-scatter, a select the interpreter does not recognize (the smaller square,
     * ties to the later), a scatter that adds twice the source, a static source */
    "HloModule w1\nsmaller {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  aa = f32[] multiply(a, a)\n  bb = f32[] multiply(b, b)\n"
    "  ROOT c = pred[] compare(aa, bb), direction=LT\n}\ntwice {\n  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n  b2 = f32[] add(b, b)\n  ROOT s = f32[] add(a, b2)\n}\n"
    "ENTRY e {\n  x = f32[<=5] parameter(0)\n  src = f32[2] parameter(1)\n"
    "  i = f32[] constant(1)\n"
    "  ROOT sas = f32[<=5] select-and-scatter(x, src, i), window={size=3 stride=2 pad=1_0}, "
    "select=smaller, scatter=twice\n}\n",
    /* select-and-scatter in 2-d with a static result dimension over a dynamic operand one
     * (the interpreter's error below the bound) */
    "HloModule w2\nodd {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
    "  two = s32[] constant(2)\n  r = s32[] remainder(a, two)\n  zero = s32[] constant(0)\n"
    "  ROOT c = pred[] compare(r, zero), direction=NE\n}\nadd {\n  a = s32[] parameter(0)\n"
    "  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}\nENTRY e {\n"
    "  x = s32[<=3,<=4] parameter(0)\n  src = s32[<=3,<=2] parameter(1)\n"
    "  i = s32[] constant(0)\n"
    "  ROOT sas = s32[3,<=4] select-and-scatter(x, src, i), window={size=1x3 stride=1x2 "
    "pad=0_0x1_1}, select=odd, scatter=add\n}\n",
    /* reduce-window of two inputs (an argmax), the second static: cut to the first's size */
    "HloModule w3\nargmax {\n  a = f32[] parameter(0)\n  ai = s32[] parameter(1)\n"
    "  b = f32[] parameter(2)\n  bi = s32[] parameter(3)\n"
    "  p = pred[] compare(a, b), direction=GE\n  m = f32[] select(p, a, b)\n"
    "  mi = s32[] select(p, ai, bi)\n  ROOT t = (f32[], s32[]) tuple(m, mi)\n}\nENTRY e {\n"
    "  x = f32[<=5] parameter(0)\n  ix = s32[5] parameter(1)\n  i = f32[] constant(-inf)\n"
    "  j = s32[] constant(-1)\n"
    "  ROOT rw = (f32[<=5], s32[<=5]) reduce-window(x, ix, i, j), window={size=3 pad=1_1}, "
    "to_apply=argmax\n}\n",
    /* the same with both inputs dynamic: sizes that disagree are the interpreter's error */
    "HloModule w4\nargmax {\n  a = f32[] parameter(0)\n  ai = s32[] parameter(1)\n"
    "  b = f32[] parameter(2)\n  bi = s32[] parameter(3)\n"
    "  p = pred[] compare(a, b), direction=GE\n  m = f32[] select(p, a, b)\n"
    "  mi = s32[] select(p, ai, bi)\n  ROOT t = (f32[], s32[]) tuple(m, mi)\n}\nENTRY e {\n"
    "  x = f32[<=4] parameter(0)\n  ix = s32[<=4] parameter(1)\n  i = f32[] constant(-inf)\n"
    "  j = s32[] constant(-1)\n"
    "  ROOT rw = (f32[<=4], s32[<=4]) reduce-window(x, ix, i, j), window={size=2 stride=1 "
    "pad=0_1}, to_apply=argmax\n}\n",
    /* reduce-window in 2-d with base dilation (the holes and the high padding of dimension
     * 0 fold the init value) and a reducer the interpreter does not recognize (acc * 2 + x:
     * the order of the fold shows); the last window of dimension 1 reaches past the size */
    "HloModule w5\nf {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
    "  two = s32[] constant(2)\n  a2 = s32[] multiply(a, two)\n  ROOT s = s32[] add(a2, b)\n}\n"
    "ENTRY e {\n  x = s32[<=3,<=3] parameter(0)\n  i = s32[] constant(1)\n"
    "  ROOT rw = s32[<=5,<=3] reduce-window(x, i), window={size=2x2 pad=0_1x0_1 lhs_dilate=2x1 "
    "stride=1x1}, to_apply=f\n}\n",
    /* scatter with a dynamic update window (the JIT's sized kernel): windows of up to 3 into
     * an operand of up to 6, indices of up to 2 vectors */
    "HloModule w6\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[<=6] parameter(0)\n"
    "  idx = s32[<=2,1] parameter(1)\n  u = f32[<=2,<=3] parameter(2)\n"
    "  ROOT sc = f32[<=6] scatter(x, idx, u), update_window_dims={1}, inserted_window_dims={}, "
    "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n",
    /* scatter of two operands with dynamic update windows (operands, or updates, whose
     * sizes differ are the interpreter's error; both updates dynamic: at the bounds the
     * interpreter's scatter compares the dynamic marks of the updates too) */
    "HloModule w7\nf {\n  a = s32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  c = s32[] parameter(2)\n  d = f32[] parameter(3)\n  two = s32[] constant(2)\n"
    "  ct = s32[] multiply(c, two)\n  s = s32[] add(a, ct)\n  m = f32[] maximum(b, d)\n"
    "  ROOT t = (s32[], f32[]) tuple(s, m)\n}\nENTRY e {\n  x = s32[<=3,2] parameter(0)\n"
    "  y = f32[<=3,2] parameter(1)\n  idx = s32[2,2] parameter(2)\n"
    "  u = s32[2,<=2,2] parameter(3)\n  v = f32[2,<=2,2] parameter(4)\n"
    "  ROOT sc = (s32[<=3,2], f32[<=3,2]) scatter(x, y, idx, u, v), update_window_dims={1,2}, "
    "inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, "
    "to_apply=f\n}\n",
    /* integer reduces of sub-byte types from init values that are not the identities: the
     * and of u4 from 14, the sum of s4 from 1 (wrapping), the maximum of s2 from -1 */
    "HloModule w8\nand4 {\n  a = u4[] parameter(0)\n  b = u4[] parameter(1)\n"
    "  ROOT r = u4[] and(a, b)\n}\nadd4 {\n  a = s4[] parameter(0)\n  b = s4[] parameter(1)\n"
    "  ROOT r = s4[] add(a, b)\n}\nmax2 {\n  a = s2[] parameter(0)\n  b = s2[] parameter(1)\n"
    "  ROOT r = s2[] maximum(a, b)\n}\nENTRY e {\n  x = u4[<=4,3]{1,0:E(4)} parameter(0)\n"
    "  y = s4[2,<=5] parameter(1)\n  w = s2[<=3] parameter(2)\n  i = u4[] constant(14)\n"
    "  j = s4[] constant(1)\n  k = s2[] constant(-1)\n"
    "  r0 = u4[3] reduce(x, i), dimensions={0}, to_apply=and4\n"
    "  r1 = s4[2] reduce(y, j), dimensions={1}, to_apply=add4\n"
    "  r2 = s2[] reduce(w, k), dimensions={0}, to_apply=max2\n"
    "  ROOT t = (u4[3], s4[2], s2[]) tuple(r0, r1, r2)\n}\n",
    /* dots over a dynamic contracting dimension of u4 (to u4, wrapping, and to s32), of s4
     * to f16 and of pred to pred (an or of ands); contracting sizes that differ are the
     * interpreter's error */
    "HloModule w9\nENTRY e {\n  a = u4[2,<=4]{1,0:E(4)} parameter(0)\n"
    "  b = u4[<=4,2]{1,0:E(4)} parameter(1)\n  c = s4[2,<=4] convert(a)\n"
    "  e = s4[<=4,2] convert(b)\n  p = pred[2,<=4] convert(a)\n  q = pred[<=4,2] convert(b)\n"
    "  d0 = u4[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  d1 = s32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  d2 = f16[2,2] dot(c, e), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  d3 = pred[2,2] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  ROOT t = (u4[2,2], s32[2,2], f16[2,2], pred[2,2]) tuple(d0, d1, d2, d3)\n}\n",
};

static cxla_module *parse_win(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "dynwin", &m);
    if (!s) s = cxla_verify_module(m);
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    return m;
}

/* Element |k| of parameter |p|: floats with ties, -0, a large value (and a NaN in the first
 * parameter, which the windows only compare); integers from -1 to 7 (indices in and out of
 * range, odd and even values; wrapped to a sub-byte type's width, 0 and 1 for pred). */
static double value_of(int64_t p, int64_t k, cxla_type t) {
    static const double f[] = {3.5, -0.0, 7.25, -2.0, 0.0, -3.0, 3.5, 2.0};
    if (t != CXLA_F32) return (double)((k * 5 + p * 3) % 9 - 1);
    if (p == 0 && k == 5) return (double)NAN;
    if (p == 0 && k == 6) return 1e30;
    return f[(k + 3 * p) % 8];
}

static void put_value(cxla_type t, double v, void *at) {
    if (t == CXLA_F32) {
        float x = (float)v;
        memcpy(at, &x, 4);
    } else {
        cxla_store_s64(t, at, (int64_t)v); /* wrapped to the width; pred: != 0 */
    }
}

/* The argument of parameter |p| (shape |s|: f32, or integers or pred of any width) at sizes
 * |z|, and its bytes at the bounds (row-major) with garbage in the padding, as C
 * initializer text into |b|. */
static cxla_literal *make_arg(int64_t p, const cxla_shape *s, const int64_t *z, cxla_strbuf *b) {
    cxla_shape at = {.type = s->type, .rank = s->rank, .dims = (int64_t *)z};
    cxla_literal *l = NULL;
    cxla_status st = cxla_literal_create(&at, &l);
    CHECK(st == NULL);
    cxla_status_free(st);
    int64_t n = 1, bound = 1, idx[CXLA_MAX_RANK] = {0};
    for (int64_t d = 0; d < s->rank; d++) {
        n *= z[d];
        bound *= s->dims[d];
    }
    size_t es = cxla_type_storage(s->type);
    for (int64_t k = 0; k < n; k++)
        put_value(s->type, value_of(p, k, s->type), (unsigned char *)l->data + es * (size_t)k);
    for (int64_t k = 0; k < bound; k++) {
        bool pad = false;
        int64_t flat = 0;
        for (int64_t d = 0; d < s->rank; d++) {
            pad = pad || idx[d] >= z[d];
            flat = flat * z[d] + idx[d];
        }
        unsigned char e[8];
        /* Garbage that a kernel reading the padding would show: a big float, an index in
         * range (an integer that is no reducer's identity). */
        if (pad)
            put_value(s->type, s->type == CXLA_F32 ? 1e9 : 1.0, e);
        else
            memcpy(e, (const unsigned char *)l->data + es * (size_t)flat, es);
        for (size_t i = 0; i < es; i++) cxla_strbuf_printf(b, "%u,", e[i]);
        for (int64_t d = s->rank - 1; d >= 0 && ++idx[d] == s->dims[d]; d--) idx[d] = 0;
    }
    if (bound == 0) cxla_strbuf_puts(b, "0");
    return l;
}

static void put_hex(cxla_strbuf *b, const unsigned char *data, size_t n) {
    for (size_t i = 0; i < n; i++) cxla_strbuf_printf(b, "%02x", data[i]);
}

/* The interpreter's line for module |name| run |run| on |args|: "name run rc", then per
 * result leaf " | sizes : bytes at the bounds", or the message. */
static void interp_line(const cxla_module *m, const char *name, int64_t run, cxla_literal **args,
                        int64_t nargs, cxla_strbuf *want, int64_t *errors) {
    cxla_literal *out = NULL;
    cxla_status s = interp_run_module(m, NULL, (const cxla_literal *const *)args, nargs, &out);
    cxla_strbuf_printf(want, "%s %" PRId64 " %d", name, run, s ? 14 : 0);
    if (s) {
        cxla_strbuf_printf(want, " %s\n", cxla_status_message(s));
        cxla_status_free(s);
        (*errors)++;
        return;
    }
    const cxla_shape *rs[16];
    int64_t nr = 0;
    shape_leaves(&m->entry->root->shape, rs, &nr);
    leaves got = {0};
    s = flatten(out, NULL, &got);
    CHECK_MSG(s == NULL && got.count == nr, "%s: flatten", name);
    cxla_status_free(s);
    for (int64_t e = 0; e < got.count && e < nr; e++) {
        int64_t z[CXLA_MAX_RANK];
        cxla_literal_sizes(got.items[e], z);
        if (shape_is_dynamic(rs[e])) {
            s = to_bounds(rs[e], &got.items[e]);
            CHECK(s == NULL);
            cxla_status_free(s);
        }
        cxla_strbuf_puts(want, " |");
        for (int64_t d = 0; d < rs[e]->rank; d++) cxla_strbuf_printf(want, " %" PRId64, z[d]);
        cxla_strbuf_puts(want, " : ");
        put_hex(want, got.items[e]->data, got.items[e]->size);
    }
    cxla_strbuf_puts(want, "\n");
    leaves_free(&got);
    cxla_literal_free(out);
}

/* Every combination of sizes of the entry's parameters (dynamic dims 0..bound, static ones
 * their size): the next after |z| (flat, parameter by parameter), false after the last. */
static bool next_sizes(const cxla_module *m, int64_t *z) {
    int64_t base[64], at = 0;
    for (int64_t p = 0; p < m->entry->param_count; p++) {
        base[p] = at;
        at += m->entry->params[p]->shape.rank;
    }
    for (int64_t p = m->entry->param_count - 1; p >= 0; p--) {
        const cxla_shape *s = &m->entry->params[p]->shape;
        for (int64_t d = s->rank - 1; d >= 0; d--) {
            if (!exec_shape_dim_dynamic(s, d)) continue;
            if (z[base[p] + d] < s->dims[d]) {
                z[base[p] + d]++;
                return true;
            }
            z[base[p] + d] = 0;
        }
    }
    return false;
}

/* The driver's part for one run: the arguments' bytes and sizes, the call, the line. */
static void driver_run(cxla_strbuf *drv, const cxla_module *m, const char *name, int64_t run,
                       const cxla_strbuf *arg_text, const int64_t *z) {
    int64_t np = m->entry->param_count;
    const cxla_shape *rs[16];
    int64_t nr = 0;
    shape_leaves(&m->entry->root->shape, rs, &nr);
    cxla_strbuf_puts(drv, "    {\n");
    for (int64_t p = 0, at = 0; p < np; p++) {
        const cxla_shape *s = &m->entry->params[p]->shape;
        cxla_strbuf_printf(drv,
                           "        static _Alignas(64) const unsigned char a%" PRId64
                           "[] = {%s};\n        static const int64_t z%" PRId64 "[] = {",
                           p, arg_text[p].data ? arg_text[p].data : "0", p);
        for (int64_t d = 0; d < s->rank; d++)
            cxla_strbuf_printf(drv, "%s%" PRId64, d ? ", " : "", z[at + d]);
        cxla_strbuf_puts(drv, s->rank ? "};\n" : "0};\n");
        at += s->rank;
    }
    cxla_strbuf_printf(drv, "        const void *args[%" PRId64 "] = {", np);
    for (int64_t p = 0; p < np; p++) cxla_strbuf_printf(drv, "%sa%" PRId64, p ? ", " : "", p);
    cxla_strbuf_printf(drv, "};\n        const int64_t *zin[%" PRId64 "] = {", np);
    for (int64_t p = 0; p < np; p++) cxla_strbuf_printf(drv, "%sz%" PRId64, p ? ", " : "", p);
    cxla_strbuf_printf(
        drv, "};\n        void *res[%" PRId64 "];\n        int64_t *zout[%" PRId64 "];\n", nr, nr);
    for (int64_t e = 0; e < nr; e++)
        cxla_strbuf_printf(drv,
                           "        res[%" PRId64 "] = out[%" PRId64 "];\n        zout[%" PRId64
                           "] = rz[%" PRId64 "];\n",
                           e, e, e, e);
    cxla_strbuf_printf(drv,
                       "        memset(out, 0xee, sizeof out);\n"
                       "        %s_options op;\n        memset(&op, 0, sizeof op);\n"
                       "        op.error = msg;\n        op.error_size = sizeof msg;\n"
                       "        if (%s_scratch_size() > sizeof scratch) return 3;\n"
                       "        int rc = %s_run_dynamic(&op, args, zin, res, zout, scratch);\n"
                       "        printf(\"%s %" PRId64 " %%d\", rc);\n"
                       "        if (rc) printf(\" %%s\", msg);\n",
                       name, name, name, name, run);
    for (int64_t e = 0; e < nr; e++) {
        cxla_strbuf_printf(drv, "        if (!rc) {\n            printf(\" |\");\n");
        for (int64_t d = 0; d < rs[e]->rank; d++)
            cxla_strbuf_printf(
                drv, "            printf(\" %%lld\", (long long)rz[%" PRId64 "][%" PRId64 "]);\n",
                e, d);
        cxla_strbuf_printf(drv,
                           "            printf(\" : \");\n"
                           "            for (size_t i = 0; i < %s_result_bytes[%" PRId64
                           "]; i++) printf(\"%%02x\", out[%" PRId64 "][i]);\n        }\n",
                           name, e, e);
    }
    cxla_strbuf_puts(drv, "        printf(\"\\n\");\n    }\n");
}

static void test_aot_dynwin(void) {
    const char *compilers[3];
    int ncc = (int)compilers_found(compilers);
    if (ncc == 0) test_skip_all("no C compiler (gcc, clang, tcc) found");
    (void)batch_add; /* test_aot.c's batches: this test writes its own driver */
    (void)batch_run;
    make_tmpdir();
    size_t n_mod = sizeof win_modules / sizeof win_modules[0];
    cxla_strbuf drv, want, srcs;
    cxla_strbuf_init(&drv);
    cxla_strbuf_init(&want);
    cxla_strbuf_init(&srcs);
    cxla_strbuf_puts(&drv, "#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n");
    for (size_t i = 0; i < n_mod; i++) cxla_strbuf_printf(&drv, "#include \"w%zu.h\"\n", i);
    cxla_strbuf_puts(&drv, "static _Alignas(64) char scratch[1 << 20];\n"
                           "static _Alignas(64) unsigned char out[4][4096];\n"
                           "static int64_t rz[4][8];\n"
                           "static char msg[512];\n"
                           "int main(void) {\n");
    int64_t lines = 0, errors = 0;
    for (size_t i = 0; i < n_mod; i++) {
        cxla_module *m = parse_win(win_modules[i]);
        if (!m) continue;
        char name[16];
        snprintf(name, sizeof name, "w%zu", i);
        cxla_status s = cpu_aot_write(m, NULL, tmpdir, name);
        CHECK_MSG(s == NULL, "%s: %s", name, cxla_status_message(s));
        cxla_status_free(s);
        cxla_strbuf_printf(&srcs, " %s.c", name);
        int64_t np = m->entry->param_count, z[64] = {0};
        CHECK(np <= 8);
        for (int64_t p = 0, at = 0; p < np; p++) { /* dynamic dims from 0, static ones fixed */
            const cxla_shape *ps = &m->entry->params[p]->shape;
            for (int64_t d = 0; d < ps->rank; d++)
                z[at + d] = exec_shape_dim_dynamic(ps, d) ? 0 : ps->dims[d];
            at += ps->rank;
        }
        int64_t run = 0;
        do {
            cxla_literal *args[8];
            cxla_strbuf text[8];
            for (int64_t p = 0, at = 0; p < np; p++) {
                cxla_strbuf_init(&text[p]);
                args[p] = make_arg(p, &m->entry->params[p]->shape, z + at, &text[p]);
                at += m->entry->params[p]->shape.rank;
            }
            interp_line(m, name, run, args, np, &want, &errors);
            driver_run(&drv, m, name, run, text, z);
            for (int64_t p = 0; p < np; p++) {
                cxla_literal_free(args[p]);
                cxla_strbuf_free(&text[p]);
            }
            run++;
            lines++;
        } while (next_sizes(m, z));
        cxla_module_destroy(m);
    }
    cxla_strbuf_puts(&drv, "    return 0;\n}\n");
    char path[512], cmd[4096];
    snprintf(path, sizeof path, "%s/main.c", tmpdir);
    cxla_status s = cxla_write_file(path, drv.data, drv.len);
    CHECK(s == NULL);
    cxla_status_free(s);
    for (int c = 0; c < ncc; c++) {
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && rm -f prog out.txt && %s -std=c11 -Wall -Wextra -Wpedantic -Werror "
                 "-O2 -o prog main.c%s -lm 2>&1 | head -20 && ./prog > out.txt",
                 tmpdir, compilers[c], srcs.data ? srcs.data : "");
        CHECK_MSG(system(cmd) == 0, "%s: the driver did not build or run", compilers[c]);
        char *text = NULL;
        size_t size = 0;
        snprintf(path, sizeof path, "%s/out.txt", tmpdir);
        s = cxla_read_file(path, &text, &size);
        CHECK(s == NULL);
        cxla_status_free(s);
        /* Line by line, for a readable failure. */
        const char *g = text ? text : "", *w = want.data ? want.data : "";
        int64_t bad = 0;
        while (*g || *w) {
            size_t gl = strcspn(g, "\n"), wl = strcspn(w, "\n");
            if ((gl != wl || strncmp(g, w, gl) != 0) && bad++ < 10)
                test_fail(__FILE__, __LINE__, "%s:\n   generated:   %.*s\n   interpreter: %.*s",
                          compilers[c], (int)gl, g, (int)wl, w);
            g += gl + (g[gl] ? 1 : 0);
            w += wl + (w[wl] ? 1 : 0);
        }
        free(text);
    }
    /* The combinations ran, errors among them (each kind of module has some). */
    CHECK(lines > 300 && errors > 50 && errors < lines - 100);
    fprintf(stderr,
            "aot: %" PRId64 " runs of %zu modules at every combination of sizes, %" PRId64
            " of them the interpreter's errors, with %d compilers\n",
            lines, n_mod, errors, ncc);
    cxla_strbuf_free(&drv);
    cxla_strbuf_free(&want);
    cxla_strbuf_free(&srcs);
    if (!test_failures) remove_tmpdir();
}

TEST_MAIN(TEST(test_aot_dynwin))
