/* Shape inference for control flow and calls, random numbers, tokens and host
 * communication, the asynchronous wrappers and the collectives. */
#include "test_infer_helpers.h"

static void test_while(void) {
    tm t = t_new();
    const char *state = "(s32[], f32[4])";
    cxla_computation *cond = t_params_comp(&t, "cond", state, -1);
    {
        t.c = cond;
        cxla_instr *i = I(&t, CXLA_OP_GET_TUPLE_ELEMENT, "s32[]", 1, cond->params[0]);
        a_int(i, CXLA_ATTR_INDEX, 0);
        cxla_instr *c = I(&t, CXLA_OP_COMPARE, "pred[]", 2, i, i);
        a_word(c, CXLA_ATTR_DIRECTION, "LT");
        t_end(&t);
    }
    cxla_computation *body = t_params_comp(&t, "body", state, 0);
    cxla_computation *body2 = t_params_comp(&t, "body2", "(s32[], f32[4]);f32[]", 0);
    cxla_computation *badcond = t_params_comp(&t, "badcond", state, 0);
    cxla_computation *badbody = t_params_comp(&t, "badbody", "(s32[], f32[5])", 0);
    cxla_computation *wrongret = t_params_comp(&t, "wrongret", state, -1);
    {
        t.c = wrongret;
        cxla_instr *i = I(&t, CXLA_OP_GET_TUPLE_ELEMENT, "s32[]", 1, wrongret->params[0]);
        a_int(i, CXLA_ATTR_INDEX, 0);
        t_end(&t);
    }
    cxla_instr *init = P(&t, state);
    cxla_instr *w = I(&t, CXLA_OP_WHILE, state, 1, init);
    INFER_ERR(w, "missing called computation condition");
    a_comp(&t, w, CXLA_ATTR_CONDITION, cond);
    INFER_ERR(w, "missing called computation body");
    a_comp(&t, w, CXLA_ATTR_BODY, body);
    INFER_OK(w, "(s32[], f32[4])");
    a_comp(&t, w, CXLA_ATTR_BODY, body2);
    INFER_ERR(w, "'body2' must take 1 parameter(s)");
    a_comp(&t, w, CXLA_ATTR_BODY, badbody);
    INFER_ERR(w, "the init value (s32[], f32[4]) does not match parameter 0 of 'badbody'");
    a_comp(&t, w, CXLA_ATTR_BODY, wrongret);
    INFER_ERR(w, "body 'wrongret' must return the loop state (s32[], f32[4])");
    a_comp(&t, w, CXLA_ATTR_BODY, body);
    a_comp(&t, w, CXLA_ATTR_CONDITION, badcond);
    INFER_ERR(w, "condition 'badcond' must return pred[]");
    a_comp(&t, w, CXLA_ATTR_CONDITION, badbody);
    INFER_ERR(w, "does not match parameter 0 of 'badbody'");
    a_comp(&t, w, CXLA_ATTR_CONDITION, body2);
    INFER_ERR(w, "'body2' must take 1 parameter(s)");
    t_free(&t);
}

static void test_conditional(void) {
    tm t = t_new();
    cxla_computation *tb = t_params_comp(&t, "tb", "f32[]", 0);
    cxla_computation *fb = t_params_comp(&t, "fb", "s32[2]", -1);
    {
        t.c = fb;
        I(&t, CXLA_OP_CONSTANT, "f32[]", 0)->literal_elided = true;
        t_end(&t);
    }
    cxla_computation *other = t_params_comp(&t, "other", "f32[]", -1);
    {
        t.c = other;
        I(&t, CXLA_OP_CONSTANT, "f64[]", 0)->literal_elided = true;
        t_end(&t);
    }
    cxla_computation *two = t_params_comp(&t, "two", "f32[];f32[]", 0);
    cxla_instr *p = P(&t, "pred[]"), *a = P(&t, "f32[]"), *b = P(&t, "s32[2]");
    cxla_instr *i = P(&t, "s32[]"), *pv = P(&t, "pred[2]"), *u = P(&t, "u32[]");
    cxla_instr *c = I(&t, CXLA_OP_CONDITIONAL, "f32[]", 3, p, a, b);
    INFER_ERR(c, "missing called computation true_computation");
    a_comp(&t, c, CXLA_ATTR_TRUE_COMPUTATION, tb);
    INFER_ERR(c, "missing called computation false_computation");
    a_comp(&t, c, CXLA_ATTR_FALSE_COMPUTATION, fb);
    INFER_OK(c, "f32[]");
    a_comp(&t, c, CXLA_ATTR_FALSE_COMPUTATION, other);
    INFER_ERR(c, "branch operand s32[2] does not match parameter 0 of 'other'");
    cxla_instr *c2 = I(&t, CXLA_OP_CONDITIONAL, "f32[]", 3, p, a, a);
    a_comp(&t, c2, CXLA_ATTR_TRUE_COMPUTATION, tb);
    a_comp(&t, c2, CXLA_ATTR_FALSE_COMPUTATION, other);
    INFER_ERR(c2, "branches must return the same shape: 'tb' returns f32[], 'other' returns f64[]");
    a_comp(&t, c2, CXLA_ATTR_FALSE_COMPUTATION, two);
    INFER_ERR(c2, "'two' must take 1 parameter(s)");
    cxla_instr *c3 = I(&t, CXLA_OP_CONDITIONAL, "f32[]", 2, p, a);
    a_comp(&t, c3, CXLA_ATTR_TRUE_COMPUTATION, tb);
    a_comp(&t, c3, CXLA_ATTR_FALSE_COMPUTATION, tb);
    INFER_ERR(c3, "expects the predicate and one operand per branch (2), got 2 operand(s)");

    cxla_instr *ix = I(&t, CXLA_OP_CONDITIONAL, "f32[]", 4, i, a, b, a);
    INFER_ERR(ix, "an s32 branch index needs branch_computations");
    a_comps(&t, ix, CXLA_ATTR_BRANCH_COMPUTATIONS, 3, tb, fb, tb);
    INFER_OK(ix, "f32[]");
    a_comps(&t, ix, CXLA_ATTR_BRANCH_COMPUTATIONS, 2, tb, fb);
    INFER_ERR(ix, "expects the index and one operand per branch (2), got 4");
    a_comps(&t, ix, CXLA_ATTR_BRANCH_COMPUTATIONS, 3, tb, NULL, tb);
    INFER_ERR(ix, "branch computation 1 is missing");
    INFER_ERR(I(&t, CXLA_OP_CONDITIONAL, "f32[]", 2, pv, a),
              "the first operand must be pred[] or s32[], got pred[2]");
    INFER_ERR(I(&t, CXLA_OP_CONDITIONAL, "f32[]", 2, u, a), "pred[] or s32[], got u32[]");
    INFER_ERR(I(&t, CXLA_OP_CONDITIONAL, "f32[]", 0), "expects a predicate or branch index");
    t_free(&t);
}

static void test_call_fusion_custom_call(void) {
    tm t = t_new();
    cxla_computation *f = t_params_comp(&t, "helper", "f32[8];s32[]", 0);
    cxla_instr *x = P(&t, "f32[8]"), *y = P(&t, "s32[]"), *z = P(&t, "f32[]");
    cxla_instr *c = I(&t, CXLA_OP_CALL, "f32[8]", 2, x, y);
    INFER_ERR(c, "missing called computation to_apply");
    a_comp(&t, c, CXLA_ATTR_TO_APPLY, f);
    INFER_OK(c, "f32[8]");
    cxla_instr *c2 = I(&t, CXLA_OP_CALL, "f32[8]", 2, x, z);
    a_comp(&t, c2, CXLA_ATTR_TO_APPLY, f);
    INFER_ERR(c2,
              "argument f32[] does not match parameter 1 of 'helper' (f32[8], s32[]) -> f32[8]");
    cxla_instr *c3 = I(&t, CXLA_OP_CALL, "f32[8]", 1, x);
    a_comp(&t, c3, CXLA_ATTR_TO_APPLY, f);
    INFER_ERR(c3, "'helper' must take 1 parameter(s)");

    cxla_instr *fu = I(&t, CXLA_OP_FUSION, "f32[8]", 2, x, y);
    INFER_ERR(fu, "needs exactly one fused computation in calls=");
    a_comp(&t, fu, CXLA_ATTR_CALLS, f);
    INFER_OK(fu, "f32[8]");
    cxla_instr *fu2 = I(&t, CXLA_OP_FUSION, "f32[8]", 2, x, x);
    a_comp(&t, fu2, CXLA_ATTR_CALLS, f);
    INFER_ERR(fu2, "argument f32[8] does not match parameter 1");
    /* More operands than parameters: XLA's HandleFusion allows it (extras unused)... */
    cxla_instr *fu3 = I(&t, CXLA_OP_FUSION, "f32[8]", 3, x, y, y);
    a_comp(&t, fu3, CXLA_ATTR_CALLS, f);
    INFER_OK(fu3, "f32[8]");
    /* ... fewer is an error. */
    cxla_instr *fu4 = I(&t, CXLA_OP_FUSION, "f32[8]", 1, x);
    a_comp(&t, fu4, CXLA_ATTR_CALLS, f);
    INFER_ERR(fu4, "must take 1 parameter(s)");

    cxla_instr *cc = I(&t, CXLA_OP_CUSTOM_CALL, "(bf16[16], s32[])", 2, x, y);
    INFER_ERR(cc, "missing attribute custom_call_target");
    a_string(cc, CXLA_ATTR_CUSTOM_CALL_TARGET, "MyTarget");
    INFER_OK(cc, "(bf16[16], s32[])");
    a_shapes(&t, cc, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS, 2, "f32[8]{0}", "s32[]");
    INFER_OK(cc, "(bf16[16], s32[])");
    a_shapes(&t, cc, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS, 1, "f32[8]{0}");
    INFER_ERR(cc, "operand_layout_constraints has 1 shapes for 2 operands");
    a_shapes(&t, cc, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS, 2, "f32[9]{0}", "s32[]");
    INFER_ERR(cc, "operand 0 f32[8] does not match its layout constraint f32[9]");
    cxla_instr *cc2 = I(&t, CXLA_OP_CUSTOM_CALL, NULL, 0);
    a_string(cc2, CXLA_ATTR_CUSTOM_CALL_TARGET, "x");
    INFER_ERR(cc2, "invalid declared shape");
    t_free(&t);
}

static void test_rng(void) {
    tm t = t_new();
    cxla_instr *lo = P(&t, "f32[]"), *hi = P(&t, "f32[]"), *i = P(&t, "s32[]");
    cxla_instr *v = P(&t, "f32[2]"), *c = P(&t, "c64[]");
    cxla_instr *r = I(&t, CXLA_OP_RNG, "f32[4]", 2, lo, hi);
    INFER_ERR(r, "missing attribute distribution");
    a_word(r, CXLA_ATTR_DISTRIBUTION, "rng_uniform");
    INFER_OK(r, "f32[4]");
    a_word(r, CXLA_ATTR_DISTRIBUTION, "rng_normal");
    INFER_OK(r, "f32[4]");
    a_word(r, CXLA_ATTR_DISTRIBUTION, "rng_bernoulli");
    INFER_ERR(r, "unknown distribution=rng_bernoulli");
    cxla_instr *ri = I(&t, CXLA_OP_RNG, "s32[3,3]", 2, i, i);
    a_word(ri, CXLA_ATTR_DISTRIBUTION, "rng_uniform");
    INFER_OK(ri, "s32[3,3]");
    a_word(ri, CXLA_ATTR_DISTRIBUTION, "rng_normal");
    INFER_ERR(ri, "rng_normal needs floating-point values, got s32[]");
    cxla_instr *rc = I(&t, CXLA_OP_RNG, "c64[3]", 2, c, c);
    a_word(rc, CXLA_ATTR_DISTRIBUTION, "rng_uniform");
    INFER_ERR(rc, "rng_uniform needs float, integer or pred values");
    INFER_ERR(I(&t, CXLA_OP_RNG, "f32[4]", 2, lo, v), "the two parameters must be scalars");
    INFER_ERR(I(&t, CXLA_OP_RNG, "f32[4]", 2, lo, i), "must share one element type");
    INFER_ERR(I(&t, CXLA_OP_RNG, "s32[4]", 2, lo, hi), "must share one element type");
    INFER_ERR(I(&t, CXLA_OP_RNG, "f32[4]", 1, lo), "expects 2 operands, got 1");

    cxla_instr *st = P(&t, "u64[2]"), *s32 = P(&t, "u32[2]");
    cxla_instr *g = I(&t, CXLA_OP_RNG_BIT_GENERATOR, "(u64[2], u32[16,128])", 1, st);
    a_word(g, CXLA_ATTR_ALGORITHM, "rng_default");
    INFER_OK(g, "(u64[2], u32[16,128])");
    a_word(g, CXLA_ATTR_ALGORITHM, "rng_mersenne");
    INFER_ERR(g, "unknown algorithm=rng_mersenne");
    INFER_ERR(I(&t, CXLA_OP_RNG_BIT_GENERATOR, "(u32[2], u32[4])", 1, s32),
              "the state must be a u64 vector, got u32[2]");
    INFER_ERR(I(&t, CXLA_OP_RNG_BIT_GENERATOR, "(u64[2], f32[4])", 1, st),
              "the result must be (new state, unsigned random bits)");
    /* The bits alone (XLA's verifier takes any non-tuple result), unsigned as above. */
    INFER_OK(I(&t, CXLA_OP_RNG_BIT_GENERATOR, "u32[4]", 1, st), "u32[4]");
    INFER_ERR(I(&t, CXLA_OP_RNG_BIT_GENERATOR, "f32[4]", 1, st), "the result must be");

    cxla_instr *gs = I(&t, CXLA_OP_RNG_GET_AND_UPDATE_STATE, "u64[2]", 0);
    a_int(gs, CXLA_ATTR_DELTA, 4096);
    INFER_OK(gs, "u64[2]");
    a_float(gs, CXLA_ATTR_DELTA, 1.5);
    INFER_ERR(gs, "delta must be an integer");
    t_free(&t);
}

static void test_tokens_and_host_transfers(void) {
    tm t = t_new();
    cxla_instr *tok = P(&t, "token[]"), *x = P(&t, "f32[4]");
    INFER_OK(I(&t, CXLA_OP_AFTER_ALL, NULL, 0), "token[]");
    INFER_OK(I(&t, CXLA_OP_AFTER_ALL, NULL, 2, tok, tok), "token[]");
    INFER_OK(I(&t, CXLA_OP_AFTER_ALL, NULL, 2, tok, x), "token[]"); /* as XLA allows */
    INFER_OK(I(&t, CXLA_OP_ADD_DEPENDENCY, "", 2, x, tok), "f32[4]");
    INFER_ERR(I(&t, CXLA_OP_ADD_DEPENDENCY, "", 2, x, x), "operand 1 must be a token");

    INFER_OK(I(&t, CXLA_OP_INFEED, "((f32[3], s32[]), token[])", 1, tok),
             "((f32[3], s32[]), token[])");
    INFER_ERR(I(&t, CXLA_OP_INFEED, "(f32[3], token[])", 1, x), "operand 0 must be a token");
    INFER_ERR(I(&t, CXLA_OP_INFEED, "f32[3]", 1, tok), "the result must be (data, token[])");

    cxla_instr *o = I(&t, CXLA_OP_OUTFEED, "token[]", 2, x, tok);
    INFER_OK(o, "token[]");
    a_shape(&t, o, CXLA_ATTR_OUTFEED_SHAPE, "f32[4]{0}");
    INFER_OK(o, "token[]");
    a_shape(&t, o, CXLA_ATTR_OUTFEED_SHAPE, "f32[3]{0}");
    INFER_ERR(o, "outfeed_shape=f32[3] differs from the data f32[4]");
    INFER_ERR(I(&t, CXLA_OP_OUTFEED, "token[]", 2, x, x), "operand 1 must be a token");

    cxla_instr *s = I(&t, CXLA_OP_SEND, "(f32[4], u32[], token[])", 2, x, tok);
    INFER_OK(s, "(f32[4], u32[], token[])");
    INFER_ERR(I(&t, CXLA_OP_SEND, "", 2, x, x), "operand 1 must be a token");
    INFER_OK(I(&t, CXLA_OP_SEND_DONE, "token[]", 1, s), "token[]");
    INFER_ERR(I(&t, CXLA_OP_SEND_DONE, "token[]", 1, x),
              "the operand must be a (data, u32[], token[]) tuple, got f32[4]");
    cxla_instr *r = I(&t, CXLA_OP_RECV, "(f32[4], u32[], token[])", 1, tok);
    INFER_OK(r, "(f32[4], u32[], token[])");
    INFER_ERR(I(&t, CXLA_OP_RECV, "(f32[4], token[])", 1, tok),
              "the result must be (data, u32[], token[])");
    INFER_ERR(I(&t, CXLA_OP_RECV, "(f32[4], u32[], token[])", 1, x), "operand 0 must be a token");
    INFER_OK(I(&t, CXLA_OP_RECV_DONE, "(f32[4], token[])", 1, r), "(f32[4], token[])");
    INFER_ERR(I(&t, CXLA_OP_RECV_DONE, "(f32[4], token[])", 1, tok), "the operand must be");
    t_free(&t);
}

static void test_async_wrappers(void) {
    tm t = t_new();
    cxla_computation *w = t_params_comp(&t, "wrapped", "f32[4];s32[]", 0);
    cxla_computation *w2 = t_params_comp(&t, "wrapped2", "f32[4];s32[]", 0);
    cxla_instr *x = P(&t, "f32[4]"), *y = P(&t, "s32[]");
    const char *state = "((f32[4], s32[]), f32[4], s32[])";
    cxla_instr *st = I(&t, CXLA_OP_ASYNC_START, state, 2, x, y);
    a_comp(&t, st, CXLA_ATTR_CALLS, w);
    INFER_OK(st, "((f32[4], s32[]), f32[4], s32[])");
    cxla_instr *st2 = I(&t, CXLA_OP_ASYNC_START, state, 2, x, x);
    a_comp(&t, st2, CXLA_ATTR_CALLS, w);
    INFER_ERR(st2, "operand f32[4] does not match parameter 1 of 'wrapped'");
    cxla_instr *st3 = I(&t, CXLA_OP_ASYNC_START, state, 1, x);
    a_comp(&t, st3, CXLA_ATTR_CALLS, w);
    INFER_ERR(st3, "'wrapped' takes 2 parameter(s) but 1 operand(s) are given");
    cxla_instr *st4 = I(&t, CXLA_OP_ASYNC_START, "f32[4]", 2, x, y);
    a_comp(&t, st4, CXLA_ATTR_CALLS, w);
    INFER_ERR(st4, "the result must be ((operands...), result, context...)");
    cxla_instr *st5 = I(&t, CXLA_OP_ASYNC_START, state, 2, x, y);
    a_comps(&t, st5, CXLA_ATTR_CALLS, 2, w, w2);
    INFER_ERR(st5, "calls= must name exactly one computation");
    /* the sugared form without a wrapped computation: the declared state */
    cxla_instr *sug = I(&t, CXLA_OP_ASYNC_START, "((f32[4]), f32[8], u32[])", 1, x);
    sug->async_wrapped = CXLA_OP_CUSTOM_CALL;
    INFER_OK(sug, "((f32[4]), f32[8], u32[])");

    cxla_instr *up = I(&t, CXLA_OP_ASYNC_UPDATE, state, 1, st);
    INFER_OK(up, "((f32[4], s32[]), f32[4], s32[])");
    cxla_instr *dn = I(&t, CXLA_OP_ASYNC_DONE, "f32[4]", 1, up);
    INFER_OK(dn, "f32[4]");
    a_comp(&t, dn, CXLA_ATTR_CALLS, w2);
    INFER_ERR(dn, "wraps 'wrapped2' but its operand");
    INFER_ERR(I(&t, CXLA_OP_ASYNC_DONE, "f32[4]", 1, x),
              "the operand must be an async-start or async-update, got parameter");
    INFER_ERR(I(&t, CXLA_OP_ASYNC_UPDATE, "f32[4]", 1, y), "got parameter");
    /* a state that does not match the wrapped computation */
    cxla_instr *badst = I(&t, CXLA_OP_ASYNC_START, "((f32[4], s32[]), f32[5])", 2, x, y);
    cxla_instr *badup = I(&t, CXLA_OP_ASYNC_UPDATE, "", 1, badst);
    a_comp(&t, badup, CXLA_ATTR_CALLS, w);
    INFER_ERR(badup, "async state {1} f32[5] must match the result of 'wrapped'");
    cxla_instr *badst2 = I(&t, CXLA_OP_ASYNC_START, "((f32[4]), f32[4])", 1, x);
    cxla_instr *baddn = I(&t, CXLA_OP_ASYNC_DONE, "f32[4]", 1, badst2);
    a_comp(&t, baddn, CXLA_ATTR_CALLS, w);
    INFER_ERR(baddn, "async state {0} (f32[4]) must match the parameters of 'wrapped'");
    cxla_instr *badst3 = I(&t, CXLA_OP_ASYNC_START, "(f32[4], f32[4])", 1, x);
    INFER_ERR(I(&t, CXLA_OP_ASYNC_DONE, "f32[4]", 1, badst3), "the async state must be");

    cxla_instr *cs = I(&t, CXLA_OP_COPY_START, "(f32[4], f32[4], u32[])", 1, x);
    INFER_OK(cs, "(f32[4], f32[4], u32[])");
    INFER_OK(I(&t, CXLA_OP_COPY_DONE, "f32[4]", 1, cs), "f32[4]");
    INFER_ERR(I(&t, CXLA_OP_COPY_DONE, "f32[4]", 1, x), "the operand must be a copy-start's");
    cxla_instr *odd = P(&t, "(f32[4], f32[5], u32[])");
    INFER_ERR(I(&t, CXLA_OP_COPY_DONE, "f32[4]", 1, odd),
              "destination f32[4] and source f32[5] must have the same shape");
    t_free(&t);
}

static void test_all_reduce_and_groups(void) {
    tm t = t_new();
    cxla_computation *add = t_binary_comp(&t, "add", "f32[]", CXLA_OP_ADD, "f32[]");
    cxla_computation *lt = t_binary_comp(&t, "lt", "f32[]", CXLA_OP_COMPARE, "pred[]");
    cxla_instr *a = P(&t, "f32[1]"), *b = P(&t, "f32[]"), *i = P(&t, "s32[2]");
    cxla_instr *tup = P(&t, "(f32[])");
    cxla_instr *ar = I(&t, CXLA_OP_ALL_REDUCE, "(f32[1], f32[])", 2, a, b);
    INFER_ERR(ar, "missing called computation to_apply");
    a_comp(&t, ar, CXLA_ATTR_TO_APPLY, add);
    INFER_OK(ar, "(f32[1], f32[])");
    a_comp(&t, ar, CXLA_ATTR_TO_APPLY, lt);
    INFER_ERR(ar, "to_apply 'lt' must be (T, T) -> T on scalars");
    cxla_instr *ar2 = I(&t, CXLA_OP_ALL_REDUCE, "s32[2]", 1, i);
    a_comp(&t, ar2, CXLA_ATTR_TO_APPLY, add);
    INFER_ERR(ar2, "operand 0 s32[2] does not match to_apply 'add'");
    /* A reducer of another float precision: XLA's verifier does not compare them. */
    cxla_instr *ar3 = I(&t, CXLA_OP_ALL_REDUCE, "bf16[2]", 1, P(&t, "bf16[2]"));
    a_comp(&t, ar3, CXLA_ATTR_TO_APPLY, add);
    INFER_OK(ar3, "bf16[2]");
    INFER_ERR(I(&t, CXLA_OP_ALL_REDUCE, "f32[]", 0), "at least one operand");
    INFER_ERR(I(&t, CXLA_OP_ALL_REDUCE, "f32[]", 1, tup), "operand 0 must be an array");
    /* replica groups */
    a_comp(&t, ar, CXLA_ATTR_TO_APPLY, add);
    a_groups(&t, ar, "0,1;2,3");
    INFER_OK(ar, "(f32[1], f32[])");
    a_groups(&t, ar, "0,1,2;3"); /* all-reduce allows groups of different sizes */
    INFER_OK(ar, "(f32[1], f32[])");
    a_groups(&t, ar, "0,1;1,2");
    INFER_ERR(ar, "replica 1 appears twice in replica_groups");
    a_groups(&t, ar, "0,1;3,4");
    INFER_ERR(ar, "replica_groups must name each of 0..3 once; 2 is missing");
    cxla_attr empty = {.id = CXLA_ATTR_REPLICA_GROUPS, .kind = CXLA_ATTR_KIND_REPLICA_GROUPS};
    int64_t zero = 0;
    int64_t *none = NULL;
    empty.v.groups.group_count = 1;
    empty.v.groups.group_sizes = &zero;
    empty.v.groups.groups = &none;
    a_set(ar, &empty);
    INFER_ERR(ar, "replica group 0 is empty");
    a_groups(&t, ar, "0,1;2,3");
    t.m->replica_count = 8;
    INFER_ERR(ar, "replica_groups name 4 participants, the module has 8");
    t.m->replica_count = 4;
    INFER_OK(ar, "(f32[1], f32[])");
    a_bool(ar, CXLA_ATTR_USE_GLOBAL_DEVICE_IDS, true);
    INFER_ERR(ar, "use_global_device_ids=true needs a channel_id");
    a_int(ar, CXLA_ATTR_CHANNEL_ID, 1);
    t.m->num_partitions = 2;
    INFER_ERR(ar, "replica_groups name 4 participants, the module has 8");
    a_groups(&t, ar, "0,1,2,3;4,5,6,7");
    INFER_OK(ar, "(f32[1], f32[])");
    a_groups(&t, ar, "");
    INFER_ERR(ar, "replica_groups must be given with use_global_device_ids");
    a_groups(&t, ar, "0,1");
    t.m->replica_count = INT64_MAX;
    INFER_ERR(ar, "replica_count x num_partitions overflows");
    a_bool(ar, CXLA_ATTR_USE_GLOBAL_DEVICE_IDS, false);
    a_groups(&t, ar, "");
    INFER_ERR(ar, "replica_count x num_partitions overflows");
    t.m->replica_count = 1;
    t.m->num_partitions = 1;

    cxla_instr *as = I(&t, CXLA_OP_ALL_REDUCE_START, "f32[1]", 1, a);
    a_comp(&t, as, CXLA_ATTR_TO_APPLY, add);
    INFER_OK(as, "f32[1]");
    INFER_OK(I(&t, CXLA_OP_ALL_REDUCE_DONE, "f32[1]", 1, as), "f32[1]");
    INFER_OK(I(&t, CXLA_OP_COLLECTIVE_REDUCE, "f32[1]", 1, a), "f32[1]");
    cxla_instr *cr = I(&t, CXLA_OP_COLLECTIVE_REDUCE, "f32[1]", 1, a);
    a_comp(&t, cr, CXLA_ATTR_TO_APPLY, lt);
    INFER_ERR(cr, "to_apply 'lt' must be (T, T) -> T");
    t_free(&t);
}

static void test_all_gather_reduce_scatter(void) {
    tm t = t_new();
    cxla_computation *add = t_binary_comp(&t, "add", "f32[]", CXLA_OP_ADD, "f32[]");
    cxla_instr *x = P(&t, "f32[4,8]"), *s = P(&t, "bf16[]"), *y = P(&t, "f32[7,8]");
    cxla_instr *g = I(&t, CXLA_OP_ALL_GATHER, "f32[8,8]", 1, x);
    INFER_ERR(g, "missing attribute dimensions");
    a_ints(&t, g, CXLA_ATTR_DIMENSIONS, 1, 0);
    INFER_OK(g, "f32[8,8]"); /* 2 shards, read from the declared shape */
    a_groups(&t, g, "0,1;2,3");
    INFER_OK(g, "f32[8,8]");
    a_groups(&t, g, "0,1,2;3,4,5");
    INFER_ERR(g, "f32[4,8] to f32[8,8] makes 2 shards but the groups have 3 members");
    a_groups(&t, g, "0,1,2;3,4");
    INFER_ERR(g, "replica groups must have the same size, got 3 and 2");
    a_groups(&t, g, "0,1;2,3");
    a_ints(&t, g, CXLA_ATTR_DIMENSIONS, 1, 2);
    INFER_ERR(g, "dimension 2 is out of range for operand f32[4,8]");
    a_ints(&t, g, CXLA_ATTR_DIMENSIONS, 2, 0, 1);
    INFER_ERR(g, "dimensions={0,1} must name one dimension");
    /* the group size decides when the declared shape says nothing */
    cxla_instr *g2 = I(&t, CXLA_OP_ALL_GATHER, "(f32[4,32], bf16[])", 2, x, x);
    a_ints(&t, g2, CXLA_ATTR_DIMENSIONS, 1, 1);
    a_groups(&t, g2, "0,1,2,3");
    INFER_OK(g2, "(f32[4,32], f32[4,32])");
    cxla_instr *g3 = I(&t, CXLA_OP_ALL_GATHER, "bf16[]", 1, s);
    a_ints(&t, g3, CXLA_ATTR_DIMENSIONS, 1, 0);
    INFER_ERR(g3, "dimension 0 is out of range for operand bf16[]");

    cxla_instr *gs = I(&t, CXLA_OP_ALL_GATHER_START, "(f32[4,8], f32[16,8])", 1, x);
    a_ints(&t, gs, CXLA_ATTR_DIMENSIONS, 1, 0);
    INFER_OK(gs, "(f32[4,8], f32[16,8])");
    INFER_OK(I(&t, CXLA_OP_ALL_GATHER_DONE, "f32[16,8]", 1, gs), "f32[16,8]");
    INFER_ERR(I(&t, CXLA_OP_ALL_GATHER_DONE, "f32[16,8]", 1, x),
              "the operand must be an all-gather-start's (input, output)");
    cxla_instr *gs2 =
        I(&t, CXLA_OP_ALL_GATHER_START, "((f32[4,8], f32[4,8]), (f32[8,8], f32[8,8]))", 2, x, x);
    a_ints(&t, gs2, CXLA_ATTR_DIMENSIONS, 1, 0);
    INFER_OK(gs2, "((f32[4,8], f32[4,8]), (f32[8,8], f32[8,8]))");

    cxla_instr *z = P(&t, "f32[8,8]");
    cxla_instr *rs = I(&t, CXLA_OP_REDUCE_SCATTER, "f32[4,8]", 1, z);
    a_ints(&t, rs, CXLA_ATTR_DIMENSIONS, 1, 0);
    INFER_ERR(rs, "missing called computation to_apply");
    a_comp(&t, rs, CXLA_ATTR_TO_APPLY, add);
    INFER_OK(rs, "f32[4,8]");
    a_groups(&t, rs, "0,1,2,3");
    INFER_ERR(rs, "f32[8,8] to f32[4,8] makes 2 shards but the groups have 4 members");
    cxla_instr *rs2 = I(&t, CXLA_OP_REDUCE_SCATTER, "f32[4,8]", 1, y);
    a_ints(&t, rs2, CXLA_ATTR_DIMENSIONS, 1, 0);
    a_comp(&t, rs2, CXLA_ATTR_TO_APPLY, add);
    a_groups(&t, rs2, "0,1");
    INFER_ERR(rs2, "dimension 0 of f32[7,8] is not divisible by the 2 shards");
    t_free(&t);
}

static void test_all_to_all(void) {
    tm t = t_new();
    cxla_instr *x = P(&t, "f32[8,4]"), *y = P(&t, "f32[8,5]");
    cxla_instr *a = I(&t, CXLA_OP_ALL_TO_ALL, "f32[8,4]", 1, x);
    a_groups(&t, a, "0,1");
    a_ints(&t, a, CXLA_ATTR_DIMENSIONS, 1, 0);
    INFER_OK(a, "f32[8,4]");
    a_groups(&t, a, "0,1,2");
    INFER_ERR(a, "dimension 0 of f32[8,4] is not divisible by the 3 participants");
    a_ints(&t, a, CXLA_ATTR_DIMENSIONS, 1, 2);
    INFER_ERR(a, "dimensions={2} must name one dimension of f32[8,4]");
    cxla_instr *a2 = I(&t, CXLA_OP_ALL_TO_ALL, "f32[8,4]", 2, x, x);
    a_ints(&t, a2, CXLA_ATTR_DIMENSIONS, 1, 0);
    INFER_ERR(a2, "the array form (dimensions=) takes one operand, got 2");
    /* the tuple form */
    cxla_instr *tf = I(&t, CXLA_OP_ALL_TO_ALL, "(f32[8,4], f32[8,4])", 2, x, x);
    a_groups(&t, tf, "0,1");
    INFER_OK(tf, "(f32[8,4], f32[8,4])");
    a_groups(&t, tf, "0,1,2");
    INFER_ERR(tf, "the tuple form takes one operand per participant (3), got 2");
    cxla_instr *tf2 = I(&t, CXLA_OP_ALL_TO_ALL, "(f32[8,4], f32[8,5])", 2, x, y);
    INFER_ERR(tf2, "operands must have the same shape, got f32[8,4] and f32[8,5]");

    /* no groups: with a channel all-to-all spans the partitions */
    t.m->num_partitions = 4;
    t.m->replica_count = 3;
    cxla_instr *np = I(&t, CXLA_OP_ALL_TO_ALL, "f32[8,4]", 1, x);
    a_ints(&t, np, CXLA_ATTR_DIMENSIONS, 1, 1);
    INFER_ERR(np, "dimension 1 of f32[8,4] is not divisible by the 3 participants");
    INFER_ERR(I(&t, CXLA_OP_ALL_TO_ALL, "f32[8,4]", 1, x),
              "one operand per participant (3), got 1");
    a_int(np, CXLA_ATTR_CHANNEL_ID, 1);
    INFER_OK(np, "f32[8,4]");
    /* all-gather with a channel: replicas x partitions */
    cxla_instr *ag = I(&t, CXLA_OP_ALL_GATHER, "f32[96,4]", 1, x);
    a_ints(&t, ag, CXLA_ATTR_DIMENSIONS, 1, 0);
    a_int(ag, CXLA_ATTR_CHANNEL_ID, 1);
    INFER_OK(ag, "f32[96,4]");
    /* the mesh form is kept as text and not checked */
    cxla_attr mesh = {.id = CXLA_ATTR_REPLICA_GROUPS, .kind = CXLA_ATTR_KIND_REPLICA_GROUPS};
    mesh.v.groups.text = "@mesh[x=2]";
    a_set(ag, &mesh);
    INFER_OK(ag, "f32[96,4]");
    t.m->num_partitions = 1;
    t.m->replica_count = 1;

    cxla_instr *in = P(&t, "f32[16]"), *out = P(&t, "f32[32]"), *off = P(&t, "s64[2]");
    cxla_instr *bad = P(&t, "f32[2]"), *oi = P(&t, "s32[16]");
    INFER_OK(I(&t, CXLA_OP_RAGGED_ALL_TO_ALL, "f32[32]", 6, in, out, off, off, off, off),
             "f32[32]");
    INFER_ERR(I(&t, CXLA_OP_RAGGED_ALL_TO_ALL, "f32[32]", 6, in, out, off, bad, off, off),
              "offsets and sizes must be integer arrays of one shape");
    INFER_ERR(I(&t, CXLA_OP_RAGGED_ALL_TO_ALL, "f32[32]", 6, in, oi, off, off, off, off),
              "input f32[16] and output s32[16] must have the same element type and rank");
    t_free(&t);
}

static void test_collective_permute_broadcast(void) {
    tm t = t_new();
    cxla_instr *x = P(&t, "f32[8]"), *y = P(&t, "s32[2]");
    cxla_instr *p = I(&t, CXLA_OP_COLLECTIVE_PERMUTE, "f32[8]", 1, x);
    INFER_ERR(p, "missing attribute source_target_pairs");
    a_pairs(&t, p, 2, 0, 1, 1, 0);
    INFER_OK(p, "f32[8]");
    a_pairs(&t, p, 2, 0, 1, 0, 2);
    INFER_ERR(p, "source 0 appears twice in source_target_pairs");
    a_pairs(&t, p, 2, 0, 1, 2, 1);
    INFER_ERR(p, "target 1 appears twice");
    a_pairs(&t, p, 1, -1, 1);
    INFER_ERR(p, "source -1 in source_target_pairs is outside");
    t.m->replica_count = 2;
    a_pairs(&t, p, 1, 0, 2);
    INFER_ERR(p, "target 2 in source_target_pairs is outside 0..1");
    a_int(p, CXLA_ATTR_CHANNEL_ID, 3); /* with a channel: partitions count, here 1 = unknown */
    INFER_OK(p, "f32[8]");
    t.m->replica_count = 1;
    cxla_attr odd = {.id = CXLA_ATTR_SOURCE_TARGET_PAIRS, .kind = CXLA_ATTR_KIND_INT_LISTS};
    int64_t len = 3, triple[3] = {0, 1, 2};
    int64_t *lists[1] = {triple};
    odd.v.int_lists.count = 1;
    odd.v.int_lists.lengths = &len;
    odd.v.int_lists.lists = lists;
    a_set(p, &odd);
    INFER_ERR(p, "source_target_pairs entry 0 must be {source,target}");
    /* several operands give a tuple; the in-place form gives the output buffer */
    cxla_instr *p2 = I(&t, CXLA_OP_COLLECTIVE_PERMUTE, "(f32[8], s32[2])", 2, x, y);
    a_pairs(&t, p2, 1, 0, 1);
    INFER_OK(p2, "(f32[8], s32[2])");
    cxla_instr *buf = P(&t, "f32[16]"), *offs = P(&t, "(s32[])");
    cxla_instr *p3 = I(&t, CXLA_OP_COLLECTIVE_PERMUTE, "f32[16]", 4, x, buf, offs, offs);
    a_pairs(&t, p3, 2, 0, 1, 0, 1);
    INFER_ERR(p3, "the in-place form needs slice_sizes={{...},...} with 1 list(s)");
    cxla_attr sizes = {.id = CXLA_ATTR_SLICE_SIZES, .kind = CXLA_ATTR_KIND_INT_LISTS};
    int64_t one = 1, four[1] = {4}, nine[1] = {9};
    int64_t *size_lists[1] = {four};
    sizes.v.int_lists.count = 1;
    sizes.v.int_lists.lengths = &one;
    sizes.v.int_lists.lists = size_lists;
    a_set(p3, &sizes);
    INFER_ERR(p3, "source 0 appears twice in source_target_pairs");
    a_pairs(&t, p3, 1, 0, 1);
    INFER_OK(p3, "f32[16]");
    size_lists[0] = nine; /* past the input's 8 elements */
    a_set(p3, &sizes);
    INFER_ERR(p3, "slice_sizes entry 0 {9} must hold one size per dimension");
    cxla_instr *offs2 = P(&t, "(s32[], s32[])");
    cxla_instr *p5 = I(&t, CXLA_OP_COLLECTIVE_PERMUTE, "f32[16]", 4, x, buf, offs2, offs2);
    a_pairs(&t, p5, 1, 0, 1);
    INFER_ERR(p5, "the input start indices of buffer 0 must be a tuple of 1 integer scalars");
    cxla_instr *tup = P(&t, "(f32[8])");
    cxla_instr *p4 = I(&t, CXLA_OP_COLLECTIVE_PERMUTE, "(f32[8])", 1, tup);
    a_pairs(&t, p4, 1, 0, 1);
    INFER_ERR(p4, "operand 0 must be an array");

    cxla_instr *ps =
        I(&t, CXLA_OP_COLLECTIVE_PERMUTE_START, "(f32[8], f32[8], u32[], u32[])", 1, x);
    a_pairs(&t, ps, 1, 0, 1);
    INFER_OK(ps, "(f32[8], f32[8], u32[], u32[])");
    INFER_OK(I(&t, CXLA_OP_COLLECTIVE_PERMUTE_DONE, "f32[8]", 1, ps), "f32[8]");
    INFER_ERR(I(&t, CXLA_OP_COLLECTIVE_PERMUTE_DONE, "f32[8]", 1, x),
              "the operand must be a collective-permute-start's");
    cxla_instr *ps2 =
        I(&t, CXLA_OP_COLLECTIVE_PERMUTE_START, "(f32[8], f32[16])", 4, x, buf, offs, offs);
    a_pairs(&t, ps2, 1, 0, 1);
    size_lists[0] = four;
    a_set(ps2, &sizes);
    INFER_OK(ps2, "(f32[8], f32[16])");
    INFER_ERR(I(&t, CXLA_OP_COLLECTIVE_PERMUTE_START, "(f32[8], f32[8])", 1, x),
              "missing attribute source_target_pairs");

    cxla_instr *b = I(&t, CXLA_OP_COLLECTIVE_BROADCAST, "f32[8]", 1, x);
    a_groups(&t, b, "0,1");
    INFER_OK(b, "f32[8]");
    cxla_instr *root = P(&t, "f32[1]");
    INFER_OK(I(&t, CXLA_OP_COLLECTIVE_BROADCAST, "f32[8]", 2, x, root), "f32[8]");
    INFER_ERR(I(&t, CXLA_OP_COLLECTIVE_BROADCAST, "f32[8]", 0), "at least one operand");
    a_groups(&t, b, "0;1,2");
    INFER_ERR(b, "replica groups must have the same size");
    t_free(&t);
}

TEST_MAIN(TEST(test_while), TEST(test_conditional), TEST(test_call_fusion_custom_call),
          TEST(test_rng), TEST(test_tokens_and_host_transfers), TEST(test_async_wrappers),
          TEST(test_all_reduce_and_groups), TEST(test_all_gather_reduce_scatter),
          TEST(test_all_to_all), TEST(test_collective_permute_broadcast))
