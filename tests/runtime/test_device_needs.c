/* Runs check, before they start, that they have every device the module's collectives
 * and shardings name (src/exec/devices.c, called by src/runtime/executable.c and
 * execute.c): cxla_executable_run (one device: the module's own counts),
 * cxla_executable_run_buffers, cxla_executable_device_count and cxla_executable_execute
 * fail with INVALID_ARGUMENT naming the instruction, the id and the count needed, on both
 * backends; a run with enough devices goes on and computes. */
#include <inttypes.h>
#include <stdlib.h>

#include "cxla/cxla.h"
#include "exec/devices.h"
#include "harness.h"

#define ADD_S32                                                                                    \
    "add {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT s = s32[] add(x, y)\n}\n"

/* Ids 0..3 as flattened device ids (channel_id, use_global_device_ids), in a called
 * computation: 4 devices, however they are split into replicas and partitions. */
static const char *const flattened =
    "HloModule m\n" ADD_S32 "callee {\n  q = s32[2] parameter(0)\n"
    "  ROOT ar = s32[2] all-reduce(q), channel_id=1, replica_groups=[1,4]<=[4], "
    "use_global_device_ids=true, to_apply=add\n}\n"
    "ENTRY main {\n  p = s32[2] parameter(0)\n  ROOT c = s32[2] call(p), to_apply=callee\n}\n";

static cxla_literal *s32_pair(int32_t a, int32_t b) {
    cxla_literal *l = NULL;
    int64_t dims[1] = {2};
    cxla_shape shape = {.type = CXLA_S32, .rank = 1, .dims = dims};
    CHECK_OK(cxla_literal_create(&shape, &l));
    if (l) {
        int32_t *d = cxla_literal_data(l);
        d[0] = a;
        d[1] = b;
    }
    return l;
}

static void check_message(cxla_status s, const char *want) {
    CHECK(s != NULL);
    if (!s) return;
    CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_INVALID_ARGUMENT);
    CHECK_MSG(strstr(cxla_status_message(s), want), "message lacks '%s': %s", want,
              cxla_status_message(s));
    cxla_status_free(s);
}

static void on_backend(const char *backend) {
    cxla_client_options o;
    cxla_client_options_init(&o);
    o.backend = backend;
    o.quiet_fallback = true;
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(&o, &c));
    cxla_executable *e = NULL;
    CHECK_OK(cxla_client_compile_hlo_text(c, flattened, (size_t)-1, "test", &e));
    if (!e) {
        cxla_client_destroy(c);
        return;
    }
    /* One device: fails before the run, naming the all-reduce in the callee. */
    cxla_literal *x = s32_pair(1, 2), *result = NULL;
    const cxla_literal *args[1] = {x};
    check_message(cxla_executable_run(e, args, 1, &result),
                  "ar (all-reduce, computation callee, line 9): replica_groups name device 3 but "
                  "the run has 1 device");
    CHECK(result == NULL);
    cxla_buffer in = {NULL, cxla_literal_data(x), 8}, out_buf;
    int32_t out[2] = {0, 0};
    out_buf = (cxla_buffer){NULL, out, sizeof(out)};
    check_message(cxla_executable_run_buffers(e, NULL, &in, 1, &out_buf, 1),
                  "the module needs at least 4 devices");
    /* Two replicas: device_count and execute fail alike, before any device runs. */
    cxla_run_options ro;
    cxla_run_options_init(&ro);
    ro.replica_count = 2;
    int64_t n = 0;
    check_message(cxla_executable_device_count(e, &ro, &n), "the run has 2 devices");
    const cxla_literal *const rows[2][1] = {{x}, {x}};
    const cxla_literal *const *per_device[2] = {rows[0], rows[1]};
    cxla_literal *results[4] = {NULL, NULL, NULL, NULL};
    check_message(cxla_executable_execute(e, &ro, per_device, 1, results),
                  "the module needs at least 4 devices");
    CHECK(results[0] == NULL && results[1] == NULL);
    /* 2 replicas x 2 partitions: 4 devices, the sum of everyone's. */
    ro.partition_count = 2;
    CHECK_OK(cxla_executable_device_count(e, &ro, &n));
    CHECK_EQ_I64(n, 4);
    cxla_literal *y[4];
    const cxla_literal *const *four[4];
    const cxla_literal *yrows[4][1];
    for (int i = 0; i < 4; i++) {
        y[i] = s32_pair(i, 10 * i);
        yrows[i][0] = y[i];
        four[i] = yrows[i];
    }
    CHECK_OK(cxla_executable_execute(e, &ro, four, 1, results));
    for (int d = 0; d < 4; d++) {
        const int32_t *v = results[d] ? cxla_literal_data_const(results[d]) : NULL;
        CHECK(v && v[0] == 6 && v[1] == 60);
        cxla_literal_free(results[d]);
        cxla_literal_free(y[d]);
    }
    cxla_literal_free(x);
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

static void test_interpreter(void) {
    on_backend("interpreter");
}

static void test_cpu(void) {
    cxla_client *c = NULL;
    cxla_client_options o;
    cxla_client_options_init(&o);
    o.quiet_fallback = true;
    CHECK_OK(cxla_client_create(&o, &c));
    bool have_cpu = c && strcmp(cxla_client_backend(c), "cpu") == 0;
    cxla_client_destroy(c);
    if (have_cpu) on_backend("cpu");
}

/* What a module names, kind by kind (exec_device_needs_of). */
static void test_needs_of(void) {
    static const struct {
        const char *body;  /* the entry's root, over p = s32[4] parameter(0) */
        int64_t r, p, d;   /* replicas, partitions, devices needed */
        const char *where; /* the need's attribute */
    } cases[] = {
        {"ROOT n = s32[4] negate(p)", 1, 1, 1, NULL},
        {"ROOT ar = s32[4] all-reduce(p), replica_groups={{0,2},{1,3}}, to_apply=add", 4, 1, 1,
         "replica_groups"},
        {"ROOT ar = s32[4] all-reduce(p), channel_id=1, replica_groups={{0,1,2}}, to_apply=add", 3,
         1, 1, "replica_groups"},
        {"ROOT ar = s32[4] all-reduce(p), channel_id=1, replica_groups={{0,5},{1,2},{3,4}}, "
         "use_global_device_ids=true, to_apply=add",
         1, 1, 6, "replica_groups"},
        {"ROOT a = s32[4] all-to-all(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}", 1,
         2, 1, "replica_groups"},
        {"ROOT a = s32[4] all-to-all(p), replica_groups={{0,1,2}}, dimensions={0}", 3, 1, 1,
         "replica_groups"},
        {"ROOT c = s32[4] collective-permute(p), source_target_pairs={{0,6}}", 7, 1, 1,
         "source_target_pairs"},
        {"ROOT c = s32[4] collective-permute(p), channel_id=2, source_target_pairs={{4,0}}", 1, 5,
         1, "source_target_pairs"},
        {"ROOT n = s32[4] negate(p), sharding={devices=[2,2]0,3,1,2}", 1, 4, 1, "sharding"},
        {"ROOT n = s32[4] negate(p), sharding={devices=[2,1,3]<=[6] last_tile_dim_replicate}", 1, 6,
         1, "sharding"},
        {"ROOT n = s32[4] negate(p), sharding={maximal device=9}", 1, 10, 1, "sharding"},
        {"ROOT n = s32[4] negate(p), sharding={replicated}", 1, 1, 1, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[1024];
        snprintf(text, sizeof(text),
                 "HloModule m\n" ADD_S32 "ENTRY main {\n  p = s32[4] parameter(0)\n  %s\n}\n",
                 cases[i].body);
        cxla_module *m = NULL;
        cxla_status s = cxla_hlo_parse(text, strlen(text), "test", &m);
        CHECK_MSG(!s, "case %zu: %s", i, cxla_status_message(s));
        cxla_status_free(s);
        if (!m) continue;
        exec_device_needs n;
        exec_device_needs_of(m, &n);
        CHECK_MSG(n.replicas.count == cases[i].r && n.partitions.count == cases[i].p &&
                      n.devices.count == cases[i].d,
                  "case %zu: needs %" PRId64 " replicas, %" PRId64 " partitions, %" PRId64
                  " devices",
                  i, n.replicas.count, n.partitions.count, n.devices.count);
        const exec_device_need *named = n.replicas.by     ? &n.replicas
                                        : n.partitions.by ? &n.partitions
                                        : n.devices.by    ? &n.devices
                                                          : NULL;
        CHECK_MSG((named == NULL) == (cases[i].where == NULL), "case %zu: the naming instruction",
                  i);
        if (named && cases[i].where) CHECK(strcmp(named->where, cases[i].where) == 0);
        /* Exactly enough devices pass; one fewer of the needed kind fails. */
        CHECK_OK(exec_device_needs_check(&n, cases[i].r * (cases[i].d > 1 ? cases[i].d : 1),
                                         cases[i].p));
        if (cases[i].r > 1) {
            cxla_status f = exec_device_needs_check(&n, cases[i].r - 1, cases[i].p);
            CHECK(f != NULL);
            cxla_status_free(f);
        }
        if (cases[i].p > 1) {
            cxla_status f = exec_device_needs_check(&n, 1, cases[i].p - 1);
            CHECK(f != NULL);
            cxla_status_free(f);
        }
        if (cases[i].d > 1) {
            cxla_status f = exec_device_needs_check(&n, 1, cases[i].d - 1);
            CHECK(f != NULL);
            cxla_status_free(f);
        }
        cxla_module_destroy(m);
    }
}

/* Groups bound the run from above too: a device in no group of a collective. */
static void test_at_most(void) {
    const char *text = "HloModule m\n" ADD_S32 "ENTRY main {\n  p = s32[4] parameter(0)\n"
                       "  a = s32[4] all-reduce(p), replica_groups={{0},{1}}, to_apply=add\n"
                       "  ROOT b = s32[4] all-reduce(a), channel_id=3, replica_groups={{0,2}}, "
                       "use_global_device_ids=true, to_apply=add\n}\n";
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "test", &m));
    if (!m) return;
    exec_device_needs n;
    exec_device_needs_of(m, &n);
    CHECK_EQ_I64(n.replicas.count, 2);
    CHECK_EQ_I64(n.replicas.at_most, 2);
    CHECK_EQ_I64(n.devices.count, 3);
    CHECK_EQ_I64(n.devices.at_most, 1); /* device 1 is in no group of b */
    CHECK_EQ_I64(n.partitions.at_most, INT64_MAX);
    cxla_status s = exec_device_needs_check(&n, 3, 1);
    check_message(s, "a (all-reduce, computation main, line 9): replica 2 is in none of the "
                     "replica_groups, and the run has 3 replicas");
    /* Two replicas have a and b's device 2 but put device 1 in no group of b: no run
     * suits both; the first unmet need is named. */
    check_message(exec_device_needs_check(&n, 2, 1),
                  "replica_groups name device 2 but the run has 2 devices");
    check_message(exec_device_needs_check(&n, 2, 2), "device 1 is in none of the replica_groups");
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_needs_of), TEST(test_at_most), TEST(test_interpreter), TEST(test_cpu))
