/* The JIT's bounded-dynamic-shape rules for ahead-of-time output (aot_jit.h). */
#include "cpu/aot_jit.h"

#include "cpu/cpu_steps.h"
#include "cpu/emit.h"
#include "interp/interp.h"

_Static_assert((int)AOT_JIT_REDUCE == (int)B_REDUCE && (int)AOT_JIT_DOT == (int)B_DOT &&
                   (int)AOT_JIT_SORT == (int)B_SORT && (int)AOT_JIT_INDEXED == (int)B_INDEXED &&
                   (int)AOT_JIT_INFERRED == (int)B_INFERRED,
               "aot_jit.h's kinds");

int aot_jit_bounds_kind(const cxla_instr *in) {
    return cpu_bounds_kind(in, false);
}

bool aot_jit_whole_elements(const cxla_shape *s) {
    size_t elem = 0;
    return cpu_whole_elements(s, &elem);
}

bool aot_jit_size_step_ok(const cxla_instr *in) {
    return cpu_size_step_ok(in);
}

bool aot_jit_move_ok(const cxla_instr *in) {
    return cpu_dyn_move_ok(in);
}

bool aot_jit_float_sum_ok(const cxla_instr *in) {
    if (!cpu_dyn_reduce_ok(in)) return false;
    cxla_type t = in->shape.type;
    return (t == CXLA_F32 || t == CXLA_F64) &&
           interp_match_reducer(cxla_instr_called(in, CXLA_ATTR_TO_APPLY)) == INTERP_REDUCER_ADD;
}

bool aot_jit_sized_ok(const cxla_instr *in, const cxla_instr *at_bounds) {
    return at_bounds && cpu_dyn_sized_ok(in) && cpu_emit_sized_reduce_ok(at_bounds);
}

bool aot_jit_sized_scatter_ok(const cxla_instr *in, const cxla_instr *at_bounds) {
    return at_bounds && in->opcode == CXLA_OP_SCATTER && cpu_dyn_sized_ok(in) &&
           cpu_emit_sized_scatter_ok(at_bounds);
}
