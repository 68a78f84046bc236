/* libFuzzer target for the HloModuleProto reader: any input must give a module or an
 * error with a message, never a crash; a module that was read must survive
 * write -> read with the same text.
 *
 * Build it with CXLA_FUZZ=ON. Run it on a copy of tests/fuzz/corpus/fuzz_proto (it adds
 * files there); scripts/run-fuzzers.sh does both. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cxla/cxla.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cxla_module *m = NULL;
    cxla_status st = cxla_hlo_parse_proto(data, size, "fuzz.pb", &m);
    if (st) {
        if (m || cxla_status_message(st)[0] == 0) abort();
        cxla_status_free(st);
        return 0;
    }
    char *text1 = cxla_hlo_print(m, CXLA_HLO_STYLE_SHORT);
    char *bytes = NULL;
    size_t n = 0;
    st = cxla_hlo_write_proto(m, &bytes, &n);
    cxla_module_destroy(m);
    if (st) { /* a module the reader made must be writable */
        abort();
    }
    cxla_module *m2 = NULL;
    st = cxla_hlo_parse_proto(bytes, n, "fuzz2.pb", &m2);
    if (st) abort();
    char *text2 = cxla_hlo_print(m2, CXLA_HLO_STYLE_SHORT);
    if (!text1 || !text2 || strcmp(text1, text2) != 0) abort();
    cxla_module_destroy(m2);
    free(bytes);
    free(text1);
    free(text2);
    return 0;
}
