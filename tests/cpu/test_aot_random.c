/* The cpu backend's differential generator (test_cpu_random.c: random modules heavy in
 * what fusion joins, inputs full of edge values) on the ahead-of-time output: each module
 * is compiled by cxla compile's generator, all of them linked into one program per C
 * compiler (gcc, clang, tcc: those installed) with no cxla library, run, and compared with
 * the interpreter bit for bit (any NaN matching any NaN). CXLA_RANDOM_COUNT=N changes how
 * many modules are tried (default 60); CXLA_RANDOM_SEED=N runs one. */
#define AOT_RANDOM
#include "cpu/test_aot.c"

/* The generator, without its own test's main. */
#undef TEST_MAIN
#define TEST_MAIN(...)
#include "cpu/test_cpu_random.c"

static void test_aot_random(void) {
    (void)test_random_modules; /* the cpu backend's own test, in test_cpu_random */
    /* Bit for bit, as test_cpu_random: the interpreter's math, not the fast f32 functions. */
    setenv("CXLA_CPU_EXACT_MATH", "1", 1);
    const char *compilers[3];
    int ncc = (int)compilers_found(compilers);
    if (ncc == 0) test_skip_all("no C compiler (gcc, clang, tcc) found");
    make_tmpdir();
    const char *one = getenv("CXLA_RANDOM_SEED"), *count_env = getenv("CXLA_RANDOM_COUNT");
    int count = one ? 1 : count_env ? atoi(count_env) : 60;
    batch b;
    memset(&b, 0, sizeof b);
    cxla_strbuf_init(&b.includes);
    cxla_strbuf_init(&b.body);
    cxla_strbuf_init(&b.sources);
    for (int i = 0; i < count; i++) {
        uint64_t seed = one ? strtoull(one, NULL, 10) : 5000 + (uint64_t)i;
        int params;
        char *text = generate_module(seed, 4 + (int)(seed % 20), &params);
        cxla_module *m = NULL;
        cxla_status s = cxla_hlo_parse(text, strlen(text), "random", &m);
        if (!s) s = cxla_verify_module(m);
        rng r = {seed * 7919};
        cxla_literal *args[3] = {0};
        for (int p = 0; p < params && !s; p++) {
            s = cxla_literal_create(&m->entry->params[p]->shape, &args[p]);
            if (!s) fill(&r, args[p]);
        }
        char where[64];
        snprintf(where, sizeof where, "random seed %" PRIu64, seed);
        if (!s) s = batch_add(&b, m, args, params, where);
        CHECK_MSG(s == NULL, "%s: %s\n%s", where, cxla_status_message(s), text);
        cxla_status_free(s);
        for (int p = 0; p < params; p++) cxla_literal_free(args[p]);
        cxla_module_destroy(m);
        free(text);
    }
    int64_t added = b.count;
    batch_run(&b, "random modules", compilers, ncc);
    fprintf(stderr, "aot: %d of %d random modules compiled ahead of time and compared (%d not)\n",
            total_compiled, total_cases, total_skipped);
    CHECK(added > 0 && total_compiled == added);
    if (!test_failures) remove_tmpdir();
}

int main(int argc, char **argv) {
    static const test_case cases[] = {TEST(test_aot_random)};
    return test_run_all(cases, 1, argc, argv);
}
