/* The cpu backend: compile = clone the module, run the pass pipeline, emit one C kernel
 * per fusion and per elementwise or data-movement instruction of the computations that
 * run in sequence (the entry, while bodies and conditions, conditional branches, called
 * computations), compile them (cached) and look them up, and prepare a library call
 * (onednn.h) for each dot and convolution there, and build the step sequence over one
 * arena that runs the module (cpu_steps.c); execute = that sequence (--check-finite
 * included: the steps test their results; a second sequence for runs whose arguments are
 * donated writes the aliased results in them). A module with unbounded dynamic dimensions
 * ('?') has no step sequence of its own: each run compiles (once per set of argument sizes,
 * cached: cpu_specialize.h) a form of it specialized to its arguments' sizes and runs that;
 * sizes or modules that cannot be specialized run on the interpreter's driver with those
 * instructions overridden by their kernels and calls (cpu.h), a form compiled when the
 * module is compiled if it is never specialized, else when a run first needs it. */
#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/compiler.h"
#include "cpu/cpu_internal.h"
#include "cpu/cpu_service.h"
#include "cpu/cpu_specialize.h"
#include "cpu/cpu_steps.h"
#include "cpu/emit.h"
#include "cpu/onednn.h"
#include "exec/dynamic.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"
#include "passes/passes.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* Big modules are split into translation units of about KERNELS_PER_UNIT kernels so that
 * the compiler runs on several at once; at most MAX_UNITS, since each repeats the prelude
 * and the link takes them all (the compiler driver accepts up to 32). */
enum { KERNELS_PER_UNIT = 64, MAX_UNITS = 16 };

typedef struct cpu_compiled {
    cxla_module *module; /* owned: the optimized clone */
    cpu_library *library;
    cpu_kernel_fn *kernels; /* by instruction id; NULL: the interpreter's handler */
    cpu_kernel_info *infos; /* by instruction id, beside kernels */
    cpu_call *calls;        /* by instruction id; fn NULL: none */
    cpu_pool *pool;         /* shared (threadpool.h); NULL with one thread */
    int64_t id_count;
    int64_t kernel_count;
    cpu_plan *plan; /* the step sequence; NULL: unbounded shapes, the driver runs it */
    /* Unbounded shapes: the forms specialized to argument sizes; NULL otherwise. */
    cpu_spec_cache *spec;
    /* A module specialized per run has none of the above (module NULL) until a run that
     * cannot be specialized needs the driver: its form is then compiled once, here. */
    struct cpu_compiled *driver;
    pthread_mutex_t driver_lock;
    bool has_driver_lock;
    exec_compile_options options;
    /* The one for runs with donated arguments (input_output_alias); NULL: none. */
    cpu_plan *plan_donated;
    /* The user's names of the optimized module's instructions, for the plans' messages. */
    cpu_origins *origins;
} cpu_compiled;

/* ---- choosing the instructions that get kernels --------------------------------------- */

/* Computations whose instructions run one by one in the driver: the entry and what
 * control flow calls. Fused computations run inside their fusion's kernel, and scalar
 * computations (reducers, comparators, map functions) inside their operation. An
 * async-start's wrapped computation (calls=) runs as a call's does (cpu_steps.c). */
static bool is_sequential_caller(cxla_opcode op) {
    return op == CXLA_OP_WHILE || op == CXLA_OP_CONDITIONAL || op == CXLA_OP_CALL ||
           op == CXLA_OP_ASYNC_START;
}

/* The computations |in| (a sequential caller) runs in sequence, into called[64]: an
 * async-start's wrapped computation (the async-desugar pass gave the sugar forms one;
 * what it left runs on the interpreter's handler). */
static int64_t sequential_callees(const cxla_instr *in, cxla_computation **called) {
    if (in->opcode != CXLA_OP_ASYNC_START) return cxla_instr_called_computations(in, called, 64);
    called[0] = cxla_instr_called(in, CXLA_ATTR_CALLS);
    return called[0] ? 1 : 0;
}

static cxla_status mark_sequential(const cxla_module *m, const cxla_computation *comp,
                                   bool *marked) {
    for (int64_t i = 0; i < m->comp_count; i++) {
        if (m->comps[i] != comp) continue;
        if (marked[i]) return NULL;
        marked[i] = true;
        break;
    }
    for (int64_t i = 0; i < comp->instr_count; i++) {
        const cxla_instr *in = comp->instrs[i];
        if (!is_sequential_caller(in->opcode)) continue;
        cxla_computation *called[64];
        int64_t n = sequential_callees(in, called);
        for (int64_t k = 0; k < n && k < 64; k++)
            CXLA_RETURN_IF_ERROR(mark_sequential(m, called[k], marked));
    }
    return NULL;
}

static bool shape_is_static_arrays(const cxla_shape *s) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            if (s->elements[i].type == CXLA_TUPLE || !shape_is_static_arrays(&s->elements[i]))
                return false;
        return true;
    }
    return cxla_type_is_array(s->type) && cxla_shape_is_static(s);
}

/* Whether |in| gets a kernel: the emitter can do it and every value it touches is a
 * static array (a tuple of arrays for a multi-output fusion). */
static bool wants_kernel(const cxla_instr *in) {
    if (in->opcode == CXLA_OP_PARAMETER || in->opcode == CXLA_OP_CONSTANT ||
        in->opcode == CXLA_OP_TUPLE || in->opcode == CXLA_OP_GET_TUPLE_ELEMENT)
        return false;
    if (!shape_is_static_arrays(&in->shape)) return false;
    for (int64_t k = 0; k < in->operand_count; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        if (!cxla_type_is_array(s->type) || !cxla_shape_is_static(s)) return false;
    }
    return cpu_can_emit(in);
}

static void kernel_name(const cxla_instr *in, char *buf, size_t size) {
    size_t n = (size_t)snprintf(buf, size, "k%" PRId64 "_", in->id);
    for (const char *p = in->name; *p && n + 1 < size && n < 48; p++)
        buf[n++] = isalnum((unsigned char)*p) ? *p : '_';
    buf[n < size ? n : size - 1] = '\0';
}

/* Whether |in| gets a library call: a dot or convolution of static arrays, or a fusion of
 * one with elementwise work after it (onednn.h). */
static bool wants_call(const cxla_instr *in) {
    if (!cpu_linalg_wants(in)) return false;
    if (!cxla_type_is_array(in->shape.type) || !cxla_shape_is_static(&in->shape)) return false;
    for (int64_t k = 0; k < in->operand_count; k++) {
        const cxla_shape *s = &in->operands[k]->shape;
        if (!cxla_type_is_array(s->type) || !cxla_shape_is_static(s)) return false;
    }
    return true;
}

/* Bounded dynamic shapes: the instructions whose kernels run at the bounds
 * (cpu_bounds_kind) are emitted from a copy of the module whose shapes are all at their
 * bounds (the dynamic marks dropped), so the emitter sees static shapes. */
static void drop_dynamic(cxla_shape *s) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++) drop_dynamic(&s->elements[i]);
        return;
    }
    s->dynamic = NULL;
}

static bool module_has_dynamic(const cxla_module *m) {
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++)
            if (!cxla_shape_is_static(&m->comps[c]->instrs[i]->shape)) return true;
    return false;
}

/* The copy of |m| at its bounds (NULL and no error when |m| has no bounded dynamic shape,
 * or has an unbounded one: that runs on the driver). */
static cxla_status bounds_module(const cxla_module *m, cxla_module **out) {
    *out = NULL;
    if (!module_has_dynamic(m)) return NULL;
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++)
            if (exec_shape_has_unbounded(&m->comps[c]->instrs[i]->shape)) return NULL;
    cxla_module *b = NULL;
    CXLA_RETURN_IF_ERROR(cxla_module_clone(m, &b));
    for (int64_t c = 0; c < b->comp_count; c++)
        for (int64_t i = 0; i < b->comps[c]->instr_count; i++)
            drop_dynamic(&b->comps[c]->instrs[i]->shape);
    *out = b;
    return NULL;
}

/* ---- generating ---------------------------------------------------------------------------- */

typedef struct generated {
    cxla_module *module;
    cxla_module *bounds;       /* the module at its bounds (bounds_module), or NULL */
    const cxla_instr **instrs; /* those with kernels */
    bool *sort_sized;          /* beside instrs: a sort with the run-time sizes (B_SORT) */
    bool *topk;                /* beside instrs: a "TopK" custom call (cpu_svc_topk_instr) */
    cpu_kernel_info *infos;    /* beside instrs */
    bool *sized;               /* beside instrs: a reduce over run-time sizes */
    int64_t count;
    const cxla_instr **call_instrs; /* those with library calls */
    int64_t call_count;
    cxla_strbuf *texts; /* beside instrs: each kernel's C (make_units puts them in units) */
    cxla_strbuf *units; /* the translation units */
    int64_t unit_count;
} generated;

static void generated_free(generated *g) {
    cxla_module_destroy(g->module);
    cxla_module_destroy(g->bounds);
    free(g->instrs);
    free(g->sort_sized);
    free(g->topk);
    free(g->infos);
    free(g->sized);
    free(g->call_instrs);
    for (int64_t u = 0; g->units && u < g->unit_count; u++) cxla_strbuf_free(&g->units[u]);
    free(g->units);
    for (int64_t i = 0; g->texts && i < g->count; i++) cxla_strbuf_free(&g->texts[i]);
    free(g->texts);
    memset(g, 0, sizeof(*g));
}

/* The kernels at the bounds whose loops read the run-time sizes (B_SIZED; emit.h). */
static bool sized_ok(const cxla_instr *in) {
    switch (in->opcode) {
    case CXLA_OP_REDUCE: return cpu_emit_sized_reduce_ok(in);
    case CXLA_OP_SCATTER: return cpu_emit_sized_scatter_ok(in);
    case CXLA_OP_SELECT_AND_SCATTER: return cpu_emit_sized_select_and_scatter_ok(in);
    default: return false;
    }
}

static cxla_status emit_sized(const cxla_instr *in, const char *name, cxla_strbuf *out,
                              cpu_kernel_info *info) {
    if (in->opcode == CXLA_OP_SCATTER) return cpu_emit_sized_scatter(in, name, out, info);
    if (in->opcode == CXLA_OP_SELECT_AND_SCATTER)
        return cpu_emit_sized_select_and_scatter(in, name, out, info);
    return cpu_emit_sized_reduce(in, name, out, info);
}

/* |share|: the optimized clone borrows |module|'s constants (compile_whole: the compiled
 * form never outlives the module it was compiled from, exec.h) instead of holding a second
 * copy of them. */
static cxla_status generate(const cxla_module *module, const cpu_compile_options *options,
                            bool share, generated *g) {
    memset(g, 0, sizeof(*g));
    cxla_status s = share ? cxla_module_clone_sharing_constants(module, &g->module)
                          : cxla_module_clone(module, &g->module);
    if (!s && !(options && options->no_passes)) {
        cxla_pipeline_options po = {
            .dump_after = options ? options->dump_after : NULL,
            .dump_to = options ? options->dump_to : NULL,
        };
        /* A dot keeps its dimension numbers: its library call or kernel takes any
         * (oneDNN's matmul takes transposed operands as strides, the loops gather them
         * once), where dot canonicalization would add transposes that copy them first. */
        int64_t n;
        const cxla_pass *const *all = cxla_passes_cpu_list(&n);
        const cxla_pass *list[32];
        int64_t count = 0;
        /* Output fusion and conv-canon only for oneDNN: without it the product of a kOutput
         * fusion would run the interpreter's loops instead of the emitter's blocked dot
         * kernel, and the emitter's convolution loop nests take any layout. */
        bool onednn = cpu_onednn_available() && !(options && options->no_onednn_passes);
        for (int64_t i = 0; i < n && count < 31; i++) {
            if ((all[i] == &cxla_pass_output_fusion || all[i] == &cxla_pass_conv_canon) && !onednn)
                continue;
            /* The fast reduction order (docs/semantics.md) splits large reductions to a
             * scalar so that they run on every thread. */
            bool fast = all[i] == &cxla_pass_fusion && cpu_emit_fast_math();
            if (fast) list[count++] = &cxla_pass_reduce_split;
            if (all[i] != &cxla_pass_dot_canon)
                list[count++] = fast ? &cxla_pass_fusion_rows : all[i];
        }
        s = cxla_pipeline_run(g->module, "cpu", list, count, &po);
    } else if (!s) {
        /* Without the pipeline, the async sugar still becomes the wrapped form: the plan
         * and ahead-of-time output run async-start through its wrapped computation; and a
         * builder decomposition becomes the call they run. */
        const cxla_pass *always[2] = {&cxla_pass_async_desugar, &cxla_pass_builder_calls};
        s = cxla_pipeline_run(g->module, "cpu", always, 2, NULL);
    }
    if (!s) s = cxla_verify_module(g->module);
    if (s) return s;
    cxla_module *m = g->module;
    bool *sequential = calloc((size_t)(m->comp_count ? m->comp_count : 1), sizeof(bool));
    int64_t total = 0;
    for (int64_t c = 0; c < m->comp_count; c++) total += m->comps[c]->instr_count;
    g->instrs = calloc((size_t)(total ? total : 1), sizeof(*g->instrs));
    g->infos = calloc((size_t)(total ? total : 1), sizeof(*g->infos));
    g->sort_sized = calloc((size_t)(total ? total : 1), sizeof(*g->sort_sized));
    g->topk = calloc((size_t)(total ? total : 1), sizeof(*g->topk));
    g->call_instrs = calloc((size_t)(total ? total : 1), sizeof(*g->call_instrs));
    g->sized = calloc((size_t)(total ? total : 1), sizeof(*g->sized));
    if (!sequential || !g->instrs || !g->sort_sized || !g->topk || !g->infos || !g->call_instrs ||
        !g->sized)
        s = OOM();
    if (!s && m->entry) s = mark_sequential(m, m->entry, sequential);
    if (!s) s = bounds_module(m, &g->bounds);
    bool fast = cpu_emit_fast_math();
    for (int64_t c = 0; c < m->comp_count && !s; c++) {
        if (!sequential[c]) continue;
        const cxla_computation *comp = m->comps[c];
        const cxla_computation *bcomp = g->bounds ? g->bounds->comps[c] : NULL;
        for (int64_t i = 0; i < comp->instr_count; i++) {
            const cxla_instr *in = comp->instrs[i];
            cxla_attr attrs[2];
            cxla_instr alt; /* the instruction a TopK runs as */
            if (wants_call(in)) {
                g->call_instrs[g->call_count++] = in;
            } else if (wants_kernel(in)) {
                g->instrs[g->count++] = in;
            } else if (cpu_collective_combine_lookup(in) && shape_is_static_arrays(&in->shape)) {
                g->instrs[g->count++] = in; /* its reducer's combine function (emit_combine.h) */
            } else if (cpu_svc_topk_instr(in, attrs, &alt) && wants_kernel(&alt)) {
                g->topk[g->count] = true; /* the topk kernel, under the custom call's id */
                g->instrs[g->count++] = in;
            } else if (bcomp && bcomp->instr_count == comp->instr_count &&
                       bcomp->instrs[i]->id == in->id && cpu_bounds_kind(in, fast) &&
                       wants_kernel(bcomp->instrs[i])) {
                g->sort_sized[g->count] = cpu_bounds_kind(in, fast) == B_SORT;
                g->instrs[g->count++] = bcomp->instrs[i]; /* a kernel at the bounds */
            } else if (bcomp && bcomp->instr_count == comp->instr_count &&
                       bcomp->instrs[i]->id == in->id && cpu_dyn_sized_ok(in) &&
                       sized_ok(bcomp->instrs[i])) {
                /* a reduce, scatter or select-and-scatter at the bounds whose loops run to
                 * the run-time sizes */
                g->sized[g->count] = true;
                g->instrs[g->count++] = bcomp->instrs[i];
            }
        }
    }
    free(sequential);
    if (s) return s;
    g->texts = calloc((size_t)(g->count ? g->count : 1), sizeof(*g->texts));
    if (!g->texts) return OOM();
    for (int64_t i = 0; i < g->count; i++) {
        char name[64];
        kernel_name(g->instrs[i], name, sizeof(name));
        cxla_strbuf *text = &g->texts[i];
        cxla_strbuf_init(text);
        cxla_attr attrs[2];
        cxla_instr alt; /* the instruction a TopK runs as */
        if (g->topk[i] && cpu_svc_topk_instr(g->instrs[i], attrs, &alt))
            CXLA_RETURN_IF_ERROR(cpu_emit_kernel_info(&alt, name, text, &g->infos[i]));
        else if (g->sort_sized[i])
            CXLA_RETURN_IF_ERROR(cpu_emit_sort_sized(g->instrs[i], name, text, &g->infos[i]));
        else if (cpu_collective_combine_lookup(g->instrs[i]))
            CXLA_RETURN_IF_ERROR(cpu_collective_emit_combine(g->instrs[i], name, text));
        else if (g->sized[i])
            CXLA_RETURN_IF_ERROR(emit_sized(g->instrs[i], name, text, &g->infos[i]));
        else
            CXLA_RETURN_IF_ERROR(cpu_emit_kernel_info(g->instrs[i], name, text, &g->infos[i]));
        if (text->failed) return OOM();
    }
    return NULL;
}

/* The translation units of |g|'s kernels, but those |skip| marks (by instruction id; NULL:
 * none): KERNELS_PER_UNIT kernels a unit, MAX_UNITS at most, each unit the prelude and its
 * kernels' C. |module| names the (optimized) module in their first line. */
static cxla_status make_units(generated *g, const char *module, const bool *skip) {
    int64_t kept = 0;
    for (int64_t i = 0; i < g->count; i++) kept += !(skip && skip[g->instrs[i]->id]);
    int64_t units = (kept + KERNELS_PER_UNIT - 1) / KERNELS_PER_UNIT;
    if (units > MAX_UNITS) units = MAX_UNITS;
    int64_t per_unit = units ? (kept + units - 1) / units : 1;
    g->units = calloc((size_t)(units ? units : 1), sizeof(*g->units));
    if (g->units) g->unit_count = units; /* generated_free frees what is counted */
    if (!g->units) return OOM();
    for (int64_t u = 0; u < g->unit_count; u++) {
        cxla_strbuf_init(&g->units[u]);
        cxla_strbuf_printf(&g->units[u],
                           "/* Generated by cxla's cpu backend from module %s, unit %" PRId64
                           " of %" PRId64 ". */\n",
                           module, u + 1, g->unit_count);
        cpu_emit_prelude(&g->units[u]);
    }
    for (int64_t i = 0, k = 0; i < g->count; i++) {
        if (skip && skip[g->instrs[i]->id]) continue;
        cxla_strbuf *unit = &g->units[k++ / per_unit];
        cxla_strbuf_putc(unit, '\n');
        cxla_strbuf_append(unit, g->texts[i].data ? g->texts[i].data : "", g->texts[i].len);
    }
    for (int64_t u = 0; u < g->unit_count; u++)
        if (g->units[u].failed) return OOM();
    return NULL;
}

cxla_status cpu_generate(const cxla_module *module, const cpu_compile_options *options,
                         cxla_module **out_optimized, cxla_strbuf *out_source,
                         int64_t *out_kernel_count) {
    generated g;
    cxla_status s = generate(module, options, false, &g);
    if (!s) s = make_units(&g, g.module->name, NULL);
    if (!s) {
        for (int64_t u = 0; u < g.unit_count; u++) {
            if (u) cxla_strbuf_putc(out_source, '\n');
            cxla_strbuf_append(out_source, g.units[u].data, g.units[u].len);
        }
        if (out_kernel_count) *out_kernel_count = g.count;
        if (out_optimized) {
            *out_optimized = g.module;
            g.module = NULL;
        }
    }
    generated_free(&g);
    return s;
}

/* ---- running ----------------------------------------------------------------------------- */

static bool same_dims(const cxla_literal *lit, const cxla_shape *want) {
    const cxla_shape *got = lit->shape;
    if (got->type != want->type || got->rank != want->rank || lit->dyn_sizes) return false;
    for (int64_t d = 0; d < want->rank; d++)
        if (got->dims[d] != want->dims[d]) return false;
    return cxla_layout_is_default(got);
}

/* A kernel over the thread pool, stopped between chunks when the run is cancelled. */
static cxla_status run_chunks(interp_ctx *ctx, const cpu_compiled *c, const cxla_instr *in,
                              cpu_kernel_fn fn, const cpu_kernel_info *info, void *const *outs,
                              const void *const *ins) {
    if (cpu_pool_run_kernel(c->pool, fn, info, outs, ins, ctx->options.cancel)) return NULL;
    return exec_cancel_error_at(ctx->options.cancel, in);
}

/* The user's name of |in| in the driver's messages (cpu_origin.c). */
static const char *user_name(void *user, const cxla_instr *in) {
    return cpu_origins_name(((const cpu_compiled *)user)->origins, in);
}

/* The handler of an instruction with a kernel: new results in the default layout, then
 * the kernel. A value that does not have the shape the kernel was compiled for (one
 * below its dynamic bounds, handed over by the driver's dynamic path) goes to the
 * interpreter's handler. */
static cxla_status run_kernel(interp_ctx *ctx, const cxla_instr *in,
                              const cxla_literal *const *operands, cxla_literal **out) {
    const cpu_compiled *c = interp_overrides_user(ctx);
    cpu_kernel_fn fn = in->id >= 0 && in->id < c->id_count ? c->kernels[in->id] : NULL;
    const cpu_kernel_info *info = fn ? &c->infos[in->id] : NULL;
    const cpu_call *call = !fn && in->id >= 0 && in->id < c->id_count && c->calls[in->id].fn
                               ? &c->calls[in->id]
                               : NULL;
    bool fits = fn != NULL || call != NULL;
    for (int64_t k = 0; k < in->operand_count && fits; k++)
        fits = same_dims(operands[k], &in->operands[k]->shape);
    if (!fits) return interp_handler(in->opcode)(ctx, in, operands, out);
    if (fn && in->opcode == CXLA_OP_RAGGED_DOT && in->operand_count == 3) /* its error */
        CXLA_RETURN_IF_ERROR(cpu_emit_ragged_check(in, operands[2]->data));
    enum { SMALL = 16 };
    const void *ins_small[SMALL];
    const void **ins =
        in->operand_count <= SMALL ? ins_small : malloc((size_t)in->operand_count * sizeof(*ins));
    if (!ins) return OOM();
    for (int64_t k = 0; k < in->operand_count; k++) ins[k] = operands[k]->data;
    cxla_literal *result = NULL;
    cxla_status s = NULL;
    /* The kernel's work memory (cpu_kernel_info.scratch), passed after its results. */
    void *scratch = NULL;
    if (info && info->scratch) {
        scratch = aligned_alloc(64, (info->scratch + 63) / 64 * 64);
        if (!scratch) s = OOM();
    }
    if (in->shape.type == CXLA_TUPLE) {
        int64_t n = in->shape.tuple_count;
        cxla_literal *elements_small[SMALL];
        void *outs_small[SMALL + 1];
        cxla_literal **elements =
            n <= SMALL ? elements_small : calloc((size_t)n, sizeof(*elements));
        void **outs = n <= SMALL ? outs_small : calloc((size_t)n + 1, sizeof(*outs));
        if (!elements || !outs) s = OOM();
        if (outs) outs[n] = scratch;
        for (int64_t i = 0; i < n && !s; i++) {
            s = interp_new_array(&in->shape.elements[i], &elements[i]);
            if (!s) outs[i] = elements[i]->data;
        }
        if (!s) {
            if (call)
                s = call->fn(call->state, outs, ins);
            else
                s = run_chunks(ctx, c, in, fn, info, outs, (const void *const *)ins);
        }
        if (!s) {
            s = interp_make_tuple(elements, n, &result);
        } else if (elements) {
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        }
        if (elements != elements_small) free(elements);
        if (outs != outs_small) free(outs);
    } else {
        if (!s) s = interp_new_array(&in->shape, &result);
        if (!s) {
            void *outs[2] = {result->data, scratch};
            if (call)
                s = call->fn(call->state, outs, ins);
            else
                s = run_chunks(ctx, c, in, fn, info, outs, (const void *const *)ins);
            if (s) {
                cxla_literal_free(result);
                result = NULL;
            }
        }
    }
    if (ins != ins_small) free(ins);
    free(scratch);
    if (s) return s;
    *out = result;
    return NULL;
}

/* Whether the kernel under |in|'s id is a collective's combine function (emit_combine.h),
 * which its service step calls: never a kernel to run as one. */
static bool combines(const cxla_instr *in) {
    return cpu_collective_combine_lookup(in) != NULL;
}

static interp_op_fn lookup(void *user, const cxla_instr *in) {
    const cpu_compiled *c = user;
    /* A combine function is a collective's, which its service step calls. */
    if (in->id < 0 || in->id >= c->id_count) return NULL;
    if (combines(in)) return NULL;
    return c->kernels[in->id] || c->calls[in->id].fn ? run_kernel : NULL;
}

/* How |in| of |c|'s module runs (cpu_compiled_call_what). */
static const char *instr_what(const cpu_compiled *c, const cxla_instr *in) {
    if (in->id < 0 || in->id >= c->id_count) return NULL;
    const char *what = cpu_plan_what(c->plan, in);
    /* The step sequence's own steps come before a kernel the instruction also has. */
    if (what && (strcmp(what, "step") == 0 || strcmp(what, "in place") == 0 ||
                 strcmp(what, "pieces in place") == 0))
        return what;
    if (c->calls[in->id].fn) return c->calls[in->id].what;
    if (c->kernels[in->id] && !(what && combines(in)))
        return what && strcmp(what, "kernel in place") == 0 ? what : "kernel";
    if (what) return what;
    if (!c->plan && in->opcode != CXLA_OP_PARAMETER && in->opcode != CXLA_OP_CONSTANT)
        return "interpreter handler"; /* the driver's fallback */
    return NULL;
}

const char *cpu_compiled_call_what(const void *compiled, const char *instr_name) {
    const cpu_compiled *c = compiled;
    if (c && !c->module) c = c->driver; /* specialized per run: the driver's, once built */
    for (int64_t i = 0; c && i < c->module->comp_count; i++) {
        const cxla_instr *in = cxla_computation_find_instr(c->module->comps[i], instr_name);
        const char *what = in ? instr_what(c, in) : NULL;
        if (what) return what;
    }
    return NULL;
}

const cpu_plan *cpu_compiled_plan(const void *compiled) {
    return compiled ? ((const cpu_compiled *)compiled)->plan : NULL;
}

void cpu_compiled_spec_stats(void *compiled, cpu_spec_stats *out) {
    cpu_spec_get_stats(compiled ? ((cpu_compiled *)compiled)->spec : NULL, out);
}

const cpu_plan *cpu_compiled_donated_plan(const void *compiled) {
    return compiled ? ((const cpu_compiled *)compiled)->plan_donated : NULL;
}

/* ---- cxla compile --explain ------------------------------------------------------------- */

static cxla_status need_driver(cpu_compiled *c, cpu_compiled **out);

/* The computations that run in sequence, from |comp| down, each once, into |out|. */
static cxla_status sequential_order(const cxla_module *m, const cxla_computation *comp, bool *seen,
                                    const cxla_computation **out, int64_t *n) {
    for (int64_t i = 0; i < m->comp_count; i++) {
        if (m->comps[i] != comp) continue;
        if (seen[i]) return NULL;
        seen[i] = true;
        break;
    }
    out[(*n)++] = comp;
    for (int64_t i = 0; i < comp->instr_count; i++) {
        const cxla_instr *in = comp->instrs[i];
        if (!is_sequential_caller(in->opcode)) continue;
        cxla_computation *called[64];
        int64_t k = sequential_callees(in, called);
        for (int64_t j = 0; j < k && j < 64; j++)
            CXLA_RETURN_IF_ERROR(sequential_order(m, called[j], seen, out, n));
    }
    return NULL;
}

/* The words of a report, counted for its summary line. */
typedef struct tally {
    const char *word[32];
    int64_t count[32];
    int64_t n;
} tally;

static void tally_add(tally *t, const char *word) {
    for (int64_t i = 0; i < t->n; i++)
        if (strcmp(t->word[i], word) == 0) {
            t->count[i]++;
            return;
        }
    if (t->n < 32) {
        t->word[t->n] = word;
        t->count[t->n++] = 1;
    }
}

cxla_status cpu_explain(const cxla_module *module, cxla_strbuf *out) {
    void *compiled = NULL;
    exec_compile_options co = {0};
    CXLA_RETURN_IF_ERROR(cpu_backend.compile(module, &co, &compiled));
    cpu_compiled *c = compiled;
    const cpu_spec_cache *spec = c->spec;
    /* A module specialized per run: the lines are those of its driver's form. */
    if (!c->module) {
        cxla_status ds = need_driver(c, &c);
        if (ds) {
            cpu_backend.destroy(compiled);
            return ds;
        }
    }
    const cxla_module *m = c->module;
    bool *seen = calloc((size_t)(m->comp_count ? m->comp_count : 1), sizeof(bool));
    const cxla_computation **order =
        calloc((size_t)(m->comp_count ? m->comp_count : 1), sizeof(*order));
    int64_t n = 0;
    cxla_status s = seen && order ? NULL : OOM();
    if (!s && m->entry) s = sequential_order(m, m->entry, seen, order, &n);
    tally t = {.n = 0};
    int64_t width = 8;
    for (int64_t k = 0; k < n && !s; k++)
        for (int64_t i = 0; i < order[k]->instr_count; i++) {
            int64_t len = (int64_t)strlen(order[k]->instrs[i]->name);
            if (len > width && len <= 40) width = len;
        }
    for (int64_t k = 0; k < n && !s; k++) {
        const cxla_computation *comp = order[k];
        cxla_strbuf_printf(out, "%s%s:\n", comp->name, comp == m->entry ? " (entry)" : "");
        for (int64_t i = 0; i < comp->instr_count; i++) {
            const cxla_instr *in = comp->instrs[i];
            const char *what = instr_what(c, in);
            char name[96];
            if (!what && in->opcode == CXLA_OP_PARAMETER)
                what = comp == m->entry ? "argument, read where it lies" : "parameter";
            else if (!what && in->opcode == CXLA_OP_CONSTANT)
                what = "constant";
            else if (!what &&
                     (in->opcode == CXLA_OP_TUPLE || in->opcode == CXLA_OP_GET_TUPLE_ELEMENT))
                what = "alias";
            else if (!what)
                what = "?";
            else
                tally_add(&t, what);
            const char *shown = what;
            bool over = strcmp(what, "kernel in place") == 0; /* its operand's buffer */
            if ((over || strcmp(what, "kernel") == 0) && in->id >= 0 && in->id < c->id_count &&
                c->kernels[in->id]) {
                char kn[56];
                kernel_name(in, kn, sizeof(kn));
                snprintf(name, sizeof(name), "kernel %s%s", kn, over ? ", in place" : "");
                shown = name;
            }
            cxla_strbuf_printf(out, "  %-*s %-22s %s\n", (int)width, in->name,
                               cxla_opcode_name(in->opcode), shown);
        }
    }
    if (!s) {
        cxla_strbuf_printf(out, "summary:");
        for (int64_t i = 0; i < t.n; i++)
            cxla_strbuf_printf(out, "%s %s %" PRId64, i ? "," : "", t.word[i], t.count[i]);
        if (t.n == 0) cxla_strbuf_printf(out, " no steps");
        if (c->plan) {
            cpu_plan_stats st;
            cpu_plan_get_stats(c->plan, &st);
            cxla_strbuf_printf(out,
                               "; arena %zu bytes; copy steps %" PRId64
                               " (%zu bytes a run); buffers taken over in place %" PRId64,
                               st.arena_size, st.copy_steps, st.copy_bytes, st.in_place);
            /* While loops run as one step each (cpu_loop.h), nested ones counted. */
            if (st.fused_loops > 0)
                cxla_strbuf_printf(out, "; fused loops %" PRId64, st.fused_loops);
            cxla_strbuf_printf(out, "\n");
        } else if (spec && !cpu_spec_refusal(spec)) {
            cxla_strbuf_printf(out,
                               "; no step sequence: unbounded dynamic shapes are specialized "
                               "per argument sizes (each new set of sizes compiles a form with "
                               "them static, cached per executable); the lines above are the "
                               "interpreter's driver, which runs sizes a form cannot take "
                               "(docs/semantics.md)\n");
        } else {
            cxla_strbuf_printf(out,
                               "; no step sequence: unbounded dynamic shapes run on the "
                               "interpreter's driver, not specialized per argument sizes: %s "
                               "(docs/semantics.md)\n",
                               spec ? cpu_spec_refusal(spec) : "no unbounded parameter");
        }
        if (out->failed) s = OOM();
    }
    free(seen);
    free(order);
    cpu_backend.destroy(compiled);
    return s;
}

/* ---- the backend interface ----------------------------------------------------------------- */

static void cpu_destroy(void *compiled) {
    cpu_compiled *c = compiled;
    if (!c) return;
    cpu_destroy(c->driver); /* before the spec: it borrows the spec's source's constants */
    cpu_spec_destroy(c->spec);
    if (c->has_driver_lock) pthread_mutex_destroy(&c->driver_lock);
    cpu_plan_destroy(c->plan);
    cpu_plan_destroy(c->plan_donated);
    cpu_library_close(c->library);
    cpu_pool_release(c->pool);
    for (int64_t i = 0; c->calls && i < c->id_count; i++) cpu_call_release(&c->calls[i]);
    free(c->calls);
    free(c->kernels);
    free(c->infos);
    cxla_module_destroy(c->module);
    cpu_origins_free(c->origins);
    free(c);
}

/* What a plan's kernel steps point at until the compiled kernels are bound
 * (compile_whole); never run. */
static void kernel_unbound(void *const *out, const void *const *in, int64_t begin, int64_t end) {
    (void)out;
    (void)in;
    (void)begin;
    (void)end;
    CXLA_ASSERT(!"a kernel step ran before its kernel was bound");
}

/* The form that runs |module| itself: kernels, calls and the step sequence, or (unbounded
 * shapes) the driver with them. */
static cxla_status compile_whole(const cxla_module *module, const exec_compile_options *options,
                                 cpu_compiled **out_compiled) {
    generated g;
    cxla_status s = generate(module, NULL, true, &g);
    cpu_compiled *c = s ? NULL : calloc(1, sizeof(*c));
    if (!s && !c) s = OOM();
    if (!s) {
        c->module = g.module;
        g.module = NULL;
        c->id_count = c->module->next_id;
        c->kernels = calloc((size_t)(c->id_count ? c->id_count : 1), sizeof(*c->kernels));
        c->infos = calloc((size_t)(c->id_count ? c->id_count : 1), sizeof(*c->infos));
        c->calls = calloc((size_t)(c->id_count ? c->id_count : 1), sizeof(*c->calls));
        if (!c->kernels || !c->infos || !c->calls) s = OOM();
    }
    int threads = cpu_pool_threads(options ? options->thread_count : 0);
    if (!s && threads > 1) s = cpu_pool_acquire(threads, &c->pool);
    /* The plans are built before the kernels are compiled, over a placeholder for each
     * kernel, so that the fused loops' C (which depends on the plans' layout) is compiled in
     * the same library as the kernels, at the same time; the real kernels are bound after. */
    for (int64_t i = 0; i < g.count && !s; i++) {
        c->kernels[g.instrs[i]->id] = kernel_unbound;
        c->infos[g.instrs[i]->id] = g.infos[i];
    }
    if (!s) c->kernel_count = g.count;
    /* Library calls are prepared now (oneDNN primitives are created once, not per run). */
    for (int64_t i = 0; i < g.call_count && !s; i++)
        s = cpu_linalg_prepare(g.call_instrs[i], threads, c->pool, &c->calls[g.call_instrs[i]->id]);
    if (!s)
        s = cpu_plan_build(c->module, c->kernels, c->infos, c->calls, c->id_count, c->pool, false,
                           &c->plan);
    /* A second plan for donated arguments, when the module aliases any (a few kilobytes of
     * steps; the kernels and calls are shared). */
    if (!s && c->plan)
        s = cpu_plan_build(c->module, c->kernels, c->infos, c->calls, c->id_count, c->pool, true,
                           &c->plan_donated);
    /* The fused while loops of both plans as one more translation unit (cpu_loop.h), with
     * the kernels only they call, which the kernels' units then leave out. */
    cxla_strbuf loops;
    cxla_strbuf_init(&loops);
    bool has_loops = false;
    cpu_plan *plans[2] = {c ? c->plan : NULL, c ? c->plan_donated : NULL};
    bool *in_loops = s ? NULL : calloc((size_t)(c->id_count ? c->id_count : 1), sizeof(bool));
    if (!s && !in_loops) s = OOM();
    if (!s)
        s = cpu_plan_emit_loops(plans, 2, module->name, kernel_name, &loops, &has_loops, in_loops);
    if (!s) s = make_units(&g, c->module->name, in_loops);
    free(in_loops);
    int64_t units = g.unit_count + (has_loops ? 1 : 0);
    if (!s && (g.count > 0 || has_loops)) {
        const char **sources = calloc((size_t)units, sizeof(*sources));
        size_t *lengths = calloc((size_t)units, sizeof(*lengths));
        if (!sources || !lengths) s = OOM();
        for (int64_t u = 0; u < g.unit_count && !s; u++) {
            sources[u] = g.units[u].data;
            lengths[u] = g.units[u].len;
        }
        if (!s && has_loops) {
            sources[units - 1] = loops.data;
            lengths[units - 1] = loops.len;
        }
        if (!s) s = cpu_library_compile(sources, lengths, units, module->name, &c->library);
        free(sources);
        free(lengths);
        for (int64_t i = 0; i < g.count && !s; i++) {
            char name[64];
            kernel_name(g.instrs[i], name, sizeof(name));
            void *sym = cpu_library_symbol(c->library, name);
            if (!sym) {
                s = cxla_error(CXLA_STATUS_INTERNAL,
                               "the compiled code of module '%s' lacks kernel %s (%s)",
                               module->name, name, g.instrs[i]->name);
                break;
            }
            /* dlsym returns data pointers; POSIX guarantees the conversion. */
            memcpy(&c->kernels[g.instrs[i]->id], &sym, sizeof(sym));
        }
    }
    cxla_strbuf_free(&loops);
    for (int64_t k = 0; k < 2 && !s; k++)
        s = cpu_plan_bind(plans[k], k, c->kernels, c->library, has_loops, module->name);
    /* Messages name the user's instructions, not the passes' copies of them (the driver's
     * through interp_overrides.name). */
    if (!s) s = cpu_origins_build(module, c->module, &c->origins);
    if (!s && c->plan) cpu_plan_set_origins(c->plan, c->origins);
    if (!s && c->plan_donated) cpu_plan_set_origins(c->plan_donated, c->origins);
    /* rng keys as the interpreter gives them running the user's module. */
    if (!s && c->plan)
        s = cpu_svc_rng_keys_of_user(module, c->module, c->id_count, cpu_plan_rng_keys(c->plan));
    if (!s && c->plan_donated)
        s = cpu_svc_rng_keys_of_user(module, c->module, c->id_count,
                                     cpu_plan_rng_keys(c->plan_donated));
    generated_free(&g);
    if (s) {
        cpu_destroy(c);
        return s;
    }
    *out_compiled = c;
    return NULL;
}

/* The driver's form of a module specialized per run, compiled by the first run that needs
 * it (a failure is returned to that run; the next one tries again). */
static cxla_status need_driver(cpu_compiled *c, cpu_compiled **out) {
    pthread_mutex_lock(&c->driver_lock);
    cxla_status s =
        c->driver ? NULL : compile_whole(cpu_spec_source(c->spec), &c->options, &c->driver);
    *out = c->driver;
    pthread_mutex_unlock(&c->driver_lock);
    return s;
}

static cxla_status cpu_compile(const cxla_module *module, const exec_compile_options *options,
                               void **out_compiled) {
    /* Unbounded shapes: specialized per run (cpu_specialize.h); the driver's form is
     * compiled now only when the module is never specialized. */
    cpu_spec_cache *spec = NULL;
    CXLA_RETURN_IF_ERROR(cpu_spec_create(module, options, &spec));
    cpu_compiled *c = NULL;
    cxla_status s = NULL;
    if (spec && !cpu_spec_refusal(spec)) {
        c = calloc(1, sizeof(*c));
        if (!c) s = OOM();
        if (c) {
            c->spec = spec;
            if (options) c->options = *options;
            pthread_mutex_init(&c->driver_lock, NULL);
            c->has_driver_lock = true;
        }
    } else {
        s = compile_whole(module, options, &c);
        if (!s) c->spec = spec;
    }
    if (s) {
        cpu_spec_destroy(spec);
        return s;
    }
    *out_compiled = c;
    return NULL;
}

static cxla_status cpu_execute(void *compiled, const exec_run_options *options,
                               const cxla_literal *const *args, int64_t arg_count,
                               cxla_literal **out_result) {
    cpu_compiled *c = compiled;
    cxla_status s;
    if (c->spec) {
        bool ran = false;
        s = cpu_spec_run(c->spec, options, args, arg_count, out_result, &ran);
        if (s || ran) return s;
    }
    if (!c->module) CXLA_RETURN_IF_ERROR(need_driver(c, &c));
    cpu_pool_enter(c->pool);
    if (c->plan) {
        bool donate = cpu_plan_can_donate(c->plan_donated, options, args, arg_count);
        s = cpu_plan_run(donate ? c->plan_donated : c->plan, options, args, arg_count, out_result);
    } else {
        interp_overrides o = {.user = c, .lookup = lookup, .name = user_name};
        s = interp_run_module_overridden(c->module, options, &o, args, arg_count, out_result);
    }
    cpu_pool_leave(c->pool);
    return s;
}

const exec_backend cpu_backend = {
    .name = "cpu",
    .alias = NULL,
    .compile = cpu_compile,
    .execute = cpu_execute,
    .destroy = cpu_destroy,
};
