/* Ahead-of-time output on a big-endian machine: a few tests/hlo case files (floats of every
 * width, integers of every width and sub-byte ones, complex, constants in NAME_data.c, rng
 * and rng-bit-generator, sort, while loops) and a module of constants of every element type
 * are compiled by the cross compiler for s390x (64-bit, big-endian) with `-std=c11 -Wall
 * -Wextra -Wpedantic -Werror -O2 -static -fexcess-precision=fast`, run under qemu-s390x
 * (user-mode emulation) and compared with the interpreter bit for bit. (gcc for s390x in
 * ISO C mode evaluates float in double, FLT_EVAL_METHOD 1, to match glibc's float_t; the
 * prelude refuses that, and -fexcess-precision=fast gives the machine's float arithmetic.)
 *
 * The generated library reads and writes arrays in the byte order of the machine it runs
 * on (NAME.h says so); the test's driver is the same as on x86-64 and reads its argument
 * files as they are, so the test writes them byte-swapped (each element of its width, each
 * part of a complex element) and swaps the results back (test_aot.c: swap_order).
 *
 * Skipped, saying why, where qemu-s390x or s390x-linux-gnu-gcc (Debian's qemu-user,
 * gcc-s390x-linux-gnu and libc6-dev-s390x-cross) is missing. CXLA_AOT_BE_FILES="a.hlo
 * b.hlo" runs other case files. */
#define AOT_BIG_ENDIAN
#include "cpu/test_aot.c"

/* A probe: a static s390x program that prints through libc and libm, run under qemu, that
 * must find itself big-endian. */
static bool s390x_ready(void) {
    if (!have("qemu-s390x") || !have("s390x-linux-gnu-gcc")) return false;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && printf '#include <stdio.h>\n#include <math.h>\n#include <stdint.h>\n"
             "int main(int c, char **v) { uint32_t one = 1; (void)v; return "
             "*(unsigned char *)&one == 0 && printf(\"%%d\", (int)sqrt(c + 3.0)) == 1 ? 0 : 1; "
             "}\n' > be_probe.c && s390x-linux-gnu-gcc -std=c11 -static -o be_probe be_probe.c "
             "-lm >/dev/null 2>&1 && qemu-s390x ./be_probe >/dev/null",
             tmpdir);
    return system(cmd) == 0;
}

/* Constants of every element type the generated code stores, each once bigger than 64
 * bytes (NAME_data.c) and once small (NAME.c), in the result tuple as they are; the f32 and
 * s32 ones also meet the parameters in fusions (constants inside kernels). Values: the
 * edges of each type, NaN, -0, infinities and denormals, cycled to the array's size. */
static const struct {
    const char *type;
    int storage;
    const char *values[12];
} const_table[] = {
    {"f32", 4, {"1", "-0", "0.5", "-2.25", "inf", "-inf", "nan", "123.456", "1e-40", "3.4e38"}},
    {"f64", 8, {"1", "-0", "-2.25", "inf", "nan", "123.456", "4.9e-324", "-1.7e308"}},
    {"bf16", 2, {"1", "-0", "0.5", "-2.25", "inf", "-inf", "nan", "1e-39", "-3e38"}},
    {"f16", 2, {"1", "-0", "0.5", "-2.25", "inf", "-inf", "nan", "6e-8", "65504"}},
    {"f8e4m3fn", 1, {"1", "-0", "0.5", "-2.25", "448", "nan", "0.001953125", "-3"}},
    {"f8e5m2", 1, {"1", "-0", "0.5", "-2.25", "inf", "-inf", "nan", "57344"}},
    {"s8", 1, {"-128", "127", "-1", "0", "5", "-77"}},
    {"u8", 1, {"255", "0", "1", "128", "77"}},
    {"s16", 2, {"-32768", "32767", "-1", "0", "300", "-4097"}},
    {"u16", 2, {"65535", "0", "1", "32768", "258"}},
    {"s32", 4, {"-2147483648", "2147483647", "-1", "0", "65536", "-16777217"}},
    {"u32", 4, {"4294967295", "0", "1", "2147483648", "16909060"}},
    {"s64", 8, {"-9223372036854775808", "9223372036854775807", "-1", "4294967296"}},
    {"u64", 8, {"18446744073709551615", "0", "9223372036854775808", "72623859790382856"}},
    {"s4", 1, {"-8", "7", "-1", "0", "3"}},
    {"u4", 1, {"15", "0", "1", "8", "6"}},
    {"s2", 1, {"-2", "1", "-1", "0"}},
    {"pred", 1, {"true", "false", "true", "true", "false"}},
    {"c64", 8, {"(1, -0)", "(nan, 2.5)", "(-inf, 1e-40)", "(0.25, -3)"}},
    {"c128", 16, {"(1, -0)", "(nan, 2.5)", "(-inf, 4.9e-324)", "(0.25, -3)"}},
};

/* Adds the module of const_table's constants, run on two arguments, to |b|. */
static void add_constants_module(batch *b) {
    enum { N = sizeof const_table / sizeof const_table[0] };
    cxla_strbuf text, shapes, names;
    cxla_strbuf_init(&text);
    cxla_strbuf_init(&shapes);
    cxla_strbuf_init(&names);
    cxla_strbuf_puts(&text, "HloModule be_constants\n\nENTRY main {\n"
                            "  p0 = f32[17] parameter(0)\n  p1 = s32[17] parameter(1)\n");
    for (int i = 0; i < N; i++) {
        int nv = 0;
        while (nv < 12 && const_table[i].values[nv]) nv++;
        for (int big = 1; big >= 0; big--) {
            int size = big ? 64 / const_table[i].storage + 1 : 3; /* 65+ bytes, or 3 elements */
            const char *t = const_table[i].type, *tag = big ? "big" : "small";
            cxla_strbuf_printf(&text, "  %s_%s = %s[%d] constant({", tag, t, t, size);
            for (int k = 0; k < size; k++)
                cxla_strbuf_printf(&text, "%s%s", k ? ", " : "", const_table[i].values[k % nv]);
            cxla_strbuf_puts(&text, "})\n");
            cxla_strbuf_printf(&shapes, ", %s[%d]", t, size);
            cxla_strbuf_printf(&names, ", %s_%s", tag, t);
        }
    }
    cxla_strbuf_printf(&text,
                       "  sum = f32[17] add(p0, big_f32)\n  prod = s32[17] multiply(p1, big_s32)\n"
                       "  ROOT t = (f32[17], s32[17]%s) tuple(sum, prod%s)\n}\n",
                       shapes.data, names.data);
    cxla_module *m = NULL;
    cxla_literal *args[2] = {NULL, NULL};
    cxla_status s = cxla_hlo_parse(text.data, text.len, "be_constants", &m);
    if (!s) s = cxla_verify_module(m);
    if (!s)
        s = cxla_literal_parse("f32[17] {0.5, -0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, "
                               "-inf, 1e-30}",
                               (size_t)-1, NULL, &args[0]);
    if (!s)
        s = cxla_literal_parse("s32[17] {3, -3, 7, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, "
                               "-2147483648}",
                               (size_t)-1, NULL, &args[1]);
    if (!s) s = batch_add(b, m, args, 2, "be_constants (test_aot_be.c)");
    CHECK_MSG(s == NULL, "be_constants: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    CHECK(b->count == 1); /* it compiles ahead of time */
    cxla_literal_free(args[0]);
    cxla_literal_free(args[1]);
    cxla_module_destroy(m);
    cxla_strbuf_free(&text);
    cxla_strbuf_free(&shapes);
    cxla_strbuf_free(&names);
}

static void test_aot_s390x(void) {
    make_tmpdir();
    if (!s390x_ready()) {
        remove_tmpdir();
        test_skip_all("no qemu-s390x or s390x-linux-gnu-gcc (packages qemu-user, "
                      "gcc-s390x-linux-gnu, libc6-dev-s390x-cross) to run big-endian code");
    }
    swap_order = true;
    run_prefix = "qemu-s390x ";
    const char *compilers[1] = {"s390x-linux-gnu-gcc -static -fexcess-precision=fast"};
    static const char *const files[] = {"elementwise_convert.hlo",
                                        "elementwise_int.hlo",
                                        "elementwise_complex.hlo",
                                        "rng.hlo",
                                        "sort.hlo",
                                        "combined.hlo"};
    /* The files: CXLA_AOT_BE_FILES's words, else the list above. */
    const char *names[64];
    int n = 0;
    char *list = getenv("CXLA_AOT_BE_FILES") ? strdup(getenv("CXLA_AOT_BE_FILES")) : NULL;
    char *save = NULL;
    for (char *w = list ? strtok_r(list, " ", &save) : NULL; w && n < 64;
         w = strtok_r(NULL, " ", &save))
        names[n++] = w;
    for (size_t i = 0; !list && i < sizeof files / sizeof files[0]; i++) names[n++] = files[i];
    int before = total_compiled;
    if (!list) {
        batch b;
        memset(&b, 0, sizeof b);
        b.index = 699;
        cxla_strbuf_init(&b.includes);
        cxla_strbuf_init(&b.body);
        cxla_strbuf_init(&b.sources);
        add_constants_module(&b);
        batch_run(&b, "be_constants", compilers, 1);
    }
    /* Every constant of more than one byte in NAME_data.c. */
    data_threshold = 1;
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/hlo/cases/%s", CXLA_SOURCE_DIR, names[i]);
        run_file(path, 700 + i, compilers, 1, true);
    }
    fprintf(stderr, "aot: %d cases run as s390x (big-endian) code, %d with a NAME_data.c\n",
            total_compiled - before, total_data_files);
    CHECK(total_compiled - before >= 100 || list != NULL);
    CHECK(total_data_files >= 10 || list != NULL);
    free(list);
    if (!test_failures) remove_tmpdir();
}

TEST_MAIN(TEST(test_aot_s390x))
