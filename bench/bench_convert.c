/* Small-float conversions and generated inputs, next to their peers in the same run:
 *  - the generic encoder (cxla_float_from_double: f32 -> bf16, f16, f8e4m3fn) against
 *    the frexp/ldexp version it replaced (kept here as the peer);
 *  - the element store every literal conversion goes through (cxla_store_f64);
 *  - array conversions between float types in bulk (cxla_floats_convert: literal
 *    conversion, the interpreter's convert) against the per-element conversion;
 *  - `cxla run`'s generated inputs (tools/fake_args.c, typed fills) against the
 *    per-element fill it replaced (splitmix64, a double in [-0.1, 0.2), cxla_store_c128).
 * Prints millions of values per second. Usage: bench_convert [N] (default 16M). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cxla/cxla.h"
#include "base/floats.h"
#include "literal/literal_internal.h"

#include "../tools/fake_args.c"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The encoder before: frexp, ldexp and floor on the double (f8e4m3fn and IEEE types). */
static uint32_t peer_encode(const cxla_type_info *info, double value) {
    int e = info->exponent_bits, m = info->mantissa_bits, bias = info->exponent_bias;
    uint32_t sign = 1u << (e + m);
    bool negative = signbit(value) != 0;
    if (isnan(value)) return (negative ? sign : 0) | ((1u << (e + m)) - 1);
    if (value == 0.0) return negative ? sign : 0;
    double a = fabs(value);
    int exponent;
    (void)frexp(a, &exponent);
    int unbiased = exponent - 1, min_normal = 1 - bias;
    bool subnormal = unbiased < min_normal;
    double q = ldexp(a, m - (subnormal ? min_normal : unbiased));
    double whole = floor(q);
    uint32_t n = (uint32_t)whole;
    double rest = q - whole;
    if (rest > 0.5 || (rest == 0.5 && (n & 1))) n++;
    uint32_t magnitude = subnormal ? n : ((uint32_t)(unbiased + bias - 1) << m) + n;
    return (negative ? sign : 0) | magnitude;
}

static void peer_fill(cxla_literal *lit, uint64_t *state) {
    cxla_type t = cxla_literal_type(lit);
    size_t es = cxla_type_storage(t);
    char *data = cxla_literal_data(lit);
    int64_t n = (int64_t)(cxla_literal_byte_size(lit) / es);
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(splitmix64(state) >> 11) / 9007199254740992.0;
        cxla_store_c128(t, data + (size_t)i * es, -0.1 + 0.3 * u, 0);
    }
}

static volatile uint32_t sink;

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : 16 << 20;
    float *src = malloc((size_t)n * sizeof(float));
    uint16_t *dst = malloc((size_t)n * sizeof(uint16_t));
    if (!src || !dst) return 1;
    uint64_t st = 1;
    for (int64_t i = 0; i < n; i++) src[i] = uniform_f32((uint32_t)splitmix64(&st)) * 1000.0f;
    printf("%-44s %10s %10s %8s\n", "millions of values per second", "cxla", "peer", "ratio");
    const cxla_type types[] = {CXLA_BF16, CXLA_F16, CXLA_F8E4M3FN};
    for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
        cxla_type t = types[k];
        const cxla_type_info *info = cxla_type_get_info(t);
        uint32_t acc = 0;
        double t0 = now();
        for (int64_t i = 0; i < n; i++) acc += cxla_float_from_double(t, src[i]);
        double t1 = now();
        for (int64_t i = 0; i < n; i++) acc += peer_encode(info, src[i]);
        double t2 = now();
        sink = acc;
        char name[64];
        snprintf(name, sizeof name, "from_double f32 -> %s", cxla_type_name(t));
        printf("%-44s %10.0f %10.0f %7.1fx\n", name, n / (t1 - t0) / 1e6, n / (t2 - t1) / 1e6,
               (t2 - t1) / (t1 - t0));
        t0 = now();
        for (int64_t i = 0; i < n; i++) cxla_store_f64(t, &dst[i], src[i]);
        t1 = now();
        snprintf(name, sizeof name, "cxla_store_f64 -> %s", cxla_type_name(t));
        printf("%-44s %10.0f %10s\n", name, n / (t1 - t0) / 1e6, "");
    }
    /* Array conversions between float types: in bulk (cxla_floats_convert, what
     * cxla_literal_convert and the interpreter's convert call) against the per-element
     * conversion that cxla_literal_convert did before (cxla_convert_element). */
    static const cxla_type pairs[][2] = {
        {CXLA_F32, CXLA_BF16},     {CXLA_BF16, CXLA_F32},     {CXLA_F32, CXLA_F16},
        {CXLA_F16, CXLA_F32},      {CXLA_F64, CXLA_F32},      {CXLA_F32, CXLA_F64},
        {CXLA_F32, CXLA_F8E4M3FN}, {CXLA_F8E4M3FN, CXLA_F32}, {CXLA_F32, CXLA_F8E5M2},
        {CXLA_F8E5M2, CXLA_F32},   {CXLA_F64, CXLA_BF16},     {CXLA_BF16, CXLA_F16}};
    void *from_buf = malloc((size_t)n * 8), *to_buf = malloc((size_t)n * 8);
    if (!from_buf || !to_buf) return 1;
    for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
        cxla_type from = pairs[k][0], to = pairs[k][1];
        size_t fs = cxla_type_storage(from), ts = cxla_type_storage(to);
        /* Values of |from| spread over the range that matters (the f32 sources above,
         * rounded to the type). */
        cxla_floats_convert(CXLA_F32, src, from, from_buf, n);
        memset(to_buf, 1, (size_t)n * ts); /* page faults first */
        double t0 = now();
        cxla_floats_convert(from, from_buf, to, to_buf, n);
        double t1 = now();
        for (int64_t i = 0; i < n; i++)
            cxla_convert_element(from, (const char *)from_buf + (size_t)i * fs, to,
                                 (char *)to_buf + (size_t)i * ts);
        double t2 = now();
        char name[64];
        snprintf(name, sizeof name, "convert %s -> %s", cxla_type_name(from), cxla_type_name(to));
        printf("%-44s %10.0f %10.0f %7.1fx\n", name, n / (t1 - t0) / 1e6, n / (t2 - t1) / 1e6,
               (t2 - t1) / (t1 - t0));
    }
    free(from_buf);
    free(to_buf);
    const cxla_type gen[] = {CXLA_BF16, CXLA_F16, CXLA_F32, CXLA_F8E4M3FN};
    for (size_t k = 0; k < sizeof(gen) / sizeof(gen[0]); k++) {
        cxla_shape shape = {.type = gen[k], .rank = 1, .dims = &n};
        cxla_literal *lit = NULL;
        if (cxla_literal_create(&shape, &lit)) return 1;
        uint64_t state = 42;
        memset(cxla_literal_data(lit), 1, cxla_literal_byte_size(lit)); /* page faults first */
        double t0 = now();
        fake_args_fill(lit, NULL, &state);
        double t1 = now();
        peer_fill(lit, &state);
        double t2 = now();
        char name[64];
        snprintf(name, sizeof name, "generated inputs %s", cxla_type_name(gen[k]));
        printf("%-44s %10.0f %10.0f %7.1fx\n", name, n / (t1 - t0) / 1e6, n / (t2 - t1) / 1e6,
               (t2 - t1) / (t1 - t0));
        cxla_literal_free(lit);
    }
    free(src);
    free(dst);
    return 0;
}
