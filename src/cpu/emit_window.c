/* The emitter's window kernels: reduce-window and select-and-scatter as generated C (their
 * reducers, selectors and scatter computations written inline by emit_scalar.c).
 *
 * Both kernels follow the interpreter (src/interp/interp_window.c) step for step, so their
 * results are its results bit for bit: a window dimension places window element w of
 * output position o at o * stride + w * window_dilation - pad_low of the base dilated by
 * base_dilation; positions in the padding or in a hole take the init value.
 *
 * reduce-window with maximum or minimum of one input over at most two adjacent dimensions
 * (pooling): the separable kernel of emit_pool (see pool_plan below), the interpreter's
 * value by associativity. Otherwise (the row kernel) each output element folds its window
 * in row-major order into the init value, acc = f(acc, x), with f the reducer computation
 * written inline; when the interpreter sums pairwise (one f32/f64 input and a reducer it
 * recognizes as add), the kernel sums the same tree (leaves of up to 16 window elements summed in
 * order, halves added) and adds the init value last, as interp_reduce_space does. The loops: the
 * outer loop runs over "rows" (every output dimension but the last, and blocks of up to LANES
 * outputs along the last), one accumulator per output of the block; then the window
 * elements; then the block's outputs innermost, contiguous in the result, where the lanes
 * whose input position is inside the operand run without a test (a strided, vectorizable
 * load) and those in the padding fold the init value.
 *
 * select-and-scatter: the result starts as the init value; for each source element, in
 * row-major order, the window's positions inside the operand are scanned in row-major
 * order, the first selected and each later one replacing the selection when
 * select(selected, current) is false; the source element is then combined into the
 * result at the selection with the scatter computation. Windows overlap, so the kernel is
 * one unit of work (range 1), except where the window moves over at most two adjacent
 * dimensions: the other dimensions before them are then independent units (emit_ss_rows). */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "cpu/emit_internal.h"
#include "interp/interp.h"

enum { LANES = 256, PAIRWISE_LEAF = 16 };

#define F(...) cpu_emit_fmt(w->arena, __VA_ARGS__)

/* ---- the writer ---------------------------------------------------------------------- */

typedef struct writer {
    cxla_arena *arena;
    cxla_strbuf *b;
    int indent;
    int64_t tmp;
} writer;

static void ln(writer *w, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void ln(writer *w, const char *format, ...) {
    for (int i = 0; i < w->indent; i++) cxla_strbuf_puts(w->b, "    ");
    va_list args;
    va_start(args, format);
    cxla_strbuf_vprintf(w->b, format, args);
    va_end(args);
    cxla_strbuf_putc(w->b, '\n');
}

static void open_(writer *w, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void open_(writer *w, const char *format, ...) {
    for (int i = 0; i < w->indent; i++) cxla_strbuf_puts(w->b, "    ");
    va_list args;
    va_start(args, format);
    cxla_strbuf_vprintf(w->b, format, args);
    va_end(args);
    cxla_strbuf_puts(w->b, " {\n");
    w->indent++;
}

static void close_(writer *w) {
    w->indent--;
    ln(w, "}");
}

/* Writes |count| scalar results into |dst| after computing all of them (a result may read
 * what another overwrites). */
static void call_into(writer *w, const cxla_computation *c, const char *const *args,
                      const char *const *dst, int64_t count) {
    const char *res[CPU_EMIT_MAX_REDUCER_RESULTS];
    cpu_emit_scalar(w->arena, w->b, w->indent, &w->tmp, c, args, res);
    for (int64_t i = 0; i < count; i++) ln(w, "%s = %s;", dst[i], res[i]);
}

/* ---- kernel pieces ----------------------------------------------------------------- */

/* The result shapes of |instr|: its shape, or the elements of its flat tuple. */
static int64_t result_shapes(const cxla_instr *instr, const cxla_shape **out, int64_t max) {
    if (instr->shape.type != CXLA_TUPLE) {
        out[0] = &instr->shape;
        return 1;
    }
    int64_t n = instr->shape.tuple_count;
    if (n > max) return -1;
    for (int64_t i = 0; i < n; i++) out[i] = &instr->shape.elements[i];
    return n;
}

/* Put before a kernel's body function: gcc -O2's "very cheap" vectorizer cost model leaves
 * loops whose loads are strided groups (a window with a stride of 2 gathers elements 2k - 1,
 * 2k, 2k + 1) or whose counts are not a multiple of the vector length; the "dynamic" model
 * vectorizes them (10x on a 3x3 stride-2 max pool). Vectorizing keeps each element's order
 * of operations, and -ffp-contract=off still holds under the attribute. Off in
 * `cxla compile --target portable` output (CXLA_PORTABLE: no compiler extensions). */
static void vectorize_attr(cxla_strbuf *out) {
    cxla_strbuf_puts(out,
                     "#if defined(__GNUC__) && !defined(__clang__) && !defined(CXLA_PORTABLE)\n"
                     "__attribute__((optimize(\"vect-cost-model=dynamic\")))\n"
                     "#endif\n");
}

/* ---- window geometry ------------------------------------------------------------------ */

typedef struct geometry {
    int64_t rank; /* at least 1: rank 0 is one element of a window of one */
    int64_t in[CXLA_MAX_RANK], out[CXLA_MAX_RANK];
    int64_t size[CXLA_MAX_RANK], stride[CXLA_MAX_RANK], pad[CXLA_MAX_RANK];
    int64_t base_dil[CXLA_MAX_RANK], win_dil[CXLA_MAX_RANK];
    int64_t in_stride[CXLA_MAX_RANK]; /* row-major element strides of the operand */
    int64_t volume;
} geometry;

/* Reads the window of |instr| over an operand of |in_dims| with outputs |out_dims| (as the
 * interpreter's window_tables_init checks them); false when it does not fit. */
static bool geometry_of(const cxla_instr *instr, int64_t rank, const int64_t *in_dims,
                        const int64_t *out_dims, geometry *g) {
    memset(g, 0, sizeof *g);
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_WINDOW);
    if (rank == 0) {
        if (a && (a->kind != CXLA_ATTR_KIND_WINDOW || a->v.window.rank != 0)) return false;
        g->rank = 1;
        g->in[0] = g->out[0] = g->size[0] = g->stride[0] = 1;
        g->base_dil[0] = g->win_dil[0] = g->in_stride[0] = 1;
        g->volume = 1;
        return true;
    }
    if (!a || a->kind != CXLA_ATTR_KIND_WINDOW || a->v.window.rank != rank) return false;
    g->rank = rank;
    g->volume = 1;
    for (int64_t j = 0; j < rank; j++) {
        const cxla_window_dim *d = &a->v.window.dims[j];
        if (d->size < 1 || d->stride < 1 || d->lhs_dilation < 1 || d->rhs_dilation < 1)
            return false;
        /* Keep every position arithmetic well inside int64_t. */
        const int64_t big = (int64_t)1 << 40;
        if (d->size > big || d->stride > big || d->lhs_dilation > big || d->rhs_dilation > big ||
            d->pad_low > big || d->pad_low < -big || d->pad_high > big || d->pad_high < -big)
            return false;
        int64_t base = in_dims[j] == 0 ? 0 : (in_dims[j] - 1) * d->lhs_dilation + 1;
        int64_t padded = base + d->pad_low + d->pad_high;
        int64_t span = (d->size - 1) * d->rhs_dilation + 1;
        int64_t out = padded >= span ? (padded - span) / d->stride + 1 : 0;
        if (out != out_dims[j]) return false;
        g->in[j] = in_dims[j];
        g->out[j] = out;
        g->size[j] = d->size;
        g->stride[j] = d->stride;
        g->pad[j] = d->pad_low;
        g->base_dil[j] = d->lhs_dilation;
        g->win_dil[j] = d->rhs_dilation;
        g->volume *= d->size;
        if (g->volume > big) return false;
    }
    int64_t s = 1;
    for (int64_t j = rank - 1; j >= 0; j--) {
        g->in_stride[j] = s;
        s *= in_dims[j];
    }
    return true;
}

/* Emits, for window element index |r| (a C expression, row-major over the window) and the
 * outputs' indices (C variables "ix<j>", j < rank - 1), the variables ok (the position
 * is inside the operand in every dimension but the last), base (its element offset
 * there) and wl (the last dimension's window index). */
static void window_position(writer *w, const geometry *g, const char *r, bool last) {
    int64_t L = g->rank - 1;
    ln(w, "int ok = 1;");
    ln(w, "int64_t base = 0;");
    int64_t inner = 1;
    for (int64_t j = last ? L : L - 1; j >= 0; j--) {
        const char *wj = g->size[j] == 1 ? "0"
                         : inner == 1
                             ? F("(%s %% %" PRId64 ")", r, g->size[j])
                             : F("(%s / %" PRId64 " %% %" PRId64 ")", r, inner, g->size[j]);
        if (j == 0 && g->size[j] > 1) wj = inner == 1 ? r : F("(%s / %" PRId64 ")", r, inner);
        inner *= g->size[j];
        if (j == L) {
            ln(w, "const int64_t wl = %s;", wj);
            continue;
        }
        ln(w,
           "const int64_t ps%" PRId64 " = ix%" PRId64 " * %" PRId64 " + %s * %" PRId64 " - %" PRId64
           ";",
           j, j, g->stride[j], wj, g->win_dil[j], g->pad[j]);
        if (g->base_dil[j] == 1)
            ln(w, "ok = ok && ps%" PRId64 " >= 0 && ps%" PRId64 " < %" PRId64 ";", j, j, g->in[j]);
        else
            ln(w,
               "ok = ok && ps%" PRId64 " >= 0 && ps%" PRId64 " %% %" PRId64 " == 0 && ps%" PRId64
               " / %" PRId64 " < %" PRId64 ";",
               j, j, g->base_dil[j], j, g->base_dil[j], g->in[j]);
        ln(w, "base += (ps%" PRId64 " / %" PRId64 ") * %" PRId64 ";", j, g->base_dil[j],
           g->in_stride[j]);
    }
    if (last) ln(w, "(void)wl;");
}

/* A lane step: statements that fold element |x| (a C expression per operand) into the
 * accumulators at lane k. */
/* ---- reduce-window ------------------------------------------------------------------- */

typedef struct rw_plan {
    const cxla_instr *instr;
    const cxla_computation *comp;
    int64_t n; /* inputs (and init values, and results) */
    geometry g;
    cxla_type in_t[CPU_EMIT_MAX_REDUCER_RESULTS], res_t[CPU_EMIT_MAX_REDUCER_RESULTS];
    bool pairwise; /* the interpreter's pairwise f32/f64 sum (windows of more than 16) */
    bool leaf_sum; /* the same for windows of up to 16: a sum from -0, the init added last */
    interp_reducer minmax; /* MAX or MIN of one f32/f64 input: a branchless helper */
    const char *minmax_fn;
    const cpu_emit_reader *reader; /* NULL: the inputs are the kernel's p0.. */
} rw_plan;

/* Input |i| of the reduce-window (i >= n: init value i - n) at element offset |at|: a load,
 * or what the reader writes (statements at the writer's place) for a fused input. */
static const char *rd(writer *w, const rw_plan *p, int64_t i, const char *at) {
    if (!p->reader) return F("p%" PRId64 "[%s]", i, at);
    /* The reader divides the offset by the producer's strides: one term, parenthesized
     * ("at + k" would give at + k / 64 % 114). */
    return p->reader->read(p->reader->ctx, w->b, w->indent, i, F("(%s)", at));
}

/* Whether the reducer never reads input |i| (its generated variables then need a use). */
static bool ignored(const rw_plan *p, int64_t i) {
    const cxla_instr *param = p->comp->params[p->n + i];
    return param->user_count == 0 && p->comp->root != param;
}

/* Statements giving the inputs at |at| in x[] (x[i] = |cond| ? input i : init[i] when
 * |cond| is not NULL). */
static void rd_all(writer *w, const rw_plan *p, const char *at, const char *cond,
                   const char *const *init, const char **x) {
    for (int64_t i = 0; i < p->n; i++) {
        if (!cond) {
            x[i] = rd(w, p, i, at);
            if (p->reader && ignored(p, i)) ln(w, "(void)%s; /* the reducer ignores it */", x[i]);
            continue;
        }
        const char *v = F("xv%" PRId64 "_%" PRId64, i, w->tmp++);
        ln(w, "%s %s = %s;", cpu_emit_ctype(p->in_t[i]), v, init[i]);
        open_(w, "if (%s)", cond);
        ln(w, "%s = %s;", v, rd(w, p, i, at));
        close_(w);
        if (ignored(p, i)) ln(w, "(void)%s; /* the reducer ignores it */", v);
        x[i] = v;
    }
}

typedef void (*lane_step)(writer *w, const void *ctx, const char *const *x);

/* The lane loops of one window element (after window_position): lanes [0, cnt) of the
 * block at kb, each folding its input or, outside the operand, the init values |init|. */
static void lane_loops(writer *w, const geometry *g, const rw_plan *p, lane_step step,
                       const void *ctx, const char *const *init) {
    int64_t L = g->rank - 1;
    const char *x[CPU_EMIT_MAX_REDUCER_RESULTS];
    /* Outside in another dimension: every lane folds the init values. */
    open_(w, "if (!ok)");
    open_(w, "for (int64_t k = 0; k < cnt; k++)");
    step(w, ctx, init);
    close_(w);
    close_(w);
    open_(w, "else");
    const char *pos = F("((kb + k) * %" PRId64 " + wl * %" PRId64 " - %" PRId64 ")", g->stride[L],
                        g->win_dil[L], g->pad[L]);
    if (g->base_dil[L] == 1) {
        /* Lanes [lo, hi) read inside the operand; the others fold the init values. */
        ln(w, "const int64_t num = %" PRId64 " - wl * %" PRId64 ";", g->pad[L], g->win_dil[L]);
        ln(w, "int64_t lo = (num > 0 ? (num + %" PRId64 ") / %" PRId64 " : 0) - kb;",
           g->stride[L] - 1, g->stride[L]);
        ln(w, "const int64_t lim = %" PRId64 " + num;", g->in[L] - 1);
        ln(w, "int64_t hi = (lim >= 0 ? lim / %" PRId64 " + 1 : 0) - kb;", g->stride[L]);
        ln(w, "if (lo < 0) lo = 0;");
        ln(w, "if (lo > cnt) lo = cnt;");
        ln(w, "if (hi > cnt) hi = cnt;");
        ln(w, "if (hi < lo) hi = lo;");
        open_(w, "for (int64_t k = 0; k < lo; k++)");
        step(w, ctx, init);
        close_(w);
        ln(w, "const int64_t at = base + kb * %" PRId64 " - num;", g->stride[L]);
        ln(w, "(void)at; /* unread when the reducer ignores its input */");
        open_(w, "for (int64_t k = lo; k < hi; k++)");
        rd_all(w, p, g->stride[L] == 1 ? "at + k" : F("at + k * %" PRId64, g->stride[L]), NULL,
               init, x);
        step(w, ctx, x);
        close_(w);
        open_(w, "for (int64_t k = hi; k < cnt; k++)");
        step(w, ctx, init);
        close_(w);
    } else {
        open_(w, "for (int64_t k = 0; k < cnt; k++)");
        ln(w, "const int64_t pl = %s;", pos);
        ln(w, "const int in = pl >= 0 && pl %% %" PRId64 " == 0 && pl / %" PRId64 " < %" PRId64 ";",
           g->base_dil[L], g->base_dil[L], g->in[L]);
        ln(w, "const int64_t at = in ? base + pl / %" PRId64 " : 0;", g->base_dil[L]);
        ln(w, "(void)at; /* unread when the reducer ignores its input */");
        rd_all(w, p, "at", "in", init, x);
        step(w, ctx, x);
        close_(w);
    }
    close_(w);
}

static bool rw_plan_of(const cxla_instr *instr, rw_plan *p) {
    memset(p, 0, sizeof *p);
    p->instr = instr;
    int64_t count = instr->operand_count;
    if (count < 2 || count % 2 || count / 2 > CPU_EMIT_MAX_REDUCER_RESULTS) return false;
    int64_t n = p->n = count / 2;
    const cxla_shape *res[CPU_EMIT_MAX_REDUCER_RESULTS];
    if (result_shapes(instr, res, CPU_EMIT_MAX_REDUCER_RESULTS) != n) return false;
    const cxla_shape *xs = &instr->operands[0]->shape;
    for (int64_t i = 0; i < n; i++) {
        const cxla_shape *s = &instr->operands[i]->shape, *is = &instr->operands[n + i]->shape;
        /* Complex and sub-byte values too: the interpreter folds those in the window's
         * row-major order from the init value (no pairwise tree), as the fold here does. */
        if (!cpu_emit_held_array(s) || !cpu_emit_held_array(is) || is->rank != 0 ||
            !cpu_emit_held_array(res[i]) || s->rank != xs->rank || res[i]->rank != xs->rank ||
            res[i]->type != is->type)
            return false;
        for (int64_t j = 0; j < xs->rank; j++)
            if (s->dims[j] != xs->dims[j] || res[i]->dims[j] != res[0]->dims[j]) return false;
        p->in_t[i] = s->type;
        p->res_t[i] = is->type;
    }
    if (!geometry_of(instr, xs->rank, xs->dims, res[0]->dims, &p->g)) return false;
    p->comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!cpu_emit_scalar_ok(p->comp, 2 * n, n)) return false;
    for (int64_t i = 0; i < n; i++)
        if (p->comp->params[i]->shape.type != p->res_t[i] ||
            p->comp->params[n + i]->shape.type != p->in_t[i])
            return false;
    interp_reducer kind = n == 1 ? interp_match_reducer(p->comp) : INTERP_REDUCER_NONE;
    bool flt = p->in_t[0] == p->res_t[0] && (p->in_t[0] == CXLA_F32 || p->in_t[0] == CXLA_F64);
    p->pairwise = kind == INTERP_REDUCER_ADD && flt;
    /* A window of up to 16 elements is one leaf of the pairwise tree: summed in order from
     * its first element, which is the fold of a sum started at -0 (-0 + x is x). */
    if (p->pairwise && p->g.volume <= PAIRWISE_LEAF) {
        p->pairwise = false;
        p->leaf_sum = true;
    }
    if ((kind == INTERP_REDUCER_MAX || kind == INTERP_REDUCER_MIN) && flt) p->minmax = kind;
    return true;
}

bool cpu_emit_reduce_window_ok(const cxla_instr *instr) {
    rw_plan p;
    return instr->opcode == CXLA_OP_REDUCE_WINDOW && rw_plan_of(instr, &p);
}

/* acc_i[k] = comp(acc_0[k] ..., x_0 ...). */
static void fold_step(writer *w, const void *ctx, const char *const *x) {
    const rw_plan *p = ctx;
    if (p->minmax_fn) {
        ln(w, "a0[k] = %s(a0[k], %s);", p->minmax_fn, x[0]);
        return;
    }
    if (p->leaf_sum) {
        ln(w, "a0[k] = a0[k] + %s;", x[0]);
        return;
    }
    const char *args[2 * CPU_EMIT_MAX_REDUCER_RESULTS] = {0},
                         *dst[CPU_EMIT_MAX_REDUCER_RESULTS] = {0};
    for (int64_t i = 0; i < p->n; i++) {
        args[i] = dst[i] = F("a%" PRId64 "[k]", i);
        args[p->n + i] = x[i];
    }
    call_into(w, p->comp, args, dst, p->n);
}

static void sum_first(writer *w, const void *ctx, const char *const *x) {
    (void)ctx;
    ln(w, "a0[k] = %s;", x[0]);
}

static void sum_next(writer *w, const void *ctx, const char *const *x) {
    (void)ctx;
    ln(w, "a0[k] += %s;", x[0]);
}

/* The block's indices: ix<j> for every output dimension but the last, kb and cnt. */
static void block_indices(writer *w, const geometry *g, int64_t blocks, int64_t lanes) {
    int64_t L = g->rank - 1;
    ln(w, "const int64_t kb = (q %% %" PRId64 ") * %" PRId64 ";", blocks, lanes);
    ln(w, "const int64_t cnt = %" PRId64 " - kb < %" PRId64 " ? %" PRId64 " - kb : %" PRId64 ";",
       g->out[L], lanes, g->out[L], lanes);
    int64_t s = blocks;
    for (int64_t j = L - 1; j >= 0; j--) {
        ln(w, "const int64_t ix%" PRId64 " = q / %" PRId64 " %% %" PRId64 ";", j, s, g->out[j]);
        s *= g->out[j];
    }
}

/* The fold of the non-pairwise reduce-window, row by row of the window (every window
 * dimension but the last), in one of three forms:
 *  - direct: every lane's input position is inside the operand for every window element
 *    of the last dimension (no padding there, full blocks): the lanes read the operand;
 *  - padded: the block's span of the operand row (with stride and window dilation) is
 *    copied once per window row into a buffer holding the init values where the span
 *    leaves the operand, and the lanes (rounded up to 16; the extra ones are dropped)
 *    read the buffer;
 *  - lane_loops (a span too wide to copy): each window element splits the lanes into
 *    those inside and those outside.
 * The lane loops of the first two have constant counts, which gcc -O2 vectorizes. The
 * order of the fold per output element is the window's row-major order in all three. */
enum { MAX_SPAN = 4096 };
typedef enum rows_form { FORM_DIRECT, FORM_PADDED, FORM_LANES } rows_form;

static rows_form rows_form_of(const rw_plan *p, int64_t lanes, int64_t *acc_lanes, int64_t *span) {
    const geometry *g = &p->g;
    int64_t L = g->rank - 1, S = g->size[L], T = g->stride[L], D = g->win_dil[L];
    *acc_lanes = lanes;
    *span = 0;
    if (g->base_dil[L] == 1 && g->pad[L] <= 0 && g->out[L] % lanes == 0 &&
        (g->out[L] - 1) * T + (S - 1) * D - g->pad[L] <= g->in[L] - 1)
        return FORM_DIRECT;
    int64_t lc = (lanes + 15) / 16 * 16;
    int64_t w = (lc - 1) * T + (S - 1) * D + 1;
    if (w > MAX_SPAN) return FORM_LANES;
    *acc_lanes = lc;
    *span = w;
    return FORM_PADDED;
}

static int64_t rows_lanes(const rw_plan *p, int64_t lanes) {
    int64_t acc, span;
    if (p->pairwise) return lanes;
    rows_form_of(p, lanes, &acc, &span);
    return acc;
}

/* for (k = 0; k < count; k++) step(x), as a part of a multiple of 16 and a remainder. */
static void const_lanes(writer *w, const rw_plan *p, int64_t count, const char *at,
                        const char *const *x0) {
    int64_t main_count = count >= 16 ? count - count % 16 : count;
    for (int part = 0; part < 2; part++) {
        int64_t from = part ? main_count : 0, to = part ? count : main_count;
        if (from == to) continue;
        open_(w, "for (int64_t k = %" PRId64 "; k < %" PRId64 "; k++)", from, to);
        const char *x[CPU_EMIT_MAX_REDUCER_RESULTS];
        if (at) rd_all(w, p, at, NULL, x0, x);
        fold_step(w, p, at ? x : x0);
        close_(w);
    }
}

static void rows_body(writer *w, const rw_plan *p, int64_t lanes, int64_t acc_lanes,
                      const char *const *init) {
    const geometry *g = &p->g;
    int64_t n = p->n, L = g->rank - 1, S = g->size[L], T = g->stride[L], D = g->win_dil[L];
    int64_t acc, span;
    rows_form form = rows_form_of(p, lanes, &acc, &span);
    const char *neg0 = p->in_t[0] == CXLA_F64 ? "cxla_f64_from_bits(0x8000000000000000ull)"
                                              : "cxla_f32_from_bits(0x80000000u)";
    for (int64_t i = 0; i < n; i++)
        ln(w, "for (int64_t k = 0; k < %" PRId64 "; k++) a%" PRId64 "[k] = %s;", acc_lanes, i,
           p->leaf_sum ? neg0 : init[i]);
    if (form == FORM_LANES) {
        open_(w, "for (int64_t r = 0; r < %" PRId64 "; r++)", g->volume);
        window_position(w, g, "r", true);
        lane_loops(w, g, p, fold_step, p, init);
        close_(w);
        return;
    }
    open_(w, "for (int64_t r = 0; r < %" PRId64 "; r++)", g->volume / S);
    window_position(w, g, "r", false);
    open_(w, "if (!ok)");
    /* Outside in another dimension: the whole window row folds the init values. */
    open_(w, "for (int64_t wl = 0; wl < %" PRId64 "; wl++)", S);
    const_lanes(w, p, acc_lanes, NULL, init);
    close_(w);
    ln(w, "continue;");
    close_(w);
    if (form == FORM_DIRECT) {
        open_(w, "for (int64_t wl = 0; wl < %" PRId64 "; wl++)", S);
        ln(w, "const int64_t at = base + kb * %" PRId64 " + wl * %" PRId64 " - %" PRId64 ";", T, D,
           g->pad[L]);
        ln(w, "(void)at; /* unread when the reducer ignores its input */");
        const_lanes(w, p, acc_lanes, T == 1 ? "at + k" : F("at + k * %" PRId64, T), init);
        close_(w);
        close_(w);
        return;
    }
    /* The span of the row: dilated positions pos0 .. pos0 + span - 1. */
    ln(w, "const int64_t pos0 = kb * %" PRId64 " - %" PRId64 ";", T, g->pad[L]);
    for (int64_t i = 0; i < n; i++)
        ln(w, "%s x%" PRId64 "[%" PRId64 "];", cpu_emit_ctype(p->in_t[i]), i, span);
    for (int64_t i = 0; i < n; i++)
        ln(w, "(void)x%" PRId64 "; /* unread when the reducer ignores its input */", i);
    if (g->base_dil[L] == 1) {
        ln(w, "int64_t jlo = -pos0, jhi = %" PRId64 " - pos0;", g->in[L]);
        ln(w, "if (jlo < 0) jlo = 0;");
        ln(w, "if (jlo > %" PRId64 ") jlo = %" PRId64 ";", span, span);
        ln(w, "if (jhi > %" PRId64 ") jhi = %" PRId64 ";", span, span);
        ln(w, "if (jhi < jlo) jhi = jlo;");
        for (int64_t i = 0; i < n; i++)
            ln(w, "for (int64_t j = 0; j < jlo; j++) x%" PRId64 "[j] = %s;", i, init[i]);
        if (!p->reader) {
            /* The operand's part of the span: one copy (the type stored as it is held). */
            for (int64_t i = 0; i < n; i++)
                ln(w,
                   "memcpy(x%" PRId64 " + jlo, p%" PRId64 " + base + pos0 + jlo, (size_t)(jhi - "
                   "jlo) * sizeof x%" PRId64 "[0]);",
                   i, i, i);
        } else {
            open_(w, "for (int64_t j = jlo; j < jhi; j++)");
            const char *v[CPU_EMIT_MAX_REDUCER_RESULTS];
            rd_all(w, p, "base + pos0 + j", NULL, init, v);
            for (int64_t i = 0; i < n; i++) ln(w, "x%" PRId64 "[j] = %s;", i, v[i]);
            close_(w);
        }
        for (int64_t i = 0; i < n; i++)
            ln(w, "for (int64_t j = jhi; j < %" PRId64 "; j++) x%" PRId64 "[j] = %s;", span, i,
               init[i]);
    } else {
        int64_t B = g->base_dil[L];
        open_(w, "for (int64_t j = 0; j < %" PRId64 "; j++)", span);
        ln(w, "const int64_t pl = pos0 + j;");
        ln(w, "const int in = pl >= 0 && pl %% %" PRId64 " == 0 && pl / %" PRId64 " < %" PRId64 ";",
           B, B, g->in[L]);
        const char *v[CPU_EMIT_MAX_REDUCER_RESULTS];
        rd_all(w, p, F("base + pl / %" PRId64, B), "in", init, v);
        for (int64_t i = 0; i < n; i++) ln(w, "x%" PRId64 "[j] = %s;", i, v[i]);
        close_(w);
    }
    open_(w, "for (int64_t wl = 0; wl < %" PRId64 "; wl++)", S);
    ln(w, "const int64_t off = wl * %" PRId64 ";", D);
    ln(w, "(void)off;");
    const char *x[CPU_EMIT_MAX_REDUCER_RESULTS];
    for (int64_t i = 0; i < n; i++)
        x[i] =
            T == 1 ? F("x%" PRId64 "[k + off]", i) : F("x%" PRId64 "[k * %" PRId64 " + off]", i, T);
    const_lanes(w, p, acc_lanes, NULL, x);
    close_(w);
    close_(w);
}

/* ---- separable maximum and minimum ------------------------------------------------------ */

/* A reduce-window with maximum or minimum of one input (f32, f64, f16, bf16, an integer),
 * no base dilation, whose window moves over at most two adjacent dimensions H and W (the
 * others: size 1, stride 1, no padding): the array is seen as [outer, H, W, inner]. The
 * kernel is separable: pass 1 folds each input row's windows along W into a buffer row
 * (hb, OW x inner), pass 2 folds the buffer rows of each output row's window along H into
 * the output, the inner loops contiguous over OW x inner. Padding is not folded: the
 * result is f(init, fold of the window's positions inside the operand), which is the
 * interpreter's fold: maximum and minimum are associative (the first NaN in row-major
 * order comes out, as in the interpreter's fold, because pass 1 keeps each row's first NaN
 * and pass 2 takes the rows in order), commutative on non-NaN values (-0 < +0 is a total
 * order), and folding the init value again changes nothing. An empty buffer entry (a
 * window row made only of padding) holds the reducer's identity (-inf, +inf, the type's
 * limits). f32 and f64 rows with neither NaN nor -0 (checked per row on the bits, with
 * integer min/max that vectorize) fold with a plain compare-and-select; others with the
 * exact NaN-propagating form. f16 and bf16 are decoded (then checked the same way) and fold
 * in f32 (exact: each value is an input's, and the interpreter's rounding after every step
 * leaves it unchanged), rounded at the end. The unit of work is a block of output rows of
 * one outer index. */
enum { POOL_ROW_MAX = 8192, POOL_BUF_BYTES = 128 << 10 };
/* Pass 2 of a block works on the buffer in cache and reads no memory, so the hardware
 * prefetcher, which follows misses, stops with it; pass 2 asks for the next block's input
 * rows instead (as emit_rows.c does for row fusion), at most this many lines per output row.
 * Max pool 3x3/2 over [8,64,112,112] f32, one thread's CPU time on the loaded 2-core EPYC:
 * 0.79-0.92x of the kernel without it, level with a plain read-4-write-1 loop over the
 * same bytes (docs/performance.md). The prefetch changes no value. */
enum { POOL_AHEAD_LINES = 64 };

typedef struct pool_plan {
    int64_t outer, inner, H, W, OH, OW;
    int64_t kh, sh, dh, ph, kw, sw, dw, pw;
    int64_t rb, blocks, nr; /* output rows per unit, units per outer index, buffer rows */
    cxla_type t;
    bool mx, check, small;
} pool_plan;

static bool window_trivial(const geometry *g, int64_t j) {
    return g->size[j] == 1 && g->stride[j] == 1 && g->pad[j] == 0 && g->out[j] == g->in[j];
}

/* The [outer, H, W, inner] view of a window (pool_plan's first fields): false when the
 * window has base dilation, moves over dimensions that are not two adjacent ones, is empty
 * or has rows too long for the kernels' stack buffers. */
static bool pool_dims(const geometry *g, pool_plan *q) {
    memset(q, 0, sizeof *q);
    int64_t R = g->rank, wd = -1;
    for (int64_t j = 0; j < R; j++) {
        if (g->base_dil[j] != 1) return false;
        if (!window_trivial(g, j)) wd = j;
    }
    if (wd < 0) wd = R - 1;
    int64_t hd = wd - 1;
    for (int64_t j = 0; j < R; j++)
        if (j != wd && j != hd && !window_trivial(g, j)) return false;
    q->outer = q->inner = 1;
    for (int64_t j = 0; j < hd; j++) q->outer *= g->in[j];
    for (int64_t j = wd + 1; j < R; j++) q->inner *= g->in[j];
    q->H = hd >= 0 ? g->in[hd] : 1;
    q->OH = hd >= 0 ? g->out[hd] : 1;
    q->kh = hd >= 0 ? g->size[hd] : 1;
    q->sh = hd >= 0 ? g->stride[hd] : 1;
    q->dh = hd >= 0 ? g->win_dil[hd] : 1;
    q->ph = hd >= 0 ? g->pad[hd] : 0;
    q->W = g->in[wd];
    q->OW = g->out[wd];
    q->kw = g->size[wd];
    q->sw = g->stride[wd];
    q->dw = g->win_dil[wd];
    q->pw = g->pad[wd];
    if (q->outer == 0 || q->inner == 0 || q->H == 0 || q->W == 0 || q->OH == 0 || q->OW == 0)
        return false;
    if (q->OW * q->inner > POOL_ROW_MAX || q->W * q->inner > POOL_ROW_MAX || q->kh > POOL_ROW_MAX ||
        q->dh > POOL_ROW_MAX || q->kw > POOL_ROW_MAX || q->dw > POOL_ROW_MAX ||
        q->sh > POOL_ROW_MAX)
        return false;
    return true;
}

static bool pool_plan_of(const rw_plan *p, pool_plan *q) {
    memset(q, 0, sizeof *q);
    const geometry *g = &p->g;
    if (p->n != 1 || p->in_t[0] != p->res_t[0]) return false;
    interp_reducer kind = interp_match_reducer(p->comp);
    if (kind != INTERP_REDUCER_MAX && kind != INTERP_REDUCER_MIN) return false;
    cxla_type t = p->in_t[0];
    cxla_type_class cls = cxla_type_class_of(t);
    bool small = t == CXLA_BF16 || t == CXLA_F16;
    if (!(t == CXLA_F32 || t == CXLA_F64 || small || cls == CXLA_CLASS_SIGNED ||
          cls == CXLA_CLASS_UNSIGNED))
        return false;
    if (!pool_dims(g, q)) return false;
    int64_t rw = q->OW * q->inner, esize = t == CXLA_F64 || cxla_type_storage(t) == 8 ? 8 : 4;
    int64_t buf = POOL_BUF_BYTES / esize, one = (q->kh - 1) * q->dh + 1;
    if (one * rw > buf) return false;
    q->rb = (buf / rw - one) / q->sh + 1;
    if (q->rb > q->OH) q->rb = q->OH;
    q->nr = (q->rb - 1) * q->sh + one;
    if (q->nr > q->H) q->nr = q->H;
    q->blocks = (q->OH + q->rb - 1) / q->rb;
    q->t = t;
    q->mx = kind == INTERP_REDUCER_MAX;
    q->small = small;
    q->check = t == CXLA_F32 || t == CXLA_F64 || small; /* small: checked decoded */
    return true;
}

/* The reducer's identity in the compute type. */
static const char *pool_identity(const pool_plan *q) {
    if (q->small || q->t == CXLA_F32) return q->mx ? "(-INFINITY)" : "INFINITY";
    if (q->t == CXLA_F64) return q->mx ? "(-(double)INFINITY)" : "((double)INFINITY)";
    static const char *const lim[2][4][2] = {
        {{"INT8_MIN", "INT8_MAX"},
         {"INT16_MIN", "INT16_MAX"},
         {"INT32_MIN", "INT32_MAX"},
         {"INT64_MIN", "INT64_MAX"}},
        {{"0", "UINT8_MAX"}, {"0", "UINT16_MAX"}, {"0", "UINT32_MAX"}, {"0", "UINT64_MAX"}}};
    size_t s = cxla_type_storage(q->t);
    int k = s == 1 ? 0 : s == 2 ? 1 : s == 4 ? 2 : 3;
    return lim[cxla_type_is_signed(q->t) ? 0 : 1][k][q->mx ? 0 : 1];
}

/* The element of |src| at W position |pos| (and inner index c when inner > 1). */
static const char *pool_at(writer *w, const pool_plan *q, const char *src, const char *pos) {
    if (q->inner == 1) return F("%s[%s]", src, pos);
    return F("%s[(%s) * %" PRId64 " + c]", src, pos, q->inner);
}

/* |base| + |off| as C text. */
static const char *pool_plus(writer *w, const char *base, int64_t off) {
    if (off == 0) return base;
    return off > 0 ? F("%s + %" PRId64, base, off) : F("%s - %" PRId64, base, -off);
}

/* Pass 1 of one input row: |src| (the row, element w * inner + c) into buffer row |dst|
 * (element ow * inner + c), folding the window's positions inside the row with |fn| from
 * the identity |id|. */
static void pool_pass1(writer *w, const pool_plan *q, const char *fn, const char *src,
                       const char *dst, const char *id) {
    int64_t I = q->inner, lo = q->pw > 0 ? (q->pw + q->sw - 1) / q->sw : 0;
    int64_t num = q->W - 1 + q->pw - (q->kw - 1) * q->dw;
    int64_t hi = num >= 0 ? num / q->sw + 1 : 0;
    const char *CT = q->small ? "float" : cpu_emit_ctype(q->t);
    const char *out = I == 1 ? F("%s[ow]", dst) : F("%s[ow * %" PRId64 " + c]", dst, I);
    if (hi > q->OW) hi = q->OW;
    if (lo > hi) lo = hi;
    /* The borders: positions tested one by one. */
    for (int part = 0; part < 2; part++) {
        int64_t from = part ? hi : 0, to = part ? q->OW : lo;
        if (from >= to) continue;
        open_(w, "for (int64_t ow = %" PRId64 "; ow < %" PRId64 "; ow++)", from, to);
        if (I > 1) open_(w, "for (int64_t c = 0; c < %" PRId64 "; c++)", I);
        ln(w, "%s a = %s;", CT, id);
        open_(w, "for (int64_t k = 0; k < %" PRId64 "; k++)", q->kw);
        ln(w, "const int64_t pos = %s;",
           pool_plus(w, F("ow * %" PRId64 " + k * %" PRId64, q->sw, q->dw), -q->pw));
        ln(w, "if (pos >= 0 && pos < %" PRId64 ") a = %s(a, %s);", q->W, fn,
           pool_at(w, q, src, "pos"));
        close_(w);
        ln(w, "%s = a;", out);
        if (I > 1) close_(w);
        close_(w);
    }
    if (lo >= hi) return;
    /* The interior: every position inside the row; window elements unrolled. */
    open_(w, "for (int64_t ow = %" PRId64 "; ow < %" PRId64 "; ow++)", lo, hi);
    if (I > 1) open_(w, "for (int64_t c = 0; c < %" PRId64 "; c++)", I);
    const char *pos0 = q->sw == 1 ? "ow" : F("ow * %" PRId64, q->sw);
    if (q->kw <= 8) {
        const char *e = NULL;
        for (int64_t k = 0; k < q->kw; k++) {
            const char *x = pool_at(w, q, src, pool_plus(w, pos0, k * q->dw - q->pw));
            e = e ? F("%s(%s, %s)", fn, e, x) : x;
        }
        ln(w, "%s = %s;", out, e);
    } else {
        ln(w, "%s a = %s;", CT, pool_at(w, q, src, pool_plus(w, pos0, -q->pw)));
        open_(w, "for (int64_t k = 1; k < %" PRId64 "; k++)", q->kw);
        ln(w, "a = %s(a, %s);", fn,
           pool_at(w, q, src, pool_plus(w, F("%s + k * %" PRId64, pos0, q->dw), -q->pw)));
        close_(w);
        ln(w, "%s = a;", out);
    }
    if (I > 1) close_(w);
    close_(w);
}

/* The kernel of a reduce-window that pool_plan_of accepts (see there). */
static cxla_status emit_pool(const cxla_instr *top, const rw_plan *p, const pool_plan *q,
                             const char *name, cxla_strbuf *out, cpu_kernel_info *out_info) {
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cpu_emit_fmt_reset();
    cxla_strbuf text;
    cxla_strbuf_init(&text);
    writer wb = {arena, &text, 0, 0}, *w = &wb;
    const cpu_emit_reader *reader = p->reader;
    const char *ST = cpu_emit_stype(q->t), *CT = q->small ? "float" : cpu_emit_ctype(q->t);
    const char *xf = F("%s_xf", name), *ff = q->check ? F("%s_ff", name) : xf;
    int64_t RW = q->OW * q->inner, WI = q->W * q->inner, range = q->outer * q->blocks;
    bool f64 = q->t == CXLA_F64;
    const char *cmp = q->mx ? ">" : "<";

    /* The exact fold f(acc, x), as the interpreter's (interp_reduce.c), and the plain one. */
    open_(w, "static inline %s %s(%s a, %s b)", CT, xf, CT, CT);
    if (cxla_type_is_float(q->t)) {
        ln(w, "%s r = a %s b ? a : b;", CT, cmp);
        ln(w, "r = a == b ? (signbit(a) ? %s) : r;", q->mx ? "b : a" : "a : b");
        ln(w, "r = b != b ? b : r;");
        ln(w, "return a != a ? a : r;");
    } else {
        ln(w, "return b %s a ? b : a;", cmp);
    }
    close_(w);
    if (q->check) {
        open_(w, "static inline %s %s(%s a, %s b)", CT, ff, CT, CT);
        ln(w, "return b %s a ? b : a;", cmp);
        close_(w);
    }
    vectorize_attr(&text);
    cxla_strbuf params, args;
    cxla_strbuf_init(&params);
    cxla_strbuf_init(&args);
    cxla_strbuf_printf(&params, "%s *restrict o0", ST);
    cxla_strbuf_printf(&args, "(%s *)out[0]", ST);
    if (reader) {
        if (reader->in_params[0]) cxla_strbuf_printf(&params, ", %s", reader->in_params);
        if (reader->in_args[0]) cxla_strbuf_printf(&args, ", %s", reader->in_args);
    } else {
        for (int64_t k = 0; k < 2; k++) {
            cxla_strbuf_printf(&params, ", const %s *restrict p%" PRId64, ST, k);
            cxla_strbuf_printf(&args, ", (const %s *)in[%" PRId64 "]", ST, k);
        }
    }
    open_(w, "static void %s_body(%s, int64_t begin, int64_t end)", name,
          params.data ? params.data : "");
    for (int64_t k = 0; reader && k < reader->in_count; k++) ln(w, "(void)p%" PRId64 ";", k);
    ln(w, "const %s i0 = %s;", ST, rd(w, p, 1, "0"));
    ln(w, "const %s i0c = %s;", CT, cpu_emit_decode(arena, q->t, "i0"));
    if (q->check)
        ln(w, "const int dirty0 = i0c != i0c || %s(i0c) == %s;",
           f64 ? "cxla_f64_bits" : "cxla_f32_bits", f64 ? "0x8000000000000000ull" : "0x80000000u");
    open_(w, "for (int64_t q = begin; q < end; q++)");
    ln(w, "const int64_t qo = q / %" PRId64 ", oh0 = q %% %" PRId64 " * %" PRId64 ";", q->blocks,
       q->blocks, q->rb);
    ln(w, "const int64_t oh1 = oh0 + %" PRId64 " < %" PRId64 " ? oh0 + %" PRId64 " : %" PRId64 ";",
       q->rb, q->OH, q->rb, q->OH);
    ln(w, "int64_t h0 = oh0 * %" PRId64 " - %" PRId64 ";", q->sh, q->ph);
    ln(w, "int64_t h1 = (oh1 - 1) * %" PRId64 " + %" PRId64 ";", q->sh,
       (q->kh - 1) * q->dh - q->ph + 1);
    ln(w, "if (h0 < 0) h0 = 0;");
    ln(w, "if (h1 > %" PRId64 ") h1 = %" PRId64 ";", q->H, q->H);
    ln(w, "%s hb[%" PRId64 "];", CT, q->nr * RW);
    if (q->check) ln(w, "int dirty = dirty0;");
    /* Pass 1: the input rows the block's windows cover. */
    open_(w, "for (int64_t h = h0; h < h1; h++)");
    ln(w, "const int64_t at = (qo * %" PRId64 " + h) * %" PRId64 ";", q->H, WI);
    ln(w, "(void)at;");
    const char *src = "src";
    if (reader || q->small) {
        ln(w, "%s xr[%" PRId64 "];", CT, WI);
        open_(w, "for (int64_t j = 0; j < %" PRId64 "; j++)", WI);
        ln(w, "xr[j] = %s;", cpu_emit_decode(arena, q->t, rd(w, p, 0, "at + j")));
        close_(w);
        src = "xr";
    } else {
        ln(w, "const %s *restrict src = p0 + at;", ST);
    }
    ln(w, "%s *restrict hr = hb + (h - h0) * %" PRId64 ";", CT, RW);
    if (q->check) {
        const char *IT = f64 ? "int64_t" : "int32_t";
        ln(w, "%s mn = 0, mg = 0;", IT);
        open_(w, "for (int64_t j = 0; j < %" PRId64 "; j++)", WI);
        ln(w, "const %s s = (%s)%s(%s[j]);", IT, IT, f64 ? "cxla_f64_bits" : "cxla_f32_bits", src);
        ln(w, "const %s m = s & %s;", IT, f64 ? "0x7fffffffffffffffll" : "0x7fffffff");
        ln(w, "mn = s < mn ? s : mn;");
        ln(w, "mg = m > mg ? m : mg;");
        close_(w);
        ln(w, "/* NaN or -0 in the row: the exact fold. */");
        ln(w, "const int bad = mn == %s || mg > %s;", f64 ? "INT64_MIN" : "INT32_MIN",
           f64 ? "0x7ff0000000000000ll" : "0x7f800000");
        ln(w, "dirty |= bad;");
        open_(w, "if (!bad)");
        pool_pass1(w, q, ff, src, "hr", pool_identity(q));
        close_(w);
        open_(w, "else");
        pool_pass1(w, q, xf, src, "hr", pool_identity(q));
        close_(w);
    } else {
        pool_pass1(w, q, xf, src, "hr", pool_identity(q));
    }
    close_(w);
    /* Pass 2: each output row folds its window's buffer rows in order from the init. When
     * the rows are read straight from the input, pass 2 (which works in cache) also asks
     * for the input rows after the block's, a share of lines per output row: the next
     * block's rows, which pass 1 then finds in cache (see POOL_AHEAD_LINES). */
    int64_t ahead = 0, elem = (int64_t)cxla_type_storage(q->t);
    if (!reader && elem > 0 && 64 % elem == 0) {
        ahead = (q->nr * WI * elem + 63) / 64;
        ahead = (ahead + q->rb - 1) / q->rb;
        if (ahead > POOL_AHEAD_LINES) ahead = POOL_AHEAD_LINES;
        ln(w, "const int64_t pf0 = (qo * %" PRId64 " + h1) * %" PRId64 ";", q->H, WI);
    }
    open_(w, "for (int64_t oh = oh0; oh < oh1; oh++)");
    if (ahead > 0) {
        int64_t total = q->outer * q->H * WI;
        open_(w, "for (int64_t c = 0; c < %" PRId64 "; c++)", ahead);
        ln(w, "const int64_t pa = pf0 + ((oh - oh0) * %" PRId64 " + c) * %" PRId64 ";", ahead,
           64 / elem);
        ln(w, "CXLA_PREFETCH(&p0[pa < %" PRId64 " ? pa : %" PRId64 "]);", total, total - 1);
        close_(w);
    }
    ln(w, "%s *restrict orow = o0 + (qo * %" PRId64 " + oh) * %" PRId64 ";", ST, q->OH, RW);
    if (q->small)
        ln(w, "float acc[%" PRId64 "];", RW);
    else
        ln(w, "%s *restrict acc = orow;", CT);
    for (int part = 0; part < (q->check ? 2 : 1); part++) {
        const char *fn = q->check && part == 0 ? ff : xf;
        if (q->check) open_(w, part == 0 ? "if (!dirty)" : "else");
        if (q->kh <= 8) {
            ln(w, "const %s *r[%" PRId64 "];", CT, q->kh);
            ln(w, "int64_t nv = 0;");
            open_(w, "for (int64_t k = 0; k < %" PRId64 "; k++)", q->kh);
            ln(w, "const int64_t h = oh * %" PRId64 " + k * %" PRId64 " - %" PRId64 ";", q->sh,
               q->dh, q->ph);
            ln(w, "if (h >= 0 && h < %" PRId64 ") r[nv++] = hb + (h - h0) * %" PRId64 ";", q->H,
               RW);
            close_(w);
            const char *e = "i0c";
            for (int64_t k = 0; k < q->kh; k++) e = F("%s(%s, r[%" PRId64 "][e])", fn, e, k);
            open_(w, "if (nv == %" PRId64 ")", q->kh);
            ln(w, "for (int64_t e = 0; e < %" PRId64 "; e++) acc[e] = %s;", RW, e);
            close_(w);
            open_(w, "else");
            ln(w, "for (int64_t e = 0; e < %" PRId64 "; e++) acc[e] = i0c;", RW);
            open_(w, "for (int64_t v = 0; v < nv; v++)");
            ln(w, "const %s *restrict rv = r[v];", CT);
            ln(w, "for (int64_t e = 0; e < %" PRId64 "; e++) acc[e] = %s(acc[e], rv[e]);", RW, fn);
            close_(w);
            close_(w);
        } else {
            ln(w, "for (int64_t e = 0; e < %" PRId64 "; e++) acc[e] = i0c;", RW);
            open_(w, "for (int64_t k = 0; k < %" PRId64 "; k++)", q->kh);
            ln(w, "const int64_t h = oh * %" PRId64 " + k * %" PRId64 " - %" PRId64 ";", q->sh,
               q->dh, q->ph);
            ln(w, "if (h < 0 || h >= %" PRId64 ") continue;", q->H);
            ln(w, "const %s *restrict rv = hb + (h - h0) * %" PRId64 ";", CT, RW);
            ln(w, "for (int64_t e = 0; e < %" PRId64 "; e++) acc[e] = %s(acc[e], rv[e]);", RW, fn);
            close_(w);
        }
        if (q->check) close_(w);
    }
    if (q->small)
        ln(w, "for (int64_t e = 0; e < %" PRId64 "; e++) orow[e] = %s;", RW,
           cpu_emit_encode(arena, q->t, "acc[e]"));
    close_(w);
    close_(w);
    close_(w);

    cpu_emit_kernel_head(out, top, name);
    cxla_strbuf_append(out, text.data ? text.data : "", text.len);
    cpu_emit_kernel_entry(out, name, range, args.data ? args.data : "", NULL);
    cxla_status st = NULL;
    if (out->failed || text.failed || params.failed || args.failed || cpu_emit_fmt_failed())
        st = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s", top->name);
    if (!st && out_info) {
        size_t es = cxla_type_storage(q->t);
        out_info->range = range;
        out_info->cost = (double)q->outer * (double)es *
                         ((double)q->H * (double)WI + (double)q->OH * (double)RW);
    }
    cpu_emit_buf_free(&text);
    cpu_emit_buf_free(&params);
    cpu_emit_buf_free(&args);
    cxla_arena_destroy(arena);
    return st;
}

/* The kernel of reduce-window |instr|, or of fusion |top| whose root it is (|reader| then
 * reads its fused inputs; NULL: its inputs are the kernel's). */
static cxla_status emit_rw(const cxla_instr *top, const cxla_instr *instr, const char *name,
                           cxla_strbuf *out, cpu_kernel_info *out_info,
                           const cpu_emit_reader *reader) {
    rw_plan p;
    if (instr->operand_count / 2 > CPU_EMIT_MAX_REDUCER_RESULTS)
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "cpu backend: cannot emit %s (reduce-window): %" PRId64
                          " inputs, above the %d that a kernel's reducer gives results for "
                          "(CPU_EMIT_MAX_REDUCER_RESULTS; the JIT runs it on the interpreter's "
                          "handler)",
                          instr->name, instr->operand_count / 2, (int)CPU_EMIT_MAX_REDUCER_RESULTS);
    if (!rw_plan_of(instr, &p))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "cpu backend: cannot emit %s (reduce-window): unsupported window, "
                          "element types or reducer",
                          instr->name);
    p.reader = reader;
    pool_plan pool;
    if (pool_plan_of(&p, &pool)) return emit_pool(top, &p, &pool, name, out, out_info);
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cpu_emit_fmt_reset();
    cxla_strbuf helpers, body;
    cxla_strbuf_init(&helpers);
    cxla_strbuf_init(&body);
    writer wb = {arena, &body, 1, 0}, *w = &wb;
    const geometry *g = &p.g;
    int64_t n = p.n, L = g->rank - 1;
    int64_t lanes = g->out[L] < LANES ? (g->out[L] > 0 ? g->out[L] : 1) : LANES;
    int64_t blocks = (g->out[L] + lanes - 1) / lanes;
    int64_t rows = blocks;
    for (int64_t j = 0; j < L; j++) rows *= g->out[j];

    /* Parameters: results, inputs, init values. */
    cxla_strbuf params, args;
    cxla_strbuf_init(&params);
    cxla_strbuf_init(&args);
    for (int64_t i = 0; i < n; i++) {
        const char *st = cpu_emit_stype(p.res_t[i]);
        cxla_strbuf_printf(&params, "%s%s *restrict o%" PRId64, i ? ", " : "", st, i);
        cxla_strbuf_printf(&args, "%s(%s *)out[%" PRId64 "]", i ? ", " : "", st, i);
    }
    p.reader = reader;
    if (reader) {
        if (reader->in_params[0]) cxla_strbuf_printf(&params, ", %s", reader->in_params);
        if (reader->in_args[0]) cxla_strbuf_printf(&args, ", %s", reader->in_args);
    }
    for (int64_t k = 0; k < 2 * n && !reader; k++) {
        const char *st = cpu_emit_stype(instr->operands[k]->shape.type);
        cxla_strbuf_printf(&params, ", const %s *restrict p%" PRId64, st, k);
        cxla_strbuf_printf(&args, ", (const %s *)in[%" PRId64 "]", st, k);
    }
    const char *init[CPU_EMIT_MAX_REDUCER_RESULTS];
    for (int64_t i = 0; i < n; i++) {
        init[i] = F("i%" PRId64, i);
        const char *v = rd(w, &p, n + i, "0");
        ln(w, "const %s %s = %s;", cpu_emit_ctype(p.res_t[i]), init[i], v);
    }
    int64_t acc_lanes = rows_lanes(&p, lanes);
    if (p.minmax) {
        /* The reducer's maximum or minimum without branches (the prelude's cxla_max_f32 and
         * cxla_min_f32, rule for rule), so that the lane loops vectorize. */
        const char *CT = cpu_emit_ctype(p.res_t[0]);
        bool mx = p.minmax == INTERP_REDUCER_MAX;
        p.minmax_fn = F("%s_%s", name, mx ? "max" : "min");
        writer wh = {arena, &helpers, 0, 0}, *h = &wh;
        open_(h, "static inline %s %s(%s a, %s b)", CT, p.minmax_fn, CT, CT);
        ln(h, "%s r = a %s b ? a : b;", CT, mx ? ">" : "<");
        ln(h, "r = a == b ? (signbit(a) ? %s) : r;", mx ? "b : a" : "a : b");
        ln(h, "r = b != b ? b : r;");
        ln(h, "return a != a ? a : r;");
        close_(h);
    }
    const char *psum = NULL, *names = reader ? reader->in_names : "p0";
    for (int64_t k = 0; reader && k < reader->in_count; k++) ln(w, "(void)p%" PRId64 ";", k);
    if (rows == 0) {
        /* An empty result: nothing to compute. */
        for (int64_t i = 0; i < n; i++) ln(w, "(void)o%" PRId64 ";\n    (void)i%" PRId64 ";", i, i);
        for (int64_t k = 0; k < n; k++) ln(w, "(void)p%" PRId64 ";", k);
        ln(w, "(void)begin;\n    (void)end;");
    } else if (p.pairwise) {
        /* The interpreter's pairwise tree over the window's linear index, lane by lane. */
        psum = F("%s_psum", name);
        const char *CT = cpu_emit_ctype(p.res_t[0]);
        writer wh = {arena, &helpers, 0, 0}, *h = &wh;
        cxla_strbuf op;
        cxla_strbuf_init(&op);
        for (int64_t j = 0; j < L; j++) cxla_strbuf_printf(&op, "int64_t ix%" PRId64 ", ", j);
        const char *ins =
            reader ? reader->in_params : F("const %s *restrict p0", cpu_emit_stype(p.in_t[0]));
        const char *sig = F("static void %s(%s%s%s i0, %sint64_t kb, int64_t cnt, "
                            "%s *restrict a0, int64_t first, int64_t n)",
                            psum, ins, ins[0] ? ", " : "", CT, op.data ? op.data : "", CT);
        cpu_emit_buf_free(&op);
        ln(h, "%s;", sig);
        open_(h, "%s", sig);
        for (int64_t k = 0; reader && k < reader->in_count; k++) ln(h, "(void)p%" PRId64 ";", k);
        open_(h, "if (n > %d)", PAIRWISE_LEAF);
        cxla_strbuf call_o;
        cxla_strbuf_init(&call_o);
        for (int64_t j = 0; j < L; j++) cxla_strbuf_printf(&call_o, "ix%" PRId64 ", ", j);
        const char *co = call_o.data ? F("%s", call_o.data) : "";
        cpu_emit_buf_free(&call_o);
        ln(h, "const int64_t half = n / 2;");
        ln(h, "%s right[%" PRId64 "];", CT, lanes);
        ln(h, "%s(%s%si0, %skb, cnt, a0, first, half);", psum, names, names[0] ? ", " : "", co);
        ln(h, "%s(%s%si0, %skb, cnt, right, first + half, n - half);", psum, names,
           names[0] ? ", " : "", co);
        ln(h, "for (int64_t k = 0; k < cnt; k++) a0[k] = a0[k] + right[k];");
        ln(h, "return;");
        close_(h);
        const char *i0 = "i0";
        for (int part = 0; part < 2; part++) {
            if (part == 0)
                open_(h, "%s", "");
            else
                open_(h, "for (int64_t r = first + 1; r < first + n; r++)");
            window_position(h, g, part == 0 ? "first" : "r", true);
            lane_loops(h, g, &p, part == 0 ? sum_first : sum_next, &p, &i0);
            close_(h);
        }
        close_(h);
        ln(h, "%s", "");
    }

    if (rows > 0) {
        open_(w, "for (int64_t q = begin; q < end; q++)");
        block_indices(w, g, blocks, lanes);
        for (int64_t i = 0; i < n; i++)
            ln(w, "%s a%" PRId64 "[%" PRId64 "];", cpu_emit_ctype(p.res_t[i]), i, acc_lanes);
        if (p.pairwise) {
            cxla_strbuf call_o;
            cxla_strbuf_init(&call_o);
            for (int64_t j = 0; j < L; j++) cxla_strbuf_printf(&call_o, "ix%" PRId64 ", ", j);
            ln(w, "%s(%s%si0, %skb, cnt, a0, 0, %" PRId64 ");", psum, names, names[0] ? ", " : "",
               call_o.data ? call_o.data : "", g->volume);
            cpu_emit_buf_free(&call_o);
            ln(w, "for (int64_t k = 0; k < cnt; k++) a0[k] = i0 + a0[k];");
        } else {
            rows_body(w, &p, lanes, acc_lanes, init);
            if (p.leaf_sum) ln(w, "for (int64_t k = 0; k < cnt; k++) a0[k] = i0 + a0[k];");
        }
        /* The block's outputs are contiguous: the last dimension's kb.. of row q / blocks. */
        for (int64_t i = 0; i < n; i++)
            ln(w,
               "for (int64_t k = 0; k < cnt; k++) o%" PRId64 "[(q / %" PRId64 ") * %" PRId64
               " + kb + k] = a%" PRId64 "[k];",
               i, blocks, g->out[L], i);
        close_(w);
    }

    cpu_emit_kernel_head(out, top, name);
    cxla_strbuf_append(out, helpers.data ? helpers.data : "", helpers.len);
    vectorize_attr(out);
    cxla_strbuf_printf(out, "static void %s_body(%s, int64_t begin, int64_t end) {\n", name,
                       params.data);
    cxla_strbuf_append(out, body.data ? body.data : "", body.len);
    cxla_strbuf_puts(out, "}\n");
    cpu_emit_kernel_entry(out, name, rows > 0 ? rows : 1, args.data, NULL);
    cxla_status st = NULL;
    if (out->failed || body.failed || helpers.failed || params.failed || args.failed ||
        cpu_emit_fmt_failed())
        st = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s", instr->name);
    if (!st && out_info) {
        double bytes = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t cnt = 1, incnt = 1;
            for (int64_t j = 0; j < instr->operands[i]->shape.rank; j++) {
                cnt *= g->out[j];
                incnt *= g->in[j];
            }
            bytes += (double)cnt * (double)cxla_type_storage(p.res_t[i]) * (double)g->volume +
                     (double)incnt * (double)cxla_type_storage(p.in_t[i]);
        }
        out_info->range = rows > 0 ? rows : 1;
        out_info->cost = bytes;
    }
    cpu_emit_buf_free(&helpers);
    cpu_emit_buf_free(&body);
    cpu_emit_buf_free(&params);
    cpu_emit_buf_free(&args);
    cxla_arena_destroy(arena);
    return st;
}

cxla_status cpu_emit_reduce_window(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                   cpu_kernel_info *out_info) {
    return emit_rw(instr, instr, name, out, out_info, NULL);
}

cxla_status cpu_emit_reduce_window_fused(const cxla_instr *fusion, const char *name,
                                         cxla_strbuf *out, cpu_kernel_info *out_info,
                                         const cpu_emit_reader *reader) {
    const cxla_computation *c = cxla_instr_called(fusion, CXLA_ATTR_CALLS);
    return emit_rw(fusion, c->root, name, out, out_info, reader);
}

/* ---- select-and-scatter ------------------------------------------------------------- */

typedef struct ss_plan {
    const cxla_computation *sel, *sc;
    geometry g;
    cxla_type xt, t;
} ss_plan;

static bool ss_plan_of(const cxla_instr *instr, ss_plan *p) {
    memset(p, 0, sizeof *p);
    if (instr->opcode != CXLA_OP_SELECT_AND_SCATTER || instr->operand_count != 3) return false;
    const cxla_shape *xs = &instr->operands[0]->shape, *ss = &instr->operands[1]->shape,
                     *is = &instr->operands[2]->shape, *rs = &instr->shape;
    /* Sub-byte integers (one per byte) and complex values too, as the dynamic form
     * (cpu_dynwin.c) takes them: the kernel only moves, selects and combines elements. */
    if (!cpu_emit_held_array(xs) || !cpu_emit_held_array(ss) || !cpu_emit_held_array(is) ||
        !cpu_emit_held_array(rs) || is->rank != 0 || ss->rank != xs->rank || rs->rank != xs->rank ||
        ss->type != is->type || rs->type != is->type)
        return false;
    for (int64_t j = 0; j < xs->rank; j++)
        if (rs->dims[j] != xs->dims[j]) return false;
    if (!geometry_of(instr, xs->rank, xs->dims, ss->dims, &p->g)) return false;
    p->sel = cxla_instr_called(instr, CXLA_ATTR_SELECT);
    p->sc = cxla_instr_called(instr, CXLA_ATTR_SCATTER);
    p->xt = xs->type;
    p->t = is->type;
    if (!cpu_emit_scalar_ok(p->sel, 2, 1) || !cpu_emit_scalar_ok(p->sc, 2, 1)) return false;
    return p->sel->root->shape.type == CXLA_PRED && p->sel->params[0]->shape.type == p->xt &&
           p->sel->params[1]->shape.type == p->xt && p->sc->params[0]->shape.type == p->t &&
           p->sc->params[1]->shape.type == p->t && p->sc->root->shape.type == p->t;
}

bool cpu_emit_select_and_scatter_ok(const cxla_instr *instr) {
    ss_plan p;
    return ss_plan_of(instr, &p);
}

/* One window position of the scan at element offset |at| (a C expression): the first one
 * inside the operand is selected, each later one replaces the selection when
 * select(best, cur) is false. |first|: whether it is known to be the first. */
static void ss_step(writer *w, const ss_plan *p, const char *IT, const char *at, bool first,
                    bool known) {
    open_(w, "%s", "");
    ln(w, "const %s at = (%s)(%s);", IT, IT, at);
    ln(w, "const %s cur = x[at];", cpu_emit_ctype(p->xt));
    if (first) {
        ln(w, "sl = at;");
        ln(w, "best = cur;");
        close_(w);
        return;
    }
    if (!known) {
        open_(w, "if (sl < 0)");
        ln(w, "sl = at;");
        ln(w, "best = cur;");
        close_(w);
        open_(w, "else");
    }
    const char *sargs[2] = {"best", "cur"}, *keep;
    cpu_emit_scalar(w->arena, w->b, w->indent, &w->tmp, p->sel, sargs, &keep);
    ln(w, "sl = %s ? sl : at;", keep);
    ln(w, "best = %s ? best : cur;", keep);
    if (!known) close_(w);
    close_(w);
}

/* select-and-scatter over the [outer, H, W, inner] view (pool_dims): the outer indices are
 * independent units of work (no window crosses them), so the thread pool splits them. Per
 * output row oh: the selection of every source element of the row (the window scanned
 * with its positions as constant offsets where it lies inside the operand, tested one by
 * one at the borders) into sel[], then the scatter of the row's source elements in
 * row-major order, which is the interpreter's order for each result element (sources of
 * other outer indices never reach it). */
static cxla_status emit_ss_rows(const cxla_instr *instr, const ss_plan *p, const pool_plan *q,
                                const char *name, cxla_strbuf *out, cpu_kernel_info *out_info) {
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cpu_emit_fmt_reset();
    cxla_strbuf body;
    cxla_strbuf_init(&body);
    writer wb = {arena, &body, 1, 0}, *w = &wb;
    const char *XT = cpu_emit_ctype(p->xt), *T = cpu_emit_ctype(p->t);
    const char *ot = cpu_emit_stype(p->t), *xt = cpu_emit_stype(p->xt);
    int64_t I = q->inner, plane = q->H * q->W * I, splane = q->OH * q->OW * I, RW = q->OW * I;
    /* Output positions whose windows lie inside the operand in H and in W. */
    int64_t hlo = q->ph > 0 ? (q->ph + q->sh - 1) / q->sh : 0;
    int64_t hnum = q->H - 1 + q->ph - (q->kh - 1) * q->dh, hhi = hnum >= 0 ? hnum / q->sh + 1 : 0;
    int64_t wlo = q->pw > 0 ? (q->pw + q->sw - 1) / q->sw : 0;
    int64_t wnum = q->W - 1 + q->pw - (q->kw - 1) * q->dw, whi = wnum >= 0 ? wnum / q->sw + 1 : 0;
    if (hhi > q->OH) hhi = q->OH;
    if (whi > q->OW) whi = q->OW;
    /* Offsets in the plane: 32 bits where they fit (the selection loop vectorizes with
     * twice the lanes; b0 is converted implicitly: gcc 12 vectorized the loop worse, 12 ms
     * against 7, with an explicit cast there). */
    const char *IT = plane <= INT32_MAX ? "int32_t" : "int64_t";
    ln(w, "const %s init = p2[0];", T);
    open_(w, "for (int64_t u = begin; u < end; u++)");
    ln(w, "%s *restrict o = o0 + u * %" PRId64 ";", T, plane);
    ln(w, "const %s *restrict x = p0 + u * %" PRId64 ";", XT, plane);
    ln(w, "const %s *restrict s = p1 + u * %" PRId64 ";", T, splane);
    ln(w, "for (int64_t i = 0; i < %" PRId64 "; i++) o[i] = init;", plane);
    open_(w, "for (int64_t oh = 0; oh < %" PRId64 "; oh++)", q->OH);
    ln(w, "%s sel[%" PRId64 "];", IT, RW);
    for (int part = 0; part < 2; part++) {
        /* part 0: the interior of the row (when oh is inside); part 1: everything else. */
        if (part == 0) {
            if (hlo >= hhi || wlo >= whi) continue;
            open_(w, "if (oh >= %" PRId64 " && oh < %" PRId64 ")", hlo, hhi);
            open_(w, "for (int64_t ow = %" PRId64 "; ow < %" PRId64 "; ow++)", wlo, whi);
        } else {
            open_(w, "for (int64_t ow = 0; ow < %" PRId64 "; ow++)", q->OW);
            if (hlo < hhi && wlo < whi)
                ln(w,
                   "if (oh >= %" PRId64 " && oh < %" PRId64 " && ow >= %" PRId64 " && ow < %" PRId64
                   ") continue;",
                   hlo, hhi, wlo, whi);
        }
        if (I > 1) open_(w, "for (int64_t c = 0; c < %" PRId64 "; c++)", I);
        const char *c = I > 1 ? "c" : "0";
        ln(w, "%s sl = -1;", IT);
        ln(w, "%s best = 0;", XT);
        if (part == 0) {
            ln(w,
               "const %s b0 = ((oh * %" PRId64 " - %" PRId64 ") * %" PRId64 " + ow * %" PRId64
               " - %" PRId64 ") * %" PRId64 " + %s;",
               IT, q->sh, q->ph, q->W, q->sw, q->pw, I, c);
            if (q->kh * q->kw <= 16) {
                for (int64_t kh = 0; kh < q->kh; kh++)
                    for (int64_t kw = 0; kw < q->kw; kw++) {
                        int64_t off = ((kh * q->dh) * q->W + kw * q->dw) * I;
                        ss_step(w, p, IT, F("b0 + %" PRId64, off), kh == 0 && kw == 0, true);
                    }
            } else {
                open_(w, "for (int64_t r = 0; r < %" PRId64 "; r++)", q->kh * q->kw);
                ss_step(w, p, IT,
                        F("b0 + ((r / %" PRId64 ") * %" PRId64 " + (r %% %" PRId64 ") * %" PRId64
                          ") * %" PRId64,
                          q->kw, q->dh * q->W, q->kw, q->dw, I),
                        false, false);
                close_(w);
            }
        } else {
            open_(w, "for (int64_t kh = 0; kh < %" PRId64 "; kh++)", q->kh);
            ln(w, "const int64_t h = oh * %" PRId64 " + kh * %" PRId64 " - %" PRId64 ";", q->sh,
               q->dh, q->ph);
            ln(w, "if (h < 0 || h >= %" PRId64 ") continue;", q->H);
            open_(w, "for (int64_t kw = 0; kw < %" PRId64 "; kw++)", q->kw);
            ln(w, "const int64_t wp = ow * %" PRId64 " + kw * %" PRId64 " - %" PRId64 ";", q->sw,
               q->dw, q->pw);
            ln(w, "if (wp < 0 || wp >= %" PRId64 ") continue;", q->W);
            ss_step(w, p, IT, F("(h * %" PRId64 " + wp) * %" PRId64 " + %s", q->W, I, c), false,
                    false);
            close_(w);
            close_(w);
        }
        ln(w, "(void)best;");
        ln(w, "sel[ow * %" PRId64 " + %s] = sl;", I, c);
        if (I > 1) close_(w);
        close_(w);
        if (part == 0) close_(w);
    }
    /* The scatter, in row-major order of the source. */
    open_(w, "for (int64_t e = 0; e < %" PRId64 "; e++)", RW);
    ln(w, "const %s sl = sel[e];", IT);
    ln(w, "if (sl < 0) continue;");
    const char *cargs[2] = {"o[sl]", F("s[oh * %" PRId64 " + e]", RW)}, *dst = "o[sl]";
    call_into(w, p->sc, cargs, &dst, 1);
    close_(w);
    close_(w);
    close_(w);

    cpu_emit_kernel_head(out, instr, name);
    vectorize_attr(out);
    cxla_strbuf_printf(out,
                       "static void %s_body(%s *restrict o0, const %s *restrict p0, const %s "
                       "*restrict p1, const %s *restrict p2, int64_t begin, int64_t end) {\n",
                       name, ot, xt, ot, ot);
    cxla_strbuf_append(out, body.data ? body.data : "", body.len);
    cxla_strbuf_puts(out, "}\n");
    const char *args =
        F("(%s *)out[0], (const %s *)in[0], (const %s *)in[1], (const %s *)in[2]", ot, xt, ot, ot);
    cpu_emit_kernel_entry(out, name, q->outer, args, NULL);
    cxla_status st = NULL;
    if (out->failed || body.failed || cpu_emit_fmt_failed())
        st = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s", instr->name);
    if (!st && out_info) {
        out_info->range = q->outer;
        out_info->cost =
            (double)q->outer *
            ((double)plane * (double)(cxla_type_storage(p->xt) + cxla_type_storage(p->t)) +
             (double)splane * (double)cxla_type_storage(p->t));
    }
    cpu_emit_buf_free(&body);
    cxla_arena_destroy(arena);
    return st;
}

cxla_status cpu_emit_select_and_scatter(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                        cpu_kernel_info *out_info) {
    ss_plan p;
    if (!ss_plan_of(instr, &p))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "cpu backend: cannot emit %s (select-and-scatter): unsupported window, "
                          "element types or computations",
                          instr->name);
    pool_plan rows;
    if (pool_dims(&p.g, &rows)) return emit_ss_rows(instr, &p, &rows, name, out, out_info);
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cpu_emit_fmt_reset();
    cxla_strbuf body;
    cxla_strbuf_init(&body);
    writer wb = {arena, &body, 1, 0}, *w = &wb;
    const geometry *g = &p.g;
    int64_t L = g->rank - 1, total = 1, src = 1;
    for (int64_t j = 0; j < instr->shape.rank; j++) {
        total *= g->in[j];
        src *= g->out[j];
    }
    const char *XT = cpu_emit_ctype(p.xt), *T = cpu_emit_ctype(p.t);
    ln(w, "const %s init = p2[0];", T);
    ln(w, "for (int64_t i = 0; i < %" PRId64 "; i++) o0[i] = init;", total);
    open_(w, "for (int64_t e = 0; e < %" PRId64 "; e++)", src);
    int64_t s = 1;
    for (int64_t j = L; j >= 0; j--) {
        ln(w, "const int64_t ix%" PRId64 " = e / %" PRId64 " %% %" PRId64 ";", j, s, g->out[j]);
        s *= g->out[j];
    }
    ln(w, "int64_t selected = -1;");
    ln(w, "%s best = 0;", XT);
    open_(w, "for (int64_t r = 0; r < %" PRId64 "; r++)", g->volume);
    /* window_position covers the dimensions but the last; the last is ix<L> here. */
    window_position(w, g, "r", true);
    ln(w, "const int64_t pl = ix%" PRId64 " * %" PRId64 " + wl * %" PRId64 " - %" PRId64 ";", L,
       g->stride[L], g->win_dil[L], g->pad[L]);
    ln(w,
       "if (!ok || pl < 0 || pl %% %" PRId64 " != 0 || pl / %" PRId64 " >= %" PRId64 ") continue;",
       g->base_dil[L], g->base_dil[L], g->in[L]);
    ln(w, "const int64_t at = base + pl / %" PRId64 ";", g->base_dil[L]);
    ln(w, "const %s cur = p0[at];", XT);
    open_(w, "if (selected < 0)");
    ln(w, "selected = at;");
    ln(w, "best = cur;");
    ln(w, "continue;");
    close_(w);
    const char *sargs[2] = {"best", "cur"}, *keep;
    cpu_emit_scalar(arena, &body, w->indent, &w->tmp, p.sel, sargs, &keep);
    open_(w, "if (!%s)", keep);
    ln(w, "selected = at;");
    ln(w, "best = cur;");
    close_(w);
    close_(w);
    ln(w, "if (selected < 0) continue;");
    const char *cargs[2] = {"o0[selected]", "p1[e]"}, *dst = "o0[selected]";
    call_into(w, p.sc, cargs, &dst, 1);
    close_(w);

    cpu_emit_kernel_head(out, instr, name);
    const char *ot = cpu_emit_stype(p.t), *xt = cpu_emit_stype(p.xt);
    cxla_strbuf_printf(out,
                       "static void %s_body(%s *restrict o0, const %s *restrict p0, const %s "
                       "*restrict p1, const %s *restrict p2, int64_t begin, int64_t end) {\n"
                       "    (void)begin;\n    (void)end;\n",
                       name, ot, xt, ot, ot);
    cxla_strbuf_append(out, body.data ? body.data : "", body.len);
    cxla_strbuf_puts(out, "}\n");
    const char *args =
        F("(%s *)out[0], (const %s *)in[0], (const %s *)in[1], (const %s *)in[2]", ot, xt, ot, ot);
    cpu_emit_kernel_entry(out, name, 1, args, NULL);
    cxla_status st = NULL;
    if (out->failed || body.failed || cpu_emit_fmt_failed())
        st = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s", instr->name);
    if (!st && out_info) {
        out_info->range = 1;
        out_info->cost = (double)total * (double)(cxla_type_storage(p.xt) + cxla_type_storage(p.t));
    }
    cpu_emit_buf_free(&body);
    cxla_arena_destroy(arena);
    return st;
}

/* ---- select-and-scatter over run-time sizes ------------------------------------------ */

/* Any rank: the sizes come as 2 x rank entries, which the JIT's and the ahead-of-time
 * steps hold in arrays of 2 x CXLA_MAX_RANK or sized from the instruction (rank 32 was the
 * limit when they were arrays of CXLA_MAX_RANK). */
bool cpu_emit_sized_select_and_scatter_ok(const cxla_instr *instr) {
    ss_plan p;
    return ss_plan_of(instr, &p) && instr->operands[0]->shape.rank <= CXLA_MAX_RANK;
}

/* The generic kernel above with the operand's sizes (z[j]) and the source's (z[rank + j])
 * read at run time: the source's elements past its sizes are skipped, and a window's
 * positions past the operand's sizes are outside it, as in the interpreter's scan of the
 * cut operand; offsets are those of the bounds. One unit of work (windows overlap). */
cxla_status cpu_emit_sized_select_and_scatter(const cxla_instr *instr, const char *name,
                                              cxla_strbuf *out, cpu_kernel_info *out_info) {
    ss_plan p;
    if (!cpu_emit_sized_select_and_scatter_ok(instr))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "cpu backend: cannot emit %s (select-and-scatter): unsupported window, "
                          "element types or computations",
                          instr->name);
    ss_plan_of(instr, &p);
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cpu_emit_fmt_reset();
    cxla_strbuf body;
    cxla_strbuf_init(&body);
    writer wb = {arena, &body, 1, 0}, *w = &wb;
    const geometry *g = &p.g;
    int64_t rank = instr->shape.rank, total = 1, src = 1;
    for (int64_t j = 0; j < rank; j++) {
        total *= g->in[j];
        src *= g->out[j];
    }
    const char *XT = cpu_emit_ctype(p.xt), *T = cpu_emit_ctype(p.t);
    ln(w, "const %s init = p2[0];", T);
    ln(w, "for (int64_t i = 0; i < %" PRId64 "; i++) o0[i] = init;", total);
    ln(w, "(void)z;");
    open_(w, "for (int64_t e = 0; e < %" PRId64 "; e++)", src);
    int64_t s = 1;
    for (int64_t j = rank - 1; j >= 0; j--) {
        ln(w, "const int64_t ix%" PRId64 " = e / %" PRId64 " %% %" PRId64 ";", j, s, g->out[j]);
        ln(w, "if (ix%" PRId64 " >= z[%" PRId64 "]) continue;", j, rank + j);
        s *= g->out[j];
    }
    ln(w, "int64_t selected = -1;");
    ln(w, "%s best = 0;", XT);
    open_(w, "for (int64_t r = 0; r < %" PRId64 "; r++)", g->volume);
    ln(w, "int64_t at = 0;");
    int64_t inner = 1;
    for (int64_t j = rank - 1; j >= 0; j--) {
        ln(w,
           "const int64_t ps%" PRId64 " = ix%" PRId64 " * %" PRId64 " + (r / %" PRId64
           " %% %" PRId64 ") * %" PRId64 " - %" PRId64 ";",
           j, j, g->stride[j], inner, g->size[j], g->win_dil[j], g->pad[j]);
        ln(w,
           "if (ps%" PRId64 " < 0 || ps%" PRId64 " %% %" PRId64 " != 0 || ps%" PRId64 " / %" PRId64
           " >= z[%" PRId64 "]) continue;",
           j, j, g->base_dil[j], j, g->base_dil[j], j);
        ln(w, "at += ps%" PRId64 " / %" PRId64 " * %" PRId64 ";", j, g->base_dil[j],
           g->in_stride[j]);
        inner *= g->size[j];
    }
    ln(w, "const %s cur = p0[at];", XT);
    open_(w, "if (selected < 0)");
    ln(w, "selected = at;");
    ln(w, "best = cur;");
    ln(w, "continue;");
    close_(w);
    const char *sargs[2] = {"best", "cur"}, *keep;
    cpu_emit_scalar(arena, &body, w->indent, &w->tmp, p.sel, sargs, &keep);
    open_(w, "if (!%s)", keep);
    ln(w, "selected = at;");
    ln(w, "best = cur;");
    close_(w);
    close_(w);
    ln(w, "if (selected < 0) continue;");
    const char *cargs[2] = {"o0[selected]", "p1[e]"}, *dst = "o0[selected]";
    call_into(w, p.sc, cargs, &dst, 1);
    close_(w);

    cpu_emit_kernel_head(out, instr, name);
    const char *ot = cpu_emit_stype(p.t), *xt = cpu_emit_stype(p.xt);
    cxla_strbuf_printf(out,
                       "static void %s_body(%s *restrict o0, const %s *restrict p0, const %s "
                       "*restrict p1, const %s *restrict p2, const int64_t *restrict z, "
                       "int64_t begin, int64_t end) {\n"
                       "    (void)begin;\n    (void)end;\n",
                       name, ot, xt, ot, ot);
    cxla_strbuf_append(out, body.data ? body.data : "", body.len);
    cxla_strbuf_puts(out, "}\n");
    const char *args = F("(%s *)out[0], (const %s *)in[0], (const %s *)in[1], (const %s *)in[2], "
                         "(const int64_t *)in[3]",
                         ot, xt, ot, ot);
    cpu_emit_kernel_entry(out, name, 1, args, NULL);
    cxla_status st = NULL;
    if (out->failed || body.failed || cpu_emit_fmt_failed())
        st = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s", instr->name);
    if (!st && out_info) {
        out_info->range = 1;
        out_info->cost = (double)total * (double)(cxla_type_storage(p.xt) + cxla_type_storage(p.t));
    }
    cpu_emit_buf_free(&body);
    cxla_arena_destroy(arena);
    return st;
}
