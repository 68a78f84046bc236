/* cxla_hlo_graph (src/hlo/graph.c) through its C interface: options, errors, escaping.
 * The drawing itself (clusters, edges, labels, every shared model, validity checked by
 * Graphviz) is tested through `cxla graph` in tests/tools/test_graph.sh. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hlo/hlo.h"

static const char module_text[] = "HloModule m\n"
                                  "add {\n"
                                  "  a = f32[] parameter(0)\n"
                                  "  b = f32[] parameter(1)\n"
                                  "  ROOT c = f32[] add(a, b)\n"
                                  "}\n"
                                  "ENTRY main {\n"
                                  "  x = f32[3] parameter(0)\n"
                                  "  k = f32[3] constant({1, 2, 3})\n"
                                  "  m = f32[3] multiply(x, k)\n"
                                  "  z = f32[] constant(0)\n"
                                  "  ROOT r = f32[] reduce(m, z), dimensions={0}, to_apply=add\n"
                                  "}\n";

static cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "test", &m));
    return m;
}

/* Draws |m| with |options|; the DOT text (malloc'd) or NULL on error (checked). */
static char *draw(const cxla_module *m, const cxla_hlo_graph_options *options, int64_t *nodes) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_status s = cxla_hlo_graph(m, options, &b, nodes);
    if (s) {
        test_fail(__FILE__, __LINE__, "cxla_hlo_graph: %s", cxla_status_message(s));
        cxla_status_free(s);
        cxla_strbuf_free(&b);
        return NULL;
    }
    return cxla_strbuf_take(&b);
}

static void test_default_options(void) {
    cxla_module *m = parse(module_text);
    if (!m) return;
    int64_t nodes = -1;
    char *dot = draw(m, NULL, &nodes);
    if (dot) {
        CHECK(strncmp(dot, "digraph \"m\" {\n", 14) == 0);
        CHECK(strcmp(dot + strlen(dot) - 2, "}\n") == 0);
        /* The scalar add is summarized: five nodes, no cluster. */
        CHECK_EQ_I64(nodes, 5);
        CHECK(strstr(dot, "to_apply=add\\n") != NULL);
        CHECK(strstr(dot, "subgraph") == NULL);
        CHECK(strstr(dot, "constant\\n{1, 2, 3}\\nf32[3]") != NULL);
        CHECK(strstr(dot, "ROOT r\\nreduce") != NULL);
    }
    free(dot);
    /* Appends to what the buffer holds. */
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_puts(&b, "// before\n");
    CHECK_OK(cxla_hlo_graph(m, NULL, &b, NULL));
    CHECK(b.data && strncmp(b.data, "// before\ndigraph", 17) == 0);
    cxla_strbuf_free(&b);
    cxla_module_destroy(m);
}

static void test_options(void) {
    cxla_module *m = parse(module_text);
    if (!m) return;
    /* Constants longer than max_constant_elements show no value. */
    cxla_hlo_graph_options o = {.max_constant_elements = 2};
    char *dot = draw(m, &o, NULL);
    if (dot) {
        CHECK(strstr(dot, "{1, 2, 3}") == NULL);
        CHECK(strstr(dot, "constant\\n0\\nf32[]") != NULL);
    }
    free(dot);
    /* A named computation is drawn alone. */
    o = (cxla_hlo_graph_options){.computation = "add"};
    int64_t nodes = -1;
    dot = draw(m, &o, &nodes);
    if (dot) {
        CHECK_EQ_I64(nodes, 3);
        CHECK(strstr(dot, "label=\"m: add\"") != NULL);
        CHECK(strstr(dot, "multiply") == NULL);
    }
    free(dot);
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    o = (cxla_hlo_graph_options){.computation = "nope"};
    const char *msg = CHECK_ERROR(cxla_hlo_graph(m, &o, &b, NULL));
    CHECK(strstr(msg, "no computation named 'nope'") && strstr(msg, "add, main"));
    o = (cxla_hlo_graph_options){.max_constant_elements = -1};
    CHECK_ERROR_HAS(cxla_hlo_graph(m, &o, &b, NULL), "must not be negative");
    cxla_strbuf_free(&b);
    cxla_module_destroy(m);
}

static void test_no_entry_and_escaping(void) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_module_create("a\"b\\c\n\xc3\xa9", &m));
    if (!m) return;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    CHECK_ERROR_HAS(cxla_hlo_graph(m, NULL, &b, NULL), "no entry computation");
    cxla_computation *c = NULL;
    CHECK_OK(cxla_module_add_computation(m, "main", &c));
    if (c) {
        cxla_shape s = {.type = CXLA_F32};
        cxla_instr *p = NULL;
        CHECK_OK(cxla_computation_add_instr(c, CXLA_OP_PARAMETER, "p", &s, 0, NULL, &p));
        c->root = p;
        cxla_hlo_graph_options o = {.computation = "main"};
        CHECK_OK(cxla_hlo_graph(m, &o, &b, NULL));
        /* Quote and backslash escaped, the newline written \n, non-ASCII bytes as '?'. */
        const char *want = "digraph \"a\\\"b\\\\c\\n??\" {\n";
        CHECK(b.data && strncmp(b.data, want, strlen(want)) == 0);
    }
    cxla_strbuf_free(&b);
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_default_options), TEST(test_options), TEST(test_no_entry_and_escaping))
