/* libFuzzer target for the StableHLO front end: the MLIR reader and the conversion to
 * HLO. Parses the input (not NUL-terminated); when it converts, the module must verify
 * (the converter runs the verifier itself) and print as HLO text that parses back.
 * Errors must carry a message. Everything is freed, so leaks show up too. Nothing is
 * run: programs may loop forever. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxla/stablehlo.h"
#include "hlo/hlo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "fuzz_stablehlo: %s: %s\n", what, detail ? detail : "");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cxla_module *m = NULL;
    cxla_stablehlo_info info;
    cxla_status st = cxla_stablehlo_parse((const char *)data, size, "fuzz.mlir", &m, &info);
    if (st) {
        if (!cxla_status_message(st)[0]) fail("error without a message", NULL);
        if (m) fail("module returned with an error", NULL);
        cxla_status_free(st);
        return 0;
    }
    char *text = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT);
    if (!text) fail("print", "out of memory");
    cxla_module *again = NULL;
    st = cxla_hlo_parse(text, strlen(text), "printed", &again);
    if (st) {
        fprintf(stderr, "printed:\n%s\n", text);
        fail("the converted module's HLO text does not parse", cxla_status_message(st));
    }
    cxla_module_destroy(again);
    free(text);
    cxla_module_destroy(m);
    return 0;
}
