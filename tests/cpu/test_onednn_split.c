/* Large oneDNN calls split over the thread pool (src/cpu/onednn.c, "a call split over the
 * pool's threads"): which calls split and into how many parts (the call's |what|), and that
 * a split call gives the same bits on 2 and 3 threads as the whole one-thread primitive on
 * one thread (brgemm's and the jit convolution's sums along K do not depend on the rows a
 * primitive covers), for a plain matmul, a transposed rhs, weights packed per run (M >=
 * 512), a fused bias and tanh (post-ops), a fused bias and relu (the relu after the parts),
 * a convolution split by its images, and one whose images do not divide evenly; and that
 * CXLA_ONEDNN_SPLIT=off or unset (the default) keeps the call whole. Without oneDNN the test is
 * skipped; without AVX-512 (other implementations, other part counts) only the small products
 * (run on one thread whatever the thread count) are checked. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/onednn.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

static uint64_t rng_state;

static double uniform(void) { /* splitmix64 -> [0, 1) */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

static cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "split_test", &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        test_fail(__FILE__, __LINE__, "module rejected: %s\n%s", cxla_status_message(s), text);
        cxla_status_free(s);
        cxla_module_destroy(m);
        return NULL;
    }
    return m;
}

/* Compiles |m| for |threads| threads, runs it on |args|; the root's |what| is copied into
 * |what| (64 bytes). NULL when it failed (the failure recorded). */
static cxla_literal *run_at(cxla_module *m, int threads, cxla_literal **args, int64_t params,
                            char *what) {
    void *compiled = NULL;
    exec_compile_options co = {.thread_count = threads};
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    if (!compiled) return NULL;
    /* The root's product: the output fusion pass renames a fused one. */
    cxla_module *opt = NULL;
    cxla_strbuf src;
    cxla_strbuf_init(&src);
    CHECK_OK(cpu_generate(m, NULL, &opt, &src, NULL));
    cxla_strbuf_free(&src);
    const char *w =
        opt && opt->entry ? cpu_compiled_call_what(compiled, opt->entry->root->name) : NULL;
    snprintf(what, 96, "%s", w ? w : "-");
    cxla_module_destroy(opt);
    cxla_literal *got = NULL;
    exec_run_options ro = {0};
    CHECK_OK(cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, params, &got));
    cpu_backend.destroy(compiled);
    return got;
}

/* The number in "..., N parts on the pool" (0: not split). */
static int parts_of(const char *what) {
    const char *p = strstr(what, " parts on the pool");
    if (!p) return 0;
    while (p > what && p[-1] >= '0' && p[-1] <= '9') p--;
    return atoi(p);
}

/* Runs |text| on 1 thread (never split) and on 2 and 3 threads, where the root must run
 * split in |parts2| and |parts3| parts (0: whole); every result must be the one-thread
 * one's, bit for bit. */
static void check_split(const char *text, int parts2, int parts3) {
    cxla_module *m = parse(text);
    if (!m) return;
    int64_t params = m->entry->param_count;
    cxla_literal *args[4] = {0};
    for (int64_t p = 0; p < params && p < 4; p++) {
        CHECK_OK(cxla_literal_create(&m->entry->params[p]->shape, &args[p]));
        float *f = cxla_literal_data(args[p]);
        for (int64_t i = 0; args[p] && i < args[p]->count; i++) f[i] = (float)(uniform() * 2 - 1);
    }
    char what[96];
    cxla_literal *one = run_at(m, 1, args, params, what);
    CHECK_MSG(parts_of(what) == 0, "%s\n1 thread runs as '%s': split", text, what);
    const int want[2] = {parts2, parts3};
    for (int threads = 2; threads <= 3 && one; threads++) {
        cxla_literal *got = run_at(m, threads, args, params, what);
        CHECK_MSG(parts_of(what) == want[threads - 2],
                  "%s\n%d threads: runs as '%s', not in %d parts", text, threads, what,
                  want[threads - 2]);
        if (!got) continue;
        CHECK_EQ_I64(got->count, one->count);
        int64_t bad = 0, first = -1;
        const float *g = cxla_literal_data(got), *o = cxla_literal_data(one);
        for (int64_t i = 0; i < one->count && got->count == one->count; i++)
            if (memcmp(&g[i], &o[i], sizeof(float)) != 0 && bad++ == 0) first = i;
        CHECK_MSG(bad == 0,
                  "%s\n%d threads (%s): %" PRId64 " elements differ from one thread's (first at "
                  "%" PRId64 ": %.9g, not %.9g)",
                  text, threads, what, bad, first, first >= 0 ? g[first] : 0.0,
                  first >= 0 ? o[first] : 0.0);
        cxla_literal_free(got);
    }
    cxla_literal_free(one);
    for (int64_t p = 0; p < params && p < 4; p++) cxla_literal_free(args[p]);
    cxla_module_destroy(m);
}

static void test_matmul_split(void) {
    rng_state = 1;
    /* 256x512x512: 64 Mi multiply-adds, 4 parts of 64 rows on 2 threads (2 per thread), 4
     * on 3 (each part at least 16 Mi multiply-adds). */
    check_split("HloModule s\nENTRY e {\n  a = f32[256,512] parameter(0)\n"
                "  b = f32[512,512] parameter(1)\n"
                "  ROOT d = f32[256,512] dot(a, b), lhs_contracting_dims={1}, "
                "rhs_contracting_dims={0}\n}\n",
                4, 4);
    /* The rhs read transposed (the MLP's d1 w1^T), rows that do not divide evenly. */
    check_split("HloModule s\nENTRY e {\n  a = f32[200,512] parameter(0)\n"
                "  b = f32[384,512] parameter(1)\n"
                "  ROOT d = f32[200,384] dot(a, b), lhs_contracting_dims={1}, "
                "rhs_contracting_dims={1}\n}\n",
                2, 2);
    /* M >= 512: the weights packed once per run, read by every part. */
    check_split("HloModule s\nENTRY e {\n  a = f32[600,128] parameter(0)\n"
                "  b = f32[128,520] parameter(1)\n"
                "  ROOT d = f32[600,520] dot(a, b), lhs_contracting_dims={1}, "
                "rhs_contracting_dims={0}\n}\n",
                2, 2);
    /* The lhs transposed (the MLP's weight gradients, x^T d): a part's rows of it are not a
     * dense matrix, which oneDNN's brgemm does not take (its gemm would, in another order),
     * so the call stays whole. */
    check_split("HloModule s\nENTRY e {\n  a = f32[128,600] parameter(0)\n"
                "  b = f32[128,520] parameter(1)\n"
                "  ROOT d = f32[600,520] dot(a, b), lhs_contracting_dims={0}, "
                "rhs_contracting_dims={0}\n}\n",
                0, 0);
    /* Too little work to split: one primitive on OpenMP's team. */
    check_split("HloModule s\nENTRY e {\n  a = f32[64,128] parameter(0)\n"
                "  b = f32[128,128] parameter(1)\n"
                "  ROOT d = f32[64,128] dot(a, b), lhs_contracting_dims={1}, "
                "rhs_contracting_dims={0}\n}\n",
                0, 0);
}

static void test_fused_split(void) {
    rng_state = 2;
    /* tanh(a b + bias): oneDNN's bias and tanh post-op in every part. */
    check_split("HloModule s\nENTRY e {\n  a = f32[256,384] parameter(0)\n"
                "  b = f32[384,512] parameter(1)\n  c = f32[512] parameter(2)\n"
                "  d = f32[256,512] dot(a, b), lhs_contracting_dims={1}, "
                "rhs_contracting_dims={0}\n"
                "  cb = f32[256,512] broadcast(c), dimensions={1}\n"
                "  s = f32[256,512] add(d, cb)\n  ROOT r = f32[256,512] tanh(s)\n}\n",
                3, 3);
    /* maximum(a b + bias, 0): the relu runs over the whole result after the parts. */
    check_split("HloModule s\nENTRY e {\n  a = f32[256,384] parameter(0)\n"
                "  b = f32[384,512] parameter(1)\n  c = f32[512] parameter(2)\n"
                "  d = f32[256,512] dot(a, b), lhs_contracting_dims={1}, "
                "rhs_contracting_dims={0}\n"
                "  cb = f32[256,512] broadcast(c), dimensions={1}\n"
                "  s = f32[256,512] add(d, cb)\n  z = f32[] constant(0)\n"
                "  zb = f32[256,512] broadcast(z), dimensions={}\n"
                "  ROOT r = f32[256,512] maximum(s, zb)\n}\n",
                3, 3);
}

static void test_conv_split(void) {
    rng_state = 3;
    /* 8 images of 16x16x32 -> 64, 3x3: 36 Mi multiply-adds, 2 parts of 4 images. */
    check_split("HloModule s\nENTRY e {\n  x = f32[8,16,16,32] parameter(0)\n"
                "  k = f32[3,3,32,64] parameter(1)\n"
                "  ROOT r = f32[8,16,16,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, "
                "dim_labels=b01f_01io->b01f\n}\n",
                2, 2);
    /* 5 images, 60 Mi: 3 parts of 1-2 images (3 by the work), the kernel reversed. */
    check_split("HloModule s\nENTRY e {\n  x = f32[5,24,24,32] parameter(0)\n"
                "  k = f32[3,3,32,64] parameter(1)\n"
                "  ROOT r = f32[5,24,24,64] convolution(x, k), "
                "window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}, "
                "dim_labels=b01f_01io->b01f\n}\n",
                3, 3);
}

/* CXLA_ONEDNN_SPLIT=off (and unset: the default): whole calls; 1: one part per thread. */
static void test_split_env(void) {
    static const char *text = "HloModule s\nENTRY e {\n  a = f32[256,512] parameter(0)\n"
                              "  b = f32[512,512] parameter(1)\n"
                              "  ROOT d = f32[256,512] dot(a, b), lhs_contracting_dims={1}, "
                              "rhs_contracting_dims={0}\n}\n";
    rng_state = 4;
    setenv("CXLA_ONEDNN_SPLIT", "1", 1);
    check_split(text, 2, 3);
    setenv("CXLA_ONEDNN_SPLIT", "off", 1);
    cxla_module *m = parse(text);
    cxla_literal *args[2] = {0};
    for (int p = 0; p < 2 && m; p++) {
        CHECK_OK(cxla_literal_create(&m->entry->params[p]->shape, &args[p]));
        if (args[p]) memset(cxla_literal_data(args[p]), 0, args[p]->size);
    }
    char what[96];
    if (m) cxla_literal_free(run_at(m, 2, args, 2, what));
    if (m) CHECK_MSG(parts_of(what) == 0, "CXLA_ONEDNN_SPLIT=off: runs as '%s'", what);
    unsetenv("CXLA_ONEDNN_SPLIT");
    if (m) cxla_literal_free(run_at(m, 2, args, 2, what));
    if (m) CHECK_MSG(parts_of(what) == 0, "CXLA_ONEDNN_SPLIT unset: runs as '%s'", what);
    for (int p = 0; p < 2; p++) cxla_literal_free(args[p]);
    cxla_module_destroy(m);
    unsetenv("CXLA_ONEDNN_SPLIT");
}

/* Small products (under 1 Mi multiply-adds, CXLA_ONEDNN_SMALL) run on one thread whatever the
 * thread count the module is compiled for: the call says ", one thread (small)" and gives the
 * one-thread call's bits. |small|: whether |text|'s root must be one. */
static void check_small(const char *text, bool small) {
    cxla_module *m = parse(text);
    if (!m) return;
    int64_t params = m->entry->param_count;
    cxla_literal *args[2] = {0};
    for (int64_t p = 0; p < params && p < 2; p++) {
        CHECK_OK(cxla_literal_create(&m->entry->params[p]->shape, &args[p]));
        for (int64_t i = 0; args[p] && i < args[p]->count; i++) {
            float v = (float)(uniform() * 2 - 1);
            if (args[p]->shape->type == CXLA_F32)
                ((float *)cxla_literal_data(args[p]))[i] = v;
            else
                ((uint16_t *)cxla_literal_data(args[p]))[i] = cxla_f32_to_bf16(v);
        }
    }
    char what1[96], what2[96];
    cxla_literal *one = run_at(m, 1, args, params, what1);
    cxla_literal *two = run_at(m, 2, args, params, what2);
    CHECK_MSG(strstr(what1, "one thread (small)") == NULL, "%s\n1 thread runs as '%s'", text,
              what1);
    CHECK_MSG((strstr(what2, ", one thread (small)") != NULL) == small,
              "%s\n2 threads run as '%s' (small product expected: %d)", text, what2, small);
    if (one && two) {
        CHECK_EQ_I64(two->size, one->size);
        if (two->size == one->size)
            CHECK_MSG(memcmp(cxla_literal_data(one), cxla_literal_data(two), one->size) == 0,
                      "%s\n2 threads (%s) differ from one thread", text, what2);
    }
    cxla_literal_free(one);
    cxla_literal_free(two);
    for (int64_t p = 0; p < params && p < 2; p++) cxla_literal_free(args[p]);
    cxla_module_destroy(m);
}

static void test_small_products(void) {
    rng_state = 5;
    static const char *row = "HloModule s\nENTRY e {\n  a = bf16[1,256] parameter(0)\n"
                             "  b = bf16[256,128] parameter(1)\n"
                             "  ROOT d = bf16[1,128] dot(a, b), lhs_contracting_dims={1}, "
                             "rhs_contracting_dims={0}\n}\n";
    static const char *mid = "HloModule s\nENTRY e {\n  a = f32[64,512] parameter(0)\n"
                             "  b = f32[512,512] parameter(1)\n"
                             "  ROOT d = f32[64,512] dot(a, b), lhs_contracting_dims={1}, "
                             "rhs_contracting_dims={0}\n}\n";
    unsetenv("CXLA_ONEDNN_SMALL");
    check_small(row, true);  /* 32 Ki multiply-adds (graphsage's products) */
    check_small(mid, false); /* 16 Mi */
    /* A convolution: 8x8x16 -> 16, 3x3: 144 Ki. */
    check_small("HloModule s\nENTRY e {\n  x = f32[1,8,8,16] parameter(0)\n"
                "  k = f32[3,3,16,16] parameter(1)\n"
                "  ROOT r = f32[1,8,8,16] convolution(x, k), window={size=3x3 pad=1_1x1_1}, "
                "dim_labels=b01f_01io->b01f\n}\n",
                true);
    /* 1 Mi exactly is not small. */
    check_small("HloModule s\nENTRY e {\n  a = f32[16,256] parameter(0)\n"
                "  b = f32[256,256] parameter(1)\n"
                "  ROOT d = f32[16,256] dot(a, b), lhs_contracting_dims={1}, "
                "rhs_contracting_dims={0}\n}\n",
                false);
    setenv("CXLA_ONEDNN_SMALL", "0", 1);
    check_small(row, false);
    setenv("CXLA_ONEDNN_SMALL", "100000000", 1);
    check_small(mid, true);
    unsetenv("CXLA_ONEDNN_SMALL");
}

int main(int argc, char **argv) {
    if (!cpu_onednn_available()) test_skip_all("built without oneDNN");
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    /* The part counts and the blocks that cannot split are those of oneDNN 2.6's brgemm
     * and jit convolutions on AVX-512, where this was measured. */
    bool avx512 = __builtin_cpu_supports("avx512bw");
#else
    bool avx512 = false;
#endif
    if (!avx512) { /* the small products do not depend on the implementation */
        static const test_case small[] = {TEST(test_small_products)};
        return test_run_all(small, 1, argc, argv);
    }
    setenv("CXLA_ONEDNN_SPLIT", "2", 1); /* two parts per thread (opt-in) */
    static const test_case cases[] = {TEST(test_matmul_split), TEST(test_fused_split),
                                      TEST(test_conv_split), TEST(test_split_env),
                                      TEST(test_small_products)};
    return test_run_all(cases, (int)(sizeof(cases) / sizeof(cases[0])), argc, argv);
}
