/* The HLO verifier: structure (owners, operands, arity, parameters, names, roots, cycles),
 * shapes (every declared shape against shape inference), the entry computation layout,
 * and the pairing of asynchronous start/done instructions. See docs/hlo.md. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "hlo/infer_internal.h"
#include "shape/shape_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in the verifier")

typedef struct verifier {
    const cxla_module *module;
    cxla_hlo_verify_options options;
    cxla_arena *scratch; /* inferred shapes and strings; freed at the end */
    cxla_strmap names;   /* instruction name -> instruction, module-wide */
} verifier;

/* "L:C: computation 'c', instruction 'x': <message>", the position first (when the
 * instruction was parsed) so that a caller holding the file prefixes its name and shows
 * the line, as parse errors read: FILE:LINE:COL: message. */
static void describe(cxla_strbuf *b, const cxla_computation *c, const cxla_instr *in) {
    if (in && in->line > 0)
        cxla_strbuf_printf(b, "%" PRId64 ":%" PRId64 ": ", in->line, in->column);
    cxla_strbuf_printf(b, "computation '%s'", c ? c->name : "?");
    if (in) cxla_strbuf_printf(b, ", instruction '%s'", in->name ? in->name : "?");
    cxla_strbuf_puts(b, ": ");
}

/* An attribute cxla does not know is ignored; when the instruction is wrong, that is
 * often why (lhs_contract_dims for lhs_contracting_dims): say so beside the error. */
static void note_unknown_attrs(cxla_strbuf *b, const cxla_instr *in) {
    for (int64_t i = 0; in && i < in->attr_count; i++) {
        const cxla_attr *a = &in->attrs[i];
        if (a->id != CXLA_ATTR_UNKNOWN || !a->name) continue;
        const char *hint = cxla_attr_suggest(a->name, strlen(a->name));
        cxla_strbuf_printf(b, "; note: its attribute '%s' is unknown and was ignored%s%s%s",
                           a->name, hint ? " (did you mean '" : "", hint ? hint : "",
                           hint ? "'?)" : "");
    }
}

static cxla_status vfail(const cxla_computation *c, const cxla_instr *in, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static cxla_status vfail(const cxla_computation *c, const cxla_instr *in, const char *format, ...) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    describe(&b, c, in);
    va_list args;
    va_start(args, format);
    cxla_strbuf_vprintf(&b, format, args);
    va_end(args);
    note_unknown_attrs(&b, in);
    cxla_status s =
        b.failed || !b.data ? OOM() : cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s", b.data);
    cxla_strbuf_free(&b);
    return s;
}

/* Prefixes |inner| (an inference or graph error) with the computation and instruction. */
static cxla_status wrap(const cxla_computation *c, const cxla_instr *in, cxla_status inner) {
    if (!inner) return NULL;
    if (cxla_status_code_of(inner) != CXLA_STATUS_INVALID_ARGUMENT) return inner;
    cxla_status s = vfail(c, in, "%s", cxla_status_message(inner));
    cxla_status_free(inner);
    return s;
}

static const char *shape_str(verifier *v, const cxla_shape *s) {
    return cxla_infer_str(v->scratch, s);
}

/* Opcodes that may call computations (XLA's MightHaveCalledComputations). */
static bool may_call(cxla_opcode op) {
    return (cxla_opcode_get_info(op)->flags & CXLA_OPF_MAY_CALL) != 0;
}

static bool in_computation(const cxla_computation *c, const cxla_instr *in) {
    for (int64_t i = 0; i < c->instr_count; i++)
        if (c->instrs[i] == in) return true;
    return false;
}

/* ---- structure ------------------------------------------------------------------- */

static cxla_status check_instr_structure(verifier *v, const cxla_computation *c,
                                         const cxla_instr *in) {
    if (in->parent != c) return vfail(c, in, "the instruction's parent is not this computation");
    if ((int)in->opcode < 0 || in->opcode >= CXLA_OP_COUNT)
        return vfail(c, in, "unknown opcode %d", (int)in->opcode);
    const char *op = cxla_opcode_name(in->opcode);
    if (!in->name || !in->name[0]) return vfail(c, in, "%s: the instruction has no name", op);
    size_t len = strlen(in->name);
    const cxla_instr *other = cxla_strmap_get(&v->names, in->name, len);
    if (other)
        return vfail(c, in, "the name '%s' is also used in computation '%s'", in->name,
                     other->parent ? other->parent->name : "?");
    if (!cxla_strmap_put(&v->names, in->name, len, (void *)in)) return OOM();
    int arity = cxla_opcode_get_info(in->opcode)->arity;
    if (arity >= 0 && in->operand_count != arity)
        return vfail(c, in, "%s expects %d operand(s), got %" PRId64, op, arity, in->operand_count);
    for (int64_t i = 0; i < in->operand_count; i++) {
        const cxla_instr *o = in->operands ? in->operands[i] : NULL;
        if (!o) return vfail(c, in, "%s: operand %" PRId64 " is missing", op, i);
        if (o->parent != c)
            return vfail(c, in, "%s: operand %" PRId64 " '%s' belongs to computation '%s'", op, i,
                         o->name, o->parent ? o->parent->name : "?");
    }
    const cxla_attr *preds = cxla_instr_attr(in, CXLA_ATTR_CONTROL_PREDECESSORS);
    if (preds && preds->kind == CXLA_ATTR_KIND_INSTRUCTIONS)
        for (int64_t i = 0; i < preds->v.instrs.count; i++) {
            const cxla_instr *p = preds->v.instrs.items[i];
            if (!p || p->parent != c)
                return vfail(
                    c, in, "%s: control predecessor %" PRId64 " is not in this computation", op, i);
        }
    cxla_computation *called[64];
    int64_t n = cxla_instr_called_computations(in, called, 64);
    if (n > 0 && !may_call(in->opcode))
        return vfail(c, in, "%s does not call computations, but names %" PRId64, op, n);
    for (int64_t i = 0; i < n && i < 64; i++) {
        if (!called[i]) return vfail(c, in, "%s: called computation %" PRId64 " is missing", op, i);
        if (cxla_module_find_computation(v->module, called[i]->name) != called[i])
            return vfail(c, in, "%s calls '%s', which is not a computation of this module", op,
                         called[i]->name);
    }
    return NULL;
}

static cxla_status check_parameters(verifier *v, const cxla_computation *c) {
    int64_t count = 0;
    for (int64_t i = 0; i < c->instr_count; i++)
        if (c->instrs[i]->opcode == CXLA_OP_PARAMETER) count++;
    if (count != c->param_count)
        return vfail(c, NULL, "has %" PRId64 " parameter instructions but param_count is %" PRId64,
                     count, c->param_count);
    const cxla_instr **seen =
        cxla_arena_alloc_array(v->scratch, (size_t)(count ? count : 1), sizeof(*seen));
    if (!seen) return OOM();
    for (int64_t i = 0; i < c->instr_count; i++) {
        const cxla_instr *p = c->instrs[i];
        if (p->opcode != CXLA_OP_PARAMETER) continue;
        int64_t k = p->parameter_number;
        if (k < 0 || k >= count)
            return vfail(c, p,
                         "parameter number %" PRId64 " is outside 0..%" PRId64
                         " (parameter numbers must be dense)",
                         k, count - 1);
        if (seen[k])
            return vfail(c, p, "parameter number %" PRId64 " is also used by '%s'", k,
                         seen[k]->name);
        seen[k] = p;
        if (!c->params || c->params[k] != p)
            return vfail(c, p,
                         "the computation's parameter %" PRId64 " slot does not hold this "
                         "parameter",
                         k);
    }
    return NULL;
}

static cxla_status check_computation_structure(verifier *v, const cxla_computation *c) {
    if (c->module != v->module) return vfail(c, NULL, "belongs to another module");
    for (int64_t i = 0; i < c->instr_count; i++) {
        if (!c->instrs[i]) return vfail(c, NULL, "instruction %" PRId64 " is missing", i);
        CXLA_RETURN_IF_ERROR(check_instr_structure(v, c, c->instrs[i]));
    }
    if (!c->root) return vfail(c, NULL, "has no root instruction");
    if (c->root->parent != c || !in_computation(c, c->root))
        return vfail(c, NULL, "the root '%s' is not an instruction of this computation",
                     c->root->name);
    return check_parameters(v, c);
}

/* ---- shapes ---------------------------------------------------------------------- */

/* |s| with every real floating-point type replaced by |to| (in the scratch arena). */
static bool fp_as(verifier *v, const cxla_shape *s, cxla_type to, cxla_shape *out, int depth) {
    *out = *s;
    if (depth > 64) return false;
    if (s->type == CXLA_TUPLE) {
        out->elements = cxla_arena_alloc_array(
            v->scratch, (size_t)(s->tuple_count ? s->tuple_count : 1), sizeof(*out->elements));
        if (!out->elements) return false;
        for (int64_t i = 0; i < s->tuple_count; i++)
            if (!fp_as(v, &s->elements[i], to, &out->elements[i], depth + 1)) return false;
        return true;
    }
    if (cxla_type_is_float(s->type)) out->type = to;
    return true;
}

/* Declared and inferred shapes agree: exactly, or up to floating-point precision when
 * mixed precision is allowed (XLA's ShapeUtil::CompatibleIgnoringFpPrecision). */
static bool compatible(verifier *v, const cxla_shape *declared, const cxla_shape *inferred) {
    if (cxla_infer_compatible(declared, inferred)) return true;
    if (!v->options.allow_mixed_precision) return false;
    cxla_shape a, b;
    return fp_as(v, declared, CXLA_F32, &a, 0) && fp_as(v, inferred, CXLA_F32, &b, 0) &&
           cxla_infer_compatible(&a, &b);
}

/* Instructions XLA's ShapeVerifier holds to ShapesSame rather than to the
 * mixed-precision rule: those that pass values to a called computation (call, while,
 * conditional, fusion, the async wrappers: CheckOperandAndParameter and its kin) and
 * those that only move values (tuple, get-tuple-element, parameter, constant, the host
 * transfers, copy-start/done, optimization-barrier, custom-call: CheckShape's list).
 * Their operands must fit the parameters exactly and their declared shape must be the
 * inferred one, layout aside, even where mixed precision is allowed. */
static bool exact_shapes(cxla_opcode op) {
    switch (op) {
    case CXLA_OP_CALL:
    case CXLA_OP_WHILE:
    case CXLA_OP_CONDITIONAL:
    case CXLA_OP_FUSION:
    case CXLA_OP_ASYNC_START:
    case CXLA_OP_ASYNC_UPDATE:
    case CXLA_OP_ASYNC_DONE:
    case CXLA_OP_TUPLE:
    case CXLA_OP_GET_TUPLE_ELEMENT:
    case CXLA_OP_PARAMETER:
    case CXLA_OP_CONSTANT:
    case CXLA_OP_COPY_START:
    case CXLA_OP_COPY_DONE:
    case CXLA_OP_CUSTOM_CALL:
    case CXLA_OP_INFEED:
    case CXLA_OP_OUTFEED:
    case CXLA_OP_OPTIMIZATION_BARRIER:
    case CXLA_OP_SEND:
    case CXLA_OP_SEND_DONE:
    case CXLA_OP_RECV:
    case CXLA_OP_RECV_DONE: return true;
    default: return false;
    }
}

/* Shape inference again with the floating-point operands taken in one precision (the
 * result's, else the first floating operand's): what XLA's inference ignores when mixed
 * precision is allowed (elementwise operations, broadcast, pad, select, clamp ...). */
static cxla_status infer_mixed(verifier *v, const cxla_instr *in, cxla_shape *out) {
    cxla_type to = CXLA_TYPE_INVALID;
    if (in->shape.type != CXLA_TUPLE && cxla_type_is_float(in->shape.type)) to = in->shape.type;
    for (int64_t k = 0; to == CXLA_TYPE_INVALID && k < in->operand_count; k++)
        if (cxla_type_is_float(in->operands[k]->shape.type)) to = in->operands[k]->shape.type;
    if (to == CXLA_TYPE_INVALID || in->operand_count == 0)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "no floating-point operands");
    cxla_instr *shadow = cxla_arena_alloc(v->scratch, sizeof(*shadow));
    cxla_instr *ops = cxla_arena_alloc_array(v->scratch, (size_t)in->operand_count, sizeof(*ops));
    cxla_instr **opp = cxla_arena_alloc_array(v->scratch, (size_t)in->operand_count, sizeof(*opp));
    if (!shadow || !ops || !opp) return OOM();
    *shadow = *in;
    for (int64_t k = 0; k < in->operand_count; k++) {
        ops[k] = *in->operands[k];
        if (!fp_as(v, &in->operands[k]->shape, to, &ops[k].shape, 0)) return OOM();
        opp[k] = &ops[k];
    }
    shadow->operands = opp;
    return cxla_infer_shape(shadow, v->scratch, out);
}

/* Entry |k| of |s|'s minor_to_major (the default layout's when it has none). */
static int64_t minor_to_major(const cxla_shape *s, int64_t k) {
    return s->layout && s->layout->minor_to_major ? s->layout->minor_to_major[k] : s->rank - 1 - k;
}

/* Whether |a| and |b| order their dimensions alike in memory, tuple leaf by leaf: XLA's
 * Shape::Equal().MinorToMajorOnlyInLayout() (tiles, element size, memory space ignored).
 * The types and dimensions are shape inference's to compare. */
static bool same_minor_to_major(const cxla_shape *a, const cxla_shape *b) {
    if (a->type == CXLA_TUPLE || b->type == CXLA_TUPLE) {
        if (a->type != b->type || a->tuple_count != b->tuple_count) return false;
        for (int64_t i = 0; i < a->tuple_count; i++)
            if (!same_minor_to_major(&a->elements[i], &b->elements[i])) return false;
        return true;
    }
    if (!cxla_type_is_array(a->type) || !cxla_type_is_array(b->type)) return true;
    if (a->rank != b->rank) return false;
    for (int64_t k = 0; k < a->rank; k++)
        if (minor_to_major(a, k) != minor_to_major(b, k)) return false;
    return true;
}

/* A shape with its minor_to_major written out (the default one too), for the
 * layout-sensitive messages. */
static const char *shape_layout_str(verifier *v, const cxla_shape *s) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    if (s->type == CXLA_TUPLE || !cxla_type_is_array(s->type) || s->rank == 0) {
        cxla_shape_print(&b, s, CXLA_SHAPE_PRINT_DEFAULT);
    } else {
        cxla_shape_print(&b, s, CXLA_SHAPE_PRINT_NO_LAYOUT);
        for (int64_t k = 0; k < s->rank; k++)
            cxla_strbuf_printf(&b, "%s%" PRId64, k ? "," : "{", minor_to_major(s, k));
        cxla_strbuf_putc(&b, '}');
    }
    const char *r = b.data ? cxla_arena_strndup(v->scratch, b.data, b.len) : NULL;
    cxla_strbuf_free(&b);
    return r ? r : "?";
}

/* Layout-sensitive rules (XLA's ShapeVerifier when layout_sensitive): send's declared
 * shape must be (operand, u32[], token[]) with the operand's minor_to_major (HandleSend
 * compares with MinorToMajorOnlyInLayout), so the data is sent in the layout it has. */
static cxla_status check_layouts(verifier *v, const cxla_computation *c, const cxla_instr *in) {
    if (in->opcode != CXLA_OP_SEND || in->operand_count < 1 || in->shape.type != CXLA_TUPLE ||
        in->shape.tuple_count < 1)
        return NULL;
    const cxla_shape *data = &in->shape.elements[0], *operand = &in->operands[0]->shape;
    if (same_minor_to_major(data, operand)) return NULL;
    return vfail(c, in,
                 "send: the declared data layout %s differs from the operand's %s (a "
                 "layout-sensitive verifier needs send's data in its operand's layout)",
                 shape_layout_str(v, data), shape_layout_str(v, operand));
}

static cxla_status check_instr_shape(verifier *v, const cxla_computation *c, const cxla_instr *in) {
    const char *op = cxla_opcode_name(in->opcode);
    cxla_status s = cxla_shape_validate(&in->shape);
    if (s) {
        cxla_status e = vfail(c, in, "%s: invalid shape: %s", op, cxla_status_message(s));
        cxla_status_free(s);
        return e;
    }
    /* Bitcast's byte-size rule holds only where layouts are decided (XLA's
     * ShapeVerifier::HandleBitcast checks it when layout-sensitive). */
    if (in->opcode == CXLA_OP_BITCAST && !v->options.layout_sensitive) return NULL;
    cxla_shape inferred;
    cxla_status st = cxla_infer_shape(in, v->scratch, &inferred);
    bool exact = exact_shapes(in->opcode);
    if (st && v->options.allow_mixed_precision && !exact) {
        cxla_status again = infer_mixed(v, in, &inferred);
        if (!again) {
            cxla_status_free(st);
            st = NULL;
        } else {
            cxla_status_free(again);
        }
    }
    CXLA_RETURN_IF_ERROR(wrap(c, in, st));
    if (exact ? !cxla_infer_compatible(&in->shape, &inferred)
              : !compatible(v, &in->shape, &inferred)) {
        const char *ops = cxla_infer_operands_str(v->scratch, in);
        return vfail(c, in, "%s: declared shape %s differs from the inferred %s (operands: %s)", op,
                     shape_str(v, &in->shape), shape_str(v, &inferred), ops[0] ? ops : "none");
    }
    return v->options.layout_sensitive ? check_layouts(v, c, in) : NULL;
}

static cxla_status check_entry_layout(verifier *v) {
    const cxla_module *m = v->module;
    const cxla_computation *e = m->entry;
    if (!m->has_entry_layout) return NULL;
    if (m->entry_param_count != e->param_count)
        return vfail(e, NULL,
                     "entry_computation_layout has %" PRId64 " parameters, the entry "
                     "computation %" PRId64,
                     m->entry_param_count, e->param_count);
    for (int64_t i = 0; i < e->param_count; i++) {
        const cxla_shape *want = &m->entry_param_shapes[i], *got = &e->params[i]->shape;
        cxla_status s = cxla_shape_validate(want);
        if (s) {
            cxla_status r = vfail(e, NULL, "entry_computation_layout parameter %" PRId64 ": %s", i,
                                  cxla_status_message(s));
            cxla_status_free(s);
            return r;
        }
        if (!cxla_infer_compatible(want, got))
            return vfail(e, e->params[i],
                         "parameter %" PRId64 " is %s but entry_computation_layout "
                         "says %s",
                         i, shape_str(v, got), shape_str(v, want));
    }
    cxla_status s = cxla_shape_validate(&m->entry_result_shape);
    if (s) {
        cxla_status r =
            vfail(e, NULL, "entry_computation_layout result: %s", cxla_status_message(s));
        cxla_status_free(s);
        return r;
    }
    if (!cxla_infer_compatible(&m->entry_result_shape, &e->root->shape))
        return vfail(e, e->root, "the root is %s but entry_computation_layout's result is %s",
                     shape_str(v, &e->root->shape), shape_str(v, &m->entry_result_shape));
    return NULL;
}

/* ---- asynchronous pairs ---------------------------------------------------------- */

static cxla_status single_user(const cxla_computation *c, const cxla_instr *in, cxla_opcode a,
                               cxla_opcode b) {
    if (in->user_count != 1)
        return vfail(c, in, "%s must have exactly one user (%s%s%s), has %" PRId64,
                     cxla_opcode_name(in->opcode), cxla_opcode_name(a), b != a ? " or " : "",
                     b != a ? cxla_opcode_name(b) : "", in->user_count);
    cxla_opcode u = in->users[0]->opcode;
    if (u != a && u != b)
        return vfail(c, in, "the user of %s must be %s%s%s, got %s '%s'",
                     cxla_opcode_name(in->opcode), cxla_opcode_name(a), b != a ? " or " : "",
                     b != a ? cxla_opcode_name(b) : "", cxla_opcode_name(u), in->users[0]->name);
    return NULL;
}

static cxla_status operand_is(const cxla_computation *c, const cxla_instr *in, cxla_opcode a,
                              cxla_opcode b) {
    cxla_opcode o = in->operands[0]->opcode;
    if (o != a && o != b)
        return vfail(c, in, "the operand of %s must be %s%s%s, got %s '%s'",
                     cxla_opcode_name(in->opcode), cxla_opcode_name(a), b != a ? " or " : "",
                     b != a ? cxla_opcode_name(b) : "", cxla_opcode_name(o), in->operands[0]->name);
    return NULL;
}

static bool same_channel(const cxla_instr *a, const cxla_instr *b) {
    int64_t x = -1, y = -1;
    bool hx = cxla_instr_int(a, CXLA_ATTR_CHANNEL_ID, &x),
         hy = cxla_instr_int(b, CXLA_ATTR_CHANNEL_ID, &y);
    return hx == hy && x == y;
}

static cxla_status check_send_recv(const cxla_computation *c, const cxla_instr *in,
                                   cxla_opcode done) {
    if (in->user_count == 0 && c->root == in) return NULL; /* wrapped in an async computation */
    CXLA_RETURN_IF_ERROR(single_user(c, in, done, CXLA_OP_TUPLE));
    const cxla_instr *u = in->users[0];
    if (u->opcode == done) {
        if (!same_channel(in, u))
            return vfail(c, in, "%s and its %s '%s' must have the same channel_id",
                         cxla_opcode_name(in->opcode), cxla_opcode_name(done), u->name);
        if (cxla_instr_bool(in, CXLA_ATTR_IS_HOST_TRANSFER) !=
            cxla_instr_bool(u, CXLA_ATTR_IS_HOST_TRANSFER))
            return vfail(c, in, "%s and its %s '%s' must agree on is_host_transfer",
                         cxla_opcode_name(in->opcode), cxla_opcode_name(done), u->name);
    }
    return NULL;
}

static cxla_status check_async_pairs(const cxla_computation *c, const cxla_instr *in) {
    switch (in->opcode) {
    case CXLA_OP_ASYNC_START: return single_user(c, in, CXLA_OP_ASYNC_UPDATE, CXLA_OP_ASYNC_DONE);
    case CXLA_OP_ASYNC_UPDATE:
        CXLA_RETURN_IF_ERROR(operand_is(c, in, CXLA_OP_ASYNC_START, CXLA_OP_ASYNC_UPDATE));
        return single_user(c, in, CXLA_OP_ASYNC_UPDATE, CXLA_OP_ASYNC_DONE);
    case CXLA_OP_ASYNC_DONE: return operand_is(c, in, CXLA_OP_ASYNC_START, CXLA_OP_ASYNC_UPDATE);
    case CXLA_OP_ALL_REDUCE_START:
        return single_user(c, in, CXLA_OP_ALL_REDUCE_DONE, CXLA_OP_ALL_REDUCE_DONE);
    case CXLA_OP_ALL_REDUCE_DONE:
        return operand_is(c, in, CXLA_OP_ALL_REDUCE_START, CXLA_OP_ALL_REDUCE_START);
    case CXLA_OP_ALL_GATHER_START:
        return single_user(c, in, CXLA_OP_ALL_GATHER_DONE, CXLA_OP_ALL_GATHER_DONE);
    case CXLA_OP_ALL_GATHER_DONE:
        return operand_is(c, in, CXLA_OP_ALL_GATHER_START, CXLA_OP_ALL_GATHER_START);
    case CXLA_OP_COLLECTIVE_PERMUTE_START:
        return single_user(c, in, CXLA_OP_COLLECTIVE_PERMUTE_DONE, CXLA_OP_COLLECTIVE_PERMUTE_DONE);
    case CXLA_OP_COLLECTIVE_PERMUTE_DONE:
        return operand_is(c, in, CXLA_OP_COLLECTIVE_PERMUTE_START,
                          CXLA_OP_COLLECTIVE_PERMUTE_START);
    case CXLA_OP_COPY_START: return single_user(c, in, CXLA_OP_COPY_DONE, CXLA_OP_COPY_DONE);
    case CXLA_OP_COPY_DONE: return operand_is(c, in, CXLA_OP_COPY_START, CXLA_OP_COPY_START);
    case CXLA_OP_SEND: return check_send_recv(c, in, CXLA_OP_SEND_DONE);
    case CXLA_OP_RECV: return check_send_recv(c, in, CXLA_OP_RECV_DONE);
    case CXLA_OP_SEND_DONE: return operand_is(c, in, CXLA_OP_SEND, CXLA_OP_GET_TUPLE_ELEMENT);
    case CXLA_OP_RECV_DONE: return operand_is(c, in, CXLA_OP_RECV, CXLA_OP_GET_TUPLE_ELEMENT);
    default: return NULL;
    }
}

/* ---- the module ------------------------------------------------------------------ */

static cxla_status verify(verifier *v) {
    const cxla_module *m = v->module;
    if (!m->entry)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "module '%s' has no entry computation",
                          m->name);
    bool entry_found = false;
    for (int64_t i = 0; i < m->comp_count; i++) {
        if (!m->comps[i])
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "module '%s': computation %" PRId64 " is missing", m->name, i);
        entry_found = entry_found || m->comps[i] == m->entry;
    }
    if (!entry_found)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "module '%s': the entry computation '%s' is not in the module", m->name,
                          m->entry->name);
    for (int64_t i = 0; i < m->comp_count; i++)
        CXLA_RETURN_IF_ERROR(check_computation_structure(v, m->comps[i]));
    cxla_computation **corder;
    int64_t ccount;
    cxla_status s = cxla_module_computation_post_order(m, &corder, &ccount);
    if (s) {
        cxla_status r =
            cxla_error(cxla_status_code_of(s), "module '%s': %s", m->name, cxla_status_message(s));
        cxla_status_free(s);
        return r;
    }
    /* Callees first, so a bad signature is reported where it is defined. */
    for (int64_t k = 0; k < ccount; k++) {
        const cxla_computation *c = corder[k];
        cxla_instr **order;
        CXLA_RETURN_IF_ERROR(wrap(c, NULL, cxla_computation_post_order(c, &order)));
        for (int64_t i = 0; i < c->instr_count; i++)
            CXLA_RETURN_IF_ERROR(check_instr_shape(v, c, order[i]));
    }
    for (int64_t k = 0; k < m->comp_count; k++)
        for (int64_t i = 0; i < m->comps[k]->instr_count; i++)
            CXLA_RETURN_IF_ERROR(check_async_pairs(m->comps[k], m->comps[k]->instrs[i]));
    return check_entry_layout(v);
}

cxla_status cxla_hlo_verify_with_options(const cxla_module *module,
                                         const cxla_hlo_verify_options *options) {
    if (!module) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cxla_hlo_verify: no module");
    verifier v = {.module = module, .scratch = cxla_arena_create()};
    v.options = options ? *options
                        : (cxla_hlo_verify_options){.layout_sensitive = false,
                                                    .allow_mixed_precision = true};
    if (!v.scratch) return OOM();
    cxla_strmap_init(&v.names, v.scratch);
    cxla_status s = verify(&v);
    cxla_arena_destroy(v.scratch);
    return s;
}

cxla_status cxla_hlo_verify(const cxla_module *module) {
    return cxla_hlo_verify_with_options(module, NULL);
}
