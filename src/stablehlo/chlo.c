/* CHLO operations (the client HLO dialect JAX emits) lowered to HLO: those with an HLO
 * opcode of their own map to it; the others are built from ordinary operations. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stablehlo/convert_internal.h"

typedef struct chlo_map {
    const char *name;
    cxla_opcode opcode;
} chlo_map;

static const chlo_map kDirect[] = {
    {"acos", CXLA_OP_ACOS},   {"acosh", CXLA_OP_ACOSH}, {"asin", CXLA_OP_ASIN},
    {"asinh", CXLA_OP_ASINH}, {"atan", CXLA_OP_ATAN},   {"atanh", CXLA_OP_ATANH},
    {"cosh", CXLA_OP_COSH},   {"sinh", CXLA_OP_SINH},   {"tan", CXLA_OP_TAN},
    {"erf", CXLA_OP_ERF},     {"mulhi", CXLA_OP_MULHI},
};

static const cxla_shape *out0(cv *c, const mlir_op *op) {
    if (op->out_type_count < 1) return cv_fail(c, op, "the result type is missing"), NULL;
    return &op->out_types[0];
}

static cxla_instr *unary(cv *c, cv_scope *s, const mlir_op *op, cxla_opcode opc, cxla_instr *x) {
    return cv_emit(c, s, op, opc, &x->shape, 1, &x);
}

static cxla_instr *binary(cv *c, cv_scope *s, const mlir_op *op, cxla_opcode opc, cxla_instr *x,
                          cxla_instr *y) {
    cxla_instr *xy[2] = {x, y};
    if (!x || !y) return NULL;
    return cv_emit(c, s, op, opc, &x->shape, 2, xy);
}

/* A constant of |like|'s shape holding |v|. */
static cxla_instr *full(cv *c, cv_scope *s, const mlir_op *op, const cxla_instr *like, double v) {
    cxla_instr *k = cv_constant_scalar(c, s, like->shape.type, v);
    if (!k || like->shape.rank == 0) return k;
    cxla_shape sh = like->shape;
    sh.layout = NULL;
    cxla_instr *b = cv_emit(c, s, op, CXLA_OP_BROADCAST, &sh, 1, &k);
    if (!cv_attr_ints(c, op, b, CXLA_ATTR_DIMENSIONS, NULL, 0)) return NULL;
    return b;
}

static bool top_k(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *x;
    if (op->operand_count != 1 || !(x = cv_lookup(c, s, op, op->operands[0]))) return false;
    const mlir_attr *k = mlir_op_attr(op, "k");
    if (!k || k->kind != MA_INT) return cv_fail(c, op, "no k");
    if (op->out_type_count != 2) return cv_fail(c, op, "expected two results");
    cxla_shape sh = {.type = CXLA_TUPLE, .tuple_count = 2, .elements = op->out_types};
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_TOPK, &sh, 1, &x);
    return cv_attr_int(c, op, in, CXLA_ATTR_K, k->i) &&
           cv_attr_text(c, op, in, CXLA_ATTR_LARGEST, "true") && cv_bind_results(c, s, op, in);
}

bool cv_scan(cv *c, cv_scope *s, const mlir_op *op);

bool cv_chlo(cv *c, cv_scope *s, const mlir_op *op, bool *handled) {
    *handled = true;
    const char *nm = op->name + 5;
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(kDirect); i++) {
        if (strcmp(nm, kDirect[i].name) != 0) continue;
        cxla_instr *ops[2];
        int64_t n;
        if (!cv_operands(c, s, op, ops, 2, &n)) return false;
        const cxla_shape *rs = out0(c, op);
        cxla_instr *in = rs ? cv_emit(c, s, op, kDirect[i].opcode, rs, n, ops) : NULL;
        return in && cv_bind_results(c, s, op, in);
    }
    if (strcmp(nm, "top_k") == 0) return top_k(c, s, op);
    if (strcmp(nm, "scan") == 0) return cv_scan(c, s, op);
    if (strcmp(nm, "erfc") == 0) {
        cxla_instr *x;
        if (op->operand_count != 1 || !(x = cv_lookup(c, s, op, op->operands[0]))) return false;
        cxla_instr *r = binary(c, s, op, CXLA_OP_SUBTRACT, full(c, s, op, x, 1.0),
                               unary(c, s, op, CXLA_OP_ERF, x));
        return r && cv_bind_results(c, s, op, r);
    }
    *handled = false;
    return true;
}
