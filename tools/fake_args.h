/* Generated inputs for `cxla run` without INPUTs, as XLA's MakeFakeArguments makes them
 * (xla/tests/test_utils.cc, MakeFakeLiteral): floats uniform in [-0.1, 0.2], pred random,
 * and integer parameters constrained by what they feed: indices of dynamic-slice,
 * dynamic-update-slice, gather and scatter drawn within the bounds of what they index,
 * integer keys of a key-value or stable sort without duplicates, and the init value of a
 * reduce whose reducer is add (or multiply) set to 0 (or 1). docs/cli.md lists the rules
 * and where cxla follows a value further than XLA does.
 *
 * Filling runs at memory speed: one typed loop per element type, the small floats
 * rounded from f32 by bit manipulation. */
#ifndef CXLA_TOOLS_FAKE_ARGS_H_
#define CXLA_TOOLS_FAKE_ARGS_H_

#include <stdbool.h>
#include <stdint.h>

#include "cxla/cxla.h"
#include "hlo/hlo.h"

/* What one entry parameter must satisfy. */
typedef struct fake_constraint {
    int64_t index_bound; /* >= 0: integers drawn in [0, index_bound]; -1: no bound */
    bool no_duplicates;  /* integers: a shuffled iota (sort keys) */
    int init_value;      /* 0 or 1: every element that value (reduce init); -1: none */
    bool non_negative;   /* floats: reaches sqrt/rsqrt/log/log1p/pow: drawn as |x| */
} fake_constraint;

/* The constraints of each entry parameter of |module| (module->entry->param_count of
 * them, malloc'ed: the caller frees). NULL when out of memory (then none apply). */
fake_constraint *fake_args_constraints(const cxla_module *module);

/* A literal of |shape| (row-major; tuples element by element) with generated values,
 * drawn from |state| (a splitmix64 state, advanced). |constraint| may be NULL. */
cxla_status fake_args_make(const cxla_shape *shape, const fake_constraint *constraint,
                           uint64_t *state, cxla_literal **out_literal);

/* Fills the array literal |literal| (in place) with values for |constraint| (may be NULL). */
void fake_args_fill(cxla_literal *literal, const fake_constraint *constraint, uint64_t *state);

#endif /* CXLA_TOOLS_FAKE_ARGS_H_ */
