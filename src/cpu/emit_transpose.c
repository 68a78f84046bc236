/* The emitter's transposes through local blocks and its streaming (non-temporal) stores:
 * the nests of emit.c call them (emit_nest.h) for a nest that reads a transpose across its
 * operand's rows, and for results far larger than the last-level cache. What each does and
 * why is written above its section. */
#include <math.h>
#include <stdlib.h>

#include "cpu/emit_nest.h"
#include "exec/math.h"

/* ---- streaming stores ----------------------------------------------------------------
 *
 * A result far larger than the last-level cache, written whole by one kernel, is stored
 * with non-temporal stores (cxla_stream in the prelude): a plain store first reads the
 * line it writes (write-allocate: a third more traffic for a copy, a quarter for a
 * two-input elementwise kernel) and evicts lines the kernel still reads. Such a result
 * cannot stay in cache for its reader anyway. The nest computes a block of each output in
 * a local array (in L1), then streams it out; the values and their order are unchanged.
 * STREAM_BYTES is the size from which a group of outputs streams: the 32 MiB last-level
 * cache of the machines measured (docs/performance.md); CXLA_CPU_STREAM_BYTES in the
 * environment of the compiling process overrides it (0: never stream; the tests use small
 * values to reach the path with small arrays). */
enum { STREAM_BYTES = 32 << 20 };

static double stream_bytes(void) {
    const char *v = getenv("CXLA_CPU_STREAM_BYTES");
    if (!v || !*v) return STREAM_BYTES;
    char *end = NULL;
    double d = strtod(v, &end);
    if (end == v || *end || !(d >= 0)) return STREAM_BYTES;
    return d > 0 ? d : INFINITY;
}

/* Whether group |g| streams: its outputs hold at least stream_bytes() together. */
bool cpu_nest_stream_group(const group *g) {
    double bytes = 0;
    for (int64_t j = 0; j < g->count; j++) {
        const cxla_shape *s = &g->outs[g->idx[j]]->shape;
        double n = (double)cxla_type_storage(s->type);
        for (int64_t k = 0; k < s->rank; k++) n *= (double)s->dims[k];
        bytes += n;
    }
    return bytes > 0 && bytes >= stream_bytes();
}

/* Whether the kernel computes only a leaf of the module's result: its single output is
 * the entry computation's root, or is read by nothing but that root tuple. No step of the
 * run reads it again, so the size from which it streams is RESULT_STREAM_BYTES, a core's
 * L2 (1 MiB on the machines measured), not the last-level cache: the SGD updates of the
 * MLP step (`w - lr * dw`, 3.2 and 4 MB, read twice what they write) took 35-40% less
 * time streamed (docs/performance.md, h-mlp5). CXLA_CPU_STREAM_BYTES below it lowers it
 * too, and 0 still turns streaming off. */
enum { RESULT_STREAM_BYTES = 1 << 20 };

static bool result_only(const em *e, const group *g) {
    const cxla_instr *top = e->top;
    const cxla_computation *c = top ? top->parent : NULL;
    /* The one output: the instruction itself, or the root of its fused computation. */
    const cxla_instr *o = g->count == 1 ? g->outs[g->idx[0]] : NULL;
    if (!c || !c->is_entry || !o || (o != top && !(e->fused && o == e->fused->root)) ||
        !cxla_type_is_array(top->shape.type))
        return false;
    if (c->root == top) return true;
    if (top->user_count == 0 || c->root->opcode != CXLA_OP_TUPLE) return false;
    for (int64_t u = 0; u < top->user_count; u++)
        if (top->users[u] != c->root) return false;
    return true;
}

static bool stream_result(const em *e, const group *g) {
    double limit = stream_bytes();
    if (limit == INFINITY || !result_only(e, g)) return false;
    if (limit > RESULT_STREAM_BYTES) limit = RESULT_STREAM_BYTES;
    const cxla_shape *s = &g->outs[g->idx[0]]->shape;
    return (double)elements_of(s) * (double)cxla_type_storage(s->type) >= limit;
}

/* Whether a flat nest's blocks stream: only where memory is what bounds the kernel.
 * Measured on the 2-core EPYC (thread CPU time, best of 30, the generated kernels of 16M
 * f32 elements): add of two inputs 17% faster streaming; exp/tanh chains and GELU, which
 * are compute-bound (the same time from cache as from memory), 1-25% slower; one input
 * scaled, 2-5% slower. So a flat nest streams when its kernel calls no transcendental
 * function and reads at least twice the bytes it writes (docs/performance.md). */
bool cpu_nest_stream_flat(const em *e, const group *g) {
    if (!cpu_nest_stream_group(g) && !stream_result(e, g)) return false;
    const cxla_instr *const *list =
        e->fused ? (const cxla_instr *const *)e->fused->instrs : &e->top;
    int64_t n = e->fused ? e->fused->instr_count : 1;
    for (int64_t i = 0; i < n; i++)
        if (exec_math_unary(list[i]->opcode) && cxla_type_is_float(list[i]->shape.type))
            return false;
    return cpu_nest_stream_reads_twice(e, g);
}

bool cpu_nest_stream_reads_twice(const em *e, const group *g) {
    double in = 0, out = 0;
    for (int64_t k = 0; k < e->top->operand_count; k++) {
        const cxla_shape *s = &e->top->operands[k]->shape;
        in += (double)elements_of(s) * (double)cxla_type_storage(s->type);
    }
    for (int64_t j = 0; j < g->count; j++) {
        const cxla_shape *s = &g->outs[g->idx[j]]->shape;
        out += (double)elements_of(s) * (double)cxla_type_storage(s->type);
    }
    return in >= 2 * out;
}

/* Declares the local block obj of |count| elements for each output of |g|. */
void cpu_nest_stream_blocks(em *e, const group *g, int64_t count) {
    for (int64_t j = 0; j < g->count; j++)
        line(e, "_Alignas(64) %s ob%" PRId64 "[%" PRId64 "];",
             cpu_emit_stype(g->outs[g->idx[j]]->shape.type), g->idx[j], count);
}

/* Whether runs of |count| elements of each output of |g| are whole lines (64 bytes). */
bool cpu_nest_stream_lines(const group *g, int64_t count) {
    for (int64_t j = 0; j < g->count; j++) {
        int64_t size = (int64_t)cxla_type_storage(g->outs[g->idx[j]]->shape.type);
        if (size <= 0 || 64 % size != 0 || count * size % 64 != 0) return false;
    }
    return true;
}

/* Streams |count| elements (whole lines: stream_lines) of each output's block from block
 * index |from| to the output at linear index |at|, a statement per line. */
void cpu_nest_stream_out(em *e, const group *g, const char *at, const char *from, int64_t count) {
    for (int64_t j = 0; j < g->count; j++) {
        int64_t per_line = 64 / (int64_t)cxla_type_storage(g->outs[g->idx[j]]->shape.type);
        for (int64_t q = 0; q < count; q += per_line)
            line(e,
                 "cxla_stream_line(&o%" PRId64 "[%s + %" PRId64 "], &ob%" PRId64 "[%s + %" PRId64
                 "]);",
                 g->idx[j], at, q, g->idx[j], from, q);
    }
    e->streamed = true;
}

/* ---- transposes ----------------------------------------------------------------------
 *
 * A nest over |s| reads a transpose's operand with a stride when the operand's innermost
 * dimension (larger than 1) becomes output dimension |tk|, not the output's innermost |last|:
 * walking the output's rows reads one element per cache line of the operand, and rows of
 * big arrays that are a power of two apart fall into one cache set, so even 32 x 32 tiles
 * of the two dimensions evicted each other (docs/performance.md). Instead the nest walks
 * tiles of TA (along tk, or the group K that ends at it: tplan) x TB (along last, or the
 * group L) elements, each in two phases through local blocks:
 *   1. each transpose's operand in its own order: rows of TA elements contiguous in the
 *      operand, stored in the transpose's block;
 *   2. the outputs in theirs: rows of TB elements contiguous in the output, the
 *      transposes' values read from the blocks (registered as the values of the
 *      transposes at those indices, so everything else of a fusion is computed as usual).
 * No line of the big arrays has to stay in cache between rows. A full tile's block is laid
 * out [TA / 8][TB][8]: phase 2 reads it as an interleaved group of 8, which gcc -O2
 * vectorizes with permutes (a register transpose of 8 x 8 blocks, any element size, with
 * no intrinsics: the same C serves `cxla compile --target portable`), and phase 1 writes it
 * in runs of 8. Partial tiles (the edges of K and L) run the same phases with run-time
 * counts and a [TB][TA] block. Each element is moved,
 * never computed differently, so the results are the untiled nest's bits. */

/* STREAM_ROWS: the output rows a full tile streams out at a time, the interleaved group of
 * 8 that phase 2 writes per iteration (transpose_tile). TILE_BYTES, BIG_TILE_ROW_BYTES: the
 * tiles' extents (tile_extents). */
enum { MAX_TRANSPOSES = 4, TILE_BYTES = 16384, BIG_TILE_ROW_BYTES = 128, STREAM_ROWS = 8 };

/* What a transposing nest reads through blocks. Output dimensions that stay neighbours
 * through the transpose move as one: the group K of output dimensions whose operand
 * dimensions are consecutive and end at the operand's innermost (the last of K is tk),
 * and the group L that ends at the output's innermost dimension |last| with consecutive
 * operand dimensions (XLA's normalized 0-2-1 transpose). Each group is walked as one
 * collapsed index, so NHWC -> NCHW tiles C x HW, not C x W. The other dimensions larger
 * than 1 are loops of their own. */
typedef struct tplan {
    const cxla_instr *t[MAX_TRANSPOSES]; /* transposes read through blocks (one perm) */
    int64_t nt;
    int64_t tk, last; /* the output dimensions that end K and L */
    bool in_k[CXLA_MAX_RANK], in_l[CXLA_MAX_RANK];
    int64_t dk, dl; /* the extents of K and L */
    int64_t sk;     /* the output's stride of tk (L's is 1) */
    int64_t sl;     /* the operand's stride of last's operand dimension (K's is 1) */
    int64_t ta, tb; /* tile extents along K and along L */
} tplan;

/* The output dimension the innermost dimension (larger than 1) of transpose |t|'s operand
 * becomes, or -1. */
static int64_t transpose_inner_dim(const cxla_instr *t) {
    int64_t np = 0;
    const int64_t *perm = cxla_instr_ints(t, CXLA_ATTR_DIMENSIONS, &np);
    const cxla_shape *os = &t->operands[0]->shape;
    if (!perm || np != t->shape.rank) return -1;
    int64_t inner = -1;
    for (int64_t k = os->rank - 1; k >= 0 && inner < 0; k--)
        if (os->dims[k] > 1) inner = k;
    for (int64_t k = 0; k < np; k++)
        if (perm[k] == inner) return k;
    return -1;
}

/* Tile extents for elements of |bytes|; |big|: the transposes read at least
 * stream_bytes() (beyond the last-level cache). In cache, a row of the block read from the
 * operand is 256 bytes (4 cache lines: whole lines, few rows in flight), at most 128
 * elements, and the block at most TILE_BYTES (a third of a 48 KiB L1). From memory, both
 * sides of the tile are BIG_TILE_ROW_BYTES (two lines, at most 128 elements): a tile
 * touches TA output rows and TB operand rows, each on a page of its own, and 64 of them
 * stay within the first-level TLB (96 entries on Zen 5) where 128 did not; the generated
 * kernels on the 2-core EPYC, the larger thread's CPU time, best of 20-30 alternating with
 * main's: 8192x8192 f32 32 x 32 tiles 0.86-0.92x of 64 x 64's, 4096x4096 f64 16 x 16
 * 0.76x of 32 x 64, 8192x8192 bf16 64 x 64 0.88x of 128 x 64, u8 128 x 128 unchanged; in
 * cache (1024x1024 and 2048x2048 f32) the small tiles were 1.09-1.19x slower
 * (docs/performance.md, "Transpose tiles"). CXLA_CPU_TRANSPOSE_TILE=AxB in the environment
 * of the compiling process sets both (A a multiple of 8, the block at most 64 KiB), so
 * that one machine can compare tiles. TA is a multiple of 8 (the interleaved block) unless
 * the extent is smaller than 8; both are cut to the extents when those are smaller. */
static void tile_extents(int64_t bytes, bool big, int64_t dk, int64_t dl, int64_t *ta,
                         int64_t *tb) {
    int64_t a = 256 / bytes;
    if (a > 128) a = 128;
    int64_t b = TILE_BYTES / (a * bytes);
    if (b > 128) b = 128;
    if (big) {
        a = BIG_TILE_ROW_BYTES / bytes;
        if (a > 128) a = 128;
        if (a < 8) a = 8;
        b = a;
    }
    const char *v = getenv("CXLA_CPU_TRANSPOSE_TILE");
    long fa = 0, fb = 0;
    char *end = NULL;
    if (v && *v) fa = strtol(v, &end, 10);
    if (fa >= 8 && fa % 8 == 0 && fa <= 1024 && end && *end == 'x') fb = strtol(end + 1, &end, 10);
    if (fb >= 1 && fb <= 1024 && !*end && fa * fb * bytes <= 65536) a = fa, b = fb;
    if (dk < a) a = dk >= 8 ? dk / 8 * 8 : dk; /* whole tiles for most of it */
    if (dl < b) b = dl;
    *ta = a;
    *tb = b;
}

/* The operand dimension after |m| larger than 1 in |os| (or -1). */
static int64_t next_big(const cxla_shape *os, int64_t m) {
    for (int64_t j = m + 1; j < os->rank; j++)
        if (os->dims[j] > 1) return j;
    return -1;
}

/* Whether a nest over |s| reads transposes through blocks, and how (see above). */
static bool transpose_plan(const em *e, const cxla_shape *s, tplan *p) {
    const cxla_instr *const *list =
        e->fused ? (const cxla_instr *const *)e->fused->instrs : &e->top;
    int64_t n = e->fused ? e->fused->instr_count : 1;
    int64_t which[CXLA_MAX_RANK];
    int64_t nb = big_dims(s, which);
    memset(p, 0, sizeof *p);
    p->tk = -1;
    if (nb < 2 || cpu_nest_has_inline_reduce(e)) return false;
    p->last = which[nb - 1];
    /* The first transpose decides; others with the same permutation share the tiles. */
    const int64_t *perm = NULL;
    for (int64_t i = 0; i < n && p->nt < MAX_TRANSPOSES; i++) {
        const cxla_instr *t = list[i];
        if (t->opcode != CXLA_OP_TRANSPOSE || !same_dims(&t->shape, s)) continue;
        int64_t k = transpose_inner_dim(t), np = 0;
        const int64_t *tp = cxla_instr_ints(t, CXLA_ATTR_DIMENSIONS, &np);
        if (k < 0 || k == p->last || s->dims[k] <= 1) continue;
        if (perm && memcmp(perm, tp, (size_t)np * sizeof *tp) != 0) continue;
        perm = tp;
        p->tk = k;
        p->t[p->nt++] = t;
    }
    if (p->nt == 0) return false;
    const cxla_shape *os = &p->t[0]->operands[0]->shape;
    /* The groups (see above): L backwards from last, K backwards from tk; K stays off the
     * first dimension unless it is tk itself (the ranged loop counts its iterations). */
    int64_t jl = nb - 1, jk = -1;
    while (jl > 0 && next_big(os, perm[which[jl - 1]]) == perm[which[jl]]) jl--;
    for (int64_t j = 0; j < nb; j++)
        if (which[j] == p->tk) jk = j;
    int64_t jk0 = jk;
    while (jk0 > 1 && next_big(os, perm[which[jk0 - 1]]) == perm[which[jk0]]) jk0--;
    p->dk = p->dl = 1;
    for (int64_t j = jk0; j <= jk; j++) {
        p->in_k[which[j]] = true;
        p->dk *= s->dims[which[j]];
    }
    for (int64_t j = jl; j < nb; j++) {
        p->in_l[which[j]] = true;
        p->dl *= s->dims[which[j]];
    }
    p->sk = 1;
    for (int64_t k = p->tk + 1; k < s->rank; k++) p->sk *= s->dims[k];
    p->sl = 1;
    for (int64_t m = perm[p->last] + 1; m < os->rank; m++) p->sl *= os->dims[m];
    /* The widest element read through a block sets the tile, and the bytes they read
     * together its kind. */
    int64_t bytes = 1;
    double read = 0;
    for (int64_t j = 0; j < p->nt; j++) {
        int64_t b = (int64_t)cxla_type_storage(p->t[j]->shape.type);
        if (b > bytes) bytes = b;
        read += (double)elements_of(&p->t[j]->shape) * (double)b;
    }
    tile_extents(bytes, read > 0 && read >= stream_bytes(), p->dk, p->dl, &p->ta, &p->tb);
    return true;
}

/* The iterations of the outer loop of the nest over |s| (|dims|: a nest over dimensions,
 * else a flat loop): tiles of K when the nest is a transposing one whose first dimension
 * is tk, so that the threads' parts are whole tiles. */
int64_t cpu_nest_range(const em *e, const cxla_shape *s, bool dims) {
    int64_t which[CXLA_MAX_RANK];
    tplan p;
    if (dims && big_dims(s, which) >= 2 && transpose_plan(e, s, &p) && p.tk == which[0])
        return p.dk / p.ta + (p.dk % p.ta ? 1 : 0);
    return cpu_nest_elementwise_range(s, dims);
}

/* The index where K's collapsed index is |ck| and L's is |cl|, the other dimensions
 * those of |x|: of the output (|t| NULL) or of transpose |t|'s operand. The dimensions
 * of K and L are left to be derived from the linear offset (ix_dim) if a value needs them. */
static ix tile_ix(em *e, const tplan *p, const ix *x, const char *ck, const char *cl,
                  const cxla_instr *t) {
    int64_t np = 0;
    const int64_t *perm = t ? cxla_instr_ints(t, CXLA_ATTR_DIMENSIONS, &np) : NULL;
    const cxla_shape *sh = t ? &t->operands[0]->shape : NULL;
    ix y = t ? ix_new(sh->rank, sh->dims) : ix_new(x->rank, x->dims);
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    for (int64_t k = 0; k < x->rank; k++) {
        if (p->in_k[k] || p->in_l[k] || x->dims[k] == 1) continue;
        int64_t m = t ? perm[k] : k;
        y.d[m] = x->d[k];
        cxla_strbuf_printf(&b, "%s * %" PRId64 " + ", x->d[k], stride_of(&y, m));
    }
    cxla_strbuf_printf(&b, "%s * %" PRId64 " + %s * %" PRId64, ck, t ? 1 : p->sk, cl,
                       t ? p->sl : 1);
    y.lin = F("(%s)", b.data ? b.data : "0");
    cpu_emit_buf_free(&b);
    return y;
}

/* One tile's two phases (see above): |full| with constant counts and the interleaved
 * block, else run-time counts |na| x |nb| and a [TB][TA] block. The tile starts at K's
 * index |tka| and L's index |tlb|; the other dimensions are |x|'s. |stream| (full tiles
 * only): phase 2 writes each group of 8 output rows to the outputs' [8][TB] blocks ob<j>,
 * which are then streamed out (streaming stores, above) before the next group. */
static void transpose_tile(em *e, const group *g, const tplan *p, const ix *x, const char *tka,
                           const char *tlb, const char *na, const char *nb, const char *const *blk,
                           bool full, bool stream) {
    int64_t mark = e->ncse;
    int64_t ta = p->ta, tb = p->tb;
    /* Phase 1: the operands, rows along K. */
    if (full) {
        line(e, "for (int64_t ja = 0; ja < %" PRId64 "; ja++) {", tb);
        e->indent++;
        for (int64_t j = 0; j < p->nt; j++) {
            /* The next tile's row of an operand read straight from an input (the next
             * along K, the order of transpose_nest): fetched while this one is worked on
             * (about a quarter faster out of cache). */
            const cxla_instr *op = p->t[j]->operands[0];
            int64_t in = cpu_nest_input_index(e, op);
            if (in < 0) continue;
            int64_t size = (int64_t)cxla_type_storage(op->shape.type);
            for (int64_t c = 0; c < ta; c += 64 / size) {
                int64_t ahead = ta + c;
                const char *next =
                    F("(%s + %" PRId64 " < %" PRId64 " ? %s + %" PRId64 " : %" PRId64 ")", tka,
                      ahead, p->dk, tka, ahead, p->dk - 1);
                ix z = tile_ix(e, p, x, next, F("(%s + ja)", tlb), p->t[j]);
                line(e, "CXLA_PREFETCH(&p%" PRId64 "[%s]);", in, cpu_nest_ix_lin(e, &z));
            }
        }
        line(e, "for (int64_t jg = 0; jg < %" PRId64 "; jg++) {", ta / 8);
        line(e, "    for (int64_t jk = 0; jk < 8; jk++) {");
        e->indent += 2;
    } else {
        line(e, "for (int64_t ja = 0; ja < %s; ja++) {", nb);
        line(e, "    for (int64_t jb = 0; jb < %s; jb++) {", na);
        e->indent += 2;
    }
    const char *ck = full ? F("(%s + jg * 8 + jk)", tka) : F("(%s + jb)", tka);
    const char *cl = F("(%s + ja)", tlb);
    for (int64_t j = 0; j < p->nt; j++) {
        ix z = tile_ix(e, p, x, ck, cl, p->t[j]);
        const char *v = cpu_nest_value(e, p->t[j]->operands[0], &z);
        if (full)
            line(e, "%s[jg * %" PRId64 " + ja * 8 + jk] = %s;", blk[j], tb * 8, v);
        else
            line(e, "%s[ja * %" PRId64 " + jb] = %s;", blk[j], ta, v);
    }
    cse_reset(e, mark);
    close_loops(e, full ? 3 : 2);
    /* Phase 2: the outputs, rows along L. */
    if (full) {
        line(e, "for (int64_t jg = 0; jg < %" PRId64 "; jg++) {", ta / 8);
        line(e, "    for (int64_t ja = 0; ja < %" PRId64 "; ja++) {", tb);
    } else {
        line(e, "for (int64_t jb = 0; jb < %s; jb++) {", na);
        line(e, "    for (int64_t ja = 0; ja < %s; ja++) {", nb);
    }
    e->indent += 2;
    /* A full tile: 8 output rows per iteration, one statement each, so that the block is
     * read as an interleaved group of 8 and each row is stored contiguously. */
    for (int64_t k8 = 0; k8 < (full ? 8 : 1); k8++) {
        ck = full ? F("(%s + jg * 8 + %" PRId64 ")", tka, k8) : F("(%s + jb)", tka);
        ix w = tile_ix(e, p, x, ck, cl, NULL);
        const char *key = cpu_nest_ix_lin(e, &w);
        for (int64_t j = 0; j < p->nt; j++)
            cpu_nest_cse_add(
                e, p->t[j], key,
                full ? F("%s[jg * %" PRId64 " + ja * 8 + %" PRId64 "]", blk[j], tb * 8, k8)
                     : F("%s[ja * %" PRId64 " + jb]", blk[j], ta));
        if (stream) e->stream_at = F("%" PRId64 " * %" PRId64 " + ja", k8, tb);
        cpu_nest_store_group(e, g, &w);
        e->stream_at = NULL;
        cse_reset(e, mark);
    }
    if (!stream) {
        close_loops(e, 2);
        return;
    }
    close_loops(e, 1);
    /* Phase 3, inside phase 2's loop over groups of 8 rows: those 8 output rows, from the
     * local block (8 x TB: STREAM_ROWS) to memory. Streaming each group as soon as it is
     * written, rather than the whole TA x TB block after phase 2, keeps the output block
     * at 2 KiB instead of 16 (f32), so the operand's block and the lines in flight have
     * the 48 KiB L1 to themselves: 8192x8192 f32 on the 2-core EPYC, thread CPU time of
     * the kernel 0.88-0.90x, on small and on huge pages (docs/performance.md). */
    line(e, "for (int64_t jr = 0; jr < %d; jr++) {", STREAM_ROWS);
    e->indent++;
    ix w = tile_ix(e, p, x, F("(%s + jg * %d + jr)", tka, STREAM_ROWS), tlb, NULL);
    cpu_nest_stream_out(e, g, cpu_nest_ix_lin(e, &w), F("jr * %" PRId64, tb), tb);
    cse_reset(e, mark);
    close_loops(e, 2);
}

/* A transposing nest (see above): the dimensions larger than 1 in order, K as tiles of TA
 * where tk is, L as tiles of TB innermost, each tile in two phases. The first dimension is
 * ranged, whether it is K (then K is tk alone, ranged in tiles) or not. */
static void transpose_nest(em *e, const group *g, const cxla_shape *s, const tplan *p) {
    int64_t which[CXLA_MAX_RANK];
    int64_t nb = big_dims(s, which);
    ix x = ix_new(s->rank, s->dims);
    for (int64_t k = 0; k < s->rank; k++) x.d[k] = "0";
    /* The blocks, one per transpose, as its value type, on cache lines. The alignment is
     * also what keeps gcc 12.2 (-O2 -march=native) from storing with an aligned vector
     * move into a small block it placed in the red zone at an address that is not
     * aligned (a crash on f32[2,3,4] -> [2,4,3]: 48 bytes). */
    const char *blk[MAX_TRANSPOSES];
    for (int64_t j = 0; j < p->nt; j++) {
        blk[j] = F("blk%" PRId64, e->tmp++);
        line(e, "_Alignas(64) %s %s[%" PRId64 "];", cpu_emit_ctype(p->t[j]->shape.type), blk[j],
             p->ta * p->tb);
    }
    /* Full tiles stream their rows out when the outputs are large (see above) and the
     * rows of a tile start on lines wherever the output does (rows of whole lines); the
     * edges store as they are. */
    bool stream = p->ta % 8 == 0 && cpu_nest_stream_group(g) && cpu_nest_stream_lines(g, p->tb) &&
                  cpu_nest_stream_lines(g, p->dl);
    if (stream) cpu_nest_stream_blocks(e, g, STREAM_ROWS * p->tb);
    int opened = 0;
    const char *tka = "tka", *na = "na";
    /* K is walked in super-blocks of SB elements, a page (4 KiB) of an operand row or 16
     * tiles, whichever is more: all of L for one super-block, then the next. A 64-row
     * strip of the operand then stays on the same 64 pages for the super-block's tiles, and
     * its SB output rows on SB pages for 4 KiB of L, so the TLB keeps both (tiles that ran
     * along L first took a miss for every operand row of every tile: 8192x8192 f32). */
    int64_t size = (int64_t)cxla_type_storage(p->t[0]->shape.type), sb = p->ta * 16;
    if (sb * size < 4096) sb = 4096 / size / p->ta * p->ta;
    const char *k_hi = NULL;
    for (int64_t j = 0; j < nb; j++) {
        int64_t k = which[j];
        if (p->in_l[k] || (p->in_k[k] && k != p->tk)) continue;
        const char *lo = j == 0 ? lo_of(e) : "0";
        if (k == p->tk) {
            /* Ranged: [begin, end) counts tiles (nest_range). */
            const char *hi = F("%" PRId64, p->dk);
            if (j == 0 && e->ranged) {
                lo = F("begin * %" PRId64, p->ta);
                hi = F("(end * %" PRId64 " < %" PRId64 " ? end * %" PRId64 " : %" PRId64 ")", p->ta,
                       p->dk, p->ta, p->dk);
            }
            line(e, "const int64_t k_hi = %s;", hi);
            line(e, "for (int64_t tks = %s; tks < k_hi; tks += %" PRId64 ") {", lo, sb);
            e->indent++;
            line(e, "const int64_t tke = k_hi - tks < %" PRId64 " ? k_hi : tks + %" PRId64 ";", sb,
                 sb);
            k_hi = "tke";
        } else {
            const char *hi = j == 0 ? hi_of(e, s->dims[k]) : F("%" PRId64, s->dims[k]);
            const char *i = F("i%" PRId64, k);
            line(e, "for (int64_t %s = %s; %s < %s; %s++) {", i, lo, i, hi, i);
            e->indent++;
            x.d[k] = i;
        }
        opened++;
    }
    const char *tlb = "tlb", *nl = "nl";
    line(e, "for (int64_t %s = 0; %s < %" PRId64 "; %s += %" PRId64 ") {", tlb, tlb, p->dl, tlb,
         p->tb);
    e->indent++;
    opened++;
    line(e, "const int64_t %s = %" PRId64 " - %s < %" PRId64 " ? %" PRId64 " - %s : %" PRId64 ";",
         nl, p->dl, tlb, p->tb, p->dl, tlb, p->tb);
    if (k_hi) { /* the tiles of K's super-block */
        line(e, "for (int64_t %s = tks; %s < %s; %s += %" PRId64 ") {", tka, tka, k_hi, tka, p->ta);
        e->indent++;
        opened++;
        line(e, "const int64_t %s = %s - %s < %" PRId64 " ? %s - %s : %" PRId64 ";", na, k_hi, tka,
             p->ta, k_hi, tka, p->ta);
    }
    bool fits = p->ta % 8 == 0;
    if (fits) {
        line(e, "if (%s == %" PRId64 " && %s == %" PRId64 ") {", na, p->ta, nl, p->tb);
        e->indent++;
        transpose_tile(e, g, p, &x, tka, tlb, na, nl, blk, true, stream);
        e->indent--;
        line(e, "} else {");
        e->indent++;
    }
    transpose_tile(e, g, p, &x, tka, tlb, na, nl, blk, false, false);
    if (fits) close_loops(e, 1);
    close_loops(e, opened);
}

/* Writes the transposing nest when a transpose of the nest over |s| asks for it (see above). */
bool cpu_nest_transpose(em *e, const group *g, const cxla_shape *s) {
    tplan tp;
    if (!transpose_plan(e, s, &tp)) return false;
    transpose_nest(e, g, s, &tp);
    return true;
}
