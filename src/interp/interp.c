/* The interpreter's driver: evaluation plans, the value of each instruction, entry
 * arguments and results. Operations themselves live in the family files. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/rng.h"
#include "interp/interp.h"
#include "shape/shape_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* Deep enough for real programs; a module that nests deeper is almost surely recursive. */
enum { INTERP_MAX_DEPTH = 200 };

/* One family per line (clang-format off keeps it so, for easy merges). */
// clang-format off
static const interp_op_fn *const families[] = {
    interp_control_ops,
    interp_elementwise_ops,
    interp_shape_ops,
    interp_reduce_ops,
    interp_linalg_ops,
    interp_fft_ops,
    interp_collective_ops,
    interp_async_ops,
    interp_linalg2_ops,
    interp_ragged_ops,
    interp_scan_ops,
    interp_rng_ops,
    interp_custom_call_ops,
    interp_host_ops,
};
// clang-format on

interp_op_fn interp_handler(cxla_opcode op) {
    if ((int)op < 0 || op >= CXLA_OP_COUNT) return NULL;
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(families); i++)
        if (families[i][op]) return families[i][op];
    return NULL;
}

int interp_handler_count(cxla_opcode op) {
    int n = 0;
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(families); i++) n += families[i][op] != NULL;
    return n;
}

cxla_status interp_error(const cxla_instr *instr, cxla_status_code code, const char *format, ...) {
    va_list args;
    va_start(args, format);
    cxla_status s = cxla_status_createv(code, __FILE__, __LINE__, format, args);
    va_end(args);
    if (instr->line > 0)
        return cxla_status_annotate(s, "%s (%s, line %" PRId64 ")", instr->name,
                                    cxla_opcode_name(instr->opcode), instr->line);
    return cxla_status_annotate(s, "%s (%s)", instr->name, cxla_opcode_name(instr->opcode));
}

/* exec_cancel_poll every this many instructions: often enough to notice within
 * milliseconds, rarely enough that the hook's cost (an MPI probe) does not show. */
enum { POLL_EVERY = 1024 };

static bool poll_cancel(interp_ctx *ctx) {
    ctx->poll_countdown = POLL_EVERY;
    return exec_cancel_poll(ctx->options.cancel);
}

/* The name of |in| in the driver's messages: the overrides' (the user's instruction
 * that an optimized module's copy came from), else its own. */
static const char *name_of(const interp_ctx *ctx, const cxla_instr *in) {
    const interp_overrides *o = ctx->overrides;
    const char *name = o && o->name ? o->name(o->user, in) : NULL;
    return name ? name : in->name;
}

static cxla_status cancelled_at(const interp_ctx *ctx, const cxla_computation *comp,
                                const cxla_instr *in) {
    char where[512];
    snprintf(where, sizeof(where), "at %s (%s, computation %s, line %" PRId64 ")", name_of(ctx, in),
             cxla_opcode_name(in->opcode), comp->name, in->line);
    return exec_cancel_error(ctx->options.cancel, where);
}

cxla_status interp_rename_error(cxla_status s, const cxla_instr *in, const char *name) {
    const char *msg = cxla_status_message(s);
    size_t n = strlen(in->name);
    if (!s || !name || strcmp(name, in->name) == 0 || strncmp(msg, in->name, n) != 0 ||
        msg[n] != ' ')
        return s;
    cxla_status r =
        cxla_status_create(cxla_status_code_of(s), __FILE__, __LINE__, "%s%s", name, msg + n);
    if (!r) return s; /* cannot happen: a code other than OK */
    cxla_status_free(s);
    return r;
}

/* Out of memory names the instruction that needed it, when its handler did not. */
static cxla_status name_oom(const interp_ctx *ctx, cxla_status s, const cxla_computation *comp,
                            const cxla_instr *in) {
    s = interp_rename_error(s, in, name_of(ctx, in));
    if (cxla_status_code_of(s) != CXLA_STATUS_RESOURCE_EXHAUSTED) return s;
    const char *msg = cxla_status_message(s), *name = name_of(ctx, in);
    size_t n = strlen(name);
    if (strncmp(msg, name, n) == 0 && msg[n] == ' ') return s; /* interp_error's */
    if (strstr(msg, " (") && strstr(msg, ", line ")) return s; /* a callee's instruction */
    return cxla_status_annotate(s, "%s (%s, computation %s, line %" PRId64 ")", name,
                                cxla_opcode_name(in->opcode), comp->name, in->line);
}

/* The caller's memory offered for a leaf of the entry's result (exec_run_options.result_data,
 * cxla_executable_run_buffers): armed by the entry's frame around the handler of the
 * instruction whose value is that leaf, and disarmed in every frame below it (a callee's
 * values are not the leaf). The first array of the leaf's type and dimensions the handler
 * makes lies there (zeroed, as every new array is), so that the result is made where the
 * caller wants it instead of beside it and copied after the run. The memory is the
 * caller's alone during the run (the runtime offers none that an argument shares). */
typedef struct result_offer {
    void *data;
    size_t size;
    const cxla_shape *shape; /* the leaf's */
    bool taken;
} result_offer;
static _Thread_local result_offer *armed_offer;

static bool offer_fits(const result_offer *o, const cxla_shape *s) {
    const cxla_shape *w = o->shape;
    if (o->taken || s->type != w->type || s->rank != w->rank || s->dynamic) return false;
    for (int64_t d = 0; d < s->rank; d++)
        if (s->dims[d] != w->dims[d]) return false;
    return true;
}

cxla_status interp_new_array_of(const cxla_shape *shape, cxla_type type, cxla_literal **out) {
    cxla_shape s = *shape;
    s.type = type;
    s.layout = NULL; /* values inside the interpreter are row-major */
    result_offer *o = armed_offer;
    if (o && offer_fits(o, &s) && !cxla_literal_create_over(&s, o->data, o->size, out)) {
        o->taken = true;
        memset(o->data, 0, cxla_literal_byte_size(*out));
        return NULL;
    }
    return cxla_literal_create_validated(&s, out);
}

cxla_status interp_new_array(const cxla_shape *shape, cxla_literal **out) {
    return interp_new_array_of(shape, shape->type, out);
}

/* ---- plans ------------------------------------------------------------------------ */

/* How to evaluate a computation: its instructions in post-order, and for each the slots
 * of its operands and how many uses each value has (to free values early). */
/* One instruction to run, in the order of the plan; dead instructions have none. Kept
 * together in one array so that the driver's loop reads what it needs from one place
 * (the instruction itself is only read by the handler). */
enum { STEP_OP, STEP_PARAMETER, STEP_CONSTANT, STEP_UNSUPPORTED };
typedef struct interp_step {
    interp_op_fn fn;
    const cxla_instr *in;
    const int64_t *slots; /* of its operands */
    int64_t slot;         /* of its value */
    int64_t operand_count;
    uint8_t kind;        /* STEP_* */
    bool exclusive_gte;  /* as the plan's exclusive_gte */
    bool borrow_gte;     /* a get-tuple-element of the control family's handler */
    bool dynamic_result; /* its shape is dynamic or a tuple (interp_dynamic_maybe) */
    bool check_finite;   /* --check-finite tests its result (computes elements) */
    cxla_type mixed_to;  /* float operands of other precisions convert to it; else INVALID */
    int64_t gte_index;   /* of a borrow_gte step */
} interp_step;

typedef struct interp_plan {
    int64_t count;
    int64_t max_operands; /* the most operands an instruction has */
    const cxla_instr **order;
    interp_op_fn *handlers; /* of each instruction; NULL: unsupported (an error if run) */
    int64_t **operand_slots;
    int64_t *uses;
    bool *exclusive_gte; /* get-tuple-element that alone reads its element */
    bool *dead;          /* no one reads the value: not evaluated */
    /* Each constant's value in the interpreter's form, evaluated on first use and then
     * lent to every run of the plan (borrowed: never taken over, updated or freed by the
     * frame), so that a constant in a loop body costs nothing per iteration. */
    bool *is_constant;
    cxla_literal **constants;
    struct interp_plan *next_with_constants; /* ctx->plans_with_constants list */
    interp_step *steps;
    int64_t step_count;
    int64_t root_slot;
} interp_plan;

/* A get-tuple-element may take its element out of the tuple when every user of the
 * tuple is a get-tuple-element with a different index and the tuple is not the root. */
/* Mixed floating-point precision, which the verifier allows where XLA's does (f32 +
 * bf16, a bf16 scalar broadcast or padded into f32): the interpreter converts each float
 * operand of another precision to one type before the handler runs, as XLA's float
 * normalization inserts converts so that an instruction's operands match its output. The
 * type is the result's element type when it is a float, else (compare) the widest float
 * operand's. Operations that only pass values through or call computations, and those
 * XLA's verifier exempts (dot, convolution, reductions, ...), are left as they are. */
cxla_type interp_mixed_precision_target(const cxla_instr *in) {
    switch (in->opcode) {
    case CXLA_OP_CALL:
    case CXLA_OP_CONDITIONAL:
    case CXLA_OP_CONSTANT:
    case CXLA_OP_CONVOLUTION:
    case CXLA_OP_DOT:
    case CXLA_OP_CUSTOM_CALL:
    case CXLA_OP_FUSION:
    case CXLA_OP_TUPLE:
    case CXLA_OP_GET_TUPLE_ELEMENT:
    case CXLA_OP_WHILE:
    case CXLA_OP_PARAMETER:
    case CXLA_OP_SORT:
    case CXLA_OP_REDUCE:
    case CXLA_OP_REDUCE_WINDOW:
    case CXLA_OP_MAP:
    case CXLA_OP_CONVERT:
    case CXLA_OP_BITCAST_CONVERT:
    case CXLA_OP_REDUCE_PRECISION:
    case CXLA_OP_STOCHASTIC_CONVERT: return CXLA_TYPE_INVALID;
    default: break;
    }
    bool elementwise = (cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_ELEMENTWISE) != 0;
    bool moves = in->opcode == CXLA_OP_BROADCAST || in->opcode == CXLA_OP_PAD ||
                 in->opcode == CXLA_OP_CONCATENATE || in->opcode == CXLA_OP_DYNAMIC_UPDATE_SLICE ||
                 in->opcode == CXLA_OP_SELECT || in->opcode == CXLA_OP_CLAMP;
    if (in->shape.type == CXLA_TUPLE || (!elementwise && !moves)) return CXLA_TYPE_INVALID;
    cxla_type to = cxla_type_is_float(in->shape.type) ? in->shape.type : CXLA_TYPE_INVALID;
    bool differ = false;
    cxla_type first = CXLA_TYPE_INVALID;
    for (int64_t k = 0; k < in->operand_count; k++) {
        cxla_type t = in->operands[k] ? in->operands[k]->shape.type : CXLA_TYPE_INVALID;
        if (!cxla_type_is_float(t)) continue;
        if (first == CXLA_TYPE_INVALID) first = t;
        differ = differ || t != first || (to != CXLA_TYPE_INVALID && t != to);
        if (!cxla_type_is_float(in->shape.type) &&
            (to == CXLA_TYPE_INVALID || cxla_type_bits(t) > cxla_type_bits(to)))
            to = t;
    }
    return differ ? to : CXLA_TYPE_INVALID;
}

static bool gte_is_exclusive(const cxla_computation *comp, const cxla_instr *gte) {
    const cxla_instr *t = gte->operands[0];
    int64_t index;
    if (!t || t == comp->root || !cxla_instr_int(gte, CXLA_ATTR_INDEX, &index)) return false;
    for (int64_t u = 0; u < t->user_count; u++) {
        const cxla_instr *user = t->users[u];
        int64_t other;
        if (user->opcode != CXLA_OP_GET_TUPLE_ELEMENT || user->parent != comp) return false;
        if (user != gte && cxla_instr_int(user, CXLA_ATTR_INDEX, &other) && other == index)
            return false;
    }
    return true;
}

/* True for operations whose result elements are all elements of their operands (moved,
 * not computed; opcodes.def's MOVES_ELEMENTS): a NaN or Inf in their result was in an operand
 * already, so
 * --check-finite never blames them and need not test their (possibly big) results. */
static bool moves_elements(cxla_opcode op) {
    return (cxla_opcode_get_info(op)->flags & CXLA_OPF_MOVES_ELEMENTS) != 0;
}

static bool all_row_major(const cxla_literal *lit);

static cxla_status build_plan(interp_ctx *ctx, const cxla_computation *comp, interp_plan **out) {
    cxla_arena *a = ctx->arena;
    interp_plan *plan = cxla_arena_alloc(a, sizeof(*plan));
    if (!plan) return OOM();
    cxla_instr **order;
    CXLA_RETURN_IF_ERROR(cxla_computation_post_order_in(comp, a, &order));
    int64_t n = comp->instr_count;
    plan->count = n;
    plan->order = (const cxla_instr **)order;
    plan->operand_slots = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(int64_t *));
    plan->uses = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(int64_t));
    plan->exclusive_gte = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(bool));
    plan->handlers = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(interp_op_fn));
    if (!plan->exclusive_gte || !plan->handlers) return OOM();
    cxla_strmap slot_of;
    cxla_strmap_init(&slot_of, a);
    if (!plan->operand_slots || !plan->uses) return OOM();
    for (int64_t i = 0; i < n; i++)
        if (!cxla_strmap_put(&slot_of, order[i]->name, strlen(order[i]->name),
                             (void *)(intptr_t)(i + 1)))
            return OOM();
    plan->root_slot = -1;
    plan->dead = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(bool));
    plan->is_constant = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(bool));
    plan->constants = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(cxla_literal *));
    if (!plan->dead || !plan->is_constant || !plan->constants) return OOM();
    /* An instruction no one reads (not the root, no users, no side effect) is skipped. */
    for (int64_t i = n - 1; i >= 0; i--) {
        const cxla_instr *in = order[i];
        bool needed = in == comp->root || in->opcode == CXLA_OP_PARAMETER ||
                      (cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_SIDE_EFFECT);
        for (int64_t u = 0; u < in->user_count && !needed; u++) {
            const cxla_instr *user = in->users[u];
            if (user->parent != comp) continue;
            intptr_t us = (intptr_t)cxla_strmap_get(&slot_of, user->name, strlen(user->name));
            needed = us && !plan->dead[us - 1];
        }
        plan->dead[i] = !needed;
    }
    for (int64_t i = 0; i < n; i++) {
        const cxla_instr *in = order[i];
        if (plan->dead[i]) continue;
        if (in == comp->root) plan->root_slot = i;
        plan->handlers[i] = interp_handler(in->opcode);
        /* Constants of the control family's handler: a value that depends on nothing. */
        plan->is_constant[i] = in->opcode == CXLA_OP_CONSTANT && !in->shape.dynamic &&
                               plan->handlers[i] == interp_control_ops[CXLA_OP_CONSTANT];
        if (ctx->overrides && !plan->is_constant[i] && in->opcode != CXLA_OP_PARAMETER) {
            interp_op_fn fn = ctx->overrides->lookup(ctx->overrides->user, in);
            if (fn) plan->handlers[i] = fn;
        }
        if (in->operand_count > plan->max_operands) plan->max_operands = in->operand_count;
        if (in->opcode == CXLA_OP_GET_TUPLE_ELEMENT && in->operand_count == 1)
            plan->exclusive_gte[i] = gte_is_exclusive(comp, in);
        if (!in->operand_count) continue;
        int64_t *slots = cxla_arena_alloc_array(a, (size_t)in->operand_count, sizeof(int64_t));
        if (!slots) return OOM();
        for (int64_t k = 0; k < in->operand_count; k++) {
            const cxla_instr *op = in->operands[k];
            intptr_t s = op && op->parent == comp
                             ? (intptr_t)cxla_strmap_get(&slot_of, op->name, strlen(op->name))
                             : 0;
            if (!s)
                return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                  "%s: operand %" PRId64 " is not in computation '%s'", in->name, k,
                                  comp->name);
            slots[k] = (int64_t)s - 1;
            plan->uses[slots[k]]++;
        }
        plan->operand_slots[i] = slots;
    }
    if (plan->root_slot < 0)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "computation '%s' has no root", comp->name);
    plan->uses[plan->root_slot]++; /* the result is never freed by the loop */
    plan->steps = cxla_arena_alloc_array(a, (size_t)(n ? n : 1), sizeof(interp_step));
    if (!plan->steps) return OOM();
    for (int64_t i = 0; i < n; i++) {
        const cxla_instr *in = order[i];
        if (plan->dead[i]) continue;
        interp_step *st = &plan->steps[plan->step_count++];
        st->fn = plan->handlers[i];
        st->in = in;
        st->slots = plan->operand_slots[i];
        st->slot = i;
        st->operand_count = in->operand_count;
        st->kind = in->opcode == CXLA_OP_PARAMETER ? STEP_PARAMETER
                   : !st->fn                       ? STEP_UNSUPPORTED
                   : plan->is_constant[i]          ? STEP_CONSTANT
                                                   : STEP_OP;
        st->exclusive_gte = plan->exclusive_gte[i];
        st->borrow_gte = in->opcode == CXLA_OP_GET_TUPLE_ELEMENT && in->operand_count == 1 &&
                         st->fn == interp_control_ops[CXLA_OP_GET_TUPLE_ELEMENT] &&
                         cxla_instr_int(in, CXLA_ATTR_INDEX, &st->gte_index);
        st->dynamic_result = in->shape.dynamic || in->shape.type == CXLA_TUPLE;
        st->check_finite = in->operand_count > 0 && !moves_elements(in->opcode);
        st->mixed_to = interp_mixed_precision_target(in);
    }
    plan->next_with_constants = ctx->plans_with_constants;
    ctx->plans_with_constants = plan;
    *out = plan;
    return NULL;
}

static cxla_status get_plan(interp_ctx *ctx, const cxla_computation *comp, interp_plan **out) {
    /* Small computations called in loops make this lookup frequent: a direct-mapped cache
     * by address stands in front of the map by name. */
    size_t k = (size_t)(((uintptr_t)comp * UINT64_C(0x9E3779B97F4A7C15)) >> 32) %
               CXLA_ARRAY_SIZE(ctx->plan_cache);
    if (ctx->plan_cache[k].comp == comp) {
        *out = ctx->plan_cache[k].plan;
        return NULL;
    }
    interp_plan *plan = cxla_strmap_get(&ctx->plans, comp->name, strlen(comp->name));
    if (!plan) {
        CXLA_RETURN_IF_ERROR(build_plan(ctx, comp, &plan));
        if (!cxla_strmap_put(&ctx->plans, comp->name, strlen(comp->name), plan)) return OOM();
    }
    ctx->plan_cache[k].comp = comp;
    ctx->plan_cache[k].plan = plan;
    *out = plan;
    return NULL;
}

cxla_status interp_ctx_init(interp_ctx *ctx, const cxla_module *module,
                            const exec_run_options *options) {
    memset(ctx, 0, sizeof(*ctx));
    ctx->module = module;
    if (options) ctx->options = *options;
    ctx->rng_state[0] = EXEC_RNG_INITIAL_STATE;
    ctx->arena = cxla_arena_create();
    if (!ctx->arena) return OOM();
    cxla_strmap_init(&ctx->plans, ctx->arena);
    return NULL;
}

void interp_ctx_deinit(interp_ctx *ctx) {
    for (interp_plan *p = ctx->plans_with_constants; p; p = p->next_with_constants)
        for (int64_t i = 0; i < p->count; i++)
            if (p->constants[i] != p->order[i]->literal) cxla_literal_free(p->constants[i]);
    cxla_arena_destroy(ctx->arena);
    free(ctx->collective_counts);
    memset(ctx, 0, sizeof(*ctx));
}

/* ---- evaluation ------------------------------------------------------------------- */

/* True when none of the |n| floats of |bits| bits at |p| has the exponent |mask| all
 * ones (Inf or NaN). Whole words through memcpy, so that the loop vectorizes: --check-finite
 * tests every result, and a loop that updates a big array in place would otherwise pay
 * an element-by-element conversion of the whole array per iteration. */
static bool words_finite(const char *p, size_t n, int bits, uint64_t mask) {
    bool bad = false;
    switch (bits) {
    case 16:
        for (size_t i = 0; i < n; i++) {
            uint16_t w;
            memcpy(&w, p + i * 2, 2);
            bad |= (w & mask) == mask;
        }
        break;
    case 32:
        for (size_t i = 0; i < n; i++) {
            uint32_t w;
            memcpy(&w, p + i * 4, 4);
            bad |= (w & mask) == mask;
        }
        break;
    default:
        for (size_t i = 0; i < n; i++) {
            uint64_t w;
            memcpy(&w, p + i * 8, 8);
            bad |= (w & mask) == mask;
        }
        break;
    }
    return !bad;
}

/* True when no float or complex element of |lit| (or of its tuple leaves) is NaN or Inf. */
static bool all_finite(const cxla_literal *lit) {
    cxla_type t = cxla_literal_type(lit);
    if (t == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            if (!all_finite(cxla_literal_tuple_element_const(lit, i))) return false;
        return true;
    }
    if (!cxla_type_is_float(t) && !cxla_type_is_complex(t)) return true;
    const char *p = cxla_literal_data_const(lit);
    size_t bytes = cxla_literal_byte_size(lit);
    switch (t) { /* IEEE layouts: Inf and NaN are the all-ones exponent */
    case CXLA_F16: return words_finite(p, bytes / 2, 16, 0x7c00);
    case CXLA_BF16: return words_finite(p, bytes / 2, 16, 0x7f80);
    case CXLA_F32:
    case CXLA_C64: return words_finite(p, bytes / 4, 32, 0x7f800000);
    case CXLA_F64:
    case CXLA_C128: return words_finite(p, bytes / 8, 64, 0x7ff0000000000000);
    default: break;
    }
    size_t esize = cxla_type_storage(t);
    size_t n = bytes / esize;
    for (size_t i = 0; i < n; i++) {
        double re, im;
        cxla_load_c128(t, p + i * esize, &re, &im);
        if (!isfinite(re) || !isfinite(im)) return false;
    }
    return true;
}

static cxla_literal *take_operand(interp_ctx *ctx, int64_t k, bool shared) {
    if (!ctx->take_values || k < 0 || k >= ctx->take_operand_count) return NULL;
    int64_t slot = ctx->take_slots[k], uses = 1;
    for (int64_t j = 0; j < ctx->take_operand_count; j++) /* used twice by this instruction */
        if (j != k && ctx->take_slots[j] == slot) {
            if (!shared) return NULL;
            uses++;
        }
    if (ctx->take_borrowed[slot] || ctx->take_remaining[slot] != uses) return NULL;
    cxla_literal *lit = ctx->take_values[slot];
    ctx->take_values[slot] = NULL;
    return lit;
}

cxla_literal *interp_take_operand(interp_ctx *ctx, int64_t k) {
    return take_operand(ctx, k, false);
}

cxla_literal *interp_take_operand_shared(interp_ctx *ctx, int64_t k) {
    return take_operand(ctx, k, true);
}

void interp_give_back_operand(interp_ctx *ctx, int64_t k, cxla_literal *lit) {
    ctx->take_values[ctx->take_slots[k]] = lit;
}

cxla_literal *interp_take_tuple_element(interp_ctx *ctx, int64_t index) {
    if (!ctx->take_values || ctx->take_operand_count != 1) return NULL;
    int64_t slot = ctx->take_slots[0];
    cxla_literal *t = ctx->take_values[slot];
    if (ctx->take_borrowed[slot] || !t || cxla_literal_type(t) != CXLA_TUPLE) return NULL;
    if (!ctx->take_exclusive_gte && ctx->take_remaining[slot] != 1) return NULL;
    return cxla_literal_tuple_take(t, index);
}

static int64_t leaf_count_of(const cxla_shape *s) {
    if (s->type != CXLA_TUPLE) return 1;
    int64_t n = 0;
    for (int64_t i = 0; i < s->tuple_count; i++) n += leaf_count_of(&s->elements[i]);
    return n;
}

/* Whether leaf |s| of the entry's result is one the caller's memory may hold as the
 * interpreter holds it: a static array whose entry layout is row-major (the result is then
 * not relaid). */
static bool offerable_leaf(const cxla_module *m, const cxla_shape *s, const cxla_shape *entry) {
    return cxla_type_is_array(s->type) && s->type != CXLA_TOKEN && cxla_shape_is_static(s) &&
           (!m->has_entry_layout || !entry || cxla_layout_is_default(entry));
}

/* By leaf of the entry's result (depth-first), the instruction of |entry| whose value is
 * that leaf, where that is a static row-major array made by an instruction of its own
 * (the root, or an element of a root tuple that appears once in it); NULL elsewhere, and
 * NULL for the whole when memory is short or no leaf qualifies. */
static const cxla_instr **result_leaf_instrs(const cxla_module *m, const cxla_computation *entry,
                                             int64_t *out_count) {
    const cxla_instr *r = entry->root;
    *out_count = 0;
    if (!r) return NULL;
    int64_t n = leaf_count_of(&r->shape);
    const cxla_instr **leaf = calloc((size_t)(n ? n : 1), sizeof(*leaf));
    if (!leaf) return NULL;
    const cxla_shape *es = m->has_entry_layout ? &m->entry_result_shape : NULL;
    bool any = false;
    if (r->shape.type != CXLA_TUPLE) {
        if (r->opcode != CXLA_OP_PARAMETER && r->opcode != CXLA_OP_CONSTANT &&
            offerable_leaf(m, &r->shape, es))
            leaf[0] = r, any = true;
    } else if (r->opcode == CXLA_OP_TUPLE) {
        for (int64_t k = 0, at = 0; k < r->operand_count; k++) {
            const cxla_instr *e = r->operands[k];
            const cxla_shape *ek =
                es && es->type == CXLA_TUPLE && k < es->tuple_count ? &es->elements[k] : NULL;
            bool once = true;
            for (int64_t j = 0; j < r->operand_count; j++)
                once = once && (j == k || r->operands[j] != e);
            if (once && e->opcode != CXLA_OP_PARAMETER && e->opcode != CXLA_OP_CONSTANT &&
                e->shape.type != CXLA_TUPLE && offerable_leaf(m, &e->shape, es ? ek : NULL) &&
                (!es || ek))
                leaf[at] = e, any = true;
            at += leaf_count_of(&e->shape);
        }
    }
    if (!any) {
        free(leaf);
        return NULL;
    }
    *out_count = n;
    return leaf;
}

/* With |donated| (or |owned| and owned[p]), the frame takes over each argument a
 * parameter instruction reads (setting args[p] to NULL) so that handlers may update it in
 * place. */
static cxla_status eval_computation(interp_ctx *ctx, const cxla_computation *comp,
                                    cxla_literal **args, bool donated, const bool *owned,
                                    int64_t arg_count, cxla_literal **out) {
    if (arg_count != comp->param_count)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "computation '%s' takes %" PRId64 " arguments, got %" PRId64, comp->name,
                          comp->param_count, arg_count);
    if (ctx->depth >= INTERP_MAX_DEPTH)
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                          "calls nested more than %d deep at computation '%s'", INTERP_MAX_DEPTH,
                          comp->name);
    interp_plan *plan = NULL;
    CXLA_RETURN_IF_ERROR(get_plan(ctx, comp, &plan));
    /* The frame: values, remaining uses, operand lists and borrowed flags, one block. */
    size_t n = (size_t)plan->count, m = (size_t)plan->max_operands;
    size_t frame_size = (2 * n + m) * sizeof(void *) + n + 1;
    char *frame = malloc(frame_size);
    if (!frame) return OOM();
    cxla_literal **values = (cxla_literal **)frame;
    int64_t *remaining = (int64_t *)(frame + n * sizeof(void *));
    const cxla_literal **ops = (const cxla_literal **)(frame + 2 * n * sizeof(void *));
    bool *borrowed = (bool *)(frame + (2 * n + m) * sizeof(void *));
    _Static_assert(sizeof(int64_t) == sizeof(void *), "the frame's slots share one size");
    memset(values, 0, n * sizeof(*values));
    memset(borrowed, 0, n * sizeof(*borrowed));
    memcpy(remaining, plan->uses, n * sizeof(*remaining));
    cxla_status s = NULL;
    /* The entry's frame offers the caller's result memory to the handlers of the
     * instructions whose values are the result's leaves (result_offer); frames below
     * offer nothing. */
    result_offer *saved_offer = armed_offer;
    armed_offer = NULL;
    const cxla_instr **leaf_of = NULL; /* by leaf: the instruction whose value it is */
    int64_t leaf_count = 0;
    if (ctx->depth == 0 && comp == ctx->module->entry && ctx->options.result_data &&
        ctx->options.result_written && ctx->options.result_size)
        leaf_of = result_leaf_instrs(ctx->module, comp, &leaf_count);
    ctx->depth++;
    /* Operands the handlers may take over (interp_take_operand): this frame's, set per
     * instruction; the caller's are restored on the way out, since a handler that
     * called this computation may still take its own operands after it returns. */
    cxla_literal **saved_values = ctx->take_values;
    const int64_t *saved_slots = ctx->take_slots, *saved_remaining = ctx->take_remaining;
    const bool *saved_borrowed = ctx->take_borrowed;
    bool saved_exclusive = ctx->take_exclusive_gte;
    int64_t saved_count = ctx->take_operand_count;
    for (int64_t j = 0; j < plan->step_count; j++) {
        const interp_step *st = &plan->steps[j];
        const cxla_instr *in = st->in;
        int64_t i = st->slot;
        /* Between instructions (a while loop's back-edge is its body's and condition's
         * instructions): the run may have been cancelled. The hook that reads other
         * processes' messages runs every POLL_EVERY instructions. */
        if (exec_cancelled(ctx->options.cancel) ||
            (ctx->options.cancel && --ctx->poll_countdown <= 0 && poll_cancel(ctx))) {
            s = cancelled_at(ctx, comp, in);
            break;
        }
        if (st->kind == STEP_PARAMETER) {
            int64_t p = in->parameter_number;
            if (p < 0 || p >= arg_count) {
                s = interp_error(in, CXLA_STATUS_INVALID_ARGUMENT,
                                 "no argument for parameter %" PRId64, p);
                break;
            }
            if ((donated || (owned && owned[p])) && args[p]) {
                values[i] = args[p];
                args[p] = NULL;
                borrowed[i] = false;
            } else {
                values[i] = (cxla_literal *)args[p];
                borrowed[i] = true;
            }
            continue;
        }
        interp_op_fn fn = st->fn;
        if (st->kind == STEP_UNSUPPORTED) {
            s = interp_error(in, CXLA_STATUS_UNIMPLEMENTED,
                             "the interpreter does not support '%s' yet",
                             cxla_opcode_name(in->opcode));
            break;
        }
        if (st->kind == STEP_CONSTANT) {
            /* The module's own literal when it is row-major already (never written:
             * borrowed by every frame), else the handler's row-major copy. */
            if (!plan->constants[i] && in->literal && all_row_major(in->literal) &&
                !cxla_literal_shape(in->literal)->dynamic)
                plan->constants[i] = in->literal;
            if (!plan->constants[i]) {
                s = fn(ctx, in, ops, &plan->constants[i]);
                if (s) break;
            }
            values[i] = plan->constants[i];
            borrowed[i] = true;
            continue;
        }
        int64_t nops = st->operand_count;
        const int64_t *slots = st->slots;
        /* An element of a tuple the frame borrows (a parameter's) outlives the frame: it
         * is borrowed in turn, not copied (a while loop's condition reads the state so). */
        if (st->borrow_gte && borrowed[slots[0]]) {
            const cxla_literal *t = values[slots[0]];
            const cxla_literal *e = cxla_literal_type(t) == CXLA_TUPLE
                                        ? cxla_literal_tuple_element_const(t, st->gte_index)
                                        : NULL;
            if (e) {
                values[i] = (cxla_literal *)e;
                borrowed[i] = true;
                --remaining[slots[0]]; /* borrowed: nothing to free */
                continue;
            }
        }
        bool maybe_dynamic = st->dynamic_result;
        for (int64_t k = 0; k < nops; k++) {
            const cxla_literal *v = values[slots[k]];
            ops[k] = v;
            maybe_dynamic = maybe_dynamic || v->dyn_sizes || v->tuple_count > 0;
        }
        /* Let the handler take over operands it is the last user of. */
        ctx->take_values = values;
        ctx->take_slots = slots;
        ctx->take_remaining = remaining;
        ctx->take_borrowed = borrowed;
        ctx->take_exclusive_gte = st->exclusive_gte;
        ctx->take_operand_count = nops;
        cxla_literal *result = NULL;
        cxla_literal **converted = NULL; /* operands converted for mixed precision */
        if (st->mixed_to != CXLA_TYPE_INVALID) {
            /* The handler sees the converted operands and may not take the originals. */
            ctx->take_operand_count = 0;
            converted = calloc((size_t)nops, sizeof(*converted));
            if (!converted) s = OOM();
            for (int64_t k = 0; k < nops && !s; k++) {
                cxla_type t = cxla_literal_type(ops[k]);
                if (!cxla_type_is_float(t) || t == st->mixed_to) continue;
                s = cxla_literal_convert(ops[k], st->mixed_to, &converted[k]);
                if (!s) ops[k] = converted[k];
            }
        }
        result_offer offer = {0};
        for (int64_t k = 0; k < leaf_count && !s; k++)
            if (leaf_of[k] == in && ctx->options.result_data[k]) {
                offer = (result_offer){ctx->options.result_data[k], ctx->options.result_size[k],
                                       &in->shape, false};
                armed_offer = &offer;
                /* An elementwise result made there, not in its dying operand (which would
                 * then be copied there after the run). */
                if (cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_ELEMENTWISE)
                    ctx->take_operand_count = 0;
            }
        /* As interp_dynamic_maybe: only values with dynamic sizes or tuples need the
         * dynamic path to look at them. */
        if (!s)
            s = maybe_dynamic ? interp_dynamic_eval(ctx, in, ops, fn, &result)
                              : fn(ctx, in, ops, &result);
        armed_offer = NULL;
        if (converted) {
            for (int64_t k = 0; k < nops; k++) cxla_literal_free(converted[k]);
            free(converted);
        }
        values[i] = result;
        if (s) {
            s = name_oom(ctx, s, comp, in);
            break;
        }
        if (ctx->options.check_finite && st->check_finite && !ctx->reported_non_finite &&
            !all_finite(values[i])) {
            /* An operand the handler took over (its slot is empty now) may have been
             * updated or freed since (a while loop's state, a call's arguments): it is
             * not known to have been finite, so the instruction is not blamed. */
            bool inputs_finite = true;
            for (int64_t k = 0; k < nops && inputs_finite; k++) {
                const cxla_literal *v = values[slots[k]];
                inputs_finite = v && all_finite(v);
            }
            /* A reducer that the handler recognized (interp_match_reducer) ran without
             * calling its computation, whose driver would have named the instruction in
             * it: that instruction is its root, named with the instruction it serves. */
            const cxla_computation *rc = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
            const cxla_instr *inner = interp_match_reducer(rc) ? rc->root : NULL;
            if (inputs_finite && inner) {
                fprintf(stderr,
                        "cxla: %s (%s, computation %s, line %" PRId64 ", the to_apply of %s (%s, "
                        "computation %s, line %" PRId64
                        ")) is the first to produce a NaN or Inf from finite operands\n",
                        name_of(ctx, inner), cxla_opcode_name(inner->opcode), rc->name, inner->line,
                        name_of(ctx, in), cxla_opcode_name(in->opcode), comp->name, in->line);
                ctx->reported_non_finite = true;
            } else if (inputs_finite) {
                fprintf(stderr,
                        "cxla: %s (%s, computation %s, line %" PRId64
                        ") is the first to produce a NaN or Inf from finite operands\n",
                        name_of(ctx, in), cxla_opcode_name(in->opcode), comp->name, in->line);
                ctx->reported_non_finite = true;
            }
        }
        /* Free operands whose last use this was. */
        for (int64_t k = 0; k < nops; k++) {
            int64_t slot = slots[k];
            if (--remaining[slot] == 0 && !borrowed[slot]) {
                cxla_literal_free(values[slot]);
                values[slot] = NULL;
            }
        }
    }
    ctx->take_values = saved_values;
    ctx->take_slots = saved_slots;
    ctx->take_remaining = saved_remaining;
    ctx->take_borrowed = saved_borrowed;
    ctx->take_exclusive_gte = saved_exclusive;
    ctx->take_operand_count = saved_count;
    ctx->depth--;
    armed_offer = saved_offer;
    free(leaf_of);
    if (!s) {
        int64_t r = plan->root_slot;
        if (borrowed[r]) {
            s = cxla_literal_clone(values[r], out);
        } else {
            *out = values[r];
            values[r] = NULL;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (!borrowed[i]) cxla_literal_free(values[i]);
    free(frame);
    return s;
}

cxla_status interp_eval_computation(interp_ctx *ctx, const cxla_computation *comp,
                                    const cxla_literal *const *args, int64_t arg_count,
                                    cxla_literal **out) {
    return eval_computation(ctx, comp, (cxla_literal **)args, false, NULL, arg_count, out);
}

cxla_status interp_eval_computation_some_donated(interp_ctx *ctx, const cxla_computation *comp,
                                                 cxla_literal **args, const bool *owned,
                                                 int64_t arg_count, cxla_literal **out) {
    cxla_status s = eval_computation(ctx, comp, args, false, owned, arg_count, out);
    for (int64_t p = 0; p < arg_count; p++) /* owned arguments no parameter took over */
        if (owned[p]) {
            cxla_literal_free(args[p]);
            args[p] = NULL;
        }
    return s;
}

cxla_status interp_eval_computation_donated(interp_ctx *ctx, const cxla_computation *comp,
                                            cxla_literal **args, int64_t arg_count,
                                            cxla_literal **out) {
    cxla_status s = eval_computation(ctx, comp, args, true, NULL, arg_count, out);
    for (int64_t p = 0; p < arg_count; p++) { /* arguments no parameter took over */
        cxla_literal_free(args[p]);
        args[p] = NULL;
    }
    return s;
}

/* Relayouts an array literal (or each leaf of a tuple) to the layouts in |shape|. */
static cxla_status relayout_to(const cxla_literal *lit, const cxla_shape *shape,
                               cxla_literal **out) {
    if (cxla_literal_type(lit) == CXLA_TUPLE) {
        int64_t n = cxla_literal_tuple_count(lit);
        cxla_literal **elements = calloc((size_t)(n ? n : 1), sizeof(*elements));
        if (!elements) return OOM();
        cxla_status s = NULL;
        for (int64_t i = 0; i < n && !s; i++)
            s = relayout_to(cxla_literal_tuple_element_const(lit, i),
                            shape && i < shape->tuple_count ? &shape->elements[i] : NULL,
                            &elements[i]);
        if (!s) s = cxla_literal_create_tuple(elements, n, out);
        if (s)
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        free(elements);
        return s;
    }
    if (!cxla_type_is_array(cxla_literal_type(lit))) return cxla_literal_clone(lit, out);
    if (!shape || !cxla_type_is_array(shape->type) || !shape->layout ||
        shape->layout->tile_count > 0)
        return cxla_literal_relayout(lit, NULL, out);
    cxla_layout layout = *shape->layout;
    layout.tile_count = 0; /* tiles and memory spaces do not change host order */
    layout.tiles = NULL;
    return cxla_literal_relayout(lit, &layout, out);
}

/* Whether every array leaf of |lit| is row-major (interp_default_layout would copy it
 * unchanged). */
static bool all_row_major(const cxla_literal *lit) {
    if (cxla_literal_type(lit) != CXLA_TUPLE)
        return !cxla_type_is_array(cxla_literal_type(lit)) ||
               cxla_layout_is_default(cxla_literal_shape(lit));
    for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
        if (!all_row_major(cxla_literal_tuple_element_const(lit, i))) return false;
    return true;
}

/* Whether array |lit| is in the layout relayout_to would give it for |shape| already. */
static bool in_layout(const cxla_literal *lit, const cxla_shape *shape) {
    const cxla_shape *ls = cxla_literal_shape(lit);
    if (!shape || !cxla_type_is_array(shape->type) || !shape->layout ||
        shape->layout->tile_count > 0)
        return cxla_layout_is_default(ls);
    const cxla_layout *want = shape->layout, *got = ls->layout;
    if (!got || !want->minor_to_major || !got->minor_to_major || got->tile_count > 0 ||
        ls->rank != shape->rank || got->padded_dims || want->padded_dims)
        return false;
    for (int64_t d = 0; d < ls->rank; d++)
        if (want->minor_to_major[d] != got->minor_to_major[d]) return false;
    return true;
}

/* relayout_to for a value the caller gives up: leaves already in their layout are moved,
 * not copied (a model that returns its weights returns them without a second copy).
 * |lit| is consumed in every case. */
static cxla_status relayout_owned(cxla_literal *lit, const cxla_shape *shape, cxla_literal **out) {
    cxla_type t = cxla_literal_type(lit);
    if (t == CXLA_TUPLE) {
        int64_t n = cxla_literal_tuple_count(lit);
        cxla_literal **elements = calloc((size_t)(n ? n : 1), sizeof(*elements));
        cxla_status s = elements ? NULL : OOM();
        for (int64_t i = 0; i < n && !s; i++)
            s = relayout_owned(cxla_literal_tuple_take(lit, i),
                               shape && shape->type == CXLA_TUPLE && i < shape->tuple_count
                                   ? &shape->elements[i]
                                   : NULL,
                               &elements[i]);
        if (!s) s = cxla_literal_create_tuple(elements, n, out);
        if (s && elements)
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        free(elements);
        cxla_literal_free(lit);
        return s;
    }
    if (!cxla_type_is_array(t) || in_layout(lit, shape)) {
        *out = lit;
        return NULL;
    }
    cxla_status s = relayout_to(lit, shape, out);
    cxla_literal_free(lit);
    return s;
}

cxla_status interp_default_layout(const cxla_literal *literal, cxla_literal **out) {
    return relayout_to(literal, NULL, out);
}

cxla_status interp_relayout(const cxla_literal *literal, const cxla_shape *shape,
                            cxla_literal **out) {
    return relayout_to(literal, shape, out);
}

void *interp_overrides_user(const interp_ctx *ctx) {
    return ctx->overrides ? ctx->overrides->user : NULL;
}

/* The leaves of the result that lie in the caller's memory offered for them (made there
 * through result_offer): result_written says so, and the leaf lets go of that memory
 * (exec.h: it then holds no data). */
static void mark_written(cxla_literal *lit, const exec_run_options *o, int64_t *next) {
    if (cxla_literal_type(lit) == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            mark_written(cxla_literal_tuple_element(lit, i), o, next);
        return;
    }
    int64_t k = (*next)++;
    if (lit->data && lit->data == o->result_data[k]) {
        o->result_written[k] = true;
        lit->data = NULL;
        lit->size = 0;
    }
}

cxla_status interp_run_module(const cxla_module *module, const exec_run_options *options,
                              const cxla_literal *const *args, int64_t arg_count,
                              cxla_literal **out) {
    return interp_run_module_overridden(module, options, NULL, args, arg_count, out);
}

cxla_status interp_run_module_overridden(const cxla_module *module, const exec_run_options *options,
                                         const interp_overrides *overrides,
                                         const cxla_literal *const *args, int64_t arg_count,
                                         cxla_literal **out) {
    const cxla_computation *entry = module->entry;
    if (!entry)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "the module has no entry computation");
    if (arg_count != entry->param_count)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "the entry computation '%s' takes %" PRId64 " arguments, got %" PRId64,
                          entry->name, entry->param_count, arg_count);
    /* Check shapes and bring every argument to the row-major layout. */
    cxla_literal **owned = calloc((size_t)(arg_count ? arg_count : 1), sizeof(*owned));
    const cxla_literal **use = calloc((size_t)(arg_count ? arg_count : 1), sizeof(*use));
    cxla_status s = NULL;
    if (!owned || !use) s = OOM();
    for (int64_t i = 0; i < arg_count && !s; i++) {
        const cxla_shape *want = &entry->params[i]->shape;
        const cxla_shape *got = cxla_literal_shape(args[i]);
        if (!cxla_shape_is_static(want)) { /* any size up to the bounds */
            s = interp_dynamic_bind_argument(want, args[i], i, &owned[i]);
            use[i] = owned[i];
            continue;
        }
        if (!cxla_shape_compatible(want, got)) {
            char *w = cxla_shape_to_string(want, CXLA_SHAPE_PRINT_NO_LAYOUT);
            char *g = cxla_shape_to_string(got, CXLA_SHAPE_PRINT_NO_LAYOUT);
            s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                           "argument %" PRId64 " has shape %s but parameter %" PRId64
                           " of '%s' is %s",
                           i, g ? g : "?", i, entry->name, w ? w : "?");
            free(w);
            free(g);
            break;
        }
        if (cxla_type_is_array(got->type) && !cxla_layout_is_default(got)) {
            s = cxla_literal_relayout(args[i], NULL, &owned[i]);
            use[i] = owned[i];
        } else if (got->type == CXLA_TUPLE && !all_row_major(args[i])) {
            s = relayout_to(args[i], NULL, &owned[i]);
            use[i] = owned[i];
        } else {
            use[i] = args[i];
        }
    }
    interp_ctx ctx;
    bool ctx_ready = false;
    if (!s) {
        s = interp_ctx_init(&ctx, module, options);
        ctx_ready = !s;
        if (ctx_ready) ctx.overrides = overrides;
    }
    cxla_literal *result = NULL;
    if (!s) s = interp_eval_computation(&ctx, entry, use, arg_count, &result);
    if (!s) {
        const cxla_shape *rs = module->has_entry_layout ? &module->entry_result_shape : NULL;
        if (rs && (!cxla_layout_is_default(rs) || rs->type == CXLA_TUPLE)) {
            s = relayout_owned(result, rs, out);
        } else {
            *out = result;
        }
    }
    if (!s && options && options->result_data && options->result_written) {
        int64_t next = 0;
        mark_written(*out, options, &next);
    }
    if (ctx_ready) interp_ctx_deinit(&ctx);
    for (int64_t i = 0; owned && i < arg_count; i++) cxla_literal_free(owned[i]);
    free(owned);
    free(use);
    return s;
}

interp_reducer interp_match_reducer(const cxla_computation *comp) {
    if (!comp || comp->param_count != 2 || !comp->root || comp->root->operand_count != 2)
        return INTERP_REDUCER_NONE;
    const cxla_instr *r = comp->root, *a = r->operands[0], *b = r->operands[1];
    if (!a || !b || a->opcode != CXLA_OP_PARAMETER || b->opcode != CXLA_OP_PARAMETER || a == b ||
        r->shape.type != a->shape.type || a->shape.type != b->shape.type || r->shape.rank != 0 ||
        a->shape.rank != 0 || b->shape.rank != 0)
        return INTERP_REDUCER_NONE;
    switch (r->opcode) {
    case CXLA_OP_ADD: return INTERP_REDUCER_ADD;
    case CXLA_OP_MULTIPLY: return INTERP_REDUCER_MUL;
    case CXLA_OP_MAXIMUM: return INTERP_REDUCER_MAX;
    case CXLA_OP_MINIMUM: return INTERP_REDUCER_MIN;
    case CXLA_OP_AND: return INTERP_REDUCER_AND;
    case CXLA_OP_OR: return INTERP_REDUCER_OR;
    case CXLA_OP_XOR: return INTERP_REDUCER_XOR;
    default: return INTERP_REDUCER_NONE;
    }
}
