/* cxla/hlo.h: HLO modules as text. Read the text XLA writes (dumps from JAX or
 * TensorFlow, HloModule::ToString, the old style with operand shapes), check it as XLA's
 * verifier does, print it back in XLA's styles, and hand the module to the runtime
 * (cxla_client_compile in cxla/runtime.h).
 *
 *   cxla_module *m;
 *   cxla_status s = cxla_hlo_parse(text, (size_t)-1, "model.hlo", &m);
 *   if (!s) s = cxla_hlo_verify(m);
 *   ...
 *   cxla_module_destroy(m);
 *
 * A module owns everything in it (computations, instructions, constants); it is not
 * thread-safe to change, but several threads may read (print, verify) one module. */
#ifndef CXLA_HLO_H_
#define CXLA_HLO_H_

#include <stdbool.h>
#include <stddef.h>

#include "cxla/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An HLO module: the IR that the HLO text parser, the StableHLO front end and the builder
 * produce and that every backend runs. */
typedef struct cxla_module cxla_module;

/* The text styles XLA prints (docs/hlo.md shows each). */
typedef enum cxla_hlo_style {
    CXLA_HLO_STYLE_SHORT, /* XLA dumps: no '%', no program or operand shapes */
    CXLA_HLO_STYLE_LONG,  /* HloModule::ToString: '%' names, program and operand shapes */
    /* Newer XLA's long text (--xla_dump_hlo_as_long_text): as LONG without operand shapes. */
    CXLA_HLO_STYLE_LONG_NO_OPERAND_SHAPES,
} cxla_hlo_style;

/* Parses HLO text (|len| bytes; (size_t)-1 for NUL-terminated) in any of the styles
 * found in the wild into a new module (*out_module, the caller's: cxla_module_destroy).
 * |filename| names the text in error messages (NULL is fine). Attributes cxla does not
 * know are kept as raw text and reported by cxla_module_warnings, not rejected. Errors:
 * INVALID_ARGUMENT with the line, the column and the offending text. The module is
 * parsed, not verified: call cxla_hlo_verify before trusting its shapes. */
cxla_status cxla_hlo_parse(const char *text, size_t len, const char *filename,
                           cxla_module **out_module);
/* Reads |path| and parses it as cxla_hlo_parse does, naming the file in errors. Errors:
 * an unreadable file (NOT_FOUND or UNAVAILABLE), then cxla_hlo_parse's. */
cxla_status cxla_hlo_parse_file(const char *path, cxla_module **out_module);
/* XLA's binary HloModuleProto (`*.hlo_module.pb`, JAX's
 * as_serialized_hlo_module_proto()), or an HloProto, HloModuleProtoWithConfig or
 * HloSnapshot wrapping one (told apart by content), read into a new module: the same
 * module its HLO text gives (printing it gives XLA's text). Of a config, what the text
 * header carries is read (replica_count, num_partitions, entry_computation_layout,
 * alias_passthrough_params, allow_spmd_sharding_propagation_*); the rest is ignored.
 * |filename| names the input in errors (NULL is fine). Errors: INVALID_ARGUMENT for a
 * truncated or malformed proto (naming the message, field and byte offset, and the
 * computation and instruction), an unknown opcode or element type, or values the text
 * parser rejects; RESOURCE_EXHAUSTED when memory is short. cxla_hlo_parse and
 * cxla_hlo_parse_file call it when the bytes look like a proto. */
cxla_status cxla_hlo_parse_proto(const void *bytes, size_t size, const char *filename,
                                 cxla_module **out_module);
/* Whether |bytes| look like a binary proto rather than text (the start is a field tag and
 * the whole buffer walks as protobuf fields). */
bool cxla_hlo_looks_like_proto(const void *bytes, size_t size);
/* The HLO text cxla_hlo_parse_proto parses (malloc'd, the caller's: free()). */
cxla_status cxla_hlo_proto_to_text(const void *bytes, size_t size, char **out_text);
/* Writes |module| as binary proto (*out_bytes malloc'd, the caller's: free(); *out_size
 * bytes): an HloModuleProto, or, when the header holds what XLA keeps in the module's
 * config (replica_count or num_partitions other than 1, alias_passthrough_params=true,
 * allow_spmd_sharding_propagation_*), an HloModuleProtoWithConfig holding the module and
 * that config. Instruction and computation ids are cxla's. Errors: INVALID_ARGUMENT for
 * an attribute whose text cannot be encoded (naming the instruction), RESOURCE_EXHAUSTED. */
cxla_status cxla_hlo_write_proto(const cxla_module *module, char **out_bytes, size_t *out_size);

/* The options of XLA's HloVerifier. A zeroed struct is HloVerifier's own defaults (the
 * strict check, `cxla check --strict`); cxla_hlo_verify uses what XLA's tests use. */
typedef struct cxla_hlo_verify_options {
    /* Layouts count: bitcast must keep the byte size (XLA checks it only then). */
    bool layout_sensitive;
    /* Floating-point types may differ in precision where a result is derived from
     * operands (f32 + bf16, a bf16 broadcast to f32, a reducer in f32 over bf16). */
    bool allow_mixed_precision;
} cxla_hlo_verify_options;

/* Checks |module| as XLA's verifier does: every declared shape equals the inferred one,
 * called computations have the right signatures, parameter numbers are dense, names are
 * unique, the entry layout matches. |options| NULL means layout-insensitive with mixed
 * precision allowed, as XLA's tests (and `cxla check`) verify. Errors: INVALID_ARGUMENT
 * naming the computation, the instruction (with its line and column when parsed), the
 * operation, the operand shapes and what was expected. */
cxla_status cxla_hlo_verify_with_options(const cxla_module *module,
                                         const cxla_hlo_verify_options *options);
/* cxla_hlo_verify_with_options(module, NULL). */
cxla_status cxla_hlo_verify(const cxla_module *module);
/* Prints |module| in |style|: malloc'd text (free()), or NULL when memory is short.
 * Parsing the printed text gives a module that prints the same. */
char *cxla_hlo_print(const cxla_module *module, cxla_hlo_style style);
/* The module's name (borrowed, lives as long as the module). */
const char *cxla_module_name(const cxla_module *module);
/* The warnings collected while parsing, one per line ("" when none; borrowed). */
const char *cxla_module_warnings(const cxla_module *module);
/* Frees |module| and everything in it. NULL is fine. */
void cxla_module_destroy(cxla_module *module);

#ifdef __cplusplus
}
#endif
#endif /* CXLA_HLO_H_ */
