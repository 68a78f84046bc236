/* Shape inference for control flow and calls (while, conditional, call, fusion,
 * custom-call), random numbers, tokens and host communication (after-all,
 * add-dependency, infeed, outfeed, send/recv), and the asynchronous wrappers
 * (async-start/update/done, copy-start/done). The rules follow XLA's ShapeInference and
 * the ShapeVerifier handlers of hlo_verifier.cc. Collectives are in infer_collective.c. */
#include <inttypes.h>
#include <string.h>

#include "hlo/infer_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in shape inference")

/* Argument |i| of |in| must match parameter |p| of |comp|. */
static cxla_status check_argument(const cxla_instr *in, cxla_arena *arena,
                                  const cxla_computation *comp, int64_t p, const cxla_shape *arg,
                                  const char *what) {
    const cxla_shape *param = &comp->params[p]->shape;
    if (!cxla_infer_compatible(arg, param))
        return cxla_infer_fail(in, "%s %s does not match parameter %" PRId64 " of '%s' %s", what,
                               STR(arg), p, comp->name, cxla_infer_signature_str(arena, comp));
    return NULL;
}

static cxla_status check_param_count(const cxla_instr *in, cxla_arena *arena,
                                     const cxla_computation *comp, int64_t n) {
    if (comp->param_count != n)
        return cxla_infer_fail(in, "'%s' must take %" PRId64 " parameter(s), its signature is %s",
                               comp->name, n, cxla_infer_signature_str(arena, comp));
    return NULL;
}

/* ---- control flow and calls ------------------------------------------------------ */

CXLA_INFER_DECLARE(cxla_infer_while) {
    cxla_computation *cond, *body;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_called(in, CXLA_ATTR_CONDITION, &cond));
    CXLA_RETURN_IF_ERROR(cxla_infer_req_called(in, CXLA_ATTR_BODY, &body));
    CXLA_RETURN_IF_ERROR(check_param_count(in, arena, cond, 1));
    CXLA_RETURN_IF_ERROR(check_param_count(in, arena, body, 1));
    const cxla_shape *init = OPS(0);
    CXLA_RETURN_IF_ERROR(check_argument(in, arena, body, 0, init, "the init value"));
    CXLA_RETURN_IF_ERROR(check_argument(in, arena, cond, 0, init, "the init value"));
    cxla_shape pred = {.type = CXLA_PRED};
    if (!cxla_infer_compatible(&cond->root->shape, &pred))
        return cxla_infer_fail(in, "condition '%s' must return pred[], its signature is %s",
                               cond->name, cxla_infer_signature_str(arena, cond));
    if (!cxla_infer_compatible(&body->root->shape, init))
        return cxla_infer_fail(in, "body '%s' must return the loop state %s, its signature is %s",
                               body->name, STR(init), cxla_infer_signature_str(arena, body));
    return cxla_infer_copy(arena, &body->root->shape, out);
}

CXLA_INFER_DECLARE(cxla_infer_conditional) {
    if (in->operand_count < 1) return cxla_infer_fail(in, "expects a predicate or branch index");
    const cxla_shape *p = OPS(0);
    cxla_computation *branches[2];
    cxla_computation *const *list;
    int64_t n;
    if (p->type == CXLA_PRED && cxla_infer_is_scalar(p)) {
        CXLA_RETURN_IF_ERROR(cxla_infer_req_called(in, CXLA_ATTR_TRUE_COMPUTATION, &branches[0]));
        CXLA_RETURN_IF_ERROR(cxla_infer_req_called(in, CXLA_ATTR_FALSE_COMPUTATION, &branches[1]));
        list = branches;
        n = 2;
    } else if (p->type == CXLA_S32 && cxla_infer_is_scalar(p)) {
        const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_BRANCH_COMPUTATIONS);
        if (!a || a->kind != CXLA_ATTR_KIND_COMPUTATIONS || a->v.comps.count < 1)
            return cxla_infer_fail(in, "an s32 branch index needs branch_computations={...}");
        list = a->v.comps.items;
        n = a->v.comps.count;
        for (int64_t j = 0; j < n; j++) {
            if (!list[j])
                return cxla_infer_fail(in, "branch computation %" PRId64 " is missing", j);
            CXLA_RETURN_IF_ERROR(cxla_infer_check_callable(in, list[j]));
        }
    } else {
        return cxla_infer_fail(in, "the first operand must be pred[] or s32[], got %s", STR(p));
    }
    if (in->operand_count != n + 1)
        return cxla_infer_fail(in,
                               "expects the %s and one operand per branch (%" PRId64
                               "), got %" PRId64 " operand(s)",
                               p->type == CXLA_PRED ? "predicate" : "index", n, in->operand_count);
    const cxla_shape *result = &list[0]->root->shape;
    for (int64_t j = 0; j < n; j++) {
        CXLA_RETURN_IF_ERROR(check_param_count(in, arena, list[j], 1));
        CXLA_RETURN_IF_ERROR(check_argument(in, arena, list[j], 0, OPS(j + 1), "branch operand"));
        if (!cxla_infer_compatible(&list[j]->root->shape, result))
            return cxla_infer_fail(in,
                                   "branches must return the same shape: '%s' returns %s, '%s' "
                                   "returns %s",
                                   list[0]->name, STR(result), list[j]->name,
                                   STR(&list[j]->root->shape));
    }
    return cxla_infer_copy(arena, result, out);
}

CXLA_INFER_DECLARE(cxla_infer_call) {
    cxla_computation *f;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_called(in, CXLA_ATTR_TO_APPLY, &f));
    CXLA_RETURN_IF_ERROR(check_param_count(in, arena, f, in->operand_count));
    for (int64_t i = 0; i < in->operand_count; i++)
        CXLA_RETURN_IF_ERROR(check_argument(in, arena, f, i, OPS(i), "argument"));
    return cxla_infer_copy(arena, &f->root->shape, out);
}

CXLA_INFER_DECLARE(cxla_infer_fusion) {
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_CALLS);
    if (!a || (a->kind != CXLA_ATTR_KIND_COMPUTATIONS && a->kind != CXLA_ATTR_KIND_COMPUTATION) ||
        a->v.comps.count != 1 || !a->v.comps.items[0])
        return cxla_infer_fail(in, "needs exactly one fused computation in calls=");
    const cxla_computation *f = a->v.comps.items[0];
    CXLA_RETURN_IF_ERROR(cxla_infer_check_callable(in, f));
    /* XLA's verifier lets a fusion have more operands than its computation has parameters
     * (HandleFusion checks only "greater than"): parameter i takes operand i, the extra
     * operands are unused. */
    if (f->param_count > in->operand_count)
        CXLA_RETURN_IF_ERROR(check_param_count(in, arena, f, in->operand_count));
    for (int64_t i = 0; i < f->param_count; i++)
        CXLA_RETURN_IF_ERROR(check_argument(in, arena, f, i, OPS(i), "argument"));
    return cxla_infer_copy(arena, &f->root->shape, out);
}

/* XLA's builder library functions (targets "xla_builder.math.Acos" ...) carry their
 * decomposition as their called computation, and run as a call of it where no function of
 * that name is registered (exec_custom_call_decomposition): it must take the operands and
 * give the declared result. Without called computations the target is an ordinary one. */
static cxla_status check_decomposition(const cxla_instr *in, cxla_arena *arena, const char *target,
                                       const cxla_shape *result) {
    static const char prefix[] = "xla_builder.";
    if (!target || strncmp(target, prefix, sizeof(prefix) - 1) != 0) return NULL;
    cxla_computation *called[2];
    int64_t n = cxla_instr_called_computations(in, called, 2);
    if (n == 0) return NULL;
    if (n != 1)
        return cxla_infer_fail(in,
                               "custom-call target '%s' is one of XLA's builder functions: its "
                               "decomposition is one computation, got %" PRId64,
                               target, n);
    const cxla_computation *f = called[0];
    CXLA_RETURN_IF_ERROR(cxla_infer_check_callable(in, f));
    if (f->param_count != in->operand_count)
        return cxla_infer_fail(
            in,
            "the decomposition '%s' of '%s' takes %" PRId64
            " parameter(s), the custom call has %" PRId64 " operand(s); its signature is %s",
            f->name, target, f->param_count, in->operand_count, cxla_infer_signature_str(arena, f));
    for (int64_t i = 0; i < in->operand_count; i++)
        CXLA_RETURN_IF_ERROR(check_argument(in, arena, f, i, OPS(i), "operand"));
    if (!cxla_infer_compatible(&f->root->shape, result))
        return cxla_infer_fail(in, "the decomposition '%s' of '%s' returns %s, the custom call %s",
                               f->name, target, STR(&f->root->shape), STR(result));
    return NULL;
}

CXLA_INFER_DECLARE(cxla_infer_custom_call) {
    const cxla_attr *target = cxla_instr_attr(in, CXLA_ATTR_CUSTOM_CALL_TARGET);
    if (!target || target->kind != CXLA_ATTR_KIND_STRING)
        return cxla_infer_fail(in, "missing attribute custom_call_target=\"...\"");
    const cxla_attr *c = cxla_instr_attr(in, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS);
    if (c && c->kind == CXLA_ATTR_KIND_SHAPES) {
        if (c->v.shapes.count != in->operand_count)
            return cxla_infer_fail(
                in, "operand_layout_constraints has %" PRId64 " shapes for %" PRId64 " operands",
                c->v.shapes.count, in->operand_count);
        for (int64_t i = 0; i < in->operand_count; i++)
            if (!cxla_infer_compatible(&c->v.shapes.items[i], OPS(i)))
                return cxla_infer_fail(in,
                                       "operand %" PRId64 " %s does not match its layout "
                                       "constraint %s",
                                       i, STR(OPS(i)), STR(&c->v.shapes.items[i]));
    }
    cxla_status s = cxla_shape_validate(&in->shape);
    if (s) {
        cxla_status e = cxla_infer_fail(in, "invalid declared shape: %s", cxla_status_message(s));
        cxla_status_free(s);
        return e;
    }
    CXLA_RETURN_IF_ERROR(check_decomposition(in, arena, target->v.s, &in->shape));
    return cxla_infer_copy(arena, &in->shape, out);
}

/* ---- random numbers -------------------------------------------------------------- */

CXLA_INFER_DECLARE(cxla_infer_rng) {
    if (in->operand_count != 2)
        return cxla_infer_fail(in, "expects 2 operands, got %" PRId64, in->operand_count);
    const cxla_shape *a = OPS(0), *b = OPS(1), *r = &in->shape;
    if (!cxla_infer_is_scalar(a) || !cxla_infer_is_scalar(b))
        return cxla_infer_fail(in, "the two parameters must be scalars, got %s and %s", STR(a),
                               STR(b));
    if (a->type != b->type || r->type != a->type || !cxla_infer_is_array(r))
        return cxla_infer_fail(in,
                               "the parameters %s, %s and the result %s must share one element "
                               "type",
                               STR(a), STR(b), STR(r));
    const char *dist;
    CXLA_RETURN_IF_ERROR(cxla_infer_req_word(in, CXLA_ATTR_DISTRIBUTION, &dist));
    cxla_type t = a->type;
    if (strcmp(dist, "rng_uniform") == 0) {
        if (!cxla_type_is_float(t) && !cxla_type_is_integer(t) && t != CXLA_PRED)
            return cxla_infer_fail(in, "rng_uniform needs float, integer or pred values, got %s",
                                   STR(a));
    } else if (strcmp(dist, "rng_normal") == 0) {
        if (!cxla_type_is_float(t))
            return cxla_infer_fail(in, "rng_normal needs floating-point values, got %s", STR(a));
    } else {
        return cxla_infer_fail(in, "unknown distribution=%s", dist);
    }
    return cxla_infer_copy(arena, r, out);
}

CXLA_INFER_DECLARE(cxla_infer_rng_bit_generator) {
    const cxla_shape *state = OPS(0), *r = &in->shape;
    if (!cxla_infer_is_array(state) || state->type != CXLA_U64 || state->rank != 1)
        return cxla_infer_fail(in, "the state must be a u64 vector, got %s", STR(state));
    const char *alg = cxla_instr_word(in, CXLA_ATTR_ALGORITHM);
    if (alg && strcmp(alg, "rng_default") != 0 && strcmp(alg, "rng_three_fry") != 0 &&
        strcmp(alg, "rng_philox") != 0)
        return cxla_infer_fail(in, "unknown algorithm=%s", alg);
    /* XLA's verifier returns early on a non-tuple result: the random bits alone, the new
     * state dropped. cxla asks that they be unsigned integers, as in the tuple form. */
    if (cxla_infer_is_array(r) && cxla_type_is_unsigned(r->type))
        return cxla_infer_copy(arena, r, out);
    if (r->type != CXLA_TUPLE || r->tuple_count != 2 || !cxla_infer_is_array(&r->elements[1]) ||
        !cxla_type_is_unsigned(r->elements[1].type))
        return cxla_infer_fail(in,
                               "the result must be (new state, unsigned random bits) or "
                               "the unsigned random bits alone, declared %s",
                               STR(r));
    const cxla_shape *parts[2] = {state, &r->elements[1]};
    return cxla_infer_make_tuple(arena, 2, parts, out);
}

CXLA_INFER_DECLARE(cxla_infer_rng_get_and_update_state) {
    int64_t delta;
    if (cxla_instr_attr(in, CXLA_ATTR_DELTA) && !cxla_instr_int(in, CXLA_ATTR_DELTA, &delta))
        return cxla_infer_fail(in, "delta must be an integer");
    int64_t two = 2;
    return cxla_infer_make_array(arena, CXLA_U64, 1, &two, NULL, out);
}

/* ---- tokens and host communication ----------------------------------------------- */

static cxla_status expect_token(const cxla_instr *in, cxla_arena *arena, int64_t i) {
    if (!cxla_infer_is_token(OPS(i)))
        return cxla_infer_fail(in, "operand %" PRId64 " must be a token, got %s", i, STR(OPS(i)));
    return NULL;
}

/* after-all joins tokens; like XLA's verifier it accepts any operands (XLA's own tests
 * order a token after plain values: `token0 = token[] after-all(neg)`). */
CXLA_INFER_DECLARE(cxla_infer_after_all) {
    return cxla_infer_make_token(out);
}

CXLA_INFER_DECLARE(cxla_infer_add_dependency) {
    CXLA_RETURN_IF_ERROR(expect_token(in, arena, 1));
    return cxla_infer_copy(arena, OPS(0), out);
}

/* The declared result must be a tuple of |n| with a token at |token_at|. */
static cxla_status declared_tuple(const cxla_instr *in, cxla_arena *arena, int64_t n,
                                  int64_t token_at, const char *form) {
    const cxla_shape *r = &in->shape;
    if (r->type != CXLA_TUPLE || r->tuple_count != n ||
        !cxla_infer_is_token(&r->elements[token_at]))
        return cxla_infer_fail(in, "the result must be %s, declared %s", form, STR(r));
    return NULL;
}

CXLA_INFER_DECLARE(cxla_infer_infeed) {
    CXLA_RETURN_IF_ERROR(expect_token(in, arena, 0));
    CXLA_RETURN_IF_ERROR(declared_tuple(in, arena, 2, 1, "(data, token[])"));
    return cxla_infer_copy(arena, &in->shape, out);
}

CXLA_INFER_DECLARE(cxla_infer_outfeed) {
    CXLA_RETURN_IF_ERROR(expect_token(in, arena, 1));
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_OUTFEED_SHAPE);
    if (a && a->kind == CXLA_ATTR_KIND_SHAPE && a->v.shapes.count == 1 &&
        !cxla_infer_compatible(&a->v.shapes.items[0], OPS(0)))
        return cxla_infer_fail(in, "outfeed_shape=%s differs from the data %s",
                               STR(&a->v.shapes.items[0]), STR(OPS(0)));
    return cxla_infer_make_token(out);
}

static cxla_status send_like(cxla_arena *arena, const cxla_shape *data, cxla_shape *out) {
    cxla_shape u32, tok;
    CXLA_RETURN_IF_ERROR(cxla_infer_make_scalar(arena, CXLA_U32, &u32));
    CXLA_RETURN_IF_ERROR(cxla_infer_make_token(&tok));
    const cxla_shape *parts[3] = {data, &u32, &tok};
    return cxla_infer_make_tuple(arena, 3, parts, out);
}

CXLA_INFER_DECLARE(cxla_infer_send) {
    CXLA_RETURN_IF_ERROR(expect_token(in, arena, 1));
    return send_like(arena, OPS(0), out);
}

CXLA_INFER_DECLARE(cxla_infer_recv) {
    CXLA_RETURN_IF_ERROR(expect_token(in, arena, 0));
    CXLA_RETURN_IF_ERROR(declared_tuple(in, arena, 3, 2, "(data, u32[], token[])"));
    return send_like(arena, &in->shape.elements[0], out);
}

/* The operand of send-done / recv-done: a (data, u32[], token[]) tuple. */
static cxla_status expect_send_tuple(const cxla_instr *in, cxla_arena *arena) {
    const cxla_shape *s = OPS(0);
    if (s->type != CXLA_TUPLE || s->tuple_count != 3 || !cxla_infer_is_token(&s->elements[2]))
        return cxla_infer_fail(in, "the operand must be a (data, u32[], token[]) tuple, got %s",
                               STR(s));
    return NULL;
}

CXLA_INFER_DECLARE(cxla_infer_send_done) {
    CXLA_RETURN_IF_ERROR(expect_send_tuple(in, arena));
    return cxla_infer_make_token(out);
}

CXLA_INFER_DECLARE(cxla_infer_recv_done) {
    CXLA_RETURN_IF_ERROR(expect_send_tuple(in, arena));
    cxla_shape tok;
    CXLA_RETURN_IF_ERROR(cxla_infer_make_token(&tok));
    const cxla_shape *parts[2] = {&OPS(0)->elements[0], &tok};
    return cxla_infer_make_tuple(arena, 2, parts, out);
}

/* ---- asynchronous wrappers ------------------------------------------------------- */

/* The computation an async op wraps: calls={...} (one), or NULL for the sugared form
 * (`custom-call-start` ...) when the parser kept no computation. */
static cxla_status async_computation(const cxla_instr *in, const cxla_computation **comp) {
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_CALLS);
    *comp = NULL;
    if (!a) return NULL;
    if ((a->kind != CXLA_ATTR_KIND_COMPUTATIONS && a->kind != CXLA_ATTR_KIND_COMPUTATION) ||
        a->v.comps.count != 1 || !a->v.comps.items[0])
        return cxla_infer_fail(in, "calls= must name exactly one computation");
    *comp = a->v.comps.items[0];
    return cxla_infer_check_callable(in, *comp);
}

/* XLA's CheckAsyncOpComputationShapes: the async state is a tuple of at least two, with
 * {0} the tuple of the wrapped computation's parameters and {1} its result. */
static cxla_status check_async_state(const cxla_instr *in, cxla_arena *arena,
                                     const cxla_shape *state, const cxla_computation *comp) {
    if (state->type != CXLA_TUPLE || state->tuple_count < 2 ||
        state->elements[0].type != CXLA_TUPLE)
        return cxla_infer_fail(in,
                               "the async state must be ((operands...), result, context...), "
                               "got %s",
                               STR(state));
    if (!comp) return NULL;
    const cxla_shape *params = &state->elements[0];
    bool ok = params->tuple_count == comp->param_count;
    for (int64_t i = 0; ok && i < comp->param_count; i++)
        ok = cxla_infer_compatible(&params->elements[i], &comp->params[i]->shape);
    if (!ok)
        return cxla_infer_fail(in, "async state {0} %s must match the parameters of '%s' %s",
                               STR(params), comp->name, cxla_infer_signature_str(arena, comp));
    if (!cxla_infer_compatible(&state->elements[1], &comp->root->shape))
        return cxla_infer_fail(in, "async state {1} %s must match the result of '%s' %s",
                               STR(&state->elements[1]), comp->name,
                               cxla_infer_signature_str(arena, comp));
    return NULL;
}

CXLA_INFER_DECLARE(cxla_infer_async_start) {
    const cxla_computation *comp;
    CXLA_RETURN_IF_ERROR(async_computation(in, &comp));
    const cxla_shape *d = &in->shape;
    if (d->type != CXLA_TUPLE || d->tuple_count < 2)
        return cxla_infer_fail(in,
                               "the result must be ((operands...), result, context...), "
                               "declared %s",
                               STR(d));
    /* A custom-call-start (the sugar) of one of XLA's builder functions: its decomposition
     * against the operands and the wrapped result, as for the custom call itself. */
    const cxla_attr *target = cxla_instr_attr(in, CXLA_ATTR_CUSTOM_CALL_TARGET);
    if (!comp && target && target->kind == CXLA_ATTR_KIND_STRING)
        CXLA_RETURN_IF_ERROR(check_decomposition(in, arena, target->v.s, &d->elements[1]));
    if (comp) {
        if (comp->param_count != in->operand_count)
            return cxla_infer_fail(
                in, "'%s' takes %" PRId64 " parameter(s) but %" PRId64 " operand(s) are given",
                comp->name, comp->param_count, in->operand_count);
        for (int64_t i = 0; i < in->operand_count; i++)
            CXLA_RETURN_IF_ERROR(check_argument(in, arena, comp, i, OPS(i), "operand"));
    }
    /* ((operand shapes), wrapped result, declared context...) */
    int64_t n = d->tuple_count;
    const cxla_shape **parts = cxla_arena_alloc_array(arena, (size_t)n, sizeof(*parts));
    cxla_shape *ops = cxla_arena_alloc(arena, sizeof(cxla_shape));
    if (!parts || !ops) return OOM();
    CXLA_RETURN_IF_ERROR(cxla_infer_operands_tuple(in, arena, false, ops));
    parts[0] = ops;
    parts[1] = comp ? &comp->root->shape : &d->elements[1];
    for (int64_t i = 2; i < n; i++) parts[i] = &d->elements[i];
    CXLA_RETURN_IF_ERROR(cxla_infer_make_tuple(arena, n, parts, out));
    return check_async_state(in, arena, out, comp);
}

/* The wrapped computation of an update/done: its own calls=, else its start's. */
static const cxla_computation *chain_computation(const cxla_instr *in) {
    for (int guard = 0; in && guard < 1000; guard++) {
        const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_CALLS);
        if (a &&
            (a->kind == CXLA_ATTR_KIND_COMPUTATIONS || a->kind == CXLA_ATTR_KIND_COMPUTATION) &&
            a->v.comps.count == 1)
            return a->v.comps.items[0];
        if (in->opcode == CXLA_OP_ASYNC_START || in->operand_count < 1) return NULL;
        in = in->operands[0];
    }
    return NULL;
}

static cxla_status expect_async_operand(const cxla_instr *in) {
    const cxla_instr *op = in->operands[0];
    if (op->opcode != CXLA_OP_ASYNC_START && op->opcode != CXLA_OP_ASYNC_UPDATE)
        return cxla_infer_fail(in, "the operand must be an async-start or async-update, got %s",
                               cxla_opcode_name(op->opcode));
    const cxla_computation *mine, *theirs = chain_computation(op);
    CXLA_RETURN_IF_ERROR(async_computation(in, &mine));
    if (mine && theirs && mine != theirs)
        return cxla_infer_fail(in, "wraps '%s' but its operand '%s' wraps '%s'", mine->name,
                               op->name, theirs->name);
    return NULL;
}

CXLA_INFER_DECLARE(cxla_infer_async_update) {
    CXLA_RETURN_IF_ERROR(expect_async_operand(in));
    const cxla_computation *comp = chain_computation(in);
    if (comp) CXLA_RETURN_IF_ERROR(cxla_infer_check_callable(in, comp));
    CXLA_RETURN_IF_ERROR(check_async_state(in, arena, OPS(0), comp));
    return cxla_infer_copy(arena, OPS(0), out);
}

CXLA_INFER_DECLARE(cxla_infer_async_done) {
    CXLA_RETURN_IF_ERROR(expect_async_operand(in));
    const cxla_computation *comp = chain_computation(in);
    if (comp) CXLA_RETURN_IF_ERROR(cxla_infer_check_callable(in, comp));
    CXLA_RETURN_IF_ERROR(check_async_state(in, arena, OPS(0), comp));
    return cxla_infer_copy(arena, &OPS(0)->elements[1], out);
}

CXLA_INFER_DECLARE(cxla_infer_copy_start) {
    cxla_shape u32;
    CXLA_RETURN_IF_ERROR(cxla_infer_make_scalar(arena, CXLA_U32, &u32));
    const cxla_shape *parts[3] = {OPS(0), OPS(0), &u32};
    return cxla_infer_make_tuple(arena, 3, parts, out);
}

CXLA_INFER_DECLARE(cxla_infer_copy_done) {
    const cxla_shape *s = OPS(0);
    if (s->type != CXLA_TUPLE || s->tuple_count < 2)
        return cxla_infer_fail(in,
                               "the operand must be a copy-start's (dest, src, context) "
                               "tuple, got %s",
                               STR(s));
    if (!cxla_infer_compatible(&s->elements[0], &s->elements[1]))
        return cxla_infer_fail(in, "destination %s and source %s must have the same shape",
                               STR(&s->elements[0]), STR(&s->elements[1]));
    return cxla_infer_copy(arena, &s->elements[0], out);
}
