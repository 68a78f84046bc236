/* The MLP training step's small steps (docs/performance.md, "The MLP step's warm-up and
 * small steps (h-mlp5)"): a kernel whose one output is only a leaf of the module's result
 * streams it from a core's L2 size (emit_transpose.c, stream_result), one read again by a
 * later step does not; both give the interpreter's bits on 1, 2 and 3 threads. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
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

/* Floats in [-0.1, 0.2), as the bench's generated inputs. */
static void fill(cxla_literal *lit) {
    float *p = cxla_literal_data(lit);
    for (int64_t i = 0; i < lit->count; i++) p[i] = (float)(uniform() * 0.3 - 0.1);
}

static cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "mlp_step_test", &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        test_fail(__FILE__, __LINE__, "module rejected: %s\n%s", cxla_status_message(s), text);
        cxla_status_free(s);
        cxla_module_destroy(m);
        return NULL;
    }
    return m;
}

/* The bits of leaf |k| of |lit| (an array or a tuple of arrays). */
static const cxla_literal *leaf(const cxla_literal *lit, int64_t k) {
    if (cxla_literal_tuple_count(lit) == 0) return k == 0 ? lit : NULL;
    return cxla_literal_tuple_element_const(lit, k);
}

/* Runs |m| on the interpreter and on the cpu backend at 1, 2 and 3 threads with the same
 * generated arguments; every f32 leaf must be the interpreter's, bit for bit (NaN for NaN). */
static void check_exact(cxla_module *m) {
    int64_t params = m->entry->param_count;
    cxla_literal *args[16] = {0}, *want = NULL;
    for (int64_t p = 0; p < params && p < 16; p++) {
        CHECK_OK(cxla_literal_create(&m->entry->params[p]->shape, &args[p]));
        fill(args[p]);
    }
    CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)args, params, &want));
    int64_t leaves = want ? cxla_literal_tuple_count(want) : 0;
    if (leaves == 0) leaves = 1;
    for (int threads = 1; threads <= 3 && want; threads++) {
        void *compiled = NULL;
        exec_compile_options co = {.thread_count = threads};
        CHECK_OK(cpu_backend.compile(m, &co, &compiled));
        if (!compiled) continue;
        cxla_literal *got = NULL;
        exec_run_options ro = {0};
        CHECK_OK(
            cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, params, &got));
        for (int64_t k = 0; got && k < leaves; k++) {
            const cxla_literal *g = leaf(got, k), *w = leaf(want, k);
            CHECK(g && w && g->count == w->count);
            if (!g || !w || g->count != w->count) continue;
            const float *gf = g->data, *wf = w->data;
            int64_t bad = 0, first = -1;
            for (int64_t i = 0; i < w->count; i++) {
                uint32_t gb, wb;
                memcpy(&gb, &gf[i], 4);
                memcpy(&wb, &wf[i], 4);
                if (gb != wb && !(isnan(gf[i]) && isnan(wf[i])) && bad++ == 0) first = i;
            }
            CHECK_MSG(bad == 0,
                      "%d threads, result leaf %" PRId64 ": %" PRId64
                      " elements differ from the interpreter (first at %" PRId64 ")",
                      threads, k, bad, first);
        }
        cxla_literal_free(got);
        cpu_backend.destroy(compiled);
    }
    for (int64_t p = 0; p < params && p < 16; p++) cxla_literal_free(args[p]);
    cxla_literal_free(want);
}

/* The C the cpu backend compiles |m| into (the caller frees it), or NULL. */
static char *source_of(const cxla_module *m) {
    cxla_strbuf src;
    cxla_strbuf_init(&src);
    cpu_compile_options o = {0};
    cxla_status s = cpu_generate(m, &o, NULL, &src, NULL);
    if (s) {
        test_fail(__FILE__, __LINE__, "cpu_generate: %s", cxla_status_message(s));
        cxla_status_free(s);
        cxla_strbuf_free(&src);
        return NULL;
    }
    return src.data; /* owned by the caller now */
}

/* Whether the kernel whose name ends in |name| (its body "_<name>_body(") streams: a
 * CXLA_STREAM_FENCE() before the next kernel's banner. */
static bool streams(const char *c, const char *name) {
    char want[96];
    snprintf(want, sizeof want, "_%s_body(", name);
    const char *at = c ? strstr(c, want) : NULL;
    if (!at) {
        test_fail(__FILE__, __LINE__, "no kernel %s in the C", name);
        return false;
    }
    const char *fence = strstr(at, "CXLA_STREAM_FENCE();"), *next = strstr(at + 1, "/* ---- k");
    return fence && (!next || fence < next);
}

/* An SGD update of a 2 MiB weight (a result leaf only) streams; a result leaf of the same
 * size that a later step (a column sum) reads does not, nor a result leaf below 1 MiB;
 * CXLA_CPU_STREAM_BYTES=0 turns the streaming off. Each way the results are the
 * interpreter's. */
static void test_result_leaves_stream(void) {
    static const char text[] =
        "HloModule m\n"
        "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\n"
        "ENTRY e {\n"
        "  w = f32[512,1024] parameter(0)\n"
        "  g = f32[512,1024] parameter(1)\n"
        "  s = f32[256,1000] parameter(2)\n"
        "  t = f32[256,1000] parameter(3)\n"
        "  zero = f32[] constant(0)\n"
        "  wn = f32[512,1024] subtract(w, g)\n"
        "  v = f32[512,1024] subtract(g, w)\n"
        "  rv = f32[1024] reduce(v, zero), dimensions={0}, to_apply=add\n"
        "  small = f32[256,1000] subtract(s, t)\n"
        "  ROOT r = (f32[512,1024], f32[512,1024], f32[1024], f32[256,1000]) "
        "tuple(wn, v, rv, small)\n"
        "}\n";
    cxla_module *m = parse(text);
    if (!m) return;
    char *c = source_of(m);
    CHECK_MSG(streams(c, "wn"), "the update wn (2 MiB, a result leaf only) does not stream");
    CHECK_MSG(!streams(c, "v"), "v streams, though the column sum rv reads it");
    CHECK_MSG(!streams(c, "small"), "small (1000 KB) streams");
    free(c);
    check_exact(m);
    setenv("CXLA_CPU_STREAM_BYTES", "0", 1);
    c = source_of(m);
    CHECK_MSG(!streams(c, "wn"), "wn streams under CXLA_CPU_STREAM_BYTES=0");
    free(c);
    unsetenv("CXLA_CPU_STREAM_BYTES");
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_result_leaves_stream))
