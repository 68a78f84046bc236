/* The shared models (../shared/models) that compile ahead of time, on generated inputs,
 * compiled with one C compiler and compared with the interpreter (tests/cpu/test_aot.c's
 * machinery; label "models": minutes, not run by default). */
#define AOT_MODELS
#include "cpu/test_aot.c"
