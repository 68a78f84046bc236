/* Results that stream (src/cpu/emit.c's streaming stores, from 32 MiB) at their real size,
 * through the cpu backend on two threads: a transpose of 8208x4097 f32 (output rows of
 * whole 64-byte lines: its full tiles stream, the partial tiles at both edges do not), one
 * of 8193x4097 (rows off the lines: plain stores), and a flat elementwise kernel of
 * 9437197 elements (a partial block at the end). Each runs into a result buffer on a
 * 64-byte line and into one 4 bytes off it (plain stores), over a buffer filled with a
 * marker first, and every element is checked bit for bit: the transposes against the
 * index arithmetic, the sum against C's own float addition. The generated C must stream
 * where it should and not elsewhere. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cxla/cxla.h"
#include "harness.h"
#include "hlo/hlo.h"

/* Whether the cpu backend's C for |text| calls cxla_stream_line on an output. */
static bool streams(const char *text) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, (size_t)-1, "stream.hlo", &m));
    if (!m) return false;
    cxla_strbuf src;
    cxla_strbuf_init(&src);
    CHECK_OK(cpu_generate(m, NULL, NULL, &src, NULL));
    bool found = src.data && strstr(src.data, "cxla_stream_line(&o0[") != NULL &&
                 strstr(src.data, "CXLA_STREAM_FENCE();") != NULL;
    cxla_strbuf_free(&src);
    cxla_module_destroy(m);
    return found;
}

static cxla_executable *compile(cxla_client *c, const char *text) {
    cxla_executable *e = NULL;
    CHECK_OK(cxla_client_compile_hlo_text(c, text, (size_t)-1, "stream.hlo", &e));
    return e;
}

/* A float from the bits of |i| scrambled (every bit pattern but NaNs' payload order
 * matters not: moved, never computed). */
static float value_at(uint64_t i) {
    uint32_t u = (uint32_t)(i * 2654435761u) ^ (uint32_t)(i >> 7);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Transposes rows x cols f32 into a result |offset| bytes after a 64-byte line. */
static void check_transpose(cxla_client *c, int64_t rows, int64_t cols, bool stream) {
    char text[512];
    snprintf(text, sizeof text,
             "HloModule t\nENTRY e {\n  x = f32[%" PRId64 ",%" PRId64 "] parameter(0)\n"
             "  ROOT t = f32[%" PRId64 ",%" PRId64 "] transpose(x), dimensions={1,0}\n}\n",
             rows, cols, cols, rows);
    CHECK_MSG(streams(text) == stream, "%" PRId64 "x%" PRId64 ": streams %d, expected %d", rows,
              cols, !stream, stream);
    cxla_executable *e = compile(c, text);
    size_t n = (size_t)(rows * cols), bytes = n * 4;
    float *x = aligned_alloc(64, (bytes + 63) / 64 * 64);
    unsigned char *block = aligned_alloc(64, (bytes + 64 + 63) / 64 * 64);
    CHECK(x && block);
    if (!e || !x || !block) {
        free(x);
        free(block);
        cxla_executable_destroy(e);
        return;
    }
    for (size_t i = 0; i < n; i++) x[i] = value_at(i);
    for (int offset = 0; offset <= 4; offset += 4) {
        float *out = (float *)(void *)(block + offset);
        memset(block, 0x7f, bytes + 64);
        cxla_buffer arg = {NULL, x, bytes}, res = {NULL, out, bytes};
        CHECK_OK(cxla_executable_run_buffers(e, NULL, &arg, 1, &res, 1));
        int64_t bad = -1;
        for (int64_t i = 0; i < cols && bad < 0; i++)
            for (int64_t j = 0; j < rows; j++) {
                float want = x[j * cols + i], got = out[i * rows + j];
                if (memcmp(&want, &got, 4) != 0) {
                    bad = i * rows + j;
                    break;
                }
            }
        CHECK_MSG(bad < 0, "transpose %" PRId64 "x%" PRId64 " offset %d: element %" PRId64, rows,
                  cols, offset, bad);
    }
    free(x);
    free(block);
    cxla_executable_destroy(e);
}

static void check_add(cxla_client *c, int64_t n) {
    char text[512];
    snprintf(text, sizeof text,
             "HloModule a\nENTRY e {\n  x = f32[%" PRId64 "] parameter(0)\n"
             "  y = f32[%" PRId64 "] parameter(1)\n  ROOT s = f32[%" PRId64 "] add(x, y)\n}\n",
             n, n, n);
    CHECK_MSG(streams(text), "f32[%" PRId64 "] add does not stream", n);
    cxla_executable *e = compile(c, text);
    size_t bytes = (size_t)n * 4;
    float *x = malloc(bytes), *y = malloc(bytes);
    unsigned char *block = aligned_alloc(64, (bytes + 64 + 63) / 64 * 64);
    CHECK(x && y && block);
    if (e && x && y && block) {
        for (int64_t i = 0; i < n; i++) {
            x[i] = (float)(i % 1000) * 0.25f - 100.0f;
            y[i] = (float)(i % 777) * 0.125f;
        }
        for (int offset = 0; offset <= 4; offset += 4) {
            float *out = (float *)(void *)(block + offset);
            memset(block, 0x7f, bytes + 64);
            cxla_buffer args[2] = {{NULL, x, bytes}, {NULL, y, bytes}}, res = {NULL, out, bytes};
            CHECK_OK(cxla_executable_run_buffers(e, NULL, args, 2, &res, 1));
            int64_t bad = -1;
            for (int64_t i = 0; i < n && bad < 0; i++) {
                float want = x[i] + y[i];
                if (memcmp(&want, &out[i], 4) != 0) bad = i;
            }
            CHECK_MSG(bad < 0, "add of %" PRId64 " offset %d: element %" PRId64, n, offset, bad);
        }
    }
    free(x);
    free(y);
    free(block);
    cxla_executable_destroy(e);
}

static void test_large_results_stream(void) {
    cxla_client_options co;
    cxla_client_options_init(&co);
    co.backend = "cpu";
    co.thread_count = 2;
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(&co, &c));
    if (!c) return;
    check_transpose(c, 8208, 4097, true);
    check_transpose(c, 8193, 4097, false);
    check_add(c, 9437197);
    cxla_client_destroy(c);
}

TEST_MAIN(TEST(test_large_results_stream))
