/* Which operations have a fast f32 form in cxla_math.h (see cpu_math.h). */
#include "cpu/cpu_math.h"

const char *cpu_math_f32_function(cxla_opcode op) {
    switch (op) {
    case CXLA_OP_EXP: return "cxla_f32_exp";
    case CXLA_OP_EXPM1: return "cxla_f32_expm1";
    case CXLA_OP_LOG: return "cxla_f32_log";
    case CXLA_OP_LOG1P: return "cxla_f32_log1p";
    case CXLA_OP_TANH: return "cxla_f32_tanh";
    case CXLA_OP_LOGISTIC: return "cxla_f32_logistic";
    case CXLA_OP_ERF: return "cxla_f32_erf";
    case CXLA_OP_SIN: return "cxla_f32_sin";
    case CXLA_OP_COS: return "cxla_f32_cos";
    case CXLA_OP_TAN: return "cxla_f32_tan";
    case CXLA_OP_RSQRT: return "cxla_f32_rsqrt";
    case CXLA_OP_SQRT: return "cxla_f32_sqrt";
    case CXLA_OP_CBRT: return "cxla_f32_cbrt";
    case CXLA_OP_ATAN2: return "cxla_f32_atan2";
    case CXLA_OP_POWER: return "cxla_f32_pow";
    default: return NULL;
    }
}

/* The bounds proven by running every float (docs/semantics.md, "cpu backend: fast f32
 * functions"): the float-only forms of tanh and logistic round three times (the exp part,
 * a sum, a quotient) and reach 2 ulp; the other float-only forms (exp, expm1, log, log1p,
 * erf) and the double forms stay within 1; sqrt is exact. */
int cpu_math_f32_bound_ulp(cxla_opcode op) {
    switch (op) {
    case CXLA_OP_SQRT: return 0;
    case CXLA_OP_TANH:
    case CXLA_OP_LOGISTIC: return 2;
    default: return cpu_math_f32_function(op) ? 1 : -1;
    }
}
