/* The data-driven cases of tests/hlo/cases/ on the cpu backend, each compared with its
 * EXPECT and with the interpreter (test_hlo_cases.c, included with CASES_BACKEND). */
#define _POSIX_C_SOURCE 200809L
#include "cpu/cpu.h"
#include "cpu/cpu_math.h"
#include "cpu/emit.h"
#define CASES_BACKEND          cpu_backend
#define CASES_FAST_MATH_OP(op) (cpu_math_f32_bound_ulp(op) >= 0)
#define CASES_FAST_REDUCE      cpu_emit_fast_math()
#include "hlo/test_hlo_cases.c"
