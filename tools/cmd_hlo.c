/* cxla check and cxla fmt. */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

int cmd_check(int argc, char **argv) {
    /* What XLA's tests verify with (HloTestBase): layout-insensitive, mixed precision. */
    cxla_hlo_verify_options options = {.layout_sensitive = false, .allow_mixed_precision = true};
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--strict") == 0) {
            options.allow_mixed_precision = false;
        } else if (strcmp(argv[i], "--layout-sensitive") == 0) {
            options.layout_sensitive = true;
        } else if (!path && argv[i][0] != '-') {
            path = argv[i];
        } else {
            fprintf(stderr, "usage: cxla check [--strict] [--layout-sensitive] FILE\n");
            return 1;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: cxla check [--strict] [--layout-sensitive] FILE\n");
        return 1;
    }
    cxla_module *m;
    cxla_status s = tool_load_module_with(path, true, &options, &m);
    if (s) return tool_fail(s);
    cxla_module_destroy(m);
    return 0;
}

int cmd_fmt(int argc, char **argv) {
    cxla_hlo_style style = CXLA_HLO_STYLE_SHORT;
    const char *path = NULL, *out_path = NULL;
    bool to_proto = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--to-proto") == 0) {
            to_proto = true;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            out_path = argv[++i];
        } else if (strcmp(argv[i], "--style") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "short") == 0) {
                style = CXLA_HLO_STYLE_SHORT;
            } else if (strcmp(v, "long") == 0) {
                style = CXLA_HLO_STYLE_LONG;
            } else {
                fprintf(stderr, "cxla fmt: unknown style '%s' (short or long)\n", v);
                return 1;
            }
        } else if (!path && argv[i][0] != '-') {
            path = argv[i];
        } else {
            fprintf(stderr, "usage: cxla fmt [--style short|long] [--to-proto [-o OUT.pb]] FILE\n");
            return 1;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: cxla fmt [--style short|long] [--to-proto [-o OUT.pb]] FILE\n");
        return 1;
    }
    char *text;
    size_t size;
    cxla_status s = cxla_read_file(path, &text, &size);
    if (s) return tool_fail(s);
    cxla_module *m = NULL;
    s = tool_parse_text(text, size, path, &m);
    free(text);
    if (s) return tool_fail(s);
    if (to_proto) {
        /* XLA's binary HloModuleProto, to -o FILE or stdout */
        char *bytes = NULL;
        size_t n = 0;
        s = cxla_hlo_write_proto(m, &bytes, &n);
        cxla_module_destroy(m);
        if (s) return tool_fail(s);
        FILE *f = out_path ? fopen(out_path, "wb") : stdout;
        if (!f) {
            free(bytes);
            return tool_fail(cxla_error(CXLA_STATUS_UNAVAILABLE, "cannot write %s", out_path));
        }
        bool ok = fwrite(bytes, 1, n, f) == n;
        if (out_path)
            ok = fclose(f) == 0 && ok;
        else
            ok = fflush(f) == 0 && ok;
        free(bytes);
        if (!ok)
            return tool_fail(cxla_error(CXLA_STATUS_UNAVAILABLE, "cannot write %s",
                                        out_path ? out_path : "stdout"));
        return 0;
    }
    char *out = cxla_hlo_print(m, style);
    cxla_module_destroy(m);
    if (!out) return tool_fail(cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
    fputs(out, stdout);
    free(out);
    return 0;
}
