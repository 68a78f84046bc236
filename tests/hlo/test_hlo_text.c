/* Unit tests of the HLO text parser and printer: each attribute kind (parse -> print and the
 * decoded values), each style, headers, comments, forward references, stack frames, async
 * sugar, the error classes with their positions, and unknown-attribute warnings. */
#include <stdlib.h>

#include "harness.h"
#include "hlo/hlo.h"

/* Parses |text| (NUL-terminated) and returns the module, failing the test on an error. */
static cxla_module *parse_ok(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "t.hlo", &m);
    if (s) {
        test_fail(__FILE__, __LINE__, "parse failed: %s\n%s", cxla_status_message(s), text);
        cxla_status_free(s);
        return NULL;
    }
    return m;
}

/* Parses and prints in |style|; checks the text equals |want| and prints stably. */
static void expect_print(const char *text, cxla_hlo_style style, const char *want) {
    cxla_module *m = parse_ok(text);
    if (!m) return;
    char *got = cxla_hlo_print(m, style);
    CHECK_EQ_STR(got, want);
    cxla_module *m2 = NULL;
    cxla_status s = cxla_hlo_parse(got, strlen(got), "again.hlo", &m2);
    CHECK_OK(s);
    if (m2) {
        char *again = cxla_hlo_print(m2, style);
        CHECK_EQ_STR(again, got);
        free(again);
        cxla_module_destroy(m2);
    }
    free(got);
    cxla_module_destroy(m);
}

/* Parses and prints in |style|: the print contains |want| and prints stably. */
static void expect_contains(const char *text, cxla_hlo_style style, const char *want) {
    cxla_module *m = parse_ok(text);
    if (!m) return;
    char *got = cxla_hlo_print(m, style);
    CHECK_MSG(got && strstr(got, want), "'%s' lacks '%s'", got ? got : "(null)", want);
    cxla_module *m2 = NULL;
    CHECK_OK(cxla_hlo_parse(got, strlen(got), "again.hlo", &m2));
    if (m2) {
        char *again = cxla_hlo_print(m2, style);
        CHECK_EQ_STR(again, got);
        free(again);
        cxla_module_destroy(m2);
    }
    free(got);
    cxla_module_destroy(m);
}

/* A text in the given style prints back to itself. */
static void expect_same(const char *text, cxla_hlo_style style) {
    expect_print(text, style, text);
}

/* Parses and returns the error message (static copy); fails the test if it parses. */
static const char *parse_error(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "bad.hlo", &m);
    if (!s) {
        test_fail(__FILE__, __LINE__, "expected a parse error for:\n%s", text);
        cxla_module_destroy(m);
        return "";
    }
    return test_expect_error(s, __FILE__, __LINE__);
}

#define CHECK_HAS(msg, sub) CHECK_MSG(strstr((msg), (sub)) != NULL, "'%s' lacks '%s'", (msg), (sub))

/* Wraps one instruction line in a module with parameters p0 (f32[4]) ... */
static char *entry_with(const char *params, const char *body) {
    static char buf[8192];
    snprintf(buf, sizeof(buf), "HloModule m\n\nENTRY e {\n%s%s\n}\n", params, body);
    return buf;
}

static const cxla_instr *root_of(const cxla_module *m) {
    return m && m->entry ? m->entry->root : NULL;
}

/* ---- styles ------------------------------------------------------------------------ */

static const char *const k_short =
    "HloModule add_module, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}\n"
    "\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "\n"
    "ENTRY main {\n"
    "  x = f32[4]{0} parameter(0)\n"
    "  y = f32[4]{0} parameter(1)\n"
    "  m = f32[4]{0} multiply(x, y)\n"
    "  ROOT r = f32[4]{0} map(m, y), dimensions={0}, to_apply=add\n"
    "}\n";

static const char *const k_long =
    "HloModule add_module, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}\n"
    "\n"
    "%add (a: f32[], b: f32[]) -> f32[] {\n"
    "  %a = f32[] parameter(0)\n"
    "  %b = f32[] parameter(1)\n"
    "  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n"
    "}\n"
    "\n"
    "ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {\n"
    "  %x = f32[4]{0} parameter(0)\n"
    "  %y = f32[4]{0} parameter(1)\n"
    "  %m = f32[4]{0} multiply(f32[4]{0} %x, f32[4]{0} %y)\n"
    "  ROOT %r = f32[4]{0} map(f32[4]{0} %m, f32[4]{0} %y), dimensions={0}, to_apply=%add\n"
    "}\n";

static const char *const k_long_no_shapes =
    "HloModule add_module, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}\n"
    "\n"
    "%add (a: f32[], b: f32[]) -> f32[] {\n"
    "  %a = f32[] parameter(0)\n"
    "  %b = f32[] parameter(1)\n"
    "  ROOT %s = f32[] add(%a, %b)\n"
    "}\n"
    "\n"
    "ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {\n"
    "  %x = f32[4]{0} parameter(0)\n"
    "  %y = f32[4]{0} parameter(1)\n"
    "  %m = f32[4]{0} multiply(%x, %y)\n"
    "  ROOT %r = f32[4]{0} map(%m, %y), dimensions={0}, to_apply=%add\n"
    "}\n";

static void test_styles(void) {
    expect_same(k_short, CXLA_HLO_STYLE_SHORT);
    expect_same(k_long, CXLA_HLO_STYLE_LONG);
    expect_same(k_long_no_shapes, CXLA_HLO_STYLE_LONG_NO_OPERAND_SHAPES);
    expect_print(k_short, CXLA_HLO_STYLE_LONG, k_long);
    expect_print(k_long, CXLA_HLO_STYLE_SHORT, k_short);
    expect_print(k_long_no_shapes, CXLA_HLO_STYLE_LONG, k_long);
}

static void test_minimal_text(void) {
    /* No header, no ENTRY, no ROOT, no layouts, comments everywhere, one line. */
    const char *text = "/* c */ add { a = f32[] parameter(0) // x\n b = f32[] parameter(1) "
                       "s = f32[] add(a, b) } main { x = f32[2,3] parameter(0) ROOT r = f32[2] "
                       "reduce(x, c), dimensions={1}, to_apply=add c = f32[] constant(0) }";
    cxla_module *m = parse_ok(text);
    if (!m) return;
    CHECK_EQ_STR(m->name, "module");
    CHECK_EQ_STR(m->entry->name, "main");
    CHECK(m->entry->is_entry);
    CHECK_EQ_STR(m->comps[0]->root->name, "s");
    CHECK(!m->has_entry_layout);
    CHECK_EQ_I64(m->entry_param_count, 1);
    CHECK_EQ_I64(m->entry_param_shapes[0].rank, 2);
    CHECK(m->entry_param_shapes[0].layout != NULL); /* default layouts filled in */
    char *out = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT);
    CHECK_EQ_STR(out, "HloModule module, entry_computation_layout={(f32[2,3]{1,0})->f32[2]{0}}\n"
                      "\n"
                      "add {\n"
                      "  a = f32[] parameter(0)\n"
                      "  b = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(a, b)\n"
                      "}\n"
                      "\n"
                      "ENTRY main {\n"
                      "  x = f32[2,3]{1,0} parameter(0)\n"
                      "  ROOT r = f32[2]{0} reduce(x, c), dimensions={1}, to_apply=add\n"
                      "  c = f32[] constant(0)\n"
                      "}\n");
    free(out);
    cxla_module_destroy(m);
}

static void test_entry_called_elsewhere_prints_last(void) {
    /* Found by the fuzzer: with no header and no ENTRY, the last computation is the
     * entry even when another computation calls it; printing must put the entry last so
     * that print(parse(print(m))) == print(m). */
    const char *text = "w { ROOT r = s32[] while(i), condition=cond, body=body\n"
                       "  i = s32[] constant(5) }\n"
                       "body { p = s32[] parameter(0) one = s32[] constant(1)\n"
                       "  ROOT n = s32[] add(p, one) }\n"
                       "cond { p = s32[] parameter(0) ten = s32[] constant(10)\n"
                       "  ROOT lt = pred[] compare(p, ten), direction=LT }\n";
    cxla_module *m = parse_ok(text);
    if (!m) return;
    CHECK_EQ_STR(m->entry->name, "cond");
    char *once = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT);
    cxla_module_destroy(m);
    CHECK(once && strstr(once, "ENTRY cond") != NULL);
    CHECK(once && strstr(once, "ENTRY cond") > strstr(once, "\nw {"));
    cxla_module *m2 = once ? parse_ok(once) : NULL;
    if (m2) {
        char *twice = cxla_hlo_print(m2, CXLA_HLO_STYLE_SHORT);
        CHECK_EQ_STR(twice, once);
        free(twice);
        cxla_module_destroy(m2);
    }
    free(once);
}

static void test_duplicate_names_across_computations(void) {
    /* XLA's names are unique in a module: a name reused by another computation gets a
     * suffix where it is not the entry's (the entry keeps its names, docs/hlo.md), and
     * that computation still refers to it by the name it wrote. */
    const char *text =
        "f {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\n"
        "ENTRY e {\n  ROOT n = f32[] call(a), to_apply=f\n  a = f32[] parameter(0)\n}\n";
    cxla_module *m = parse_ok(text);
    if (!m) return;
    const cxla_instr *r = root_of(m);
    CHECK_EQ_STR(r->name, "n");
    CHECK_EQ_STR(r->operands[0]->name, "a");
    CHECK_EQ_STR(m->comps[0]->instrs[0]->name, "a.1");
    CHECK_EQ_STR(m->comps[0]->root->name, "n.1");
    CHECK(m->comps[0]->root->operands[0] == m->comps[0]->instrs[0]);
    CHECK_OK(cxla_verify_module(m));
    cxla_module_destroy(m);
}

/* Many computations that reuse a name get p, p.1, p.2, ... in order, skipping a name
 * written out in the text (p.2 here), as with a scan for the smallest free suffix (the
 * parser remembers where the last scan ended: constant time per name, issue 17). */
static void test_reused_names_numbered(void) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_puts(&b, "HloModule m\n");
    for (int i = 0; i < 6; i++) {
        cxla_strbuf_printf(&b, "c%d {\n  p = f32[] parameter(0)\n", i);
        if (i == 1) cxla_strbuf_puts(&b, "  p.2 = f32[] negate(p)\n");
        cxla_strbuf_printf(&b, "  ROOT n%d = f32[] negate(p)\n}\n", i);
    }
    cxla_strbuf_puts(&b, "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT r = f32[] call(x), "
                         "to_apply=c0\n}\n");
    cxla_module *m = parse_ok(b.data);
    cxla_strbuf_free(&b);
    if (!m) return;
    const char *want[6] = {"p", "p.1", "p.3", "p.4", "p.5", "p.6"};
    for (int i = 0; i < 6; i++) CHECK_EQ_STR(m->comps[i]->instrs[0]->name, want[i]);
    CHECK_EQ_STR(m->comps[1]->instrs[1]->name, "p.2");
    cxla_module_destroy(m);
}

static void test_forward_references(void) {
    /* The entry comes first and calls computations defined later: printed callees first. */
    const char *text = "HloModule f\n"
                       "ENTRY e {\n"
                       "  ROOT w = s32[] while(i), condition=cond, body=body\n"
                       "  i = s32[] constant(0)\n"
                       "}\n"
                       "body {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n"
                       "  ROOT n = s32[] add(p, one)\n}\n"
                       "cond {\n  p = s32[] parameter(0)\n  ten = s32[] constant(10)\n"
                       "  ROOT lt = pred[] compare(p, ten), direction=LT\n}\n";
    cxla_module *m = parse_ok(text);
    if (!m) return;
    CHECK_EQ_I64(m->comp_count, 3);
    /* Text order, except that callees come before their callers. */
    CHECK_EQ_STR(m->comps[0]->name, "body");
    CHECK_EQ_STR(m->comps[1]->name, "cond");
    CHECK_EQ_STR(m->comps[2]->name, "e");
    const cxla_instr *w = root_of(m);
    CHECK(w && cxla_instr_called(w, CXLA_ATTR_BODY) == m->comps[0]);
    CHECK(w && w->operands[0] && strcmp(w->operands[0]->name, "i") == 0);
    CHECK(w && w->operands[0]->user_count == 1);
    cxla_module_destroy(m);
}

/* ---- attribute kinds ------------------------------------------------------------------ */

static void test_attr_scalars(void) {
    const char *text = entry_with(
        "  a = f32[2,4]{1,0} parameter(0)\n  o = f32[4]{0} parameter(1)\n",
        "  ROOT bn = (f32[2,4]{1,0}, f32[4]{0}, f32[4]{0}) batch-norm-training(a, o, o), "
        "epsilon=1e-05, feature_index=1");
    cxla_module *m = parse_ok(text);
    const cxla_instr *r = root_of(m);
    if (r) {
        const cxla_attr *eps = cxla_instr_attr(r, CXLA_ATTR_EPSILON);
        CHECK(eps && eps->kind == CXLA_ATTR_KIND_FLOAT && eps->v.f == 1e-05);
        int64_t fi = 0;
        CHECK(cxla_instr_int(r, CXLA_ATTR_FEATURE_INDEX, &fi) && fi == 1);
    }
    cxla_module_destroy(m);
    expect_contains(text, CXLA_HLO_STYLE_SHORT, "epsilon=1e-05, feature_index=1\n");
    /* Floats print with six significant digits as XLA does. */
    expect_print(
        entry_with("  a = f32[2,4]{1,0} parameter(0)\n  o = f32[4]{0} parameter(1)\n",
                   "  ROOT bn = (f32[2,4]{1,0}, f32[4]{0}, f32[4]{0}) "
                   "batch-norm-training(a, o, o), epsilon=0.0010000, feature_index=1"),
        CXLA_HLO_STYLE_SHORT,
        "HloModule m, entry_computation_layout={(f32[2,4]{1,0}, f32[4]{0})->(f32[2,4]{1,0}, "
        "f32[4]{0}, f32[4]{0})}\n\nENTRY e {\n  a = f32[2,4]{1,0} parameter(0)\n"
        "  o = f32[4]{0} parameter(1)\n  ROOT bn = (f32[2,4]{1,0}, f32[4]{0}, f32[4]{0}) "
        "batch-norm-training(a, o, o), epsilon=0.001, feature_index=1\n}\n");
    /* Strings are unescaped when read and C-escaped when printed. */
    m = parse_ok(
        entry_with("", "  ROOT c = f32[] custom-call(), custom_call_target=\"a\\\"b\\n\\101\", "
                       "custom_call_has_side_effect=true"));
    r = root_of(m);
    if (r) {
        const cxla_attr *t = cxla_instr_attr(r, CXLA_ATTR_CUSTOM_CALL_TARGET);
        CHECK(t && strcmp(t->v.s, "a\"b\nA") == 0);
        CHECK(cxla_instr_bool(r, CXLA_ATTR_CUSTOM_CALL_HAS_SIDE_EFFECT));
        cxla_strbuf b;
        cxla_strbuf_init(&b);
        cxla_hlo_print_instr(&b, r, CXLA_HLO_STYLE_SHORT);
        CHECK_EQ_STR(b.data, "c = f32[] custom-call(), custom_call_target=\"a\\\"b\\nA\", "
                             "custom_call_has_side_effect=true");
        cxla_strbuf_free(&b);
    }
    cxla_module_destroy(m);
}

static void test_attr_words(void) {
    cxla_module *m =
        parse_ok(entry_with("  a = f32[] parameter(0)\n",
                            "  ROOT c = pred[] compare(a, a), direction=GE, type=TOTALORDER"));
    const cxla_instr *r = root_of(m);
    CHECK(r && strcmp(cxla_instr_word(r, CXLA_ATTR_DIRECTION), "GE") == 0);
    CHECK(r && strcmp(cxla_instr_word(r, CXLA_ATTR_COMPARISON_TYPE), "TOTALORDER") == 0);
    cxla_module_destroy(m);
    const char *msg = parse_error(entry_with("  a = f32[] parameter(0)\n",
                                             "  ROOT c = pred[] compare(a, a), direction=LESS"));
    CHECK_HAS(msg, "unknown value 'LESS' for direction");
    CHECK_HAS(msg, "EQ, NE, GE, GT, LE, LT");
    msg = parse_error(entry_with("  a = f32[4]{0} parameter(0)\n",
                                 "  ROOT f = c64[4]{0} fft(a), fft_type=DFT, fft_length={4}"));
    CHECK_HAS(msg, "fft_type");
    msg = parse_error(entry_with("  s = u64[2]{0} parameter(0)\n",
                                 "  ROOT r = (u64[2]{0}, u32[4]{0}) rng-bit-generator(s), "
                                 "algorithm=rng_fancy"));
    CHECK_HAS(msg, "rng_fancy");
    expect_contains(entry_with("  s = u64[2]{0} parameter(0)\n",
                               "  ROOT r = (u64[2]{0}, u32[4]{0}) rng-bit-generator(s), "
                               "algorithm=rng_philox"),
                    CXLA_HLO_STYLE_SHORT, "rng-bit-generator(s), algorithm=rng_philox\n");
}

static void test_attr_lists(void) {
    const char *gather =
        "HloModule g, entry_computation_layout={(f32[5,6]{1,0}, s32[3,1]{1,0})->f32[3,6]{1,0}}\n\n"
        "ENTRY e {\n  x = f32[5,6]{1,0} parameter(0)\n  i = s32[3,1]{1,0} parameter(1)\n"
        "  ROOT g = f32[3,6]{1,0} gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, "
        "start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}, indices_are_sorted=true\n}\n";
    expect_same(gather, CXLA_HLO_STYLE_SHORT);
    cxla_module *m = parse_ok(gather);
    const cxla_instr *r = root_of(m);
    if (r) {
        int64_t n;
        const int64_t *v = cxla_instr_ints(r, CXLA_ATTR_SLICE_SIZES, &n);
        CHECK(n == 2 && v[0] == 1 && v[1] == 6);
        v = cxla_instr_ints(r, CXLA_ATTR_COLLAPSED_SLICE_DIMS, &n);
        CHECK(n == 1 && v[0] == 0);
    }
    cxla_module_destroy(m);
    /* Lists of lists, and slice_sizes in its collective-permute form. */
    const char *cp =
        "HloModule c, entry_computation_layout={(f32[8]{0})->f32[8]{0}}, replica_count=4\n\n"
        "ENTRY e {\n  x = f32[8]{0} parameter(0)\n  ROOT p = f32[8]{0} collective-permute(x), "
        "channel_id=2, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n}\n";
    expect_same(cp, CXLA_HLO_STYLE_SHORT);
    m = parse_ok(cp);
    r = root_of(m);
    if (r) {
        const cxla_attr *a = cxla_instr_attr(r, CXLA_ATTR_SOURCE_TARGET_PAIRS);
        CHECK(a && a->v.int_lists.count == 4 && a->v.int_lists.lists[3][0] == 3 &&
              a->v.int_lists.lists[3][1] == 0);
        CHECK_EQ_I64(m->replica_count, 4);
    }
    cxla_module_destroy(m);
    /* Empty lists. */
    expect_contains(entry_with("  a = f32[] parameter(0)\n",
                               "  ROOT b = f32[2]{0} broadcast(a), dimensions={}"),
                    CXLA_HLO_STYLE_SHORT, "broadcast(a), dimensions={}\n");
}

static void test_attr_window_padding_slice(void) {
    const char *text =
        "HloModule w\n\nmax {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT m = f32[] maximum(a, b)\n}\n\nENTRY e {\n  x = f32[1,8,8,3]{3,2,1,0} parameter(0)\n"
        "  z = f32[] constant(0)\n"
        "  rw = f32[1,4,4,3]{3,2,1,0} reduce-window(x, z), window={size=1x3x3x1 "
        "stride=1x2x2x1 pad=0_0x0_1x0_1x0_0 lhs_dilate=1x1x1x1 rhs_reversal=0x0x1x0}, "
        "to_apply=max\n"
        "  p = f32[1,11,8,3]{3,2,1,0} pad(x, z), padding=0_0x1_2_0x-1_1x0_0\n"
        "  pi = f32[1,15,8,3]{3,2,1,0} pad(x, z), padding=0_0x0_0_1x0_0x0_0\n"
        "  ROOT s = f32[1,4,4,1]{3,2,1,0} slice(x), slice={[0:1], [0:8:2], [0:8:2], [0:1]}\n}\n";
    cxla_module *m = parse_ok(text);
    if (!m) return;
    const cxla_instr *rw = cxla_computation_find_instr(m->entry, "rw");
    const cxla_attr *w = cxla_instr_attr(rw, CXLA_ATTR_WINDOW);
    CHECK(w && w->v.window.rank == 4);
    if (w && w->v.window.rank == 4) {
        CHECK_EQ_I64(w->v.window.dims[1].size, 3);
        CHECK_EQ_I64(w->v.window.dims[1].stride, 2);
        CHECK_EQ_I64(w->v.window.dims[1].pad_high, 1);
        CHECK_EQ_I64(w->v.window.dims[0].lhs_dilation, 1);
        CHECK_EQ_I64(w->v.window.dims[3].rhs_dilation, 1);
        CHECK(w->v.window.dims[2].reversal && !w->v.window.dims[1].reversal);
    }
    const cxla_attr *pd =
        cxla_instr_attr(cxla_computation_find_instr(m->entry, "p"), CXLA_ATTR_PADDING);
    CHECK(pd && pd->v.padding.rank == 4 && pd->v.padding.dims[2].low == -1 &&
          pd->v.padding.dims[1].high == 2);
    const cxla_attr *sl = cxla_instr_attr(root_of(m), CXLA_ATTR_SLICE);
    CHECK(sl && sl->v.slice.rank == 4 && sl->v.slice.dims[1].stride == 2 &&
          sl->v.slice.dims[1].limit == 8);
    char *out = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT);
    /* Default window fields are dropped; interior padding on every dimension or none;
     * strides on every slice dimension once one is not 1. */
    CHECK(out && strstr(out, "window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0 "
                             "rhs_reversal=0x0x1x0}"));
    CHECK(out && strstr(out, "padding=0_0x1_2x-1_1x0_0\n"));
    CHECK(out && strstr(out, "padding=0_0_0x0_0_1x0_0_0x0_0_0\n"));
    CHECK(out && strstr(out, "slice={[0:1:1], [0:8:2], [0:8:2], [0:1:1]}"));
    free(out);
    cxla_module_destroy(m);
    const char *msg =
        parse_error(entry_with("  x = f32[4]{0} parameter(0)\n  z = f32[] constant(0)\n",
                               "  ROOT p = f32[4]{0} pad(x, z), padding=0_1_2_3"));
    CHECK_HAS(msg, "padding");
    msg = parse_error(entry_with("  x = f32[4]{0} parameter(0)\n",
                                 "  ROOT s = f32[2]{0} slice(x), slice={[0:2:]}"));
    CHECK_HAS(msg, "slice stride");
}

static void test_attr_conv(void) {
    const char *text = entry_with(
        "  x = f32[1,8,8,3]{3,2,1,0} parameter(0)\n  k = f32[3,3,3,16]{3,2,1,0} parameter(1)\n",
        "  ROOT c = f32[1,8,8,16]{3,2,1,0} convolution(x, k), window={size=3x3 pad=1_1x1_1}, "
        "dim_labels=b01f_01io->b01f, feature_group_count=1, operand_precision={HIGH,Default}");
    cxla_module *m = parse_ok(text);
    const cxla_instr *r = root_of(m);
    const cxla_attr *d = r ? cxla_instr_attr(r, CXLA_ATTR_DIM_LABELS) : NULL;
    CHECK(d != NULL);
    if (d) {
        const cxla_conv_dims *c = &d->v.conv;
        CHECK_EQ_I64(c->spatial_count, 2);
        CHECK_EQ_I64(c->input_batch, 0);
        CHECK_EQ_I64(c->input_feature, 3);
        CHECK_EQ_I64(c->input_spatial[1], 2);
        CHECK_EQ_I64(c->kernel_input_feature, 2);
        CHECK_EQ_I64(c->kernel_output_feature, 3);
        CHECK_EQ_I64(c->kernel_spatial[0], 0);
        CHECK_EQ_I64(c->output_feature, 3);
    }
    const cxla_attr *p = r ? cxla_instr_attr(r, CXLA_ATTR_OPERAND_PRECISION) : NULL;
    CHECK(p && p->v.precisions.count == 2 && p->v.precisions.items[0] == CXLA_PRECISION_HIGH);
    char *out = m ? cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT) : NULL;
    CHECK(out && strstr(out, "dim_labels=b01f_01io->b01f, feature_group_count=1, "
                             "operand_precision={high,default}\n"));
    free(out);
    cxla_module_destroy(m);
    expect_contains(entry_with("", "  ROOT r = f32[100]{0} custom-call(), window={size=2x2}, "
                                   "dim_labels=?b01f_0?1io->b01?f, custom_call_target=\"t\""),
                    CXLA_HLO_STYLE_SHORT,
                    "window={size=2x2}, dim_labels=?b01f_0?1io->b01?f, custom_call_target=\"t\"\n");
    const char *bad[] = {"b01f_01io->b0f", "bf01_io01->bx01", "b00f_01io->b01f", "b01f_01io",
                         "b01_01io->b01f"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char body[512];
        snprintf(body, sizeof(body),
                 "  ROOT c = f32[1,8,8,16]{3,2,1,0} convolution(x, k), window={size=3x3}, "
                 "dim_labels=%s",
                 bad[i]);
        const char *msg = parse_error(entry_with("  x = f32[1,8,8,3]{3,2,1,0} parameter(0)\n"
                                                 "  k = f32[3,3,3,16]{3,2,1,0} parameter(1)\n",
                                                 body));
        CHECK_MSG(strstr(msg, "dim_labels") || strstr(msg, "dimension numbers"), "%s: %s", bad[i],
                  msg);
    }
}

static void test_attr_replica_groups(void) {
    const char *ar = "HloModule r, entry_computation_layout={(f32[8]{0})->f32[8]{0}}, "
                     "replica_count=8\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] "
                     "parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[8]{0} "
                     "parameter(0)\n  ROOT r = f32[8]{0} all-reduce(x), replica_groups=%s, "
                     "to_apply=add\n}\n";
    char text[1024];
    snprintf(text, sizeof(text), ar, "[2,4]<=[4,2]T(1,0)");
    expect_same(text, CXLA_HLO_STYLE_SHORT);
    cxla_module *m = parse_ok(text);
    const cxla_attr *g = m ? cxla_instr_attr(root_of(m), CXLA_ATTR_REPLICA_GROUPS) : NULL;
    CHECK(g && g->v.groups.iota_form && g->v.groups.group_count == 2);
    if (g && g->v.groups.group_count == 2) {
        /* iota(8) as [4,2], transposed: rows {0,2,4,6} and {1,3,5,7}. */
        static const int64_t want[2][4] = {{0, 2, 4, 6}, {1, 3, 5, 7}};
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 4; j++) CHECK_EQ_I64(g->v.groups.groups[i][j], want[i][j]);
    }
    cxla_module_destroy(m);
    snprintf(text, sizeof(text), ar, "{{0,1,2,3},{4,5,6,7}}");
    expect_same(text, CXLA_HLO_STYLE_SHORT);
    snprintf(text, sizeof(text), ar, "{}");
    expect_same(text, CXLA_HLO_STYLE_SHORT);
    snprintf(text, sizeof(text), ar, "mesh['x'=2,'y'=4] {'y'}");
    expect_same(text, CXLA_HLO_STYLE_SHORT);
    snprintf(text, sizeof(text), ar, "[2,4]<=[16]");
    CHECK_HAS(parse_error(text), "does not match the tile assignment dimensions");
    snprintf(text, sizeof(text), ar, "[2,4]<=[4,2]T(0,0)");
    CHECK_HAS(parse_error(text), "not a permutation");
    snprintf(text, sizeof(text), ar, "mesh['x'=2,'y'=4] {'z'}");
    CHECK_HAS(parse_error(text), "not a valid axis name");
}

static void test_attr_shapes_and_literal(void) {
    expect_same("HloModule o, entry_computation_layout={()->token[]}\n\nENTRY e {\n"
                "  t = token[] after-all()\n  c = (f32[2]{0}, s32[]) constant(( {1, 2}, 3 ))\n"
                "  ROOT o = token[] outfeed(c, t), outfeed_shape=(f32[2]{0}, s32[])\n}\n",
                CXLA_HLO_STYLE_SHORT);
    const char *cc =
        entry_with("  a = f32[2,2]{0,1} parameter(0)\n",
                   "  ROOT c = f32[2]{0} custom-call(a), custom_call_target=\"k\", "
                   "operand_layout_constraints={f32[2,2]{1,0}}, literal=s32[2]{0} {1, 2}");
    cxla_module *m = parse_ok(cc);
    const cxla_instr *r = root_of(m);
    const cxla_attr *lit = r ? cxla_instr_attr(r, CXLA_ATTR_LITERAL) : NULL;
    CHECK(lit && lit->v.literal && cxla_literal_element_count(lit->v.literal) == 2);
    const cxla_attr *olc = r ? cxla_instr_attr(r, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS) : NULL;
    CHECK(olc && olc->v.shapes.count == 1 && olc->v.shapes.items[0].layout &&
          olc->v.shapes.items[0].layout->minor_to_major[0] == 1);
    cxla_module_destroy(m);
    CHECK_HAS(
        parse_error(entry_with("  a = f32[2,2]{0,1} parameter(0)\n",
                               "  ROOT c = f32[2]{0} custom-call(a), custom_call_target=\"k\", "
                               "operand_layout_constraints={}")),
        "operand layout constraints");
}

static void test_attr_raw(void) {
    /* Kept verbatim: metadata, sharding, frontend attributes, backend config, statistics. */
    const char *text =
        "HloModule r, entry_computation_layout={(f32[4]{0})->f32[4]{0}}, "
        "frontend_attributes={a=\"b\"}\n\nENTRY e {\n"
        "  x = f32[4]{0} parameter(0), sharding={devices=[2,2]<=[4] last_tile_dim_replicate}\n"
        "  ROOT n = f32[4]{0} negate(x), sharding={{replicated}}, frontend_attributes={k=\"v\"}, "
        "statistics={visualizing_index=1,stat-1=3}, metadata={op_type=\"Neg\" op_name=\"a}b\" "
        "source_line=3}, backend_config={\"x\":[1,{\"y\":\"}\"}]}\n}\n";
    expect_same(text, CXLA_HLO_STYLE_SHORT);
    cxla_module *m = parse_ok(text);
    const cxla_attr *md = m ? cxla_instr_attr(root_of(m), CXLA_ATTR_METADATA) : NULL;
    CHECK(md && strcmp(md->v.s, "{op_type=\"Neg\" op_name=\"a}b\" source_line=3}") == 0);
    cxla_module_destroy(m);
    CHECK_HAS(
        parse_error(entry_with("  x = f32[4]{0} parameter(0)\n",
                               "  ROOT n = f32[4]{0} negate(x), sharding={devices=[2,2]0,1,2}")),
        "does not match the tile assignment size");
    CHECK_HAS(parse_error(entry_with("  x = f32[4]{0} parameter(0)\n",
                                     "  ROOT n = f32[4]{0} negate(x), metadata={op_name=\"x}")),
              "unterminated string");
    CHECK_HAS(parse_error(entry_with("  x = f32[4]{0} parameter(0)\n",
                                     "  ROOT n = f32[4]{0} exponential(x), "
                                     "result_accuracy={mode=medium}")),
              "ResultAccuracy");
    expect_contains(entry_with("  x = f32[4]{0} parameter(0)\n",
                               "  ROOT n = f32[4]{0} exponential(x), "
                               "result_accuracy={tolerance={atol=0.1 rtol=0.2 ulps=1}}"),
                    CXLA_HLO_STYLE_SHORT,
                    "result_accuracy={tolerance={atol=0.1 rtol=0.2 ulps=1}}\n");
}

static void test_control_predecessors_and_unknown(void) {
    const char *text = "HloModule c\n\nENTRY e {\n  a = f32[] constant(1)\n"
                       "  b = f32[] constant(2), control-predecessors={a}, "
                       "newer_attribute={x=1, y=[2]}\n  ROOT s = f32[] add(a, b), "
                       "newer_attribute=true, another=\"q\"\n}\n";
    cxla_module *m = parse_ok(text);
    if (!m) return;
    const cxla_instr *b = cxla_computation_find_instr(m->entry, "b");
    const cxla_attr *cp = cxla_instr_attr(b, CXLA_ATTR_CONTROL_PREDECESSORS);
    CHECK(cp && cp->v.instrs.count == 1 &&
          cp->v.instrs.items[0] == cxla_computation_find_instr(m->entry, "a"));
    const cxla_attr *u = cxla_instr_attr(b, CXLA_ATTR_UNKNOWN);
    CHECK(u && strcmp(u->name, "newer_attribute") == 0 && strcmp(u->v.s, "{x=1, y=[2]}") == 0);
    /* One warning per unknown name, with its position. */
    const char *w = m->warnings.data ? m->warnings.data : "";
    CHECK_HAS(w, "t.hlo:5:52: warning: unknown attribute 'newer_attribute' (on b)");
    CHECK_HAS(w, "t.hlo:6:51: warning: unknown attribute 'another' (on s)");
    int count = 0;
    for (const char *p = w; (p = strstr(p, "newer_attribute")); p++) count++;
    CHECK_EQ_I64(count, 1);
    char *out = cxla_hlo_print(m, CXLA_HLO_STYLE_LONG);
    CHECK(out && strstr(out, "%b = f32[] constant(2), control-predecessors={%a}, "
                             "newer_attribute={x=1, y=[2]}\n"));
    CHECK(out && strstr(out, "add(f32[] %a, f32[] %b), newer_attribute=true, another=\"q\"\n"));
    free(out);
    cxla_module_destroy(m);
}

/* ---- module-level features ------------------------------------------------------------- */

static void test_header_and_entry_layout(void) {
    const char *text =
        "HloModule h, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias) }, "
        "entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{0,1}}, "
        "allow_spmd_sharding_propagation_to_output={true}, num_partitions=2, "
        "frontend_attributes={x=\"y\"}\n\nENTRY e {\n  ROOT p = f32[2,3]{0,1} parameter(0)\n}\n";
    expect_same(text, CXLA_HLO_STYLE_SHORT);
    cxla_module *m = parse_ok(text);
    if (!m) return;
    CHECK(m->has_entry_layout);
    CHECK_EQ_I64(m->entry_param_count, 1);
    CHECK_EQ_I64(m->entry_param_shapes[0].layout->minor_to_major[0], 0);
    CHECK_EQ_I64(m->num_partitions, 2);
    CHECK_EQ_I64(m->replica_count, 1);
    cxla_module_destroy(m);
    /* Attributes in another order print in XLA's. */
    expect_print(
        "HloModule h, num_partitions=2, is_scheduled=true\nENTRY e {\n"
        "  ROOT p = f32[2] parameter(0)\n}\n",
        CXLA_HLO_STYLE_SHORT,
        "HloModule h, is_scheduled=true, entry_computation_layout={(f32[2]{0})->f32[2]{0}}, "
        "num_partitions=2\n\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n");
    CHECK_HAS(parse_error("HloModule h, entry_computation_layout={(f32[3])->f32[2]}\n"
                          "ENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n"),
              "not compatible");
    CHECK_HAS(parse_error("HloModule h, input_output_alias={ {0}: (0, {}, maybe) }\n"
                          "ENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n"),
              "may-alias");
}

static void test_stack_frames_and_threads(void) {
    const char *text =
        "HloModule s, entry_computation_layout={()->f32[]}\n\nFileNames\n1 \"a.py\"\n\n"
        "FunctionNames\n1 \"f\"\n\nFileLocations\n1 {file_name_id=1 function_name_id=1 line=3 "
        "end_line=3 column=1 end_column=2}\n\nStackFrames\n1 {file_location_id=1 "
        "parent_frame_id=1}\n\n\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] constant(1), "
        "metadata={op_name=\"c\" stack_frame_id=1}\n}, execution_thread=\"side\"\n";
    expect_same(text, CXLA_HLO_STYLE_LONG);
    cxla_module *m = parse_ok(text);
    CHECK(m && m->stack_frames && strncmp(m->stack_frames, "FileNames\n1 \"a.py\"", 18) == 0);
    CHECK(m && m->entry->execution_thread && strcmp(m->entry->execution_thread, "side") == 0);
    cxla_module_destroy(m);
}

/* Found by the fuzzer: a table keyword repeated, or followed by a computation, was taken
 * as a table and then printed where it no longer parsed as one. Each table comes at most
 * once, and a word is a table only when an entry, the end or another table follows. */
static void test_stack_frame_keywords_as_names(void) {
    const char *dup = "HloModule s\n\nFileNames\nFileNames\nFunc {\n"
                      "  ROOT c = f32[] constant(1)\n}\n";
    cxla_module *m = NULL;
    CHECK_ERROR_HAS(cxla_hlo_parse(dup, strlen(dup), "t.hlo", &m), "found 'FileNames'");
    cxla_module_destroy(m);
    m = NULL;
    /* Followed by a computation's name: a computation named FileNames. */
    const char *named = "HloModule s\n\nFileNames\nStackFrames {\n"
                        "  ROOT c = f32[] constant(1)\n}\n";
    CHECK_ERROR_HAS(cxla_hlo_parse(named, strlen(named), "t.hlo", &m), "found 'StackFrames'");
    cxla_module_destroy(m);
    /* Tables in any order, one empty, then a computation named like a table. */
    const char *ok = "HloModule s\n\nStackFrames\nFileNames\n1 \"a.py\"\n\n"
                     "FunctionNames {\n  ROOT c = f32[] constant(1)\n}\n";
    m = parse_ok(ok);
    if (!m) return;
    CHECK(m->stack_frames && strcmp(m->stack_frames, "StackFrames\nFileNames\n1 \"a.py\"") == 0);
    CHECK_EQ_STR(m->entry->name, "FunctionNames");
    char *once = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT);
    cxla_module_destroy(m);
    cxla_module *m2 = once ? parse_ok(once) : NULL;
    if (m2) {
        char *twice = cxla_hlo_print(m2, CXLA_HLO_STYLE_SHORT);
        CHECK_EQ_STR(twice, once);
        free(twice);
        cxla_module_destroy(m2);
    }
    free(once);
}

/* Found by the fuzzer: a NUL byte inside a comment of a stack-frame table cut the kept
 * table short when printed. NUL bytes are rejected with their position. */
static void test_nul_byte_rejected(void) {
    const char text[] = "HloModule m\n\nFileNames\n// a \0 b\n1 \"n\"\n\n"
                        "ENTRY e {\n  ROOT c = f32[] constant(1)\n}\n";
    cxla_module *m = NULL;
    CHECK_ERROR_HAS(cxla_hlo_parse(text, sizeof(text) - 1, "t.hlo", &m), "4:6: a NUL byte");
    cxla_module_destroy(m);
}

static void test_async_sugar(void) {
    const char *text =
        "HloModule a, entry_computation_layout={(f32[10]{0})->f32[20]{0}}\n\nENTRY %e (p0: "
        "f32[10]) "
        "-> f32[20] {\n  %p0 = f32[10]{0} parameter(0)\n  %s = ((f32[10]{0}), f32[20]{0}, s32[]) "
        "custom-call-start(f32[10]{0} %p0), async_execution_thread=\"t\", "
        "custom_call_target=\"foo\"\n"
        "  ROOT %d = f32[20]{0} custom-call-done(((f32[10]{0}), f32[20]{0}, s32[]) %s)\n}\n";
    expect_same(text, CXLA_HLO_STYLE_LONG);
    cxla_module *m = parse_ok(text);
    const cxla_instr *d = root_of(m);
    CHECK(d && d->opcode == CXLA_OP_ASYNC_DONE && d->async_wrapped == CXLA_OP_CUSTOM_CALL);
    CHECK(d && d->operands[0]->opcode == CXLA_OP_ASYNC_START);
    cxla_module_destroy(m);
    CHECK_HAS(parse_error(entry_with("  p = f32[4]{0} parameter(0)\n",
                                     "  s = ((f32[4]{0}), f32[4]{0}) all-reduce-update(p)")),
              "Unknown opcode: 'all-reduce-update'");
}

static void test_parameters_and_gte_sugar(void) {
    const char *text = "HloModule g\nENTRY e {\n  p = (f32[2], s32[]) parameter(0)\n"
                       "  ROOT n = f32[2] negate(p#0)\n  m = f32[2] add(p#0, p#0)\n}\n";
    cxla_module *m = parse_ok(text);
    if (m) {
        /* p#0 becomes one get-tuple-element, shared. */
        CHECK_EQ_I64(m->entry->instr_count, 4);
        const cxla_instr *g = root_of(m)->operands[0];
        CHECK(g->opcode == CXLA_OP_GET_TUPLE_ELEMENT &&
              g->operands[0]->opcode == CXLA_OP_PARAMETER);
        const cxla_instr *add = cxla_computation_find_instr(m->entry, "m");
        CHECK(add && add->operands[0] == g && add->operands[1] == g);
    }
    cxla_module_destroy(m);
    CHECK_HAS(parse_error("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] parameter(2)\n"
                          "  ROOT s = f32[] add(a, b)\n}\n"),
              "no parameter number 1");
    CHECK_HAS(parse_error("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] parameter(0)\n"
                          "  ROOT s = f32[] add(a, b)\n}\n"),
              "Duplicate parameter number 0");
    CHECK_HAS(parse_error("ENTRY e {\n  a = f32[] parameter(-1)\n}\n"), "negative");
    CHECK_HAS(parse_error("ENTRY e {\n  p = (f32[2], s32[]) parameter(0)\n"
                          "  ROOT n = f32[2] negate(p#2)\n}\n"),
              "GTE index 2 out of bounds");
}

/* Send, recv, their -done and outfeed: the written shape is rebuilt from the operands
 * (recv keeps its data part), as XLA's parser builds these instructions. */
static void test_channel_shapes_rebuilt(void) {
    const char *text = "HloModule c\nENTRY e {\n  t = token[] after-all()\n"
                       "  r = (f32[4], s32[], token[]) recv(t), channel_id=1\n"
                       "  rd = (f32[4], s32[]) recv-done(r), channel_id=1\n"
                       "  d = f32[4] get-tuple-element(rd), index=0\n"
                       "  s = (f32[9], s8[], token[]) send(d, t), channel_id=2\n"
                       "  sd = f32[] send-done(s), channel_id=2\n"
                       "  o = s32[] outfeed(d, t)\n"
                       "  ROOT x = f32[4] negate(d)\n}\n";
    cxla_module *m = parse_ok(text);
    if (m) {
        static const char *const names[] = {"r", "rd", "s", "sd", "o"};
        static const char *const want[] = {"(f32[4], u32[], token[])", "(f32[4], token[])",
                                           "(f32[4], u32[], token[])", "token[]", "token[]"};
        for (int i = 0; i < 5; i++) {
            const cxla_instr *in = cxla_computation_find_instr(m->entry, names[i]);
            char *got = in ? cxla_shape_to_string(&in->shape, 0) : NULL;
            /* Layouts are not the point: drop the "{0}" some of them print. */
            for (char *q = got ? strstr(got, "{0}") : NULL; q; q = strstr(q, "{0}"))
                memmove(q, q + 3, strlen(q + 3) + 1);
            CHECK_MSG(got && strcmp(got, want[i]) == 0, "%s: %s, want %s", names[i],
                      got ? got : "?", want[i]);
            free(got);
        }
        CHECK(cxla_hlo_verify(m) == NULL);
    }
    cxla_module_destroy(m);
}

static void test_elided_constant_and_literals(void) {
    const char *text =
        "HloModule c, entry_computation_layout={()->(f32[20]{0}, f32[2]{0})}\n\n"
        "ENTRY e {\n  a = f32[20]{0} constant({...})\n  b = f32[2]{0} constant({1.5, "
        "-inf})\n  ROOT t = (f32[20]{0}, f32[2]{0}) tuple(a, b)\n}\n";
    expect_same(text, CXLA_HLO_STYLE_SHORT);
    cxla_module *m = parse_ok(text);
    if (m) {
        const cxla_instr *a = cxla_computation_find_instr(m->entry, "a");
        const cxla_instr *b = cxla_computation_find_instr(m->entry, "b");
        CHECK(a->literal_elided && !a->literal);
        CHECK(!b->literal_elided && b->literal);
        CHECK_EQ_I64(m->literal_count, 1);
    }
    cxla_module_destroy(m);
}

static void test_shape_inference_when_omitted(void) {
    cxla_module *m = parse_ok("ENTRY e {\n  a = f32[2,3] parameter(0)\n  n = negate(a)\n"
                              "  ROOT t = tuple(n, a)\n}\n");
    const cxla_instr *t = root_of(m);
    CHECK(t && t->shape.type == CXLA_TUPLE && t->shape.tuple_count == 2 &&
          t->shape.elements[0].rank == 2 && t->shape.elements[0].dims[1] == 3);
    cxla_module_destroy(m);
    CHECK_HAS(parse_error("ENTRY e {\n  ROOT c = constant(1)\n}\n"), "needs its shape");
    CHECK_HAS(parse_error("ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT c = convert(a)\n}\n"),
              "must be written");
}

/* ---- errors ---------------------------------------------------------------------------- */

static void test_errors(void) {
    /* Each class of error names the file, the line and column, and shows the line. */
    const char *msg = parse_error("HloModule m\n\nENTRY e {\n  a = f32[] parameter(0)\n"
                                  "  ROOT b = f32[] frobnicate(a)\n}\n");
    CHECK_HAS(msg, "bad.hlo:5:18: Unknown opcode: 'frobnicate'");
    CHECK_HAS(msg, "\n    ROOT b = f32[] frobnicate(a)\n");
    CHECK_HAS(msg, "\n                   ^");
    msg = parse_error("ENTRY e {\n  ROOT b = f32[] negate(zz)\n}\n");
    CHECK_HAS(msg, "2:25: instruction does not exist: 'zz'");
    msg = parse_error("ENTRY e {\n  ROOT b = f33[] parameter(0)\n}\n");
    CHECK_HAS(msg, "2:12: unknown element type 'f33'");
    msg = parse_error("ENTRY e {\n  ROOT b = flt32[5,3] parameter(0)\n}\n");
    CHECK_HAS(msg, "unknown element type 'flt32' (did you mean 'f32'?)");
    msg = parse_error("ENTRY e {\n  a = f32[4] parameter(0)\n  ROOT b = f32[4] reverse(a), "
                      "dimensions={0,x}\n}\n");
    CHECK_HAS(msg, "3:45: expected an integer (dimensions), found 'x'");
    msg = parse_error("ENTRY e {\n  a = f32[4] parameter(0)\n");
    CHECK_HAS(msg, "3:1: expected '}' to close computation 'e' (started at line 1)");
    msg = parse_error("ENTRY e {\n  a = f32[4] parameter(0)\n  a = f32[4] parameter(1)\n}\n");
    CHECK_HAS(msg, "3:3: an instruction named 'a' already exists");
    msg = parse_error(
        "c {\n  ROOT a = f32[] parameter(0)\n}\nc {\n  ROOT a = f32[] parameter(0)\n}\n");
    CHECK_HAS(msg, "a computation named 'c' already exists");
    msg = parse_error("ENTRY e {\n  ROOT c = f32[2] constant({1, 2, 3})\n}\n");
    CHECK_HAS(msg, "2:");
    msg = parse_error("%%% garbage ###");
    CHECK_HAS(msg, "1:1: expected a computation name");
    msg = parse_error("");
    CHECK_HAS(msg, "the text has none");
    /* The sharding takes the computation's '}', so the computation is never closed. */
    msg = parse_error("ENTRY e {\n  ROOT a = f32[] parameter(0), sharding={maximal device=0\n}\n");
    CHECK_HAS(msg, "4:1: expected '}' to close computation 'e'");
    msg = parse_error("ENTRY e {\n  ROOT a = f32[] parameter(0)\n} /* unterminated");
    CHECK_HAS(msg, "unterminated comment");
    msg = parse_error("ENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] call(a), "
                      "to_apply=nowhere\n}\n");
    CHECK_HAS(msg, "computation 'nowhere' (to_apply of 'b') is not defined");
    msg = parse_error("f {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=f\n}\n");
    CHECK_HAS(msg, "calls itself");
    msg = parse_error("ENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] negate(a), "
                      "to_apply=e\n}\n");
    CHECK_HAS(msg, "unexpected attribute \"to_apply\" for negate");
    msg = parse_error("ENTRY e {\n  a = f32[] parameter(0), metadata={}, metadata={}\n}\n");
    CHECK_HAS(msg, "given twice");
    msg = parse_error("ENTRY e {\n  ROOT a = f32[] parameter(0)\n}\nENTRY f {\n"
                      "  ROOT a = f32[] parameter(0)\n}\n");
    CHECK_HAS(msg, "only one ENTRY");
    msg =
        parse_error("ENTRY e {\n  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n");
    CHECK_HAS(msg, "only one ROOT");
    msg = parse_error("ENTRY e (a: f32[2]) -> f32[3] {\n  ROOT a = f32[2] parameter(0)\n}\n");
    CHECK_HAS(msg, "is not compatible with that of its root instruction");
    /* No filename: the message starts with the position. */
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse("ENTRY e {", 9, NULL, &m);
    const char *nofile = CHECK_ERROR(s);
    CHECK(strncmp(nofile, "1:10: ", 6) == 0);
    CHECK(m == NULL);
}

static void test_not_nul_terminated(void) {
    /* The parser must stop at |len|: a valid module followed by bytes it must not see. */
    const char *text = "ENTRY e {\n  ROOT a = f32[] parameter(0)\n}\nGARBAGE";
    size_t len = strlen(text) - strlen("GARBAGE");
    char *copy = malloc(len);
    memcpy(copy, text, len);
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(copy, len, "n.hlo", &m));
    cxla_module_destroy(m);
    /* Cut in the middle of a token. */
    for (size_t cut = 0; cut < len; cut++) {
        m = NULL;
        cxla_status s = cxla_hlo_parse(copy, cut, "n.hlo", &m);
        if (s) cxla_status_free(s);
        cxla_module_destroy(m);
    }
    free(copy);
}

static void test_print_instr(void) {
    cxla_module *m = parse_ok("ENTRY e {\n  a = f32[2,2] parameter(0)\n  b = f32[2,2] "
                              "parameter(1)\n  c = f32[2,2] parameter(2)\n  d = f32[2,2] "
                              "parameter(3)\n  e = f32[2,2] parameter(4)\n  f = f32[2,2] "
                              "parameter(5)\n  ROOT t = (f32[2,2], f32[2,2], f32[2,2], f32[2,2], "
                              "f32[2,2], f32[2,2]) tuple(a, b, c, d, e, f)\n}\n");
    if (!m) return;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_hlo_print_instr(&b, root_of(m), CXLA_HLO_STYLE_LONG_NO_OPERAND_SHAPES);
    CHECK_EQ_STR(b.data, "%t = (f32[2,2]{1,0}, f32[2,2]{1,0}, f32[2,2]{1,0}, f32[2,2]{1,0}, "
                         "f32[2,2]{1,0}, /*index=5*/f32[2,2]{1,0}) tuple(%a, %b, %c, %d, %e, "
                         "/*index=5*/%f)");
    cxla_strbuf_free(&b);
    cxla_strbuf_init(&b);
    cxla_hlo_print_instr(&b, root_of(m), CXLA_HLO_STYLE_SHORT);
    CHECK(strstr(b.data, "tuple(a, b, c, d, e, f)") != NULL);
    cxla_strbuf_free(&b);
    cxla_module_destroy(m);
}

static void test_reduce_scatter_order(void) {
    /* The one opcode whose attributes do not follow attrs.def's order. */
    expect_same(
        "HloModule r, entry_computation_layout={(f32[8]{0})->f32[4]{0}}\n\nadd {\n"
        "  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n"
        "}\n\nENTRY e {\n  x = f32[8]{0} parameter(0)\n  ROOT r = f32[4]{0} "
        "reduce-scatter(x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, "
        "dimensions={0}, to_apply=add\n}\n",
        CXLA_HLO_STYLE_SHORT);
    expect_same("HloModule r, entry_computation_layout={(f32[8]{0})->f32[16]{0}}\n\nENTRY e {\n"
                "  x = f32[8]{0} parameter(0)\n  ROOT r = f32[16]{0} all-gather(x), channel_id=1, "
                "replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true\n}\n",
                CXLA_HLO_STYLE_SHORT);
}

TEST_MAIN(TEST(test_styles), TEST(test_minimal_text), TEST(test_entry_called_elsewhere_prints_last),
          TEST(test_forward_references), TEST(test_duplicate_names_across_computations),
          TEST(test_reused_names_numbered), TEST(test_attr_scalars), TEST(test_attr_words),
          TEST(test_attr_lists), TEST(test_attr_window_padding_slice), TEST(test_attr_conv),
          TEST(test_attr_replica_groups), TEST(test_attr_shapes_and_literal), TEST(test_attr_raw),
          TEST(test_control_predecessors_and_unknown), TEST(test_header_and_entry_layout),
          TEST(test_stack_frames_and_threads), TEST(test_stack_frame_keywords_as_names),
          TEST(test_nul_byte_rejected), TEST(test_async_sugar), TEST(test_parameters_and_gte_sugar),
          TEST(test_elided_constant_and_literals), TEST(test_shape_inference_when_omitted),
          TEST(test_errors), TEST(test_not_nul_terminated), TEST(test_print_instr),
          TEST(test_reduce_scatter_order), TEST(test_channel_shapes_rebuilt))
