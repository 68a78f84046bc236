/* Steps of the cpu backend's step sequence (cpu_steps.c) that run through exec's services
 * on the arena's buffers instead of a generated kernel: the collectives and replica-id /
 * partition-id through the run's communicator (cpu_collective.c), custom calls through
 * the custom-call registry, infeed / outfeed / send / recv through the host callbacks,
 * and rng / rng-get-and-update-state over exec's generators (cpu_service.c). Each is
 * bit-exact with the interpreter's handler of the same instruction.
 *
 * A service step gets its instruction's operand leaves (depth-first over the operands:
 * arrays row-major, tokens NULL) and its result leaves (depth-first over its shape),
 * distinct buffers, and writes every result leaf. Errors name the instruction. */
#ifndef CXLA_CPU_CPU_SERVICE_H_
#define CXLA_CPU_CPU_SERVICE_H_

#include "cpu/cpu_internal.h"

/* The per-run state of service steps; one per run of a plan (cpu_plan_run). */
typedef struct cpu_svc_run {
    const exec_run_options *options; /* never NULL */
    const cxla_module *module;
    uint64_t rng_state[2];      /* rng's 128-bit state, low word first, as the interpreter's */
    const uint64_t *rng_keys;   /* by instruction id: rng's key before the seed (the plan's) */
    int64_t *collective_counts; /* by instruction id: executions so far (exec_exchange) */
    int64_t id_count;
    /* The running step's function compiled with the module, NULL when it has none: a
     * collective's combine function (cpu_collective_combine_lookup), stored as a kernel. */
    cpu_kernel_fn kernel;
} cpu_svc_run;

/* A collective's combine function (emit_combine.h): acc[j] = reducer(acc[j], x[j]), j < n. */
typedef void (*cpu_combine_fn)(void *acc, const void *x, int64_t n);

/* A service step; |out| and |in| as described above. */
typedef cxla_status (*cpu_svc_fn)(cpu_svc_run *r, const cxla_instr *instr, void *const *out,
                                  const void *const *in);

/* The service step of |instr|, or NULL when it has none (the plan then calls the
 * interpreter's handler): NULL for shapes or attributes it does not take (documented
 * at each step: the TopK target and identity targets that change shapes, reducers that
 * are not a plain add/mul/max/min/and/or/xor of the operands' type (see
 * cpu_collective_combine_lookup), the -start forms of async wrappers). */
cpu_svc_fn cpu_svc_lookup(const cxla_instr *instr);
cpu_svc_fn cpu_collective_lookup(const cxla_instr *instr); /* cpu_collective.c */
/* The step of an all-reduce, reduce-scatter or collective-reduce whose reducer is no plain
 * operation but one the emitter writes as a combine function, NULL otherwise: the plan
 * takes it only with that function compiled under the instruction's id (its C from
 * cpu_collective_emit_combine, named |name|), which the step gets as cpu_svc_run.kernel. */
cpu_svc_fn cpu_collective_combine_lookup(const cxla_instr *instr);
cxla_status cpu_collective_emit_combine(const cxla_instr *instr, const char *name,
                                        cxla_strbuf *out);

/* The keys of the module's rng instructions by instruction id (|id_count| entries,
 * malloc'd), as the interpreter derives them (interp_rng.c). */
cxla_status cpu_svc_rng_keys(const cxla_module *m, int64_t id_count, uint64_t **out);
/* Rewrites |keys| (by instruction id of the optimized module |m|) with the keys of the
 * user's module |user| that |m| was compiled from: an rng keeps its key through the
 * passes, and the copies that inlining makes of one rng share its key, as the
 * interpreter running |user| gives them. */
cxla_status cpu_svc_rng_keys_of_user(const cxla_module *user, const cxla_module *m,
                                     int64_t id_count, uint64_t *keys);

/* The built-in "TopK" custom call |in| as the topk operation that the emitter's topk
 * kernel runs, as the interpreter runs it (interp_custom_call.c): k the values' last
 * dimension, largest first for a greater-than comparator, smallest first for a less-than.
 * Fills *out, a copy of |in| that borrows |attrs| (two entries). False, with *out unset,
 * where the interpreter reports an error instead (not one array into (values, s32
 * indices) of its dimensions with the last cut to k, a comparator that is not a plain
 * greater-than or less-than): the handler then reports it. */
bool cpu_svc_topk_instr(const cxla_instr *in, cxla_attr *attrs, cxla_instr *out);

/* "kernel" words for `cxla compile --explain`: "collective", "custom call", "host
 * transfer", "rng". */
const char *cpu_svc_what(const cxla_instr *instr);

/* True when no element of the array |data| of shape |s| (row-major) is NaN or Inf (non-float
 * types: always), as the interpreter's --check-finite tests values. */
bool cpu_svc_all_finite(const cxla_shape *s, const void *data);

#endif /* CXLA_CPU_CPU_SERVICE_H_ */
