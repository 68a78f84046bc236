/* Ahead-of-time output of the operations with run-time state or options (src/cpu/aot_rng.c):
 * rng of every distribution and element-type family, in the entry and in a while loop's
 * body, and rng-get-and-update-state, compiled by gcc, clang and tcc (those installed),
 * run by a hand-written driver with no cxla library, and compared bit for bit with the
 * interpreter: with no options (seed 0), with a seed, and with a state the caller owns
 * across two runs. */
#define AOT_RANDOM /* test_aot.c's machinery only */
#include "cpu/test_aot.c"

/* Every family: f32 from the arguments, f64, a range whose width overflows f32, small
 * floats (f16, bf16, f8e4m3fn: values that round up to b), integers of each width with
 * signed and unsigned ranges, u64 with an empty range (the raw bits), pred; normal f32,
 * f64 (a shape of odd dims: the second value of the last pair dropped) and bf16; an rng in
 * a while body (the state moves from step to step); the state after all of them. */
static const char *const rng_module =
    "HloModule rngs\n"
    "body {\n"
    "  p = (s32[], f32[5]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  one = s32[] constant(1)\n"
    "  i1 = s32[] add(i, one)\n"
    "  lo = f32[] constant(-1)\n"
    "  hi = f32[] constant(1)\n"
    "  r = f32[5] rng(lo, hi), distribution=rng_uniform\n"
    "  acc = f32[5] get-tuple-element(p), index=1\n"
    "  s = f32[5] multiply(acc, r)\n"
    "  ROOT t = (s32[], f32[5]) tuple(i1, s)\n"
    "}\n"
    "cond {\n"
    "  p = (s32[], f32[5]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  three = s32[] constant(3)\n"
    "  ROOT lt = pred[] compare(i, three), direction=LT\n"
    "}\n"
    "ENTRY e {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  u32 = f32[7,3] rng(a, b), distribution=rng_uniform\n"
    "  d0 = f64[] constant(-2.5)\n"
    "  d1 = f64[] constant(1e300)\n"
    "  u64 = f64[5] rng(d0, d1), distribution=rng_uniform\n"
    "  w0 = f32[] constant(-3e38)\n"
    "  w1 = f32[] constant(3e38)\n"
    "  wide = f32[6] rng(w0, w1), distribution=rng_uniform\n"
    "  h0 = f16[] constant(0)\n"
    "  h1 = f16[] constant(0.001)\n"
    "  h = f16[9] rng(h0, h1), distribution=rng_uniform\n"
    "  g0 = bf16[] constant(-2)\n"
    "  g1 = bf16[] constant(2)\n"
    "  g = bf16[4,2] rng(g0, g1), distribution=rng_uniform\n"
    "  e0 = f8e4m3fn[] constant(0)\n"
    "  e1 = f8e4m3fn[] constant(1)\n"
    "  e8 = f8e4m3fn[40] rng(e0, e1), distribution=rng_uniform\n"
    "  b0 = s8[] constant(-100)\n"
    "  b1 = s8[] constant(100)\n"
    "  i8 = s8[11] rng(b0, b1), distribution=rng_uniform\n"
    "  c0 = u16[] constant(5)\n"
    "  c1 = u16[] constant(60000)\n"
    "  u16 = u16[3] rng(c0, c1), distribution=rng_uniform\n"
    "  l0 = s64[] constant(-5000000000000000000)\n"
    "  l1 = s64[] constant(5000000000000000000)\n"
    "  s64 = s64[4] rng(l0, l1), distribution=rng_uniform\n"
    "  z = u64[] constant(0)\n"
    "  raw = u64[3] rng(z, z), distribution=rng_uniform\n"
    "  f = pred[] constant(false)\n"
    "  t = pred[] constant(true)\n"
    "  pr = pred[6] rng(f, t), distribution=rng_uniform\n"
    "  mu = f32[] constant(1)\n"
    "  sg = f32[] constant(2)\n"
    "  n32 = f32[3,4] rng(mu, sg), distribution=rng_normal\n"
    "  m64 = f64[] constant(-1)\n"
    "  s64b = f64[] constant(0.5)\n"
    "  n64 = f64[3,5] rng(m64, s64b), distribution=rng_normal\n"
    "  mb = bf16[] constant(0)\n"
    "  sb = bf16[] constant(1)\n"
    "  nbf = bf16[2,3] rng(mb, sb), distribution=rng_normal\n"
    /* Sub-byte types, one element a byte: signed ones sign-extended (s4 from -7 through a
     * range that wraps at 4 bits), and the 4-bit float both ways. */
    "  q0 = s4[] constant(-7)\n"
    "  q1 = s4[] constant(6)\n"
    "  q = s4[9] rng(q0, q1), distribution=rng_uniform\n"
    "  v0 = u4[] constant(1)\n"
    "  v1 = u4[] constant(15)\n"
    "  v = u4[2,4] rng(v0, v1), distribution=rng_uniform\n"
    "  x0 = s2[] constant(-2)\n"
    "  x1 = s2[] constant(1)\n"
    "  x = s2[7] rng(x0, x1), distribution=rng_uniform\n"
    "  y0 = u2[] constant(0)\n"
    "  y1 = u2[] constant(0)\n"
    "  y = u2[6] rng(y0, y1), distribution=rng_uniform\n"
    "  k0 = f4e2m1fn[] constant(-6)\n"
    "  k1 = f4e2m1fn[] constant(3)\n"
    "  fk = f4e2m1fn[8] rng(k0, k1), distribution=rng_uniform\n"
    "  v1f = f4e2m1fn[] constant(0.5)\n"
    "  nk = f4e2m1fn[3,3] rng(v1f, k1), distribution=rng_normal\n"
    "  zero = s32[] constant(0)\n"
    "  ones = f32[5] broadcast(b), dimensions={}\n"
    "  init = (s32[], f32[5]) tuple(zero, ones)\n"
    "  loop = (s32[], f32[5]) while(init), condition=cond, body=body\n"
    "  prod = f32[5] get-tuple-element(loop), index=1\n"
    "  st = u64[2] rng-get-and-update-state(), delta=7\n"
    "  ROOT out = (f32[7,3], f64[5], f32[6], f16[9], bf16[4,2], f8e4m3fn[40], s8[11], u16[3], "
    "s64[4], u64[3], pred[6], f32[3,4], f64[3,5], bf16[2,3], s4[9], u4[2,4], s2[7], u2[6], "
    "f4e2m1fn[8], f4e2m1fn[3,3], f32[5], u64[2]) tuple(u32, u64, wide, h, g, e8, i8, u16, s64, "
    "raw, pr, n32, n64, nbf, q, v, x, y, fk, nk, prod, st)\n"
    "}\n";

/* Runs the library four times: plain (seed 0), seed 987654321, and twice more with that
 * seed and a state the caller owns (starting at the interpreter's); writes each run's
 * result leaves, then the caller's state after each of the last two runs. */
static const char *const rng_driver =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include \"rngs.h\"\n"
    "int main(int argc, char **argv) {\n"
    "    if (argc != 2) return 2;\n"
    "    FILE *f = fopen(argv[1], \"wb\");\n"
    "    if (!f) return 3;\n"
    "    float a = -0.5f, b = 4.0f;\n"
    "    const void *args[2] = {&a, &b};\n"
    "    void *res[rngs_result_count];\n"
    "    for (int i = 0; i < rngs_result_count; i++) res[i] = malloc(rngs_result_bytes[i] + 1);\n"
    "    void *scratch = aligned_alloc(64, rngs_scratch_size() / 64 * 64 + 64);\n"
    "    uint64_t state[2] = {0x7012395u, 0};\n"
    "    for (int run = 0; run < 4; run++) {\n"
    "        rngs_options o = {0};\n"
    "        o.seed = run ? 987654321u : 0;\n"
    "        o.rng_state = run >= 2 ? state : 0;\n"
    "        int rc = run == 0 ? rngs_run(args, res, scratch) : rngs_run_with(&o, args, res, "
    "scratch);\n"
    "        if (rc) return 10 + rc;\n"
    "        for (int i = 0; i < rngs_result_count; i++) fwrite(res[i], 1, rngs_result_bytes[i], "
    "f);\n"
    "        if (run >= 2) fwrite(state, 1, sizeof state, f);\n"
    "    }\n"
    "    for (int i = 0; i < rngs_result_count; i++) free(res[i]);\n"
    "    free(scratch);\n"
    "    return fclose(f) != 0;\n"
    "}\n";

/* Compares |leaves| with the bytes at *|p| (advanced past them). */
static void expect_leaves(const leaves *want, const unsigned char **p, const unsigned char *end,
                          const char *what) {
    for (int64_t i = 0; i < want->count; i++) {
        size_t n = want->items[i]->size;
        bool have_bytes = (size_t)(end - *p) >= n;
        CHECK_MSG(have_bytes && same_bits(want->items[i], *p, n, false),
                  "%s: result %" PRId64 " differs from the interpreter", what, i);
        if (!have_bytes) return;
        *p += n;
    }
}

static uint64_t u64_at(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void test_aot_rng(void) {
    const char *compilers[3];
    int ncc = (int)compilers_found(compilers);
    if (ncc == 0) test_skip_all("no C compiler (gcc, clang, tcc) found");
    make_tmpdir();
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(rng_module, strlen(rng_module), "rngs", &m);
    if (!s) s = cxla_verify_module(m);
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_literal *args[2] = {0};
    float av = -0.5f, bv = 4.0f;
    leaves want[2];
    memset(want, 0, sizeof want);
    for (int i = 0; i < 2 && !s; i++) {
        s = cxla_literal_create(&m->entry->params[i]->shape, &args[i]);
        if (!s) memcpy(args[i]->data, i ? &bv : &av, sizeof(float));
    }
    /* The interpreter with seed 0 and with the seed. */
    for (int k = 0; k < 2 && !s; k++) {
        exec_run_options o = {.seed = k ? 987654321u : 0};
        cxla_literal *r = NULL;
        s = interp_run_module(m, &o, (const cxla_literal *const *)args, 2, &r);
        if (!s) s = flatten(r, NULL, &want[k]);
        cxla_literal_free(r);
    }
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    if (!s) s = cpu_aot_write(m, NULL, tmpdir, "rngs");
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    char path[512];
    snprintf(path, sizeof path, "%s/main.c", tmpdir);
    if (!s) s = cxla_write_file(path, rng_driver, strlen(rng_driver));
    CHECK(s == NULL);
    for (int k = 0; k < ncc && !s; k++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && rm -f prog out.bin && %s -std=c11 -Wall -Wextra -Wpedantic -Werror "
                 "-O2 -o prog main.c rngs.c -lm 2>&1 | head -20 && ./prog out.bin",
                 tmpdir, compilers[k]);
        CHECK_MSG(system(cmd) == 0, "%s: the generated program failed", compilers[k]);
        char *data = NULL;
        size_t size = 0;
        snprintf(path, sizeof path, "%s/out.bin", tmpdir);
        cxla_status r = cxla_read_file(path, &data, &size);
        CHECK(r == NULL);
        cxla_status_free(r);
        if (!data) continue;
        const unsigned char *p = (const unsigned char *)data, *end = p + size;
        char what[128];
        snprintf(what, sizeof what, "%s, seed 0", compilers[k]);
        expect_leaves(&want[0], &p, end, what);
        snprintf(what, sizeof what, "%s, seed 987654321", compilers[k]);
        expect_leaves(&want[1], &p, end, what);
        /* The caller's state: the first run starts where the interpreter does (the same
         * results); the second goes on from where the first left the state. */
        snprintf(what, sizeof what, "%s, the caller's state, first run", compilers[k]);
        expect_leaves(&want[1], &p, end, what);
        const cxla_literal *st = want[1].items[want[1].count - 1]; /* before delta=7 */
        uint64_t before = ((const uint64_t *)st->data)[0];
        uint64_t used = before + 7 - 0x7012395u; /* what one run advances the state by */
        bool room = (size_t)(end - p) >= 8;
        CHECK_MSG(room && u64_at(p) == before + 7, "%s: the caller's state after a run", what);
        if (room) p += 16;
        /* Second run: the state it saw before delta=7 is one run further on. */
        size_t all = 0;
        for (int64_t i = 0; i < want[1].count; i++) all += want[1].items[i]->size;
        bool second = (size_t)(end - p) >= all + 16;
        CHECK_MSG(second, "%s: results of the second run missing", compilers[k]);
        if (second) {
            CHECK_MSG(u64_at(p + all - 16) == before + used,
                      "%s: second run's state %" PRIu64 " want %" PRIu64, compilers[k],
                      u64_at(p + all - 16), before + used);
            CHECK_MSG(memcmp(p, want[1].items[0]->data, want[1].items[0]->size) != 0,
                      "%s: the second run repeats the first run's numbers", compilers[k]);
            CHECK(u64_at(p + all) == before + used + 7);
            p += all + 16;
        }
        CHECK(p == end);
        free(data);
    }
    cxla_status_free(s);
    for (int i = 0; i < 2; i++) {
        cxla_literal_free(args[i]);
        leaves_free(&want[i]);
    }
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

/* Complex arithmetic in one fusion (src/cpu/emit_expr.c): a complex constant array (with
 * -0, inf and NaN parts), complex() of f32 parts, convert from f64, broadcast, select,
 * EQ / NE, negate, add, subtract, multiply, divide (by 0, by inf, inf by finite), abs,
 * sign, real and imag, in c64 and c128; the interpreter's bits (any NaN for any NaN). */
static const char *const complex_modules[][2] = {
    {"HloModule c64s\n"
     "ENTRY e {\n"
     "  re = f32[6] parameter(0)\n"
     "  im = f32[6] parameter(1)\n"
     "  d = f64[6] parameter(2)\n"
     "  z = c64[6] complex(re, im)\n"
     "  k = c64[6] constant({(1, -0), (0, 0), (inf, 2), (3, nan), (-2.5, 1e-30), (0, -inf)})\n"
     "  two = c64[] constant((2, -1))\n"
     "  b = c64[6] broadcast(two), dimensions={}\n"
     "  w = c64[6] convert(d)\n"
     "  q = c64[6] divide(z, k)\n"
     "  q2 = c64[6] divide(k, z)\n"
     "  m = c64[6] multiply(q, b)\n"
     "  s = c64[6] subtract(m, w)\n"
     "  a = c64[6] add(s, q2)\n"
     "  eq = pred[6] compare(z, k), direction=EQ\n"
     "  ne = pred[6] compare(z, w), direction=NE\n"
     "  n = c64[6] negate(a)\n"
     "  sel = c64[6] select(eq, n, a)\n"
     "  sg = c64[6] sign(sel)\n"
     "  ab = f32[6] abs(sel)\n"
     "  r = f32[6] real(sg)\n"
     "  i = f32[6] imag(q2)\n"
     "  ROOT t = (c64[6], f32[6], f32[6], f32[6], pred[6], c64[6]) tuple(sel, ab, r, i, ne, "
     "sg)\n"
     "}\n",
     "f32[6] {1, 0, 3.5, -0, 1e30, 7}|f32[6] {-0, 0, 2, inf, -1e30, nan}|"
     "f64[6] {1, 0.1, -3, 1e300, -0, 2.5}"},
    {"HloModule c128s\n"
     "ENTRY e {\n"
     "  a = c128[2,3] parameter(0)\n"
     "  b = c128[2,3] parameter(1)\n"
     "  p = c128[2,3] multiply(a, b)\n"
     "  q = c128[2,3] divide(a, b)\n"
     "  s = c128[2,3] subtract(p, q)\n"
     "  t = c128[3,2] reshape(s)\n"
     "  ab = f64[3,2] abs(t)\n"
     "  sg = c128[3,2] sign(t)\n"
     "  ROOT r = (c128[3,2], f64[3,2], c128[3,2]) tuple(t, ab, sg)\n"
     "}\n",
     "c128[2,3] {{(1, 2), (0, 0), (inf, -1)}, {(1e-300, 1e300), (-0, 3), (nan, 1)}}|"
     "c128[2,3] {{(3, -4), (0, 0), (2, 0)}, {(1e300, 1e-300), (inf, inf), (1, 1)}}"},
    /* The functions of <complex.h> (built by gcc and clang: tcc has none) on Annex G's
     * special values: NaN, infinite and signed zero parts, and 1 and 0 for power. */
    {"HloModule cfns\n"
     "ENTRY e {\n"
     "  a = c64[10] parameter(0)\n"
     "  b = c128[10] parameter(1)\n"
     "  e1 = c64[10] exponential(a)\n"
     "  l1 = c64[10] log(a)\n"
     "  s1 = c64[10] sqrt(a)\n"
     "  t1 = c64[10] tanh(a)\n"
     "  p1 = c64[10] power(a, e1)\n"
     "  at = c64[10] atan2(a, s1)\n"
     "  e2 = c128[10] exponential-minus-one(b)\n"
     "  l2 = c128[10] log-plus-one(b)\n"
     "  g2 = c128[10] logistic(b)\n"
     "  r2 = c128[10] rsqrt(b)\n"
     "  c2 = c128[10] cbrt(b)\n"
     "  h2 = c128[10] acosh(b)\n"
     "  p2 = c128[10] power(b, h2)\n"
     "  ROOT r = (c64[10], c64[10], c64[10], c64[10], c64[10], c64[10], c128[10], c128[10], "
     "c128[10], c128[10], c128[10], c128[10], c128[10]) tuple(e1, l1, s1, t1, p1, at, e2, l2, "
     "g2, r2, c2, h2, p2)\n"
     "}\n",
     "c64[10] {(nan, 0), (0, nan), (inf, nan), (-inf, inf), (-0, -0), (0, -0), (-inf, 0), "
     "(1, 0), (inf, 0), (-0, 1e-40)}|"
     "c128[10] {(nan, -0), (-0, nan), (-inf, nan), (inf, -inf), (-0, 0), (0, 0), (inf, 0), "
     "(1, 0), (-1e-310, 2), (1e300, -1e300)}"},
};

static void test_aot_complex(void) {
    const char *compilers[3];
    int ncc = (int)compilers_found(compilers);
    if (ncc == 0) test_skip_all("no C compiler (gcc, clang, tcc) found");
    make_tmpdir();
    batch b, bc;
    memset(&b, 0, sizeof b);
    memset(&bc, 0, sizeof bc);
    b.index = 900;
    bc.index = 901;
    b.complex_twin = &bc;
    cxla_strbuf_init(&b.includes);
    cxla_strbuf_init(&b.body);
    cxla_strbuf_init(&b.sources);
    cxla_strbuf_init(&bc.includes);
    cxla_strbuf_init(&bc.body);
    cxla_strbuf_init(&bc.sources);
    int skipped = total_skipped;
    for (size_t k = 0; k < sizeof complex_modules / sizeof complex_modules[0]; k++) {
        const char *text = complex_modules[k][0];
        cxla_module *m = NULL;
        cxla_status s = cxla_hlo_parse(text, strlen(text), "complex", &m);
        if (!s) s = cxla_verify_module(m);
        cxla_literal *args[3] = {0};
        int64_t nargs = 0;
        char *inputs = strdup(complex_modules[k][1]);
        for (char *save = NULL, *in = strtok_r(inputs, "|", &save); in && !s;
             in = strtok_r(NULL, "|", &save))
            s = cxla_literal_parse(in, (size_t)-1, NULL, &args[nargs++]);
        free(inputs);
        char where[64];
        snprintf(where, sizeof where, "complex module %zu", k);
        if (!s) s = batch_add(&b, m, args, nargs, where);
        CHECK_MSG(s == NULL, "%s: %s", where, cxla_status_message(s));
        cxla_status_free(s);
        for (int64_t i = 0; i < nargs; i++) cxla_literal_free(args[i]);
        cxla_module_destroy(m);
    }
    CHECK_MSG(total_skipped == skipped, "a complex module does not compile ahead of time");
    CHECK(b.count == 2 && bc.count == 1);
    batch_run(&b, "complex", compilers, ncc);
    if (!test_failures) remove_tmpdir();
}

/* Sub-byte integers (src/cpu/emit_expr.c): s4, u4 and s2 wrap at their width after add,
 * multiply, negate, abs, divide (by 0, -8 / -1) and shifts (logical and arithmetic, by the
 * width and more), popcnt and clz count within the width, converts from f32 saturate and
 * from s32 wrap, compares and selects, all in one fusion; the interpreter's bytes. */
static const char *const subbyte_module =
    "HloModule subbyte\n"
    "ENTRY e {\n"
    "  a = s4[8] parameter(0)\n"
    "  b = s4[8] parameter(1)\n"
    "  u = u4[8] parameter(2)\n"
    "  f = f32[8] parameter(3)\n"
    "  w = s32[8] parameter(4)\n"
    "  add = s4[8] add(a, b)\n"
    "  mul = s4[8] multiply(add, b)\n"
    "  neg = s4[8] negate(mul)\n"
    "  ab = s4[8] abs(a)\n"
    "  dv = s4[8] divide(a, b)\n"
    "  rm = s4[8] remainder(a, b)\n"
    "  shl = s4[8] shift-left(a, b)\n"
    "  sra = s4[8] shift-right-arithmetic(a, b)\n"
    "  srl = s4[8] shift-right-logical(a, b)\n"
    "  usra = u4[8] shift-right-arithmetic(u, u)\n"
    "  uadd = u4[8] add(u, u)\n"
    "  unot = u4[8] not(u)\n"
    "  pc = s4[8] popcnt(a)\n"
    "  cz = u4[8] count-leading-zeros(u)\n"
    "  cf = s4[8] convert(f)\n"
    "  cw = s4[8] convert(w)\n"
    "  cu = s2[8] convert(u)\n"
    "  cs = s32[8] convert(neg)\n"
    "  lt = pred[8] compare(a, b), direction=LT\n"
    "  sel = s4[8] select(lt, dv, rm)\n"
    "  mh = s4[8] multiply(sel, sel)\n"
    "  ROOT t = (s4[8], s4[8], s4[8], s4[8], s4[8], s4[8], u4[8], u4[8], u4[8], s4[8], u4[8], "
    "s4[8], s4[8], s2[8], s32[8], s4[8]) tuple(neg, ab, shl, sra, srl, mh, usra, uadd, unot, "
    "pc, cz, cf, cw, cu, cs, sel)\n"
    "}\n";

static void test_aot_subbyte(void) {
    const char *compilers[3];
    int ncc = (int)compilers_found(compilers);
    if (ncc == 0) test_skip_all("no C compiler (gcc, clang, tcc) found");
    make_tmpdir();
    static const char *const inputs[] = {
        "s4[8] {-8, 7, -1, 0, 3, -8, 5, -3}", "s4[8] {-1, 1, 0, -8, 4, 3, -2, 7}",
        "u4[8] {0, 15, 8, 1, 7, 12, 3, 9}", "f32[8] {-100, 100, 7.9, -8.5, nan, -0.5, 3.5, -7.99}",
        "s32[8] {8, -9, 15, 16, -17, 100, -100, 7}"};
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(subbyte_module, strlen(subbyte_module), "subbyte", &m);
    if (!s) s = cxla_verify_module(m);
    cxla_literal *args[5] = {0};
    for (int i = 0; i < 5 && !s; i++) s = cxla_literal_parse(inputs[i], (size_t)-1, NULL, &args[i]);
    batch b;
    memset(&b, 0, sizeof b);
    b.index = 901;
    cxla_strbuf_init(&b.includes);
    cxla_strbuf_init(&b.body);
    cxla_strbuf_init(&b.sources);
    int skipped = total_skipped;
    if (!s) s = batch_add(&b, m, args, 5, "sub-byte module");
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    CHECK_MSG(total_skipped == skipped && b.count == 1,
              "the sub-byte module does not compile ahead of time");
    batch_run(&b, "subbyte", compilers, ncc);
    for (int i = 0; i < 5; i++) cxla_literal_free(args[i]);
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

/* An rng-start (async sugar) beside a plain rng under a seed: the async-desugar pass puts
 * the rng in a wrapped computation, where it keeps the interpreter's key for the sugar (0
 * before the seed), the plain one its own (aot_rng.c). The first compiler found only. */
static void test_aot_rng_start(void) {
    static const char *const text =
        "HloModule rstart\n"
        "ENTRY e {\n"
        "  lo = f32[] constant(0)\n"
        "  hi = f32[] constant(1)\n"
        "  s = ((f32[], f32[]), f32[4], s32[]) rng-start(lo, hi), distribution=rng_uniform\n"
        "  r = f32[4] rng-done(s)\n"
        "  c = f32[4] rng(lo, hi), distribution=rng_uniform\n"
        "  ROOT t = (f32[4], f32[4]) tuple(r, c)\n"
        "}\n";
    static const char *const driver =
        "#include <stdio.h>\n"
        "#include <stdlib.h>\n"
        "#include \"rstart.h\"\n"
        "int main(int argc, char **argv) {\n"
        "    FILE *f = argc == 2 ? fopen(argv[1], \"wb\") : 0;\n"
        "    if (!f) return 3;\n"
        "    const void *args[1] = {0};\n"
        "    void *res[rstart_result_count];\n"
        "    for (int i = 0; i < rstart_result_count; i++) res[i] = malloc(64);\n"
        "    void *scratch = aligned_alloc(64, rstart_scratch_size() / 64 * 64 + 64);\n"
        "    rstart_options o = {0};\n"
        "    o.seed = 987654321u;\n"
        "    if (rstart_run_with(&o, args, res, scratch)) return 4;\n"
        "    for (int i = 0; i < rstart_result_count; i++) fwrite(res[i], 1, "
        "rstart_result_bytes[i], f);\n"
        "    return fclose(f) != 0;\n"
        "}\n";
    const char *compilers[3];
    if (compilers_found(compilers) == 0) test_skip_all("no C compiler (gcc, clang, tcc) found");
    make_tmpdir();
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "rstart", &m);
    if (!s) s = cxla_verify_module(m);
    leaves want;
    memset(&want, 0, sizeof want);
    exec_run_options o = {.seed = 987654321u};
    cxla_literal *r = NULL;
    if (!s) s = interp_run_module(m, &o, NULL, 0, &r);
    if (!s) s = flatten(r, NULL, &want);
    cxla_literal_free(r);
    if (!s) s = cpu_aot_write(m, NULL, tmpdir, "rstart");
    char path[512];
    snprintf(path, sizeof path, "%s/main.c", tmpdir);
    if (!s) s = cxla_write_file(path, driver, strlen(driver));
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    if (!s) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && rm -f prog out.bin && %s -std=c11 -O1 -o prog main.c rstart.c -lm "
                 "2>&1 | head -20 && ./prog out.bin",
                 tmpdir, compilers[0]);
        CHECK_MSG(system(cmd) == 0, "%s: the generated program failed", compilers[0]);
        char *data = NULL;
        size_t size = 0;
        snprintf(path, sizeof path, "%s/out.bin", tmpdir);
        cxla_status rs = cxla_read_file(path, &data, &size);
        CHECK(rs == NULL);
        cxla_status_free(rs);
        if (data) {
            const unsigned char *p = (const unsigned char *)data, *end = p + size;
            expect_leaves(&want, &p, end, "rng-start under a seed");
            CHECK(p == end);
        }
        free(data);
    }
    cxla_status_free(s);
    leaves_free(&want);
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

TEST_MAIN(TEST(test_aot_rng), TEST(test_aot_complex), TEST(test_aot_subbyte),
          TEST(test_aot_rng_start))
