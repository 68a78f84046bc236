/* What ahead-of-time output (aot_dyn.c) asks of the JIT's rules for bounded dynamic shapes
 * (cpu_bounds.c), through aot_jit.c: the JIT's step header and the ahead-of-time plan's
 * name their step kinds alike, so no file includes both. */
#ifndef CXLA_CPU_AOT_JIT_H_
#define CXLA_CPU_AOT_JIT_H_

#include <stdbool.h>

#include "hlo/hlo.h"

/* cpu_bounds_kind's values that aot_dyn.c tells apart (aot_jit.c checks them). */
enum {
    AOT_JIT_REDUCE = 2,
    AOT_JIT_DOT = 3,
    AOT_JIT_SORT = 4,
    AOT_JIT_INDEXED = 5,
    AOT_JIT_INFERRED = 7
};

/* cpu_bounds_kind(in, exact math), cpu_whole_elements, cpu_size_step_ok. */
int aot_jit_bounds_kind(const cxla_instr *in);
bool aot_jit_whole_elements(const cxla_shape *s);
bool aot_jit_size_step_ok(const cxla_instr *in);
/* cpu_dyn_move_ok: |in| is one of the JIT's moves by the run-time sizes (reshape,
 * concatenate, pad, reverse, dynamic-slice, dynamic-update-slice, dynamic-reshape of whole
 * elements, ranks up to 8, up to 16 moved operands). */
bool aot_jit_move_ok(const cxla_instr *in);
/* Whether |in| is a reduce the JIT's dynamic reduce takes (cpu_dyn_reduce_ok) that sums
 * f32 or f64 (its reducer an add): the interpreter's pairwise sum at the actual size. */
bool aot_jit_float_sum_ok(const cxla_instr *in);
/* Whether |in| is a reduce the JIT runs as a kernel whose loops read the inputs' run-time
 * sizes (cpu_dyn_sized_ok), emitted from |at_bounds| (its copy without the dynamic marks;
 * cpu_emit_sized_reduce_ok): any reducer, several inputs (an argmax). */
bool aot_jit_sized_ok(const cxla_instr *in, const cxla_instr *at_bounds);
/* Whether |in| is a scatter the JIT runs as its sized kernel (cpu_dyn_sized_ok: dynamic
 * update windows, which no rewrite of the indices shortens), emitted from |at_bounds|
 * (cpu_emit_sized_scatter_ok). */
bool aot_jit_sized_scatter_ok(const cxla_instr *in, const cxla_instr *at_bounds);

#endif /* CXLA_CPU_AOT_JIT_H_ */
