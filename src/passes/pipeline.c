/* Named pipelines: run passes in order, verify between them, dump after a named pass;
 * and the cpu backend's pipeline. */
#include <stdio.h>
#include <string.h>

#include "passes/passes_internal.h"

/* Post-order every computation, since passes append instructions at the end. */
static cxla_status sort_all(cxla_module *m) {
    for (int64_t i = 0; i < m->comp_count; i++)
        CXLA_RETURN_IF_ERROR(cxla_computation_sort(m->comps[i]));
    return NULL;
}

static void dump(const cxla_module *m, const char *pipeline, const cxla_pass *pass, bool changed,
                 cxla_strbuf *to) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_printf(&b, "// after %s (pipeline %s, %s)\n", pass->name, pipeline,
                       changed ? "changed" : "unchanged");
    cxla_hlo_print_to(&b, m, CXLA_HLO_STYLE_SHORT);
    if (to) {
        cxla_strbuf_append(to, b.data ? b.data : "", b.len);
    } else if (b.data) {
        fputs(b.data, stderr);
    }
    cxla_strbuf_free(&b);
}

cxla_status cxla_pipeline_run(cxla_module *m, const char *pipeline_name,
                              const cxla_pass *const *passes, int64_t count,
                              const cxla_pipeline_options *options) {
#ifdef NDEBUG
    bool verify = options ? options->verify : false;
#else
    bool verify = options ? options->verify : true;
#endif
    const char *name = pipeline_name ? pipeline_name : "pipeline";
    if (verify) {
        cxla_status s = cxla_verify_module(m);
        if (s)
            return cxla_status_annotate(s, "pipeline %s: the module is invalid before it runs",
                                        name);
    }
    for (int64_t i = 0; i < count; i++) {
        const cxla_pass *p = passes[i];
        bool changed = false;
        cxla_status s = p->run(m, &changed);
        if (!s && changed) s = sort_all(m);
        if (s) return cxla_status_annotate(s, "pipeline %s, pass %s", name, p->name);
        if (verify) {
            s = cxla_verify_module(m);
            if (s)
                return cxla_status_annotate(s, "pipeline %s: pass %s left the module invalid", name,
                                            p->name);
        }
        const char *d = options ? options->dump_after : NULL;
        if (d && (strcmp(d, "all") == 0 || strcmp(d, p->name) == 0))
            dump(m, name, p, changed, options->dump_to);
    }
    return NULL;
}

static const cxla_pass *const cpu_passes[] = {
    &cxla_pass_async_desugar, &cxla_pass_builder_calls,
    &cxla_pass_inline,        &cxla_pass_topk_decompose,
    &cxla_pass_simplify,      &cxla_pass_constant_fold,
    &cxla_pass_cse,           &cxla_pass_dce,
    &cxla_pass_layout,        &cxla_pass_dot_canon,
    &cxla_pass_conv_canon,    &cxla_pass_output_fusion,
    &cxla_pass_fusion,        &cxla_pass_dce,
};

const cxla_pass *const *cxla_passes_cpu_list(int64_t *out_count) {
    *out_count = (int64_t)(sizeof(cpu_passes) / sizeof(cpu_passes[0]));
    return cpu_passes;
}

const cxla_pass *cxla_pass_find(const char *name) {
    for (size_t i = 0; i < sizeof(cpu_passes) / sizeof(cpu_passes[0]); i++)
        if (strcmp(cpu_passes[i]->name, name) == 0) return cpu_passes[i];
    /* Run by the cpu backend in its fast reduction order only. */
    if (strcmp(cxla_pass_reduce_split.name, name) == 0) return &cxla_pass_reduce_split;
    return NULL;
}

cxla_status cxla_passes_cpu(cxla_module *m, const cxla_pipeline_options *options) {
    int64_t n;
    const cxla_pass *const *p = cxla_passes_cpu_list(&n);
    return cxla_pipeline_run(m, "cpu", p, n, options);
}
