/* Bounded dynamic shapes: sort, gather, scatter, bitcast and bitcast-convert as kernels at
 * the bounds (or, for scatter, kernels reading the sizes), in place of
 * the interpreter's handler (cpu_steps.h; docs/semantics.md, "Bounded dynamic shapes run
 * as steps too").
 *
 * The interpreter (src/interp/interp_dynamic.c) cuts the operands to their sizes, runs
 * the static operation on the cut arrays and leaves zeros in the result's padding. Here:
 *
 * - sort along a dynamic dimension (B_SORT): the emitter's sort with the run-time sizes
 *   as one more input (cpu_emit_sort_sized): each row inside the sizes sorts its first
 *   size elements with the interpreter's merge sort, the rest is zero;
 * - gather from a dynamic operand (B_INDEXED): the static kernel at the bounds reads the
 *   start indices from a scratch copy in which each is clamped within the operand's sizes
 *   less the slice's, as the interpreter clamps them within the cut operand; the kernel's
 *   own clamp (within the bounds) then changes nothing, and no slice reaches the padding;
 * - scatter with dynamic shapes (B_INDEXED): the index vectors whose window the cut
 *   operand cannot hold, or that lie outside the indices' sizes, are moved out of the
 *   bounds in the scratch copy, so the kernel skips them as the interpreter skips them
 *   (or never sees them); the others land inside the sizes;
 * - bitcast and bitcast-convert (B_INFERRED): the static kernel at the bounds; a bitcast
 *   of a padded operand is the interpreter's error (it cannot leave the padding out), which
 *   the step returns itself in the interpreter's words;
 * - gather and scatter with batching dimensions take the same rewrites (a batching
 *   dimension is a window of one at the index vector's own batch position, inside the
 *   sizes); a dynamic index-vector dimension is the static vector at its bound and shape
 *   inference's error below it;
 * - a scatter whose update windows are dynamic (no rewrite of the indices can shorten a
 *   window) runs the emitter's sized scatter (B_SIZED, cpu_emit_sized_scatter): the
 *   kernel reads the operands' and updates' sizes (cpu_dyn_lib_scatter_sizes).
 *
 * The result's sizes come from shape inference over the cut operands (gather, scatter:
 * the interpreter's own step) or exec_dynamic_sizes (sort); wherever the interpreter
 * would report an error, the step runs its handler, which reports it in its words. The
 * step zeroes the result's padding after the kernel (cpu_steps_run.c's run_bounds). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_steps.h"
#include "cpu/emit_internal.h"
#include "exec/dynamic.h"
#include "interp/interp_gather.h"
#include "literal/literal_internal.h"

static bool bounded_array(const cxla_shape *s) {
    if (!cxla_type_is_array(s->type) || s->rank > CXLA_MAX_RANK) return false;
    for (int64_t d = 0; d < s->rank; d++)
        if (s->dims[d] < 0) return false;
    return true;
}

static bool has_dynamic(const cxla_shape *s) {
    for (int64_t d = 0; d < s->rank; d++)
        if (exec_shape_dim_dynamic(s, d)) return true;
    return false;
}

/* Whether the index vector dimension of |is| is in range. A dynamic one is taken too: at
 * its bound the vectors are the static ones, below it they are shorter than the start
 * index map, which shape inference over the cut operands refuses (cpu_dyn_lib_prepare then
 * runs the handler for the interpreter's error). */
static bool vector_dim_ok(const cxla_instr *in, const cxla_shape *is) {
    int64_t iv = 0;
    return cxla_instr_int(in, CXLA_ATTR_INDEX_VECTOR_DIM, &iv) && iv >= 0 && iv <= is->rank;
}

static bool sort_kind(const cxla_instr *in) {
    int64_t n = in->operand_count, nd = 0;
    const int64_t *dims = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd);
    if (n < 1 || nd != 1) return false;
    const cxla_shape *x0 = &in->operands[0]->shape;
    if (in->shape.type == CXLA_TUPLE ? in->shape.tuple_count != n : n != 1) return false;
    for (int64_t k = 0; k < n; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        const cxla_shape *y = in->shape.type == CXLA_TUPLE ? &in->shape.elements[k] : &in->shape;
        if (!bounded_array(s) || !bounded_array(y) || s->rank != x0->rank || y->rank != s->rank)
            return false;
        for (int64_t d = 0; d < s->rank; d++)
            if (s->dims[d] != x0->dims[d] || y->dims[d] != s->dims[d]) return false;
    }
    return dims[0] >= 0 && dims[0] < x0->rank;
}

/* The largest value of integer type |t| is past every bound of |s| (so it is out of range
 * for a window at the bounds as for one of the sizes). */
static bool index_type_ok(cxla_type t, const cxla_shape *s) {
    if (!cxla_type_is_integer(t)) return false;
    int bits = (int)cxla_type_storage(t) * 8;
    bool is_signed = t == CXLA_S8 || t == CXLA_S16 || t == CXLA_S32 || t == CXLA_S64;
    if (t == CXLA_PRED || bits < 8) return false;
    if (is_signed) return true; /* -1 is out of range */
    uint64_t top = bits >= 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
    for (int64_t d = 0; d < s->rank; d++)
        if ((uint64_t)s->dims[d] >= top) return false;
    return true;
}

int cpu_dyn_lib_kind(const cxla_instr *in) {
    int64_t n = in->operand_count;
    switch (in->opcode) {
    case CXLA_OP_SORT: return sort_kind(in) ? B_SORT : B_STATIC;
    case CXLA_OP_GATHER: {
        if (n != 2 || !bounded_array(&in->shape)) return B_STATIC;
        const cxla_shape *xs = &in->operands[0]->shape, *is = &in->operands[1]->shape;
        if (!bounded_array(xs) || !bounded_array(is) || !has_dynamic(xs) ||
            !cxla_type_is_integer(is->type) || is->type == CXLA_PRED || !vector_dim_ok(in, is))
            return B_STATIC;
        return B_INDEXED;
    }
    case CXLA_OP_SCATTER: {
        if (n < 3 || n % 2 == 0) return B_STATIC;
        int64_t m = (n - 1) / 2;
        const cxla_shape *xs = &in->operands[0]->shape, *is = &in->operands[m]->shape;
        if (!bounded_array(is) || !vector_dim_ok(in, is) || !index_type_ok(is->type, xs))
            return B_STATIC;
        int64_t nw = 0;
        const int64_t *uwd = cxla_instr_ints(in, CXLA_ATTR_UPDATE_WINDOW_DIMS, &nw);
        for (int64_t k = 0; k < n; k++) {
            const cxla_shape *s = &in->operands[k]->shape;
            if (!bounded_array(s)) return B_STATIC;
            if (k <= m) continue;
            /* The windows' extents are static: the kernel's test of a window against the
             * operand uses them. */
            for (int64_t i = 0; i < nw; i++)
                if (uwd[i] < 0 || uwd[i] >= s->rank || exec_shape_dim_dynamic(s, uwd[i]))
                    return B_STATIC;
        }
        if (in->shape.type == CXLA_TUPLE) {
            for (int64_t e = 0; e < in->shape.tuple_count; e++)
                if (!bounded_array(&in->shape.elements[e])) return B_STATIC;
        } else if (!bounded_array(&in->shape)) {
            return B_STATIC;
        }
        return B_INDEXED;
    }
    case CXLA_OP_BITCAST:
    case CXLA_OP_BITCAST_CONVERT:
        /* bitcast: the interpreter takes an operand at its bounds only (the static
         * operation, the result at its bounds), else reports that it cannot; bitcast-convert:
         * element by element (a minor dimension split or joined, static by shape inference). */
        return n == 1 && bounded_array(&in->operands[0]->shape) && bounded_array(&in->shape)
                   ? B_INFERRED
                   : B_STATIC;
    default: return B_STATIC;
    }
}

bool cpu_dyn_lib_sized_ok(const cxla_instr *in) {
    int64_t n = in->operand_count;
    /* Any rank (the kernel reads the sizes from an input sized by the instruction); at
     * most CPU_EMIT_MAX_REDUCER_RESULTS operands (and as many updates), the emitter's
     * (emit_gather.c: the update computation gives one result per operand). */
    if (in->opcode != CXLA_OP_SCATTER || n < 3 || n % 2 == 0 ||
        (n - 1) / 2 > CPU_EMIT_MAX_REDUCER_RESULTS)
        return false;
    if (cpu_dyn_lib_kind(in) != B_STATIC) return false; /* B_INDEXED */
    int64_t m = (n - 1) / 2;
    size_t elem = 0;
    bool dynamic = false;
    for (int64_t k = 0; k < n; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        if (!bounded_array(s) || !cpu_whole_elements(s, &elem)) return false;
        dynamic = dynamic || has_dynamic(s);
    }
    if (!cxla_type_is_integer(in->operands[m]->shape.type) ||
        !vector_dim_ok(in, &in->operands[m]->shape))
        return false;
    int64_t leaves = in->shape.type == CXLA_TUPLE ? in->shape.tuple_count : 1;
    if (leaves != m) return false;
    for (int64_t e = 0; e < leaves; e++) {
        const cxla_shape *y = in->shape.type == CXLA_TUPLE ? &in->shape.elements[e] : &in->shape;
        if (!bounded_array(y) || !cpu_whole_elements(y, &elem)) return false;
    }
    return dynamic;
}

static cxla_status infer_cut(const cxla_instr *in, const int64_t *const *opz,
                             int64_t *const *out_sizes, bool *out_handler);

cxla_status cpu_dyn_lib_scatter_sizes(const cxla_instr *in, const int64_t *const *opz,
                                      int64_t *sizes, int64_t *out_sizes, bool *out_handler) {
    int64_t m = (in->operand_count - 1) / 2;
    int64_t xr = in->operands[0]->shape.rank, ur = in->operands[m + 1]->shape.rank;
    *out_handler = false;
    int64_t(*leaf)[CXLA_MAX_RANK] = malloc((size_t)m * sizeof(*leaf));
    int64_t **outs = malloc((size_t)m * sizeof(*outs));
    if (!leaf || !outs) {
        free(leaf);
        free(outs);
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    }
    for (int64_t e = 0; e < m; e++) outs[e] = leaf[e];
    cxla_status s = infer_cut(in, opz, outs, out_handler);
    /* Every result has the cut operands' sizes (shape inference made them one shape). */
    for (int64_t d = 0; !s && !*out_handler && d < xr; d++) out_sizes[d] = leaf[0][d];
    free(leaf);
    free(outs);
    for (int64_t d = 0; d < xr; d++) sizes[d] = opz[0][d];
    for (int64_t d = 0; d < ur; d++) sizes[xr + d] = opz[m + 1][d];
    return s;
}

int64_t cpu_dyn_lib_indices(const cxla_instr *in) {
    if (in->opcode == CXLA_OP_GATHER) return 1;
    if (in->opcode == CXLA_OP_SCATTER) return (in->operand_count - 1) / 2;
    return -1;
}

/* The result leaves' sizes: shape inference over the operands cut to their sizes, checked
 * against the declared shape as the interpreter puts its result back; *out_handler when
 * either fails. */
static cxla_status infer_cut(const cxla_instr *in, const int64_t *const *opz,
                             int64_t *const *out_sizes, bool *out_handler) {
    int64_t n = in->operand_count;
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cxla_status s = NULL;
    cxla_instr tmp = *in;
    cxla_instr **ops = cxla_arena_alloc_array(arena, (size_t)(n ? n : 1), sizeof(*ops));
    if (!ops) s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    for (int64_t k = 0; k < n && !s; k++) {
        const cxla_shape *xs = &in->operands[k]->shape;
        cxla_instr *t = cxla_arena_alloc(arena, sizeof(*t));
        int64_t *dims =
            cxla_arena_alloc_array(arena, (size_t)(xs->rank ? xs->rank : 1), sizeof(int64_t));
        if (!t || !dims) {
            s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
            break;
        }
        *t = *in->operands[k];
        for (int64_t d = 0; d < xs->rank; d++) dims[d] = opz[k][d];
        t->shape = (cxla_shape){.type = xs->type, .rank = xs->rank, .dims = dims};
        ops[k] = t;
    }
    tmp.operands = ops;
    cxla_shape rs;
    if (!s) {
        cxla_status e = cxla_infer_shape(&tmp, arena, &rs);
        if (e) {
            cxla_status_free(e);
            *out_handler = true;
        }
    }
    int64_t leaves = in->shape.type == CXLA_TUPLE ? in->shape.tuple_count : 1;
    if (!s && !*out_handler && (rs.type == CXLA_TUPLE) != (in->shape.type == CXLA_TUPLE))
        *out_handler = true;
    if (!s && !*out_handler && rs.type == CXLA_TUPLE && rs.tuple_count != leaves)
        *out_handler = true;
    for (int64_t e = 0; e < leaves && !s && !*out_handler; e++) {
        const cxla_shape *decl = in->shape.type == CXLA_TUPLE ? &in->shape.elements[e] : &in->shape;
        const cxla_shape *got = rs.type == CXLA_TUPLE ? &rs.elements[e] : &rs;
        if (got->rank != decl->rank) {
            *out_handler = true;
            break;
        }
        for (int64_t d = 0; d < decl->rank; d++) {
            int64_t v = got->dims[d];
            bool dyn = exec_shape_dim_dynamic(decl, d);
            if (v < 0 || (!dyn && v != decl->dims[d]) || (dyn && v > decl->dims[d]))
                *out_handler = true;
            out_sizes[e][d] = v;
        }
    }
    cxla_arena_destroy(arena);
    return s;
}

static void row_major(int64_t rank, const int64_t *dims, int64_t *out) {
    int64_t st = 1;
    for (int64_t d = rank - 1; d >= 0; d--) {
        out[d] = st;
        st *= dims[d];
    }
}

static int64_t load_index(cxla_type t, const char *p) {
    int64_t v = 0;
    interp_load_indices(t, p, 1, &v);
    return v;
}

/* gather: every start index clamped within [0, size - slice size] of its operand dimension. */
static void clamp_gather(const cxla_instr *in, const int64_t *const *opz, const char *idx,
                         char *out) {
    const cxla_shape *is = &in->operands[1]->shape;
    int64_t iv = 0, nm = 0, ns = 0, count = 1, st[CXLA_MAX_RANK] = {0};
    cxla_instr_int(in, CXLA_ATTR_INDEX_VECTOR_DIM, &iv);
    const int64_t *map = cxla_instr_ints(in, CXLA_ATTR_START_INDEX_MAP, &nm);
    const int64_t *slice = cxla_instr_ints(in, CXLA_ATTR_SLICE_SIZES, &ns);
    size_t es = cxla_type_storage(is->type);
    for (int64_t d = 0; d < is->rank; d++) count *= is->dims[d];
    row_major(is->rank, is->dims, st);
    for (int64_t j = 0; j < count; j++) {
        int64_t c = iv < is->rank ? j / st[iv] % is->dims[iv] : 0;
        const char *p = idx + (size_t)j * es;
        char *q = out + (size_t)j * es;
        if (c >= nm || map[c] < 0 || map[c] >= ns) { /* shape inference ruled it out */
            memcpy(q, p, es);
            continue;
        }
        int64_t v = load_index(is->type, p), hi = opz[0][map[c]] - slice[map[c]];
        v = v > hi ? hi : v;
        v = v < 0 ? 0 : v;
        cxla_store_s64(is->type, q, v);
    }
}

/* scatter: the index vectors whose window does not fit the cut operand, or that lie
 * outside the indices' sizes, made out of range at the bounds too (-1, or the type's
 * largest value for unsigned types: cpu_dyn_lib_kind checked that it is past the bounds). */
static void skip_scatter(const cxla_instr *in, const int64_t *const *opz, const char *idx,
                         char *out) {
    int64_t m = (in->operand_count - 1) / 2;
    const cxla_shape *xs = &in->operands[0]->shape, *is = &in->operands[m]->shape;
    const cxla_shape *us = &in->operands[m + 1]->shape;
    int64_t iv = 0, nmap = 0, nins = 0, nw = 0;
    cxla_instr_int(in, CXLA_ATTR_INDEX_VECTOR_DIM, &iv);
    const int64_t *map = cxla_instr_ints(in, CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, &nmap);
    const int64_t *ins = cxla_instr_ints(in, CXLA_ATTR_INSERTED_WINDOW_DIMS, &nins);
    const int64_t *uwd = cxla_instr_ints(in, CXLA_ATTR_UPDATE_WINDOW_DIMS, &nw);
    int64_t nib = 0;
    const int64_t *ib = cxla_instr_ints(in, CXLA_ATTR_INPUT_BATCHING_DIMS, &nib);
    /* The window's extent in each operand dimension: 1 where inserted or a batching
     * dimension (whose index, the vector's own batch position, lies inside the sizes: shape
     * inference over the cut operands matched the two sizes), else the next update window
     * dimension's (static). */
    int64_t wext[CXLA_MAX_RANK];
    for (int64_t d = 0, w = 0; d < xs->rank; d++) {
        bool inserted = false;
        for (int64_t i = 0; i < nins; i++) inserted = inserted || ins[i] == d;
        for (int64_t i = 0; i < nib; i++) inserted = inserted || ib[i] == d;
        wext[d] = inserted ? 1 : w < nw ? us->dims[uwd[w++]] : 1;
    }
    size_t es = cxla_type_storage(is->type);
    bool is_signed =
        is->type == CXLA_S8 || is->type == CXLA_S16 || is->type == CXLA_S32 || is->type == CXLA_S64;
    int64_t count = 1, st[CXLA_MAX_RANK] = {0}, vlen = iv < is->rank ? is->dims[iv] : 1;
    for (int64_t d = 0; d < is->rank; d++) count *= is->dims[d];
    row_major(is->rank, is->dims, st);
    memcpy(out, idx, (size_t)count * es);
    int64_t vstride = iv < is->rank ? st[iv] : 1;
    for (int64_t j = 0; j < count; j++) {
        /* j is the first component of its vector where its coordinate along iv is 0. */
        if (iv < is->rank && j / st[iv] % is->dims[iv] != 0) continue;
        bool bad = false;
        for (int64_t d = 0; d < is->rank && !bad; d++)
            if (d != iv && j / st[d] % is->dims[d] >= opz[m][d]) bad = true;
        for (int64_t c = 0; c < vlen && c < nmap && !bad; c++) {
            int64_t od = map[c];
            if (od < 0 || od >= xs->rank) continue; /* shape inference ruled it out */
            int64_t v = load_index(is->type, idx + (size_t)(j + c * vstride) * es);
            bad = v < 0 || v > opz[0][od] - wext[od];
        }
        for (int64_t c = 0; c < vlen && bad; c++) {
            char *q = out + (size_t)(j + c * vstride) * es;
            if (is_signed)
                cxla_store_s64(is->type, q, -1);
            else
                cxla_store_u64(is->type, q, UINT64_MAX);
        }
    }
}

/* The interpreter's error for a bitcast of an operand below its bounds, in its words
 * (src/interp/interp_dynamic.c, unsupported(): the operand's shape and its sizes), without
 * running its handler. */
static cxla_status bitcast_padded(const cxla_instr *in, const int64_t *sizes) {
    const cxla_shape *xs = &in->operands[0]->shape;
    char *shape = cxla_shape_to_string(xs, CXLA_SHAPE_PRINT_NO_LAYOUT);
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_puts(&b, shape ? shape : "?");
    free(shape);
    cxla_strbuf_putc(&b, '(');
    for (int64_t d = 0; d < xs->rank; d++)
        cxla_strbuf_printf(&b, "%s%" PRId64, d ? "," : "", sizes[d]);
    cxla_strbuf_putc(&b, ')');
    char *what = cxla_strbuf_take(&b);
    if (!what) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cxla_status s = exec_error(in, CXLA_STATUS_UNIMPLEMENTED,
                               "'%s' does not support an operand below its dynamic bounds "
                               "(operand 0 is %s)",
                               cxla_opcode_name(in->opcode), what);
    free(what);
    return s;
}

cxla_status cpu_dyn_lib_prepare(const cxla_instr *in, const int64_t *const *opz,
                                const void *indices, void *scratch, int64_t *const *out_sizes,
                                bool *out_handler) {
    *out_handler = false;
    if (in->opcode == CXLA_OP_SORT) {
        cxla_status s = exec_dynamic_sizes(in, opz, out_sizes);
        if (s) { /* the interpreter's error: its handler reports it */
            cxla_status_free(s);
            *out_handler = true;
        }
        return NULL;
    }
    if (in->opcode == CXLA_OP_BITCAST) {
        const cxla_shape *xs = &in->operands[0]->shape;
        bool padded = false;
        for (int64_t d = 0; d < xs->rank; d++) padded = padded || opz[0][d] < xs->dims[d];
        if (padded) return bitcast_padded(in, opz[0]);
    }
    CXLA_RETURN_IF_ERROR(infer_cut(in, opz, out_sizes, out_handler));
    if (*out_handler || (in->opcode != CXLA_OP_GATHER && in->opcode != CXLA_OP_SCATTER))
        return NULL;
    if (in->opcode == CXLA_OP_GATHER)
        clamp_gather(in, opz, indices, scratch);
    else
        skip_scatter(in, opz, indices, scratch);
    return NULL;
}
