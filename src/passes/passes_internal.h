/* Helpers shared by the passes (src/passes/util.c); internal to src/passes/. */
#ifndef CXLA_PASSES_PASSES_INTERNAL_H_
#define CXLA_PASSES_PASSES_INTERNAL_H_

#include "passes/passes.h"

#define PASSES_OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* True when |in| must not be removed, duplicated, merged or reordered: its opcode is
 * SIDE_EFFECT, COLLECTIVE or half of an async pair, it is rng-bit-generator (kept as XLA
 * keeps it), or a computation it calls contains such an instruction. */
bool passes_has_side_effect(const cxla_instr *in);
/* True when |in| is named as a control predecessor by another instruction, or has some. */
bool passes_has_control_deps(const cxla_instr *in);
/* Adds to |dst| a copy of |src| (opcode, shape, attributes, literal, parameter number)
 * with |operands|, named uniquely after |src|. Control predecessors are dropped. */
cxla_status passes_clone_instr(cxla_computation *dst, const cxla_instr *src,
                               cxla_instr *const *operands, cxla_instr **out);
/* Adds an instruction with a unique name made from |base|. */
cxla_status passes_add(cxla_computation *comp, cxla_opcode op, const char *base,
                       const cxla_shape *shape, int64_t operand_count, cxla_instr *const *operands,
                       cxla_instr **out);
/* Replaces every use of |old| by |with| and removes |old| when nothing else needs it. */
cxla_status passes_replace(cxla_instr *old, cxla_instr *with);
/* Sets an INTS attribute (values copied into the arena). */
cxla_status passes_set_ints(cxla_instr *in, cxla_attr_id id, const int64_t *values, int64_t count);
/* An array shape of |type| and |dims| in the default layout, in |m|'s arena. */
cxla_status passes_array_shape(cxla_module *m, cxla_type type, int64_t rank, const int64_t *dims,
                               cxla_shape *out);
/* True for a static array shape (no tuples, tokens or dynamic dimensions). */
bool passes_is_static_array(const cxla_shape *s);
/* Element count of an array shape (INT64_MAX when it overflows). */
int64_t passes_elements(const cxla_shape *s);

#endif /* CXLA_PASSES_PASSES_INTERNAL_H_ */
