/* The reductions of the emitter's kernels (see emit_nest.h): a reduce at a kernel's
 * output as its own loops (pairwise sums in the interpreter's tree for f32/f64 adds, the
 * fast order's lanes over rows, column reduces over blocks of contiguous outputs, the
 * plain fold otherwise), and a reduce inside a fusion's loop in the fast order (row
 * fusion). The order of each is documented in docs/semantics.md, "Reductions"; the
 * interpreter's own is in src/interp/interp_reduce.c. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/emit_nest.h"
#include "exec/math.h"

/* A column reduce's block of contiguous outputs reduced together (at most, a power of two
 * dividing the last dimension); the fast order's lanes over a row (docs/semantics.md). */
enum { MAX_LANES = 64, ROW_LANES = 64 };
/* Fast-order rows folded side by side (row_lanes_helper): as many as keep their lanes in
 * registers, ROW_GROUP_BYTES of lanes (4 rows of f32, 2 of f64: 16 of AVX-512's 32 vector
 * registers). 8192x4096 f32 on the 2-core EPYC, input on huge pages (literal.c): 0.96-0.97x
 * the thread CPU time of one row at a time; on small pages 2-5% slower (docs/performance.md,
 * "Row sums and max pool"). With AVX2's 16 registers the lanes of 4 rows spill: the same
 * kernel compiled for haswell took 1.19-1.22x the time of one row, so the generated C
 * folds rows side by side only where ROW_GROUP_TARGET holds (one row at a time
 * elsewhere, ahead-of-time portable output included). */
enum { ROW_GROUP_BYTES = 1024, ROW_GROUP_MAX = 4 };
#define ROW_GROUP_TARGET "defined(__AVX512F__)"

reducer cpu_nest_match_reducer(const cxla_instr *instr) {
    if (instr->opcode != CXLA_OP_REDUCE || instr->operand_count != 2) return RED_NONE;
    const cxla_computation *c = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!c || c->param_count != 2 || !c->root || c->root->operand_count != 2) return RED_NONE;
    const cxla_instr *r = c->root, *a = r->operands[0], *b = r->operands[1];
    cxla_type t = instr->operands[0]->shape.type;
    if (a->opcode != CXLA_OP_PARAMETER || b->opcode != CXLA_OP_PARAMETER || a == b ||
        r->shape.type != t || a->shape.type != t || b->shape.type != t || r->shape.rank != 0 ||
        a->shape.rank != 0 || b->shape.rank != 0 || instr->operands[1]->shape.type != t)
        return RED_NONE;
    bool flt = cxla_type_is_float(t);
    switch (r->opcode) {
    case CXLA_OP_ADD: return RED_ADD;
    case CXLA_OP_MULTIPLY: return RED_MUL;
    case CXLA_OP_MAXIMUM: return RED_MAX;
    case CXLA_OP_MINIMUM: return RED_MIN;
    case CXLA_OP_AND: return flt ? RED_NONE : RED_AND;
    case CXLA_OP_OR: return flt ? RED_NONE : RED_OR;
    case CXLA_OP_XOR: return flt ? RED_NONE : RED_XOR;
    default: return RED_NONE;
    }
}

/* Declarations for a helper: its inputs, then |rest|. */
static const char *helper_params(em *e, const char *rest) {
    if (!e->in_params[0]) return rest;
    return F("%s, %s", e->in_params, rest);
}
static const char *helper_args(em *e, const char *rest) {
    if (!e->in_names[0]) return rest;
    return F("%s, %s", e->in_names, rest);
}

/* ---- reductions ---------------------------------------------------------------------- */

/* acc = op(acc, x) in the interpreter's fold for |t|. */
static const char *fold(em *e, reducer r, cxla_type t, const char *acc, const char *x) {
    static const cxla_opcode ops[] = {
        [RED_ADD] = CXLA_OP_ADD,     [RED_MUL] = CXLA_OP_MULTIPLY, [RED_MAX] = CXLA_OP_MAXIMUM,
        [RED_MIN] = CXLA_OP_MINIMUM, [RED_AND] = CXLA_OP_AND,      [RED_OR] = CXLA_OP_OR,
        [RED_XOR] = CXLA_OP_XOR};
    if (t == CXLA_PRED) {
        const char *o = r == RED_XOR                                    ? "^"
                        : (r == RED_ADD || r == RED_OR || r == RED_MAX) ? "|"
                                                                        : "&";
        return F("(uint8_t)((%s %s %s) != 0)", acc, o, x);
    }
    if (cxla_type_is_integer(t) && (r == RED_MAX || r == RED_MIN))
        return F("%s %s %s ? %s : %s", x, r == RED_MAX ? ">" : "<", acc, x, acc);
    if (!cpu_emit_is_small(t)) return cpu_emit_binary(e->arena, ops[r], t, acc, x);
    /* Small floats: in f32, rounded after every step (as the interpreter's fold). */
    return cpu_emit_encode(e->arena, t,
                           cpu_emit_binary(e->arena, ops[r], CXLA_F32,
                                           cpu_emit_decode(e->arena, t, acc),
                                           cpu_emit_decode(e->arena, t, x)));
}

/* Column reduces (the last dimension kept) walk the reduced elements of a chunk of
 * contiguous outputs together: the chunk is the whole last dimension when it fits
 * COL_CHUNK_BYTES, so that consecutive reduced elements are consecutive in memory and the
 * reads stream (chunks of 64 outputs read 256 bytes per 16 KiB row of an 8192x4096
 * column sum and ran at a third of the speed of a row sum). The pairwise helper keeps one
 * chunk of partial sums per level of its tree on the stack: at most COL_STACK_BYTES. */
enum { COL_CHUNK_BYTES = 16384, COL_STACK_BYTES = 192 * 1024, COL_ROWS = 4 };

/* Levels of the interpreter's pairwise tree over |n| elements below its root. */
static int64_t pairwise_depth(int64_t n) {
    int64_t d = 0;
    while (n > 16) n -= n / 2, d++; /* the larger half is the deeper one */
    return d;
}

/* How a reduce is emitted (see reduce_plan). */
typedef struct rplan {
    const cxla_instr *reduce, *src;
    reducer r;
    cxla_type t;
    bool reduced[CXLA_MAX_RANK];
    int64_t count;  /* reduced elements per output element */
    bool pairwise;  /* f32/f64 add: the interpreter's pairwise tree */
    bool row_lanes; /* fast order: ROW_LANES lanes over each row, then a fixed tree */
    int64_t lanes;  /* > 1: blocks of this many contiguous outputs (a column reduce) */
    int64_t group;  /* column reduces: blocks reduced side by side (see col_group) */
    bool trailing;  /* the reduced dimensions are the operand's last ones */
    int64_t range;  /* iterations of the outer loop */
} rplan;

/* Blocks of p->lanes outputs in one chunk (see COL_CHUNK_BYTES). */
static int64_t col_group(const rplan *p) {
    int64_t d = p->src->shape.dims[p->src->shape.rank - 1], W = p->lanes;
    int64_t es = (int64_t)cxla_type_storage(p->t), levels = 1;
    if (es < 1) es = 1;
    if (p->pairwise) levels += pairwise_depth(p->count);
    int64_t cb = COL_CHUNK_BYTES / es;
    while (cb > W && levels * cb * es > COL_STACK_BYTES) cb /= 2;
    if (cb > d) cb = d;
    return cb / W > 1 ? cb / W : 1;
}

static rplan reduce_plan(const cxla_instr *reduce) {
    rplan p;
    memset(&p, 0, sizeof p);
    p.reduce = reduce;
    p.src = reduce->operands[0];
    p.r = cpu_nest_match_reducer(reduce);
    p.t = reduce->shape.type;
    int64_t nd = 0;
    const int64_t *dims = cxla_instr_ints(reduce, CXLA_ATTR_DIMENSIONS, &nd);
    for (int64_t k = 0; k < nd; k++) p.reduced[dims[k]] = true;
    p.count = 1;
    for (int64_t k = 0; k < nd; k++) p.count *= p.src->shape.dims[dims[k]];
    p.pairwise = p.r == RED_ADD && (p.t == CXLA_F32 || p.t == CXLA_F64) && p.count > 0;
    int64_t rank = p.src->shape.rank, orank = reduce->shape.rank;
    p.trailing = true;
    for (int64_t k = 0; k < rank; k++)
        if (p.reduced[k] && k < rank - nd) p.trailing = false;
    p.lanes = 1;
    if (orank > 0 && !p.reduced[rank - 1] && p.count > 0) {
        int64_t d = p.src->shape.dims[rank - 1];
        int64_t w = MAX_LANES;
        while (w > 1 && d % w) w /= 2;
        if (w >= 8) p.lanes = w;
    }
    /* The fast order (docs/semantics.md, "Reductions"): rows of at least 2 * ROW_LANES
     * elements of an f32/f64 add, maximum or minimum, unless CXLA_CPU_EXACT_MATH asks for
     * the interpreter's order. Maximum and minimum give the same value in any order (only
     * which NaN, when several, may differ); sums differ within the documented bound. */
    p.row_lanes = p.lanes == 1 && p.trailing && p.count >= 2 * ROW_LANES &&
                  (p.t == CXLA_F32 || p.t == CXLA_F64) &&
                  (p.r == RED_ADD || p.r == RED_MAX || p.r == RED_MIN) && cpu_emit_fast_math();
    if (p.row_lanes) p.pairwise = false;
    if (p.lanes > 1) p.group = col_group(&p);
    if (p.lanes > 1)
        p.range = orank >= 2 ? reduce->shape.dims[0] : reduce->shape.dims[0] / p.lanes;
    else
        p.range = elements_of(&reduce->shape);
    return p;
}

/* How many fast-order rows of |p| one helper call folds side by side (see ROW_GROUP_BYTES;
 * CXLA_CPU_ROW_GROUP in the environment of the compiling process, 1 to ROW_GROUP_MAX,
 * overrides it, so that one machine can compare the two kernels: 1 is a row at a time):
 * 1 when the reduce has fewer output elements than that, and 1 when its operand has fewer
 * than ROW_GROUP_MIN_BYTES: the side-by-side rows are several memory streams, which pay
 * only on an operand read from memory (0.95-0.98x the time on 128 MB of f32 rows), and
 * they cost code: on gemma3_1b_flax_call's small bf16 rows they made the generated C 29%
 * longer and the cold compile 3.35 -> 4.2 s, for no change in its run time. The values do
 * not depend on it. */
enum { ROW_GROUP_MIN_BYTES = 8 << 20 };

static int64_t row_group(const rplan *p) {
    int64_t size = (int64_t)cxla_type_storage(p->t);
    int64_t rows = ROW_GROUP_BYTES / (ROW_LANES * size);
    const char *v = getenv("CXLA_CPU_ROW_GROUP");
    bool forced = false;
    if (v && *v) {
        char *end = NULL;
        long n = strtol(v, &end, 10);
        if (end != v && !*end && n >= 1) rows = n, forced = true;
    }
    if (!forced && elements_of(&p->src->shape) * size < ROW_GROUP_MIN_BYTES) return 1;
    if (rows > ROW_GROUP_MAX) rows = ROW_GROUP_MAX;
    if (rows < 2 || elements_of(&p->reduce->shape) < rows) return 1;
    return rows;
}

/* Whether |reduce| may be computed inside a fusion's loop (inline_reduce). */
static bool reduce_in_loop(const cxla_instr *reduce) {
    return reduce_plan(reduce).row_lanes;
}

/* The operand index of a reduce from its kept dimensions' indices |kept| (in output
 * order) and the reduced ones |red| (in dimension order). */
static ix reduce_operand_ix(const rplan *p, const char *const *kept, const char *const *red) {
    const cxla_shape *s = &p->src->shape;
    ix y = ix_new(s->rank, s->dims);
    int64_t ko = 0, ro = 0;
    for (int64_t j = 0; j < s->rank; j++) y.d[j] = p->reduced[j] ? red[ro++] : kept[ko++];
    return y;
}

/* The reduced dimensions' indices from the linear reduced index |r| (row-major over the
 * reduced dimensions; one reduced dimension is |r| itself). */
static void reduced_indices(em *e, const rplan *p, const char *r, const char **red, ix *rx,
                            int64_t *rdims) {
    int64_t nr = 0;
    for (int64_t j = 0; j < p->src->shape.rank; j++)
        if (p->reduced[j]) rdims[nr++] = p->src->shape.dims[j];
    *rx = ix_new(nr, rdims);
    rx->lin = r;
    for (int64_t j = 0; j < nr; j++) red[j] = ix_dim(e, rx, j);
}

/* The value of the reduce's operand at output element |o| (linear, a C expression) and
 * linear reduced index |r|. */
static const char *row_element(em *e, const rplan *p, const char *o, const char *r) {
    const cxla_shape *os = &p->reduce->shape;
    ix ox = ix_new(os->rank, os->dims);
    ox.lin = o;
    const char *kept[CXLA_MAX_RANK], *red[CXLA_MAX_RANK];
    for (int64_t k = 0; k < os->rank; k++) kept[k] = ix_dim(e, &ox, k);
    ix rx;
    int64_t rdims[CXLA_MAX_RANK];
    reduced_indices(e, p, r, red, &rx, rdims);
    ix y = reduce_operand_ix(p, kept, red);
    if (p->trailing) y.lin = F("(%s * %" PRId64 " + %s)", o, p->count, r);
    return cpu_nest_value(e, p->src, &y);
}

/* Saves and clears the emitter's scope for a helper function written into |body|. */
typedef struct scope {
    cxla_strbuf *b, *hoist;
    int indent;
    cse_entry *cse;
    int64_t ncse, capcse;
} scope;

static scope scope_enter(em *e, cxla_strbuf *body) {
    scope s = {e->b, e->hoist, e->indent, e->cse, e->ncse, e->capcse};
    e->b = body;
    e->hoist = NULL;
    e->indent = 0;
    e->cse = NULL;
    e->ncse = e->capcse = 0;
    return s;
}

static void scope_leave(em *e, scope s, cxla_strbuf *body) {
    cxla_strbuf_append(&e->helpers, body->data ? body->data : "", body->len);
    cpu_emit_buf_free(body);
    e->b = s.b;
    e->hoist = s.hoist;
    e->indent = s.indent;
    e->cse = s.cse;
    e->ncse = s.ncse;
    e->capcse = s.capcse;
}

/* The helper that sums reduced elements [first, first + m) of output element o in the
 * interpreter's pairwise tree (pairwise_f32/f64 in src/interp/interp_reduce.c: a range of
 * up to 16 summed in order from its first element, a longer one split at m / 2 and its
 * halves added, left + right). The tree's shape is known here, so each size gets its own
 * helper and no division happens at run time; a subtree of 2, 4 or 8 equal leaves (m =
 * L * 2^g, 8 < L <= 16) sums its leaves interleaved, so that their additions overlap. */
static const char *row_sum_helper(em *e, const rplan *p, int64_t idx, int64_t m) {
    for (int64_t i = 0; i < e->nsums; i++)
        if (e->sums[i].idx == idx && e->sums[i].m == m) return e->sums[i].name;
    const char *left = NULL, *right = NULL;
    int64_t g = 0, L = m;
    while (L > 16 && L % 2 == 0 && g < 3) L /= 2, g++;
    bool grouped = m > 16 && L <= 16 && L > 8;
    int64_t half = m / 2;
    if (m > 16 && !grouped) {
        left = row_sum_helper(e, p, idx, half);
        right = row_sum_helper(e, p, idx, m - half);
    }
    const char *fn = F("%s_sum%" PRId64 "_%" PRId64, e->name, idx, m);
    if (e->nsums < (int64_t)CXLA_ARRAY_SIZE(e->sums))
        e->sums[e->nsums++] = (sum_helper){idx, m, fn};
    const char *CT = cpu_emit_ctype(p->t);
    cxla_strbuf body;
    cxla_strbuf_init(&body);
    scope sc = scope_enter(e, &body);
    line(e, "static %s %s(%s) {", CT, fn, helper_params(e, "int64_t o, int64_t first"));
    e->indent++;
    void_inputs(e);
    line(e, "(void)o;");
    line(e, "(void)first; /* unread when the values do not depend on it */");
    if (left) {
        line(e, "return %s(%s) + %s(%s);", left, helper_args(e, "o, first"), right,
             helper_args(e, F("o, first + %" PRId64, half)));
    } else {
        int64_t chains = grouped ? (int64_t)1 << g : 1, len = grouped ? L : m;
        for (int64_t c = 0; c < chains; c++) {
            const char *v = row_element(e, p, "o", F("(first + %" PRId64 ")", c * len));
            line(e, "%s s%" PRId64 " = %s;", CT, c, v);
        }
        if (len > 1) {
            line(e, "for (int64_t r = 1; r < %" PRId64 "; r++) {", len);
            e->indent++;
            for (int64_t c = 0; c < chains; c++) {
                const char *v = row_element(e, p, "o", F("(first + %" PRId64 " + r)", c * len));
                line(e, "s%" PRId64 " += %s;", c, v);
            }
            e->indent--;
            line(e, "}");
        }
        /* The leaves combined as the tree does: neighbours first. */
        for (int64_t w = 1; w < chains; w *= 2)
            for (int64_t c = 0; c + w < chains; c += 2 * w)
                line(e, "s%" PRId64 " = s%" PRId64 " + s%" PRId64 ";", c, c, c + w);
        line(e, "return s0;");
    }
    e->indent--;
    line(e, "}");
    scope_leave(e, sc, &body);
    return fn;
}

/* The fast-order row helper (docs/semantics.md, "Reductions"): the row of output element
 * o, n = q * ROW_LANES + r elements, folded into ROW_LANES lanes: lane k starts with
 * element k and folds elements k + ROW_LANES, k + 2 * ROW_LANES, ... in order (the q full
 * blocks), then element q * ROW_LANES + k for k < r (the tail); the lanes are then
 * combined by a fixed tree, acc[k] = acc[k] op acc[k + w] for w = ROW_LANES / 2, ..., 1.
 * The order depends on n alone, never on the thread count; the lane loop vectorizes.
 *
 * |rows| > 1: the helper folds rows o, o + 1, ..., o + rows - 1 side by side, each in
 * that same order (their lanes in registers of their own), and stores their values in
 * res[]. A thread that sums one row at a time reads one stream of memory and runs each
 * row's tree alone; several rows read several streams, which the hardware prefetcher
 * follows at once, and their trees overlap (docs/performance.md, "Row sums and max pool"). */
static const char *row_lanes_helper(em *e, const rplan *p, int64_t idx, int64_t rows) {
    const char *fn = rows == 1 ? F("%s_rlanes%" PRId64, e->name, idx)
                               : F("%s_rlanes%" PRId64 "_x%" PRId64, e->name, idx, rows);
    const char *CT = cpu_emit_ctype(p->t);
    int64_t q = p->count / ROW_LANES, rem = p->count % ROW_LANES;
    cxla_strbuf body;
    cxla_strbuf_init(&body);
    scope sc = scope_enter(e, &body);
    /* One row: its lanes acc, the value returned. Several: lanes accj for row o + j, the
     * values stored in res[j]. */
    const char *acc[ROW_GROUP_MAX], *row[ROW_GROUP_MAX];
    for (int64_t j = 0; j < rows; j++) {
        acc[j] = rows == 1 ? "acc" : F("acc%" PRId64, j);
        row[j] = j == 0 ? "o" : F("(o + %" PRId64 ")", j);
    }
    if (rows == 1) {
        line(e, "static %s %s(%s) {", CT, fn, helper_params(e, "int64_t o"));
    } else {
        line(e, "#if %s", ROW_GROUP_TARGET);
        line(e, "static void %s(%s) {", fn, helper_params(e, F("int64_t o, %s *restrict res", CT)));
    }
    e->indent++;
    void_inputs(e);
    line(e, "(void)o;");
    for (int64_t j = 0; j < rows; j++) line(e, "%s %s[%d];", CT, acc[j], ROW_LANES);
    line(e, "for (int64_t k = 0; k < %d; k++) {", ROW_LANES);
    e->indent++;
    for (int64_t j = 0; j < rows; j++)
        line(e, "%s[k] = %s;", acc[j], row_element(e, p, row[j], "k"));
    e->ncse = 0;
    close_loops(e, 1);
    if (q > 1) {
        line(e, "for (int64_t b = 1; b < %" PRId64 "; b++) {", q);
        e->indent++;
        line(e, "const int64_t base = b * %d;", ROW_LANES);
        line(e, "CXLA_UNROLL_LANES");
        line(e, "for (int64_t k = 0; k < %d; k++) {", ROW_LANES);
        e->indent++;
        for (int64_t j = 0; j < rows; j++) {
            const char *v = row_element(e, p, row[j], "(base + k)");
            const char *a = F("%s[k]", acc[j]);
            line(e, "%s = %s;", a, fold(e, p->r, p->t, a, v));
        }
        e->ncse = 0;
        close_loops(e, 2);
    }
    if (rem) {
        line(e, "for (int64_t k = 0; k < %" PRId64 "; k++) {", rem);
        e->indent++;
        for (int64_t j = 0; j < rows; j++) {
            const char *v = row_element(e, p, row[j], F("(%" PRId64 " + k)", q * ROW_LANES));
            const char *a = F("%s[k]", acc[j]);
            line(e, "%s = %s;", a, fold(e, p->r, p->t, a, v));
        }
        e->ncse = 0;
        close_loops(e, 1);
    }
    for (int64_t w = ROW_LANES / 2; w >= 1; w /= 2)
        for (int64_t j = 0; j < rows; j++)
            line(e, "for (int64_t k = 0; k < %" PRId64 "; k++) %s[k] = %s;", w, acc[j],
                 fold(e, p->r, p->t, F("%s[k]", acc[j]), F("%s[k + %" PRId64 "]", acc[j], w)));
    if (rows == 1)
        line(e, "return acc[0];");
    else
        for (int64_t j = 0; j < rows; j++) line(e, "res[%" PRId64 "] = %s[0];", j, acc[j]);
    e->indent--;
    line(e, "}");
    if (rows > 1) line(e, "#endif");
    scope_leave(e, sc, &body);
    return fn;
}

/* Whether |instr| computes a transcendental function within |depth| fused operands. */
static bool costly(const cxla_instr *instr, int depth) {
    if (exec_math_unary(instr->opcode) && cxla_type_is_float(instr->shape.type)) return true;
    if (depth == 0 || instr->opcode == CXLA_OP_PARAMETER || instr->opcode == CXLA_OP_REDUCE)
        return false;
    for (int64_t k = 0; k < instr->operand_count; k++)
        if (costly(instr->operands[k], depth - 1)) return true;
    return false;
}

/* The lanes of an in-loop reduce (inline_reduce) over the row at output index |kept|:
 * acc[k] for k < ROW_LANES, not yet combined. |flag| (maximum and minimum only, else
 * NULL): the lanes fold with a plain comparison (one vector max or min), and flag[k]
 * records whether lane k met a NaN, instead of the interpreter's NaN-propagating,
 * sign-of-zero-ordering fold (cxla_max_f32: about nine vector instructions per element;
 * softmax's maximum pass was a quarter of its row's arithmetic). |store|: the operand's
 * values also go to the output row (see inline_reduce). |prefetch|: this pass may ask for
 * the next row. */
static void inline_lanes(em *e, const rplan *p, const char *const *kept, const char *acc,
                         const char *flag, int64_t id, bool store, bool prefetch) {
    int64_t q = p->count / ROW_LANES, rem = p->count % ROW_LANES;
    const char *k = F("k%" PRId64, id), *b = F("b%" PRId64, id);
    for (int part = 0; part < 3; part++) {
        int64_t count = part == 2 ? rem : ROW_LANES;
        if ((part == 1 && q < 2) || count == 0) continue;
        const char *r = part == 0   ? k
                        : part == 1 ? F("(%s * %d + %s)", b, ROW_LANES, k)
                                    : F("(%" PRId64 " + %s)", q * ROW_LANES, k);
        if (part == 1) {
            line(e, "for (int64_t %s = 1; %s < %" PRId64 "; %s++) {", b, b, q, b);
            e->indent++;
            /* A later pass over the row, which is in cache by now: ask for the next row. */
            if (prefetch && e->row_start && e->row_reduces_done > 0 && !e->row_prefetched) {
                const char *pf =
                    cpu_emit_row_prefetch(e->arena, e->fused, e->row_shape, e->row_start,
                                          F("%s * %d", b, ROW_LANES), ROW_LANES);
                if (pf) line(e, "%s", pf);
                e->row_prefetched = pf != NULL;
            }
            line(e, "CXLA_UNROLL_LANES");
        }
        line(e, "for (int64_t %s = 0; %s < %" PRId64 "; %s++) {", k, k, count, k);
        e->indent++;
        int64_t mark = e->ncse;
        const char *red[CXLA_MAX_RANK];
        ix rx;
        int64_t rdims[CXLA_MAX_RANK];
        reduced_indices(e, p, r, red, &rx, rdims);
        ix y = reduce_operand_ix(p, kept, red);
        const char *v = cpu_nest_value(e, p->src, &y);
        if (store)
            line(e, "%s[%s] = %s;", e->row_out,
                 e->row_out_local ? ix_dim(e, &y, y.rank - 1) : ix_lin(e, &y), v);
        const char *a = F("%s[%s]", acc, k);
        if (!flag) {
            line(e, "%s = %s;", a, part == 0 ? v : fold(e, p->r, p->t, a, v));
        } else {
            const char *cmp = p->r == RED_MAX ? ">" : "<";
            line(e, "%s = %s;", a, part == 0 ? v : F("%s %s %s ? %s : %s", v, cmp, a, v, a));
            line(e, "%s[%s] %s= %s != %s;", flag, k, part == 0 ? "" : "|", v, v);
        }
        cse_reset(e, mark);
        close_loops(e, part == 1 ? 2 : 1);
    }
}

/* A reduce inside a fusion's loop (row fusion, src/passes/fusion.c), in the fast order of
 * row_lanes_helper, at output index |x|: the lanes and the tree written where the value
 * is needed. dims_nest asks for these values before a row's elements, so each is computed
 * once per row, with the row still in cache for the loop that follows.
 *
 * A maximum or minimum screens the row first (inline_lanes with flags): where no lane met
 * a NaN and the result is not a zero, the plain comparisons found the value the
 * interpreter's fold finds (without NaNs, maximum and minimum are the same number in any
 * order, and only a zero has two encodings, where -0 < +0 decides). Otherwise the row is
 * folded again with that fold, so the result is the fast order's to the bit, which NaN
 * wins included (tests/cpu/test_reduce_order.c, test_row_fusion_minmax). */
static const char *inline_reduce(em *e, const cxla_instr *instr, ix *x) {
    rplan p = reduce_plan(instr);
    if (!p.row_lanes) {
        cpu_nest_fail(e, instr,
                      "a reduce inside a fusion must be its output (or in the fast order)");
        return "0";
    }
    const char *CT = cpu_emit_ctype(p.t);
    int64_t id = e->tmp++;
    ix s0 = ix_new(0, NULL);
    const char *init = cpu_nest_value(e, instr->operands[1], &s0);
    const char *kept[CXLA_MAX_RANK];
    for (int64_t k = 0; k < instr->shape.rank; k++) kept[k] = ix_dim(e, x, k);
    const char *acc = F("acc%" PRId64, id), *k = F("k%" PRId64, id);
    /* The operand's values are also the row's elements of another value of the loop, and
     * costly (a transcendental function; softmax's exponentials): store them in the output
     * row, which the row's loop then reads instead (dims_nest). */
    bool store = e->row_out && p.src->user_count > 1 && p.src->shape.type == e->row_out_type &&
                 (p.t == CXLA_F32 || p.t == CXLA_F64) && costly(p.src, 8) &&
                 e->nrow_stored < (int64_t)CXLA_ARRAY_SIZE(e->row_stored);
    if (store) e->row_stored[e->nrow_stored++] = p.src;
    /* A row that fails the screen is read twice: not worth it for a costly operand. */
    bool screen = (p.r == RED_MAX || p.r == RED_MIN) && !costly(p.src, 8);
    line(e, "%s %s[%d];", CT, acc, ROW_LANES);
    if (screen) {
        const char *flag = F("nan%" PRId64, id), *cmp = p.r == RED_MAX ? ">" : "<";
        line(e, "%s %s[%d];", p.t == CXLA_F64 ? "int64_t" : "int32_t", flag, ROW_LANES);
        inline_lanes(e, &p, kept, acc, flag, id, false, true);
        for (int64_t w = ROW_LANES / 2; w >= 1; w /= 2) {
            const char *a = F("%s[%s]", acc, k), *b = F("%s[%s + %" PRId64 "]", acc, k, w);
            line(e,
                 "for (int64_t %s = 0; %s < %" PRId64 "; %s++) { %s = %s %s %s ? %s : %s; "
                 "%s[%s] |= %s[%s + %" PRId64 "]; }",
                 k, k, w, k, a, b, cmp, a, b, a, flag, k, flag, k, w);
        }
        line(e, "if (%s[0] || %s[0] == 0) {", flag, acc);
        e->indent++;
    }
    inline_lanes(e, &p, kept, acc, NULL, id, store, !screen);
    for (int64_t w = ROW_LANES / 2; w >= 1; w /= 2)
        line(e, "for (int64_t %s = 0; %s < %" PRId64 "; %s++) %s[%s] = %s;", k, k, w, k, acc, k,
             fold(e, p.r, p.t, F("%s[%s]", acc, k), F("%s[%s + %" PRId64 "]", acc, k, w)));
    if (screen) close_loops(e, 1);
    const char *v = F("v%" PRId64, e->tmp++);
    line(e, "const %s %s = %s;", CT, v, fold(e, p.r, p.t, init, F("%s[0]", acc)));
    if (e->row_start) e->row_reduces_done++;
    return v;
}

/* The column helper: acc[k] for the nc outputs of a chunk (nc <= lanes * group) gets the
 * pairwise sum of reduced elements [first, first + n) of each, the same tree per output
 * (the interpreter's lanes_pairwise). The chunk's kept indices are o[] and its first
 * output cb along the last dimension. */
static const char *col_sum_helper(em *e, const rplan *p, int64_t idx) {
    const char *fn = F("%s_csum%" PRId64, e->name, idx);
    const char *CT = cpu_emit_ctype(p->t);
    int64_t CB = p->lanes * p->group, orank = p->reduce->shape.rank;
    cxla_strbuf body;
    cxla_strbuf_init(&body);
    scope sc = scope_enter(e, &body);
    line(e, "static void %s(%s) {", fn,
         helper_params(e, F("const int64_t *o, int64_t cb, int64_t nc, %s *restrict acc, "
                            "int64_t first, int64_t n",
                            CT)));
    e->indent++;
    void_inputs(e);
    line(e, "(void)o;");
    line(e, "if (n > 16) {");
    e->indent++;
    line(e, "const int64_t half = n / 2;");
    line(e, "%s right[%" PRId64 "];", CT, CB);
    line(e, "%s(%s);", fn, helper_args(e, "o, cb, nc, acc, first, half"));
    line(e, "%s(%s);", fn, helper_args(e, "o, cb, nc, right, first + half, n - half"));
    line(e, "for (int64_t k = 0; k < nc; k++) acc[k] = acc[k] + right[k];");
    line(e, "return;");
    e->indent--;
    line(e, "}");
    const char *kept[CXLA_MAX_RANK];
    for (int64_t k = 0; k + 1 < orank; k++) kept[k] = F("o[%" PRId64 "]", k);
    kept[orank - 1] = "(cb + k)";
    /* COL_ROWS rows per pass over the lanes: each lane still adds its rows one by one in
     * order, acc = ((x_r + x_r+1) + x_r+2) + ... or ((acc + x_r) + x_r+1) + ..., but a pass
     * loads and stores the accumulators once for COL_ROWS rows. The first pass starts
     * them (one row when there are fewer), then the rest, then the rows left one by one. */
    line(e, "int64_t r = first + 1;");
    for (int part = 0; part < 4; part++) {
        int64_t rows = part == 0 || part == 2 ? COL_ROWS : 1;
        const char *base = part < 2 ? "first" : "r";
        if (part == 0) {
            line(e, "if (n >= %d) {", COL_ROWS);
            e->indent++;
            line(e, "r = first + %d;", COL_ROWS);
        } else if (part == 1) {
            line(e, "} else {");
            e->indent++;
        } else if (part == 2) {
            line(e, "for (; r + %d < first + n; r += %d) {", COL_ROWS - 1, COL_ROWS);
            e->indent++;
        } else {
            line(e, "for (; r < first + n; r++) {");
            e->indent++;
        }
        const char *red[COL_ROWS][CXLA_MAX_RANK];
        for (int64_t q = 0; q < rows; q++) {
            ix rx;
            int64_t rdims[CXLA_MAX_RANK];
            const char *rq = q == 0 ? base : F("(%s + %" PRId64 ")", base, q);
            reduced_indices(e, p, rq, red[q], &rx, rdims);
            /* The reduced indices do not change across lanes: computed before the lane
             * loop. */
            for (int64_t j = 0; j < rx.rank; j++) {
                if (strcmp(red[q][j], base) == 0 || strcmp(red[q][j], "0") == 0) continue;
                const char *rv = F("r%d_%" PRId64 "_%" PRId64, part, q, j);
                line(e, "const int64_t %s = %s;", rv, red[q][j]);
                line(e, "(void)%s; /* unread when the value does not depend on it */", rv);
                red[q][j] = rv;
            }
        }
        line(e, "for (int64_t k = 0; k < nc; k++) {");
        e->indent++;
        const char *sum = part < 2 ? NULL : "acc[k]";
        for (int64_t q = 0; q < rows; q++) {
            ix y = reduce_operand_ix(p, kept, red[q]);
            const char *v = cpu_nest_value(e, p->src, &y);
            sum = sum ? F("(%s + %s)", sum, v) : v;
        }
        line(e, "acc[k] = %s;", sum);
        e->ncse = 0;
        if (part == 0) { /* the lanes' loop; the else closes the if */
            e->indent--;
            line(e, "}");
            e->indent--;
        } else {
            close_loops(e, 2);
        }
    }
    e->indent--;
    line(e, "}");
    scope_leave(e, sc, &body);
    return fn;
}

/* The loops of one reduce writing output o|idx|. */
static void emit_reduce(em *e, const rplan *p, int64_t idx) {
    const cxla_instr *reduce = p->reduce;
    cxla_type t = p->t;
    const char *CT = cpu_emit_ctype(t);
    const cxla_shape *os = &reduce->shape;
    int64_t orank = os->rank, W = p->lanes, CB = p->lanes * p->group;
    const char *helper = NULL, *group_helper = NULL;
    int64_t rows = p->row_lanes ? row_group(p) : 1;
    if (p->pairwise) {
        helper = W > 1 ? col_sum_helper(e, p, idx) : row_sum_helper(e, p, idx, p->count);
    } else if (p->row_lanes) {
        helper = row_lanes_helper(e, p, idx, 1);
        if (rows > 1) group_helper = row_lanes_helper(e, p, idx, rows);
    }
    if (e->fused) cpu_nest_comment(e, reduce);
    ix s = ix_new(0, NULL);
    const char *init = F("init%" PRId64, idx);
    line(e, "const %s %s = %s;", CT, init, cpu_nest_value(e, reduce->operands[1], &s));
    int64_t mark = e->ncse;
    if (W > 1) {
        /* Blocks of W contiguous outputs along the last dimension, p->group of them side by
         * side in a chunk (COL_CHUNK_BYTES). */
        const char *kept[CXLA_MAX_RANK];
        int opened = 0;
        for (int64_t k = 0; k + 1 < orank; k++) {
            const char *i = F("i%" PRId64 "_%" PRId64, idx, k);
            if (k == 0)
                line(e, "for (int64_t %s = %s; %s < %s; %s++) {", i, lo_of(e), i,
                     hi_of(e, os->dims[0]), i);
            else
                line(e, "for (int64_t %s = 0; %s < %" PRId64 "; %s++) {", i, i, os->dims[k], i);
            e->indent++;
            opened++;
            kept[k] = i;
        }
        int64_t blocks = os->dims[orank - 1] / W, G = p->group;
        const char *chi = orank == 1 ? hi_of(e, blocks) : F("%" PRId64, blocks);
        line(e, "for (int64_t c = %s; c < %s; c += %" PRId64 ") {", orank == 1 ? lo_of(e) : "0",
             chi, G);
        e->indent++;
        opened++;
        line(e, "const int64_t cb = c * %" PRId64 ";", W);
        line(e, "const int64_t nc = (%s - c < %" PRId64 " ? %s - c : %" PRId64 ") * %" PRId64 ";",
             chi, G, chi, G, W);
        line(e, "%s acc[%" PRId64 "];", CT, CB);
        ix ox = ix_new(orank, os->dims);
        for (int64_t k = 0; k + 1 < orank; k++) ox.d[k] = kept[k];
        ox.d[orank - 1] = "cb";
        const char *obase = ix_lin(e, &ox);
        if (p->pairwise) {
            cxla_strbuf list;
            cxla_strbuf_init(&list);
            for (int64_t k = 0; k + 1 < orank; k++)
                cxla_strbuf_printf(&list, "%s%s", k ? ", " : "", kept[k]);
            if (orank > 1)
                line(e, "const int64_t o[%" PRId64 "] = {%s};", orank - 1, list.data);
            else
                line(e, "const int64_t *o = 0;");
            cpu_emit_buf_free(&list);
            line(e, "%s(%s);", helper, helper_args(e, F("o, cb, nc, acc, 0, %" PRId64, p->count)));
            line(e, "for (int64_t k = 0; k < nc; k++) o%" PRId64 "[%s + k] = %s + acc[k];", idx,
                 obase, init);
        } else {
            line(e, "for (int64_t k = 0; k < nc; k++) acc[k] = %s;", init);
            const char *red[CXLA_MAX_RANK];
            int64_t nr = 0;
            int ropen = 0;
            for (int64_t j = 0; j < p->src->shape.rank; j++) {
                if (!p->reduced[j]) continue;
                const char *rv = F("r%" PRId64 "_%" PRId64, idx, nr);
                red[nr++] = rv;
                line(e, "for (int64_t %s = 0; %s < %" PRId64 "; %s++) {", rv, rv,
                     p->src->shape.dims[j], rv);
                e->indent++;
                ropen++;
            }
            line(e, "for (int64_t k = 0; k < nc; k++) {");
            e->indent++;
            const char *kk[CXLA_MAX_RANK];
            for (int64_t k = 0; k + 1 < orank; k++) kk[k] = kept[k];
            kk[orank - 1] = "(cb + k)";
            ix y = reduce_operand_ix(p, kk, red);
            const char *x = cpu_nest_value(e, p->src, &y);
            line(e, "acc[k] = %s;", fold(e, p->r, t, "acc[k]", x));
            close_loops(e, 1 + ropen);
            line(e, "for (int64_t k = 0; k < nc; k++) o%" PRId64 "[%s + k] = acc[k];", idx, obase);
        }
        close_loops(e, opened);
    } else {
        /* One output element at a time (fast-order rows: |rows| at a time, then the rest
         * one at a time). */
        int64_t n = elements_of(os);
        const char *o_lo = lo_of(e);
        if (group_helper) {
            line(e, "int64_t og = %s;", lo_of(e));
            line(e, "#if %s", ROW_GROUP_TARGET);
            line(e, "for (; og + %" PRId64 " <= %s; og += %" PRId64 ") {", rows, hi_of(e, n), rows);
            e->indent++;
            line(e, "%s res[%" PRId64 "];", CT, rows);
            line(e, "%s(%s);", group_helper, helper_args(e, "og, res"));
            line(e, "for (int64_t j = 0; j < %" PRId64 "; j++) o%" PRId64 "[og + j] = %s;", rows,
                 idx, fold(e, p->r, t, init, "res[j]"));
            close_loops(e, 1);
            line(e, "#endif");
            o_lo = "og";
        }
        line(e, "for (int64_t o = %s; o < %s; o++) {", o_lo, hi_of(e, n));
        e->indent++;
        if (p->pairwise) {
            line(e, "o%" PRId64 "[o] = %s + %s(%s);", idx, init, helper, helper_args(e, "o, 0"));
        } else if (p->row_lanes) {
            line(e, "o%" PRId64 "[o] = %s;", idx,
                 fold(e, p->r, t, init, F("%s(%s)", helper, helper_args(e, "o"))));
        } else {
            line(e, "%s acc = %s;", CT, init);
            /* The reduced dimensions as nested loops, in order. */
            const cxla_shape *ss = &p->src->shape;
            ix ox = ix_new(orank, os->dims);
            ox.lin = "o";
            /* Set (gcc -O2 cannot tell that red[] is read only where it was written). */
            const char *kept[CXLA_MAX_RANK], *red[CXLA_MAX_RANK] = {NULL};
            for (int64_t k = 0; k < orank; k++) {
                kept[k] = ix_dim(e, &ox, k);
                if (strcmp(kept[k], "o") && strcmp(kept[k], "0")) {
                    const char *kv = F("o%" PRId64 "_%" PRId64, idx, k);
                    line(e, "const int64_t %s = %s;", kv, kept[k]);
                    kept[k] = kv;
                }
            }
            int64_t nr = 0;
            int ropen = 0;
            for (int64_t j = 0; j < ss->rank; j++) {
                if (!p->reduced[j]) continue;
                const char *rv = F("r%" PRId64 "_%" PRId64, idx, nr);
                red[nr++] = rv;
                line(e, "for (int64_t %s = 0; %s < %" PRId64 "; %s++) {", rv, rv, ss->dims[j], rv);
                e->indent++;
                ropen++;
            }
            ix y = reduce_operand_ix(p, kept, red);
            const char *x = cpu_nest_value(e, p->src, &y);
            line(e, "acc = %s;", fold(e, p->r, t, "acc", x));
            close_loops(e, ropen);
            line(e, "o%" PRId64 "[o] = acc;", idx);
        }
        close_loops(e, 1);
    }
    e->ncse = mark;
}

/* ---- for emit.c (emit_nest.h) -------------------------------------------------------- */

const char *cpu_nest_inline_reduce(em *e, const cxla_instr *instr, ix *x) {
    return inline_reduce(e, instr, x);
}
bool cpu_nest_reduce_in_loop(const cxla_instr *reduce) {
    return reduce_in_loop(reduce);
}
int64_t cpu_nest_reduce_range(const cxla_instr *reduce) {
    return reduce_plan(reduce).range;
}
void cpu_nest_reduce(em *e, const cxla_instr *reduce, int64_t idx) {
    rplan p = reduce_plan(reduce);
    emit_reduce(e, &p, idx);
}
