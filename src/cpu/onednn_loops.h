/* The parts of the cpu backend's dot and convolution calls (onednn.h) that are not oneDNN
 * (onednn_loops.c): the interpreter's handler run on the buffers ("loops"), and a kOutput
 * fusion (src/passes/epilogue.h) that oneDNN does not take whole run as its product's call
 * followed by the epilogue as loops; shared with onednn.c, which matches the same fusions.
 * Internal to src/cpu. */
#ifndef CXLA_CPU_ONEDNN_LOOPS_H_
#define CXLA_CPU_ONEDNN_LOOPS_H_

#include <stdbool.h>
#include <stdint.h>

#include "cpu/onednn.h"
#include "passes/epilogue.h"

/* A kOutput fusion (src/passes/epilogue.h): with oneDNN, one primitive whose bias and
 * post-ops compute the epilogue before the product is stored: the first vector add
 * right after the product is oneDNN's bias, the other vector adds, subtracts and
 * multiplies are binary post-ops over a per-feature vector, scales are linear post-ops,
 * all in f32.
 * oneDNN's relu (and clip) turn NaN into 0 where maximum keeps it, so relu is not a
 * post-op: the matcher lets only positive scales follow it (they commute with it), and it
 * runs last, as a loop over the result that keeps NaN.
 *
 * When oneDNN does not take the fusion (or the build has no oneDNN), the product runs as
 * a call of its own into the result and the epilogue as loops over it, each operation
 * rounded to f32 as the interpreter rounds it. */
typedef struct cpu_post_ops {
    cxla_epilogue e;
    int64_t core_in[2];           /* the fusion operands of the product's lhs and rhs */
    int64_t vec_in[CXLA_EPI_MAX]; /* the fusion operand of each op's vector, or -1 */
    bool relu;                    /* a relu, run after the others */
} cpu_post_ops;

/* Whether |f| is such a fusion; fills |po|. */
bool cpu_linalg_match_fusion(const cxla_instr *f, cpu_post_ops *po);

/* The elements of |s|'s dims. */
int64_t cpu_linalg_elements(const cxla_shape *s);

/* maximum(y, +0) over the |n| elements at |out| of type |t| (f32, bf16, f16), as the
 * interpreter computes it (NaN stays). */
void cpu_linalg_relu(cxla_type t, void *out, int64_t n);

/* The call running the interpreter's handler of |instr| (a dot or convolution) on the
 * buffers, bit for bit the interpreter's. Errors: RESOURCE_EXHAUSTED. */
cxla_status cpu_linalg_loops_prepare(const cxla_instr *instr, cpu_call *out);

/* The call of the fusion |instr| (cpu_linalg_match_fusion) as its product's call, then the
 * epilogue's loops. Errors: as cpu_linalg_prepare. */
cxla_status cpu_linalg_epilogue_prepare(const cxla_instr *instr, int threads, cpu_pool *pool,
                                        cpu_call *out);

/* The call of the product |instr| alone: oneDNN, else the loops (onednn.c). */
cxla_status cpu_linalg_product_prepare(const cxla_instr *instr, int threads, cpu_pool *pool,
                                       cpu_call *out);

#endif /* CXLA_CPU_ONEDNN_LOOPS_H_ */
