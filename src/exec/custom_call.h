/* The custom-call registry and calling convention that every backend shares
 * (cxla/custom_call.h is the public side): where a target name leads (the registry that
 * cxla_custom_call_register fills, the built-in targets, the process's symbols), how an
 * instruction's attributes read (api_version, the opaque backend_config bytes,
 * output_to_operand_aliasing), and how a foreign function is called by its signature.
 * Each backend marshals its own buffers and runs the built-in targets in its own way
 * (the interpreter: src/interp/interp_custom_call.c). */
#ifndef CXLA_EXEC_CUSTOM_CALL_H_
#define CXLA_EXEC_CUSTOM_CALL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxla/custom_call.h"
#include "exec/exec.h"
#include "hlo/hlo.h"

/* Where a status-returning target reports failure; the caller owns it (zero-initialized
 * before the call, exec_custom_call_status_clear after). */
struct cxla_custom_call_status {
    bool failed;
    char *message; /* NULL: none given (or no memory for it) */
};
void exec_custom_call_status_clear(cxla_custom_call_status *status);

/* XLA's spelling of |api| ("API_VERSION_ORIGINAL", ...). */
const char *exec_custom_call_api_name(cxla_custom_call_api_version api);

/* The function registered under |name| and its signature; false when none is. */
bool exec_custom_call_lookup(const char *name, cxla_custom_call_fn *fn,
                             cxla_custom_call_api_version *api);

/* The built-in targets (cxla/custom_call.h, docs/semantics.md), by what they do; each
 * backend implements each kind. */
typedef enum exec_builtin_target {
    EXEC_BUILTIN_NONE = 0,
    /* The operand (one operand) or the tuple of the operands: annotations that mean
     * nothing on one device (sharding, memory spaces). */
    EXEC_BUILTIN_IDENTITY,
    /* A fresh buffer of the result shape (zeros). */
    EXEC_BUILTIN_ALLOCATE,
    /* topk with k the result's last dimension, largest by the comparator. */
    EXEC_BUILTIN_TOPK,
    /* A call of the instruction's decomposition (exec_custom_call_decomposition): XLA's
     * builder library functions, `xla_builder.*` targets. */
    EXEC_BUILTIN_DECOMPOSITION,
    EXEC_BUILTIN_COUNT,
} exec_builtin_target;
/* The built-in target named |name|, or EXEC_BUILTIN_NONE (a decomposition is not told by
 * the name alone: exec_custom_call_decomposition). */
exec_builtin_target exec_custom_call_builtin(const char *name);

/* XLA's builder emits its library functions (xla_builder.math.Acos,
 * xla_builder.prng.ScramblePhiloxKey ...) as custom calls whose target starts with
 * "xla_builder." and which carry their decomposition as their one called computation
 * (called_computations={f}): the result is f applied to the operands. That computation,
 * or NULL when |instr| is not such a custom call. Whether a registered function of the
 * target's name runs instead is exec_custom_call_resolve's to say. */
cxla_computation *exec_custom_call_decomposition(const cxla_instr *instr);
/* The prefix of those targets. */
#define EXEC_DECOMPOSITION_PREFIX "xla_builder."

/* The target a custom-call names: where the registry, then the built-ins, then the
 * decomposition an `xla_builder.*` call carries, then the process's symbols (dlsym) lead.
 * Exactly one of |*fn| (a foreign function, called with |*api|) and |*builtin| is set. Errors
 * (naming |instr|): no custom_call_target, an unknown or unsupported api_version, a registered
 * signature other than the one the instruction uses, a target found nowhere (NOT_FOUND; for an
 * `xla_builder.*` target without a decomposition, saying so). */
cxla_status exec_custom_call_resolve(const cxla_instr *instr, const char **out_target,
                                     cxla_custom_call_fn *fn, cxla_custom_call_api_version *api,
                                     exec_builtin_target *builtin);

/* The opaque bytes: backend_config's string, unescaped (C escapes, as XLA prints it), or
 * its text verbatim when it is not a quoted string. |*out| is malloc'd, NUL-terminated. */
cxla_status exec_custom_call_opaque(const cxla_instr *instr, char **out, size_t *out_len);

/* Array leaves of |s|, depth-first (a token counts as one leaf; an array is one). */
int64_t exec_leaf_count(const cxla_shape *s);

/* Reads output_to_operand_aliasing: alias[out_leaf] = the flattened input leaf (over all
 * operands, depth-first) that shares its buffer, or -1. Errors: malformed text. */
cxla_status exec_custom_call_aliasing(const cxla_instr *instr, int64_t *alias, int64_t out_leaves);

/* Calls |fn| with the signature |api| names; a failure it reports lands in |status|.
 * |cancel| (the calling run's, may be NULL) is exec_cancel_current() during the call. */
void exec_custom_call_invoke(cxla_custom_call_fn fn, cxla_custom_call_api_version api, void *out,
                             const void **in, const char *opaque, size_t opaque_len,
                             cxla_custom_call_status *status, exec_cancel *cancel);

#endif /* CXLA_EXEC_CUSTOM_CALL_H_ */
