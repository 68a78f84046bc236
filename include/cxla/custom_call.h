/* cxla/custom_call.h: functions that a module calls through `custom-call`.
 *
 * A custom-call instruction names a target (custom_call_target="name"). When a module
 * runs, cxla looks the name up:
 *   1. in the registry that cxla_custom_call_register fills (process-wide, thread-safe);
 *   2. among the built-in targets that carry a documented meaning in XLA's dumps
 *      ("Sharding", "SPMDFullToShardShape", "MoveToHost", "TopK", ... : docs/semantics.md);
 *   3. among the process's symbols (dlsym(RTLD_DEFAULT, name)): functions exported by the
 *      program (link it with -rdynamic) or by a shared library loaded with RTLD_GLOBAL
 *      (LD_PRELOAD works too). Such a function is called as the instruction's
 *      api_version says.
 * A target found nowhere is an error naming the target and the instruction.
 *
 * Calling convention (XLA's on CPU):
 *   - |in| holds one pointer per array leaf of the operands, in order, tuple operands
 *     flattened depth-first (a token leaf gets NULL). Each buffer is in the layout that
 *     operand_layout_constraints gives for it, or else the layout of the operand's shape
 *     in the module (row-major when none is written). The buffers are read-only.
 *   - |out| is the result buffer when the result is an array; when the result is a tuple,
 *     |out| is an array of pointers, one per leaf of the result (depth-first, flattened).
 *     Result buffers are in the layout of the instruction's shape and start zero-filled.
 *   - |opaque| is the instruction's backend_config string (unescaped; "" when absent).
 *   - A function reports failure with cxla_custom_call_status_set_failure; the run then
 *     stops with an error naming the target, the instruction and the message.
 */
#ifndef CXLA_CUSTOM_CALL_H_
#define CXLA_CUSTOM_CALL_H_

#include <stddef.h>

#include "cxla/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The signature of a target, as the instruction's api_version= names it (XLA's
 * CustomCallApiVersion, same numbers). */
typedef enum cxla_custom_call_api_version {
    CXLA_CUSTOM_CALL_API_UNSPECIFIED = 0, /* as ORIGINAL */
    /* void f(void *out, const void **in) */
    CXLA_CUSTOM_CALL_API_ORIGINAL = 1,
    /* void f(void *out, const void **in, cxla_custom_call_status *status) */
    CXLA_CUSTOM_CALL_API_STATUS_RETURNING = 2,
    /* void f(void *out, const void **in, const char *opaque, size_t opaque_len,
     *        cxla_custom_call_status *status) */
    CXLA_CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED = 3,
    /* XLA's typed FFI (handlers with typed buffers and attributes): not supported; a
     * module that uses it fails with an error that says so. */
    CXLA_CUSTOM_CALL_API_TYPED_FFI = 4,
} cxla_custom_call_api_version;

/* Where a status-returning target reports failure (XLA's XlaCustomCallStatus). Owned by
 * cxla; valid only during the call. A target that never touches it succeeds. */
typedef struct cxla_custom_call_status cxla_custom_call_status;

/* A target of any signature; cast it to the one its api_version names. */
typedef void (*cxla_custom_call_fn)(void);
typedef void (*cxla_custom_call_original_fn)(void *out, const void **in);
typedef void (*cxla_custom_call_status_returning_fn)(void *out, const void **in,
                                                     cxla_custom_call_status *status);
typedef void (*cxla_custom_call_unified_fn)(void *out, const void **in, const char *opaque,
                                            size_t opaque_len, cxla_custom_call_status *status);

/* Registers |fn| under |name| (copied) with the signature |api_version| names, for every
 * module run in this process afterwards. Registering a name again replaces its function;
 * a NULL |fn| removes the name. A custom-call whose api_version differs from the
 * registered one fails (calling a function with the wrong signature is undefined).
 * Errors: an empty name, TYPED_FFI or an unknown version (INVALID_ARGUMENT). */
cxla_status cxla_custom_call_register(const char *name, cxla_custom_call_fn fn,
                                      cxla_custom_call_api_version api_version);

/* Marks the call failed with |message| (copied; NULL gives a generic message). The
 * last failure set wins. */
void cxla_custom_call_status_set_failure(cxla_custom_call_status *status, const char *message);
/* Marks the call successful again (the initial state). */
void cxla_custom_call_status_set_success(cxla_custom_call_status *status);

#ifdef __cplusplus
}
#endif
#endif /* CXLA_CUSTOM_CALL_H_ */
