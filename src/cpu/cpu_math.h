/* The cpu backend's fast f32 functions (src/cpu/cxla_math.h) as the C emitter sees them:
 * the header's text, to paste into every generated source (and ahead-of-time output)
 * before the kernels, and which operation calls which function.
 *
 * The build embeds the header (cmake/cxla_embed.cmake writes the definition of
 * cpu_math_source under the build directory), so generated code and the library's tests
 * see the same text. The bounds are documented in docs/semantics.md ("cpu backend: fast
 * f32 functions") and checked by tests/cpu/test_cpu_math.c. Nothing here fails. */
#ifndef CXLA_CPU_CPU_MATH_H_
#define CXLA_CPU_CPU_MATH_H_

#include "hlo/hlo.h"

/* The text of cxla_math.h: a static NUL-terminated string owned by the library. */
const char *cpu_math_source(void);

/* The name of the fast function for |op| on f32 ("cxla_f32_exp"; "cxla_f32_pow" for power
 * and "cxla_f32_atan2" take two arguments, the others one), or NULL when |op| has none
 * (the emitter then writes the interpreter's (float)fn((double)x) with libm). A static
 * string. */
const char *cpu_math_f32_function(cxla_opcode op);

/* The documented bound in ulp of that function against the interpreter's f32 result
 * (0 for sqrt, 2 for tanh and logistic, 1 for the others), or -1 when |op| has no fast
 * function. Results in bf16, f16 (computed in f32, then rounded) are within 1 ulp of their
 * own type whatever this bound (docs/semantics.md). */
int cpu_math_f32_bound_ulp(cxla_opcode op);

#endif /* CXLA_CPU_CPU_MATH_H_ */
