/* infeed, outfeed, send, send-done, recv and recv-done in the interpreter
 * (src/interp/interp_host.c), through a fake host that records every call: results and
 * their shapes, program order, layouts handed over, channel ids, errors without a host
 * and errors from it. */
#include <inttypes.h>
#include <stdlib.h>

#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

enum { MAX_ITEMS = 8 };

typedef struct fake_host {
    cxla_literal *infeed[MAX_ITEMS]; /* served in order */
    int infeed_next, infeed_count, infeed_calls;
    cxla_literal *outfeed[MAX_ITEMS];
    int outfeed_count;
    char log[512]; /* "infeed;outfeed;send 3 host;recv 3;" */
    cxla_literal *sent[MAX_ITEMS];
    int sent_count;
    const char *recv_text; /* the literal recv returns */
    bool fail;             /* every callback fails */
} fake_host;

static void log_call(fake_host *h, const char *format, int64_t channel, bool host) {
    size_t n = strlen(h->log);
    snprintf(h->log + n, sizeof(h->log) - n, format, channel, host ? " host" : "");
}

static void log_text(fake_host *h, const char *text) {
    size_t n = strlen(h->log);
    snprintf(h->log + n, sizeof(h->log) - n, "%s", text);
}

static cxla_status fake_infeed(void *user, const cxla_shape *shape, const char *config,
                               cxla_literal **out) {
    fake_host *h = user;
    h->infeed_calls++;
    log_text(h, "infeed;");
    if (h->fail) return cxla_error(CXLA_STATUS_UNAVAILABLE, "host says no");
    if (h->infeed_next >= h->infeed_count)
        return cxla_error(CXLA_STATUS_FAILED_PRECONDITION, "fake queue empty");
    *out = h->infeed[h->infeed_next];
    h->infeed[h->infeed_next++] = NULL;
    return NULL;
}

static cxla_status fake_outfeed(void *user, const cxla_literal *data, const cxla_shape *shape,
                                const char *config) {
    fake_host *h = user;
    log_text(h, "outfeed;");
    if (h->fail) return cxla_error(CXLA_STATUS_UNAVAILABLE, "host says no");
    CHECK_OK(cxla_literal_clone(data, &h->outfeed[h->outfeed_count++]));
    return NULL;
}

static cxla_status fake_send(void *user, int64_t channel, bool host, const cxla_literal *data) {
    fake_host *h = user;
    log_call(h, "send %" PRId64 "%s;", channel, host);
    if (h->fail) return cxla_error(CXLA_STATUS_UNAVAILABLE, "host says no");
    CHECK_OK(cxla_literal_clone(data, &h->sent[h->sent_count++]));
    return NULL;
}

static cxla_status fake_recv(void *user, int64_t channel, bool host, const cxla_shape *shape,
                             cxla_literal **out) {
    fake_host *h = user;
    log_call(h, "recv %" PRId64 "%s;", channel, host);
    if (h->fail) return cxla_error(CXLA_STATUS_UNAVAILABLE, "host says no");
    return cxla_literal_parse(h->recv_text, (size_t)-1, NULL, out);
}

static void fake_free(fake_host *h) {
    for (int i = 0; i < MAX_ITEMS; i++) {
        cxla_literal_free(h->infeed[i]);
        cxla_literal_free(h->outfeed[i]);
        cxla_literal_free(h->sent[i]);
    }
}

static cxla_literal *lit(const char *text) {
    cxla_literal *l = NULL;
    CHECK_OK(cxla_literal_parse(text, (size_t)-1, NULL, &l));
    return l;
}

/* Runs |text| with the fake host (or none when |h| is NULL). */
static cxla_status run(const char *text, fake_host *h, const char *const *args, int n,
                       cxla_literal **out) {
    cxla_module *m = NULL;
    cxla_literal *lits[4] = {NULL};
    *out = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "t.hlo", &m);
    if (!s) s = cxla_verify_module(m);
    for (int i = 0; i < n && !s; i++) s = cxla_literal_parse(args[i], (size_t)-1, NULL, &lits[i]);
    exec_host host = {h, fake_infeed, fake_outfeed, fake_send, fake_recv};
    exec_run_options options = {.host = h ? &host : NULL};
    if (!s) s = interp_run_module(m, &options, (const cxla_literal *const *)lits, n, out);
    for (int i = 0; i < n; i++) cxla_literal_free(lits[i]);
    cxla_module_destroy(m);
    return s;
}

static void check_equal(const cxla_literal *got, const char *expected) {
    cxla_literal *e = lit(expected);
    if (got && e)
        CHECK_OK(cxla_literal_compare(got, e, NULL));
    else
        CHECK(got != NULL);
    cxla_literal_free(e);
}

/* ---- infeed and outfeed ------------------------------------------------------------- */

static const char feed_module[] =
    "HloModule feed\n"
    "ENTRY main {\n"
    "  t0 = token[] after-all()\n"
    "  in = (f32[2,3]{0,1}, token[]) infeed(t0), infeed_config=\"cfg\"\n"
    "  d = f32[2,3] get-tuple-element(in), index=0\n"
    "  t1 = token[] get-tuple-element(in), index=1\n"
    "  n = f32[2,3] negate(d)\n"
    "  t2 = token[] outfeed(n, t1), outfeed_shape=f32[2,3]{0,1}\n"
    "  in2 = (s32[], token[]) infeed(t2)\n"
    "  k = s32[] get-tuple-element(in2), index=0\n"
    "  t3 = token[] get-tuple-element(in2), index=1\n"
    "  t4 = token[] outfeed(k, t3)\n"
    "  ROOT r = (f32[2,3], s32[]) tuple(d, k)\n"
    "}\n";

static void test_infeed_outfeed_order(void) {
    fake_host h = {0};
    h.infeed[0] = lit("f32[2,3] {{1, 2, 3}, {4, 5, 6}}"); /* row-major */
    h.infeed[1] = lit("s32[] 7");
    h.infeed_count = 2;
    cxla_literal *r = NULL;
    CHECK_OK(run(feed_module, &h, NULL, 0, &r));
    check_equal(r, "(f32[2,3], s32[]) ({{1, 2, 3}, {4, 5, 6}}, 7)");
    CHECK_EQ_STR(h.log, "infeed;outfeed;infeed;outfeed;");
    CHECK_EQ_I64(h.outfeed_count, 2);
    if (h.outfeed_count == 2) {
        check_equal(h.outfeed[0], "f32[2,3] {{-1, -2, -3}, {-4, -5, -6}}");
        /* The host gets the data in the outfeed_shape's layout. */
        const cxla_shape *s = cxla_literal_shape(h.outfeed[0]);
        CHECK(s->layout && s->layout->minor_to_major[0] == 0);
        const float *p = cxla_literal_data_const(h.outfeed[0]);
        CHECK(p[1] == -4.0f); /* column-major memory: -1, -4, -2, ... */
        check_equal(h.outfeed[1], "s32[] 7");
    }
    cxla_literal_free(r);
    fake_free(&h);
}

static void test_infeed_in_a_layout(void) {
    /* The host may give data in any layout: a column-major literal reads the same. */
    fake_host h = {0};
    cxla_literal *row = lit("f32[2,3] {{1, 2, 3}, {4, 5, 6}}");
    int64_t m2m[2] = {0, 1};
    cxla_layout col = {.minor_to_major = m2m};
    CHECK_OK(cxla_literal_relayout(row, &col, &h.infeed[0]));
    cxla_literal_free(row);
    h.infeed[1] = lit("s32[] -1");
    h.infeed_count = 2;
    cxla_literal *r = NULL;
    CHECK_OK(run(feed_module, &h, NULL, 0, &r));
    check_equal(r, "(f32[2,3], s32[]) ({{1, 2, 3}, {4, 5, 6}}, -1)");
    cxla_literal_free(r);
    fake_free(&h);
}

static void test_infeed_errors(void) {
    cxla_literal *r = NULL;
    /* No host at all. */
    const char *msg = CHECK_ERROR(run(feed_module, NULL, NULL, 0, &r));
    CHECK(strstr(msg, "no host infeed handler") != NULL);
    CHECK(strstr(msg, "in (infeed, line 4)") != NULL);
    /* The host's error, annotated with the instruction. */
    fake_host h = {0};
    h.infeed_count = 0;
    msg = CHECK_ERROR(run(feed_module, &h, NULL, 0, &r));
    CHECK(strstr(msg, "in (infeed, line 4): fake queue empty") != NULL);
    /* Data of the wrong shape. */
    h.infeed[0] = lit("f32[3,2] {{1, 2}, {3, 4}, {5, 6}}");
    h.infeed_count = 1;
    msg = CHECK_ERROR(run(feed_module, &h, NULL, 0, &r));
    CHECK(strstr(msg, "has shape f32[3,2], but the instruction reads f32[2,3]") != NULL);
    fake_free(&h);
    CHECK(r == NULL);
}

static void test_empty_tuple_infeed_reads_nothing(void) {
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  t0 = token[] after-all()\n"
                       "  in = ((), token[]) infeed(t0)\n"
                       "  e = () get-tuple-element(in), index=0\n"
                       "  t1 = token[] get-tuple-element(in), index=1\n"
                       "  t2 = token[] outfeed(e, t1)\n"
                       "  ROOT c = s32[] constant(3)\n"
                       "}\n";
    fake_host h = {0};
    cxla_literal *r = NULL;
    CHECK_OK(run(text, &h, NULL, 0, &r));
    check_equal(r, "s32[] 3");
    CHECK_EQ_I64(h.infeed_calls, 0);
    CHECK_EQ_STR(h.log, "");
    cxla_literal_free(r);
    /* Even without a host. */
    CHECK_OK(run(text, NULL, NULL, 0, &r));
    cxla_literal_free(r);
}

static void test_outfeed_result_is_token_and_runs_unused(void) {
    /* An outfeed no one uses still runs (side effect), its token is a token. */
    const char *text = "HloModule m\n"
                       "ENTRY main {\n"
                       "  x = f32[2] parameter(0)\n"
                       "  t = token[] after-all()\n"
                       "  o = token[] outfeed(x, t)\n"
                       "  ROOT y = f32[2] add(x, x)\n"
                       "}\n";
    fake_host h = {0};
    const char *args[] = {"f32[2] {1, nan}"};
    cxla_literal *r = NULL;
    CHECK_OK(run(text, &h, args, 1, &r));
    check_equal(r, "f32[2] {2, nan}");
    CHECK_EQ_I64(h.outfeed_count, 1);
    if (h.outfeed_count) check_equal(h.outfeed[0], "f32[2] {1, nan}");
    cxla_literal_free(r);
    h.fail = true;
    const char *msg = CHECK_ERROR(run(text, &h, args, 1, &r));
    CHECK(strstr(msg, "o (outfeed, line 5): host says no") != NULL);
    fake_free(&h);
}

/* ---- send and recv ----------------------------------------------------------------- */

static const char send_recv_module[] =
    "HloModule sr\n"
    "ENTRY main {\n"
    "  x = f32[2] parameter(0)\n"
    "  t0 = token[] after-all()\n"
    "  s = (f32[2], u32[], token[]) send(x, t0), channel_id=3, is_host_transfer=true\n"
    "  st = ((f32[2], u32[], token[])) tuple(s)\n"
    "  g = (f32[2], u32[], token[]) get-tuple-element(st), index=0\n"
    "  sd = token[] send-done(g), channel_id=3, is_host_transfer=true\n"
    "  r = (s32[3], u32[], token[]) recv(sd), channel_id=5\n"
    "  rd = (s32[3], token[]) recv-done(r), channel_id=5\n"
    "  d = s32[3] get-tuple-element(rd), index=0\n"
    "  tok = token[] get-tuple-element(rd), index=1\n"
    "  ROOT out = (s32[3], f32[2], ((f32[2], u32[], token[])), token[]) tuple(d, x, st, sd)\n"
    "}\n";

static void test_send_recv(void) {
    fake_host h = {0};
    h.recv_text = "s32[3] {4, -5, 6}";
    const char *args[] = {"f32[2] {0.5, -0}"};
    cxla_literal *r = NULL;
    CHECK_OK(run(send_recv_module, &h, args, 1, &r));
    CHECK_EQ_STR(h.log, "send 3 host;recv 5;");
    CHECK_EQ_I64(h.sent_count, 1);
    if (h.sent_count) check_equal(h.sent[0], "f32[2] {0.5, -0}");
    if (r) {
        check_equal(cxla_literal_tuple_element_const(r, 0), "s32[3] {4, -5, 6}");
        /* send's result: (data, u32 context, token). */
        const cxla_literal *s =
            cxla_literal_tuple_element_const(cxla_literal_tuple_element_const(r, 2), 0);
        CHECK_EQ_I64(cxla_literal_tuple_count(s), 3);
        check_equal(cxla_literal_tuple_element_const(s, 0), "f32[2] {0.5, -0}");
        CHECK(cxla_literal_type(cxla_literal_tuple_element_const(s, 1)) == CXLA_U32);
        CHECK(cxla_literal_type(cxla_literal_tuple_element_const(s, 2)) == CXLA_TOKEN);
        CHECK(cxla_literal_type(cxla_literal_tuple_element_const(r, 3)) == CXLA_TOKEN);
    }
    cxla_literal_free(r);
    fake_free(&h);
}

static void test_send_recv_errors(void) {
    const char *args[] = {"f32[2] {1, 2}"};
    cxla_literal *r = NULL;
    const char *msg = CHECK_ERROR(run(send_recv_module, NULL, args, 1, &r));
    CHECK(strstr(msg, "s (send, line 5): no host send handler") != NULL);
    fake_host h = {0};
    h.recv_text = "s32[2] {1, 2}"; /* the wrong shape */
    msg = CHECK_ERROR(run(send_recv_module, &h, args, 1, &r));
    CHECK(strstr(msg, "rd (recv-done, line 10)") != NULL);
    CHECK(strstr(msg, "s32[2]") != NULL);
    fake_free(&h);
    fake_host failing = {.fail = true, .recv_text = "s32[3] {1, 2, 3}"};
    msg = CHECK_ERROR(run(send_recv_module, &failing, args, 1, &r));
    CHECK(strstr(msg, "s (send, line 5): host says no") != NULL);
    fake_free(&failing);
    CHECK(r == NULL);
}

TEST_MAIN(TEST(test_infeed_outfeed_order), TEST(test_infeed_in_a_layout), TEST(test_infeed_errors),
          TEST(test_empty_tuple_infeed_reads_nothing),
          TEST(test_outfeed_result_is_token_and_runs_unused), TEST(test_send_recv),
          TEST(test_send_recv_errors))
