/* What onednn.c and onednn_conv.c share (built with oneDNN only): a call's state (dnn_state:
 * the primitive, its tensors and their reorders, the work block's plan) and the helpers that
 * build it. onednn.c makes, runs and frees calls and prepares dots; onednn_conv.c prepares
 * convolutions (cpu_dnn_conv_prepare). Nothing here is used outside src/cpu/onednn*.c. */
#ifndef CXLA_CPU_ONEDNN_INTERNAL_H_
#define CXLA_CPU_ONEDNN_INTERNAL_H_

#ifdef CXLA_HAVE_ONEDNN
#include <dnnl.h>
#include <pthread.h>
#include <stdbool.h>

#include "cpu/cpu_internal.h"
#include "cpu/onednn_loops.h"
#include "passes/epilogue.h"

/* Tensors: source, weights, destination, bias (only in a fusion with a bias add), then the
 * vectors of binary post-ops (BIN0 + the epilogue op's index). */
enum { BIAS = 3, BIN0 = 4, TENSORS = BIN0 + CXLA_EPI_MAX, ALIGN = 64 };

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
    /* An operand that is a constant of the module: reordered (and flipped) once, when
     * the call is prepared, into this buffer (owned) in the primitive's layout. */
    void *cached;
    /* Weights of a matmul in oneDNN's blocked layout, copied on every run by pack_rows
     * instead of oneDNN's reorder (see pack_recognize). */
    bool pack;
    int64_t pk, pn, pkp;    /* rows (K), columns (N), rows with the padding */
    int64_t ld;             /* the caller's row stride, in elements (columns are dense) */
    int64_t bk, bn, sk, sn; /* the blocks (K, N) and their strides, in elements */
    /* A part of a split call (split_make): bytes from the caller's pointer to the part's
     * first row. */
    size_t off;
    /* An f8 operand (|narrow|; CXLA_TYPE_INVALID otherwise) that the primitive reads widened to
     * bf16 or f32 (|wsize| bytes per element), every value exactly (widen_table): its
     * |count| elements are widened through |lut| (the wide type's bits of each byte) on
     * every run into the work block, or once for a constant (|cached|). */
    cxla_type narrow;
    int wsize;
    int64_t count;
    uint32_t lut[256];
} tensor;

/* Some primitives fix their thread count when they are created (oneDNN's jit
 * convolutions ask OpenMP then, and run that many whatever the count at run time), so a
 * run with fewer threads than the call was made for (replicas sharing the pool) uses a
 * copy of the call made for that count, created on first use. */
enum { MAX_VARIANTS = 16 };

/* A part of a split call (split_make): rows [row0, row1) of the product's M (a matmul) or of
 * the batch (a convolution), single-threaded, reading the weights in the layout |wmd|
 * from the buffer the whole call prepared. */
typedef struct sub_spec {
    int64_t row0, row1;
    dnnl_memory_desc_t wmd;
} sub_spec;

enum { MAX_SPLIT = 64 };

typedef struct dnn_state dnn_state;
struct dnn_state {
    const cxla_instr *instr;
    int64_t relu_count;  /* > 0: a relu over that many results after the primitive */
    cxla_type relu_type; /* their type */
    int threads;         /* > 0: OpenMP threads for the primitive */
    cpu_pool *pool;      /* borrowed, or NULL: its share of threads among the runs at once */
    dnnl_primitive_t prim;
    tensor t[TENSORS];
    size_t scratch_size;
    dnnl_memory_desc_t scratch_md;
    /* A run's work memory, one block (work_get): the reordered tensors (at work_off[i])
     * and the scratchpad (at scratch_off). */
    size_t work_size, work_off[TENSORS], scratch_off;
    size_t widen_off[TENSORS]; /* where a widened operand lies in the work block */
    /* A dot whose result type oneDNN does not store from these operands (an f8 result, f16
     * from bf16, bf16 from f32): the primitive writes f32 into the work block (at out_off),
     * rounded once to |out_narrow| afterwards, as the interpreter rounds its f32 sums. */
    cxla_type out_narrow;
    size_t out_off;
    int64_t out_count;
    pthread_mutex_t mu;             /* guards |fewer| */
    dnn_state *fewer[MAX_VARIANTS]; /* the call made for that many threads, or NULL */
    /* While a part is made: its rows and weights (dot_prepare, conv_prepare read it). */
    const sub_spec *sub;
    /* The rows a split may cut (M of a matmul without batch dims, a convolution's batch),
     * 0 when it cannot; the product's multiply-adds (set by dot_prepare, conv_prepare). */
    int64_t split_rows;
    bool split_conv;  /* the rows are a convolution's images (else a matmul's rows) */
    bool bwd_weights; /* a weight gradient as oneDNN's backward weights (onednn_conv.c) */
    /* Backward weights with padding: the loops, for a run whose rhs holds inf or NaN (oneDNN
     * may multiply it by the padding's zeros, which the interpreter skips); else unset. */
    cpu_call fallback;
    /* > 0: the primitive writes a box inside the result (a transposed convolution whose
     * outputs at an edge read only padding: conv_prepare); the result's bytes, zeroed
     * before it runs. */
    size_t zero_bytes;
    double macs;
    /* A split call: |parts| single-threaded primitives, each over its rows, run on the
     * pool's threads (split_run); 0: the primitive above runs on OpenMP's team. */
    int parts;
    dnn_state *part[MAX_SPLIT];
    /* The parts run one after another, each on every thread (widen_blocks_make), instead of
     * on the pool's threads at once. */
    bool serial;
    char what[128]; /* cpu_call.what when it is not a fixed string */
};

/* Runs the call |state| (a dnn_state) on the caller's buffers: cpu_call.fn of a call. */
cxla_status cpu_dnn_run(void *state, void *const *out, const void *const *in);

/* cpu_call.fn of a backward-weights call (onednn_conv.c): cpu_dnn_run, or its fallback. */
cxla_status cpu_dnn_bwd_weights_run(void *state, void *const *out, const void *const *in);

/* The process's CPU engine (created before any call is prepared). */
dnnl_engine_t cpu_dnn_engine(void);

/* An INTERNAL status naming |instr| and the oneDNN step |what| that failed with |s|. */
cxla_status cpu_dnn_error(const cxla_instr *instr, const char *what, dnnl_status_t s);

/* The row-major strides of |s|'s dims, in elements. */
void cpu_dnn_row_major_strides(const cxla_shape *s, int64_t *strides);

/* oneDNN's type for f32, bf16, f16; dnnl_data_type_undef for the others. */
dnnl_data_type_t cpu_dnn_dt_of(cxla_type t);

/* Whether |pd| is one of oneDNN's reference (slow) implementations. */
bool cpu_dnn_is_ref(const_dnnl_primitive_desc_t pd);

/* The type the primitive stores: the product's |os|, or the type a convert at the end of
 * the epilogue |po| rounds to. */
dnnl_data_type_t cpu_dnn_dst_type(const cpu_post_ops *po, const cxla_shape *os);

/* The attributes of every primitive (strict f32, the caller's scratchpad) and the post-ops of
 * epilogue |po| (NULL: none), its vectors read along dim |axis| of |nd| with |n| elements;
 * dnnl_unimplemented for post-ops this oneDNN gets wrong. */
dnnl_status_t cpu_dnn_make_attr(const cpu_post_ops *po, dnn_state *st, int nd, int axis, int64_t n,
                                dnnl_primitive_attr_t *attr);

/* |t| as the bias of |po| (|nd| dims, the last of |n| elements), or unused without one. */
bool cpu_dnn_bias_tensor(const cpu_post_ops *po, int64_t n, int nd, tensor *t);

/* Fills |st| from |pd| (destroyed here): each used tensor's chosen layout (queried with
 * |queries|[i]) and its reorder, the scratchpad, the primitive. |what|: the failing step. */
dnnl_status_t cpu_dnn_finish(dnn_state *st, dnnl_primitive_desc_t pd, const dnnl_query_t *queries,
                             const char **what);

/* Prepares |instr| (a convolution; |po|: the epilogue of its fusion, or NULL) into |st|:
 * *handled false when oneDNN does not take that form (the loops run it); errors are oneDNN
 * failures other than "unimplemented". */
cxla_status cpu_dnn_conv_prepare(const cxla_instr *instr, const cpu_post_ops *po, dnn_state *st,
                                 bool *handled);

#endif /* CXLA_HAVE_ONEDNN */
#endif /* CXLA_CPU_ONEDNN_INTERNAL_H_ */
