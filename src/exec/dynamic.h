/* Dynamic dimensions: the rules that are functions of shapes, which every backend
 * applies the same way (docs/semantics.md, "Dynamic shapes"; the interpreter's use of
 * them is src/interp/interp_dynamic.c): how each operation treats values below their
 * bounds, and the result sizes of reshape and broadcast for given operand sizes. */
#ifndef CXLA_EXEC_DYNAMIC_H_
#define CXLA_EXEC_DYNAMIC_H_

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include "hlo/hlo.h"

/* The messages of the size rules' errors (printf formats, every argument an int64_t),
 * shared by exec_dynamic_sizes and the ahead-of-time output, which writes the same rules
 * as C (src/cpu/aot_dyn.c), so that both say what the interpreter says. */
#define EXEC_DYN_MSG_DISAGREE                                                                      \
    "dynamic sizes disagree: operand %" PRId64 " has size %" PRId64 " in dimension %" PRId64       \
    " but operand %" PRId64 " has size %" PRId64 " in dimension %" PRId64
#define EXEC_DYN_MSG_STATIC_RESULT                                                                 \
    "dimension %" PRId64 " of the result is static (%" PRId64 ") but has %" PRId64                 \
    " elements at the operands' dynamic sizes"
#define EXEC_DYN_MSG_BEYOND_BOUND                                                                  \
    "dimension %" PRId64 " of the result has %" PRId64 " elements, beyond its bound %" PRId64
#define EXEC_DYN_MSG_RESHAPE_STATIC                                                                \
    "the operand holds %" PRId64 " elements at its dynamic sizes but the static result holds "     \
    "%" PRId64
#define EXEC_DYN_MSG_RESHAPE_MULTIPLE                                                              \
    "the operand holds %" PRId64 " elements at its dynamic sizes, not a multiple of the %" PRId64  \
    " of the result's static dimensions"
#define EXEC_DYN_MSG_SLICE_PAST                                                                    \
    "slice [%" PRId64 ":%" PRId64 ":%" PRId64 "] of dimension %" PRId64                            \
    " reads past its dynamic size %" PRId64
/* set-dimension-size's (the interpreter's and the backends'). */
#define EXEC_DYN_MSG_SET_SIZE                                                                      \
    "size %" PRId64 " of dimension %" PRId64 " is outside its bound 0..%" PRId64

/* How an operation meets operands below their bounds. */
typedef enum exec_dyn_kind {
    EXEC_DYN_NONE = 0,      /* cannot leave the padding out: an error */
    EXEC_DYN_PASS,          /* passes values along whole, or handles sizes itself */
    EXEC_DYN_INFER,         /* result shape by shape inference on the cut operands */
    EXEC_DYN_SAME,          /* EXEC_DYN_INFER; operands of the largest rank line up dim by dim */
    EXEC_DYN_CONCAT,        /* EXEC_DYN_SAME except the concatenated dimension */
    EXEC_DYN_DOT,           /* EXEC_DYN_INFER; batch and contracting dimensions line up */
    EXEC_DYN_RESHAPE,       /* the sizes move through the reshape (reshape_sizes) */
    EXEC_DYN_BROADCAST,     /* mapped dims take the operand's sizes */
    EXEC_DYN_SLICE,         /* limits clamped to the sizes */
    EXEC_DYN_DYNAMIC_SLICE, /* full-bound slices follow the size; others must fit it */
} exec_dyn_kind;

/* The kind of |op| (elementwise operations are EXEC_DYN_SAME). */
exec_dyn_kind exec_dynamic_kind(cxla_opcode op);
/* Whether |s| (or a tuple element at any depth) has an unbounded ('?') dimension. */
bool exec_shape_has_unbounded(const cxla_shape *s);
/* Whether dimension |d| of |s| is dynamic (false when out of range). */
bool exec_shape_dim_dynamic(const cxla_shape *s, int64_t d);

/* reshape |in| of an operand of shape |xs| whose dimensions have sizes |r|: |o| gets the
 * result's sizes (static result dimensions keep theirs; the dynamic ones take what the
 * element count leaves them). Errors (naming |in|): sizes that do not fill the result,
 * several dynamic result dimensions the count cannot tell apart. */
cxla_status exec_dynamic_reshape_sizes(const cxla_instr *in, const cxla_shape *xs, const int64_t *r,
                                       int64_t *o);
/* broadcast |in| of an operand of |operand_rank| dimensions with sizes |r|: mapped result
 * dimensions take the operand's sizes, the others keep theirs. Errors: dimensions= out of
 * range, an unbounded result dimension no operand dimension gives a size. */
cxla_status exec_dynamic_broadcast_sizes(const cxla_instr *in, int64_t operand_rank,
                                         const int64_t *r, int64_t *o);

/* Whether a kernel of |in| run at the bounds (every dimension at its bound, the operands'
 * padding read as if it were values) gives its value below the result's sizes: element i
 * of the result then reads only operand elements below their sizes whenever i lies below
 * the result's sizes. True for elementwise operations (a static operand lined up with a
 * dynamic one is cut to its size: its extra elements only meet padding), broadcast,
 * transpose, slice (its range clamped to the size), concatenate along a static dimension,
 * iota (no operands), sort along a dimension static in every operand (a tuple result:
 * every element takes the operands' lined-up sizes), gather from a static operand,
 * a reshape whose operand and result
 * are dynamic in their outermost dimension only (the value is a prefix of the buffer on
 * both sides), any instruction whose shapes are all static, and fusions of these (static
 * constants inside); false where some dimension is unbounded. The backends use it to run
 * their kernels over buffers at the bounds (src/cpu/cpu_steps.c). */
bool exec_dynamic_positionwise(const cxla_instr *in);

/* Whether exec_dynamic_sizes can never fail for |in| (exec_dynamic_positionwise, not a
 * fusion): no two operands that may have different sizes line up (the dynamic dimensions
 * lined up all take their size from one dimension of one instruction, through elementwise
 * operations, broadcasts and transposes), and every result dimension that a dynamic size
 * reaches is dynamic with a bound that holds it. The fusion pass fuses only such dynamic
 * instructions, so that the errors keep naming the instruction the user wrote. */
bool exec_dynamic_cannot_fail(const cxla_instr *in);

/* The size rule of one instruction (not a fusion, not a sort of several operands): what
 * exec_dynamic_sizes computes for it, as plain data. exec_dynamic_sizes applies it, and the
 * ahead-of-time output prints it as C statements (src/cpu/aot_dyn.c), so that the two
 * cannot differ. Applied to operand sizes r[k][d] that are not all at their bounds (else
 * the result is at its bounds): first each group of slots lines up (the dynamic sizes
 * among them must agree: EXEC_DYN_MSG_DISAGREE; the static ones are cut to theirs), then
 * each result dimension j takes out[j] (or, |reshape|, exec_dynamic_reshape_sizes on
 * operand 0's sizes), then the result is checked against the declared shape
 * (EXEC_DYN_MSG_STATIC_RESULT, EXEC_DYN_MSG_BEYOND_BOUND). */
typedef enum exec_dyn_out_kind {
    EXEC_DYN_OUT_COPY,  /* r[k][d] */
    EXEC_DYN_OUT_CONST, /* v */
    EXEC_DYN_OUT_SUM,   /* the sum of r[k][d] over every operand k (concatenate) */
    /* slice start:limit:stride of r[k][d], the limit clamped to the size and the start to
     * the limit: (limit - start + stride - 1) / stride; a static result dimension that
     * does not come out at v is OUT_OF_RANGE, EXEC_DYN_MSG_SLICE_PAST */
    EXEC_DYN_OUT_SLICE,
} exec_dyn_out_kind;

typedef struct exec_dyn_out {
    exec_dyn_out_kind kind;
    int64_t k, d, v;
    int64_t start, limit, stride; /* EXEC_DYN_OUT_SLICE */
    bool check_static;            /* EXEC_DYN_OUT_SLICE: the result dimension is static (v) */
} exec_dyn_out;

/* A group of slots that line up: (k[i], d[i]) for i < count (k and d point into the
 * rule's own block, room for one slot per operand). */
typedef struct exec_dyn_group {
    int64_t count;
    int64_t *k, *d;
} exec_dyn_group;

typedef struct exec_dyn_rule {
    int64_t group_count;
    exec_dyn_group *groups; /* owned: exec_dynamic_rule_free */
    int64_t *slots;         /* owned: the groups' k and d */
    bool reshape;
    int64_t rank; /* the result's */
    exec_dyn_out out[CXLA_MAX_RANK];
} exec_dyn_rule;

/* The rule of |in| into *out (exec_dynamic_rule_free releases it, also after an error).
 * Errors (naming |in|): INTERNAL where there is no rule (an operand that is not an array,
 * attributes out of range, an operation without one: exec_dynamic_sizes covers the rest),
 * UNIMPLEMENTED for an unbounded broadcast dimension without a size, INVALID_ARGUMENT for a
 * malformed slice= or broadcast dimensions=, RESOURCE_EXHAUSTED. */
cxla_status exec_dynamic_rule(const cxla_instr *in, exec_dyn_rule *out);
void exec_dynamic_rule_free(exec_dyn_rule *rule);

/* The result sizes of |in| for operand sizes |ops| (ops[k]: one entry per dimension of
 * array operand k): out[0] for an array result, out[e] for element e of a fusion's tuple
 * root. The interpreter's rules and errors (src/interp/interp_dynamic.c) without the
 * values: when no operand is below its bounds the result is at its bounds; otherwise the
 * operands line up (two dynamic sizes that differ: INVALID_ARGUMENT naming both), the
 * result takes the sizes that come out, and a static result dimension must come out at
 * its size, a bounded one within its bound (INVALID_ARGUMENT naming the instruction).
 * Covers what exec_dynamic_positionwise accepts, a reduce of one input, dot, concatenate
 * along any dimension and reverse; INTERNAL for others. */
cxla_status exec_dynamic_sizes(const cxla_instr *in, const int64_t *const *ops,
                               int64_t *const *out);

#endif /* CXLA_EXEC_DYNAMIC_H_ */
