/* The compiler driver and its cache: a hit loads without compiling (nor asking the
 * compiler's identity again), a changed compiler gives new keys, a corrupt entry is
 * rebuilt, a missing compiler and code that does not compile give clear errors, an
 * unwritable cache still compiles, and generated code compiles warning-free under gcc and
 * clang with -Wall -Wextra -Werror. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu/compiler.h"
#include "cpu/emit.h"
#include "harness.h"
#include "hlo/hlo.h"

static char cache_dir[256];

static void fresh_cache(void) {
    snprintf(cache_dir, sizeof cache_dir, "/tmp/cxla-test-compiler-XXXXXX");
    if (!mkdtemp(cache_dir)) snprintf(cache_dir, sizeof cache_dir, "/tmp/cxla-test-compiler");
    setenv("CXLA_CACHE_DIR", cache_dir, 1);
    unsetenv("CXLA_CC");
    unsetenv("CXLA_CFLAGS");
}

static const char *const source = "int cxla_test_answer(int x);\n"
                                  "int cxla_test_answer(int x) { return 6 * x; }\n";

typedef int (*answer_fn)(int);

static cpu_library *compile_answer(int salt, cxla_status *out_status) {
    char text[256];
    snprintf(text, sizeof text, "%s/* %d */\n", source, salt);
    const char *srcs[1] = {text};
    size_t lens[1] = {strlen(text)};
    cpu_library *lib = NULL;
    *out_status = cpu_library_compile(srcs, lens, 1, "test module", &lib);
    return lib;
}

/* The path of the one .so in the cache (into |buf|); false when there is none. */
static bool find_entry(char *buf, size_t size) {
    DIR *d = opendir(cache_dir);
    if (!d) return false;
    struct dirent *e;
    bool found = false;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n > 3 && strcmp(e->d_name + n - 3, ".so") == 0) {
            snprintf(buf, size, "%s/%s", cache_dir, e->d_name);
            found = true;
        }
    }
    closedir(d);
    return found;
}

static void test_cache_hit_and_corrupt_entry(void) {
    fresh_cache();
    cxla_status s;
    cpu_library *lib = compile_answer(1, &s);
    CHECK_OK(s);
    CHECK(lib && !cpu_library_from_cache(lib));
    answer_fn fn = (answer_fn)(uintptr_t)cpu_library_symbol(lib, "cxla_test_answer");
    CHECK(fn && fn(7) == 42);
    CHECK(cpu_library_symbol(lib, "no_such_symbol") == NULL);
    cpu_library_close(lib);

    /* A hit: loaded without compiling. */
    lib = compile_answer(1, &s);
    CHECK_OK(s);
    CHECK(lib && cpu_library_from_cache(lib));
    fn = (answer_fn)(uintptr_t)cpu_library_symbol(lib, "cxla_test_answer");
    CHECK(fn && fn(2) == 12);
    cpu_library_close(lib);

    /* A corrupt entry (same size, other bytes: the checksum catches it) is rebuilt. */
    char path[512];
    CHECK(find_entry(path, sizeof path));
    char *bytes = NULL;
    size_t n = 0;
    CHECK_OK(cxla_read_file(path, &bytes, &n));
    if (bytes && n > 100) {
        memset(bytes + n / 2, 0xAB, 64);
        CHECK_OK(cxla_write_file(path, bytes, n));
    }
    free(bytes);
    lib = compile_answer(1, &s);
    CHECK_OK(s);
    CHECK(lib && !cpu_library_from_cache(lib));
    fn = (answer_fn)(uintptr_t)cpu_library_symbol(lib, "cxla_test_answer");
    CHECK(fn && fn(1) == 6);
    cpu_library_close(lib);
    /* A truncated one too. */
    CHECK(find_entry(path, sizeof path));
    CHECK_OK(cxla_write_file(path, "\177ELF", 4));
    lib = compile_answer(1, &s);
    CHECK_OK(s);
    CHECK(lib && !cpu_library_from_cache(lib));
    cpu_library_close(lib);

    /* Clearing removes the entries. */
    int64_t removed = 0;
    CHECK_OK(cpu_cache_clear(&removed));
    CHECK(removed >= 2);
    CHECK(!find_entry(path, sizeof path));
    char dir[512];
    cpu_cache_dir(dir, sizeof dir);
    CHECK_EQ_STR(dir, cache_dir);
}

/* Counts the files in the cache directory whose names end in |suffix|. */
static int64_t count_entries(const char *suffix) {
    DIR *d = opendir(cache_dir);
    if (!d) return 0;
    struct dirent *e;
    int64_t n = 0;
    size_t m = strlen(suffix);
    while ((e = readdir(d)) != NULL) {
        size_t k = strlen(e->d_name);
        n += k > m && strcmp(e->d_name + k - m, suffix) == 0;
    }
    closedir(d);
    return n;
}

/* Writes a CXLA_CC wrapper |path| whose `--version` says |version| and appends a line to
 * |log|, and which runs cc for everything else. */
static void write_wrapper(const char *path, const char *version, const char *log) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f,
            "#!/bin/sh\n"
            "if [ \"$1\" = --version ]; then echo '%s'; echo v >> '%s'; exit 0; fi\n"
            "exec cc \"$@\"\n",
            version, log);
    fclose(f);
    CHECK(chmod(path, 0755) == 0);
}

/* The number of lines of |path| (0 when it is missing). */
static int64_t lines_of(const char *path) {
    char *text = NULL;
    size_t n = 0;
    cxla_status s = cxla_read_file(path, &text, &n);
    int64_t lines = 0;
    for (size_t i = 0; !s && i < n; i++) lines += text[i] == '\n';
    cxla_status_free(s);
    free(text);
    return lines;
}

/* The compiler's identity (its `--version`, in every object's key) is kept on disk beside
 * the objects, keyed by the compiler's files: a load from the cache runs no compiler, and a
 * compiler whose `--version` changes (a wrapper edited in place, as fast as the test can)
 * gives new keys. */
static void test_identity_follows_compiler(void) {
    fresh_cache();
    char a[512], b[512], log[512];
    snprintf(a, sizeof a, "%s/cc-a.sh", cache_dir);
    snprintf(b, sizeof b, "%s/cc-b.sh", cache_dir);
    snprintf(log, sizeof log, "%s/versions.log", cache_dir);
    write_wrapper(a, "wrapped cc 1", log);
    setenv("CXLA_CC", a, 1);
    cxla_status s;
    cpu_library *lib = compile_answer(4, &s);
    CHECK_OK(s);
    CHECK(lib && !cpu_library_from_cache(lib));
    cpu_library_close(lib);
    CHECK_EQ_I64(lines_of(log), 1);
    CHECK_EQ_I64(count_entries(".id"), 1);
    lib = compile_answer(4, &s);
    CHECK_OK(s);
    CHECK(lib && cpu_library_from_cache(lib));
    cpu_library_close(lib);
    CHECK_EQ_I64(lines_of(log), 1); /* remembered */

    /* Same size, same file, at once: another identity, another key. */
    write_wrapper(a, "wrapped cc 2", log);
    lib = compile_answer(4, &s);
    CHECK_OK(s);
    CHECK_MSG(lib && !cpu_library_from_cache(lib), "a changed compiler loaded an old object");
    answer_fn fn = lib ? (answer_fn)(uintptr_t)cpu_library_symbol(lib, "cxla_test_answer") : NULL;
    CHECK(fn && fn(5) == 30);
    cpu_library_close(lib);
    CHECK_EQ_I64(lines_of(log), 2);
    CHECK_EQ_I64(count_entries(".so"), 2);
    CHECK_EQ_I64(count_entries(".id"), 2);

    /* Another compiler, then back to the first: its identity comes from the disk (the
     * process remembers one compiler), so no `--version` runs and the object is a hit. */
    write_wrapper(b, "wrapped cc 3", log);
    setenv("CXLA_CC", b, 1);
    lib = compile_answer(4, &s);
    CHECK_OK(s);
    CHECK(lib && !cpu_library_from_cache(lib));
    cpu_library_close(lib);
    CHECK_EQ_I64(lines_of(log), 3);
    setenv("CXLA_CC", a, 1);
    lib = compile_answer(4, &s);
    CHECK_OK(s);
    CHECK(lib && cpu_library_from_cache(lib));
    cpu_library_close(lib);
    CHECK_EQ_I64(lines_of(log), 3);
    /* The probe reads it there too. */
    char version[64];
    CHECK_OK(cpu_compiler_probe(version, sizeof version));
    CHECK_EQ_STR(version, "wrapped cc 2");
    CHECK_EQ_I64(lines_of(log), 3);

    /* Clearing the cache removes the identities with the objects. */
    int64_t removed = 0;
    CHECK_OK(cpu_cache_clear(&removed));
    CHECK_EQ_I64(count_entries(".id"), 0);
    unsetenv("CXLA_CC");
}

static void test_missing_compiler(void) {
    fresh_cache();
    setenv("CXLA_CC", "/nonexistent/cc", 1);
    cxla_status s;
    cpu_library *lib = compile_answer(2, &s);
    CHECK(lib == NULL);
    CHECK(cxla_status_code_of(s) == CXLA_STATUS_FAILED_PRECONDITION);
    const char *msg = CHECK_ERROR(s);
    CHECK(strstr(msg, "CXLA_CC") != NULL);
    CHECK(strstr(msg, "build-essential") != NULL);
    unsetenv("CXLA_CC");
}

static void test_compile_error(void) {
    fresh_cache();
    const char *srcs[1] = {"this is not C;\n"};
    size_t lens[1] = {strlen(srcs[0])};
    cpu_library *lib = NULL;
    cxla_status s = cpu_library_compile(srcs, lens, 1, "module_bad", &lib);
    CHECK(lib == NULL);
    CHECK(cxla_status_code_of(s) == CXLA_STATUS_INTERNAL);
    const char *msg = CHECK_ERROR(s);
    CHECK(strstr(msg, "module_bad") != NULL);
    CHECK(strstr(msg, "tu0.c") != NULL);
    CHECK(strstr(msg, "error") != NULL);
    /* The source is kept where the message says. */
    const char *at = strstr(msg, cache_dir);
    CHECK(at != NULL);
    if (at) {
        char path[512];
        size_t n = strcspn(at, ";");
        snprintf(path, sizeof path, "%.*s", (int)n, at);
        CHECK_MSG(access(path, R_OK) == 0, "kept source %s", path);
    }
}

static void test_unwritable_cache(void) {
    setenv("CXLA_CACHE_DIR", "/proc/cxla-cannot-write-here", 1);
    cxla_status s;
    cpu_library *lib = compile_answer(3, &s);
    CHECK_OK(s);
    answer_fn fn = lib ? (answer_fn)(uintptr_t)cpu_library_symbol(lib, "cxla_test_answer") : NULL;
    CHECK(fn && fn(3) == 18);
    cpu_library_close(lib);
    fresh_cache();
}

/* Generated code of a few kernels of every family under gcc and clang with warnings as
 * errors. (test_emit compiles every case's code with the default flags.) */
static void test_warning_free(void) {
    const char *const texts[] = {
        "HloModule m\nENTRY e {\n  p0 = s8[5] parameter(0)\n  p1 = s8[5] parameter(1)\n"
        "  ROOT r = s8[5] shift-right-arithmetic(p0, p1)\n}\n",
        "HloModule m\nENTRY e {\n  p0 = u64[5] parameter(0)\n  p1 = u64[5] parameter(1)\n"
        "  ROOT r = u64[5] mulhi(p0, p1)\n}\n",
        "HloModule m\nENTRY e {\n  p0 = f8e4m3fn[5] parameter(0)\n"
        "  ROOT r = s16[5] convert(p0)\n}\n",
        "HloModule m\nENTRY e {\n  p0 = bf16[5] parameter(0)\n  ROOT r = bf16[5] tanh(p0)\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[4,5] parameter(0)\n  v = f32[] parameter(1)\n"
        "  ROOT r = f32[10,6] pad(p, v), padding=1_2_1x-1_2\n}\n",
        "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[5,100] parameter(0)\n"
        "  z = f32[] parameter(1)\n  ROOT r = f32[] reduce(p, z), dimensions={0,1}, "
        "to_apply=add\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[8,9] parameter(0)\n  u = f32[3,4] parameter(1)\n"
        "  i = u32[] parameter(2)\n  j = u32[] parameter(3)\n"
        "  ROOT r = f32[8,9] dynamic-update-slice(p, u, i, j)\n}\n",
        "HloModule m\nENTRY e {\n  a = s32[2,3] parameter(0)\n  b = s32[4,3] parameter(1)\n"
        "  ROOT r = s32[6,3] concatenate(a, b), dimensions={0}\n}\n",
    };
    cxla_strbuf tu;
    cxla_strbuf_init(&tu);
    cpu_emit_prelude(&tu);
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(texts); i++) {
        cxla_module *m = NULL;
        CHECK_OK(cxla_hlo_parse(texts[i], (size_t)-1, "t", &m));
        if (!m) continue;
        char name[16];
        snprintf(name, sizeof name, "w%zu", i);
        CHECK_OK(cpu_emit_kernel(m->entry->root, name, &tu));
        cxla_module_destroy(m);
    }
    const char *compilers[] = {"gcc", "clang"};
    int ran = 0;
    for (int c = 0; c < 2; c++) {
        char probe[64];
        snprintf(probe, sizeof probe, "%s --version > /dev/null 2>&1", compilers[c]);
        if (system(probe) != 0) {
            fprintf(stderr, "note: %s not installed; its warning check is skipped\n", compilers[c]);
            continue;
        }
        fresh_cache();
        setenv("CXLA_CC", compilers[c], 1);
        setenv("CXLA_CFLAGS", "-O2 -std=c11 -Wall -Wextra -Werror", 1);
        const char *srcs[1] = {tu.data};
        size_t lens[1] = {tu.len};
        cpu_library *lib = NULL;
        CHECK_OK(cpu_library_compile(srcs, lens, 1, compilers[c], &lib));
        CHECK(lib && cpu_library_symbol(lib, "w0") != NULL);
        cpu_library_close(lib);
        ran++;
    }
    CHECK(ran >= 1);
    unsetenv("CXLA_CC");
    unsetenv("CXLA_CFLAGS");
    cxla_strbuf_free(&tu);
}

TEST_MAIN(TEST(test_cache_hit_and_corrupt_entry), TEST(test_identity_follows_compiler),
          TEST(test_missing_compiler), TEST(test_compile_error), TEST(test_unwritable_cache),
          TEST(test_warning_free))
