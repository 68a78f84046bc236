/* Generated inputs (fake_args.h): constraints found in the module, then typed fills. */
#define _POSIX_C_SOURCE 200809L
#include "fake_args.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/floats.h"
#include "literal/literal_internal.h"

/* ---- constraints ------------------------------------------------------------------- */

/* The walk marks the instructions whose value comes from the parameter (by instruction
 * id) and records what the constrained uses need. */
typedef struct walk {
    bool *from_param; /* by instruction id */
    int64_t id_count;
    fake_constraint *c;
    const cxla_instr *param;
    bool sign; /* the second walk: a float value whose sign it carries (visit_sign) */
} walk;

static bool marked(const walk *w, const cxla_instr *in) {
    return in->id >= 0 && in->id < w->id_count && w->from_param[in->id];
}

static bool mark(walk *w, const cxla_instr *in) {
    if (in->id < 0 || in->id >= w->id_count || w->from_param[in->id]) return false;
    w->from_param[in->id] = true;
    return true;
}

static void bound_index(walk *w, int64_t bound) {
    if (bound < 0) bound = 0;
    if (w->c->index_bound < 0 || bound < w->c->index_bound) w->c->index_bound = bound;
}

/* Gather (operand 1) and scatter (the indices operand): each indexed operand dimension
 * bounds the index, as XLA's CreateLiteralForConstrainedUses does. */
static void bound_gather_scatter(walk *w, const cxla_instr *in, cxla_attr_id map_id) {
    int64_t n = 0;
    const int64_t *map = cxla_instr_ints(in, map_id, &n);
    const cxla_shape *operand = &in->operands[0]->shape;
    for (int64_t k = 0; k < n; k++)
        if (map[k] >= 0 && map[k] < operand->rank) bound_index(w, operand->dims[map[k]] - 1);
}

/* Add and multiply reducers (of two distinct parameters) give 0 and 1 (XLA's
 * GetInitValue); other reducers no constant. */
static int init_value_of(const cxla_instr *in, cxla_attr_id id) {
    const cxla_computation *r = cxla_instr_called(in, id);
    const cxla_instr *root = r ? r->root : NULL;
    if (!root || r->param_count != 2 || root->operand_count != 2) return -1;
    const cxla_instr *x = root->operands[0], *y = root->operands[1];
    if (x->opcode != CXLA_OP_PARAMETER || y->opcode != CXLA_OP_PARAMETER || x == y) return -1;
    if (root->opcode == CXLA_OP_ADD) return 0;
    if (root->opcode == CXLA_OP_MULTIPLY) return 1;
    return -1;
}

static void walk_computation(walk *w, const cxla_computation *comp, int depth);

/* A called computation: its parameters carry the marked operands; its root, when
 * marked, marks the caller. */
static bool walk_callee(walk *w, const cxla_instr *in, const cxla_computation *callee, int depth) {
    if (!callee || depth > 32) return false;
    bool any = false;
    for (int64_t i = 0; i < in->operand_count && i < callee->param_count; i++)
        if (marked(w, in->operands[i]) && callee->params[i]) any |= mark(w, callee->params[i]);
    if (any) walk_computation(w, callee, depth + 1);
    return callee->root && marked(w, callee->root);
}

static const cxla_computation *callee_of(const cxla_instr *in) {
    return cxla_instr_called(in, in->opcode == CXLA_OP_CALL ? CXLA_ATTR_TO_APPLY : CXLA_ATTR_CALLS);
}

/* Does the value of |in| come from a marked operand, as an index would through the
 * steps that carry one (data formatting, conversion, and the arithmetic and selects of
 * negative-index wrapping that jnp.take writes)? Records the constrained uses. */
static bool visit_sign(walk *w, const cxla_instr *in, int depth);

static bool visit(walk *w, const cxla_instr *in, int depth) {
    bool any = false;
    for (int64_t i = 0; i < in->operand_count; i++) any |= marked(w, in->operands[i]);
    if (!any) return false;
    if (w->sign) return visit_sign(w, in, depth);
    const cxla_instr *const *ops = (const cxla_instr *const *)in->operands;
    switch (in->opcode) {
    case CXLA_OP_RESHAPE:
    case CXLA_OP_TRANSPOSE:
    case CXLA_OP_COPY:
    case CXLA_OP_SLICE:
    case CXLA_OP_BITCAST:
    case CXLA_OP_BROADCAST:
    case CXLA_OP_CONVERT:
    case CXLA_OP_REDUCE_PRECISION:
    case CXLA_OP_CONCATENATE:
    case CXLA_OP_ADD:
    case CXLA_OP_SUBTRACT: return cxla_type_is_integer(in->shape.type);
    case CXLA_OP_SELECT: return marked(w, ops[1]) || marked(w, ops[2]);
    case CXLA_OP_CLAMP: return marked(w, ops[1]);
    case CXLA_OP_CALL:
    case CXLA_OP_FUSION: return walk_callee(w, in, callee_of(in), depth);
    case CXLA_OP_GATHER:
        if (marked(w, ops[1])) bound_gather_scatter(w, in, CXLA_ATTR_START_INDEX_MAP);
        return false;
    case CXLA_OP_SCATTER:
        if (in->operand_count >= 3 && marked(w, ops[(in->operand_count - 1) / 2]))
            bound_gather_scatter(w, in, CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS);
        return false;
    case CXLA_OP_DYNAMIC_SLICE: {
        int64_t n = 0;
        const int64_t *sizes = cxla_instr_ints(in, CXLA_ATTR_DYNAMIC_SLICE_SIZES, &n);
        for (int64_t i = 1; i < in->operand_count; i++)
            if (marked(w, ops[i]) && i - 1 < n && i - 1 < ops[0]->shape.rank)
                bound_index(w, ops[0]->shape.dims[i - 1] - sizes[i - 1]);
        return false;
    }
    case CXLA_OP_DYNAMIC_UPDATE_SLICE:
        for (int64_t i = 2; i < in->operand_count; i++)
            if (marked(w, ops[i]) && i - 2 < ops[0]->shape.rank && i - 2 < ops[1]->shape.rank)
                bound_index(w, ops[0]->shape.dims[i - 2] - ops[1]->shape.dims[i - 2]);
        return false;
    case CXLA_OP_SORT: {
        bool stable = cxla_instr_bool(in, CXLA_ATTR_IS_STABLE);
        if (marked(w, ops[0]) && cxla_type_is_integer(ops[0]->shape.type) &&
            (in->operand_count >= 2 || stable))
            w->c->no_duplicates = true;
        return false;
    }
    case CXLA_OP_REDUCE:
        /* Only the parameter itself as an init value (XLA's NeedsInitValue). */
        for (int64_t i = in->operand_count / 2; i < in->operand_count; i++)
            if (ops[i] == w->param) w->c->init_value = init_value_of(in, CXLA_ATTR_TO_APPLY);
        return false;
    case CXLA_OP_REDUCE_WINDOW:
        if (in->operand_count == 2 && ops[1] == w->param)
            w->c->init_value = init_value_of(in, CXLA_ATTR_TO_APPLY);
        return false;
    case CXLA_OP_SELECT_AND_SCATTER:
        if (in->operand_count == 3 && ops[2] == w->param)
            w->c->init_value = init_value_of(in, CXLA_ATTR_SCATTER);
        return false;
    default: return false;
    }
}

/* The second walk, over float parameters (a cxla rule; XLA has none): does the value of
 * |in| carry a marked operand's sign, through data formatting and the arithmetic that keeps
 * a non-negative value non-negative (add, multiply, divide, maximum: an optimizer's
 * second-moment state v in sqrt(b2 * v + (1 - b2) * g * g))? Not through subtract or
 * negate. A marked argument of sqrt, rsqrt, log, log1p or power's base makes the
 * parameter non_negative, so that generated inputs give numbers, not NaN. */
static bool visit_sign(walk *w, const cxla_instr *in, int depth) {
    const cxla_instr *const *ops = (const cxla_instr *const *)in->operands;
    switch (in->opcode) {
    case CXLA_OP_SQRT:
    case CXLA_OP_RSQRT:
    case CXLA_OP_LOG:
    case CXLA_OP_LOG1P:
    case CXLA_OP_POWER:
        if (marked(w, ops[0])) w->c->non_negative = true;
        return false;
    case CXLA_OP_RESHAPE:
    case CXLA_OP_TRANSPOSE:
    case CXLA_OP_COPY:
    case CXLA_OP_SLICE:
    case CXLA_OP_BROADCAST:
    case CXLA_OP_CONVERT:
    case CXLA_OP_REDUCE_PRECISION:
    case CXLA_OP_CONCATENATE:
    case CXLA_OP_ADD:
    case CXLA_OP_MULTIPLY:
    case CXLA_OP_DIVIDE:
    case CXLA_OP_MAXIMUM: return cxla_type_is_float(in->shape.type);
    case CXLA_OP_DYNAMIC_SLICE:
    case CXLA_OP_PAD: return marked(w, ops[0]) && cxla_type_is_float(in->shape.type);
    case CXLA_OP_SELECT: return marked(w, ops[1]) || marked(w, ops[2]);
    case CXLA_OP_CALL:
    case CXLA_OP_FUSION: return walk_callee(w, in, callee_of(in), depth);
    default: return false;
    }
}

static void walk_computation(walk *w, const cxla_computation *comp, int depth) {
    /* Definitions come before uses, so one pass suffices; a second catches text that
     * was not in order. */
    for (int pass = 0; pass < 2; pass++) {
        bool changed = false;
        for (int64_t i = 0; i < comp->instr_count; i++) {
            const cxla_instr *in = comp->instrs[i];
            if (!marked(w, in) && visit(w, in, depth)) changed |= mark(w, in);
        }
        if (!changed) break;
    }
}

fake_constraint *fake_args_constraints(const cxla_module *module) {
    const cxla_computation *entry = module ? module->entry : NULL;
    if (!entry) return NULL;
    int64_t n = entry->param_count;
    fake_constraint *out = calloc((size_t)(n ? n : 1), sizeof(*out));
    int64_t ids = 0;
    for (int64_t c = 0; c < module->comp_count; c++)
        for (int64_t i = 0; i < module->comps[c]->instr_count; i++)
            if (module->comps[c]->instrs[i]->id >= ids) ids = module->comps[c]->instrs[i]->id + 1;
    bool *from_param = calloc((size_t)(ids ? ids : 1), sizeof(bool));
    if (!out || !from_param) {
        free(out);
        free(from_param);
        return NULL;
    }
    for (int64_t p = 0; p < n; p++) {
        out[p] = (fake_constraint){.index_bound = -1, .init_value = -1};
        const cxla_instr *param = entry->params[p];
        if (!param || !cxla_type_is_array(param->shape.type)) continue;
        memset(from_param, 0, (size_t)ids * sizeof(bool));
        walk w = {.from_param = from_param, .id_count = ids, .c = &out[p], .param = param};
        mark(&w, param);
        walk_computation(&w, entry, 0);
        if (cxla_type_is_float(param->shape.type)) {
            memset(from_param, 0, (size_t)ids * sizeof(bool));
            w.sign = true;
            mark(&w, param);
            walk_computation(&w, entry, 0);
        }
        /* One constraint wins, the index bound first (XLA rejects conflicting ones). */
        if (out[p].index_bound >= 0) out[p].no_duplicates = false, out[p].init_value = -1;
        if (out[p].no_duplicates) out[p].init_value = -1;
    }
    free(from_param);
    return out;
}

/* ---- typed fills ------------------------------------------------------------------- */

#define GOLDEN 0x9E3779B97F4A7C15ULL

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint64_t splitmix64(uint64_t *state) {
    return mix64(*state += GOLDEN);
}

/* Random word |j| of a stream whose key is |key|: splitmix64's output sequence, indexed
 * (counter-based). */
static inline uint64_t word_at(uint64_t key, uint64_t j) {
    return mix64(key + (j + 1) * GOLDEN);
}

/* Floats are filled in blocks of FILL_BLOCK elements. Block b's random words come from
 * FILL_LANES xorshift128+ generators side by side, seeded from splitmix64 at (key, b):
 * any block can be made on its own, by any thread, so the values do not depend on how
 * the work was split. The generators are one loop whose dependence distance is
 * FILL_LANES words (x[i] from x[i - 2 * FILL_LANES] and x[i - FILL_LANES]), and the
 * conversions to the element type are loops with a constant trip count and no branches:
 * the compiler vectorizes both (splitmix64 itself does not vectorize, its 64-bit
 * multiplies have no SSE2 or AVX2 instruction). */
enum { FILL_LANES = 8, FILL_BLOCK = 2048 };

/* Lanes of 64-bit random words: FILL_BLOCK of them (a block of f64) or fewer. */
static inline void block_words(uint64_t key, uint64_t block, uint64_t *restrict words, int count) {
    uint64_t x[FILL_BLOCK + 2 * FILL_LANES];
    for (int k = 0; k < 2 * FILL_LANES; k++)
        x[k] = word_at(key, block * 2 * FILL_LANES + (uint64_t)k) | 1; /* never all zero */
    for (int i = 2 * FILL_LANES; i < count + 2 * FILL_LANES; i++) {
        uint64_t a = x[i - 2 * FILL_LANES], b = x[i - FILL_LANES];
        a ^= a << 23;
        x[i] = a ^ b ^ (a >> 17) ^ (b >> 26);
        words[i - 2 * FILL_LANES] = x[i] + b;
    }
}

/* Uniform in [-0.1, 0.2] from 24 random bits (the top of |w|), in float arithmetic as
 * XLA's uniform_real_distribution<float> computes it (a + (b - a) * u). The product and
 * the sum are separate statements, and the values must not depend on whether the
 * compiler fuses them into a multiply-add where the target has one (every target clone
 * below, a -march=native build): clang fuses only within an expression, and gcc not at
 * all in ISO C (-std=c11, as CMake builds it). */
static inline float uniform_f32(uint32_t w) {
    float scaled = 0.3f * ((float)(int32_t)(w >> 8) * 0x1p-24f);
    return scaled - 0.1f;
}

/* The same from 16 random bits: 65536 values, as fine as a 16-bit or narrower float
 * needs there (f16's spacing near 0.2 is 2^-13; 0.3 * 2^-16 is finer). */
static inline float uniform_f32_16(uint32_t w) {
    float scaled = 0.3f * ((float)(int32_t)(w & 0xffff) * 0x1p-16f);
    return scaled - 0.1f;
}

static inline double uniform_f64(uint64_t r) {
    double scaled = 0.3 * ((double)(int64_t)(r >> 11) * 0x1p-53);
    return scaled - 0.1;
}

static inline uint32_t bits_of(float f) {
    uint32_t a;
    memcpy(&a, &f, sizeof a);
    return a;
}

static inline float float_of(uint32_t a) {
    float f;
    memcpy(&f, &a, sizeof f);
    return f;
}

/* bf16 and f16 of a float in [-0.1, 0.2], rounded to nearest even as cxla_f32_to_bf16
 * and cxla_f32_to_f16 round (no NaN, infinity or overflow in that range; f16 subnormals
 * below 2^-14 by adding 0.5, whose last place is f16's subnormal step 2^-24). */
static inline uint16_t bf16_of(float f) {
    uint32_t a = bits_of(f);
    return (uint16_t)((a + 0x7fffu + ((a >> 16) & 1)) >> 16);
}

static inline uint16_t f16_of(float f) {
    uint32_t u = bits_of(f), a = u & 0x7fffffffu;
    uint32_t normal = (a + 0xfffu + ((a >> 13) & 1) - 0x38000000u) >> 13;
    uint32_t subnormal = bits_of(float_of(a) + 0.5f) - 0x3f000000u;
    uint32_t m = 0u - (uint32_t)(a < 0x38800000u); /* a select, not a branch */
    return (uint16_t)(((u >> 16) & 0x8000u) | (subnormal & m) | (normal & ~m));
}

/* gcc compiles the block fill for AVX-512 and AVX2 too and picks one when the program
 * starts (an ifunc): the same values, 2-3x faster than SSE2 where the CPU has them. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 && defined(__x86_64__) &&           \
    defined(__linux__)
#define FILL_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define FILL_CLONES
#endif

/* Block |block| of a float array of |type| (complex: its components as f32 or f64) from
 * |key|: |count| <= FILL_BLOCK elements written to |out|. |table| is small_float_table's
 * for the one-byte types. */
FILL_CLONES
static void fill_block(cxla_type type, void *out, uint64_t key, uint64_t block, int count,
                       const uint8_t *table) {
    uint64_t words[FILL_BLOCK];
    switch (type) {
    case CXLA_F64:
    case CXLA_C128: { /* one value per word */
        double d[FILL_BLOCK];
        block_words(key, block, words, FILL_BLOCK);
        for (int i = 0; i < FILL_BLOCK; i++) d[i] = uniform_f64(words[i]);
        memcpy(out, d, (size_t)count * sizeof(double));
        return;
    }
    case CXLA_F32:
    case CXLA_C64: { /* one per 32-bit half word */
        uint32_t h[FILL_BLOCK];
        float f[FILL_BLOCK];
        block_words(key, block, words, FILL_BLOCK / 2);
        memcpy(h, words, sizeof h);
        for (int i = 0; i < FILL_BLOCK; i++) f[i] = uniform_f32(h[i]);
        memcpy(out, f, (size_t)count * sizeof(float));
        return;
    }
    case CXLA_BF16:
    case CXLA_F16: { /* one per 16 bits */
        uint32_t h[FILL_BLOCK / 2];
        float f[FILL_BLOCK];
        uint16_t o[FILL_BLOCK];
        block_words(key, block, words, FILL_BLOCK / 4);
        memcpy(h, words, sizeof h);
        for (int i = 0; i < FILL_BLOCK / 2; i++) {
            f[2 * i] = uniform_f32_16(h[i]);
            f[2 * i + 1] = uniform_f32_16(h[i] >> 16);
        }
        if (type == CXLA_BF16)
            for (int i = 0; i < FILL_BLOCK; i++) o[i] = bf16_of(f[i]);
        else
            for (int i = 0; i < FILL_BLOCK; i++) o[i] = f16_of(f[i]);
        memcpy(out, o, (size_t)count * sizeof(uint16_t));
        return;
    }
    default: { /* the f8, f6 and f4 types: each 16-bit draw looked up in |table| */
        uint16_t d[FILL_BLOCK];
        uint8_t *o = out;
        block_words(key, block, words, FILL_BLOCK / 4);
        memcpy(d, words, sizeof d);
        for (int i = 0; i < count; i++) o[i] = table[d[i]];
        return;
    }
    }
}

/* For the one-byte float types: what each of the 65536 16-bit draws becomes. */
static uint8_t *small_float_table(cxla_type type) {
    uint8_t *table = malloc(65536);
    float f[256];
    for (uint32_t w = 0; table && w < 65536; w += 256) {
        for (uint32_t i = 0; i < 256; i++) f[i] = uniform_f32_16(w + i);
        if (!cxla_floats_convert(CXLA_F32, f, type, table + w, 256))
            for (uint32_t i = 0; i < 256; i++)
                table[w + i] = (uint8_t)cxla_float_from_float(type, f[i]);
    }
    return table;
}

/* Blocks [lo, hi) of an array of |n| elements (components, for complex types). */
static void fill_blocks(cxla_type type, void *data, int64_t n, uint64_t key, int64_t lo, int64_t hi,
                        const uint8_t *table) {
    size_t es = cxla_type_storage(cxla_type_component(type));
    for (int64_t b = lo; b < hi; b++) {
        int64_t first = b * FILL_BLOCK, left = n - first;
        fill_block(type, (char *)data + (size_t)first * es, key, (uint64_t)b,
                   left < FILL_BLOCK ? (int)left : FILL_BLOCK, table);
    }
}

typedef struct fill_job {
    cxla_type type;
    void *data;
    int64_t n;
    uint64_t key;
    int64_t lo, hi; /* blocks */
    const uint8_t *table;
} fill_job;

static void *fill_job_run(void *arg) {
    fill_job *j = arg;
    fill_blocks(j->type, j->data, j->n, j->key, j->lo, j->hi, j->table);
    return NULL;
}

/* Large arrays (a model's weights) are filled by several threads, whole blocks each; the
 * values are the same as one thread would write. */
static void fill_floats(cxla_type type, void *data, int64_t n, uint64_t key) {
    enum { MAX_THREADS = 16, PER_THREAD = 1 << 22 };
    int64_t blocks = (n + FILL_BLOCK - 1) / FILL_BLOCK;
    uint8_t *table = NULL;
    if (cxla_type_storage(type) == 1) {
        table = small_float_table(type);
        if (!table) return; /* out of memory: the array stays zero */
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t threads = n / PER_THREAD;
    if (threads > cpus) threads = cpus;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if (threads < 2) {
        fill_blocks(type, data, n, key, 0, blocks, table);
        free(table);
        return;
    }
    pthread_t tid[MAX_THREADS];
    fill_job jobs[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    int64_t step = (blocks + threads - 1) / threads;
    for (int64_t t = 0; t < threads; t++) {
        int64_t lo = t * step < blocks ? t * step : blocks;
        int64_t hi = lo + step < blocks ? lo + step : blocks;
        jobs[t] = (fill_job){type, data, n, key, lo, hi, table};
        started[t] = pthread_create(&tid[t], NULL, fill_job_run, &jobs[t]) == 0;
        if (!started[t]) fill_job_run(&jobs[t]); /* no thread: do it here */
    }
    for (int64_t t = 0; t < threads; t++)
        if (started[t]) pthread_join(tid[t], NULL);
    free(table);
}

static void fill_ints(cxla_literal *lit, const fake_constraint *c, uint64_t *state) {
    cxla_type t = cxla_literal_type(lit);
    size_t es = cxla_type_storage(t);
    char *data = cxla_literal_data(lit);
    int64_t n = (int64_t)(cxla_literal_byte_size(lit) / es);
    int bits = cxla_type_bits(t);
    uint64_t type_max = cxla_type_is_signed(t) ? (((uint64_t)1 << (bits - 1)) - 1)
                        : bits >= 64           ? UINT64_MAX
                                               : ((uint64_t)1 << bits) - 1;
    if (c && c->init_value >= 0) {
        for (int64_t i = 0; i < n; i++) cxla_store_s64(t, data + (size_t)i * es, c->init_value);
        return;
    }
    if (c && c->no_duplicates && (uint64_t)n <= type_max) {
        /* A shuffled iota (XLA: std::iota then std::shuffle). */
        for (int64_t i = 0; i < n; i++) cxla_store_s64(t, data + (size_t)i * es, i);
        char tmp[8];
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)(splitmix64(state) % (uint64_t)(i + 1));
            memcpy(tmp, data + (size_t)i * es, es);
            memcpy(data + (size_t)i * es, data + (size_t)j * es, es);
            memcpy(data + (size_t)j * es, tmp, es);
        }
        return;
    }
    /* Indices in [0, bound]; other integers small and non-negative, [0, 8) (XLA draws
     * from the whole range: cxla does not, so that generated counts and sizes stay
     * small). */
    uint64_t range = 8;
    if (c && c->index_bound >= 0) {
        uint64_t b = (uint64_t)c->index_bound;
        range = (b > type_max ? type_max : b) + 1;
    }
    for (int64_t i = 0; i < n; i++)
        cxla_store_u64(t, data + (size_t)i * es, splitmix64(state) % range);
}

/* |x| of every element, by clearing the sign bit: the top bit of the type's width within
 * each element's storage (the host's byte order). f8e8m0fnu has no sign. */
static void clear_signs(cxla_type t, char *data, int64_t n) {
    size_t es = cxla_type_storage(t);
    int bits = cxla_type_bits(t);
    if (t == CXLA_F8E8M0FNU || bits < 2 || (size_t)bits > 8 * es || es > 8) return;
    uint64_t keep = ~(1ULL << (bits - 1));
    for (int64_t i = 0; i < n; i++) {
        char *e = data + (size_t)i * es;
        if (es == 1) {
            *(uint8_t *)e &= (uint8_t)keep;
        } else if (es == 2) {
            uint16_t v;
            memcpy(&v, e, 2);
            v &= (uint16_t)keep;
            memcpy(e, &v, 2);
        } else if (es == 4) {
            uint32_t v;
            memcpy(&v, e, 4);
            v &= (uint32_t)keep;
            memcpy(e, &v, 4);
        } else if (es == 8) {
            uint64_t v;
            memcpy(&v, e, 8);
            v &= keep;
            memcpy(e, &v, 8);
        }
    }
}

void fake_args_fill(cxla_literal *lit, const fake_constraint *c, uint64_t *state) {
    cxla_type t = cxla_literal_type(lit);
    size_t es = cxla_type_storage(t);
    if (!es) return;
    char *data = cxla_literal_data(lit);
    int64_t n = (int64_t)(cxla_literal_byte_size(lit) / es);
    if (t == CXLA_PRED) {
        uint64_t r = 0;
        for (int64_t i = 0; i < n; i++) {
            if (i % 64 == 0) r = splitmix64(state);
            data[i] = (char)((r >> (i % 64)) & 1);
        }
    } else if (cxla_type_is_integer(t)) {
        fill_ints(lit, c, state);
    } else if (c && c->init_value >= 0) {
        for (int64_t i = 0; i < n; i++) cxla_store_f64(t, data + (size_t)i * es, c->init_value);
    } else if (cxla_type_is_float(t) || cxla_type_is_complex(t)) {
        /* One word of |state| keys the whole array. */
        fill_floats(t, data, cxla_type_is_complex(t) ? 2 * n : n, splitmix64(state));
        if (c && c->non_negative && cxla_type_is_float(t)) clear_signs(t, data, n);
    }
}

static void fill_leaves(cxla_literal *lit, const fake_constraint *c, uint64_t *state) {
    if (cxla_literal_type(lit) == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            fill_leaves(cxla_literal_tuple_element(lit, i), NULL, state);
    } else if (cxla_type_is_array(cxla_literal_type(lit))) {
        fake_args_fill(lit, c, state);
    }
}

cxla_status fake_args_make(const cxla_shape *shape, const fake_constraint *c, uint64_t *state,
                           cxla_literal **out) {
    cxla_shape s = *shape;
    if (cxla_type_is_array(s.type)) s.layout = NULL;
    CXLA_RETURN_IF_ERROR(cxla_literal_create(&s, out));
    fill_leaves(*out, c, state);
    return NULL;
}
