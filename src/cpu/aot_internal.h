/* Internal to the ahead-of-time output (aot.c, aot_emit.c, aot_ops.c, ...): the plan of each
 * computation that aot.c builds (its leaves and steps) and the helpers that write C text about it.
 * aot_ops.c adds the steps that are not kernels or control flow: custom calls, infeed and
 * outfeed through the caller's callbacks, collectives on one device, replica-id and
 * partition-id. Nothing here outlives one cpu_aot_generate call. */
#ifndef CXLA_CPU_AOT_INTERNAL_H_
#define CXLA_CPU_AOT_INTERNAL_H_

#include "base/base.h"
#include "cpu/aot.h"
#include "cpu/cpu_internal.h"
#include "hlo/hlo.h"

typedef enum leaf_kind { L_PARAM, L_CONST, L_ARENA, L_OUT } leaf_kind;

/* One array (or token, 0 bytes) that a computation reads or writes. */
typedef struct aleaf {
    leaf_kind kind;
    int64_t index; /* L_PARAM: in[index]; L_OUT: out[index]; L_CONST: the constant's id */
    int64_t sub;   /* L_CONST: the leaf of the constant */
    const cxla_instr *constant; /* L_CONST */
    const cxla_shape *shape;
    size_t size, offset;
    int64_t first, last; /* steps; first -1: not yet computed */
    /* Buffer sharing (aot.c, as the JIT's plan merges values into classes): the leaf whose
     * buffer this one shares (itself when none); after aot.c's placement every leaf points
     * at its class's representative, whose kind, index and offset name the buffer. */
    int64_t parent;
    int64_t members;       /* on representatives: leaves in the class */
    int64_t cfirst, clast; /* on representatives: the class's first write and last read */
    bool from_step;        /* written by a step of this computation */
    bool writable;         /* L_PARAM: a buffer the computation may overwrite once dead (a
                            * while body's state, a donated argument) */
    /* On representatives: a piece of another class's buffer, |sub_off| bytes into that of
     * leaf |sub_of| (an operand of a concatenate computed in its place); -1: its own. */
    int64_t sub_of;
    size_t sub_off;
} aleaf;

typedef enum step_kind {
    S_KERNEL, /* a kernel of the emitter (or aot.c's dot) */
    S_WHILE,  /* control flow over the computations it calls */
    S_COND,
    S_CALL,
    S_COPY,   /* out[k] = in[k]: a collective on one device, a built-in identity target */
    S_ZERO,   /* out[k] = 0: replica-id, partition-id, a permute that receives nothing */
    S_CUSTOM, /* a custom call through the caller's table */
    S_INFEED, /* host transfers through the caller's callbacks */
    S_OUTFEED,
    S_BLAS, /* a oneDNN call (--blas onednn) with the exact kernel as its fallback */
    S_SEND, /* send / recv / recv-done through the caller's callbacks */
    S_RECV,
    S_RECV_DONE,
    S_RNG,     /* rng, rng-get-and-update-state over the run's state (aot_rng.c) */
    S_SIZE,    /* get-dimension-size, set-dimension-size over the run-time sizes (aot_dyn.c) */
    S_DMOVE,   /* a move or a float sum by the run-time sizes (aot_dmove.c) */
    S_PERMUTE, /* collective-permute's in-place form on one device: the output buffers with
                * the windows of the pairs {0,0} from the input (aot_ops.c) */
    S_RAGGED,  /* ragged-all-to-all on one device: the output with the input's runs of rows
                * (aot_ops.c) */
} step_kind;

/* How a kernel step meets bounded dynamic shapes (aot_dyn.c, as the JIT's cpu_bounds_kind):
 * static shapes; run at the bounds with the result's sizes from the size rules and its
 * padding zeroed; the same after a reduce's input padding is filled with the init value,
 * or a dot's operands' padding with zeros (copies in tmp[]). */
typedef enum aot_bounds {
    AB_STATIC,
    AB_POSITIONWISE,
    AB_REDUCE,
    AB_DOT,
    /* No kernel at the bounds: an S_DMOVE step (aot_dmove.c) moves the elements by the
     * run-time sizes (the JIT's cpu_dyn_move), or sums f32/f64 pairwise at the sizes. */
    AB_MOVE,
    AB_SUM,
    /* Kernels at the bounds that take the run-time sizes as one more input, a[in_count]:
     * a sort along a dynamic dimension (cpu_emit_sort_sized: the result's sizes), a
     * reduce with any reducer (cpu_emit_sized_reduce: the inputs' sizes lined up), a
     * select-and-scatter (cpu_emit_sized_select_and_scatter: the operand's sizes, then the
     * source's) and a scatter with dynamic update windows (cpu_emit_sized_scatter: the
     * operands' sizes, then the updates'). */
    AB_SORT,
    AB_SIZED,
    /* bitcast and bitcast-convert: the static kernel at the bounds, the result's sizes
     * inferred from the operand's (the JIT's B_INFERRED). */
    AB_INFERRED,
    /* gather from a dynamic operand: the static kernel at the bounds over a copy of the
     * start indices clamped within the operand's sizes (the JIT's B_INDEXED). */
    AB_GATHER,
    /* reduce-window of N inputs: the static kernel at the bounds over copies whose
     * padding holds the init values, which the interpreter folds at the cut operands'
     * window padding (aot_dynlib.c). */
    AB_WINDOW,
    /* scatter of one operand: the static kernel at the bounds over a copy of the indices
     * whose vectors the cut operand cannot hold are moved out of range (the JIT's
     * B_INDEXED). */
    AB_SCATTER,
} aot_bounds;

/* astep.rng_key of the rng an rng-start wraps: key 0 before the seed (aot_rng.c). */
#define AOT_RNG_KEY_ZERO (-2)

typedef struct astep {
    step_kind kind;
    const cxla_instr *instr;
    int64_t *in, *out, *tmp; /* leaf indices */
    int64_t in_count, out_count, tmp_count;
    int64_t rng_key;   /* S_RNG of an rng: its number among the caller's module's rng, or
                        * AOT_RNG_KEY_ZERO (an rng-start's: key 0 before the seed) */
    bool in_place;     /* S_KERNEL of a dynamic-update-slice: the update written into its
                        * operand's buffer, which the result shares (no kernel call) */
    bool pieces;       /* S_KERNEL of a concatenate whose operands were computed in their
                        * places in its result (no code) */
    aot_bounds bounds; /* S_KERNEL: dynamic shapes (aot_dyn.c) */
    /* S_KERNEL whose result is written over its operand |alias| (a while body's state leaf
     * rewritten where it lies): it calls cpu_emit_kernel_alias's kernel P_kaID_K. */
    bool aliased;
    int64_t alias;
} astep;

/* The copies a kernel step with dynamic shapes fills (after its work memory in tmp[]). */
static inline int64_t aot_fill_count(const astep *st) {
    return st->bounds == AB_WINDOW ? st->instr->operand_count / 2 /* one per input */
           : st->bounds == AB_REDUCE || st->bounds == AB_GATHER || st->bounds == AB_SCATTER ? 1
           : st->bounds == AB_DOT                                                           ? 2
                                                                                            : 0;
}

typedef struct acomp {
    bool built, building;
    int64_t fn; /* the C function's number */
    aleaf *leaves;
    int64_t leaf_count, leaf_cap;
    astep *steps;
    int64_t step_count;
    int64_t *root;
    int64_t root_count, param_leaves;
    size_t own, total; /* own arena; with the callees' */
    /* By root leaf k: the parameter leaf (its index in in[]) whose buffer out[k] is, or -1.
     * A while body's function is called with out == in (every k pairs with k), the
     * donated entry's with out[k] == in[arg] for input_output_alias's pairs. NULL: none. */
    int64_t *out_is_in;
    int64_t *param_leaf; /* by index in in[]: the leaf of that parameter, or -1 */
    int64_t *end_tmp;    /* temporaries of the final copies (see aot.c) */
    int64_t end_tmp_count;
    /* Bounded dynamic shapes (aot_dyn.c; every computation of a module that has them): by
     * leaf, where its run-time sizes lie in the function's int64_t dz[dyn_total] (-1: a
     * static leaf). NULL: none. */
    int64_t *dyn_off;
    int64_t dyn_total;
} acomp;

typedef struct aot {
    const cxla_module *m; /* the optimized module */
    const char *P;        /* the symbol prefix */
    size_t threshold;
    acomp *comps;  /* by position in m->comps */
    acomp *bodies; /* the same, built as while bodies (out == in) */
    acomp donated; /* the entry for donated arguments (input_output_alias), when it has any */
    cpu_io_alias *aliases; /* the module's input_output_alias pairs that the donated entry
                            * takes (both leaves row-major at the interface) */
    int64_t alias_count;
    bool dus_helper;            /* the in-place dynamic-update-slice helper was written */
    bool window_helper;         /* aot_ops.c's window copy (collective-permute in place) */
    bool xfail_helper;          /* aot_ops.c's failure with numbers (ragged-all-to-all) */
    bool dmove_used, dsum_used; /* aot_dmove.c's helpers are needed */
    int64_t *kernel_in_place;   /* by instruction id: cpu_kernel_info.in_place */
    uint64_t *alias_emitted;    /* by instruction id: a bit per operand whose alias kernel
                                 * (astep.aliased) is written */
    int64_t fn_count;
    bool *emitted;   /* by instruction id: kernel or constant written */
    size_t *scratch; /* by instruction id: the kernel's work memory (cpu_kernel_info) */
    cxla_strbuf consts, data, kernels, funcs;
    cxla_strmap consts_done; /* "id_leaf" of the constant arrays written */
    cxla_status err;         /* the first error of put_leaf */
    /* What the module asks of the caller (for the header's comments). */
    cxla_strbuf targets; /* " * custom call target "x" (api_version N) ..." lines */
    bool infeed, outfeed, send, recv;
    bool blas;      /* --blas onednn: dot and convolution through oneDNN where it applies */
    bool blas_used; /* some call was emitted: NAME.c includes dnnl.h */
    /* rng (aot_rng.c): the module the caller gave (rng's keys are counted in it, as the
     * interpreter counts them), whether an rng step was emitted, and the keys by name. */
    const cxla_module *user_module;
    bool rng, rng_keys_ready;
    const cxla_instr **rng_instrs;
    uint64_t *rng_keys;
    int64_t rng_count;
    /* Bounded dynamic shapes (aot_dyn.c): the module at its bounds (the dynamic marks
     * dropped), whose copies of the instructions the emitter writes kernels for, by id;
     * NULL when the module has none. */
    cxla_module *bounds;
    const cxla_instr **bounds_instr;
} aot;

/* A kernel's arguments in a call that runs all of it (the emitter's signature, emit.h:
 * out, in, begin, end): the one place to change when that signature changes. */
#define AOT_KERNEL_CALL_ARGS "r, a, 0, INT64_MAX"

/* aot.c. The position of |c| in |m|'s computations (-1: not there); the bytes of leaf |x|
 * (an arena leaf's size, else its shape's; 0 when that has none). */
int64_t aot_comp_pos(const cxla_module *m, const cxla_computation *c);
size_t aot_leaf_size(const aleaf *x);
/* Leaf |k| of literal |lit| (tuples flattened depth first), or NULL. */
const cxla_literal *aot_literal_leaf(const cxla_literal *lit, int64_t k);
/* aot_emit.c. Appends the C function of built computation |c| (of |comp|) to a->funcs.
 * Errors: those of the steps' writers (UNIMPLEMENTED naming an instruction, INTERNAL,
 * RESOURCE_EXHAUSTED) and a->err. */
cxla_status aot_emit_function(aot *a, const cxla_computation *comp, acomp *c);

/* UNIMPLEMENTED naming |in|, its opcode and computation, and |why|. */
cxla_status aot_no(const cxla_instr *in, const char *why);
/* The array (and token) leaves of |s|, tuples flattened depth first; their shapes from
 * out[*n] on. */
int64_t aot_leaf_count(const cxla_shape *s);
void aot_leaf_shapes(const cxla_shape *s, const cxla_shape **out, int64_t *n);
/* A new leaf of |c| (its index, or -1 when memory is short); an arena leaf of shape |s|. */
int64_t aot_add_leaf(acomp *c, aleaf l);
int64_t aot_arena_leaf(acomp *c, const cxla_shape *s);
/* A new step of |c| reading |in| (|nin| leaves) with |nout| new arena leaves of |shapes|,
 * whose indices land in *out_ls. */
cxla_status aot_add_step(acomp *c, step_kind kind, const cxla_instr *instr, const int64_t *in,
                         int64_t nin, const cxla_shape *const *shapes, int64_t nout,
                         int64_t **out_ls);
/* The C text of leaf |l| of |c| as a pointer expression, and "{e0, e1}" of a list. */
void aot_put_leaf(aot *a, const acomp *c, int64_t l, cxla_strbuf *b);
void aot_put_leaf_list(aot *a, const acomp *c, const int64_t *ls, int64_t n, cxla_strbuf *b);
/* Appends |text| as a C string literal (escaped). */
void aot_put_string(cxla_strbuf *b, const char *text, size_t len);

/* aot_ops.c. Whether |op| is one that aot_ops_build takes. */
bool aot_ops_takes(const cxla_instr *in);
/* Adds the step for |in| (one of aot_ops_takes) to |c|: |ins| are the operands' leaves
 * (|nin|), |shapes| the result's |count| leaf shapes; the result's leaves go to |lv|.
 * Errors: UNIMPLEMENTED naming the instruction (a collective that needs several devices,
 * a TYPED_FFI or built-in target without a C form, ...). */
cxla_status aot_ops_build(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins, int64_t nin,
                          const cxla_shape *const *shapes, int64_t count, int64_t *lv);
/* The C statements of step |st| (one of the kinds above S_CALL) inside a computation's
 * function, whose options pointer is `opt`. */
cxla_status aot_ops_emit(aot *a, const acomp *c, const astep *st, cxla_strbuf *b);
/* Async over dynamic shapes: whether |in| (async-start, -update, -done) has a C form
 * (async-start with calls=, whose wrapped computation runs as a call with the sizes passed
 * through, as call: always NULL now, aot.c refusing the sugar forms the async-desugar pass
 * left, whatever their shapes). */
cxla_status aot_ops_async_dynamic(const cxla_instr *in);
/* The header's part about NAME_options (types, error codes) and the source's helpers. */
void aot_ops_header(const aot *a, cxla_strbuf *h);
void aot_ops_source(const aot *a, cxla_strbuf *c);

/* aot_dot.c. Whether dot |in| has the exact loop nest (every element-type combination the
 * interpreter takes, PACKED_NIBBLE included); |why| says why not. Its kernel, appended to the
 * kernels as static function |name|. Errors: RESOURCE_EXHAUSTED. */
bool aot_dot_ok(const cxla_instr *in, const char **why);
cxla_status aot_dot_emit(aot *a, const cxla_instr *in, const char *name);

/* aot_blas.c (--blas onednn). Whether dot or convolution |in| has a oneDNN form (f32, bf16
 * or f16 arrays whose dims merge into strides; see aot_blas.c). */
bool aot_blas_takes(const cxla_instr *in);
/* Appends the call's constant descriptor P_d<id> to the kernels; marks blas_used. Errors:
 * INTERNAL when |in| is not one aot_blas_takes; RESOURCE_EXHAUSTED. */
cxla_status aot_blas_emit_desc(aot *a, const cxla_instr *in);
/* The statements of an S_BLAS step: the call, the exact kernel P_k<id> when oneDNN does not
 * implement it, NAME_ERROR_ONEDNN when oneDNN fails. */
void aot_blas_emit_step(aot *a, const acomp *c, const astep *st, cxla_strbuf *b);
/* The source's oneDNN helper (#include <dnnl.h>, NAME_dnn), when blas_used. */
void aot_blas_source(const aot *a, cxla_strbuf *c);

/* aot_rng.c. Whether |in| is rng or rng-get-and-update-state; its step (as aot_ops_build;
 * errors: UNIMPLEMENTED naming the instruction for what the interpreter refuses too); the
 * statements of the step (the computation's functions hold the run's state as `rng`,
 * u64[2]); the source's helpers (the philox stream), when the module has rng. */
bool aot_rng_takes(const cxla_instr *in);
cxla_status aot_rng_build(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins, int64_t nin,
                          const cxla_shape *const *shapes, int64_t count, int64_t *lv);
cxla_status aot_rng_emit(aot *a, const acomp *c, const astep *st, cxla_strbuf *b);
void aot_rng_source(const aot *a, cxla_strbuf *c);

/* aot_dyn.c: bounded dynamic shapes (docs/aot.md, "Dynamic shapes").
 * aot_dyn_prepare: a->bounds when the module has bounded dynamic shapes.
 * aot_dyn_shape_ok: whether leaf shape |s| (an array) is one the code takes: static, or
 *   bounded dynamic in a module with a->bounds.
 * aot_dyn_instr: whether |in| has a dynamic operand or result leaf.
 * aot_dyn_check: for such an instruction in computation |c| (|entry|: the entry's), NULL
 *   when aot.c may build it (tuples, parameters, get-tuple-element; kernels: *out_bounds
 *   says how), else UNIMPLEMENTED naming it and the reason.
 * aot_dyn_size_step: the S_SIZE step of get- or set-dimension-size.
 * aot_dyn_place: c->dyn_off after the build.
 * aot_dyn_emit_begin / _emit_end: a computation function's extra parameters' use (zin: sizes
 *   of its parameters in, zout: of its results out; every computation's, the entry's and
 *   those that while, conditional and call run); aot_dyn_emit_kernel: the statements of a
 *   kernel step with dynamic shapes, |phase| 0 before its a[] and r[] (the sizes rz<e>
 *   from oz[]), 1 after them (fills of copies), 2 after the call (padding zeroed, sizes
 *   kept); aot_dyn_emit_size: an S_SIZE step. Errors: UNIMPLEMENTED, RESOURCE_EXHAUSTED.
 * aot_dyn_header / _helpers / _interface: the header's declarations, the source's helpers
 *   (before the computations) and NAME_run_with / NAME_run_dynamic over the
 *   NAME_run_sized that aot_iface.c writes, for the entry's leaf shapes. */
cxla_status aot_dyn_prepare(aot *a);
/* aot_dyn.c's writers that aot_dmove.c shares: the sizes of leaf |l| as a `const int64_t *`
 * expression; a `return P_dfail(...)` statement whose message is exec_error's for |in|
 * with printf format |fmt| (int64_t conversions) over the C expressions |vals|; the
 * statements that set the int64_t array |out| to |in|'s result sizes from its operands'
 * |ops| by exec_dynamic_sizes' rules (UNIMPLEMENTED where there is no rule). */
void aot_dyn_put_sizes(const acomp *c, int64_t l, cxla_strbuf *b);
void aot_dyn_put_fail(aot *a, cxla_strbuf *b, const char *ind, const cxla_instr *in,
                      const char *code, const char *fmt, const char *const *vals, int nv);
cxla_status aot_dyn_put_rule(aot *a, cxla_strbuf *b, const char *ind, const cxla_instr *in,
                             const char *const *ops, const char *out);
/* aot_dmove.c: the S_DMOVE step of |in| (aot_dyn_check said AB_MOVE or AB_SUM), its result
 * leaf into lv[0]; its statements; the source's helpers (when a->dmove_used, dsum_used).
 * Errors: UNIMPLEMENTED naming |in|, RESOURCE_EXHAUSTED. */
cxla_status aot_dmove_step(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins, int64_t nin,
                           const cxla_shape *const *shapes, aot_bounds bk, int64_t *lv);
cxla_status aot_dmove_emit(aot *a, const acomp *c, const astep *st, cxla_strbuf *b);
void aot_dmove_helpers(const aot *a, cxla_strbuf *c);
/* Whether |in| is a dynamic-slice or dynamic-update-slice in XLA's older form, its start
 * indices one integer vector (which the move reads element by element, as the JIT's
 * cpu_dyn_move_plan does). */
bool aot_dmove_vector_starts(const cxla_instr *in);
bool aot_dyn_shape_ok(const aot *a, const cxla_shape *s);
bool aot_dyn_instr(const cxla_instr *in);
cxla_status aot_dyn_check(aot *a, const cxla_instr *in, bool entry, aot_bounds *out_bounds);
cxla_status aot_dyn_size_step(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins,
                              int64_t nin, const cxla_shape *const *shapes, int64_t *lv);
cxla_status aot_dyn_place(acomp *c);
/* The sizes of leaves |ls| (|n|) of |c| as a C array |name| of `int64_t *` (|writable|:
 * where a callee writes its results' sizes) or `const int64_t *` (its parameters'): the
 * leaf's place in dz[], or 0 for a static leaf (the callee takes its bounds). Every
 * computation's function takes such arrays (zin, zout) when the module has dynamic shapes,
 * so sizes pass through call, conditional and while. */
void aot_dyn_put_zlist(const acomp *c, const int64_t *ls, int64_t n, bool writable,
                       const char *name, const char *ind, cxla_strbuf *b);
/* Sizes of leaves |ls| (|n|) at their bounds: what a callee whose result leaf is static
 * leaves them at (it writes the sizes of its dynamic ones only). */
void aot_dyn_put_reset(const acomp *c, const int64_t *ls, int64_t n, const char *ind,
                       cxla_strbuf *b);
/* Before while step |st|'s loop: its state's sizes (the result leaves') from the initial
 * values' (its operands'). */
void aot_dyn_put_while_sizes(const acomp *c, const astep *st, const char *ind, cxla_strbuf *b);
/* interp_dynamic.c's align (exec/dynamic.c) as C: the slots (operand ks[i], dimension
 * ds[i]) of arrays named r<k>: the dynamic ones must agree (else the interpreter's
 * failure), the static ones are cut to them. */
void aot_dyn_put_align(aot *a, cxla_strbuf *b, const char *ind, const cxla_instr *in,
                       const int64_t *ks, const int64_t *ds, int64_t count);
/* aot_dynlib.c: phase |phase| of aot_dyn_emit_kernel for the kinds it writes (AB_SORT,
 * AB_SIZED, AB_INFERRED, AB_WINDOW, AB_GATHER, AB_SCATTER); *done false when it wrote
 * nothing (aot_dyn.c's own part). Errors: UNIMPLEMENTED naming the instruction. */
cxla_status aot_dynlib_emit(aot *a, const acomp *c, const astep *st, int phase, cxla_strbuf *b,
                            bool *done);
/* aot_dynlib.c: for |in| with dynamic shapes, whether it is one of aot_dynlib.c's kinds that
 * aot_dyn_check leaves to it (*taken, *out_bounds): a reduce-window of N inputs (AB_WINDOW),
 * a select-and-scatter or a scatter with dynamic update windows (AB_SIZED: the JIT's sized
 * kernels). Errors: UNIMPLEMENTED naming |in| where it is of those opcodes but has no form.
 * aot_dynlib_emit_sized: the kernel of an AB_SIZED step, emitted from |at_bounds| (the
 * instruction's copy without the dynamic marks): the JIT's sized reduce, scatter or
 * select-and-scatter. */
cxla_status aot_dynlib_check(aot *a, const cxla_instr *in, aot_bounds *out_bounds, bool *taken);
cxla_status aot_dynlib_emit_sized(const cxla_instr *at_bounds, const char *name, cxla_strbuf *out,
                                  cpu_kernel_info *info);
/* aot_dindex.c: whether gather or scatter |in| over dynamic shapes has a C form (AB_GATHER,
 * AB_SCATTER: one operand, batching dimensions and a dynamic index-vector dimension too),
 * and phase |phase| of aot_dyn_emit_kernel for those kinds and for a scatter's AB_SIZED
 * step (the JIT's sized scatter kernel reading lz: the operand's sizes, then the
 * updates'; several operands) (as aot_dynlib_emit). */
bool aot_dindex_ok(const cxla_instr *in);
cxla_status aot_dindex_emit(aot *a, const acomp *c, const astep *st, int phase, cxla_strbuf *b,
                            bool *done);
void aot_dyn_emit_begin(aot *a, const acomp *c, cxla_strbuf *b);
void aot_dyn_emit_end(aot *a, const acomp *c, cxla_strbuf *b);
cxla_status aot_dyn_emit_kernel(aot *a, const acomp *c, const astep *st, int phase, cxla_strbuf *b);
cxla_status aot_dyn_emit_size(aot *a, const acomp *c, const astep *st, cxla_strbuf *b);
void aot_dyn_header(const aot *a, const cxla_shape *const *as, int64_t na,
                    const cxla_shape *const *rs, int64_t nr, cxla_strbuf *h);
void aot_dyn_helpers(const aot *a, cxla_strbuf *c);
void aot_dyn_interface(const aot *a, const cxla_shape *const *as, int64_t na,
                       const cxla_shape *const *rs, int64_t nr, cxla_strbuf *c);

/* aot_iface.c: writes NAME.h, the rest of NAME.c around the built computations (the
 * prelude, constants, kernels, functions; the tables, NAME_run_with, NAME_run) and NAME_data.c,
 * for |module| (the caller's, whose entry layout is the interface) whose entry is |entry|
 * (|donated|, or NULL: the entry built for results in their aliased arguments' buffers).
 * Errors: UNIMPLEMENTED for entry layouts with padding or tiles; RESOURCE_EXHAUSTED. */
cxla_status aot_write_interface(aot *a, const cxla_module *module, const cpu_aot_options *o,
                                const char *name, const acomp *entry, const acomp *donated,
                                cxla_strbuf *out_header, cxla_strbuf *out_source,
                                cxla_strbuf *out_data);

#endif /* CXLA_CPU_AOT_INTERNAL_H_ */
