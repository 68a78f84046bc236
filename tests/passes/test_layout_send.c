/* The layout pass and send: a send's data takes its normalized operand's layout, so the
 * pipeline's output passes the layout-sensitive verifier (XLA's HandleSend compares them),
 * while the host still receives the data in the layout the send declared (kept as the
 * send's operand_layout_constraints), on the cpu backend as on the interpreter. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxla/runtime.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "passes/passes.h"

/* The send's data is column-major: x is a {0,1} copy of the row-major parameter. */
static const char text[] =
    "HloModule m\n\n"
    "ENTRY e {\n"
    "  p = f32[2,3]{1,0} parameter(0)\n"
    "  x = f32[2,3]{0,1} copy(p)\n"
    "  t = token[] after-all()\n"
    "  s = (f32[2,3]{0,1}, u32[], token[]) send(x, t), channel_id=1, is_host_transfer=true\n"
    "  d = token[] send-done(s), channel_id=1, is_host_transfer=true\n"
    "  ROOT r = f32[2,3]{1,0} negate(p)\n"
    "}\n";

static cxla_instr *find_op(const cxla_module *m, cxla_opcode op) {
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++)
            if (m->comps[c]->instrs[i]->opcode == op) return m->comps[c]->instrs[i];
    return NULL;
}

static void test_pipeline_output_layout_sensitive(void) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "send.hlo", &m));
    if (!m) return;
    cxla_hlo_verify_options strict = {.layout_sensitive = true, .allow_mixed_precision = true};
    CHECK_OK(cxla_hlo_verify_with_options(m, &strict));
    cxla_pipeline_options o = {.verify = true};
    CHECK_OK(cxla_passes_cpu(m, &o));
    CHECK_OK(cxla_hlo_verify_with_options(m, &strict));
    const cxla_instr *s = find_op(m, CXLA_OP_SEND);
    CHECK(s != NULL);
    if (s) {
        /* The data in its operand's (default) layout; the host's in the constraint. */
        const cxla_shape *data = &s->shape.elements[0];
        CHECK(cxla_layout_is_default(data));
        const cxla_attr *a = cxla_instr_attr(s, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS);
        CHECK(a && a->kind == CXLA_ATTR_KIND_SHAPES && a->v.shapes.count == 2);
        if (a && a->v.shapes.count == 2) {
            const cxla_shape *h = &a->v.shapes.items[0];
            CHECK(h->layout && h->layout->minor_to_major[0] == 0 &&
                  h->layout->minor_to_major[1] == 1);
        }
    }
    /* The optimized module prints and parses back, the constraint with it. */
    char *printed = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT);
    cxla_module *again = NULL;
    CHECK(printed != NULL);
    if (printed) CHECK_OK(cxla_hlo_parse(printed, strlen(printed), "printed.hlo", &again));
    if (again) CHECK_OK(cxla_hlo_verify_with_options(again, &strict));
    CHECK_MSG(printed && strstr(printed, "operand_layout_constraints={f32[2,3]{0,1}, token[]}"),
              "%s", printed ? printed : "");
    cxla_module_destroy(again);
    free(printed);
    cxla_module_destroy(m);
}

typedef struct host_side {
    int sends;
    char layout[32];
    cxla_literal *sent;
} host_side;

static cxla_status on_send(void *user, int64_t channel, bool host, const cxla_literal *data) {
    (void)channel, (void)host;
    host_side *h = user;
    h->sends++;
    const cxla_shape *s = cxla_literal_shape(data);
    snprintf(h->layout, sizeof h->layout, "%s",
             !s->layout                                                               ? "none"
             : s->layout->minor_to_major[0] == 0 && s->layout->minor_to_major[1] == 1 ? "0,1"
                                                                                      : "1,0");
    cxla_literal_free(h->sent);
    h->sent = NULL;
    return cxla_literal_clone(data, &h->sent);
}

/* The host sees the same values in the same layout (and the same bytes) from both
 * backends. */
static void test_host_sees_declared_layout(void) {
    const char *backends[] = {"interpreter", "cpu"};
    cxla_literal *arg = NULL, *sent[2] = {NULL, NULL};
    CHECK_OK(cxla_literal_parse("f32[2,3] {{1, 2, 3}, {4, 5, 6}}", (size_t)-1, NULL, &arg));
    for (int k = 0; k < 2 && arg; k++) {
        cxla_client_options co;
        cxla_client_options_init(&co);
        co.backend = backends[k];
        cxla_client *c = NULL;
        CHECK_OK(cxla_client_create(&co, &c));
        if (!c) continue;
        host_side h = {0};
        CHECK_OK(cxla_client_set_channel_handlers(c, CXLA_CHANNEL_ANY, on_send, NULL, &h));
        cxla_executable *e = NULL;
        CHECK_OK(cxla_client_compile_hlo_text(c, text, strlen(text), "send.hlo", &e));
        cxla_literal *res = NULL;
        if (e) CHECK_OK(cxla_executable_run(e, (const cxla_literal *const *)&arg, 1, &res));
        CHECK_EQ_I64(h.sends, 1);
        CHECK_MSG(!strcmp(h.layout, "0,1"), "%s: the host saw layout %s", backends[k], h.layout);
        sent[k] = h.sent;
        cxla_literal_free(res);
        cxla_executable_destroy(e);
        cxla_client_destroy(c);
    }
    CHECK(sent[0] && sent[1] && cxla_literal_equal(sent[0], sent[1]));
    if (sent[0] && sent[1]) {
        size_t n0 = cxla_literal_byte_size(sent[0]), n1 = cxla_literal_byte_size(sent[1]);
        const void *b0 = cxla_literal_data_const(sent[0]), *b1 = cxla_literal_data_const(sent[1]);
        CHECK(n0 == n1 && b0 && b1 && memcmp(b0, b1, n0) == 0);
    }
    cxla_literal_free(sent[0]);
    cxla_literal_free(sent[1]);
    cxla_literal_free(arg);
}

TEST_MAIN(TEST(test_pipeline_output_layout_sensitive), TEST(test_host_sees_declared_layout))
