/* cxla/builder.h: building computations in C (XLA's XlaBuilder / ComputationBuilder).
 *
 * A builder records operations one call at a time and turns them into a computation:
 *
 *   cxla_builder *b;
 *   cxla_builder_create("axpy", &b);
 *   cxla_shape v = {.type = CXLA_F32, .rank = 1, .dims = (int64_t[]){3}};
 *   cxla_op x = cxla_parameter(b, 0, &v, "x");
 *   cxla_op y = cxla_parameter(b, 1, &v, "y");
 *   cxla_add(cxla_mul(cxla_constant_r0(b, CXLA_F32, 2.0), x), y);   // the root: last op
 *   cxla_xla_computation *c;
 *   cxla_status s = cxla_builder_build(b, &c);   // NULL, or the first error
 *   cxla_builder_destroy(b);
 *
 * Handles. `cxla_op` is a small value naming one operation of one builder; copy it
 * freely. It stays meaningful while its builder lives. An op whose call failed is
 * invalid (id < 0) but still names its builder. `cxla_builder` and
 * `cxla_xla_computation` are opaque. (The internal IR's computation type is
 * `cxla_computation`; a built computation is `cxla_xla_computation`, after XLA's
 * XlaComputation.)
 *
 * Errors are sticky, as in XLA. Calls return ops, not statuses: the first call that is
 * invalid (wrong shapes, an operand from another builder, a dimension out of range, a
 * sub-computation of the wrong signature) records a status whose message names the
 * operation and the shapes involved, e.g.
 *   "Add (builder 'axpy'): add: operands must have the same dimensions, got f32[3] and
 *    f32[4]";
 * that call and every later one return an invalid op, and cxla_builder_build returns
 * that first status. cxla_builder_first_error peeks at it without building. Shape
 * inference is the IR's own (the one the parser and the verifier use), so a built
 * computation always verifies.
 *
 * Sub-computations (reducers, comparators, loop conditions and bodies, branches,
 * scatter combiners, mapped functions) are built with their own builder and passed as
 * `const cxla_xla_computation *`. The builder copies what it needs at the call, so the
 * computation may be freed right after; a computation passed to several builders (or
 * several times) is copied once per builder.
 *
 * Arrays of integers are passed as (pointer, count); a NULL pointer with count 0 is an
 * empty list. Shapes and literals passed in are copied; nothing passed in is kept.
 *
 * Operation names follow XLA's builder (ComputationBuilder names from the older
 * specification are kept: Collapse, ConvWithGeneralPadding, CrossReplicaSum,
 * RngBernoulli, the single-operand Sort, Reshape with a dimension order). Where XLA's
 * builder lowers a convenience to other operations (Collapse and Reshape with a
 * dimension order to reshape/transpose, Conv with SAME/VALID to convolution with
 * computed padding, implicit scalar and rank broadcasting to broadcast, Dot to a dot
 * with dimension numbers), the same HLO is produced. docs/builder.md has a tour.
 */
#ifndef CXLA_BUILDER_H_
#define CXLA_BUILDER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxla/custom_call.h"
#include "cxla/literal.h"
#include "cxla/shape.h"
#include "cxla/status.h"
#include "cxla/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cxla_builder cxla_builder;
typedef struct cxla_xla_computation cxla_xla_computation;

/* One operation of a builder. |id| < 0 marks an invalid op (a failed call). */
typedef struct cxla_op {
    cxla_builder *builder;
    int64_t id;
} cxla_op;

/* ---- builders and built computations ----------------------------------------------- */

/* A new empty builder. |name| names the computation (and the module printed from it);
 * characters other than letters, digits, '_', '-' and '.' become '_'. Free it with
 * cxla_builder_destroy. Errors: out of memory. */
cxla_status cxla_builder_create(const char *name, cxla_builder **out_builder);
/* A new builder named "<parent's name>.<name>" (XLA's CreateSubBuilder), for a
 * sub-computation; it is independent of |parent| and freed separately. */
cxla_status cxla_builder_create_sub_builder(const cxla_builder *parent, const char *name,
                                            cxla_builder **out_builder);
/* Frees the builder and everything it recorded (ops become meaningless). NULL is fine.
 * Computations already built are not affected. */
void cxla_builder_destroy(cxla_builder *builder);
const char *cxla_builder_name(const cxla_builder *builder);
/* A copy of the first error recorded (the caller frees it), or NULL when there is none. */
cxla_status cxla_builder_first_error(const cxla_builder *builder);
/* True when |op| names an operation (its call succeeded). */
bool cxla_op_is_valid(cxla_op op);
/* The shape of |op|, borrowed from its builder (valid until the builder is built or
 * destroyed). Errors: an invalid op. */
cxla_status cxla_op_get_shape(cxla_op op, const cxla_shape **out_shape);

/* Builds the computation; its root is the last operation added (XLA's Build()).
 * Returns the first error recorded, if any; otherwise checks that the parameters are
 * numbered 0..n-1 without gaps and that something was added, and hands the caller a new
 * computation (free with cxla_xla_computation_free). Afterwards the builder accepts no
 * more calls (they fail with FAILED_PRECONDITION) and must still be destroyed. */
cxla_status cxla_builder_build(cxla_builder *builder, cxla_xla_computation **out_computation);
/* The same with an explicit root (XLA's Build(root)); |root| must be an op of |builder|. */
cxla_status cxla_builder_build_with_root(cxla_builder *builder, cxla_op root,
                                         cxla_xla_computation **out_computation);

void cxla_xla_computation_destroy(cxla_xla_computation *computation); /* NULL is fine */
/* Deprecated alias of cxla_xla_computation_destroy, kept for one release (see
 * docs/c-api.md). */
void cxla_xla_computation_free(cxla_xla_computation *computation);
const char *cxla_xla_computation_name(const cxla_xla_computation *computation);
/* The program shape: parameters by number and the result; shapes borrowed from the
 * computation. parameter_shape returns NULL for a number out of range. */
int64_t cxla_xla_computation_parameter_count(const cxla_xla_computation *computation);
const cxla_shape *cxla_xla_computation_parameter_shape(const cxla_xla_computation *computation,
                                                       int64_t number);
const cxla_shape *cxla_xla_computation_result_shape(const cxla_xla_computation *computation);
/* The computation as an HLO module in XLA's text format (the dump style that `cxla run`
 * and XLA's parser read): sub-computations first, ENTRY last. |*out_text| is malloc'd
 * (free()). Errors: out of memory. */
cxla_status cxla_xla_computation_to_hlo_text(const cxla_xla_computation *computation,
                                             char **out_text);

/* ---- annotations: sharding, metadata, frontend attributes ------------------------------ */
/* As in XLA's builder, a sharding, op metadata or frontend attributes set on a builder
 * are attached to every operation added afterwards (lowerings included) until they are
 * cleared or replaced; the HLO text carries them (sharding=..., metadata={...},
 * frontend_attributes={...}) and the parser reads them back. cxla runs on one device and
 * keeps them as annotations only. Everything passed in is copied. Errors are recorded
 * in the builder like an operation's (sticky). */

typedef enum cxla_sharding_type {
    CXLA_SHARDING_REPLICATED = 0, /* {replicated}: every device holds all of it */
    CXLA_SHARDING_MAXIMAL,        /* {maximal device=N}: one device holds it */
    CXLA_SHARDING_TILED,          /* {devices=[2,1]0,1}: tiles over a device mesh */
    CXLA_SHARDING_MANUAL,         /* {manual}: partitioned by hand */
    CXLA_SHARDING_TUPLE,          /* {{...}, {...}}: one sharding per tuple element */
} cxla_sharding_type;

/* XLA's OpSharding. MAXIMAL uses |device|. TILED uses |tile_assignment_dimensions|
 * (|tile_rank| entries: tiles per array dimension, plus one trailing replication
 * dimension when |replicate_on_last_tile_dim|) and |tile_assignment_devices| (the
 * product of the dimensions, row-major over the mesh; NULL means 0, 1, 2, ...). TUPLE
 * uses |tuple_shardings| (|tuple_count| entries, one per element of the tuple;
 * they may be tuples themselves). */
typedef struct cxla_op_sharding {
    cxla_sharding_type type;
    int64_t device;
    const int64_t *tile_assignment_dimensions;
    int64_t tile_rank;
    const int64_t *tile_assignment_devices;
    bool replicate_on_last_tile_dim;
    const struct cxla_op_sharding *tuple_shardings;
    int64_t tuple_count;
} cxla_op_sharding;

/* Sets the sharding of the operations added next (NULL clears it, as ClearSharding).
 * Errors (recorded): a negative device, tile dimensions < 1 or whose product differs
 * from the device count, a device listed twice; and, when an operation is added, a
 * TILED sharding whose rank does not fit the operation's array shape or a TUPLE
 * sharding whose count differs from its tuple's (naming the operation). */
void cxla_builder_set_sharding(cxla_builder *builder, const cxla_op_sharding *sharding);
void cxla_builder_clear_sharding(cxla_builder *builder);
/* Sets (NULL: removes) the sharding of one existing operation (XLA's
 * SetInstructionSharding). Errors: as above, checked against |op|'s shape. */
void cxla_op_set_sharding(cxla_op op, const cxla_op_sharding *sharding);

/* XLA's OpMetadata, the fields the HLO text keeps: any NULL or "" string and a
 * source_line of 0 are left out. */
typedef struct cxla_op_metadata {
    const char *op_type;
    const char *op_name;
    const char *source_file;
    int64_t source_line;
} cxla_op_metadata;
/* Sets (NULL: clears, as ClearOpMetadata) the metadata of the operations added next.
 * Errors: a negative source_line. */
void cxla_builder_set_op_metadata(cxla_builder *builder, const cxla_op_metadata *metadata);
void cxla_builder_clear_op_metadata(cxla_builder *builder);

/* One frontend attribute: a key and its string value (any text; escaped in HLO). */
typedef struct cxla_frontend_attribute {
    const char *key;
    const char *value;
} cxla_frontend_attribute;
/* Replaces the frontend attributes of the operations added next with |count| key/value
 * pairs (count 0 clears them, as ClearFrontendAttributes). Errors: a NULL or empty key,
 * a NULL value, a key given twice. */
void cxla_builder_set_frontend_attributes(cxla_builder *builder,
                                          const cxla_frontend_attribute *attributes, int64_t count);
void cxla_builder_clear_frontend_attributes(cxla_builder *builder);
/* Sets one attribute of an existing operation, replacing that key's value (XLA's
 * SetInstructionFrontendAttribute). Errors: as above. */
void cxla_op_set_frontend_attribute(cxla_op op, const char *key, const char *value);

/* ---- enums and small structs ------------------------------------------------------- */

typedef enum cxla_padding {
    CXLA_PADDING_VALID = 0, /* no padding: windows stop where they no longer fit */
    CXLA_PADDING_SAME,      /* pad so that output = ceil(input / stride) (XLA's MakePadding) */
} cxla_padding;

/* Low and high padding of one dimension (negative values remove elements). */
typedef struct cxla_pad_pair {
    int64_t low, high;
} cxla_pad_pair;

/* One dimension of Pad's padding config (XLA's PaddingConfigDimension). */
typedef struct cxla_padding_config_dim {
    int64_t edge_padding_low, edge_padding_high, interior_padding;
} cxla_padding_config_dim;

typedef enum cxla_comparison_direction {
    CXLA_COMPARE_EQ = 0,
    CXLA_COMPARE_NE,
    CXLA_COMPARE_GE,
    CXLA_COMPARE_GT,
    CXLA_COMPARE_LE,
    CXLA_COMPARE_LT,
} cxla_comparison_direction;

typedef enum cxla_comparison_type {
    CXLA_COMPARISON_DEFAULT = 0, /* from the element type (not printed) */
    CXLA_COMPARISON_FLOAT,       /* IEEE: NaN compares unordered */
    CXLA_COMPARISON_TOTALORDER,  /* -NaN < -Inf < -finite < -0 < +0 < +finite < +Inf < +NaN */
    CXLA_COMPARISON_SIGNED,
    CXLA_COMPARISON_UNSIGNED,
} cxla_comparison_type;

/* Operand precision of dot and convolution (XLA's PrecisionConfig). */
typedef enum cxla_op_precision {
    CXLA_OP_PRECISION_DEFAULT = 0,
    CXLA_OP_PRECISION_HIGH,
    CXLA_OP_PRECISION_HIGHEST,
} cxla_op_precision;

typedef enum cxla_fft_type {
    CXLA_FFT_FFT = 0, /* complex -> complex, forward */
    CXLA_FFT_IFFT,    /* complex -> complex, inverse */
    CXLA_FFT_RFFT,    /* real -> complex, forward */
    CXLA_FFT_IRFFT,   /* complex -> real, inverse */
} cxla_fft_type;

typedef enum cxla_transpose {
    CXLA_TRANSPOSE_NO_TRANSPOSE = 0,
    CXLA_TRANSPOSE_TRANSPOSE,
    CXLA_TRANSPOSE_ADJOINT,
} cxla_transpose_type;

typedef enum cxla_rng_algorithm {
    CXLA_RNG_DEFAULT = 0,
    CXLA_RNG_THREE_FRY, /* state u64[2] */
    CXLA_RNG_PHILOX,    /* state u64[2] or u64[3] */
} cxla_rng_algorithm;

/* One replica group: the ids of its members, in order. */
typedef struct cxla_replica_group {
    const int64_t *ids;
    int64_t count;
} cxla_replica_group;

/* Dot dimension numbers (XLA's DotDimensionNumbers). */
typedef struct cxla_dot_dimension_numbers {
    const int64_t *lhs_contracting_dimensions;
    int64_t lhs_contracting_count;
    const int64_t *rhs_contracting_dimensions;
    int64_t rhs_contracting_count;
    const int64_t *lhs_batch_dimensions;
    int64_t lhs_batch_count;
    const int64_t *rhs_batch_dimensions;
    int64_t rhs_batch_count;
} cxla_dot_dimension_numbers;

/* Convolution dimension numbers (XLA's ConvolutionDimensionNumbers); each spatial list
 * has |spatial_count| entries. NULL where a function takes a pointer means the default
 * layout: input [batch, feature, spatial...], kernel [output feature, input feature,
 * spatial...], output [batch, feature, spatial...]. */
typedef struct cxla_conv_dimension_numbers {
    int64_t spatial_count;
    int64_t input_batch_dimension, input_feature_dimension;
    const int64_t *input_spatial_dimensions;
    int64_t kernel_input_feature_dimension, kernel_output_feature_dimension;
    const int64_t *kernel_spatial_dimensions;
    int64_t output_batch_dimension, output_feature_dimension;
    const int64_t *output_spatial_dimensions;
} cxla_conv_dimension_numbers;

/* Gather dimension numbers (XLA's GatherDimensionNumbers). */
typedef struct cxla_gather_dimension_numbers {
    const int64_t *offset_dims;
    int64_t offset_dims_count;
    const int64_t *collapsed_slice_dims;
    int64_t collapsed_slice_dims_count;
    const int64_t *start_index_map;
    int64_t start_index_map_count;
    int64_t index_vector_dim;
    const int64_t *operand_batching_dims; /* may be NULL/0 */
    int64_t operand_batching_dims_count;
    const int64_t *start_indices_batching_dims; /* may be NULL/0 */
    int64_t start_indices_batching_dims_count;
} cxla_gather_dimension_numbers;

/* Scatter dimension numbers (XLA's ScatterDimensionNumbers). */
typedef struct cxla_scatter_dimension_numbers {
    const int64_t *update_window_dims;
    int64_t update_window_dims_count;
    const int64_t *inserted_window_dims;
    int64_t inserted_window_dims_count;
    const int64_t *scatter_dims_to_operand_dims;
    int64_t scatter_dims_to_operand_dims_count;
    int64_t index_vector_dim;
    const int64_t *input_batching_dims; /* may be NULL/0 */
    int64_t input_batching_dims_count;
    const int64_t *scatter_indices_batching_dims; /* may be NULL/0 */
    int64_t scatter_indices_batching_dims_count;
} cxla_scatter_dimension_numbers;

/* ---- parameters, constants, leaves ------------------------------------------------- */

/* Parameter |number| of the computation with |shape| (copied; a layout, if given, is
 * kept). |name| (may be NULL) prefixes the instruction's name. Errors: a number < 0 or
 * already used, an invalid shape. */
cxla_op cxla_parameter(cxla_builder *builder, int64_t number, const cxla_shape *shape,
                       const char *name);
/* A constant holding a copy of |literal| (arrays and tuples). */
cxla_op cxla_constant_literal(cxla_builder *builder, const cxla_literal *literal);
/* A rank-0 constant of |type| holding |value| converted as cxla_literal_set_f64 does. */
cxla_op cxla_constant_r0(cxla_builder *builder, cxla_type type, double value);
/* An array constant: |data| holds the elements in row-major order, stored as types.h
 * describes for |type| (e.g. float for f32, int32_t for s32, one byte for pred). */
cxla_op cxla_constant_array(cxla_builder *builder, cxla_type type, int64_t rank,
                            const int64_t *dims, const void *data);
cxla_op cxla_constant_f32(cxla_builder *builder, int64_t rank, const int64_t *dims,
                          const float *values);
cxla_op cxla_constant_s32(cxla_builder *builder, int64_t rank, const int64_t *dims,
                          const int32_t *values);
/* Scalars of |type| (XLA's Zero, One, MinValue, MaxValue): the lowest value is -inf for
 * floats that have infinities (the smallest finite value otherwise), the type's minimum
 * for integers, false for pred; the highest likewise. */
cxla_op cxla_zero(cxla_builder *builder, cxla_type type);
cxla_op cxla_one(cxla_builder *builder, cxla_type type);
cxla_op cxla_min_value(cxla_builder *builder, cxla_type type);
cxla_op cxla_max_value(cxla_builder *builder, cxla_type type);
/* 0, 1, 2, ... along |iota_dimension| of |shape|; Iota(type, size) is the rank-1 form. */
cxla_op cxla_iota(cxla_builder *builder, const cxla_shape *shape, int64_t iota_dimension);
cxla_op cxla_iota_1d(cxla_builder *builder, cxla_type type, int64_t size);
/* The u32 id of the running replica / partition. */
cxla_op cxla_replica_id(cxla_builder *builder);
cxla_op cxla_partition_id(cxla_builder *builder);
/* Tokens order side effects: a fresh token, and a token after all of |tokens|. */
cxla_op cxla_create_token(cxla_builder *builder);
cxla_op cxla_after_all(cxla_builder *builder, const cxla_op *tokens, int64_t count);

/* ---- element-wise unary ------------------------------------------------------------- */
/* Each applies a function to every element; the result has the operand's shape (pred
 * for is_finite, the component type for abs/real/imag of complex). Errors: an element
 * type the function does not accept (e.g. floor of s32, not of f32). */

cxla_op cxla_abs(cxla_op operand);
cxla_op cxla_neg(cxla_op operand);
cxla_op cxla_sign(cxla_op operand);
cxla_op cxla_not(cxla_op operand);         /* logical not of pred, bitwise not of integers */
cxla_op cxla_logical_not(cxla_op operand); /* ComputationBuilder's name for cxla_not */
cxla_op cxla_floor(cxla_op operand);
cxla_op cxla_ceil(cxla_op operand);
cxla_op cxla_round(cxla_op operand); /* ties away from zero */
cxla_op cxla_round_nearest_even(cxla_op operand);
cxla_op cxla_exp(cxla_op operand);
cxla_op cxla_expm1(cxla_op operand);
cxla_op cxla_log(cxla_op operand);
cxla_op cxla_log1p(cxla_op operand);
cxla_op cxla_logistic(cxla_op operand);
cxla_op cxla_sqrt(cxla_op operand);
cxla_op cxla_rsqrt(cxla_op operand);
cxla_op cxla_cbrt(cxla_op operand);
cxla_op cxla_sin(cxla_op operand);
cxla_op cxla_cos(cxla_op operand);
cxla_op cxla_tan(cxla_op operand);
cxla_op cxla_tanh(cxla_op operand);
cxla_op cxla_erf(cxla_op operand);
cxla_op cxla_is_finite(cxla_op operand);
cxla_op cxla_population_count(cxla_op operand);
cxla_op cxla_clz(cxla_op operand); /* count leading zeros */
cxla_op cxla_real(cxla_op operand);
cxla_op cxla_imag(cxla_op operand);
/* Complex conjugate: complex(real(x), -imag(x)), as XLA's builder lowers it. */
cxla_op cxla_conj(cxla_op operand);
/* The inverse and hyperbolic functions newer HLO has as single operations. */
cxla_op cxla_acos(cxla_op operand);
cxla_op cxla_asin(cxla_op operand);
cxla_op cxla_atan(cxla_op operand);
cxla_op cxla_acosh(cxla_op operand);
cxla_op cxla_asinh(cxla_op operand);
cxla_op cxla_atanh(cxla_op operand);
cxla_op cxla_cosh(cxla_op operand);
cxla_op cxla_sinh(cxla_op operand);
/* Identity that blocks optimizations from moving work across it (any shape, tuples too). */
cxla_op cxla_optimization_barrier(cxla_op operand);

/* ---- element-wise binary ------------------------------------------------------------ */
/* Operands of equal rank must have equal dimensions, except that a dimension of size 1
 * is broadcast to the other side's size (degenerate-dimension broadcasting); a scalar is
 * broadcast to the other operand's shape. Operands of different ranks need the _bcast
 * form: |broadcast_dimensions| maps dimension i of the lower-rank operand to dimension
 * broadcast_dimensions[i] of the higher-rank one (strictly increasing; each size equal or
 * 1). The broadcasts are explicit broadcast (and reshape) operations in the result, as
 * XLA's builder makes them. Operands must share one element type. */

#define CXLA_BUILDER_BINARY_(name)                                                                 \
    cxla_op cxla_##name(cxla_op lhs, cxla_op rhs);                                                 \
    cxla_op cxla_##name##_bcast(cxla_op lhs, cxla_op rhs, const int64_t *broadcast_dimensions,     \
                                int64_t broadcast_dimension_count);
CXLA_BUILDER_BINARY_(add)
CXLA_BUILDER_BINARY_(sub)
CXLA_BUILDER_BINARY_(mul)
CXLA_BUILDER_BINARY_(div) /* integers: truncated; x / 0 and INT_MIN / -1 as docs/semantics.md */
CXLA_BUILDER_BINARY_(rem) /* sign of the dividend */
CXLA_BUILDER_BINARY_(max) /* NaN propagates */
CXLA_BUILDER_BINARY_(min)
CXLA_BUILDER_BINARY_(and) /* pred: logical; integers: bitwise */
CXLA_BUILDER_BINARY_(or)
CXLA_BUILDER_BINARY_(xor)
CXLA_BUILDER_BINARY_(logical_and) /* ComputationBuilder's names for and / or */
CXLA_BUILDER_BINARY_(logical_or)
CXLA_BUILDER_BINARY_(pow)
CXLA_BUILDER_BINARY_(atan2) /* atan2(lhs, rhs) */
CXLA_BUILDER_BINARY_(shift_left)
CXLA_BUILDER_BINARY_(shift_right_arithmetic)
CXLA_BUILDER_BINARY_(shift_right_logical)
CXLA_BUILDER_BINARY_(complex) /* f32, f32 -> c64; f64, f64 -> c128 */
/* Comparisons: pred results. The _total_order forms compare floats in the total order
 * (type TOTALORDER); for other types they are the plain comparisons. */
CXLA_BUILDER_BINARY_(eq)
CXLA_BUILDER_BINARY_(ne)
CXLA_BUILDER_BINARY_(ge)
CXLA_BUILDER_BINARY_(gt)
CXLA_BUILDER_BINARY_(le)
CXLA_BUILDER_BINARY_(lt)
CXLA_BUILDER_BINARY_(eq_total_order)
CXLA_BUILDER_BINARY_(ne_total_order)
CXLA_BUILDER_BINARY_(ge_total_order)
CXLA_BUILDER_BINARY_(gt_total_order)
CXLA_BUILDER_BINARY_(le_total_order)
CXLA_BUILDER_BINARY_(lt_total_order)
#undef CXLA_BUILDER_BINARY_
/* The general comparison (XLA's Compare): |type| CXLA_COMPARISON_DEFAULT picks the
 * element type's own. Errors: a type that does not suit the element type (TOTALORDER or
 * FLOAT for integers, SIGNED for unsigned ...). */
cxla_op cxla_compare(cxla_op lhs, cxla_op rhs, const int64_t *broadcast_dimensions,
                     int64_t broadcast_dimension_count, cxla_comparison_direction direction,
                     cxla_comparison_type type);

/* ---- select, clamp, map, conversions ------------------------------------------------- */

/* pred ? on_true : on_false element by element. |pred| is pred with the shape of the
 * branches, or a pred scalar that picks a whole branch (broadcast explicitly). */
cxla_op cxla_select(cxla_op pred, cxla_op on_true, cxla_op on_false);
/* min(max(operand, min), max) element by element; |min| and |max| may be scalars
 * (broadcast explicitly). Argument order as XlaBuilder: Clamp(min, operand, max). */
cxla_op cxla_clamp(cxla_op min, cxla_op operand, cxla_op max);
/* Applies the scalar computation |computation| (N scalar parameters -> a scalar) to the
 * elements of |operands| (same dimensions; scalars are broadcast). |dimensions| must list
 * every dimension in order (or be empty, meaning all). XLA's static_operands are not
 * supported (XLA's builder rejects them too). */
cxla_op cxla_map(cxla_builder *builder, const cxla_op *operands, int64_t operand_count,
                 const cxla_xla_computation *computation, const int64_t *dimensions,
                 int64_t dimension_count);
/* Element type conversion (docs/semantics.md has the rules). */
cxla_op cxla_convert_element_type(cxla_op operand, cxla_type new_element_type);
/* Reinterprets the bits; between widths the last dimension grows or shrinks by the
 * ratio of the widths. Errors: complex <-> real, widths that do not divide. */
cxla_op cxla_bitcast_convert_type(cxla_op operand, cxla_type new_element_type);
/* Rounds floats to |exponent_bits| / |mantissa_bits| and back. */
cxla_op cxla_reduce_precision(cxla_op operand, int64_t exponent_bits, int64_t mantissa_bits);

/* ---- shapes ---------------------------------------------------------------------------- */

/* New major dimensions of sizes |broadcast_sizes| in front of the operand's. */
cxla_op cxla_broadcast(cxla_op operand, const int64_t *broadcast_sizes, int64_t count);
/* Broadcast to |out_dims|; operand dimension i goes to broadcast_dimensions[i] and must
 * have size 1 or the output size there (size-1 dimensions are expanded through a
 * reshape, as XLA's builder does). */
cxla_op cxla_broadcast_in_dim(cxla_op operand, const int64_t *out_dims, int64_t out_rank,
                              const int64_t *broadcast_dimensions, int64_t broadcast_count);
/* Same elements in row-major order, new dimensions (product must match). */
cxla_op cxla_reshape(cxla_op operand, const int64_t *new_sizes, int64_t rank);
/* ComputationBuilder's Reshape(operand, dimensions, new_sizes): the elements are read in
 * the order |dimensions| gives (a permutation; major first), i.e. a transpose by
 * |dimensions| then a reshape. The identity order emits just the reshape. */
cxla_op cxla_reshape_with_order(cxla_op operand, const int64_t *dimensions, int64_t dimension_count,
                                const int64_t *new_sizes, int64_t rank);
/* Merges the consecutive, in-order |dimensions| into one (a reshape). */
cxla_op cxla_collapse(cxla_op operand, const int64_t *dimensions, int64_t count);
/* Output dimension i is operand dimension permutation[i]. */
cxla_op cxla_transpose(cxla_op operand, const int64_t *permutation, int64_t count);
/* Reverses the order of elements along |dimensions| (XLA's Rev). */
cxla_op cxla_rev(cxla_op operand, const int64_t *dimensions, int64_t count);
/* [start, limit) with |strides| (NULL = all 1) in each of |rank| dimensions. */
cxla_op cxla_slice(cxla_op operand, const int64_t *start_indices, const int64_t *limit_indices,
                   const int64_t *strides, int64_t rank);
cxla_op cxla_slice_in_dim(cxla_op operand, int64_t start_index, int64_t limit_index, int64_t stride,
                          int64_t dimension);
/* A |slice_sizes| block at runtime offsets: one integer scalar op per dimension (clamped
 * into range at run time). */
cxla_op cxla_dynamic_slice(cxla_op operand, const cxla_op *start_indices, int64_t index_count,
                           const int64_t *slice_sizes, int64_t size_count);
/* The older form: |start_indices| is one rank-1 integer array (split into scalars with
 * slice and reshape, as XLA's builder does). */
cxla_op cxla_dynamic_slice_vector(cxla_op operand, cxla_op start_indices,
                                  const int64_t *slice_sizes, int64_t size_count);
/* |operand| with |update| written at runtime offsets (clamped into range). */
cxla_op cxla_dynamic_update_slice(cxla_op operand, cxla_op update, const cxla_op *start_indices,
                                  int64_t index_count);
cxla_op cxla_dynamic_update_slice_vector(cxla_op operand, cxla_op update, cxla_op start_indices);
/* Joins |operands| along |dimension| (XLA's ConcatInDim). */
cxla_op cxla_concat_in_dim(cxla_builder *builder, const cxla_op *operands, int64_t count,
                           int64_t dimension);
/* The seeds' name, Concatenate(operands..., dimension): the same operation. */
cxla_op cxla_concatenate(cxla_builder *builder, const cxla_op *operands, int64_t count,
                         int64_t dimension);
/* Edge (possibly negative) and interior padding with the scalar |padding_value|. */
cxla_op cxla_pad(cxla_op operand, cxla_op padding_value, const cxla_padding_config_dim *config,
                 int64_t rank);
cxla_op cxla_pad_in_dim(cxla_op operand, cxla_op padding_value, int64_t dimension, int64_t low,
                        int64_t high);
cxla_op cxla_tuple(cxla_builder *builder, const cxla_op *elements, int64_t count);
cxla_op cxla_get_tuple_element(cxla_op tuple, int64_t index);
/* The s32 size of a dimension at run time; setting it marks the dimension dynamic. */
cxla_op cxla_get_dimension_size(cxla_op operand, int64_t dimension);
cxla_op cxla_set_dimension_size(cxla_op operand, cxla_op size, int64_t dimension);

/* ---- reductions, windows, sorting, gather and scatter --------------------------------- */

/* Reduces |dimensions| of |operand| with the scalar |computation| (T, T) -> T starting
 * from the scalar |init_value|. */
cxla_op cxla_reduce(cxla_op operand, cxla_op init_value, const cxla_xla_computation *computation,
                    const int64_t *dimensions, int64_t count);
/* Variadic form: N operands of one dimensions, N init scalars, a computation of 2N
 * scalars -> an N-tuple; the result is an N-tuple (N = 1: an array). */
cxla_op cxla_reduce_variadic(cxla_builder *builder, const cxla_op *operands,
                             const cxla_op *init_values, int64_t count,
                             const cxla_xla_computation *computation, const int64_t *dimensions,
                             int64_t dimension_count);
/* Reduces every dimension. */
cxla_op cxla_reduce_all(cxla_op operand, cxla_op init_value,
                        const cxla_xla_computation *computation);
/* Reduces windows of |window_dimensions| moved by |window_strides| (rank entries each),
 * padded per |padding|. */
cxla_op cxla_reduce_window(cxla_op operand, cxla_op init_value,
                           const cxla_xla_computation *computation,
                           const int64_t *window_dimensions, const int64_t *window_strides,
                           int64_t rank, cxla_padding padding);
/* Every window parameter spelled out: |base_dilations| and |window_dilations| may be NULL
 * (all 1), |padding| may be NULL (none). Variadic over |count| operands. */
cxla_op cxla_reduce_window_general(cxla_builder *builder, const cxla_op *operands,
                                   const cxla_op *init_values, int64_t count,
                                   const cxla_xla_computation *computation,
                                   const int64_t *window_dimensions, const int64_t *window_strides,
                                   const int64_t *base_dilations, const int64_t *window_dilations,
                                   const cxla_pad_pair *padding, int64_t rank);
/* Selects one element per window with |select| (T, T) -> pred and scatters |source|
 * there with |scatter| (T, T) -> T over a result initialized to |init_value|. */
cxla_op cxla_select_and_scatter(cxla_op operand, const cxla_xla_computation *select,
                                const int64_t *window_dimensions, const int64_t *window_strides,
                                int64_t rank, cxla_padding padding, cxla_op source,
                                cxla_op init_value, const cxla_xla_computation *scatter);
cxla_op cxla_select_and_scatter_with_general_padding(
    cxla_op operand, const cxla_xla_computation *select, const int64_t *window_dimensions,
    const int64_t *window_strides, const cxla_pad_pair *padding, int64_t rank, cxla_op source,
    cxla_op init_value, const cxla_xla_computation *scatter);
/* Sorts |operands| (same dimensions) together along |dimension| (-1: the last) with
 * |comparator| taking 2 scalars per operand and returning pred (less-than for ascending
 * order); a tuple of the sorted operands (one operand: an array). */
cxla_op cxla_sort(cxla_builder *builder, const cxla_op *operands, int64_t count,
                  const cxla_xla_computation *comparator, int64_t dimension, bool is_stable);
/* ComputationBuilder's Sort(operand): ascending along the last dimension, floats in the
 * total order (-NaN first, NaN last); builds the comparator itself. */
cxla_op cxla_sort_ascending(cxla_op operand);
/* The |k| largest (or smallest) entries along the last dimension and their s32 indices:
 * a tuple (values, indices). */
cxla_op cxla_top_k(cxla_op operand, int64_t k, bool largest);
/* The seed's TopK(operand, k, comparator): the first |k| entries along the last
 * dimension in the order |comparator| (T, T) -> pred defines (strict greater-than for
 * the usual top k), with their s32 indices, as a tuple (values, indices); equal entries
 * keep index order. Lowered as XLA's library does it: a stable sort of (operand, iota)
 * whose comparator calls |comparator| on the values, then slices. Errors: a scalar
 * operand, k outside 0..size of the last dimension, a comparator of the wrong
 * signature. */
cxla_op cxla_top_k_with_comparator(cxla_op operand, int64_t k,
                                   const cxla_xla_computation *comparator);
/* Slices of |slice_sizes| at the indices in |start_indices| (XLA's Gather). */
cxla_op cxla_gather(cxla_op operand, cxla_op start_indices,
                    const cxla_gather_dimension_numbers *dimension_numbers,
                    const int64_t *slice_sizes, int64_t slice_sizes_count, bool indices_are_sorted);
/* Combines |updates| into |operand| at |scatter_indices| with |update_computation|
 * (current, update) -> new (XLA's Scatter). */
cxla_op cxla_scatter(cxla_op operand, cxla_op scatter_indices, cxla_op updates,
                     const cxla_xla_computation *update_computation,
                     const cxla_scatter_dimension_numbers *dimension_numbers,
                     bool indices_are_sorted, bool unique_indices);
/* Variadic: N operands and N updates, a computation of 2N scalars -> an N-tuple. */
cxla_op cxla_scatter_variadic(cxla_builder *builder, const cxla_op *operands, int64_t count,
                              cxla_op scatter_indices, const cxla_op *updates,
                              const cxla_xla_computation *update_computation,
                              const cxla_scatter_dimension_numbers *dimension_numbers,
                              bool indices_are_sorted, bool unique_indices);

/* ---- linear algebra and convolution --------------------------------------------------- */

/* vector.vector, matrix.vector, matrix.matrix: contracts the last dimension of |lhs|
 * with the first of |rhs| (a dot with dimension numbers, as XLA's builder emits). */
cxla_op cxla_dot(cxla_op lhs, cxla_op rhs);
/* |precision| is NULL or two entries (lhs, rhs); |preferred_element_type| is
 * CXLA_TYPE_INVALID for the operands' type. */
cxla_op cxla_dot_general(cxla_op lhs, cxla_op rhs,
                         const cxla_dot_dimension_numbers *dimension_numbers,
                         const cxla_op_precision *precision, cxla_type preferred_element_type);
/* Convolutions. Windows slide over the spatial dimensions with |window_strides|
 * (|spatial_count| entries). Conv pads per SAME/VALID; ConvWithGeneralPadding takes
 * explicit (low, high) padding; the _general forms take dimension numbers (NULL = the
 * default); conv_general_dilated adds lhs (base) and rhs (window) dilation (NULL = 1),
 * precision (NULL or 2 entries) and the preferred result type (CXLA_TYPE_INVALID =
 * the operands'). Group counts default to 1 in XLA; pass 1. */
cxla_op cxla_conv(cxla_op lhs, cxla_op rhs, const int64_t *window_strides, int64_t spatial_count,
                  cxla_padding padding, int64_t feature_group_count, int64_t batch_group_count);
cxla_op cxla_conv_with_general_padding(cxla_op lhs, cxla_op rhs, const int64_t *window_strides,
                                       int64_t spatial_count, const cxla_pad_pair *padding,
                                       int64_t feature_group_count, int64_t batch_group_count);
cxla_op cxla_conv_with_general_dimensions(cxla_op lhs, cxla_op rhs, const int64_t *window_strides,
                                          int64_t spatial_count, cxla_padding padding,
                                          const cxla_conv_dimension_numbers *dimension_numbers,
                                          int64_t feature_group_count, int64_t batch_group_count);
cxla_op cxla_conv_general(cxla_op lhs, cxla_op rhs, const int64_t *window_strides,
                          int64_t spatial_count, const cxla_pad_pair *padding,
                          const cxla_conv_dimension_numbers *dimension_numbers,
                          int64_t feature_group_count, int64_t batch_group_count);
cxla_op cxla_conv_general_dilated(cxla_op lhs, cxla_op rhs, const int64_t *window_strides,
                                  int64_t spatial_count, const cxla_pad_pair *padding,
                                  const int64_t *lhs_dilation, const int64_t *rhs_dilation,
                                  const cxla_conv_dimension_numbers *dimension_numbers,
                                  int64_t feature_group_count, int64_t batch_group_count,
                                  const cxla_op_precision *precision,
                                  cxla_type preferred_element_type);
/* FFT over the last |count| (1..3) dimensions with time-domain lengths |fft_length|. */
cxla_op cxla_fft(cxla_op operand, cxla_fft_type fft_type, const int64_t *fft_length, int64_t count);
/* Cholesky factor of (batches of) symmetric positive definite matrices; reads and
 * writes the |lower| (or upper) triangle. */
cxla_op cxla_cholesky(cxla_op a, bool lower);
/* Solves op(a) x = b (left_side) or x op(a) = b for triangular |a|. */
cxla_op cxla_triangular_solve(cxla_op a, cxla_op b, bool left_side, bool lower, bool unit_diagonal,
                              cxla_transpose_type transpose_a);
/* Batch normalization; training and grad return 3-tuples (see the specification). */
cxla_op cxla_batch_norm_training(cxla_op operand, cxla_op scale, cxla_op offset, float epsilon,
                                 int64_t feature_index);
cxla_op cxla_batch_norm_inference(cxla_op operand, cxla_op scale, cxla_op offset, cxla_op mean,
                                  cxla_op variance, float epsilon, int64_t feature_index);
cxla_op cxla_batch_norm_grad(cxla_op operand, cxla_op scale, cxla_op batch_mean, cxla_op batch_var,
                             cxla_op grad_output, float epsilon, int64_t feature_index);

/* ---- control flow and calls ---------------------------------------------------------- */

/* Runs |body| (T -> T) while |condition| (T -> pred[]) holds, starting from |init|. */
cxla_op cxla_while(const cxla_xla_computation *condition, const cxla_xla_computation *body,
                   cxla_op init);
/* Runs |true_computation| on |true_operand| when the pred scalar is true, else
 * |false_computation| on |false_operand|; both return one shape. */
cxla_op cxla_conditional(cxla_op predicate, cxla_op true_operand,
                         const cxla_xla_computation *true_computation, cxla_op false_operand,
                         const cxla_xla_computation *false_computation);
/* N-way: runs branch_computations[i] on branch_operands[i] for the s32 |branch_index|
 * (out of range: the last branch). */
cxla_op cxla_conditional_branches(cxla_op branch_index,
                                  const cxla_xla_computation *const *branch_computations,
                                  const cxla_op *branch_operands, int64_t count);
/* Calls |computation| with |operands| (one per parameter; none is fine). */
cxla_op cxla_call(cxla_builder *builder, const cxla_xla_computation *computation,
                  const cxla_op *operands, int64_t count);
/* A call of the foreign function |call_target_name| returning |shape| (copied, layout
 * kept). The target is looked up when the module runs, as cxla/custom_call.h describes
 * (registered functions, the built-in targets, the process's symbols), and is called
 * with the original signature, void f(void *out, const void **in): no api_version is
 * set. |opaque| (may be NULL) becomes the instruction's backend_config, which only the
 * status-returning-unified signature receives (choose it with
 * cxla_custom_call_with_options). The same as cxla_custom_call_with_options with only
 * these options set. Errors: a NULL or empty target name, a NULL shape. */
cxla_op cxla_custom_call(cxla_builder *builder, const char *call_target_name,
                         const cxla_op *operands, int64_t count, const cxla_shape *shape,
                         const char *opaque, bool has_side_effect);

/* One output-to-operand alias of a custom call (XLA's output_operand_aliasing): the
 * result at |output_index| (a shape index: a path of tuple element numbers; count 0 =
 * the whole result) reuses the buffer of operand |operand| at |operand_index|. Printed
 * as output_to_operand_aliasing={{0}: (1, {})}. */
typedef struct cxla_output_operand_alias {
    const int64_t *output_index;
    int64_t output_index_count;
    int64_t operand;
    const int64_t *operand_index;
    int64_t operand_index_count;
} cxla_output_operand_alias;

/* The options of XLA's CustomCall / CustomCallWithLayout, as far as the HLO IR keeps
 * them. Start from cxla_custom_call_options_init (all zero: no options). */
typedef struct cxla_custom_call_options {
    const char *opaque;   /* backend_config string (NULL or "": none) */
    bool has_side_effect; /* custom_call_has_side_effect=true: never skipped or merged */
    /* The target's signature (api_version=); UNSPECIFIED and ORIGINAL print nothing. */
    cxla_custom_call_api_version api_version;
    /* NULL, or one shape per operand, each with a layout (operand_layout_constraints=:
     * the layout each operand buffer is handed over in). With it the result |shape|
     * must have a layout too (XLA's CustomCallWithLayout). */
    const cxla_shape *operand_shapes_with_layout;
    const cxla_output_operand_alias *output_operand_aliasing;
    int64_t output_operand_aliasing_count;
} cxla_custom_call_options;
void cxla_custom_call_options_init(cxla_custom_call_options *options);
/* A custom call with |options| (NULL = none; copied, nothing kept). Errors: those of
 * cxla_custom_call; an unknown api_version; operand layouts that do not match the
 * operands (type and dimensions) or lack a layout; an alias whose operand or index
 * does not name a part of the result or operand. */
cxla_op cxla_custom_call_with_options(cxla_builder *builder, const char *call_target_name,
                                      const cxla_op *operands, int64_t count,
                                      const cxla_shape *shape,
                                      const cxla_custom_call_options *options);

/* ---- host transfers: infeed, outfeed, send, recv --------------------------------------- */
/* Side effects are ordered by tokens (cxla_create_token, cxla_after_all). The plain
 * forms make their own token, as XLA's builder does, so they are ordered only by program
 * order (the order of the calls); the _with_token forms take and return tokens. The
 * runtime serves them (cxla/runtime.h): infeed reads the client's infeed queue, outfeed
 * appends to its outfeed queue, and send / recv use the client's channel handlers and
 * mailboxes, keyed by the channel handle's id. */

/* Reads one value of |shape| (copied; its layout, if any, is the layout the value is read
 * in) from the infeed; |config| (NULL or "": none) is kept as infeed_config. Infeed
 * returns the data (a get-tuple-element of the infeed); _with_token returns the
 * (data, token) tuple. Errors: a NULL or token shape, |token| not a token. */
cxla_op cxla_infeed(cxla_builder *builder, const cxla_shape *shape, const char *config);
cxla_op cxla_infeed_with_token(cxla_op token, const cxla_shape *shape, const char *config);
/* Writes |operand| to the outfeed in the layout of |shape_with_layout| (NULL: the
 * operand's shape; a shape without a layout: the default one), recorded as
 * outfeed_shape; |config| as outfeed_config. Outfeed returns an empty tuple (XLA adds
 * one so that an outfeed that ends a computation gives it a nil result); _with_token
 * returns the outfeed's token. Errors: a shape not compatible with the operand. */
cxla_op cxla_outfeed(cxla_op operand, const cxla_shape *shape_with_layout, const char *config);
cxla_op cxla_outfeed_with_token(cxla_op operand, cxla_op token, const cxla_shape *shape_with_layout,
                                const char *config);

/* A channel: its id (channel_id= in HLO, >= 1) and direction (XLA's ChannelHandle). */
typedef enum cxla_channel_type {
    CXLA_CHANNEL_INVALID = 0,
    CXLA_CHANNEL_DEVICE_TO_DEVICE,
    CXLA_CHANNEL_DEVICE_TO_HOST,
    CXLA_CHANNEL_HOST_TO_DEVICE,
} cxla_channel_type;
typedef struct cxla_channel_handle {
    int64_t handle;
    cxla_channel_type type;
} cxla_channel_handle;
/* New channel handles, with ids unique in the process (1, 2, ...), as XLA's service
 * hands them out; a handle may also be filled in by hand. A send and its recv share one
 * handle. |builder| is not used (kept for XLA's signature). */
cxla_channel_handle cxla_create_channel_handle(cxla_builder *builder);
cxla_channel_handle cxla_create_device_to_host_channel_handle(cxla_builder *builder);
cxla_channel_handle cxla_create_host_to_device_channel_handle(cxla_builder *builder);

/* Sends |operand| on a device-to-device |handle| (copied): a send and its send-done.
 * Send makes its own token; both return the send-done's token (XLA's Send returns
 * nothing). Errors: a NULL handle, an id < 1, a channel of another direction. */
cxla_op cxla_send(cxla_op operand, const cxla_channel_handle *handle);
cxla_op cxla_send_with_token(cxla_op operand, cxla_op token, const cxla_channel_handle *handle);
/* Receives a value of |shape| (copied) on a device-to-device |handle|: a recv and its
 * recv-done. Recv returns the data; _with_token returns the (data, token) tuple. */
cxla_op cxla_recv(cxla_builder *builder, const cxla_shape *shape,
                  const cxla_channel_handle *handle);
cxla_op cxla_recv_with_token(cxla_op token, const cxla_shape *shape,
                             const cxla_channel_handle *handle);
/* Host transfers (is_host_transfer=true): the array |shape_with_layout| (it must have a
 * layout, and match the operand's type and dimensions) is what the send declares, and
 * the host receives the data in its layout; RecvFromHost reads an array |shape| (with
 * a layout) and returns (data, token). Errors: as above, plus a tuple or layout-less
 * shape, or a channel that is not device-to-host / host-to-device. */
cxla_op cxla_send_to_host(cxla_op operand, cxla_op token, const cxla_shape *shape_with_layout,
                          const cxla_channel_handle *handle);
cxla_op cxla_recv_from_host(cxla_op token, const cxla_shape *shape,
                            const cxla_channel_handle *handle);

/* ---- random numbers ------------------------------------------------------------------ */

/* Uniform in [a, b) / normal N(mu, sigma) numbers of |shape|; the scalars share
 * |shape|'s element type. */
cxla_op cxla_rng_uniform(cxla_op a, cxla_op b, const cxla_shape *shape);
cxla_op cxla_rng_normal(cxla_op mu, cxla_op sigma, const cxla_shape *shape);
/* ComputationBuilder's RngBernoulli(mean, shape): u32 values of |shape| that are 1 with
 * probability |mean| (an f32 scalar). HLO no longer has a Bernoulli distribution; this
 * lowers to convert(rng_uniform(0, 1) < mean). */
cxla_op cxla_rng_bernoulli(cxla_op mean, const cxla_shape *shape);
/* (new state, random bits of |shape|) from |initial_state| (u64 vector). */
cxla_op cxla_rng_bit_generator(cxla_rng_algorithm algorithm, cxla_op initial_state,
                               const cxla_shape *shape);

/* ---- collectives --------------------------------------------------------------------- */
/* |replica_groups| (NULL/0: one group of all replicas) lists groups of replica ids;
 * |channel_id| <= 0 means none. The collectives meet when the module runs on several
 * replicas (cxla_executable_execute in cxla/runtime.h, `cxla run --replicas N`); on one
 * replica each sees only itself. */

/* Sum across replicas: an all-reduce with an add computation (ComputationBuilder). */
cxla_op cxla_cross_replica_sum(cxla_op operand, const cxla_replica_group *replica_groups,
                               int64_t group_count);
cxla_op cxla_all_reduce(cxla_op operand, const cxla_xla_computation *computation,
                        const cxla_replica_group *replica_groups, int64_t group_count,
                        int64_t channel_id, bool use_global_device_ids);
/* Concatenates the operands of the |shard_count| members along |all_gather_dimension|. */
cxla_op cxla_all_gather(cxla_op operand, int64_t all_gather_dimension, int64_t shard_count,
                        const cxla_replica_group *replica_groups, int64_t group_count,
                        int64_t channel_id, bool use_global_device_ids);
/* All-reduce, then member i keeps block i of |shard_count| along |scatter_dimension|. */
cxla_op cxla_reduce_scatter(cxla_op operand, const cxla_xla_computation *computation,
                            int64_t scatter_dimension, int64_t shard_count,
                            const cxla_replica_group *replica_groups, int64_t group_count,
                            int64_t channel_id, bool use_global_device_ids);
/* Splits along |split_dimension| into |split_count| blocks, exchanges them, and
 * concatenates the received blocks along |concat_dimension| (an all-to-all on the split
 * dimension, then reshape/transpose/reshape when the dimensions differ, as XLA). */
cxla_op cxla_all_to_all(cxla_op operand, int64_t split_dimension, int64_t concat_dimension,
                        int64_t split_count, const cxla_replica_group *replica_groups,
                        int64_t group_count, int64_t channel_id);
/* Sends the operand along |pair_count| (source, target) pairs, |pairs| holding
 * 2 * pair_count ids; replicas no pair targets get zeros. */
cxla_op cxla_collective_permute(cxla_op operand, const int64_t *pairs, int64_t pair_count,
                                int64_t channel_id);

#ifdef __cplusplus
}
#endif
#endif /* CXLA_BUILDER_H_ */
