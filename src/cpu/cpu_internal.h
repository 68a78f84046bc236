/* The cpu backend from the inside: library calls (dot and convolution: onednn.h), the
 * step sequence over one arena that runs a compiled module (cpu_steps.c builds it,
 * cpu_steps_run.c runs it), and the buffer
 * assignment it uses (cpu_plan.c, shared with ahead-of-time output). */
#ifndef CXLA_CPU_CPU_INTERNAL_H_
#define CXLA_CPU_CPU_INTERNAL_H_

#include "cpu/cpu.h"
#include "cpu/threadpool.h"
#include "interp/interp.h"

typedef struct cpu_plan cpu_plan;

/* A library call: one instruction computed by a library function with state prepared when
 * the module is compiled (oneDNN primitives, offset tables). Operands and results as a
 * kernel's (dense, row-major, static shapes; out never aliases in). |fn| must be safe to
 * call from several threads at once with the same state. Errors: RESOURCE_EXHAUSTED, or
 * INTERNAL naming the instruction when the library fails. */
typedef cxla_status (*cpu_call_fn)(void *state, void *const *out, const void *const *in);
typedef struct cpu_call {
    cpu_call_fn fn; /* NULL: no call for this instruction */
    void *state;    /* owned; released by free_state */
    void (*free_state)(void *state);
    const char *what; /* for `cxla compile` and tests: "onednn matmul", "loops", ... */
} cpu_call;

/* Releases the state of |call| and clears it. */
void cpu_call_release(cpu_call *call);

/* How the instruction named |instr_name| of a module compiled by cpu_backend (|compiled|:
 * what its compile returned) runs: its library call's |what|, "kernel" for a generated
 * kernel, "step" for control flow the step sequence runs itself (while, conditional,
 * call), "in place" for a dynamic-update-slice that writes into its operand's buffer,
 * "kernel in place" for a generated kernel whose results took over its operands' buffers
 * (a scatter: cpu_kernel_info.in_place), "pieces in place" for a concatenate (or a fusion
 * of one) whose operands were computed in their places in its result (no step),
 * "alias" for what only names buffers (tuple, get-tuple-element, the -done forms), a
 * service step's word (cpu_plan_what), "interpreter handler" for one whose step calls the
 * interpreter's handler of that instruction (cpu_steps.c), NULL for parameters,
 * constants, or a name not found. */
const char *cpu_compiled_call_what(const void *compiled, const char *instr_name);
/* The step sequence of a compiled module (NULL when it runs on the driver's fallback:
 * unbounded dynamic shapes), for tests and `cxla compile`; and the one its runs with donated
 * arguments use (NULL when the module has no input_output_alias or no plan). */
const cpu_plan *cpu_compiled_plan(const void *compiled);
const cpu_plan *cpu_compiled_donated_plan(const void *compiled);

/* The executable's step sequence (cpu_steps.c): the entry computation of |m| and every
 * computation it runs in sequence (while, conditional, call, recursively) as steps over
 * one arena: kernels in |kernels| (indexed by instruction id, |id_count| entries, with
 * |infos| beside them), library calls in |calls| (likewise; may be NULL), copies,
 * in-place dynamic-update-slices, control flow, and the interpreter's handler for each
 * remaining instruction (and for every instruction that meets a bounded dynamic shape:
 * buffers at the bounds, sizes carried per run). *out stays NULL (and no error) when the
 * module has unbounded dynamic dimensions (they run on the interpreter's driver). The plan points
 * into |m| and |calls|, which must outlive it, and runs its kernels on |pool| (borrowed; NULL: the
 * calling thread). With |donating|, the plan is the one for runs whose arguments are donated
 * (cxla_run_options.donated): the argument leaves that the module's input_output_alias
 * names (cpu_io_aliases) may be overwritten, and each aliased result leaf is computed in
 * its argument's buffer where liveness allows (in-place updates of it, or a result first
 * written after the argument's last read); *out stays NULL when the module has no aliases.
 * Errors: RESOURCE_EXHAUSTED, INVALID_ARGUMENT for malformed control flow or aliases. */
/* Where the instructions of an optimized module came from (cpu_origin.c): the passes copy
 * instructions under new names (fusion's "m.14" for the user's m, inlining's copies of a
 * callee's), and the messages of a run (--check-finite, out of memory, cancellation) name
 * the user's instruction instead: the one of |user| written at the copy's line and column,
 * of the same opcode. By instruction id of |m|; owns copies of the names, so |user| need
 * not outlive it. *out stays NULL when |user| has no positions (built in memory: names
 * stay the optimized module's). Errors: RESOURCE_EXHAUSTED. */
typedef struct cpu_origins cpu_origins;
cxla_status cpu_origins_build(const cxla_module *user, const cxla_module *m, cpu_origins **out);
void cpu_origins_free(cpu_origins *o);
/* The user's name of |in| (its own when it has no origin or |o| is NULL). */
const char *cpu_origins_name(const cpu_origins *o, const cxla_instr *in);
/* "NAME (OPCODE, computation C, line L)" of |in| as the user wrote it (the interpreter's
 * form); inside |fusion| (not NULL) ", fused into F" and the metadata's op_name are added
 * before the parenthesis closes. A fusion the passes made (|fusion| NULL; a fusion the
 * user wrote is named as written) is described by its fused root, "ROOT (..., fused into F with A,
 * B, ... and N more)", so that a user can find every instruction it holds. malloc'd (free()); NULL
 * when memory is short. */
char *cpu_origins_describe(const cpu_origins *o, const cxla_instr *in, const cxla_instr *fusion);
/* Makes |plan|'s messages name instructions by |o| (borrowed: it must outlive the plan's
 * runs; NULL: the optimized module's names). */
void cpu_plan_set_origins(cpu_plan *plan, const cpu_origins *o);

/* The plan's rng keys by instruction id (cpu_svc_rng_keys; the caller may rewrite them). */
uint64_t *cpu_plan_rng_keys(cpu_plan *plan);
cxla_status cpu_plan_build(const cxla_module *m, cpu_kernel_fn const *kernels,
                           const cpu_kernel_info *infos, const cpu_call *calls, int64_t id_count,
                           cpu_pool *pool, bool donating, cpu_plan **out);
/* Writes the symbol of |in|'s kernel into |buf| (|size| bytes): the name the kernel's own
 * entry point has in the library (cpu_backend.c). */
typedef void (*cpu_kernel_namer)(const cxla_instr *in, char *buf, size_t size);
/* The fused while loops (cpu_loop.h) of |plans| (n of them, NULL ones skipped) as one C
 * translation unit appended to |out|: function cxla_loop_I_K for program K of plans[I],
 * with the kernels they call emitted again in the unit (once each), so that the C compiler
 * inlines the small ones. The plans may have been built over placeholder kernels: the unit
 * depends on their layout, not on the kernels' addresses, so it is compiled in the same
 * library as the kernels, at the same time (cpu_backend.c). *out_any: whether anything
 * was written (nothing for plans without fused loops, or with CXLA_LOOP_NO_CC set).
 * With |out_exported| (by instruction id, the plans' id_count entries, zeroed by the
 * caller), a kernel that only generated loops call also gets its entry point in the unit,
 * named by |name_of|, and out_exported[id] is set: the caller leaves that kernel out of its
 * own units, so that it is compiled once. Errors: RESOURCE_EXHAUSTED, those of
 * cpu_emit_kernel. */
cxla_status cpu_plan_emit_loops(cpu_plan *const *plans, int64_t n, const char *what,
                                cpu_kernel_namer name_of, cxla_strbuf *out, bool *out_any,
                                bool *out_exported);
/* The kernels that rewrite a loop's state where it lies (step.alias; cpu_emit_kernel_alias)
 * of |plans| (|n|, NULL ones skipped) as one more translation unit into |out| (*out_any:
 * whether any), for cpu_plan_bind to find in the library. Errors: RESOURCE_EXHAUSTED,
 * those of cpu_emit_kernel_alias. */
cxla_status cpu_plan_emit_aliased(cpu_plan *const *plans, int64_t n, const char *what,
                                  cxla_strbuf *out, bool *out_any);
/* Points the kernel steps of plan |p| (number |index| of those given to
 * cpu_plan_emit_loops) at kernels[instruction id] (the steps that write over an operand at
 * cpu_plan_emit_aliased's kernels in |lib|), and, |with_loops|, its fused loops at
 * their functions in |lib| (which must outlive the plan's runs). Nothing to do for a NULL
 * plan. Errors: RESOURCE_EXHAUSTED, INTERNAL for a function missing from |lib| (its loops
 * then run as before, as ops). */
struct cpu_library;
cxla_status cpu_plan_bind(cpu_plan *p, int64_t index, const cpu_kernel_fn *kernels,
                          struct cpu_library *lib, bool with_loops, const char *what);
/* Whether |plan| (built |donating|) may run on |args| with |options|: every aliased
 * argument leaf is donated (options->donated) and lies row-major where the caller put it
 * (so that it is the caller's memory the plan writes). */
bool cpu_plan_can_donate(const cpu_plan *plan, const exec_run_options *options,
                         const cxla_literal *const *args, int64_t arg_count);
/* Runs the plan (cpu_steps_run.c) on |args| (as interp_run_module takes them) into a new literal in
 * the entry's result layout, checking |options|' cancellation between steps and at every while-loop
 * back-edge. Safe from several threads at once. A donating plan writes the donated arguments and
 * sets options->in_place_arg[k] for each result leaf k it left in an argument's buffer (the
 * result literal's leaf k then holds nothing of use). */
cxla_status cpu_plan_run(cpu_plan *plan, const exec_run_options *options,
                         const cxla_literal *const *args, int64_t arg_count,
                         cxla_literal **out_result);
void cpu_plan_destroy(cpu_plan *plan);

/* What a plan is made of, for tests (the in-place updates must not copy) and reports. */
typedef struct cpu_plan_stats {
    size_t arena_size;     /* bytes of the arena one run takes */
    int64_t copy_steps;    /* steps that copy buffers (while state, branch results) */
    size_t copy_bytes;     /* what those steps copy each time they run, together */
    int64_t in_place;      /* values that took over their operand's or state's buffer */
    int64_t handler_steps; /* steps that call the interpreter's handler of an instruction */
    int64_t error_steps;   /* of those, the ones whose handler only reports an error (it fails
                              on operands of zeros: cpu_steps.c, handler_fails) */
    int64_t service_steps; /* collectives, custom calls, host transfers, rng (cpu_service.h) */
    int64_t donated;       /* a plan for donated arguments: result leaves computed in them */
    int64_t bounds_steps;  /* kernels run at the bounds of dynamic shapes (cpu_bounds_kind) */
    int64_t move_steps;    /* moves of elements by dynamic sizes (cpu_dynamic.c, S_MOVE) */
    int64_t fused_loops;   /* while loops run as one step of a fused program (cpu_loop.h),
                              nested ones included */
    int64_t loops_as_c;    /* of those programs (outermost loops), the ones that run as one
                              generated C function (cpu_plan_bind) */
    /* Of those functions' buffers, the ones at a fixed offset of the arena (not read from
     * the table of pointers: cpu_loop.c's slot_where), and the constants written into
     * their code. */
    int64_t loop_arena_slots, loop_const_slots;
    /* While-loop state leaves that the body's kernel rewrites where they lie, reading them
     * at the index it writes (cpu_emit_kernel_alias: no copy of the new state a step). */
    int64_t loop_aliased;
    /* New state leaves of fused loops that swap buffers with the state instead of being
     * copied into it (double buffering; a loop generated as C copies them). */
    int64_t loop_swapped;
} cpu_plan_stats;
void cpu_plan_get_stats(const cpu_plan *plan, cpu_plan_stats *out);
/* "step", "in place", "kernel in place", "pieces in place", "alias", "interpreter handler", a
 * service step's word
 * ("collective", "custom call", "host transfer", "rng") or NULL for |instr| (see
 * cpu_compiled_call_what). */
const char *cpu_plan_what(const cpu_plan *plan, const cxla_instr *instr);

/* Bounded dynamic shapes (cpu_steps.c): how a kernel of |in|, generated for its shapes at
 * their bounds, runs on values below them: 0 when it does not (its shapes are static, or
 * the interpreter's handler runs it), 1 when the kernel at the bounds gives the value
 * below the result's sizes (exec_dynamic_positionwise), 2 for a reduce whose input's
 * padding is filled with the init value first (when that is the reducer's identity at run
 * time; float sums and products only with |fast_math|). The backend generates kernels at
 * the bounds for the instructions with a nonzero kind. */
int cpu_bounds_kind(const cxla_instr *in, bool fast_math);
/* Whether the init value at |init| is the identity of reduce |in|'s reducer. */
bool cpu_bounds_identity(const cxla_instr *in, const void *init);
/* Whether reduce |in| over bounded dynamic shapes runs as a kernel at the bounds whose
 * reduced loops read the run-time sizes (cpu_dynwin.c; the kernel from
 * cpu_emit_sized_reduce): several inputs, or a reducer the interpreter does not recognize
 * (those it recognizes are cpu_dyn_reduce steps or kernels of cpu_bounds_kind). */
bool cpu_dyn_sized_ok(const cxla_instr *in);

/* Buffer assignment over a schedule of |step_count| steps (cpu_plan.c; the arena plan and
 * the ahead-of-time output (aot.c) both use it). Buffer b lives from step |first| to step
 * |last| (0 <= first <= last < step_count). At each step, in index order, the buffers that
 * start there take the first free range that fits (64-byte aligned), then those that end
 * there give theirs back: buffers live at the same step never overlap, and a step's results
 * never share memory with the operands it reads last. Sets each |offset| and *out_size (the
 * arena's size). Errors: INTERNAL for bad steps, RESOURCE_EXHAUSTED. */
typedef struct cpu_arena_buffer {
    size_t size;
    int64_t first, last;
    size_t offset; /* out */
} cpu_arena_buffer;
cxla_status cpu_arena_assign(cpu_arena_buffer *buffers, int64_t count, int64_t step_count,
                             size_t *out_size);

/* Whether |in| only lays its operands one after the other (cpu_steps.c): a concatenate along a
 * dimension whose outer dimensions are all 1, in row-major layouts, or a fusion of one whose
 * operands are its parameters (or reshapes of them), each used once. Operand k is then bytes
 * [offs[k], offs[k] + its size) of the result (|offs| holds operand_count entries). The step
 * sequence and the ahead-of-time output (aot.c) both compute such operands in place. */
bool cpu_concat_pieces(const cxla_instr *in, size_t *offs);

/* One pair of the module header's input_output_alias (XLA's donation): result leaf
 * |output| (its position among the entry result's leaves, depth-first) may live in the
 * buffer of argument leaf |arg| (among all the entry parameters' leaves, depth-first),
 * which belongs to parameter |param|; |must| for must-alias. */
typedef struct cpu_io_alias {
    int64_t output, param, arg;
    bool must;
} cpu_io_alias;
/* Decodes |m|'s input_output_alias={ {out}: (param, {index}[, may-alias|must-alias]), ... }
 * into a new array (*out, malloc'd; NULL and 0 when there is none). Errors:
 * INVALID_ARGUMENT naming the module and the attribute, for text that does not read, an
 * index that names no array leaf, a parameter that does not exist, leaves of different
 * shapes (type, dimensions or bounds), and a parameter leaf or a result leaf named twice. */
cxla_status cpu_io_aliases(const cxla_module *m, cpu_io_alias **out, int64_t *out_count);

#endif /* CXLA_CPU_CPU_INTERNAL_H_ */
