/* cxla_module_clone (src/hlo/clone.c): a clone prints exactly as its original, in both
 * text styles, after the original is gone (it owns all it points to), verifies when the
 * original does, and is independent of it. Run over every module of tests/hlo/cases and
 * of the shared models, and over hand-written modules for what those may lack (control
 * predecessors, header attributes, a changed constant). */
#include <dirent.h>
#include <stdlib.h>

#include "harness.h"
#include "hlo/hlo.h"

static int64_t cloned; /* modules compared */

/* Parses |text|; when it parses, clones it and compares the printed forms. */
static void check_clone_of_text(const char *text, size_t len, const char *where) {
    cxla_module *m = NULL, *c = NULL;
    cxla_status s = cxla_hlo_parse(text, len, where, &m);
    if (s) { /* a case the parser must reject */
        cxla_status_free(s);
        return;
    }
    bool verified = true;
    s = cxla_verify_module(m);
    if (s) {
        verified = false;
        cxla_status_free(s);
    }
    s = cxla_module_clone(m, &c);
    if (s && !verified) { /* an unverified module may use an operand before defining it */
        cxla_status_free(s);
        cxla_module_destroy(m);
        return;
    }
    CHECK_OK(s);
    char *a_long = cxla_hlo_print(m, CXLA_HLO_STYLE_LONG);
    char *a_short = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT);
    cxla_module_destroy(m);
    if (c) {
        char *b_long = cxla_hlo_print(c, CXLA_HLO_STYLE_LONG);
        char *b_short = cxla_hlo_print(c, CXLA_HLO_STYLE_SHORT);
        CHECK_MSG(a_long && b_long && strcmp(a_long, b_long) == 0,
                  "%s: the clone prints differently:\n%s\n---- clone:\n%s", where, a_long, b_long);
        CHECK_MSG(a_short && b_short && strcmp(a_short, b_short) == 0, "%s: short form differs",
                  where);
        if (verified) CHECK_OK(cxla_verify_module(c));
        free(b_long);
        free(b_short);
        cloned++;
    }
    free(a_long);
    free(a_short);
    cxla_module_destroy(c);
}

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Every .hlo file of |dir|, split into its modules at "// -----" lines. */
static int64_t clone_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int64_t files = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".hlo") != 0) continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        size_t len = 0;
        char *text = read_all(path, &len);
        CHECK_MSG(text != NULL, "cannot read %s", path);
        if (!text) continue;
        files++;
        char *p = text;
        for (;;) {
            char *sep = strstr(p, "\n// -----");
            size_t part = sep ? (size_t)(sep - p) + 1 : strlen(p);
            check_clone_of_text(p, part, path);
            if (!sep) break;
            p = sep + 1;
        }
        free(text);
    }
    closedir(d);
    return files;
}

static void test_clone_cases(void) {
    cloned = 0;
    CHECK(clone_dir(CXLA_SOURCE_DIR "/tests/hlo/cases") > 20);
    CHECK_MSG(cloned > 100, "only %lld modules cloned", (long long)cloned);
}

static void test_clone_models(void) {
    const char *shared = test_shared_dir();
    if (!shared) return; /* the cases above still ran */
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/models", shared);
    cloned = 0;
    int64_t files = clone_dir(dir);
    CHECK_EQ_I64(cloned, files);
}

static void test_clone_details(void) {
    const char *text =
        "HloModule details, is_scheduled=true, "
        "entry_computation_layout={(f32[2,3]{0,1}, s32[])->f32[2,3]{0,1}}, replica_count=2\n"
        "\n"
        "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(x, y)\n}\n\n"
        "ENTRY main {\n"
        "  p = f32[2,3]{0,1} parameter(0)\n"
        "  i = s32[] parameter(1)\n"
        "  c = f32[] constant(1.5)\n"
        "  b = f32[2,3]{0,1} broadcast(c), dimensions={}, metadata={op_name=\"b\"}\n"
        "  a = f32[2,3]{0,1} add(p, b), control-predecessors={b}\n"
        "  r = f32[2] reduce(a, c), dimensions={1}, to_apply=add\n"
        "  ROOT m = f32[2,3]{0,1} multiply(a, a), frontend_attributes={k=\"v\"}\n"
        "}\n";
    cxla_module *m = NULL, *c = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "t.hlo", &m));
    CHECK_OK(cxla_verify_module(m));
    CHECK_OK(cxla_module_clone(m, &c));
    if (!m || !c) return;
    char *a = cxla_hlo_print(m, CXLA_HLO_STYLE_LONG);
    /* The clone's constant is its own: changing it leaves the original as it was. */
    cxla_instr *k = cxla_computation_find_instr(c->entry, "c");
    CHECK(k && k->literal && k->literal != cxla_computation_find_instr(m->entry, "c")->literal);
    if (k && k->literal) *(float *)cxla_literal_data(k->literal) = 2.5f;
    char *a2 = cxla_hlo_print(m, CXLA_HLO_STYLE_LONG);
    CHECK_EQ_STR(a, a2);
    char *b = cxla_hlo_print(c, CXLA_HLO_STYLE_LONG);
    CHECK(b && strstr(b, "constant(2.5)") && !strstr(b, "constant(1.5)"));
    /* Its references point into itself. */
    cxla_instr *add = cxla_computation_find_instr(c->entry, "a");
    const cxla_attr *cp = add ? cxla_instr_attr(add, CXLA_ATTR_CONTROL_PREDECESSORS) : NULL;
    CHECK(cp && cp->v.instrs.count == 1 && cp->v.instrs.items[0]->parent == c->entry);
    cxla_instr *r = cxla_computation_find_instr(c->entry, "r");
    CHECK(r && cxla_instr_called(r, CXLA_ATTR_TO_APPLY) == cxla_module_find_computation(c, "add"));
    CHECK(c->entry->params[1] == cxla_computation_find_instr(c->entry, "i"));
    CHECK_EQ_I64(c->replica_count, 2);
    CHECK(c->arena != m->arena);
    free(a);
    free(a2);
    free(b);
    cxla_module_destroy(m);
    cxla_module_destroy(c);
    CHECK_ERROR(cxla_module_clone(NULL, &c));
}

TEST_MAIN(TEST(test_clone_cases), TEST(test_clone_models), TEST(test_clone_details))
