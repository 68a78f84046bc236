/* The emitter's gather and scatter (the interpreter's src/interp/interp_gather.c, bit for
 * bit).
 *
 * gather is an indexing operation like dynamic-slice: emit.c computes it per output
 * element (unfused, or inside a loop fusion) from the map made here: each operand
 * dimension's index is a start plus an offset, the offset an output dimension of the
 * slice (offset_dims), the start an index-vector component converted to int64 (u64 above
 * INT64_MAX as INT64_MAX) and clamped to [0, dim - slice_size], or, for an operand
 * batching dimension, the output's batch index itself.
 *
 * scatter is its own kernel: the results start as copies of the operands (skipped when
 * a result buffer is its operand's: the copy is `if (out[i] != in[i]) memcpy`, and the
 * body never reads the operands, so a caller may pass the same buffer for both; see
 * cpu_kernel_info.in_place), then the update windows are visited in row-major order of
 * the update scatter dimensions and each element combined into the results in row-major
 * order of the window: assigned when the update computation returns its update
 * parameters, combined as the interpreter's typed loops do when it recognizes a reducer
 * (one array; note its float max/min keep the first operand on -0/+0 ties, unlike the
 * maximum operation), and with the update computation written inline otherwise. A window
 * that does not fit entirely inside the operand is skipped. Updates may repeat indices, so
 * the kernel is one unit of work (range 1). */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "cpu/emit_internal.h"
#include "interp/interp.h"

#define F(...) cpu_emit_fmt(arena, __VA_ARGS__)

typedef struct dlist {
    const int64_t *v;
    int64_t n;
} dlist;

static dlist list_of(const cxla_instr *instr, cxla_attr_id id) {
    dlist l;
    l.v = cxla_instr_ints(instr, id, &l.n);
    if (!l.v) l.n = 0;
    return l;
}

static int64_t find(dlist l, int64_t x) {
    for (int64_t i = 0; i < l.n; i++)
        if (l.v[i] == x) return i;
    return -1;
}

static bool valid(dlist l, int64_t bound) {
    bool seen[CXLA_MAX_RANK + 1] = {false};
    if (bound > CXLA_MAX_RANK + 1) return false;
    for (int64_t i = 0; i < l.n; i++) {
        if (l.v[i] < 0 || l.v[i] >= bound || seen[l.v[i]]) return false;
        seen[l.v[i]] = true;
    }
    return true;
}

/* ---- gather -------------------------------------------------------------------------- */

/* An array gather moves: the types kernels handle, complex and sub-byte ones too (emit.c
 * reads and writes them as it moves them elsewhere; sub-byte indices are their bytes, sign-
 * or zero-extended as stored). */
static bool gather_array(const cxla_shape *s) {
    return cpu_emit_static_array(s) ||
           (cxla_type_is_array(s->type) && !s->dynamic && cxla_layout_is_default(s) &&
            (cxla_type_is_complex(s->type) || cpu_emit_subbyte(s->type)));
}

bool cpu_emit_gather_map(const cxla_instr *instr, cpu_gather_map *m) {
    if (instr->opcode != CXLA_OP_GATHER || instr->operand_count != 2) return false;
    const cxla_shape *xs = &instr->operands[0]->shape, *is = &instr->operands[1]->shape,
                     *ys = &instr->shape;
    if (!gather_array(xs) || !gather_array(is) || !gather_array(ys) ||
        !cxla_type_is_integer(is->type) || ys->type != xs->type)
        return false;
    dlist offset = list_of(instr, CXLA_ATTR_OFFSET_DIMS);
    dlist collapsed = list_of(instr, CXLA_ATTR_COLLAPSED_SLICE_DIMS);
    dlist sim = list_of(instr, CXLA_ATTR_START_INDEX_MAP);
    dlist sizes = list_of(instr, CXLA_ATTR_SLICE_SIZES);
    dlist ob = list_of(instr, CXLA_ATTR_OPERAND_BATCHING_DIMS);
    dlist ib = list_of(instr, CXLA_ATTR_START_INDICES_BATCHING_DIMS);
    int64_t ivd;
    if (!cxla_instr_int(instr, CXLA_ATTR_INDEX_VECTOR_DIM, &ivd) || ivd < 0 || ivd > is->rank)
        return false;
    int64_t xr = xs->rank, yr = ys->rank, vec_len = ivd < is->rank ? is->dims[ivd] : 1;
    if (sizes.n != xr || !valid(collapsed, xr) || !valid(ob, xr) || !valid(offset, yr) ||
        !valid(sim, xr) || ob.n != ib.n || !valid(ib, is->rank) || find(ib, ivd) >= 0 ||
        sim.n != vec_len)
        return false;
    cpu_gather_map map;
    memset(&map, 0, sizeof map);
    map.ivd = ivd;
    /* The output's batch dimensions, in order, index the indices' dimensions but ivd. */
    int64_t out_batch[CXLA_MAX_RANK], nb = 0, nw = 0;
    for (int64_t d = 0; d < yr; d++)
        if (find(offset, d) < 0) out_batch[nb++] = d;
    if (nb != is->rank - (ivd < is->rank ? 1 : 0)) return false;
    for (int64_t j = 0, b = 0; j < is->rank; j++) {
        map.idx_out[j] = j == ivd ? -1 : out_batch[b++];
        if (j != ivd && ys->dims[map.idx_out[j]] != is->dims[j]) return false;
    }
    for (int64_t d = 0; d < xr; d++) {
        if (sizes.v[d] < 0 || sizes.v[d] > xs->dims[d]) return false;
        map.offset_out[d] = map.start_k[d] = map.batch_out[d] = -1;
        map.max_start[d] = xs->dims[d] - sizes.v[d];
        if (find(collapsed, d) >= 0 || find(ob, d) >= 0) {
            if (sizes.v[d] > 1) return false;
        } else {
            if (nw >= offset.n || ys->dims[offset.v[nw]] != sizes.v[d]) return false;
            map.offset_out[d] = offset.v[nw++];
        }
        map.start_k[d] = find(sim, d);
        int64_t i = find(ob, d);
        if (i >= 0) {
            if (xs->dims[d] != is->dims[ib.v[i]]) return false;
            map.batch_out[d] = map.idx_out[ib.v[i]];
        }
    }
    if (nw != offset.n) return false;
    if (m) *m = map;
    return true;
}

/* ---- scatter ------------------------------------------------------------------------- */

typedef enum mode { MODE_CALL, MODE_ASSIGN, MODE_REDUCE } mode;

typedef struct sc_plan {
    int64_t n;
    const cxla_computation *comp;
    mode mode;
    interp_reducer reducer;
    int64_t xr, ur;
    int64_t xdims[CXLA_MAX_RANK], udims[CXLA_MAX_RANK];
    int64_t wdims[CXLA_MAX_RANK], nw; /* operand dims of the window, in order */
    int64_t wext[CXLA_MAX_RANK];      /* per operand dim: the window's extent (1 if none) */
    int64_t uwd[CXLA_MAX_RANK];       /* the update dim of window dim k */
    int64_t usd[CXLA_MAX_RANK], nb;   /* update scatter dims, in order */
    int64_t sdod[CXLA_MAX_RANK], nsd;
    int64_t ib[CXLA_MAX_RANK], sib[CXLA_MAX_RANK], nib;
    int64_t ivd, vec_stride;
    int64_t batch_strides[CXLA_MAX_RANK]; /* of the indices' batch dims */
    cxla_type it;
} sc_plan;

/* interp_gather.c's reducer_supported. */
static bool reducer_supported(interp_reducer r, cxla_type t) {
    switch (cxla_type_class_of(t)) {
    case CXLA_CLASS_PRED:
        return r == INTERP_REDUCER_AND || r == INTERP_REDUCER_OR || r == INTERP_REDUCER_XOR ||
               r == INTERP_REDUCER_MAX || r == INTERP_REDUCER_MIN;
    case CXLA_CLASS_SIGNED:
    case CXLA_CLASS_UNSIGNED: return r != INTERP_REDUCER_NONE;
    case CXLA_CLASS_FLOAT:
        return r == INTERP_REDUCER_ADD || r == INTERP_REDUCER_MUL || r == INTERP_REDUCER_MAX ||
               r == INTERP_REDUCER_MIN;
    default: return false;
    }
}

static bool is_param(const cxla_instr *in, int64_t number) {
    return in && in->opcode == CXLA_OP_PARAMETER && in->parameter_number == number;
}

static bool sc_plan_of(const cxla_instr *instr, sc_plan *p) {
    memset(p, 0, sizeof *p);
    int64_t count = instr->operand_count;
    /* Up to CPU_EMIT_MAX_REDUCER_RESULTS operands (and as many updates): the update
     * computation gives one result per operand. */
    if (instr->opcode != CXLA_OP_SCATTER || count < 3 || count % 2 == 0 ||
        (count - 1) / 2 > CPU_EMIT_MAX_REDUCER_RESULTS)
        return false;
    int64_t n = p->n = (count - 1) / 2;
    const cxla_shape *xs = &instr->operands[0]->shape, *is = &instr->operands[n]->shape,
                     *us = &instr->operands[n + 1]->shape;
    if (!cpu_emit_static_array(is) || !cxla_type_is_integer(is->type)) return false;
    for (int64_t i = 0; i < n; i++) {
        const cxla_shape *a = &instr->operands[i]->shape, *b = &instr->operands[n + 1 + i]->shape;
        const cxla_shape *r = n == 1 ? &instr->shape
                              : instr->shape.type == CXLA_TUPLE && instr->shape.tuple_count == n
                                  ? &instr->shape.elements[i]
                                  : NULL;
        if (!r || !cpu_emit_held_array(a) || !cpu_emit_held_array(b) || !cpu_emit_held_array(r) ||
            !cxla_shape_same_dims(a, xs) || !cxla_shape_same_dims(b, us) ||
            !cxla_shape_same_dims(r, xs) || r->type != a->type)
            return false;
    }
    p->comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!p->comp || !p->comp->root) return false;
    dlist uwd = list_of(instr, CXLA_ATTR_UPDATE_WINDOW_DIMS);
    dlist iwd = list_of(instr, CXLA_ATTR_INSERTED_WINDOW_DIMS);
    dlist sdod = list_of(instr, CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS);
    dlist ib = list_of(instr, CXLA_ATTR_INPUT_BATCHING_DIMS);
    dlist sib = list_of(instr, CXLA_ATTR_SCATTER_INDICES_BATCHING_DIMS);
    if (!cxla_instr_int(instr, CXLA_ATTR_INDEX_VECTOR_DIM, &p->ivd) || p->ivd < 0 ||
        p->ivd > is->rank)
        return false;
    int64_t xr = p->xr = xs->rank, ur = p->ur = us->rank;
    int64_t vec_len = p->ivd < is->rank ? is->dims[p->ivd] : 1;
    if (!valid(uwd, ur) || !valid(iwd, xr) || !valid(ib, xr) || !valid(sdod, xr) || ib.n != sib.n ||
        !valid(sib, is->rank) || find(sib, p->ivd) >= 0 || sdod.n != vec_len)
        return false;
    int64_t st = 1, istr[CXLA_MAX_RANK];
    for (int64_t d = is->rank - 1; d >= 0; d--) {
        istr[d] = st;
        st *= is->dims[d];
    }
    p->vec_stride = p->ivd < is->rank ? istr[p->ivd] : 0;
    int64_t nbi = 0;
    for (int64_t d = 0; d < is->rank; d++)
        if (d != p->ivd) p->batch_strides[nbi++] = istr[d];
    for (int64_t d = 0; d < xr; d++) {
        p->xdims[d] = xs->dims[d];
        p->wext[d] = 1;
        if (find(iwd, d) < 0 && find(ib, d) < 0) p->wdims[p->nw++] = d;
    }
    for (int64_t d = 0; d < ur; d++) {
        p->udims[d] = us->dims[d];
        if (find(uwd, d) < 0) p->usd[p->nb++] = d;
    }
    if (p->nw != uwd.n || p->nb != nbi) return false;
    for (int64_t k = 0; k < p->nw; k++) {
        p->uwd[k] = uwd.v[k];
        p->wext[p->wdims[k]] = us->dims[uwd.v[k]];
    }
    for (int64_t j = 0, b = 0; j < is->rank; j++)
        if (j != p->ivd && us->dims[p->usd[b++]] != is->dims[j]) return false;
    for (int64_t i = 0; i < ib.n; i++) {
        if (xs->dims[ib.v[i]] != is->dims[sib.v[i]]) return false;
        p->ib[i] = ib.v[i];
        p->sib[i] = sib.v[i];
    }
    p->nib = ib.n;
    for (int64_t k = 0; k < sdod.n; k++) p->sdod[k] = sdod.v[k];
    p->nsd = sdod.n;
    p->it = is->type;
    /* The interpreter's choose_mode. */
    const cxla_computation *c = p->comp;
    bool same_types = true;
    for (int64_t i = 0; i < n; i++)
        same_types =
            same_types && instr->operands[i]->shape.type == instr->operands[n + 1 + i]->shape.type;
    p->mode = MODE_CALL;
    if (same_types && c->param_count == 2 * n) {
        if (n == 1 && is_param(c->root, 1)) p->mode = MODE_ASSIGN;
        if (n > 1 && c->root->opcode == CXLA_OP_TUPLE && c->root->operand_count == n) {
            bool assign = true;
            for (int64_t i = 0; i < n; i++)
                assign = assign && is_param(c->root->operands[i], n + i);
            if (assign) p->mode = MODE_ASSIGN;
        }
        if (p->mode == MODE_CALL && n == 1) {
            interp_reducer r = interp_match_reducer(c);
            if (r != INTERP_REDUCER_NONE && reducer_supported(r, xs->type)) {
                p->mode = MODE_REDUCE;
                p->reducer = r;
            }
        }
    }
    if (p->mode == MODE_CALL) {
        if (!cpu_emit_scalar_ok(c, 2 * n, n)) return false;
        for (int64_t i = 0; i < n; i++)
            if (c->params[i]->shape.type != instr->operands[i]->shape.type ||
                c->params[n + i]->shape.type != instr->operands[n + 1 + i]->shape.type)
                return false;
        const cxla_instr *root = c->root;
        for (int64_t i = 0; i < n; i++) {
            const cxla_instr *ri = n == 1 ? root : root->operands[i];
            if (ri->shape.type != instr->operands[i]->shape.type) return false;
        }
    }
    return true;
}

bool cpu_emit_scatter_ok(const cxla_instr *instr) {
    sc_plan p;
    return sc_plan_of(instr, &p);
}

/* dst = op(dst, src) as the interpreter's reduce_run does for |t|. */
static const char *reduce_expr(cxla_arena *arena, interp_reducer r, cxla_type t, const char *a,
                               const char *b) {
    if (t == CXLA_PRED) {
        if (r == INTERP_REDUCER_AND || r == INTERP_REDUCER_MIN)
            return F("(uint8_t)(%s && %s)", a, b);
        if (r == INTERP_REDUCER_OR || r == INTERP_REDUCER_MAX)
            return F("(uint8_t)(%s || %s)", a, b);
        return F("(uint8_t)((%s != 0) != (%s != 0))", a, b);
    }
    const char *ct = cpu_emit_ctype(t);
    if (cpu_emit_subbyte(t) && (r == INTERP_REDUCER_ADD || r == INTERP_REDUCER_MUL))
        /* In 64 bits, wrapped to the width (the interpreter's 64-bit value, stored). */
        return cpu_emit_convert(
            arena, CXLA_U64, t,
            F("((uint64_t)%s %s (uint64_t)%s)", a, r == INTERP_REDUCER_ADD ? "+" : "*", b));
    if (cxla_type_is_integer(t)) {
        switch (r) {
        case INTERP_REDUCER_ADD: return F("(%s)((uint64_t)%s + (uint64_t)%s)", ct, a, b);
        case INTERP_REDUCER_MUL: return F("(%s)((uint64_t)%s * (uint64_t)%s)", ct, a, b);
        case INTERP_REDUCER_MAX: return F("(%s < %s ? %s : %s)", a, b, b, a);
        case INTERP_REDUCER_MIN: return F("(%s < %s ? %s : %s)", b, a, b, a);
        case INTERP_REDUCER_AND: return F("(%s)(%s & %s)", ct, a, b);
        case INTERP_REDUCER_OR: return F("(%s)(%s | %s)", ct, a, b);
        default: return F("(%s)(%s ^ %s)", ct, a, b);
        }
    }
    bool small = cpu_emit_is_small(t);
    const char *x = cpu_emit_decode(arena, t, a), *y = cpu_emit_decode(arena, t, b), *e;
    switch (r) {
    case INTERP_REDUCER_ADD: e = F("(%s + %s)", x, y); break;
    case INTERP_REDUCER_MUL: e = F("(%s * %s)", x, y); break;
    case INTERP_REDUCER_MAX:
        e = F("(isnan(%s) ? %s : isnan(%s) ? %s : (%s < %s ? %s : %s))", x, x, y, y, x, y, y, x);
        break;
    default:
        e = F("(isnan(%s) ? %s : isnan(%s) ? %s : (%s < %s ? %s : %s))", x, x, y, y, y, x, y, x);
        break;
    }
    return small ? cpu_emit_encode(arena, t, e) : e;
}

static void put(cxla_strbuf *b, int indent, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void put(cxla_strbuf *b, int indent, const char *format, ...) {
    for (int i = 0; i < indent; i++) cxla_strbuf_puts(b, "    ");
    va_list args;
    va_start(args, format);
    cxla_strbuf_vprintf(b, format, args);
    va_end(args);
    cxla_strbuf_putc(b, '\n');
}

/* |sized|: the kernel's last input (in[2n + 1]) is an int64_t array of run-time sizes, the
 * operands' (one per operand dimension) then the updates' (one per update dimension)
 * (cpu_emit_sized_scatter); the update groups and windows run to them and a window fits
 * when it lies inside the operands' sizes. Offsets stay those of the bounds. */
static cxla_status emit_scatter(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                cpu_kernel_info *out_info, bool sized) {
    sc_plan p;
    if (!sc_plan_of(instr, &p))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "cpu backend: cannot emit %s (scatter): unsupported dimension numbers, "
                          "element types or update computation",
                          instr->name);
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cpu_emit_fmt_reset();
    int64_t n = p.n;
    cxla_strbuf b, params, args, pre;
    cxla_strbuf_init(&b);
    cxla_strbuf_init(&params);
    cxla_strbuf_init(&args);
    cxla_strbuf_init(&pre);
    /* The body reads the indices and the updates, never the operands (copied before). */
    int64_t xcount = 1;
    for (int64_t d = 0; d < p.xr; d++) xcount *= p.xdims[d];
    for (int64_t i = 0; i < n; i++) {
        cxla_type t = instr->operands[i]->shape.type;
        const char *st = cpu_emit_stype(t);
        cxla_strbuf_printf(&params, "%s%s *restrict o%" PRId64, i ? ", " : "", st, i);
        cxla_strbuf_printf(&args, "%s(%s *)out[%" PRId64 "]", i ? ", " : "", st, i);
        cxla_strbuf_printf(&pre,
                           "    if (out[%" PRId64 "] != in[%" PRId64 "]) memcpy(out[%" PRId64
                           "], in[%" PRId64 "], %" PRId64 ");\n",
                           i, i, i, i, xcount * (int64_t)cxla_type_storage(t));
    }
    const char *ist = cpu_emit_stype(p.it);
    cxla_strbuf_printf(&params, ", const %s *restrict pi", ist);
    cxla_strbuf_printf(&args, ", (const %s *)in[%" PRId64 "]", ist, n);
    for (int64_t i = 0; i < n; i++) {
        const char *st = cpu_emit_stype(instr->operands[n + 1 + i]->shape.type);
        cxla_strbuf_printf(&params, ", const %s *restrict u%" PRId64, st, i);
        cxla_strbuf_printf(&args, ", (const %s *)in[%" PRId64 "]", st, n + 1 + i);
    }
    if (sized) {
        cxla_strbuf_puts(&params, ", const int64_t *restrict z");
        cxla_strbuf_printf(&args, ", (const int64_t *)in[%" PRId64 "]", 2 * n + 1);
    }
    int64_t ucount = 1, ustr[CXLA_MAX_RANK], xstr[CXLA_MAX_RANK];
    for (int64_t d = p.ur - 1; d >= 0; d--) {
        ustr[d] = ucount;
        ucount *= p.udims[d];
    }
    int64_t s = 1;
    for (int64_t d = p.xr - 1; d >= 0; d--) {
        xstr[d] = s;
        s *= p.xdims[d];
    }
    int ind = 1;
    put(&b, ind, "(void)begin;");
    put(&b, ind, "(void)end;");
    /* Unread when the index vector is empty, or the update computation ignores them. */
    put(&b, ind, "(void)pi;");
    for (int64_t i = 0; i < n; i++) put(&b, ind, "(void)u%" PRId64 ";", i);
    if (ucount > 0) {
        /* The update scatter index g_j, row-major. */
        int64_t groups = 1;
        for (int64_t j = 0; j < p.nb; j++) groups *= p.udims[p.usd[j]];
        put(&b, ind, "for (int64_t g = 0; g < %" PRId64 "; g++) {", groups);
        ind++;
        int64_t gs = 1;
        for (int64_t j = p.nb - 1; j >= 0; j--) {
            put(&b, ind, "const int64_t g%" PRId64 " = g / %" PRId64 " %% %" PRId64 ";", j, gs,
                p.udims[p.usd[j]]);
            gs *= p.udims[p.usd[j]];
            /* Groups past the updates' sizes are padding (the indices' sizes are the same:
             * shape inference over the cut operands). */
            if (sized)
                put(&b, ind, "if (g%" PRId64 " >= z[%" PRId64 "]) continue;", j, p.xr + p.usd[j]);
        }
        cxla_strbuf ioff, soff;
        cxla_strbuf_init(&ioff);
        cxla_strbuf_init(&soff);
        cxla_strbuf_puts(&ioff, "0");
        cxla_strbuf_puts(&soff, "0");
        for (int64_t j = 0; j < p.nb; j++) {
            cxla_strbuf_printf(&ioff, " + g%" PRId64 " * %" PRId64, j, p.batch_strides[j]);
            cxla_strbuf_printf(&soff, " + g%" PRId64 " * %" PRId64, j, ustr[p.usd[j]]);
        }
        put(&b, ind, "const int64_t ioff = %s;", ioff.data);
        put(&b, ind, "const int64_t soff = %s;", soff.data);
        put(&b, ind, "(void)ioff;");
        cpu_emit_buf_free(&ioff);
        cpu_emit_buf_free(&soff);
        for (int64_t d = 0; d < p.xr; d++) {
            const char *v = "0";
            int64_t k = -1;
            for (int64_t q = 0; q < p.nsd; q++)
                if (p.sdod[q] == d) k = q;
            if (k >= 0) {
                const char *raw = F("pi[ioff + %" PRId64 "]", k * p.vec_stride);
                v = p.it == CXLA_U64
                        ? F("(%s > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)%s)", raw, raw)
                        : F("(int64_t)%s", raw);
            }
            for (int64_t i = 0; i < p.nib; i++)
                if (p.ib[i] == d) {
                    int64_t bp = p.sib[i] > p.ivd ? p.sib[i] - 1 : p.sib[i];
                    v = F("g%" PRId64, bp);
                }
            put(&b, ind, "const int64_t s%" PRId64 " = %s;", d, v);
        }
        /* A window that does not fit entirely is skipped. */
        cxla_strbuf cond;
        cxla_strbuf_init(&cond);
        cxla_strbuf_puts(&cond, "1");
        for (int64_t d = 0; d < p.xr; d++) {
            int64_t k = -1;
            for (int64_t q = 0; q < p.nw; q++)
                if (p.wdims[q] == d) k = q;
            if (!sized)
                cxla_strbuf_printf(&cond, " && s%" PRId64 " >= 0 && s%" PRId64 " <= %" PRId64, d, d,
                                   p.xdims[d] - p.wext[d]);
            else if (k < 0)
                cxla_strbuf_printf(&cond, " && s%" PRId64 " >= 0 && s%" PRId64 " < z[%" PRId64 "]",
                                   d, d, d);
            else
                cxla_strbuf_printf(&cond,
                                   " && s%" PRId64 " >= 0 && s%" PRId64 " <= z[%" PRId64
                                   "] - z[%" PRId64 "]",
                                   d, d, d, p.xr + p.uwd[k]);
        }
        put(&b, ind, "if (!(%s)) continue;", cond.data);
        cpu_emit_buf_free(&cond);
        cxla_strbuf doff;
        cxla_strbuf_init(&doff);
        cxla_strbuf_puts(&doff, "0");
        for (int64_t d = 0; d < p.xr; d++)
            cxla_strbuf_printf(&doff, " + s%" PRId64 " * %" PRId64, d, xstr[d]);
        put(&b, ind, "const int64_t doff = %s;", doff.data);
        cpu_emit_buf_free(&doff);
        /* The window, row-major. */
        int opened = 0;
        cxla_strbuf de, se;
        cxla_strbuf_init(&de);
        cxla_strbuf_init(&se);
        cxla_strbuf_puts(&de, "doff");
        cxla_strbuf_puts(&se, "soff");
        for (int64_t k = 0; k < p.nw; k++) {
            int64_t ext = p.wext[p.wdims[k]];
            if (sized)
                put(&b, ind,
                    "for (int64_t w%" PRId64 " = 0; w%" PRId64 " < z[%" PRId64 "]; w%" PRId64
                    "++) {",
                    k, k, p.xr + p.uwd[k], k);
            else
                put(&b, ind,
                    "for (int64_t w%" PRId64 " = 0; w%" PRId64 " < %" PRId64 "; w%" PRId64 "++) {",
                    k, k, ext, k);
            ind++;
            opened++;
            cxla_strbuf_printf(&de, " + w%" PRId64 " * %" PRId64, k, xstr[p.wdims[k]]);
            cxla_strbuf_printf(&se, " + w%" PRId64 " * %" PRId64, k, ustr[p.uwd[k]]);
        }
        put(&b, ind, "const int64_t de = %s;", de.data);
        put(&b, ind, "const int64_t se = %s;", se.data);
        put(&b, ind, "(void)se;");
        cpu_emit_buf_free(&de);
        cpu_emit_buf_free(&se);
        cxla_type t0 = instr->operands[0]->shape.type;
        if (p.mode == MODE_ASSIGN) {
            for (int64_t i = 0; i < n; i++)
                put(&b, ind, "o%" PRId64 "[de] = u%" PRId64 "[se];", i, i);
        } else if (p.mode == MODE_REDUCE) {
            put(&b, ind, "o0[de] = %s;", reduce_expr(arena, p.reducer, t0, "o0[de]", "u0[se]"));
        } else {
            const char *cargs[2 * CPU_EMIT_MAX_REDUCER_RESULTS], *res[CPU_EMIT_MAX_REDUCER_RESULTS];
            for (int64_t i = 0; i < n; i++) {
                cargs[i] = F("o%" PRId64 "[de]", i);
                cargs[n + i] = F("u%" PRId64 "[se]", i);
            }
            int64_t tmp = 0;
            cpu_emit_scalar(arena, &b, ind, &tmp, p.comp, cargs, res);
            for (int64_t i = 0; i < n; i++) {
                put(&b, ind, "const %s r%" PRId64 " = %s;",
                    cpu_emit_ctype(instr->operands[i]->shape.type), i, res[i]);
            }
            for (int64_t i = 0; i < n; i++) put(&b, ind, "o%" PRId64 "[de] = r%" PRId64 ";", i, i);
        }
        for (int i = 0; i < opened; i++) put(&b, --ind, "}");
        put(&b, --ind, "}");
    } else {
        for (int64_t i = 0; i < n; i++) put(&b, ind, "(void)o%" PRId64 ";", i);
    }
    if (sized) put(&b, 1, "(void)z;");

    cpu_emit_kernel_head(out, instr, name);
    cxla_strbuf_printf(out, "static void %s_body(%s, int64_t begin, int64_t end) {\n", name,
                       params.data);
    cxla_strbuf_append(out, b.data ? b.data : "", b.len);
    cxla_strbuf_puts(out, "}\n");
    cpu_emit_kernel_entry(out, name, 1, args.data, pre.data);
    cxla_status st = NULL;
    if (out->failed || b.failed || params.failed || args.failed || pre.failed ||
        cpu_emit_fmt_failed())
        st = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s", instr->name);
    if (!st && out_info) {
        out_info->range = 1;
        double bytes = 0;
        for (int64_t i = 0; i < n; i++)
            bytes +=
                2.0 * (double)xcount * (double)cxla_type_storage(instr->operands[i]->shape.type) +
                (double)ucount * (double)cxla_type_storage(instr->operands[n + 1 + i]->shape.type);
        out_info->cost = bytes;
        out_info->in_place = n;
    }
    cpu_emit_buf_free(&b);
    cpu_emit_buf_free(&params);
    cpu_emit_buf_free(&args);
    cpu_emit_buf_free(&pre);
    cxla_arena_destroy(arena);
    return st;
}

cxla_status cpu_emit_scatter(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                             cpu_kernel_info *out_info) {
    return emit_scatter(instr, name, out, out_info, false);
}

bool cpu_emit_sized_scatter_ok(const cxla_instr *instr) {
    sc_plan p;
    return sc_plan_of(instr, &p) && p.xr + p.ur <= CXLA_MAX_RANK;
}

cxla_status cpu_emit_sized_scatter(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                   cpu_kernel_info *out_info) {
    if (!cpu_emit_sized_scatter_ok(instr))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "cpu backend: cannot emit %s (scatter)",
                          instr->name);
    return emit_scatter(instr, name, out, out_info, true);
}
