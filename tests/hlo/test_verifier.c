/* The verifier: a valid module passes; each structural, shape, entry-layout and
 * async-pairing check has a module that makes it fail, and the messages name the
 * computation, the instruction (with its line:column) and the operation. */
#include "test_infer_helpers.h"

#define VERIFY_OK(t)          CHECK_OK(cxla_verify_module((t)->m))
#define VERIFY_ERR(t, substr) CHECK_ERROR_HAS(cxla_verify_module((t)->m), (substr))

/* main(p0: f32[8], p1: f32[8]) = reduce(add(p0, p1), 0) over a while loop and a call. */
static void build_valid(tm *t) {
    cxla_computation *add = t_binary_comp(t, "add", "f32[]", CXLA_OP_ADD, "f32[]");
    cxla_computation *body = t_params_comp(t, "body", "(s32[], f32[8])", 0);
    cxla_computation *cond = t_params_comp(t, "cond", "(s32[], f32[8])", -1);
    t->c = cond;
    cxla_instr *i = I(t, CXLA_OP_GET_TUPLE_ELEMENT, "s32[]", 1, cond->params[0]);
    a_int(i, CXLA_ATTR_INDEX, 0);
    cxla_instr *lt = I(t, CXLA_OP_COMPARE, "pred[]", 2, i, i);
    a_word(lt, CXLA_ATTR_DIRECTION, "LT");
    t_end(t);
    cxla_instr *p0 = P(t, "f32[8]{0}"), *p1 = P(t, "f32[8]");
    cxla_instr *s = I(t, CXLA_OP_ADD, "f32[8]", 2, p0, p1);
    cxla_instr *zero = I(t, CXLA_OP_CONSTANT, "s32[]", 0);
    zero->literal_elided = true;
    cxla_instr *tu = I(t, CXLA_OP_TUPLE, "(s32[], f32[8])", 2, zero, s);
    cxla_instr *w = I(t, CXLA_OP_WHILE, "(s32[], f32[8])", 1, tu);
    a_comp(t, w, CXLA_ATTR_CONDITION, cond);
    a_comp(t, w, CXLA_ATTR_BODY, body);
    cxla_instr *g = I(t, CXLA_OP_GET_TUPLE_ELEMENT, "f32[8]", 1, w);
    a_int(g, CXLA_ATTR_INDEX, 1);
    cxla_instr *z = I(t, CXLA_OP_CONSTANT, "f32[]", 0);
    z->literal_elided = true;
    cxla_instr *r = I(t, CXLA_OP_REDUCE, "f32[]", 2, g, z);
    a_ints(t, r, CXLA_ATTR_DIMENSIONS, 1, 0);
    a_comp(t, r, CXLA_ATTR_TO_APPLY, add);
}

static cxla_instr *find(tm *t, const char *comp, const char *prefix) {
    cxla_computation *c = cxla_module_find_computation(t->m, comp);
    for (int64_t i = 0; c && i < c->instr_count; i++)
        if (strncmp(c->instrs[i]->name, prefix, strlen(prefix)) == 0) return c->instrs[i];
    return NULL;
}

static void test_valid_module(void) {
    tm t = t_new();
    build_valid(&t);
    VERIFY_OK(&t);
    /* declared layouts and dynamism do not matter, as with XLA's ShapeUtil::Compatible */
    cxla_instr *s = find(&t, "main", "add");
    s->shape = t_shape(&t, "f32[<=8]{0}");
    VERIFY_OK(&t);
    t_free(&t);
}

static void test_module_level(void) {
    CHECK_ERROR_HAS(cxla_verify_module(NULL), "no module");
    tm t = t_new();
    t.m->entry = NULL;
    VERIFY_ERR(&t, "module 'test' has no entry computation");
    tm other = t_new();
    t.m->entry = other.c;
    VERIFY_ERR(&t, "the entry computation 'main' is not in the module");
    t.m->entry = t.c;
    P(&t, "f32[]");
    VERIFY_OK(&t);
    t.m->comps[0] = NULL;
    VERIFY_ERR(&t, "module 'test': computation 0 is missing");
    t.m->comps[0] = t.c;
    t.c->module = other.m;
    VERIFY_ERR(&t, "computation 'main': belongs to another module");
    t.c->module = t.m;
    t_free(&other);
    t_free(&t);
}

static void test_structure(void) {
    tm t = t_new();
    build_valid(&t);
    cxla_instr *s = find(&t, "main", "add");
    cxla_instr *p0 = t.c->params[0], *p1 = t.c->params[1];

    s->line = 7;
    s->column = 3;
    s->opcode = CXLA_OP_COUNT;
    VERIFY_ERR(&t, "computation 'main', instruction 'add.");
    VERIFY_ERR(&t, "7:3: computation 'main', instruction 'add.");
    VERIFY_ERR(&t, "unknown opcode");
    s->opcode = CXLA_OP_ADD;

    s->operand_count = 1;
    VERIFY_ERR(&t, "add expects 2 operand(s), got 1");
    s->operand_count = 2;
    s->operands[1] = NULL;
    VERIFY_ERR(&t, "add: operand 1 is missing");
    s->operands[1] = p1;

    cxla_computation *body = cxla_module_find_computation(t.m, "body");
    cxla_instr *foreign = body->params[0];
    s->operands[1] = foreign;
    VERIFY_ERR(&t, "operand 1 'parameter.");
    VERIFY_ERR(&t, "belongs to computation 'body'");
    s->operands[1] = p1;

    const char *name = s->name;
    s->name = "";
    VERIFY_ERR(&t, "the instruction has no name");
    s->name = foreign->name;
    VERIFY_ERR(&t, "is also used in computation");
    s->name = name;

    s->parent = body;
    VERIFY_ERR(&t, "the instruction's parent is not this computation");
    s->parent = t.c;

    cxla_attr preds = {.id = CXLA_ATTR_CONTROL_PREDECESSORS, .kind = CXLA_ATTR_KIND_INSTRUCTIONS};
    cxla_instr *items[1] = {foreign};
    preds.v.instrs.count = 1;
    preds.v.instrs.items = items;
    a_set(s, &preds);
    VERIFY_ERR(&t, "control predecessor 0 is not in this computation");
    items[0] = p0;
    VERIFY_OK(&t);

    cxla_computation *add = cxla_module_find_computation(t.m, "add");
    a_comp(&t, s, CXLA_ATTR_TO_APPLY, add);
    VERIFY_ERR(&t, "add does not call computations, but names 1");
    t_free(&t);
}

static void test_called_computations(void) {
    tm t = t_new();
    build_valid(&t);
    cxla_instr *r = find(&t, "main", "reduce");
    a_comp(&t, r, CXLA_ATTR_TO_APPLY, NULL);
    VERIFY_ERR(&t, "reduce: called computation 0 is missing");
    tm other = t_new();
    cxla_computation *foreign = t_binary_comp(&other, "add", "f32[]", CXLA_OP_ADD, "f32[]");
    a_comp(&t, r, CXLA_ATTR_TO_APPLY, foreign);
    VERIFY_ERR(&t, "reduce calls 'add', which is not a computation of this module");
    /* a bad signature is reported through shape inference */
    cxla_computation *mul = t_binary_comp(&t, "mul_s32", "s32[]", CXLA_OP_MULTIPLY, "s32[]");
    a_comp(&t, r, CXLA_ATTR_TO_APPLY, mul);
    VERIFY_ERR(&t, "computation 'main', instruction 'reduce.");
    VERIFY_ERR(&t, "reduce: init value 0 has shape f32[], but reduction computation 'mul_s32' "
                   "accumulates s32[]");
    t_free(&other);
    t_free(&t);
}

static void test_call_graph_cycle(void) {
    tm t = t_new();
    cxla_computation *f = t_begin(&t, "f");
    cxla_instr *x = P(&t, "f32[]");
    cxla_instr *c = I(&t, CXLA_OP_CALL, "f32[]", 1, x);
    a_comp(&t, c, CXLA_ATTR_TO_APPLY, f); /* f calls itself */
    t_end(&t);
    cxla_instr *y = P(&t, "f32[]");
    cxla_instr *m = I(&t, CXLA_OP_CALL, "f32[]", 1, y);
    a_comp(&t, m, CXLA_ATTR_TO_APPLY, f);
    VERIFY_ERR(&t, "calls itself");
    t_free(&t);
}

static void test_instruction_cycle(void) {
    tm t = t_new();
    cxla_instr *p = P(&t, "f32[2]");
    cxla_instr *a = I(&t, CXLA_OP_NEGATE, "f32[2]", 1, p);
    cxla_instr *b = I(&t, CXLA_OP_NEGATE, "f32[2]", 1, a);
    VERIFY_OK(&t);
    CHECK_OK(cxla_instr_replace_operand(a, 0, b));
    VERIFY_ERR(&t, "computation 'main': computation 'main' has a cycle through instruction");
    t_free(&t);
}

static void test_roots_and_parameters(void) {
    tm t = t_new();
    cxla_instr *p0 = P(&t, "f32[]"), *p1 = P(&t, "f32[]");
    I(&t, CXLA_OP_ADD, "f32[]", 2, p0, p1);
    VERIFY_OK(&t);
    cxla_instr *root = t.c->root;
    t.c->root = NULL;
    VERIFY_ERR(&t, "computation 'main': has no root instruction");
    tm other = t_new();
    t.c->root = P(&other, "f32[]");
    VERIFY_ERR(&t, "is not an instruction of this computation");
    cxla_instr ghost = *root; /* claims this computation but is not in its list */
    t.c->root = &ghost;
    VERIFY_ERR(&t, "is not an instruction of this computation");
    t.c->root = root;
    t_free(&other);

    p1->parameter_number = 0;
    VERIFY_ERR(&t, "parameter number 0 is also used by 'parameter.");
    p1->parameter_number = 2;
    VERIFY_ERR(&t, "parameter number 2 is outside 0..1 (parameter numbers must be dense)");
    p1->parameter_number = 1;
    t.c->params[1] = p0;
    VERIFY_ERR(&t, "the computation's parameter 1 slot does not hold this parameter");
    t.c->params[0] = p0;
    t.c->params[1] = p1;
    t.c->param_count = 3;
    VERIFY_ERR(&t, "has 2 parameter instructions but param_count is 3");
    t.c->param_count = 2;
    t.c->instrs[1] = NULL;
    VERIFY_ERR(&t, "instruction 1 is missing");
    t.c->instrs[1] = p1;
    VERIFY_OK(&t);
    t_free(&t);
}

static void test_shapes(void) {
    tm t = t_new();
    cxla_instr *p0 = P(&t, "f32[2]"), *p1 = P(&t, "f32[3]");
    cxla_instr *a = I(&t, CXLA_OP_ADD, "f32[2]", 2, p0, p0);
    a->line = 12;
    a->column = 5;
    VERIFY_OK(&t);
    a->shape = t_shape(&t, "f32[3]");
    VERIFY_ERR(&t, "computation 'main', instruction 'add.");
    VERIFY_ERR(&t, "add: declared shape f32[3] differs from the inferred f32[2] "
                   "(operands: f32[2], f32[2])");
    a->shape = t_shape(&t, "s32[2]");
    VERIFY_ERR(&t, "declared shape s32[2] differs from the inferred f32[2]");
    a->shape = t_shape(&t, "f32[2]{0}");
    CHECK_OK(cxla_instr_replace_operand(a, 1, p1));
    VERIFY_ERR(&t, "add: operands must have the same dimensions, got f32[2] and f32[3]");
    VERIFY_ERR(&t, "12:5: computation 'main', instruction 'add.");
    CHECK_OK(cxla_instr_replace_operand(a, 1, p0));
    a->shape.type = CXLA_TYPE_INVALID;
    VERIFY_ERR(&t, "add: invalid shape");
    t_free(&t);
}

/* convert from complex to a real type is refused, as XLA's InferConvertShape refuses it
 * ("Conversion from complex to real type ... is not implemented"); complex to complex and
 * real to complex are fine. */
static void test_convert_complex_to_real(void) {
    tm t = t_new();
    cxla_instr *p = P(&t, "c64[2]");
    cxla_instr *k = I(&t, CXLA_OP_CONVERT, "c128[2]", 1, p);
    VERIFY_OK(&t);
    k->shape = t_shape(&t, "f32[2]");
    VERIFY_ERR(&t, "convert: conversion from complex to real type c64[2] => f32 is not "
                   "implemented");
    k->shape = t_shape(&t, "pred[2]");
    VERIFY_ERR(&t, "conversion from complex to real type c64[2] => pred");
    t_free(&t);
    tm u = t_new();
    cxla_instr *q = P(&u, "f64[2]");
    I(&u, CXLA_OP_CONVERT, "c64[2]", 1, q);
    VERIFY_OK(&u);
    t_free(&u);
}

static void test_entry_layout(void) {
    tm t = t_new();
    cxla_instr *p = P(&t, "f32[2,3]{1,0}");
    I(&t, CXLA_OP_NEGATE, "f32[2,3]", 1, p);
    t.m->has_entry_layout = true;
    t.m->entry_param_count = 1;
    t.m->entry_param_shapes = t_alloc(&t, sizeof(cxla_shape));
    t.m->entry_param_shapes[0] = t_shape(&t, "f32[2,3]{0,1}"); /* another layout is fine */
    t.m->entry_result_shape = t_shape(&t, "f32[2,3]{1,0}");
    VERIFY_OK(&t);
    t.m->entry_param_shapes[0] = t_shape(&t, "f32[3,2]{1,0}");
    VERIFY_ERR(&t, "parameter 0 is f32[2,3] but entry_computation_layout says f32[3,2]");
    t.m->entry_param_shapes[0] = t_shape(&t, "f32[2,3]{1,0}");
    t.m->entry_param_shapes[0].layout->minor_to_major[1] = 1; /* {1,1}: not a permutation */
    VERIFY_ERR(&t, "entry_computation_layout parameter 0:");
    t.m->entry_param_shapes[0] = t_shape(&t, "f32[2,3]{1,0}");
    t.m->entry_result_shape = t_shape(&t, "f32[2,3,1]");
    VERIFY_ERR(&t, "the root is f32[2,3] but entry_computation_layout's result is f32[2,3,1]");
    t.m->entry_result_shape = t_shape(&t, "f32[2,3]{1,0}");
    t.m->entry_result_shape.layout->minor_to_major[0] = 5;
    VERIFY_ERR(&t, "entry_computation_layout result:");
    t.m->entry_result_shape = t_shape(&t, "f32[2,3]");
    t.m->entry_param_count = 2;
    VERIFY_ERR(&t, "entry_computation_layout has 2 parameters, the entry computation 1");
    t_free(&t);
}

static void test_async_pairs(void) {
    tm t = t_new();
    cxla_computation *w = t_params_comp(&t, "wrapped", "f32[4]", 0);
    cxla_computation *add = t_binary_comp(&t, "add", "f32[]", CXLA_OP_ADD, "f32[]");
    cxla_instr *x = P(&t, "f32[4]");
    const char *state = "((f32[4]), f32[4], s32[])";
    cxla_instr *st = I(&t, CXLA_OP_ASYNC_START, state, 1, x);
    a_comp(&t, st, CXLA_ATTR_CALLS, w);
    VERIFY_ERR(&t, "async-start must have exactly one user (async-update or async-done), has 0");
    cxla_instr *up = I(&t, CXLA_OP_ASYNC_UPDATE, state, 1, st);
    VERIFY_ERR(&t, "async-update must have exactly one user");
    cxla_instr *dn = I(&t, CXLA_OP_ASYNC_DONE, "f32[4]", 1, up);
    VERIFY_OK(&t);
    I(&t, CXLA_OP_TUPLE, "(((f32[4]), f32[4], s32[]), f32[4])", 2, st, dn);
    VERIFY_ERR(&t, "async-start must have exactly one user (async-update or async-done), has 2");
    t_free(&t);

    t = t_new();
    add = t_binary_comp(&t, "add", "f32[]", CXLA_OP_ADD, "f32[]");
    x = P(&t, "f32[4]");
    cxla_instr *ars = I(&t, CXLA_OP_ALL_REDUCE_START, "f32[4]", 1, x);
    a_comp(&t, ars, CXLA_ATTR_TO_APPLY, add);
    I(&t, CXLA_OP_NEGATE, "f32[4]", 1, ars);
    VERIFY_ERR(&t, "the user of all-reduce-start must be all-reduce-done, got negate");
    t_free(&t);

    t = t_new();
    x = P(&t, "f32[4]");
    I(&t, CXLA_OP_ALL_REDUCE_DONE, "f32[4]", 1, x);
    VERIFY_ERR(&t, "the operand of all-reduce-done must be all-reduce-start, got parameter");
    t_free(&t);

    t = t_new();
    x = P(&t, "f32[4]");
    cxla_instr *cs = I(&t, CXLA_OP_COPY_START, "(f32[4], f32[4], u32[])", 1, x);
    cxla_instr *cd = I(&t, CXLA_OP_COPY_DONE, "f32[4]", 1, cs);
    VERIFY_OK(&t);
    cxla_instr *cd2 = I(&t, CXLA_OP_COPY_DONE, "f32[4]", 1, cs);
    I(&t, CXLA_OP_TUPLE, "(f32[4], f32[4])", 2, cd, cd2);
    VERIFY_ERR(&t, "copy-start must have exactly one user (copy-done), has 2");
    t_free(&t);

    t = t_new();
    x = P(&t, "f32[4,8]");
    cxla_instr *ags = I(&t, CXLA_OP_ALL_GATHER_START, "(f32[4,8], f32[8,8])", 1, x);
    a_ints(&t, ags, CXLA_ATTR_DIMENSIONS, 1, 0);
    I(&t, CXLA_OP_ALL_GATHER_DONE, "f32[8,8]", 1, ags);
    VERIFY_OK(&t);
    t_free(&t);

    t = t_new();
    x = P(&t, "f32[8]");
    cxla_instr *cps = I(&t, CXLA_OP_COLLECTIVE_PERMUTE_START, "(f32[8], f32[8])", 1, x);
    a_pairs(&t, cps, 1, 0, 0);
    I(&t, CXLA_OP_COLLECTIVE_PERMUTE_DONE, "f32[8]", 1, cps);
    VERIFY_OK(&t);
    I(&t, CXLA_OP_COLLECTIVE_PERMUTE_DONE, "f32[8]", 1, cps);
    VERIFY_ERR(&t, "collective-permute-start must have exactly one user");
    t_free(&t);
}

static void test_send_recv_pairs(void) {
    tm t = t_new();
    cxla_instr *x = P(&t, "f32[4]"), *tok = P(&t, "token[]");
    cxla_instr *s = I(&t, CXLA_OP_SEND, "(f32[4], u32[], token[])", 2, x, tok);
    a_int(s, CXLA_ATTR_CHANNEL_ID, 1);
    cxla_instr *sd = I(&t, CXLA_OP_SEND_DONE, "token[]", 1, s);
    a_int(sd, CXLA_ATTR_CHANNEL_ID, 1);
    cxla_instr *r = I(&t, CXLA_OP_RECV, "(f32[4], u32[], token[])", 1, tok);
    a_int(r, CXLA_ATTR_CHANNEL_ID, 2);
    cxla_instr *rd = I(&t, CXLA_OP_RECV_DONE, "(f32[4], token[])", 1, r);
    a_int(rd, CXLA_ATTR_CHANNEL_ID, 2);
    I(&t, CXLA_OP_TUPLE, "(token[], (f32[4], token[]))", 2, sd, rd);
    VERIFY_OK(&t);
    a_int(sd, CXLA_ATTR_CHANNEL_ID, 3);
    VERIFY_ERR(&t, "send and its send-done 'send-done.");
    VERIFY_ERR(&t, "must have the same channel_id");
    a_int(sd, CXLA_ATTR_CHANNEL_ID, 1);
    a_bool(r, CXLA_ATTR_IS_HOST_TRANSFER, true);
    VERIFY_ERR(&t, "recv and its recv-done 'recv-done.");
    VERIFY_ERR(&t, "must agree on is_host_transfer");
    a_bool(rd, CXLA_ATTR_IS_HOST_TRANSFER, true);
    VERIFY_OK(&t);
    I(&t, CXLA_OP_TUPLE, "((f32[4], u32[], token[]))", 1, s);
    VERIFY_ERR(&t, "send must have exactly one user (send-done or tuple), has 2");
    t_free(&t);

    t = t_new();
    cxla_instr *fake = P(&t, "(f32[4], u32[], token[])");
    I(&t, CXLA_OP_SEND_DONE, "token[]", 1, fake);
    VERIFY_ERR(&t, "the operand of send-done must be send or get-tuple-element, got parameter");
    t_free(&t);
}

/* Modules written as HLO text: a valid one, then one line changed. */
static const char *text_module =
    "HloModule m, entry_computation_layout={(f32[2,3]{1,0}, s32[])->(f32[3]{0}, s32[])}\n"
    "\n"
    "%add (x: f32[], y: f32[]) -> f32[] {\n"
    "  %x = f32[] parameter(0)\n"
    "  %y = f32[] parameter(1)\n"
    "  ROOT %s = f32[] add(f32[] %x, f32[] %y)\n"
    "}\n"
    "\n"
    "ENTRY %main (p: f32[2,3], i: s32[]) -> (f32[3], s32[]) {\n"
    "  %p = f32[2,3]{1,0} parameter(0)\n"
    "  %i = s32[] parameter(1)\n"
    "  %t = f32[3,2]{1,0} transpose(%p), dimensions={1,0}\n"
    "  %z = f32[] constant(0)\n"
    "  %r = f32[3]{0} reduce(%t, %z), dimensions={1}, to_apply=%add\n"
    "  %n = f32[3]{0} negate(%r)\n"
    "  ROOT %out = (f32[3]{0}, s32[]) tuple(%n, %i)\n"
    "}\n";

static cxla_status parse_and_verify(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "test.hlo", &m);
    if (!s) s = cxla_verify_module(m);
    cxla_module_destroy(m);
    return s;
}

static void test_text_modules(void) {
    CHECK_OK(parse_and_verify(text_module));
    char buf[2048];
    snprintf(buf, sizeof(buf), "%s", text_module);
    char *r = strstr(buf, "%r = f32[3]{0}");
    CHECK(r != NULL);
    if (!r) return;
    r[9] = '4'; /* %r = f32[4]{0} reduce(...) */
    const char *m = CHECK_ERROR(parse_and_verify(buf));
    CHECK_MSG(strstr(m, "14:3: computation 'main', instruction 'r'") != NULL, "message: %s", m);
    CHECK_MSG(strstr(m, "reduce: declared shape f32[4] differs from the inferred f32[3]"),
              "message: %s", m);
}

static cxla_status verify_with(const char *text, bool layout_sensitive, bool mixed) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "test.hlo", &m);
    cxla_hlo_verify_options o = {.layout_sensitive = layout_sensitive,
                                 .allow_mixed_precision = mixed};
    if (!s) s = cxla_hlo_verify_with_options(m, &o);
    cxla_module_destroy(m);
    return s;
}

/* XLA's verifier options: mixed precision (allowed by cxla_hlo_verify and XLA's tests,
 * refused by HloVerifier's defaults), bitcast's byte size (only when layout-sensitive). */
static void test_options(void) {
    const char *mixed = "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n"
                        "  b = bf16[2] parameter(1)\n  s = bf16[] parameter(2)\n"
                        "  x = f32[2] add(a, b)\n  y = f32[2] broadcast(s), dimensions={}\n"
                        "  ROOT r = bf16[2] multiply(x, y)\n}\n";
    CHECK_OK(parse_and_verify(mixed));
    CHECK_OK(verify_with(mixed, true, true));
    const char *m = CHECK_ERROR(verify_with(mixed, false, false));
    CHECK_MSG(strstr(m, "6:3: computation 'e', instruction 'x'") != NULL, "message: %s", m);
    /* Mixed precision is about floating point: s32 + f32 stays wrong. */
    CHECK_ERROR(parse_and_verify("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n"
                                 "  b = s32[2] parameter(1)\n  ROOT x = f32[2] add(a, b)\n}\n"));
    const char *bitcast = "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n"
                          "  ROOT b = f32[2] bitcast(a)\n}\n";
    CHECK_OK(parse_and_verify(bitcast));
    CHECK_OK(verify_with(bitcast, false, false));
    CHECK_ERROR(verify_with(bitcast, true, true));
}

/* Layout-sensitive (XLA's ShapeVerifier::HandleSend): send's declared data must have its
 * operand's minor_to_major (tiles and memory space aside); a layout-insensitive verifier
 * does not look. Built with the IR API: the text parser, as XLA's, rebuilds send's shape
 * from its operand, so only a module built in memory (or rewritten by a pass) can
 * disagree. */
static cxla_status verify_send(const char *operand, const char *data, bool layout_sensitive) {
    tm t = t_new();
    cxla_instr *x = P(&t, operand), *tok = I(&t, CXLA_OP_AFTER_ALL, "token[]", 0);
    char shape[128];
    snprintf(shape, sizeof shape, "(%s, u32[], token[])", data);
    cxla_instr *s = I(&t, CXLA_OP_SEND, shape, 2, x, tok);
    a_int(s, CXLA_ATTR_CHANNEL_ID, 1);
    cxla_instr *sd = I(&t, CXLA_OP_SEND_DONE, "token[]", 1, s);
    a_int(sd, CXLA_ATTR_CHANNEL_ID, 1);
    cxla_hlo_verify_options o = {.layout_sensitive = layout_sensitive,
                                 .allow_mixed_precision = true};
    cxla_status st = cxla_hlo_verify_with_options(t.m, &o);
    t_free(&t);
    return st;
}

static void test_send_layout(void) {
    static const struct {
        const char *operand, *data;
        bool ok;
    } cases[] = {
        {"f32[2,3]{1,0}", "f32[2,3]{1,0}", true},
        {"f32[2,3]", "f32[2,3]{1,0}", true}, /* no layout: the default one */
        {"f32[2,3]{1,0}", "f32[2,3]", true},
        {"f32[2,3]{1,0}", "f32[2,3]{1,0:S(1)}", true}, /* memory space aside */
        {"f32[2,3]{1,0}", "f32[2,3]{0,1}", false},
        {"f32[2,3]", "f32[2,3]{0,1}", false},
        {"f32[4,2,3]{0,2,1}", "f32[4,2,3]{2,1,0}", false},
        {"(f32[2,3]{1,0}, s32[])", "(f32[2,3]{1,0}, s32[])", true},
        {"(f32[2,3]{1,0}, s32[])", "(f32[2,3]{0,1}, s32[])", false},
        {"f32[]", "f32[]", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        CHECK_OK(verify_send(cases[i].operand, cases[i].data, false));
        cxla_status st = verify_send(cases[i].operand, cases[i].data, true);
        if (cases[i].ok) {
            CHECK_MSG(!st, "%s -> %s: %s", cases[i].operand, cases[i].data,
                      cxla_status_message(st));
        } else {
            CHECK_MSG(st && strstr(cxla_status_message(st),
                                   "instruction 'send.2': send: the declared data layout"),
                      "%s -> %s: %s", cases[i].operand, cases[i].data,
                      st ? cxla_status_message(st) : "no error");
        }
        cxla_status_free(st);
    }
    CHECK_ERROR_HAS(verify_send("f32[2,3]{1,0}", "f32[2,3]{0,1}", true),
                    "layout f32[2,3]{0,1} differs from the operand's f32[2,3]{1,0}");
    /* In text the written layout is not kept (XLA's parser builds send from its operand),
     * so a module that prints send with another layout still verifies. */
    const char *text = "HloModule m\nENTRY e {\n"
                       "  x = f32[2,3]{1,0} parameter(0)\n"
                       "  t = token[] after-all()\n"
                       "  s = (f32[2,3]{0,1}, u32[], token[]) send(x, t), channel_id=1\n"
                       "  ROOT d = token[] send-done(s), channel_id=1\n}\n";
    CHECK_OK(verify_with(text, true, true));
}

TEST_MAIN(TEST(test_valid_module), TEST(test_text_modules), TEST(test_options),
          TEST(test_send_layout), TEST(test_module_level), TEST(test_structure),
          TEST(test_called_computations), TEST(test_call_graph_cycle), TEST(test_instruction_cycle),
          TEST(test_roots_and_parameters), TEST(test_shapes), TEST(test_convert_complex_to_real),
          TEST(test_entry_layout), TEST(test_async_pairs), TEST(test_send_recv_pairs))
