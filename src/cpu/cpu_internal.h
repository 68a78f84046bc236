/* The cpu backend from the inside: the arena plan (cpu_plan.c) that runs an entry made
 * only of kernels without the interpreter's driver. */
#ifndef CXLA_CPU_CPU_INTERNAL_H_
#define CXLA_CPU_CPU_INTERNAL_H_

#include "cpu/cpu.h"
#include "cpu/threadpool.h"
#include "interp/interp.h"

typedef struct cpu_plan cpu_plan;

/* A plan for the entry computation of |m| when every instruction of it is a parameter, a
 * constant, a tuple or get-tuple-element of arrays, or has a kernel in |kernels| (indexed
 * by instruction id, |id_count| entries, with |infos| beside them); *out stays NULL (and
 * no error) otherwise. The plan points into |m|, which must outlive it, and runs its
 * kernels on |pool| (borrowed; NULL: the calling thread). */
cxla_status cpu_plan_build(const cxla_module *m, cpu_kernel_fn const *kernels,
                           const cpu_kernel_info *infos, int64_t id_count, cpu_pool *pool,
                           cpu_plan **out);
/* Runs the plan on |args| (as interp_run_module takes them) into a new literal in the
 * entry's result layout, checking |options|' cancellation between kernels. Safe from
 * several threads at once. */
cxla_status cpu_plan_run(cpu_plan *plan, const exec_run_options *options,
                         const cxla_literal *const *args, int64_t arg_count,
                         cxla_literal **out_result);
void cpu_plan_destroy(cpu_plan *plan);

#endif /* CXLA_CPU_CPU_INTERNAL_H_ */
