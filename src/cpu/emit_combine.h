/* The combine function of a collective's reducer (emit_combine.c): the C function that the
 * cpu backend compiles with the module for an all-reduce, reduce-scatter or
 * collective-reduce whose reducer is not a plain add, mul, max, min, and, or, xor, and that
 * its service step (cpu_collective.c) calls in group order:
 *
 *     void NAME(void *acc, const void *x, int64_t n);   acc[j] = reducer(acc[j], x[j]), j < n
 *
 * over elements of the reducer's type, one per byte for sub-byte integers, the reducer
 * written inline as emit_scalar.c writes reduce kernels' reducers (bit for bit the
 * interpreter's scalar evaluation, but for the documented approximations of fast math). */
#ifndef CXLA_CPU_EMIT_COMBINE_H_
#define CXLA_CPU_EMIT_COMBINE_H_

#include "base/base.h"
#include "hlo/hlo.h"

/* Whether |reducer| can be written as a combine function: two scalar parameters and a
 * scalar root, all of one element type the emitter's scalar writer takes. */
bool cpu_emit_combine_ok(const cxla_computation *reducer);

/* Appends the combine function |name| of |reducer| to |out|, with |instr| (the collective)
 * in its head comment. Errors: UNIMPLEMENTED where cpu_emit_combine_ok is false,
 * RESOURCE_EXHAUSTED. */
cxla_status cpu_emit_combine(const cxla_instr *instr, const cxla_computation *reducer,
                             const char *name, cxla_strbuf *out);

#endif /* CXLA_CPU_EMIT_COMBINE_H_ */
