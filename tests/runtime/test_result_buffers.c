/* Results written straight into the caller's buffers (cxla_executable_run_buffers): on the
 * cpu backend a result leaf is computed where the caller's buffer lies, not copied there
 * after the run. The pointers are observed through custom calls that record where their
 * operands and results are: a custom call at the root writes its result into the
 * caller's buffer, and one that reads another result leaf reads it from the caller's
 * buffer. Also: repeated runs into the same buffers, tuples, a result that is also a
 * donated argument, result buffers the backend must not write early (one that is an
 * argument's memory, a misaligned one) or cannot (a layout other than the entry's), which
 * are copied, and the interpreter and the cpu backend giving the same bytes. */
#include <stdint.h>
#include <stdlib.h>

#include "cxla/cxla.h"
#include "harness.h"

/* What the recording targets saw in their last call. */
static const void *seen_in;
static void *seen_out[2];

/* f32[N] -> f32[N]: twice its operand. */
static void twice(void *out, const void **in) {
    seen_in = in[0];
    seen_out[0] = out;
    float *o = out;
    const float *a = in[0];
    for (int k = 0; k < 256; k++) o[k] = 2 * a[k];
}

/* f32[256] -> (f32[256], s32[16]): the operand plus one, and 0..15. */
static void pair(void *out, const void **in) {
    void **outs = out;
    seen_in = in[0];
    seen_out[0] = outs[0];
    seen_out[1] = outs[1];
    float *o = outs[0];
    int32_t *i = outs[1];
    const float *a = in[0];
    for (int k = 0; k < 256; k++) o[k] = a[k] + 1;
    for (int k = 0; k < 16; k++) i[k] = k;
}

static void register_targets(void) {
    CHECK_OK(cxla_custom_call_register("resbuf_twice", (cxla_custom_call_fn)twice,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    CHECK_OK(cxla_custom_call_register("resbuf_pair", (cxla_custom_call_fn)pair,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
}

static cxla_client *client(const char *backend) {
    cxla_client_options co;
    cxla_client_options_init(&co);
    co.backend = backend;
    co.thread_count = 2;
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(&co, &c));
    return c;
}

static cxla_executable *compile(cxla_client *c, const char *text) {
    cxla_executable *e = NULL;
    if (c) CHECK_OK(cxla_client_compile_hlo_text(c, text, (size_t)-1, "resbuf.hlo", &e));
    return e;
}

/* A kernel's result (n, leaf 0) and a custom call's (leaf 1), the custom call reading n. */
static const char tuple_text[] =
    "HloModule resbuf_tuple\n"
    "ENTRY main {\n"
    "  p = f32[256] parameter(0)\n"
    "  q = f32[256] parameter(1)\n"
    "  n = f32[256] subtract(p, q)\n"
    "  c = f32[256] custom-call(n), custom_call_target=\"resbuf_twice\"\n"
    "  ROOT t = (f32[256], f32[256]) tuple(n, c)\n"
    "}\n";

static bool tuple_ok(const float *n, const float *c, const float *p, const float *q) {
    for (int k = 0; k < 256; k++)
        if (n[k] != p[k] - q[k] || c[k] != 2 * (p[k] - q[k])) return false;
    return true;
}

/* Where the results land, run after run into the same buffers. */
static void test_identity(const char *backend) {
    register_targets();
    cxla_client *c = client(backend);
    cxla_executable *e = compile(c, tuple_text);
    if (e) {
        bool cpu = strcmp(backend, "cpu") == 0;
        static float p[256], q[256], n[256], cc[256];
        cxla_buffer args[2] = {{NULL, p, sizeof(p)}, {NULL, q, sizeof(q)}};
        cxla_buffer res[2] = {{NULL, n, sizeof(n)}, {NULL, cc, sizeof(cc)}};
        for (int run = 0; run < 3; run++) {
            for (int k = 0; k < 256; k++) {
                p[k] = (float)(k * (run + 1));
                q[k] = (float)(k % 7) - (float)run;
            }
            memset(n, 0xff, sizeof(n));
            memset(cc, 0xff, sizeof(cc));
            seen_in = seen_out[0] = NULL;
            CHECK_OK(cxla_executable_run_buffers(e, NULL, args, 2, res, 2));
            CHECK_MSG(tuple_ok(n, cc, p, q), "%s, run %d: values", backend, run);
            /* The cpu backend computes n in the caller's buffer (the custom call reads it
             * there) and the custom call writes its result there too. */
            if (cpu) {
                CHECK_MSG(seen_in == n,
                          "%s, run %d: the kernel's result is not in the caller's "
                          "buffer",
                          backend, run);
                CHECK_MSG(seen_out[0] == cc,
                          "%s, run %d: the custom call's result is not in "
                          "the caller's buffer",
                          backend, run);
            }
        }

        /* A result buffer that is a (lent) argument's memory: not written before the run
         * has read its arguments, so computed elsewhere and copied. */
        for (int k = 0; k < 256; k++) {
            p[k] = (float)k;
            q[k] = 1;
        }
        float want_n[256], want_c[256];
        for (int k = 0; k < 256; k++) {
            want_n[k] = p[k] - q[k];
            want_c[k] = 2 * want_n[k];
        }
        cxla_buffer onto[2] = {{NULL, q, sizeof(q)}, {NULL, p, sizeof(p)}};
        CHECK_OK(cxla_executable_run_buffers(e, NULL, args, 2, onto, 2));
        CHECK_MSG(memcmp(q, want_n, sizeof(q)) == 0 && memcmp(p, want_c, sizeof(p)) == 0,
                  "%s: results onto the arguments", backend);
        CHECK_MSG(seen_out[0] != p && seen_in != q, "%s: an argument was written early", backend);

        /* A misaligned result buffer: computed elsewhere, copied. */
        for (int k = 0; k < 256; k++) {
            p[k] = (float)k;
            q[k] = 3;
        }
        char *raw = malloc(sizeof(float) * 256 + 8);
        if (raw) {
            res[0] = (cxla_buffer){NULL, raw + 1, sizeof(float) * 256};
            CHECK_OK(cxla_executable_run_buffers(e, NULL, args, 2, res, 2));
            float got[256];
            memcpy(got, raw + 1, sizeof(got));
            CHECK_MSG(tuple_ok(got, cc, p, q), "%s: misaligned: values", backend);
            CHECK_MSG(seen_in != raw + 1, "%s: misaligned: written in place", backend);
            if (cpu) CHECK_MSG(seen_out[0] == cc, "%s: misaligned: the other leaf", backend);
            free(raw);
        }
    }
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

/* A tuple-shaped custom call at the root: both leaves in the caller's buffers; then a
 * rank-2 result asked for in its entry layout (direct) and in another (copied, relaid). */
static const char pair_text[] = "HloModule resbuf_pair\n"
                                "ENTRY main {\n"
                                "  p = f32[256] parameter(0)\n"
                                "  ROOT c = (f32[256], s32[16]) custom-call(p), "
                                "custom_call_target=\"resbuf_pair\"\n"
                                "}\n";

static const char layout_text[] =
    "HloModule resbuf_layout\n"
    "ENTRY main {\n"
    "  p = f32[256] parameter(0)\n"
    "  c = f32[256] custom-call(p), custom_call_target=\"resbuf_twice\"\n"
    "  ROOT r = f32[16,16] reshape(c)\n"
    "}\n";

/* An entry result with a column-major leaf: the cpu backend relays the whole result at
 * the end, so it writes no leaf directly; both leaves still land right. */
static const char entry_layout_text[] =
    "HloModule resbuf_entry_layout, entry_computation_layout={(f32[2,3]{1,0})->(f32[3,2]{0,1}, "
    "f32[2,3]{1,0})}\n"
    "ENTRY main {\n"
    "  x = f32[2,3] parameter(0)\n"
    "  t = f32[3,2] transpose(x), dimensions={1,0}\n"
    "  n = f32[2,3] negate(x)\n"
    "  ROOT r = (f32[3,2], f32[2,3]) tuple(t, n)\n"
    "}\n";

static void test_entry_layout(const char *backend) {
    cxla_client *c = client(backend);
    cxla_executable *e = compile(c, entry_layout_text);
    if (e) {
        float x[6] = {1, 2, 3, 4, 5, 6}, t[6], n[6];
        cxla_buffer args[1] = {{NULL, x, sizeof(x)}};
        cxla_buffer res[2] = {{NULL, t, sizeof(t)}, {NULL, n, sizeof(n)}};
        CHECK_OK(cxla_executable_run_buffers(e, NULL, args, 1, res, 2));
        /* t is x transposed, stored column-major: x's own row-major bytes. */
        CHECK_MSG(memcmp(t, x, sizeof(x)) == 0, "%s: the column-major leaf", backend);
        bool ok = true;
        for (int k = 0; k < 6; k++) ok = ok && n[k] == -x[k];
        CHECK_MSG(ok, "%s: the row-major leaf", backend);
    }
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

static void test_tuple_and_layout(const char *backend) {
    register_targets();
    cxla_client *c = client(backend);
    cxla_executable *e = compile(c, pair_text);
    bool cpu = strcmp(backend, "cpu") == 0;
    static float p[256], o[256];
    static int32_t idx[16];
    for (int k = 0; k < 256; k++) p[k] = (float)k * 0.5f;
    if (e) {
        cxla_buffer args[1] = {{NULL, p, sizeof(p)}};
        cxla_buffer res[2] = {{NULL, o, sizeof(o)}, {NULL, idx, sizeof(idx)}};
        CHECK_OK(cxla_executable_run_buffers(e, NULL, args, 1, res, 2));
        bool ok = true;
        for (int k = 0; k < 256; k++) ok = ok && o[k] == p[k] + 1;
        for (int k = 0; k < 16; k++) ok = ok && idx[k] == k;
        CHECK_MSG(ok, "%s: tuple values", backend);
        if (cpu) CHECK_MSG(seen_out[0] == o && seen_out[1] == idx, "%s: tuple leaves", backend);
    }
    cxla_executable_destroy(e);
    e = compile(c, layout_text);
    if (e) {
        cxla_buffer args[1] = {{NULL, p, sizeof(p)}};
        cxla_buffer res[1] = {{NULL, o, sizeof(o)}};
        /* The entry layout: the reshape of c is c's memory; direct on the cpu backend
         * (the reshape is a view, so the custom call writes the caller's buffer). */
        CHECK_OK(cxla_executable_run_buffers(e, NULL, args, 1, res, 1));
        bool ok = true;
        for (int k = 0; k < 256; k++) ok = ok && o[k] == 2 * p[k];
        CHECK_MSG(ok, "%s: row-major values", backend);
        /* Column-major requested: the backend cannot write it directly; relaid copy. */
        cxla_shape *cm = NULL;
        CHECK_OK(cxla_shape_parse("f32[16,16]{0,1}", (size_t)-1, &cm));
        if (cm) {
            res[0].shape = cm;
            memset(o, 0, sizeof(o));
            CHECK_OK(cxla_executable_run_buffers(e, NULL, args, 1, res, 1));
            ok = true;
            for (int i = 0; i < 16; i++)
                for (int j = 0; j < 16; j++) ok = ok && o[j * 16 + i] == 2 * p[i * 16 + j];
            CHECK_MSG(ok, "%s: column-major values", backend);
            CHECK_MSG(seen_out[0] != o, "%s: column-major written directly", backend);
        }
        cxla_shape_free(cm);
    }
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

/* A result that is a donated argument (aliased: in place) beside one written directly,
 * and a donated argument's memory used for a result it is not aliased with (copied after
 * the run, which reads the argument first). */
static const char donate_text[] =
    "HloModule resbuf_donate, input_output_alias={ {0}: (0, {}, may-alias) }\n"
    "ENTRY main {\n"
    "  p = f32[256] parameter(0)\n"
    "  u = f32[4] parameter(1)\n"
    "  i = s32[] constant(8)\n"
    "  d = f32[256] dynamic-update-slice(p, u, i)\n"
    "  c = f32[256] custom-call(p), custom_call_target=\"resbuf_twice\"\n"
    "  ROOT t = (f32[256], f32[256]) tuple(d, c)\n"
    "}\n";

static void test_donated(const char *backend) {
    register_targets();
    cxla_client *c = client(backend);
    cxla_executable *e = compile(c, donate_text);
    bool cpu = strcmp(backend, "cpu") == 0;
    if (e) {
        static float p[256], o[256];
        float u[4] = {-1, -2, -3, -4};
        bool donated[2] = {true, false};
        cxla_run_options ro;
        cxla_run_options_init(&ro);
        ro.donated = donated;
        cxla_buffer args[2] = {{NULL, p, sizeof(p)}, {NULL, u, sizeof(u)}};
        cxla_buffer res[2] = {{NULL, p, sizeof(p)}, {NULL, o, sizeof(o)}};
        for (int run = 0; run < 2; run++) {
            for (int k = 0; k < 256; k++) p[k] = (float)k + (float)run;
            CHECK_OK(cxla_executable_run_buffers(e, &ro, args, 2, res, 2));
            bool ok = true;
            for (int k = 0; k < 256; k++) {
                float before = (float)k + (float)run;
                ok = ok && o[k] == 2 * before && p[k] == (k >= 8 && k < 12 ? u[k - 8] : before);
            }
            CHECK_MSG(ok, "%s, run %d: donated values", backend, run);
            if (cpu) CHECK_MSG(seen_out[0] == o, "%s, run %d: direct beside donated", backend, run);
        }
        /* The donated argument's memory as the unaliased result c: c is computed from p
         * before anything is written there. */
        for (int k = 0; k < 256; k++) p[k] = (float)k;
        res[0] = (cxla_buffer){NULL, o, sizeof(o)};
        res[1] = (cxla_buffer){NULL, p, sizeof(p)};
        CHECK_OK(cxla_executable_run_buffers(e, &ro, args, 2, res, 2));
        bool ok = true;
        for (int k = 0; k < 256; k++)
            ok = ok && p[k] == 2 * (float)k && o[k] == (k >= 8 && k < 12 ? u[k - 8] : (float)k);
        CHECK_MSG(ok, "%s: a donated argument's memory as another result", backend);
        CHECK_MSG(seen_out[0] != p, "%s: a donated argument written early", backend);
    }
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

static void test_interpreter(void) {
    test_identity("interpreter");
    test_tuple_and_layout("interpreter");
    test_entry_layout("interpreter");
    test_donated("interpreter");
}

static void test_cpu(void) {
    test_identity("cpu");
    test_tuple_and_layout("cpu");
    test_entry_layout("cpu");
    test_donated("cpu");
}

/* Exact operations (no approximations, no reductions): the interpreter and the cpu backend
 * give the same bytes, the cpu backend's written directly, over several result leaves of
 * several types, a transpose, a parameter passed through and a constant. */
static const char exact_text[] = "HloModule resbuf_exact\n"
                                 "ENTRY main {\n"
                                 "  a = f32[64,48] parameter(0)\n"
                                 "  b = s32[64,48] parameter(1)\n"
                                 "  t = f32[48,64] transpose(a), dimensions={1,0}\n"
                                 "  m = f32[64,48] multiply(a, a)\n"
                                 "  x = f32[64,48] maximum(m, a)\n"
                                 "  bb = s32[64,48] multiply(b, b)\n"
                                 "  k = s32[3] constant({7, -8, 9})\n"
                                 "  ROOT r = (f32[48,64], f32[64,48], s32[64,48], f32[64,48], "
                                 "s32[3]) tuple(t, x, bb, a, k)\n"
                                 "}\n";

static void test_same_bytes(void) {
    enum { N = 64 * 48 };
    static float a[N], t[2][N], x[2][N], pa[2][N];
    static int32_t b[N], bb[2][N], k3[2][3];
    for (int i = 0; i < N; i++) {
        a[i] = (float)((i * 37) % 101) * 0.37f - 17.0f;
        b[i] = (i * 7919) % 65537 - 30000;
    }
    const char *backends[2] = {"interpreter", "cpu"};
    for (int w = 0; w < 2; w++) {
        cxla_client *c = client(backends[w]);
        cxla_executable *e = compile(c, exact_text);
        if (e) {
            cxla_buffer args[2] = {{NULL, a, sizeof(a)}, {NULL, b, sizeof(b)}};
            cxla_buffer res[5] = {{NULL, t[w], sizeof(t[w])},
                                  {NULL, x[w], sizeof(x[w])},
                                  {NULL, bb[w], sizeof(bb[w])},
                                  {NULL, pa[w], sizeof(pa[w])},
                                  {NULL, k3[w], sizeof(k3[w])}};
            CHECK_OK(cxla_executable_run_buffers(e, NULL, args, 2, res, 5));
        }
        cxla_executable_destroy(e);
        cxla_client_destroy(c);
    }
    CHECK(memcmp(t[0], t[1], sizeof(t[0])) == 0);
    CHECK(memcmp(x[0], x[1], sizeof(x[0])) == 0);
    CHECK(memcmp(bb[0], bb[1], sizeof(bb[0])) == 0);
    CHECK(memcmp(pa[1], a, sizeof(a)) == 0 && memcmp(pa[0], a, sizeof(a)) == 0);
    CHECK(k3[1][0] == 7 && k3[1][1] == -8 && k3[1][2] == 9 && memcmp(k3[0], k3[1], 12) == 0);
    /* Not only equal: right (the transpose and the maximum). */
    CHECK(t[1][5 * 64 + 3] == a[3 * 48 + 5]);
    float m = a[100] * a[100];
    CHECK(x[1][100] == (m > a[100] ? m : a[100]));
}

TEST_MAIN(TEST(test_interpreter), TEST(test_cpu), TEST(test_same_bytes))
