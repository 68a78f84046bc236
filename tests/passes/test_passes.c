/* Unit tests of each pass on small modules: what it changes, what it must leave alone,
 * and (through pc_check_passes) that the interpreter's results stay bit-for-bit equal. */
#include <inttypes.h>

#include "cxla/custom_call.h"
#include "passes/epilogue.h"
#include "passes_check.h"

/* Parses |text|, runs |pass| with the before/after comparison; the module is the
 * caller's (NULL when something failed). */
static cxla_module *run_pass(const char *text, const cxla_pass *pass) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "test", &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        CHECK_MSG(false, "module rejected: %s", cxla_status_message(s));
        cxla_status_free(s);
        cxla_module_destroy(m);
        return NULL;
    }
    const cxla_pass *one[1] = {pass};
    if (!pc_check_passes(m, NULL, pass ? one : NULL, 1, pass ? pass->name : "cpu")) {
        cxla_module_destroy(m);
        return NULL;
    }
    return m;
}

/* run_pass with two passes in order. */
static cxla_module *run_passes2(const char *text, const cxla_pass *first, const cxla_pass *second) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "test", &m);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        CHECK_MSG(false, "module rejected: %s", cxla_status_message(s));
        cxla_status_free(s);
        cxla_module_destroy(m);
        return NULL;
    }
    const cxla_pass *two[2] = {first, second};
    if (!pc_check_passes(m, NULL, two, 2, second->name)) {
        cxla_module_destroy(m);
        return NULL;
    }
    return m;
}

static int64_t count_op(const cxla_computation *c, cxla_opcode op) {
    int64_t n = 0;
    for (int64_t i = 0; i < c->instr_count; i++) n += c->instrs[i]->opcode == op;
    return n;
}

static int64_t count_op_module(const cxla_module *m, cxla_opcode op) {
    int64_t n = 0;
    for (int64_t c = 0; c < m->comp_count; c++) n += count_op(m->comps[c], op);
    return n;
}

/* ---- IR support ------------------------------------------------------------------ */

static void test_ir_remove(void) {
    const char *text = "HloModule m\n"
                       "unused { p = f32[] parameter(0)\n ROOT n = f32[] negate(p) }\n"
                       "ENTRY e { a = f32[2] parameter(0)\n b = f32[2] negate(a)\n"
                       " c = f32[2] abs(a)\n ROOT d = f32[2] add(b, b) }\n";
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "t", &m));
    if (!m) return;
    cxla_computation *e = m->entry;
    CHECK_ERROR_HAS(cxla_computation_remove_instr(e, cxla_computation_find_instr(e, "b")),
                    "d still uses it");
    CHECK_ERROR_HAS(cxla_computation_remove_instr(e, cxla_computation_find_instr(e, "d")), "root");
    CHECK_ERROR_HAS(cxla_computation_remove_instr(e, cxla_computation_find_instr(e, "a")),
                    "parameter");
    cxla_instr *a = cxla_computation_find_instr(e, "a");
    CHECK_EQ_I64(a->user_count, 2);
    CHECK_OK(cxla_computation_remove_instr(e, cxla_computation_find_instr(e, "c")));
    CHECK_EQ_I64(a->user_count, 1);
    CHECK_EQ_I64(e->instr_count, 3);
    CHECK(cxla_computation_find_instr(e, "c") == NULL);
    int64_t removed = 0;
    CHECK_OK(cxla_module_remove_unreachable(m, &removed));
    CHECK_EQ_I64(removed, 1);
    CHECK(cxla_module_find_computation(m, "unused") == NULL);
    CHECK_OK(cxla_verify_module(m));
    cxla_module_destroy(m);
}

/* ---- DCE ------------------------------------------------------------------------- */

static void test_dce(void) {
    cxla_module *m = run_pass("HloModule m\n"
                              "dead { p = f32[] parameter(0)\n ROOT n = f32[] negate(p) }\n"
                              "ENTRY e { a = f32[4] parameter(0)\n"
                              " u1 = f32[4] exponential(a)\n u2 = f32[4] negate(u1)\n"
                              " lo = f32[] constant(0)\n hi = f32[] constant(1)\n"
                              " r = f32[4] rng(lo, hi), distribution=rng_uniform\n"
                              " ROOT s = f32[4] sqrt(a) }\n",
                              &cxla_pass_dce);
    if (!m) return;
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_EXP), 0);    /* dead chain removed */
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_NEGATE), 0); /* dead chain removed */
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_RNG), 1);    /* a side effect stays */
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_CONSTANT), 2);
    CHECK(cxla_module_find_computation(m, "dead") == NULL);
    CHECK_EQ_I64(m->entry->param_count, 1);
    cxla_module_destroy(m);
}

static void test_control_dependencies_stay(void) {
    const char *text = "HloModule m\n"
                       "ENTRY e { a = f32[4] parameter(0)\n"
                       " x1 = f32[4] exponential(a)\n"
                       " x2 = f32[4] exponential(a), control-predecessors={x1}\n"
                       " u = f32[4] negate(a)\n"
                       " v = f32[4] abs(a), control-predecessors={u}\n"
                       " ROOT r = f32[4] add(x1, x2) }\n";
    const cxla_pass *passes[] = {&cxla_pass_cse, &cxla_pass_dce, &cxla_pass_fusion};
    for (int k = 0; k < 3; k++) {
        cxla_module *m = run_pass(text, passes[k]);
        if (!m) continue;
        /* x2 is ordered after x1, v after u: none is merged, removed or fused away. */
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_EXP), 2);
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_NEGATE), 1);
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_ABS), 1);
        cxla_module_destroy(m);
    }
}

/* ---- inlining -------------------------------------------------------------------- */

static void test_inline(void) {
    cxla_module *m = run_pass(
        "HloModule m\n"
        "inner { p = f32[3] parameter(0)\n lo = f32[] constant(0)\n hi = f32[] constant(1)\n"
        " r = f32[3] rng(lo, hi), distribution=rng_uniform\n ROOT s = f32[3] add(p, r) }\n"
        "outer { p = f32[3] parameter(0)\n q = f32[3] parameter(1)\n"
        " c = f32[3] call(p), to_apply=inner\n ROOT m = f32[3] multiply(c, q) }\n"
        "ENTRY e { a = f32[3] parameter(0)\n b = f32[3] parameter(1)\n"
        " ROOT c = f32[3] call(a, b), to_apply=outer }\n",
        &cxla_pass_inline);
    if (!m) return;
    CHECK_EQ_I64(count_op_module(m, CXLA_OP_CALL), 0);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_RNG), 1); /* once per call, as before */
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_MULTIPLY), 1);
    CHECK_EQ_I64(m->comp_count, 1); /* inner and outer are gone */
    CHECK(m->entry->root->opcode == CXLA_OP_MULTIPLY);
    cxla_module_destroy(m);
}

/* ---- CSE ------------------------------------------------------------------------- */

static void test_cse(void) {
    cxla_module *m = run_pass(
        "HloModule m\n"
        "ENTRY e { a = f32[4] parameter(0)\n"
        " x1 = f32[4] exponential(a), metadata={op_name=\"one\"}\n"
        " x2 = f32[4] exponential(a), metadata={op_name=\"two\"}\n"
        " z1 = f32[] constant(0)\n z2 = f32[] constant(-0)\n z3 = f32[] constant(0)\n"
        " hi = f32[] constant(1)\n"
        " r1 = f32[4] rng(z1, hi), distribution=rng_uniform\n"
        " r2 = f32[4] rng(z1, hi), distribution=rng_uniform\n"
        " b1 = f32[4] broadcast(z1), dimensions={}\n b2 = f32[4] broadcast(z2), dimensions={}\n"
        " b3 = f32[4] broadcast(z3), dimensions={}\n"
        " t1 = f32[4] add(x1, x2)\n t2 = f32[4] add(r1, r2)\n t3 = f32[4] add(b1, b2)\n"
        " t4 = f32[4] add(t1, t2)\n t5 = f32[4] add(t3, b3)\n ROOT t = f32[4] add(t4, t5) }\n",
        &cxla_pass_cse);
    if (!m) return;
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_EXP), 1); /* merged despite metadata */
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_RNG), 2); /* never merged */
    /* 0, -0 and 1 stay; the second +0 merges, and so does its broadcast. */
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_CONSTANT), 3);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_BROADCAST), 2);
    cxla_module_destroy(m);
}

/* ---- simplifier ------------------------------------------------------------------ */

static void test_simplify_identities(void) {
    cxla_module *m =
        run_pass("HloModule m\n"
                 "ENTRY e { a = f32[16,16] parameter(0)\n i = s32[16,16] parameter(1)\n"
                 " nz = f32[] constant(-0)\n pz = f32[] constant(0)\n one = f32[] constant(1)\n"
                 " bnz = f32[16,16] broadcast(nz), dimensions={}\n"
                 " bpz = f32[16,16] broadcast(pz), dimensions={}\n"
                 " bone = f32[16,16] broadcast(one), dimensions={}\n"
                 " x1 = f32[16,16] add(a, bnz)\n"        /* -> a */
                 " x2 = f32[16,16] add(bpz, x1)\n"       /* kept: -0.0 + 0.0 is +0.0 */
                 " x3 = f32[16,16] multiply(bone, x2)\n" /* -> x2 */
                 " x4 = f32[16,16] divide(x3, bone)\n"   /* -> x3 */
                 " x5 = f32[16,16] subtract(x4, bpz)\n"  /* -> x4 */
                 " x6 = f32[16,16] subtract(x5, bnz)\n"  /* kept: -0.0 - -0.0 is +0.0 */
                 " iz = s32[] constant(0)\n bi = s32[16,16] broadcast(iz), dimensions={}\n"
                 " j1 = s32[16,16] add(i, bi)\n"                              /* -> i */
                 " j2 = s32[16,16] negate(j1)\n j3 = s32[16,16] negate(j2)\n" /* -> i */
                 " c = f32[16,16] convert(j3)\n"
                 " ROOT r = (f32[16,16], f32[16,16], f32[16,16]) tuple(x5, x6, c) }\n",
                 &cxla_pass_simplify);
    if (!m) return;
    /* 256 generated elements: -0.0 among them, so a wrong rewrite shows in the results. */
    const cxla_instr *r = m->entry->root;
    CHECK(r->opcode == CXLA_OP_TUPLE);
    const cxla_instr *x6 = r->operands[1], *c = r->operands[2];
    CHECK(r->operands[0] == x6->operands[0]); /* x5 is x2 now */
    CHECK(x6->opcode == CXLA_OP_SUBTRACT);
    CHECK(x6->operands[0]->opcode == CXLA_OP_ADD); /* x2, reached through x5..x3 */
    CHECK(x6->operands[0]->operands[1] == cxla_computation_find_instr(m->entry, "a"));
    CHECK(c->operands[0] == cxla_computation_find_instr(m->entry, "i"));
    cxla_module_destroy(m);
}

static void test_simplify_shapes(void) {
    cxla_module *m =
        run_pass("HloModule m\n"
                 "ENTRY e { a = f32[2,3,4] parameter(0)\n"
                 " t1 = f32[3,4,2] transpose(a), dimensions={1,2,0}\n"
                 " t2 = f32[2,3,4] transpose(t1), dimensions={2,0,1}\n"    /* identity: -> a */
                 " r1 = f32[6,4] reshape(t2)\n r2 = f32[24] reshape(r1)\n" /* one reshape of a */
                 " s = f32[24] slice(r2), slice={[0:24]}\n"                /* whole: -> r2 */
                 " k = f32[24] concatenate(s), dimensions={0}\n"           /* one operand: -> s */
                 " v = f32[24] convert(k)\n"                               /* same type: -> k */
                 " b1 = f32[5,24] broadcast(v), dimensions={1}\n"
                 " b2 = f32[7,5,24] broadcast(b1), dimensions={1,2}\n" /* -> broadcast(v) {2} */
                 " ROOT c = f32[7,5,24] copy(b2) }\n",                 /* same layout: -> b2 */
                 &cxla_pass_simplify);
    if (!m) return;
    const cxla_instr *r = m->entry->root;
    CHECK(r->opcode == CXLA_OP_BROADCAST);
    int64_t n;
    const int64_t *d = cxla_instr_ints(r, CXLA_ATTR_DIMENSIONS, &n);
    CHECK(n == 1 && d && d[0] == 2);
    const cxla_instr *rs = r->operands[0];
    CHECK(rs->opcode == CXLA_OP_RESHAPE);
    CHECK(rs->operands[0] == cxla_computation_find_instr(m->entry, "a"));
    cxla_module *m2 = run_pass("HloModule m\n"
                               "ENTRY e { a = f32[2,3] parameter(0)\n"
                               " t = f32[3,2] transpose(a), dimensions={1,0}\n"
                               " ROOT u = f32[3,2] transpose(t), dimensions={0,1} }\n",
                               &cxla_pass_simplify);
    if (m2) {
        CHECK(m2->entry->root->opcode == CXLA_OP_TRANSPOSE);
        CHECK(m2->entry->root->operands[0]->opcode == CXLA_OP_PARAMETER);
    }
    cxla_module_destroy(m2);
    cxla_module_destroy(m);
}

/* ---- constant folding ------------------------------------------------------------ */

static void test_constant_fold(void) {
    cxla_module *m = run_pass(
        "HloModule m\n"
        "add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y) }\n"
        "ENTRY e { a = f32[3] parameter(0)\n"
        " c1 = f32[3] constant({1, 2, 3})\n c2 = f32[3] constant({0.5, -0, 4})\n"
        " m = f32[3] multiply(c1, c2)\n z = f32[] constant(0)\n"
        " s = f32[] reduce(m, z), dimensions={0}, to_apply=add\n"
        " big = f32[4096] broadcast(z), dimensions={}\n"
        " io = s32[3] iota(), iota_dimension=0\n"
        " hi = f32[] constant(1)\n r = f32[3] rng(z, hi), distribution=rng_uniform\n"
        " rn = f32[3] negate(r)\n"
        " bs = f32[3] broadcast(s), dimensions={}\n io2 = f32[3] convert(io)\n"
        " t = f32[3] add(bs, io2)\n u = f32[3] add(t, rn)\n"
        " sb = f32[1] slice(big), slice={[0:1]}\n"
        " ROOT out = f32[3] add(u, a) }\n",
        &cxla_pass_constant_fold);
    if (!m) return;
    const cxla_computation *e = m->entry;
    CHECK_EQ_I64(count_op(e, CXLA_OP_REDUCE), 0); /* folded, with the multiply */
    CHECK_EQ_I64(count_op(e, CXLA_OP_MULTIPLY), 0);
    CHECK_EQ_I64(count_op(e, CXLA_OP_RNG), 1);     /* never folded */
    CHECK_EQ_I64(count_op(e, CXLA_OP_NEGATE), 1);  /* reads rng */
    CHECK_EQ_I64(count_op(e, CXLA_OP_IOTA), 1);    /* kept: cheaper than a constant */
    CHECK_EQ_I64(count_op(e, CXLA_OP_CONVERT), 1); /* reads iota */
    CHECK_EQ_I64(count_op(e, CXLA_OP_BROADCAST), 2);
    cxla_module_destroy(m);
}

/* ---- layout ---------------------------------------------------------------------- */

static bool all_default(const cxla_module *m) {
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            const cxla_shape *s = &m->comps[c]->instrs[i]->shape;
            if (cxla_type_is_array(s->type) && !cxla_layout_is_default(s)) return false;
        }
    return true;
}

static void test_layout(void) {
    cxla_module *m =
        run_pass("HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[3,2]{0,1}}\n"
                 "ENTRY e { a = f32[2,3]{0,1} parameter(0)\n"
                 " c = f32[2,3]{1,0} copy(a)\n"
                 " b = f32[3,2]{1,0} bitcast(a)\n"
                 " k = f32[2,3]{0,1} constant({{1, 2, 3}, {4, 5, 6}})\n"
                 " x = f32[2,3]{0,1} add(c, k)\n"
                 " t = f32[3,2]{0,1} transpose(x), dimensions={1,0}\n"
                 " ROOT r = f32[3,2]{0,1} add(t, b) }\n",
                 &cxla_pass_layout);
    if (!m) return;
    CHECK(all_default(m));
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_BITCAST), 0);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_COPY), 0);
    /* The boundary keeps its layouts. */
    CHECK(m->has_entry_layout);
    CHECK(!cxla_layout_is_default(&m->entry_param_shapes[0]));
    CHECK(!cxla_layout_is_default(&m->entry_result_shape));
    cxla_module_destroy(m);
}

/* A foreign custom call keeps the layouts its target sees: its operand's layout as
 * operand_layout_constraints, its result in physical form (f32[3,2] row-major: the bytes
 * of f32[2,3]{0,1}) with a transpose back; a built-in target's layouts are plain values. */
static void bytes_in_order(void *out, const void **in) {
    const float *x = in[0];
    float *y = out;
    for (int i = 0; i < 6; i++) y[i] = x[i] + 10.0f * (float)i;
}

static void test_layout_custom_call(void) {
    CHECK_OK(cxla_custom_call_register("passes_bytes", (cxla_custom_call_fn)bytes_in_order,
                                       CXLA_CUSTOM_CALL_API_ORIGINAL));
    cxla_module *m =
        run_pass("HloModule m\n"
                 "ENTRY e { x = f32[2,3]{1,0} parameter(0)\n"
                 " t = f32[2,3]{0,1} copy(x)\n"
                 " c = f32[2,3]{0,1} custom-call(t), custom_call_target=\"passes_bytes\"\n"
                 " s = f32[2,3]{0,1} custom-call(c), custom_call_target=\"Sharding\"\n"
                 " ROOT r = f32[2,3]{1,0} copy(s) }\n",
                 &cxla_pass_layout);
    if (m) {
        CHECK(all_default(m));
        const cxla_instr *c = cxla_computation_find_instr(m->entry, "c");
        CHECK(c != NULL);
        if (c) {
            CHECK_EQ_I64(c->shape.dims[0], 3); /* physical: f32[3,2] row-major */
            CHECK_EQ_I64(c->shape.dims[1], 2);
            const cxla_attr *a = cxla_instr_attr(c, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS);
            CHECK(a && a->v.shapes.count == 1 && !cxla_layout_is_default(&a->v.shapes.items[0]));
            CHECK(c->user_count == 1 && c->users[0]->opcode == CXLA_OP_TRANSPOSE);
        }
        const cxla_instr *sh = cxla_computation_find_instr(m->entry, "s");
        CHECK(sh && !cxla_instr_attr(sh, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS));
        cxla_module_destroy(m);
    }
    CHECK_OK(cxla_custom_call_register("passes_bytes", NULL, CXLA_CUSTOM_CALL_API_ORIGINAL));
}

/* ---- TopK decomposition ------------------------------------------------------------ */

static void test_topk_decompose(void) {
    /* GE: a stable sort by it and slices; GT stays a custom call (the topk operation). */
    cxla_module *m = run_pass(
        "HloModule m\n"
        "ge { x = s32[] parameter(0)\n y = s32[] parameter(1)\n"
        " ROOT c = pred[] compare(x, y), direction=GE }\n"
        "gt { x = s32[] parameter(0)\n y = s32[] parameter(1)\n"
        " ROOT c = pred[] compare(x, y), direction=GT }\n"
        "ENTRY e { a = s32[2,5] parameter(0)\n"
        " t = (s32[2,3], s32[2,3]) custom-call(a), custom_call_target=\"TopK\", to_apply=ge\n"
        " u = (s32[2,2], s32[2,2]) custom-call(a), custom_call_target=\"TopK\", to_apply=gt\n"
        " ROOT r = ((s32[2,3], s32[2,3]), (s32[2,2], s32[2,2])) tuple(t, u) }\n",
        &cxla_pass_topk_decompose);
    if (m) {
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_CUSTOM_CALL), 1);
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_SORT), 1);
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_SLICE), 2);
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_IOTA), 1);
        for (int64_t i = 0; i < m->entry->instr_count; i++) {
            const cxla_instr *in = m->entry->instrs[i];
            if (in->opcode != CXLA_OP_SORT) continue;
            const cxla_computation *cmp = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
            CHECK(cmp && cmp->param_count == 4); /* two index parameters added */
            CHECK(cxla_instr_bool(in, CXLA_ATTR_IS_STABLE));
        }
        cxla_module_destroy(m);
    }
    /* A custom-call-start of one, once async-desugar made it an async-start of a
     * computation, is decomposed there. */
    m = run_passes2("HloModule m\n"
                    "ge { x = f32[] parameter(0)\n y = f32[] parameter(1)\n"
                    " i = s32[] parameter(2)\n j = s32[] parameter(3)\n"
                    " ROOT c = pred[] compare(x, y), direction=GE }\n"
                    "ENTRY e { a = f32[6] parameter(0)\n"
                    " s = ((f32[6]), (f32[2], s32[2]), s32[]) custom-call-start(a), "
                    "custom_call_target=\"TopK\", to_apply=ge\n"
                    " ROOT d = (f32[2], s32[2]) custom-call-done(s) }\n",
                    &cxla_pass_async_desugar, &cxla_pass_topk_decompose);
    if (m) {
        const cxla_instr *st = m->entry->root->operands[0];
        CHECK(st->opcode == CXLA_OP_ASYNC_START && st->async_wrapped == CXLA_OP_COUNT);
        const cxla_computation *w = cxla_instr_called(st, CXLA_ATTR_CALLS);
        CHECK(w && count_op(w, CXLA_OP_SORT) == 1);
        CHECK(m->entry->root->async_wrapped == CXLA_OP_COUNT);
        cxla_module_destroy(m);
    }
}

/* ---- dot canonicalization -------------------------------------------------------- */

static void test_dot_canon(void) {
    cxla_module *m =
        run_pass("HloModule m\n"
                 "ENTRY e { a = f32[3,2,4,5] parameter(0)\n b = f32[5,2,6,4] parameter(1)\n"
                 " ROOT d = f32[2,3,6] dot(a, b), lhs_batch_dims={1}, rhs_batch_dims={1},"
                 " lhs_contracting_dims={3,2}, rhs_contracting_dims={0,3} }\n",
                 &cxla_pass_dot_canon);
    if (!m) return;
    const cxla_instr *r = m->entry->root;
    CHECK(r->opcode == CXLA_OP_RESHAPE);
    const cxla_instr *d = r->operands[0];
    CHECK(d->opcode == CXLA_OP_DOT);
    CHECK_EQ_I64(d->shape.rank, 3);
    CHECK_EQ_I64(d->shape.dims[0], 2);
    CHECK_EQ_I64(d->shape.dims[1], 3);
    CHECK_EQ_I64(d->shape.dims[2], 6);
    CHECK_EQ_I64(d->operands[0]->shape.dims[2], 20);
    int64_t n;
    const int64_t *c = cxla_instr_ints(d, CXLA_ATTR_RHS_CONTRACTING_DIMS, &n);
    CHECK(n == 1 && c[0] == 1);
    cxla_module_destroy(m);
    /* Already canonical: untouched. */
    m = run_pass("HloModule m\n"
                 "ENTRY e { a = f32[3,4] parameter(0)\n b = f32[4,5] parameter(1)\n"
                 " ROOT d = f32[3,5] dot(a, b), lhs_contracting_dims={1},"
                 " rhs_contracting_dims={0} }\n",
                 &cxla_pass_dot_canon);
    if (m) CHECK_EQ_I64(m->entry->instr_count, 3);
    cxla_module_destroy(m);
}

/* ---- fusion ---------------------------------------------------------------------- */

static const cxla_computation *fused(const cxla_instr *f) {
    return cxla_instr_called(f, CXLA_ATTR_CALLS);
}

/* ---- convolution canonicalization ----------------------------------------------------- */

static const cxla_instr *the_conv(const cxla_computation *c) {
    for (int64_t i = 0; i < c->instr_count; i++)
        if (c->instrs[i]->opcode == CXLA_OP_CONVOLUTION) return c->instrs[i];
    return NULL;
}

static void test_conv_canon(void) {
    /* A weight-gradient layout: every tensor transposed to b01f_01io->b01f and back. */
    cxla_module *m = run_pass(
        "HloModule m\n"
        "ENTRY e { x = f32[3,5,2,4] parameter(0)\n k = f32[6,2,3,3] parameter(1)\n"
        " ROOT c = f32[6,5,2,4] convolution(x, k), window={size=3x2 pad=1_1x0_1 rhs_dilate=1x1}, "
        "dim_labels=f01b_o10i->f01b }\n",
        &cxla_pass_conv_canon);
    if (m) {
        const cxla_instr *c = the_conv(m->entry);
        CHECK(c != NULL);
        if (c) {
            const cxla_attr *dl = cxla_instr_attr(c, CXLA_ATTR_DIM_LABELS);
            const cxla_conv_dims *d = &dl->v.conv;
            CHECK_EQ_I64(d->input_batch, 0);
            CHECK_EQ_I64(d->input_feature, 3);
            CHECK_EQ_I64(d->kernel_input_feature, 2);
            CHECK_EQ_I64(d->kernel_output_feature, 3);
            CHECK_EQ_I64(d->output_feature, 3);
            CHECK_EQ_I64(d->input_spatial[0], 1);
            CHECK_EQ_I64(d->kernel_spatial[1], 1);
        }
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_TRANSPOSE), 3);
        CHECK(m->entry->root->opcode == CXLA_OP_TRANSPOSE);
        cxla_module_destroy(m);
    }
    /* Grouped, with the activations b01f already but the result f01b: only what moves. */
    m = run_pass("HloModule m\n"
                 "ENTRY e { x = f32[2,7,4] parameter(0)\n k = f32[3,2,6] parameter(1)\n"
                 " ROOT c = f32[6,5,2] convolution(x, k), window={size=3}, "
                 "dim_labels=b0f_0io->f0b, feature_group_count=2 }\n",
                 &cxla_pass_conv_canon);
    if (m) {
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_TRANSPOSE), 1); /* the result only */
        cxla_module_destroy(m);
    }
    /* A depthwise weight gradient (batch groups, JAX's f01b_i01o->01bf) stays as it is: oneDNN's
     * backward weights reads its f01b lhs as NHWC. */
    m = run_pass("HloModule m\n"
                 "ENTRY e { x = f32[2,6,6,4] parameter(0)\n dy = f32[2,6,6,4] parameter(1)\n"
                 " ROOT c = f32[3,3,1,4] convolution(x, dy), window={size=6x6 pad=1_1x1_1}, "
                 "dim_labels=f01b_i01o->01bf, batch_group_count=4 }\n",
                 &cxla_pass_conv_canon);
    if (m) {
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_TRANSPOSE), 0);
        cxla_module_destroy(m);
    }
    /* So does a 1x1 convolution's weight gradient (one group, window 6x6 > output 1x1). */
    m = run_pass("HloModule m\n"
                 "ENTRY e { x = f32[2,6,6,4] parameter(0)\n dy = f32[2,6,6,8] parameter(1)\n"
                 " ROOT c = f32[1,1,4,8] convolution(x, dy), window={size=6x6}, "
                 "dim_labels=f01b_i01o->01bf }\n",
                 &cxla_pass_conv_canon);
    if (m) {
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_TRANSPOSE), 0);
        CHECK(cxla_conv_is_weight_gradient(the_conv(m->entry)));
        cxla_module_destroy(m);
    }
    /* NHWC and NCHW activations stay as they are, whatever the kernel's layout. */
    m = run_pass("HloModule m\n"
                 "ENTRY e { x = f32[2,4,6,6] parameter(0)\n k = f32[3,3,4,5] parameter(1)\n"
                 " ROOT c = f32[2,5,4,4] convolution(x, k), window={size=3x3}, "
                 "dim_labels=bf01_01io->bf01 }\n",
                 &cxla_pass_conv_canon);
    if (m) {
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_TRANSPOSE), 0);
        cxla_module_destroy(m);
    }
    /* conv-canon-all (for tests) rewrites those too: NCHW input and output, OIHW kernel. */
    m = run_pass("HloModule m\n"
                 "ENTRY e { x = f32[2,4,6,6] parameter(0)\n k = f32[5,4,3,3] parameter(1)\n"
                 " ROOT c = f32[2,5,4,4] convolution(x, k), window={size=3x3}, "
                 "dim_labels=bf01_oi01->bf01 }\n",
                 &cxla_pass_conv_canon_all);
    if (m) {
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_TRANSPOSE), 3);
        cxla_module_destroy(m);
    }
}

/* ---- output fusion ------------------------------------------------------------------- */

static const cxla_instr *only_output_fusion(const cxla_computation *c) {
    const cxla_instr *found = NULL;
    int64_t n = 0;
    for (int64_t i = 0; i < c->instr_count; i++) {
        const cxla_instr *in = c->instrs[i];
        if (in->opcode != CXLA_OP_FUSION) continue;
        const char *kind = cxla_instr_word(in, CXLA_ATTR_KIND);
        if (kind && strcmp(kind, "kOutput") == 0) found = in, n++;
    }
    CHECK_EQ_I64(n, 1);
    return n == 1 ? found : NULL;
}

/* tanh after a dense layer joins the fusion (EPI_TANH); not after a relu, nor on a bf16
 * chain. */
static void test_output_fusion_tanh(void) {
    cxla_module *m =
        run_pass("HloModule m\n"
                 "ENTRY e { x = f32[8,16] parameter(0)\n w = f32[16,4] parameter(1)\n"
                 " b = f32[4] parameter(2)\n"
                 " d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 " bb = f32[8,4] broadcast(b), dimensions={1}\n s = f32[8,4] add(d, bb)\n"
                 " ROOT r = f32[8,4] tanh(s) }\n",
                 &cxla_pass_output_fusion);
    if (!m) return;
    const cxla_instr *f = only_output_fusion(m->entry);
    CHECK(f == m->entry->root);
    if (f) {
        cxla_epilogue e;
        CHECK(cxla_epilogue_match(f, &e));
        CHECK_EQ_I64(e.count, 2);
        if (e.count == 2)
            CHECK(e.ops[0].kind == CXLA_EPI_ADD_VEC && e.ops[1].kind == CXLA_EPI_TANH);
    }
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_TANH), 0);
    cxla_module_destroy(m);
    static const char *const unfused[] = {
        "HloModule m\n"
        "ENTRY e { x = f32[8,16] parameter(0)\n w = f32[16,4] parameter(1)\n"
        " d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        " z = f32[] constant(0)\n zb = f32[8,4] broadcast(z), dimensions={}\n"
        " m = f32[8,4] maximum(d, zb)\n ROOT r = f32[8,4] tanh(m) }\n",
        "HloModule m\n"
        "ENTRY e { x = bf16[8,16] parameter(0)\n w = bf16[16,4] parameter(1)\n"
        " b = bf16[4] parameter(2)\n"
        " d = bf16[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        " bb = bf16[8,4] broadcast(b), dimensions={1}\n s = bf16[8,4] add(d, bb)\n"
        " ROOT r = bf16[8,4] tanh(s) }\n"};
    for (int k = 0; k < 2; k++) {
        m = run_pass(unfused[k], &cxla_pass_output_fusion);
        if (!m) continue;
        /* The tanh stays outside, after the fused product (relu, or the bias). */
        CHECK_MSG(m->entry->root->opcode == CXLA_OP_TANH, "case %d: root is %s", k,
                  m->entry->root->name);
        CHECK(only_output_fusion(m->entry) != NULL);
        cxla_module_destroy(m);
    }
}

static void test_output_fusion_dense(void) {
    /* A dense layer: dot, bias broadcast along N, relu; the fusion's shape is the root's. */
    cxla_module *m =
        run_pass("HloModule m\n"
                 "ENTRY e { x = f32[8,16] parameter(0)\n w = f32[16,4] parameter(1)\n"
                 " b = f32[4] parameter(2)\n"
                 " d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 " bb = f32[8,4] broadcast(b), dimensions={1}\n s = f32[8,4] add(bb, d)\n"
                 " z = f32[] constant(0)\n zb = f32[8,4] broadcast(z), dimensions={}\n"
                 " ROOT r = f32[8,4] maximum(s, zb) }\n",
                 &cxla_pass_output_fusion);
    if (!m) return;
    const cxla_instr *f = only_output_fusion(m->entry);
    CHECK(f == m->entry->root);
    if (f) {
        CHECK_EQ_I64(f->operand_count, 3); /* x, w, b */
        const cxla_computation *fc = fused(f);
        CHECK_EQ_I64(count_op(fc, CXLA_OP_DOT), 1);
        CHECK_EQ_I64(count_op(fc, CXLA_OP_ADD), 1);
        CHECK_EQ_I64(count_op(fc, CXLA_OP_MAXIMUM), 1);
        cxla_epilogue e;
        CHECK(cxla_epilogue_match(f, &e));
        CHECK_EQ_I64(e.count, 2);
        if (e.count == 2) {
            CHECK(e.ops[0].kind == CXLA_EPI_ADD_VEC && e.ops[1].kind == CXLA_EPI_RELU);
        }
    }
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_DOT), 0);
    cxla_module_destroy(m);
    /* JAX's bias of a [1, N] product: a reshape [N] -> [1, N] in place of the broadcast. */
    m = run_pass("HloModule m\n"
                 "ENTRY e { x = f32[1,16] parameter(0)\n w = f32[16,4] parameter(1)\n"
                 " b = f32[4] parameter(2)\n"
                 " d = f32[1,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 " br = f32[1,4] reshape(b)\n ROOT s = f32[1,4] add(d, br) }\n",
                 &cxla_pass_output_fusion);
    if (!m) return;
    f = only_output_fusion(m->entry);
    if (f) {
        cxla_epilogue e;
        CHECK(cxla_epilogue_match(f, &e));
        CHECK_EQ_I64(e.count, 1);
        CHECK(f->operands[2] == cxla_computation_find_instr(m->entry, "b"));
    }
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_RESHAPE), 0);
    cxla_module_destroy(m);
}

static void test_output_fusion_arrays(void) {
    /* SGD's update w - lr * dot(h, d): the scale joins the dot, the subtraction from the
     * array w stays outside (oneDNN 2.6's binary post-op over a whole tensor made a
     * 784x256x1024 matmul 0.43 ms slower, twice what the separate pass costs). */
    cxla_module *m =
        run_pass("HloModule m\n"
                 "ENTRY e { h = f32[20,16] parameter(0)\n d = f32[20,24] parameter(1)\n"
                 " w = f32[16,24] parameter(2)\n"
                 " g = f32[16,24] dot(h, d), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                 " lr = f32[] constant(0.1)\n lb = f32[16,24] broadcast(lr), dimensions={}\n"
                 " u = f32[16,24] multiply(lb, g)\n"
                 " ROOT wn = f32[16,24] subtract(w, u) }\n",
                 &cxla_pass_output_fusion);
    if (!m) return;
    const cxla_instr *f = only_output_fusion(m->entry);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_SUBTRACT), 1);
    if (f) {
        CHECK_EQ_I64(f->operand_count, 2);
        cxla_epilogue e;
        CHECK(cxla_epilogue_match(f, &e));
        CHECK_EQ_I64(e.count, 1);
        if (e.count == 1) CHECK(e.ops[0].kind == CXLA_EPI_SCALE);
    }
    cxla_module_destroy(m);
    /* With 4 columns the product is narrow (epilogue.h: the emitter's kernel, not oneDNN's):
     * no output fusion. */
    m = run_pass("HloModule m\n"
                 "ENTRY e { h = f32[8,16] parameter(0)\n d = f32[8,4] parameter(1)\n"
                 " w = f32[16,4] parameter(2)\n"
                 " g = f32[16,4] dot(h, d), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                 " lr = f32[] constant(0.1)\n lb = f32[16,4] broadcast(lr), dimensions={}\n"
                 " u = f32[16,4] multiply(lb, g)\n"
                 " ROOT wn = f32[16,4] subtract(w, u) }\n",
                 &cxla_pass_output_fusion);
    if (!m) return;
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_FUSION), 0);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_DOT), 1);
    cxla_module_destroy(m);
}

static void test_output_fusion_convert(void) {
    /* An f32 product and its bias stored as bf16: the convert ends the fusion, whose type
     * is bf16; a widening convert (of a bf16 product), a convert to f16 and what follows
     * a convert stay outside. */
    cxla_module *m =
        run_pass("HloModule m\n"
                 "ENTRY e { x = bf16[8,16] parameter(0)\n w = bf16[16,4] parameter(1)\n"
                 " b = f32[4] parameter(2)\n h = f32[8,16] parameter(3)\n"
                 " w3 = f32[16,4] parameter(4)\n"
                 " d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 " bb = f32[8,4] broadcast(b), dimensions={1}\n s = f32[8,4] add(d, bb)\n"
                 " c = bf16[8,4] convert(s)\n n = bf16[8,4] negate(c)\n"
                 " d2 = bf16[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 " c2 = f32[8,4] convert(d2)\n"
                 " d3 = f32[8,4] dot(h, w3), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 " c3 = f16[8,4] convert(d3)\n"
                 " ROOT t = (bf16[8,4], f32[8,4], f16[8,4]) tuple(n, c2, c3) }\n",
                 &cxla_pass_output_fusion);
    if (!m) return;
    const cxla_instr *f = only_output_fusion(m->entry);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_DOT), 2);     /* d2, d3 */
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_CONVERT), 2); /* c2, c3 */
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_NEGATE), 1);
    if (f) {
        CHECK(f->shape.type == CXLA_BF16);
        cxla_epilogue e;
        CHECK(cxla_epilogue_match(f, &e));
        CHECK_EQ_I64(e.count, 2);
        CHECK(e.out == CXLA_BF16);
        if (e.count == 2)
            CHECK(e.ops[0].kind == CXLA_EPI_ADD_VEC && e.ops[1].kind == CXLA_EPI_CONVERT);
    }
    cxla_module_destroy(m);
}

static void test_output_fusion_conv_batch_norm(void) {
    /* ResNet's block: convolution, bias, batch-norm scale and shift per channel (vectors
     * of shape [1,C] broadcast along {0,3}: reshaped to [C] outside), relu. */
    cxla_module *m = run_pass(
        "HloModule m\n"
        "ENTRY e { x = f32[1,6,6,3] parameter(0)\n k = f32[3,3,3,4] parameter(1)\n"
        " b = f32[1,4] parameter(2)\n g = f32[1,4] parameter(3)\n h = f32[4] parameter(4)\n"
        " c = f32[1,6,6,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, "
        "dim_labels=b01f_01io->b01f\n"
        " bb = f32[1,6,6,4] broadcast(b), dimensions={0,3}\n s = f32[1,6,6,4] add(c, bb)\n"
        " gb = f32[1,6,6,4] broadcast(g), dimensions={0,3}\n t = f32[1,6,6,4] multiply(s, gb)\n"
        " hb = f32[1,6,6,4] broadcast(h), dimensions={3}\n u = f32[1,6,6,4] subtract(t, hb)\n"
        " z = f32[] constant(0)\n zb = f32[1,6,6,4] broadcast(z), dimensions={}\n"
        " ROOT r = f32[1,6,6,4] maximum(u, zb) }\n",
        &cxla_pass_output_fusion);
    if (!m) return;
    const cxla_instr *f = only_output_fusion(m->entry);
    if (f) {
        cxla_epilogue e;
        CHECK(cxla_epilogue_match(f, &e));
        CHECK_EQ_I64(e.count, 4);
        if (e.count == 4) CHECK(e.ops[2].kind == CXLA_EPI_SUB_VEC);
        CHECK_EQ_I64(f->operand_count, 5);
        CHECK_EQ_I64(count_op(m->entry, CXLA_OP_RESHAPE), 2); /* b and g */
    }
    cxla_module_destroy(m);
}

static void test_output_fusion_limits(void) {
    /* The product used twice: nothing fused. A bias along M: nothing. A relu then a
     * negative scale: the relu joins, the scale stays outside. */
    cxla_module *m =
        run_pass("HloModule m\n"
                 "ENTRY e { x = f32[8,16] parameter(0)\n w = f32[16,4] parameter(1)\n"
                 " bm = f32[8] parameter(2)\n"
                 " d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 " n = f32[8,4] negate(d)\n"
                 " bb = f32[8,4] broadcast(bm), dimensions={0}\n s = f32[8,4] add(d, bb)\n"
                 " d2 = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 " s2 = f32[8,4] add(d2, bb)\n"
                 " d3 = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 " z = f32[] constant(0)\n zb = f32[8,4] broadcast(z), dimensions={}\n"
                 " r3 = f32[8,4] maximum(d3, zb)\n"
                 " c = f32[] constant(-2)\n cb = f32[8,4] broadcast(c), dimensions={}\n"
                 " m3 = f32[8,4] multiply(r3, cb)\n"
                 " b4 = f32[4] parameter(3)\n bb4 = f32[8,4] broadcast(b4), dimensions={1}\n"
                 " d4 = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 " s4 = f32[8,4] subtract(bb4, d4)\n" /* v - x: not a post-op */
                 " ROOT t = (f32[8,4], f32[8,4], f32[8,4], f32[8,4], f32[8,4]) "
                 "tuple(n, s, s2, m3, s4) }\n",
                 &cxla_pass_output_fusion);
    if (!m) return;
    const cxla_instr *f = only_output_fusion(m->entry);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_DOT), 3);
    if (f) {
        CHECK_EQ_I64(count_op(fused(f), CXLA_OP_MAXIMUM), 1);
        CHECK_EQ_I64(count_op(fused(f), CXLA_OP_MULTIPLY), 0);
    }
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_MULTIPLY), 1);
    cxla_module_destroy(m);
}

static void test_output_fusion_bf16(void) {
    /* A bf16 chain (bias, relu, scale) joins its bf16 product; the convert to f32 after it
     * ends the chain, and stays outside. */
    cxla_module *m =
        run_pass("HloModule m\n"
                 "ENTRY e { x = bf16[8,16] parameter(0)\n w = bf16[16,4] parameter(1)\n"
                 " b = bf16[4] parameter(2)\n"
                 " d = bf16[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 " bb = bf16[8,4] broadcast(b), dimensions={1}\n s = bf16[8,4] add(d, bb)\n"
                 " z = bf16[] constant(0)\n zb = bf16[8,4] broadcast(z), dimensions={}\n"
                 " r = bf16[8,4] maximum(s, zb)\n"
                 " c = bf16[] constant(0.5)\n cb = bf16[8,4] broadcast(c), dimensions={}\n"
                 " y = bf16[8,4] multiply(r, cb)\n"
                 " ROOT f = f32[8,4] convert(y) }\n",
                 &cxla_pass_output_fusion);
    if (!m) return;
    const cxla_instr *f = only_output_fusion(m->entry);
    CHECK(f != NULL);
    if (f) {
        CHECK(f->shape.type == CXLA_BF16);
        CHECK_EQ_I64(count_op(fused(f), CXLA_OP_DOT), 1);
        CHECK_EQ_I64(count_op(fused(f), CXLA_OP_ADD), 1);
        CHECK_EQ_I64(count_op(fused(f), CXLA_OP_MAXIMUM), 1);
        CHECK_EQ_I64(count_op(fused(f), CXLA_OP_MULTIPLY), 1);
        cxla_epilogue e;
        CHECK(cxla_epilogue_match(f, &e));
        CHECK_EQ_I64(e.count, 3);
    }
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_CONVERT), 1);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_DOT), 0);
    cxla_module_destroy(m);
}

static void test_fusion_loop(void) {
    cxla_module *m =
        run_pass("HloModule m\n"
                 "ENTRY e { a = f32[8,16] parameter(0)\n w = f32[16,4] parameter(1)\n"
                 " h = f32[] constant(0.5)\n bh = f32[8,16] broadcast(h), dimensions={}\n"
                 " x = f32[8,16] multiply(a, bh)\n t = f32[8,16] tanh(x)\n"
                 " e1 = f32[8,16] exponential(a)\n" /* used twice, not cheap: not duplicated */
                 " y = f32[8,16] add(t, e1)\n z = f32[8,16] subtract(e1, bh)\n"
                 " d = f32[8,4] dot(y, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 " dz = f32[8,4] dot(z, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 " ROOT r = f32[8,4] add(d, dz) }\n",
                 &cxla_pass_fusion);
    if (!m) return;
    const cxla_computation *e = m->entry;
    CHECK_EQ_I64(count_op(e, CXLA_OP_DOT), 2); /* never fused */
    CHECK_EQ_I64(count_op(e, CXLA_OP_EXP), 1); /* shared and expensive: stays outside */
    CHECK_EQ_I64(count_op(e, CXLA_OP_FUSION), 2);
    const cxla_instr *d = cxla_computation_find_instr(e, "d");
    const cxla_instr *f = d ? d->operands[0] : NULL;
    CHECK(f && f->opcode == CXLA_OP_FUSION);
    if (f && f->opcode == CXLA_OP_FUSION) {
        CHECK_EQ_STR(cxla_instr_word(f, CXLA_ATTR_KIND), "kLoop");
        const cxla_computation *fc = fused(f);
        CHECK_EQ_I64(count_op(fc, CXLA_OP_TANH), 1);
        CHECK_EQ_I64(count_op(fc, CXLA_OP_MULTIPLY), 1);
        CHECK_EQ_I64(count_op(fc, CXLA_OP_BROADCAST), 1); /* duplicated into both fusions */
        CHECK_EQ_I64(fc->param_count, 2);                 /* a and e1 */
    }
    CHECK_EQ_I64(count_op(e, CXLA_OP_TANH), 0);
    cxla_module_destroy(m);
}

static void test_fusion_input_and_side_effects(void) {
    cxla_module *m = run_pass(
        "HloModule m\n"
        "add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y) }\n"
        "ENTRY e { a = f32[8,16] parameter(0)\n z = f32[] constant(0)\n"
        " hi = f32[] constant(1)\n r = f32[8,16] rng(z, hi), distribution=rng_uniform\n"
        " m = f32[8,16] multiply(a, r)\n q = f32[8,16] exponential(m)\n"
        " ROOT s = f32[8] reduce(q, z), dimensions={1}, to_apply=add }\n",
        &cxla_pass_fusion);
    if (!m) return;
    const cxla_instr *root = m->entry->root;
    CHECK(root->opcode == CXLA_OP_FUSION);
    CHECK_EQ_STR(cxla_instr_word(root, CXLA_ATTR_KIND), "kInput");
    CHECK(fused(root)->root->opcode == CXLA_OP_REDUCE);
    CHECK_EQ_I64(count_op(fused(root), CXLA_OP_EXP), 1);
    CHECK_EQ_I64(count_op(fused(root), CXLA_OP_RNG), 0); /* a side effect stays outside */
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_RNG), 1);
    cxla_module_destroy(m);
}

static void test_fusion_multi_output(void) {
    /* Layer norm's statistics (fast variance): mean and mean of squares read x. */
    cxla_module *m = run_pass(
        "HloModule m\n"
        "add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y) }\n"
        "ENTRY e { x = f32[8,256] parameter(0)\n z = f32[] constant(0)\n"
        " c = f32[8,256] convert(x)\n"
        " s1 = f32[8] reduce(c, z), dimensions={1}, to_apply=add\n"
        " sq = f32[8,256] multiply(x, x)\n"
        " s2 = f32[8] reduce(sq, z), dimensions={1}, to_apply=add\n"
        " m1 = f32[8] multiply(s1, s1)\n ROOT v = f32[8] subtract(s2, m1) }\n",
        &cxla_pass_fusion);
    if (!m) return;
    int64_t tuples = 0;
    for (int64_t i = 0; i < m->entry->instr_count; i++) {
        const cxla_instr *in = m->entry->instrs[i];
        if (in->opcode == CXLA_OP_FUSION && in->shape.type == CXLA_TUPLE) {
            tuples++;
            CHECK_EQ_I64(in->operand_count, 1); /* x, read once */
            CHECK_EQ_I64(count_op(fused(in), CXLA_OP_REDUCE), 2);
        }
    }
    CHECK_EQ_I64(tuples, 1);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_GET_TUPLE_ELEMENT), 2);
    cxla_module_destroy(m);
}

/* Siblings that share x merge unless one reads the other (s2 scales x by s1); each with
 * |filler| unused constants in front, so that the computation is small (reachability
 * as bit sets) or large (fusion.c's walk over operands, past REACH_BITS_MAX). */
static void multi_output_case(int64_t filler, bool dependent, int64_t want_tuples) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_puts(&b, "HloModule m\n"
                         "add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n"
                         " ROOT s = f32[] add(x, y) }\n"
                         "ENTRY e { x = f32[8,256] parameter(0)\n z = f32[] constant(0)\n");
    for (int64_t i = 0; i < filler; i++)
        cxla_strbuf_printf(&b, " k%lld = f32[] constant(%lld)\n", (long long)i, (long long)i);
    cxla_strbuf_puts(&b, " c = f32[8,256] convert(x)\n"
                         " s1 = f32[8] reduce(c, z), dimensions={1}, to_apply=add\n");
    cxla_strbuf_puts(&b, dependent ? " b = f32[8,256] broadcast(s1), dimensions={0}\n"
                                     " sq = f32[8,256] multiply(x, b)\n"
                                   : " sq = f32[8,256] multiply(x, x)\n");
    cxla_strbuf_puts(&b, " s2 = f32[8] reduce(sq, z), dimensions={1}, to_apply=add\n"
                         " ROOT v = f32[8] subtract(s2, s1) }\n");
    char *text = cxla_strbuf_take(&b);
    CHECK(text != NULL);
    if (!text) return;
    cxla_module *m = run_pass(text, &cxla_pass_fusion);
    free(text);
    if (!m) return;
    int64_t tuples = 0;
    for (int64_t i = 0; i < m->entry->instr_count; i++)
        tuples += m->entry->instrs[i]->opcode == CXLA_OP_FUSION &&
                  m->entry->instrs[i]->shape.type == CXLA_TUPLE;
    CHECK_MSG(tuples == want_tuples, "filler %lld, dependent %d: %lld multi-output fusions",
              (long long)filler, dependent, (long long)tuples);
    cxla_module_destroy(m);
}

static void test_fusion_multi_output_reach(void) {
    multi_output_case(0, false, 1);
    multi_output_case(0, true, 0);
    multi_output_case(4200, false, 1);
    multi_output_case(4200, true, 0);
}

/* ---- the pipeline ---------------------------------------------------------------- */

static cxla_status break_module(cxla_module *m, bool *changed) {
    m->entry->root->shape.dims[0] += 1; /* a shape shape inference disagrees with */
    *changed = true;
    return NULL;
}

static void test_pipeline_dump_and_verify(void) {
    const char *text = "HloModule m\n"
                       "ENTRY e { a = f32[4] parameter(0)\n u = f32[4] negate(a)\n"
                       " ROOT s = f32[4] sqrt(a) }\n";
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, strlen(text), "t", &m));
    if (!m) return;
    cxla_strbuf dumps;
    cxla_strbuf_init(&dumps);
    cxla_pipeline_options o = {.dump_after = "dce", .dump_to = &dumps, .verify = true};
    CHECK_OK(cxla_passes_cpu(m, &o));
    CHECK(dumps.data && strstr(dumps.data, "// after dce (pipeline cpu, changed)"));
    CHECK(dumps.data && strstr(dumps.data, "// after dce (pipeline cpu, unchanged)"));
    CHECK(dumps.data && !strstr(dumps.data, "// after cse"));
    CHECK(dumps.data && !strstr(strstr(dumps.data, "changed)"), "negate"));
    cxla_strbuf_free(&dumps);
    cxla_strbuf_init(&dumps);
    o.dump_after = "all";
    CHECK_OK(cxla_passes_cpu(m, &o));
    int64_t n = 0;
    for (const char *p = dumps.data; p && (p = strstr(p, "// after ")); p++) n++;
    int64_t passes;
    cxla_passes_cpu_list(&passes);
    CHECK_EQ_I64(n, passes);
    cxla_strbuf_free(&dumps);
    const cxla_pass bad = {"breaker", break_module};
    const cxla_pass *list[2] = {&cxla_pass_dce, &bad};
    cxla_strbuf_init(&dumps);
    CHECK_ERROR_HAS(cxla_pipeline_run(m, "p", list, 2, &o), "pass breaker left the module invalid");
    CHECK(dumps.data && strstr(dumps.data, "// after dce (pipeline p, "));
    CHECK(dumps.data && !strstr(dumps.data, "// after breaker"));
    cxla_strbuf_free(&dumps);
    CHECK(cxla_pass_find("fusion") == &cxla_pass_fusion);
    CHECK(cxla_pass_find("nope") == NULL);
    cxla_module_destroy(m);
}

static void test_pipeline_whole(void) {
    cxla_module *m = run_pass(
        "HloModule m\n"
        "add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y) }\n"
        "sm { p = f32[4,8] parameter(0)\n z = f32[] constant(0)\n"
        " e = f32[4,8] exponential(p)\n s = f32[4] reduce(e, z), dimensions={1}, to_apply=add\n"
        " b = f32[4,8] broadcast(s), dimensions={0}\n ROOT d = f32[4,8] divide(e, b) }\n"
        "ENTRY e { a = f32[4,8] parameter(0)\n one = f32[] constant(1)\n"
        " bo = f32[4,8] broadcast(one), dimensions={}\n x = f32[4,8] multiply(a, bo)\n"
        " ROOT c = f32[4,8] call(x), to_apply=sm }\n",
        NULL);
    if (!m) return;
    CHECK_EQ_I64(count_op_module(m, CXLA_OP_CALL), 0);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_MULTIPLY), 0);
    /* exp feeds both the reduce and the divide: too expensive to compute twice, so it
     * stays outside; the broadcast and divide fuse. */
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_FUSION), 1);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_EXP), 1);
    CHECK(m->entry->root->opcode == CXLA_OP_FUSION);
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_ir_remove), TEST(test_dce), TEST(test_control_dependencies_stay),
          TEST(test_inline), TEST(test_cse), TEST(test_simplify_identities),
          TEST(test_simplify_shapes), TEST(test_constant_fold), TEST(test_layout),
          TEST(test_layout_custom_call), TEST(test_topk_decompose), TEST(test_dot_canon),
          TEST(test_fusion_loop), TEST(test_fusion_input_and_side_effects),
          TEST(test_fusion_multi_output), TEST(test_fusion_multi_output_reach),
          TEST(test_output_fusion_dense), TEST(test_output_fusion_tanh),
          TEST(test_output_fusion_conv_batch_norm), TEST(test_output_fusion_limits),
          TEST(test_output_fusion_arrays), TEST(test_output_fusion_convert),
          TEST(test_output_fusion_bf16), TEST(test_conv_canon), TEST(test_pipeline_dump_and_verify),
          TEST(test_pipeline_whole))
