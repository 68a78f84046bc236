/* cxla compile: run the cpu backend's pass pipeline on a module and print the result (the
 * optimized HLO, or with --emit-c the C the cpu backend compiles, or with --explain how
 * the cpu backend runs each instruction: cpu_explain), or with -o DIR/NAME
 * write it ahead of time as a standalone C library (src/cpu/aot.h); cxla cache: the cpu
 * backend's compile cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/aot.h"
#include "cpu/compiler.h"
#include "cpu/cpu.h"
#include "passes/passes.h"
#include "tool.h"

int cmd_compile(int argc, char **argv) {
    const char *module_path = NULL;
    cxla_pipeline_options options = {.verify = true};
    bool emit_hlo = false, emit_c = false, explain = false;
    const char *out_path = NULL; /* -o DIR/NAME: ahead-of-time output */
    cpu_aot_options aot = {.target = CPU_AOT_PORTABLE};
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
        } else if (strcmp(a, "--emit-c") == 0) {
            emit_c = true;
        } else if (strcmp(a, "--explain") == 0) {
            explain = true;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--prefix") == 0 ||
                   strcmp(a, "--target") == 0 || strcmp(a, "--blas") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "cxla compile: %s needs a value\n", a);
                return 1;
            }
            const char *v = argv[++i];
            if (a[1] == 'o') {
                out_path = v;
            } else if (strcmp(a, "--prefix") == 0) {
                aot.prefix = v;
            } else if (strcmp(a, "--blas") == 0) {
                if (strcmp(v, "onednn") != 0 && strcmp(v, "none") != 0) {
                    fprintf(stderr, "cxla compile: --blas is onednn or none, not '%s'\n", v);
                    return 1;
                }
                aot.blas_onednn = strcmp(v, "onednn") == 0;
            } else if (strcmp(v, "portable") == 0) {
                aot.target = CPU_AOT_PORTABLE;
            } else if (strcmp(v, "native") == 0) {
                aot.target = CPU_AOT_NATIVE;
            } else {
                fprintf(stderr, "cxla compile: --target is portable or native, not '%s'\n", v);
                return 1;
            }
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
        fprintf(stderr,
                "usage: cxla compile MODULE [--dump-after PASS|all] [--emit-hlo] [--emit-c] "
                "[--explain]\n"
                "       cxla compile MODULE -o DIR/NAME [--prefix NAME] "
                "[--target portable|native] [--blas onednn|none]\n");
        return 1;
    }
    if (!out_path && (aot.prefix || aot.target != CPU_AOT_PORTABLE || aot.blas_onednn)) {
        fprintf(stderr, "cxla compile: --prefix, --target and --blas go with -o DIR/NAME\n");
        return 1;
    }
    if (out_path && (emit_hlo || emit_c || explain || options.dump_after)) {
        fprintf(stderr, "cxla compile: -o writes C files; it does not go with --emit-hlo, "
                        "--emit-c, --explain or --dump-after\n");
        return 1;
    }
    if ((int)emit_hlo + (int)emit_c + (int)explain > 1) {
        fprintf(stderr, "cxla compile: one of --emit-hlo, --emit-c and --explain\n");
        return 1;
    }
    if (explain && options.dump_after) {
        fprintf(stderr, "cxla compile: --dump-after goes with --emit-hlo or --emit-c\n");
        return 1;
    }
    cxla_module *m;
    cxla_status s = tool_load_module(module_path, true, &m);
    if (s) return tool_fail(s);
    if (out_path) {
        /* DIR/NAME: NAME.h, NAME.c (and NAME_data.c) in DIR; NAME alone: here. */
        size_t len = strlen(out_path);
        char *dir = malloc(len + 1);
        if (dir) memcpy(dir, out_path, len + 1);
        if (!dir) {
            cxla_module_destroy(m);
            return tool_fail(cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
        }
        char *slash = strrchr(dir, '/');
        const char *name = slash ? slash + 1 : dir;
        if (slash) *slash = '\0';
        if (!*name) {
            fprintf(stderr, "cxla compile: -o wants DIR/NAME, a file name without extension\n");
            free(dir);
            cxla_module_destroy(m);
            return 1;
        }
        s = cpu_aot_write(m, &aot, slash ? (*dir ? dir : "/") : NULL, name);
        free(dir);
        cxla_module_destroy(m);
        if (s) return tool_fail(cxla_status_annotate(s, "%s", module_path));
        return 0;
    }
    if (explain) {
        cxla_strbuf report;
        cxla_strbuf_init(&report);
        s = cpu_explain(m, &report);
        cxla_module_destroy(m);
        if (!s && report.len) fwrite(report.data, 1, report.len, stdout);
        cxla_strbuf_free(&report);
        if (s) return tool_fail(cxla_status_annotate(s, "%s", module_path));
        return fflush(stdout) == 0 ? 0 : 1;
    }
    cxla_strbuf dumps;
    cxla_strbuf_init(&dumps);
    options.dump_to = &dumps;
    if (emit_c) {
        cpu_compile_options co = {.dump_after = options.dump_after, .dump_to = &dumps};
        cxla_strbuf source;
        cxla_strbuf_init(&source);
        s = cpu_generate(m, &co, NULL, &source, NULL);
        cxla_module_destroy(m);
        if (dumps.len) fwrite(dumps.data, 1, dumps.len, stderr);
        cxla_strbuf_free(&dumps);
        if (!s && source.failed) s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        if (!s && source.len) fwrite(source.data, 1, source.len, stdout);
        cxla_strbuf_free(&source);
        if (s) return tool_fail(cxla_status_annotate(s, "%s", module_path));
        return fflush(stdout) == 0 ? 0 : 1;
    }
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

int cmd_cache(int argc, char **argv) {
    char dir[2048];
    cpu_cache_dir(dir, sizeof dir);
    if (argc == 2 && strcmp(argv[1], "dir") == 0) {
        printf("%s\n", dir);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    if (argc == 2 && strcmp(argv[1], "clear") == 0) {
        int64_t removed = 0;
        cxla_status s = cpu_cache_clear(&removed);
        if (s) return tool_fail(s);
        printf("removed %lld compiled objects from %s\n", (long long)removed, dir);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    fprintf(stderr, "usage: cxla cache dir|clear\n");
    return 1;
}
