/* run_hlo: loads an HLO module, runs it on .npy inputs (one per parameter) and prints the
 * result. The whole program uses the public API (cxla/cxla.h) only.
 *
 *   run_hlo MODULE.hlo [INPUT.npy...]
 */
#include <cxla/cxla.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: run_hlo MODULE.hlo [INPUT.npy...]\n");
        return 2;
    }
    int n = argc - 2;
    cxla_client *client = NULL;
    cxla_executable *exe = NULL;
    cxla_literal **args = calloc((size_t)n + 1, sizeof(*args)), *result = NULL;
    cxla_status s = cxla_client_create(NULL, &client);
    if (!s) s = cxla_client_compile_hlo_file(client, argv[1], &exe);
    for (int i = 0; i < n && !s; i++) {
        /* The parameter's type reads the dtypes NumPy lacks (bf16, f8 ...). */
        const cxla_shape *p = cxla_executable_parameter_shape(exe, i);
        s = cxla_npy_read_file(argv[i + 2], p ? p->type : CXLA_TYPE_INVALID, &args[i]);
    }
    if (!s) s = cxla_executable_run(exe, (const cxla_literal *const *)args, n, &result);
    if (!s) {
        char *text = cxla_literal_to_string(result, CXLA_LITERAL_PRINT_SHAPE);
        printf("%s\n", text ? text : "?");
        free(text);
    }
    int rc = 0;
    if (s) {
        fprintf(stderr, "run_hlo: %s\n", cxla_status_message(s));
        cxla_status_destroy(s);
        rc = 1;
    }
    for (int i = 0; i < n; i++) cxla_literal_destroy(args[i]);
    free(args);
    cxla_literal_destroy(result);
    cxla_executable_destroy(exe);
    cxla_client_destroy(client);
    return rc;
}
