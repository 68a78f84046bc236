/* Helpers shared by the interpreter's host-facing handlers (interp_host.c: infeed,
 * outfeed, send, recv; interp_custom_call.c: custom-call), which exchange data with the
 * outside world in the layouts the module names rather than in the interpreter's
 * row-major values. */
#ifndef CXLA_INTERP_INTERP_HOST_H_
#define CXLA_INTERP_INTERP_HOST_H_

#include "interp/interp.h"

/* A copy of |lit| whose array leaves are laid out as the matching leaves of |shape|
 * (tiles and memory spaces ignored: they do not change host order); a NULL |shape|, or a
 * leaf without a layout, means row-major. |shape| must be compatible with |lit|. */
cxla_status interp_relayout_tree(const cxla_literal *lit, const cxla_shape *shape,
                                 cxla_literal **out);
/* True when every array leaf of |lit| is row-major already. */
bool interp_is_row_major(const cxla_literal *lit);
/* Annotates |s| (from outside the interpreter: a host callback, a custom call) with the
 * instruction: "name (opcode, line L): <message>". NULL stays NULL. */
cxla_status interp_annotate(cxla_status s, const cxla_instr *instr);

#endif /* CXLA_INTERP_INTERP_HOST_H_ */
