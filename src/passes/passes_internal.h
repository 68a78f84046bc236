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

/* Fusions (fusion.c, used by output_fusion.c too). A new fused computation named
 * fused_computation.N in |m|: */
cxla_status passes_new_fused_computation(cxla_module *m, cxla_computation **out);
/* Sets |fc|'s parameter list from its |count| parameter instructions (numbered 0..count-1). */
cxla_status passes_set_fusion_params(cxla_computation *fc, int64_t count);
/* Adds to |comp| a fusion of |kind| ("kLoop", "kInput", "kOutput") calling |fc|. */
cxla_status passes_make_fusion(cxla_computation *comp, cxla_computation *fc, const char *kind,
                               const cxla_shape *shape, cxla_instr *const *operands, int64_t n,
                               cxla_instr **out);
/* Row fusion (row_fusion.c): whether every use of |reduce| (a reduce of the last dimension
 * of an array shaped as |root|), followed up to |root| of its fusion, reads it at the row
 * of the element being computed: elementwise work on row values, a broadcast back along
 * the last dimension, elementwise work on the row's elements, further reduces of the
 * last dimension. */
bool passes_row_reduce_uses_rows(const cxla_instr *reduce, const cxla_instr *root);
/* Marks (in |marks|, indexed like m->comps) the computations that run as control flow from
 * |c|: itself, while bodies and conditions, conditional branches, call bodies. */
void passes_mark_control(cxla_module *m, cxla_computation *c, bool *marks, int depth);

#endif /* CXLA_PASSES_PASSES_INTERNAL_H_ */
