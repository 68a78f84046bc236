/* Runs on several devices in one process (src/runtime/replicas.c, comm_threads.c) and
 * the collectives of the interpreter between them (src/interp/interp_collective.c):
 * each collective on 1, 2, 3 and 4 replicas, with replica groups in both forms, empty
 * groups, tuple operands, every element type, user reductions in group order, the
 * seeds' examples, the -start/-done forms, partitions, failures and time limits, and a
 * data-parallel training step against the same step on the whole batch. Expected values
 * are computed here from the definitions. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "hlo/hlo.h"
#include "cpu/cpu.h"
#include "runtime/replicas.h"

/* ---- helpers ---------------------------------------------------------------------- */

static cxla_module *load(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "test", &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        test_fail(__FILE__, __LINE__, "module does not load: %s\n%s", cxla_status_message(s), text);
        cxla_status_free(s);
        cxla_module_destroy(m);
        return NULL;
    }
    return m;
}

static cxla_literal *lit(const char *text) {
    cxla_literal *l = NULL;
    cxla_status s = cxla_literal_parse(text, (size_t)-1, NULL, &l);
    if (s) {
        test_fail(__FILE__, __LINE__, "literal '%s' does not parse: %s", text,
                  cxla_status_message(s));
        cxla_status_free(s);
        return NULL;
    }
    return l;
}

/* The outcome of a run on |n| devices. */
typedef struct run_out {
    int64_t n;
    cxla_literal **results; /* n, NULL on failure */
    cxla_status *statuses;  /* n, each device's own */
    cxla_status status;     /* the run's */
} run_out;

static void run_out_free(run_out *r) {
    for (int64_t d = 0; d < r->n; d++) {
        cxla_literal_free(r->results[d]);
        cxla_status_free(r->statuses[d]);
    }
    free(r->results);
    free(r->statuses);
    cxla_status_free(r->status);
    memset(r, 0, sizeof(*r));
}

/* Runs |m| on |replicas| (x the module's partitions) with device d's |nargs| arguments
 * args[d * nargs + j] (taken). */
static run_out run_lits(const cxla_module *m, int64_t replicas, double timeout, int64_t nargs,
                        cxla_literal **args) {
    run_out r = {0};
    int64_t p = m && m->num_partitions > 0 ? m->num_partitions : 1;
    r.n = replicas * p;
    r.results = calloc((size_t)r.n, sizeof(*r.results));
    r.statuses = calloc((size_t)r.n, sizeof(*r.statuses));
    const cxla_literal **rows = calloc((size_t)(r.n * nargs + 1), sizeof(*rows));
    const cxla_literal *const **per = calloc((size_t)r.n, sizeof(*per));
    for (int64_t d = 0; d < r.n; d++) {
        for (int64_t j = 0; j < nargs; j++) rows[d * nargs + j] = args[d * nargs + j];
        per[d] = rows + d * nargs;
    }
    cxla_replicas_options o = {.replica_count = replicas, .timeout_seconds = timeout};
    /* CXLA_TEST_BACKEND=cpu runs every device on the cpu backend (tests/cpu/test_cpu_suites.sh);
     * the expected results are the same. */
    const char *backend = getenv("CXLA_TEST_BACKEND");
    exec_compile_options co = {0};
    if (m && backend && strcmp(backend, "cpu") == 0) {
        o.backend = &cpu_backend;
        r.status = cpu_backend.compile(m, &co, &o.compiled);
    }
    if (m && !r.status) r.status = cxla_run_replicated(m, &o, per, nargs, r.results, r.statuses);
    if (o.backend && o.compiled) o.backend->destroy(o.compiled);
    for (int64_t i = 0; i < r.n * nargs; i++) cxla_literal_free(args[i]);
    free(rows);
    free(per);
    return r;
}

/* The same with the arguments as literal text ("s32[2] {1, 2}"). */
static run_out run_texts(const cxla_module *m, int64_t replicas, int64_t nargs,
                         const char *const *texts) {
    int64_t p = m && m->num_partitions > 0 ? m->num_partitions : 1;
    int64_t n = replicas * p * nargs;
    cxla_literal **args = calloc((size_t)(n + 1), sizeof(*args));
    for (int64_t i = 0; i < n; i++) args[i] = lit(texts[i]);
    run_out r = run_lits(m, replicas, 0, nargs, args);
    free(args);
    return r;
}

#define CHECK_RUN_OK(r)                                                                            \
    CHECK_MSG(!(r).status, "the run failed: %s", cxla_status_message((r).status))

/* Checks that |got| equals the literal text |want| exactly. */
static void expect_lit(const cxla_literal *got, const char *want, const char *where) {
    cxla_literal *w = lit(want);
    if (!got || !w) {
        test_fail(__FILE__, __LINE__, "%s: no result", where);
        cxla_literal_free(w);
        return;
    }
    cxla_status s = cxla_literal_compare(got, w, NULL);
    if (s) {
        char *g = cxla_literal_to_string(got, CXLA_LITERAL_PRINT_SHAPE);
        test_fail(__FILE__, __LINE__, "%s: got %s, expected %s (%s)", where, g, want,
                  cxla_status_message(s));
        free(g);
        cxla_status_free(s);
    }
    cxla_literal_free(w);
}

/* A growing text buffer for modules and literals. */
typedef struct text {
    char data[16384];
    size_t len;
} text;

static void tx(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tx(text *t, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(t->data + t->len, sizeof(t->data) - t->len, fmt, args);
    va_end(args);
    if (n > 0) t->len += (size_t)n;
    if (t->len >= sizeof(t->data)) t->len = sizeof(t->data) - 1;
}

/* "s32[n] {v0, v1, ...}" */
static void s32_array(text *t, const int64_t *v, int64_t n) {
    tx(t, "s32[%" PRId64 "] {", n);
    for (int64_t i = 0; i < n; i++) tx(t, "%s%" PRId64, i ? ", " : "", v[i]);
    tx(t, "}");
}

#define ADD_S32                                                                                    \
    "add {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT s = s32[] add(x, y)\n}\n"
#define ADD_F32                                                                                    \
    "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"

/* Value i of replica r's input in the sweeps: distinct everywhere. */
static int64_t xv(int64_t r, int64_t i) {
    return 100 * r + i;
}

/* Runs |module| on |replicas| devices with one s32[len] argument each (xv values). */
static run_out run_sweep(const char *module, int64_t replicas, int64_t len) {
    cxla_module *m = load(module);
    cxla_literal **args = calloc((size_t)replicas, sizeof(*args));
    for (int64_t r = 0; r < replicas; r++) {
        int64_t v[64];
        for (int64_t i = 0; i < len; i++) v[i] = xv(r, i);
        text t = {0};
        s32_array(&t, v, len);
        args[r] = lit(t.data);
    }
    run_out out = run_lits(m, replicas, 0, 1, args);
    free(args);
    cxla_module_destroy(m);
    return out;
}

static void expect_s32(const run_out *r, int64_t d, const int64_t *v, int64_t n, const char *what) {
    text t = {0};
    s32_array(&t, v, n);
    char where[128];
    snprintf(where, sizeof(where), "%s, device %" PRId64 " of %" PRId64, what, d, r->n);
    expect_lit(r->results ? r->results[d] : NULL, t.data, where);
}

/* ---- the seeds' examples ---------------------------------------------------------- */

static void test_seed_all_reduce(void) {
    cxla_module *m = load("HloModule seed\n" ADD_F32 "ENTRY main {\n  p = f32[2] parameter(0)\n"
                          "  ROOT ar = f32[2] all-reduce(p), replica_groups={}, to_apply=add\n}\n");
    const char *in[] = {"f32[2] {1.0, 2.5}", "f32[2] {3.0, 5.25}"};
    run_out r = run_texts(m, 2, 1, in);
    CHECK_RUN_OK(r);
    for (int64_t d = 0; d < 2 && !r.status; d++)
        expect_lit(r.results[d], "f32[2] {4.0, 7.75}", "AllReduce");
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* The older CrossReplicaSum, as old dumps spell it. */
static void test_seed_cross_replica_sum(void) {
    cxla_module *m = load("HloModule seed\n" ADD_F32 "ENTRY main {\n  p = f32[2] parameter(0)\n"
                          "  ROOT crs = f32[2] cross-replica-sum(p), to_apply=add\n}\n");
    const char *in[] = {"f32[2] {1.0, 2.5}", "f32[2] {3.0, 5.1}"};
    run_out r = run_texts(m, 2, 1, in);
    CHECK_RUN_OK(r);
    for (int64_t d = 0; d < 2 && !r.status; d++)
        expect_lit(r.results[d], "f32[2] {4.0, 7.6}", "CrossReplicaSum");
    run_out_free(&r);
    cxla_module_destroy(m);
}

static void test_seed_all_gather(void) {
    cxla_module *m =
        load("HloModule seed\nENTRY main {\n  p = f32[2] parameter(0)\n"
             "  ROOT ag = f32[4] all-gather(p), replica_groups={}, dimensions={0}\n}\n");
    const char *in[] = {"f32[2] {1.0, 2.5}", "f32[2] {3.0, 5.25}"};
    run_out r = run_texts(m, 2, 1, in);
    CHECK_RUN_OK(r);
    for (int64_t d = 0; d < 2 && !r.status; d++)
        expect_lit(r.results[d], "f32[4] {1.0, 2.5, 3.0, 5.25}", "AllGather");
    run_out_free(&r);
    cxla_module_destroy(m);
}

static void test_seed_reduce_scatter(void) {
    cxla_module *m =
        load("HloModule seed\n" ADD_F32 "ENTRY main {\n  p = f32[2] parameter(0)\n"
             "  ROOT rs = f32[1] reduce-scatter(p), replica_groups={}, dimensions={0}, "
             "to_apply=add\n}\n");
    const char *in[] = {"f32[2] {1.0, 2.25}", "f32[2] {3.0, 5.25}"};
    run_out r = run_texts(m, 2, 1, in);
    CHECK_RUN_OK(r);
    if (!r.status) {
        expect_lit(r.results[0], "f32[1] {4.0}", "ReduceScatter replica 0");
        expect_lit(r.results[1], "f32[1] {7.5}", "ReduceScatter replica 1");
    }
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* AllToAll(x, split_dimension=1, concat_dimension=0, split_count=4) on f32[4,16]: XLA's
 * builder writes it as the tuple form on the slices; each core's output is f32[16,4],
 * the pieces received from cores 0..3 stacked along dimension 0. The array form with
 * dimensions={1} keeps f32[4,16], the pieces side by side. */
static void test_seed_all_to_all(void) {
    text mt = {0};
    tx(&mt, "HloModule seed\nENTRY main {\n  x = f32[4,16] parameter(0)\n");
    for (int k = 0; k < 4; k++)
        tx(&mt, "  s%d = f32[4,4] slice(x), slice={[0:4], [%d:%d]}\n", k, 4 * k, 4 * k + 4);
    tx(&mt, "  a2a = (f32[4,4], f32[4,4], f32[4,4], f32[4,4]) all-to-all(s0, s1, s2, s3), "
            "replica_groups={{0,1,2,3}}\n");
    for (int k = 0; k < 4; k++)
        tx(&mt, "  g%d = f32[4,4] get-tuple-element(a2a), index=%d\n", k, k);
    tx(&mt, "  c = f32[16,4] concatenate(g0, g1, g2, g3), dimensions={0}\n");
    tx(&mt, "  arr = f32[4,16] all-to-all(x), replica_groups={}, dimensions={1}\n");
    tx(&mt, "  ROOT t = (f32[16,4], f32[4,16]) tuple(c, arr)\n}\n");
    cxla_module *m = load(mt.data);
    /* x on core r: element (i, j) = 1000 r + 16 i + j. */
    cxla_literal *args[4];
    for (int r = 0; r < 4; r++) {
        text t = {0};
        tx(&t, "f32[4,16] {");
        for (int i = 0; i < 4; i++) {
            tx(&t, "%s{", i ? ", " : "");
            for (int j = 0; j < 16; j++) tx(&t, "%s%d", j ? ", " : "", 1000 * r + 16 * i + j);
            tx(&t, "}");
        }
        tx(&t, "}");
        args[r] = lit(t.data);
    }
    run_out out = run_lits(m, 4, 0, 1, args);
    CHECK_RUN_OK(out);
    for (int r = 0; r < 4 && !out.status; r++) {
        /* Row 4k + i of c is row i of core k's piece r: 1000 k + 16 i + 4 r + j. */
        text want = {0};
        tx(&want, "(f32[16,4], f32[4,16]) ({");
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 4; i++) {
                tx(&want, "%s{", k || i ? ", " : "");
                for (int j = 0; j < 4; j++)
                    tx(&want, "%s%d", j ? ", " : "", 1000 * k + 16 * i + 4 * r + j);
                tx(&want, "}");
            }
        tx(&want, "}, {");
        /* Column 4k + j of arr is column j of core k's piece r. */
        for (int i = 0; i < 4; i++) {
            tx(&want, "%s{", i ? ", " : "");
            for (int k = 0; k < 4; k++)
                for (int j = 0; j < 4; j++)
                    tx(&want, "%s%d", k || j ? ", " : "", 1000 * k + 16 * i + 4 * r + j);
            tx(&want, "}");
        }
        tx(&want, "})");
        char where[64];
        snprintf(where, sizeof(where), "AllToAll core %d", r);
        expect_lit(out.results[r], want.data, where);
    }
    run_out_free(&out);
    cxla_module_destroy(m);
}

static void test_seed_replica_id(void) {
    cxla_module *m = load("HloModule ids\nENTRY main {\n  ROOT r = u32[] replica-id()\n}\n");
    for (int64_t n = 1; n <= 4; n++) {
        run_out r = run_lits(m, n, 0, 0, NULL);
        CHECK_RUN_OK(r);
        for (int64_t d = 0; d < n && !r.status; d++) {
            char want[32];
            snprintf(want, sizeof(want), "u32[] %" PRId64, d);
            expect_lit(r.results[d], want, "replica-id");
        }
        run_out_free(&r);
    }
    cxla_module_destroy(m);
}

/* Unbounded dimensions ('?'): each replica's argument has its own size (on the cpu
 * backend each size is a form of its own, specialized and compiled while the others
 * run: src/cpu/cpu_specialize.c), and the replicas meet in an all-reduce of their sums. */
static void test_unbounded_sizes(void) {
    cxla_module *m = load("HloModule u, replica_count=3\n" ADD_S32 "ENTRY main {\n"
                          "  p = s32[?] parameter(0)\n  zero = s32[] constant(0)\n"
                          "  s = s32[] reduce(p, zero), dimensions={0}, to_apply=add\n"
                          "  ar = s32[] all-reduce(s), replica_groups={}, to_apply=add\n"
                          "  n = s32[?] negate(p)\n  ROOT t = (s32[?], s32[]) tuple(n, ar)\n}\n");
    for (int round = 0; round < 2; round++) {
        /* Sizes 1, 2, 3, then 3, 0, 2: the sums 1 + 3 + 6 and 6 + 0 + 3. */
        static const char *const args[2][3] = {
            {"s32[1] {1}", "s32[2] {1, 2}", "s32[3] {1, 2, 3}"},
            {"s32[3] {1, 2, 3}", "s32[0] {}", "s32[2] {1, 2}"},
        };
        static const char *const want[2][3] = {
            {"( s32[1] {-1}, s32[] 10 )", "( s32[2] {-1, -2}, s32[] 10 )",
             "( s32[3] {-1, -2, -3}, s32[] 10 )"},
            {"( s32[3] {-1, -2, -3}, s32[] 9 )", "( s32[0] {}, s32[] 9 )",
             "( s32[2] {-1, -2}, s32[] 9 )"},
        };
        run_out r = run_texts(m, 3, 1, args[round]);
        CHECK_RUN_OK(r);
        for (int64_t d = 0; d < 3 && !r.status; d++)
            expect_lit(r.results[d], want[round][d], "unbounded sizes");
        run_out_free(&r);
    }
    cxla_module_destroy(m);
}

/* ---- each collective on 1, 2, 3 and 4 replicas ------------------------------------ */

enum { LEN = 12 }; /* divisible by 1, 2, 3 and 4 */

static void test_all_reduce_sizes(void) {
    const char *mod = "HloModule m\n" ADD_S32 "ENTRY main {\n  p = s32[12] parameter(0)\n"
                      "  ROOT ar = s32[12] all-reduce(p), replica_groups={}, to_apply=add\n}\n";
    for (int64_t n = 1; n <= 4; n++) {
        run_out r = run_sweep(mod, n, LEN);
        CHECK_RUN_OK(r);
        int64_t want[LEN];
        for (int64_t i = 0; i < LEN; i++) {
            want[i] = 0;
            for (int64_t k = 0; k < n; k++) want[i] += xv(k, i);
        }
        for (int64_t d = 0; d < n && !r.status; d++) expect_s32(&r, d, want, LEN, "all-reduce");
        run_out_free(&r);
    }
}

static void test_all_gather_sizes(void) {
    for (int64_t n = 1; n <= 4; n++) {
        text mt = {0};
        tx(&mt,
           "HloModule m\nENTRY main {\n  p = s32[3] parameter(0)\n"
           "  ROOT ag = s32[%" PRId64 "] all-gather(p), replica_groups={}, dimensions={0}\n}\n",
           3 * n);
        run_out r = run_sweep(mt.data, n, 3);
        CHECK_RUN_OK(r);
        int64_t want[12];
        for (int64_t k = 0; k < n; k++)
            for (int64_t i = 0; i < 3; i++) want[3 * k + i] = xv(k, i);
        for (int64_t d = 0; d < n && !r.status; d++) expect_s32(&r, d, want, 3 * n, "all-gather");
        run_out_free(&r);
    }
}

static void test_reduce_scatter_sizes(void) {
    for (int64_t n = 1; n <= 4; n++) {
        text mt = {0};
        tx(&mt,
           "HloModule m\n" ADD_S32 "ENTRY main {\n  p = s32[12] parameter(0)\n"
           "  ROOT rs = s32[%" PRId64 "] reduce-scatter(p), replica_groups={}, dimensions={0}, "
           "to_apply=add\n}\n",
           LEN / n);
        run_out r = run_sweep(mt.data, n, LEN);
        CHECK_RUN_OK(r);
        int64_t shard = LEN / n;
        for (int64_t d = 0; d < n && !r.status; d++) {
            int64_t want[LEN];
            for (int64_t i = 0; i < shard; i++) {
                want[i] = 0;
                for (int64_t k = 0; k < n; k++) want[i] += xv(k, d * shard + i);
            }
            expect_s32(&r, d, want, shard, "reduce-scatter");
        }
        run_out_free(&r);
    }
}

static void test_all_to_all_sizes(void) {
    const char *mod = "HloModule m\nENTRY main {\n  p = s32[12] parameter(0)\n"
                      "  ROOT a = s32[12] all-to-all(p), replica_groups={}, dimensions={0}\n}\n";
    for (int64_t n = 1; n <= 4; n++) {
        run_out r = run_sweep(mod, n, LEN);
        CHECK_RUN_OK(r);
        int64_t shard = LEN / n;
        for (int64_t d = 0; d < n && !r.status; d++) {
            int64_t want[LEN];
            for (int64_t k = 0; k < n; k++)
                for (int64_t i = 0; i < shard; i++) want[k * shard + i] = xv(k, d * shard + i);
            expect_s32(&r, d, want, LEN, "all-to-all (array form)");
        }
        run_out_free(&r);
    }
    /* The tuple form: operand k goes to replica k; element k comes from replica k. */
    for (int64_t n = 1; n <= 4; n++) {
        text mt = {0};
        tx(&mt, "HloModule m\nENTRY main {\n  p = s32[%" PRId64 "] parameter(0)\n", 2 * n);
        for (int64_t k = 0; k < n; k++)
            tx(&mt, "  s%" PRId64 " = s32[2] slice(p), slice={[%" PRId64 ":%" PRId64 "]}\n", k,
               2 * k, 2 * k + 2);
        tx(&mt, "  ROOT a = (");
        for (int64_t k = 0; k < n; k++) tx(&mt, "%ss32[2]", k ? ", " : "");
        tx(&mt, ") all-to-all(");
        for (int64_t k = 0; k < n; k++) tx(&mt, "%ss%" PRId64, k ? ", " : "", k);
        tx(&mt, "), replica_groups={}\n}\n");
        run_out r = run_sweep(mt.data, n, 2 * n);
        CHECK_RUN_OK(r);
        for (int64_t d = 0; d < n && !r.status; d++) {
            text want = {0};
            tx(&want, "(");
            for (int64_t k = 0; k < n; k++) tx(&want, "%ss32[2]", k ? ", " : "");
            tx(&want, ") (");
            for (int64_t k = 0; k < n; k++)
                tx(&want, "%s{%" PRId64 ", %" PRId64 "}", k ? ", " : "", xv(k, 2 * d),
                   xv(k, 2 * d + 1));
            tx(&want, ")");
            expect_lit(r.results[d], want.data, "all-to-all (tuple form)");
        }
        run_out_free(&r);
    }
}

static void test_collective_permute_sizes(void) {
    for (int64_t n = 1; n <= 4; n++) {
        /* A ring: replica k sends to k + 1. */
        text mt = {0};
        tx(&mt, "HloModule m\nENTRY main {\n  p = s32[3] parameter(0)\n"
                "  ROOT cp = s32[3] collective-permute(p), source_target_pairs={");
        for (int64_t k = 0; k < n; k++)
            tx(&mt, "%s{%" PRId64 ",%" PRId64 "}", k ? "," : "", k, (k + 1) % n);
        tx(&mt, "}\n}\n");
        run_out r = run_sweep(mt.data, n, 3);
        CHECK_RUN_OK(r);
        for (int64_t d = 0; d < n && !r.status; d++) {
            int64_t from = (d + n - 1) % n, want[3];
            for (int64_t i = 0; i < 3; i++) want[i] = xv(from, i);
            expect_s32(&r, d, want, 3, "collective-permute ring");
        }
        run_out_free(&r);
        /* Only replica 0 sends, to the last one; the others receive zeros. */
        text mt2 = {0};
        tx(&mt2,
           "HloModule m\nENTRY main {\n  p = s32[3] parameter(0)\n"
           "  ROOT cp = s32[3] collective-permute(p), source_target_pairs={{0,%" PRId64 "}}\n}\n",
           n - 1);
        r = run_sweep(mt2.data, n, 3);
        CHECK_RUN_OK(r);
        for (int64_t d = 0; d < n && !r.status; d++) {
            int64_t want[3] = {0, 0, 0};
            if (d == n - 1)
                for (int64_t i = 0; i < 3; i++) want[i] = xv(0, i);
            expect_s32(&r, d, want, 3, "collective-permute one pair");
        }
        run_out_free(&r);
    }
}

static void test_collective_broadcast_sizes(void) {
    const char *mod = "HloModule m\nENTRY main {\n  p = s32[3] parameter(0)\n"
                      "  ROOT b = s32[3] collective-broadcast(p), replica_groups={}\n}\n";
    for (int64_t n = 1; n <= 4; n++) {
        run_out r = run_sweep(mod, n, 3);
        CHECK_RUN_OK(r);
        int64_t want[3];
        for (int64_t i = 0; i < 3; i++) want[i] = xv(0, i);
        for (int64_t d = 0; d < n && !r.status; d++)
            expect_s32(&r, d, want, 3, "collective-broadcast");
        run_out_free(&r);
    }
}

/* ---- replica groups --------------------------------------------------------------- */

/* all-reduce over pairs, written in both forms. */
static void test_groups_all_reduce(void) {
    static const struct {
        const char *groups;
        int partner[4];
    } cases[] = {
        {"{{0,1},{2,3}}", {1, 0, 3, 2}}, {"[2,2]<=[4]", {1, 0, 3, 2}},
        {"{{0,2},{1,3}}", {2, 3, 0, 1}}, {"[2,2]<=[2,2]T(1,0)", {2, 3, 0, 1}},
        {"{{3,0},{2,1}}", {3, 2, 1, 0}},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        text mt = {0};
        tx(&mt,
           "HloModule m, replica_count=4\n" ADD_S32 "ENTRY main {\n  p = s32[2] parameter(0)\n"
           "  ROOT ar = s32[2] all-reduce(p), replica_groups=%s, to_apply=add\n}\n",
           cases[c].groups);
        run_out r = run_sweep(mt.data, 4, 2);
        CHECK_RUN_OK(r);
        for (int64_t d = 0; d < 4 && !r.status; d++) {
            int64_t q = cases[c].partner[d];
            int64_t want[2] = {xv(d, 0) + xv(q, 0), xv(d, 1) + xv(q, 1)};
            expect_s32(&r, d, want, 2, cases[c].groups);
        }
        run_out_free(&r);
    }
    /* Groups of different sizes, in any order, and one replica on its own. */
    run_out r = run_sweep("HloModule m\n" ADD_S32 "ENTRY main {\n  p = s32[1] parameter(0)\n"
                          "  ROOT ar = s32[1] all-reduce(p), replica_groups={{2},{3,0,1}}, "
                          "to_apply=add\n}\n",
                          4, 1);
    CHECK_RUN_OK(r);
    if (!r.status) {
        int64_t all3 = xv(0, 0) + xv(1, 0) + xv(3, 0), two = xv(2, 0);
        expect_s32(&r, 0, &all3, 1, "uneven groups");
        expect_s32(&r, 1, &all3, 1, "uneven groups");
        expect_s32(&r, 2, &two, 1, "uneven groups");
        expect_s32(&r, 3, &all3, 1, "uneven groups");
    }
    run_out_free(&r);
}

/* The order of a group is the order of the concatenation, the scatter and the exchange. */
static void test_groups_order(void) {
    run_out r = run_sweep("HloModule m\nENTRY main {\n  p = s32[2] parameter(0)\n"
                          "  ROOT ag = s32[4] all-gather(p), replica_groups={{3,1},{0,2}}, "
                          "dimensions={0}\n}\n",
                          4, 2);
    CHECK_RUN_OK(r);
    for (int64_t d = 0; d < 4 && !r.status; d++) {
        int64_t a = d % 2 ? 3 : 0, b = d % 2 ? 1 : 2;
        int64_t want[4] = {xv(a, 0), xv(a, 1), xv(b, 0), xv(b, 1)};
        expect_s32(&r, d, want, 4, "all-gather {{3,1},{0,2}}");
    }
    run_out_free(&r);

    r = run_sweep("HloModule m\n" ADD_S32 "ENTRY main {\n  p = s32[4] parameter(0)\n"
                  "  ROOT rs = s32[2] reduce-scatter(p), replica_groups={{1,0},{3,2}}, "
                  "dimensions={0}, to_apply=add\n}\n",
                  4, 4);
    CHECK_RUN_OK(r);
    for (int64_t d = 0; d < 4 && !r.status; d++) {
        int64_t q = d ^ 1, pos = d % 2 ? 0 : 1; /* 1 and 3 come first in their groups */
        int64_t want[2] = {xv(d, 2 * pos) + xv(q, 2 * pos),
                           xv(d, 2 * pos + 1) + xv(q, 2 * pos + 1)};
        expect_s32(&r, d, want, 2, "reduce-scatter {{1,0},{3,2}}");
    }
    run_out_free(&r);

    r = run_sweep(
        "HloModule m\nENTRY main {\n  p = s32[4] parameter(0)\n"
        "  ROOT a = s32[4] all-to-all(p), replica_groups={{2,0},{1,3}}, dimensions={0}\n}\n",
        4, 4);
    CHECK_RUN_OK(r);
    for (int64_t d = 0; d < 4 && !r.status; d++) {
        const int64_t g[2] = {d % 2 ? 1 : 2, d % 2 ? 3 : 0};
        int64_t pos = g[0] == d ? 0 : 1;
        int64_t want[4];
        for (int64_t k = 0; k < 2; k++)
            for (int64_t i = 0; i < 2; i++) want[2 * k + i] = xv(g[k], 2 * pos + i);
        expect_s32(&r, d, want, 4, "all-to-all {{2,0},{1,3}}");
    }
    run_out_free(&r);

    r = run_sweep("HloModule m\nENTRY main {\n  p = s32[2] parameter(0)\n"
                  "  ROOT b = s32[2] collective-broadcast(p), replica_groups={{2,0},{3,1}}\n}\n",
                  4, 2);
    CHECK_RUN_OK(r);
    for (int64_t d = 0; d < 4 && !r.status; d++) {
        int64_t root = d % 2 ? 3 : 2;
        int64_t want[2] = {xv(root, 0), xv(root, 1)};
        expect_s32(&r, d, want, 2, "collective-broadcast {{2,0},{3,1}}");
    }
    run_out_free(&r);
}

/* Empty groups are all replicas; so are absent ones. */
static void test_groups_empty(void) {
    const char *mods[] = {
        "HloModule m\n" ADD_S32 "ENTRY main {\n  p = s32[1] parameter(0)\n"
        "  ROOT ar = s32[1] all-reduce(p), replica_groups={}, to_apply=add\n}\n",
        "HloModule m\n" ADD_S32 "ENTRY main {\n  p = s32[1] parameter(0)\n"
        "  ROOT ar = s32[1] all-reduce(p), to_apply=add\n}\n",
    };
    for (int k = 0; k < 2; k++) {
        run_out r = run_sweep(mods[k], 3, 1);
        CHECK_RUN_OK(r);
        int64_t want = xv(0, 0) + xv(1, 0) + xv(2, 0);
        for (int64_t d = 0; d < 3 && !r.status; d++) expect_s32(&r, d, &want, 1, "empty groups");
        run_out_free(&r);
    }
}

/* ---- tuples, element types and reductions ----------------------------------------- */

static void test_tuple_operands(void) {
    cxla_module *m =
        load("HloModule m\n" ADD_S32
             "ENTRY main {\n  a = s32[2] parameter(0)\n  b = s32[] parameter(1)\n"
             "  c = s32[4] parameter(2)\n"
             "  ar = (s32[2], s32[]) all-reduce(a, b), replica_groups={}, to_apply=add\n"
             "  ag = (s32[4], s32[8]) all-gather(a, c), replica_groups={}, dimensions={0}\n"
             "  rs = (s32[1], s32[2]) reduce-scatter(a, c), replica_groups={}, "
             "dimensions={0}, to_apply=add\n"
             "  cp = (s32[2], s32[]) collective-permute(a, b), source_target_pairs={{0,1},{1,0}}\n"
             "  ROOT t = ((s32[2], s32[]), (s32[4], s32[8]), (s32[1], s32[2]), "
             "(s32[2], s32[])) tuple(ar, ag, rs, cp)\n}\n");
    const char *in[] = {"s32[2] {1, 2}",   "s32[] 10", "s32[4] {1, 2, 3, 4}",
                        "s32[2] {30, 40}", "s32[] 5",  "s32[4] {10, 20, 30, 40}"};
    run_out r = run_texts(m, 2, 3, in);
    CHECK_RUN_OK(r);
    if (!r.status) {
        expect_lit(r.results[0],
                   "((s32[2], s32[]), (s32[4], s32[8]), (s32[1], s32[2]), (s32[2], s32[])) "
                   "(({31, 42}, 15), ({1, 2, 30, 40}, {1, 2, 3, 4, 10, 20, 30, 40}), ({31}, "
                   "{11, 22}), ({30, 40}, 5))",
                   "tuples, replica 0");
        expect_lit(r.results[1],
                   "((s32[2], s32[]), (s32[4], s32[8]), (s32[1], s32[2]), (s32[2], s32[])) "
                   "(({31, 42}, 15), ({1, 2, 30, 40}, {1, 2, 3, 4, 10, 20, 30, 40}), ({42}, "
                   "{33, 44}), ({1, 2}, 10))",
                   "tuples, replica 1");
    }
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* Rank 0 and zero-size arrays. */
static void test_edge_shapes(void) {
    cxla_module *m =
        load("HloModule m\n" ADD_F32
             "ENTRY main {\n  a = f32[] parameter(0)\n  b = f32[0] parameter(1)\n"
             "  c = f32[2,0] parameter(2)\n"
             "  ar = (f32[], f32[0]) all-reduce(a, b), replica_groups={}, to_apply=add\n"
             "  ag = f32[4,0] all-gather(c), replica_groups={}, dimensions={0}\n"
             "  agb = f32[0] all-gather(b), replica_groups={}, dimensions={0}\n"
             "  rs = f32[0] reduce-scatter(b), replica_groups={}, dimensions={0}, to_apply=add\n"
             "  a2a = f32[0] all-to-all(b), replica_groups={}, dimensions={0}\n"
             "  cp = f32[] collective-permute(a), source_target_pairs={{0,1},{1,0}}\n"
             "  ROOT t = ((f32[], f32[0]), f32[4,0], f32[0], f32[0], f32[0], f32[]) "
             "tuple(ar, ag, agb, rs, a2a, cp)\n}\n");
    const char *in[] = {"f32[] 1.5",  "f32[0] {}", "f32[2,0] {{}, {}}",
                        "f32[] -inf", "f32[0] {}", "f32[2,0] {{}, {}}"};
    run_out r = run_texts(m, 2, 3, in);
    CHECK_RUN_OK(r);
    if (!r.status) {
        expect_lit(r.results[0],
                   "((f32[], f32[0]), f32[4,0], f32[0], f32[0], f32[0], f32[]) ((-inf, {}), "
                   "{{}, {}, {}, {}}, {}, {}, {}, -inf)",
                   "edge shapes, replica 0");
        expect_lit(r.results[1],
                   "((f32[], f32[0]), f32[4,0], f32[0], f32[0], f32[0], f32[]) ((-inf, {}), "
                   "{{}, {}, {}, {}}, {}, {}, {}, 1.5)",
                   "edge shapes, replica 1");
    }
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* Every element type: a sum over two replicas and a gather that moves the bits. */
static void test_every_type(void) {
    static const struct {
        const char *type;
        const char *in0, *in1, *sum;
    } cases[] = {
        {"pred", "{0, 1, 0}", "{1, 1, 0}", "{1, 1, 0}"},
        {"s2", "{0, 0, 1}", "{1, 0, -1}", "{1, 0, 0}"},
        {"s4", "{0, 7, 1}", "{1, -8, -1}", "{1, -1, 0}"},
        {"s8", "{0, 127, 1}", "{1, 1, -1}", "{1, -128, 0}"},
        {"s16", "{0, 32767, -5}", "{1, 1, -1}", "{1, -32768, -6}"},
        {"s32", "{0, 2147483647, -5}", "{1, 1, -1}", "{1, -2147483648, -6}"},
        {"s64", "{0, 9223372036854775807, -5}", "{1, 1, -1}", "{1, -9223372036854775808, -6}"},
        {"u2", "{0, 1, 2}", "{1, 0, 1}", "{1, 1, 3}"},
        {"u4", "{0, 15, 2}", "{1, 1, 1}", "{1, 0, 3}"},
        {"u8", "{0, 255, 2}", "{1, 1, 1}", "{1, 0, 3}"},
        {"u16", "{0, 65535, 2}", "{1, 1, 1}", "{1, 0, 3}"},
        {"u32", "{0, 4294967295, 2}", "{1, 1, 1}", "{1, 0, 3}"},
        {"u64", "{0, 18446744073709551615, 2}", "{1, 1, 1}", "{1, 0, 3}"},
        {"f16", "{0.5, 1, -0}", "{0.5, -2, -0}", "{1, -1, -0}"},
        {"bf16", "{0.5, 1, -0}", "{0.5, -2, -0}", "{1, -1, -0}"},
        {"f32", "{0.5, inf, -0}", "{0.5, -2, -0}", "{1, inf, -0}"},
        {"f64", "{0.5, 1e300, -0}", "{0.5, 1e300, -0}", "{1, 2e300, -0}"},
        {"c64", "{(1, 2), (0, -1)}", "{(0.5, -2), (1, 1)}", "{(1.5, 0), (1, 0)}"},
        {"c128", "{(1, 2), (0, -1)}", "{(0.5, -2), (1, 1)}", "{(1.5, 0), (1, 0)}"},
        {"f8e5m2", "{0.5, 1, -0}", "{0.5, -2, -0}", "{1, -1, -0}"},
        {"f8e4m3", "{0.5, 1, -0}", "{0.5, -2, -0}", "{1, -1, -0}"},
        {"f8e4m3fn", "{0.5, 1, -0}", "{0.5, -2, -0}", "{1, -1, -0}"},
        {"f8e3m4", "{0.5, 1, -0}", "{0.5, -2, -0}", "{1, -1, -0}"},
        {"f8e4m3b11fnuz", "{0.5, 1, 0}", "{0.5, -2, 0}", "{1, -1, 0}"},
        {"f8e5m2fnuz", "{0.5, 1, 0}", "{0.5, -2, 0}", "{1, -1, 0}"},
        {"f8e4m3fnuz", "{0.5, 1, 0}", "{0.5, -2, 0}", "{1, -1, 0}"},
        {"f4e2m1fn", "{0.5, 1, -0}", "{0.5, -2, -0}", "{1, -1, -0}"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const char *t = cases[c].type;
        int n = strncmp(t, "c", 1) == 0 ? 2 : 3;
        text mt = {0};
        tx(&mt,
           "HloModule m\nsum {\n  x = %s[] parameter(0)\n  y = %s[] parameter(1)\n"
           "  ROOT s = %s[] add(x, y)\n}\n"
           "ENTRY main {\n  p = %s[%d] parameter(0)\n"
           "  ar = %s[%d] all-reduce(p), replica_groups={}, to_apply=sum\n"
           "  ag = %s[%d] all-gather(p), replica_groups={}, dimensions={0}\n"
           "  ROOT t = (%s[%d], %s[%d]) tuple(ar, ag)\n}\n",
           t, t, t, t, n, t, n, t, 2 * n, t, n, t, 2 * n);
        cxla_module *m = load(mt.data);
        text a = {0}, b = {0}, want = {0};
        tx(&a, "%s[%d] %s", t, n, cases[c].in0);
        tx(&b, "%s[%d] %s", t, n, cases[c].in1);
        /* The gather is the two inputs one after the other: join their element lists. */
        size_t l0 = strlen(cases[c].in0);
        tx(&want, "(%s[%d], %s[%d]) (%s, %.*s, %s)", t, n, t, 2 * n, cases[c].sum, (int)(l0 - 1),
           cases[c].in0, cases[c].in1 + 1);
        const char *in[] = {a.data, b.data};
        run_out r = run_texts(m, 2, 1, in);
        CHECK_MSG(!r.status, "%s: %s", t, cxla_status_message(r.status));
        for (int64_t d = 0; d < 2 && !r.status; d++) expect_lit(r.results[d], want.data, t);
        run_out_free(&r);
        cxla_module_destroy(m);
    }
    /* f8e8m0fnu has no zero and no sign: a max of powers of two. */
    cxla_module *m =
        load("HloModule m\nmx {\n  x = f8e8m0fnu[] parameter(0)\n"
             "  y = f8e8m0fnu[] parameter(1)\n  ROOT s = f8e8m0fnu[] maximum(x, y)\n}\n"
             "ENTRY main {\n  p = f8e8m0fnu[3] parameter(0)\n"
             "  ROOT ar = f8e8m0fnu[3] all-reduce(p), replica_groups={}, to_apply=mx\n}\n");
    const char *in[] = {"f8e8m0fnu[3] {0.5, 4, 1}", "f8e8m0fnu[3] {2, 1, 1}",
                        "f8e8m0fnu[3] {0.25, 8, 1}"};
    run_out r = run_texts(m, 3, 1, in);
    CHECK_RUN_OK(r);
    for (int64_t d = 0; d < 3 && !r.status; d++)
        expect_lit(r.results[d], "f8e8m0fnu[3] {2, 8, 1}", "f8e8m0fnu max");
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* The recognized reductions: product, min, max, and/or on pred, with NaN. */
static void test_reductions(void) {
    static const struct {
        const char *type, *op, *in[3], *want;
    } cases[] = {
        {"s32", "multiply", {"{2, -3, 0}", "{5, 3, 7}", "{-1, 2, 9}"}, "{-10, -18, 0}"},
        {"s32", "minimum", {"{2, -3, 0}", "{5, 3, 7}", "{-1, 2, 9}"}, "{-1, -3, 0}"},
        {"u8", "maximum", {"{2, 200, 0}", "{5, 3, 7}", "{1, 2, 9}"}, "{5, 200, 9}"},
        {"f32", "maximum", {"{2, nan, -0}", "{5, 3, 0}", "{-inf, 2, -0}"}, "{5, nan, 0}"},
        {"f32", "minimum", {"{2, 1, -0}", "{5, nan, 0}", "{-inf, 2, 0}"}, "{-inf, nan, -0}"},
        {"f64", "multiply", {"{2, 1e200, -1}", "{0.5, 1e200, -1}", "{3, 1, -1}"}, "{3, inf, -1}"},
        {"pred", "and", {"{1, 1, 0}", "{1, 0, 0}", "{1, 1, 1}"}, "{1, 0, 0}"},
        {"pred", "or", {"{0, 1, 0}", "{0, 0, 0}", "{0, 1, 1}"}, "{0, 1, 1}"},
        {"s16", "xor", {"{1, 3, 0}", "{2, 3, 0}", "{4, 3, 0}"}, "{7, 3, 0}"},
        {"c64", "multiply", {"{(0, 1)}", "{(0, 1)}", "{(2, 0)}"}, "{(-2, 0)}"},
        {"bf16", "add", {"{256, 1}", "{1, 1}", "{1, 1}"}, "{256, 3}"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const char *t = cases[c].type;
        int n = 1;
        for (const char *p = cases[c].in[0]; *p; p++) n += *p == ',' && cases[c].type[0] != 'c';
        if (t[0] == 'c') n = 1;
        text mt = {0};
        tx(&mt,
           "HloModule m\nf {\n  x = %s[] parameter(0)\n  y = %s[] parameter(1)\n"
           "  ROOT s = %s[] %s(x, y)\n}\n"
           "ENTRY main {\n  p = %s[%d] parameter(0)\n"
           "  ROOT ar = %s[%d] all-reduce(p), replica_groups={}, to_apply=f\n}\n",
           t, t, t, cases[c].op, t, n, t, n);
        cxla_module *m = load(mt.data);
        text in[3], want = {0};
        const char *ins[3];
        for (int k = 0; k < 3; k++) {
            in[k].len = 0;
            tx(&in[k], "%s[%d] %s", t, n, cases[c].in[k]);
            ins[k] = in[k].data;
        }
        tx(&want, "%s[%d] %s", t, n, cases[c].want);
        run_out r = run_texts(m, 3, 1, ins);
        CHECK_MSG(!r.status, "%s %s: %s", t, cases[c].op, cxla_status_message(r.status));
        for (int64_t d = 0; d < 3 && !r.status; d++)
            expect_lit(r.results[d], want.data, cases[c].op);
        run_out_free(&r);
        cxla_module_destroy(m);
    }
}

/* A reducer of another float type than the operands (a bf16 all-reduce with an f32 add,
 * which XLA's verifier lets through): the values are converted to f32, summed in it and
 * rounded back once, so 256 + 1 + 1 gives 258 where a bf16 sum would stay at 256. On the
 * cpu backend (test_cpu_suites.sh) this is a collective step, not the handler. */
static void test_reducer_in_other_precision(void) {
    cxla_module *m =
        load("HloModule m\n" ADD_F32 "ENTRY main {\n  p = bf16[3] parameter(0)\n"
             "  ROOT ar = bf16[3] all-reduce(p), replica_groups={}, to_apply=add\n}\n");
    const char *ins[3] = {"bf16[3] {256, 0.5, -inf}", "bf16[3] {1, 0.25, 1}",
                          "bf16[3] {1, 0.125, nan}"};
    run_out r = run_texts(m, 3, 1, ins);
    CHECK_RUN_OK(r);
    for (int64_t d = 0; d < 3 && !r.status; d++)
        expect_lit(r.results[d], "bf16[3] {258, 0.875, nan}", "bf16 all-reduce, f32 add");
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* A computation that is not commutative shows the order: f(x, y) = 2x + y folds the group
 * from its first member to its last. */
static void test_user_reduction_order(void) {
    static const struct {
        const char *groups;
        int order[4];
    } cases[] = {
        {"{}", {0, 1, 2, 3}},
        {"{{3,1,0,2}}", {3, 1, 0, 2}},
        {"[1,4]<=[4]", {0, 1, 2, 3}},
        {"[1,4]<=[2,2]T(1,0)", {0, 2, 1, 3}},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        text mt = {0};
        tx(&mt,
           "HloModule m\nf {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n"
           "  two = s32[] constant(2)\n  x2 = s32[] multiply(x, two)\n"
           "  ROOT s = s32[] add(x2, y)\n}\n"
           "ENTRY main {\n  p = s32[2] parameter(0)\n"
           "  ROOT ar = s32[2] all-reduce(p), replica_groups=%s, to_apply=f\n}\n",
           cases[c].groups);
        run_out r = run_sweep(mt.data, 4, 2);
        CHECK_RUN_OK(r);
        int64_t want[2];
        for (int64_t i = 0; i < 2; i++) {
            want[i] = xv(cases[c].order[0], i);
            for (int k = 1; k < 4; k++) want[i] = 2 * want[i] + xv(cases[c].order[k], i);
        }
        for (int64_t d = 0; d < 4 && !r.status; d++) expect_s32(&r, d, want, 2, cases[c].groups);
        run_out_free(&r);
    }
    /* A computation with a select: the value of larger magnitude (ties: the first). */
    cxla_module *m =
        load("HloModule m\nf {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
             "  ax = f32[] abs(x)\n  ay = f32[] abs(y)\n"
             "  ge = pred[] compare(ax, ay), direction=GE\n"
             "  ROOT s = f32[] select(ge, x, y)\n}\n"
             "ENTRY main {\n  p = f32[3] parameter(0)\n"
             "  ROOT ar = f32[3] all-reduce(p), replica_groups={{2,0,1}}, to_apply=f\n}\n");
    const char *in[] = {"f32[3] {1, -5, 2}", "f32[3] {-3, 5, -2}", "f32[3] {2, 4, 1}"};
    run_out r = run_texts(m, 3, 1, in);
    CHECK_RUN_OK(r);
    for (int64_t d = 0; d < 3 && !r.status; d++)
        expect_lit(r.results[d], "f32[3] {-3, -5, 2}", "select");
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* f32 sums depend on the order; the order is the group's, the same on every replica and
 * in every run. */
static void test_reproducible_order(void) {
    static const float v[4] = {1e8f, 1.0f, -1e8f, 1.0f};
    static const struct {
        const char *groups;
        int order[4];
    } cases[] = {{"{}", {0, 1, 2, 3}}, {"{{1,3,0,2}}", {1, 3, 0, 2}}};
    for (size_t c = 0; c < 2; c++) {
        volatile float want = v[cases[c].order[0]];
        for (int k = 1; k < 4; k++) want = want + v[cases[c].order[k]];
        char wants[64];
        snprintf(wants, sizeof(wants), "f32[1] {%.9g}", (double)want);
        text mt = {0};
        tx(&mt,
           "HloModule m\n" ADD_F32 "ENTRY main {\n  p = f32[1] parameter(0)\n"
           "  ROOT ar = f32[1] all-reduce(p), replica_groups=%s, to_apply=add\n}\n",
           cases[c].groups);
        cxla_module *m = load(mt.data);
        for (int rep = 0; rep < 3; rep++) {
            cxla_literal *args[4];
            for (int d = 0; d < 4; d++) {
                char s[64];
                snprintf(s, sizeof(s), "f32[1] {%.9g}", (double)v[d]);
                args[d] = lit(s);
            }
            run_out r = run_lits(m, 4, 0, 1, args);
            CHECK_RUN_OK(r);
            for (int64_t d = 0; d < 4 && !r.status; d++)
                expect_lit(r.results[d], wants, cases[c].groups);
            run_out_free(&r);
        }
        cxla_module_destroy(m);
    }
    /* The two orders give different sums, so the test can tell them apart. */
    CHECK((1e8f + 1.0f) + -1e8f + 1.0f != (1.0f + 1.0f) + 1e8f + -1e8f);
}

/* ---- -start / -done forms and async wrappers -------------------------------------- */

static void test_start_done(void) {
    cxla_module *m = load(
        "HloModule m\n" ADD_S32 "rs_body {\n  q = s32[4]{0} parameter(0)\n"
        "  ROOT rs = s32[2]{0} reduce-scatter(q), replica_groups={}, dimensions={0}, "
        "to_apply=add\n}\n"
        "ENTRY main {\n  p = s32[4]{0} parameter(0)\n"
        "  ars = s32[4]{0} all-reduce-start(p), replica_groups={}, to_apply=add\n"
        "  ard = s32[4]{0} all-reduce-done(ars)\n"
        "  ags = (s32[4]{0}, s32[8]{0}) all-gather-start(p), replica_groups={}, dimensions={0}\n"
        "  agd = s32[8]{0} all-gather-done(ags)\n"
        "  cps = (s32[4]{0}, s32[4]{0}, u32[], u32[]) collective-permute-start(p), "
        "source_target_pairs={{0,1},{1,0}}\n"
        "  cpd = s32[4]{0} collective-permute-done(cps)\n"
        "  a2s = ((s32[4]{0}), s32[4]{0}) all-to-all-start(p), replica_groups={}, dimensions={0}\n"
        "  a2d = s32[4]{0} all-to-all-done(a2s), replica_groups={}, dimensions={0}\n"
        "  rss = ((s32[4]{0}), s32[2]{0}, s32[]) async-start(p), calls=rs_body\n"
        "  rsd = s32[2]{0} async-done(rss), calls=rs_body\n"
        "  ROOT t = (s32[4]{0}, s32[8]{0}, s32[4]{0}, s32[4]{0}, s32[2]{0}) tuple(ard, agd, cpd, "
        "a2d, rsd)\n}\n");
    const char *in[] = {"s32[4] {1, 2, 3, 4}", "s32[4] {10, 20, 30, 40}"};
    run_out r = run_texts(m, 2, 1, in);
    CHECK_RUN_OK(r);
    if (!r.status) {
        expect_lit(r.results[0],
                   "(s32[4], s32[8], s32[4], s32[4], s32[2]) ({11, 22, 33, 44}, {1, 2, 3, 4, "
                   "10, 20, 30, 40}, {10, 20, 30, 40}, {1, 2, 10, 20}, {11, 22})",
                   "start/done replica 0");
        expect_lit(r.results[1],
                   "(s32[4], s32[8], s32[4], s32[4], s32[2]) ({11, 22, 33, 44}, {1, 2, 3, 4, "
                   "10, 20, 30, 40}, {1, 2, 3, 4}, {3, 4, 30, 40}, {33, 44})",
                   "start/done replica 1");
    }
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* A collective in a loop meets its peers once per iteration. */
static void test_collective_in_loop(void) {
    cxla_module *m = load(
        "HloModule m\n" ADD_S32
        "cond {\n  s = (s32[], s32[2]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
        "  n = s32[] constant(3)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
        "body {\n  s = (s32[], s32[2]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
        "  v = s32[2] get-tuple-element(s), index=1\n"
        "  ar = s32[2] all-reduce(v), replica_groups={}, to_apply=add\n"
        "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
        "  ROOT t = (s32[], s32[2]) tuple(j, ar)\n}\n"
        "ENTRY main {\n  p = s32[2] parameter(0)\n  z = s32[] constant(0)\n"
        "  t = (s32[], s32[2]) tuple(z, p)\n"
        "  w = (s32[], s32[2]) while(t), condition=cond, body=body\n"
        "  ROOT v = s32[2] get-tuple-element(w), index=1\n}\n");
    const char *in[] = {"s32[2] {1, 0}", "s32[2] {0, 1}", "s32[2] {1, 1}"};
    run_out r = run_texts(m, 3, 1, in);
    CHECK_RUN_OK(r);
    /* (2, 2) -> (6, 6) -> (18, 18) */
    for (int64_t d = 0; d < 3 && !r.status; d++)
        expect_lit(r.results[d], "s32[2] {18, 18}", "loop");
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* ---- partitions ------------------------------------------------------------------- */

static void test_partitions(void) {
    /* 2 replicas x 2 partitions: device d = 2 replica + partition holds {10 d + 1}. */
    cxla_module *m = load(
        "HloModule m, replica_count=2, num_partitions=2\n" ADD_S32
        "ENTRY main {\n  p = s32[1] parameter(0)\n"
        "  r = u32[] replica-id()\n  q = u32[] partition-id()\n"
        "  cr = s32[1] all-reduce(p), replica_groups={}, to_apply=add\n"
        "  crp = s32[1] all-reduce(p), channel_id=1, replica_groups={}, to_apply=add\n"
        "  fl = s32[1] all-reduce(p), channel_id=2, replica_groups={{0,3},{1,2}}, "
        "use_global_device_ids=true, to_apply=add\n"
        "  ag = s32[4] all-gather(p), channel_id=3, replica_groups={{0,1}}, dimensions={0}\n"
        "  p2 = s32[2] concatenate(p, p), dimensions={0}\n"
        "  a2a = s32[2] all-to-all(p2), channel_id=4, replica_groups={}, dimensions={0}\n"
        "  cp = s32[1] collective-permute(p), channel_id=5, source_target_pairs={{0,1},{1,0}}\n"
        "  cpr = s32[1] collective-permute(p), source_target_pairs={{0,1}}\n"
        "  ROOT t = (u32[], u32[], s32[1], s32[1], s32[1], s32[4], s32[2], s32[1], s32[1]) "
        "tuple(r, q, cr, crp, fl, ag, a2a, cp, cpr)\n}\n");
    if (!m) return;
    cxla_literal *args[4];
    for (int d = 0; d < 4; d++) {
        char s[32];
        snprintf(s, sizeof(s), "s32[1] {%d}", 10 * d + 1);
        args[d] = lit(s);
    }
    run_out r = run_lits(m, 2, 0, 1, args);
    CHECK_RUN_OK(r);
    CHECK_EQ_I64(r.n, 4);
    for (int d = 0; d < 4 && !r.status; d++) {
        int rep = d / 2, part = d % 2, x = 10 * d + 1;
        int cr = 1 + 10 * part + 1 + 10 * (2 + part);   /* same partition, both replicas */
        int crp = 1 + 11 + 21 + 31;                     /* everyone */
        int fl = (d == 0 || d == 3) ? 1 + 31 : 11 + 21; /* flattened ids */
        int other = 10 * (2 * rep + (1 - part)) + 1;    /* the other partition */
        int cpr = rep == 1 ? 10 * part + 1 : 0;         /* replica 0 -> 1, per partition */
        char want[512];
        snprintf(want, sizeof(want),
                 "(u32[], u32[], s32[1], s32[1], s32[1], s32[4], s32[2], s32[1], s32[1]) "
                 "(%d, %d, {%d}, {%d}, {%d}, {1, 11, 21, 31}, {%d, %d}, {%d}, {%d})",
                 rep, part, cr, crp, fl, part == 0 ? x : other, part == 0 ? other : x, other, cpr);
        char where[64];
        snprintf(where, sizeof(where), "partitions, device %d", d);
        expect_lit(r.results[d], want, where);
    }
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* ---- failures ---------------------------------------------------------------------- */

/* Replica 2 fails (its branch holds an operation the interpreter refuses); the others,
 * waiting in the all-reduce, fail at once naming it. */
static void test_one_replica_fails(void) {
    cxla_module *m = load(
        "HloModule m\n" ADD_S32 "ok {\n  a = s32[2] parameter(0)\n  ROOT c = s32[2] copy(a)\n}\n"
        "bad {\n  a = s32[2] parameter(0)\n"
        "  ROOT c = s32[2] custom-call(a), custom_call_target=\"no_such_target\"\n}\n"
        "ENTRY main {\n  p = s32[2] parameter(0)\n  r = u32[] replica-id()\n"
        "  two = u32[] constant(2)\n  is2 = pred[] compare(r, two), direction=EQ\n"
        "  c = s32[2] conditional(is2, p, p), true_computation=bad, false_computation=ok\n"
        "  ROOT ar = s32[2] all-reduce(c), replica_groups={}, to_apply=add\n}\n");
    if (!m) return;
    for (int64_t n = 3; n <= 4; n++) {
        cxla_literal **args = calloc((size_t)n, sizeof(*args));
        for (int64_t d = 0; d < n; d++) args[d] = lit("s32[2] {1, 2}");
        run_out r = run_lits(m, n, 60, 1, args);
        free(args);
        const char *msg = cxla_status_message(r.status);
        CHECK_MSG(r.status && strstr(msg, "replica 2 failed") && strstr(msg, "custom-call"),
                  "run: %s", msg);
        for (int64_t d = 0; d < n; d++) {
            const char *dm = cxla_status_message(r.statuses[d]);
            CHECK_MSG(r.statuses[d] != NULL, "device %" PRId64 " should fail", d);
            if (d == 2)
                CHECK_MSG(strstr(dm, "custom-call") && !strstr(dm, "replica 2 failed"),
                          "device 2: %s", dm);
            else /* in the all-reduce, or stopped before it by the run's cancellation */
                CHECK_MSG((strstr(dm, "ar (all-reduce") || strstr(dm, "the run was cancelled")) &&
                              strstr(dm, "replica 2 failed"),
                          "device %" PRId64 ": %s", d, dm);
            CHECK(r.results[d] == NULL);
        }
        run_out_free(&r);
    }
    cxla_module_destroy(m);
}

/* A while loop whose trip count depends on the replica: replica 1 reaches an execution of
 * the all-reduce that replica 0, already finished, never will. */
static void test_replicas_disagree(void) {
    cxla_module *m = load(
        "HloModule m\n" ADD_S32
        "cond {\n  s = (u32[], s32[1]) parameter(0)\n  i = u32[] get-tuple-element(s), index=0\n"
        "  r = u32[] replica-id()\n  one = u32[] constant(1)\n  n = u32[] add(r, one)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
        "body {\n  s = (u32[], s32[1]) parameter(0)\n  i = u32[] get-tuple-element(s), index=0\n"
        "  v = s32[1] get-tuple-element(s), index=1\n"
        "  ar = s32[1] all-reduce(v), replica_groups={}, to_apply=add\n"
        "  one = u32[] constant(1)\n  j = u32[] add(i, one)\n"
        "  ROOT t = (u32[], s32[1]) tuple(j, ar)\n}\n"
        "ENTRY main {\n  p = s32[1] parameter(0)\n  z = u32[] constant(0)\n"
        "  t = (u32[], s32[1]) tuple(z, p)\n"
        "  w = (u32[], s32[1]) while(t), condition=cond, body=body\n"
        "  ROOT v = s32[1] get-tuple-element(w), index=1\n}\n");
    const char *in[] = {"s32[1] {1}", "s32[1] {2}"};
    run_out r = run_texts(m, 2, 1, in);
    const char *msg = cxla_status_message(r.status);
    CHECK_MSG(r.status && strstr(msg, "replica 1 failed") &&
                  strstr(msg, "replica 0 ended its program without taking part in execution 2"),
              "run: %s", msg);
    CHECK(r.statuses[0] == NULL); /* replica 0 completed its program */
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* Replicas 0 and 1 wait in one all-reduce while replica 2 waits in another: a deadlock
 * that the time limit ends, naming who arrived. */
static void test_timeout(void) {
    cxla_module *m =
        load("HloModule m\n" ADD_S32 "first {\n  a = s32[1] parameter(0)\n"
             "  ROOT ar_first = s32[1] all-reduce(a), replica_groups={}, to_apply=add\n}\n"
             "second {\n  a = s32[1] parameter(0)\n"
             "  ROOT ar_second = s32[1] all-reduce(a), replica_groups={}, to_apply=add\n}\n"
             "ENTRY main {\n  p = s32[1] parameter(0)\n  r = u32[] replica-id()\n"
             "  two = u32[] constant(2)\n  is2 = pred[] compare(r, two), direction=EQ\n"
             "  ROOT c = s32[1] conditional(is2, p, p), true_computation=second, "
             "false_computation=first\n}\n");
    cxla_literal *args[3] = {lit("s32[1] {1}"), lit("s32[1] {2}"), lit("s32[1] {3}")};
    run_out r = run_lits(m, 3, 0.2, 1, args);
    /* Replicas 0 and 1 see replica 2 missing; replica 2 sees both missing; whichever
     * times out first names the failure, and the others fail naming it. */
    static const char *const seen[3] = {
        "arrived: replica 0, replica 1; missing: replica 2",
        "arrived: replica 0, replica 1; missing: replica 2",
        "arrived: replica 2; missing: replica 0, replica 1",
    };
    const char *msg = cxla_status_message(r.status);
    CHECK_EQ_I64(cxla_status_code_of(r.status), CXLA_STATUS_DEADLINE_EXCEEDED);
    CHECK_MSG(strstr(msg, "timed out after 0.2 s") &&
                  (strstr(msg, seen[0]) || strstr(msg, seen[2])),
              "run: %s", msg);
    for (int d = 0; d < 3; d++) {
        const char *dm = cxla_status_message(r.statuses[d]);
        CHECK_MSG(strstr(dm, d == 2 ? "ar_second (all-reduce" : "ar_first (all-reduce"),
                  "replica %d: %s", d, dm);
        CHECK_MSG(strstr(dm, seen[d]) || strstr(dm, "failed: "), "replica %d: %s", d, dm);
    }
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* The threads communicator on its own, deterministically: replica 1 has sent, replica 2
 * has not, and replica 0 gives up after its time limit listing both. */
static void test_comm_timeout_lists(void) {
    cxla_comm_threads *c = NULL;
    CHECK_OK(cxla_comm_threads_create(3, 1, 0.05, NULL, &c));
    if (!c) return;
    cxla_literal *v = lit("s32[1] {7}");
    const cxla_literal *sends[1] = {v};
    int64_t to0 = 0;
    exec_exchange x1 = {
        .op_id = 9, .sequence = 0, .parts = 1, .send_count = 1, .to = &to0, .sends = sends};
    exec_comm *e1 = cxla_comm_threads_endpoint(c, 1);
    CHECK_OK(e1->exchange(e1, &x1));
    int64_t from[2] = {2, 1};
    cxla_literal *recvs[2] = {NULL, NULL};
    exec_exchange x0 = {
        .op_id = 9, .sequence = 0, .parts = 1, .recv_count = 2, .from = from, .recvs = recvs};
    exec_comm *e0 = cxla_comm_threads_endpoint(c, 0);
    cxla_status s = e0->exchange(e0, &x0);
    const char *msg = cxla_status_message(s);
    CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_DEADLINE_EXCEEDED);
    CHECK_MSG(strstr(msg, "timed out after 0.05 s waiting for the other devices of execution 1") &&
                  strstr(msg, "arrived: replica 0, replica 1; missing: replica 2"),
              "%s", msg);
    CHECK(recvs[0] == NULL && recvs[1] == NULL);
    cxla_status_free(s);
    /* A message of another instance (sequence 1) is not this one's; once replica 2 has
     * ended, waiting for it fails at once. */
    cxla_comm_threads_finish(c, 2, NULL);
    s = e0->exchange(e0, &x0);
    CHECK_MSG(strstr(cxla_status_message(s), "replica 2 ended its program"), "%s",
              cxla_status_message(s));
    cxla_status_free(s);
    /* With the message there and one from replica 2 only, the receive completes. */
    int64_t from1 = 1;
    exec_exchange x0b = {
        .op_id = 9, .sequence = 0, .parts = 1, .recv_count = 1, .from = &from1, .recvs = recvs};
    CHECK_OK(e0->exchange(e0, &x0b));
    CHECK(recvs[0] && cxla_literal_equal(recvs[0], v));
    cxla_literal_free(recvs[0]);
    /* A failure of its own poisons the communicator for everyone. */
    cxla_status boom = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "boom");
    cxla_comm_threads_finish(c, 1, boom);
    cxla_status_free(boom);
    s = e0->exchange(e0, &x0b);
    CHECK_MSG(strstr(cxla_status_message(s), "replica 1 failed: boom"), "%s",
              cxla_status_message(s));
    cxla_status_free(s);
    cxla_status first = NULL;
    CHECK_EQ_I64(cxla_comm_threads_first_failure(c, &first), 1);
    CHECK_EQ_STR(cxla_status_message(first), "boom");
    cxla_status_free(first);
    cxla_literal_free(v);
    cxla_comm_threads_destroy(c);
}

static void test_bad_runs(void) {
    cxla_module *m =
        load("HloModule m, replica_count=4\nENTRY main {\n  p = s32[1] parameter(0)\n"
             "  ROOT cp = s32[1] collective-permute(p), source_target_pairs={{0,1}}\n}\n");
    cxla_literal *args[2] = {lit("s32[1] {1}"), lit("s32[1] {2}")};
    run_out r = run_lits(m, 2, 0, 1, args);
    CHECK_MSG(r.status && strstr(cxla_status_message(r.status), "written for 4 replicas"), "%s",
              cxla_status_message(r.status));
    run_out_free(&r);
    cxla_module_destroy(m);

    m = load("HloModule m\nENTRY main {\n  p = s32[1] parameter(0)\n"
             "  ROOT cp = s32[1] collective-permute(p), source_target_pairs={{0,5}}\n}\n");
    cxla_literal *args2[2] = {lit("s32[1] {1}"), lit("s32[1] {2}")};
    r = run_lits(m, 2, 0, 1, args2);
    CHECK_MSG(r.status && strstr(cxla_status_message(r.status),
                                 "source_target_pairs name replica 5 but the run has 2 replicas"),
              "%s", cxla_status_message(r.status));
    run_out_free(&r);

    cxla_replicas_options o = {.replica_count = 0};
    cxla_literal *res[1] = {NULL};
    CHECK_ERROR_HAS(cxla_run_replicated(m, &o, NULL, 0, res, NULL), "at least 1");
    cxla_module_destroy(m);

    /* An all-gather whose declared result does not fit the group. */
    m = load("HloModule m\nENTRY main {\n  p = s32[1] parameter(0)\n"
             "  ROOT ag = s32[2] all-gather(p), dimensions={0}\n}\n");
    cxla_literal *args3[3] = {lit("s32[1] {1}"), lit("s32[1] {2}"), lit("s32[1] {3}")};
    r = run_lits(m, 3, 0, 1, args3);
    CHECK_MSG(r.status && strstr(cxla_status_message(r.status), "the declared result s32[2]"), "%s",
              cxla_status_message(r.status));
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* ---- a data-parallel training step ------------------------------------------------ */

/* Linear regression, loss = mean((x w + b - y)^2) over a batch of 8, trained for 3 steps
 * of gradient descent. Each replica computes the gradient sums on its shard of the batch,
 * an all-reduce adds them, and every replica applies the same update. */
static void training_module(text *t, int64_t shard) {
    tx(t,
       "HloModule train\n" ADD_F32 "cond {\n  s = (s32[], f32[4], f32[], f32[%" PRId64
       ",4], f32[%" PRId64 "]) parameter(0)\n"
       "  i = s32[] get-tuple-element(s), index=0\n  n = s32[] constant(3)\n"
       "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n",
       shard, shard);
    tx(t,
       "body {\n  s = (s32[], f32[4], f32[], f32[%" PRId64 ",4], f32[%" PRId64 "]) parameter(0)\n"
       "  i = s32[] get-tuple-element(s), index=0\n"
       "  w = f32[4] get-tuple-element(s), index=1\n"
       "  b = f32[] get-tuple-element(s), index=2\n"
       "  x = f32[%" PRId64 ",4] get-tuple-element(s), index=3\n"
       "  y = f32[%" PRId64 "] get-tuple-element(s), index=4\n",
       shard, shard, shard, shard);
    tx(t,
       "  xw = f32[%" PRId64 "] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
       "  bb = f32[%" PRId64 "] broadcast(b), dimensions={}\n"
       "  pr = f32[%" PRId64 "] add(xw, bb)\n"
       "  err = f32[%" PRId64 "] subtract(pr, y)\n"
       "  gw = f32[4] dot(err, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
       "  zero = f32[] constant(0)\n"
       "  gb = f32[] reduce(err, zero), dimensions={0}, to_apply=add\n"
       "  g = (f32[4], f32[]) all-reduce(gw, gb), replica_groups={}, to_apply=add\n"
       "  gwa = f32[4] get-tuple-element(g), index=0\n"
       "  gba = f32[] get-tuple-element(g), index=1\n"
       "  k = f32[] constant(0.025)\n" /* learning rate 0.1 x 2 / batch 8 */
       "  kw = f32[4] broadcast(k), dimensions={}\n"
       "  dw = f32[4] multiply(kw, gwa)\n  nw = f32[4] subtract(w, dw)\n"
       "  db = f32[] multiply(k, gba)\n  nb = f32[] subtract(b, db)\n"
       "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
       "  ROOT t = (s32[], f32[4], f32[], f32[%" PRId64 ",4], f32[%" PRId64 "]) "
       "tuple(j, nw, nb, x, y)\n}\n",
       shard, shard, shard, shard, shard, shard);
    tx(t,
       "ENTRY main {\n  w = f32[4] parameter(0)\n  b = f32[] parameter(1)\n"
       "  x = f32[%" PRId64 ",4] parameter(2)\n  y = f32[%" PRId64 "] parameter(3)\n"
       "  z = s32[] constant(0)\n"
       "  s = (s32[], f32[4], f32[], f32[%" PRId64 ",4], f32[%" PRId64 "]) tuple(z, w, b, x, y)\n"
       "  l = (s32[], f32[4], f32[], f32[%" PRId64 ",4], f32[%" PRId64 "]) while(s), "
       "condition=cond, body=body\n"
       "  nw = f32[4] get-tuple-element(l), index=1\n  nb = f32[] get-tuple-element(l), index=2\n"
       "  ROOT r = (f32[4], f32[]) tuple(nw, nb)\n}\n",
       shard, shard, shard, shard, shard, shard);
}

static void test_data_parallel_training(void) {
    enum { BATCH = 8 };
    float xs[BATCH][4], ys[BATCH];
    uint32_t seed = 12345;
    for (int i = 0; i < BATCH; i++) {
        for (int j = 0; j < 4; j++) {
            seed = seed * 1664525u + 1013904223u;
            xs[i][j] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
        }
        ys[i] = 0.5f * xs[i][0] - 1.25f * xs[i][1] + 2.0f * xs[i][2] + 0.75f * xs[i][3] + 0.3f;
    }
    cxla_literal *single = NULL;
    for (int64_t n = 1; n <= 4; n *= 2) {
        int64_t shard = BATCH / n;
        text mt = {0};
        training_module(&mt, shard);
        cxla_module *m = load(mt.data);
        if (!m) return;
        cxla_literal **args = calloc((size_t)(4 * n), sizeof(*args));
        for (int64_t d = 0; d < n; d++) {
            args[4 * d] = lit("f32[4] {0.1, -0.2, 0.3, 0}");
            args[4 * d + 1] = lit("f32[] 0.05");
            text xt = {0}, yt = {0};
            tx(&xt, "f32[%" PRId64 ",4] {", shard);
            tx(&yt, "f32[%" PRId64 "] {", shard);
            for (int64_t i = 0; i < shard; i++) {
                const float *row = xs[d * shard + i];
                tx(&xt, "%s{%.9g, %.9g, %.9g, %.9g}", i ? ", " : "", (double)row[0], (double)row[1],
                   (double)row[2], (double)row[3]);
                tx(&yt, "%s%.9g", i ? ", " : "", (double)ys[d * shard + i]);
            }
            tx(&xt, "}");
            tx(&yt, "}");
            args[4 * d + 2] = lit(xt.data);
            args[4 * d + 3] = lit(yt.data);
        }
        run_out r = run_lits(m, n, 0, 4, args);
        free(args);
        CHECK_RUN_OK(r);
        for (int64_t d = 0; d < n && !r.status; d++) {
            /* The same parameters on every replica, to the bit. */
            CHECK_MSG(cxla_literal_equal(r.results[d], r.results[0]),
                      "replica %" PRId64 " of %" PRId64 " differs from replica 0", d, n);
            /* The same as one replica on the whole batch, up to the order of the sums. */
            if (single) {
                cxla_tolerance tol = {.atol = 1e-6, .rtol = 1e-5};
                cxla_status s = cxla_literal_compare(r.results[d], single, &tol);
                CHECK_MSG(!s, "%" PRId64 " replicas vs one: %s", n, cxla_status_message(s));
                cxla_status_free(s);
            }
        }
        if (n == 1 && !r.status) {
            single = r.results[0];
            r.results[0] = NULL;
            /* The step did train: the parameters moved. */
            cxla_literal *w0 = lit("(f32[4], f32[]) ({0.1, -0.2, 0.3, 0}, 0.05)");
            CHECK(!cxla_literal_equal(single, w0));
            cxla_literal_free(w0);
        }
        run_out_free(&r);
        cxla_module_destroy(m);
    }
    cxla_literal_free(single);
}

/* ---- ragged-all-to-all and collective-reduce ---------------------------------------- */

#define RAGGED_2x3                                                                                 \
    "HloModule ragged\nENTRY main {\n  x = s32[3] parameter(0)\n  o = s32[4] parameter(1)\n"       \
    "  io = s32[2] parameter(2)\n  ss = s32[2] parameter(3)\n  oo = s32[2] parameter(4)\n"         \
    "  rs = s32[2] parameter(5)\n"

/* JAX's ragged_all_to_all examples (tests/ragged_collective_test.py): the values it
 * states for 2 replicas, 2 groups of 2, and groups of one. */
static void test_ragged_all_to_all_examples(void) {
    cxla_module *m = load(RAGGED_2x3 "  ROOT r = s32[4] ragged-all-to-all(x, o, io, ss, oo, rs), "
                                     "replica_groups={{0,1}}\n}\n");
    const char *in[] = {"s32[3] {1, 2, 2}", "s32[4] {0, 0, 0, 0}", "s32[2] {0, 1}",
                        "s32[2] {1, 2}",    "s32[2] {0, 0}",       "s32[2] {1, 1}",
                        "s32[3] {3, 4, 0}", "s32[4] {0, 0, 0, 0}", "s32[2] {0, 1}",
                        "s32[2] {1, 1}",    "s32[2] {1, 2}",       "s32[2] {2, 1}"};
    run_out r = run_texts(m, 2, 6, in);
    CHECK_RUN_OK(r);
    if (!r.status) {
        expect_lit(r.results[0], "s32[4] {1, 3, 0, 0}", "ragged-all-to-all replica 0");
        expect_lit(r.results[1], "s32[4] {2, 2, 4, 0}", "ragged-all-to-all replica 1");
    }
    run_out_free(&r);
    cxla_module_destroy(m);

    m = load(RAGGED_2x3 "  ROOT r = s32[4] ragged-all-to-all(x, o, io, ss, oo, rs), "
                        "replica_groups={{0,1},{2,3}}\n}\n");
    const char *in4[] = {
        "s32[3] {1, 2, 2}",    "s32[4] {0, 0, 0, 0}", "s32[2] {0, 1}",      "s32[2] {1, 2}",
        "s32[2] {0, 0}",       "s32[2] {1, 1}",       "s32[3] {3, 4, 0}",   "s32[4] {0, 0, 0, 0}",
        "s32[2] {0, 1}",       "s32[2] {1, 1}",       "s32[2] {1, 2}",      "s32[2] {2, 1}",
        "s32[3] {10, 20, 20}", "s32[4] {0, 0, 0, 0}", "s32[2] {0, 1}",      "s32[2] {1, 2}",
        "s32[2] {0, 0}",       "s32[2] {1, 1}",       "s32[3] {30, 40, 0}", "s32[4] {0, 0, 0, 0}",
        "s32[2] {0, 1}",       "s32[2] {1, 1}",       "s32[2] {1, 2}",      "s32[2] {2, 1}"};
    r = run_texts(m, 4, 6, in4);
    CHECK_RUN_OK(r);
    const char *want4[] = {"s32[4] {1, 3, 0, 0}", "s32[4] {2, 2, 4, 0}", "s32[4] {10, 30, 0, 0}",
                           "s32[4] {20, 20, 40, 0}"};
    for (int64_t d = 0; d < 4 && !r.status; d++)
        expect_lit(r.results[d], want4[d], "ragged-all-to-all in groups");
    run_out_free(&r);
    cxla_module_destroy(m);

    m = load("HloModule ragged\nENTRY main {\n  x = s32[4] parameter(0)\n"
             "  o = s32[4] parameter(1)\n  io = s32[1] parameter(2)\n  ss = s32[1] parameter(3)\n"
             "  oo = s32[1] parameter(4)\n  rs = s32[1] parameter(5)\n"
             "  ROOT r = s32[4] ragged-all-to-all(x, o, io, ss, oo, rs), "
             "replica_groups={{0},{1}}\n}\n");
    const char *in1[] = {"s32[4] {1, 0, 0, 0}", "s32[4] {0, 0, 0, 0}", "s32[1] {0}",
                         "s32[1] {1}",          "s32[1] {2}",          "s32[1] {1}",
                         "s32[4] {2, 3, 4, 0}", "s32[4] {0, 0, 0, 0}", "s32[1] {0}",
                         "s32[1] {3}",          "s32[1] {1}",          "s32[1] {3}"};
    r = run_texts(m, 2, 6, in1);
    CHECK_RUN_OK(r);
    if (!r.status) {
        expect_lit(r.results[0], "s32[4] {0, 0, 1, 0}", "ragged-all-to-all alone, replica 0");
        expect_lit(r.results[1], "s32[4] {0, 2, 3, 4}", "ragged-all-to-all alone, replica 1");
    }
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* Rows of a rank-2 array, two updates per peer (metadata index peer * 2 + update), rows
 * that nobody writes keeping the output's values; then the errors. */
static void test_ragged_all_to_all_updates(void) {
    const char *mod = "HloModule ragged\nENTRY main {\n  x = s32[4,2] parameter(0)\n"
                      "  o = s32[5,2] parameter(1)\n  io = s32[4] parameter(2)\n"
                      "  ss = s32[4] parameter(3)\n  oo = s32[4] parameter(4)\n"
                      "  rs = s32[4] parameter(5)\n"
                      "  ROOT r = s32[5,2] ragged-all-to-all(x, o, io, ss, oo, rs), "
                      "replica_groups={}\n}\n";
    cxla_module *m = load(mod);
    const char *fill = "s32[5,2] {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}}";
    const char *in[] = {"s32[4,2] {{0, 1}, {2, 3}, {4, 5}, {6, 7}}",
                        fill,
                        "s32[4] {0, 1, 2, 3}",
                        "s32[4] {1, 1, 1, 1}",
                        "s32[4] {0, 1, 0, 1}",
                        "s32[4] {1, 1, 2, 1}",
                        "s32[4,2] {{10, 11}, {12, 13}, {14, 15}, {16, 17}}",
                        fill,
                        "s32[4] {0, 3, 1, 2}",
                        "s32[4] {2, 1, 1, 1}",
                        "s32[4] {2, 4, 2, 3}",
                        "s32[4] {1, 1, 1, 1}"};
    run_out r = run_texts(m, 2, 6, in);
    CHECK_RUN_OK(r);
    if (!r.status) {
        expect_lit(r.results[0], "s32[5,2] {{0, 1}, {2, 3}, {10, 11}, {12, 13}, {16, 17}}",
                   "two updates, replica 0");
        expect_lit(r.results[1], "s32[5,2] {{4, 5}, {6, 7}, {12, 13}, {14, 15}, {-1, -1}}",
                   "two updates, replica 1");
    }
    run_out_free(&r);
    /* Replica 0 expects 3 rows from replica 1 where it sends 2. */
    const char *bad[12];
    memcpy(bad, in, sizeof(bad));
    bad[5] = "s32[4] {1, 1, 3, 1}";
    r = run_texts(m, 2, 6, bad);
    CHECK_MSG(r.status && strstr(cxla_status_message(r.status), "recv_sizes"),
              "mismatched sizes: %s", r.status ? cxla_status_message(r.status) : "success");
    run_out_free(&r);
    /* An update past the end of the receiver's output. */
    memcpy(bad, in, sizeof(bad));
    bad[10] = "s32[4] {2, 4, 2, 5}";
    r = run_texts(m, 2, 6, bad);
    CHECK_MSG(r.status && strstr(cxla_status_message(r.status), "out of range"), "out of range: %s",
              r.status ? cxla_status_message(r.status) : "success");
    run_out_free(&r);
    cxla_module_destroy(m);
}

/* collective-reduce: the group's first member gets the reduction in group order; the
 * others keep their operands. */
static void test_collective_reduce(void) {
    cxla_module *m =
        load("HloModule m\n" ADD_F32 "ENTRY main {\n  p = f32[2] parameter(0)\n"
             "  q = f32[] parameter(1)\n"
             "  ROOT r = (f32[2], f32[]) collective-reduce(p, q), replica_groups={{2,0},{1}}, "
             "to_apply=add\n}\n");
    const char *in[] = {"f32[2] {1, 2}", "f32[] 0.5",         "f32[2] {10, 20}",
                        "f32[] 7",       "f32[2] {100, 200}", "f32[] 0.25"};
    run_out r = run_texts(m, 3, 2, in);
    CHECK_RUN_OK(r);
    if (!r.status) {
        expect_lit(r.results[2], "(f32[2], f32[]) ({101, 202}, 0.75)", "collective-reduce root");
        expect_lit(r.results[0], "(f32[2], f32[]) ({1, 2}, 0.5)", "collective-reduce member");
        expect_lit(r.results[1], "(f32[2], f32[]) ({10, 20}, 7)", "collective-reduce alone");
    }
    run_out_free(&r);
    cxla_module_destroy(m);
    /* On 1..4 replicas, all in one group: replica 0 gets the sum. */
    for (int64_t n = 1; n <= 4; n++) {
        run_out o = run_sweep("HloModule m\n" ADD_S32 "ENTRY main {\n  p = s32[3] parameter(0)\n"
                              "  ROOT r = s32[3] collective-reduce(p), replica_groups={}, "
                              "to_apply=add\n}\n",
                              n, 3);
        CHECK_RUN_OK(o);
        for (int64_t d = 0; d < n && !o.status; d++) {
            int64_t v[3];
            for (int64_t i = 0; i < 3; i++) {
                v[i] = 0;
                if (d == 0)
                    for (int64_t k = 0; k < n; k++) v[i] += xv(k, i);
                else
                    v[i] = xv(d, i);
            }
            expect_s32(&o, d, v, 3, "collective-reduce sweep");
        }
        run_out_free(&o);
    }
}

TEST_MAIN(TEST(test_seed_all_reduce), TEST(test_seed_cross_replica_sum), TEST(test_seed_all_gather),
          TEST(test_seed_reduce_scatter), TEST(test_seed_all_to_all), TEST(test_seed_replica_id),
          TEST(test_all_reduce_sizes), TEST(test_all_gather_sizes), TEST(test_reduce_scatter_sizes),
          TEST(test_all_to_all_sizes), TEST(test_collective_permute_sizes),
          TEST(test_collective_broadcast_sizes), TEST(test_groups_all_reduce),
          TEST(test_groups_order), TEST(test_groups_empty), TEST(test_tuple_operands),
          TEST(test_edge_shapes), TEST(test_every_type), TEST(test_reductions),
          TEST(test_reducer_in_other_precision), TEST(test_user_reduction_order),
          TEST(test_reproducible_order), TEST(test_start_done), TEST(test_collective_in_loop),
          TEST(test_partitions), TEST(test_one_replica_fails), TEST(test_replicas_disagree),
          TEST(test_timeout), TEST(test_comm_timeout_lists), TEST(test_bad_runs),
          TEST(test_data_parallel_training), TEST(test_ragged_all_to_all_examples),
          TEST(test_ragged_all_to_all_updates), TEST(test_collective_reduce),
          TEST(test_unbounded_sizes))
