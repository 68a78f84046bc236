/* cxla compile: run the cpu backend's pass pipeline on a module and print the result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "tool.h"

int cmd_compile(int argc, char **argv) {
    const char *module_path = NULL;
    cxla_pipeline_options options = {.verify = true};
    bool emit_hlo = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--dump-after") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "cxla compile: --dump-after needs a pass name or 'all'\n");
                return 1;
            }
            options.dump_after = argv[++i];
            if (strcmp(options.dump_after, "all") != 0 && !cxla_pass_find(options.dump_after)) {
                int64_t n;
                const cxla_pass *const *p = cxla_passes_cpu_list(&n);
                fprintf(stderr, "cxla compile: no pass named '%s'; the cpu pipeline has:",
                        options.dump_after);
                for (int64_t k = 0; k < n; k++)
                    if (k == 0 || strcmp(p[k]->name, p[k - 1]->name) != 0)
                        fprintf(stderr, " %s", p[k]->name);
                fprintf(stderr, "\n");
                return 1;
            }
        } else if (strcmp(a, "--emit-hlo") == 0) {
            emit_hlo = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "cxla compile: unknown option '%s' (see 'cxla help compile')\n", a);
            return 1;
        } else if (!module_path) {
            module_path = a;
        } else {
            fprintf(stderr, "cxla compile: one module at a time ('%s' and '%s')\n", module_path, a);
            return 1;
        }
    }
    if (!module_path) {
        fprintf(stderr, "usage: cxla compile MODULE [--dump-after PASS|all] [--emit-hlo]\n");
        return 1;
    }
    /* Printing the optimized HLO is the only output there is so far. */
    (void)emit_hlo;
    cxla_module *m;
    cxla_status s = tool_load_module(module_path, true, &m);
    if (s) return tool_fail(s);
    cxla_strbuf dumps;
    cxla_strbuf_init(&dumps);
    options.dump_to = &dumps;
    s = cxla_passes_cpu(m, &options);
    /* Dumps go to stderr so that stdout stays one module. */
    if (dumps.len) fwrite(dumps.data, 1, dumps.len, stderr);
    cxla_strbuf_free(&dumps);
    if (s) {
        cxla_module_destroy(m);
        return tool_fail(cxla_status_annotate(s, "%s", module_path));
    }
    char *text = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT);
    cxla_module_destroy(m);
    if (!text) return tool_fail(cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
    fputs(text, stdout);
    free(text);
    return fflush(stdout) == 0 ? 0 : 1;
}
