/* Random fusion-heavy modules from a seed: chains and diamonds of elementwise operations,
 * broadcasts of the constants the simplifier looks for (0, -0.0, 1), transposes,
 * reshapes, row reductions and selects, with dead code and shared subexpressions. Each
 * goes through the whole cpu pipeline and must give the interpreter's results bit for
 * bit. CXLA_PASSES_RANDOM=N runs N modules instead of the default. */
#include <inttypes.h>
#include <stdio.h>

#include "passes_check.h"

typedef struct gen {
    uint64_t state;
    cxla_strbuf b;
    int next; /* value names v0, v1 ... */
} gen;

static int pick(gen *g, int n) {
    return (int)(pc_splitmix64(&g->state) % (uint64_t)n);
}

/* A value made earlier: mostly recent ones, sometimes any (shared subexpressions). */
static int operand(gen *g) {
    if (g->next <= 1 || pick(g, 3) == 0) return pick(g, g->next);
    int lo = g->next > 4 ? g->next - 4 : 0;
    return lo + pick(g, g->next - lo);
}

static void emit(gen *g) {
    static const char *unary[] = {"negate", "exponential", "tanh", "abs", "sine", "floor"};
    static const char *binary[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum"};
    static const char *consts[] = {"0", "-0", "1", "0.5", "-2"};
    int v = g->next, a = operand(g), b = operand(g);
    switch (pick(g, 8)) {
    case 0:
    case 1: cxla_strbuf_printf(&g->b, "  v%d = f32[6,6] %s(v%d)\n", v, unary[pick(g, 6)], a); break;
    case 2:
    case 3:
        cxla_strbuf_printf(&g->b, "  v%d = f32[6,6] %s(v%d, v%d)\n", v, binary[pick(g, 6)], a, b);
        break;
    case 4: {
        int k = pick(g, 5);
        cxla_strbuf_printf(&g->b,
                           "  c%d = f32[] constant(%s)\n  k%d = f32[6,6] broadcast(c%d), "
                           "dimensions={}\n  v%d = f32[6,6] %s(v%d, k%d)\n",
                           v, consts[k], v, v, v, pick(g, 2) ? "add" : "multiply", a, v);
        break;
    }
    case 5:
        if (pick(g, 2))
            cxla_strbuf_printf(&g->b, "  v%d = f32[6,6] transpose(v%d), dimensions={1,0}\n", v, a);
        else
            cxla_strbuf_printf(
                &g->b, "  r%d = f32[36] reshape(v%d)\n  v%d = f32[6,6] reshape(r%d)\n", v, a, v, v);
        break;
    case 6:
        cxla_strbuf_printf(&g->b,
                           "  z%d = f32[] constant(0)\n"
                           "  s%d = f32[6] reduce(v%d, z%d), dimensions={1}, to_apply=add\n"
                           "  v%d = f32[6,6] broadcast(s%d), dimensions={%d}\n",
                           v, v, a, v, v, v, pick(g, 2));
        break;
    default:
        cxla_strbuf_printf(&g->b,
                           "  p%d = pred[6,6] compare(v%d, v%d), direction=GT\n"
                           "  v%d = f32[6,6] select(p%d, v%d, v%d)\n",
                           v, a, b, v, v, b, a);
        break;
    }
    g->next++;
}

static char *make_module(uint64_t seed) {
    gen g = {.state = seed * 7919 + 1};
    cxla_strbuf_init(&g.b);
    cxla_strbuf_printf(&g.b,
                       "HloModule random_%" PRIu64 "\n\n"
                       "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                       "  ROOT s = f32[] add(x, y)\n}\n\nENTRY e {\n"
                       "  v0 = f32[6,6] parameter(0)\n  v1 = f32[6,6] parameter(1)\n",
                       seed);
    g.next = 2;
    int n = 4 + pick(&g, 20);
    for (int i = 0; i < n; i++) emit(&g);
    int x = g.next - 1, y = operand(&g);
    cxla_strbuf_printf(&g.b, "  ROOT out = (f32[6,6], f32[6,6]) tuple(v%d, v%d)\n}\n", x, y);
    return cxla_strbuf_take(&g.b);
}

static void test_random_modules(void) {
    const char *env = getenv("CXLA_PASSES_RANDOM");
    int count = env ? atoi(env) : 300;
    int checked = 0, fused = 0;
    for (int i = 0; i < count; i++) {
        char *text = make_module((uint64_t)i);
        cxla_module *m = NULL;
        cxla_status s = cxla_hlo_parse(text, strlen(text), "random", &m);
        if (!s) s = cxla_verify_module(m);
        if (s) {
            CHECK_MSG(false, "module %d rejected: %s\n%s", i, cxla_status_message(s), text);
            cxla_status_free(s);
        } else {
            char label[64];
            snprintf(label, sizeof(label), "random module %d", i);
            if (pc_check_passes(m, NULL, NULL, 0, label)) {
                checked++;
                for (int64_t k = 0; k < m->entry->instr_count; k++)
                    if (m->entry->instrs[k]->opcode == CXLA_OP_FUSION) {
                        fused++;
                        break;
                    }
            } else {
                fprintf(stderr, "the module:\n%s", text);
            }
        }
        cxla_module_destroy(m);
        free(text);
    }
    printf("%d random modules bit-exact through the cpu pipeline, %d of them fused\n", checked,
           fused);
    CHECK_EQ_I64(checked, count);
    CHECK(fused > count / 2); /* the generator makes fusible graphs: fusion must happen */
}

TEST_MAIN(TEST(test_random_modules))
