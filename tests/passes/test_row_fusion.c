/* Row fusion (cxla_pass_fusion_rows: src/passes/fusion.c with the shape rule of
 * src/passes/row_fusion.c): what joins a loop fusion as a per-row reduce and what must stay
 * a reduce of its own. Each module runs on the interpreter before and after the pass, and
 * the results must be equal bit for bit (passes_check.h). */
#include "passes_check.h"

static const char reducers[] =
    "HloModule m\n"
    "add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y) }\n"
    "max { x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] maximum(x, y) }\n";

/* Runs row fusion on reducers + |entry|; NULL (and a failed check) when it fails. */
static cxla_module *run_rows(const char *entry) {
    size_t n = strlen(reducers) + strlen(entry) + 1;
    char *text = malloc(n);
    if (!text) return NULL;
    snprintf(text, n, "%s%s", reducers, entry);
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "test", &m);
    free(text);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        CHECK_MSG(false, "module rejected: %s", cxla_status_message(s));
        cxla_status_free(s);
        cxla_module_destroy(m);
        return NULL;
    }
    const cxla_pass *one[1] = {&cxla_pass_fusion_rows};
    if (!pc_check_passes(m, NULL, one, 1, "fusion-rows")) {
        cxla_module_destroy(m);
        return NULL;
    }
    return m;
}

static int64_t count_op(const cxla_computation *c, cxla_opcode op) {
    int64_t n = 0;
    for (int64_t i = 0; i < c->instr_count; i++) n += c->instrs[i]->opcode == op;
    return n;
}

/* The reduces inside the fused computation of the entry's root (a fusion), or -1. */
static int64_t root_fused_reduces(const cxla_module *m) {
    const cxla_instr *root = m->entry->root;
    if (root->opcode != CXLA_OP_FUSION) return -1;
    return count_op(cxla_instr_called(root, CXLA_ATTR_CALLS), CXLA_OP_REDUCE);
}

static const char softmax[] =
    "ENTRY e { x = f32[4,256] parameter(0)\n ninf = f32[] constant(-inf)\n"
    " m = f32[4] reduce(x, ninf), dimensions={1}, to_apply=max\n"
    " mb = f32[4,256] broadcast(m), dimensions={0}\n d = f32[4,256] subtract(x, mb)\n"
    " ex = f32[4,256] exponential(d)\n z = f32[] constant(0)\n"
    " s = f32[4] reduce(ex, z), dimensions={1}, to_apply=add\n"
    " sb = f32[4,256] broadcast(s), dimensions={0}\n ROOT r = f32[4,256] divide(ex, sb) }\n";

static void test_softmax_one_fusion(void) {
    cxla_module *m = run_rows(softmax);
    if (!m) return;
    CHECK_EQ_I64(root_fused_reduces(m), 2); /* the maximum and the sum, per row */
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_REDUCE), 0);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_EXP), 0);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_FUSION), 1);
    cxla_module_destroy(m);
}

/* The plain fusion pass keeps softmax's reduces separate (the exact order's form). */
static void test_plain_fusion_keeps_reduces(void) {
    size_t n = strlen(reducers) + strlen(softmax) + 1;
    char *text = malloc(n);
    if (!text) return;
    snprintf(text, n, "%s%s", reducers, softmax);
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "test", &m);
    free(text);
    CHECK(s == NULL);
    const cxla_pass *one[1] = {&cxla_pass_fusion};
    if (!s && pc_check_passes(m, NULL, one, 1, "fusion")) CHECK(root_fused_reduces(m) == 0);
    cxla_status_free(s);
    cxla_module_destroy(m);
}

/* Layer norm: the mean, then the variance of the centred row, then the normalization. */
static void test_layer_norm_one_fusion(void) {
    cxla_module *m = run_rows(
        "ENTRY e { x = f32[4,256] parameter(0)\n g = f32[256] parameter(1)\n"
        " z = f32[] constant(0)\n inv = f32[] constant(0.00390625)\n"
        " invr = f32[4] broadcast(inv), dimensions={}\n"
        " s = f32[4] reduce(x, z), dimensions={1}, to_apply=add\n"
        " mean = f32[4] multiply(s, invr)\n mb = f32[4,256] broadcast(mean), dimensions={0}\n"
        " d = f32[4,256] subtract(x, mb)\n d2 = f32[4,256] multiply(d, d)\n"
        " s2 = f32[4] reduce(d2, z), dimensions={1}, to_apply=add\n"
        " var = f32[4] multiply(s2, invr)\n r = f32[4] rsqrt(var)\n"
        " rb = f32[4,256] broadcast(r), dimensions={0}\n n = f32[4,256] multiply(d, rb)\n"
        " gb = f32[4,256] broadcast(g), dimensions={1}\n ROOT y = f32[4,256] multiply(n, gb) }\n");
    if (!m) return;
    CHECK_EQ_I64(root_fused_reduces(m), 2);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_REDUCE), 0);
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_FUSION), 1);
    cxla_module_destroy(m);
}

/* A row maximum broadcast along dimension 1: element (i, j) reads row j's maximum. It must
 * stay a reduce of its own (the emitter would otherwise recompute a row per element). */
static void test_broadcast_along_other_dim_left_alone(void) {
    cxla_module *m = run_rows("ENTRY e { x = f32[256,256] parameter(0)\n"
                              " ninf = f32[] constant(-inf)\n"
                              " m = f32[256] reduce(x, ninf), dimensions={1}, to_apply=max\n"
                              " mb = f32[256,256] broadcast(m), dimensions={1}\n"
                              " ROOT d = f32[256,256] subtract(x, mb) }\n");
    if (!m) return;
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_REDUCE), 1);
    CHECK_EQ_I64(root_fused_reduces(m), 0);
    cxla_module_destroy(m);
}

/* Row values transposed before their broadcast: read at another row. Left alone. */
static void test_transposed_row_values_left_alone(void) {
    cxla_module *m = run_rows("ENTRY e { x = f32[2,2,256] parameter(0)\n"
                              " ninf = f32[] constant(-inf)\n"
                              " m = f32[2,2] reduce(x, ninf), dimensions={2}, to_apply=max\n"
                              " mt = f32[2,2] transpose(m), dimensions={1,0}\n"
                              " mb = f32[2,2,256] broadcast(mt), dimensions={0,1}\n"
                              " ROOT d = f32[2,2,256] subtract(x, mb) }\n");
    if (!m) return;
    CHECK_EQ_I64(count_op(m->entry, CXLA_OP_REDUCE), 1);
    CHECK_EQ_I64(root_fused_reduces(m), 0);
    cxla_module_destroy(m);
}

/* Rows of 64 (under 128: the interpreter's order, not the fast one), a reduce that is also
 * the module's result, and a reduce of a middle dimension stay reduces of their own. */
static void test_limits(void) {
    cxla_module *m = run_rows("ENTRY e { x = f32[4,64] parameter(0)\n z = f32[] constant(0)\n"
                              " s = f32[4] reduce(x, z), dimensions={1}, to_apply=add\n"
                              " sb = f32[4,64] broadcast(s), dimensions={0}\n"
                              " ROOT r = f32[4,64] divide(x, sb) }\n");
    if (m) CHECK_EQ_I64(count_op(m->entry, CXLA_OP_REDUCE), 1);
    cxla_module_destroy(m);
    m = run_rows("ENTRY e { x = f32[4,256] parameter(0)\n z = f32[] constant(0)\n"
                 " s = f32[4] reduce(x, z), dimensions={1}, to_apply=add\n"
                 " sb = f32[4,256] broadcast(s), dimensions={0}\n"
                 " r = f32[4,256] divide(x, sb)\n ROOT t = (f32[4,256], f32[4]) tuple(r, s) }\n");
    if (m) CHECK_EQ_I64(count_op(m->entry, CXLA_OP_REDUCE), 1);
    cxla_module_destroy(m);
    m = run_rows("ENTRY e { x = f32[256,4,256] parameter(0)\n z = f32[] constant(0)\n"
                 " s = f32[256,256] reduce(x, z), dimensions={1}, to_apply=add\n"
                 " sb = f32[256,4,256] broadcast(s), dimensions={0,2}\n"
                 " ROOT r = f32[256,4,256] divide(x, sb) }\n");
    if (m) CHECK_EQ_I64(count_op(m->entry, CXLA_OP_REDUCE), 1);
    cxla_module_destroy(m);
}

TEST_MAIN(TEST(test_softmax_one_fusion), TEST(test_plain_fusion_keeps_reduces),
          TEST(test_layer_norm_one_fusion), TEST(test_broadcast_along_other_dim_left_alone),
          TEST(test_transposed_row_values_left_alone), TEST(test_limits))
