/* The reference interpreter: runs an HLO module operation by operation with the exact
 * semantics of the seeds. It is the oracle every backend is checked against.
 *
 * Values are literals in the default (row-major) layout: layouts of instructions inside
 * the module do not change results (bitcast, the one exception, reads them itself);
 * entry arguments are relaid from the entry layout and the result is relaid to it.
 *
 * One handler per opcode, in per-family tables (interp_handler looks them up). Each family of
 * operations lives in its own file (interp_elementwise.c, interp_shape.c, ...).
 */
#ifndef CXLA_INTERP_INTERP_H_
#define CXLA_INTERP_INTERP_H_

#include "hlo/hlo.h"
#include "exec/exec.h"
#include "literal/literal_internal.h"

typedef struct interp_ctx interp_ctx;
typedef struct interp_overrides interp_overrides;

/* The interpreter as a backend (interp_backend.c): its compiled form is the module. */
extern const exec_backend interp_backend;

/* A handler computes |instr| from its operands' values (borrowed) into a new literal. */
typedef cxla_status (*interp_op_fn)(interp_ctx *ctx, const cxla_instr *instr,
                                    const cxla_literal *const *operands, cxla_literal **out);

/* Each family of operations has its own handler table, indexed by opcode (NULL for the
 * opcodes it does not handle); interp_handler() looks an opcode up in all of them. An
 * opcode no family handles is reported as unsupported (docs/semantics.md says why). */
extern const interp_op_fn interp_control_ops[CXLA_OP_COUNT];     /* interp_control.c */
extern const interp_op_fn interp_elementwise_ops[CXLA_OP_COUNT]; /* interp_elementwise*.c */
extern const interp_op_fn interp_shape_ops[CXLA_OP_COUNT];       /* interp_shape.c */
extern const interp_op_fn interp_reduce_ops[CXLA_OP_COUNT];      /* interp_reduce.c, ... */
extern const interp_op_fn interp_linalg_ops[CXLA_OP_COUNT];      /* interp_linalg.c */
/* Compute values of input and sums a convolution tile holds at most (interp_linalg.c;
 * tests make it small to cut small convolutions into many tiles). */
extern int64_t interp_conv_tile_elements;
extern const interp_op_fn interp_linalg2_ops[CXLA_OP_COUNT];     /* interp_linalg2.c */
extern const interp_op_fn interp_collective_ops[CXLA_OP_COUNT];  /* interp_collective.c */
extern const interp_op_fn interp_async_ops[CXLA_OP_COUNT];       /* interp_async.c */
extern const interp_op_fn interp_fft_ops[CXLA_OP_COUNT];         /* interp_fft.c */
extern const interp_op_fn interp_ragged_ops[CXLA_OP_COUNT];      /* interp_ragged.c */
extern const interp_op_fn interp_scan_ops[CXLA_OP_COUNT];        /* interp_scan.c */
extern const interp_op_fn interp_rng_ops[CXLA_OP_COUNT];         /* interp_rng.c */
extern const interp_op_fn interp_custom_call_ops[CXLA_OP_COUNT]; /* interp_custom_call.c */
extern const interp_op_fn interp_host_ops[CXLA_OP_COUNT];        /* interp_host.c */
interp_op_fn interp_handler(cxla_opcode op);
/* How many family tables handle |op| (a test checks that it is at most one). */
int interp_handler_count(cxla_opcode op);

struct interp_ctx {
    const cxla_module *module;
    exec_run_options options;
    uint64_t rng_state[2]; /* 128-bit rng state, low word first (interp_rng.c) */
    /* The rng instructions of the module in XLA's expansion order and their keys,
     * collected on first use (interp_rng.c). */
    const cxla_instr **rng_ops;
    uint64_t *rng_keys;
    int64_t rng_op_count;
    bool rng_ops_ready;
    int depth;         /* nesting of called computations, to stop runaway recursion */
    cxla_strmap plans; /* computation name -> evaluation plan (cached) */
    struct {
        const cxla_computation *comp;
        struct interp_plan *plan;
    } plan_cache[16];  /* the plans looked up last, by address (see get_plan) */
    cxla_arena *arena; /* plans and other per-run data */
    /* Plans that hold evaluated constants (malloc'd literals, freed by interp_ctx_deinit),
     * linked through the plans. */
    struct interp_plan *plans_with_constants;
    bool reported_non_finite;
    int64_t poll_countdown; /* instructions until the next exec_cancel_poll */
    /* Executions of each collective so far, by instruction id (the sequence of
     * exec_exchange); malloc'd, grown on demand. */
    int64_t *collective_counts;
    int64_t collective_counts_size;
    /* Operands the current instruction may take over instead of copying (see
     * interp_take_operand); set by the driver around each handler call. */
    cxla_literal **take_values;    /* the frame's values */
    const int64_t *take_slots;     /* slot of each operand */
    const int64_t *take_remaining; /* remaining uses per slot */
    const bool *take_borrowed;     /* slot borrowed from the caller */
    bool take_exclusive_gte;       /* this get-tuple-element may take its element */
    int64_t take_operand_count;
    const interp_overrides *overrides; /* NULL: the interpreter's handlers only */
};

cxla_status interp_ctx_init(interp_ctx *ctx, const cxla_module *module,
                            const exec_run_options *options);
void interp_ctx_deinit(interp_ctx *ctx);

/* Evaluates |comp| on |args| (borrowed, one per parameter) into a new literal. */
cxla_status interp_eval_computation(interp_ctx *ctx, const cxla_computation *comp,
                                    const cxla_literal *const *args, int64_t arg_count,
                                    cxla_literal **out);
/* Runs the entry computation of the module: arguments in the entry layout, the result
 * in the entry result layout. */
cxla_status interp_run_module(const cxla_module *module, const exec_run_options *options,
                              const cxla_literal *const *args, int64_t arg_count,
                              cxla_literal **out);

/* Another backend may run a module on this driver with some instructions computed its
 * own way (src/cpu: compiled kernels for fusions and elementwise operations). |lookup|
 * is asked once per instruction when a computation's plan is built and returns a
 * handler to use instead of the interpreter's, or NULL to keep it; such a handler finds
 * |user| through interp_overrides_user. Constants and parameters are never overridden. */
struct interp_overrides {
    void *user;
    interp_op_fn (*lookup)(void *user, const cxla_instr *instr);
    /* Optional (NULL: the module's names): the name the driver's messages give |instr|
     * (an error that starts with its name, cancellation, --check-finite, out of memory),
     * so that a backend running an optimized module names the instructions the user wrote
     * (the cpu backend: cpu_origins_name). Borrowed; NULL for the module's own. */
    const char *(*name)(void *user, const cxla_instr *instr);
};
/* interp_run_module with |overrides| (NULL: none). */
cxla_status interp_run_module_overridden(const cxla_module *module, const exec_run_options *options,
                                         const interp_overrides *overrides,
                                         const cxla_literal *const *args, int64_t arg_count,
                                         cxla_literal **out);
void *interp_overrides_user(const interp_ctx *ctx);
/* An error |s| that starts with |in|'s name (interp_error's form) as one that starts with
 * |name| instead (a user's name for an optimized module's copy); |s| itself when it does
 * not start so, or |name| is NULL or the same. Takes |s|. */
cxla_status interp_rename_error(cxla_status s, const cxla_instr *in, const char *name);

/* Moves instead of copies. A handler may take over operand |k| when this instruction is
 * its last use and the frame owns it: the literal is returned (the caller now owns it)
 * and the frame forgets it. NULL when it cannot be taken: then copy. */
cxla_literal *interp_take_operand(interp_ctx *ctx, int64_t k);
/* interp_take_operand also when other operands of this instruction are the same value
 * (multiply(x, x)): for a handler that reads them all through its operand pointers while
 * it writes the result into the taken literal, element by element. */
cxla_literal *interp_take_operand_shared(interp_ctx *ctx, int64_t k);
/* Undoes interp_take_operand(ctx, k) or interp_take_operand_shared, which returned |lit|,
 * before the handler returns (a handler that looked and cannot use it). */
void interp_give_back_operand(interp_ctx *ctx, int64_t k, cxla_literal *lit);
/* For get-tuple-element: takes element |index| out of operand 0 when the frame owns the
 * tuple and no other user reads that element; NULL otherwise. */
cxla_literal *interp_take_tuple_element(interp_ctx *ctx, int64_t index);
/* Evaluates |comp| taking ownership of |args| (each set to NULL), so that its
 * instructions can update them in place (while loop bodies). */
cxla_status interp_eval_computation_donated(interp_ctx *ctx, const cxla_computation *comp,
                                            cxla_literal **args, int64_t arg_count,
                                            cxla_literal **out);
/* Evaluates |comp| on |args|, taking ownership of those with owned[p] true (each set to
 * NULL, taken by its parameter or freed) and borrowing the others (calls that are the
 * last users of some of their operands). */
cxla_status interp_eval_computation_some_donated(interp_ctx *ctx, const cxla_computation *comp,
                                                 cxla_literal **args, const bool *owned,
                                                 int64_t arg_count, cxla_literal **out);
/* |instr| (a call, fusion, async body, or a custom call that carries its decomposition)
 * as a call of |callee| on |operands|: the operands whose last use it is are handed over
 * (interp_take_operand); a fusion with more operands than |callee| has parameters passes
 * the first ones. Errors from inside are annotated "in NAME". */
cxla_status interp_call(interp_ctx *ctx, const cxla_instr *instr, const cxla_computation *callee,
                        const cxla_literal *const *operands, cxla_literal **out);

/* Mixed floating-point precision (f32 + bf16, a bf16 scalar broadcast or padded into f32,
 * as the verifier allows): the float type that the driver converts |in|'s float operands of
 * another precision to before its handler runs (the result's type, or for a compare the
 * widest float operand's), or CXLA_TYPE_INVALID when nothing is converted. The cpu
 * emitter converts the same operands the same way. */
cxla_type interp_mixed_precision_target(const cxla_instr *in);

/* Helpers for handlers. */
/* A new zero-filled literal with |shape|'s type and dims in the default layout. */
cxla_status interp_new_array(const cxla_shape *shape, cxla_literal **out);
/* A copy of |literal| (an array, or a tuple of them at any depth) in the default layout. */
cxla_status interp_default_layout(const cxla_literal *literal, cxla_literal **out);
/* A copy of |literal| with the layouts of |shape| (the entry's result layout: tiles and
 * memory spaces do not change host order; NULL: the default layout). */
cxla_status interp_relayout(const cxla_literal *literal, const cxla_shape *shape,
                            cxla_literal **out);
/* interp_new_array with the element type replaced. */
cxla_status interp_new_array_of(const cxla_shape *shape, cxla_type type, cxla_literal **out);
/* An error for |instr| that names it and its opcode: "add.3 (add): <message>". */
cxla_status interp_error(const cxla_instr *instr, cxla_status_code code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Reducers recognized so that reductions over big arrays need not call a computation per
 * element: a computation (x, y) -> op(x, y) on scalars of one type. */
typedef enum interp_reducer {
    INTERP_REDUCER_NONE = 0,
    INTERP_REDUCER_ADD,
    INTERP_REDUCER_MUL,
    INTERP_REDUCER_MAX,
    INTERP_REDUCER_MIN,
    INTERP_REDUCER_AND,
    INTERP_REDUCER_OR,
    INTERP_REDUCER_XOR,
} interp_reducer;
interp_reducer interp_match_reducer(const cxla_computation *comp);

/* ---- dynamic shapes (interp_dynamic.c) ------------------------------------------- */

/* A value of a shape with bounded dynamic dimensions is a literal of the bounds holding
 * its current sizes (cxla_literal_dynamic_size); one with unbounded ('?') dimensions
 * holds its actual dimensions. Handlers see static values: the driver sends every
 * instruction that meets a value below its bounds, or that declares an unbounded result,
 * through interp_dynamic_eval, which runs |fn| on the values cut to their sizes and
 * gives the result its sizes (docs/semantics.md, "Dynamic shapes"). */
cxla_status interp_dynamic_eval(interp_ctx *ctx, const cxla_instr *instr,
                                const cxla_literal *const *operands, interp_op_fn fn,
                                cxla_literal **out);
/* The driver's cheap test (no per-element work): false guarantees that |instr| needs no
 * dynamic handling; true sends it to interp_dynamic_eval, which decides. (The driver
 * makes the same test inline, with the result's part taken from its plan: keep the two
 * alike.) */
static inline bool interp_dynamic_maybe(const cxla_instr *instr,
                                        const cxla_literal *const *operands) {
    if (instr->shape.dynamic || instr->shape.type == CXLA_TUPLE) return true;
    for (int64_t k = 0; k < instr->operand_count; k++)
        if (operands[k]->dyn_sizes || operands[k]->tuple_count > 0) return true;
    return false;
}
/* Binds entry argument |arg| to parameter shape |want|, which has dynamic dimensions: a
 * bounded dimension takes any size up to its bound, an unbounded one any size. |*out| is
 * a new value in the interpreter's form. */
cxla_status interp_dynamic_bind_argument(const cxla_shape *want, const cxla_literal *arg,
                                         int64_t index, cxla_literal **out);
/* set-dimension-size (registered in the shape family's table). */
cxla_status interp_op_set_dimension_size(interp_ctx *ctx, const cxla_instr *instr,
                                         const cxla_literal *const *operands, cxla_literal **out);

/* ---- shared helpers for handlers (interp_util.c) ----------------------------------- */

/* Row-major strides (in elements) of |rank| dims. */
void interp_row_major_strides(int64_t rank, const int64_t *dims, int64_t *strides);
/* Widens |count| elements of a small float type (f16, bf16, f8, f4) to f32, and rounds
 * f32 back to nearest even, in bulk. */
void interp_small_to_f32(cxla_type type, const void *src, float *dst, int64_t count);
void interp_f32_to_small(cxla_type type, const float *src, void *dst, int64_t count);
/* Evaluates a scalar computation (a reducer, comparator, map function) on scalar
 * literals; |out| is a new literal. Slow path: prefer interp_match_reducer. */
cxla_status interp_call_scalar(interp_ctx *ctx, const cxla_computation *comp,
                               const cxla_literal *const *args, int64_t arg_count,
                               cxla_literal **out);

/* ---- values of the collectives and async wrappers (interp_async.c) ------------------ */

/* Zeros of |shape| (tuples element by element, tokens as tokens). */
cxla_status interp_zeros(const cxla_shape *shape, cxla_literal **out);
/* Operand |k|, taken over when |may_take| and this is its last use, else copied. */
cxla_status interp_operand_value(interp_ctx *ctx, const cxla_literal *const *operands, int64_t k,
                                 bool may_take, cxla_literal **out);
/* The operands as |shape| holds them: a tuple of all of them when it is a tuple, else
 * operand 0 alone. */
cxla_status interp_pack_operands(interp_ctx *ctx, const cxla_instr *instr,
                                 const cxla_literal *const *operands, const cxla_shape *shape,
                                 bool may_take, cxla_literal **out);
/* Element |index| of the tuple operand 0 (the -done forms). */
cxla_status interp_tuple_element_of(interp_ctx *ctx, const cxla_instr *instr,
                                    const cxla_literal *const *operands, int64_t index,
                                    cxla_literal **out);
/* A tuple of |n| values (owned; freed on failure). */
cxla_status interp_make_tuple(cxla_literal **elements, int64_t n, cxla_literal **out);
/* Handlers: operand 0 itself; element {0} or {1} of the tuple operand 0. */
cxla_status interp_op_pass(interp_ctx *ctx, const cxla_instr *instr,
                           const cxla_literal *const *operands, cxla_literal **out);
cxla_status interp_op_element0(interp_ctx *ctx, const cxla_instr *instr,
                               const cxla_literal *const *operands, cxla_literal **out);
cxla_status interp_op_element1(interp_ctx *ctx, const cxla_instr *instr,
                               const cxla_literal *const *operands, cxla_literal **out);
#endif /* CXLA_INTERP_INTERP_H_ */
