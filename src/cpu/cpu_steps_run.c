/* Running the step sequence that cpu_steps.c builds: one arena per run (a spare one is
 * kept for the next), the entry's arguments read where they lie (relaid first when they
 * are not row-major), each step over the buffers of its classes, while loops and
 * conditionals over their sub-sequences, cancellation between steps and at back-edges,
 * --check-finite after the steps that compute elements. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/memcount.h"
#include "cpu/cpu_loop.h"
#include "cpu/cpu_steps.h"
#include "cpu/emit.h"
#include "exec/dynamic.h"
#include "exec/rng.h"
#include "interp/interp_gather.h"
#include "literal/literal_internal.h"

#define OOM() CPU_STEPS_OOM()

typedef struct run {
    cpu_plan *p;
    const exec_run_options *options;
    exec_cancel *cancel;
    void **ptr; /* by class: where its buffer lies in this run */
    const void **ins;
    void **outs;
    interp_ctx ictx;
    bool ictx_ready;
    cpu_svc_run svc;
    int64_t *sizes;              /* the current sizes of the dynamic classes (plan->dyn_off) */
    bool check_finite, reported; /* --check-finite, and whether it reported already */
    int64_t countdown;           /* steps until the next exec_cancel_poll */
    int64_t back_edges;          /* of the fused loop running (check_cancel_cb) */
    bool step_times;             /* CXLA_STEP_TIMES: each step's time on stderr */
    /* Fused loops (cpu_loop.h) run as one step; not under --check-finite (which looks
     * at every step) nor with CXLA_LOOP_STEPS set (loops step by step, to compare). */
    bool fused_loops;
} run;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* CXLA_STEP_TIMES=1 (a profiling aid): one line per step run, and per phase of the run,
 * "cxla-step-time US NAME OPCODE KIND", for a person to sort and sum. */
static void report_time(const char *kind, const char *name, const char *opcode, double us) {
    fprintf(stderr, "cxla-step-time %.1f %s %s %s\n", us, name, opcode, kind);
}

void cpu_plan_set_origins(cpu_plan *p, const cpu_origins *o) {
    if (p) p->origins = o;
}

/* "NAME (OPCODE, computation C, line L)" of step |sp|'s instruction as the user wrote it
 * (cpu_origins_describe: a fusion by the instructions it holds), into |buf|. */
static void describe_step(const run *r, const step *sp, char *buf, size_t size) {
    char *d = cpu_origins_describe(r->p->origins, sp->instr, NULL);
    if (d)
        snprintf(buf, size, "%s", d);
    else /* memory is short: the optimized module's names */
        snprintf(buf, size, "%s (%s, computation %s, line %" PRId64 ")", sp->instr->name,
                 cxla_opcode_name(sp->instr->opcode), sp->comp ? sp->comp->name : "?",
                 sp->instr->line);
    free(d);
}

static cxla_status cancelled_at(run *r, const step *sp) {
    char what[1024], where[1100];
    describe_step(r, sp, what, sizeof(what));
    snprintf(where, sizeof(where), "at %s", what);
    return exec_cancel_error(r->cancel, where);
}

/* exec.h's contract: exec_cancelled between steps and at back-edges, the poll hook every
 * POLL_EVERY of them. */
static bool check_cancel(run *r) {
    if (!r->cancel) return false;
    if (--r->countdown <= 0) {
        r->countdown = POLL_EVERY;
        return exec_cancel_poll(r->cancel);
    }
    return exec_cancelled(r->cancel);
}

/* A fused loop's back-edge check (every loop of the program calls it), counted: the
 * generated code knows no instruction, so the message says how far the loop went. */
static bool check_cancel_cb(void *ctx) {
    run *r = ctx;
    r->back_edges++;
    return check_cancel(r);
}

/* Whether |q| holds a while loop, at any depth of calls and conditionals. */
static bool holds_loop(const seq *q, int depth) {
    for (int64_t i = 0; q && i < q->count && depth < MAX_DEPTH; i++) {
        const step *sp = &q->steps[i];
        if (sp->kind == S_WHILE) return true;
        for (int64_t k = 0; k < sp->sub_count; k++)
            if (holds_loop(&sp->sub[k], depth + 1)) return true;
    }
    return false;
}

/* The run was cancelled in while loop |loop| at step |at| (the loop's own back-edge, an
 * inner loop's, or a kernel between two of its chunks), after |count| back-edges: for a
 * loop without inner loops, its iteration. */
static cxla_status loop_cancelled(run *r, const step *loop, const step *at, int64_t count) {
    char what[1024], outer[1024], where[2200];
    describe_step(r, at, what, sizeof(what));
    bool nested = holds_loop(&loop->sub[0], 0) || holds_loop(&loop->sub[1], 0);
    const char *edge = at->kind == S_WHILE ? "the back-edge of " : "";
    if (at == loop) {
        if (nested)
            snprintf(where, sizeof(where),
                     "at the back-edge of %s, after %" PRId64
                     " iterations of it and its inner loops",
                     what, count);
        else
            snprintf(where, sizeof(where), "at the back-edge of %s, after iteration %" PRId64, what,
                     count);
    } else {
        describe_step(r, loop, outer, sizeof(outer));
        snprintf(where, sizeof(where), "at %s%s, in the loop %s after %" PRId64 " iterations%s",
                 edge, what, outer, count, nested ? " of it and its inner loops" : "");
    }
    return exec_cancel_error(r->cancel, where);
}

/* The current sizes of class |c|, or NULL when it is static. */
static int64_t *sizes_of(const run *r, int64_t c) {
    const cpu_plan *p = r->p;
    return p->dyn_off && p->dyn_off[c] >= 0 ? r->sizes + p->dyn_off[c] : NULL;
}

/* Class |c| at the sizes of |lit| (an array of the same bounds). */
static void set_sizes(run *r, int64_t c, const cxla_literal *lit) {
    int64_t *z = sizes_of(r, c);
    for (int64_t d = 0; z && d < lit->shape->rank; d++) z[d] = cxla_literal_dynamic_size(lit, d);
}

/* A literal over |shape| whose arrays borrow the run's buffers of leaves ids[*next ...]
 * (never freed by it: free_view), with their current sizes. */
static cxla_status make_view(const run *r, const cxla_shape *shape, void *const *ptr,
                             const int64_t *ids, int64_t *next, cxla_literal **out) {
    cxla_literal *v = calloc(1, sizeof(*v));
    if (!v) return OOM();
    cxla_status s = NULL;
    if (shape->type == CXLA_TUPLE) {
        int64_t n = shape->tuple_count;
        cxla_literal **el = calloc((size_t)(n ? n : 1), sizeof(*el));
        const cxla_shape **shapes = calloc((size_t)(n ? n : 1), sizeof(*shapes));
        s = el && shapes ? NULL : OOM();
        v->elements = el;
        for (int64_t i = 0; i < n && !s; i++) {
            s = make_view(r, &shape->elements[i], ptr, ids, next, &el[i]);
            if (!s) {
                v->tuple_count = i + 1;
                shapes[i] = el[i]->shape;
            }
        }
        if (!s) s = cxla_shape_create_tuple(n, shapes, &v->shape);
        free(shapes);
    } else {
        int64_t m2m[CXLA_MAX_RANK];
        cxla_layout layout = {.minor_to_major = m2m};
        cxla_shape with = *shape;
        if (cxla_type_is_array(shape->type)) {
            for (int64_t i = 0; i < shape->rank; i++) m2m[i] = shape->rank - 1 - i;
            with.layout = &layout;
        }
        s = cxla_shape_clone(&with, &v->shape);
        if (!s && cxla_type_is_array(shape->type)) {
            s = cxla_shape_byte_size(shape, &v->size);
            if (!s) s = cxla_shape_element_count(shape, &v->count);
            v->data = v->size ? ptr[ids[*next]] : NULL;
            /* Below its bounds: the sizes array (borrowed, as the data; free_view leaves
             * it) is the run's own, as the interpreter's form has it. */
            int64_t *z = sizes_of(r, ids[*next]);
            bool below = false;
            for (int64_t d = 0; z && d < shape->rank; d++) below = below || z[d] < shape->dims[d];
            if (!s && below && v->shape->dynamic) v->dyn_sizes = z;
        }
        (*next)++;
    }
    *out = v;
    return s;
}

static void free_view(cxla_literal *v) {
    if (!v) return;
    for (int64_t i = 0; i < v->tuple_count; i++) free_view(v->elements[i]);
    free(v->elements);
    cxla_shape_free(v->shape);
    free(v);
}

/* Copies the arrays of |lit| (depth-first) into the buffers of leaves ids[*next ...]. */
static cxla_status copy_out(run *r, const step *sp, const cxla_literal *lit, int64_t *next) {
    if (lit->shape->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < lit->tuple_count; i++)
            CXLA_RETURN_IF_ERROR(copy_out(r, sp, lit->elements[i], next));
        return NULL;
    }
    if (*next >= sp->out_count)
        return exec_error(sp->instr, CXLA_STATUS_INTERNAL, "the handler gave too many leaves");
    const value *x = &r->p->values[sp->out[*next]];
    void *dst = r->ptr[sp->out[(*next)++]];
    if (!cxla_type_is_array(lit->shape->type)) return NULL;
    if (lit->size != x->size || (lit->dyn_sizes && !sizes_of(r, sp->out[*next - 1])) ||
        !cxla_layout_is_default(lit->shape))
        return exec_error(sp->instr, CXLA_STATUS_INTERNAL,
                          "the handler's result does not have the compiled shape");
    if (x->size) memcpy(dst, lit->data, x->size);
    set_sizes(r, sp->out[*next - 1], lit);
    return NULL;
}

static cxla_status run_handler(run *r, const step *sp) {
    const cxla_instr *in = sp->instr;
    interp_op_fn fn = interp_handler(in->opcode);
    if (!fn)
        return exec_error(in, CXLA_STATUS_UNIMPLEMENTED, "operation %s is not supported",
                          cxla_opcode_name(in->opcode));
    if (!r->ictx_ready) {
        CXLA_RETURN_IF_ERROR(interp_ctx_init(&r->ictx, r->p->module, r->options));
        r->ictx_ready = true;
        r->ictx.reported_non_finite = r->reported; /* --check-finite reports once */
    }
    int64_t n = in->operand_count, next = 0;
    cxla_literal **ops = calloc((size_t)(n ? n : 1), sizeof(*ops));
    cxla_status s = ops ? NULL : OOM();
    for (int64_t k = 0; k < n && !s; k++)
        s = make_view(r, &in->operands[k]->shape, r->ptr, sp->in, &next, &ops[k]);
    cxla_literal *result = NULL;
    const cxla_literal *const *cops = (const cxla_literal *const *)ops;
    /* Values below their bounds meet the instruction as the driver has them meet it. */
    if (!s)
        s = r->p->dyn_off && interp_dynamic_maybe(in, cops)
                ? interp_dynamic_eval(&r->ictx, in, cops, fn, &result)
                : fn(&r->ictx, in, cops, &result);
    /* Its error names the user's instruction, as the interpreter's on the user's module;
     * out of memory (which the handler's allocation reports with its bytes) names it too. */
    if (s) s = interp_rename_error(s, in, cpu_origins_name(r->p->origins, in));
    if (cxla_status_code_of(s) == CXLA_STATUS_RESOURCE_EXHAUSTED) {
        const char *name = cpu_origins_name(r->p->origins, in), *msg = cxla_status_message(s);
        if (!name) name = in->name;
        size_t len = strlen(name);
        if (strncmp(msg, name, len) != 0 || msg[len] != ' ') {
            char *d = cpu_origins_describe(r->p->origins, in, NULL);
            s = cxla_status_annotate(s, "%s", d ? d : in->name);
            free(d);
        }
    }
    int64_t at = 0;
    if (!s) s = copy_out(r, sp, result, &at);
    cxla_literal_free(result);
    for (int64_t k = 0; ops && k < n; k++) free_view(ops[k]);
    free(ops);
    return s;
}

/* dynamic-update-slice into operand 0's own buffer: only the update's elements move. */
void cpu_steps_dus(const step *sp, void *dst_buffer, const void *const *ins) {
    const cxla_instr *in = sp->instr;
    const cxla_shape *os = &in->shape, *us = &in->operands[1]->shape;
    int64_t rank = os->rank;
    char *dst = dst_buffer;
    const char *src = ins[1];
    int64_t start[CXLA_MAX_RANK], idx[CXLA_MAX_RANK], ostride[CXLA_MAX_RANK];
    int64_t total = 1;
    for (int64_t d = 0; d < rank; d++) {
        const cxla_shape *is = &in->operands[2 + d]->shape;
        int64_t v = cxla_load_s64(is->type, ins[2 + d]);
        if (is->type == CXLA_U64 && v < 0) v = INT64_MAX; /* huge: clamped below */
        int64_t hi = os->dims[d] - us->dims[d];
        start[d] = v < 0 ? 0 : v > hi ? hi : v;
        idx[d] = 0;
        total *= us->dims[d];
    }
    if (total == 0) return;
    int64_t st = 1;
    for (int64_t d = rank - 1; d >= 0; d--) {
        ostride[d] = st;
        st *= os->dims[d];
    }
    size_t row = (size_t)(rank ? us->dims[rank - 1] : 1) * sp->elem;
    int64_t rows = rank ? total / us->dims[rank - 1] : 1;
    for (int64_t k = 0; k < rows; k++) {
        int64_t off = 0;
        for (int64_t d = 0; d < rank; d++) off += (start[d] + idx[d]) * ostride[d];
        memmove(dst + (size_t)off * sp->elem, src + (size_t)k * row, row);
        for (int64_t d = rank - 2; d >= 0; d--) { /* the next row of the update */
            if (++idx[d] < us->dims[d]) break;
            idx[d] = 0;
        }
    }
}

/* ---- bounded dynamic shapes ------------------------------------------------------------ */

/* The sizes of the array that instruction operand shape |s| gives, in class |c|: the
 * class's run-time sizes in its dynamic dimensions, the shape's own in the static ones. */
static void operand_sizes(const run *r, const cxla_shape *s, int64_t c, int64_t *out) {
    const int64_t *z = sizes_of(r, c);
    for (int64_t d = 0; d < s->rank; d++)
        out[d] = z && exec_shape_dim_dynamic(s, d) ? z[d] : s->dims[d];
}

/* Sets every element of the row-major array at |buf| (|dims|, |elem| bytes each) that lies
 * at or beyond |sizes| in some dimension (the padding) to the element at |fill| (zero when
 * NULL). Dimensions from |d| on; |stride| bytes per index of dimension d. */
static void fill_padding(char *buf, const int64_t *dims, const int64_t *sizes, int64_t rank,
                         int64_t d, size_t stride, size_t elem, const void *fill) {
    if (d == rank) return;
    size_t inner = d + 1 < rank ? stride / (size_t)dims[d + 1] : elem;
    int64_t keep = sizes[d] < dims[d] ? sizes[d] : dims[d];
    bool inner_padded = false;
    for (int64_t e = d + 1; e < rank; e++) inner_padded = inner_padded || sizes[e] < dims[e];
    if (inner_padded)
        for (int64_t i = 0; i < keep; i++)
            fill_padding(buf + (size_t)i * stride, dims, sizes, rank, d + 1, inner, elem, fill);
    char *at = buf + (size_t)keep * stride, *end = buf + (size_t)dims[d] * stride;
    if (at >= end) return;
    if (!fill) {
        memset(at, 0, (size_t)(end - at));
        return;
    }
    for (char *q = at; q < end; q += elem) memcpy(q, fill, elem);
}

/* fill_padding over a whole array of shape |s| (static dims: its bounds). */
static void pad_array(void *buf, const cxla_shape *s, const int64_t *sizes, size_t elem,
                      const void *fill) {
    bool padded = false;
    for (int64_t d = 0; d < s->rank; d++) {
        if (s->dims[d] == 0) return; /* no elements at all */
        padded = padded || sizes[d] < s->dims[d];
    }
    if (!padded || !buf) return;
    size_t stride = elem;
    for (int64_t d = 1; d < s->rank; d++) stride *= (size_t)s->dims[d];
    fill_padding(buf, s->dims, sizes, s->rank, 0, stride, elem, fill);
}

/* Whether argument |lit| binds to dynamic parameter shape |want| as
 * interp_dynamic_bind_argument would without an error, in the default layout (then
 * bind_copy puts it in the plan's arena buffer; otherwise that function does, or reports
 * the error). */
static bool bindable(const cxla_shape *want, const cxla_literal *lit) {
    const cxla_shape *got = lit->shape;
    if (!cxla_type_is_array(got->type) || got->type != want->type || got->rank != want->rank ||
        !cxla_layout_is_default(got))
        return false;
    for (int64_t d = 0; d < want->rank; d++) {
        int64_t size = cxla_literal_dynamic_size(lit, d);
        if (exec_shape_dim_dynamic(want, d) ? size > want->dims[d] : size != want->dims[d])
            return false;
    }
    return true;
}

/* Copies the value of |lit| (row-major) into |dst|, an array of shape |want| at its bounds,
 * with zeros in the padding, as cxla_literal_to_bounded lays it out. */
static void bind_copy(void *dst, const cxla_shape *want, const cxla_literal *lit, size_t elem) {
    int64_t rank = want->rank, sizes[CXLA_MAX_RANK], idx[CXLA_MAX_RANK] = {0};
    size_t dstride[CXLA_MAX_RANK], sstride[CXLA_MAX_RANK], ds = elem, ss = elem;
    for (int64_t d = rank - 1; d >= 0; d--) {
        sizes[d] = cxla_literal_dynamic_size(lit, d);
        dstride[d] = ds;
        sstride[d] = ss;
        ds *= (size_t)want->dims[d];
        ss *= (size_t)lit->shape->dims[d];
    }
    const char *src = lit->data;
    bool empty = false;
    for (int64_t d = 0; d < rank; d++) empty = empty || sizes[d] == 0;
    if (rank == 0 && elem) memcpy(dst, src, elem);
    /* Row by row (the last dimension's elements are contiguous on both sides). */
    while (rank > 0 && !empty && src) {
        size_t doff = 0, soff = 0;
        for (int64_t d = 0; d + 1 < rank; d++) {
            doff += (size_t)idx[d] * dstride[d];
            soff += (size_t)idx[d] * sstride[d];
        }
        memcpy((char *)dst + doff, src + soff, (size_t)sizes[rank - 1] * elem);
        int64_t d = rank - 2;
        while (d >= 0 && ++idx[d] == sizes[d]) idx[d--] = 0;
        if (d < 0) break;
    }
    pad_array(dst, want, sizes, elem, NULL);
}

/* get-dimension-size and set-dimension-size (S_SIZE): read or write the sizes a class
 * carries; set-dimension-size copies the whole storage (or has its operand's buffer when
 * that dies there), as the interpreter's handler does, with its error for a size outside
 * the bound. */
static cxla_status run_size(run *r, const step *sp) {
    const cxla_instr *in = sp->instr;
    const cxla_shape *xs = &in->operands[0]->shape;
    int64_t nd = 0;
    int64_t dim = cxla_instr_ints(in, CXLA_ATTR_DIMENSIONS, &nd)[0];
    int64_t sizes[CXLA_MAX_RANK];
    operand_sizes(r, xs, sp->in[0], sizes);
    if (in->opcode == CXLA_OP_GET_DIMENSION_SIZE) {
        if (sizes[dim] > INT32_MAX)
            return exec_error(in, CXLA_STATUS_OUT_OF_RANGE,
                              "dimension size %" PRId64 " does not fit in s32", sizes[dim]);
        int32_t v = (int32_t)sizes[dim];
        memcpy(r->ptr[sp->out[0]], &v, sizeof(v));
        return NULL;
    }
    int64_t size = 0, bound = xs->dims[dim];
    interp_load_indices(in->operands[1]->shape.type, r->ptr[sp->in[1]], 1, &size);
    if (size < 0 || size > bound)
        return exec_error(in, CXLA_STATUS_OUT_OF_RANGE,
                          "size %" PRId64 " of dimension %" PRId64
                          " is outside its bound 0..%" PRId64,
                          size, dim, bound);
    size_t bytes = r->p->values[sp->out[0]].size;
    void *dst = r->ptr[sp->out[0]];
    const void *src = r->ptr[sp->in[0]];
    if (bytes && dst != src) memcpy(dst, src, bytes);
    sizes[dim] = size;
    int64_t *z = sizes_of(r, sp->out[0]);
    for (int64_t d = 0; z && d < xs->rank; d++) z[d] = sizes[d];
    return NULL;
}

/* A kernel generated at the bounds (cpu_bounds_kind): the result's sizes from the
 * operands' (exec_dynamic_sizes, with the interpreter's errors), a reduce's input with its
 * padding filled by the init value first (the handler when the init is not the reducer's
 * identity), the kernel over the whole buffers, then the result's padding zeroed (the
 * interpreter's results have zero padding, which set-dimension-size can bring back). */
static cxla_status run_handler(run *r, const step *sp);
static cxla_status run_move(run *r, const step *sp);
static cxla_status run_move_sized(run *r, const step *sp, const int64_t *const *ops,
                                  const void *const *ins);

/* A reduce with any reducer whose kernel reads its inputs' sizes (B_SIZED): the sizes
 * lined up as one more input, the kernel at the bounds, then the results' padding zeroed;
 * the interpreter's handler where it would report an error. */
/* The sizes of every operand of |sp| (rows of |*out_opz|, pointed to by |*out_ops|) and
 * |leaves| rows for the results' (|*out_res|), in arrays sized from the instruction; the
 * caller frees the three. */
static cxla_status step_sizes(run *r, const step *sp, int64_t leaves,
                              int64_t (**out_opz)[CXLA_MAX_RANK], const int64_t ***out_ops,
                              int64_t (**out_res)[CXLA_MAX_RANK]) {
    const cxla_instr *in = sp->instr;
    int64_t n = in->operand_count;
    *out_opz = malloc((size_t)(n ? n : 1) * sizeof(**out_opz));
    *out_ops = malloc((size_t)(n ? n : 1) * sizeof(**out_ops));
    *out_res = malloc((size_t)(leaves ? leaves : 1) * sizeof(**out_res));
    if (!*out_opz || !*out_ops || !*out_res)
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    for (int64_t k = 0; k < n; k++) {
        operand_sizes(r, &in->operands[k]->shape, sp->in[k], (*out_opz)[k]);
        (*out_ops)[k] = (*out_opz)[k];
    }
    return NULL;
}

static cxla_status run_sized_at(run *r, const step *sp, const int64_t *const *ops, int64_t *resz);

static cxla_status run_sized(run *r, const step *sp) {
    const cxla_instr *in = sp->instr;
    int64_t n = in->operand_count,
            leaves = in->shape.type == CXLA_TUPLE ? in->shape.tuple_count : 1;
    if (n != sp->in_count || sp->out_count < leaves)
        return exec_error(in, CXLA_STATUS_INTERNAL, "a sized reduce with odd operands");
    int64_t(*opz)[CXLA_MAX_RANK] = NULL, (*res)[CXLA_MAX_RANK] = NULL;
    const int64_t **ops = NULL;
    cxla_status s = step_sizes(r, sp, 1, &opz, &ops, &res);
    if (!s) s = run_sized_at(r, sp, ops, res[0]);
    free(opz);
    free(ops);
    free(res);
    return s;
}

static cxla_status run_sized_at(run *r, const step *sp, const int64_t *const *ops, int64_t *resz) {
    const cxla_instr *in = sp->instr;
    int64_t n = in->operand_count,
            leaves = in->shape.type == CXLA_TUPLE ? in->shape.tuple_count : 1;
    int64_t sizes[2 * CXLA_MAX_RANK]; /* a scatter's operand and updates, or two ranks */
    bool handler = false;
    CXLA_RETURN_IF_ERROR(cpu_dyn_sized_sizes(in, ops, sizes, resz, &handler));
    if (handler) return run_handler(r, sp);
    for (int64_t k = 0; k < n; k++) r->ins[k] = r->ptr[sp->in[k]];
    r->ins[n] = sizes;
    for (int64_t k = 0; k < sp->out_count; k++) r->outs[k] = r->ptr[sp->out[k]];
    if (!cpu_pool_run_kernel(r->p->pool, sp->fn, &sp->info, r->outs, r->ins, r->cancel))
        return cancelled_at(r, sp);
    for (int64_t e = 0; e < leaves; e++) {
        const cxla_shape *ys = in->shape.type == CXLA_TUPLE ? &in->shape.elements[e] : &in->shape;
        size_t bytes = r->p->values[sp->out[e]].size;
        int64_t count = 1;
        for (int64_t d = 0; d < ys->rank; d++) count *= ys->dims[d];
        size_t elem = count > 0 ? bytes / (size_t)count : 0;
        if (elem) pad_array(r->ptr[sp->out[e]], ys, resz, elem, NULL);
        int64_t *z = sizes_of(r, sp->out[e]);
        for (int64_t d = 0; z && d < ys->rank; d++) z[d] = resz[d];
    }
    return NULL;
}

static cxla_status run_bounds_at(run *r, const step *sp, int64_t (*opz)[CXLA_MAX_RANK],
                                 const int64_t *const *ops, int64_t (*resz)[CXLA_MAX_RANK],
                                 int64_t **outs);

static cxla_status run_bounds(run *r, const step *sp) {
    const cxla_instr *in = sp->instr;
    if (sp->bounds == B_SIZED) return run_sized(r, sp);
    int64_t n = in->operand_count,
            leaves = in->shape.type == CXLA_TUPLE ? in->shape.tuple_count : 1;
    if (n != sp->in_count)
        return exec_error(in, CXLA_STATUS_INTERNAL, "a kernel at the bounds with odd operands");
    /* Sizes in arrays sized from the instruction (any number of operands and leaves). */
    int64_t(*opz)[CXLA_MAX_RANK] = NULL, (*resz)[CXLA_MAX_RANK] = NULL;
    const int64_t **ops = NULL;
    int64_t **outs = malloc((size_t)(leaves ? leaves : 1) * sizeof(*outs));
    cxla_status s = outs ? step_sizes(r, sp, leaves, &opz, &ops, &resz)
                         : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    for (int64_t e = 0; !s && e < leaves; e++) outs[e] = resz[e];
    if (!s) s = run_bounds_at(r, sp, opz, ops, resz, outs);
    free(opz);
    free(ops);
    free(resz);
    free(outs);
    return s;
}

static cxla_status run_bounds_at(run *r, const step *sp, int64_t (*opz)[CXLA_MAX_RANK],
                                 const int64_t *const *ops, int64_t (*resz)[CXLA_MAX_RANK],
                                 int64_t **outs) {
    const cxla_instr *in = sp->instr;
    int64_t n = in->operand_count,
            leaves = in->shape.type == CXLA_TUPLE ? in->shape.tuple_count : 1;
    int64_t ix = sp->bounds == B_INDEXED ? cpu_dyn_lib_indices(in) : -1;
    if (sp->bounds == B_SORT || sp->bounds == B_INDEXED || sp->bounds == B_INFERRED) {
        bool handler = false; /* cpu_dynamic_lib.c */
        CXLA_RETURN_IF_ERROR(cpu_dyn_lib_prepare(in, ops, ix >= 0 ? r->ptr[sp->in[ix]] : NULL,
                                                 ix >= 0 ? r->ptr[sp->out[sp->mask]] : NULL, outs,
                                                 &handler));
        if (handler) return run_handler(r, sp);
    } else if (sp->bounds == B_WINDOW) {
        bool handler = false; /* cpu_dynwin.c */
        cpu_dynwin_fill_sizes(in, ops, outs, &handler);
        if (handler) return run_handler(r, sp);
    } else {
        CXLA_RETURN_IF_ERROR(exec_dynamic_sizes(in, ops, outs));
    }
    for (int64_t k = 0; k < sp->in_count; k++) r->ins[k] = r->ptr[sp->in[k]];
    for (int64_t k = 0; k < sp->out_count; k++) r->outs[k] = r->ptr[sp->out[k]];
    if (ix >= 0) r->ins[ix] = r->ptr[sp->out[sp->mask]];
    if (sp->bounds == B_SORT) r->ins[sp->in_count] = resz[0];
    if (sp->bounds == B_REDUCE) {
        const cxla_shape *xs = &in->operands[0]->shape;
        bool padded = false;
        for (int64_t d = 0; d < xs->rank; d++) padded = padded || opz[0][d] < xs->dims[d];
        if (padded) {
            if (!cpu_bounds_identity(in, r->ins[1]))
                return cpu_dyn_reduce_ok(in) ? run_move(r, sp) : run_handler(r, sp);
            void *mask = r->ptr[sp->out[sp->mask]];
            size_t bytes = r->p->values[sp->out[sp->mask]].size;
            if (bytes) memcpy(mask, r->ins[0], bytes);
            pad_array(mask, xs, opz[0], sp->elem, r->ins[1]);
            r->ins[0] = mask;
        }
    }
    if (sp->bounds == B_WINDOW) {
        /* Each input's padding filled with its init value: the interpreter folds the init
         * value wherever a window leaves the cut input (cpu_dynwin_fill_ok). */
        int64_t inputs = n / 2;
        for (int64_t k = 0; k < inputs; k++) {
            const cxla_shape *xs = &in->operands[k]->shape;
            bool padded = false;
            int64_t count = 1;
            for (int64_t d = 0; d < xs->rank; d++) {
                padded = padded || opz[k][d] < xs->dims[d];
                count *= xs->dims[d];
            }
            if (!padded || count == 0) continue;
            void *mask = r->ptr[sp->out[sp->mask + k]];
            size_t bytes = r->p->values[sp->out[sp->mask + k]].size;
            memcpy(mask, r->ins[k], bytes);
            pad_array(mask, xs, opz[k], bytes / (size_t)count, r->ins[inputs + k]);
            r->ins[k] = mask;
        }
    }
    if (sp->bounds == B_DOT) {
        /* Zeros in the padding of both operands: the contracting dimensions then add
         * nothing; the result's rows and columns over the padding are zeroed below. A
         * static batch or contracting dimension lined up with a dynamic one is cut to its
         * size first, as the interpreter cuts it (exec_dynamic_sizes checked that two
         * dynamic ones agree): what lies past it is zeroed too, or an inf there would
         * meet the other side's zeros as NaN. */
        static const cxla_attr_id pairs[2][2] = {
            {CXLA_ATTR_LHS_BATCH_DIMS, CXLA_ATTR_RHS_BATCH_DIMS},
            {CXLA_ATTR_LHS_CONTRACTING_DIMS, CXLA_ATTR_RHS_CONTRACTING_DIMS}};
        for (int p = 0; p < 2; p++) {
            int64_t nl = 0, nr = 0;
            const int64_t *l = cxla_instr_ints(in, pairs[p][0], &nl);
            const int64_t *rr = cxla_instr_ints(in, pairs[p][1], &nr);
            for (int64_t i = 0; i < nl && i < nr; i++) {
                if (l[i] < 0 || l[i] >= in->operands[0]->shape.rank || rr[i] < 0 ||
                    rr[i] >= in->operands[1]->shape.rank)
                    continue;
                int64_t v = opz[0][l[i]] < opz[1][rr[i]] ? opz[0][l[i]] : opz[1][rr[i]];
                opz[0][l[i]] = opz[1][rr[i]] = v;
            }
        }
        for (int64_t k = 0; k < 2; k++) {
            const cxla_shape *xs = &in->operands[k]->shape;
            bool padded = false;
            for (int64_t d = 0; d < xs->rank; d++) padded = padded || opz[k][d] < xs->dims[d];
            if (!padded) continue;
            int64_t count = 1;
            for (int64_t d = 0; d < xs->rank; d++) count *= xs->dims[d];
            void *mask = r->ptr[sp->out[sp->mask + k]];
            size_t bytes = r->p->values[sp->out[sp->mask + k]].size;
            if (bytes) memcpy(mask, r->ins[k], bytes);
            if (count > 0) pad_array(mask, xs, opz[k], bytes / (size_t)count, NULL);
            r->ins[k] = mask;
        }
    }
    if (!cpu_pool_run_kernel(r->p->pool, sp->fn, &sp->info, r->outs, r->ins, r->cancel))
        return cancelled_at(r, sp);
    for (int64_t e = 0; e < leaves; e++) {
        const cxla_shape *ys = in->shape.type == CXLA_TUPLE ? &in->shape.elements[e] : &in->shape;
        size_t elem = 0, bytes = r->p->values[sp->out[e]].size;
        int64_t count = 1;
        for (int64_t d = 0; d < ys->rank; d++) count *= ys->dims[d];
        elem = count > 0 ? bytes / (size_t)count : 0;
        if (elem) pad_array(r->ptr[sp->out[e]], ys, resz[e], elem, NULL);
        int64_t *z = sizes_of(r, sp->out[e]);
        for (int64_t d = 0; z && d < ys->rank; d++) z[d] = resz[e][d];
    }
    return NULL;
}

/* A move of elements by the run-time sizes, or a reduce over them (cpu_dynamic.c); the
 * interpreter's handler where that would report an error, so that the error is the
 * interpreter's. */
static cxla_status run_move(run *r, const step *sp) {
    const cxla_instr *in = sp->instr;
    int64_t n = in->operand_count;
    if (n != sp->in_count || sp->out_count < 1)
        return exec_error(in, CXLA_STATUS_INTERNAL, "a move step with odd operands");
    /* The operands' sizes and buffers, sized from the instruction (any rank, any number of
     * operands: cpu_dyn_move_ok). */
    size_t n1 = (size_t)(n ? n : 1);
    int64_t(*opz)[CXLA_MAX_RANK] = malloc(n1 * sizeof(*opz));
    const int64_t **ops = malloc(n1 * sizeof(*ops));
    const void **ins = malloc(n1 * sizeof(*ins));
    cxla_status s =
        opz && ops && ins ? NULL : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    for (int64_t k = 0; !s && k < n; k++) {
        operand_sizes(r, &in->operands[k]->shape, sp->in[k], opz[k]);
        ops[k] = opz[k];
        ins[k] = r->ptr[sp->in[k]];
    }
    if (!s) s = run_move_sized(r, sp, ops, ins);
    free(opz);
    free(ops);
    free(ins);
    return s;
}

static cxla_status run_move_sized(run *r, const step *sp, const int64_t *const *ops,
                                  const void *const *ins) {
    const cxla_instr *in = sp->instr;
    bool handler = false;
    if (in->opcode == CXLA_OP_REDUCE_WINDOW || in->opcode == CXLA_OP_SELECT_AND_SCATTER ||
        in->opcode == CXLA_OP_DOT) {
        int64_t resz[CXLA_MAX_RANK];
        CXLA_RETURN_IF_ERROR(cpu_dynwin_run(in, r->ptr[sp->out[0]], ins, ops, resz, &handler));
        if (handler) return run_handler(r, sp);
        int64_t *z = sizes_of(r, sp->out[0]);
        for (int64_t d = 0; z && d < in->shape.rank; d++) z[d] = resz[d];
        return NULL;
    }
    if (in->opcode == CXLA_OP_REDUCE) {
        int64_t resz[CXLA_MAX_RANK];
        CXLA_RETURN_IF_ERROR(cpu_dyn_reduce(in, r->ptr[sp->out[0]], ins, ops, resz, &handler));
        if (handler) return run_handler(r, sp);
        int64_t *z = sizes_of(r, sp->out[0]);
        for (int64_t d = 0; z && d < in->shape.rank; d++) z[d] = resz[d];
        return NULL;
    }
    cpu_dyn_desc m;
    cxla_status s = cpu_dyn_move_plan(in, ins, ops, &m, &handler);
    if (s || handler) {
        cpu_dyn_move_free(&m);
        return s ? s : run_handler(r, sp);
    }
    cpu_dyn_move(&m, r->ptr[sp->out[0]]);
    int64_t *z = sizes_of(r, sp->out[0]);
    for (int64_t d = 0; z && d < m.rank; d++) z[d] = m.sizes[d];
    cpu_dyn_move_free(&m);
    return NULL;
}

/* A step of static shapes that writes a class some other value of which is dynamic (a
 * while state, a set-dimension-size over its operand's buffer): the class is whole again. */
static void whole_sizes(run *r, const step *sp) {
    for (int64_t e = 0; e < sp->out_count; e++) {
        int64_t *z = sizes_of(r, sp->out[e]);
        const cxla_shape *s = r->p->values[sp->out[e]].shape;
        for (int64_t d = 0; z && d < s->rank; d++) z[d] = s->dims[d];
    }
}

static cxla_status run_seq(run *r, const seq *q);

static cxla_status run_step(run *r, const step *sp) {
    cpu_plan *p = r->p;
    switch (sp->kind) {
    case S_KERNEL:
    case S_CALL:
        if (sp->kind == S_KERNEL && sp->bounds != B_STATIC) return run_bounds(r, sp);
        if (p->dyn_off) whole_sizes(r, sp);
        for (int64_t k = 0; k < sp->in_count; k++) r->ins[k] = r->ptr[sp->in[k]];
        for (int64_t k = 0; k < sp->out_count; k++) r->outs[k] = r->ptr[sp->out[k]];
        if (sp->kind == S_CALL) return sp->call->fn(sp->call->state, r->outs, r->ins);
        if (sp->instr->opcode == CXLA_OP_RAGGED_DOT && sp->in_count == 3)
            CXLA_RETURN_IF_ERROR(cpu_emit_ragged_check(sp->instr, r->ins[2]));
        if (sp->direct) { /* one part, one chunk: what the pool would do, without it */
            sp->fn(r->outs, r->ins, 0, sp->info.range);
            return NULL;
        }
        if (!cpu_pool_run_kernel(p->pool, sp->fn, &sp->info, r->outs, r->ins, r->cancel))
            return cancelled_at(r, sp); /* stopped between two chunks of the kernel */
        return NULL;
    case S_SIZE: return run_size(r, sp);
    case S_COPY:
        for (int64_t k = 0; k < sp->in_count; k++) {
            size_t size = p->values[sp->out[k]].size;
            void *dst = r->ptr[sp->out[k]];
            const void *src = r->ptr[sp->in[k]];
            if (size && dst != src) memcpy(dst, src, size);
            int64_t *zd = sizes_of(r, sp->out[k]), *zs = sizes_of(r, sp->in[k]);
            const cxla_shape *ss = p->values[sp->in[k]].shape;
            for (int64_t d = 0; zd && d < ss->rank; d++) zd[d] = zs ? zs[d] : ss->dims[d];
        }
        return NULL;
    case S_DUS:
        if (p->dyn_off) whole_sizes(r, sp);
        for (int64_t k = 0; k < sp->in_count; k++) r->ins[k] = r->ptr[sp->in[k]];
        cpu_steps_dus(sp, r->ptr[sp->out[0]], r->ins);
        return NULL;
    case S_HANDLER: return run_handler(r, sp);
    case S_MOVE: return run_move(r, sp);
    case S_SVC:
        if (p->dyn_off) whole_sizes(r, sp);
        for (int64_t k = 0; k < sp->in_count; k++) r->ins[k] = r->ptr[sp->in[k]];
        for (int64_t k = 0; k < sp->out_count; k++) r->outs[k] = r->ptr[sp->out[k]];
        r->svc.kernel = sp->fn;
        /* Its error names the user's instruction, as run_handler's do. */
        return interp_rename_error(sp->svc(&r->svc, sp->instr, r->outs, r->ins), sp->instr,
                                   cpu_origins_name(r->p->origins, sp->instr));
    case S_SEQ: {
        cxla_status s = run_seq(r, &sp->sub[0]);
        /* "in CALLER: " before a callee's error, unless the error already names the caller:
         * the async-desugar pass's wrapped operation has its start as origin, and the
         * interpreter, running the sugar itself, names the start alone. */
        const char *name = cpu_origins_name(r->p->origins, sp->instr);
        size_t len = strlen(name);
        const char *msg = s ? cxla_status_message(s) : "";
        if (s && (strncmp(msg, name, len) != 0 || msg[len] != ' '))
            s = cxla_status_annotate(s, "in %s", name);
        return s;
    }
    case S_COND: {
        const cxla_shape *is = &p->values[sp->in[0]].shape[0];
        const void *at = r->ptr[sp->in[0]];
        int64_t n = sp->sub_count, index;
        if (is->type == CXLA_PRED) {
            index = *(const uint8_t *)at ? 0 : 1;
        } else {
            index = cxla_load_s64(is->type, at);
            if (index < 0 || index >= n) index = n - 1; /* out of range: the last branch */
        }
        cxla_status s = run_seq(r, &sp->sub[index]);
        return s ? cxla_status_annotate(s, "in branch %" PRId64 " of %s", index, sp->instr->name)
                 : NULL;
    }
    case S_WHILE:
        if (sp->fused && r->fused_loops) {
            cpu_loop_env env = {.ptr = r->ptr,
                                .pool = p->pool,
                                .cancel = r->cancel,
                                .check = r->cancel ? check_cancel_cb : NULL,
                                .ctx = r};
            bool oom = false;
            r->back_edges = 0;
            const step *at = cpu_loop_run(sp->fused, &env, &oom);
            if (oom) return OOM(); /* run_seq names the loop */
            if (!at) return NULL;
            return loop_cancelled(r, sp, at, r->back_edges);
        }
        for (int64_t iteration = 1;; iteration++) {
            cxla_status s = run_seq(r, &sp->sub[0]);
            if (s)
                return cxla_status_annotate(s, "in the condition of %s (iteration %" PRId64 ")",
                                            sp->instr->name, iteration);
            if (!*(const uint8_t *)r->ptr[sp->pred]) return NULL;
            s = run_seq(r, &sp->sub[1]);
            if (s)
                return cxla_status_annotate(s, "in the body of %s (iteration %" PRId64 ")",
                                            sp->instr->name, iteration);
            if (check_cancel(r)) return loop_cancelled(r, sp, sp, iteration); /* the back-edge */
        }
    }
    return NULL;
}

/* Whether every array of |ids| is finite (--check-finite). */
static bool leaves_finite(run *r, const int64_t *ids, int64_t n) {
    for (int64_t k = 0; k < n; k++)
        if (!cpu_svc_all_finite(r->p->values[ids[k]].shape, r->ptr[ids[k]])) return false;
    return true;
}

/* --check-finite, as the interpreter's driver: a step of an instruction that computes
 * elements and produces a NaN or Inf from finite operands is reported once (operands are
 * tested before the step, since an in-place step overwrites them). */
static bool finite_checked(const step *sp) {
    if (sp->kind != S_KERNEL && sp->kind != S_CALL && sp->kind != S_HANDLER && sp->kind != S_SVC &&
        sp->kind != S_DUS && sp->kind != S_MOVE)
        return false;
    const cxla_instr *in = sp->instr;
    return in->operand_count > 0 &&
           !(cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_MOVES_ELEMENTS);
}

/* Whether every array of |lit| is finite. */
static bool literal_finite(const cxla_literal *lit) {
    if (lit->shape->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < lit->tuple_count; i++)
            if (!literal_finite(lit->elements[i])) return false;
        return true;
    }
    return !cxla_type_is_array(lit->shape->type) || !lit->data ||
           cpu_svc_all_finite(lit->shape, lit->data);
}

/* --check-finite on a fusion: its operands as they were before the step, where the step
 * writes over them (an in-place result); the others are read where they lie. */
typedef struct saved_operands {
    int64_t count;
    void **copy; /* by operand leaf: a copy, or NULL */
} saved_operands;

static bool overlaps(const run *r, int64_t a, int64_t b) {
    const char *pa = r->ptr[a], *pb = r->ptr[b];
    size_t na = r->p->values[a].size, nb = r->p->values[b].size;
    return pa && pb && na && nb && pa < pb + nb && pb < pa + na;
}

static void free_saved(saved_operands *sv) {
    for (int64_t k = 0; k < sv->count; k++) free(sv->copy[k]);
    free(sv->copy);
}

static void save_operands(const run *r, const step *sp, saved_operands *sv) {
    *sv = (saved_operands){0};
    sv->copy = calloc((size_t)(sp->in_count ? sp->in_count : 1), sizeof(void *));
    if (!sv->copy) return; /* then nothing is blamed inside the fusion */
    sv->count = sp->in_count;
    for (int64_t k = 0; k < sp->in_count; k++) {
        bool written = false;
        for (int64_t j = 0; j < sp->out_count && !written; j++)
            written = overlaps(r, sp->in[k], sp->out[j]);
        size_t n = r->p->values[sp->in[k]].size;
        if (!written) continue;
        sv->copy[k] = malloc(n);
        if (!sv->copy[k]) { /* memory short: nothing is blamed inside the fusion */
            free_saved(sv);
            *sv = (saved_operands){0};
            return;
        }
        memcpy(sv->copy[k], r->ptr[sp->in[k]], n);
    }
}

/* The instruction of fusion step |sp| that first makes a NaN or Inf from finite operands,
 * found by running its fused computation on the interpreter's handlers over the step's
 * operands (as they were before it: |sv|). NULL when none does there (the kernel's fast
 * math differs from the interpreter's in the last bits), or when it cannot tell (a plan of
 * dynamic shapes, memory short, a handler's error): the fusion is then named as a whole. */
static const cxla_instr *blame_fused(run *r, const step *sp, const saved_operands *sv) {
    const cxla_instr *fusion = sp->instr;
    const cxla_computation *fc = cxla_instr_called(fusion, CXLA_ATTR_CALLS);
    if (!fc || r->p->dyn_off || !sv->copy || sv->count != sp->in_count) return NULL;
    if (!r->ictx_ready) {
        cxla_status s = interp_ctx_init(&r->ictx, r->p->module, r->options);
        if (s) {
            cxla_status_free(s);
            return NULL;
        }
        r->ictx_ready = true;
        r->ictx.reported_non_finite = r->reported;
    }
    /* The interpreter's own report stays silent (a reducer run by its driver): this
     * search reports once, below. */
    bool quiet = r->ictx.reported_non_finite;
    r->ictx.reported_non_finite = true;
    /* The operands' leaves, the saved copies in place of what the step overwrote. */
    void **ptr = malloc((size_t)(sp->in_count ? sp->in_count : 1) * sizeof(void *));
    int64_t *ids = malloc((size_t)(sp->in_count ? sp->in_count : 1) * sizeof(int64_t));
    int64_t n = fusion->operand_count, m = fc->instr_count, next = 0;
    cxla_literal **args = calloc((size_t)(n ? n : 1), sizeof(*args));
    cxla_literal **values = calloc((size_t)(m ? m : 1), sizeof(*values));
    int64_t *slot = malloc((size_t)(r->p->id_count ? r->p->id_count : 1) * sizeof(int64_t));
    for (int64_t i = 0; slot && i < r->p->id_count; i++) slot[i] = -1;
    const cxla_literal **ops = NULL;
    const cxla_instr *culprit = NULL;
    cxla_status s = ptr && ids && args && values && slot ? NULL : OOM();
    for (int64_t k = 0; k < sp->in_count && !s; k++) {
        ptr[k] = sv->copy[k] ? sv->copy[k] : r->ptr[sp->in[k]];
        ids[k] = k;
    }
    for (int64_t k = 0; k < n && !s; k++)
        s = make_view(r, &fusion->operands[k]->shape, ptr, ids, &next, &args[k]);
    int64_t most = 1;
    for (int64_t i = 0; i < m; i++)
        if (fc->instrs[i]->operand_count > most) most = fc->instrs[i]->operand_count;
    if (!s) ops = calloc((size_t)most, sizeof(*ops));
    if (!s && !ops) s = OOM();
    bool give_up = false; /* an operand it cannot find, an opcode without a handler */
    for (int64_t i = 0; i < m && !s && !culprit && !give_up; i++) {
        const cxla_instr *in = fc->instrs[i];
        if (in->id < 0 || in->id >= r->p->id_count) break;
        slot[in->id] = i;
        if (in->opcode == CXLA_OP_PARAMETER) continue; /* args[parameter_number] */
        bool finite = true;
        for (int64_t k = 0; k < in->operand_count && !give_up; k++) {
            const cxla_instr *o = in->operands[k];
            int64_t j = o->id >= 0 && o->id < r->p->id_count ? slot[o->id] : -1;
            if (o->parent != fc || j < 0 || j >= i || fc->instrs[j] != o)
                ops[k] = NULL;
            else if (o->opcode == CXLA_OP_PARAMETER)
                ops[k] = o->parameter_number >= 0 && o->parameter_number < n
                             ? args[o->parameter_number]
                             : NULL;
            else
                ops[k] = values[j];
            give_up = !ops[k];
            finite = finite && !give_up && literal_finite(ops[k]);
        }
        interp_op_fn fn = interp_handler(in->opcode);
        give_up = give_up || !fn;
        if (!give_up) s = fn(&r->ictx, in, (const cxla_literal *const *)ops, &values[i]);
        bool computes = in->operand_count > 0 &&
                        !(cxla_opcode_get_info(in->opcode)->flags & CXLA_OPF_MOVES_ELEMENTS);
        if (!s && computes && finite && !literal_finite(values[i])) culprit = in;
    }
    cxla_status_free(s);
    for (int64_t i = 0; values && i < m; i++) cxla_literal_free(values[i]);
    for (int64_t k = 0; args && k < n; k++) free_view(args[k]);
    free(values);
    free(args);
    free(ops);
    free(slot);
    free(ptr);
    free(ids);
    r->ictx.reported_non_finite = quiet;
    return culprit;
}

/* --check-finite's report of step |sp| (its operands as they were: |sv| for a fusion):
 * the interpreter's line, naming the user's instruction; inside a fusion the instruction
 * the interpreter finds, else the fusion by the instructions it holds. */
static void report_non_finite(run *r, const step *sp, const saved_operands *sv) {
    const cxla_instr *culprit = sp->instr->opcode == CXLA_OP_FUSION ? blame_fused(r, sp, sv) : NULL;
    char *d = culprit ? cpu_origins_describe(r->p->origins, culprit, sp->instr)
                      : cpu_origins_describe(r->p->origins, sp->instr, NULL);
    /* A kernel computes a recognized reducer inline: the reducer's root made the value
     * (the interpreter names it so too). */
    const cxla_instr *named = culprit ? culprit : sp->instr;
    const cxla_computation *rc = cxla_instr_called(named, CXLA_ATTR_TO_APPLY);
    if (named->opcode != CXLA_OP_FUSION && interp_match_reducer(rc))
        fprintf(stderr,
                "cxla: %s (%s, computation %s, line %" PRId64
                ", the to_apply of %s) is the first to produce a NaN or Inf from finite "
                "operands\n",
                rc->root->name, cxla_opcode_name(rc->root->opcode), rc->name, rc->root->line,
                d ? d : named->name);
    else
        fprintf(stderr, "cxla: %s is the first to produce a NaN or Inf from finite operands\n",
                d ? d : sp->instr->name);
    free(d);
    r->reported = true;
    r->ictx.reported_non_finite = true; /* once per run, the handlers' driver included */
}

/* Out of memory in a step names the instruction, as the interpreter's driver does (unless
 * the message names one already: an instruction inside a called sequence's step). */
static cxla_status name_oom(const run *r, const step *sp, cxla_status s) {
    if (cxla_status_code_of(s) != CXLA_STATUS_RESOURCE_EXHAUSTED) return s;
    const char *msg = cxla_status_message(s);
    if (strstr(msg, " (") && strstr(msg, ", line ")) return s;
    char what[1024];
    describe_step(r, sp, what, sizeof(what));
    return cxla_status_annotate(s, "%s", what);
}

static cxla_status run_seq(run *r, const seq *q) {
    for (int64_t i = 0; i < q->count; i++) {
        const step *sp = &q->steps[i];
        /* Not before a copy inside the run: a loop's state or a branch's result copied
         * under the while's or conditional's name would be named instead of the
         * instruction the run is at (the next step, or the back-edge, checks). The run's
         * first step is checked whatever it is: a request made before the run stops it. */
        bool first = q == &r->p->entry && i == 0;
        if ((sp->kind != S_COPY || first) && check_cancel(r)) return cancelled_at(r, sp);
        bool check = r->check_finite && !r->reported && finite_checked(sp) &&
                     leaves_finite(r, sp->in, sp->in_count);
        static const char *const kinds[] = {
            [S_KERNEL] = "kernel", [S_CALL] = "call",        [S_COPY] = "copy",
            [S_DUS] = "dus",       [S_HANDLER] = "handler",  [S_SVC] = "service",
            [S_SEQ] = "call-seq",  [S_COND] = "conditional", [S_WHILE] = "while",
            [S_SIZE] = "size",     [S_MOVE] = "move"};
        double t0 = r->step_times ? now_us() : 0;
        saved_operands sv = {0};
        if (check && sp->instr->opcode == CXLA_OP_FUSION) save_operands(r, sp, &sv);
        cxla_status s = run_step(r, sp);
        if (s) {
            free_saved(&sv);
            return name_oom(r, sp, s);
        }
        if (r->step_times && sp->kind == S_WHILE && sp->fused && r->fused_loops)
            report_time("fused-loop", sp->instr->name, cxla_opcode_name(sp->instr->opcode),
                        now_us() - t0);
        else if (r->step_times && sp->kind != S_SEQ && sp->kind != S_COND && sp->kind != S_WHILE)
            report_time(sp->kind == S_CALL && sp->call->what ? sp->call->what : kinds[sp->kind],
                        sp->instr->name, cxla_opcode_name(sp->instr->opcode), now_us() - t0);
        /* A kernel at the bounds: its results, not its scratch copies (whose padding holds
         * a reduce's init value, -inf for a maximum). */
        int64_t outs =
            sp->kind == S_KERNEL && sp->bounds != B_STATIC
                ? (sp->instr->shape.type == CXLA_TUPLE ? sp->instr->shape.tuple_count : 1)
                : sp->out_count;
        /* A handler whose computation the interpreter's driver ran may have reported. */
        if (r->ictx_ready && r->ictx.reported_non_finite) r->reported = true;
        if (check && !r->reported && !leaves_finite(r, sp->out, outs))
            report_non_finite(r, sp, &sv);
        free_saved(&sv);
    }
    return NULL;
}

/* The array leaves of |lit| depth-first into ptrs[*n ...] (tokens take a slot). */
static void flatten(const cxla_literal *lit, void **ptrs, int64_t *n, int64_t cap) {
    if (lit->shape->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < lit->tuple_count; i++) flatten(lit->elements[i], ptrs, n, cap);
        return;
    }
    if (*n < cap) ptrs[*n] = lit->data;
    (*n)++;
}

/* Where piece |c| (value.sub_of) lies: inside its whole, which may be a piece too. */
static void *piece_at(const run *r, int64_t c, int depth) {
    const value *x = &r->p->values[c];
    if (x->sub_of < 0 || depth > MAX_DEPTH) return r->ptr[c];
    return (char *)piece_at(r, x->sub_of, depth + 1) + x->sub_off;
}

/* The array leaves (and tokens) of |lit| depth-first into leaves[*n ...]. */
static void flatten_leaves(cxla_literal *lit, cxla_literal **leaves, int64_t *n, int64_t cap) {
    if (lit->shape->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < lit->tuple_count; i++)
            flatten_leaves(lit->elements[i], leaves, n, cap);
        return;
    }
    if (*n < cap) leaves[*n] = lit;
    (*n)++;
}

static bool needs_relayout(const cxla_literal *lit) {
    if (lit->shape->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < lit->tuple_count; i++)
            if (needs_relayout(lit->elements[i])) return true;
        return false;
    }
    return cxla_type_is_array(lit->shape->type) &&
           (!cxla_layout_is_default(lit->shape) || lit->dyn_sizes);
}

/* Whether argument |lit| of the dynamic array parameter shape |want| lies at its bounds,
 * row-major, with sizes within them: the form CPU_ARG_IN_PLACE uses where it lies (a
 * buffer of cxla_executable_run_buffers is a view of that form). */
static bool at_bounds(const cxla_shape *want, const cxla_literal *lit) {
    if (!bindable(want, lit)) return false;
    for (int64_t d = 0; d < want->rank; d++)
        if (lit->shape->dims[d] != want->dims[d]) return false;
    return true;
}

bool cpu_plan_can_donate(const cpu_plan *p, const exec_run_options *options,
                         const cxla_literal *const *args, int64_t arg_count) {
    if (!p || !p->donating || !options || !options->donated || !options->in_place_arg ||
        arg_count != p->module->entry->param_count)
        return false;
    for (int64_t a = 0; a < p->alias_count; a++) {
        const cpu_io_alias *al = &p->aliases[a];
        if (!options->donated[al->arg]) return false;
        if (p->arg_copy && p->arg_copy[al->param] == CPU_ARG_IN_PLACE) {
            if (!at_bounds(&p->module->entry->params[al->param]->shape, args[al->param]))
                return false;
        } else if (needs_relayout(args[al->param])) {
            return false;
        }
    }
    return true;
}

/* The result leaves that no step wrote in place (parameters passed through, constants,
 * repeated values) are copied into the result after the steps: ResNet-50 returns its
 * 100 MB of weights so. The copy runs on the pool as a kernel over chunks of COPY_CHUNK
 * bytes (fresh result pages are faulted in by both threads). in[0] is the plan below. */
enum { COPY_CHUNK = 1 << 20 };

typedef struct copy_plan {
    int64_t count;
    char **dst;
    const char **src;
    size_t *size;
    int64_t *first; /* the first chunk of each copy; first[count]: all chunks */
} copy_plan;

static void copy_chunks(void *const *out, const void *const *in, int64_t begin, int64_t end) {
    (void)out;
    const copy_plan *cp = in[0];
    int64_t k = 0;
    for (int64_t c = begin; c < end && c < cp->first[cp->count]; c++) {
        while (cp->first[k + 1] <= c) k++;
        size_t off = (size_t)(c - cp->first[k]) * COPY_CHUNK;
        size_t n = cp->size[k] - off < COPY_CHUNK ? cp->size[k] - off : COPY_CHUNK;
        memcpy(cp->dst[k] + off, cp->src[k] + off, n);
    }
}

/* Copies the result leaves |p| lists from the run's buffers into |resp|. */
static cxla_status copy_results(run *r, void **resp) {
    cpu_plan *p = r->p;
    int64_t n = p->root_count;
    copy_plan cp = {0};
    cp.dst = calloc((size_t)(n ? n : 1), sizeof(*cp.dst));
    cp.src = calloc((size_t)(n ? n : 1), sizeof(*cp.src));
    cp.size = calloc((size_t)(n ? n : 1), sizeof(*cp.size));
    cp.first = calloc((size_t)n + 1, sizeof(*cp.first));
    cxla_status s = cp.dst && cp.src && cp.size && cp.first ? NULL : OOM();
    double bytes = 0;
    for (int64_t k = 0; k < n && !s; k++) {
        const value *x = &p->values[p->root[k]];
        if ((x->kind == V_ARENA && x->result == k) || x->kind == V_TOKEN) continue;
        if (p->donating && x->kind == V_ARG && x->writable && x->alias_of == k && r->options &&
            r->options->in_place_arg) {
            r->options->in_place_arg[k] = x->arg; /* already in the donated argument */
            continue;
        }
        if (!x->size) continue;
        cp.dst[cp.count] = resp[k];
        cp.src[cp.count] = r->ptr[p->root[k]];
        cp.size[cp.count] = x->size;
        cp.first[cp.count + 1] =
            cp.first[cp.count] + (int64_t)((x->size + COPY_CHUNK - 1) / COPY_CHUNK);
        bytes += 2.0 * (double)x->size;
        cp.count++;
    }
    if (!s && cp.count > 0) {
        const void *in[1] = {&cp};
        cpu_kernel_info info = {.range = cp.first[cp.count], .cost = bytes};
        cpu_pool_run_kernel(p->pool, copy_chunks, &info, NULL, in, NULL);
    }
    free(cp.dst);
    free(cp.src);
    free(cp.size);
    free(cp.first);
    return s;
}

/* Whether every array leaf of |s| is row-major with no padding. */
static bool layout_is_row_major(const cxla_shape *s) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            if (!layout_is_row_major(&s->elements[i])) return false;
        return true;
    }
    return !cxla_type_is_array(s->type) || cxla_layout_is_default(s);
}

/* Whether result leaf |k| (of shape |leaf|) is computed straight in the caller's memory
 * (exec_run_options.result_data): a static array offered with room for it, in a plan of
 * static shapes whose entry result is row-major throughout (otherwise the result is
 * relaid or given sizes at the end, which needs the whole of it). */
static bool direct_leaf(const cpu_plan *p, const exec_run_options *o, bool row_major, int64_t k,
                        const cxla_shape *leaf) {
    size_t need = 0;
    return o && o->result_data && o->result_written && o->result_size && row_major && !p->dyn_off &&
           k < p->root_count && o->result_data[k] && cxla_type_is_array(leaf->type) &&
           cxla_shape_is_static(leaf) && !cxla_shape_byte_size(leaf, &need) &&
           o->result_size[k] >= need;
}

/* A leaf of the returned result that holds no data: its elements are in the caller's
 * memory. Made by hand (exec.h: data NULL, size 0), row-major as the others. */
static cxla_status placeholder(const cxla_shape *shape, cxla_literal **out) {
    cxla_literal *v = calloc(1, sizeof(*v));
    if (!v) return OOM();
    int64_t m2m[CXLA_MAX_RANK];
    cxla_layout layout = {.minor_to_major = m2m};
    cxla_shape with = *shape;
    for (int64_t i = 0; i < shape->rank; i++) m2m[i] = shape->rank - 1 - i;
    with.layout = &layout;
    cxla_status s = cxla_shape_clone(&with, &v->shape);
    if (!s) s = cxla_shape_element_count(shape, &v->count);
    if (s) {
        cxla_shape_free(v->shape);
        free(v);
        return s;
    }
    *out = v;
    return NULL;
}

/* The result the run returns, of |shape|, with the data of each leaf k in resp[k]: the
 * caller's memory for the leaves direct_leaf takes (a placeholder in the literal), else a
 * new array of the literal. */
static cxla_status make_result(const cpu_plan *p, const exec_run_options *o, bool row_major,
                               const cxla_shape *shape, void **resp, bool *direct, int64_t *k,
                               cxla_literal **out) {
    if (shape->type != CXLA_TUPLE) {
        int64_t i = (*k)++;
        if (direct_leaf(p, o, row_major, i, shape)) {
            resp[i] = o->result_data[i];
            direct[i] = true;
            return placeholder(shape, out);
        }
        CXLA_RETURN_IF_ERROR(interp_zeros(shape, out));
        if (i < p->root_count) resp[i] = cxla_type_is_array(shape->type) ? (*out)->data : NULL;
        return NULL;
    }
    int64_t n = shape->tuple_count;
    cxla_literal **elements = calloc((size_t)(n ? n : 1), sizeof(*elements));
    if (!elements) return OOM();
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++)
        s = make_result(p, o, row_major, &shape->elements[i], resp, direct, k, &elements[i]);
    if (!s) s = cxla_literal_create_tuple(elements, n, out);
    if (s)
        for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
    free(elements);
    return s;
}

/* The step of |q| (at any depth) whose result has the largest arena buffer, above *size. */
static const step *largest_buffer(const cpu_plan *p, const seq *q, size_t *size, int depth) {
    const step *best = NULL;
    for (int64_t i = 0; i < q->count && depth < MAX_DEPTH; i++) {
        const step *sp = &q->steps[i];
        for (int64_t k = 0; k < sp->out_count; k++) {
            const value *x = &p->values[p->values[sp->out[k]].parent];
            if (x->kind == V_ARENA && x->result < 0 && x->size > *size) {
                *size = x->size;
                best = sp;
            }
        }
        for (int64_t k = 0; k < sp->sub_count; k++) {
            const step *got = largest_buffer(p, &sp->sub[k], size, depth + 1);
            if (got) best = got;
        }
    }
    return best;
}

/* The arena is one allocation for the whole run: its message says what it holds, its
 * size, and the instruction of its largest buffer, the one to look at first. */
static cxla_status arena_oom(const run *r) {
    const cpu_plan *p = r->p;
    size_t largest = 0;
    const step *sp = largest_buffer(p, &p->entry, &largest, 0);
    char what[1024], largest_text[1200] = "";
    if (sp) {
        describe_step(r, sp, what, sizeof(what));
        snprintf(largest_text, sizeof(largest_text), "; its largest buffer (%zu bytes) holds %s",
                 largest, what);
    }
    return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory allocating the arena of module '%s' (%zu bytes: the values "
                      "of its instructions other than arguments, constants and results, in "
                      "buffers shared as their lifetimes allow)%s",
                      p->module->name, p->arena_size, largest_text);
}

/* The leaves of |s| (arrays and tokens, as make_result counts them). */
static int64_t shape_leaves(const cxla_shape *s, int depth) {
    if (s->type != CXLA_TUPLE || depth > MAX_DEPTH) return 1;
    int64_t n = 0;
    for (int64_t i = 0; i < s->tuple_count; i++) n += shape_leaves(&s->elements[i], depth + 1);
    return n;
}

/* The instruction of |in|'s value (under tuples) whose leaf is number *k of it. */
static const cxla_instr *leaf_instr(const cxla_instr *in, int64_t *k, int depth) {
    if (in->opcode == CXLA_OP_TUPLE && depth < MAX_DEPTH) {
        for (int64_t i = 0; i < in->operand_count; i++) {
            const cxla_instr *got = leaf_instr(in->operands[i], k, depth + 1);
            if (got) return got;
        }
        return NULL;
    }
    int64_t leaves = shape_leaves(&in->shape, 0);
    if (*k < leaves) return in;
    *k -= leaves;
    return NULL;
}

/* Result leaf |k| (|leaf|) when the module declares it static and its value is dynamic (a
 * tuple or get-tuple-element root over a bounded value, which shape inference lets
 * through): the leaf takes the dynamic dimensions of the values its class holds, as the
 * interpreter returns the value itself and XLA's DynamicPadder gives such a result its
 * dynamic form (SliceToDynamic at the entry's root). Sets *|changed| when it does. */
static cxla_status leaf_dynamic_shape(const cpu_plan *p, int64_t k, cxla_literal *leaf,
                                      bool *changed) {
    const cxla_shape *ls = leaf->shape;
    uint8_t dyn[CXLA_MAX_RANK] = {0};
    bool more = false;
    for (int64_t d = 0; d < ls->rank && d < CXLA_MAX_RANK; d++)
        dyn[d] = ls->dynamic && ls->dynamic[d];
    for (int64_t c = 0; c < p->value_count; c++) {
        const value *x = &p->values[c];
        if (x->parent != p->root[k] || !x->shape->dynamic || x->shape->rank != ls->rank) continue;
        for (int64_t d = 0; d < ls->rank; d++)
            if (x->shape->dynamic[d] && !dyn[d] && x->shape->dims[d] == ls->dims[d]) {
                dyn[d] = 1;
                more = true;
            }
    }
    if (!more) return NULL;
    cxla_shape shape = *ls;
    shape.dynamic = dyn;
    *changed = true;
    return cxla_literal_replace_shape(leaf, &shape);
}

/* Brings the shapes of the tuples in |lit| in line with their elements' (bottom up). */
static void refresh_tuples(cxla_literal *lit) {
    if (!lit || lit->shape->type != CXLA_TUPLE) return;
    for (int64_t i = 0; i < lit->tuple_count; i++) refresh_tuples(lit->elements[i]);
    cxla_literal_tuple_refresh_shape(lit);
}

cxla_status cpu_plan_run(cpu_plan *p, const exec_run_options *options,
                         const cxla_literal *const *args, int64_t arg_count,
                         cxla_literal **out_result) {
    const cxla_computation *entry = p->module->entry;
    static const exec_run_options no_options;
    run r = {.p = p, .options = options, .cancel = options ? options->cancel : NULL};
    r.countdown = 1; /* the first check polls */
    r.check_finite = options && options->check_finite;
    r.step_times = getenv("CXLA_STEP_TIMES") != NULL;
    r.fused_loops = !r.check_finite && !getenv("CXLA_LOOP_STEPS");
    double t0 = r.step_times ? now_us() : 0;
    r.svc = (cpu_svc_run){.options = options ? options : &no_options,
                          .module = p->module,
                          .rng_state = {EXEC_RNG_INITIAL_STATE, 0},
                          .rng_keys = p->rng_keys,
                          .id_count = p->id_count};
    r.svc.collective_counts = calloc((size_t)(p->id_count ? p->id_count : 1), sizeof(int64_t));
    cxla_status s = NULL;
    cxla_literal **owned = calloc((size_t)(arg_count ? arg_count : 1), sizeof(*owned));
    void **argp = calloc((size_t)(p->arg_leaf_count ? p->arg_leaf_count : 1), sizeof(void *));
    void **resp = calloc((size_t)(p->root_count ? p->root_count : 1), sizeof(void *));
    bool *direct = calloc((size_t)(p->root_count ? p->root_count : 1), sizeof(bool));
    r.ptr = calloc((size_t)(p->value_count ? p->value_count : 1), sizeof(void *));
    /* Dynamic shapes: the argument leaves (their sizes), the result leaves (to give them
     * theirs) and the classes' current sizes. */
    cxla_literal **argl = NULL, **resl = NULL;
    if (p->dyn_off) {
        argl = calloc((size_t)(p->arg_leaf_count ? p->arg_leaf_count : 1), sizeof(*argl));
        resl = calloc((size_t)(p->root_count ? p->root_count : 1), sizeof(*resl));
        r.sizes = malloc((size_t)(p->dyn_total ? p->dyn_total : 1) * sizeof(int64_t));
    }
    bool dyn_oom = p->dyn_off && (!argl || !resl || !r.sizes);
    r.ins = calloc((size_t)(p->max_operands ? p->max_operands : 1), sizeof(void *));
    r.outs = calloc((size_t)(p->max_operands ? p->max_operands : 1), sizeof(void *));
    if (!owned || !argp || !resp || !direct || !r.ptr || !r.ins || !r.outs ||
        !r.svc.collective_counts || dyn_oom)
        s = OOM();
    if (!s && arg_count != entry->param_count)
        s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                       "the entry computation '%s' takes %" PRId64 " arguments, got %" PRId64,
                       entry->name, entry->param_count, arg_count);
    /* Arguments: checked as the interpreter checks them, relaid when not row-major. */
    for (int64_t i = 0; i < arg_count && !s; i++) {
        const cxla_shape *want = &entry->params[i]->shape;
        const cxla_shape *got = cxla_literal_shape(args[i]);
        if (cxla_shape_is_static(want) && !cxla_shape_compatible(want, got)) {
            char *w = cxla_shape_to_string(want, CXLA_SHAPE_PRINT_NO_LAYOUT);
            char *g = cxla_shape_to_string(got, CXLA_SHAPE_PRINT_NO_LAYOUT);
            s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                           "argument %" PRId64 " has shape %s but parameter %" PRId64
                           " of '%s' is %s",
                           i, g ? g : "?", i, entry->name, w ? w : "?");
            free(w);
            free(g);
            break;
        }
        const cxla_literal *use = args[i];
        if (p->arg_copy && p->arg_copy[i] == CPU_ARG_IN_PLACE) {
            /* A donated dynamic argument at its bounds (cpu_plan_can_donate checked it):
             * used in the caller's memory, its padding zeroed there as bind_copy would. */
            size_t elem = 0;
            int64_t sizes[CXLA_MAX_RANK];
            if (!options || !options->donated || !options->donated[p->arg_base[i]] ||
                !at_bounds(want, args[i]) || !cpu_whole_elements(want, &elem)) {
                s = cxla_error(CXLA_STATUS_INTERNAL,
                               "argument %" PRId64 " is not donated at its bounds", i);
                break;
            }
            for (int64_t d = 0; d < want->rank; d++)
                sizes[d] = cxla_literal_dynamic_size(args[i], d);
            pad_array(args[i]->data, want, sizes, elem, NULL);
        } else if (p->arg_copy && p->arg_copy[i] >= 0 && bindable(want, args[i])) {
            /* Bound into the arena below, once it is there. */
            if (argl) argl[p->arg_base[i]] = (cxla_literal *)args[i];
            continue;
        }
        if (p->arg_copy && p->arg_copy[i] == CPU_ARG_IN_PLACE) {
            /* where it lies (above) */
        } else if (!cxla_shape_is_static(want)) { /* any sizes up to the bounds, as the driver */
            s = interp_dynamic_bind_argument(want, args[i], i, &owned[i]);
            use = owned[i];
        } else if (needs_relayout(args[i])) {
            s = interp_default_layout(args[i], &owned[i]);
            use = owned[i];
        }
        int64_t n = p->arg_base[i];
        if (!s) flatten(use, argp, &n, p->arg_leaf_count);
        n = p->arg_base[i];
        if (!s && argl) flatten_leaves((cxla_literal *)use, argl, &n, p->arg_leaf_count);
    }
    if (r.step_times) report_time("(arguments)", "-", "phase", now_us() - t0);
    /* The entry's result layout, when it has one (relaid at the end if not row-major). */
    const cxla_shape *rs = p->module->has_entry_layout ? &p->module->entry_result_shape : NULL;
    cxla_literal *result = NULL;
    if (r.step_times) t0 = now_us();
    int64_t rn = 0;
    if (!s) {
        s = make_result(p, options, !rs || layout_is_row_major(rs), &entry->root->shape, resp,
                        direct, &rn, &result);
        if (cxla_status_code_of(s) == CXLA_STATUS_RESOURCE_EXHAUSTED) {
            /* The instruction whose value that result leaf is, as the driver names it. */
            int64_t k = rn - 1;
            const cxla_instr *in = leaf_instr(entry->root, &k, 0);
            char *d = in ? cpu_origins_describe(p->origins, in, NULL) : NULL;
            s = cxla_status_annotate(s, "%s, result %" PRId64, d ? d : entry->root->name, rn - 1);
            free(d);
        }
    }
    if (r.step_times) report_time("(result-zeros)", "-", "phase", now_us() - t0);
    char *arena = NULL;
    if (!s && p->arena_size > 0) {
        arena = atomic_exchange(&p->spare, NULL);
        if (!arena) { /* held (cxla_mem_take) until cpu_plan_free or a second spare */
            size_t bytes = cpu_plan_arena_bytes(p);
            if (cxla_mem_take(bytes)) {
                arena = aligned_alloc(ALIGN, bytes);
                if (!arena) cxla_mem_give(bytes);
            }
            cxla_advise_huge_pages(arena, bytes);
        }
        if (!arena) s = arena_oom(&r);
    }
    /* Dynamic arguments bound into their arena buffers. */
    for (int64_t i = 0; p->arg_copy && i < arg_count && !s; i++) {
        int64_t cv = p->arg_copy[i];
        if (cv < 0 || owned[i] || argl[p->arg_base[i]] != args[i]) continue;
        const value *x = &p->values[cv];
        size_t elem = 0;
        cpu_whole_elements(x->shape, &elem);
        void *dst = x->size ? arena + x->offset : NULL;
        if (dst) bind_copy(dst, x->shape, args[i], elem);
        argp[p->arg_base[i]] = dst;
    }
    for (int64_t c = 0; c < p->value_count && !s; c++) {
        const value *x = &p->values[c];
        if (x->parent != c) continue;
        switch (x->kind) {
        case V_ARG: r.ptr[c] = argp[x->arg]; break;
        case V_CONST: r.ptr[c] = (void *)x->data; break;
        case V_ARENA: r.ptr[c] = x->result >= 0 ? resp[x->result] : arena + x->offset; break;
        case V_TOKEN: r.ptr[c] = NULL; break;
        }
        /* Sizes: the argument's own, else the bounds until a step sets them. */
        int64_t *z = sizes_of(&r, c);
        for (int64_t d = 0; z && d < x->shape->rank; d++)
            z[d] =
                x->kind == V_ARG ? cxla_literal_dynamic_size(argl[x->arg], d) : x->shape->dims[d];
    }
    /* Pieces of a concatenate computed in place: inside their whole's buffer. */
    for (int64_t c = 0; c < p->value_count && !s; c++)
        if (p->values[c].parent == c && p->values[c].sub_of >= 0) r.ptr[c] = piece_at(&r, c, 0);
    int64_t ln = 0;
    if (!s && resl) flatten_leaves(result, resl, &ln, p->root_count);
    if (!s) s = run_seq(&r, &p->entry);
    if (r.step_times) t0 = now_us();
    /* Result leaves no step wrote in place: parameters, constants, repeats; a donating
     * plan leaves an aliased result in its donated argument and says so. */
    if (!s) s = copy_results(&r, resp);
    if (r.step_times) report_time("(result-copies)", "-", "phase", now_us() - t0);
    /* The leaves now in the caller's memory (not those left in a donated argument). */
    for (int64_t k = 0; k < p->root_count && !s; k++)
        if (direct[k] && !(options->in_place_arg && options->in_place_arg[k] >= 0))
            options->result_written[k] = true;
    /* The result leaves' sizes; a leaf declared static over a dynamic value takes the
     * value's dynamic dimensions first (leaf_dynamic_shape). */
    bool reshaped = false;
    for (int64_t k = 0; resl && k < p->root_count && !s; k++) {
        const int64_t *z = sizes_of(&r, p->root[k]);
        if (z) s = leaf_dynamic_shape(p, k, resl[k], &reshaped);
        for (int64_t d = 0; z && d < resl[k]->shape->rank && !s; d++)
            if (z[d] != cxla_literal_dynamic_size(resl[k], d))
                s = cxla_literal_set_dynamic_size(resl[k], d, z[d]);
    }
    if (reshaped) refresh_tuples(result);
    if (r.ictx_ready) interp_ctx_deinit(&r.ictx);
    if (arena) {
        void *expected = NULL;
        if (!atomic_compare_exchange_strong(&p->spare, &expected, arena)) {
            free(arena);
            cxla_mem_give(cpu_plan_arena_bytes(p));
        }
    }
    /* The entry's result layout, when some leaf of it is not row-major (a tuple of
     * row-major leaves is the result as it is: relaying it would copy every leaf, the
     * whole state of a model that returns its weights). */
    if (r.step_times) t0 = now_us();
    if (!s && rs && (!layout_is_row_major(rs) || needs_relayout(result))) {
        cxla_literal *relaid = NULL;
        s = interp_relayout(result, rs, &relaid);
        cxla_literal_free(result);
        result = relaid;
    }
    if (r.step_times) report_time("(result-relayout)", "-", "phase", now_us() - t0);
    if (!s) {
        *out_result = result;
        result = NULL;
    }
    cxla_literal_free(result);
    for (int64_t i = 0; owned && i < arg_count; i++) cxla_literal_free(owned[i]);
    free(owned);
    free(argp);
    free(resp);
    free(direct);
    free(r.ptr);
    free(r.sizes);
    free(argl);
    free(resl);
    free(r.ins);
    free(r.outs);
    free(r.svc.collective_counts);
    return s;
}
