/* The cpu backend from the inside: library calls (dot and convolution: onednn.h), the
 * arena plan (cpu_plan.c) that runs an entry made of kernels and library calls without the
 * interpreter's driver, and its buffer assignment (shared with ahead-of-time output). */
#ifndef CXLA_CPU_CPU_INTERNAL_H_
#define CXLA_CPU_CPU_INTERNAL_H_

#include "cpu/cpu.h"
#include "cpu/threadpool.h"
#include "interp/interp.h"

typedef struct cpu_plan cpu_plan;

/* A library call: one instruction computed by a library function with state prepared when
 * the module is compiled (oneDNN primitives, offset tables). Operands and results as a
 * kernel's (dense, row-major, static shapes; out never aliases in). |fn| must be safe to
 * call from several threads at once with the same state. Errors: RESOURCE_EXHAUSTED, or
 * INTERNAL naming the instruction when the library fails. */
typedef cxla_status (*cpu_call_fn)(void *state, void *const *out, const void *const *in);
typedef struct cpu_call {
    cpu_call_fn fn; /* NULL: no call for this instruction */
    void *state;    /* owned; released by free_state */
    void (*free_state)(void *state);
    const char *what; /* for `cxla compile` and tests: "onednn matmul", "loops", ... */
} cpu_call;

/* Releases the state of |call| and clears it. */
void cpu_call_release(cpu_call *call);

/* How the instruction named |instr_name| of a module compiled by cpu_backend (|compiled|:
 * what its compile returned) runs: its library call's |what|, "kernel" for a generated
 * kernel, NULL for the interpreter's handler (tests, and `cxla compile` later). */
const char *cpu_compiled_call_what(const void *compiled, const char *instr_name);

/* A plan for the entry computation of |m| when every instruction of it is a parameter, a
 * constant, a tuple or get-tuple-element of arrays, or has a kernel in |kernels| (indexed
 * by instruction id, |id_count| entries, with |infos| beside them) or a library call in
 * |calls| (likewise; may be NULL); *out stays NULL (and no error) otherwise. The plan
 * points into |m| and |calls|, which must outlive it, and runs its kernels on |pool|
 * (borrowed; NULL: the calling thread). */
cxla_status cpu_plan_build(const cxla_module *m, cpu_kernel_fn const *kernels,
                           const cpu_kernel_info *infos, const cpu_call *calls, int64_t id_count,
                           cpu_pool *pool, cpu_plan **out);
/* Runs the plan on |args| (as interp_run_module takes them) into a new literal in the
 * entry's result layout, checking |options|' cancellation between kernels. Safe from
 * several threads at once. */
cxla_status cpu_plan_run(cpu_plan *plan, const exec_run_options *options,
                         const cxla_literal *const *args, int64_t arg_count,
                         cxla_literal **out_result);
void cpu_plan_destroy(cpu_plan *plan);

/* Buffer assignment over a schedule of |step_count| steps (cpu_plan.c; the arena plan and
 * the ahead-of-time output (aot.c) both use it). Buffer b lives from step |first| to step
 * |last| (0 <= first <= last < step_count). At each step, in index order, the buffers that
 * start there take the first free range that fits (64-byte aligned), then those that end
 * there give theirs back: buffers live at the same step never overlap, and a step's results
 * never share memory with the operands it reads last. Sets each |offset| and *out_size (the
 * arena's size). Errors: INTERNAL for bad steps, RESOURCE_EXHAUSTED. */
typedef struct cpu_arena_buffer {
    size_t size;
    int64_t first, last;
    size_t offset; /* out */
} cpu_arena_buffer;
cxla_status cpu_arena_assign(cpu_arena_buffer *buffers, int64_t count, int64_t step_count,
                             size_t *out_size);

#endif /* CXLA_CPU_CPU_INTERNAL_H_ */
