/* The runtime API (include/cxla/runtime.h): clients, compiling, running on literals and
 * on caller-owned buffers, the infeed and outfeed queues, channels between runs, and the
 * errors of each. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

#include "cxla/cxla.h"
#include "harness.h"
#include "hlo/hlo.h"

static cxla_literal *lit(const char *text) {
    cxla_literal *l = NULL;
    CHECK_OK(cxla_literal_parse(text, (size_t)-1, NULL, &l));
    return l;
}

static void check_equal(const cxla_literal *got, const char *expected) {
    cxla_literal *e = lit(expected);
    if (got && e)
        CHECK_OK(cxla_literal_compare(got, e, NULL));
    else
        CHECK(got != NULL);
    cxla_literal_free(e);
}

static cxla_client *new_client(void) {
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(NULL, &c));
    return c;
}

static cxla_executable *compile(cxla_client *c, const char *text) {
    cxla_executable *e = NULL;
    CHECK_OK(cxla_client_compile_hlo_text(c, text, (size_t)-1, "t.hlo", &e));
    return e;
}

static const char add_text[] = "HloModule add\n"
                               "ENTRY main {\n"
                               "  x = f32[3] parameter(0)\n"
                               "  y = f32[3] parameter(1)\n"
                               "  ROOT s = f32[3] add(x, y)\n"
                               "}\n";

/* ---- life cycle --------------------------------------------------------------------- */

static void test_compile_run_free(void) {
    cxla_client_options o;
    cxla_client_options_init(&o);
    o.backend = "interpreter";
    o.thread_count = 2;
    o.seed = 7;
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(&o, &c));
    if (!c) return;
    CHECK_EQ_STR(cxla_client_backend(c), "interpreter");
    cxla_executable *e = compile(c, add_text);
    if (e) {
        CHECK_EQ_I64(cxla_executable_parameter_count(e), 2);
        CHECK_EQ_I64(cxla_executable_parameter_leaf_count(e), 2);
        CHECK_EQ_I64(cxla_executable_result_leaf_count(e), 1);
        char *s = cxla_shape_to_string(cxla_executable_parameter_shape(e, 1), 0);
        CHECK_EQ_STR(s, "f32[3]{0}");
        free(s);
        CHECK(cxla_executable_parameter_shape(e, 2) == NULL);
        CHECK(cxla_executable_parameter_shape(e, -1) == NULL);
        s = cxla_shape_to_string(cxla_executable_result_shape(e), 0);
        CHECK_EQ_STR(s, "f32[3]{0}");
        free(s);
        cxla_literal *x = lit("f32[3] {1, 2, 3}"), *y = lit("f32[3] {0.5, -2, inf}"), *r = NULL;
        const cxla_literal *args[] = {x, y};
        CHECK_OK(cxla_executable_run(e, args, 2, &r));
        check_equal(r, "f32[3] {1.5, 0, inf}");
        cxla_literal_free(r);
        r = NULL;
        /* Again, with options. */
        cxla_run_options ro;
        cxla_run_options_init(&ro);
        CHECK_OK(cxla_executable_run_with_options(e, &ro, args, 2, &r));
        check_equal(r, "f32[3] {1.5, 0, inf}");
        cxla_literal_free(r);
        cxla_literal_free(x);
        cxla_literal_free(y);
    }
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
    cxla_client_destroy(NULL);
    cxla_executable_destroy(NULL);
}

static void test_compile_from_file_and_module(void) {
    char path[] = "/tmp/cxla_runtime_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    FILE *f = fdopen(fd, "w");
    fputs(add_text, f);
    fclose(f);
    cxla_client *c = new_client();
    cxla_executable *e = NULL;
    CHECK_OK(cxla_client_compile_hlo_file(c, path, &e));
    remove(path);
    cxla_literal *x = lit("f32[3] {1, 2, 3}"), *r = NULL;
    const cxla_literal *args[] = {x, x};
    if (e) CHECK_OK(cxla_executable_run(e, args, 2, &r));
    check_equal(r, "f32[3] {2, 4, 6}");
    cxla_literal_free(r);
    cxla_literal_free(x);
    cxla_executable_destroy(e);
    const char *msg = CHECK_ERROR(cxla_client_compile_hlo_file(c, "/nonexistent/m.hlo", &e));
    CHECK(strstr(msg, "/nonexistent/m.hlo") != NULL);
    /* A module built elsewhere (here: parsed) is taken by the executable. */
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(add_text, strlen(add_text), NULL, &m));
    e = NULL;
    if (m) CHECK_OK(cxla_client_compile(c, m, &e));
    x = lit("f32[3] {-1, 0, 1}");
    const cxla_literal *args2[] = {x, x};
    r = NULL;
    if (e) CHECK_OK(cxla_executable_run(e, args2, 2, &r));
    check_equal(r, "f32[3] {-2, 0, 2}");
    cxla_literal_free(r);
    cxla_literal_free(x);
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

/* StableHLO MLIR compiled directly: from text and from a file; errors name the line. */
static void test_compile_stablehlo(void) {
    static const char text[] =
        "func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {\n"
        "  %0 = stablehlo.multiply %x, %y : tensor<3xf32>\n"
        "  return %0 : tensor<3xf32>\n"
        "}\n";
    cxla_client *c = new_client();
    cxla_executable *e = NULL;
    CHECK_OK(cxla_client_compile_stablehlo_text(c, text, (size_t)-1, "m.mlir", &e));
    cxla_literal *x = lit("f32[3] {1, 2, 3}"), *r = NULL;
    const cxla_literal *args[] = {x, x};
    if (e) CHECK(cxla_executable_parameter_count(e) == 2);
    if (e) CHECK_OK(cxla_executable_run(e, args, 2, &r));
    check_equal(r, "f32[3] {1, 4, 9}");
    cxla_literal_free(r);
    r = NULL;
    cxla_executable_destroy(e);
    e = NULL;
    char path[] = "/tmp/cxla_runtime_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        FILE *f = fdopen(fd, "w");
        fputs(text, f);
        fclose(f);
        CHECK_OK(cxla_client_compile_stablehlo_file(c, path, &e));
        remove(path);
        if (e) CHECK_OK(cxla_executable_run(e, args, 2, &r));
        check_equal(r, "f32[3] {1, 4, 9}");
        cxla_literal_free(r);
        cxla_executable_destroy(e);
        e = NULL;
    }
    cxla_literal_free(x);
    const char *msg = CHECK_ERROR(cxla_client_compile_stablehlo_text(
        c, "func.func @main() -> tensor<f32> {\n  %0 = stablehlo.nope : tensor<f32>\n}\n",
        (size_t)-1, "bad.mlir", &e));
    CHECK_MSG(strstr(msg, "bad.mlir:2:") != NULL, "got: %s", msg);
    CHECK(e == NULL);
    msg = CHECK_ERROR(cxla_client_compile_stablehlo_file(c, "/nonexistent/m.mlir", &e));
    CHECK(strstr(msg, "/nonexistent/m.mlir") != NULL);
    msg = CHECK_ERROR(cxla_client_compile_stablehlo_text(c, NULL, 0, NULL, &e));
    cxla_client_destroy(c);
}

static void test_client_errors(void) {
    cxla_client_options o;
    cxla_client_options_init(&o);
    o.backend = "gpu";
    cxla_client *c = NULL;
    cxla_status s = cxla_client_create(&o, &c);
    CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_NOT_FOUND);
    const char *msg = CHECK_ERROR(s);
    CHECK(strstr(msg, "unknown backend 'gpu' (available: interpreter, cpu)") != NULL);
    o.backend = "interp"; /* the short name */
    CHECK_OK(cxla_client_create(&o, &c));
    if (c) CHECK_EQ_STR(cxla_client_backend(c), "interpreter");
    cxla_client_destroy(c);
    o.thread_count = -1;
    msg = CHECK_ERROR(cxla_client_create(&o, &c));
    CHECK(strstr(msg, "thread_count") != NULL);
}

/* Sets or (|value| NULL) unsets the environment variable |name|. */
static void set_env(const char *name, const char *value) {
    if (value)
        CHECK(setenv(name, value, 1) == 0);
    else
        CHECK(unsetenv(name) == 0);
}

/* The backend a client gets (runtime.h: options.backend > CXLA_BACKEND > cpu when a C
 * compiler runs > the interpreter) for |options_backend| (NULL: none named). */
static void check_backend(const char *options_backend, const char *expected) {
    cxla_client_options o;
    cxla_client_options_init(&o);
    o.backend = options_backend;
    o.quiet_fallback = true; /* tests/tools/test_default_backend.sh checks the stderr line */
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(&o, &c));
    if (c) CHECK_EQ_STR(cxla_client_backend(c), expected);
    /* It runs there: the cpu backend compiles (with the compiler named), the interpreter
     * does not need one. */
    cxla_executable *e = c ? compile(c, add_text) : NULL;
    if (e) {
        cxla_literal *x = lit("f32[3] {1, 2, 3}"), *r = NULL;
        const cxla_literal *args[] = {x, x};
        CHECK_OK(cxla_executable_run(e, args, 2, &r));
        check_equal(r, "f32[3] {2, 4, 6}");
        cxla_literal_free(r);
        cxla_literal_free(x);
    }
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

static void test_default_backend(void) {
    char *saved_backend = getenv("CXLA_BACKEND") ? strdup(getenv("CXLA_BACKEND")) : NULL;
    char *saved_cc = getenv("CXLA_CC") ? strdup(getenv("CXLA_CC")) : NULL;
    const char *name = NULL;
    char why[512];
    set_env("CXLA_BACKEND", NULL);
    CHECK_OK(cxla_default_backend(&name, why, sizeof why));
    CHECK_EQ_STR(name, "cpu"); /* the build machine has a compiler: it built this test */
    CHECK(strncmp(why, "the C compiler runs: ", 21) == 0);
    check_backend(NULL, "cpu");
    check_backend("interp", "interpreter");

    set_env("CXLA_BACKEND", "interpreter");
    CHECK_OK(cxla_default_backend(&name, why, sizeof why));
    CHECK_EQ_STR(name, "interpreter");
    CHECK_EQ_STR(why, "CXLA_BACKEND=interpreter");
    check_backend(NULL, "interpreter");
    check_backend("cpu", "cpu"); /* the options go first */
    set_env("CXLA_BACKEND", "cpu");
    check_backend(NULL, "cpu");
    check_backend("interpreter", "interpreter");
    set_env("CXLA_BACKEND", "tpu");
    cxla_client *c = NULL;
    cxla_status s = cxla_client_create(NULL, &c);
    CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_NOT_FOUND);
    const char *msg = CHECK_ERROR(s);
    CHECK(strstr(msg, "CXLA_BACKEND names an unknown backend 'tpu' (available: interpreter, "
                      "cpu)") != NULL);
    msg = CHECK_ERROR(cxla_default_backend(&name, why, sizeof why));
    CHECK(strstr(msg, "'tpu'") != NULL);
    check_backend("cpu", "cpu"); /* a backend in the options never reads CXLA_BACKEND */

    /* No compiler: the default falls back; a named cpu stays cpu and fails to compile. */
    set_env("CXLA_BACKEND", NULL);
    set_env("CXLA_CC", "/nonexistent/cxla-cc");
    CHECK_OK(cxla_default_backend(&name, why, sizeof why));
    CHECK_EQ_STR(name, "interpreter");
    CHECK(strstr(why, "no C compiler: ") == why);
    CHECK(strstr(why, "/nonexistent/cxla-cc") != NULL);
    check_backend(NULL, "interpreter");
    cxla_client_options o;
    cxla_client_options_init(&o);
    o.backend = "cpu";
    CHECK_OK(cxla_client_create(&o, &c));
    cxla_executable *e = NULL;
    msg = CHECK_ERROR(cxla_client_compile_hlo_text(c, add_text, (size_t)-1, "t.hlo", &e));
    CHECK(strstr(msg, "CXLA_CC") != NULL && strstr(msg, "build-essential") != NULL);
    cxla_client_destroy(c);
    set_env("CXLA_BACKEND", "cpu");
    CHECK_OK(cxla_default_backend(&name, why, sizeof why));
    CHECK_EQ_STR(name, "cpu"); /* named: no fallback */

    /* The compiler back: the probe's answer is per compiler, not per process. */
    set_env("CXLA_BACKEND", NULL);
    set_env("CXLA_CC", saved_cc);
    CHECK_OK(cxla_default_backend(&name, NULL, 0));
    CHECK_EQ_STR(name, "cpu");
    set_env("CXLA_BACKEND", saved_backend);
    free(saved_backend);
    free(saved_cc);
}

static void test_compile_and_run_errors(void) {
    cxla_client *c = new_client();
    cxla_executable *e = NULL;
    const char *msg = CHECK_ERROR(cxla_client_compile_hlo_text(
        c, "HloModule m\nENTRY main {\n  ROOT x = f32[] frob()\n}\n", (size_t)-1, "bad.hlo", &e));
    CHECK(strstr(msg, "bad.hlo") != NULL);
    CHECK(strstr(msg, "bad.hlo:3:") != NULL);
    msg = CHECK_ERROR(cxla_client_compile_hlo_text(c,
                                                   "HloModule m\nENTRY main {\n"
                                                   "  x = f32[3] parameter(0)\n"
                                                   "  ROOT n = f32[4] negate(x)\n}\n",
                                                   (size_t)-1, NULL, &e));
    CHECK(strstr(msg, "n") != NULL);
    msg = CHECK_ERROR(cxla_client_compile(c, NULL, &e));
    CHECK(strstr(msg, "module") != NULL);
    e = compile(c, add_text);
    cxla_literal *x = lit("f32[3] {1, 2, 3}"), *y = lit("f32[2] {1, 2}"), *r = NULL;
    const cxla_literal *one[] = {x};
    msg = CHECK_ERROR(cxla_executable_run(e, one, 1, &r));
    CHECK(strstr(msg, "takes 2 arguments, got 1") != NULL);
    const cxla_literal *wrong[] = {x, y};
    msg = CHECK_ERROR(cxla_executable_run(e, wrong, 2, &r));
    CHECK(strstr(msg, "argument 1 has shape f32[2]") != NULL);
    const cxla_literal *null_arg[] = {x, NULL};
    msg = CHECK_ERROR(cxla_executable_run(e, null_arg, 2, &r));
    CHECK(strstr(msg, "argument 1 is NULL") != NULL);
    CHECK(r == NULL);
    cxla_literal_free(x);
    cxla_literal_free(y);
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

static void test_executable_outlives_client(void) {
    cxla_client *c = new_client();
    cxla_executable *e = compile(c, add_text);
    CHECK_OK(cxla_client_infeed_push(c, lit("f32[] 1"))); /* freed with the client */
    cxla_client_destroy(c);                               /* only marked: e still uses it */
    cxla_literal *x = lit("f32[3] {1, 2, 3}"), *r = NULL;
    const cxla_literal *args[] = {x, x};
    if (e) CHECK_OK(cxla_executable_run(e, args, 2, &r));
    check_equal(r, "f32[3] {2, 4, 6}");
    cxla_literal_free(r);
    cxla_literal_free(x);
    cxla_executable_destroy(e); /* frees the client too (LeakSanitizer checks) */
}

/* ---- infeed and outfeed ------------------------------------------------------------- */

/* Reads three s32 values in a loop, outfeeds each running sum, returns the total. */
static const char feed_loop[] =
    "HloModule feed\n"
    "cond {\n"
    "  p = (s32[], s32[], token[]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  three = s32[] constant(3)\n"
    "  ROOT lt = pred[] compare(i, three), direction=LT\n"
    "}\n"
    "body {\n"
    "  p = (s32[], s32[], token[]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  acc = s32[] get-tuple-element(p), index=1\n"
    "  t = token[] get-tuple-element(p), index=2\n"
    "  in = (s32[], token[]) infeed(t)\n"
    "  v = s32[] get-tuple-element(in), index=0\n"
    "  t1 = token[] get-tuple-element(in), index=1\n"
    "  sum = s32[] add(acc, v)\n"
    "  t2 = token[] outfeed(sum, t1)\n"
    "  one = s32[] constant(1)\n"
    "  j = s32[] add(i, one)\n"
    "  ROOT r = (s32[], s32[], token[]) tuple(j, sum, t2)\n"
    "}\n"
    "ENTRY main {\n"
    "  zero = s32[] constant(0)\n"
    "  t = token[] after-all()\n"
    "  init = (s32[], s32[], token[]) tuple(zero, zero, t)\n"
    "  w = (s32[], s32[], token[]) while(init), condition=cond, body=body\n"
    "  ROOT total = s32[] get-tuple-element(w), index=1\n"
    "}\n";

static void test_infeed_outfeed_order(void) {
    cxla_client *c = new_client();
    cxla_executable *e = compile(c, feed_loop);
    CHECK_OK(cxla_client_infeed_push(c, lit("s32[] 5")));
    CHECK_OK(cxla_client_infeed_push(c, lit("s32[] -2")));
    CHECK_OK(cxla_client_infeed_push(c, lit("s32[] 10")));
    CHECK_OK(cxla_client_infeed_push(c, lit("s32[] 100"))); /* left for the next run */
    CHECK_EQ_I64(cxla_client_infeed_count(c), 4);
    cxla_literal *r = NULL;
    if (e) CHECK_OK(cxla_executable_run(e, NULL, 0, &r));
    check_equal(r, "s32[] 13");
    cxla_literal_free(r);
    r = NULL;
    CHECK_EQ_I64(cxla_client_infeed_count(c), 1);
    CHECK_EQ_I64(cxla_client_outfeed_count(c), 3);
    const char *sums[] = {"s32[] 5", "s32[] 3", "s32[] 13"};
    for (int i = 0; i < 3; i++) {
        cxla_literal *o = NULL;
        CHECK_OK(cxla_client_outfeed_pop(c, &o));
        check_equal(o, sums[i]);
        cxla_literal_free(o);
    }
    cxla_literal *none = NULL;
    cxla_status s = cxla_client_outfeed_pop(c, &none);
    CHECK_EQ_I64(cxla_status_code_of(s), CXLA_STATUS_OUT_OF_RANGE);
    CHECK(strstr(CHECK_ERROR(s), "outfeed queue is empty") != NULL);
    /* The second run finds one value and then an empty queue. */
    const char *msg = CHECK_ERROR(cxla_executable_run(e, NULL, 0, &r));
    CHECK(strstr(msg, "in (infeed, line 13): the infeed queue is empty") != NULL);
    CHECK(strstr(msg, "cxla_client_infeed_push") != NULL);
    CHECK_EQ_I64(cxla_client_outfeed_count(c), 1); /* 100, outfed before the failure */
    /* Data of the wrong type. */
    cxla_client_infeed_clear(c);
    CHECK_OK(cxla_client_infeed_push(c, lit("f32[] 1")));
    msg = CHECK_ERROR(cxla_executable_run(e, NULL, 0, &r));
    CHECK(strstr(msg, "has shape f32[], but the instruction reads s32[]") != NULL);
    msg = CHECK_ERROR(cxla_client_infeed_push(c, NULL));
    CHECK(strstr(msg, "literal") != NULL);
    cxla_executable_destroy(e);
    cxla_client_destroy(c); /* frees the outfeed value left */
}

/* ---- channels ----------------------------------------------------------------------- */

static const char sender[] = "HloModule sender\n"
                             "ENTRY main {\n"
                             "  x = f32[2] parameter(0)\n"
                             "  t = token[] after-all()\n"
                             "  s = (f32[2], u32[], token[]) send(x, t), channel_id=1\n"
                             "  ROOT d = token[] send-done(s), channel_id=1\n"
                             "}\n";
static const char receiver[] = "HloModule receiver\n"
                               "ENTRY main {\n"
                               "  t = token[] after-all()\n"
                               "  r = (f32[2], u32[], token[]) recv(t), channel_id=1\n"
                               "  d = (f32[2], token[]) recv-done(r), channel_id=1\n"
                               "  v = f32[2] get-tuple-element(d), index=0\n"
                               "  ROOT n = f32[2] negate(v)\n"
                               "}\n";

static void test_send_feeds_recv(void) {
    cxla_client *c = new_client();
    cxla_executable *a = compile(c, sender), *b = compile(c, receiver);
    cxla_literal *x = lit("f32[2] {1, -2}"), *y = lit("f32[2] {3, 4}"), *r = NULL;
    const cxla_literal *ax[] = {x}, *ay[] = {y};
    if (!a || !b) goto done;
    CHECK_OK(cxla_executable_run(a, ax, 1, &r));
    cxla_literal_free(r);
    CHECK_OK(cxla_executable_run(a, ay, 1, &r));
    cxla_literal_free(r);
    r = NULL;
    CHECK_EQ_I64(cxla_client_channel_count(c, 1), 2);
    CHECK_OK(cxla_executable_run(b, NULL, 0, &r)); /* first in, first out */
    check_equal(r, "f32[2] {-1, 2}");
    cxla_literal_free(r);
    r = NULL;
    /* The host can take what was sent, and feed a recv. */
    cxla_literal *got = NULL;
    CHECK_OK(cxla_client_channel_pop(c, 1, &got));
    check_equal(got, "f32[2] {3, 4}");
    cxla_literal_free(got);
    CHECK_OK(cxla_client_channel_push(c, 1, lit("f32[2] {0.5, 0}")));
    CHECK_OK(cxla_executable_run(b, NULL, 0, &r));
    check_equal(r, "f32[2] {-0.5, -0}");
    cxla_literal_free(r);
    r = NULL;
    /* Nothing left. */
    const char *msg = CHECK_ERROR(cxla_executable_run(b, NULL, 0, &r));
    CHECK(strstr(msg, "d (recv-done, line 5): nothing was sent on channel 1") != NULL);
    msg = CHECK_ERROR(cxla_client_channel_pop(c, 1, &got));
    CHECK(strstr(msg, "channel 1 is empty") != NULL);
    msg = CHECK_ERROR(cxla_client_channel_push(c, -1, lit("f32[] 0")));
    CHECK(strstr(msg, "channel id") != NULL);
done:
    cxla_literal_free(x);
    cxla_literal_free(y);
    cxla_executable_destroy(a);
    cxla_executable_destroy(b);
    cxla_client_destroy(c);
}

typedef struct recorder {
    int sends, recvs;
    int64_t last_channel;
    float last_value;
} recorder;

static cxla_status record_send(void *user, int64_t channel, bool host, const cxla_literal *data) {
    recorder *rec = user;
    rec->sends++;
    rec->last_channel = channel;
    rec->last_value = ((const float *)cxla_literal_data_const(data))[0];
    return NULL;
}

static cxla_status answer_recv(void *user, int64_t channel, bool host, const cxla_shape *shape,
                               cxla_literal **out) {
    recorder *rec = user;
    rec->recvs++;
    rec->last_channel = channel;
    return cxla_literal_parse("f32[2] {10, 20}", (size_t)-1, NULL, out);
}

static cxla_status refuse(void *user, int64_t channel, bool host, const cxla_literal *data) {
    return cxla_error(CXLA_STATUS_UNAVAILABLE, "the peer is gone");
}

static void test_channel_handlers(void) {
    cxla_client *c = new_client();
    cxla_executable *a = compile(c, sender), *b = compile(c, receiver);
    recorder rec = {0}, any = {0};
    CHECK_OK(cxla_client_set_channel_handlers(c, 1, record_send, answer_recv, &rec));
    CHECK_OK(cxla_client_set_channel_handlers(c, CXLA_CHANNEL_ANY, refuse, NULL, &any));
    cxla_literal *x = lit("f32[2] {7, 8}"), *r = NULL;
    const cxla_literal *ax[] = {x};
    if (!a || !b) goto done;
    CHECK_OK(cxla_executable_run(a, ax, 1, &r));
    cxla_literal_free(r);
    r = NULL;
    CHECK_EQ_I64(rec.sends, 1);
    CHECK_EQ_I64(rec.last_channel, 1);
    CHECK(rec.last_value == 7.0f);
    CHECK_EQ_I64(cxla_client_channel_count(c, 1), 0); /* the handler took it */
    CHECK_OK(cxla_executable_run(b, NULL, 0, &r));
    check_equal(r, "f32[2] {-10, -20}");
    cxla_literal_free(r);
    r = NULL;
    CHECK_EQ_I64(rec.recvs, 1);
    /* Without channel 1's own handlers, the catch-all ones apply. */
    CHECK_OK(cxla_client_set_channel_handlers(c, 1, NULL, NULL, NULL));
    const char *msg = CHECK_ERROR(cxla_executable_run(a, ax, 1, &r));
    CHECK(strstr(msg, "s (send, line 5)") != NULL);
    CHECK(strstr(msg, "the peer is gone") != NULL);
    msg = CHECK_ERROR(cxla_client_set_channel_handlers(c, -2, NULL, NULL, NULL));
    CHECK(strstr(msg, "-2") != NULL);
done:
    cxla_literal_free(x);
    cxla_executable_destroy(a);
    cxla_executable_destroy(b);
    cxla_client_destroy(c);
}

/* ---- buffers ---------------------------------------------------------------------------- */

static const void *seen_pointer;

/* Exported for dlsym: records where its operand lives, returns its first element. */
void cxla_test_record_pointer(void *out, const void **in);
void cxla_test_record_pointer(void *out, const void **in) {
    seen_pointer = in[0];
    *(float *)out = ((const float *)in[0])[0];
}

static const char buffers_text[] =
    "HloModule buffers\n"
    "ENTRY main {\n"
    "  a = f32[2,3] parameter(0)\n"
    "  p = (s32[], f32[2]) parameter(1)\n"
    "  k = s32[] get-tuple-element(p), index=0\n"
    "  v = f32[2] get-tuple-element(p), index=1\n"
    "  first = f32[] custom-call(a), custom_call_target=\"cxla_test_record_pointer\"\n"
    "  two = s32[] constant(2)\n"
    "  k2 = s32[] multiply(k, two)\n"
    "  n = f32[2,3] negate(a)\n"
    "  ROOT r = (f32[2,3], s32[], f32[], f32[2]) tuple(n, k2, first, v)\n"
    "}\n";

static void test_run_buffers(void) {
    cxla_client *c = new_client();
    cxla_executable *e = compile(c, buffers_text);
    if (!e) {
        cxla_client_destroy(c);
        return;
    }
    CHECK_EQ_I64(cxla_executable_parameter_leaf_count(e), 3);
    CHECK_EQ_I64(cxla_executable_result_leaf_count(e), 4);
    float a[6] = {1, 2, 3, 4, 5, 6}, v[2] = {0.5f, -1};
    int32_t k = 21;
    float n[6], first = 0, v_out[2];
    int32_t k2 = 0;
    cxla_buffer args[3] = {{NULL, a, sizeof(a)}, {NULL, &k, sizeof(k)}, {NULL, v, sizeof(v)}};
    cxla_buffer results[4] = {{NULL, n, sizeof(n)},
                              {NULL, &k2, sizeof(k2)},
                              {NULL, &first, sizeof(first)},
                              {NULL, v_out, sizeof(v_out)}};
    seen_pointer = NULL;
    CHECK_OK(cxla_executable_run_buffers(e, NULL, args, 3, results, 4));
    CHECK(seen_pointer == a); /* row-major: used in place, no copy */
    CHECK(n[0] == -1 && n[1] == -2 && n[5] == -6);
    CHECK_EQ_I64(k2, 42);
    CHECK(first == 1.0f);
    CHECK(v_out[0] == 0.5f && v_out[1] == -1);

    /* A column-major argument is relaid (a copy), a column-major result written so. */
    int64_t dims[2] = {2, 3}, m2m[2] = {0, 1};
    cxla_layout col = {.minor_to_major = m2m};
    cxla_shape col_shape = {.type = CXLA_F32, .rank = 2, .dims = dims, .layout = &col};
    float a_col[6] = {1, 4, 2, 5, 3, 6}; /* the same logical values */
    args[0] = (cxla_buffer){&col_shape, a_col, sizeof(a_col)};
    results[0] = (cxla_buffer){&col_shape, n, sizeof(n)};
    seen_pointer = NULL;
    CHECK_OK(cxla_executable_run_buffers(e, NULL, args, 3, results, 4));
    CHECK(seen_pointer != NULL && seen_pointer != a_col);
    float expect_col[6] = {-1, -4, -2, -5, -3, -6};
    CHECK(memcmp(n, expect_col, sizeof(n)) == 0);
    CHECK(first == 1.0f);

    /* Errors. */
    const char *msg = CHECK_ERROR(cxla_executable_run_buffers(e, NULL, args, 2, results, 4));
    CHECK(strstr(msg, "takes 3 argument buffers and gives 4 result buffers") != NULL);
    args[0] = (cxla_buffer){NULL, a, sizeof(a) - 1};
    msg = CHECK_ERROR(cxla_executable_run_buffers(e, NULL, args, 3, results, 4));
    CHECK(strstr(msg, "argument buffer 0 holds 23 bytes") != NULL);
    args[0] = (cxla_buffer){NULL, a, sizeof(a)};
    cxla_shape s64_shape = {.type = CXLA_S64};
    results[1] = (cxla_buffer){&s64_shape, &k2, sizeof(k2)};
    msg = CHECK_ERROR(cxla_executable_run_buffers(e, NULL, args, 3, results, 4));
    CHECK(strstr(msg, "result buffer 1 has shape s64[]") != NULL);
    results[1] = (cxla_buffer){NULL, NULL, 0};
    msg = CHECK_ERROR(cxla_executable_run_buffers(e, NULL, args, 3, results, 4));
    CHECK(strstr(msg, "result buffer 1 holds 0 bytes") != NULL);
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

/* ---- threads ------------------------------------------------------------------------------ */

typedef struct worker {
    cxla_executable *e;
    float base;
    int failures;
} worker;

static void *work(void *p) {
    worker *w = p;
    for (int i = 0; i < 40; i++) {
        cxla_literal *x = NULL, *r = NULL;
        cxla_shape s = {.type = CXLA_F32, .rank = 1, .dims = (int64_t[]){3}};
        if (cxla_literal_create(&s, &x)) {
            w->failures++;
            continue;
        }
        float *d = cxla_literal_data(x);
        d[0] = w->base + (float)i;
        const cxla_literal *args[] = {x, x};
        cxla_status st = cxla_executable_run(w->e, args, 2, &r);
        if (st || ((const float *)cxla_literal_data_const(r))[0] != 2 * d[0]) w->failures++;
        cxla_status_free(st);
        cxla_literal_free(r);
        cxla_literal_free(x);
    }
    return NULL;
}

static void test_concurrent_runs(void) {
    cxla_client *c = new_client();
    cxla_executable *e = compile(c, add_text);
    worker w[2] = {{e, 0, 0}, {e, 1000, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2 && e; i++) CHECK(pthread_create(&t[i], NULL, work, &w[i]) == 0);
    for (int i = 0; i < 2 && e; i++) pthread_join(t[i], NULL);
    CHECK_EQ_I64(w[0].failures + w[1].failures, 0);
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

TEST_MAIN(TEST(test_compile_run_free), TEST(test_compile_from_file_and_module),
          TEST(test_compile_stablehlo), TEST(test_client_errors), TEST(test_default_backend),
          TEST(test_compile_and_run_errors), TEST(test_executable_outlives_client),
          TEST(test_infeed_outfeed_order), TEST(test_send_feeds_recv), TEST(test_channel_handlers),
          TEST(test_run_buffers), TEST(test_concurrent_runs))
