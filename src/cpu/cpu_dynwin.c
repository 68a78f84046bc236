/* Bounded dynamic shapes: reduce-window, select-and-scatter and float dots over their
 * run-time sizes, as steps of their own (S_MOVE) in place of the interpreter's handler.
 * docs/semantics.md, "Bounded dynamic shapes run as steps too".
 *
 * The interpreter (src/interp/interp_dynamic.c) cuts the operands to their sizes and runs
 * the static operation on the cut arrays. So a window at the end of a dynamic size meets
 * the window's padding (reduce-window folds the init value there; select-and-scatter
 * skips it), never the buffer's padding, and a dot adds the products of the actual
 * contracting size only, in its order. These steps do the same over the buffers at their
 * bounds (row-major), visiting only the elements below the sizes:
 *
 * - reduce-window of one input with a reducer the interpreter recognizes: its typed loop
 *   (interp_reduce_space) over window tables built from the cut sizes and the strides of
 *   the bounds, so each window folds in the interpreter's order from the init value;
 * - select-and-scatter with a recognized comparator as select and a recognized reducer as
 *   scatter: the interpreter's scan (the first position inside the operand, replaced when
 *   select(selected, current) is false) and its typed scatter;
 * - dots that no kernel at the bounds runs: of floats (f8 to f64, mixed types too) in
 *   exact math, each result element the sum of its products in ascending flattened
 *   contraction index from zero, in f32 (f64 where the result or an operand is f64),
 *   rounded once to the result type: the interpreter's order at the actual contracting
 *   size, bit for bit (a kernel at the bounds would add the padding's zeros, and oneDNN
 *   sums in another order); of integers and pred the emitter writes no kernel for
 *   (sub-byte operands, mixed types, a pred result), in 64-bit two's complement with the
 *   operands converted as the interpreter converts them, wrapped to the result's width
 *   (pred: != 0); of complex results (c64, c128; real, integer or pred operands too), in
 *   c64 pairs (c128 where the result or an operand is c128 or f64), each product formed
 *   from four rounded real products and its parts added in ascending contraction index
 *   from (+0, +0), rounded once to the result type: the interpreter's gemm_c64 / gemm_c128
 *   at the actual contracting size; PACKED_NIBBLE on both operands of an integer result
 *   as the interpreter's two passes (low nibbles, then high ones, into the same wrapping
 *   sums).
 *
 * Wherever the interpreter reports an error (sizes that disagree, a source that does not
 * fit the windows, a result the declared shape cannot hold), the step says so
 * (*out_handler) and the caller runs the interpreter's handler, which reports it in its
 * own words. The result's padding is zero, as the interpreter's results have it. */
#include <stdlib.h>
#include <string.h>

#include "base/floats.h"
#include "cpu/cpu_internal.h"
#include "cpu/cpu_steps.h"
#include "cpu/emit_internal.h"
#include "exec/dynamic.h"
#include "interp/interp_reduce.h"
#include "literal/literal_internal.h"

static void strides_of(int64_t rank, const int64_t *dims, int64_t *out) {
    int64_t st = 1;
    for (int64_t d = rank - 1; d >= 0; d--) {
        out[d] = st;
        st *= dims[d];
    }
}

/* A bounded array. Every shape has rank CXLA_MAX_RANK at most (shape.c refuses more), so
 * the steps' sizes, strides and window tables live in arrays of that length: any rank
 * (issue 13; they were arrays of 8 before, and ranks over 8 took the handler). */
static bool bounded(const cxla_shape *s) {
    if (!cxla_type_is_array(s->type) || s->rank > CXLA_MAX_RANK) return false;
    for (int64_t d = 0; d < s->rank; d++)
        if (s->dims[d] < 0) return false;
    return true;
}

/* The element types of a dot this step takes: real floats (f8 included), integers of any
 * width (sub-byte ones one per byte), pred and complex numbers. */
static bool dot_type(cxla_type t) {
    return cxla_type_is_float(t) || cxla_type_is_integer(t) || t == CXLA_PRED ||
           cxla_type_is_complex(t);
}

/* How many operands of |in| ask for PACKED_NIBBLE products (the interpreter's two passes
 * over the nibbles of each element: both operands, an integer result; one operand, or
 * another result, is its error, which the handler reports); |out_count|: how many
 * precisions it gives. */
static int64_t packed_nibble(const cxla_instr *in, int64_t *out_count) {
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_OPERAND_PRECISION);
    int64_t packed = 0;
    *out_count = 0;
    if (!a || a->kind != CXLA_ATTR_KIND_PRECISIONS) return 0;
    *out_count = a->v.precisions.count;
    for (int64_t i = 0; i < a->v.precisions.count; i++)
        packed += a->v.precisions.items[i] == CXLA_PRECISION_PACKED_NIBBLE;
    return packed;
}

/* The window attribute of |in| for an operand of |rank| (none at rank 0 is allowed). */
static const cxla_window_dim *window_of(const cxla_instr *in, int64_t rank, bool *ok) {
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_WINDOW);
    *ok = a ? a->kind == CXLA_ATTR_KIND_WINDOW && a->v.window.rank == rank : rank == 0;
    if (!*ok || !a) return NULL;
    for (int64_t j = 0; j < rank; j++) {
        const cxla_window_dim *w = &a->v.window.dims[j];
        if (w->size < 1 || w->stride < 1 || w->lhs_dilation < 1 || w->rhs_dilation < 1)
            *ok = false; /* the interpreter's error */
    }
    return a->v.window.dims;
}

bool cpu_dynwin_ok(const cxla_instr *in) {
    const cxla_shape *ys = &in->shape;
    size_t elem = 0;
    if (!bounded(ys) || !cpu_whole_elements(ys, &elem)) return false;
    for (int64_t k = 0; k < in->operand_count; k++)
        if (!bounded(&in->operands[k]->shape) ||
            !cpu_whole_elements(&in->operands[k]->shape, &elem))
            return false;
    bool ok = false;
    switch (in->opcode) {
    case CXLA_OP_REDUCE_WINDOW: {
        if (in->operand_count != 2) return false;
        const cxla_shape *xs = &in->operands[0]->shape, *is = &in->operands[1]->shape;
        if (is->rank != 0 || xs->type != ys->type || is->type != ys->type || xs->rank != ys->rank)
            return false;
        window_of(in, xs->rank, &ok);
        const cxla_computation *comp = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
        interp_reducer kind = comp ? interp_match_reducer(comp) : INTERP_REDUCER_NONE;
        return ok && kind != INTERP_REDUCER_NONE && interp_reducer_supports(kind, xs->type);
    }
    case CXLA_OP_SELECT_AND_SCATTER: {
        if (in->operand_count != 3) return false;
        const cxla_shape *xs = &in->operands[0]->shape, *ss = &in->operands[1]->shape,
                         *is = &in->operands[2]->shape;
        if (is->rank != 0 || ss->type != ys->type || is->type != ys->type || ss->rank != xs->rank ||
            ys->rank != xs->rank)
            return false;
        window_of(in, xs->rank, &ok);
        const cxla_computation *sel = cxla_instr_called(in, CXLA_ATTR_SELECT);
        const cxla_computation *sc = cxla_instr_called(in, CXLA_ATTR_SCATTER);
        if (!ok || !sel || !sc) return false;
        interp_comparator cmp = interp_match_comparator(sel);
        interp_reducer kind = interp_match_reducer(sc);
        return cmp.direction != INTERP_DIR_NONE && cmp.type == xs->type &&
               kind != INTERP_REDUCER_NONE && interp_reducer_supports(kind, ys->type);
    }
    case CXLA_OP_DOT: {
        if (in->operand_count != 2 || !dot_type(ys->type) ||
            !dot_type(in->operands[0]->shape.type) || !dot_type(in->operands[1]->shape.type) ||
            cxla_instr_attr(in, CXLA_ATTR_SPARSITY))
            return false;
        int64_t nprec = 0, packed = packed_nibble(in, &nprec);
        if (packed && (packed != 2 || nprec != 2 || !cxla_type_is_integer(ys->type)))
            return false; /* the interpreter's error */
        int64_t nlb = 0, nrb = 0, nlc = 0, nrc = 0;
        cxla_instr_ints(in, CXLA_ATTR_LHS_BATCH_DIMS, &nlb);
        cxla_instr_ints(in, CXLA_ATTR_RHS_BATCH_DIMS, &nrb);
        cxla_instr_ints(in, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nlc);
        cxla_instr_ints(in, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nrc);
        /* Complex operands need a complex result (the interpreter's error otherwise). */
        bool cplx = cxla_type_is_complex(in->operands[0]->shape.type) ||
                    cxla_type_is_complex(in->operands[1]->shape.type);
        if (cplx && !cxla_type_is_complex(ys->type)) return false;
        return nlb == nrb && nlc == nrc &&
               ys->rank ==
                   in->operands[0]->shape.rank + in->operands[1]->shape.rank - nlb - 2 * nlc;
    }
    default: return false;
    }
}

/* The window's output size over a base of |size| elements (shape inference's rule; 0
 * when the window is larger than the padded base); false on overflow. */
static bool window_out(const cxla_window_dim *w, int64_t size, int64_t *out) {
    int64_t base = 0, padded, span, t;
    bool ok =
        size == 0 || (cxla_mul_i64(size - 1, w->lhs_dilation, &t) && cxla_add_i64(t, 1, &base));
    ok = ok && cxla_add_i64(base, w->pad_low, &padded) &&
         cxla_add_i64(padded, w->pad_high, &padded) &&
         cxla_mul_i64(w->size - 1, w->rhs_dilation, &span) && cxla_add_i64(span, 1, &span);
    if (!ok) return false;
    *out = padded >= span ? (padded - span) / w->stride + 1 : 0;
    return true;
}

/* The result against its declared shape, as the interpreter puts it back: a dynamic
 * dimension up to its bound, a static one at its size. */
static bool fits(const cxla_shape *ys, const int64_t *sizes) {
    for (int64_t d = 0; d < ys->rank; d++)
        if (exec_shape_dim_dynamic(ys, d) ? sizes[d] > ys->dims[d] : sizes[d] != ys->dims[d])
            return false;
    return true;
}

/* Window tables over a base of |sizes| stored at |strides| (the bounds'): for dimension j
 * and output position o, tab[j] + o * size_j holds the element offsets of the window (-1
 * outside the base: padding, holes, and the base's own padding past its size), as the
 * interpreter's window_tables_init builds them over the cut array. */
typedef struct wtables {
    int64_t rank, out[CXLA_MAX_RANK], wsize[CXLA_MAX_RANK];
    int64_t *tab[CXLA_MAX_RANK];
    const int64_t *cur[CXLA_MAX_RANK];
    interp_space space;
} wtables;

static void wtables_free(wtables *t) {
    for (int64_t j = 0; j < t->rank; j++) free(t->tab[j]);
}

static bool wtables_init(wtables *t, const cxla_window_dim *win, int64_t rank, const int64_t *sizes,
                         const int64_t *strides, const int64_t *out) {
    memset(t, 0, sizeof(*t));
    int64_t volume = 1;
    for (int64_t j = 0; j < rank; j++) {
        const cxla_window_dim *w = &win[j];
        t->out[j] = out[j];
        t->wsize[j] = w->size;
        volume *= w->size;
        t->tab[j] = malloc((size_t)(out[j] * w->size > 0 ? out[j] * w->size : 1) * sizeof(int64_t));
        t->rank = j + 1;
        if (!t->tab[j]) return false;
        for (int64_t o = 0; o < out[j]; o++)
            for (int64_t e = 0; e < w->size; e++) {
                /* Within the padded base by construction of |out|; the padding may be
                 * extreme. */
                int64_t pos, off = -1;
                bool in =
                    !__builtin_sub_overflow(o * w->stride + e * w->rhs_dilation, w->pad_low, &pos);
                if (in && pos >= 0 && pos % w->lhs_dilation == 0 &&
                    pos / w->lhs_dilation < sizes[j])
                    off = pos / w->lhs_dilation * strides[j];
                t->tab[j][o * w->size + e] = off;
            }
    }
    t->rank = rank;
    t->space = (interp_space){.rank = rank, .count = volume, .sizes = t->wsize, .offsets = t->cur};
    return true;
}

static void wtables_at(wtables *t, const int64_t *index) {
    for (int64_t j = 0; j < t->rank; j++) t->cur[j] = t->tab[j] + index[j] * t->wsize[j];
}

static bool next(int64_t rank, const int64_t *sizes, int64_t *index) {
    for (int64_t j = rank - 1; j >= 0; j--) {
        if (++index[j] < sizes[j]) return true;
        index[j] = 0;
    }
    return false;
}

static bool any_zero(int64_t rank, const int64_t *sizes) {
    for (int64_t j = 0; j < rank; j++)
        if (sizes[j] == 0) return true;
    return false;
}

#define OOM(in) exec_error(in, CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

static cxla_status reduce_window(const cxla_instr *in, char *y, const void *const *ins,
                                 const int64_t *const *opz, int64_t *out_sizes, bool *out_handler) {
    const cxla_shape *xs = &in->operands[0]->shape, *ys = &in->shape;
    int64_t rank = xs->rank;
    bool ok = false;
    const cxla_window_dim *win = window_of(in, rank, &ok);
    for (int64_t j = 0; j < rank; j++)
        if (!window_out(&win[j], opz[0][j], &out_sizes[j])) ok = false;
    if (!ok || !fits(ys, out_sizes)) {
        *out_handler = true;
        return NULL;
    }
    size_t elem = cxla_type_storage(ys->type);
    int64_t xstr[CXLA_MAX_RANK], ystr[CXLA_MAX_RANK];
    strides_of(rank, xs->dims, xstr);
    strides_of(rank, ys->dims, ystr);
    if (any_zero(rank, out_sizes)) return NULL;
    wtables t;
    if (!wtables_init(&t, win, rank, opz[0], xstr, out_sizes)) {
        wtables_free(&t);
        return OOM(in);
    }
    interp_reducer kind = interp_match_reducer(cxla_instr_called(in, CXLA_ATTR_TO_APPLY));
    int64_t index[CXLA_MAX_RANK] = {0};
    do {
        int64_t off = 0;
        for (int64_t j = 0; j < rank; j++) off += index[j] * ystr[j];
        char *acc = y + (size_t)off * elem;
        wtables_at(&t, index);
        memcpy(acc, ins[1], elem);
        interp_reduce_space(kind, xs->type, ins[0], 0, &t.space, ins[1], acc);
    } while (next(rank, out_sizes, index));
    wtables_free(&t);
    return NULL;
}

static cxla_status select_and_scatter(const cxla_instr *in, char *y, const void *const *ins,
                                      const int64_t *const *opz, int64_t *out_sizes,
                                      bool *out_handler) {
    const cxla_shape *xs = &in->operands[0]->shape, *ss = &in->operands[1]->shape;
    int64_t rank = xs->rank, wout[CXLA_MAX_RANK];
    bool ok = false;
    const cxla_window_dim *win = window_of(in, rank, &ok);
    /* The windows over the cut operand must be the cut source's elements. */
    for (int64_t j = 0; j < rank; j++)
        if (!window_out(&win[j], opz[0][j], &wout[j]) || wout[j] != opz[1][j]) ok = false;
    for (int64_t j = 0; j < rank; j++) out_sizes[j] = opz[0][j];
    if (!ok || !fits(&in->shape, out_sizes)) {
        *out_handler = true;
        return NULL;
    }
    cxla_type t = in->shape.type;
    size_t elem = cxla_type_storage(t), xelem = cxla_type_storage(xs->type);
    int64_t xstr[CXLA_MAX_RANK], sstr[CXLA_MAX_RANK];
    strides_of(rank, xs->dims, xstr); /* the result's too: it has the operand's bounds */
    strides_of(rank, ss->dims, sstr);
    if (any_zero(rank, out_sizes)) return NULL;
    int64_t index[CXLA_MAX_RANK] = {0};
    do { /* the init value over the cut result */
        int64_t off = 0;
        for (int64_t j = 0; j < rank; j++) off += index[j] * xstr[j];
        memcpy(y + (size_t)off * elem, ins[2], elem);
    } while (next(rank, out_sizes, index));
    if (any_zero(rank, wout)) return NULL;
    wtables tb;
    if (!wtables_init(&tb, win, rank, opz[0], xstr, wout)) {
        wtables_free(&tb);
        return OOM(in);
    }
    interp_comparator cmp = interp_match_comparator(cxla_instr_called(in, CXLA_ATTR_SELECT));
    interp_reducer kind = interp_match_reducer(cxla_instr_called(in, CXLA_ATTR_SCATTER));
    const char *x = ins[0];
    const interp_space one = {.rank = 0, .count = 1};
    memset(index, 0, sizeof(index));
    do {
        wtables_at(&tb, index);
        int64_t soff = 0, selected = -1;
        for (int64_t j = 0; j < rank; j++) soff += index[j] * sstr[j];
        interp_cursor c;
        interp_cursor_seek(&tb.space, 0, &c);
        for (int64_t r = 0; r < tb.space.count; r++) {
            if (!c.outside) {
                if (selected < 0)
                    selected = c.offset;
                else if (!interp_comparator_holds(&cmp, x + (size_t)selected * xelem,
                                                  x + (size_t)c.offset * xelem))
                    selected = c.offset;
            }
            if (r + 1 < tb.space.count) interp_cursor_next(&tb.space, &c);
        }
        if (selected >= 0)
            interp_reduce_space(kind, t, ins[1], soff, &one, ins[2], y + (size_t)selected * elem);
    } while (next(rank, wout, index));
    wtables_free(&tb);
    return NULL;
}

/* ---- reduce-window at the bounds, its padding filled ------------------------------------ */

bool cpu_dynwin_fill_ok(const cxla_instr *in) {
    int64_t count = in->operand_count, n = count / 2;
    /* The kernel at the bounds is emit_window.c's, whose reducer gives one result per input. */
    if (in->opcode != CXLA_OP_REDUCE_WINDOW || count < 2 || count % 2 ||
        n > CPU_EMIT_MAX_REDUCER_RESULTS)
        return false;
    if (cpu_dynwin_ok(in)) return false; /* a step of its own over the sizes */
    const cxla_shape *x0 = &in->operands[0]->shape;
    size_t elem = 0;
    bool dynamic = false, ok = false;
    for (int64_t k = 0; k < count; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        if (!bounded(s) || !cpu_whole_elements(s, &elem)) return false;
        if (k >= n) {
            if (s->rank != 0) return false;
            continue;
        }
        if (s->rank != x0->rank) return false;
        for (int64_t d = 0; d < s->rank; d++) {
            if (s->dims[d] != x0->dims[d]) return false;
            dynamic = dynamic || exec_shape_dim_dynamic(s, d);
        }
    }
    int64_t leaves = in->shape.type == CXLA_TUPLE ? in->shape.tuple_count : 1;
    if (leaves != n || (n > 1) != (in->shape.type == CXLA_TUPLE)) return false;
    for (int64_t e = 0; e < leaves; e++) {
        const cxla_shape *ys = n > 1 ? &in->shape.elements[e] : &in->shape;
        if (!bounded(ys) || !cpu_whole_elements(ys, &elem) || ys->rank != x0->rank) return false;
    }
    window_of(in, x0->rank, &ok);
    return ok && dynamic;
}

void cpu_dynwin_fill_sizes(const cxla_instr *in, const int64_t *const *opz,
                           int64_t *const *out_sizes, bool *out_handler) {
    int64_t n = in->operand_count / 2, rank = in->operands[0]->shape.rank;
    bool ok = false;
    const cxla_window_dim *win = window_of(in, rank, &ok);
    *out_handler = !ok;
    /* The interpreter cuts each input to its own sizes: inputs of different sizes are the
     * static operation's error. */
    for (int64_t k = 1; k < n; k++)
        for (int64_t d = 0; d < rank; d++)
            if (opz[k][d] != opz[0][d]) *out_handler = true;
    for (int64_t e = 0; e < n && !*out_handler; e++) {
        const cxla_shape *ys = in->shape.type == CXLA_TUPLE ? &in->shape.elements[e] : &in->shape;
        for (int64_t d = 0; d < rank; d++)
            if (!window_out(&win[d], opz[0][d], &out_sizes[e][d])) *out_handler = true;
        if (!*out_handler && !fits(ys, out_sizes[e])) *out_handler = true;
    }
}

/* ---- dot ----------------------------------------------------------------------------- */

/* The offsets of the elements of dimensions |which| (row-major over them, the last
 * fastest, as the interpreter flattens them) at their |sizes|, over |strides|. */
static void offsets(int64_t n, const int64_t *which, const int64_t *sizes, const int64_t *strides,
                    int64_t *out) {
    int64_t count = 1, idx[CXLA_MAX_RANK] = {0};
    for (int64_t i = 0; i < n; i++) count *= sizes[which[i]];
    for (int64_t e = 0; e < count; e++) {
        int64_t off = 0;
        for (int64_t i = 0; i < n; i++) off += idx[i] * strides[which[i]];
        out[e] = off;
        for (int64_t i = n - 1; i >= 0 && ++idx[i] == sizes[which[i]]; i--) idx[i] = 0;
    }
}

/* The interpreter's compute type of a dot (src/interp/interp_linalg.c, pick_kind): f32 for a
 * float result (f64 where the result or an operand is f64), c64 pairs for a complex result
 * (c128 where the result or an operand is c128 or f64), 64-bit two's complement (U64 here)
 * for an integer or pred result. */
static cxla_type compute_type(cxla_type result, cxla_type lhs, cxla_type rhs) {
    if (cxla_type_is_complex(result))
        return result == CXLA_C128 || lhs == CXLA_C128 || rhs == CXLA_C128 || lhs == CXLA_F64 ||
                       rhs == CXLA_F64
                   ? CXLA_C128
                   : CXLA_C64;
    if (!cxla_type_is_float(result)) return CXLA_U64;
    return result == CXLA_F64 || lhs == CXLA_F64 || rhs == CXLA_F64 ? CXLA_F64 : CXLA_F32;
}

/* One operand element of |from| at |src| as a value of compute type |ct| for result type
 * |rt|, as the interpreter loads it: floats widened exactly; integers of a float result
 * rounded to the result type first; integers and pred of an integer result sign- or
 * zero-extended; anything else (a float of an integer result, anything of a pred result)
 * converted to the result type first. |nibble| 1 or 2 (PACKED_NIBBLE, an integer result):
 * the value converted to the result type, then its low nibble (sign-extended when the
 * result is signed) or the rest shifted right by 4 (arithmetically when signed). */
static inline void load_compute(cxla_type from, const void *src, cxla_type ct, cxla_type rt,
                                int nibble, void *dst) {
    unsigned char tmp[16];
    if (ct == CXLA_C64 || ct == CXLA_C128) { /* floats and complex values widened exactly */
        if (from == ct) {                    /* c64 into c64, c128 into c128 */
            memcpy(dst, src, ct == CXLA_C64 ? 8 : 16);
            return;
        }
        double re, im;
        if (!cxla_type_is_float(from) && !cxla_type_is_complex(from)) {
            cxla_convert_element(from, src, rt, tmp);
            from = rt;
            src = tmp;
        }
        cxla_load_c128(from, src, &re, &im);
        if (ct == CXLA_C64) {
            float v[2] = {(float)re, (float)im};
            memcpy(dst, v, sizeof v);
        } else {
            double v[2] = {re, im};
            memcpy(dst, v, sizeof v);
        }
        return;
    }
    if (from == ct && ct != CXLA_U64) { /* f32 into f32, f64 into f64 */
        memcpy(dst, src, ct == CXLA_F32 ? 4 : 8);
        return;
    }
    if (ct != CXLA_U64) {
        if (!cxla_type_is_float(from)) {
            cxla_convert_element(from, src, rt, tmp);
            from = rt;
            src = tmp;
        }
        if (ct == CXLA_F32) {
            cxla_floats_convert(from, src, CXLA_F32, dst, 1); /* exact */
        } else {
            double v = cxla_load_f64(from, src);
            memcpy(dst, &v, 8);
        }
        return;
    }
    bool direct = !nibble && rt != CXLA_PRED && (cxla_type_is_integer(from) || from == CXLA_PRED);
    if (!direct) {
        cxla_convert_element(from, src, rt, tmp);
        from = rt;
        src = tmp;
    }
    uint64_t v =
        cxla_type_is_unsigned(from) ? cxla_load_u64(from, src) : (uint64_t)cxla_load_s64(from, src);
    if (nibble) {
        bool sign = !cxla_type_is_unsigned(rt);
        if (nibble == 1) {
            uint64_t lo = v & 15u;
            v = sign && lo >= 8 ? lo - 16u : lo; /* wraps to the negative value */
        } else {
            int64_t sv = (int64_t)v;
            v = sign ? (uint64_t)(sv >= 0 ? sv >> 4 : ~(~sv >> 4)) : v >> 4;
        }
    }
    memcpy(dst, &v, 8);
}

/* One sum of compute type |ct| stored as result type |rt|: rounded once to nearest even,
 * integers wrapped to their width, pred != 0 (the interpreter's narrow). */
static inline void store_result(cxla_type ct, const void *src, cxla_type rt, void *dst) {
    if (ct == rt) {
        memcpy(dst, src, cxla_type_storage(ct));
    } else if (ct == CXLA_C64) {
        float v[2];
        memcpy(v, src, sizeof v);
        cxla_store_c128(rt, dst, v[0], v[1]);
    } else if (ct == CXLA_C128) {
        double v[2];
        memcpy(v, src, sizeof v);
        cxla_store_c128(rt, dst, v[0], v[1]);
    } else if (ct == CXLA_U64) {
        uint64_t v;
        memcpy(&v, src, 8);
        cxla_store_u64(rt, dst, v);
    } else if (ct == CXLA_F32) {
        cxla_floats_convert(CXLA_F32, src, rt, dst, 1);
    } else {
        double v;
        memcpy(&v, src, 8);
        cxla_store_f64(rt, dst, v);
    }
}

/* The products of one batch, [M][K] x [K][N] into [M][N] (c zeroed by the caller), each
 * element summed in ascending k from zero: blocks of 4 rows x 16 columns keep their sums
 * in registers over all of k (the blocks only reorder independent sums), the rest row by
 * row. */
#define DEFINE_GEMM(T, NAME)                                                                       \
    static void gemm_##NAME(int64_t M, int64_t N, int64_t K, const T *restrict a,                  \
                            const T *restrict b, T *restrict c) {                                  \
        int64_t i = 0;                                                                             \
        for (; i + 4 <= M; i += 4) {                                                               \
            int64_t j = 0;                                                                         \
            for (; j + 16 <= N; j += 16) {                                                         \
                T s0[16] = {0}, s1[16] = {0}, s2[16] = {0}, s3[16] = {0};                          \
                for (int64_t k = 0; k < K; k++) {                                                  \
                    const T *restrict bk = b + k * N + j;                                          \
                    const T a0 = a[i * K + k], a1 = a[(i + 1) * K + k];                            \
                    const T a2 = a[(i + 2) * K + k], a3 = a[(i + 3) * K + k];                      \
                    for (int t = 0; t < 16; t++) {                                                 \
                        s0[t] += a0 * bk[t];                                                       \
                        s1[t] += a1 * bk[t];                                                       \
                        s2[t] += a2 * bk[t];                                                       \
                        s3[t] += a3 * bk[t];                                                       \
                    }                                                                              \
                }                                                                                  \
                for (int t = 0; t < 16; t++) {                                                     \
                    c[i * N + j + t] = s0[t];                                                      \
                    c[(i + 1) * N + j + t] = s1[t];                                                \
                    c[(i + 2) * N + j + t] = s2[t];                                                \
                    c[(i + 3) * N + j + t] = s3[t];                                                \
                }                                                                                  \
            }                                                                                      \
            for (int64_t r = i; r < i + 4 && j < N; r++)                                           \
                for (int64_t k = 0; k < K; k++)                                                    \
                    for (int64_t jj = j; jj < N; jj++)                                             \
                        c[r * N + jj] += a[r * K + k] * b[k * N + jj];                             \
        }                                                                                          \
        for (; i < M; i++)                                                                         \
            for (int64_t k = 0; k < K; k++) {                                                      \
                const T v = a[i * K + k];                                                          \
                for (int64_t j = 0; j < N; j++) c[i * N + j] += v * b[k * N + j];                  \
            }                                                                                      \
    }
DEFINE_GEMM(float, f32)
DEFINE_GEMM(double, f64)
DEFINE_GEMM(uint64_t, u64) /* integers: wrapping sums, the same in any order */
#undef DEFINE_GEMM

/* Complex, interleaved (re, im): each product formed from four rounded real products, then
 * its parts added, in ascending k, as the interpreter's gemm_c64 / gemm_c128 do. */
#define DEFINE_GEMM_COMPLEX(T, NAME)                                                               \
    static void gemm_##NAME(int64_t M, int64_t N, int64_t K, const T *restrict a,                  \
                            const T *restrict b, T *restrict c) {                                  \
        for (int64_t i = 0; i < M; i++)                                                            \
            for (int64_t k = 0; k < K; k++) {                                                      \
                const T ar = a[2 * (i * K + k)], ai = a[2 * (i * K + k) + 1];                      \
                const T *restrict bk = b + 2 * k * N;                                              \
                T *restrict ci = c + 2 * i * N;                                                    \
                for (int64_t j = 0; j < N; j++) {                                                  \
                    const T br = bk[2 * j], bi = bk[2 * j + 1];                                    \
                    const T pr = ar * br - ai * bi, pi = ar * bi + ai * br;                        \
                    ci[2 * j] += pr;                                                               \
                    ci[2 * j + 1] += pi;                                                           \
                }                                                                                  \
            }                                                                                      \
    }
DEFINE_GEMM_COMPLEX(float, c64)
DEFINE_GEMM_COMPLEX(double, c128)
#undef DEFINE_GEMM_COMPLEX

/* c += a x b in compute type |ct| (one batch, one pass). */
static void gemm_pass(cxla_type ct, int64_t M, int64_t N, int64_t K, const char *a, const char *b,
                      char *c) {
    if (ct == CXLA_C64)
        gemm_c64(M, N, K, (const float *)(const void *)a, (const float *)(const void *)b,
                 (float *)(void *)c);
    else if (ct == CXLA_C128)
        gemm_c128(M, N, K, (const double *)(const void *)a, (const double *)(const void *)b,
                  (double *)(void *)c);
    else if (ct == CXLA_F64)
        gemm_f64(M, N, K, (const double *)(const void *)a, (const double *)(const void *)b,
                 (double *)(void *)c);
    else if (ct == CXLA_U64)
        gemm_u64(M, N, K, (const uint64_t *)(const void *)a, (const uint64_t *)(const void *)b,
                 (uint64_t *)(void *)c);
    else
        gemm_f32(M, N, K, (const float *)(const void *)a, (const float *)(const void *)b,
                 (float *)(void *)c);
}

static cxla_status dot(const cxla_instr *in, char *y, const void *const *ins,
                       const int64_t *const *opz, int64_t *out_sizes, bool *out_handler) {
    const cxla_shape *ls = &in->operands[0]->shape, *rs = &in->operands[1]->shape, *ys = &in->shape;
    int64_t *outs[1] = {out_sizes};
    cxla_status s = exec_dynamic_sizes(in, opz, outs);
    if (s) { /* sizes that disagree: the interpreter's error */
        cxla_status_free(s);
        *out_handler = true;
        return NULL;
    }
    if (!fits(ys, out_sizes)) {
        *out_handler = true;
        return NULL;
    }
    int64_t nb = 0, nc = 0, nrb = 0, nrc = 0;
    const int64_t *lb = cxla_instr_ints(in, CXLA_ATTR_LHS_BATCH_DIMS, &nb);
    const int64_t *rb = cxla_instr_ints(in, CXLA_ATTR_RHS_BATCH_DIMS, &nrb);
    const int64_t *lc = cxla_instr_ints(in, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nc);
    const int64_t *rc = cxla_instr_ints(in, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nrc);
    if (nb != nrb || nc != nrc) return exec_error(in, CXLA_STATUS_INTERNAL, "bad dot dimensions");
    /* The cut sizes, lined up: a static batch or contracting dimension is cut to the
     * dynamic one's size (exec_dynamic_sizes checked that two dynamic ones agree). */
    int64_t lz[CXLA_MAX_RANK], rz[CXLA_MAX_RANK];
    for (int64_t d = 0; d < ls->rank; d++) lz[d] = opz[0][d];
    for (int64_t d = 0; d < rs->rank; d++) rz[d] = opz[1][d];
    for (int p = 0; p < 2; p++) {
        const int64_t *l = p ? lc : lb, *r = p ? rc : rb;
        for (int64_t i = 0; i < (p ? nc : nb); i++) {
            int64_t v = lz[l[i]] < rz[r[i]] ? lz[l[i]] : rz[r[i]];
            lz[l[i]] = rz[r[i]] = v;
        }
    }
    int64_t lf[CXLA_MAX_RANK], rf[CXLA_MAX_RANK], nlf = 0, nrf = 0;
    for (int side = 0; side < 2; side++) {
        const cxla_shape *xs = side ? rs : ls;
        const int64_t *b = side ? rb : lb, *c = side ? rc : lc;
        for (int64_t d = 0; d < xs->rank; d++) {
            bool used = false;
            for (int64_t i = 0; i < nb; i++) used = used || b[i] == d;
            for (int64_t i = 0; i < nc; i++) used = used || c[i] == d;
            if (!used) (side ? rf : lf)[side ? nrf++ : nlf++] = d;
        }
    }
    int64_t B = 1, M = 1, N = 1, K = 1;
    for (int64_t i = 0; i < nb; i++) B *= lz[lb[i]];
    for (int64_t i = 0; i < nc; i++) K *= lz[lc[i]];
    for (int64_t i = 0; i < nlf; i++) M *= lz[lf[i]];
    for (int64_t i = 0; i < nrf; i++) N *= rz[rf[i]];
    if (B * M * N == 0) return NULL;
    cxla_type t = ys->type, lt = ls->type, rt = rs->type;
    cxla_type ct = compute_type(t, lt, rt);
    size_t cs = cxla_type_storage(ct), elem = cxla_type_storage(t);
    size_t lelem = cxla_type_storage(lt), relem = cxla_type_storage(rt);
    int64_t lstr[CXLA_MAX_RANK], rstr[CXLA_MAX_RANK], ystr[CXLA_MAX_RANK];
    strides_of(ls->rank, ls->dims, lstr);
    strides_of(rs->rank, rs->dims, rstr);
    strides_of(ys->rank, ys->dims, ystr);
    int64_t *tab = malloc((size_t)(2 * B + M + N + 2 * K + B + M + N) * sizeof(int64_t));
    char *a = malloc((size_t)(M * K > 0 ? M * K : 1) * cs);
    char *b = malloc((size_t)(K * N > 0 ? K * N : 1) * cs);
    char *c = malloc((size_t)(M * N) * cs);
    if (!tab || !a || !b || !c) {
        free(tab);
        free(a);
        free(b);
        free(c);
        return OOM(in);
    }
    int64_t *lbo = tab, *rbo = lbo + B, *mo = rbo + B, *no = mo + M, *lko = no + N, *rko = lko + K,
            *ybo = rko + K, *ymo = ybo + B, *yno = ymo + M;
    offsets(nb, lb, lz, lstr, lbo);
    offsets(nb, rb, rz, rstr, rbo);
    offsets(nlf, lf, lz, lstr, mo);
    offsets(nrf, rf, rz, rstr, no);
    offsets(nc, lc, lz, lstr, lko);
    offsets(nc, rc, rz, rstr, rko);
    /* The result's dimensions: batch, then lhs free, then rhs free. */
    int64_t yd[CXLA_MAX_RANK];
    for (int64_t d = 0; d < ys->rank; d++) yd[d] = d;
    offsets(nb, yd, out_sizes, ystr, ybo);
    offsets(nlf, yd + nb, out_sizes, ystr, ymo);
    offsets(nrf, yd + nb + nlf, out_sizes, ystr, yno);
    const char *lx = ins[0], *rx = ins[1];
    int64_t nprec = 0;
    int passes = packed_nibble(in, &nprec) ? 2 : 1; /* low nibbles, then high ones */
    for (int64_t bi = 0; bi < B; bi++) {
        memset(c, 0, (size_t)(M * N) * cs);
        for (int pass = 0; pass < passes; pass++) {
            int nibble = passes == 2 ? pass + 1 : 0;
            /* The operands of this batch in the compute type, packed as the interpreter
             * packs them ([M][K], [K][N]). */
            for (int64_t i = 0; i < M; i++)
                for (int64_t k = 0; k < K; k++)
                    load_compute(lt, lx + (size_t)(lbo[bi] + mo[i] + lko[k]) * lelem, ct, t, nibble,
                                 a + (size_t)(i * K + k) * cs);
            for (int64_t k = 0; k < K; k++)
                for (int64_t j = 0; j < N; j++)
                    load_compute(rt, rx + (size_t)(rbo[bi] + rko[k] + no[j]) * relem, ct, t, nibble,
                                 b + (size_t)(k * N + j) * cs);
            gemm_pass(ct, M, N, K, a, b, c);
        }
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++)
                store_result(ct, c + (size_t)(i * N + j) * cs, t,
                             y + (size_t)(ybo[bi] + ymo[i] + yno[j]) * elem);
    }
    free(tab);
    free(a);
    free(b);
    free(c);
    return NULL;
}

cxla_status cpu_dynwin_run(const cxla_instr *in, void *out, const void *const *ins,
                           const int64_t *const *opz, int64_t *out_sizes, bool *out_handler) {
    *out_handler = false;
    size_t total = 0;
    cxla_status s = cxla_shape_byte_size(&in->shape, &total);
    if (s) {
        cxla_status_free(s);
        return exec_error(in, CXLA_STATUS_INTERNAL, "a result of odd elements");
    }
    if (total) memset(out, 0, total); /* the result's padding is zero */
    switch (in->opcode) {
    case CXLA_OP_REDUCE_WINDOW: return reduce_window(in, out, ins, opz, out_sizes, out_handler);
    case CXLA_OP_SELECT_AND_SCATTER:
        return select_and_scatter(in, out, ins, opz, out_sizes, out_handler);
    case CXLA_OP_DOT: return dot(in, out, ins, opz, out_sizes, out_handler);
    default: return exec_error(in, CXLA_STATUS_INTERNAL, "not a dynamic window or dot step");
    }
}

/* ---- reduces with any reducer -------------------------------------------------------------- */

/* select-and-scatter with a dynamic operand or source that cpu_dynwin_ok leaves (a select
 * or scatter computation the interpreter does not recognize): bounded arrays of whole
 * elements, a window of the operand's rank. */
static bool sized_select_and_scatter_ok(const cxla_instr *in) {
    if (in->operand_count != 3 || cpu_dynwin_ok(in)) return false;
    size_t elem = 0;
    bool dynamic = false, ok = false;
    const cxla_shape *xs = &in->operands[0]->shape;
    for (int64_t k = 0; k < 3; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        if (!bounded(s) || !cpu_whole_elements(s, &elem) || s->rank != (k == 2 ? 0 : xs->rank))
            return false;
        for (int64_t d = 0; d < s->rank; d++) dynamic = dynamic || exec_shape_dim_dynamic(s, d);
    }
    if (!bounded(&in->shape) || !cpu_whole_elements(&in->shape, &elem) ||
        in->shape.rank != xs->rank)
        return false;
    window_of(in, xs->rank, &ok);
    return ok && dynamic;
}

bool cpu_dyn_sized_ok(const cxla_instr *in) {
    if (in->opcode == CXLA_OP_SELECT_AND_SCATTER) return sized_select_and_scatter_ok(in);
    if (in->opcode == CXLA_OP_SCATTER) return cpu_dyn_lib_sized_ok(in);
    int64_t count = in->operand_count, n = count / 2;
    if (in->opcode != CXLA_OP_REDUCE || count < 2 || count % 2) return false;
    if (cpu_dyn_reduce_ok(in) || cpu_bounds_kind(in, true) != B_STATIC) return false;
    const cxla_shape *xs = &in->operands[0]->shape;
    bool dynamic = false;
    size_t elem = 0;
    for (int64_t k = 0; k < count; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        if (!bounded(s) || !cpu_whole_elements(s, &elem)) return false;
        if (k >= n) {
            if (s->rank != 0) return false;
            continue;
        }
        if (s->rank != xs->rank) return false;
        for (int64_t d = 0; d < s->rank; d++) {
            if (s->dims[d] != xs->dims[d]) return false;
            dynamic = dynamic || exec_shape_dim_dynamic(s, d);
        }
    }
    const cxla_shape *ys = &in->shape;
    if (ys->type == CXLA_TUPLE) {
        if (ys->tuple_count != n) return false;
        for (int64_t i = 0; i < n; i++)
            if (!bounded(&ys->elements[i]) || !cpu_whole_elements(&ys->elements[i], &elem))
                return false;
    } else if (n != 1 || !bounded(ys) || !cpu_whole_elements(ys, &elem)) {
        return false;
    }
    return dynamic;
}

cxla_status cpu_dyn_sized_sizes(const cxla_instr *in, const int64_t *const *opz, int64_t *sizes,
                                int64_t *out_sizes, bool *out_handler) {
    if (in->opcode == CXLA_OP_SCATTER)
        return cpu_dyn_lib_scatter_sizes(in, opz, sizes, out_sizes, out_handler);
    if (in->opcode == CXLA_OP_SELECT_AND_SCATTER) {
        /* The operand's sizes, then the source's, which must be the windows' count over the
         * cut operand (the interpreter's error otherwise); the result has the operand's. */
        int64_t rank = in->operands[0]->shape.rank, wout = 0;
        bool ok = false;
        const cxla_window_dim *win = window_of(in, rank, &ok);
        *out_handler = !ok;
        for (int64_t j = 0; j < rank && ok; j++) {
            sizes[j] = out_sizes[j] = opz[0][j];
            sizes[rank + j] = opz[1][j];
            if (!window_out(&win[j], opz[0][j], &wout) || wout != opz[1][j]) *out_handler = true;
        }
        if (!*out_handler && !fits(&in->shape, out_sizes)) *out_handler = true;
        return NULL;
    }
    int64_t n = in->operand_count / 2;
    const cxla_shape *xs = &in->operands[0]->shape;
    *out_handler = false;
    /* The inputs lined up as the interpreter lines them up: two dynamic sizes must agree; a
     * static input is cut to a dynamic one's size. */
    for (int64_t d = 0; d < xs->rank; d++) {
        int64_t size = -1;
        for (int64_t i = 0; i < n; i++) {
            if (!exec_shape_dim_dynamic(&in->operands[i]->shape, d)) continue;
            if (size >= 0 && opz[i][d] != size) *out_handler = true;
            size = opz[i][d];
        }
        sizes[d] = size >= 0 ? size : xs->dims[d];
    }
    int64_t nd = 0, j = 0;
    const int64_t *rd = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    const cxla_shape *ys = in->shape.type == CXLA_TUPLE ? &in->shape.elements[0] : &in->shape;
    for (int64_t d = 0; d < xs->rank; d++) {
        bool reduced = false;
        for (int64_t i = 0; i < nd; i++) reduced = reduced || rd[i] == d;
        if (!reduced && j < ys->rank) out_sizes[j++] = sizes[d];
    }
    if (j != ys->rank) return exec_error(in, CXLA_STATUS_INTERNAL, "bad reduce dimensions");
    /* The results against their declared shapes, as the interpreter puts them back. */
    for (int64_t e = 0; e < (in->shape.type == CXLA_TUPLE ? n : 1); e++)
        if (!fits(in->shape.type == CXLA_TUPLE ? &in->shape.elements[e] : &in->shape, out_sizes))
            *out_handler = true;
    return NULL;
}
