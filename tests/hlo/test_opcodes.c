/* The opcode table (src/hlo/opcodes.def) is consistent with itself and with the stages it
 * drives: names and StableHLO names are unique and found again, the flags imply what
 * they must, and every elementwise operation whose shape inference checks types by rule
 * has a rule (shape inference fails with "opcodes.def gives ... no ... type rule" on one
 * that lacks it). Per-stage coverage: tests/hlo/test_infer.c (shape inference) and
 * tests/interp/test_interp_table.c (interpreter handlers). */
#include "harness.h"
#include "hlo/hlo.h"

static unsigned flags(cxla_opcode op) {
    return cxla_opcode_get_info(op)->flags;
}

static void test_names(void) {
    for (int i = 0; i < CXLA_OP_COUNT; i++) {
        cxla_opcode op = (cxla_opcode)i;
        const cxla_opcode_info *info = cxla_opcode_get_info(op);
        CHECK_EQ_I64(cxla_opcode_from_name(info->name, strlen(info->name)), op);
        if (info->stablehlo)
            CHECK_MSG(cxla_opcode_from_stablehlo_name(info->stablehlo) == op,
                      "StableHLO name %s is not unique", info->stablehlo);
    }
    CHECK_EQ_I64(cxla_opcode_from_stablehlo_name("round_nearest_afz"), CXLA_OP_ROUND_NEAREST_AFZ);
    CHECK_EQ_I64(cxla_opcode_from_stablehlo_name("round-nearest-afz"), CXLA_OP_COUNT);
    CHECK_EQ_I64(cxla_opcode_from_stablehlo_name("dot_general"), CXLA_OP_COUNT);
}

static void test_flags_imply(void) {
    for (int i = 0; i < CXLA_OP_COUNT; i++) {
        cxla_opcode op = (cxla_opcode)i;
        const cxla_opcode_info *info = cxla_opcode_get_info(op);
        unsigned f = info->flags;
        const char *n = info->name;
        if (f & (CXLA_OPF_TO_APPLY | CXLA_OPF_TO_APPLY_OPTIONAL))
            CHECK_MSG(f & CXLA_OPF_MAY_CALL, "%s takes to_apply but is not MAY_CALL", n);
        CHECK_MSG(!((f & CXLA_OPF_TO_APPLY) && (f & CXLA_OPF_TO_APPLY_OPTIONAL)),
                  "%s: to_apply both needed and optional", n);
        if (f & CXLA_OPF_RESULT_ACCURACY)
            CHECK_MSG(
                (f & CXLA_OPF_ELEMENTWISE) && info->arity == 1 &&
                    (info->type_rule == CXLA_TR_FLOAT || info->type_rule == CXLA_TR_FLOAT_COMPLEX),
                "%s carries result_accuracy but is no unary float function", n);
        if (info->type_rule != CXLA_TR_NONE) {
            CHECK_MSG((f & CXLA_OPF_ELEMENTWISE) && (info->arity == 1 || info->arity == 2),
                      "%s has a type rule but is not a unary or binary elementwise op", n);
            CHECK_MSG(!(f & CXLA_OPF_MOVES_ELEMENTS), "%s computes: it does not move elements", n);
        }
        if (f & CXLA_OPF_NO_SHAPE)
            CHECK_MSG(!(f & CXLA_OPF_NEEDS_SHAPE), "%s: shape both optional and needed", n);
    }
    CHECK(flags(CXLA_OP_GATHER) & CXLA_OPF_MOVES_ELEMENTS);
    CHECK(!(flags(CXLA_OP_ADD) & CXLA_OPF_MOVES_ELEMENTS));
    CHECK(flags(CXLA_OP_WHILE) & CXLA_OPF_MAY_CALL);
    CHECK(flags(CXLA_OP_PARAMETER) & CXLA_OPF_NEEDS_SHAPE);
    CHECK(!(flags(CXLA_OP_ADD) & CXLA_OPF_NEEDS_SHAPE));
}

/* Shape inference of each unary or binary elementwise operation on f32[2] operands never
 * reports a missing rule. */
static void test_type_rules_cover_inference(void) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_module_create("m", &m));
    cxla_computation *c = NULL;
    if (m) CHECK_OK(cxla_module_add_computation(m, "main", &c));
    if (!c) {
        cxla_module_destroy(m);
        return;
    }
    int64_t dims[1] = {2};
    cxla_shape f32 = {.type = CXLA_F32, .rank = 1, .dims = dims};
    cxla_instr *p[2] = {NULL, NULL};
    CHECK_OK(cxla_computation_add_instr(c, CXLA_OP_PARAMETER, "p0", &f32, 0, NULL, &p[0]));
    CHECK_OK(cxla_computation_add_instr(c, CXLA_OP_PARAMETER, "p1", &f32, 0, NULL, &p[1]));
    int64_t checked = 0;
    for (int i = 0; i < CXLA_OP_COUNT && p[0] && p[1]; i++) {
        cxla_opcode op = (cxla_opcode)i;
        const cxla_opcode_info *info = cxla_opcode_get_info(op);
        if (!(info->flags & CXLA_OPF_ELEMENTWISE) || (info->arity != 1 && info->arity != 2))
            continue;
        char name[64];
        snprintf(name, sizeof(name), "x%d", i);
        cxla_instr *in = NULL;
        CHECK_OK(cxla_computation_add_instr(c, op, name, &f32, info->arity, p, &in));
        if (!in) continue;
        cxla_shape out;
        cxla_status s = cxla_infer_shape(in, m->arena, &out);
        const char *msg = s ? cxla_status_message(s) : "";
        CHECK_MSG(!strstr(msg, "type rule"), "%s: %s", info->name, msg);
        if (info->type_rule != CXLA_TR_NONE && strstr(msg, "type rule") == NULL) checked++;
        cxla_status_free(s);
    }
    CHECK_MSG(checked >= 48, "only %lld operations checked by rule", (long long)checked);
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_names), TEST(test_flags_imply), TEST(test_type_rules_cover_inference))
