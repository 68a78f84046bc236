/* Internal to the StableHLO front end (src/stablehlo/): the MLIR text reader's op tree.
 *
 * mlir_parser.c reads MLIR text (the subset StableHLO programs use: modules, func.func,
 * ops in the pretty and the generic syntax, regions with block arguments, attributes and
 * tensor types) into this small tree, allocated in one arena; convert.c turns the tree
 * into an HLO module. The tree keeps what each op wrote (operands, attributes, positional
 * words, types, regions) without knowing what the op means: the meaning is convert.c's.
 */
#ifndef CXLA_STABLEHLO_MLIR_H_
#define CXLA_STABLEHLO_MLIR_H_

#include "base/base.h"
#include "cxla/shape.h"

typedef enum mlir_attr_kind {
    MA_INT,     /* 42, or 42 : i32 */
    MA_FLOAT,   /* 1.5 */
    MA_BOOL,    /* true / false */
    MA_STRING,  /* "text" (unescaped) */
    MA_SYMBOL,  /* @name */
    MA_WORD,    /* a bare word: LT, FLOAT, e5m0, b ... */
    MA_ARRAY,   /* [a, b], array<i64: 1, 2>; |cross|: [a] x [b] (-> [c]) groups */
    MA_DENSE,   /* dense<...> with its type */
    MA_DICT,    /* {k = v, ...} */
    MA_DIALECT, /* #dialect.name<items> or #dialect<items>: keys/items as a dict */
    MA_TYPE,    /* a type used as an attribute */
    MA_UNIT,    /* a key without a value */
} mlir_attr_kind;

typedef struct mlir_attr mlir_attr;
struct mlir_attr {
    mlir_attr_kind kind;
    size_t pos; /* where it was written */
    int64_t i;
    double f;
    bool b;
    const char *s; /* STRING, SYMBOL, WORD, DIALECT (the dialect attribute's name) */
    size_t slen;
    /* ARRAY items; DICT / DIALECT entries (keys[k] NULL for a positional item). */
    int64_t count;
    mlir_attr **items;
    const char **keys;
    bool cross;
    /* DENSE: the element tokens (text ranges), or the hex string; TYPE: the type. */
    cxla_shape type;
    bool has_type;
    bool splat;      /* a single value for every element */
    const char *hex; /* "0x..." contents, or NULL */
    size_t hex_len;
    int64_t tok_count;
    size_t *tok_pos, *tok_len;
};

typedef struct mlir_op mlir_op;

typedef struct mlir_block {
    int64_t arg_count;
    const char **arg_names;
    cxla_shape *arg_types;
    int64_t op_count;
    mlir_op **ops;
} mlir_block;

typedef struct mlir_region {
    mlir_block *block; /* one block (StableHLO regions have one) */
} mlir_region;

struct mlir_op {
    const char *name; /* "stablehlo.add", "func.return", "check.expect_eq_const" */
    size_t pos;
    int64_t line, column;
    bool generic; /* written "op"(...) */
    int64_t result_count;
    const char **results; /* value names: "%0", or "%1#0", "%1#1" for %1:2 */
    int64_t operand_count;
    const char **operands; /* "%x" or "%x#1" */
    /* Attributes: properties <{...}>, the attribute dictionary and pretty key = value. */
    int64_t attr_count;
    const char **attr_names;
    mlir_attr **attrs;
    /* Pretty syntax: bare words and other values written without a key, in order. */
    int64_t word_count;
    mlir_attr **words;
    const char *callee; /* @symbol of call / custom_call / composite */
    /* while: the iteration arguments' names (%arg0 = %init). */
    int64_t iter_count;
    const char **iter_names;
    /* get_tuple_element %t[1] */
    int64_t index;
    bool has_index;
    /* slice %x [a:b:c, ...]: start, limit, stride per dimension */
    int64_t slice_rank;
    int64_t *slice; /* 3 * rank */
    /* The type signature: operand types and result types (a lone type fills both). */
    int64_t in_type_count, out_type_count;
    cxla_shape *in_types, *out_types;
    bool has_types;
    bool functional; /* written (ins) -> outs; otherwise one list for both */
    int64_t region_count;
    mlir_region **regions;
};

typedef struct mlir_func {
    const char *name; /* without '@' */
    bool is_public;
    size_t pos;
    int64_t line, column;
    mlir_block *body; /* args are the parameters */
    int64_t result_count;
    cxla_shape *result_types;
} mlir_func;

typedef struct mlir_module {
    cxla_arena *arena;
    const char *name; /* NULL when not named */
    const char *text;
    size_t len;
    const char *filename;
    int64_t num_replicas, num_partitions; /* from mhlo.* attributes; 1 when absent */
    int64_t func_count;
    mlir_func **funcs;
} mlir_module;

/* Parses MLIR text; the tree lives in a new arena (mlir_module_free). Errors give
 * "FILE:LINE:COL: message". */
cxla_status mlir_parse(const char *text, size_t len, const char *filename, mlir_module **out);
void mlir_module_free(mlir_module *m);

/* Error at |pos| of the module's text. */
cxla_status mlir_error_at(const mlir_module *m, size_t pos, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Looks an attribute up by name (NULL when absent). */
const mlir_attr *mlir_op_attr(const mlir_op *op, const char *name);
/* Looks a DICT / DIALECT entry up by key. */
const mlir_attr *mlir_attr_get(const mlir_attr *a, const char *key);

/* Element type names: "f32", "i1", "ui8", "bf16", "f8E4M3FN", "complex<f32>" is handled by
 * the type parser. CXLA_TYPE_INVALID when unknown. */
cxla_type mlir_element_type(const char *name, size_t len);

#endif /* CXLA_STABLEHLO_MLIR_H_ */
