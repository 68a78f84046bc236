/* Dot and convolution on the cpu backend: oneDNN primitives where they express the
 * instruction, the interpreter's blocked matrix product otherwise (onednn.h says which).
 *
 * oneDNN's primitives are created here once per instruction and run many times. A call
 * keeps, per tensor, the memory descriptor of the caller's buffer (the operand's shape
 * in row-major order, its dims permuted and merged by strides) and the one the primitive
 * chose; when they differ (a convolution that runs faster on blocked weights), a reorder
 * primitive converts on every run. Each run makes its own stream, memory objects and
 * scratchpad (the user-managed scratchpad mode), so one call serves several threads. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/emit.h"
#include "cpu/onednn.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

void cpu_call_release(cpu_call *call) {
    if (call->free_state) call->free_state(call->state);
    memset(call, 0, sizeof(*call));
}

static int64_t elements_of(const cxla_shape *s) {
    int64_t n = 1;
    for (int64_t d = 0; d < s->rank; d++) n *= s->dims[d];
    return n;
}

/* ---- the loops: the interpreter's handler over the buffers ----------------------------- */

/* The interpreter's dot and convolution pack their operands and multiply them with a
 * cache-blocked matrix product (KC x NC panels, 4 x NR register blocks); they read
 * nothing but the instruction and the operands, so they run here on literal views of the
 * buffers. */
typedef struct loops_state {
    const cxla_instr *instr;
    cxla_shape shapes[2]; /* the operands' shapes without their layouts: data is row-major */
} loops_state;

static cxla_status loops_run(void *state, void *const *out, const void *const *in) {
    const loops_state *st = state;
    cxla_literal views[2];
    const cxla_literal *ops[2];
    for (int k = 0; k < 2; k++) {
        memset(&views[k], 0, sizeof(views[k]));
        views[k].shape = (cxla_shape *)&st->shapes[k];
        views[k].data = (void *)in[k];
        views[k].count = elements_of(&st->shapes[k]);
        CXLA_RETURN_IF_ERROR(cxla_shape_byte_size(&st->shapes[k], &views[k].size));
        ops[k] = &views[k];
    }
    cxla_literal *result = NULL;
    CXLA_RETURN_IF_ERROR(interp_handler(st->instr->opcode)(NULL, st->instr, ops, &result));
    if (result->size) memcpy(out[0], result->data, result->size);
    cxla_literal_free(result);
    return NULL;
}

static cxla_status loops_prepare(const cxla_instr *instr, cpu_call *out) {
    loops_state *st = calloc(1, sizeof(*st));
    if (!st) return OOM();
    st->instr = instr;
    for (int k = 0; k < 2; k++) {
        st->shapes[k] = instr->operands[k]->shape;
        st->shapes[k].layout = NULL;
        st->shapes[k].dynamic = NULL;
    }
    *out = (cpu_call){.fn = loops_run, .state = st, .free_state = free, .what = "loops"};
    return NULL;
}

/* ---- fusions of a dot or convolution with elementwise work after it --------------------- */

/* A fusion whose fused computation is a dot or convolution of two of its parameters
 * followed by a chain of elementwise operations that oneDNN applies to the accumulator
 * before it stores it (post-ops): first, optionally, the add of a bias vector broadcast
 * along the output features (N of a dot, the feature dim of a convolution), then any of
 * maximum with 0 (relu) and multiply by a constant (scale), all in f32.
 *
 * oneDNN's relu (and clip) turn NaN into 0 where maximum keeps it, so relu is not a
 * post-op: a relu followed only by positive scales commutes with them, and runs last, as
 * a loop over the result that keeps NaN (`y < 0 ? 0 : y`). */
enum { MAX_POST_OPS = 8 };

typedef struct post_ops {
    const cxla_instr *core;       /* the dot or convolution */
    int64_t core_in[2];           /* the fusion operands of its lhs and rhs */
    const cxla_instr *bias_bcast; /* the bias's broadcast, or NULL */
    int64_t bias_in;              /* the fusion operand of the bias */
    int count;                    /* the scales, in order */
    float alpha[MAX_POST_OPS];
    bool relu; /* a relu after them */
} post_ops;

/* |b| is broadcast(constant) of an f32 scalar: its value in |v|. */
static bool scalar_constant(const cxla_instr *b, float *v) {
    if (b->opcode != CXLA_OP_BROADCAST || b->operand_count != 1) return false;
    const cxla_instr *c = b->operands[0];
    if (c->opcode != CXLA_OP_CONSTANT || c->shape.type != CXLA_F32 || c->shape.rank != 0 ||
        !c->literal || c->literal_elided)
        return false;
    memcpy(v, cxla_literal_data(c->literal), sizeof(float));
    return true;
}

static bool is_product(const cxla_instr *x) {
    return x->opcode == CXLA_OP_DOT || x->opcode == CXLA_OP_CONVOLUTION;
}

static bool match_fusion(const cxla_instr *f, post_ops *po) {
    memset(po, 0, sizeof(*po));
    po->bias_in = -1;
    if (f->opcode != CXLA_OP_FUSION || f->shape.type != CXLA_F32) return false;
    const cxla_computation *comp = cxla_instr_called(f, CXLA_ATTR_CALLS);
    if (!comp || !comp->root) return false;
    float alphas[MAX_POST_OPS];
    int count = 0;
    const cxla_instr *x = comp->root;
    /* From the root down to the dot or convolution; the post-ops come out reversed. */
    while (!is_product(x)) {
        if (x->shape.type != CXLA_F32 || x->operand_count != 2) return false;
        if (x != comp->root && x->user_count != 1) return false;
        const cxla_instr *a = x->operands[0], *b = x->operands[1];
        if (x->opcode == CXLA_OP_ADD) {
            const cxla_instr *chain = b->opcode == CXLA_OP_BROADCAST ? a : b;
            const cxla_instr *bc = chain == a ? b : a;
            /* A bias only right after the product: oneDNN adds it before the post-ops. */
            if (bc->opcode != CXLA_OP_BROADCAST || !is_product(chain)) return false;
            const cxla_instr *bias = bc->operands[0];
            if (bias->opcode != CXLA_OP_PARAMETER || bias->shape.type != CXLA_F32) return false;
            po->bias_bcast = bc;
            po->bias_in = bias->parameter_number;
            x = chain;
            continue;
        }
        if (count == MAX_POST_OPS) return false;
        float c;
        const cxla_instr *chain;
        if (scalar_constant(b, &c))
            chain = a;
        else if (scalar_constant(a, &c))
            chain = b;
        else
            return false;
        if (x->opcode == CXLA_OP_MAXIMUM && c == 0.0f && !signbit(c)) {
            /* The scales seen so far come after this relu: it moves past them when they
             * are positive (c * max(x, 0) == max(c * x, 0), rounding included). */
            for (int i = 0; i < count; i++)
                if (!(alphas[i] > 0.0f)) return false;
            po->relu = true;
        } else if (x->opcode == CXLA_OP_MULTIPLY) {
            alphas[count++] = c;
        } else {
            return false;
        }
        x = chain;
    }
    if (x->shape.type != CXLA_F32 || (x != comp->root && x->user_count != 1)) return false;
    if (x->operand_count != 2) return false;
    for (int k = 0; k < 2; k++) {
        if (x->operands[k]->opcode != CXLA_OP_PARAMETER) return false;
        po->core_in[k] = x->operands[k]->parameter_number;
    }
    po->core = x;
    po->count = count;
    for (int i = 0; i < count; i++) po->alpha[i] = alphas[count - 1 - i];
    return true;
}

/* ---- oneDNN ----------------------------------------------------------------------------- */

#ifdef CXLA_HAVE_ONEDNN
#include <dlfcn.h>
#include <dnnl.h>
#include <dnnl_debug.h>
#include <pthread.h>

bool cpu_onednn_available(void) {
    return true;
}

static void row_major_strides(const cxla_shape *s, int64_t *strides) {
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

/* Debian's oneDNN runs its parallel regions on OpenMP, with OpenMP's thread count; a
 * call sets the executable's count for the calling thread (an OpenMP setting per thread)
 * through omp_set_num_threads, looked up in the OpenMP runtime that libdnnl loaded, so
 * that cxla does not link that runtime itself. NULL: not found (the default stays). */
static void (*set_omp_threads)(int);

static void engine_init(void) {
    engine_status = dnnl_engine_create(&engine, dnnl_cpu, 0);
    void *sym = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    /* dlsym returns data pointers; POSIX guarantees the conversion. */
    if (sym) memcpy(&set_omp_threads, &sym, sizeof(sym));
}

/* Tensors: source, weights, destination, bias (only in a fusion with a bias add). */
enum { TENSORS = 4, BIAS = 3, ALIGN = 64 };

typedef struct tensor {
    bool used;
    int arg; /* DNNL_ARG_* of the primitive */
    int io;  /* >= 0: in[io]; -1: out[0] */
    dnnl_memory_desc_t user, prim;
    dnnl_primitive_t reorder; /* user -> prim (inputs) or prim -> user (the output); or NULL */
    size_t prim_size;
    /* A kernel whose spatial dims are read reversed: copied flipped before the run. */
    bool flip;
    int64_t rank, dims[CXLA_MAX_RANK];
    bool flip_dim[CXLA_MAX_RANK];
    size_t es, bytes;
} tensor;

typedef struct dnn_state {
    const cxla_instr *instr;
    int64_t relu_count; /* > 0: a relu over that many f32 results after the primitive */
    int threads;        /* > 0: OpenMP threads for the primitive */
    dnnl_primitive_t prim;
    tensor t[TENSORS];
    size_t scratch_size;
    dnnl_memory_desc_t scratch_md;
} dnn_state;

static void dnn_free(void *state) {
    dnn_state *st = state;
    if (!st) return;
    if (st->prim) dnnl_primitive_destroy(st->prim);
    for (int i = 0; i < TENSORS; i++)
        if (st->t[i].reorder) dnnl_primitive_destroy(st->t[i].reorder);
    free(st);
}

static cxla_status dnn_error(const cxla_instr *instr, const char *what, dnnl_status_t s) {
    return cxla_error(CXLA_STATUS_INTERNAL, "%s: oneDNN %s failed: %s", instr->name, what,
                      dnnl_status2str(s));
}

static void *aligned(size_t size) {
    return aligned_alloc(ALIGN, (size + ALIGN - 1) / ALIGN * ALIGN + (size ? 0 : ALIGN));
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

static cxla_status dnn_run(void *state, void *const *out, const void *const *in) {
    const dnn_state *st = state;
    dnnl_stream_t stream = NULL;
    dnnl_memory_t user_mem[TENSORS] = {0}, prim_mem[TENSORS] = {0}, scratch_mem = NULL;
    void *bufs[TENSORS] = {0}, *flipped[TENSORS] = {0}, *scratch = NULL;
    const char *what = "stream creation";
    if (st->threads > 0 && set_omp_threads) set_omp_threads(st->threads);
    dnnl_status_t ds = dnnl_stream_create(&stream, engine, dnnl_stream_default_flags);
    cxla_status s = NULL;
    for (int i = 0; i < TENSORS && ds == dnnl_success && !s; i++) {
        const tensor *t = &st->t[i];
        if (!t->used) continue;
        void *ptr = t->io >= 0 ? (void *)in[t->io] : out[0];
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
        bufs[i] = aligned(t->prim_size);
        if (!bufs[i]) {
            s = OOM();
            break;
        }
        ds = dnnl_memory_create(&prim_mem[i], &t->prim, engine, bufs[i]);
        if (ds != dnnl_success || t->io < 0) continue;
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, user_mem[i]}, {DNNL_ARG_TO, prim_mem[i]}};
        what = "reorder";
        ds = dnnl_primitive_execute(t->reorder, stream, 2, args);
    }
    if (ds == dnnl_success && !s && st->scratch_size) {
        scratch = aligned(st->scratch_size);
        if (!scratch) s = OOM();
        what = "memory creation";
        if (!s) ds = dnnl_memory_create(&scratch_mem, &st->scratch_md, engine, scratch);
    }
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
    if (!s && st->relu_count > 0) {
        float *y = out[0];
        for (int64_t i = 0; i < st->relu_count; i++) y[i] = y[i] < 0.0f ? 0.0f : y[i];
    }
    for (int i = 0; i < TENSORS; i++) {
        if (user_mem[i]) dnnl_memory_destroy(user_mem[i]);
        if (prim_mem[i]) dnnl_memory_destroy(prim_mem[i]);
        free(bufs[i]);
        free(flipped[i]);
    }
    if (scratch_mem) dnnl_memory_destroy(scratch_mem);
    free(scratch);
    if (stream) dnnl_stream_destroy(stream);
    return s;
}

static dnnl_data_type_t dt_of(cxla_type t) {
    switch (t) {
    case CXLA_F32: return dnnl_f32;
    case CXLA_BF16: return dnnl_bf16;
    case CXLA_F16: return dnnl_f16;
    default: return dnnl_data_type_undef;
    }
}

static bool is_ref(const_dnnl_primitive_desc_t pd) {
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, (void *)&impl) != dnnl_success)
        return false;
    return impl && strncmp(impl, "ref", 3) == 0;
}

/* The attributes of every primitive: f32 stays f32 (XLA's CPU backend never computes an
 * f32 dot in bf16 or tf32, whatever ONEDNN_DEFAULT_FPMATH_MODE says), and the scratchpad
 * is the caller's, so that runs on several threads do not share one. */
static dnnl_status_t make_attr(const post_ops *po, dnnl_primitive_attr_t *attr) {
    dnnl_status_t ds = dnnl_primitive_attr_create(attr);
    if (ds == dnnl_success)
        ds = dnnl_primitive_attr_set_fpmath_mode(*attr, dnnl_fpmath_mode_strict);
    if (ds == dnnl_success)
        ds = dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user);
    if (ds == dnnl_success && po && po->count > 0) {
        dnnl_post_ops_t ops = NULL;
        ds = dnnl_post_ops_create(&ops);
        for (int i = 0; i < po->count && ds == dnnl_success; i++)
            ds = dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_linear, po->alpha[i], 0.0f);
        if (ds == dnnl_success) ds = dnnl_primitive_attr_set_post_ops(*attr, ops);
        if (ops) dnnl_post_ops_destroy(ops);
    }
    return ds;
}

/* The bias tensor of |po| when its broadcast puts the vector along the |count| output
 * dims |dims| (in order, the bias's own dims of those sizes): |nd| dims, 1 everywhere
 * but the last (which has them all). No bias: an unused tensor. False when the bias lies
 * otherwise. */
static bool bias_tensor(const post_ops *po, const cxla_shape *os, int64_t count,
                        const int64_t *dims, int nd, tensor *t) {
    *t = (tensor){0};
    if (!po || !po->bias_bcast) return true;
    int64_t nbd;
    const int64_t *bd = cxla_instr_ints(po->bias_bcast, CXLA_ATTR_DIMENSIONS, &nbd);
    const cxla_shape *bs = &po->bias_bcast->operands[0]->shape;
    if (!bd || nbd != count || bs->rank != count) return false;
    int64_t n = 1;
    for (int64_t i = 0; i < count; i++) {
        if (bd[i] != dims[i] || bs->dims[i] != os->dims[dims[i]]) return false;
        n *= bs->dims[i];
    }
    dnnl_dims_t d, strides;
    for (int i = 0; i < nd; i++) d[i] = 1, strides[i] = n;
    d[nd - 1] = n, strides[nd - 1] = 1;
    *t = (tensor){.used = true, .arg = DNNL_ARG_BIAS, .io = (int)po->bias_in};
    return dnnl_memory_desc_init_by_strides(&t->user, nd, d, dnnl_f32, strides) == dnnl_success;
}

/* Fills |st| from the primitive descriptor |pd| (owned: destroyed here): the tensors'
 * chosen layouts with their reorders, the scratchpad, the primitive. |queries| gives the
 * memory-descriptor query of each tensor. */
static dnnl_status_t finish(dnn_state *st, dnnl_primitive_desc_t pd, const dnnl_query_t *queries,
                            const char **what) {
    dnnl_status_t ds = dnnl_success;
    for (int i = 0; i < TENSORS && ds == dnnl_success; i++) {
        tensor *t = &st->t[i];
        if (!t->used) continue;
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

/* dot: the matmul primitive over [batch..., M, K] x [batch..., K, N] -> [batch..., M, N]. */
static cxla_status dot_prepare(const cxla_instr *instr, const post_ops *po, dnn_state *st,
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
    if (nlb != nrb || nlc != nrc || nlb + 2 > DNNL_MAX_NDIMS) return NULL;
    int64_t lstr[CXLA_MAX_RANK], rstr[CXLA_MAX_RANK], ostr[CXLA_MAX_RANK];
    row_major_strides(ls, lstr);
    row_major_strides(rs, rstr);
    row_major_strides(os, ostr);
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
    group lm, lk, rk, rn, dm, dn;
    if (!merge(nlf, lf, ls, lstr, &lm) || !merge(nlc, lc, ls, lstr, &lk) ||
        !merge(nlc, rc, rs, rstr, &rk) || !merge(nrf, rf, rs, rstr, &rn) ||
        !merge(nlf, om, os, ostr, &dm) || !merge(nrf, on, os, ostr, &dn))
        return NULL;
    fix_unit(&lm, &lk);
    fix_unit(&rk, &rn);
    fix_unit(&dm, &dn);
    int nd = (int)nlb + 2;
    dnnl_dims_t sd, wd, dd, ss, ws, dst_s;
    for (int64_t i = 0; i < nlb; i++) {
        sd[i] = wd[i] = dd[i] = ls->dims[lb[i]];
        ss[i] = lstr[lb[i]];
        ws[i] = rstr[rb[i]];
        dst_s[i] = ostr[i];
    }
    sd[nd - 2] = lm.size, sd[nd - 1] = lk.size, ss[nd - 2] = lm.stride, ss[nd - 1] = lk.stride;
    wd[nd - 2] = rk.size, wd[nd - 1] = rn.size, ws[nd - 2] = rk.stride, ws[nd - 1] = rn.stride;
    dd[nd - 2] = dm.size, dd[nd - 1] = dn.size, dst_s[nd - 2] = dm.stride,
            dst_s[nd - 1] = dn.stride;
    st->t[0] = (tensor){.used = true, .arg = DNNL_ARG_SRC, .io = po ? (int)po->core_in[0] : 0};
    st->t[1] = (tensor){.used = true, .arg = DNNL_ARG_WEIGHTS, .io = po ? (int)po->core_in[1] : 1};
    st->t[2] = (tensor){.used = true, .arg = DNNL_ARG_DST, .io = -1};
    if (!bias_tensor(po, os, nrf, on, nd, &st->t[BIAS])) return NULL;
    dnnl_status_t ds =
        dnnl_memory_desc_init_by_strides(&st->t[0].user, nd, sd, dt_of(ls->type), ss);
    if (ds == dnnl_success)
        ds = dnnl_memory_desc_init_by_strides(&st->t[1].user, nd, wd, dt_of(rs->type), ws);
    if (ds == dnnl_success)
        ds = dnnl_memory_desc_init_by_strides(&st->t[2].user, nd, dd, dt_of(os->type), dst_s);
    if (ds != dnnl_success) return NULL; /* a form oneDNN does not take: the loops */
    dnnl_matmul_desc_t desc;
    ds = dnnl_matmul_desc_init(&desc, &st->t[0].user, &st->t[1].user,
                               st->t[BIAS].used ? &st->t[BIAS].user : NULL, &st->t[2].user);
    if (ds != dnnl_success) return NULL;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    const char *what = "attribute creation";
    ds = make_attr(po, &attr);
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
    if (ds == dnnl_success) ds = finish(st, pd, queries, &what);
    if (ds != dnnl_success) return dnn_error(instr, what, ds);
    *handled = true;
    return NULL;
}

/* convolution: forward, or backward-data for lhs dilation (see conv_prepare). */
static cxla_status conv_prepare(const cxla_instr *instr, const post_ops *po, dnn_state *st,
                                bool *handled) {
    const cxla_shape *ls = &instr->operands[0]->shape, *rs = &instr->operands[1]->shape;
    const cxla_shape *os = &instr->shape;
    const cxla_attr *dl = cxla_instr_attr(instr, CXLA_ATTR_DIM_LABELS);
    const cxla_attr *w = cxla_instr_attr(instr, CXLA_ATTR_WINDOW);
    if (!dl || dl->kind != CXLA_ATTR_KIND_DIM_LABELS) return NULL;
    const cxla_conv_dims *d = &dl->v.conv;
    int64_t n = d->spatial_count;
    if (n > 3 || (n > 0 && (!w || w->kind != CXLA_ATTR_KIND_WINDOW || w->v.window.rank != n)))
        return NULL;
    int64_t g = 1, bg = 1;
    cxla_instr_int(instr, CXLA_ATTR_FEATURE_GROUP_COUNT, &g);
    cxla_instr_int(instr, CXLA_ATTR_BATCH_GROUP_COUNT, &bg);
    if (bg != 1 || g < 1) return NULL;
    bool lhs_dilated = false;
    for (int64_t i = 0; i < n; i++) {
        const cxla_window_dim *wd = &w->v.window.dims[i];
        if (wd->pad_low < 0 || wd->pad_high < 0) return NULL;
        if (wd->lhs_dilation > 1) lhs_dilated = true;
    }
    int64_t lstr[CXLA_MAX_RANK], rstr[CXLA_MAX_RANK], ostr[CXLA_MAX_RANK];
    row_major_strides(ls, lstr);
    row_major_strides(rs, rstr);
    row_major_strides(os, ostr);
    int64_t IZ = ls->dims[d->input_feature], KZ = rs->dims[d->kernel_input_feature];
    int64_t OZ = rs->dims[d->kernel_output_feature];
    int64_t ns = n > 0 ? n : 1; /* no spatial dims: one of size 1 */
    int nd = (int)ns + 2;
    dnnl_dims_t in_d, in_s, out_d, out_s, k_d, k_s, strides, dilates, pad_l, pad_r;
    in_d[0] = ls->dims[d->input_batch], in_s[0] = lstr[d->input_batch];
    in_d[1] = IZ, in_s[1] = lstr[d->input_feature];
    out_d[0] = os->dims[d->output_batch], out_s[0] = ostr[d->output_batch];
    out_d[1] = OZ, out_s[1] = ostr[d->output_feature];
    /* Weights: [G,] out channels (per group), in channels, spatial. For the backward-data
     * form the roles turn around: its "output" channels are the HLO input's (KZ per group)
     * and its "input" channels the HLO output's (OZ / G per group). */
    int kw = 0;
    if (g > 1) {
        k_d[kw] = g, k_s[kw++] = (OZ / g) * rstr[d->kernel_output_feature];
    }
    if (!lhs_dilated) {
        k_d[kw] = OZ / g, k_s[kw++] = rstr[d->kernel_output_feature];
        k_d[kw] = KZ, k_s[kw++] = rstr[d->kernel_input_feature];
    } else {
        k_d[kw] = KZ, k_s[kw++] = rstr[d->kernel_input_feature];
        k_d[kw] = OZ / g, k_s[kw++] = rstr[d->kernel_output_feature];
    }
    tensor *kt = &st->t[1];
    *kt = (tensor){.used = true,
                   .arg = DNNL_ARG_WEIGHTS,
                   .io = po ? (int)po->core_in[1] : 1,
                   .rank = rs->rank};
    for (int64_t i = 0; i < rs->rank; i++) kt->dims[i] = rs->dims[i];
    for (int64_t i = 0; i < ns; i++) {
        if (n == 0) {
            in_d[2] = out_d[2] = k_d[kw] = 1;
            in_s[2] = out_s[2] = k_s[kw] = 1;
            strides[0] = 1, dilates[0] = 0, pad_l[0] = pad_r[0] = 0;
            break;
        }
        const cxla_window_dim *wd = &w->v.window.dims[i];
        in_d[2 + i] = ls->dims[d->input_spatial[i]], in_s[2 + i] = lstr[d->input_spatial[i]];
        out_d[2 + i] = os->dims[d->output_spatial[i]], out_s[2 + i] = ostr[d->output_spatial[i]];
        k_d[kw + i] = rs->dims[d->kernel_spatial[i]], k_s[kw + i] = rstr[d->kernel_spatial[i]];
        dilates[i] = wd->rhs_dilation - 1;
        if (!lhs_dilated) {
            strides[i] = wd->stride;
            pad_l[i] = wd->pad_low;
            pad_r[i] = wd->pad_high;
            kt->flip_dim[d->kernel_spatial[i]] = wd->reversal;
        } else {
            /* A transposed convolution: the HLO input is the gradient of a strided
             * convolution's output (its stride the lhs dilation), read with the kernel
             * reversed and the padding (K-1)*D - pad on each side. */
            if (wd->stride != 1) return NULL;
            int64_t ext = (wd->size - 1) * wd->rhs_dilation;
            strides[i] = wd->lhs_dilation;
            pad_l[i] = ext - wd->pad_low;
            pad_r[i] = ext - wd->pad_high;
            if (pad_l[i] < 0 || pad_r[i] < 0) return NULL;
            kt->flip_dim[d->kernel_spatial[i]] = !wd->reversal;
        }
        if (kt->flip_dim[d->kernel_spatial[i]]) kt->flip = true;
    }
    if (kt->flip) {
        kt->es = cxla_type_storage(rs->type);
        kt->bytes = (size_t)elements_of(rs) * kt->es;
    }
    int kd = kw + (int)ns;
    dnnl_data_type_t it = dt_of(ls->type), wt = dt_of(rs->type), ot = dt_of(os->type);
    tensor *src = &st->t[0], *dst = &st->t[2];
    *src = (tensor){.used = true,
                    .arg = lhs_dilated ? DNNL_ARG_DIFF_DST : DNNL_ARG_SRC,
                    .io = po ? (int)po->core_in[0] : 0};
    *dst = (tensor){.used = true, .arg = lhs_dilated ? DNNL_ARG_DIFF_SRC : DNNL_ARG_DST, .io = -1};
    /* Post-ops only on the forward primitive (backward data has neither bias nor them). */
    if (po && lhs_dilated) return NULL;
    int64_t feature_dim = d->output_feature;
    if (!bias_tensor(po, os, 1, &feature_dim, 1, &st->t[BIAS])) return NULL;
    dnnl_status_t ds = dnnl_memory_desc_init_by_strides(&src->user, nd, in_d, it, in_s);
    if (ds == dnnl_success) ds = dnnl_memory_desc_init_by_strides(&kt->user, kd, k_d, wt, k_s);
    if (ds == dnnl_success) ds = dnnl_memory_desc_init_by_strides(&dst->user, nd, out_d, ot, out_s);
    if (ds != dnnl_success) return NULL;
    /* First the caller's layouts for the activations and any for the weights (a reorder of
     * the small kernel per run); when only the reference implementation takes that, any
     * layout for all three (reorders of the activations too). */
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_attr_t attr = NULL;
    if (make_attr(po, &attr) != dnnl_success && attr) {
        dnnl_primitive_attr_destroy(attr);
        attr = NULL;
    }
    for (int attempt = 0; attempt < 2 && attr; attempt++) {
        dnnl_memory_desc_t s_md = src->user, k_md, d_md = dst->user;
        dnnl_memory_desc_init_by_tag(&k_md, kd, k_d, wt, dnnl_format_tag_any);
        if (attempt == 1) {
            dnnl_memory_desc_init_by_tag(&s_md, nd, in_d, it, dnnl_format_tag_any);
            dnnl_memory_desc_init_by_tag(&d_md, nd, out_d, ot, dnnl_format_tag_any);
        }
        dnnl_convolution_desc_t desc;
        ds = lhs_dilated
                 ? dnnl_dilated_convolution_backward_data_desc_init(&desc, dnnl_convolution_direct,
                                                                    &d_md, &k_md, &s_md, strides,
                                                                    dilates, pad_l, pad_r)
                 : dnnl_dilated_convolution_forward_desc_init(
                       &desc, dnnl_forward_inference, dnnl_convolution_direct, &s_md, &k_md,
                       st->t[BIAS].used ? &st->t[BIAS].user : NULL, &d_md, strides, dilates, pad_l,
                       pad_r);
        dnnl_primitive_desc_t next = NULL;
        if (ds == dnnl_success) {
            /* Backward data needs the forward primitive's descriptor as a hint. */
            dnnl_primitive_desc_t hint = NULL;
            if (lhs_dilated) {
                dnnl_convolution_desc_t fwd;
                ds = dnnl_dilated_convolution_forward_desc_init(
                    &fwd, dnnl_forward_training, dnnl_convolution_direct, &d_md, &k_md, NULL, &s_md,
                    strides, dilates, pad_l, pad_r);
                if (ds == dnnl_success)
                    ds = dnnl_primitive_desc_create(&hint, &fwd, attr, engine, NULL);
            }
            if (ds == dnnl_success)
                ds = dnnl_primitive_desc_create(&next, &desc, attr, engine, hint);
            if (hint) dnnl_primitive_desc_destroy(hint);
        }
        if (ds != dnnl_success) continue; /* not in this form; perhaps in the next */
        if (!pd || !is_ref(next)) {
            if (pd) dnnl_primitive_desc_destroy(pd);
            pd = next;
        } else {
            dnnl_primitive_desc_destroy(next);
        }
        if (!is_ref(pd)) break;
    }
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (!pd) return NULL; /* unimplemented or not expressible: the loops */
    static const dnnl_query_t fwd_q[TENSORS] = {dnnl_query_src_md, dnnl_query_weights_md,
                                                dnnl_query_dst_md};
    static const dnnl_query_t bwd_q[TENSORS] = {dnnl_query_diff_dst_md, dnnl_query_weights_md,
                                                dnnl_query_diff_src_md};
    const char *what = "convolution creation";
    ds = finish(st, pd, lhs_dilated ? bwd_q : fwd_q, &what);
    if (ds != dnnl_success) return dnn_error(instr, what, ds);
    *handled = true;
    return NULL;
}

static cxla_status onednn_prepare(const cxla_instr *instr, int threads, cpu_call *out,
                                  bool *handled) {
    *handled = false;
    post_ops fused;
    const post_ops *po = NULL;
    const cxla_instr *core = instr;
    if (instr->opcode == CXLA_OP_FUSION) {
        if (!match_fusion(instr, &fused)) return NULL;
        po = &fused;
        core = fused.core;
    }
    if (core->operand_count != 2) return NULL;
    const cxla_shape *ls = &core->operands[0]->shape, *rs = &core->operands[1]->shape;
    if (dt_of(ls->type) == dnnl_data_type_undef || dt_of(rs->type) == dnnl_data_type_undef ||
        dt_of(core->shape.type) == dnnl_data_type_undef)
        return NULL;
    /* oneDNN refuses arrays with no elements; the loops give their zeros. */
    if (elements_of(ls) == 0 || elements_of(rs) == 0 || elements_of(&core->shape) == 0) return NULL;
    pthread_once(&engine_once, engine_init);
    if (engine_status != dnnl_success) return NULL;
    dnn_state *st = calloc(1, sizeof(*st));
    if (!st) return OOM();
    st->instr = instr;
    if (po && po->relu) st->relu_count = elements_of(&instr->shape);
    st->threads = threads;
    cxla_status s = core->opcode == CXLA_OP_DOT ? dot_prepare(core, po, st, handled)
                                                : conv_prepare(core, po, st, handled);
    if (s || !*handled) {
        dnn_free(st);
        return s;
    }
    *out =
        (cpu_call){.fn = dnn_run,
                   .state = st,
                   .free_state = dnn_free,
                   .what = core->opcode == CXLA_OP_DOT
                               ? (po ? "onednn matmul with post-ops" : "onednn matmul")
                               : (po ? "onednn convolution with post-ops" : "onednn convolution")};
    return NULL;
}

#else /* no oneDNN */

bool cpu_onednn_available(void) {
    return false;
}

static cxla_status onednn_prepare(const cxla_instr *instr, int threads, cpu_call *out,
                                  bool *handled) {
    (void)instr;
    (void)threads;
    (void)out;
    *handled = false;
    return NULL;
}

#endif

/* The types oneDNN's primitives take (where the CPU's oneDNN implements them). */
static bool onednn_type(cxla_type t) {
    return t == CXLA_F32 || t == CXLA_BF16 || t == CXLA_F16;
}

bool cpu_linalg_wants(const cxla_instr *instr) {
    post_ops po;
    if (instr->opcode == CXLA_OP_DOT) {
        /* oneDNN first; else the emitter's blocked kernel where it applies; else the
         * loops of the library call. */
        bool onednn = cpu_onednn_available() && onednn_type(instr->shape.type) &&
                      onednn_type(instr->operands[0]->shape.type) &&
                      onednn_type(instr->operands[1]->shape.type);
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
    return cpu_onednn_available() && match_fusion(instr, &po);
}

cxla_status cpu_linalg_prepare(const cxla_instr *instr, int threads, cpu_call *out) {
    memset(out, 0, sizeof(*out));
    bool handled = false;
    CXLA_RETURN_IF_ERROR(onednn_prepare(instr, threads, out, &handled));
    /* A fusion oneDNN does not take stays with the interpreter's handler (no call). */
    if (handled || instr->opcode == CXLA_OP_FUSION) return NULL;
    return loops_prepare(instr, out);
}
