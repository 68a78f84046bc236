/* embed: the typical flow of a program that embeds cxla (docs/c-api.md shows it whole):
 * compile HLO text, ask the executable for its signature, run it on literals and on
 * caller-owned arrays, and handle an error. Public API (cxla/cxla.h) only.
 * Prints:
 *   parameters: f32[3] f32[3] -> f32[3]
 *   literals: f32[3] {12, 24, 36}
 *   buffers: 12 24 36
 *   error: INVALID_ARGUMENT
 */
#include <cxla/cxla.h>
#include <stdio.h>
#include <stdlib.h>

static const char *kModule = "HloModule axpy\n"
                             "ENTRY main {\n"
                             "  x = f32[3] parameter(0)\n"
                             "  y = f32[3] parameter(1)\n"
                             "  two = f32[] constant(2)\n"
                             "  a = f32[3] broadcast(two), dimensions={}\n"
                             "  ax = f32[3] multiply(a, x)\n"
                             "  ROOT r = f32[3] add(ax, y)\n"
                             "}\n";

/* Reports |s| (a non-NULL status) and frees it. */
static int report(cxla_status s) {
    fprintf(stderr, "embed: %s\n", cxla_status_message(s));
    cxla_status_destroy(s);
    return 1;
}

int main(void) {
    cxla_client *client = NULL;
    cxla_executable *exe = NULL;
    cxla_status s = cxla_client_create(NULL, &client); /* the default: cpu, or CXLA_BACKEND */
    if (!s) s = cxla_client_compile_hlo_text(client, kModule, (size_t)-1, "axpy.hlo", &exe);
    if (s) {
        cxla_client_destroy(client);
        return report(s);
    }

    /* The signature: shapes borrowed from the executable. */
    printf("parameters:");
    for (int64_t i = 0; i < cxla_executable_parameter_count(exe); i++) {
        char *text = cxla_shape_to_string(cxla_executable_parameter_shape(exe, i),
                                          CXLA_SHAPE_PRINT_NO_LAYOUT);
        printf(" %s", text ? text : "?");
        free(text);
    }
    char *result_text =
        cxla_shape_to_string(cxla_executable_result_shape(exe), CXLA_SHAPE_PRINT_NO_LAYOUT);
    printf(" -> %s\n", result_text ? result_text : "?");
    free(result_text);

    /* Literals in, a literal out: each literal is the caller's to free. */
    cxla_literal *x = NULL, *y = NULL, *result = NULL;
    s = cxla_literal_parse("f32[3] {1, 2, 3}", (size_t)-1, NULL, &x);
    if (!s) s = cxla_literal_parse("f32[3] {10, 20, 30}", (size_t)-1, NULL, &y);
    if (!s) {
        const cxla_literal *args[] = {x, y};
        s = cxla_executable_run(exe, args, 2, &result);
    }
    if (!s) {
        char *text = cxla_literal_to_string(result, CXLA_LITERAL_PRINT_SHAPE);
        printf("literals: %s\n", text ? text : "?");
        free(text);
    }

    /* Caller-owned memory: one cxla_buffer per parameter leaf and per result leaf; a NULL
     * shape means the leaf's own (row-major here). */
    float xs[3] = {1, 2, 3}, ys[3] = {10, 20, 30}, out[3] = {0};
    if (!s) {
        cxla_buffer in[2] = {{NULL, xs, sizeof(xs)}, {NULL, ys, sizeof(ys)}};
        cxla_buffer res[1] = {{NULL, out, sizeof(out)}};
        s = cxla_executable_run_buffers(exe, NULL, in, 2, res, 1);
    }
    if (!s) printf("buffers: %g %g %g\n", out[0], out[1], out[2]);

    /* A wrong argument is a status, not a crash: its code and a message naming it. */
    if (!s) {
        const cxla_literal *bad[] = {x};
        cxla_literal *unused = NULL;
        cxla_status e = cxla_executable_run(exe, bad, 1, &unused);
        printf("error: %s\n", cxla_status_code_name(cxla_status_code_of(e)));
        cxla_status_destroy(e); /* NULL is fine too */
    }

    int rc = s ? report(s) : 0;
    cxla_literal_destroy(result); /* every free accepts NULL */
    cxla_literal_destroy(y);
    cxla_literal_destroy(x);
    cxla_executable_destroy(exe);
    cxla_client_destroy(client);
    return rc;
}
