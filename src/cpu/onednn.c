/* Dot and convolution on the cpu backend: oneDNN primitives where they express the
 * instruction, the interpreter's blocked matrix product otherwise (onednn.h says which).
 *
 * oneDNN's primitives are created here once per instruction and run many times. A call
 * keeps, per tensor, the memory descriptor of the caller's buffer (the operand's shape
 * in row-major order, its dims permuted and merged by strides) and the one the primitive
 * chose; when they differ (a convolution that runs faster on blocked weights), a reorder
 * primitive converts on every run. Each run makes its own stream and memory objects, and
 * takes a block of work memory for the reordered tensors and the scratchpad (the
 * user-managed scratchpad mode) from blocks shared by every call (work_get), so one call
 * serves several threads and the calls of a module do not each keep a block. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/floats.h"
#include "base/memcount.h"
#include "cpu/emit.h"
#include "cpu/onednn.h"
#include "cpu/onednn_loops.h"
#include "literal/literal_internal.h"
#include "passes/epilogue.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

void cpu_call_release(cpu_call *call) {
    if (call->free_state) call->free_state(call->state);
    memset(call, 0, sizeof(*call));
}

/* ---- oneDNN ----------------------------------------------------------------------------- */

#ifdef CXLA_HAVE_ONEDNN
#include <dlfcn.h>
#include <dnnl.h>
#include <dnnl_debug.h>
#include <pthread.h>
#include <stdatomic.h>

#include "cpu/onednn_internal.h"

bool cpu_onednn_available(void) {
    return true;
}

void cpu_dnn_row_major_strides(const cxla_shape *s, int64_t *strides) {
    int64_t st = 1;
    for (int64_t d = s->rank - 1; d >= 0; d--) {
        strides[d] = st;
        st *= s->dims[d];
    }
}

/* One engine per process: oneDNN's CPU engine has no state worth more than one. */
static dnnl_engine_t engine;
static dnnl_status_t engine_status = dnnl_runtime_error;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;

dnnl_engine_t cpu_dnn_engine(void) {
    return engine;
}

/* Debian's oneDNN runs its parallel regions on OpenMP, with OpenMP's thread count; a
 * call sets the executable's count for the calling thread (an OpenMP setting per thread)
 * through omp_set_num_threads, looked up in the OpenMP runtime that libdnnl loaded, so
 * that cxla does not link that runtime itself. NULL: not found (the default stays). */
static void (*set_omp_threads)(int);
static int (*get_omp_threads)(void);

static void engine_init(void) {
    engine_status = dnnl_engine_create(&engine, dnnl_cpu, 0);
    void *sym = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    /* dlsym returns data pointers; POSIX guarantees the conversion. */
    if (sym) memcpy(&set_omp_threads, &sym, sizeof(sym));
    sym = dlsym(RTLD_DEFAULT, "omp_get_max_threads");
    if (sym) memcpy(&get_omp_threads, &sym, sizeof(sym));
}

static void work_users(int delta);

static void dnn_free(void *state) {
    dnn_state *st = state;
    if (!st) return;
    if (st->prim) dnnl_primitive_destroy(st->prim);
    for (int i = 0; i < TENSORS; i++) {
        if (st->t[i].reorder) dnnl_primitive_destroy(st->t[i].reorder);
        free(st->t[i].cached);
    }
    for (int i = 0; i < MAX_VARIANTS; i++) dnn_free(st->fewer[i]);
    for (int i = 0; i < st->parts; i++) dnn_free(st->part[i]);
    cpu_call_release(&st->fallback);
    pthread_mutex_destroy(&st->mu);
    free(st);
    work_users(-1);
}

static cxla_status dnn_error(const cxla_instr *instr, const char *what, dnnl_status_t s) {
    return cxla_error(CXLA_STATUS_INTERNAL, "%s: oneDNN %s failed: %s", instr->name, what,
                      dnnl_status2str(s));
}

cxla_status cpu_dnn_error(const cxla_instr *instr, const char *what, dnnl_status_t s) {
    return dnn_error(instr, what, s);
}

static void *aligned(size_t size) {
    return aligned_alloc(ALIGN, (size + ALIGN - 1) / ALIGN * ALIGN + (size ? 0 : ALIGN));
}

/* Work blocks, shared by every call of the process: a run takes the smallest kept block
 * that is big enough, or a new one, and gives it back after. Each call keeping a block of
 * its own held a second copy of a model's weights (a ResNet-50 run reorders its 100 MB of
 * weights into 28 blocks, one per convolution: docs/performance.md, "Memory"); the shared
 * blocks are reused from call to call, so their pages stay faulted in as the calls' own
 * did. At most WORK_KEEP are kept (the biggest, when more are given back at once: calls
 * running at once, the parts of a split call); all are freed when the last call is.
 * Blocks count as memory held (cxla_mem_take) from allocation to free. */
enum { WORK_KEEP = 8 };
typedef struct work_block {
    char *p;
    size_t size;
} work_block;
static pthread_mutex_t work_mu = PTHREAD_MUTEX_INITIALIZER;
static work_block work_kept[WORK_KEEP];
static int work_count;
static int64_t dnn_states; /* calls alive (guarded by work_mu) */

static void work_release(work_block b) {
    free(b.p);
    cxla_mem_give(b.size);
}

/* Out of memory for a run's work block: what it is for and its bytes (the step adds the
 * instruction). */
static cxla_status work_oom(const dnn_state *st) {
    return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory allocating oneDNN's work memory (%zu bytes: the reordered "
                      "operands and the scratchpad)",
                      st->work_size);
}

/* A block of at least |size| bytes, or one with p NULL when memory is short. */
static work_block work_get(size_t size) {
    work_block got = {0};
    pthread_mutex_lock(&work_mu);
    int best = -1;
    for (int i = 0; i < work_count; i++)
        if (work_kept[i].size >= size && (best < 0 || work_kept[i].size < work_kept[best].size))
            best = i;
    if (best >= 0) {
        got = work_kept[best];
        work_kept[best] = work_kept[--work_count];
    }
    pthread_mutex_unlock(&work_mu);
    if (got.p || !cxla_mem_take(size)) return got;
    got.p = aligned(size);
    got.size = size;
    if (!got.p) cxla_mem_give(size);
    return got;
}

static void work_put(work_block b) {
    if (!b.p) return;
    pthread_mutex_lock(&work_mu);
    if (work_count < WORK_KEEP) {
        work_kept[work_count++] = b;
        b.p = NULL;
    } else {
        int small = 0;
        for (int i = 1; i < work_count; i++)
            if (work_kept[i].size < work_kept[small].size) small = i;
        if (work_kept[small].size < b.size) {
            work_block out = work_kept[small];
            work_kept[small] = b;
            b = out;
        }
    }
    pthread_mutex_unlock(&work_mu);
    if (b.p) work_release(b);
}

/* A call made (+1) or freed (-1); the last one freed frees the kept blocks. */
static void work_users(int delta) {
    work_block out[WORK_KEEP];
    int n = 0;
    pthread_mutex_lock(&work_mu);
    dnn_states += delta;
    if (dnn_states == 0) {
        n = work_count;
        memcpy(out, work_kept, sizeof(out[0]) * (size_t)n);
        work_count = 0;
    }
    pthread_mutex_unlock(&work_mu);
    for (int i = 0; i < n; i++) work_release(out[i]);
}

/* Copies a row-major array of |t|'s dims with the flagged dims reversed. */
static void flip_copy(const tensor *t, const void *src, void *dst) {
    int64_t strides[CXLA_MAX_RANK], idx[CXLA_MAX_RANK] = {0}, count = 1;
    for (int64_t d = t->rank - 1; d >= 0; d--) {
        strides[d] = count;
        count *= t->dims[d];
    }
    const unsigned char *s = src;
    unsigned char *o = dst;
    for (int64_t e = 0; e < count; e++) {
        int64_t off = 0;
        for (int64_t d = 0; d < t->rank; d++)
            off += (t->flip_dim[d] ? t->dims[d] - 1 - idx[d] : idx[d]) * strides[d];
        memcpy(o + (size_t)off * t->es, s + (size_t)e * t->es, t->es);
        for (int64_t d = t->rank - 1; d >= 0; d--) {
            if (++idx[d] < t->dims[d]) break;
            idx[d] = 0;
        }
    }
}

/* ---- weights packed into oneDNN's blocked layout ---------------------------------------
 *
 * oneDNN's brgemm matmul (2.6) reads row-major weights [K, N] as panels of 64 columns whose
 * rows lie a whole row of N apart; in its own blocked layout (BA16a64b: each panel of 64
 * columns contiguous, in blocks of 16 rows) the same product runs 5-12% faster (a
 * 1024x1024 layer over 256 rows: 2429 -> 2226 us, one thread; 2048^3: 42.9 -> 35.7 ms on
 * two; docs/performance.md). oneDNN's reorder into that layout walks the source down the
 * columns of a block and takes 4-5x longer than a copy (4 MB: 400-560 us); pack_rows
 * copies row by row instead (each row of the source once, in runs of a block's columns),
 * at the speed of a copy (4 MB: about 100 us on one thread), split over the pool's rows. */

/* Whether the primitive's weights layout |prim| is one pack_rows writes from the caller's
 * row-major |user| [K, N] (columns dense): 2 dims, blocked, at most two inner blocks, the
 * last over the columns, the other over the rows; fills |t|'s packing fields. */
static bool pack_recognize(tensor *t, const dnnl_memory_desc_t *user,
                           const dnnl_memory_desc_t *prim) {
    if (user->ndims != 2 || prim->ndims != 2 || user->format_kind != dnnl_blocked ||
        prim->format_kind != dnnl_blocked || user->data_type != prim->data_type ||
        prim->offset0 != 0 || user->offset0 != 0)
        return false;
    const dnnl_blocking_desc_t *ub = &user->format_desc.blocking, *pb = &prim->format_desc.blocking;
    if (ub->inner_nblks != 0 || ub->strides[1] != 1 || ub->strides[0] < user->dims[1]) return false;
    int n = pb->inner_nblks;
    if (n < 1 || n > 2 || pb->inner_idxs[n - 1] != 1 || (n == 2 && pb->inner_idxs[0] != 0))
        return false;
    if (prim->padded_offsets[0] != 0 || prim->padded_offsets[1] != 0) return false;
    int64_t bk = n == 2 ? pb->inner_blks[0] : 1, bn = pb->inner_blks[n - 1];
    if (bk < 1 || bn < 1 || prim->padded_dims[0] % bk != 0 || prim->padded_dims[1] % bn != 0)
        return false;
    t->pk = user->dims[0];
    t->pn = user->dims[1];
    t->pkp = prim->padded_dims[0];
    t->ld = ub->strides[0];
    t->bk = bk;
    t->bn = bn;
    t->sk = pb->strides[0];
    t->sn = pb->strides[1];
    t->es = dnnl_data_type_size(prim->data_type);
    /* Every element of the buffer is written once: the blocks tile it, in either order. */
    int64_t kb = t->pkp / bk, nb = prim->padded_dims[1] / bn, block = bk * bn;
    bool tiles = (t->sk == block && t->sn == kb * block) || (t->sn == block && t->sk == nb * block);
    return tiles && t->es > 0 && (size_t)(kb * nb * block) * t->es == t->prim_size;
}

typedef struct pack_job {
    const tensor *t;
    const unsigned char *src;
    unsigned char *dst;
} pack_job;

/* Rows [begin, end) of the padded weights (a cpu_kernel_fn over in[0] = the pack_job):
 * each column block's run copied, the padding past K and N zeroed. */
static void pack_rows(void *const *out, const void *const *in, int64_t begin, int64_t end) {
    (void)out;
    const pack_job *j = in[0];
    const tensor *t = j->t;
    size_t es = t->es;
    int64_t nb = (t->pn + t->bn - 1) / t->bn;
    if (end > t->pkp) end = t->pkp;
    for (int64_t k = begin; k < end; k++) {
        unsigned char *row = j->dst + (size_t)((k / t->bk) * t->sk + (k % t->bk) * t->bn) * es;
        const unsigned char *from = j->src + (size_t)(k * t->ld) * es;
        for (int64_t b = 0; b < nb; b++) {
            unsigned char *d = row + (size_t)(b * t->sn) * es;
            int64_t n0 = b * t->bn, w = k < t->pk ? t->pn - n0 : 0;
            if (w > t->bn) w = t->bn;
            if (w > 0) memcpy(d, from + (size_t)n0 * es, (size_t)w * es);
            if (w < t->bn) memset(d + (size_t)w * es, 0, (size_t)(t->bn - w) * es);
        }
    }
}

/* ---- f8 operands widened ----------------------------------------------------------------
 *
 * oneDNN 2.6 has no f8 matmul; every value of the f8 types is a bf16 value (at most 4
 * significand bits, exponents well inside bf16's), so an f8 operand is widened to bf16 --
 * exactly -- and the product runs on oneDNN's bf16 kernels (avx512_core_bf16's vdpbf16ps,
 * AMX where the CPU has it), whose products of two bf16 values are exact in f32 and whose
 * sums are f32: the interpreter's products and accumulation type, in another order
 * (docs/semantics.md, "Dot and convolution on the cpu backend"). Beside an f32 operand the
 * f8 one is widened to f32 instead, and so is a bf16 or f16 one (oneDNN 2.6 multiplies no
 * mixed pair of them: such dots ran the interpreter's loops). */

/* The type the primitive reads an operand of type |t| as, beside an operand of type
 * |other|: |t| itself when oneDNN takes it, bf16 or f32 for a byte-sized f8 type whose
 * values widen exactly (widen_table), CXLA_TYPE_INVALID otherwise. */
static cxla_type wide_type(cxla_type t, cxla_type other) {
    if ((t == CXLA_BF16 || t == CXLA_F16) && other == CXLA_F32) return CXLA_F32;
    if (t == CXLA_F32 || t == CXLA_BF16 || t == CXLA_F16) return t;
    if (!cxla_type_is_float(t) || cxla_type_bits(t) != 8 || cxla_type_storage(t) != 1)
        return CXLA_TYPE_INVALID;
    if (other == CXLA_F32) return CXLA_F32;
    if (other == CXLA_BF16 || (cxla_type_is_float(other) && cxla_type_bits(other) == 8))
        return CXLA_BF16;
    return CXLA_TYPE_INVALID;
}

/* Sets |t| up to widen |from| to |to|: bf16 or f16 to f32 through cxla_floats_convert
 * (exact), an f8 type through a table (below). */
static bool widen_table(tensor *t, cxla_type from, cxla_type to);
static bool widen_setup(tensor *t, cxla_type from, cxla_type to) {
    if (cxla_type_storage(from) == 1) return widen_table(t, from, to);
    t->narrow = from;
    t->wsize = 4;
    return to == CXLA_F32 && cxla_floats_can_convert(from, to);
}

/* Fills |t|'s table from f8 type |from| to |to| (bf16 or f32): each byte's value as the
 * interpreter reads it (cxla_load_f64), in |to|'s bits. False when a value is not exact in
 * |to|, or is a bf16 subnormal (oneDNN's bf16 kernels read those as zero; no f8 type but
 * f8e8m0fnu, which wide_type leaves out, has one). NaN stays a quiet NaN of its sign. */
static bool widen_table(tensor *t, cxla_type from, cxla_type to) {
    t->narrow = from;
    t->wsize = to == CXLA_F32 ? 4 : 2;
    for (int b = 0; b < 256; b++) {
        unsigned char byte = (unsigned char)b;
        double v = cxla_load_f64(from, &byte);
        float f = (float)v;
        uint32_t bits;
        memcpy(&bits, &f, sizeof(bits));
        if (isnan(v)) {
            bits = (bits & 0x80000000u) | 0x7FC00000u;
        } else if ((double)f != v) {
            return false;
        } else if (to == CXLA_BF16 && ((bits & 0xFFFFu) != 0 || (f != 0 && fabsf(f) < 0x1p-126f))) {
            return false;
        }
        t->lut[b] = to == CXLA_F32 ? bits : bits >> 16;
    }
    return true;
}

typedef struct widen_job {
    const tensor *t;
    const unsigned char *src;
    void *dst;
} widen_job;

/* Elements [begin, end) of a widened operand (a cpu_kernel_fn over in[0] = the widen_job). */
static void widen_rows(void *const *out, const void *const *in, int64_t begin, int64_t end) {
    (void)out;
    const widen_job *j = in[0];
    const uint32_t *lut = j->t->lut;
    if (end > j->t->count) end = j->t->count;
    if (begin >= end) return;
    if (cxla_type_storage(j->t->narrow) == 2) { /* bf16 or f16 to f32 */
        cxla_floats_convert(j->t->narrow, j->src + (size_t)begin * 2, CXLA_F32,
                            (uint32_t *)j->dst + begin, end - begin);
    } else if (j->t->wsize == 2) {
        uint16_t *d = j->dst;
        for (int64_t i = begin; i < end; i++) d[i] = (uint16_t)lut[j->src[i]];
    } else {
        uint32_t *d = j->dst;
        for (int64_t i = begin; i < end; i++) d[i] = lut[j->src[i]];
    }
}

/* Widens |t|'s operand at |src| into |dst| (count * wsize bytes), split over |pool|. */
static void widen(const tensor *t, cpu_pool *pool, const void *src, void *dst) {
    widen_job job = {t, src, dst};
    const void *in[1] = {&job};
    cpu_kernel_info info = {.range = t->count, .cost = (double)t->count * (1 + t->wsize)};
    cpu_pool_run_kernel(pool, widen_rows, &info, NULL, in, NULL);
}

typedef struct round_job {
    cxla_type to;
    const float *src;
    void *dst;
    int64_t count;
} round_job;

/* Elements [begin, end) of a result rounded from f32 (a cpu_kernel_fn over in[0] = the
 * round_job): cxla_floats_convert, the interpreter's rounding of its f32 sums. */
static void round_rows(void *const *out, const void *const *in, int64_t begin, int64_t end) {
    (void)out;
    const round_job *j = in[0];
    if (end > j->count) end = j->count;
    if (begin >= end) return;
    size_t es = cxla_type_storage(j->to);
    cxla_floats_convert(CXLA_F32, j->src + begin, j->to, (char *)j->dst + (size_t)begin * es,
                        end - begin);
}

/* Rounds |count| f32 values at |src| to |to| at |dst|, split over |pool|. */
static void round_out(cxla_type to, cpu_pool *pool, const void *src, void *dst, int64_t count) {
    round_job job = {to, src, dst, count};
    const void *in[1] = {&job};
    cpu_kernel_info info = {.range = count,
                            .cost = (double)count * (4.0 + (double)cxla_type_storage(to))};
    cpu_pool_run_kernel(pool, round_rows, &info, NULL, in, NULL);
}

/* Whether |instr|'s matmul should take its weights in oneDNN's layout, packed on every run:
 * f32 weights [K, N] (an f8 operand widened to f32 too) row-major (no batch dims) and an M large
 * enough that the copy of K x N elements is a few percent of the product's M x K x N multiply-adds
 * (M >= 512), N >= 64 (a narrower product would be padded to 64 columns). CXLA_ONEDNN_WEIGHTS=plain
 * turns it off, to compare. */
static bool want_packed(int nd, int64_t m, int64_t k, int64_t n, cxla_type wt, int64_t n_stride) {
    if (nd != 2 || wt != CXLA_F32 || n_stride != 1 || m < 512 || n < 64 || k < 16) return false;
    const char *env = getenv("CXLA_ONEDNN_WEIGHTS");
    return !(env && strcmp(env, "plain") == 0);
}

static cxla_status dnn_make(const cxla_instr *instr, int threads, cpu_pool *pool,
                            const sub_spec *sub, dnn_state **out);

/* The call of |st|'s instruction made for |threads| threads (see MAX_VARIANTS), or NULL
 * when it cannot be made (then |st| itself runs). */
static cxla_status variant(dnn_state *st, int threads, const dnn_state **out) {
    *out = NULL;
    pthread_mutex_lock(&st->mu);
    cxla_status s = NULL;
    if (!st->fewer[threads]) s = dnn_make(st->instr, threads, NULL, NULL, &st->fewer[threads]);
    *out = st->fewer[threads];
    pthread_mutex_unlock(&st->mu);
    return s;
}

static cxla_status split_run(const dnn_state *st, void *const *out, const void *const *in);

static cxla_status dnn_run(void *state, void *const *out, const void *const *in) {
    const dnn_state *st = state;
    if (st->parts > 0) return split_run(st, out, in);
    /* Replicas running at once on the pool share its threads (threadpool.h); OpenMP's
     * count is per calling thread, so each replica's thread sets its own. */
    int threads = st->pool ? cpu_pool_share(st->pool) : st->threads;
    if (threads > 0 && threads < st->threads && threads < MAX_VARIANTS) {
        const dnn_state *v = NULL;
        CXLA_RETURN_IF_ERROR(variant((dnn_state *)st, threads, &v));
        if (v) st = v;
    }
    dnnl_stream_t stream = NULL;
    dnnl_memory_t user_mem[TENSORS] = {0}, prim_mem[TENSORS] = {0}, scratch_mem = NULL;
    void *flipped[TENSORS] = {0};
    work_block wb = {0};
    if (st->work_size) {
        wb = work_get(st->work_size);
        if (!wb.p) return work_oom(st);
    }
    char *work = wb.p;
    const char *what = "stream creation";
    if (threads > 0 && set_omp_threads) set_omp_threads(threads);
    dnnl_status_t ds = dnnl_stream_create(&stream, engine, dnnl_stream_default_flags);
    cxla_status s = NULL;
    for (int i = 0; i < TENSORS && ds == dnnl_success && !s; i++) {
        const tensor *t = &st->t[i];
        if (!t->used) continue;
        if (t->cached) {
            what = "memory creation";
            ds = dnnl_memory_create(&prim_mem[i], t->reorder ? &t->prim : &t->user, engine,
                                    t->cached);
            continue;
        }
        void *ptr = (char *)(t->io >= 0 ? (void *)in[t->io] : out[0]) + t->off;
        if (t->io < 0 && st->out_narrow != CXLA_TYPE_INVALID) ptr = work + st->out_off;
        if (t->narrow != CXLA_TYPE_INVALID) {
            void *wide = work + st->widen_off[i];
            widen(t, st->pool, ptr, wide);
            ptr = wide;
        }
        if (t->flip) {
            flipped[i] = malloc(t->bytes ? t->bytes : 1);
            if (!flipped[i]) {
                s = OOM();
                break;
            }
            flip_copy(t, ptr, flipped[i]);
            ptr = flipped[i];
        }
        what = "memory creation";
        ds = dnnl_memory_create(&user_mem[i], &t->user, engine, ptr);
        if (ds != dnnl_success || !t->reorder) continue;
        ds = dnnl_memory_create(&prim_mem[i], &t->prim, engine, work + st->work_off[i]);
        if (ds != dnnl_success || t->io < 0) continue;
        if (t->pack) {
            pack_job job = {t, ptr, (unsigned char *)work + st->work_off[i]};
            const void *pin[1] = {&job};
            cpu_kernel_info info = {.range = t->pkp, .cost = 2.0 * (double)t->prim_size};
            cpu_pool_run_kernel(st->pool, pack_rows, &info, NULL, pin, NULL);
            continue;
        }
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, user_mem[i]}, {DNNL_ARG_TO, prim_mem[i]}};
        what = "reorder";
        ds = dnnl_primitive_execute(t->reorder, stream, 2, args);
    }
    if (ds == dnnl_success && !s && st->scratch_size) {
        what = "memory creation";
        ds = dnnl_memory_create(&scratch_mem, &st->scratch_md, engine, work + st->scratch_off);
    }
    if (ds == dnnl_success && !s && st->zero_bytes) memset(out[0], 0, st->zero_bytes);
    if (ds == dnnl_success && !s) {
        dnnl_exec_arg_t args[TENSORS + 1];
        int n = 0;
        for (int i = 0; i < TENSORS; i++)
            if (st->t[i].used)
                args[n++] =
                    (dnnl_exec_arg_t){st->t[i].arg, prim_mem[i] ? prim_mem[i] : user_mem[i]};
        if (scratch_mem) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, scratch_mem};
        what = "execution";
        ds = dnnl_primitive_execute(st->prim, stream, n, args);
    }
    for (int i = 0; i < TENSORS && ds == dnnl_success && !s; i++) {
        const tensor *t = &st->t[i];
        if (!t->used || t->io >= 0 || !t->reorder) continue;
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, prim_mem[i]}, {DNNL_ARG_TO, user_mem[i]}};
        what = "reorder";
        ds = dnnl_primitive_execute(t->reorder, stream, 2, args);
    }
    if (ds == dnnl_success && !s) {
        what = "execution";
        ds = dnnl_stream_wait(stream);
    }
    if (ds != dnnl_success && !s) s = dnn_error(st->instr, what, ds);
    if (!s && st->out_narrow != CXLA_TYPE_INVALID)
        round_out(st->out_narrow, st->pool, work + st->out_off, out[0], st->out_count);
    if (!s && st->relu_count > 0) cpu_linalg_relu(st->relu_type, out[0], st->relu_count);
    for (int i = 0; i < TENSORS; i++) {
        if (user_mem[i]) dnnl_memory_destroy(user_mem[i]);
        if (prim_mem[i]) dnnl_memory_destroy(prim_mem[i]);
        free(flipped[i]);
    }
    if (scratch_mem) dnnl_memory_destroy(scratch_mem);
    work_put(wb);
    if (stream) dnnl_stream_destroy(stream);
    return s;
}

cxla_status cpu_dnn_run(void *state, void *const *out, const void *const *in) {
    return dnn_run(state, out, in);
}

dnnl_data_type_t cpu_dnn_dt_of(cxla_type t) {
    switch (t) {
    case CXLA_F32: return dnnl_f32;
    case CXLA_BF16: return dnnl_bf16;
    case CXLA_F16: return dnnl_f16;
    default: return dnnl_data_type_undef;
    }
}

bool cpu_dnn_is_ref(const_dnnl_primitive_desc_t pd) {
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, (void *)&impl) != dnnl_success)
        return false;
    return impl && strncmp(impl, "ref", 3) == 0;
}

/* The type the primitive stores: the product's |os|, or the type a convert at the end
 * of the epilogue |po| rounds to (oneDNN rounds its f32 accumulators to nearest even
 * when it stores bf16 or f16, as the interpreter's convert of the f32 result does). */
dnnl_data_type_t cpu_dnn_dst_type(const cpu_post_ops *po, const cxla_shape *os) {
    return cpu_dnn_dt_of(po && po->e.count > 0 ? po->e.out : os->type);
}

/* The epilogue op that oneDNN takes as the bias: the first, when it adds a vector. */
static bool has_bias(const cpu_post_ops *po) {
    return po && po->e.count > 0 && po->e.ops[0].kind == CXLA_EPI_ADD_VEC;
}

/* The attributes of every primitive: f32 stays f32 (XLA's CPU backend never computes an
 * f32 dot in bf16 or tf32, whatever ONEDNN_DEFAULT_FPMATH_MODE says), and the scratchpad
 * is the caller's, so that runs on several threads do not share one. With an epilogue
 * |po|, its post-ops (all but the bias and the relu) in order: a binary post-op per
 * vector, read as |nd| dims of 1 but dim |axis|, of |n| elements (its tensor is set up in
 * |st|), a linear one per scale. */
dnnl_status_t cpu_dnn_make_attr(const cpu_post_ops *po, dnn_state *st, int nd, int axis, int64_t n,
                                dnnl_primitive_attr_t *attr) {
    dnnl_status_t ds = dnnl_primitive_attr_create(attr);
    if (ds == dnnl_success)
        ds = dnnl_primitive_attr_set_fpmath_mode(*attr, dnnl_fpmath_mode_strict);
    if (ds == dnnl_success)
        ds = dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user);
    if (ds != dnnl_success || !po) return ds;
    /* oneDNN 2.6's jit post-ops give every linear post-op of a primitive the first one's
     * alpha (x * 0.1 * -3 came out as x * 0.1 * 0.1), so a primitive gets one scale at
     * most; an epilogue with two is left to the loops. */
    int linears = 0;
    for (int64_t i = 0; i < po->e.count; i++) {
        linears += po->e.ops[i].kind == CXLA_EPI_SCALE;
        /* oneDNN's tanh is within 1 ulp of the interpreter's; not when exact math is
         * asked for (the loops then compute the interpreter's). */
        if (po->e.ops[i].kind == CXLA_EPI_TANH && !cpu_emit_fast_math()) return dnnl_unimplemented;
    }
    if (linears > 1) return dnnl_unimplemented;
    dnnl_post_ops_t ops = NULL;
    ds = dnnl_post_ops_create(&ops);
    int k = 0; /* oneDNN's index of the next post-op */
    for (int64_t i = has_bias(po) ? 1 : 0; i < po->e.count && ds == dnnl_success; i++) {
        const cxla_epi_op *op = &po->e.ops[i];
        if (op->kind == CXLA_EPI_RELU || op->kind == CXLA_EPI_CONVERT) continue;
        if (op->kind == CXLA_EPI_SCALE) {
            ds = dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_linear, op->c, 0.0f);
            k++;
            continue;
        }
        if (op->kind == CXLA_EPI_TANH) {
            ds = dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_tanh, 0.0f, 0.0f);
            k++;
            continue;
        }
        tensor *t = &st->t[BIN0 + i];
        dnnl_dims_t d, strides;
        for (int j = 0; j < nd; j++) d[j] = 1, strides[j] = n;
        d[axis] = n, strides[axis] = 1;
        *t = (tensor){.used = true,
                      .arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(k) | DNNL_ARG_SRC_1,
                      .io = (int)po->vec_in[i]};
        ds = dnnl_memory_desc_init_by_strides(&t->user, nd, d, cpu_dnn_dt_of(op->vec->shape.type),
                                              strides);
        if (ds == dnnl_success)
            ds = dnnl_post_ops_append_binary(ops,
                                             op->kind == CXLA_EPI_ADD_VEC   ? dnnl_binary_add
                                             : op->kind == CXLA_EPI_SUB_VEC ? dnnl_binary_sub
                                                                            : dnnl_binary_mul,
                                             &t->user);
        k++;
    }
    if (ds == dnnl_success) ds = dnnl_primitive_attr_set_post_ops(*attr, ops);
    if (ops) dnnl_post_ops_destroy(ops);
    return ds;
}

/* The bias tensor of |po|: |nd| dims, 1 everywhere but the last, which has the |n|
 * elements of the vector (the output features). No bias: an unused tensor. */
bool cpu_dnn_bias_tensor(const cpu_post_ops *po, int64_t n, int nd, tensor *t) {
    *t = (tensor){0};
    if (!has_bias(po)) return true;
    dnnl_dims_t d, strides;
    for (int i = 0; i < nd; i++) d[i] = 1, strides[i] = n;
    d[nd - 1] = n, strides[nd - 1] = 1;
    *t = (tensor){.used = true, .arg = DNNL_ARG_BIAS, .io = (int)po->vec_in[0]};
    return dnnl_memory_desc_init_by_strides(&t->user, nd, d,
                                            cpu_dnn_dt_of(po->e.ops[0].vec->shape.type),
                                            strides) == dnnl_success;
}

/* Fills |st| from the primitive descriptor |pd| (owned: destroyed here): the tensors'
 * chosen layouts with their reorders, the scratchpad, the primitive. |queries| gives the
 * memory-descriptor query of each tensor. */
dnnl_status_t cpu_dnn_finish(dnn_state *st, dnnl_primitive_desc_t pd, const dnnl_query_t *queries,
                             const char **what) {
    dnnl_status_t ds = dnnl_success;
    for (int i = 0; i < TENSORS && ds == dnnl_success; i++) {
        tensor *t = &st->t[i];
        if (!t->used) continue;
        if (i >= BIN0) { /* post-op vectors are read as they are */
            t->prim = t->user;
            continue;
        }
        /* The bias is the weights' second descriptor. */
        t->prim = i == BIAS ? *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1)
                            : *dnnl_primitive_desc_query_md(pd, queries[i], 0);
        if (dnnl_memory_desc_equal(&t->user, &t->prim)) continue;
        t->prim_size = dnnl_memory_desc_get_size(&t->prim);
        dnnl_primitive_desc_t rpd = NULL;
        *what = "reorder creation";
        ds = t->io >= 0 ? dnnl_reorder_primitive_desc_create(&rpd, &t->user, engine, &t->prim,
                                                             engine, NULL)
                        : dnnl_reorder_primitive_desc_create(&rpd, &t->prim, engine, &t->user,
                                                             engine, NULL);
        if (ds == dnnl_success) ds = dnnl_primitive_create(&t->reorder, rpd);
        if (rpd) dnnl_primitive_desc_destroy(rpd);
        /* Weights of a matmul that are no constant: packed row by row on every run. */
        if (i == 1 && t->io >= 0 && !t->flip) t->pack = pack_recognize(t, &t->user, &t->prim);
    }
    if (ds == dnnl_success) {
        st->scratch_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
        st->scratch_size = dnnl_memory_desc_get_size(&st->scratch_md);
        *what = "primitive creation";
        ds = dnnl_primitive_create(&st->prim, pd);
    }
    dnnl_primitive_desc_destroy(pd);
    return ds;
}

/* A group of dims that the primitive sees as one (M, N or K of a matrix product): their
 * sizes multiplied, with one stride, when each stride is the next one's times its size
 * (dims of size 1 do not matter). False when they cannot be merged without a copy. */
typedef struct group {
    int64_t size, stride;
} group;

static bool merge(int64_t n, const int64_t *which, const cxla_shape *s, const int64_t *strides,
                  group *g) {
    g->size = 1;
    g->stride = 0; /* none yet */
    for (int64_t i = n - 1; i >= 0; i--) {
        int64_t d = which[i];
        if (s->dims[d] == 1) continue;
        if (g->stride == 0)
            g->stride = strides[d];
        else if (strides[d] != g->stride * g->size)
            return false;
        g->size *= s->dims[d];
    }
    return true;
}

/* The strides of a [rows, cols] matrix when one of them is 1: the one of size 1 takes the
 * stride that keeps the matrix plainly row- or column-major. */
static void fix_unit(group *rows, group *cols) {
    if (rows->stride == 0) rows->stride = cols->stride == 1 ? (cols->size ? cols->size : 1) : 1;
    if (cols->stride == 0) cols->stride = rows->stride == 1 ? (rows->size ? rows->size : 1) : 1;
    if (rows->size == 1 && cols->stride == 1) rows->stride = cols->size;
    if (cols->size == 1 && rows->stride == 1) cols->stride = rows->size;
}

/* The first of |n| free dims |which| of an operand (strides |str|; their dims in the
 * result: |out|, result strides |ostr|) from which on the rest merge into one group, on
 * both sides: the dims before it become batch dims of their own (see dot_prepare). */
static int64_t split_point(int64_t n, const int64_t *which, const cxla_shape *s, const int64_t *str,
                           const int64_t *out, const cxla_shape *os, const int64_t *ostr) {
    group g;
    for (int64_t k = 0; k < n; k++)
        if (merge(n - k, which + k, s, str, &g) && merge(n - k, out + k, os, ostr, &g)) return k;
    return n;
}

/* dot: the matmul primitive over [batch..., M, K] x [batch..., K, N] -> [batch..., M, N].
 * Free dims of an operand that do not merge into M (or N) by strides (a [2,256] block of
 * rows 294912 elements apart, as Gemma's einsums give) become extra batch dims of that
 * operand, of size 1 in the other (oneDNN broadcasts it), so they need no copy either. */
static cxla_status dot_prepare(const cxla_instr *instr, const cpu_post_ops *po, dnn_state *st,
                               bool *handled) {
    const cxla_shape *ls = &instr->operands[0]->shape, *rs = &instr->operands[1]->shape;
    const cxla_shape *os = &instr->shape;
    int64_t nlb, nrb, nlc, nrc;
    const int64_t *lb = cxla_instr_ints(instr, CXLA_ATTR_LHS_BATCH_DIMS, &nlb);
    const int64_t *rb = cxla_instr_ints(instr, CXLA_ATTR_RHS_BATCH_DIMS, &nrb);
    const int64_t *lc = cxla_instr_ints(instr, CXLA_ATTR_LHS_CONTRACTING_DIMS, &nlc);
    const int64_t *rc = cxla_instr_ints(instr, CXLA_ATTR_RHS_CONTRACTING_DIMS, &nrc);
    if (!lb) nlb = 0;
    if (!rb) nrb = 0;
    if (!lc) nlc = 0;
    if (!rc) nrc = 0;
    if (nlb != nrb || nlc != nrc || nlb + 2 > DNNL_MAX_NDIMS || nlc > CXLA_MAX_RANK) return NULL;
    /* The contracting pairs in the lhs's dim order ({3,2} x {1,0} is {2,3} x {0,1}: the
     * same sum), so that dims listed in reverse still merge into one K. */
    int64_t lcs[CXLA_MAX_RANK], rcs[CXLA_MAX_RANK];
    for (int64_t i = 0; i < nlc; i++) {
        int64_t j = i;
        for (; j > 0 && lcs[j - 1] > lc[i]; j--) lcs[j] = lcs[j - 1], rcs[j] = rcs[j - 1];
        lcs[j] = lc[i], rcs[j] = rc[i];
    }
    lc = lcs, rc = rcs;
    int64_t lstr[CXLA_MAX_RANK], rstr[CXLA_MAX_RANK], ostr[CXLA_MAX_RANK];
    cpu_dnn_row_major_strides(ls, lstr);
    cpu_dnn_row_major_strides(rs, rstr);
    cpu_dnn_row_major_strides(os, ostr);
    bool lused[CXLA_MAX_RANK] = {false}, rused[CXLA_MAX_RANK] = {false};
    for (int64_t i = 0; i < nlb; i++) lused[lb[i]] = rused[rb[i]] = true;
    for (int64_t i = 0; i < nlc; i++) lused[lc[i]] = rused[rc[i]] = true;
    int64_t lf[CXLA_MAX_RANK], rf[CXLA_MAX_RANK], nlf = 0, nrf = 0;
    for (int64_t d = 0; d < ls->rank; d++)
        if (!lused[d]) lf[nlf++] = d;
    for (int64_t d = 0; d < rs->rank; d++)
        if (!rused[d]) rf[nrf++] = d;
    int64_t om[CXLA_MAX_RANK], on[CXLA_MAX_RANK];
    for (int64_t i = 0; i < nlf; i++) om[i] = nlb + i;
    for (int64_t i = 0; i < nrf; i++) on[i] = nlb + nlf + i;
    int64_t sl = split_point(nlf, lf, ls, lstr, om, os, ostr);
    int64_t sr = split_point(nrf, rf, rs, rstr, on, os, ostr);
    int64_t extra = 0;
    for (int64_t i = 0; i < sl; i++) extra += ls->dims[lf[i]] > 1;
    for (int64_t i = 0; i < sr; i++) extra += rs->dims[rf[i]] > 1;
    /* A bias or vector post-op spans every rhs free dim: not when some became batch dims. */
    if (po && sr > 0) return NULL;
    group lm, lk, rk, rn, dm, dn;
    if (!merge(nlf - sl, lf + sl, ls, lstr, &lm) || !merge(nlc, lc, ls, lstr, &lk) ||
        !merge(nlc, rc, rs, rstr, &rk) || !merge(nrf - sr, rf + sr, rs, rstr, &rn) ||
        !merge(nlf - sl, om + sl, os, ostr, &dm) || !merge(nrf - sr, on + sr, os, ostr, &dn) ||
        nlb + extra + 2 > DNNL_MAX_NDIMS)
        return NULL;
    fix_unit(&lm, &lk);
    fix_unit(&rk, &rn);
    fix_unit(&dm, &dn);
    int nd = (int)(nlb + extra) + 2;
    dnnl_dims_t sd, wd, dd, ss, ws, dst_s;
    for (int64_t i = 0; i < nlb; i++) {
        sd[i] = wd[i] = dd[i] = ls->dims[lb[i]];
        ss[i] = lstr[lb[i]];
        ws[i] = rstr[rb[i]];
        dst_s[i] = ostr[i];
    }
    int64_t at = nlb;
    for (int64_t i = 0; i < sl; i++) { /* lhs-only batch dims: weights broadcast */
        int64_t d = lf[i];
        if (ls->dims[d] == 1) continue;
        sd[at] = dd[at] = ls->dims[d], wd[at] = 1;
        ss[at] = lstr[d], dst_s[at] = ostr[om[i]], ws[at] = 1;
        at++;
    }
    for (int64_t i = 0; i < sr; i++) { /* rhs-only batch dims: source broadcast */
        int64_t d = rf[i];
        if (rs->dims[d] == 1) continue;
        wd[at] = dd[at] = rs->dims[d], sd[at] = 1;
        ws[at] = rstr[d], dst_s[at] = ostr[on[i]], ss[at] = 1;
        at++;
    }
    sd[nd - 2] = lm.size, sd[nd - 1] = lk.size, ss[nd - 2] = lm.stride, ss[nd - 1] = lk.stride;
    wd[nd - 2] = rk.size, wd[nd - 1] = rn.size, ws[nd - 2] = rk.stride, ws[nd - 1] = rn.stride;
    dd[nd - 2] = dm.size, dd[nd - 1] = dn.size, dst_s[nd - 2] = dm.stride,
            dst_s[nd - 1] = dn.stride;
    st->t[0] = (tensor){.used = true, .arg = DNNL_ARG_SRC, .io = po ? (int)po->core_in[0] : 0};
    st->t[1] = (tensor){.used = true, .arg = DNNL_ARG_WEIGHTS, .io = po ? (int)po->core_in[1] : 1};
    st->t[2] = (tensor){.used = true, .arg = DNNL_ARG_DST, .io = -1};
    st->split_rows = nd == 2 && lm.size == dm.size ? lm.size : 0;
    st->macs = (double)lm.size * (double)lk.size * (double)rn.size;
    if (st->sub) { /* a part: its rows of the source and the destination */
        if (nd != 2 || st->sub->row1 > lm.size) return NULL;
        int64_t r0 = st->sub->row0;
        sd[0] = dd[0] = st->sub->row1 - r0;
        st->t[0].off = (size_t)(r0 * ss[0]) * cxla_type_storage(ls->type);
        st->t[2].off = (size_t)(r0 * dst_s[0]) * dnnl_data_type_size(cpu_dnn_dst_type(po, os));
    }
    if (!cpu_dnn_bias_tensor(po, dn.size, nd, &st->t[BIAS])) return NULL;
    /* f8 operands: widened on every run (see widen_table). A part (widen_blocks_make)
     * widens its own rows of a dense lhs; its weights come widened by the whole call. */
    cxla_type lw = wide_type(ls->type, rs->type), rw = wide_type(rs->type, ls->type);
    if (lw != ls->type &&
        (!widen_setup(&st->t[0], ls->type, lw) || (st->sub && (ss[1] != 1 || ss[0] != lk.size))))
        return NULL;
    if (rw != rs->type && !st->sub && !widen_setup(&st->t[1], rs->type, rw)) return NULL;
    st->t[0].count = st->sub ? sd[0] * lk.size : cpu_linalg_elements(ls);
    st->t[1].count = cpu_linalg_elements(rs);
    /* The result: stored by the primitive when it is f32 or the operands' type, else f32
     * rounded afterwards (out_narrow). */
    dnnl_data_type_t dt = cpu_dnn_dst_type(po, os);
    if (!po && os->type != CXLA_F32 && !(os->type == lw && os->type == rw)) {
        if (st->sub || !cxla_type_is_small_float(os->type) ||
            !cxla_floats_can_convert(CXLA_F32, os->type))
            return NULL;
        st->out_narrow = os->type;
        st->out_count = cpu_linalg_elements(os);
        dt = dnnl_f32;
    }
    dnnl_status_t ds =
        dnnl_memory_desc_init_by_strides(&st->t[0].user, nd, sd, cpu_dnn_dt_of(lw), ss);
    if (ds == dnnl_success)
        ds = dnnl_memory_desc_init_by_strides(&st->t[1].user, nd, wd, cpu_dnn_dt_of(rw), ws);
    if (ds == dnnl_success)
        ds = dnnl_memory_desc_init_by_strides(&st->t[2].user, nd, dd, dt, dst_s);
    if (ds != dnnl_success) return NULL; /* a form oneDNN does not take: the loops */
    /* The weights in the layout the primitive chooses (reordered per run) where that pays:
     * want_packed. */
    dnnl_memory_desc_t wmd = st->t[1].user;
    if (st->sub) /* a part: the weights as the whole call prepared them */
        wmd = st->t[1].user = st->sub->wmd;
    else if (want_packed(nd, lm.size, rk.size, rn.size, rw, ws[nd - 1]) &&
             dnnl_memory_desc_init_by_tag(&wmd, nd, wd, cpu_dnn_dt_of(rw), dnnl_format_tag_any) !=
                 dnnl_success)
        wmd = st->t[1].user;
    dnnl_matmul_desc_t desc;
    ds = dnnl_matmul_desc_init(&desc, &st->t[0].user, &wmd,
                               st->t[BIAS].used ? &st->t[BIAS].user : NULL, &st->t[2].user);
    if (ds != dnnl_success) return NULL;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    const char *what = "attribute creation";
    ds = cpu_dnn_make_attr(po, st, nd, nd - 1, dn.size, &attr);
    if (ds == dnnl_unimplemented) { /* post-ops this oneDNN gets wrong: the loops */
        if (attr) dnnl_primitive_attr_destroy(attr);
        return NULL;
    }
    if (ds == dnnl_success) {
        ds = dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL);
        if (ds == dnnl_unimplemented) {
            dnnl_primitive_attr_destroy(attr);
            return NULL;
        }
        what = "matmul creation";
    }
    if (attr) dnnl_primitive_attr_destroy(attr);
    static const dnnl_query_t queries[TENSORS] = {dnnl_query_src_md, dnnl_query_weights_md,
                                                  dnnl_query_dst_md};
    if (ds == dnnl_success && st->sub &&
        cpu_dnn_is_ref(pd)) { /* a part must be as fast as the whole */
        dnnl_primitive_desc_destroy(pd);
        return NULL;
    }
    if (ds == dnnl_success) ds = cpu_dnn_finish(st, pd, queries, &what);
    if (ds != dnnl_success) return dnn_error(instr, what, ds);
    *handled = true;
    return NULL;
}

/* Operands of |st->instr| that are constants of the module and that the primitive reads
 * through a reorder or a flip: done once now, into a buffer of their own (tensor.cached),
 * instead of on every run. (Parameters are reordered on every run: see
 * docs/performance.md, "oneDNN".) */
static cxla_status cache_constants(dnn_state *st) {
    for (int i = 0; i < BIAS; i++) {
        tensor *t = &st->t[i];
        bool narrow = t->narrow != CXLA_TYPE_INVALID;
        if (!t->used || t->io < 0 || (!t->reorder && !t->flip && !narrow)) continue;
        const cxla_instr *c = st->instr->operands[t->io];
        if (c->opcode != CXLA_OP_CONSTANT || !c->literal || c->literal_elided ||
            !cxla_layout_is_default(cxla_literal_shape(c->literal)))
            continue;
        const void *src = (const char *)cxla_literal_data(c->literal) + t->off;
        void *flipped = NULL;
        if (narrow) { /* widened once (dot operands only: no flip) */
            flipped = aligned((size_t)t->count * (size_t)t->wsize);
            if (!flipped) return OOM();
            widen(t, NULL, src, flipped);
            src = flipped;
        } else if (t->flip) {
            flipped = aligned(t->bytes);
            if (!flipped) return OOM();
            flip_copy(t, src, flipped);
            src = flipped;
        }
        if (!t->reorder) {
            t->cached = flipped;
            continue;
        }
        void *buf = aligned(t->prim_size);
        dnnl_stream_t stream = NULL;
        dnnl_memory_t from = NULL, to = NULL;
        dnnl_status_t ds = buf ? dnnl_stream_create(&stream, engine, dnnl_stream_default_flags)
                               : dnnl_out_of_memory;
        if (ds == dnnl_success) ds = dnnl_memory_create(&from, &t->user, engine, (void *)src);
        if (ds == dnnl_success) ds = dnnl_memory_create(&to, &t->prim, engine, buf);
        if (ds == dnnl_success) {
            dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
            ds = dnnl_primitive_execute(t->reorder, stream, 2, args);
        }
        if (ds == dnnl_success) ds = dnnl_stream_wait(stream);
        if (from) dnnl_memory_destroy(from);
        if (to) dnnl_memory_destroy(to);
        if (stream) dnnl_stream_destroy(stream);
        free(flipped);
        if (ds != dnnl_success) {
            free(buf);
            return dnn_error(st->instr, "reorder of a constant", ds);
        }
        t->cached = buf;
    }
    return NULL;
}

/* The offsets of the work block (dnn_state.work_size): a buffer per tensor reordered on
 * every run, then the scratchpad, each aligned. */
static void plan_work(dnn_state *st) {
    size_t at = 0;
    for (int i = 0; i < TENSORS; i++) {
        const tensor *t = &st->t[i];
        if (!t->used || t->cached) continue;
        if (t->narrow != CXLA_TYPE_INVALID) {
            st->widen_off[i] = at;
            at += ((size_t)t->count * (size_t)t->wsize + ALIGN - 1) / ALIGN * ALIGN;
        }
        if (!t->reorder) continue;
        st->work_off[i] = at;
        at += (t->prim_size + ALIGN - 1) / ALIGN * ALIGN;
    }
    if (st->out_narrow != CXLA_TYPE_INVALID) {
        st->out_off = at;
        at += ((size_t)st->out_count * 4 + ALIGN - 1) / ALIGN * ALIGN;
    }
    st->scratch_off = at;
    at += (st->scratch_size + ALIGN - 1) / ALIGN * ALIGN;
    st->work_size = at;
}

/* The state of |instr|'s primitive made for |threads| threads (the count OpenMP reports
 * while it is created), or *out NULL when oneDNN does not take it. */
static cxla_status dnn_make(const cxla_instr *instr, int threads, cpu_pool *pool,
                            const sub_spec *sub, dnn_state **out) {
    *out = NULL;
    cpu_post_ops fused;
    const cpu_post_ops *po = NULL;
    const cxla_instr *core = instr;
    if (instr->opcode == CXLA_OP_FUSION) {
        if (!cpu_linalg_match_fusion(instr, &fused)) return NULL;
        po = &fused;
        core = fused.e.core;
    }
    dnn_state *st = calloc(1, sizeof(*st));
    if (!st) return OOM();
    if (pthread_mutex_init(&st->mu, NULL) != 0) {
        free(st);
        return OOM();
    }
    work_users(+1); /* dnn_free's -1 */
    st->instr = instr;
    if (po && po->relu) st->relu_count = cpu_linalg_elements(&instr->shape);
    st->relu_type = instr->shape.type;
    st->threads = threads;
    st->pool = pool;
    st->sub = sub;
    int before = get_omp_threads ? get_omp_threads() : 0;
    if (threads > 0 && set_omp_threads) set_omp_threads(threads);
    bool handled = false;
    cxla_status s = core->opcode == CXLA_OP_DOT ? dot_prepare(core, po, st, &handled)
                                                : cpu_dnn_conv_prepare(core, po, st, &handled);
    if (!s && handled) s = cache_constants(st);
    if (!s && handled) plan_work(st);
    if (before > 0 && set_omp_threads) set_omp_threads(before);
    st->sub = NULL;
    if (s || !handled) {
        dnn_free(st);
        return s;
    }
    *out = st;
    return NULL;
}

/* ---- a call split over the pool's threads ----------------------------------------------
 *
 * oneDNN (Debian's, on OpenMP) runs a primitive on the calling thread's OpenMP team, whose
 * workers the cxla tool asks to wait passively (docs/performance.md, "OpenMP's waiting"):
 * each primitive then starts with a futex wake of each worker, and a worker that is late
 * (another process on its core) holds up the whole product, since OpenMP gives each thread a
 * fixed share. A split call instead runs |parts| primitives made for one thread, each over
 * its block of rows (M of a matmul, the images of a convolution's batch), as the chunks of a
 * kernel on cxla's own pool (threadpool.h): the caller starts at once, a worker takes what
 * is left when it wakes, and the caller runs the blocks no worker took. The weights are
 * prepared once per run by the whole call (packed, reordered or a cached constant) and read
 * by every part in that layout. A part's per-element sums are those of a one-thread
 * primitive over fewer rows (brgemm's order along K does not depend on M or on the thread
 * count; tests/cpu/test_onednn_split.c checks it), so the result does not depend on the
 * thread count the call runs on. CXLA_ONEDNN_SPLIT in the environment when the call is
 * prepared: "off" (or 0) never splits, a number N asks N blocks per thread. */

/* Blocks per thread (0: no split), from CXLA_ONEDNN_SPLIT. */
static int split_per_thread(void) {
    const char *env = getenv("CXLA_ONEDNN_SPLIT");
    if (!env || !*env || strcmp(env, "off") == 0) return 0;
    char *end = NULL;
    long v = strtol(env, &end, 10);
    return end && *end == '\0' && v >= 0 && v <= MAX_SPLIT ? (int)v : 0;
}

/* The name of the implementation |st|'s primitive runs ("brg:avx512_core", ...; "" when
 * oneDNN does not say). */
static const char *impl_of(const dnn_state *st) {
    const_dnnl_primitive_desc_t pd = NULL;
    const char *impl = NULL;
    if (dnnl_primitive_get_primitive_desc(st->prim, &pd) != dnnl_success || !pd ||
        dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, (void *)&impl) != dnnl_success)
        return "";
    return impl ? impl : "";
}

/* Smallest part: rows (a matmul's, so that brgemm's row blocks stay full) and multiply-adds
 * (about 100 us on one core: a part's stream and memory objects cost a few us). */
enum { SPLIT_MIN_ROWS = 32 };
#define SPLIT_MIN_MACS (16.0 * 1024 * 1024)

static cxla_status split_make(dnn_state *st, int threads) {
    int per = split_per_thread();
    const tensor *w = &st->t[1];
    /* The parts read the weights as the whole call prepares them; a source or destination
     * in another layout than the caller's cannot be cut into rows. */
    if (per == 0 || threads < 2 || st->split_rows < 2 || !w->used || st->t[0].reorder ||
        st->t[2].reorder || st->out_narrow != CXLA_TYPE_INVALID ||
        st->t[0].narrow != CXLA_TYPE_INVALID || st->t[1].narrow != CXLA_TYPE_INVALID)
        return NULL;
    int64_t min_rows = st->split_conv ? 1 : SPLIT_MIN_ROWS;
    int64_t parts = (int64_t)threads * per;
    if (parts > st->split_rows / min_rows) parts = st->split_rows / min_rows;
    if (parts > (int64_t)(st->macs / SPLIT_MIN_MACS)) parts = (int64_t)(st->macs / SPLIT_MIN_MACS);
    if (parts > MAX_SPLIT) parts = MAX_SPLIT;
    if (parts < 2) return NULL;
    sub_spec spec = {.wmd = w->reorder ? w->prim : w->user};
    dnn_state *made[MAX_SPLIT] = {0};
    cxla_status s = NULL;
    bool ok = true;
    for (int64_t p = 0; p < parts && ok && !s; p++) {
        spec.row0 = st->split_rows * p / parts;
        spec.row1 = st->split_rows * (p + 1) / parts;
        s = dnn_make(st->instr, 1, NULL, &spec, &made[p]);
        /* The parts take the weights as prepared and run the whole call's implementation
         * (another one, such as gemm:jit for a block that is not dense, sums in another
         * order). */
        ok = made[p] && !made[p]->t[0].reorder && !made[p]->t[1].reorder &&
             !made[p]->t[2].reorder && strcmp(impl_of(made[p]), impl_of(st)) == 0;
        if (ok) made[p]->relu_count = 0; /* the whole call's, after the parts */
    }
    if (s || !ok) {
        for (int64_t p = 0; p < parts; p++) dnn_free(made[p]);
        return s;
    }
    memcpy(st->part, made, sizeof(made));
    st->parts = (int)parts;
    return NULL;
}

typedef struct split_job {
    const dnn_state *st;
    void *const *out;
    const void *const *in;
    cxla_status status[MAX_SPLIT];
} split_job;

/* Parts [begin, end) of a split call (a cpu_kernel_fn over in[0] = the split_job). */
static void split_parts(void *const *out, const void *const *in, int64_t begin, int64_t end) {
    (void)out;
    split_job *j = (split_job *)in[0];
    for (int64_t p = begin; p < end; p++)
        j->status[p] = dnn_run(j->st->part[p], j->out, (const void *const *)j->in);
}

static cxla_status split_run(const dnn_state *st, void *const *out, const void *const *in) {
    const tensor *w = &st->t[1];
    work_block wb = {0};
    if (st->work_size) {
        wb = work_get(st->work_size);
        if (!wb.p) return work_oom(st);
    }
    char *work = wb.p;
    int64_t n = st->instr->operand_count;
    const void **in2 = malloc((size_t)(n ? n : 1) * sizeof(*in2));
    if (!in2) {
        work_put(wb);
        return OOM();
    }
    memcpy(in2, in, (size_t)n * sizeof(*in2));
    cxla_status s = NULL;
    void *flipped = NULL;
    /* f8 weights widened once, for every part (widen_blocks_make). */
    if (!w->cached && w->narrow != CXLA_TYPE_INVALID) {
        widen(w, st->pool, in[w->io], work + st->widen_off[1]);
        in2[w->io] = work + st->widen_off[1];
    }
    /* The weights, once, in the parts' layout. */
    if (w->cached) {
        in2[w->io] = w->cached;
    } else if (w->reorder && w->pack) {
        pack_job job = {w, in2[w->io], (unsigned char *)work + st->work_off[1]};
        const void *pin[1] = {&job};
        cpu_kernel_info info = {.range = w->pkp, .cost = 2.0 * (double)w->prim_size};
        cpu_pool_run_kernel(st->pool, pack_rows, &info, NULL, pin, NULL);
        in2[w->io] = job.dst;
    } else if (w->flip) { /* a kernel read reversed: flipped, then reordered below */
        flipped = malloc(w->bytes ? w->bytes : 1);
        if (!flipped) {
            free(in2);
            work_put(wb);
            return OOM();
        }
        flip_copy(w, in2[w->io], flipped);
        in2[w->io] = flipped;
    }
    if (!w->cached && w->reorder && !w->pack) {
        void *dst = work + st->work_off[1];
        dnnl_stream_t stream = NULL;
        dnnl_memory_t from = NULL, to = NULL;
        if (set_omp_threads) set_omp_threads(st->threads);
        dnnl_status_t ds = dnnl_stream_create(&stream, engine, dnnl_stream_default_flags);
        if (ds == dnnl_success)
            ds = dnnl_memory_create(&from, &w->user, engine, (void *)in2[w->io]);
        if (ds == dnnl_success) ds = dnnl_memory_create(&to, &w->prim, engine, dst);
        if (ds == dnnl_success) {
            dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
            ds = dnnl_primitive_execute(w->reorder, stream, 2, args);
        }
        if (ds == dnnl_success) ds = dnnl_stream_wait(stream);
        if (from) dnnl_memory_destroy(from);
        if (to) dnnl_memory_destroy(to);
        if (stream) dnnl_stream_destroy(stream);
        if (ds != dnnl_success) s = dnn_error(st->instr, "reorder", ds);
        in2[w->io] = dst;
    }
    for (int p = 0; p < st->parts && st->serial && !s; p++)
        s = dnn_run(st->part[p], out, (const void *const *)in2);
    if (!s && !st->serial) {
        split_job job = {.st = st, .out = out, .in = (const void *const *)in2};
        const void *jin[1] = {&job};
        /* Each part is far above the pool's minimum: one per chunk. */
        cpu_kernel_info info = {.range = st->parts, .cost = st->macs * 8.0};
        cpu_pool_run_kernel(st->pool, split_parts, &info, NULL, jin, NULL);
        for (int p = 0; p < st->parts && !s; p++) s = job.status[p];
    }
    if (!s && st->relu_count > 0) cpu_linalg_relu(st->relu_type, out[0], st->relu_count);
    free(in2);
    free(flipped);
    work_put(wb);
    return s;
}

/* Products of at most this many multiply-adds run on one thread (a one-thread primitive):
 * OpenMP's worker waits passively (docs/performance.md, "OpenMP's waiting"), and its wake-up
 * at the start of each primitive took 25-35 us on this project's quiet 2-core machine, while a
 * product of 4 Mi multiply-adds takes 40-75 us on one thread (bf16, f32); from 16 Mi the
 * second thread wins (bench/small_products_bench.py). CXLA_ONEDNN_SMALL=N in the environment
 * when the call is prepared sets the threshold (0: every product on all threads). */
static double small_macs(void) {
    const char *env = getenv("CXLA_ONEDNN_SMALL");
    if (!env || !*env) return 4.0 * 1024 * 1024;
    char *end = NULL;
    double v = strtod(env, &end);
    return end != env && v >= 0 ? v : 4.0 * 1024 * 1024;
}

/* ---- an f8 operand widened a block of rows at a time ------------------------------------
 *
 * An f8 lhs widened whole to bf16 took twice its bytes of work memory beside it (512 MiB for
 * the 32768 x 8192 activation of issue 19's GEMM loop: its peak 1.45x its live set). When its
 * widened rows pass WIDEN_BLOCK_BYTES, the product runs as parts over blocks of rows, one after
 * another, each a primitive on every thread that widens only its rows into its work block
 * (the same block, given back and taken again by the next part); the weights are widened
 * (and packed or reordered) once by the whole call, as a split call's. Each part sums as the
 * whole primitive does (the same implementation over fewer rows; see the split above). */
#define WIDEN_BLOCK_BYTES ((size_t)8 << 20)

static cxla_status widen_blocks_make(dnn_state *st, int threads) {
    const tensor *a = &st->t[0], *w = &st->t[1];
    if (st->parts > 0 || a->narrow == CXLA_TYPE_INVALID || a->cached || st->split_conv ||
        st->split_rows < 2 * SPLIT_MIN_ROWS || a->reorder || st->t[2].reorder || !w->used ||
        st->out_narrow != CXLA_TYPE_INVALID || w->flip)
        return NULL;
    size_t bytes = (size_t)a->count * (size_t)a->wsize;
    if (bytes <= WIDEN_BLOCK_BYTES) return NULL;
    int64_t parts = (int64_t)((bytes + WIDEN_BLOCK_BYTES - 1) / WIDEN_BLOCK_BYTES);
    if (parts > st->split_rows / SPLIT_MIN_ROWS) parts = st->split_rows / SPLIT_MIN_ROWS;
    if (parts > MAX_SPLIT) parts = MAX_SPLIT;
    sub_spec spec = {.wmd = w->reorder ? w->prim : w->user};
    dnn_state *made[MAX_SPLIT] = {0};
    cxla_status s = NULL;
    bool ok = true;
    for (int64_t p = 0; p < parts && ok && !s; p++) {
        spec.row0 = st->split_rows * p / parts;
        spec.row1 = st->split_rows * (p + 1) / parts;
        /* No pool: a part runs on the threads it was made for (a variant for fewer would
         * be made without its rows). */
        s = dnn_make(st->instr, threads, NULL, &spec, &made[p]);
        ok = made[p] && !made[p]->t[0].reorder && !made[p]->t[1].reorder &&
             !made[p]->t[2].reorder && strcmp(impl_of(made[p]), impl_of(st)) == 0;
        if (ok) made[p]->relu_count = 0; /* the whole call's, after the parts */
    }
    if (s || !ok) {
        for (int64_t p = 0; p < parts; p++) dnn_free(made[p]);
        return s;
    }
    memcpy(st->part, made, sizeof(made));
    st->parts = (int)parts;
    st->serial = true;
    st->t[0].count = 0; /* the whole call widens no rows: its work block loses them */
    plan_work(st);
    return NULL;
}

static cxla_status onednn_prepare(const cxla_instr *instr, int threads, cpu_pool *pool,
                                  cpu_call *out, bool *handled) {
    *handled = false;
    cpu_post_ops fused;
    const cpu_post_ops *po = NULL;
    const cxla_instr *core = instr;
    if (instr->opcode == CXLA_OP_FUSION) {
        if (!cpu_linalg_match_fusion(instr, &fused)) return NULL;
        po = &fused;
        core = fused.e.core;
    }
    if (core->operand_count != 2) return NULL;
    const cxla_shape *ls = &core->operands[0]->shape, *rs = &core->operands[1]->shape;
    if (cpu_dnn_dt_of(wide_type(ls->type, rs->type)) == dnnl_data_type_undef ||
        cpu_dnn_dt_of(wide_type(rs->type, ls->type)) == dnnl_data_type_undef)
        return NULL;
    /* Other small-float results: f32 rounded afterwards (dots without post-ops only). */
    if (cpu_dnn_dt_of(core->shape.type) == dnnl_data_type_undef &&
        (core->opcode != CXLA_OP_DOT || po || !cxla_type_is_small_float(core->shape.type)))
        return NULL;
    /* f8 operands of dots only (convolutions: the loops). */
    if (core->opcode != CXLA_OP_DOT && (cpu_dnn_dt_of(ls->type) == dnnl_data_type_undef ||
                                        cpu_dnn_dt_of(rs->type) == dnnl_data_type_undef))
        return NULL;
    /* oneDNN refuses arrays with no elements; the loops give their zeros. */
    if (cpu_linalg_elements(ls) == 0 || cpu_linalg_elements(rs) == 0 ||
        cpu_linalg_elements(&core->shape) == 0)
        return NULL;
    pthread_once(&engine_once, engine_init);
    if (engine_status != dnnl_success) return NULL;
    dnn_state *st = NULL;
    CXLA_RETURN_IF_ERROR(dnn_make(instr, threads, pool, NULL, &st));
    if (!st) return NULL;
    /* A small product runs on one thread: waking OpenMP's worker costs more than it
     * saves (small_macs). */
    bool small = false;
    if (threads > 1 && st->macs <= small_macs()) {
        dnn_state *one = NULL;
        cxla_status s1 = dnn_make(instr, 1, pool, NULL, &one);
        if (s1 || one) {
            dnn_free(st);
            if (s1) return s1;
            st = one;
            threads = 1;
            small = true;
        }
    }
    *handled = true;
    cxla_status s = split_make(st, threads);
    if (!s) s = widen_blocks_make(st, threads);
    if (s) {
        dnn_free(st);
        return s;
    }
    int how = 0; /* the weights: as they lie, a constant reordered once, packed per run */
    for (int i = 0; i < TENSORS; i++)
        if (st->t[i].cached)
            how = 1;
        else if (st->t[i].pack && st->t[i].reorder && how == 0)
            how = 2;
    static const char *const whats[2][2][3] = {
        {{"onednn matmul", "onednn matmul, constant reordered once",
          "onednn matmul, weights packed per run"},
         {"onednn matmul with post-ops", "onednn matmul with post-ops, constant reordered once",
          "onednn matmul with post-ops, weights packed per run"}},
        {{"onednn convolution", "onednn convolution, constant reordered once",
          "onednn convolution, weights packed per run"},
         {"onednn convolution with post-ops",
          "onednn convolution with post-ops, constant reordered once",
          "onednn convolution with post-ops, weights packed per run"}}};
    const char *what = whats[core->opcode != CXLA_OP_DOT][po != NULL][how];
    if (st->bwd_weights) {
        snprintf(st->what, sizeof(st->what), "onednn convolution, backward weights%s",
                 how == 1 ? ", constant reordered once" : "");
        what = st->what;
    } else if (st->parts > 0 && st->serial) {
        snprintf(st->what, sizeof(st->what), "%s, f8 widened in %d blocks of rows", what,
                 st->parts);
        what = st->what;
    } else if (st->parts > 0) {
        snprintf(st->what, sizeof(st->what), "%s, %d parts on the pool", what, st->parts);
        what = st->what;
    } else if (st->out_narrow != CXLA_TYPE_INVALID) {
        cxla_type from = st->t[0].narrow != CXLA_TYPE_INVALID ? st->t[0].narrow : st->t[1].narrow;
        char widened[32] = "";
        if (from != CXLA_TYPE_INVALID)
            snprintf(widened, sizeof(widened), "%s widened, ",
                     cxla_type_storage(from) == 1 ? "f8" : cxla_type_name(from));
        snprintf(st->what, sizeof(st->what), "%s, %sf32 rounded to %s", what, widened,
                 cxla_type_name(st->out_narrow));
        what = st->what;
    } else if (st->t[0].narrow != CXLA_TYPE_INVALID || st->t[1].narrow != CXLA_TYPE_INVALID) {
        int w = st->t[0].narrow != CXLA_TYPE_INVALID ? st->t[0].wsize : st->t[1].wsize;
        cxla_type from = st->t[0].narrow != CXLA_TYPE_INVALID ? st->t[0].narrow : st->t[1].narrow;
        snprintf(st->what, sizeof(st->what), "%s, %s widened to %s", what,
                 cxla_type_storage(from) == 1 ? "f8" : cxla_type_name(from),
                 w == 2 ? "bf16" : "f32");
        what = st->what;
    }
    if (small) {
        static const char tail[] = ", one thread (small)";
        size_t len = strlen(what);
        if (len > sizeof(st->what) - sizeof(tail)) len = sizeof(st->what) - sizeof(tail);
        memmove(st->what, what, len); /* |what| may be st->what */
        memcpy(st->what + len, tail, sizeof(tail));
        what = st->what;
    }
    *out = (cpu_call){.fn = st->bwd_weights ? cpu_dnn_bwd_weights_run : dnn_run,
                      .state = st,
                      .free_state = dnn_free,
                      .what = what};
    return NULL;
}

#else /* no oneDNN */

bool cpu_onednn_available(void) {
    return false;
}

static cxla_status onednn_prepare(const cxla_instr *instr, int threads, cpu_pool *pool,
                                  cpu_call *out, bool *handled) {
    (void)instr;
    (void)threads;
    (void)pool;
    (void)out;
    *handled = false;
    return NULL;
}

#endif

/* The types oneDNN's primitives take (where the CPU's oneDNN implements them). */
static bool onednn_type(cxla_type t) {
    return t == CXLA_F32 || t == CXLA_BF16 || t == CXLA_F16;
}

/* An operand type of a dot that oneDNN takes, an f8 type widened (above) included. */
static bool onednn_dot_operand(cxla_type t, cxla_type other) {
    return onednn_type(t) || ((t == CXLA_BF16 || t == CXLA_F16) && other == CXLA_F32) ||
           (cxla_type_is_float(t) && cxla_type_bits(t) == 8 && cxla_type_storage(t) == 1 &&
            t != CXLA_F8E8M0FNU &&
            (other == CXLA_F32 || other == CXLA_BF16 ||
             (cxla_type_is_float(other) && cxla_type_bits(other) == 8)));
}

bool cpu_linalg_wants(const cxla_instr *instr) {
    cpu_post_ops po;
    if (instr->opcode == CXLA_OP_DOT) {
        /* Narrow products: the emitter's kernels (epilogue.h). Else oneDNN first; else the
         * emitter's blocked kernel where it applies; else the loops of the library call. */
        if (cxla_dot_narrow(instr) != CXLA_DOT_WIDE && cpu_can_emit(instr)) return false;
        cxla_type lt = instr->operands[0]->shape.type, rt = instr->operands[1]->shape.type;
        cxla_type ot = instr->shape.type;
        bool onednn = cpu_onednn_available() &&
                      (onednn_type(ot) ||
                       (cxla_type_is_small_float(ot) && cxla_floats_can_convert(CXLA_F32, ot))) &&
                      onednn_dot_operand(lt, rt) && onednn_dot_operand(rt, lt);
        return onednn || !cpu_can_emit(instr);
    }
    if (instr->opcode == CXLA_OP_CONVOLUTION) {
        /* oneDNN first; else the emitter's exact loop nest (emit_conv.c) where it applies;
         * else the loops of the library call. */
        bool onednn = cpu_onednn_available() && onednn_type(instr->shape.type) &&
                      onednn_type(instr->operands[0]->shape.type) &&
                      onednn_type(instr->operands[1]->shape.type);
        return onednn || !cpu_can_emit(instr);
    }
    return cpu_linalg_match_fusion(instr, &po);
}

/* The call of the product alone: oneDNN, else the loops. */
cxla_status cpu_linalg_product_prepare(const cxla_instr *instr, int threads, cpu_pool *pool,
                                       cpu_call *out) {
    bool handled = false;
    CXLA_RETURN_IF_ERROR(onednn_prepare(instr, threads, pool, out, &handled));
    return handled ? NULL : cpu_linalg_loops_prepare(instr, out);
}

cxla_status cpu_linalg_prepare(const cxla_instr *instr, int threads, cpu_pool *pool,
                               cpu_call *out) {
    memset(out, 0, sizeof(*out));
    if (instr->opcode != CXLA_OP_FUSION)
        return cpu_linalg_product_prepare(instr, threads, pool, out);
    bool handled = false;
    CXLA_RETURN_IF_ERROR(onednn_prepare(instr, threads, pool, out, &handled));
    return handled ? NULL : cpu_linalg_epilogue_prepare(instr, threads, pool, out);
}
