/* The compiled CPU backend: a module is optimized by the passes (src/passes), its
 * fusions and elementwise and data-movement instructions become C functions (emit.h),
 * compiled by the system C compiler into a shared object that is cached on disk
 * (compiler.h), and run.
 *
 * How a compiled module runs (for now): dot and convolution are library calls (onednn.h:
 * oneDNN primitives, or the interpreter's blocked product), prepared at compile time. An
 * entry made of kernels and library calls runs as the arena plan (cpu_internal.h);
 * otherwise the interpreter's driver walks the module and calls a compiled kernel or
 * library call for every instruction that has one (interp_run_module_overridden), and
 * the others (sort, fft, control flow, collectives, custom calls, ...) run the
 * interpreter's own code for that operation. docs/semantics.md says what the backend
 * guarantees against the interpreter. */
#ifndef CXLA_CPU_CPU_H_
#define CXLA_CPU_CPU_H_

#include "exec/exec.h"
#include "hlo/hlo.h"

/* A kernel: out[i] are the array results, in[k] the operands' data (dense, row-major);
 * it computes iterations [begin, end) of its outer loop (emit.h, cpu_kernel_info). */
typedef void (*cpu_kernel_fn)(void *const *out, const void *const *in, int64_t begin, int64_t end);

/* The cpu backend behind the backend interface (cpu_backend.c). */
extern const exec_backend cpu_backend;

typedef struct cpu_compile_options {
    /* NULL, a pass name or "all": print the module after that pass (to |dump_to|). */
    const char *dump_after;
    cxla_strbuf *dump_to;
    /* without the pass pipeline (async-desugar still runs: the backend runs the async sugar
     * through its wrapped computation) */
    bool no_passes;
    /* without the passes that prepare for oneDNN's calls, conv-canon and output-fusion
     * (ahead-of-time output has no library calls; its convolutions are loop nests) */
    bool no_onednn_passes;
} cpu_compile_options;

/* The optimized module and the C source the cpu backend compiles |module| into, without
 * compiling it (`cxla compile --emit-c`). |out_optimized| (may be NULL) gets the module
 * after the passes (the caller's: cxla_module_destroy). |out_kernel_count| (may be NULL)
 * gets the number of kernels. */
cxla_status cpu_generate(const cxla_module *module, const cpu_compile_options *options,
                         cxla_module **out_optimized, cxla_strbuf *out_source,
                         int64_t *out_kernel_count);

/* `cxla compile --explain`: compiles |module| as cpu_backend does and appends to |out|,
 * for every instruction of the computations that run in sequence (the entry first, then
 * what while, conditional and call run), how the backend runs it ("kernel kNN_name", a
 * library call's word such as "onednn matmul", "collective", "custom call", "step", "in
 * place", "alias", "interpreter handler", ...), then a summary line: the count of each
 * word, the arena's bytes and the copy steps. Errors: those of compiling the module. */
cxla_status cpu_explain(const cxla_module *module, cxla_strbuf *out);

#endif /* CXLA_CPU_CPU_H_ */
