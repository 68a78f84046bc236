/* The HLO IR: modules, computations, instructions and their attributes.
 *
 * One IR for everything: the text parser, the StableHLO front end and the builder all
 * produce it; the verifier, passes and every backend consume it. A module owns an arena
 * in which every computation, instruction, shape, name and attribute array lives; they
 * die with the module (cxla_module_destroy). Constants' literals are owned by the module
 * too and freed with it.
 */
#ifndef CXLA_HLO_HLO_H_
#define CXLA_HLO_HLO_H_

#include "base/base.h"
#include "cxla/hlo.h"
#include "cxla/literal.h"
#include "cxla/shape.h"

/* ---- opcodes (src/hlo/opcodes.def) ------------------------------------------------ */

enum {
    CXLA_OPF_ELEMENTWISE = 1 << 0,
    CXLA_OPF_SIDE_EFFECT = 1 << 1,
    CXLA_OPF_ASYNC_START = 1 << 2,
    CXLA_OPF_ASYNC_DONE = 1 << 3,
    CXLA_OPF_COLLECTIVE = 1 << 4,
    CXLA_OPF_NO_SHAPE = 1 << 5,
    CXLA_OPF_MAY_CALL = 1 << 6,
    CXLA_OPF_TO_APPLY = 1 << 7,
    CXLA_OPF_TO_APPLY_OPTIONAL = 1 << 8,
    CXLA_OPF_NEEDS_SHAPE = 1 << 9,
    CXLA_OPF_MOVES_ELEMENTS = 1 << 10,
    CXLA_OPF_RESULT_ACCURACY = 1 << 11,
};

/* The element types an elementwise operation accepts (all operands of one type) and the
 * type of its result: opcodes.def's type_rule column, checked by shape inference. */
typedef enum cxla_type_rule {
    CXLA_TR_NONE = 0,      /* not an operation shape inference checks by rule */
    CXLA_TR_ANY,           /* every array type; result the same */
    CXLA_TR_ARITH,         /* every array type but pred */
    CXLA_TR_FLOAT,         /* floating point */
    CXLA_TR_FLOAT_COMPLEX, /* floating point or complex */
    CXLA_TR_REAL_IMAG,     /* floating point or complex; complex -> its component type */
    CXLA_TR_ABS,           /* signed integers, floating point, complex -> component */
    CXLA_TR_INT,           /* integers */
    CXLA_TR_NEGATE,        /* integers, floating point, complex */
    CXLA_TR_SIGN,          /* signed integers, floating point, complex */
    CXLA_TR_PRED_INT,      /* pred or integers */
    CXLA_TR_IS_FINITE,     /* floating point -> pred */
    CXLA_TR_COMPLEX,       /* f32 -> c64, f64 -> c128 */
} cxla_type_rule;

typedef enum cxla_opcode {
#define X(e, name, arity, flags, rule, stablehlo) CXLA_OP_##e,
#include "hlo/opcodes.def"
#undef X
    CXLA_OP_COUNT
} cxla_opcode;

typedef struct cxla_opcode_info {
    const char *name; /* text name: "add", "get-tuple-element" */
    int arity;        /* operand count, -1 when it varies */
    unsigned flags;   /* CXLA_OPF_* */
    cxla_type_rule type_rule;
    const char *stablehlo; /* the one-to-one StableHLO operation ("round_nearest_afz"), or NULL */
} cxla_opcode_info;

const cxla_opcode_info *cxla_opcode_get_info(cxla_opcode op);
const char *cxla_opcode_name(cxla_opcode op);
/* Looks up a text name, including the legacy names old dumps carry ("cross-replica-sum"
 * is all-reduce). CXLA_OP_COUNT when unknown. */
cxla_opcode cxla_opcode_from_name(const char *name, size_t len);
/* The opcode whose stablehlo column is |name| (without "stablehlo."); CXLA_OP_COUNT when
 * none. */
cxla_opcode cxla_opcode_from_stablehlo_name(const char *name);

/* ---- attributes (src/hlo/attrs.def) ----------------------------------------------- */

typedef enum cxla_attr_id {
#define X(e, name, kind) CXLA_ATTR_##e,
#include "hlo/attrs.def"
#undef X
    CXLA_ATTR_UNKNOWN, /* a name not in the table, kept as RAW text */
    CXLA_ATTR_COUNT
} cxla_attr_id;

typedef enum cxla_attr_kind {
    CXLA_ATTR_KIND_BOOL,
    CXLA_ATTR_KIND_INT,
    CXLA_ATTR_KIND_FLOAT,
    CXLA_ATTR_KIND_STRING,
    CXLA_ATTR_KIND_WORD,
    CXLA_ATTR_KIND_INTS,
    CXLA_ATTR_KIND_INT_LISTS,
    CXLA_ATTR_KIND_COMPUTATION,
    CXLA_ATTR_KIND_COMPUTATIONS,
    CXLA_ATTR_KIND_INSTRUCTIONS,
    CXLA_ATTR_KIND_SHAPE,
    CXLA_ATTR_KIND_SHAPES,
    CXLA_ATTR_KIND_WINDOW,
    CXLA_ATTR_KIND_PADDING,
    CXLA_ATTR_KIND_SLICE,
    CXLA_ATTR_KIND_DIM_LABELS,
    CXLA_ATTR_KIND_REPLICA_GROUPS,
    CXLA_ATTR_KIND_PRECISIONS,
    CXLA_ATTR_KIND_LITERAL,
    CXLA_ATTR_KIND_RAW,
    CXLA_ATTR_KIND_COUNT
} cxla_attr_kind;

typedef struct cxla_attr_info {
    const char *name;
    cxla_attr_kind kind;
} cxla_attr_info;

const cxla_attr_info *cxla_attr_get_info(cxla_attr_id id);
/* CXLA_ATTR_UNKNOWN when |name| is not in the table. */
cxla_attr_id cxla_attr_from_name(const char *name, size_t len);
/* Levenshtein distance of two names of at most 64 bytes ((size_t)-1 for longer ones). */
size_t cxla_edit_distance(const char *a, size_t na, const char *b, size_t nb);
/* The attribute name / array element type name |name| is most likely a misspelling of
 * (for "did you mean"), or NULL when none is close. */
const char *cxla_attr_suggest(const char *name, size_t len);
const char *cxla_type_suggest(const char *name, size_t len);

typedef struct cxla_instr cxla_instr;
typedef struct cxla_computation cxla_computation;
typedef struct cxla_module cxla_module;

/* One window dimension (convolution, reduce-window, select-and-scatter). */
typedef struct cxla_window_dim {
    int64_t size, stride, pad_low, pad_high, lhs_dilation, rhs_dilation;
    bool reversal;
} cxla_window_dim;

/* One dimension of a pad instruction's padding (low/high may be negative). */
typedef struct cxla_pad_dim {
    int64_t low, high, interior;
} cxla_pad_dim;

/* One dimension of a slice: [start:limit:stride]. */
typedef struct cxla_slice_dim {
    int64_t start, limit, stride;
} cxla_slice_dim;

/* Convolution dimension numbers decoded from dim_labels (e.g. b01f_01io->b01f). */
typedef struct cxla_conv_dims {
    int64_t spatial_count;
    int64_t input_batch, input_feature, *input_spatial;
    int64_t kernel_input_feature, kernel_output_feature, *kernel_spatial;
    int64_t output_batch, output_feature, *output_spatial;
} cxla_conv_dims;

/* Replica groups: explicit lists, or the iota form [G,S]<=[dims]T(perm), or (new) the
 * mesh form, kept as text. Explicit groups are always filled in (from the iota form too),
 * so consumers need not care which form was written. */
typedef struct cxla_replica_groups {
    int64_t group_count;
    int64_t *group_sizes; /* group_count entries */
    int64_t **groups;     /* group_count lists */
    bool iota_form;       /* written as [G,S]<=[...]: printed back in that form */
    int64_t iota_group_count, iota_group_size;
    int64_t iota_reshape_rank, *iota_reshape_dims;
    int64_t iota_transpose_rank, *iota_transpose_perm; /* 0 when no T(...) */
    const char *text;                                  /* mesh form: verbatim */
} cxla_replica_groups;

typedef enum cxla_precision {
    CXLA_PRECISION_DEFAULT,
    CXLA_PRECISION_HIGH,
    CXLA_PRECISION_HIGHEST,
    CXLA_PRECISION_PACKED_NIBBLE,
} cxla_precision;

typedef struct cxla_attr {
    cxla_attr_id id;
    const char *name; /* the table's name, or the name as written for UNKNOWN */
    cxla_attr_kind kind;
    union {
        bool b;
        int64_t i;
        double f;
        const char *s; /* STRING (unescaped), WORD, RAW (verbatim text) */
        struct {
            int64_t count;
            int64_t *values;
        } ints;
        struct {
            int64_t count;
            int64_t *lengths;
            int64_t **lists;
        } int_lists;
        struct {
            int64_t count;
            cxla_computation **items;
        } comps; /* COMPUTATION has count 1 */
        struct {
            int64_t count;
            cxla_instr **items;
        } instrs;
        struct {
            int64_t count;
            cxla_shape *items;
        } shapes; /* SHAPE has count 1 */
        struct {
            int64_t rank;
            cxla_window_dim *dims;
        } window;
        struct {
            int64_t rank;
            cxla_pad_dim *dims;
        } padding;
        struct {
            int64_t rank;
            cxla_slice_dim *dims;
        } slice;
        cxla_conv_dims conv;
        cxla_replica_groups groups;
        struct {
            int64_t count;
            cxla_precision *items;
        } precisions;
        cxla_literal *literal; /* owned by the module */
    } v;
    /* Names of computations / instructions as written, until the parser resolves them. */
    const char **pending_names;
} cxla_attr;

/* ---- instructions, computations, modules ------------------------------------------ */

struct cxla_instr {
    cxla_opcode opcode;
    const char *name;
    cxla_shape shape;
    cxla_computation *parent;
    int64_t id; /* unique in the module, in creation order */
    int64_t operand_count;
    cxla_instr **operands;
    int64_t attr_count;
    cxla_attr *attrs; /* sorted by id (the printing order) */
    int64_t user_count, user_capacity;
    cxla_instr **users; /* each user once, in the order they started using this */
    /* parameter: its number; constant: its value (owned by the module) or elided. */
    int64_t parameter_number;
    cxla_literal *literal;
    bool literal_elided;
    /* Async sugar: `custom-call-start` etc. name the wrapped opcode; otherwise COUNT. */
    cxla_opcode async_wrapped;
    /* Where the instruction was written (0 when built in memory). */
    int64_t line, column;
};

struct cxla_computation {
    const char *name;
    cxla_module *module;
    int64_t instr_count, instr_capacity;
    cxla_instr **instrs; /* in order (definitions before uses once verified) */
    int64_t param_count;
    cxla_instr **params; /* by parameter number */
    cxla_instr *root;
    bool is_entry;
    const char *execution_thread; /* NULL for the main thread */
    cxla_strmap instr_by_name;
    int64_t line, column;
};

struct cxla_module {
    cxla_arena *arena;
    const char *name;
    int64_t comp_count, comp_capacity;
    cxla_computation **comps; /* callees before callers, entry last */
    cxla_computation *entry;
    cxla_strmap comp_by_name;
    int64_t attr_count;
    cxla_attr *attrs; /* header attributes, sorted by id */
    /* entry_computation_layout, decoded (and derived from the entry when absent). */
    bool has_entry_layout;
    int64_t entry_param_count;
    cxla_shape *entry_param_shapes;
    cxla_shape entry_result_shape;
    int64_t replica_count, num_partitions; /* 1 unless the header says otherwise */
    const char *stack_frames;              /* FileNames ... tables, verbatim, or NULL */
    int64_t next_id;
    /* How many control-predecessors attributes cxla_instr_set_attr has set in this module
     * (never decremented): 0 lets passes skip looking for control dependencies. */
    int64_t control_predecessor_attrs;
    /* Literals to free with the module. */
    int64_t literal_count, literal_capacity;
    cxla_literal **literals;
    /* Warnings collected while parsing (unknown attributes ...), one per line. */
    cxla_strbuf warnings;
};

/* Module life cycle (cxla_module_destroy is public: cxla/hlo.h). */
cxla_status cxla_module_create(const char *name, cxla_module **out_module);
/* Adds a computation (appended: callees must be added before their callers). */
cxla_status cxla_module_add_computation(cxla_module *module, const char *name,
                                        cxla_computation **out_computation);
cxla_computation *cxla_module_find_computation(const cxla_module *module, const char *name);
/* Takes ownership of |literal| (freed with the module). */
cxla_status cxla_module_adopt_literal(cxla_module *module, cxla_literal *literal);
void cxla_module_warn(cxla_module *module, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Instructions. _add appends a new instruction with |operands| (copied) to |comp|,
 * registering it as a user of each operand. The shape is copied into the arena. */
cxla_status cxla_computation_add_instr(cxla_computation *comp, cxla_opcode opcode, const char *name,
                                       const cxla_shape *shape, int64_t operand_count,
                                       cxla_instr *const *operands, cxla_instr **out_instr);
cxla_instr *cxla_computation_find_instr(const cxla_computation *comp, const char *name);
/* Sets (adds or replaces) an attribute, keeping the list sorted; the value is copied
 * shallowly (arrays must already live in the module's arena). */
cxla_status cxla_instr_set_attr(cxla_instr *instr, const cxla_attr *attr);
const cxla_attr *cxla_instr_attr(const cxla_instr *instr, cxla_attr_id id);
/* Typed getters: NULL / default when absent. */
const int64_t *cxla_instr_ints(const cxla_instr *instr, cxla_attr_id id, int64_t *out_count);
bool cxla_instr_int(const cxla_instr *instr, cxla_attr_id id, int64_t *out_value);
bool cxla_instr_bool(const cxla_instr *instr, cxla_attr_id id);        /* false when absent */
const char *cxla_instr_word(const cxla_instr *instr, cxla_attr_id id); /* NULL when absent */
cxla_computation *cxla_instr_called(const cxla_instr *instr, cxla_attr_id id);
/* Every computation |instr| calls, in attribute order (up to |max|); returns the count. */
int64_t cxla_instr_called_computations(const cxla_instr *instr, cxla_computation **out,
                                       int64_t max);

/* Graph helpers for passes. */
cxla_status cxla_instr_replace_operand(cxla_instr *instr, int64_t index, cxla_instr *with);
/* Makes every user of |old| use |with| instead (and the root, if |old| is the root). */
cxla_status cxla_instr_replace_all_uses(cxla_instr *old, cxla_instr *with);
/* Post-order of a computation's instructions (operands and control predecessors first,
 * root last; unreachable instructions included, in order). |out| gets instr_count
 * entries from the arena. Fails on a cycle, naming an instruction on it. */
cxla_status cxla_computation_post_order(const cxla_computation *comp, cxla_instr ***out);
/* The same with the result in |arena|: leaves the module untouched, so that several
 * threads may order (and run) one module at a time. */
cxla_status cxla_computation_post_order_in(const cxla_computation *comp, cxla_arena *arena,
                                           cxla_instr ***out);
/* Post-order of the computations reachable from |comp| through called computations
 * (callees first). */
cxla_status cxla_module_computation_post_order(const cxla_module *module, cxla_computation ***out,
                                               int64_t *out_count);
/* Deep copy of |comp| into the same module under |new_name| (instructions renamed with
 * |suffix|); called computations are shared, not cloned. */
cxla_status cxla_computation_clone(const cxla_computation *comp, const char *new_name,
                                   const char *suffix, cxla_computation **out_clone);

/* Removes |instr| from |comp|: it must have no users, not be the root or a parameter,
 * and not be named as a control predecessor (FAILED_PRECONDITION otherwise, naming it).
 * It stops being a user of its operands; its memory stays in the arena and its name
 * becomes free again. */
cxla_status cxla_computation_remove_instr(cxla_computation *comp, cxla_instr *instr);
/* Removes the computations the entry cannot reach through called computations (they stay
 * in the arena; their names become free). |out_removed| (may be NULL) gets the count. */
cxla_status cxla_module_remove_unreachable(cxla_module *module, int64_t *out_removed);
/* Puts |comp|'s instruction list in post-order (definitions before uses), as the printer
 * and the parser expect after a pass appended instructions. */
cxla_status cxla_computation_sort(cxla_computation *comp);
/* A name unused by any computation or instruction of |module|: |base| (without a trailing
 * ".N") followed by ".<a fresh id>". In the module's arena; NULL when memory is short. */
const char *cxla_module_unique_name(cxla_module *module, const char *base);
/* A deep copy of |module| with its own arena (clone.c): computations, instructions (same
 * names and ids), attributes, constants (copied literals), header, entry layout and
 * warnings; it prints as |module| does. The module must define each operand before its
 * use (as a verified one does). Errors: out of memory, an operand used before it is
 * defined. */
cxla_status cxla_module_clone(const cxla_module *module, cxla_module **out);
/* cxla_module_clone whose constant instructions borrow |module|'s literals instead of
 * copying them (one copy of the weights a module carries as constants), for a clone that
 * |module| outlives and that, as every pass does, replaces a constant's literal rather than
 * writing into it. Literal attributes are still copied. */
cxla_status cxla_module_clone_sharing_constants(const cxla_module *module, cxla_module **out);
/* Deep-copies attribute |from| of module |src| into |to| in |dst|'s arena: called
 * computations map through |comp_map| (by index in src->comps), instruction references
 * (control predecessors) by name through |instr_map| (NULL: they are an error); literals
 * are copied and adopted by |dst|. */
cxla_status cxla_attr_copy(cxla_module *dst, const cxla_module *src,
                           cxla_computation *const *comp_map, const cxla_strmap *instr_map,
                           const cxla_attr *from, cxla_attr *to);

/* ---- text ------------------------------------------------------------------------- */

/* cxla_hlo_style, cxla_hlo_parse and cxla_hlo_print are public (cxla/hlo.h). */

void cxla_hlo_print_to(cxla_strbuf *b, const cxla_module *module, cxla_hlo_style style);
/* Prints one instruction (without indentation or newline). */
void cxla_hlo_print_instr(cxla_strbuf *b, const cxla_instr *instr, cxla_hlo_style style);

/* ---- drawing ---------------------------------------------------------------------- */

typedef struct cxla_hlo_graph_options {
    /* The computation to draw with everything it calls; NULL draws the entry. */
    const char *computation;
    /* Constants of up to this many elements show their values (0: 8). */
    int64_t max_constant_elements;
} cxla_hlo_graph_options;

/* Draws a computation of |module| and the computations it calls as a Graphviz graph in
 * DOT text, appended to |out| (the caller's buffer). One node per instruction (name,
 * opcode, short result shape; parameters, constants and the root styled apart, small
 * constants with their values), edges from operands to users (labeled with the operand
 * index when there are several), called computations as clusters entered by a dashed
 * edge from the caller; scalar reducers such as add(a, b) are summarized in the caller's
 * label instead. |options| may be NULL; |out_node_count| (may be NULL) gets the number
 * of nodes drawn. Errors: NOT_FOUND for an unknown computation name (the message lists
 * the module's computations), INVALID_ARGUMENT when there is no entry to draw,
 * RESOURCE_EXHAUSTED when memory is short. */
cxla_status cxla_hlo_graph(const cxla_module *module, const cxla_hlo_graph_options *options,
                           cxla_strbuf *out, int64_t *out_node_count);

/* ---- shape inference and verification --------------------------------------------- */

/* Computes the result shape of |instr| from its operands' shapes, its attributes and its
 * called computations, as XLA's shape inference does. For the operations whose result
 * is chosen rather than derived (parameter, constant, iota, convert's element type,
 * reshape's and broadcast's dims, bitcast, custom-call, infeed, rng ...) the declared
 * |instr->shape| supplies what is chosen and is checked for consistency. The result is
 * allocated in |arena|. Errors name the operation, the operand shapes and what was
 * expected. */
cxla_status cxla_infer_shape(const cxla_instr *instr, cxla_arena *arena, cxla_shape *out_shape);
/* The internal name of cxla_hlo_verify (include/cxla/hlo.h): one verifier. */
#define cxla_verify_module cxla_hlo_verify

#endif /* CXLA_HLO_HLO_H_ */
