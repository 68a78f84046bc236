/* Ahead-of-time loops with the JIT's buffer plan (src/cpu/aot.c, share_buffers): state the
 * body passes through is not copied, dynamic-update-slice and scatter update the state's
 * buffer in place, and a while body is called with out == in. Each module is compiled with
 * gcc, clang and tcc (those installed) and compared bit for bit with the interpreter; the
 * modules where the state must NOT share a buffer (a state read after it is updated in the
 * same step, one value used for two state elements, a body that swaps two elements) fail
 * when a wrong alias is made. Then input_output_alias: the caller passes a result the same
 * pointer as its argument (all pairs, some, none), driven by a hand-written program. */
#define AOT_RANDOM /* test_aot.c's machinery only */
#include "cpu/test_aot.c"

/* A scan (bench_scan_N2000_M3's shape, small): xs passed through, ys updated in place. */
static const char *const scan_module =
    "HloModule scan\n"
    "body {\n"
    "  p = (s32[], f32[3], f32[8,3], f32[8,3]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  acc = f32[3] get-tuple-element(p), index=1\n"
    "  ys = f32[8,3] get-tuple-element(p), index=2\n"
    "  xs = f32[8,3] get-tuple-element(p), index=3\n"
    "  z = s32[] constant(0)\n"
    "  x = f32[1,3] dynamic-slice(xs, i, z), dynamic_slice_sizes={1,3}\n"
    "  xr = f32[3] reshape(x)\n"
    "  a2 = f32[3] add(acc, xr)\n"
    "  m = f32[3] multiply(acc, xr)\n"
    "  mr = f32[1,3] reshape(m)\n"
    "  ys2 = f32[8,3] dynamic-update-slice(ys, mr, i, z)\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[3], f32[8,3], f32[8,3]) tuple(i2, a2, ys2, xs)\n"
    "}\n"
    "cond {\n"
    "  p = (s32[], f32[3], f32[8,3], f32[8,3]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(8)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "ENTRY e {\n"
    "  xs = f32[8,3] parameter(0)\n"
    "  z = s32[] constant(0)\n"
    "  c = f32[] constant(1.5)\n"
    "  acc = f32[3] broadcast(c), dimensions={}\n"
    "  zf = f32[] constant(-1)\n"
    "  ys = f32[8,3] broadcast(zf), dimensions={}\n"
    "  t = (s32[], f32[3], f32[8,3], f32[8,3]) tuple(z, acc, ys, xs)\n"
    "  w = (s32[], f32[3], f32[8,3], f32[8,3]) while(t), condition=cond, body=body\n"
    "  a = f32[3] get-tuple-element(w), index=1\n"
    "  y = f32[8,3] get-tuple-element(w), index=2\n"
    "  ROOT r = (f32[3], f32[8,3]) tuple(a, y)\n"
    "}\n";

/* The condition shared by the modules below: i < 5 (an odd count, so a swap shows). */
#define COND3                                                                                      \
    "cond {\n"                                                                                     \
    "  p = (s32[], f32[6], f32[6]) parameter(0)\n"                                                 \
    "  i = s32[] get-tuple-element(p), index=0\n"                                                  \
    "  n = s32[] constant(5)\n"                                                                    \
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"                                             \
    "}\n"
/* The body's start: i, a, b, i + 1 and an update of a's element i (1 + i). */
#define BODY3_START                                                                                \
    "body {\n"                                                                                     \
    "  p = (s32[], f32[6], f32[6]) parameter(0)\n"                                                 \
    "  i = s32[] get-tuple-element(p), index=0\n"                                                  \
    "  a = f32[6] get-tuple-element(p), index=1\n"                                                 \
    "  b = f32[6] get-tuple-element(p), index=2\n"                                                 \
    "  one = s32[] constant(1)\n"                                                                  \
    "  i2 = s32[] add(i, one)\n"                                                                   \
    "  c = f32[] convert(i2)\n"                                                                    \
    "  u = f32[1] broadcast(c), dimensions={}\n"
/* The entry: a = p + 1, b = p * 3, the loop, its two arrays. */
#define ENTRY3(init)                                                                               \
    "ENTRY e {\n"                                                                                  \
    "  p = f32[6] parameter(0)\n"                                                                  \
    "  z = s32[] constant(0)\n"                                                                    \
    "  k1 = f32[] constant(1)\n"                                                                   \
    "  b1 = f32[6] broadcast(k1), dimensions={}\n"                                                 \
    "  a = f32[6] add(p, b1)\n"                                                                    \
    "  k3 = f32[] constant(3)\n"                                                                   \
    "  b3 = f32[6] broadcast(k3), dimensions={}\n"                                                 \
    "  b = f32[6] multiply(p, b3)\n"                                                               \
    "  t = (s32[], f32[6], f32[6]) tuple(" init ")\n"                                              \
    "  w = (s32[], f32[6], f32[6]) while(t), condition=cond, body=body\n"                          \
    "  x = f32[6] get-tuple-element(w), index=1\n"                                                 \
    "  y = f32[6] get-tuple-element(w), index=2\n"                                                 \
    "  ROOT r = (f32[6], f32[6]) tuple(x, y)\n"                                                    \
    "}\n"

static const struct {
    const char *what, *text;
} loop_modules[] = {
    {"a state read after it is updated in the same step (no alias: a is read by s)",
     "HloModule read_after\n" COND3 BODY3_START "  a2 = f32[6] dynamic-update-slice(a, u, i)\n"
     "  s = f32[6] add(a, a2)\n"
     "  ROOT t = (s32[], f32[6], f32[6]) tuple(i2, a2, s)\n"
     "}\n" ENTRY3("z, a, b")},
    {"one value for two state elements (the initial tuple names a twice)",
     "HloModule twice_init\n" COND3 BODY3_START "  a2 = f32[6] dynamic-update-slice(a, u, i)\n"
     "  b2 = f32[6] add(b, b)\n"
     "  ROOT t = (s32[], f32[6], f32[6]) tuple(i2, a2, b2)\n"
     "}\n" ENTRY3("z, a, a")},
    {"one value for two state elements, the first unused after the loop",
     "HloModule twice_unused\n" COND3 BODY3_START "  a2 = f32[6] dynamic-update-slice(a, u, i)\n"
     "  b2 = f32[6] add(b, b)\n"
     "  ROOT t = (s32[], f32[6], f32[6]) tuple(i2, a2, b2)\n"
     "}\n"
     "ENTRY e {\n"
     "  p = f32[6] parameter(0)\n"
     "  z = s32[] constant(0)\n"
     "  a = f32[6] negate(p)\n"
     "  t = (s32[], f32[6], f32[6]) tuple(z, a, a)\n"
     "  w = (s32[], f32[6], f32[6]) while(t), condition=cond, body=body\n"
     "  ROOT y = f32[6] get-tuple-element(w), index=2\n"
     "}\n"},
    {"one value for two state elements (the body's result names a2 twice)",
     "HloModule twice_root\n" COND3 BODY3_START "  a2 = f32[6] dynamic-update-slice(a, u, i)\n"
     "  ROOT t = (s32[], f32[6], f32[6]) tuple(i2, a2, a2)\n"
     "}\n" ENTRY3("z, a, b")},
    {"a body that swaps two state elements",
     "HloModule swap\n" COND3 BODY3_START "  ROOT t = (s32[], f32[6], f32[6]) tuple(i2, b, a)\n"
     "}\n" ENTRY3("z, a, b")},
    {"a body that swaps two state elements, one updated in place",
     "HloModule swap_dus\n" COND3 BODY3_START "  a2 = f32[6] dynamic-update-slice(a, u, i)\n"
     "  ROOT t = (s32[], f32[6], f32[6]) tuple(i2, b, a2)\n"
     "}\n" ENTRY3("z, a, b")},
    {"an element computed from the others after they are read (written in place)",
     "HloModule late\n" COND3 BODY3_START "  s = f32[6] add(a, b)\n"
     "  m = f32[6] multiply(s, b)\n"
     "  ROOT t = (s32[], f32[6], f32[6]) tuple(i2, s, m)\n"
     "}\n" ENTRY3("z, a, b")},
    {"a scatter in the body (in place) and a state read by the entry after the loop",
     "HloModule scatter_loop\n" COND3 "add {\n"
     "  x = f32[] parameter(0)\n"
     "  y = f32[] parameter(1)\n"
     "  ROOT s = f32[] add(x, y)\n"
     "}\n" BODY3_START "  ix = s32[1] broadcast(i), dimensions={}\n"
     "  a2 = f32[6] scatter(a, ix, u), update_window_dims={0}, inserted_window_dims={}, "
     "scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=add\n"
     "  ROOT t = (s32[], f32[6], f32[6]) tuple(i2, a2, b)\n"
     "}\n"
     "ENTRY e {\n"
     "  p = f32[6] parameter(0)\n"
     "  z = s32[] constant(0)\n"
     "  a = f32[6] negate(p)\n"
     "  t = (s32[], f32[6], f32[6]) tuple(z, a, p)\n"
     "  w = (s32[], f32[6], f32[6]) while(t), condition=cond, body=body\n"
     "  x = f32[6] get-tuple-element(w), index=1\n"
     "  y = f32[6] add(x, a)\n"
     "  ROOT r = (f32[6], f32[6]) tuple(x, y)\n"
     "}\n"},
    {"a while in a while body whose state starts from the outer state",
     "HloModule nested\n" COND3 "icond {\n"
     "  p = (s32[], f32[6]) parameter(0)\n"
     "  j = s32[] get-tuple-element(p), index=0\n"
     "  n = s32[] constant(3)\n"
     "  ROOT lt = pred[] compare(j, n), direction=LT\n"
     "}\n"
     "ibody {\n"
     "  p = (s32[], f32[6]) parameter(0)\n"
     "  j = s32[] get-tuple-element(p), index=0\n"
     "  v = f32[6] get-tuple-element(p), index=1\n"
     "  one = s32[] constant(1)\n"
     "  j2 = s32[] add(j, one)\n"
     "  c = f32[] convert(j2)\n"
     "  u = f32[1] broadcast(c), dimensions={}\n"
     "  k = s32[] add(j, j)\n"
     "  v2 = f32[6] dynamic-update-slice(v, u, k)\n"
     "  ROOT t = (s32[], f32[6]) tuple(j2, v2)\n"
     "}\n" BODY3_START "  z = s32[] constant(0)\n"
     "  it = (s32[], f32[6]) tuple(z, a)\n"
     "  iw = (s32[], f32[6]) while(it), condition=icond, body=ibody\n"
     "  a2 = f32[6] get-tuple-element(iw), index=1\n"
     "  b2 = f32[6] add(b, a2)\n"
     "  ROOT t = (s32[], f32[6], f32[6]) tuple(i2, a2, b2)\n"
     "}\n" ENTRY3("z, a, b")},
    {"dynamic-update-slice in the entry: on a temporary (in place), on a parameter (copied), "
     "start indices clamped (s32, u64)",
     "HloModule entry_dus\n"
     "ENTRY e {\n"
     "  p = f32[6,2] parameter(0)\n"
     "  u = f32[2,2] parameter(1)\n"
     "  i = s32[] parameter(2)\n"
     "  j = u64[] parameter(3)\n"
     "  x = f32[6,2] negate(p)\n"
     "  z = s32[] constant(0)\n"
     "  y = f32[6,2] dynamic-update-slice(x, u, i, z)\n"
     "  zu = u64[] constant(0)\n"
     "  q = f32[6,2] dynamic-update-slice(p, u, j, zu)\n"
     "  ROOT r = (f32[6,2], f32[6,2], f32[6,2]) tuple(y, q, p)\n"
     "}\n"},
};

/* Concatenates whose operands are computed in their places (the JIT's "pieces in place"):
 * two dots in the entry's result, two dots in a while body's state (the body's result is
 * its parameter's buffer); not where an operand is used twice, is a parameter, or the
 * pieces would interleave (dimension 1 of [2,8]). */
static const char *const pieces_module =
    "HloModule pieces\n"
    "cond {\n"
    "  p = (s32[], f32[3,3], f32[6,3]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(3)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  p = (s32[], f32[3,3], f32[6,3]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  m = f32[3,3] get-tuple-element(p), index=1\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  d1 = f32[3,3] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  h = f32[] constant(0.5)\n"
    "  hb = f32[3,3] broadcast(h), dimensions={}\n"
    "  m2 = f32[3,3] negate(m)\n"
    "  m3 = f32[3,3] multiply(m2, hb)\n"
    "  d2 = f32[3,3] dot(m2, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  acc2 = f32[6,3] concatenate(d1, d2), dimensions={0}\n"
    "  ROOT t = (s32[], f32[3,3], f32[6,3]) tuple(i2, m3, acc2)\n"
    "}\n"
    "ENTRY e {\n"
    "  x = f32[2,3] parameter(0)\n"
    "  y = f32[3,4] parameter(1)\n"
    "  q = f32[2,4] parameter(2)\n"
    "  mm = f32[3,3] parameter(3)\n"
    "  a = f32[2,4] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  y2 = f32[3,4] negate(y)\n"
    "  b = f32[2,4] dot(x, y2), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  c = f32[4,4] concatenate(a, b), dimensions={0}\n"
    "  x2 = f32[2,3] multiply(x, x)\n"
    "  d = f32[2,4] dot(x2, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  g = f32[4,4] concatenate(d, d), dimensions={0}\n"
    "  e = f32[2,4] dot(x2, y2), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  k = f32[4,4] concatenate(q, e), dimensions={0}\n"
    "  l = f32[2,8] concatenate(d, e), dimensions={1}\n"
    "  z = s32[] constant(0)\n"
    "  zf = f32[] constant(0)\n"
    "  acc = f32[6,3] broadcast(zf), dimensions={}\n"
    "  t = (s32[], f32[3,3], f32[6,3]) tuple(z, mm, acc)\n"
    "  w = (s32[], f32[3,3], f32[6,3]) while(t), condition=cond, body=body\n"
    "  wa = f32[6,3] get-tuple-element(w), index=2\n"
    "  ROOT r = (f32[4,4], f32[4,4], f32[4,4], f32[2,8], f32[6,3]) tuple(c, g, k, l, wa)\n"
    "}\n";

/* A state rewritten by a kernel that reads it at the index it writes (x = x * 0.5 + i): the
 * body's kernel writes it where it lies (cpu_emit_kernel_alias's form), no copy at the end;
 * beside v, which the body reads again after the new x is computed (v2 = v + x after x2),
 * so x2 keeps its own buffer and its copy while v3 is written over v. */
static const char *const alias_module =
    "HloModule alias_state\n"
    "cond {\n"
    "  p = (s32[], f32[512], f32[512]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(5)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  p = (s32[], f32[512], f32[512]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  x = f32[512] get-tuple-element(p), index=1\n"
    "  v = f32[512] get-tuple-element(p), index=2\n"
    "  h = f32[] constant(0.5)\n"
    "  hb = f32[512] broadcast(h), dimensions={}\n"
    "  xh = f32[512] multiply(x, hb)\n"
    "  f = f32[] convert(i)\n"
    "  fb = f32[512] broadcast(f), dimensions={}\n"
    "  x2 = f32[512] add(xh, fb)\n"
    "  b = f32[512] add(x2, x2)\n"
    "  xo = f32[512] optimization-barrier(x)\n"
    "  v2 = f32[512] add(v, xo)\n"
    "  v3 = f32[512] add(v2, b)\n"
    "  one = s32[] constant(1)\n"
    "  ni = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[512], f32[512]) tuple(ni, x2, v3)\n"
    "}\n"
    "ENTRY e {\n"
    "  s = f32[] parameter(0)\n"
    "  io = f32[512] iota(), iota_dimension=0\n"
    "  sb = f32[512] broadcast(s), dimensions={}\n"
    "  init = f32[512] multiply(io, sb)\n"
    "  zero = s32[] constant(0)\n"
    "  t0 = (s32[], f32[512], f32[512]) tuple(zero, init, io)\n"
    "  ROOT w = (s32[], f32[512], f32[512]) while(t0), condition=cond, body=body\n"
    "}\n";

static const char *const loop_inputs[] = {
    "f32[6] {1, -2, 3.5, 0, -0, 100}",
};

static cxla_module *parse_module(const char *text, const char *name) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), name, &m);
    if (!s) s = cxla_verify_module(m);
    CHECK_MSG(s == NULL, "%s: %s", name, cxla_status_message(s));
    cxla_status_free(s);
    return m;
}

static void add_module(batch *b, const char *text, const char *const *inputs, int n,
                       const char *what) {
    cxla_module *m = parse_module(text, what);
    cxla_literal *args[4] = {0};
    cxla_status s = NULL;
    for (int i = 0; i < n && !s && m; i++)
        s = cxla_literal_parse(inputs[i], (size_t)-1, NULL, &args[i]);
    int skipped = total_skipped;
    if (!s && m) s = batch_add(b, m, args, n, what);
    CHECK_MSG(s == NULL, "%s: %s", what, cxla_status_message(s));
    CHECK_MSG(total_skipped == skipped, "%s: does not compile ahead of time", what);
    cxla_status_free(s);
    for (int i = 0; i < n; i++) cxla_literal_free(args[i]);
    cxla_module_destroy(m);
}

/* How many times |needle| occurs in |hay|. */
static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay ? strstr(hay, needle) : NULL; p; p = strstr(p + 1, needle)) n++;
    return n;
}

static void test_aot_loop_state(void) {
    const char *compilers[3];
    int ncc = (int)compilers_found(compilers);
    if (ncc == 0) test_skip_all("no C compiler (gcc, clang, tcc) found");
    make_tmpdir();
    batch b;
    memset(&b, 0, sizeof b);
    b.index = 910;
    cxla_strbuf_init(&b.includes);
    cxla_strbuf_init(&b.body);
    cxla_strbuf_init(&b.sources);
    static const char *const scan_in[] = {
        "f32[8,3] {{1, 2, 3}, {-1, 0.5, 2}, {0, -0, 1}, {3, 3, 3}, {0.25, -4, 8}, {1e10, -1e-10, "
        "2}, {-7, 7, 0.125}, {2, 2, -2}}"};
    add_module(&b, scan_module, scan_in, 1, "scan");
    static const char *const dus_in[] = {"f32[6,2] {{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, "
                                         "12}}",
                                         "f32[2,2] {{-1, -2}, {-3, -4}}", "s32[] 5",
                                         "u64[] 18446744073709551615"};
    for (size_t k = 0; k < sizeof loop_modules / sizeof loop_modules[0]; k++) {
        bool entry_dus = strstr(loop_modules[k].text, "HloModule entry_dus") != NULL;
        add_module(&b, loop_modules[k].text, entry_dus ? dus_in : loop_inputs, entry_dus ? 4 : 1,
                   loop_modules[k].what);
    }
    static const char *const pieces_in[] = {"f32[2,3] {{1, 2, -3}, {0.5, 0, 4}}",
                                            "f32[3,4] {{1, 0, -1, 2}, {3, 0.25, 1, -2}, {0, 1, 1, "
                                            "1}}",
                                            "f32[2,4] {{9, 8, 7, 6}, {5, 4, 3, 2}}",
                                            "f32[3,3] {{0.5, -1, 0}, {1, 0.25, 2}, {-2, 1, 1}}"};
    add_module(&b, pieces_module, pieces_in, 4, "concatenates in place");
    static const char *const alias_in[] = {"f32[] 0.37"};
    add_module(&b, alias_module, alias_in, 1, "state rewritten in place");
    CHECK(b.count == 3 + (int64_t)(sizeof loop_modules / sizeof loop_modules[0]));
    batch_run(&b, "loops", compilers, ncc);

    /* The scan's generated code: ys updated in place, xs and ys (24 floats, 96 bytes) never
     * copied in the body; the entry copies xs into the state once. */
    cxla_module *m = parse_module(scan_module, "scan");
    cxla_strbuf h, src, dat;
    cxla_strbuf_init(&h);
    cxla_strbuf_init(&src);
    cxla_strbuf_init(&dat);
    cxla_status s = m ? cpu_aot_generate(m, NULL, "scan", &h, &src, &dat) : NULL;
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    CHECK_MSG(count_of(src.data, "/* in place: the update into its operand's buffer */") == 1,
              "the scan's dynamic-update-slice is not in place");
    CHECK_MSG(count_of(src.data, ", 96);") == 1, "the scan copies its 96-byte state %d times",
              count_of(src.data, ", 96);"));
    CHECK_MSG(count_of(src.data, "(opt, rng, now, st, sub)") == 1,
              "the body is not called with out == in");
    cxla_module_destroy(m);
    /* The concatenates: one in the entry, one in the body, by pieces. */
    m = parse_module(pieces_module, "pieces");
    src.len = 0;
    s = m ? cpu_aot_generate(m, NULL, "pieces", &h, &src, &dat) : NULL;
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    CHECK_MSG(count_of(src.data, "/* pieces in place:") == 2, "%d concatenates by pieces, want 2",
              count_of(src.data, "/* pieces in place:"));
    cxla_module_destroy(m);
    /* The state rewritten in place: one kernel in its aliased form, called once; the body
     * copies x2 (2048 bytes) and not v3. */
    m = parse_module(alias_module, "alias_state");
    src.len = 0;
    s = m ? cpu_aot_generate(m, NULL, "al", &h, &src, &dat) : NULL;
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    CHECK_MSG(count_of(src.data, "is the result's buffer */") == 1,
              "%d kernel forms writing over an operand, want 1",
              count_of(src.data, "is the result's buffer */"));
    CHECK_MSG(count_of(src.data, ", 2048);") == 1, "the body copies 2048 bytes %d times, want 1",
              count_of(src.data, ", 2048);"));
    cxla_strbuf_free(&h);
    cxla_strbuf_free(&src);
    cxla_strbuf_free(&dat);
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

/* input_output_alias: result 0 (a scan over the donated argument 0) and result 1 (b + b in
 * argument 1's buffer). */
static const char *const donate_module =
    "HloModule donate, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }\n"
    "body {\n"
    "  p = (s32[], f32[16]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  v = f32[16] get-tuple-element(p), index=1\n"
    "  x = f32[1] dynamic-slice(v, i), dynamic_slice_sizes={1}\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  y = f32[1] dynamic-slice(v, i2), dynamic_slice_sizes={1}\n"
    "  s = f32[1] add(x, y)\n"
    "  v2 = f32[16] dynamic-update-slice(v, s, i2)\n"
    "  ROOT t = (s32[], f32[16]) tuple(i2, v2)\n"
    "}\n"
    "cond {\n"
    "  p = (s32[], f32[16]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(15)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "ENTRY e {\n"
    "  a = f32[16] parameter(0)\n"
    "  b = f32[2] parameter(1)\n"
    "  z = s32[] constant(0)\n"
    "  t = (s32[], f32[16]) tuple(z, a)\n"
    "  w = (s32[], f32[16]) while(t), condition=cond, body=body\n"
    "  r0 = f32[16] get-tuple-element(w), index=1\n"
    "  r1 = f32[2] add(b, b)\n"
    "  ROOT r = (f32[16], f32[2]) tuple(r0, r1)\n"
    "}\n";

/* Runs the library four ways: two buffers per pair, the same pointer for both pairs, for
 * the first only, for the second only; each result must be the interpreter's, and an
 * argument the caller did not alias must be left as it was. */
static const char *const donate_driver =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"don.h\"\n"
    "static int load(const char *path, void *p, size_t n) {\n"
    "    FILE *f = fopen(path, \"rb\");\n"
    "    size_t got = f ? fread(p, 1, n, f) : 0;\n"
    "    if (f) fclose(f);\n"
    "    return got == n;\n"
    "}\n"
    "int main(void) {\n"
    "    float a0[16], b0[2], w0[16], w1[2];\n"
    "    if (!load(\"a.bin\", a0, sizeof a0) || !load(\"b.bin\", b0, sizeof b0) ||\n"
    "        !load(\"w0.bin\", w0, sizeof w0) || !load(\"w1.bin\", w1, sizeof w1))\n"
    "        return 2;\n"
    "    if (don_result_bytes[0] != sizeof w0 || don_result_bytes[1] != sizeof w1) return 3;\n"
    "    void *scratch = aligned_alloc(64, don_scratch_size() / 64 * 64 + 64);\n"
    "    for (int mode = 0; mode < 4; mode++) {\n"
    "        float a[16], b[2], r0[16], r1[2];\n"
    "        memcpy(a, a0, sizeof a);\n"
    "        memcpy(b, b0, sizeof b);\n"
    "        const void *args[2] = {a, b};\n"
    "        void *res[2] = {r0, r1};\n"
    "        if (mode == 1 || mode == 2) res[0] = a;\n"
    "        if (mode == 1 || mode == 3) res[1] = b;\n"
    "        int rc = don_run(args, res, scratch);\n"
    "        if (rc) return 10 + mode;\n"
    "        if (memcmp(res[0], w0, sizeof w0) || memcmp(res[1], w1, sizeof w1)) return 20 + "
    "mode;\n"
    "        if (res[0] != a && memcmp(a, a0, sizeof a)) return 30 + mode;\n"
    "        if (res[1] != b && memcmp(b, b0, sizeof b)) return 40 + mode;\n"
    "    }\n"
    "    free(scratch);\n"
    "    puts(\"ok\");\n"
    "    return 0;\n"
    "}\n";

static void test_aot_donated(void) {
    if (!have("gcc")) test_skip_all("no gcc");
    make_tmpdir();
    cxla_module *m = parse_module(donate_module, "donate");
    cxla_literal *args[2] = {0}, *want = NULL;
    cxla_status s = cxla_literal_parse("f32[16] {1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4, 0.5, "
                                       "0.25, 1e30, -1e30}",
                                       (size_t)-1, NULL, &args[0]);
    if (!s) s = cxla_literal_parse("f32[2] {3.5, -0}", (size_t)-1, NULL, &args[1]);
    if (!s && m) s = interp_run_module(m, NULL, (const cxla_literal *const *)args, 2, &want);
    if (!s && m) s = cpu_aot_write(m, NULL, tmpdir, "don");
    char path[512];
    const struct {
        const char *name;
        const cxla_literal *lit;
    } files[] = {{"a.bin", args[0]},
                 {"b.bin", args[1]},
                 {"w0.bin", want ? want->elements[0] : NULL},
                 {"w1.bin", want ? want->elements[1] : NULL}};
    for (int k = 0; k < 4 && !s; k++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, files[k].name);
        s = cxla_write_file(path, files[k].lit->data, files[k].lit->size);
    }
    snprintf(path, sizeof path, "%s/main.c", tmpdir);
    if (!s) s = cxla_write_file(path, donate_driver, strlen(donate_driver));
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    /* The header says which results may be their arguments; the donated entry updates the
     * argument's buffer in place (the body's state is in[1], the caller's args[0]). */
    char *text = NULL;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/don.h", tmpdir);
    s = cxla_read_file(path, &text, &size);
    CHECK(s == NULL);
    cxla_status_free(s);
    CHECK_MSG(text && strstr(text, "results[0] may be args[0]") &&
                  strstr(text, "results[1] may be args[1]"),
              "the header does not name the aliased results");
    free(text);
    text = NULL;
    snprintf(path, sizeof path, "%s/don.c", tmpdir);
    s = cxla_read_file(path, &text, &size);
    CHECK(s == NULL);
    cxla_status_free(s);
    CHECK_MSG(text && strstr(text, "(void *)in[0]), 64);") == NULL,
              "the donated argument is copied into the loop state");
    free(text);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -o prog main.c don.c "
             "-lm 2>&1 | head -20 && ./prog > out.txt",
             tmpdir);
    int rc = system(cmd);
    CHECK_MSG(rc == 0,
              "the donated runs failed (%d: 10+mode run, 20+mode result, 30+/40+mode "
              "an argument changed)",
              WIFEXITED(rc) ? WEXITSTATUS(rc) : rc);
    for (int k = 0; k < 2; k++) cxla_literal_free(args[k]);
    cxla_literal_free(want);
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

TEST_MAIN(TEST(test_aot_loop_state), TEST(test_aot_donated))
