/* The differential test of the cpu backend: random small modules, heavy in what fusion
 * joins (elementwise chains over broadcasts, transposes, reshapes, slices, pads,
 * concatenations, converts, compares and selects, with reductions at the end), each run
 * on the cpu backend and on the interpreter with random inputs full of edge values (NaN,
 * infinities, signed zeros, denormals, integer extremes), and compared bit for bit (any
 * NaN matching any NaN). A failure prints the seed and the module; CXLA_RANDOM_SEED=N
 * reruns one seed, CXLA_RANDOM_COUNT=N changes how many modules are tried. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdlib.h>

#include "cpu/cpu.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r) { /* splitmix64 */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int pick(rng *r, int n) {
    return (int)(next(r) % (uint64_t)n);
}

enum { MAX_VALUES = 64, MAX_RANK = 3 };

typedef struct value {
    char name[16];
    cxla_type type;
    int64_t rank, dims[MAX_RANK];
} value;

typedef struct gen {
    rng r;
    cxla_strbuf b;
    value v[MAX_VALUES];
    int count;
    int next_name;
    bool need_add, need_max;
} gen;

static const cxla_type FLOATS[] = {CXLA_F32, CXLA_F32, CXLA_F64, CXLA_BF16, CXLA_F16};
static const cxla_type INTS[] = {CXLA_S32, CXLA_S8, CXLA_U8, CXLA_S64, CXLA_U32};

static bool is_float(cxla_type t) {
    return t == CXLA_F32 || t == CXLA_F64 || t == CXLA_BF16 || t == CXLA_F16;
}

static void shape_text(cxla_strbuf *b, cxla_type t, int64_t rank, const int64_t *dims) {
    cxla_strbuf_printf(b, "%s[", cxla_type_name(t));
    for (int64_t d = 0; d < rank; d++) cxla_strbuf_printf(b, "%s%" PRId64, d ? "," : "", dims[d]);
    cxla_strbuf_putc(b, ']');
}

/* Starts the instruction defining a new value of |type| and |dims|; returns it. */
static value *begin(gen *g, cxla_type type, int64_t rank, const int64_t *dims) {
    value *v = &g->v[g->count++];
    snprintf(v->name, sizeof(v->name), "v%d", g->next_name++);
    v->type = type;
    v->rank = rank;
    for (int64_t d = 0; d < rank; d++) v->dims[d] = dims[d];
    cxla_strbuf_printf(&g->b, "  %s = ", v->name);
    shape_text(&g->b, type, rank, dims);
    cxla_strbuf_putc(&g->b, ' ');
    return v;
}

static int64_t elements(const value *v) {
    int64_t n = 1;
    for (int64_t d = 0; d < v->rank; d++) n *= v->dims[d];
    return n;
}

/* A value of the same type and dims as |v|, other than |v| when possible. */
static const value *partner(gen *g, const value *v) {
    int start = pick(&g->r, g->count);
    for (int i = 0; i < g->count; i++) {
        const value *w = &g->v[(start + i) % g->count];
        if (w != v && w->type == v->type && w->rank == v->rank &&
            memcmp(w->dims, v->dims, sizeof(int64_t) * (size_t)v->rank) == 0)
            return w;
    }
    return v;
}

static void unary(gen *g, const value *a) {
    static const char *const fl[] = {"negate",
                                     "abs",
                                     "exponential",
                                     "log",
                                     "tanh",
                                     "sqrt",
                                     "rsqrt",
                                     "floor",
                                     "ceil",
                                     "round-nearest-even",
                                     "sign",
                                     "cosine",
                                     "sine",
                                     "logistic",
                                     "exponential-minus-one",
                                     "log-plus-one",
                                     "cbrt",
                                     "round-nearest-afz",
                                     "tan"};
    static const char *const in[] = {"negate", "abs", "not", "popcnt", "count-leading-zeros",
                                     "sign"};
    const char *op;
    if (a->type == CXLA_PRED)
        op = "not";
    else if (is_float(a->type))
        op = fl[pick(&g->r, (int)CXLA_ARRAY_SIZE(fl))];
    else
        op = in[pick(&g->r, (int)CXLA_ARRAY_SIZE(in))];
    bool is_unsigned = a->type == CXLA_U8 || a->type == CXLA_U32;
    if (is_unsigned && (!strcmp(op, "negate") || !strcmp(op, "abs") || !strcmp(op, "sign")))
        op = "not";
    value copy = *a;
    begin(g, copy.type, copy.rank, copy.dims);
    cxla_strbuf_printf(&g->b, "%s(%s)\n", op, copy.name);
}

static void binary(gen *g, const value *a) {
    static const char *const fl[] = {"add",     "subtract", "multiply", "divide",   "maximum",
                                     "minimum", "power",    "atan2",    "remainder"};
    static const char *const in[] = {"add",
                                     "subtract",
                                     "multiply",
                                     "divide",
                                     "remainder",
                                     "maximum",
                                     "minimum",
                                     "and",
                                     "or",
                                     "xor",
                                     "shift-left",
                                     "shift-right-arithmetic",
                                     "shift-right-logical"};
    static const char *const pr[] = {"and", "or", "xor"};
    const char *op = a->type == CXLA_PRED ? pr[pick(&g->r, 3)]
                     : is_float(a->type)  ? fl[pick(&g->r, (int)CXLA_ARRAY_SIZE(fl))]
                                          : in[pick(&g->r, (int)CXLA_ARRAY_SIZE(in))];
    value x = *a, y = *partner(g, a);
    begin(g, x.type, x.rank, x.dims);
    cxla_strbuf_printf(&g->b, "%s(%s, %s)\n", op, x.name, y.name);
}

static void compare_select(gen *g, const value *a) {
    static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    value x = *a, y = *partner(g, a);
    value *p = begin(g, CXLA_PRED, x.rank, x.dims);
    char pname[16];
    memcpy(pname, p->name, sizeof(pname));
    cxla_strbuf_printf(&g->b, "compare(%s, %s), direction=%s\n", x.name, y.name,
                       dirs[pick(&g->r, 6)]);
    if (pick(&g->r, 4) == 0) return; /* keep the pred as a value */
    begin(g, x.type, x.rank, x.dims);
    cxla_strbuf_printf(&g->b, "select(%s, %s, %s)\n", pname, y.name, x.name);
}

static void convert(gen *g, const value *a) {
    cxla_type to = pick(&g->r, 2) ? FLOATS[pick(&g->r, (int)CXLA_ARRAY_SIZE(FLOATS))]
                                  : INTS[pick(&g->r, (int)CXLA_ARRAY_SIZE(INTS))];
    if (pick(&g->r, 8) == 0) to = CXLA_PRED;
    value x = *a;
    begin(g, to, x.rank, x.dims);
    cxla_strbuf_printf(&g->b, "convert(%s)\n", x.name);
}

static void transpose(gen *g, const value *a) {
    if (a->rank < 2) {
        unary(g, a);
        return;
    }
    int64_t perm[MAX_RANK], dims[MAX_RANK];
    for (int64_t d = 0; d < a->rank; d++) perm[d] = d;
    for (int64_t d = a->rank - 1; d > 0; d--) {
        int64_t k = pick(&g->r, (int)d + 1), t = perm[d];
        perm[d] = perm[k];
        perm[k] = t;
    }
    for (int64_t d = 0; d < a->rank; d++) dims[d] = a->dims[perm[d]];
    value x = *a;
    begin(g, x.type, x.rank, dims);
    cxla_strbuf_printf(&g->b, "transpose(%s), dimensions={", x.name);
    for (int64_t d = 0; d < x.rank; d++)
        cxla_strbuf_printf(&g->b, "%s%" PRId64, d ? "," : "", perm[d]);
    cxla_strbuf_puts(&g->b, "}\n");
}

static void reshape(gen *g, const value *a) {
    int64_t n = elements(a), dims[MAX_RANK];
    value x = *a;
    if (a->rank >= 2) { /* flatten */
        dims[0] = n;
        begin(g, x.type, 1, dims);
    } else if (n % 2 == 0 && n > 2) {
        dims[0] = 2;
        dims[1] = n / 2;
        begin(g, x.type, 2, dims);
    } else {
        dims[0] = n;
        dims[1] = 1;
        begin(g, x.type, 2, dims);
    }
    cxla_strbuf_printf(&g->b, "reshape(%s)\n", x.name);
}

static void broadcast(gen *g, const value *a) {
    /* Adds a leading dimension (the operand's dims map to the trailing ones). */
    if (a->rank >= MAX_RANK) {
        binary(g, a);
        return;
    }
    int64_t dims[MAX_RANK];
    dims[0] = 1 + pick(&g->r, 3);
    for (int64_t d = 0; d < a->rank; d++) dims[d + 1] = a->dims[d];
    value x = *a;
    begin(g, x.type, x.rank + 1, dims);
    cxla_strbuf_printf(&g->b, "broadcast(%s), dimensions={", x.name);
    for (int64_t d = 0; d < x.rank; d++)
        cxla_strbuf_printf(&g->b, "%s%" PRId64, d ? "," : "", d + 1);
    cxla_strbuf_puts(&g->b, "}\n");
}

static void slice_or_pad(gen *g, const value *a) {
    if (a->rank == 0) {
        unary(g, a);
        return;
    }
    value x = *a;
    int64_t dims[MAX_RANK];
    if (pick(&g->r, 2)) {
        int64_t lo[MAX_RANK], hi[MAX_RANK], st[MAX_RANK];
        for (int64_t d = 0; d < x.rank; d++) {
            lo[d] = x.dims[d] > 1 ? pick(&g->r, (int)(x.dims[d] / 2)) : 0;
            hi[d] = x.dims[d];
            st[d] = 1 + pick(&g->r, 2);
            dims[d] = (hi[d] - lo[d] + st[d] - 1) / st[d];
        }
        begin(g, x.type, x.rank, dims);
        cxla_strbuf_printf(&g->b, "slice(%s), slice={", x.name);
        for (int64_t d = 0; d < x.rank; d++)
            cxla_strbuf_printf(&g->b, "%s[%" PRId64 ":%" PRId64 ":%" PRId64 "]", d ? ", " : "",
                               lo[d], hi[d], st[d]);
        cxla_strbuf_puts(&g->b, "}\n");
        return;
    }
    int64_t lo[MAX_RANK], hi[MAX_RANK], in[MAX_RANK];
    for (int64_t d = 0; d < x.rank; d++) {
        lo[d] = pick(&g->r, 3) - 1;
        hi[d] = pick(&g->r, 3);
        in[d] = pick(&g->r, 2);
        int64_t interior = x.dims[d] > 0 ? (x.dims[d] - 1) * in[d] : 0;
        dims[d] = x.dims[d] + lo[d] + hi[d] + interior;
        if (dims[d] < 0) {
            lo[d] = 0;
            dims[d] = x.dims[d] + hi[d] + interior;
        }
    }
    value *z = begin(g, x.type, 0, NULL);
    char zname[16];
    memcpy(zname, z->name, sizeof(zname));
    cxla_strbuf_printf(&g->b, "constant(%s)\n", x.type == CXLA_PRED ? "true" : "1");
    g->count--; /* the scalar is not offered to later instructions */
    begin(g, x.type, x.rank, dims);
    cxla_strbuf_printf(&g->b, "pad(%s, %s), padding=", x.name, zname);
    for (int64_t d = 0; d < x.rank; d++)
        cxla_strbuf_printf(&g->b, "%s%" PRId64 "_%" PRId64 "_%" PRId64, d ? "x" : "", lo[d], hi[d],
                           in[d]);
    cxla_strbuf_putc(&g->b, '\n');
}

static void concat_or_reverse(gen *g, const value *a) {
    if (a->rank == 0) {
        binary(g, a);
        return;
    }
    value x = *a, y = *partner(g, a);
    if (pick(&g->r, 2) && x.rank > 0) {
        int64_t dims[MAX_RANK];
        memcpy(dims, x.dims, sizeof(dims));
        int64_t axis = pick(&g->r, (int)x.rank);
        dims[axis] *= 2;
        begin(g, x.type, x.rank, dims);
        cxla_strbuf_printf(&g->b, "concatenate(%s, %s), dimensions={%" PRId64 "}\n", x.name, y.name,
                           axis);
        return;
    }
    begin(g, x.type, x.rank, x.dims);
    cxla_strbuf_printf(&g->b, "reverse(%s), dimensions={0}\n", x.name);
}

static void reduce(gen *g, const value *a) {
    if (a->rank == 0 || a->type == CXLA_PRED ||
        (a->type != CXLA_F32 && a->type != CXLA_S32 && a->type != CXLA_F64)) {
        unary(g, a);
        return;
    }
    bool max = pick(&g->r, 2);
    int64_t axis = pick(&g->r, (int)a->rank), dims[MAX_RANK], r = 0;
    for (int64_t d = 0; d < a->rank; d++)
        if (d != axis) dims[r++] = a->dims[d];
    value x = *a;
    value *init = begin(g, x.type, 0, NULL);
    char iname[16];
    memcpy(iname, init->name, sizeof(iname));
    cxla_strbuf_printf(&g->b, "constant(%s)\n", max ? "-inf" : "0");
    if (max && x.type == CXLA_S32) {
        g->b.len -= strlen("constant(-inf)\n");
        g->b.data[g->b.len] = 0;
        cxla_strbuf_puts(&g->b, "constant(-2147483648)\n");
    }
    g->count--;
    begin(g, x.type, r, dims);
    cxla_strbuf_printf(&g->b, "reduce(%s, %s), dimensions={%" PRId64 "}, to_apply=%s_%s\n", x.name,
                       iname, axis, max ? "max" : "add", cxla_type_name(x.type));
}

static void one_instruction(gen *g) {
    const value *a = &g->v[g->count - 1 - pick(&g->r, g->count < 4 ? g->count : 4)];
    switch (pick(&g->r, 12)) {
    case 0:
    case 1: unary(g, a); break;
    case 2:
    case 3:
    case 4: binary(g, a); break;
    case 5: compare_select(g, a); break;
    case 6: convert(g, a); break;
    case 7: transpose(g, a); break;
    case 8: reshape(g, a); break;
    case 9: broadcast(g, a); break;
    case 10: slice_or_pad(g, a); break;
    default:
        if (pick(&g->r, 2))
            concat_or_reverse(g, a);
        else
            reduce(g, a);
        break;
    }
}

static const char *REDUCERS =
    "add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n"
    "max_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] maximum(a, "
    "b)\n}\n"
    "add_f64 {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] add(a, b)\n}\n"
    "max_f64 {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] maximum(a, "
    "b)\n}\n"
    "add_s32 {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT r = s32[] add(a, b)\n}\n"
    "max_s32 {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT r = s32[] maximum(a, "
    "b)\n}\n";

/* A module of |ops| random instructions over 1-3 parameters of one random shape. */
static char *generate_module(uint64_t seed, int ops, int *out_params) {
    gen g = {.r = {seed}};
    cxla_strbuf_init(&g.b);
    cxla_strbuf_printf(&g.b, "HloModule random_%" PRIu64 "\n\n%s\nENTRY main {\n", seed, REDUCERS);
    static const int64_t sizes[] = {1, 2, 3, 4, 5, 8, 13, 17, 64};
    int64_t rank = pick(&g.r, 4), dims[MAX_RANK];
    if (rank > MAX_RANK) rank = MAX_RANK;
    for (int64_t d = 0; d < rank; d++) dims[d] = sizes[pick(&g.r, (int)CXLA_ARRAY_SIZE(sizes))];
    cxla_type all[] = {CXLA_F32, CXLA_F32, CXLA_F32, CXLA_F64, CXLA_BF16, CXLA_F16,
                       CXLA_S32, CXLA_S8,  CXLA_U8,  CXLA_S64, CXLA_U32,  CXLA_PRED};
    cxla_type t = all[pick(&g.r, (int)CXLA_ARRAY_SIZE(all))];
    int params = 1 + pick(&g.r, 3);
    for (int p = 0; p < params; p++) {
        begin(&g, t, rank, dims);
        cxla_strbuf_printf(&g.b, "parameter(%d)\n", p);
    }
    for (int i = 0; i < ops && g.count < MAX_VALUES - 4; i++) one_instruction(&g);
    /* The root: the last value, or a tuple of the last two. */
    const value *last = &g.v[g.count - 1];
    if (g.count > params + 1 && pick(&g.r, 2)) {
        const value *prev = &g.v[g.count - 2];
        cxla_strbuf_puts(&g.b, "  ROOT root = (");
        shape_text(&g.b, prev->type, prev->rank, prev->dims);
        cxla_strbuf_puts(&g.b, ", ");
        shape_text(&g.b, last->type, last->rank, last->dims);
        cxla_strbuf_printf(&g.b, ") tuple(%s, %s)\n}\n", prev->name, last->name);
    } else {
        cxla_strbuf_puts(&g.b, "  ROOT root = ");
        shape_text(&g.b, last->type, last->rank, last->dims);
        cxla_strbuf_printf(&g.b, " copy(%s)\n}\n", last->name);
    }
    *out_params = params;
    return cxla_strbuf_take(&g.b);
}

/* Inputs full of edge values. */
static void fill(rng *r, cxla_literal *lit) {
    const cxla_shape *s = cxla_literal_shape(lit);
    int64_t n = cxla_literal_element_count(lit);
    size_t esize = cxla_type_storage(s->type);
    char *p = cxla_literal_data(lit);
    static const double specials[] = {0.0,     -0.0,  1.0,       -1.0,       0.5,
                                      2.0,     1e-40, -1e-310,   1e30,       -1e30,
                                      65504.0, 3e38,  1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0};
    for (int64_t i = 0; i < n; i++, p += esize) {
        if (s->type == CXLA_PRED) {
            *p = (char)pick(r, 2);
        } else if (is_float(s->type)) {
            double v = pick(r, 5) == 0 ? specials[pick(r, (int)CXLA_ARRAY_SIZE(specials))]
                                       : ((double)(next(r) >> 11) / 9007199254740992.0 - 0.5) * 8;
            cxla_store_f64(s->type, p, v);
        } else {
            static const int64_t ispec[] = {0,         1,         -1,  2,         7,
                                            31,        32,        64,  INT32_MIN, INT32_MAX,
                                            INT64_MIN, INT64_MAX, 127, -128,      255};
            int64_t v = pick(r, 4) == 0 ? ispec[pick(r, (int)CXLA_ARRAY_SIZE(ispec))]
                                        : (int64_t)(next(r) % 201) - 100;
            memcpy(p, &v, esize); /* little-endian: the low bytes, wrapped */
        }
    }
}

static void test_random_modules(void) {
    /* Bit for bit: the fast f32 functions (within their bound, tests/cpu/test_cpu_math.c
     * and test_emit.c) would make chains of them differ; everything else must not. */
    setenv("CXLA_CPU_EXACT_MATH", "1", 1);
    const char *one = getenv("CXLA_RANDOM_SEED"), *count_env = getenv("CXLA_RANDOM_COUNT");
    int count = one ? 1 : count_env ? atoi(count_env) : 100;
    int failed = 0, ran = 0, kernels = 0;
    for (int i = 0; i < count && failed < 5; i++) {
        uint64_t seed = one ? strtoull(one, NULL, 10) : 1000 + (uint64_t)i;
        int params;
        char *text = generate_module(seed, 4 + (int)(seed % 20), &params);
        cxla_module *m = NULL;
        cxla_status s = cxla_hlo_parse(text, strlen(text), "random", &m);
        if (!s) s = cxla_verify_module(m);
        if (s) { /* the generator's own mistake: say so, do not count it as the backend's */
            test_fail(__FILE__, __LINE__, "seed %" PRIu64 ": generated module rejected: %s\n%s",
                      seed, cxla_status_message(s), text);
            cxla_status_free(s);
            free(text);
            failed++;
            continue;
        }
        rng r = {seed * 7919};
        cxla_literal *args[3] = {0};
        for (int p = 0; p < params; p++) {
            CHECK_OK(cxla_literal_create(&m->entry->params[p]->shape, &args[p]));
            fill(&r, args[p]);
        }
        cxla_literal *want = NULL, *got = NULL;
        cxla_status si =
            interp_run_module(m, NULL, (const cxla_literal *const *)args, params, &want);
        void *compiled = NULL;
        exec_compile_options co = {0};
        exec_run_options ro = {0};
        cxla_status sc = cpu_backend.compile(m, &co, &compiled);
        if (!sc)
            sc =
                cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, params, &got);
        if (compiled) cpu_backend.destroy(compiled);
        if (si || sc) {
            if (!si != !sc) {
                test_fail(__FILE__, __LINE__, "seed %" PRIu64 ": interpreter %s, cpu %s\n%s", seed,
                          si ? cxla_status_message(si) : "ok", sc ? cxla_status_message(sc) : "ok",
                          text);
                failed++;
            }
        } else {
            cxla_status d = cxla_literal_compare(got, want, NULL);
            if (d) {
                test_fail(__FILE__, __LINE__,
                          "seed %" PRIu64 ": cpu differs from the interpreter: %s\n%s", seed,
                          cxla_status_message(d), text);
                cxla_status_free(d);
                failed++;
            }
            ran++;
        }
        (void)kernels;
        cxla_status_free(si);
        cxla_status_free(sc);
        cxla_literal_free(want);
        cxla_literal_free(got);
        for (int p = 0; p < params; p++) cxla_literal_free(args[p]);
        cxla_module_destroy(m);
        free(text);
    }
    printf("%d random modules compared, %d failed\n", ran, failed);
    CHECK(ran > 0);
}

TEST_MAIN(TEST(test_random_modules))
