/* The builder's internals, shared by the files of src/builder/ (and by tests that want
 * the IR module of a built computation). Nothing here is public API.
 *
 * A builder owns an IR module with one computation under construction; an op's id is
 * the index of its instruction in that computation. Sub-computations passed to an op are
 * deep-copied into the builder's module (builder_import.c), once per origin. Every op
 * goes through bld_emit: it checks the builder, infers the result shape with the IR's
 * own shape inference on a scratch instruction, and only then appends the instruction,
 * so a failed call leaves no trace but the recorded error.
 */
#ifndef CXLA_BUILDER_BUILDER_INTERNAL_H_
#define CXLA_BUILDER_BUILDER_INTERNAL_H_

#include "cxla/builder.h"
#include "hlo/hlo.h"

struct cxla_builder {
    char *name; /* malloc'd, sanitized */
    cxla_module *module;
    cxla_computation *comp;
    cxla_status status; /* the first error, owned */
    bool built;
    int64_t counter; /* instruction and computation name suffixes */
    /* Parameters by number (NULL where none yet). */
    int64_t param_capacity;
    cxla_instr **params;
    /* Imported computations: origin id -> copy in |module|. */
    int64_t import_count, import_capacity;
    uint64_t *import_origins;
    cxla_computation **import_comps;
    /* Annotations for the ops added next (build_annotate.c): attribute texts as the HLO
     * text writes them, malloc'd; NULL when none. */
    char *sharding;
    cxla_sharding_type sharding_type;
    int64_t sharding_rank;   /* TILED: the array rank it fits */
    int64_t sharding_leaves; /* TUPLE: leaf shardings */
    char *metadata;
    int64_t frontend_count;
    char **frontend_keys, **frontend_values;
};

struct cxla_xla_computation {
    cxla_module *module; /* owned; entry = the built computation, callees first */
    /* Origin id of module->comps[i] (copies keep their original's id, so a computation
     * reached through several paths is imported once). */
    uint64_t *origins;
};

/* The IR module of a built computation (borrowed; lives as long as |computation|). */
const cxla_module *cxla_xla_computation_module(const cxla_xla_computation *computation);

/* ---- recording errors ------------------------------------------------------------ */

/* False when |b| already failed or was built (the caller returns an invalid op). */
bool bld_ok(cxla_builder *b);
/* Records "<op> (builder 'name'): <message>" as the first error (INVALID_ARGUMENT). */
void bld_fail(cxla_builder *b, const char *op, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* Records |status| (taken) prefixed with the op, unless an error is already recorded. */
void bld_fail_status(cxla_builder *b, const char *op, cxla_status status);
cxla_op bld_invalid(cxla_builder *b);

/* The builder of the first op in |ops| that names one (NULL when none does). */
cxla_builder *bld_of(const cxla_op *ops, int64_t count);
/* The instruction of operand |index| (for messages), checking it belongs to |b|; NULL
 * after recording an error otherwise. */
cxla_instr *bld_operand(cxla_builder *b, const char *op, cxla_op operand, int64_t index);
/* Resolves |count| ops into |out| (arena array); false after recording an error. */
bool bld_operands(cxla_builder *b, const char *op, const cxla_op *ops, int64_t count,
                  cxla_instr ***out);
/* The shape text of a shape, in the builder's arena ("?" when short). */
const char *bld_shape_str(cxla_builder *b, const cxla_shape *shape);

/* ---- emitting instructions ------------------------------------------------------- */

typedef struct bld_spec {
    cxla_opcode opcode;
    const cxla_shape *shape; /* the declared shape for ops whose result is chosen; or NULL */
    int64_t operand_count;
    cxla_instr *const *operands;
    int64_t attr_count;
    const cxla_attr *attrs;
    int64_t parameter_number; /* parameter only */
    cxla_literal *literal;    /* constant only; already adopted by the module */
    const char *name;         /* name prefix; NULL: the opcode's name */
} bld_spec;

/* Infers the result shape and appends the instruction; an invalid op after recording
 * the inference error (prefixed with |op|). */
cxla_op bld_emit(cxla_builder *b, const char *op, const bld_spec *spec);
/* The instruction of a valid op of |b|. */
cxla_instr *bld_instr(cxla_builder *b, cxla_op op);
/* Shorthands over bld_emit for a fixed operand list. */
cxla_op bld_emit_ops(cxla_builder *b, const char *op, cxla_opcode opcode, const cxla_shape *shape,
                     int64_t operand_count, cxla_instr *const *operands, int64_t attr_count,
                     const cxla_attr *attrs);

/* Copies |comp| (and what it calls) into |b|'s module; NULL after recording an error. */
cxla_computation *bld_import(cxla_builder *b, const char *op, const cxla_xla_computation *comp);

/* ---- annotations (build_annotate.c) --------------------------------------------- */

/* False after recording an error when the builder's sharding does not fit |shape|. */
bool bld_annotation_fits(cxla_builder *b, const char *op, const cxla_shape *shape);
/* Attaches the builder's sharding, metadata and frontend attributes to |in|. */
cxla_status bld_annotate(cxla_builder *b, cxla_instr *in);
/* Frees the annotation state (cxla_builder_destroy). */
void bld_annotations_free(cxla_builder *b);
/* Gives every array shape without a layout in |m| (instructions and shape attributes)
 * the default layout, as XLA's built modules have. */
cxla_status bld_default_layouts(cxla_module *m);

/* ---- attributes (values allocated in |b|'s arena) ------------------------------- */

cxla_attr bld_attr(cxla_attr_id id);
cxla_attr bld_attr_int(cxla_attr_id id, int64_t value);
cxla_attr bld_attr_bool(cxla_attr_id id, bool value);
cxla_attr bld_attr_float(cxla_attr_id id, double value);
cxla_attr bld_attr_word(cxla_attr_id id, const char *word); /* |word| must be static */
/* An INTS attribute (copied); false when memory is short (the error is recorded). */
bool bld_attr_ints(cxla_builder *b, cxla_attr_id id, const int64_t *values, int64_t count,
                   cxla_attr *out);
bool bld_attr_comps(cxla_builder *b, cxla_attr_id id, cxla_computation *const *comps, int64_t count,
                    cxla_attr *out);
bool bld_attr_replica_groups(cxla_builder *b, const cxla_replica_group *groups, int64_t count,
                             cxla_attr *out);
bool bld_attr_string(cxla_builder *b, cxla_attr_id id, const char *s, cxla_attr *out);

/* Arena helpers: copies of int lists and of shapes into |b|'s arena (NULL when short). */
int64_t *bld_copy_ints(cxla_builder *b, const int64_t *values, int64_t count);
/* A scratch array shape in the arena (dims copied). */
cxla_shape bld_array_shape(cxla_builder *b, cxla_type type, int64_t rank, const int64_t *dims);
/* Validates a caller's list argument: |count| >= 0 and |values| non-NULL when count > 0. */
bool bld_check_list(cxla_builder *b, const char *op, const char *what, const void *values,
                    int64_t count);

/* ---- building blocks shared by the families ------------------------------------- */

/* XLA's AddBroadcastSequence: |x| broadcast to |dims| (same rank, size-1 dims expanded
 * through a reshape; a scalar broadcast directly). */
cxla_op bld_broadcast_to(cxla_builder *b, const char *op, cxla_op x, int64_t rank,
                         const int64_t *dims);
cxla_op bld_reshape(cxla_builder *b, const char *op, cxla_op x, int64_t rank, const int64_t *dims);
/* A scalar computation (T, T) -> T applying |opcode| (or compare LT with |type|) built
 * into its own computation; the caller frees it. NULL after recording an error. */
cxla_xla_computation *bld_scalar_binary_computation(cxla_builder *b, const char *op,
                                                    cxla_opcode opcode, cxla_type type);
/* XLA's MakePadding for one dimension. */
void bld_make_padding(int64_t input, int64_t window, int64_t stride, cxla_padding padding,
                      int64_t *low, int64_t *high);

#endif /* CXLA_BUILDER_BUILDER_INTERNAL_H_ */
