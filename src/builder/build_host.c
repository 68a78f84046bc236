/* Operations with side effects, as XLA's builder emits them: infeed and outfeed (plain and
 * with tokens), send and recv over channel handles (device-to-device and host transfers),
 * and custom calls with their options. The plain forms make their own token (an
 * after-all with no operands) and unwrap the data, as XlaBuilder's Infeed, Outfeed, Send
 * and Recv do; the token forms leave ordering to the caller. */
#include <inttypes.h>
#include <stdatomic.h>
#include <string.h>

#include "builder/builder_internal.h"
#include "hlo/lexer.h"
#include "shape/shape_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in the builder")

/* Channel ids are unique in the process, as the ids XLA's service hands out are, so the
 * channels of computations built separately and later combined do not collide. */
static _Atomic int64_t next_channel = 1;

static cxla_channel_handle new_channel(cxla_channel_type type) {
    return (cxla_channel_handle){.handle = atomic_fetch_add(&next_channel, 1), .type = type};
}

cxla_channel_handle cxla_create_channel_handle(cxla_builder *builder) {
    (void)builder;
    return new_channel(CXLA_CHANNEL_DEVICE_TO_DEVICE);
}

cxla_channel_handle cxla_create_device_to_host_channel_handle(cxla_builder *builder) {
    (void)builder;
    return new_channel(CXLA_CHANNEL_DEVICE_TO_HOST);
}

cxla_channel_handle cxla_create_host_to_device_channel_handle(cxla_builder *builder) {
    (void)builder;
    return new_channel(CXLA_CHANNEL_HOST_TO_DEVICE);
}

/* ---- helpers ------------------------------------------------------------------------- */

/* A copy of |shape| in |b|'s arena; false after recording an error. */
static bool copy_shape(cxla_builder *b, const char *op, const cxla_shape *shape, cxla_shape *out) {
    if (!shape) {
        bld_fail(b, op, "the shape is NULL");
        return false;
    }
    cxla_status s = cxla_shape_validate(shape);
    if (!s) s = cxla_shape_copy_to_arena(b->module->arena, shape, out);
    if (s) {
        bld_fail_status(b, op, s);
        return false;
    }
    return true;
}

/* (elements...) in |b|'s arena. */
static bool tuple_shape(cxla_builder *b, const char *op, int64_t n, const cxla_shape *elements,
                        cxla_shape *out) {
    memset(out, 0, sizeof(*out));
    out->type = CXLA_TUPLE;
    out->tuple_count = n;
    out->elements = cxla_arena_alloc_array(b->module->arena, (size_t)n, sizeof(cxla_shape));
    if (!out->elements) {
        bld_fail_status(b, op, OOM());
        return false;
    }
    for (int64_t i = 0; i < n; i++) out->elements[i] = elements[i];
    return true;
}

static cxla_shape token_shape(void) {
    return (cxla_shape){.type = CXLA_TOKEN};
}

static cxla_shape u32_scalar(void) {
    return (cxla_shape){.type = CXLA_U32};
}

static cxla_instr *token_operand(cxla_builder *b, const char *op, cxla_op token, int64_t index) {
    cxla_instr *t = bld_operand(b, op, token, index);
    if (t && t->shape.type != CXLA_TOKEN) {
        bld_fail(b, op, "operand %" PRId64 " must be a token, got %s", index,
                 bld_shape_str(b, &t->shape));
        return NULL;
    }
    return t;
}

static bool check_handle(cxla_builder *b, const char *op, const cxla_channel_handle *handle,
                         cxla_channel_type want) {
    static const char *const names[] = {"invalid", "device-to-device", "device-to-host",
                                        "host-to-device"};
    if (handle->handle <= 0) {
        bld_fail(b, op, "the channel handle %" PRId64 " is not a valid id (ids are >= 1)",
                 handle->handle);
        return false;
    }
    if (handle->type != want) {
        int t = (int)handle->type;
        bld_fail(b, op, "%s must use a %s channel, got a %s one", op, names[want],
                 t >= 0 && t <= 3 ? names[t] : "unknown");
        return false;
    }
    return true;
}

/* The array shapes host transfers allow: XLA's builder takes arrays with a layout
 * (tuples are not supported there either). */
static bool check_host_shape(cxla_builder *b, const char *op, const cxla_shape *shape) {
    if (!cxla_shape_is_array(shape)) {
        bld_fail(b, op, "only array shapes can be transferred, got %s", bld_shape_str(b, shape));
        return false;
    }
    if (!shape->layout && shape->rank > 0) {
        bld_fail(b, op, "the shape %s must have a layout", bld_shape_str(b, shape));
        return false;
    }
    return true;
}

/* ---- infeed and outfeed -------------------------------------------------------------- */

static bool config_attr(cxla_builder *b, cxla_attr_id id, const char *config, cxla_attr *a,
                        int *n) {
    if (!config || !config[0]) return true;
    if (!bld_attr_string(b, id, config, &a[*n])) return false;
    (*n)++;
    return true;
}

cxla_op cxla_infeed_with_token(cxla_op token, const cxla_shape *shape, const char *config) {
    const char *op = "InfeedWithToken";
    cxla_builder *b = token.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *t = token_operand(b, op, token, 0);
    cxla_shape parts[2];
    if (!t || !copy_shape(b, op, shape, &parts[0])) return bld_invalid(b);
    if (parts[0].type == CXLA_TOKEN) {
        bld_fail(b, op, "the data shape cannot be a token");
        return bld_invalid(b);
    }
    parts[1] = token_shape();
    cxla_shape result;
    cxla_attr a[1];
    int n = 0;
    if (!tuple_shape(b, op, 2, parts, &result) ||
        !config_attr(b, CXLA_ATTR_INFEED_CONFIG, config, a, &n))
        return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_INFEED, &result, 1, &t, n, a);
}

cxla_op cxla_infeed(cxla_builder *b, const cxla_shape *shape, const char *config) {
    cxla_op token = cxla_create_token(b);
    cxla_op infeed = cxla_infeed_with_token(token, shape, config);
    return cxla_get_tuple_element(infeed, 0);
}

cxla_op cxla_outfeed_with_token(cxla_op operand, cxla_op token, const cxla_shape *shape_with_layout,
                                const char *config) {
    const char *op = "OutfeedWithToken";
    cxla_op ops[2] = {operand, token};
    cxla_builder *b = bld_of(ops, 2);
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr *ins[2];
    if (!(ins[0] = bld_operand(b, op, operand, 0)) || !(ins[1] = token_operand(b, op, token, 1)))
        return bld_invalid(b);
    cxla_attr a[2];
    int n = 0;
    a[n] = bld_attr(CXLA_ATTR_OUTFEED_SHAPE);
    a[n].v.shapes.count = 1;
    a[n].v.shapes.items = cxla_arena_alloc_array(b->module->arena, 1, sizeof(cxla_shape));
    if (!a[n].v.shapes.items) {
        bld_fail_status(b, op, OOM());
        return bld_invalid(b);
    }
    /* The layout the host sees: the caller's, else the operand's (XLA requires one; a
     * shape without a layout means the default). */
    const cxla_shape *want = shape_with_layout ? shape_with_layout : &ins[0]->shape;
    if (!copy_shape(b, op, want, &a[n].v.shapes.items[0])) return bld_invalid(b);
    if (!cxla_shape_compatible(want, &ins[0]->shape)) {
        bld_fail(b, op, "shape_with_layout %s is not compatible with the operand %s",
                 bld_shape_str(b, want), bld_shape_str(b, &ins[0]->shape));
        return bld_invalid(b);
    }
    n++;
    if (!config_attr(b, CXLA_ATTR_OUTFEED_CONFIG, config, a, &n)) return bld_invalid(b);
    return bld_emit_ops(b, op, CXLA_OP_OUTFEED, NULL, 2, ins, n, a);
}

cxla_op cxla_outfeed(cxla_op operand, const cxla_shape *shape_with_layout, const char *config) {
    cxla_builder *b = operand.builder;
    cxla_op token = cxla_create_token(b);
    cxla_op done = cxla_outfeed_with_token(operand, token, shape_with_layout, config);
    if (!cxla_op_is_valid(done)) return done;
    /* XLA's Outfeed leaves an empty tuple after the outfeed, so that an outfeed that ends
     * a computation gives it the nil result its users expect. */
    return cxla_tuple(b, NULL, 0);
}

/* ---- send and recv ------------------------------------------------------------------- */

/* send + send-done on |handle|; |data_shape| (NULL: the operand's) is what the send
 * declares it sends, layout included. */
static cxla_op send_pair(const char *op, cxla_op operand, cxla_op token,
                         const cxla_shape *data_shape, const cxla_channel_handle *handle,
                         cxla_channel_type want, bool host) {
    cxla_op ops[2] = {operand, token};
    cxla_builder *b = bld_of(ops, 2);
    if (!bld_ok(b)) return bld_invalid(b);
    if (!handle) {
        bld_fail(b, op, "the channel handle is NULL");
        return bld_invalid(b);
    }
    cxla_instr *ins[2];
    if (!(ins[0] = bld_operand(b, op, operand, 0)) || !(ins[1] = token_operand(b, op, token, 1)) ||
        !check_handle(b, op, handle, want))
        return bld_invalid(b);
    if (host) {
        if (!data_shape) {
            bld_fail(b, op, "the shape with layout is NULL");
            return bld_invalid(b);
        }
        if (!check_host_shape(b, op, data_shape)) return bld_invalid(b);
        if (!cxla_shape_compatible(data_shape, &ins[0]->shape)) {
            bld_fail(b, op, "shape %s must be compatible with the operand %s",
                     bld_shape_str(b, data_shape), bld_shape_str(b, &ins[0]->shape));
            return bld_invalid(b);
        }
    }
    cxla_attr a[2] = {bld_attr_int(CXLA_ATTR_CHANNEL_ID, handle->handle),
                      bld_attr_bool(CXLA_ATTR_IS_HOST_TRANSFER, true)};
    int n = host ? 2 : 1;
    cxla_op send = bld_emit_ops(b, op, CXLA_OP_SEND, NULL, 2, ins, n, a);
    if (!cxla_op_is_valid(send)) return send;
    if (data_shape) {
        /* The declared data shape keeps the caller's layout (XLA's SendToHost). */
        cxla_instr *s = bld_instr(b, send);
        if (!copy_shape(b, op, data_shape, &s->shape.elements[0])) return bld_invalid(b);
    }
    cxla_instr *sin = bld_instr(b, send);
    return bld_emit_ops(b, op, CXLA_OP_SEND_DONE, NULL, 1, &sin, n, a);
}

/* recv + recv-done on |handle| -> (data, token). */
static cxla_op recv_pair(const char *op, cxla_op token, const cxla_shape *shape,
                         const cxla_channel_handle *handle, cxla_channel_type want, bool host) {
    cxla_builder *b = token.builder;
    if (!bld_ok(b)) return bld_invalid(b);
    if (!handle) {
        bld_fail(b, op, "the channel handle is NULL");
        return bld_invalid(b);
    }
    cxla_instr *t = token_operand(b, op, token, 0);
    cxla_shape parts[3];
    if (!t || !check_handle(b, op, handle, want) || !copy_shape(b, op, shape, &parts[0]))
        return bld_invalid(b);
    if (host && !check_host_shape(b, op, shape)) return bld_invalid(b);
    if (parts[0].type == CXLA_TOKEN) {
        bld_fail(b, op, "the data shape cannot be a token");
        return bld_invalid(b);
    }
    parts[1] = u32_scalar();
    parts[2] = token_shape();
    cxla_shape result;
    if (!tuple_shape(b, op, 3, parts, &result)) return bld_invalid(b);
    cxla_attr a[2] = {bld_attr_int(CXLA_ATTR_CHANNEL_ID, handle->handle),
                      bld_attr_bool(CXLA_ATTR_IS_HOST_TRANSFER, true)};
    int n = host ? 2 : 1;
    cxla_op recv = bld_emit_ops(b, op, CXLA_OP_RECV, &result, 1, &t, n, a);
    if (!cxla_op_is_valid(recv)) return recv;
    cxla_instr *rin = bld_instr(b, recv);
    return bld_emit_ops(b, op, CXLA_OP_RECV_DONE, NULL, 1, &rin, n, a);
}

cxla_op cxla_send_with_token(cxla_op operand, cxla_op token, const cxla_channel_handle *handle) {
    return send_pair("SendWithToken", operand, token, NULL, handle, CXLA_CHANNEL_DEVICE_TO_DEVICE,
                     false);
}

cxla_op cxla_send(cxla_op operand, const cxla_channel_handle *handle) {
    cxla_op token = cxla_create_token(operand.builder);
    return send_pair("Send", operand, token, NULL, handle, CXLA_CHANNEL_DEVICE_TO_DEVICE, false);
}

cxla_op cxla_recv_with_token(cxla_op token, const cxla_shape *shape,
                             const cxla_channel_handle *handle) {
    return recv_pair("RecvWithToken", token, shape, handle, CXLA_CHANNEL_DEVICE_TO_DEVICE, false);
}

cxla_op cxla_recv(cxla_builder *b, const cxla_shape *shape, const cxla_channel_handle *handle) {
    cxla_op token = cxla_create_token(b);
    cxla_op done = recv_pair("Recv", token, shape, handle, CXLA_CHANNEL_DEVICE_TO_DEVICE, false);
    return cxla_get_tuple_element(done, 0);
}

cxla_op cxla_send_to_host(cxla_op operand, cxla_op token, const cxla_shape *shape_with_layout,
                          const cxla_channel_handle *handle) {
    return send_pair("SendToHost", operand, token, shape_with_layout, handle,
                     CXLA_CHANNEL_DEVICE_TO_HOST, true);
}

cxla_op cxla_recv_from_host(cxla_op token, const cxla_shape *shape,
                            const cxla_channel_handle *handle) {
    return recv_pair("RecvFromHost", token, shape, handle, CXLA_CHANNEL_HOST_TO_DEVICE, true);
}

/* ---- custom calls ---------------------------------------------------------------------- */

void cxla_custom_call_options_init(cxla_custom_call_options *options) {
    if (options) memset(options, 0, sizeof(*options));
}

/* {1,2} of a shape index. */
static void put_index(cxla_strbuf *sb, const int64_t *index, int64_t count) {
    cxla_strbuf_putc(sb, '{');
    for (int64_t i = 0; i < count; i++)
        cxla_strbuf_printf(sb, "%s%" PRId64, i ? "," : "", index[i]);
    cxla_strbuf_putc(sb, '}');
}

static bool check_index(cxla_builder *b, const char *op, const char *what, const cxla_shape *shape,
                        const int64_t *index, int64_t count) {
    if (!bld_check_list(b, op, what, index, count)) return false;
    const cxla_shape *s = shape;
    for (int64_t i = 0; i < count; i++) {
        if (s->type != CXLA_TUPLE || index[i] < 0 || index[i] >= s->tuple_count) {
            bld_fail(b, op, "%s: index %" PRId64 " does not name an element of %s", what, i,
                     bld_shape_str(b, shape));
            return false;
        }
        s = &s->elements[index[i]];
    }
    return true;
}

static bool aliasing_attr(cxla_builder *b, const char *op, const cxla_custom_call_options *o,
                          const cxla_shape *result, cxla_instr *const *ins, int64_t count,
                          cxla_attr *out) {
    cxla_strbuf sb;
    cxla_strbuf_init(&sb);
    cxla_strbuf_putc(&sb, '{');
    for (int64_t i = 0; i < o->output_operand_aliasing_count; i++) {
        const cxla_output_operand_alias *al = &o->output_operand_aliasing[i];
        bool ok = check_index(b, op, "output_operand_aliasing output index", result,
                              al->output_index, al->output_index_count);
        if (ok && (al->operand < 0 || al->operand >= count)) {
            bld_fail(b, op,
                     "output_operand_aliasing %" PRId64 ": operand %" PRId64
                     " out of range (%" PRId64 " operands)",
                     i, al->operand, count);
            ok = false;
        }
        ok =
            ok && check_index(b, op, "output_operand_aliasing operand index",
                              &ins[al->operand]->shape, al->operand_index, al->operand_index_count);
        if (!ok) {
            cxla_strbuf_free(&sb);
            return false;
        }
        if (i) cxla_strbuf_puts(&sb, ", ");
        put_index(&sb, al->output_index, al->output_index_count);
        cxla_strbuf_printf(&sb, ": (%" PRId64 ", ", al->operand);
        put_index(&sb, al->operand_index, al->operand_index_count);
        cxla_strbuf_putc(&sb, ')');
    }
    cxla_strbuf_putc(&sb, '}');
    bool ok = !sb.failed && sb.data &&
              bld_attr_string(b, CXLA_ATTR_OUTPUT_TO_OPERAND_ALIASING, sb.data, out);
    if (sb.failed) bld_fail_status(b, op, OOM());
    cxla_strbuf_free(&sb);
    if (ok) out->kind = CXLA_ATTR_KIND_RAW;
    return ok;
}

static const char *const api_words[] = {
    "API_VERSION_UNSPECIFIED",      "API_VERSION_ORIGINAL",
    "API_VERSION_STATUS_RETURNING", "API_VERSION_STATUS_RETURNING_UNIFIED",
    "API_VERSION_TYPED_FFI",
};

cxla_op cxla_custom_call_with_options(cxla_builder *b, const char *call_target_name,
                                      const cxla_op *operands, int64_t count,
                                      const cxla_shape *shape,
                                      const cxla_custom_call_options *options) {
    const char *op = "CustomCall";
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_custom_call_options none;
    cxla_custom_call_options_init(&none);
    const cxla_custom_call_options *o = options ? options : &none;
    cxla_instr **ins;
    if (!bld_operands(b, op, operands, count, &ins)) return bld_invalid(b);
    if (!call_target_name || !call_target_name[0] || !shape) {
        bld_fail(b, op, "the target name is NULL or empty, or the shape is NULL");
        return bld_invalid(b);
    }
    if ((int)o->api_version < 0 || (int)o->api_version > 4) {
        bld_fail(b, op, "unknown api_version %d", (int)o->api_version);
        return bld_invalid(b);
    }
    cxla_attr a[8];
    int n = 0;
    if (!bld_attr_string(b, CXLA_ATTR_CUSTOM_CALL_TARGET, call_target_name, &a[n++]))
        return bld_invalid(b);
    if (o->operand_shapes_with_layout) {
        /* XLA's CustomCallWithLayout: every operand gets a layout, and so must the result. */
        a[n] = bld_attr(CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS);
        a[n].v.shapes.count = count;
        a[n].v.shapes.items = cxla_arena_alloc_array(b->module->arena, (size_t)(count ? count : 1),
                                                     sizeof(cxla_shape));
        if (!a[n].v.shapes.items) {
            bld_fail_status(b, op, OOM());
            return bld_invalid(b);
        }
        for (int64_t i = 0; i < count; i++) {
            const cxla_shape *w = &o->operand_shapes_with_layout[i];
            if (!copy_shape(b, op, w, &a[n].v.shapes.items[i])) return bld_invalid(b);
            if (cxla_shape_is_array(w) && w->rank > 0 && !w->layout) {
                bld_fail(b, op, "operand shape %" PRId64 " %s has no layout", i,
                         bld_shape_str(b, w));
                return bld_invalid(b);
            }
        }
        if (cxla_shape_is_array(shape) && shape->rank > 0 && !shape->layout) {
            bld_fail(b, op, "with operand layouts, the result shape %s needs a layout too",
                     bld_shape_str(b, shape));
            return bld_invalid(b);
        }
        n++;
    }
    if (o->has_side_effect) a[n++] = bld_attr_bool(CXLA_ATTR_CUSTOM_CALL_HAS_SIDE_EFFECT, true);
    if (o->output_operand_aliasing_count > 0) {
        if (!o->output_operand_aliasing) {
            bld_fail(b, op, "output_operand_aliasing is NULL with a count of %" PRId64,
                     o->output_operand_aliasing_count);
            return bld_invalid(b);
        }
        if (!aliasing_attr(b, op, o, shape, ins, count, &a[n++])) return bld_invalid(b);
    }
    if (o->api_version != CXLA_CUSTOM_CALL_API_UNSPECIFIED &&
        o->api_version != CXLA_CUSTOM_CALL_API_ORIGINAL)
        a[n++] = bld_attr_word(CXLA_ATTR_API_VERSION, api_words[o->api_version]);
    if (o->opaque && o->opaque[0]) {
        /* backend_config is kept as raw text: quoted and escaped. */
        cxla_strbuf sb;
        cxla_strbuf_init(&sb);
        cxla_hlo_print_string(&sb, o->opaque);
        bool ok =
            !sb.failed && sb.data && bld_attr_string(b, CXLA_ATTR_BACKEND_CONFIG, sb.data, &a[n]);
        if (sb.failed) bld_fail_status(b, op, OOM());
        cxla_strbuf_free(&sb);
        if (!ok) return bld_invalid(b);
        a[n++].kind = CXLA_ATTR_KIND_RAW;
    }
    /* Keep the table order: the attributes are set one by one, which sorts them. */
    return bld_emit_ops(b, op, CXLA_OP_CUSTOM_CALL, shape, count, ins, n, a);
}
