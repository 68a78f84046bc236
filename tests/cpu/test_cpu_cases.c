/* The data-driven cases of tests/hlo/cases/ on the cpu backend, each compared with its
 * EXPECT and with the interpreter (test_hlo_cases.c, included with CASES_BACKEND). */
#define _POSIX_C_SOURCE 200809L
#include "cpu/cpu.h"
#define CASES_BACKEND cpu_backend
#include "hlo/test_hlo_cases.c"
