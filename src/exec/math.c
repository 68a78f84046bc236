/* The table of unary math functions (exec/math.h), indexed by opcode. */
#include "exec/math.h"

static const exec_math_info table[CXLA_OP_COUNT] = {
#define X(OP, FN, L64, L32)                                                                        \
    [CXLA_OP_##                                                                                    \
        OP] = {.op = CXLA_OP_##OP, .fn = FN, .fn_name = #FN, .libm_f64 = L64, .libm_f32 = L32},
    EXEC_MATH_UNARY(X)
#undef X
};

const exec_math_info *exec_math_unary(cxla_opcode op) {
    if ((int)op < 0 || op >= CXLA_OP_COUNT || !table[op].fn) return NULL;
    return &table[op];
}
