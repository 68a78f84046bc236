/* Ahead-of-time output of the cpu backend (`cxla compile MODULE -o DIR/NAME`): a module
 * becomes NAME.h and NAME.c (and NAME_data.c for big constants), plain C11 that compiles
 * with any C11 compiler and runs without libcxla (it calls only libm and string.h).
 *
 * The module goes through the cpu backend's pipeline (cpu_generate); every computation
 * that runs in sequence (the entry, while conditions and bodies, conditional branches,
 * called computations) becomes one C function that calls the emitter's kernels (emit.h)
 * in schedule order over a part of the caller's scratch arena, placed by the same buffer
 * assignment as the JIT's arena plan (cpu_arena_assign). While loops, conditionals and
 * calls become C control flow; dot becomes a plain loop nest that sums in the
 * interpreter's order (bit-exact). The generated NAME.h documents the calling convention:
 *
 *   int NAME_run(const void *const *args, void *const *results, void *scratch);
 *
 * args[i] / results[i]: the entry's parameter / result leaves (tuples flattened, depth
 * first), dense row-major; scratch: NAME_scratch_size() bytes aligned to 64. No globals
 * but constants, no allocation, no threads. */
#ifndef CXLA_CPU_AOT_H_
#define CXLA_CPU_AOT_H_

#include <stdbool.h>
#include <stddef.h>

#include "base/base.h"
#include "hlo/hlo.h"

typedef enum cpu_aot_target {
    CPU_AOT_PORTABLE, /* C11, no extensions, no intrinsics (CXLA_PORTABLE is defined) */
    CPU_AOT_NATIVE,   /* may use compiler builtins (GCC/Clang) where the JIT does */
} cpu_aot_target;

typedef struct cpu_aot_options {
    const char *prefix; /* of every exported symbol; NULL: the file name NAME */
    cpu_aot_target target;
    /* Constants of more than this many bytes go to NAME_data.c; 0: 4096. */
    size_t data_threshold;
    /* without the pass pipeline (async-desugar still runs: the backend runs the async sugar
     * through its wrapped computation) */
    bool no_passes;
    /* --blas onednn: dots and convolutions of f32, bf16 and f16 call oneDNN's C API
     * (link with -ldnnl), the exact loops as the fallback (docs/aot.md). */
    bool blas_onednn;
} cpu_aot_options;

/* The three texts for |module| named |name| (a C identifier is made of it and of
 * |options|->prefix). |out_data| is left empty when no constant is big. The caller owns
 * the buffers (initialized by the caller). Errors: UNIMPLEMENTED naming the instruction
 * and its computation for what has no ahead-of-time form (sort, fft, custom calls,
 * collectives, dynamic shapes, layouts other than row-major at the entry ...); the
 * verifier's errors; RESOURCE_EXHAUSTED. */
cxla_status cpu_aot_generate(const cxla_module *module, const cpu_aot_options *options,
                             const char *name, cxla_strbuf *out_header, cxla_strbuf *out_source,
                             cxla_strbuf *out_data);

/* cpu_aot_generate, then writes DIR/NAME.h, DIR/NAME.c and (when there are big constants)
 * DIR/NAME_data.c; an old DIR/NAME_data.c is left alone when there are none. |options|
 * may be NULL (portable, prefix NAME). Errors: as cpu_aot_generate, and the file
 * system's (naming the path). */
cxla_status cpu_aot_write(const cxla_module *module, const cpu_aot_options *options,
                          const char *dir, const char *name);

#endif /* CXLA_CPU_AOT_H_ */
