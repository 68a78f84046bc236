/* Output fusions: a dot or convolution with the elementwise work after it (an epilogue),
 * as the `output-fusion` pass forms them (kind=kOutput) and the cpu backend runs them
 * (src/cpu/onednn.c: oneDNN's bias and post-ops, or the product then a loop over it).
 *
 * One matcher serves both, so the pass forms only what the backend takes. An epilogue is
 * a chain of operations of the product's result type T (f32, bf16 or f16) from the
 * product to the fusion's root, each taking the previous value as one operand (vectors
 * and scalars are of type T too):
 *   - add or multiply with a broadcast of a vector along the product's output features
 *     (a dot's rhs free dims, a convolution's output feature dim; the vector has exactly
 *     those dims, in order, and the broadcast's dimensions name them), or subtract such a
 *     vector from the chain: EPI_ADD_VEC, EPI_MUL_VEC, EPI_SUB_VEC;
 *   - multiply with a broadcast of a scalar constant: EPI_SCALE;
 *   - maximum with a broadcast of the constant +0: EPI_RELU, at most once, followed
 *     only by EPI_SCALE with constants > 0 (so that it commutes with them and can run
 *     last, as a loop that keeps NaN);
 *   - tanh of an f32 chain (a dense layer's activation: oneDNN's eltwise post-op, within
 *     1 ulp of the interpreter's tanh, docs/semantics.md), not after a relu: EPI_TANH;
 *   - last, after a dot, a convert of an f32 chain to bf16 (a product accumulated in f32
 *     and stored narrow, as JAX writes a dot with preferred_element_type=f32 and a
 *     convert): EPI_CONVERT; the fusion's type is then bf16, T stays f32 (a fusion given
 *     whole may also convert to f16, or after a convolution: see cxla_epilogue_step);
 *   (before fusion, a reshape that only adds dims of size 1 to such a vector counts as
 *   its broadcast);
 * Every value of the chain but the root has one user. In the fused computation the
 * product's operands and the vectors are parameters.
 *
 * Matching never fails with an error; the structures point into the module. */
#ifndef CXLA_PASSES_EPILOGUE_H_
#define CXLA_PASSES_EPILOGUE_H_

#include "hlo/hlo.h"

typedef enum cxla_epi_kind {
    CXLA_EPI_ADD_VEC, /* y = x + v[feature] */
    CXLA_EPI_MUL_VEC, /* y = x * v[feature] */
    CXLA_EPI_SUB_VEC, /* y = x - v[feature] */
    CXLA_EPI_SCALE,   /* y = x * c */
    CXLA_EPI_RELU,    /* y = maximum(x, 0) */
    CXLA_EPI_CONVERT, /* y = (bf16) x, rounded to nearest even; last */
    CXLA_EPI_TANH,    /* y = tanh(x) */
} cxla_epi_kind;

typedef struct cxla_epi_op {
    cxla_epi_kind kind;
    const cxla_instr *instr; /* the elementwise instruction */
    const cxla_instr *bcast; /* its broadcast operand (TANH: NULL) */
    const cxla_instr *vec;   /* ADD_VEC, MUL_VEC, SUB_VEC: the broadcast's operand */
    float c;                 /* SCALE: the constant */
} cxla_epi_op;

enum { CXLA_EPI_MAX = 8 };

typedef struct cxla_epilogue {
    const cxla_instr *core; /* the dot or convolution */
    cxla_type out;          /* the type of the chain's last value (T, or a convert's) */
    int64_t count;
    cxla_epi_op ops[CXLA_EPI_MAX]; /* in the order they apply */
} cxla_epilogue;

/* Whether an epilogue may be of type |t| (f32, bf16, f16). */
bool cxla_epilogue_type(cxla_type t);

/* The output feature dims of |core| (a dot: the rhs free dims, the last of its result;
 * a convolution: dim_labels' output feature): their count, the dims in |dims|
 * (CXLA_MAX_RANK entries). 0 when |core| is neither or its attributes are missing. */
int64_t cxla_epilogue_feature_dims(const cxla_instr *core, int64_t *dims);

/* Whether |x| can follow |prev| (a member of the chain of |e|, e->count ops so far, or
 * e->core) in the epilogue |e|: fills |op| when it can. |vector_any_form| (the pass, forming
 * a fusion): a vector may carry extra dims of size 1 and a broadcast naming them (the pass
 * reshapes it); false (the backend, matching a fusion it is given): exactly the form
 * above, and a last convert to f16, or after a convolution, too (the pass does not form
 * those, the backend runs them unfused: the product, then the epilogue as loops). */
bool cxla_epilogue_step(const cxla_epilogue *e, const cxla_instr *prev, const cxla_instr *x,
                        bool vector_any_form, cxla_epi_op *op);

/* Whether the fusion |f| computes a product of two of its parameters followed by an
 * epilogue whose vectors are parameters too; fills |out|. */
bool cxla_epilogue_match(const cxla_instr *f, cxla_epilogue *out);

/* Narrow products: f32 dots that the cpu backend computes with the emitter's kernels for
 * them (src/cpu/emit_dot.c, bit for bit the interpreter's, split over the thread pool)
 * instead of oneDNN, whose blocks of 16 and 64 columns waste most of their work on them
 * and which does not split them over threads (docs/performance.md, "Narrow products").
 * The output fusion pass leaves them unfused (their epilogues become loop fusions).
 * A narrow product is a dot of f32 matrices (rank 2, no batch dims, one contracting dim
 * each, default layouts) with M >= 16 result rows, in one of three forms: */
typedef enum cxla_dot_narrow_form {
    CXLA_DOT_WIDE = 0,     /* not narrow: oneDNN (or the blocked kernel without it) */
    CXLA_DOT_NARROW_LHS_T, /* lhs [K, M] (transposed), N <= 16: lanes over M */
    CXLA_DOT_NARROW_K,     /* K <= 16 < N: the rhs packed by columns, lanes over N */
    CXLA_DOT_NARROW_N,     /* lhs [M, K], rhs [K, N], 8 <= N <= 16: lanes over N */
} cxla_dot_narrow_form;

/* The narrow form of |x| (CXLA_DOT_WIDE when it is not one). */
cxla_dot_narrow_form cxla_dot_narrow(const cxla_instr *x);

#endif /* CXLA_PASSES_EPILOGUE_H_ */
