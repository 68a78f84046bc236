/* The async-desugar pass (src/passes/async_desugar.c): what it rewrites (the sugar forms
 * into async-start with calls= and a wrapped computation), what it keeps (attributes,
 * layouts, side effects once), what it leaves alone (the dedicated async opcodes, the
 * general form, sugar whose shapes do not line up), and that the interpreter's results
 * stay bit for bit the same (pc_check_passes), dynamic values below their bounds included. */
#include <inttypes.h>

#include "cxla/custom_call.h"
#include "passes_check.h"

/* Parses and verifies |text|, runs |n| passes with the before/after comparison on |args|
 * (generated when NULL); the module is the caller's (NULL when something failed). */
static cxla_module *run_passes(const char *text, const cxla_pass *const *passes, int64_t n,
                               cxla_literal **args) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "test", &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        CHECK_MSG(false, "module rejected: %s", cxla_status_message(s));
        cxla_status_free(s);
        cxla_module_destroy(m);
        return NULL;
    }
    if (!pc_check_passes(m, args, passes, n, passes[n - 1]->name)) {
        cxla_module_destroy(m);
        return NULL;
    }
    return m;
}

static cxla_module *desugar(const char *text) {
    const cxla_pass *one[1] = {&cxla_pass_async_desugar};
    return run_passes(text, one, 1, NULL);
}

static int64_t count_op(const cxla_module *m, cxla_opcode op) {
    int64_t n = 0;
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++)
            n += m->comps[c]->instrs[i]->opcode == op;
    return n;
}

static int64_t count_sugar(const cxla_module *m) {
    int64_t n = 0;
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++)
            n += m->comps[c]->instrs[i]->async_wrapped != CXLA_OP_COUNT;
    return n;
}

static const char *raw_attr(const cxla_instr *in, cxla_attr_id id) {
    const cxla_attr *a = cxla_instr_attr(in, id);
    return a && a->kind == CXLA_ATTR_KIND_RAW ? a->v.s : NULL;
}

/* negate-start / -update / -done: a computation of one parameter with the negate as its
 * root, the start's frontend attributes on both, the chain without sugar. */
static void test_negate(void) {
    cxla_module *m = desugar("HloModule m\n"
                             "ENTRY e { x = f32[2,3]{0,1} parameter(0)\n"
                             " s = ((f32[2,3]{0,1}), f32[2,3]{0,1}, s32[]) negate-start(x), "
                             "frontend_attributes={a=\"1\"}\n"
                             " u = ((f32[2,3]{0,1}), f32[2,3]{0,1}, s32[]) negate-update(s)\n"
                             " ROOT d = f32[2,3]{0,1} negate-done(u) }\n");
    if (!m) return;
    CHECK_EQ_I64(count_sugar(m), 0);
    const cxla_instr *d = m->entry->root, *u = d->operands[0], *s = u->operands[0];
    CHECK(d->opcode == CXLA_OP_ASYNC_DONE && u->opcode == CXLA_OP_ASYNC_UPDATE);
    CHECK(s->opcode == CXLA_OP_ASYNC_START && s->operands[0]->opcode == CXLA_OP_PARAMETER);
    const cxla_computation *w = cxla_instr_called(s, CXLA_ATTR_CALLS);
    CHECK(w != NULL);
    if (w) {
        CHECK_EQ_I64(w->param_count, 1);
        CHECK_EQ_I64(w->instr_count, 2);
        CHECK(w->root->opcode == CXLA_OP_NEGATE && w->root->operands[0] == w->params[0]);
        CHECK(cxla_shape_equal(&w->root->shape, &s->shape.elements[1])); /* layout kept */
        CHECK(cxla_shape_equal(&w->params[0]->shape, &s->operands[0]->shape));
        const char *fa = raw_attr(w->root, CXLA_ATTR_FRONTEND_ATTRIBUTES);
        CHECK(fa && strstr(fa, "a=\"1\""));
        CHECK(w->root->line == s->line && w->root->column == s->column);
    }
    CHECK(raw_attr(s, CXLA_ATTR_FRONTEND_ATTRIBUTES) != NULL);
    /* Running the pass again changes nothing. */
    bool changed = true;
    CHECK_OK(cxla_pass_async_desugar.run(m, &changed));
    CHECK(!changed);
    cxla_module_destroy(m);
}

/* call-start with one operand twice: two parameters, the call's to_apply on the root;
 * while-start and conditional-start the same; reduce-start keeps its reducer. */
static void test_control_and_reduce(void) {
    cxla_module *m =
        desugar("HloModule m\n"
                "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                " ROOT r = f32[] add(a, b) }\n"
                "callee { p = f32[3] parameter(0)\n q = f32[3] parameter(1)\n"
                " ROOT m = f32[3] multiply(p, q) }\n"
                "cond { t = (s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(t), "
                "index=0\n n = s32[] constant(3)\n ROOT c = pred[] compare(i, n), "
                "direction=LT }\n"
                "body { t = (s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(t), "
                "index=0\n v = f32[3] get-tuple-element(t), index=1\n one = s32[] constant(1)\n"
                " j = s32[] add(i, one)\n w = f32[3] add(v, v)\n"
                " ROOT r = (s32[], f32[3]) tuple(j, w) }\n"
                "neg { p = f32[3] parameter(0)\n ROOT n = f32[3] negate(p) }\n"
                "abs { p = f32[3] parameter(0)\n ROOT n = f32[3] abs(p) }\n"
                "ENTRY e { x = f32[3] parameter(0)\n k = s32[] parameter(1)\n"
                " cs = ((f32[3], f32[3]), f32[3], s32[]) call-start(x, x), to_apply=callee\n"
                " c = f32[3] call-done(cs)\n"
                " z = s32[] constant(0)\n init = (s32[], f32[3]) tuple(z, c)\n"
                " ws = (((s32[], f32[3])), (s32[], f32[3]), s32[]) while-start(init), "
                "condition=cond, body=body\n"
                " w = (s32[], f32[3]) while-done(ws)\n"
                " wv = f32[3] get-tuple-element(w), index=1\n"
                " bs = ((s32[], f32[3], f32[3]), f32[3], s32[]) conditional-start(k, wv, x), "
                "branch_computations={neg, abs}\n"
                " b = f32[3] conditional-done(bs)\n"
                " zf = f32[] constant(0)\n"
                " rs = ((f32[3], f32[]), f32[], s32[]) reduce-start(b, zf), dimensions={0}, "
                "to_apply=add\n"
                " ROOT r = f32[] reduce-done(rs) }\n");
    if (!m) return;
    CHECK_EQ_I64(count_sugar(m), 0);
    CHECK_EQ_I64(count_op(m, CXLA_OP_ASYNC_START), 4);
    static const cxla_opcode roots[] = {CXLA_OP_CALL, CXLA_OP_WHILE, CXLA_OP_CONDITIONAL,
                                        CXLA_OP_REDUCE};
    static const int64_t params[] = {2, 1, 3, 2};
    int64_t seen = 0;
    for (int64_t i = 0; i < m->entry->instr_count; i++) {
        const cxla_instr *in = m->entry->instrs[i];
        if (in->opcode != CXLA_OP_ASYNC_START) continue;
        const cxla_computation *w = cxla_instr_called(in, CXLA_ATTR_CALLS);
        CHECK(w != NULL);
        if (!w || seen >= 4) continue;
        CHECK_MSG(w->root->opcode == roots[seen], "%s wraps %s", in->name,
                  cxla_opcode_name(w->root->opcode));
        CHECK_EQ_I64(w->param_count, params[seen]);
        CHECK_EQ_I64(in->attr_count, 1); /* calls= only: the operation's attributes moved */
        seen++;
    }
    CHECK_EQ_I64(seen, 4);
    const cxla_instr *cs = cxla_computation_find_instr(m->entry, "cs");
    const cxla_computation *w = cs ? cxla_instr_called(cs, CXLA_ATTR_CALLS) : NULL;
    CHECK(w && w->params[0] != w->params[1] &&
          cxla_instr_called(w->root, CXLA_ATTR_TO_APPLY) ==
              cxla_module_find_computation(m, "callee"));
    cxla_module_destroy(m);
}

static int calls_made;

static void count_and_copy(void *out, const void **in) {
    calls_made++;
    memcpy(out, in[0], 4 * sizeof(float));
}

/* A custom-call-start with side effects and a backend config: one custom call in the
 * module afterwards, run once per run, with its attributes; the start keeps its control
 * predecessor. */
static void test_side_effect_once(void) {
    CHECK_OK(cxla_custom_call_register("desugar_count", (cxla_custom_call_fn)count_and_copy,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    calls_made = 0;
    cxla_module *m = desugar("HloModule m\n"
                             "ENTRY e { x = f32[4] parameter(0)\n"
                             " y = f32[4] negate(x)\n"
                             " s = ((f32[4]), f32[4], s32[]) custom-call-start(x), "
                             "custom_call_target=\"desugar_count\", "
                             "custom_call_has_side_effect=true, backend_config=\"cfg\", "
                             "control-predecessors={y}\n"
                             " d = f32[4] custom-call-done(s)\n"
                             " ROOT r = f32[4] add(d, y) }\n");
    CHECK_EQ_I64(calls_made, 2); /* the run before the pass and the run after */
    if (m) {
        CHECK_EQ_I64(count_op(m, CXLA_OP_CUSTOM_CALL), 1);
        const cxla_instr *s = cxla_computation_find_instr(m->entry, "s");
        const cxla_computation *w = s ? cxla_instr_called(s, CXLA_ATTR_CALLS) : NULL;
        CHECK(w && w->root->opcode == CXLA_OP_CUSTOM_CALL);
        if (w) {
            CHECK(cxla_instr_bool(w->root, CXLA_ATTR_CUSTOM_CALL_HAS_SIDE_EFFECT));
            const char *cfg = raw_attr(w->root, CXLA_ATTR_BACKEND_CONFIG);
            CHECK(cfg && strstr(cfg, "cfg"));
            CHECK(!cxla_instr_attr(w->root, CXLA_ATTR_CONTROL_PREDECESSORS));
        }
        CHECK(s && cxla_instr_attr(s, CXLA_ATTR_CONTROL_PREDECESSORS));
        /* The cpu pipeline's dce keeps it. */
        const cxla_pass *dce[1] = {&cxla_pass_dce};
        CHECK(pc_check_passes(m, NULL, dce, 1, "dce"));
        CHECK_EQ_I64(count_op(m, CXLA_OP_CUSTOM_CALL), 1);
        cxla_module_destroy(m);
    }
    CHECK_OK(cxla_custom_call_register("desugar_count", NULL, CXLA_CUSTOM_CALL_API_ORIGINAL));
}

/* Left alone: the dedicated async opcodes, the general form, and sugar whose result {1}
 * is not what the wrapped operation gives (the interpreter's handler runs it). */
static void test_left_alone(void) {
    cxla_module *m = desugar("HloModule m, replica_count=1\n"
                             "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                             " ROOT r = f32[] add(a, b) }\n"
                             "wrapped { p = f32[4] parameter(0)\n ROOT n = f32[4] abs(p) }\n"
                             "ENTRY e { x = f32[4] parameter(0)\n"
                             " ar = f32[4] all-reduce-start(x), to_apply=add\n"
                             " a = f32[4] all-reduce-done(ar)\n"
                             " cp = (f32[4], f32[4], u32[]) copy-start(a)\n"
                             " c = f32[4] copy-done(cp)\n"
                             " ps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(c), "
                             "source_target_pairs={{0,0}}\n"
                             " p = f32[4] collective-permute-done(ps)\n"
                             " as = ((f32[4]), f32[4], s32[]) async-start(p), calls=wrapped\n"
                             " ad = f32[4] async-done(as)\n"
                             " bad = ((f32[4]), f32[5], s32[]) negate-start(ad)\n"
                             " bd = f32[5] negate-done(bad)\n"
                             " ROOT r = (f32[4], f32[5]) tuple(ad, bd) }\n");
    if (!m) return;
    CHECK_EQ_I64(m->comp_count, 3);
    CHECK_EQ_I64(count_op(m, CXLA_OP_ALL_REDUCE_START), 1);
    CHECK_EQ_I64(count_op(m, CXLA_OP_COPY_START), 1);
    CHECK_EQ_I64(count_op(m, CXLA_OP_COLLECTIVE_PERMUTE_START), 1);
    const cxla_instr *as = cxla_computation_find_instr(m->entry, "as");
    CHECK(as &&
          cxla_instr_called(as, CXLA_ATTR_CALLS) == cxla_module_find_computation(m, "wrapped"));
    const cxla_instr *bad = cxla_computation_find_instr(m->entry, "bad");
    CHECK(bad && bad->async_wrapped == CXLA_OP_NEGATE && !cxla_instr_called(bad, CXLA_ATTR_CALLS));
    CHECK_EQ_I64(count_sugar(m), 2); /* bad and its done */
    cxla_module_destroy(m);
}

/* Below the dynamic bounds: the wrapped operation's own rule, before and after (a reduce
 * leaves the padding out; a custom call refuses, both times). */
static void test_dynamic_below_bounds(void) {
    cxla_shape s = {.type = CXLA_F32, .rank = 2, .dims = (int64_t[]){3, 2}};
    cxla_literal *x = NULL;
    CHECK_OK(cxla_literal_create(&s, &x));
    if (!x) return;
    float *v = cxla_literal_data(x);
    for (int i = 0; i < 6; i++) v[i] = (float)(i + 1);
    cxla_literal *args[1] = {x};
    const cxla_pass *one[1] = {&cxla_pass_async_desugar};
    cxla_module *m = run_passes("HloModule m\n"
                                "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                                " ROOT r = f32[] add(a, b) }\n"
                                "ENTRY e { x = f32[<=5,2] parameter(0)\n z = f32[] constant(0)\n"
                                " s = ((f32[<=5,2], f32[]), f32[2], s32[]) reduce-start(x, z), "
                                "dimensions={0}, to_apply=add\n"
                                " ROOT d = f32[2] reduce-done(s) }\n",
                                one, 1, args);
    CHECK(m && count_sugar(m) == 0);
    cxla_module_destroy(m);
    m = run_passes("HloModule m\n"
                   "ENTRY e { x = f32[<=5,2] parameter(0)\n"
                   " s = ((f32[<=5,2]), f32[<=5,2], s32[]) custom-call-start(x), "
                   "custom_call_target=\"Sharding\"\n"
                   " ROOT d = f32[<=5,2] custom-call-done(s) }\n",
                   one, 1, args);
    if (m) {
        CHECK(count_sugar(m) == 0);
        cxla_literal *out = NULL;
        cxla_status st = interp_run_module(m, NULL, (const cxla_literal *const *)args, 1, &out);
        CHECK(st && strstr(cxla_status_message(st), "does not support an operand below its "
                                                    "dynamic bounds"));
        cxla_status_free(st);
        cxla_literal_free(out);
        cxla_module_destroy(m);
    }
    cxla_literal_free(x);
}

/* A foreign custom call wrapped by custom-call-start keeps the layouts its target sees
 * through the layout pass: the operand's layout as operand_layout_constraints, the result
 * in physical form (the interpreter's results before and after are compared). */
static void bytes_in_order(void *out, const void **in) {
    const float *x = in[0];
    float *y = out;
    for (int i = 0; i < 6; i++) y[i] = x[i] + 10.0f * (float)i;
}

static void test_layout_of_wrapped_custom_call(void) {
    CHECK_OK(cxla_custom_call_register("desugar_bytes", (cxla_custom_call_fn)bytes_in_order,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    const cxla_pass *two[2] = {&cxla_pass_async_desugar, &cxla_pass_layout};
    cxla_module *m =
        run_passes("HloModule m\n"
                   "ENTRY e { x = f32[2,3]{1,0} parameter(0)\n"
                   " t = f32[2,3]{0,1} copy(x)\n"
                   " s = ((f32[2,3]{0,1}), f32[2,3]{0,1}, s32[]) custom-call-start(t), "
                   "custom_call_target=\"desugar_bytes\"\n"
                   " c = f32[2,3]{0,1} custom-call-done(s)\n"
                   " ROOT r = f32[2,3]{1,0} copy(c) }\n",
                   two, 2, NULL);
    if (m) {
        const cxla_instr *cc = NULL;
        for (int64_t k = 0; k < m->comp_count; k++)
            for (int64_t i = 0; i < m->comps[k]->instr_count; i++)
                if (m->comps[k]->instrs[i]->opcode == CXLA_OP_CUSTOM_CALL)
                    cc = m->comps[k]->instrs[i];
        CHECK(cc != NULL && cc->parent != m->entry);
        if (cc) {
            const cxla_attr *a = cxla_instr_attr(cc, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS);
            CHECK(a && a->v.shapes.count == 1 && !cxla_layout_is_default(&a->v.shapes.items[0]));
            CHECK_EQ_I64(cc->shape.dims[0], 3); /* physical: f32[3,2] row-major */
            CHECK(cc->user_count == 1 && cc->users[0]->opcode == CXLA_OP_TRANSPOSE);
        }
        cxla_module_destroy(m);
    }
    CHECK_OK(cxla_custom_call_register("desugar_bytes", NULL, CXLA_CUSTOM_CALL_API_ORIGINAL));
}

TEST_MAIN(TEST(test_negate), TEST(test_control_and_reduce), TEST(test_side_effect_once),
          TEST(test_left_alone), TEST(test_dynamic_below_bounds),
          TEST(test_layout_of_wrapped_custom_call))
