/* Interpreter handlers for the operations that talk to the host: infeed, outfeed, send,
 * send-done, recv and recv-done. Data moves through the callbacks in exec_run_options.host,
 * which the runtime installs (host queues and channels); tokens order the operations, and
 * the driver evaluates them in that order. docs/semantics.md ("Host transfers") says
 * what each returns. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp_host.h"

static cxla_status oom(void) {
    return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

/* ---- helpers shared with interp_custom_call.c ------------------------------------- */

cxla_status interp_annotate(cxla_status s, const cxla_instr *instr) {
    if (!s) return NULL;
    if (instr->line > 0)
        return cxla_status_annotate(s, "%s (%s, line %" PRId64 ")", instr->name,
                                    cxla_opcode_name(instr->opcode), instr->line);
    return cxla_status_annotate(s, "%s (%s)", instr->name, cxla_opcode_name(instr->opcode));
}

bool interp_is_row_major(const cxla_literal *lit) {
    cxla_type t = cxla_literal_type(lit);
    if (t == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            if (!interp_is_row_major(cxla_literal_tuple_element_const(lit, i))) return false;
        return true;
    }
    return !cxla_type_is_array(t) || cxla_layout_is_default(cxla_literal_shape(lit));
}

cxla_status interp_relayout_tree(const cxla_literal *lit, const cxla_shape *shape,
                                 cxla_literal **out) {
    cxla_type t = cxla_literal_type(lit);
    if (t == CXLA_TUPLE) {
        int64_t n = cxla_literal_tuple_count(lit);
        cxla_literal **elements = calloc((size_t)(n ? n : 1), sizeof(*elements));
        if (!elements) return oom();
        cxla_status s = NULL;
        for (int64_t i = 0; i < n && !s; i++)
            s = interp_relayout_tree(cxla_literal_tuple_element_const(lit, i),
                                     shape && shape->type == CXLA_TUPLE && i < shape->tuple_count
                                         ? &shape->elements[i]
                                         : NULL,
                                     &elements[i]);
        if (!s) s = cxla_literal_create_tuple(elements, n, out);
        if (s)
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        free(elements);
        return s;
    }
    if (!cxla_type_is_array(t)) return cxla_literal_clone(lit, out);
    const cxla_shape *have = cxla_literal_shape(lit);
    cxla_layout layout;
    const cxla_layout *want = NULL;
    if (shape && shape->layout && shape->rank == have->rank) {
        layout = *shape->layout;
        layout.tile_count = 0; /* tiles and memory spaces do not change host order */
        layout.tiles = NULL;
        layout.memory_space = 0;
        want = &layout;
    }
    cxla_shape target = *have;
    target.layout = (cxla_layout *)want;
    if (cxla_shape_equal(have, &target)) return cxla_literal_clone(lit, out);
    return cxla_literal_relayout(lit, want, out);
}

/* ---- helpers -------------------------------------------------------------------------- */

static cxla_status new_token(cxla_literal **out) {
    cxla_shape token = {.type = CXLA_TOKEN};
    return cxla_literal_create(&token, out);
}

static cxla_status new_u32_zero(cxla_literal **out) {
    return cxla_literal_create_scalar(CXLA_U32, 0, out);
}

/* A zero-filled value of |shape| in the interpreter's row-major layout. */
static cxla_status zeros(const cxla_shape *shape, cxla_literal **out) {
    if (shape->type == CXLA_TUPLE) {
        int64_t n = shape->tuple_count;
        cxla_literal **elements = calloc((size_t)(n ? n : 1), sizeof(*elements));
        if (!elements) return oom();
        cxla_status s = NULL;
        for (int64_t i = 0; i < n && !s; i++) s = zeros(&shape->elements[i], &elements[i]);
        if (!s) s = cxla_literal_create_tuple(elements, n, out);
        if (s)
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        free(elements);
        return s;
    }
    if (!cxla_type_is_array(shape->type)) {
        cxla_shape plain = {.type = shape->type};
        return cxla_literal_create(&plain, out);
    }
    return interp_new_array(shape, out);
}

/* Packs |n| literals (taken, also on error) into a tuple. */
static cxla_status pack(cxla_literal **parts, int64_t n, cxla_literal **out) {
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++)
        if (!parts[i]) s = oom();
    if (!s) s = cxla_literal_create_tuple(parts, n, out);
    if (s)
        for (int64_t i = 0; i < n; i++) cxla_literal_free(parts[i]);
    return s;
}

static const char *string_attr(const cxla_instr *instr, cxla_attr_id id) {
    const cxla_attr *a = cxla_instr_attr(instr, id);
    return a && a->kind == CXLA_ATTR_KIND_STRING && a->v.s ? a->v.s : "";
}

static int64_t channel_of(const cxla_instr *instr) {
    int64_t channel = 0;
    return cxla_instr_int(instr, CXLA_ATTR_CHANNEL_ID, &channel) ? channel : 0;
}

static bool is_empty_tuple(const cxla_shape *s) {
    return s->type == CXLA_TUPLE && s->tuple_count == 0;
}

static cxla_status no_handler(const cxla_instr *instr, const char *what) {
    return interp_error(instr, CXLA_STATUS_FAILED_PRECONDITION,
                        "no host %s handler is installed (run the module through the runtime: "
                        "a cxla_client provides the infeed and outfeed queues and the channels)",
                        what);
}

/* Checks what a host callback returned (taking |got|) against |want| and brings it to
 * the interpreter's row-major layout. */
static cxla_status accept_data(const cxla_instr *instr, const char *what, cxla_literal *got,
                               const cxla_shape *want, cxla_literal **out) {
    if (!got) return interp_error(instr, CXLA_STATUS_INTERNAL, "the %s handler gave no data", what);
    if (!cxla_shape_compatible(cxla_literal_shape(got), want)) {
        char *g = cxla_shape_to_string(cxla_literal_shape(got), CXLA_SHAPE_PRINT_NO_LAYOUT);
        char *w = cxla_shape_to_string(want, CXLA_SHAPE_PRINT_NO_LAYOUT);
        cxla_status s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                     "the %s data has shape %s, but the instruction reads %s", what,
                                     g ? g : "?", w ? w : "?");
        free(g);
        free(w);
        cxla_literal_free(got);
        return s;
    }
    if (interp_is_row_major(got)) {
        *out = got;
        return NULL;
    }
    cxla_status s = interp_relayout_tree(got, NULL, out);
    cxla_literal_free(got);
    return s;
}

/* ---- infeed and outfeed ----------------------------------------------------------- */

/* infeed(token) -> (data, token): the next item of the host's infeed queue, read as the
 * data shape and its layout. An empty tuple reads nothing (seed: a no-op). */
static cxla_status op_infeed(interp_ctx *ctx, const cxla_instr *instr,
                             const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_shape *r = &instr->shape;
    if (r->type != CXLA_TUPLE || r->tuple_count != 2)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result must be (data, token[])");
    const cxla_shape *want = &r->elements[0];
    cxla_literal *parts[2] = {NULL, NULL};
    cxla_status s = NULL;
    if (is_empty_tuple(want)) {
        s = zeros(want, &parts[0]);
    } else {
        const exec_host *host = ctx->options.host;
        if (!host || !host->infeed) return no_handler(instr, "infeed");
        cxla_literal *got = NULL;
        s = interp_annotate(
            host->infeed(host->user, want, string_attr(instr, CXLA_ATTR_INFEED_CONFIG), &got),
            instr);
        if (s) {
            cxla_literal_free(got);
            return s;
        }
        s = accept_data(instr, "infeed", got, want, &parts[0]);
    }
    if (s) return s;
    s = new_token(&parts[1]);
    if (s) {
        cxla_literal_free(parts[0]);
        return s;
    }
    return pack(parts, 2, out);
}

/* outfeed(data, token) -> token: hands the data to the host's outfeed queue in the layout
 * of outfeed_shape (or of the operand's shape). An empty tuple sends nothing. */
static cxla_status op_outfeed(interp_ctx *ctx, const cxla_instr *instr,
                              const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_OUTFEED_SHAPE);
    const cxla_shape *shape = a && a->kind == CXLA_ATTR_KIND_SHAPE && a->v.shapes.count == 1
                                  ? &a->v.shapes.items[0]
                                  : &instr->operands[0]->shape;
    if (!cxla_shape_compatible(shape, cxla_literal_shape(operands[0])))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "outfeed_shape does not match the data");
    if (!is_empty_tuple(shape)) {
        const exec_host *host = ctx->options.host;
        if (!host || !host->outfeed) return no_handler(instr, "outfeed");
        cxla_literal *data = NULL;
        CXLA_RETURN_IF_ERROR(interp_relayout_tree(operands[0], shape, &data));
        cxla_status s =
            host->outfeed(host->user, data, shape, string_attr(instr, CXLA_ATTR_OUTFEED_CONFIG));
        cxla_literal_free(data);
        CXLA_RETURN_IF_ERROR(interp_annotate(s, instr));
    }
    return new_token(out);
}

/* ---- send and recv ---------------------------------------------------------------- */

/* send(data, token) -> (data, u32[] context, token): the data goes to the channel at
 * once, in the layout the send declares for it (element 0 of its shape: XLA's
 * SendToHost puts shape_with_layout there, and layout assignment makes the operand
 * match it; after the layout pass, which gives the data its operand's default layout,
 * the declared one is the send's operand_layout_constraints); send-done only completes
 * it. */
static cxla_status op_send(interp_ctx *ctx, const cxla_instr *instr,
                           const cxla_literal *const *operands, cxla_literal **out) {
    const exec_host *host = ctx->options.host;
    if (!host || !host->send) return no_handler(instr, "send");
    const cxla_shape *shape = instr->shape.type == CXLA_TUPLE && instr->shape.tuple_count == 3
                                  ? &instr->shape.elements[0]
                                  : &instr->operands[0]->shape;
    const cxla_attr *host_layout = cxla_instr_attr(instr, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS);
    if (host_layout && host_layout->kind == CXLA_ATTR_KIND_SHAPES && host_layout->v.shapes.count)
        shape = &host_layout->v.shapes.items[0];
    cxla_literal *data = NULL;
    CXLA_RETURN_IF_ERROR(interp_relayout_tree(operands[0], shape, &data));
    cxla_status s = host->send(host->user, channel_of(instr),
                               cxla_instr_bool(instr, CXLA_ATTR_IS_HOST_TRANSFER), data);
    cxla_literal_free(data);
    CXLA_RETURN_IF_ERROR(interp_annotate(s, instr));
    cxla_literal *parts[3] = {interp_take_operand(ctx, 0), NULL, NULL};
    if (!parts[0]) s = cxla_literal_clone(operands[0], &parts[0]);
    if (!s) s = new_u32_zero(&parts[1]);
    if (!s) s = new_token(&parts[2]);
    if (s) {
        for (int i = 0; i < 3; i++) cxla_literal_free(parts[i]);
        return s;
    }
    return pack(parts, 3, out);
}

static cxla_status op_send_done(interp_ctx *ctx, const cxla_instr *instr,
                                const cxla_literal *const *operands, cxla_literal **out) {
    return new_token(out);
}

/* recv(token) -> (buffer, u32[] context, token): only allocates the buffer (zeros); the
 * data arrives at recv-done, which the seeds order after the matching send. */
static cxla_status op_recv(interp_ctx *ctx, const cxla_instr *instr,
                           const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_shape *r = &instr->shape;
    if (r->type != CXLA_TUPLE || r->tuple_count != 3)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result must be (data, u32[], token[])");
    if (!ctx->options.host || !ctx->options.host->recv) return no_handler(instr, "recv");
    cxla_literal *parts[3] = {NULL, NULL, NULL};
    cxla_status s = zeros(&r->elements[0], &parts[0]);
    if (!s) s = new_u32_zero(&parts[1]);
    if (!s) s = new_token(&parts[2]);
    if (s) {
        for (int i = 0; i < 3; i++) cxla_literal_free(parts[i]);
        return s;
    }
    return pack(parts, 3, out);
}

/* recv-done(context) -> (data, token): receives the data from the channel. */
static cxla_status op_recv_done(interp_ctx *ctx, const cxla_instr *instr,
                                const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_shape *r = &instr->shape;
    if (r->type != CXLA_TUPLE || r->tuple_count != 2)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result must be (data, token[])");
    const exec_host *host = ctx->options.host;
    if (!host || !host->recv) return no_handler(instr, "recv");
    const cxla_shape *want = &r->elements[0];
    cxla_literal *got = NULL;
    cxla_status s =
        interp_annotate(host->recv(host->user, channel_of(instr),
                                   cxla_instr_bool(instr, CXLA_ATTR_IS_HOST_TRANSFER), want, &got),
                        instr);
    if (s) {
        cxla_literal_free(got);
        return s;
    }
    cxla_literal *parts[2] = {NULL, NULL};
    CXLA_RETURN_IF_ERROR(accept_data(instr, "received", got, want, &parts[0]));
    s = new_token(&parts[1]);
    if (s) {
        cxla_literal_free(parts[0]);
        return s;
    }
    return pack(parts, 2, out);
}

const interp_op_fn interp_host_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_INFEED] = op_infeed, [CXLA_OP_OUTFEED] = op_outfeed,
    [CXLA_OP_SEND] = op_send,     [CXLA_OP_SEND_DONE] = op_send_done,
    [CXLA_OP_RECV] = op_recv,     [CXLA_OP_RECV_DONE] = op_recv_done,
};
