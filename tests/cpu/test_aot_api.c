/* The ahead-of-time library's interface (src/cpu/aot.h), split from tests/cpu/test_aot.c
 * (whose machinery, run_file and parse it includes): the errors for what has no
 * ahead-of-time form, the run options a driver passes (infeed, outfeed, custom calls,
 * replica id, entry layouts), host send and recv with asynchronous pairs, the markers and
 * the ragged all-to-all's errors, the symbols the objects define and use, the library
 * operations' kernels, and the header compiled as C++. */
#define AOT_API /* test_aot.c's machinery, run_file and parse */
#include "cpu/test_aot.c"

/* ---- errors -----------------------------------------------------------------------------------
 */

static void test_aot_errors(void) {
    cxla_strbuf h, c, d;
    cxla_strbuf_init(&h);
    cxla_strbuf_init(&c);
    cxla_strbuf_init(&d);
    /* Collectives that need another device, unbounded dynamic shapes (in the entry and in a
     * loop body), the typed FFI. (A select-and-scatter over a dynamic dimension, once here,
     * compiles: test_aot_dynwin.) */
    const char *bad[][2] = {
        {"HloModule t, replica_count=2\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
         "  ROOT s = f32[] add(x, y)\n}\nENTRY e {\n  p = f32[2] parameter(0)\n"
         "  ROOT my_ar = f32[2] all-reduce(p), replica_groups={{0,1}}, to_apply=add\n}\n",
         "my_ar (all-reduce) in computation e (the entry) has no ahead-of-time form: its group "
         "holds 2 devices"},
        {"HloModule t\nENTRY e {\n  p = f32[?] parameter(0)\n  ROOT n = f32[?] negate(p)\n}\n",
         "unbounded dynamic dimensions"},
        /* An unbounded dimension inside a loop body is named as well. */
        {"HloModule t\nbody {\n  p = (s32[], f32[?]) parameter(0)\n"
         "  i = s32[] get-tuple-element(p), index=0\n  v = f32[?] get-tuple-element(p), index=1\n"
         "  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n  my_neg = f32[?] negate(v)\n"
         "  ROOT t = (s32[], f32[?]) tuple(i2, my_neg)\n}\ncond {\n"
         "  p = (s32[], f32[?]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
         "  three = s32[] constant(3)\n  ROOT lt = pred[] compare(i, three), direction=LT\n}\n"
         "ENTRY e {\n  x = f32[?] parameter(0)\n  zero = s32[] constant(0)\n"
         "  init = (s32[], f32[?]) tuple(zero, x)\n"
         "  w = (s32[], f32[?]) while(init), condition=cond, body=body\n"
         "  ROOT r = f32[?] get-tuple-element(w), index=1\n}\n",
         "unbounded dynamic dimensions"},
        {"HloModule t\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT my_cc = f32[2] custom-call(p), "
         "custom_call_target=\"f\", api_version=API_VERSION_TYPED_FFI\n}\n",
         "my_cc (custom-call)"},
        /* collective-permute's in-place form receiving from replica 1 (the plain form's
         * refusal has the same words). */
        {"HloModule t, replica_count=2\nENTRY e {\n  a = s32[4] parameter(0)\n"
         "  b = s32[4] parameter(1)\n  i = s32[] constant(0)\n  t = (s32[]) tuple(i)\n"
         "  ROOT my_cp = s32[4] collective-permute(a, b, t, t), "
         "source_target_pairs={{0,1},{1,0}}, slice_sizes={{2}}\n}\n",
         "my_cp (collective-permute) in computation e (the entry) has no ahead-of-time form: "
         "device 0 receives from device 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cxla_module *m = parse(bad[i][0]);
        const char *msg =
            test_expect_error(cpu_aot_generate(m, NULL, "t", &h, &c, &d), __FILE__, __LINE__);
        CHECK_MSG(strstr(msg, bad[i][1]) != NULL, "case %zu: %s", i, msg);
        cxla_module_destroy(m);
    }
    cxla_strbuf_free(&h);
    cxla_strbuf_free(&c);
    cxla_strbuf_free(&d);
}

/* The options of NAME_run_with: custom calls through the table (api_version 3 with the
 * opaque bytes; a failing one; a missing one; one entered with the wrong api_version),
 * infeed and outfeed through callbacks, entry layouts that are not row-major (an argument
 * and results in column-major order), a collective on one device, and the error codes and
 * messages. The expected numbers are worked out by hand in the comments. */
static const char *const options_module =
    "HloModule opts, entry_computation_layout={(f32[2,3]{0,1})->(f32[3,2]{0,1}, "
    "f32[2,3]{0,1}, s32[2], u32[])}\n"
    "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
    "ENTRY e {\n"
    "  p = f32[2,3]{0,1} parameter(0)\n"
    "  t0 = token[] after-all()\n"
    "  in = (s32[2], token[]) infeed(t0), infeed_config=\"cfg\"\n"
    "  d = s32[2] get-tuple-element(in), index=0\n"
    "  t1 = token[] get-tuple-element(in), index=1\n"
    "  o = token[] outfeed(p, t1), outfeed_config=\"ocfg\"\n"
    "  ar = f32[2,3] all-reduce(p), replica_groups={{0}}, to_apply=add\n"
    "  c = f32[2,3] custom-call(ar), custom_call_target=\"my_double\", "
    "api_version=API_VERSION_STATUS_RETURNING_UNIFIED, backend_config=\"x2\"\n"
    "  tr = f32[3,2] transpose(p), dimensions={1,0}\n"
    "  id = u32[] replica-id()\n"
    "  ROOT r = (f32[3,2]{0,1}, f32[2,3]{0,1}, s32[2], u32[]) tuple(tr, c, d, id)\n"
    "}\n";

static const char *const options_driver =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"opts.h\"\n"
    "static float outbuf[6];\n"
    "static int feed(void *user, const char *instr, const char *config, void *const *leaves,\n"
    "                const size_t *bytes, int count) {\n"
    "    int32_t v[2] = {7, -9};\n"
    "    (void)user;\n"
    "    if (count != 1 || bytes[0] != 8 || strcmp(config, \"cfg\") || strcmp(instr, \"in\")) "
    "return 1;\n"
    "    memcpy(leaves[0], v, 8);\n"
    "    return 0;\n"
    "}\n"
    "static int outf(void *user, const char *instr, const char *config, const void *const "
    "*leaves,\n"
    "                const size_t *bytes, int count) {\n"
    "    (void)user;\n"
    "    (void)instr;\n"
    "    if (count != 1 || bytes[0] != 24 || strcmp(config, \"ocfg\")) return 1;\n"
    "    memcpy(outbuf, leaves[0], 24);\n"
    "    return 0;\n"
    "}\n"
    "static void dbl(void *out, const void **in, const char *opaque, size_t len,\n"
    "                opts_custom_call_status *st) {\n"
    "    const float *x = in[0];\n"
    "    float *y = out;\n"
    "    if (len != 2 || memcmp(opaque, \"x2\", 2)) {\n"
    "        st->failed = 1;\n"
    "        return;\n"
    "    }\n"
    "    for (int i = 0; i < 6; i++) {\n"
    "        if (x[i] < 0) {\n"
    "            st->failed = 1;\n"
    "            strcpy(st->message, \"negative input\");\n"
    "            return;\n"
    "        }\n"
    "        y[i] = 2 * x[i];\n"
    "    }\n"
    "}\n"
    "int main(void) {\n"
    "    float p[6], tr[6], c[6];\n"
    "    int32_t d[2];\n"
    "    uint32_t id = 5;\n"
    "    /* p[i][j] = 3i + j + 1, column-major: at j * 2 + i */\n"
    "    for (int i = 0; i < 2; i++)\n"
    "        for (int j = 0; j < 3; j++) p[j * 2 + i] = (float)(3 * i + j + 1);\n"
    "    const void *args[1] = {p};\n"
    "    void *res[4] = {tr, c, d, &id};\n"
    "    void *scratch = malloc(opts_scratch_size() + 64);\n"
    "    char *sc = (char *)scratch + (64 - (size_t)scratch % 64) % 64;\n"
    "    char err[200] = \"\";\n"
    "    opts_custom_call table[1] = {{\"my_double\", (opts_custom_call_fn)dbl, 3}};\n"
    "    opts_options o = {table, 1, feed, outf, NULL, err, sizeof err, 0, 0, 0, 0};\n"
    "    int rc = opts_run_with(&o, args, res, sc);\n"
    "    printf(\"rc %d\\n\", rc);\n"
    "    for (int i = 0; i < 6; i++) printf(\"%g %g %g\\n\", tr[i], c[i], outbuf[i]);\n"
    "    printf(\"d %d %d id %u\\n\", (int)d[0], (int)d[1], (unsigned)id);\n"
    "    opts_options none;\n"
    "    memset(&none, 0, sizeof none);\n"
    "    none.error = err;\n"
    "    none.error_size = sizeof err;\n"
    "    none.infeed = feed;\n"
    "    none.outfeed = outf;\n"
    "    rc = opts_run_with(&none, args, res, sc);\n"
    "    printf(\"missing %d %s\\n\", rc == opts_ERROR_NO_CUSTOM_CALL, err);\n"
    "    table[0].api_version = 1;\n"
    "    rc = opts_run_with(&o, args, res, sc);\n"
    "    printf(\"api %d\\n\", rc == opts_ERROR_CUSTOM_CALL_API);\n"
    "    table[0].api_version = 3;\n"
    "    p[3] = -1;\n"
    "    rc = opts_run_with(&o, args, res, sc);\n"
    "    printf(\"failed %d %s | %s\\n\", rc == opts_ERROR_CUSTOM_CALL_FAILED, err,\n"
    "           opts_error_string(rc));\n"
    "    p[3] = 5;\n"
    "    o.infeed = 0;\n"
    "    rc = opts_run_with(&o, args, res, sc);\n"
    "    printf(\"no infeed %d\\n\", rc == opts_ERROR_NO_HOST_CALLBACK);\n"
    "    rc = opts_run_with(&o, 0, res, sc);\n"
    "    printf(\"null %d %s\\n\", rc == opts_ERROR_NULL_ARGUMENT, opts_error_string(rc));\n"
    "    free(scratch);\n"
    "    return 0;\n"
    "}\n";

static void test_aot_options(void) {
    if (!have("gcc")) test_skip_all("no gcc");
    make_tmpdir();
    cxla_module *m = parse(options_module);
    cxla_status s = cpu_aot_write(m, NULL, tmpdir, "opts");
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    char path[512], cmd[2048];
    snprintf(path, sizeof path, "%s/main.c", tmpdir);
    s = cxla_write_file(path, options_driver, strlen(options_driver));
    CHECK(s == NULL);
    cxla_status_free(s);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -o prog main.c opts.c "
             "-lm 2>&1 | head -20 && ./prog > out.txt",
             tmpdir);
    CHECK(system(cmd) == 0);
    char *text = NULL;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/out.txt", tmpdir);
    s = cxla_read_file(path, &text, &size);
    CHECK(s == NULL);
    cxla_status_free(s);
    /* tr = p^T in column-major order: tr[a][b] = p[b][a] at a + 3b, i.e. 3b + a + 1 = 1..6;
     * c = 2p in p's column-major order; the outfeed sees p row-major (1..6). */
    const char *want = "rc 0\n"
                       "1 2 1\n2 8 2\n3 4 3\n4 10 4\n5 6 5\n6 12 6\n"
                       "d 7 -9 id 0\n"
                       "missing 1 c (custom-call): no function for custom-call target my_double\n"
                       "api 1\n"
                       "failed 1 c (custom-call): the custom call failed: negative input | "
                       "opts_run: a custom call failed\n"
                       "no infeed 1\n"
                       "null 1 opts_run: an argument pointer is NULL\n";
    CHECK_MSG(text && strcmp(text, want) == 0, "got:\n%s\nwant:\n%s", text ? text : "(none)", want);
    free(text);
    /* 32-bit and big-endian: no such libc or emulator here, so the generated C is only
     * checked to compile (-fsyntax-only) for i386 with SSE (FLT_EVAL_METHOD 0) and for
     * 32-bit big-endian PowerPC, against the x86-64 C headers (an empty gnu/stubs-32.h
     * stands in for the missing 32-bit one). Skipped where even that does not work. */
    const char *targets[] = {"gcc -m32 -msse2 -mfpmath=sse", "clang --target=powerpc-linux-gnu"};
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/shim/gnu' && : > '%s/shim/gnu/stubs-32.h'", tmpdir,
             tmpdir);
    CHECK(system(cmd) == 0);
    for (int t = 0; t < 2; t++) {
        char flags[600];
        snprintf(flags, sizeof flags,
                 "%s -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I'%s/shim' "
                 "-idirafter /usr/include/x86_64-linux-gnu",
                 targets[t], tmpdir);
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && printf '#include <stdint.h>\n#include <math.h>\n#include "
                 "<string.h>\nint x;\n' > probe.c && %s probe.c >/dev/null 2>&1",
                 tmpdir, flags);
        if (system(cmd) != 0) {
            fprintf(stderr, "aot: no %s with headers here: not checked\n", targets[t]);
            continue;
        }
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && %s opts.c > err.txt 2>&1; rc=$?; head -10 err.txt; exit $rc", tmpdir,
                 flags);
        CHECK_MSG(system(cmd) == 0, "the generated code does not compile with %s", targets[t]);
    }
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

/* send / recv through the options' callbacks, and the async forms of one-device
 * collectives and of a wrapped computation. p = {1, 2} goes to channel 5; the recv on
 * channel 6 brings {10, 20}; the async-start adds them (11, 22); the all-gather and the
 * collective-permute of a group of one pass that on. */
static const char *const hostio_module =
    "HloModule hostio\n"
    "wrapped {\n  x = f32[2] parameter(0)\n  y = f32[2] parameter(1)\n"
    "  ROOT s = f32[2] add(x, y)\n}\n"
    "ENTRY e {\n"
    "  p = f32[2] parameter(0)\n"
    "  t0 = token[] after-all()\n"
    "  snd = (f32[2], u32[], token[]) send(p, t0), channel_id=5, is_host_transfer=true\n"
    "  sd = token[] send-done(snd), channel_id=5, is_host_transfer=true\n"
    "  rcv = (f32[2], u32[], token[]) recv(sd), channel_id=6\n"
    "  rd = (f32[2], token[]) recv-done(rcv), channel_id=6\n"
    "  r = f32[2] get-tuple-element(rd), index=0\n"
    "  as = ((f32[2], f32[2]), f32[2], s32[]) async-start(p, r), calls=wrapped\n"
    "  au = ((f32[2], f32[2]), f32[2], s32[]) async-update(as), calls=wrapped\n"
    "  ad = f32[2] async-done(au), calls=wrapped\n"
    "  ags = (f32[2], f32[2]) all-gather-start(ad), replica_groups={{0}}, dimensions={0}\n"
    "  agd = f32[2] all-gather-done(ags)\n"
    "  cps = (f32[2], f32[2], u32[], u32[]) collective-permute-start(agd), "
    "source_target_pairs={{0,0}}\n"
    "  ROOT cpd = f32[2] collective-permute-done(cps)\n"
    "}\n";

static const char *const hostio_driver =
    "#include <stdio.h>\n#include <string.h>\n#include \"hostio.h\"\n"
    "static float sent[2];\n"
    "static int snd(void *user, const char *instr, int64_t ch, int host, const void *const *l,\n"
    "               const size_t *bytes, int count) {\n"
    "    (void)user;\n"
    "    printf(\"send %s ch %d host %d count %d bytes %d\\n\", instr, (int)ch, host, count,\n"
    "           (int)bytes[0]);\n"
    "    memcpy(sent, l[0], 8);\n"
    "    return 0;\n"
    "}\n"
    "static int rcv(void *user, const char *instr, int64_t ch, int host, void *const *l,\n"
    "               const size_t *bytes, int count) {\n"
    "    float v[2] = {10, 20};\n"
    "    printf(\"recv %s ch %d host %d count %d bytes %d\\n\", instr, (int)ch, host, count,\n"
    "           (int)bytes[0]);\n"
    "    memcpy(l[0], v, 8);\n"
    "    return user != 0;\n"
    "}\n"
    "int main(void) {\n"
    "    float p[2] = {1, 2}, out[2] = {0, 0};\n"
    "    static char scratch[hostio_SCRATCH_SIZE + 64];\n"
    "    char *sc = scratch + (64 - (size_t)scratch % 64) % 64;\n"
    "    const void *args[1] = {p};\n"
    "    void *res[1] = {out};\n"
    "    char err[200] = \"\";\n"
    "    hostio_options o;\n"
    "    memset(&o, 0, sizeof o);\n"
    "    o.error = err;\n"
    "    o.error_size = sizeof err;\n"
    "    o.send = snd;\n"
    "    o.recv = rcv;\n"
    "    int rc = hostio_run_with(&o, args, res, sc);\n"
    "    printf(\"rc %d out %g %g sent %g %g\\n\", rc, out[0], out[1], sent[0], sent[1]);\n"
    "    o.user = &o;\n"
    "    rc = hostio_run_with(&o, args, res, sc);\n"
    "    printf(\"failed %d %s\\n\", rc == hostio_ERROR_RECV, err);\n"
    "    o.recv = 0;\n"
    "    rc = hostio_run_with(&o, args, res, sc);\n"
    "    printf(\"none %d %s\\n\", rc == hostio_ERROR_NO_HOST_CALLBACK, err);\n"
    "    return 0;\n"
    "}\n";

static void test_aot_send_recv_async(void) {
    if (!have("gcc")) test_skip_all("no gcc");
    make_tmpdir();
    cxla_module *m = parse(hostio_module);
    cxla_status s = cpu_aot_write(m, NULL, tmpdir, "hostio");
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    char path[512], cmd[2048];
    snprintf(path, sizeof path, "%s/main.c", tmpdir);
    CHECK_OK(cxla_write_file(path, hostio_driver, strlen(hostio_driver)));
    snprintf(cmd, sizeof cmd,
             "cd '%s' && gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -o prog main.c "
             "hostio.c -lm 2>&1 | head -20 && ./prog > out.txt",
             tmpdir);
    CHECK(system(cmd) == 0);
    char *text = NULL;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/out.txt", tmpdir);
    CHECK_OK(cxla_read_file(path, &text, &size));
    const char *want = "send snd ch 5 host 1 count 1 bytes 8\n"
                       "recv rd ch 6 host 0 count 1 bytes 8\n"
                       "rc 0 out 11 22 sent 1 2\n"
                       "send snd ch 5 host 1 count 1 bytes 8\n"
                       "recv rd ch 6 host 0 count 1 bytes 8\n"
                       "failed 1 rd (recv-done): the recv callback failed\n"
                       "send snd ch 5 host 1 count 1 bytes 8\n"
                       "none 1 rcv (recv): no recv callback in the options\n";
    CHECK_MSG(text && strcmp(text, want) == 0, "got:\n%s\nwant:\n%s", text ? text : "(none)", want);
    free(text);
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

/* Forms the JIT leaves to the interpreter's handler (so that they stay out of
 * tests/hlo/cases, where test_cpu_handlers refuses them) but ahead-of-time code compiles,
 * bit for bit against the interpreter with gcc: the markers that are their operands on one
 * device (domain, with add-dependency, a Sharding target and opt-barrier), and a custom
 * fusion of a batched bf16 dot with two results (its fused computation run as a call). */
static void test_aot_markers(void) {
    if (!have("gcc")) test_skip_all("no gcc");
    const char *gcc[1] = {"gcc"};
    make_tmpdir();
    static const struct {
        const char *module, *args[2];
    } cases[] = {
        {"HloModule markers\n"
         "ENTRY e {\n"
         "  p = f32[3] parameter(0)\n"
         "  q = s8[2,2] parameter(1)\n"
         "  d = f32[3] domain(p), domain={kind=\"sharding\", entry={maximal device=0}, "
         "exit={replicated}}\n"
         "  n = f32[3] negate(d)\n"
         "  t = token[] after-all()\n"
         "  a = s8[2,2] add-dependency(q, t)\n"
         "  s = s8[2,2] custom-call(a), custom_call_target=\"Sharding\", sharding={replicated}\n"
         "  b = (f32[3], s8[2,2]) tuple(n, s)\n"
         "  o = (f32[3], s8[2,2]) opt-barrier(b)\n"
         "  o0 = f32[3] get-tuple-element(o), index=0\n"
         "  o1 = s8[2,2] get-tuple-element(o), index=1\n"
         "  ROOT r = (f32[3], s8[2,2], f32[3]) tuple(o0, o1, d)\n"
         "}\n",
         {"f32[3] {1.5, -0, nan}", "s8[2,2] {{-128, 127}, {0, 5}}"}},
        /* 514.5 and -1015.125 round once to bf16 (516, -1016); the reduce adds in bf16. */
        {"HloModule fused_dot_tuple\n"
         "add {\n  x = bf16[] parameter(0)\n  y = bf16[] parameter(1)\n"
         "  ROOT s = bf16[] add(x, y)\n}\n"
         "fused {\n  a = bf16[2,2,3] parameter(0)\n  b = bf16[2,3,2] parameter(1)\n"
         "  d = bf16[2,2,2] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
         "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n"
         "  z = bf16[] constant(0)\n"
         "  r = bf16[2] reduce(d, z), dimensions={1,2}, to_apply=add\n"
         "  ROOT t = (bf16[2,2,2], bf16[2]) tuple(d, r)\n}\n"
         "ENTRY main {\n  a = bf16[2,2,3] parameter(0)\n  b = bf16[2,3,2] parameter(1)\n"
         "  ROOT f = (bf16[2,2,2], bf16[2]) fusion(a, b), kind=kCustom, calls=fused\n}\n",
         {"bf16[2,2,3] {{{1, 2, 3}, {4, 5, 6}}, {{0.5, -1, 2}, {3, 0.125, -4}}}",
          "bf16[2,3,2] {{{1, 0}, {0, 1}, {1, 1}}, {{2, 3}, {1, -1}, {0.5, 256}}}"}},
    };
    batch b;
    memset(&b, 0, sizeof b);
    b.index = 9100;
    cxla_strbuf_init(&b.includes);
    cxla_strbuf_init(&b.body);
    cxla_strbuf_init(&b.sources);
    int count = (int)(sizeof cases / sizeof cases[0]), skipped = total_skipped;
    int compiled = total_compiled;
    for (int i = 0; i < count; i++) {
        cxla_literal *args[2] = {NULL, NULL};
        for (int k = 0; k < 2; k++)
            CHECK_OK(cxla_literal_parse(cases[i].args[k], (size_t)-1, NULL, &args[k]));
        cxla_module *m = parse(cases[i].module);
        char where[64];
        snprintf(where, sizeof where, "markers case %d", i);
        CHECK_OK(batch_add(&b, m, args, 2, where));
        cxla_module_destroy(m);
        cxla_literal_free(args[0]);
        cxla_literal_free(args[1]);
    }
    CHECK_MSG(total_skipped == skipped && b.count == count,
              "a case does not compile ahead of time");
    batch_run(&b, "markers", gcc, 1);
    CHECK(total_compiled - compiled == count);
    if (!test_failures) remove_tmpdir();
}

/* ragged-all-to-all on one device fails as the interpreter fails, with its message: sizes
 * that recv_sizes does not expect, rows outside the input, rows outside the output. */
static const char *const ragged_module =
    "HloModule rg\n"
    "ENTRY e {\n"
    "  x = s32[4] parameter(0)\n  o = s32[3] parameter(1)\n  io = s32[2] parameter(2)\n"
    "  ss = s32[2] parameter(3)\n  oo = s32[2] parameter(4)\n  rs = s32[2] parameter(5)\n"
    "  ROOT my_r = s32[3] ragged-all-to-all(x, o, io, ss, oo, rs), replica_groups={}\n"
    "}\n";

static void test_aot_ragged_errors(void) {
    if (!have("gcc")) test_skip_all("no gcc");
    make_tmpdir();
    cxla_module *m = parse(ragged_module);
    cxla_status s = cpu_aot_write(m, NULL, tmpdir, "rg");
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    /* io, ss, oo, rs for each run: one that succeeds, then the three failures. */
    static const int32_t meta[4][4][2] = {
        {{0, 2}, {2, 1}, {0, 2}, {2, 1}},  /* rows 0..1 -> 0..1, row 2 -> 2 */
        {{0, 2}, {2, 1}, {0, 2}, {2, 2}},  /* update 1 sends 1 row, 2 expected */
        {{0, 3}, {2, 2}, {0, 0}, {2, 2}},  /* update 1: rows 3..5 of a 4-row input */
        {{0, 0}, {1, 1}, {0, -1}, {1, 1}}, /* update 1: to row -1 of the output */
    };
    cxla_strbuf prog;
    cxla_strbuf_init(&prog);
    cxla_strbuf_puts(&prog, "#include <stdio.h>\n#include <string.h>\n#include \"rg.h\"\n"
                            "int main(void) {\n"
                            "    int32_t x[4] = {10, 11, 12, 13}, o[3], r[3];\n"
                            "    static char scratch[rg_SCRATCH_SIZE + 64];\n"
                            "    char *sc = scratch + (64 - (size_t)scratch % 64) % 64;\n"
                            "    char err[300];\n"
                            "    rg_options opt;\n"
                            "    memset(&opt, 0, sizeof opt);\n"
                            "    opt.error = err;\n"
                            "    opt.error_size = sizeof err;\n");
    for (int k = 0; k < 4; k++) {
        cxla_strbuf_puts(&prog, "    {\n");
        for (int j = 0; j < 4; j++)
            cxla_strbuf_printf(&prog, "        int32_t m%d[2] = {%d, %d};\n", j, meta[k][j][0],
                               meta[k][j][1]);
        cxla_strbuf_puts(
            &prog, "        const void *args[6] = {x, o, m0, m1, m2, m3};\n"
                   "        void *res[1] = {r};\n"
                   "        o[0] = o[1] = o[2] = -1;\n"
                   "        err[0] = 0;\n"
                   "        int rc = rg_run_with(&opt, args, res, sc);\n"
                   "        printf(\"%d %d %d %d|%s\\n\", rc, (int)r[0], (int)r[1], (int)r[2],\n"
                   "               rc ? err : \"\");\n"
                   "    }\n");
    }
    cxla_strbuf_puts(&prog, "    return 0;\n}\n");
    char path[512], cmd[2048];
    snprintf(path, sizeof path, "%s/main.c", tmpdir);
    CHECK_OK(cxla_write_file(path, prog.data, prog.len));
    cxla_strbuf_free(&prog);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -o prog main.c rg.c "
             "-lm 2>&1 | head -20 && ./prog > out.txt",
             tmpdir);
    CHECK(system(cmd) == 0);
    char *text = NULL;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/out.txt", tmpdir);
    CHECK_OK(cxla_read_file(path, &text, &size));
    /* The interpreter's results and messages for the same runs. */
    cxla_strbuf want;
    cxla_strbuf_init(&want);
    for (int k = 0; k < 4; k++) {
        cxla_literal *args[6] = {0}, *got = NULL;
        const char *texts[2] = {"s32[4] {10, 11, 12, 13}", "s32[3] {-1, -1, -1}"};
        for (int j = 0; j < 2; j++)
            CHECK_OK(cxla_literal_parse(texts[j], (size_t)-1, NULL, &args[j]));
        for (int j = 0; j < 4; j++) {
            char lit[64];
            snprintf(lit, sizeof lit, "s32[2] {%d, %d}", meta[k][j][0], meta[k][j][1]);
            CHECK_OK(cxla_literal_parse(lit, (size_t)-1, NULL, &args[2 + j]));
        }
        cxla_status e = interp_run_module(m, NULL, (const cxla_literal *const *)args, 6, &got);
        if (e) {
            cxla_strbuf_printf(&want, "15 ");
            /* the results are unspecified after a failure: the driver prints them anyway */
            const char *bar = text ? text : "";
            for (int line = 0; line < k && bar; line++)
                bar = strchr(bar, '\n') ? strchr(bar, '\n') + 1 : NULL;
            const char *sp = bar ? strchr(bar, ' ') : NULL;
            const char *pipe = bar ? strchr(bar, '|') : NULL;
            if (sp && pipe && pipe > sp) cxla_strbuf_append(&want, sp + 1, (size_t)(pipe - sp - 1));
            cxla_strbuf_printf(&want, "|%s\n", cxla_status_message(e));
        } else {
            const int32_t *v = cxla_literal_data_const(got);
            cxla_strbuf_printf(&want, "0 %d %d %d|\n", (int)v[0], (int)v[1], (int)v[2]);
        }
        cxla_status_free(e);
        cxla_literal_free(got);
        for (int j = 0; j < 6; j++) cxla_literal_free(args[j]);
    }
    CHECK_MSG(text && want.data && strcmp(text, want.data) == 0, "got:\n%s\nwant:\n%s",
              text ? text : "(none)", want.data ? want.data : "");
    /* The first run succeeds and the others fail: the test is not vacuous. */
    CHECK(text && strncmp(text, "0 10 11 12|", 11) == 0);
    if (getenv("CXLA_TEST_VERBOSE")) fprintf(stderr, "%s", want.data ? want.data : "");
    /* Three failures, each with code 15. */
    int failures = 0;
    for (const char *p = text; p && (p = strstr(p, "\n15 ")); p++) failures++;
    CHECK(failures == 3);
    free(text);
    cxla_strbuf_free(&want);
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

/* docs/aot.md's promises about what the generated code links against (check_objects): the
 * hand-written modules with custom calls, infeed, outfeed, send, recv and async steps, and
 * the modules of some case files (CXLA_AOT_SYMBOL_FILES="a.hlo b.hlo" for others, "all" for
 * every one), compiled with gcc: no writable data, no symbol but libm's and memcpy's kin. */
static void test_aot_symbols(void) {
    if (!have("gcc") || !have("nm")) test_skip_all("no gcc or nm");
    make_tmpdir();
    const char *const mods[][2] = {{options_module, "opts"}, {hostio_module, "hostio"}};
    for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++) {
        cxla_module *m = parse(mods[i][0]);
        cxla_status s = cpu_aot_write(m, NULL, tmpdir, mods[i][1]);
        CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
        cxla_status_free(s);
        char src[700];
        snprintf(src, sizeof src, " '%s/%s.c'", tmpdir, mods[i][1]);
        CHECK(check_objects(mods[i][1], src) == 1);
        cxla_module_destroy(m);
    }
    /* While loops and conditionals, rng, sort, fft, complex linear algebra (libm's complex
     * functions), scan, topk, collectives on one device, dynamic shapes (sizes in the
     * functions' frames), the column sums of reduce (stack partials), fused dots. */
    const char *files = getenv("CXLA_AOT_SYMBOL_FILES");
    if (!files)
        files = "control.hlo rng.hlo sort.hlo fft.hlo linalg2_complex.hlo scan.hlo topk.hlo "
                "single_device.hlo collectives_in_place.hlo dynamic_control.hlo "
                "dynamic_moves.hlo reduce.hlo fusion_dot.hlo elementwise_unary_float.hlo";
    const char *dir = CXLA_SOURCE_DIR "/tests/hlo/cases";
    char *list = NULL;
    if (strcmp(files, "all") == 0) {
        cxla_strbuf all;
        cxla_strbuf_init(&all);
        DIR *d = opendir(dir);
        for (struct dirent *e; d && (e = readdir(d));) {
            size_t len = strlen(e->d_name);
            if (len > 4 && strcmp(e->d_name + len - 4, ".hlo") == 0)
                cxla_strbuf_printf(&all, "%s ", e->d_name);
        }
        if (d) closedir(d);
        list = all.data ? strdup(all.data) : strdup("");
        cxla_strbuf_free(&all);
    } else {
        list = strdup(files);
    }
    const char *gcc[1] = {"gcc"};
    int index = 0, before = total_compiled;
    symbols_only = true;
    for (char *save = NULL, *name = strtok_r(list, " ", &save); name;
         name = strtok_r(NULL, " ", &save)) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        run_file(path, 5000 + index++, gcc, 1, false);
    }
    symbols_only = false;
    free(list);
    fprintf(stderr, "aot: the objects of %d cases hold no writable data and call only libm\n",
            total_compiled - before);
    CHECK(total_compiled - before >= 50 || getenv("CXLA_AOT_SYMBOL_FILES"));
    if (!test_failures) remove_tmpdir();
}

/* The header compiles as C++ too (extern "C"), and the files land where cpu_aot_write says. */
/* The library-like operations have generated kernels (src/cpu/emit_lib.c), so they compile
 * ahead of time (test_aot_cases runs them against the interpreter); those that need work
 * memory get it as a leaf of the scratch arena, passed after their results. */
static void test_aot_library_ops(void) {
    static const char *const modules[] = {
        "HloModule s\nlt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT c = pred[] compare(a, b), direction=LT\n}\n"
        "ENTRY e {\n  p = f32[4,6] parameter(0)\n"
        "  ROOT op = f32[4,6] sort(p), dimensions={1}, to_apply=lt\n}\n",
        "HloModule t\nENTRY e {\n  p = f32[3,90] parameter(0)\n"
        "  ROOT op = (f32[3,70], s32[3,70]) topk(p), k=70, largest=true\n}\n",
        "HloModule f\nENTRY e {\n  p = f32[2,40] parameter(0)\n"
        "  ROOT op = c64[2,21] fft(p), fft_type=RFFT, fft_length={40}\n}\n",
        "HloModule c\nENTRY e {\n  p = f64[2,3,3] parameter(0)\n"
        "  ROOT op = f64[2,3,3] cholesky(p), lower=true\n}\n",
        "HloModule t\nENTRY e {\n  a = f32[4,4] parameter(0)\n  b = f32[4,2] parameter(1)\n"
        "  ROOT op = f32[4,2] triangular-solve(a, b), left_side=true, lower=true, "
        "transpose_a=NO_TRANSPOSE\n}\n",
        "HloModule g\nENTRY e {\n  s = u64[2] parameter(0)\n"
        "  ROOT op = (u64[2], u32[5]) rng-bit-generator(s), algorithm=rng_three_fry\n}\n",
        "HloModule m\nf {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\n"
        "ENTRY e {\n  p = f32[5] parameter(0)\n"
        "  ROOT op = f32[5] map(p), dimensions={0}, to_apply=f\n}\n",
        /* a topk of small k keeps its best in its results: no work memory */
        "HloModule t\nENTRY e {\n  p = f32[3,9] parameter(0)\n"
        "  ROOT op = (f32[3,2], s32[3,2]) topk(p), k=2, largest=true\n}\n",
    };
    static const bool scratch[] = {true, true, true, true, true, false, false, false};
    for (size_t i = 0; i < sizeof modules / sizeof *modules; i++) {
        cxla_module *m = parse(modules[i]);
        if (!m) continue;
        cxla_strbuf h, c, d;
        cxla_strbuf_init(&h);
        cxla_strbuf_init(&c);
        cxla_strbuf_init(&d);
        cxla_status s = cpu_aot_generate(m, NULL, "lib", &h, &c, &d);
        CHECK_MSG(s == NULL, "%s\n%s", s ? cxla_status_message(s) : "", modules[i]);
        cxla_status_free(s);
        /* The kernel is called with its results and, when it needs it, its work memory. */
        const char *call = c.data ? strstr(c.data, "void *r[") : NULL;
        CHECK_MSG(call != NULL, "no kernel call:\n%s", modules[i]);
        int64_t results =
            m->entry->root->shape.type == CXLA_TUPLE ? m->entry->root->shape.tuple_count : 1;
        if (call)
            CHECK_MSG(strtoll(call + 8, NULL, 10) == results + (scratch[i] ? 1 : 0),
                      "the kernel's out[] has the wrong length:\n%s", modules[i]);
        cxla_strbuf_free(&h);
        cxla_strbuf_free(&c);
        cxla_strbuf_free(&d);
        cxla_module_destroy(m);
    }
}

static void test_aot_write_and_cplusplus(void) {
    make_tmpdir();
    cxla_module *m = parse("HloModule w\n"
                           "ENTRY e {\n  x = f32[3] parameter(0)\n  y = f32[3] parameter(1)\n"
                           "  ROOT s = f32[3] add(x, y)\n}\n");
    cpu_aot_options o = {.prefix = "my_model", .target = CPU_AOT_NATIVE};
    cxla_status s = cpu_aot_write(m, &o, tmpdir, "w");
    CHECK(s == NULL);
    cxla_status_free(s);
    char path[512];
    snprintf(path, sizeof path, "%s/w.h", tmpdir);
    CHECK(access(path, R_OK) == 0);
    snprintf(path, sizeof path, "%s/w.c", tmpdir);
    CHECK(access(path, R_OK) == 0);
    snprintf(path, sizeof path, "%s/w_data.c", tmpdir);
    CHECK(access(path, R_OK) != 0); /* no big constants */
    char *text = NULL;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/w.h", tmpdir);
    s = cxla_read_file(path, &text, &size);
    CHECK(s == NULL);
    cxla_status_free(s);
    CHECK(text && strstr(text, "int my_model_run(const void *const *args"));
    CHECK(text && strstr(text, "extern \"C\""));
    CHECK(text && strstr(text, "f32[3], row-major, 12 bytes"));
    free(text);
    if (have("g++")) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "printf '#include \"w.h\"\\nint main() { return my_model_arg_count - 2; }\\n' > "
                 "'%s/main.cc' && g++ -std=c++11 -Wall -Wextra -Werror -I'%s' -c -o '%s/main.o' "
                 "'%s/main.cc'",
                 tmpdir, tmpdir, tmpdir, tmpdir);
        CHECK(system(cmd) == 0);
    }
    /* --target native compiled by gcc with -march=native, called from a C++ program: the
     * header's extern "C" gives the C symbols (a C++ name would not link). */
    if (have("g++") && have("gcc")) {
        static const char *const prog =
            "#include <cstdio>\n#include <cstdlib>\n#include \"w.h\"\n"
            "int main() {\n"
            "    float x[3] = {1, 2, 3}, y[3] = {0.5f, -4, 8}, r[3] = {0, 0, 0};\n"
            "    const void *args[2] = {x, y};\n"
            "    void *res[1] = {r};\n"
            "    void *scratch = std::malloc(my_model_scratch_size() + 64);\n"
            "    int rc = my_model_run(args, res, scratch);\n"
            "    std::free(scratch);\n"
            "    std::printf(\"%d %g %g %g %s\\n\", rc, r[0], r[1], r[2],\n"
            "                my_model_error_string(0));\n"
            "    return 0;\n"
            "}\n";
        snprintf(path, sizeof path, "%s/run.cc", tmpdir);
        CHECK_OK(cxla_write_file(path, prog, strlen(prog)));
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -march=native -c "
                 "w.c -o w.o && g++ -std=c++11 -Wall -Wextra -Werror -I. run.cc w.o -lm -o run && "
                 "./run > run.txt",
                 tmpdir);
        CHECK(system(cmd) == 0);
        snprintf(path, sizeof path, "%s/run.txt", tmpdir);
        text = NULL;
        if (cxla_read_file(path, &text, &size) == NULL) {
            CHECK_MSG(strncmp(text, "0 1.5 -2 11 ", 12) == 0, "got %s", text);
        } else {
            test_fail(__FILE__, __LINE__, "no output from the C++ program");
        }
        free(text);
    }
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

TEST_MAIN(TEST(test_aot_errors), TEST(test_aot_library_ops), TEST(test_aot_options),
          TEST(test_aot_send_recv_async), TEST(test_aot_write_and_cplusplus),
          TEST(test_aot_symbols), TEST(test_aot_ragged_errors), TEST(test_aot_markers))
