/* cxla/stablehlo.h: StableHLO MLIR text as a second front end.
 *
 * cxla reads the MLIR text that JAX exports (and that the StableHLO reference
 * interpreter's tests are written in) and converts it into an ordinary HLO module, so
 * everything that runs HLO runs StableHLO too. docs/stablehlo.md lists what is accepted
 * and how each operation maps to HLO.
 *
 * Checks. The test programs check their own results with `check.expect_*` operations or
 * `stablehlo.custom_call @check.expect_*(...)`. The converter turns each into a
 * custom-call of the built-in target "cxla.stablehlo.check" (registered by the parse
 * call) that compares its two operands by the rules of ../shared/conformance/README.md
 * and records the outcome in a process-wide tally instead of stopping the run, so that
 * a run reports every failed check. cxla_stablehlo_checks_reset clears the tally and
 * cxla_stablehlo_checks_get reads it.
 */
#ifndef CXLA_STABLEHLO_H_
#define CXLA_STABLEHLO_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxla/hlo.h"
#include "cxla/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the converted program checks. */
typedef struct cxla_stablehlo_info {
    int64_t check_count; /* check operations converted (0: the program checks nothing) */
    /* Set when the program uses a feature cxla cannot check or run on one device (e.g.
     * probe / expect_serialized_eq, several replicas): a short reason; NULL otherwise.
     * The module is still returned when it could be converted. Static storage. */
    const char *skip_reason;
    const char *entry_name; /* the function run as the entry (static until the next parse) */
} cxla_stablehlo_info;

/* Parses StableHLO MLIR text (|len| bytes, need not be NUL-terminated) and converts the
 * public entry function (@main, or the only public function) and everything it calls
 * into a new HLO module (free with cxla_module_destroy). |filename| names the text in
 * messages (may be NULL). |info| (may be NULL) receives what the program checks.
 * Errors (INVALID_ARGUMENT, UNIMPLEMENTED) give "FILE:LINE:COL: message": syntax errors,
 * unknown operations (named, with their line), unsupported element types, an ambiguous
 * entry function, operations whose conversion failed. */
cxla_status cxla_stablehlo_parse(const char *text, size_t len, const char *filename,
                                 cxla_module **out_module, cxla_stablehlo_info *info);

/* True when |path| names StableHLO text (ends with ".mlir"). */
bool cxla_stablehlo_is_mlir_path(const char *path);
/* True when |text| reads as MLIR rather than HLO text: after blank lines and '//'
 * comments it starts with "module", "func.func", "#" (an attribute alias or location)
 * or "stablehlo."; HLO text starts with "HloModule" or a computation. */
bool cxla_stablehlo_looks_like_mlir(const char *text, size_t len);

/* The process-wide tally of checks run since the last reset. */
typedef struct cxla_stablehlo_check_tally {
    int64_t passed, failed;
    /* The first failures' messages, one per line ("@func line L: check: element [i]: got
     * X, expected Y"); malloc'd, free() it; NULL when none failed. */
    char *failures;
} cxla_stablehlo_check_tally;
void cxla_stablehlo_checks_reset(void);
void cxla_stablehlo_checks_get(cxla_stablehlo_check_tally *out);

#ifdef __cplusplus
}
#endif
#endif /* CXLA_STABLEHLO_H_ */
