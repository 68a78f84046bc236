/* Fused while loops of the step sequence (cpu_loop.c): a while step whose condition and
 * body hold only generated kernels of static shapes, buffer copies, in-place
 * dynamic-update-slices, calls of such sequences, conditionals over such branches (a pred
 * or plain integer index) and nested while loops of the same kind
 * runs as ONE step: a flat program of those operations, with each kernel's operand and
 * result pointers laid out once per entry into the loop (not per step), small kernels
 * called directly (no thread-pool bookkeeping) and the predicate read in place. The
 * buffer plan is the step sequence's own (the same classes, the same copies), so results
 * are those of running the steps one by one, bit for bit.
 *
 * Private to the step sequence (cpu_steps.c fuses, cpu_steps_run.c runs). */
#ifndef CXLA_CPU_CPU_LOOP_H_
#define CXLA_CPU_CPU_LOOP_H_

#include "cpu/compiler.h"
#include "cpu/cpu_steps.h"

/* Attaches a fused program (step.fused) to every outermost while step of |p| that can be
 * fused (above), for plans of static shapes (dynamic sizes travel per class: those keep
 * their steps). Counts them, nested ones included, in p->stats.fused_loops. Errors:
 * RESOURCE_EXHAUSTED (the plan is then left as it was built, minus nothing: the caller
 * destroys it). */
cxla_status cpu_loop_fuse(cpu_plan *p);

/* Compiling them: cpu_plan_emit_loops and cpu_plan_bind (cpu_internal.h). */

/* Frees a program made by cpu_loop_fuse (NULL is ignored). */
void cpu_loop_free(cpu_loop *l);

/* Whether a kernel of |info| runs as one call on the calling thread however many threads
 * the pool has and whether or not the run can be cancelled (threadpool.h's cost model
 * gives it one part and one chunk): the step sequence then calls it directly. */
bool cpu_loop_kernel_direct(const cpu_kernel_info *info);

/* What a fused loop needs from its run: the buffer of every class (by class id), the pool
 * for the kernels too big to call directly, and the run's cancellation: |check| is called
 * at every back-edge (the step sequence's check_cancel: exec_cancelled, the poll hook at
 * its grain) and |cancel| is given to the pooled kernels. */
typedef struct cpu_loop_env {
    void *const *ptr;
    cpu_pool *pool;
    exec_cancel *cancel;
    bool (*check)(void *ctx);
    void *ctx;
} cpu_loop_env;

/* Runs the fused loop |l| to its end. Returns NULL, or the step (the loop's own, or a
 * kernel inside it) at which the run was cancelled: the caller reports
 * exec_cancel_error there. *out_oom is set when the pointer table could not be
 * allocated (nothing ran). */
const step *cpu_loop_run(const cpu_loop *l, const cpu_loop_env *env, bool *out_oom);

/* dynamic-update-slice step |sp| (S_DUS) into its operand's buffer |dst|: the update at
 * ins[1], the start indices at ins[2 ...] (cpu_steps_run.c; the fused loop runs it too). */
void cpu_steps_dus(const step *sp, void *dst, const void *const *ins);

#endif /* CXLA_CPU_CPU_LOOP_H_ */
