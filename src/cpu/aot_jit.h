/* What ahead-of-time output (aot_dyn.c) asks of the JIT's rules for bounded dynamic shapes
 * (cpu_bounds.c), through aot_jit.c: the JIT's step header and the ahead-of-time plan's
 * name their step kinds alike, so no file includes both. */
#ifndef CXLA_CPU_AOT_JIT_H_
#define CXLA_CPU_AOT_JIT_H_

#include <stdbool.h>

#include "hlo/hlo.h"

/* cpu_bounds_kind's values that aot_dyn.c tells apart (aot_jit.c checks them). */
enum { AOT_JIT_REDUCE = 2, AOT_JIT_DOT = 3 };

/* cpu_bounds_kind(in, exact math), cpu_whole_elements, cpu_size_step_ok. */
int aot_jit_bounds_kind(const cxla_instr *in);
bool aot_jit_whole_elements(const cxla_shape *s);
bool aot_jit_size_step_ok(const cxla_instr *in);

#endif /* CXLA_CPU_AOT_JIT_H_ */
