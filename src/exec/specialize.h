/* Specializing a module with unbounded dynamic dimensions ('?') to the sizes of one run's
 * arguments, so that a backend can compile it like any other (docs/semantics.md, "Dynamic
 * shapes"; the cpu backend keeps a cache of such forms: src/cpu/cpu_specialize.c).
 *
 * The specialized module is a copy in which each '?' dimension of an entry parameter is
 * static at the argument's size, and every other '?' dimension takes what shape inference
 * (reshape and broadcast: the rules of exec/dynamic.h) gives it over those parameters: a
 * static size, or a bound where the value comes from a bounded one (set-dimension-size
 * ...). Values then flow as the interpreter's driver makes them: a '?' value is a literal
 * of its actual size, and so is the static value that replaces it. A '?' dimension that
 * becomes bounded is a value the driver holds at its size and the specialized module
 * holds below a bound; where an operation's result depends on that bound (below), the
 * module is not specialized. */
#ifndef CXLA_EXEC_SPECIALIZE_H_
#define CXLA_EXEC_SPECIALIZE_H_

#include <stdbool.h>
#include <stdint.h>

#include "hlo/hlo.h"

/* How many '?' dimensions the entry parameters of |m| have, counted depth-first over
 * tuple leaves in parameter order (the order of the sizes below). */
int64_t exec_unbounded_param_dims(const cxla_module *m);

/* The sizes of |args| (|arg_count|) at the '?' dimensions of |m|'s entry parameters, into
 * |sizes| (exec_unbounded_param_dims entries). False when an argument does not fit its
 * parameter (count, tuple structure, type, rank, a static size, a size beyond a bound):
 * the run is then left to the interpreter's driver, whose error message is the one to
 * give. A dynamic argument's dimension has its current size. */
bool exec_unbounded_arg_sizes(const cxla_module *m, const cxla_literal *const *args,
                              int64_t arg_count, int64_t *sizes);

/* A new module (*out, caller destroys) that is |m| (verified) with the '?' dimensions of its
 * entry parameters static at |sizes| (|count| = exec_unbounded_param_dims) and every other
 * '?' dimension bounded as above; verified; input_output_alias is dropped (leaves of '?'
 * shapes may come out at other sizes than the arguments they alias, and the specialized
 * runs do not donate). Errors, each naming the instruction:
 *   UNIMPLEMENTED: the module cannot be specialized whatever the sizes: a '?' dimension
 *     that no argument sizes (iota, constant, custom-call, a dynamic-reshape whose size
 *     is not a constant ...), an
 *     operation that refuses values below their bounds (exec/dynamic.h: EXEC_DYN_NONE)
 *     with a '?' result or operand, a shape attribute with a '?' dimension, a '?'
 *     dimension made bounded that meets an operation whose result depends on the bound
 *     (set-dimension-size, dynamic-slice, dynamic-reshape, a reshape with several dynamic
 *     result dimensions); and, at some sizes only, a computation called with unbounded
 *     values at two different shapes;
 *   INVALID_ARGUMENT: the shapes do not agree at these sizes (shape inference or the
 *     verifier fails: two '?' operands of an add with different sizes ...); the driver
 *     then gives the run its own answer;
 *   RESOURCE_EXHAUSTED. */
cxla_status exec_specialize_module(const cxla_module *m, const int64_t *sizes, int64_t count,
                                   cxla_module **out);

#endif /* CXLA_EXEC_SPECIALIZE_H_ */
