/* The C emitter of the cpu backend: one C function ("kernel") per instruction.
 *
 * A kernel computes one elementwise, data-movement or reduce instruction, or a `fusion`
 * of them (a reduce-window, select-and-scatter, gather and scatter too: emit_window.c,
 * emit_gather.c), as a loop nest over its output that evaluates the (fused) expression per
 * element: the innermost loop runs along the minor dimension, restrict pointers, index
 * arithmetic in the loop headers. Its results are bit for bit the interpreter's
 * (src/interp/), including the rounding of f16/bf16/f8 after every operation and the
 * order of reductions (docs/semantics.md, "cpu backend"). Transcendental functions are
 * evaluated as the interpreter evaluates them (f32 through double libm); the one place
 * that maps an operation and a type to C is math_call in emit_expr.c.
 *
 * The text is readable: names from the HLO, each instruction's HLO text as a comment,
 * no macros. It compiles without warnings under gcc and clang -Wall -Wextra. A
 * translation unit is the prelude (cpu_emit_prelude) followed by any number of kernels
 * with distinct names. Nothing here owns memory beyond the call: the text is appended
 * to the caller's buffer. */
#ifndef CXLA_CPU_EMIT_H_
#define CXLA_CPU_EMIT_H_

#include <stdbool.h>

#include "base/base.h"
#include "hlo/hlo.h"

/* True when cpu_emit_kernel can emit |instr|. */
bool cpu_can_emit(const cxla_instr *instr);

/* What the caller of a kernel needs to split it over threads. */
typedef struct cpu_kernel_info {
    /* Iterations of the kernel's outer loop: NAME(out, in, begin, end) computes those in
     * [begin, end) (clamped to [0, range)); any split of [0, range) into parts gives the
     * same results as one call, bit for bit. 1 when the kernel cannot be split. */
    int64_t range;
    /* The work of the whole kernel in byte-equivalents: the bytes it reads and writes, plus
     * a weight per element of each transcendental function (the thread pool's cost model,
     * threadpool.h). */
    double cost;
    /* Results that may share their buffer with an operand: out[i] may be in[i] for i <
     * in_place (a scatter's results and operands; the kernel then skips its copy of the
     * operand). 0 for every other kernel: out never aliases in. */
    int64_t in_place;
    /* Bytes of work memory the kernel needs (sort's permutations, fft's rows; emit_lib.c):
     * when > 0 the caller passes out[R], one past the R array results, pointing to that many
     * bytes aligned to 64 that nothing else uses during the call (contents undefined). Each
     * iteration of the outer loop uses its own part of it, so any split stays safe. */
    size_t scratch;
} cpu_kernel_info;

/* Appends to |out| the C definition of one kernel computing |instr|:
 *   void NAME(void *const *out, const void *const *in, int64_t begin, int64_t end)
 * which computes iterations [begin, end) of its outer loop (see cpu_kernel_info; (0,
 * INT64_MAX) runs all of it).
 * in[k] points to operand k's data, out[i] to the i-th array result (out[0] when the
 * result is an array; one per tuple element for a tuple-shaped multi-output fusion).
 * All arrays are dense, in the default row-major layout, with static shapes; out never
 * aliases in, except as cpu_kernel_info.in_place allows (scatter) and in the kernels of
 * cpu_emit_kernel_alias. |name| must be a C identifier (cpu_emit_sanitize makes one); the
 * kernel's own static helpers and constants carry it as a prefix. Errors: UNIMPLEMENTED naming the
 * instruction (and the fused instruction) for what cannot be emitted; RESOURCE_EXHAUSTED when
 * memory is short. */
cxla_status cpu_emit_kernel(const cxla_instr *instr, const char *name, cxla_strbuf *out);
/* cpu_emit_kernel that also fills |out_info| (may be NULL). */
cxla_status cpu_emit_kernel_info(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                 cpu_kernel_info *out_info);
/* Whether the kernel of |instr| may write its result over its operand |k| (the two in one
 * buffer), as cpu_emit_kernel_alias emits it: one array result computed at each index
 * from operand k's element at that index only (an elementwise instruction, or a fusion
 * whose values that depend on parameter k are all elementwise over the result's dimensions
 * up to its root), of the same element type and dimensions, whole-byte elements, operand
 * k read through no other operand. A loop whose body rewrites its state so updates the
 * state where it lies (cpu_steps_control.c). */
bool cpu_emit_alias_ok(const cxla_instr *instr, int64_t k);
/* The kernel of |instr| for out[0] == in[k] (cpu_emit_alias_ok must hold, else INTERNAL):
 * the same entry point and results as cpu_emit_kernel_info's, reading operand k through
 * out[0] (in[k] is not read). */
cxla_status cpu_emit_kernel_alias(const cxla_instr *instr, int64_t k, const char *name,
                                  cxla_strbuf *out, cpu_kernel_info *out_info);
/* A sort of a bounded dynamic shape along any dimension (emit_lib.c), emitted from |instr|
 * at its bounds (static shapes): the kernel takes one more input after the operands,
 * in[N] = const int64_t sizes[rank], the operands' cut sizes (the result's); each row inside
 * them sorts its first sizes[dimension] elements as the interpreter sorts the cut array, and
 * everything else of the results (rows outside the sizes, row tails) is zero. Otherwise as
 * cpu_emit_kernel_info (the same scratch, range and outputs as the static sort at the
 * bounds). The JIT runs it as a B_SORT step (cpu_dynamic_lib.c); ahead-of-time output may
 * emit it and pass the sizes the same way. */
cxla_status cpu_emit_sort_sized(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                cpu_kernel_info *out_info);

/* A reduce with any reducer (several inputs, as an argmax; a reducer the interpreter does
 * not recognize) over bounded dynamic shapes (emit_lib.c): |instr| at its bounds (static
 * shapes), the kernel's in[2n] an int64_t array of the inputs' run-time sizes (one per
 * dimension); each output element at the bounds folds the reduced elements below the sizes
 * in row-major order from the init values, as the interpreter folds the cut array (the
 * caller zeroes the outputs past the sizes). _ok: whether it emits |instr| so. */
bool cpu_emit_sized_reduce_ok(const cxla_instr *instr);
cxla_status cpu_emit_sized_reduce(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                  cpu_kernel_info *out_info);
/* scatter and select-and-scatter over bounded dynamic shapes, the same way (emit_gather.c,
 * emit_window.c): |instr| at its bounds, the kernel's last input an int64_t array of
 * run-time sizes, row-major offsets of the bounds. scatter: in[2n + 1] holds the operands'
 * sizes (one per operand dimension) then the updates' (one per update dimension): update
 * groups past the sizes are skipped, windows are the updates' sizes long and fit when they
 * lie inside the operands' sizes. select-and-scatter: in[3] holds the operand's sizes then
 * the source's: the source's elements past its sizes are skipped, and a window's positions
 * past the operand's sizes are outside it (never selected). The caller zeroes the results
 * past the sizes and checks the sizes against each other (the interpreter's errors). */
bool cpu_emit_sized_scatter_ok(const cxla_instr *instr);
cxla_status cpu_emit_sized_scatter(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                   cpu_kernel_info *out_info);
bool cpu_emit_sized_select_and_scatter_ok(const cxla_instr *instr);
cxla_status cpu_emit_sized_select_and_scatter(const cxla_instr *instr, const char *name,
                                              cxla_strbuf *out, cpu_kernel_info *out_info);

/* What a ragged-dot kernel cannot report, checked before it runs: a negative group size in
 * |group_sizes| (operand 2's data, default layout) is the interpreter's error
 * (INVALID_ARGUMENT, "group I has a negative size N", naming the instruction). NULL when
 * the sizes are fine or |instr| is no ragged-dot (emit_ragged.c). */
cxla_status cpu_emit_ragged_check(const cxla_instr *instr, const void *group_sizes);

/* The code every translation unit starts with: includes (stdint.h, string.h, math.h),
 * helpers (bf16/f16/f8 <-> f32 rounding to nearest even as the interpreter does), math
 * functions. */
void cpu_emit_prelude(cxla_strbuf *out);

/* Whether f32 transcendental functions use the fast approximations of cxla_math.h (the
 * default, within docs/semantics.md's bound of the interpreter) or the interpreter's own
 * libm expressions, bit for bit (CXLA_CPU_EXACT_MATH=1 in the environment). */
bool cpu_emit_fast_math(void);

/* Appends to |out| a C identifier made from |text| (letters, digits and '_' kept, other
 * characters as '_', a leading digit prefixed with '_'). */
void cpu_emit_sanitize(const char *text, cxla_strbuf *out);

#endif /* CXLA_CPU_EMIT_H_ */
