/* The builder's side-effect operations end to end through the runtime API: infeed and
 * outfeed against the client's queues, send and recv through mailboxes and channel
 * handlers (host transfers with their layouts), custom calls with options run through
 * the registry; and the annotations (sharding, metadata, frontend attributes) in the
 * printed text, parsed back and run. */
#include <inttypes.h>
#include <stdio.h>

#include "builder_test_util.h"
#include "cxla/custom_call.h"
#include "cxla/runtime.h"

/* A client on |backend| (NULL: the default, the cpu backend where a C compiler runs). */
static cxla_client *client_on(const char *backend) {
    cxla_client_options o;
    cxla_client_options_init(&o);
    o.backend = backend;
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(&o, &c));
    return c;
}

static cxla_client *new_client(void) {
    return client_on(NULL);
}

static cxla_executable *compile_built(cxla_client *c, cxla_xla_computation *comp) {
    cxla_executable *e = NULL;
    if (comp) CHECK_OK(cxla_client_compile_computation(c, comp, &e));
    return e;
}

static void check_literal(const cxla_literal *got, const char *want_text) {
    cxla_literal *want = lit(want_text);
    if (got && want) {
        cxla_status s = cxla_literal_compare(got, want, NULL);
        if (s) {
            char *g = cxla_literal_to_string(got, CXLA_LITERAL_PRINT_SHAPE);
            CHECK_MSG(false, "%s\n  got:      %s\n  expected: %s", cxla_status_message(s),
                      g ? g : "?", want_text);
            free(g);
            cxla_status_free(s);
        }
    } else {
        CHECK(got != NULL);
    }
    cxla_literal_free(want);
}

/* minor_to_major of an array literal's layout as "1,0" ("none" without one). */
static const char *layout_of(const cxla_literal *l, char *buf, size_t n) {
    const cxla_shape *s = cxla_literal_shape(l);
    if (!s->layout) return "none";
    buf[0] = 0;
    for (int64_t i = 0; i < s->rank; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%" PRId64, i ? "," : "", s->layout->minor_to_major[i]);
    }
    return buf;
}

static int64_t m2m_col[] = {0, 1};
static cxla_layout col_major = {.minor_to_major = m2m_col};

/* ---- infeed and outfeed ------------------------------------------------------------ */

static void test_infeed_outfeed_roundtrip(void) {
    /* x = Infeed(f32[2,3]); Outfeed(2 * x); the result is x + 1. */
    cxla_builder *b = new_builder("feeds");
    cxla_shape s = SHAPE(CXLA_F32, 2, 3);
    cxla_op x = cxla_infeed(b, &s, "cfg");
    cxla_op nil = cxla_outfeed(cxla_mul(x, cxla_constant_r0(b, CXLA_F32, 2)), NULL, NULL);
    const cxla_shape *ns = NULL;
    CHECK_OK(cxla_op_get_shape(nil, &ns));
    CHECK(ns && ns->type == CXLA_TUPLE && ns->tuple_count == 0);
    cxla_op r = cxla_add(x, cxla_constant_r0(b, CXLA_F32, 1));
    cxla_xla_computation *comp = NULL;
    CHECK_OK(cxla_builder_build_with_root(b, r, &comp));
    cxla_builder_destroy(b);
    char *text = hlo_text(comp);
    CHECK(text && strstr(text, "infeed(") && strstr(text, "infeed_config=\"cfg\"") &&
          strstr(text, "outfeed(") && strstr(text, "outfeed_shape=f32[2,3]{1,0}"));
    free(text);
    cxla_client *c = new_client();
    cxla_executable *e = compile_built(c, comp);
    CHECK_OK(cxla_client_infeed_push(c, lit("f32[2,3] {{1, 2, 3}, {4, 5, 6}}")));
    cxla_literal *out = NULL, *fed = NULL;
    if (e) CHECK_OK(cxla_executable_run(e, NULL, 0, &out));
    check_literal(out, "f32[2,3] {{2, 3, 4}, {5, 6, 7}}");
    CHECK_EQ_I64(cxla_client_outfeed_count(c), 1);
    CHECK_OK(cxla_client_outfeed_pop(c, &fed));
    check_literal(fed, "f32[2,3] {{2, 4, 6}, {8, 10, 12}}");
    cxla_literal_free(out);
    cxla_literal_free(fed);
    /* Nothing to read: the run fails naming the infeed. */
    out = NULL;
    const char *msg = e ? CHECK_ERROR(cxla_executable_run(e, NULL, 0, &out)) : "infeed";
    CHECK_MSG(strstr(msg, "infeed") != NULL, "message: %s", msg);
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
    cxla_xla_computation_free(comp);
}

static void test_feeds_with_tokens_in_order(void) {
    /* Two infeeds and two outfeeds chained by tokens; the second outfeed hands its data
     * over column-major (shape_with_layout). */
    cxla_builder *b = new_builder("chain");
    cxla_shape s = SHAPE(CXLA_S32, 2, 2);
    cxla_op t0 = cxla_create_token(b);
    cxla_op i1 = cxla_infeed_with_token(t0, &s, NULL);
    cxla_op i2 = cxla_infeed_with_token(cxla_get_tuple_element(i1, 1), &s, NULL);
    cxla_op a = cxla_get_tuple_element(i1, 0), bb = cxla_get_tuple_element(i2, 0);
    cxla_op t1 = cxla_outfeed_with_token(cxla_sub(a, bb), cxla_get_tuple_element(i2, 1), NULL, "");
    cxla_shape col = s;
    col.layout = &col_major;
    cxla_op t2 = cxla_outfeed_with_token(cxla_add(a, bb), t1, &col, NULL);
    cxla_op last = cxla_after_all(b, (cxla_op[]){t1, t2}, 2);
    CHECK(cxla_op_is_valid(last));
    cxla_xla_computation *comp = finish(b);
    char *text = hlo_text(comp);
    CHECK(text && strstr(text, "outfeed_shape=s32[2,2]{0,1}"));
    free(text);
    cxla_client *c = new_client();
    cxla_executable *e = compile_built(c, comp);
    CHECK_OK(cxla_client_infeed_push(c, lit("s32[2,2] {{10, 20}, {30, 40}}")));
    CHECK_OK(cxla_client_infeed_push(c, lit("s32[2,2] {{1, 2}, {3, 4}}")));
    cxla_literal *out = NULL, *o1 = NULL, *o2 = NULL;
    if (e) CHECK_OK(cxla_executable_run(e, NULL, 0, &out));
    CHECK_OK(cxla_client_outfeed_pop(c, &o1));
    CHECK_OK(cxla_client_outfeed_pop(c, &o2));
    check_literal(o1, "s32[2,2] {{9, 18}, {27, 36}}");
    check_literal(o2, "s32[2,2] {{11, 22}, {33, 44}}");
    char buf[32];
    if (o2) CHECK_EQ_STR(layout_of(o2, buf, sizeof(buf)), "0,1");
    cxla_literal_free(out);
    cxla_literal_free(o1);
    cxla_literal_free(o2);
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
    cxla_xla_computation_free(comp);
}

static void test_feed_errors(void) {
    cxla_builder *b = new_builder("bad_feed");
    cxla_op x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2), "x");
    cxla_op r = cxla_infeed_with_token(x, &SHAPE(CXLA_F32, 2), NULL);
    CHECK(!cxla_op_is_valid(r));
    expect_build_error(b, "must be a token");

    b = new_builder("bad_outfeed");
    x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2), "x");
    cxla_outfeed(x, &SHAPE(CXLA_F32, 3), NULL);
    expect_build_error(b, "not compatible");

    b = new_builder("token_infeed");
    cxla_shape tok = {.type = CXLA_TOKEN};
    cxla_infeed(b, &tok, NULL);
    expect_build_error(b, "token");
}

/* ---- send and recv ------------------------------------------------------------------ */

static void test_send_recv_through_mailbox(void) {
    cxla_channel_handle h = cxla_create_channel_handle(NULL);
    cxla_channel_handle h2 = cxla_create_channel_handle(NULL);
    CHECK(h.handle >= 1 && h2.handle != h.handle && h.type == CXLA_CHANNEL_DEVICE_TO_DEVICE);
    /* Sender: Send(x * 10, h). */
    cxla_builder *b = new_builder("sender");
    cxla_op x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 3), "x");
    cxla_op done = cxla_send(cxla_mul(x, cxla_constant_r0(b, CXLA_F32, 10)), &h);
    const cxla_shape *ds = NULL;
    CHECK_OK(cxla_op_get_shape(done, &ds));
    CHECK(ds && ds->type == CXLA_TOKEN);
    cxla_xla_computation *sender = finish(b);
    /* Receiver: Recv(f32[3], h) + 1. */
    b = new_builder("receiver");
    cxla_op v = cxla_recv(b, &SHAPE(CXLA_F32, 3), &h);
    cxla_add(v, cxla_constant_r0(b, CXLA_F32, 1));
    cxla_xla_computation *receiver = finish(b);
    char *text = hlo_text(sender);
    char want[64];
    snprintf(want, sizeof(want), "channel_id=%" PRId64, h.handle);
    CHECK(text && strstr(text, "send(") && strstr(text, "send-done(") && strstr(text, want) &&
          !strstr(text, "is_host_transfer"));
    free(text);

    cxla_client *c = new_client();
    cxla_executable *es = compile_built(c, sender), *er = compile_built(c, receiver);
    cxla_literal *arg = lit("f32[3] {1, 2, 3}"), *out = NULL;
    const cxla_literal *args[] = {arg};
    if (es) CHECK_OK(cxla_executable_run(es, args, 1, &out));
    cxla_literal_free(out);
    out = NULL;
    CHECK_EQ_I64(cxla_client_channel_count(c, h.handle), 1);
    if (er) CHECK_OK(cxla_executable_run(er, NULL, 0, &out));
    check_literal(out, "f32[3] {11, 21, 31}");
    cxla_literal_free(out);
    /* The host feeds the receiver directly. */
    out = NULL;
    CHECK_OK(cxla_client_channel_push(c, h.handle, lit("f32[3] {-1, 0, 1}")));
    if (er) CHECK_OK(cxla_executable_run(er, NULL, 0, &out));
    check_literal(out, "f32[3] {0, 1, 2}");
    cxla_literal_free(out);
    cxla_literal_free(arg);
    cxla_executable_destroy(es);
    cxla_executable_destroy(er);
    cxla_client_destroy(c);
    cxla_xla_computation_free(sender);
    cxla_xla_computation_free(receiver);
}

typedef struct host_side {
    int sends, recvs;
    char send_layout[32];
    cxla_literal *sent;
    bool host_flag;
} host_side;

static cxla_status on_send(void *user, int64_t channel, bool host, const cxla_literal *data) {
    host_side *h = user;
    h->sends++;
    h->host_flag = host;
    layout_of(data, h->send_layout, sizeof(h->send_layout));
    cxla_literal_free(h->sent);
    h->sent = NULL;
    return cxla_literal_clone(data, &h->sent);
}

static cxla_status on_recv(void *user, int64_t channel, bool host, const cxla_shape *shape,
                           cxla_literal **out) {
    host_side *h = user;
    h->recvs++;
    /* Column-major data: the recv must read it by value, not by memory order. */
    cxla_literal *row = lit("f32[2,2] {{1, 2}, {3, 4}}");
    cxla_status s = row ? cxla_literal_relayout(row, &col_major, out) : NULL;
    cxla_literal_free(row);
    return s;
}

static void test_host_transfers_and_layouts(void) {
    /* RecvFromHost(f32[2,2]{1,0}) -> data; SendToHost(data * 2) declared column-major:
     * the handler must see the data in the declared {0,1} layout (XLA's SendToHost puts
     * shape_with_layout in the send's shape; layout assignment makes the operand match). */
    cxla_channel_handle in = cxla_create_host_to_device_channel_handle(NULL);
    cxla_channel_handle out_h = cxla_create_device_to_host_channel_handle(NULL);
    cxla_builder *b = new_builder("host");
    int64_t m2m_row[] = {1, 0};
    cxla_layout row = {.minor_to_major = m2m_row};
    cxla_shape rs = SHAPE(CXLA_F32, 2, 2), cs = SHAPE(CXLA_F32, 2, 2);
    rs.layout = &row;
    cs.layout = &col_major;
    cxla_op got = cxla_recv_from_host(cxla_create_token(b), &rs, &in);
    cxla_op data = cxla_get_tuple_element(got, 0);
    cxla_op doubled = cxla_mul(data, cxla_constant_r0(b, CXLA_F32, 2));
    cxla_op t = cxla_send_to_host(doubled, cxla_get_tuple_element(got, 1), &cs, &out_h);
    CHECK(cxla_op_is_valid(t));
    cxla_op r = cxla_add(data, cxla_constant_r0(b, CXLA_F32, 100));
    cxla_xla_computation *comp = NULL;
    CHECK_OK(cxla_builder_build_with_root(b, r, &comp));
    cxla_builder_destroy(b);
    char *text = hlo_text(comp);
    CHECK(text && strstr(text, "(f32[2,2]{0,1}, u32[], token[]) send(") &&
          strstr(text, "is_host_transfer=true"));
    free(text);

    /* On the interpreter (the oracle) and on the default backend: the cpu backend's layout
     * pass keeps the send's declared layout (as operand_layout_constraints), which the send step
     * relays the data into. */
    const char *backends[] = {"interpreter", NULL};
    for (int k = 0; k < 2; k++) {
        cxla_client *c = client_on(backends[k]);
        host_side h = {0};
        CHECK_OK(cxla_client_set_channel_handlers(c, CXLA_CHANNEL_ANY, on_send, on_recv, &h));
        cxla_executable *e = compile_built(c, comp);
        cxla_literal *res = NULL;
        if (e) CHECK_OK(cxla_executable_run(e, NULL, 0, &res));
        check_literal(res, "f32[2,2] {{101, 102}, {103, 104}}");
        CHECK_EQ_I64(h.sends, 1);
        CHECK_EQ_I64(h.recvs, 1);
        CHECK(h.host_flag);
        check_literal(h.sent, "f32[2,2] {{2, 4}, {6, 8}}");
        CHECK_MSG(!strcmp(h.send_layout, "0,1"), "%s backend: the host saw layout %s",
                  cxla_client_backend(c), h.send_layout);
        cxla_literal_free(res);
        cxla_literal_free(h.sent);
        cxla_executable_destroy(e);
        cxla_client_destroy(c);
    }
    cxla_xla_computation_free(comp);
}

static void test_channel_errors(void) {
    cxla_channel_handle d2d = cxla_create_channel_handle(NULL);
    cxla_channel_handle d2h = cxla_create_device_to_host_channel_handle(NULL);
    cxla_builder *b = new_builder("wrong_kind");
    cxla_op x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2), "x");
    cxla_send(x, &d2h);
    expect_build_error(b, "device-to-device");

    b = new_builder("host_needs_layout");
    x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 2), "x");
    cxla_send_to_host(x, cxla_create_token(b), &SHAPE(CXLA_F32, 2), &d2h);
    expect_build_error(b, "must have a layout");

    b = new_builder("host_channel");
    int64_t m0[] = {0};
    cxla_layout l0 = {.minor_to_major = m0};
    cxla_shape s = SHAPE(CXLA_F32, 2);
    s.layout = &l0;
    x = cxla_parameter(b, 0, &s, "x");
    cxla_send_to_host(x, cxla_create_token(b), &s, &d2d);
    expect_build_error(b, "device-to-host");

    b = new_builder("bad_id");
    cxla_channel_handle zero = {0, CXLA_CHANNEL_DEVICE_TO_DEVICE};
    cxla_recv(b, &SHAPE(CXLA_F32, 2), &zero);
    expect_build_error(b, "not a valid id");
}

/* ---- custom calls -------------------------------------------------------------------- */

/* out = in0 + scale, scale parsed from the opaque string; f32[3]. */
static void add_opaque(void *out, const void **in, const char *opaque, size_t len,
                       cxla_custom_call_status *status) {
    float scale = 0;
    if (sscanf(opaque, "scale=%f", &scale) != 1) {
        cxla_custom_call_status_set_failure(status, "bad opaque");
        return;
    }
    const float *x = in[0];
    float *y = out;
    for (int i = 0; i < 3; i++) y[i] = x[i] + scale;
}

static void test_custom_call_with_options(void) {
    CHECK_OK(cxla_custom_call_register("cxla_builder_test_add", (cxla_custom_call_fn)add_opaque,
                                       CXLA_CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED));
    cxla_builder *b = new_builder("cc");
    int64_t m0[] = {0};
    cxla_layout l0 = {.minor_to_major = m0};
    cxla_shape s = SHAPE(CXLA_F32, 3);
    s.layout = &l0;
    cxla_op x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 3), "x");
    cxla_custom_call_options o;
    cxla_custom_call_options_init(&o);
    o.opaque = "scale=0.5";
    o.has_side_effect = true;
    o.api_version = CXLA_CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED;
    o.operand_shapes_with_layout = &s;
    cxla_output_operand_alias alias = {.operand = 0};
    o.output_operand_aliasing = &alias;
    o.output_operand_aliasing_count = 1;
    cxla_custom_call_with_options(b, "cxla_builder_test_add", &x, 1, &s, &o);
    cxla_xla_computation *comp = finish(b);
    char *text = hlo_text(comp);
    CHECK_MSG(text && strstr(text, "custom_call_target=\"cxla_builder_test_add\"") &&
                  strstr(text, "operand_layout_constraints={f32[3]{0}}") &&
                  strstr(text, "custom_call_has_side_effect=true") &&
                  strstr(text, "output_to_operand_aliasing={{}: (0, {})}") &&
                  strstr(text, "api_version=API_VERSION_STATUS_RETURNING_UNIFIED") &&
                  strstr(text, "backend_config=\"scale=0.5\""),
              "text:\n%s", text ? text : "");
    free(text);
    /* Through the runtime, and through the printed text parsed back. */
    expect_run(comp, ARGS("f32[3] {1, 2, 3}"), "f32[3] {1.5, 2.5, 3.5}", NULL);
    cxla_xla_computation_free(comp);

    b = new_builder("cc_bad");
    x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 3), "x");
    cxla_output_operand_alias bad = {.output_index = I64S(0), .output_index_count = 1};
    o.output_operand_aliasing = &bad;
    cxla_custom_call_with_options(b, "t", &x, 1, &s, &o);
    expect_build_error(b, "does not name an element");

    b = new_builder("cc_layouts");
    x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 3), "x");
    cxla_custom_call_options_init(&o);
    o.operand_shapes_with_layout = &SHAPE(CXLA_F32, 3); /* no layout */
    cxla_custom_call_with_options(b, "t", &x, 1, &s, &o);
    expect_build_error(b, "has no layout");
    CHECK_OK(cxla_custom_call_register("cxla_builder_test_add", NULL,
                                       CXLA_CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED));
}

/* ---- annotations --------------------------------------------------------------------- */

static void test_annotations(void) {
    cxla_builder *b = new_builder("notes");
    cxla_op x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 4, 2), "x");
    cxla_op_sharding tiled = {.type = CXLA_SHARDING_TILED,
                              .tile_assignment_dimensions = I64S(2, 1),
                              .tile_rank = 2,
                              .tile_assignment_devices = I64S(1, 0)};
    cxla_builder_set_sharding(b, &tiled);
    cxla_op_metadata md = {
        .op_type = "Neg", .op_name = "jit(f)/neg \"q\"", .source_file = "f.py", .source_line = 7};
    cxla_builder_set_op_metadata(b, &md);
    cxla_frontend_attribute fa[] = {{"zz", "2"}, {"_xla_a", "x,y"}};
    cxla_builder_set_frontend_attributes(b, fa, 2);
    cxla_op n = cxla_neg(x);
    cxla_builder_clear_sharding(b);
    cxla_builder_clear_op_metadata(b);
    cxla_builder_clear_frontend_attributes(b);
    cxla_op_sharding maximal = {.type = CXLA_SHARDING_MAXIMAL, .device = 1};
    cxla_builder_set_sharding(b, &maximal);
    cxla_op sum = cxla_add(n, x);
    cxla_builder_set_sharding(b, NULL);
    cxla_op_sharding leaves[2] = {{.type = CXLA_SHARDING_REPLICATED},
                                  {.type = CXLA_SHARDING_TILED,
                                   .tile_assignment_dimensions = I64S(2, 1, 2),
                                   .tile_rank = 3,
                                   .replicate_on_last_tile_dim = true}};
    cxla_op_sharding tuple = {
        .type = CXLA_SHARDING_TUPLE, .tuple_shardings = leaves, .tuple_count = 2};
    cxla_op t = cxla_tuple(b, (cxla_op[]){sum, n}, 2);
    cxla_op_set_sharding(t, &tuple);
    cxla_op_set_frontend_attribute(t, "b", "1");
    cxla_op_set_frontend_attribute(t, "a", "0");
    cxla_op_set_frontend_attribute(t, "b", "3");
    cxla_xla_computation *comp = finish(b);
    char *text = hlo_text(comp);
    CHECK_MSG(text &&
                  strstr(text, "negate(x.1), sharding={devices=[2,1]1,0}, "
                               "frontend_attributes={_xla_a=\"x,y\",zz=\"2\"}, "
                               "metadata={op_type=\"Neg\" op_name=\"jit(f)/neg \\\"q\\\"\" "
                               "source_file=\"f.py\" source_line=7}") &&
                  strstr(text, "sharding={maximal device=1}") &&
                  strstr(text, "sharding={{replicated}, {devices=[2,1,2]0,1,2,3 "
                               "last_tile_dim_replicate}}, frontend_attributes={a=\"0\",b=\"3\"}"),
              "text:\n%s", text ? text : "");
    /* The add after clearing carries no metadata. */
    const cxla_module *m = cxla_xla_computation_module(comp);
    for (int64_t i = 0; m && i < m->entry->instr_count; i++) {
        const cxla_instr *in = m->entry->instrs[i];
        if (in->opcode == CXLA_OP_ADD) {
            CHECK(cxla_instr_attr(in, CXLA_ATTR_METADATA) == NULL);
            CHECK(cxla_instr_attr(in, CXLA_ATTR_SHARDING) != NULL);
        }
    }
    free(text);
    expect_run(comp, ARGS("f32[4,2] {{1, 2}, {3, 4}, {5, 6}, {7, 8}}"),
               "(f32[4,2] {{0, 0}, {0, 0}, {0, 0}, {0, 0}}, "
               "f32[4,2] {{-1, -2}, {-3, -4}, {-5, -6}, {-7, -8}})",
               NULL);
    cxla_xla_computation_free(comp);
}

static void test_annotation_errors(void) {
    cxla_builder *b = new_builder("bad_sharding");
    cxla_op x = cxla_parameter(b, 0, &SHAPE(CXLA_F32, 4), "x");
    cxla_op_sharding tiled = {
        .type = CXLA_SHARDING_TILED, .tile_assignment_dimensions = I64S(2, 2), .tile_rank = 2};
    cxla_builder_set_sharding(b, &tiled);
    cxla_neg(x);
    expect_build_error(b, "tiles 2 dimensions, but the result is f32[4]");

    b = new_builder("dup_device");
    cxla_op_sharding dup = {.type = CXLA_SHARDING_TILED,
                            .tile_assignment_dimensions = I64S(2),
                            .tile_rank = 1,
                            .tile_assignment_devices = I64S(0, 0)};
    cxla_builder_set_sharding(b, &dup);
    expect_build_error(b, "listed twice");

    b = new_builder("bad_key");
    cxla_frontend_attribute fa[] = {{"a b", "1"}};
    cxla_builder_set_frontend_attributes(b, fa, 1);
    expect_build_error(b, "key 'a b'");

    b = new_builder("bad_line");
    cxla_op_metadata md = {.source_line = -3};
    cxla_builder_set_op_metadata(b, &md);
    expect_build_error(b, "negative");
}

/* ---- printed layouts --------------------------------------------------------------------- */

static void test_layouts_print_parse_run(void) {
    /* A column-major parameter keeps its layout; everything else gets the default, and
     * entry_computation_layout lists them, as XLA prints a built module. */
    cxla_builder *b = new_builder("laid");
    cxla_shape ps = SHAPE(CXLA_F32, 2, 3);
    ps.layout = &col_major;
    cxla_op x = cxla_parameter(b, 0, &ps, "x");
    cxla_op y = cxla_parameter(b, 1, &SHAPE(CXLA_F32, 3), "y");
    cxla_op r = cxla_add_bcast(x, y, I64S(1), 1);
    cxla_tuple(b, (cxla_op[]){r, cxla_transpose(r, I64S(1, 0), 2)}, 2);
    cxla_xla_computation *comp = finish(b);
    char *text = hlo_text(comp);
    CHECK_MSG(text &&
                  strstr(text, "entry_computation_layout={(f32[2,3]{0,1}, f32[3]{0})->"
                               "(f32[2,3]{1,0}, f32[3,2]{1,0})}") &&
                  strstr(text, "x.1 = f32[2,3]{0,1} parameter(0)") &&
                  strstr(text, "f32[2,3]{1,0} broadcast("),
              "text:\n%s", text ? text : "");
    /* Print, parse, run: the same result both ways (run_args compares them). */
    expect_run(comp, ARGS("f32[2,3] {{1, 2, 3}, {4, 5, 6}}", "f32[3] {10, 20, 30}"),
               "(f32[2,3] {{11, 22, 33}, {14, 25, 36}}, f32[3,2] {{11, 14}, {22, 25}, {33, 36}})",
               NULL);
    /* And through the runtime from the text. */
    cxla_client *c = new_client();
    cxla_executable *e = NULL;
    if (text) CHECK_OK(cxla_client_compile_hlo_text(c, text, (size_t)-1, "laid", &e));
    const cxla_shape *p0 = e ? cxla_executable_parameter_shape(e, 0) : NULL;
    CHECK(p0 && p0->layout && p0->layout->minor_to_major[0] == 0);
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
    free(text);
    cxla_xla_computation_free(comp);
}

TEST_MAIN(TEST(test_infeed_outfeed_roundtrip), TEST(test_feeds_with_tokens_in_order),
          TEST(test_feed_errors), TEST(test_send_recv_through_mailbox),
          TEST(test_host_transfers_and_layouts), TEST(test_channel_errors),
          TEST(test_custom_call_with_options), TEST(test_annotations), TEST(test_annotation_errors),
          TEST(test_layouts_print_parse_run))
