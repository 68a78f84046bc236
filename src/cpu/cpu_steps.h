/* The step sequence's data (cpu_steps.c builds it, cpu_steps_run.c runs it, cpu_loop.c
 * fuses its while loops): values and their buffer classes, steps, sequences and the plan.
 * Private to those files; the rest of the backend sees cpu_plan through cpu_internal.h. */
#ifndef CXLA_CPU_CPU_STEPS_H_
#define CXLA_CPU_CPU_STEPS_H_

#include <stdatomic.h>

#include "cpu/cpu_internal.h"
#include "cpu/cpu_service.h"

#define CPU_STEPS_OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

enum { ALIGN = 64, MAX_DEPTH = 64, POLL_EVERY = 256 };
#define NEVER_READ  INT64_MIN
#define READ_AT_END INT64_MAX
/* cpu_plan.arg_copy: a donated dynamic argument used where it lies. */
#define CPU_ARG_IN_PLACE (-2)

typedef enum vkind { V_ARENA, V_ARG, V_CONST, V_TOKEN } vkind;

typedef struct value {
    int64_t parent; /* union-find: the class's representative */
    int64_t members;
    vkind kind;
    size_t size;
    const cxla_shape *shape;
    int64_t arg;      /* V_ARG: index into the run's flat list of argument leaves */
    const void *data; /* V_CONST */
    /* Who may overwrite it once dead: the sequence that produced it (-1: nobody). */
    int64_t owner;
    /* Where it comes from in its sequence: instruction position and leaf (for liveness
     * within the sequence); -1 when it is not an instruction's own value. */
    int64_t def_seq, def_pos, def_leaf;
    bool from_step; /* a step of def_seq computed it (not a parameter) */
    /* V_ARG of a plan for donated arguments: a leaf the module's input_output_alias pairs
     * with result leaf |alias_of| (else -1), which the entry may overwrite. */
    bool writable;
    int64_t alias_of;
    /* A piece of another buffer: the operand of a concatenate that writes nothing (its
     * pieces are computed in place, cpu_steps.c): the class lives |sub_off| bytes into
     * the buffer of value |sub_of| (a class representative once the plan is built); -1:
     * a buffer of its own. */
    int64_t sub_of;
    size_t sub_off;
    /* Final, on representatives: */
    int64_t result; /* >= 0: written straight into the result leaf |result| */
    size_t offset;  /* V_ARENA */
} value;

typedef enum step_kind {
    S_KERNEL,
    S_CALL,
    S_HANDLER,
    S_SVC,
    S_COPY,
    S_DUS,
    S_WHILE,
    S_COND,
    S_SEQ,
    S_SIZE, /* get-dimension-size / set-dimension-size: the class's run-time sizes */
    S_MOVE, /* a move of elements by the run-time sizes (cpu_dynamic.c) */
} step_kind;

/* How a kernel step meets bounded dynamic shapes (cpu_steps.c): not at all (static
 * shapes), run at the bounds with the result's sizes from exec_dynamic_sizes, a reduce
 * whose input's padding is first filled with its init value in a scratch copy, or a dot
 * whose operands' padding is first zeroed in scratch copies (cpu_bounds_kind's values);
 * or (B_SIZED, cpu_dyn_sized_ok) a reduce whose kernel reads its inputs' sizes from one
 * more input. */
typedef enum bounds_kind {
    B_STATIC = 0,
    B_POSITIONWISE,
    B_REDUCE,
    B_DOT,
    B_SORT,     /* a sort whose kernel takes the sizes (cpu_emit_sort_sized; cpu_dynamic_lib.c) */
    B_INDEXED,  /* a gather or scatter whose indices are first clamped or skipped by the sizes
                 * in a scratch copy (cpu_dynamic_lib.c) */
    B_SIZED,    /* a reduce reading its inputs' sizes from one more input (cpu_dynwin.c) */
    B_INFERRED, /* bitcast, bitcast-convert: the result's sizes by shape inference over the
                 * cut operands (bitcast only where no operand is padded; cpu_dynamic_lib.c) */
    B_WINDOW,   /* a reduce-window whose inputs' padding is first filled with their init
                 * values in scratch copies (cpu_dynwin.c, cpu_dynwin_fill_ok) */
} bounds_kind;

typedef struct seq seq;
typedef struct cpu_loop cpu_loop; /* cpu_loop.h */

typedef struct step {
    step_kind kind;
    const cxla_instr *instr;
    const cxla_computation *comp; /* the computation it belongs to (messages) */
    cpu_kernel_fn fn;
    cpu_kernel_info info;
    const cpu_call *call;
    cpu_svc_fn svc;
    int64_t in_count, out_count;
    int64_t *in, *out; /* value ids (classes once built); S_COPY: in[i] -> out[i] */
    seq *sub;          /* S_WHILE: cond, body; S_COND: branches; S_SEQ: the callee */
    int64_t sub_count;
    int64_t pred; /* S_WHILE: the condition's result */
    size_t elem;  /* S_DUS: element size; S_KERNEL at the bounds: of operand 0 */
    bounds_kind bounds;
    int64_t mask; /* B_REDUCE: out[mask] is the scratch copy of operand 0; B_DOT, B_WINDOW:
                   * out[mask + k] of operand k (each input); B_INDEXED: of the indices */
    /* S_KERNEL of static shapes small enough to call on the running thread at once
     * (cpu_loop_kernel_direct): no thread-pool bookkeeping per call. */
    bool direct;
    /* S_KERNEL: out[0] lies in the buffer of in[alias] (a while loop's state rewritten in
     * place, cpu_steps_control.c): the step runs cpu_emit_kernel_alias's kernel for that
     * operand, bound by cpu_plan_bind. -1: none (the kernel of cpu_emit_kernel_info). */
    int64_t alias;
    /* S_COPY at the end of a while body: each pair is a new state leaf (a buffer of the
     * body's own, live through the whole loop) and the state's buffer, which a fused loop
     * swaps instead of copying (double buffering, cpu_loop.c); the copy is as right. */
    bool swap;
    /* S_WHILE: the loop fused into one program (cpu_loop.h; owned), NULL when it runs
     * step by step. */
    cpu_loop *fused;
} step;

struct seq {
    step *steps;
    int64_t count, cap;
};

struct cpu_plan {
    const cxla_module *module;
    cpu_pool *pool;
    value *values;
    int64_t value_count;
    seq entry;
    int64_t *root; /* the entry root's leaves (classes) */
    int64_t root_count;
    int64_t arg_leaf_count;
    int64_t *arg_base; /* by parameter: its first flat leaf */
    /* By parameter: an arena buffer (a value) that a dynamic array argument is bound into
     * at its bounds for each run (cpu_steps_run.c), -1 for the others (read where they
     * lie, or bound into a new literal: tuples), CPU_ARG_IN_PLACE for a dynamic array
     * argument of a plan for donated arguments that the module aliases: it is used in the
     * caller's memory, which holds it at its bounds (its padding zeroed there first), so a
     * result may be computed in it. NULL when every parameter is static. */
    int64_t *arg_copy;
    /* Bounded dynamic shapes: by value (read on class representatives), where the class's
     * current sizes lie in a run's array of sizes (-1: the class is static); dyn_total
     * entries in all. NULL when every shape is static. */
    int64_t *dyn_off;
    int64_t dyn_total;
    /* A plan for donated arguments (cpu_plan_build's |donating|): the module's aliases. */
    bool donating;
    cpu_io_alias *aliases;
    int64_t alias_count;
    size_t arena_size;
    _Atomic(void *) spare;
    int64_t max_operands;
    bool has_handlers;
    cxla_literal **constants; /* relaid constants (owned) */
    int64_t constant_count, constant_cap;
    uint8_t *what;      /* by instruction id: W_* of cpu_steps.c */
    uint64_t *rng_keys; /* by instruction id (cpu_svc_rng_keys) */
    int64_t id_count;
    cpu_plan_stats stats;
    const cpu_origins *origins; /* borrowed: the user's names (cpu_plan_set_origins) */
};

/* Union-find over the values: the representative of |x|'s class, and the class of |a|
 * merged into that of |b| (both arena buffers of one size). */
static inline int64_t cpu_value_find(value *v, int64_t x) {
    while (v[x].parent != x) {
        v[x].parent = v[v[x].parent].parent;
        x = v[x].parent;
    }
    return x;
}

static inline void cpu_value_merge(value *v, int64_t a, int64_t b) {
    a = cpu_value_find(v, a);
    b = cpu_value_find(v, b);
    if (a == b) return;
    v[a].parent = b;
    v[b].members += v[a].members;
}

/* What the building of a plan saw (cpu_steps.c): each read or write of a value at a
 * position of the global order of steps, the loops' ranges of positions and the count of
 * positions. */
typedef struct cpu_event {
    int64_t v, pos;
    bool def;
} cpu_event;
typedef struct cpu_range {
    int64_t a, b;
} cpu_range;
typedef struct cpu_lives {
    const cpu_event *ev;
    int64_t en;
    const cpu_range *loops;
    int64_t ln;
    int64_t steps;
} cpu_lives;

/* cpu_steps_place.c, finishing a built plan: cpu_steps_donate moves result classes into
 * the donated arguments' buffers where those are dead before the result is first written
 * (|params|: each entry parameter's leaves); cpu_steps_resolve rewrites the steps' values
 * and pieces as their classes; cpu_steps_place gives every arena class its offset
 * (p->arena_size); cpu_steps_dynamic_sizes says where each dynamic class keeps its sizes
 * in a run (p->dyn_off). Errors: out of memory. */
/* The bytes of a run's arena as allocated (p->arena_size rounded up to ALIGN): what a run
 * counts as memory held (cxla_mem_take) while it or the plan's spare holds the arena. */
static inline size_t cpu_plan_arena_bytes(const cpu_plan *p) {
    return (p->arena_size + ALIGN - 1) / ALIGN * ALIGN;
}

cxla_status cpu_steps_donate(cpu_plan *p, const cpu_lives *l, int64_t *const *params);
void cpu_steps_resolve(cpu_plan *p);
cxla_status cpu_steps_place(cpu_plan *p, const cpu_lives *l);
cxla_status cpu_steps_dynamic_sizes(cpu_plan *p);

/* cpu_bounds.c: whether the array |s| has whole-byte elements (*out_elem bytes each; packed
 * sub-byte arrays have not: their dynamic instructions keep the handler), and whether |in|
 * is a get-dimension-size or set-dimension-size that a step of its own runs (an array
 * operand, one dimension in range; anything else goes to the handler for its error). */
bool cpu_whole_elements(const cxla_shape *s, size_t *out_elem);
bool cpu_size_step_ok(const cxla_instr *in);

/* cpu_dynamic.c: the instructions of bounded dynamic shapes that move elements by their
 * run-time sizes (reshape, concatenate, pad, reverse, dynamic-slice, dynamic-update-slice,
 * dynamic-reshape), as S_MOVE steps instead of the interpreter's handler.
 *
 * cpu_dyn_move_ok: whether |in| runs so (whole-byte elements, bounded shapes; any rank and
 * any number of operands: the descriptor's arrays are sized from the instruction; the steps
 * of cpu_dynwin.c, reduce-window, select-and-scatter and dots over the sizes, keep theirs
 * in arrays of CXLA_MAX_RANK, the rank no shape exceeds). cpu_dyn_move_wide_ok is the
 * same test (the name cpu_steps.c asks).
 * cpu_dyn_move_plan: the move of one run, from the operands' buffers |ins| (at their
 * bounds, row-major) and sizes |opz| (one entry per dimension of each operand): the
 * result's sizes by the interpreter's rules, the start indices read and clamped, into a
 * descriptor whose arrays it allocates (one block, released by cpu_dyn_move_free, also
 * after an error). Where the interpreter would report an error it sets *out_handler (the
 * caller then runs the handler, which reports it); errors it returns itself are INTERNAL
 * or RESOURCE_EXHAUSTED.
 * cpu_dyn_move: writes the result at its bounds into |out| (m->dims' elements; never one
 * of the sources), zeros in its padding. Plain C over the descriptor: no IR, no status, no
 * allocation (its strides and indices live in the descriptor's block). */
typedef enum cpu_dyn_op {
    CPU_DYN_RESHAPE, /* source 0's cut elements in row-major order (reshape, dynamic-reshape) */
    CPU_DYN_CONCAT,  /* the sources along |dim| */
    CPU_DYN_PAD,     /* source 0 at lo + i * (interior + 1), source 1 (a scalar) elsewhere */
    CPU_DYN_REVERSE, /* source 0 with the |flip| dimensions reversed within its sizes */
    CPU_DYN_SLICE,   /* source 0 from |start| */
    CPU_DYN_UPDATE,  /* source 0 with source 1 written at |start| */
} cpu_dyn_op;
typedef struct cpu_dyn_desc {
    cpu_dyn_op op;
    int64_t rank;
    int64_t *dims;          /* [rank]: the result's bounds */
    int64_t *sizes;         /* [rank]: the result's sizes */
    size_t elem;            /* bytes per element */
    int64_t count;          /* sources */
    int64_t width;          /* the per-source rows' length: the largest rank, at least 1 */
    const char **src;       /* [count] */
    int64_t *src_rank;      /* [count] */
    int64_t *src_dims;      /* [count * width]: source k's bounds at k * width */
    int64_t *src_sizes;     /* [count * width]: its cut sizes */
    int64_t dim;            /* CPU_DYN_CONCAT */
    int64_t *lo, *interior; /* [rank]: CPU_DYN_PAD */
    bool *flip;             /* [rank]: CPU_DYN_REVERSE */
    int64_t *start;         /* [rank]: CPU_DYN_SLICE, CPU_DYN_UPDATE: clamped */
    int64_t *work;          /* cpu_dyn_move's strides and indices: (count + 4) * width */
    void *block;            /* owned: every array above lives in it */
} cpu_dyn_desc;
bool cpu_dyn_move_ok(const cxla_instr *in);
bool cpu_dyn_move_wide_ok(const cxla_instr *in);
cxla_status cpu_dyn_move_plan(const cxla_instr *in, const void *const *ins,
                              const int64_t *const *opz, cpu_dyn_desc *m, bool *out_handler);
void cpu_dyn_move(const cpu_dyn_desc *m, void *out);
void cpu_dyn_move_free(cpu_dyn_desc *m);
/* cpu_dyn_reduce_ok: a reduce of one input with a reducer the interpreter recognizes
 * (interp_match_reducer) over bounded shapes. cpu_dyn_reduce: runs it over the buffers at
 * their bounds with the interpreter's own typed loop (interp_reduce_space), visiting the
 * elements below the sizes in the interpreter's order, so float sums keep its pairwise
 * tree; the result's sizes into |out_sizes|, zeros in its padding; *out_handler where the
 * interpreter would report an error. */
bool cpu_dyn_reduce_ok(const cxla_instr *in);
cxla_status cpu_dyn_reduce(const cxla_instr *in, void *out, const void *const *ins,
                           const int64_t *const *opz, int64_t *out_sizes, bool *out_handler);
/* cpu_dynwin.c: reduce-window (one input, a recognized reducer), select-and-scatter (a
 * recognized comparator and reducer) and dots (real floats, integers of any width, pred;
 * mixed types; not complex or PACKED_NIBBLE) over bounded dynamic shapes of any rank,
 * as S_MOVE steps: cpu_dynwin_ok says whether |in| runs so; cpu_dynwin_run computes it
 * over the buffers at their bounds (row-major) and the sizes |opz|, visiting only the
 * elements below the sizes in the interpreter's order (bit for bit its values), writes
 * the result's sizes into |out_sizes| and zeros into its padding; *out_handler where the
 * interpreter would report an error. Plain C over the buffers and sizes. */
bool cpu_dynwin_ok(const cxla_instr *in);
cxla_status cpu_dynwin_run(const cxla_instr *in, void *out, const void *const *ins,
                           const int64_t *const *opz, int64_t *out_sizes, bool *out_handler);
/* cpu_dynwin_fill_ok: a reduce-window over bounded dynamic shapes whose kernel at the
 * bounds runs on its inputs with their padding filled with their init values (B_WINDOW):
 * any reducer the emitter writes, several inputs too; those cpu_dynwin_ok takes stay its
 * steps. The interpreter folds the init value at every window position outside the cut
 * operand, so the windows of the result's positions below its sizes read the same values
 * in the same order at the bounds. cpu_dynwin_fill_sizes: the result leaves' sizes
 * (|out_sizes|, one array per leaf: the window's output sizes over the inputs' sizes);
 * *out_handler where the interpreter would report an error (inputs of different sizes, a
 * result its declared shape cannot hold). */
bool cpu_dynwin_fill_ok(const cxla_instr *in);
void cpu_dynwin_fill_sizes(const cxla_instr *in, const int64_t *const *opz,
                           int64_t *const *out_sizes, bool *out_handler);
/* cpu_dyn_sized_sizes: for a B_SIZED step (cpu_dyn_sized_ok), the sizes its kernel reads
 * (|sizes|) and the results' sizes (|out_sizes|, the same for every result); *out_handler
 * where the interpreter would report an error (dynamic sizes that differ, a static result
 * dimension cut, a select-and-scatter source that does not match the windows, anything
 * shape inference refuses over a scatter's cut operands). A reduce's kernel reads its
 * inputs' sizes lined up (one per input dimension); a select-and-scatter's the operand's
 * then the source's; a scatter's the operands' then the updates' (cpu_emit_sized_scatter,
 * cpu_emit_sized_select_and_scatter). */
cxla_status cpu_dyn_sized_sizes(const cxla_instr *in, const int64_t *const *opz, int64_t *sizes,
                                int64_t *out_sizes, bool *out_handler);

/* cpu_dynamic_lib.c: sort, gather and scatter of bounded dynamic shapes as kernels at the
 * bounds (docs/semantics.md, "Bounded dynamic shapes run as steps too").
 *
 * cpu_dyn_lib_kind: B_SORT for a sort along a dynamic dimension (or of several operands
 * with dynamic dimensions), B_INDEXED for a gather from a dynamic operand or a scatter
 * with dynamic shapes whose kernel at the bounds computes the interpreter's value once
 * its indices are rewritten, B_INFERRED for bitcast and bitcast-convert, B_STATIC for the
 * rest (cpu_bounds_kind asks it).
 * cpu_dyn_lib_prepare: for one run, the result leaves' sizes (|out_sizes|, one array per
 * leaf) from the operands' |opz| by the interpreter's rules (the operands cut, shape
 * inference over them, the declared shape); for B_INDEXED also the indices (operand
 * |idx_at|: 1 for gather, N for scatter) rewritten into |scratch| (the indices' bytes at
 * their bounds): gather's start indices clamped within the operand's sizes less the
 * slice's, scatter's windows that the cut operand cannot hold (or that lie outside the
 * indices' sizes) moved out of the bounds so the kernel skips them too. *out_handler where
 * the interpreter would report an error (the caller runs its handler); errors it returns
 * are INTERNAL or RESOURCE_EXHAUSTED, or (UNIMPLEMENTED) the interpreter's own error for a
 * bitcast of an operand below its bounds, in its words. */
int cpu_dyn_lib_kind(const cxla_instr *in);
/* cpu_dyn_lib_sized_ok: a scatter of bounded dynamic shapes that no index rewrite serves (its
 * update window dimensions are dynamic, or its index type cannot hold a value past the
 * bounds), which runs as a B_SIZED kernel reading the run-time sizes. cpu_dyn_lib_scatter_
 * sizes: its kernel's sizes (the operands' then the updates') and the results' sizes by
 * shape inference over the cut operands; *out_handler where the interpreter reports an
 * error. */
bool cpu_dyn_lib_sized_ok(const cxla_instr *in);
cxla_status cpu_dyn_lib_scatter_sizes(const cxla_instr *in, const int64_t *const *opz,
                                      int64_t *sizes, int64_t *out_sizes, bool *out_handler);
int64_t cpu_dyn_lib_indices(const cxla_instr *in);
cxla_status cpu_dyn_lib_prepare(const cxla_instr *in, const int64_t *const *opz,
                                const void *indices, void *scratch, int64_t *const *out_sizes,
                                bool *out_handler);

#endif /* CXLA_CPU_CPU_STEPS_H_ */
