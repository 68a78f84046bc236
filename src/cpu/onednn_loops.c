/* The non-oneDNN parts of the dot and convolution calls (onednn_loops.h): the
 * interpreter's handler over the buffers, and an output fusion's epilogue as loops after
 * its product's call. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/onednn_loops.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

int64_t cpu_linalg_elements(const cxla_shape *s) {
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
        views[k].count = cpu_linalg_elements(&st->shapes[k]);
        CXLA_RETURN_IF_ERROR(cxla_shape_byte_size(&st->shapes[k], &views[k].size));
        ops[k] = &views[k];
    }
    cxla_literal *result = NULL;
    CXLA_RETURN_IF_ERROR(interp_handler(st->instr->opcode)(NULL, st->instr, ops, &result));
    if (result->size) memcpy(out[0], result->data, result->size);
    cxla_literal_free(result);
    return NULL;
}

cxla_status cpu_linalg_loops_prepare(const cxla_instr *instr, cpu_call *out) {
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

bool cpu_linalg_match_fusion(const cxla_instr *f, cpu_post_ops *po) {
    memset(po, 0, sizeof(*po));
    if (!cxla_epilogue_match(f, &po->e)) return false;
    for (int k = 0; k < 2; k++) po->core_in[k] = po->e.core->operands[k]->parameter_number;
    for (int64_t i = 0; i < po->e.count; i++) {
        const cxla_epi_op *op = &po->e.ops[i];
        po->vec_in[i] = op->vec ? op->vec->parameter_number : -1;
        if (op->kind == CXLA_EPI_RELU) po->relu = true;
    }
    return true;
}

/* maximum(y, +0) as the interpreter computes it: NaN stays, -0 becomes +0. On the bits,
 * without branches (the signs of a product's elements are random: a branch per element
 * mispredicts half the time): a set sign bit is a value <= -0 unless the rest is a NaN's
 * (above the infinity's bits). */
void cpu_linalg_relu(cxla_type t, void *out, int64_t n) {
    if (t == CXLA_F32) {
        uint32_t *y = out;
        for (int64_t i = 0; i < n; i++) {
            uint32_t u = y[i];
            uint32_t keep = (u >> 31 == 0) | ((u & 0x7fffffffu) > 0x7f800000u);
            y[i] = u & (0u - keep);
        }
        return;
    }
    uint16_t *y = out;
    uint32_t inf = t == CXLA_BF16 ? 0x7f80 : 0x7c00;
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = y[i];
        uint32_t keep = (u >> 15 == 0) | ((u & 0x7fffu) > inf);
        y[i] = (uint16_t)(u & (0u - keep));
    }
}

/* Element k of an array of |t| (f32, bf16, f16) as f32, and f32 stored rounded into it. */
static float load_f(cxla_type t, const void *p, int64_t k) {
    if (t == CXLA_F32) return ((const float *)p)[k];
    uint16_t b = ((const uint16_t *)p)[k];
    return t == CXLA_BF16 ? cxla_bf16_to_f32(b) : cxla_f16_to_f32(b);
}

static void store_f(cxla_type t, void *p, int64_t k, float v) {
    if (t == CXLA_F32)
        ((float *)p)[k] = v;
    else
        ((uint16_t *)p)[k] = t == CXLA_BF16 ? cxla_f32_to_bf16(v) : cxla_f32_to_f16(v);
}

/* The epilogue as loops after a call that computed the product. */
typedef struct epi_state {
    cpu_call core;
    cpu_post_ops po;
    int64_t count;    /* result elements */
    int64_t inner;    /* elements after the feature dims (row-major) */
    int64_t features; /* elements of the feature dims */
    cxla_type type;   /* the chain's (f32, bf16, f16) */
    cxla_type out;    /* the result's: |type|, or bf16 or f16 after a convert of f32 */
} epi_state;

static void epi_free(void *state) {
    epi_state *st = state;
    if (!st) return;
    cpu_call_release(&st->core);
    free(st);
}

/* The f32 loops of epi_run over |y|. */
static void epi_f32(const epi_state *st, float *y, const void *const *in);

static cxla_status epi_run(void *state, void *const *out, const void *const *in) {
    const epi_state *st = state;
    const void *core_in[2] = {in[st->po.core_in[0]], in[st->po.core_in[1]]};
    if (st->out != st->type) {
        /* A convert last: the f32 chain in a block of its own, then rounded to the
         * result's type, as the interpreter's convert rounds. */
        float *y = malloc((size_t)(st->count ? st->count : 1) * sizeof(float));
        if (!y) return OOM();
        void *const tmp[1] = {y};
        cxla_status s = st->core.fn(st->core.state, tmp, core_in);
        if (!s) {
            epi_f32(st, y, in);
            for (int64_t k = 0; k < st->count; k++) store_f(st->out, out[0], k, y[k]);
        }
        free(y);
        return s;
    }
    CXLA_RETURN_IF_ERROR(st->core.fn(st->core.state, out, core_in));
    if (st->type != CXLA_F32) {
        /* f16, bf16: each operation in f32, rounded to the type, as the interpreter does
         * (the relu commutes with the positive scales after it, as above). */
        void *y = out[0];
        for (int64_t i = 0; i < st->po.e.count; i++) {
            const cxla_epi_op *op = &st->po.e.ops[i];
            if (op->kind == CXLA_EPI_RELU) continue;
            const void *v = op->kind == CXLA_EPI_SCALE ? NULL : in[st->po.vec_in[i]];
            for (int64_t k = 0; k < st->count; k++) {
                float x = load_f(st->type, y, k), r;
                float vf = v ? load_f(st->type, v, (k / st->inner) % st->features) : op->c;
                switch (op->kind) {
                case CXLA_EPI_ADD_VEC: r = x + vf; break;
                case CXLA_EPI_SUB_VEC: r = x - vf; break;
                default: r = x * vf; break;
                }
                store_f(st->type, y, k, r);
            }
        }
        if (st->po.relu) cpu_linalg_relu(st->type, y, st->count);
        return NULL;
    }
    epi_f32(st, out[0], in);
    return NULL;
}

static void epi_f32(const epi_state *st, float *y, const void *const *in) {
    int64_t blocks = st->count / (st->inner * st->features);
    for (int64_t i = 0; i < st->po.e.count; i++) {
        const cxla_epi_op *op = &st->po.e.ops[i];
        if (op->kind == CXLA_EPI_RELU || op->kind == CXLA_EPI_CONVERT) continue; /* below */
        if (op->kind == CXLA_EPI_SCALE) {
            float c = op->c;
            for (int64_t k = 0; k < st->count; k++) y[k] = y[k] * c;
            continue;
        }
        if (op->kind == CXLA_EPI_TANH) { /* the interpreter's: in double, rounded once */
            for (int64_t k = 0; k < st->count; k++) y[k] = (float)tanh((double)y[k]);
            continue;
        }
        const float *v = in[st->po.vec_in[i]];
        for (int64_t b = 0; b < blocks; b++)
            for (int64_t f = 0; f < st->features; f++) {
                float *p = y + (b * st->features + f) * st->inner;
                float vf = v[f];
                if (op->kind == CXLA_EPI_ADD_VEC)
                    for (int64_t k = 0; k < st->inner; k++) p[k] = p[k] + vf;
                else if (op->kind == CXLA_EPI_SUB_VEC)
                    for (int64_t k = 0; k < st->inner; k++) p[k] = p[k] - vf;
                else
                    for (int64_t k = 0; k < st->inner; k++) p[k] = p[k] * vf;
            }
    }
    if (st->po.relu) cpu_linalg_relu(CXLA_F32, y, st->count);
}

/* A fusion oneDNN does not take whole: its product as a call, then the epilogue's loops. */
cxla_status cpu_linalg_epilogue_prepare(const cxla_instr *instr, int threads, cpu_pool *pool,
                                        cpu_call *out) {
    epi_state *st = calloc(1, sizeof(*st));
    if (!st) return OOM();
    if (!cpu_linalg_match_fusion(instr, &st->po)) {
        free(st);
        return cxla_error(CXLA_STATUS_INTERNAL, "%s: not an output fusion", instr->name);
    }
    const cxla_instr *core = st->po.e.core;
    int64_t fd[CXLA_MAX_RANK];
    int64_t nf = cxla_epilogue_feature_dims(core, fd);
    st->count = cpu_linalg_elements(&core->shape);
    st->type = core->shape.type;
    st->out = instr->shape.type;
    st->features = 1;
    st->inner = 1;
    for (int64_t i = 0; i < nf; i++) st->features *= core->shape.dims[fd[i]];
    for (int64_t d = nf ? fd[nf - 1] + 1 : core->shape.rank; d < core->shape.rank; d++)
        st->inner *= core->shape.dims[d];
    cxla_status s = cpu_linalg_product_prepare(core, threads, pool, &st->core);
    if (s) {
        epi_free(st);
        return s;
    }
    bool onednn = strncmp(st->core.what, "onednn", 6) == 0;
    *out = (cpu_call){
        .fn = epi_run,
        .state = st,
        .free_state = epi_free,
        .what = core->opcode == CXLA_OP_DOT
                    ? (onednn ? "onednn matmul, then epilogue loops" : "loops, then epilogue loops")
                    : (onednn ? "onednn convolution, then epilogue loops"
                              : "loops, then epilogue loops")};
    return NULL;
}
