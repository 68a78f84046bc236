/* The memory a module needs at least (interp_memory.c says the model): its entry
 * parameters' bytes, its constants' (every computation's, once), and the largest set of
 * other array values live at once along the interpreter's schedule, called computations
 * and loop bodies included. */
#ifndef CXLA_INTERP_INTERP_MEMORY_H_
#define CXLA_INTERP_INTERP_MEMORY_H_

#include "hlo/hlo.h"

typedef struct interp_memory_bound {
    size_t params, constants, live;
} interp_memory_bound;
/* Errors: out of memory, a module without entry, calls nested past 200. */
cxla_status interp_live_bound(const cxla_module *m, interp_memory_bound *out);
/* The bytes of the array leaves of |s| (bounded dimensions at their bounds). */
size_t interp_shape_bytes(const cxla_shape *s);

#endif /* CXLA_INTERP_INTERP_MEMORY_H_ */
