/* Dot and convolution on the cpu backend (onednn.c): a library call (cpu_call) per
 * instruction, prepared when the module is compiled.
 *
 * With oneDNN (built when CMake finds it: CXLA_HAVE_ONEDNN), a dot of f32, bf16 or f16
 * operands becomes a matmul primitive over [batch..., M, K] x [batch..., K, N] whose
 * memory descriptors carry the operands' strides (a transposed operand is a stride, not
 * a copy; free dims that do not merge into M or N are batch dims of their operand,
 * broadcast over the other), and a convolution of those types becomes a convolution primitive
 * (forward, any dim_labels by strides, padding, strides, rhs dilation, feature groups with
 * depthwise among them) or, for lhs dilation (a transposed convolution), a
 * backward-data convolution, or, for batch groups (a grouped convolution's weight
 * gradient), a backward-weights convolution (onednn_conv.c). Accumulation is in f32, the results
 * are rounded once to the result type; precision_config is accepted as XLA's CPU backend accepts it
 * (f32 is always computed in f32, never in bf16 or tf32). docs/semantics.md ("cpu backend") gives
 * the bound on the difference to the interpreter (the order of the sums differs).
 *
 * A narrow f32 product (passes/epilogue.h, cxla_dot_narrow: a side of at most 16, such as
 * an MLP's 10-class layer) gets no call: it is the emitter's kernel (emit_dot.c), split
 * over the thread pool, where oneDNN pads it to its blocks and runs it on one thread.
 * A dot that oneDNN does not run (integer and f64 types; f32 without oneDNN) is a
 * generated kernel when its dimension numbers merge into strides (emit_dot.c: cache
 * panels, a 4-row register block; bit for bit the interpreter's). Everything else
 * (complex types, batch groups with lhs dilation or reversal, negative padding without
 * lhs dilation, lhs dilation with a stride,
 * dimensions that cannot be merged by strides, more than 3 spatial dims, zero-size
 * arrays) runs the interpreter's cache-blocked matrix product (src/interp/interp_linalg.c)
 * on the buffers, exact against the interpreter, except convolutions of types oneDNN does
 * not take (f64, integers; every type without oneDNN), which are the emitter's exact loop
 * nest (emit_conv.c) when it applies.
 *
 * A kOutput fusion of a dot or convolution (f32, bf16 or f16) with the elementwise work after it
 * (the epilogues of src/passes/epilogue.h: vectors added, subtracted or multiplied along the output
 * features, scales, a relu) runs as one oneDNN primitive with a bias and post-ops, so the
 * product is not written and read back; where oneDNN does not take it whole (or without
 * oneDNN), as the product's own call followed by loops over the result. Operands that are
 * constants of the module and that oneDNN reads in another layout (a convolution's
 * blocked weights) are reordered once, when the call is prepared. A matmul with M >= 512
 * rows takes its f32 row-major weights in oneDNN's blocked layout, copied into it on every
 * run (onednn.c, want_packed; CXLA_ONEDNN_WEIGHTS=plain in the environment when the call is
 * prepared turns that off).
 *
 * A product of at most 4 Mi multiply-adds runs as a primitive made for one thread whatever the
 * module's thread count (its call's |what| ends ", one thread (small)"): waking OpenMP's
 * passive worker took longer than the second thread saved (bench/small_products_bench.py;
 * CXLA_ONEDNN_SMALL=N sets the threshold, 0 turns it off).
 *
 * With CXLA_ONEDNN_SPLIT=N in the environment when the call is prepared (opt-in: it did not
 * beat OpenMP's team, docs/performance.md "oneDNN's products on cxla's pool"), a matmul
 * without batch dims or a convolution with at least 16 Mi multiply-adds per part runs as
 * up to N parts per thread: primitives made for one thread, each over its block of rows
 * (a matmul's M, a convolution's images), taken as chunks by the pool's threads; the
 * weights are prepared once per run for all of them. A part's results are the one-thread
 * primitive's, bit for bit, so a split call's do not depend on the thread count. A matmul
 * whose lhs is read transposed stays whole (a block of its rows is not a dense matrix,
 * which oneDNN's brgemm does not take). */
#ifndef CXLA_CPU_ONEDNN_H_
#define CXLA_CPU_ONEDNN_H_

#include <stdbool.h>

#include "cpu/cpu_internal.h"

/* Whether this build uses oneDNN (`cxla version` prints it). */
bool cpu_onednn_available(void);

/* Whether |instr| may get a call: a dot, a convolution, or (with oneDNN) a fusion of the
 * form above. */
bool cpu_linalg_wants(const cxla_instr *instr);

/* Prepares the call computing |instr| (a dot or convolution of static arrays from a
 * verified module, which must outlive the call; or a fusion of the form above) into
 * |out|, running oneDNN's parallel regions on |threads| threads (the executable's thread
 * count; 0: OpenMP's default), or, with |pool| (borrowed, must outlive the call), on the
 * pool's share for the runs in progress (cpu_pool_share), so that replicas running at once
 * do not oversubscribe the cores. out->what says which way it runs. Errors:
 * RESOURCE_EXHAUSTED; a oneDNN failure other than "unimplemented" is INTERNAL naming the
 * instruction. */
cxla_status cpu_linalg_prepare(const cxla_instr *instr, int threads, cpu_pool *pool, cpu_call *out);

#endif /* CXLA_CPU_ONEDNN_H_ */
