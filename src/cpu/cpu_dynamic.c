/* Bounded dynamic shapes: the instructions that move elements by their run-time sizes
 * (reshape, concatenate, pad, reverse, dynamic-slice, dynamic-update-slice,
 * dynamic-reshape) as steps of their own (S_MOVE) over buffers at the bounds, in place of
 * the interpreter's handler. docs/semantics.md, "Bounded dynamic shapes run as steps too".
 *
 * Each step does what the interpreter does (src/interp/interp_dynamic.c): it cuts the
 * operands to their sizes, computes the result's sizes by the same rules
 * (exec_dynamic_sizes; dynamic-reshape's size operands), moves the elements of the cut
 * operation and leaves zeros in the result's padding. Wherever the interpreter would
 * report an error (sizes that disagree, a result dimension the sizes do not fit, a slice
 * larger than its operand's size, pad to a negative size, ...), the step says so
 * (*out_handler) and the caller runs the interpreter's handler, which reports it in the
 * interpreter's own words: the error paths stay the oracle's.
 *
 * The moves themselves (cpu_dyn_move) take plain C data, no IR: a result and its sources
 * as row-major arrays at their bounds with their sizes, and the operation's parameters. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_steps.h"
#include "exec/dynamic.h"
#include "interp/interp_gather.h"
#include "interp/interp_reduce.h"
#include "literal/literal_internal.h"

/* Whether dynamic-slice or dynamic-update-slice |in| takes its starts in XLA's older form,
 * one integer vector of the operand's rank (static: move_ok checked the index operands). */
static bool vector_starts(const cxla_instr *in) {
    int64_t first = in->opcode == CXLA_OP_DYNAMIC_SLICE ? 1 : 2;
    const cxla_shape *xs = &in->operands[0]->shape;
    if (in->operand_count != first + 1 || xs->rank == 0) return false;
    const cxla_shape *vs = &in->operands[first]->shape;
    return vs->rank == 1 && vs->dims[0] == xs->rank;
}

/* The start of dimension |d| of dynamic-slice or dynamic-update-slice |in| (operand
 * |first| on), from its scalars or its vector, as the interpreter loads them. */
static int64_t load_start(const cxla_instr *in, const void *const *ins, int64_t first, int64_t d) {
    int64_t start = 0;
    if (vector_starts(in)) {
        cxla_type t = in->operands[first]->shape.type;
        interp_load_indices(t, (const char *)ins[first] + (size_t)d * cxla_type_storage(t), 1,
                            &start);
    } else {
        interp_load_indices(in->operands[first + d]->shape.type, ins[first + d], 1, &start);
    }
    return start;
}

/* Whether |in| is a move of whole-byte elements over bounded shapes (any rank, any number
 * of operands: the descriptor is sized from the instruction). */
static bool move_ok(const cxla_instr *in) {
    switch (in->opcode) {
    case CXLA_OP_RESHAPE:
    case CXLA_OP_CONCATENATE:
    case CXLA_OP_PAD:
    case CXLA_OP_REVERSE:
    case CXLA_OP_DYNAMIC_SLICE:
    case CXLA_OP_DYNAMIC_UPDATE_SLICE:
    case CXLA_OP_DYNAMIC_RESHAPE: break;
    default: return false;
    }
    const cxla_shape *ys = &in->shape;
    size_t elem = 0, e2 = 0;
    if (!cxla_type_is_array(ys->type) || !cpu_whole_elements(ys, &elem) || in->operand_count < 1)
        return false;
    for (int64_t d = 0; d < ys->rank; d++)
        if (ys->dims[d] == CXLA_DIM_UNBOUNDED) return false;
    /* The arrays that move: all of them (concatenate), the operand and the update
     * (dynamic-update-slice), the operand and the padding value (pad), the operand. */
    int64_t moved = in->opcode == CXLA_OP_CONCATENATE            ? in->operand_count
                    : in->opcode == CXLA_OP_DYNAMIC_UPDATE_SLICE ? 2
                    : in->opcode == CXLA_OP_PAD                  ? 2
                                                                 : 1;
    if (moved > in->operand_count) return false;
    for (int64_t k = 0; k < in->operand_count; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        if (!cxla_type_is_array(s->type)) return false;
        for (int64_t d = 0; d < s->rank; d++)
            if (s->dims[d] == CXLA_DIM_UNBOUNDED) return false;
        if (k >= moved) { /* start indices, sizes: integer scalars (or one vector) */
            if (!cxla_type_is_integer(s->type) || !cxla_shape_is_static(s)) return false;
            continue;
        }
        if (s->type != ys->type || !cpu_whole_elements(s, &e2) || (e2 != elem && s->rank))
            return false;
    }
    /* Ranks that the moves below assume (shape inference checked them; the handler
     * reports anything else). */
    const cxla_shape *xs = &in->operands[0]->shape;
    switch (in->opcode) {
    case CXLA_OP_CONCATENATE:
        for (int64_t k = 0; k < in->operand_count; k++)
            if (in->operands[k]->shape.rank != ys->rank) return false;
        return true;
    case CXLA_OP_PAD: {
        const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_PADDING);
        if (!a || a->kind != CXLA_ATTR_KIND_PADDING || a->v.padding.rank != xs->rank ||
            xs->rank != ys->rank || in->operands[1]->shape.rank != 0)
            return false;
        for (int64_t d = 0; d < xs->rank; d++)
            if (a->v.padding.dims[d].interior < 0) return false;
        return true;
    }
    case CXLA_OP_DYNAMIC_SLICE:
    case CXLA_OP_DYNAMIC_UPDATE_SLICE: {
        int64_t first = in->opcode == CXLA_OP_DYNAMIC_SLICE ? 1 : 2;
        if (xs->rank != ys->rank) return false;
        if (in->opcode == CXLA_OP_DYNAMIC_UPDATE_SLICE && in->operands[1]->shape.rank != xs->rank)
            return false;
        /* One scalar per dimension, or XLA's older form: one vector of them. */
        if (vector_starts(in)) return true;
        if (in->operand_count - first != xs->rank) return false;
        for (int64_t k = first; k < in->operand_count; k++)
            if (in->operands[k]->shape.rank != 0) return false;
        return true;
    }
    case CXLA_OP_DYNAMIC_RESHAPE:
        if (in->operand_count != ys->rank + 1) return false;
        for (int64_t k = 1; k < in->operand_count; k++)
            if (in->operands[k]->shape.rank != 0) return false;
        return true;
    case CXLA_OP_REVERSE: return xs->rank == ys->rank && in->operand_count == 1;
    default: return in->operand_count == 1; /* reshape */
    }
}

bool cpu_dyn_move_ok(const cxla_instr *in) {
    return move_ok(in);
}

bool cpu_dyn_move_wide_ok(const cxla_instr *in) {
    return move_ok(in);
}

/* ---- the moves --------------------------------------------------------------------------- */

static void row_major_strides(int64_t rank, const int64_t *dims, int64_t *out) {
    int64_t st = 1;
    for (int64_t d = rank - 1; d >= 0; d--) {
        out[d] = st;
        st *= dims[d];
    }
}

static inline void put(char *dst, const char *src, size_t elem) {
    switch (elem) {
    case 1: *dst = *src; return;
    case 2: memcpy(dst, src, 2); return;
    case 4: memcpy(dst, src, 4); return;
    case 8: memcpy(dst, src, 8); return;
    case 16: memcpy(dst, src, 16); return;
    default: memcpy(dst, src, elem); return;
    }
}

/* Whether some dimension of |n| sizes is 0. */
static bool empty(int64_t rank, const int64_t *sizes) {
    for (int64_t d = 0; d < rank; d++)
        if (sizes[d] <= 0) return true;
    return false;
}

/* Fills |n| elements at |dst| with the element at |v|. */
static void fill(char *dst, const char *v, int64_t n, size_t elem) {
    for (int64_t j = 0; j < n; j++) put(dst + (size_t)j * elem, v, elem);
}

/* The reshapes: the cut source's elements in row-major order of its sizes are the cut
 * result's in row-major order of its sizes; copied in runs as long as both rows allow. */
static void reshape_rows(const cpu_dyn_desc *m, char *y, const int64_t *ystr, const int64_t *sstr,
                         int64_t *ri, int64_t *si) {
    int64_t rank = m->rank, xrank = m->src_rank[0], total = 1;
    const int64_t *xs = m->src_sizes;
    size_t elem = m->elem;
    for (int64_t d = 0; d < rank; d++) total *= m->sizes[d];
    for (int64_t d = 0; d < rank; d++) ri[d] = 0;
    for (int64_t d = 0; d < xrank; d++) si[d] = 0;
    int64_t rj = 0, sj = 0;
    int64_t rn = rank ? m->sizes[rank - 1] : 1, sn = xrank ? xs[xrank - 1] : 1;
    while (total > 0) {
        int64_t yoff = rj, soff = sj;
        for (int64_t d = 0; d + 1 < rank; d++) yoff += ri[d] * ystr[d];
        for (int64_t d = 0; d + 1 < xrank; d++) soff += si[d] * sstr[d];
        int64_t chunk = rn - rj < sn - sj ? rn - rj : sn - sj;
        if (chunk > total) chunk = total;
        memcpy(y + (size_t)yoff * elem, m->src[0] + (size_t)soff * elem, (size_t)chunk * elem);
        rj += chunk;
        sj += chunk;
        total -= chunk;
        if (rj == rn) {
            rj = 0;
            for (int64_t d = rank - 2; d >= 0 && ++ri[d] == m->sizes[d]; d--) ri[d] = 0;
        }
        if (sj == sn) {
            sj = 0;
            for (int64_t d = xrank - 2; d >= 0 && ++si[d] == xs[d]; d--) si[d] = 0;
        }
    }
}

/* One row of the result (the last dimension, |n| elements at |row|) at the outer index
 * |idx| (dimensions 0 .. rank-2); source k's strides at |sstr| + k * m->width. */
static void move_row(const cpu_dyn_desc *m, char *row, const int64_t *idx, int64_t n,
                     const int64_t *sstr) {
    int64_t last = m->rank - 1, w = m->width;
    size_t elem = m->elem;
    const int64_t *xs = m->src_sizes, *zs = m->src_sizes; /* source k's: zs + k * w */
    const int64_t *s0 = sstr, *s1 = sstr + w;
    switch (m->op) {
    case CPU_DYN_RESHAPE: return; /* reshape_rows */
    case CPU_DYN_CONCAT: {
        int64_t c = m->dim;
        if (c != last) {
            int64_t at = idx[c], k = 0, off = 0;
            while (k < m->count - 1 && at >= zs[k * w + c]) at -= zs[w * k++ + c];
            for (int64_t d = 0; d < last; d++) off += (d == c ? at : idx[d]) * sstr[k * w + d];
            memcpy(row, m->src[k] + (size_t)off * elem, (size_t)n * elem);
            return;
        }
        int64_t pos = 0;
        for (int64_t k = 0; k < m->count; k++) {
            int64_t off = 0, len = zs[k * w + last];
            for (int64_t d = 0; d < last; d++) off += idx[d] * sstr[k * w + d];
            if (len > 0)
                memcpy(row + (size_t)pos * elem, m->src[k] + (size_t)off * elem,
                       (size_t)len * elem);
            pos += len;
        }
        return;
    }
    case CPU_DYN_PAD: {
        int64_t off = 0;
        for (int64_t d = 0; d < last; d++) {
            int64_t p = idx[d] - m->lo[d], every = m->interior[d] + 1;
            if (p < 0 || p % every != 0 || p / every >= xs[d]) {
                fill(row, m->src[1], n, elem); /* a row of padding */
                return;
            }
            off += p / every * s0[d];
        }
        int64_t lo = m->lo[last], every = m->interior[last] + 1;
        const char *x = m->src[0] + (size_t)off * elem;
        if (every == 1) { /* the value's run, the padding value around it */
            int64_t a = lo < 0 ? 0 : lo > n ? n : lo, b = lo + xs[last];
            b = b < a ? a : b > n ? n : b;
            fill(row, m->src[1], a, elem);
            if (b > a)
                memcpy(row + (size_t)a * elem, x + (size_t)(a - lo) * elem, (size_t)(b - a) * elem);
            fill(row + (size_t)b * elem, m->src[1], n - b, elem);
            return;
        }
        for (int64_t j = 0; j < n; j++) {
            int64_t p = j - lo;
            bool in = p >= 0 && p % every == 0 && p / every < xs[last];
            put(row + (size_t)j * elem, in ? x + (size_t)(p / every) * elem : m->src[1], elem);
        }
        return;
    }
    case CPU_DYN_REVERSE: {
        int64_t off = 0;
        for (int64_t d = 0; d < last; d++)
            off += (m->flip[d] ? xs[d] - 1 - idx[d] : idx[d]) * s0[d];
        const char *x = m->src[0] + (size_t)off * elem;
        if (!m->flip[last]) {
            memcpy(row, x, (size_t)n * elem);
            return;
        }
        for (int64_t j = 0; j < n; j++)
            put(row + (size_t)j * elem, x + (size_t)(xs[last] - 1 - j) * elem, elem);
        return;
    }
    case CPU_DYN_SLICE: {
        int64_t off = m->start[last];
        for (int64_t d = 0; d < last; d++) off += (m->start[d] + idx[d]) * s0[d];
        memcpy(row, m->src[0] + (size_t)off * elem, (size_t)n * elem);
        return;
    }
    case CPU_DYN_UPDATE: {
        int64_t xoff = 0, uoff = 0;
        bool inside = true;
        for (int64_t d = 0; d < last; d++) {
            int64_t u = idx[d] - m->start[d];
            inside = inside && u >= 0 && u < zs[w + d];
            xoff += idx[d] * s0[d];
            uoff += u * s1[d];
        }
        memcpy(row, m->src[0] + (size_t)xoff * elem, (size_t)n * elem);
        int64_t len = zs[w + last];
        if (inside && len > 0)
            memcpy(row + (size_t)m->start[last] * elem, m->src[1] + (size_t)uoff * elem,
                   (size_t)len * elem);
        return;
    }
    }
}

void cpu_dyn_move(const cpu_dyn_desc *m, void *out) {
    int64_t rank = m->rank, w = m->width;
    size_t elem = m->elem;
    char *y = out;
    /* The descriptor's work area: the result's strides, the sources' (a row of |w| each),
     * then the indices (reshape_rows uses two rows). */
    int64_t *ystr = m->work, *sstr = ystr + w, *idx = sstr + m->count * w, *idx2 = idx + w;
    row_major_strides(rank, m->dims, ystr);
    int64_t total = 1;
    for (int64_t d = 0; d < rank; d++) total *= m->dims[d];
    /* Zero padding (the interpreter's results have zeros there), then the value. */
    if (total > 0) memset(y, 0, (size_t)total * elem);
    if (empty(rank, m->sizes)) return;
    for (int64_t k = 0; k < m->count; k++)
        row_major_strides(m->src_rank[k], m->src_dims + k * w, sstr + k * w);
    if (m->op == CPU_DYN_RESHAPE) {
        reshape_rows(m, y, ystr, sstr, idx, idx2);
        return;
    }
    if (rank == 0) { /* one element: the operand's, or the update's */
        put(y, m->op == CPU_DYN_UPDATE ? m->src[1] : m->src[0], elem);
        return;
    }
    int64_t n = m->sizes[rank - 1];
    for (int64_t d = 0; d < rank; d++) idx[d] = 0;
    for (;;) {
        int64_t yoff = 0;
        for (int64_t d = 0; d + 1 < rank; d++) yoff += idx[d] * ystr[d];
        move_row(m, y + (size_t)yoff * elem, idx, n, sstr);
        int64_t d = rank - 2;
        while (d >= 0 && ++idx[d] == m->sizes[d]) idx[d--] = 0;
        if (d < 0) break;
    }
}

void cpu_dyn_move_free(cpu_dyn_desc *m) {
    free(m->block);
    memset(m, 0, sizeof(*m));
}

/* The arrays of |m| for a result of rank |rank| and |count| sources of ranks up to
 * |width|, in one block (zeroed). */
static bool desc_alloc(cpu_dyn_desc *m, int64_t rank, int64_t count, int64_t width) {
    size_t r = (size_t)(rank ? rank : 1), c = (size_t)(count ? count : 1), w = (size_t)width;
    /* int64_t arrays: dims, sizes, lo, interior, start (rank each), src_rank (count),
     * src_dims, src_sizes (count * width each), work ((count + 4) * width); then the
     * pointers and the flags. */
    size_t ints = 5 * r + c + 2 * c * w + (c + 4) * w;
    size_t bytes = ints * sizeof(int64_t) + c * sizeof(const char *) + r * sizeof(bool);
    char *p = calloc(1, bytes);
    if (!p) return false;
    int64_t *q = (int64_t *)(void *)p;
    m->block = p;
    m->dims = q, q += r;
    m->sizes = q, q += r;
    m->lo = q, q += r;
    m->interior = q, q += r;
    m->start = q, q += r;
    m->src_rank = q, q += c;
    m->src_dims = q, q += c * w;
    m->src_sizes = q, q += c * w;
    m->work = q, q += (c + 4) * w;
    m->src = (const char **)(void *)q;
    m->flip = (bool *)(void *)(m->src + c);
    m->width = width;
    return true;
}

/* ---- from the instruction to the move -------------------------------------------------- */

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

cxla_status cpu_dyn_move_plan(const cxla_instr *in, const void *const *ins,
                              const int64_t *const *opz, cpu_dyn_desc *m, bool *out_handler) {
    const cxla_shape *ys = &in->shape;
    int64_t n = in->operand_count;
    *out_handler = false;
    memset(m, 0, sizeof(*m));
    bool padded = false;
    for (int64_t k = 0; k < n; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        for (int64_t d = 0; d < s->rank; d++) padded = padded || opz[k][d] < s->dims[d];
    }
    int64_t moved = in->opcode == CXLA_OP_CONCATENATE                                         ? n
                    : in->opcode == CXLA_OP_DYNAMIC_UPDATE_SLICE || in->opcode == CXLA_OP_PAD ? 2
                                                                                              : 1;
    if (moved > n) return exec_error(in, CXLA_STATUS_INTERNAL, "a move with too few operands");
    int64_t width = ys->rank > 0 ? ys->rank : 1;
    for (int64_t k = 0; k < moved; k++)
        if (in->operands[k]->shape.rank > width) width = in->operands[k]->shape.rank;
    if (!desc_alloc(m, ys->rank, moved, width))
        return exec_error(in, CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    m->rank = ys->rank;
    for (int64_t d = 0; d < ys->rank; d++) m->dims[d] = ys->dims[d];
    if (!cpu_whole_elements(ys, &m->elem)) {
        cpu_dyn_move_free(m);
        return exec_error(in, CXLA_STATUS_INTERNAL, "elements");
    }
    m->count = moved;
    for (int64_t k = 0; k < moved; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        m->src[k] = ins[k];
        m->src_rank[k] = s->rank;
        for (int64_t d = 0; d < s->rank; d++) {
            m->src_dims[k * width + d] = s->dims[d];
            m->src_sizes[k * width + d] = opz[k][d];
        }
    }
    const cxla_shape *xs = &in->operands[0]->shape;
    const int64_t *r = opz[0];
    switch (in->opcode) {
    case CXLA_OP_RESHAPE:
    case CXLA_OP_CONCATENATE:
    case CXLA_OP_REVERSE: {
        /* The interpreter's rules (its errors: the handler reports them). */
        int64_t *outs[1] = {m->sizes};
        cxla_status s = exec_dynamic_sizes(in, opz, outs);
        if (s) {
            cxla_status_free(s);
            *out_handler = true;
            return NULL;
        }
        if (in->opcode == CXLA_OP_CONCATENATE) {
            int64_t nd = 0;
            m->dim = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd)[0];
            m->op = CPU_DYN_CONCAT;
            /* The operands lined up in the other dimensions: their cut sizes are the
             * result's there (a static operand cut to a dynamic one's size). */
            for (int64_t k = 0; k < n; k++)
                for (int64_t d = 0; d < ys->rank; d++)
                    if (d != m->dim) m->src_sizes[k * width + d] = m->sizes[d];
        } else if (in->opcode == CXLA_OP_REVERSE) {
            int64_t nd = 0;
            const int64_t *dims = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
            for (int64_t i = 0; i < nd; i++) m->flip[dims[i]] = true;
            m->op = CPU_DYN_REVERSE;
        } else {
            m->op = CPU_DYN_RESHAPE;
        }
        return NULL;
    }
    case CXLA_OP_PAD: {
        const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_PADDING);
        m->op = CPU_DYN_PAD;
        for (int64_t d = 0; d < xs->rank; d++) {
            const cxla_pad_dim *p = &a->v.padding.dims[d];
            int64_t size = padded ? r[d] : xs->dims[d], got = 0;
            m->lo[d] = p->low;
            m->interior[d] = p->interior;
            if (!cxla_mul_i64(size > 0 ? size - 1 : 0, p->interior, &got) ||
                !cxla_add_i64(got, size, &got) || !cxla_add_i64(got, p->low, &got) ||
                !cxla_add_i64(got, p->high, &got) || got < 0) {
                *out_handler = true; /* shape inference's error at the cut sizes */
                return NULL;
            }
            m->sizes[d] = got;
        }
        break;
    }
    case CXLA_OP_DYNAMIC_SLICE: {
        m->op = CPU_DYN_SLICE;
        int64_t na = 0;
        const int64_t *want = cxla_instr_ints(in, CXLA_ATTR_DYNAMIC_SLICE_SIZES, &na);
        if (na != xs->rank) {
            *out_handler = true;
            return NULL;
        }
        for (int64_t d = 0; d < xs->rank; d++) {
            int64_t k = want[d];
            if (padded && exec_shape_dim_dynamic(ys, d) && want[d] == xs->dims[d] &&
                r[d] < xs->dims[d])
                k = r[d]; /* the whole dimension keeps the operand's size */
            if (k < 0 || k > r[d]) {
                *out_handler = true;
                return NULL;
            }
            m->start[d] = clamp(load_start(in, ins, 1, d), 0, r[d] - k);
            m->sizes[d] = k;
        }
        break;
    }
    case CXLA_OP_DYNAMIC_UPDATE_SLICE: {
        m->op = CPU_DYN_UPDATE;
        for (int64_t d = 0; d < xs->rank; d++) {
            int64_t u = opz[1][d];
            if (u > r[d]) {
                *out_handler = true; /* shape inference's error at the cut sizes */
                return NULL;
            }
            m->start[d] = clamp(load_start(in, ins, 2, d), 0, r[d] - u);
            m->sizes[d] = r[d];
        }
        break;
    }
    case CXLA_OP_DYNAMIC_RESHAPE: {
        m->op = CPU_DYN_RESHAPE;
        int64_t count = 1, real = 1;
        for (int64_t d = 0; d < ys->rank; d++) {
            int64_t size = 0;
            interp_load_indices(in->operands[1 + d]->shape.type, ins[1 + d], 1, &size);
            if (size < 0 || size > ys->dims[d] ||
                (!exec_shape_dim_dynamic(ys, d) && size != ys->dims[d]) ||
                !cxla_mul_i64(count, size, &count)) {
                *out_handler = true;
                return NULL;
            }
            m->sizes[d] = size;
        }
        for (int64_t d = 0; d < xs->rank; d++) real *= r[d];
        if (real != count) *out_handler = true;
        return NULL; /* dynamic-reshape gives its sizes itself: no declared-shape check */
    }
    default:
        cpu_dyn_move_free(m);
        return exec_error(in, CXLA_STATUS_INTERNAL, "not a move of dynamic sizes");
    }
    /* The result against its declared shape, as the interpreter puts it back. */
    for (int64_t d = 0; d < ys->rank; d++)
        if (exec_shape_dim_dynamic(ys, d) ? m->sizes[d] > ys->dims[d] : m->sizes[d] != ys->dims[d])
            *out_handler = true;
    return NULL;
}

/* ---- reduces the kernels at the bounds do not run ---------------------------------------- */

/* A reduce of one input whose reducer the interpreter recognizes, over dynamic
 * dimensions, that no kernel at the bounds runs (cpu_bounds_kind: float sums and products
 * in exact math, f16/bf16, complex): the interpreter's own typed loop
 * (interp_reduce_space) over the buffer at its bounds, visiting the elements below the
 * sizes in the order it visits the cut array, so the result is the interpreter's bit for
 * bit (its pairwise order depends on the actual size). */
bool cpu_dyn_reduce_ok(const cxla_instr *in) {
    if (in->opcode != CXLA_OP_REDUCE || in->operand_count != 2) return false;
    const cxla_shape *xs = &in->operands[0]->shape, *is = &in->operands[1]->shape;
    const cxla_shape *ys = &in->shape;
    size_t elem = 0;
    if (!cxla_type_is_array(ys->type) || !cxla_type_is_array(xs->type) || is->rank != 0 ||
        xs->type != ys->type || is->type != ys->type || !cpu_whole_elements(xs, &elem) ||
        !cpu_whole_elements(ys, &elem))
        return false;
    for (int64_t d = 0; d < xs->rank; d++)
        if (xs->dims[d] < 0) return false;
    for (int64_t d = 0; d < ys->rank; d++)
        if (ys->dims[d] < 0) return false;
    const cxla_computation *comp = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    interp_reducer kind = comp ? interp_match_reducer(comp) : INTERP_REDUCER_NONE;
    return kind != INTERP_REDUCER_NONE && interp_reducer_supports(kind, xs->type);
}

/* The interpreter's pairwise sum (interp_reduce.c: leaves of up to 16 elements summed in
 * order, halves split at n / 2), over contiguous elements: the same additions in the same
 * order, so the same bits. */
#define DEFINE_PAIRWISE(T, NAME)                                                                   \
    static T pairwise_##NAME(const T *x, int64_t n) {                                              \
        if (n <= 16) {                                                                             \
            T s = x[0];                                                                            \
            for (int64_t r = 1; r < n; r++) s += x[r];                                             \
            return s;                                                                              \
        }                                                                                          \
        int64_t half = n / 2;                                                                      \
        return pairwise_##NAME(x, half) + pairwise_##NAME(x + half, n - half);                     \
    }
DEFINE_PAIRWISE(float, f32)
DEFINE_PAIRWISE(double, f64)
#undef DEFINE_PAIRWISE

/* A float sum over trailing dimensions: each output's block of the cut input (at |base|
 * where it is contiguous, |scratch| NULL; else copied row by row into |scratch|, |count|
 * elements), summed pairwise onto the init value. |idx|: room for |xrank| indices. */
static void sum_trailing(cxla_type t, const char *x, const int64_t *xstr, int64_t xrank, int64_t kr,
                         const int64_t *sizes, int64_t count, int64_t base, char *scratch,
                         void *acc, int64_t *idx) {
    size_t elem = t == CXLA_F32 ? 4 : 8;
    int64_t n = sizes[xrank - 1], at = 0;
    for (int64_t d = 0; d < xrank; d++) idx[d] = 0;
    const char *block = x + (size_t)base * elem; /* |scratch| NULL: contiguous there */
    if (scratch) block = scratch;
    while (scratch && at < count) {
        int64_t off = base;
        for (int64_t d = kr; d + 1 < xrank; d++) off += idx[d] * xstr[d];
        memcpy(scratch + (size_t)at * elem, x + (size_t)off * elem, (size_t)n * elem);
        at += n;
        for (int64_t d = xrank - 2; d >= kr && ++idx[d] == sizes[d]; d--) idx[d] = 0;
    }
    if (t == CXLA_F32) {
        float a;
        memcpy(&a, acc, 4);
        a += pairwise_f32((const float *)(const void *)block, count);
        memcpy(acc, &a, 4);
    } else {
        double a;
        memcpy(&a, acc, 8);
        a += pairwise_f64((const double *)(const void *)block, count);
        memcpy(acc, &a, 8);
    }
}

cxla_status cpu_dyn_reduce(const cxla_instr *in, void *out, const void *const *ins,
                           const int64_t *const *opz, int64_t *out_sizes, bool *out_handler) {
    const cxla_shape *xs = &in->operands[0]->shape, *ys = &in->shape;
    *out_handler = false;
    int64_t *outs[1] = {out_sizes};
    cxla_status s = exec_dynamic_sizes(in, opz, outs);
    if (s) { /* the interpreter's error: its handler reports it */
        cxla_status_free(s);
        *out_handler = true;
        return NULL;
    }
    size_t elem = 0, total = 0;
    if (!cpu_whole_elements(ys, &elem) || cxla_shape_byte_size(ys, &total))
        return exec_error(in, CXLA_STATUS_INTERNAL, "a reduce with odd elements");
    if (total) memset(out, 0, total); /* the result's padding is zero */
    int64_t nd = 0;
    const int64_t *rd = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    /* Sizes, strides and indices in arrays sized from the instruction: 8 of the input's
     * rank (the last three as the flags of reduced dimensions, the indices of the
     * trailing sum, the kept dimensions' indices), one of the result's. */
    size_t xr = (size_t)(xs->rank ? xs->rank : 1), yr = (size_t)(ys->rank ? ys->rank : 1);
    int64_t *work = calloc(8 * xr + yr, sizeof(int64_t));
    const int64_t **tables = calloc(xr, sizeof(*tables));
    if (!work || !tables) {
        free(work);
        free(tables);
        return exec_error(in, CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    }
    int64_t *xstr = work, *sizes = work + xr, *kept = work + 2 * xr, *rsizes = work + 3 * xr;
    int64_t *reduced = work + 4 * xr, *tidx = work + 5 * xr, *idx = work + 6 * xr;
    int64_t *ystr = work + 8 * xr;
    for (int64_t i = 0; i < nd; i++)
        if (rd[i] >= 0 && rd[i] < xs->rank) reduced[rd[i]] = 1;
    row_major_strides(xs->rank, xs->dims, xstr);
    row_major_strides(ys->rank, ys->dims, ystr);
    const cxla_computation *comp = cxla_instr_called(in, CXLA_ATTR_TO_APPLY);
    interp_reducer kind = interp_match_reducer(comp);
    /* The kept dimensions, the reduced ones (in order, at their sizes), and their count. */
    int64_t rank = 0, kr = 0, cells = 0, count = 1;
    for (int64_t d = 0; d < xs->rank; d++) {
        if (!reduced[d]) {
            kept[kr++] = d;
            continue;
        }
        sizes[rank++] = opz[0][d];
        cells += opz[0][d];
        count *= opz[0][d];
    }
    /* f32/f64 sums over the trailing dimensions (rows, whole arrays): the pairwise sum over
     * each output's block, in place where the block is contiguous (no padding inside it),
     * else copied row by row into scratch; anything else through the interpreter's loop
     * over a space of the elements below the sizes, strided over the bounds. */
    bool trailing = (xs->type == CXLA_F32 || xs->type == CXLA_F64) && kind == INTERP_REDUCER_ADD &&
                    count > 0 && rank > 0,
         contiguous = true;
    for (int64_t d = 0; d < xs->rank; d++) {
        trailing = trailing && (reduced[d] != 0) == (d >= kr);
        if (d > kr) contiguous = contiguous && opz[0][d] == xs->dims[d];
    }
    int64_t *table = trailing ? NULL : malloc((size_t)(cells ? cells : 1) * sizeof(int64_t));
    char *scratch = trailing && !contiguous ? malloc((size_t)count * elem) : NULL;
    if ((!trailing && !table) || (trailing && !contiguous && !scratch)) {
        free(table);
        free(scratch);
        free(work);
        free(tables);
        return exec_error(in, CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    }
    for (int64_t d = 0, j = 0, *t = table; t && d < xs->rank; d++) {
        if (!reduced[d]) continue;
        for (int64_t i = 0; i < opz[0][d]; i++) t[i] = i * xstr[d];
        tables[j++] = t;
        t += opz[0][d];
    }
    interp_space space = {.rank = rank, .count = count, .sizes = sizes, .offsets = tables};
    bool empty_out = false;
    for (int64_t j = 0; j < ys->rank; j++) empty_out = empty_out || out_sizes[j] == 0;
    for (int64_t d = 0; d < xs->rank; d++) rsizes[d] = opz[0][d];
    while (!empty_out && kr == ys->rank) {
        int64_t base = 0, yoff = 0;
        for (int64_t j = 0; j < kr; j++) {
            base += idx[j] * xstr[kept[j]];
            yoff += idx[j] * ystr[j];
        }
        char *acc = (char *)out + (size_t)yoff * elem;
        memcpy(acc, ins[1], elem);
        if (trailing)
            sum_trailing(xs->type, ins[0], xstr, xs->rank, kr, rsizes, count, base,
                         contiguous ? NULL : scratch, acc, tidx);
        else
            interp_reduce_space(kind, xs->type, ins[0], base, &space, ins[1], acc);
        int64_t j = kr - 1;
        while (j >= 0 && ++idx[j] == out_sizes[j]) idx[j--] = 0;
        if (j < 0) break;
    }
    free(table);
    free(scratch);
    free(work);
    free(tables);
    return kr == ys->rank ? NULL : exec_error(in, CXLA_STATUS_INTERNAL, "bad reduce dimensions");
}
