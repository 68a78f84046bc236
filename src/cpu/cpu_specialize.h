/* Runs of a module with unbounded dynamic dimensions ('?') on the cpu backend: each run's
 * argument sizes select a specialized form of the module (exec/specialize.h: the '?'
 * dimensions of the entry parameters static at those sizes), compiled through the normal
 * pipeline (passes, kernels, the on-disk cache, the step sequence) the first time those
 * sizes are seen and kept in a small cache per executable, least recently used evicted
 * (docs/semantics.md, "Dynamic shapes"; cpu_specialize.c says why the bounds are the
 * sizes themselves). Runs whose sizes cannot be specialized are left to the interpreter's
 * driver (cpu_backend.c), which gives them their answer or their error. */
#ifndef CXLA_CPU_CPU_SPECIALIZE_H_
#define CXLA_CPU_CPU_SPECIALIZE_H_

#include <stdbool.h>
#include <stdint.h>

#include "exec/exec.h"

typedef struct cpu_spec_cache cpu_spec_cache;

/* A cache for |module| (verified; copied, so it need not outlive the cache), whose forms
 * are compiled with |options| (copied; NULL: defaults). It holds at most
 * CXLA_CPU_SPECIALIZATIONS forms (environment, read here; 1..1024, default 8). *out stays
 * NULL when the module has no unbounded dimension. Errors: RESOURCE_EXHAUSTED. */
cxla_status cpu_spec_create(const cxla_module *module, const exec_compile_options *options,
                            cpu_spec_cache **out);
/* Waits for nothing: no run may be in flight. NULL is fine. */
void cpu_spec_destroy(cpu_spec_cache *cache);

/* Why the module is never specialized (whatever the sizes: a '?' dimension no argument
 * sizes, a bound-dependent operation ...), or NULL when runs are specialized. Owned by the
 * cache. */
const char *cpu_spec_refusal(const cpu_spec_cache *cache);

/* The cache's copy of the module (what the driver's form is compiled from). */
const cxla_module *cpu_spec_source(const cpu_spec_cache *cache);

/* Runs |args| (as exec_backend.execute takes them) on the form for their sizes, compiling
 * it first when the cache lacks it; the result is the interpreter's: a '?' result
 * dimension at its size, static, the bounded ones as declared. Donation is not used
 * (options->donated is ignored). *out_ran is false (and nothing is set) when the run is
 * left to the driver: the arguments do not fit the parameters, or the module cannot be
 * specialized at these sizes. Safe from several threads at once; runs needing a form
 * another thread is compiling wait for it. Errors: those of compiling the form and of the
 * run. */
cxla_status cpu_spec_run(cpu_spec_cache *cache, const exec_run_options *options,
                         const cxla_literal *const *args, int64_t arg_count,
                         cxla_literal **out_result, bool *out_ran);

/* What the cache has done, for tests and reports. */
typedef struct cpu_spec_stats {
    int64_t capacity;    /* forms it keeps at most */
    int64_t cached;      /* forms it holds now (those for the driver included) */
    int64_t hits;        /* runs that found their form */
    int64_t compiles;    /* forms made (each a specialization, compiled or refused) */
    int64_t evictions;   /* forms dropped to make room */
    int64_t driver_runs; /* runs left to the driver */
} cpu_spec_stats;
void cpu_spec_get_stats(cpu_spec_cache *cache, cpu_spec_stats *out);
/* The same for a module compiled by cpu_backend (|compiled|: what its compile returned);
 * all zero when the module has no unbounded dimension (cpu_backend.c). */
void cpu_compiled_spec_stats(void *compiled, cpu_spec_stats *out);

#endif /* CXLA_CPU_CPU_SPECIALIZE_H_ */
