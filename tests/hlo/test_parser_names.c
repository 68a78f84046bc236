/* Instruction names the text reuses across computations: the parser keeps every name as
 * written unless another instruction of the module already holds it, the entry
 * computation's names first (its parameters are what users name inputs by), and a printed
 * module parses back with every name it printed. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

static cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "names.hlo", &m);
    CHECK_MSG(!s, "parse: %s", s ? cxla_status_message(s) : "");
    cxla_status_free(s);
    if (m) CHECK_OK(cxla_hlo_verify(m));
    return m;
}

/* The name of the instruction of computation |comp| written at |line| of the text. */
static const char *name_at(const cxla_module *m, const char *comp, int64_t line) {
    const cxla_computation *c = cxla_module_find_computation(m, comp);
    for (int64_t i = 0; c && i < c->instr_count; i++)
        if (c->instrs[i]->line == line) return c->instrs[i]->name;
    return NULL;
}

/* Every instruction name of the module, "comp:name" in order, one per line. */
static char *all_names(const cxla_module *m) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++)
            cxla_strbuf_printf(&b, "%s:%s\n", m->comps[c]->name, m->comps[c]->instrs[i]->name);
    return cxla_strbuf_take(&b);
}

/* Print, parse, print again: the same text and the same names. */
static void check_round_trip(const cxla_module *m) {
    char *t1 = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT), *t2 = NULL;
    CHECK(t1 != NULL);
    cxla_module *again = t1 ? parse(t1) : NULL;
    if (again) t2 = cxla_hlo_print(again, CXLA_HLO_STYLE_SHORT);
    CHECK_EQ_STR(t2, t1);
    if (again) {
        char *a = all_names(m), *b = all_names(again);
        CHECK_EQ_STR(b, a);
        free(a);
        free(b);
    }
    cxla_module_destroy(again);
    free(t1);
    free(t2);
}

/* The entry's parameter x and its x.1 keep their names; f's x (written first) yields. */
static const char clash[] = "HloModule m\n"                             /* 1 */
                            "\n"                                        /* 2 */
                            "f {\n"                                     /* 3 */
                            "  x = f32[2] parameter(0)\n"               /* 4 */
                            "  ROOT n = f32[2] negate(x)\n"             /* 5 */
                            "}\n"                                       /* 6 */
                            "\n"                                        /* 7 */
                            "ENTRY e {\n"                               /* 8 */
                            "  x = f32[2] parameter(0)\n"               /* 9 */
                            "  x.1 = f32[2] abs(x)\n"                   /* 10 */
                            "  ROOT c = f32[2] call(x.1), to_apply=f\n" /* 11 */
                            "}\n";

static void test_entry_names_kept(void) {
    cxla_module *m = parse(clash);
    if (!m) return;
    CHECK_EQ_STR(m->entry->params[0]->name, "x");
    CHECK_EQ_STR(name_at(m, "e", 10), "x.1");
    CHECK_EQ_STR(name_at(m, "e", 11), "c");
    /* f's parameter takes the first free x.N, and its user still reads it. */
    CHECK_EQ_STR(name_at(m, "f", 4), "x.2");
    const cxla_computation *f = cxla_module_find_computation(m, "f");
    CHECK(f && f->root->operands[0] == f->params[0]);
    CHECK(f && cxla_computation_find_instr(f, "x") == f->params[0]);
    check_round_trip(m);
    /* It runs: negate(abs(x)). */
    cxla_literal *in = NULL, *out = NULL, *want = NULL;
    CHECK_OK(cxla_literal_parse("f32[2] {1, -2}", (size_t)-1, NULL, &in));
    CHECK_OK(cxla_literal_parse("f32[2] {-1, -2}", (size_t)-1, NULL, &want));
    exec_run_options options = {0};
    if (in) CHECK_OK(interp_run_module(m, &options, (const cxla_literal *const *)&in, 1, &out));
    CHECK(out && want && cxla_literal_equal(out, want));
    cxla_literal_free(in);
    cxla_literal_free(out);
    cxla_literal_free(want);
    cxla_module_destroy(m);
}

/* Names that do not clash stay as written, suffixes included. */
static void test_no_clash_no_rename(void) {
    cxla_module *m = parse("HloModule m\n\nf {\n  p.7 = f32[] parameter(0)\n"
                           "  ROOT add.3 = f32[] add(p.7, p.7)\n}\n\n"
                           "ENTRY e {\n  p = f32[] parameter(0)\n  p.1 = f32[] negate(p)\n"
                           "  ROOT add = f32[] call(p.1), to_apply=f\n}\n");
    if (!m) return;
    char *names = all_names(m);
    CHECK_EQ_STR(names, "f:p.7\nf:add.3\ne:p\ne:p.1\ne:add\n");
    free(names);
    check_round_trip(m);
    cxla_module_destroy(m);
}

/* Several computations reuse one name (as hand-written modules do with "p"), the entry
 * last, with a written name of the form a renaming would make: nothing written that is
 * free is taken, and every later duplicate gets its own number. */
static void test_many_duplicates(void) {
    const char *text = "HloModule m\n\n"
                       "a {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}\n\n"
                       "b {\n  p = f32[] parameter(0)\n  ROOT r = f32[] abs(p)\n}\n\n"
                       "c {\n  p.2 = f32[] parameter(0)\n  ROOT r.1 = f32[] exponential(p.2)\n}\n\n"
                       "ENTRY e {\n  p = f32[] parameter(0)\n"
                       "  x = f32[] call(p), to_apply=a\n  y = f32[] call(x), to_apply=b\n"
                       "  ROOT r = f32[] call(y), to_apply=c\n}\n";
    cxla_module *m = parse(text);
    if (!m) return;
    CHECK_EQ_STR(m->entry->params[0]->name, "p");
    CHECK_EQ_STR(m->entry->root->name, "r");
    const cxla_computation *c = cxla_module_find_computation(m, "c");
    CHECK(c && !strcmp(c->params[0]->name, "p.2") && !strcmp(c->root->name, "r.1"));
    const cxla_computation *a = cxla_module_find_computation(m, "a");
    const cxla_computation *b = cxla_module_find_computation(m, "b");
    /* a's and b's p and r: the numbers not written anywhere, in text order. */
    CHECK(a && !strcmp(a->params[0]->name, "p.1") && !strcmp(a->root->name, "r.2"));
    CHECK(b && !strcmp(b->params[0]->name, "p.3") && !strcmp(b->root->name, "r.3"));
    check_round_trip(m);
    cxla_module_destroy(m);
}

/* A name made up for a nested instruction ("negate.1", the first free when f is read)
 * yields to the same name written later in another computation. */
static void test_nested_yields(void) {
    const char *text = "HloModule m\n\n"
                       "f {\n  p = f32[] parameter(0)\n"
                       "  ROOT r = f32[] add(p, f32[] negate(p))\n}\n\n"
                       "ENTRY e {\n  x = f32[] parameter(0)\n  negate.1 = f32[] negate(x)\n"
                       "  ROOT c = f32[] call(negate.1), to_apply=f\n}\n";
    cxla_module *m = parse(text);
    if (!m) return;
    CHECK_EQ_STR(name_at(m, "e", 10), "negate.1");
    const cxla_computation *f = cxla_module_find_computation(m, "f");
    const cxla_instr *nested = f ? f->root->operands[1] : NULL;
    CHECK(nested && nested->opcode == CXLA_OP_NEGATE && !strcmp(nested->name, "negate.2"));
    check_round_trip(m);
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_entry_names_kept), TEST(test_no_clash_no_rename), TEST(test_many_duplicates),
          TEST(test_nested_yields))
