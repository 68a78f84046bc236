/* The reduce family of the interpreter, split over three files, and what they share.
 *
 *   interp_reduce.c  reduce, map; the typed reduction loops and the scalar-call helper
 *   interp_window.c  reduce-window, select-and-scatter
 *   interp_sort.c    sort, topk; element comparison
 *
 * interp_reduce_ops (interp_reduce.c) lists every handler of the family.
 */
#ifndef CXLA_INTERP_INTERP_REDUCE_H_
#define CXLA_INTERP_INTERP_REDUCE_H_

#include "interp/interp.h"

/* ---- handlers defined outside interp_reduce.c ------------------------------------ */

cxla_status interp_op_reduce_window(interp_ctx *ctx, const cxla_instr *instr,
                                    const cxla_literal *const *operands, cxla_literal **out);
cxla_status interp_op_select_and_scatter(interp_ctx *ctx, const cxla_instr *instr,
                                         const cxla_literal *const *operands, cxla_literal **out);
cxla_status interp_op_sort(interp_ctx *ctx, const cxla_instr *instr,
                           const cxla_literal *const *operands, cxla_literal **out);
cxla_status interp_op_topk(interp_ctx *ctx, const cxla_instr *instr,
                           const cxla_literal *const *operands, cxla_literal **out);
/* XLA's TopK custom call with a comparator that is not a plain greater-than or less-than
 * (interp_op_topk runs those), as XLA's TopkDecomposer defines it: each row of |x| along
 * its last dimension sorted stably by |comp| (called with the two values, or with the two
 * values and their two s32 indices when it takes four parameters), its first |k| elements
 * and their s32 indices, as the tuple |instr|'s shape names. */
cxla_status interp_topk_by(interp_ctx *ctx, const cxla_instr *instr, const cxla_literal *x,
                           const cxla_computation *comp, int64_t k, cxla_literal **out);

/* ---- index spaces (interp_reduce.c) ---------------------------------------------- */

/* The elements a reduction visits, in row-major order of a |rank|-dimensional index
 * space: element (i_0, ..., i_{rank-1}) lies at element offset
 * base + offsets[0][i_0] + ... + offsets[rank-1][i_{rank-1}] of the array, or, when any
 * offsets[j][i_j] is negative, outside it (padding, a base-dilation hole): such an
 * element takes the reduction's init value. Rank 0 is one element at |base|. */
typedef struct interp_space {
    int64_t rank;
    int64_t count;                 /* product of sizes */
    const int64_t *sizes;          /* rank entries */
    const int64_t *const *offsets; /* rank tables of sizes[j] entries */
} interp_space;

/* A position in a space: the multi-index, the sum of the valid offsets and how many
 * dimensions are outside the array. */
typedef struct interp_cursor {
    int64_t index[CXLA_MAX_RANK];
    int64_t offset;
    int64_t outside;
} interp_cursor;
void interp_cursor_seek(const interp_space *space, int64_t linear, interp_cursor *c);
void interp_cursor_next(const interp_space *space, interp_cursor *c);

/* True when |kind| has a typed loop for elements of |type|. */
bool interp_reducer_supports(interp_reducer kind, cxla_type type);
/* Folds the elements of |space| (in |data|, elements of |type|, from |base|) into |acc|,
 * which holds the starting value: acc = kind(acc, x) for each x, elements outside the
 * array taking |init|. Float add (f32, f64) sums pairwise; f16/bf16/f8 round to their
 * type after every step; integers wrap; max/min propagate NaN. Needs
 * interp_reducer_supports(kind, type). */
void interp_reduce_space(interp_reducer kind, cxla_type type, const void *data, int64_t base,
                         const interp_space *space, const void *init, void *acc);

/* ---- calling scalar computations (interp_reduce.c) ------------------------------- */

/* A computation over scalars with one reusable rank-0 literal per parameter: set the
 * arguments with interp_scalar_set_arg, then call. */
typedef struct interp_scalar_fn {
    interp_ctx *ctx;
    const cxla_instr *instr; /* for error messages */
    const cxla_computation *comp;
    int64_t arg_count;
    cxla_literal **args;
    size_t *arg_sizes;
} interp_scalar_fn;
/* Fails when a parameter of |comp| is not a scalar array. */
cxla_status interp_scalar_fn_init(interp_scalar_fn *f, interp_ctx *ctx, const cxla_instr *instr,
                                  const cxla_computation *comp);
void interp_scalar_fn_deinit(interp_scalar_fn *f);
/* Parameter |i| must have element type |type|: an error otherwise. */
cxla_status interp_scalar_fn_expect(const interp_scalar_fn *f, int64_t i, cxla_type type);
/* Copies one element (of parameter |i|'s type) into argument |i|. */
void interp_scalar_set_arg(interp_scalar_fn *f, int64_t i, const void *element);
/* Calls the computation; |out| gets its result (a new literal). */
cxla_status interp_scalar_call(interp_scalar_fn *f, cxla_literal **out);
/* The |k|-th of |n| scalar results of |result| (a scalar when n == 1, else a tuple), which
 * must have element type |type|; NULL (and an error in |status|) otherwise. */
const void *interp_scalar_result(const interp_scalar_fn *f, const cxla_literal *result, int64_t k,
                                 int64_t n, cxla_type type, cxla_status *status);

/* ---- results (interp_reduce.c) --------------------------------------------------- */

/* New zero-filled results of a variadic op: |n| arrays of the instruction's shape (a tuple
 * of n arrays when |tuple|), each checked to have |rank| dims |dims| and element type
 * types[i]; an error naming the instruction otherwise. |out| gets a malloc'd array. */
cxla_status interp_reduce_new_results(const cxla_instr *instr, int64_t n, bool tuple, int64_t rank,
                                      const int64_t *dims, const cxla_type *types,
                                      cxla_literal ***out);
/* The result: res[0] itself, or a tuple of the n results; takes |res| and its literals. */
cxla_status interp_reduce_pack_results(cxla_literal **res, int64_t n, bool tuple,
                                       cxla_literal **out);
/* Frees |n| literals and the array holding them. */
void interp_reduce_free_literals(cxla_literal **lits, int64_t n);

/* ---- comparisons (interp_sort.c) ------------------------------------------------- */

/* The comparison of a comparator such as `ROOT c = pred[] compare(p0, p1), direction=LT`
 * whose operands are parameters 0 and 1 (in either order), in a form that compares
 * elements without calling the computation. */
typedef enum interp_direction {
    INTERP_DIR_NONE = 0,
    INTERP_DIR_EQ,
    INTERP_DIR_NE,
    INTERP_DIR_LT,
    INTERP_DIR_LE,
    INTERP_DIR_GT,
    INTERP_DIR_GE,
} interp_direction;
typedef struct interp_comparator {
    interp_direction direction; /* NONE: not recognized */
    bool total_order;           /* floats: TOTALORDER (-NaN < -Inf < -0 < +0 < Inf < NaN) */
    bool canonical;             /* floats: NaNs compare as +NaN and -0 as +0 first */
    cxla_type type;             /* element type of parameters 0 and 1 */
} interp_comparator;
/* Recognizes a compare of parameter 0 with parameter 1 (or 1 with 0, the direction then
 * reversed) whose element type is ordered (not complex) and whose comparison type is the
 * default for it or TOTALORDER. Also JAX's float sort comparator, a TOTALORDER compare of
 * the parameters canonicalized as select(x != x, nan, select(x == 0, 0, x)). */
interp_comparator interp_match_comparator(const cxla_computation *comp);
/* Compares |a| and |b| (elements of c->type) as the recognized comparator does. */
bool interp_comparator_holds(const interp_comparator *c, const void *a, const void *b);
/* -1, 0 or 1 as a < b, a == b, a > b; 2 when unordered (NaN outside total order). */
int interp_compare_elements(cxla_type type, bool total_order, const void *a, const void *b);
/* Whether |direction| holds for a comparison result of interp_compare_elements. */
bool interp_direction_holds(interp_direction direction, int cmp);

#endif /* CXLA_INTERP_INTERP_REDUCE_H_ */
