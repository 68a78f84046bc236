/* Internal to the StableHLO front end: the converter's state, shared by convert.c (the
 * driver, values, scopes, regions), convert_ops.c (one function per op family), chlo.c
 * (CHLO lowerings), checks.c (check operations) and dense.c (dense constants). */
#ifndef CXLA_STABLEHLO_CONVERT_INTERNAL_H_
#define CXLA_STABLEHLO_CONVERT_INTERNAL_H_

#include "cxla/stablehlo.h"
#include "hlo/hlo.h"
#include "stablehlo/mlir.h"

typedef struct cv_scope cv_scope;

typedef struct cv {
    const mlir_module *mm;
    cxla_module *m;
    cxla_status err;
    cxla_strmap funcs;      /* name -> mlir_func */
    cxla_strmap func_comps; /* name -> converted cxla_computation */
    int64_t counter;        /* for unique names */
    int64_t check_count;
    const char *skip_reason;
    const mlir_func *current_func;
    bool run_all; /* several public test functions and no @main: run each */
    /* run_parallel device modules this converter is nested in (each has its own cv, so a
     * program that runs itself would recurse without end). */
    int parallel_depth;
    /* Blocks being converted, one inside the other (regions, called functions): bounded so
     * that deep nesting is an error, not a stack overflow. */
    int block_depth;
    /* Where each instruction and computation came from, so that a verifier error on the
     * converted module names the user's op, value and position (errors.c). */
    const mlir_op *current_op; /* the user op being converted */
    cxla_strmap instr_origins; /* instruction name -> cv_origin */
    cxla_strmap comp_origins;  /* computation name -> cv_origin */
} cv;

/* The user's op an instruction or computation was made for. */
typedef struct cv_origin {
    const cxla_instr *instr; /* NULL for a computation */
    const mlir_op *op;       /* NULL: a function's own computation or its parameters */
    const mlir_func *func;   /* the function it is in */
    bool made_for;           /* the converter added it while converting |op| */
} cv_origin;

/* Records the origin of instruction |in| (|op| NULL: made for c->current_op) and of the
 * computation |name| (|op|: the op whose region it is; NULL: the function's own). Errors
 * here are out of memory, and only lose the mapping. */
void cv_note_instr(cv *c, const cxla_instr *in, const mlir_op *op);
void cv_note_comp(cv *c, const char *name, const mlir_op *op);
/* "in function 'f', operation 'stablehlo.add' (%c)", how every error names an op
 * (|func| NULL: c->current_func); "func.func" for a function's own errors. */
void cv_describe_op(const cv *c, cxla_strbuf *b, const mlir_op *op, const mlir_func *func);
/* cv_fail with the HLO shapes in the message written as StableHLO types. */
bool cv_fail_types(cv *c, const mlir_op *op, const mlir_func *func, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
/* A verifier error on the converted module in the user's terms: "FILE:LINE:COL: in
 * function 'f', operation 'stablehlo.add' (%c): ..." with StableHLO types. Takes |v|. */
cxla_status cv_verifier_error(cv *c, cxla_status v);

/* Where values are looked up: one per computation being built. */
struct cv_scope {
    cv_scope *parent;
    cxla_computation *comp;
    cxla_strmap values; /* name -> cxla_instr */
    /* Values of outer scopes passed in explicitly (while/case/if): names in order and the
     * instruction in this computation that stands for each. */
    int64_t capture_count;
    const char **capture_names;
    cxla_instr **capture_instrs;
};

/* Errors: record the first, return false / NULL. */
bool cv_fail(cv *c, const mlir_op *op, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
bool cv_status(cv *c, const mlir_op *op, cxla_status st);

/* Instructions. Shapes get the default layout. */
cxla_instr *cv_emit(cv *c, cv_scope *s, const mlir_op *op, cxla_opcode opcode,
                    const cxla_shape *shape, int64_t n, cxla_instr *const *operands);
/* Shape inference from the operands (for instructions the converter adds itself). */
cxla_instr *cv_emit_infer(cv *c, cv_scope *s, const mlir_op *op, cxla_opcode opcode, int64_t n,
                          cxla_instr *const *operands);
bool cv_finish_infer(cv *c, const mlir_op *op, cxla_instr *in);
/* Sets an attribute from its HLO text ("{1,2}", "LT", "size=2x2 stride=1x1"). */
bool cv_attr_text(cv *c, const mlir_op *op, cxla_instr *in, cxla_attr_id id, const char *text);
bool cv_attr_ints(cv *c, const mlir_op *op, cxla_instr *in, cxla_attr_id id, const int64_t *v,
                  int64_t n);
bool cv_attr_int(cv *c, const mlir_op *op, cxla_instr *in, cxla_attr_id id, int64_t v);
bool cv_attr_comps(cv *c, const mlir_op *op, cxla_instr *in, cxla_attr_id id,
                   cxla_computation **comps, int64_t n);
cxla_instr *cv_constant_scalar(cv *c, cv_scope *s, cxla_type type, double value);
cxla_instr *cv_gte(cv *c, cv_scope *s, cxla_instr *tuple, int64_t index);
cxla_instr *cv_tuple(cv *c, cv_scope *s, cxla_instr *const *items, int64_t n);

/* Values. */
cxla_instr *cv_lookup(cv *c, cv_scope *s, const mlir_op *op, const char *name);
bool cv_define(cv *c, cv_scope *s, const mlir_op *op, const char *name, cxla_instr *in);
/* Binds an op's results: one result -> |in|; several -> get-tuple-element of |in|. */
bool cv_bind_results(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *in);
bool cv_operands(cv *c, cv_scope *s, const mlir_op *op, cxla_instr **out, int64_t max,
                 int64_t *out_count);
/* The value of an op that takes exactly one operand (an error naming the count otherwise). */
cxla_instr *cv_one_operand(cv *c, cv_scope *s, const mlir_op *op);

/* Regions. A region applied to elements (reducers, comparators): its block arguments
 * become parameters (scalars as written); outer values must be constants (copied in).
 * Returns the computation, with a tuple root when the region returns several values. */
cxla_computation *cv_apply_region(cv *c, cv_scope *s, const mlir_op *op, const mlir_region *r,
                                  const char *what);
/* A computation of |n| scalar |type| parameter pairs applying the binary |opcode|. */
cxla_computation *cv_binary_computation(cv *c, const mlir_op *op, cxla_opcode opcode,
                                        cxla_type type, int64_t n);
/* Computations built by hand: a new top-level (or nested) scope with its computation;
 * a parameter; the params list and root filled in. */
cv_scope *cv_new_scope(cv *c, cv_scope *parent, const char *comp_name, const mlir_op *op);
cxla_instr *cv_add_param(cv *c, cv_scope *s, const mlir_op *op, const cxla_shape *shape,
                         int64_t number);
bool cv_finish_comp(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *root);
/* Makes |entry| the entry of c->m, ordering the computations callees first. */
bool cv_order_module(cv *c, cxla_computation *entry);
/* Converts the ops of |b| in scope |s|; the terminator's operands go to |*ret|. */
bool cv_block(cv *c, cv_scope *s, const mlir_block *b, cxla_instr ***ret, int64_t *ret_count);
/* The computation of function |name| (converted once). */
cxla_computation *cv_func(cv *c, const mlir_op *op, const char *name);

/* Ops. Each returns false after cv_fail. */
bool cv_op(cv *c, cv_scope *s, const mlir_op *op);
bool cv_chlo(cv *c, cv_scope *s, const mlir_op *op, bool *handled);
/* stablehlo.bitcast_convert, with StableHLO's one-bit i1 and complex width changes
 * (bitcast.c). */
bool cv_bitcast_convert(cv *c, cv_scope *s, const mlir_op *op);
bool cv_check(cv *c, cv_scope *s, const mlir_op *op, bool *handled);
/* Collectives, infeed/outfeed, send/recv (|sh|: the op name without "stablehlo."), and
 * interpreter.run_parallel (parallel.c). */
bool cv_collective(cv *c, cv_scope *s, const mlir_op *op, const char *sh, bool *handled);
bool cv_run_parallel(cv *c, cv_scope *s, const mlir_op *op);

/* Dense constants: a literal of |shape| from the attribute. */
/* True when |a| gives one value for every element of |shape| (and there are several). */
bool cv_dense_is_splat(const mlir_attr *a, const cxla_shape *shape);
cxla_status cv_dense_literal(const mlir_module *mm, const mlir_attr *a, const cxla_shape *shape,
                             cxla_literal **out);

/* Attribute helpers: integer lists (ARRAY of INT, or a dense of ints). */
bool cv_ints(cv *c, const mlir_op *op, const mlir_attr *a, int64_t *out, int64_t max,
             int64_t *count);
void cv_print_ints(cxla_strbuf *b, const int64_t *v, int64_t n);

/* The check target's registration (checks.c). */
void cv_register_check_target(void);
extern const char *const CV_CHECK_TARGET;
/* The run_parallel target's registration (parallel.c). */
void cv_register_parallel_target(void);
extern const char *const CV_PARALLEL_TARGET;

#endif /* CXLA_STABLEHLO_CONVERT_INTERNAL_H_ */
